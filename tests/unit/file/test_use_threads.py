"""``use_threads``: column chunks decoded on worker threads give pyarrow's result, the single-threaded
result, the same typed errors, and charge the same memory budget."""

from __future__ import annotations

import threading

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq
import pytest

import pqbloom
import pqbloom.file.parallel as parallel
import pqbloom.file.reader as file_reader
from pqbloom.errors import CorruptFileError, MemoryLimitError, ParquetError
from pqbloom.limits import MemoryBudget, memory_budget
from tests.corpora import params
from tests.paths import FIXTURES

CORPUS = params(sorted((FIXTURES / "data").glob("*.parquet")) + sorted((FIXTURES / "bad_data").glob("*.parquet")),
                FIXTURES)
SKIP_HEAVY = {"large_string_map.brotli.parquet"}  # two 1 GiB map keys


@pytest.fixture(autouse=True)
def _several_workers(monkeypatch):
    # the threaded path even on a one-CPU machine, and for these small files
    monkeypatch.setattr(parallel, "worker_count", lambda: 4)
    monkeypatch.setattr(file_reader, "SMALL_READ", 0)


def _mixed_table(n: int = 20_000) -> pa.Table:
    rng = np.random.default_rng(17)
    nulls = rng.random(n) < 0.1
    ints = pa.array(rng.integers(-10**12, 10**12, n), mask=nulls)
    floats = pa.array(rng.standard_normal(n), mask=rng.random(n) < 0.2)
    words = [f"w{i % 97}-{'x' * (i % 13)}" if i % 11 else None for i in range(n)]
    lists = [None if i % 17 == 0 else list(range(i % 5)) for i in range(n)]
    structs = [None if i % 19 == 0 else {"a": i, "b": None if i % 3 else f"s{i}"} for i in range(n)]
    return pa.table({"i": ints, "f": floats, "s": pa.array(words), "l": pa.array(lists, pa.list_(pa.int64())),
                     "st": pa.array(structs, pa.struct([("a", pa.int64()), ("b", pa.string())])),
                     "d": pa.array([f"k{i % 7}" for i in range(n)]).dictionary_encode()})


@pytest.fixture(scope="module")
def mixed_file(tmp_path_factory):
    path = tmp_path_factory.mktemp("threads") / "mixed.parquet"
    pq.write_table(_mixed_table(), path, row_group_size=3_000, data_page_size=4096)
    return path


def _same(a: pa.Table, b: pa.Table) -> bool:
    """Table equality where NaN equals NaN (top-level float columns of the corpus hold NaNs)."""
    if a.equals(b):
        return True
    if a.schema != b.schema:
        return False
    for x, y in zip(a.columns, b.columns):
        if pa.types.is_floating(x.type):
            nan_x, nan_y = pc.is_nan(x), pc.is_nan(y)
            if not nan_x.equals(nan_y):
                return False
            x, y = pc.if_else(nan_x, pa.scalar(0, x.type), x), pc.if_else(nan_y, pa.scalar(0, y.type), y)
        if not x.equals(y):
            return False
    return True


def test_threaded_equals_single_threaded_and_pyarrow(mixed_file):
    expected = pq.read_table(mixed_file)
    pf = pqbloom.ParquetFile(mixed_file)
    assert pf.num_row_groups > 3
    one = pf.read(use_threads=False).to_arrow()
    many = pf.read(use_threads=True).to_arrow()
    assert many.equals(one)
    assert many.cast(expected.schema).equals(expected)
    assert pqbloom.read_table(mixed_file).to_arrow().equals(one)  # threads by default
    for rg in range(pf.num_row_groups):
        a = pf.read_row_group(rg, use_threads=True).to_arrow()
        assert a.equals(pf.read_row_group(rg, use_threads=False).to_arrow())
        assert a.cast(expected.schema).equals(pq.ParquetFile(mixed_file).read_row_group(rg))
    cols = ["s", "l", "i"]
    assert pf.read(cols, use_threads=True).to_arrow().equals(pf.read(cols, use_threads=False).to_arrow())


def _decoding_threads(monkeypatch) -> set[str]:
    """The names of the threads that charge the read's memory budget (that is, decode), filled as it runs."""
    names: set[str] = set()
    charge = MemoryBudget.charge

    def recording(self, nbytes, what):
        names.add(threading.current_thread().name)
        return charge(self, nbytes, what)

    monkeypatch.setattr(MemoryBudget, "charge", recording)
    return names


def test_decoding_runs_on_worker_threads(mixed_file, monkeypatch):
    names = _decoding_threads(monkeypatch)
    pqbloom.ParquetFile(mixed_file, memory_limit=1 << 30).read(use_threads=True)
    assert any(n.startswith("pqbloom-decode") for n in names), names


def test_small_reads_decode_in_the_calling_thread(mixed_file, monkeypatch):
    # chunks that decode to less than SMALL_READ bytes (per the footer) are not worth worker threads,
    # whose allocator arenas keep what they freed resident: a small read's peak was 3.5x its result
    names = _decoding_threads(monkeypatch)
    monkeypatch.setattr(file_reader, "SMALL_READ", 16 << 20)
    pf = pqbloom.ParquetFile(mixed_file, memory_limit=1 << 30)
    assert sum(pf.metadata.row_group(i).total_byte_size for i in range(pf.num_row_groups)) < 16 << 20
    got = pf.read(use_threads=True)
    assert names == {threading.current_thread().name}, names
    assert got.to_arrow().equals(pf.read(use_threads=False).to_arrow())


