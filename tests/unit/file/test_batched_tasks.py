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


def outcome(gen: Any) -> tuple[list[int], str | None]:
    """The results a run of tasks gives, and the message of the error that ends it (None: none did)."""
    got: list[int] = []
    try:
        for v in gen:
            got.append(v)
    except ValueError as exc:
        return got, str(exc)
    return got, None


@settings(max_examples=60, deadline=None)
@given(weights=st.lists(st.integers(0, 5000), max_size=80), failing=st.sets(st.integers(0, 79), max_size=3),
       batch_weight=st.integers(1, 20000))
def test_batches_give_what_one_task_at_a_time_gives(weights: list[int], failing: set[int], batch_weight: int) -> None:
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


@settings(max_examples=60, deadline=None)
@given(weights=st.lists(st.integers(0, 5000), max_size=60), failing=st.sets(st.integers(0, 59), max_size=3),
       inline=st.lists(st.booleans(), min_size=60, max_size=60), batch_weight=st.integers(1, 20000))
def test_tasks_run_inline_give_what_one_task_at_a_time_gives(weights: list[int], failing: set[int], inline: list[bool],
                                                             batch_weight: int) -> None:
    """Some tasks in the calling thread, the others on the pool: the same results in the same order, and
    the first failing task's error in its turn, as running them one by one."""
    n = len(weights)
    tasks = [_task(i, i in failing, []) for i in range(n)]
    want = outcome(map_ordered(tasks, use_threads=False))
    assert outcome(map_ordered_batched(tasks, weights, use_threads=True, batch_weight=batch_weight,
                                       inline=inline[:n])) == want


def test_inline_tasks_run_in_the_calling_thread_and_the_others_on_the_pool() -> None:
    caller = threading.get_ident()
    where: dict[int, bool] = {}

    def task(i: int) -> Callable[[], int]:
        def run() -> int:
            where[i] = threading.get_ident() == caller
            return i
        return run

    inline = [i % 3 == 0 for i in range(30)]
    got = list(map_ordered_batched([task(i) for i in range(30)], [1 << 20] * 30, use_threads=True, inline=inline))
    assert got == list(range(30))
    assert [where[i] for i in range(30)] == inline
    with pytest.raises(ValueError):
        list(map_ordered_batched([task(0), task(1)], [1, 1], use_threads=True, inline=[True]))


@pytest.mark.parametrize("compiled_loop", [True, False])
def test_a_read_of_small_numeric_chunks_decodes_in_the_calling_thread(tmp_path: Any, monkeypatch: Any,
                                                                      compiled_loop: bool) -> None:
    """Chunks the Python page loop decodes in short GIL-free steps (numeric, snappy) stay in the
    caller's thread with use_threads=True, strings of a large chunk go to the pool; numeric chunks the
    compiled page loop takes (no GIL from first page to last) go to the pool too. The table is
    pyarrow's either way."""
    import numpy as np
    import pyarrow as pa
    import pyarrow.parquet as pq

    import pqbloom
    from pqbloom.file import parallel
    from pqbloom.file import reader as reader_module

    rng = np.random.default_rng(3)
    words = np.array([f"w{i:06d}-" + "x" * (i % 40) for i in range(50_000)], dtype=object)
    t = pa.table({"a": rng.standard_normal(200_000), "b": rng.integers(0, 10**9, 200_000),
                  "s": pa.array(words[rng.integers(0, len(words), 200_000)], pa.string())})
    pq.write_table(t, tmp_path / "t.parquet", compression="snappy", use_dictionary=["s"])
    threads: dict[str, set[int]] = {}
    real = parallel._run_batch

    def spy(batch: Any) -> Any:
        threads.setdefault("pool", set()).add(threading.get_ident())
        return real(batch)

    monkeypatch.setattr(parallel, "_run_batch", spy)
    monkeypatch.setattr(reader_module, "SMALL_READ", 0)  # (a small read decodes in one thread anyway)
    if not compiled_loop:
        from pqbloom.file import flat_chunk

        monkeypatch.setattr(flat_chunk, "available", lambda: False)

    got = pqbloom.read_table(tmp_path / "t.parquet", use_threads=True)
    assert got.to_arrow().equals(t)
    pf = pqbloom.ParquetFile(tmp_path / "t.parquet")
    descs = {d.dotted_path: d for d in pf.select_columns(None)}
    assert pf.decodes_inline(0, descs["a"]) is not compiled_loop and pf.decodes_inline(0, descs["b"]) is not compiled_loop
    assert not pf.decodes_inline(0, descs["s"])
    assert threads.get("pool") and threading.get_ident() not in threads["pool"]  # the strings went to the pool


def test_the_calling_thread_runs_inline_tasks_ahead_while_a_pooled_one_works() -> None:
    # task 0 (pooled) finishes only once task 1 (inline, after it) has run: the caller must run task 1
    # while it waits for task 0, not after
    later_ran = threading.Event()

    def pooled() -> str:
        return "pooled" if later_ran.wait(10) else "waited in vain"

    def later() -> str:
        later_ran.set()
        return "inline"

    got = list(map_ordered_batched([pooled, later], [1 << 20, 1], use_threads=True, inline=[False, True]))
    assert got == ["pooled", "inline"]


def test_an_inline_task_that_failed_ahead_raises_in_its_turn_after_an_earlier_error() -> None:
    gate = threading.Event()

    def slow_failing() -> int:
        gate.wait(10)
        raise ValueError("task 0")

    def fails_ahead() -> int:
        gate.set()
        raise ValueError("task 1")

    with pytest.raises(ValueError, match="task 0"):
        list(map_ordered_batched([slow_failing, fails_ahead], [1 << 20, 1], use_threads=True, inline=[False, True]))
    with pytest.raises(ValueError, match="task 1"):
        list(map_ordered_batched([lambda: 7, fails_ahead], [1 << 20, 1], use_threads=True, inline=[False, True]))


@pytest.mark.parametrize("compiled_loop", [True, False])
def test_a_file_of_many_small_row_groups_decodes_in_the_calling_thread(tmp_path: Any, monkeypatch: Any,
                                                                       compiled_loop: bool) -> None:
    """Small chunks decode in the calling thread, those the compiled page loop takes too (the Python
    around each is most of its time: on the pool, threads would wait on each other for the GIL)."""
    import numpy as np
    import pyarrow as pa
    import pyarrow.parquet as pq

    import pqbloom
    from pqbloom.file import parallel
    from pqbloom.file import reader as reader_module

    rng = np.random.default_rng(4)
    t = pa.table({"id": rng.integers(0, 2**40, 60_000), "s": pa.array([f"c{i % 50}" for i in range(60_000)])})
    pq.write_table(t, tmp_path / "small.parquet", row_group_size=2_000)
    monkeypatch.setattr(reader_module, "SMALL_READ", 0)
    used: list[int] = []
    real = parallel._run_batch

    def spy(batch: Any) -> Any:
        used.append(len(batch))
        return real(batch)

    monkeypatch.setattr(parallel, "_run_batch", spy)
    if not compiled_loop:
        from pqbloom.file import flat_chunk

        monkeypatch.setattr(flat_chunk, "available", lambda: False)

    got = pqbloom.read_table(tmp_path / "small.parquet", use_threads=True)
    assert got.to_arrow().equals(t)
    assert used == []  # every chunk small: none went to the pool (nor those of the compiled page loop)
