"""pqbloom.write_to_dataset: the Hive layout pyarrow writes, read back by pyarrow, DuckDB and pqbloom
(Spark reads it in tests/integration/test_write_dataset_spark.py)."""

from __future__ import annotations

import datetime
import os

import duckdb
import hypothesis.strategies as st
import pyarrow as pa
import pyarrow.dataset as ds
import pyarrow.parquet as pq
import pytest
from hypothesis import HealthCheck, given, settings

import pqbloom
from pqbloom.errors import SchemaError


def rows_of(d: dict, cols) -> list[tuple]:
    """The rows of a column dict as sorted tuples of ``cols`` (partition reads reorder rows and columns)."""
    return sorted(zip(*(d[c] for c in cols)), key=repr)


def data_files(root) -> list[str]:
    return sorted(os.path.relpath(os.path.join(d, f), root) for d, _, fs in os.walk(root) for f in fs)


TABLE = {"k": ["a b", "x/y", None, "é=%", "a b", "plain"], "n": [1, 2, None, 4, 1, 7],
         "v": [1.5, 2.0, 3.0, 4.0, 5.0, 6.0], "s": ["p", None, "r", "s", "t", "u"]}


def test_layout_matches_pyarrow(tmp_path):
    """Same directories as pyarrow's write_to_dataset for the same table (escaping, nulls, key order);
    non-ASCII text is kept as UTF-8 (Spark misreads pyarrow's %C3%A9), which pyarrow reads the same."""
    ascii_k = [k if k is None or k.isascii() else "!*()'\"#:" for k in TABLE["k"]]
    t = {**TABLE, "k": ascii_k}
    pqbloom.write_to_dataset(t, tmp_path / "ascii", partition_cols=["k", "n"])
    pq.write_to_dataset(pa.table(t), tmp_path / "theirs", partition_cols=["k", "n"])
    assert {os.path.dirname(p) for p in data_files(tmp_path / "ascii")} == \
        {os.path.dirname(p) for p in data_files(tmp_path / "theirs")}
    pqbloom.write_to_dataset(TABLE, tmp_path / "ours", partition_cols=["k", "n"])
    ours = {os.path.dirname(p) for p in data_files(tmp_path / "ours")}
    assert "k=é%3D%25/n=4" in ours
    assert "k=x%2Fy/n=2" in ours and "k=__HIVE_DEFAULT_PARTITION__/n=__HIVE_DEFAULT_PARTITION__" in ours
    for p in data_files(tmp_path / "ours"):
        assert pq.read_schema(tmp_path / "ours" / p).names == ["v", "s"]  # partition columns only in paths
        assert os.path.basename(p).startswith("part-") and p.endswith(".parquet")


def test_pyarrow_duckdb_pqbloom_read_it_back(tmp_path):
    root = tmp_path / "ds"
    pqbloom.write_to_dataset(TABLE, root, partition_cols=["k", "n"], compression="zstd",
                             bloom_filter_options={"s": True})
    cols = ["k", "n", "v", "s"]
    want = rows_of(TABLE, cols)
    assert rows_of(pq.read_table(root).to_pydict(), cols) == want
    assert rows_of(ds.dataset(root, partitioning="hive").to_table().to_pydict(), cols) == want
    assert rows_of(pqbloom.read_table(root).to_pydict(), cols) == want
    got = duckdb.sql(f"select k, n, v, s from read_parquet('{root}/**/*.parquet', hive_partitioning=true)").fetchall()
    assert sorted(got, key=repr) == want
    # the write options reach every file: pyarrow sees the codec and finds the Bloom filter of "s"
    for p in data_files(root):
        md = pq.read_metadata(root / p)
        assert md.row_group(0).column(0).compression == "ZSTD"
        assert md.row_group(0).column(1).bloom_filter_offset is not None
        assert md.row_group(0).column(0).bloom_filter_offset is None


def test_partition_types_date_and_bool(tmp_path):
    t = {"d": [datetime.date(2024, 1, 1), datetime.date(2024, 2, 29), None],
         "b": [True, False, True], "x": [1, 2, 3]}
    pqbloom.write_to_dataset(t, tmp_path / "ours", partition_cols=["d", "b"])
    pq.write_to_dataset(pa.table(t), tmp_path / "theirs", partition_cols=["d", "b"])
    assert {os.path.dirname(p) for p in data_files(tmp_path / "ours")} == \
        {os.path.dirname(p) for p in data_files(tmp_path / "theirs")}


def test_existing_files_are_kept_and_new_names_are_unique(tmp_path):
    root = tmp_path / "ds"
    pqbloom.write_to_dataset(TABLE, root, partition_cols=["k"])
    pqbloom.write_to_dataset(TABLE, root, partition_cols=["k"])
    assert pq.read_table(root).num_rows == 2 * len(TABLE["v"])
    assert len(data_files(root)) == 2 * len({k for k in TABLE["k"]})


