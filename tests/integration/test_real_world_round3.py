"""Real-world truth, round 3 (issue #29): files that held-back corpora have, rebuilt here from pyarrow's
output (patched page bytes or footer fields), with pyarrow's reading of the same bytes as the oracle.

* a corrupt RLE/bit-packed run (Impala's ``bad_rle_literal_count.parquet``) is refused, not read;
* narrow integers stored out of range (Drill's ``uint_types.parquet``): filters, statistics, dictionaries
  and Bloom filters see the values the read returns;
* parquet-mr 1.2.x's column chunk sizes short of the dictionary page header (PARQUET-816, Impala's
  ``repeated_values.parquet``) are padded as pyarrow pads them;
* columns of the Null logical type over stored values (Drill's ``interval_dictionary.parquet``) read as
  nulls, in every output and in filters.
"""

from __future__ import annotations

import io

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import pqbloom
from pqbloom.errors import CorruptFileError
from pqbloom.format import T, decode, decode_at
from tests.unit.kernels.test_kernels import compiled

from .test_hardening import rewrite_footer


def _pyarrow_bytes(table: pa.Table, **opts) -> bytes:
    buf = io.BytesIO()
    pq.write_table(table, buf, **opts)
    return buf.getvalue()


def _footer(data: bytes):  # type: ignore[no-untyped-def]
    flen = int.from_bytes(data[-8:-4], "little")
    return decode(T.FileMetaData, data[len(data) - 8 - flen:-8])


def _pyarrow_refuses(data: bytes) -> None:
    with pytest.raises(Exception):  # noqa: B017, PT011 - pyarrow's own error types vary by version
        pq.read_table(io.BytesIO(data))


# -- item 2: a corrupt RLE/bit-packed run ------------------------------------------------------------
def _bad_rle_literal_count() -> bytes:
    """Impala's ``bad_rle_literal_count.parquet``: an INT32 column stored 1, 3, 7 dictionary-encoded,
    whose indices' bit-packed run header says 0 groups (it was 1): read on, the group's bytes become
    an RLE run of index 0 and the column ``[1, 1, 1]``."""
    schema = pa.schema([pa.field("v", pa.int32(), nullable=False)])
    data = _pyarrow_bytes(pa.table({"v": [1, 3, 7]}, schema=schema), compression="NONE", use_dictionary=True,
                          write_statistics=False, data_page_version="1.0", write_page_index=False)
    m = _footer(data).row_groups[0].columns[0].meta_data
    header, body = decode_at(T.PageHeader, data, m.data_page_offset)
    assert header.data_page_header.encoding == T.Encoding.RLE_DICTIONARY
    # the page: bit width 2, then one bit-packed run of 1 group holding 0, 1, 2 (0b00_10_01_00)
    assert data[body:body + 4] == bytes([2, 0b11, 0b00_10_01_00, 0])
    return data[:body + 1] + bytes([0b01]) + data[body + 2:]


@pytest.mark.parametrize("kernels_compiled", [True, False], ids=["compiled", "reference"])
def test_bit_packed_run_of_zero_groups_is_refused(kernels_compiled: bool) -> None:
    data = _bad_rle_literal_count()
    _pyarrow_refuses(data)
    with compiled(kernels_compiled):
        with pytest.raises(CorruptFileError, match="bit-packed run of 0 values"):
            pqbloom.read_table(data)
        with pytest.raises(CorruptFileError, match="bit-packed run of 0 values"):
            pqbloom.ParquetFile(data).read(filters=pqbloom.field("v") == 1)


# -- item 1: narrow integers stored out of range ---------------------------------------------------
#: (bit width, signed, values as stored in INT32): per row group of 2 rows, one holding both stored
#: forms of the same value, one holding only the out-of-range form (its min == max), one in range
NARROW = [
    (8, False, [255, -1, -1, -1, 5, 7]),  # Drill's uint_types.parquet: a UINT_8 255 stored as -1
    (8, True, [-1, 255, 255, 255, 5, 7]),  # an INT_8 -1 stored as 255
    (16, False, [65535, -1, -1, -1, 5, 7]),
    (16, True, [-1, 65535, 65535, 65535, 5, 7]),
]


