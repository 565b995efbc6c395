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
from ..limits import charge
from .bitpack import Buffer, as_u8, bit_pack_groups, bit_width_of, checked_count, read_uleb128, uleb128, unpack_groups

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


#: run headers are read by a plain loop, except in inputs of at least _VECTOR_SCAN_BYTES whose
#: first _PROBE_RUNS runs average under _DENSE_RUN_BYTES bytes: there the loop would spend more
#: per run than pointer doubling spends per byte
_VECTOR_SCAN_BYTES = 2048
_PROBE_RUNS = 64
_DENSE_RUN_BYTES = 12
#: the vectorized scan follows every 2**_CHAIN_STRIDE_LOG2-th run header by a loop
_CHAIN_STRIDE_LOG2 = 3


#: the compiled kernel takes counts up to this many values per input byte (bit-packed runs hold at
#: most 8; runs of Arrow's levels a few dozen)
_KERNEL_VALUES_PER_BYTE = 256


def _out_dtype(bit_width: int, dtype: Any) -> np.dtype:
    dt = np.dtype(np.int32 if dtype is None else dtype)
    if dt not in (np.dtype(np.int8), np.dtype(np.int16), np.dtype(np.int32)):
        raise ValueError(f"hybrid values decode to int8, int16 or int32, not {dt}")
    if bit_width >= dt.itemsize * 8 and dt != np.dtype(np.int32):
        raise ValueError(f"{bit_width}-bit values do not fit {dt}")
    return dt


