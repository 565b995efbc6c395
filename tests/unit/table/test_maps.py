"""Map columns read back as pyarrow gives them: ``to_pydict()`` / ``to_pylist()`` lists of ``(key, value)``
tuples in the file's order, and the same in ``to_pandas()``. Keys that a dict cannot hold (structs, as
spark-rapids and cudf write them; lists) no longer raise ``TypeError: unhashable type``; repeated keys are
kept. pyarrow's ``maps_as_pydicts`` option gives dicts as pyarrow's does. The oracle is pyarrow reading the
same file (written by pyarrow)."""

from __future__ import annotations

import warnings

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import pqbloom

KEY = pa.struct([pa.field("a", pa.int32(), False), pa.field("b", pa.string())])
COLUMNS = {
    "struct_keys": pa.array([[({"a": 1, "b": "x"}, 10), ({"a": 2, "b": None}, None)], None, [],
                             [({"a": 1, "b": "x"}, 3)]], pa.map_(KEY, pa.int64())),
    "list_keys": pa.array([[([1, 2], "p")], None, [([], "q"), ([3], None)], []],
                          pa.map_(pa.list_(pa.int32()), pa.string())),
    "string_keys": pa.array([[("k", 1.5), ("j", None)], [], None, [("k", -0.0)]], pa.map_(pa.string(), pa.float64())),
    "repeated_keys": pa.array([[("k", 1), ("k", 2)], None, [("a", 3)], []], pa.map_(pa.string(), pa.int32())),
    "nested": pa.array([[("o", [(1, True)])], None, [("p", None)], [("q", [])]],
                       pa.map_(pa.string(), pa.map_(pa.int32(), pa.bool_()))),
}


@pytest.fixture(scope="module")
def written(tmp_path_factory) -> str:
    path = str(tmp_path_factory.mktemp("maps") / "maps.parquet")
    pq.write_table(pa.table(COLUMNS), path)
    return path


@pytest.mark.parametrize("name", sorted(COLUMNS))
def test_python_values_are_pyarrows(written, name):
    want = pq.read_table(written, columns=[name])
    got = pqbloom.read_table(written, columns=[name])
    assert got.to_pydict() == want.to_pydict()
    assert got.to_pylist() == want.to_pylist()
    assert got.column(name).to_pylist() == want.column(name).to_pylist()
    assert all(type(p) is tuple for v in got.to_pydict()[name] if v for p in v)


@pytest.mark.parametrize("name", ["struct_keys", "string_keys", "repeated_keys", "nested"])
def test_to_pandas_gives_lists_of_pairs(written, name):
    want = pq.read_table(written, columns=[name]).to_pandas()[name].tolist()
    got = pqbloom.read_table(written, columns=[name]).to_pandas()[name].tolist()
    assert got == want
    assert all(type(v) is list and all(type(p) is tuple for p in v) for v in got if v is not None)


def test_in_memory_tables_too():
    t = pqbloom.Table.from_arrow(pa.table(COLUMNS))
    assert t.to_pydict() == pa.table(COLUMNS).to_pydict()


@pytest.mark.parametrize("mode", ["lossy", "strict"])
@pytest.mark.parametrize("name", ["string_keys", "nested"])
def test_maps_as_pydicts_as_pyarrow(written, name, mode):
    want = pq.read_table(written, columns=[name])
    got = pqbloom.read_table(written, columns=[name])
    assert got.to_pydict(maps_as_pydicts=mode) == want.to_pydict(maps_as_pydicts=mode)
    assert got.to_pylist(maps_as_pydicts=mode) == want.to_pylist(maps_as_pydicts=mode)
    assert got.column(name).to_pylist(maps_as_pydicts=mode) == want.column(name).to_pylist(maps_as_pydicts=mode)


def test_repeated_keys_with_maps_as_pydicts_as_pyarrow(written):
    want = pq.read_table(written, columns=["repeated_keys"])
    got = pqbloom.read_table(written, columns=["repeated_keys"])
    with warnings.catch_warnings(record=True) as theirs:
        warnings.simplefilter("always")
        expected = want.to_pydict(maps_as_pydicts="lossy")
    with warnings.catch_warnings(record=True) as ours:
        warnings.simplefilter("always")
        assert got.to_pydict(maps_as_pydicts="lossy") == expected  # the last value of a repeated key
    assert len(theirs) >= 1 and len(ours) >= 1
    with pytest.raises(KeyError):
        want.to_pydict(maps_as_pydicts="strict")
    with pytest.raises(KeyError):
        got.to_pydict(maps_as_pydicts="strict")


def test_unhashable_keys_as_dicts_raise_as_pyarrow(written):
    with pytest.raises(TypeError):
        pq.read_table(written, columns=["struct_keys"]).to_pydict(maps_as_pydicts="lossy")
    with pytest.raises(TypeError):
        pqbloom.read_table(written, columns=["struct_keys"]).to_pydict(maps_as_pydicts="lossy")


def test_an_unknown_maps_as_pydicts_is_refused(written):
    with pytest.raises(ValueError):
        pq.read_table(written).to_pydict(maps_as_pydicts="yes")
    with pytest.raises(ValueError):
        pqbloom.read_table(written).to_pydict(maps_as_pydicts="yes")


def test_python_maps_written_read_back_as_pairs(tmp_path):
    out = tmp_path / "py.parquet"
    pqbloom.write_table(pqbloom.Table.from_pydict({"m": [{"a": 1}, None, [("b", 2), ("b", 3)]]},
                                                  {"m": "map<string, int64>"}), out)
    assert pqbloom.read_table(out).to_pydict() == pq.read_table(out).to_pydict()
