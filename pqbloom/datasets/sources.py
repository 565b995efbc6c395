"""Many Parquet files as one source: :class:`Dataset` and :func:`dataset`, and the sources
:func:`pqbloom.read_table` accepts besides one file.

A source of many files is

* a directory: every data file under it (see :mod:`pqbloom.datasets.discover`: hidden ``_``/``.`` names
  skipped), with Hive ``key=value`` directories as partition columns (``partitioning="hive"``, the
  default, as in pyarrow; ``partitioning=None`` ignores them);
* a list (or tuple) of file paths, read in the order given, without partition columns (pyarrow's
  ``pq.read_table([...])`` infers none from a list either);
* a glob pattern (``"data/*.parquet"``, ``"data/**/*.parquet"``; ``**`` crosses directories): the
  matching files in sorted order, without partition columns;
* a :class:`Dataset`.

A URL (or a path with ``filesystem=``) is a source like a local one: a remote directory is listed once
and read as a directory is (Hive partitions included; see :func:`~pqbloom.datasets.discover.discover_remote`),
a remote file is one file, and a list may hold URLs.

The files must agree on the columns read (names and types); where they do not, the read raises
:class:`~pqbloom.errors.SchemaError` naming both files and the column (pass ``columns=`` to read the
columns the files share). Schemas are not unioned, so a stray or mistyped file never turns into silent
nulls.
"""

from __future__ import annotations

import glob
import os
from collections.abc import Iterator, Sequence
from typing import Any

from ..errors import NotARegularFileError
from ..file.read_options import reader_options
from ..file.reader import FileReader
from ..io.sources import RemoteLocation, is_url, local_source, locate
from ..scan import Explain, FilePlan, FilterLike, plan_file, to_expression
from ..schema import Schema
from ..table import Table
from .discover import Fragment, discover, discover_remote
from .read import open_fragment, prune_fragments, read_fragments

__all__ = ["Dataset", "dataset", "is_dataset_source", "read_source"]

_GLOB_CHARS = frozenset("*?[")


def _is_glob(text: str) -> bool:
    return any(c in _GLOB_CHARS for c in text) and not os.path.exists(text)


def is_dataset_source(source: Any) -> bool:
    """Whether ``source`` names many files (a directory, a list of paths, a glob, a :class:`Dataset`)
    rather than one file (a path, bytes or a file object)."""
    if isinstance(source, Dataset):
        return True
    if isinstance(source, (list, tuple)):
        return True
    if isinstance(source, (str, os.PathLike)):
        path = os.fspath(source)
        return isinstance(path, str) and (os.path.isdir(path) or _is_glob(path))
    return False


