"""Nested schemas: structs, lists and maps, read and write.

* every nested fixture of parquet-testing reads like pyarrow reads it (or as MANIFEST.md documents);
* the legacy LIST / MAP forms of the LogicalTypes backward-compatibility rules, built by rewriting a
  footer, read like pyarrow reads them;
* malformed levels (bad_data) raise CorruptFileError;
* hypothesis round trips of nested tables (depth up to 4, nulls at every level, empty lists) against
  pyarrow in both directions, with v1/v2 pages and page indexes;
* page boundaries at record boundaries, statistics and page indexes on nested leaves;
* Bloom filters and encryption on nested leaves (pyarrow as the oracle).

Spark (parquet-java) round trips of structs, arrays and maps: tests/integration/test_spark_nested.py.
"""

from __future__ import annotations

import datetime as dt
import decimal
import io
import json

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import pqbloom
from pqbloom.bloom import BloomFilter
from pqbloom.errors import CorruptFileError, SchemaError
from pqbloom.format import T, decode_prefix, encode
from pqbloom.schema import NestedField, make_field
from pqbloom.table import NestedColumn
from tests.conftest import K32, MASTER, fixture_file, run_pyarrow, values_equal
from tests.corpora import needs
from tests.paths import FIXTURES

DATA = FIXTURES / "data"
BAD = FIXTURES / "bad_data"
PT = T.Type
FRT = T.FieldRepetitionType
CT = T.ConvertedType

NESTED_FIXTURES = [
    "list_columns.parquet",
    "nested_lists.snappy.parquet",
    "nested_maps.snappy.parquet",
    "nested_structs.rust.parquet",
    "nonnullable.impala.parquet",
    "null_list.parquet",
    "nulls.snappy.parquet",
    "repeated_no_annotation.parquet",
    "repeated_primitive_no_list.parquet",
    "map_no_value.parquet",
    "datapage_v2.snappy.parquet",
]
BAD_LEVELS = ["ARROW-GH-41317.parquet", "ARROW-GH-41321.parquet", "ARROW-GH-45185.parquet",
              "ARROW-RS-GH-6229-LEVELS.parquet", "ARROW-GH-47662.parquet"]


def _strip_names(t: pa.DataType) -> pa.DataType:
    """The type with canonical child names (list ``item``, map ``key``/``value``), for comparing shapes."""
    if pa.types.is_map(t):
        return pa.map_(pa.field("key", _strip_names(t.key_type), False),
                       pa.field("value", _strip_names(t.item_type), t.item_field.nullable))
    if pa.types.is_list(t) or pa.types.is_large_list(t):
        return pa.list_(pa.field("item", _strip_names(t.value_type), t.value_field.nullable))
    if pa.types.is_struct(t):
        return pa.struct([pa.field(f.name, _strip_names(f.type), f.nullable) for f in t])
    return t


def assert_same_column(got: pa.ChunkedArray | pa.Array, exp: pa.ChunkedArray | pa.Array, what: str = "") -> None:
    """Same type up to child names, and the same values (NaN equal to NaN), as pyarrow's."""
    if isinstance(got, pa.ChunkedArray):
        got = got.combine_chunks()
    if isinstance(exp, pa.ChunkedArray):
        exp = exp.combine_chunks()
    assert _strip_names(got.type) == _strip_names(exp.type), (what, got.type, exp.type)
    try:
        cast = got.cast(exp.type)
    except pa.ArrowInvalid:  # a not-null child holds nulls under null parents: compare the values
        cast = got
    if cast.equals(exp):
        return
    assert values_equal(cast.to_pylist(), exp.to_pylist()), what


# =============================================================================================
# fixtures


@needs(FIXTURES)
@pytest.mark.parametrize("name", NESTED_FIXTURES)
def test_nested_fixture_matches_pyarrow(name):
    path = fixture_file(name)
    expected = pq.read_table(path)
    with pqbloom.ParquetFile(path) as pf:
        got = pf.read()
        assert got.column_names == expected.column_names
        assert got.num_rows == expected.num_rows
        arrow = got.to_arrow()
        for i, n in enumerate(expected.column_names):
            assert_same_column(arrow.column(n), expected.column(n), f"{name}: {n}")
            assert arrow.schema.field(i).nullable == expected.schema.field(i).nullable, n
        # the declared schema agrees with what was read
        assert pf.table_schema == got.schema
        # row groups one at a time and in batches give the same
        parts = [pf.read_row_group(i) for i in range(pf.num_row_groups)]
        assert pqbloom.Table.concat(parts).to_arrow().equals(arrow)
        batches = list(pf.iter_batches(batch_size=2))
        assert pqbloom.Table.concat(batches).to_arrow().equals(arrow)


def test_python_values_of_nested_fixtures():
    t = pqbloom.read_table(fixture_file("list_columns.parquet"))
    assert t.to_pydict() == {"int64_list": [[1, 2, 3], [None, 1], [4]],
                             "utf8_list": [["abc", "efg", "hij"], None, ["efg", None, "hij", "xyz"]]}
    t = pqbloom.read_table(fixture_file("nested_maps.snappy.parquet"))
    # maps as pyarrow gives them: lists of (key, value) tuples; as dicts when asked for
    assert t.column("a").to_pylist()[:3] == [[("a", [(1, True), (2, False)])], [("b", [(1, True)])], [("c", None)]]
    assert t.column("a").to_pylist(maps_as_pydicts="strict")[:3] == [{"a": {1: True, 2: False}}, {"b": {1: True}},
                                                                     {"c": None}]
    assert str(t.schema.field("a")) == "a: map<string, map<int32, bool not null>>"
    t = pqbloom.read_table(fixture_file("repeated_no_annotation.parquet"))
    # MANIFEST.md: ids 1..6, phones null/null/[]/[5555555555]/[1111111111 home]/[3 entries]
    assert t.column("id").to_pylist() == [1, 2, 3, 4, 5, 6]
    phones = t.column("phoneNumbers").to_pylist()
    assert phones[:4] == [None, None, {"phone": []}, {"phone": [{"number": 5555555555, "kind": None}]}]
    assert phones[4] == {"phone": [{"number": 1111111111, "kind": "home"}]}
    assert len(phones[5]["phone"]) == 3
    t = pqbloom.read_table(fixture_file("null_list.parquet"))
    assert t.to_pylist() == [{"emptylist": []}]


