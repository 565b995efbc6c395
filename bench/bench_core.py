"""Core write/read benchmark: pqbloom vs pyarrow on the same 10M-row table, in the same run.

    python bench/bench_core.py [--rows 10000000] [--bloom]

Table: int64 id (unique, random order), 16-char random string, float64;
1,000,000-row row groups; snappy. Prints time, rows/s, peak memory (the
process's RSS high-water mark growth, measured in a fresh subprocess per
case) and file size for each, and the ratio pqbloom / pyarrow. Files go to a
temporary directory.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile

CASE = r'''
import json, resource, sys, time
import numpy as np
rows, which, op, path, bloom = int(sys.argv[1]), sys.argv[2], sys.argv[3], sys.argv[4], sys.argv[5] == "1"
encrypt = which == "pqbloom-encrypted"
if encrypt:
    which = "pqbloom"
    import pqbloom
    KEYS = dict(footer_key=b"0123456789012345", column_keys={"id": b"1234567890123450"})

def make():
    rng = np.random.default_rng(1)
    ids = rng.permutation(rows).astype(np.int64)
    letters = rng.integers(97, 123, (rows, 16), dtype=np.uint8)
    vals = rng.random(rows)
    return ids, letters, vals

if op == "write":
    ids, letters, vals = make()
    raw = ids.nbytes + letters.nbytes + vals.nbytes
    if which == "pqbloom":
        import pqbloom
        from pqbloom.arrays import BinaryArray
        t = pqbloom.Table.from_pydict({"id": ids, "s": BinaryArray.from_fixed(letters), "x": vals},
                                      pqbloom.Schema.from_types({"id": "int64", "s": "string", "x": "double"}))
    else:
        import pyarrow as pa, pyarrow.parquet as pq
        s = pa.Array.from_buffers(pa.string(), rows, [None, pa.py_buffer(np.arange(rows + 1, dtype=np.int32) * 16),
                                                      pa.py_buffer(letters.reshape(-1))])
        t = pa.table({"id": ids, "s": s, "x": vals})
    base = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    t0 = time.perf_counter()
    opts = {"bloom_filter_options": {"id": {"fpp": 0.01}}} if bloom else {}
    if encrypt:
        opts["encryption_properties"] = pqbloom.FileEncryptionProperties(**KEYS)
    if which == "pqbloom":
        pqbloom.write_table(t, path, row_group_size=1_000_000, compression="snappy", **opts)
    else:
        pq.write_table(t, path, row_group_size=1_000_000, compression="snappy", **opts)
    dt = time.perf_counter() - t0
else:
    raw = rows * (8 + 16 + 8)
    base = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    if which == "pqbloom":
        import pqbloom
        base = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
        t0 = time.perf_counter()
        kw = {"decryption_properties": pqbloom.FileDecryptionProperties(**KEYS)} if encrypt else {}
        t = pqbloom.read_table(path, **kw)
    else:
        import pyarrow.parquet as pq
        base = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
        t0 = time.perf_counter()
        t = pq.read_table(path)
    dt = time.perf_counter() - t0
    assert t.num_rows == rows
peak = (resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - base) * 1024
print(json.dumps({"seconds": dt, "peak": peak, "raw": raw}))
'''


def run(rows: int, which: str, op: str, path: str, bloom: bool) -> dict:
    out = subprocess.run([sys.executable, "-c", CASE, str(rows), which, op, path, "1" if bloom else "0"],
                         capture_output=True, text=True, check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--rows", type=int, default=10_000_000)
    ap.add_argument("--bloom", action="store_true", help="also measure with a Bloom filter on id")
    ap.add_argument("--repeat", type=int, default=1)
    ap.add_argument("--encrypt", action="store_true",
                    help="pqbloom only: id column encrypted with its own key (and its Bloom filter) vs plaintext")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        if args.encrypt:
            encryption_overhead(args, tmp)
            return
        variants = [False, True] if args.bloom else [False]
        for bloom in variants:
            print(f"\n{args.rows:,} rows; id int64, s 16-char string, x float64; snappy; 1M-row row groups"
                  f"{'; Bloom filter on id' if bloom else ''}")
            print(f"{'case':<18}{'seconds':>9}{'Mrows/s':>9}{'peak MiB':>10}{'peak/raw':>9}{'file MiB':>10}")
            res = {}
            for op in ("write", "read"):
                for which in ("pyarrow", "pqbloom"):
                    path = os.path.join(tmp, f"{which}{'-bloom' if bloom else ''}.parquet")
                    best = None
                    for _ in range(args.repeat):
                        r = run(args.rows, which, op, path, bloom)
                        best = r if best is None or r["seconds"] < best["seconds"] else best
                    assert best is not None
                    res[(op, which)] = best
                    size = os.path.getsize(path) / 2**20
                    print(f"{which + ' ' + op:<18}{best['seconds']:>9.2f}{args.rows / best['seconds'] / 1e6:>9.2f}"
                          f"{best['peak'] / 2**20:>10.0f}{best['peak'] / best['raw']:>9.2f}{size:>10.1f}")
            for op in ("write", "read"):
                ratio = res[(op, "pqbloom")]["seconds"] / res[(op, "pyarrow")]["seconds"]
                print(f"{op}: pqbloom / pyarrow time = {ratio:.2f}x")


def encryption_overhead(args: argparse.Namespace, tmp: str) -> None:
    print(f"\n{args.rows:,} rows; Bloom filter on id; pqbloom plaintext vs id encrypted with its own key "
          "(AES-GCM, encrypted footer; the id Bloom filter encrypted too)")
    print(f"{'case':<28}{'seconds':>9}{'file MiB':>10}")
    res = {}
    for op in ("write", "read"):
        for which in ("pqbloom", "pqbloom-encrypted"):
            path = os.path.join(tmp, f"{which}.parquet")
            best = None
            for _ in range(args.repeat):
                r = run(args.rows, which, op, path, True)
                best = r if best is None or r["seconds"] < best["seconds"] else best
            assert best is not None
            res[(op, which)] = best["seconds"]
            print(f"{which + ' ' + op:<28}{best['seconds']:>9.2f}{os.path.getsize(path) / 2**20:>10.1f}")
    for op in ("write", "read"):
        over = res[(op, "pqbloom-encrypted")] / res[(op, "pqbloom")] - 1
        print(f"{op}: encryption overhead {over:+.1%}")


if __name__ == "__main__":
    main()