class Dataset:
    """Parquet files read as one table: ``pqbloom.dataset("root/", partitioning="hive")``.

    ``source`` is a directory, a list of file paths, a glob pattern or another Dataset (see the module
    doc); a directory or file may be a URL (``https://host/data/``, ``s3://bucket/data/``) or a path on
    ``filesystem`` (an fsspec or pyarrow filesystem). The files are found once, when the Dataset is made
    (:attr:`files`). ``read_kwargs`` go to each file's reader (``decryption_properties``,
    ``verify_checksums``, ``memory_limit``). :func:`pqbloom.read_table` takes a Dataset as its source.
    """

    def __init__(self, source: Any, partitioning: str | None = "hive", *, filesystem: Any = None,
                 ignore_prefixes: Sequence[str] | None = None, decryption_properties: Any = None,
                 verify_checksums: bool = True, memory_limit: int | None = None,
                 coerce_int96_timestamp_unit: str | None = None, thrift_string_size_limit: int | None = None,
                 thrift_container_size_limit: int | None = None,
                 read_dictionary: Sequence[str] | None = None) -> None:
        if partitioning not in ("hive", None):
            raise ValueError(f"partitioning must be 'hive' or None, got {partitioning!r}")
        self.partitioning = partitioning
        #: each file's reader options (:class:`~pqbloom.file.reader.FileReader`'s keyword arguments)
        self.read_kwargs = reader_options(
            decryption_properties=decryption_properties, verify_checksums=verify_checksums,
            memory_limit=memory_limit, coerce_int96_timestamp_unit=coerce_int96_timestamp_unit,
            thrift_string_size_limit=thrift_string_size_limit, thrift_container_size_limit=thrift_container_size_limit,
            read_dictionary=read_dictionary)
        #: the remote directory (or file) the fragments are on; None for local files (and lists)
        self.remote: RemoteLocation | None = None
        self.fragments: list[Fragment]
        self.fragments, self.remote = _fragments(source, partitioning, filesystem)
        if ignore_prefixes:
            self.fragments = _without_prefixes(self.fragments, source, tuple(ignore_prefixes))
            if not self.fragments:
                raise FileNotFoundError(f"no data files in {source!r} (ignore_prefixes={list(ignore_prefixes)})")

    @property
    def files(self) -> list[str]:
        """The data files, in the order they are read."""
        return [fr.path for fr in self.fragments]

    @property
    def partition_columns(self) -> list[str]:
        """The Hive partition keys found in the directory names (none for a list or a glob)."""
        keys: dict[str, None] = {}
        for fr in self.fragments:
            keys.update(dict.fromkeys(fr.partitions))
        return list(keys)

    @property
    def schema(self) -> Schema:
        """The first file's top-level fields, then the partition columns (as they are read: int64 when
        every value is an integer, else string), with the first file's metadata and Arrow types (its
        ``str()``, ``metadata``, ``field(name).type`` answer as pyarrow's ``Schema``)."""
        pfields = prune_fragments(self.fragments, None)[0]
        with FileReader(open_fragment(self.fragments[0], self.remote), **self.read_kwargs) as pf:
            first = pf.arrow_table_schema
        fields = [f for f in first.fields if f.name not in pfields]
        return Schema(fields + list(pfields.values()), first.key_value_metadata, arrow_hints=first.arrow_hints)

    def key_value_metadata(self) -> dict[str, str | None]:
        """The first file's footer key-value metadata (pandas' metadata, for instance)."""
        with FileReader(open_fragment(self.fragments[0], self.remote), **self.read_kwargs) as pf:
            return pf.key_value_metadata

    def to_table(self, columns: Sequence[str] | None = None, *, filters: FilterLike = None,
                 explain: Explain | None = None, use_threads: bool = True, memory_limit: int | None = None) -> Table:
        """Read the files as one table (``columns``, ``filters``, ``explain`` as in
        :func:`pqbloom.read_table`; files ruled out by their partition values are never opened).
        ``memory_limit`` replaces the dataset's own for this read; ``use_threads`` is accepted for
        pyarrow's signature (the files are read by a small pool of workers)."""
        del use_threads
        options = dict(self.read_kwargs)
        if memory_limit is not None:
            options["memory_limit"] = memory_limit
        return self.read_with(columns, filters, explain, options)

    def read_with(self, columns: Sequence[str] | None, filters: FilterLike, explain: Explain | None,
                  options: dict[str, Any]) -> Table:
        """:meth:`to_table` with each file's reader options ``options`` (FileReader's keyword arguments)."""
        return read_fragments(self.fragments, columns, filters=filters, explain=explain, remote=self.remote,
                              **options)

    read = to_table

    def plan_files(self, filters: FilterLike = None) -> Iterator[tuple[Fragment, FilePlan]]:
        """For each file ``filters`` may hold rows of (by its partition values), the file and a
        :class:`~pqbloom.scan.FilePlan` of what is left of the filter, bound to the open file; the file
        is open until the iteration moves on. ``plan.row_groups()`` then says which row groups its
        statistics and Bloom filters cannot rule out."""
        for fr, _, residual in prune_fragments(self.fragments, to_expression(filters))[1]:
            with FileReader(open_fragment(fr, self.remote), **self.read_kwargs) as pf:
                yield fr, plan_file(pf, residual)

    def __len__(self) -> int:
        return len(self.fragments)

    def __repr__(self) -> str:
        return f"Dataset({len(self.fragments)} files, partitioning={self.partitioning!r})"


def dataset(source: Any, partitioning: str | None = "hive", *, filesystem: Any = None,
            ignore_prefixes: Sequence[str] | None = None, decryption_properties: Any = None,
            verify_checksums: bool = True, memory_limit: int | None = None,
            coerce_int96_timestamp_unit: str | None = None, thrift_string_size_limit: int | None = None,
            thrift_container_size_limit: int | None = None, read_dictionary: Sequence[str] | None = None) -> Dataset:
    """A :class:`Dataset` over ``source`` (a directory, a list of files, a glob pattern; a directory or
    file may be a URL or a path on ``filesystem``), as ``pyarrow.dataset.dataset`` names it. The options
    are :class:`Dataset`'s."""
    return Dataset(source, partitioning, filesystem=filesystem, ignore_prefixes=ignore_prefixes,
                   decryption_properties=decryption_properties, verify_checksums=verify_checksums,
                   memory_limit=memory_limit, coerce_int96_timestamp_unit=coerce_int96_timestamp_unit,
                   thrift_string_size_limit=thrift_string_size_limit,
                   thrift_container_size_limit=thrift_container_size_limit, read_dictionary=read_dictionary)


