"""Split-block Bloom filter: hashing, bit layout, sizing, serialization, parsing."""

from __future__ import annotations

import math
import struct
import tracemalloc
from contextlib import contextmanager
from pathlib import Path

import numpy as np
import pytest
import xxhash
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import pqbloom
from pqbloom import xxhash64
from pqbloom.arrays import BinaryArray
from pqbloom.bloom import (
    MAX_BLOOM_FILTER_BYTES,
    SALT,
    BloomFilter,
    hash_scalar,
    hash_values,
    optimal_num_bytes,
    theoretical_fpp,
)
from pqbloom.errors import BloomFilterError, CorruptFileError, UnsupportedError
from pqbloom.format import T
from pqbloom.kernels.reference.bloom import FILTER_CHUNK
from pqbloom.xxhash64 import xxh64_binary, xxh64_fixed
from tests.corpora import needs
from tests.paths import FIXTURES_DATA as FIXTURES

PT = T.Type

HYP = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def ref_hashes(rows) -> list[int]:
    return [xxhash.xxh64_intdigest(bytes(r)) for r in rows]


@contextmanager
def numpy_only():
    """Force every length through the numpy XXH64 (no per-value fallback)."""
    saved = xxhash64.VECTOR_MAX_LEN, xxhash64.VECTOR_MIN_GROUP
    xxhash64.VECTOR_MAX_LEN, xxhash64.VECTOR_MIN_GROUP = 1024, 1
    try:
        yield
    finally:
        xxhash64.VECTOR_MAX_LEN, xxhash64.VECTOR_MIN_GROUP = saved


def ref_filter(num_bytes: int, hashes) -> np.ndarray:
    """The spec's pseudocode, one hash at a time, in plain Python ints."""
    z = num_bytes // 32
    words = np.zeros((z, 8), np.uint32)
    for h in hashes:
        h = int(h)
        i = ((h >> 32) * z) >> 32
        x = h & 0xFFFFFFFF
        for w, salt in enumerate(SALT):
            words[i, w] |= np.uint32(1 << (((x * salt) & 0xFFFFFFFF) >> 27))
    return words


# --------------------------------------------------------------------------
# XXH64
# --------------------------------------------------------------------------

@pytest.mark.parametrize("force_numpy", [False, True])
def test_xxh64_fixed_every_width(force_numpy: bool) -> None:
    rng = np.random.default_rng(0)
    ctx = numpy_only() if force_numpy else contextmanager(lambda: (yield))()
    with ctx:
        for width in [*range(0, 101), 127, 128, 129, 255, 300]:
            m = rng.integers(0, 256, (37, width), dtype=np.uint8)
            assert xxh64_fixed(m).tolist() == ref_hashes(m), width
            # a non-contiguous view takes the copying path
            wide = rng.integers(0, 256, (37, width + 5), dtype=np.uint8)[:, 2:width + 2]
            assert xxh64_fixed(wide).tolist() == ref_hashes(wide), width


@HYP
@given(width=st.integers(0, 100), rows=st.integers(0, 12), data=st.data(), force_numpy=st.booleans())
def test_xxh64_fixed_hypothesis(width: int, rows: int, data: st.DataObject, force_numpy: bool) -> None:
    raw = data.draw(st.binary(min_size=width * rows, max_size=width * rows))
    m = np.frombuffer(raw, np.uint8).reshape(rows, width)
    if force_numpy:
        with numpy_only():
            got = xxh64_fixed(m)
    else:
        got = xxh64_fixed(m)
    assert got.dtype == np.uint64
    assert got.tolist() == ref_hashes(m)


def test_xxh64_fixed_chunk_boundaries() -> None:
    rng = np.random.default_rng(1)
    for width in (4, 8, 12):
        m = rng.integers(0, 256, (xxhash64.HASH_CHUNK_ROWS * 2 + 3, width), dtype=np.uint8)
        got = xxh64_fixed(m)
        for i in (0, xxhash64.HASH_CHUNK_ROWS - 1, xxhash64.HASH_CHUNK_ROWS, len(m) - 1):
            assert int(got[i]) == xxhash.xxh64_intdigest(m[i].tobytes())


