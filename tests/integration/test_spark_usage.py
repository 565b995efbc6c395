"""The ``pqbloom`` Spark data source used the way users use a DataFrame: one DataFrame, many actions.

Spark is the oracle: every answer is compared with Spark's native Parquet reader on the same files
(written by Spark itself, plain and encrypted with parquet-java's PropertiesDrivenCryptoFactory), or
with the DataFrame the files were written from.

Why these tests exist: Spark 4.3 keeps the read plan a Python data source returns (the pickled reader
and its partitions) on the DataFrame's relation (``PythonDataSourceV2.readInfo``) and replaces it only
when a later scan pushes filters. A scan that pushes none (``count()``, ``collect()``, a write) then
reuses the plan of the last filtered scan, and two scans of one DataFrame in one query (union, self
join) share the plan of whichever was optimized last. A data source whose plan depends on pushed
filters returns the rows of another query's filter, silently.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap

import pytest

from tests.paths import ROOT

pytestmark = pytest.mark.spark

N = 3000



@pytest.fixture(scope="module")
def spark(spark):
    """The shared session (tests/conftest.py) with the pqbloom data source registered."""
    import pqbloom.spark

    session = spark
    pqbloom.spark.register(session)
    # the oracle is Spark's evaluation of each filter, not parquet-java's row-group pruning: that
    # drops -0.0 rows for "f = 0" when a dictionary holds -0.0 (Double.equals), where Spark's own
    # comparison (and SQL) says -0.0 = 0.0
    conf = "spark.sql.parquet.filterPushdown"
    old = session.conf.get(conf)
    session.conf.set(conf, "false")
    yield session  # the shared session is stopped at the end of the run (tests/conftest.py)
    session.conf.set(conf, old)


def _events(spark, n=N):
    return spark.range(0, n).selectExpr(
        "id",
        "concat('u', id, '@example.com') AS email",
        "CASE WHEN id % 7 = 0 THEN NULL ELSE cast(id AS double) * 0.5 END AS amount",
        "cast(id % 5 AS int) AS grp",
    )


def _key_list():
    from interop.spark_support import MASTER_KEYS

    return ",".join(f"{k}:{v}" for k, v in MASTER_KEYS.items())


#: read options of the pqbloom data source per dataset kind (parquet-java's KMS keys for "encrypted")
def _read_opts(kind):
    return {"kms_key_list": _key_list()} if kind == "encrypted" else {}


def _write_opts(kind):
    if kind == "plain":
        return {}
    return {"kms_key_list": _key_list(), "encryption_footer_key": "keyA", "encryption_column_keys": "keyB:email"}


def _spark_write(df, out, kind, files):
    """Spark's native writer (parquet-java): ``files`` part files, encrypted like Spark users do it."""
    w = (df.coalesce(1) if files == 1 else df.repartition(files)).write.mode("overwrite")
    if kind == "encrypted":
        w = w.option("parquet.encryption.footer.key", "keyA").option("parquet.encryption.column.keys", "keyB:email")
    w.parquet(str(out))


@pytest.fixture(scope="module")
def datasets(spark, tmp_path_factory):
    """{(kind, layout): path}: plain/encrypted x a single file/a directory of 3 files, all by Spark."""
    root = tmp_path_factory.mktemp("usage")
    out = {}
    for kind in ("plain", "encrypted"):
        d = root / f"{kind}_dir"
        _spark_write(_events(spark), d, kind, 3)
        one = root / f"{kind}_one"
        _spark_write(_events(spark), one, kind, 1)
        (part,) = [p for p in one.iterdir() if p.name.startswith("part-")]
        if kind == "encrypted":
            assert part.read_bytes()[:4] == b"PARE"
        out[(kind, "dir")] = str(d)
        out[(kind, "file")] = str(part)
    return out


