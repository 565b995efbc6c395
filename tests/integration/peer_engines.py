"""Point filters evaluated by the peer writers themselves, for ``tests/integration/test_peer_writers.py``.

:func:`peer_filter_ids` asks the engine that wrote a file (DuckDB, Spark, polars, DataFusion; pyarrow's
own ``filters=``; fastparquet's reading filtered by pandas) for the ``id`` of every row whose column
equals a value, so that pqbloom's filtered read is compared with the peer's filtered result, not with
pqbloom's.
Nothing here imports pqbloom.
"""

from __future__ import annotations

import datetime as dt
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

__all__ = ["peer_filter_ids"]


def peer_filter_ids(writer: str, path: Path, column: str, value: Any, typ: pa.DataType) -> list[int]:
    """Sorted ``id`` values of the rows where ``column == value`` (SQL semantics), as ``writer`` filters them.
    ``value`` is pyarrow's Python value of the column (type ``typ``)."""
    ids = _ENGINES[writer](path, column, value, typ)
    return sorted(int(i) for i in ids)


def _pyarrow(path: Path, column: str, value: Any, typ: pa.DataType) -> list[int]:
    return pq.read_table(path, columns=["id"], filters=[(column, "==", pa.scalar(value, typ))]).column("id").to_pylist()


def _duckdb(path: Path, column: str, value: Any, typ: pa.DataType) -> list[int]:
    from .peer_check import duck

    con = duck()
    # the literal is handed over as a one-row Arrow table, so DuckDB binds it with the column's exact type
    con.register("lit_table", pa.table({"v": pa.array([value], typ)}))
    try:
        p = str(path).replace("'", "''")
        return [r[0] for r in con.execute(
            f"SELECT id FROM read_parquet('{p}') WHERE \"{column}\" = (SELECT v FROM lit_table)").fetchall()]
    finally:
        con.unregister("lit_table")


def _polars(path: Path, column: str, value: Any, typ: pa.DataType) -> list[int]:
    import polars as pl

    lit = pl.from_arrow(pa.array([value], typ))
    assert isinstance(lit, pl.Series)
    # the literal stays a one-value Series of the column's type: its Python value would lose nanoseconds
    return pl.scan_parquet(path).filter(pl.col(column) == pl.lit(lit)).select("id").collect()["id"].to_list()


def _datafusion(path: Path, column: str, value: Any, typ: pa.DataType) -> list[int]:
    from datafusion import SessionContext, col, lit

    ctx = SessionContext()
    df = ctx.read_parquet(str(path)).filter(col(column) == lit(pa.scalar(value, typ))).select(col("id"))
    return pa.Table.from_batches(df.collect()).column("id").to_pylist() if df.count() else []


def _spark(path: Path, column: str, value: Any, typ: pa.DataType) -> list[int]:
    from pyspark.sql import functions as F

    from interop.spark_support import get_spark

    if isinstance(value, dt.datetime) and value.tzinfo is None:
        # Spark reads a timestamp without zone as an instant in the session zone (UTC here)
        value = value.replace(tzinfo=dt.timezone.utc)
    df = get_spark().read.parquet(str(path)).where(F.col(column) == F.lit(value)).select("id")
    return [r[0] for r in df.collect()]


def _fastparquet(path: Path, column: str, value: Any, typ: pa.DataType) -> list[int]:
    import fastparquet
    import pandas as pd

    # fastparquet's own reading, filtered by pandas: its row filter (to_pandas(filters=..., row_filter=True))
    # fails on nullable columns ("cannot convert to 'bool'-dtype NumPy array with missing values")
    df = fastparquet.ParquetFile(str(path)).to_pandas(columns=["id", column])
    if pa.types.is_timestamp(typ):
        value = pd.Timestamp(value)
    mask = (df[column] == value).fillna(False).astype(bool)
    return df["id"][mask].tolist()


_ENGINES = {"pyarrow": _pyarrow, "duckdb": _duckdb, "polars": _polars, "datafusion": _datafusion, "spark": _spark,
            "fastparquet": _fastparquet}