def test_incorrect_map_schema_documented_values():
    # an OPTIONAL map key (Presto/Trino style): pyarrow refuses the file; MANIFEST.md documents
    # 1 row {name: report, parent: another}
    t = pqbloom.read_table(fixture_file("incorrect_map_schema.parquet"))
    assert t.num_rows == 1
    assert t.to_pylist() == [{"my_map": [("parent", "another"), ("name", "report")]}]  # in the file's order
    assert t.to_pylist(maps_as_pydicts="lossy") == [{"my_map": {"name": "report", "parent": "another"}}]
    assert t.schema.field("my_map").kind == "map"


def test_large_string_map_metadata_only():
    # two 1 GiB keys: the metadata must parse; the data is left to the hardening work
    with pqbloom.ParquetFile(fixture_file("large_string_map.brotli.parquet")) as pf:
        assert pf.num_rows == 2
        assert str(pf.table_schema.field("arr")) == "arr: map<string, int32>"
        assert [d.dotted_path for d in pf.columns] == ["arr.key_value.key", "arr.key_value.value"]
        assert [d.max_repetition_level for d in pf.columns] == [1, 1]


def test_nested_structs_rust_deep_paths():
    path = fixture_file("nested_structs.rust.parquet")
    with pqbloom.ParquetFile(path) as pf:
        assert len(pf.columns) == 216
        leaf = pf.columns[5].dotted_path
        assert "." in leaf
        flat = pf.read(columns=[leaf])  # a struct leaf by its dotted path: a flat column
        assert flat.column_names == [leaf]
        expected = pq.read_table(path)
        while any(pa.types.is_struct(f.type) for f in expected.schema):
            expected = expected.flatten()
        assert_same_column(flat.column(leaf).to_arrow(), expected.column(leaf))


@needs(FIXTURES)
@pytest.mark.parametrize("name", BAD_LEVELS)
def test_bad_levels_raise_typed_errors(name):
    path = BAD / name
    if not path.exists():
        pytest.fail(f"{name} missing: tests read ../shared/fixtures")
    with pytest.raises(CorruptFileError):
        pqbloom.read_table(path)


@needs(FIXTURES)
def test_bad_levels_reasons():
    with pytest.raises(CorruptFileError, match="first repetition level is 1"):
        pqbloom.read_table(BAD / "ARROW-GH-45185.parquet")


# =============================================================================================
# selections


def test_selections_of_nested_columns():
    path = fixture_file("nonnullable.impala.parquet")
    with pqbloom.ParquetFile(path) as pf:
        whole = pf.read()
        top = [f.name for f in pf.table_schema]
        assert whole.column_names == top
        # a leaf inside structs only: flat, named by its path
        t = pf.read(columns=["nested_Struct.a"])
        assert t.column_names == ["nested_Struct.a"] and t.column(0).to_pylist() == [
            whole.column("nested_Struct").to_pylist()[0]["a"]]
        # a group inside structs only: that group, named by its path
        t = pf.read(columns=["nested_Struct.B"])
        assert t.column(0).to_pylist() == [whole.column("nested_Struct").to_pylist()[0]["B"]]
        # a leaf inside a list: its top-level field, pruned to that leaf (as pyarrow does)
        t = pf.read(columns=["nested_Struct.c.D.list.element.list.element.e"])
        assert t.column_names == ["nested_Struct"]
        d = t.column(0).to_pylist()[0]
        assert list(d) == ["c"] and list(d["c"]["D"][0][0]) == ["e"]
        exp = pq.ParquetFile(path).read(columns=["nested_Struct.c.D.list.element.list.element.e"])
        assert t.column(0).to_pylist() == exp.column(0).to_pylist()
        with pytest.raises(KeyError):
            pf.read(columns=["nested_Struct.nope"])


def test_repeated_leaf_selection_reads_top_level_list():
    with pqbloom.ParquetFile(fixture_file("list_columns.parquet")) as pf:
        t = pf.read(columns=["int64_list.list.item"])
        assert t.column_names == ["int64_list"]
        assert t.column(0).to_pylist() == [[1, 2, 3], [None, 1], [4]]


def test_filters_on_nested_leaf_paths():
    rows = [{"id": i, "s": None if i % 5 == 4 else {"a": i % 3, "b": f"x{i}"}, "tags": [i] * (i % 4)}
            for i in range(60)]
    schema = pqbloom.Schema.from_types({"id": "int64", "s": "struct<a: int64, b: string>", "tags": "list<int64>"})
    t = pqbloom.Table.from_pydict({k: [r[k] for r in rows] for k in rows[0]}, schema)
    buf = io.BytesIO()
    pqbloom.write_table(t, buf, row_group_size=16, data_page_size=64)
    data = buf.getvalue()
    got = pqbloom.read_table(data, filters=pqbloom.field("s.a") == 1)
    assert got.to_pylist() == [r for r in rows if r["s"] is not None and r["s"]["a"] == 1]
    got = pqbloom.read_table(data, columns=["tags", "s.b"], filters=pqbloom.field("s.b") == "x7")
    assert got.to_pylist() == [{"tags": [7, 7, 7], "s.b": "x7"}]
    batches = list(pqbloom.ParquetFile(data).iter_batches(5, filters=pqbloom.field("id") >= 50))
    assert pqbloom.Table.concat(batches).to_pylist() == rows[50:]


# =============================================================================================
# legacy list and map forms (LogicalTypes.md backward-compatibility rules)


def _rewrite_footer(data: bytes, schema: list, paths: list[list[str]]) -> bytes:
    """The same file with another schema (same levels) and leaf paths."""
    flen = int.from_bytes(data[-8:-4], "little")
    footer = data[-8 - flen:-8]
    md, _ = decode_prefix(T.FileMetaData, footer)
    md.schema = schema
    for rg in md.row_groups:
        for cc, p in zip(rg.columns, paths):
            cc.meta_data.path_in_schema = p
    new = encode(md)
    return data[:-8 - flen] + new + len(new).to_bytes(4, "little") + b"PAR1"


def _el(name, rep, *, type_=None, children=None, ct=None):
    el = T.SchemaElement(name=name, repetition_type=rep, type=type_, num_children=children, converted_type=ct)
    if ct == CT.UTF8:
        el.logicalType = T.LogicalType(STRING=T.StringType())
    return el


