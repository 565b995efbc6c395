"""pandas frames through pqbloom, with pyarrow as the oracle (issue #15, defects 3 and 5).

For each frame, pyarrow writes one file (``pyarrow.Table.from_pandas`` + ``pq.write_table``) and
pqbloom another (``pqbloom.write_table(df)``). Then:
- pqbloom's ``read_table(f).to_pandas()`` equals pyarrow's ``read_table(f).to_pandas()`` for both files;
- pyarrow reads pqbloom's file as it reads its own (so the frame round-trips as pyarrow's does);
- the footers carry the same pandas metadata (but for ``creator``) and the same Arrow schema;
- DuckDB reads the same rows from both files.
"""

from __future__ import annotations

import base64
import datetime as dt
import decimal
import io
import json

import duckdb
import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pandas.testing import assert_frame_equal

import pqbloom
from pqbloom.errors import CorruptFileError, SchemaError
from tests.conftest import K16

N = 5


def _frames() -> dict[str, pd.DataFrame]:
    out: dict[str, pd.DataFrame] = {}
    out["time_zones_and_units"] = pd.DataFrame({
        "ny_us": pd.date_range("2021-03-14", periods=N, freq="37min", tz="America/New_York"),
        "tokyo_ns": pd.date_range("2021-01-01", periods=N, freq="D", tz="Asia/Tokyo").as_unit("ns"),
        "utc_ms": pd.date_range("2021-01-01", periods=N, freq="s", tz="UTC").as_unit("ms"),
        "fixed_offset_s": pd.date_range("2021-01-01", periods=N, freq="h",
                                        tz=dt.timezone(dt.timedelta(hours=5, minutes=30))).as_unit("s"),
        "naive_s": pd.date_range("1900-01-01", periods=N, freq="YS").as_unit("s"),
        "naive_ns": pd.to_datetime(["2020-01-01", None, "2262-04-11", "1677-09-22", "2000-02-29"],
                                   format="ISO8601").as_unit("ns"),
    })
    out["time_zone_with_nat"] = pd.DataFrame({"t": pd.Series(pd.to_datetime(
        ["2020-01-01", None, "2020-06-01", None, "1969-12-31 23:59:59.999999"], format="ISO8601")).dt.tz_localize(
        "Europe/Paris")})
    out["nullable_ints"] = pd.DataFrame({d: pd.array([1, None, -1 if d[0] == "I" else 2, 0, None], dtype=d) for d in
                                         ["Int8", "Int16", "Int32", "Int64", "UInt8", "UInt16", "UInt32", "UInt64"]})
    out["nullable_without_nulls"] = pd.DataFrame({"i": pd.array([1, 2, 3, 4, 5], dtype="Int64"),
                                                  "b": pd.array([True] * N, dtype="boolean")})
    out["boolean_and_float"] = pd.DataFrame({
        "b": pd.array([True, None, False, None, True], dtype="boolean"),
        "f": pd.array([1.5, None, np.nan, -0.0, 1e300], dtype="Float64"),
        "f32": pd.array([1.5, None, 2, 3, 4], dtype="Float32")})
    out["strings"] = pd.DataFrame({
        "str": ["a", None, "é", "", "x" * 300],
        "string": pd.array(["a", None, "b", pd.NA, ""], dtype="string"),
        "object": pd.Series(["a", None, "b", np.nan, "c"], dtype=object),
        "python_storage": pd.array(["a", None, "b", "c", "d"], dtype="string[python]")})
    out["categoricals"] = pd.DataFrame({
        "strings": pd.Categorical(["b", "a", None, "b", "a"]),
        "unused_categories": pd.Categorical(["b", None, "b", "b", "q"], categories=["z", "q", "b", "never"]),
        "ordered": pd.Categorical(["lo", "hi", "mid", None, "lo"], categories=["lo", "mid", "hi"], ordered=True),
        "ints": pd.Categorical([3, 1, None, 3, 2], categories=[1, 2, 3]),
        "ints_ordered": pd.Categorical([3, 1, 2, 3, 2], ordered=True),
        "all_null": pd.Categorical([None] * N, categories=["a"]),
    })
    out["python_objects"] = pd.DataFrame({
        "date": [dt.date(2020, 1, 1), None, dt.date(1, 1, 1), dt.date(9999, 12, 31), dt.date(1970, 1, 1)],
        "decimal": [decimal.Decimal("1.5"), None, decimal.Decimal("-2.25"), decimal.Decimal("100"),
                    decimal.Decimal("0.001")],
        "bytes": [b"a", None, b"\x00\xff", b"", b"xyz"],
        "ints_and_none": [1, None, 3, 4, 5],
        "floats_and_none": [1.5, None, np.nan, 2.5, 3.0],
        "bools_and_none": [True, None, False, True, False],
        "all_none": [None] * N,
        "time": [dt.time(1, 2, 3), None, dt.time(23, 59, 59, 999999), dt.time(0), dt.time(12)],
    })
    out["nan_and_none"] = pd.DataFrame({"f": [np.nan, None, 1.0, np.inf, -np.inf],
                                        "f16": np.array([1, np.nan, 2, 3, 4], np.float16)})
    out["numpy_dtypes"] = pd.DataFrame({"i8": np.arange(N, dtype=np.int8),
                                        "u64": np.array([0, 1, 2**64 - 1, 5, 6], np.uint64),
                                        "b": np.array([True, False] * 2 + [True]), "f32": np.arange(N, dtype=np.float32)})
    out["durations"] = pd.DataFrame({"us": pd.to_timedelta(["2 days", "-5s", None, "1us", "0s"]),
                                     "ns": pd.to_timedelta([1, -1, None, 2**40, 0], unit="ns").as_unit("ns"),
                                     "s": pd.to_timedelta([1, -1, None, 2**40, 0], unit="s").as_unit("s")})
    out["range_index_with_step"] = pd.DataFrame({"x": range(N)}, index=pd.RangeIndex(100, 100 + 3 * N, 3, name="r"))
    out["default_index"] = pd.DataFrame({"x": range(N)})
    out["named_index"] = pd.DataFrame({"x": range(N)}, index=pd.Index(list("abcde"), name="key"))
    out["unnamed_index"] = pd.DataFrame({"x": range(N)}, index=pd.Index([5, 3, 1, 9, 7]))
    out["index_named_like_a_column"] = pd.DataFrame({"x": range(N)}, index=pd.Index([5, 3, 1, 9, 7], name="x"))
    out["multiindex"] = pd.DataFrame({"v": range(N)}, index=pd.MultiIndex.from_arrays(
        [list("aabbc"), [1, 2, 1, 2, 1]], names=["k", None]))
    out["datetimeindex_with_tz"] = pd.DataFrame(
        {"v": range(N)}, index=pd.date_range("2020-01-01", periods=N, tz="Europe/Berlin", name="when"))
    out["categorical_index"] = pd.DataFrame({"v": range(N)}, index=pd.CategoricalIndex(list("abcab"), name="c"))
    out["nullable_index"] = pd.DataFrame({"v": range(N)},
                                         index=pd.Index(pd.array([1, None, 3, 4, 5], dtype="Int64"), name="i"))
    out["int_column_labels"] = pd.DataFrame(np.arange(6).reshape(3, 2))
    out["multiindex_columns"] = pd.DataFrame(np.arange(6).reshape(3, 2), columns=pd.MultiIndex.from_tuples(
        [("a", 1), ("b", 2)], names=["l0", "l1"]))
    out["named_column_index"] = pd.DataFrame({"a": [1]}).rename_axis(columns="cols")
    out["no_rows"] = pd.DataFrame({
        "i": pd.Series([], dtype="int64"), "s": pd.Series([], dtype="str"), "t": pd.Series([], dtype="datetime64[us, UTC]"),
        "I": pd.Series([], dtype="Int32"), "c": pd.Categorical([], categories=["a"]), "o": pd.Series([], dtype=object)})
    out["nested"] = pd.DataFrame({"ints": [[1, 2], None, [], [3], [4, 5]],
                                  "strings": [["x"], ["y", None], None, [], ["z"]],
                                  "structs": [{"a": 1, "b": "u"}, None, {"a": None, "b": "v"}, {"a": 2, "b": None},
                                              {"a": 3, "b": "w"}]})
    out["empty"] = pd.DataFrame()
    attrs = pd.DataFrame({"a": [1, 2]})
    attrs.attrs = {"source": "test", "n": 2}
    out["attrs"] = attrs
    return out


