"""Numpy reference of the hybrid encoder (:func:`pqbloom.kernels.hybrid.encode_hybrid`): the oracle the
compiled encoder is tested against and its fallback (the decoders' reference is :mod:`.hybrid`).
"""

from __future__ import annotations

import numpy as np

from .bits import pack_groups

__all__ = ["MAX_GROUPS_PER_RUN", "encode_hybrid"]

#: parquet-java and Arrow never write bit-packed runs longer than 63 groups
#: (the header then fits one byte); we follow them for maximal compatibility.
MAX_GROUPS_PER_RUN = 63


def _uleb128(value: int) -> bytes:
    out = bytearray()
    while True:
        b = value & 0x7F
        value >>= 7
        if value:
            out.append(b | 0x80)
        else:
            out.append(b)
            return bytes(out)


def encode_hybrid(v: np.ndarray, bit_width: int, min_rle_run: int = 8) -> bytes:
    """The RLE / bit-packed hybrid encoding of the 1-D integer array ``v`` (no length prefix), whose
    values the caller has checked fit ``bit_width`` (0..32) bits; ``min_rle_run`` >= 8.

    Runs of >= ``min_rle_run`` equal values become RLE runs (after letting the preceding bit-packed
    stretch grow to a whole number of groups; 8 values of the run must remain); everything else is
    bit-packed in runs of at most 63 groups, the last one zero-padded.

    With the default of 8 the choice of RLE runs loops in Python once per run of 8 or more
    (whether a short run still holds 8 values after the alignment depends on the runs before
    it); from 15 up every such run qualifies and the choice is vectorized too. The packing,
    the run headers and the output layout are always built with numpy in one go.
    """
    n = len(v)
    if n == 0:
        return b""
    vbytes = (bit_width + 7) // 8
    # tiny or constant inputs (the levels of a small page, or of one without nulls) skip the
    # vectorized machinery, whose fixed cost dominates there; the bytes are the same
    if n < 8:
        return b"\x03" + pack_groups(v, bit_width).tobytes()
    if n >= min_rle_run and v[0] == v[-1] and not (v != v[0]).any():
        return _uleb128(n << 1) + (int(v[0]) & 0xFFFFFFFF).to_bytes(vbytes, "little")
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
    per = MAX_GROUPS_PER_RUN * 8
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
        packed = pack_groups(gathered, bit_width)
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
