"""The writer's compiled kernels against their numpy reference and independent oracles.

* :func:`pqbloom.kernels.hybrid.encode_hybrid` (RLE / bit-packed hybrid encoder): the same bytes as the
  reference, which a small decoder written here from the format's description turns back into the values;
  files whose levels and dictionary indices it encoded are read by pyarrow and DuckDB equal to the input.
* :func:`pqbloom.kernels.dictionary.unique_first` / ``count_distinct``: the same result as the reference,
  and the first-appearance order and codes a Python dict gives, with the size limits honoured.
* :mod:`pqbloom.kernels.bloom`: XXH64 equal to the ``xxhash`` package; insertion equal to the reference;
  a written file's Bloom filters, probed here with ``xxhash`` of the PLAIN bytes and the spec's block and
  bit rule, hold every value of the column.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import pqbloom
from pqbloom import kernels
from pqbloom.arrays import BinaryArray
from pqbloom.kernels import bloom as bloom_kernels
from pqbloom.kernels import dictionary as dictionary_kernels
from pqbloom.kernels import hybrid as hybrid_kernels
from pqbloom.kernels.reference import bloom as bloom_reference
from pqbloom.kernels.reference import dictionary as dictionary_reference
from pqbloom.kernels.reference.hybrid_encode import encode_hybrid as reference_encode

xxhash = pytest.importorskip("xxhash", reason="the xxhash package is the independent XXH64 oracle")

PROPS = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@contextmanager
def compiled(on: bool) -> Iterator[None]:
    if on and not kernels.EXTENSION_BUILT:
        pytest.fail("the compiled kernels are not built: run `pip install -e .` (needs a C compiler)")
    saved = kernels.COMPILED
    kernels.COMPILED = on
    try:
        yield
    finally:
        kernels.COMPILED = saved


# -- hybrid encoder -------------------------------------------------------------------------------

def decode_stream(buf: bytes, bit_width: int, count: int) -> list[int]:
    """The hybrid's values, decoded one run at a time as the format describes them (no pqbloom code)."""
    out: list[int] = []
    pos = 0
    vbytes = (bit_width + 7) // 8
    while len(out) < count:
        header = shift = 0
        while True:
            b = buf[pos]
            pos += 1
            header |= (b & 0x7F) << shift
            shift += 7
            if not b & 0x80:
                break
        if header & 1:
            groups = header >> 1
            assert 1 <= groups <= 63  # parquet-java and Arrow never write longer bit-packed runs
            bits = int.from_bytes(buf[pos:pos + groups * bit_width], "little")
            pos += groups * bit_width
            mask = (1 << bit_width) - 1
            out += [(bits >> (i * bit_width)) & mask for i in range(groups * 8)]
        else:
            assert header >> 1 >= 8
            out += [int.from_bytes(buf[pos:pos + vbytes], "little")] * (header >> 1)
            pos += vbytes
    assert pos == len(buf)
    return out[:count]


@st.composite
def hybrid_inputs(draw: st.DrawFn) -> tuple[np.ndarray, int, int]:
    bw = draw(st.integers(0, 32))
    hi = (1 << bw) - 1
    pieces = draw(st.lists(st.tuples(st.integers(0, hi), st.integers(1, 40)), max_size=40))
    vals = [v for v, k in pieces for _ in range(k)]
    # values fit ``bit_width`` (the caller's check); at 32 bits an int32 holds them as two's complement
    dtypes = [d for d in (np.uint8, np.int8, np.int16, np.uint16, np.int32, np.uint32, np.int64)
              if bw < np.iinfo(d).bits or (bw == 32 and d == np.int32)]
    dtype = draw(st.sampled_from(dtypes + ([np.bool_] if bw <= 1 else [])))
    a = np.array(vals, np.uint64).astype(np.uint32).view(np.int32) if dtype == np.int32 and bw == 32 \
        else np.array(vals, np.uint64).astype(dtype)
    return a, bw, draw(st.sampled_from([8, 9, 12, 15, 16, 40]))


@PROPS
@given(hybrid_inputs())
def test_hybrid_encode_compiled_equals_reference_and_decodes(args: tuple[np.ndarray, int, int]) -> None:
    values, bw, min_run = args
    with compiled(True):
        got = hybrid_kernels.encode_hybrid(values, bw, min_run)
    assert got == reference_encode(values, bw, min_run)
    mask = (1 << bw) - 1
    assert decode_stream(got, bw, len(values)) == [int(v) & mask for v in values.astype(np.int64).tolist()]


