"""Column statistics and page indexes: computing them (write side) and trusting them (read side).

Everything here is a pure function over in-memory values; no IO. Hot paths are
vectorized with numpy (no Python loop per value).

Value representation (the dense non-null values of one chunk or page):
BOOLEAN ``bool``; INT32 ``int32``; INT64 ``int64``; FLOAT ``float32``; DOUBLE
``float64``; INT96 ``(n, 12) uint8``; FIXED_LEN_BYTE_ARRAY ``(n, width) uint8``;
BYTE_ARRAY :class:`~pqbloom.arrays.BinaryArray`.

Write-side rules (``compute_statistics``)
-----------------------------------------
* ``min_value``/``max_value`` follow the column's sort order: signed for ints,
  floats, booleans, DECIMAL (big-endian two's complement, sign-extended when
  BYTE_ARRAY lengths differ) and FLOAT16; unsigned for unsigned ints; byte-wise
  unsigned (shorter prefix first) for other BYTE_ARRAY / FLBA. INT96 and
  INTERVAL have no defined order: only ``null_count`` is written.
* Floats: NaN is ignored for min/max and counted in ``nan_count``; an all-NaN
  chunk gets no min/max; a zero min is written as -0.0 and a zero max as +0.0.
* BYTE_ARRAY values longer than ``max_binary_length`` are truncated: the min to
  a prefix, the max to a prefix whose last non-0xFF byte is incremented (the
  full value is kept when that is impossible). For UTF-8 logical types (STRING,
  ENUM, JSON) the cut never splits a code point and the max increments a whole
  code point, so bounds stay valid UTF-8. FIXED_LEN_BYTE_ARRAY values are never
  truncated (a shorter value would not be a valid value of the type), nor are
  DECIMALs (a prefix of a number is not a bound of it).
* Deprecated ``min``/``max`` (fields 2/1) are written only when the order is
  SIGNED and the physical type is not BYTE_ARRAY/FLBA. Checked against the
  peers: parquet-java sets them whenever the order is SIGNED (or min == max),
  and pyarrow 26 whenever the order is SIGNED -- both *including* FLBA/
  BYTE_ARRAY DECIMAL and FLOAT16. We deliberately omit them for binary types:
  legacy readers (parquet-mr < 1.10) compare binary with *signed bytes*, so
  handing them a correct two's-complement decimal range can make them prune
  rows that match (e.g. range 100..200, probe 150 = 0x96 sorts below 0x64).
  For unsigned orders they are never written.

Read-side rules (``ChunkStats.from_thrift``)
--------------------------------------------
* Column order UNKNOWN (a ColumnOrder union member we do not know) -> no
  min/max at all (spec: ignore them).
* ``min_value``/``max_value`` are used when the file declares a column order
  (TYPE_ORDER, IEEE_754_TOTAL_ORDER, or INT96_TIMESTAMP_ORDER); without
  ``column_orders`` their meaning is undefined by the spec and they are ignored.
* Legacy ``min``/``max`` are used only when neither new field is present and:
  - the column order is SIGNED (or min == max, where order does not matter);
  - for BYTE_ARRAY/FLBA the writer is identified by ``created_by`` and is not
    parquet-mr < 1.8.0 (PARQUET-251: values corrupted by buffer reuse, never
    trusted), not parquet-mr < 1.10.0 and not parquet-cpp < 1.3.0 unless
    min == max (PARQUET-686: those compared binary with signed bytes; the
    fixture ``fixed_length_decimal.parquet`` from parquet-mr 1.8.2 really has
    a wrong min). An unknown writer's legacy binary stats are not trusted.
    (Stricter than Arrow C++, which trusts parquet-mr >= 1.8.0 and unknown
    writers; erring on the side of no pruning.)
* Float bounds that are NaN are dropped (that bound becomes None); under
  TYPE_ORDER a +0.0 min becomes -0.0 and a -0.0 max becomes +0.0, because a
  writer may have stored either sign for a zero bound.
* Negative ``null_count``/``nan_count`` are treated as absent (None).
"""

from __future__ import annotations

import re
import struct
from collections.abc import Sequence
from dataclasses import dataclass
from enum import Enum
from typing import Any

import numpy as np
from numpy.lib.stride_tricks import as_strided

from .arrays import BinaryArray
from .errors import CorruptFileError, ParquetError
from .format import T

__all__ = [
    "SortOrder",
    "sort_order_for",
    "compute_statistics",
    "truncate_min_value",
    "truncate_max_value",
    "binary_argminmax",
    "decode_stat_value",
    "compare",
    "ChunkStats",
    "column_order_kind",
    "legacy_stats_trusted",
    "parse_created_by",
    "build_column_index",
    "build_offset_index",
    "column_index_bounds",
    "column_index_is_usable",
]

_BOOLEAN = T.Type.BOOLEAN
_INT32 = T.Type.INT32
_INT64 = T.Type.INT64
_INT96 = T.Type.INT96
_FLOAT = T.Type.FLOAT
_DOUBLE = T.Type.DOUBLE
_BYTE_ARRAY = T.Type.BYTE_ARRAY
_FLBA = T.Type.FIXED_LEN_BYTE_ARRAY
_BINARY_TYPES = (_BYTE_ARRAY, _FLBA)

