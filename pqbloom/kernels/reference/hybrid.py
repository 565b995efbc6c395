"""The RLE / bit-packed hybrid decoded with numpy only: the reference of the compiled kernels
(:mod:`pqbloom.kernels.hybrid`) and their fallback.

:func:`decode_hybrid_numpy` allocates and returns the values (the encodings' RLE decoder uses it when
the kernels are not in use); :func:`decode_hybrid` and :func:`page_levels` are the reference of the
compiled kernels of the same names (same arguments, results and errors), and the ``check_*``
functions the argument checks both modes share. Like every module of :mod:`pqbloom.kernels.reference`
it imports only arrays, errors, limits, numpy and the bit-level decoders of :mod:`.bits`.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ...arrays import Buffer, as_u8
from ...errors import CorruptFileError
from ...limits import charge
from .bits import MAX_COUNT, checked_count, unpack_groups

__all__ = ["decode_hybrid_numpy", "hybrid_dtype", "empty_run_message", "HYBRID_DTYPES", "LEVEL_DTYPES",
           "check_hybrid_args", "decode_hybrid", "check_page_levels_args", "page_levels", "gather_dictionary"]

#: output dtypes of the hybrid decoder: levels (int8, int16, int32), dictionary indices (int32), booleans
HYBRID_DTYPES = (np.dtype(np.int8), np.dtype(np.int16), np.dtype(np.int32), np.dtype(np.bool_))
#: the dtypes levels decode to
LEVEL_DTYPES = (np.dtype(np.int8), np.dtype(np.int16), np.dtype(np.int32))


def empty_run_message(bit_packed: bool, offset: int) -> str:
    """The error of a run of 0 values (a bit-packed run of 0 groups, an RLE run of 0 repeats): a
    decoder would make no progress on it; Arrow and parquet-java refuse it."""
    return f"{'bit-packed' if bit_packed else 'RLE'} run of 0 values at offset {offset}"


def _least_bytes(groups: int, take: int, bit_width: int) -> int:
    """The bytes a bit-packed run of ``groups`` groups, ``take`` of whose values are wanted, must
    have: those of the values wanted, and of every group but the last, whose padding (only) a
    writer may have cut when the run ends the input (Arrow's rule: a run claiming more is corrupt)."""
    return (max(take, (groups - 1) * 8 + 1) * bit_width + 7) >> 3


def hybrid_dtype(bit_width: int, dtype: Any) -> np.dtype:
    """The dtype hybrid values decode to (int32 by default; int8/int16 for narrow levels)."""
    dt = np.dtype(np.int32 if dtype is None else dtype)
    if dt not in (np.dtype(np.int8), np.dtype(np.int16), np.dtype(np.int32)):
        raise ValueError(f"hybrid values decode to int8, int16 or int32, not {dt}")
    if bit_width >= dt.itemsize * 8 and dt != np.dtype(np.int32):
        raise ValueError(f"{bit_width}-bit values do not fit {dt}")
    return dt


#: run headers are read by a plain loop, except in inputs of at least _VECTOR_SCAN_BYTES whose
#: first _PROBE_RUNS runs average under _DENSE_RUN_BYTES bytes: there the loop would spend more
#: per run than pointer doubling spends per byte
_VECTOR_SCAN_BYTES = 2048
_PROBE_RUNS = 64
_DENSE_RUN_BYTES = 12
#: the vectorized scan follows every 2**_CHAIN_STRIDE_LOG2-th run header by a loop
_CHAIN_STRIDE_LOG2 = 3



def decode_hybrid_numpy(buf: Buffer, bit_width: int, count: int, dtype: Any = None) -> tuple[np.ndarray, int]:
    """:func:`decode_hybrid` with numpy only: the reference of the compiled kernel (and the fallback).

    The run headers are found first (:func:`_header_chain` when the first runs show many
    small runs in a large input, a plain loop otherwise, and always the loop to report a malformed
    input precisely); the values of all runs are then materialized with numpy at once.
    """
    if not 0 <= bit_width <= 32:
        raise CorruptFileError(f"RLE/bit-packed bit width {bit_width} out of range 0..32")
    count = checked_count(count, "RLE/bit-packed hybrid")
    dt = hybrid_dtype(bit_width, dtype)
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
    if bool(cont.any()) or not bool(half.all()):
        return None  # a header longer than 4 bytes, or a run of 0 values
    take = h_nv.copy()
    take[k] = count - (int(cum[k - 1]) if k else 0)
    body = chain + hl
    # where each run's RLE value or groups end; only the last run may lack its padding bytes
    nxt = bp * (half * bit_width - vbytes)
    nxt += vbytes
    nxt += body
    last_need = _least_bytes(int(half[k]), int(take[k]), bit_width) if bp[k] else vbytes
    if int(body[k]) + last_need > end or (k and int(nxt[:k].max()) > end):
        return None  # truncated: let the loop report where
    stop = nxt
    stop[k] = min(int(stop[k]), end)
    pos = int(stop[k])
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
        start = pos
        header = b[pos]
        pos += 1
        if header & 0x80:
            # at most 5 bytes and 32 bits (as parquet-java and Arrow read run headers)
            header &= 0x7F
            shift = 0
            while True:
                shift += 7
                if shift >= 35:
                    raise CorruptFileError("RLE/bit-packed run header: varint too long")
                if pos >= end:
                    raise CorruptFileError("RLE/bit-packed run header: truncated varint")
                byte = b[pos]
                pos += 1
                header |= (byte & 0x7F) << shift
                if not byte & 0x80:
                    break
            if header >> 32:
                raise CorruptFileError("RLE/bit-packed run header: varint too long")
        left = count - got
        if header & 1:
            groups = header >> 1
            if not groups:
                raise CorruptFileError(empty_run_message(True, start))
            nvals = groups * 8
            take = nvals if nvals < left else left
            nbytes = groups * bit_width
            need = _least_bytes(groups, take, bit_width)
            if pos + need > end:
                raise CorruptFileError(f"bit-packed run truncated: needs {need} bytes at offset {pos}, have {end - pos}")
            stop = pos + nbytes if pos + nbytes < end else end
            bp_start.append(pos)
            bp_stop.append(stop)
            seg_len.append(take)
            seg_bp.append(True)
            pos = stop
            got += take
        else:
            run = header >> 1
            if not run:
                raise CorruptFileError(empty_run_message(False, start))
            if pos + vbytes > end:
                raise CorruptFileError("RLE run value truncated")
            val = b[pos] if vbytes == 1 else from_bytes(b[pos:pos + vbytes], "little")
            pos += vbytes
            take = run if run < left else left
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



# -- the kernels' reference ----------------------------------------------------------------------------

def check_hybrid_args(bit_width: int, count: int, out: np.ndarray) -> int:
    """Validate a :func:`decode_hybrid` call (as the encodings do, in that order); return ``count``."""
    if not 0 <= bit_width <= 32:
        raise CorruptFileError(f"RLE/bit-packed bit width {bit_width} out of range 0..32")
    count = int(count)
    if count < 0 or count > MAX_COUNT:
        raise CorruptFileError(f"RLE/bit-packed hybrid: invalid value count {count}")
    if not isinstance(out, np.ndarray) or out.ndim != 1 or not out.flags.c_contiguous or not out.flags.writeable:
        raise ValueError("the hybrid decodes into a writable 1-D contiguous array")
    dt = out.dtype
    if dt not in HYBRID_DTYPES:
        raise ValueError(f"hybrid values decode to int8, int16, int32 or bool, not {dt}")
    if dt in (np.dtype(np.int8), np.dtype(np.int16)) and bit_width >= dt.itemsize * 8:
        raise ValueError(f"{bit_width}-bit values do not fit {dt}")
    if len(out) < count:
        raise ValueError(f"output of {len(out)} values for {count} values")
    return count


def decode_hybrid(buf: Buffer, bit_width: int, count: int, out: np.ndarray) -> int:
    """Decode ``count`` values of the RLE / bit-packed hybrid into ``out[:count]``; return the bytes used.

    ``out`` is int8 or int16 (levels narrower than the type: an RLE value wider than ``bit_width``
    is then a CorruptFileError), int32 (values as stored, the bit pattern of 32-bit ones), or bool
    (non-zero is True). A final bit-packed run may lack its padding bytes; the bytes used end after
    the last run needed, padding included as far as ``buf`` holds it. Bit width 0 gives zeros and
    uses no bytes.

    This is the encodings' numpy decoder (:func:`decode_hybrid_numpy`:
    run headers by pointer jumping when runs are many and small, a loop otherwise); it never dispatches
    back to the kernels.
    """
    count = check_hybrid_args(bit_width, count, out)
    if out.dtype == np.bool_:
        vals, used = decode_hybrid_numpy(buf, bit_width, count, np.int32)
        np.not_equal(vals, 0, out=out[:count])
    else:
        vals, used = decode_hybrid_numpy(buf, bit_width, count, out.dtype)
        out[:count] = vals
    return used


def check_page_levels_args(buf: np.ndarray, count: int, rep_bw: int, def_bw: int, rep_len: int, def_len: int,
                           reps: np.ndarray | None, defs: np.ndarray | None) -> int:
    """Validate a :func:`page_levels` call; return ``count``."""
    count = int(count)
    if not 0 <= rep_bw <= 32 or not 0 <= def_bw <= 32 or not 0 <= count <= MAX_COUNT:
        raise ValueError("page_levels: bit widths 0..32 and a count of 0..2**31-1")
    if (rep_len >= 0) != (def_len >= 0) or (rep_len >= 0 and rep_len + def_len > len(buf)):
        raise ValueError("page_levels: v2 block lengths must both be given and fit the page")
    for bw, out in ((rep_bw, reps), (def_bw, defs)):
        if bw:
            if out is None:
                raise ValueError("page_levels: no array for levels of a non-zero bit width")
            check_hybrid_args(bw, count, out)
            if out.dtype not in LEVEL_DTYPES:
                raise ValueError(f"levels decode to int8, int16 or int32, not {out.dtype}")
    if rep_bw and def_bw and reps is not None and defs is not None and reps.dtype != defs.dtype:
        raise ValueError("page_levels: both level arrays must have one dtype")
    return count


def page_levels(buf: Buffer, count: int, rep_bw: int, def_bw: int, rep_len: int, def_len: int,
                reps: np.ndarray | None, defs: np.ndarray | None, max_def: int) -> tuple[int, int]:
    """Decode the repetition then the definition levels of one data page (``count`` each) from the
    start of ``buf`` into ``reps[:count]`` and ``defs[:count]``; return (bytes the levels take, number
    of definition levels equal to ``max_def``, ``count`` when the page has none).

    A bit width of 0 means the page has no such levels. ``rep_len`` and ``def_len`` are a v2 page
    header's block lengths, or both -1 for v1 blocks (each a 4-byte little-endian length, then the
    hybrid). Mirrors the page reader's former per-block calls of
    :func:`pqbloom.encodings.decode_levels_v1` (v1) and :func:`decode_hybrid` on the stated slices (v2).
    """
    u8 = as_u8(buf)
    count = check_page_levels_args(u8, count, rep_bw, def_bw, rep_len, def_len, reps, defs)
    pos = 0
    present = count
    for bw, stated, out in ((rep_bw, rep_len, reps), (def_bw, def_len, defs)):
        if not bw:
            pos += max(stated, 0)
            continue
        if stated < 0:
            if len(u8) - pos < 4:
                raise CorruptFileError("level data truncated: no length prefix")
            length = int.from_bytes(u8[pos:pos + 4].tobytes(), "little")
            pos += 4
            if length > len(u8) - pos:
                raise CorruptFileError(f"level data length {length} exceeds the {len(u8) - pos} bytes available")
        else:
            length = stated
        assert out is not None  # checked above
        decode_hybrid(u8[pos:pos + length], bw, count, out)
        pos += length
        if out is defs and defs is not None:
            present = int(np.count_nonzero(defs[:count] == max_def))
    return (rep_len + def_len if rep_len >= 0 else pos), present


def gather_dictionary(buf: Buffer, count: int, dictionary: np.ndarray, present: np.ndarray | None,
                      out: np.ndarray) -> int:
    """The ``count`` values of an RLE_DICTIONARY data page looked up in ``dictionary`` and written to
    ``out``'s rows; return the bytes used (the bit-width byte and the runs).

    ``buf`` holds the page's value bytes (one byte of bit width, then the indices in the hybrid).
    Without ``present``, ``out`` has ``count`` rows and row i gets ``dictionary[index[i]]``; with it
    (a bool mask, one per row of ``out``) the values go to the rows it marks and the others get
    zeros. ``out`` has the dictionary's dtype and row shape (ValueError otherwise). An index out of
    range (negative ones too: indices are unsigned), a bad run or a mask marking another number of
    rows than ``count`` raise CorruptFileError, as the page's indices decoded, taken and
    scattered one step at a time do.
    """
    if not isinstance(out, np.ndarray) or not isinstance(dictionary, np.ndarray) or out.dtype != dictionary.dtype \
            or out.shape[1:] != dictionary.shape[1:] or not out.flags.writeable:
        raise ValueError("gather_dictionary: out must be a writable array of the dictionary's dtype and row shape")
    count = int(count)
    rows = len(out) if present is None else len(present)
    if count < 0 or count > MAX_COUNT or (present is None and len(out) != count) or len(out) != rows:
        raise ValueError("gather_dictionary: out must have one row per value (or per flag of present)")
    u8 = as_u8(buf)
    if count == 0:
        idx = np.zeros(0, np.int32)
        used = 0
    else:
        if len(u8) == 0:
            raise CorruptFileError("dictionary indices: empty page data")
        bw = int(u8[0])
        if bw > 32:
            raise CorruptFileError(f"dictionary indices: bit width {bw} > 32")
        idx, used = decode_hybrid_numpy(u8[1:], bw, count, np.int32)
        used += 1
    uidx = idx.view(np.uint32)
    if len(uidx) and int(uidx.max()) >= len(dictionary):
        lo, hi = int(idx.min()), int(idx.max())
        raise CorruptFileError(f"dictionary index {lo if lo < 0 else hi} out of range for a dictionary "
                               f"of {len(dictionary)} values")
    values = dictionary[uidx]
    if present is None:
        out[...] = values
        return used
    mask = np.asarray(present, dtype=bool)
    npresent = int(np.count_nonzero(mask))
    if npresent != count:
        raise CorruptFileError(f"a page of the chunk: {npresent} defined levels but {count} values")
    out[mask] = values
    out[~mask] = 0
    return used