_INTS = [[1, 2], None, [], [3], [4, 5, 6]]
_STRUCTS = [[{"x": 1}, {"x": 2}], None, [], [{"x": 3}], [{"x": 4}, {"x": 5}, {"x": 6}]]
# form -> (type written, top-level not null, values, legacy schema (same levels), leaf paths)
LEGACY_LISTS = {
    # 2-level: the repeated field is a primitive
    "primitive": ("list<int32 not null>", False, _INTS,
                  [_el("a", FRT.OPTIONAL, children=1, ct=CT.LIST), _el("array", FRT.REPEATED, type_=PT.INT32)],
                  [["a", "array"]]),
    # repeated group named "array": it is the (struct) element
    "array_group": ("list<struct<x: int32 not null> not null>", False, _STRUCTS,
                    [_el("a", FRT.OPTIONAL, children=1, ct=CT.LIST), _el("array", FRT.REPEATED, children=1),
                     _el("x", FRT.REQUIRED, type_=PT.INT32)], [["a", "array", "x"]]),
    # repeated group named <list>_tuple: it is the element
    "tuple_group": ("list<struct<x: int32 not null> not null>", False, _STRUCTS,
                    [_el("a", FRT.OPTIONAL, children=1, ct=CT.LIST), _el("a_tuple", FRT.REPEATED, children=1),
                     _el("x", FRT.REQUIRED, type_=PT.INT32)], [["a", "a_tuple", "x"]]),
    # repeated group with two fields: it is the element
    "two_fields": ("list<struct<x: int32 not null, y: int32> not null>", False,
                   [[{"x": 1, "y": None}], None, [], [{"x": 3, "y": 4}, {"x": 5, "y": 6}]],
                   [_el("a", FRT.OPTIONAL, children=1, ct=CT.LIST), _el("element", FRT.REPEATED, children=2),
                    _el("x", FRT.REQUIRED, type_=PT.INT32), _el("y", FRT.OPTIONAL, type_=PT.INT32)],
                   [["a", "element", "x"], ["a", "element", "y"]]),
    # three-level with other names for the repeated group and the element
    "three_level": ("list<int32 not null>", False, _INTS,
                    [_el("a", FRT.OPTIONAL, children=1, ct=CT.LIST), _el("bag", FRT.REPEATED, children=1),
                     _el("item", FRT.REQUIRED, type_=PT.INT32)], [["a", "bag", "item"]]),
    # parquet-testing's old_list_structure: a LIST of a LIST-annotated repeated group "array"
    "old_list_structure": ("list<list<int32 not null> not null>", True, [[[1, 2], [3, 4]], [], [[], [5]]],
                           [_el("a", FRT.REQUIRED, children=1, ct=CT.LIST),
                            _el("array", FRT.REPEATED, children=1, ct=CT.LIST),
                            _el("array", FRT.REPEATED, type_=PT.INT32)], [["a", "array", "array"]]),
}


@pytest.mark.parametrize("form", sorted(LEGACY_LISTS))
def test_legacy_list_forms_read_like_pyarrow(form):
    spec, not_null, values, elements, paths = LEGACY_LISTS[form]
    schema = pqbloom.Schema.from_types({"a": spec}, not_null=["a"] if not_null else [])
    t = pqbloom.Table.from_pydict({"a": values}, schema)
    buf = io.BytesIO()
    pqbloom.write_table(t, buf, write_page_index=False)
    legacy = [T.SchemaElement(name="schema", num_children=1)] + elements
    data = _rewrite_footer(buf.getvalue(), legacy, paths)
    expected = pq.read_table(io.BytesIO(data))
    got = pqbloom.read_table(data)
    assert_same_column(got.column("a").to_arrow(), expected.column("a"), form)
    assert got.column("a").to_pylist() == values


def test_legacy_map_key_value_annotation():
    values = [{"a": 1}, None, {}, {"b": 2, "c": 3}]
    t = pqbloom.Table.from_pydict({"m": values}, pqbloom.Schema.from_types({"m": "map<string, int32 not null>"}))
    buf = io.BytesIO()
    pqbloom.write_table(t, buf, write_page_index=False)
    schema = [T.SchemaElement(name="schema", num_children=1),
              _el("m", FRT.OPTIONAL, children=1, ct=CT.MAP_KEY_VALUE),
              _el("map", FRT.REPEATED, children=2),
              _el("key", FRT.REQUIRED, type_=PT.BYTE_ARRAY, ct=CT.UTF8),
              _el("value", FRT.REQUIRED, type_=PT.INT32)]
    data = _rewrite_footer(buf.getvalue(), schema, [["m", "map", "key"], ["m", "map", "value"]])
    got = pqbloom.read_table(data)
    assert got.column("m").to_pylist(maps_as_pydicts="strict") == values
    assert got.column("m").to_pylist() == pq.read_table(io.BytesIO(data)).column("m").to_pylist()
    assert_same_column(got.column("m").to_arrow(), pq.read_table(io.BytesIO(data)).column("m"))


def test_unannotated_repeated_group_is_required_list_of_required_structs():
    path = fixture_file("repeated_no_annotation.parquet")
    f = pqbloom.ParquetFile(path).table_schema.field("phoneNumbers")
    assert str(f) == "phoneNumbers: struct<phone: list<struct<number: int64 not null, kind: string> not null> not null>"


# =============================================================================================
# the type model


def test_type_strings():
    f = make_field("x", "struct<a: list<int64 not null>, `b c`: map<string, decimal(10, 2)> not null, "
                        "t: timestamp[us, UTC]>")
    assert isinstance(f, NestedField) and f.kind == "struct"
    assert [c.name for c in f.children] == ["a", "b c", "t"]
    assert f.child("b c").kind == "map" and not f.child("b c").nullable
    assert not f.child("b c").children[0].nullable  # map keys are never null
    assert make_field("x", f.type_name) == f
    assert make_field("y", "array<string>") == make_field("y", "list<string>")
    for bad in ("list<int64, int32>", "map<string>", "struct<>", "struct<int64>", "list<nope>", "list<int64"):
        with pytest.raises(SchemaError):
            make_field("z", bad)
    s = pqbloom.Schema.from_types({"id": "int64", "tags": "list<string>", "m": "map<string, int64>"})
    assert [d.dotted_path for d in s.leaves()] == ["id", "tags.list.element", "m.key_value.key", "m.key_value.value"]
    assert [(d.max_definition_level, d.max_repetition_level) for d in s.leaves()] == [(1, 0), (3, 1), (2, 1), (3, 1)]


