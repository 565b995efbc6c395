"""The ``ARROW:schema`` footer entry: pqbloom's own encoder and decoder against pyarrow's.

pyarrow trusts the Arrow schema it finds in a footer, so pqbloom must store one only where it
describes the file truly: the same Parquet file must read the same in pyarrow with or without it,
except for what it is there to say (durations, time zones, dictionary encoding).
"""

from __future__ import annotations

import base64
import datetime as dt
import decimal
import uuid

import duckdb
import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import pqbloom
from pqbloom.table import arrow_schema as A
from tests.conftest import values_equal

ALL_TYPES = {
    "b": "bool", "i8": "int8", "i16": "int16", "i32": "int32", "i64": "int64", "u8": "uint8", "u16": "uint16",
    "u32": "uint32", "u64": "uint64", "f": "float", "d": "double", "h": "float16", "s": "string", "bin": "binary",
    "e": "enum", "j": "json", "bs": "bson", "fx": "fixed[3]", "u": "uuid", "dec": "decimal(10, 2)",
    "dec_i32": "decimal(5, 1)", "dec_fx": "decimal(30, 4)", "dec_big": "decimal(45, 3)", "dec_bin": "decimal(7, 2) as binary",
    "date": "date", "t_ms": "time[ms]", "t_us": "time[us]", "t_ns": "time[ns]", "ts_ms": "timestamp[ms]",
    "ts_us_utc": "timestamp[us, UTC]", "ts_ns": "timestamp[ns]", "i96": "int96",
    "l": "list<int32>", "ll": "list<list<string not null>>", "st": "struct<a: int32, b: string not null>",
    "m": "map<string, int64>", "sm": "struct<m: map<int32, list<double>>, t: timestamp[ms, UTC]>",
}


def _values(n: int = 4) -> dict[str, list]:
    """A few values of every type in ALL_TYPES (a null in each nullable column)."""
    base = {
        "b": [True, False, True, None], "i8": [-128, 0, 127, None], "i16": [1, -2, 3, None], "i32": [1, 2, 3, 4],
        "i64": [2**62, -(2**62), 0, None], "u8": [0, 255, 1, None], "u16": [0, 65535, 1, None],
        "u32": [0, 2**32 - 1, 1, None], "u64": [0, 2**64 - 1, 1, None], "f": [1.5, -0.0, float("inf"), None],
        "d": [1.5, float("nan"), -1e300, None], "h": [1.5, 0.0, -2.0, None], "s": ["a", "é", "", None],
        "bin": [b"\x00", b"", b"xyz", None], "e": ["A", "B", "A", None], "j": ['{"a": 1}', "[]", "1", None],
        "bs": [b"\x05\x00\x00\x00\x00", b"", b"x", None], "fx": [b"abc", b"\x00\x00\x00", b"xyz", None],
        "u": [uuid.UUID(int=1), uuid.UUID(int=2**128 - 1), uuid.UUID(int=0), None],
        "dec": [decimal.Decimal("12345678.91"), decimal.Decimal("-0.01"), decimal.Decimal(0), None],
        "dec_i32": [decimal.Decimal("1234.5"), decimal.Decimal("-0.1"), decimal.Decimal(0), None],
        "dec_fx": [decimal.Decimal("12345678901234567890123456.7891"), decimal.Decimal("-1.0001"), decimal.Decimal(0),
                   None],
        "dec_big": [decimal.Decimal("1" * 42 + ".123"), decimal.Decimal("-0.001"), decimal.Decimal(0), None],
        "dec_bin": [decimal.Decimal("12345.67"), decimal.Decimal("-0.01"), decimal.Decimal(0), None],
        "date": [dt.date(2020, 1, 1), dt.date(1, 1, 1), dt.date(9999, 12, 31), None],
        "t_ms": [dt.time(1, 2, 3, 4000), dt.time(0), dt.time(23, 59, 59, 999000), None],
        "t_us": [dt.time(1, 2, 3, 4), dt.time(0), dt.time(23, 59, 59, 999999), None],
        "t_ns": [dt.time(1, 2, 3, 4), dt.time(0), dt.time(23, 59, 59, 999999), None],
        "ts_ms": [dt.datetime(2020, 1, 1, 1, 2, 3, 4000), dt.datetime(1900, 1, 1), dt.datetime(2100, 1, 1), None],
        "ts_us_utc": [dt.datetime(2020, 1, 1, tzinfo=dt.timezone.utc), dt.datetime(1900, 1, 1, tzinfo=dt.timezone.utc),
                      dt.datetime(2100, 1, 1, 0, 0, 0, 1, tzinfo=dt.timezone.utc), None],
        "ts_ns": [dt.datetime(2020, 1, 1), dt.datetime(1970, 1, 1), dt.datetime(2200, 1, 1), None],
        "i96": [dt.datetime(2020, 1, 1), dt.datetime(1970, 1, 1), dt.datetime(2200, 1, 1), None],
        "l": [[1, None], [], None, [3]], "ll": [[["a"], []], None, [None, ["b", "c"]], []],
        "st": [{"a": 1, "b": "x"}, {"a": None, "b": ""}, None, {"a": 3, "b": "z"}],
        "m": [{"k": 1, "j": None}, {}, None, {"a": 2}],
        "sm": [{"m": {1: [1.5, None]}, "t": dt.datetime(2020, 1, 1, tzinfo=dt.timezone.utc)}, None,
               {"m": None, "t": None}, {"m": {}, "t": dt.datetime(1970, 1, 1, tzinfo=dt.timezone.utc)}],
    }
    return {k: v[:n] for k, v in base.items()}


