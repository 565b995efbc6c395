"""The one door to parquet.thrift: the only package that builds Thrift structs or names the generated
classes (``_thrift/``, ``T``).

* :mod:`~pqbloom.format.codec`: decode one struct (and say where it ended), encode one, pause the
  garbage collector around large decodes.
* :mod:`~pqbloom.format.footer`: ``FileMetaData`` decoded lazily (:class:`RowGroupList`,
  :class:`ColumnChunkList`).
* :mod:`~pqbloom.format.enums`: the Thrift enumerations as IntEnums and the one physical type -> numpy
  dtype table.
* builders and decoders by job, taking and giving plain values and format's own records:
  :mod:`~pqbloom.format.schema` (schema elements), :mod:`~pqbloom.format.statistics` (statistics, column
  orders, column and offset indexes), :mod:`~pqbloom.format.pages` (page headers),
  :mod:`~pqbloom.format.metadata` (column metadata, row groups, the footer), :mod:`~pqbloom.format.crypto`
  (encryption algorithm, column and file crypto metadata), :mod:`~pqbloom.format.bloom` (the Bloom
  filter header).
* :mod:`~pqbloom.format.flatbuf`: a FlatBuffers codec (the footer's ``ARROW:schema``).

Decoded structs go to the file layer only (:mod:`pqbloom.file`); every other package gets records or
bytes (``scripts/check_layers.py`` checks it, see ``docs/architecture.md``). ``T`` stays importable for
tests and tools outside the package.
"""

from .._thrift import ttypes as T
from .bloom import BloomFilterHeaderFields, decode_bloom_filter_header, encode_bloom_filter_header
from .codec import ACCELERATED, count_fields, decode, decode_at, decode_prefix, encode, gc_paused
from .crypto import (
    AlgorithmParams,
    ColumnCrypto,
    FileCryptoFields,
    algorithm_params,
    column_crypto,
    column_crypto_struct,
    decode_file_crypto_metadata,
    encode_file_crypto_metadata,
    encryption_algorithm,
    footer_key_metadata,
)
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
from .metadata import (
    column_chunk,
    column_metadata,
    decode_column_metadata,
    decode_footer,
    decode_footer_prefix,
    file_metadata,
    row_group,
    set_footer_encryption,
    set_key_value,
    sorting_columns,
    stripped_column_metadata,
)
from .pages import (
    decode_page_header,
    decode_page_header_prefix,
    encode_data_page_header,
    encode_data_page_header_v2,
    encode_dictionary_page_header,
)
from .schema import LogicalAnnotation, SchemaElement, schema_elements, schema_structs
from .statistics import (
    ColumnIndexFields,
    StatisticsFields,
    column_order_name,
    decode_column_index,
    decode_offset_index,
    encode_column_index,
    offset_index,
    statistics_fields,
    statistics_struct,
)

__all__ = ["T", "decode", "decode_prefix", "decode_at", "decode_file_metadata", "encode", "RowGroupList",
           "ColumnChunkList", "ACCELERATED", "gc_paused", "count_fields", "PhysicalType", "Encoding", "PageType", "CompressionCodec",
           "ConvertedType", "FieldRepetitionType", "BoundaryOrder", "NUMERIC_DTYPES", "numpy_dtype", "name_of",
           # records
           "SchemaElement", "LogicalAnnotation", "StatisticsFields", "ColumnIndexFields", "AlgorithmParams",
           "ColumnCrypto", "FileCryptoFields", "BloomFilterHeaderFields",
           # records <-> structs, builders, encoders
           "schema_elements", "schema_structs", "statistics_fields", "statistics_struct", "column_order_name",
           "encode_column_index", "offset_index", "column_metadata", "column_chunk", "stripped_column_metadata",
           "sorting_columns", "row_group", "file_metadata", "set_footer_encryption", "set_key_value", "algorithm_params",
           "encryption_algorithm", "column_crypto", "column_crypto_struct", "encode_file_crypto_metadata",
           "footer_key_metadata", "encode_dictionary_page_header", "encode_data_page_header",
           "encode_data_page_header_v2", "encode_bloom_filter_header",
           # decoders handing structs to the file layer
           "decode_page_header", "decode_page_header_prefix", "decode_column_index", "decode_offset_index",
           "decode_footer", "decode_footer_prefix", "decode_column_metadata", "decode_file_crypto_metadata",
           "decode_bloom_filter_header"]
