"""Footer parse + pruning on a file with many tiny row groups, pqbloom vs pyarrow in the same run.

    python bench/bench_many_row_groups.py [--row-groups 10000] [--rows-per-group 4] [--big-string-mb 100]

Prints one line per measurement (best of --repeat). The file is written once by pqbloom into a temp dir.
"""

from __future__ import annotations

import argparse
import os
import tempfile
import time

import numpy as np

import pqbloom
from pqbloom.bloom import hash_scalar


def best(fn, repeat: int) -> tuple[float, object]:
    out, t_best = None, float("inf")
    for _ in range(repeat):
        t = time.perf_counter()
        out = fn()
        t_best = min(t_best, time.perf_counter() - t)
    return t_best, out


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--row-groups", type=int, default=10_000)
    ap.add_argument("--rows-per-group", type=int, default=4)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--big-string-mb", type=int, default=0, help="also time a single N MB string value")
    args = ap.parse_args()
    n_rg, per = args.row_groups, args.rows_per_group
    d = tempfile.mkdtemp()
    path = os.path.join(d, "many.parquet")
    ids = np.arange(n_rg * per, dtype=np.int64)
    rng = np.random.default_rng(0)
    keys = rng.permutation(ids)  # unsorted: min/max cannot prune, only Bloom filters can
    t = time.perf_counter()
    pqbloom.write_table({"id": ids, "key": keys}, path, row_group_size=per, compression="uncompressed",
                        bloom_filter_options={"key": True}, write_page_index=False)
    print(f"write {n_rg} row groups x {per} rows: {time.perf_counter() - t:.2f} s, {os.path.getsize(path)} bytes")

    import pyarrow.parquet as pq

    probe = int(keys[len(keys) // 2])
    expect_rg = (len(keys) // 2) // per

    t_pq_open, pf = best(lambda: pqbloom.ParquetFile(path), args.repeat)
    t_pa_open, _ = best(lambda: pq.ParquetFile(path).metadata, args.repeat)
    print(f"footer parse          pqbloom {t_pq_open * 1e3:8.1f} ms   pyarrow {t_pa_open * 1e3:8.1f} ms")

    def bloom_scan():
        return [i for i in range(pf.num_row_groups) if pf.bloom_filter_might_contain(i, "key", probe)]

    t_scan, hits = best(bloom_scan, 1)
    assert expect_rg in hits
    print(f"Bloom probe of all {n_rg} row groups (2 small reads each): {t_scan * 1e3:.1f} ms, {len(hits)} candidates")

    def pq_filtered():
        ex = pqbloom.Explain()
        t = pqbloom.read_table(path, filters=pqbloom.field("key") == probe, explain=ex)
        return t, ex

    t_pqf, (tab, ex) = best(pq_filtered, args.repeat)
    assert tab.column("key").to_pylist() == [probe]
    t_paf, pa_tab = best(lambda: pq.read_table(path, filters=[("key", "=", probe)]), args.repeat)
    assert pa_tab.column("key").to_pylist() == [probe]
    print(f"open + filtered read  pqbloom {t_pqf * 1e3:8.1f} ms   pyarrow {t_paf * 1e3:8.1f} ms  (key == {probe})")
    t_idf, _ = best(lambda: pqbloom.read_table(path, filters=pqbloom.field("id") == int(ids[-1])), args.repeat)
    t_paidf, _ = best(lambda: pq.read_table(path, filters=[("id", "=", int(ids[-1]))]), args.repeat)
    print(f"min/max-prunable read pqbloom {t_idf * 1e3:8.1f} ms   pyarrow {t_paidf * 1e3:8.1f} ms  (sorted id)")
    t_full, _ = best(lambda: pqbloom.read_table(path), 1)
    t_pa_full, _ = best(lambda: pq.read_table(path), 1)
    print(f"full read             pqbloom {t_full * 1e3:8.1f} ms   pyarrow {t_pa_full * 1e3:8.1f} ms")
    _ = hash_scalar

    if args.big_string_mb:
        big = os.path.join(d, "big.parquet")
        value = "x" * (args.big_string_mb << 20)
        t = time.perf_counter()
        pqbloom.write_table({"s": [value]}, big, compression="zstd")
        tw = time.perf_counter() - t
        t = time.perf_counter()
        back = pqbloom.read_table(big).column("s").to_pylist()[0]
        tr = time.perf_counter() - t
        assert back == value
        print(f"single {args.big_string_mb} MB string: write {tw:.2f} s, read {tr:.2f} s")


if __name__ == "__main__":
    main()
