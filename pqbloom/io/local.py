"""Counted range reads of local bytes: a path (``os.pread``), an in-memory buffer or a seekable file object.

:class:`RangeReader` is also the interface every reader implements (:class:`~pqbloom.io.remote.RemoteRangeReader`
derives from it). A path is opened only when it is a regular file (:func:`open_regular_file`: a FIFO, a socket,
a device or a directory raises :class:`~pqbloom.errors.NotARegularFileError` before anything blocks on it).
:func:`read_ranges` reads several ranges through one reader, one request per coalesced run.
"""

from __future__ import annotations

import bisect
import os
import stat
import threading
from dataclasses import dataclass
from typing import IO, Any

from ..errors import CorruptFileError, NotARegularFileError

__all__ = ["IOStats", "RangeReader", "coalesce_ranges", "open_regular_file", "read_ranges"]

@dataclass
class IOStats:
    requests: int = 0
    bytes_read: int = 0


class RangeReader:
    """Reads byte ranges from a path or a seekable binary file object, counting requests and bytes.

    Thread-safe: positioned reads (``os.pread``) on paths, a lock around seek+read on file objects.
    """

    #: whether ranges asked for together are fetched concurrently (remote readers): callers then gather
    #: the reads of one step (all Bloom probes of a lookup) into one :meth:`read_many` or :meth:`prefetch`
    concurrent: bool = False

    def __init__(self, source: str | os.PathLike[str] | IO[bytes] | bytes | bytearray | memoryview) -> None:
        self.stats = IOStats()
        self._lock = threading.Lock()
        self._fd: int | None = None
        self._fobj: Any = None
        self._buf: memoryview | None = None
        self.name = "<buffer>"
        if isinstance(source, (bytes, bytearray, memoryview)):
            self._buf = memoryview(source).cast("B")
            self.size = len(self._buf)
        elif isinstance(source, (str, os.PathLike)):
            self.name = os.fspath(source)
            self._fd = open_regular_file(self.name)
            self.size = os.fstat(self._fd).st_size
        else:
            self._fobj = source
            self.name = getattr(source, "name", "<file object>")
            if not (hasattr(source, "seek") and hasattr(source, "read")):
                raise TypeError("source must be a path, bytes, or a seekable binary file object")
            pos = source.tell()
            self.size = source.seek(0, os.SEEK_END)
            source.seek(pos)

    def _check_and_count(self, offset: int, length: int, what: str) -> None:
        if offset < 0 or length < 0 or offset + length > self.size:
            raise CorruptFileError(f"{what} of {length} bytes at offset {offset} lies outside the file "
                                   f"({self.size} bytes)", offset=offset)
        with self._lock:  # counted under the lock: use_threads reads come from several threads
            self.stats.requests += 1
            self.stats.bytes_read += length

    def read(self, offset: int, length: int, *, what: str = "data") -> bytes:
        """Return exactly ``length`` bytes at ``offset`` or raise CorruptFileError."""
        self._check_and_count(offset, length, what)
        if self._buf is not None:
            return bytes(self._buf[offset:offset + length])
        if self._fd is not None:
            out = os.pread(self._fd, length, offset)
            while len(out) < length:  # pread may return short on some filesystems
                more = os.pread(self._fd, length - len(out), offset + len(out))
                if not more:
                    raise CorruptFileError(f"unexpected end of file reading {what}", offset=offset)
                out += more
            return out
        with self._lock:
            self._fobj.seek(offset)
            out = self._fobj.read(length)
        if len(out) != length:
            raise CorruptFileError(f"unexpected end of file reading {what}", offset=offset)
        return out

    def read_into(self, offset: int, out: memoryview, *, what: str = "data") -> None:
        """Fill ``out`` (a writable byte buffer) with the ``len(out)`` bytes at ``offset``, or raise
        CorruptFileError: a caller's buffer, reused read after read, instead of a new ``bytes``."""
        length = len(out)
        if self._fd is None or type(self).read is not RangeReader.read or not hasattr(os, "preadv"):
            out[:] = self.read(offset, length, what=what)  # memory, file objects, other readers
            return
        self._check_and_count(offset, length, what)
        got = os.preadv(self._fd, [out], offset)
        while got < length:  # preadv may return short on some filesystems
            more = os.preadv(self._fd, [out[got:]], offset + got)
            if not more:
                raise CorruptFileError(f"unexpected end of file reading {what}", offset=offset)
            got += more

    @property
    def local(self) -> bool:
        """True when reads come from a local file (a path) or memory, where many small reads cost
        little: a filtered read then walks page headers with small reads rather than reading whole
        column chunks. False for file objects, which may be remote."""
        return self._fd is not None or self._buf is not None

    def read_many(self, ranges: list[tuple[int, int]], *, what: str = "data") -> list[bytes]:
        """Read several (offset, length) ranges (one request each): concurrently on remote readers,
        one after another on local ones, where a read costs no round trip."""
        return [self.read(off, n, what=what) for off, n in ranges]

    def prefetch(self, ranges: list[tuple[int, int]], *, what: str = "data") -> None:
        """Fetch ranges that later :meth:`read` calls will ask for, all at once (remote readers keep them;
        a local reader has nothing to gain and does nothing)."""

    def close(self) -> None:
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None

    def __enter__(self) -> RangeReader:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _refuse(path: str, mode: int) -> None:
    if stat.S_ISREG(mode):
        return
    kind = ("a directory (read it with pqbloom.read_table or pqbloom.dataset)" if stat.S_ISDIR(mode) else
            "a FIFO" if stat.S_ISFIFO(mode) else "a socket" if stat.S_ISSOCK(mode) else
            "a character device" if stat.S_ISCHR(mode) else "a block device" if stat.S_ISBLK(mode) else
            "not a regular file")
    raise NotARegularFileError(f"cannot read {path!r} as Parquet: it is {kind}, not a regular file", path=path)