def test_python_input_and_inference():
    data = {"l": [[1, 2], None, [], [None, 3]], "s": [{"x": 1, "y": "a"}, None, {"x": None}, {"y": "q"}],
            "ll": [[[1], []], None, [[2, 3], None], []]}
    t = pqbloom.Table.from_pydict(data)
    assert [str(f) for f in t.schema] == ["l: list<int64>", "s: struct<x: int64, y: string>", "ll: list<list<int64>>"]
    assert t.to_pydict() == {"l": data["l"], "s": [{"x": 1, "y": "a"}, None, {"x": None, "y": None},
                                                   {"x": None, "y": "q"}], "ll": data["ll"]}
    # maps need a schema; dicts and lists of pairs are both accepted
    m = pqbloom.Table.from_pydict({"m": [{"a": 1}, [("b", 2), ("c", None)], None]},
                                  {"m": "map<string, int64>"})
    assert m.column("m").to_pylist() == [[("a", 1)], [("b", 2), ("c", None)], None]
    with pytest.raises(SchemaError, match="not null"):
        pqbloom.Table.from_pydict({"l": [[1, None]]}, {"l": "list<int64 not null>"})
    with pytest.raises(SchemaError, match="not null"):
        pqbloom.Table.from_pydict({"s": [{"a": None}]}, {"s": "struct<a: int64 not null>"})
    # a not-null member under a null struct is fine
    ok = pqbloom.Table.from_pydict({"s": [None, {"a": 1}]}, {"s": "struct<a: int64 not null>"})
    assert ok.column("s").to_pylist() == [None, {"a": 1}]
    with pytest.raises(SchemaError, match="map keys"):
        pqbloom.Table.from_pydict({"m": [[(None, 1)]]}, {"m": "map<string, int64>"})
    with pytest.raises(SchemaError):
        pqbloom.Table.from_pydict({"l": [[1], 2]})


def test_nested_column_operations():
    t = pqbloom.Table.from_pydict({"l": [[1, 2], None, [], [3]], "s": [{"a": [1]}, None, {"a": None}, {"a": []}]})
    rows = t.to_pylist()
    assert t.slice(1, 2).to_pylist() == rows[1:3]
    assert t.take(np.array([3, 0, 0, 1])).to_pylist() == [rows[3], rows[0], rows[0], rows[1]]
    both = pqbloom.Table.concat([t, t.slice(2, 2)])
    assert both.to_pylist() == rows + rows[2:4]
    assert both.equals(pqbloom.Table.from_arrow(both.to_arrow()))
    df = t.to_pandas()
    assert df["l"].tolist() == [[1, 2], None, [], [3]]
    col = t.column("l")
    assert isinstance(col, NestedColumn) and col.null_count == 1
    # null list slots backed by elements (allowed in Arrow) are dropped
    arr = pa.ListArray.from_arrays(pa.array([0, 2, 4, 5], pa.int32()), pa.array([1, 2, 3, 4, 5]),
                                   mask=pa.array([False, True, False]))
    got = pqbloom.Table.from_arrow(pa.table({"x": arr}))
    assert got.column("x").to_pylist() == [[1, 2], None, [5]]
    buf = io.BytesIO()
    pqbloom.write_table(got, buf)
    assert pq.read_table(io.BytesIO(buf.getvalue())).column("x").to_pylist() == [[1, 2], None, [5]]


def test_writer_schema_conformance():
    schema = pqbloom.Schema.from_types({"l": "list<int64 not null>"})
    with pytest.raises(SchemaError):
        pqbloom.write_table({"l": [[1, None]]}, io.BytesIO(), schema=schema)
    with pytest.raises(SchemaError):
        with pqbloom.ParquetWriter(io.BytesIO(), schema) as w:
            w.write_table(pqbloom.Table.from_pydict({"l": [{"a": 1}]}))
    # a pyarrow table whose list type names its child "item" matches list<int64>
    buf = io.BytesIO()
    with pqbloom.ParquetWriter(buf, schema) as w:
        w.write_table(pa.table({"l": pa.array([[1], [2, 3]], pa.list_(pa.field("item", pa.int64(), False)))}))
    assert pqbloom.read_table(buf.getvalue()).column("l").to_pylist() == [[1], [2, 3]]


# =============================================================================================
# hypothesis round trips against pyarrow

LEAF_TYPES = [pa.int64(), pa.int32(), pa.string(), pa.float64(), pa.bool_(), pa.binary(), pa.date32(),
              pa.timestamp("us"), pa.decimal128(9, 2)]


def arrow_types(depth: int = 4) -> st.SearchStrategy:
    leaves = st.sampled_from(LEAF_TYPES)

    def extend(children: st.SearchStrategy) -> st.SearchStrategy:
        fld = st.tuples(children, st.booleans())
        lists = fld.map(lambda c: pa.list_(pa.field("element", c[0], c[1])))
        structs = st.lists(fld, min_size=1, max_size=3).map(
            lambda cs: pa.struct([pa.field(f"f{i}", t, n) for i, (t, n) in enumerate(cs)]))
        maps = st.tuples(st.sampled_from([pa.int64(), pa.string()]), fld).map(
            lambda kv: pa.map_(kv[0], pa.field("value", kv[1][0], kv[1][1])))
        return st.one_of(lists, structs, maps)

    return st.recursive(leaves, extend, max_leaves=6).filter(lambda t: _depth(t) <= depth)


def _depth(t: pa.DataType) -> int:
    if pa.types.is_map(t):
        return 1 + max(_depth(t.key_type), _depth(t.item_type))
    if pa.types.is_list(t):
        return 1 + _depth(t.value_type)
    if pa.types.is_struct(t):
        return 1 + max(_depth(f.type) for f in t)
    return 0


def values_for(draw, t: pa.DataType, nullable: bool, n: int, keys_unique=False):
    out = []
    for _ in range(n):
        if nullable and draw(st.integers(0, 4)) == 0:
            out.append(None)
            continue
        out.append(value_for(draw, t))
    return out


