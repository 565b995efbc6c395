"""``Table.to_pydict()`` gives timestamps of a zoned Arrow type (a file's ``ARROW:schema``, e.g. from a
pandas frame with a tz-aware column) in that zone, as pyarrow's ``to_pydict()`` does: same instants, same
zone; across a DST change (where an aware datetime in UTC and one in the zone compare unequal inside the
repeated hour) and with nulls."""

from __future__ import annotations

import datetime as dt

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import pqbloom

# the spring-forward and fall-back changes of Europe/Paris (01:30 on 2024-10-27 is repeated: fold=1 for the second)
INSTANTS = ["2024-03-31 00:30:00", "2024-03-31 01:30:00", None, "2024-10-27 00:30:00", "2024-10-27 01:30:00",
            "2024-10-27 02:30:00", "1969-07-20 20:17:40"]


def _tz_name(v):
    tz = v.tzinfo
    return getattr(tz, "key", None) or tz.tzname(None)


def _same(got: dict, want: dict) -> None:
    assert list(got) == list(want)
    for name in want:
        assert len(got[name]) == len(want[name])
        for g, w in zip(got[name], want[name]):
            if w is None:
                assert g is None
                continue
            assert type(g) is type(w)
            assert g == w and g.utcoffset() == w.utcoffset() and g.fold == w.fold
            assert g.replace(tzinfo=None) == w.replace(tzinfo=None)  # the same wall time
            assert _tz_name(g) == _tz_name(w)


@pytest.mark.parametrize("zone", ["Europe/Paris", "America/New_York", "+05:30"])
def test_pandas_zoned_columns_come_back_in_their_zone(tmp_path, zone):
    idx = pd.to_datetime(INSTANTS).tz_localize("UTC").tz_convert(zone)
    df = pd.DataFrame({"ns": idx.astype(f"datetime64[ns, {zone}]"), "us": idx.astype(f"datetime64[us, {zone}]"),
                       "ms": idx.astype(f"datetime64[ms, {zone}]"), "utc": idx.tz_convert("UTC")})
    f = tmp_path / "z.parquet"
    df.to_parquet(f, engine="pyarrow")
    want = pq.read_table(f).to_pydict()
    got = pqbloom.read_table(f).to_pydict()
    for col in ("ns", "us", "ms"):  # the zoned columns (pqbloom gave them in UTC before)
        assert want[col][0].utcoffset() != dt.timedelta(0)
    _same({k: v for k, v in got.items() if k != "utc"}, {k: v for k, v in want.items() if k != "utc"})
    # the UTC column: the same instants (pqbloom keeps datetime.timezone.utc; pyarrow gives ZoneInfo("UTC"))
    assert got["utc"] == want["utc"]
    assert pqbloom.read_table(f).to_pylist() == pq.read_table(f).to_pylist()


def test_zoned_members_of_structs_lists_and_maps(tmp_path):
    tz = "Europe/Paris"
    ts = pa.timestamp("us", tz=tz)
    at = [dt.datetime(2024, 10, 27, 0, 30, tzinfo=dt.timezone.utc), None]
    t = pa.table({
        "s": pa.array([{"a": at[0], "b": 1}, None, {"a": None, "b": 2}], pa.struct([("a", ts), ("b", pa.int64())])),
        "l": pa.array([[at[0], None], None, []], pa.list_(ts)),
        "m": pa.array([[("k", at[0])], None, [("j", None)]], pa.map_(pa.string(), ts)),
    })
    f = tmp_path / "n.parquet"
    pq.write_table(t, f)
    got = pqbloom.read_table(f).to_pydict()
    want = pq.read_table(f).to_pydict()
    assert got["s"][0]["a"].tzinfo.key == tz and got["s"] == want["s"]
    assert got["l"][0][0].tzinfo.key == tz and got["l"] == want["l"]
    # a map's entries as (key, value) pairs, as pyarrow gives them
    assert got["m"] == want["m"]
    assert got["m"][0][0][1].tzinfo.key == tz


def test_tables_from_pyarrow_keep_the_zone(tmp_path):
    a = pa.array([0, None, 1_700_000_000_000_000], pa.timestamp("us", tz="Asia/Tokyo"))
    t = pa.table({"t": a})
    got = pqbloom.Table.from_arrow(t).to_pydict()
    assert got == t.to_pydict() and got["t"][0].tzinfo.key == "Asia/Tokyo"
