"""XXH64 (seed 0) of many values at once, vectorized with numpy.

:func:`xxh64_fixed` hashes the rows of a ``(n, width)`` uint8 matrix, :func:`xxh64_binary` the values of a
:class:`~pqbloom.arrays.BinaryArray`, :func:`xxh64_u32` / :func:`xxh64_u64` 4- and 8-byte little-endian
lanes. The arithmetic is numpy ``uint64`` (multiplication wraps modulo 2**64, rotations are two shifts
and an OR), bit-exact with the ``xxhash`` package, which hashes long values and small groups (where
numpy's per-call overhead dominates). Parquet's Bloom filters (:mod:`pqbloom.bloom`) hash with it.
"""

from __future__ import annotations

import numpy as np
import xxhash

from .arrays import BinaryArray

__all__ = ["xxh64_fixed", "xxh64_binary", "xxh64_u32", "xxh64_u64", "HASH_CHUNK_ROWS", "VECTOR_MAX_LEN",
           "VECTOR_MIN_GROUP"]

# XXH64 primes (xxHash specification v0.1.1).
_P1 = 0x9E3779B185EBCA87
_P2 = 0xC2B2AE3D27D4EB4F
_P3 = 0x165667B19E3779F9
_P4 = 0x85EBCA77C2B2AE63
_P5 = 0x27D4EB2F165667C5
_MASK64 = (1 << 64) - 1
_U1, _U2, _U3, _U4, _U5 = (np.uint64(p) for p in (_P1, _P2, _P3, _P4, _P5))
_STRIPE = 32
_EMPTY_HASH = np.uint64(xxhash.xxh64_intdigest(b""))

#: Rows hashed per numpy pass; bounds the size of every temporary.
HASH_CHUNK_ROWS = 1 << 15
#: Values longer than this are hashed one by one with ``xxhash`` (the C
#: library beats numpy's per-stripe passes there); so are byte-array length
#: groups with fewer than ``VECTOR_MIN_GROUP`` members (numpy's per-call
#: overhead dominates).
VECTOR_MAX_LEN = 64
VECTOR_MIN_GROUP = 64
#: Values gathered at once when building a length-group matrix.
_GATHER_ROWS = 1 << 15


# --------------------------------------------------------------------------
# XXH64, vectorized
# --------------------------------------------------------------------------

def _rotl(x: np.ndarray, r: int, tmp: np.ndarray) -> None:
    """x = rotl64(x, r) in place (``tmp`` is scratch of the same shape)."""
    np.right_shift(x, np.uint64(64 - r), out=tmp)
    np.left_shift(x, np.uint64(r), out=x)
    np.bitwise_or(x, tmp, out=x)


def _round(acc: np.ndarray, lane: np.ndarray, tmp: np.ndarray) -> None:
    """acc = rotl(acc + lane * P2, 31) * P1 in place."""
    np.multiply(lane, _U2, out=tmp)
    acc += tmp
    _rotl(acc, 31, tmp)
    acc *= _U1


def _lane64_step(acc: np.ndarray, lane: np.ndarray, k: np.ndarray, tmp: np.ndarray) -> None:
    """Consume one 8-byte lane of the tail: acc ^= round(0, lane); acc = rotl(acc, 27) * P1 + P4."""
    np.multiply(lane, _U2, out=k)
    _rotl(k, 31, tmp)
    k *= _U1
    acc ^= k
    _rotl(acc, 27, tmp)
    acc *= _U1
    acc += _U4


def _lane32_step(acc: np.ndarray, lane32: np.ndarray, k: np.ndarray, tmp: np.ndarray) -> None:
    """Consume one 4-byte lane of the tail: acc ^= lane * P1; acc = rotl(acc, 23) * P2 + P3."""
    np.multiply(lane32.astype(np.uint64), _U1, out=k)
    acc ^= k
    _rotl(acc, 23, tmp)
    acc *= _U2
    acc += _U3


def _avalanche(acc: np.ndarray, tmp: np.ndarray) -> None:
    np.right_shift(acc, np.uint64(33), out=tmp)
    acc ^= tmp
    acc *= _U2
    np.right_shift(acc, np.uint64(29), out=tmp)
    acc ^= tmp
    acc *= _U3
    np.right_shift(acc, np.uint64(32), out=tmp)
    acc ^= tmp


