"""Column statistics, write side: ``compute_statistics`` of one chunk or page, and bound truncation.

Everything here is a pure function over in-memory values; no IO. Hot paths are
vectorized with numpy (no Python loop per value). Values are represented as
:mod:`pqbloom.statistics` says.

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
"""

from __future__ import annotations

import struct
from typing import Any

import numpy as np

from ..arrays import BinaryArray
from ..format import StatisticsFields, numpy_dtype
from ..format.enums import PhysicalType
from ..kernels.binary import binary_argminmax as binary_argminmax_kernel
from .order import BINARY_TYPES, UTF8_KINDS, SortOrder, is_float16, is_floating

__all__ = ["compute_statistics", "truncate_min_value", "truncate_max_value", "binary_argminmax", "DictionaryBounds"]


def binary_argminmax(values: BinaryArray | np.ndarray) -> tuple[int, int]:
    """Indices of the byte-wise (unsigned, shorter-prefix-first) min and max value.

    Works on a BinaryArray or an ``(n, w)`` uint8 matrix; ``n`` must be > 0. One pass over the
    values (:func:`pqbloom.kernels.binary.binary_argminmax`; its numpy reference compares 8-byte words,
    further words only for the values still tied).
    """
    return binary_argminmax_kernel(values)


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
_INT_FMT: dict[tuple[int, bool], str] = {(PhysicalType.INT32, False): "<i", (PhysicalType.INT32, True): "<I",
                                         (PhysicalType.INT64, False): "<q", (PhysicalType.INT64, True): "<Q"}


def compute_statistics(
    values: Any,
    ptype: int,
    *,
    null_count: int,
    sort_order: SortOrder,
    logical_kind: str | None = None,
    type_length: int | None = None,
    max_binary_length: int = 64,
    raw_bounds: list[bytes] | None = None,
) -> StatisticsFields:
    """Statistics of one chunk or page from its dense non-null values.

    ``raw_bounds``: for BYTE_ARRAY and FIXED_LEN_BYTE_ARRAY values with an order, the min and max
    value, before any truncation, are appended to it (nothing when there are no values). A chunk's
    statistics are then those of its pages' raw bounds: the same min and max, without a second pass
    over the values."""
    nulls = int(null_count)
    floating = is_floating(ptype, logical_kind)
    nan_count = 0 if floating else None
    n = len(values)
    if n == 0 or sort_order is SortOrder.UNDEFINED or ptype == PhysicalType.INT96:
        return StatisticsFields(nulls, nan_count)

    exact_min = exact_max = True
    if ptype == PhysicalType.BOOLEAN:
        arr = np.asarray(values, dtype=bool)
        mn, mx = b"\x01" if bool(arr.all()) else b"\x00", b"\x01" if bool(arr.any()) else b"\x00"
    elif ptype in (PhysicalType.INT32, PhysicalType.INT64):
        arr = np.asarray(values, dtype=numpy_dtype(ptype))
        unsigned = sort_order is SortOrder.UNSIGNED
        if unsigned:
            arr = arr.view(np.uint32 if ptype == PhysicalType.INT32 else np.uint64)
        if n <= _SMALL_MINMAX:
            # a few values (many small chunks): Python's min/max beat two ufunc reductions
            vals = arr.tolist()
            fmt = _INT_FMT[ptype, unsigned]
            mn, mx = struct.pack(fmt, min(vals)), struct.pack(fmt, max(vals))
        else:
            le = arr.dtype.newbyteorder("<")
            mn, mx = np.asarray(arr.min()).astype(le).tobytes(), np.asarray(arr.max()).astype(le).tobytes()
    elif ptype in (PhysicalType.FLOAT, PhysicalType.DOUBLE) or is_float16(ptype, logical_kind, type_length):
        if ptype == PhysicalType.FIXED_LEN_BYTE_ARRAY:
            mat = np.ascontiguousarray(np.asarray(values, np.uint8).reshape(n, 2))
            arr = mat.view("<f2").ravel()
        else:
            arr = np.asarray(values, dtype=numpy_dtype(ptype))
        lo, hi, nan_count = _float_minmax(arr)
        if lo is None:
            return StatisticsFields(nulls, nan_count)
        le = arr.dtype.newbyteorder("<")
        mn = np.asarray(lo, dtype=arr.dtype).astype(le).tobytes()
        mx = np.asarray(hi, dtype=arr.dtype).astype(le).tobytes()
    elif ptype in BINARY_TYPES:
        if ptype == PhysicalType.FIXED_LEN_BYTE_ARRAY:
            arr2 = np.asarray(values, dtype=np.uint8)
            if arr2.ndim != 2:
                raise ValueError("FIXED_LEN_BYTE_ARRAY values must be an (n, width) uint8 array")
            src: BinaryArray | np.ndarray = arr2
        else:
            if not isinstance(values, BinaryArray):
                raise TypeError("BYTE_ARRAY values must be a BinaryArray")
            src = values
        if sort_order is SortOrder.SIGNED:  # DECIMAL: two's complement big-endian
            imin, imax = binary_argminmax_kernel(_decimal_matrix(src))
            mn, mx = _row_bytes(src, imin), _row_bytes(src, imax)
            if raw_bounds is not None:
                raw_bounds += (mn, mx)
        else:
            imin, imax = binary_argminmax(src)
            mn, mx = _row_bytes(src, imin), _row_bytes(src, imax)
            if raw_bounds is not None:
                raw_bounds += (mn, mx)
            if ptype == PhysicalType.BYTE_ARRAY:
                utf8 = logical_kind in UTF8_KINDS
                mn, exact_min = truncate_min_value(mn, max_binary_length, utf8=utf8)
                mx, exact_max = truncate_max_value(mx, max_binary_length, utf8=utf8)
    else:
        raise ValueError(f"unknown physical type {ptype}")

    legacy = sort_order is SortOrder.SIGNED and ptype not in BINARY_TYPES
    return StatisticsFields(nulls, nan_count, None, mn, mx, exact_min, exact_max, mn if legacy else None,
                            mx if legacy else None)