def _all_types_table() -> pqbloom.Table:
    return pqbloom.Table.from_pydict(_values(), pqbloom.Schema.from_types(ALL_TYPES, not_null=["i32"]))


def _pyarrow_schemas() -> list[pa.Schema]:
    return [
        pa.schema([pa.field("a", pa.int64(), False), pa.field("ts", pa.timestamp("us", "America/New_York")),
                   pa.field("d", pa.duration("ns")), pa.field("c", pa.dictionary(pa.int8(), pa.large_string(), True)),
                   pa.field("l", pa.list_(pa.field("item", pa.int32(), False))),
                   pa.field("m", pa.map_(pa.string(), pa.float64(), keys_sorted=True)),
                   pa.field("st", pa.struct([("x", pa.date32()), ("y", pa.decimal128(5, 2))])),
                   pa.field("j", pa.json_()), pa.field("u", pa.uuid()), pa.field("t", pa.time64("ns")),
                   pa.field("fx", pa.binary(3)), pa.field("h", pa.float16()), pa.field("n", pa.null()),
                   pa.field("sv", pa.string_view()), pa.field("bv", pa.binary_view()), pa.field("d256", pa.decimal256(50, 3)),
                   pa.field("fid", pa.int32(), metadata={"PARQUET:field_id": "7", "x": "y"})],
                  metadata={"pandas": "{}", "k": ""}),
        pa.schema([pa.field("ll", pa.large_list(pa.large_binary())), pa.field("fsl", pa.list_(pa.int16(), 3)),
                   pa.field("lv", pa.list_view(pa.int8())), pa.field("llv", pa.large_list_view(pa.uint64())),
                   pa.field("d64", pa.date64()), pa.field("t32", pa.time32("s")), pa.field("iv", pa.month_day_nano_interval()),
                   pa.field("u", pa.dense_union([pa.field("a", pa.int32()), pa.field("b", pa.string())], [3, 7])),
                   pa.field("ree", pa.run_end_encoded(pa.int32(), pa.string())),
                   pa.field("nested_dict", pa.struct([("c", pa.dictionary(pa.int16(), pa.binary()))])),
                   pa.field("dec32", pa.decimal32(7, 2)), pa.field("dec64", pa.decimal64(15, 2))]),
        pa.schema([]),
    ]


@pytest.mark.parametrize("schema", _pyarrow_schemas(), ids=["common", "exotic", "empty"])
def test_pyarrow_schemas_decode_and_encode_unchanged(schema):
    decoded = A.decode_schema(base64.b64encode(schema.serialize().to_pybytes()).decode())
    encoded = A.encode_schema(decoded)
    back = pa.ipc.read_schema(pa.py_buffer(base64.b64decode(encoded)))
    assert back.equals(schema, check_metadata=True)
    assert A.decode_schema(encoded) == decoded


_leaf_types = st.sampled_from([
    pa.null(), pa.bool_(), pa.int8(), pa.uint16(), pa.int32(), pa.uint64(), pa.float16(), pa.float32(), pa.float64(),
    pa.string(), pa.large_string(), pa.binary(), pa.binary(5), pa.date32(), pa.date64(), pa.time32("ms"),
    pa.time64("ns"), pa.timestamp("s"), pa.timestamp("ns", "Asia/Tokyo"), pa.duration("ms"), pa.decimal128(38, 9),
    pa.decimal256(76, 0), pa.uuid(), pa.json_(), pa.dictionary(pa.int32(), pa.string()),
    pa.dictionary(pa.uint8(), pa.int64(), ordered=True)])