_CT = T.ConvertedType
_UNSIGNED_CONVERTED = (_CT.UINT_8, _CT.UINT_16, _CT.UINT_32, _CT.UINT_64)
_UTF8_KINDS = ("STRING", "ENUM", "JSON")
# Logical kinds whose min/max have no defined order (spec: ColumnOrder "undefined").
_UNDEFINED_KINDS = ("INTERVAL", "GEOMETRY", "GEOGRAPHY", "VARIANT")
_KNOWN_KINDS = (
    "STRING", "ENUM", "JSON", "BSON", "UUID", "DATE", "TIME", "TIMESTAMP", "DECIMAL",
    "INTEGER_SIGNED", "INTEGER_UNSIGNED", "FLOAT16", "INTERVAL", "UNKNOWN",
)


# ---------------------------------------------------------------------------
# Sort order
# ---------------------------------------------------------------------------
class SortOrder(Enum):
    SIGNED = "SIGNED"
    UNSIGNED = "UNSIGNED"
    UNDEFINED = "UNDEFINED"


def sort_order_for(ptype: int, logical_kind: str | None, converted_type: int | None) -> SortOrder:
    """The order min/max follow for a column (parquet.thrift ColumnOrder TYPE_ORDER rules).

    The logical kind wins over the converted type; an unrecognized logical kind
    gives UNDEFINED (no min/max), which is always safe.
    """
    if ptype == _INT96:
        return SortOrder.UNDEFINED
    kind = logical_kind
    if kind is not None and kind not in _KNOWN_KINDS:
        return SortOrder.UNDEFINED
    if kind in _UNDEFINED_KINDS or (kind is None and converted_type == _CT.INTERVAL):
        return SortOrder.UNDEFINED
    if ptype in _BINARY_TYPES:
        if kind in ("DECIMAL", "FLOAT16") or (kind is None and converted_type == _CT.DECIMAL):
            return SortOrder.SIGNED
        return SortOrder.UNSIGNED
    if kind == "INTEGER_UNSIGNED" or (kind is None and converted_type in _UNSIGNED_CONVERTED):
        return SortOrder.UNSIGNED
    return SortOrder.SIGNED


def _is_float16(ptype: int, logical_kind: str | None, type_length: int | None = None) -> bool:
    return ptype == _FLBA and logical_kind == "FLOAT16" and type_length in (None, 2)


def _is_floating(ptype: int, logical_kind: str | None) -> bool:
    return ptype in (_FLOAT, _DOUBLE) or _is_float16(ptype, logical_kind)


# ---------------------------------------------------------------------------
# Vectorized byte-wise argmin / argmax
# ---------------------------------------------------------------------------
# _KEEP_MASKS[r] keeps the top r bytes (r = 0..8) of a big-endian uint64 word.
_KEEP_MASKS = np.array([(0xFFFFFFFFFFFFFFFF << (8 * (8 - r))) & 0xFFFFFFFFFFFFFFFF for r in range(9)],
                       dtype=np.uint64)


def _words_at(data: np.ndarray, pos: np.ndarray, rem: np.ndarray) -> np.ndarray:
    """Big-endian uint64 of ``data[pos:pos+rem]`` zero-padded to 8 bytes (rem in 0..8)."""
    n = len(pos)
    size = len(data)
    out = np.zeros(n, np.uint64)
    if n == 0:
        return out
    safe = pos + 8 <= size
    all_safe = bool(safe.all())
    if size >= 8:
        # Every byte position viewed as the start of an unaligned big-endian uint64.
        win = np.ndarray(shape=(size - 7,), dtype=">u8", buffer=data, strides=(1,))
        if all_safe:
            out[:] = win[pos]
        elif safe.any():
            out[safe] = win[pos[safe]]
    if not all_safe:
        base = max(0, size - 8)
        tail = np.zeros(16, np.uint8)
        tail[: size - base] = data[base:]
        twin = as_strided(tail, shape=(9, 8), strides=(1, 1), writeable=False)
        rel = np.minimum(pos[~safe] - base, 8)
        out[~safe] = np.ascontiguousarray(twin[rel]).view(">u8").ravel()
    short = np.flatnonzero(rem < 8)
    if len(short):
        out[short] &= _KEEP_MASKS[rem[short]]
    return out


class _MatrixWords:
    """Word source over an ``(n, w)`` uint8 matrix (all values of equal length)."""

    def __init__(self, mat: np.ndarray) -> None:
        self.mat = mat
        self.n, self.w = mat.shape
        self.lengths: np.ndarray | None = None
        self.nwords = (self.w + 7) // 8

    def words(self, j: int, idx: np.ndarray | None) -> np.ndarray:
        sub = self.mat[:, 8 * j: 8 * j + 8] if idx is None else self.mat[idx, 8 * j: 8 * j + 8]
        k = sub.shape[1]
        if k < 8:
            padded = np.zeros((sub.shape[0], 8), np.uint8)
            padded[:, :k] = sub
            sub = padded
        return np.ascontiguousarray(sub).view(">u8").ravel().astype(np.uint64)


