"""Dictionary building (writer side), dictionary indices, and gathering (reader side).

Dictionaries list the distinct values in order of FIRST APPEARANCE (like
parquet-java and Arrow). Values are distinguished bitwise: ``-0.0`` and
``+0.0`` are two entries, and NaNs with different payloads are distinct.

Building is vectorized: numeric values are uniqued on their bit patterns;
byte strings of equal length <= 8 are uniqued on an exact uint64 key; other
fixed-width rows and variable-length strings up to 128 bytes on a 64-bit hash
of their zero-padded rows and length, after which every value is compared
with its dictionary entry, so a hash collision can never corrupt data (it
only triggers the exact dict-based path). Longer variable-length strings use
that Python dict directly: hashing them with numpy costs more than CPython's
own bytes hashing.
"""

from __future__ import annotations

from collections import Counter

import numpy as np

from ..arrays import BinaryArray
from ..errors import CorruptFileError
from ..format.enums import PhysicalType
from ..kernels import binary as binary_kernels
from .bitpack import Buffer, as_u8, bit_width_of
from .rle import decode_rle_bitpacked, encode_rle_bitpacked

__all__ = [
    "build_dictionary",
    "encode_with_dictionary",
    "encode_dictionary_indices",
    "decode_dictionary_indices",
    "take_dictionary",
    "estimate_distinct_fraction",
]

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


def padded_rows(v: BinaryArray, r0: int, r1: int, w8: int) -> np.ndarray:
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
    return [(r0, min(n, r0 + step), padded_rows(v, r0, min(n, r0 + step), w8)) for r0 in range(0, n, step)]


def _hash_padded(chunks: list[tuple[int, int, np.ndarray]], lens: np.ndarray) -> np.ndarray:
    out = np.empty(len(lens), np.uint64)
    for r0, r1, mat in chunks:
        out[r0:r1] = _hash_words(mat.view(np.uint64), lens[r0:r1])
    return out


