"""The numpy DELTA_BINARY_PACKED decoder: the reference of the compiled kernel
(:func:`pqbloom.kernels.delta.decode_delta_binary_packed`) and its fallback when the extension is not
built or ``PQBLOOM_PURE_PYTHON=1``.

Layout (see :mod:`pqbloom.encodings.delta`)::

    header := varint(block_size) varint(miniblocks_per_block) varint(total_count) zigzag_varint(first_value)
    block  := zigzag_varint(min_delta) miniblock_bit_widths[miniblocks_per_block] miniblock_bodies

What it accepts, which the kernel matches exactly: a block size that is a non-zero multiple of 128
up to 65,536; a miniblock count dividing it into miniblocks of a multiple of 32 values; a total
count up to 2**31-1; bit widths up to 64 in the miniblocks holding values (the unused miniblocks of
the last block may carry any width byte and no data); a last miniblock lacking only its padding.
Only the walk over block headers is a Python loop; miniblocks of equal width are unpacked together.
"""

from __future__ import annotations

import numpy as np

from ...arrays import Buffer, as_u8
from ...errors import CorruptFileError
from ...limits import charge
from .bits import MAX_COUNT, read_uleb128, unpack_groups

__all__ = ["decode_delta_binary_packed"]

_MAX_BLOCK_SIZE = 1 << 16  # no known writer goes beyond 2048; bounds amplification
_U64 = (1 << 64) - 1


def _unzigzag_u64(z: int) -> int:
    """Zigzag-decode to the uint64 bit pattern of the signed value."""
    return ((z >> 1) ^ -(z & 1)) & _U64


def decode_delta_binary_packed(buf: Buffer, count: int | None = None,
                               dtype: type | np.dtype = np.int64) -> tuple[np.ndarray, int]:
    """Decode; return (values, bytes consumed by the whole encoded stream).

    ``count`` defaults to the header's total count; when given it must not
    exceed it and only the first ``count`` values are returned. ``dtype`` is
    int32 or int64 (INT32 values wrap modulo 2**32 as the writers intend).
    """
    dt = np.dtype(dtype)
    if dt not in (np.dtype(np.int32), np.dtype(np.int64)):
        raise ValueError(f"dtype must be int32 or int64, got {dt}")
    u8 = as_u8(buf)
    b = buf if isinstance(buf, bytes) else u8.data
    end = len(b)
    what = "DELTA_BINARY_PACKED header"
    block_size, pos = read_uleb128(b, 0, end, what)
    n_mb, pos = read_uleb128(b, pos, end, what)
    total, pos = read_uleb128(b, pos, end, what)
    zfirst, pos = read_uleb128(b, pos, end, what)
    if block_size == 0 or block_size % 128 or block_size > _MAX_BLOCK_SIZE:
        raise CorruptFileError(f"DELTA_BINARY_PACKED: invalid block size {block_size}")
    if n_mb == 0 or block_size % n_mb or (block_size // n_mb) % 32:
        raise CorruptFileError(f"DELTA_BINARY_PACKED: invalid miniblock count {n_mb} for block size {block_size}")
    if total > MAX_COUNT:
        raise CorruptFileError(f"DELTA_BINARY_PACKED: invalid total count {total}")
    if count is not None:
        count = int(count)
        if count < 0 or count > total:
            raise CorruptFileError(f"DELTA_BINARY_PACKED: {count} values expected, header holds {total}")
    else:
        count = total
    vpm = block_size // n_mb
    n_deltas = max(total - 1, 0)
    n_blocks = (n_deltas + block_size - 1) // block_size
    if n_blocks * (1 + n_mb) > end - pos:
        raise CorruptFileError(f"DELTA_BINARY_PACKED: {total} values need {n_blocks} blocks, "
                               f"which cannot fit in {end - pos} bytes")
    need = max(count - 1, 0)  # deltas to materialize; the rest is only walked for its size
    mins: list[int] = []
    mb_w: list[int] = []
    mb_pos: list[int] = []
    left = n_deltas
    walked = 0  # miniblocks walked
    last_w = last_pos = 0
    for _ in range(n_blocks):
        zmin, pos = read_uleb128(b, pos, end, "DELTA_BINARY_PACKED block header")
        if pos + n_mb > end:
            raise CorruptFileError("DELTA_BINARY_PACKED: miniblock bit widths truncated")
        widths = bytes(b[pos:pos + n_mb])
        pos += n_mb
        used = min(left, block_size)
        left -= used
        keep = walked * vpm < need
        if keep:
            mins.append(_unzigzag_u64(zmin))
        for w in widths[: (used + vpm - 1) // vpm]:
            if w > 64:
                raise CorruptFileError(f"DELTA_BINARY_PACKED: miniblock bit width {w} > 64")
            if walked * vpm < need:
                mb_w.append(w)
                mb_pos.append(pos)
            last_w, last_pos = w, pos
            walked += 1
            pos += vpm * w // 8
    if pos > end:  # tolerate a last miniblock lacking only its padding
        last_vals = n_deltas - (walked - 1) * vpm
        if last_pos + (last_vals * last_w + 7) // 8 > end:
            raise CorruptFileError("DELTA_BINARY_PACKED: miniblock data truncated")
        pos = end
    first = _unzigzag_u64(zfirst)
    # blocks of bit width 0 hold 65,536 values in a few bytes: count the result, the unpacked deltas and
    # their block minimums before making them
    charge(24 * count, f"{count:,} DELTA_BINARY_PACKED values")
    out = np.empty(max(count, 1), np.uint64)
    out[0] = first
    if need:
        n_m = len(mb_w)
        adj = np.zeros((n_m, vpm), np.uint64)
        wa = np.array(mb_w, np.int64)
        pa = np.array(mb_pos, np.int64)
        maxb = vpm * int(wa.max()) // 8
        src = np.concatenate([u8[:end], np.zeros(maxb, np.uint8)]) if pos >= end else u8
        for w in np.unique(wa).tolist():
            if w == 0:
                continue
            sel = np.flatnonzero(wa == w)
            nbytes = vpm * w // 8
            packed = src[(pa[sel][:, None] + np.arange(nbytes)[None, :]).reshape(-1)]
            adj[sel] = unpack_groups(packed, w, len(sel) * vpm).reshape(len(sel), vpm)
        deltas = adj.reshape(-1)[:need]
        deltas += np.repeat(np.array(mins, np.uint64), block_size)[:need]
        np.cumsum(deltas, out=out[1:count])
        out[1:count] += np.uint64(first)
    out = out[:count]
    if dt == np.dtype(np.int32):
        return out.astype(np.uint32).view(np.int32), pos
    return out.view(np.int64), pos
