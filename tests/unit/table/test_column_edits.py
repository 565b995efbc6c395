"""pyarrow's column edits on a table (add, append, set, remove a column; replace the schema metadata; drop
the rows with nulls) give pyarrow's table."""

from __future__ import annotations

import datetime as dt

import numpy as np
import pyarrow as pa
import pytest

import pqbloom


@pytest.fixture
def tables() -> tuple[pa.Table, pqbloom.Table]:
    theirs = pa.table({"id": pa.array([1, 2, None, 4], pa.int32()), "s": ["a", None, "c", "d"],
                       "ts": pa.array([dt.datetime(2024, 1, d) for d in (1, 2, 3, 4)], pa.timestamp("ms", "UTC"))},
                      metadata={"k": "v"})
    return theirs, pqbloom.Table.from_arrow(theirs)


def _same(ours: pqbloom.Table, theirs: pa.Table) -> None:
    assert ours.to_arrow().equals(theirs, check_metadata=True), (ours.to_arrow(), theirs)


@pytest.mark.parametrize("values", [pa.array([9, 8, 7, 6]), [9, 8, 7, 6], np.array([9, 8, 7, 6]),
                                    pa.chunked_array([[9, 8], [7, 6]])])
def test_add_append_and_set_a_column(tables, values):
    theirs, ours = tables
    arr = pa.array([9, 8, 7, 6])
    _same(ours.append_column("z", values), theirs.append_column("z", arr))
    _same(ours.add_column(1, "z", values), theirs.add_column(1, "z", arr))
    _same(ours.add_column(0, pa.field("z", pa.int64()), values), theirs.add_column(0, "z", arr))
    # the replaced column's stored type (a UTC timestamp) does not go to the new one
    _same(ours.set_column(2, "ts", values), theirs.set_column(2, "ts", arr))


def test_a_column_of_another_length_is_refused(tables):
    _, ours = tables
    with pytest.raises(pqbloom.errors.SchemaError):
        ours.append_column("z", [1, 2])


def test_remove_column_replace_metadata_and_drop_null(tables):
    theirs, ours = tables
    _same(ours.remove_column(0), theirs.remove_column(0))
    _same(ours.replace_schema_metadata({"a": "b"}), theirs.replace_schema_metadata({"a": "b"}))
    _same(ours.replace_schema_metadata(), theirs.replace_schema_metadata())
    _same(ours.drop_null(), theirs.drop_null())
    assert ours.column("id").num_chunks == 1
    with pytest.raises(IndexError):
        ours.remove_column(3)
