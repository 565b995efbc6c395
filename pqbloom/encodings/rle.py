"""Bit packing and the RLE / bit-packing hybrid encoding (levels, dictionary indices, booleans).

Layout of the hybrid (parquet-format ``Encodings.md``)::

    run := rle-run | bit-packed-run
    rle-run := varint(count << 1) value-in-ceil(bit_width/8)-LE-bytes
    bit-packed-run := varint(groups << 1 | 1) groups*bit_width bytes  (8 values per group, LSB first)

All packing and unpacking is vectorized with numpy; the only Python loops run
once per run header (RLE runs are inherently sequential) or once per one of
the eight value slots of a group.
"""

from __future__ import annotations

import numpy as np

from ..errors import CorruptFileError

__all__ = [
    "as_u8",
    "bit_width_of",
    "bit_pack",
    "bit_unpack",
    "encode_rle_bitpacked",
    "decode_rle_bitpacked",
    "encode_levels_v1",
    "decode_levels_v1",
    "decode_bit_packed_levels",
    "encode_rle_booleans",
    "decode_rle_booleans",
    "read_uleb128",
    "uleb128",
]

#: parquet-java and Arrow never write bit-packed runs longer than 63 groups
#: (the header then fits one byte); we follow them for maximal compatibility.
_MAX_GROUPS_PER_RUN = 63
#: counts beyond this cannot come from one Parquet page (num_values is an i32)
_MAX_COUNT = (1 << 31) - 1

Buffer = bytes | bytearray | memoryview | np.ndarray


def as_u8(buf: Buffer) -> np.ndarray:
    """A 1-D uint8 view of ``buf`` (bytes, bytearray, memoryview or a uint8 array)."""
    if isinstance(buf, np.ndarray):
        if buf.dtype != np.uint8:
            raise TypeError(f"expected a uint8 array, got {buf.dtype}")
        return buf.reshape(-1)
    return np.frombuffer(buf, dtype=np.uint8)


def _check_count(count: int, what: str) -> int:
    count = int(count)
    if count < 0 or count > _MAX_COUNT:
        raise CorruptFileError(f"{what}: invalid value count {count}")
    return count


# -- varints ------------------------------------------------------------------

def uleb128(value: int) -> bytes:
    """Unsigned LEB128 ("varint") of a non-negative int."""
    if value < 0:
        raise ValueError("uleb128 of a negative number")
    out = bytearray()
    while True:
        b = value & 0x7F
        value >>= 7
        if value:
            out.append(b | 0x80)
        else:
            out.append(b)
            return bytes(out)


def read_uleb128(b: bytes | bytearray | memoryview, pos: int, end: int, what: str = "varint") -> tuple[int, int]:
    """Decode one varint from ``b[pos:end]``; return (value, new position). At most 10 bytes."""
    result = 0
    shift = 0
    while True:
        if pos >= end:
            raise CorruptFileError(f"{what}: truncated varint")
        byte = b[pos]
        pos += 1
        result |= (byte & 0x7F) << shift
        if not byte & 0x80:
            return result, pos
        shift += 7
        if shift >= 70:
            raise CorruptFileError(f"{what}: varint too long")


# -- bit packing --------------------------------------------------------------

def bit_width_of(max_value: int) -> int:
    """Bits needed to store every value in ``0..max_value``."""
    max_value = int(max_value)
    if max_value < 0:
        raise ValueError("bit_width_of a negative value")
    return max_value.bit_length()


def _uint_dtype(bit_width: int) -> type[np.unsignedinteger]:
    return np.uint32 if bit_width <= 32 else np.uint64


