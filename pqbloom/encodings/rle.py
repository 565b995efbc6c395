"""The RLE / bit-packing hybrid encoding (levels, dictionary indices, booleans).

Layout of the hybrid (parquet-format ``Encodings.md``)::

    run := rle-run | bit-packed-run
    rle-run := varint(count << 1) value-in-ceil(bit_width/8)-LE-bytes
    bit-packed-run := varint(groups << 1 | 1) groups*bit_width bytes  (8 values per group, LSB first)

Decoding is vectorized with numpy (the bit packing itself is :mod:`pqbloom.encodings.bitpack`); the only
Python loops run once per run header (RLE runs are inherently sequential). Streams of many small runs (Arrow's levels)
have their headers found by pointer jumping instead, with a loop over one header
in eight; levels decode straight to int8 (:func:`level_dtype`).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .. import kernels
from ..errors import CorruptFileError
from ..kernels import hybrid as hybrid_kernels
from ..kernels.reference.bits import checked_count
from ..kernels.reference.hybrid import decode_hybrid_numpy, hybrid_dtype
from ..limits import charge
from .bitpack import Buffer, as_u8, bit_pack_groups, bit_width_of, uleb128

__all__ = [
    "encode_rle_bitpacked",
    "decode_rle_bitpacked",
    "decode_hybrid",
    "decode_hybrid_numpy",
    "encode_levels_v1",
    "decode_levels_v1",
    "level_dtype",
    "encode_rle_booleans",
    "decode_rle_booleans",
]

#: parquet-java and Arrow never write bit-packed runs longer than 63 groups
#: (the header then fits one byte); we follow them for maximal compatibility.
_MAX_GROUPS_PER_RUN = 63


# -- RLE / bit-packing hybrid -------------------------------------------------

def encode_rle_bitpacked(values: np.ndarray, bit_width: int, min_rle_run: int = 8) -> bytes:
    """Encode with the hybrid (no length prefix).

    Runs of >= ``min_rle_run`` (at least 8) equal values become RLE runs (after letting the
    preceding bit-packed stretch grow to a whole number of groups); everything else is
    bit-packed in runs of at most 63 groups, the last one zero-padded.

    With the default of 8 the choice of RLE runs loops in Python once per run of 8 or more
    (whether a short run still holds 8 values after the alignment depends on the runs before
    it); from 15 up every such run qualifies and the choice is vectorized too. The packing,
    the run headers and the output layout are always built with numpy in one go.
    """
    if min_rle_run < 8:
        raise ValueError("RLE runs hold at least 8 values")
    if not 0 <= bit_width <= 32:
        raise ValueError(f"bit width {bit_width} out of range 0..32")
    v = np.asarray(values).reshape(-1)
    n = len(v)
    if n == 0:
        return b""
    if v.dtype.kind not in "iub":
        raise TypeError(f"cannot RLE-encode {v.dtype}")
    if bit_width < 32 and n and (int(v.min()) < 0 or int(v.max()) >= (1 << bit_width)):
        raise ValueError(f"values do not fit in {bit_width} bits")
    vbytes = (bit_width + 7) // 8
    # tiny or constant inputs (the levels of a small page, or of one without nulls) skip the
    # vectorized machinery, whose fixed cost dominates there; the bytes are the same
    if n < 8:
        return b"\x03" + bit_pack_groups(v, bit_width).tobytes()
    if n >= min_rle_run and v[0] == v[-1] and not (v != v[0]).any():
        return uleb128(n << 1) + (int(v[0]) & 0xFFFFFFFF).to_bytes(vbytes, "little")
    change = np.flatnonzero(v[1:] != v[:-1]) + 1
    starts = np.concatenate(([0], change))
    lens = np.diff(np.concatenate((starts, [n])))
    long_runs = np.flatnonzero(lens >= min_rle_run)
    # segments: bit-packed stretches [bp_s, bp_e) and RLE runs [rle_s, rle_e)
    bp_s: list[int] = []
    bp_e: list[int] = []
    rle_s: list[int] = []
    rle_e: list[int] = []
    pos = 0
    if len(long_runs) and min_rle_run >= 15:
        # every run of 15 or more keeps 8 values after aligning its start: no sequential choice
        e_all = starts[long_runs] + lens[long_runs]
        prev_end = np.concatenate([[0], e_all[:-1]])
        a_all = prev_end + ((starts[long_runs] - prev_end + 7) & ~7)
        gap = a_all > prev_end
        bp_s, bp_e = prev_end[gap].tolist(), a_all[gap].tolist()
        rle_s, rle_e = a_all.tolist(), e_all.tolist()
        pos = int(e_all[-1])
    elif len(long_runs):
        for s, e in zip(starts[long_runs].tolist(), (starts[long_runs] + lens[long_runs]).tolist()):
            a = pos + ((s - pos + 7) & ~7)  # end of the bit-packed stretch, whole groups
            if e - a < 8:
                continue
            if a > pos:
                bp_s.append(pos)
                bp_e.append(a)
            rle_s.append(a)
            rle_e.append(e)
            pos = e
    if pos < n:
        bp_s.append(pos)
        bp_e.append(n)
    # bit-packed stretches -> runs of at most 63 groups
    s_arr = np.asarray(bp_s, np.int64)
    e_arr = np.asarray(bp_e, np.int64)
    per = _MAX_GROUPS_PER_RUN * 8
    nchunks = (e_arr - s_arr + per - 1) // per
    first_chunk = np.repeat(np.cumsum(nchunks) - nchunks, nchunks)
    c_start = np.repeat(s_arr, nchunks) + (np.arange(int(nchunks.sum()), dtype=np.int64) - first_chunk) * per
    c_end = np.minimum(c_start + per, np.repeat(e_arr, nchunks))
    c_groups = (c_end - c_start + 7) // 8
    # pack every bit-packed run at once: every run holds whole groups except the very last one,
    # so the values outside RLE runs, zero-padded at the end, are exactly the packed groups in order
    g_total = int(c_groups.sum())
    if g_total:
        if rle_s and len(bp_s) <= 1024:  # few stretches: copying them beats a mask over all values
            gathered = np.concatenate([v[a:b] for a, b in zip(bp_s, bp_e)]) if bp_s else v[:0]
        elif rle_s:
            marks = np.zeros(n + 1, np.int8)
            marks[np.asarray(rle_s, np.int64)] += 1
            marks[np.asarray(rle_e, np.int64)] -= 1
            gathered = v[np.cumsum(marks[:-1], dtype=np.int8) == 0]
        else:
            gathered = v
        if len(gathered) < g_total * 8:
            gathered = np.concatenate([gathered, np.zeros(g_total * 8 - len(gathered), gathered.dtype)])
        packed = bit_pack_groups(gathered, bit_width)
    else:
        packed = np.zeros(0, np.uint8)
    # every segment, in stream order: header value and payload length
    r_s = np.asarray(rle_s, np.int64)
    r_e = np.asarray(rle_e, np.int64)
    nseg = len(c_start) + len(r_s)
    bp_pos = np.arange(len(c_start)) + np.searchsorted(r_s, c_start)
    rl_pos = np.arange(len(r_s)) + np.searchsorted(c_start, r_s)
    header = np.empty(nseg, np.int64)
    header[bp_pos] = (c_groups << 1) | 1
    header[rl_pos] = (r_e - r_s) << 1
    is_bp = np.zeros(nseg, bool)
    is_bp[bp_pos] = True
    payload_len = np.empty(nseg, np.int64)
    payload_len[bp_pos] = c_groups * bit_width
    payload_len[rl_pos] = vbytes
    rle_val = np.zeros(nseg, np.int64)
    rle_val[rl_pos] = v[r_s].astype(np.int64) & 0xFFFFFFFF
    # varint headers
    hlen = np.ones(len(header), np.int64)
    for k in range(1, 5):
        hlen += header >= (1 << (7 * k))
    seg_len = hlen + payload_len
    seg_off = np.cumsum(seg_len) - seg_len
    out = np.zeros(int(seg_len.sum()), np.uint8)
    for k in range(int(hlen.max())):
        has = hlen > k
        byte = (header[has] >> (7 * k)) & 0x7F
        more = hlen[has] > k + 1
        out[seg_off[has] + k] = (byte | (more.astype(np.int64) << 7)).astype(np.uint8)
    # RLE values
    rle_idx = np.flatnonzero(~is_bp)
    for k in range(vbytes):
        out[seg_off[rle_idx] + hlen[rle_idx] + k] = ((rle_val[rle_idx] >> (8 * k)) & 0xFF).astype(np.uint8)
    # bit-packed payloads: in stream order they are exactly the packed groups, so they fill every
    # byte that is not a header or an RLE value
    if len(packed):
        fixed = hlen + np.where(is_bp, 0, vbytes)
        n_fixed = int(fixed.sum())
        free = np.ones(len(out), bool)
        free[np.repeat(seg_off - (np.cumsum(fixed) - fixed), fixed) + np.arange(n_fixed, dtype=np.int64)] = False
        out[free] = packed
    return out.tobytes()


def decode_rle_bitpacked(buf: Buffer, bit_width: int, count: int, dtype: Any = None) -> np.ndarray:
    """Decode exactly ``count`` values of the hybrid encoding (int32, or ``dtype``).

    Raises CorruptFileError when the runs end before ``count`` values. A final
    bit-packed run may hold padding values (and may even lack the bytes of
    the padding). ``bit_width == 0`` yields zeros without reading ``buf``.

    ``dtype`` int8 (bit widths up to 7) or int16 (up to 15) gives levels without a widening copy;
    an RLE run whose value does not fit ``bit_width`` bits then raises CorruptFileError (the int32
    default returns such values as stored).
    """
    return decode_hybrid(buf, bit_width, count, dtype)[0]


#: the compiled kernel takes counts up to this many values per input byte (bit-packed runs hold at
#: most 8; runs of Arrow's levels a few dozen)
_KERNEL_VALUES_PER_BYTE = 256


def decode_hybrid(buf: Buffer, bit_width: int, count: int, dtype: Any = None) -> tuple[np.ndarray, int]:
    """Decode the hybrid; return the values (int32, or ``dtype`` as in :func:`decode_rle_bitpacked`) and
    the bytes the runs used.

    The compiled kernel (:func:`pqbloom.kernels.hybrid.decode_hybrid`, one pass over the runs) when in use,
    else :func:`decode_hybrid_numpy`; both give the same values and errors.
    """
    if not kernels.COMPILED or not 0 <= int(count) <= _KERNEL_VALUES_PER_BYTE * len(as_u8(buf)) + 4096:
        # the kernel decodes into an array of ``count`` values made first; a count beyond what the
        # bytes plausibly hold (a lying page header, or a few long RLE runs) goes to the numpy
        # decoder, which finds the runs before it allocates (and is fast on few runs)
        return decode_hybrid_numpy(buf, bit_width, count, dtype)
    if not 0 <= bit_width <= 32:
        raise CorruptFileError(f"RLE/bit-packed bit width {bit_width} out of range 0..32")
    count = checked_count(count, "RLE/bit-packed hybrid")
    dt = hybrid_dtype(bit_width, dtype)
    # a few bytes of runs can honestly hold 2**31 values: charge what they expand to before making it
    charge(count * dt.itemsize, f"{count:,} RLE/bit-packed values")
    out = np.empty(count, dt)
    used = hybrid_kernels.decode_hybrid(buf, bit_width, count, out)
    return out, used


# -- levels and booleans ------------------------------------------------------

def encode_levels_v1(levels: np.ndarray, bit_width: int, min_rle_run: int = 8) -> bytes:
    """4-byte little-endian length, then the hybrid (levels of v1 data pages)."""
    body = encode_rle_bitpacked(levels, bit_width, min_rle_run)
    return len(body).to_bytes(4, "little") + body


def decode_levels_v1(buf: Buffer, bit_width: int, count: int, dtype: Any = None) -> tuple[np.ndarray, int]:
    """Decode length-prefixed levels; return (levels, bytes consumed = 4 + length).

    The levels are int32, or ``dtype`` as in :func:`decode_rle_bitpacked` (see :func:`level_dtype`).
    """
    u8 = as_u8(buf)
    if len(u8) < 4:
        raise CorruptFileError("level data truncated: no length prefix")
    length = int.from_bytes(u8[:4].tobytes(), "little")
    if length > len(u8) - 4:
        raise CorruptFileError(f"level data length {length} exceeds the {len(u8) - 4} bytes available")
    levels = decode_rle_bitpacked(u8[4:4 + length], bit_width, count, dtype)
    return levels, 4 + length


def level_dtype(max_level: int) -> Any:
    """The narrowest dtype the hybrid decodes levels up to ``max_level`` into (int8 or int32)."""
    return np.int8 if bit_width_of(max_level) <= 7 else np.int32


def encode_rle_booleans(values: np.ndarray) -> bytes:
    """Booleans as RLE (data pages v2): 4-byte LE length + hybrid with bit width 1."""
    return encode_levels_v1(np.asarray(values, dtype=bool).view(np.uint8), 1)


def decode_rle_booleans(buf: Buffer, count: int) -> tuple[np.ndarray, int]:
    """Decode RLE booleans; return (bool array, bytes consumed)."""
    vals, used = decode_levels_v1(buf, 1, count, np.int8)  # 0 or 1 (checked): a bool view, no int32 detour
    return vals.view(bool), used
