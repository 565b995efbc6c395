"""The ``pqbloom`` PySpark Python Data Source (``pqbloom.spark``): read, write, pushdown, commit/abort, types."""

from __future__ import annotations

import datetime as dt
import decimal
import os
from pathlib import Path

import pytest

import pqbloom

pytestmark = pytest.mark.spark

N = 20_000
RG = 2_000


@pytest.fixture(scope="module")
def spark():
    try:
        from interop.spark_support import get_spark
    except ImportError as exc:  # pragma: no cover
        pytest.fail(f"Spark unavailable: {exc}")
    import pqbloom.spark

    session = get_spark()
    pqbloom.spark.register(session)
    return session  # the shared session is stopped by whoever owns it (tests/test_spark.py) or at exit


def _events(spark, n=N):
    return spark.range(0, n).selectExpr(
        "id * 2 AS id",  # even ids only: odd ids are absent
        "concat('u', id, '@example.com') AS email",
        "cast(id AS double) * 0.25 AS amount",
        "timestamp_seconds(1700000000 + id) AS ts",
    )


@pytest.fixture(scope="module")
def written(spark, tmp_path_factory):
    out = tmp_path_factory.mktemp("ds") / "events"
    (_events(spark).repartition(2).write.format("pqbloom")
     .option("bloom_filter_columns", "id,email").option("row_group_size", str(RG))
     .mode("overwrite").save(str(out)))
    return out


def _reader(spark, path, filters, **options):
    from pyspark.sql.types import StructType

    from pqbloom.spark import PqbloomDataSource, spark_schema

    opts = {"path": str(path), **options}
    ds = PqbloomDataSource(opts)
    reader = ds.reader(StructType.fromDDL(spark_schema(str(path), opts)))
    rejected = list(reader.pushFilters(filters))
    return reader, rejected


def test_write_layout_and_read_back(spark, written):
    names = sorted(os.listdir(written))
    assert "_SUCCESS" in names and "_temporary" not in names
    parts = [n for n in names if n.startswith("part-")]
    assert len(parts) == 2
    for p in parts:  # written by pqbloom, with Bloom filters on both columns
        with pqbloom.ParquetFile(str(written / p)) as pf:
            assert pf.num_row_groups >= 2
            assert pf.metadata.row_groups[0].num_rows == RG  # Spark's 10k-row Arrow batches are re-cut
            assert pf.bloom_filter(0, "id") is not None and pf.bloom_filter(0, "email") is not None
    df = spark.read.format("pqbloom").load(str(written))
    assert df.schema.simpleString() == "struct<id:bigint,email:string,amount:double,ts:timestamp>"
    assert sorted(df.collect()) == sorted(_events(spark).collect())


def test_pushdown_absent_key_plans_no_partition(spark, written):
    from pyspark.sql.datasource import EqualTo, In, StringStartsWith

    odd = StringStartsWith(("email",), "u1")
    reader, rejected = _reader(spark, written, [EqualTo(("id",), 12345), odd])
    assert rejected == [odd]  # unsupported filters go back to Spark
    assert reader.partitions() == []
    assert reader.explain is not None and reader.explain.row_groups_pruned_bloom_filter > 0
    reader, _ = _reader(spark, written, [In(("email",), ("nobody@example.com", "x@y"))])
    assert reader.partitions() == []
    df = spark.read.format("pqbloom").load(str(written)).where("id = 12345")
    assert df.collect() == []


def test_pushdown_present_key(spark, written):
    from pyspark.sql.datasource import EqualTo, GreaterThanOrEqual

    reader, rejected = _reader(spark, written, [EqualTo(("id",), 1234)])
    assert rejected == []
    parts = reader.partitions()
    total = reader.explain.row_groups_total
    assert 1 <= len(parts) < total
    rows = list(reader.read(parts[0]))
    assert sum(b.num_rows for b in rows) <= 1
    df = spark.read.format("pqbloom").load(str(written))
    got = df.where("id = 1234").collect()
    assert [(r.id, r.email) for r in got] == [(1234, "u617@example.com")]
    got = df.where("email IN ('u3@example.com', 'u5@example.com', 'zz') AND amount >= 0.5").collect()
    assert sorted(r.id for r in got) == [6, 10]
    assert df.where("id >= 39990").count() == 5
    reader, _ = _reader(spark, written, [GreaterThanOrEqual(("id",), 2 * N)])
    assert reader.partitions() == []  # statistics prune every row group


def test_columns_option_and_single_file(spark, written):
    part = next(p for p in sorted(Path(written).iterdir()) if p.name.startswith("part-"))
    df = spark.read.format("pqbloom").option("columns", "email,id").load(str(part))
    assert df.columns == ["email", "id"]
    assert df.count() == pqbloom.read_metadata(str(part)).num_rows


def test_hive_partitions(spark, tmp_path):
    out = tmp_path / "hive"
    _events(spark, 1000).selectExpr("*", "cast(id % 3 AS int) AS k").write.partitionBy("k").parquet(str(out))
    df = spark.read.format("pqbloom").load(str(out))
    assert df.schema["k"].dataType.simpleString() == "bigint"
    assert df.where("k = 1").count() == spark.read.parquet(str(out)).where("k = 1").count()
    assert [r.id for r in df.where("k = 1 AND id = 4").collect()] == [4]
    assert df.where("k = 2 AND id = 4").collect() == []  # id 4 lives under k=1