class _BinaryWords:
    """Word source over a variable-length BinaryArray (zero-padded, length tie-break)."""

    def __init__(self, arr: BinaryArray) -> None:
        self.data = np.ascontiguousarray(arr.data)
        self.starts = arr.offsets[:-1]
        self.lengths = arr.lengths()
        self.n = len(arr)
        maxlen = int(self.lengths.max()) if self.n else 0
        self.nwords = (maxlen + 7) // 8

    def words(self, j: int, idx: np.ndarray | None) -> np.ndarray:
        starts = self.starts if idx is None else self.starts[idx]
        lens = self.lengths if idx is None else self.lengths[idx]
        rem = np.clip(lens - 8 * j, 0, 8)
        return _words_at(self.data, starts + 8 * j, rem)


def _refine(src: _MatrixWords | _BinaryWords, first: np.ndarray, want_max: bool) -> int:
    """Index of the byte-wise smallest (largest) value, given word 0 of every value."""
    cand: np.ndarray | None = None
    w = first
    lengths = src.lengths
    j = 0
    while True:
        target = w.max() if want_max else w.min()
        hit = np.flatnonzero(w == target)
        cand = hit if cand is None else cand[hit]
        if len(cand) == 1:
            return int(cand[0])
        j += 1
        if j >= src.nwords:
            break
        if lengths is not None and bool((lengths[cand] <= 8 * j).all()):
            break  # every candidate ended: they differ only by trailing zeros
        w = src.words(j, None if len(cand) == src.n else cand)
    if lengths is None:
        return int(cand[0])
    # Equal after zero padding: the shorter one is a prefix of the longer one.
    cl = lengths[cand]
    return int(cand[int(np.argmax(cl) if want_max else np.argmin(cl))])


def _matrix_argminmax(mat: np.ndarray) -> tuple[int, int]:
    src = _MatrixWords(mat)
    if src.w == 0:
        return 0, 0
    first = src.words(0, None)
    return _refine(src, first, False), _refine(src, first, True)


def binary_argminmax(values: BinaryArray | np.ndarray) -> tuple[int, int]:
    """Indices of the byte-wise (unsigned, shorter-prefix-first) min and max value.

    Works on a BinaryArray or an ``(n, w)`` uint8 matrix; ``n`` must be > 0.
    Vectorized: one pass over the first 8 bytes of every value, then further
    8-byte words only for the values still tied.
    """
    if isinstance(values, np.ndarray):
        if len(values) == 0:
            raise ValueError("binary_argminmax of no values")
        return _matrix_argminmax(np.asarray(values, np.uint8))
    if len(values) == 0:
        raise ValueError("binary_argminmax of no values")
    width = values.fixed_width()
    if width is not None:
        return _matrix_argminmax(values.as_matrix(width))
    src = _BinaryWords(values)
    first = src.words(0, None)
    return _refine(src, first, False), _refine(src, first, True)


def _decimal_matrix(values: BinaryArray | np.ndarray) -> np.ndarray:
    """Big-endian two's complement values as an order-preserving unsigned matrix.

    Values are sign-extended to a common width and the top bit is flipped, so
    byte-wise unsigned order equals signed numeric order.
    """
    if isinstance(values, np.ndarray):
        mat = np.array(values, dtype=np.uint8, copy=True)
    else:
        width = values.fixed_width()
        if width is not None:
            mat = np.array(values.as_matrix(width), dtype=np.uint8, copy=True)
        else:
            c = values.compact()
            lens = c.lengths()
            n = len(c)
            width = int(lens.max())
            starts = c.offsets[:-1]
            first = np.zeros(n, np.uint8)
            nonempty = lens > 0
            first[nonempty] = c.data[starts[nonempty]]
            sign = np.where(first >= 0x80, 0xFF, 0x00).astype(np.uint8)
            mat = np.repeat(sign[:, None], width, axis=1)
            total = int(lens.sum())
            if total:
                row = np.repeat(np.arange(n, dtype=np.int64), lens)
                col = np.arange(total, dtype=np.int64) - np.repeat(c.offsets[:-1], lens) + np.repeat(width - lens, lens)
                mat[row, col] = c.data[:total]
    if mat.shape[1]:
        mat[:, 0] ^= 0x80
    return mat


def _row_bytes(values: BinaryArray | np.ndarray, i: int) -> bytes:
    if isinstance(values, np.ndarray):
        return bytes(values[i].tobytes())
    return values[i]


# ---------------------------------------------------------------------------
# Truncation
# ---------------------------------------------------------------------------
def _utf8_cut(value: bytes, limit: int) -> int:
    """Largest cut position <= limit that does not split a UTF-8 code point."""
    p = min(limit, len(value))
    while p > 0 and p < len(value) and (value[p] & 0xC0) == 0x80:
        p -= 1
    return p


def truncate_min_value(value: bytes, limit: int, *, utf8: bool = False) -> tuple[bytes, bool]:
    """A lower bound of at most ``limit`` bytes; returns (bound, exact)."""
    if len(value) <= limit:
        return value, True
    cut = _utf8_cut(value, limit) if utf8 else limit
    return value[:cut], False


