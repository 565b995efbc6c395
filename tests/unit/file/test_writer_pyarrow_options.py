"""write_table's compression_level, sorting_columns and version, as pyarrow names and writes them: the
footers and the data checked with pyarrow (and DuckDB), against what pyarrow writes for the same table."""

from __future__ import annotations

import duckdb
import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import pqbloom
from pqbloom.errors import SchemaError, UnsupportedError

N = 20_000
DATA = {"id": np.arange(N, dtype=np.int64), "word": [f"w{i % 700:04d}-{i % 13}" for i in range(N)],
        "x": (np.arange(N) % 97).astype(np.float64)}


def chunk_sizes(path) -> list[int]:
    md = pq.read_metadata(path)
    return [md.row_group(0).column(j).total_compressed_size for j in range(md.num_columns)]


@pytest.mark.parametrize("codec,low,high", [("zstd", 1, 19), ("gzip", 1, 9), ("brotli", 0, 11)])
def test_compression_level_is_applied(tmp_path, codec, low, high):
    sizes = {}
    for level in (low, high):
        p = tmp_path / f"{level}.parquet"
        pqbloom.write_table(DATA, p, compression=codec, compression_level=level, use_dictionary=False)
        assert pq.read_table(p).to_pydict() == pa.table(DATA).to_pydict()
        assert duckdb.sql(f"select count(*), sum(id) from '{p}'").fetchall()[0] == (N, N * (N - 1) // 2)
        sizes[level] = sum(chunk_sizes(p))
    assert sizes[high] < sizes[low]


def test_compression_level_per_column(tmp_path):
    p = tmp_path / "t.parquet"
    pqbloom.write_table(DATA, p, compression={"id": "zstd", "word": "gzip", "x": "snappy"},
                        compression_level={"id": 19, "word": 1}, use_dictionary=False)
    q = tmp_path / "u.parquet"
    pqbloom.write_table(DATA, q, compression={"id": "zstd", "word": "gzip", "x": "snappy"},
                        compression_level={"id": 1, "word": 9}, use_dictionary=False)
    a, b = chunk_sizes(p), chunk_sizes(q)
    assert a[0] < b[0] and a[1] > b[1] and a[2] == b[2]
    assert pq.read_table(p).equals(pq.read_table(q))
    # one level for all with per-column codecs applies where the codec has levels (snappy has none)
    pqbloom.write_table(DATA, tmp_path / "v.parquet", compression={"id": "zstd", "x": "snappy"}, compression_level=5)


@pytest.mark.parametrize("codec,level", [("zstd", 23), ("gzip", 10), ("gzip", -1), ("brotli", 12), ("lz4_raw", 1),
                                          ("snappy", 1), ("none", 1), ("zstd", 2.5)])
def test_compression_level_out_of_range(tmp_path, codec, level):
    with pytest.raises(ValueError):
        pqbloom.write_table(DATA, tmp_path / "t.parquet", compression=codec, compression_level=level)
    assert not (tmp_path / "t.parquet").exists()


def test_compression_level_names_a_missing_column(tmp_path):
    with pytest.raises(SchemaError):
        pqbloom.write_table(DATA, tmp_path / "t.parquet", compression="zstd", compression_level={"nope": 3})


def test_sorting_columns_as_pyarrow_writes_them(tmp_path):
    t = pa.table({"a": [1, 2, 3], "b": ["z", "y", None], "c": [0.5, 0.5, 0.1]})
    spec = [pq.SortingColumn(0), pq.SortingColumn(1, descending=True, nulls_first=True)]
    pq.write_table(t, tmp_path / "pa.parquet", sorting_columns=spec)
    want = pq.read_metadata(tmp_path / "pa.parquet").row_group(0).sorting_columns
    for i, ours in enumerate([spec, ["a", ("b", "descending")], [("a", "ascending"), ("b", "descending")]]):
        p = tmp_path / f"ours{i}.parquet"
        pqbloom.write_table(t, p, sorting_columns=ours, row_group_size=2)
        md = pq.read_metadata(p)
        assert md.num_row_groups == 2
        for rg in range(2):
            got = md.row_group(rg).sorting_columns
            if i == 0:
                assert got == want
            else:  # tuples have no null placement: nulls last, as pyarrow's SortingColumn.from_ordering
                assert [(s.column_index, s.descending) for s in got] == [(0, False), (1, True)]
                assert not any(s.nulls_first for s in got)
    # pqbloom's own metadata object gives the same
    mine = pqbloom.read_metadata(tmp_path / "ours0.parquet").row_group(0).sorting_columns
    assert [(s.column_index, s.descending, s.nulls_first) for s in mine] == \
        [(s.column_index, s.descending, s.nulls_first) for s in want]
    assert pqbloom.read_metadata(tmp_path / "pa.parquet").row_group(0).sorting_columns == mine
    p = tmp_path / "none.parquet"
    pqbloom.write_table(t, p)
    assert pq.read_metadata(p).row_group(0).sorting_columns == ()
    assert pqbloom.read_metadata(p).row_group(0).sorting_columns == ()


def test_sorting_columns_nested_leaf_and_errors(tmp_path):
    t = {"s": [{"k": 1, "v": "a"}, {"k": 2, "v": "b"}], "z": [1, 2]}
    pqbloom.write_table(t, tmp_path / "n.parquet", sorting_columns=["s.k", "z"])
    assert [s.column_index for s in pq.read_metadata(tmp_path / "n.parquet").row_group(0).sorting_columns] == [0, 2]
    with pytest.raises(SchemaError):
        pqbloom.write_table(t, tmp_path / "e.parquet", sorting_columns=["nope"])
    with pytest.raises(SchemaError):
        pqbloom.write_table(t, tmp_path / "e.parquet", sorting_columns=[pq.SortingColumn(5)])
    with pytest.raises(ValueError):
        pqbloom.write_table(t, tmp_path / "e.parquet", sorting_columns=[("z", "sideways")])


VERSIONED = pa.table({
    "u8": pa.array([1, 2, None], pa.uint8()), "u16": pa.array([1, 2, 3], pa.uint16()),
    "u32": pa.array([1, None, 2**32 - 1], pa.uint32()), "u64": pa.array([1, 2, 2**64 - 1], pa.uint64()),
    "ns": pa.array([1000, None, -2000], pa.timestamp("ns")), "nsz": pa.array([1000, 2000, 3000], pa.timestamp("ns", "UTC")),
    "us": pa.array([1, 2, 3], pa.timestamp("us")), "ms": pa.array([1, 2, 3], pa.timestamp("ms", "UTC")),
    "t64": pa.array([1000, 2000, None], pa.time64("ns")), "s": ["a", None, "c"],
})


def footer_types(path) -> list[tuple]:
    md = pq.read_metadata(path)
    return [(c.name, c.physical_type, str(c.logical_type), c.converted_type)
            for c in (md.schema.column(i) for i in range(md.num_columns))]


@pytest.mark.parametrize("version", ["1.0", "2.4", "2.6"])
def test_version_types_match_pyarrow(tmp_path, version):
    pq.write_table(VERSIONED, tmp_path / "pa.parquet", version=version)
    pqbloom.write_table(VERSIONED, tmp_path / "pq.parquet", version=version)
    assert footer_types(tmp_path / "pq.parquet") == footer_types(tmp_path / "pa.parquet")
    assert pq.read_metadata(tmp_path / "pq.parquet").format_version == \
        pq.read_metadata(tmp_path / "pa.parquet").format_version
    assert pq.read_table(tmp_path / "pq.parquet").equals(pq.read_table(tmp_path / "pa.parquet"))
    assert pqbloom.read_table(tmp_path / "pq.parquet").to_arrow().equals(pq.read_table(tmp_path / "pa.parquet"))
    got = duckdb.sql(f"select * from '{tmp_path / 'pq.parquet'}'").fetchall()
    assert got == duckdb.sql(f"select * from '{tmp_path / 'pa.parquet'}'").fetchall()


def test_default_version_is_pyarrows(tmp_path):
    """No version: pyarrow's default, "2.6" (nanosecond timestamps, UINT_32, footer version 2); None
    keeps pqbloom's earlier default (2.6's types in a footer of version 1)."""
    pq.write_table(VERSIONED, tmp_path / "pa.parquet")
    pqbloom.write_table(VERSIONED, tmp_path / "pq.parquet")
    assert footer_types(tmp_path / "pq.parquet") == footer_types(tmp_path / "pa.parquet")
    assert pq.read_metadata(tmp_path / "pq.parquet").format_version == "2.6"
    assert pqbloom.read_metadata(tmp_path / "pq.parquet").format_version == "2.6"
    pqbloom.write_table(VERSIONED, tmp_path / "none.parquet", version=None)
    assert footer_types(tmp_path / "none.parquet") == footer_types(tmp_path / "pa.parquet")
    assert pq.read_metadata(tmp_path / "none.parquet").format_version == "1.0"


def test_version_errors(tmp_path):
    lossy = pa.table({"ns": pa.array([1001], pa.timestamp("ns"))})
    with pytest.raises(pa.ArrowInvalid):  # pyarrow refuses too
        pq.write_table(lossy, tmp_path / "pa.parquet", version="2.4")
    with pytest.raises(SchemaError, match="would lose data"):
        pqbloom.write_table(lossy, tmp_path / "pq.parquet", version="2.4")
    pqbloom.write_table(lossy, tmp_path / "pq.parquet", version="2.6")
    assert pq.read_table(tmp_path / "pq.parquet").equals(lossy)
    with pytest.raises(ValueError, match="version"):
        pqbloom.write_table(lossy, tmp_path / "x.parquet", version="3.0")
    nested = pa.table({"l": pa.array([[1000]], pa.list_(pa.timestamp("ns")))})
    with pytest.raises(UnsupportedError):
        pqbloom.write_table(nested, tmp_path / "x.parquet", version="2.4")
    assert not (tmp_path / "x.parquet").exists()


def test_lz4_names_the_codec_pyarrow_writes(tmp_path):
    # a pyarrow user writes compression="lz4"; pyarrow stores LZ4_RAW for it, and so must we
    ours, theirs = tmp_path / "ours.parquet", tmp_path / "theirs.parquet"
    pqbloom.write_table(DATA, ours, compression="lz4")
    pq.write_table(pa.table(DATA), theirs, compression="lz4")
    codec = pq.read_metadata(theirs).row_group(0).column(0).compression
    assert [pq.read_metadata(ours).row_group(0).column(j).compression for j in range(3)] == [codec] * 3
    assert pqbloom.read_metadata(ours).row_group(0).column(0).compression == "LZ4_RAW"
    assert pq.read_table(ours).equals(pq.read_table(theirs))
