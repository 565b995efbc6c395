"""Reading many Parquet files as one table: the files of a directory (:func:`read_dataset`) or any list of
:class:`~pqbloom.datasets.discover.Fragment` (:func:`read_fragments`, what :class:`~pqbloom.datasets.Dataset` reads).

``read_dataset(directory, columns=None, filters=None, explain=None)`` (also reached through
``pqbloom.read_table(directory, ...)``) reads every data file under ``directory``, found as
:mod:`pqbloom.datasets.discover` finds them (hidden ``_``/``.`` names skipped, Hive ``key=value``
directories as partition columns):

* partition columns come after the file's columns;
* a filter is first evaluated on each file's partition values: files it rules out are never
  opened (``Explain.files_pruned_partition``); what remains is pushed into each file (statistics,
  Bloom filters, dictionaries, page index; see :mod:`pqbloom.scan`);
* files are read concurrently by a small thread pool; rows keep the sorted file order;
* every file that is opened must agree with the first one on the columns being read: the same
  names (in any order; rows come out in the first file's column order) with the same types
  (nullability aside). A column missing from a file, a column only some files have, or a type
  mismatch raises :class:`~pqbloom.errors.SchemaError` naming both files and the column. Missing
  columns are not read as nulls (Spark's ``mergeSchema``) because a typo'd or stray file would then
  silently produce nulls; to read the columns common to evolving files, pass ``columns=``: only
  the requested columns are checked.
"""

from __future__ import annotations

import contextvars
import os
from collections.abc import Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import numpy as np

from ..arrays import BinaryArray
from ..crypto import FileDecryptionProperties
from ..errors import ColumnNotFoundError, ParquetError, SchemaError
from ..file.footer import FOOTER_TAIL_READ
from ..file.read_options import reader_options
from ..file.reader import FileReader
from ..format import PhysicalType
from ..io.remote import MAX_CONCURRENCY, RemoteRangeReader, open_readers, prefetch_many
from ..io.sources import RemoteLocation
from ..scan import (
    BoundFilter,
    Const,
    Explain,
    Expr,
    FilterLike,
    could_be_true,
    read_filtered,
    substitute,
    to_expression,
)
from ..scan.prune import statistics_pass
from ..scan.prune_row_group import bloom_probe_requests
from ..schema import Field, make_field
from ..table import Column, Table
from .discover import Fragment, discover, discover_remote, partition_types, partition_value

__all__ = ["SchemaCheck", "open_fragment", "prune_fragments", "read_dataset", "read_fragments"]

#: files of a remote dataset opened (footers fetched and held) at once
REMOTE_BATCH = 256


def open_fragment(fr: Fragment, remote: RemoteLocation | None) -> str | RemoteRangeReader:
    """What a :class:`~pqbloom.file.reader.FileReader` opens for ``fr``: its path, or a reader of it on
    the filesystem of ``remote`` (the dataset's remote directory or file)."""
    if remote is None:
        return fr.path
    return RemoteRangeReader(remote.fs, fr.path, size=fr.size, name=fr.path)


def _open_remote(root: RemoteLocation, frags: Sequence[Fragment], filters: Sequence[Expr | None],
                 **kwargs: Any) -> dict[str, FileReader]:
    """Open every file of a remote dataset in three concurrent waves: the sizes the listing did not give,
    the footers (tail and leading magic of every file in one round trip), then the Bloom probes of every
    file, so that reading each file afterwards finds its probes already fetched."""
    readers = open_readers(root.fs, [(fr.path, fr.size) for fr in frags])
    prefetch_many([(r, [(r.size - min(r.size, FOOTER_TAIL_READ), min(r.size, FOOTER_TAIL_READ))]
                    + ([(0, 4)] if r.size > FOOTER_TAIL_READ else [])) for r in readers], what="footer")
    opened: dict[str, FileReader] = {}
    try:
        for fr, r in zip(frags, readers):
            opened[fr.path] = FileReader(r, **kwargs)
        wants = []
        for fr, e in zip(frags, filters):
            pf = opened[fr.path]
            try:
                bound = BoundFilter(pf, to_expression(e))
                wants.append((pf.range_reader, bloom_probe_requests(bound, statistics_pass(bound, Explain()))))
            except (ParquetError, KeyError, TypeError, ValueError):
                continue  # the file's own read reports it
        prefetch_many([(r, w) for r, w in wants if w and isinstance(r, RemoteRangeReader)], what="Bloom filter")
    except BaseException:
        for pf in opened.values():
            pf.close()
        raise
    return opened


