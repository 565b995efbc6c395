"""A file's metadata as pqbloom objects: :class:`FileMetadata`, :class:`RowGroupMetadata`,
:class:`ColumnChunkMetadata` and :class:`ColumnStatistics`.

The names follow pyarrow's ``FileMetaData`` / ``RowGroupMetaData`` / ``ColumnChunkMetaData`` where
pyarrow has one, so code moves between the two libraries easily. The objects are views over the
decoded footer: nothing is decoded twice, and a row group of a large lazy footer is decoded only when
asked for. The raw Thrift structs stay inside :mod:`pqbloom.format` and the file layer.

Statistics: :mod:`pqbloom.file.statistics_view`; ``to_dict()``: :mod:`pqbloom.file.metadata_dict`; the
Parquet schema (``FileMetadata.schema``): :mod:`pqbloom.file.parquet_schema`.
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Iterator
from typing import Any

from ..errors import SchemaError, UnsupportedError
from ..format import encode
from ..format.enums import CompressionCodec, Encoding, PhysicalType, name_of
from ..io.sources import open_sink
from ..schema import ColumnDescriptor, Schema
from .metadata_dict import chunk_dict, file_dict, row_group_dict
from .object_text import object_text
from .sorting import SortingColumn, sorting_columns_from_thrift
from .statistics_view import ColumnStatistics, SizeStatistics, chunk_statistics

__all__ = ["FileMetadata", "RowGroupMetadata", "ColumnChunkMetadata", "ColumnStatistics", "SizeStatistics",
           "SortingColumn"]

#: (row group, leaf) -> the chunk's ColumnMetaData, decrypted when it is encrypted
ChunkMetadataSource = Callable[[int, ColumnDescriptor], Any]
#: the members pyarrow's text of a ``ColumnChunkMetaData`` shows, in its order
CHUNK_TEXT = ("file_offset", "file_path", "physical_type", "num_values", "path_in_schema", "is_stats_set",
              "statistics", "geo_statistics", "compression", "encodings", "has_dictionary_page",
              "dictionary_page_offset", "data_page_offset", "total_compressed_size", "total_uncompressed_size",
              "bloom_filter_offset", "bloom_filter_length")


class ColumnChunkMetadata:
    """One column chunk of one row group: where its pages, indexes and Bloom filter are, how it is
    encoded and compressed, and its statistics.

    For an encrypted column the metadata is decrypted on first access; without the column's key that
    access raises :class:`~pqbloom.errors.KeyNotFoundError` (``is_encrypted`` and the byte offsets
    kept in plaintext stay readable).
    """

    def __init__(self, chunk: Any, row_group: int, desc: ColumnDescriptor, source: ChunkMetadataSource,
                 created_by: str | None, column_order: Any) -> None:
        self._chunk = chunk
        self._row_group = row_group
        self._desc = desc
        self._source = source
        self._created_by = created_by
        self._column_order = column_order
        self._meta: Any = None

    def _metadata(self) -> Any:
        if self._meta is None:
            self._meta = self._source(self._row_group, self._desc)
        return self._meta

    def __repr__(self) -> str:
        """pyarrow's text of a ``ColumnChunkMetaData`` (:func:`object_text`); an encrypted chunk whose
        key is not given shows its path only."""
        try:
            members = [(k, getattr(self, k)) for k in CHUNK_TEXT]
        except Exception:  # noqa: BLE001 - an encrypted chunk without its key: a repr never raises
            members = [("path_in_schema", self.path_in_schema), ("is_encrypted", True)]
        return object_text(self, "ColumnChunkMetaData", members)

    @property
    def path_in_schema(self) -> str:
        """The leaf's dotted path."""
        return self._desc.dotted_path

    @property
    def column_index(self) -> int:
        """The leaf's ordinal in the file schema."""
        return self._desc.index

    @property
    def file_path(self) -> str:
        """``ColumnChunk.file_path``: the file holding the chunk when not this one ("" here, as pyarrow)."""
        return self._chunk.file_path or ""

    @property
    def is_stats_set(self) -> bool:
        """Whether the footer holds statistics for the chunk (see :attr:`statistics`; pyarrow also
        says False for some writers' nested columns, whose statistics pqbloom still reads)."""
        return self._metadata().statistics is not None

    @property
    def is_encrypted(self) -> bool:
        """Whether the chunk is encrypted (with the footer key or a column key)."""
        return self._chunk.crypto_metadata is not None

    @property
    def file_offset(self) -> int | None:
        """``ColumnChunk.file_offset`` as the writer set it (deprecated by the format; often 0)."""
        return self._chunk.file_offset

    @property
    def physical_type(self) -> str:
        """The physical type's name (``"INT64"``, ``"BYTE_ARRAY"``...)."""
        return name_of(PhysicalType, self._desc.physical_type)

    @property
    def compression(self) -> str:
        """The codec's name (``"UNCOMPRESSED"``, ``"SNAPPY"``, ``"ZSTD"``...)."""
        return name_of(CompressionCodec, self._metadata().codec)

    @property
    def encodings(self) -> tuple[str, ...]:
        """The encodings the chunk's pages use, by name."""
        return tuple(name_of(Encoding, e) for e in self._metadata().encodings or ())

    @property
    def num_values(self) -> int:
        """Values in the chunk, nulls included (for a repeated leaf: level entries)."""
        return int(self._metadata().num_values)

    @property
    def total_compressed_size(self) -> int:
        """Bytes of the chunk's pages on disk, headers included."""
        return int(self._metadata().total_compressed_size)

    @property
    def total_uncompressed_size(self) -> int:
        """Bytes of the chunk's pages after decompression, headers included."""
        return int(self._metadata().total_uncompressed_size)

    @property
    def data_page_offset(self) -> int:
        """Offset of the first data page."""
        return int(self._metadata().data_page_offset)

    @property
    def dictionary_page_offset(self) -> int | None:
        """Offset of the dictionary page, or None."""
        return self._metadata().dictionary_page_offset

    @property
    def has_dictionary_page(self) -> bool:
        """Whether the chunk starts with a dictionary page."""
        return self.dictionary_page_offset is not None

    @property
    def bloom_filter_offset(self) -> int | None:
        """Offset of the chunk's Bloom filter header, or None."""
        return self._metadata().bloom_filter_offset

    @property
    def bloom_filter_length(self) -> int | None:
        """Length of the Bloom filter (header and bitset) when the writer recorded it."""
        return self._metadata().bloom_filter_length

    @property
    def column_index_offset(self) -> int | None:
        """Offset of the chunk's column index (page min/max), or None."""
        return self._chunk.column_index_offset

    @property
    def column_index_length(self) -> int | None:
        """Length of the column index, or None."""
        return self._chunk.column_index_length

    @property
    def has_column_index(self) -> bool:
        """Whether the chunk has a column index."""
        return self.column_index_offset is not None

    @property
    def has_offset_index(self) -> bool:
        """Whether the chunk has an offset index."""
        return self.offset_index_offset is not None

    @property
    def offset_index_offset(self) -> int | None:
        """Offset of the chunk's offset index (page locations), or None."""
        return self._chunk.offset_index_offset

    @property
    def offset_index_length(self) -> int | None:
        """Length of the offset index, or None."""
        return self._chunk.offset_index_length

    @property
    def size_statistics(self) -> SizeStatistics | None:
        """The chunk's size statistics, or None when the writer stored none."""
        ss = self._metadata().size_statistics
        if ss is None:
            return None
        return SizeStatistics(ss.unencoded_byte_array_data_bytes, ss.repetition_level_histogram or None,
                              ss.definition_level_histogram or None)

    @property
    def has_stored_bounds(self) -> bool:
        """Whether the footer's statistics of the chunk hold bounds (``min_value`` / ``max_value`` or the
        deprecated ``min`` / ``max``), trusted or not: :attr:`statistics` gives only those a reader may
        rely on."""
        raw = self._metadata().statistics
        return raw is not None and any(b is not None for b in (raw.min_value, raw.max_value, raw.min, raw.max))

    @property
    def statistics(self) -> ColumnStatistics | None:
        """The chunk's statistics, or None when the writer stored none."""
        raw = self._metadata().statistics
        if raw is None:
            return None
        return chunk_statistics(raw, self._desc, self.num_values, self._column_order, self._created_by)

    @property
    def has_index_page(self) -> bool:
        """Whether the chunk has an index page (no writer writes them; always False here)."""
        return self._metadata().index_page_offset is not None

    @property
    def index_page_offset(self) -> int | None:
        """Offset of the chunk's index page (no writer writes them)."""
        return self._metadata().index_page_offset

    @property
    def is_geo_stats_set(self) -> bool:
        """Whether the chunk has geospatial statistics pqbloom reads (never: pqbloom reads none)."""
        return False

    @property
    def geo_statistics(self) -> None:
        """Geospatial statistics (pqbloom reads none)."""
        return None

    def to_dict(self) -> dict[str, Any]:
        """The chunk's metadata as pyarrow's ``ColumnChunkMetaData.to_dict()``."""
        return chunk_dict(self)

    def equals(self, other: ColumnChunkMetadata) -> bool:
        """Whether ``other`` describes the same chunk (as :meth:`to_dict` gives it)."""
        return isinstance(other, ColumnChunkMetadata) and self.to_dict() == other.to_dict()

    def __eq__(self, other: object) -> bool:
        return isinstance(other, ColumnChunkMetadata) and self.equals(other)

    __hash__ = None  # type: ignore[assignment]