def test_existing_data_behavior(tmp_path):
    root = tmp_path / "ds"
    pqbloom.write_to_dataset(TABLE, root, partition_cols=["k"])
    with pytest.raises(FileExistsError):
        pqbloom.write_to_dataset(TABLE, root, partition_cols=["k"], existing_data_behavior="error")
    with pytest.raises(ValueError):
        pqbloom.write_to_dataset(TABLE, root, partition_cols=["k"], existing_data_behavior="replace")
    # delete_matching replaces the partitions written to and keeps the others
    pqbloom.write_to_dataset({"k": ["plain"], "n": [0], "v": [0.0], "s": ["z"]}, root, partition_cols=["k"],
                             existing_data_behavior="delete_matching")
    got = pq.read_table(root).to_pydict()
    assert sorted(zip(got["k"], got["v"]), key=repr) == sorted(
        [(k, v) for k, v in zip(TABLE["k"], TABLE["v"]) if k != "plain"] + [("plain", 0.0)], key=repr)


def test_unpartitioned_and_errors(tmp_path):
    visited = []
    assert pqbloom.write_to_dataset(TABLE, tmp_path / "flat", file_visitor=visited.append) is None  # as pyarrow
    files = [w.path for w in visited]
    assert len(files) == 1 and os.path.dirname(files[0]) == str(tmp_path / "flat")
    assert visited[0].size == os.path.getsize(files[0]) and visited[0].metadata.num_rows == len(TABLE["k"])
    assert pq.read_table(tmp_path / "flat").to_pydict() == TABLE
    with pytest.raises(SchemaError, match="nope"):
        pqbloom.write_to_dataset(TABLE, tmp_path / "x", partition_cols=["nope"])
    with pytest.raises(ValueError, match="every column"):
        pqbloom.write_to_dataset({"a": [1]}, tmp_path / "x", partition_cols=["a"])
    with pytest.raises(SchemaError, match="primitive"):
        pqbloom.write_to_dataset({"l": [[1], [2]], "a": [1, 2]}, tmp_path / "x", partition_cols=["l"])


def test_a_failed_write_leaves_nothing(tmp_path, monkeypatch):
    import pqbloom.datasets.write as wd

    real = wd.ParquetWriter
    calls = []

    class FailingThird(real):  # the third file fails mid-write
        def write_table(self, table, row_group_size=None):
            calls.append(1)
            if len(calls) == 3:
                raise OSError("disk full")
            super().write_table(table, row_group_size)

    root = tmp_path / "ds"
    pqbloom.write_to_dataset(TABLE, root, partition_cols=["k"])  # not the failing call's: kept
    before = data_files(root)
    monkeypatch.setattr(wd, "ParquetWriter", FailingThird)
    with pytest.raises(OSError, match="disk full"):
        pqbloom.write_to_dataset(TABLE, root, partition_cols=["k"])
    assert len(calls) == 3 and data_files(root) == before


def test_pyarrow_table_and_pandas_in(tmp_path):
    import pandas as pd

    df = pd.DataFrame({"g": ["a", "b", "a"], "x": pd.array([1, None, 3], dtype="Int64")})
    pqbloom.write_to_dataset(df, tmp_path / "pd", partition_cols=["g"])
    got = pq.read_table(tmp_path / "pd").to_pydict()
    assert rows_of(got, ["g", "x"]) == rows_of({"g": ["a", "b", "a"], "x": [1, None, 3]}, ["g", "x"])
    # the files carry pandas' metadata, and a dataset read applies it as pyarrow's does: x stays Int64
    theirs = pq.read_table(tmp_path / "pd").to_pandas()
    ours = pqbloom.read_table(tmp_path / "pd").to_pandas()
    assert ours["x"].dtype == theirs["x"].dtype == pd.Int64Dtype()
    assert ours["x"].tolist() == theirs["x"].tolist()
    pqbloom.write_to_dataset(pa.Table.from_pandas(df, preserve_index=False), tmp_path / "pa", partition_cols=["g"])
    assert rows_of(pq.read_table(tmp_path / "pa").to_pydict(), ["g", "x"]) == rows_of(got, ["g", "x"])


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.lists(st.tuples(st.one_of(st.none(), st.text(max_size=4)), st.one_of(st.none(), st.integers(-3, 3)),
                          st.integers(-10**6, 10**6)), min_size=1, max_size=30))
def test_any_values_round_trip_through_pyarrow(tmp_path_factory, rows):
    root = tmp_path_factory.mktemp("h")
    t = {"k": [r[0] for r in rows], "n": [r[1] for r in rows], "x": [r[2] for r in rows]}
    pqbloom.write_to_dataset(t, root, partition_cols=["k", "n"])
    got = pq.read_table(root, partitioning=ds.partitioning(
        pa.schema([("k", pa.string()), ("n", pa.int64())]), flavor="hive")).to_pydict()
    # Hive has no empty-string partition: an empty string reads back as null (as in Spark and Hive)
    want = {**t, "k": [None if k == "" else k for k in t["k"]]}
    assert rows_of(got, ["k", "n", "x"]) == rows_of(want, ["k", "n", "x"])


def test_hidden_partition_key_is_refused(tmp_path):
    # a "_k=v" directory is skipped by pyarrow's dataset discovery: the data would be written but never read
    data = {"_k": ["a", "b"], "v": [1, 2]}
    pq.write_to_dataset(pa.table(data), tmp_path / "pa", partition_cols=["_k"])
    assert pq.read_table(tmp_path / "pa").num_rows == 0
    with pytest.raises(ValueError, match="hidden"):
        pqbloom.write_to_dataset(data, tmp_path / "ours", partition_cols=["_k"])
    assert not any((tmp_path / "ours").rglob("*.parquet"))
