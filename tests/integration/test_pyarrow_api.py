"""pyarrow.parquet's reading calls on pqbloom give pyarrow's answers: ``ParquetFile.schema_arrow`` and
``Schema.to_arrow()``, ``read_row_groups``, ``iter_batches(row_groups=)``, ``read_table(schema=)``."""

from __future__ import annotations

import datetime as dt
import decimal
import sys

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import pqbloom
from pqbloom.errors import SchemaError
from tests.corpora import needs
from tests.integration.real_world_support import CORPUS, corpus_files
from tests.paths import FIXTURES_DATA


def _corpus() -> list:
    return sorted(FIXTURES_DATA.glob("*.parquet")) + [CORPUS / p for p, st, _ in corpus_files() if st == "reads"]


def _has_map(t: pa.DataType) -> bool:
    if pa.types.is_map(t):
        return True
    return any(_has_map(t.field(i).type) for i in range(t.num_fields))


@needs(FIXTURES_DATA, CORPUS / "FILES.tsv")
def test_schema_arrow_matches_pyarrow_on_the_corpora():
    compared = with_stored = 0
    for path in _corpus():
        try:
            want = pq.ParquetFile(path).schema_arrow
        except Exception:  # noqa: BLE001 - a file pyarrow cannot open has no answer to compare with
            continue
        try:
            pf = pqbloom.ParquetFile(str(path))
        except pqbloom.errors.ParquetError:
            continue  # refused with a typed error (a broken or ambiguous file): nothing to compare
        with pf:
            got = pf.schema_arrow
            with_stored += "ARROW:schema" in pf.key_value_metadata
        if not got.equals(want, check_metadata=True):
            # pyarrow's own schema, serialized and read back, loses a map's entries name the same way
            assert got.equals(want) and got.metadata == want.metadata, path
            assert any(_has_map(f.type) for f in want), path
            for g, w in zip(got, want):
                assert g.metadata == w.metadata, (path, g.name)
        compared += 1
    assert compared > 600 and with_stored > 100


def _same_schema(got: pa.Schema, want: pa.Schema) -> bool:
    """Equal types, names, nullability and metadata (schema's and fields'); a map's entries name is
    not compared (pyarrow itself loses it through IPC, as the corpus test notes)."""
    return got.equals(want) and got.metadata == want.metadata and \
        all(g.metadata == w.metadata for g, w in zip(got, want))


def test_schema_to_arrow_is_pyarrows_inference_from_parquet_types(tmp_path):
    t = pa.table({
        "ts": pa.array([dt.datetime(2024, 1, 1)], pa.timestamp("ms", tz="Europe/Paris")),
        "dur": pa.array([dt.timedelta(seconds=3)], pa.duration("us")),
        "dec": pa.array([decimal.Decimal("1.25")], pa.decimal128(7, 2)),
        "tags": pa.array([["a", None]], pa.list_(pa.string())),
        "m": pa.array([[("k", 1)]], pa.map_(pa.string(), pa.int32())),
        "s": pa.array([{"x": 1, "y": "z"}], pa.struct([("x", pa.int16()), ("y", pa.large_string())])),
        "cat": pa.array(["a", "b"] * 1, pa.string())[:1].dictionary_encode(),
    })
    p, bare = tmp_path / "types.parquet", tmp_path / "bare.parquet"
    pq.write_table(t, p)
    pq.write_table(t, bare, store_schema=False)
    with pqbloom.ParquetFile(str(bare)) as pf:
        # without a stored Arrow schema: what pyarrow infers from the Parquet types alone
        assert _same_schema(pf.table_schema.to_arrow(), pq.ParquetFile(bare).schema_arrow)
        assert _same_schema(pf.schema_arrow, pq.ParquetFile(bare).schema_arrow)
    with pqbloom.ParquetFile(str(p)) as pf:
        # with it (time zone, duration, large string, dictionary): what pyarrow reads
        assert _same_schema(pf.schema_arrow, pq.ParquetFile(p).schema_arrow)
        assert str(pf.schema_arrow.field("ts").type) == "timestamp[ms, tz=Europe/Paris]"
        assert pf.schema_arrow.equals(pqbloom.read_table(str(p)).to_arrow().schema)


def test_schema_arrow_needs_pyarrow_and_says_so(tmp_path, monkeypatch):
    p = tmp_path / "x.parquet"
    pq.write_table(pa.table({"a": [1]}), p)
    monkeypatch.setitem(sys.modules, "pyarrow", None)  # as if it were not installed
    with pqbloom.ParquetFile(str(p)) as pf, pytest.raises(ImportError, match="pip install pyarrow"):
        pf.schema_arrow  # noqa: B018 - the access is the test


