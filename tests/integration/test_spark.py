"""Spark / parquet-java as the oracle for pqbloom's Bloom filters and types.

All tests share one local SparkSession (the ``spark`` fixture of tests/conftest.py).
Pruning is asserted with the scan node's ``numOutputRows`` metric: the rows of
the row groups parquet-java did not skip. A filter parquet-java cannot parse
only logs a warning and prunes nothing, so a read that merely succeeds proves
nothing; every test here compares pruning with and without Bloom filtering.
"""

from __future__ import annotations

import datetime as dt
import decimal
from pathlib import Path

import numpy as np
import pytest

import pqbloom
from pqbloom.bloom import BloomFilter, theoretical_fpp
from pqbloom.format import T
from pqbloom.table import int96_to_ns

from .test_peer_bloom import write_tampered_file

pytestmark = pytest.mark.spark

PT = T.Type
PLACEMENTS = ["after_row_group", "end"]
BLOOM_OFF = {"parquet.filter.bloom.enabled": "false"}


def _read(spark, path, options=None):
    r = spark.read
    for k, v in (options or {}).items():
        r = r.option(k, v)
    return r.parquet(str(path))


def _scan(df):
    from interop.spark_support import collect_with_scan_rows

    return collect_with_scan_rows(df)


def _rg_rows(path) -> list[int]:
    md = pqbloom.read_metadata(str(path))
    return [rg.num_rows for rg in md.row_groups()]


def _expected_scan_rows(path, column, value, ptype, type_length=None) -> int:
    """Rows of the row groups whose Bloom filter (read by pqbloom) may contain ``value``."""
    with pqbloom.ParquetFile(str(path)) as pf:
        total = 0
        for rg, n in enumerate(_rg_rows(path)):
            bf = pf.bloom_filter(rg, column)
            if bf is None or bf.might_contain(value, ptype, type_length):
                total += n
        return total


# ---------------------------------------------------------------------------
# pqbloom writes, Spark reads and prunes
# ---------------------------------------------------------------------------

N = 200_000
RG = 50_000


@pytest.fixture(scope="module")
def multi_rg(tmp_path_factory):
    """200k rows in 4 row groups: even int64 ids and distinct emails, both in random order, so every row
    group's min/max spans almost the whole range and statistics cannot prune a value in the middle."""
    rng = np.random.default_rng(2024)
    ids = rng.permutation(np.arange(0, 2 * N, 2, dtype=np.int64))
    keys = rng.permutation(N).astype(np.int64) * 21_000 + rng.integers(0, 20_000, N)
    emails = np.array([f"u{k:08x}@example.com" for k in keys.tolist()])
    d = tmp_path_factory.mktemp("multi_rg")
    paths = {}
    for placement in PLACEMENTS + ["none"]:
        p = d / f"{placement}.parquet"
        bloom = {} if placement == "none" else {"id": True, "email": {"fpp": 0.01, "ndv": RG}}
        pqbloom.write_table({"id": ids, "email": emails}, str(p), row_group_size=RG, use_dictionary=False,
                            bloom_filter_options=bloom,
                            bloom_filter_position="after_row_group" if placement == "none" else placement)
        paths[placement] = p
    assert _rg_rows(paths["end"]) == [RG] * 4
    return {"paths": paths, "ids": ids, "emails": emails, "keys": keys}


def _pick(candidates, path, column, ptype, want_absent: bool):
    """First candidate that pqbloom's filters exclude from every row group (want_absent) or from all but the
    one holding it."""
    with pqbloom.ParquetFile(str(path)) as pf:
        filters = [pf.bloom_filter(i, column) for i in range(pf.num_row_groups)]
    for v in candidates:
        hits = sum(f.might_contain(v, ptype) for f in filters)
        if hits == (0 if want_absent else 1):
            return v
    raise AssertionError("no suitable probe value")


