"""Nested benchmark: pqbloom vs pyarrow reading and writing the same nested table, in the same run.

    python bench/bench_nested.py [--rows 1000000] [--repeat 3]

Table: ``tags: list<int64>`` (0..8 elements, 5% null lists, 5% null elements) and
``info: struct<name: string, score: int64>`` (5% null structs, 5% null members); one row group
per 1M rows, snappy, data page v1. Both libraries write from their own in-memory table (built once,
outside the timing) and read the other's file as well as their own. Times are the best of
``--repeat`` runs, pqbloom and pyarrow alternating so that both see the same machine load; the
ratio is pqbloom / pyarrow (target: within 2x). The filter row keeps the rows with some tag
above a cut-off: pqbloom with ``filters=`` (all columns returned), pyarrow by reading and then
filtering with pyarrow.compute (it has no filter on list elements). pqbloom is single-threaded; pyarrow reads with
its thread pool unless the row says one thread.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))
import pqbloom  # noqa: E402


def make_table(rows: int) -> pa.Table:
    rng = np.random.default_rng(7)
    lens = rng.integers(0, 9, rows)
    offsets = np.zeros(rows + 1, np.int32)
    np.cumsum(lens, out=offsets[1:])
    n_el = int(offsets[-1])
    elems = pa.array(rng.integers(-10**12, 10**12, n_el), mask=rng.random(n_el) < 0.05)
    list_null = rng.random(rows) < 0.05
    tags = pa.ListArray.from_arrays(pa.array(offsets), elems, mask=pa.array(list_null))
    names = pa.array([f"user-{i % 50_000:05d}" for i in range(rows)], mask=rng.random(rows) < 0.05)
    scores = pa.array(rng.integers(0, 1000, rows), mask=rng.random(rows) < 0.05)
    info = pa.StructArray.from_arrays([names, scores], names=["name", "score"], mask=pa.array(rng.random(rows) < 0.05))
    return pa.table({"tags": tags, "info": info})


CUT = 995 * 10**9  # about 0.25% of the elements are above it: a few percent of the rows match


def pyarrow_filtered(path: str) -> pa.Table:
    """pyarrow has no filter on list elements: read, then keep the rows with some tag above CUT."""
    t = pq.read_table(path)
    tags = t.column("tags").combine_chunks()
    hit = pc.fill_null(pc.greater(pc.list_flatten(tags), CUT), False).to_numpy(zero_copy_only=False)
    rows = np.unique(pc.list_parent_indices(tags).to_numpy()[hit])
    return t.take(rows)


def best_pair(a, b, repeat: int) -> tuple[float, float]:
    """Best times of ``a`` and ``b``, run alternately so that both see the same machine load."""
    ta, tb = [], []
    for _ in range(repeat):
        for fn, out in ((a, ta), (b, tb)):
            t0 = time.perf_counter()
            fn()
            out.append(time.perf_counter() - t0)
    return min(ta), min(tb)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--rows", type=int, default=1_000_000)
    ap.add_argument("--repeat", type=int, default=5)
    args = ap.parse_args()
    at = make_table(args.rows)
    qt = pqbloom.Table.from_arrow(at)
    with tempfile.TemporaryDirectory() as d:
        pa_path, pb_path = os.path.join(d, "pa.parquet"), os.path.join(d, "pb.parquet")
        opts = dict(row_group_size=1_000_000, compression="snappy")
        w_pb, w_pa = best_pair(lambda: pqbloom.write_table(qt, pb_path, **opts),
                               lambda: pq.write_table(at, pa_path, **opts), args.repeat)
        # the files hold the same data whoever wrote them
        assert pq.read_table(pb_path).equals(pq.read_table(pa_path))
        r_pb, r_pa = best_pair(lambda: pqbloom.read_table(pb_path), lambda: pq.read_table(pa_path), args.repeat)
        r_pb_pa, r_pa_pb = best_pair(lambda: pqbloom.read_table(pa_path), lambda: pq.read_table(pb_path),
                                     args.repeat)
        r_pb_arrow, r_pa2 = best_pair(lambda: pqbloom.read_table(pb_path).to_arrow(),
                                      lambda: pq.read_table(pa_path), args.repeat)
        r_pb1, r_pa1 = best_pair(lambda: pqbloom.read_table(pb_path),
                                 lambda: pq.read_table(pa_path, use_threads=False), args.repeat)
        assert pqbloom.read_table(pa_path).to_arrow().equals(at)
        expr = pqbloom.field("tags.list.element") > CUT
        got = pqbloom.read_table(pb_path, filters=expr).to_arrow()
        assert got.equals(pyarrow_filtered(pa_path)) and 0 < got.num_rows < at.num_rows // 10
        r_f_pb, r_f_pa = best_pair(lambda: pqbloom.read_table(pb_path, filters=expr),
                                   lambda: pyarrow_filtered(pa_path), args.repeat)
        sizes = os.path.getsize(pb_path), os.path.getsize(pa_path)
    n = args.rows
    print(f"nested table: {n:,} rows, {len(at.column('tags').combine_chunks().values):,} list elements; "
          f"files: pqbloom {sizes[0] / 1e6:.1f} MB, pyarrow {sizes[1] / 1e6:.1f} MB")
    rows = [
        ("write", w_pb, w_pa),
        ("read own file", r_pb, r_pa),
        ("read the other's file", r_pb_pa, r_pa_pb),
        ("read own file + to_arrow()", r_pb_arrow, r_pa2),
        ("read own, pyarrow 1 thread", r_pb1, r_pa1),
        ("filter tags.list.element > c", r_f_pb, r_f_pa),
    ]
    print(f"{'case':30s} {'pqbloom':>10s} {'pyarrow':>10s} {'ratio':>7s}")
    for name, a, b in rows:
        print(f"{name:30s} {a * 1000:8.1f}ms {b * 1000:8.1f}ms {a / b:6.2f}x")


if __name__ == "__main__":
    main()
