"""Atomic local sinks: a file is written to a temporary file beside its target, then renamed into place.

:class:`AtomicFileSink` is what a path written by :class:`~pqbloom.file.writer.ParquetWriter` goes through:
until :meth:`~AtomicFileSink.commit` nothing exists at the target (an older file there stays intact), and
the committed file keeps the mode and owner of the one it replaces. :class:`CountingWriter` is the write side
every sink shares (remote sinks included: :mod:`pqbloom.io.remote`); :func:`open_sink` chooses between an atomic
sink for a path and a plain one over a caller's stream.
"""

from __future__ import annotations

import os
import secrets
import stat
import threading
from collections.abc import Callable
from typing import Any, Protocol

__all__ = ["AtomicFileSink", "CommitCompanion", "CountingWriter", "current_umask", "fsync_directory", "open_sink",
           "release_cached_pages"]


class CommitCompanion(Protocol):
    """Something committed together with a file (the key-material sidecar of an encrypted file)."""

    def bind(self, path: str | None) -> None:
        """Called when the sink opens, with its target (None for a caller's stream); raise to refuse it."""

    def publish(self, path: str, new_file: str, rename: Callable[[], None], *, fsync: bool) -> None:
        """Put the file in place by calling ``rename()`` once, committing the companion around it.

        ``new_file`` is the finished temporary file (its final mode and owner already set).
        """


class CountingWriter:
    """The write side every sink shares: bytes go to ``self._f`` and are counted, so that ``tell()``
    gives the file offsets the Parquet writer records, whatever the underlying stream can tell."""

    _f: Any
    _pos: int = 0

    def write(self, data: bytes | bytearray | memoryview) -> int:
        self._f.write(data)
        n = len(data)
        self._pos += n
        return n

    def tell(self) -> int:
        return self._pos


class AtomicFileSink(CountingWriter):
    """Writes to a temporary file beside ``path``; ``commit`` renames it into place, ``abort`` deletes it.

    Until commit nothing exists at ``path`` (and an older file there stays intact). The committed
    file keeps the mode, owner and group of the file it replaces (owner and group where the process
    may set them); a new file gets what ``open()`` would give it (0666 less the umask, the
    directory's default ACL and group), or the attributes of ``attributes_from`` when given.
    While it is written, a file that will replace another (or copy attributes) is private (0600).
    ``companion`` is committed together with the file (see :class:`CommitCompanion`).
    """

    def __init__(self, path: str | os.PathLike[str], *, fsync: bool = False,
                 companion: CommitCompanion | None = None,
                 attributes_from: str | os.PathLike[str] | None = None) -> None:
        self.path = os.path.abspath(os.fspath(path))
        if companion is not None:
            companion.bind(self.path)
        self._companion = companion
        self._attributes_from = None if attributes_from is None else os.fspath(attributes_from)
        # created like open() creates it, unless it will take another file's attributes at commit
        replaces = os.path.lexists(self.path)
        self._private = self._attributes_from is not None or replaces
        if replaces:
            release_cached_pages(self.path)
        fd, self.tmp_path = _create_temporary(self.path, 0o600 if self._private else 0o666)
        self._f: Any = os.fdopen(fd, "wb", buffering=1 << 20)
        self._fsync = fsync
        self.closed = False

    def commit(self) -> None:
        if self.closed:
            return
        self._f.flush()
        self._take_attributes(self._f.fileno())
        if self._fsync:
            os.fsync(self._f.fileno())
        self._f.close()
        if self._companion is not None:
            self._companion.publish(self.path, self.tmp_path, self._rename, fsync=self._fsync)
        else:
            self._rename()
        self.closed = True

    def _take_attributes(self, fd: int) -> None:
        """Mode and owner of the file being replaced (else of ``attributes_from``; else those of a new file)."""
        source = None
        for candidate in (self.path, self._attributes_from):
            if candidate is None:
                continue
            try:
                st = os.stat(candidate)
            except OSError:
                continue
            if stat.S_ISREG(st.st_mode):
                source = st
                break
        if source is not None:
            _copy_owner(fd, source)
            _fchmod(fd, stat.S_IMODE(source.st_mode))  # after chown, which may clear set-id bits
        elif self._private:  # the file it was to replace is gone: it is a new file after all
            _fchmod(fd, 0o666 & ~current_umask())

    def _rename(self) -> None:
        os.replace(self.tmp_path, self.path)
        if self._fsync:
            fsync_directory(os.path.dirname(self.path))

    def abort(self) -> None:
        if self.closed:
            return
        try:
            self._f.close()
        finally:
            try:
                os.unlink(self.tmp_path)
            except FileNotFoundError:
                pass
            self.closed = True


