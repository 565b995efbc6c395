"""Point-lookup benchmark: pqbloom vs pyarrow vs DuckDB (vs DataFusion when installed), same run, same files.

    python bench/bench_lookup.py [--rows 10000000] [--row-groups 10] [--lookups 100]
                                 [--layouts random,clustered] [--page-size 1048576]
                                 [--writer pqbloom|pyarrow]

Table: ``id`` int64, unique random EVEN integers (``2 * permutation(rows)``), a 16-char random
string ``s`` and a float64 ``x``; ``rows / row_groups`` rows per row group; snappy; Bloom filter
on ``id`` (fpp 0.01); written once into a temporary directory by pqbloom (page index on) or, with
``--writer pyarrow``, by ``pyarrow.parquet.write_table`` with its defaults (dictionary encoding,
page statistics, NO page index: pyarrow's default files) plus the same Bloom filter.

Layouts (both read by every engine):

* ``random``    -- rows in random id order: every row group's min/max spans nearly the whole
  id range, and so does every page's, so only the Bloom filter can prune;
* ``clustered`` -- the same random split of ids into row groups, each row group sorted by id
  (``sortWithinPartitions``): row-group min/max still span the range, but the page index can
  find the page holding an id.

Lookups: ``--lookups`` ids present in the file and as many absent ones (present + 1, so odd,
and chosen inside every row group's min/max). Each lookup opens the file afresh (no metadata
cache) and returns all columns of the matching rows:

* pqbloom  ``pqbloom.read_table(path, filters=pqbloom.field("id") == v)``
* pyarrow  ``pq.read_table(path, filters=[("id", "==", v)])``
* DuckDB   ``SELECT * FROM read_parquet(path) WHERE id = v`` on one connection
* DataFusion ``SessionContext().read_parquet(path).filter(col("id") == lit(v))`` if importable

Printed per engine and lookup kind: median latency and bytes read per lookup. Bytes come from
``/proc/self/io`` ``rchar`` (bytes the process read through read/pread, which every engine here
uses for local files; page-cache hits count too), measured around each lookup; for pqbloom the
reader's own ``io_stats`` are printed beside it as a cross-check. Without ``/proc`` the column
shows "n/a".
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from typing import Any

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

from _probes import ids_inside_every_row_group  # noqa: E402  (bench/ is on sys.path when run as a script)

import pqbloom  # noqa: E402
from pqbloom.arrays import BinaryArray  # noqa: E402


def rchar() -> int | None:
    try:
        with open("/proc/self/io", "rb") as f:
            for line in f:
                if line.startswith(b"rchar:"):
                    return int(line.split()[1])
    except OSError:
        return None
    return None


def make_file(path: str, rows: int, row_groups: int, layout: str, page_size: int, writer: str = "pqbloom") -> np.ndarray:
    rng = np.random.default_rng(42)
    ids = (rng.permutation(rows) * 2).astype(np.int64)
    rg = -(-rows // row_groups)
    if layout == "clustered":
        for s in range(0, rows, rg):
            ids[s:s + rg].sort()
    letters = rng.integers(97, 123, (rows, 16), dtype=np.uint8)
    if writer == "pyarrow":
        import pyarrow as pa
        import pyarrow.parquet as pq

        s = pa.array(letters.reshape(-1).view("S16"), pa.binary(16)).cast(pa.string())
        pq.write_table(pa.table({"id": ids, "s": s, "x": rng.random(rows)}), path, row_group_size=rg,
                       compression="snappy", data_page_size=page_size,
                       bloom_filter_options={"id": {"ndv": rg, "fpp": 0.01}})
        return ids
    t = pqbloom.Table.from_pydict({"id": ids, "s": BinaryArray.from_fixed(letters), "x": rng.random(rows)},
                                  pqbloom.Schema.from_types({"id": "int64", "s": "string", "x": "double"}))
    pqbloom.write_table(t, path, row_group_size=rg, compression="snappy", data_page_size=page_size,
                        bloom_filter_options={"id": {"fpp": 0.01}})
    return ids


def pick_ids(path: str, ids: np.ndarray, n: int) -> tuple[list[int], list[int]]:
    inside = ids_inside_every_row_group([path], ids)
    present = [int(v) for v in np.random.default_rng(7).choice(inside, n, replace=False)]
    absent = [v + 1 for v in present]  # ids are even
    return present, absent


class Engine:
    def __init__(self, name: str, lookup: Callable[[str, int], int], extra: Callable[[], Any] | None = None):
        self.name, self.lookup, self.extra = name, lookup, extra


def engines() -> list[Engine]:
    out = []
    last: dict[str, Any] = {}

    def pqb(path: str, v: int) -> int:
        ex = pqbloom.Explain()
        t = pqbloom.read_table(path, filters=pqbloom.field("id") == v, explain=ex)
        last["ex"] = ex
        return t.num_rows

    out.append(Engine("pqbloom", pqb, lambda: last.get("ex")))
    try:
        import pyarrow.parquet as pq

        out.append(Engine("pyarrow", lambda path, v: pq.read_table(path, filters=[("id", "==", v)]).num_rows))
    except ImportError:
        print("pyarrow: not installed")
    try:
        import duckdb

        con = duckdb.connect()

        def duck(path: str, v: int) -> int:
            return len(con.execute(f"SELECT * FROM read_parquet('{path}') WHERE id = {int(v)}").fetchall())

        out.append(Engine("duckdb", duck))
    except ImportError:
        print("duckdb: not installed")
    try:
        import datafusion
        from datafusion import col, lit

        def dfn(path: str, v: int) -> int:
            ctx = datafusion.SessionContext()
            return sum(b.num_rows for b in ctx.read_parquet(path).filter(col("id") == lit(v)).collect())

        out.append(Engine("datafusion", dfn))
    except ImportError:
        print("datafusion: not installed (skipped)")
    return out


def measure(engs: list[Engine], path: str, values: list[int], expect: int) -> dict[str, dict[str, Any]]:
    """Run every engine on each value in turn (interleaved, so background noise hits all alike)."""
    times: dict[str, list[float]] = {e.name: [] for e in engs}
    nbytes: dict[str, list[int]] = {e.name: [] for e in engs}
    own: dict[str, list[int]] = {e.name: [] for e in engs}
    for e in engs:
        e.lookup(path, values[0])  # warm-up: imports, first-call setup
    for v in values:
        for e in engs:
            r0 = rchar()
            t0 = time.perf_counter()
            n = e.lookup(path, v)
            dt = time.perf_counter() - t0
            r1 = rchar()
            if n != expect:
                raise AssertionError(f"{e.name}: id {v} returned {n} rows, expected {expect}")
            times[e.name].append(dt)
            if r0 is not None and r1 is not None:
                nbytes[e.name].append(r1 - r0)
            if e.extra is not None:
                own[e.name].append(e.extra().bytes_read)
    return {e.name: {
        "median_ms": statistics.median(times[e.name]) * 1000,
        "bytes": statistics.median(nbytes[e.name]) if nbytes[e.name] else None,
        "own_bytes": statistics.median(own[e.name]) if own[e.name] else None,
    } for e in engs}


def fmt_bytes(b: float | None) -> str:
    if b is None:
        return "n/a"
    if b >= 1 << 20:
        return f"{b / (1 << 20):.2f} MB"
    return f"{b / 1024:.1f} KB"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--rows", type=int, default=10_000_000)
    ap.add_argument("--row-groups", type=int, default=10)
    ap.add_argument("--lookups", type=int, default=100)
    ap.add_argument("--layouts", default="random,clustered")
    ap.add_argument("--page-size", type=int, default=1 << 20, help="data page size in bytes (writer default 1 MiB)")
    ap.add_argument("--writer", choices=("pqbloom", "pyarrow"), default="pqbloom",
                    help="who writes the file: pqbloom (page index on) or pyarrow (its defaults: no page index)")
    args = ap.parse_args()
    engs = engines()
    with tempfile.TemporaryDirectory(prefix="pqbloom-lookup-") as tmp:
        for layout in args.layouts.split(","):
            path = os.path.join(tmp, f"{layout}.parquet")
            t0 = time.perf_counter()
            ids = make_file(path, args.rows, args.row_groups, layout, args.page_size, args.writer)
            size = os.path.getsize(path)
            print(f"\n== layout {layout}: {args.rows:,} rows, {args.row_groups} row groups, "
                  f"{size / (1 << 20):.1f} MB, page size {args.page_size:,} B (written by {args.writer} in "
                  f"{time.perf_counter() - t0:.1f} s)")
            present, absent = pick_ids(path, ids, args.lookups)
            print(f"{'engine':<11} {'lookup':<8} {'median ms':>10} {'bytes read (rchar)':>19} {'io_stats':>10}")
            results: dict[tuple[str, str], dict[str, Any]] = {}
            for kind, values, expect in (("present", present, 1), ("absent", absent, 0)):
                per_engine = measure(engs, path, values, expect)
                for e in engs:
                    r = results[(e.name, kind)] = per_engine[e.name]
                    own = fmt_bytes(r["own_bytes"]) if r["own_bytes"] is not None else ""
                    print(f"{e.name:<11} {kind:<8} {r['median_ms']:>10.2f} {fmt_bytes(r['bytes']):>19} {own:>10}")
            for kind, limit in (("present", 2 << 20), ("absent", 100 << 10)):
                mine = results[("pqbloom", kind)]
                peers = [(n, r) for (n, k), r in results.items() if k == kind and n != "pqbloom"]
                faster = all(mine["median_ms"] < r["median_ms"] for _, r in peers)
                small = mine["own_bytes"] is not None and mine["own_bytes"] < limit
                best = min(peers, key=lambda p: p[1]["median_ms"]) if peers else None
                vs = f"; fastest peer {best[0]} {best[1]['median_ms']:.2f} ms" if best else ""
                print(f"target {kind}: faster than every peer: {'yes' if faster else 'NO'}; reads under "
                      f"{fmt_bytes(limit)}: {'yes' if small else 'NO'} ({fmt_bytes(mine['own_bytes'])}){vs}")


if __name__ == "__main__":
    main()