def _rows(df):
    """Rows as tuples sorted by the first column (unique ids; None-safe)."""
    return sorted((tuple(r) for r in df.collect()), key=lambda t: t[0])


def _load(spark, path, kind, **extra):
    r = spark.read.format("pqbloom")
    for k, v in {**_read_opts(kind), **extra}.items():
        r = r.option(k, v)
    return r.load(path)


@pytest.mark.parametrize("layout", ["file", "dir"])
@pytest.mark.parametrize("kind", ["plain", "encrypted"])
def test_filtered_query_does_not_leak_into_later_queries(spark, datasets, tmp_path, kind, layout):
    path = datasets[(kind, layout)]
    want = _rows(_events(spark))
    df = _load(spark, path, kind)
    assert df.count() == N
    assert _rows(df) == want
    assert [r.id for r in df.where("id = 42").collect()] == [42]
    assert df.count() == N  # was 1: the count reused the plan of "id = 42"
    assert df.where("grp = 3 AND id < 40").count() == 8
    assert _rows(df) == want
    out = str(tmp_path / "back")
    w = df.write.format("pqbloom").mode("overwrite")
    for k, v in _write_opts(kind).items():
        w = w.option(k, v)
    w.save(out)  # after a filtered query: must write every row
    assert _rows(spark.read.parquet(out)) == want  # Spark's native reader (and the session's KMS)
    assert _rows(_load(spark, out, kind)) == want


def test_scans_of_one_dataframe_in_one_query(spark, datasets):
    """Union, self join and intersect of filtered views of ONE DataFrame: each scan its own filter."""
    path = datasets[("plain", "dir")]
    df = spark.read.format("pqbloom").load(path)
    native = spark.read.parquet(path)
    assert sorted(r.id for r in df.where("id = 1").union(df.where("id = 2")).collect()) == [1, 2]
    q = "SELECT a.id, b.email FROM a JOIN b ON a.id = b.id"
    df.where("id < 100").createOrReplaceTempView("a")
    df.where("id >= 50").createOrReplaceTempView("b")
    got = sorted(tuple(r) for r in spark.sql(q).collect())
    native.where("id < 100").createOrReplaceTempView("a")
    native.where("id >= 50").createOrReplaceTempView("b")
    assert got == sorted(tuple(r) for r in spark.sql(q).collect())
    assert len(got) == 50
    assert df.where("grp = 1").intersect(df.where("id < 20")).count() == 4


def test_explain_then_action(spark, datasets):
    """Planning a filtered query without running it (``explain``) must not change later queries."""
    df = spark.read.format("pqbloom").load(datasets[("plain", "file")])
    df.where("id = 3")._jdf.queryExecution().executedPlan()  # what explain() plans, without printing
    assert df.count() == N
    assert df.where("id > 2000").count() == 999


def test_filter_pushdown_conf_enabled(spark, datasets):
    """With ``spark.sql.python.filterPushdown.enabled`` on (other Python data sources may need it)."""
    conf = "spark.sql.python.filterPushdown.enabled"
    old = spark.conf.get(conf)
    spark.conf.set(conf, "true")
    try:
        df = spark.read.format("pqbloom").load(datasets[("plain", "dir")])
        assert df.where("id = 5").count() == 1
        assert df.count() == N
        assert df.where("amount IS NULL").count() == len(range(0, N, 7))
        assert df.where("id IN (1, 2, 3000)").count() == 2
        assert df.count() == N
    finally:
        spark.conf.set(conf, old)


# ---------------------------------------------------------------------------
# a DataFrame used the way users use one
# ---------------------------------------------------------------------------
PREDICATES = [
    "id = 42",
    "id IN (1, 2, 2999, 5000)",
    "amount IS NULL",
    "amount > 1000.5",
    "email LIKE 'u12%'",
    "grp = 2 AND id < 100",
    "NOT (grp = 2)",
    "email = 'u7@example.com' OR id = 8",
    "id % 100 = 0 AND amount IS NOT NULL",
    "email >= 'u9' AND grp <=> 4",
]


