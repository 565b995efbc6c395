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
from .bitpack import Buffer, as_u8, bit_width_of

__all__ = [
    "encode_rle_bitpacked",
    "decode_rle_bitpacked",
    "decode_hybrid",
    "decode_hybrid_numpy",
    "encode_levels_v1",
    "decode_levels_v1",
    "level_dtype",
    "is_single_value",
    "encode_rle_booleans",
    "decode_rle_booleans",
]

# -- RLE / bit-packing hybrid -------------------------------------------------

def encode_rle_bitpacked(values: np.ndarray, bit_width: int, min_rle_run: int = 8) -> bytes:
    """Encode with the hybrid (no length prefix).

    Runs of >= ``min_rle_run`` (at least 8) equal values become RLE runs (after letting the
    preceding bit-packed stretch grow to a whole number of groups); everything else is
    bit-packed in runs of at most 63 groups, the last one zero-padded. One compiled pass
    (:func:`pqbloom.kernels.hybrid.encode_hybrid`), or its numpy reference.
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
    return hybrid_kernels.encode_hybrid(v, bit_width, min_rle_run)


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


#: the most RLE run headers :func:`is_single_value` reads before it leaves a block to the decoder
SINGLE_VALUE_RUNS = 8


def is_single_value(buf: Buffer, start: int, end: int, count: int, value: int, bit_width: int) -> bool:
    """Whether the hybrid in ``buf[start:end]`` begins with RLE runs of ``value`` only that hold exactly
    ``count`` values (at most :data:`SINGLE_VALUE_RUNS` of them): a page's definition levels when every
    value is present, recognised from the run headers alone, without decoding them into an array.

    False for anything else (a bit-packed run, another value, a run of 0, a run longer than the
    values left, a header cut short by ``end``): the caller then decodes the block as usual, and that
    decoder judges it. ``buf`` indexes to ints (bytes, bytearray, a memoryview of bytes).
    """
    width = (bit_width + 7) // 8
    pos, got = start, 0
    for _ in range(SINGLE_VALUE_RUNS):
        header = shift = 0
        while True:  # the varint of one run header (a few bytes)
            if pos >= end or shift > 28:
                return False
            b = buf[pos]
            pos += 1
            header |= (b & 0x7F) << shift
            if b < 0x80:
                break
            shift += 7
        run = header >> 1
        if header & 1 or run == 0 or run > count - got or pos + width > end:
            return False
        got_value = buf[pos] if width == 1 else int.from_bytes(bytes(buf[pos:pos + width]), "little")
        if got_value != value:
            return False
        pos += width
        got += run
        if got == count:
            return True
    return False


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
