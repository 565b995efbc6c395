"""Types and shapes that real files have (issue #15, defects 4, 6, 9, 11), against pyarrow and DuckDB.

Rows without columns, decimals wider than declared or than 38 digits, empty groups, annotations that
must survive a read-then-write round trip (VARIANT, legacy converted types, INTERVAL, UUID, JSON...),
pyarrow's extension types, and the Python values of timestamps and times. The standing corpus test
(``test_real_world.py``) covers every file; these pin each defect down on its own.
"""

from __future__ import annotations

import datetime as dt
import decimal
import io

import duckdb
import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import pqbloom
from pqbloom.errors import CorruptFileError, SchemaError, TimestampRangeError, UnsupportedError
from pqbloom.format import T
from pqbloom.schema import Schema, make_field, nested_field
from pqbloom.table import Table
from tests.corpora import needs

from .real_world_support import CORPUS, annotations, compare_arrow
from .test_hardening import rewrite_footer

DUCK = CORPUS / "duckdb-duckdb" / "data" / "parquet-testing"
DOTNET = CORPUS / "aloneguid-parquet-dotnet" / "src" / "Parquet.Test" / "data"


def _duck_types(path) -> list[tuple[str, str]]:
    return [(r[0], r[1]) for r in duckdb.connect().execute("DESCRIBE SELECT * FROM read_parquet(?)",
                                                            [str(path)]).fetchall()]


def _duck_rows(path) -> list[tuple]:
    return duckdb.connect().execute("SELECT * FROM read_parquet(?)", [str(path)]).fetchall()


def _pyarrow_bytes(table: pa.Table, **opts) -> bytes:
    buf = io.BytesIO()
    pq.write_table(table, buf, **opts)
    return buf.getvalue()


# -- defect 4: rows without columns --------------------------------------------------------------------
@needs(CORPUS)
@pytest.mark.parametrize("name", ["no_columns.parquet", "no_columns_new.parquet"])
def test_file_with_rows_and_no_columns_keeps_its_rows(name):
    path = CORPUS / "dask-fastparquet" / "test-data" / name
    expected = pq.read_table(path)
    assert expected.num_rows == 2 and expected.num_columns == 0
    t = pqbloom.read_table(path)
    assert t.num_rows == 2
    assert t.to_arrow().num_rows == 2 and t.to_pylist() == expected.to_pylist() == [{}, {}]
    assert pqbloom.ParquetFile(path).read_row_group(0).num_rows == 2
    assert [b.num_rows for b in pqbloom.ParquetFile(path).iter_batches(batch_size=1)] == [1, 1]


def test_table_with_rows_and_no_columns_is_written_with_its_rows(tmp_path):
    from_arrow = pa.table({"x": [1, 2]}).drop_columns(["x"])
    pqbloom.write_table(from_arrow, tmp_path / "a.parquet")
    pqbloom.write_table(Table([], num_rows=2), tmp_path / "b.parquet")
    for p in ("a.parquet", "b.parquet"):
        assert pq.read_table(tmp_path / p).num_rows == 2  # pyarrow itself writes 0 rows for such a table
    t = Table([], num_rows=5)
    assert t.slice(1, 2).num_rows == 2 and Table.concat([t, t]).num_rows == 10
    assert t.take(np.array([0, 4])).num_rows == 2
    with pytest.raises(SchemaError):
        Table([pqbloom.table.column_from_values("x", [1, 2])], num_rows=3)


# -- defect 6: decimals -------------------------------------------------------------------------------
@needs(CORPUS)
def test_decimal_values_wider_than_their_precision_read_as_pyarrow_reads_them():
    # DECIMAL(36, 17) holding 38-digit values: to_arrow() raised pyarrow's ArrowInvalid
    path = DUCK / "decimal" / "pandas_decimal.parquet"
    assert pqbloom.read_table(path).to_arrow().equals(pq.read_table(path))