class SchemaCheck:
    """Checks that the files of one dataset agree on the type of every column read.

    The first file :meth:`add`-ed is the reference. With ``columns`` None every file must have
    exactly the reference's columns; otherwise only the requested ``columns`` (top-level names;
    a dotted path checks its top-level field) must be present with the reference's type.
    Types are compared as strings, so callers choose what "same type" means (pqbloom's
    :attr:`~pqbloom.schema.Field.type_name`, or the Spark type the data source reports).
    """

    def __init__(self, columns: Sequence[str] | None = None) -> None:
        self.columns = None if columns is None else list(columns)
        self.reference: str | None = None
        self.types: dict[str, str] = {}

    def add(self, path: str, types: Mapping[str, str]) -> None:
        """Check one file's ``{column: type}``; raises SchemaError naming both files and the column."""
        if self.reference is None:
            self.reference, self.types = path, dict(types)
            return
        ref = self.reference
        if self.columns is None:
            names: list[str] = list(self.types)
            extra = [n for n in types if n not in self.types]
            if extra:
                raise SchemaError(f"column {extra[0]!r} is in {path} but not in {ref} (files of one dataset "
                                  f"must have the same columns; select common ones with columns=)")
        else:
            names = []
            for c in self.columns:
                top = _top(c, self.types)
                if top not in self.types and _top(c, types) in types:
                    raise SchemaError(f"column {c!r} is in {path} but not in {ref} (files of one dataset must "
                                      f"have the same columns)")
                if top in self.types and top not in names:
                    names.append(top)
        for n in names:
            if n not in types:
                raise SchemaError(f"column {n!r} is in {ref} but not in {path} (files of one dataset must "
                                  f"have the same columns; select common ones with columns=)")
            if types[n] != self.types[n]:
                raise SchemaError(f"column {n!r} is {self.types[n]} in {ref} but {types[n]} in {path}")


def _top(column: str, types: Mapping[str, str]) -> str:
    """The top-level field a requested column (maybe a dotted path) belongs to."""
    return column if column in types else column.split(".", 1)[0]




def _constant_column(f: Field, value: Any, n: int) -> Column:
    if value is None:
        vals: Any = np.zeros(n, np.int64) if f.physical_type == PhysicalType.INT64 else \
            BinaryArray(np.zeros(n + 1, np.int64), np.zeros(0, np.uint8))
        return Column(f, vals, np.ones(n, bool) if n else None)
    if isinstance(value, int):
        return Column(f, np.full(n, value, np.int64), None)
    b = str(value).encode("utf-8")
    data = np.frombuffer(b * n, np.uint8) if n and b else np.zeros(0, np.uint8)
    return Column(f, BinaryArray(np.arange(n + 1, dtype=np.int64) * len(b), data), None)


def prune_fragments(frags: Sequence[Fragment], expr: Expr | None
                    ) -> tuple[dict[str, Field], list[tuple[Fragment, dict[str, Any], Expr | None]], int]:
    """The partition columns of ``frags`` (typed: :func:`partition_types`), the fragments ``expr`` may
    hold rows of (each with its typed partition values and what is left of ``expr`` once they are
    substituted; None when nothing is left to test), and how many fragments the partition values ruled out."""
    ptypes = partition_types(frags)
    pfields = {k: make_field(k, t) for k, t in ptypes.items()}
    todo: list[tuple[Fragment, dict[str, Any], Expr | None]] = []
    pruned = 0
    for fr in frags:
        env = {k: partition_value(fr.partitions.get(k), t) for k, t in ptypes.items()}
        e = expr
        if e is not None and pfields:
            e = substitute(e, env)
            if not could_be_true(e):
                pruned += 1
                continue
            if isinstance(e, Const):
                e = None
        todo.append((fr, env, e))
    return pfields, todo, pruned