def _increment_bytes(prefix: bytes) -> bytes | None:
    stripped = prefix.rstrip(b"\xff")
    if not stripped:
        return None
    return stripped[:-1] + bytes([stripped[-1] + 1])


def _increment_utf8(prefix: bytes) -> bytes | None:
    try:
        text = prefix.decode("utf-8")
    except UnicodeDecodeError:
        return None
    chars = list(text)
    while chars:
        cp = ord(chars[-1]) + 1
        if 0xD800 <= cp <= 0xDFFF:
            cp = 0xE000
        if cp <= 0x10FFFF and len(chr(cp).encode("utf-8")) == len(chars[-1].encode("utf-8")):
            chars[-1] = chr(cp)
            return "".join(chars).encode("utf-8")
        chars.pop()
    return None


def truncate_max_value(value: bytes, limit: int, *, utf8: bool = False) -> tuple[bytes, bool]:
    """An upper bound of at most ``limit`` bytes; returns (bound, exact).

    Falls back to the full value (exact) when no shorter upper bound exists
    (e.g. a run of 0xFF bytes).
    """
    if len(value) <= limit:
        return value, True
    if utf8:
        bumped = _increment_utf8(value[: _utf8_cut(value, limit)])
        if bumped is not None:
            return bumped, False
        try:
            value.decode("utf-8")
        except UnicodeDecodeError:
            pass  # not valid UTF-8 anyway: plain byte-wise truncation keeps the order
        else:
            return value, True
    bumped = _increment_bytes(value[:limit])
    if bumped is None:
        return value, True
    return bumped, False


# ---------------------------------------------------------------------------
# compute_statistics
# ---------------------------------------------------------------------------
_PLAIN_FMT = {_INT32: "<i", _INT64: "<q", _FLOAT: "<f", _DOUBLE: "<d"}


def _float_minmax(vals: np.ndarray) -> tuple[Any, Any, int]:
    """(min, max, nan_count) ignoring NaN; min/max None when every value is NaN."""
    nan_mask = np.isnan(vals)
    nan_count = int(np.count_nonzero(nan_mask))
    if nan_count == len(vals):
        return None, None, nan_count
    if nan_count:
        lo = np.fmin.reduce(vals)
        hi = np.fmax.reduce(vals)
    else:
        lo = vals.min()
        hi = vals.max()
    dt = vals.dtype.type
    if lo == 0:
        lo = dt(-0.0)
    if hi == 0:
        hi = dt(0.0)
    return lo, hi, nan_count


_SMALL_MINMAX = 32
_INT_FMT = {(_INT32, False): "<i", (_INT32, True): "<I", (_INT64, False): "<q", (_INT64, True): "<Q"}


def compute_statistics(
    values: Any,
    ptype: int,
    *,
    null_count: int,
    sort_order: SortOrder,
    logical_kind: str | None = None,
    type_length: int | None = None,
    max_binary_length: int = 64,
) -> T.Statistics:
    """Statistics of one chunk or page from its dense non-null values."""
    stats = T.Statistics(null_count=int(null_count))
    floating = _is_floating(ptype, logical_kind)
    if floating:
        stats.nan_count = 0
    n = len(values)
    if n == 0 or sort_order is SortOrder.UNDEFINED or ptype == _INT96:
        return stats

    exact_min = exact_max = True
    if ptype == _BOOLEAN:
        arr = np.asarray(values, dtype=bool)
        mn, mx = b"\x01" if bool(arr.all()) else b"\x00", b"\x01" if bool(arr.any()) else b"\x00"
    elif ptype in (_INT32, _INT64):
        dt = np.int32 if ptype == _INT32 else np.int64
        arr = np.asarray(values, dtype=dt)
        unsigned = sort_order is SortOrder.UNSIGNED
        if unsigned:
            arr = arr.view(np.uint32 if ptype == _INT32 else np.uint64)
        if n <= _SMALL_MINMAX:
            # a few values (many small chunks): Python's min/max beat two ufunc reductions
            vals = arr.tolist()
            fmt = _INT_FMT[ptype, unsigned]
            mn, mx = struct.pack(fmt, min(vals)), struct.pack(fmt, max(vals))
        else:
            le = arr.dtype.newbyteorder("<")
            mn, mx = np.asarray(arr.min()).astype(le).tobytes(), np.asarray(arr.max()).astype(le).tobytes()
    elif ptype in (_FLOAT, _DOUBLE) or _is_float16(ptype, logical_kind, type_length):
        if ptype == _FLBA:
            mat = np.ascontiguousarray(np.asarray(values, np.uint8).reshape(n, 2))
            arr = mat.view("<f2").ravel()
        else:
            arr = np.asarray(values, dtype=np.float32 if ptype == _FLOAT else np.float64)
        lo, hi, nan_count = _float_minmax(arr)
        stats.nan_count = nan_count
        if lo is None:
            return stats
        le = arr.dtype.newbyteorder("<")
        mn = np.asarray(lo, dtype=arr.dtype).astype(le).tobytes()
        mx = np.asarray(hi, dtype=arr.dtype).astype(le).tobytes()
    elif ptype in _BINARY_TYPES:
        if ptype == _FLBA:
            arr2 = np.asarray(values, dtype=np.uint8)
            if arr2.ndim != 2:
                raise ValueError("FIXED_LEN_BYTE_ARRAY values must be an (n, width) uint8 array")
            src: BinaryArray | np.ndarray = arr2
        else:
            if not isinstance(values, BinaryArray):
                raise TypeError("BYTE_ARRAY values must be a BinaryArray")
            src = values
        if sort_order is SortOrder.SIGNED:  # DECIMAL: two's complement big-endian
            imin, imax = _matrix_argminmax(_decimal_matrix(src))
            mn, mx = _row_bytes(src, imin), _row_bytes(src, imax)
        else:
            imin, imax = binary_argminmax(src)
            mn, mx = _row_bytes(src, imin), _row_bytes(src, imax)
            if ptype == _BYTE_ARRAY:
                utf8 = logical_kind in _UTF8_KINDS
                mn, exact_min = truncate_min_value(mn, max_binary_length, utf8=utf8)
                mx, exact_max = truncate_max_value(mx, max_binary_length, utf8=utf8)
    else:
        raise ValueError(f"unknown physical type {ptype}")

    stats.min_value, stats.max_value = mn, mx
    stats.is_min_value_exact, stats.is_max_value_exact = exact_min, exact_max
    if sort_order is SortOrder.SIGNED and ptype not in _BINARY_TYPES:
        stats.min, stats.max = mn, mx
    return stats


