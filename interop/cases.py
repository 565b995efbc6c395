"""The interop matrix's features: datasets, per-writer options, declared peer limitations.

Every value a case writes is *canonical*: one Python value per cell that every
reader's output is normalised to before comparing (see :func:`canon_arrow` and
:func:`canon_pqbloom`):

========== ===================================================================
kind       canonical value
========== ===================================================================
int, uint  int
float      float (a float32 column holds exactly representable values)
float16    float
str        str
bytes      bytes (also FIXED_LEN_BYTE_ARRAY)
uuid       the 16 bytes
date       days since 1970-01-01 (int)
ts, ntz    nanoseconds since the epoch (int); ``ts`` is UTC-adjusted
int96      nanoseconds since the epoch (whole microseconds, as Spark/DuckDB read µs)
time       nanoseconds since midnight (int)
decimal    decimal.Decimal
bool       bool
========== ===================================================================

``None`` is null everywhere. Nothing in here imports pyspark or duckdb.
"""

from __future__ import annotations

import datetime as _dt
import decimal
import math
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

WRITERS = ("pqbloom", "pyarrow", "spark", "duckdb")
READERS = ("pqbloom", "pyarrow", "spark", "duckdb")
PEERS = ("pyarrow", "spark", "duckdb")

UNIT_NS = {"ms": 1_000_000, "us": 1_000, "ns": 1}


# ---------------------------------------------------------------------------------------------
# columns


@dataclass(frozen=True)
class Col:
    name: str
    pq: str  # pqbloom type string (pqbloom.Schema.from_types)
    kind: str  # canonical kind, see the module docstring
    unit: str | None = None  # ts / ntz / time: the column's unit
    nullable: bool = True
    spark_cast: str | None = None  # Spark SQL type to cast to after createDataFrame (e.g. timestamp_ntz)
    duckdb_cast: str | None = None  # DuckDB SQL type to cast to before COPY


def _with_nulls(rng: np.random.Generator, values: list[Any], rate: float) -> list[Any]:
    if rate <= 0:
        return values
    mask = rng.random(len(values)) < rate
    return [None if m else v for v, m in zip(values, mask.tolist())]


