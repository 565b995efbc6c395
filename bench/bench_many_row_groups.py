"""Footer parse + pruning on a file with many tiny row groups, and a file with many columns,
pqbloom vs pyarrow in the same run.

    python bench/bench_many_row_groups.py [--row-groups 10000] [--rows-per-group 4] [--columns 10000]
                                          [--big-string-mb 100]

Prints one line per measurement (best of --repeat, pqbloom and pyarrow runs alternating), with the
pqbloom/pyarrow ratio. The many-row-group file is written once by pqbloom into a temp dir.
"""

from __future__ import annotations

import argparse
import os
import tempfile
import time

import numpy as np

import pqbloom
from pqbloom.format import T, decode_prefix


def pf_footer(path: str) -> bytes:
    with open(path, "rb") as f:
        data = f.read()
    n = int.from_bytes(data[-8:-4], "little")
    return data[-8 - n:-8]


def best(fn, repeat: int) -> tuple[float, object]:
    out, t_best = None, float("inf")
    for _ in range(repeat):
        t = time.perf_counter()
        out = fn()
        t_best = min(t_best, time.perf_counter() - t)
    return t_best, out


def best_pair(ours, theirs, repeat: int) -> tuple[float, float, object, object]:
    """Best of ``repeat`` for each, the two alternating so that machine noise hits both alike."""
    t_a = t_b = float("inf")
    out_a = out_b = None
    for _ in range(repeat):
        t = time.perf_counter()
        out_a = ours()
        t_a = min(t_a, time.perf_counter() - t)
        t = time.perf_counter()
        out_b = theirs()
        t_b = min(t_b, time.perf_counter() - t)
    return t_a, t_b, out_a, out_b


def row(label: str, t_pq: float, t_pa: float, note: str = "") -> None:
    print(f"{label:<22}pqbloom {t_pq * 1e3:8.1f} ms   pyarrow {t_pa * 1e3:8.1f} ms   ratio {t_pq / t_pa:5.2f}"
          + (f"  ({note})" if note else ""))


def wide(n_cols: int, repeat: int, d: str) -> None:
    """Write and read a file of ``n_cols`` int32 columns (a few rows, every 7th column with a null)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    rng = np.random.default_rng(1)
    vals = rng.integers(-1000, 1000, size=(n_cols, 5)).astype(np.int32)
    arrays = [pa.array(vals[i], pa.int32(), mask=np.arange(5) == (i % 5) if i % 7 == 0 else None)
              for i in range(n_cols)]
    table = pa.Table.from_arrays(arrays, names=[f"c{i}" for i in range(n_cols)])
    p_pq, p_pa = os.path.join(d, "wide_pqbloom.parquet"), os.path.join(d, "wide_pyarrow.parquet")
    t_w, t_paw, _, _ = best_pair(lambda: pqbloom.write_table(table, p_pq), lambda: pq.write_table(table, p_pa),
                                 repeat)
    row(f"write {n_cols} columns", t_w, t_paw)
    ours_t = pqbloom.Table.coerce(table)  # the Arrow -> pqbloom conversion is part of the row above
    t_w2, t_paw2, _, _ = best_pair(lambda: pqbloom.write_table(ours_t, p_pq), lambda: pq.write_table(table, p_pa),
                                   repeat)
    row("  write, Table input", t_w2, t_paw2, "pqbloom Table, no conversion")
    t_o, t_pao, _, _ = best_pair(lambda: pqbloom.ParquetFile(p_pq), lambda: pq.ParquetFile(p_pq).metadata, repeat)
    row("  footer parse", t_o, t_pao)
    t_r, t_par, ours, theirs = best_pair(lambda: pqbloom.read_table(p_pq), lambda: pq.read_table(p_pq), repeat)
    assert ours.num_columns == theirs.num_columns == n_cols
    row("  full read", t_r, t_par, "pqbloom's file")
    t_r2, t_par2, _, _ = best_pair(lambda: pqbloom.read_table(p_pa), lambda: pq.read_table(p_pa), repeat)
    row("  full read", t_r2, t_par2, "pyarrow's file")
    names = [f"c{n_cols - 1}", "c0", f"c{n_cols // 2}"]
    t_s, t_pas, ours, theirs = best_pair(lambda: pqbloom.read_table(p_pa, columns=names),
                                         lambda: pq.read_table(p_pa, columns=names), repeat)
    assert ours.to_pydict() == theirs.to_pydict()
    row("  read 3 columns", t_s, t_pas, "by name, pyarrow's file")


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--row-groups", type=int, default=10_000)
    ap.add_argument("--rows-per-group", type=int, default=4)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--columns", type=int, default=10_000, help="columns of the wide file (0 skips it)")
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

    t_pq_open, t_pa_open, pf, _ = best_pair(lambda: pqbloom.ParquetFile(path), lambda: pq.ParquetFile(path).metadata,
                                            args.repeat)
    row("footer parse", t_pq_open, t_pa_open)
    t_bare, _ = best(lambda: decode_prefix(T.FileMetaData, pf_footer(path)), args.repeat)
    print(f"  (floor: bare Thrift decode of the whole footer, every row group: {t_bare * 1e3:.1f} ms)")

    def bloom_scan():
        return [i for i in range(pf.num_row_groups) if pf.bloom_filter_might_contain(i, "key", probe)]

    t_scan, hits = best(bloom_scan, 1)
    assert expect_rg in hits
    print(f"Bloom probe of all {n_rg} row groups (2 small reads each): {t_scan * 1e3:.1f} ms, {len(hits)} candidates")

    def pq_filtered():
        ex = pqbloom.Explain()
        t = pqbloom.read_table(path, filters=pqbloom.field("key") == probe, explain=ex)
        return t, ex

    t_pqf, t_paf, (tab, ex), pa_tab = best_pair(pq_filtered, lambda: pq.read_table(path, filters=[("key", "=", probe)]),
                                                args.repeat)
    assert tab.column("key").to_pylist() == [probe]
    assert pa_tab.column("key").to_pylist() == [probe]
    row("open + filtered read", t_pqf, t_paf, f"key == {probe}")
    t_idf, t_paidf, _, _ = best_pair(lambda: pqbloom.read_table(path, filters=pqbloom.field("id") == int(ids[-1])),
                                     lambda: pq.read_table(path, filters=[("id", "=", int(ids[-1]))]), args.repeat)
    row("min/max-prunable read", t_idf, t_paidf, "sorted id")
    t_full, t_pa_full, _, _ = best_pair(lambda: pqbloom.read_table(path), lambda: pq.read_table(path), 1)
    row("full read", t_full, t_pa_full)
    t_one, t_pa_one, _, _ = best_pair(lambda: pqbloom.ParquetFile(path).read_row_group(n_rg - 1),
                                      lambda: pq.ParquetFile(path).read_row_group(n_rg - 1), args.repeat)
    row("open + last row group", t_one, t_pa_one)
    if args.columns:
        wide(args.columns, args.repeat, d)

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
