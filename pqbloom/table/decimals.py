"""Decimal values between Parquet's encodings and Arrow's, with numpy over whole columns.

Parquet stores a DECIMAL's unscaled value as an INT32, an INT64, or big-endian two's complement
bytes (FIXED_LEN_BYTE_ARRAY of a fixed width, BYTE_ARRAY of any length). Arrow's decimal128 and
decimal256 hold it as 16 or 32 bytes of little-endian two's complement. Here a column of values is
a ``(n, width)`` uint8 matrix of such words; conversions reverse byte order, sign-extend or check
that dropped leading bytes were only sign extension, never one Python step per value.
"""

from __future__ import annotations

import numpy as np

__all__ = ["arrow_decimal_width", "words_from_ints", "words_from_big_endian", "words_from_byte_array",
           "big_endian_from_words", "ints_from_words", "DecimalOverflow"]


class DecimalOverflow(ValueError):
    """A value needs more bytes than the target holds."""


def arrow_decimal_width(precision: int) -> int | None:
    """Bytes of the Arrow decimal type for ``precision`` digits (16: decimal128, 32: decimal256), as
    Arrow picks it; None past Arrow's 76 digits."""
    if precision <= 38:
        return 16
    if precision <= 76:
        return 32
    return None


def words_from_ints(values: np.ndarray, width: int) -> np.ndarray:
    """INT32/INT64 unscaled values -> ``(n, width)`` little-endian words (sign-extended)."""
    v = np.ascontiguousarray(values, dtype="<i8")
    out = np.empty((len(v), width), np.uint8)
    out[:, :8] = v.view(np.uint8).reshape(-1, 8)
    out[:, 8:] = np.where(v < 0, 0xFF, 0).astype(np.uint8)[:, None]
    return out


def _sign_bytes(first: np.ndarray) -> np.ndarray:
    """0xFF where the most significant byte ``first`` is negative, else 0."""
    return np.where(first >= 0x80, 0xFF, 0).astype(np.uint8)


def words_from_big_endian(matrix: np.ndarray, width: int) -> np.ndarray:
    """``(n, w)`` big-endian two's complement rows (FIXED_LEN_BYTE_ARRAY) -> ``(n, width)`` words.

    Raises :class:`DecimalOverflow` when a row needs more than ``width`` bytes."""
    m = np.ascontiguousarray(matrix, dtype=np.uint8)
    n, w = m.shape if m.ndim == 2 else (len(m), 0)
    out = np.empty((n, width), np.uint8)
    if w == 0:
        out[:] = 0
        return out
    if w > width:
        keep = m[:, w - width:]
        if bool((m[:, :w - width] != _sign_bytes(keep[:, 0])[:, None]).any()):
            raise DecimalOverflow(f"a value needs more than {width} bytes")
        m, w = keep, width
    out[:, :w] = m[:, ::-1]
    out[:, w:] = _sign_bytes(m[:, 0])[:, None]
    return out


def words_from_byte_array(offsets: np.ndarray, data: np.ndarray, width: int) -> np.ndarray:
    """BYTE_ARRAY values (``offsets``, ``data``) of any lengths -> ``(n, width)`` words. A value of no
    bytes is 0 (what writers that encode 0 as no bytes mean; DuckDB reads it so).

    Raises :class:`DecimalOverflow` when a value needs more than ``width`` bytes."""
    offsets = np.asarray(offsets, dtype=np.int64)
    data = np.asarray(data, dtype=np.uint8)
    n = len(offsets) - 1
    starts, lens = offsets[:-1], np.diff(offsets)
    out = np.zeros((n, width), np.uint8)
    if n == 0 or not bool(lens.any()):
        return out
    # only the last ``width`` bytes of a value are kept; those before must be its sign extension
    kept = np.minimum(lens, width)
    first_kept = starts + lens - kept
    nonempty = lens > 0
    sign = np.zeros(n, np.uint8)
    sign[nonempty] = _sign_bytes(data[first_kept[nonempty]])
    long = lens > width
    if bool(long.any()):
        extra = (lens - width)[long]
        pos = np.repeat(starts[long], extra) + (np.arange(int(extra.sum()), dtype=np.int64)
                                                - np.repeat(np.cumsum(extra) - extra, extra))
        if bool((data[pos] != np.repeat(sign[long], extra)).any()):
            raise DecimalOverflow(f"a value needs more than {width} bytes")
    out[:] = sign[:, None]
    total = int(kept.sum())
    rows = np.repeat(np.arange(n, dtype=np.int64), kept)
    within = np.arange(total, dtype=np.int64) - np.repeat(np.cumsum(kept) - kept, kept)
    # byte j of a value's kept tail (big-endian) is little-endian byte kept - 1 - j
    out[rows, np.repeat(kept, kept) - 1 - within] = data[np.repeat(first_kept, kept) + within]
    return out


def big_endian_from_words(words: np.ndarray, w: int) -> np.ndarray:
    """``(n, W)`` little-endian words -> ``(n, w)`` big-endian rows (FIXED_LEN_BYTE_ARRAY of width ``w``).

    Raises :class:`DecimalOverflow` when a value needs more than ``w`` bytes."""
    words = np.ascontiguousarray(words, dtype=np.uint8)
    n, width = words.shape
    if w >= width:
        out = np.empty((n, w), np.uint8)
        out[:, w - width:] = words[:, ::-1]
        out[:, :w - width] = _sign_bytes(words[:, width - 1])[:, None]
        return out
    be = words[:, ::-1]
    if bool((be[:, :width - w] != _sign_bytes(be[:, width - w])[:, None]).any()):
        raise DecimalOverflow(f"a value needs more than {w} bytes")
    return np.ascontiguousarray(be[:, width - w:])


def ints_from_words(words: np.ndarray, bits: int) -> np.ndarray:
    """``(n, W)`` little-endian words -> int32 or int64 values.

    Raises :class:`DecimalOverflow` when a value does not fit in ``bits``."""
    be = big_endian_from_words(words, bits // 8)
    return be[:, ::-1].copy().view("<i8" if bits == 64 else "<i4").reshape(-1).astype(
        np.int64 if bits == 64 else np.int32)