FRAMES = _frames()


def _write_both(df: pd.DataFrame, tmp_path, name: str = "f", **pqbloom_options):
    pa_file, pb_file = tmp_path / f"{name}.pyarrow.parquet", tmp_path / f"{name}.pqbloom.parquet"
    pq.write_table(pa.Table.from_pandas(df), pa_file)
    pqbloom.write_table(df, pb_file, **pqbloom_options)
    return pa_file, pb_file


def _arrow_schema(path) -> pa.Schema:
    return pa.ipc.read_schema(pa.py_buffer(base64.b64decode(pq.read_metadata(path).metadata[b"ARROW:schema"])))


def _pandas_metadata(path) -> dict:
    meta = json.loads(pq.read_metadata(path).metadata[b"pandas"])
    assert meta.pop("creator")["library"] in ("pyarrow", "pqbloom")
    return meta


def _check_like_pyarrow(df: pd.DataFrame, tmp_path, name: str = "f") -> None:
    pa_file, pb_file = _write_both(df, tmp_path, name)
    for f in (pa_file, pb_file):  # pqbloom reads either file as pyarrow does
        assert_frame_equal(pqbloom.read_table(f).to_pandas(), pq.read_table(f).to_pandas())
    # pyarrow reads pqbloom's file as its own: the frame round-trips exactly as far as pyarrow's does
    assert_frame_equal(pq.read_table(pb_file).to_pandas(), pq.read_table(pa_file).to_pandas())
    assert pq.read_schema(pb_file).equals(pq.read_schema(pa_file), check_metadata=False)
    assert _pandas_metadata(pb_file) == _pandas_metadata(pa_file)
    assert _arrow_schema(pb_file).equals(_arrow_schema(pa_file), check_metadata=False)
    if not len(pq.read_schema(pa_file)):
        return  # DuckDB reads no file without columns, pyarrow's or ours
    con = duckdb.connect()
    assert con.execute("SELECT * FROM read_parquet(?)", [str(pb_file)]).fetchall() == \
        con.execute("SELECT * FROM read_parquet(?)", [str(pa_file)]).fetchall()


