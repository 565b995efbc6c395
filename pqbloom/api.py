"""The user's entry points: :class:`ParquetFile`, :func:`read_table`, :func:`read_metadata`,
:func:`read_schema`, :func:`write_table` (and :class:`ParquetWriter`, from :mod:`pqbloom.file.writer`).

:class:`ParquetFile` is a :class:`pqbloom.file.reader.FileReader` (footer, columns, chunks, pages,
Bloom filters, unfiltered reads) that adds what needs the filter engine: ``filters=`` and
``explain=`` on :meth:`ParquetFile.read` and :meth:`ParquetFile.iter_batches` dispatch to
:mod:`pqbloom.scan`, which drives the file through its public methods.
"""

from __future__ import annotations

import os
from collections.abc import Iterator, Sequence
from typing import TYPE_CHECKING, Any, cast

from .datasets import Dataset, is_dataset_source, read_dataset, read_source
from .file.metadata import FileMetadata
from .file.reader import FileReader, Source
from .file.writer import Destination, ParquetWriter
from .io.sources import local_source, locate, open_location, open_source
from .limits import memory_budget, run_limited
from .scan import Explain, Expr, iter_filtered_batches, read_filtered
from .schema import Schema
from .table import Table
from .table.arrow_file_schema import cast_to_schema

if TYPE_CHECKING:  # an annotation only
    from .crypto import FileDecryptionProperties

__all__ = ["ParquetFile", "ParquetWriter", "Filters", "read_table", "read_metadata", "read_schema", "write_table"]

#: a filter: a :func:`pqbloom.field` expression, a pyarrow-style DNF list of tuples, or a filter string
Filters = Expr | str | Sequence[Any]


class ParquetFile(FileReader):
    """A Parquet file opened for reading (path, bytes, or seekable binary file object).

    ``verify_checksums`` checks page CRCs where the writer stored them. ``memory_limit`` (bytes) caps
    what each read call (``read``, ``read_row_group``, each batch of ``iter_batches``) may decompress
    and decode; past it the call raises :class:`~pqbloom.errors.MemoryLimitError` before allocating
    (see :mod:`pqbloom.limits`). None, the default, sets no ceiling.

    ``source`` may be a URL (``s3://``, ``gs://``, ``http(s)://``, ``memory://``, ``file://``...; fsspec,
    ``pip install pqbloom[remote]``) or a path on ``filesystem`` (an fsspec or pyarrow filesystem):
    such files are read by explicit range requests (see :mod:`pqbloom.io.remote`).
    """

    def __init__(self, source: Source, *, filesystem: Any = None, **kwargs: Any) -> None:
        super().__init__(open_source(source, filesystem) if filesystem is not None else source, **kwargs)

    def read(self, columns: Sequence[str] | None = None, *, filters: Filters | None = None,
             explain: Explain | None = None, use_threads: bool = True) -> Table:
        """Read the whole file (or the named columns) into a Table.

        ``filters`` (a :func:`pqbloom.field` expression, a pyarrow-style DNF list or a filter string)
        keeps only matching rows, pruning row groups and pages first (see :mod:`pqbloom.scan`);
        pass a :class:`pqbloom.Explain` as ``explain`` to have it filled with what the read did.
        ``use_threads`` (as pyarrow's) decodes column chunks in parallel (a filtered read: its row
        groups).
        """
        if filters is None and explain is None:
            return super().read(columns, use_threads=use_threads)
        with memory_budget(self.memory_limit):
            # a filtered read keeps its pruned row groups unread: no dictionary pages are fetched for it
            return self.with_file_metadata(read_filtered(self, columns, filters, explain=explain,
                                                         use_threads=use_threads), [])

    def iter_batches(self, batch_size: int = 65536, columns: Sequence[str] | None = None, *,
                     row_groups: Sequence[int] | None = None, use_threads: bool = True,
                     filters: Filters | None = None, explain: Explain | None = None) -> Iterator[Table]:
        """Yield Tables of at most ``batch_size`` rows, decoding page by page.

        Memory stays bounded by the batch, one decoded page per column and the compressed bytes of the
        current column chunks; batches never span row groups.

        ``filters`` / ``explain`` as in :meth:`read`: then one row group's matching rows are decoded at a
        time (see :mod:`pqbloom.scan`) and ``explain`` is complete once iteration ends. ``row_groups``
        (as pyarrow's) reads only those row groups, in that order (not with ``filters``).
        """
        if filters is None and explain is None:
            return super().iter_batches(batch_size, columns, row_groups=row_groups, use_threads=use_threads)
        if row_groups is not None:
            raise ValueError("iter_batches takes row_groups or filters, not both: the filter chooses the row groups")
        if batch_size <= 0:
            raise ValueError("batch_size must be positive")
        return run_limited(self.memory_limit, self._iter_filtered(batch_size, columns, filters, explain))

    def _iter_filtered(self, batch_size: int, columns: Sequence[str] | None, filters: Filters | None,
                       explain: Explain | None) -> Iterator[Table]:
        yield from iter_filtered_batches(self, batch_size, columns, filters, explain=explain)