@pytest.fixture(scope="module")
def five_groups(tmp_path_factory):
    n = 1000
    t = pa.table({
        "id": pa.array(range(n), pa.int64()),
        "s": pa.array([None if i % 9 == 0 else f"v{i % 37}" for i in range(n)]),
        "cat": pa.array([f"c{i % 3}" for i in range(n)]).dictionary_encode(),
        "tags": pa.array([[i, i + 1] if i % 4 else None for i in range(n)], pa.list_(pa.int32())),
        "x": pa.array([i / 8 for i in range(n)], pa.float32()),
    })
    p = tmp_path_factory.mktemp("rg") / "five.parquet"
    pq.write_table(t, p, row_group_size=200)
    return str(p)


@pytest.mark.parametrize("use_threads", [True, False])
def test_read_row_groups(five_groups, use_threads):
    theirs, ours = pq.ParquetFile(five_groups), pqbloom.ParquetFile(five_groups)
    for rgs, cols in (([0], None), ([3, 1], None), ([4, 0, 2], ["x", "cat", "tags"]), ([2, 2], ["s"]), ([], None)):
        want = theirs.read_row_groups(rgs, columns=cols, use_threads=use_threads)
        got = ours.read_row_groups(rgs, columns=cols, use_threads=use_threads).to_arrow()
        assert got.equals(want), (rgs, cols)
        assert got.schema.equals(want.schema, check_metadata=True)
    assert ours.read_row_group(3, columns=["id"]).to_arrow().equals(theirs.read_row_group(3, columns=["id"]))
    with pytest.raises(IndexError):
        ours.read_row_groups([0, 5])
    with pytest.raises(TypeError):
        ours.read_row_groups(["0"])


def test_iter_batches_row_groups(five_groups):
    theirs, ours = pq.ParquetFile(five_groups), pqbloom.ParquetFile(five_groups)
    for rgs, cols, size in (([1, 3], None, 64), ([4], ["tags", "id"], 1000), (None, ["s"], 150), ([], None, 10)):
        want = [pa.Table.from_batches([b]) for b in theirs.iter_batches(size, row_groups=rgs, columns=cols)]
        got = [b.to_arrow() for b in ours.iter_batches(size, row_groups=rgs, columns=cols, use_threads=False)]
        # the same rows in the same order; pqbloom's batches end at row group ends, pyarrow's may not
        assert all(0 < g.num_rows <= size for g in got)
        assert [r for g in got for r in g.to_pylist()] == [r for w in want for r in w.to_pylist()], (rgs, cols)
    with pytest.raises(ValueError, match="row_groups or filters"):
        ours.iter_batches(10, row_groups=[0], filters=[("id", ">", 3)])


def test_read_table_with_schema(five_groups):
    cases = [
        (pa.schema([("x", pa.float64()), ("id", pa.int64())]), {}),  # select, reorder, cast
        (pa.schema([("id", pa.int32())], metadata={"k": "v"}), {}),
        (pa.schema([("id", pa.string())]), {}),
        (pa.schema([("nope", pa.int64()), ("id", pa.int64())]), {}),  # a field the file lacks: nulls
        (pa.schema([("id", pa.int64()), ("s", pa.large_string())]), {"columns": ["s"]}),
        (pa.schema([("id", pa.int16()), ("x", pa.float32())]), {"filters": [("id", ">", 990)]}),
        (pa.schema([("tags", pa.list_(pa.field("element", pa.int64()))), ("cat", pa.string())]), {"use_threads": False}),
    ]
    for schema, kw in cases:
        want = pq.read_table(five_groups, schema=schema, **kw)
        got = pqbloom.read_table(five_groups, schema=schema, **kw).to_arrow()
        assert got.equals(want, check_metadata=True), (schema, kw)
    with open(five_groups, "rb") as fh:  # a file object: the same answer
        assert pqbloom.read_table(fh, schema=cases[0][0]).to_arrow().equals(pq.read_table(five_groups,
                                                                                          schema=cases[0][0]))
    with pytest.raises(SchemaError, match="cannot be read as int64"):
        pqbloom.read_table(five_groups, schema=pa.schema([("s", pa.int64())]))
    with pytest.raises(SchemaError, match="not in the schema"):
        pqbloom.read_table(five_groups, schema=pa.schema([("id", pa.int64())]), columns=["x"])
