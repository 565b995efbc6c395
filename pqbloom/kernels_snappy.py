"""The wrappers of the snappy kernels (:func:`pqbloom.kernels.snappy_compress`,
:func:`pqbloom.kernels.snappy_compress_plain_byte_array` and
:func:`pqbloom.kernels.snappy_decompress_into` call them with the compiled module, or None in the
reference mode, where they return None or False and the caller uses cramjam), kept apart from
:mod:`pqbloom.kernels` to keep that module readable."""

from __future__ import annotations

from typing import Any

import numpy as np

from .arrays import BinaryArray, Buffer, as_u8

__all__ = ["compress", "compress_plain_byte_array", "decompress_into"]


def compress(data: Buffer, tail: Buffer | None, compiled: Any) -> memoryview | None:
    """See :func:`pqbloom.kernels.snappy_compress`."""
    if compiled is None:
        return None
    src = np.ascontiguousarray(as_u8(data))
    rest = np.ascontiguousarray(as_u8(tail)) if tail is not None else None
    out = np.empty(compiled.max_compressed_length(len(src), 0 if rest is None else len(rest)), np.uint8)
    n = compiled.compress(src, out, rest)
    return memoryview(out[:n])  # type: ignore[arg-type]


def compress_plain_byte_array(head: Buffer, values: BinaryArray, compiled: Any) -> tuple[memoryview, int] | None:
    """See :func:`pqbloom.kernels.snappy_compress_plain_byte_array`."""
    if compiled is None:
        return None
    if not isinstance(values, BinaryArray):
        raise TypeError(f"BYTE_ARRAY values must be a BinaryArray, got {type(values).__name__}")
    offs = np.ascontiguousarray(values.offsets, dtype=np.int64)
    data = np.ascontiguousarray(values.data)
    lead = np.ascontiguousarray(as_u8(head))
    n = len(offs) - 1
    if n < 0 or offs[0] < 0 or offs[-1] > len(data):  # (the kernel checks the rest, before any write)
        raise ValueError("invalid BinaryArray: offsets decrease or reach outside the data")
    plain_size = 4 * n + int(offs[-1]) - int(offs[0])
    out = np.empty(compiled.max_compressed_length(len(lead), max(plain_size, 0)), np.uint8)
    written = int(compiled.compress_plain(lead, offs, data, out))
    if written == compiled.E_VALUE_TOO_LONG:
        raise ValueError("a BYTE_ARRAY value is longer than 2**31-1 bytes")
    if written < 0:
        raise ValueError("invalid BinaryArray: offsets decrease or reach outside the data")
    return memoryview(out[:written]), plain_size  # type: ignore[arg-type]


def decompress_into(data: Buffer, out: Buffer, compiled: Any) -> bool:
    """See :func:`pqbloom.kernels.snappy_decompress_into`."""
    if compiled is None or not compiled.ADAPTIVE:  # (see pqbloom/_kernels/unsnappy.pyx: ADAPTIVE)
        return False
    try:
        return compiled.decompress_into(data, out) == 0  # type: ignore[no-any-return]
    except (ValueError, TypeError, BufferError):  # not a contiguous byte buffer: the caller's cramjam takes it
        return False
