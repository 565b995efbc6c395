"""Bloom filters inside files: placement, lengths, sizing, minimal-IO probes, malformed headers."""

from __future__ import annotations

import numpy as np
import pytest

import pqbloom
from pqbloom.bloom import BloomFilter, hash_values
from pqbloom.errors import CorruptFileError, SchemaError
from pqbloom.format import T

RNG = np.random.default_rng(3)


def _write(path, position, n=80_000, rg=20_000, **kw):
    ids = RNG.permutation(np.arange(0, 2 * n, 2, dtype=np.int64))
    emails = np.array([f"user{i}@example.com" for i in ids.tolist()])
    pqbloom.write_table({"id": ids, "email": emails, "x": RNG.random(n)}, path, row_group_size=rg,
                        bloom_filter_options={"id": True, "email": {"fpp": 0.001}},
                        bloom_filter_position=position, **kw)
    return ids, emails


def _chunk_extents(pf):
    out = []
    for rg in pf.thrift_metadata.row_groups:
        starts, ends = [], []
        for cc in rg.columns:
            m = cc.meta_data
            s = m.dictionary_page_offset if m.dictionary_page_offset is not None else m.data_page_offset
            starts.append(s)
            ends.append(s + m.total_compressed_size)
        out.append((min(starts), max(ends)))
    return out


@pytest.mark.parametrize("position", ["after_row_group", "end"])
def test_placement_and_lengths(tmp_path, position):
    p = tmp_path / "f.parquet"
    _write(p, position)
    pf = pqbloom.ParquetFile(p)
    extents = _chunk_extents(pf)
    first_index = min(cc.column_index_offset for rg in pf.thrift_metadata.row_groups for cc in rg.columns)
    size = p.stat().st_size
    raw = p.read_bytes()
    for i, rg in enumerate(pf.thrift_metadata.row_groups):
        for name, cc in zip(("id", "email", "x"), rg.columns):
            m = cc.meta_data
            if name == "x":
                assert m.bloom_filter_offset is None
                continue
            off, length = m.bloom_filter_offset, m.bloom_filter_length
            header, used = BloomFilter.parse_header(raw[off:off + 64])
            assert length == used + header  # header + bitset, so one read fetches it all
            assert off + length <= size
            if position == "after_row_group":
                # right after this row group's chunks, before the next row group starts
                assert off >= extents[i][1]
                if i + 1 < len(extents):
                    assert off + length <= extents[i + 1][0]
            else:
                assert off >= extents[-1][1]
                assert off + length <= first_index  # before the column indexes


def test_filters_hold_every_value_and_probe_reads_one_block(tmp_path):
    p = tmp_path / "f.parquet"
    ids, emails = _write(p, "after_row_group")
    pf = pqbloom.ParquetFile(p)
    t = pf.read()
    for i in range(pf.num_row_groups):
        rg = pf.read_row_group(i)
        bf = pf.bloom_filter(i, "id")
        assert bf.might_contain_many(rg.column("id").values, T.Type.INT64).all()
        assert pf.bloom_filter(i, "email").might_contain_many(rg.column("email").values, T.Type.BYTE_ARRAY).all()
    assert t.num_rows == len(ids)
    # single-value probes agree with whole-filter probes and read only the header and one block
    candidates = [int(v) for v in ids[:50]] + [int(v) + 1 for v in ids[:200]]
    for i in range(pf.num_row_groups):
        bf = pf.bloom_filter(i, "id")
        before = pf.io_stats.bytes_read
        got = [pf.bloom_filter_might_contain(i, "id", v) for v in candidates]
        per_probe = (pf.io_stats.bytes_read - before) / len(candidates)
        assert got == [bf.might_contain(v, T.Type.INT64) for v in candidates]
        assert per_probe <= 96
    absent = sum(pf.bloom_filter_might_contain(i, "id", int(v) + 1) is False
                 for i in range(pf.num_row_groups) for v in ids[:500])
    assert absent > 0.95 * 500 * pf.num_row_groups


def test_sizing_from_actual_distinct_count(tmp_path):
    p = tmp_path / "d.parquet"
    few = np.repeat(np.arange(1000, dtype=np.int64), 50)  # 50,000 rows, 1,000 distinct
    many = np.arange(50_000, dtype=np.int64)
    with pqbloom.ParquetWriter(p, pqbloom.Schema.from_types({"few": "int64", "many": "int64"}),
                               bloom_filter_options={"few": True, "many": True}, use_dictionary=False) as w:
        w.write_table({"few": few, "many": many})
    stats = {s["column"]: s for s in w.bloom_filter_stats}
    assert stats["few"]["distinct_values"] == 1000 and stats["many"]["distinct_values"] == 50_000
    # -8 n / ln(1 - 0.01^(1/8)) bits rounded up to a power of two
    assert stats["few"]["num_bytes"] == 2048 and stats["many"]["num_bytes"] == 65536
    for s in stats.values():
        assert 8.0 <= s["bits_per_distinct_value"] <= 21.0
    pf = pqbloom.ParquetFile(p)
    assert pf.bloom_filter(0, "few").num_bytes == 2048