def test_decimal_above_38_digits_is_decimal256(tmp_path):
    values = [decimal.Decimal("12345678901234567890123456789012345678901.23"), None, decimal.Decimal("-1.50")]
    pq.write_table(pa.table({"d": pa.array(values, pa.decimal256(45, 2))}), tmp_path / "d.parquet")
    got = pqbloom.read_table(tmp_path / "d.parquet")
    assert got.to_arrow().equals(pq.read_table(tmp_path / "d.parquet"))
    assert got.column("d").to_pylist() == values


@needs(CORPUS)
def test_decimal_beyond_arrow_is_a_typed_error_and_reads_as_python():
    # DECIMAL(77, 38): pyarrow refuses the file; DuckDB reads it as DOUBLE
    path = DUCK / "bigdecimal.parquet"
    t = pqbloom.read_table(path)
    with pytest.raises(UnsupportedError, match="76"):
        t.to_arrow()
    exact = t.column("bigdec").to_pylist()
    assert [None if v is None else float(v) for v in exact] == [r[0] for r in _duck_rows(path)]


_WIDE = decimal.Context(prec=100)  # the default context rounds to 28 digits


def _unscaled(draw_int: int, scale: int) -> decimal.Decimal:
    return decimal.Decimal(draw_int).scaleb(-scale, context=_WIDE)


@st.composite
def _decimal_columns(draw):
    precision = draw(st.integers(1, 76))
    scale = draw(st.integers(0, precision))
    bound = 10**precision - 1
    ints = draw(st.lists(st.one_of(st.none(), st.integers(-bound, bound), st.sampled_from([bound, -bound, 0, -1])),
                         max_size=40))
    typ = pa.decimal128(precision, scale) if precision <= 38 else pa.decimal256(precision, scale)
    return pa.array([None if i is None else _unscaled(i, scale) for i in ints], typ)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(arr=_decimal_columns(), as_integer=st.booleans())
def test_decimals_both_ways_against_pyarrow(arr, as_integer, tmp_path_factory):
    """pyarrow writes decimals (FIXED_LEN_BYTE_ARRAY, or INT32/INT64 where they fit): pqbloom's to_arrow()
    equals pyarrow's reading; pqbloom writes pyarrow's table: pyarrow reads back the same values."""
    table = pa.table({"d": arr})
    data = _pyarrow_bytes(table, store_decimal_as_integer=as_integer)
    assert pqbloom.read_table(io.BytesIO(data)).to_arrow().equals(pq.read_table(io.BytesIO(data)))
    buf = io.BytesIO()
    pqbloom.write_table(table, buf)
    assert pq.read_table(io.BytesIO(buf.getvalue())).equals(table)


@settings(max_examples=200, deadline=None)
@given(values=st.lists(st.tuples(st.integers(-(2**255), 2**255 - 1), st.integers(0, 6)), max_size=30),
       width=st.sampled_from([16, 32]))