def value_for(draw, t: pa.DataType):
    if pa.types.is_map(t):
        k = draw(st.integers(0, 3))
        keys = draw(st.lists(st.integers(0, 50) if pa.types.is_int64(t.key_type) else st.text(max_size=3),
                             min_size=k, max_size=k, unique=True))
        vals = values_for(draw, t.item_type, t.item_field.nullable, k)
        return list(zip(keys, vals))
    if pa.types.is_list(t):
        k = draw(st.integers(0, 4))
        return values_for(draw, t.value_type, t.value_field.nullable, k)
    if pa.types.is_struct(t):
        return {f.name: values_for(draw, f.type, f.nullable, 1)[0] for f in t}
    if pa.types.is_int64(t):
        return draw(st.integers(-(2**63), 2**63 - 1))
    if pa.types.is_int32(t):
        return draw(st.integers(-(2**31), 2**31 - 1))
    if pa.types.is_string(t):
        return draw(st.text(max_size=5))
    if pa.types.is_binary(t):
        return draw(st.binary(max_size=5))
    if pa.types.is_float64(t):
        return draw(st.floats(allow_nan=False))
    if pa.types.is_boolean(t):
        return draw(st.booleans())
    if pa.types.is_date32(t):
        return dt.date(2000, 1, 1) + dt.timedelta(days=draw(st.integers(-5000, 5000)))
    if pa.types.is_timestamp(t):
        return dt.datetime(2000, 1, 1) + dt.timedelta(microseconds=draw(st.integers(-10**12, 10**12)))
    if pa.types.is_decimal(t):
        return decimal.Decimal(draw(st.integers(-(10**9) + 1, 10**9 - 1))).scaleb(-2)
    raise AssertionError(t)


@st.composite
def nested_tables(draw):
    ncols = draw(st.integers(1, 3))
    n = draw(st.integers(0, 40))
    cols, fields = [], []
    for i in range(ncols):
        t = draw(arrow_types())
        nullable = draw(st.booleans())
        vals = values_for(draw, t, nullable, n)
        cols.append(pa.array(vals, type=t))
        fields.append(pa.field(f"c{i}", t, nullable))
    return pa.Table.from_arrays(cols, schema=pa.schema(fields))


WRITE_OPTIONS = st.fixed_dictionaries({
    "data_page_version": st.sampled_from(["1.0", "2.0"]),
    "data_page_size": st.sampled_from([64, 1024, 1 << 20]),
    "row_group_size": st.sampled_from([7, 1000]),
    "use_dictionary": st.booleans(),
    "compression": st.sampled_from(["snappy", "none", "zstd"]),
})
#: the unit tier's examples of the two round trips below; tests/integration/test_properties_thorough.py runs them
#: with 120 each
HYP = settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])


@HYP
@given(table=nested_tables(), opts=WRITE_OPTIONS)
def test_roundtrip_pqbloom_writes_pyarrow_reads(table, opts):
    buf = io.BytesIO()
    pqbloom.write_table(table, buf, **opts)
    data = buf.getvalue()
    got = pq.read_table(io.BytesIO(data))
    assert got.num_rows == table.num_rows
    for n in table.column_names:
        assert_same_column(got.column(n), table.column(n), n)
    # and pqbloom reads its own file back the same
    ours = pqbloom.read_table(data).to_arrow()
    for n in table.column_names:
        assert_same_column(ours.column(n), table.column(n), n)
    _check_pages_start_records(data)


@HYP
@given(table=nested_tables(), version=st.sampled_from(["1.0", "2.0"]), page=st.sampled_from([64, 1 << 20]),
       rg=st.sampled_from([5, 1000]), dictionary=st.booleans())
def test_roundtrip_pyarrow_writes_pqbloom_reads(table, version, page, rg, dictionary):
    buf = io.BytesIO()
    pq.write_table(table, buf, data_page_version=version, data_page_size=page, row_group_size=rg,
                   use_dictionary=dictionary, write_page_index=True)
    got = pqbloom.read_table(buf.getvalue())
    assert got.num_rows == table.num_rows
    arrow = got.to_arrow()
    for n in table.column_names:
        assert_same_column(arrow.column(n), table.column(n), n)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(table=nested_tables())
def test_roundtrip_python_values(table):
    # Python values in, Python values out (maps as dicts), through pqbloom alone
    schema = pqbloom.Table.from_arrow(table).schema
    py = pqbloom.Table.from_arrow(table).to_pydict()
    t = pqbloom.Table.from_pydict(py, schema)
    buf = io.BytesIO()
    pqbloom.write_table(t, buf, data_page_size=128)
    back = pqbloom.read_table(buf.getvalue())
    assert back.schema == schema
    assert values_equal(back.to_pydict(), py)


def _check_pages_start_records(data: bytes) -> None:
    """Every data page of every repeated leaf starts a record, and the OffsetIndex says which."""
    with pqbloom.ParquetFile(data) as pf:
        for rg in range(pf.num_row_groups):
            for d in pf.columns:
                if d.max_repetition_level == 0:
                    continue
                meta = pf.chunk_metadata(rg, d)
                if not meta.num_values:
                    continue
                start, length = pf.chunk_range(meta, rg, d)
                buf = pf.range_reader.read(start, length)
                firsts = []
                rows = 0
                for _, _, (_, reps), _ in pf.iter_pages(buf, start, meta, rg, d, levels=True):
                    assert reps[0] == 0, "a page starts inside a record"
                    firsts.append(rows)
                    rows += int(np.count_nonzero(reps == 0))
                cc = pf.thrift_metadata.row_groups[rg].columns[d.index]
                if cc.offset_index_offset is not None:
                    oi, _ = decode_prefix(T.OffsetIndex, pf.range_reader.read(cc.offset_index_offset,
                                                                          cc.offset_index_length))
                    assert [p.first_row_index for p in oi.page_locations] == firsts


# =============================================================================================
# pages, statistics, page indexes on nested leaves


