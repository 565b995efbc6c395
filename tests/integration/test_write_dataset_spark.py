"""Spark (parquet-java) reads a dataset pqbloom.write_to_dataset wrote: Hive partitions and all."""

from __future__ import annotations

import pqbloom


def test_spark_reads_the_hive_layout(spark, tmp_path):
    t = {"k": ["a b", "x/y", None, "é=%", "a b"], "n": [1, 2, None, 4, 1],
         "v": [1.5, 2.0, 3.0, 4.0, 5.0], "s": ["p", None, "r", "s", "t"]}
    root = tmp_path / "ds"
    pqbloom.write_to_dataset(t, root, partition_cols=["k", "n"], compression="zstd")
    rows = spark.read.parquet(str(root)).select("k", "n", "v", "s").collect()
    got = sorted(((r["k"], r["n"], r["v"], r["s"]) for r in rows), key=repr)
    assert got == sorted(zip(t["k"], t["n"], t["v"], t["s"]), key=repr)
