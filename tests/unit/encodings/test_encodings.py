"""Encodings: round trips, known-answer checks, a real peer (pyarrow / parquet-java fixtures), corrupt input."""

from __future__ import annotations

import os
import struct
import tracemalloc
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pqbloom import kernels
from pqbloom.arrays import BinaryArray
from pqbloom.encodings import (
    bit_pack,
    bit_unpack,
    bit_width_of,
    build_dictionary,
    common_prefix_lengths,
    decode_bit_packed_levels,
    decode_byte_stream_split,
    decode_delta_binary_packed,
    decode_delta_byte_array,
    decode_delta_length_byte_array,
    decode_dictionary_indices,
    decode_levels_v1,
    decode_plain,
    decode_rle_bitpacked,
    decode_rle_booleans,
    dispatch,
    encode_byte_stream_split,
    encode_delta_binary_packed,
    encode_delta_byte_array,
    encode_delta_length_byte_array,
    encode_dictionary_indices,
    encode_levels_v1,
    encode_plain,
    encode_rle_bitpacked,
    encode_rle_booleans,
    estimate_distinct_fraction,
    take_dictionary,
)
from pqbloom.encodings.rle import level_dtype
from pqbloom.errors import CorruptFileError, UnsupportedError
from pqbloom.format import T, decode_prefix, encode
from pqbloom.kernels import binary as binary_kernels
from pqbloom.kernels.reference import binary as binary_reference
from pqbloom.kernels.reference import hybrid as hybrid_mod
from tests.corpora import needs
from tests.paths import FIXTURES_DATA as FIXTURES

PT = T.Type
E = T.Encoding


SETTINGS = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])


# -- helpers ------------------------------------------------------------------------

def ba(items) -> BinaryArray:  # type: ignore[no-untyped-def]
    return BinaryArray.from_pylist(items)


def bits_equal(a: np.ndarray, b: np.ndarray) -> bool:
    a, b = np.asarray(a), np.asarray(b)
    if a.shape != b.shape or a.dtype != b.dtype:
        return False
    return a.tobytes() == b.tobytes()


