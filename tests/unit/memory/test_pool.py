"""The pool of large column buffers (pqbloom.memory.pool, pqbloom/_kernels/pool.pyx): a block goes back
to the pool only when the object that exports it goes (the array, its views, an Arrow buffer), and is only
then handed out again. Trims run at a time the test chooses (an injected clock and timer), never by waiting."""

from __future__ import annotations

import gc
import os
import subprocess
import sys
import time
from collections.abc import Callable
from typing import Any

import numpy as np
import pyarrow as pa
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pqbloom import kernels
from pqbloom.memory import pool as buffers

MIB = 1 << 20

needs_pool = pytest.mark.skipif(not buffers.POOLED, reason="the pool is compiled with the kernels")


def _free() -> int:
    gc.collect()
    return buffers.pool_stats()[1]


@pytest.fixture(autouse=True)
def _empty_pool():
    buffers.release()
    yield
    buffers.release()


def test_pooled_whenever_the_kernels_are_compiled():
    # the CI machine builds the kernels (PQBLOOM_REQUIRE_KERNELS=1): the pool must be there too
    assert buffers.POOLED == (kernels.COMPILED and os.environ.get("PQBLOOM_BUFFER_POOL", "") != "0")


@needs_pool
def test_small_buffers_are_numpy_arrays_and_large_ones_pool_blocks():
    small = buffers.empty(1000, np.int64)
    assert small.flags.owndata and small.shape == (1000,)
    big = buffers.empty(5 * MIB, np.uint8)
    assert big.shape == (5 * MIB,) and big.dtype == np.uint8 and big.flags.writeable
    base = big.base
    while isinstance(base, np.ndarray):  # (numpy's chain ends at a memoryview of the block)
        base = base.base
    assert type(base.obj).__name__ == "PoolBuffer"
    rows = buffers.zeros((MIB, 3), np.int32)  # rows of several items (FIXED_LEN_BYTE_ARRAY, INT96)
    assert rows.shape == (MIB, 3) and not rows.any() and rows.flags.c_contiguous
    z = buffers.zeros(MIB, np.int64)
    assert z.shape == (MIB,) and not z.any()


