"""From what a user passes to a reader or a sink: a local path, a URL, a path on a ``filesystem=``.

* A local path or a ``file://`` URL is read with ``os.pread`` (:class:`~pqbloom.io.RangeReader`) and
  written atomically beside its target (:class:`~pqbloom.io.AtomicFileSink`), as before.
* Any other URL (``s3://``, ``gs://``, ``az://``, ``http(s)://``, ``memory://``...) goes through fsspec
  (``pip install pqbloom[remote]``), as does a path with ``filesystem=`` an fsspec filesystem; a pyarrow
  filesystem (``pyarrow.fs.S3FileSystem``...) is used through its own ``open_input_file`` /
  ``open_output_stream``. Reads: :class:`~pqbloom.io.remote.RemoteRangeReader`; writes:
  :class:`~pqbloom.io.remote.RemoteSink`.
* A remote directory (a URL ending in ``/``, or what the filesystem says is one) is a dataset:
  :func:`list_files` lists it once.
"""

from __future__ import annotations

import os
import re
import urllib.parse
import urllib.request
from dataclasses import dataclass
from typing import Any

from .local import RangeReader
from .remote import RemoteRangeReader, RemoteSink, is_http
from .sinks import CommitCompanion
from .sinks import open_sink as open_local_sink

__all__ = ["REMOTE_HINT", "RemoteLocation", "is_url", "file_url_path", "local_source", "locate", "open_location",
           "open_source", "split_remote",
           "open_sink", "list_files"]

#: what to install for URLs and fsspec filesystems
REMOTE_HINT = "pip install pqbloom[remote]"
_SCHEME = re.compile(r"^[A-Za-z][A-Za-z0-9+.\-]*://")


def is_url(source: Any) -> bool:
    """Whether ``source`` is a string with a ``scheme://`` prefix."""
    return isinstance(source, str) and bool(_SCHEME.match(source))


def file_url_path(url: str) -> str | None:
    """The local path of a ``file://`` URL (None for other URLs)."""
    if not url.lower().startswith("file://"):
        return None
    parts = urllib.parse.urlsplit(url)
    if parts.netloc not in ("", "localhost"):
        return None  # file://host/share: let fsspec decide
    return urllib.request.url2pathname(parts.path)


def _fsspec() -> Any:
    try:
        import fsspec
    except ImportError as exc:
        raise ImportError(f"reading and writing URLs and fsspec filesystems needs fsspec: {REMOTE_HINT}") from exc
    return fsspec


def _is_arrow_fs(fs: Any) -> bool:
    return hasattr(fs, "open_input_file") and hasattr(fs, "get_file_info") and not hasattr(fs, "cat_file")


def _is_local_fs(fs: Any) -> bool:
    if _is_arrow_fs(fs):
        return getattr(fs, "type_name", "") == "local"
    p = getattr(fs, "protocol", ())
    return bool(({p} if isinstance(p, str) else set(p)) & {"file", "local"})


@dataclass
class RemoteLocation:
    """A file or directory on a filesystem other than the local one (``name`` is what the user gave)."""

    fs: Any
    path: str
    name: str
    is_dir: bool
    size: int | None = None
    #: requests made to find out what it is (counted by the reader that opens it)
    requests: int = 0


def split_remote(source: Any, filesystem: Any = None) -> tuple[Any, str, str] | None:
    """(filesystem, path on it, name) for a remote source; None for a local one."""
    if filesystem is None:
        if not is_url(source) or file_url_path(source) is not None:
            return None
        fs, path = _fsspec().core.url_to_fs(source)
        return None if _is_local_fs(fs) else (fs, path, source)
    if not isinstance(source, (str, os.PathLike)):
        raise TypeError(f"with filesystem=, the source is a path on it, not {type(source).__name__}")
    name = os.fspath(source)
    if _is_local_fs(filesystem):
        return None
    if _is_arrow_fs(filesystem):
        return filesystem, name, name
    return filesystem, filesystem._strip_protocol(name) if is_url(name) else name, name


