"""Numpy reference of the dictionary kernels (:mod:`pqbloom.kernels.dictionary`): the oracle the compiled
hash-table build is tested against and its fallback.

Values are uniqued by sorting: numbers on their bit patterns; byte strings of equal length <= 8 on an
exact uint64 key; other fixed-width rows and variable-length strings up to 128 bytes on a 64-bit hash
of their zero-padded rows and length, after which every value is compared with its dictionary entry,
so a hash collision can never corrupt data (it only triggers the exact dict-based path). Longer
variable-length strings use that Python dict directly: hashing them with numpy costs more than
CPython's own bytes hashing.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ...arrays import BinaryArray
from .binary import take_binary

__all__ = ["unique_first", "count_distinct"]

_M1 = np.uint64(0xBF58476D1CE4E5B9)
_M2 = np.uint64(0x94D049BB133111EB)
_GOLD = np.uint64(0x9E3779B97F4A7C15)
_ROW_CHUNK_BYTES = 1 << 23  # bound on temporaries of the chunked passes
_PADDED_MAX = 128  # strings up to this length are hashed via a padded row matrix
# equal-length strings up to this length are hashed as a row matrix (one numpy pass per 8 bytes of
# width, so a single huge value would cost millions of passes); longer ones use the dict loop
_FIXED_HASH_MAX = 4096


def _mix(x: np.ndarray) -> np.ndarray:
    """splitmix64 finalizer, in place on a uint64 array."""
    x ^= x >> np.uint64(30)
    x *= _M1
    x ^= x >> np.uint64(27)
    x *= _M2
    x ^= x >> np.uint64(31)
    return x


def _hash_words(words: np.ndarray, lens: np.ndarray) -> np.ndarray:
    """Hash rows of a (m, k) uint64 matrix together with each row's byte length."""
    h = lens.astype(np.uint64) * _GOLD
    for c in range(words.shape[1]):
        h ^= words[:, c]
        _mix(h)
    return h


