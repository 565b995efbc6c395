"""One door per direction to the value encodings: a page's values encoded or decoded by their ``Encoding``.

The column writer encodes a data page's dense values with :func:`encode_values`; the page codec decodes
them with :func:`decode_values`. Which encoding applies to which physical type is decided here once
(:func:`encoding_applies`); the encodings themselves are the modules of this package. Dictionary-encoded
pages decode to their indices: resolving them against the dictionary page is the caller's (it may keep
them, to build a dictionary column).
"""

from __future__ import annotations

from typing import Any

from ..arrays import BinaryArray
from ..errors import UnsupportedError
from ..format.enums import Encoding, PhysicalType, name_of, numpy_dtype
from .bitpack import Buffer
from .byte_stream_split import decode_byte_stream_split, encode_byte_stream_split
from .delta import (
    decode_delta_binary_packed,
    decode_delta_byte_array,
    decode_delta_length_byte_array,
    encode_delta_binary_packed,
    encode_delta_byte_array,
    encode_delta_length_byte_array,
)
from .dictionary import decode_dictionary_indices
from .plain import decode_plain, encode_plain
from .rle import decode_rle_booleans, encode_rle_booleans

__all__ = ["encode_values", "decode_values", "encoding_applies", "is_dictionary_encoding", "DICTIONARY_ENCODINGS"]

#: the encodings of dictionary indices (PLAIN_DICTIONARY is the pre-2.0 name of RLE_DICTIONARY's data pages)
DICTIONARY_ENCODINGS = (Encoding.PLAIN_DICTIONARY, Encoding.RLE_DICTIONARY)

#: the physical types each value encoding applies to (None: all of them)
_APPLIES: dict[int, tuple[int, ...] | None] = {
    Encoding.PLAIN: None,
    Encoding.RLE: (PhysicalType.BOOLEAN,),
    Encoding.DELTA_BINARY_PACKED: (PhysicalType.INT32, PhysicalType.INT64),
    Encoding.DELTA_LENGTH_BYTE_ARRAY: (PhysicalType.BYTE_ARRAY,),
    Encoding.DELTA_BYTE_ARRAY: (PhysicalType.BYTE_ARRAY, PhysicalType.FIXED_LEN_BYTE_ARRAY),
    Encoding.BYTE_STREAM_SPLIT: (PhysicalType.FLOAT, PhysicalType.DOUBLE, PhysicalType.INT32, PhysicalType.INT64,
                                 PhysicalType.FIXED_LEN_BYTE_ARRAY),
}


_PLAIN = int(Encoding.PLAIN)


def is_dictionary_encoding(encoding: int) -> bool:
    """Whether a data page's values are dictionary indices (PLAIN_DICTIONARY or RLE_DICTIONARY)."""
    return encoding in DICTIONARY_ENCODINGS


def encoding_applies(encoding: int, physical_type: int) -> bool:
    """Whether ``encoding`` can encode the values of ``physical_type`` (dictionary encodings: any type)."""
    if is_dictionary_encoding(encoding):
        return True
    if encoding not in _APPLIES:
        return False
    types = _APPLIES[encoding]
    return types is None or physical_type in types


def _unsupported(encoding: int, type_name: str) -> UnsupportedError:
    return UnsupportedError(f"encoding {name_of(Encoding, encoding)} is not supported for {type_name}")


def encode_values(values: Any, encoding: int, physical_type: int, type_length: int | None = None) -> bytes:
    """The dense (non-null) ``values`` of a data page encoded with ``encoding``.

    ``values`` has the in-memory form of ``physical_type`` (numpy, a 2-D uint8 matrix for INT96 and
    FIXED_LEN_BYTE_ARRAY, a :class:`~pqbloom.arrays.BinaryArray` for BYTE_ARRAY). A dictionary encoding, or
    one that does not apply to the type, raises :class:`~pqbloom.errors.UnsupportedError` (dictionary
    indices are encoded by :func:`~pqbloom.encodings.encode_dictionary_indices`).
    """
    if is_dictionary_encoding(encoding) or not encoding_applies(encoding, physical_type):
        raise _unsupported(encoding, name_of(PhysicalType, physical_type))
    if encoding == Encoding.PLAIN:
        return encode_plain(values, physical_type, type_length)
    if encoding == Encoding.DELTA_BINARY_PACKED:
        return encode_delta_binary_packed(values)
    if encoding == Encoding.DELTA_LENGTH_BYTE_ARRAY:
        return encode_delta_length_byte_array(values)
    if encoding == Encoding.DELTA_BYTE_ARRAY:
        if physical_type == PhysicalType.FIXED_LEN_BYTE_ARRAY:
            values = BinaryArray.from_fixed(values)
        return encode_delta_byte_array(values)
    if encoding == Encoding.BYTE_STREAM_SPLIT:
        return encode_byte_stream_split(values, physical_type, type_length)
    return encode_rle_booleans(values)  # Encoding.RLE, the one left: BOOLEAN only


def decode_values(buf: Buffer, encoding: int, physical_type: int, count: int, type_length: int | None = None,
                  *, type_name: str | None = None) -> Any:
    """The ``count`` dense values of a data page encoded with ``encoding``, in the in-memory form of
    ``physical_type``; for a dictionary encoding, the ``count`` dictionary indices.

    Malformed bytes raise :class:`~pqbloom.errors.CorruptFileError`; an encoding that pqbloom does not
    read for the type raises :class:`~pqbloom.errors.UnsupportedError` naming ``type_name`` (the column's
    type, default the physical type's name).
    """
    if encoding == _PLAIN:  # first: the common case, compared with an int (not an IntEnum member)
        return decode_plain(buf, physical_type, count, type_length)[0]
    if is_dictionary_encoding(encoding):
        return decode_dictionary_indices(buf, count)
    if encoding == Encoding.RLE and physical_type == PhysicalType.BOOLEAN:
        return decode_rle_booleans(buf, count)[0]
    if encoding == Encoding.DELTA_BINARY_PACKED and physical_type in (PhysicalType.INT32, PhysicalType.INT64):
        ints = numpy_dtype(physical_type)
        assert ints is not None
        return decode_delta_binary_packed(buf, count, ints)[0]
    if encoding == Encoding.DELTA_LENGTH_BYTE_ARRAY and physical_type == PhysicalType.BYTE_ARRAY:
        return decode_delta_length_byte_array(buf, count)[0]
    if encoding == Encoding.DELTA_BYTE_ARRAY and physical_type in (PhysicalType.BYTE_ARRAY,
                                                                   PhysicalType.FIXED_LEN_BYTE_ARRAY):
        fixed = type_length if physical_type == PhysicalType.FIXED_LEN_BYTE_ARRAY else None
        return decode_delta_byte_array(buf, count, type_length=fixed)[0]
    if encoding == Encoding.BYTE_STREAM_SPLIT:
        return decode_byte_stream_split(buf, physical_type, count, type_length)[0]
    raise _unsupported(encoding, type_name or name_of(PhysicalType, physical_type))
