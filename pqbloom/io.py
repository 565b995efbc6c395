"""IO behind one small interface: ranged reads that are counted, and an atomic file sink."""

from __future__ import annotations

import bisect
import os
import tempfile
import threading
from dataclasses import dataclass
from typing import IO, Any

from .errors import CorruptFileError

__all__ = ["IOStats", "RangeReader", "AtomicFileSink", "open_sink", "coalesce_ranges", "read_ranges"]


@dataclass
class IOStats:
    requests: int = 0
    bytes_read: int = 0


class RangeReader:
    """Reads byte ranges from a path or a seekable binary file object, counting requests and bytes.

    Thread-safe: positioned reads (``os.pread``) on paths, a lock around seek+read on file objects.
    """

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
            self._fd = os.open(self.name, os.O_RDONLY | getattr(os, "O_BINARY", 0))
            self.size = os.fstat(self._fd).st_size
        else:
            self._fobj = source
            self.name = getattr(source, "name", "<file object>")
            if not (hasattr(source, "seek") and hasattr(source, "read")):
                raise TypeError("source must be a path, bytes, or a seekable binary file object")
            pos = source.tell()
            self.size = source.seek(0, os.SEEK_END)
            source.seek(pos)

    def read(self, offset: int, length: int, *, what: str = "data") -> bytes:
        """Return exactly ``length`` bytes at ``offset`` or raise CorruptFileError."""
        if offset < 0 or length < 0 or offset + length > self.size:
            raise CorruptFileError(f"{what} of {length} bytes at offset {offset} lies outside the file "
                                   f"({self.size} bytes)", offset=offset)
        self.stats.requests += 1
        self.stats.bytes_read += length
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

    def close(self) -> None:
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None

    def __enter__(self) -> RangeReader:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


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
    runs = [(off, reader.read(off, n, what=what)) for off, n in merged]
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


class AtomicFileSink:
    """Writes to a temporary file beside ``path``; ``commit`` renames it into place, ``abort`` deletes it.

    Until commit nothing exists at ``path`` (and an older file there stays intact).
    """

    def __init__(self, path: str | os.PathLike[str], *, fsync: bool = False) -> None:
        self.path = os.path.abspath(os.fspath(path))
        directory = os.path.dirname(self.path) or "."
        fd, self.tmp_path = tempfile.mkstemp(prefix=f".{os.path.basename(self.path)}.", suffix=".pqbloom-tmp",
                                             dir=directory)
        self._f: Any = os.fdopen(fd, "wb", buffering=1 << 20)
        self._fsync = fsync
        self._pos = 0
        self.closed = False

    def write(self, data: bytes | bytearray | memoryview) -> int:
        self._f.write(data)
        n = len(data)
        self._pos += n
        return n

    def tell(self) -> int:
        return self._pos

    def commit(self) -> None:
        if self.closed:
            return
        self._f.flush()
        if self._fsync:
            os.fsync(self._f.fileno())
        self._f.close()
        # mkstemp creates 0600 files; give the result the usual permissions of a new file
        umask = os.umask(0)
        os.umask(umask)
        os.chmod(self.tmp_path, 0o666 & ~umask)
        os.replace(self.tmp_path, self.path)
        if self._fsync and hasattr(os, "O_DIRECTORY"):
            dfd = os.open(os.path.dirname(self.path) or ".", os.O_DIRECTORY)
            try:
                os.fsync(dfd)
            finally:
                os.close(dfd)
        self.closed = True

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


class _StreamSink:
    """Sink over a caller's writable file object (no atomicity: the caller owns the stream)."""

    def __init__(self, f: Any) -> None:
        self._f = f
        self._pos = 0
        self.closed = False

    def write(self, data: bytes | bytearray | memoryview) -> int:
        self._f.write(data)
        self._pos += len(data)
        return len(data)

    def tell(self) -> int:
        return self._pos

    def commit(self) -> None:
        if hasattr(self._f, "flush"):
            self._f.flush()
        self.closed = True

    def abort(self) -> None:
        self.closed = True


def open_sink(where: Any, *, fsync: bool = False) -> AtomicFileSink | _StreamSink:
    if isinstance(where, (str, os.PathLike)):
        return AtomicFileSink(where, fsync=fsync)
    if hasattr(where, "write"):
        return _StreamSink(where)
    raise TypeError(f"cannot write Parquet to {type(where).__name__}")
