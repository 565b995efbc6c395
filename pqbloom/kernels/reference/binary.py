"""Numpy reference of the byte-array kernels (:mod:`pqbloom.kernels.binary`): PLAIN BYTE_ARRAY decode
(whole, or into the caller's buffers), the dictionary gather, the DELTA_BYTE_ARRAY prefix rebuild and,
for the write path, the byte-wise arg-min/max and the PLAIN BYTE_ARRAY encoder. Same contract as every
reference module: the oracle the compiled kernels are tested against and their fallback.
"""

from __future__ import annotations

import struct

import numpy as np
from numpy.lib.stride_tricks import as_strided

from ...arrays import BinaryArray, Buffer, as_u8
from ...errors import CorruptFileError
from .bits import MAX_COUNT

__all__ = ["decode_plain_byte_array", "into_buffers_usable", "check_offsets_base", "decode_plain_byte_array_into",
           "take_binary", "take_binary_into", "rebuild_prefixes", "binary_argminmax", "encode_plain_byte_array"]

_I64_MAX = (1 << 63) - 1


# -- PLAIN BYTE_ARRAY decode ---------------------------------------------------------------------

def decode_plain_byte_array(buf: Buffer, count: int) -> tuple[BinaryArray, int]:
    """``count`` values of 4-byte little-endian length + bytes: (BinaryArray, bytes used).

    Mirrors ``pqbloom.encodings.plain.decode_plain_byte_array``: when every value has the length
    of the first one the values are one reshape, else a loop over the length prefixes.
    """
    u8 = as_u8(buf)
    count = int(count)
    if count < 0 or count > MAX_COUNT:
        raise CorruptFileError(f"PLAIN BYTE_ARRAY: invalid value count {count}")
    if count == 0:
        return BinaryArray(np.zeros(1, np.int64), np.zeros(0, np.uint8)), 0
    size = len(u8)
    if 4 * count > size:
        raise CorruptFileError(f"PLAIN BYTE_ARRAY: {count} values need at least {4 * count} bytes, "
                               f"only {size} available")
    first = int.from_bytes(u8[:4].tobytes(), "little")
    stride = 4 + first
    if stride * count <= size:
        rows = u8[: stride * count].reshape(count, stride)
        lens = np.ascontiguousarray(rows[:, :4]).view("<u4").reshape(-1)
        if bool((lens == first).all()):
            data = np.ascontiguousarray(rows[:, 4:]).reshape(-1)
            return BinaryArray(np.arange(count + 1, dtype=np.int64) * first, data), stride * count
    b = bytes(u8)
    unpack = struct.Struct("<I").unpack_from
    starts = [0] * count  # byte position of each value's length prefix
    pos = 0
    try:
        for i in range(count):
            starts[i] = pos
            pos += 4 + unpack(b, pos)[0]
    except struct.error:
        raise CorruptFileError(f"PLAIN BYTE_ARRAY: value length prefix past the end of the {size}-byte page "
                               f"(value {i})") from None
    if pos > size:
        raise CorruptFileError(f"PLAIN BYTE_ARRAY: last value runs {pos - size} bytes past the end of the page")
    pstart = np.array(starts, dtype=np.int64)
    offsets = np.empty(count + 1, np.int64)
    # data offset of value i = its prefix position minus the 4*i bytes of earlier prefixes
    offsets[:-1] = pstart - 4 * np.arange(count, dtype=np.int64)
    offsets[-1] = pos - 4 * count
    keep = np.ones(pos, bool)
    for k in range(4):
        keep[pstart + k] = False
    return BinaryArray(offsets, u8[:pos][keep]), pos



# -- gather (dictionary take) --------------------------------------------------------------------

def into_buffers_usable(count: int, offsets: np.ndarray, data: np.ndarray) -> bool:
    """Whether :func:`decode_plain_byte_array_into` can write ``count`` values to these buffers."""
    return (len(offsets) >= count + 1 and offsets.ndim == 1 and data.ndim == 1 and offsets.dtype == np.int64
            and data.dtype == np.uint8 and bool(offsets.flags.c_contiguous) and bool(data.flags.c_contiguous)
            and bool(offsets.flags.writeable) and bool(data.flags.writeable))


def check_offsets_base(base: int, size: int) -> None:
    """ValueError unless offsets starting at ``base`` stay int64 for any values of a ``size``-byte page
    (a call's error, not the file's: the base is the caller's running total)."""
    if not 0 <= int(base) <= _I64_MAX - size:
        raise ValueError(f"offsets base {base} out of range for a {size}-byte page")


def decode_plain_byte_array_into(buf: Buffer, count: int, offsets: np.ndarray, data: np.ndarray,
                                 base: int = 0) -> tuple[int, int] | None:
    """:func:`decode_plain_byte_array` into given buffers: ``offsets[:count + 1]`` (int64, starting
    at ``base``) and the bytes into ``data`` (uint8) from 0. Returns (value bytes, input bytes used),
    or None when the values do not fit or the buffers are unusable (:func:`into_buffers_usable`).
    Errors as :func:`decode_plain_byte_array` (an input error is reported even when it would not fit)."""
    u8 = as_u8(buf)
    check_offsets_base(base, len(u8))
    count = int(count)
    if count < 0 or count > MAX_COUNT:
        raise CorruptFileError(f"PLAIN BYTE_ARRAY: invalid value count {count}")
    if 4 * count > len(u8):
        raise CorruptFileError(f"PLAIN BYTE_ARRAY: {count} values need at least {4 * count} bytes, "
                               f"only {len(u8)} available")
    if not into_buffers_usable(count, offsets, data):
        return None
    values, used = decode_plain_byte_array(u8, count)
    c = values.compact()
    if len(c.data) > len(data):
        return None
    data[:len(c.data)] = c.data
    np.add(c.offsets, base, out=offsets[:count + 1])
    return len(c.data), used


