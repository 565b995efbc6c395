"""``pqbloom convert``'s two CSV paths (issue 18, section 4): pyarrow's CSV reader and Python's csv module
give the same types and the same values for the same CSV; what the fast path cannot convert exactly is
redone on the csv-module path (never converted differently). Values are checked against pyarrow's reading
of the written files, and the CSVs' expected values are written out here by hand."""

from __future__ import annotations

import datetime as dt

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pqbloom.cli.convert import ConvertError, convert

UTC = dt.timezone.utc


def both(tmp_path, text: str, **kw):
    src = tmp_path / "in.csv"
    src.write_text(text)
    out = {}
    for engine in ("python", "pyarrow"):
        r = convert(str(src), str(tmp_path / f"{engine}.parquet"), engine=engine, progress=False, **kw)
        out[engine] = (r, pq.read_table(tmp_path / f"{engine}.parquet"))
    return out


def test_same_types_and_values_with_nulls_quotes_dates_and_overflow(tmp_path):
    text = (
        "id,name,amount,day,ts,big,flag,hexish\n"
        '1,"Smith, John",1.5,2024-01-02,2024-01-02T03:04:05Z,99999999999999999999,true,0x10\n'
        '2,,,,,,false,0x11\n'
        '3,"say ""hi""",-2e3,2025-12-31,2025-12-31T23:59:59.123456Z,1,TRUE,12\n'
    )
    got = both(tmp_path, text)
    (rp, tp), (ra, ta) = got["python"], got["pyarrow"]
    assert ra.engine == "pyarrow" and rp.engine == "python"  # the fast path really ran
    assert tp.schema == ta.schema and tp.equals(ta)
    assert ta.schema.types == [pa.int64(), pa.string(), pa.float64(), pa.date32(), pa.timestamp("us", tz="UTC"),
                               pa.string(), pa.bool_(), pa.string()]
    assert ta.to_pydict() == {
        "id": [1, 2, 3], "name": ["Smith, John", None, 'say "hi"'], "amount": [1.5, None, -2000.0],
        "day": [dt.date(2024, 1, 2), None, dt.date(2025, 12, 31)],
        "ts": [dt.datetime(2024, 1, 2, 3, 4, 5, tzinfo=UTC), None,
               dt.datetime(2025, 12, 31, 23, 59, 59, 123456, tzinfo=UTC)],
        "big": ["99999999999999999999", None, "1"],  # overflows int64: a string column on both paths
        "flag": [True, False, True], "hexish": ["0x10", "0x11", "12"],
    }


def test_null_markers_and_offsets_and_naive_timestamps(tmp_path):
    text = "a,b,ts,local\nNA,,2024-01-01T01:00:00+01:00,2024-01-01 10:00\n5,x,2024-06-01T00:00:00-02:30,2024-01-02 11:30:15\n"
    got = both(tmp_path, text, null_values=["NA"])
    (_, tp), (ra, ta) = got["python"], got["pyarrow"]
    assert ra.engine == "pyarrow" and tp.equals(ta) and tp.schema == ta.schema
    assert ta.column("a").to_pylist() == [None, 5]
    assert ta.column("b").to_pylist() == ["", "x"]  # "" is not a null marker here
    assert ta.column("ts").to_pylist() == [dt.datetime(2024, 1, 1, tzinfo=UTC), dt.datetime(2024, 6, 1, 2, 30, tzinfo=UTC)]
    assert ta.column("local").to_pylist() == [dt.datetime(2024, 1, 1, 10), dt.datetime(2024, 1, 2, 11, 30, 15)]


@pytest.mark.parametrize("later,kind", [("+7", "int"), (" 7", "int"), ("1_000", "int"), ("inf", "float"),
                                        ("2024-01-01T00:00:00", "tz")])
def test_values_the_fast_path_cannot_match_go_to_the_csv_module(tmp_path, later, kind):
    """Accepted by numpy's parse but not by the fast path's patterns: the whole file is redone, same result."""
    first = {"int": "1", "float": "1.5", "tz": "2024-01-01T00:00:00Z"}[kind]
    text = "v\n" + f"{first}\n" * 3 + f"{later}\n"
    got = both(tmp_path, text, chunk_rows=2)  # typed from the first two rows
    (_, tp), (ra, ta) = got["python"], got["pyarrow"]
    assert ra.engine == "python" and tp.equals(ta) and tp.schema == ta.schema


@pytest.mark.parametrize("later", ["99999999999999999999", "abc", "2024-02-30"])
def test_a_later_value_that_does_not_fit_fails_the_same_on_both_paths(tmp_path, later):
    first = "2024-01-01" if later.startswith("2024") else "1"
    src = tmp_path / "in.csv"
    src.write_text("v\n" + f"{first}\n" * 3 + f"{later}\n")
    msgs = []
    for engine in ("python", "pyarrow"):
        out = tmp_path / f"{engine}.parquet"
        with pytest.raises(ConvertError) as info:
            convert(str(src), str(out), engine=engine, chunk_rows=2, progress=False)
        msgs.append(str(info.value))
        assert not out.exists()
    assert msgs[0] == msgs[1] and "line 5" in msgs[0]


