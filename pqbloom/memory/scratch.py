"""Byte buffers each thread reuses for transient data (the stored bytes of a chunk's pages as they are
read, each page decompressed), handed out as leases that their holder releases.

A new buffer per page or per read made glibc hand its memory back to the system as soon as it was
freed (the heap's top, or a mapping of its own above the mmap threshold), so the next page faulted
the same memory in again (docs/benchmarks.md, "Memory"). A :class:`Scratch` keeps a few released
buffers per thread and hands them out again.

Ownership is explicit, as in Arrow's memory pools: :meth:`Scratch.take` hands out a :class:`Lease`,
and its buffer belongs to the lease's holder until :meth:`Lease.release` (or the end of its ``with``
block). Only a released buffer is handed out again; releasing twice is an error. A holder that cannot
release (something still views the buffer) :meth:`Lease.detach`\\ es it, or simply drops the lease:
the buffer is then freed by Python when the last view of it goes, and never handed out again.

The rule for holders: **release a lease only when nothing can view its buffer any more**. A decoder's
output may be a view of the bytes it decoded (PLAIN fixed-width values as ``np.frombuffer`` of the
page, DELTA_LENGTH_BYTE_ARRAY bytes), so a holder that hands decoded values on either knows they are
copied out before it releases (the page loop's ``views`` contract), or calls
:meth:`Lease.release_unless_viewed` with them: it releases only when none of them overlaps the
buffer (numpy's bounds test, which may say "overlaps" for memory that does not, never the reverse)
and detaches the lease otherwise. :data:`POISON` (``PQBLOOM_SCRATCH_POISON=1``) fills each buffer
as it is released, so a view kept past the release reads garbage at once instead of the next
page's bytes some time later (the tests check the read path that way).

Buffers above :attr:`Scratch.largest` are never kept (their lease releases to nothing). A lease may
be released from another thread than the one that took it: its buffer then joins the releasing
thread's buffers.
"""

from __future__ import annotations

import os
import threading
from types import TracebackType
from typing import Any

import numpy as np

from ..arrays import BinaryArray

__all__ = ["Scratch", "Lease", "may_view", "POISON"]

#: fill each buffer with :data:`POISON_BYTE` as it is released (a check for views kept too long)
POISON: bool = os.environ.get("PQBLOOM_SCRATCH_POISON", "") not in ("", "0")
POISON_BYTE = 0xA5

_HELD, _RELEASED, _DETACHED = 0, 1, 2


def may_view(buf: np.ndarray, obj: Any) -> bool:
    """Whether ``obj`` may view memory of ``buf``: a numpy array (bounds overlap), a BinaryArray (its
    offsets or data), a tuple or list of them; None, bytes, str and numbers never do. Any other
    object is taken to view it (a holder then keeps the buffer out of reuse: slower, never wrong)."""
    # (called for every page: the common types first, no generators)
    if obj is None:
        return False
    if isinstance(obj, np.ndarray):
        return obj.nbytes > 0 and bool(np.may_share_memory(obj, buf))
    if isinstance(obj, (tuple, list)):
        for o in obj:
            if o is not None and may_view(buf, o):
                return True
        return False
    if isinstance(obj, BinaryArray):
        return may_view(buf, obj.offsets) or may_view(buf, obj.data)
    return not isinstance(obj, (bytes, str, int, float))


