"""The writer's options: :class:`WriterOptions` (every keyword of :func:`pqbloom.write_table` and
:class:`pqbloom.ParquetWriter`) and :class:`BloomFilterOptions` (one column's Bloom filter)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, TypeAlias

from ..crypto import FileEncryptionProperties
from ..errors import SchemaError
from ..format import Encoding
from ..schema import ColumnDescriptor, Schema

__all__ = ["WriterOptions", "BloomFilterOptions", "BloomFilterSpec", "ENCODINGS_BY_NAME", "DEFAULT_ROW_GROUP_SIZE",
           "DEFAULT_PAGE_SIZE"]

#: what a user may give for one column's Bloom filter (see :meth:`BloomFilterOptions.from_user`)
BloomFilterSpec: TypeAlias = "bool | BloomFilterOptions | dict[str, Any] | None"

#: pyarrow's defaults: rows per row group, and bytes per data page and per dictionary page
DEFAULT_ROW_GROUP_SIZE = 1024 * 1024
DEFAULT_PAGE_SIZE = 1024 * 1024

#: what ``flavor`` may be (pyarrow's one flavor)
FLAVORS = (None, "spark")
#: what ``coerce_timestamps`` may be
TIMESTAMP_UNITS = (None, "ms", "us", "ns")

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
    * ``version``: the Parquet format version whose types the file uses, as in pyarrow: ``"2.6"`` (the
      default; nanosecond timestamps, UINT_32), ``"2.4"`` (nanosecond timestamps written as microseconds:
      an exact conversion, else :class:`~pqbloom.errors.SchemaError`, a ValueError) or ``"1.0"`` (also uint32 written as plain INT64, and
      dictionary pages named PLAIN_DICTIONARY). ``"2.4"`` and ``"2.6"`` write footer version 2, ``"1.0"``
      version 1, as pyarrow does; None writes the types of ``"2.6"`` with footer version 1 (pqbloom's
      default before this option).
    * The types of timestamps, decimals and times, as pyarrow's options choose them (see
      :mod:`pqbloom.file.versions`): ``coerce_timestamps`` (``"ms"``, ``"us"`` or ``"ns"``: the unit every
      timestamp is written in; a conversion that would drop digits raises ValueError unless
      ``allow_truncated_timestamps``), ``use_deprecated_int96_timestamps`` (timestamps as INT96, as Spark
      and Impala read them), ``store_decimal_as_integer`` (None, the default: decimals of up to 18 digits
      as INT32/INT64, as the format recommends; False: FIXED_LEN_BYTE_ARRAY, as pyarrow's default),
      ``write_time_adjusted_to_utc`` (TIME columns marked UTC-adjusted), ``use_compliant_nested_type``
      (False names a list's leaf ``item``, as pyarrow's legacy layout), ``flavor="spark"`` (column names
      with Spark's reserved characters ``' ,;{}()\\n\\t='`` get ``_``, timestamps are INT96).
    * ``sorting_columns``: the order the rows are in, stored in every row group's footer entry (pyarrow's
      ``RowGroup.sorting_columns``): a sequence of column names (ascending), ``(name, "ascending" |
      "descending")`` tuples, or objects with ``column_index``, ``descending`` and ``nulls_first``
      (pyarrow's ``SortingColumn``). pqbloom does not sort the data: the caller states its order.
    * ``row_group_size`` (rows) and ``max_row_group_bytes`` (approximate, uncompressed) cut row groups;
      ``data_page_size`` (bytes) cuts pages; ``data_page_version`` is ``"1.0"`` or ``"2.0"``.
    * ``use_dictionary`` (all columns, or a list of names), ``dictionary_pagesize_limit`` (bytes: past
      it the column is written without a dictionary), ``column_encoding`` (column -> one of
      :data:`ENCODINGS_BY_NAME`; such columns get no dictionary), ``use_byte_stream_split`` (True or a
      list of columns: BYTE_STREAM_SPLIT for the pages of those whose type has it and that are not
      dictionary-encoded, as pyarrow), ``max_rows_per_page`` (rows; None: pages cut by size only).
      ``write_batch_size`` is accepted for pyarrow's signature: pqbloom cuts pages by their size, not
      in batches of values.
    * ``write_statistics`` (all, or a list of names), ``statistics_truncate_length`` (bytes kept of
      binary min/max), ``write_page_index`` (column and offset indexes), ``write_page_checksum``.
    * ``bloom_filter_options``: column -> True or a :class:`BloomFilterOptions` spec;
      ``bloom_filter_position``: ``"after_row_group"`` or ``"end"`` (of the file);
      ``bloom_filter_skip_dictionary``: no filter for a chunk that is wholly dictionary-encoded.
    * ``key_value_metadata``: stored in the footer. ``store_schema`` (default True): store the data's
      Arrow schema (``ARROW:schema``) and metadata (pandas') in the footer, as pyarrow does; False stores
      neither. ``fsync``: flush to disk before the file appears.
    * ``encryption_properties``: a :class:`pqbloom.FileEncryptionProperties` (Parquet Modular Encryption).
    * ``use_threads`` (default True): compress a column chunk's pages on worker threads (the shared pool
      of :mod:`pqbloom.file.parallel`) while the calling thread encodes the next ones. The file's bytes
      are the same either way; False compresses every page in the calling thread.

    Options name a column by its top-level name or, for a leaf of a nested field, by its dotted path.
    """

    compression: str | dict[str, str] | None = "snappy"  # None: uncompressed, as pyarrow
    compression_level: int | dict[str, int] | None = None
    version: str | None = "2.6"  # None: 2.6 types, footer version 1 (pqbloom's default before the option)
    sorting_columns: Any = None  # see sorting.resolve_sorting_columns
    row_group_size: int | None = DEFAULT_ROW_GROUP_SIZE  # rows (None: the default, as pyarrow)
    max_row_group_bytes: int | None = None  # approximate, uncompressed
    data_page_size: int | None = DEFAULT_PAGE_SIZE  # None: the default, as pyarrow
    data_page_version: str = "1.0"
    use_dictionary: bool | list[str] = True
    dictionary_pagesize_limit: int | None = DEFAULT_PAGE_SIZE  # None: the default, as pyarrow
    column_encoding: dict[str, str] | None = field(default_factory=dict)
    use_byte_stream_split: bool | list[str] = False
    max_rows_per_page: int | None = None
    write_batch_size: int | None = None  # accepted for pyarrow's signature (pages are cut by size)
    write_statistics: bool | list[str] = True
    write_page_index: bool = True
    write_page_checksum: bool = False
    bloom_filter_options: dict[str, BloomFilterSpec] | None = field(default_factory=dict)
    bloom_filter_position: str = "after_row_group"
    bloom_filter_skip_dictionary: bool = False
    key_value_metadata: dict[str, str] | None = None
    store_schema: bool = True
    statistics_truncate_length: int = 64
    coerce_timestamps: str | None = None
    allow_truncated_timestamps: bool = False
    use_deprecated_int96_timestamps: bool | None = None
    store_decimal_as_integer: bool | None = None
    write_time_adjusted_to_utc: bool = False
    use_compliant_nested_type: bool = True
    flavor: str | None = None
    fsync: bool = False
    encryption_properties: FileEncryptionProperties | None = None
    use_threads: bool = True

    def __post_init__(self) -> None:
        # pyarrow's None for "the default" (its signatures say None for these)
        if self.row_group_size is None:
            self.row_group_size = DEFAULT_ROW_GROUP_SIZE
        if self.data_page_size is None:
            self.data_page_size = DEFAULT_PAGE_SIZE
        if self.dictionary_pagesize_limit is None:
            self.dictionary_pagesize_limit = DEFAULT_PAGE_SIZE
        if self.column_encoding is None:
            self.column_encoding = {}
        if self.bloom_filter_options is None:
            self.bloom_filter_options = {}
        if self.compression is None:
            self.compression = "none"
        if self.flavor == "spark" and self.use_deprecated_int96_timestamps is None:
            self.use_deprecated_int96_timestamps = True  # as pyarrow's flavor="spark"

    @property
    def row_group_rows(self) -> int:
        """``row_group_size`` resolved (the default when None)."""
        return self.row_group_size or DEFAULT_ROW_GROUP_SIZE

    @property
    def page_size(self) -> int:
        """``data_page_size`` resolved (the default when None)."""
        return self.data_page_size or DEFAULT_PAGE_SIZE

    @property
    def dictionary_limit(self) -> int:
        """``dictionary_pagesize_limit`` resolved (the default when None)."""
        return self.dictionary_pagesize_limit or DEFAULT_PAGE_SIZE

    @property
    def encodings_by_column(self) -> dict[str, str]:
        """``column_encoding`` resolved (empty when None)."""
        return self.column_encoding or {}

    @property
    def bloom_filters(self) -> dict[str, BloomFilterSpec]:
        """``bloom_filter_options`` resolved (empty when None)."""
        return self.bloom_filter_options or {}

    def validate(self, schema: Schema, leaves: list[ColumnDescriptor] | None = None) -> None:
        """Raise ValueError for an invalid setting, :class:`~pqbloom.errors.SchemaError` for an option
        naming a column ``schema`` (with its ``leaves``) does not have."""
        if self.version not in (None, "1.0", "2.4", "2.6"):
            raise ValueError(f"version must be '1.0', '2.4' or '2.6', got {self.version!r}")
        if self.data_page_version not in ("1.0", "2.0"):
            raise ValueError("data_page_version must be '1.0' or '2.0'")
        if self.bloom_filter_position not in ("after_row_group", "end"):
            raise ValueError("bloom_filter_position must be 'after_row_group' or 'end'")
        if self.row_group_rows <= 0 or self.page_size <= 0:
            raise ValueError("row_group_size and data_page_size must be positive")
        if self.max_rows_per_page is not None and self.max_rows_per_page <= 0:
            raise ValueError("max_rows_per_page must be positive (or None)")
        if self.write_batch_size is not None and self.write_batch_size <= 0:
            raise ValueError("write_batch_size must be positive (or None)")
        if self.flavor not in FLAVORS:
            raise ValueError(f"flavor must be 'spark' or None, got {self.flavor!r}")
        if self.coerce_timestamps not in TIMESTAMP_UNITS:
            raise ValueError(f"coerce_timestamps must be 'ms', 'us', 'ns' or None, got {self.coerce_timestamps!r}")
        if self.coerce_timestamps == "ns" and self.version in ("1.0", "2.4"):
            raise ValueError(f"coerce_timestamps='ns' needs version='2.6' (version {self.version!r} has no "
                             f"nanosecond timestamps)")
        names = set(schema.names) | {d.dotted_path for d in (schema.leaves() if leaves is None else leaves)}
        bss = self.use_byte_stream_split
        for what, cols in (("bloom_filter_options", self.bloom_filters),
                           ("column_encoding", self.encodings_by_column),
                           ("use_byte_stream_split", bss if isinstance(bss, (list, tuple, set)) else ())):
            unknown = set(cols) - names
            if unknown:
                raise SchemaError(f"{what} names columns not in the schema: {sorted(unknown)}")
        for what, spec in (("compression", self.compression), ("compression_level", self.compression_level)):
            if isinstance(spec, dict):
                unknown = set(spec) - names
                if unknown:
                    raise SchemaError(f"{what} names columns not in the schema: {sorted(unknown)}")
        for name, enc in self.encodings_by_column.items():
            if enc.upper() not in ENCODINGS_BY_NAME:
                raise ValueError(f"unknown encoding {enc!r} for column {name!r}")
