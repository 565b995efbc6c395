"""Dictionary building (writer side), dictionary indices, and gathering (reader side).

Dictionaries list the distinct values in order of FIRST APPEARANCE (like
parquet-java and Arrow). Values are distinguished bitwise: ``-0.0`` and
``+0.0`` are two entries, and NaNs with different payloads are distinct.

Building is one hash-table pass (:func:`pqbloom.kernels.dictionary.unique_first`, compiled, or its
sort-based numpy reference), which stops as soon as the dictionary passes the size limit: a column
that will not be dictionary-encoded costs only the values read until then.
"""

from __future__ import annotations

import numpy as np

from ..arrays import BinaryArray
from ..errors import CorruptFileError
from ..format.enums import PhysicalType
from ..kernels import binary as binary_kernels
from ..kernels.dictionary import unique_first
from .bitpack import Buffer, as_u8, bit_width_of
from .rle import decode_rle_bitpacked, encode_rle_bitpacked

__all__ = [
    "build_dictionary",
    "encode_with_dictionary",
    "encode_dictionary_indices",
    "decode_dictionary_indices",
    "take_dictionary",
    "estimate_distinct_fraction",
    "padded_rows",
]


def padded_rows(v: BinaryArray, r0: int, r1: int, w8: int) -> np.ndarray:
    """Values ``r0:r1`` of a compact BinaryArray as zero-padded rows of ``w8`` bytes (>= their lengths)."""
    lens = v.lengths()[r0:r1]
    mat = np.zeros((r1 - r0, w8), np.uint8)
    mat[np.arange(w8)[None, :] < lens[:, None]] = v.data[v.offsets[r0]:v.offsets[r1]]
    return mat


def _take(values, idx: np.ndarray):  # type: ignore[no-untyped-def]
    if isinstance(values, BinaryArray):
        return binary_kernels.take_binary(values, idx)
    return np.asarray(values)[idx]


def _max_count(values, ptype: int, max_dictionary_bytes: int | None) -> int | None:  # type: ignore[no-untyped-def]
    """The most entries of a fixed-width dictionary whose PLAIN encoding fits ``max_dictionary_bytes``."""
    if max_dictionary_bytes is None or isinstance(values, BinaryArray):
        return None
    if ptype == PhysicalType.BOOLEAN:  # one bit each: (count + 7) // 8 bytes
        return 8 * max(max_dictionary_bytes, 0)
    a = np.asarray(values)
    width = a.itemsize * (a.shape[1] if a.ndim == 2 else 1)
    return max_dictionary_bytes // width if width else None


def build_dictionary(values, ptype: int,  # type: ignore[no-untyped-def]
                     max_dictionary_bytes: int | None = None):
    """Dictionary-encode dense values.

    Returns ``(dictionary_values, indices)`` — distinct values in order of first
    appearance (same representation as ``values``) and int32 indices into them —
    or None when the PLAIN-encoded dictionary would exceed ``max_dictionary_bytes``.
    """
    if len(values) == 0:
        return _take(values, np.zeros(0, np.int64)), np.zeros(0, np.int32)
    built = unique_first(values, _max_count(values, ptype, max_dictionary_bytes),
                         max_dictionary_bytes if isinstance(values, BinaryArray) else None)
    if built is None:
        return None
    firsts, codes = built
    return _take(values, firsts), codes


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
        built = unique_first(values)
        assert built is not None  # no limit
        return len(built[0]) / n
    starts = np.random.default_rng(seed).integers(0, n - _SAMPLE_RUN + 1, sample // _SAMPLE_RUN)
    idx = np.unique((starts[:, None] + np.arange(_SAMPLE_RUN)).ravel())
    built = unique_first(_take(values, idx))
    assert built is not None
    counts = np.bincount(built[1])
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
