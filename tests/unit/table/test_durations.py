"""Arrow durations, flat and inside structs and lists, as pyarrow handles them: the oracle is pyarrow on the
same file (its ``to_pydict``, ``to_pylist``, ``to_pandas`` and filtered ``read_table``) or on the same data.

* read: ``to_pydict()`` / ``to_pylist()`` give ``datetime.timedelta`` (``pandas.Timedelta`` for
  nanoseconds), not the stored INT64 counts; ``to_pandas()`` gives timedeltas inside structs and lists too;
* write: pyarrow tables, pandas frames and Python dicts with durations inside structs and lists are written
  (as pyarrow writes them: INT64 counts, the unit in the stored Arrow schema);
* filters and Bloom filter probes take ``timedelta`` and ``numpy.timedelta64`` literals on duration columns.
"""

from __future__ import annotations

import datetime as dt

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import pqbloom
from pqbloom.errors import LiteralTypeError, UnsupportedError

td = dt.timedelta


def _table() -> pa.Table:
    return pa.table({
        "s": pa.array([3, None, -2, 0, 86_400], pa.duration("s")),
        "ms": pa.array([1000, None, -5, 1500, 7], pa.duration("ms")),
        "us": pa.array([1, 2, None, -1, 10**12], pa.duration("us")),
        "ns": pa.array([1, None, 1000, -7, 10**15 + 3], pa.duration("ns")),
        "st": pa.array([{"x": 1000, "y": 1}, None, {"x": None, "y": 2}, {"x": -3, "y": 3}, {"x": 0, "y": 4}],
                       pa.struct([("x", pa.duration("us")), ("y", pa.int32())])),
        "l": pa.array([[1, 2], None, [], [None, 5], [86_400]], pa.list_(pa.duration("s"))),
        "ln": pa.array([[1, 1001], None, [None], [], [3]], pa.list_(pa.duration("ns"))),
    })


@pytest.fixture(scope="module")
def written(tmp_path_factory) -> str:
    path = str(tmp_path_factory.mktemp("durations") / "pyarrow.parquet")
    pq.write_table(_table(), path)
    return path


def _same_values(got, want) -> None:
    """Equal, and of the same Python types (timedelta vs pandas.Timedelta), at any depth."""
    assert type(got) is type(want), (got, want)
    if isinstance(want, dict):
        assert list(got) == list(want)
        for k in want:
            _same_values(got[k], want[k])
    elif isinstance(want, list):
        assert len(got) == len(want)
        for g, w in zip(got, want):
            _same_values(g, w)
    else:
        assert got == want


def test_python_values_are_timedeltas_as_pyarrows(written):
    want = pq.read_table(written)
    got = pqbloom.read_table(written)
    _same_values(got.to_pydict(), want.to_pydict())
    _same_values(got.to_pylist(), want.to_pylist())
    assert isinstance(got.to_pydict()["ms"][0], dt.timedelta)
    assert got.to_pydict()["ms"][0] == td(seconds=1)
    for name in _table().column_names:
        _same_values(pqbloom.read_table(written, columns=[name]).to_pydict()[name], want.column(name).to_pylist())


def test_in_memory_table_gives_timedeltas_too():
    t = pqbloom.Table.from_arrow(_table())
    _same_values(t.to_pydict(), _table().to_pydict())


def _as_list(v):
    if isinstance(v, np.ndarray):
        return [None if pd.isna(x) else pd.Timedelta(x) for x in v]
    return v if v is None else [None if x is None else pd.Timedelta(x) for x in v]


def test_to_pandas_gives_timedeltas_inside_structs_and_lists(written):
    want = pq.read_table(written).to_pandas()
    got = pqbloom.read_table(written).to_pandas()
    for name in ("s", "ms", "us", "ns"):
        pd.testing.assert_series_equal(got[name], want[name])
    assert got["st"].tolist() == want["st"].tolist()
    for g, w in zip(got["st"], want["st"]):
        if w is not None and w["x"] is not None:
            assert isinstance(g["x"], dt.timedelta)
    for name in ("l", "ln"):  # pyarrow gives timedelta64 arrays; pqbloom lists: the same durations
        assert [_as_list(v) for v in got[name]] == [_as_list(v) for v in want[name]]
    assert all(isinstance(x, dt.timedelta) for v in got["l"] if v for x in v if x is not None)


def test_nested_durations_from_pyarrow_are_written(tmp_path):
    out = tmp_path / "t.parquet"
    pqbloom.write_table(_table(), out)
    back = pq.read_table(out)
    assert back.schema.field("st").type == _table().schema.field("st").type
    assert back.schema.field("l").type.value_type == pa.duration("s")
    assert back.to_pydict() == _table().to_pydict()


