"""Writing a Hive-partitioned directory of Parquet files: :func:`write_to_dataset`, as pyarrow names it.

``write_to_dataset(table, "root", partition_cols=["country", "year"])`` writes one file per distinct
combination of the partition columns, under ``root/country=FR/year=2024/part-<uuid>-0.parquet``; the
partition columns live in the directory names, not in the files (what pyarrow, DuckDB, Spark and
:func:`pqbloom.read_table` on the directory read back as columns). ASCII characters are URI-escaped as
pyarrow escapes them (``"a b"`` -> ``a%20b``, ``"x/y"`` -> ``x%2Fy``); other characters are written as
they are (UTF-8), as Spark writes them, because Spark and Hive decode ``%XX`` one byte to one character
and would misread pyarrow's percent-encoded UTF-8 (``é`` -> ``%C3%A9`` reads back as ``Ã©`` in
Spark); pyarrow and DuckDB read both forms. A null value (and, as Hive and Spark do, an empty string)
is ``__HIVE_DEFAULT_PARTITION__``.

The filesystem side is kept to :class:`LocalTarget` (make directories, list, remove, a destination
for :class:`~pqbloom.file.writer.ParquetWriter`) so that another filesystem can stand in for it.
"""

from __future__ import annotations

import os
import uuid
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from datetime import date, datetime
from typing import Any, cast

import numpy as np

from ..encodings.dictionary import build_dictionary
from ..errors import SchemaError, UnsupportedError
from ..file.writer import ParquetWriter, options_from
from ..io.remote import RemoteSink
from ..io.sources import RemoteLocation, local_source, split_remote
from ..table import NestedColumn, Table
from .discover import HIVE_NULL, discover, discover_remote

__all__ = ["LocalTarget", "EXISTING_DATA_BEHAVIORS", "WrittenFile", "escape_path_name", "partition_dir",
           "partition_text", "split_by_keys", "write_to_dataset"]

#: what ``existing_data_behavior`` may be (pyarrow's names)
EXISTING_DATA_BEHAVIORS = ("overwrite_or_ignore", "error", "delete_matching")

# Characters Hive and Spark escape in partition directory names (ExternalCatalogUtils.escapePathName)
_HIVE_ESCAPE = frozenset('"#%\'*/:=?\\\x7f{[]^') | frozenset(chr(c) for c in range(0x20))
# What a URI keeps unescaped (RFC 3986 "unreserved"; Arrow's UriEscape keeps the same)
_URI_KEEP = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~")


def escape_path_name(text: str, style: str = "uri") -> str:
    """``text`` escaped for a directory name: ``"uri"`` as pyarrow escapes ASCII (every ASCII character
    but letters, digits and ``-._~`` percent-encoded; others kept: see the module doc), ``"hive"`` as
    Hive and Spark do (only ``/``, ``=``, ``%``, control characters and a few more)."""
    escape = _HIVE_ESCAPE if style == "hive" else None
    return "".join(
        f"%{ord(c):02X}" if (c in escape if escape is not None else (c < "\x80" and c not in _URI_KEEP)) else c
        for c in text)


def partition_text(value: Any, style: str = "uri") -> str:
    """The directory-name form of one partition value (escaped; see :func:`escape_path_name`)."""
    if value is None or value == "":
        return HIVE_NULL
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, datetime):
        text = value.isoformat(sep=" ")
    elif isinstance(value, date):
        text = value.isoformat()
    elif isinstance(value, bytes):
        try:
            text = value.decode("utf-8")
        except UnicodeDecodeError:
            raise SchemaError(f"partition value {value[:20]!r}... is not UTF-8 text") from None
    else:
        text = str(value)
    return escape_path_name(text, style)


def partition_dir(keys: Sequence[str], values: Sequence[Any], style: str = "uri") -> str:
    """``k1=v1/k2=v2`` (with ``os.sep``) for one combination of partition values."""
    return os.path.join(*(f"{escape_path_name(k, style)}={partition_text(v, style)}" for k, v in zip(keys, values)))