def test_xxh64_fixed_rejects_wrong_input() -> None:
    with pytest.raises(TypeError):
        xxh64_fixed(np.zeros((3, 4), np.int8))
    with pytest.raises(TypeError):
        xxh64_fixed(np.zeros(12, np.uint8))


@HYP
@given(values=st.lists(st.binary(max_size=100), max_size=40), force_numpy=st.booleans())
def test_xxh64_binary_hypothesis(values: list[bytes], force_numpy: bool) -> None:
    arr = BinaryArray.from_pylist(values)
    if force_numpy:
        with numpy_only():
            got = xxh64_binary(arr)
    else:
        got = xxh64_binary(arr)
    assert got.tolist() == ref_hashes(values)


def test_xxh64_binary_mixed_lengths_large() -> None:
    rng = np.random.default_rng(2)
    lens = np.concatenate([rng.integers(0, 80, 20_000), rng.integers(0, 700, 300), [0] * 100, [5] * 3])
    rng.shuffle(lens)
    values = [rng.bytes(int(n)) for n in lens]
    arr = BinaryArray.from_pylist(values)
    expected = ref_hashes(values)
    assert xxh64_binary(arr).tolist() == expected
    # a slice whose offsets do not start at 0, and equal-length values
    assert xxh64_binary(arr.slice(1000, 3000)).tolist() == expected[1000:3000]
    same = [rng.bytes(16) for _ in range(500)]
    assert xxh64_binary(BinaryArray.from_pylist(same)).tolist() == ref_hashes(same)
    assert xxh64_binary(BinaryArray.from_pylist([])).tolist() == []


# --------------------------------------------------------------------------
# Hashing Parquet values
# --------------------------------------------------------------------------

def test_hash_values_plain_encoding() -> None:
    rng = np.random.default_rng(3)
    i32 = rng.integers(-(2**31), 2**31, 500).astype(np.int32)
    i64 = rng.integers(-(2**63), 2**63 - 1, 500, dtype=np.int64)
    f32 = rng.standard_normal(500).astype(np.float32)
    f64 = rng.standard_normal(500)
    assert hash_values(i32, PT.INT32).tolist() == [xxhash.xxh64_intdigest(struct.pack("<i", v)) for v in i32.tolist()]
    assert hash_values(i64, PT.INT64).tolist() == [xxhash.xxh64_intdigest(struct.pack("<q", v)) for v in i64.tolist()]
    assert hash_values(f32, PT.FLOAT).tolist() == [xxhash.xxh64_intdigest(struct.pack("<f", v)) for v in f32.tolist()]
    assert hash_values(f64, PT.DOUBLE).tolist() == [xxhash.xxh64_intdigest(struct.pack("<d", v)) for v in f64.tolist()]
    int96 = rng.integers(0, 256, (50, 12), dtype=np.uint8)
    assert hash_values(int96, PT.INT96).tolist() == ref_hashes(int96)
    flba = rng.integers(0, 256, (50, 7), dtype=np.uint8)
    assert hash_values(flba, PT.FIXED_LEN_BYTE_ARRAY, 7).tolist() == ref_hashes(flba)
    assert hash_values(BinaryArray.from_fixed(flba), PT.FIXED_LEN_BYTE_ARRAY, 7).tolist() == ref_hashes(flba)
    strs = ["", "a", "héllo", "parquet" * 20]
    assert hash_values(strs, PT.BYTE_ARRAY).tolist() == [xxhash.xxh64_intdigest(s.encode()) for s in strs]
    # unsigned data of the same width hashes its bits; safe widening is accepted
    assert hash_values(i32.view(np.uint32), PT.INT32).tolist() == hash_values(i32, PT.INT32).tolist()
    assert hash_values(i32.astype(np.int16), PT.INT64).tolist() == hash_values(
        i32.astype(np.int16).astype(np.int64), PT.INT64).tolist()
    with pytest.raises(TypeError):
        hash_values(i64, PT.INT32)  # narrowing would silently change values
    with pytest.raises(TypeError):
        hash_values(f64, PT.FLOAT)
    with pytest.raises(ValueError):
        hash_values(flba, PT.FIXED_LEN_BYTE_ARRAY, 8)


