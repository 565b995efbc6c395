"""Numpy reference of the DECIMAL kernel (:func:`pqbloom.kernels.decimals.decimal_buffer`): the oracle
the compiled kernel is tested against and its fallback.
"""

from __future__ import annotations

import numpy as np

from ...arrays import BinaryArray
from ...errors import CorruptFileError

__all__ = ["decimal_buffer"]


def decimal_buffer(values: BinaryArray | np.ndarray, byte_width: int) -> np.ndarray:
    """Parquet DECIMAL unscaled values as Arrow decimal128 (16) / decimal256 (32) bytes: a uint8
    array of ``len(values) * byte_width`` little-endian two's complement, sign-extended.

    ``values``: a BinaryArray (BYTE_ARRAY: big-endian, any length, empty = 0), a 2-D uint8 array
    (FIXED_LEN_BYTE_ARRAY rows, big-endian) or int32 / int64 values. A value longer than
    ``byte_width`` whose extra leading bytes are not sign extension is a CorruptFileError.
    """
    if byte_width not in (16, 32):
        raise ValueError(f"decimal buffers have 16 or 32 bytes per value, not {byte_width}")
    if isinstance(values, BinaryArray):
        c = values.compact()
        lens = c.lengths()
        return _decimals_be(c.data, c.offsets[:-1], lens, byte_width)
    a = np.asarray(values)
    if a.ndim == 2 and a.dtype == np.uint8:
        n, w = a.shape
        flat = np.ascontiguousarray(a).reshape(-1)
        return _decimals_be(flat, np.arange(n, dtype=np.int64) * w, np.full(n, w, np.int64), byte_width)
    if a.ndim == 1 and a.dtype in (np.dtype(np.int32), np.dtype(np.int64)):
        n = len(a)
        out = np.empty((n, byte_width), np.uint8)
        v = a.astype("<i8")
        out[:, :8] = v.view(np.uint8).reshape(n, 8)
        out[:, 8:] = np.where(v < 0, 0xFF, 0).astype(np.uint8)[:, None]
        return out.reshape(-1)
    raise TypeError(f"decimal values are a BinaryArray, 2-D uint8 rows or int32/int64, not {a.dtype} {a.shape}")


def _decimals_be(data: np.ndarray, starts: np.ndarray, lens: np.ndarray, width: int) -> np.ndarray:
    """Big-endian values ``data[starts:starts+lens]`` as ``width``-byte little-endian rows."""
    n = len(lens)
    out = np.zeros((n, width), np.uint8)
    if n == 0:
        return out.reshape(-1)
    keep = np.minimum(lens, width)
    ends = starts + lens
    nonempty = lens > 0
    sign = np.zeros(n, np.uint8)
    sign[nonempty] = np.where(data[(ends - keep)[nonempty]] & 0x80, 0xFF, 0).astype(np.uint8)
    # dropped leading bytes of long values must repeat the sign of the bytes kept
    drop = lens - keep
    total = int(drop.sum())
    if total:
        row = np.repeat(np.arange(n, dtype=np.int64), drop)
        idx = np.repeat(starts, drop) + np.arange(total, dtype=np.int64) - np.repeat(np.cumsum(drop) - drop, drop)
        bad = data[idx] != sign[row]
        if bool(bad.any()):
            i = int(row[int(np.argmax(bad))])
            raise CorruptFileError(f"DECIMAL value {i} of {int(lens[i])} bytes does not fit {width} bytes")
    for k in range(width):  # little-endian byte k is big-endian byte len-1-k
        has = keep > k
        out[has, k] = data[ends[has] - 1 - k]
        out[~has, k] = sign[~has]
    return out.reshape(-1)