def test_hybrid_encode_long_runs_and_stretches() -> None:
    """Bit-packed stretches longer than 63 groups, RLE runs with multi-byte headers, a run that loses
    its place to the alignment (fewer than 8 values left after it) and a final partial group."""
    rng = np.random.default_rng(5)
    parts = [rng.integers(0, 1 << 20, 1000), np.full(100_000, 7), rng.integers(0, 1 << 20, 5),
             np.full(10, 3), rng.integers(0, 1 << 20, 3), np.full(300, 1 << 19), rng.integers(0, 1 << 20, 11)]
    v = np.concatenate(parts).astype(np.int32)
    for bw in (20, 31, 32):
        with compiled(True):
            got = hybrid_kernels.encode_hybrid(v, bw, 8)
        assert got == reference_encode(v, bw, 8)
        assert decode_stream(got, bw, len(v)) == v.tolist()


def test_files_with_levels_and_indices_read_by_peers(tmp_path: Any) -> None:
    """Definition levels and dictionary indices come from the encoder: pyarrow and DuckDB read the file."""
    duckdb = pytest.importorskip("duckdb")
    rng = np.random.default_rng(11)
    n = 50_000
    ids = np.sort(rng.integers(0, 2000, n)).astype(np.int64)  # long runs of dictionary indices
    flags = rng.choice(np.array(["A", "N", "R"]), n)
    comment = rng.choice(np.array([f"comment {i}" for i in range(300)]), n)
    mask = rng.random(n) < 0.2
    mask[1000:5000] = True  # a long run of nulls
    table = pa.table({"id": ids, "flag": flags, "comment": pa.array(comment, mask=mask),
                      "x": pa.array(rng.random(n), mask=rng.random(n) < 0.5)})
    p = tmp_path / "levels.parquet"
    with compiled(True):
        pqbloom.write_table(table, p, row_group_size=20_000)
    assert pq.read_table(p).equals(table)
    got = duckdb.sql(f"select * from read_parquet('{p}')").fetch_arrow_table()
    assert got.column("comment").to_pylist() == table.column("comment").to_pylist()
    assert got.column("id").to_pylist() == ids.tolist()
    assert got.column("x").to_pylist() == table.column("x").to_pylist()


# -- dictionary build -----------------------------------------------------------------------------

def dict_oracle(items: list[Any]) -> tuple[list[int], list[int]]:
    """First-appearance positions and codes, by a Python dict."""
    seen: dict[Any, int] = {}
    firsts: list[int] = []
    codes = []
    for i, x in enumerate(items):
        if x not in seen:
            seen[x] = len(firsts)
            firsts.append(i)
        codes.append(seen[x])
    return firsts, codes


def check_unique(values: Any, items: list[Any], sizes: list[int] | None, max_count: int | None,
                 max_bytes: int | None) -> None:
    with compiled(True):
        got = dictionary_kernels.unique_first(values, max_count, max_bytes)
    want = dictionary_reference.unique_first(values, max_count, max_bytes)
    firsts, codes = dict_oracle(items)
    over = (max_count is not None and len(firsts) > max_count) or (
        sizes is not None and max_bytes is not None and sum(4 + sizes[i] for i in firsts) > max_bytes)
    if over:
        assert got is None and want is None
        return
    assert got is not None and want is not None
    assert got[0].tolist() == firsts == want[0].tolist()
    assert got[1].tolist() == codes == want[1].tolist()
    assert got[1].dtype == np.int32


@PROPS
@given(st.lists(st.integers(-3, 3), max_size=200), st.sampled_from(["i1", "u2", "i4", "i8", "f4", "f8"]),
       st.one_of(st.none(), st.integers(0, 8)))
def test_unique_first_numbers(raw: list[int], dtype: str, max_count: int | None) -> None:
    a = np.array(raw, np.int64).astype(dtype)
    if dtype.startswith("f") and len(a):
        a[::7] = -0.0  # -0.0 and +0.0 are distinct bit patterns, so distinct entries
    items = [x.tobytes() for x in a]
    check_unique(a, items, None, max_count, None)


@PROPS
@given(st.lists(st.one_of(st.binary(max_size=20), st.sampled_from([b"", b"a", b"ab", b"a\x00", b"x" * 9])),
                max_size=150),
       st.one_of(st.none(), st.integers(0, 10)), st.one_of(st.none(), st.integers(0, 120)), st.integers(0, 9))
def test_unique_first_byte_strings(raw: list[bytes], max_count: int | None, max_bytes: int | None,
                                   lead: int) -> None:
    b = BinaryArray.from_pylist(raw)
    if lead:  # not compact: bytes before the first value
        b = BinaryArray(b.offsets + lead, np.concatenate([np.full(lead, 0xEE, np.uint8), b.data]))
    check_unique(b, raw, [len(x) for x in raw], max_count, max_bytes)


