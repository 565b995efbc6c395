"""The Arrow PyCapsule interface, out: pyarrow, polars and DuckDB consume pqbloom tables and columns through
``__arrow_c_stream__`` / ``__arrow_c_array__`` / ``__arrow_c_schema__`` (no pyarrow on pqbloom's side), and
get what ``to_arrow()`` gives: pyarrow's own reading of the same file is the reference, through ``to_arrow()``
and directly."""

from __future__ import annotations

import datetime as dt
import decimal
import gc
import uuid
import weakref

import duckdb
import numpy as np
import pandas as pd
import polars as pl
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import pqbloom
from pqbloom.errors import SchemaError
from pqbloom.table import Column, Table

N = 7


def rich_arrow() -> pa.Table:
    """Every kind of Arrow column pqbloom reads back from Parquet, with nulls."""
    def nul(vals):
        return [None if i % 3 == 1 else v for i, v in enumerate(vals)]

    ints = list(range(N))
    return pa.table({
        "i8": pa.array(nul(ints), pa.int8()), "i16": pa.array(nul(ints), pa.int16()),
        "i32": pa.array(nul(ints), pa.int32()), "i64": pa.array(nul(ints), pa.int64()),
        "u8": pa.array(nul(ints), pa.uint8()), "u16": pa.array(nul(ints), pa.uint16()),
        "u32": pa.array(nul([2**32 - 1 - i for i in ints]), pa.uint32()),
        "u64": pa.array(nul([2**64 - 1 - i for i in ints]), pa.uint64()),
        "f16": pa.array(np.arange(N, dtype=np.float16)), "f32": pa.array(nul([0.5 * i for i in ints]), pa.float32()),
        "f64": pa.array(nul([0.25 * i for i in ints])),
        "bool": pa.array(nul([i % 2 == 0 for i in ints])),
        "str": pa.array(nul(["", "a", "bb", "ccc" * 10, "é", "x", "yy"])),
        "large_str": pa.array(nul(["p", "q" * 20, "", "r", "s", "t", "u"]), pa.large_string()),
        "view_str": pa.array(nul(["short", "a much longer string than twelve", "", "x", "y", "z", "w"]),
                             pa.string_view()),
        "bin": pa.array(nul([bytes([i]) * i for i in ints])),
        "fixed": pa.array(nul([bytes([i, i]) for i in ints]), pa.binary(2)),
        "uuid": pa.array([uuid.UUID(int=i).bytes for i in ints], pa.uuid()),
        "dec32": pa.array(nul([decimal.Decimal(i) / 10 for i in ints]), pa.decimal128(5, 1)),
        "dec64": pa.array(nul([decimal.Decimal(10**15 + i) for i in ints]), pa.decimal128(18, 0)),
        "dec128": pa.array(nul([decimal.Decimal(10**30 + i).scaleb(-3) for i in ints]), pa.decimal128(38, 3)),
        "dec256": pa.array(nul([decimal.Decimal(10**50 + i) for i in ints]), pa.decimal256(60, 0)),
        "date": pa.array(nul([dt.date(2020, 1, 1 + i) for i in ints])),
        "time_ms": pa.array(nul([i * 1000 for i in ints]), pa.time32("ms")),
        "time_us": pa.array(nul([i * 10**6 for i in ints]), pa.time64("us")),
        "time_ns": pa.array(nul([i * 10**9 + 1 for i in ints]), pa.time64("ns")),
        "ts_ms": pa.array(nul([i * 10**12 for i in ints]), pa.timestamp("ms")),
        "ts_us_utc": pa.array(nul([i * 10**15 for i in ints]), pa.timestamp("us", "UTC")),
        "ts_ns_paris": pa.array(nul([i * 10**17 + 7 for i in ints]), pa.timestamp("ns", "Europe/Paris")),
        "ts_s_offset": pa.array(nul([i * 10**8 for i in ints]), pa.timestamp("s", "+05:30")),
        "dur_s": pa.array(nul(ints), pa.duration("s")), "dur_ns": pa.array(nul(ints), pa.duration("ns")),
        "cat": pa.array(nul(["red", "blue", "red", "green", "blue", "red", "red"])).dictionary_encode(),
        "list": pa.array(nul([[i] * i for i in ints])),
        "large_list": pa.array(nul([[str(i)] * (i % 3) for i in ints]), pa.large_list(pa.string())),
        "list_of_struct": pa.array(nul([[{"a": i, "b": None}] for i in ints])),
        "map": pa.array(nul([[(f"k{i}", i), ("z", None)] for i in ints]), pa.map_(pa.string(), pa.int64())),
        "struct": pa.array(nul([{"x": i, "y": None if i == 2 else str(i), "z": [i]} for i in ints])),
        "null": pa.nulls(N),
        "json": pa.array(nul(['{"a": 1}', "[]", "1", "null", '"s"', "{}", "2"]), pa.json_(pa.string())),
    })


@pytest.fixture(scope="module")
def rich(tmp_path_factory) -> tuple[Table, pa.Table]:
    """The rich table written by pyarrow, read by pqbloom, and pyarrow's own reading of the same file."""
    path = tmp_path_factory.mktemp("capsule") / "rich.parquet"
    pq.write_table(rich_arrow(), path, store_schema=True)
    return pqbloom.read_table(path), pq.read_table(path)