def test_nested_durations_from_python_and_pandas_are_written(tmp_path):
    data = {"st": [{"x": td(seconds=1), "y": 3}, None, {"x": None, "y": 1}],
            "l": [[td(milliseconds=5), None], [], None]}
    out = tmp_path / "py.parquet"
    pqbloom.write_table(data, out)
    assert pq.read_table(out).to_pydict() == pa.table(data).to_pydict()
    assert pqbloom.read_table(out).to_pydict() == pa.table(data).to_pydict()
    df = pd.DataFrame(data)
    out = tmp_path / "pd.parquet"
    pqbloom.write_table(df, out)
    assert pq.read_table(out).to_pydict() == pa.Table.from_pandas(df).to_pydict()


@pytest.mark.parametrize("filters", [
    [("ms", "==", td(seconds=1))],
    [("ms", ">", td(microseconds=1))],
    [("ms", "<=", td(microseconds=1500))],
    [("ms", "in", [td(milliseconds=7), td(milliseconds=-5), td(microseconds=1)])],
    [("s", ">=", td(days=1))],
    [("ns", "==", pd.Timedelta(1000, "ns"))],
    [("us", "<", np.timedelta64(1, "ms"))],
    [("us", "!=", td(microseconds=2))],
])
def test_filters_take_timedelta_literals_as_pyarrow(written, filters):
    want = pq.read_table(written, filters=filters).to_pydict()
    got = pqbloom.read_table(written, filters=filters).to_pydict()
    assert want and got == want


def test_filter_on_durations_inside_a_list(written):
    want_rows = [i for i, v in enumerate(pq.read_table(written).column("l").to_pylist())
                 if v and td(seconds=2) in v]
    got = pqbloom.read_table(written, filters=pqbloom.field("l.list.element") == td(seconds=2))
    assert got.to_pydict()["l"] == [pq.read_table(written).column("l").to_pylist()[i] for i in want_rows]


def test_a_timedelta_on_a_plain_int64_column_is_still_refused(tmp_path):
    out = tmp_path / "ints.parquet"
    pq.write_table(pa.table({"n": pa.array([1000, 2], pa.int64())}), out)
    with pytest.raises(LiteralTypeError):
        pqbloom.read_table(out, filters=[("n", "==", td(seconds=1))])


def test_bloom_probes_take_timedelta_literals(tmp_path):
    out = tmp_path / "bloom.parquet"
    t = pa.table({"d": pa.array(np.arange(0, 5000, 5, dtype=np.int64), pa.duration("ms"))})
    pqbloom.write_table(t, out, bloom_filter_options={"d": True})
    pf = pqbloom.ParquetFile(out)
    bf = pf.bloom_filter(0, "d")
    present = [td(milliseconds=int(v)) for v in range(0, 5000, 5)]
    assert all(bf.might_contain(v) for v in present)
    assert all(pf.bloom_filter_might_contain(0, "d", v) for v in present[:50])
    assert bf.might_contain(np.timedelta64(10, "ms"))
    absent = [td(milliseconds=int(v)) for v in range(1, 5000, 5)]
    # absent values agree with their counts (a false positive is one for both)
    assert [bf.might_contain(v) for v in absent] == [bf.might_contain(int(v)) for v in range(1, 5000, 5)]
    assert sum(bf.might_contain(v) for v in absent) < len(absent) // 10
    # not a whole number of milliseconds: a value the column cannot hold
    assert not bf.might_contain(td(microseconds=10_500))
    assert pf.bloom_filter_might_contain(0, "d", td(microseconds=10_500)) is False
    hit = pqbloom.read_table(out, filters=pqbloom.field("d") == td(seconds=2))
    assert hit.to_pydict() == pq.read_table(out, filters=[("d", "==", td(seconds=2))]).to_pydict()


@settings(max_examples=300, deadline=None)
@given(st.sampled_from(["s", "ms", "us", "ns"]),
       st.lists(st.one_of(st.none(), st.integers(-(2**63) + 1, 2**63 - 1),
                          st.integers(-(10**13), 10**13)), max_size=20))
def test_any_count_converts_as_pyarrows_or_raises(unit, values):
    arr = pa.array(values, pa.duration(unit))
    try:
        want = arr.to_pylist()
    except (OverflowError, ValueError):
        want = None  # outside timedelta's range: pyarrow raises too
    t = pqbloom.Table.from_arrow(pa.table({"d": arr}))
    if want is None:
        with pytest.raises(UnsupportedError):
            t.to_pydict()
    else:
        _same_values(t.to_pydict()["d"], want)
