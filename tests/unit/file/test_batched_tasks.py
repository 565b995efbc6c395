"""Tasks run in batches on the decode pool (:func:`pqbloom.file.parallel.map_ordered_batched`): the
results and the error a read gives are those of one task at a time, in order."""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pqbloom.file.parallel import map_ordered, map_ordered_batched


def _task(i: int, fail: bool, ran: list[int]) -> Callable[[], int]:
    def run() -> int:
        ran.append(i)
        if fail:
            raise ValueError(f"task {i}")
        return i * i
    return run


@settings(max_examples=60, deadline=None)
@given(weights=st.lists(st.integers(0, 5000), max_size=80), failing=st.sets(st.integers(0, 79), max_size=3),
       batch_weight=st.integers(1, 20000))
def test_batches_give_what_one_task_at_a_time_gives(weights: list[int], failing: set[int], batch_weight: int) -> None:
    def outcome(gen: Any) -> tuple[list[int], str | None]:
        got: list[int] = []
        try:
            for v in gen:
                got.append(v)
        except ValueError as exc:
            return got, str(exc)
        return got, None

    ran: list[int] = []
    tasks = [_task(i, i in failing, ran) for i in range(len(weights))]
    want = outcome(map_ordered(tasks, use_threads=False))
    for threads in (True, False):
        assert outcome(map_ordered_batched(tasks, weights, use_threads=threads, batch_weight=batch_weight)) == want


def test_weights_must_match_tasks() -> None:
    with pytest.raises(ValueError):
        list(map_ordered_batched([lambda: 1, lambda: 2], [1], use_threads=True))


def test_closing_early_leaves_no_batch_running() -> None:
    started = threading.Event()
    release = threading.Event()
    ran: list[int] = []

    def slow(i: int) -> Callable[[], int]:
        def run() -> int:
            started.set()
            release.wait(5)
            ran.append(i)
            return i
        return run

    gen = map_ordered_batched([slow(i) for i in range(400)], [1 << 19] * 400, use_threads=True)
    assert next(gen) == 0
    release.set()
    gen.close()  # cancels the batches not started, waits for those running
    done = len(ran)
    assert done < 400
    threading.Event().wait(0.2)
    assert len(ran) == done  # nothing ran after the generator closed