def _check_page_headers(data: bytes, version: str) -> None:
    """num_values counts level entries, v2 num_rows counts records, num_nulls the entries below max_def;
    level sections have the lengths the v1 prefixes / v2 header fields say."""
    from pqbloom import compression
    from pqbloom.encodings import bit_width_of, decode_levels_v1, decode_rle_bitpacked
    from pqbloom.format import decode_at

    with pqbloom.ParquetFile(data) as pf:
        for d in pf.columns:
            meta = pf.chunk_metadata(0, d)
            start, length = pf.chunk_range(meta, 0, d)
            buf = data[start:start + length]
            pos, rows, entries = 0, 0, 0
            while pos < len(buf):
                h, pos = decode_at(T.PageHeader, buf, pos)
                body = buf[pos:pos + h.compressed_page_size]
                pos += h.compressed_page_size
                if h.type == T.PageType.DICTIONARY_PAGE:
                    continue
                rw, dw = bit_width_of(d.max_repetition_level), bit_width_of(d.max_definition_level)
                if version == "2.0":
                    assert h.type == T.PageType.DATA_PAGE_V2
                    v2 = h.data_page_header_v2
                    n, rl, dl = v2.num_values, v2.repetition_levels_byte_length, v2.definition_levels_byte_length
                    reps = decode_rle_bitpacked(body[:rl], rw, n) if rw else np.zeros(n, np.int32)
                    defs = decode_rle_bitpacked(body[rl:rl + dl], dw, n) if dw else np.zeros(n, np.int32)
                    assert v2.num_rows == int(np.count_nonzero(reps == 0))
                    assert v2.num_nulls == int(np.count_nonzero(defs < d.max_definition_level))
                else:
                    assert h.type == T.PageType.DATA_PAGE
                    n = h.data_page_header.num_values
                    raw = compression.decompress(compression.codec_by_id(meta.codec), body, h.uncompressed_page_size)
                    p = 0
                    reps = np.zeros(n, np.int32)
                    if rw:
                        reps, p = decode_levels_v1(raw, rw, n)
                    if dw:
                        decode_levels_v1(raw[p:], dw, n)
                rows += int(np.count_nonzero(reps == 0))
                entries += n
            assert rows == pf.thrift_metadata.row_groups[0].num_rows and entries == meta.num_values



@pytest.mark.parametrize("version", ["1.0", "2.0"])
def test_nested_pages_statistics_and_page_index(version):
    rng = np.random.default_rng(3)
    n = 5000
    lens = rng.integers(0, 6, n)
    tags = [None if i % 17 == 0 else [int(x) if x % 11 else None for x in rng.integers(0, 1000, k)]
            for i, k in enumerate(lens)]
    structs = [None if i % 13 == 0 else {"a": i, "b": None if i % 7 == 0 else f"s{i % 50}"} for i in range(n)]
    t = pqbloom.Table.from_pydict({"tags": tags, "s": structs})
    buf = io.BytesIO()
    pqbloom.write_table(t, buf, data_page_size=2000, data_page_version=version, use_dictionary=False)
    data = buf.getvalue()
    _check_pages_start_records(data)
    _check_page_headers(data, version)
    pmd = pq.ParquetFile(io.BytesIO(data)).metadata
    flat_elems = [x for v in tags if v for x in v]
    stats = {pmd.row_group(0).column(j).path_in_schema: pmd.row_group(0).column(j).statistics
             for j in range(pmd.num_columns)}
    st_tags = stats["tags.list.element"]
    assert st_tags.min == min(x for x in flat_elems if x is not None)
    assert st_tags.max == max(x for x in flat_elems if x is not None)
    # nulls at the leaf: null elements, null lists and empty lists (level entries below max)
    assert st_tags.null_count == sum(x is None for x in flat_elems) + sum(1 for v in tags if not v)
    assert stats["s.a"].null_count == sum(s is None for s in structs)
    assert stats["s.b"].null_count == sum(s is None or s["b"] is None for s in structs)
    assert pmd.row_group(0).column(0).num_values == len(flat_elems) + sum(1 for v in tags if not v)
    with pqbloom.ParquetFile(data) as pf:
        cc = pf.thrift_metadata.row_groups[0].columns[0]
        ci, _ = decode_prefix(T.ColumnIndex, pf.range_reader.read(cc.column_index_offset, cc.column_index_length))
        oi, _ = decode_prefix(T.OffsetIndex, pf.range_reader.read(cc.offset_index_offset, cc.offset_index_length))
        assert len(ci.null_pages) == len(oi.page_locations) > 3
        # page null counts add up to the chunk's
        assert sum(ci.null_counts) == st_tags.null_count
    assert pq.read_table(io.BytesIO(data)).to_pylist() == t.to_pylist()


# =============================================================================================
# Bloom filters on nested leaves


def test_bloom_filter_on_nested_leaves_with_pyarrow(tmp_path):
    n = 3000
    t = pa.table({"tags": pa.array([[f"t{i}", f"u{i}"] if i % 9 else [] for i in range(n)]),
                  "s": pa.array([{"x": i * 2, "y": f"y{i}"} for i in range(n)])})
    opts = {"tags.list.element": {"ndv": 8000}, "s.x": {"ndv": 8000}}
    ours, theirs = tmp_path / "ours.parquet", tmp_path / "theirs.parquet"
    pqbloom.write_table(t, str(ours), bloom_filter_options=opts, use_dictionary=False)
    pq.write_table(t, theirs, bloom_filter_options=opts, use_dictionary=False)
    # pyarrow reads our file and sees the filters where our footer puts them
    assert pq.read_table(ours).equals(t)
    pmd = pq.ParquetFile(ours).metadata
    offsets = {pmd.row_group(0).column(j).path_in_schema: pmd.row_group(0).column(j).bloom_filter_offset
               for j in range(pmd.num_columns)}
    assert offsets["tags.list.element"] is not None and offsets["s.x"] is not None and offsets["s.y"] is None
    with pqbloom.ParquetFile(str(ours)) as a, pqbloom.ParquetFile(str(theirs)) as b:
        for col, ptype, vals in (("tags.list.element", PT.BYTE_ARRAY, [f"t{i}" for i in range(1, n, 9)]),
                                 ("s.x", PT.INT64, [i * 2 for i in range(n)])):
            mine, pa_bf = a.bloom_filter(0, col), b.bloom_filter(0, col)
            assert mine.num_bytes == pa_bf.num_bytes and mine.bitset() == pa_bf.bitset(), col
            assert all(a.bloom_filter_might_contain(0, col, v) for v in vals[:50])
            assert pa_bf.might_contain_many(vals, ptype).all()
        misses = sum(a.bloom_filter_might_contain(0, "s.x", 2 * i + 1) for i in range(2000))
        assert misses < 100
    # a whole nested field named in the options gets filters on all its (non-boolean) leaves
    p2 = tmp_path / "whole.parquet"
    pqbloom.write_table(t, str(p2), bloom_filter_options={"s": True})
    with pqbloom.ParquetFile(str(p2)) as pf:
        assert pf.bloom_filter(0, "s.x") is not None and pf.bloom_filter(0, "s.y") is not None
        assert pf.bloom_filter(0, "tags.list.element") is None
        bf = pf.bloom_filter(0, "s.y")
        assert bf.might_contain_many([f"y{i}" for i in range(n)], PT.BYTE_ARRAY).all()
        rebuilt = BloomFilter(bf.num_bytes)
        rebuilt.insert([f"y{i}" for i in range(n)], PT.BYTE_ARRAY)
        assert rebuilt.bitset() == bf.bitset()


