"""The ``pqbloom`` Spark data source returns exactly the schema it declares, the one Spark's own Parquet
reader gives the same files: nested columns written by Spark (non-null children, declared nullable),
unsigned integers and nested non-null children written by pyarrow, nanosecond timestamps, Hive
partition keys. Spark's built-in reader (``spark.read.parquet``) is the oracle for schema and rows.

Spark checks the first Arrow batch a Python data source returns against the declared schema
(``DATA_SOURCE_RETURN_SCHEMA_MISMATCH``), so a mismatch fails every action, not only some.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

pytestmark = pytest.mark.spark

#: Spark SQL building nested columns from non-null values (Spark declares their children non-null in
#: the file) and from nullable ones, with timestamps at every depth
NESTED_SQL = """
SELECT id, CAST(id % 3 AS INT) AS k,
  array(id, id + 1) AS arr,
  IF(id % 4 = 0, NULL, array(id, NULL)) AS arr_nulls,
  named_struct('a', id, 's', concat('s', id), 't', timestamp_seconds(1700000000 + id)) AS st,
  map(concat('k', id), id * 2) AS m,
  IF(id % 5 = 0, NULL, map(id, IF(id % 2 = 0, NULL, concat('v', id)))) AS m_nulls,
  array(named_struct('x', id, 'ts', timestamp_seconds(1600000000 + id))) AS aos,
  map(CAST(id AS INT), array(CAST(id AS SMALLINT), CAST(-id AS SMALLINT))) AS m_arr,
  named_struct('inner', named_struct('d', CAST(id / 4 AS DECIMAL(10, 2)), 'day', date_add(DATE'2020-01-01',
    CAST(id AS INT)), 'ntz', make_timestamp_ntz(2021, 2, 3, 4, 5, CAST(id AS DECIMAL(8, 6))))) AS deep,
  array(array(CAST(id AS BYTE))) AS nested_arr,
  timestamp_seconds(1700000000 + id) AS ts
FROM range(0, 40)
"""

#: (name, Spark write options, session confs): page versions, dictionaries, timestamp layouts
SPARK_LAYOUTS = [
    ("v1_dict_micros", {}, {"spark.sql.parquet.outputTimestampType": "TIMESTAMP_MICROS"}),
    ("v2_nodict_int96", {"parquet.writer.version": "PARQUET_2_0", "parquet.enable.dictionary": "false"},
     {"spark.sql.parquet.outputTimestampType": "INT96"}),
    ("v1_nodict_millis", {"parquet.enable.dictionary": "false"},
     {"spark.sql.parquet.outputTimestampType": "TIMESTAMP_MILLIS"}),
    ("v2_dict_partitioned", {"parquet.writer.version": "PARQUET_2_0"}, {}),
]


@pytest.fixture(scope="module")
def spark(spark):
    """The shared session (tests/conftest.py) with the pqbloom data source registered."""
    import pqbloom.spark

    pqbloom.spark.register(spark)
    return spark


@pytest.fixture(scope="module")
def spark_nested(spark, tmp_path_factory):
    """{layout name: directory}: :data:`NESTED_SQL` written by Spark's own writer in each layout."""
    from interop.spark_support import spark_conf

    root = tmp_path_factory.mktemp("nested")
    out = {}
    for name, options, confs in SPARK_LAYOUTS:
        with spark_conf(spark, confs):
            w = spark.sql(NESTED_SQL).repartition(2).write.mode("overwrite").options(**options)
            if name.endswith("partitioned"):
                w = w.partitionBy("k")
            w.parquet(str(root / name))
        out[name] = str(root / name)
    return out


def _by_id(df):
    return sorted(df.collect(), key=lambda r: r.id)


@pytest.mark.parametrize("layout", [name for name, *_ in SPARK_LAYOUTS])
def test_spark_written_nested_columns(spark, spark_nested, layout):
    import pyarrow.parquet as pq

    path = spark_nested[layout]
    some = next(Path(path).rglob("part-*.parquet"))
    arr = pq.ParquetFile(some).schema_arrow.field("arr").type
    assert not arr.value_field.nullable  # Spark wrote non-null children: the case under test
    ours = spark.read.format("pqbloom").load(path)
    native = spark.read.parquet(path)
    assert ours.schema == native.schema
    assert _by_id(ours) == _by_id(native)
    pred = "st.a > 30 OR array_contains(arr, 5) OR m['k7'] = 14 OR deep.inner.d = 2.5"
    assert sorted(r.id for r in ours.where(pred).select("id").collect()) == [4, 5, 7, 10, 31, 32, 33, 34, 35, 36,
                                                                            37, 38, 39]


