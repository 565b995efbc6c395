"""Where the large buffers of a read's columns come from: a pool that keeps freed memory for the next read.

A read of millions of values fills hundreds of megabytes of fresh memory. Allocated with
``numpy.empty``, every such buffer is a new mapping that glibc hands back to the system when the
array is freed, and the next read faults it in again page by page; on a virtual machine that gives
freed pages back to its host, that cost more system time than the decoding took (a 10M-row string
read: 1.3 s of work, 1.5 s of page faults). pyarrow keeps freed memory in its own allocator;
:func:`empty` does the same for pqbloom's column buffers (:mod:`pqbloom._kernels.pool`): freed
blocks stay mapped for :data:`DECAY` seconds, at most :data:`LIMIT` bytes of them, and a timer
unmaps them after that. ``PQBLOOM_BUFFER_POOL=0`` (or the kernels' reference mode, or a build
without the compiled kernels) gives plain ``numpy.empty`` arrays; :func:`release` unmaps every free
block at once.
"""

from __future__ import annotations

import importlib
import os
import sys
import threading
from typing import Any

import numpy as np

__all__ = ["empty", "zeros", "release", "pool_stats", "POOLED", "LIMIT", "DECAY", "MIN_POOLED"]

#: buffers from this size up come from the pool (smaller ones are glibc's heap, which keeps them)
MIN_POOLED = 4 << 20
#: seconds a freed block is kept for the next read (jemalloc's default decay, which pyarrow uses)
DECAY = 10.0


def _physical_memory() -> int:
    try:
        return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (ValueError, OSError, AttributeError):
        return 8 << 30


#: the most freed memory the pool keeps: an eighth of the machine's memory, at most 4 GiB
LIMIT = min(_physical_memory() // 8, 4 << 30)


def _load() -> Any:
    if os.environ.get("PQBLOOM_BUFFER_POOL", "") == "0" or os.environ.get("PQBLOOM_PURE_PYTHON", "") not in ("", "0"):
        return None
    try:  # (by name, as pqbloom.kernels loads the others: a compiled module has no stub for mypy)
        return importlib.import_module("pqbloom._kernels.pool")
    except ImportError:  # not built (no C compiler at install time, or a source checkout)
        return None


_pool = _load()
#: whether large buffers come from the pool
POOLED = _pool is not None
_timer_lock = threading.RLock()  # re-entered when a collection frees a block while held
_timer: threading.Timer | None = None


def _trim_later() -> None:
    """Trim the pool once its oldest free block has waited DECAY seconds (one timer at a time)."""
    global _timer
    if sys.is_finalizing():
        # the interpreter is ending (a table kept in a global is freed now): a thread started at
        # this point never runs, and Timer.start() would wait for it forever; the process's memory
        # goes back to the system with it anyway
        return
    with _timer_lock:
        if _timer is not None:
            return
        timer = threading.Timer(DECAY + 0.5, _on_timer)
        timer.daemon = True
        try:
            timer.start()
        except RuntimeError:  # no new threads (shutting down, or the system's limit): trims wait
            return
        _timer = timer


def _on_timer() -> None:
    global _timer
    with _timer_lock:
        _timer = None
    if _pool is not None and _pool.trim():
        _trim_later()  # blocks freed since are still waiting


if _pool is not None:
    _pool.configure(LIMIT, DECAY, _trim_later)


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


def release() -> None:
    """Give every free block of the pool back to the system now."""
    if _pool is not None:
        _pool.release()


def pool_stats() -> tuple[int, int, int]:
    """(bytes mapped by the pool, of which free, free blocks); zeros without the pool."""
    return _pool.stats() if _pool is not None else (0, 0, 0)