def test_types_match_spark_native_reader(spark, tmp_path):
    import pyarrow as pa

    utc = dt.timezone.utc
    t = pa.table({
        "i32": pa.array([1, None, 3], pa.int32()),
        "i64": pa.array([10, 20, None], pa.int64()),
        "f32": pa.array([1.5, None, -2.0], pa.float32()),
        "f64": pa.array([None, 2.25, 3.5], pa.float64()),
        "flag": pa.array([True, None, False]),
        "s": pa.array(["a", None, "ccc"]),
        "b": pa.array([b"\x00\x01", b"", None], pa.binary()),
        "d": pa.array([dt.date(2020, 1, 1), None, dt.date(1969, 12, 31)], pa.date32()),
        "ts": pa.array([dt.datetime(2024, 5, 6, 7, 8, 9, 123456, tzinfo=utc), None,
                        dt.datetime(1960, 1, 1, tzinfo=utc)], pa.timestamp("us", tz="UTC")),
        "ntz": pa.array([dt.datetime(2024, 5, 6, 7, 8, 9), dt.datetime(2000, 1, 1), None], pa.timestamp("us")),
        "dec": pa.array([decimal.Decimal("1.23"), None, decimal.Decimal("-99999.99")], pa.decimal128(7, 2)),
        "dec_big": pa.array([decimal.Decimal("12345678901234567890.12"), None, decimal.Decimal("0")],
                            pa.decimal128(22, 2)),
    })
    path = tmp_path / "types.parquet"
    pqbloom.write_table(t, str(path))
    ours = spark.read.format("pqbloom").load(str(path))
    native = spark.read.parquet(str(path))
    assert ours.schema.simpleString() == native.schema.simpleString()
    assert ours.collect() == native.collect()
    assert ours.where("ts = timestamp'2024-05-06 07:08:09.123456'").count() == 1
    assert ours.where("d = date'1969-12-31'").count() == 1
    assert ours.where("dec = 1.23").count() == 1
    assert ours.where("s IS NULL").count() == 1 and ours.where("b IS NOT NULL").count() == 2


def test_abort_leaves_no_files(spark, tmp_path):
    from pyspark.sql.functions import udf

    out = tmp_path / "aborted"

    @udf("long")
    def boom(x):
        if x == 1999:
            raise ValueError("task failure for the test")
        return x

    df = spark.range(0, 2000, numPartitions=2).select(boom("id").alias("id"))
    with pytest.raises(Exception, match="task failure for the test"):
        df.write.format("pqbloom").mode("append").save(str(out))
    left = [str(p.relative_to(out)) for p in out.rglob("*")] if out.exists() else []
    assert left == []


def test_save_modes(spark, tmp_path):
    out = str(tmp_path / "modes")
    spark.range(0, 10).write.format("pqbloom").mode("append").save(out)
    spark.range(10, 15).write.format("pqbloom").mode("append").save(out)
    read = spark.read.format("pqbloom").load(out)
    assert read.count() == 15
    spark.range(100, 103).write.format("pqbloom").mode("overwrite").save(out)
    assert sorted(r.id for r in spark.read.format("pqbloom").load(out).collect()) == [100, 101, 102]
    for mode in ("error", "ignore"):  # not supported for Python data sources: Spark refuses them
        with pytest.raises(Exception, match="(?i)mode|unsupported|not support"):
            spark.range(0, 1).write.format("pqbloom").mode(mode).save(out)


def test_encrypted_write_read(spark, tmp_path):
    from interop.spark_support import MASTER_KEYS

    out = str(tmp_path / "enc")
    key_list = ",".join(f"{k}:{v}" for k, v in MASTER_KEYS.items())
    (_events(spark, 3000).coalesce(1).write.format("pqbloom")
     .option("bloom_filter_columns", "id,email").option("row_group_size", "1000")
     .option("kms_key_list", key_list).option("encryption_footer_key", "keyA")
     .option("encryption_column_keys", "keyB:email").mode("overwrite").save(out))
    part = next(p for p in Path(out).iterdir() if p.name.startswith("part-"))
    assert part.read_bytes()[:4] == b"PARE"
    native = spark.read.parquet(out).where("email = 'u7@example.com'").collect()  # parquet-java + test KMS
    ours = (spark.read.format("pqbloom").option("kms_key_list", key_list).load(out)
            .where("email = 'u7@example.com'").collect())
    assert [r.id for r in native] == [r.id for r in ours] == [14]
    hexkey = "00112233445566778899aabbccddeeff"
    out2 = str(tmp_path / "enc_hex")
    (_events(spark, 100).coalesce(1).write.format("pqbloom").option("footer_key_hex", hexkey)
     .option("column_keys", f"email:{'ff' * 16}").mode("append").save(out2))
    df = (spark.read.format("pqbloom").option("footer_key_hex", hexkey)
          .option("column_keys", f"email:{'ff' * 16}").load(out2))
    assert df.where("id = 8").collect()[0].email == "u4@example.com"
