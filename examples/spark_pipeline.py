"""Spark writes an events table through the ``pqbloom`` data source; three readers answer lookups.

    python examples/spark_pipeline.py [--rows N] [--row-group-size R] [--out DIR]

1. Spark generates ``events(id, email, ts, amount)`` (ids and emails in random order, so row-group
   min/max statistics cannot prune a point lookup) and writes it with
   ``df.write.format("pqbloom")``: Bloom filters on ``id`` and ``email``, the ``email`` column (and
   its Bloom filter) encrypted with master key ``keyB``, the footer with ``keyA``, through an
   in-memory KMS holding the same master keys as the Spark session's test KMS (PKMT1 key metadata).
2. The same lookups are answered by
   (a) Spark's native Parquet reader (parquet-java, ``PropertiesDrivenCryptoFactory``): pruning is
       the scan's ``numOutputRows``;
   (b) the ``pqbloom`` data source with the lookup as its ``filter`` option (Spark 4.3 cannot
       safely push a ``where`` filter into a Python data source: see ``pqbloom/spark/reader.py``): pruning
       is the planned row groups;
   (c) ``pqbloom.read_table(dir, filters=...)`` without Spark: pruning from ``Explain``.
   All three must return the same rows.
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))  # for interop.spark_support (the session with the test KMS)

import pqbloom  # noqa: E402
import pqbloom.spark  # noqa: E402


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--rows", type=int, default=1_000_000)
    ap.add_argument("--row-group-size", type=int, default=100_000)
    ap.add_argument("--out", default=None, help="output directory (default: a temporary one, removed)")
    args = ap.parse_args()

    from interop.spark_support import MASTER_KEYS, collect_with_scan_rows, get_spark

    tmp = None
    if args.out is None:
        tmp = tempfile.mkdtemp(prefix="pqbloom-spark-")
        out = os.path.join(tmp, "events")
    else:
        out = args.out
    key_list = ",".join(f"{k}:{v}" for k, v in MASTER_KEYS.items())

    t0 = time.perf_counter()
    spark = get_spark()
    pqbloom.spark.register(spark)
    print(f"spark session ready in {time.perf_counter() - t0:.1f}s (spark {spark.version})")

    n = args.rows
    events = spark.range(0, n, numPartitions=2).selectExpr(
        "((id * 2654435761) % 2147483648) * 2 AS id",  # distinct, even, scattered: odd ids are absent
        "concat('user', lower(hex(((id * 2654435761) % 2147483648) * 2)), '@example.com') AS email",
        "timestamp_seconds(1700000000 + id) AS ts",
        "round(rand(7) * 100, 2) AS amount",
    )
    t0 = time.perf_counter()
    (events.write.format("pqbloom")
     .option("bloom_filter_columns", "id,email")
     .option("row_group_size", str(args.row_group_size))
     .option("kms_key_list", key_list)
     .option("encryption_footer_key", "keyA")
     .option("encryption_column_keys", "keyB:email")
     .mode("overwrite").save(out))
    files = sorted(p for p in os.listdir(out) if p.startswith("part-"))
    size = sum(os.path.getsize(os.path.join(out, f)) for f in files)
    print(f"wrote {n:,} rows in {time.perf_counter() - t0:.1f}s: {len(files)} files, {size / 1e6:.1f} MB, "
          f"encrypted footer (keyA) + email column (keyB), Bloom filters on id and email")

    # sample one present id/email with pqbloom (any row of the first file)
    dec = pqbloom.CryptoFactory(lambda cfg: pqbloom.InMemoryKms(
        {k: __import__("base64").b64decode(v) for k, v in MASTER_KEYS.items()}, cfg)
    ).file_decryption_properties(pqbloom.KmsConnectionConfig())
    with pqbloom.ParquetFile(os.path.join(out, files[0]), decryption_properties=dec) as pf:
        rg = pf.read_row_group(pf.num_row_groups // 2, ["id", "email"]).to_pydict()
        total_rgs = 0
    present_id, present_email = rg["id"][7], rg["email"][11]
    for f in files:
        with pqbloom.ParquetFile(os.path.join(out, f), decryption_properties=dec) as pf:
            total_rgs += pf.num_row_groups
    lookups = [
        ("id", present_id), ("id", present_id + 1),
        ("email", present_email), ("email", "user1234567g@example.com"),  # inside min/max: only Bloom prunes
    ]
    rg_avg = n / total_rgs
    print(f"{total_rgs} row groups of ~{rg_avg:,.0f} rows\n")

    ds_opts = {"kms_key_list": key_list}
    all_ok = True
    for col, val in lookups:
        lit = repr(val) if isinstance(val, str) else str(val)
        cond = f"{col} = {lit}"
        print(f"lookup {cond}")

        t0 = time.perf_counter()
        native_df = spark.read.parquet(out).where(cond)
        rows, scanned = collect_with_scan_rows(native_df)
        native = sorted((r.id, r.email) for r in rows)
        print(f"  spark native parquet : {len(native)} rows in {time.perf_counter() - t0:5.2f}s; scanned "
              f"{scanned:,} of {n:,} rows (~{total_rgs - round(scanned / rg_avg)} of "
              f"{total_rgs} row groups pruned)")

        t0 = time.perf_counter()
        opts = {**ds_opts, "filter": cond}
        df = spark.read.format("pqbloom").options(**opts).load(out)
        ours = sorted((r.id, r.email) for r in df.collect())
        elapsed = time.perf_counter() - t0
        reader = pqbloom.spark.PqbloomDataSource({"path": out, **opts}).reader(df.schema)
        planned = reader.partitions()  # what Spark's planning worker planned for df
        ex = reader.explain
        print(f"  pqbloom data source  : {len(ours)} rows in {elapsed:5.2f}s; planned {len(planned)} of "
              f"{total_rgs} row groups (pruned: statistics {ex.row_groups_pruned_statistics}, "
              f"Bloom filter {ex.row_groups_pruned_bloom_filter})")

        t0 = time.perf_counter()
        ex2 = pqbloom.Explain()
        t = pqbloom.read_table(out, ["id", "email"], filters=pqbloom.field(col) == val, explain=ex2,
                               decryption_properties=dec)
        plain = sorted(zip(t.column("id").to_pylist(), t.column("email").to_pylist()))
        print(f"  pqbloom.read_table   : {len(plain)} rows in {time.perf_counter() - t0:5.2f}s; read "
              f"{ex2.row_groups_read} of {ex2.row_groups_total} row groups (pruned: statistics "
              f"{ex2.row_groups_pruned_statistics}, Bloom filter {ex2.row_groups_pruned_bloom_filter})")
        same = native == ours == plain
        all_ok &= same
        print(f"  same rows: {same} {native[:1]}\n")

    if tmp is not None:
        shutil.rmtree(tmp, ignore_errors=True)
    print("all three readers agree" if all_ok else "MISMATCH between readers")
    return 0 if all_ok else 1


if __name__ == "__main__":
    sys.exit(main())
