"""The Arrow PyCapsule interface, in: ``Table.from_arrow_c`` and ``write_table`` take any object that exports a
table (pyarrow, polars, DuckDB, nanoarrow) without pyarrow, converting as ``Table.from_arrow`` converts the
same data (the reference: pyarrow's own import of the same capsules); malformed structs are typed errors; and
with pyarrow not importable, polars and DuckDB consume pqbloom tables and ``write_table`` takes their frames
and relations."""

from __future__ import annotations

import datetime as dt
import decimal
import subprocess
import sys
import textwrap

import duckdb
import numpy as np
import polars as pl
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import pqbloom
import pqbloom.arrow_c
from pqbloom.errors import SchemaError, UnsupportedError
from pqbloom.table import Table
from tests.paths import ROOT
from tests.unit.table.test_arrow_capsule import rich_arrow


def same_as_pyarrow_import(obj, oracle: pa.Table) -> Table:
    """``Table.from_arrow_c(obj)`` converted as ``Table.from_arrow`` converts ``oracle`` (pyarrow's import of the
    same data): same schema, Arrow types and values."""
    got, want = Table.from_arrow_c(obj), Table.from_arrow(oracle)
    assert got.schema == want.schema
    assert got.num_rows == want.num_rows
    a, b = got.to_arrow(), want.to_arrow()
    assert a.schema.equals(b.schema, check_metadata=True)
    assert a.equals(b)
    return got


@pytest.mark.parametrize("cut", ["whole", "sliced", "chunked", "empty", "no batches"])
def test_pyarrow_tables_come_in_as_from_arrow_makes_them(cut):
    tab = rich_arrow()
    tab = {"whole": tab, "sliced": tab.slice(2, 4), "chunked": pa.concat_tables([tab.slice(0, 3), tab.slice(1)]),
           "empty": tab.slice(0, 0), "no batches": pa.Table.from_batches([], tab.schema)}[cut]
    got = same_as_pyarrow_import(tab, tab)
    assert got.arrow_types() is not None and got.arrow_types().field("dur_s").type.kind == "duration"


def test_written_files_read_back_as_pyarrow_writes_them(tmp_path):
    tab = rich_arrow()
    pqbloom.write_table(Table.from_arrow_c(tab), tmp_path / "ours.parquet")
    pqbloom.write_table(tab, tmp_path / "via_pyarrow.parquet")  # Table.from_arrow
    ours, ref = pq.read_table(tmp_path / "ours.parquet"), pq.read_table(tmp_path / "via_pyarrow.parquet")
    assert ours.schema.equals(ref.schema, check_metadata=True)
    assert ours.equals(ref)


def polars_frame() -> pl.DataFrame:
    paris = pl.Series("tz", [dt.datetime(2024, 3, 31, 1), None, dt.datetime(2024, 3, 31, 3)]
                      ).dt.replace_time_zone("Europe/Paris")
    return pl.DataFrame({
        "s": ["a", None, "a string longer than twelve"], "i": [1, None, 3],
        "u": pl.Series([1, 2, 2**32 - 1], dtype=pl.UInt32), "f": [1.5, None, float("inf")],
        "b": [True, None, False], "bin": [b"x", None, b"a binary longer than twelve"], "tz": paris,
        "ns": pl.Series([dt.datetime(2001, 1, 1), None, dt.datetime(1969, 12, 31)], dtype=pl.Datetime("ns")),
        "d": [dt.date(2024, 1, 1), None, dt.date(2020, 2, 29)], "t": [dt.time(1, 2, 3), None, dt.time(23)],
        "dur": [dt.timedelta(seconds=1), None, dt.timedelta(days=-2)],
        "dec": pl.Series([decimal.Decimal("1.25"), None, decimal.Decimal("-3.50")], dtype=pl.Decimal(10, 2)),
        "cat": pl.Series(["red", "blue", None], dtype=pl.Categorical),
        "enum": pl.Series(["lo", None, "hi"], dtype=pl.Enum(["lo", "mid", "hi"])),
        "l": [[1, 2], None, []], "ls": [["x"], [None, "y"], None],
        "arr": pl.Series([[1, 2], None, [5, 6]], dtype=pl.Array(pl.Int32, 2)),
        "st": [{"a": 1, "b": "p"}, None, {"a": None, "b": "q"}], "nul": [None, None, None],
    })


