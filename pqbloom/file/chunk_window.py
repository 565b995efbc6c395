"""A column chunk's bytes read a window at a time, so a read does not hold a whole chunk.

Reading a chunk in one request is what a remote source wants (one round trip), but on a local
file (or bytes in memory) a request costs little, and a whole chunk held while its pages decode
is the largest transient of a read: for incompressible data (random ints, hashes) the chunk is as
large as its decoded column, and with ``use_threads`` every chunk in flight holds one. A
:class:`ChunkWindow` hands :func:`pqbloom.file.pages.iter_pages` the bytes from the page being
decoded onwards, at least :data:`WINDOW` of them (or to the chunk's end): the bytes of pages
already decoded are dropped as the walk moves on.

The window holds the lease of its bytes (:mod:`pqbloom.memory.scratch`) and releases it when it moves
on (:meth:`ChunkWindow.advance`) or ends (:meth:`ChunkWindow.close`), unless the page loop said that
something it handed on may view those bytes (:meth:`ChunkWindow.keep_if_viewed`: a page's values
decoded as views of an uncompressed page), in which case the bytes stay with those values.
"""

from __future__ import annotations

from typing import Any

from ..io import RangeReader
from ..memory.scratch import Lease, Scratch

__all__ = ["ChunkBytes", "ChunkWindow", "WINDOW"]

#: a chunk's bytes as read: a window (a view of a reused buffer) or the whole chunk
ChunkBytes = bytes | memoryview

#: bytes read ahead at a time: a few typical pages (pyarrow writes ~1 MiB pages before compression)
WINDOW = 1 << 20

#: the windows' bytes, in buffers each thread reuses once released (a new ``bytes`` per window was
#: fresh memory, faulted in again window after window)
WINDOWS = Scratch(keep=3, smallest=WINDOW)


class ChunkWindow:
    """The bytes ``[start, start + length)`` of a file, read :data:`WINDOW` at a time on demand."""

    def __init__(self, reader: RangeReader, start: int, length: int, window: int = WINDOW) -> None:
        self.reader = reader
        self.start = start
        self.end = start + length
        self.window = window
        self.lease: Lease | None = None  # the lease of the bytes handed out last, while held

    @classmethod
    def for_chunk(cls, reader: RangeReader, start: int, length: int) -> ChunkWindow | None:
        """A window over the chunk when it pays: a local source (a remote one wants one request per
        chunk) and a chunk of several windows. None: read the chunk whole."""
        if not reader.local or length <= 2 * WINDOW:
            return None
        return cls(reader, start, length, WINDOW)

    def _read(self, start: int, length: int) -> memoryview:
        lease = WINDOWS.take(length)
        try:
            self.reader.read_into(start, lease.view, what="column chunk")
        except BaseException:
            lease.release()  # nothing saw these bytes
            raise
        self.close()
        self.lease = lease
        return lease.view

    def keep_if_viewed(self, *outputs: Any) -> None:
        """Leave the current window's bytes to ``outputs`` (values the page loop hands on) when they
        may view them: they are then never reused (:meth:`~pqbloom.memory.scratch.Lease.detach`)."""
        if self.lease is not None and self.lease.viewed_by(*outputs):
            self.lease.detach()
            self.lease = None

    def close(self) -> None:
        """Release the current window's bytes: nothing the page loop handed on views them (the
        caller's word, checked by :meth:`keep_if_viewed` for each page)."""
        lease, self.lease = self.lease, None
        if lease is not None:
            lease.release()

    def first(self) -> memoryview:
        """The first window of the chunk."""
        return self._read(self.start, min(self.window, self.end - self.start))

    def advance(self, buf: ChunkBytes, base: int, pos: int, need: int) -> tuple[ChunkBytes, int, int]:
        """``(buf, base, pos)`` such that the new ``buf`` (file offset ``base``) holds at least ``need``
        bytes from ``pos`` (or up to the chunk's end): the old one when it does, else its bytes from
        ``pos`` on plus the next ones read from the file (``pos`` becomes 0)."""
        have = base + len(buf)
        if pos + need <= len(buf) or have >= self.end:
            return buf, base, pos
        upto = min(self.end, base + pos + max(need, self.window))
        start = base + pos
        # the bytes of buf from pos on are copied to the front of the new window and only the bytes
        # after them are read: each byte of the file is fetched once (reading them again cost a
        # second trip through the page cache and counted as bytes read twice)
        keep = max(0, min(have - start, upto - start))
        lease = WINDOWS.take(upto - start)
        try:
            view = lease.view
            if keep:
                view[:keep] = memoryview(buf)[pos:pos + keep]
            if upto - start > keep:
                self.reader.read_into(start + keep, view[keep:], what="column chunk")
        except BaseException:
            lease.release()  # nothing saw these bytes
            raise
        self.close()  # the last window's bytes: copied from above, the page loop has moved past them
        self.lease = lease
        return view, start, 0