def test_decimal_byte_array_words_against_python_ints(values, width):
    """Variable-length big-endian two's complement (with redundant sign bytes, as writers may pad) to
    Arrow's little-endian words, checked against Python's own integers."""
    from pqbloom.table.decimals import DecimalOverflow, words_from_byte_array

    blobs = []
    for v, pad in values:
        n = max(1, (v.bit_length() + 8) // 8)
        raw = v.to_bytes(n, "big", signed=True)
        blobs.append((b"\xff" if v < 0 else b"\x00") * pad + raw)
    offsets = np.zeros(len(blobs) + 1, np.int64)
    np.cumsum([len(b) for b in blobs], out=offsets[1:])
    data = np.frombuffer(b"".join(blobs), np.uint8)
    fits = all(-(2 ** (8 * width - 1)) <= v < 2 ** (8 * width - 1) for v, _ in values)
    if not fits:
        with pytest.raises(DecimalOverflow):
            words_from_byte_array(offsets, data, width)
        return
    words = words_from_byte_array(offsets, data, width)
    assert [int.from_bytes(w.tobytes(), "little", signed=True) for w in words] == [v for v, _ in values]


@needs(CORPUS)
def test_zero_length_decimal_reads_as_duckdb_reads_it():
    path = DUCK / "decimal" / "byte_array_decimal_empty_value.parquet"
    assert pqbloom.read_table(path).column("value").to_pylist() == [r[0] for r in _duck_rows(path)]


# -- defect 9: empty groups ---------------------------------------------------------------------------
EMPTY_GROUP = DUCK / "empty-group" / "empty_group_test.parquet"


@needs(CORPUS)
def test_empty_group_reads_as_pyarrow_reads_it():
    expected = pq.read_table(EMPTY_GROUP)  # nested: struct<inner: struct<>>, null
    got = pqbloom.read_table(EMPTY_GROUP)
    assert got.to_arrow().equals(expected)
    assert got.to_pylist() == expected.to_pylist()


@needs(CORPUS)
def test_empty_group_is_written_back(tmp_path):
    # pyarrow refuses to write a struct without fields; pqbloom writes the group as it found it
    for source in (pqbloom.read_table(EMPTY_GROUP), pq.read_table(EMPTY_GROUP)):
        pqbloom.write_table(source, tmp_path / "out.parquet")
        assert pq.read_table(tmp_path / "out.parquet").equals(pq.read_table(EMPTY_GROUP))
        assert "optional group field_id=-1 inner {" in str(pq.ParquetFile(tmp_path / "out.parquet").schema)


def test_empty_struct_holding_values_is_refused(tmp_path):
    # a group without leaves stores nothing: a non-null value would read back null
    t = pa.table({"id": [1, 2], "e": pa.array([{}, None], pa.struct([]))})
    with pytest.raises(pa.ArrowNotImplementedError):
        pq.write_table(t, tmp_path / "pyarrow.parquet")
    with pytest.raises(SchemaError, match="empty struct"):
        pqbloom.write_table(t, tmp_path / "out.parquet")
    assert not (tmp_path / "out.parquet").exists()
    nulls = pa.table({"id": [1, 2], "e": pa.array([None, None], pa.struct([]))})
    pqbloom.write_table(nulls, tmp_path / "out.parquet")
    assert pq.read_table(tmp_path / "out.parquet").equals(nulls)


def _struct_with_empty_member() -> bytes:
    """A struct with a leaf and an empty group beside it (pyarrow refuses to read that field)."""
    data = _pyarrow_bytes(pa.table({"id": [1, 2], "s": pa.array([{"x": 1}, None], pa.struct([("x", pa.int32())]))}),
                          store_schema=False)

    def fn(md):
        md.schema[2].num_children = 2
        md.schema.append(T.SchemaElement(name="inner", repetition_type=T.FieldRepetitionType.OPTIONAL,
                                         num_children=0))

    return rewrite_footer(data, fn)


def test_empty_group_beside_data_is_a_typed_error(tmp_path):
    data = _struct_with_empty_member()
    with pytest.raises(pa.ArrowInvalid, match="no children"):
        pq.read_table(io.BytesIO(data))
    pf = pqbloom.ParquetFile(data)
    with pytest.raises(UnsupportedError, match="empty group"):
        pf.read()
    assert pf.read(columns=["id"]).column("id").to_pylist() == [1, 2]
    schema = Schema([nested_field("s", "struct", [make_field("x", "int32"), nested_field("inner", "struct", [])])])
    with pytest.raises(SchemaError, match="empty struct"):
        pqbloom.ParquetWriter(tmp_path / "out.parquet", schema)


def test_schema_elements_that_no_group_claims_are_corrupt():
    data = _pyarrow_bytes(pa.table({"id": [1, 2]}))

    def fn(md):
        md.schema.append(T.SchemaElement(name="extra", type=T.Type.INT32,
                                         repetition_type=T.FieldRepetitionType.OPTIONAL))

    bad = rewrite_footer(data, fn)
    with pytest.raises(OSError, match="too many elements"):
        pq.read_table(io.BytesIO(bad))
    with pytest.raises(CorruptFileError, match="groups claim"):
        pqbloom.ParquetFile(bad)


# -- defect 11: annotations kept on a round trip ------------------------------------------------------
ROUND_TRIPS = [
    DUCK / "variant_partial_shredded16.parquet",  # VARIANT(1) over a shredded UUID
    CORPUS / "parquet-go-parquet-go" / "testdata" / "shredded_variant" / "case-134.parquet",
    DOTNET / "variant_unshredded.parquet",
    DOTNET / "legacy_primitives_collection_arrays.parquet",  # converted types only, INTERVAL, INT96
    DOTNET / "datetime_other_system.parquet",  # legacy TIMESTAMP_MILLIS: DuckDB reads it as local time
    DOTNET / "emptycolumn.parquet",  # converted type 24 (NA): a null column
    DUCK / "json_convertedtype.parquet",
    DUCK / "uuid_v2.parquet",
    DUCK / "float16.parquet",
    DUCK / "enum.parquet",
]


@needs(CORPUS)
@pytest.mark.parametrize("path", ROUND_TRIPS, ids=lambda p: p.name)
def test_annotations_survive_a_round_trip(path, tmp_path):
    out = tmp_path / "out.parquet"
    pqbloom.write_table(pqbloom.read_table(path), out)
    assert annotations(out) == annotations(path)  # as pyarrow reads both footers
    assert _duck_types(out) == _duck_types(path)
    assert not compare_arrow(pq.read_table(out), pq.read_table(path), "round trip")  # NaN-aware


@pytest.mark.parametrize("kind", ["geo", "bson"])
def test_geometry_geography_and_bson_survive_a_round_trip(kind, tmp_path):
    # none of the corpus files has them: a pyarrow-written file with the annotations set in its footer
    wkb = bytes.fromhex("0101000000000000000000f03f0000000000000040")  # POINT(1 2)
    cols = {"g": [wkb, None], "h": [wkb, None]} if kind == "geo" else {"b": [b"\x05\x00\x00\x00\x00", None]}
    data = _pyarrow_bytes(pa.table(cols), store_schema=False)

    def fn(md):
        if kind == "geo":
            md.schema[1].logicalType = T.LogicalType(GEOMETRY=T.GeometryType(crs="OGC:CRS84"))
            md.schema[2].logicalType = T.LogicalType(GEOGRAPHY=T.GeographyType(
                crs="OGC:CRS84", algorithm=T.EdgeInterpolationAlgorithm.SPHERICAL))
        else:
            md.schema[1].logicalType, md.schema[1].converted_type = T.LogicalType(BSON=T.BsonType()), T.ConvertedType.BSON

    src, out = tmp_path / "src.parquet", tmp_path / "out.parquet"
    src.write_bytes(rewrite_footer(data, fn))
    pqbloom.write_table(pqbloom.read_table(src), out)
    # pyarrow's printout of both schemas (crs and algorithm included), less its object address
    assert str(pq.ParquetFile(out).schema).splitlines()[1:] == str(pq.ParquetFile(src).schema).splitlines()[1:]
    assert pq.read_table(out).equals(pq.read_table(src))
    if kind == "geo":  # DuckDB reads GEOMETRY / GEOGRAPHY (it has no BSON)
        assert _duck_types(out) == _duck_types(src)
        assert _duck_rows(out) == _duck_rows(src)


@needs(CORPUS)
def test_variant_keeps_its_specification_version(tmp_path):
    path = DUCK / "variant_partial_shredded16.parquet"
    f = pqbloom.ParquetFile(path).table_schema.field("var")
    assert f.logical_type is not None and (f.logical_type.kind, f.logical_type.version) == ("VARIANT", 1)
    out = tmp_path / "out.parquet"
    pqbloom.write_table(pqbloom.read_table(path), out)
    assert "var (Variant(1))" in str(pq.ParquetFile(out).schema)
    assert _duck_rows(out) == _duck_rows(path)  # DuckDB decodes the variants again


def test_pyarrow_extension_types_are_written_as_pyarrow_writes_them(tmp_path):
    t = pa.table({
        "u": pa.array([b"0123456789abcdef", None], pa.uuid()),
        "j": pa.array(['{"a": 1}', None], pa.json_()),
        "jl": pa.array(["[1]", "2"], pa.json_(pa.large_string())),
        "b8": pa.ExtensionArray.from_storage(pa.bool8(), pa.array([1, 0], pa.int8())),
        "op": pa.ExtensionArray.from_storage(pa.opaque(pa.binary(), "geometry", "vendor"), pa.array([b"x", None])),
        "sv": pa.array(["a", None], pa.string_view()),
        "d64": pa.array([86_400_000 * 3, None], pa.date64()),
    })
    ref = tmp_path / "pyarrow.parquet"
    pq.write_table(t, ref, store_schema=False)  # the Parquet types pyarrow picks, without its Arrow schema
    out = tmp_path / "out.parquet"
    pqbloom.write_table(t, out)
    assert annotations(out, physical=False) == annotations(ref, physical=False)
    # like pyarrow's own write, the file carries the Arrow schema, so pyarrow reads the extension types back
    ref_with_schema = tmp_path / "pyarrow-default.parquet"
    pq.write_table(t, ref_with_schema)
    assert pq.read_table(out).equals(pq.read_table(ref_with_schema))


@needs(CORPUS)
def test_to_arrow_uses_pyarrows_types_for_uuid_json_and_null():
    for path in (DUCK / "uuid_v2.parquet", DUCK / "parquet_with_json.parquet", DOTNET / "emptycolumn.parquet"):
        assert pqbloom.read_table(path).to_arrow().equals(pq.read_table(path)), path.name


# -- converted types that do not apply ------------------------------------------------------------------
_PHYSICAL = pa.table({"i32": pa.array([1], pa.int32()), "i64": pa.array([1], pa.int64()), "ba": pa.array([b"x"]),
                      "f16": pa.array([b"0123456789abcdef"], pa.binary(16)),
                      "f12": pa.array([b"0123456789ab"], pa.binary(12)), "b": pa.array([True]),
                      "d": pa.array([1.0]), "f4": pa.array([b"0123"], pa.binary(4))})
_CONVERTED = sorted((n, v) for v, n in T.ConvertedType._VALUES_TO_NAMES.items()
                    if n not in ("MAP", "LIST", "MAP_KEY_VALUE")) + [("NA", 24)]


@pytest.mark.parametrize("name,converted", _CONVERTED)
def test_converted_types_alone_read_as_pyarrow_reads_them(name, converted):
    """A ConvertedType without a LogicalType on every physical type: where pyarrow refuses the file
    (INT_64 on INT32, say: DuckDB's broken_bigint.parquet), pqbloom raises CorruptFileError; where pyarrow
    reads it, the same values and types."""
    base = _pyarrow_bytes(_PHYSICAL, store_schema=False)
    for i, col in enumerate(_PHYSICAL.column_names, start=1):
        for precision in ((3, 1), (19, 2), (40, 2)) if name == "DECIMAL" else ((None, None),):

            def fn(md, i=i, precision=precision):
                el = md.schema[i]
                el.logicalType, el.converted_type = None, converted
                el.precision, el.scale = precision

            data = rewrite_footer(base, fn)
            try:
                expected = pq.read_table(io.BytesIO(data)).column(col)
            except (OSError, pa.ArrowException):
                with pytest.raises(CorruptFileError, match=repr(col)):
                    pqbloom.read_table(io.BytesIO(data))
                continue
            got = pqbloom.read_table(io.BytesIO(data)).column(col).to_arrow()
            if name == "ENUM":  # read as text (see test_real_world.ACCEPTED_TYPE_DIFFERENCES)
                got = got.cast(pa.binary())
            assert got.equals(expected.combine_chunks()), (name, col, precision, got.type, expected.type)


@needs(CORPUS)
@pytest.mark.parametrize("name", ["broken_bigint", "broken_timestamp", "broken_ubigint", "broken_utinyint"])
def test_corpus_files_with_converted_types_that_do_not_apply(name):
    path = DUCK / "broken" / f"{name}.parquet"
    with pytest.raises(OSError, match="can only annotate"):
        pq.read_table(path)
    with pytest.raises(CorruptFileError, match="cannot annotate"):
        pqbloom.read_table(path)


# -- Python values of timestamps and times ----------------------------------------------------------------
@needs(CORPUS)
def test_nanosecond_timestamps_keep_their_nanoseconds_in_python():
    path = DUCK / "bug4903.parquet"
    # dt3 is INT96 before 1677-09-21: pyarrow's default wraps it; read it as microseconds (below)
    names = [n for n in pq.read_schema(path).names if n != "dt3"]
    got, expected = pqbloom.read_table(path, columns=names), pq.read_table(path, columns=names)
    for name in names:
        assert got.column(name).to_pylist() == expected.column(name).to_pylist(), name


@needs(CORPUS)
def test_int96_before_1677_is_refused_in_nanoseconds_and_read_in_microseconds():
    path = DUCK / "bug4903.parquet"
    with pytest.raises(TimestampRangeError, match="coerce_int96_timestamp_unit"):
        pqbloom.read_table(path, columns=["dt3"]).to_arrow()
    want = pq.read_table(path, columns=["dt3"], coerce_int96_timestamp_unit="us")
    got = pqbloom.read_table(path, columns=["dt3"], coerce_int96_timestamp_unit="us")
    assert got.to_arrow().equals(want)
    duck = [r[0] for r in duckdb.connect().execute("SELECT epoch_us(dt3) FROM read_parquet(?)", [str(path)]).fetchall()]
    assert got.to_arrow().column("dt3").cast("int64").to_pylist() == duck  # DuckDB reads INT96 as microseconds too


@needs(CORPUS)
def test_timestamps_outside_datetime_are_a_typed_error():
    path = CORPUS / "parquet-go-parquet-go" / "testdata" / "nested_structs.rust.parquet"
    with pytest.raises(OverflowError):
        pq.read_table(path, columns=["ul_observation_date"]).to_pylist()
    t = pqbloom.read_table(path, columns=["ul_observation_date"])
    with pytest.raises(UnsupportedError, match="outside the range"):
        t.to_pylist()
    assert t.to_arrow().equals(pq.read_table(path, columns=["ul_observation_date"]))


@needs(CORPUS)
def test_times_outside_a_day_wrap_as_the_peers_read_them():
    path = DUCK / "negative-timetz.parquet"
    expected = pq.read_table(path, columns=["col33"]).column(0).to_pylist()
    assert pqbloom.read_table(path, columns=["col33"]).column("col33").to_pylist() == expected
    duck = [r[0].replace(tzinfo=None) for r in duckdb.connect().execute(
        "SELECT col33 FROM read_parquet(?)", [str(path)]).fetchall()]
    assert duck == expected
    assert all(isinstance(v, dt.time) for v in expected)


@needs(CORPUS)
def test_spark_data_source_takes_extension_types_as_their_storage():
    # to_arrow() gives arrow.uuid / arrow.json; the Spark data source reports and reads their storage types
    from pqbloom.spark import spark_schema

    assert spark_schema(str(DUCK / "uuid_v2.parquet")) == "`uuid` binary"
    assert spark_schema(str(DUCK / "parquet_with_json.parquet")) == "`field1` string, `field2` string"
    assert spark_schema(str(DUCK / "variant_partial_shredded16.parquet")) == (
        "`id` int, `var` struct<`metadata`:binary,`value`:binary,`typed_value`:binary>")
