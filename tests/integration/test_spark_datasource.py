"""The ``pqbloom`` PySpark Python Data Source (``pqbloom.spark``): read, write, pushdown, commit/abort, types."""

from __future__ import annotations

import datetime as dt
import decimal
import os
from pathlib import Path

import numpy as np
import pytest

import pqbloom

pytestmark = pytest.mark.spark

N = 20_000
RG = 2_000


@pytest.fixture(scope="module")
def spark(spark):
    """The shared session (tests/conftest.py) with the pqbloom data source registered."""
    import pqbloom.spark

    pqbloom.spark.register(spark)
    return spark


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


def _reader(spark, path, filter_text=None, **options):
    """The reader Spark's planning worker builds for ``load(path)`` with the ``filter`` option."""
    from pyspark.sql.types import StructType

    from pqbloom.spark import PqbloomDataSource

    opts = {"path": str(path), **options}
    if filter_text is not None:
        opts["filter"] = filter_text
    ds = PqbloomDataSource(opts)
    return ds.reader(StructType.fromDDL(ds.schema()))


def test_write_layout_and_read_back(spark, written):
    names = sorted(os.listdir(written))
    assert "_SUCCESS" in names and "_temporary" not in names
    parts = [n for n in names if n.startswith("part-")]
    assert len(parts) == 2
    for p in parts:  # written by pqbloom, with Bloom filters on both columns
        with pqbloom.ParquetFile(str(written / p)) as pf:
            assert pf.num_row_groups >= 2
            assert pf.thrift_metadata.row_groups[0].num_rows == RG  # Spark's 10k-row Arrow batches are re-cut
            assert pf.bloom_filter(0, "id") is not None and pf.bloom_filter(0, "email") is not None
    df = spark.read.format("pqbloom").load(str(written))
    assert df.schema.simpleString() == "struct<id:bigint,email:string,amount:double,ts:timestamp>"
    assert sorted(df.collect()) == sorted(_events(spark).collect())


def test_filter_option_absent_key_plans_no_partition(spark, written):
    reader = _reader(spark, written, "id = 12345")
    assert reader.partitions() == []
    assert reader.explain is not None and reader.explain.row_groups_pruned_bloom_filter > 0
    reader = _reader(spark, written, "email in ('nobody@example.com', 'x@y')")
    assert reader.partitions() == []
    df = spark.read.format("pqbloom").option("filter", "id = 12345").load(str(written))
    assert df.collect() == [] and df.count() == 0
    assert spark.read.format("pqbloom").load(str(written)).where("id = 12345").collect() == []


def test_filter_option_present_key(spark, written):
    reader = _reader(spark, written, "id = 1234")
    parts = reader.partitions()
    total = reader.explain.row_groups_total
    assert 1 <= len(parts) < total
    rows = list(reader.read(parts[0]))
    assert sum(b.num_rows for b in rows) <= 1
    one = spark.read.format("pqbloom").option("filter", "id = 1234").load(str(written))
    assert [(r.id, r.email) for r in one.collect()] == [(1234, "u617@example.com")]
    assert one.count() == 1 and one.where("email IS NULL").count() == 0
    two = (spark.read.format("pqbloom").load(str(written))
           .where("email IN ('u3@example.com', 'u5@example.com', 'zz') AND amount >= 0.5").collect())
    assert sorted(r.id for r in two) == [6, 10]
    ranged = spark.read.format("pqbloom").option("filter", "id >= 39990").load(str(written))
    assert ranged.count() == 5
    assert _reader(spark, written, f"id >= {2 * N}").partitions() == []  # statistics prune every row group


def test_columns_option_and_single_file(spark, written):
    part = next(p for p in sorted(Path(written).iterdir()) if p.name.startswith("part-"))
    df = spark.read.format("pqbloom").option("columns", "email,id").load(str(part))
    assert df.columns == ["email", "id"]
    assert df.count() == pqbloom.read_metadata(str(part)).num_rows


def test_hive_partitions(spark, tmp_path):
    out = tmp_path / "hive"
    _events(spark, 1000).selectExpr("*", "cast(id % 3 AS int) AS k").write.partitionBy("k").parquet(str(out))
    df = spark.read.format("pqbloom").load(str(out))
    assert df.schema == spark.read.parquet(str(out)).schema  # k is int, as Spark's own reader types it
    assert df.schema["k"].dataType.simpleString() == "int"
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
    # Spark refuses every other mode for Python data sources before any task runs (the default
    # mode is errorifexists): if this starts failing, Spark passes them on and the writer must handle them
    for mode in ("error", "errorifexists", "ignore", None):
        w = spark.range(0, 1).write.format("pqbloom")
        with pytest.raises(Exception, match="UNSUPPORTED_DATA_SOURCE_SAVE_MODE"):
            (w if mode is None else w.mode(mode)).save(out)
    assert sorted(r.id for r in spark.read.format("pqbloom").load(out).collect()) == [100, 101, 102]


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


PLANTED = 10_000_002  # in the middle of k's range: only Bloom filters can prune it


