"""What ``print()`` shows of the metadata objects is pyarrow's text, the header's class name and address
aside (``print(pf.metadata)``, ``print(chunk.statistics)`` in a pyarrow.parquet script); a schema compares
equal to the pyarrow schema it matches, and has pyarrow's ``to_string``."""

from __future__ import annotations

import pyarrow as pa
import pyarrow.parquet as papq
import pytest

import pqbloom


@pytest.fixture(scope="module")
def path(tmp_path_factory):
    p = tmp_path_factory.mktemp("text") / "t.parquet"
    t = pa.table({"a": pa.array(range(10)), "s": [f"v{i % 3}" for i in range(10)],
                  "c": pa.array([i * 0.5 if i % 4 else None for i in range(10)])})
    papq.write_table(t, p, row_group_size=4, sorting_columns=[papq.SortingColumn(0)])  # pyarrow's file
    return p


def _body(obj: object) -> list[str]:
    """The text's lines, the first (``<module.Class object at 0x...>``) left out, and the nested header too."""
    return [line for line in str(obj).split("\n") if not line.strip().startswith("<")]


def test_file_row_group_chunk_and_statistics_texts_are_pyarrows(path):
    ours, theirs = pqbloom.read_metadata(path), papq.read_metadata(path)
    assert str(ours).split("\n")[0].startswith("<pqbloom.FileMetaData object at 0x")
    assert _body(ours) == _body(theirs)
    assert _body(ours.row_group(1)) == _body(theirs.row_group(1))
    for j in range(3):
        assert _body(ours.row_group(0).column(j)) == _body(theirs.row_group(0).column(j))
        assert _body(ours.row_group(0).column(j).statistics) == _body(theirs.row_group(0).column(j).statistics)


def test_a_schema_equals_the_pyarrow_schema_it_matches(path):
    ours = pqbloom.read_table(path).schema
    assert ours == papq.read_table(path).schema
    assert ours != pa.schema([("a", pa.int32())])
    assert ours.to_string() == papq.read_schema(path).to_string()
