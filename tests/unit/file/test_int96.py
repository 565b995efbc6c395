"""INT96 timestamps outside nanoseconds' range (Spark's 0001-01-01 / 9999-12-31 sentinels): pqbloom
reads them as pyarrow does with ``coerce_int96_timestamp_unit`` ("us", "ms"), and with the default
("ns", where pyarrow wraps them silently to other instants) raises TimestampRangeError naming the option."""

from __future__ import annotations

import datetime as dt

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import pqbloom
from pqbloom.errors import TimestampRangeError
from pqbloom.scan import plan_file

VALUES = [dt.datetime(1, 1, 1), dt.datetime(9999, 12, 31, 23, 59, 59, 999999),
          dt.datetime(2020, 1, 1, 12, 0, 0, 123456), None, dt.datetime(1500, 6, 1), dt.datetime(1677, 9, 21)]


def _int96_file(path: str, values: list[dt.datetime | None], **kw: object) -> str:
    t = pa.table({"ts": pa.array(values, pa.timestamp("us")), "i": pa.array(range(len(values)), pa.int64())})
    pq.write_table(t, path, use_deprecated_int96_timestamps=True, **kw)
    return path


@pytest.mark.parametrize("unit", ["us", "ms"])
def test_out_of_range_int96_read_as_pyarrow_with_the_unit(tmp_path, unit):
    f = _int96_file(str(tmp_path / "t.parquet"), VALUES)
    want = pq.read_table(f, coerce_int96_timestamp_unit=unit)
    got = pqbloom.read_table(f, coerce_int96_timestamp_unit=unit)
    assert got.to_arrow().equals(want)
    assert got.to_pydict() == want.to_pydict()
    assert got.to_pandas().equals(want.to_pandas())
    with pqbloom.ParquetFile(f, coerce_int96_timestamp_unit=unit) as pf:
        assert pf.schema_arrow == pq.ParquetFile(f, coerce_int96_timestamp_unit=unit).schema_arrow
        assert pf.read().to_arrow().equals(want)
        batches = [b.to_arrow() for b in pf.iter_batches(batch_size=2)]
        assert pa.concat_tables(batches).equals(want)
        assert pf.read_row_group(0).to_arrow().equals(want)
        # the scan's per-row-group plan (what the Spark data source reads through) honours the unit too
        planned = plan_file(pf, None).read_row_group(0)
        assert planned is not None and planned.to_arrow().equals(want)
        some = plan_file(pf, pqbloom.field("i") >= 1).read_row_group(0)
        assert some is not None and some.to_arrow().equals(want.slice(1))


def test_default_unit_raises_instead_of_wrapping(tmp_path):
    f = _int96_file(str(tmp_path / "t.parquet"), VALUES)
    # pyarrow's default wraps year 1 to another instant, silently: the wrong answer pqbloom must not give
    wrapped = pq.read_table(f).column("ts").to_pylist()[0]
    assert wrapped.year != 1
    t = pqbloom.read_table(f)  # the raw INT96 values read; converting them refuses to wrap
    for convert in (t.to_arrow, t.to_pydict, t.to_pandas, t.column("ts").to_numpy):
        with pytest.raises(TimestampRangeError, match="coerce_int96_timestamp_unit"):
            convert()
    with pytest.raises(TimestampRangeError, match="coerce_int96_timestamp_unit"):
        [b.to_arrow() for b in pqbloom.ParquetFile(f).iter_batches(batch_size=2)]
    with pytest.raises(TimestampRangeError):
        pqbloom.read_table(f, coerce_int96_timestamp_unit="ns").to_arrow()


def test_default_unit_reads_in_range_values_and_nulls(tmp_path):
    # nulls (whose slots hold no valid INT96) and values near the edges of nanoseconds' range stay readable
    vals = [dt.datetime(1677, 9, 22), None, dt.datetime(2262, 4, 10), dt.datetime(1970, 1, 1)]
    f = _int96_file(str(tmp_path / "t.parquet"), vals)
    assert pqbloom.read_table(f).to_arrow().equals(pq.read_table(f))


@pytest.mark.parametrize("flt", [[("ts", "<", dt.datetime(1600, 1, 1))], [("ts", ">", dt.datetime(9000, 1, 1))],
                                 [("ts", "==", dt.datetime(9999, 12, 31, 23, 59, 59, 999999))],
                                 [("ts", "in", [dt.datetime(1, 1, 1), dt.datetime(2020, 1, 1, 12, 0, 0, 123456)])],
                                 [("ts", ">=", dt.datetime(1677, 9, 21))]])
def test_filters_compare_out_of_range_int96_exactly(tmp_path, flt):
    f = _int96_file(str(tmp_path / "t.parquet"), VALUES)
    want = pq.read_table(f, coerce_int96_timestamp_unit="us", filters=flt)
    got = pqbloom.read_table(f, coerce_int96_timestamp_unit="us", filters=flt)
    assert got.to_pydict() == want.to_pydict()
    assert got.num_rows > 0


def test_bad_unit_is_refused(tmp_path):
    f = _int96_file(str(tmp_path / "t.parquet"), VALUES[:1])
    with pytest.raises(ValueError, match="coerce_int96_timestamp_unit"):
        pqbloom.read_table(f, coerce_int96_timestamp_unit="s")


def test_dataset_reads_pass_the_unit(tmp_path):
    _int96_file(str(tmp_path / "a.parquet"), VALUES[:3])
    _int96_file(str(tmp_path / "b.parquet"), VALUES[3:])
    want = pq.read_table(str(tmp_path), coerce_int96_timestamp_unit="us").sort_by("i")
    got = pqbloom.read_table(str(tmp_path), coerce_int96_timestamp_unit="us").to_arrow().sort_by("i")
    assert got.column("ts").equals(want.column("ts"))


@settings(max_examples=40, deadline=None)
@given(st.lists(st.one_of(st.none(), st.datetimes(min_value=dt.datetime(1, 1, 1),
                                                   max_value=dt.datetime(9999, 12, 31, 23, 59, 59, 999999))),
                min_size=1, max_size=30))
def test_any_datetime_round_trips_through_int96_as_pyarrow_reads_it(tmp_path_factory, values):
    f = _int96_file(str(tmp_path_factory.mktemp("h") / "t.parquet"), values)
    want = pq.read_table(f, coerce_int96_timestamp_unit="us")
    assert pqbloom.read_table(f, coerce_int96_timestamp_unit="us").to_arrow().equals(want)
    ns_ok = all(v is None or dt.datetime(1677, 9, 22) <= v <= dt.datetime(2262, 4, 10) for v in values)
    if ns_ok:
        assert pqbloom.read_table(f).to_arrow().equals(pq.read_table(f))
    else:
        with pytest.raises(TimestampRangeError):
            pqbloom.read_table(f).to_arrow()


def test_int96_inside_struct_and_list(tmp_path):
    t = pa.table({"s": pa.array([{"ts": dt.datetime(1, 1, 1)}, None, {"ts": None}],
                                pa.struct([("ts", pa.timestamp("us"))])),
                  "l": pa.array([[dt.datetime(9999, 12, 31)], [], None], pa.list_(pa.timestamp("us")))})
    f = str(tmp_path / "n.parquet")
    pq.write_table(t, f, use_deprecated_int96_timestamps=True)
    want = pq.read_table(f, coerce_int96_timestamp_unit="us")
    got = pqbloom.read_table(f, coerce_int96_timestamp_unit="us")
    assert got.to_arrow().equals(want)
    assert got.to_pydict() == want.to_pydict()
    with pytest.raises(TimestampRangeError):
        pqbloom.read_table(f).to_arrow()
