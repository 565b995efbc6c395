"""Filtered reads of files without a page index (pyarrow's default files) decode the other columns
only in the pages holding matches: the pages' rows come from walking their headers
(pqbloom.file.page_walk). Results are checked against pyarrow's own filtered read; the walked page
layout against the OffsetIndex pyarrow writes for the same data; headers that contradict the footer
are never used to pick pages."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import pqbloom
from pqbloom.errors import CorruptFileError
from pqbloom.file import page_walk
from pqbloom.file.page_walk import walk_page_headers
from pqbloom.file.pages import parse_page_header
from pqbloom.format import PageType, encode
from pqbloom.scan import Explain, field
from tests.corpora import needs
from tests.paths import REAL_WORLD


def _table(n: int, null_rate: float, seed: int = 0) -> pa.Table:
    rng = np.random.default_rng(seed)
    ids = rng.permutation(n).astype(np.int64) * 3
    nulls = rng.random(n) < null_rate
    words = np.array(["", "a", "bb", "héllo", "x" * 40, "zz-top", "q" * 7])
    s = [None if m else f"{words[i % len(words)]}{i}" for i, m in zip(rng.integers(0, 1 << 30, n), nulls)]
    x = pa.array(rng.random(n), mask=rng.random(n) < null_rate)
    cat = pa.array(words[rng.integers(0, len(words), n)])
    return pa.table({"id": ids, "s": pa.array(s, pa.string()), "x": x, "cat": cat,
                     "i": pa.array(rng.integers(-5, 5, n).astype(np.int32), mask=nulls)})


def _check(path: Path, ids: list[int], *, expect_skips: bool = True, file_object: bool = False) -> Explain:
    """pqbloom's read of ``id in ids`` equals pyarrow's; return the Explain. ``file_object``: read
    through an open file (not local to pqbloom's reader: chunks are read whole, then walked)."""
    ex = Explain()
    flt = field("id") == ids[0] if len(ids) == 1 else field("id").isin(ids)
    if file_object:
        with open(path, "rb") as f:
            got = pqbloom.read_table(f, filters=flt, explain=ex).to_arrow()
    else:
        got = pqbloom.read_table(path, filters=flt, explain=ex).to_arrow()
    want = pq.read_table(path, filters=[("id", "in", ids)])
    assert got.column_names == want.column_names
    for name in want.column_names:
        assert got.column(name).to_pylist() == want.column(name).to_pylist(), name
    if expect_skips:
        assert ex.pages_skipped > 0 and ex.pages_read < ex.pages_total, str(ex)
    return ex


@pytest.mark.parametrize("version", ["1.0", "2.0"])
@pytest.mark.parametrize("dictionary", [True, False])
@pytest.mark.parametrize("compression", ["none", "snappy"])
def test_lookup_without_page_index_matches_pyarrow(tmp_path: Path, version: str, dictionary: bool,
                                                   compression: str) -> None:
    t = _table(4000, 0.2)
    path = tmp_path / "t.parquet"
    pq.write_table(t, path, data_page_version=version, use_dictionary=dictionary, compression=compression,
                   row_group_size=1500, data_page_size=512, write_batch_size=64)
    assert pq.ParquetFile(path).metadata.row_group(0).column(1).has_offset_index is False
    ids = t.column("id").to_pylist()
    for file_object in (False, True):
        ex = _check(path, [ids[2777]], file_object=file_object)
        # one match: each of the 4 other columns decodes exactly one data page of its row group
        assert ex.rows_returned == 1
        assert ex.pages_read == 4, str(ex)
        _check(path, [ids[5], ids[6], ids[1499], ids[1500], ids[3999]], file_object=file_object)
        _check(path, [ids[0], 1], file_object=file_object)  # 1 is absent (ids are multiples of 3)


def test_local_walk_reads_headers_only(tmp_path: Path) -> None:
    """From a local file the other columns' page headers are read with small reads, then only the
    pages holding matches: far fewer bytes than their chunks (which a file object reads whole)."""
    t = _table(60000, 0.1)
    path = tmp_path / "t.parquet"
    pq.write_table(t, path, use_dictionary=False, data_page_size=16 << 10, row_group_size=30000)
    v = [t.column("id")[45678].as_py()]
    ex_path, ex_obj = _check(path, v), _check(path, v, file_object=True)
    assert ex_path.pages_read == ex_obj.pages_read == 4 and ex_path.pages_total == ex_obj.pages_total >= 20
    rg = pq.ParquetFile(path).metadata.row_group(1)  # the match's: the other columns' chunks
    others = sum(rg.column(c).total_compressed_size for c in range(1, rg.num_columns))
    assert ex_obj.bytes_read - ex_path.bytes_read > 0.6 * others, (str(ex_path), str(ex_obj))


def test_long_headers(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Page headers longer than the window read for them (long string statistics; a tiny window)
    are read again whole."""
    rng = np.random.default_rng(3)
    n = 600
    ids = rng.permutation(n).astype(np.int64)
    t = pa.table({"id": ids, "s": [f"{i:05d}" * 700 for i in range(n)], "x": rng.random(n)})
    path = tmp_path / "long.parquet"
    pq.write_table(t, path, use_dictionary=False, max_rows_per_page=20)
    ex = _check(path, [int(ids[300]), int(ids[301])])
    assert ex.requests < 3 * ex.pages_total
    monkeypatch.setattr(page_walk, "HEADER_WINDOW", 16)
    _check(path, [int(ids[300])])
    small = _table(3000, 0.3)
    pq.write_table(small, tmp_path / "small.parquet", max_rows_per_page=37)
    _check(tmp_path / "small.parquet", [small.column("id")[1234].as_py()])


def test_walk_agrees_with_pyarrows_offset_index(tmp_path: Path) -> None:
    """The rows of each walked page of a file without a page index are those of the OffsetIndex
    pyarrow writes for the same data."""
    t = _table(3000, 0.3)
    kw = dict(data_page_size=700, write_batch_size=50, row_group_size=2000)
    pq.write_table(t, tmp_path / "plain.parquet", **kw)
    pq.write_table(t, tmp_path / "indexed.parquet", write_page_index=True, **kw)
    with pqbloom.ParquetFile(tmp_path / "plain.parquet") as plain, \
            pqbloom.ParquetFile(tmp_path / "indexed.parquet") as indexed:
        pages = 0
        for rg in range(plain.num_row_groups):
            index = indexed.row_group_reader(rg).page_index(indexed.columns, column_index=False)
            rows = plain.thrift_metadata.row_groups[rg].num_rows
            for d in plain.columns:
                meta = plain.chunk_metadata(rg, d)
                start, length = plain.chunk_range(meta, rg, d)
                w = walk_page_headers(plain.range_reader.read(start, length), start, d, meta.num_values, rows)
                oi = index[d.index].layout
                assert w is not None and oi is not None
                pages += len(w.offsets)
                assert w.first_rows.tolist() == oi.first_rows.tolist()
                # (offsets differ: with a page index pyarrow leaves statistics out of the page headers)
                assert (w.prefix[1] > 0) == (oi.prefix[1] > 0) and w.prefix[0] == start
        assert pages > 4 * plain.num_row_groups * len(plain.columns)


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(n=st.integers(1, 2500), null_rate=st.sampled_from([0.0, 0.1, 0.9, 1.0]),
       page_rows=st.integers(1, 400), version=st.sampled_from(["1.0", "2.0"]), dictionary=st.booleans(),
       picks=st.lists(st.integers(0, 10 ** 6), min_size=1, max_size=4), seed=st.integers(0, 1000))
def test_lookup_property(tmp_path: Path, n: int, null_rate: float, page_rows: int, version: str,
                         dictionary: bool, picks: list[int], seed: int) -> None:
    t = _table(n, null_rate, seed)
    path = tmp_path / "h.parquet"
    pq.write_table(t, path, data_page_version=version, use_dictionary=dictionary, max_rows_per_page=page_rows,
                   row_group_size=max(1, n // 2))
    ids = t.column("id").to_pylist()
    _check(path, sorted({ids[p % n] for p in picks}), expect_skips=False)


def _corrupt_page_count(src: Path, dst: Path, column: int, page: int) -> None:
    """Copy ``src`` with data page ``page`` of column ``column`` (row group 0) claiming one more value
    than it holds (same header length), so that the headers' counts exceed the footer's."""
    data = bytearray(src.read_bytes())
    with pqbloom.ParquetFile(src) as pf:
        d = pf.columns[column]
        meta = pf.chunk_metadata(0, d)
        start, length = pf.chunk_range(meta, 0, d)
    pos, k = start, 0
    while pos < start + length:
        h, body = parse_page_header(bytes(data), pos, offset=pos)
        if h.type == PageType.DATA_PAGE:
            if k == page:
                h.data_page_header.num_values += 1
                new = encode(h)
                assert len(new) == body - pos
                data[pos:body] = new
                dst.write_bytes(bytes(data))
                return
            k += 1
        pos = body + h.compressed_page_size
    raise AssertionError("page not found")


def test_inconsistent_headers_are_not_used(tmp_path: Path) -> None:
    """Page 2 of ``s`` claims 101 values for 100: the walk must not use those counts (it would decode
    the wrong page and return another row's value, silently), so the read decodes the whole chunk,
    as without the walk, and reports the damage."""
    n = 1000
    t = pa.table({"id": pa.array(np.arange(n, dtype=np.int64)),
                  "s": pa.array([f"v{i:05d}" for i in range(n)], pa.string())},
                 schema=pa.schema([pa.field("id", pa.int64(), False), pa.field("s", pa.string(), False)]))
    good, bad = tmp_path / "good.parquet", tmp_path / "bad.parquet"
    pq.write_table(t, good, use_dictionary=False, compression="none", max_rows_per_page=100)
    _check(good, [750])
    _corrupt_page_count(good, bad, column=1, page=2)
    with pytest.raises(CorruptFileError):
        pqbloom.read_table(bad, filters=field("id") == 750)
    with pqbloom.ParquetFile(bad) as pf:
        d = pf.columns[1]
        meta = pf.chunk_metadata(0, d)
        start, length = pf.chunk_range(meta, 0, d)
        assert walk_page_headers(pf.range_reader.read(start, length), start, d, meta.num_values, n) is None


def test_footer_count_disagreeing_with_rows_is_not_walked(tmp_path: Path) -> None:
    """A chunk whose footer value count is not the row group's row count is decoded whole."""
    t = _table(500, 0.0)
    path = tmp_path / "t.parquet"
    pq.write_table(t, path, max_rows_per_page=50)
    with pqbloom.ParquetFile(path) as pf:
        d = pf.columns[1]
        meta = pf.chunk_metadata(0, d)
        start, length = pf.chunk_range(meta, 0, d)
        buf = pf.range_reader.read(start, length)
        assert walk_page_headers(buf, start, d, meta.num_values, 500) is not None
        assert walk_page_headers(buf, start, d, meta.num_values, 499) is None
        assert walk_page_headers(buf[:-1], start, d, meta.num_values, 500) is None  # last page cut short
        assert walk_page_headers(buf + b"\0", start, d, meta.num_values, 500) is None  # bytes after the pages


# real-world files without a page index whose flat chunks hold several data pages (other writers)
# (path relative to REAL_WORLD, filter column, whether the other columns hold several pages)
CORPUS = [
    ("aloneguid-parquet-dotnet/src/Parquet.Test/data/special/multi_data_page.parquet", "value", True),  # parquet-mr
    ("aloneguid-parquet-dotnet/src/Parquet.Test/data/special/multi_data_page.v2.parquet", "value", False),  # v2
    ("aloneguid-parquet-dotnet/src/Parquet.Test/data/test-optionals-without-stats.v2.parquet", "id", False),
    ("duckdb-duckdb/data/parquet-testing/dictionary_multipage.parquet", "f", True),
    ("duckdb-duckdb/data/parquet-testing/sorted.zstd_18_131072_small.parquet", "gps_time", True),  # zstd, FLBA
    ("parquet-go-parquet-go/testdata/file.parquet", "span_id", True),  # parquet-go, nested columns beside
]


@needs(REAL_WORLD)
@pytest.mark.parametrize("rel,column,several", CORPUS)
def test_corpus_files_without_page_index(rel: str, column: str, several: bool) -> None:
    path = REAL_WORLD / rel
    full = pq.read_table(path)
    values = [v for v in full.column(column).to_pylist() if v is not None]
    assert values
    probe = [values[len(values) // 2]]
    ex = Explain()
    got = pqbloom.read_table(path, filters=field(column).isin(probe), explain=ex).to_arrow()
    want = pq.read_table(path, filters=[(column, "in", probe)])
    for name in want.column_names:
        assert got.column(name).to_pylist() == want.column(name).to_pylist(), name
    # (a chunk whose encoding stats count one data page is not walked: it would skip nothing)
    assert (ex.pages_total > 0 or not several) and (ex.pages_skipped > 0) == several, str(ex)