def test_ragged_rows_and_quoted_newlines(tmp_path):
    got = both(tmp_path, 'a,b\n1,"two\nlines"\n\n2,x\n')
    (_, tp), (ra, ta) = got["python"], got["pyarrow"]
    assert ra.engine == "pyarrow" and tp.equals(ta) and ta.column("b").to_pylist() == ["two\nlines", "x"]
    src = tmp_path / "ragged.csv"
    src.write_text("a,b\n1,2\n3\n")
    msgs = []
    for engine in ("python", "pyarrow"):
        with pytest.raises(ConvertError) as info:
            convert(str(src), str(tmp_path / "r.parquet"), engine=engine, progress=False)
        msgs.append(str(info.value))
    assert msgs[0] == msgs[1] and "line 3" in msgs[0]


_cell = st.one_of(
    st.integers(-(2**70), 2**70).map(str), st.floats(allow_nan=False, allow_infinity=False).map(repr),
    st.dates(dt.date(1900, 1, 1), dt.date(2200, 1, 1)).map(str),
    st.datetimes(dt.datetime(1900, 1, 1), dt.datetime(2200, 1, 1)).map(lambda d: d.isoformat() + "Z"),
    st.sampled_from(["", "true", "false", "x,y", 'q"q', "NA", " 1", "+2", "0x1f"]),
    st.text(st.characters(blacklist_categories=("Cs",), blacklist_characters="\r\x00"), max_size=6),
)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.integers(1, 3).flatmap(lambda k: st.lists(st.lists(_cell, min_size=k, max_size=k), min_size=1,
                                                       max_size=8)))
def test_both_paths_agree_on_any_csv(tmp_path, rows):
    import csv
    import io

    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow([f"c{i}" for i in range(len(rows[0]))])
    w.writerows(rows)
    src = tmp_path / "h.csv"
    src.write_text(buf.getvalue())
    res = {}
    for engine in ("python", "pyarrow"):
        out = tmp_path / f"h-{engine}.parquet"
        try:
            convert(str(src), str(out), engine=engine, chunk_rows=3, progress=False)
            res[engine] = pq.read_table(out)
        except ConvertError as exc:
            res[engine] = str(exc)
    a, b = res["python"], res["pyarrow"]
    if isinstance(a, str) or isinstance(b, str):
        assert a == b
    else:
        assert a.schema == b.schema and a.equals(b), (a.to_pydict(), b.to_pydict())


# ---------------------------------------------------------------------------------------------
# JSON Lines: arrays and objects


def test_jsonl_arrays_and_objects_become_lists_and_structs(tmp_path):
    import json

    import pyarrow.json as pajson

    rows = [{"id": 1, "tags": ["a", "b"], "pt": {"x": 1.5, "y": [1, 2]}, "mixed": [1]},
            {"id": 2, "tags": [], "pt": {"x": None, "y": []}, "mixed": {"k": 1}},
            {"id": 3, "tags": None, "pt": None, "mixed": None}]
    src = tmp_path / "in.jsonl"
    src.write_text("".join(json.dumps(r) + "\n" for r in rows))
    out = tmp_path / "out.parquet"
    convert(str(src), str(out), progress=False)
    got = pq.read_table(out)
    plain = tmp_path / "plain.jsonl"  # pyarrow's reading of the same JSON Lines (it rejects the mixed column)
    plain.write_text("".join(json.dumps({k: v for k, v in r.items() if k != "mixed"}) + "\n" for r in rows))
    want = pajson.read_json(plain)
    for name in ("tags", "pt"):
        assert got.column(name).type == want.column(name).type, name
        assert got.column(name).to_pylist() == want.column(name).to_pylist(), name
    # an array in one row and an object in another: one column cannot hold both, so the JSON text
    assert got.column("mixed").to_pylist() == ["[1]", '{"k": 1}', None]


def test_jsonl_key_missing_from_the_inferred_struct_is_an_error_not_dropped(tmp_path):
    import json

    src = tmp_path / "in.jsonl"
    src.write_text("".join(json.dumps({"pt": {"x": i}}) + "\n" for i in range(3)) + json.dumps({"pt": {"x": 4, "z": 5}})
                   + "\n")
    out = tmp_path / "out.parquet"
    with pytest.raises(ConvertError, match=r"line 4: column 'pt': key 'z' not in struct<x: int64>"):
        convert(str(src), str(out), chunk_rows=2, progress=False)
    assert not out.exists()