def ref_bit_pack(values: list[int], bw: int) -> bytes:
    acc = 0
    for i, v in enumerate(values):
        acc |= (v & ((1 << bw) - 1)) << (i * bw)
    return acc.to_bytes((len(values) * bw + 7) // 8, "little")


def ref_decode_hybrid(buf: bytes, bw: int, count: int) -> list[int]:
    """Straightforward reference decoder of the RLE/bit-packed hybrid."""
    out: list[int] = []
    pos = 0
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
            n = min((header >> 1) * 8, count - len(out))
            acc = int.from_bytes(buf[pos:pos + (header >> 1) * bw], "little")
            pos += (header >> 1) * bw
            out += [(acc >> (i * bw)) & ((1 << bw) - 1) for i in range(n)]
        else:
            nb = (bw + 7) // 8
            out += [int.from_bytes(buf[pos:pos + nb], "little")] * min(header >> 1, count - len(out))
            pos += nb
    return out[:count]


# -- Parquet page access (our own minimal reader over pqbloom.format) ----------------

def file_metadata(data: bytes):  # type: ignore[no-untyped-def]
    assert data[:4] == b"PAR1" and data[-4:] == b"PAR1"
    flen = int.from_bytes(data[-8:-4], "little")
    md, _ = decode_prefix(T.FileMetaData, data[-8 - flen:-8])
    return md


def column_pages(data: bytes, md, rg: int, col: int):  # type: ignore[no-untyped-def]
    """Yield (PageHeader, raw page body) of one column chunk."""
    cmd = md.row_groups[rg].columns[col].meta_data
    start = cmd.data_page_offset
    if cmd.dictionary_page_offset:
        start = min(start, cmd.dictionary_page_offset)
    end = start + cmd.total_compressed_size
    pos = start
    while pos < end:
        ph, hl = decode_prefix(T.PageHeader, data[pos:pos + 1024 * 64])
        body = data[pos + hl:pos + hl + ph.compressed_page_size]
        yield ph, body
        pos += hl + ph.compressed_page_size


def decompress(codec: int, raw: bytes, size: int) -> bytes:
    if codec == T.CompressionCodec.UNCOMPRESSED:
        return raw
    if codec == T.CompressionCodec.ZSTD:
        import pyarrow as pa

        return pa.Codec("zstd").decompress(raw, size, asbytes=True)  # type: ignore[no-any-return]
    if codec == T.CompressionCodec.SNAPPY:
        import cramjam

        return bytes(cramjam.snappy.decompress_raw(raw))
    if codec == T.CompressionCodec.GZIP:
        import zlib

        return zlib.decompress(raw, 31)
    raise AssertionError(f"codec {codec}")


DTYPES = {PT.INT32: np.int32, PT.INT64: np.int64, PT.FLOAT: np.float32, PT.DOUBLE: np.float64}


def decode_values(enc: int, ptype: int, buf, n: int, type_length, dictionary):  # type: ignore[no-untyped-def]
    """A page's values through pqbloom's one value decoder (the peer tests below check it against pyarrow)."""
    values = dispatch.decode_values(buf, enc, ptype, n, type_length)
    return take_dictionary(dictionary, values) if dispatch.is_dictionary_encoding(enc) else values


def concat(parts, ptype: int, type_length):  # type: ignore[no-untyped-def]
    if ptype == PT.BYTE_ARRAY:
        return BinaryArray.concat(parts)
    if ptype in (PT.FIXED_LEN_BYTE_ARRAY, PT.INT96):
        w = 12 if ptype == PT.INT96 else type_length
        return np.concatenate(parts) if parts else np.zeros((0, w), np.uint8)
    return np.concatenate(parts) if parts else np.zeros(0)


def read_column_ours(path: Path, col: int, rg: int = 0):  # type: ignore[no-untyped-def]
    """Decode every page of a flat column with our decoders: (dense values, def levels, encodings seen)."""
    data = path.read_bytes()
    md = file_metadata(data)
    leaf = md.schema[1 + col]
    assert not leaf.num_children
    ptype, tl = leaf.type, leaf.type_length
    max_def = 1 if leaf.repetition_type == T.FieldRepetitionType.OPTIONAL else 0
    codec = md.row_groups[rg].columns[col].meta_data.codec
    dictionary = None
    values, defs, seen = [], [], []
    for ph, body in column_pages(data, md, rg, col):
        if ph.type == T.PageType.DICTIONARY_PAGE:
            raw = decompress(codec, body, ph.uncompressed_page_size)
            dictionary, _ = decode_plain(raw, ptype, ph.dictionary_page_header.num_values, tl)
            continue
        if ph.type == T.PageType.DATA_PAGE:
            dh = ph.data_page_header
            raw = decompress(codec, body, ph.uncompressed_page_size)
            n = dh.num_values
            pos = 0
            if max_def:
                d, pos = decode_levels_v1(raw, bit_width_of(max_def), n)
            else:
                d = np.ones(n, np.int32) * max_def
            enc = dh.encoding
            vbuf = raw[pos:]
        elif ph.type == T.PageType.DATA_PAGE_V2:
            dh = ph.data_page_header_v2
            n = dh.num_values
            rl, dl = dh.repetition_levels_byte_length, dh.definition_levels_byte_length
            assert rl == 0
            d = decode_rle_bitpacked(body[:dl], bit_width_of(max_def), n) if max_def else np.zeros(n, np.int32)
            rest = body[rl + dl:]
            if dh.is_compressed is None or dh.is_compressed:
                rest = decompress(codec, rest, ph.uncompressed_page_size - rl - dl)
            enc = dh.encoding
            vbuf = rest
        else:
            continue
        n_dense = int((d == max_def).sum())
        seen.append(enc)
        values.append(decode_values(enc, ptype, vbuf, n_dense, tl, dictionary))
        defs.append(d)
    return concat(values, ptype, tl), np.concatenate(defs), seen


def arrow_dense(path: Path, col: int, ptype: int, type_length=None):  # type: ignore[no-untyped-def]
    """pyarrow's reading of a column, non-null values, in our representation."""
    arr = pq.read_table(path).column(col).combine_chunks()
    arr = arr.filter(arr.is_valid())
    return arrow_to_ours(arr, ptype, type_length)


def arrow_to_ours(arr: pa.Array, ptype: int, type_length=None):  # type: ignore[no-untyped-def]
    if ptype == PT.BYTE_ARRAY:
        return ba([None if v is None else v for v in arr.cast(pa.binary()).to_pylist()])
    if ptype == PT.FIXED_LEN_BYTE_ARRAY:
        b = b"".join(arr.cast(pa.binary(type_length)).to_pylist())
        return np.frombuffer(b, np.uint8).reshape(len(arr), type_length)
    if ptype == PT.BOOLEAN:
        return np.array(arr.to_pylist(), dtype=bool)
    return arr.to_numpy(zero_copy_only=False).astype(DTYPES[ptype])


def assert_same(ours, expected, ptype: int) -> None:  # type: ignore[no-untyped-def]
    if ptype == PT.BYTE_ARRAY:
        assert isinstance(ours, BinaryArray)
        assert ours.to_pylist() == expected.to_pylist()
    else:
        assert bits_equal(np.asarray(ours), np.asarray(expected)), (ours[:10], expected[:10])


def first_data_page(path: Path, col: int = 0):  # type: ignore[no-untyped-def]
    data = path.read_bytes()
    md = file_metadata(data)
    for ph, body in column_pages(data, md, 0, col):
        if ph.type in (T.PageType.DATA_PAGE, T.PageType.DATA_PAGE_V2):
            return ph, body
    raise AssertionError("no data page")


def one_page_file(ptype: int, encoding: int, page: bytes, n: int, *, type_length=None, dict_page=None,
                  dict_count=0, optional_defs: bytes | None = None, n_values=None,
                  v2_levels: bytes | None = None, num_nulls: int = 0) -> bytes:
    """A complete Parquet file with one column 'c' and one data page of bytes we encoded.

    Lets pyarrow judge our encoders: it must read the values back.
    """
    num_values = n if n_values is None else n_values
    out = bytearray(b"PAR1")
    dict_off = None
    if dict_page is not None:
        dict_off = len(out)
        ph = T.PageHeader(type=T.PageType.DICTIONARY_PAGE, uncompressed_page_size=len(dict_page),
                          compressed_page_size=len(dict_page),
                          dictionary_page_header=T.DictionaryPageHeader(num_values=dict_count, encoding=E.PLAIN))
        out += encode(ph) + dict_page
    data_off = len(out)
    if v2_levels is not None:
        body = v2_levels + page
        ph = T.PageHeader(type=T.PageType.DATA_PAGE_V2, uncompressed_page_size=len(body),
                          compressed_page_size=len(body),
                          data_page_header_v2=T.DataPageHeaderV2(
                              num_values=num_values, num_nulls=num_nulls, num_rows=num_values, encoding=encoding,
                              definition_levels_byte_length=len(v2_levels), repetition_levels_byte_length=0,
                              is_compressed=False))
    else:
        body = (optional_defs or b"") + page
        ph = T.PageHeader(type=T.PageType.DATA_PAGE, uncompressed_page_size=len(body), compressed_page_size=len(body),
                          data_page_header=T.DataPageHeader(num_values=num_values, encoding=encoding,
                                                            definition_level_encoding=E.RLE,
                                                            repetition_level_encoding=E.RLE))
    out += encode(ph) + body
    optional = optional_defs is not None or (v2_levels is not None and len(v2_levels) > 0)
    encs = [encoding, E.RLE] + ([E.PLAIN] if dict_page is not None else [])
    cmd = T.ColumnMetaData(type=ptype, encodings=encs, path_in_schema=["c"], codec=T.CompressionCodec.UNCOMPRESSED,
                           num_values=num_values, total_uncompressed_size=len(out) - 4,
                           total_compressed_size=len(out) - 4, data_page_offset=data_off,
                           dictionary_page_offset=dict_off)
    md = T.FileMetaData(
        version=1,
        schema=[T.SchemaElement(name="schema", num_children=1),
                T.SchemaElement(type=ptype, type_length=type_length, name="c",
                                repetition_type=T.FieldRepetitionType.OPTIONAL if optional
                                else T.FieldRepetitionType.REQUIRED)],
        num_rows=num_values,
        row_groups=[T.RowGroup(columns=[T.ColumnChunk(file_offset=4, meta_data=cmd)],
                               total_byte_size=len(out) - 4, num_rows=num_values)],
        created_by="pqbloom tests",
    )
    footer = encode(md)
    out += footer + len(footer).to_bytes(4, "little") + b"PAR1"
    return bytes(out)


def arrow_read_bytes(tmp_path: Path, data: bytes) -> pa.Array:
    p = tmp_path / f"f{len(list(tmp_path.iterdir()))}.parquet"
    p.write_bytes(data)
    return pq.read_table(p).column("c").combine_chunks()


# -- bit packing ------------------------------------------------------------------------

@pytest.mark.parametrize("bw", list(range(0, 65)))
def test_bit_pack_matches_reference_all_widths(bw: int) -> None:
    rng = np.random.default_rng(bw)
    for n in (0, 1, 7, 8, 9, 31, 64, 65):
        if bw == 64:
            vals = rng.integers(0, 2**64, n, dtype=np.uint64, endpoint=False)
        else:
            vals = rng.integers(0, 1 << bw, n, dtype=np.uint64) if bw else np.zeros(n, np.uint64)
        packed = bit_pack(vals, bw)
        assert packed == ref_bit_pack([int(x) for x in vals], bw)
        back = bit_unpack(packed, bw, n)
        assert back.dtype == (np.uint32 if bw <= 32 else np.uint64)
        assert np.array_equal(back.astype(np.uint64), vals)


def test_bit_pack_signed_and_bool_inputs() -> None:
    assert bit_pack(np.array([-1, 0, 1], np.int64), 3) == ref_bit_pack([7, 0, 1], 3)
    assert bit_pack(np.array([True, False, True]), 1) == b"\x05"
    assert bit_pack(np.array([-1], np.int32), 32) == b"\xff\xff\xff\xff"
    assert bit_width_of(0) == 0 and bit_width_of(1) == 1 and bit_width_of(255) == 8 and bit_width_of(256) == 9
    with pytest.raises(ValueError):
        bit_width_of(-1)


def test_bit_unpack_truncated() -> None:
    with pytest.raises(CorruptFileError):
        bit_unpack(b"\x00\x00", 5, 4)
    with pytest.raises(CorruptFileError):
        bit_unpack(b"", 65, 1)


# -- RLE / bit-packing hybrid ---------------------------------------------------------------

@st.composite
def hybrid_values(draw):  # type: ignore[no-untyped-def]
    bw = draw(st.integers(0, 32))
    hi = (1 << bw) - 1
    runs = draw(st.lists(st.tuples(st.integers(0, hi), st.integers(1, 40)), max_size=30))
    vals = [v for v, k in runs for _ in range(k)]
    extra = draw(st.lists(st.integers(0, hi), max_size=20))
    at = draw(st.integers(0, len(vals)))
    vals = vals[:at] + extra + vals[at:]
    return bw, np.array(vals, dtype=np.int64)


@SETTINGS
@given(hybrid_values())
def test_hybrid_round_trip(case) -> None:  # type: ignore[no-untyped-def]
    bw, vals = case
    enc = encode_rle_bitpacked(vals, bw)
    dec = decode_rle_bitpacked(enc, bw, len(vals))
    assert dec.dtype == np.int32
    assert np.array_equal(dec.astype(np.int64) & 0xFFFFFFFF, vals & 0xFFFFFFFF)
    if bw:
        assert ref_decode_hybrid(enc, bw, len(vals)) == [int(v) for v in vals]
    # a v1 length prefix, and trailing bytes that must be ignored
    lv = encode_levels_v1(vals, bw)
    got, used = decode_levels_v1(lv + b"\xff\xff", bw, len(vals))
    assert used == len(lv) and np.array_equal(got, dec)


def test_hybrid_uses_rle_runs_for_long_runs() -> None:
    vals = np.array([3] * 1000 + [1, 2, 3] + [0] * 1000)
    enc = encode_rle_bitpacked(vals, 2)
    assert len(enc) < 20
    assert np.array_equal(decode_rle_bitpacked(enc, 2, len(vals)), vals)


def test_hybrid_hand_made_streams() -> None:
    # bit-packed run of 1 group (8 values, bw 3) followed by an RLE run of 5 x 4; only 10 values wanted
    packed = ref_bit_pack([0, 1, 2, 3, 4, 5, 6, 7], 3)
    buf = bytes([0b11]) + packed + bytes([5 << 1, 4])
    assert decode_rle_bitpacked(buf, 3, 10).tolist() == [0, 1, 2, 3, 4, 5, 6, 7, 4, 4]
    # a final bit-packed group holding padding values, and even missing the padding bytes
    buf = bytes([0b11]) + ref_bit_pack([1, 2, 3, 0, 0, 0, 0, 0], 8)
    assert decode_rle_bitpacked(buf, 8, 3).tolist() == [1, 2, 3]
    assert decode_rle_bitpacked(buf[:4], 8, 3).tolist() == [1, 2, 3]
    # multi-byte varint header (a 1000-value RLE run), 2-byte RLE value for bw 9
    buf = bytes([0xD0, 0x0F]) + (300).to_bytes(2, "little")
    assert decode_rle_bitpacked(buf, 9, 1000).tolist() == [300] * 1000
    # bit width 0: all zeros
    assert decode_rle_bitpacked(b"", 0, 5).tolist() == [0] * 5
    # bit width 32 and values >= 2**31 wrap to negative int32 (the bit pattern is kept)
    enc = encode_rle_bitpacked(np.array([2**32 - 1] * 3, np.uint32), 32)
    assert decode_rle_bitpacked(enc, 32, 3).tolist() == [-1, -1, -1]


def test_hybrid_bitpacked_runs_capped_at_63_groups() -> None:
    vals = np.arange(2000) % 7
    enc = encode_rle_bitpacked(vals, 3)
    assert enc[0] == (63 << 1) | 1
    assert np.array_equal(decode_rle_bitpacked(enc, 3, 2000), vals)


def test_hybrid_corrupt() -> None:
    enc = encode_rle_bitpacked(np.arange(100) % 5, 3)
    # 100 values = 12.5 groups of 3 bytes: the last byte is pure padding and may be missing
    assert np.array_equal(decode_rle_bitpacked(enc[:-1], 3, 100), np.arange(100) % 5)
    for cut in range(len(enc) - 1):
        with pytest.raises(CorruptFileError):
            decode_rle_bitpacked(enc[:cut], 3, 100)
    with pytest.raises(CorruptFileError):
        decode_rle_bitpacked(enc, 3, 105)  # 101..104 are legitimately in the padded last group
    with pytest.raises(CorruptFileError):
        decode_rle_bitpacked(enc, 33, 1)
    with pytest.raises(CorruptFileError):
        decode_rle_bitpacked(b"\xff" * 11, 3, 1)  # endless varint
    with pytest.raises(CorruptFileError):
        decode_levels_v1(b"\x10\x00\x00\x00\x00", 1, 1)  # length prefix beyond the buffer
    with pytest.raises(CorruptFileError):
        decode_levels_v1(b"\x01\x00", 1, 1)
    with pytest.raises(ValueError):
        encode_rle_bitpacked(np.array([4]), 2)


# -- dense hybrid streams: many short runs, as Arrow writes levels ---------------------------


def _varint(value: int, pad: int = 0) -> bytes:
    """LEB128 of ``value``, with ``pad`` redundant continuation bytes (still a valid varint)."""
    out = bytearray()
    while True:
        b = value & 0x7F
        value >>= 7
        if value or pad:
            out.append(b | 0x80)
            if not value:
                pad -= 1
                while pad:
                    out.append(0x80)
                    pad -= 1
                out.append(0)
                return bytes(out)
        else:
            out.append(b)
            return bytes(out)


def build_hybrid(runs: list[tuple[str, list[int]]], bw: int, pads: list[int] | None = None) -> bytes:
    """A hybrid stream by the spec: ("rle", [value] * n) or ("bp", values, a multiple of 8) runs."""
    out = bytearray()
    for i, (kind, vals) in enumerate(runs):
        out += _varint(_run_header(kind, vals), pads[i] if pads else 0)
        out += vals[0].to_bytes((bw + 7) // 8, "little") if kind == "rle" else ref_bit_pack(vals, bw)
    return bytes(out)


def _run_header(kind: str, vals: list[int]) -> int:
    if kind == "rle":
        return len(vals) << 1
    assert len(vals) % 8 == 0
    return (len(vals) // 8) << 1 | 1


@st.composite
def dense_hybrid(draw):  # type: ignore[no-untyped-def]
    """Streams like Arrow's definition levels: hundreds of short RLE runs (8..70 values, so some
    headers take two bytes) between bit-packed runs of 1..3 groups; bit widths 1..8 (and a few
    wider), sometimes a redundant varint byte in a header, a long RLE run, or a 63-group run."""
    bw = draw(st.sampled_from([1, 2, 3, 4, 5, 6, 7, 8, 9, 12, 17]))
    seed = draw(st.integers(0, 2**32 - 1))
    n_runs = draw(st.integers(1, 200) | st.integers(600, 1500))
    p_rle = draw(st.floats(0.0, 1.0))
    p_pad = draw(st.sampled_from([0.0, 0.0, 0.01]))
    rng = np.random.default_rng(seed)
    hi = 1 << bw
    runs: list[tuple[str, list[int]]] = []
    for _ in range(n_runs):
        r = rng.random()
        if r < p_rle:
            n = int(rng.integers(8, 71)) if rng.random() < 0.98 else int(rng.integers(71, 5000))
            runs.append(("rle", [int(rng.integers(0, hi))] * n))
        else:
            groups = int(rng.integers(1, 4)) if rng.random() < 0.98 else 63
            runs.append(("bp", rng.integers(0, hi, groups * 8).tolist()))
    pads = [int(rng.integers(1, 4)) if rng.random() < p_pad else 0 for _ in runs]
    values = [v for _, vals in runs for v in vals]
    longest = max((len(_varint(_run_header(k, v), p)) for (k, v), p in zip(runs, pads)), default=0)
    return bw, build_hybrid(runs, bw, pads), values, longest


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(dense_hybrid(), st.data())
def test_dense_hybrid_streams_decode_like_the_spec(case, data) -> None:  # type: ignore[no-untyped-def]
    """Every output type and a count cut anywhere give the spec's values, whichever way the runs are found
    (the vectorized header scan takes large streams of small runs, the plain loop the others)."""
    bw, buf, values, longest_header = case
    count = data.draw(st.sampled_from([len(values), data.draw(st.integers(0, len(values)))]))
    want = values[:count]
    assert ref_decode_hybrid(buf, bw, count) == want
    got = decode_rle_bitpacked(buf, bw, count)
    assert got.dtype == np.int32 and got.tolist() == want
    for dt, limit in ((np.int8, 7), (np.int16, 15)):
        if bw <= limit:
            narrow = decode_rle_bitpacked(buf, bw, count, dt)
            assert narrow.dtype == dt and narrow.tolist() == want
    lv, used = decode_levels_v1(len(buf).to_bytes(4, "little") + buf + b"\x01\x02", bw, count, level_dtype(2**bw - 1))
    assert lv.tolist() == want and used == 4 + len(buf)
    # the loop alone and the vectorized scan alone agree (the scan leaves headers over 4 bytes to the loop)
    u8 = np.frombuffer(buf, np.uint8)
    loop = hybrid_mod._scan_runs_loop(buf, bw, count)
    assert hybrid_mod._materialize(u8, loop, bw, count, np.dtype(np.int32)).tolist() == want
    scan = hybrid_mod._header_chain(u8, bw)
    runs = None if scan is None or not count else hybrid_mod._runs_of(u8, *scan, bw, count)
    if runs is not None:
        assert hybrid_mod._materialize(u8, runs, bw, count, np.dtype(np.int32)).tolist() == want
    else:
        assert not count or longest_header > 4


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(dense_hybrid(), st.data())
def test_dense_hybrid_streams_cut_short_raise(case, data) -> None:  # type: ignore[no-untyped-def]
    """A stream cut anywhere either still holds the values asked for (only padding is lost) or raises
    CorruptFileError, never anything else; asking for more values than the stream holds raises."""
    bw, buf, values, _ = case
    cut = data.draw(st.integers(0, len(buf)))
    try:
        got = decode_rle_bitpacked(buf[:cut], bw, len(values))
    except CorruptFileError:
        pass
    else:
        assert got.tolist() == values
    with pytest.raises(CorruptFileError):
        decode_rle_bitpacked(buf, bw, len(values) + 8 * 63 * 1000)


@settings(max_examples=150, deadline=None)
@given(st.binary(min_size=0, max_size=6000), st.integers(1, 8), st.integers(0, 30000))
def test_dense_scan_garbage_raises_only_corrupt_file_error(data, bw, count) -> None:  # type: ignore[no-untyped-def]
    # small header bytes make the probe choose the vectorized scan on most of these; the count stays
    # small because a few bytes of RLE runs may legitimately hold 2**31 values
    buf = bytes(b & 0x8F for b in data)
    for dt in (np.int32, level_dtype(2**bw - 1)):
        try:
            got = decode_rle_bitpacked(buf, bw, count, dt)
        except CorruptFileError:
            continue
        assert len(got) == count and got.dtype == dt
        assert got.tolist() == ref_decode_hybrid(buf, bw, count)


def test_dense_hybrid_takes_the_vectorized_scan(monkeypatch: pytest.MonkeyPatch) -> None:
    """The property tests above reach the vectorized scan: a stream of short runs goes through it."""
    rng = np.random.default_rng(3)
    runs = [("rle", [3] * int(rng.integers(8, 30))) if i % 2 else ("bp", rng.integers(0, 4, 16).tolist())
            for i in range(2000)]
    buf = build_hybrid(runs, 2)
    values = [v for _, vals in runs for v in vals]
    calls = []
    real = hybrid_mod._header_chain
    monkeypatch.setattr(hybrid_mod, "_header_chain", lambda *a: calls.append(1) or real(*a))
    assert hybrid_mod.decode_hybrid_numpy(buf, 2, len(values), np.int8)[0].tolist() == values
    assert calls


def test_hybrid_narrow_output_rejects_rle_values_wider_than_the_bit_width() -> None:
    buf = bytes([8 << 1, 0x05])  # an RLE run of 8 x 5, bit width 2
    assert decode_rle_bitpacked(buf, 2, 8).tolist() == [5] * 8  # int32: the value as stored
    with pytest.raises(CorruptFileError):
        decode_rle_bitpacked(buf, 2, 8, np.int8)
    with pytest.raises(ValueError):
        decode_rle_bitpacked(buf, 8, 8, np.int8)  # 8-bit values do not fit int8
    assert level_dtype(1) == np.int8 and level_dtype(127) == np.int8 and level_dtype(128) == np.int32


def test_five_byte_headers_in_a_dense_stream() -> None:
    """A redundant 5-byte varint header among short runs is left to the plain loop, which reads it."""
    rng = np.random.default_rng(5)
    runs = [("rle", [1] * 9) if i % 2 else ("bp", rng.integers(0, 2, 8).tolist()) for i in range(3000)]
    pads = [4 if i == 2500 else 0 for i in range(len(runs))]
    buf = build_hybrid(runs, 1, pads)
    values = [v for _, vals in runs for v in vals]
    assert decode_rle_bitpacked(buf, 1, len(values), np.int8).tolist() == values


def test_bit_packed_levels_msb_first() -> None:
    # the spec's example: values 0..7 with bit width 3 -> 0b00000101 0b00111001 0b01110111
    assert decode_bit_packed_levels(bytes([0b00000101, 0b00111001, 0b01110111]), 3, 8).tolist() == list(range(8))
    assert decode_bit_packed_levels(b"\xa0", 1, 3).tolist() == [1, 0, 1]
    assert decode_bit_packed_levels(b"", 0, 4).tolist() == [0, 0, 0, 0]
    with pytest.raises(CorruptFileError):
        decode_bit_packed_levels(b"\x00", 3, 8)


@SETTINGS
@given(st.lists(st.booleans(), max_size=300))
def test_rle_booleans_round_trip(values) -> None:  # type: ignore[no-untyped-def]
    arr = np.array(values, dtype=bool)
    enc = encode_rle_booleans(arr)
    got, used = decode_rle_booleans(enc + b"zz", len(arr))
    assert used == len(enc) and got.dtype == np.bool_ and np.array_equal(got, arr)


# -- PLAIN ------------------------------------------------------------------------------------

def _special_floats(dtype) -> np.ndarray:  # type: ignore[no-untyped-def]
    if dtype == np.float32:
        bits = np.array([0, 0x80000000, 0x7FC00000, 0x7F800001, 0xFFC00123, 0x7F800000, 0xFF800000, 1,
                         0x7F7FFFFF], np.uint32)
    else:
        bits = np.array([0, 1 << 63, 0x7FF8000000000000, 0x7FF0000000000001, 0xFFF8000000000123,
                         0x7FF0000000000000, 1, 0x7FEFFFFFFFFFFFFF], np.uint64)
    return bits.view(dtype)


def test_plain_numeric_known_bytes() -> None:
    assert encode_plain(np.array([1, -1], np.int32), PT.INT32) == struct.pack("<ii", 1, -1)
    assert encode_plain(np.array([2**63 - 1], np.int64), PT.INT64) == struct.pack("<q", 2**63 - 1)
    assert encode_plain(np.array([True, False, True, True, False, False, False, False, True]), PT.BOOLEAN) == \
        b"\x0d\x01"
    assert encode_plain(ba([b"ab", b""]), PT.BYTE_ARRAY) == b"\x02\x00\x00\x00ab\x00\x00\x00\x00"
    vals, used = decode_plain(b"\x0d\x01xyz", PT.BOOLEAN, 9)
    assert used == 2 and vals.tolist() == [True, False, True, True, False, False, False, False, True]


@pytest.mark.parametrize("ptype,dtype", [(PT.INT32, np.int32), (PT.INT64, np.int64), (PT.FLOAT, np.float32),
                                         (PT.DOUBLE, np.float64)])
def test_plain_numeric_round_trip(ptype: int, dtype) -> None:  # type: ignore[no-untyped-def]
    rng = np.random.default_rng(1)
    if np.dtype(dtype).kind == "f":
        vals = np.concatenate([_special_floats(dtype), rng.standard_normal(100).astype(dtype)])
    else:
        info = np.iinfo(dtype)
        vals = np.concatenate([np.array([info.min, info.max, 0, -1], dtype),
                               rng.integers(info.min, info.max, 100, dtype=dtype)])
    for n in (0, 1, len(vals)):
        enc = encode_plain(vals[:n], ptype)
        got, used = decode_plain(enc + b"\x01\x02", ptype, n)
        assert used == len(enc) and got.dtype == dtype and bits_equal(got, vals[:n])
        got[:] = 0  # writable, independent of the input buffer


def test_plain_fixed_width_round_trip() -> None:
    rng = np.random.default_rng(2)
    for ptype, w in ((PT.INT96, 12), (PT.FIXED_LEN_BYTE_ARRAY, 5), (PT.FIXED_LEN_BYTE_ARRAY, 1)):
        for n in (0, 1, 33):
            m = rng.integers(0, 256, (n, w), dtype=np.uint8)
            enc = encode_plain(m, ptype, w)
            assert enc == m.tobytes()
            got, used = decode_plain(enc, ptype, n, w)
            assert used == n * w and got.shape == (n, w) and np.array_equal(got, m)
    with pytest.raises(ValueError):
        encode_plain(np.zeros((2, 3), np.uint8), PT.FIXED_LEN_BYTE_ARRAY, 4)


@SETTINGS
@given(st.lists(st.binary(max_size=40), max_size=60), st.booleans())
def test_plain_byte_array_round_trip(items, as_view) -> None:  # type: ignore[no-untyped-def]
    v = ba(items)
    enc = encode_plain(v, PT.BYTE_ARRAY)
    assert enc == b"".join(struct.pack("<I", len(x)) + x for x in items)
    buf = memoryview(enc + b"\x09") if as_view else np.frombuffer(enc + b"\x09", np.uint8)
    got, used = decode_plain(buf, PT.BYTE_ARRAY, len(items))
    assert used == len(enc) and got.to_pylist() == items
    got2, used2 = binary_reference.decode_plain_byte_array(np.frombuffer(enc, np.uint8), len(items))
    assert used2 == len(enc) and got2.to_pylist() == items


def test_plain_byte_array_equal_lengths_and_sliced_input() -> None:
    items = [bytes([i]) * 16 for i in range(50)]
    v = ba([b"zz"] + items).slice(1, 51)  # offsets not starting at 0
    enc = encode_plain(v, PT.BYTE_ARRAY)
    got, used = decode_plain(enc, PT.BYTE_ARRAY, 50)
    assert got.to_pylist() == items and used == 50 * 20
    # same first length but a different one later: must fall back to the general path
    mixed = ba([b"aaaa", b"bbbb", b"cc", b"dddddd"])
    got, used = decode_plain(encode_plain(mixed, PT.BYTE_ARRAY), PT.BYTE_ARRAY, 4)
    assert got == mixed


def test_plain_corrupt() -> None:
    enc = encode_plain(ba([b"abc", b"de", b"fghij"]), PT.BYTE_ARRAY)
    for cut in range(len(enc)):
        with pytest.raises(CorruptFileError):
            decode_plain(enc[:cut], PT.BYTE_ARRAY, 3)
    with pytest.raises(CorruptFileError):
        decode_plain(b"\xff\xff\xff\x7f" + b"x" * 20, PT.BYTE_ARRAY, 1)
    with pytest.raises(CorruptFileError):
        decode_plain(b"\x00" * 7, PT.INT64, 1)
    with pytest.raises(CorruptFileError):
        decode_plain(b"\x00", PT.BOOLEAN, 9)
    with pytest.raises(CorruptFileError):
        decode_plain(b"\x00" * 8, PT.INT32, -1)
    with pytest.raises(CorruptFileError):
        decode_plain(b"\x00" * 8, PT.FIXED_LEN_BYTE_ARRAY, 3, 3)


# -- BYTE_STREAM_SPLIT --------------------------------------------------------------------------

@pytest.mark.parametrize("ptype,dtype", [(PT.INT32, np.int32), (PT.INT64, np.int64), (PT.FLOAT, np.float32),
                                         (PT.DOUBLE, np.float64)])
def test_byte_stream_split_round_trip(ptype: int, dtype) -> None:  # type: ignore[no-untyped-def]
    vals = np.arange(-5, 20).astype(dtype)
    if np.dtype(dtype).kind == "f":
        vals = np.concatenate([vals, _special_floats(dtype)])
    for n in (0, 1, len(vals)):
        enc = encode_byte_stream_split(vals[:n], ptype)
        w = np.dtype(dtype).itemsize
        assert enc == vals[:n].view(np.uint8).reshape(n, w).T.tobytes()
        got, used = decode_byte_stream_split(enc + b"\x00", ptype, n)
        assert used == len(enc) and got.dtype == dtype and bits_equal(got, vals[:n])


def test_byte_stream_split_flba_and_corrupt() -> None:
    m = np.arange(30, dtype=np.uint8).reshape(10, 3)
    enc = encode_byte_stream_split(m, PT.FIXED_LEN_BYTE_ARRAY, 3)
    assert enc[:10] == bytes(range(0, 30, 3))
    got, used = decode_byte_stream_split(enc, PT.FIXED_LEN_BYTE_ARRAY, 10, 3)
    assert np.array_equal(got, m) and used == 30
    with pytest.raises(CorruptFileError):
        decode_byte_stream_split(enc[:-1], PT.FIXED_LEN_BYTE_ARRAY, 10, 3)
    with pytest.raises(CorruptFileError):
        decode_byte_stream_split(b"", PT.DOUBLE, 2**31 - 1)
    with pytest.raises(ValueError):
        encode_byte_stream_split(np.zeros(3, bool), PT.BOOLEAN)


# -- dictionary ---------------------------------------------------------------------------------

def _check_dictionary(values, ptype: int) -> None:  # type: ignore[no-untyped-def]
    built = build_dictionary(values, ptype)
    assert built is not None
    dvals, idx = built
    assert idx.dtype == np.int32 and len(idx) == len(values)
    back = take_dictionary(dvals, idx)
    if isinstance(values, BinaryArray):
        assert back.to_pylist() == values.to_pylist()
        items = values.to_pylist()
        assert dvals.to_pylist() == list(dict.fromkeys(items))  # first-appearance order, distinct
    else:
        assert bits_equal(back, np.asarray(values))
        a, d = np.asarray(values), np.asarray(dvals)
        rows = [a[i].tobytes() for i in range(len(a))]
        assert [d[i].tobytes() for i in range(len(d))] == list(dict.fromkeys(rows))
    if len(values):
        assert int(idx.max()) == len(dvals) - 1


@SETTINGS
@given(st.lists(st.integers(-3, 3), max_size=100), st.sampled_from([PT.INT32, PT.INT64]))
def test_dictionary_ints(items, ptype) -> None:  # type: ignore[no-untyped-def]
    _check_dictionary(np.array(items, DTYPES[ptype]), ptype)


def test_dictionary_floats_bitwise() -> None:
    for dtype, ptype in ((np.float32, PT.FLOAT), (np.float64, PT.DOUBLE)):
        sp = _special_floats(dtype)
        vals = np.concatenate([sp, sp[::-1], np.array([1.5, 1.5], dtype)])
        _check_dictionary(vals, ptype)
        dvals, _ = build_dictionary(vals, ptype)
        assert len(dvals) == len(sp) + 1  # -0.0 and +0.0, and every NaN payload, kept apart


@SETTINGS
@given(st.lists(st.sampled_from([b"", b"a", b"ab", b"a\x00", b"\x00", b"abcdefghi", b"abcdefghj", b"x" * 200,
                                 b"x" * 199 + b"y"]), max_size=80))
def test_dictionary_binary(items) -> None:  # type: ignore[no-untyped-def]
    _check_dictionary(ba(items), PT.BYTE_ARRAY)
    short = [x for x in items if len(x) <= 9]
    _check_dictionary(ba(short), PT.BYTE_ARRAY)


def test_dictionary_binary_equal_lengths_and_flba() -> None:
    rng = np.random.default_rng(3)
    for w in (1, 8, 9, 16, 33):
        pool = rng.integers(0, 3, (5, w), dtype=np.uint8)
        m = pool[rng.integers(0, 5, 200)]
        _check_dictionary(m, PT.FIXED_LEN_BYTE_ARRAY)
        _check_dictionary(BinaryArray.from_fixed(m), PT.BYTE_ARRAY)
    _check_dictionary(np.array([True, False, True]), PT.BOOLEAN)


def test_dictionary_limit_and_empty() -> None:
    vals = ba([b"%d" % i for i in range(100)] * 3)
    assert build_dictionary(vals, PT.BYTE_ARRAY, max_dictionary_bytes=100) is None
    dvals, idx = build_dictionary(vals, PT.BYTE_ARRAY, max_dictionary_bytes=10_000)
    assert len(dvals) == 100 and idx[:3].tolist() == [0, 1, 2]
    assert build_dictionary(np.arange(1000, dtype=np.int64), PT.INT64, max_dictionary_bytes=7999) is None
    assert build_dictionary(np.arange(1000, dtype=np.int64), PT.INT64, max_dictionary_bytes=8000) is not None
    dvals, idx = build_dictionary(np.zeros(0, np.int32), PT.INT32)
    assert len(dvals) == 0 and len(idx) == 0


def test_dictionary_indices_round_trip_and_corrupt() -> None:
    rng = np.random.default_rng(4)
    for size in (1, 2, 3, 1000, 2**20):
        idx = rng.integers(0, size, 777).astype(np.int32)
        enc = encode_dictionary_indices(idx, size)
        assert enc[0] == bit_width_of(size - 1)
        assert np.array_equal(decode_dictionary_indices(enc, 777), idx)
    assert decode_dictionary_indices(b"", 0).tolist() == []
    with pytest.raises(CorruptFileError):
        decode_dictionary_indices(b"", 3)
    with pytest.raises(CorruptFileError):
        decode_dictionary_indices(b"\x21\x02\x00", 1)
    with pytest.raises(CorruptFileError):
        take_dictionary(np.arange(3), np.array([0, 3]))
    with pytest.raises(CorruptFileError):
        take_dictionary(ba([b"a"]), np.array([-1]))
    assert take_dictionary(ba([b"a", b"bc"]), np.array([1, 1, 0], np.int32)).to_pylist() == [b"bc", b"bc", b"a"]
    assert take_dictionary(np.zeros((2, 3), np.uint8), np.array([1], np.int32)).shape == (1, 3)


def test_estimate_distinct_fraction() -> None:
    rng = np.random.default_rng(5)
    assert estimate_distinct_fraction(np.zeros(0, np.int64)) == 0.0
    assert estimate_distinct_fraction(np.array([1, 1, 2, 2])) == 0.5
    unique = rng.permutation(200_000).astype(np.int64)
    assert estimate_distinct_fraction(unique) > 0.5
    low = rng.integers(0, 100, 200_000)
    assert estimate_distinct_fraction(low) < 0.01
    mid = rng.integers(0, 20_000, 200_000)  # 10% distinct: the sample alone would look unique
    assert 0.03 < estimate_distinct_fraction(mid) < 0.3
    strings = ba([b"v%d" % i for i in rng.integers(0, 50, 10_000)])
    assert estimate_distinct_fraction(strings) < 0.05
    long_strings = ba([b"x" * 300 + b"%d" % i for i in range(5000)])
    assert estimate_distinct_fraction(long_strings) > 0.5
    # the sample is taken in runs of consecutive values: columns whose order the runs could mislead
    # (repeats in clusters, 12.5% distinct; sorted distinct values; a cycle of 1,000)
    clustered = np.repeat(rng.permutation(125_000), 8).astype(np.int64)
    assert estimate_distinct_fraction(clustered) < 0.5
    assert estimate_distinct_fraction(np.arange(1_000_000, dtype=np.int64)) > 0.5  # sorted, all distinct
    assert estimate_distinct_fraction(np.arange(200_000, dtype=np.int64) % 1000) < 0.05  # cyclic


# -- DELTA_BINARY_PACKED ------------------------------------------------------------------------

def _int_cases(dtype) -> list[np.ndarray]:  # type: ignore[no-untyped-def]
    info = np.iinfo(dtype)
    rng = np.random.default_rng(6)
    ext = np.array([info.min, info.max, 0, -1, info.max, info.min], dtype)
    return [
        np.zeros(0, dtype), np.array([5], dtype), np.array([info.min], dtype), ext,
        np.tile(ext, 50), rng.integers(info.min, info.max, 1000, dtype=dtype, endpoint=True),
        np.arange(129, dtype=dtype), np.full(257, 7, dtype), np.arange(300, 0, -1).astype(dtype),
        np.cumsum(rng.integers(0, 5, 513)).astype(dtype),
    ]


@pytest.mark.parametrize("dtype", [np.int32, np.int64])
def test_delta_binary_packed_round_trip(dtype) -> None:  # type: ignore[no-untyped-def]
    for vals in _int_cases(dtype):
        enc = encode_delta_binary_packed(vals)
        got, used = decode_delta_binary_packed(enc + b"\xaa\xbb", None, dtype)
        assert used == len(enc) and got.dtype == dtype and np.array_equal(got, vals)
        if len(vals) > 2:
            part, used2 = decode_delta_binary_packed(enc, 2, dtype)
            assert used2 == len(enc) and np.array_equal(part, vals[:2])


@SETTINGS
@given(st.lists(st.integers(-(2**63), 2**63 - 1), max_size=300))
def test_delta_binary_packed_int64_property(items) -> None:  # type: ignore[no-untyped-def]
    vals = np.array(items, np.int64)
    enc = encode_delta_binary_packed(vals)
    got, used = decode_delta_binary_packed(enc, len(vals), np.int64)
    assert used == len(enc) and np.array_equal(got, vals)


@SETTINGS
@given(st.lists(st.integers(-(2**31), 2**31 - 1), max_size=300))
def test_delta_binary_packed_int32_widths_stay_within_32(items) -> None:  # type: ignore[no-untyped-def]
    vals = np.array(items, np.int32)
    enc = encode_delta_binary_packed(vals)
    got, _ = decode_delta_binary_packed(enc, len(vals), np.int32)
    assert np.array_equal(got, vals)
    # every miniblock width byte must be <= 32 (Arrow rejects wider ones for INT32)
    _, widths = _walk_delta_widths(enc)
    assert all(w <= 32 for w in widths)


def _walk_delta_widths(enc: bytes) -> tuple[int, list[int]]:
    from pqbloom.kernels.reference.bits import read_uleb128

    pos = 0
    bs, pos = read_uleb128(enc, pos, len(enc))
    nm, pos = read_uleb128(enc, pos, len(enc))
    total, pos = read_uleb128(enc, pos, len(enc))
    _, pos = read_uleb128(enc, pos, len(enc))
    widths = []
    left = max(total - 1, 0)
    while left > 0:
        _, pos = read_uleb128(enc, pos, len(enc))
        ws = list(enc[pos:pos + nm])
        pos += nm
        used = min(left, bs)
        nmb = (used + bs // nm - 1) // (bs // nm)
        widths += ws[:nmb]
        pos += sum(w * (bs // nm) // 8 for w in ws[:nmb])
        left -= used
    return pos, widths


def _dbp_stream(block: int, mbs: int, first: int, blocks: list[tuple[int, list[int], list[list[int]]]],
                total: int) -> bytes:
    """Hand-assemble a DELTA_BINARY_PACKED stream (zigzag min deltas, explicit widths and miniblocks)."""
    from pqbloom.encodings.bitpack import uleb128

    def zz(v: int) -> int:
        return (v << 1) ^ (v >> 63) if v < 0 else v << 1

    out = uleb128(block) + uleb128(mbs) + uleb128(total) + uleb128(zz(first))
    for mn, widths, minis in blocks:
        out += uleb128(zz(mn)) + bytes(widths)
        for w, vals in zip(widths, minis):
            out += ref_bit_pack(vals, w)
    return out


def test_delta_binary_packed_hand_made_streams() -> None:
    # block 256 with 8 miniblocks of 32; 40 values -> 39 deltas in miniblocks 0-1; unused widths are garbage (200)
    deltas = [1] * 39
    m0 = [d - 1 for d in deltas[:32]]
    m1 = [d - 1 for d in deltas[32:]] + [5] * (32 - 7)  # padding with arbitrary bits
    buf = _dbp_stream(256, 8, 10, [(1, [0, 3] + [200] * 6, [m0, m1])], 40)
    got, used = decode_delta_binary_packed(buf + b"tail", None, np.int64)
    assert got.tolist() == list(range(10, 50)) and used == len(buf)
    # the last miniblock may lack its padding bytes (only when the stream ends there)
    short = _dbp_stream(128, 4, 0, [(0, [8, 0, 0, 0], [list(range(32))])], 4)
    got, used = decode_delta_binary_packed(short[:-29], None, np.int64)
    assert got.tolist() == [0, 0, 1, 3] and used == len(short) - 29
    # miniblock width 64 with negative min delta
    vals = [0, -(2**63), 2**63 - 1, 0]
    enc = encode_delta_binary_packed(np.array(vals, np.int64))
    assert decode_delta_binary_packed(enc, 4, np.int64)[0].tolist() == vals


def test_delta_binary_packed_corrupt() -> None:
    enc = encode_delta_binary_packed(np.arange(1000, dtype=np.int64) ** 2)
    # the last miniblock (7 deltas of 8 bits) needs 7 of its 32 bytes: its padding may be missing
    assert decode_delta_binary_packed(enc[:-25], None, np.int64)[0].tolist() == (np.arange(1000) ** 2).tolist()
    for cut in list(range(0, 40)) + list(range(40, len(enc) - 25, 37)):
        with pytest.raises(CorruptFileError):
            decode_delta_binary_packed(enc[:cut], None, np.int64)
    with pytest.raises(CorruptFileError):
        decode_delta_binary_packed(enc, 1001, np.int64)  # more than the header holds
    from pqbloom.encodings.bitpack import uleb128

    bad_headers = [
        uleb128(100) + uleb128(4) + uleb128(10) + b"\x00",  # block size not a multiple of 128
        uleb128(128) + uleb128(3) + uleb128(10) + b"\x00",  # miniblock size not a multiple of 32
        uleb128(128) + uleb128(0) + uleb128(10) + b"\x00",
        uleb128(128) + uleb128(4) + uleb128(2**40) + b"\x00",  # absurd count
        uleb128(128) + uleb128(4) + uleb128(2**31 - 1) + b"\x00" + b"\x00" * 50,  # lying count
        uleb128(128) + uleb128(4) + uleb128(3) + b"\x00" + b"\x00" + bytes([65, 0, 0, 0]) + b"\x00" * 600,
    ]
    for buf in bad_headers:
        with pytest.raises(CorruptFileError):
            decode_delta_binary_packed(buf, None, np.int64)


# -- DELTA_LENGTH_BYTE_ARRAY / DELTA_BYTE_ARRAY ----------------------------------------------

binary_lists = st.lists(st.binary(max_size=12) | st.sampled_from([b"prefix", b"prefix-a", b"prefix-ab", b"pre",
                                                                 b"x" * 150, b"x" * 140 + b"y"]), max_size=60)


@SETTINGS
@given(binary_lists)
def test_delta_length_byte_array_round_trip(items) -> None:  # type: ignore[no-untyped-def]
    v = ba(items)
    enc = encode_delta_length_byte_array(v)
    got, used = decode_delta_length_byte_array(enc + b"\x00\x01", len(items))
    assert used == len(enc) and got.to_pylist() == items


@SETTINGS
@given(binary_lists, st.booleans())
def test_delta_byte_array_round_trip(items, sort) -> None:  # type: ignore[no-untyped-def]
    if sort:
        items = sorted(items)
    v = ba(items)
    pre = common_prefix_lengths(v)
    assert pre.tolist() == [0] * min(len(items), 1) + [len(os.path.commonprefix([a, b]))
                                                       for a, b in zip(items, items[1:])]
    enc = encode_delta_byte_array(v)
    got, used = decode_delta_byte_array(enc + b"\x07", len(items))
    assert used == len(enc) and got.to_pylist() == items


def test_delta_byte_array_rebuild_paths_agree() -> None:
    rng = np.random.default_rng(7)
    words = sorted(b"key-%06d-%s" % (int(i), b"z" * int(i % 5)) for i in rng.integers(0, 10**6, 3000))
    v = ba(words)
    enc = encode_delta_byte_array(v)
    from pqbloom.encodings.delta import decode_delta_binary_packed as dbp

    p, used = dbp(enc, len(words), np.int32)
    suffixes, _ = decode_delta_length_byte_array(enc[used:], len(words))
    # the reference's pass per byte column (short prefixes, many values) and the dispatch (compiled when built)
    a = binary_reference.rebuild_prefixes(p, suffixes)
    b = binary_kernels.rebuild_prefixes(p, suffixes)
    assert a.to_pylist() == b.to_pylist() == words
    # long shared prefixes in a short column take the reference's loop path
    long_items = [b"L" * 1000 + b"%d" % i for i in range(20)]
    saved = kernels.COMPILED
    try:
        for on in {False, kernels.EXTENSION_BUILT}:
            kernels.COMPILED = on
            got, _ = decode_delta_byte_array(encode_delta_byte_array(ba(long_items)), 20)
            assert got.to_pylist() == long_items
    finally:
        kernels.COMPILED = saved


def test_delta_byte_array_flba() -> None:
    m = np.array([[1, 2, 3], [1, 2, 4], [1, 9, 9], [1, 9, 9]], np.uint8)
    enc = encode_delta_byte_array(m, type_length=3)
    got, used = decode_delta_byte_array(enc, 4, type_length=3)
    assert isinstance(got, np.ndarray) and np.array_equal(got, m) and used == len(enc)
    got, _ = decode_delta_byte_array(encode_delta_byte_array(np.zeros((0, 3), np.uint8), 3), 0, type_length=3)
    assert got.shape == (0, 3)
    with pytest.raises(CorruptFileError):
        decode_delta_byte_array(enc, 4, type_length=4)


def test_delta_byte_arrays_corrupt() -> None:
    items = [b"apple", b"applesauce", b"apricot", b"banana"] * 10
    for enc, dec in ((encode_delta_length_byte_array(ba(items)), decode_delta_length_byte_array),
                     (encode_delta_byte_array(ba(items)), decode_delta_byte_array)):
        for cut in range(len(enc)):
            with pytest.raises(CorruptFileError):
                dec(enc[:cut], len(items))
    # a prefix longer than the previous value, and a nonzero first prefix
    bad = encode_delta_binary_packed(np.array([0, 9], np.int32)) + encode_delta_length_byte_array(ba([b"ab", b"c"]))
    with pytest.raises(CorruptFileError):
        decode_delta_byte_array(bad, 2)
    bad = encode_delta_binary_packed(np.array([1], np.int32)) + encode_delta_length_byte_array(ba([b"ab"]))
    with pytest.raises(CorruptFileError):
        decode_delta_byte_array(bad, 1)
    # a negative length
    bad = encode_delta_binary_packed(np.array([-1], np.int32)) + b"abc"
    with pytest.raises(CorruptFileError):
        decode_delta_length_byte_array(bad, 1)


# -- garbage and lying counts never escape as other errors, never allocate big ---------------

DECODERS = {
    "plain_byte_array": lambda b, n: decode_plain(b, PT.BYTE_ARRAY, n),
    "plain_int64": lambda b, n: decode_plain(b, PT.INT64, n),
    "plain_bool": lambda b, n: decode_plain(b, PT.BOOLEAN, n),
    "plain_flba": lambda b, n: decode_plain(b, PT.FIXED_LEN_BYTE_ARRAY, n, 7),
    "hybrid": lambda b, n: decode_rle_bitpacked(b, 5, n),
    "levels_v1": lambda b, n: decode_levels_v1(b, 1, n),
    "rle_booleans": lambda b, n: decode_rle_booleans(b, n),
    "bit_packed_levels": lambda b, n: decode_bit_packed_levels(b, 3, n),
    "dictionary_indices": lambda b, n: decode_dictionary_indices(b, n),
    "delta_binary_packed": lambda b, n: decode_delta_binary_packed(b, n, np.int64),
    "delta_length_byte_array": lambda b, n: decode_delta_length_byte_array(b, n),
    "delta_byte_array": lambda b, n: decode_delta_byte_array(b, n),
    "delta_byte_array_flba": lambda b, n: decode_delta_byte_array(b, n, 4),
    "byte_stream_split": lambda b, n: decode_byte_stream_split(b, PT.DOUBLE, n),
}


@settings(max_examples=300, deadline=None)
@given(st.sampled_from(sorted(DECODERS)), st.binary(max_size=64), st.integers(0, 2**31 - 1) | st.integers(0, 70))
def test_garbage_raises_only_corrupt_file_error(which, data, count) -> None:  # type: ignore[no-untyped-def]
    try:
        DECODERS[which](data, count)
    except CorruptFileError:
        pass
    try:
        decode_delta_binary_packed(data, None, np.int32)
    except CorruptFileError:
        pass


@pytest.mark.traces_memory
@pytest.mark.parametrize("which", sorted(DECODERS))
def test_lying_counts_fail_fast_without_big_allocations(which: str) -> None:
    samples = [
        encode_plain(ba([b"abc"] * 10), PT.BYTE_ARRAY),
        encode_rle_bitpacked(np.arange(10) % 3, 2),
        encode_delta_binary_packed(np.arange(10, dtype=np.int64)),
        encode_delta_byte_array(ba([b"abc"] * 10)),
        b"\x05" + bytes(30),
    ]
    tracemalloc.start()
    try:
        for buf in samples:
            with pytest.raises(CorruptFileError):
                DECODERS[which](buf, 2**31 - 1)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 16 * 2**20


# -- real peer: pyarrow writes, we decode -------------------------------------------------------

def _write(tmp_path: Path, tbl: pa.Table, **kw) -> Path:  # type: ignore[no-untyped-def]
    p = tmp_path / f"w{len(list(tmp_path.iterdir()))}.parquet"
    kw.setdefault("compression", "none")
    kw.setdefault("write_batch_size", 128)
    pq.write_table(tbl, p, **kw)
    return p


def _arrow_cases():  # type: ignore[no-untyped-def]
    rng = np.random.default_rng(8)
    n = 3000
    i32 = rng.integers(-(2**31), 2**31 - 1, n, dtype=np.int32, endpoint=True)
    i32[:4] = [-(2**31), 2**31 - 1, 0, -1]
    i64 = rng.integers(-(2**63), 2**63 - 1, n, dtype=np.int64, endpoint=True)
    i64[:4] = [-(2**63), 2**63 - 1, 0, -1]
    small = np.cumsum(rng.integers(-3, 10, n)).astype(np.int64)
    f32 = np.concatenate([_special_floats(np.float32), rng.standard_normal(n).astype(np.float32)])
    f64 = np.concatenate([_special_floats(np.float64), rng.standard_normal(n)])
    words = [b"w%d" % (i % 97) * int(i % 4) for i in range(n)]
    sorted_words = sorted(b"user_%d@example.com" % i for i in rng.integers(0, 10**6, n))
    flba = [bytes(r) for r in rng.integers(0, 4, (n, 5), dtype=np.uint8)]
    return {
        "bool": (pa.array(rng.integers(0, 2, n).astype(bool)), PT.BOOLEAN, None),
        "i32": (pa.array(i32), PT.INT32, None),
        "i64": (pa.array(i64), PT.INT64, None),
        "i64small": (pa.array(small), PT.INT64, None),
        "f32": (pa.array(f32), PT.FLOAT, None),
        "f64": (pa.array(f64), PT.DOUBLE, None),
        "bin": (pa.array(words, pa.binary()), PT.BYTE_ARRAY, None),
        "sorted": (pa.array(sorted_words, pa.binary()), PT.BYTE_ARRAY, None),
        "flba": (pa.array(flba, pa.binary(5)), PT.FIXED_LEN_BYTE_ARRAY, 5),
    }


PEER_MATRIX = [
    ("bool", "PLAIN"), ("bool", "RLE"),
    ("i32", "PLAIN"), ("i32", "DELTA_BINARY_PACKED"), ("i32", "BYTE_STREAM_SPLIT"),
    ("i64", "PLAIN"), ("i64", "DELTA_BINARY_PACKED"), ("i64", "BYTE_STREAM_SPLIT"),
    ("i64small", "DELTA_BINARY_PACKED"),
    ("f32", "PLAIN"), ("f32", "BYTE_STREAM_SPLIT"), ("f64", "PLAIN"), ("f64", "BYTE_STREAM_SPLIT"),
    ("bin", "PLAIN"), ("bin", "DELTA_LENGTH_BYTE_ARRAY"), ("bin", "DELTA_BYTE_ARRAY"),
    ("sorted", "DELTA_BYTE_ARRAY"), ("sorted", "DELTA_LENGTH_BYTE_ARRAY"),
    ("flba", "PLAIN"), ("flba", "DELTA_BYTE_ARRAY"), ("flba", "BYTE_STREAM_SPLIT"),
]


@pytest.mark.parametrize("name,encoding", PEER_MATRIX)
@pytest.mark.parametrize("page_version", ["1.0", "2.0"])
@pytest.mark.parametrize("nullable", [False, True])
def test_pyarrow_pages_decode(tmp_path: Path, name: str, encoding: str, page_version: str, nullable: bool) -> None:
    arr, ptype, tl = _arrow_cases()[name]
    if nullable:
        mask = np.arange(len(arr)) % 7 == 3
        arr = pa.array(arr.to_pylist(), arr.type, mask=mask)
    tbl = pa.table({"c": arr}, schema=pa.schema([pa.field("c", arr.type, nullable=nullable)]))
    path = _write(tmp_path, tbl, use_dictionary=False, column_encoding={"c": encoding},
                  data_page_version=page_version, data_page_size=1024)
    ours, defs, seen = read_column_ours(path, 0)
    assert set(seen) == {getattr(E, encoding)}
    assert len(seen) > 1 or name == "bool"  # several pages: counts and consumed bytes matter
    expected = arrow_to_ours(arr.filter(arr.is_valid()), ptype, tl)
    assert_same(ours, expected, ptype)
    assert np.array_equal(defs == (1 if nullable else 0), np.asarray(arr.is_valid()))


@pytest.mark.parametrize("name", ["i32", "i64small", "f64", "bin", "sorted", "flba", "bool"])
@pytest.mark.parametrize("page_version", ["1.0", "2.0"])
def test_pyarrow_dictionary_pages_decode(tmp_path: Path, name: str, page_version: str) -> None:
    arr, ptype, tl = _arrow_cases()[name]
    if name == "bool":
        return  # pyarrow never dictionary-encodes booleans
    rng = np.random.default_rng(9)
    arr = arr.take(pa.array(rng.integers(0, 50, 5000)))  # few distinct values
    mask = rng.random(5000) < 0.2
    arr = pa.array(arr.to_pylist(), arr.type, mask=mask)
    path = _write(tmp_path, pa.table({"c": arr}), use_dictionary=True, data_page_version=page_version,
                  data_page_size=2048)
    ours, defs, seen = read_column_ours(path, 0)
    assert set(seen) == {E.RLE_DICTIONARY}
    assert_same(ours, arrow_to_ours(arr.filter(arr.is_valid()), ptype, tl), ptype)
    assert np.array_equal(defs == 1, ~mask)


def _raw_value_bytes(path: Path) -> bytes:
    """Value bytes of the single v1 page of a REQUIRED uncompressed column."""
    ph, body = first_data_page(path)
    assert ph.type == T.PageType.DATA_PAGE
    return body


@pytest.mark.parametrize("name,encoding", [(n, e) for n, e in PEER_MATRIX])
def test_our_encoders_vs_pyarrow_bytes(tmp_path: Path, name: str, encoding: str) -> None:
    """Same data, same encoding: our bytes equal pyarrow's (PLAIN and BYTE_STREAM_SPLIT must; the
    delta encodings turn out to as well), and pyarrow reads a page we encoded back to the same values."""
    arr, ptype, tl = _arrow_cases()[name]
    arr = arr.slice(0, 1000)
    tbl = pa.table({"c": arr}, schema=pa.schema([pa.field("c", arr.type, nullable=False)]))
    path = _write(tmp_path, tbl, use_dictionary=False, column_encoding={"c": encoding}, data_page_version="1.0",
                  data_page_size=1 << 20)
    theirs = _raw_value_bytes(path)
    vals = arrow_to_ours(arr, ptype, tl)
    enc = getattr(E, encoding)
    if enc == E.PLAIN:
        ours = encode_plain(vals, ptype, tl)
    elif enc == E.BYTE_STREAM_SPLIT:
        ours = encode_byte_stream_split(vals, ptype, tl)
    elif enc == E.DELTA_BINARY_PACKED:
        # Arrow C++ uses blocks of 256 values for INT64 (parquet-java: 128, our default)
        ours = encode_delta_binary_packed(vals, block_size=256 if ptype == PT.INT64 else 128)
    elif enc == E.DELTA_LENGTH_BYTE_ARRAY:
        ours = encode_delta_length_byte_array(vals)
    elif enc == E.DELTA_BYTE_ARRAY:
        ours = encode_delta_byte_array(vals, tl)
    else:
        ours = encode_rle_booleans(vals)
    assert ours == theirs
    back = arrow_read_bytes(tmp_path, one_page_file(ptype, enc, ours, len(arr), type_length=tl))
    assert_same(arrow_to_ours(back, ptype, tl), vals, ptype)


def test_pyarrow_reads_our_dictionary_and_levels(tmp_path: Path) -> None:
    rng = np.random.default_rng(10)
    n = 5000
    pool = [b"alpha", b"beta", b"", b"gamma" * 20]
    valid = rng.random(n) > 0.3
    dense = ba([pool[i] for i in rng.integers(0, 4, int(valid.sum()))])
    dvals, idx = build_dictionary(dense, PT.BYTE_ARRAY)
    page = encode_dictionary_indices(idx, len(dvals))
    dict_page = encode_plain(dvals, PT.BYTE_ARRAY)
    defs = valid.astype(np.int32)
    expected = [None] * n
    it = iter(dense.to_pylist())
    for i in np.flatnonzero(valid):
        expected[i] = next(it)
    # v1: length-prefixed levels
    f = one_page_file(PT.BYTE_ARRAY, E.RLE_DICTIONARY, page, n, dict_page=dict_page, dict_count=len(dvals),
                      optional_defs=encode_levels_v1(defs, 1))
    assert arrow_read_bytes(tmp_path, f).to_pylist() == expected
    # v2: bare hybrid levels
    f = one_page_file(PT.BYTE_ARRAY, E.RLE_DICTIONARY, page, n, dict_page=dict_page, dict_count=len(dvals),
                      v2_levels=encode_rle_bitpacked(defs, 1), num_nulls=int((~valid).sum()))
    assert arrow_read_bytes(tmp_path, f).to_pylist() == expected
    # numeric dictionary with a single entry (bit width 0) and floats by bit pattern
    vals = np.array([-0.0] * 100, np.float64)
    dvals, idx = build_dictionary(vals, PT.DOUBLE)
    enc = encode_dictionary_indices(idx, len(dvals))
    assert enc[0] == 0
    f = one_page_file(PT.DOUBLE, E.RLE_DICTIONARY, enc, 100, dict_page=encode_plain(dvals, PT.DOUBLE), dict_count=1)
    got = arrow_read_bytes(tmp_path, f).to_numpy()
    assert bits_equal(got, vals)


def test_our_levels_match_pyarrow_levels(tmp_path: Path) -> None:
    """pyarrow's v1 definition levels are byte-identical to ours for the same null pattern."""
    rng = np.random.default_rng(11)
    for pattern in (rng.random(3000) < 0.5, np.arange(3000) % 100 < 90, np.ones(3000, bool),
                    np.repeat(rng.random(100) < 0.5, 30)):
        arr = pa.array(np.arange(3000, dtype=np.int32), mask=~pattern)
        path = _write(tmp_path, pa.table({"c": arr}), use_dictionary=False, data_page_version="1.0",
                      data_page_size=1 << 20)
        _, body = first_data_page(path)
        mine = encode_levels_v1(pattern.astype(np.int32), 1)
        got, used = decode_levels_v1(body, 1, 3000)
        assert np.array_equal(got, pattern.astype(np.int32))
        assert body[:used] == mine


def test_pyarrow_reads_our_rle_booleans_v2(tmp_path: Path) -> None:
    vals = np.array([True] * 50 + [False, True] * 30 + [False] * 9)
    f = one_page_file(PT.BOOLEAN, E.RLE, encode_rle_booleans(vals), len(vals), v2_levels=b"")
    assert arrow_read_bytes(tmp_path, f).to_pylist() == vals.tolist()


# -- real peer: parquet-testing fixtures (parquet-java and Arrow C++ writers) -------------------

FIXTURE_FILES = ["delta_binary_packed.parquet", "delta_byte_array.parquet", "delta_length_byte_array.parquet",
                 "delta_encoding_required_column.parquet", "byte_stream_split.zstd.parquet"]


@needs(FIXTURES)
@pytest.mark.parametrize("fname", FIXTURE_FILES)
def test_fixture_pages_decode_like_pyarrow(fname: str) -> None:
    path = FIXTURES / fname
    if not path.exists():
        pytest.fail(f"fixture {path} not present: tests read ../shared/fixtures")
    md = file_metadata(path.read_bytes())
    ncols = len(md.schema) - 1
    checked = 0
    for col in range(ncols):
        leaf = md.schema[1 + col]
        ours, defs, seen = read_column_ours(path, col)
        expected = arrow_dense(path, col, leaf.type, leaf.type_length)
        assert_same(ours, expected, leaf.type)
        checked += len(seen)
    assert checked >= ncols


@needs(FIXTURES)
def test_fixture_delta_binary_packed_against_expect_csv() -> None:
    path = FIXTURES / "delta_binary_packed.parquet"
    csv = FIXTURES / "delta_binary_packed_expect.csv"
    if not path.exists() or not csv.exists():
        pytest.fail("fixture not present: tests read ../shared/fixtures")
    lines = csv.read_text().strip().splitlines()
    header = lines[0].split(",")
    rows = [list(map(int, ln.split(","))) for ln in lines[1:]]
    md = file_metadata(path.read_bytes())
    names = [s.name for s in md.schema[1:]]
    for col, name in enumerate(names):
        ours, _, seen = read_column_ours(path, col)
        assert set(seen) == {E.DELTA_BINARY_PACKED}
        j = header.index(name)
        assert ours.tolist() == [r[j] for r in rows], name


@needs(FIXTURES)
def test_fixture_delta_byte_array_against_expect_csv() -> None:
    import csv as csvmod

    path = FIXTURES / "delta_byte_array.parquet"
    csv = FIXTURES / "delta_byte_array_expect.csv"
    if not path.exists() or not csv.exists():
        pytest.fail("fixture not present: tests read ../shared/fixtures")
    with csv.open(newline="") as fh:
        rows = list(csvmod.reader(fh))
    header, rows = rows[0], rows[1:]
    md = file_metadata(path.read_bytes())
    for col, leaf in enumerate(md.schema[1:]):
        ours, defs, _ = read_column_ours(path, col)
        j = header.index(leaf.name)
        expected = [r[j].encode() for r in rows if r[j] != ""]
        assert ours.to_pylist() == expected, leaf.name


@needs(FIXTURES)
def test_fixture_byte_stream_split_zstd_first_page_bytes() -> None:
    """Re-encoding what we decoded reproduces the fixture's (ZSTD-decompressed) value bytes exactly."""
    path = FIXTURES / "byte_stream_split.zstd.parquet"
    if not path.exists():
        pytest.fail("fixture not present: tests read ../shared/fixtures")
    data = path.read_bytes()
    md = file_metadata(data)
    for col in range(2):
        leaf = md.schema[1 + col]
        codec = md.row_groups[0].columns[col].meta_data.codec
        assert codec == T.CompressionCodec.ZSTD
        for ph, body in column_pages(data, md, 0, col):
            if ph.type == T.PageType.DATA_PAGE:
                raw = decompress(codec, body, ph.uncompressed_page_size)
                defs, pos = decode_levels_v1(raw, 1, ph.data_page_header.num_values)
                n = int(defs.sum())
                vals, used = decode_byte_stream_split(raw[pos:], leaf.type, n)
                assert pos + used == len(raw)
                assert encode_byte_stream_split(vals, leaf.type) == raw[pos:]
            elif ph.type == T.PageType.DATA_PAGE_V2:
                dh = ph.data_page_header_v2
                rest = decompress(codec, body[dh.definition_levels_byte_length:],
                                  ph.uncompressed_page_size - dh.definition_levels_byte_length)
                n = dh.num_values - dh.num_nulls
                vals, used = decode_byte_stream_split(rest, leaf.type, n)
                assert used == len(rest) and encode_byte_stream_split(vals, leaf.type) == rest



@SETTINGS
@given(bw=st.integers(1, 8), seed=st.integers(0, 2**32 - 1), min_rle=st.sampled_from([8, 15, 64]),
       stretches=st.sampled_from([3, 1500]))
def test_hybrid_encoder_many_rle_runs(bw, seed, min_rle, stretches):
    """Streams alternating long equal runs with short mixed stretches (as levels of sparse nulls look),
    including more stretches than the encoder copies one by one: decoded by the reference decoder."""
    rng = np.random.default_rng(seed)
    parts = []
    for _ in range(stretches):
        parts.append(np.full(int(rng.integers(min_rle, min_rle + 40)), rng.integers(0, 1 << bw)))
        parts.append(rng.integers(0, 1 << bw, int(rng.integers(1, 12))))
    vals = np.concatenate(parts).astype(np.int8 if bw < 8 else np.int16)
    enc = encode_rle_bitpacked(vals, bw, min_rle)
    assert ref_decode_hybrid(enc, bw, len(vals)) == vals.tolist()
    assert np.array_equal(decode_rle_bitpacked(enc, bw, len(vals)), vals)
    assert np.array_equal(decode_rle_bitpacked(enc, bw, len(vals) // 2), vals[:len(vals) // 2])


# -- the value dispatch (encodings/dispatch.py) -------------------------------------------------

#: every (encoding, physical type) pair the writer accepts, with a strategy for dense values of that type
_DISPATCH_CASES = [
    (E.PLAIN, PT.BOOLEAN), (E.RLE, PT.BOOLEAN),
    (E.PLAIN, PT.INT32), (E.DELTA_BINARY_PACKED, PT.INT32), (E.BYTE_STREAM_SPLIT, PT.INT32),
    (E.PLAIN, PT.INT64), (E.DELTA_BINARY_PACKED, PT.INT64), (E.BYTE_STREAM_SPLIT, PT.INT64),
    (E.PLAIN, PT.FLOAT), (E.BYTE_STREAM_SPLIT, PT.FLOAT), (E.PLAIN, PT.DOUBLE), (E.BYTE_STREAM_SPLIT, PT.DOUBLE),
    (E.PLAIN, PT.INT96),
    (E.PLAIN, PT.BYTE_ARRAY), (E.DELTA_LENGTH_BYTE_ARRAY, PT.BYTE_ARRAY), (E.DELTA_BYTE_ARRAY, PT.BYTE_ARRAY),
    (E.PLAIN, PT.FIXED_LEN_BYTE_ARRAY), (E.DELTA_BYTE_ARRAY, PT.FIXED_LEN_BYTE_ARRAY),
    (E.BYTE_STREAM_SPLIT, PT.FIXED_LEN_BYTE_ARRAY),
]


def _dense_values(ptype: int, rng: np.random.Generator, n: int):  # type: ignore[no-untyped-def]
    if ptype == PT.BOOLEAN:
        return rng.integers(0, 2, n).astype(bool)
    if ptype in (PT.INT32, PT.INT64):
        info = np.iinfo(np.int32 if ptype == PT.INT32 else np.int64)
        return rng.integers(info.min, info.max, n, dtype=np.int32 if ptype == PT.INT32 else np.int64, endpoint=True)
    if ptype in (PT.FLOAT, PT.DOUBLE):
        return rng.standard_normal(n).astype(np.float32 if ptype == PT.FLOAT else np.float64)
    if ptype in (PT.INT96, PT.FIXED_LEN_BYTE_ARRAY):
        return rng.integers(0, 256, (n, 12 if ptype == PT.INT96 else 5), dtype=np.uint8)
    return BinaryArray.from_pylist([bytes(rng.integers(0, 256, int(k), dtype=np.uint8)) for k in rng.integers(0, 9, n)])


@SETTINGS
@given(case=st.sampled_from(_DISPATCH_CASES), seed=st.integers(0, 2**32 - 1), n=st.integers(0, 300))
def test_value_dispatch_round_trips_every_encoding_the_writer_uses(case, seed, n) -> None:  # type: ignore[no-untyped-def]
    enc, ptype = case
    tl = 5 if ptype == PT.FIXED_LEN_BYTE_ARRAY else None
    values = _dense_values(ptype, np.random.default_rng(seed), n)
    assert dispatch.encoding_applies(enc, ptype)
    back = dispatch.decode_values(dispatch.encode_values(values, enc, ptype, tl), enc, ptype, n, tl)
    if ptype == PT.BYTE_ARRAY:
        assert back.to_pylist() == values.to_pylist()
    elif ptype == PT.FIXED_LEN_BYTE_ARRAY and enc == E.DELTA_BYTE_ARRAY:
        assert back.shape == (n, 5) and np.array_equal(back, values)  # a matrix, as PLAIN gives it
    else:
        assert back.dtype == values.dtype and np.array_equal(back, values)


def test_value_dispatch_refuses_what_does_not_apply() -> None:
    # the writer's own check and the dispatch agree on what applies
    for enc in (E.PLAIN, E.RLE, E.DELTA_BINARY_PACKED, E.DELTA_LENGTH_BYTE_ARRAY, E.DELTA_BYTE_ARRAY,
                E.BYTE_STREAM_SPLIT):
        for ptype in PT._VALUES_TO_NAMES:
            assert dispatch.encoding_applies(enc, ptype) == ((enc, ptype) in _DISPATCH_CASES), (enc, ptype)
    with pytest.raises(UnsupportedError, match="encoding DELTA_BINARY_PACKED is not supported for DOUBLE"):
        dispatch.encode_values(np.zeros(3), E.DELTA_BINARY_PACKED, PT.DOUBLE)
    with pytest.raises(UnsupportedError, match="encoding RLE_DICTIONARY is not supported for INT32"):
        dispatch.encode_values(np.zeros(3, np.int32), E.RLE_DICTIONARY, PT.INT32)
    with pytest.raises(UnsupportedError, match="encoding RLE is not supported for decimal"):
        dispatch.decode_values(b"\x00" * 8, E.RLE, PT.INT64, 1, type_name="decimal")
    with pytest.raises(UnsupportedError, match="encoding 42 is not supported for INT64"):
        dispatch.decode_values(b"\x00" * 8, 42, PT.INT64, 1)
    # dictionary-encoded pages decode to their indices
    idx = dispatch.decode_values(encode_dictionary_indices(np.array([2, 0, 1, 2]), 3), E.RLE_DICTIONARY, PT.DOUBLE, 4)
    assert idx.tolist() == [2, 0, 1, 2]
