"""format's own records against the structs they stand for: schema elements read from a pyarrow-written footer
say what pyarrow's schema says; every annotation the writer can build reads back as the same record; the
crypto, statistics and Bloom header records carry what the structs hold."""

from __future__ import annotations

import io
import json

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from hypothesis import given
from hypothesis import strategies as st

from pqbloom import format as fmt
from pqbloom.errors import DecryptionError
from pqbloom.format import T

_PA_KINDS = {"String": "STRING", "Enum": "ENUM", "JSON": "JSON", "BSON": "BSON", "UUID": "UUID", "Date": "DATE",
             "Float16": "FLOAT16", "Null": "UNKNOWN", "Decimal": "DECIMAL", "Time": "TIME", "Timestamp": "TIMESTAMP",
             "Int": "INTEGER"}


def _footer(data: bytes):
    n = int.from_bytes(data[-8:-4], "little")
    return fmt.decode(T.FileMetaData, data[-8 - n:-8])


def test_schema_elements_say_what_pyarrow_says():
    table = pa.table({
        "s": pa.array(["a"]), "i8": pa.array([1], pa.int8()), "u32": pa.array([1], pa.uint32()),
        "d": pa.array([1], pa.date32()), "ts": pa.array([1], pa.timestamp("ms", tz="UTC")),
        "tl": pa.array([1], pa.timestamp("ns")), "t": pa.array([1], pa.time64("us")),
        "dec": pa.array([1], pa.decimal128(20, 3)), "f16": pa.array([1.5], pa.float16()), "n": pa.nulls(1),
        "l": pa.array([[1]], pa.list_(pa.int64())), "m": pa.array([[("k", 1)]], pa.map_(pa.string(), pa.int32())),
    })
    buf = io.BytesIO()
    pq.write_table(table, buf)
    data = buf.getvalue()
    elements = fmt.schema_elements(_footer(data).schema)
    leaves = [e for e in elements if not e.num_children]
    theirs = pq.ParquetFile(io.BytesIO(data)).schema
    assert len(leaves) == len(theirs)
    for el, col in zip(leaves, theirs):
        assert el.name == col.name and fmt.name_of(fmt.PhysicalType, el.type) == col.physical_type
        assert fmt.name_of(fmt.ConvertedType, el.converted_type) == col.converted_type or (
            el.converted_type is None and col.converted_type == "NONE")
        lt = json.loads(col.logical_type.to_json())
        if lt["Type"] == "None":
            assert el.logical_type is None, col.name
            continue
        ann = el.logical_type
        assert ann is not None and ann.kind == _PA_KINDS[lt["Type"]], col.name
        if ann.kind in ("TIME", "TIMESTAMP"):
            assert (ann.unit, ann.utc) == ({"milliseconds": "ms", "microseconds": "us", "nanoseconds": "ns"}[lt["timeUnit"]],
                                           lt["isAdjustedToUTC"]), col.name
        if ann.kind == "INTEGER":
            assert (ann.bit_width, ann.signed) == (lt["bitWidth"], lt["isSigned"]), col.name
        if ann.kind == "DECIMAL":
            assert (ann.precision, ann.scale) == (lt["precision"], lt["scale"]) == (el.precision, el.scale)
    groups = {e.name: e for e in elements if e.num_children}
    assert groups["l"].logical_type.is_list and groups["l"].logical_type.kind == "LIST"
    assert groups["m"].logical_type.is_map and groups["m"].logical_type.kind == "MAP"


_UNITS = st.sampled_from(["ms", "us", "ns", None])
ANNOTATIONS = st.one_of(
    st.sampled_from(["STRING", "ENUM", "JSON", "BSON", "UUID", "DATE", "FLOAT16", "UNKNOWN"]).map(
        fmt.LogicalAnnotation),
    st.just(fmt.LogicalAnnotation("LIST", is_list=True)), st.just(fmt.LogicalAnnotation("MAP", is_map=True)),
    st.builds(lambda p, s: fmt.LogicalAnnotation("DECIMAL", precision=p, scale=s), st.integers(1, 38),
              st.integers(0, 38)),
    st.builds(lambda k, u, utc: fmt.LogicalAnnotation(k, unit=u, utc=utc), st.sampled_from(["TIME", "TIMESTAMP"]),
              _UNITS, st.booleans()),
    st.builds(lambda w, s: fmt.LogicalAnnotation("INTEGER", bit_width=w, signed=s), st.sampled_from([8, 16, 32, 64]),
              st.booleans()),
    st.builds(lambda v: fmt.LogicalAnnotation("VARIANT", version=v), st.one_of(st.none(), st.integers(0, 127))),
    st.builds(lambda c: fmt.LogicalAnnotation("GEOMETRY", crs=c), st.one_of(st.none(), st.text(max_size=8))),
    st.builds(lambda c, a: fmt.LogicalAnnotation("GEOGRAPHY", crs=c, algorithm=a),
              st.one_of(st.none(), st.text(max_size=8)), st.one_of(st.none(), st.integers(0, 4))),
)