# =============================================================================================
# encryption on nested leaves


def test_encrypted_nested_leaves_round_trip(tmp_path):
    from pqbloom import FileDecryptionProperties, FileEncryptionProperties
    from pqbloom.errors import KeyNotFoundError

    t = pqbloom.Table.from_pydict({"id": list(range(100)), "tags": [[i, i + 1] if i % 3 else None for i in range(100)],
                                   "s": [{"a": i, "b": str(i)} for i in range(100)]})
    footer, k1, k2 = b"F" * 16, b"1" * 16, b"2" * 32
    for version in ("1.0", "2.0"):
        path = tmp_path / f"enc{version}.parquet"
        props = FileEncryptionProperties(footer, column_keys={"tags.list.element": k1, "s.b": k2})
        pqbloom.write_table(t, str(path), encryption_properties=props, data_page_version=version,
                            bloom_filter_options={"tags.list.element": True}, data_page_size=100)
        dec = FileDecryptionProperties(footer_key=footer, column_keys={"tags.list.element": k1, "s.b": k2})
        with pqbloom.ParquetFile(str(path), decryption_properties=dec) as pf:
            assert pf.read().to_pylist() == t.to_pylist()
            assert pf.bloom_filter_might_contain(0, "tags.list.element", 5)
            assert pf.decryption.column_encrypted(pf.column_descriptor("tags.list.element"))
            assert not pf.decryption.column_encrypted(pf.column_descriptor("s.a"))
        # without the tags key: the other columns still read; tags fails with the typed error
        part = FileDecryptionProperties(footer_key=footer, column_keys={"s.b": k2})
        with pqbloom.ParquetFile(str(path), decryption_properties=part) as pf:
            assert pf.read(columns=["id", "s"]).to_pylist() == t.select(["id", "s"]).to_pylist()
            with pytest.raises(KeyNotFoundError):
                pf.read(columns=["tags"])


def test_aes256_fixture_nested_leaf_with_column_key():
    from pqbloom import FileDecryptionProperties

    keys = K32
    path = fixture_file("aes256/encrypt_columns_and_footer.parquet.encrypted")
    props = FileDecryptionProperties(footer_key=keys["kf"], column_keys={"int64_field.list.element": keys["kc7"],
                                                                         "double_field": keys["kc1"]})
    t = pqbloom.read_table(path, columns=["int64_field", "double_field"], decryption_properties=props)
    assert t.column("int64_field").to_pylist() == [[2 * i * 10**12, (2 * i + 1) * 10**12] for i in range(50)]
    assert str(t.schema.field("int64_field")) == "int64_field: list<int64 not null>"


def test_pqbloom_nested_column_keys_to_pyarrow(tmp_path):
    from pqbloom import CryptoFactory, EncryptionConfiguration, InMemoryKms, KmsConnectionConfig

    t = pqbloom.Table.from_pydict({"id": list(range(50)), "tags": [[f"t{i}"] * (i % 3) for i in range(50)],
                                   "m": [{"k": i} for i in range(50)]}, {"id": "int64", "tags": "list<string>",
                                                                          "m": "map<string, int64>"})
    factory = CryptoFactory(lambda config: InMemoryKms(MASTER))
    config = EncryptionConfiguration(footer_key="kf", column_keys={"kc1": ["tags.list.element"],
                                                                   "kc2": ["m.key_value.value"]})
    path = tmp_path / "nested_keys.parquet"
    props = factory.file_encryption_properties(KmsConnectionConfig(), config, file_path=path)
    pqbloom.write_table(t, path, encryption_properties=props, data_page_version="2.0")
    out = run_pyarrow(
        """
        factory = pe.CryptoFactory(lambda config: Kms(config))
        props = factory.file_decryption_properties(pe.KmsConnectionConfig(), pe.DecryptionConfiguration())
        t = pq.read_table(sys.argv[1], decryption_properties=props)
        print(json.dumps({"id": t.column("id").to_pylist(), "tags": t.column("tags").to_pylist(),
                          "m": [dict(v) for v in t.column("m").to_pylist()]}))
        """,
        str(path),
    )
    got = json.loads(out)
    assert got == {"id": list(range(50)), "tags": [[f"t{i}"] * (i % 3) for i in range(50)],
                   "m": [{"k": i} for i in range(50)]}


# =============================================================================================
# assembly paths: the innermost-list offsets without a running count, and per-page scatter


def _list_levels(records):
    """Levels of ``optional list<optional int64>`` records by the Dremel rules (def 0 null list, 1 empty
    list, 2 null element, 3 value; rep 0 starts a record), and the dense values."""
    defs, reps, vals = [], [], []
    for rec in records:
        if rec is None or not rec:
            defs.append(0 if rec is None else 1)
            reps.append(0)
            continue
        for i, v in enumerate(rec):
            defs.append(2 if v is None else 3)
            reps.append(0 if i == 0 else 1)
            if v is not None:
                vals.append(v)
    return np.array(defs, np.int8), np.array(reps, np.int8), np.array(vals, np.int64)


