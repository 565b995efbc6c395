"""DELTA_BINARY_PACKED, DELTA_LENGTH_BYTE_ARRAY and DELTA_BYTE_ARRAY.

DELTA_BINARY_PACKED layout::

    header := varint(block_size) varint(miniblocks_per_block) varint(total_count) zigzag_varint(first_value)
    block  := zigzag_varint(min_delta) miniblock_bit_widths[miniblocks_per_block] miniblock_bodies

Deltas are computed with wrap-around arithmetic in the width of the type
(uint32 for INT32, uint64 for INT64), so the extremes of both types round-trip
and bit widths never exceed the type width, as Arrow's reader requires.

The encoder uses blocks of 128 values split in 4 miniblocks of 32 (what
parquet-java and Arrow write). Everything except the walk over block headers
is vectorized; miniblocks of equal bit width are packed together. Decoding is
the compiled kernel's (:func:`pqbloom.kernels.delta.decode_delta_binary_packed`), or
its numpy reference in :mod:`pqbloom.kernels.reference.delta`.
"""

from __future__ import annotations

import numpy as np

from ..arrays import BinaryArray
from ..errors import CorruptFileError
from ..kernels import binary as binary_kernels
from ..kernels import delta as delta_kernels
from ..limits import charge
from .bitpack import Buffer, as_u8, bit_pack_groups, uleb128
from .dictionary import padded_rows

__all__ = [
    "encode_delta_binary_packed",
    "decode_delta_binary_packed",
    "encode_delta_length_byte_array",
    "decode_delta_length_byte_array",
    "encode_delta_byte_array",
    "decode_delta_byte_array",
    "common_prefix_lengths",
]

BLOCK_SIZE = 128
MINIBLOCKS = 4
_U64 = (1 << 64) - 1


def _zigzag(v: int) -> int:
    return ((v << 1) ^ (v >> 63)) & _U64


def _bit_length_u64(x: np.ndarray) -> np.ndarray:
    x = x.astype(np.uint64, copy=True)
    r = np.zeros(len(x), np.int64)
    for s in (32, 16, 8, 4, 2, 1):
        big = x >= np.uint64(1 << s)
        r += big * s
        x = np.where(big, x >> np.uint64(s), x)
    r += x > 0
    return r


