"""The Bloom filter kernels (compiled module ``bloom``): XXH64 (seed 0) of many values at once, byte
strings (:func:`xxh64_binary`), fixed-width rows (:func:`xxh64_fixed`) and 4- / 8-byte lanes
(:func:`xxh64_u32`, :func:`xxh64_u64`), and split-block insertion (:func:`insert_hashes`). The
reference is :mod:`pqbloom.kernels.reference.bloom` (numpy).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..arrays import BinaryArray
from . import built, compiled
from .reference import bloom as reference

__all__ = ["xxh64_binary", "xxh64_fixed", "xxh64_u32", "xxh64_u64", "insert_hashes"]

#: the compiled module when built; whether it is in use is decided per call
_bloom: Any = built("bloom")


def _use() -> bool:
    return compiled("bloom") is not None


def xxh64_binary(values: BinaryArray) -> np.ndarray:
    """XXH64 of every value of a :class:`BinaryArray`, as a ``uint64`` array."""
    if not _use():
        return reference.xxh64_binary(values)
    out = np.empty(len(values), np.uint64)
    rc = _bloom.xxh64_binary(np.ascontiguousarray(values.offsets, dtype=np.int64), np.ascontiguousarray(values.data),
                             out)
    if rc < 0:
        raise ValueError("invalid BinaryArray: offsets decrease or reach outside the data")
    return out


def xxh64_fixed(matrix: np.ndarray) -> np.ndarray:
    """XXH64 of each row of an ``(n, width)`` uint8 matrix, as a ``uint64`` array."""
    m = np.asarray(matrix)
    if not _use() or m.ndim != 2 or m.dtype != np.uint8 or m.shape[1] == 0:
        return reference.xxh64_fixed(matrix)
    out = np.empty(m.shape[0], np.uint64)
    if len(out):
        _bloom.xxh64_rows(np.ascontiguousarray(m).reshape(-1), m.shape[1], out)
    return out


def xxh64_u32(lanes: np.ndarray, out: np.ndarray) -> None:
    """XXH64 of 4-byte little-endian lanes (a uint32 array's values) into ``out`` (uint64)."""
    if not _use() or lanes.dtype != np.uint32 or out.dtype != np.uint64 or not out.flags.c_contiguous:
        return reference.xxh64_u32(lanes, out)
    _bloom.xxh64_lanes(np.ascontiguousarray(lanes), out)
    return None


def xxh64_u64(lanes: np.ndarray, out: np.ndarray) -> None:
    """XXH64 of 8-byte little-endian lanes (a uint64 array's values) into ``out`` (uint64)."""
    if not _use() or lanes.dtype != np.uint64 or out.dtype != np.uint64 or not out.flags.c_contiguous:
        return reference.xxh64_u64(lanes, out)
    _bloom.xxh64_lanes(np.ascontiguousarray(lanes), out)
    return None


def insert_hashes(words: np.ndarray, hashes: np.ndarray) -> None:
    """Insert uint64 ``hashes`` into the split-block filter of ``(num_blocks, 8)`` uint32 ``words``."""
    if not _use() or not words.flags.c_contiguous or words.dtype != np.uint32:
        return reference.insert_hashes(words, hashes)
    _bloom.insert(words.reshape(-1), np.ascontiguousarray(hashes, dtype=np.uint64))
    return None
