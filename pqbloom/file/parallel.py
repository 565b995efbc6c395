"""Decoding column chunks on worker threads (``use_threads=True``).

The decoders spend their time in numpy and in the compiled kernels, both of which release the GIL, so
chunks decode in parallel. Three things keep a threaded read identical to a single-threaded one:

- results come back in submission order, and the first failing task in that order is the error raised
  (a task after it may have failed first in time; its error is dropped), so the same file gives the
  same typed error both ways;
- each task runs in a copy of the caller's :mod:`contextvars` context, so it charges the caller's
  memory budget (:mod:`pqbloom.limits`; the budget itself is locked);
- at most ``2 * workers`` tasks are in flight ahead of the one being consumed, so decoded chunks do not
  pile up in memory faster than the caller folds them into the result.

One process-wide pool, like pyarrow's CPU pool: tasks never submit to it themselves, so reads from
several user threads share it without deadlock.
"""

from __future__ import annotations

import contextvars
import os
import threading
from collections import deque
from collections.abc import Callable, Generator, Iterable, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from contextlib import closing
from functools import partial
from typing import Any, TypeVar

__all__ = ["MAX_WORKERS", "BATCH_WEIGHT", "map_ordered", "map_ordered_batched", "worker_count"]

R = TypeVar("R")

#: the cap on worker threads (the pool has min(os.cpu_count(), MAX_WORKERS))
MAX_WORKERS = 16

_pool: ThreadPoolExecutor | None = None
_pool_lock = threading.Lock()


def worker_count() -> int:
    """Threads in the decode pool: the machine's CPUs, capped at :data:`MAX_WORKERS`."""
    return max(1, min(os.cpu_count() or 1, MAX_WORKERS))


def _executor() -> ThreadPoolExecutor:
    global _pool
    with _pool_lock:
        if _pool is None:
            _pool = ThreadPoolExecutor(max_workers=worker_count(), thread_name_prefix="pqbloom-decode")
        return _pool


def map_ordered(tasks: Iterable[Callable[[], R]], *, use_threads: bool = True) -> Generator[R, None, None]:
    """Yield each task's result in the order of ``tasks``, running them on the decode pool.

    A task's exception is raised when its turn comes; the tasks not yet started are then cancelled
    and those running are awaited, so no worker outlives the call. ``use_threads=False`` (or a
    one-CPU machine) runs each task in the calling thread as it is consumed.
    """
    workers = worker_count()
    if not use_threads or workers == 1:
        for task in tasks:
            yield task()
        return
    pool = _executor()
    window = 2 * workers
    pending: deque[Future[R]] = deque()
    it = iter(tasks)
    try:
        for task in it:
            # a fresh copy per task: one Context cannot be entered by two threads at once
            pending.append(pool.submit(contextvars.copy_context().run, task))
            if len(pending) >= window:
                yield pending.popleft().result()
        while pending:
            yield pending.popleft().result()
    finally:
        _cancel_and_wait(pending)


def _cancel_and_wait(pending: Iterable[Future[Any]]) -> None:
    """Cancel the tasks not started and wait for those running, so that no worker outlives the call."""
    for f in pending:
        f.cancel()
    for f in pending:
        if not f.cancelled():
            f.exception()  # wait for it; its error (if any) is superseded by the one being raised


#: the most weight (bytes, say) of tasks :func:`map_ordered_batched` runs as one task on the pool
BATCH_WEIGHT = 1 << 20
#: the most tasks in one batch
MAX_BATCH = 32


