"""The DECIMAL kernel (compiled module ``decimals``): DECIMAL values to Arrow decimal128 / decimal256
bytes. The reference is :mod:`pqbloom.kernels.reference.decimals`."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from ..arrays import BinaryArray
from ..errors import CorruptFileError
from . import compiled as compiled_module
from .reference.decimals import decimal_buffer as reference_decimal_buffer

__all__ = ["decimal_buffer"]


def decimal_buffer(values: BinaryArray | np.ndarray, byte_width: int, *,
                   empty: Callable[[int], np.ndarray] | None = None) -> np.ndarray:
    """DECIMAL unscaled values as Arrow decimal128 (16) / decimal256 (32) bytes: a uint8 array of
    ``len(values) * byte_width`` little-endian two's complement, sign-extended.

    ``values``: a BinaryArray (BYTE_ARRAY, big-endian), 2-D uint8 rows (FIXED_LEN_BYTE_ARRAY,
    big-endian) or int32 / int64. CorruptFileError for a value that does not fit ``byte_width``.
    ``empty(nbytes)``: where the result is made (an uninitialized uint8 array of that many bytes;
    ``numpy.empty`` by default), for a caller whose buffers come from a pool.
    """
    compiled: Any = compiled_module("decimals")
    if compiled is None:
        return reference_decimal_buffer(values, byte_width)
    if byte_width not in (16, 32):
        raise ValueError(f"decimal buffers have 16 or 32 bytes per value, not {byte_width}")
    make = empty if empty is not None else _numpy_empty
    info = np.zeros(3, np.int64)
    if isinstance(values, BinaryArray):
        offs = np.ascontiguousarray(values.offsets, dtype=np.int64)
        out = _checked(make(len(values) * byte_width), len(values) * byte_width)
        rc = int(compiled.from_binary(offs, np.ascontiguousarray(values.data), byte_width, out, info))
    else:
        a = np.asarray(values)
        if a.ndim == 2 and a.dtype == np.uint8:
            n, w = a.shape
            out = _checked(make(n * byte_width), n * byte_width)
            rc = int(compiled.from_fixed(np.ascontiguousarray(a).reshape(-1), n, w, byte_width, out, info))
        elif a.ndim == 1 and a.dtype in (np.dtype(np.int32), np.dtype(np.int64)):
            out = _checked(make(len(a) * byte_width), len(a) * byte_width)
            rc = int(compiled.from_ints(np.ascontiguousarray(a), byte_width, out))
        else:
            raise TypeError(f"decimal values are a BinaryArray, 2-D uint8 rows or int32/int64, not {a.dtype} {a.shape}")
    if rc == compiled.DOES_NOT_FIT:
        i = int(info[0])
        length = (int(values.offsets[i + 1]) - int(values.offsets[i]) if isinstance(values, BinaryArray)
                  else np.asarray(values).shape[1])
        raise CorruptFileError(f"DECIMAL value {i} of {length} bytes does not fit {byte_width} bytes")
    if rc < 0:
        raise ValueError("invalid BinaryArray: offsets decrease or reach outside the data")
    return out


def _numpy_empty(nbytes: int) -> np.ndarray:
    return np.empty(nbytes, np.uint8)


def _checked(out: np.ndarray, nbytes: int) -> np.ndarray:
    """``out`` as the kernel takes it: exactly ``nbytes`` writable contiguous bytes."""
    if out.dtype != np.uint8 or out.shape != (nbytes,) or not out.flags.c_contiguous or not out.flags.writeable:
        raise ValueError(f"decimal_buffer: empty() must give {nbytes} writable contiguous bytes")
    return out
