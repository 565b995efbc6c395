"""Statistics, comparisons and page indexes, checked against pyarrow (parquet-cpp) and
parquet-mr fixtures from parquet-testing."""

from __future__ import annotations

import decimal
import io
import json
import math
import struct
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pqbloom.arrays import BinaryArray
from pqbloom.errors import CorruptFileError, ParquetError
from pqbloom.format import StatisticsFields, T, column_order_name, decode_prefix, statistics_fields
from pqbloom.format import offset_index as build_offset_index
from pqbloom.statistics import (
    ChunkStats,
    SortOrder,
    binary_argminmax,
    build_column_index,
    column_index_bounds,
    column_index_is_usable,
    compare,
    compute_statistics,
    decode_stat_value,
    legacy_stats_trusted,
    parse_created_by,
    sort_order_for,
    truncate_max_value,
    truncate_min_value,
)
from tests.corpora import needs
from tests.paths import FIXTURES_DATA as FIXTURES

PT = T.Type
S, U, X = SortOrder.SIGNED, SortOrder.UNSIGNED, SortOrder.UNDEFINED
SUPPRESS = [HealthCheck.too_slow, HealthCheck.function_scoped_fixture]


# ---------------------------------------------------------------------------
# helpers: pyarrow as the peer
# ---------------------------------------------------------------------------
def write_pa(table: pa.Table, **kw) -> bytes:
    buf = io.BytesIO()
    opts = {"write_statistics": True, "write_page_index": True}
    opts.update(kw)
    pq.write_table(table, buf, **opts)
    return buf.getvalue()


def footer(data: bytes) -> T.FileMetaData:
    n = int.from_bytes(data[-8:-4], "little")
    return decode_prefix(T.FileMetaData, data[-8 - n:-8])[0]


def leaf_schema(fm: T.FileMetaData) -> list[T.SchemaElement]:
    return [s for s in fm.schema if s.num_children is None]


def read_column_index(data: bytes, cc: T.ColumnChunk) -> T.ColumnIndex | None:
    if cc.column_index_offset is None:
        return None
    off, ln = cc.column_index_offset, cc.column_index_length
    return decode_prefix(T.ColumnIndex, data[off:off + ln])[0]


def read_offset_index(data: bytes, cc: T.ColumnChunk) -> T.OffsetIndex:
    off, ln = cc.offset_index_offset, cc.offset_index_length
    return decode_prefix(T.OffsetIndex, data[off:off + ln])[0]


def logical_kind_of(el: T.SchemaElement) -> str | None:
    lt = el.logicalType
    if lt is None:
        return None
    for name in ("STRING", "ENUM", "JSON", "BSON", "UUID", "DATE", "TIME", "TIMESTAMP", "DECIMAL", "FLOAT16"):
        if getattr(lt, name) is not None:
            return name
    if lt.INTEGER is not None:
        return "INTEGER_SIGNED" if lt.INTEGER.isSigned else "INTEGER_UNSIGNED"
    return None


def to_values(arr: pa.Array, el: T.SchemaElement):
    """Our value representation of the non-null values of a pyarrow array."""
    arr = arr.drop_null()
    ptype = el.type
    t = arr.type
    if ptype == PT.BOOLEAN:
        return np.array(arr.to_pylist(), dtype=bool)
    if ptype in (PT.INT32, PT.INT64):
        if pa.types.is_decimal(t):
            return np.array([int(d.scaleb(t.scale)) for d in arr.to_pylist()],
                            dtype=np.int32 if ptype == PT.INT32 else np.int64)
        signed_t, unsigned_t = (pa.int32(), pa.uint32()) if ptype == PT.INT32 else (pa.int64(), pa.uint64())
        dtype = np.int32 if ptype == PT.INT32 else np.int64
        if pa.types.is_unsigned_integer(t):  # stored as the same bits, compared unsigned
            return arr.cast(unsigned_t).to_numpy(zero_copy_only=False).view(dtype)
        return arr.cast(signed_t).to_numpy(zero_copy_only=False).astype(dtype)
    if ptype == PT.FLOAT:
        return arr.to_numpy(zero_copy_only=False).astype(np.float32)
    if ptype == PT.DOUBLE:
        return arr.to_numpy(zero_copy_only=False).astype(np.float64)
    if ptype == PT.BYTE_ARRAY:
        return BinaryArray.from_pylist(arr.to_pylist())
    if ptype == PT.FIXED_LEN_BYTE_ARRAY:
        w = el.type_length
        if pa.types.is_decimal(t):
            items = [int(d.scaleb(t.scale)).to_bytes(w, "big", signed=True) for d in arr.to_pylist()]
        elif pa.types.is_float16(t):
            items = [np.float16(v).astype("<f2").tobytes() for v in arr.to_numpy(zero_copy_only=False)]
        else:
            items = arr.to_pylist()
        return np.frombuffer(b"".join(items), dtype=np.uint8).reshape(len(items), w)
    raise AssertionError(ptype)


def ours_for_column(data: bytes, table: pa.Table, col: int, *, max_binary_length: int = 1 << 20):
    """(our Statistics, pyarrow's Statistics, schema element) for one column of a one-row-group file."""
    fm = footer(data)
    el = leaf_schema(fm)[col]
    kind = logical_kind_of(el)
    order = sort_order_for(el.type, kind, el.converted_type)
    arr = table.column(col).combine_chunks()
    ours = compute_statistics(to_values(arr, el), el.type, null_count=arr.null_count, sort_order=order,
                              logical_kind=kind, type_length=el.type_length, max_binary_length=max_binary_length)
    theirs = fm.row_groups[0].columns[col].meta_data.statistics
    return ours, theirs, el


def dec(values, precision, scale):
    return pa.array([None if v is None else decimal.Decimal(v).scaleb(-scale) for v in values],
                    pa.decimal128(precision, scale))


RNG = np.random.default_rng(20240611)


def with_nulls(values, every=7):
    return [None if i % every == 3 else v for i, v in enumerate(values)]