def test_pyarrow_consumes_the_stream_as_to_arrow_and_as_its_own_read(rich):
    t, oracle = rich
    got = pa.table(t)  # __arrow_c_stream__
    assert got.equals(t.to_arrow())
    assert got.schema.equals(t.to_arrow().schema, check_metadata=True)
    assert got.equals(oracle)
    assert got.column("bool").type == pa.bool_() and got.column("view_str").type == pa.string_view()


def test_pyarrow_consumes_the_array_and_schema_capsules(rich):
    t, _ = rich
    batch = pa.record_batch(t)  # __arrow_c_array__: one struct array
    assert pa.Table.from_batches([batch]).equals(t.to_arrow())
    assert pa.schema(t).equals(t.to_arrow().schema, check_metadata=True)  # __arrow_c_schema__


@pytest.mark.parametrize("name", sorted(rich_arrow().column_names))
def test_each_column_goes_out_as_column_to_arrow(rich, name):
    col = rich[0].column(name)
    assert pa.array(col).equals(col.to_arrow())  # __arrow_c_array__
    assert pa.chunked_array(col).combine_chunks().equals(col.to_arrow())  # __arrow_c_stream__
    assert pa.field(col).type == col.to_arrow().type  # __arrow_c_schema__


def test_polars_consumes_tables_as_it_reads_to_arrow(rich):
    t, _ = rich
    # types polars refuses or converts otherwise than from pyarrow (a fixed-offset zone it cannot parse)
    skip = {"dec256", "f16", "uuid", "json", "time_ms", "ts_s_offset"}
    sub = t.select([n for n in t.column_names if n not in skip])
    got = pl.DataFrame(sub)
    want = pl.from_arrow(sub.to_arrow())
    assert got.schema == want.schema
    assert got.equals(want, null_equal=True)
    assert got["ts_ns_paris"].dtype == pl.Datetime("ns", "Europe/Paris")
    assert got["cat"].dtype == pl.Categorical


def test_duckdb_queries_tables_as_it_queries_to_arrow(rich):
    t, _ = rich
    t = t.select([n for n in t.column_names if n not in ("f16", "dec256")])  # types DuckDB does not take
    ref = t.to_arrow()  # noqa: F841 - DuckDB finds it by name
    assert duckdb.sql("select * from t").fetchall() == duckdb.sql("select * from ref").fetchall()
    assert duckdb.sql("select count(*), sum(i64) from t where str is not null").fetchall() == \
        duckdb.sql("select count(*), sum(i64) from ref where str is not null").fetchall()
    assert duckdb.sql("select * from t").types == duckdb.sql("select * from ref").types


def test_pandas_arrow_types_go_out_as_to_arrow_applies_them():
    df = pd.DataFrame({
        "tz": pd.date_range("2024-03-30", periods=4, freq="12h", tz="Europe/Paris"),
        "td": pd.to_timedelta([1, 2, None, 4], unit="s"),
        "cat": pd.Categorical(["b", "a", None, "b"], categories=["z", "b", "a"], ordered=True),
        "n": pd.array([1, None, 3, 4], dtype="Int32"),
    })
    t = Table.from_pandas(df)
    got = pa.table(t)
    assert got.equals(t.to_arrow()) and got.schema.equals(t.to_arrow().schema, check_metadata=True)
    assert got.column("cat").type == pa.dictionary(pa.int8(), pa.string(), ordered=True)
    assert got.column("cat").chunk(0).dictionary.to_pylist() == ["z", "b", "a"]  # categories kept, in order


def test_a_table_with_rows_and_no_columns_keeps_its_rows():
    t = Table([], {"k": "v"}, num_rows=5)
    got = pa.table(t)
    assert got.num_rows == 5 and got.num_columns == 0 and got.schema.metadata == {b"k": b"v"}


def test_sliced_and_taken_tables_go_out_as_to_arrow(rich):
    t, _ = rich
    for part in (t.slice(2, 4), t.take(np.array([6, 0, 3, 3])), t.slice(7), t.slice(0, 0)):
        assert pa.table(part).equals(part.to_arrow())


def test_requested_schema_casts_where_it_can_and_raises_where_not():
    t = Table.from_pydict({"s": ["a", None, "ccc" * 9], "l": [[1], None, [2, 3]], "i": [1, 2, 3]})
    want = pa.schema([("s", pa.large_string()), ("l", pa.large_list(pa.int64())), ("i", pa.int64())])
    got = pa.table(t, schema=want)
    assert got.schema == want
    assert got.to_pylist() == t.to_pylist()
    views = pa.schema([("s", pa.string_view()), ("l", pa.list_(pa.int64())), ("i", pa.int64())])
    assert pa.table(t, schema=views).column("s").to_pylist() == ["a", None, "ccc" * 9]
    with pytest.raises(SchemaError, match="cannot provide"):
        t.__arrow_c_stream__(pa.schema([("s", pa.string()), ("l", pa.list_(pa.int64())),
                                        ("i", pa.int32())]).__arrow_c_schema__())