@pytest.mark.parametrize("name", sorted(FRAMES))
def test_frames_read_and_write_like_pyarrow(name, tmp_path):
    _check_like_pyarrow(FRAMES[name], tmp_path)


# -- generated frames --------------------------------------------------------------------------------
def _nullable(draw, values, dtype=None, null=None):
    mask = draw(st.lists(st.booleans(), min_size=len(values), max_size=len(values)))
    vals = [null if m else v for v, m in zip(values, mask)]
    return pd.array(vals, dtype=dtype) if dtype is not None else vals


@st.composite
def _column(draw, n):
    kind = draw(st.sampled_from(["int", "Int", "UInt", "float", "Float", "bool", "boolean", "str", "string", "object_str",
                                 "category", "category_ordered", "datetime", "datetime_tz", "timedelta", "date",
                                 "decimal", "bytes"]))
    ints = draw(st.lists(st.integers(-(2**31), 2**31 - 1), min_size=n, max_size=n))
    if kind == "int":
        return np.array(ints, np.int64)
    if kind == "Int":
        return _nullable(draw, ints, draw(st.sampled_from(["Int8", "Int16", "Int32", "Int64"])) if max(
            map(abs, ints), default=0) < 100 else "Int64")
    if kind == "UInt":
        return _nullable(draw, [abs(i) for i in ints], "UInt32")
    floats = draw(st.lists(st.floats(allow_nan=True, allow_infinity=True), min_size=n, max_size=n))
    if kind == "float":
        return np.array(_nullable(draw, floats, null=None), dtype=np.float64)
    if kind == "Float":
        return _nullable(draw, [f for f in floats], "Float64")
    bools = [i % 2 == 0 for i in ints]
    if kind == "bool":
        return np.array(bools)
    if kind == "boolean":
        return _nullable(draw, bools, "boolean")
    texts = draw(st.lists(st.text(max_size=8), min_size=n, max_size=n))
    if kind == "str":
        return pd.array(_nullable(draw, texts), dtype="str")
    if kind == "string":
        return _nullable(draw, texts, "string")
    if kind == "object_str":
        return pd.Series(_nullable(draw, texts), dtype=object)
    if kind.startswith("category"):
        cats = draw(st.lists(st.text(max_size=3), min_size=1, max_size=5, unique=True))
        vals = [cats[i % len(cats)] for i in ints]
        return pd.Categorical(_nullable(draw, vals), categories=draw(st.permutations(cats)),
                              ordered=kind.endswith("ordered"))
    if kind in ("datetime", "datetime_tz"):
        unit = draw(st.sampled_from(["s", "ms", "us", "ns"]))
        stamps = pd.to_datetime(_nullable(draw, ints, null=None), unit="s").as_unit(unit)
        if kind == "datetime_tz":
            return stamps.tz_localize("UTC").tz_convert(draw(st.sampled_from(
                ["UTC", "America/New_York", "Asia/Kolkata", "Australia/Lord_Howe"])))
        return stamps
    if kind == "timedelta":
        unit = draw(st.sampled_from(["s", "ms", "us", "ns"]))
        return pd.to_timedelta(_nullable(draw, ints, null=None), unit="ms").as_unit(unit)
    if kind == "date":
        return _nullable(draw, [dt.date(2000, 1, 1) + dt.timedelta(days=i % 100_000) for i in ints])
    if kind == "decimal":
        scale = draw(st.integers(0, 4))
        return _nullable(draw, [decimal.Decimal(i).scaleb(-scale) for i in ints])
    return _nullable(draw, [str(i).encode() for i in ints])


