"""pqbloom reads what every other writer produces, proven against the writers themselves (#15).

Each peer writer (pyarrow/parquet-cpp at several format and data page versions, DuckDB, Spark/parquet-java,
polars, DataFusion/arrow-rs, fastparquet) writes one realistic table: ints and floats with nulls,
variable-length strings, timestamps with a time zone (and nanoseconds where the writer keeps them),
decimals, dates, booleans, lists, structs and maps (what each writer can write), in several row groups,
dictionary-encoded or plain, compressed with each codec the writer offers, with page indexes and Bloom
filters where it can write them. The table's values come from ``tests.integration.peer_tables`` (edge values
included), never from pqbloom.

For every file (``tests.integration.peer_check.check_file``):

* ``pqbloom.read_table`` equals pyarrow's reading (types up to offset width, values NaN-aware, through
  ``to_arrow()`` and ``to_pydict()``);
* filtered reads (``==`` present and absent values, ranges, ``isin``, ``is_null`` on random leaves, list
  elements too) equal pyarrow's reading filtered with ``pyarrow.compute``;
* every value of every column chunk with a Bloom filter tests present (no false negatives).

And a point filter on every flat column (``test_point_filter_equals_peer``) equals the peer engine's
own filtered result (DuckDB SQL, Spark DataFrame, polars, DataFusion, pyarrow ``filters=``, fastparquet's
reading filtered by pandas), compared by the rows' ``id``.

Every test also asserts that the file exercises what its configuration claims (row groups, codec, page
index, Bloom filters, values filtered and probed), so that a writer that silently ignores an option
makes the test fail rather than pass vacuously.
"""

from __future__ import annotations

import functools
import math
import shutil
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import pqbloom

from .peer_check import check_file
from .peer_engines import peer_filter_ids
from .peer_tables import Shape, random_table
from .peer_writers import WRITERS, Case

ROWS = 1_500
#: the writers' files, one directory per run (removed at the end of the module)
SCRATCH = Path(tempfile.mkdtemp(prefix="pqbloom-peer-writers-"))

# ---------------------------------------------------------------------------
# the table
# ---------------------------------------------------------------------------
_STRUCT = pa.struct([pa.field("x", pa.int32()), pa.field("y", pa.string())])
_COLUMNS: dict[str, pa.DataType] = {
    "i64": pa.int64(), "i32": pa.int32(), "f64": pa.float64(), "f32": pa.float32(), "s": pa.string(),
    "ts": pa.timestamp("us", "America/New_York"), "ts_ns": pa.timestamp("ns", "UTC"),
    "dec": pa.decimal128(18, 3), "d": pa.date32(), "b": pa.bool_(),
    "tags": pa.list_(pa.string()), "st": _STRUCT, "m": pa.map_(pa.string(), pa.int64()),
}
_ALL = tuple(_COLUMNS)
#: the columns each writer is given: what it can write from Arrow (or, for fastparquet, from pandas)
_BY_WRITER = {
    "pyarrow": _ALL,
    "duckdb": _ALL,
    "datafusion": _ALL,
    "spark": tuple(c for c in _ALL if c != "ts_ns"),  # Spark has microseconds only
    "polars": tuple(c for c in _ALL if c != "m"),  # polars has no map type
    "fastparquet": ("i64", "i32", "f64", "s", "ts_ns", "b"),  # flat pandas columns only
}


def make_table(writer: str, *, low_card: bool, ns_safe: bool, seed: int) -> tuple[pa.Table, Shape]:
    """The writer's columns with random values, after a unique non-null ``id`` (the row's identity)."""
    shape = Shape(ROWS, null_p=0.1, special_p=0.02, low_card=low_card, max_list=4, seed=seed, ns_safe=ns_safe)
    fields = [pa.field(n, _COLUMNS[n]) for n in _BY_WRITER[writer]]
    t = random_table(fields, shape)
    ids = np.random.default_rng(seed).permutation(ROWS).astype(np.int64)
    return t.add_column(0, pa.field("id", pa.int64(), nullable=False), pa.array(ids)), shape


# ---------------------------------------------------------------------------
# the configurations
# ---------------------------------------------------------------------------
@dataclass(frozen=True)
class Config:
    writer: str
    options: dict[str, Any]
    codec: str  # the codec the footer must name for every chunk (pyarrow's spelling: LZ4_RAW is "LZ4")
    low_card: bool = True  # repeated values: dictionary encoding, several rows per point filter
    bloom: bool = False  # the writer writes Bloom filters: some must be probed
    page_index: bool = False  # the writer writes column and offset indexes
    ns_safe: bool = False  # timestamps within nanoseconds' range (INT96)


