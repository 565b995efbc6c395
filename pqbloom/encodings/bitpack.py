"""Bit packing: LSB-first packing of small unsigned ints (the hybrid's bit-packed runs, DELTA_BINARY_PACKED
miniblocks), their unpacking as a public function, the deprecated BIT_PACKED levels (MSB first), varints,
and the buffer helpers every decoder shares. The bit-level decoding itself (varints read, groups unpacked)
is :mod:`pqbloom.kernels.reference.bits`, which the kernels' numpy reference shares.

All packing and unpacking is vectorized with numpy; the only Python loops run
once per one of the eight value slots of a group.
"""

from __future__ import annotations

import numpy as np

# Buffer and as_u8 live in arrays (below the kernels layer, which the encodings use); re-exported here
from ..arrays import Buffer, as_u8
from ..errors import CorruptFileError
from ..kernels.reference.bits import checked_count, unpack_groups
from ..kernels.reference.bits import pack_groups as bit_pack_groups
from ..limits import charge

__all__ = [
    "Buffer",
    "as_u8",
    "uleb128",
    "bit_width_of",
    "bit_pack",
    "bit_pack_groups",
    "bit_unpack",
    "decode_bit_packed_levels",
]


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
    return bit_pack_groups(values, bit_width)[: (len(values) * bit_width + 7) // 8].tobytes()


def bit_unpack(buf: Buffer, bit_width: int, count: int) -> np.ndarray:
    """Unpack ``count`` LSB-first values of ``bit_width`` bits (0..64).

    Returns uint32 for widths up to 32, uint64 above. Needs ``ceil(count*bw/8)`` bytes.
    """
    if not 0 <= bit_width <= 64:
        raise CorruptFileError(f"bit width {bit_width} out of range 0..64")
    count = checked_count(count, "bit-packed values")
    dt = _uint_dtype(bit_width)
    if bit_width == 0:
        return np.zeros(count, dt)
    u8 = as_u8(buf)
    need = (count * bit_width + 7) // 8
    if len(u8) < need:
        raise CorruptFileError(f"bit-packed data truncated: {count} values of {bit_width} bits need {need} bytes, "
                               f"have {len(u8)}")
    return unpack_groups(u8[:need], bit_width, count).astype(dt, copy=False)


def decode_bit_packed_levels(buf: Buffer, bit_width: int, count: int) -> np.ndarray:
    """Decode the deprecated BIT_PACKED level encoding (MSB-first, no header) into int32 levels.

    The levels use ``ceil(count * bit_width / 8)`` bytes (no length prefix).
    """
    if not 0 <= bit_width <= 32:
        raise CorruptFileError(f"bit width {bit_width} out of range 0..32")
    count = checked_count(count, "BIT_PACKED levels")
    if bit_width == 0:
        charge(4 * count, f"{count:,} BIT_PACKED levels")
        return np.zeros(count, np.int32)
    u8 = as_u8(buf)
    need = (count * bit_width + 7) // 8
    if len(u8) < need:
        raise CorruptFileError(f"BIT_PACKED levels truncated: need {need} bytes, have {len(u8)}")
    charge(count * (bit_width + 8 + 8 + 4), f"{count:,} BIT_PACKED levels")  # bits, weights product, result
    bits = np.unpackbits(u8[:need], bitorder="big", count=count * bit_width).reshape(count, bit_width)
    weights = np.int64(1) << np.arange(bit_width - 1, -1, -1, dtype=np.int64)
    vals = bits.astype(np.int64) @ weights
    return vals.astype(np.uint32).view(np.int32)
