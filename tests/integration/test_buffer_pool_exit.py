"""The pool of large column buffers (pqbloom.memory.pool) at interpreter exit, in a process of its own (the
rest of the pool's tests: tests/unit/memory/test_pool.py)."""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pyarrow as pa
import pytest

from pqbloom.memory import pool

needs_pool = pytest.mark.skipif(not pool.POOLED, reason="the pool is compiled with the kernels")


@needs_pool
def test_a_table_kept_until_the_interpreter_exits_does_not_hang_it(tmp_path):
    # a read's result held in a global is freed while the interpreter finalizes; its block joining the
    # free list used to start the trim timer then, and Timer.start() waited forever for a thread that
    # never runs (the process hung at exit)
    import pyarrow.parquet as pq

    path = str(tmp_path / "ints.parquet")
    pq.write_table(pa.table({"a": np.arange(2_000_000, dtype=np.int64)}), path)
    # the read's transient blocks (its dictionary, say) may have started a trim timer already; it is
    # cancelled, so that the block freed at exit is the one that would start a timer
    code = (f"import pqbloom\nt = pqbloom.read_table({path!r}, use_threads=False)\n"
            "from pqbloom.memory import pool\npool.TRIMS.cancel()\n"
            "assert pool.TRIMS.pending is None, 'a trim is pending'\nassert pool.pool_stats()[0] > 0\n"
            "print(t.num_rows)\n")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.split() == ["2000000"]