def read_dataset(root: str | os.PathLike[str] | RemoteLocation, columns: Sequence[str] | None = None, *,
                 filters: FilterLike = None, explain: Explain | None = None, max_workers: int = 8,
                 decryption_properties: FileDecryptionProperties | None = None, verify_checksums: bool = True,
                 memory_limit: int | None = None, coerce_int96_timestamp_unit: str | None = None,
                 thrift_string_size_limit: int | None = None, thrift_container_size_limit: int | None = None,
                 read_dictionary: Sequence[str] | None = None) -> Table:
    """Read a directory of Parquet files (see the module doc); the reader options (``decryption_properties``
    to ``read_dictionary``) go to each file's reader, as :class:`pqbloom.ParquetFile`'s.
    A remote directory (``root`` a :class:`~pqbloom.io.sources.RemoteLocation`) is listed once and its
    files opened together (:func:`_open_remote`), then read by up to 64 workers."""
    remote = root if isinstance(root, RemoteLocation) else None
    frags = discover(root) if not isinstance(root, RemoteLocation) else discover_remote(root)
    if not frags:
        raise FileNotFoundError(f"no data files under {root.name if isinstance(root, RemoteLocation) else os.fspath(root)!r}")
    return read_fragments(frags, columns, filters=filters, explain=explain, max_workers=max_workers, remote=remote,
                          **reader_options(
                          decryption_properties=decryption_properties, verify_checksums=verify_checksums, memory_limit=memory_limit,
                          coerce_int96_timestamp_unit=coerce_int96_timestamp_unit, thrift_string_size_limit=thrift_string_size_limit,
                          thrift_container_size_limit=thrift_container_size_limit, read_dictionary=read_dictionary))