def _narrow_file(bits: int, signed: bool, stored: list[int], *, legacy: bool, bloom: bool) -> bytes:
    """An INT32 column written by pyarrow (its statistics, page index and Bloom filter computed on the
    stored values), re-annotated INT(bits, signed) / INT_bits or UINT_bits in the footer. ``legacy``:
    the statistics as parquet-mr 1.8 and Drill write them (only the deprecated signed min/max, no
    column orders)."""
    opts = {"bloom_filter_options": {"u": {"ndv": 16}}} if bloom else {}
    data = _pyarrow_bytes(pa.table({"u": pa.array(stored, pa.int32())}), row_group_size=2, write_page_index=True,
                          **opts)

    def fn(md) -> None:  # type: ignore[no-untyped-def]
        el = md.schema[1]
        el.logicalType = T.LogicalType(INTEGER=T.IntType(bitWidth=bits, isSigned=signed))
        el.converted_type = getattr(T.ConvertedType, f"{'INT' if signed else 'UINT'}_{bits}")
        if legacy:
            md.created_by = "parquet-mr version 1.8.1 (build 4aba4dae7bb0d4edbcf7923ae1339f28fd3f7fcf)"
            md.column_orders = None
            for rg in md.row_groups:
                s = rg.columns[0].meta_data.statistics
                s.min, s.max, s.min_value, s.max_value = s.min_value, s.max_value, None, None

    return rewrite_footer(data, fn)


def _expected_rows(data: bytes, mask) -> list:  # type: ignore[no-untyped-def]
    """pyarrow's reading of the file, filtered by ``mask(column)`` (pyarrow.compute)."""
    t = pq.read_table(io.BytesIO(data))
    return t.filter(mask(t.column("u"))).column("u").to_pylist()


@pytest.mark.parametrize("legacy", [False, True], ids=["pyarrow-stats", "parquet-mr-1.8-stats"])
@pytest.mark.parametrize("bloom", [False, True], ids=["no-bloom", "bloom"])
@pytest.mark.parametrize("bits, signed, stored", NARROW, ids=[f"{'INT' if s else 'UINT'}_{b}" for b, s, _ in NARROW])
def test_filters_see_the_narrowed_values_the_read_returns(bits: int, signed: bool, stored: list[int], legacy: bool,
                                                          bloom: bool) -> None:
    data = _narrow_file(bits, signed, stored, legacy=legacy, bloom=bloom)
    read = pq.read_table(io.BytesIO(data)).column("u").to_pylist()
    v = read[0]  # the value both stored forms read as
    assert read[:4] == [v] * 4 and (v == -1 if signed else v == 2**bits - 1)
    assert pqbloom.read_table(data).to_pydict()["u"] == read
    cases = [
        (pqbloom.field("u") == v, lambda c: pc.equal(c, v)),
        (pqbloom.field("u") != v, lambda c: pc.not_equal(c, v)),
        (pqbloom.field("u") >= v, lambda c: pc.greater_equal(c, v)),
        (pqbloom.field("u") < v, lambda c: pc.less(c, v)),
        (pqbloom.field("u").isin([v, 5]), lambda c: pc.is_in(c, pa.array([v, 5], c.type))),
        (pqbloom.field("u") == 5, lambda c: pc.equal(c, 5)),
    ]
    pf = pqbloom.ParquetFile(data)
    for expr, mask in cases:
        want = _expected_rows(data, mask)
        got = pf.read(filters=expr).to_pydict()["u"]
        assert got == want, f"{expr}: {got} != pyarrow's {want}"
        assert pqbloom.read_table(data, filters=expr, use_threads=False).to_pydict()["u"] == want
    if bloom:  # the filter of a row group that stored only the other form still holds the value read
        for rg in range(2):
            assert pf.bloom_filter_might_contain(rg, "u", v) is True