def map_ordered_batched(tasks: Sequence[Callable[[], R]], weights: Sequence[int], *, use_threads: bool = True,
                        batch_weight: int = BATCH_WEIGHT,
                        inline: Sequence[bool] | None = None) -> Generator[R, None, None]:
    """:func:`map_ordered`, with consecutive light tasks run as one task on the pool: a batch holds
    up to :data:`MAX_BATCH` tasks whose ``weights`` sum to at most ``batch_weight`` (a task heavier
    than that is a batch of its own). Many small tasks (the chunks of many small row groups) then
    cost one submission, one context copy and one hand-over each batch, not each task; at most
    ``2 * workers`` batches are in flight. Results and errors come as :func:`map_ordered` gives
    them: in order, the first failing task's error raised in its turn (the tasks after it in its
    batch are not run).

    ``inline``: the tasks (True) that run in the calling thread, in their turn, while the pool works
    on the others ahead of them. A task that is mostly Python between short GIL-free steps gains
    nothing on a worker: each step hands the GIL to another thread and waits to get it back, which
    on a virtual machine costs more than the step (a read of numeric columns took 1.5 to 2 times its
    one-thread time on two workers); such tasks run here, beside the pool's long GIL-free ones."""
    marks = [False] * len(tasks) if inline is None else list(inline)
    if len(weights) != len(tasks) or len(marks) != len(tasks):
        raise ValueError(f"{len(tasks)} tasks with {len(weights)} weights and {len(marks)} inline marks")
    if not use_threads or worker_count() == 1 or all(marks):
        yield from map_ordered(tasks, use_threads=False)
        return
    pooled = [i for i, m in enumerate(marks) if not m]
    batches: list[list[Callable[[], R]]] = []
    current: list[Callable[[], R]] = []
    weight = 0
    for i in pooled:
        w = weights[i]
        if current and (weight + w > batch_weight or len(current) >= MAX_BATCH):
            batches.append(current)
            current, weight = [], 0
        current.append(tasks[i])
        weight += w
    if current:
        batches.append(current)
    if not any(marks):
        yield from _flatten(map_ordered([partial(_run_batch, b) for b in batches], use_threads=True))
        return
    yield from _interleave(tasks, marks, batches)


def _interleave(tasks: Sequence[Callable[[], R]], inline: Sequence[bool],
                batches: list[list[Callable[[], R]]]) -> Generator[R, None, None]:
    """Every task's result in order: the pooled ones (``batches``, in order) submitted up to a window
    ahead, the ``inline`` ones run in this thread, in their turn or, while it waits for a pooled
    result, ahead of it (no further than the tasks of the batches submitted: what waits is bounded
    as the window bounds it). A task run ahead that fails has its error raised in its turn."""
    pool = _executor()
    window = 2 * worker_count()
    last_of_batch = []  # the index of each batch's last task
    i = -1
    for batch in batches:
        for _ in batch:
            i += 1
            while inline[i]:
                i += 1
        last_of_batch.append(i)
    pending: deque[Future[list[tuple[bool, object]]]] = deque()
    ready: deque[tuple[bool, object]] = deque()
    ran: dict[int, tuple[bool, object]] = {}  # inline tasks run ahead
    submitted = 0
    ahead = 0  # the next task to consider running ahead

    def fill() -> None:
        nonlocal submitted
        while submitted < len(batches) and len(pending) < window:
            pending.append(pool.submit(contextvars.copy_context().run, _run_batch, batches[submitted]))
            submitted += 1

    try:
        for i, task in enumerate(tasks):
            fill()
            if inline[i]:
                if i not in ran:
                    yield task()
                    continue
                got = ran.pop(i)
            else:
                if not ready:
                    done = pending.popleft()
                    reach = last_of_batch[submitted - 1] if submitted < len(batches) else len(tasks) - 1
                    ahead = max(ahead, i + 1)
                    while not done.done() and ahead <= reach:  # this thread works while the pool does
                        if inline[ahead]:
                            try:
                                ran[ahead] = (True, tasks[ahead]())
                            except BaseException as exc:  # raised in its turn, after any earlier error
                                ran[ahead] = (False, exc)
                                ahead = len(tasks)
                                break
                        ahead += 1
                    ready.extend(done.result())
                    fill()
                got = ready.popleft()
            ok, value = got
            if not ok:
                assert isinstance(value, BaseException)
                raise value
            yield value  # type: ignore[misc]
    finally:
        ran.clear()
        _cancel_and_wait(pending)


def _run_batch(batch: list[Callable[[], R]]) -> list[tuple[bool, object]]:
    """Each task's (True, result) in order, up to the first that fails: (False, its exception)."""
    out: list[tuple[bool, object]] = []
    for task in batch:
        try:
            out.append((True, task()))
        except BaseException as exc:  # raised in the caller's thread, in its turn (_flatten)
            out.append((False, exc))
            break
    return out


def _flatten(batches: Generator[list[tuple[bool, object]], None, None]) -> Generator[R, None, None]:
    with closing(batches):  # a caller that stops early cancels the batches not yet started
        for got in batches:
            for ok, value in got:
                if not ok:
                    assert isinstance(value, BaseException)
                    raise value
                yield value  # type: ignore[misc]