def read_fragments(frags: Sequence[Fragment], columns: Sequence[str] | None = None, *, filters: FilterLike = None,
                   explain: Explain | None = None, max_workers: int = 8, remote: RemoteLocation | None = None,
                   decryption_properties: FileDecryptionProperties | None = None, verify_checksums: bool = True,
                   memory_limit: int | None = None, coerce_int96_timestamp_unit: str | None = None,
                   thrift_string_size_limit: int | None = None, thrift_container_size_limit: int | None = None,
                   read_dictionary: Sequence[str] | None = None) -> Table:
    """Read the data files ``frags`` (at least one) as one table, their partition values as columns (see
    the module doc); the reader options go to each file's reader, as in :func:`read_dataset`. With
    ``remote`` the fragments are files of that remote directory, opened in waves (:func:`_open_remote`)."""
    kwargs = reader_options(
        decryption_properties=decryption_properties, verify_checksums=verify_checksums, memory_limit=memory_limit,
        coerce_int96_timestamp_unit=coerce_int96_timestamp_unit, thrift_string_size_limit=thrift_string_size_limit,
        thrift_container_size_limit=thrift_container_size_limit, read_dictionary=read_dictionary)
    expr = to_expression(filters)
    pfields, todo, pruned = prune_fragments(frags, expr)
    ex = Explain(filter=str(expr) if expr is not None else "")
    ex.files_total = len(frags)
    ex.files_pruned_partition = pruned

    def file_columns(pf: FileReader) -> list[str]:
        names = [f.name for f in pf.table_schema]  # top-level fields (structs, lists, maps whole)
        if columns is None:
            return [n for n in names if n not in pfields]
        return [c for c in columns if c not in pfields]

    def read_one(item: tuple[Fragment, dict[str, Any], Expr | None]) -> tuple[Table | None, Explain,
                                                                               dict[str, str]]:
        fr, env, e = item
        sub = Explain()
        with opened.pop(fr.path, None) or FileReader(fr.path, **kwargs) as pf:
            types = {f.name: f.type_name for f in pf.table_schema if f.name not in pfields}
            want = file_columns(pf)
            if any(_top(c, types) not in types for c in want):
                return None, sub, types  # a requested column is missing: the schema check reports it
            # the footer's pandas metadata and Arrow types go with the rows (to_pandas rebuilds dtypes from them);
            # no dictionary pages are fetched for it ([]), as in a filtered read of one file
            t = pf.with_file_metadata(read_filtered(pf, want, e, explain=sub, io_from_open=True), [])
        n = t.num_rows
        extra = {k: _constant_column(pfields[k], env[k], n) for k in pfields}
        names = [c.field.name for c in t.columns] + [k for k in pfields if k not in t.column_names]
        if columns is not None:
            names = list(columns)
        cols = {c.field.name: c for c in t.columns}
        cols.update({k: v for k, v in extra.items() if k not in cols})
        return Table([cols[nm] for nm in names], t.metadata, t.arrow_schema), sub, types

    opened: dict[str, FileReader] = {}

    def read_all(items: list[tuple[Fragment, dict[str, Any], Expr | None]]) -> list[Any]:
        workers = max(1, min(max_workers if remote is None else MAX_CONCURRENCY, len(items)))
        if workers == 1:
            return [read_one(it) for it in items]
        # each worker runs in a copy of this context, so a read_table memory_limit (pqbloom.limits)
        # is one budget shared by every file of the call
        ctx = contextvars.copy_context()
        with ThreadPoolExecutor(max_workers=workers, thread_name_prefix="pqbloom-dataset") as pool:
            return list(pool.map(lambda item: ctx.copy().run(read_one, item), items))

    results: list[Any] = []
    try:
        if remote is None:
            results = read_all(todo)
        else:  # opened in batches: the footers held at once stay bounded
            for i in range(0, len(todo), REMOTE_BATCH):
                batch = todo[i:i + REMOTE_BATCH]
                opened.update(_open_remote(remote, [fr for fr, _, _ in batch], [e for _, _, e in batch], **kwargs))
                results += read_all(batch)
    finally:
        for pf in opened.values():  # left unread when another file's read failed first
            pf.close()
    check = SchemaCheck(None if columns is None else [c for c in columns if c not in pfields])
    for (fr, _, _), (_, _, types) in zip(todo, results):
        check.add(fr.path, types)
    read: list[tuple[Table, Explain]] = []
    for (fr, _, _), (t, sub, types) in zip(todo, results):
        if t is None:  # the check passed, so no file has this column
            missing = [c for c in columns or () if c not in pfields and _top(c, types) not in types]
            raise ColumnNotFoundError(f"no column {missing[0]!r} in {fr.path}; columns are {list(types)}")
        read.append((t, sub))
    if columns is None and read:  # same columns, maybe in another order: use the first file's
        order = read[0][0].column_names
        read = [(t if t.column_names == order else t.select(order), sub) for t, sub in read]
    for _, sub in read:
        ex.add(sub)
    ex.files_total = len(frags)
    if ex.files_pruned_partition:
        ex.notes.append(f"{ex.files_pruned_partition} file(s) skipped by partition values were not opened")
    if explain is not None:
        explain.add(ex)
    tables = [t for t, _ in read if t.num_rows]
    if tables:
        return tables[0] if len(tables) == 1 else Table.concat(tables)
    if read:
        return read[0][0]
    # every file pruned: an empty table with the schema of the first file (footer only)
    with FileReader(open_fragment(frags[0], remote), **kwargs) as pf:
        empty = pf.empty_table(file_columns(pf))
    cols = {c.field.name: c for c in empty.columns}
    cols.update({k: _constant_column(f, None, 0) for k, f in pfields.items() if k not in cols})
    names = list(columns) if columns is not None else list(cols)
    return Table([cols[nm] for nm in names])