_PA_DEFAULTS: dict[str, Any] = {
    "version": "2.6", "data_page_version": "1.0", "compression": "snappy", "use_dictionary": True,
    "encodings": None, "write_statistics": True, "write_page_index": False, "data_page_size": None,
    "row_group_size": 500, "use_compliant_nested_type": True, "store_decimal_as_integer": False,
    "timestamps": "keep", "write_page_checksum": False, "sorting": False, "bloom": False, "store_schema": True,
    "dictionary_pagesize_limit": None, "write_batch_size": None, "max_rows_per_page": None,
    "use_content_defined_chunking": False, "write_time_adjusted_to_utc": False,
}


def _pa(codec: str, **kw: Any) -> Config:
    o = {**_PA_DEFAULTS, "compression": codec, **kw}
    return Config("pyarrow", o, codec.upper() if codec != "none" else "UNCOMPRESSED", low_card=o["use_dictionary"],
                  bloom=o["bloom"], page_index=o["write_page_index"], ns_safe=o["timestamps"] == "int96")


_DUCK_DEFAULTS: dict[str, Any] = {"ROW_GROUP_SIZE": 500, "ROW_GROUP_SIZE_BYTES": 20_000, "PARQUET_VERSION": "V1", "DICTIONARY_SIZE_LIMIT": None,
                                  "STRING_DICTIONARY_PAGE_SIZE_LIMIT": None, "BLOOM_FILTER_FALSE_POSITIVE_RATIO": None}


def _duck(codec: str, arrow_codec: str, **kw: Any) -> Config:
    o = {**_DUCK_DEFAULTS, "COMPRESSION": codec, **kw}
    # DuckDB writes Bloom filters for every dictionary-encoded chunk (by default too); it aligns row groups to
    # 2,048 rows unless a byte size cuts them
    dictionary = o["DICTIONARY_SIZE_LIMIT"] != 1
    return Config("duckdb", o, arrow_codec, low_card=dictionary, bloom=dictionary)


_SPARK_DEFAULTS: dict[str, Any] = {
    "parquet.writer.version": "v1", "parquet.enable.dictionary": "true", "parquet.page.size": "4096",
    "parquet.page.row.count.limit": None, "parquet.block.size": "1024", "parquet.page.write-checksum.enabled": "false",
    "outputTimestampType": "TIMESTAMP_MICROS", "writeLegacyFormat": "false", "bloom": True,
}


def _spark(codec: str, arrow_codec: str, **kw: Any) -> Config:
    o = {**_SPARK_DEFAULTS, "compression": codec, **kw}
    # parquet-java writes a page index always, Bloom filters only for chunks that fall back from dictionary
    return Config("spark", o, arrow_codec, low_card=o["parquet.enable.dictionary"] == "true", bloom=o["bloom"],
                  page_index=True, ns_safe=o["outputTimestampType"] == "INT96")


_DF_DEFAULTS: dict[str, Any] = {
    "writer_version": "1.0", "dictionary_enabled": True, "statistics_enabled": "page", "max_row_group_size": 500,
    "data_page_row_count_limit": 20000, "data_pagesize_limit": 1048576, "write_batch_size": 1024,
    "bloom_filter_on_write": True, "skip_arrow_metadata": False, "statistics_truncate_length": None,
    "column_index_truncate_length": None, "encodings": False,
}


def _df(codec: str, arrow_codec: str, **kw: Any) -> Config:
    o = {**_DF_DEFAULTS, "compression": codec, **kw}
    return Config("datafusion", o, arrow_codec, low_card=o["dictionary_enabled"], bloom=o["bloom_filter_on_write"],
                  page_index=o["statistics_enabled"] == "page")


def _polars(codec: str, arrow_codec: str, **kw: Any) -> Config:
    o = {"statistics": "full", "row_group_size": 500, "data_page_size": None, "compression": codec, **kw}
    # polars writes a page index whenever it writes statistics
    return Config("polars", o, arrow_codec, page_index=o["statistics"] is not False)


def _fp(codec: str | None, arrow_codec: str, **kw: Any) -> Config:
    o = {"row_group_offsets": 500, "file_scheme": "simple", "times": "int64", "stats": True, "has_nulls": True,
         "object_encoding": "infer", "compression": codec, **kw}
    return Config("fastparquet", o, arrow_codec, ns_safe=True)