def split_by_keys(table: Table, keys: Sequence[str]) -> Iterator[tuple[tuple[Any, ...], Table]]:
    """``(key values, rows)`` for every distinct combination of ``keys`` in ``table``, in order of the
    combination's first row; rows keep their order (vectorized: one dictionary per key, one stable sort)."""
    n = table.num_rows
    if n == 0:
        return
    codes = np.zeros(n, np.int64)
    for k in keys:
        col = table.column(k)
        if isinstance(col, NestedColumn):
            raise SchemaError(f"partition column {k!r} is {col.field.type_name}: only primitive columns "
                              f"can partition a dataset")
        dictionary, idx = build_dictionary(col.dense(), col.field.physical_type)
        idx = idx.astype(np.int64)
        if col.mask is not None:  # dense() holds the non-null values only; nulls get a code of their own
            full = np.full(n, len(dictionary), np.int64)
            full[~col.mask] = idx
            idx = full
        codes = codes * (len(dictionary) + 1) + idx
    order = np.argsort(codes, kind="stable")
    sorted_codes = codes[order]
    starts = np.flatnonzero(np.r_[True, sorted_codes[1:] != sorted_codes[:-1]])
    ends = np.r_[starts[1:], n]
    firsts = order[starts]
    key_table = table.select(keys)
    grouped = table.take(order)  # one gather; each group is then a slice of it
    for g in np.argsort(firsts, kind="stable").tolist():  # groups in order of first appearance
        first = int(firsts[g])
        values = tuple(c.slice(first, 1).to_pylist()[0] for c in key_table.columns)
        yield values, grouped.slice(int(starts[g]), int(ends[g] - starts[g]))


class LocalTarget:
    """The local filesystem under a dataset's root: what :func:`write_to_dataset` needs of a filesystem."""

    def makedirs(self, path: str) -> None:
        """Create ``path`` and its parents (fine when it exists)."""
        os.makedirs(path, exist_ok=True)

    def data_files(self, root: str) -> list[str]:
        """The data files under ``root`` (hidden ``_``/``.`` names left out); empty when it does not exist."""
        if not os.path.isdir(root):
            return []
        return [fr.path for fr in discover(root)]

    def remove(self, path: str) -> None:
        """Delete one file."""
        os.remove(path)

    def join(self, *parts: str) -> str:
        """A path under the root."""
        return os.path.join(*parts)

    def destination(self, path: str) -> str:
        """What :class:`~pqbloom.file.writer.ParquetWriter` writes to for ``path`` (atomically)."""
        return path

    def size(self, path: str) -> int | None:
        """The size of a written file."""
        return os.path.getsize(path)


class RemoteTarget:
    """A dataset's root on an fsspec filesystem (a URL, or ``filesystem=``): files are written as
    :class:`~pqbloom.io.remote.RemoteSink` writes them (a temporary object moved into place)."""

    def __init__(self, fs: Any) -> None:
        self.fs = fs
        if not hasattr(self.fs, "rm"):
            raise TypeError("write_to_dataset takes an fsspec filesystem (or URL), not a pyarrow filesystem")

    def makedirs(self, path: str) -> None:
        """Create ``path`` where the filesystem has directories (object stores need none)."""
        self.fs.makedirs(path, exist_ok=True)

    def data_files(self, root: str) -> list[str]:
        """The data files under ``root`` (hidden names left out); empty when there is nothing."""
        try:
            return [fr.path for fr in discover_remote(RemoteLocation(self.fs, root, root, True))]
        except FileNotFoundError:
            return []

    def remove(self, path: str) -> None:
        """Delete one file."""
        self.fs.rm(path)

    def join(self, *parts: str) -> str:
        """A path under the root."""
        return "/".join(p.strip("/") if i else p.rstrip("/") for i, p in enumerate(parts)).replace(os.sep, "/")

    def destination(self, path: str) -> RemoteSink:
        """What :class:`~pqbloom.file.writer.ParquetWriter` writes to for ``path``."""
        return RemoteSink(self.fs, path)

    def size(self, path: str) -> int | None:
        """The size of a written file (None when the filesystem does not say)."""
        try:
            return int(self.fs.size(path))
        except (OSError, TypeError, ValueError):
            return None


@dataclass(frozen=True)
class WrittenFile:
    """One file :func:`write_to_dataset` wrote, as pyarrow's ``file_visitor`` gets it: its ``path``, its
    footer (``metadata``, a :class:`~pqbloom.file.metadata.FileMetadata`) and its ``size`` in bytes."""

    path: str
    metadata: Any
    size: int | None


