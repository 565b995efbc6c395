"""``Table.slice`` and ``Column.slice`` take pyarrow's (offset, length), not (start, stop): every call is
compared with pyarrow's ``Table.slice`` / ``Array.slice`` on the same data (flat, dictionary and nested
columns, nulls), including the edges pyarrow defines (an offset past the end, a length past it, zero)
and its errors (negative offset or length)."""

from __future__ import annotations

import pandas as pd
import pyarrow as pa
import pytest

import pqbloom

ROWS = 12
DATA = pa.table({
    "i": pa.array([None if i % 5 == 0 else i * 7 for i in range(ROWS)], pa.int64()),
    "s": pa.array([f"v{i}" if i % 4 else None for i in range(ROWS)]),
    "l": pa.array([[j for j in range(i % 3)] if i % 6 else None for i in range(ROWS)], pa.list_(pa.int32())),
    "st": pa.array([{"a": i, "b": str(i)} if i % 7 else None for i in range(ROWS)],
                   pa.struct([("a", pa.int16()), ("b", pa.string())])),
})
CASES = [(0, None), (3, None), (10, 3), (2, 5), (0, 0), (5, 0), (11, 1), (12, None), (12, 4), (40, 2), (1, 100)]


@pytest.mark.parametrize("offset,length", CASES)
def test_table_slice_is_offset_and_length(offset, length):
    t = pqbloom.Table.from_arrow(DATA)
    args = (offset,) if length is None else (offset, length)
    got = t.slice(*args)
    want = DATA.slice(*args)
    assert got.num_rows == want.num_rows
    assert got.to_arrow().equals(want)
    assert got.to_pydict() == want.to_pydict()


@pytest.mark.parametrize("offset,length", CASES)
@pytest.mark.parametrize("name", DATA.column_names)
def test_column_slice_is_offset_and_length(name, offset, length):
    col = pqbloom.Table.from_arrow(DATA).column(name)
    args = (offset,) if length is None else (offset, length)
    got = col.slice(*args)
    want = DATA.column(name).combine_chunks().slice(*args)
    assert len(got) == len(want)
    assert got.to_arrow().equals(want)


def test_keywords_as_pyarrow():
    t = pqbloom.Table.from_arrow(DATA)
    assert t.slice(length=3).to_arrow().equals(DATA.slice(length=3))
    assert t.slice(offset=9).to_arrow().equals(DATA.slice(offset=9))
    assert t.column("i").slice(offset=2, length=2).to_pylist() == DATA.column("i").slice(offset=2, length=2).to_pylist()


def test_dictionary_column_keeps_its_dictionary():
    df = pd.DataFrame({"c": pd.Categorical(["b", "a", None, "b", "c"], categories=["c", "b", "a"])})
    t = pqbloom.Table.from_pandas(df)
    got = t.slice(1, 3).to_pandas()["c"]
    want = pa.Table.from_pandas(df).slice(1, 3).to_pandas()["c"]
    assert list(got.cat.categories) == list(want.cat.categories)
    assert got.astype(object).tolist() == want.astype(object).tolist()


def test_column_less_table_keeps_pyarrows_row_count():
    t = pqbloom.Table([], num_rows=10)
    assert t.slice(4, 3).num_rows == pa.table({"x": range(10)}).drop_columns(["x"]).slice(4, 3).num_rows == 3
    assert t.slice(8, 5).num_rows == 2


def test_negative_arguments_raise_as_pyarrow():
    t = pqbloom.Table.from_arrow(DATA)
    with pytest.raises(IndexError):
        DATA.slice(-1)
    with pytest.raises(IndexError):
        t.slice(-1)
    with pytest.raises(IndexError):
        t.column("s").slice(-2, 1)
    with pytest.raises(ValueError):
        DATA.column("i").chunk(0).slice(0, -1)
    with pytest.raises(ValueError):
        t.column("l").slice(0, -1)
    with pytest.raises(ValueError):
        t.slice(2, -1)