_names = st.text(min_size=0, max_size=6)
_types = st.recursive(_leaf_types, lambda inner: st.one_of(
    st.builds(pa.list_, inner), st.builds(pa.large_list, inner),
    st.builds(lambda k, v: pa.map_(k, v), st.sampled_from([pa.string(), pa.int32()]), inner),
    st.builds(lambda names, ts: pa.struct([pa.field(f"{n}{i}", t) for i, (n, t) in enumerate(zip(names, ts))]),
              st.lists(_names, min_size=1, max_size=3), st.lists(inner, min_size=1, max_size=3))), max_leaves=8)


@given(types=st.lists(_types, max_size=5), nullable=st.lists(st.booleans(), min_size=5, max_size=5),
       meta=st.dictionaries(_names, _names, max_size=2))
@settings(max_examples=150, deadline=None)
def test_generated_schemas_round_trip_through_pyarrow(types, nullable, meta):
    schema = pa.schema([pa.field(f"f{i}", t, n or t == pa.null()) for i, (t, n) in enumerate(zip(types, nullable))],
                       metadata=meta)
    encoded = A.encode_schema(A.from_pyarrow(schema))
    assert pa.ipc.read_schema(pa.py_buffer(base64.b64decode(encoded))).equals(schema, check_metadata=True)


@given(data=st.binary(max_size=300), flips=st.lists(st.tuples(st.integers(0, 10_000), st.integers(0, 255)), max_size=6))
@settings(max_examples=300, deadline=None)
def test_decoder_raises_only_its_own_error_on_garbage(data, flips):
    valid = bytearray(base64.b64decode(A.encode_schema(A.from_pyarrow(_pyarrow_schemas()[0]))))
    for pos, byte in flips:
        valid[pos % len(valid)] = byte
    for raw in (data, bytes(valid), b"\xff\xff\xff\xff" + data):
        try:
            A.decode_schema(base64.b64encode(raw).decode())
        except A.ArrowSchemaError:
            pass
    with pytest.raises(A.ArrowSchemaError):
        A.decode_schema("not base64 at all!")


def test_natural_fields_are_what_pyarrow_reads(tmp_path):
    p = tmp_path / "all.parquet"
    pqbloom.write_table(_all_types_table(), p)
    assert not pq.read_metadata(p).metadata  # nothing to add: no Arrow schema is stored
    theirs = pq.read_schema(p)
    for f in pqbloom.ParquetFile(p).table_schema.fields:
        natural = A.natural_field(f)
        assert natural is not None, f
        assert A.to_pyarrow_type(natural) == theirs.field(f.name).type, f.name
        assert natural.nullable == theirs.field(f.name).nullable


def test_pyarrow_reads_other_columns_unchanged_when_durations_are_added(tmp_path):
    without, with_td = tmp_path / "without.parquet", tmp_path / "with.parquet"
    t = _all_types_table()
    pqbloom.write_table(t, without)
    pqbloom.write_table(_with_duration(t, np.array([1, -86_400 * 3, 0, "NaT"], "m8[s]")), with_td)
    assert b"ARROW:schema" in pq.read_metadata(with_td).metadata
    a, b = pq.read_table(without), pq.read_table(with_td)
    assert b.schema.field("td").type == pa.duration("s")
    assert b.drop_columns(["td"]).schema.equals(a.schema, check_metadata=True)
    assert values_equal(b.drop_columns(["td"]).to_pylist(), a.to_pylist())
    # DuckDB too (it reads no BSON column, so those files leave it out)
    no_bson = [n for n in t.column_names if n != "bs"]
    pqbloom.write_table(t.select(no_bson), without)
    pqbloom.write_table(_with_duration(t.select(no_bson), np.array([1, -86_400 * 3, 0, "NaT"], "m8[s]")), with_td)
    con = duckdb.connect()
    cols = ", ".join(f'"{n}"' for n in no_bson)
    assert values_equal(con.execute(f"SELECT {cols} FROM read_parquet(?)", [str(with_td)]).fetchall(),
                        con.execute(f"SELECT {cols} FROM read_parquet(?)", [str(without)]).fetchall())
    assert con.execute("SELECT typeof(td) FROM read_parquet(?) LIMIT 1", [str(with_td)]).fetchall() == [("BIGINT",)]
    # pqbloom reads the duration back as one, and everything else as before (decimal(45, 3) aside:
    # to_arrow's decimal256 is another slice of the issue)
    kept = [n for n in no_bson if n != "dec_big"]
    ours = pqbloom.read_table(with_td, columns=kept + ["td"]).to_arrow()
    before = pqbloom.read_table(without, columns=kept).to_arrow()
    assert ours.schema.field("td").type == pa.duration("s")
    assert ours.drop_columns(["td"]).schema.equals(before.schema)
    assert values_equal(ours.drop_columns(["td"]).to_pylist(), before.to_pylist())


