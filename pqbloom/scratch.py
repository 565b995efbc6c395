"""Byte buffers each thread reuses for transient data: the stored bytes of a chunk's pages as they are
read, and each page decompressed.

A new buffer per page or per read made glibc hand its memory back to the system as soon as it was
freed (the heap's top, or a mapping of its own above the mmap threshold), so the next page faulted
the same memory in again: 130k page faults and ~1.5 s of system time in a read of 10M rows of
strings, thousands in a read of 10M timestamps. A :class:`Scratch` keeps a few buffers per thread
and hands one out again only when nothing refers to it any more (``sys.getrefcount``): whoever
still holds a view of a page's bytes (values decoded as views of it) keeps it, and the next request
gets another buffer. Sizes above :attr:`Scratch.largest` are never kept.
"""

from __future__ import annotations

import sys
import threading

import numpy as np

__all__ = ["Scratch"]


class Scratch(threading.local):
    """Up to ``keep`` reusable buffers of each thread (see the module doc)."""

    def __init__(self, keep: int = 2, smallest: int = 1 << 20, largest: int = 8 << 20) -> None:
        self.keep = keep
        self.smallest = smallest  # a new buffer holds at least this: page sizes vary within a chunk
        self.largest = largest
        self.bufs: list[np.ndarray] = []

    def take(self, size: int) -> memoryview:
        """A writable, uninitialized buffer of ``size`` bytes that nothing else refers to."""
        if size > self.largest:
            return memoryview(np.empty(size, np.uint8))  # type: ignore[arg-type]
        bufs = self.bufs
        for i in range(len(bufs)):
            # free when only the list and getrefcount's argument refer to it
            if len(bufs[i]) >= size and sys.getrefcount(bufs[i]) == 2:
                return memoryview(bufs[i])[:size]  # type: ignore[arg-type]
        # a new one of the next power of two (sizes vary from page to page; the pages of a buffer
        # never written cost nothing); it replaces a free one too small, else the oldest (whoever
        # refers to that keeps it alive)
        room = max(self.smallest, 1 << max(size - 1, 0).bit_length())
        buf = np.empty(min(room, max(size, self.largest)), np.uint8)
        free = [i for i in range(len(bufs)) if sys.getrefcount(bufs[i]) == 2]
        if free or len(bufs) >= self.keep:
            bufs.pop(free[0] if free else 0)
        bufs.append(buf)
        return memoryview(buf)[:size]  # type: ignore[arg-type]