@PROPS
@given(st.integers(1, 20), st.lists(st.integers(0, 3), max_size=100))
def test_unique_first_rows(width: int, picks: list[int]) -> None:
    rows = np.random.default_rng(width).integers(0, 256, (4, width), dtype=np.uint8)
    rows[1, -1] ^= 1  # rows differing only in their last byte
    m = rows[np.array(picks, np.int64)] if picks else np.zeros((0, width), np.uint8)
    check_unique(m, [r.tobytes() for r in m], None, None, None)


def test_unique_first_many_values_grow_the_table() -> None:
    rng = np.random.default_rng(2)
    a = rng.integers(0, 300_000, 1_000_000)
    check_unique(a, a.tolist(), None, None, None)
    check_unique(a, a.tolist(), None, 100_000, None)  # stops at the limit


@PROPS
@given(st.lists(st.integers(0, 2**64 - 1) | st.sampled_from([0, 1, 2**63]), max_size=300))
def test_count_distinct(raw: list[int]) -> None:
    k = np.array(raw, np.uint64)
    with compiled(True):
        got = dictionary_kernels.count_distinct(k)
    assert got == len(set(raw)) == dictionary_reference.count_distinct(k)


def test_count_distinct_many_buckets() -> None:
    k = np.random.default_rng(3).integers(0, 1 << 40, 300_000, dtype=np.uint64)
    with compiled(True):
        assert dictionary_kernels.count_distinct(k) == len(np.unique(k))


# -- Bloom kernels --------------------------------------------------------------------------------

@PROPS
@given(st.lists(st.binary(max_size=80), max_size=60))
def test_xxh64_binary_and_rows_equal_xxhash(raw: list[bytes]) -> None:
    b = BinaryArray.from_pylist(raw)
    want = [xxhash.xxh64_intdigest(x) for x in raw]
    with compiled(True):
        assert bloom_kernels.xxh64_binary(b).tolist() == want
        for w in (1, 4, 8, 13, 32, 40):
            m = np.frombuffer(b"".join(x.ljust(w, b"\x01")[:w] for x in raw), np.uint8).reshape(-1, w)
            assert bloom_kernels.xxh64_fixed(m).tolist() == [xxhash.xxh64_intdigest(r.tobytes()) for r in m]
    assert bloom_reference.xxh64_binary(b).tolist() == want


@PROPS
@given(st.lists(st.integers(0, 2**64 - 1), max_size=60))
def test_xxh64_lanes_equal_xxhash(raw: list[int]) -> None:
    u64 = np.array(raw, np.uint64)
    u32 = (u64 & np.uint64(0xFFFFFFFF)).astype(np.uint32)
    for lanes, fn, w in ((u64, bloom_kernels.xxh64_u64, 8), (u32, bloom_kernels.xxh64_u32, 4)):
        out = np.empty(len(lanes), np.uint64)
        with compiled(True):
            fn(lanes, out)
        assert out.tolist() == [xxhash.xxh64_intdigest(int(x).to_bytes(w, "little")) for x in lanes.tolist()]


@PROPS
@given(st.integers(1, 64), st.lists(st.integers(0, 2**64 - 1), max_size=200))
def test_insert_equals_reference(blocks: int, raw: list[int]) -> None:
    h = np.array(raw, np.uint64)
    got = np.zeros((blocks, 8), np.uint32)
    want = np.zeros((blocks, 8), np.uint32)
    with compiled(True):
        bloom_kernels.insert_hashes(got, h)
    bloom_reference.insert_hashes(want, h)
    assert np.array_equal(got, want)


SALT = [0x47B6137B, 0x44974D91, 0x8824AD5B, 0xA2B7289D, 0x705495C7, 0x2DF1424B, 0x9EFC4947, 0x5C6BFB31]


def spec_contains(bitset: bytes, h: int) -> bool:
    """The Parquet spec's split-block check, one hash, in Python."""
    num_blocks = len(bitset) // 32
    block = ((h >> 32) * num_blocks) >> 32
    for i in range(8):
        word = int.from_bytes(bitset[block * 32 + 4 * i: block * 32 + 4 * i + 4], "little")
        if not word >> ((((h & 0xFFFFFFFF) * SALT[i]) & 0xFFFFFFFF) >> 27) & 1:
            return False
    return True