def _without_prefixes(frags: list[Fragment], source: Any, prefixes: tuple[str, ...]) -> list[Fragment]:
    """``frags`` without the files whose name, or a directory's under the dataset's root, starts with one
    of ``prefixes`` (pyarrow's ``ignore_prefixes``)."""
    root = os.fspath(source) if isinstance(source, (str, os.PathLike)) else None

    def parts(path: str) -> list[str]:
        rel = path[len(root):] if root is not None and path.startswith(root) else os.path.basename(path)
        return [p for p in rel.replace(os.sep, "/").split("/") if p]

    return [fr for fr in frags if not any(p.startswith(prefixes) for p in parts(fr.path))]


def _local_file(path: str, where: str) -> Fragment:
    """The fragment of a local file ``path`` (``where`` says what named it, for errors)."""
    if os.path.isdir(path):
        raise IsADirectoryError(f"{path!r} {where} is a directory: pass the directory itself, or its files")
    if not os.path.exists(path):
        raise FileNotFoundError(f"no such file: {path!r}")
    if not os.path.isfile(path):
        raise NotARegularFileError(f"cannot read {path!r} as Parquet: it is not a regular file (a FIFO, "
                                   f"a socket or a device)", path=path)
    return Fragment(path, {})


def _fragments(source: Any, partitioning: str | None, filesystem: Any = None
               ) -> tuple[list[Fragment], RemoteLocation | None]:
    remote: RemoteLocation | None = None
    if isinstance(source, Dataset):
        frags, remote = list(source.fragments), source.remote
    elif isinstance(source, (list, tuple)):
        if filesystem is not None:
            raise TypeError("filesystem= goes with a directory or a file; a list of files may hold URLs")
        frags = []
        for p in source:
            if not isinstance(p, (str, os.PathLike)):
                raise TypeError(f"a list source holds file paths, not {type(p).__name__}")
            path = local_source(os.fspath(p))
            if is_url(path):  # each file opened by its URL (pqbloom.io.sources) when read
                frags.append(Fragment(path, {}))
                continue
            frags.append(_local_file(path, "in a list of files"))
    elif isinstance(source, (str, os.PathLike)):
        path = os.fspath(source)
        if not isinstance(path, str):
            raise TypeError("a dataset path must be text")
        remote = locate(path, filesystem)
        if remote is not None:
            frags = discover_remote(remote) if remote.is_dir else [Fragment(remote.path, {}, remote.size)]
        else:
            path = local_source(path)
            if os.path.isdir(path):
                frags = discover(path)
            elif _is_glob(path):
                frags = [Fragment(m, {}) for m in sorted(glob.glob(path, recursive=True)) if os.path.isfile(m)]
            elif os.path.exists(path):
                frags = [_local_file(path, "given as a dataset")]
            else:
                raise FileNotFoundError(f"no such file or directory: {path!r}")
    else:
        raise TypeError(f"a dataset source is a directory, a list of files or a glob pattern, "
                        f"not {type(source).__name__}")
    if partitioning is None:
        frags = [Fragment(fr.path, {}, fr.size) for fr in frags]
    if not frags:
        raise FileNotFoundError(f"no data files in {source!r}")
    return frags, remote


def read_source(source: Any, columns: Sequence[str] | None = None, *, filters: FilterLike = None,
                explain: Explain | None = None, decryption_properties: Any = None, verify_checksums: bool | None = None,
                memory_limit: int | None = None, coerce_int96_timestamp_unit: str | None = None,
                thrift_string_size_limit: int | None = None, thrift_container_size_limit: int | None = None,
                read_dictionary: Sequence[str] | None = None) -> Table:
    """Read a source of many files (:func:`is_dataset_source`) as one table; the reader options
    (``decryption_properties`` to ``read_dictionary``, as :class:`Dataset`'s) go to each file's reader. An
    option left None is the Dataset's own when ``source`` is a Dataset, else the default."""
    ds = source if isinstance(source, Dataset) else Dataset(source)
    given = {"decryption_properties": decryption_properties, "verify_checksums": verify_checksums,
             "memory_limit": memory_limit, "coerce_int96_timestamp_unit": coerce_int96_timestamp_unit,
             "thrift_string_size_limit": thrift_string_size_limit,
             "thrift_container_size_limit": thrift_container_size_limit, "read_dictionary": read_dictionary}
    return ds.read_with(columns, filters, explain,
                        {**ds.read_kwargs, **{k: v for k, v in given.items() if v is not None}})
