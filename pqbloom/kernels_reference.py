"""Numpy reference implementations of the compiled kernels (:mod:`pqbloom.kernels`).

Each function here is the fallback when the extension is not built (or ``PQBLOOM_PURE_PYTHON=1``)
and the oracle the compiled kernel is tested against: same arguments, same results, same typed
errors with the same messages. The numpy loops the encodings and the statistics had are here now
(they delegate to :mod:`pqbloom.kernels`); "mirrors" below names where each came from. The
exception is the hybrid decoder, too large to copy: :func:`decode_hybrid` calls
:func:`pqbloom.encodings.hybrid_numpy.decode_hybrid_numpy`, a module of its own that does not import
the kernels (the RLE module does); likewise DELTA_BINARY_PACKED's, :func:`decode_delta_binary_packed`
(:func:`pqbloom.encodings.delta_numpy.decode_delta_binary_packed_numpy`); the DECIMAL reference is in
:mod:`pqbloom.kernels_reference_decimals`, the object kernels' in :mod:`pqbloom.kernels_reference_objects` and
the write path's in :mod:`pqbloom.kernels_reference_write` (all re-exported here). Beyond them, this module imports
only arrays, errors and numpy.

Argument checks shared with the compiled path live here too (``check_*``), so both modes reject a
bad call the same way.
"""

from __future__ import annotations

import struct
from typing import Any

import numpy as np

from .arrays import BinaryArray, Buffer, as_u8
from .encodings.delta_numpy import decode_delta_binary_packed_numpy as decode_delta_binary_packed
from .encodings.hybrid_numpy import decode_hybrid_numpy
from .errors import CorruptFileError
from .kernels_reference_decimals import decimal_buffer
from .kernels_reference_objects import decimal_objects, time_objects
from .kernels_reference_write import binary_argminmax, encode_plain_byte_array

__all__ = [
    "decimal_objects",
    "time_objects",
    "HYBRID_DTYPES",
    "check_hybrid_args",
    "check_levels",
    "decode_hybrid",
    "check_page_levels_args",
    "page_levels",
    "decode_plain_byte_array",
    "decode_plain_byte_array_into",
    "check_offsets_base",
    "into_buffers_usable",
    "take_binary",
    "take_binary_into",
    "scatter_nulls",
    "check_scatter_out",
    "rebuild_prefixes",
    "list_offsets",
    "check_chunk_levels",
    "binary_argminmax",
    "encode_plain_byte_array",
    "decimal_buffer",
    "decode_delta_binary_packed",
]

_MAX_COUNT = (1 << 31) - 1
_I64_MAX = (1 << 63) - 1
#: output dtypes of the hybrid decoder: levels (int8, int16, int32), dictionary indices (int32), booleans
HYBRID_DTYPES = (np.dtype(np.int8), np.dtype(np.int16), np.dtype(np.int32), np.dtype(np.bool_))
_LEVEL_DTYPES = (np.dtype(np.int8), np.dtype(np.int16), np.dtype(np.int32))


# -- 1. RLE / bit-packed hybrid ------------------------------------------------------------------

def check_hybrid_args(bit_width: int, count: int, out: np.ndarray) -> int:
    """Validate a :func:`decode_hybrid` call (as the encodings do, in that order); return ``count``."""
    if not 0 <= bit_width <= 32:
        raise CorruptFileError(f"RLE/bit-packed bit width {bit_width} out of range 0..32")
    count = int(count)
    if count < 0 or count > _MAX_COUNT:
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

    This is the encodings' numpy decoder (:func:`pqbloom.encodings.hybrid_numpy.decode_hybrid_numpy`:
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
    if not 0 <= rep_bw <= 32 or not 0 <= def_bw <= 32 or not 0 <= count <= _MAX_COUNT:
        raise ValueError("page_levels: bit widths 0..32 and a count of 0..2**31-1")
    if (rep_len >= 0) != (def_len >= 0) or (rep_len >= 0 and rep_len + def_len > len(buf)):
        raise ValueError("page_levels: v2 block lengths must both be given and fit the page")
    for bw, out in ((rep_bw, reps), (def_bw, defs)):
        if bw:
            if out is None:
                raise ValueError("page_levels: no array for levels of a non-zero bit width")
            check_hybrid_args(bw, count, out)
            if out.dtype not in _LEVEL_DTYPES:
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