def decode_hybrid(buf: Buffer, bit_width: int, count: int, dtype: Any = None) -> tuple[np.ndarray, int]:
    """Decode the hybrid; return the values (int32, or ``dtype`` as in :func:`decode_rle_bitpacked`) and
    the bytes the runs used.

    The compiled kernel (:func:`pqbloom.kernels.decode_hybrid`, one pass over the runs) when in use,
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
    dt = _out_dtype(bit_width, dtype)
    # a few bytes of runs can honestly hold 2**31 values: charge what they expand to before making it
    charge(count * dt.itemsize, f"{count:,} RLE/bit-packed values")
    out = np.empty(count, dt)
    used = kernels.decode_hybrid(buf, bit_width, count, out)
    return out, used


def decode_hybrid_numpy(buf: Buffer, bit_width: int, count: int, dtype: Any = None) -> tuple[np.ndarray, int]:
    """:func:`decode_hybrid` with numpy only: the reference of the compiled kernel (and the fallback).

    The run headers are found first (:func:`_header_chain` when the first runs show many
    small runs in a large input, a plain loop otherwise, and always the loop to report a malformed
    input precisely); the values of all runs are then materialized with numpy at once.
    """
    if not 0 <= bit_width <= 32:
        raise CorruptFileError(f"RLE/bit-packed bit width {bit_width} out of range 0..32")
    count = checked_count(count, "RLE/bit-packed hybrid")
    dt = _out_dtype(bit_width, dtype)
    if bit_width == 0 or count == 0:
        # no bytes needed at all: the count alone sizes the result, so it is charged first
        charge(count * dt.itemsize, f"{count:,} RLE/bit-packed values")
        return np.zeros(count, dt), 0
    u8 = as_u8(buf)
    b = buf if isinstance(buf, bytes) else u8.tobytes()
    # follow the first run headers by a plain loop; when they show many small runs (a few bytes
    # each) in a large input, the rest is scanned vectorized, else the loop goes on
    heads, pos, got, ok = _chase(b, bit_width, count, 0, 0, _PROBE_RUNS)
    if ok and got >= count and len(heads) == 1 and pos <= len(b):
        # a single run (the levels of a small page, or of one without nulls): no numpy run scan
        charge(count * dt.itemsize, f"{count:,} RLE/bit-packed values")
        if not b[0] & 1:
            v = int.from_bytes(b[pos - (bit_width + 7) // 8:pos], "little")
            if dt != np.dtype(np.int32) and v >> bit_width:
                raise CorruptFileError(f"RLE run value {v} does not fit {bit_width} bits")
            return np.full(count, v, np.uint32 if dt == np.dtype(np.int32) else dt).view(dt), pos
        groups = (got + 7) // 8
        unpacked = unpack_groups(u8[pos - groups * bit_width:pos], bit_width, count)
        return unpacked.astype(dt.str.replace("i", "u"), copy=False).view(dt), pos
    runs: _Runs | None = None
    if ok and got < count and len(b) - pos >= _VECTOR_SCAN_BYTES and pos < _DENSE_RUN_BYTES * max(len(heads), 1):
        scanned = _header_chain(u8, bit_width)
        if scanned is not None:
            runs = _runs_of(u8, *scanned, bit_width, count)
    elif ok:
        if got < count:
            more, pos, got, ok = _chase(b, bit_width, count, pos, got, -1)
            heads.extend(more)
        if ok:
            runs = _finish_runs(u8, np.array(heads, np.int64), bit_width, count)
    if runs is None:  # malformed: the plain loop says precisely what is wrong
        runs = _scan_runs_loop(b, bit_width, count)
    # a few bytes of runs can honestly hold 2**31 values: count what they expand to (the values, and
    # the mask placing bit-packed runs among RLE runs) before making it
    charge(count * (dt.itemsize + 1), f"{count:,} RLE/bit-packed values")
    return _materialize(u8, runs, bit_width, count, dt), runs[5]


def _materialize(u8: np.ndarray, runs: _Runs, bit_width: int, count: int, dt: np.dtype) -> np.ndarray:
    """The ``count`` values of the runs found in ``u8``, as ``dt``."""
    lens_arr, bp_mask, rle_vals, bp_start, bp_stop, _ = runs
    narrow = dt != np.dtype(np.int32)
    if narrow and len(rle_vals) and int(rle_vals.max()) >> bit_width:
        raise CorruptFileError(f"RLE run value {int(rle_vals.max())} does not fit {bit_width} bits")
    rv = rle_vals.astype(dt) if narrow else rle_vals.astype(np.uint32).view(np.int32)
    if not len(bp_start):
        return np.repeat(rv, lens_arr)
    # unpack every bit-packed run in one go: runs are whole groups of bit_width bytes
    # except possibly the last one, which may be short of its padding bytes
    if len(bp_start) == 1:
        packed = u8[int(bp_start[0]):int(bp_stop[0])]
    else:
        ln = bp_stop - bp_start
        total = int(ln.sum())
        packed = u8[np.repeat(bp_start - (np.cumsum(ln) - ln), ln) + np.arange(total, dtype=np.int64)]
    # every run but the last holds exactly its groups*8 values, so the
    # concatenation is group-aligned and its first n_bp values are the ones used
    bp_lens = lens_arr[bp_mask]
    n_bp = int(bp_lens.sum())
    unpacked = unpack_groups(packed, bit_width, n_bp)
    if narrow:
        bp_values = unpacked.astype(dt.str.replace("i", "u"), copy=False).view(dt)
    else:
        bp_values = unpacked.astype(np.uint32, copy=False).view(np.int32)
    if not len(rle_vals):
        return bp_values
    # every run once by a repeat (bit-packed ones as zeros), then the bit-packed values in place
    # through a mask of whole runs (predictable, unlike a mask of scattered values)
    per_run = np.zeros(len(lens_arr), bp_values.dtype)
    per_run[~bp_mask] = rv
    out = np.repeat(per_run, lens_arr)
    out[np.repeat(bp_mask, lens_arr)] = bp_values
    return out


_Runs = tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray, int]


def _chase(b: bytes, bit_width: int, count: int, pos: int, got: int, max_runs: int
           ) -> tuple[list[int], int, int, bool]:
    """Follow run headers from ``pos`` until ``count`` values (or ``max_runs`` runs): their positions,
    the next position, the values so far, and False when a header is cut off or too long."""
    end = len(b)
    vbytes = (bit_width + 7) // 8
    heads: list[int] = []
    append = heads.append
    while got < count and max_runs:
        max_runs -= 1
        if pos >= end:
            return heads, pos, got, False
        h = b[pos]
        hl = 1
        if h & 0x80:
            h &= 0x7F
            shift = 7
            while True:
                if pos + hl >= end or hl >= 4:
                    return heads, pos, got, False
                byte = b[pos + hl]
                hl += 1
                h |= (byte & 0x7F) << shift
                if not byte & 0x80:
                    break
                shift += 7
        append(pos)
        if h & 1:
            pos += hl + (h >> 1) * bit_width
            got += (h >> 1) * 8
        else:
            pos += hl + vbytes
            got += h >> 1
    return heads, pos, got, True


def _header_at(a: np.ndarray, at: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Varint headers (up to 4 bytes) at positions ``at`` of the zero-padded int64 bytes ``a``:
    values, lengths, and whether a header runs on past 4 bytes."""
    byte = a[at]
    value = byte & 0x7F
    cont = byte >> 7
    hlen = 1 + cont
    for k in range(1, 4):
        byte = a[at + k]
        value |= ((byte & 0x7F) << (7 * k)) * cont
        cont = cont & (byte >> 7)
        if k < 3:
            hlen += cont
    return value, hlen, cont.astype(bool)