def test_polars_frames_come_in_as_pyarrow_imports_them(tmp_path):
    df = pl.concat([polars_frame(), polars_frame().slice(1)], rechunk=False)  # two chunks: two batches
    assert df.n_chunks() == 2
    # Table.from_arrow cannot decode pyarrow's dictionary<string_view> (polars' categoricals): compared without
    plain = df.drop("cat", "enum")
    same_as_pyarrow_import(plain, pa.table(plain))
    pqbloom.write_table(Table.from_arrow_c(df), tmp_path / "ours.parquet")
    assert pl.read_parquet(tmp_path / "ours.parquet").equals(df, null_equal=True)
    pqbloom.write_table(Table.from_arrow_c(plain), tmp_path / "plain.parquet")
    pq.write_table(pa.table(plain), tmp_path / "pyarrow.parquet")  # pyarrow cannot write the categoricals
    assert pq.read_table(tmp_path / "plain.parquet").equals(pq.read_table(tmp_path / "pyarrow.parquet"))


def test_duckdb_relations_come_in_as_pyarrow_imports_them(tmp_path):
    sql = """select i, i::varchar || 'x' as s, [i, i + 1] as l, {'k': i * 1.5, 'v': [i::varchar]} as st,
                    map([i], ['m' || i]) as m, (i / 3)::decimal(12, 3) as dec, i::hugeint as huge,
                    timestamptz '2024-01-01 00:00:00+00' + to_days(i) as tz, date '2024-01-01' + i::integer as d,
                    case when i % 2 = 0 then null else i end as n
             from range(1000) t(i)"""
    same_as_pyarrow_import(duckdb.sql(sql), pa.table(duckdb.sql(sql)))
    pqbloom.write_table(duckdb.sql(sql), tmp_path / "d.parquet")  # write_table takes the relation
    assert pq.read_table(tmp_path / "d.parquet").equals(pa.table(duckdb.sql(sql)))


def test_nanoarrow_streams_and_arrays_come_in():
    na = pytest.importorskip("nanoarrow")
    tab = rich_arrow().drop_columns(["view_str"])  # nanoarrow's copy has no view types
    same_as_pyarrow_import(na.ArrayStream(tab), tab)
    t = Table.from_pydict({"a": [1, None, 3], "s": ["x", None, "yz"]})
    assert Table.from_arrow_c(na.Array(t)).to_pydict() == t.to_pydict()  # its __arrow_c_array__


class ArrayOnly:
    """An object that exports one struct array (no stream)."""

    def __init__(self, batch: pa.RecordBatch) -> None:
        self.batch = batch

    def __arrow_c_array__(self, requested_schema=None):
        return self.batch.__arrow_c_array__(requested_schema)


def test_objects_exporting_one_array_come_in():
    batch = pa.record_batch({"a": [1, None, 3], "s": ["x", None, "yz"]}).slice(1)
    got = Table.from_arrow_c(ArrayOnly(batch))
    assert got.to_pydict() == {"a": [None, 3], "s": [None, "yz"]}
    with pytest.raises(SchemaError, match="not a table"):
        Table.from_arrow_c(ArrayOnly(pa.array([1, 2])))


def test_batches_of_different_nullability_come_in_under_one_field():
    f = pa.field("st", pa.struct([pa.field("x", pa.int64(), nullable=False)]))
    schema = pa.schema([f])
    with_null = pa.record_batch([pa.array([{"x": 1}, None], f.type)], schema=schema)
    without = pa.record_batch([pa.array([{"x": 2}], f.type)], schema=schema)
    tab = pa.Table.from_batches([without, with_null])
    assert Table.from_arrow_c(tab).to_pydict() == {"st": [{"x": 2}, {"x": 1}, None]}


