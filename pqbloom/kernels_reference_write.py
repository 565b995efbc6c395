"""Numpy reference of the write path's kernels (:func:`pqbloom.kernels.binary_argminmax`,
:func:`pqbloom.kernels.encode_plain_byte_array`), kept apart from :mod:`pqbloom.kernels_reference`
(which re-exports them) to keep that module readable. Same contract: the oracle the compiled kernels
are tested against and their fallback.
"""

from __future__ import annotations

import numpy as np
from numpy.lib.stride_tricks import as_strided

from .arrays import BinaryArray

__all__ = ["binary_argminmax", "encode_plain_byte_array"]


def binary_argminmax(values: BinaryArray | np.ndarray) -> tuple[int, int]:
    """Indices of the first smallest and first largest value, byte-wise unsigned (a prefix first).

    Works on a BinaryArray or an ``(n, w)`` uint8 matrix; ``n`` must be > 0. Mirrors
    ``pqbloom.statistics.binary_argminmax``: one pass over the first 8 bytes of every value, then
    further 8-byte words only for the values still tied.
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
        # every byte position viewed as the start of an unaligned big-endian uint64
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
    # equal after zero padding: the shorter one is a prefix of the longer one
    cl = lengths[cand]
    return int(cand[int(np.argmax(cl) if want_max else np.argmin(cl))])


def _matrix_argminmax(mat: np.ndarray) -> tuple[int, int]:
    src = _MatrixWords(mat)
    if src.w == 0:
        return 0, 0
    first = src.words(0, None)
    return _refine(src, first, False), _refine(src, first, True)


def encode_plain_byte_array(values: BinaryArray) -> bytes:
    """PLAIN BYTE_ARRAY: each value as a 4-byte little-endian length, then its bytes.

    Mirrors ``pqbloom.encodings.plain.encode_plain_byte_array`` (vectorized index arithmetic).
    """
    if not isinstance(values, BinaryArray):
        raise TypeError(f"BYTE_ARRAY values must be a BinaryArray, got {type(values).__name__}")
    v = values.compact()
    n = len(v)
    if n == 0:
        return b""
    lens = v.lengths()
    if int(lens.max()) > 0x7FFFFFFF:
        raise ValueError("a BYTE_ARRAY value is longer than 2**31-1 bytes")
    prefixes = lens.astype("<u4").view(np.uint8).reshape(n, 4)
    w = v.fixed_width()
    if w is not None:
        rows = np.empty((n, 4 + w), np.uint8)
        rows[:, :4] = prefixes
        rows[:, 4:] = v.as_matrix(w)
        return rows.tobytes()
    total = int(v.offsets[-1])
    out = np.empty(total + 4 * n, np.uint8)
    is_data = np.ones(total + 4 * n, bool)
    pstart = v.offsets[:-1] + 4 * np.arange(n, dtype=np.int64)  # where each length prefix goes
    pidx = (pstart[:, None] + np.arange(4, dtype=np.int64)).reshape(-1)
    is_data[pidx] = False
    out[pidx] = prefixes.reshape(-1)
    out[is_data] = v.data
    return out.tobytes()