# ---------------------------------------------------------------------------
# Read side: decoding and comparing
# ---------------------------------------------------------------------------
_FIXED_SIZE = {_BOOLEAN: 1, _INT32: 4, _INT64: 8, _FLOAT: 4, _DOUBLE: 8, _INT96: 12}


def decode_stat_value(
    raw: bytes, ptype: int, type_length: int | None = None, logical_kind: str | None = None
) -> Any:
    """A Python scalar from a PLAIN-encoded (unprefixed) statistics value.

    BOOLEAN -> bool; INT32/INT64 -> int (signed; see ``compare`` for unsigned
    columns, or ``logical_kind="INTEGER_UNSIGNED"`` to get the unsigned value);
    FLOAT/DOUBLE -> float; INT96 and other binary -> bytes. With
    ``logical_kind`` FLOAT16 an FLBA(2) value becomes a float and DECIMAL on
    BYTE_ARRAY/FLBA becomes the unscaled int. Binary values may be shorter
    than ``type_length`` (truncated bounds from other writers).
    """
    raw = bytes(raw)
    size = _FIXED_SIZE.get(ptype)
    if size is not None and len(raw) != size:
        raise CorruptFileError(f"statistics value of {len(raw)} bytes for a {size}-byte physical type")
    if ptype == _BOOLEAN:
        return raw[0] != 0
    if ptype in _PLAIN_FMT:
        v = struct.unpack(_PLAIN_FMT[ptype], raw)[0]
        if logical_kind == "INTEGER_UNSIGNED" and ptype in (_INT32, _INT64):
            v %= 1 << (32 if ptype == _INT32 else 64)
        return v
    if ptype in _BINARY_TYPES:
        if logical_kind == "FLOAT16" and ptype == _FLBA:
            if len(raw) != 2:
                raise CorruptFileError(f"FLOAT16 statistics value of {len(raw)} bytes")
            return struct.unpack("<e", raw)[0]
        if logical_kind == "DECIMAL":
            return int.from_bytes(raw, "big", signed=True)
        return raw
    if ptype == _INT96:
        return raw
    raise ValueError(f"unknown physical type {ptype}")


def _cmp(a: Any, b: Any) -> int:
    return (a > b) - (a < b)


def _float_key(x: Any) -> tuple[int, float]:
    f = float(x)
    return (1, 0.0) if f != f else (0, f)


def compare(a: Any, b: Any, ptype: int, sort_order: SortOrder, logical_kind: str | None = None) -> int:
    """-1, 0 or 1 as ``a`` sorts before, with or after ``b`` in the column's order.

    Accepts decoded statistics values (``decode_stat_value``) or the matching
    Python values. Rules: unsigned ints compare modulo 2**32 / 2**64; signed
    binary (DECIMAL) compares as big-endian two's complement ints (bytes or
    int accepted); other binary compares byte-wise with a prefix first;
    floats compare numerically with -0.0 == +0.0 and NaN after every number
    (NaN == NaN). Because -0.0 == +0.0 here, a min of +0 / max of -0 can never
    exclude the other zero.
    """
    if sort_order is SortOrder.UNDEFINED:
        raise ValueError("values of a column with undefined sort order cannot be compared")
    if ptype == _BOOLEAN:
        return _cmp(int(bool(a)), int(bool(b)))
    if ptype in (_INT32, _INT64):
        if sort_order is SortOrder.UNSIGNED:
            m = 1 << (32 if ptype == _INT32 else 64)
            return _cmp(int(a) % m, int(b) % m)
        return _cmp(int(a), int(b))
    if ptype in (_FLOAT, _DOUBLE) or (ptype == _FLBA and logical_kind == "FLOAT16"):
        if isinstance(a, bytes | bytearray):
            a = struct.unpack("<e", bytes(a))[0]
        if isinstance(b, bytes | bytearray):
            b = struct.unpack("<e", bytes(b))[0]
        return _cmp(_float_key(a), _float_key(b))
    if ptype in _BINARY_TYPES:
        if sort_order is SortOrder.SIGNED:
            ia = a if isinstance(a, int) else int.from_bytes(bytes(a), "big", signed=True)
            ib = b if isinstance(b, int) else int.from_bytes(bytes(b), "big", signed=True)
            return _cmp(ia, ib)
        return _cmp(bytes(a), bytes(b))
    raise ValueError(f"physical type {ptype} has no defined order")


