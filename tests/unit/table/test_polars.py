"""polars DataFrames written directly (write_table, ParquetWriter), read back by polars and pyarrow."""

from __future__ import annotations

import datetime

import numpy as np
import polars as pl
import pyarrow.parquet as pq

import pqbloom


def frame() -> pl.DataFrame:
    ny = pl.Series("ts", [datetime.datetime(2024, 1, 1), None, datetime.datetime(2024, 3, 10, 5, 30)]
                   ).dt.replace_time_zone("America/New_York")
    return pl.DataFrame({
        "s": ["a", None, "ccc"],
        "i": [1, None, 3],
        "u": pl.Series([1, 2, 2**32 - 1], dtype=pl.UInt32),
        "ts": ny,
        "ns": pl.Series([datetime.datetime(2001, 1, 1), None, datetime.datetime(1969, 12, 31)],
                        dtype=pl.Datetime("ns")),
        "c": pl.Series(["red", "blue", None], dtype=pl.Categorical),
        "l": [[1, 2], None, []],
        "ls": [["x"], [None, "y"], None],
        "st": [{"a": 1, "b": "p"}, None, {"a": None, "b": "q"}],
        "f": [1.5, None, float("nan")],
        "b": [True, None, False],
        "d": [datetime.date(2024, 1, 1), None, datetime.date(2020, 2, 29)],
    })


def test_write_table_round_trips_through_polars(tmp_path):
    df = frame()
    pqbloom.write_table(df, tmp_path / "t.parquet", bloom_filter_options={"s": True})
    back = pl.read_parquet(tmp_path / "t.parquet")
    assert back.schema == df.schema
    assert back.equals(df)
    # pyarrow reads the same values polars would give it
    got = pq.read_table(tmp_path / "t.parquet")
    assert got.drop_columns(["f"]).to_pylist() == df.drop("f").to_arrow().to_pylist()
    f = got.column("f").to_numpy(zero_copy_only=False)
    assert f[0] == 1.5 and np.isnan(f[1]) and np.isnan(f[2]) and got.column("f").null_count == 1


def test_parquet_writer_takes_frames(tmp_path):
    df = frame()
    with pqbloom.ParquetWriter(tmp_path / "t.parquet", df) as w:
        w.write_table(df)
        w.write_table(df.slice(1, 2))
    back = pl.read_parquet(tmp_path / "t.parquet")
    assert back.equals(pl.concat([df, df.slice(1, 2)]))
    assert pqbloom.ParquetFile(tmp_path / "t.parquet").num_row_groups == 2


def test_write_to_dataset_takes_frames(tmp_path):
    df = pl.DataFrame({"k": ["x", "y", "x"], "v": [1, 2, 3]})
    pqbloom.write_to_dataset(df, tmp_path / "d", partition_cols=["k"])
    got = pl.read_parquet(tmp_path / "d" / "**" / "*.parquet", hive_partitioning=True)
    assert got.sort("v").select("k", "v").equals(df)


def test_without_pyarrow_the_columns_go_over_one_by_one(tmp_path):
    df = pl.DataFrame({"i": np.arange(5, dtype=np.int64), "f": [1.0, None, 3.0, 4.0, 5.0],
                       "s": ["a", "b", None, "d", "e"], "b": [True, False, True, True, False],
                       "l": [[1], [], None, [2, 3], [4]]})
    t = pqbloom.Table.from_polars(df, use_arrow=False)
    pqbloom.write_table(t, tmp_path / "t.parquet")
    assert pl.read_parquet(tmp_path / "t.parquet").equals(df)