def stream_of(schema_desc, *batches) -> object:
    """An object exporting a hand-made stream (pqbloom's own exporter, fed descriptions as they come)."""
    class Stream:
        def __arrow_c_stream__(self, requested_schema=None):
            return pqbloom.arrow_c.export_stream(schema_desc, iter(batches))
    return Stream()


def strings(offsets, data=b"abcdef", fmt="u") -> tuple:
    """A stream of one string column whose offsets are ``offsets``."""
    n = len(offsets) - 1
    col = (n, 0, 0, (None, np.array(offsets, np.int32), np.frombuffer(data, np.uint8)), (), None)
    return stream_of(("+s", "", None, 0, ((fmt, "s", None, 2, (), None),), None), (n, 0, 0, (None,), (col,), None))


def test_good_hand_made_streams_come_in():
    assert Table.from_arrow_c(strings([0, 2, 2, 6])).to_pydict() == {"s": ["ab", "", "cdef"]}
    assert pa.table(strings([0, 2, 2, 6])).to_pydict() == {"s": ["ab", "", "cdef"]}  # pyarrow agrees


@pytest.mark.parametrize("offsets", [[0, 4, 2], [-1, 2], [3, 2, 4]])
def test_offsets_that_decrease_or_go_negative_are_schema_errors(offsets):
    with pytest.raises(SchemaError, match="offsets"):
        Table.from_arrow_c(strings(offsets))


def test_lists_past_their_child_views_past_their_data_and_bad_indices_are_schema_errors():
    child = (2, 0, 0, (None, np.array([1, 2], np.int64)), (), None)
    lst = (1, 0, 0, (None, np.array([0, 5], np.int32)), (child,), None)
    schema = ("+s", "", None, 0, (("+l", "l", None, 2, (("l", "item", None, 2, (), None),), None),), None)
    with pytest.raises(SchemaError, match="offsets"):
        Table.from_arrow_c(stream_of(schema, (1, 0, 0, (None,), (lst,), None)))
    views = np.zeros(16, np.uint8)
    views[0:4] = np.array([20], "<i4").view(np.uint8)  # 20 bytes at offset 0 of a 6-byte buffer
    col = (1, 0, 0, (None, views, np.frombuffer(b"abcdef", np.uint8), np.array([6], np.int64)), (), None)
    with pytest.raises(SchemaError, match="outside"):
        Table.from_arrow_c(stream_of(("+s", "", None, 0, (("vu", "s", None, 2, (), None),), None),
                                     (1, 0, 0, (None,), (col,), None)))
    values = (2, 0, 0, (None, np.array([0, 1, 2], np.int32), np.frombuffer(b"ab", np.uint8)), (), None)
    codes = (1, 0, 0, (None, np.array([7], np.int32)), (), values)
    schema = ("+s", "", None, 0, (("i", "c", None, 2, (), ("u", "", None, 2, (), None)),), None)
    with pytest.raises(SchemaError, match="dictionary index"):
        Table.from_arrow_c(stream_of(schema, (1, 0, 0, (None,), (codes,), None)))


def test_unsupported_types_and_non_tables_are_schema_errors():
    with pytest.raises(SchemaError, match="not supported"):
        Table.from_arrow_c(pa.table({"iv": pa.array([pa.MonthDayNano([1, 2, 3])])}))
    with pytest.raises(SchemaError, match="not a table"):
        Table.from_arrow_c(pa.chunked_array([[1, 2]]))


def test_a_producer_error_reaches_the_consumer_with_its_message():
    def batches():
        yield (1, 0, 0, (None,), ((1, 0, 0, (None, np.array([5], np.int64)), (), None),), None)
        raise RuntimeError("the producer broke")

    class Broken:
        def __arrow_c_stream__(self, requested_schema=None):
            return pqbloom.arrow_c.export_stream(("+s", "", None, 0, (("l", "a", None, 2, (), None),), None),
                                                 batches())

    with pytest.raises(SchemaError, match="the producer broke"):
        Table.from_arrow_c(Broken())
    with pytest.raises((pa.ArrowException, OSError), match="the producer broke"):
        pa.table(Broken())


