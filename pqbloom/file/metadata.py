"""A file's metadata as pqbloom objects: :class:`FileMetadata`, :class:`RowGroupMetadata`,
:class:`ColumnChunkMetadata` and :class:`ColumnStatistics`.

The names follow pyarrow's ``FileMetaData`` / ``RowGroupMetaData`` / ``ColumnChunkMetaData`` where
pyarrow has one, so code moves between the two libraries easily. The objects are views over the
decoded footer: nothing is decoded twice, and a row group of a large lazy footer is decoded only when
asked for. The raw Thrift structs stay inside :mod:`pqbloom.format` and the file layer.

Statistics are given the way a reader may rely on them (:class:`pqbloom.statistics.ChunkStats`):
``min``/``max`` are None when the column's sort order is unknown or the writer is known to have
written wrong bounds (old parquet-mr on binary columns), even when the footer holds bytes there.
That differs from pyarrow, which shows such bounds; a pruning decision made on them would be wrong.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

from ..format.enums import CompressionCodec, Encoding, PhysicalType, name_of
from ..schema import ColumnDescriptor, Schema
from ..statistics import ChunkStats, sort_order_for
from .sorting import SortingColumn, sorting_columns_from_thrift

__all__ = ["FileMetadata", "RowGroupMetadata", "ColumnChunkMetadata", "ColumnStatistics"]

#: (row group, leaf) -> the chunk's ColumnMetaData, decrypted when it is encrypted
ChunkMetadataSource = Callable[[int, ColumnDescriptor], Any]

_TEXT_KINDS = frozenset(("STRING", "ENUM", "JSON"))


def _stat_kind(desc: ColumnDescriptor) -> str | None:
    lt = desc.logical_type
    if lt is None:
        return None
    if lt.kind == "INTEGER":
        return "INTEGER_SIGNED" if lt.signed else "INTEGER_UNSIGNED"
    return lt.kind


@dataclass(frozen=True)
class ColumnStatistics:
    """A column chunk's statistics, as far as they can be trusted.

    ``min`` and ``max`` are in the column's physical domain (int, float, bool, bytes), except that
    text columns (STRING, ENUM, JSON) give ``str`` when the bound is valid UTF-8 (a truncated bound
    may not be), unsigned integer columns give non-negative ints, FLOAT16 gives float and DECIMAL
    gives the unscaled int. ``is_min_value_exact``/``is_max_value_exact`` are None when the writer
    did not say (a truncated bound is not exact).
    """

    min: Any
    max: Any
    null_count: int | None
    distinct_count: int | None
    nan_count: int | None
    is_min_value_exact: bool | None
    is_max_value_exact: bool | None

    @property
    def has_min_max(self) -> bool:
        """Whether both bounds are known and trusted."""
        return self.min is not None and self.max is not None

    @property
    def has_null_count(self) -> bool:
        """Whether the writer recorded how many nulls the chunk holds."""
        return self.null_count is not None

    @property
    def has_distinct_count(self) -> bool:
        """Whether the writer recorded how many distinct values the chunk holds."""
        return self.distinct_count is not None


def _text(v: Any) -> Any:
    if isinstance(v, bytes):
        try:
            return v.decode("utf-8")
        except UnicodeDecodeError:
            return v
    return v


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
        return (f"ColumnChunkMetadata(path_in_schema={self.path_in_schema!r}, row_group={self._row_group}, "
                f"encrypted={self.is_encrypted})")

    @property
    def path_in_schema(self) -> str:
        """The leaf's dotted path."""
        return self._desc.dotted_path

    @property
    def column_index(self) -> int:
        """The leaf's ordinal in the file schema."""
        return self._desc.index

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
    def statistics(self) -> ColumnStatistics | None:
        """The chunk's statistics, or None when the writer stored none."""
        raw = self._metadata().statistics
        if raw is None:
            return None
        desc = self._desc
        kind = _stat_kind(desc)
        order = sort_order_for(desc.physical_type, kind, desc.element.converted_type)
        cs = ChunkStats.from_thrift(raw, desc.physical_type, order, column_order=self._column_order,
                                    created_by=self._created_by, type_length=desc.type_length, logical_kind=kind)
        lo, hi = cs.min, cs.max
        if kind in _TEXT_KINDS:
            lo, hi = _text(lo), _text(hi)
        return ColumnStatistics(lo, hi, cs.null_count, cs.distinct_count, cs.nan_count, cs.min_exact, cs.max_exact)


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
        return f"RowGroupMetadata(index={self._index}, num_rows={self.num_rows}, num_columns={self.num_columns})"

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


class FileMetadata:
    """A Parquet file's footer: row counts, the writer, key-value metadata, the schema and the row
    groups. Returned by :func:`pqbloom.read_metadata` and ``ParquetFile.metadata_view``."""

    def __init__(self, metadata: Any, schema: Schema, leaves: list[ColumnDescriptor], num_rows: int,
                 source: ChunkMetadataSource, *, encrypted: bool = False) -> None:
        self._md = metadata
        self._encrypted = encrypted or metadata.encryption_algorithm is not None
        self._schema = schema
        self._leaves = leaves
        self._num_rows = num_rows
        self._source = source

    def __repr__(self) -> str:
        return (f"FileMetadata(num_rows={self.num_rows}, num_row_groups={self.num_row_groups}, "
                f"num_columns={self.num_columns}, created_by={self.created_by!r})")

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
    def format_version(self) -> int:
        """``FileMetaData.version`` as the writer set it (1 or 2; writers disagree on its meaning)."""
        return int(self._md.version)

    @property
    def created_by(self) -> str | None:
        """The writer's ``created_by`` string."""
        return self._md.created_by

    @property
    def key_value_metadata(self) -> dict[str, str | None]:
        """The footer's key-value metadata (the last value wins when a key repeats)."""
        return {kv.key: kv.value for kv in self._md.key_value_metadata or ()}

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