# -- 2. PLAIN BYTE_ARRAY decode ------------------------------------------------------------------

def decode_plain_byte_array(buf: Buffer, count: int) -> tuple[BinaryArray, int]:
    """``count`` values of 4-byte little-endian length + bytes: (BinaryArray, bytes used).

    Mirrors ``pqbloom.encodings.plain.decode_plain_byte_array``: when every value has the length
    of the first one the values are one reshape, else a loop over the length prefixes.
    """
    u8 = as_u8(buf)
    count = int(count)
    if count < 0 or count > _MAX_COUNT:
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


# -- 3. gather (dictionary take) -----------------------------------------------------------------

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
    if count < 0 or count > _MAX_COUNT:
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


# -- 4. nulls placed from definition levels ------------------------------------------------------

def check_levels(levels: np.ndarray, what: str) -> np.ndarray:
    """``levels`` as a 1-D array of int8, int16 or int32 (or a bool mask); ValueError otherwise."""
    lv = np.asarray(levels)
    if lv.ndim != 1:
        raise ValueError(f"{what} must be 1-D")
    if lv.dtype == np.bool_ or lv.dtype in _LEVEL_DTYPES:
        return lv
    if lv.dtype.kind in "iu" and (not len(lv) or (int(lv.min()) >= -(1 << 31) and int(lv.max()) < (1 << 31))):
        return lv.astype(np.int32)
    raise ValueError(f"{what} must be int8, int16 or int32 levels (or a bool mask), not {lv.dtype}")


def _present(levels: np.ndarray, max_level: int) -> np.ndarray:
    lv = check_levels(levels, "levels")
    return lv if lv.dtype == np.bool_ else lv == max_level


def scatter_nulls(dense: Any, levels: np.ndarray, max_level: int = 1, where: str = "column",
                  out: np.ndarray | None = None) -> tuple[Any, np.ndarray]:
    """Full-length values and Arrow's validity bitmap from dense (non-null) values.

    ``levels`` are definition levels (a value is present where they equal ``max_level``) or a bool
    presence mask. ``dense`` is a numpy array (1-D, or 2-D uint8 rows for FIXED_LEN_BYTE_ARRAY) or
    a BinaryArray. Null slots hold zeros (empty values); the bitmap is little-endian packed bits,
    ``ceil(n / 8)`` bytes. CorruptFileError when the levels define a different number of values.
    ``out``: the array the values are written to (and returned), for a numpy ``dense``: contiguous,
    writable, ``len(levels)`` rows of ``dense``'s dtype and row shape (ValueError otherwise).
    """
    present = _present(levels, max_level)
    if out is not None:
        check_scatter_out(dense, len(present), out)
    npresent = int(np.count_nonzero(present))
    if npresent != len(dense):
        raise CorruptFileError(f"{where}: {npresent} defined levels but {len(dense)} values")
    values = _scatter(dense, present)
    if out is not None:
        out[...] = values
        values = out
    return values, np.packbits(present, bitorder="little")


def check_scatter_out(dense: Any, n: int, out: np.ndarray) -> None:
    """ValueError unless ``out`` can take the ``n`` scattered rows of ``dense`` (see :func:`scatter_nulls`)."""
    if not isinstance(dense, np.ndarray) or not isinstance(out, np.ndarray) or out.dtype != dense.dtype \
            or out.shape != (n,) + dense.shape[1:] or not out.flags.c_contiguous or not out.flags.writeable:
        raise ValueError("scatter_nulls: out must be a contiguous, writable array of the values' dtype and "
                         "row shape with one row per level")


def _scatter(dense: Any, present: np.ndarray) -> Any:
    """Dense values spread to the slots of ``present``; placeholders (zeros, empty values) elsewhere."""
    n = len(present)
    if isinstance(dense, BinaryArray):
        lens = np.zeros(n, np.int64)
        lens[present] = dense.lengths()
        offs = np.zeros(n + 1, np.int64)
        np.cumsum(lens, out=offs[1:])
        return BinaryArray(offs, dense.compact().data)
    out = np.zeros((n,) + dense.shape[1:], dense.dtype)
    out[present] = dense
    return out


_SPREAD_BLOCK = 1 << 16