def test_many_actions_on_one_dataframe(spark, datasets, capsys):
    path = datasets[("plain", "dir")]
    df = spark.read.format("pqbloom").load(path)
    native = spark.read.parquet(path)
    want = _rows(native)
    assert df.count() == N and _rows(df) == want
    every = set(want)
    took = df.take(5)
    assert len(took) == 5 and {tuple(r) for r in took} <= every
    assert tuple(df.first()) in every and df.limit(7).count() == 7
    df.show(3)
    shown = capsys.readouterr().out.splitlines()
    assert [c.strip() for c in shown[1].split("|")[1:-1]] == ["id", "email", "amount", "grp"]
    assert len(shown) == 3 + 5  # 3 rows, the header and borders, the "only showing" line
    # Spark's answers, all in one native query: which ids each predicate selects
    flags = native.selectExpr("id", *[f"coalesce({p}, false) AS p{i}" for i, p in enumerate(PREDICATES)]).collect()
    for i, pred in enumerate(PREDICATES):  # one query after another on the same DataFrame
        assert sorted(r.id for r in df.where(pred).select("id").collect()) == sorted(
            r.id for r in flags if r[f"p{i}"]), pred
    assert df.count() == N
    agg = "grp, count(*) AS n, sum(amount) AS s, count(amount) AS c"
    assert sorted(df.groupBy("grp").agg({"*": "count"}).collect()) == sorted(
        native.groupBy("grp").agg({"*": "count"}).collect())
    df.createOrReplaceTempView("ours")
    native.createOrReplaceTempView("theirs")
    assert sorted(spark.sql(f"SELECT {agg} FROM ours GROUP BY grp").collect()) == sorted(
        spark.sql(f"SELECT {agg} FROM theirs GROUP BY grp").collect())


def test_filter_then_write_then_read_back(spark, datasets, tmp_path):
    path = datasets[("encrypted", "dir")]
    df = _load(spark, path, "encrypted")
    native = spark.read.parquet(path)
    pred = "grp IN (1, 3) AND amount IS NOT NULL"
    want = _rows(native.where(pred))
    out = str(tmp_path / "filtered")
    df.where(pred).write.format("pqbloom").option("bloom_filter_columns", "id").mode("overwrite").save(out)
    assert _rows(spark.read.parquet(out)) == want
    assert _rows(spark.read.format("pqbloom").load(out)) == want
    # the source DataFrame is unchanged by the filtered write, and a writer object can be saved twice
    assert df.count() == N
    again = str(tmp_path / "twice")
    w = df.where("id < 10").write.format("pqbloom").mode("append")
    w.save(again)
    w.save(again)
    assert sorted(r.id for r in spark.read.parquet(again).collect()) == sorted(list(range(10)) * 2)


def test_cache(spark, datasets):
    path = datasets[("plain", "file")]
    df = spark.read.format("pqbloom").load(path).cache()
    native = spark.read.parquet(path)
    try:
        assert df.count() == N
        assert df.where("id = 9").count() == 1
        assert _rows(df.where("grp = 0")) == _rows(native.where("grp = 0"))
        assert df.count() == N and _rows(df) == _rows(native)
    finally:
        df.unpersist()
    assert df.where("amount IS NULL").count() == native.where("amount IS NULL").count()
    assert df.count() == N


def test_union_and_join_of_two_pqbloom_dataframes(spark, datasets):
    a = spark.read.format("pqbloom").load(datasets[("plain", "dir")])
    b = _load(spark, datasets[("encrypted", "file")], "encrypted")
    na = spark.read.parquet(datasets[("plain", "dir")])
    nb = spark.read.parquet(datasets[("encrypted", "file")])
    u = a.where("id < 5").union(b.where("id >= 2995"))
    assert sorted(r.id for r in u.collect()) == [0, 1, 2, 3, 4, 2995, 2996, 2997, 2998, 2999]
    assert a.union(b).count() == 2 * N
    j = a.where("grp = 1").join(b.where("id < 50"), "id").select("id", a.email, b.amount)
    nj = na.where("grp = 1").join(nb.where("id < 50"), "id").select("id", na.email, nb.amount)
    assert _rows(j) == _rows(nj) and len(_rows(j)) == 10
    assert a.join(b, "id").count() == N
    assert a.count() == N and b.count() == N