def _peer_dataset(root, files=3, rgs=4, rg_rows=500):
    """``files`` files written by pyarrow (Bloom filter on ``k``, fpp 0.001); ``k`` random, with key
    PLANTED planted in two row groups of different files. Returns {(file, rg): set of k} from pyarrow."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    rng = np.random.default_rng(5)
    root.mkdir()
    where = {}
    for i in range(files):
        k = rng.integers(1000, 10_000_000, files * rgs * rg_rows)[: rgs * rg_rows] * 2  # even
        if i == 0:
            k[rg_rows + 17] = PLANTED  # row group 1
        if i == 2:
            k[3 * rg_rows + 3] = PLANTED  # row group 3
        path = root / f"part-{i:05d}.parquet"
        pq.write_table(pa.table({"k": k, "v": np.arange(len(k)) * 0.5}), path, row_group_size=rg_rows,
                       bloom_filter_options={"k": {"ndv": rg_rows, "fpp": 0.001}})
        pf = pq.ParquetFile(path)
        for rg in range(pf.num_row_groups):
            where[(str(path), rg)] = set(pf.read_row_group(rg, columns=["k"]).column("k").to_pylist())
    (root / "_SUCCESS").write_bytes(b"")
    return where


def test_multi_file_planning_absent_none_present_exact(spark, tmp_path):
    root = tmp_path / "peer"
    where = _peer_dataset(root)
    present = sorted(where[(str(root / "part-00001.parquet"), 2)])[:3] + [PLANTED]
    for key in present:
        reader = _reader(spark, root, f"k = {key}")
        planned = [(p.path, p.row_group) for p in reader.partitions()]
        assert planned == sorted(fr for fr, ks in where.items() if key in ks), key
        ex = reader.explain
        assert ex.row_groups_total == 12 and ex.row_groups_pruned == 12 - len(planned)
        assert ex.row_groups_pruned_bloom_filter > 0  # k is random: statistics alone cannot do it
    assert len([fr for fr, ks in where.items() if PLANTED in ks]) == 2
    everything = set().union(*where.values())
    for key in (4_000_001, 9_999_999, 12_345_679, 15_000_001):  # odd, inside every min/max: absent
        assert key not in everything
        reader = _reader(spark, root, f"k = {key}")
        assert reader.partitions() == []
        assert reader.explain.files_total == 3 and reader.explain.row_groups_pruned_bloom_filter == 12
    reader = _reader(spark, root, f"k in (4000001, {PLANTED})")
    assert len(reader.partitions()) == 2
    df = spark.read.format("pqbloom").load(str(root))
    native = spark.read.parquet(str(root))
    assert df.where(f"k = {PLANTED}").count() == native.where(f"k = {PLANTED}").count() == 2
    assert df.where("k = 4000001").collect() == []


def test_multi_file_schema_checked_at_planning(spark, tmp_path):
    import pyarrow as pa
    import pyarrow.parquet as pq

    from pqbloom.errors import SchemaError

    root = tmp_path / "mixed"
    root.mkdir()
    pq.write_table(pa.table({"id": pa.array([1, 2], pa.int64()), "s": ["a", "b"]}), root / "a.parquet")
    pq.write_table(pa.table({"s": ["c"], "id": pa.array([3], pa.int64())}), root / "b.parquet")  # order is free
    df = spark.read.format("pqbloom").load(str(root))
    assert sorted(df.collect()) == sorted(spark.read.parquet(str(root)).collect())
    pq.write_table(pa.table({"id": pa.array([4], pa.int32()), "s": ["d"]}), root / "c.parquet")
    reader = _reader(spark, root)
    with pytest.raises(SchemaError, match=r"column 'id' is long in .*a\.parquet but int in .*c\.parquet"):
        reader.partitions()
    with pytest.raises(Exception, match=r"SchemaError.*column 'id' is long"):
        spark.read.format("pqbloom").load(str(root)).collect()
    only_s = spark.read.format("pqbloom").option("columns", "s").load(str(root))
    assert sorted(r.s for r in only_s.collect()) == ["a", "b", "c", "d"]
    (root / "c.parquet").unlink()
    # a column some files lack is an error, not nulls
    pq.write_table(pa.table({"id": pa.array([5], pa.int64()), "s": ["e"], "x": [0.5]}), root / "d.parquet")
    reader = _reader(spark, root)
    with pytest.raises(SchemaError, match=r"column 'x' is in .*d\.parquet but not in .*a\.parquet"):
        reader.partitions()
    common = spark.read.format("pqbloom").option("columns", "id,s").load(str(root))
    assert sorted(r.id for r in common.collect()) == [1, 2, 3, 5]


def test_partition_by_is_rejected_by_spark(spark, tmp_path):
    df = spark.range(0, 4).selectExpr("id", "cast(id % 2 AS string) AS country")
    out = str(tmp_path / "pb")
    # Spark 4.3 refuses partitionBy for Python data sources (their tables declare no partitioning);
    # if this starts failing, Spark passes the columns on and the writer should honour them
    with pytest.raises(Exception, match="partitioning or clustering columns do not match"):
        df.write.partitionBy("country").format("pqbloom").mode("overwrite").save(out)
    assert not os.path.exists(os.path.join(out, "_SUCCESS"))


def test_partition_by_option_writes_hive_directories(spark, tmp_path):
    out = tmp_path / "by_country"
    df = spark.range(0, 3000, numPartitions=2).selectExpr(
        "id", "CASE id % 4 WHEN 0 THEN 'FR' WHEN 1 THEN 'a/b=c' WHEN 2 THEN NULL ELSE 'DE' END AS country",
        "cast(id % 3 AS int) AS y", "id * 0.5 AS amount")
    (df.write.format("pqbloom").option("partition_by", "country,y").option("bloom_filter_columns", "id")
     .option("row_group_size", "200").mode("overwrite").save(str(out)))
    dirs = sorted(p.name for p in out.iterdir())
    assert dirs == ["_SUCCESS", "country=DE", "country=FR", "country=__HIVE_DEFAULT_PARTITION__",
                    "country=a%2Fb%3Dc"]
    assert sorted(p.name for p in (out / "country=FR").iterdir()) == ["y=0", "y=1", "y=2"]
    files = sorted(out.rglob("part-*.parquet"))
    assert len(files) == 2 * 4 * 3  # one file per task and partition value
    with pqbloom.ParquetFile(str(files[0])) as pf:  # the partition columns live in the paths only
        assert [f.name for f in pf.table_schema] == ["id", "amount"]
        assert pf.bloom_filter(0, "id") is not None
    want = sorted(df.collect())
    native = spark.read.parquet(str(out)).select("id", "country", "y", "amount")
    assert sorted(native.collect()) == want
    ours = spark.read.format("pqbloom").load(str(out))
    assert ours.columns == ["id", "amount", "country", "y"]
    assert sorted(ours.select("id", "country", "y", "amount").collect()) == want
    assert sorted(r.id for r in ours.where("country = 'a/b=c' AND id < 20").collect()) == [1, 5, 9, 13, 17]
    reader = _reader(spark, out, "country = 'DE' and id = 7")
    parts = reader.partitions()
    assert reader.explain.files_pruned_partition == 18 and len(parts) == 1
    with pytest.raises(Exception, match="partition_by column 'nope' is not in the data"):
        df.write.format("pqbloom").option("partition_by", "nope").mode("overwrite").save(str(tmp_path / "x"))


def test_hive_partition_null_in_an_integer_key(spark, tmp_path):
    """A null partition value (``__HIVE_DEFAULT_PARTITION__``) in a key whose other values are all
    integers: the column is int, so its nulls must come back as an int column too."""
    out = str(tmp_path / "hive_null")
    src = spark.range(0, 30).selectExpr("id", "CASE WHEN id % 3 = 0 THEN NULL ELSE id % 3 END AS y")
    src.write.partitionBy("y").parquet(out)
    assert any(p.name == "y=__HIVE_DEFAULT_PARTITION__" for p in Path(out).iterdir())
    df = spark.read.format("pqbloom").load(out)
    native = spark.read.parquet(out)
    assert df.schema == native.schema
    assert df.schema.simpleString() == "struct<id:bigint,y:int>"  # as Spark's own reader types it
    assert sorted(df.collect(), key=lambda r: r.id) == sorted(native.collect(), key=lambda r: r.id)
    assert df.where("y IS NULL").count() == 10


def test_spark_int96_sentinels_read_as_spark_reads_them(spark, tmp_path):
    # Spark writes INT96 timestamps with sentinels (year 1, year 9999) that nanoseconds cannot hold; the
    # data source reads INT96 in microseconds, Spark's unit, so they come back as Spark's reader gives them
    import pyarrow.parquet as pq

    from interop.spark_support import spark_conf

    confs = {"spark.sql.parquet.outputTimestampType": "INT96",
             "spark.sql.parquet.int96RebaseModeInWrite": "CORRECTED",
             "spark.sql.parquet.int96RebaseModeInRead": "CORRECTED"}
    with spark_conf(spark, confs):
        out = str(tmp_path / "int96")
        (spark.sql("SELECT * FROM VALUES (1, timestamp'0001-01-01 00:00:00'), "
                   "(2, timestamp'9999-12-31 23:59:59.999999'), (3, timestamp'2024-05-06 07:08:09.123456'), "
                   "(4, CAST(NULL AS timestamp)) AS t(k, ts)")
         .coalesce(1).write.mode("overwrite").parquet(out))
        files = [os.path.join(out, f) for f in os.listdir(out) if f.endswith(".parquet")]
        assert pq.ParquetFile(files[0]).schema.column(1).physical_type == "INT96"  # Spark really wrote INT96
        # compared in Spark as epoch microseconds: Python's datetime cannot hold year 1 in every zone
        cols = ("k", "unix_micros(ts) AS us", "CAST(ts AS string) AS text")
        native = spark.read.parquet(out).selectExpr(*cols).orderBy("k").collect()
        ours = spark.read.format("pqbloom").load(out).selectExpr(*cols).orderBy("k").collect()
        assert ours == native
        assert [r.us for r in ours] == [-62135596800000000, 253402300799999999, 1714979289123456, None]
