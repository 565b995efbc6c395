"""A one-column filter over a chunk whose every data page is dictionary-encoded is evaluated once per
dictionary entry and mapped to the rows straight from the pages' index bytes (issue 32): no array of
every row's index is built (:func:`pqbloom.file.encoded_column.collect_encoded` is not called), and the
rows are exactly pyarrow's (pyarrow-written files: many pages, nulls, v1 and v2 data pages, codecs,
dictionary fallback to PLAIN part-way, ``==`` / ``in`` / ranges / ``is_null``, with other columns)."""

from __future__ import annotations

import io

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq
import pytest

import pqbloom
from pqbloom.arrays import BinaryArray
from pqbloom.errors import CorruptFileError
from pqbloom.file import dictionary_hits, encoded_column
from pqbloom.file.dictionary_hits import collect_hits
from pqbloom.kernels.hybrid import encode_hybrid
from pqbloom.scan import Explain, field
from pqbloom.schema import make_field
from tests.conftest import values_equal

WORDS = [f"w{i:03d}" for i in range(120)]


def _table(n: int, seed: int, null_rate: float) -> pa.Table:
    rng = np.random.default_rng(seed)
    key = np.array(WORDS, dtype=object)[rng.integers(0, len(WORDS), n)]
    key[rng.random(n) < null_rate] = None
    num = pa.array(rng.integers(0, 50, n).astype(np.int32), mask=rng.random(n) < null_rate)
    return pa.table({"id": pa.array(np.arange(n, dtype=np.int64)), "key": pa.array(key.tolist(), pa.string()),
                     "num": num, "x": rng.random(n)})


def _write(t: pa.Table, **opts) -> bytes:
    buf = io.BytesIO()
    pq.write_table(t, buf, **opts)
    return buf.getvalue()


def _same(got: pa.Table, want: pa.Table, what: str) -> None:
    assert got.column_names == want.column_names, what
    for name in want.column_names:
        g, w = got.column(name).to_pylist(), want.column(name).to_pylist()
        assert len(g) == len(w) and all(values_equal(a, b) for a, b in zip(g, w)), (what, name)


FILTERS = [
    (field("key") == "w007", pc.field("key") == "w007"),
    (field("key") == "nope", pc.field("key") == "nope"),
    (field("key").isin(["w001", "w050", "w119"]), pc.field("key").isin(["w001", "w050", "w119"])),
    (field("key").isin(["w002", None]), pc.field("key").isin(["w002", None])),
    ((field("key") >= "w030") & (field("key") < "w040"), (pc.field("key") >= "w030") & (pc.field("key") < "w040")),
    (field("key") > "w000", pc.field("key") > "w000"),  # every entry but one
    (field("key").is_null(), pc.field("key").is_null()),
    (~field("key").is_null(), pc.field("key").is_valid()),
    (field("num") == 7, pc.field("num") == 7),
    (field("num").isin([1, 2, 3]) | field("num").is_null(), pc.field("num").isin([1, 2, 3]) | pc.field("num").is_null()),
    ((field("key") == "w007") & (field("x") > 0.5), (pc.field("key") == "w007") & (pc.field("x") > 0.5)),
]


@pytest.mark.parametrize("opts", [
    {"compression": "snappy", "data_page_size": 512, "write_batch_size": 64},
    {"compression": "zstd", "data_page_size": 2048, "write_batch_size": 100, "data_page_version": "2.0"},
    {"compression": "none", "data_page_size": 300, "write_batch_size": 50, "data_page_version": "1.0"},
    {"compression": "snappy", "data_page_size": 1 << 20, "data_page_version": "2.0", "write_page_index": True},
    # the dictionary grows past its limit: PLAIN pages part-way through the chunk (the path of codes)
    {"compression": "snappy", "data_page_size": 512, "write_batch_size": 16, "dictionary_pagesize_limit": 200},
], ids=["snappy-v1", "zstd-v2", "none-v1", "one-page-v2", "plain-fallback"])
@pytest.mark.parametrize("null_rate", [0.0, 0.1, 1.0])
def test_filtered_reads_equal_pyarrow(opts, null_rate) -> None:
    t = _table(3000, 5, null_rate)
    raw = _write(t, row_group_size=1000, **opts)
    whole = pq.read_table(pa.BufferReader(raw))
    for expr, arrow_expr in FILTERS:
        want = whole.filter(arrow_expr)
        for threads in (False, True):
            for columns in (None, ["id"], ["key", "x"]):
                got = pqbloom.read_table(pa.BufferReader(raw), columns=columns, filters=expr,
                                         use_threads=threads).to_arrow()
                _same(got, want.select(columns) if columns else want, f"{expr} {opts} {columns}")