_OPS = {"==": pc.equal, "!=": pc.not_equal, "<": pc.less, "<=": pc.less_equal, ">": pc.greater,
        ">=": pc.greater_equal}


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(kind=st.sampled_from([(8, False), (8, True), (16, False), (16, True)]), data=st.data())
def test_narrow_integer_filters_against_pyarrow(kind: tuple[int, bool], data: st.DataObject) -> None:
    """Random stored values (in range, or the other signedness' form of one), row groups, statistics
    flavours and a Bloom filter; every comparison equals pyarrow's reading filtered by pyarrow."""
    bits, signed = kind
    lo, hi = (-(1 << (bits - 1)), (1 << (bits - 1)) - 1) if signed else (0, (1 << bits) - 1)
    edge = [lo, hi, 0, 1, -1 & ((1 << bits) - 1), -1, (1 << (bits - 1)), -(1 << (bits - 1))]
    stored = data.draw(st.lists(st.sampled_from(edge) | st.integers(lo, hi), min_size=1, max_size=12))
    file = _narrow_file(bits, signed, stored, legacy=data.draw(st.booleans()), bloom=data.draw(st.booleans()))
    op = data.draw(st.sampled_from(sorted(_OPS)))
    k = data.draw(st.sampled_from(edge) | st.integers(lo - 2, hi + 2))
    want = _expected_rows(file, lambda c: _OPS[op](c, pa.scalar(k, pa.int64())))
    expr = {"==": pqbloom.field("u") == k, "!=": pqbloom.field("u") != k, "<": pqbloom.field("u") < k,
            "<=": pqbloom.field("u") <= k, ">": pqbloom.field("u") > k, ">=": pqbloom.field("u") >= k}[op]
    assert pqbloom.ParquetFile(file).read(filters=expr).to_pydict()["u"] == want


# -- item 15: parquet-mr 1.2.x chunk sizes (PARQUET-816) ---------------------------------------------
def _parquet_816(created_by: str | None, table: pa.Table) -> bytes:
    """``table`` as parquet-mr 1.2.x wrote chunks (Impala's ``repeated_values.parquet``): the dictionary
    page's offset as ``data_page_offset``, no ``dictionary_page_offset``, and a ``total_compressed_size``
    short of the dictionary page header's bytes."""
    data = _pyarrow_bytes(table, compression="snappy", write_page_index=False, row_group_size=9)

    def fn(md) -> None:  # type: ignore[no-untyped-def]
        md.created_by = created_by
        for rg in md.row_groups:
            for c in rg.columns:
                m = c.meta_data
                _, body = decode_at(T.PageHeader, data, m.dictionary_page_offset)
                short = body - m.dictionary_page_offset
                m.total_compressed_size -= short
                m.total_uncompressed_size -= short
                m.data_page_offset, m.dictionary_page_offset = m.dictionary_page_offset, None

    return rewrite_footer(data, fn)


TABLE_816 = pa.table({"s": ["parquet", "mr", "parquet"] * 5, "n": pa.array([1, 2, 3] * 5, pa.int32())})


@pytest.mark.parametrize("created_by", ["parquet-mr version 1.2.5-cdh4.5.0 (build 1fa37b7d60a02ba6a0df8e70d2cd)",
                                        "parquet-mr version 1.2.8", "parquet-mr"])
@pytest.mark.parametrize("table", [TABLE_816, TABLE_816.select(["s"])], ids=["two-columns", "last-before-footer"])
def test_parquet_mr_1_2_chunk_sizes_read_as_pyarrow_reads_them(created_by: str, table: pa.Table, tmp_path) -> None:
    data = _parquet_816(created_by, table)
    want = pq.read_table(io.BytesIO(data))
    assert want.to_pydict() == table.to_pydict()  # pyarrow pads such chunks (its PARQUET-816 workaround)
    path = tmp_path / "repeated_values.parquet"
    path.write_bytes(data)
    for source in (data, path):
        assert pqbloom.read_table(source).to_pydict() == want.to_pydict()
        pf = pqbloom.ParquetFile(source)
        # batches run across row groups, as pyarrow's do (its own batches of this file are the reference)
        want_batches = [b.num_rows for b in pq.ParquetFile(io.BytesIO(data)).iter_batches(batch_size=4)]
        assert [b.num_rows for b in pf.iter_batches(batch_size=4)] == want_batches
        got = pf.read(filters=pqbloom.field("s") == "mr").to_pydict()
        assert got == want.filter(pc.equal(want.column("s"), "mr")).to_pydict()


