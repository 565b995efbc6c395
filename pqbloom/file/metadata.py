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

import decimal
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..arrays import BinaryArray
from ..format import column_order_name, statistics_fields
from ..format.enums import NUMERIC_DTYPES, CompressionCodec, Encoding, PhysicalType, name_of
from ..schema import ColumnDescriptor, Schema
from ..statistics import ChunkStats, sort_order_for
from ..table import Column
from .sorting import SortingColumn, sorting_columns_from_thrift

__all__ = ["FileMetadata", "RowGroupMetadata", "ColumnChunkMetadata", "ColumnStatistics", "SizeStatistics",
           "SortingColumn"]

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

    ``min`` and ``max`` are Python values of the column's logical type, as pyarrow's ``Statistics``
    gives them: ``datetime`` (aware for UTC-adjusted timestamps; pandas ``Timestamp`` for nanoseconds,
    as pyarrow), ``date``, ``time``, ``Decimal``, ``str`` for text (bytes when a truncated bound is not
    valid UTF-8), ``uuid.UUID``, non-negative ints for unsigned columns; FLOAT16 gives a float (pyarrow:
    the two raw bytes) and UUID a ``uuid.UUID`` (pyarrow: the 16 bytes). ``min_raw``/``max_raw`` are the same bounds in the physical domain (int, float,
    bool, bytes; unscaled decimals; unsigned ints non-negative). ``num_values``: the chunk's values
    less its nulls (its values when the null count is unknown), as pyarrow counts them. ``is_min_value_exact``/``is_max_value_exact`` are None when
    the writer did not say (a truncated bound is not exact).
    """

    min_raw: Any
    max_raw: Any
    null_count: int | None
    distinct_count: int | None
    nan_count: int | None
    is_min_value_exact: bool | None
    is_max_value_exact: bool | None
    min: Any = None
    max: Any = None
    num_values: int = 0
    physical_type: str | None = None

    @property
    def has_min_max(self) -> bool:
        """Whether both bounds are known and trusted."""
        return self.min_raw is not None and self.max_raw is not None

    @property
    def has_null_count(self) -> bool:
        """Whether the writer recorded how many nulls the chunk holds."""
        return self.null_count is not None

    @property
    def has_distinct_count(self) -> bool:
        """Whether the writer recorded how many distinct values the chunk holds."""
        return self.distinct_count is not None


@dataclass(frozen=True)
class SizeStatistics:
    """A column chunk's ``SizeStatistics``: the bytes of its byte-array values before encoding, and its
    repetition and definition level histograms (a count per level), each None when the writer gave none."""

    unencoded_byte_array_data_bytes: int | None
    repetition_level_histogram: list[int] | None
    definition_level_histogram: list[int] | None


def _logical(desc: ColumnDescriptor, v: Any) -> Any:
    """A physical bound as the Python value of the column's logical type (what reading a column
    holding it gives: the same conversion as :meth:`pqbloom.Table.to_pylist`)."""
    if v is None:
        return None
    p = desc.physical_type
    lt = desc.logical_type
    if lt is not None and lt.kind == "DECIMAL" and isinstance(v, int) and p not in (PhysicalType.INT32,
                                                                                      PhysicalType.INT64):
        return decimal.Decimal(f"{v}E-{lt.scale or 0}")  # exact (binary decimals come unscaled from ChunkStats)
    if lt is not None and lt.kind in _TEXT_KINDS:
        return _text(v)  # bytes when a (truncated) bound is not valid UTF-8
    vals: Any
    if p in (PhysicalType.INT32, PhysicalType.INT64) and isinstance(v, int):
        bits = 32 if p == PhysicalType.INT32 else 64
        vals = np.array([v & ((1 << bits) - 1)], np.uint64 if bits == 64 else np.uint32).view(NUMERIC_DTYPES[p])
    elif p == PhysicalType.BOOLEAN:
        return bool(v)
    elif p in (PhysicalType.FLOAT, PhysicalType.DOUBLE):
        vals = np.array([v], NUMERIC_DTYPES[p])
    elif p == PhysicalType.FIXED_LEN_BYTE_ARRAY and isinstance(v, bytes) and len(v) == desc.type_length:
        vals = np.frombuffer(v, np.uint8).reshape(1, len(v))
    elif p == PhysicalType.BYTE_ARRAY and isinstance(v, (bytes, str)):
        vals = BinaryArray.from_pylist([v])
    else:
        return v
    try:
        return Column(desc.field, vals, None).to_pylist()[0]
    except (ValueError, TypeError, ArithmeticError, OverflowError):
        return v


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
        desc = self._desc
        kind = _stat_kind(desc)
        order = sort_order_for(desc.physical_type, kind, desc.element.converted_type)
        cs = ChunkStats.from_fields(statistics_fields(raw), desc.physical_type, order,
                                    column_order=column_order_name(self._column_order), created_by=self._created_by,
                                    type_length=desc.type_length, logical_kind=kind)
        lo, hi = cs.min, cs.max
        nulls = cs.null_count
        # as pyarrow: the chunk's values less its nulls (all of them when the null count is unknown)
        num_values = max(self.num_values - (nulls or 0), 0)
        return ColumnStatistics(lo, hi, nulls, cs.distinct_count, cs.nan_count, cs.min_exact, cs.max_exact,
                                _logical(desc, lo), _logical(desc, hi), num_values, self.physical_type)


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

