"""The contenders of ``bench_lineitem.py`` (factories of zero-argument callables, ``_harness.Recipe``)
and the checks that every contender's result is the expected one before anything is timed.

Factories take JSON arguments only (the memory child rebuilds them) and build everything but the
work itself beforehand: imports, connections, each engine's native input (converted from the
generated pyarrow Table of ``_lineitem``), a KMS client. What each callable does:

* writes: pqbloom ``write_table`` from a pqbloom Table; pyarrow ``pq.write_table`` from an Arrow
  table; DuckDB ``COPY`` of a registered Arrow table; polars ``DataFrame.write_parquet``. All
  snappy, 1,000,000-row row groups. Encrypted writes build their encryption properties inside the
  timed call (a new data key per file, wrapped by an in-memory KMS, as a user's code does): pqbloom's
  ``CryptoFactory`` with ``InMemoryKms``, pyarrow's ``CryptoFactory`` with ``interop/pyarrow_kms.py``.
* ``to_pandas``: ``read_table(f).to_pandas()`` (pqbloom, pyarrow), ``pl.read_parquet(f).to_pandas()``.
* filters: pqbloom ``read_table(f, filters=field(c) == v)``, pyarrow ``read_table(f, filters=[(c, "=",
  v)])``, polars ``scan_parquet(f).filter(pl.col(c) == v).collect()``, DuckDB ``SELECT * ... WHERE``.

Full reads reuse ``_engines`` (pqbloom ``read_table`` and ``+to_arrow``, pyarrow, DuckDB, polars).
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable
from typing import Any

from _data import ROW_GROUP
from _engines import pqbloom_threads
from _lineitem import table

_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
if _ROOT not in sys.path:
    sys.path.insert(0, _ROOT)  # interop/pyarrow_kms.py

#: the in-memory KMS's master keys (test keys of the encryption tests, never real secrets)
MASTER = {"kf": b"0123456789012345", "kc1": b"1234567890123450", "kc2": b"1234567890123451"}
#: footer key + 2 column keys
COLUMN_KEYS = {"kc1": ["l_extendedprice"], "kc2": ["l_comment"]}
BLOOM_COLUMNS = ("l_orderkey", "l_comment")
FPP = 0.01


def bloom_options(rows: int) -> dict[str, dict[str, Any]]:
    """The same Bloom filter settings for pqbloom and pyarrow: sized for a row group of distinct values."""
    return {c: {"ndv": max(1, min(rows, ROW_GROUP)), "fpp": FPP} for c in BLOOM_COLUMNS}


def spec_table(spec: list[Any]) -> Any:
    """The generated table named by ``spec`` (``[name, rows, *args]``, JSON)."""
    return table(spec[0], *spec[1:])


def _thread_kw(threads: str) -> dict[str, Any]:
    return {"use_threads": False} if threads == "1" and pqbloom_threads()["read"] else {}


# -- writes -------------------------------------------------------------------------------------------
class Written:
    """What a write returns: the file (and, for the warm-up's row count, its footer read by pyarrow)."""

    def __init__(self, path: str, encrypted: bool = False) -> None:
        self.path, self.encrypted = path, encrypted

    @property
    def num_rows(self) -> int:
        import pyarrow.parquet as pq

        if self.encrypted:
            return int(pq.ParquetFile(self.path, decryption_properties=pyarrow_decryption(self.path)).metadata.num_rows)
        return int(pq.read_metadata(self.path).num_rows)


def pyarrow_decryption(path: str) -> Any:
    import pyarrow.parquet.encryption as pe

    from interop.pyarrow_kms import in_memory_kms

    return pe.CryptoFactory(in_memory_kms(MASTER)).file_decryption_properties(
        pe.KmsConnectionConfig(), pe.DecryptionConfiguration(), path)


def pqbloom_write(spec: list[Any], path: str, threads: str, mode: str) -> Callable[[], Any]:
    """``mode``: ``plain``, ``bloom`` (Bloom filters on BLOOM_COLUMNS) or ``encrypted``."""
    import pqbloom

    t = pqbloom.Table.from_arrow(spec_table(spec))
    kw: dict[str, Any] = {"row_group_size": ROW_GROUP, "compression": "snappy"}
    if threads == "1" and pqbloom_threads()["write"]:
        kw["use_threads"] = False
    if mode == "bloom":
        kw["bloom_filter_options"] = bloom_options(t.num_rows)
    factory = pqbloom.CryptoFactory(lambda config: pqbloom.InMemoryKms(MASTER))
    config = pqbloom.EncryptionConfiguration(footer_key="kf", column_keys=COLUMN_KEYS)

    def write() -> Written:
        extra = {}
        if mode == "encrypted":
            extra["encryption_properties"] = factory.file_encryption_properties(
                pqbloom.KmsConnectionConfig(), config, file_path=path)
        pqbloom.write_table(t, path, **kw, **extra)
        return Written(path, mode == "encrypted")

    return write


def pyarrow_write(spec: list[Any], path: str, mode: str) -> Callable[[], Any]:
    import pyarrow.parquet as pq
    import pyarrow.parquet.encryption as pe

    from interop.pyarrow_kms import in_memory_kms

    t = spec_table(spec)
    kw: dict[str, Any] = {"row_group_size": ROW_GROUP, "compression": "snappy"}
    if mode == "bloom":
        kw["bloom_filter_options"] = bloom_options(t.num_rows)
    factory = pe.CryptoFactory(in_memory_kms(MASTER))
    config = pe.EncryptionConfiguration(footer_key="kf", column_keys=COLUMN_KEYS)

    def write() -> Written:
        extra = {}
        if mode == "encrypted":
            extra["encryption_properties"] = factory.file_encryption_properties(pe.KmsConnectionConfig(), config, path)
        pq.write_table(t, path, **kw, **extra)
        return Written(path, mode == "encrypted")

    return write


def duckdb_write(spec: list[Any], path: str) -> Callable[[], Any]:
    import duckdb

    con = duckdb.connect()
    con.register("src", spec_table(spec))
    sql = f"COPY src TO '{path}' (FORMAT parquet, COMPRESSION snappy, ROW_GROUP_SIZE {ROW_GROUP})"

    def write() -> Written:
        con.execute(sql)
        return Written(path)

    return write


def polars_write(spec: list[Any], path: str) -> Callable[[], Any]:
    import polars as pl

    df = pl.from_arrow(spec_table(spec))

    def write() -> Written:
        df.write_parquet(path, compression="snappy", row_group_size=ROW_GROUP)  # type: ignore[union-attr]
        return Written(path)

    return write


def write_peer_file(writer: str, spec: list[Any], path: str) -> None:
    """``spec``'s table written by ``writer`` with that library's defaults (the files users have)."""
    t = spec_table(spec)
    if writer == "pyarrow":
        import pyarrow.parquet as pq

        pq.write_table(t, path)
    elif writer == "duckdb":
        import duckdb

        con = duckdb.connect()
        con.register("src", t)
        con.execute(f"COPY src TO '{path}' (FORMAT parquet)")
        con.close()
    elif writer == "polars":
        import polars as pl

        pl.from_arrow(t).write_parquet(path)  # type: ignore[union-attr]
    elif writer == "pqbloom":
        import pqbloom

        pqbloom.write_table(pqbloom.Table.from_arrow(t), path)
    else:
        raise ValueError(writer)


# -- reads --------------------------------------------------------------------------------------------
def duckdb_read(path: str) -> Callable[[], Any]:
    import duckdb
    import pyarrow  # noqa: F401

    con = duckdb.connect()
    query = f"SELECT * FROM read_parquet('{path}')"
    return lambda: con.sql(query).to_arrow_table()


def pqbloom_pandas(path: str, threads: str) -> Callable[[], Any]:
    import pandas  # noqa: F401
    import pyarrow  # noqa: F401  (pandas conversions of Arrow types)

    import pqbloom

    kw = _thread_kw(threads)
    return lambda: pqbloom.read_table(path, **kw).to_pandas()


def pyarrow_pandas(path: str, threads: str) -> Callable[[], Any]:
    import pandas  # noqa: F401
    import pyarrow.dataset  # noqa: F401  (read_table imports it on first use)
    import pyarrow.parquet as pq

    kw = {"use_threads": False} if threads == "1" else {}
    return lambda: pq.read_table(path, **kw).to_pandas(**kw)


def polars_pandas(path: str) -> Callable[[], Any]:
    import pandas  # noqa: F401
    import polars as pl
    import pyarrow  # noqa: F401  (polars' to_pandas goes through pyarrow)

    return lambda: pl.read_parquet(path).to_pandas()


def pqbloom_filter(path: str, threads: str, column: str, value: str) -> Callable[[], Any]:
    import pqbloom

    kw = _thread_kw(threads)
    expr = pqbloom.field(column) == value
    return lambda: pqbloom.read_table(path, filters=expr, **kw)


def pyarrow_filter(path: str, threads: str, column: str, value: str) -> Callable[[], Any]:
    import pyarrow.dataset  # noqa: F401
    import pyarrow.parquet as pq

    kw = {"use_threads": False} if threads == "1" else {}
    return lambda: pq.read_table(path, filters=[(column, "=", value)], **kw)


def polars_filter(path: str, column: str, value: str) -> Callable[[], Any]:
    import polars as pl

    return lambda: pl.scan_parquet(path).filter(pl.col(column) == value).collect()


def duckdb_filter(path: str, column: str, value: str) -> Callable[[], Any]:
    import duckdb
    import pyarrow  # noqa: F401

    con = duckdb.connect()
    query = f"SELECT * FROM read_parquet('{path}') WHERE {column} = $v"
    return lambda: con.sql(query, params={"v": value}).to_arrow_table()


# -- checks -------------------------------------------------------------------------------------------
def as_arrow(res: Any) -> Any:
    """A result as a pyarrow Table: pqbloom and polars convert; DuckDB and pyarrow already are."""
    mod = type(res).__module__
    if mod.startswith("pyarrow"):
        return res
    if mod.startswith("polars") or mod.startswith("pqbloom"):
        return res.to_arrow()
    raise AssertionError(f"unexpected result type {type(res)}")


def _plain_type(pa: Any, t: Any) -> Any:
    """The type with the string and binary variants made one (large_string, string_view: string)."""
    if pa.types.is_large_string(t) or pa.types.is_string_view(t):
        return pa.string()
    if pa.types.is_large_binary(t) or pa.types.is_binary_view(t):
        return pa.binary()
    return t


def assert_same_table(expected: Any, got: Any, sort_by: str | None = None) -> None:
    """``got`` has ``expected``'s columns, types (a string variant counts as a string) and values;
    with ``sort_by``, in any row order."""
    import pyarrow as pa

    got = as_arrow(got)
    if got.column_names != expected.column_names:
        raise AssertionError(f"columns {got.column_names} != {expected.column_names}")
    for name, a, b in zip(expected.column_names, expected.schema.types, got.schema.types):
        if _plain_type(pa, a) != _plain_type(pa, b):
            raise AssertionError(f"column {name}: type {b} != {a}")
    if got.schema != expected.schema:
        got = got.cast(expected.schema)
    if sort_by is not None:
        expected, got = expected.sort_by(sort_by), got.sort_by(sort_by)
    if not got.equals(expected):
        bad = [n for n in expected.column_names if not got.column(n).equals(expected.column(n))]
        raise AssertionError(f"values differ from pyarrow's in {bad or 'the row count'}")


def assert_same_frame(expected: Any, got: Any) -> None:
    """``got`` is ``expected`` (pyarrow's DataFrame): same columns and values; a column of another
    dtype must hold the same values once converted to ``expected``'s Arrow type (polars gives dates
    as datetime64[ms] where pyarrow gives ``datetime.date`` objects)."""
    import pyarrow as pa

    if list(got.columns) != list(expected.columns) or len(got) != len(expected):
        raise AssertionError(f"frame {list(got.columns)} x {len(got)} != {list(expected.columns)} x {len(expected)}")
    if not got.index.equals(expected.index):
        raise AssertionError("the index differs from pyarrow's")
    for name in expected.columns:
        a, b = expected[name], got[name]
        if a.dtype == b.dtype:
            if not a.equals(b):
                raise AssertionError(f"column {name}: values differ from pyarrow's")
            continue
        want = pa.array(a, from_pandas=True)
        have = pa.array(b, from_pandas=True).cast(want.type)  # a safe cast: one that would lose a value raises
        if not have.equals(want):
            raise AssertionError(f"column {name} ({b.dtype} vs {a.dtype}): values differ from pyarrow's")


def bloom_columns(path: str) -> set[str]:
    """Columns with a Bloom filter in every row group, as DuckDB's ``parquet_metadata`` reads the footer."""
    import duckdb

    rows = duckdb.sql(f"SELECT path_in_schema, bool_and(bloom_filter_offset IS NOT NULL) "
                      f"FROM parquet_metadata('{path}') GROUP BY path_in_schema").fetchall()
    return {name for name, has in rows if has}


class Expect:
    """A case's check: the reference (``expected()``, computed at the first result and dropped when
    the case is done) against each result with ``compare(reference, result)``."""

    def __init__(self, expected: Callable[[], Any], compare: Callable[[Any, Any], None]) -> None:
        self.expected, self.compare, self._ref = expected, compare, None

    def __call__(self, res: Any) -> None:
        if self._ref is None:
            self._ref = self.expected()
        self.compare(self._ref, res)

    def release(self) -> None:
        self._ref = None


def check_written(spec: list[Any], bloom: bool) -> Callable[[Any, Any], None]:
    """The compare of a write case: the file reads back in pyarrow equal to the input table (its
    string variants aside), with Bloom filters on BLOOM_COLUMNS when asked for."""

    def compare(expected: Any, res: Any) -> None:
        import pyarrow.parquet as pq

        kw = {"decryption_properties": pyarrow_decryption(res.path)} if res.encrypted else {}
        assert_same_table(expected, pq.read_table(res.path, **kw))
        if bloom and not set(BLOOM_COLUMNS) <= bloom_columns(res.path):
            raise AssertionError(f"no Bloom filter on {set(BLOOM_COLUMNS) - bloom_columns(res.path)}")

    return compare