def take_binary(values: BinaryArray, indices: np.ndarray) -> BinaryArray:
    """``values[indices]`` as a compact BinaryArray; CorruptFileError for an index out of range
    (the smallest index when one is negative, else the largest, as
    ``pqbloom.encodings.dictionary.take_dictionary`` reports it)."""
    idx = np.asarray(indices)
    size = len(values)
    if len(idx):
        lo, hi = int(idx.min()), int(idx.max())
        if lo < 0 or hi >= size:
            raise CorruptFileError(f"dictionary index {lo if lo < 0 else hi} out of range for a dictionary "
                                   f"of {size} values")
    return values.take(idx)


def take_binary_into(values: BinaryArray, indices: np.ndarray, offsets: np.ndarray, data: np.ndarray,
                     base: int = 0) -> int | None:
    """:func:`take_binary` into given buffers: ``offsets[:len(indices) + 1]`` (int64, starting at
    ``base``) and the bytes into ``data`` (uint8) from 0. Returns the bytes taken, or None when they
    do not fit or the buffers are unusable (:func:`into_buffers_usable`). Errors as :func:`take_binary`."""
    taken = take_binary(values, indices)
    if not into_buffers_usable(len(taken), offsets, data):
        return None
    c = taken.compact()
    if len(c.data) > len(data):
        return None
    data[:len(c.data)] = c.data
    np.add(c.offsets, base, out=offsets[:len(taken) + 1])
    return len(c.data)



# -- DELTA_BYTE_ARRAY prefix rebuild ------------------------------------------------------------

def rebuild_prefixes(prefix: np.ndarray, suffixes: BinaryArray) -> BinaryArray:
    """Value i is the first ``prefix[i]`` bytes of value i-1 followed by suffix i.

    CorruptFileError for a negative or non-zero first prefix length ("invalid prefix length"), then
    for a prefix longer than the value before it. Mirrors the end of
    ``pqbloom.encodings.delta.decode_delta_byte_array``.
    """
    p = np.asarray(prefix).astype(np.int64)
    n = len(p)
    if n != len(suffixes):
        raise ValueError(f"{n} prefix lengths for {len(suffixes)} suffixes")
    slen = suffixes.lengths()
    lens = p + slen
    if n:
        if int(p.min()) < 0 or p[0] != 0:
            raise CorruptFileError("DELTA_BYTE_ARRAY: invalid prefix length")
        if n > 1 and bool((p[1:] > lens[:-1]).any()):
            raise CorruptFileError("DELTA_BYTE_ARRAY: prefix longer than the previous value")
    if n == 0 or not bool(p.any()):
        return suffixes
    offsets = np.zeros(n + 1, np.int64)
    np.cumsum(lens, out=offsets[1:])
    if int(p.max()) * 10 <= n:  # a pass per byte column pays off over a loop per value
        data = _rebuild_columns(p, lens, suffixes, offsets)
    else:
        data = _rebuild_loop(p, suffixes)
    return BinaryArray(offsets, data)


def _interleave_mask(first: np.ndarray, second: np.ndarray) -> np.ndarray:
    """Bool mask over consecutive runs ``first[0]`` False, ``second[0]`` True, ``first[1]`` False..."""
    counts = np.empty(2 * len(first), np.int64)
    counts[0::2] = first
    counts[1::2] = second
    pattern = np.zeros(2 * len(first), bool)
    pattern[1::2] = True
    return np.repeat(pattern, counts)


def _rebuild_columns(p: np.ndarray, lens: np.ndarray, suffixes: BinaryArray, offsets: np.ndarray) -> np.ndarray:
    """Inherited prefix bytes resolved with one vectorized pass per byte column (as the encodings):
    byte ``j < p[i]`` of value ``i`` is suffix byte ``j - p[k]`` of the last value ``k < i`` with
    ``p[k] <= j``; the values still inheriting at column ``j`` form runs, ``k`` is the row before each."""
    sc = suffixes.compact()
    sdata, soff = sc.data, sc.offsets
    out = np.empty(int(offsets[-1]), np.uint8)
    out[_interleave_mask(p, lens - p)] = sdata
    base = soff[:-1] - p  # byte j of value k, when k owns it, is sdata[base[k] + j]
    act = np.flatnonzero(p > 0)
    pa = p[act]
    oa = offsets[:-1][act]
    j = 0
    while len(act):
        m = len(act)
        run_start = np.empty(m, bool)
        run_start[0] = True
        np.not_equal(act[1:], act[:-1] + 1, out=run_start[1:])
        first = np.where(run_start, np.arange(m), 0)
        np.maximum.accumulate(first, out=first)
        src = act[first] - 1
        out[oa + j] = sdata[base[src] + j]
        j += 1
        keep = pa > j
        if not keep.all():
            act, pa, oa = act[keep], pa[keep], oa[keep]
    return out


def _rebuild_loop(p: np.ndarray, suffixes: BinaryArray) -> np.ndarray:
    parts = []
    prev = b""
    for k, s in zip(p.tolist(), suffixes):
        prev = prev[:k] + s
        parts.append(prev)
    return np.frombuffer(b"".join(parts), np.uint8).copy()



# -- write path ---------------------------------------------------------------------------------



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