def test_hash_scalar_matches_vectorized() -> None:
    assert hash_scalar(-5, PT.INT32) == int(hash_values(np.array([-5], np.int32), PT.INT32)[0])
    assert hash_scalar(2**32 - 1, PT.INT32) == hash_scalar(-1, PT.INT32)
    assert hash_scalar(2**63, PT.INT64) == hash_scalar(-(2**63), PT.INT64)
    assert hash_scalar(np.int64(7), PT.INT64) == xxhash.xxh64_intdigest(struct.pack("<q", 7))
    assert hash_scalar(1.5, PT.FLOAT) == xxhash.xxh64_intdigest(struct.pack("<f", 1.5))
    assert hash_scalar(1.5, PT.DOUBLE) == xxhash.xxh64_intdigest(struct.pack("<d", 1.5))
    assert hash_scalar(3, PT.DOUBLE) == hash_scalar(3.0, PT.DOUBLE)
    assert hash_scalar("héllo", PT.BYTE_ARRAY) == xxhash.xxh64_intdigest("héllo".encode())
    assert hash_scalar(b"abc", PT.FIXED_LEN_BYTE_ARRAY, 3) == xxhash.xxh64_intdigest(b"abc")
    assert hash_scalar(b"x" * 12, PT.INT96) == xxhash.xxh64_intdigest(b"x" * 12)
    with pytest.raises(OverflowError):
        hash_scalar(2**32, PT.INT32)
    with pytest.raises(TypeError):
        hash_scalar(1.0, PT.INT64)
    with pytest.raises(ValueError):
        hash_scalar(b"ab", PT.FIXED_LEN_BYTE_ARRAY, 3)


def test_boolean_is_unsupported() -> None:
    with pytest.raises(UnsupportedError, match="BOOLEAN"):
        hash_values(np.array([True, False]), PT.BOOLEAN)
    with pytest.raises(UnsupportedError, match="BOOLEAN"):
        hash_scalar(True, PT.BOOLEAN)


# --------------------------------------------------------------------------
# Filter bit layout
# --------------------------------------------------------------------------

@pytest.mark.parametrize("num_bytes", [32, 64, 96, 1024, 32 * 1000, 1 << 16])
def test_insert_matches_spec_pseudocode(num_bytes: int) -> None:
    rng = np.random.default_rng(num_bytes)
    hashes = rng.integers(0, 2**64, 3000, dtype=np.uint64)
    hashes = np.concatenate([hashes, hashes[:100], hashes[5:6].repeat(50)])  # duplicates in one chunk
    bf = BloomFilter(num_bytes)
    bf.insert_hashes(hashes)
    expected = ref_filter(num_bytes, hashes.tolist())
    assert np.array_equal(bf.words, expected)
    one = BloomFilter(num_bytes)
    for h in hashes.tolist():
        one.insert_hash(h)
    assert one == bf
    assert bf.check_hashes(hashes).all()
    assert all(bf.check_hash(h) for h in hashes[:200].tolist())