def test_no_index_per_row_is_built(tmp_path, monkeypatch) -> None:
    """The filtered column's chunks are mapped to their rows from the index bytes: the path that builds
    a code per row is not taken, and the explain counters are those of an evaluation on the dictionary."""
    t = _table(20_000, 7, 0.05)
    path = tmp_path / "d.parquet"
    pq.write_table(t, path, row_group_size=5000, data_page_size=1024, write_batch_size=256)
    calls: list[int] = []
    real = encoded_column.collect_encoded

    def spy(*args, **kw):
        calls.append(1)
        return real(*args, **kw)

    monkeypatch.setattr(encoded_column, "collect_encoded", spy)
    from pqbloom.file import page_reads
    monkeypatch.setattr(page_reads, "collect_encoded", spy)
    for expr, arrow_expr in FILTERS[:8]:
        ex = Explain()
        got = pqbloom.read_table(str(path), filters=expr, explain=ex).to_arrow()
        want = t.filter(arrow_expr)
        _same(got, want, str(expr))
        assert calls == [], str(expr)
        read = 0 if "nope" in str(expr) else 4  # (statistics prune every row group of "nope")
        assert ex.chunks_evaluated_on_dictionary == ex.row_groups_read == read, str(ex)
        assert ex.rows_decoded == 5000 * read and ex.rows_returned == want.num_rows, str(ex)


# ---------------------------------------------------------------------------
# collect_hits on hand-made pages
# ---------------------------------------------------------------------------
def _rle(indices: list[int], bw: int) -> memoryview:
    return memoryview(bytes([bw]) + encode_hybrid(np.array(indices, np.int64), bw))


def _pages(dictionary, specs):
    for idx, present in specs:
        yield "rle", (_rle(idx, 3), len(idx)), present, dictionary


F = make_field("s", "string")


def test_collect_hits_maps_rows_to_the_wanted_entries() -> None:
    d = BinaryArray.from_pylist([b"a", b"b", b"c", b"d"])
    present = np.array([True, False, True, True, False])
    specs = [([0, 1, 2, 3, 3, 2], None), ([3, 0, 1], present), ([2] * 40, None)]
    got = collect_hits(_pages(d, specs), F, 6 + 5 + 40, lambda entries: np.array([1, 3]))
    assert got is not None
    codes = [0, 1, 2, 3, 3, 2, 3, -1, 0, 1, -1] + [2] * 40
    want_rows = [i for i, c in enumerate(codes) if c in (1, 3)]
    assert got.rows(nulls=False).tolist() == want_rows
    nulls = [i for i, c in enumerate(codes) if c == -1]
    assert got.rows(nulls=True).tolist() == sorted(want_rows + nulls)
    col = got.column(got.rows(nulls=True))
    assert col.to_pylist() == [None if codes[i] < 0 else "abcd"[codes[i]] for i in got.rows(nulls=True)]


def test_collect_hits_gives_up_on_a_page_of_values_and_when_asked() -> None:
    d = np.array([10, 20, 30], np.int64)
    pages = [("rle", (_rle([0, 1], 3), 2), None, d), ("values", np.array([5]), None, d)]
    assert collect_hits(iter(pages), F, 3, lambda e: np.array([0])) is None
    assert collect_hits(iter(pages[:1]), F, 2, lambda e: None) is None