def _varints_u64(z: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Vectorized LEB128: a (n, 10) byte matrix and each varint's length."""
    nbytes = np.maximum(1, (_bit_length_u64(z) + 6) // 7)
    mat = np.empty((len(z), 10), np.uint8)
    for k in range(10):
        byte = ((z >> np.uint64(7 * k)) & np.uint64(0x7F)).astype(np.uint8)
        mat[:, k] = byte | np.where(k < nbytes - 1, 0x80, 0).astype(np.uint8)
    return mat, nbytes


# -- DELTA_BINARY_PACKED --------------------------------------------------------

def encode_delta_binary_packed(values: np.ndarray, block_size: int = BLOCK_SIZE,
                               miniblocks: int = MINIBLOCKS) -> bytes:
    """Encode an int32 or int64 array (other integer dtypes are widened to int64).

    The defaults (blocks of 128 values in 4 miniblocks) are parquet-java's;
    Arrow C++ uses 256 values for INT64.
    """
    if block_size <= 0 or block_size % 128 or miniblocks <= 0 or block_size % miniblocks \
            or (block_size // miniblocks) % 32:
        raise ValueError(f"invalid block layout: {block_size} values in {miniblocks} miniblocks")
    v = np.asarray(values).reshape(-1)
    if v.dtype == np.int32 or v.dtype == np.uint32:
        u = v.view(np.uint32)
        signed: type = np.int32
    elif v.dtype.kind in "iub":
        u = v.astype(np.int64, copy=False).view(np.uint64) if v.dtype.kind != "u" or v.dtype.itemsize < 8 \
            else v.view(np.uint64)
        signed = np.int64
    else:
        raise TypeError(f"DELTA_BINARY_PACKED needs integers, got {v.dtype}")
    n = len(v)
    first = int(u[:1].view(signed)[0]) if n else 0
    header = uleb128(block_size) + uleb128(miniblocks) + uleb128(n) + uleb128(_zigzag(first))
    if n <= 1:
        return header
    udt = u.dtype
    deltas = u[1:] - u[:-1]  # wraps in the type width
    nd = n - 1
    nb = (nd + block_size - 1) // block_size
    sdel: np.ndarray = np.full(nb * block_size, np.iinfo(signed).max, signed)
    sdel[:nd] = deltas.view(signed)
    mins = sdel.reshape(nb, block_size).min(axis=1)
    adj = sdel.view(udt).reshape(nb, block_size) - mins.view(udt)[:, None]
    adj.reshape(-1)[nd:] = 0
    per_mb = block_size // miniblocks
    mb = adj.reshape(nb * miniblocks, per_mb)
    widths = _bit_length_u64(mb.max(axis=1))  # (nb*miniblocks,)
    # byte layout of each block: min-delta varint, width bytes, miniblock bodies of per_mb*w/8 bytes
    zz = mins.astype(np.int64)
    zz = ((zz.view(np.uint64) << np.uint64(1)) ^ (zz >> 63).view(np.uint64))
    vmat, vlen = _varints_u64(zz)
    body_bytes = (widths * (per_mb // 8)).reshape(nb, miniblocks)
    block_len = vlen + miniblocks + body_bytes.sum(axis=1)
    boff = np.zeros(nb + 1, np.int64)
    np.cumsum(block_len, out=boff[1:])
    out = np.zeros(int(boff[-1]), np.uint8)
    cols = np.arange(10)
    vmask = cols[None, :] < vlen[:, None]
    out[(boff[:-1, None] + cols[None, :])[vmask]] = vmat[vmask]
    wpos = boff[:-1] + vlen
    out[(wpos[:, None] + np.arange(miniblocks)[None, :]).reshape(-1)] = widths.astype(np.uint8)
    mb_start = (wpos + miniblocks)[:, None] + np.cumsum(body_bytes, axis=1) - body_bytes
    mb_start = mb_start.reshape(-1)
    for w in np.unique(widths).tolist():
        if w == 0:
            continue
        sel = np.flatnonzero(widths == w)
        packed = bit_pack_groups(mb[sel].reshape(-1), w).reshape(len(sel), per_mb * w // 8)
        out[mb_start[sel][:, None] + np.arange(per_mb * w // 8)[None, :]] = packed
    return header + out.tobytes()


def decode_delta_binary_packed(buf: Buffer, count: int | None = None,
                               dtype: type | np.dtype = np.int64) -> tuple[np.ndarray, int]:
    """Decode; return (values, bytes consumed by the whole encoded stream).

    ``count`` defaults to the header's total count; when given it must not
    exceed it and only the first ``count`` values are returned. ``dtype`` is
    int32 or int64 (INT32 values wrap modulo 2**32 as the writers intend).
    The compiled kernel when built (:func:`pqbloom.kernels.delta.decode_delta_binary_packed`), else
    :func:`pqbloom.kernels.reference.delta.decode_delta_binary_packed`; both give the same values and errors.
    """
    return delta_kernels.decode_delta_binary_packed(buf, count, dtype)


# -- DELTA_LENGTH_BYTE_ARRAY ----------------------------------------------------

def encode_delta_length_byte_array(values: BinaryArray) -> bytes:
    """Lengths as DELTA_BINARY_PACKED (int32), then all bytes concatenated."""
    v = _as_binary(values).compact()
    lens = v.lengths()
    if len(lens) and int(lens.max()) > 0x7FFFFFFF:
        raise ValueError("a BYTE_ARRAY value is longer than 2**31-1 bytes")
    return encode_delta_binary_packed(lens.astype(np.int32)) + v.data.tobytes()


def decode_delta_length_byte_array(buf: Buffer, count: int) -> tuple[BinaryArray, int]:
    """Decode ``count`` values; return (BinaryArray, bytes consumed)."""
    u8 = as_u8(buf)
    lens, used = decode_delta_binary_packed(buf if isinstance(buf, bytes) else u8, count, np.int32)
    if len(lens) and int(lens.min()) < 0:
        raise CorruptFileError("DELTA_LENGTH_BYTE_ARRAY: negative value length")
    charge(8 * (len(lens) + 1), f"the offsets of {len(lens):,} DELTA_LENGTH_BYTE_ARRAY values")
    offsets = np.zeros(len(lens) + 1, np.int64)
    np.cumsum(lens, out=offsets[1:])
    total = int(offsets[-1])
    if used + total > len(u8):
        raise CorruptFileError(f"DELTA_LENGTH_BYTE_ARRAY: values need {total} bytes, "
                               f"only {len(u8) - used} available")
    data = u8[used:used + total]
    if used > (1 << 16) and used > total // 8:  # do not keep a large block of lengths alive with the values
        data = data.copy()
    return BinaryArray(offsets, data), used + total


# -- DELTA_BYTE_ARRAY -----------------------------------------------------------

def _as_binary(values, type_length: int | None = None) -> BinaryArray:  # type: ignore[no-untyped-def]
    if isinstance(values, BinaryArray):
        return values
    m = np.asarray(values, dtype=np.uint8)
    if type_length is not None and m.ndim == 1 and len(m) == 0:
        m = m.reshape(0, type_length)
    if m.ndim != 2 or (type_length is not None and m.shape[1] != type_length):
        raise ValueError(f"expected a BinaryArray or a 2-D uint8 array of width {type_length}, got {m.shape}")
    return BinaryArray.from_fixed(m)


def common_prefix_lengths(values: BinaryArray) -> np.ndarray:
    """Length of the common prefix of each value with the previous one (0 for the first), int64."""
    v = values.compact()
    n = len(v)
    out = np.zeros(n, np.int64)
    if n <= 1 or len(v.data) == 0:
        return out
    lens = v.lengths()
    data = v.data
    chunk = 1 << 16
    maxcmp = np.minimum(lens[1:], lens[:-1])
    maxlen = int(lens.max())
    if maxlen <= 128:
        # compare zero-padded rows 8 bytes at a time; the lowest differing byte of
        # the first differing little-endian word is where the prefix ends
        w8 = max(8, (maxlen + 7) // 8 * 8)
        step = max(1, (1 << 23) // w8)
        for r0 in range(1, n, step):
            r1 = min(n, r0 + step)
            words = padded_rows(v, r0 - 1, r1, w8).view(np.uint64)
            x = words[1:] ^ words[:-1]
            nz = x != 0
            fw = nz.argmax(axis=1)
            xw = x[np.arange(r1 - r0), fw]
            low = xw & (~xw + np.uint64(1))  # lowest set bit
            byte = np.log2(np.maximum(low, np.uint64(1)).astype(np.float64)).astype(np.int64) >> 3
            pre = np.where(nz.any(axis=1), fw * 8 + byte, w8)
            out[r0:r1] = np.minimum(pre, maxcmp[r0 - 1:r1 - 1])
        return out
    starts = v.offsets[:-1]
    last = len(data) - 1
    for r0 in range(1, n, chunk):
        r1 = min(n, r0 + chunk)
        a = starts[r0 - 1:r1 - 1]
        bb = starts[r0:r1]
        mc = maxcmp[r0 - 1:r1 - 1]
        active = np.flatnonzero(mc > 0)
        done = 0
        k = 16
        while len(active):
            cols = done + np.arange(k, dtype=np.int64)
            ia = np.minimum(a[active][:, None] + cols[None, :], last)
            ib = np.minimum(bb[active][:, None] + cols[None, :], last)
            stop = (data[ia] != data[ib]) | (cols[None, :] >= mc[active][:, None])
            has = stop.any(axis=1)
            out[r0 + active[has]] = done + stop[has].argmax(axis=1)
            active = active[~has]
            done += k
            k = min(k * 4, 1024)
    return out


def encode_delta_byte_array(values, type_length: int | None = None) -> bytes:  # type: ignore[no-untyped-def]
    """Prefix lengths (DELTA_BINARY_PACKED) then suffixes (DELTA_LENGTH_BYTE_ARRAY).

    ``values`` is a BinaryArray, or a 2-D uint8 array for FIXED_LEN_BYTE_ARRAY
    (pass ``type_length``).
    """
    v = _as_binary(values, type_length).compact()
    n = len(v)
    prefix = common_prefix_lengths(v)
    lens = v.lengths()
    slen = lens - prefix
    suffix_data = v.data[_interleave_mask(prefix, slen)] if bool(prefix.any()) else v.data
    soff = np.zeros(n + 1, np.int64)
    np.cumsum(slen, out=soff[1:])
    return encode_delta_binary_packed(prefix.astype(np.int32)) + encode_delta_length_byte_array(
        BinaryArray(soff, suffix_data))


def decode_delta_byte_array(buf: Buffer, count: int, type_length: int | None = None):  # type: ignore[no-untyped-def]
    """Decode ``count`` values; return (BinaryArray, bytes consumed).

    With ``type_length`` (FIXED_LEN_BYTE_ARRAY) the values are a 2-D uint8 array.
    """
    u8 = as_u8(buf)
    src = buf if isinstance(buf, bytes) else u8
    prefix, used = decode_delta_binary_packed(src, count, np.int32)
    suffixes, used2 = decode_delta_length_byte_array(u8[used:], count)
    used += used2
    n = len(prefix)
    charge(32 * n, f"the lengths of {n:,} DELTA_BYTE_ARRAY values")
    p = prefix.astype(np.int64)
    slen = suffixes.lengths()
    lens = p + slen
    if n:
        if int(p.min()) < 0 or p[0] != 0:
            raise CorruptFileError("DELTA_BYTE_ARRAY: invalid prefix length")
        if n > 1 and bool((p[1:] > lens[:-1]).any()):
            raise CorruptFileError("DELTA_BYTE_ARRAY: prefix longer than the previous value")
    if type_length is not None and n and bool((lens != type_length).any()):
        raise CorruptFileError(f"DELTA_BYTE_ARRAY: value length differs from type length {type_length}")
    if n and bool(p.any()):
        # inherited prefixes are where a small page grows most: n copies of one long value
        total = int(lens.sum())
        charge(2 * total + 2 * n, f"{n:,} DELTA_BYTE_ARRAY values of {total:,} bytes")
    # the inherited prefixes resolved in one pass over the values (sizes first, one allocation)
    result = binary_kernels.rebuild_prefixes(prefix, suffixes)
    if type_length is not None:
        return result.as_matrix(type_length) if n else np.zeros((0, type_length), np.uint8), used
    return result, used


def _interleave_mask(first: np.ndarray, second: np.ndarray) -> np.ndarray:
    """Bool mask over consecutive runs ``first[0]`` False, ``second[0]`` True, ``first[1]`` False..."""
    counts = np.empty(2 * len(first), np.int64)
    counts[0::2] = first
    counts[1::2] = second
    pattern = np.zeros(2 * len(first), bool)
    pattern[1::2] = True
    return np.repeat(pattern, counts)