@pytest.mark.parametrize("placement", PLACEMENTS)
def test_spark_reads_pqbloom_file_and_prunes_with_its_filters(spark, multi_rg, placement):
    from pyspark.sql import functions as F

    path = multi_rg["paths"][placement]
    ids, emails = multi_rg["ids"], multi_rg["emails"]
    # every value read back equal
    got = _read(spark, path).toArrow()
    assert got.num_rows == N
    assert np.array_equal(got.column("id").to_numpy(), ids)
    assert got.column("email").to_pylist() == emails.tolist()

    mid = N  # ids span [0, 2N); N is in the middle of every row group's min/max
    absent_id = _pick(range(mid + 1, mid + 4001, 2), path, "id", PT.INT64, want_absent=True)
    present_id = _pick(sorted(ids.tolist(), key=lambda v: abs(v - mid))[:200], path, "id", PT.INT64,
                       want_absent=False)
    for col, absent, present, _ptype in (
        ("id", absent_id, present_id, PT.INT64),
        ("email",
         _pick([f"u{(N // 2 + i) * 21_000 + 20_500:08x}@example.com" for i in range(200)], path, "email",
               PT.BYTE_ARRAY, want_absent=True),
         _pick([str(e) for e in emails[:200]], path, "email", PT.BYTE_ARRAY, want_absent=False),
         PT.BYTE_ARRAY),
    ):
        rows, scanned = _scan(_read(spark, path).where(F.col(col) == absent))
        assert rows == [] and scanned == 0, f"Spark did not prune absent {col}={absent!r} (scanned {scanned})"
        rows, scanned = _scan(_read(spark, path, BLOOM_OFF).where(F.col(col) == absent))
        assert rows == [] and scanned == N, f"without Bloom filtering Spark should scan all rows, got {scanned}"
        rows, scanned = _scan(_read(spark, multi_rg["paths"]["none"]).where(F.col(col) == absent))
        assert rows == [] and scanned == N, "a file without filters must not be pruned"
        rows, scanned = _scan(_read(spark, path).where(F.col(col) == present))
        assert len(rows) == 1 and rows[0][col] == present
        assert scanned == RG, f"Spark should read exactly the row group holding {col}={present!r}"


def test_spark_prunes_with_our_filters_row_group_by_row_group(spark, multi_rg):
    """For many probes, the set of row groups Spark reads equals the set our filters admit."""
    from pyspark.sql import functions as F

    path = multi_rg["paths"]["end"]
    probes = list(range(N - 301, N + 300, 2))[:40] + multi_rg["ids"][:10].tolist()
    cond = None
    for v in probes:
        c = F.col("id") == int(v)
        cond = c if cond is None else cond | c
    # OR of equalities: parquet-java drops a row group only if every disjunct is excluded
    rows, scanned = _scan(_read(spark, path).where(cond))
    with pqbloom.ParquetFile(str(path)) as pf:
        keep = [any(pf.bloom_filter(rg, "id").might_contain(int(v), PT.INT64) for v in probes) for rg in range(4)]
    assert len(rows) == 10
    assert scanned == RG * sum(keep)
    for v in probes[:12]:
        rows, scanned = _scan(_read(spark, path).where(F.col("id") == int(v)))
        assert scanned == _expected_scan_rows(path, "id", int(v), PT.INT64)


@pytest.mark.parametrize("placement", PLACEMENTS)
def test_spark_trusts_a_deliberately_wrong_filter(spark, tmp_path, placement):
    from pyspark.sql import functions as F

    path = tmp_path / "tampered.parquet"
    victim, n = write_tampered_file(path, placement)
    rows, scanned = _scan(_read(spark, path).where(F.col("id") == victim))
    # Spark skipped the row group our forged filter excludes, so it misses a row that is in the data
    assert rows == []
    assert scanned == _expected_scan_rows(path, "id", victim, PT.INT64)
    assert scanned <= n // 2
    rows, scanned = _scan(_read(spark, path, BLOOM_OFF).where(F.col("id") == victim))
    assert [r["id"] for r in rows] == [victim] and scanned == n


# ---------------------------------------------------------------------------
# Spark writes Bloom filters, pqbloom reads them
# ---------------------------------------------------------------------------

