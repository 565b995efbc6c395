"""Where the large buffers of a read's columns come from: a pool that keeps freed memory for the next read.

A read of millions of values fills hundreds of megabytes of fresh memory. Allocated with
``numpy.empty``, every such buffer is a new mapping that glibc hands back to the system when the
array is freed, and the next read faults it in again page by page; on a virtual machine that gives
freed pages back to its host, that cost more system time than the decoding took (docs/benchmarks.md,
"Memory"). pyarrow keeps freed memory in its own allocator; :func:`empty` does the same for pqbloom's
column buffers (the compiled module ``pool``, ``pqbloom/_kernels/pool.pyx``): freed blocks stay mapped
for :data:`DECAY` seconds, at most :data:`LIMIT` bytes of them, and a timer unmaps them after that.
``PQBLOOM_BUFFER_POOL=0`` (or the kernels' reference mode, or a build without the compiled kernels)
gives plain ``numpy.empty`` arrays; :func:`release` unmaps every free block at once.

Ownership: a column buffer is the result of a read, so its owner is the object that exports it (a
``PoolBuffer``, kept alive by the array, its views and any Arrow buffer made from it), as an Arrow
``Buffer`` owns its pool allocation: the block returns to the pool when that object is deallocated,
exactly, and is handed out again only then. (The transient buffers of a read, which the reader itself
holds, are leases that their holder releases: :mod:`pqbloom.memory.scratch`.)

Trims are driven by a :class:`Trims`: one timer at a time, started when a block joins the free list;
its clock and timer can be replaced (a test runs a trim at a chosen time instead of waiting).
"""

from __future__ import annotations

import os
import sys
import threading
import time
from collections.abc import Callable
from typing import Any

import numpy as np

from .. import kernels

__all__ = ["empty", "zeros", "configure", "release", "pool_stats", "trim", "Trims", "TRIMS", "POOLED", "LIMIT", "DECAY",
           "MIN_POOLED"]

#: buffers from this size up come from the pool (smaller ones are glibc's heap, which keeps them). Below
#: a few megabytes glibc still maps each buffer on its own (its threshold moves with what was freed, and
#: a worker thread's arena gives freed pages back), so a read of 500 columns of 100,000 values faulted
#: its ~400 MB in page by page every time; the pool rounds such blocks to 64 KiB (at most a quarter
#: more than asked for) and keeps them as it keeps large ones.
MIN_POOLED = 256 << 10
#: seconds a freed block is kept for the next read (jemalloc's default decay, which pyarrow uses)
DECAY = 10.0


def _physical_memory() -> int:
    try:
        return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (ValueError, OSError, AttributeError):
        return 8 << 30


#: the most freed memory the pool keeps: an eighth of the machine's memory, at most 4 GiB
LIMIT = min(_physical_memory() // 8, 4 << 30)

# the compiled pool (decided at import, as the environment says), None for plain numpy arrays
_pool: Any = None if os.environ.get("PQBLOOM_BUFFER_POOL", "") == "0" else kernels.compiled("pool")
#: whether large buffers come from the pool
POOLED = _pool is not None


def _start_timer(delay: float, callback: Callable[[], None]) -> Any:
    timer = threading.Timer(delay, callback)
    timer.daemon = True
    timer.start()
    return timer


class Trims:
    """When the pool's free blocks are unmapped: :meth:`schedule` (the pool's ``on_free``) starts one
    timer at a time, for ``decay`` seconds and a little more; when it fires, :meth:`run` unmaps the
    blocks that waited longer than ``decay`` by ``clock()`` and starts another timer when some are
    still waiting. ``start_timer(delay, callback)`` starts a timer and returns it (a thread's
    ``threading.Timer`` by default); a test passes its own, and its own clock."""

    def __init__(self, decay: float = DECAY, clock: Callable[[], float] = time.monotonic,
                 start_timer: Callable[[float, Callable[[], None]], Any] = _start_timer) -> None:
        self.decay = decay
        self.clock = clock
        self.start_timer = start_timer
        self.lock = threading.RLock()  # re-entered when a collection frees a block while held
        #: the timer waiting to run a trim, or None
        self.pending: Any = None

    def schedule(self) -> None:
        """Trim the pool once its oldest free block has waited ``decay`` seconds (one timer at a time)."""
        if sys.is_finalizing():
            # the interpreter is ending (a table kept in a global is freed now): a thread started at
            # this point never runs, and Timer.start() would wait for it forever; the process's memory
            # goes back to the system with it anyway
            return
        with self.lock:
            if self.pending is not None:
                return
            try:
                self.pending = self.start_timer(self.decay + 0.5, self.run)
            except RuntimeError:  # no new threads (shutting down, or the system's limit): trims wait
                return

    def run(self) -> None:
        """The timer's work: unmap what waited longer than ``decay``; schedule again if blocks remain."""
        with self.lock:
            self.pending = None
        if _pool is not None and _pool.trim(self.clock()):
            self.schedule()  # blocks freed since are still waiting

    def cancel(self) -> None:
        """Stop the pending timer, if any."""
        with self.lock:
            timer, self.pending = self.pending, None
        if timer is not None:
            timer.cancel()


#: the trims of the pool in use
TRIMS = Trims()
if _pool is not None:
    _pool.configure(LIMIT, DECAY, TRIMS.schedule)


def empty(shape: int | tuple[int, ...], dtype: Any) -> np.ndarray:
    """An uninitialized array (``numpy.empty``), from the pool when large."""
    dt = np.dtype(dtype)
    dims = (shape,) if isinstance(shape, int) else tuple(shape)
    count = int(np.prod(dims, dtype=np.int64))
    if _pool is None or count * dt.itemsize < MIN_POOLED:
        return np.empty(dims, dt)
    return np.frombuffer(_pool.PoolBuffer(count * dt.itemsize), dt, count=count).reshape(dims)


def zeros(shape: int | tuple[int, ...], dtype: Any) -> np.ndarray:
    """A zeroed array (``numpy.zeros``), from the pool when large."""
    dt = np.dtype(dtype)
    dims = (shape,) if isinstance(shape, int) else tuple(shape)
    if _pool is None or int(np.prod(dims, dtype=np.int64)) * dt.itemsize < MIN_POOLED:
        return np.zeros(dims, dt)
    out = empty(dims, dt)
    out.fill(0)
    return out


def configure(limit: int, decay: float, trims: Trims | None) -> None:
    """Keep at most ``limit`` free bytes, each for at most ``decay`` seconds, trimmed by ``trims``
    (None: only by the next take and :func:`trim`); :data:`LIMIT`, :data:`DECAY` and :data:`TRIMS`
    are what the pool starts with."""
    if _pool is not None:
        _pool.configure(limit, decay, None if trims is None else trims.schedule)


def trim(now: float | None = None) -> int:
    """Unmap the free blocks that waited longer than the decay at ``now`` (a ``time.monotonic()``
    time; None: the present); the free bytes left."""
    return int(_pool.trim(now)) if _pool is not None else 0


def release() -> None:
    """Give every free block of the pool back to the system now."""
    if _pool is not None:
        _pool.release()


def pool_stats() -> tuple[int, int, int]:
    """(bytes mapped by the pool, of which free, free blocks); zeros without the pool."""
    return _pool.stats() if _pool is not None else (0, 0, 0)
