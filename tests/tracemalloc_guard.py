"""Make the tests' ``tracemalloc.start()`` / ``tracemalloc.stop()`` pairs safe on CPython versions with
the tracemalloc.stop() race (CPython gh-128679: fixed in 3.12.9 and 3.13.2, never in 3.11).

On those versions, ``tracemalloc.stop()`` frees the traceback buffer while another thread may be inside
a raw-allocation hook that it entered while tracing was on and that is waiting for the GIL; that thread
then writes through NULL in ``traceback_new()``. In this suite the other thread is one of pyarrow's CPU
pool threads: after ``pq.read_table(pa.BufferReader(data))`` fails, it releases the ``PyBuffer`` it held,
and ``PyGILState_Ensure()`` allocates a thread state (``PyMem_RawCalloc``) while the next test traces.
The process dies with "Fatal Python error: Segmentation fault", current thread "<no Python frame>".

The guard starts tracing once and never stops it: ``stop()`` only clears the traces, and ``start()``
clears them too, so ``get_traced_memory()`` inside a start/stop block still counts (and peaks) only
what was allocated inside it. Tracing then stays on for the rest of the session, which slows every later
test by about a third; so the tests that trace carry the ``traces_memory`` marker and tests/conftest.py
runs them last. ``starts`` counts the start() calls, so that conftest can fail a test that traces
without the marker.
"""

from __future__ import annotations

import sys
import tracemalloc

__all__ = ["AFFECTED", "install", "starts"]

#: this interpreter has the tracemalloc.stop() race
AFFECTED = sys.implementation.name == "cpython" and (
    sys.version_info < (3, 12, 9) or (3, 13) <= sys.version_info < (3, 13, 2))

_real_start = tracemalloc.start
_real_stop = tracemalloc.stop
_starts = [0]


def starts() -> int:
    """How many times a test called tracemalloc.start() since install() (counted only where patched)."""
    return _starts[0]


def _start(nframe: int = 1) -> None:
    _starts[0] += 1
    if tracemalloc.is_tracing() and tracemalloc.get_traceback_limit() != nframe:
        _real_stop()  # another traceback depth: a real restart (no test asks for one)
    if not tracemalloc.is_tracing():
        _real_start(nframe)
    tracemalloc.clear_traces()  # also resets the traced size and its peak


def _stop() -> None:
    tracemalloc.clear_traces()


def install() -> bool:
    """Patch :mod:`tracemalloc` when this interpreter is affected; return whether it was patched."""
    if AFFECTED and tracemalloc.stop is _real_stop:
        tracemalloc.start, tracemalloc.stop = _start, _stop
    return tracemalloc.stop is _stop
