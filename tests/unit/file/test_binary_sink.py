"""Byte-array chunks decoded into one buffer (pqbloom.file.binary_sink): same values as pyarrow
whatever the pages and the size statistics say, and no second copy of the column."""

from __future__ import annotations

import io
import tracemalloc

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import pqbloom
from pqbloom.errors import CorruptFileError
from pqbloom.format import T, decode, encode


def strings(n: int, seed: int, nulls: bool = False) -> pa.Array:
    rng = np.random.default_rng(seed)
    lens = rng.integers(0, 40, n)
    vals = [bytes(rng.integers(97, 123, k, dtype=np.uint8)).decode() for k in lens]
    mask = rng.random(n) < 0.1 if nulls else None
    return pa.array(vals, pa.string(), mask=mask)


def peer_file(table: pa.Table, **opts: object) -> bytes:
    buf = io.BytesIO()
    pq.write_table(table, buf, **opts)  # type: ignore[arg-type]
    return buf.getvalue()


def rewrite_size_statistics(data: bytes, fn) -> bytes:  # type: ignore[no-untyped-def]
    """Set every chunk's SizeStatistics.unencoded_byte_array_data_bytes to fn(true value)."""
    flen = int.from_bytes(data[-8:-4], "little")
    foff = len(data) - 8 - flen
    md = decode(T.FileMetaData, data[foff:foff + flen])
    for rg in md.row_groups:
        for cc in rg.columns:
            ss = cc.meta_data.size_statistics
            if ss is not None and ss.unencoded_byte_array_data_bytes is not None:
                ss.unencoded_byte_array_data_bytes = fn(ss.unencoded_byte_array_data_bytes)
    f = encode(md)
    return data[:foff] + f + len(f).to_bytes(4, "little") + b"PAR1"


@pytest.mark.parametrize("compression", ["snappy", "zstd", "none"])
@pytest.mark.parametrize("nulls", [False, True])
@pytest.mark.parametrize("lie", [None, "small", "zero", "large"])
def test_byte_array_chunks_read_as_pyarrow_reads_them(compression: str, nulls: bool, lie: str | None) -> None:
    # dictionary pages first, then PLAIN pages once the small dictionary overflows (pyarrow's
    # fallback), several pages and row groups; SizeStatistics true, or lying either way
    n = 30_000
    t = pa.table({"s": strings(n, 1, nulls), "k": pa.array([f"key{i % 50}" for i in range(n)])})
    data = peer_file(t, compression=compression, dictionary_pagesize_limit=4096, data_page_size=8192,
                     row_group_size=12_000)
    if lie is not None:
        data = rewrite_size_statistics(data, {"small": lambda v: v // 3, "zero": lambda v: 0,
                                              "large": lambda v: v * 3}[lie])
    want = pq.read_table(io.BytesIO(data))
    for threads in (False, True):
        got = pqbloom.read_table(io.BytesIO(data), use_threads=threads).to_arrow()
        assert got.column("s").to_pylist() == want.column("s").to_pylist()
        assert got.column("k").to_pylist() == want.column("k").to_pylist()
    one_group = peer_file(t, compression=compression, dictionary_pagesize_limit=4096, data_page_size=8192)
    got = pqbloom.read_table(io.BytesIO(one_group), use_threads=False).to_arrow()
    assert got.column("s").to_pylist() == want.column("s").to_pylist()