def open_regular_file(path: str) -> int:
    """A read-only descriptor of the regular file at ``path``, or
    :class:`~pqbloom.errors.NotARegularFileError` for a FIFO, socket, device or directory.

    What ``path`` is gets checked before it is opened (opening a FIFO for reading waits for a writer, a
    device may act on open), and again on the descriptor, which is opened non-blocking in case the path
    was swapped for a FIFO in between, then set back to blocking.
    """
    _refuse(path, os.stat(path).st_mode)
    nonblock = getattr(os, "O_NONBLOCK", 0)
    fd = os.open(path, os.O_RDONLY | getattr(os, "O_BINARY", 0) | getattr(os, "O_CLOEXEC", 0) | nonblock)
    try:
        _refuse(path, os.fstat(fd).st_mode)
        if nonblock:
            os.set_blocking(fd, True)
    except BaseException:
        os.close(fd)
        raise
    return fd


def coalesce_ranges(ranges: list[tuple[int, int]], *, max_gap: int = 0) -> list[tuple[int, int]]:
    """Merge (offset, length) ranges that overlap or lie at most ``max_gap`` bytes apart; sorted output."""
    out: list[tuple[int, int]] = []
    for off, n in sorted(r for r in ranges if r[1] > 0):
        if out and off <= out[-1][0] + out[-1][1] + max_gap:
            start = out[-1][0]
            out[-1] = (start, max(out[-1][0] + out[-1][1], off + n) - start)
        else:
            out.append((off, n))
    return out


def read_ranges(reader: RangeReader, ranges: list[tuple[int, int]], *, max_gap: int = 0,
                what: str = "data") -> list[bytes]:
    """Read several (offset, length) ranges with one request per coalesced run; bytes per input range."""
    merged = coalesce_ranges(ranges, max_gap=max_gap)
    runs = list(zip((off for off, _ in merged), reader.read_many(merged, what=what)))
    starts = [off for off, _ in runs]
    out = []
    for off, n in ranges:
        if n <= 0:
            out.append(b"")
            continue
        i = bisect.bisect_right(starts, off) - 1
        base, buf = runs[i]
        out.append(buf[off - base:off - base + n] if (off - base, n) != (0, len(buf)) else buf)
    return out