# ---------------------------------------------------------------------------
# Read side: which statistics to trust
# ---------------------------------------------------------------------------
_CREATED_BY = re.compile(r"^\s*(.+?)\s+version\s+(\d+)(?:\.(\d+))?(?:\.(\d+))?", re.IGNORECASE)


def parse_created_by(created_by: str | None) -> tuple[str, tuple[int, int, int]] | None:
    """("parquet-mr", (1, 8, 2)) from "parquet-mr version 1.8.2 (build ...)"; None if unparseable."""
    if not created_by:
        return None
    m = _CREATED_BY.match(created_by)
    if not m:
        return None
    app = m.group(1).strip().lower()
    ver = tuple(int(g) if g is not None else 0 for g in m.group(2, 3, 4))
    return app, (ver[0], ver[1], ver[2])


def column_order_kind(column_order: Any) -> str | None:
    """Normalize a ``T.ColumnOrder`` (or a name) to "TYPE_ORDER", "IEEE_754_TOTAL_ORDER",
    "INT96_TIMESTAMP_ORDER", "UNKNOWN", or None when the file has no column orders."""
    if column_order is None:
        return None
    if isinstance(column_order, str):
        return column_order
    for name in ("TYPE_ORDER", "IEEE_754_TOTAL_ORDER", "INT96_TIMESTAMP_ORDER"):
        if getattr(column_order, name, None) is not None:
            return name
    return "UNKNOWN"


def legacy_stats_trusted(
    ptype: int, sort_order: SortOrder, created_by: str | None, min_raw: bytes | None, max_raw: bytes | None
) -> bool:
    """Whether the deprecated ``min``/``max`` fields may be used (rules in the module doc)."""
    if sort_order is SortOrder.UNDEFINED or ptype == _INT96:
        return False
    same = min_raw is not None and max_raw is not None and bytes(min_raw) == bytes(max_raw)
    if sort_order is not SortOrder.SIGNED and not same:
        return False
    if ptype not in _BINARY_TYPES:
        return True
    writer = parse_created_by(created_by)
    if writer is None:
        return False
    app, ver = writer
    if app == "parquet-mr":
        if ver < (1, 8, 0):
            return False  # PARQUET-251
        if ver < (1, 10, 0) and not same:
            return False  # PARQUET-686: signed byte comparison
    if app == "parquet-cpp" and ver < (1, 3, 0) and not same:
        return False
    return True


def _bound(raw: bytes | None, ptype: int, type_length: int | None, logical_kind: str | None,
           sort_order: SortOrder) -> Any:
    if raw is None:
        return None
    kind = logical_kind
    if kind is None and sort_order is SortOrder.SIGNED and ptype in _BINARY_TYPES:
        kind = "DECIMAL"  # signed binary without a FLOAT16 annotation is a decimal
    if kind == "FLOAT16" and len(raw) != 2:
        return None
    try:
        v = decode_stat_value(raw, ptype, type_length, kind)
    except CorruptFileError:
        return None
    if sort_order is SortOrder.UNSIGNED and ptype in (_INT32, _INT64):
        v %= 1 << (32 if ptype == _INT32 else 64)
    if isinstance(v, float) and v != v:
        return None  # NaN bound: unusable
    return v


def _fix_zero(lo: Any, hi: Any, ptype: int, logical_kind: str | None, order: str | None) -> tuple[Any, Any]:
    if not _is_floating(ptype, logical_kind) or order == "IEEE_754_TOTAL_ORDER":
        return lo, hi
    if lo is not None and lo == 0:
        lo = -0.0
    if hi is not None and hi == 0:
        hi = 0.0
    return lo, hi