class RowGroupMetadata:
    """One row group: its row count, size and column chunks."""

    def __init__(self, row_group: Any, index: int, leaves: list[ColumnDescriptor], source: ChunkMetadataSource,
                 created_by: str | None, column_orders: list[Any] | None) -> None:
        self._rg = row_group
        self._index = index
        self._leaves = leaves
        self._source = source
        self._created_by = created_by
        self._column_orders = column_orders

    def __repr__(self) -> str:
        """pyarrow's text of a ``RowGroupMetaData`` (:func:`object_text`)."""
        return object_text(self, "RowGroupMetaData", [(k, getattr(self, k)) for k in (
            "num_columns", "num_rows", "total_byte_size", "sorting_columns")])

    @property
    def num_rows(self) -> int:
        """Rows in the row group."""
        return int(self._rg.num_rows)

    @property
    def num_columns(self) -> int:
        """Column chunks in the row group (one per leaf column)."""
        return len(self._rg.columns)

    @property
    def total_byte_size(self) -> int:
        """``RowGroup.total_byte_size``: the uncompressed size of the row group's data."""
        return int(self._rg.total_byte_size)

    @property
    def total_compressed_size(self) -> int | None:
        """The row group's size on disk, when the writer recorded it."""
        return self._rg.total_compressed_size

    @property
    def ordinal(self) -> int:
        """The row group's position in the file."""
        return self._index

    @property
    def sorting_columns(self) -> tuple[SortingColumn, ...]:
        """The row order the writer declared (``RowGroup.sorting_columns``; empty when none), as pyarrow
        gives it: :class:`~pqbloom.file.sorting.SortingColumn` ``(column_index, descending, nulls_first)``."""
        return sorting_columns_from_thrift(self._rg.sorting_columns)

    def column(self, i: int) -> ColumnChunkMetadata:
        """The ``i``-th column chunk (leaf order of the file schema)."""
        if not 0 <= i < len(self._leaves) or i >= len(self._rg.columns):
            raise IndexError(f"column {i} out of range: the row group has {self.num_columns} columns")
        orders = self._column_orders
        order = orders[i] if orders is not None and i < len(orders) else None
        return ColumnChunkMetadata(self._rg.columns[i], self._index, self._leaves[i], self._source,
                                   self._created_by, order)

    def columns(self) -> Iterator[ColumnChunkMetadata]:
        """The column chunks, in leaf order."""
        return (self.column(i) for i in range(min(self.num_columns, len(self._leaves))))

    def to_dict(self) -> dict[str, Any]:
        """The row group's metadata as pyarrow's ``RowGroupMetaData.to_dict()``."""
        return row_group_dict(self)

    def equals(self, other: RowGroupMetadata) -> bool:
        """Whether ``other`` describes the same row group (as :meth:`to_dict` gives it)."""
        return isinstance(other, RowGroupMetadata) and self.to_dict() == other.to_dict()

    def __eq__(self, other: object) -> bool:
        return isinstance(other, RowGroupMetadata) and self.equals(other)

    __hash__ = None  # type: ignore[assignment]