PEER_CASES = {
    "int32": pa.array(with_nulls([-(2**31), 2**31 - 1, 0, -1, 5] + RNG.integers(-1000, 1000, 50).tolist()), pa.int32()),
    "int64": pa.array(with_nulls([-(2**63), 2**63 - 1] + RNG.integers(-(2**40), 2**40, 50).tolist()), pa.int64()),
    "uint32": pa.array(with_nulls([0, 2**32 - 1, 2**31, 2**31 - 1, 7] + RNG.integers(0, 2**32, 40).tolist()), pa.uint32()),
    "uint32_small": pa.array([5, 2**31 + 1, 3], pa.uint32()),
    "uint64": pa.array(with_nulls([1, 2**64 - 1, 2**63, 2**63 - 1]), pa.uint64()),
    "uint8": pa.array([200, 3, 255, None], pa.uint8()),
    "int8": pa.array([-128, 3, 127, None], pa.int8()),
    "float": pa.array(with_nulls([0.5, float("nan"), -0.0, 3.25, -7.5, float("inf")]), pa.float32()),
    "float_zeros": pa.array([0.0, -0.0, 0.0, float("nan")], pa.float32()),
    "double_pos_zero_only": pa.array([0.0, 0.0, 2.0], pa.float64()),
    "double_neg_zero_max": pa.array([-0.0, -3.0], pa.float64()),
    "double": pa.array(with_nulls(RNG.standard_normal(60).tolist() + [float("-inf")]), pa.float64()),
    "double_all_nan": pa.array([float("nan"), None, float("nan")], pa.float64()),
    "all_null_int": pa.array([None, None], pa.int32()),
    "all_null_str": pa.array([None, None], pa.string()),
    "string": pa.array(with_nulls(["apple", "", "zebra", "äpfel", "app", "apple\x00", "日本", "\U0001f600"])),
    "binary": pa.array(with_nulls([b"\x00", b"", b"\xff\xff", b"\xff", b"\x00\x00", b"ab", b"a\x00b", b"\x80"]),
                       pa.binary()),
    "binary_prefixes": pa.array([b"abc", b"ab", b"abcd", b"ab\x00", b"abc\xff"], pa.binary()),
    "large_binary_values": pa.array([bytes([i % 256]) * (i * 37 % 300) for i in range(40)], pa.binary()),
    "flba": pa.array(with_nulls([b"\x00\x01\x02\x03\x04", b"\xff\x00\x00\x00\x00", b"\x7f\xff\xff\xff\xff",
                                 b"\x80\x00\x00\x00\x00", b"abcde"]), pa.binary(5)),
    "decimal_flba": dec(with_nulls([-1, 1, -(10**8) + 1, 10**8 - 1, 0, 255, -256, 12345]), 9, 2),
    "decimal_flba_wide": dec([-(10**37), 10**37, -5, 129, -129], 38, 0),
    "decimal_positive": dec([100, 200, 2400, 127, 128], 25, 2),
    "date32": pa.array(with_nulls([-719162, 0, 18000, 2932896, -1]), pa.date32()),
    "timestamp_us": pa.array(with_nulls([-(2**62), 0, 2**62, 17]), pa.timestamp("us")),
    "bool": pa.array(with_nulls([True, False, True]), pa.bool_()),
    "bool_all_true": pa.array([True, True, None], pa.bool_()),
    "float16": pa.array([np.float16(1.5), np.float16(-2.0), np.float16("nan"), None, np.float16(-0.0)],
                        pa.float16()),
    "float16_zero": pa.array([np.float16(0.0), np.float16(0.0)], pa.float16()),
}


@pytest.mark.parametrize("name", sorted(PEER_CASES))
def test_chunk_statistics_match_pyarrow(name):
    table = pa.table({"c": PEER_CASES[name]})
    data = write_pa(table)
    ours, theirs, el = ours_for_column(data, table, 0)
    assert ours.null_count == theirs.null_count
    assert ours.min_value == theirs.min_value
    assert ours.max_value == theirs.max_value
    if theirs.min_value is not None:
        assert ours.is_min_value_exact is True and ours.is_max_value_exact is True
    # Deprecated fields: identical for non-binary types; pyarrow also writes them for
    # signed binary (decimal, float16), which we deliberately do not (module doc).
    if el.type in (PT.BYTE_ARRAY, PT.FIXED_LEN_BYTE_ARRAY):
        assert ours.min is None and ours.max is None
    else:
        assert ours.min == theirs.min
        assert ours.max == theirs.max
    floating = el.type in (PT.FLOAT, PT.DOUBLE) or logical_kind_of(el) == "FLOAT16"
    if floating:
        values = [v for v in table.column(0).to_pylist() if v is not None]
        assert ours.nan_count == sum(1 for v in values if v != v)
    else:
        assert ours.nan_count is None


def test_deprecated_fields_never_for_unsigned():
    table = pa.table({"u": pa.array([1, 2**32 - 1], pa.uint32()), "s": pa.array(["a", "b"])})
    data = write_pa(table)
    for col in range(2):
        ours, theirs, _ = ours_for_column(data, table, col)
        assert ours.min is None and ours.max is None
        assert theirs.min is None and theirs.max is None  # pyarrow agrees


def test_decimal_bytes_compare_signed_not_bytewise():
    # byte-wise, 0xFF.. (negative) would be the max; signed it is the min
    table = pa.table({"d": dec([-1, 1], 9, 0)})
    ours, theirs, _ = ours_for_column(write_pa(table), table, 0)
    assert int.from_bytes(ours.min_value, "big", signed=True) == -1
    assert ours.min_value == theirs.min_value


@settings(max_examples=40, deadline=None, suppress_health_check=SUPPRESS)
@given(st.lists(st.one_of(st.none(), st.integers(-(2**31), 2**31 - 1)), min_size=1, max_size=40),
       st.booleans())
def test_int32_random_vs_pyarrow(values, unsigned):
    if unsigned:
        values = [None if v is None else v % 2**32 for v in values]
    table = pa.table({"c": pa.array(values, pa.uint32() if unsigned else pa.int32())})
    ours, theirs, _ = ours_for_column(write_pa(table), table, 0)
    assert (ours.min_value, ours.max_value, ours.null_count) == (theirs.min_value, theirs.max_value,
                                                                 theirs.null_count)


binary_values = st.lists(st.sampled_from([0, 1, 0x61, 0x7F, 0x80, 0xFF]), max_size=12).map(bytes)


@settings(max_examples=40, deadline=None, suppress_health_check=SUPPRESS)
@given(st.lists(st.one_of(st.none(), binary_values), min_size=1, max_size=30))
def test_binary_random_vs_pyarrow(values):
    table = pa.table({"c": pa.array(values, pa.binary())})
    ours, theirs, _ = ours_for_column(write_pa(table), table, 0)
    assert (ours.min_value, ours.max_value, ours.null_count) == (theirs.min_value, theirs.max_value,
                                                                 theirs.null_count)


@settings(max_examples=40, deadline=None, suppress_health_check=SUPPRESS)
@given(st.lists(st.one_of(st.none(), st.floats(width=32), st.sampled_from([0.0, -0.0, math.nan])),
                min_size=1, max_size=30))
def test_float_random_vs_pyarrow(values):
    table = pa.table({"c": pa.array(values, pa.float32())})
    ours, theirs, _ = ours_for_column(write_pa(table), table, 0)
    assert (ours.min_value, ours.max_value, ours.null_count) == (theirs.min_value, theirs.max_value,
                                                                 theirs.null_count)


# ---------------------------------------------------------------------------
# vectorized byte-wise min/max
# ---------------------------------------------------------------------------
@settings(max_examples=200, deadline=None)
@given(st.lists(st.lists(st.sampled_from([0, 1, 2, 0xFF]), max_size=20).map(bytes), min_size=1, max_size=40))
def test_binary_argminmax_matches_python_order(values):
    arr = BinaryArray.from_pylist(values)
    i, j = binary_argminmax(arr)
    assert arr[i] == min(values)
    assert arr[j] == max(values)


def test_binary_argminmax_on_sliced_array_and_matrix():
    base = BinaryArray.from_pylist([b"zzz", b"b\x00", b"b", b"ba", b"a" * 30, b"zz"])
    sub = base.slice(1, 5)  # b"b\x00", b"b", b"ba", b"a"*30
    i, j = binary_argminmax(sub)
    assert (sub[i], sub[j]) == (b"a" * 30, b"ba")
    mat = np.array([[3, 0, 0], [2, 255, 255], [3, 0, 1]], np.uint8)
    assert binary_argminmax(mat) == (1, 2)


def test_binary_min_max_1m_16_byte_strings():
    rng = np.random.default_rng(7)
    arr = BinaryArray.from_fixed(rng.integers(0, 256, (1_000_000, 16), dtype=np.uint8))
    stats = compute_statistics(arr, PT.BYTE_ARRAY, null_count=0, sort_order=U)
    py = arr.to_pylist()
    assert stats.min_value == min(py) and stats.max_value == max(py)