def _list_node():
    buf = io.BytesIO()
    pq.write_table(pa.table({"tags": pa.array([[1]], pa.list_(pa.int64()))}), buf)
    with pqbloom.ParquetFile(buf.getvalue()) as pf:
        sel = pf.select_columns(None)[0]
    return sel.node, sel.leaves[0]


LIST_RECORDS = st.lists(st.one_of(st.none(), st.lists(st.one_of(st.none(), st.integers(-5, 5)), max_size=5)),
                        min_size=1, max_size=60)


@settings(max_examples=150, deadline=None)
@given(records=LIST_RECORDS, block=st.integers(1, 70))
def test_list_assembly_matches_dremel_rules(records, block):
    """Assembly from dense values, and from values at the head of a room of one slot per level
    entry (nulls spread within it, by blocks of any size)."""
    from pqbloom.file import levels
    from pqbloom.file.levels import LeafLevels, assemble

    node, desc = _list_node()
    d, r, vals = _list_levels(records)
    col = assemble(node, {desc.index: LeafLevels(vals, d, r, len(d))})
    assert col.to_pylist() == records
    room = np.full(len(d), -99, np.int64)  # garbage past the values: every slot is written
    room[:len(vals)] = vals
    saved, levels._BLOCK = levels._BLOCK, block
    try:
        col = assemble(node, {desc.index: LeafLevels(room[:len(vals)], d, r, len(d), room=room)})
    finally:
        levels._BLOCK = saved
    assert col.to_pylist() == records


@settings(max_examples=150, deadline=None)
@given(records=LIST_RECORDS, data=st.data())
def test_list_assembly_paths_agree_on_any_levels(records, data):
    """Levels no valid writer produces (a repetition continuing a list without an element, elements
    before the first record) give what the numpy reference of the offsets kernel gives, or a typed
    error from both: never anything else."""
    from pqbloom.file import levels
    from pqbloom.kernels.reference import levels as level_reference

    node, desc = _list_node()
    d, r, vals = _list_levels(records)
    n = len(d)
    i = data.draw(st.integers(0, n - 1))
    d[i] = data.draw(st.integers(0, 3))
    r[i] = data.draw(st.integers(0, 1))
    vals = np.arange(int(np.count_nonzero(d == 3)), dtype=np.int64)

    def run():
        try:
            col = levels.assemble(node, {desc.index: levels.LeafLevels(vals, d, r, n)})
        except CorruptFileError:
            return "corrupt"
        return col.to_pylist(), None if col.offsets is None else col.offsets.tolist()

    fast = run()
    with pytest.MonkeyPatch.context() as m:
        m.setattr(levels.level_kernels, "list_offsets", level_reference.list_offsets)
        general = run()
    assert fast == general


def _nulls_everywhere(rng, t, n):
    """A pyarrow array of type ``t`` with nulls and empty lists at every level."""
    if pa.types.is_list(t):
        lens = rng.integers(0, 5, n)
        offsets = np.concatenate([[0], np.cumsum(lens)]).astype(np.int32)
        child = _nulls_everywhere(rng, t.value_type, int(offsets[-1]))
        return pa.ListArray.from_arrays(pa.array(offsets), child, mask=pa.array(rng.random(n) < 0.1))
    if pa.types.is_struct(t):
        kids = [_nulls_everywhere(rng, f.type, n) for f in t]
        return pa.StructArray.from_arrays(kids, names=[f.name for f in t], mask=pa.array(rng.random(n) < 0.1))
    if pa.types.is_string(t):
        return pa.array([f"s{i % 13}" for i in range(n)], mask=rng.random(n) < 0.1)
    return pa.array(rng.integers(-1000, 1000, n), t, mask=rng.random(n) < 0.1)


ASSEMBLY_SHAPES = {
    "list": pa.list_(pa.int64()),
    "list_of_lists": pa.list_(pa.list_(pa.int64())),
    "struct_of_list": pa.struct([("a", pa.list_(pa.int64())), ("b", pa.int32())]),
    "list_of_structs": pa.list_(pa.struct([("x", pa.int64()), ("y", pa.list_(pa.string()))])),
    "list_of_lists_of_lists": pa.list_(pa.list_(pa.list_(pa.int32()))),
}


@pytest.mark.parametrize("shape", sorted(ASSEMBLY_SHAPES))
@pytest.mark.parametrize("version", ["1.0", "2.0"])
@pytest.mark.parametrize("dictionary", [False, True])
def test_assembly_shapes_many_pages_match_pyarrow(shape, version, dictionary):
    rng = np.random.default_rng(len(shape) * 7 + (version == "2.0") + 2 * dictionary)
    n = 3000
    table = pa.table({"c": _nulls_everywhere(rng, ASSEMBLY_SHAPES[shape], n), "id": np.arange(n)})
    buf = io.BytesIO()
    pq.write_table(table, buf, data_page_version=version, data_page_size=512, use_dictionary=dictionary,
                   row_group_size=2000)
    data = buf.getvalue()
    md = pq.ParquetFile(io.BytesIO(data)).metadata
    assert md.num_row_groups == 2
    got = pqbloom.read_table(data).to_arrow()
    assert_same_column(got.column("c"), pq.read_table(io.BytesIO(data)).column("c"), shape)


def test_writer_skips_member_data_under_null_structs():
    # Arrow keeps member data under null struct slots (here non-empty lists and strings); the levels
    # must hide it as pyarrow's writer does, at the top level and inside lists
    lists = pa.array([[1, 2], [3], [4, 5, 6], None, [7], []], pa.list_(pa.int64()))
    names = pa.array(["a", "b", None, "d", "e", "f"])
    st_ = pa.StructArray.from_arrays([lists, names], names=["l", "s"],
                                     mask=pa.array([False, True, False, True, False, False]))
    outer = pa.ListArray.from_arrays(pa.array([0, 2, 2, 5, 6], pa.int32()), st_,
                                     mask=pa.array([False, False, False, True]))
    for t in (pa.table({"st": st_, "id": np.arange(6)}), pa.table({"outer": outer})):
        for version in ("1.0", "2.0"):
            buf = io.BytesIO()
            pqbloom.write_table(pqbloom.Table.from_arrow(t), buf, data_page_version=version)
            assert pq.read_table(io.BytesIO(buf.getvalue())).to_pylist() == t.to_pylist()
            assert pqbloom.read_table(buf.getvalue()).to_pylist() == t.to_pylist()
