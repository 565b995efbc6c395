"""Reader hardening, part 2: schema depth, allocation failures, memory ceilings on every allocation,
legacy LZ4 bounds and the parquet-cpp < 3.0 v2 page compatibility case (issue #15, items 7, 8, 10, 13, 14).

Hostile files are built from real pages (pqbloom's or pyarrow's) with edited headers or footers; the
peers (pyarrow, DuckDB) say what a file holds or whether it is readable at all.
"""

from __future__ import annotations

import io
import sys

import duckdb
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import pqbloom
from pqbloom import cli
from pqbloom.errors import SchemaError, UnsupportedError

#: pyarrow's default schema_depth_limit: levels counting the root (DuckDB reads up to 500)
PYARROW_DEPTH_LIMIT = 100

# -- 7. deeply nested schemas -------------------------------------------------------------------------


def _nested_structs(levels: int) -> pa.Table:
    """A table whose one column is ``levels`` structs deep, around an int32 leaf: two rows, one null."""
    t: pa.DataType = pa.int32()
    v: object = 5
    for _ in range(levels):
        t = pa.struct([pa.field("f", t)])
        v = {"f": v}
    return pa.table({"c": pa.array([v, None], type=t)})


def _deep_file(tmp_path, levels: int) -> str:
    path = str(tmp_path / f"deep{levels}.parquet")
    pq.write_table(_nested_structs(levels), path)
    return path


def _cli(*args: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    old = sys.stdout, sys.stderr
    sys.stdout, sys.stderr = out, err
    try:
        rc = cli.main(list(args))
    finally:
        sys.stdout, sys.stderr = old
    return rc, out.getvalue(), err.getvalue()


def _cli_commands(path: str, levels: int, tmp_path) -> list[list[str]]:
    leaf = "c" + ".f" * levels
    return [["schema", path], ["inspect", path, "--pages"], ["head", path, "-n", "2"],
            ["query", path, "-f", f"{leaf} == 5", "--explain"],
            ["probe", path, leaf, "5"], ["layout", path, "-o", str(tmp_path / "layout.svg")]]


def test_footer_nested_1000_groups_is_a_typed_error_everywhere(tmp_path):
    # pyarrow (schema_depth_limit 100) and DuckDB (500 levels) both refuse this file; before the fix
    # pqbloom raised RecursionError from ParquetFile(), read_schema and every CLI command
    path = _deep_file(tmp_path, 1000)
    with pytest.raises(OSError, match="too deeply nested"):
        pq.read_table(path)
    with pytest.raises(duckdb.Error, match="nested more than"):
        duckdb.sql(f"select * from '{path}'").fetchall()
    for fn in (pqbloom.ParquetFile, pqbloom.read_schema, pqbloom.read_table, pqbloom.read_metadata):
        with pytest.raises(UnsupportedError, match="1,002 levels deep"):
            fn(path)
    for cmd in _cli_commands(path, 1000, tmp_path):
        rc, _, err = _cli(*cmd)
        assert rc == 1 and "levels deep" in err and "ecursion" not in err, (cmd, err)


def test_deepest_schema_pyarrow_reads_is_read_whole(tmp_path):
    # the deepest schema pyarrow's default limit accepts: read equal to pyarrow everywhere, even from a
    # call stack already 400 frames deep (every walk has its margin)
    levels = PYARROW_DEPTH_LIMIT - 2  # struct levels; with the root and the leaf, PYARROW_DEPTH_LIMIT
    path = _deep_file(tmp_path, levels)
    expected = pq.read_table(path)
    assert expected.column("c").to_pylist()[1] is None
    deeper = _deep_file(tmp_path, levels + 1)
    with pytest.raises(OSError, match="too deeply nested"):
        pq.read_table(deeper)
    with pytest.raises(UnsupportedError, match="levels deep"):
        pqbloom.ParquetFile(deeper)

    def check() -> None:
        pf = pqbloom.ParquetFile(path)
        str(pf.table_schema), str(pf.schema), repr(pf.metadata.schema[1])
        t = pf.read()
        repr(t)
        assert t.to_arrow().equals(expected)
        assert t.to_pylist() == expected.to_pylist()
        for batch in pf.iter_batches(batch_size=1):
            batch.to_pylist()
        leaf = "c" + ".f" * levels
        hit = pqbloom.read_table(path, filters=pqbloom.field(leaf) == 5)
        assert hit.to_pylist() == expected.slice(0, 1).to_pylist()
        assert pqbloom.read_table(path, columns=[leaf]).column(leaf).to_pylist() == [5, None]
        out = str(tmp_path / "back.parquet")
        pqbloom.write_table(t, out)
        assert pq.read_table(out).equals(expected)
        pqbloom.write_table(expected, out)
        assert pq.read_table(out).equals(expected)
        for cmd in _cli_commands(path, levels, tmp_path):
            rc, _, err = _cli(*cmd)
            assert rc == 0, (cmd, err)

    def deep(k: int) -> None:
        check() if k == 0 else deep(k - 1)

    deep(400)


def test_writing_a_schema_deeper_than_readable_is_a_schema_error(tmp_path):
    levels = PYARROW_DEPTH_LIMIT + 10
    spec = "struct<f: " * levels + "int32" + ">" * levels
    with pytest.raises(SchemaError, match="levels deep"):
        pqbloom.Schema.from_types({"c": spec})
    table = _nested_structs(1000)
    with pytest.raises(SchemaError, match="levels deep"):
        pqbloom.write_table(table, str(tmp_path / "x.parquet"))
    with pytest.raises(SchemaError, match="levels deep"):
        pqbloom.write_table({"c": table.column("c").to_pylist()}, str(tmp_path / "y.parquet"))
    assert not list(tmp_path.iterdir())