def xxh64_u64(lanes: np.ndarray, out: np.ndarray) -> None:
    """XXH64 of 8-byte values given as native uint64 (their little-endian bytes); writes ``out``."""
    for s in range(0, len(lanes), HASH_CHUNK_ROWS):
        lane = lanes[s:s + HASH_CHUNK_ROWS]
        acc = out[s:s + HASH_CHUNK_ROWS]
        k = np.empty_like(acc)
        tmp = np.empty_like(acc)
        acc.fill(np.uint64((_P5 + 8) & _MASK64))
        _lane64_step(acc, lane, k, tmp)
        _avalanche(acc, tmp)


def xxh64_u32(lanes: np.ndarray, out: np.ndarray) -> None:
    """XXH64 of 4-byte values given as native uint32 (their little-endian bytes); writes ``out``."""
    for s in range(0, len(lanes), HASH_CHUNK_ROWS):
        lane = lanes[s:s + HASH_CHUNK_ROWS]
        acc = out[s:s + HASH_CHUNK_ROWS]
        k = np.empty_like(acc)
        tmp = np.empty_like(acc)
        acc.fill(np.uint64((_P5 + 4) & _MASK64))
        _lane32_step(acc, lane, k, tmp)
        _avalanche(acc, tmp)


def _xxh64_rows(block: np.ndarray, width: int, out: np.ndarray) -> None:
    """XXH64 of each row of a C-contiguous ``(k, padded)`` uint8 array whose first ``width`` bytes are the value.

    ``padded`` is ``width`` rounded up to a multiple of 8 (the padding bytes are never read).
    """
    k_rows = block.shape[0]
    u64 = block.view("<u8").astype(np.uint64, copy=False)
    u32 = block.view("<u4").astype(np.uint32, copy=False)
    k = np.empty(k_rows, np.uint64)
    tmp = np.empty(k_rows, np.uint64)
    acc = out
    pos = 0
    if width >= _STRIPE:
        v1 = np.full(k_rows, np.uint64((_P1 + _P2) & _MASK64))
        v2 = np.full(k_rows, _U2)
        v3 = np.zeros(k_rows, np.uint64)
        v4 = np.full(k_rows, np.uint64((-_P1) & _MASK64))
        vs = (v1, v2, v3, v4)
        while pos + _STRIPE <= width:
            c = pos // 8
            for j, v in enumerate(vs):
                _round(v, u64[:, c + j], tmp)
            pos += _STRIPE
        acc.fill(0)
        for v, r in zip(vs, (1, 7, 12, 18)):
            np.copyto(k, v)
            _rotl(k, r, tmp)
            acc += k
        for v in vs:  # merge rounds
            v *= _U2
            _rotl(v, 31, tmp)
            v *= _U1
            acc ^= v
            acc *= _U1
            acc += _U4
    else:
        acc.fill(_U5)
    acc += np.uint64(width)
    while pos + 8 <= width:
        _lane64_step(acc, u64[:, pos // 8], k, tmp)
        pos += 8
    if pos + 4 <= width:
        _lane32_step(acc, u32[:, pos // 4], k, tmp)
        pos += 4
    while pos < width:
        np.multiply(block[:, pos].astype(np.uint64), _U5, out=k)
        acc ^= k
        _rotl(acc, 11, tmp)
        acc *= _U1
        pos += 1
    _avalanche(acc, tmp)


def _xxh64_matrix_into(matrix: np.ndarray, out: np.ndarray) -> None:
    n, width = matrix.shape
    if n == 0:
        return
    if width in (4, 8) and matrix.flags.c_contiguous:
        lanes = matrix.reshape(-1).view("<u4" if width == 4 else "<u8")
        if width == 4:
            xxh64_u32(lanes.astype(np.uint32, copy=False), out)
        else:
            xxh64_u64(lanes.astype(np.uint64, copy=False), out)
        return
    if width > VECTOR_MAX_LEN:
        flat = np.ascontiguousarray(matrix).reshape(-1)
        starts = np.arange(n, dtype=np.int64) * width
        out[:] = _xxh64_loop(flat, starts, starts + width)
        return
    padded = -(-width // 8) * 8
    direct = width > 0 and padded == width and matrix.flags.c_contiguous
    rows = HASH_CHUNK_ROWS
    scratch = None if direct else np.zeros((min(rows, n), max(padded, 8)), np.uint8)
    for s in range(0, n, rows):
        part = matrix[s:s + rows]
        if direct:
            block = part
        else:
            assert scratch is not None
            block = scratch[:len(part)]
            block[:, :width] = part
        _xxh64_rows(block, width, out[s:s + len(part)])


def xxh64_fixed(matrix: np.ndarray) -> np.ndarray:
    """XXH64 (seed 0) of every row of a 2-D ``uint8`` array, as a ``uint64`` array.

    Any width is allowed, including 0 (every row hashes the empty string).
    Widths 4 and 8 take a single-lane fast path.
    """
    m = np.asarray(matrix)
    if m.ndim != 2 or m.dtype != np.uint8:
        raise TypeError(f"xxh64_fixed expects a 2-D uint8 array, got {m.dtype} with shape {m.shape}")
    out = np.empty(m.shape[0], np.uint64)
    _xxh64_matrix_into(m, out)
    return out


def _xxh64_loop(data: np.ndarray, starts: np.ndarray, ends: np.ndarray) -> np.ndarray:
    """XXH64 of ``data[starts[i]:ends[i]]``, one ``xxhash`` call per value."""
    slow_bytes = int((ends - starts).sum())
    # Slicing bytes is faster than slicing a memoryview; copy unless that would copy far more than we hash.
    buf: bytes | memoryview = data.tobytes() if len(data) <= 8 * slow_bytes + 4096 else data.data
    h = xxhash.xxh64_intdigest
    return np.array([h(buf[a:b]) for a, b in zip(starts.tolist(), ends.tolist())], dtype=np.uint64).reshape(-1)


def xxh64_binary(values: BinaryArray) -> np.ndarray:
    """XXH64 (seed 0) of every value of a :class:`BinaryArray`, as a ``uint64`` array.

    Values are grouped by length (a radix sort on the clipped length). Each
    group of at least ``VECTOR_MIN_GROUP`` values of at most
    ``VECTOR_MAX_LEN`` bytes is gathered 8 bytes at a time into a
    ``(k, ceil(length / 8) * 8)`` matrix and hashed with numpy; sparse lengths
    and long values are hashed one by one with ``xxhash``.
    """
    n = len(values)
    out = np.empty(n, np.uint64)
    if n == 0:
        return out
    width = values.fixed_width()
    if width is not None:
        _xxh64_matrix_into(values.as_matrix(width), out)
        return out
    data = np.ascontiguousarray(values.data)
    offsets = values.offsets
    starts = offsets[:-1]
    lens = np.diff(offsets)
    overflow = VECTOR_MAX_LEN + 1  # one bucket for every long value
    key = np.minimum(lens, overflow).astype(np.uint16)
    counts = np.bincount(key, minlength=overflow + 1)
    order = np.argsort(key, kind="stable")  # radix sort for uint16 keys
    bounds = np.zeros(len(counts) + 1, np.int64)
    np.cumsum(counts, out=bounds[1:])
    vector_lengths = [L for L in np.flatnonzero(counts >= VECTOR_MIN_GROUP).tolist() if L != overflow]
    slow = np.ones(len(counts), bool)
    slow[vector_lengths] = False
    if vector_lengths:
        # Every byte offset as the start of a little-endian uint64 (overlapping,
        # unaligned view over the data plus 8 zero bytes of padding).
        padded = np.zeros(len(data) + 8, np.uint8)
        padded[:len(data)] = data
        words = np.ndarray(shape=(len(padded) - 7,), dtype="<u8", buffer=padded, strides=(1,))
        lane_offsets = np.arange(-(-VECTOR_MAX_LEN // 8), dtype=np.int64) * 8
        for length in vector_lengths:
            rows = order[bounds[length]:bounds[length + 1]]
            if length == 0:
                out[rows] = _EMPTY_HASH
                continue
            lanes = lane_offsets[:-(-length // 8)]
            for s in range(0, len(rows), _GATHER_ROWS):
                r = rows[s:s + _GATHER_ROWS]
                block = words[starts[r][:, None] + lanes].astype(np.uint64, copy=False).view(np.uint8)
                h = np.empty(len(r), np.uint64)
                _xxh64_rows(block, length, h)
                out[r] = h
    slow_buckets = np.flatnonzero(slow & (counts > 0)).tolist()
    if slow_buckets:
        rows = np.concatenate([order[bounds[i]:bounds[i + 1]] for i in slow_buckets])
        out[rows] = _xxh64_loop(data, starts[rows], offsets[1:][rows])
    return out