class DictionaryBounds:
    """The min and max of dictionary-encoded byte strings from their indices: the dictionary's entries
    are ranked once (byte-wise unsigned, shorter prefix first, as Python compares ``bytes``), then a
    page's bounds are the entries of its smallest and largest rank, an integer reduction over its
    indices instead of a byte-wise comparison of every value. Use :meth:`build`."""

    #: a dictionary is ranked only when it is this many times smaller than the values it encodes
    #: (ranking sorts it in Python; the per-value comparison it saves is a few nanoseconds)
    MIN_VALUES_PER_ENTRY = 64

    def __init__(self, dictionary: BinaryArray, order: np.ndarray, rank: np.ndarray) -> None:
        self.dictionary, self.order, self.rank = dictionary, order, rank

    @classmethod
    def build(cls, dictionary: Any, num_values: int, ptype: int, sort_order: SortOrder) -> DictionaryBounds | None:
        """The ranked ``dictionary`` of ``num_values`` BYTE_ARRAY values in unsigned order, or None where
        the plain per-value statistics apply (other types and orders, a dictionary too large to rank)."""
        if ptype != PhysicalType.BYTE_ARRAY or sort_order is not SortOrder.UNSIGNED or \
                not isinstance(dictionary, BinaryArray) or not len(dictionary) or \
                len(dictionary) * cls.MIN_VALUES_PER_ENTRY > num_values:
            return None
        entries = dictionary.to_pylist()
        order = np.array(sorted(range(len(entries)), key=entries.__getitem__), np.int64)
        rank = np.empty(len(entries), np.int32)
        rank[order] = np.arange(len(entries), dtype=np.int32)
        return cls(dictionary, order, rank)

    def bounds(self, indices: np.ndarray) -> BinaryArray:
        """The min and max of the values of ``indices`` (valid indices into the dictionary) as a
        two-value BinaryArray, empty when there are no indices: :func:`compute_statistics` of it equals
        that of the values themselves."""
        if not len(indices):
            return self.dictionary.take(np.zeros(0, np.int64))
        r = self.rank[indices]
        return self.dictionary.take(self.order[[int(r.min()), int(r.max())]])
