"""``str()`` of a table and of a column is pyarrow's text (``print(table)`` in a pyarrow script)."""

from __future__ import annotations

import pyarrow as pa

import pqbloom


def _tables() -> tuple[pa.Table, pqbloom.Table]:
    theirs = pa.table({"id": pa.array([1, 2, None], pa.int64()), "name": ["a", None, "c"],
                       "x": pa.array([1.5, 2.5, 3.5], pa.float32())})
    return theirs, pqbloom.Table.from_arrow(theirs)


def test_str_of_a_table_is_pyarrows():
    theirs, ours = _tables()
    assert str(ours) == str(theirs)


def test_str_of_a_column_is_pyarrows():
    theirs, ours = _tables()
    assert str(ours.column("name")) == str(theirs.column("name"))


def test_repr_stays_pqbloom_s_own():
    _, ours = _tables()
    assert repr(ours).startswith("Table(3 rows")