@pytest.mark.traces_memory
def test_plain_string_column_is_decoded_without_a_second_copy(tmp_path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    # 200,000 distinct strings in one row group, PLAIN pages (as after pyarrow's dictionary
    # fallback): the compiled PLAIN kernel decodes the pages into the column's own buffer, so the
    # read's peak stays near the result; joining per-page pieces into a new column held both at
    # once (about twice the result). The numpy reference decodes each page on its own and copies
    # it in (its temporaries are larger), so this is about the compiled path, in both CI modes.
    from pqbloom import kernels

    if not kernels.EXTENSION_BUILT:
        pytest.fail("the compiled kernels are not built: run `pip install -e .` (needs a C compiler)")
    monkeypatch.setattr(kernels, "COMPILED", True)
    n = 200_000
    rng = np.random.default_rng(3)
    lens = rng.integers(20, 60, n)
    offsets = np.zeros(n + 1, np.int64)
    np.cumsum(lens, out=offsets[1:])
    text = np.resize(np.frombuffer(b"user.name+tag@example.org/", np.uint8), int(offsets[-1]))  # compressible:
    arr = pa.LargeStringArray.from_buffers(n, pa.py_buffer(offsets), pa.py_buffer(text))  # the file is small
    path = tmp_path / "plain.parquet"
    pq.write_table(pa.table({"s": arr.cast(pa.string())}), path, use_dictionary=False, compression="snappy")
    pqbloom.read_table(path, use_threads=False)  # warm: imports and caches outside the measurement
    tracemalloc.start()
    try:
        t = pqbloom.read_table(path, use_threads=False)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    result = int(offsets[-1]) + 8 * (n + 1)
    assert path.stat().st_size < 0.2 * result
    assert t.to_arrow().column("s").to_pylist()[:3] == arr.to_pylist()[:3]
    assert peak < 1.4 * result, (peak, result)


@pytest.mark.parametrize("data_bytes", [None, 0, 10, 10_000])
@pytest.mark.parametrize("chunks", [1, 3])
def test_column_builder_keeps_the_order_of_byte_array_pieces(data_bytes: int | None, chunks: int) -> None:
    # a column's byte-array pieces, held, copied or fallen back (no size hint, a short one, enough):
    # the values come out in order. The first piece was held uncopied and later pieces, once one had
    # fallen back, were taken for a new first piece (parquet-go's file.parquet read out of order).
    from pqbloom.arrays import BinaryArray
    from pqbloom.file.column_builder import ColumnBuilder
    from pqbloom.file.column_reader import ChunkParts
    from pqbloom.schema import Field

    rng = np.random.default_rng(5)
    pages = [[bytes(rng.integers(97, 123, int(k), dtype=np.uint8)) for k in rng.integers(0, 9, int(m))]
             for m in rng.integers(1, 30, 4 * chunks)]
    values = [v for p in pages for v in p]
    f = Field("s", "string", nullable=False)
    builder = ColumnBuilder(f, len(values), data_bytes)
    for c in range(chunks):
        mine = pages[4 * c:4 * c + 4]
        builder.add(ChunkParts([BinaryArray.from_pylist(p) for p in mine], None, sum(len(p) for p in mine)))
    assert builder.finish().values.to_pylist() == values


def _no_join(monkeypatch: pytest.MonkeyPatch) -> None:
    """Make a join of decoded byte-array pages fail the test (what the sink spares)."""
    def refuse(parts: object) -> None:
        raise AssertionError("byte-array pages were joined after decoding")
    monkeypatch.setattr(pqbloom.arrays.BinaryArray, "concat", classmethod(lambda cls, parts: refuse(parts)))


def strip_size_statistics(data: bytes) -> bytes:
    """The file without SizeStatistics (as parquet-go and older writers leave it)."""
    flen = int.from_bytes(data[-8:-4], "little")
    foff = len(data) - 8 - flen
    md = decode(T.FileMetaData, data[foff:foff + flen])
    for rg in md.row_groups:
        for cc in rg.columns:
            cc.meta_data.size_statistics = None
    f = encode(md)
    return data[:foff] + f + len(f).to_bytes(4, "little") + b"PAR1"


@pytest.mark.parametrize("stats", ["absent", "small"])
def test_few_long_values_over_many_pages_decode_into_one_buffer(monkeypatch: pytest.MonkeyPatch,
                                                                stats: str) -> None:
    # 600 values of ~2 KB in pages of 8 KB: fewer values than a sink used to need, many pages.
    # Without size statistics (the column then has no size hint) the values land in one buffer
    # sized by the chunk; with statistics that lie they still read right
    rng = np.random.default_rng(3)
    vals = [bytes(rng.integers(97, 123, int(k), dtype=np.uint8)).decode() for k in rng.integers(1000, 3000, 600)]
    data = peer_file(pa.table({"s": pa.array(vals)}), use_dictionary=False, data_page_size=8192, write_batch_size=4)
    data = strip_size_statistics(data) if stats == "absent" else rewrite_size_statistics(data, lambda v: v // 3)
    want = pq.read_table(io.BytesIO(data))
    if stats == "absent":
        _no_join(monkeypatch)
    assert pqbloom.read_table(io.BytesIO(data), use_threads=False).to_arrow().equals(want)


def test_nested_leaf_pages_decode_into_one_buffer(monkeypatch: pytest.MonkeyPatch) -> None:
    # a list<string> leaf without a dictionary over many PLAIN pages: one buffer, values as pyarrow's
    rng = np.random.default_rng(4)
    lists = [[f"v{int(x)}-{'x' * int(x % 40)}" for x in rng.integers(0, 10**6, int(k))] if k % 7 else None
             for k in rng.integers(0, 12, 4000)]
    data = peer_file(pa.table({"l": pa.array(lists, pa.list_(pa.string()))}), use_dictionary=False,
                     data_page_size=4096)
    want = pq.read_table(io.BytesIO(data))
    _no_join(monkeypatch)
    assert pqbloom.read_table(io.BytesIO(data), use_threads=False).to_arrow().equals(want)


def rewrite_one_chunk(data: bytes, rg: int, delta: int) -> bytes:
    """Change the byte count SizeStatistics give row group ``rg``'s chunks by ``delta``."""
    flen = int.from_bytes(data[-8:-4], "little")
    foff = len(data) - 8 - flen
    md = decode(T.FileMetaData, data[foff:foff + flen])
    for cc in md.row_groups[rg].columns:
        ss = cc.meta_data.size_statistics
        if ss is not None and ss.unencoded_byte_array_data_bytes is not None:
            ss.unencoded_byte_array_data_bytes = max(ss.unencoded_byte_array_data_bytes + delta, 0)
    f = encode(md)
    return data[:foff] + f + len(f).to_bytes(4, "little") + b"PAR1"


@pytest.mark.parametrize("threads", [False, True])
@pytest.mark.parametrize("rg", [0, 1, 3])
@pytest.mark.parametrize("delta", [-1, 1, -500])
@pytest.mark.parametrize("nulls", [False, True])
def test_one_chunk_whose_statistics_lie_does_not_spoil_its_neighbours(threads: bool, rg: int, delta: int,
                                                                       nulls: bool) -> None:
    # several row groups decode into regions of one column buffer, each chunk where the statistics
    # of the chunks before it put it: one chunk off by a byte (or more) shifts where it ends against
    # where its neighbour starts. Its values, and its neighbours', must still be right
    n = 40_000
    t = pa.table({"s": strings(n, 4, nulls), "k": pa.array([f"key{i % 50}" for i in range(n)])})
    data = rewrite_one_chunk(peer_file(t, row_group_size=10_000, data_page_size=8192), rg, delta)
    got = pqbloom.read_table(io.BytesIO(data), use_threads=threads).to_arrow()
    assert got.column("s").to_pylist() == t.column("s").to_pylist()
    assert got.column("k").to_pylist() == t.column("k").to_pylist()


@pytest.mark.parametrize("threads", [False, True])
@pytest.mark.parametrize("nulls", [False, True])
def test_row_groups_decode_into_the_column_without_a_copy(monkeypatch: pytest.MonkeyPatch, threads: bool,
                                                          nulls: bool) -> None:
    # each row group's chunk decodes into its region of the column's buffers: no chunk is copied
    # into the column afterwards, and nothing is joined
    from pqbloom.file.column_builder import ColumnBuilder

    n = 50_000
    t = pa.table({"s": strings(n, 6, nulls), "k": pa.array([f"key{i % 50}" for i in range(n)])})
    data = peer_file(t, row_group_size=7_000, data_page_size=8192, dictionary_pagesize_limit=4096)
    _no_join(monkeypatch)
    monkeypatch.setattr(ColumnBuilder, "_copy_binary", lambda self, piece: pytest.fail("chunk copied"))
    got = pqbloom.read_table(io.BytesIO(data), use_threads=threads)
    assert got.to_arrow().column("s").to_pylist() == t.column("s").to_pylist()
    assert got.to_arrow().column("k").to_pylist() == t.column("k").to_pylist()


@pytest.mark.parametrize("room", [0, 5, 9, 40])
def test_dictionary_pages_expand_into_the_sink_or_are_kept_whole(room: int) -> None:
    # dictionary indices expanded straight into the sink while they fit; a page that does not fit is
    # left to the caller (take() says so, nothing of it is counted) and kept as a piece after the rest
    from pqbloom.arrays import BinaryArray
    from pqbloom.file.binary_sink import BinarySink

    dictionary = BinaryArray.from_pylist([b"ab", b"", b"cde"])
    pages = [np.array([0, 2, 1], np.int32), np.array([2, 2], np.int32), np.array([0], np.int32)]
    sink = BinarySink(6, room)
    for idx in pages:
        if not sink.take(dictionary, idx):
            sink.add(dictionary.take(idx))
    got = [v for p in sink.pieces() for v in p.to_pylist()]
    assert got == [b"ab", b"cde", b"", b"cde", b"cde", b"ab"]
    assert sink.complete() == (room == 13)
    with pytest.raises(CorruptFileError, match="out of range"):
        BinarySink(2, 40).take(dictionary, np.array([0, 3], np.int32))