def _finish_runs(u8: np.ndarray, chain: np.ndarray, bit_width: int, count: int) -> _Runs | None:
    """The runs whose headers start at ``chain`` (in order), cut at ``count`` values; None when
    they do not hold ``count`` values or the input is cut short (the loop then reports it)."""
    end = len(u8)
    if not len(chain):
        return None
    a = np.zeros(end + 8, np.int64)
    a[:end] = u8
    return _runs_of(u8, chain, *_header_at(a, chain), bit_width, count)


def _runs_of(u8: np.ndarray, chain: np.ndarray, value: np.ndarray, hl: np.ndarray, cont: np.ndarray,
             bit_width: int, count: int) -> _Runs | None:
    """The runs with headers at ``chain`` (int64 values and lengths, and whether a header goes on
    past 4 bytes), cut at ``count`` values; None when they do not hold ``count`` values, a header
    is too long or the input is cut short (the loop then reports it)."""
    end = len(u8)
    vbytes = (bit_width + 7) // 8
    bp = value & 1
    half = value >> 1
    h_nv = half << (3 * bp)  # bit-packed runs hold 8 values per group
    cum = np.cumsum(h_nv)
    k = int(np.searchsorted(cum, count))
    if k >= len(chain):
        return None
    if k + 1 < len(chain):
        chain, hl, bp, half, cont, h_nv = chain[:k + 1], hl[:k + 1], bp[:k + 1], half[:k + 1], cont[:k + 1], h_nv[:k + 1]
    if bool(cont.any()):
        return None  # a header longer than 4 bytes
    take = h_nv.copy()
    take[k] = count - (int(cum[k - 1]) if k else 0)
    body = chain + hl
    # where each run's RLE value or groups end; only the last run may lack its padding bytes
    nxt = bp * (half * bit_width - vbytes)
    nxt += vbytes
    nxt += body
    last_need = ((int(take[k]) * bit_width + 7) >> 3) if bp[k] else vbytes
    if int(body[k]) + last_need > end or (k and int(nxt[:k].max()) > end):
        return None  # truncated: let the loop report where
    stop = nxt
    stop[k] = min(int(stop[k]), end)
    pos = int(stop[k])
    if not bool(take.all()):
        used = take > 0
        take, bp, body, stop = take[used], bp[used], body[used], stop[used]
    rb = body[np.flatnonzero(bp == 0)]
    rle_vals = u8[rb].astype(np.int64)
    for j in range(1, vbytes):
        rle_vals |= u8[rb + j].astype(np.int64) << (8 * j)
    bpi = np.flatnonzero(bp)
    return take, bp.astype(bool), rle_vals, body[bpi], stop[bpi], pos