@st.composite
def _frames_strategy(draw):
    n = draw(st.integers(0, 12))
    cols = draw(st.lists(_column(n), min_size=0, max_size=5))
    df = pd.DataFrame({f"c{i}": c for i, c in enumerate(cols)}, index=pd.RangeIndex(n))
    index = draw(st.sampled_from(["range", "range_step", "ints", "strings", "multi", "datetime_tz"]))
    if index == "range_step":
        df.index = pd.RangeIndex(7, 7 + 2 * n, 2, name=draw(st.sampled_from([None, "idx"])))
    elif index == "ints":
        df.index = pd.Index(np.arange(n) * 3, name=draw(st.sampled_from([None, "i"])))
    elif index == "strings":
        df.index = pd.Index([f"r{i}" for i in range(n)])
    elif index == "multi":
        df.index = pd.MultiIndex.from_arrays([np.arange(n) % 2, [f"k{i}" for i in range(n)]], names=["a", None])
    elif index == "datetime_tz":
        df.index = pd.date_range("2020-03-08", periods=n, freq="h", tz="America/New_York")
    return df


@given(df=_frames_strategy())
@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture,
                                                                 HealthCheck.too_slow])
def test_generated_frames_read_and_write_like_pyarrow(df, tmp_path_factory):
    _check_like_pyarrow(df, tmp_path_factory.mktemp("gen"))


# -- defect 3: durations -------------------------------------------------------------------------------
def test_timedelta_is_stored_as_a_duration(tmp_path):
    """Two days and -5 s used to be written as TIME: pyarrow read 00:00 and 23:59:55, pqbloom raised."""
    td = pd.to_timedelta(["2 days", "-5s", None])
    df = pd.DataFrame({"td": td})
    p = tmp_path / "td.parquet"
    pqbloom.write_table(df, p)
    got = pq.read_table(p).column("td")
    assert got.type == pa.duration("us")
    assert got.to_pylist() == [dt.timedelta(days=2), dt.timedelta(seconds=-5), None]
    assert_frame_equal(pqbloom.read_table(p).to_pandas(), df)
    assert pqbloom.read_table(p).to_arrow().column("td").type == pa.duration("us")
    # DuckDB ignores the Arrow schema: it reads the counts of microseconds
    assert duckdb.execute("SELECT typeof(td), td FROM read_parquet(?)", [str(p)]).fetchall() == [
        ("BIGINT", 2 * 86_400 * 10**6), ("BIGINT", -5 * 10**6), ("BIGINT", None)]