@pytest.mark.parametrize("path", CORPUS, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_corpus_threaded_equals_single_threaded(path):
    if path.name in SKIP_HEAVY:
        return
    outcomes = []
    for use_threads in (False, True):
        try:
            outcomes.append(pqbloom.read_table(path, use_threads=use_threads).to_arrow())
        except ParquetError as exc:
            outcomes.append((type(exc).__name__, str(exc)))
    one, many = outcomes
    assert _same(one, many) if isinstance(one, pa.Table) and isinstance(many, pa.Table) else one == many


def test_memory_budget_charged_from_workers_as_in_one_thread(mixed_file):
    used = []
    for use_threads in (False, True):
        with memory_budget(1 << 30) as budget:
            pqbloom.ParquetFile(mixed_file).read(use_threads=use_threads)
        used.append(budget.used)
    assert used[0] > 0 and used[0] == used[1]


def test_memory_limit_tripping_in_a_worker_raises_memory_limit_error(mixed_file, monkeypatch):
    with memory_budget(1 << 30) as budget:
        pqbloom.ParquetFile(mixed_file).read(use_threads=False)
    raised_in: list[str] = []
    charge = MemoryBudget.charge

    def recording(self, nbytes, what):
        try:
            return charge(self, nbytes, what)
        except MemoryLimitError:
            raised_in.append(threading.current_thread().name)
            raise

    monkeypatch.setattr(MemoryBudget, "charge", recording)
    for use_threads in (False, True):
        with pytest.raises(MemoryLimitError):
            pqbloom.ParquetFile(mixed_file, memory_limit=budget.used // 2).read(use_threads=use_threads)
    raised_in.clear()
    # nested columns have no preallocated result: every charge is a decoder's, on the workers
    # a limit the footer fits in (opening charges its bytes and its decode) but no column does
    footer = pqbloom.ParquetFile(mixed_file).footer_location.footer_length
    with pytest.raises(MemoryLimitError):
        pqbloom.ParquetFile(mixed_file, memory_limit=2 * footer).read(["l", "st"], use_threads=True)
    assert any(n.startswith("pqbloom-decode") for n in raised_in), raised_in


def test_corrupt_chunk_same_error_first_in_column_order(tmp_path):
    n = 5_000
    t = pa.table({"a": np.arange(n), "b": np.arange(n) * 2, "c": np.arange(n) * 3})
    path = tmp_path / "t.parquet"
    pq.write_table(t, path, compression="none", use_dictionary=False, row_group_size=n)
    md = pq.read_metadata(path)
    data = bytearray(path.read_bytes())
    for col in (1, 2):  # both b and c damaged: b (first in column order) is the one reported
        off = md.row_group(0).column(col).data_page_offset
        data[off:off + 12] = b"\xff" * 12
    bad = tmp_path / "bad.parquet"
    bad.write_bytes(bytes(data))
    errors = []
    for use_threads in (False, True):
        with pytest.raises(CorruptFileError) as info:
            pqbloom.ParquetFile(bad).read(use_threads=use_threads)
        errors.append((type(info.value), str(info.value), info.value.column))
    assert errors[0] == errors[1]
    assert errors[0][2] == "b"


@pytest.mark.parametrize("nulls, options", [
    (False, {"dictionary_pagesize_limit": 4096, "data_page_size": 8192}),
    (True, {"dictionary_pagesize_limit": 4096, "data_page_size": 8192}),
    (True, {"use_dictionary": False, "column_encoding": {"s": "DELTA_BYTE_ARRAY", "t": "DELTA_LENGTH_BYTE_ARRAY"}}),
])
def test_string_regions_of_many_row_groups_equal_pyarrow_every_time(tmp_path, nulls, options):
    """Threads decoding neighbouring row groups of one string column into its buffers share the
    offsets entry between their regions. Each writes it with the same final value; a kernel that
    wrote a page-relative value there first, or added its base in place afterwards, or read the
    entry back to size its page, gave a wrong offset at some row-group boundary: before the fix, 16
    to 17 of 20 threaded reads of this file (first pages dictionary-encoded, the rest PLAIN) had
    one. Each file (no nulls, nulls, DELTA encodings) is read 12 times and compared with pyarrow's."""
    rng = np.random.default_rng(5)
    n = 200_000
    s = pa.array([None if nulls and x % 10 == 0 else f"v{x:x}-{'abc' * (x % 7)}"
                  for x in rng.integers(0, 1 << 40, n)])
    path = tmp_path / "groups.parquet"
    pq.write_table(pa.table({"s": s, "t": s}), path, row_group_size=2000, **options)
    if "dictionary_pagesize_limit" in options:  # first pages dictionary-encoded, then PLAIN
        assert "RLE_DICTIONARY" in pq.ParquetFile(path).metadata.row_group(0).column(0).encodings
    want = pq.read_table(path)
    lengths = pc.binary_length(want.column("s")).fill_null(0).to_numpy()
    for _ in range(12):
        got = pqbloom.read_table(path, use_threads=True)
        for name in ("s", "t"):
            offsets = np.asarray(got.column(name).values.offsets)
            assert offsets[0] == 0 and np.array_equal(np.diff(offsets), lengths)
        assert got.to_arrow().equals(want)