def release_cached_pages(path: str) -> None:
    """Ask the kernel to drop its cached pages of the regular file at ``path`` (a file about to be
    replaced): the file's content is untouched, and the pages of the file written to replace it
    then come from memory just freed. On Linux, writing a new file while the old one's pages stay
    cached made the write calls much slower (docs/benchmarks.md), since the old pages are only freed
    at the rename. A hint only: nothing happens without ``posix_fadvise``, for a
    symbolic link (the rename replaces the link, not what it points to), for anything but a regular
    file, or when the file cannot be opened for reading."""
    if not hasattr(os, "posix_fadvise"):
        return
    flags = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0)
    try:
        fd = os.open(path, flags)  # O_NONBLOCK: a FIFO at path must not block the open
    except OSError:
        return
    try:
        if stat.S_ISREG(os.fstat(fd).st_mode):
            os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
    except OSError:
        pass
    finally:
        os.close(fd)


def _create_temporary(path: str, mode: int) -> tuple[int, str]:
    """A new file ``.<name>.<random>.pqbloom-tmp`` beside ``path``, created with ``mode`` (less the umask)."""
    directory, name = os.path.split(path)
    flags = os.O_RDWR | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_BINARY", 0)
    for _ in range(100):
        tmp = os.path.join(directory, f".{name}.{secrets.token_hex(4)}.pqbloom-tmp")
        try:
            return os.open(tmp, flags, mode), tmp
        except FileExistsError:
            continue
    raise FileExistsError(f"cannot create a temporary file beside {path!r}")


def _copy_owner(fd: int, source: os.stat_result) -> None:
    if not hasattr(os, "fchown"):
        return
    mine = os.fstat(fd)
    if (mine.st_uid, mine.st_gid) == (source.st_uid, source.st_gid):
        return
    # the owner only root may set; the group any member of it may: keep what the process can
    for uid in (source.st_uid, -1):
        try:
            os.fchown(fd, uid, source.st_gid)
            return
        except PermissionError:
            continue


def _fchmod(fd: int, mode: int) -> None:
    if not hasattr(os, "fchmod"):
        return
    try:
        os.fchmod(fd, mode)
    except PermissionError:  # file systems without Unix modes (FAT, some network mounts): the mount decides
        pass


_UMASK_LOCK = threading.Lock()


def current_umask() -> int:
    """The process umask, read without changing it where the system allows (Linux: /proc)."""
    try:
        with open("/proc/self/status", "rb") as fh:
            for line in fh:
                if line.startswith(b"Umask:"):
                    return int(line.split()[1], 8)
    except (OSError, ValueError, IndexError):
        pass
    # elsewhere the only way is to set it and back; brief, and serialized within this process
    with _UMASK_LOCK:
        mask = os.umask(0o077)
        os.umask(mask)
    return mask


def fsync_directory(directory: str) -> None:
    """Make a rename in ``directory`` durable (where directories can be opened)."""
    if not hasattr(os, "O_DIRECTORY"):
        return
    dfd = os.open(directory or ".", os.O_DIRECTORY)
    try:
        os.fsync(dfd)
    finally:
        os.close(dfd)


class _StreamSink(CountingWriter):
    """Sink over a caller's writable file object (no atomicity: the caller owns the stream)."""

    def __init__(self, f: Any) -> None:
        self._f = f
        self.closed = False

    def commit(self) -> None:
        if hasattr(self._f, "flush"):
            self._f.flush()
        self.closed = True

    def abort(self) -> None:
        self.closed = True


def open_sink(where: Any, *, fsync: bool = False,
              companion: CommitCompanion | None = None) -> AtomicFileSink | _StreamSink:
    """An atomic sink for a path, or a plain one over a caller's writable stream."""
    if isinstance(where, (str, os.PathLike)):
        return AtomicFileSink(where, fsync=fsync, companion=companion)
    if hasattr(where, "write"):
        if companion is not None:
            companion.bind(None)
        return _StreamSink(where)
    raise TypeError(f"cannot write Parquet to {type(where).__name__}")