@pytest.mark.parametrize("unit", ["s", "ms", "us", "ns", "D"])
def test_numpy_timedelta_units(unit, tmp_path):
    values = np.array([2, -5, 0], dtype=f"m8[{unit}]")
    p = tmp_path / "td.parquet"
    pqbloom.write_table({"td": values, "nat": np.array([1, "NaT", 3], dtype=f"m8[{unit}]")}, p)
    t = pq.read_table(p)
    arrow_unit = "s" if unit == "D" else unit
    assert t.schema.field("td").type == pa.duration(arrow_unit)
    np.testing.assert_array_equal(t.column("td").to_numpy(), values.astype(f"m8[{arrow_unit}]"))
    assert t.column("nat").null_count == 1
    back = pqbloom.read_table(p).to_pandas()
    np.testing.assert_array_equal(back["td"].to_numpy(), values.astype(f"m8[{arrow_unit}]"))
    assert_frame_equal(back, pq.read_table(p).to_pandas())


def test_python_timedeltas_are_durations(tmp_path):
    p = tmp_path / "td.parquet"
    pqbloom.write_table({"td": [dt.timedelta(days=-1, microseconds=3), None]}, p)
    assert pq.read_table(p).column("td").to_pylist() == [dt.timedelta(days=-1, microseconds=3), None]


def test_durations_from_pyarrow_both_ways(tmp_path):
    durations = pa.array([86_400_000_000_000 * 3, -1, None], pa.duration("ns"))
    table = pa.table({"d": durations, "x": pa.array([1, 2, 3], pa.int32())})
    theirs, ours = tmp_path / "pyarrow.parquet", tmp_path / "pqbloom.parquet"
    pq.write_table(table, theirs)
    assert_frame_equal(pqbloom.read_table(theirs).to_pandas(), pq.read_table(theirs).to_pandas())
    assert pqbloom.read_table(theirs).to_arrow().equals(pq.read_table(theirs))
    pqbloom.write_table(table, ours)
    assert pq.read_table(ours).equals(pq.read_table(theirs))
    pqbloom.write_table(pqbloom.read_table(theirs), ours)  # read, then written again: still a duration
    assert pq.read_table(ours).schema.field("d").type == pa.duration("ns")


def test_time_values_outside_a_day_are_refused():
    with pytest.raises(SchemaError, match="'t'.*not a time of day"):
        pqbloom.Table.from_pydict({"t": np.array([2 * 86_400_000_000], "m8[us]")}, {"t": "time[us]"})
    with pytest.raises(SchemaError, match="'t'"):
        pqbloom.Table.from_pydict({"t": np.array([-5], "m8[s]")}, {"t": "time[ms]"})
    with pytest.raises(SchemaError, match="'t'"):
        pqbloom.Table.from_pydict({"t": [-5, None]}, {"t": "time[ms]"})
    with pytest.raises(SchemaError, match="'t'"):
        pqbloom.Table.from_pydict({"t": [dt.timedelta(hours=24)]}, {"t": "time[us]"})
    ok = pqbloom.Table.from_pydict({"t": [dt.time(23, 59, 59, 999999), None, 0]}, {"t": "time[us]"})
    assert ok.column("t").to_pylist() == [dt.time(23, 59, 59, 999999), None, dt.time(0)]


def test_a_time_outside_a_day_in_a_file_is_a_typed_error(tmp_path):
    p = tmp_path / "bad_time.parquet"
    pq.write_table(pa.table({"t": pa.array([0, 2 * 86_400_000_000], pa.time64("us"))}), p)  # pyarrow does not check
    t = pqbloom.read_table(p)
    # Python values wrap around the day, as pyarrow's (and DuckDB's) do; pandas has no such time, and
    # pyarrow's to_pandas fails there too (ValueError): pqbloom's failure is typed
    assert t.column("t").to_pylist() == pq.read_table(p).column("t").to_pylist()
    with pytest.raises(CorruptFileError, match="outside a day"):
        t.to_pandas()