def local_source(source: Any, filesystem: Any = None) -> Any:
    """The local form of a local source (``file://`` URLs and paths on a local filesystem become paths)."""
    if isinstance(source, str) and is_url(source):
        p = file_url_path(source)
        if p is not None:
            return p
        return _fsspec().core.url_to_fs(source)[1]  # a local fsspec URL (local://...)
    return source


def locate(source: Any, filesystem: Any = None) -> RemoteLocation | None:
    """Where a remote source is and whether it is a directory (None: a local source). A URL ending in
    ``/`` is a directory without asking; otherwise one request (``info``) says, and gives the size."""
    split = split_remote(source, filesystem)
    if split is None:
        return None
    fs, path, name = split
    if path.endswith("/") or (isinstance(source, str) and source.endswith("/")):
        return RemoteLocation(fs, path.rstrip("/") or path, name, True)
    if is_http(fs):  # no directories but listings ending in "/": a file, opened with its size (no HEAD)
        return RemoteLocation(fs, path, name, False)
    try:
        if _is_arrow_fs(fs):
            info = fs.get_file_info(path)
            if info.type.name == "NotFound":
                raise FileNotFoundError(name)
            return RemoteLocation(fs, path, name, info.type.name == "Directory", info.size, 1)
        info = fs.info(path)
    except (FileNotFoundError, PermissionError):
        raise
    except OSError as exc:
        raise OSError(f"{name}: {exc}") from exc
    except Exception as exc:  # network client errors
        raise OSError(f"{name}: {type(exc).__name__}: {exc}") from exc
    size = info.get("size")
    return RemoteLocation(fs, path, name, info.get("type") == "directory", None if size is None else int(size), 1)


def open_location(loc: RemoteLocation) -> RemoteRangeReader:
    """A reader of the remote file ``loc`` (its size known when :func:`locate` learned it)."""
    if loc.is_dir:
        raise IsADirectoryError(f"{loc.name!r} is a directory: read it with pqbloom.read_table")
    r = RemoteRangeReader(loc.fs, loc.path, size=loc.size, name=loc.name)
    r.stats.requests += loc.requests
    return r


def open_source(source: Any, filesystem: Any = None) -> RangeReader:
    """The reader :class:`~pqbloom.file.reader.FileReader` reads through: a :class:`RemoteRangeReader` for a
    remote file, else a local :class:`RangeReader` (of a path, ``file://`` URLs made paths; bytes; a file
    object). A RangeReader is returned as it is."""
    if isinstance(source, RangeReader):
        return source
    loc = locate(source, filesystem)
    if loc is None:
        return RangeReader(local_source(source, filesystem))
    return open_location(loc)


def open_sink(where: Any, *, fsync: bool = False, companion: CommitCompanion | None = None,
              filesystem: Any = None) -> Any:
    """The sink a writer writes to: atomic beside a local path or ``file://`` URL, a temporary object moved
    into place on another filesystem (:class:`RemoteSink`), or a plain one over a writable stream."""
    if hasattr(where, "commit") and hasattr(where, "abort") and hasattr(where, "write"):
        return where  # a sink prepared by the caller
    split = split_remote(where, filesystem)
    if split is None:
        return open_local_sink(local_source(where, filesystem), fsync=fsync, companion=companion)
    fs, path, name = split
    if companion is not None:
        companion.bind(None)  # external key material needs a local directory: it refuses a remote target
    return RemoteSink(fs, path, name=name)


def list_files(loc: RemoteLocation) -> list[tuple[str, int | None]]:
    """(path, size or None) of every file under the directory ``loc``, recursively, sorted: one listing
    (per directory level where the filesystem cannot list recursively, as over HTTP)."""
    fs = loc.fs
    if _is_arrow_fs(fs):
        from pyarrow.fs import FileSelector  # a pyarrow filesystem implies pyarrow

        infos = fs.get_file_info(FileSelector(loc.path, recursive=True))
        return sorted((i.path, i.size) for i in infos if i.type.name == "File")
    found = fs.find(loc.path, detail=True)
    out = []
    for p, info in found.items():
        if info.get("type", "file") != "file":
            continue
        size = info.get("size")
        out.append((p, None if size is None else int(size)))
    return sorted(out)