def write_to_dataset(table: Any, root_path: str | os.PathLike[str], partition_cols: Sequence[str] | None = None, *,
                     filesystem: Any = None, schema: Any = None, partitioning: Any = None,
                     basename_template: str | None = None, use_threads: bool | None = None,
                     file_visitor: Callable[[WrittenFile], None] | None = None,
                     existing_data_behavior: str | None = None, metadata_collector: list[Any] | None = None,
                     max_partitions: int = 1024, max_rows_per_file: int = 0, max_rows_per_group: int | None = None,
                     min_rows_per_group: int = 0, max_open_files: int = 1024, create_dir: bool = True,
                     version: str | None = "2.6", use_dictionary: bool | list[str] = True,
                     compression: str | dict[str, str] | None = "snappy", write_statistics: bool | list[str] = True,
                     use_deprecated_int96_timestamps: bool | None = None, coerce_timestamps: str | None = None,
                     allow_truncated_timestamps: bool = False, data_page_size: int | None = None,
                     flavor: str | None = None, compression_level: int | dict[str, int] | None = None,
                     use_byte_stream_split: bool | list[str] = False, column_encoding: dict[str, str] | None = None,
                     data_page_version: str = "1.0", use_compliant_nested_type: bool = True,
                     encryption_properties: Any = None, write_batch_size: int | None = None,
                     dictionary_pagesize_limit: int | None = None, store_schema: bool = True,
                     write_page_index: bool = True, write_page_checksum: bool = False, sorting_columns: Any = None,
                     store_decimal_as_integer: bool | None = None, write_time_adjusted_to_utc: bool = False,
                     max_rows_per_page: int | None = None, bloom_filter_options: dict[str, Any] | None = None,
                     row_group_size: int | None = None, max_row_group_bytes: int | None = None,
                     bloom_filter_position: str = "after_row_group", bloom_filter_skip_dictionary: bool = False,
                     key_value_metadata: dict[str, str] | None = None, statistics_truncate_length: int = 64,
                     fsync: bool = False) -> None:
    """Write ``table`` (anything :func:`pqbloom.write_table` accepts) as a Hive-partitioned dataset under
    ``root_path``, as pyarrow's ``write_to_dataset`` (which returns None: ``file_visitor`` or
    ``metadata_collector`` tell the files written).

    ``partition_cols`` name the primitive columns whose values become ``key=value`` directories (in that
    order); they are left out of the files. Without them one file is written in ``root_path``.
    ``partitioning``: None, or the same list of names as ``partition_cols`` (pyarrow's directory
    partitioning without ``key=`` and its ``Partitioning`` objects are not supported).
    ``basename_template`` names each file (``{i}`` numbers the files of a directory from 0; default
    ``part-<uuid>-{i}.parquet``, a new uuid per call, so earlier files are never overwritten).
    ``existing_data_behavior`` as in pyarrow: ``"overwrite_or_ignore"`` (the default; None means it) keeps
    what is there, ``"error"`` refuses to write when ``root_path`` holds data files, ``"delete_matching"``
    deletes the data files already in the partition directories this call writes to (after the new files
    are in place). ``max_rows_per_file`` (0: no limit) splits a partition's rows over several files,
    ``max_rows_per_group`` caps the row groups (as ``row_group_size``), ``max_partitions`` (default 1024, as
    pyarrow) refuses to write more partition directories. ``file_visitor(written)`` is called for each file
    (a :class:`WrittenFile`: ``path``, ``metadata``, ``size``); ``metadata_collector`` (a list) gets each
    file's :class:`~pqbloom.file.metadata.FileMetadata`, its ``file_path`` relative to ``root_path``, as
    pyarrow's (for :func:`pqbloom.write_metadata`). ``use_threads``, ``min_rows_per_group``,
    ``max_open_files`` and ``create_dir`` are accepted without effect.

    Every other keyword is a :func:`pqbloom.write_table` option (``compression``, ``row_group_size``,
    ``bloom_filter_options``...), applied to each file. If a file fails, the files this call already wrote
    are removed. ``root_path`` may be a URL or a path on ``filesystem`` (fsspec): the files are then
    written as :func:`pqbloom.write_table` writes to such a destination.
    """
    del use_threads, min_rows_per_group, max_open_files, create_dir  # hints without an effect here
    options = options_from(locals())
    if max_rows_per_group is not None:
        options.row_group_size = min(max_rows_per_group, options.row_group_rows)
    existing_data_behavior = existing_data_behavior or "overwrite_or_ignore"
    if existing_data_behavior not in EXISTING_DATA_BEHAVIORS:
        raise ValueError(f"existing_data_behavior must be one of {EXISTING_DATA_BEHAVIORS}, "
                         f"got {existing_data_behavior!r}")
    if partitioning is not None and (not isinstance(partitioning, (list, tuple)) or
                                     list(partitioning) != list(partition_cols or partitioning)):
        raise UnsupportedError("partitioning: pqbloom writes Hive directories (key=value) of partition_cols; "
                               "pass the partition columns as partition_cols")
    if partitioning is not None and not partition_cols:
        raise UnsupportedError("partitioning without partition_cols names directories by values only "
                               "(pyarrow's DirectoryPartitioning), which pqbloom does not write; use partition_cols")
    if max_rows_per_file < 0:
        raise ValueError("max_rows_per_file must be 0 (no limit) or positive")
    template = basename_template or f"part-{uuid.uuid4().hex}-{{i}}.parquet"
    if "{i}" not in template:
        raise ValueError("basename_template must contain '{i}'")
    remote = split_remote(root_path, filesystem)  # (fsspec filesystem, path, name) of a remote root
    fs: LocalTarget | RemoteTarget = LocalTarget() if remote is None else RemoteTarget(remote[0])
    root = local_source(os.fspath(root_path), filesystem) if remote is None else remote[1].rstrip("/")
    keys = list(partition_cols or [])
    t = Table.coerce(table, schema)
    missing = [k for k in keys if k not in t.column_names]
    if missing:
        raise SchemaError(f"partition column {missing[0]!r} is not in the table (columns: {t.column_names})")
    if len(set(keys)) != len(keys):
        raise ValueError(f"partition_cols repeats a column: {keys}")
    hidden = [k for k in keys if k.startswith(("_", "."))]
    if hidden:  # pyarrow, Spark, DuckDB's hive reader and pqbloom skip such directories: the rows would vanish
        raise ValueError(f"partition column {hidden[0]!r} starts with '_' or '.': readers treat its "
                         "directories as hidden and would skip the data; rename the column")
    data_cols = [c for c in t.column_names if c not in keys]
    if keys and not data_cols:
        raise ValueError("partition_cols cannot name every column: no data would be left to write")
    if existing_data_behavior == "error" and fs.data_files(root):
        raise FileExistsError(f"{root!r} already holds data files (existing_data_behavior='error')")

    if keys:
        groups: list[tuple[str, Table]] = [
            (fs.join(root, partition_dir(keys, values)), part.select(data_cols))
            for values, part in split_by_keys(t, keys)]
        if len(groups) > max_partitions:
            raise ValueError(f"the data has {len(groups)} partitions, more than max_partitions={max_partitions}")
    else:
        groups = [(root, t)]
    file_schema = None if schema is None or keys else schema
    written: list[str] = []
    counters: dict[str, int] = {}  # {i} numbers a directory's files (two groups may share one: null and "")
    try:
        for directory, part in groups:
            fs.makedirs(directory)
            step = max_rows_per_file or max(part.num_rows, 1)
            for start in range(0, max(part.num_rows, 1), step):
                rows = part.slice(start, step)
                i = counters[directory] = counters.get(directory, -1) + 1
                path = fs.join(directory, template.format(i=i))
                with ParquetWriter.with_options(cast(Any, fs.destination(path)), file_schema or rows.schema,
                                                options) as w:
                    w.write_table(rows)
                written.append(path)
                if metadata_collector is not None or file_visitor is not None:
                    md = w.metadata
                    md.set_file_path(_relative(path, root, remote is None))
                    if metadata_collector is not None:
                        metadata_collector.append(md)
                    if file_visitor is not None:
                        file_visitor(WrittenFile(path, md, fs.size(path)))
    except BaseException:
        for path in written:  # all or nothing: no part of a failed dataset write stays behind
            try:
                fs.remove(path)
            except OSError:
                pass
        raise
    if existing_data_behavior == "delete_matching":
        new = set(written)
        for directory in dict.fromkeys(d for d, _ in groups):
            for old in fs.data_files(directory):
                if old not in new and (os.path.dirname(old) if remote is None else old.rsplit("/", 1)[0]) == directory:
                    fs.remove(old)


def _relative(path: str, root: str, local: bool) -> str:
    """``path`` relative to the dataset's ``root``, with ``/`` (a ``_metadata`` file's ``file_path``)."""
    if local:
        return os.path.relpath(path, root).replace(os.sep, "/")
    return path[len(root):].lstrip("/")