@dataclass(frozen=True)
class ChunkStats:
    """Statistics a pruner may rely on. ``min``/``max`` are None when unusable.

    ``min``/``max`` are decoded Python values (unsigned ints as non-negative
    ints, DECIMAL on binary as unscaled ints, FLOAT16 as float, other binary as
    bytes). ``min_exact``/``max_exact`` are None when the writer did not say.
    """

    min: Any = None
    max: Any = None
    null_count: int | None = None
    nan_count: int | None = None
    distinct_count: int | None = None
    min_exact: bool | None = None
    max_exact: bool | None = None
    source: str = "none"  # "min_value", "legacy" or "none"

    @classmethod
    def from_thrift(
        cls,
        stats: T.Statistics | None,
        ptype: int,
        sort_order: SortOrder,
        *,
        column_order: Any = None,
        created_by: str | None = None,
        type_length: int | None = None,
        logical_kind: str | None = None,
    ) -> ChunkStats:
        if stats is None:
            return cls()

        def count(v: int | None) -> int | None:
            return None if v is None or v < 0 else int(v)

        base = {
            "null_count": count(stats.null_count),
            "nan_count": count(stats.nan_count),
            "distinct_count": count(stats.distinct_count),
        }
        order = column_order_kind(column_order)
        if order == "UNKNOWN" or sort_order is SortOrder.UNDEFINED:
            return cls(**base)  # type: ignore[arg-type]
        if order == "INT96_TIMESTAMP_ORDER" and ptype != _INT96:
            return cls(**base)  # type: ignore[arg-type]
        has_new = stats.min_value is not None or stats.max_value is not None
        if has_new and order is not None:
            lo = _bound(stats.min_value, ptype, type_length, logical_kind, sort_order)
            hi = _bound(stats.max_value, ptype, type_length, logical_kind, sort_order)
            lo, hi = _fix_zero(lo, hi, ptype, logical_kind, order)
            return cls(lo, hi, min_exact=stats.is_min_value_exact, max_exact=stats.is_max_value_exact,
                       source="min_value", **base)  # type: ignore[arg-type]
        if not has_new and (stats.min is not None or stats.max is not None):
            if legacy_stats_trusted(ptype, sort_order, created_by, stats.min, stats.max):
                lo = _bound(stats.min, ptype, type_length, logical_kind, sort_order)
                hi = _bound(stats.max, ptype, type_length, logical_kind, sort_order)
                lo, hi = _fix_zero(lo, hi, ptype, logical_kind, order)
                return cls(lo, hi, source="legacy", **base)  # type: ignore[arg-type]
        return cls(**base)  # type: ignore[arg-type]


# ---------------------------------------------------------------------------
# Page index
# ---------------------------------------------------------------------------
def _boundary_order(bounds: list[tuple[Any, Any]], ptype: int, sort_order: SortOrder,
                    logical_kind: str | None) -> int:
    if not bounds:
        return T.BoundaryOrder.UNORDERED  # only null pages (what pyarrow writes)
    asc = desc = True
    for (lo0, hi0), (lo1, hi1) in zip(bounds, bounds[1:]):
        c_lo = compare(lo0, lo1, ptype, sort_order, logical_kind)
        c_hi = compare(hi0, hi1, ptype, sort_order, logical_kind)
        if c_lo > 0 or c_hi > 0:
            asc = False
        if c_lo < 0 or c_hi < 0:
            desc = False
        if not asc and not desc:
            return T.BoundaryOrder.UNORDERED
    return T.BoundaryOrder.ASCENDING if asc else T.BoundaryOrder.DESCENDING


def build_column_index(
    page_stats: list[T.Statistics],
    null_page_flags: list[bool],
    ptype: int,
    sort_order: SortOrder,
    *,
    logical_kind: str | None = None,
    type_length: int | None = None,
    repetition_level_histograms: Sequence[Sequence[int] | np.ndarray] | None = None,
    definition_level_histograms: Sequence[Sequence[int] | np.ndarray] | None = None,
) -> T.ColumnIndex | None:
    """A ColumnIndex from per-page statistics, or None when the rules forbid one.

    None for INT96, an undefined order, or any non-null page without min/max
    (e.g. a float page holding only NaN under TYPE_ORDER). ``null_counts`` and
    ``nan_counts`` are written when every page has them. The level histograms
    (one per page, ``max_level + 1`` counts each) are stored flattened, page
    after page; pass None for a level whose maximum is 0.
    """
    if len(page_stats) != len(null_page_flags):
        raise ValueError("page_stats and null_page_flags differ in length")
    for hs in (repetition_level_histograms, definition_level_histograms):
        if hs is not None and (len(hs) != len(page_stats) or len({len(h) for h in hs}) > 1):
            raise ValueError("level histograms need one list per page, all of one length")
    if ptype == _INT96 or sort_order is SortOrder.UNDEFINED or not page_stats:
        return None
    kind = logical_kind
    if kind is None and sort_order is SortOrder.SIGNED and ptype in _BINARY_TYPES:
        kind = "DECIMAL"
    mins: list[bytes] = []
    maxs: list[bytes] = []
    bounds: list[tuple[Any, Any]] = []
    for st, is_null in zip(page_stats, null_page_flags):
        if is_null:
            mins.append(b"")
            maxs.append(b"")
            continue
        if st is None or st.min_value is None or st.max_value is None:
            return None
        mins.append(bytes(st.min_value))
        maxs.append(bytes(st.max_value))
        if len(page_stats) > 1:  # one page is ASCENDING whatever its bounds: no need to decode them
            bounds.append((decode_stat_value(st.min_value, ptype, type_length, kind),
                           decode_stat_value(st.max_value, ptype, type_length, kind)))
        else:
            bounds.append((None, None))
    ci = T.ColumnIndex(
        null_pages=[bool(f) for f in null_page_flags],
        min_values=mins,
        max_values=maxs,
        boundary_order=_boundary_order(bounds, ptype, sort_order, kind),
    )
    if all(st is not None and st.null_count is not None for st in page_stats):
        ci.null_counts = [int(st.null_count) for st in page_stats]
    if _is_floating(ptype, logical_kind):
        if all(st is not None and st.nan_count is not None for st in page_stats):
            ci.nan_counts = [int(st.nan_count) for st in page_stats]
    if repetition_level_histograms is not None:
        ci.repetition_level_histograms = _flat_ints(repetition_level_histograms)
    if definition_level_histograms is not None:
        ci.definition_level_histograms = _flat_ints(definition_level_histograms)
    return ci


