"""Categoricals (Arrow dictionaries) keep their whole dictionary, in its order, through pqbloom as through
pyarrow: the oracle is pyarrow's own round trip (``pq.write_table`` then ``pq.read_table(...).to_pandas()``)
of the same frame. Unused categories stay, the order stays (an ordered categorical's ``<`` depends on it),
for a pyarrow Table (``pa.Table.from_pandas(df)``) and a pandas frame given to pqbloom's writer, read back by
pqbloom and by pyarrow."""

from __future__ import annotations

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import pqbloom

CASES = {
    # values in another order than the categories, categories nothing uses, nulls
    "str": (["lo", "mid", None, "lo", "mid"], ["hi", "mid", "lo", "unused"]),
    "int": ([3, 1, None, 3], [5, 3, 1, 9]),
    "float": ([3.5, 1.0, None], [9.0, 3.5, 1.0]),
    "all null": ([None, None, None], ["b", "a"]),
    "no rows": ([], ["b", "a"]),
}


def _described(s: pd.Series):
    if str(s.dtype) != "category":
        return str(s.dtype), [None if pd.isna(v) else v for v in s.astype(object)]
    return "category", list(s.cat.categories), s.cat.ordered, [None if pd.isna(v) else v for v in s.astype(object)]


@pytest.mark.parametrize("row_group_size", [None, 2])
@pytest.mark.parametrize("source", ["pyarrow table", "pandas frame"])
@pytest.mark.parametrize("ordered", [True, False])
@pytest.mark.parametrize("case", sorted(CASES))
def test_categories_survive_as_in_pyarrows_round_trip(tmp_path, case, ordered, source, row_group_size):
    values, categories = CASES[case]
    df = pd.DataFrame({"s": pd.Categorical(values, categories=categories, ordered=ordered)})
    kw = {} if row_group_size is None else {"row_group_size": row_group_size}
    ref = tmp_path / "pyarrow.parquet"
    pq.write_table(pa.Table.from_pandas(df), ref, **kw)
    want = _described(pq.read_table(ref).to_pandas()["s"])
    out = tmp_path / "pqbloom.parquet"
    pqbloom.write_table(pa.Table.from_pandas(df) if source == "pyarrow table" else df, out, **kw)
    assert _described(pqbloom.read_table(out).to_pandas()["s"]) == want
    assert _described(pq.read_table(out).to_pandas()["s"]) == want
    assert _described(pqbloom.read_table(ref).to_pandas()["s"]) == want


def test_ordered_comparison_means_the_same_after_the_round_trip(tmp_path):
    df = pd.DataFrame({"s": pd.Categorical(["lo", "mid", "hi", None], categories=["hi", "mid", "lo", "unused"],
                                           ordered=True)})
    before = (df["s"] < "lo").tolist()
    assert before == [False, True, True, False]
    out = tmp_path / "t.parquet"
    pqbloom.write_table(pa.Table.from_pandas(df), out)
    for back in (pqbloom.read_table(out).to_pandas()["s"], pq.read_table(out).to_pandas()["s"]):
        assert back.cat.ordered
        assert list(back.cat.categories) == ["hi", "mid", "lo", "unused"]
        assert (back < "lo").tolist() == before


def test_from_arrow_keeps_the_dictionary_in_memory():
    arr = pa.DictionaryArray.from_arrays(pa.array([2, 0, None, 2], pa.int8()), pa.array(["z", "y", "x", "w"]),
                                         ordered=True)
    t = pqbloom.Table.from_arrow(pa.table({"c": arr}))
    back = t.to_arrow().column("c").combine_chunks()
    assert back.type == arr.type
    assert back.dictionary.to_pylist() == ["z", "y", "x", "w"]
    assert back.to_pylist() == arr.to_pylist()
    s = t.to_pandas()["c"]
    assert list(s.cat.categories) == ["z", "y", "x", "w"] and s.cat.ordered