def _scan_runs_loop(b: bytes, bit_width: int, count: int, max_runs: int = -1) -> _Runs:
    """Run headers by a plain loop: (values per run, bit-packed flags, RLE values,
    bit-packed payload starts and stops, bytes used). Raises on malformed input.

    With ``max_runs`` >= 0 it stops after that many runs (maybe short of ``count`` values)."""
    end = len(b)
    vbytes = (bit_width + 7) // 8
    seg_len: list[int] = []
    seg_bp: list[bool] = []
    rle_vals: list[int] = []
    bp_start: list[int] = []
    bp_stop: list[int] = []
    got = 0
    pos = 0
    from_bytes = int.from_bytes
    while got < count and max_runs != 0:
        max_runs -= 1
        if pos >= end:
            raise CorruptFileError("RLE/bit-packed run header: truncated varint")
        header = b[pos]
        if header & 0x80:
            header, pos = read_uleb128(b, pos, end, "RLE/bit-packed run header")
        else:
            pos += 1
        left = count - got
        if header & 1:
            groups = header >> 1
            nvals = groups * 8
            take = nvals if nvals < left else left
            nbytes = groups * bit_width
            need = (take * bit_width + 7) >> 3
            if pos + need > end:
                raise CorruptFileError(f"bit-packed run truncated: needs {need} bytes at offset {pos}, have {end - pos}")
            stop = pos + nbytes if pos + nbytes < end else end
            if take:
                bp_start.append(pos)
                bp_stop.append(stop)
                seg_len.append(take)
                seg_bp.append(True)
            pos = stop
            got += take
        else:
            run = header >> 1
            if pos + vbytes > end:
                raise CorruptFileError("RLE run value truncated")
            val = b[pos] if vbytes == 1 else from_bytes(b[pos:pos + vbytes], "little")
            pos += vbytes
            take = run if run < left else left
            if take:
                seg_len.append(take)
                seg_bp.append(False)
                rle_vals.append(val)
            got += take
    return (np.array(seg_len, np.int64), np.array(seg_bp, bool), np.array(rle_vals, np.int64),
            np.array(bp_start, np.int64), np.array(bp_stop, np.int64), pos)


def _header_chain(u8: np.ndarray, bit_width: int) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray] | None:
    """All the run headers of ``u8`` (from position 0 to its end) without a Python loop per run:
    their positions, values, lengths and whether a fifth header byte follows; None for no input.

    Every byte position is decoded as if a run header started there, which gives the position of
    the following header. Composing that map with itself k times (k gathers over the positions)
    gives a map 2**k headers ahead: a loop follows it through one header in 2**k, and gathers
    fill in the headers in between. (Headers longer than 4 bytes get a wrong successor: the
    caller rejects the chain when one of them is used.) Temporaries are few and reused: fresh
    arrays the size of the input cost more than the arithmetic on them.
    """
    end = len(u8)
    if end == 0:
        return None
    vbytes = (bit_width + 7) // 8
    # int32 arithmetic when no jump (at most 4 header bytes + end * 32 payload bytes) can overflow it
    it: Any = np.int32 if (end + 8) * 33 < 2**31 else np.int64
    w: np.ndarray = np.zeros(end + 4, it)
    w[:end] = u8
    # varint header at every position, in 4 bytes at most
    value = w[:end] & 0x7F
    cont = w[:end] >> 7
    hlen = cont + 1
    tmp = np.empty(end, it)
    for k in range(1, 4):
        byte = w[k:end + k]
        np.bitwise_and(byte, 0x7F, out=tmp)
        tmp <<= 7 * k
        tmp *= cont
        value |= tmp
        np.right_shift(byte, 7, out=tmp)
        cont &= tmp
        if k < 3:
            hlen += cont
    # next header: after this one and its RLE value (vbytes) or bit-packed groups (half * bit_width)
    np.right_shift(value, 1, out=tmp)
    np.minimum(tmp, end, out=tmp)  # a jump past the end ends the chain either way
    tmp *= bit_width
    tmp -= vbytes
    tmp *= value & 1
    tmp += hlen
    jump = np.arange(vbytes, end + 1 + vbytes, dtype=np.int64)  # int64: gathers index with it
    jump[:end] += tmp
    np.minimum(jump, end, out=jump)  # the end is its own successor
    far = jump
    for _ in range(_CHAIN_STRIDE_LOG2):
        far = far[far]
    # every (2**k)-th header by a plain loop, then the ones in between by gathers
    hop = far.data  # a memoryview: indexing it from Python is cheap
    anchors = []
    p = 0
    while p < end:
        anchors.append(p)
        p = hop[p]
    stride = 1 << _CHAIN_STRIDE_LOG2
    heads = np.empty((stride, len(anchors)), np.int64)
    heads[0] = anchors
    for j in range(1, stride):
        np.take(jump, heads[j - 1], out=heads[j])
    chain = heads.T.reshape(-1)
    chain = chain[:int(np.searchsorted(chain, end))]
    return chain, value[chain].astype(np.int64), hlen[chain].astype(np.int64), cont[chain].astype(bool)


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