@pytest.mark.parametrize("created_by", ["parquet-mr version 1.2.9", "parquet-mr version 1.10.0", None,
                                        "impala version 1.2.8", "parquet-mr version 1.13.0-SNAPSHOT (build 7398d9b)",
                                        "parquet-mrx version 1.2.8"])
def test_chunk_sizes_of_later_writers_are_not_padded(created_by: str | None) -> None:
    data = _parquet_816(created_by, TABLE_816)
    _pyarrow_refuses(data)
    with pytest.raises(CorruptFileError):
        pqbloom.read_table(data)


# -- item 10: columns of the Null logical type (UNKNOWN) holding stored values ---------------------
def _null_annotated(table: pa.Table) -> bytes:
    """``table`` written by pyarrow with its column(s) named ``u`` re-annotated UNKNOWN (the Null
    logical type; Drill's ``interval_dictionary.parquet`` has a required one over stored values)."""
    def fn(md) -> None:  # type: ignore[no-untyped-def]
        for el in md.schema[1:]:
            if el.name == "u":
                el.logicalType = T.LogicalType(UNKNOWN=T.NullType())
                el.converted_type = None

    return rewrite_footer(_pyarrow_bytes(table), fn)


def _null_cases() -> list:  # type: ignore[type-arg]
    out = []
    for required in (True, False):
        rep = "required" if required else "optional"
        for typ, vals in ((pa.int32(), [1, 2, 3]), (pa.binary(12), [b"i" * 12] * 3), (pa.string(), ["a", "b", "c"])):
            if not required:
                vals = [vals[0], None, vals[2]]
            schema = pa.schema([pa.field("id", pa.int32(), nullable=False), pa.field("u", typ, nullable=not required)])
            out.append(pytest.param(pa.table({"id": [1, 2, 3], "u": vals}, schema=schema), id=f"{rep}-{typ}"))
        struct = pa.struct([pa.field("u", pa.int32(), nullable=not required), pa.field("x", pa.int32())])
        table = pa.table({"id": [1, 2, 3], "s": pa.array([{"u": 1, "x": 2}, {"u": 3, "x": 4}, None], struct)})
        out.append(pytest.param(table, id=f"{rep}-in-struct"))
    return out


@pytest.mark.parametrize("table", _null_cases())
def test_null_logical_type_reads_as_pyarrow_reads_it(table: pa.Table) -> None:
    data = _null_annotated(table)
    want = pq.read_table(io.BytesIO(data))
    got = pqbloom.read_table(data)
    assert got.to_pydict() == want.to_pydict()
    assert got.to_pylist() == want.to_pylist()
    arrow = got.to_arrow()
    assert arrow.schema == want.schema  # a required one is ``null not null``, as pyarrow reads it
    assert arrow.to_pydict() == want.to_pydict()
    assert got.to_pandas().to_dict("list") == want.to_pandas().to_dict("list")
    if "u" in got.column_names:
        assert got.column("u").to_numpy().tolist() == [None] * 3


@pytest.mark.parametrize("required", [True, False], ids=["required", "optional"])
def test_filters_on_a_null_logical_type_see_nulls(required: bool) -> None:
    """The stored values (and their statistics: a required column's null count is 0) are not what the
    read returns: every row is null."""
    schema = pa.schema([pa.field("id", pa.int32(), nullable=False), pa.field("u", pa.int32(), nullable=not required)])
    data = _null_annotated(pa.table({"id": [1, 2, 3], "u": [1, 2, 3]}, schema=schema))
    assert pq.read_table(io.BytesIO(data)).column("u").null_count == 3
    pf = pqbloom.ParquetFile(data)
    u = pqbloom.field("u")
    for expr, rows in ((u == 1, []), (u != 1, []), (u.is_null(), [1, 2, 3]), (u.is_valid(), []),
                       (u.isin([1, None]), [1, 2, 3]), (u.isin([1]), []), (~(u == 1) | (pqbloom.field("id") == 2), [2])):
        assert pf.read(filters=expr).to_pydict()["id"] == rows, expr