def test_written_filters_hold_plain_bytes_hashed_by_xxhash(tmp_path: Any) -> None:
    """Dictionary-encoded and plain chunks: every value's PLAIN bytes, hashed by ``xxhash``, probe present
    in the file's filter (the bitset is read from the offsets in the footer); pyarrow and DuckDB read
    the file equal to the input."""
    duckdb = pytest.importorskip("duckdb")
    rng = np.random.default_rng(8)
    n = 30_000
    key = rng.permutation(n).astype(np.int64) * 3
    part = rng.integers(0, 200, n).astype(np.int32)
    city = rng.choice(np.array([f"city-{i}" for i in range(500)]), n)
    comment = np.array([f"unique comment {i} {'x' * (i % 30)}" for i in range(n)])  # passes the dictionary limit
    table = pa.table({"key": key, "part": part, "city": city, "comment": comment})
    p = tmp_path / "bloom.parquet"
    with compiled(True):
        pqbloom.write_table(table, p, row_group_size=12_000,
                            bloom_filter_options={c: True for c in ("key", "part", "city", "comment")})
    assert pq.read_table(p).equals(table)
    assert duckdb.sql(f"select * from read_parquet('{p}')").fetch_arrow_table().equals(table)
    raw = p.read_bytes()
    meta = pqbloom.ParquetFile(p).thrift_metadata
    encodings_seen = set()
    start = 0
    for rg in meta.row_groups:
        stop = start + rg.num_rows
        for name, cc in zip(table.column_names, rg.columns):
            m = cc.meta_data
            encodings_seen.add((name, 8 in m.encodings))  # 8: RLE_DICTIONARY
            off, length = m.bloom_filter_offset, m.bloom_filter_length
            assert off is not None and length is not None
            nbytes = len(raw[off:off + length])
            # the header is a Thrift struct of at most a few bytes before the bitset, whose size is
            # a power of two: the bitset is the last such number of bytes of the filter
            size = 1 << (nbytes.bit_length() - 1)
            bitset = raw[off + length - size: off + length]
            col = table.column(name).slice(start, stop - start).to_pylist()
            for v in col[:: 7]:
                if name == "key":
                    b = int(v).to_bytes(8, "little", signed=True)
                elif name == "part":
                    b = int(v).to_bytes(4, "little", signed=True)
                else:
                    b = v.encode()
                assert spec_contains(bitset, xxhash.xxh64_intdigest(b)), (name, v)
        start = stop
    assert ("city", True) in encodings_seen and ("comment", False) in encodings_seen


# -- statistics of dictionary-encoded strings (bounds from the indices' ranks) ------------------------

@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.sampled_from([b"", b"a", b"a\x00", b"ab", b"b", b"\x7f", b"\x80", b"\xff", b"\xff\xff", b"zz" * 40]),
                min_size=2, max_size=10, unique=True),
       st.integers(0, 2**32 - 1), st.booleans())
def test_dictionary_page_statistics_are_the_values_min_and_max(tmp_path_factory: Any, entries: list[bytes],
                                                               seed: int, nulls: bool) -> None:
    """Every page's bounds in the column index and the chunk's statistics (read by pyarrow) are the
    min and max, byte-wise unsigned, of the page's / chunk's values, computed here in Python; the
    long value is truncated as statistics_truncate_length says."""
    from pqbloom.format import T, decode

    rng = np.random.default_rng(seed)
    n = 4000
    pick = rng.integers(0, len(entries), n)
    # clustered: each page sees only some of the entries, so page bounds differ from the chunk's
    pick = np.sort(pick) if seed % 2 else pick
    mask = rng.random(n) < 0.3 if nulls else np.zeros(n, bool)
    col = pa.array([entries[i] for i in pick.tolist()], pa.binary(), mask=mask)
    p = tmp_path_factory.mktemp("dict") / "s.parquet"
    with compiled(True):
        pqbloom.write_table(pa.table({"s": col}), p, data_page_size=64, statistics_truncate_length=16)
    assert pq.read_table(p).column("s").combine_chunks().equals(col)
    md = pq.ParquetFile(p).metadata.row_group(0).column(0)
    assert "RLE_DICTIONARY" in md.encodings
    present = [v for v in col.to_pylist() if v is not None]

    def trunc_max(v: bytes) -> bytes:
        if len(v) <= 16:
            return v
        cut = bytearray(v[:16])
        while cut and cut[-1] == 0xFF:
            cut.pop()
        if not cut:
            return v
        cut[-1] += 1
        return bytes(cut)

    if present:
        assert bytes(md.statistics.min)[:16] == min(present)[:16]
        assert bytes(md.statistics.max) == trunc_max(max(present))
    raw = p.read_bytes()
    cc = pqbloom.ParquetFile(p).thrift_metadata.row_groups[0].columns[0]
    ci = decode(T.ColumnIndex, raw[cc.column_index_offset:cc.column_index_offset + cc.column_index_length])
    oi = decode(T.OffsetIndex, raw[cc.offset_index_offset:cc.offset_index_offset + cc.offset_index_length])
    starts = [loc.first_row_index for loc in oi.page_locations] + [n]
    assert len(starts) > 2  # several pages
    values = col.to_pylist()
    for k in range(len(starts) - 1):
        page = [v for v in values[starts[k]:starts[k + 1]] if v is not None]
        assert ci.null_pages[k] == (not page)
        if page:
            assert ci.min_values[k] == min(page)[:16]
            assert ci.max_values[k] == trunc_max(max(page))