def test_collect_hits_many_hits_use_wider_ranks() -> None:
    d = np.arange(600, dtype=np.int64)
    idx = list(range(600)) * 2
    pages = [("rle", (memoryview(bytes([10]) + encode_hybrid(np.array(idx, np.int64), 10)), len(idx)), None, d)]
    got = collect_hits(iter(pages), F, len(idx), lambda e: np.arange(1, 600, 2))
    assert got is not None and got.ranks.dtype == np.int32
    assert got.rows(nulls=False).tolist() == [i for i, v in enumerate(idx) if v % 2 == 1]


def test_collect_hits_reports_corrupt_pages() -> None:
    d = np.array([10, 20, 30], np.int64)
    with pytest.raises(CorruptFileError, match="out of range"):  # index 5 of a dictionary of 3
        collect_hits(_pages(d, [([0, 5, 1], None)]), F, 3, lambda e: np.array([0]))
    with pytest.raises(CorruptFileError):  # 3 values for 2 present flags
        collect_hits(_pages(d, [([0, 1, 2], np.array([True, False, True, False]))]), F, 4, lambda e: np.array([0]))
    with pytest.raises(CorruptFileError, match="rows"):  # fewer rows than the chunk has
        collect_hits(_pages(d, [([0, 1], None)]), F, 3, lambda e: np.array([0]))
    with pytest.raises(CorruptFileError, match="rows"):  # more
        collect_hits(_pages(d, [([0, 1], None), ([0, 1], None)]), F, 3, lambda e: np.array([0]))
    assert dictionary_hits.__all__ == ["DictionaryHits", "collect_hits"]


@pytest.mark.parametrize("version", ["1.0", "2.0"])
def test_sparse_rows_of_pages_with_and_without_nulls(version) -> None:
    """Late materialization of a nullable column whose pages without nulls come without presence flags
    (no levels decoded for them) and whose other pages have nulls: the rows pyarrow reads."""
    n = 4000
    rng = np.random.default_rng(11)
    y = rng.random(n)
    mask = np.zeros(n, bool)
    mask[2000:] = rng.random(n - 2000) < 0.3  # nulls in the second half only
    key = np.array(WORDS, dtype=object)[rng.integers(0, len(WORDS), n)]
    t = pa.table({"key": pa.array(key.tolist(), pa.string()), "y": pa.array(y, mask=mask),
                  "s": pa.array([None if m else f"s{i}" for i, m in enumerate(mask)], pa.string())})
    raw = _write(t, row_group_size=n, data_page_size=256, write_batch_size=32, data_page_version=version,
                 use_dictionary=["key"])
    for expr, arrow_expr in FILTERS[:6]:
        got = pqbloom.read_table(pa.BufferReader(raw), filters=expr).to_arrow()
        _same(got, t.filter(arrow_expr), str(expr))


@pytest.mark.parametrize("page_index", [False, True])
def test_a_chunk_given_up_part_way_is_read_as_codes_and_counted_once(tmp_path, monkeypatch, page_index) -> None:
    """When the index bytes cannot serve (a page of another encoding met part-way), the chunk is read
    again by the path of codes: the same rows as pyarrow's, and its pages or chunk counted once."""
    from pqbloom.file import row_reads

    t = _table(6000, 13, 0.05)
    path = tmp_path / "d.parquet"
    pq.write_table(t, path, row_group_size=2000, data_page_size=1024, write_batch_size=128,
                   write_page_index=page_index)
    expr, arrow_expr = FILTERS[2]
    want_ex = Explain()
    pqbloom.read_table(str(path), filters=expr, explain=want_ex)
    real = row_reads.collect_hits

    def give_up(pages, f, num_rows, hits_of):
        real(pages, f, num_rows, hits_of)  # (reads every page)
        return None

    monkeypatch.setattr(row_reads, "collect_hits", give_up)
    ex = Explain()
    got = pqbloom.read_table(str(path), filters=expr, explain=ex).to_arrow()
    _same(got, t.filter(arrow_expr), str(expr))
    for counter in ("pages_total", "pages_read", "pages_skipped", "chunks_read_whole", "rows_decoded",
                    "rows_returned", "chunks_evaluated_on_dictionary"):
        assert getattr(ex, counter) == getattr(want_ex, counter), (counter, str(ex), str(want_ex))