def test_consumers_outlive_the_table_and_release_its_buffers():
    values = np.arange(100_000, dtype=np.int64)
    t = Table.from_pydict({"a": values, "s": ["x" * 5] * 100_000})
    alive = weakref.ref(t.column("a").values)
    out = [pa.table(t), pl.DataFrame(t)]
    capsule = t.__arrow_c_array__()  # never consumed: its destructor releases it
    del t, values
    gc.collect()
    assert alive() is not None  # exported without a copy: the consumers hold pqbloom's own buffer
    assert out[0].column("a")[99_999].as_py() == 99_999 and out[1]["a"][99_999] == 99_999
    del out, capsule
    gc.collect()
    assert alive() is None  # every release callback ran


@pytest.mark.traces_memory
def test_many_exports_do_not_leak():
    import tracemalloc

    t = Table.from_pydict({"a": np.arange(50_000, dtype=np.int64), "s": ["abc"] * 50_000,
                           "n": [1, None] * 25_000, "l": [[1, 2]] * 50_000})

    def rounds(k: int) -> None:
        for _ in range(k):  # each export converts offsets and bitmaps: ~1 MB that a missing release would keep
            pa.table(t)
            t.__arrow_c_stream__()
            t.__arrow_c_array__()
            t.column("s").__arrow_c_stream__()
            pl.DataFrame(t)

    rounds(3)
    gc.collect()
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        rounds(40)
        gc.collect()
        grown = tracemalloc.get_traced_memory()[0] - before
    finally:
        tracemalloc.stop()
    assert grown < 2_000_000, grown


def test_zero_copy_where_the_layout_is_arrows():
    ints = np.arange(10, dtype=np.int64)
    t = Table.from_pydict({"a": ints, "s": ["x", "yy"] * 5})
    got = pa.table(t)
    assert got.column("a").chunk(0).buffers()[1].address == ints.ctypes.data
    data = t.column("s").values.data
    assert got.column("s").chunk(0).buffers()[2].address == data.ctypes.data
    # large strings share pqbloom's int64 offsets too
    big = pa.table(t, schema=pa.schema([("a", pa.int64()), ("s", pa.large_string())]))
    assert big.column("s").chunk(0).buffers()[1].address == t.column("s").values.offsets.ctypes.data


SCALARS = {
    "int64": st.integers(-2**63, 2**63 - 1),
    "int32": st.integers(-2**31, 2**31 - 1),
    "double": st.floats(allow_nan=False),
    "bool": st.booleans(),
    "string": st.text(max_size=20),
    "binary": st.binary(max_size=20),
}


@st.composite
def flat_tables(draw):
    n = draw(st.integers(0, 30))
    cols = {}
    types = {}
    for i, kind in enumerate(draw(st.lists(st.sampled_from(sorted(SCALARS)), min_size=1, max_size=5))):
        cols[f"c{i}"] = draw(st.lists(st.none() | SCALARS[kind], min_size=n, max_size=n))
        types[f"c{i}"] = kind
    return cols, types


@settings(max_examples=60, deadline=None)
@given(flat_tables())
def test_random_flat_tables_round_trip_through_capsules(data):
    cols, types = data
    t = Table.from_pydict(cols, types)
    got = pa.table(t)
    assert got.equals(t.to_arrow())
    assert got.to_pydict() == cols
    back = Table.from_arrow_c(t)
    assert back.schema == t.schema and back.to_pydict() == cols
    assert pl.DataFrame(t).to_dict(as_series=False) == cols


def test_columns_of_every_kind_round_trip_through_the_interface(rich):
    t, _ = rich
    back = Table.from_arrow_c(t)
    assert back.schema == Table.from_arrow(t.to_arrow()).schema  # decimals in the narrowest physical type
    assert back.to_arrow().equals(t.to_arrow())
    assert isinstance(back.column("cat"), Column) and back.column("cat").dictionary is not None


def test_dictionaries_and_large_types_inside_nested_columns_go_out_as_to_arrow(tmp_path):
    st = pa.array([{"c": "x"}, None, {"c": "y"}], pa.struct([pa.field("c", pa.dictionary(pa.int8(), pa.string()))]))
    lst = pa.array([["x", "y"], None, ["x"]], pa.list_(pa.dictionary(pa.int16(), pa.string())))
    mp = pa.array([[("k", "v")], None, []], pa.map_(pa.string(), pa.dictionary(pa.int32(), pa.string())))
    tab = pa.table({"st": st, "lst": lst, "mp": mp, "big": pa.array(["a", None, "c"], pa.large_binary()),
                    "lv": pa.array([[{"s": "p"}], [], None], pa.large_list(pa.struct([("s", pa.large_string())])))})
    pq.write_table(tab, tmp_path / "n.parquet")
    t = pqbloom.read_table(tmp_path / "n.parquet")
    got = pa.table(t)
    assert got.equals(t.to_arrow()) and got.schema.equals(t.to_arrow().schema, check_metadata=True)
    assert got.equals(pq.read_table(tmp_path / "n.parquet"))