def _hash_matrix(mat: np.ndarray) -> np.ndarray:
    """Exact uint64 key for rows of <= 8 bytes, else a hash. ``mat`` is (n, w) uint8."""
    n, w = mat.shape
    w8 = max(8, (w + 7) // 8 * 8)
    lens = np.full(n, w, np.int64)
    out = np.empty(n, np.uint64)
    step = max(1, _ROW_CHUNK_BYTES // w8)
    for r0 in range(0, n, step):
        r1 = min(n, r0 + step)
        if w == w8:
            words = np.ascontiguousarray(mat[r0:r1]).view(np.uint64)
        else:
            padded = np.zeros((r1 - r0, w8), np.uint8)
            padded[:, :w] = mat[r0:r1]
            words = padded.view(np.uint64)
        out[r0:r1] = words[:, 0] if w <= 8 else _hash_words(words, lens[r0:r1])
    return out


def _padded(v: BinaryArray, r0: int, r1: int, w8: int) -> np.ndarray:
    """Values ``r0:r1`` of a compact BinaryArray as zero-padded rows of ``w8`` bytes (>= their lengths)."""
    lens = v.lengths()[r0:r1]
    mat = np.zeros((r1 - r0, w8), np.uint8)
    mat[np.arange(w8)[None, :] < lens[:, None]] = v.data[v.offsets[r0]:v.offsets[r1]]
    return mat


def _padded_rows(v: BinaryArray, maxlen: int) -> list[tuple[int, int, np.ndarray]]:
    """Chunks ``(r0, r1, matrix)`` of values zero-padded to rows of a multiple of 8 bytes."""
    n = len(v)
    w8 = max(8, (maxlen + 7) // 8 * 8)
    step = max(1, _ROW_CHUNK_BYTES // w8)
    return [(r0, min(n, r0 + step), _padded(v, r0, min(n, r0 + step), w8)) for r0 in range(0, n, step)]


def _hash_padded(chunks: list[tuple[int, int, np.ndarray]], lens: np.ndarray) -> np.ndarray:
    out = np.empty(len(lens), np.uint64)
    for r0, r1, mat in chunks:
        out[r0:r1] = _hash_words(mat.view(np.uint64), lens[r0:r1])
    return out


def _keys(values: Any) -> tuple[np.ndarray | None, Any]:
    """Per-value keys, and how to verify them.

    Returns ``(keys, check)``: ``check`` is None when the keys are exact, ``"rows"`` when they hash
    fixed-width rows, a list of padded row chunks when they hash short variable-length strings, and
    ``keys`` is None when the strings are too long to hash profitably (use the dict loop).
    """
    if isinstance(values, BinaryArray):
        v = values.compact()
        w = v.fixed_width()
        if w is not None and w <= _FIXED_HASH_MAX:
            return _hash_matrix(v.as_matrix(w)), (None if w <= 8 else "rows")
        maxlen = int(v.lengths().max())
        if maxlen > _PADDED_MAX:
            return None, None
        chunks = _padded_rows(v, maxlen)
        return _hash_padded(chunks, v.lengths()), chunks
    a = np.asarray(values)
    if a.ndim == 2:
        return _hash_matrix(np.ascontiguousarray(a, dtype=np.uint8)), (None if a.shape[1] <= 8 else "rows")
    if a.dtype == np.bool_:
        return a.view(np.uint8), None
    if a.dtype.kind == "f":
        return np.ascontiguousarray(a).view(f"u{a.dtype.itemsize}"), None
    if a.dtype.kind in "iu":
        return a, None
    raise TypeError(f"cannot build a dictionary of {a.dtype} values")


def _unique_first(keys: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(index of the first occurrence of each distinct key, in appearance order; int32 codes)."""
    n = len(keys)
    perm = np.argsort(keys, kind="stable")
    sk = keys[perm]
    new = np.empty(n, bool)
    new[:1] = True
    np.not_equal(sk[1:], sk[:-1], out=new[1:])
    starts = np.flatnonzero(new)
    first = perm[starts]  # a stable sort puts each key's earliest occurrence first
    order = np.argsort(first)
    rank = np.empty(len(first), np.int32)
    rank[order] = np.arange(len(first), dtype=np.int32)
    group = np.cumsum(new, dtype=np.int32)
    group -= 1
    codes = np.empty(n, np.int32)
    codes[perm] = rank[group]
    return first[order].astype(np.int64), codes


def _take(values: Any, idx: np.ndarray) -> Any:
    if isinstance(values, BinaryArray):
        return take_binary(values, idx)
    return np.asarray(values)[idx]


def _verify(values: Any, dict_values: Any, codes: np.ndarray, check: Any) -> bool:
    """Whether every value equals its dictionary entry (guards against hash collisions)."""
    if check is None:
        return True
    if isinstance(values, BinaryArray):
        v = values.compact()
        if not np.array_equal(v.lengths(), dict_values.lengths()[codes]):
            return False
        if isinstance(check, list):  # padded rows of short strings
            dmat = _padded_rows(dict_values.compact(), int(dict_values.lengths().max()))[0][2] \
                if len(dict_values) else np.zeros((0, 8), np.uint8)
            for r0, r1, mat in check:
                if dmat.shape[1] != mat.shape[1] or not np.array_equal(mat, dmat[codes[r0:r1]]):
                    return False
            return True
        w = v.fixed_width()
        assert w is not None  # check == "rows" only for equal lengths
        a = v.as_matrix(w)
        d = dict_values.compact().as_matrix(w)
    else:
        a = np.asarray(values)
        d = np.asarray(dict_values)
    step = max(1, _ROW_CHUNK_BYTES // max(a.shape[1], 1))
    for r0 in range(0, len(codes), step):
        r1 = min(len(codes), r0 + step)
        if not np.array_equal(a[r0:r1], d[codes[r0:r1]]):
            return False
    return True


def _dict_loop(values: Any) -> tuple[np.ndarray, np.ndarray]:
    """Exact fallback: a Python dict over the byte strings (or rows as bytes)."""
    seen: dict[bytes, int] = {}
    firsts: list[int] = []
    codes = []
    for i, b in enumerate(values):
        key = bytes(b)
        c = seen.get(key)
        if c is None:
            c = seen[key] = len(firsts)
            firsts.append(i)
        codes.append(c)
    return np.array(firsts, np.int64), np.array(codes, np.int32)


def unique_first(values: Any, max_count: int | None = None,
                 max_bytes: int | None = None) -> tuple[np.ndarray, np.ndarray] | None:
    """The distinct ``values`` in order of first appearance: ``(firsts, codes)``, the int64 position
    of each one's first appearance and each value's int32 index into them; or None when there are
    more than ``max_count`` distinct values, or (byte strings) their PLAIN encoding, 4 + length
    bytes each, passes ``max_bytes``.

    ``values``: 1-D numbers (compared by bit pattern: -0.0 and +0.0 differ, NaN payloads differ),
    2-D uint8 rows, or a BinaryArray.
    """
    n = len(values)
    if n == 0:
        return np.zeros(0, np.int64), np.zeros(0, np.int32)
    keys, check = _keys(values)
    if keys is None:
        firsts, codes = _dict_loop(values)
    else:
        firsts, codes = _unique_first(keys)
        if not _verify(values, _take(values, firsts), codes, check):  # pragma: no cover - 64-bit collision
            firsts, codes = _dict_loop(values if isinstance(values, BinaryArray) else
                                       BinaryArray.from_fixed(np.asarray(values)))
    if max_count is not None and len(firsts) > max_count:
        return None
    if max_bytes is not None and isinstance(values, BinaryArray) and \
            4 * len(firsts) + int(values.lengths()[firsts].sum()) > max_bytes:
        return None
    return firsts, codes


def count_distinct(keys: np.ndarray) -> int:
    """The number of distinct values of a uint64 array (a sort: np.unique is far slower in numpy 2.x)."""
    if len(keys) == 0:
        return 0
    s = np.sort(keys)
    return 1 + int(np.count_nonzero(s[1:] != s[:-1]))