def test_every_action_on_one_nested_dataframe(spark, spark_nested, tmp_path):
    path = spark_nested["v2_dict_partitioned"]
    df = spark.read.format("pqbloom").load(path)
    native = spark.read.parquet(path)
    want = _by_id(native)
    assert df.count() == 40
    assert _by_id(df) == want
    pred = "size(arr_nulls) = 2 AND k = 1"
    assert _by_id(df.where(pred)) == [r for r in want if r.arr_nulls is not None and r.k == 1]
    agg = "k, count(*) AS n, sum(st.a) AS s, max(ts) AS latest, sum(element_at(arr, 2)) AS second"
    df.createOrReplaceTempView("nested_ours")
    native.createOrReplaceTempView("nested_theirs")
    assert sorted(spark.sql(f"SELECT {agg} FROM nested_ours GROUP BY k").collect()) == sorted(
        spark.sql(f"SELECT {agg} FROM nested_theirs GROUP BY k").collect())
    same = "a.arr <=> b.arr AND a.st <=> b.st AND a.deep <=> b.deep AND to_json(a.m) <=> to_json(b.m)"
    joined = df.alias("a").join(native.alias("b"), "id").selectExpr(f"{same} AS same")
    assert tuple(joined.selectExpr("count(*)", "count_if(same)").first()) == (40, 40)
    cached = df.cache()
    try:
        assert cached.count() == 40 and _by_id(cached) == want
        assert cached.where("m_nulls IS NULL").count() == 8
    finally:
        cached.unpersist()
    out = str(tmp_path / "rewritten")
    df.write.format("pqbloom").mode("overwrite").save(out)
    back = spark.read.format("pqbloom").load(out).select(*df.columns)
    assert back.schema == df.schema
    assert _by_id(back) == want
    assert _by_id(spark.read.parquet(out).select(*df.columns)) == want


