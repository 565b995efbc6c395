"""read_table's sources of many files (a list, a glob, a directory, pqbloom.dataset) against pyarrow's
pq.read_table / pyarrow.dataset and DuckDB's read_parquet on the same files (written by pyarrow)."""

from __future__ import annotations

import glob
import os

import duckdb
import pyarrow as pa
import pyarrow.dataset as ds
import pyarrow.parquet as pq
import pytest

import pqbloom
from pqbloom.errors import SchemaError


@pytest.fixture
def files(tmp_path):
    """Four pyarrow-written files, one in a subdirectory."""
    (tmp_path / "sub").mkdir()
    paths = []
    for i, name in enumerate(["b.parquet", "a.parquet", "c.parquet", "sub/d.parquet"]):
        t = pa.table({"id": pa.array([i * 10 + j for j in range(5)], pa.int64()),
                      "s": [f"v{i}-{j}" if j != 2 else None for j in range(5)]})
        pq.write_table(t, tmp_path / name, row_group_size=2)
        paths.append(str(tmp_path / name))
    return tmp_path, paths


def test_list_of_files_in_the_order_given(files):
    _, paths = files
    order = [paths[2], paths[0], paths[3]]
    assert pqbloom.read_table(order).to_pydict() == pq.read_table(order).to_pydict()
    assert pqbloom.read_table(tuple(order), columns=["s"]).to_pydict() == pq.read_table(order, columns=["s"]).to_pydict()


def test_glob(files):
    root, _ = files
    for pattern in [f"{root}/*.parquet", f"{root}/**/*.parquet", f"{root}/[ab].parquet"]:
        matched = sorted(glob.glob(pattern, recursive=True))
        got = pqbloom.read_table(pattern).to_pydict()
        assert got == pq.read_table(matched).to_pydict()  # pyarrow takes no glob: the same files as a list
        duck = duckdb.sql(f"select id, s from read_parquet('{pattern}') order by id").fetchall()
        assert sorted(zip(got["id"], got["s"])) == duck
    with pytest.raises(FileNotFoundError):
        pqbloom.read_table(f"{root}/*.nothing")


def test_directory_and_dataset_object(files):
    root, _ = files
    want = pq.read_table(root).to_pydict()
    assert pqbloom.read_table(root).to_pydict() == want
    d = pqbloom.dataset(root)
    assert d.files == sorted(d.files) and len(d) == 4
    assert pqbloom.read_table(d).to_pydict() == want
    assert d.to_table(columns=["id"]).to_pydict() == pq.read_table(root, columns=["id"]).to_pydict()
    assert d.schema.names == ["id", "s"]
    # a filter through the dataset: the same rows as pyarrow's filtered read
    f = [("id", ">=", 22), ("s", "!=", "v3-4")]
    assert pqbloom.read_table(d, filters=f).to_pydict() == pq.read_table(root, filters=f).to_pydict()


def test_hive_dataset_plans_and_explain(tmp_path):
    t = pa.table({"k": ["x", "y", "x", "z", "y", "x"], "id": list(range(6)), "v": [1.0, 2, 3, 4, 5, 6]})
    pq.write_to_dataset(t, tmp_path / "h", partition_cols=["k"])
    d = pqbloom.dataset(tmp_path / "h", partitioning="hive")
    assert d.partition_columns == ["k"] and d.schema.names == ["id", "v", "k"]
    flt = (pqbloom.field("k") == "x") & (pqbloom.field("id") >= 2)
    planned = [(os.path.relpath(fr.path, tmp_path / "h").split(os.sep)[0], plan.row_groups())
               for fr, plan in d.plan_files(flt)]
    assert planned == [("k=x", [0])]  # the other partitions are never opened
    ex = pqbloom.Explain()
    got = pqbloom.read_table(d, filters=flt, explain=ex).to_pydict()
    want = ds.dataset(tmp_path / "h", partitioning="hive").to_table(
        filter=(ds.field("k") == "x") & (ds.field("id") >= 2)).to_pydict()
    assert sorted(zip(got["id"], got["k"])) == sorted(zip(want["id"], want["k"]))
    assert ex.files_total == 3 and ex.files_pruned_partition == 2
    # without partitioning the directory names are not columns
    flat = pqbloom.dataset(tmp_path / "h", partitioning=None)
    assert flat.read().column_names == ["id", "v"]
    with pytest.raises(ValueError):
        pqbloom.dataset(tmp_path / "h", partitioning="directory")


def test_files_that_disagree_are_an_error_naming_both(tmp_path):
    pq.write_table(pa.table({"id": [1], "s": ["a"]}), tmp_path / "a.parquet")
    pq.write_table(pa.table({"id": [2.5], "s": ["b"]}), tmp_path / "b.parquet")
    with pytest.raises(SchemaError, match=r"a\.parquet.*b\.parquet|b\.parquet.*a\.parquet"):
        pqbloom.read_table([str(tmp_path / "a.parquet"), str(tmp_path / "b.parquet")])
    # the columns both have, with the same type, read as pyarrow reads them
    paths = [str(tmp_path / "a.parquet"), str(tmp_path / "b.parquet")]
    assert pqbloom.read_table(paths, columns=["s"]).to_pydict() == pq.read_table(paths, columns=["s"]).to_pydict()


def test_bad_lists(tmp_path):
    pq.write_table(pa.table({"id": [1]}), tmp_path / "a.parquet")
    with pytest.raises(FileNotFoundError):
        pqbloom.read_table([str(tmp_path / "a.parquet"), str(tmp_path / "missing.parquet")])
    with pytest.raises(IsADirectoryError):
        pqbloom.read_table([str(tmp_path)])
    with pytest.raises(FileNotFoundError):
        pqbloom.read_table([])
    with pytest.raises(TypeError):
        pqbloom.read_table([1, 2])