@needs_pool
def test_a_freed_block_is_kept_and_taken_again():
    mapped0, free0 = buffers.pool_stats()[0], _free()
    a = buffers.empty(10 * MIB, np.uint8)
    a[:] = 7
    assert buffers.pool_stats()[0] == mapped0 + 10 * MIB
    del a
    assert _free() == free0 + 10 * MIB
    b = buffers.empty(9 * MIB, np.uint8)  # fits the block with less than a quarter to spare
    assert _free() == free0 and buffers.pool_stats()[0] == mapped0 + 10 * MIB
    z = buffers.zeros(9 * MIB // 8, np.int64)  # a zeroed request gets zeros even in a used block
    assert not z.any()
    del b, z


@needs_pool
def test_views_and_arrow_buffers_keep_the_block():
    free0 = _free()
    a = buffers.empty(8 * MIB // 8, np.int64)
    a[:] = 5
    view = a[10:20]
    arrow = pa.array(a[: 4 * MIB // 8])
    del a
    assert _free() == free0  # the view and the Arrow array still use it
    c = buffers.empty(8 * MIB // 8, np.int64)  # so a new request gets another block
    c[:] = -1
    assert view.tolist() == [5] * 10 and arrow[0].as_py() == 5 and arrow[-1].as_py() == 5
    del view
    assert _free() == free0
    del arrow
    assert _free() == free0 + 8 * MIB
    del c


def _mark(a: np.ndarray, v: int) -> None:
    """Write ``v`` at a few places of ``a`` (its first, middle and last values: a few pages touched, not
    the whole block, which a fill would fault in)."""
    a[0] = a[len(a) // 2] = a[-1] = v


def _marked(a: np.ndarray, v: int) -> bool:
    return bool(a[0] == v and a[len(a) // 2] == v and a[-1] == v)


@needs_pool
@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(st.booleans(), st.integers(4, 24), st.integers(0, 7)), min_size=1, max_size=30))
def test_a_live_buffer_is_never_handed_out_again(ops):
    """Random takes and frees: a new buffer never overlaps a live one (or a live view of one), and every
    live buffer keeps the values written to it. A freed block joins the pool as its array goes (no
    collection needed: nothing here is in a cycle)."""
    live: list[tuple[np.ndarray, int]] = []
    for n, (take, mib, pick) in enumerate(ops):
        if take or not live:
            a = buffers.empty(mib * MIB // 8, np.int64)
            for arr, _ in live:
                assert not np.shares_memory(a, arr)
            kept = a[mib:] if pick % 2 else a  # a view of it, now and then
            _mark(kept, n)
            live.append((kept, n))
            del a, kept
        else:
            live.pop(pick % len(live))
        for arr, v in live:
            assert _marked(arr, v)


@needs_pool
def test_free_blocks_are_unmapped_after_the_decay_and_by_release():
    a = buffers.empty(6 * MIB, np.uint8)
    del a
    assert _free() >= 6 * MIB
    buffers.release()
    assert buffers.pool_stats()[1:] == (0, 0)
    buffers.configure(buffers.LIMIT, 10.0, None)
    try:
        b = buffers.empty(6 * MIB, np.uint8)
        del b
        assert _free() >= 6 * MIB
        freed = time.monotonic()
        assert buffers.trim(freed) >= 6 * MIB  # (the decay has not passed at the time it was freed)
        assert buffers.trim(freed + 10.5) == 0  # it has: unmapped
    finally:
        buffers.configure(buffers.LIMIT, buffers.DECAY, buffers.TRIMS)


class _Timers:
    """Timers that fire when the test says (``fire()``), at a clock the test moves."""

    def __init__(self) -> None:
        self.now = time.monotonic()
        self.started: list[tuple[float, Callable[[], None]]] = []

    def clock(self) -> float:
        return self.now

    def start(self, delay: float, callback: Callable[[], None]) -> Any:
        self.started.append((delay, callback))
        return self

    def cancel(self) -> None:
        pass

    def fire(self) -> None:
        self.started.pop(0)[1]()


@needs_pool
def test_the_timer_unmaps_what_waits_longer_than_the_decay():
    timers = _Timers()
    trims = buffers.Trims(decay=10.0, clock=timers.clock, start_timer=timers.start)
    buffers.configure(buffers.LIMIT, 10.0, trims)
    try:
        a = buffers.empty(6 * MIB, np.uint8)
        del a
        assert _free() >= 6 * MIB
        assert [d for d, _ in timers.started] == [10.5]  # a block joined the free list: one timer, past the decay
        b = buffers.empty(6 * MIB, np.uint8)
        del b
        assert len(timers.started) == 1  # one timer at a time
        timers.fire()  # before the decay has passed: nothing unmapped, and the trim is scheduled again
        assert _free() >= 6 * MIB and len(timers.started) == 1 and trims.pending is not None
        timers.now += 10.5
        timers.fire()  # after it: the block is unmapped, and nothing is left to wait for
        assert buffers.pool_stats()[1] == 0 and timers.started == [] and trims.pending is None
    finally:
        buffers.configure(buffers.LIMIT, buffers.DECAY, buffers.TRIMS)


@needs_pool
def test_no_more_than_the_limit_is_kept():
    buffers.configure(8 * MIB, buffers.DECAY, None)
    try:
        arrays = [buffers.empty(6 * MIB, np.uint8) for _ in range(3)]
        del arrays
        assert 0 < _free() <= 8 * MIB
    finally:
        buffers.configure(buffers.LIMIT, buffers.DECAY, buffers.TRIMS)


@pytest.mark.parametrize("env", [{"PQBLOOM_BUFFER_POOL": "0"}, {"PQBLOOM_PURE_PYTHON": "1"}])
def test_the_pool_can_be_turned_off(env):
    code = ("import numpy as np; from pqbloom.memory import pool; a = pool.empty(8 << 20, np.uint8); "
            "print(pool.POOLED, a.flags.owndata)")
    out = subprocess.run([sys.executable, "-c", code], env={**os.environ, **env}, capture_output=True, text=True,
                         check=True).stdout
    assert out.split() == ["False", "True"]


@needs_pool
@pytest.mark.traces_memory
def test_tracemalloc_sees_a_pooled_buffer_while_it_is_handed_out():
    # the peak-memory tests measure with tracemalloc: pooled column buffers must count as numpy's do
    import tracemalloc

    tracemalloc.start()
    try:
        a = buffers.empty(12 * MIB, np.uint8)
        held, _ = tracemalloc.get_traced_memory()
        del a
        gc.collect()
        after, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert held >= 12 * MIB and peak >= 12 * MIB and after < MIB


KIB = 1 << 10


def _block_of(a: np.ndarray) -> Any:
    base = a.base
    while isinstance(base, np.ndarray):
        base = base.base
    return base.obj if isinstance(base, memoryview) else base


@needs_pool
def test_column_sized_buffers_come_from_the_pool_in_64_kib_steps():
    # a wide table's column of 100,000 float64 (800,000 bytes): glibc maps and unmaps such a buffer on
    # every read, so it comes from the pool, in a block rounded to 64 KiB (not to the 2 MiB of large ones)
    assert buffers.MIN_POOLED <= 800_000
    mapped0 = buffers.pool_stats()[0]
    a = buffers.empty(100_000, np.float64)
    assert type(_block_of(a)).__name__ == "PoolBuffer"
    assert buffers.pool_stats()[0] - mapped0 == 13 * 64 * KIB  # 800,000 bytes -> 13 steps of 64 KiB
    a[:] = 1.5
    del a
    assert _free() == 13 * 64 * KIB
    b = buffers.empty(99_000, np.float64)  # the same 64 KiB class: the freed block, nothing mapped
    assert buffers.pool_stats()[:2] == (mapped0 + 13 * 64 * KIB, 0)
    del b
    small = buffers.empty(buffers.MIN_POOLED // 8 - 1, np.int64)  # under the floor: numpy's own
    assert small.flags.owndata


@needs_pool
def test_a_smaller_block_is_not_taken_for_a_larger_request_nor_a_much_larger_one_for_a_small_request():
    a = buffers.empty(512 * KIB, np.uint8)
    del a
    free = _free()
    assert free == 512 * KIB
    b = buffers.empty(600 * KIB, np.uint8)  # larger than the free block: a new one
    assert _free() == 512 * KIB
    c = buffers.empty(300 * KIB, np.uint8)  # the free block would leave more than a quarter unused
    assert _free() == 512 * KIB
    d = buffers.empty(480 * KIB, np.uint8)  # fits it with less than a quarter to spare
    assert _free() == 0
    del b, c, d


@needs_pool
def test_lowering_the_limit_unmaps_the_oldest_blocks_first():
    old = buffers.empty(1 * MIB, np.uint8)
    new = buffers.empty(3 * MIB // 2, np.uint8)
    del old
    gc.collect()
    time.sleep(0.01)  # (the free list orders blocks by the time they were freed)
    del new
    assert _free() == 1 * MIB + 3 * MIB // 2
    try:
        buffers.configure(3 * MIB // 2, buffers.DECAY, None)  # room for the newer block only
        assert buffers.pool_stats()[1:] == (3 * MIB // 2, 1)
        mapped = buffers.pool_stats()[0]
        again = buffers.empty(3 * MIB // 2, np.uint8)  # it is the one kept
        assert buffers.pool_stats()[:2] == (mapped, 0)
        del again
    finally:
        buffers.configure(buffers.LIMIT, buffers.DECAY, buffers.TRIMS)


@needs_pool
@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(st.booleans(), st.integers(256, 6000), st.integers(0, 7)), min_size=1, max_size=40))
def test_small_and_large_blocks_are_never_handed_out_twice(ops):
    """As test_a_live_buffer_is_never_handed_out_again, over sizes from the pool's floor (256 KiB) to
    about 6 MiB: both block classes, and the free lists kept by capacity."""
    live: list[tuple[np.ndarray, int]] = []
    for n, (take, kib, pick) in enumerate(ops):
        if take or not live:
            a = buffers.empty(kib * KIB // 8, np.int64)
            for arr, _ in live:
                assert not np.shares_memory(a, arr)
            _mark(a, n)
            live.append((a, n))
            del a
        else:
            live.pop(pick % len(live))
        for arr, v in live:
            assert _marked(arr, v)
    mapped, free, blocks = buffers.pool_stats()
    assert 0 <= free <= mapped and (blocks == 0) == (free == 0)


@needs_pool
def test_the_columns_of_a_wide_read_are_pool_blocks(tmp_path):
    import pyarrow.parquet as pq

    import pqbloom

    t = pa.table({f"c{i}": np.arange(50_000, dtype=np.float64) * i for i in range(4)})
    pq.write_table(t, tmp_path / "wide.parquet")
    got = pqbloom.read_table(tmp_path / "wide.parquet", use_threads=False)
    assert got.to_arrow().equals(t)
    for name in t.column_names:
        values = got.column(name).to_numpy()
        assert type(_block_of(values)).__name__ == "PoolBuffer"
