"""The writer's options: :class:`WriterOptions` (every keyword of :func:`pqbloom.write_table` and
:class:`pqbloom.ParquetWriter`) and :class:`BloomFilterOptions` (one column's Bloom filter)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, TypeAlias

from ..crypto import FileEncryptionProperties
from ..errors import SchemaError
from ..format import Encoding
from ..schema import ColumnDescriptor, Schema

__all__ = ["WriterOptions", "BloomFilterOptions", "BloomFilterSpec", "ENCODINGS_BY_NAME"]

#: what a user may give for one column's Bloom filter (see :meth:`BloomFilterOptions.from_user`)
BloomFilterSpec: TypeAlias = "bool | BloomFilterOptions | dict[str, Any] | None"

#: the value encodings ``column_encoding`` may name (upper case; the option is case-insensitive)
ENCODINGS_BY_NAME = {
    "PLAIN": Encoding.PLAIN,
    "DELTA_BINARY_PACKED": Encoding.DELTA_BINARY_PACKED,
    "DELTA_LENGTH_BYTE_ARRAY": Encoding.DELTA_LENGTH_BYTE_ARRAY,
    "DELTA_BYTE_ARRAY": Encoding.DELTA_BYTE_ARRAY,
    "BYTE_STREAM_SPLIT": Encoding.BYTE_STREAM_SPLIT,
    "RLE": Encoding.RLE,
}


@dataclass
class BloomFilterOptions:
    """Bloom filter settings of one column (names as in pyarrow's ``bloom_filter_options``).

    ``fpp`` is the target false-positive probability; ``ndv`` the number of distinct values to size
    for (None: each row group's actual distinct count; a larger ``ndv`` is capped at the row group's
    value count); ``max_bytes`` caps the bitset (a power of two from 32 B to 128 MiB).
    """

    fpp: float = 0.01
    ndv: int | None = None  # None: size from the row group's actual distinct count
    max_bytes: int = 128 * 1024 * 1024

    @classmethod
    def from_user(cls, spec: BloomFilterSpec) -> BloomFilterOptions | None:
        """Options from what a user wrote for one column: True (defaults), False/None (no filter), a
        BloomFilterOptions, or a dict with ``fpp``, ``ndv``, ``max_bytes`` and ``enabled``."""
        if spec is None or spec is False:
            return None
        if spec is True:
            return cls()
        if isinstance(spec, BloomFilterOptions):
            return spec
        if isinstance(spec, dict):
            unknown = set(spec) - {"fpp", "ndv", "max_bytes", "enabled"}
            if unknown:
                raise ValueError(f"unknown bloom filter options {sorted(unknown)}")
            if spec.get("enabled", True) is False:
                return None
            opt = cls(fpp=float(spec.get("fpp", 0.01)), ndv=spec.get("ndv"),
                      max_bytes=int(spec.get("max_bytes", 128 * 1024 * 1024)))
            if not 0.0 < opt.fpp < 1.0:
                raise ValueError(f"bloom filter fpp must be in (0, 1), got {opt.fpp}")
            if opt.ndv is not None and opt.ndv < 0:
                raise ValueError("bloom filter ndv must be positive")
            return opt
        raise ValueError(f"bad bloom filter option {spec!r}: use True, False or a dict")


@dataclass
class WriterOptions:
    """Everything :class:`pqbloom.ParquetWriter` and :func:`pqbloom.write_table` accept as keyword
    options (names as in pyarrow's ``ParquetWriter`` where pyarrow has them).

    * ``compression``: a codec name (``"snappy"``, ``"zstd"``, ``"gzip"``, ``"lz4_raw"`` (or
      ``"lz4"``, which writes LZ4_RAW as pyarrow does), ``"brotli"``, ``"none"``) or a dict column -> codec. ``compression_level``: an int, or a dict column -> int, for
      the codecs that have levels (pyarrow's ranges: zstd -131072 to 22, gzip 0 to 9, brotli 0 to 11);
      None (the default) is zstd 3, gzip 6, brotli 5. A level out of range, or one given for snappy, lz4
      (pqbloom's LZ4 compressor has no levels) or none, is a ValueError.
    * ``version``: the Parquet format version whose types the file uses, as in pyarrow: ``"2.6"``
      (nanosecond timestamps, UINT_32), ``"2.4"`` (nanosecond timestamps written as microseconds: an
      exact conversion, else :class:`~pqbloom.errors.SchemaError`, a ValueError, as pyarrow raises its
      ``ArrowInvalid``) or ``"1.0"`` (also uint32 written as plain INT64). None, the
      default, writes the types of ``"2.6"`` with footer version 1, as pqbloom always has; ``"2.4"``
      and ``"2.6"`` write footer version 2, as pyarrow does.
    * ``sorting_columns``: the order the rows are in, stored in every row group's footer entry (pyarrow's
      ``RowGroup.sorting_columns``): a sequence of column names (ascending), ``(name, "ascending" |
      "descending")`` tuples, or objects with ``column_index``, ``descending`` and ``nulls_first``
      (pyarrow's ``SortingColumn``). pqbloom does not sort the data: the caller states its order.
    * ``row_group_size`` (rows) and ``max_row_group_bytes`` (approximate, uncompressed) cut row groups;
      ``data_page_size`` (bytes) cuts pages; ``data_page_version`` is ``"1.0"`` or ``"2.0"``.
    * ``use_dictionary`` (all columns, or a list of names), ``dictionary_pagesize_limit`` (bytes: past
      it the column is written without a dictionary), ``column_encoding`` (column -> one of
      :data:`ENCODINGS_BY_NAME`; such columns get no dictionary).
    * ``write_statistics`` (all, or a list of names), ``statistics_truncate_length`` (bytes kept of
      binary min/max), ``write_page_index`` (column and offset indexes), ``write_page_checksum``.
    * ``bloom_filter_options``: column -> True or a :class:`BloomFilterOptions` spec;
      ``bloom_filter_position``: ``"after_row_group"`` or ``"end"`` (of the file);
      ``bloom_filter_skip_dictionary``: no filter for a chunk that is wholly dictionary-encoded.
    * ``key_value_metadata``: stored in the footer. ``fsync``: flush to disk before the file appears.
    * ``encryption_properties``: a :class:`pqbloom.FileEncryptionProperties` (Parquet Modular Encryption).
    * ``use_threads`` (default True): compress a column chunk's pages on worker threads (the shared pool
      of :mod:`pqbloom.file.parallel`) while the calling thread encodes the next ones. The file's bytes
      are the same either way; False compresses every page in the calling thread.

    Options name a column by its top-level name or, for a leaf of a nested field, by its dotted path.
    """

    compression: str | dict[str, str] = "snappy"
    compression_level: int | dict[str, int] | None = None
    version: str | None = None  # None: 2.6 types, footer version 1 (pqbloom's behaviour before the option)
    sorting_columns: Any = None  # see sorting.resolve_sorting_columns
    row_group_size: int = 1024 * 1024  # rows
    max_row_group_bytes: int | None = None  # approximate, uncompressed
    data_page_size: int = 1024 * 1024
    data_page_version: str = "1.0"
    use_dictionary: bool | list[str] = True
    dictionary_pagesize_limit: int = 1024 * 1024
    column_encoding: dict[str, str] = field(default_factory=dict)
    write_statistics: bool | list[str] = True
    write_page_index: bool = True
    write_page_checksum: bool = False
    bloom_filter_options: dict[str, BloomFilterSpec] = field(default_factory=dict)
    bloom_filter_position: str = "after_row_group"
    bloom_filter_skip_dictionary: bool = False
    key_value_metadata: dict[str, str] | None = None
    statistics_truncate_length: int = 64
    fsync: bool = False
    encryption_properties: FileEncryptionProperties | None = None
    use_threads: bool = True

    def validate(self, schema: Schema, leaves: list[ColumnDescriptor] | None = None) -> None:
        """Raise ValueError for an invalid setting, :class:`~pqbloom.errors.SchemaError` for an option
        naming a column ``schema`` (with its ``leaves``) does not have."""
        if self.version not in (None, "1.0", "2.4", "2.6"):
            raise ValueError(f"version must be '1.0', '2.4' or '2.6', got {self.version!r}")
        if self.data_page_version not in ("1.0", "2.0"):
            raise ValueError("data_page_version must be '1.0' or '2.0'")
        if self.bloom_filter_position not in ("after_row_group", "end"):
            raise ValueError("bloom_filter_position must be 'after_row_group' or 'end'")
        if self.row_group_size <= 0 or self.data_page_size <= 0:
            raise ValueError("row_group_size and data_page_size must be positive")
        names = set(schema.names) | {d.dotted_path for d in (schema.leaves() if leaves is None else leaves)}
        for what, cols in (("bloom_filter_options", self.bloom_filter_options),
                           ("column_encoding", self.column_encoding)):
            unknown = set(cols) - names
            if unknown:
                raise SchemaError(f"{what} names columns not in the schema: {sorted(unknown)}")
        for what, spec in (("compression", self.compression), ("compression_level", self.compression_level)):
            if isinstance(spec, dict):
                unknown = set(spec) - names
                if unknown:
                    raise SchemaError(f"{what} names columns not in the schema: {sorted(unknown)}")
        for name, enc in self.column_encoding.items():
            if enc.upper() not in ENCODINGS_BY_NAME:
                raise ValueError(f"unknown encoding {enc!r} for column {name!r}")
