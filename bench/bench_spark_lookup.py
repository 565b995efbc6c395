"""Spark point lookups on a multi-file dataset: the ``pqbloom`` data source vs Spark's native Parquet reader.

    python bench/bench_spark_lookup.py [--rows 10000000] [--files 8] [--row-group-size 1000000]
                                       [--repeat 5] [--dir DIR]

Dataset (written once by pqbloom from numpy into a temporary directory, or ``--dir``): ``--files``
files ``part-NNNNN.parquet`` holding ``--rows`` rows in total, row groups of ``--row-group-size``
rows, snappy, Bloom filters (fpp 0.01) on ``id`` and ``email``. Columns: ``id`` int64, unique random
EVEN integers (``2 * permutation(rows)``, so every row group's min/max spans nearly the whole range
and statistics cannot prune a point lookup), ``email`` ``"u<id as 12 hex digits>@example.com"``,
``amount`` double.

In one local Spark session (``interop.spark_support.get_spark``: ``local[2]``, 1 GB driver) each
lookup is answered by

* ``pqbloom``  ``spark.read.format("pqbloom").option("filter", "id = v").load(dir).collect()`` (the
  lookup as the data source's ``filter`` option: Spark 4.3 cannot safely push a ``where`` filter into
  a Python data source, see ``pqbloom/spark/reader.py``);
* ``native``   ``spark.read.option("parquet.filter.bloom.enabled", "true").parquet(dir)...`` (parquet-java
  prunes row groups with statistics, dictionaries and Bloom filters; the scan's ``numOutputRows``
  metric is the rows of the row groups it did not skip);
* ``read_table`` ``pqbloom.read_table(dir, filters=pqbloom.field("id") == v)`` (no Spark);
* ``pyarrow``  ``pyarrow.parquet.read_table(dir, filters=[("id", "==", v)])`` (no Spark, for scale).

Lookups: an absent id (odd, inside every row group's min/max) and a present id, each timed
``--repeat`` times with the engines alternating; the best time is printed, after one untimed
warm-up run per engine (JVM JIT, Python worker start). Before timing, the data source's own planning
(``PqbloomReader.partitions()`` with the ``filter`` option, the code Spark runs on its planning worker) is
run for ``--absent-candidates`` absent ids (how many survive some Bloom filter, i.e. false
positives, is printed) and the present id: the timed absent id plans zero partitions (asserted;
it is the first candidate that does), the present id at least the row group holding it (asserted;
more only through Bloom false positives). All engines must return the same rows (asserted).
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
import tempfile
import time
from collections.abc import Callable
from typing import Any

import numpy as np

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
sys.path.insert(0, ROOT)  # interop.spark_support

from _probes import ids_inside_every_row_group  # noqa: E402  (bench/ is on sys.path when run as a script)

import pqbloom  # noqa: E402
import pqbloom.spark  # noqa: E402
from pqbloom.arrays import BinaryArray  # noqa: E402

HEX = np.frombuffer(b"0123456789abcdef", np.uint8)


def emails(ids: np.ndarray) -> BinaryArray:
    """``u<12 hex digits>@example.com`` for every id, built as one fixed-width byte matrix."""
    shifts = np.arange(44, -1, -4, dtype=np.int64)  # 12 nibbles, most significant first
    digits = HEX[(ids[:, None] >> shifts) & 0xF]
    pre = np.full((len(ids), 1), ord("u"), np.uint8)
    suf = np.tile(np.frombuffer(b"@example.com", np.uint8), (len(ids), 1))
    return BinaryArray.from_fixed(np.hstack([pre, digits, suf]))


def email_of(v: int) -> str:
    return f"u{v:012x}@example.com"


def make_dataset(out: str, rows: int, files: int, rg_rows: int) -> np.ndarray:
    os.makedirs(out, exist_ok=True)
    rng = np.random.default_rng(42)
    ids = (rng.permutation(rows) * 2).astype(np.int64)
    amount = np.round(rng.random(rows) * 100, 2)
    schema = pqbloom.Schema.from_types({"id": "int64", "email": "string", "amount": "double"})
    bounds = np.linspace(0, rows, files + 1).astype(np.int64)
    for i in range(files):
        s, e = int(bounds[i]), int(bounds[i + 1])
        t = pqbloom.Table.from_pydict({"id": ids[s:e], "email": emails(ids[s:e]), "amount": amount[s:e]}, schema)
        pqbloom.write_table(t, os.path.join(out, f"part-{i:05d}.parquet"), row_group_size=rg_rows,
                            compression="snappy",
                            bloom_filter_options={"id": {"fpp": 0.01}, "email": {"fpp": 0.01}})
    return ids


def pick_ids(out: str, ids: np.ndarray, n_absent: int) -> tuple[int, list[int]]:
    """A present id and ``n_absent`` absent (odd) ones, all inside every row group's id range."""
    inside = ids_inside_every_row_group([os.path.join(out, n) for n in sorted(os.listdir(out))], ids)
    rng = np.random.default_rng(7)
    present = int(rng.choice(inside))
    return present, [int(v) + 1 for v in rng.choice(inside, n_absent, replace=False)]