CONFIGS: dict[str, Config] = {
    # pyarrow: format versions, data page v1 and v2, every codec, dictionary and plain, page index, Bloom
    "pyarrow-1.0-v1-snappy-dict-bloom": _pa("snappy", version="1.0", bloom=True),
    "pyarrow-2.4-v2-zstd-plain-index-bloom": _pa("zstd", version="2.4", data_page_version="2.0", use_dictionary=False,
                                                 write_page_index=True, bloom=True, data_page_size=1024),
    "pyarrow-2.6-v2-gzip-dict-index-bloom": _pa("gzip", data_page_version="2.0", write_page_index=True, bloom=True,
                                                max_rows_per_page=100),
    "pyarrow-2.6-v1-brotli-encodings": _pa("brotli", use_dictionary=False, encodings="mixed", write_page_index=True),
    "pyarrow-2.6-v2-lz4-int96": _pa("lz4", data_page_version="2.0", timestamps="int96", bloom=True),
    "pyarrow-2.6-v1-none-plain-sorted": _pa("none", use_dictionary=False, encodings="PLAIN", sorting=True,
                                            write_page_index=True, dictionary_pagesize_limit=64),
    # DuckDB: V1 and V2 pages, codecs; a one-entry dictionary limit makes the chunks plain
    "duckdb-V1-snappy": _duck("snappy", "SNAPPY"),
    "duckdb-V2-zstd-bloom001": _duck("zstd", "ZSTD", PARQUET_VERSION="V2", BLOOM_FILTER_FALSE_POSITIVE_RATIO=0.01),
    "duckdb-V1-gzip-plain": _duck("gzip", "GZIP", DICTIONARY_SIZE_LIMIT=1),
    "duckdb-V2-lz4raw": _duck("lz4_raw", "LZ4", PARQUET_VERSION="V2", BLOOM_FILTER_FALSE_POSITIVE_RATIO=0.5),
    "duckdb-V1-brotli": _duck("brotli", "BROTLI"),
    "duckdb-V1-uncompressed": _duck("uncompressed", "UNCOMPRESSED"),
    # Spark (parquet-java): v1 and v2 pages, dictionary and plain, INT96 in the legacy format and milliseconds,
    # Bloom filters (two files only: Spark's jobs are slow)
    "spark-v1-snappy-dict-bloom-millis": _spark("snappy", "SNAPPY", outputTimestampType="TIMESTAMP_MILLIS"),
    "spark-v2-zstd-plain-bloom-int96-legacy": _spark("zstd", "ZSTD", outputTimestampType="INT96",
                                                     writeLegacyFormat="true",
                                                     **{"parquet.writer.version": "v2",
                                                        "parquet.enable.dictionary": "false",
                                                        "parquet.page.row.count.limit": "100"}),
    # DataFusion (arrow-rs): v1 and v2 writers, page index and Bloom filters, explicit encodings
    "datafusion-1.0-snappy-dict-index-bloom": _df("snappy", "SNAPPY"),
    "datafusion-2.0-zstd-plain-index-bloom": _df("zstd(3)", "ZSTD", writer_version="2.0", dictionary_enabled=False,
                                                 data_page_row_count_limit=100),
    "datafusion-2.0-lz4raw-encodings": _df("lz4_raw", "LZ4", writer_version="2.0", encodings=True,
                                           bloom_filter_on_write=False, statistics_enabled="chunk"),
    "datafusion-1.0-gzip-tiny-pages": _df("gzip(6)", "GZIP", data_pagesize_limit=64, write_batch_size=1),
    "datafusion-1.0-brotli": _df("brotli(3)", "BROTLI"),
    # polars: its own Rust writer, every codec
    "polars-zstd": _polars("zstd", "ZSTD"),
    "polars-snappy-small-pages": _polars("snappy", "SNAPPY", data_page_size=1024),
    "polars-gzip": _polars("gzip", "GZIP", statistics=True),
    "polars-lz4": _polars("lz4", "LZ4", statistics=False),
    "polars-brotli": _polars("brotli", "BROTLI"),
    "polars-uncompressed": _polars("uncompressed", "UNCOMPRESSED"),
    # fastparquet: codecs, INT96 times, a hive directory
    "fastparquet-snappy": _fp("SNAPPY", "SNAPPY"),
    "fastparquet-zstd-int96": _fp("ZSTD", "ZSTD", times="int96"),
    "fastparquet-gzip-hive": _fp("GZIP", "GZIP", file_scheme="hive"),
    "fastparquet-brotli-nostats": _fp("BROTLI", "BROTLI", stats=False),
    "fastparquet-lz4raw": _fp("LZ4_RAW", "LZ4"),
    "fastparquet-none": _fp(None, "UNCOMPRESSED"),
}


@functools.cache
def written(name: str) -> tuple[Path, pa.Table]:
    """The file (or hive directory) the writer of configuration ``name`` produced, and the table it was given."""
    cfg = CONFIGS[name]
    seed = sum(map(ord, name))
    table, shape = make_table(cfg.writer, low_card=cfg.low_card, ns_safe=cfg.ns_safe, seed=seed)
    case = Case(cfg.writer, tuple(table.schema), shape, tuple(sorted(cfg.options.items())))
    out = SCRATCH / name
    shutil.rmtree(out, ignore_errors=True)
    out.mkdir(parents=True)
    return WRITERS[cfg.writer].write(case, table, out), table