# ---------------------------------------------------------------------------
# the filter option: part of the DataFrame, pruned by pqbloom, Spark's answer
# ---------------------------------------------------------------------------
@pytest.mark.parametrize("kind", ["plain", "encrypted"])
def test_filter_option_defines_the_dataframe(spark, datasets, tmp_path, kind):
    path = datasets[(kind, "dir")]
    df = _load(spark, path, kind, filter="grp = 3 and id < 40")
    want = _rows(spark.read.parquet(path).where("grp = 3 AND id < 40"))
    assert len(want) == 8
    assert df.count() == 8 and _rows(df) == want
    assert df.where("id = 3").count() == 1
    assert df.count() == 8
    out = str(tmp_path / "opt")
    df.write.format("pqbloom").mode("overwrite").save(out)
    assert _rows(spark.read.parquet(out)) == want
    assert _load(spark, path, kind, filter="id = 3001").collect() == []


def test_filter_option_errors_at_load(spark, datasets):
    path = datasets[("plain", "file")]
    with pytest.raises(Exception, match="cannot parse the filter option"):
        spark.read.format("pqbloom").option("filter", "id = = 3").load(path)
    with pytest.raises(Exception, match=r"filter option .* does not apply .*no column 'nope'"):
        spark.read.format("pqbloom").option("filter", "nope = 1").load(path)
    with pytest.raises(Exception, match="does not apply .*cannot compare"):
        spark.read.format("pqbloom").option("filter", "id = 'x'").load(path)


@pytest.fixture(scope="module")
def typed_file(tmp_path_factory):
    """Written by pyarrow: nulls, NaN, both zeros, non-ASCII strings, binary, dates, instants,
    local timestamps, decimals."""
    import datetime as dt
    import decimal

    import pyarrow as pa
    import pyarrow.parquet as pq

    utc = dt.timezone.utc
    D = decimal.Decimal
    t = pa.table({
        "k": pa.array(range(8), pa.int32()),
        "i64": pa.array([10, None, -3, 2**40, 0, 10, 7, None], pa.int64()),
        "f64": pa.array([1.5, float("nan"), -0.0, 0.0, None, 2.5, -1e300, 1.0], pa.float64()),
        "f32": pa.array([0.1, None, float("nan"), 2.0, -2.0, 0.5, 3.25, 0.1], pa.float32()),
        "s": pa.array(["a", "é", None, "ccc", "", "b", "zz", "ab"]),
        "b": pa.array([b"a", b"\x00", None, b"ccc", b"", b"\xff", b"ab", b"a"], pa.binary()),
        "flag": pa.array([True, False, None, True, False, None, True, False]),
        "d": pa.array([dt.date(2020, 1, 1), dt.date(1969, 12, 31), None, dt.date(2000, 2, 29),
                       dt.date(2020, 1, 2), dt.date(1, 1, 1), dt.date(9999, 12, 31), dt.date(2020, 1, 1)],
                      pa.date32()),
        "ts": pa.array([dt.datetime(2024, 5, 6, 7, 8, 9, 123456, tzinfo=utc), None,
                        dt.datetime(1960, 1, 1, tzinfo=utc), dt.datetime(2024, 5, 6, 7, 8, 9, tzinfo=utc),
                        dt.datetime(2024, 5, 6, 7, 8, 10, tzinfo=utc), dt.datetime(2000, 1, 1, tzinfo=utc),
                        dt.datetime(2024, 1, 1, tzinfo=utc), dt.datetime(2023, 12, 31, 23, 59, 59, tzinfo=utc)],
                       pa.timestamp("us", tz="UTC")),
        "ntz": pa.array([dt.datetime(2024, 5, 6, 7, 8, 9), None, dt.datetime(2000, 1, 1),
                         dt.datetime(2024, 5, 6), dt.datetime(1999, 12, 31, 23, 59, 59),
                         dt.datetime(2024, 5, 6, 7, 8, 9), dt.datetime(1970, 1, 1), dt.datetime(2100, 1, 1)],
                        pa.timestamp("us")),
        "dec": pa.array([D("1.23"), None, D("-99999.99"), D("0"), D("1.20"), D("1.24"), D("12.30"), D("-0.01")],
                        pa.decimal128(7, 2)),
    })
    path = tmp_path_factory.mktemp("typed") / "typed.parquet"
    pq.write_table(t, path, row_group_size=3)
    return str(path)