# -- defect 5: what to_pandas keeps --------------------------------------------------------------------
def test_utc_timestamps_stay_time_zone_aware_without_metadata(tmp_path):
    p = tmp_path / "utc.parquet"
    pqbloom.write_table(pqbloom.Table.from_pydict({"t": [dt.datetime(2020, 1, 1, 12), None]},
                                                  {"t": "timestamp[us, UTC]"}), p)
    got = pqbloom.read_table(p).to_pandas()
    assert str(got["t"].dtype) == "datetime64[us, UTC]"
    assert_frame_equal(got, pq.read_table(p).to_pandas())


def test_table_from_pandas_keeps_nulls_zones_and_categories():
    df = pd.DataFrame({"i": pd.array([1, None], dtype="Int64"), "b": pd.array([None, True], dtype="boolean"),
                       "t": pd.to_datetime(["2020-01-01 12:00", None]).tz_localize("America/New_York"),
                       "c": pd.Categorical(["y", None], categories=["x", "y"])},
                      index=pd.Index(["r1", "r2"], name="row"))
    t = pqbloom.Table.from_pandas(df)
    assert t.column_names == ["i", "b", "t", "c", "row"] == pa.Table.from_pandas(df).column_names
    assert t.column("i").to_pylist() == [1, None] and t.column("b").to_pylist() == [None, True]
    assert t.column("t").to_pylist()[0] == dt.datetime(2020, 1, 1, 17, tzinfo=dt.timezone.utc)
    assert t.column("c").to_pylist() == ["y", None]
    assert t.to_arrow().schema.field("t").type == pa.timestamp("us", "America/New_York")
    assert t.to_arrow().column("c").to_pylist() == ["y", None]
    assert t.to_arrow().column("c").type.value_type == pa.string()
    assert_frame_equal(t.to_pandas(), df)
    for preserve in (True, False):
        ours = pqbloom.Table.from_pandas(df, preserve_index=preserve)
        theirs = pa.Table.from_pandas(df, preserve_index=preserve)
        assert ours.column_names == theirs.column_names
        assert json.loads(ours.metadata["pandas"])["index_columns"] == theirs.schema.pandas_metadata["index_columns"]
    ranged = pd.DataFrame({"x": [1, 2]})
    assert pqbloom.Table.from_pandas(ranged, preserve_index=True).column_names == \
        pa.Table.from_pandas(ranged, preserve_index=True).column_names == ["x", "__index_level_0__"]


def test_categories_are_the_dictionary_page(tmp_path):
    """A categorical is written dictionary-encoded, its dictionary page holding every category in order
    (used or not), as pyarrow writes it: so pyarrow and DuckDB see the same dictionary."""
    df = pd.DataFrame({"c": pd.Categorical(["b", "b", None, "a"] * 100, categories=["z", "b", "a"], ordered=True)})
    p = tmp_path / "c.parquet"
    pqbloom.write_table(df, p, row_group_size=150)
    meta = pq.read_metadata(p)
    assert meta.num_row_groups == 3
    assert all("RLE_DICTIONARY" in meta.row_group(i).column(0).encodings for i in range(3))
    assert pq.read_table(p).to_pandas()["c"].cat.categories.tolist() == ["z", "b", "a"]
    back = pqbloom.read_table(p).to_pandas()
    assert_frame_equal(back, df)
    assert_frame_equal(pqbloom.read_table(p, columns=["c"]).to_pandas(), pq.read_table(p, columns=["c"]).to_pandas())
    # without dictionary encoding the values are still right; the categories are those seen
    pqbloom.write_table(df, p, use_dictionary=False)
    assert_frame_equal(pqbloom.read_table(p).to_pandas(), pq.read_table(p).to_pandas())


