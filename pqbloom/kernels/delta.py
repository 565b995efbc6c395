"""The DELTA_BINARY_PACKED kernel (compiled module ``delta``): INT32 / INT64 values, and the lengths and
prefixes of the DELTA byte-array encodings. The reference is :mod:`pqbloom.kernels.reference.delta`."""

from __future__ import annotations

from typing import Any

import numpy as np

from ..arrays import Buffer, as_u8
from ..limits import charge
from . import compiled as compiled_module
from .reference import delta as reference

__all__ = ["decode_delta_binary_packed"]

_DELTA_DTYPES = (np.dtype(np.int32), np.dtype(np.int64))


def decode_delta_binary_packed(buf: Buffer, count: int | None = None,
                               dtype: type | np.dtype = np.int64) -> tuple[np.ndarray, int]:
    """DELTA_BINARY_PACKED values: (int32 or int64 array, bytes the whole stream uses).

    ``count`` defaults to the header's total count; when given it must not exceed it and only the
    first ``count`` values are returned (the rest of the stream is still checked and its size
    counted). INT32 values wrap modulo 2**32. See
    :func:`pqbloom.kernels.reference.delta.decode_delta_binary_packed` for what is accepted;
    CorruptFileError otherwise.
    """
    compiled: Any = compiled_module("delta")
    if compiled is None:
        return reference.decode_delta_binary_packed(buf, count, dtype)
    dt = np.dtype(dtype)
    if dt not in _DELTA_DTYPES:
        raise ValueError(f"dtype must be int32 or int64, got {dt}")
    u8 = np.ascontiguousarray(as_u8(buf))
    # the kernel takes an int64, -1 for "all of them": a count no header can hold stays one
    want = -1 if count is None else (-2 if int(count) < 0 else min(int(count), 1 << 31))
    info = np.zeros(3, np.int64)
    used = int(compiled.walk(u8, want, info))
    if used < 0:
        # refused: the reference names the reason (its messages hold header values up to 70 bits)
        reference.decode_delta_binary_packed(buf, count, dtype)
        raise RuntimeError("DELTA_BINARY_PACKED: the compiled decoder refused a stream the reference "
                           "accepts")  # pragma: no cover - the tests hold the two to the same streams
    n = int(info[0])
    # the reference's charge (its result, unpacked deltas and block minimums), so both modes stop alike
    charge(24 * n, f"{n:,} DELTA_BINARY_PACKED values")
    out = np.empty(n, dt)
    if int(compiled.decode(u8, want, out)) < 0:  # pragma: no cover - the stream was walked just before
        raise RuntimeError("DELTA_BINARY_PACKED: the input changed during the decoding")
    return out, used