def read_table(source: Source | Sequence[str | os.PathLike[str]] | Dataset, columns: Sequence[str] | None = None,
               *, filters: Filters | None = None, explain: Explain | None = None, use_threads: bool = True,
               schema: Any = None, filesystem: Any = None, **kwargs: Any) -> Table:
    """Read a Parquet file, or many (a directory, a list of files, a glob pattern or a
    :class:`~pqbloom.datasets.Dataset`: see :mod:`pqbloom.datasets.sources`), into a Table.

    ``columns`` selects by name; ``filters`` / ``explain`` as in :meth:`ParquetFile.read` (here the
    explained IO includes the footer). A filter on a leaf inside a list or map
    (``field("tags.list.element") == 5``) keeps the rows where some element satisfies it. Other keyword
    arguments go to :class:`ParquetFile` (``decryption_properties``, ``verify_checksums``,
    ``memory_limit``; one ceiling for the whole call). ``use_threads`` as in :meth:`ParquetFile.read`
    (a directory's files are read by the dataset reader's own workers). ``schema`` (a pyarrow or
    pqbloom schema) reads as pyarrow's ``schema=`` does: its fields in its order, cast to its types,
    missing ones null (see :func:`pqbloom.table.arrow_file_schema.cast_to_schema`; needs pyarrow).

    ``source`` may be a URL or a path on ``filesystem`` (see :class:`ParquetFile`); a remote directory (a
    URL ending in ``/``, or one the filesystem says is a directory) is listed once, its footers fetched
    together and the Bloom probes of all its files sent at once.
    """
    if schema is not None:
        wanted = schema_columns(source, schema, columns, kwargs) if filesystem is None else None
        table = read_table(source, wanted, filters=filters,
                           explain=explain, use_threads=use_threads, filesystem=filesystem, **kwargs)
        return cast_to_schema(table, schema, columns)
    loc = locate(source, filesystem)  # a remote file or directory (None: a local source)
    if loc is not None and loc.is_dir:  # the dataset reader lists the directory and opens the files itself
        with memory_budget(kwargs.get("memory_limit")):
            return read_dataset(loc, columns, filters=filters, explain=explain, **kwargs)
    if loc is None:
        source = local_source(source, filesystem)  # file:// URLs: local paths
        if is_dataset_source(source):  # a directory, list of files, glob or Dataset: the dataset reader's job
            with memory_budget(kwargs.get("memory_limit")):
                return read_source(source, columns, filters=filters, explain=explain, **kwargs)
    # one ceiling for the whole call: the footer's read and decode are charged with the rows
    with memory_budget(kwargs.get("memory_limit")), \
            ParquetFile(cast(Source, source) if loc is None else open_location(loc), **kwargs) as pf:
        if filters is None and explain is None:
            return pf.read(columns, use_threads=use_threads)
        return pf.with_file_metadata(read_filtered(pf, columns, filters, explain=explain, io_from_open=True,
                                                   use_threads=use_threads), [])


def schema_columns(source: Any, schema: Any, columns: Sequence[str] | None, kwargs: dict[str, Any]
                   ) -> list[str] | None:
    """What to read of ``source`` for ``read_table(schema=)``: the wanted names the file has (a
    directory: all columns, chosen after reading)."""
    names = list(columns) if columns is not None else list(schema.names)
    if isinstance(source, (str, os.PathLike)) and not os.path.isfile(source):
        return None  # a directory, glob or URL: all columns, chosen after reading
    if not isinstance(source, (str, os.PathLike, bytes, bytearray, memoryview)):
        return None  # a file object or a list of files: read whole, chosen after reading
    with ParquetFile(source, **kwargs) as pf:
        have = set(pf.table_schema.names)
    return [n for n in names if n in have]


def read_metadata(source: Source, *, decryption_properties: FileDecryptionProperties | None = None,
                  verify_checksums: bool = True, memory_limit: int | None = None, filesystem: Any = None) -> FileMetadata:
    """The footer of a Parquet file as :class:`~pqbloom.file.metadata.FileMetadata` (row groups, column
    chunks, statistics; keyword arguments as for :class:`ParquetFile`)."""
    with ParquetFile(source, decryption_properties=decryption_properties, verify_checksums=verify_checksums,
                     memory_limit=memory_limit, filesystem=filesystem) as pf:
        return pf.metadata


def read_schema(source: Source, *, decryption_properties: FileDecryptionProperties | None = None,
                verify_checksums: bool = True, memory_limit: int | None = None, filesystem: Any = None) -> Schema:
    """The flat schema of a Parquet file: one field per leaf column (keyword arguments as for
    :class:`ParquetFile`)."""
    with ParquetFile(source, decryption_properties=decryption_properties, verify_checksums=verify_checksums,
                     memory_limit=memory_limit, filesystem=filesystem) as pf:
        return pf.schema


def write_table(table: Any, where: Destination, **options: Any) -> None:
    """Write ``table`` (a pqbloom Table, dict of columns, pandas or polars DataFrame, or pyarrow Table) to
    ``where``.

    Options follow pyarrow's names: ``compression``, ``compression_level``, ``sorting_columns``,
    ``version`` (None, the default, writes the types of ``"2.6"`` in a footer of version 1, as pqbloom
    always has), ``row_group_size``, ``data_page_size``,
    ``data_page_version``, ``use_dictionary``, ``column_encoding``, ``write_statistics``,
    ``write_page_index``, ``write_page_checksum``, ``bloom_filter_options``, ``bloom_filter_position``,
    ``key_value_metadata``, ``encryption_properties``, ``use_threads`` (all of :class:`pqbloom.WriterOptions`), and
    ``schema`` (the file's schema when it is not the table's own), and ``progress``, a callable
    ``progress(rows_written, total_rows)`` called after each row group.

    ``where`` may be a URL or a path on ``filesystem=`` (fsspec or pyarrow): the file is written under a
    temporary name beside the target and moved into place on success (see
    :class:`pqbloom.io.remote.RemoteSink` for what that guarantees on object stores).
    """
    schema = options.pop("schema", None)
    progress = options.pop("progress", None)
    t = Table.coerce(table, schema)
    with ParquetWriter(where, schema or t.schema, **options) as w:
        w.write_table(t, progress=progress)