def _files(path: Path) -> list[Path]:
    return [path] if path.is_file() else sorted(p for p in path.rglob("*.parquet") if not p.name.startswith(("_", ".")))


def _chunks(path: Path) -> list[Any]:
    out = []
    for f in _files(path):
        md = pq.ParquetFile(f).metadata
        out += [md.row_group(i).column(j) for i in range(md.num_row_groups) for j in range(md.num_columns)]
    return out


@pytest.fixture(scope="module", autouse=True)
def _scratch() -> Any:
    # (Spark's Python workers: interop.spark_support.get_spark sets PYSPARK_PYTHON to this interpreter)
    yield
    written.cache_clear()
    shutil.rmtree(SCRATCH, ignore_errors=True)


# ---------------------------------------------------------------------------
# the tests
# ---------------------------------------------------------------------------
def _marks(name: str) -> list[Any]:
    return [pytest.mark.spark] if CONFIGS[name].writer == "spark" else []


@pytest.mark.parametrize("name", [pytest.param(n, marks=_marks(n)) for n in CONFIGS])
def test_reads_like_peer(name: str) -> None:
    """pqbloom's reading, filtered readings and Bloom probes of the writer's file equal pyarrow's."""
    cfg = CONFIGS[name]
    path, table = written(name)
    # the file is what the configuration says (from pyarrow's reading of its footer)
    files = _files(path)
    assert sum(pq.ParquetFile(f).metadata.num_row_groups for f in files) >= 2, "one row group only"
    assert sum(pq.ParquetFile(f).metadata.num_rows for f in files) == table.num_rows
    chunks = _chunks(path)
    assert {c.compression for c in chunks} == {cfg.codec}
    if cfg.page_index:
        assert any(c.has_column_index and c.has_offset_index for c in chunks), "no page index written"
    wrote_bloom = any(c.bloom_filter_offset is not None for c in chunks)
    assert wrote_bloom == cfg.bloom, f"Bloom filters written: {wrote_bloom}"

    o = check_file(path, SCRATCH / name, seed=sum(map(ord, name)), write_back=False)
    assert o.problems == [], "\n".join(o.problems)
    assert o.oracle == "pyarrow" and o.rows == table.num_rows
    assert o.filters >= 4, o.filters
    if cfg.bloom:
        assert o.bloom_values > 0, o.notes


def _flat_columns(writer: str) -> list[str]:
    return [c for c in _BY_WRITER[writer] if not pa.types.is_nested(_COLUMNS[c])]


def _point_cases() -> list[Any]:
    # per writer, configurations with dictionary encoding and with plain chunks (low and high cardinality); one
    # for Spark, whose jobs are slow
    picks = ["pyarrow-2.6-v2-gzip-dict-index-bloom", "pyarrow-2.4-v2-zstd-plain-index-bloom", "duckdb-V1-snappy",
             "duckdb-V1-gzip-plain", "spark-v2-zstd-plain-bloom-int96-legacy",
             "datafusion-1.0-snappy-dict-index-bloom", "datafusion-2.0-zstd-plain-index-bloom", "polars-zstd",
             "fastparquet-snappy"]
    return [pytest.param(n, c, id=f"{n}-{c}", marks=_marks(n)) for n in picks for c in _flat_columns(CONFIGS[n].writer)]


@pytest.mark.parametrize(("name", "column"), _point_cases())
def test_point_filter_equals_peer(name: str, column: str) -> None:
    """``field(column) == v`` for a value ``v`` the file holds: pqbloom's rows are the peer engine's rows."""
    cfg = CONFIGS[name]
    path, _ = written(name)
    at = pq.read_table(path, columns=["id", column])
    values = at.column(column)
    rng = np.random.default_rng(sum(map(ord, name + column)))
    present = [v for v in values.to_pylist() if v is not None and not (isinstance(v, float) and math.isnan(v))]
    assert present, f"{column} holds no value"
    # the most precise values when there are some: a literal must keep every digit (nanoseconds, for one)
    precise = [v for v in present if getattr(v, "nanosecond", 0)]
    present = precise or present
    v = present[int(rng.integers(len(present)))]
    expected = peer_filter_ids(cfg.writer, path, column, v, values.type)
    assert expected, f"{cfg.writer} finds no row where {column} == {v!r}"
    got = pqbloom.read_table(path, columns=["id"], filters=pqbloom.field(column) == v)
    assert sorted(got.to_pydict()["id"]) == expected, f"{column} == {v!r}"