def test_without_the_compiled_module_the_interface_says_so(monkeypatch):
    monkeypatch.setattr(pqbloom.arrow_c, "_ext", None)
    t = Table.from_pydict({"a": [1]})
    with pytest.raises(UnsupportedError, match="arrow_c"):
        t.__arrow_c_stream__()
    with pytest.raises(UnsupportedError, match="arrow_c"):
        Table.from_arrow_c(pa.table({"a": [1]}))


NO_PYARROW = textwrap.dedent("""
    import os, sys, tempfile

    class NoPyarrow:  # pyarrow is not importable: find_spec says it is absent, import raises
        def find_spec(self, name, path=None, target=None):
            if name.split(".")[0] == "pyarrow":
                raise ImportError("pyarrow is blocked in this test")
            return None

    sys.modules["pyarrow"] = None
    sys.meta_path.insert(0, NoPyarrow())

    import duckdb
    import polars as pl

    import pqbloom
    from pqbloom.table import Table

    t = Table.from_pydict({"a": [1, None, 3], "s": ["x", None, "a string longer than twelve"],
                           "l": [[1], None, []], "st": [{"k": 1.5}, None, {"k": None}]})
    want = {"a": [1, None, 3], "s": ["x", None, "a string longer than twelve"], "l": [[1], None, []],
            "st": [{"k": 1.5}, None, {"k": None}]}
    assert pl.DataFrame(t).to_dict(as_series=False) == want
    assert duckdb.sql("select a, s, l from t").fetchall() == [(1, "x", [1]), (None, None, None),
                                                              (3, "a string longer than twelve", [])]
    d = tempfile.mkdtemp()
    df = pl.DataFrame({"i": [1, None], "ts": pl.Series([1, 2], dtype=pl.Datetime("us", "Asia/Tokyo")),
                       "c": pl.Series(["p", None], dtype=pl.Categorical)})
    pqbloom.write_table(df, os.path.join(d, "p.parquet"))
    assert pl.read_parquet(os.path.join(d, "p.parquet")).equals(df, null_equal=True)
    pqbloom.write_table(duckdb.sql("select * from t"), os.path.join(d, "d.parquet"))
    assert pqbloom.read_table(os.path.join(d, "d.parquet")).to_pydict() == want
    assert sys.modules["pyarrow"] is None and not [m for m in sys.modules if m.startswith("pyarrow.")]
    print("no pyarrow: ok")
""")


def test_polars_and_duckdb_work_both_ways_with_pyarrow_not_importable():
    proc = subprocess.run([sys.executable, "-c", NO_PYARROW], capture_output=True, text=True, timeout=300,
                          cwd=ROOT, env={**__import__("os").environ, "PYTHONPATH": str(ROOT)})
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "no pyarrow: ok" in proc.stdout


@settings(max_examples=80, deadline=None)
@given(st.lists(st.none() | st.text(max_size=30), max_size=40), st.integers(0, 5), st.booleans())
def test_string_views_of_any_length_come_in_as_pyarrow_made_them(values, cut, binary):
    typ = pa.binary_view() if binary else pa.string_view()
    data = [v.encode() if binary and v is not None else v for v in values]
    half = len(data) // 2  # two arrays joined: their data in two variadic buffers
    arr = pa.concat_arrays([pa.array(data[:half], typ), pa.array(data[half:], typ)]).slice(min(cut, len(data)))
    got = Table.from_arrow_c(pa.table({"v": arr}))
    assert got.to_pydict() == {"v": arr.to_pylist()}


def test_write_table_takes_a_pyarrow_record_batch_reader(tmp_path):
    schema = pa.schema([("a", pa.int64()), ("s", pa.string())])
    reader = pa.RecordBatchReader.from_batches(schema, [pa.record_batch({"a": [1, None], "s": ["x", None]}, schema),
                                                        pa.record_batch({"a": [3], "s": ["z"]}, schema)])
    pqbloom.write_table(reader, tmp_path / "r.parquet")
    assert pq.read_table(tmp_path / "r.parquet").to_pydict() == {"a": [1, None, 3], "s": ["x", None, "z"]}
