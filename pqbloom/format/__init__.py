"""The one door to parquet.thrift: the generated structs (``T``), the compact-protocol codec, the lazy
footer and the enumerations.

* :mod:`~pqbloom.format.codec`: decode one struct (and say where it ended), encode one, pause the
  garbage collector around large decodes.
* :mod:`~pqbloom.format.footer`: ``FileMetaData`` decoded lazily (:class:`RowGroupList`,
  :class:`ColumnChunkList`).
* :mod:`~pqbloom.format.enums`: the Thrift enumerations as IntEnums and the one physical type -> numpy
  dtype table.
* :mod:`~pqbloom.format.flatbuf`: a FlatBuffers codec (the footer's ``ARROW:schema``).

Builders that construct Thrift structs (footer, page headers, column index, Bloom filter header, schema
elements) import ``T`` from here; code that only needs enum values uses :mod:`~pqbloom.format.enums`.
"""

from .._thrift import ttypes as T
from .codec import ACCELERATED, decode, decode_at, decode_prefix, encode, gc_paused
from .enums import (
    NUMERIC_DTYPES,
    BoundaryOrder,
    CompressionCodec,
    ConvertedType,
    Encoding,
    FieldRepetitionType,
    PageType,
    PhysicalType,
    name_of,
    numpy_dtype,
)
from .footer import ColumnChunkList, RowGroupList, decode_file_metadata

__all__ = ["T", "decode", "decode_prefix", "decode_at", "decode_file_metadata", "encode", "RowGroupList",
           "ColumnChunkList", "ACCELERATED", "gc_paused", "PhysicalType", "Encoding", "PageType", "CompressionCodec",
           "ConvertedType", "FieldRepetitionType", "BoundaryOrder", "NUMERIC_DTYPES", "numpy_dtype", "name_of"]
