"""Spark (parquet-java) reads every commit state of a file with external key material that pqbloom leaves
(the states of ``peer_states`` in tests/unit/crypto/test_key_material.py, where pqbloom and pyarrow read them).
Kept out of the unit tier, which starts no JVM."""

from __future__ import annotations

import pytest

from tests.unit.crypto.test_key_material import N, peer_states  # noqa: F401 (peer_states is a fixture)


@pytest.mark.spark
def test_spark_reads_every_commit_state(peer_states, spark):  # noqa: F811
    for name, (path, version) in peer_states.items():
        rows = spark.read.parquet(str(path)).selectExpr("count(*) AS n", "min(v) AS lo", "max(v) AS hi",
                                                        "sum(id) AS s").collect()[0]
        assert (rows.n, rows.lo, rows.hi, rows.s) == (N, version, version, N * (N - 1) // 2), name
