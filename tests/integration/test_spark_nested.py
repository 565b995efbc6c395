"""Spark (parquet-java) round trips of structs, arrays and maps: Spark reads pqbloom's nested files (a filter on a
struct leaf pushed down to parquet-java), pqbloom reads Spark's, in the standard and the legacy list forms.
Moved from tests/unit/file/test_nested.py (no JVM in the unit tier)."""

from __future__ import annotations

import pyarrow.parquet as pq
import pytest

import pqbloom
from tests.unit.file.test_nested import assert_same_column


def _spark_rows(rows):
    def conv(v):
        if hasattr(v, "asDict"):
            return {k: conv(x) for k, x in v.asDict().items()}
        if isinstance(v, dict):
            return {k: conv(x) for k, x in v.items()}
        if isinstance(v, list):
            return [conv(x) for x in v]
        return v

    return [conv(r) for r in rows]


SPARK_ROWS = [
    {"id": 0, "arr": [1, 2, None], "st": {"a": "x", "b": 1, "inner": {"c": [1.5]}}, "m": {"k1": 1, "k2": None},
     "aa": [[1], [], None]},
    {"id": 1, "arr": None, "st": None, "m": None, "aa": None},
    {"id": 2, "arr": [], "st": {"a": None, "b": None, "inner": None}, "m": {}, "aa": []},
    {"id": 3, "arr": [7], "st": {"a": "y", "b": 3, "inner": {"c": []}}, "m": {"z": 9}, "aa": [[None, 4]]},
]
SPARK_SCHEMA = {"id": "int64", "arr": "list<int64>", "st": "struct<a: string, b: int64, inner: struct<c: list<double>>>",
                "m": "map<string, int64>", "aa": "list<list<int64>>"}


@pytest.mark.spark
@pytest.mark.parametrize("version", ["1.0", "2.0"])
def test_spark_reads_pqbloom_nested(spark, tmp_path, version):
    rows = SPARK_ROWS * 50
    t = pqbloom.Table.from_pydict({k: [r[k] for r in rows] for k in SPARK_SCHEMA}, SPARK_SCHEMA)
    path = tmp_path / "nested.parquet"
    pqbloom.write_table(t, str(path), data_page_version=version, data_page_size=300,
                        bloom_filter_options={"st.a": True})
    df = spark.read.parquet(str(path))
    assert df.schema.simpleString() == ("struct<id:bigint,arr:array<bigint>,st:struct<a:string,b:bigint,"
                                        "inner:struct<c:array<double>>>,m:map<string,bigint>,"
                                        "aa:array<array<bigint>>>")
    got = _spark_rows(df.orderBy("id").collect())
    exp = sorted(rows, key=lambda r: r["id"])
    assert got == exp
    # a filter on a struct leaf, pushed down to parquet-java
    assert df.filter("st.a = 'y'").count() == 50


@pytest.mark.spark
def test_pqbloom_reads_spark_nested(spark, tmp_path):
    from pyspark.sql import types as stypes

    schema = stypes.StructType([
        stypes.StructField("id", stypes.LongType(), False),
        stypes.StructField("arr", stypes.ArrayType(stypes.LongType(), True)),
        stypes.StructField("st", stypes.StructType([
            stypes.StructField("a", stypes.StringType()), stypes.StructField("b", stypes.LongType()),
            stypes.StructField("inner", stypes.StructType([
                stypes.StructField("c", stypes.ArrayType(stypes.DoubleType()))]))])),
        stypes.StructField("m", stypes.MapType(stypes.StringType(), stypes.LongType(), True)),
        stypes.StructField("aa", stypes.ArrayType(stypes.ArrayType(stypes.LongType()))),
    ])
    out = tmp_path / "spark_out"
    spark.createDataFrame(SPARK_ROWS, schema).coalesce(1).write.parquet(str(out))
    files = sorted(out.glob("*.parquet"))
    assert files
    got = pqbloom.read_table(str(files[0]))
    assert sorted(got.to_pylist(maps_as_pydicts="strict"), key=lambda r: r["id"]) == SPARK_ROWS
    # the legacy list form (writeLegacyFormat: repeated group "bag" / "array") reads the same
    out2 = tmp_path / "spark_legacy"
    spark.conf.set("spark.sql.parquet.writeLegacyFormat", "true")
    try:
        spark.createDataFrame(SPARK_ROWS, schema).coalesce(1).write.parquet(str(out2))
    finally:
        spark.conf.set("spark.sql.parquet.writeLegacyFormat", "false")
    legacy = pqbloom.read_table(str(sorted(out2.glob("*.parquet"))[0]))
    assert sorted(legacy.to_pylist(maps_as_pydicts="strict"), key=lambda r: r["id"]) == SPARK_ROWS
    assert_same_column(legacy.to_arrow().column("aa"), pq.read_table(sorted(out2.glob("*.parquet"))[0]).column("aa"))
