"""PLAIN encoding of every physical type.

* BOOLEAN: bit-packed, LSB first.
* INT32 / INT64 / FLOAT / DOUBLE: little-endian fixed width.
* INT96 / FIXED_LEN_BYTE_ARRAY: the raw bytes of each value.
* BYTE_ARRAY: 4-byte little-endian length, then the bytes, per value.
"""

from __future__ import annotations

import numpy as np

from ..arrays import BinaryArray
from ..errors import CorruptFileError
from ..format.enums import NUMERIC_DTYPES, PhysicalType, name_of
from ..kernels import binary as binary_kernels
from ..limits import BUDGET, charge
from .bitpack import Buffer, as_u8

__all__ = ["encode_plain", "decode_plain", "value_width", "encode_plain_byte_array", "decode_plain_byte_array"]

_MAX_COUNT = (1 << 31) - 1
# plain ints: decode_plain runs per page, and an IntEnum member's lookup costs several times an int's
_BOOLEAN, _BYTE_ARRAY = int(PhysicalType.BOOLEAN), int(PhysicalType.BYTE_ARRAY)


def value_width(ptype: int, type_length: int | None = None) -> int | None:
    """Bytes per PLAIN value of a fixed-width type (None for BOOLEAN and BYTE_ARRAY)."""
    if ptype in NUMERIC_DTYPES:
        return NUMERIC_DTYPES[ptype].itemsize
    if ptype == PhysicalType.INT96:
        return 12
    if ptype == PhysicalType.FIXED_LEN_BYTE_ARRAY:
        if type_length is None or type_length < 0:
            raise ValueError("FIXED_LEN_BYTE_ARRAY needs a non-negative type_length")
        return int(type_length)
    return None


def _matrix(values: np.ndarray, width: int, what: str) -> np.ndarray:
    m = np.asarray(values, dtype=np.uint8)
    if m.ndim == 1 and len(m) == 0:
        m = m.reshape(0, width)
    if m.ndim != 2 or m.shape[1] != width:
        raise ValueError(f"{what} values must be a 2-D uint8 array with {width} columns, got shape {m.shape}")
    return np.ascontiguousarray(m)


def encode_plain(values, ptype: int, type_length: int | None = None) -> bytes:  # type: ignore[no-untyped-def]
    """PLAIN-encode dense (non-null) values of physical type ``ptype``."""
    if ptype == PhysicalType.BOOLEAN:
        return np.packbits(np.asarray(values, dtype=bool), bitorder="little").tobytes()
    if ptype in NUMERIC_DTYPES:
        return np.asarray(values, dtype=NUMERIC_DTYPES[ptype]).tobytes()
    if ptype == PhysicalType.INT96:
        return _matrix(values, 12, "INT96").tobytes()
    if ptype == PhysicalType.FIXED_LEN_BYTE_ARRAY:
        return _matrix(values, value_width(ptype, type_length), "FIXED_LEN_BYTE_ARRAY").tobytes()  # type: ignore[arg-type]
    if ptype == PhysicalType.BYTE_ARRAY:
        return encode_plain_byte_array(values)
    raise ValueError(f"unknown physical type {ptype}")


def encode_plain_byte_array(values: BinaryArray) -> bytes:
    """Length-prefixed values in one pass (:func:`pqbloom.kernels.binary.encode_plain_byte_array`)."""
    return binary_kernels.encode_plain_byte_array(values)


def decode_plain(buf: Buffer, ptype: int, count: int,
                 type_length: int | None = None, *, copy: bool = True):  # type: ignore[no-untyped-def]
    """Decode ``count`` PLAIN values; return (values, bytes consumed).

    The values never share memory with ``buf`` (they are writable copies), unless ``copy=False``:
    fixed-width values may then be a view of ``buf`` (for a caller that copies them out at once).
    """
    count = int(count)
    if count < 0 or count > _MAX_COUNT:
        raise CorruptFileError(f"PLAIN: invalid value count {count}")
    u8 = as_u8(buf)
    if ptype == _BOOLEAN:
        need = (count + 7) // 8
        _need(u8, need, count, "BOOLEAN")
        charge(count, f"{count:,} PLAIN booleans")  # a byte per bit
        return np.unpackbits(u8[:need], bitorder="little", count=count).view(bool), need
    if ptype == _BYTE_ARRAY:
        return decode_plain_byte_array(u8, count)
    stored = NUMERIC_DTYPES.get(ptype)
    width = stored.itemsize if stored is not None else value_width(ptype, type_length)
    if width is None:
        raise ValueError(f"unknown physical type {ptype}")
    need = count * width
    if len(u8) < need:  # the type's name only then
        _need(u8, need, count, name_of(PhysicalType, ptype))
    if BUDGET.get() is not None:  # the message is formatted only then: most reads have no budget
        charge(need, f"{count:,} PLAIN values")
    raw = u8[:need].copy() if copy else u8[:need]
    if stored is not None:
        values = raw.view(stored)
        return (values if stored.isnative else values.astype(stored.newbyteorder("="))), need
    return raw.reshape(count, width), need


def _need(u8: np.ndarray, need: int, count: int, what: str) -> None:
    if len(u8) < need:
        raise CorruptFileError(f"PLAIN {what}: {count} values need {need} bytes, only {len(u8)} available")


def decode_plain_byte_array(buf: Buffer, count: int) -> tuple[BinaryArray, int]:
    """Decode ``count`` length-prefixed values; return (BinaryArray, bytes consumed).

    One pass over the length prefixes (:func:`pqbloom.kernels.binary.decode_plain_byte_array`), after
    charging the result to the read's memory budget.
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
    # offsets and the value bytes, and the numpy reference's prefix positions and mask
    if BUDGET.get() is not None:
        charge(8 * (count + 1) + size + 8 * count + size, f"{count:,} PLAIN BYTE_ARRAY values")
    return binary_kernels.decode_plain_byte_array(u8, count)