def test_explicit_ndv_and_max_bytes(tmp_path):
    p = tmp_path / "n.parquet"
    pqbloom.write_table({"a": np.arange(10_000)}, p,
                        bloom_filter_options={"a": {"ndv": 1_000_000, "fpp": 0.01, "max_bytes": 4096}})
    assert pqbloom.ParquetFile(p).bloom_filter(0, "a").num_bytes == 4096


def test_bad_options_are_rejected(tmp_path):
    with pytest.raises(SchemaError):
        pqbloom.write_table({"a": [1]}, tmp_path / "x.parquet", bloom_filter_options={"nope": True})
    with pytest.raises(ValueError):
        pqbloom.write_table({"a": [1]}, tmp_path / "x.parquet", bloom_filter_options={"a": {"fpp": 2}})
    with pytest.raises(ValueError):
        pqbloom.write_table({"a": [1]}, tmp_path / "x.parquet", bloom_filter_position="middle")
    assert not (tmp_path / "x.parquet").exists()


def test_skip_dictionary_encoded_chunks(tmp_path):
    p = tmp_path / "s.parquet"
    pqbloom.write_table({"c": np.repeat(np.arange(10), 1000)}, p, bloom_filter_options={"c": True},
                        bloom_filter_skip_dictionary=True)
    assert pqbloom.ParquetFile(p).bloom_filter(0, "c") is None
    pqbloom.write_table({"c": np.repeat(np.arange(10), 1000)}, p, bloom_filter_options={"c": True})
    assert pqbloom.ParquetFile(p).bloom_filter(0, "c").might_contain(7, T.Type.INT64)


def test_values_hashed_as_physical_type(tmp_path):
    """A DATE is hashed as its INT32 and a DECIMAL as its stored bytes (checked against xxhash directly)."""
    import datetime as dt
    import decimal

    import xxhash

    p = tmp_path / "l.parquet"
    days = [dt.date(2020, 1, 1) + dt.timedelta(days=i) for i in range(100)]
    decs = [decimal.Decimal(i).scaleb(-2) for i in range(100)]
    t = pqbloom.Table.from_pydict({"d": days, "m": decs},
                                  pqbloom.Schema.from_types({"d": "date", "m": "decimal(30, 2)"}))
    pqbloom.write_table(t, p, bloom_filter_options={"d": True, "m": True}, use_dictionary=False)
    pf = pqbloom.ParquetFile(p)
    day0 = (days[0] - dt.date(1970, 1, 1)).days
    h = xxhash.xxh64_intdigest(int(day0).to_bytes(4, "little", signed=True))
    assert pf.bloom_filter(0, "d").check_hash(h)
    fixed = t.column("m").values
    assert hash_values(fixed, T.Type.FIXED_LEN_BYTE_ARRAY)[5] == xxhash.xxh64_intdigest(bytes(fixed[5]))
    assert pf.bloom_filter(0, "m").might_contain_many(fixed, T.Type.FIXED_LEN_BYTE_ARRAY).all()


def _padded_varint(value: int, width: int) -> bytes:
    """Zigzag varint of ``value`` spread over exactly ``width`` bytes (decoders accept the padding)."""
    z = (value << 1) ^ (value >> 63)
    out = []
    for _ in range(width - 1):
        out.append((z & 0x7F) | 0x80)
        z >>= 7
    if z > 0x7F:
        raise ValueError("does not fit")
    out.append(z)
    return bytes(out)


@pytest.mark.parametrize("num_bytes", [0, 31, 33, -32, 1 << 19])
def test_malformed_header_in_file_is_typed_error(tmp_path, num_bytes):
    p = tmp_path / "m.parquet"
    _write(p, "end", n=4000, rg=4000)
    raw = bytearray(p.read_bytes())
    pf = pqbloom.ParquetFile(p)
    off = pf.column_chunk(0, "id").bloom_filter_offset
    _, hlen = BloomFilter.parse_header(bytes(raw[off:off + 64]))
    assert raw[off] == 0x15  # field 1, i32
    width = hlen - 14  # the rest of the header is 13 bytes of union fields plus STOP
    raw[off + 1:off + 1 + width] = _padded_varint(num_bytes, width)
    p.write_bytes(bytes(raw))
    pf = pqbloom.ParquetFile(p)
    with pytest.raises(CorruptFileError):
        pf.bloom_filter(0, "id")
    with pytest.raises(CorruptFileError):
        pf.bloom_filter_might_contain(0, "id", 5)