class FileMetadata:
    """A Parquet file's footer: row counts, the writer, key-value metadata, the schema and the row
    groups. Returned by :func:`pqbloom.read_metadata` and ``ParquetFile.metadata_view``."""

    def __init__(self, metadata: Any, schema: Schema, leaves: list[ColumnDescriptor], num_rows: int,
                 source: ChunkMetadataSource, *, encrypted: bool = False, serialized_size: int = 0) -> None:
        self._md = metadata
        self._serialized_size = serialized_size
        self._encrypted = encrypted or metadata.encryption_algorithm is not None
        self._schema = schema
        self._leaves = leaves
        self._num_rows = num_rows
        self._source = source

    def __repr__(self) -> str:
        """pyarrow's text of a ``FileMetaData`` (:func:`object_text`)."""
        return object_text(self, "FileMetaData", [(k, getattr(self, k)) for k in (
            "created_by", "num_columns", "num_rows", "num_row_groups", "format_version", "serialized_size")])

    @property
    def num_rows(self) -> int:
        """Rows in the file (the sum over row groups: some writers leave the footer's count at 0)."""
        return self._num_rows

    @property
    def num_row_groups(self) -> int:
        """Row groups in the file."""
        return len(self._md.row_groups)

    @property
    def num_columns(self) -> int:
        """Leaf columns in the file schema."""
        return len(self._leaves)

    @property
    def format_version(self) -> str:
        """The format version as pyarrow names it: ``"2.6"`` for a footer of version 2 (pyarrow, which
        writes 2 for ``"2.4"`` and ``"2.6"``, cannot tell them apart either), ``"1.0"`` otherwise."""
        return "2.6" if self._md.version == 2 else "1.0"

    @property
    def version(self) -> int | None:
        """``FileMetaData.version`` as the writer set it (1 or 2; writers disagree on its meaning)."""
        return self._md.version

    @property
    def serialized_size(self) -> int:
        """Bytes of the serialized footer (``FileMetaData``), as pyarrow's."""
        return self._serialized_size

    def to_dict(self) -> dict[str, Any]:
        """The footer as pyarrow's ``FileMetaData.to_dict()``: counts, writer, row groups, column chunks."""
        return file_dict(self)

    def equals(self, other: FileMetadata) -> bool:
        """Whether ``other`` holds the same footer: schema, key-value metadata and what :meth:`to_dict`
        gives (pyarrow compares the serialized structs)."""
        return isinstance(other, FileMetadata) and self.schema == other.schema and \
            self.key_value_metadata == other.key_value_metadata and self.to_dict() == other.to_dict()

    def __eq__(self, other: object) -> bool:
        return isinstance(other, FileMetadata) and self.equals(other)

    __hash__ = None  # type: ignore[assignment]

    def set_file_path(self, path: str) -> None:
        """Name the file that holds the column chunks (``ColumnChunk.file_path``, relative to a dataset's
        root), as pyarrow's: what a ``_metadata`` file says of each chunk (see
        :func:`pqbloom.write_metadata`)."""
        for i in range(self.num_row_groups):
            for chunk in self._md.row_groups[i].columns:
                chunk.file_path = path

    def append_row_groups(self, other: FileMetadata) -> None:
        """Add ``other``'s row groups (a file of the same schema), as pyarrow's: a dataset's ``_metadata``
        gathered from its files' footers."""
        if [d.field for d in other._leaves] != [d.field for d in self._leaves]:
            raise SchemaError(f"append_row_groups needs equal schemas: {self.num_columns} columns "
                              f"({self.schema.names}), the other {other.num_columns} ({other.schema.names})")
        rgs = [other._md.row_groups[i] for i in range(other.num_row_groups)]
        self._md.row_groups = [self._md.row_groups[i] for i in range(self.num_row_groups)] + rgs
        self._num_rows += other.num_rows
        self._md.num_rows = self._num_rows

    def row_group_structs(self) -> list[Any]:
        """The footer's ``RowGroup`` structs (the file layer's: writing a ``_metadata`` file)."""
        return [self._md.row_groups[i] for i in range(self.num_row_groups)]

    def write_metadata_file(self, where: Any, filesystem: Any = None) -> None:
        """Write this footer as a metadata-only Parquet file (its row groups, no pages), as pyarrow's: a
        dataset's ``_metadata`` (see :func:`pqbloom.write_metadata`). Written atomically, as a writer's file."""
        if self._encrypted:
            raise UnsupportedError("write_metadata_file: an encrypted footer is not written out as a metadata file")
        md = copy.copy(self._md)
        md.row_groups = self.row_group_structs()
        md.num_rows = self.num_rows
        footer = encode(md)
        sink = open_sink(where, filesystem=filesystem)
        try:
            sink.write(b"PAR1" + footer + len(footer).to_bytes(4, "little") + b"PAR1")
            sink.commit()
        except BaseException:
            sink.abort()
            raise

    @property
    def footer_struct(self) -> Any:
        """The decoded ``FileMetaData`` struct (the file layer's)."""
        return self._md

    @property
    def created_by(self) -> str | None:
        """The writer's ``created_by`` string."""
        return self._md.created_by

    @property
    def key_value_metadata(self) -> dict[str, str | None]:
        """The footer's key-value metadata (the last value wins when a key repeats)."""
        return {kv.key: kv.value for kv in self._md.key_value_metadata or ()}

    @property
    def metadata(self) -> dict[bytes, bytes] | None:
        """The key-value metadata as pyarrow's ``FileMetaData.metadata`` gives it: bytes to bytes (a
        key without a value maps to b""), None when the footer has no list of them."""
        if self._md.key_value_metadata is None:
            return None
        return {k.encode(): (v or "").encode() for k, v in self.key_value_metadata.items()}

    @property
    def schema(self) -> Schema:
        """The flat schema: one field per leaf column, named by its dotted path."""
        return self._schema

    @property
    def is_encrypted(self) -> bool:
        """Whether the file uses Parquet Modular Encryption (encrypted or signed plaintext footer)."""
        return self._encrypted

    def row_group(self, i: int) -> RowGroupMetadata:
        """The ``i``-th row group."""
        n = self.num_row_groups
        if not 0 <= i < n:
            raise IndexError(f"row group {i} out of range: the file has {n}")
        return RowGroupMetadata(self._md.row_groups[i], i, self._leaves, self._source, self.created_by,
                                self._md.column_orders)

    def row_groups(self) -> Iterator[RowGroupMetadata]:
        """The row groups, in file order."""
        return (self.row_group(i) for i in range(self.num_row_groups))