def home(out: str, ids: np.ndarray, files: int, rg_rows: int, v: int) -> tuple[str, int]:
    """(file, row group) holding id ``v`` (files split the rows as make_dataset does)."""
    pos = int(np.flatnonzero(ids == v)[0])
    bounds = np.linspace(0, len(ids), files + 1).astype(np.int64)
    i = int(np.searchsorted(bounds, pos, "right")) - 1
    return os.path.join(out, f"part-{i:05d}.parquet"), (pos - int(bounds[i])) // rg_rows


def plan(spark: Any, path: str, value: int) -> tuple[list[Any], pqbloom.Explain]:
    """What the data source plans for ``id = value``: the same calls Spark makes on its planning worker."""
    from pyspark.sql.types import StructType

    opts = {"path": path, "filter": f"id = {value}"}
    reader = pqbloom.spark.PqbloomDataSource(opts).reader(StructType.fromDDL(pqbloom.spark.spark_schema(path)))
    parts = reader.partitions()
    assert reader.explain is not None
    return parts, reader.explain


def best_of(fns: dict[str, Callable[[], Any]], repeat: int) -> tuple[dict[str, float], dict[str, Any]]:
    """Best wall time per engine, engines alternating within each round; one untimed warm-up each."""
    results = {name: fn() for name, fn in fns.items()}
    times: dict[str, list[float]] = {name: [] for name in fns}
    for _ in range(repeat):
        for name, fn in fns.items():
            t0 = time.perf_counter()
            r = fn()
            times[name].append(time.perf_counter() - t0)
            if r != results[name]:
                raise AssertionError(f"{name}: result changed between runs")
    return {n: min(ts) for n, ts in times.items()}, results


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--rows", type=int, default=10_000_000)
    ap.add_argument("--files", type=int, default=8)
    ap.add_argument("--row-group-size", type=int, default=1_000_000)
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--absent-candidates", type=int, default=20,
                    help="absent ids to plan (Bloom false-positive count); the first that plans 0 is timed")
    ap.add_argument("--dir", default=None, help="dataset directory (default: a temporary one, removed)")
    args = ap.parse_args()

    import pyarrow.parquet as pq

    from interop.spark_support import collect_with_scan_rows, get_spark

    tmp = tempfile.mkdtemp(prefix="pqbloom-spark-lookup-") if args.dir is None else None
    out = args.dir or os.path.join(tmp or "", "events")
    try:
        t0 = time.perf_counter()
        ids = make_dataset(out, args.rows, args.files, args.row_group_size)
        size = sum(os.path.getsize(os.path.join(out, f)) for f in os.listdir(out))
        n_rg = sum(pqbloom.read_metadata(os.path.join(out, f)).num_row_groups for f in os.listdir(out))
        print(f"dataset: {args.rows:,} rows, {args.files} files, {n_rg} row groups of <= {args.row_group_size:,} "
              f"rows, {size / 1e6:.1f} MB, Bloom filters on id and email (written by pqbloom in "
              f"{time.perf_counter() - t0:.1f}s)")
        present, candidates = pick_ids(out, ids, args.absent_candidates)
        row = (present, email_of(present))

        t0 = time.perf_counter()
        spark = get_spark()
        pqbloom.spark.register(spark)
        print(f"spark {spark.version} session ready in {time.perf_counter() - t0:.1f}s")

        # planning, as Spark's planning worker runs it
        # planning, as Spark's planning worker runs it. An absent id survives a row group's Bloom
        # filter with probability fpp, so some absent ids plan a partition or two: count them, and
        # time the first absent id that plans none
        plans = []
        for v in candidates:
            t0 = time.perf_counter()
            parts, ex = plan(spark, out, v)
            plans.append((v, parts, ex, time.perf_counter() - t0))
            assert ex.row_groups_total == n_rg and ex.row_groups_pruned_statistics == 0, str(ex)
        zero = [p for p in plans if not p[1]]
        fp = sum(len(p[1]) for p in plans)
        print(f"planning {len(plans)} absent ids: {len(zero)} planned 0 partitions; Bloom false positives "
              f"{fp} of {len(plans) * n_rg} row-group probes ({fp / (len(plans) * n_rg):.2%}, fpp 0.01); "
              f"median planning time {sorted(p[3] for p in plans)[len(plans) // 2] * 1000:.0f} ms")
        assert zero, "no absent id planned zero partitions"
        absent, parts, ex, _ = zero[0]
        assert parts == [] and ex.row_groups_pruned_bloom_filter == n_rg, str(ex)
        parts_p, ex_p = plan(spark, out, present)
        want = home(out, ids, args.files, args.row_group_size, present)
        planned = [(p.path, p.row_group) for p in parts_p]
        assert want in planned, f"the row group holding id {present} ({want}) was pruned: {planned}"
        print(f"planning id = {absent} (absent): {len(parts)} partitions of {ex.row_groups_total} row groups "
              f"(pruned: statistics {ex.row_groups_pruned_statistics}, Bloom filter "
              f"{ex.row_groups_pruned_bloom_filter})")
        print(f"planning id = {present} (present): {len(parts_p)} partition(s) "
              f"{[(os.path.basename(p), rg) for p, rg in planned]}; the id is in {os.path.basename(want[0])} "
              f"row group {want[1]} ({len(parts_p) - 1} Bloom false positive(s))")

        native = spark.read.option("parquet.filter.bloom.enabled", "true").parquet(out)
        scanned: dict[tuple[str, int], int] = {}

        def spark_rows(df: Any, key: tuple[str, int] | None = None) -> list[tuple[int, str]]:
            if key is None:
                got = df.select("id", "email").collect()
            else:
                got, scanned[key] = collect_with_scan_rows(df.select("id", "email"))
            return sorted((r.id, r.email) for r in got)

        def rt(v: int) -> list[tuple[int, str]]:
            t = pqbloom.read_table(out, columns=["id", "email"], filters=pqbloom.field("id") == v)
            return sorted(zip(t.column("id").to_pylist(), t.column("email").to_pylist()))

        def pa_rows(v: int) -> list[tuple[int, str]]:
            t = pq.read_table(out, columns=["id", "email"], filters=[("id", "==", v)])
            return sorted(zip(t.column("id").to_pylist(), t.column("email").to_pylist()))

        print(f"\nbest of {args.repeat} (alternating), after one warm-up run each; rows = rows returned, "
              f"native scanned = the scan's numOutputRows (rows of row groups parquet-java read)")
        print(f"{'lookup':<26} {'engine':<12} {'rows':>4} {'best s':>8} {'vs native':>10}  notes")
        for kind, v, expect in (("absent", absent, []), ("present", present, [row])):
            fns: dict[str, Callable[[], Any]] = {
                "pqbloom": lambda v=v: spark_rows(spark.read.format("pqbloom").option("filter", f"id = {v}").load(out)),
                "native": lambda v=v: spark_rows(native.where(f"id = {v}")),
                "read_table": lambda v=v: rt(v),
                "pyarrow": lambda v=v: pa_rows(v),
            }
            best, results = best_of(fns, args.repeat)
            for name, r in results.items():
                assert r == expect, f"{name}: id {v} returned {r}, expected {expect}"
            spark_rows(native.where(f"id = {v}"), ("native", v))  # once more, for the scan metric
            notes = {
                "pqbloom": f"planned {len(parts if kind == 'absent' else parts_p)} partitions",
                "native": f"scanned {scanned[('native', v)]:,} of {args.rows:,} rows",
                "read_table": "",
                "pyarrow": "",
            }
            for name in fns:
                ratio = best[name] / best["native"]
                print(f"{f'id = {v} ({kind})':<26} {name:<12} {len(results[name]):>4} {best[name]:>8.3f} "
                      f"{ratio:>9.2f}x  {notes[name]}")
        print("\nall engines returned the same rows; the absent id planned 0 partitions")
    finally:
        if tmp is not None:
            shutil.rmtree(tmp, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
