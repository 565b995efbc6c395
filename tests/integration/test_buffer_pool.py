"""The pool of large column buffers (pqbloom.buffers, pqbloom/_kernels/pool.pyx): a block goes back
to the pool only when nothing refers to it any more, and is only then handed out again."""

from __future__ import annotations

import gc
import os
import subprocess
import sys
import time

import numpy as np
import pyarrow as pa
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pqbloom import buffers, kernels

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


@needs_pool
@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(st.booleans(), st.integers(4, 24), st.integers(0, 7)), min_size=1, max_size=30))
def test_a_live_buffer_is_never_handed_out_again(ops):
    """Random takes and frees: every live buffer keeps the bytes written to it."""
    live: list[tuple[np.ndarray, int]] = []
    for n, (take, mib, pick) in enumerate(ops):
        if take or not live:
            a = buffers.empty(mib * MIB // 8, np.int64)
            a[:] = n
            live.append((a[mib:], n) if pick % 2 else (a, n))  # a view of it, now and then
            del a
        else:
            live.pop(pick % len(live))
        gc.collect()
        for arr, v in live:
            assert arr[0] == v and arr[-1] == v and arr[len(arr) // 2] == v


@needs_pool
def test_free_blocks_are_unmapped_after_the_decay_and_by_release():
    a = buffers.empty(6 * MIB, np.uint8)
    del a
    assert _free() >= 6 * MIB
    buffers.release()
    assert buffers.pool_stats()[1:] == (0, 0)
    from pqbloom._kernels import pool

    pool.configure(buffers.LIMIT, 0.05, None)
    try:
        b = buffers.empty(6 * MIB, np.uint8)
        del b
        assert _free() >= 6 * MIB
        time.sleep(0.1)
        assert pool.trim() == 0
    finally:
        pool.configure(buffers.LIMIT, buffers.DECAY, buffers._trim_later)


@needs_pool
def test_the_timer_unmaps_what_waits_longer_than_the_decay(monkeypatch):
    monkeypatch.setattr(buffers, "DECAY", 0.05)
    from pqbloom._kernels import pool

    if buffers._timer is not None:  # one set by an earlier test, for the usual decay
        buffers._timer.cancel()
        buffers._timer = None

    pool.configure(buffers.LIMIT, 0.05, buffers._trim_later)
    try:
        a = buffers.empty(6 * MIB, np.uint8)
        del a
        assert _free() >= 6 * MIB
        deadline = time.monotonic() + 5
        while buffers.pool_stats()[1] and time.monotonic() < deadline:
            time.sleep(0.05)
        assert buffers.pool_stats()[1] == 0
    finally:
        pool.configure(buffers.LIMIT, buffers.DECAY, buffers._trim_later)


@needs_pool
def test_no_more_than_the_limit_is_kept():
    from pqbloom._kernels import pool

    pool.configure(8 * MIB, buffers.DECAY, None)
    try:
        arrays = [buffers.empty(6 * MIB, np.uint8) for _ in range(3)]
        del arrays
        assert 0 < _free() <= 8 * MIB
    finally:
        pool.configure(buffers.LIMIT, buffers.DECAY, buffers._trim_later)


@pytest.mark.parametrize("env", [{"PQBLOOM_BUFFER_POOL": "0"}, {"PQBLOOM_PURE_PYTHON": "1"}])
def test_the_pool_can_be_turned_off(env):
    code = ("import numpy as np; from pqbloom import buffers; a = buffers.empty(8 << 20, np.uint8); "
            "print(buffers.POOLED, a.flags.owndata)")
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


@needs_pool
def test_a_table_kept_until_the_interpreter_exits_does_not_hang_it(tmp_path):
    # a read's result held in a global is freed while the interpreter finalizes; its block joining the
    # free list used to start the trim timer then, and Timer.start() waited forever for a thread that
    # never runs (the process hung at exit)
    import pyarrow.parquet as pq

    path = str(tmp_path / "ints.parquet")
    pq.write_table(pa.table({"a": np.arange(2_000_000, dtype=np.int64)}), path)
    code = (f"import pqbloom\nt = pqbloom.read_table({path!r}, use_threads=False)\n"
            "from pqbloom import buffers\nassert buffers._timer is None, 'a trim is pending'\n"
            "print(t.num_rows)\n")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.split() == ["2000000"]
