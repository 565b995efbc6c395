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
from typing import Any

from .crypto import FileDecryptionProperties
from .file.metadata import FileMetadata
from .file.reader import FileReader, Source
from .file.writer import Destination, ParquetWriter
from .limits import memory_budget, run_limited
from .scan import Explain, Expr, iter_filtered_batches, read_filtered
from .schema import Schema
from .table import Table
from .table.arrow_file_schema import cast_to_schema

__all__ = ["ParquetFile", "ParquetWriter", "Filters", "read_table", "read_metadata", "read_schema", "write_table"]

#: a filter: a :func:`pqbloom.field` expression, a pyarrow-style DNF list of tuples, or a filter string
Filters = Expr | str | Sequence[Any]


class ParquetFile(FileReader):
    """A Parquet file opened for reading (path, bytes, or seekable binary file object).

    ``verify_checksums`` checks page CRCs where the writer stored them. ``memory_limit`` (bytes) caps
    what each read call (``read``, ``read_row_group``, each batch of ``iter_batches``) may decompress
    and decode; past it the call raises :class:`~pqbloom.errors.MemoryLimitError` before allocating
    (see :mod:`pqbloom.limits`). None, the default, sets no ceiling.
    """

    def read(self, columns: Sequence[str] | None = None, *, filters: Filters | None = None,
             explain: Explain | None = None, use_threads: bool = True) -> Table:
        """Read the whole file (or the named columns) into a Table.

        ``filters`` (a :func:`pqbloom.field` expression, a pyarrow-style DNF list or a filter string)
        keeps only matching rows, pruning row groups and pages first (see :mod:`pqbloom.scan`);
        pass a :class:`pqbloom.Explain` as ``explain`` to have it filled with what the read did.
        ``use_threads`` (as pyarrow's) decodes column chunks in parallel; filtered reads decode in one
        thread for now.
        """
        if filters is None and explain is None:
            return super().read(columns, use_threads=use_threads)
        with memory_budget(self.memory_limit):
            # a filtered read keeps its pruned row groups unread: no dictionary pages are fetched for it
            return self.with_file_metadata(read_filtered(self, columns, filters, explain=explain), [])

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


def read_table(source: Source, columns: Sequence[str] | None = None, *, filters: Filters | None = None,
               explain: Explain | None = None, use_threads: bool = True, schema: Any = None,
               **kwargs: Any) -> Table:
    """Read a Parquet file, or a directory of them (:mod:`pqbloom.dataset`), into a Table.

    ``columns`` selects by name; ``filters`` / ``explain`` as in :meth:`ParquetFile.read` (here the
    explained IO includes the footer). A filter on a leaf inside a list or map
    (``field("tags.list.element") == 5``) keeps the rows where some element satisfies it. Other keyword
    arguments go to :class:`ParquetFile` (``decryption_properties``, ``verify_checksums``,
    ``memory_limit``; one ceiling for the whole call). ``use_threads`` as in :meth:`ParquetFile.read`
    (a directory's files are read by the dataset reader's own workers). ``schema`` (a pyarrow or
    pqbloom schema) reads as pyarrow's ``schema=`` does: its fields in its order, cast to its types,
    missing ones null (see :func:`pqbloom.table.arrow_file_schema.cast_to_schema`; needs pyarrow).
    """
    if schema is not None:
        table = read_table(source, schema_columns(source, schema, columns, kwargs), filters=filters,
                           explain=explain, use_threads=use_threads, **kwargs)
        return cast_to_schema(table, schema, columns)
    if isinstance(source, (str, os.PathLike)) and os.path.isdir(source):
        from .scan.dataset import read_dataset  # the dataset reader opens ParquetFiles itself

        with memory_budget(kwargs.get("memory_limit")):
            return read_dataset(source, columns, filters=filters, explain=explain, **kwargs)
    with ParquetFile(source, **kwargs) as pf, memory_budget(pf.memory_limit):
        if filters is None and explain is None:
            return pf.read(columns, use_threads=use_threads)
        return pf.with_file_metadata(read_filtered(pf, columns, filters, explain=explain, io_from_open=True), [])


def schema_columns(source: Source, schema: Any, columns: Sequence[str] | None, kwargs: dict[str, Any]
                   ) -> list[str] | None:
    """What to read of ``source`` for ``read_table(schema=)``: the wanted names the file has (a
    directory: all columns, chosen after reading)."""
    names = list(columns) if columns is not None else list(schema.names)
    if isinstance(source, (str, os.PathLike)) and os.path.isdir(source):
        return None
    if not isinstance(source, (str, os.PathLike, bytes, bytearray, memoryview)):
        return None  # a file object is opened once, by the read itself
    with ParquetFile(source, **kwargs) as pf:
        have = set(pf.table_schema.names)
    return [n for n in names if n in have]


def read_metadata(source: Source, *, decryption_properties: FileDecryptionProperties | None = None,
                  verify_checksums: bool = True, memory_limit: int | None = None) -> FileMetadata:
    """The footer of a Parquet file as :class:`~pqbloom.file.metadata.FileMetadata` (row groups, column
    chunks, statistics; keyword arguments as for :class:`ParquetFile`)."""
    with ParquetFile(source, decryption_properties=decryption_properties, verify_checksums=verify_checksums,
                     memory_limit=memory_limit) as pf:
        return pf.metadata


def read_schema(source: Source, *, decryption_properties: FileDecryptionProperties | None = None,
                verify_checksums: bool = True, memory_limit: int | None = None) -> Schema:
    """The flat schema of a Parquet file: one field per leaf column (keyword arguments as for
    :class:`ParquetFile`)."""
    with ParquetFile(source, decryption_properties=decryption_properties, verify_checksums=verify_checksums,
                     memory_limit=memory_limit) as pf:
        return pf.schema


def write_table(table: Any, where: Destination, **options: Any) -> None:
    """Write ``table`` (a pqbloom Table, dict of columns, pandas DataFrame or pyarrow Table) to ``where``.

    Options follow pyarrow's names: ``compression``, ``row_group_size``, ``data_page_size``,
    ``data_page_version``, ``use_dictionary``, ``column_encoding``, ``write_statistics``,
    ``write_page_index``, ``write_page_checksum``, ``bloom_filter_options``, ``bloom_filter_position``,
    ``key_value_metadata``, ``encryption_properties`` (all of :class:`pqbloom.WriterOptions`), and
    ``schema`` (the file's schema when it is not the table's own).
    """
    schema = options.pop("schema", None)
    t = Table.coerce(table, schema)
    with ParquetWriter(where, schema or t.schema, **options) as w:
        w.write_table(t)
