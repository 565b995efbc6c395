"""The Spark data source's task files and ``_SUCCESS`` marker get the mode a plain ``open()`` gives a new
file, also when an overwrite replaces files someone made private (the atomic sink's other publishing paths
are in tests/unit/io/test_io_atomic.py). Kept out of the unit tier, which starts no JVM."""

from __future__ import annotations

import os

import pytest

from tests.unit.io.test_io_atomic import mode, plain_open_mode


@pytest.mark.spark
def test_spark_task_files_and_success_marker_get_plain_open_mode(tmp_path, spark):
    import pqbloom.spark

    pqbloom.spark.register(spark)
    out = tmp_path / "events"
    expected = plain_open_mode(tmp_path)
    spark.range(0, 1000).repartition(2).write.format("pqbloom").mode("overwrite").save(str(out))
    names = sorted(os.listdir(out))
    parts = [n for n in names if n.startswith("part-")]
    assert "_SUCCESS" in names and len(parts) == 2
    assert {n: mode(out / n) for n in names} == dict.fromkeys(names, expected)
    # an overwrite deletes the old part files and writes new ones, again with a new file's mode
    for n in parts:
        os.chmod(out / n, 0o600)
    spark.range(0, 10).write.format("pqbloom").mode("overwrite").save(str(out))
    assert all(mode(out / n) == expected for n in os.listdir(out))