def _keys(values, ptype: int):  # type: ignore[no-untyped-def]
    """Per-value keys, and how to verify them.

    Returns ``(keys, check)``: ``check`` is None when the keys are exact,
    ``"rows"`` when they hash fixed-width rows, a list of padded row chunks
    when they hash short variable-length strings, and ``keys`` is None when
    the strings are too long to hash profitably (use the dict loop).
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
    perm = np.argsort(keys)
    sk = keys[perm]
    new = np.empty(n, bool)
    new[:1] = True
    np.not_equal(sk[1:], sk[:-1], out=new[1:])
    starts = np.flatnonzero(new)
    first = np.minimum.reduceat(perm, starts)  # earliest occurrence of each key
    order = np.argsort(first)
    rank = np.empty(len(first), np.int32)
    rank[order] = np.arange(len(first), dtype=np.int32)
    group = np.cumsum(new, dtype=np.int32)
    group -= 1
    codes = np.empty(n, np.int32)
    codes[perm] = rank[group]
    return first[order], codes


def _take(values, idx: np.ndarray):  # type: ignore[no-untyped-def]
    if isinstance(values, BinaryArray):
        return binary_kernels.take_binary(values, idx)
    return np.asarray(values)[idx]


def _verify(values, dict_values, codes: np.ndarray, check) -> bool:  # type: ignore[no-untyped-def]
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


def _dict_loop(values: BinaryArray) -> tuple[np.ndarray, np.ndarray]:
    """Exact fallback: a Python dict over the byte strings."""
    seen: dict[bytes, int] = {}
    firsts: list[int] = []
    codes = []
    for i, b in enumerate(values):
        c = seen.get(b)
        if c is None:
            c = seen[b] = len(firsts)
            firsts.append(i)
        codes.append(c)
    return np.array(firsts, np.int64), np.array(codes, np.int32)


def build_dictionary(values, ptype: int,  # type: ignore[no-untyped-def]
                     max_dictionary_bytes: int | None = None):
    """Dictionary-encode dense values.

    Returns ``(dictionary_values, indices)`` — distinct values in order of first
    appearance (same representation as ``values``) and int32 indices into them —
    or None when the PLAIN-encoded dictionary would exceed ``max_dictionary_bytes``.
    """
    n = len(values)
    if n == 0:
        return _take(values, np.zeros(0, np.int64)), np.zeros(0, np.int32)
    keys, check = _keys(values, ptype)
    if keys is None:
        firsts, codes = _dict_loop(values)
    else:
        firsts, codes = _unique_first(keys)
    if max_dictionary_bytes is not None:
        if isinstance(values, BinaryArray):
            size = 4 * len(firsts) + int(values.lengths()[firsts].sum())
        else:
            a = np.asarray(values)
            size = (len(firsts) + 7) // 8 if ptype == PhysicalType.BOOLEAN else len(firsts) * a.itemsize * (
                a.shape[1] if a.ndim == 2 else 1)
        if size > max_dictionary_bytes:
            return None
    dict_values = _take(values, firsts)
    if keys is not None and not _verify(values, dict_values, codes, check):  # pragma: no cover - 64-bit collision
        bv = values if isinstance(values, BinaryArray) else BinaryArray.from_fixed(np.asarray(values))
        firsts, codes = _dict_loop(bv)
        dict_values = _take(values, firsts)
    return dict_values, codes


def encode_with_dictionary(dictionary, values, ptype: int,  # type: ignore[no-untyped-def]
                           max_dictionary_bytes: int | None = None):
    """Indices of dense ``values`` into a given ``dictionary`` of distinct values, kept whole and in
    its order (a pandas categorical's categories, used or not, as pyarrow writes them).

    Returns ``(dictionary, indices)``, or None when a value is not in the dictionary, the dictionary
    repeats a value, or its PLAIN encoding would exceed ``max_dictionary_bytes``.
    """
    if isinstance(dictionary, BinaryArray) != isinstance(values, BinaryArray):
        return None
    both = BinaryArray.concat([dictionary, values]) if isinstance(values, BinaryArray) else \
        np.concatenate([np.asarray(dictionary), np.asarray(values)])
    built = build_dictionary(both, ptype, max_dictionary_bytes)
    if built is None or len(built[0]) != len(dictionary):
        return None
    return dictionary, built[1][len(dictionary):]


_SAMPLE_RUN = 8


def estimate_distinct_fraction(values, sample: int = 4096, seed: int = 0) -> float:  # type: ignore[no-untyped-def]
    """Estimated (number of distinct values) / (number of values), in [0, 1].

    Exact when ``len(values) <= sample``; otherwise from a random sample of
    about ``sample`` values with the bias-corrected Chao1 estimator
    ``d + f1*(f1-1) / (2*(f2+1))`` (f1, f2: values seen once, twice), which
    extrapolates the sample's repeats to the whole column. A writer can skip
    dictionary building when this is close to 1.

    The sample is taken in runs of ``_SAMPLE_RUN`` consecutive values at random places: a run
    shares cache lines, where one value per random place cost a cache miss each, a visible share of a
    string write (docs/benchmarks.md).
    """
    n = len(values)
    if n == 0:
        return 0.0
    if n <= sample:
        keys, _ = _keys(values, -1)
        if keys is None:
            return len(set(values)) / n
        return len(np.unique(keys)) / n
    starts = np.random.default_rng(seed).integers(0, n - _SAMPLE_RUN + 1, sample // _SAMPLE_RUN)
    idx = np.unique((starts[:, None] + np.arange(_SAMPLE_RUN)).ravel())
    sampled = _take(values, idx)
    keys, _ = _keys(sampled, -1)
    if keys is None:
        counts = np.array(list(Counter(sampled).values()))
    else:
        _, counts = np.unique(keys, return_counts=True)
    d = len(counts)
    f1 = int((counts == 1).sum())
    f2 = int((counts == 2).sum())
    est = d + f1 * (f1 - 1) / (2 * (f2 + 1))
    return float(min(max(est, d), n) / n)


# -- indices ------------------------------------------------------------------

def encode_dictionary_indices(indices: np.ndarray, dict_size: int) -> bytes:
    """One byte of bit width, then the RLE/bit-packed hybrid (RLE_DICTIONARY data pages)."""
    bw = bit_width_of(max(int(dict_size) - 1, 0))
    return bytes([bw]) + encode_rle_bitpacked(np.asarray(indices), bw)


def decode_dictionary_indices(buf: Buffer, count: int) -> np.ndarray:
    """Decode ``count`` int32 dictionary indices."""
    u8 = as_u8(buf)
    if count == 0:
        return np.zeros(0, np.int32)
    if len(u8) == 0:
        raise CorruptFileError("dictionary indices: empty page data")
    bw = int(u8[0])
    if bw > 32:
        raise CorruptFileError(f"dictionary indices: bit width {bw} > 32")
    return decode_rle_bitpacked(u8[1:], bw, count)


def take_dictionary(dictionary_values, indices: np.ndarray):  # type: ignore[no-untyped-def]
    """Gather dictionary entries; CorruptFileError when an index is out of range.

    Byte arrays are gathered by :func:`pqbloom.kernels.binary.take_binary` (compact, no padding). Numbers and
    fixed-width rows (2-D uint8) are one numpy gather straight into the result, whose own bounds check
    is the only one for 32-bit indices (decoded dictionary indices): indices are seen unsigned, so a
    negative one is out of range rather than counting from the end."""
    idx = np.asarray(indices)
    if isinstance(dictionary_values, BinaryArray):
        return binary_kernels.take_binary(dictionary_values, idx)
    arr = np.asarray(dictionary_values)
    if idx.dtype.kind == "i" and idx.dtype.itemsize == 4:
        uidx = idx.view(np.uint32)  # a negative index becomes >= 2**31: out of range
    elif idx.dtype.kind == "u" and idx.dtype.itemsize < 8:
        uidx = idx
    else:  # other index types (numpy reads 64-bit unsigned back as signed): an explicit bounds pass
        uidx = idx.astype(np.intp, copy=False)
    try:
        if uidx.dtype == np.intp and len(uidx) and (int(uidx.min()) < 0 or int(uidx.max()) >= len(arr)):
            raise IndexError
        # 1-D: fancy indexing takes int32 indices as they are; rows: np.take moves each row in one copy
        return arr[uidx] if arr.ndim == 1 else np.take(arr, uidx, axis=0)
    except IndexError:
        lo, hi = int(idx.min()), int(idx.max())
        raise CorruptFileError(f"dictionary index {lo if lo < 0 else hi} out of range for a dictionary "
                               f"of {len(arr)} values") from None