class Lease:
    """A buffer of a :class:`Scratch` held until :meth:`release` (see the module doc)."""

    __slots__ = ("_scratch", "_buf", "_view", "_state")

    def __init__(self, scratch: Scratch | None, buf: np.ndarray, size: int) -> None:
        self._scratch = scratch  # None: a buffer the scratch does not keep (too large)
        self._buf = buf
        self._view: memoryview = memoryview(buf)[:size]  # type: ignore[arg-type]
        self._state = _HELD

    @property
    def view(self) -> memoryview:
        """The leased bytes: a writable, uninitialized memoryview of the size asked for."""
        if self._state != _HELD:
            raise RuntimeError("a scratch lease's buffer used after its release")
        return self._view

    @property
    def held(self) -> bool:
        """Whether the buffer is still this lease's (neither released nor detached)."""
        return self._state == _HELD

    def release(self) -> None:
        """Give the buffer back for reuse; nothing may view it any more. RuntimeError when the
        lease was already released or detached."""
        if self._state != _HELD:
            raise RuntimeError("a scratch lease released twice" if self._state == _RELEASED
                               else "a detached scratch lease released")
        self._state = _RELEASED
        buf, self._buf = self._buf, _NO_BUFFER
        self._view = _NO_VIEW
        if POISON:
            buf.fill(POISON_BYTE)
        scratch = self._scratch
        if scratch is not None:  # into the releasing thread's free list, of which the `keep` largest stay
            free = scratch.free
            free.append(buf)
            if len(free) > scratch.keep:
                del free[min(range(len(free)), key=lambda i: len(free[i]))]

    def detach(self) -> None:
        """Leave the buffer to whatever views it: never handed out again, freed with its last view."""
        if self._state != _HELD:
            raise RuntimeError("a scratch lease detached after its release")
        self._state = _DETACHED
        self._buf = _NO_BUFFER
        self._view = _NO_VIEW

    def viewed_by(self, *outputs: Any) -> bool:
        """Whether any of ``outputs`` may view the leased buffer (:func:`may_view`)."""
        return self._state == _HELD and may_view(self._buf, outputs)

    def release_unless_viewed(self, *outputs: Any) -> bool:
        """Release the lease unless one of ``outputs`` may view its buffer, in which case it is
        detached (the outputs keep the buffer); True when released."""
        if self._state == _HELD and may_view(self._buf, outputs):
            self.detach()
            return False
        self.release()
        return True

    def __enter__(self) -> Lease:
        return self

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        if self._state == _HELD:
            self.release()


_NO_BUFFER = np.zeros(0, np.uint8)
_NO_VIEW = memoryview(b"")


class Scratch(threading.local):
    """Up to ``keep`` released buffers of each thread, handed out again as leases (see the module doc).

    A new buffer holds at least ``smallest`` bytes (sizes vary from page to page: rounded up to a power
    of two, whose pages never written cost nothing); requests above ``largest`` get a buffer of their
    own, never kept."""

    def __init__(self, keep: int = 2, smallest: int = 1 << 20, largest: int = 8 << 20) -> None:
        self.keep = keep
        self.smallest = smallest
        self.largest = largest
        #: this thread's released buffers, none of them leased
        self.free: list[np.ndarray] = []

    def take(self, size: int) -> Lease:
        """A lease of ``size`` writable, uninitialized bytes no other lease holds. A released buffer
        joins :attr:`free`, of which the ``keep`` largest stay."""
        if size > self.largest:
            return Lease(None, _aligned(size), size)
        free = self.free
        for i in range(len(free)):
            if len(free[i]) >= size:
                return Lease(self, free.pop(i), size)
        room = max(self.smallest, 1 << max(size - 1, 0).bit_length())
        return Lease(self, _aligned(min(room, max(size, self.largest))), size)


#: scratch buffers start on a page boundary
ALIGN = 4096


def _aligned(size: int) -> np.ndarray:
    """``size`` uninitialized bytes starting on an :data:`ALIGN` boundary. Where a buffer starts is
    otherwise up to malloc (a heap block after glibc raised its mmap threshold), and a page
    decompressed from a window into a buffer whose start trails the source's by a few bytes modulo
    4096 is copied several times slower (the CPU takes each load for one of a recent store: "4K
    aliasing")."""
    raw = np.empty(size + ALIGN, np.uint8)
    start = -raw.__array_interface__["data"][0] % ALIGN  # the buffer's address (no ctypes involved)
    return raw[start:start + size]