def _with_duration(t: pqbloom.Table, td: np.ndarray) -> pqbloom.Table:
    extra = pqbloom.Table.from_pydict({"td": td})
    return pqbloom.Table(t.columns + extra.columns, None, extra.arrow_schema)


def test_pyarrow_tables_are_stored_with_pyarrows_arrow_schema(tmp_path):
    """What pyarrow writes for a table, pqbloom writes too: pyarrow then reads both files alike."""
    table = pa.table({
        "ts": pa.array([1, None], pa.timestamp("ms", "Europe/Paris")),
        "ts_s": pa.array([1, 2], pa.timestamp("s")),
        "d": pa.array([5, None], pa.duration("ms")),
        "ls": pa.array(["a", None], pa.large_string()),
        "dict": pa.array(["x", "y"]).dictionary_encode(),
        "l": pa.array([[1], None], pa.list_(pa.field("item", pa.int64()))),
        "st": pa.array([{"a": 1}, None], pa.struct([("a", pa.int64())])),
    }).replace_schema_metadata({"origin": "test"})
    theirs, ours = tmp_path / "pyarrow.parquet", tmp_path / "pqbloom.parquet"
    pq.write_table(table, theirs)
    pqbloom.write_table(table, ours)
    stored = {p: pa.ipc.read_schema(pa.py_buffer(base64.b64decode(pq.read_metadata(p).metadata[b"ARROW:schema"])))
              for p in (theirs, ours)}
    assert stored[ours].equals(stored[theirs], check_metadata=True)
    assert pq.read_table(ours).equals(pq.read_table(theirs))
    assert pq.read_table(ours).schema.metadata == pq.read_table(theirs).schema.metadata
    assert pqbloom.read_table(theirs).to_arrow().equals(pq.read_table(theirs))


def test_stored_schema_only_says_what_is_true(tmp_path):
    """An Arrow schema that does not fit the columns (a user's, or a table's after its columns changed)
    is stored only where it fits: pyarrow must not read a duration or a zone the data does not have."""
    lie = pa.schema([pa.field("n", pa.duration("s")), pa.field("s", pa.dictionary(pa.int32(), pa.string())),
                     pa.field("t", pa.timestamp("ms", "Asia/Tokyo")), pa.field("x", pa.int64())])
    text = base64.b64encode(lie.serialize().to_pybytes()).decode()
    p = tmp_path / "lie.parquet"
    data = {"n": ["not a duration"], "s": ["a"], "t": [dt.datetime(2020, 1, 1)], "x": [1]}
    pqbloom.write_table(pqbloom.Table.from_pydict(data, {"n": "string", "s": "string", "t": "timestamp[us]", "x": "int64"}),
                        p, key_value_metadata={"ARROW:schema": text})
    got = pq.read_table(p).schema
    assert got.field("n").type == pa.string()
    assert pa.types.is_dictionary(got.field("s").type)  # true: the strings may be read dictionary-encoded
    assert got.field("t").type == pa.timestamp("us")  # a naive timestamp stays naive
    assert got.field("x").type == pa.int64()
    pqbloom.write_table({"x": [1]}, p, key_value_metadata={"ARROW:schema": "garbage"})
    assert not pq.read_metadata(p).metadata
    assert pq.read_table(p).column("x").to_pylist() == [1]


def test_unreadable_stored_schema_is_ignored_on_read(tmp_path):
    """pyarrow refuses a file whose ARROW:schema is not one; DuckDB ignores it, and so does pqbloom,
    reading the columns by their Parquet types."""
    p = tmp_path / "garbage.parquet"
    duckdb.execute(f"COPY (SELECT 1::BIGINT AS x UNION ALL SELECT 2) TO '{p}' (FORMAT parquet, KV_METADATA "
                   "{'ARROW:schema': 'AAAA'})")
    assert pqbloom.ParquetFile(p).key_value_metadata["ARROW:schema"] == "AAAA"
    with pytest.raises(pa.ArrowInvalid):
        pq.read_table(p)
    assert pqbloom.read_table(p).to_pydict() == {"x": [1, 2]}
    assert pqbloom.read_table(p).to_pandas()["x"].tolist() == [1, 2]