def _flat_ints(per_page: Sequence[Sequence[int] | np.ndarray]) -> list[int]:
    """Per-page histograms, page after page, as Python ints (``tolist`` for arrays: no numpy scalars)."""
    out: list[int] = []
    for h in per_page:
        out.extend(h.tolist() if isinstance(h, np.ndarray) else (int(c) for c in h))
    return out


def build_offset_index(
    page_locations: Sequence[tuple[int, int, int]],
    unencoded_byte_array_data_bytes: Sequence[int] | None = None,
) -> T.OffsetIndex:
    """An OffsetIndex from (file offset, compressed size incl. header, first row index) per data page."""
    locs = []
    prev_row = -1
    for offset, size, first_row in page_locations:
        if first_row <= prev_row or (prev_row < 0 and first_row != 0):
            raise ParquetError(f"page first_row_index {first_row} must start at 0 and increase strictly")
        if offset < 0 or size <= 0:
            raise ParquetError(f"invalid page location (offset {offset}, size {size})")
        prev_row = first_row
        locs.append(T.PageLocation(offset=int(offset), compressed_page_size=int(size), first_row_index=int(first_row)))
    oi = T.OffsetIndex(page_locations=locs)
    if unencoded_byte_array_data_bytes is not None:
        if len(unencoded_byte_array_data_bytes) != len(locs):
            raise ParquetError("unencoded_byte_array_data_bytes needs one entry per page")
        oi.unencoded_byte_array_data_bytes = [int(v) for v in unencoded_byte_array_data_bytes]
    return oi


def column_index_is_usable(
    ci: T.ColumnIndex,
    *,
    num_pages: int | None = None,
    page_row_counts: Sequence[int] | None = None,
    ptype: int | None = None,
) -> bool:
    """False when a ColumnIndex is internally inconsistent and must not drive pruning.

    Checks: list lengths agree (with ``num_pages`` / the OffsetIndex too);
    counts are non-negative; a null page has a positive null count (or covers
    no rows), and at least ``page_row_counts[i]`` nulls when row counts are
    given; when every page claims to be a null page, ``null_counts`` must be
    present to confirm it (the parquet-mr ``datapage_v1-*-checksum`` fixtures
    mark all pages null with counts -1); bounds of fixed-size types have the
    right size; the boundary order is a known value.
    """
    null_pages = ci.null_pages
    if null_pages is None or ci.min_values is None or ci.max_values is None:
        return False
    n = len(null_pages)
    if len(ci.min_values) != n or len(ci.max_values) != n:
        return False
    if num_pages is not None and n != num_pages:
        return False
    if page_row_counts is not None and len(page_row_counts) != n:
        return False
    if ci.boundary_order not in (T.BoundaryOrder.UNORDERED, T.BoundaryOrder.ASCENDING,
                                 T.BoundaryOrder.DESCENDING):
        return False
    nc = ci.null_counts
    if nc is not None and (len(nc) != n or any(c is None or c < 0 for c in nc)):
        return False
    if ci.nan_counts is not None and (len(ci.nan_counts) != n or any(c is None or c < 0 for c in ci.nan_counts)):
        return False
    if n and all(bool(p) for p in null_pages) and nc is None:
        return False
    size = _FIXED_SIZE.get(ptype) if ptype is not None else None
    for i in range(n):
        rows = page_row_counts[i] if page_row_counts is not None else None
        if null_pages[i]:
            if nc is not None:
                if rows is not None and nc[i] < rows:
                    return False
                if rows is None and nc[i] == 0:
                    return False
        elif size is not None and (len(ci.min_values[i]) != size or len(ci.max_values[i]) != size):
            return False
    return True


def column_index_bounds(
    ci: T.ColumnIndex,
    ptype: int,
    sort_order: SortOrder,
    *,
    column_order: Any = "TYPE_ORDER",
    type_length: int | None = None,
    logical_kind: str | None = None,
) -> list[tuple[Any, Any]]:
    """Decoded (min, max) per page with the same trust rules as ``ChunkStats``.

    Null pages and unusable bounds (NaN, undefined order, unknown or absent
    column order) give None. Call ``column_index_is_usable`` first.
    """
    n = len(ci.null_pages or [])
    order = column_order_kind(column_order)
    if order in (None, "UNKNOWN") or sort_order is SortOrder.UNDEFINED or ptype == _INT96:
        return [(None, None)] * n
    out: list[tuple[Any, Any]] = []
    for i in range(n):
        if ci.null_pages[i]:
            out.append((None, None))
            continue
        lo = _bound(ci.min_values[i], ptype, type_length, logical_kind, sort_order)
        hi = _bound(ci.max_values[i], ptype, type_length, logical_kind, sort_order)
        out.append(_fix_zero(lo, hi, ptype, logical_kind, order))
    return out