#: filters with the same text and meaning in pqbloom's grammar and in Spark SQL
SAME_TEXT = [
    "i64 = 10", "i64 != 10", "not (i64 = 10)", "i64 in (10, 7)", "i64 > 1099511627775",
    "i64 < 2.5", "i64 = 2.5", "i64 is null", "k >= 3 and k < 6 or i64 is null",
    "f64 = 0", "f64 = 1.5", "f64 < 1.0", "f64 <= 1.5", "f64 != 1.5", "f64 is null", "f64 is not null",
    "f32 = 0.1", "f32 < 1", "f32 in (2.0, 3.25)",
    "s = 'é'", "s > 'b'", "s <= 'ab'", "s = ''", "s in ('a', 'ccc', 'nope')", "s is null", "s != 'a'",
    "flag = true", "flag = false", "flag is null",
    "d = '2020-01-01'", "d < '2000-01-01'", "d >= '2020-01-02'",
    "ts = '2024-05-06 07:08:09'", "ts > '2024-05-06 07:08:09'", "ts < '2000-01-01 00:00:00'",
    "ts >= '2024-01-01'", "ts = '2024-05-06 07:08:09.123456'",
    "ntz = '2024-05-06 07:08:09'", "ntz < '2000-01-01'", "ntz >= '2024-05-06'",
    "dec = 1.23", "dec = 1.2", "dec > 1.2", "dec <= -0.01", "dec in (0, 12.3)",
]


def _planned_rows(path, text):
    """``k`` of the rows the data source returns with the ``filter`` option: the calls Spark makes
    (``schema()`` at load, ``partitions()`` on the planning worker, ``read()`` per task), in-process."""
    from pyspark.sql.types import StructType

    from pqbloom.spark import PqbloomDataSource

    ds = PqbloomDataSource({"path": path, "filter": text})
    reader = ds.reader(StructType.fromDDL(ds.schema()))
    return sorted(k for p in reader.partitions() for b in reader.read(p) for k in b.column("k").to_pylist())


def _spark_answers(df, texts):
    """{filter: sorted k of the rows Spark selects}, every filter in one query."""
    rows = df.selectExpr("k", *[f"coalesce({t}, false) AS p{i}" for i, t in enumerate(texts)]).collect()
    return {t: sorted(r.k for r in rows if r[f"p{i}"]) for i, t in enumerate(texts)}