def test_pqbloom_reads_spark_written_bloom_filters(spark, tmp_path):
    from interop.spark_support import spark_write_with_bloom

    n = 60_000
    df = spark.range(0, n).selectExpr("id * 3 AS id", "concat('mail-', id, '@spark.example') AS email",
                                      "CAST(id AS DOUBLE) / 4 AS d")
    path = spark_write_with_bloom(df, tmp_path / "out", {"id": 20_000, "email": 20_000}, block_size=512 * 1024)
    expected = _read(spark, path).toArrow()
    with pqbloom.ParquetFile(path) as pf:
        assert pf.num_row_groups >= 3, "parquet.block.size should have cut several row groups"
        got = pf.read()
        assert np.array_equal(got.column("id").to_numpy(), expected.column("id").to_numpy())
        assert got.column("email").to_pylist() == expected.column("email").to_pylist()
        assert np.array_equal(got.column("d").to_numpy(), expected.column("d").to_numpy())
        for rg in range(pf.num_row_groups):
            chunk = pf.read_row_group(rg)
            assert pf.bloom_filter(rg, "d") is None
            for col, ptype, absent in (
                ("id", PT.INT64, chunk.column("id").to_numpy() + 1),
                ("email", PT.BYTE_ARRAY, [e + "!" for e in chunk.column("email").to_pylist()]),
            ):
                values = chunk.column(col).to_numpy() if col == "id" else chunk.column(col).to_pylist()
                bf = pf.bloom_filter(rg, col)
                assert bf is not None, f"no Bloom filter for {col} in row group {rg}"
                assert bf.might_contain_many(values, ptype).all()
                first = values[0].item() if col == "id" else values[0]
                assert bf.might_contain(first, ptype)
                rate = float(bf.might_contain_many(absent, ptype).mean())
                theory = theoretical_fpp(len(values), bf.num_bytes)
                assert rate <= max(3 * theory, 0.01), f"{col} rg {rg}: {rate:.4f} vs {theory:.4f}"
                # parquet-java's bitset is exactly what pqbloom builds from the same values
                mine = BloomFilter(bf.num_bytes)
                mine.insert(values, ptype)
                assert mine == bf


# ---------------------------------------------------------------------------
# Types, both directions
# ---------------------------------------------------------------------------

TYPES_SQL = """
SELECT
  IF(id % 7 = 3, NULL, CAST(id * 7919 - 1000000 AS INT)) AS i,
  IF(id % 7 = 4, NULL, id * 1000000007 - 300000000000) AS l,
  IF(id % 7 = 5, NULL, CAST(id AS DOUBLE) / 7 - 10) AS d,
  IF(id % 11 = 5, NULL, CAST(CAST(id AS FLOAT) / 3 - 50 AS FLOAT)) AS f,
  IF(id % 7 = 6, NULL, concat('s-', id, IF(id % 3 = 0, '-\u00e9\u4e2d', ''))) AS s,
  IF(id % 7 = 0, NULL, CAST(concat('b', id) AS BINARY)) AS bin,
  IF(id % 7 = 1, NULL, date_add(DATE'1950-01-01', CAST(id * 97 AS INT))) AS dt,
  IF(id % 7 = 2, NULL, timestamp_micros(id * 98765432101 - 9000000000000)) AS ts,
  IF(id % 5 = 0, NULL, CAST(id * 12.34 - 3000 AS DECIMAL(9, 2))) AS dec9,
  IF(id % 5 = 1, NULL, CAST(id * 1234567.8912 - 100000 AS DECIMAL(18, 4))) AS dec18,
  IF(id % 5 = 2, NULL, CAST(concat(CAST(id - 300 AS STRING), '123456789012345.', lpad(CAST(id AS STRING), 10, '7'))
                            AS DECIMAL(38, 10))) AS dec38,
  IF(id % 5 = 3, NULL, id % 2 = 0) AS b,
  CAST(NULL AS INT) AS nothing
FROM range(0, 600)
"""
COLS = ["i", "l", "d", "f", "s", "bin", "dt", "ts", "dec9", "dec18", "dec38", "b", "nothing"]


def _norm(v):
    if isinstance(v, bytearray | memoryview):
        return bytes(v)
    return v