def test_insert_many_chunks_and_collisions() -> None:
    rng = np.random.default_rng(4)
    hashes = rng.integers(0, 2**64, FILTER_CHUNK * 2 + 17, dtype=np.uint64)
    for num_bytes in (32, 2048):  # one block: every hash of a chunk collides
        bf = BloomFilter(num_bytes)
        bf.insert_hashes(hashes)
        acc = np.zeros((num_bytes // 32, 8), np.uint32)
        z = num_bytes // 32
        blocks = ((hashes >> np.uint64(32)) * np.uint64(z)) >> np.uint64(32)
        low = hashes.astype(np.uint32)
        for w, salt in enumerate(SALT):
            bits = np.left_shift(np.uint32(1), (low * np.uint32(salt)) >> np.uint32(27))
            np.bitwise_or.at(acc[:, w], blocks.astype(np.intp), bits)
        assert np.array_equal(bf.words, acc)


def test_single_block_probe_api() -> None:
    rng = np.random.default_rng(5)
    bf = BloomFilter(4096)
    present = rng.integers(0, 2**64, 300, dtype=np.uint64)
    bf.insert_hashes(present)
    probes = np.concatenate([present, rng.integers(0, 2**64, 3000, dtype=np.uint64)])
    bitset = bf.bitset()
    expected = bf.check_hashes(probes)
    idx = BloomFilter.block_index(probes, bf.num_blocks)
    for k, h in enumerate(probes.tolist()):
        i = BloomFilter.block_index(h, bf.num_blocks)
        assert i == idx[k]
        block = bitset[32 * i:32 * i + 32]
        assert BloomFilter.check_block(block, h) == expected[k]
        assert BloomFilter.check_block(bf.words[i], h) == expected[k]
    assert expected[:300].all() and not expected[300:].all()


def test_bitset_layout_little_endian() -> None:
    bf = BloomFilter(64)
    h = (1 << 63) | 0  # top bits select the second block; low word 0 sets bit 0 of each word
    bf.insert_hash(h)
    bits = bf.bitset()
    assert bits[:32] == bytes(32)
    assert bits[32:] == b"\x01\x00\x00\x00" * 8


# --------------------------------------------------------------------------
# Golden file and pyarrow
# --------------------------------------------------------------------------

@needs(FIXTURES)
def test_golden_xxhash_fixture() -> None:
    raw = (FIXTURES / "bloom_filter.xxhash.bin").read_bytes()
    assert BloomFilter.parse_header(raw) == (1024, 16)
    bf, used = BloomFilter.parse(raw)
    assert used == len(raw) == 16 + 1024
    assert bf.num_bytes == 1024 and bf.num_blocks == 32
    assert bf.header_bytes() == raw[:16]
    assert bf.to_bytes() == raw
    for word in ("hello", "parquet", "bloom", "filter"):
        assert bf.might_contain(word, PT.BYTE_ARRAY)
        assert bf.might_contain(word.encode(), PT.BYTE_ARRAY)
    for word in ("Hello", "parquets", "world", "apache", "", "duckdb"):
        assert not bf.might_contain(word, PT.BYTE_ARRAY)
    assert bf.might_contain_many(["bloom", "nope", "filter"], PT.BYTE_ARRAY).tolist() == [True, False, True]


def _pyarrow_filter(tmp_path: Path, arr, ndv: int, fpp: float) -> bytes:
    import pyarrow as pa
    import pyarrow.parquet as pq

    path = tmp_path / "t.parquet"
    pq.write_table(pa.table({"c": arr}), path, bloom_filter_options={"c": {"ndv": ndv, "fpp": fpp}},
                   use_dictionary=False)
    meta = pq.ParquetFile(path).metadata.row_group(0).column(0)
    off, length = meta.bloom_filter_offset, meta.bloom_filter_length
    assert off is not None and length is not None
    return path.read_bytes()[off:off + length]


def _pyarrow_cases():
    import pyarrow as pa

    rng = np.random.default_rng(6)
    n = 3000
    i32 = rng.integers(-(2**31), 2**31, n).astype(np.int32)
    i64 = rng.integers(-(2**63), 2**63 - 1, n, dtype=np.int64)
    f32 = rng.standard_normal(n).astype(np.float32)
    f64 = rng.standard_normal(n)
    strs = [f"s{i}" * (i % 9) for i in range(n)]
    flba = rng.integers(0, 256, (n, 10), dtype=np.uint8)
    return {
        "int32": (pa.array(i32), i32, PT.INT32),
        "int64": (pa.array(i64), i64, PT.INT64),
        "float": (pa.array(f32), f32, PT.FLOAT),
        "double": (pa.array(f64), f64, PT.DOUBLE),
        "string": (pa.array(strs), BinaryArray.from_pylist(strs), PT.BYTE_ARRAY),
        "flba": (pa.array([r.tobytes() for r in flba], pa.binary(10)), flba, PT.FIXED_LEN_BYTE_ARRAY),
    }


@pytest.mark.parametrize("kind", ["int32", "int64", "float", "double", "string", "flba"])
def test_bitset_identical_to_pyarrow(tmp_path: Path, kind: str) -> None:
    arr, values, ptype = _pyarrow_cases()[kind]
    raw = _pyarrow_filter(tmp_path, arr, ndv=len(arr), fpp=0.01)
    theirs, used = BloomFilter.parse(raw)
    assert used == len(raw)
    ours = BloomFilter(theirs.num_bytes)
    ours.insert(values, ptype)
    assert ours.header_bytes() == raw[:used - theirs.num_bytes]
    assert ours.bitset() == theirs.bitset()
    assert ours.to_bytes() == raw
    assert ours.might_contain_many(values, ptype).all()


@pytest.mark.parametrize(
    ("rows", "ndv", "fpp"),
    [(1, 1, 0.01), (100, 100, 0.01), (1000, 1000, 0.05), (5000, 5000, 0.01), (8000, 8000, 0.2),
     (20000, 20000, 0.001), (70000, 70000, 0.1), (1000, 1000, 0.5),
     # pyarrow sizes for min(ndv, rows in the row group)
     (10, 1000, 0.01), (500, 1000, 0.01)],
)
def test_sizing_matches_pyarrow(tmp_path: Path, rows: int, ndv: int, fpp: float) -> None:
    import pyarrow as pa

    raw = _pyarrow_filter(tmp_path, pa.array(np.arange(rows, dtype=np.int64)), ndv=ndv, fpp=fpp)
    num_bytes, _ = BloomFilter.parse_header(raw)
    assert optimal_num_bytes(min(ndv, rows), fpp) == num_bytes


# --------------------------------------------------------------------------
# Sizing and false-positive rate
# --------------------------------------------------------------------------

def test_optimal_num_bytes_rules() -> None:
    assert optimal_num_bytes(0, 0.01) == 32
    assert optimal_num_bytes(1, 0.01) == 32
    # 100k values at 1%: 968,4xx bits -> next power of two 2**20 bits
    assert optimal_num_bytes(100_000, 0.01) == 1 << 17
    assert optimal_num_bytes(10**12, 0.01) == MAX_BLOOM_FILTER_BYTES
    assert optimal_num_bytes(10**9, 0.01, max_bytes=1_000_000) == 1 << 19  # max rounded down to a power of 2
    assert optimal_num_bytes(10**9, 0.01, max_bytes=5) == 32
    for ndv in (10, 1234, 99_999):
        for fpp in (0.3, 0.01, 0.0001):
            nb = optimal_num_bytes(ndv, fpp)
            assert nb & (nb - 1) == 0
            bits = -8 * ndv / math.log(1 - fpp ** (1 / 8))
            assert nb * 8 >= int(bits) and (nb == 32 or nb * 4 < int(bits) + 1)
    with pytest.raises(ValueError):
        optimal_num_bytes(10, 1.5)


def test_false_positive_rate() -> None:
    rng = np.random.default_rng(7)
    ndv, probes = 100_000, 1_000_000
    present = np.unique(rng.integers(-(2**63), 2**63 - 1, ndv + 10, dtype=np.int64))[:ndv]
    rng.shuffle(present)
    bf = BloomFilter.from_distinct_count(ndv, 0.01)
    assert bf.num_bytes == 1 << 17 and 10 < bf.bits_per_value(ndv) < 11
    bf.insert(present, PT.INT64)
    assert bf.might_contain_many(present, PT.INT64).all()
    absent = rng.integers(-(2**63), 2**63 - 1, probes + 100, dtype=np.int64)
    absent = absent[~np.isin(absent, present)][:probes]
    measured = float(bf.might_contain_many(absent, PT.INT64).mean())
    model = theoretical_fpp(ndv, bf.num_bytes)
    # the spec's table: 10.5 bits per value ~ 1 %
    assert 0.005 < model < 0.015
    assert 0.5 * 0.01 < measured < 1.5 * 0.01
    assert abs(measured - model) < 0.1 * model
    assert abs(bf.estimated_fpp() - measured) < 0.1 * measured
    expected_fill = 1 - (1 - 1 / 32) ** (ndv / bf.num_blocks)  # each insert sets 1 bit of 32 per word
    assert abs(bf.fill_ratio() - expected_fill) < 0.01


def test_theoretical_fpp_matches_spec_example() -> None:
    # "1024 blocks and 26,214 hash values ... around 1.26%"; 5-to-1 -> 18%; 20-to-1 -> 0.04%
    assert theoretical_fpp(26_214, 1024 * 32) == pytest.approx(0.0126, rel=0.05)
    assert theoretical_fpp(52_428, 1024 * 32) == pytest.approx(0.18, rel=0.05)
    assert theoretical_fpp(13_107, 1024 * 32) == pytest.approx(0.0004, rel=0.15)


def test_empty_and_full_statistics() -> None:
    bf = BloomFilter(96)  # 3 blocks: not a power of two, still valid
    assert bf.fill_ratio() == 0 and bf.estimated_fpp() == 0
    assert not bf.might_contain(1, PT.INT64)
    full = BloomFilter.from_bitset(b"\xff" * 96)
    assert full.fill_ratio() == 1 and full.estimated_fpp() == 1
    assert full.might_contain(1, PT.INT64)


# --------------------------------------------------------------------------
# Serialization and malformed input
# --------------------------------------------------------------------------

def _header(num_bytes: int, algorithm: bytes = b"\x1c\x00\x00", hash_: bytes = b"\x1c\x00\x00",
            compression: bytes = b"\x1c\x00\x00") -> bytes:
    """Compact-Thrift BloomFilterHeader with hand-written union bodies."""
    zigzag = (num_bytes << 1) ^ (num_bytes >> 31)
    varint = bytearray()
    zigzag &= 0xFFFFFFFF
    while True:
        b = zigzag & 0x7F
        zigzag >>= 7
        varint.append(b | (0x80 if zigzag else 0))
        if not zigzag:
            break
    return b"\x15" + bytes(varint) + b"\x1c" + algorithm + b"\x1c" + hash_ + b"\x1c" + compression + b"\x00"


def test_header_encoding() -> None:
    assert _header(1024) == bytes.fromhex("1580101c1c00001c1c00001c1c000000")
    assert BloomFilter(1024).header_bytes() == _header(1024)
    assert BloomFilter(2048).header_bytes()[1:3] == b"\x80\x20"


def test_roundtrip() -> None:
    rng = np.random.default_rng(8)
    bf = BloomFilter(32 * 8)
    bf.insert(rng.integers(0, 1000, 50).astype(np.int32), PT.INT32)
    data = bf.to_bytes() + b"trailing"
    back, used = BloomFilter.parse(data)
    assert back == bf and used == len(data) - len(b"trailing")
    assert BloomFilter.from_bitset(bf.bitset()) == bf
    assert BloomFilter.from_bitset(memoryview(bf.bitset())) == bf
    # in memory any multiple of 32 bytes works; a stored filter must have a power-of-two size
    odd = BloomFilter(32 * 7)
    assert BloomFilter.from_bitset(odd.bitset()) == odd
    with pytest.raises(BloomFilterError, match="power of two"):
        BloomFilter.parse(odd.to_bytes())


def _assert_corrupt_without_allocation(buf: bytes) -> None:
    tracemalloc.start()
    try:
        with pytest.raises(CorruptFileError):
            BloomFilter.parse(buf)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 256 * 1024, peak


@pytest.mark.traces_memory
@pytest.mark.parametrize(
    "buf",
    [
        _header(1024, algorithm=b"\x2c\x00\x00") + bytes(1024),  # unknown algorithm member (field 2)
        _header(1024, algorithm=b"\x00") + bytes(1024),  # empty algorithm union
        _header(1024, hash_=b"\x2c\x00\x00") + bytes(1024),  # unknown hash member
        _header(1024, compression=b"\x2c\x00\x00") + bytes(1024),  # e.g. a future compression
        _header(0),
        _header(-32) + bytes(64),
        _header(-(2**31)),
        _header(1000) + bytes(1000),  # not a multiple of 32
        _header(2**31 - 32),  # beyond the 128 MiB limit
        _header(MAX_BLOOM_FILTER_BYTES + 32),
        _header(MAX_BLOOM_FILTER_BYTES) + bytes(100),  # allowed size, far beyond the buffer
        _header(1 << 20) + bytes((1 << 20) - 32),  # one block short
        b"\x15\x80\x10\x1c\x1c\x00\x00\x1c\x1c\x00\x00\x00",  # compression missing
        b"\x1c\x1c\x00\x00\x1c\x1c\x00\x00\x1c\x1c\x00\x00\x00",  # numBytes missing
        _header(1024)[:7],  # truncated
        b"",
        b"\xff" * 64,
    ],
)
def test_malformed_header(buf: bytes) -> None:
    _assert_corrupt_without_allocation(buf)


def test_parse_header_alone() -> None:
    """parse_header validates the size itself: a reader may fetch single blocks after it."""
    big = _header(MAX_BLOOM_FILTER_BYTES)
    assert BloomFilter.parse_header(big) == (MAX_BLOOM_FILTER_BYTES, len(big))
    assert BloomFilter.parse_header(_header(128) + b"junk") == (128, 16)
    assert BloomFilter.parse_header(_header(32)) == (32, 15)
    for bad in (0, -32, 16, 96, 1000, 3 << 20, MAX_BLOOM_FILTER_BYTES + 32, 2 * MAX_BLOOM_FILTER_BYTES):
        with pytest.raises(BloomFilterError):
            BloomFilter.parse_header(_header(bad))
    with pytest.raises(BloomFilterError) as info:
        BloomFilter.parse_header(_header(1024, algorithm=b"\x2c\x00\x00"), offset=7, row_group=2, column="a.b")
    assert (info.value.offset, info.value.row_group, info.value.column) == (7, 2, "a.b")
    assert "algorithm" in info.value.reason and "row group 2" in str(info.value)


@HYP
@given(st.binary(max_size=64))
def test_garbage_never_crashes(buf: bytes) -> None:
    try:
        bf, used = BloomFilter.parse(buf)
    except CorruptFileError:
        return
    assert used <= len(buf) and bf.num_bytes % 32 == 0


def test_constructor_validation() -> None:
    for bad in (0, -32, 33, MAX_BLOOM_FILTER_BYTES + 32):
        with pytest.raises(ValueError):
            BloomFilter(bad)
    with pytest.raises(CorruptFileError):
        BloomFilter.from_bitset(b"\x00" * 33)
    with pytest.raises(CorruptFileError):
        BloomFilter.from_bitset(b"")


def test_filter_read_from_a_file_knows_its_column_type(tmp_path):
    """``ParquetFile.bloom_filter`` returns a filter bound to its column: probes need only the value,
    and they hash the value as that column's type (an INT32 column: 4 bytes, not 8)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    path = tmp_path / "t.parquet"
    pq.write_table(pa.table({"n": pa.array(range(100), pa.int32()), "s": [f"v{i}" for i in range(100)]}), path,
                   bloom_filter_options={"n": True, "s": True})
    with pqbloom.ParquetFile(path) as pf:
        n, s = pf.bloom_filter(0, "n"), pf.bloom_filter(0, "s")
        assert all(n.might_contain(i) for i in range(100)) and all(s.might_contain(f"v{i}") for i in range(100))
        assert sum(n.might_contain(i) for i in range(1000, 2000)) < 100
        assert n.might_contain(7) == n.might_contain(7, PT.INT32)
    with pytest.raises(TypeError, match="not bound"):
        BloomFilter(64).might_contain(1)
