"""The enumerations of parquet.thrift as :class:`~enum.IntEnum` classes, and the physical types' numpy dtypes.

Code that only needs enum values (an encoding, a physical type, a page type) names them here:
``PhysicalType.INT64``, ``Encoding.RLE_DICTIONARY``. The members have the Thrift values (a test checks
them against the generated bindings), so they compare and hash equal to the plain ints decoded structs
hold and can be stored into structs being built. A file may hold a value that is no member (a newer
spec's, or garbage): compare with members, or name it with :func:`name_of`, rather than calling
``PhysicalType(value)`` on unchecked input.

:data:`NUMERIC_DTYPES` is the one table from physical type to numpy dtype; :func:`numpy_dtype` gives the
in-memory dtype of a physical type's values.
"""

from __future__ import annotations

from collections.abc import Mapping
from enum import IntEnum
from types import MappingProxyType

import numpy as np

__all__ = ["PhysicalType", "Encoding", "PageType", "CompressionCodec", "ConvertedType", "FieldRepetitionType",
           "BoundaryOrder", "NUMERIC_DTYPES", "numpy_dtype", "name_of"]


class PhysicalType(IntEnum):
    """parquet.thrift ``Type``: how a leaf's values are stored."""

    BOOLEAN = 0
    INT32 = 1
    INT64 = 2
    INT96 = 3
    FLOAT = 4
    DOUBLE = 5
    BYTE_ARRAY = 6
    FIXED_LEN_BYTE_ARRAY = 7


class Encoding(IntEnum):
    """parquet.thrift ``Encoding``: how a page's values (or levels) are encoded."""

    PLAIN = 0
    PLAIN_DICTIONARY = 2
    RLE = 3
    BIT_PACKED = 4
    DELTA_BINARY_PACKED = 5
    DELTA_LENGTH_BYTE_ARRAY = 6
    DELTA_BYTE_ARRAY = 7
    RLE_DICTIONARY = 8
    BYTE_STREAM_SPLIT = 9


class PageType(IntEnum):
    """parquet.thrift ``PageType``."""

    DATA_PAGE = 0
    INDEX_PAGE = 1
    DICTIONARY_PAGE = 2
    DATA_PAGE_V2 = 3


class CompressionCodec(IntEnum):
    """parquet.thrift ``CompressionCodec``."""

    UNCOMPRESSED = 0
    SNAPPY = 1
    GZIP = 2
    LZO = 3
    BROTLI = 4
    LZ4 = 5
    ZSTD = 6
    LZ4_RAW = 7


class ConvertedType(IntEnum):
    """parquet.thrift ``ConvertedType``: the legacy annotations (superseded by ``LogicalType``)."""

    UTF8 = 0
    MAP = 1
    MAP_KEY_VALUE = 2
    LIST = 3
    ENUM = 4
    DECIMAL = 5
    DATE = 6
    TIME_MILLIS = 7
    TIME_MICROS = 8
    TIMESTAMP_MILLIS = 9
    TIMESTAMP_MICROS = 10
    UINT_8 = 11
    UINT_16 = 12
    UINT_32 = 13
    UINT_64 = 14
    INT_8 = 15
    INT_16 = 16
    INT_32 = 17
    INT_64 = 18
    JSON = 19
    BSON = 20
    INTERVAL = 21


class FieldRepetitionType(IntEnum):
    """parquet.thrift ``FieldRepetitionType``."""

    REQUIRED = 0
    OPTIONAL = 1
    REPEATED = 2
    VECTOR = 3


class BoundaryOrder(IntEnum):
    """parquet.thrift ``BoundaryOrder``: how a column index's page bounds are ordered."""

    UNORDERED = 0
    ASCENDING = 1
    DESCENDING = 2


def name_of(enum: type[IntEnum], value: int | None) -> str:
    """The member name of ``value`` in ``enum``, or the number itself (a value a newer spec added,
    or garbage from a damaged file) as text: for messages, never raising."""
    member = enum._value2member_map_.get(value) if value is not None else None  # type: ignore[arg-type]
    return member.name if member is not None else str(value)


#: The dtype of the values of each fixed-width numeric physical type, in the little-endian byte order
#: Parquet stores them in (PLAIN, BYTE_STREAM_SPLIT, statistics, Bloom filter hashes). BOOLEAN (bits on
#: disk), INT96 (12 bytes) and the byte arrays have none.
NUMERIC_DTYPES: Mapping[int, np.dtype] = MappingProxyType({
    PhysicalType.INT32: np.dtype("<i4"),
    PhysicalType.INT64: np.dtype("<i8"),
    PhysicalType.FLOAT: np.dtype("<f4"),
    PhysicalType.DOUBLE: np.dtype("<f8"),
})


def numpy_dtype(ptype: int) -> np.dtype | None:
    """The dtype of a physical type's values in memory (native byte order): ``bool`` for BOOLEAN, the
    :data:`NUMERIC_DTYPES` ones for numbers; None for INT96 and FIXED_LEN_BYTE_ARRAY (held as 2-D uint8
    matrices) and BYTE_ARRAY (a :class:`~pqbloom.arrays.BinaryArray`)."""
    if ptype == PhysicalType.BOOLEAN:
        return np.dtype(np.bool_)
    stored = NUMERIC_DTYPES.get(ptype)
    return None if stored is None else stored.newbyteorder("=")