def bit_pack(values: np.ndarray, bit_width: int) -> bytes:
    """Pack ``values`` LSB-first with ``bit_width`` bits each (0..64) into ``ceil(n*bw/8)`` bytes.

    Only the low ``bit_width`` bits of each value are kept (negative values are
    taken as two's complement).
    """
    return _bit_pack_u8(values, bit_width)[: (len(values) * bit_width + 7) // 8].tobytes()


def _bit_pack_u8(values: np.ndarray, bit_width: int) -> np.ndarray:
    """Pack into whole groups of 8 values: a uint8 array of ``ceil(n/8) * bit_width`` bytes."""
    if not 0 <= bit_width <= 64:
        raise ValueError(f"bit width {bit_width} out of range 0..64")
    v = np.asarray(values).reshape(-1)
    n = len(v)
    if v.dtype.kind not in "iub":
        raise TypeError(f"cannot bit-pack {v.dtype}")
    if bit_width == 0 or n == 0:
        return np.zeros(0, np.uint8)
    groups = (n + 7) // 8
    u = v.astype(np.int64, copy=False).view(np.uint64) if v.dtype.kind == "i" else v.astype(np.uint64, copy=False)
    if bit_width in (8, 16, 32, 64):
        out = np.zeros(groups * 8, f"<u{bit_width // 8}")
        out[:n] = u  # unsigned narrowing keeps the low bits
        return out.view(np.uint8)
    if bit_width == 1:
        bits = np.zeros(groups * 8, np.uint8)
        bits[:n] = u & np.uint64(1)
        return np.packbits(bits, bitorder="little")
    w = np.zeros(groups * 8, np.uint64)
    w[:n] = u
    if bit_width < 64:
        w &= np.uint64((1 << bit_width) - 1)
    w2 = w.reshape(groups, 8)
    out = np.zeros((groups, bit_width), np.uint8)
    for j in range(8):
        bit = j * bit_width
        off, sh = bit >> 3, bit & 7
        nbytes = (sh + bit_width + 7) >> 3
        col = w2[:, j]
        low = col << np.uint64(sh) if sh else col
        for k in range(min(nbytes, 8)):
            out[:, off + k] |= (low >> np.uint64(8 * k)).astype(np.uint8)
        if nbytes == 9:  # the value straddles 9 bytes: its top bits were shifted out of ``low``
            out[:, off + 8] |= (col >> np.uint64(64 - sh)).astype(np.uint8)
    return out.reshape(-1)


def bit_unpack(buf: Buffer, bit_width: int, count: int) -> np.ndarray:
    """Unpack ``count`` LSB-first values of ``bit_width`` bits (0..64).

    Returns uint32 for widths up to 32, uint64 above. Needs ``ceil(count*bw/8)`` bytes.
    """
    if not 0 <= bit_width <= 64:
        raise CorruptFileError(f"bit width {bit_width} out of range 0..64")
    count = _check_count(count, "bit-packed values")
    dt = _uint_dtype(bit_width)
    if bit_width == 0:
        return np.zeros(count, dt)
    u8 = as_u8(buf)
    need = (count * bit_width + 7) // 8
    if len(u8) < need:
        raise CorruptFileError(f"bit-packed data truncated: {count} values of {bit_width} bits need {need} bytes, "
                               f"have {len(u8)}")
    return _unpack_groups(u8[:need], bit_width, count).astype(dt, copy=False)


def _unpack_groups(u8: np.ndarray, bit_width: int, count: int) -> np.ndarray:
    """Unpack from bytes already checked to hold ``count`` values (zero-padding a partial group)."""
    groups = (count + 7) // 8
    nb = groups * bit_width
    if len(u8) < nb:
        u8 = np.concatenate([u8, np.zeros(nb - len(u8), np.uint8)])
    else:
        u8 = np.ascontiguousarray(u8[:nb])
    if bit_width in (8, 16, 32, 64):
        return u8.view(f"<u{bit_width // 8}")[:count].copy()  # never a view of the caller's buffer
    if bit_width == 1:
        return np.unpackbits(u8, bitorder="little", count=count)
    mat = u8.reshape(groups, bit_width)
    out = np.empty((groups, 8), np.uint64)
    for j in range(8):
        bit = j * bit_width
        off, sh = bit >> 3, bit & 7
        nbytes = (sh + bit_width + 7) >> 3
        acc = mat[:, off].astype(np.uint64)
        for k in range(1, min(nbytes, 8)):
            acc |= mat[:, off + k].astype(np.uint64) << np.uint64(8 * k)
        if sh:
            acc >>= np.uint64(sh)
        if nbytes == 9:
            acc |= mat[:, off + 8].astype(np.uint64) << np.uint64(64 - sh)
        out[:, j] = acc
    if bit_width < 64:
        out &= np.uint64((1 << bit_width) - 1)
    return out.reshape(-1)[:count]


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
    g_before = np.cumsum(c_groups) - c_groups
    if g_total:
        if rle_s:
            marks = np.zeros(n + 1, np.int8)
            marks[np.asarray(rle_s, np.int64)] += 1
            marks[np.asarray(rle_e, np.int64)] -= 1
            gathered = v[np.cumsum(marks[:-1], dtype=np.int8) == 0]
        else:
            gathered = v
        if len(gathered) < g_total * 8:
            gathered = np.concatenate([gathered, np.zeros(g_total * 8 - len(gathered), gathered.dtype)])
        packed = _bit_pack_u8(gathered, bit_width)
    else:
        packed = np.zeros(0, np.uint8)
    # every segment, in stream order: header value, payload length, payload source
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
    payload_src = np.zeros(nseg, np.int64)
    payload_src[bp_pos] = g_before * bit_width
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
    # bit-packed payloads
    bp_idx = np.flatnonzero(is_bp & (payload_len > 0))
    if len(bp_idx):
        pl = payload_len[bp_idx]
        total = int(pl.sum())
        within = np.arange(total, dtype=np.int64) - np.repeat(np.cumsum(pl) - pl, pl)
        dst = np.repeat(seg_off[bp_idx] + hlen[bp_idx], pl) + within
        out[dst] = packed[np.repeat(payload_src[bp_idx], pl) + within]
    return out.tobytes()


def decode_rle_bitpacked(buf: Buffer, bit_width: int, count: int) -> np.ndarray:
    """Decode exactly ``count`` values (int32) of the hybrid encoding.

    Raises CorruptFileError when the runs end before ``count`` values. A final
    bit-packed run may hold padding values (and may even lack the bytes of
    the padding). ``bit_width == 0`` yields zeros without reading ``buf``.
    """
    return _decode_hybrid(buf, bit_width, count)[0]


#: run headers are read by a plain loop, except in inputs of at least _VECTOR_SCAN_BYTES whose
#: first _PROBE_RUNS runs average under _DENSE_RUN_BYTES bytes: there the loop would spend more
#: per run than pointer doubling spends per byte
_VECTOR_SCAN_BYTES = 2048
_PROBE_RUNS = 64
_DENSE_RUN_BYTES = 6


def _decode_hybrid(buf: Buffer, bit_width: int, count: int) -> tuple[np.ndarray, int]:
    """Decode the hybrid; return the values and the bytes the runs used.

    The run headers are found first (:func:`_scan_runs_vectorized` for large inputs, a plain loop
    otherwise, and always the loop to report a malformed input precisely); the values of all runs
    are then materialized with numpy at once.
    """
    if not 0 <= bit_width <= 32:
        raise CorruptFileError(f"RLE/bit-packed bit width {bit_width} out of range 0..32")
    count = _check_count(count, "RLE/bit-packed hybrid")
    if bit_width == 0:
        return np.zeros(count, np.int32), 0
    if count == 0:
        return np.zeros(0, np.int32), 0
    u8 = as_u8(buf)
    b = buf if isinstance(buf, bytes) else u8.tobytes()
    # follow the first run headers by a plain loop; when they show many small runs (a few bytes
    # each) in a large input, the rest is scanned vectorized, else the loop goes on
    heads, pos, got, ok = _chase(b, bit_width, count, 0, 0, _PROBE_RUNS)
    runs: _Runs | None = None
    if ok and got < count and len(b) - pos >= _VECTOR_SCAN_BYTES and pos < _DENSE_RUN_BYTES * max(len(heads), 1):
        rest = _scan_runs_vectorized(u8[pos:], bit_width, count - got)
        first = _finish_runs(u8, np.array(heads, np.int64), bit_width, got) if rest is not None else None
        if rest is not None and first is not None:
            runs = (np.concatenate([first[0], rest[0]]), np.concatenate([first[1], rest[1]]),
                    np.concatenate([first[2], rest[2]]), np.concatenate([first[3], rest[3] + pos]),
                    np.concatenate([first[4], rest[4] + pos]), pos + rest[5])
    elif ok:
        if got < count:
            more, pos, got, ok = _chase(b, bit_width, count, pos, got, -1)
            heads.extend(more)
        if ok:
            runs = _finish_runs(u8, np.array(heads, np.int64), bit_width, count)
    if runs is None:  # malformed: the plain loop says precisely what is wrong
        runs = _scan_runs_loop(b, bit_width, count)
    lens_arr, bp_mask, rle_vals, bp_start, bp_stop, pos = runs
    if not len(bp_start):
        out = np.repeat(rle_vals.astype(np.uint32).view(np.int32), lens_arr)
        return out, pos
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
    n_bp = int(lens_arr[bp_mask].sum())
    bp_values = _unpack_groups(packed, bit_width, n_bp).astype(np.uint32, copy=False).view(np.int32)
    if not len(rle_vals):
        return bp_values, pos
    mask = np.repeat(bp_mask, lens_arr)
    out = np.empty(count, np.int32)
    out[mask] = bp_values
    out[~mask] = np.repeat(rle_vals.astype(np.uint32).view(np.int32), lens_arr[~bp_mask])
    return out, pos


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
    """Varint headers (up to 4 bytes) at positions ``at`` of the zero-padded int32 bytes ``a``:
    values, lengths, and whether a header runs on past 4 bytes."""
    value = a[at] & 0x7F
    hlen = np.ones(len(at), np.int64)
    cont = (a[at] & 0x80) != 0
    for k in range(1, 4):
        if not cont.any():
            break
        nb = a[at + k]
        value = np.where(cont, value | ((nb & 0x7F) << (7 * k)), value)
        hlen += cont
        cont = cont & ((nb & 0x80) != 0)
    return value, hlen, cont


def _finish_runs(u8: np.ndarray, chain: np.ndarray, bit_width: int, count: int) -> _Runs | None:
    """The runs whose headers start at ``chain`` (in order), cut at ``count`` values; None when
    they do not hold ``count`` values or the input is cut short (the loop then reports it)."""
    end = len(u8)
    if not len(chain):
        return None
    a = np.zeros(end + 8, np.int32)
    a[:end] = u8
    value, hl, cont = _header_at(a, chain)
    return _runs_of(a, end, chain, value, hl, cont, bit_width, count)


def _runs_of(a: np.ndarray, end: int, chain: np.ndarray, value: np.ndarray, hl: np.ndarray, cont: np.ndarray,
             bit_width: int, count: int) -> _Runs | None:
    vbytes = (bit_width + 7) // 8
    half = value.astype(np.int64) >> 1
    bp = (value & 1) == 1
    h_nv = np.where(bp, half * 8, half)
    cum = np.cumsum(h_nv)
    k = int(np.searchsorted(cum, count))
    if k >= len(chain):
        return None
    chain, hl, bp, half, cont = chain[:k + 1], hl[:k + 1], bp[:k + 1], half[:k + 1], cont[:k + 1]
    if bool(cont.any()):
        return None  # a header longer than 4 bytes
    take = h_nv[:k + 1].copy()
    take[k] = count - (int(cum[k - 1]) if k else 0)
    body = chain + hl
    need = np.where(bp, (take * bit_width + 7) >> 3, vbytes)
    if bool((body + need > end).any()):
        return None  # truncated: let the loop report where
    stop = np.minimum(body + np.where(bp, half * bit_width, vbytes), end)
    pos = int(stop[-1])
    used = take > 0
    take, bp, body, stop = take[used], bp[used], body[used], stop[used]
    rb = body[~bp]
    rle_vals = np.zeros(len(rb), np.int64)
    for j in range(vbytes):
        rle_vals |= a[rb + j].astype(np.int64) << (8 * j)
    return take, bp, rle_vals, body[bp], stop[bp], pos


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


def _scan_runs_vectorized(u8: np.ndarray, bit_width: int, count: int) -> _Runs | None:
    """Run headers without a Python loop per run, or None when the input is not well formed.

    Every byte position is decoded as if a run header started there, which gives the position
    of the following header; the chain of headers from position 0 is then followed by pointer
    doubling (log2(runs) rounds of numpy gathers).
    """
    end = len(u8)
    if end == 0:
        return None
    vbytes = (bit_width + 7) // 8
    a = np.zeros(end + 8, np.int32)
    a[:end] = u8
    # varint header at every position (headers longer than 4 bytes are left to the loop)
    value = a[:end] & 0x7F
    hlen = np.ones(end, np.int32)
    cont = (a[:end] & 0x80) != 0
    for k in range(1, 4):
        if not cont.any():
            break
        nxt_byte = a[k:end + k]
        value[cont] |= (nxt_byte[cont] & 0x7F) << (7 * k)
        hlen += cont
        cont &= (nxt_byte & 0x80) != 0
    is_bp = (value & 1) == 1
    # bytes from one header to the next: the header, then the RLE value or the bit-packed groups
    jump = np.empty(end + 1, np.int64)
    step = jump[:end]
    np.right_shift(value, 1, out=step)
    step *= np.where(is_bp, bit_width, 0)
    step += np.where(is_bp, 0, vbytes)
    step += hlen
    step += np.arange(end, dtype=np.int64)
    np.minimum(step, end, out=step)
    jump[end] = end

    def nvals(at: np.ndarray) -> np.ndarray:
        v = value[at].astype(np.int64) >> 1
        return np.where(is_bp[at], v * 8, v)

    # positions of the headers, in order, until the values reach count (or the chain leaves the buffer)
    chain = np.zeros(1, np.int64)
    got = int(nvals(chain)[0])
    while got < count:
        new = jump[chain]
        new = new[new < end]
        if not len(new):
            return None  # the runs end before count values: let the loop report it
        got += int(nvals(new).sum())
        chain = np.concatenate([chain, new])
        if got < count:
            jump = jump[jump]
    return _runs_of(a, end, chain, value[chain], hlen[chain].astype(np.int64), cont[chain], bit_width, count)


# -- levels and booleans ------------------------------------------------------

def encode_levels_v1(levels: np.ndarray, bit_width: int, min_rle_run: int = 8) -> bytes:
    """4-byte little-endian length, then the hybrid (levels of v1 data pages)."""
    body = encode_rle_bitpacked(levels, bit_width, min_rle_run)
    return len(body).to_bytes(4, "little") + body


def decode_levels_v1(buf: Buffer, bit_width: int, count: int) -> tuple[np.ndarray, int]:
    """Decode length-prefixed levels; return (levels int32, bytes consumed = 4 + length)."""
    u8 = as_u8(buf)
    if len(u8) < 4:
        raise CorruptFileError("level data truncated: no length prefix")
    length = int.from_bytes(u8[:4].tobytes(), "little")
    if length > len(u8) - 4:
        raise CorruptFileError(f"level data length {length} exceeds the {len(u8) - 4} bytes available")
    levels = decode_rle_bitpacked(u8[4:4 + length], bit_width, count)
    return levels, 4 + length


def decode_bit_packed_levels(buf: Buffer, bit_width: int, count: int) -> np.ndarray:
    """Decode the deprecated BIT_PACKED level encoding (MSB-first, no header) into int32 levels.

    The levels use ``ceil(count * bit_width / 8)`` bytes (no length prefix).
    """
    if not 0 <= bit_width <= 32:
        raise CorruptFileError(f"bit width {bit_width} out of range 0..32")
    count = _check_count(count, "BIT_PACKED levels")
    if bit_width == 0:
        return np.zeros(count, np.int32)
    u8 = as_u8(buf)
    need = (count * bit_width + 7) // 8
    if len(u8) < need:
        raise CorruptFileError(f"BIT_PACKED levels truncated: need {need} bytes, have {len(u8)}")
    bits = np.unpackbits(u8[:need], bitorder="big", count=count * bit_width).reshape(count, bit_width)
    weights = np.int64(1) << np.arange(bit_width - 1, -1, -1, dtype=np.int64)
    vals = bits.astype(np.int64) @ weights
    return vals.astype(np.uint32).view(np.int32)


def encode_rle_booleans(values: np.ndarray) -> bytes:
    """Booleans as RLE (data pages v2): 4-byte LE length + hybrid with bit width 1."""
    return encode_levels_v1(np.asarray(values, dtype=bool).view(np.uint8), 1)


def decode_rle_booleans(buf: Buffer, count: int) -> tuple[np.ndarray, int]:
    """Decode RLE booleans; return (bool array, bytes consumed)."""
    vals, used = decode_levels_v1(buf, 1, count)
    return vals.astype(bool), used
