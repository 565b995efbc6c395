"""The user's entry points, named and shaped as pyarrow.parquet's: :class:`ParquetFile`, :func:`read_table`,
:func:`read_pandas`, :func:`read_metadata`, :func:`read_schema`, :func:`write_table` and
:func:`write_metadata` (and :class:`ParquetWriter`, from :mod:`pqbloom.file.writer`; ``ParquetDataset`` and
``write_to_dataset``, from :mod:`pqbloom.datasets`).

Every option is an explicit keyword argument with its type and default, so that a misspelt one
(``compresion=``) is a TypeError naming the function, and an IDE or mypy sees it. pyarrow's options that
only tune its own IO (``memory_map``, ``buffer_size``, ``pre_buffer``) are accepted and have no effect;
the few pqbloom does not offer raise :class:`~pqbloom.errors.UnsupportedError` when given a value other
than pyarrow's default. The differences from pyarrow are listed in docs/guide/pyarrow-compatibility.md.

:class:`ParquetFile` is a :class:`pqbloom.file.reader.FileReader` (footer, columns, chunks, pages,
Bloom filters, unfiltered reads) that adds what needs the filter engine: ``filters=`` and
``explain=`` on :meth:`ParquetFile.read` and :meth:`ParquetFile.iter_batches` dispatch to
:mod:`pqbloom.scan`, which drives the file through its public methods.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator, Sequence
from typing import TYPE_CHECKING, Any, cast

from .datasets import Dataset, is_dataset_source, read_dataset
from .errors import UnsupportedError
from .file.metadata import FileMetadata
from .file.options import BloomFilterSpec
from .file.read_options import check_pyarrow_read_options, reader_options
from .file.reader import FileReader, Source
from .file.writer import Destination, ParquetWriter, options_from
from .io.sources import local_source, locate, open_location, open_source
from .limits import memory_budget, run_limited
from .scan import Explain, FilterLike, iter_filtered_batches, read_filtered
from .schema import Schema
from .table import Table
from .table.arrow_file_schema import cast_to_schema
from .table.pandas_meta import stored_index_columns

if TYPE_CHECKING:  # annotations only
    from .crypto import FileDecryptionProperties, FileEncryptionProperties

__all__ = ["ParquetFile", "ParquetWriter", "Filters", "read_table", "read_pandas", "read_metadata", "read_schema",
           "write_table", "write_metadata"]


#: a filter: a :func:`pqbloom.field` expression, a pyarrow-style DNF list of tuples, a filter string, or a
#: ``pyarrow.compute`` expression (see :func:`pqbloom.scan.to_expression`)
Filters = FilterLike


def _with_index_columns(columns: Sequence[str] | None, metadata: dict[str, str | None] | None) -> list[str] | None:
    """``columns`` and the index columns pandas' metadata names (pyarrow's ``use_pandas_metadata``)."""
    if columns is None:
        return None
    index = stored_index_columns({k: v for k, v in (metadata or {}).items() if v is not None})
    return list(columns) + [c for c in index if c not in columns]


class ParquetFile(FileReader):
    """A Parquet file opened for reading (path, URL, bytes, or seekable binary file object), as pyarrow's
    ``ParquetFile``.

    ``source`` may be a URL (``s3://``, ``gs://``, ``http(s)://``, ``memory://``, ``file://``...; fsspec,
    ``pip install pqbloom[remote]``) or a path on ``filesystem`` (an fsspec or pyarrow filesystem): such
    files are read by explicit range requests (see :mod:`pqbloom.io.remote`).

    Options (keyword-only): ``decryption_properties`` (Parquet Modular Encryption),
    ``coerce_int96_timestamp_unit`` (``"ms"``/``"us"``: the unit INT96 timestamps are read in),
    ``read_dictionary`` (columns read as Arrow dictionaries: pandas categoricals), ``thrift_string_size_limit``
    / ``thrift_container_size_limit`` (footer limits; None: the defaults), ``verify_checksums`` (page CRCs,
    default True; pyarrow's ``page_checksum_verification=True`` asks the same), ``memory_limit`` (bytes each
    read call may decode: :mod:`pqbloom.limits`). Accepted for pyarrow's signature and without effect:
    ``metadata``, ``common_metadata`` (the footer is read from the file), ``memory_map``, ``buffer_size``,
    ``pre_buffer`` (IO hints), ``schema_depth_limit`` (pqbloom's limit is fixed at 100 levels, pyarrow's
    default). ``binary_type`` and ``list_type`` must be None, ``arrow_extensions_enabled`` True.
    """

    def __init__(self, source: Source, *, metadata: Any = None, common_metadata: Any = None,
                 read_dictionary: Sequence[str] | None = None, binary_type: Any = None, list_type: Any = None,
                 memory_map: bool = False, buffer_size: int = 0, pre_buffer: bool = True,
                 coerce_int96_timestamp_unit: str | None = None,
                 decryption_properties: FileDecryptionProperties | None = None,
                 thrift_string_size_limit: int | None = None, thrift_container_size_limit: int | None = None,
                 schema_depth_limit: int | None = None, filesystem: Any = None,
                 page_checksum_verification: bool = False, arrow_extensions_enabled: bool = True,
                 verify_checksums: bool = True, memory_limit: int | None = None) -> None:
        del metadata, common_metadata, memory_map, buffer_size, pre_buffer, schema_depth_limit  # see the docstring
        check_pyarrow_read_options(binary_type=binary_type, list_type=list_type,
                                   arrow_extensions_enabled=arrow_extensions_enabled)
        options = reader_options(
            decryption_properties=decryption_properties, verify_checksums=verify_checksums,
            page_checksum_verification=page_checksum_verification, memory_limit=memory_limit,
            coerce_int96_timestamp_unit=coerce_int96_timestamp_unit, thrift_string_size_limit=thrift_string_size_limit,
            thrift_container_size_limit=thrift_container_size_limit, read_dictionary=read_dictionary)
        super().__init__(open_source(source, filesystem) if filesystem is not None else source, **options)
        self._closed = False

    def close(self) -> None:
        """Close the underlying file (when this reader opened it)."""
        super().close()
        self._closed = True

    def _columns(self, columns: Sequence[str] | None, use_pandas_metadata: bool) -> Sequence[str] | None:
        return _with_index_columns(columns, self.key_value_metadata) if use_pandas_metadata else columns

    def read(self, columns: Sequence[str] | None = None, use_threads: bool = True, use_pandas_metadata: bool = False,
             *, filters: Filters | None = None, explain: Explain | None = None) -> Table:
        """Read the whole file (or the named columns) into a Table, as pyarrow's ``ParquetFile.read``
        (``use_pandas_metadata``: the index columns pandas' metadata names come with ``columns``).

        ``filters`` (a :func:`pqbloom.field` expression, a pyarrow-style DNF list, a filter string or a
        ``pyarrow.compute`` expression) keeps only matching rows, pruning row groups and pages first (see
        :mod:`pqbloom.scan`); pass a :class:`pqbloom.Explain` as ``explain`` to have it filled with what
        the read did. ``use_threads`` decodes column chunks in parallel (a filtered read: its row groups).
        """
        columns = self._columns(columns, use_pandas_metadata)
        if filters is None and explain is None:
            return super().read(columns, use_threads=use_threads)
        with memory_budget(self.memory_limit):
            # a filtered read keeps its pruned row groups unread: no dictionary pages are fetched for it
            return self.with_file_metadata(read_filtered(self, columns, filters, explain=explain,
                                                         use_threads=use_threads), [])

    def read_row_group(self, i: int, columns: Sequence[str] | None = None, use_threads: bool = True,
                       use_pandas_metadata: bool = False) -> Table:
        """Read one row group (all columns, or the named ones), as pyarrow's ``read_row_group``."""
        return super().read_row_group(i, self._columns(columns, use_pandas_metadata), use_threads=use_threads)

    def read_row_groups(self, row_groups: Sequence[int], columns: Sequence[str] | None = None,
                        use_threads: bool = True, use_pandas_metadata: bool = False) -> Table:
        """Read the row groups ``row_groups`` (in that order) into one Table, as pyarrow's ``read_row_groups``."""
        return super().read_row_groups(row_groups, self._columns(columns, use_pandas_metadata),
                                       use_threads=use_threads)

    def iter_batches(self, batch_size: int = 65536, row_groups: Sequence[int] | None = None,
                     columns: Sequence[str] | None = None, use_threads: bool = True,
                     use_pandas_metadata: bool = False, *, filters: Filters | None = None,
                     explain: Explain | None = None) -> Iterator[Table]:
        """Yield Tables of ``batch_size`` rows (the last may be shorter), across row groups, as pyarrow's
        ``iter_batches`` (its arguments, in its order). Memory stays bounded by the batch, one decoded page
        per column and the compressed bytes of the current column chunks. A batch is a
        :class:`pqbloom.Table` (``num_rows``, ``column()``, ``to_pydict()``, ``to_pandas()``,
        ``pyarrow.record_batch(batch)`` through the Arrow PyCapsule interface).

        ``filters`` / ``explain`` as in :meth:`read`: then one row group's matching rows are decoded at a
        time (see :mod:`pqbloom.scan`), batches end at row group ends, and ``explain`` is complete once
        iteration ends; ``row_groups`` cannot be given with them (the filter chooses the row groups).
        """
        columns = self._columns(columns, use_pandas_metadata)
        if filters is None and explain is None:
            return super().iter_batches(batch_size, row_groups, columns, use_threads)
        if row_groups is not None:
            raise ValueError("iter_batches takes row_groups or filters, not both: the filter chooses the row groups")
        if batch_size <= 0:
            raise ValueError("batch_size must be positive")
        return run_limited(self.memory_limit, self._iter_filtered(batch_size, columns, filters, explain))

    def _iter_filtered(self, batch_size: int, columns: Sequence[str] | None, filters: Filters | None,
                       explain: Explain | None) -> Iterator[Table]:
        yield from iter_filtered_batches(self, batch_size, columns, filters, explain=explain)

    def scan_contents(self, columns: Sequence[str] | None = None, batch_size: int = 65536) -> int:
        """Read the columns (all, or ``columns``) through, batch by batch, and return the number of rows,
        as pyarrow's ``scan_contents`` (a read that keeps nothing: it checks the pages decode)."""
        return sum(b.num_rows for b in super().iter_batches(batch_size, None, columns, False))

    @property
    def closed(self) -> bool:
        """Whether the file is closed (:meth:`close`, or the end of a ``with`` block), as pyarrow's."""
        return self._closed


def read_table(source: Source | Sequence[str | os.PathLike[str]] | Dataset, columns: Sequence[str] | None = None,
               *, use_threads: bool = True, schema: Any = None, use_pandas_metadata: bool = False,
               read_dictionary: Sequence[str] | None = None, binary_type: Any = None, list_type: Any = None,
               memory_map: bool = False, buffer_size: int = 0, partitioning: str | None = "hive",
               filesystem: Any = None, filters: Filters | None = None, ignore_prefixes: Sequence[str] | None = None,
               pre_buffer: bool = True, coerce_int96_timestamp_unit: str | None = None,
               decryption_properties: FileDecryptionProperties | None = None,
               thrift_string_size_limit: int | None = None, thrift_container_size_limit: int | None = None,
               schema_depth_limit: int | None = None, page_checksum_verification: bool = False,
               arrow_extensions_enabled: bool = True, explain: Explain | None = None,
               verify_checksums: bool = True, memory_limit: int | None = None) -> Table:
    """Read a Parquet file, or many (a directory, a list of files, a glob pattern or a
    :class:`~pqbloom.datasets.Dataset`: see :mod:`pqbloom.datasets.sources`), into a Table, as pyarrow's
    ``read_table``.

    * ``columns`` selects by name (a dotted path selects a nested leaf); ``use_pandas_metadata`` adds
      the index columns pandas' metadata names.
    * ``filters``: a :func:`pqbloom.field` expression, a pyarrow-style DNF list of ``(column, op, value)``
      tuples, a filter string or a ``pyarrow.compute`` expression; row groups, pages and (for a directory)
      files that cannot match are skipped unread (:mod:`pqbloom.scan`). A filter on a leaf inside a list
      or map (``field("tags.list.element") == 5``) keeps the rows where some element satisfies it. Pass a
      :class:`pqbloom.Explain` as ``explain`` to see what the read did.
    * ``use_threads`` decodes column chunks in parallel (a directory's files are read by the dataset
      reader's own workers).
    * ``schema`` (a pyarrow or pqbloom schema) reads as pyarrow's ``schema=`` does: its fields in its
      order, cast to its types, missing ones null (needs pyarrow).
    * ``partitioning``: ``"hive"`` (the default) reads a directory's ``key=value`` names as columns; None
      ignores them. ``ignore_prefixes``: file and directory names starting with one of them are skipped
      (pqbloom always skips ``_`` and ``.``, pyarrow's default).
    * ``read_dictionary``, ``coerce_int96_timestamp_unit``, ``decryption_properties``, the thrift limits,
      ``verify_checksums`` / ``page_checksum_verification`` and ``memory_limit`` (one ceiling for the whole
      call) as for :class:`ParquetFile`; ``memory_map``, ``buffer_size``, ``pre_buffer`` and
      ``schema_depth_limit`` are accepted without effect; ``binary_type`` / ``list_type`` must be None.

    ``source`` may be a URL or a path on ``filesystem`` (see :class:`ParquetFile`); a remote directory (a
    URL ending in ``/``, or one the filesystem says is a directory) is listed once, its footers fetched
    together and the Bloom probes of all its files sent at once.
    """
    del memory_map, buffer_size, pre_buffer, schema_depth_limit  # IO hints and pyarrow's fixed limit
    check_pyarrow_read_options(binary_type=binary_type, list_type=list_type,
                               arrow_extensions_enabled=arrow_extensions_enabled)
    if partitioning not in ("hive", None):
        raise UnsupportedError(f"partitioning={partitioning!r}: pqbloom reads Hive partitions ('hive') or none (None)")
    options = reader_options(
        decryption_properties=decryption_properties, verify_checksums=verify_checksums,
        page_checksum_verification=page_checksum_verification, memory_limit=memory_limit,
        coerce_int96_timestamp_unit=coerce_int96_timestamp_unit, thrift_string_size_limit=thrift_string_size_limit,
        thrift_container_size_limit=thrift_container_size_limit, read_dictionary=read_dictionary)
    return _read_table(source, columns, filters=filters, explain=explain, use_threads=use_threads, schema=schema,
                       use_pandas_metadata=use_pandas_metadata, partitioning=partitioning, filesystem=filesystem,
                       ignore_prefixes=ignore_prefixes, options=options)


def _read_table(source: Any, columns: Sequence[str] | None, *, filters: Filters | None, explain: Explain | None,
                use_threads: bool, schema: Any, use_pandas_metadata: bool, partitioning: str | None,
                filesystem: Any, ignore_prefixes: Sequence[str] | None, options: dict[str, Any]) -> Table:
    if schema is not None:
        wanted = schema_columns(source, schema, columns, options) if filesystem is None else None
        table = _read_table(source, wanted, filters=filters, explain=explain, use_threads=use_threads, schema=None,
                            use_pandas_metadata=use_pandas_metadata, partitioning=partitioning,
                            filesystem=filesystem, ignore_prefixes=ignore_prefixes, options=options)
        return cast_to_schema(table, schema, columns)
    loc = locate(source, filesystem)  # a remote file or directory (None: a local source)
    if loc is None:
        source = local_source(source, filesystem)  # file:// URLs: local paths
    if (loc is not None and loc.is_dir) or (loc is None and is_dataset_source(source)):
        # a directory, list of files, glob or Dataset: the dataset reader's job (it lists the files and
        # opens them itself)
        with memory_budget(options["memory_limit"]):
            if loc is not None and partitioning == "hive" and not ignore_prefixes:
                return read_dataset(loc, columns, filters=filters, explain=explain, **options)
            ds = source if isinstance(source, Dataset) else \
                Dataset(source if loc is None else loc.name, partitioning, filesystem=filesystem,
                        ignore_prefixes=ignore_prefixes, **options)
            if use_pandas_metadata:
                columns = _with_index_columns(columns, ds.key_value_metadata())
            return ds.read_with(columns, filters, explain, {**ds.read_kwargs, "memory_limit": options["memory_limit"]}
                                if isinstance(source, Dataset) else options)
    # one ceiling for the whole call: the footer's read and decode are charged with the rows
    with memory_budget(options["memory_limit"]), \
            ParquetFile(cast(Source, source) if loc is None else open_location(loc), **options) as pf:
        if use_pandas_metadata:
            columns = _with_index_columns(columns, pf.key_value_metadata)
        if filters is None and explain is None:
            return pf.read(columns, use_threads=use_threads)
        return pf.with_file_metadata(read_filtered(pf, columns, filters, explain=explain, io_from_open=True,
                                                   use_threads=use_threads), [])


def schema_columns(source: Any, schema: Any, columns: Sequence[str] | None, options: dict[str, Any]
                   ) -> list[str] | None:
    """What to read of ``source`` for ``read_table(schema=)``: the wanted names the file has (a
    directory: all columns, chosen after reading)."""
    names = list(columns) if columns is not None else list(schema.names)
    if isinstance(source, (str, os.PathLike)) and not os.path.isfile(source):
        return None  # a directory, glob or URL: all columns, chosen after reading
    if not isinstance(source, (str, os.PathLike, bytes, bytearray, memoryview)):
        return None  # a file object or a list of files: read whole, chosen after reading
    with ParquetFile(source, **options) as pf:
        have = set(pf.table_schema.names)
    return [n for n in names if n in have]


def read_pandas(source: Source | Sequence[str | os.PathLike[str]] | Dataset, columns: Sequence[str] | None = None,
                *, use_threads: bool = True, schema: Any = None, read_dictionary: Sequence[str] | None = None,
                partitioning: str | None = "hive", filesystem: Any = None, filters: Filters | None = None,
                ignore_prefixes: Sequence[str] | None = None, coerce_int96_timestamp_unit: str | None = None,
                decryption_properties: FileDecryptionProperties | None = None,
                thrift_string_size_limit: int | None = None, thrift_container_size_limit: int | None = None,
                page_checksum_verification: bool = False, explain: Explain | None = None,
                verify_checksums: bool = True, memory_limit: int | None = None) -> Table:
    """:func:`read_table` with ``use_pandas_metadata=True``, as pyarrow's ``read_pandas``: the index columns
    pandas' metadata names come with ``columns``, so that ``.to_pandas()`` rebuilds the DataFrame's index.
    The other arguments are :func:`read_table`'s."""
    return read_table(source, columns, use_threads=use_threads, schema=schema, use_pandas_metadata=True,
                      read_dictionary=read_dictionary, partitioning=partitioning, filesystem=filesystem,
                      filters=filters, ignore_prefixes=ignore_prefixes,
                      coerce_int96_timestamp_unit=coerce_int96_timestamp_unit,
                      decryption_properties=decryption_properties, thrift_string_size_limit=thrift_string_size_limit,
                      thrift_container_size_limit=thrift_container_size_limit,
                      page_checksum_verification=page_checksum_verification, explain=explain,
                      verify_checksums=verify_checksums, memory_limit=memory_limit)


def read_metadata(where: Source, memory_map: bool = False, decryption_properties: FileDecryptionProperties | None = None,
                  filesystem: Any = None, arrow_extensions_enabled: bool = True, *, verify_checksums: bool = True,
                  memory_limit: int | None = None, thrift_string_size_limit: int | None = None,
                  thrift_container_size_limit: int | None = None) -> FileMetadata:
    """The footer of a Parquet file as :class:`~pqbloom.file.metadata.FileMetadata` (row groups, column
    chunks, statistics, the Parquet schema), as pyarrow's ``read_metadata``. ``memory_map`` is accepted
    without effect; the other options as for :class:`ParquetFile`."""
    with ParquetFile(where, memory_map=memory_map, decryption_properties=decryption_properties, filesystem=filesystem,
                     arrow_extensions_enabled=arrow_extensions_enabled, verify_checksums=verify_checksums,
                     memory_limit=memory_limit, thrift_string_size_limit=thrift_string_size_limit,
                     thrift_container_size_limit=thrift_container_size_limit) as pf:
        return pf.metadata


def read_schema(where: Source, memory_map: bool = False, decryption_properties: FileDecryptionProperties | None = None,
                filesystem: Any = None, arrow_extensions_enabled: bool = True, *, verify_checksums: bool = True,
                memory_limit: int | None = None, thrift_string_size_limit: int | None = None,
                thrift_container_size_limit: int | None = None) -> Schema:
    """The schema of the tables a Parquet file reads as, as pyarrow's ``read_schema``: one field per
    top-level column (structs, lists and maps whole), with the footer's metadata and Arrow types, so that
    ``names``, ``field(name).type``, ``types``, ``metadata``, ``pandas_metadata`` and ``str()`` answer as
    pyarrow's ``Schema`` does (the Arrow types need pyarrow). The options as for :func:`read_metadata`."""
    with ParquetFile(where, memory_map=memory_map, decryption_properties=decryption_properties, filesystem=filesystem,
                     arrow_extensions_enabled=arrow_extensions_enabled, verify_checksums=verify_checksums,
                     memory_limit=memory_limit, thrift_string_size_limit=thrift_string_size_limit,
                     thrift_container_size_limit=thrift_container_size_limit) as pf:
        return pf.arrow_table_schema


def write_table(table: Any, where: Destination, row_group_size: int | None = None, *, version: str | None = "2.6",
                use_dictionary: bool | list[str] = True, compression: str | dict[str, str] | None = "snappy",
                write_statistics: bool | list[str] = True, use_deprecated_int96_timestamps: bool | None = None,
                coerce_timestamps: str | None = None, allow_truncated_timestamps: bool = False,
                data_page_size: int | None = None, flavor: str | None = None, filesystem: Any = None,
                compression_level: int | dict[str, int] | None = None, use_byte_stream_split: bool | list[str] = False,
                column_encoding: dict[str, str] | None = None, data_page_version: str = "1.0",
                use_compliant_nested_type: bool = True, encryption_properties: FileEncryptionProperties | None = None,
                write_batch_size: int | None = None, dictionary_pagesize_limit: int | None = None,
                store_schema: bool = True, write_page_index: bool = True, write_page_checksum: bool = False,
                sorting_columns: Any = None, store_decimal_as_integer: bool | None = None,
                write_time_adjusted_to_utc: bool = False, max_rows_per_page: int | None = None,
                bloom_filter_options: dict[str, BloomFilterSpec] | None = None,
                use_content_defined_chunking: bool = False, schema: Any = None,
                progress: Callable[[int, int], None] | None = None, max_row_group_bytes: int | None = None,
                bloom_filter_position: str = "after_row_group", bloom_filter_skip_dictionary: bool = False,
                key_value_metadata: dict[str, str] | None = None, statistics_truncate_length: int = 64,
                fsync: bool = False, use_threads: bool = True, metadata_collector: list[Any] | None = None) -> None:
    """Write ``table`` (a pqbloom Table, dict of columns, pandas or polars DataFrame, pyarrow Table or
    RecordBatch, or any Arrow PyCapsule producer) to ``where``, as pyarrow's ``write_table``.

    Options (names, meanings and defaults as pyarrow's; :class:`pqbloom.WriterOptions` has the details):

    * ``row_group_size`` (rows per row group; default 1Mi), ``max_row_group_bytes`` (approximate);
      ``data_page_size`` (bytes; default 1 MiB), ``max_rows_per_page``, ``data_page_version``
      (``"1.0"``/``"2.0"``); ``write_batch_size`` is accepted (pages are cut by size).
    * ``compression`` (a codec, or column -> codec; None: uncompressed), ``compression_level``.
    * ``version`` (``"1.0"``, ``"2.4"``, ``"2.6"``: the format version's types and footer version),
      ``coerce_timestamps`` / ``allow_truncated_timestamps``, ``use_deprecated_int96_timestamps``,
      ``store_decimal_as_integer`` (None, pqbloom's default: decimals of up to 18 digits as integers;
      False: FIXED_LEN_BYTE_ARRAY, as pyarrow's default), ``write_time_adjusted_to_utc``,
      ``use_compliant_nested_type``, ``flavor`` (``"spark"``).
    * ``use_dictionary`` (all, or a list of columns), ``dictionary_pagesize_limit``, ``column_encoding``
      (column -> encoding), ``use_byte_stream_split`` (True or a list of columns).
    * ``write_statistics`` (all, or a list), ``statistics_truncate_length``, ``write_page_index`` (default
      True, unlike pyarrow: the page index lets readers skip pages), ``write_page_checksum``,
      ``sorting_columns``.
    * ``bloom_filter_options`` (column -> True or ``{"ndv": ..., "fpp": ...}``), ``bloom_filter_position``
      (``"after_row_group"``/``"end"``), ``bloom_filter_skip_dictionary``.
    * ``store_schema`` (store the Arrow schema and the data's metadata, as pyarrow), ``key_value_metadata``
      (more footer metadata), ``encryption_properties`` (Parquet Modular Encryption), ``use_threads``
      (compress pages on worker threads), ``fsync``.
    * ``schema`` (the file's schema when it is not the table's own), ``progress`` (a callable
      ``progress(rows_written, total_rows)`` called after each row group), ``metadata_collector`` (a list:
      the written file's :class:`~pqbloom.file.metadata.FileMetadata` is appended, as pyarrow's).
    * ``use_content_defined_chunking`` must be False (pqbloom cuts pages by size).

    ``where`` may be a URL or a path on ``filesystem=`` (fsspec or pyarrow): the file is written under a
    temporary name beside the target and moved into place on success (see
    :class:`pqbloom.io.remote.RemoteSink` for what that guarantees on object stores).
    """
    if use_content_defined_chunking:
        raise UnsupportedError("use_content_defined_chunking: pqbloom cuts pages by size, not by content")
    options = options_from(locals())
    t = Table.coerce(table, schema)
    with ParquetWriter.with_options(where, schema or t.schema, options, filesystem=filesystem) as w:
        w.write_table(t, progress=progress)
    if metadata_collector is not None:
        metadata_collector.append(w.metadata)


def write_metadata(schema: Any, where: Destination, metadata_collector: Sequence[FileMetadata] | None = None,
                   filesystem: Any = None, *, version: str | None = "2.6", store_schema: bool = True,
                   key_value_metadata: dict[str, str] | None = None) -> None:
    """Write a metadata-only Parquet file (a footer and no rows), as pyarrow's ``write_metadata``: the
    ``_common_metadata`` of a dataset (``schema`` alone: a pyarrow or pqbloom schema, or data whose schema
    to take), or its ``_metadata`` (with ``metadata_collector``, the :class:`FileMetadata` of the files the
    dataset holds, as ``write_table`` / ``write_to_dataset`` collect them: their row groups are appended,
    each column chunk naming its file by ``file_path``). The files' schemas must be ``schema``'s (a
    :class:`~pqbloom.errors.SchemaError` says which differ). ``version``, ``store_schema`` and
    ``key_value_metadata`` as for :func:`write_table`."""
    ParquetWriter(where, schema, filesystem=filesystem, version=version, store_schema=store_schema,
                  key_value_metadata=key_value_metadata).close()
    if metadata_collector:
        metadata = read_metadata(where, filesystem=filesystem)
        for m in metadata_collector:
            metadata.append_row_groups(m)
        metadata.write_metadata_file(where, filesystem=filesystem)