def test_variable_length_min_max_1m():
    rng = np.random.default_rng(8)
    lens = rng.integers(0, 40, 1_000_000)
    off = np.zeros(len(lens) + 1, np.int64)
    np.cumsum(lens, out=off[1:])
    arr = BinaryArray(off, rng.integers(0, 4, int(off[-1]), dtype=np.uint8))  # many shared prefixes
    stats = compute_statistics(arr, PT.BYTE_ARRAY, null_count=0, sort_order=U, max_binary_length=1000)
    py = arr.to_pylist()
    assert stats.min_value == min(py) and stats.max_value == max(py)


# ---------------------------------------------------------------------------
# decimals, floats, truncation
# ---------------------------------------------------------------------------
def _twos(v: int, width: int | None = None) -> bytes:
    if width is None:
        width = max(1, (v.bit_length() + 8) // 8)
    return v.to_bytes(width, "big", signed=True)


@settings(max_examples=150, deadline=None)
@given(st.lists(st.integers(-(2**70), 2**70), min_size=1, max_size=30), st.booleans())
def test_decimal_byte_array_sign_extension(ints, pad):
    # minimal-length encodings (differing lengths), optionally with redundant sign bytes
    raw = [_twos(v) if not pad or i % 2 else _twos(v, 12) for i, v in enumerate(ints)]
    st_ = compute_statistics(BinaryArray.from_pylist(raw), PT.BYTE_ARRAY, null_count=0, sort_order=S,
                             logical_kind="DECIMAL")
    assert int.from_bytes(st_.min_value, "big", signed=True) == min(ints)
    assert int.from_bytes(st_.max_value, "big", signed=True) == max(ints)
    assert st_.min is None and st_.is_min_value_exact is True


def test_decimal_empty_byte_array_is_zero():
    arr = BinaryArray.from_pylist([b"", b"\xff", b"\x01"])
    st_ = compute_statistics(arr, PT.BYTE_ARRAY, null_count=0, sort_order=S, logical_kind="DECIMAL")
    assert (st_.min_value, st_.max_value) == (b"\xff", b"\x01")
    arr = BinaryArray.from_pylist([b"", b"\x01"])
    st_ = compute_statistics(arr, PT.BYTE_ARRAY, null_count=0, sort_order=S, logical_kind="DECIMAL")
    assert st_.min_value == b""


def test_float_rules():
    v = np.array([np.nan, 0.0, np.nan], np.float64)
    st_ = compute_statistics(v, PT.DOUBLE, null_count=2, sort_order=S)
    assert struct.unpack("<d", st_.min_value)[0] == 0 and math.copysign(1, struct.unpack("<d", st_.min_value)[0]) < 0
    assert st_.max_value == struct.pack("<d", 0.0)
    assert st_.nan_count == 2 and st_.null_count == 2
    st_ = compute_statistics(np.array([np.nan], np.float32), PT.FLOAT, null_count=0, sort_order=S)
    assert st_.min_value is None and st_.max_value is None and st_.nan_count == 1
    st_ = compute_statistics(np.array([], np.float32), PT.FLOAT, null_count=3, sort_order=S)
    assert st_.nan_count == 0 and st_.null_count == 3 and st_.min_value is None
    st_ = compute_statistics(np.zeros(0, np.int32), PT.INT32, null_count=3, sort_order=S)
    assert st_.nan_count is None and st_.min_value is None


def test_undefined_order_writes_only_null_count():
    int96 = np.arange(24, dtype=np.uint8).reshape(2, 12)
    st_ = compute_statistics(int96, PT.INT96, null_count=1, sort_order=X)
    assert st_.null_count == 1 and st_.min_value is None and st_.min is None
    st_ = compute_statistics(int96, PT.FIXED_LEN_BYTE_ARRAY, null_count=0, sort_order=X, logical_kind="INTERVAL")
    assert st_.min_value is None


@settings(max_examples=300, deadline=None)
@given(binary_values.filter(bool), st.integers(1, 8))
def test_truncation_invariants_bytes(value, limit):
    lo, lo_exact = truncate_min_value(value, limit)
    hi, hi_exact = truncate_max_value(value, limit)
    assert lo <= value <= hi
    assert len(lo) <= limit or lo == value
    assert lo_exact == (lo == value)
    if not hi_exact:
        assert len(hi) <= limit and hi > value
    else:
        assert hi == value


utf8_text = st.text(alphabet=st.sampled_from(["a", "z", "\x7f", "é", "\u07ff", "\u0800", "日", "\uffff",
                                              "\U0001f600", "\U0010ffff", "\ud7ff"]), min_size=1, max_size=10)


@settings(max_examples=300, deadline=None)
@given(utf8_text, st.integers(1, 12))
def test_truncation_invariants_utf8(text, limit):
    value = text.encode("utf-8")
    lo, _ = truncate_min_value(value, limit, utf8=True)
    hi, hi_exact = truncate_max_value(value, limit, utf8=True)
    lo.decode("utf-8")  # never split a code point
    hi.decode("utf-8")
    assert lo <= value <= hi
    assert len(lo) <= limit or lo == value
    assert hi_exact or (len(hi) <= limit and hi > value)


def test_truncation_examples():
    assert truncate_max_value(b"ab\xff\xff\xffz", 4) == (b"ac", False)
    assert truncate_max_value(b"\xff\xff\xff", 2) == (b"\xff\xff\xff", True)
    assert truncate_min_value(b"abcdef", 3) == (b"abc", False)
    # "é" is two bytes: a limit of 3 on "aéé" must not keep half of the second "é"
    assert truncate_min_value("aéé".encode(), 4, utf8=True) == ("aé".encode(), False)
    assert truncate_max_value("aéé".encode(), 4, utf8=True) == ("aê".encode(), False)
    # U+007F -> U+0080 would grow from 1 to 2 bytes: increment the previous code point instead
    assert truncate_max_value(b"a\x7f\x7fz", 2, utf8=True) == (b"b", False)
    # the last code point cannot be incremented (U+10FFFF): fall back to the full value
    top = "\U0010ffff\U0010ffff".encode()
    assert truncate_max_value(top, 5, utf8=True) == (top, True)
    # surrogates are skipped: U+D7FF + 1 -> U+E000 (same 3-byte length)
    assert truncate_max_value("\ud7ffx".encode(), 3, utf8=True) == ("\ue000".encode(), False)


def test_compute_statistics_truncates_strings():
    values = ["a" * 100, "b" * 10 + "é" * 60, "b" * 10]
    arr = BinaryArray.from_pylist(values)
    st_ = compute_statistics(arr, PT.BYTE_ARRAY, null_count=0, sort_order=U, logical_kind="STRING",
                             max_binary_length=15)
    assert st_.min_value == b"a" * 15 and st_.is_min_value_exact is False
    assert st_.max_value == ("b" * 10 + "éê").encode() and st_.is_max_value_exact is False
    assert len(st_.max_value) <= 15
    # FLBA is never truncated
    mat = np.full((2, 70), 0x41, np.uint8)
    st_ = compute_statistics(mat, PT.FIXED_LEN_BYTE_ARRAY, null_count=0, sort_order=U, type_length=70,
                             max_binary_length=8)
    assert len(st_.min_value) == 70 and st_.is_max_value_exact is True


def test_truncated_string_bounds_vs_pyarrow_values():
    # pyarrow never truncates chunk statistics; check our truncated bounds still bracket its exact ones
    words = ["x" * 90 + "a", "y" * 80 + "é" * 30, "mmm", "\U0001f600" * 40]
    table = pa.table({"s": pa.array(words)})
    data = write_pa(table)
    ours, theirs, _ = ours_for_column(data, table, 0, max_binary_length=64)
    assert ours.min_value <= theirs.min_value and ours.max_value >= theirs.max_value
    assert len(ours.min_value) <= 64 and len(ours.max_value) <= 64
    ours.max_value.decode("utf-8")
    assert ours.is_max_value_exact is False and ours.is_min_value_exact is True


# ---------------------------------------------------------------------------
# comparisons and sort orders
# ---------------------------------------------------------------------------
def test_sort_order_for():
    C = T.ConvertedType
    assert sort_order_for(PT.INT32, None, None) is S
    assert sort_order_for(PT.INT32, "INTEGER_UNSIGNED", None) is U
    assert sort_order_for(PT.INT64, None, C.UINT_64) is U
    assert sort_order_for(PT.INT32, "DATE", C.DATE) is S
    assert sort_order_for(PT.INT32, "DECIMAL", C.DECIMAL) is S
    assert sort_order_for(PT.BYTE_ARRAY, "STRING", C.UTF8) is U
    assert sort_order_for(PT.BYTE_ARRAY, None, None) is U
    assert sort_order_for(PT.BYTE_ARRAY, "DECIMAL", None) is S
    assert sort_order_for(PT.FIXED_LEN_BYTE_ARRAY, None, C.DECIMAL) is S
    assert sort_order_for(PT.FIXED_LEN_BYTE_ARRAY, "FLOAT16", None) is S
    assert sort_order_for(PT.FIXED_LEN_BYTE_ARRAY, "UUID", None) is U
    assert sort_order_for(PT.FIXED_LEN_BYTE_ARRAY, "INTERVAL", C.INTERVAL) is X
    assert sort_order_for(PT.FIXED_LEN_BYTE_ARRAY, None, C.INTERVAL) is X
    assert sort_order_for(PT.INT96, None, None) is X
    assert sort_order_for(PT.BYTE_ARRAY, "GEOMETRY", None) is X
    assert sort_order_for(PT.FLOAT, None, None) is S
    assert sort_order_for(PT.BOOLEAN, None, None) is S


def test_compare_rules():
    assert compare(-1, 1, PT.INT32, U) == 1  # 0xFFFFFFFF > 1 unsigned
    assert compare(-1, 1, PT.INT32, S) == -1
    assert compare(2**63, 5, PT.INT64, U) == 1
    assert compare(b"\xff", b"\x01\x00", PT.FIXED_LEN_BYTE_ARRAY, S) == -1  # -1 < 256
    assert compare(b"\xff\xff", b"\xff", PT.BYTE_ARRAY, S) == 0  # sign extension: both -1
    assert compare(b"\xff", -1, PT.BYTE_ARRAY, S) == 0
    assert compare(b"ab", b"ab\x00", PT.BYTE_ARRAY, U) == -1
    assert compare(b"\x80", b"\x7f", PT.BYTE_ARRAY, U) == 1
    assert compare(-0.0, 0.0, PT.DOUBLE, S) == 0  # a +0 min never excludes -0 and vice versa
    assert compare(math.nan, math.inf, PT.DOUBLE, S) == 1
    assert compare(math.nan, math.nan, PT.FLOAT, S) == 0
    assert compare(b"\x00\x3c", 0.5, PT.FIXED_LEN_BYTE_ARRAY, S, "FLOAT16") == 1  # 1.0 > 0.5
    assert compare(True, False, PT.BOOLEAN, S) == 1
    with pytest.raises(ValueError):
        compare(b"x", b"y", PT.INT96, X)


def _decoded(raw, ptype, order, kind=None):
    return decode_stat_value(raw, ptype, None, kind) if raw is not None else None


@settings(max_examples=60, deadline=None, suppress_health_check=SUPPRESS)
@given(st.data())
def test_decoded_bounds_bracket_every_value(data):
    case = data.draw(st.sampled_from(["i32", "u32", "u64", "f64", "str", "dec", "f16"]))
    n = data.draw(st.integers(1, 40))
    if case == "i32":
        vals = np.array(data.draw(st.lists(st.integers(-(2**31), 2**31 - 1), min_size=n, max_size=n)), np.int32)
        ptype, order, kind, items = PT.INT32, S, None, vals.tolist()
    elif case == "u32":
        vals = np.array(data.draw(st.lists(st.integers(0, 2**32 - 1), min_size=n, max_size=n)),
                        np.uint32).view(np.int32)
        ptype, order, kind, items = PT.INT32, U, "INTEGER_UNSIGNED", vals.tolist()
    elif case == "u64":
        vals = np.array(data.draw(st.lists(st.integers(0, 2**64 - 1), min_size=n, max_size=n)),
                        np.uint64).view(np.int64)
        ptype, order, kind, items = PT.INT64, U, "INTEGER_UNSIGNED", vals.tolist()
    elif case == "f64":
        vals = np.array(data.draw(st.lists(st.floats(), min_size=n, max_size=n)), np.float64)
        ptype, order, kind, items = PT.DOUBLE, S, None, vals.tolist()
    elif case == "f16":
        vals16 = np.array(data.draw(st.lists(st.floats(width=16), min_size=n, max_size=n)), np.float16)
        vals = vals16.astype("<f2").view(np.uint8).reshape(n, 2)
        ptype, order, kind, items = PT.FIXED_LEN_BYTE_ARRAY, S, "FLOAT16", [float(v) for v in vals16]
    elif case == "str":
        items = [t.encode() for t in data.draw(st.lists(utf8_text, min_size=n, max_size=n))]
        vals = BinaryArray.from_pylist(items)
        ptype, order, kind = PT.BYTE_ARRAY, U, "STRING"
    else:
        ints = data.draw(st.lists(st.integers(-(2**40), 2**40), min_size=n, max_size=n))
        items = ints
        vals = BinaryArray.from_pylist([_twos(v) for v in ints])
        ptype, order, kind = PT.BYTE_ARRAY, S, "DECIMAL"
    limit = data.draw(st.integers(1, 10))
    stats = compute_statistics(vals, ptype, null_count=0, sort_order=order, logical_kind=kind,
                               type_length=2 if kind == "FLOAT16" else None, max_binary_length=limit)
    cs = ChunkStats.from_fields(stats, ptype, order, column_order="TYPE_ORDER", logical_kind=kind)
    real = [v for v in items if not (isinstance(v, float) and v != v)]
    if not real:
        assert cs.min is None and cs.max is None
        return
    assert cs.min is not None and cs.max is not None
    for v in real:
        assert compare(cs.min, v, ptype, order, kind) <= 0 <= compare(cs.max, v, ptype, order, kind)
    # exact bounds are attained
    if stats.is_min_value_exact:
        assert any(compare(cs.min, v, ptype, order, kind) == 0 for v in real)
    if stats.is_max_value_exact:
        assert any(compare(cs.max, v, ptype, order, kind) == 0 for v in real)


# ---------------------------------------------------------------------------
# read side: ChunkStats trust rules, fixtures from parquet-testing
# ---------------------------------------------------------------------------
def fixture(name: str) -> bytes:
    path = FIXTURES / name
    if not path.exists():
        pytest.fail(f"fixture {name} missing: tests read ../shared/fixtures")
    return path.read_bytes()


def chunk_stats_of(data: bytes, col: int = 0, rg: int = 0) -> tuple[ChunkStats, T.FileMetaData]:
    fm = footer(data)
    el = leaf_schema(fm)[col]
    kind = logical_kind_of(el)
    order = sort_order_for(el.type, kind, el.converted_type)
    co = column_order_name(fm.column_orders[col]) if fm.column_orders else None
    md = fm.row_groups[rg].columns[col].meta_data
    stored = None if md.statistics is None else statistics_fields(md.statistics)
    cs = ChunkStats.from_fields(stored, el.type, order, column_order=co, created_by=fm.created_by,
                                type_length=el.type_length, logical_kind=kind)
    return cs, fm


@needs(FIXTURES)
def test_nan_in_stats_max_ignored():
    cs, fm = chunk_stats_of(fixture("nan_in_stats.parquet"))
    assert math.isnan(struct.unpack("<d", fm.row_groups[0].columns[0].meta_data.statistics.max_value)[0])
    assert cs.max is None
    assert cs.min == 1.0
    assert cs.null_count == 0


@needs(FIXTURES)
def test_float16_fixture_zero_bounds():
    cs, _ = chunk_stats_of(fixture("float16_zeros_and_nans.parquet"))
    assert cs.min == 0 and math.copysign(1, cs.min) < 0
    assert cs.max == 0 and math.copysign(1, cs.max) > 0
    cs, _ = chunk_stats_of(fixture("float16_nonzeros_and_nans.parquet"))
    values = [v for v in pq.read_table(FIXTURES / "float16_nonzeros_and_nans.parquet").column(0).to_pylist()
              if v is not None and v == v]
    assert cs.min == min(values) and cs.max == max(values)


@needs(FIXTURES)
def test_legacy_decimal_stats_from_parquet_mr_1_8_are_not_trusted():
    data = fixture("fixed_length_decimal.parquet")
    cs, fm = chunk_stats_of(data)
    md = fm.row_groups[0].columns[0].meta_data
    real_min = min(int(d.scaleb(2)) for d in pq.read_table(FIXTURES / "fixed_length_decimal.parquet").column(0)
                   .to_pylist())
    # the stored legacy min (signed-byte comparison) is really wrong: 200 > 100
    assert int.from_bytes(md.statistics.min, "big", signed=True) > real_min
    assert cs.min is None and cs.max is None and cs.null_count == 0


@needs(FIXTURES)
def test_legacy_int32_decimal_stats_trusted():
    cs, _ = chunk_stats_of(fixture("int32_decimal.parquet"))
    assert (cs.min, cs.max, cs.source) == (100, 2400, "legacy")


@needs(FIXTURES)
def test_string_stats_fixture():
    cs, _ = chunk_stats_of(fixture("data_index_bloom_encoding_stats.parquet"))
    assert (cs.min, cs.max, cs.min_exact) == (b"Hello", b"today", None)


@needs(FIXTURES)
def test_single_nan_fixture_has_no_bounds():
    cs, _ = chunk_stats_of(fixture("single_nan.parquet"))
    assert cs.min is None and cs.max is None and cs.null_count == 1


def test_chunk_stats_rules():
    i32 = lambda v: struct.pack("<i", v)  # noqa: E731
    st_ = StatisticsFields(min=i32(-5), max=i32(7), null_count=-1)
    # legacy signed int stats are fine without column orders
    cs = ChunkStats.from_fields(st_, PT.INT32, S, column_order=None, created_by="parquet-mr version 1.6.0")
    assert (cs.min, cs.max, cs.null_count, cs.source) == (-5, 7, None, "legacy")
    # ...but not for an unsigned column
    assert ChunkStats.from_fields(st_, PT.INT32, U, column_order=None).min is None
    # min_value without column orders is undefined -> ignored
    st_ = StatisticsFields(min_value=i32(-1), max_value=i32(3), null_count=0)
    assert ChunkStats.from_fields(st_, PT.INT32, S, column_order=None).min is None
    cs = ChunkStats.from_fields(st_, PT.INT32, U, column_order="TYPE_ORDER")
    assert (cs.min, cs.max) == (2**32 - 1, 3)
    # an unknown column order (a union member we do not know) -> ignore
    assert ChunkStats.from_fields(st_, PT.INT32, S, column_order=column_order_name(T.ColumnOrder())).min is None
    # float zeros under TYPE_ORDER: +0 min may hide -0, -0 max may hide +0
    st_ = StatisticsFields(min_value=struct.pack("<d", 0.0), max_value=struct.pack("<d", -0.0))
    cs = ChunkStats.from_fields(st_, PT.DOUBLE, S, column_order="TYPE_ORDER")
    assert math.copysign(1, cs.min) < 0 and math.copysign(1, cs.max) > 0
    # NaN min under IEEE 754 total order is dropped as well
    st_ = StatisticsFields(min_value=struct.pack("<d", math.nan), max_value=struct.pack("<d", 1.0), nan_count=3)
    cs = ChunkStats.from_fields(st_, PT.DOUBLE, S, column_order="IEEE_754_TOTAL_ORDER")
    assert (cs.min, cs.max, cs.nan_count) == (None, 1.0, 3)
    # undefined order -> never bounds
    assert ChunkStats.from_fields(StatisticsFields(min_value=b"x" * 12, max_value=b"y" * 12), PT.INT96, X,
                                  column_order="TYPE_ORDER").min is None
    assert ChunkStats.from_fields(None, PT.INT32, S) == ChunkStats()


def test_legacy_binary_rules():
    assert parse_created_by("parquet-mr version 1.8.2 (build abc)") == ("parquet-mr", (1, 8, 2))
    assert parse_created_by("parquet-cpp-arrow version 26.0.1") == ("parquet-cpp-arrow", (26, 0, 1))
    assert parse_created_by("garbage") is None
    FL = PT.FIXED_LEN_BYTE_ARRAY
    assert not legacy_stats_trusted(FL, S, "parquet-mr version 1.7.0", b"\x01", b"\x01")  # PARQUET-251
    assert not legacy_stats_trusted(FL, S, "parquet-mr version 1.8.2", b"\x01", b"\x02")  # PARQUET-686
    assert legacy_stats_trusted(FL, S, "parquet-mr version 1.8.2", b"\x02", b"\x02")
    assert legacy_stats_trusted(FL, S, "parquet-mr version 1.10.0", b"\x01", b"\x02")
    assert not legacy_stats_trusted(FL, S, None, b"\x01", b"\x02")
    assert not legacy_stats_trusted(PT.BYTE_ARRAY, U, "parquet-cpp-arrow version 26.0.1", b"a", b"b")
    assert legacy_stats_trusted(PT.BYTE_ARRAY, U, "parquet-cpp-arrow version 26.0.1", b"a", b"a")
    assert not legacy_stats_trusted(PT.BYTE_ARRAY, U, "parquet-cpp version 1.2.0", b"a", b"b")
    assert legacy_stats_trusted(PT.DOUBLE, S, None, b"1" * 8, b"2" * 8)


def test_decode_stat_value():
    assert decode_stat_value(struct.pack("<i", -3), PT.INT32) == -3
    assert decode_stat_value(struct.pack("<i", -3), PT.INT32, logical_kind="INTEGER_UNSIGNED") == 2**32 - 3
    assert decode_stat_value(b"\x01", PT.BOOLEAN) is True
    assert decode_stat_value(struct.pack("<f", 1.5), PT.FLOAT) == 1.5
    assert decode_stat_value(b"\xff\x38", PT.FIXED_LEN_BYTE_ARRAY, 2, "DECIMAL") == -200
    assert decode_stat_value(b"abc", PT.BYTE_ARRAY) == b"abc"
    assert decode_stat_value(b"\x00\x3c", PT.FIXED_LEN_BYTE_ARRAY, 2, "FLOAT16") == 1.0
    with pytest.raises(CorruptFileError):
        decode_stat_value(b"\x00\x00", PT.INT32)


# ---------------------------------------------------------------------------
# page index: building vs pyarrow, reading fixtures
# ---------------------------------------------------------------------------
def _pages_of(data: bytes, fm: T.FileMetaData, col: int) -> tuple[list[int], T.OffsetIndex]:
    cc = fm.row_groups[0].columns[col]
    oi = read_offset_index(data, cc)
    firsts = [p.first_row_index for p in oi.page_locations]
    return firsts + [fm.row_groups[0].num_rows], oi


def our_column_index(data: bytes, table: pa.Table, col: int):
    fm = footer(data)
    el = leaf_schema(fm)[col]
    kind = logical_kind_of(el)
    order = sort_order_for(el.type, kind, el.converted_type)
    bounds, oi = _pages_of(data, fm, col)
    arr = table.column(col).combine_chunks()
    stats, nulls, unencoded = [], [], []
    for a, b in zip(bounds, bounds[1:]):
        page = arr.slice(a, b - a)
        values = to_values(page, el)
        stats.append(compute_statistics(values, el.type, null_count=page.null_count, sort_order=order,
                                        logical_kind=kind, type_length=el.type_length, max_binary_length=1 << 20))
        nulls.append(len(values) == 0)
        if el.type == PT.BYTE_ARRAY:
            unencoded.append(int(values.nbytes))
    ci = build_column_index(stats, nulls, el.type, order, logical_kind=kind, type_length=el.type_length)
    locs = [(p.offset, p.compressed_page_size, p.first_row_index) for p in oi.page_locations]
    our_oi = build_offset_index(locs, unencoded if el.type == PT.BYTE_ARRAY else None)
    return ci, our_oi, fm, oi


MULTIPAGE = {
    "asc_int": pa.array(np.arange(1000, dtype=np.int32)),
    "desc_int": pa.array(np.arange(1000, 0, -1, dtype=np.int64)),
    "random_int": pa.array(RNG.integers(-50, 50, 1000).astype(np.int32)),
    "const_int": pa.array(np.full(1000, 5, np.int32)),
    "asc_uint_crossing_sign": pa.array(np.arange(2**31 - 500, 2**31 + 500, dtype=np.uint32)),
    "desc_str": pa.array([f"k{999 - i:04d}" for i in range(1000)]),
    "asc_str_with_null_pages": pa.array([None if 300 <= i < 500 else f"v{i:05d}" for i in range(1000)]),
    "random_binary": pa.array([bytes(RNG.integers(0, 256, RNG.integers(0, 6)).astype(np.uint8)) for _ in range(1000)],
                              pa.binary()),
    "asc_double_zeros_nan": pa.array(np.concatenate([np.linspace(-1, 1, 999), [np.nan]])),
    "asc_decimal_negative": dec(list(range(-500, 500)), 9, 2),
    "desc_flba": pa.array([(999 - i).to_bytes(4, "big") for i in range(1000)], pa.binary(4)),
    "date_asc": pa.array(np.arange(1000, dtype=np.int32), pa.int32()).cast(pa.date32()),
}


@pytest.mark.parametrize("name", sorted(MULTIPAGE))
def test_column_index_matches_pyarrow(name):
    table = pa.table({"c": MULTIPAGE[name]})
    data = write_pa(table, use_dictionary=False, data_page_size=512, write_batch_size=50, max_rows_per_page=100)
    ci, our_oi, fm, their_oi = our_column_index(data, table, 0)
    theirs = read_column_index(data, fm.row_groups[0].columns[0])
    assert len(their_oi.page_locations) > 3
    assert theirs is not None and ci is not None
    assert ci.null_pages == theirs.null_pages
    assert ci.min_values == theirs.min_values
    assert ci.max_values == theirs.max_values
    assert ci.null_counts == theirs.null_counts
    assert ci.boundary_order == theirs.boundary_order
    assert our_oi.page_locations == their_oi.page_locations
    assert our_oi.unencoded_byte_array_data_bytes == their_oi.unencoded_byte_array_data_bytes


def test_expected_boundary_orders():
    def order_of(name):
        table = pa.table({"c": MULTIPAGE[name]})
        data = write_pa(table, use_dictionary=False, max_rows_per_page=100)
        return our_column_index(data, table, 0)[0].boundary_order

    BO = T.BoundaryOrder
    assert order_of("asc_int") == BO.ASCENDING
    assert order_of("desc_str") == BO.DESCENDING
    assert order_of("desc_flba") == BO.DESCENDING
    assert order_of("asc_uint_crossing_sign") == BO.ASCENDING  # unsigned compare, not signed
    assert order_of("asc_decimal_negative") == BO.ASCENDING  # signed two's complement, not byte-wise
    assert order_of("random_int") == BO.UNORDERED
    assert order_of("const_int") == BO.ASCENDING


@settings(max_examples=25, deadline=None, suppress_health_check=SUPPRESS)
@given(st.lists(st.one_of(st.none(), st.integers(-20, 20)), min_size=1, max_size=60), st.integers(1, 8),
       st.sampled_from(["sorted", "reversed", "raw"]))
def test_column_index_random_vs_pyarrow(values, rows_per_page, arrange):
    if arrange != "raw":
        present = sorted(v for v in values if v is not None)
        if arrange == "reversed":
            present.reverse()
        it = iter(present)
        values = [None if v is None else next(it) for v in values]
    table = pa.table({"c": pa.array(values, pa.int32())})
    data = write_pa(table, use_dictionary=False, max_rows_per_page=rows_per_page)
    ci, _, fm, _ = our_column_index(data, table, 0)
    theirs = read_column_index(data, fm.row_groups[0].columns[0])
    assert (ci.null_pages, ci.min_values, ci.max_values, ci.null_counts) == (
        theirs.null_pages, theirs.min_values, theirs.max_values, theirs.null_counts)
    assert ci.boundary_order == theirs.boundary_order
    if all(ci.null_pages):
        assert ci.boundary_order == T.BoundaryOrder.UNORDERED
    elif arrange == "sorted":
        assert ci.boundary_order == T.BoundaryOrder.ASCENDING
    elif arrange == "reversed":
        nonnull = [i for i, f in enumerate(ci.null_pages) if not f]
        mins = [struct.unpack("<i", ci.min_values[i])[0] for i in nonnull]
        if len(set(mins)) > 1:
            assert ci.boundary_order == T.BoundaryOrder.DESCENDING


def test_column_index_refused_like_pyarrow_for_all_nan_page():
    table = pa.table({"c": pa.array([1.0, math.nan, math.nan, math.nan, 2.0, 3.0])})
    data = write_pa(table, use_dictionary=False, max_rows_per_page=2)
    ci, *_ = our_column_index(data, table, 0)
    assert ci is None
    assert read_column_index(data, footer(data).row_groups[0].columns[0]) is None


def test_column_index_rules_and_nan_counts():
    s1 = compute_statistics(np.array([1.0, np.nan]), PT.DOUBLE, null_count=0, sort_order=S)
    s2 = compute_statistics(np.array([], np.float64), PT.DOUBLE, null_count=4, sort_order=S)
    s3 = compute_statistics(np.array([2.0, 5.0]), PT.DOUBLE, null_count=1, sort_order=S)
    ci = build_column_index([s1, s2, s3], [False, True, False], PT.DOUBLE, S)
    assert ci.nan_counts == [1, 0, 0] and ci.null_counts == [0, 4, 1]
    assert ci.min_values[1] == b"" and ci.max_values[1] == b""
    assert ci.boundary_order == T.BoundaryOrder.ASCENDING
    # -0.0 and +0.0 are equal for the boundary order: max +0 then max -0 is not a descent
    z = [compute_statistics(np.array(v), PT.DOUBLE, null_count=0, sort_order=S) for v in ([-1.0, 0.0], [0.0, -0.0])]
    assert build_column_index(z, [False, False], PT.DOUBLE, S).boundary_order == T.BoundaryOrder.ASCENDING
    assert build_column_index([s2], [True], PT.DOUBLE, S).boundary_order == T.BoundaryOrder.UNORDERED
    assert build_column_index([s1], [False], PT.INT96, X) is None
    i1 = compute_statistics(np.array([5], np.int32), PT.INT32, null_count=0, sort_order=S)
    assert build_column_index([i1], [False], PT.INT32, S).nan_counts is None
    # float16 pages: nan_counts, value order
    f16 = [np.array([[0x00, 0x3C]], np.uint8), np.array([[0x00, 0xC0]], np.uint8)]  # 1.0, -2.0
    pst = [compute_statistics(v, PT.FIXED_LEN_BYTE_ARRAY, null_count=0, sort_order=S, logical_kind="FLOAT16",
                              type_length=2) for v in f16]
    ci = build_column_index(pst, [False, False], PT.FIXED_LEN_BYTE_ARRAY, S, logical_kind="FLOAT16", type_length=2)
    assert ci.boundary_order == T.BoundaryOrder.DESCENDING and ci.nan_counts == [0, 0]


def test_offset_index_validation():
    oi = build_offset_index([(4, 100, 0), (104, 50, 10)], [7, 8])
    assert [p.first_row_index for p in oi.page_locations] == [0, 10]
    assert oi.unencoded_byte_array_data_bytes == [7, 8]
    assert build_offset_index([(4, 100, 0)], None).unencoded_byte_array_data_bytes is None
    with pytest.raises(ParquetError):
        build_offset_index([(4, 100, 0), (104, 50, 0)], None)
    with pytest.raises(ParquetError):
        build_offset_index([(4, 100, 1)], None)
    with pytest.raises(ParquetError):
        build_offset_index([(4, 100, 0)], [1, 2])


def _fixture_pages(data: bytes, fm: T.FileMetaData, col: int):
    cc = fm.row_groups[0].columns[col]
    oi = read_offset_index(data, cc)
    firsts = [p.first_row_index for p in oi.page_locations] + [fm.row_groups[0].num_rows]
    return read_column_index(data, cc), [b - a for a, b in zip(firsts, firsts[1:])], firsts


@needs(FIXTURES)
def test_int32_with_null_pages_fixture():
    data = fixture("int32_with_null_pages.parquet")
    fm = footer(data)
    ci, rows, firsts = _fixture_pages(data, fm, 0)
    assert column_index_is_usable(ci, num_pages=len(rows), page_row_counts=rows, ptype=PT.INT32)
    bounds = column_index_bounds(ci, PT.INT32, S, column_order=column_order_name(fm.column_orders[0]))
    values = pq.read_table(FIXTURES / "int32_with_null_pages.parquet").column(0).to_pylist()
    assert any(ci.null_pages)
    for i, (lo, hi) in enumerate(bounds):
        page = [v for v in values[firsts[i]:firsts[i + 1]] if v is not None]
        if ci.null_pages[i]:
            assert (lo, hi) == (None, None) and not page
        else:
            assert (lo, hi) == (min(page), max(page))
        assert ci.null_counts[i] == firsts[i + 1] - firsts[i] - len(page)
    # our builder reproduces parquet-mr's index from the same pages
    el = leaf_schema(fm)[0]
    pst = [compute_statistics(np.array([v for v in values[a:b] if v is not None], np.int32), PT.INT32,
                              null_count=sum(v is None for v in values[a:b]), sort_order=S)
           for a, b in zip(firsts, firsts[1:])]
    ours = build_column_index(pst, list(ci.null_pages), el.type, S)
    assert (ours.min_values, ours.max_values, ours.null_counts, ours.boundary_order) == (
        ci.min_values, ci.max_values, ci.null_counts, ci.boundary_order)


@needs(FIXTURES)
def test_bogus_column_index_is_not_usable():
    data = fixture("datapage_v1-uncompressed-checksum.parquet")
    fm = footer(data)
    for col in range(len(fm.row_groups[0].columns)):
        ci, rows, _ = _fixture_pages(data, fm, col)
        assert all(ci.null_pages) and all(c < 0 for c in ci.null_counts)
        assert not column_index_is_usable(ci, num_pages=len(rows), page_row_counts=rows, ptype=PT.INT32)
        assert not column_index_is_usable(ci)
        # every null page with no null count at all is just as suspicious
        ci.null_counts = None
        assert not column_index_is_usable(ci)


def test_column_index_is_usable_checks():
    good = T.ColumnIndex(null_pages=[False, True], min_values=[struct.pack("<i", 1), b""],
                         max_values=[struct.pack("<i", 2), b""], boundary_order=1, null_counts=[0, 5])
    assert column_index_is_usable(good, num_pages=2, page_row_counts=[3, 5], ptype=PT.INT32)
    assert not column_index_is_usable(good, num_pages=3)
    assert not column_index_is_usable(good, page_row_counts=[3, 6])  # null page with fewer nulls than rows
    bad = T.ColumnIndex(null_pages=[False], min_values=[b"\x01"], max_values=[b"\x02"], boundary_order=1)
    assert column_index_is_usable(bad)
    assert not column_index_is_usable(bad, ptype=PT.INT32)  # 1-byte INT32 bound
    bad = T.ColumnIndex(null_pages=[False, False], min_values=[b"a"], max_values=[b"b", b"c"], boundary_order=0)
    assert not column_index_is_usable(bad)
    bad = T.ColumnIndex(null_pages=[False], min_values=[b"a"], max_values=[b"b"], boundary_order=7)
    assert not column_index_is_usable(bad)


@needs(FIXTURES)
def test_alltypes_tiny_pages_boundary_orders_match_parquet_mr():
    data = fixture("alltypes_tiny_pages.parquet")
    fm = footer(data)
    checked = 0
    for col, el in enumerate(leaf_schema(fm)):
        cc = fm.row_groups[0].columns[col]
        ci = read_column_index(data, cc)
        kind = logical_kind_of(el)
        order = sort_order_for(el.type, kind, el.converted_type)
        if ci is None:
            assert order is X  # INT96 timestamp_col
            continue
        assert column_index_is_usable(ci, ptype=el.type)
        pst = [StatisticsFields(min_value=lo, max_value=hi, null_count=nc)
               for lo, hi, nc in zip(ci.min_values, ci.max_values, ci.null_counts)]
        ours = build_column_index(pst, list(ci.null_pages), el.type, order, logical_kind=kind)
        assert ours.boundary_order == ci.boundary_order, el.name
        checked += 1
    assert checked >= 10



# ---------------------------------------------------------------------------
# Level histograms (SizeStatistics and the ColumnIndex), against pyarrow 26
# ---------------------------------------------------------------------------
def _histogram_table() -> pa.Table:
    n = 1200
    return pa.table({
        "id": pa.array(np.arange(n), pa.int64()),
        "opt": pa.array([None if i % 4 == 1 else i for i in range(n)], pa.int32()),
        "tags": pa.array([[1, None, 5], [], None, [7]] * (n // 4), pa.list_(pa.int64())),
        "s": pa.array([{"a": 1, "b": ["x", "y"]}, None, {"a": None, "b": None}, {"a": 3, "b": []}] * (n // 4),
                      pa.struct([("a", pa.int32()), ("b", pa.list_(pa.string()))])),
        "m": pa.array([[("k", 1)], None, [], [("a", None), ("b", 2)]] * (n // 4), pa.map_(pa.string(), pa.int32())),
        "ll": pa.array([[[1], [], None], None, [], [[None, 2]]] * (n // 4), pa.list_(pa.list_(pa.int16()))),
    }, schema=pa.schema([pa.field("id", pa.int64(), nullable=False), pa.field("opt", pa.int32()),
                         pa.field("tags", pa.list_(pa.int64())),
                         pa.field("s", pa.struct([("a", pa.int32()), ("b", pa.list_(pa.string()))])),
                         pa.field("m", pa.map_(pa.string(), pa.int32())),
                         pa.field("ll", pa.list_(pa.list_(pa.int16())))]))


def _level_index(path) -> dict:
    """(row group, leaf path) -> (page first rows, chunk rep/def histograms, page rep/def histograms),
    read with pqbloom's Thrift parser; an absent or empty histogram is None."""
    import pqbloom

    out = {}
    with pqbloom.ParquetFile(str(path)) as pf:
        data = Path(path).read_bytes()
        for rg, g in enumerate(pf.thrift_metadata.row_groups):
            for d, cc in zip(pf.columns, g.columns):
                oi = decode_prefix(T.OffsetIndex, data[cc.offset_index_offset:][:cc.offset_index_length])[0]
                ci = decode_prefix(T.ColumnIndex, data[cc.column_index_offset:][:cc.column_index_length])[0]
                ss = cc.meta_data.size_statistics
                out[rg, d.dotted_path] = (
                    [p.first_row_index for p in oi.page_locations],
                    (ss.repetition_level_histogram or None) if ss else None,
                    (ss.definition_level_histogram or None) if ss else None,
                    ci.repetition_level_histograms or None, ci.definition_level_histograms or None,
                    (d.max_repetition_level, d.max_definition_level))
    return out


def test_level_histograms_equal_pyarrow(tmp_path):
    """Chunk and per-page histograms of every leaf equal pyarrow's for the same pages.

    pqbloom cuts each column into pages of equal row counts; pyarrow is then asked for pages of
    that many rows (``max_rows_per_page``) so that both files hold the same pages, which the
    OffsetIndexes confirm before the histograms are compared."""
    import pqbloom

    t = _histogram_table()
    ours_path = tmp_path / "ours.parquet"
    pqbloom.write_table(t, ours_path, row_group_size=600, data_page_size=300, use_dictionary=False)
    ours = _level_index(ours_path)
    multi_page = 0
    for (rg, leaf), (first_rows, *hists, levels) in ours.items():
        top = leaf.split(".")[0]
        rows = first_rows[1] if len(first_rows) > 1 else 600
        peer_path = tmp_path / f"peer_{top}_{rows}.parquet"
        if not peer_path.exists():
            pq.write_table(t.select([top]), peer_path, row_group_size=600, write_page_index=True,
                           use_dictionary=False, data_page_size=1 << 30, max_rows_per_page=rows)
        peer = _level_index(peer_path)[rg, leaf]
        assert peer[0] == first_rows, (rg, leaf)
        assert hists == list(peer[1:5]), (rg, leaf)
        max_rep, max_def = levels
        # present exactly where the max level is > 0 (as pyarrow writes them)
        assert (hists[0] is not None) == (max_rep > 0) and (hists[1] is not None) == (max_def > 0)
        if max_rep > 0:
            assert hists[0][0] == 600  # rep level 0 starts each of the 600 rows
            assert len(hists[2]) == len(first_rows) * (max_rep + 1)
        multi_page += len(first_rows) > 1
    assert multi_page >= 8
    # the values: in pyarrow's own layout too (chunk level, pages chosen by pyarrow)
    pq.write_table(t, tmp_path / "peer_all.parquet", row_group_size=600, write_page_index=True)
    peer_all = _level_index(tmp_path / "peer_all.parquet")
    assert ours[0, "tags.list.element"][1:3] == peer_all[0, "tags.list.element"][1:3] == ([600, 300], [150, 150, 150, 450])
    assert ours[0, "s.b.list.element"][1:3] == ([600, 150], [150, 150, 150, 0, 300])
    for key, (_, rep, dfn, *_rest) in ours.items():
        assert (rep, dfn) == tuple(peer_all[key][1:3]), key


def test_level_histograms_of_data_page_v2_and_dictionary_pages(tmp_path):
    import pqbloom

    t = _histogram_table()
    p1, p2 = tmp_path / "v1.parquet", tmp_path / "v2.parquet"
    pqbloom.write_table(t, p1, row_group_size=600)
    pqbloom.write_table(t, p2, row_group_size=600, data_page_version="2.0", use_dictionary=False, data_page_size=512)
    a, b = _level_index(p1), _level_index(p2)
    for key in a:
        assert a[key][1:3] == b[key][1:3], key
        rep_pages, def_pages = b[key][3], b[key][4]
        max_rep, max_def = b[key][5]
        if def_pages is not None:  # the pages add up to the chunk
            w = max_def + 1
            assert [sum(def_pages[i::w]) for i in range(w)] == b[key][2]
        if rep_pages is not None:
            w = max_rep + 1
            assert [sum(rep_pages[i::w]) for i in range(w)] == b[key][1]
            assert rep_pages[0::w] == np.diff(b[key][0] + [600]).tolist()  # one rep level 0 per row


def test_build_column_index_level_histograms():
    st_ = [StatisticsFields(min_value=b"\x01\x00\x00\x00", max_value=b"\x02\x00\x00\x00", null_count=1)] * 2
    ci = build_column_index(st_, [False, False], PT.INT32, SortOrder.SIGNED,
                            repetition_level_histograms=[[3, 1], [2, 0]],
                            definition_level_histograms=[np.array([1, 0, 3]), np.array([0, 1, 1])])
    assert ci.repetition_level_histograms == [3, 1, 2, 0]
    assert ci.definition_level_histograms == [1, 0, 3, 0, 1, 1]
    assert build_column_index(st_, [False, False], PT.INT32, SortOrder.SIGNED).definition_level_histograms is None
    with pytest.raises(ValueError):
        build_column_index(st_, [False, False], PT.INT32, SortOrder.SIGNED, definition_level_histograms=[[1, 2]])
    with pytest.raises(ValueError):
        build_column_index(st_, [False, False], PT.INT32, SortOrder.SIGNED,
                           repetition_level_histograms=[[1, 2], [1, 2, 3]])


@settings(max_examples=200, deadline=None)
@given(st.integers(0, 4).flatmap(lambda m: st.tuples(
    st.just(m), st.lists(st.integers(0, m), max_size=60), st.integers(0, m))))
def test_level_histogram_counts_every_level(case):
    from pqbloom.file.column_writer import level_histogram

    max_level, levels, known = case
    arr = np.array(levels, np.int16)
    want = np.bincount(arr, minlength=max_level + 1) if len(arr) else np.zeros(max_level + 1, np.int64)
    got = level_histogram(arr, max_level, known, int(want[known]))
    assert got.tolist() == want.tolist()


def test_inspect_shows_level_histograms_pyarrow_wrote(tmp_path, capsys):
    from pqbloom.cli import main as cli

    path = tmp_path / "peer.parquet"
    pq.write_table(_histogram_table(), path, row_group_size=600, write_page_index=True)
    assert cli.main(["inspect", str(path), "--json"]) == 0
    info = json.loads(capsys.readouterr().out)
    cols = {c["column"]: c for c in info["row_groups"][0]["columns"]}
    assert cols["tags.list.element"]["size_statistics"]["repetition_level_histogram"] == [600, 300]
    assert cols["tags.list.element"]["size_statistics"]["definition_level_histogram"] == [150, 150, 150, 450]
    assert cols["opt"]["size_statistics"]["repetition_level_histogram"] is None
    assert cli.main(["inspect", str(path)]) == 0
    assert "definition level histogram [150, 150, 150, 450]" in capsys.readouterr().out