def gen_values(col: Col, n: int, rng: np.random.Generator, null_rate: float = 0.1) -> list[Any]:
    """Canonical values for one column, edge cases first, then random ones."""
    k = col.kind
    rate = null_rate if col.nullable else 0.0
    if k in ("int", "uint"):
        bits = int(col.pq.lstrip("u").replace("int", ""))
        lo, hi = (0, 2**bits - 1) if k == "uint" else (-(2 ** (bits - 1)), 2 ** (bits - 1) - 1)
        edges = [lo, hi, 0, 1, lo + 1, hi - 1]
        if bits <= 16:
            body = rng.integers(lo, hi + 1, n).tolist()
        else:  # the whole range, not just small numbers
            body = [int(x) for x in rng.integers(0, 2**62, n, dtype=np.int64)]
            body = [lo + (x * (hi - lo) // (2**62)) for x in body]
        vals = edges + body[: n - len(edges)]
    elif k == "float":
        f32 = col.pq in ("float", "float32")
        edges = [math.nan, math.inf, -math.inf, -0.0, 0.0, 1.5, -2.25]
        body = rng.normal(0, 1e6, n).astype(np.float32 if f32 else np.float64).tolist()
        vals = edges + body[: n - len(edges)]
    elif k == "float16":
        edges = [math.nan, math.inf, -math.inf, -0.0, 0.0, 65504.0, -65504.0, 6.103515625e-05]
        body = rng.normal(0, 100, n).astype(np.float16).astype(float).tolist()
        vals = edges + body[: n - len(edges)]
    elif k == "str":
        pool = ["", "a", "\u00e9", "\u4e2d\u6587", "\U0001f600 emoji", "tab\tand\nnewline", "x" * 300]
        accent = "\u00e9"
        vals = pool + [f"s{int(x):09d}-{accent if x % 3 == 0 else 'z'}" for x in rng.integers(0, 10**9, n)]
        vals = vals[:n]
    elif k == "bytes" and col.pq.startswith("fixed"):
        width = int(col.pq[6:-1])
        vals = [bytes(width), b"\xff" * width] + [rng.bytes(width) for _ in range(n - 2)]
    elif k == "bytes":
        vals = [b"", b"\x00", b"\x00\xff\x00"] + [rng.bytes(int(x)) for x in rng.integers(0, 40, n - 3)]
    elif k == "uuid":
        vals = [bytes(16), b"\xff" * 16] + [uuid.UUID(bytes=rng.bytes(16), version=4).bytes for _ in range(n - 2)]
    elif k == "date":
        vals = [0, -1, -719162, 2932896] + rng.integers(-30000, 60000, n - 4).tolist()  # 0001-01-01 .. 9999-12-31
    elif k in ("ts", "ntz", "int96"):
        unit = "us" if k == "int96" else (col.unit or "us")
        step = UNIT_NS[unit]
        span = 4_000_000_000 * 1_000_000_000 // step  # about +-127 years
        ticks = [0, -1, 1] + rng.integers(-span, span, n - 3).tolist()
        vals = [t * step for t in ticks]
    elif k == "time":
        step = UNIT_NS[col.unit or "us"]
        day = 86_400 * 1_000_000_000 // step
        vals = [t * step for t in [0, day - 1] + rng.integers(0, day, n - 2).tolist()]
    elif k == "decimal":
        prec, scale = (int(x) for x in col.pq[col.pq.index("(") + 1:col.pq.index(")")].split(","))
        top = 10**prec - 1
        edges = [top, -top, 0, 1, -1]
        body = [int(x) for x in rng.integers(-(2**62), 2**62, n, dtype=np.int64)]
        body = [b * top // (2**62) for b in body]
        ctx = decimal.Context(prec=60)
        vals = [decimal.Decimal(v).scaleb(-scale, context=ctx) for v in (edges + body)[:n]]
    elif k == "bool":
        vals = (rng.random(n) < 0.4).tolist()
    else:  # pragma: no cover
        raise ValueError(f"unknown kind {k}")
    return _with_nulls(rng, vals[:n], rate)


# ---------------------------------------------------------------------------------------------
# cases


@dataclass
class Bloom:
    """Bloom filter expectations: columns with filters; probes are generated by ``absent``."""

    columns: tuple[str, ...]
    placement: str = "end"  # where pqbloom writes them: "after_row_group" or "end"


@dataclass
class Encryption:
    algorithm: str = "AES_GCM_V1"
    plaintext_footer: bool = False
    uniform: bool = False
    double_wrapping: bool = True
    internal_key_material: bool = True
    footer_key: str = "keyA"
    column_keys: dict[str, list[str]] = field(default_factory=lambda: {"keyB": ["s"], "keyC": ["d"]})


@dataclass
class Case:
    id: str
    group: str
    title: str
    columns: list[Col]
    n: int = 2500
    row_group: int = 1024
    seed: int = 0
    data_fn: Callable[[Case], dict[str, list[Any]]] | None = None
    pqbloom_opts: dict[str, Any] = field(default_factory=dict)
    pyarrow_opts: dict[str, Any] = field(default_factory=dict)
    spark_opts: dict[str, str] = field(default_factory=dict)
    spark_conf: dict[str, str] = field(default_factory=dict)  # session conf around the write
    duckdb_opts: str = ""  # extra COPY options
    writer_limits: dict[str, str] = field(default_factory=dict)
    reader_limits: dict[str, str] = field(default_factory=dict)
    expect: dict[str, Any] = field(default_factory=dict)  # what the written file must show (verify_written)
    bloom: Bloom | None = None
    page_index: str | None = None  # sorted column whose page index is checked
    stats: tuple[str, ...] = ()
    encryption: Encryption | None = None

    def data(self) -> dict[str, list[Any]]:
        if self.data_fn is not None:
            full = self.data_fn(self)
            return {c.name: full[c.name] for c in self.columns}
        rng = np.random.default_rng(self.seed)
        return {c.name: gen_values(c, self.n, rng) for c in self.columns}


# limitations that recur ----------------------------------------------------------------------
SPARK_NO_UNSIGNED = "Spark SQL has no unsigned integer types to write"
SPARK_TIME = "Spark 4.3 rejects Parquet TIME (UNSUPPORTED_TIME_TYPE / PARQUET_TYPE_ILLEGAL)"
SPARK_NANOS = "Spark 4.3 rejects TIMESTAMP(NANOS) (PARQUET_TYPE_ILLEGAL) unless read as plain longs"
SPARK_UUID = "Spark 4.3 rejects FIXED_LEN_BYTE_ARRAY (UUID) (PARQUET_TYPE_ILLEGAL)"
SPARK_F16 = "Spark 4.3 rejects FIXED_LEN_BYTE_ARRAY (FLOAT16) (PARQUET_TYPE_ILLEGAL)"
SPARK_NO_FIXED = "Spark SQL has no fixed-size binary type (writes BINARY)"
DUCK_NO_FIXED = "DuckDB has no fixed-size binary type (writes BYTE_ARRAY)"
DUCK_F16 = "DuckDB cannot import an Arrow float16 column, has no half-float type to write"
DUCK_NO_MS = "DuckDB writes TIME/TIMESTAMP with millisecond unit as MICROS"
DUCK_ENC = ("DuckDB's Parquet encryption is not Parquet Modular Encryption as specified (empty AAD, "
            "footer key only, no KMS key metadata): not interoperable")
PA_NO_ENC_BLOOM = "pyarrow refuses to write Bloom filters when encryption is on"
PA_NO_BLOOM_PRUNE = ("pyarrow has no Bloom filter probe API and does not prune with Bloom filters "
                     "(values read, bloom_filter_offset/length reported)")
PA_NO_PAGE_PRUNE = ("pyarrow reports has_column_index/has_offset_index but exposes no page-index pruning "
                    "(values read)")
DUCK_NO_V2_PAGES = ("DuckDB writes DataPage v1 headers only (PARQUET_VERSION V2 switches the encodings, "
                    "see encodings:delta-bss)")
DUCK_NO_PAGE_INDEX_W = "DuckDB writes no page index (ColumnIndex/OffsetIndex)"
DUCK_NO_PAGE_INDEX_R = "DuckDB does not use the page index, it prunes by row-group statistics only (values read)"
BLOOM_END_ONLY = "{peer} writes all Bloom filters at the end of the file, never right after each row group"


def _c(name: str, pq: str, kind: str, unit: str | None = None, **kw: Any) -> Col:
    return Col(name, pq, kind, unit, **kw)


def _type_cases() -> list[Case]:
    cases = [
        Case("types:int", "types", "INT8/16/32/64 signed", [
            _c("i8", "int8", "int"), _c("i16", "int16", "int"), _c("i32", "int32", "int"),
            _c("i64", "int64", "int")]),
        Case("types:uint", "types", "UINT8/16/32/64", [
            _c("u8", "uint8", "uint"), _c("u16", "uint16", "uint"), _c("u32", "uint32", "uint"),
            _c("u64", "uint64", "uint")], writer_limits={"spark": SPARK_NO_UNSIGNED}),
        Case("types:float", "types", "FLOAT, DOUBLE (NaN, +-inf, -0.0)", [
            _c("f32", "float", "float"), _c("f64", "double", "float")]),
        Case("types:float16", "types", "FLOAT16", [_c("h", "float16", "float16")],
             writer_limits={"spark": SPARK_F16, "duckdb": DUCK_F16}, reader_limits={"spark": SPARK_F16}),
        Case("types:string-binary", "types", "STRING (UTF-8), BINARY", [
            _c("s", "string", "str"), _c("b", "binary", "bytes")]),
        Case("types:fixed", "types", "FIXED_LEN_BYTE_ARRAY(5)", [_c("fx", "fixed[5]", "bytes")],
             writer_limits={"spark": SPARK_NO_FIXED, "duckdb": DUCK_NO_FIXED}),
        Case("types:uuid", "types", "UUID", [_c("u", "uuid", "uuid")],
             writer_limits={"spark": SPARK_UUID}, reader_limits={"spark": SPARK_UUID}),
        Case("types:date", "types", "DATE", [_c("dt", "date", "date")]),
        Case("types:timestamp-us", "types", "TIMESTAMP(MICROS) UTC and local", [
            _c("ts", "timestamp[us, UTC]", "ts", "us"),
            _c("ntz", "timestamp[us]", "ntz", "us", spark_cast="timestamp_ntz", duckdb_cast="TIMESTAMP")],
            spark_conf={"spark.sql.parquet.outputTimestampType": "TIMESTAMP_MICROS"}),
        Case("types:timestamp-ms", "types", "TIMESTAMP(MILLIS) UTC", [_c("ts", "timestamp[ms, UTC]", "ts", "ms")],
             spark_conf={"spark.sql.parquet.outputTimestampType": "TIMESTAMP_MILLIS"},
             writer_limits={"duckdb": DUCK_NO_MS}),
        Case("types:timestamp-ns", "types", "TIMESTAMP(NANOS) UTC and local", [
            _c("ts", "timestamp[ns, UTC]", "ts", "ns"), _c("ntz", "timestamp[ns]", "ntz", "ns")],
            writer_limits={"spark": SPARK_NANOS}, reader_limits={"spark": SPARK_NANOS}),
        Case("types:int96", "types", "INT96 timestamps (legacy)", [_c("t96", "int96", "int96")],
             spark_conf={"spark.sql.parquet.outputTimestampType": "INT96"},
             pyarrow_opts={"use_deprecated_int96_timestamps": True},
             duckdb_opts="WRITE_TIMESTAMP_AS_INT96 true"),
        Case("types:time-us", "types", "TIME(MICROS)", [_c("t", "time[us]", "time", "us")],
             writer_limits={"spark": SPARK_TIME}, reader_limits={"spark": SPARK_TIME}),
        Case("types:time-ms-ns", "types", "TIME(MILLIS), TIME(NANOS)", [
            _c("tms", "time[ms]", "time", "ms"), _c("tns", "time[ns]", "time", "ns")],
            writer_limits={"spark": SPARK_TIME, "duckdb": DUCK_NO_MS}, reader_limits={"spark": SPARK_TIME}),
        Case("types:decimal", "types", "DECIMAL on INT32, INT64, FIXED_LEN_BYTE_ARRAY", [
            _c("d9", "decimal(9, 2)", "decimal"), _c("d18", "decimal(18, 4)", "decimal"),
            _c("d38", "decimal(38, 10)", "decimal")],
            pyarrow_opts={"store_decimal_as_integer": True}),
        Case("types:decimal-binary", "types", "DECIMAL on BYTE_ARRAY", [
            _c("db", "decimal(20, 3) as binary", "decimal")],
            writer_limits={"pyarrow": "pyarrow writes DECIMAL only as INT32/INT64/FIXED_LEN_BYTE_ARRAY",
                           "spark": "Spark writes DECIMAL only as INT32/INT64/FIXED_LEN_BYTE_ARRAY",
                           "duckdb": "DuckDB writes DECIMAL only as INT32/INT64/FIXED_LEN_BYTE_ARRAY"}),
        Case("types:boolean", "types", "BOOLEAN", [_c("flag", "bool", "bool")]),
        Case("types:nulls", "types", "all-null, mostly-null, required columns", [
            _c("allnull", "int32", "int"), _c("sparse", "string", "str"),
            _c("req", "int64", "int", nullable=False), _c("reqs", "string", "str", nullable=False)],
            data_fn=_nulls_data),
    ]
    for c in cases:
        c.expect.setdefault("types", {col.name: col.pq for col in c.columns})
    return cases


def _nulls_data(case: Case) -> dict[str, list[Any]]:
    rng = np.random.default_rng(case.seed)
    n = case.n
    return {
        "allnull": [None] * n,
        "sparse": [f"v{i}" if rng.random() < 0.02 else None for i in range(n)],
        "req": rng.integers(-(10**12), 10**12, n).tolist(),
        "reqs": [f"r{int(x)}" for x in rng.integers(0, 10**6, n)],
    }


# one mixed dataset for codecs / dictionary / page versions / encodings ------------------------
MIXED = [_c("id", "int64", "int"), _c("s", "string", "str"), _c("d", "double", "float"),
         _c("cat", "string", "str"), _c("i32", "int32", "int")]


def _mixed_data(case: Case) -> dict[str, list[Any]]:
    rng = np.random.default_rng(case.seed)
    n = case.n
    ids = rng.permutation(n).astype(np.int64) * 7 - 1000
    return {
        "id": ids.tolist(),
        "s": _with_nulls(rng, [f"str-{int(x):06d}" for x in rng.integers(0, 10**6, n)], 0.05),
        "d": _with_nulls(rng, rng.normal(0, 1000, n).tolist(), 0.05),
        "cat": [["red", "green", "blue", "cyan", None][int(x)] for x in rng.integers(0, 5, n)],
        "i32": rng.integers(-50, 50, n).tolist(),
    }


CODECS = {  # case suffix -> (pqbloom / pyarrow name, Spark name, DuckDB name, Thrift codec name)
    "uncompressed": ("none", "none", "uncompressed", "UNCOMPRESSED"),
    "snappy": ("snappy", "snappy", "snappy", "SNAPPY"),
    "gzip": ("gzip", "gzip", "gzip", "GZIP"),
    "zstd": ("zstd", "zstd", "zstd", "ZSTD"),
    "lz4_raw": ("lz4_raw", "lz4_raw", "lz4_raw", "LZ4_RAW"),
    "brotli": ("brotli", "brotli", "brotli", "BROTLI"),
}
SPARK_NO_BROTLI = ("Spark 4.3 ships no Brotli codec for parquet-java "
                   "(ClassNotFoundException: org.apache.hadoop.io.compress.BrotliCodec)")


def _layout_cases() -> list[Case]:
    cases = []
    for name, (ours, spark, duck, thrift) in CODECS.items():
        lim_w = {"spark": SPARK_NO_BROTLI} if name == "brotli" else {}
        lim_r = {"spark": SPARK_NO_BROTLI} if name == "brotli" else {}
        cases.append(Case(
            f"codec:{name}", "codecs", f"{thrift} pages", MIXED, data_fn=_mixed_data,
            pqbloom_opts={"compression": ours}, pyarrow_opts={"compression": ours},
            spark_opts={"compression": spark}, duckdb_opts=f"COMPRESSION {duck}",
            writer_limits=lim_w, reader_limits=lim_r, expect={"codec": thrift}))
    cases.append(Case(
        "codec:lz4-hadoop", "codecs", "LZ4 (deprecated Hadoop-framed codec)", MIXED, data_fn=_mixed_data,
        spark_opts={"compression": "lz4"}, expect={"codec": "LZ4"},
        writer_limits={"pqbloom": "n/a: the deprecated LZ4 codec is read-only in pqbloom (it writes LZ4_RAW)",
                       "pyarrow": "pyarrow writes LZ4_RAW for 'lz4' (no Hadoop-framed LZ4 writer)",
                       "duckdb": "DuckDB writes LZ4_RAW for 'lz4'"}))
    for on in (True, False):
        cases.append(Case(
            f"dictionary:{'on' if on else 'off'}", "encodings", f"dictionary encoding {'on' if on else 'off'}",
            MIXED, data_fn=_mixed_data,
            pqbloom_opts={"use_dictionary": on}, pyarrow_opts={"use_dictionary": on},
            spark_opts={"parquet.enable.dictionary": str(on).lower()},
            duckdb_opts="" if on else "DICTIONARY_SIZE_LIMIT 1, STRING_DICTIONARY_PAGE_SIZE_LIMIT 1",
            expect={"dictionary": on}))
    for v in ("1.0", "2.0"):
        cases.append(Case(
            f"pages:v{v[0]}", "encodings", f"data pages {'v1' if v == '1.0' else 'v2'}", MIXED,
            data_fn=_mixed_data,
            pqbloom_opts={"data_page_version": v}, pyarrow_opts={"data_page_version": v},
            spark_opts={"parquet.writer.version": "v1" if v == "1.0" else "v2"},
            duckdb_opts=f"PARQUET_VERSION {'V1' if v == '1.0' else 'V2'}",
            writer_limits={} if v == "1.0" else {"duckdb": DUCK_NO_V2_PAGES},
            expect={"page_version": v}))
    enc = {"id": "DELTA_BINARY_PACKED", "s": "DELTA_BYTE_ARRAY", "cat": "DELTA_LENGTH_BYTE_ARRAY",
           "d": "BYTE_STREAM_SPLIT", "i32": "DELTA_BINARY_PACKED"}
    cases.append(Case(
        "encodings:delta-bss", "encodings", "DELTA_BINARY_PACKED, DELTA_(LENGTH_)BYTE_ARRAY, BYTE_STREAM_SPLIT",
        MIXED, data_fn=_mixed_data,
        pqbloom_opts={"use_dictionary": False, "column_encoding": enc, "data_page_version": "2.0"},
        pyarrow_opts={"use_dictionary": False, "column_encoding": enc, "data_page_version": "2.0"},
        spark_opts={"parquet.writer.version": "v2", "parquet.enable.dictionary": "false"},
        duckdb_opts="PARQUET_VERSION V2, DICTIONARY_SIZE_LIMIT 1, STRING_DICTIONARY_PAGE_SIZE_LIMIT 1",
        expect={"encodings": enc}))
    return cases


# Bloom filters / page index / statistics ------------------------------------------------------
BLOOM_COLS = [_c("id", "int64", "int"), _c("i32", "int32", "int"), _c("s", "string", "str"),
              _c("d", "double", "float")]
BLOOM_N = 6000


def bloom_data(case: Case) -> dict[str, list[Any]]:
    """Even ids in random order: every row group's min/max spans the range, odd ids are absent."""
    rng = np.random.default_rng(case.seed + 17)
    ids = rng.permutation(np.arange(0, 2 * case.n, 2, dtype=np.int64)).tolist()
    return {
        "id": ids,
        "i32": [x // 2 * 3 - 5000 for x in ids],
        "s": [f"k{x:08d}" for x in ids],
        "d": [x / 4 for x in ids],
    }


def bloom_absent(column: str, n: int, count: int, seed: int = 99) -> list[Any]:
    """Values inside every row group's min/max that ``bloom_data`` never writes."""
    rng = np.random.default_rng(seed)
    odd = [int(x) * 2 + 1 for x in rng.integers(n // 4, 3 * n // 4, count)]
    out: dict[str, list[Any]] = {
        "id": odd,
        "i32": [x // 2 * 3 - 5000 + 1 for x in odd],
        "s": [f"k{x:08d}" for x in odd],
        "d": [x / 4 for x in odd],
    }
    return out[column]


def sorted_data(case: Case) -> dict[str, list[Any]]:
    """Sorted ids and strings (page and row-group ranges are disjoint), random doubles with nulls."""
    rng = np.random.default_rng(case.seed + 5)
    n = case.n
    return {
        "id": [3 * i for i in range(n)],
        "s": [f"s{i:07d}" for i in range(n)],
        "d": _with_nulls(rng, rng.normal(0, 100, n).tolist(), 0.1),
    }


SORTED_COLS = [_c("id", "int64", "int"), _c("s", "string", "str"), _c("d", "double", "float")]


def _index_cases() -> list[Case]:
    cases = []
    for placement in ("after_row_group", "end"):
        lim = {p: BLOOM_END_ONLY.format(peer=name) for p, name in
               (("pyarrow", "pyarrow"), ("spark", "parquet-java"), ("duckdb", "DuckDB"))} \
            if placement == "after_row_group" else {}
        cases.append(Case(
            f"bloom:{placement}", "bloom", f"Bloom filters ({placement.replace('_', ' ')})", BLOOM_COLS,
            n=BLOOM_N, row_group=2048, data_fn=bloom_data,
            pqbloom_opts={"bloom_filter_options": {c.name: True for c in BLOOM_COLS},
                          "bloom_filter_position": placement, "use_dictionary": False},
            pyarrow_opts={"bloom_filter_options": {c.name: {"ndv": 2048, "fpp": 0.01} for c in BLOOM_COLS},
                          "use_dictionary": False},
            duckdb_opts="DICTIONARY_SIZE_LIMIT 100000, STRING_DICTIONARY_PAGE_SIZE_LIMIT 1000000",
            writer_limits=lim, reader_limits={"pyarrow": PA_NO_BLOOM_PRUNE},
            bloom=Bloom(tuple(c.name for c in BLOOM_COLS), placement),
            expect={"bloom": placement}))
    cases.append(Case(
        "page-index", "index", "ColumnIndex + OffsetIndex (several pages per chunk)", SORTED_COLS,
        n=BLOOM_N, row_group=2048, data_fn=sorted_data,
        pqbloom_opts={"write_page_index": True, "data_page_size": 1024, "use_dictionary": False},
        pyarrow_opts={"write_page_index": True, "data_page_size": 1024, "write_batch_size": 128,
                      "use_dictionary": False},
        spark_opts={"parquet.page.size": "1024", "parquet.page.row.count.limit": "200",
                    "parquet.enable.dictionary": "false"},
        writer_limits={"duckdb": DUCK_NO_PAGE_INDEX_W},
        reader_limits={"pyarrow": PA_NO_PAGE_PRUNE, "duckdb": DUCK_NO_PAGE_INDEX_R},
        page_index="id", expect={"page_index": "id"}))
    cases.append(Case(
        "statistics", "index", "row-group statistics (min/max/null_count)", SORTED_COLS,
        n=BLOOM_N, row_group=2048, data_fn=sorted_data,
        stats=("id", "s", "d"), expect={"stats": ("id", "s", "d")}))
    return cases


# encryption ------------------------------------------------------------------------------------
ENC_COLS = [_c("id", "int64", "int"), _c("s", "string", "str"), _c("d", "double", "float")]


def enc_data(case: Case) -> dict[str, list[Any]]:
    rng = np.random.default_rng(case.seed + 3)
    n = case.n
    ids = rng.permutation(np.arange(0, 2 * n, 2, dtype=np.int64)).tolist()
    return {
        "id": ids,
        "s": [f"secret-{x:08d}@example.com" for x in ids],
        "d": _with_nulls(rng, [x / 8 for x in ids], 0.05),
    }


def enc_sorted_data(case: Case) -> dict[str, list[Any]]:
    d = enc_data(case)
    order = sorted(range(case.n), key=lambda i: d["id"][i])
    return {k: [v[i] for i in order] for k, v in d.items()}


def _enc_cases() -> list[Case]:
    pa_enc_opts = {"row_group_size": 1024}
    variants = [
        ("enc:gcm", "AES_GCM_V1, encrypted footer, column keys, double wrapping", Encryption()),
        ("enc:gcm-ctr", "AES_GCM_CTR_V1, encrypted footer, column keys", Encryption(algorithm="AES_GCM_CTR_V1")),
        ("enc:plaintext-footer", "AES_GCM_V1, plaintext (signed) footer, column keys",
         Encryption(plaintext_footer=True)),
        ("enc:ctr-plaintext-footer", "AES_GCM_CTR_V1, plaintext footer",
         Encryption(algorithm="AES_GCM_CTR_V1", plaintext_footer=True)),
        ("enc:uniform", "uniform key (footer key for every column)", Encryption(uniform=True, column_keys={})),
        ("enc:single-wrapping", "single wrapping (DEKs wrapped by the KMS directly)",
         Encryption(double_wrapping=False)),
        ("enc:external-key-material", "key material in a sidecar _KEY_MATERIAL_FOR_*.json",
         Encryption(internal_key_material=False)),
    ]
    cases = []
    for cid, title, e in variants:
        cases.append(Case(cid, "encryption", title, ENC_COLS, n=3000, row_group=1024, data_fn=enc_data,
                          pyarrow_opts=dict(pa_enc_opts), encryption=e,
                          writer_limits={"duckdb": DUCK_ENC}, reader_limits={"duckdb": DUCK_ENC},
                          expect={"encryption": True}))
    cases.append(Case(
        "enc:page-index", "encryption", "encrypted ColumnIndex/OffsetIndex (several pages per chunk)", ENC_COLS,
        n=3000, row_group=1024, data_fn=enc_sorted_data, encryption=Encryption(),
        pqbloom_opts={"write_page_index": True, "data_page_size": 1024, "use_dictionary": False},
        pyarrow_opts={"row_group_size": 1024, "write_page_index": True, "data_page_size": 1024,
                      "write_batch_size": 128, "use_dictionary": False},
        spark_opts={"parquet.page.size": "1024", "parquet.page.row.count.limit": "200",
                    "parquet.enable.dictionary": "false"},
        writer_limits={"duckdb": DUCK_ENC}, reader_limits={"duckdb": DUCK_ENC, "pyarrow": PA_NO_PAGE_PRUNE},
        page_index="id", expect={"encryption": True, "page_index": "id"}))
    cases.append(Case(
        "enc:bloom", "encryption", "encrypted Bloom filters (on column-key and footer-key columns)", ENC_COLS,
        n=3000, row_group=1024, data_fn=enc_data, encryption=Encryption(),
        pqbloom_opts={"bloom_filter_options": {"id": True, "s": True}, "use_dictionary": False},
        writer_limits={"duckdb": DUCK_ENC, "pyarrow": PA_NO_ENC_BLOOM},
        reader_limits={"duckdb": DUCK_ENC, "pyarrow": PA_NO_BLOOM_PRUNE},
        bloom=Bloom(("id", "s")), expect={"encryption": True, "bloom": "any"}))
    return cases


def all_cases() -> list[Case]:
    return _type_cases() + _layout_cases() + _index_cases() + _enc_cases()


def enc_absent(column: str, n: int, count: int, seed: int = 7) -> list[Any]:
    rng = np.random.default_rng(seed)
    odd = [int(x) * 2 + 1 for x in rng.integers(n // 4, 3 * n // 4, count)]
    out: dict[str, list[Any]] = {"id": list(odd), "s": [f"secret-{x:08d}@example.com" for x in odd]}
    return out[column]


def absent_values(case: Case, column: str, count: int) -> list[Any]:
    if case.encryption is not None:
        return enc_absent(column, case.n, count)
    return bloom_absent(column, case.n, count)


# ---------------------------------------------------------------------------------------------
# Arrow tables from canonical data (pyarrow, Spark and DuckDB writers start from these)


def arrow_type(col: Col) -> Any:
    import pyarrow as pa

    pq = col.pq.replace(" ", "")
    k = col.kind
    if k in ("int", "uint"):
        return getattr(pa, pq)()
    if k == "float":
        return pa.float32() if pq in ("float", "float32") else pa.float64()
    if k == "float16":
        return pa.float16()
    if k == "str":
        return pa.string()
    if k == "bytes":
        return pa.binary(int(pq[6:-1])) if pq.startswith("fixed") else pa.binary()
    if k == "uuid":
        return pa.uuid()
    if k == "date":
        return pa.date32()
    if k == "ts":
        return pa.timestamp(col.unit, tz="UTC")
    if k == "ntz":
        return pa.timestamp(col.unit)
    if k == "int96":
        return pa.timestamp("ns", tz="UTC")
    if k == "time":
        return pa.time32("ms") if col.unit == "ms" else pa.time64(col.unit)
    if k == "decimal":
        prec, scale = (int(x) for x in pq[pq.index("(") + 1:pq.index(")")].split(","))
        return pa.decimal128(prec, scale)
    if k == "bool":
        return pa.bool_()
    raise ValueError(k)


def arrow_array(col: Col, values: list[Any]) -> Any:
    import pyarrow as pa

    t = arrow_type(col)
    mask = np.array([v is None for v in values], bool)
    k = col.kind
    if k == "float16":
        arr = np.array([0.0 if v is None else v for v in values], np.float16)
        return pa.array(arr, type=t, mask=mask)
    if k in ("ts", "ntz", "int96", "time"):
        step = UNIT_NS["ns" if k == "int96" else (col.unit or "us")]
        ints = pa.array([None if v is None else v // step for v in values],
                        pa.int32() if (k == "time" and col.unit == "ms") else pa.int64())
        return ints.cast(t)
    if k == "date":
        return pa.array(values, pa.int32()).cast(t)
    if k == "uuid":
        return pa.ExtensionArray.from_storage(t, pa.array(values, pa.binary(16)))
    return pa.array(values, t)


def arrow_table(case: Case, data: dict[str, list[Any]]) -> Any:
    import pyarrow as pa

    fields = [pa.field(c.name, arrow_type(c), nullable=c.nullable) for c in case.columns]
    return pa.Table.from_arrays([arrow_array(c, data[c.name]) for c in case.columns], schema=pa.schema(fields))


def pqbloom_input(case: Case, data: dict[str, list[Any]]) -> dict[str, list[Any]]:
    """The canonical values in the form pqbloom.write_table takes (ticks in the column unit)."""
    out = {}
    for c in case.columns:
        vals = data[c.name]
        if c.kind in ("ts", "ntz", "time"):
            step = UNIT_NS[c.unit or "us"]
            vals = [None if v is None else v // step for v in vals]
        elif c.kind == "uuid":
            vals = [None if v is None else uuid.UUID(bytes=v) for v in vals]
        out[c.name] = vals
    return out


def pqbloom_schema(case: Case) -> Any:
    import pqbloom

    return pqbloom.Schema.from_types({c.name: c.pq for c in case.columns},
                                     not_null=[c.name for c in case.columns if not c.nullable])


# ---------------------------------------------------------------------------------------------
# canonical form of what readers return


_EPOCH = _dt.datetime(1970, 1, 1)


def _py_to_canon(v: Any, kind: str | None = None) -> Any:
    if v is None:
        return None
    if isinstance(v, np.generic):
        v = v.item()
    if isinstance(v, bytearray | memoryview):
        return bytes(v)
    if isinstance(v, uuid.UUID):
        return v.bytes
    if kind == "uuid" and isinstance(v, str):
        return uuid.UUID(v).bytes
    if isinstance(v, decimal.Decimal) and kind in ("int", "uint"):
        return int(v)
    return v


def canon_arrow(table: Any, kinds: dict[str, str] | None = None) -> dict[str, list[Any]]:
    """Arrow table -> {column: canonical values}, judged by the Arrow types (and the expected kinds)."""
    import pyarrow as pa
    import pyarrow.types as pat

    kinds = kinds or {}
    out = {}
    for name in table.column_names:
        col = table.column(name).combine_chunks() if table.num_rows else table.column(name)
        if isinstance(col, pa.ChunkedArray):
            col = col.combine_chunks() if col.num_chunks else pa.array([], col.type)
        t = col.type
        if isinstance(t, pa.ExtensionType):
            col, t = col.storage, col.storage.type
        if pat.is_dictionary(t):
            col = col.dictionary_decode()
            t = col.type
        if pat.is_timestamp(t) or pat.is_time(t) or pat.is_date(t):
            step = {"s": 10**9, "ms": 10**6, "us": 10**3, "ns": 1}.get(getattr(t, "unit", "ns"), 1)
            if pat.is_date(t):
                ints = col.cast(pa.int32()).to_pylist()
                if pat.is_date64(t):
                    ints = [None if v is None else v // 86_400_000 for v in col.cast(pa.int64()).to_pylist()]
                vals = ints
            else:
                ints = col.cast(pa.int64() if pat.is_timestamp(t) or pat.is_time64(t) else pa.int32()).to_pylist()
                vals = [None if v is None else v * step for v in ints]
        elif pat.is_float16(t):
            np_vals = col.to_numpy(zero_copy_only=False)
            vals = [None if m else float(x) for x, m in zip(np_vals.astype(float).tolist(),
                                                            col.is_null().to_pylist())]
        else:
            vals = [_py_to_canon(v, kinds.get(name)) for v in col.to_pylist()]
        out[name] = vals
    return out


def canon_pqbloom(table: Any) -> dict[str, list[Any]]:
    """pqbloom Table -> canonical values, from the physical values and the file's logical types."""
    from pqbloom.format import T
    from pqbloom.table import int96_to_ns

    out = {}
    for c in table.columns:
        f = c.field
        lt = f.logical_type
        kind = lt.kind if lt is not None else None
        if f.physical_type == T.Type.INT96 or kind in ("TIMESTAMP", "TIME"):
            if f.physical_type == T.Type.INT96:
                ints = int96_to_ns(c.values, c.mask).tolist()  # null slots hold no timestamp
            else:
                step = UNIT_NS[lt.unit]
                ints = [int(x) * step for x in np.asarray(c.values).tolist()]
            mask = c.mask.tolist() if c.mask is not None else [False] * len(ints)
            out[f.name] = [None if m else v for v, m in zip(ints, mask)]
        elif kind == "DATE":
            mask = c.mask.tolist() if c.mask is not None else [False] * len(c.values)
            out[f.name] = [None if m else int(v) for v, m in zip(np.asarray(c.values).tolist(), mask)]
        else:
            out[f.name] = [_py_to_canon(v) for v in c.to_pylist()]
    return out


def same(a: Any, b: Any) -> bool:
    """Canonical equality: NaN equals NaN, -0.0 differs from 0.0, Decimal(5) equals 5."""
    if isinstance(a, float) and isinstance(b, float):
        if math.isnan(a) or math.isnan(b):
            return math.isnan(a) and math.isnan(b)
        return a == b and math.copysign(1, a) == math.copysign(1, b)
    if isinstance(a, bool) or isinstance(b, bool):
        return type(a) is type(b) and a == b
    return a == b


def first_difference(expected: dict[str, list[Any]], got: dict[str, list[Any]]) -> str | None:
    """None when equal, else a short description of the first difference."""
    if list(expected) != list(got):
        missing = [c for c in expected if c not in got]
        extra = [c for c in got if c not in expected]
        if missing or extra:
            return f"columns differ: missing {missing}, unexpected {extra}"
    for name, exp in expected.items():
        vals = got[name]
        if len(vals) != len(exp):
            return f"{name}: {len(vals)} rows, expected {len(exp)}"
        for i, (x, y) in enumerate(zip(exp, vals)):
            if not same(x, y):
                return f"{name}[{i}]: got {y!r}, expected {x!r}"
    return None


# ---------------------------------------------------------------------------------------------
# golden files (interop/make_golden.py writes them, tests/integration/test_golden_files.py reads them)

GOLDEN_TYPE_COLS = [
    _c("i8", "int8", "int"), _c("i16", "int16", "int"), _c("i32", "int32", "int"), _c("i64", "int64", "int"),
    _c("f32", "float", "float"), _c("f64", "double", "float"), _c("s", "string", "str"),
    _c("b", "binary", "bytes"), _c("dt", "date", "date"), _c("ts", "timestamp[us, UTC]", "ts", "us"),
    _c("d9", "decimal(9, 2)", "decimal"), _c("d18", "decimal(18, 4)", "decimal"),
    _c("d38", "decimal(38, 10)", "decimal"), _c("flag", "bool", "bool"),
]
GOLDEN_PYARROW_ONLY = [
    _c("u8", "uint8", "uint"), _c("u64", "uint64", "uint"), _c("h", "float16", "float16"),
    _c("fx", "fixed[5]", "bytes"), _c("u", "uuid", "uuid"), _c("ntz", "timestamp[us]", "ntz", "us"),
    _c("tsns", "timestamp[ns, UTC]", "ts", "ns"), _c("tms", "time[ms]", "time", "ms"),
    _c("tus", "time[us]", "time", "us"),
]
GOLDEN_SPARK_ONLY = [_c("ntz", "timestamp[us]", "ntz", "us", spark_cast="timestamp_ntz")]


GOLDEN_BLOOM_COLS = [_c("id", "int64", "int"), _c("s", "string", "str")]


def golden_cases() -> dict[str, Case]:
    bloom = Bloom(("id", "s"))
    return {
        "pyarrow_types": Case("golden:pyarrow_types", "golden", "pyarrow types",
                              GOLDEN_TYPE_COLS + GOLDEN_PYARROW_ONLY, n=60, row_group=30, seed=42,
                              pyarrow_opts={"store_decimal_as_integer": True, "write_page_index": True,
                                            "compression": "zstd"}),
        "spark_types": Case("golden:spark_types", "golden", "Spark types", GOLDEN_TYPE_COLS + GOLDEN_SPARK_ONLY,
                            n=60, seed=43, spark_opts={"compression": "zstd"},
                            spark_conf={"spark.sql.parquet.outputTimestampType": "TIMESTAMP_MICROS"}),
        "spark_int96": Case("golden:spark_int96", "golden", "Spark INT96", [_c("t96", "int96", "int96")],
                            n=50, seed=44, spark_conf={"spark.sql.parquet.outputTimestampType": "INT96"}),
        "pyarrow_bloom": Case("golden:pyarrow_bloom", "golden", "pyarrow Bloom filters", GOLDEN_BLOOM_COLS, n=200,
                              row_group=100, seed=45, data_fn=bloom_data,
                              pyarrow_opts={"bloom_filter_options": {c.name: {"ndv": 100, "fpp": 0.01}
                                                                     for c in GOLDEN_BLOOM_COLS},
                                            "use_dictionary": False, "compression": "zstd"},
                              bloom=bloom),
        "spark_bloom": Case("golden:spark_bloom", "golden", "Spark Bloom filters", GOLDEN_BLOOM_COLS, n=200, seed=46,
                            data_fn=bloom_data, bloom=bloom, spark_opts={"compression": "zstd"}),
        "duckdb_bloom": Case("golden:duckdb_bloom", "golden", "DuckDB Bloom filters", GOLDEN_BLOOM_COLS, n=200,
                             seed=47, data_fn=bloom_data, duckdb_opts="DICTIONARY_SIZE_LIMIT 100000, COMPRESSION zstd",
                             bloom=bloom),
        "spark_encrypted": Case("golden:spark_encrypted", "golden", "Spark encrypted (GCM, column keys, Bloom)",
                                ENC_COLS, n=200, seed=48, data_fn=enc_data, encryption=Encryption(), bloom=bloom,
                                spark_opts={"compression": "zstd"}),
        "spark_encrypted_ctr_plaintext_footer": Case(
            "golden:spark_encrypted_ctr_plaintext_footer", "golden", "Spark encrypted (CTR, plaintext footer)",
            ENC_COLS, n=100, seed=49, data_fn=enc_data, spark_opts={"compression": "zstd"},
            encryption=Encryption(algorithm="AES_GCM_CTR_V1", plaintext_footer=True, double_wrapping=False)),
    }