@pytest.fixture(scope="module")
def pyarrow_file(tmp_path_factory):
    """Written by pyarrow: every unsigned width at its extremes, nested columns whose children are
    declared non-null (pyarrow's ``item`` list naming), and names with a backtick."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    req = pa.field("item", pa.int64(), nullable=False)
    t = pa.table({
        "id": pa.array([0, 1, 2], pa.int32()),
        "u8": pa.array([0, 255, None], pa.uint8()),
        "u16": pa.array([65535, None, 1], pa.uint16()),
        "u32": pa.array([None, 4294967295, 7], pa.uint32()),
        "u64": pa.array([18446744073709551615, 0, None], pa.uint64()),
        "lu16": pa.array([[1, 65535], None, []], pa.list_(pa.uint16())),
        "su": pa.array([{"a": 255, "b": 18446744073709551615}, None, {"a": 0, "b": 1}],
                       pa.struct([pa.field("a", pa.uint8(), False), pa.field("b", pa.uint64())])),
        "mu": pa.array([[("x", 4294967295)], [], None], pa.map_(pa.string(), pa.uint32())),
        "req_list": pa.array([[1, 2], [3], None], pa.list_(req)),
        "req_struct": pa.array([{"x": 1, "y": "a"}, {"x": 2, "y": "b"}, None],
                               pa.struct([pa.field("x", pa.int64(), False), pa.field("y", pa.string(), False)])),
        "req_map": pa.array([[("k", 1)], None, [("z", 3)]], pa.map_(pa.string(), pa.field("value", pa.int64(), False))),
        "ts_ms": pa.array([0, None, 1_700_000_000_123], pa.timestamp("ms", tz="UTC")),
        "odd`name": pa.array([{"x`y": 1}, None, {"x`y": 3}], pa.struct([pa.field("x`y", pa.int8())])),  # DDL quoting
    })
    path = tmp_path_factory.mktemp("pyarrow") / "pyarrow.parquet"
    pq.write_table(t, path)
    return str(path)


def test_pyarrow_written_unsigned_and_required_children(spark, pyarrow_file):
    ours = spark.read.format("pqbloom").load(pyarrow_file)
    native = spark.read.parquet(pyarrow_file)
    assert ours.schema == native.schema
    assert ours.schema.simpleString().startswith(
        "struct<id:int,u8:smallint,u16:int,u32:bigint,u64:decimal(20,0),lu16:array<int>,su:struct<a:smallint,"
        "b:decimal(20,0)>,mu:map<string,bigint>")
    assert _by_id(ours) == _by_id(native)
    assert ours.where("u64 > 18446744073709551614").count() == 1
    assert ours.where("u8 = 255 AND u32 = 4294967295").count() == 1
    assert ours.selectExpr("sum(u32) AS s").first().s == 4294967302
    assert ours.where("su.b = 18446744073709551615").select("id").collect()[0].id == 0


def test_nanosecond_timestamps(spark, tmp_path):
    """Spark's reader refuses TIMESTAMP(NANOS) unless ``spark.sql.legacy.parquet.nanosAsLong`` reads it as
    long; the data source refuses it at ``load()``, unless ``nanos_as_long`` asks for the same long."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    from interop.spark_support import spark_conf

    ns = [1_700_000_000_123_456_789, None, -1]
    t = pa.table({
        "id": [0, 1, 2],
        "ns": pa.array(ns, pa.timestamp("ns", tz="UTC")),
        "ns_local": pa.array([5, 6, None], pa.timestamp("ns")),
        "st": pa.array([{"t": 7}, None, {"t": 8}], pa.struct([pa.field("t", pa.timestamp("ns", tz="UTC"))])),
    })
    path = str(tmp_path / "ns.parquet")
    pq.write_table(t, path, version="2.6")
    with pytest.raises(Exception, match="PARQUET_TYPE_ILLEGAL"):  # Spark's own reader refuses them
        spark.read.parquet(path).collect()
    with pytest.raises(Exception, match=r"'ns' is a TIMESTAMP\(NANOS\) column.*nanos_as_long"):
        spark.read.format("pqbloom").load(path)
    with pytest.raises(Exception, match=r"'st' is a TIMESTAMP\(NANOS\) column"):
        spark.read.format("pqbloom").option("columns", "id,st").load(path)
    with spark_conf(spark, {"spark.sql.legacy.parquet.nanosAsLong": "true"}):
        native = spark.read.parquet(path)
        ours = spark.read.format("pqbloom").option("nanos_as_long", "true").load(path)
        assert ours.schema == native.schema
        assert ours.schema.simpleString() == "struct<id:bigint,ns:bigint,ns_local:bigint,st:struct<t:bigint>>"
        assert _by_id(ours) == _by_id(native)
        assert [r.ns for r in _by_id(ours)] == ns
    only = spark.read.format("pqbloom").option("columns", "id").load(path)  # leaving the columns out works
    assert sorted(r.id for r in only.collect()) == [0, 1, 2]
    # pyarrow's older format versions store nanoseconds as microseconds (ARROW:schema still says ns):
    # Spark reads a microsecond timestamp, and so does the data source
    micros = pa.table({"id": [0, 1], "ts": pa.array([1_700_000_000_123_456_000, None], pa.timestamp("ns", tz="UTC"))})
    path2 = str(tmp_path / "coerced.parquet")
    pq.write_table(micros, path2, version="2.4")
    assert '"timeUnit":"microseconds"' in pq.ParquetFile(path2).schema.column(1).logical_type.to_json()
    ours = spark.read.format("pqbloom").load(path2)
    native = spark.read.parquet(path2)
    assert ours.schema == native.schema and _by_id(ours) == _by_id(native)
    assert ours.selectExpr("unix_micros(ts) AS us").orderBy("us").collect()[-1].us == 1_700_000_000_123_456


def test_hive_partition_key_types_match_spark(spark, tmp_path):
    """Spark types an integer partition key int when every value fits 32 bits, else long; a key whose
    every value is null is void."""
    out = str(tmp_path / "keys")
    src = spark.range(0, 12).selectExpr("id", "CAST(id % 3 - 1 AS INT) AS small", "(id % 2) * 3000000000 AS big",
                                        "CAST(NULL AS INT) AS none")
    src.write.partitionBy("small", "big", "none").parquet(out)
    assert os.path.isdir(os.path.join(out, "small=-1", "big=3000000000", "none=__HIVE_DEFAULT_PARTITION__"))
    ours = spark.read.format("pqbloom").load(out)
    native = spark.read.parquet(out)
    assert ours.schema == native.schema
    assert ours.schema.simpleString() == "struct<id:bigint,small:int,big:bigint,none:void>"
    assert _by_id(ours) == _by_id(native)
    assert ours.where("small = -1 AND big = 3000000000").count() == 2