def test_ints_with_nulls_beyond_float_precision_stay_exact(tmp_path):
    """pyarrow turns an int64 column with nulls into float64, rounding 2**53 + 1; pqbloom does so only
    where float64 holds every value, else it keeps Python ints (a documented difference)."""
    p = tmp_path / "i.parquet"
    pqbloom.write_table({"small": [1, None, 2**53 - 1], "big": [2**53 + 1, None, -(2**63)]}, p)
    got, theirs = pqbloom.read_table(p).to_pandas(), pq.read_table(p).to_pandas()
    assert_frame_equal(got[["small"]], theirs[["small"]])
    assert got["big"].tolist() == [2**53 + 1, None, -(2**63)]
    assert theirs["big"].tolist()[0] == float(2**53)  # rounded by pyarrow


def test_metadata_survives_selection_and_encryption(tmp_path):
    df = FRAMES["categoricals"].set_index(pd.Index(list("vwxyz"), name="k"))
    plain = tmp_path / "p.parquet"
    pqbloom.write_table(df, plain)
    expected = pq.read_table(plain).to_pandas()
    p = tmp_path / "e.parquet"
    key = K16["kf"]
    pqbloom.write_table(df, p, encryption_properties=pqbloom.FileEncryptionProperties(footer_key=key))
    got = pqbloom.read_table(p, decryption_properties=pqbloom.FileDecryptionProperties(footer_key=key))
    assert_frame_equal(got.to_pandas(), expected)
    assert_frame_equal(pqbloom.read_table(plain, columns=["ordered", "k"]).to_pandas(), expected[["ordered"]])
    # a filtered read fetches no dictionary page of a pruned row group, so the categories are the
    # values read (pyarrow's are the dictionaries of the row groups it read): the values are the same
    filtered = pqbloom.read_table(plain, filters=pqbloom.field("k") == "x").to_pandas()
    theirs = pq.read_table(plain, filters=[("k", "==", "x")]).to_pandas()
    assert_frame_equal(filtered, theirs, check_categorical=False)
    assert filtered["unused_categories"].cat.categories.tolist() == ["b"]


def test_file_objects_and_malformed_pandas_metadata(tmp_path):
    buf = io.BytesIO()
    pqbloom.write_table(pd.DataFrame({"a": [1, 2]}, index=pd.Index([7, 8], name="i")), buf)
    assert pqbloom.read_table(io.BytesIO(buf.getvalue())).to_pandas().index.tolist() == [7, 8]
    p = tmp_path / "bad.parquet"
    pqbloom.write_table({"a": [1, 2]}, p, key_value_metadata={"pandas": "{not json"})
    assert_frame_equal(pqbloom.read_table(p).to_pandas(), pd.DataFrame({"a": [1, 2]}))


def test_unsupported_pandas_dtypes_are_refused_by_name():
    with pytest.raises(SchemaError, match="'p'"):
        pqbloom.Table.from_pandas(pd.DataFrame({"p": pd.period_range("2020-01", periods=2, freq="M")}))
    with pytest.raises(SchemaError, match="'m'"):
        pqbloom.Table.from_pandas(pd.DataFrame({"m": [1, "a"]}))
    with pytest.raises(SchemaError, match="duplicate"):
        pqbloom.Table.from_pandas(pd.DataFrame([[1, 2]], columns=["a", "a"]))


def test_a_given_schema_types_the_frame(tmp_path):
    df = pd.DataFrame({"i": pd.array([1, None], dtype="Int64"), "f": [1.5, np.nan],
                       "t": pd.to_datetime(["2020-01-01 12:00", None]).tz_localize("Asia/Tokyo"),
                       "d": pd.to_timedelta(["1s", None])})
    p = tmp_path / "s.parquet"
    pqbloom.write_table(df, p, schema={"i": "int32", "f": "float", "t": "timestamp[ms, UTC]", "d": "int64"})
    got = pq.read_table(p)
    assert got.schema.field("i").type == pa.int32() and got.column("i").to_pylist() == [1, None]
    assert got.schema.field("f").type == pa.float32() and got.column("f").to_pylist() == [1.5, None]
    assert got.schema.field("t").type == pa.timestamp("ms", "Asia/Tokyo")
    assert got.column("t").to_pylist()[0] == pd.Timestamp("2020-01-01 12:00", tz="Asia/Tokyo")
    assert got.schema.field("d").type == pa.duration("us") and got.column("d").to_pylist() == [dt.timedelta(seconds=1), None]
    assert_frame_equal(pqbloom.read_table(p).to_pandas(), got.to_pandas())