def _spark_rows(spark, path, ts_cols=("ts",), ntz_cols=()):
    df = _read(spark, path)
    exprs = []
    for c in df.columns:
        if c in ts_cols:
            exprs.append(f"unix_micros({c}) AS {c}")
        elif c in ntz_cols:
            exprs.append(f"unix_micros(CAST({c} AS TIMESTAMP)) AS {c}")
        else:
            exprs.append(c)
    return {c: [_norm(r[c]) for r in df.selectExpr(*exprs).collect()] for c in df.columns}


def _pqbloom_rows(path):
    """Column -> python values as Spark returns them (timestamps as epoch microseconds)."""
    t = pqbloom.read_table(str(path))
    out = {}
    for c in t.columns:
        f = c.field
        lt = f.logical_type
        if f.physical_type == PT.INT96:
            vals = (int96_to_ns(c.values, c.mask) // 1000).tolist()  # null slots hold no timestamp
        elif lt is not None and lt.kind == "TIMESTAMP":
            vals = (c.values.astype(np.int64) * {"ms": 1000, "us": 1, "ns": 0}[lt.unit]).tolist()
            assert lt.unit != "ns"
        else:
            out[f.name] = [_norm(v) for v in c.to_pylist()]
            continue
        if c.mask is not None:
            vals = [None if m else v for v, m in zip(vals, c.mask.tolist())]
        out[f.name] = vals
    return out


@pytest.mark.parametrize("ts_type", ["INT96", "TIMESTAMP_MICROS", "TIMESTAMP_MILLIS"])
def test_pqbloom_reads_spark_types(spark, tmp_path, ts_type):
    from interop.spark_support import spark_write_with_bloom

    old = spark.conf.get("spark.sql.parquet.outputTimestampType")
    spark.conf.set("spark.sql.parquet.outputTimestampType", ts_type)
    try:
        df = spark.sql(TYPES_SQL)
        if ts_type == "TIMESTAMP_MILLIS":
            df = df.selectExpr(*[c if c != "ts" else "timestamp_millis(unix_millis(ts)) AS ts" for c in COLS])
        path = spark_write_with_bloom(df, tmp_path / "types")
    finally:
        spark.conf.set("spark.sql.parquet.outputTimestampType", old)
    schema = {f.name: f for f in pqbloom.read_schema(path).fields}
    assert schema["ts"].physical_type == (PT.INT96 if ts_type == "INT96" else PT.INT64)
    if ts_type != "INT96":
        assert schema["ts"].logical_type.kind == "TIMESTAMP"
        assert schema["ts"].logical_type.unit == ("us" if ts_type == "TIMESTAMP_MICROS" else "ms")
    assert schema["dec9"].physical_type == PT.INT32
    assert schema["dec18"].physical_type == PT.INT64
    assert schema["dec38"].physical_type == PT.FIXED_LEN_BYTE_ARRAY
    theirs = _spark_rows(spark, path)
    ours = _pqbloom_rows(path)
    assert list(ours) == COLS
    for c in COLS:
        assert ours[c] == theirs[c], f"column {c} differs"
    assert theirs["s"][3].endswith("-\u00e9\u4e2d") and theirs["nothing"] == [None] * 600
    assert theirs["dec38"][0] == decimal.Decimal("-300123456789012345.7777777770")


PQ_SCHEMA = {
    "i": "int32", "l": "int64", "d": "double", "f": "float", "s": "string", "bin": "binary", "dt": "date",
    "ts": "timestamp[us, UTC]", "ts_ms": "timestamp[ms, UTC]", "ts96": "int96", "ntz": "timestamp[us]",
    "dec9": "decimal(9, 2)", "dec18": "decimal(18, 4)", "dec38": "decimal(38, 10)",
    "decbin": "decimal(20, 3) as binary", "b": "bool", "nothing": "int32",
}
BLOOM_COLS = ["i", "l", "d", "f", "s", "bin", "dt", "ts", "ts_ms", "ntz", "dec9", "dec18", "dec38", "decbin"]


@pytest.fixture(scope="module")
def typed_file(spark, tmp_path_factory):
    """Spark's own values of every type, written by pqbloom in shuffled order (so both row groups span the
    whole range) with a Bloom filter on every column Spark can push an equality into."""
    rows = spark.sql(TYPES_SQL).selectExpr(
        *[c if c != "ts" else "unix_micros(ts) AS ts" for c in COLS]).collect()
    n = len(rows)
    order = np.random.default_rng(11).permutation(n).tolist()
    data = {c: [_norm(rows[k][c]) for k in order] for c in COLS}
    data["ts_ms"] = [None if v is None else v // 1000 for v in data["ts"]]
    data["ts96"] = [None if v is None else v * 1000 for v in data["ts"]]  # nanoseconds
    data["ntz"] = [None if v is None else v + 7 for v in data["ts"]]
    data["decbin"] = [None if v is None else decimal.Decimal(v).quantize(decimal.Decimal("0.001"))
                      for v in data["dec9"]]
    data = {c: data[c] for c in PQ_SCHEMA}
    path = tmp_path_factory.mktemp("typed") / "typed.parquet"
    pqbloom.write_table(data, str(path), schema=pqbloom.Schema.from_types(PQ_SCHEMA), row_group_size=300,
                        use_dictionary=False, bloom_filter_options={c: True for c in BLOOM_COLS})
    return path, data


def test_spark_reads_pqbloom_types(spark, typed_file):
    path, data = typed_file
    df = _read(spark, path)
    types = dict(df.dtypes)
    assert types["ts"] == "timestamp" and types["ts96"] == "timestamp" and types["ts_ms"] == "timestamp"
    assert types["ntz"] == "timestamp_ntz"
    assert types["dec38"] == "decimal(38,10)" and types["decbin"] == "decimal(20,3)"
    theirs = _spark_rows(spark, path, ts_cols=("ts", "ts_ms", "ts96"), ntz_cols=("ntz",))
    expected = dict(data)
    expected["ts_ms"] = [None if v is None else v * 1000 for v in data["ts_ms"]]
    expected["ts96"] = [None if v is None else v // 1000 for v in data["ts96"]]
    for c in PQ_SCHEMA:
        assert theirs[c] == expected[c], f"Spark reads column {c} differently"


def test_spark_reads_pqbloom_small_binary_decimal_row_based(spark, tmp_path):
    """DECIMAL(p <= 18) on BYTE_ARRAY is valid Parquet, but Spark 4.3's *vectorized* reader fails on it
    (NullPointerException in BinaryToDecimalUpdater -> putByteArray into a long-backed vector). Its
    row-based parquet-java reader is the oracle here."""
    vals = [decimal.Decimal("1.234"), None, decimal.Decimal("-99999.001"), decimal.Decimal("999999999.999")]
    path = tmp_path / "decbin.parquet"
    pqbloom.write_table({"x": vals}, str(path), schema=pqbloom.Schema.from_types({"x": "decimal(12, 3) as binary"}))
    old = spark.conf.get("spark.sql.parquet.enableVectorizedReader")
    spark.conf.set("spark.sql.parquet.enableVectorizedReader", "false")
    try:
        assert [r["x"] for r in _read(spark, path).collect()] == vals
    finally:
        spark.conf.set("spark.sql.parquet.enableVectorizedReader", old)


def _lit(col, v):
    from pyspark.sql import functions as F

    typ = {"i": "int", "f": "float", "dec9": "decimal(9,2)", "dec18": "decimal(18,4)", "dec38": "decimal(38,10)",
           "decbin": "decimal(20,3)", "dt": "date"}.get(col)
    if col == "ts":
        return F.expr(f"timestamp_micros({int(v)})")
    if col == "ts_ms":  # stored in milliseconds
        return F.expr(f"timestamp_millis({int(v)})")
    if col == "ntz":
        return F.expr(f"CAST(timestamp_micros({int(v)}) AS TIMESTAMP_NTZ)")
    if col == "bin":
        return F.lit(bytearray(v))
    lit = F.lit(v)
    return lit.cast(typ) if typ else lit


def _absent_value(col, v):
    return {
        "i": lambda x: x + 1, "l": lambda x: x + 1, "d": lambda x: x + 1e-6,
        "f": lambda x: float(np.float32(x) + np.float32(0.125)),
        "s": lambda x: x + "~", "bin": lambda x: x + b"~", "dt": lambda x: x + dt.timedelta(days=1),
        "ts": lambda x: x + 1, "ts_ms": lambda x: x + 1, "ntz": lambda x: x + 1,  # ts_ms: the next millisecond
        "dec9": lambda x: x + decimal.Decimal("0.01"), "dec18": lambda x: x + decimal.Decimal("0.0001"),
        "dec38": lambda x: x + decimal.Decimal("1e-10"), "decbin": lambda x: x + decimal.Decimal("0.001"),
    }[col](v)


def _physical(col, v):
    """The Parquet physical value pqbloom hashes for a Python value of this column."""
    if col in ("dec9", "dec18", "dec38", "decbin", "dt"):
        t = pqbloom.Table.from_pydict({col: [v]}, schema={col: PQ_SCHEMA[col]})
        c = t.column(col)
        raw = c.values
        if col == "decbin":
            return raw.to_pylist()[0], PT.BYTE_ARRAY, None
        if col == "dec38":
            return bytes(np.asarray(raw)[0]), PT.FIXED_LEN_BYTE_ARRAY, 16
        return raw[0].item(), c.field.physical_type, None
    ptype = {"i": PT.INT32, "l": PT.INT64, "d": PT.DOUBLE, "f": PT.FLOAT, "s": PT.BYTE_ARRAY, "bin": PT.BYTE_ARRAY,
             "ts": PT.INT64, "ts_ms": PT.INT64, "ntz": PT.INT64}[col]
    return v, ptype, None


# Spark 4.3's ParquetFilters converts no predicate on TIMESTAMP(isAdjustedToUTC=false) ("ntz") nor on a
# DECIMAL stored as BYTE_ARRAY ("decbin"): parquet-java never sees one, so no Bloom filter can be used.
SPARK_PUSHABLE = [c for c in BLOOM_COLS if c not in ("ntz", "decbin")]


@pytest.mark.parametrize("col", SPARK_PUSHABLE)
def test_spark_prunes_pqbloom_filters_of_every_type(spark, typed_file, col):
    from pyspark.sql import functions as F

    path, data = typed_file
    n = len(data[col])
    values = [v for v in data[col] if v is not None]
    present = values[len(values) // 2]
    present_set = set(values)
    absent = None
    for b in sorted(values)[len(values) // 2 - 20:len(values) // 2 + 20]:  # well inside every min/max
        cand = _absent_value(col, b)
        if cand not in present_set and _expected_scan_rows(path, col, *_physical(col, cand)) == 0:
            absent = cand
            break
    assert absent is not None

    def q(v, opts=None):
        return _scan(_read(spark, path, opts).where(F.col(col) == _lit(col, v)))

    rows, scanned = q(absent, BLOOM_OFF)
    assert rows == [] and scanned == n, f"{col}: statistics alone prune {absent!r}? scanned {scanned}"
    rows, scanned = q(absent)
    assert rows == [] and scanned == 0, f"{col}: Spark did not use our Bloom filter (scanned {scanned} rows)"
    rows, scanned = q(present)
    assert len(rows) == data[col].count(present) >= 1
    assert scanned == _expected_scan_rows(path, col, *_physical(col, present))


def test_spark_kms_encryption_round_trip(spark, tmp_path):
    """The session's crypto factory and our compiled KMS work: Spark writes and reads an encrypted file."""
    out = tmp_path / "enc"
    df = spark.range(0, 1000).selectExpr("id", "concat('x', id) AS email")
    (df.coalesce(1).write.mode("overwrite")
     .option("parquet.encryption.footer.key", "keyA")
     .option("parquet.encryption.column.keys", "keyB:email")
     .parquet(str(out)))
    part = next(Path(out).glob("part-*.parquet"))
    assert part.read_bytes()[:4] == b"PARE"
    assert sorted(r["id"] for r in _read(spark, out).collect()) == list(range(1000))