def spread_offsets(full: np.ndarray, present: np.ndarray, count: int) -> None:
    """Spread the ``count + 1`` dense offsets at the head of ``full`` (int64, at least
    ``len(present) + 1`` entries) to one per row, in place: row i ends where its last present row's
    value ends (a null row repeats the offset before it). CorruptFileError when ``present`` does
    not flag exactly ``count`` rows (nothing written then)."""
    present = np.asarray(present, dtype=bool)
    n = len(present)
    if count < 0 or len(full) < max(n, count) + 1:
        raise ValueError("spread_offsets: the offsets do not hold the rows")
    starts = list(range(0, n, _SPREAD_BLOCK))
    before = [0]
    for a in starts:  # (np.add.reduceat would first cast every flag to int64)
        before.append(before[-1] + int(np.count_nonzero(present[a:a + _SPREAD_BLOCK])))
    if before[-1] != count:
        raise CorruptFileError(f"{count} values for {before[-1]} non-null slots")
    for a, c0 in zip(starts[::-1], before[-2::-1]):
        b = min(a + _SPREAD_BLOCK, n)
        idx = np.cumsum(present[a:b], dtype=np.int64)
        idx += c0
        full[a + 1:b + 1] = full[idx]  # gathered before written: reads at or below b


# -- 5. DELTA_BYTE_ARRAY prefix rebuild ----------------------------------------------------------

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


# -- 6. repetition levels to list offsets --------------------------------------------------------

def list_offsets(defs: np.ndarray, reps: np.ndarray, elem_def: int, ctx_def: int = 0, ctx_rep: int = 0,
                 where: str = "list") -> np.ndarray:
    """Offsets (int64, one per slot + 1) of the innermost list level of a column.

    The list's slots start at the entries with ``reps <= ctx_rep`` and ``defs >= ctx_def``; its
    elements are the entries with ``defs >= elem_def``, each counted in the slot before it (the
    running count of ``pqbloom.file.levels.assemble``). An element before the first slot is a
    CorruptFileError.
    """
    d = check_levels(defs, "definition levels")
    r = check_levels(reps, "repetition levels")
    if len(d) != len(r):
        raise ValueError(f"{len(d)} definition levels for {len(r)} repetition levels")
    slot = r <= ctx_rep
    if ctx_def > 0:
        slot &= d >= ctx_def
    pos = np.flatnonzero(slot)
    cs = np.cumsum(d >= elem_def, dtype=np.int64)
    nslots = len(pos)
    before = (int(cs[pos[0] - 1]) if pos[0] else 0) if nslots else (int(cs[-1]) if len(cs) else 0)
    if before:
        raise CorruptFileError(f"{where}: elements before the first slot")
    offsets = np.zeros(nslots + 1, np.int64)
    if nslots:
        offsets[1:nslots] = cs[pos[1:] - 1]
        offsets[-1] = cs[-1]
    return offsets


def check_chunk_levels(defs: np.ndarray | None, reps: np.ndarray | None, max_def: int, max_rep: int,
                       rep_def: list[int], n: int) -> int:
    """Refuse a chunk's levels no valid writer produces (CorruptFileError): out of range, a first
    record continuing a list, or a repetition into a list that has no element (``rep_def[k]``: the
    definition level at which the k-th repeated ancestor holds an element). Returns the number of
    records: entries with repetition level 0 (``n`` without repetition levels)."""
    if defs is not None and len(defs) and (int(defs.max()) > max_def or int(defs.min()) < 0):
        raise CorruptFileError(f"definition level out of range 0..{max_def}")
    if reps is None:
        return n
    if not len(reps):
        return 0
    if int(reps.max()) > max_rep or int(reps.min()) < 0:
        raise CorruptFileError(f"repetition level out of range 0..{max_rep}")
    if reps[0] != 0:
        raise CorruptFileError(f"the first repetition level is {int(reps[0])}, not 0: the chunk starts inside a record")
    if defs is not None:
        for k in range(1, max_rep + 1):
            # an entry repeating at level k, and the entry before it, must reach that list's elements
            low = defs < rep_def[k]
            low[1:] |= low[:-1]
            if bool((low & (reps == k)).any()):
                raise CorruptFileError("a repetition level continues a list that has no element")
    return int(np.count_nonzero(reps == 0))