#: (pqbloom filter, the same rows in Spark SQL)
SAME_ROWS = [
    ("b = 'ab'", "b = X'6162'"),  # pqbloom takes a string literal as its UTF-8 bytes
    ("b < 'a'", "b < X'61'"),
    ("f64 in (nan)", "f64 IN (double('NaN'))"),
    ("f64 != 2.5", "f64 != 2.5"),
]
#: (pqbloom filter, its rows, Spark SQL, Spark's rows): the differences docs/guide/spark.md documents
DIFFERENT = [
    # pqbloom's isin is never null (pyarrow's is_in): a null row matches a listed null and NOT IN
    # keeps null rows; in SQL both are null for a null row, which is not selected
    ("i64 in (10, null)", [0, 1, 5, 7], "i64 in (10, null)", [0, 5]),
    ("i64 not in (10, 7)", [1, 2, 3, 4, 7], "i64 not in (10, 7)", [2, 3, 4]),
    # NaN: IEEE in pqbloom (matches only != and in (nan)); in Spark SQL NaN equals NaN and is
    # larger than every number
    ("f64 = nan", [], "f64 = double('NaN')", [1]),
    ("f64 > 2", [5], "f64 > 2", [1, 5]),
]


def test_filter_option_matches_spark(spark, typed_file):
    native = spark.read.parquet(typed_file)
    through_spark = ["i64 in (10, 7)", "s > 'b'", "ts >= '2024-01-01'", "dec > 1.2 or f64 = 0"]
    texts = SAME_TEXT + through_spark + [t for _, t in SAME_ROWS] + [t for *_, t, _ in DIFFERENT]
    want = _spark_answers(native, texts)
    for text in SAME_TEXT:  # planned and read in-process: the calls Spark's workers make
        assert _planned_rows(typed_file, text) == want[text], text
    for ours, theirs in SAME_ROWS:
        assert _planned_rows(typed_file, ours) == want[theirs], ours
    for ours, ours_rows, theirs, their_rows in DIFFERENT:
        assert (_planned_rows(typed_file, ours), want[theirs]) == (ours_rows, their_rows), ours
    for text in through_spark:  # end to end: load, plan on Spark's worker, read in tasks
        df = spark.read.format("pqbloom").option("filter", text).load(typed_file)
        assert sorted(r.k for r in df.select("k").collect()) == want[text], text


# ---------------------------------------------------------------------------
# a user's own script, with PYSPARK_PYTHON unset
# ---------------------------------------------------------------------------
USER_SCRIPT = textwrap.dedent('''
    import json, os, sys
    from pyspark.sql import SparkSession
    import pqbloom.spark

    def session():
        s = (SparkSession.builder.master("local[1]").appName("pqbloom-user")
             .config("spark.ui.enabled", "false").config("spark.ui.showConsoleProgress", "false")
             .getOrCreate())
        s.sparkContext.setLogLevel("ERROR")
        pqbloom.spark.register(s)
        return s

    out, no_pqbloom = sys.argv[1], sys.argv[2]
    res = {"PYSPARK_PYTHON": os.environ.get("PYSPARK_PYTHON")}
    spark = session()
    res["pythonExec"] = spark.sparkContext.pythonExec
    res["worker"] = spark.sparkContext.parallelize([0], 1).map(
        lambda _: [__import__("sys").executable, __import__("sys").prefix,
                   __import__("os").environ.get("PQBLOOM_TEST_STARTED_AS")]).first()
    spark.range(0, 100).selectExpr("id", "cast(id AS string) AS s").write.format("pqbloom").mode("overwrite").save(out)
    df = spark.read.format("pqbloom").load(out)
    res["counts"] = [df.count(), df.where("id = 7").count(), df.count()]
    spark.stop()
    # PYSPARK_PYTHON is read when a SparkContext starts: the next one's workers lack pqbloom
    os.environ["PYSPARK_PYTHON"] = no_pqbloom
    spark = session()
    try:
        spark.read.format("pqbloom").load(out).count()
        res["error"] = None
    except Exception as exc:
        res["error"] = str(exc)
    spark.stop()
    print("RESULT " + json.dumps(res))
''')