def test_a_given_schema_picks_columns_and_index_levels_as_pyarrow(tmp_path):
    df = pd.DataFrame({"a": [1, 2], "b": ["x", "y"]}, index=pd.MultiIndex.from_arrays([[5, 6], ["p", "q"]],
                                                                                      names=["k", None]))
    ours = pqbloom.Table.from_pandas(df, schema={"b": "string", "__index_level_1__": "string", "k": "int64"})
    theirs = pa.Table.from_pandas(df, schema=pa.schema([("b", pa.string()), ("__index_level_1__", pa.string()),
                                                        ("k", pa.int64())]))
    assert ours.column_names == theirs.column_names == ["b", "__index_level_1__", "k"]
    meta = json.loads(ours.metadata["pandas"])
    meta.pop("creator")
    expected = theirs.schema.pandas_metadata
    expected.pop("creator")
    assert meta == expected
    # a writer's schema without the index: the frame's values are written, its index is not (as pyarrow)
    p = tmp_path / "w.parquet"
    with pqbloom.ParquetWriter(p, pqbloom.Schema.from_types({"a": "int64", "b": "string"})) as w:
        w.write_table(df)
    assert_frame_equal(pqbloom.read_table(p).to_pandas(), pq.read_table(p).to_pandas())
    assert pq.read_table(p).column_names == ["a", "b"]
    with pytest.raises(SchemaError, match="'c'"):
        pqbloom.Table.from_pandas(df, schema={"c": "int64"})


def test_a_duration_column_changes_nothing_else_pyarrow_reads(tmp_path):
    """The Arrow schema stored for a duration describes every other column as pyarrow would: zones,
    categoricals, strings, decimals, nested values read the same with or without the duration."""
    df = pd.concat([FRAMES["time_zones_and_units"], FRAMES["categoricals"], FRAMES["strings"],
                    FRAMES["python_objects"], FRAMES["nullable_ints"], FRAMES["nested"].add_prefix("nested_")], axis=1)
    df.index = pd.Index(list("abcde"), name="k")
    without, with_td = tmp_path / "without.parquet", tmp_path / "with.parquet"
    pqbloom.write_table(df, without)
    pqbloom.write_table(df.assign(td=FRAMES["durations"]["us"].to_numpy()), with_td)
    a, b = pq.read_table(without), pq.read_table(with_td)
    assert b.schema.field("td").type == pa.duration("us")
    assert b.drop_columns(["td"]).schema.equals(a.schema, check_metadata=False)
    assert_frame_equal(b.to_pandas().drop(columns=["td"]), a.to_pandas())
    assert_frame_equal(pqbloom.read_table(with_td).to_pandas().drop(columns=["td"]), a.to_pandas())


def test_a_filtered_read_of_a_categorical_reads_no_pruned_row_group(tmp_path):
    """The categories of a read come from the dictionary pages, but a filtered read must not fetch the
    pages of the row groups its filter pruned (a Bloom filter lookup would read the whole column)."""
    n = 40_000
    labels = [f"category-{i:04d}-" + "x" * 40 for i in range(1000)]  # every row group's dictionary is big
    df = pd.DataFrame({"id": np.arange(n), "c": pd.Categorical([labels[i % 1000] for i in range(n)], categories=labels)})
    p = tmp_path / "c.parquet"
    pqbloom.write_table(df, p, row_group_size=2_000, bloom_filter_options={"id": True})
    pf = pqbloom.ParquetFile(p)
    before = pf.io_stats.bytes_read
    got = pf.read(filters=pqbloom.field("id") == 4321)
    assert got.to_pandas()["c"].tolist() == [labels[321]]
    assert pf.io_stats.bytes_read - before < p.stat().st_size // 5