@given(ANNOTATIONS, st.integers(0, 7), st.one_of(st.none(), st.integers(0, 99)))
def test_every_annotation_reads_back_as_written(ann, ptype, field_id):
    written = [fmt.SchemaElement("schema", num_children=1),
               fmt.SchemaElement("c", ptype, 16, 1, None, 5, 2, 9, field_id, ann)]
    md = T.FileMetaData(version=2, schema=fmt.schema_structs(written), num_rows=0, row_groups=[])
    assert fmt.schema_elements(fmt.decode(T.FileMetaData, fmt.encode(md)).schema) == written


def test_a_damaged_union_keeps_every_member_it_sets():
    # a union should set one member; a reader given two still sees the list (what the schema layer tests)
    lt = T.LogicalType(STRING=T.StringType(), LIST=T.ListType())
    (el,) = fmt.schema_elements([T.SchemaElement(name="g", num_children=1, logicalType=lt)])
    assert el.logical_type.kind == "STRING" and el.logical_type.is_list and not el.logical_type.is_map
    unknown = T.LogicalType(TIMESTAMP=T.TimestampType(isAdjustedToUTC=True, unit=T.TimeUnit()))
    (el,) = fmt.schema_elements([T.SchemaElement(name="t", type=2, logicalType=unknown)])
    assert (el.logical_type.kind, el.logical_type.unit) == ("TIMESTAMP", None)  # a unit this reader does not know
    (el,) = fmt.schema_elements([T.SchemaElement(name="x", type=1, logicalType=T.LogicalType())])
    assert el.logical_type.kind is None  # a member newer than this reader


def test_statistics_and_column_orders():
    s = T.Statistics(null_count=3, min_value=b"\x01", max_value=b"\x09", is_min_value_exact=True, min=b"\x00")
    f = fmt.statistics_fields(s)
    assert (f.null_count, f.min_value, f.max_value, f.is_min_value_exact, f.is_max_value_exact, f.min, f.max) == (
        3, b"\x01", b"\x09", True, None, b"\x00", None)
    assert fmt.decode(T.Statistics, fmt.encode(fmt.statistics_struct(f))) == s
    assert [fmt.column_order_name(o) for o in (None, T.ColumnOrder(TYPE_ORDER=T.TypeDefinedOrder()), T.ColumnOrder(),
                                               T.ColumnOrder(IEEE_754_TOTAL_ORDER=T.IEEE754TotalOrder()))] == [
        None, "TYPE_ORDER", "UNKNOWN", "IEEE_754_TOTAL_ORDER"]
    ci = fmt.ColumnIndexFields([False, True], [b"\x01", b""], [b"\x02", b""], 1, null_counts=[0, 4])
    got = fmt.decode(T.ColumnIndex, fmt.encode_column_index(ci))
    assert (got.null_pages, got.min_values, got.max_values, got.boundary_order, got.null_counts, got.nan_counts) == (
        [False, True], [b"\x01", b""], [b"\x02", b""], 1, [0, 4], None)


def test_crypto_records():
    params = fmt.AlgorithmParams("AES_GCM_CTR_V1", b"pre", b"12345678", False)
    struct = fmt.decode(T.EncryptionAlgorithm, fmt.encode(fmt.encryption_algorithm(params)))
    assert struct.AES_GCM_V1 is None and struct.AES_GCM_CTR_V1.aad_prefix == b"pre"
    assert fmt.algorithm_params(struct) == params
    with pytest.raises(DecryptionError):
        fmt.algorithm_params(T.EncryptionAlgorithm())
    keyed = fmt.ColumnCrypto("column_key", ("a", "b"), b"kc1")
    assert fmt.column_crypto(fmt.decode(T.ColumnCryptoMetaData, fmt.encode(fmt.column_crypto_struct(keyed)))) == keyed
    footer = fmt.ColumnCrypto("footer_key")
    assert fmt.column_crypto(fmt.column_crypto_struct(footer)) == footer
    assert fmt.column_crypto(T.ColumnCryptoMetaData()).kind == "unknown" and fmt.column_crypto(None) is None
    region = fmt.encode_file_crypto_metadata(params, b"kf") + b"encrypted footer"
    fcm, used = fmt.decode_file_crypto_metadata(region)
    assert (fcm.algorithm, fcm.key_metadata, region[used:]) == (params, b"kf", b"encrypted footer")
    assert fmt.footer_key_metadata(region, encrypted_footer=True) == b"kf"
    assert fmt.footer_key_metadata(b"\xff\xff", encrypted_footer=True) is None


def test_bloom_filter_header_record():
    # the spec's example header (see test_format): numBytes 1024, BLOCK / XXHASH / UNCOMPRESSED
    spec = bytes.fromhex("1580101c1c00001c1c00001c1c000000")
    assert fmt.encode_bloom_filter_header(1024) == spec
    h, used = fmt.decode_bloom_filter_header(spec + b"bitset")
    assert (h.num_bytes, h.block, h.xxhash, h.uncompressed, used) == (1024, True, True, True, len(spec))
    h, _ = fmt.decode_bloom_filter_header(fmt.encode(T.BloomFilterHeader(numBytes=32)))
    assert (h.num_bytes, h.block, h.xxhash, h.uncompressed) == (32, False, False, False)