def test_user_script_without_pyspark_python(tmp_path):
    """Spark starts Python workers with ``$PYSPARK_PYTHON``, else ``python3`` from the PATH (not the
    interpreter running the script); they must import pqbloom. A worker that cannot gives a Python
    ``ModuleNotFoundError`` naming pqbloom (in Spark's AnalysisException) at ``load()``.

    The ``python3`` put first on the PATH is a script that runs the test's own interpreter (with its
    environment: a symlink to a virtualenv's python, called from elsewhere, is the base interpreter
    without the virtualenv's packages) and leaves a mark in the environment, so the worker shows it
    was started through it."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    python3 = bin_dir / "python3"
    python3.write_text(f'#!/bin/sh\nPQBLOOM_TEST_STARTED_AS="$0"\nexport PQBLOOM_TEST_STARTED_AS\n'
                       f'exec "{sys.executable}" "$@"\n')
    python3.chmod(0o755)
    block = tmp_path / "block"
    block.mkdir()
    (block / "sitecustomize.py").write_text(textwrap.dedent('''
        import sys

        class _NoPqbloom:  # an interpreter where pqbloom is not installed
            def find_spec(self, name, path=None, target=None):
                if name == "pqbloom" or name.startswith("pqbloom."):
                    raise ModuleNotFoundError(f"No module named {name!r}", name=name)
                return None

        sys.meta_path.insert(0, _NoPqbloom())
    '''))
    no_pqbloom = tmp_path / "python-without-pqbloom"
    no_pqbloom.write_text(f'#!/bin/sh\nPYTHONPATH="{block}:$PYTHONPATH" exec "{sys.executable}" "$@"\n')
    no_pqbloom.chmod(0o755)
    script = tmp_path / "user_script.py"
    script.write_text(USER_SCRIPT)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYSPARK_", "SPARK_"))}
    env["PATH"] = f"{bin_dir}{os.pathsep}{env.get('PATH', '')}"
    env["PYTHONPATH"] = str(ROOT)  # pqbloom importable, as an installed pqbloom is
    proc = subprocess.run([sys.executable, str(script), str(tmp_path / "out"), str(no_pqbloom)],
                          env=env, cwd=tmp_path, capture_output=True, text=True, timeout=600)
    lines = [ln for ln in proc.stdout.splitlines() if ln.startswith("RESULT ")]
    assert proc.returncode == 0 and lines, proc.stdout[-3000:] + proc.stderr[-3000:]
    res = json.loads(lines[-1][len("RESULT "):])
    assert res["PYSPARK_PYTHON"] is None and res["pythonExec"] == "python3"
    # the test's interpreter, in its environment, started as python3 found on the PATH
    assert res["worker"] == [sys.executable, sys.prefix, str(python3)]
    assert res["counts"] == [100, 1, 100]
    assert res["error"] is not None and "PYTHON_DATA_SOURCE_ERROR" in res["error"]
    assert "ModuleNotFoundError: No module named 'pqbloom'" in res["error"]


def test_planning_is_repeatable(spark, typed_file):
    """Spark may plan a reader more than once and pickles it to every task: the plan is a pure
    function of the DataFrame's options and files."""
    import pickle

    from pyspark.sql.types import StructType

    from pqbloom.spark import PqbloomDataSource

    ds = PqbloomDataSource({"path": typed_file, "filter": "k >= 4 and s is not null"})
    reader = ds.reader(StructType.fromDDL(ds.schema()))
    first = [(p.path, p.row_group) for p in reader.partitions()]
    ex = str(reader.explain)
    again = pickle.loads(pickle.dumps(reader))
    assert [(p.path, p.row_group) for p in again.partitions()] == [(p.path, p.row_group) for p in reader.partitions()]
    assert [(p.path, p.row_group) for p in reader.partitions()] == first == [(typed_file, 1), (typed_file, 2)]
    assert str(reader.explain) == ex and reader.explain.row_groups_pruned_statistics == 1
    rows = [k for p in reader.partitions() for b in again.read(p) for k in b.column("k").to_pylist()]
    assert rows == [4, 5, 6, 7]
