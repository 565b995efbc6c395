"""``pqbloom.add_bloom_filters`` / ``remove_bloom_filters`` on files other writers made (pyarrow, DuckDB,
polars, the shared corpora) and on pqbloom-encrypted files. Spark's side is in
``test_add_bloom_filters_spark.py``.

The oracles are the other implementations and the original file's bytes, never pqbloom's own writer:

* every column chunk's bytes (all its data and dictionary pages, located by pyarrow's metadata) are the
  same before and after, and the offset indexes point at the same page bytes;
* pyarrow (and DuckDB) read the result equal to the original;
* every value pyarrow reads hashes (XXH64 of its PLAIN encoding, computed here with ``xxhash``) into the
  new filter, and DuckDB's ``parquet_bloom_probe`` never excludes a present value and excludes most
  absent ones.
"""

from __future__ import annotations

import json
import os
import struct
from pathlib import Path

import duckdb
import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq
import pytest
import xxhash
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import pqbloom
from pqbloom.crypto import FileDecryptionProperties, FileEncryptionProperties
from pqbloom.errors import KeyNotFoundError, SourceChangedError, UnsupportedError
from pqbloom.format import decode_offset_index
from tests.conftest import COL_KEY, KEY, assert_no_key_in, run_pyarrow, values_equal
from tests.corpora import require
from tests.paths import FIXTURES_DATA, REAL_WORLD

POSITIONS = ["end", "before_page_indexes", "between_row_groups"]


# =============================================================================================
# oracles


def plain_hashes(values: list, physical: str) -> np.ndarray:
    """XXH64 (seed 0) of each non-null value's PLAIN encoding: the hash every reader probes (BloomFilter.md)."""
    out = []
    for v in values:
        if v is None or (isinstance(v, float) and v != v):  # NaN: no value to look up (its bits may vary)
            continue
        if physical == "INT32":
            b = struct.pack("<I", int(v) & 0xFFFFFFFF)
        elif physical == "INT64":
            b = struct.pack("<Q", int(v) & 0xFFFFFFFFFFFFFFFF)
        elif physical == "FLOAT":
            b = struct.pack("<f", v)
        elif physical == "DOUBLE":
            b = struct.pack("<d", v)
        else:
            b = v.encode() if isinstance(v, str) else bytes(v)
        out.append(xxhash.xxh64_intdigest(b))
    return np.array(out, dtype=np.uint64)


def chunk_ranges(path) -> dict[tuple[int, str], tuple[int, int]]:
    """(start, length) of every column chunk's pages, as pyarrow's metadata places them."""
    md = pq.ParquetFile(path).metadata
    out = {}
    for rg in range(md.num_row_groups):
        for c in range(md.num_columns):
            cc = md.row_group(rg).column(c)
            if cc.num_values == 0:
                continue
            start = cc.dictionary_page_offset if cc.has_dictionary_page else cc.data_page_offset
            out[(rg, cc.path_in_schema)] = (start, cc.total_compressed_size)
    return out


def assert_pages_identical(before: bytes, after_path, *, same_offsets: bool, original_path=None) -> None:
    """Every chunk's page bytes are unchanged (and, ``same_offsets``, where they were)."""
    after = Path(after_path).read_bytes()
    old, new = chunk_ranges(original_path), chunk_ranges(after_path)
    assert old.keys() == new.keys()
    for key, (s, n) in old.items():
        s2, n2 = new[key]
        assert n2 == n, key
        assert after[s2:s2 + n] == before[s:s + n], f"chunk {key}: page bytes differ"
        if same_offsets:
            assert s2 == s, key


def assert_offset_indexes_follow_pages(before: bytes, original_path, after_path) -> None:
    """Each page location of the new offset indexes holds the bytes the old one pointed at."""
    after = Path(after_path).read_bytes()
    old_md, new_md = pqbloom.read_metadata(str(original_path)), pqbloom.read_metadata(str(after_path))
    checked = 0
    for rg in range(old_md.num_row_groups):
        for c in range(old_md.num_columns):
            o, n = old_md.row_group(rg).column(c), new_md.row_group(rg).column(c)
            if not o.has_offset_index:
                continue
            old_oi = decode_offset_index(before[o.offset_index_offset:o.offset_index_offset + o.offset_index_length])
            new_oi = decode_offset_index(after[n.offset_index_offset:n.offset_index_offset + n.offset_index_length])
            assert len(old_oi.page_locations) == len(new_oi.page_locations)
            for a, b in zip(old_oi.page_locations, new_oi.page_locations):
                assert (a.compressed_page_size, a.first_row_index) == (b.compressed_page_size, b.first_row_index)
                assert after[b.offset:b.offset + b.compressed_page_size] == \
                    before[a.offset:a.offset + a.compressed_page_size]
                checked += 1
    assert checked


def assert_reads_equal(original: pa.Table, path) -> None:
    got = pq.read_table(path)
    assert got.schema.equals(original.schema, check_metadata=False)
    if not got.equals(original):  # NaNs compare unequal
        assert values_equal(got.to_pylist(), original.to_pylist())


def assert_present_values_probe_present(path, columns: list[str], props=None) -> int:
    """Every value pyarrow reads of ``columns`` is in its row group's new filter (hashed here)."""
    pf = pq.ParquetFile(path)
    physical = {pf.metadata.schema.column(i).path: pf.metadata.schema.column(i).physical_type
                for i in range(pf.metadata.num_columns)}
    n = 0
    with pqbloom.ParquetFile(str(path), decryption_properties=props) as f:
        for rg in range(pf.num_row_groups):
            t = pf.read_row_group(rg, columns=columns)
            for col in columns:
                bf = f.bloom_filter(rg, col)
                values = t.column(col).to_pylist()
                if not any(v is not None for v in values):
                    continue
                assert bf is not None, (rg, col)
                h = plain_hashes(values, physical[col])
                assert bf.check_hashes(h).all(), f"row group {rg}, column {col}: a present value probes absent"
                n += len(h)
    return n


def duckdb_verdicts(path, column: str, value) -> list[bool]:
    con = duckdb.connect()
    rows = con.execute("SELECT row_group_id, bloom_filter_excludes FROM parquet_bloom_probe(?, ?, ?) "
                       "ORDER BY row_group_id", [str(path), column, value]).fetchall()
    return [bool(x) for _, x in rows]


# =============================================================================================
# pyarrow-written files


def _table(n: int = 12_000, seed: int = 1) -> pa.Table:
    rng = np.random.default_rng(seed)
    return pa.table({
        "id": pa.array(rng.permutation(n) * 3, pa.int64()),
        "i32": pa.array(rng.integers(-5000, 5000, n), pa.int32()),
        "u8": pa.array(rng.integers(0, 255, n), pa.uint8()),
        "s": pa.array([None if x % 17 == 0 else f"name-{x}" for x in rng.integers(0, 4000, n)]),
        "f": pa.array(rng.normal(size=n).astype(np.float32)),
        "d": pa.array(rng.normal(size=n)),
        "b": pa.array(rng.integers(0, 2, n) == 1),
    })


COLUMNS = ["id", "i32", "u8", "s", "f", "d"]


@pytest.mark.parametrize("position", POSITIONS)
@pytest.mark.parametrize("page_index,dictionary", [(True, True), (False, True), (True, False), (False, False)])
def test_pyarrow_file(tmp_path, position, page_index, dictionary):
    t = _table()
    path = tmp_path / "a.parquet"
    pq.write_table(t, path, row_group_size=3000, write_page_index=page_index, use_dictionary=dictionary,
                   data_page_size=4096, compression="zstd")
    before = path.read_bytes()
    original = tmp_path / "orig.parquet"
    original.write_bytes(before)
    r = pqbloom.add_bloom_filters(path, COLUMNS, fpp=0.01, position=position)
    assert len(r.changes) == 4 * len(COLUMNS) and {c.action for c in r.changes} == {"added"}
    assert r.size_after == path.stat().st_size > len(before)
    assert_reads_equal(t, path)
    assert_pages_identical(before, path, same_offsets=position != "between_row_groups", original_path=original)
    if page_index:
        assert_offset_indexes_follow_pages(before, original, path)
    if position == "end":  # nothing of the original moved: it is a prefix of the new file
        footer_start = len(before) - 8 - int.from_bytes(before[-8:-4], "little")
        assert path.read_bytes()[:footer_start] == before[:footer_start]
    assert assert_present_values_probe_present(path, COLUMNS) > 50_000
    md = pq.ParquetFile(path).metadata
    assert md.created_by == pq.ParquetFile(original).metadata.created_by  # the writer stays named
    assert md.metadata[b"pqbloom.bloom_filters_edited_by"].startswith(b"pqbloom version")
    assert md.metadata[b"ARROW:schema"] == pq.ParquetFile(original).metadata.metadata[b"ARROW:schema"]
    cc = md.row_group(1).column(0)
    assert cc.bloom_filter_offset is not None and cc.bloom_filter_length > 32


def test_duckdb_probes_and_prunes_the_filters_added_to_a_pyarrow_file(tmp_path):
    t = _table()
    path = tmp_path / "a.parquet"
    pq.write_table(t, path, row_group_size=3000)
    pqbloom.add_bloom_filters(path, ["id", "s", "d"])
    ids = t.column("id").to_pylist()
    for i in range(0, 12_000, 397):  # present: never excluded from its row group
        assert duckdb_verdicts(path, "id", ids[i])[i // 3000] is False
        s = t.column("s")[i].as_py()
        if s is not None:
            assert duckdb_verdicts(path, "s", s)[i // 3000] is False
    # absent values inside every row group's min/max (ids are multiples of 3)
    verdicts = [v for x in range(1, 30_000, 303) for v in duckdb_verdicts(path, "id", x)]
    assert sum(verdicts) >= 0.95 * len(verdicts)
    verdicts = [v for x in range(200) for v in duckdb_verdicts(path, "s", f"name-x{x}")]
    assert sum(verdicts) >= 0.95 * len(verdicts)
    # and DuckDB's filtered read returns the right rows
    con = duckdb.connect()
    assert con.execute(f"SELECT count(*) FROM read_parquet('{path}') WHERE id = ?", [ids[5]]).fetchone()[0] == 1


def test_sizes_follow_the_exact_distinct_count(tmp_path):
    """Each row group's filter is sized from its chunk's distinct count with the peers' formula."""
    n = 8000
    t = pa.table({"k": pa.array(np.repeat(np.arange(n // 4), 4), pa.int64()),  # 2000 distinct per 8000 rows
                  "u": pa.array(np.arange(n), pa.int64())})
    path = tmp_path / "a.parquet"
    pq.write_table(t, path, row_group_size=4000)
    r = pqbloom.add_bloom_filters(path, ["k", "u"], fpp=0.001, dry_run=True)
    got = {(c.row_group, c.column): (c.distinct_values, c.num_bytes) for c in r.changes}
    import math

    def peers(ndv: int, fpp: float) -> int:  # pyarrow / parquet-java: next power of two of the optimal bits
        bits = -8 * ndv / math.log(1 - fpp ** (1 / 8))
        return max(32, 1 << (int(bits) - 1).bit_length()) // 8

    assert got == {(0, "k"): (1000, peers(1000, 0.001)), (1, "k"): (1000, peers(1000, 0.001)),
                   (0, "u"): (4000, peers(4000, 0.001)), (1, "u"): (4000, peers(4000, 0.001))}


def test_dry_run_writes_nothing(tmp_path):
    path = tmp_path / "a.parquet"
    pq.write_table(_table(), path, row_group_size=3000)
    before, mtime = path.read_bytes(), path.stat().st_mtime_ns
    r = pqbloom.add_bloom_filters(path, COLUMNS, dry_run=True)
    assert r.dry_run and r.size_after > r.size_before == len(before) and r.added_bytes > 0
    assert path.read_bytes() == before and path.stat().st_mtime_ns == mtime
    assert sorted(os.listdir(tmp_path)) == ["a.parquet"]
    r = pqbloom.remove_bloom_filters(path, dry_run=True)
    assert r.changes == [] and path.read_bytes() == before


def test_a_failure_mid_write_leaves_the_original_intact(tmp_path, monkeypatch):
    from pqbloom.file import splice
    from pqbloom.io.sinks import AtomicFileSink

    path = tmp_path / "a.parquet"
    pq.write_table(_table(), path, row_group_size=3000)
    before = path.read_bytes()
    monkeypatch.setattr(splice, "COPY_BLOCK", 4096)
    calls = []
    real_write = AtomicFileSink.write

    def failing_write(self, data):
        calls.append(len(data))
        if len(calls) == 5:
            raise OSError(28, "No space left on device")
        return real_write(self, data)

    monkeypatch.setattr(AtomicFileSink, "write", failing_write)
    with pytest.raises(OSError, match="No space left"):
        pqbloom.add_bloom_filters(path, COLUMNS, position="between_row_groups")
    assert len(calls) == 5
    assert path.read_bytes() == before
    assert sorted(os.listdir(tmp_path)) == ["a.parquet"]  # the temporary file is gone too


def test_a_stale_hadoop_checksum_file_is_removed(tmp_path):
    """Hadoop's local file system (Spark) checks ``.<name>.crc`` when it exists: a stale one makes the file
    unreadable to Spark, so the edit removes the one of the file it replaces (none on a dry run)."""
    path, out = tmp_path / "a.parquet", tmp_path / "b.parquet"
    pq.write_table(_table(1000), path)
    crc, other = tmp_path / ".a.parquet.crc", tmp_path / ".b.parquet.crc"
    crc.write_bytes(b"crc of the old bytes")
    other.write_bytes(b"unrelated")
    pqbloom.add_bloom_filters(path, ["id"], dry_run=True)
    assert crc.exists() and other.exists()
    pqbloom.add_bloom_filters(path, ["id"], output=out)
    assert crc.exists() and not other.exists()  # b.parquet was replaced, a.parquet was not
    pqbloom.add_bloom_filters(path, ["id"])
    assert not crc.exists()
    assert pq.ParquetFile(path).metadata.row_group(0).column(0).bloom_filter_offset is not None


def test_a_file_changed_during_the_edit_is_not_replaced(tmp_path, monkeypatch):
    from pqbloom.io.sinks import AtomicFileSink

    path = tmp_path / "a.parquet"
    pq.write_table(_table(), path, row_group_size=3000)
    real_write = AtomicFileSink.write

    def meddling_write(self, data):  # another process rewrites the file while it is copied
        if not getattr(self, "_meddled", False):
            self._meddled = True
            pq.write_table(pa.table({"x": [1, 2, 3]}), path)
        return real_write(self, data)

    monkeypatch.setattr(AtomicFileSink, "write", meddling_write)
    with pytest.raises(SourceChangedError):
        pqbloom.add_bloom_filters(path, ["id"])
    assert pq.read_table(path).column_names == ["x"]  # the other writer's file stays
    assert sorted(os.listdir(tmp_path)) == ["a.parquet"]


def test_existing_filters_error_keep_replace_and_remove(tmp_path):
    """pyarrow's own filters (laid out filters -> column indexes -> offset indexes -> footer)."""
    t = _table()
    path = tmp_path / "a.parquet"
    pq.write_table(t, path, row_group_size=3000, bloom_filter_options={"id": {"ndv": 100_000, "fpp": 0.05}},
                   write_page_index=True)
    before = path.read_bytes()
    original = tmp_path / "orig.parquet"
    original.write_bytes(before)
    old_len = pq.ParquetFile(path).metadata.row_group(0).column(0).bloom_filter_length
    with pytest.raises(ValueError, match="existing='replace'"):
        pqbloom.add_bloom_filters(path, ["id", "s"])
    assert path.read_bytes() == before
    r = pqbloom.add_bloom_filters(path, ["id", "s"], existing="keep")
    assert {(c.column, c.action) for c in r.changes} == {("s", "added")}
    assert pq.ParquetFile(path).metadata.row_group(0).column(0).bloom_filter_length == old_len
    r = pqbloom.add_bloom_filters(path, ["id"], existing="replace", fpp=0.001)
    assert {c.action for c in r.changes} == {"replaced"} and all(c.old_bytes == old_len for c in r.changes)
    # pyarrow's filters lie after the pages, before the page indexes: cut out, the indexes moved
    assert r.reclaimed_bytes == 4 * old_len and r.dead_bytes == 0
    assert pq.ParquetFile(path).metadata.row_group(0).column(0).bloom_filter_length != old_len
    assert_reads_equal(t, path)
    assert_pages_identical(before, path, same_offsets=True, original_path=original)
    assert_offset_indexes_follow_pages(before, original, path)
    assert_present_values_probe_present(path, ["id", "s"])
    # filtered reads that use the (moved) page index still find the rows
    got = pqbloom.read_table(str(path), filters=[("id", "==", t.column("id")[7].as_py())])
    assert got.num_rows == 1
    r = pqbloom.remove_bloom_filters(path)
    assert {(c.column, c.action) for c in r.changes} == {("id", "removed"), ("s", "removed")}
    md = pq.ParquetFile(path).metadata
    assert all(md.row_group(g).column(c).bloom_filter_offset is None for g in range(4) for c in range(7))
    # every filter is gone, bytes and all: the file is the original's pages and indexes with a new footer
    assert r.dead_bytes == 0
    assert 0 < path.stat().st_size - (len(before) - 4 * old_len) < 100  # the footer's key-value entry
    assert_reads_equal(t, path)
    assert_offset_indexes_follow_pages(before, original, path)


def test_filters_between_row_groups_removed_stay_as_dead_bytes(tmp_path):
    t = _table()
    path = tmp_path / "a.parquet"
    pq.write_table(t, path, row_group_size=3000)
    pqbloom.add_bloom_filters(path, ["id"], position="between_row_groups")
    with_filters = path.read_bytes()
    original = tmp_path / "mid.parquet"
    original.write_bytes(with_filters)
    r = pqbloom.remove_bloom_filters(path, ["id"])
    assert r.dead_bytes > 0 and r.reclaimed_bytes > 0  # the last row group's filter lies after every page
    assert_pages_identical(with_filters, path, same_offsets=True, original_path=original)
    assert_reads_equal(t, path)


def test_nested_columns(tmp_path):
    rng = np.random.default_rng(5)
    n = 3000
    t = pa.table({
        "l": pa.array([None if i % 11 == 0 else rng.integers(0, 10_000, i % 5).tolist() for i in range(n)],
                      pa.list_(pa.int64())),
        "st": pa.array([{"a": f"k{i % 700}", "b": int(i % 50), "c": bool(i % 2)} for i in range(n)]),
    })
    path = tmp_path / "n.parquet"
    pq.write_table(t, path, row_group_size=1000)
    r = pqbloom.add_bloom_filters(path, ["l", "st"])  # top-level fields: their leaves, the boolean left out
    assert {c.column for c in r.changes} == {"l.list.element", "st.a", "st.b"}
    assert_reads_equal(t, path)
    with pqbloom.ParquetFile(str(path)) as f:
        for rg in range(3):
            part = t.slice(rg * 1000, 1000)
            flat = part.column("l").combine_chunks().flatten().to_pylist()
            assert f.bloom_filter(rg, "l.list.element").check_hashes(plain_hashes(flat, "INT64")).all()
            a = pc.struct_field(part.column("st"), "a").to_pylist()
            assert f.bloom_filter(rg, "st.a").check_hashes(plain_hashes(a, "BYTE_ARRAY")).all()
            assert f.bloom_filter(rg, "st.c") is None
    with pytest.raises(UnsupportedError, match="BOOLEAN"):
        pqbloom.add_bloom_filters(path, ["st.c"])


def test_bad_arguments(tmp_path):
    path = tmp_path / "a.parquet"
    pq.write_table(_table(1000), path)
    before = path.read_bytes()
    with pytest.raises(KeyError, match="nope"):
        pqbloom.add_bloom_filters(path, ["nope"])
    with pytest.raises(UnsupportedError, match="BOOLEAN"):
        pqbloom.add_bloom_filters(path, ["b"])
    with pytest.raises(ValueError, match="position"):
        pqbloom.add_bloom_filters(path, ["id"], position="middle")
    with pytest.raises(ValueError, match="fpp"):
        pqbloom.add_bloom_filters(path, ["id"], fpp=1.5)
    assert path.read_bytes() == before


def test_output_elsewhere_and_per_column_fpp(tmp_path):
    path, out = tmp_path / "a.parquet", tmp_path / "b.parquet"
    t = _table(6000)
    pq.write_table(t, path, row_group_size=3000)
    before = path.read_bytes()
    r = pqbloom.add_bloom_filters(path, {"id": 0.0001, "s": {"fpp": 0.2}}, output=out)
    assert path.read_bytes() == before
    sizes = {c.column: c.num_bytes for c in r.changes if c.row_group == 0}
    assert sizes["id"] >= 4 * sizes["s"]
    assert_reads_equal(t, out)


def test_symlinked_file_is_edited_where_it_lies(tmp_path):
    real, link = tmp_path / "real.parquet", tmp_path / "link.parquet"
    pq.write_table(_table(1000), real)
    link.symlink_to(real)
    pqbloom.add_bloom_filters(link, ["id"])
    assert link.is_symlink()
    assert pq.ParquetFile(real).metadata.row_group(0).column(0).bloom_filter_offset is not None


def test_unknown_footer_fields_are_refused(tmp_path):
    src = require(FIXTURES_DATA / "unknown-logical-type.parquet")
    path = tmp_path / "u.parquet"
    path.write_bytes(src.read_bytes())
    with pytest.raises(UnsupportedError, match="does not know"):
        pqbloom.add_bloom_filters(path, ["column with known type"])
    assert path.read_bytes() == src.read_bytes()


# =============================================================================================
# DuckDB and polars


def test_duckdb_file(tmp_path):
    """DuckDB writes its own filters for dictionary chunks; a high-cardinality string column gets none."""
    path = tmp_path / "d.parquet"
    con = duckdb.connect()
    con.execute(f"""COPY (SELECT i::BIGINT AS id, 'user-' || (i * 7919 % 100003)::VARCHAR || '-' || md5(i::VARCHAR) AS s,
                           (i % 10)::INTEGER AS small FROM range(60000) t(i))
                    TO '{path}' (FORMAT parquet, ROW_GROUP_SIZE 20000)""")
    before = path.read_bytes()
    original = tmp_path / "orig.parquet"
    original.write_bytes(before)
    t = pq.read_table(path)
    md = pq.ParquetFile(path).metadata
    assert md.row_group(0).column(2).bloom_filter_offset is not None  # DuckDB's own, on the dictionary column
    r = pqbloom.add_bloom_filters(path, ["id", "s", "small"], existing="keep")
    assert {c.column for c in r.changes} >= {"s"} and "small" not in {c.column for c in r.changes}
    assert_reads_equal(t, path)
    assert_pages_identical(before, path, same_offsets=True, original_path=original)
    assert_present_values_probe_present(path, ["id", "s", "small"])
    ids, ss = t.column("id").to_pylist(), t.column("s").to_pylist()
    for i in range(0, 60_000, 1999):
        assert duckdb_verdicts(path, "s", ss[i])[i // 20_000] is False
        assert duckdb_verdicts(path, "id", ids[i])[i // 20_000] is False
    verdicts = [v for x in range(150) for v in duckdb_verdicts(path, "s", f"user-{x}-absent")]
    assert sum(verdicts) >= 0.95 * len(verdicts)
    assert con.execute(f"SELECT count(*) FROM read_parquet('{path}') WHERE s = ?", [ss[12345]]).fetchone()[0] == 1
    assert con.execute(f"SELECT count(*), sum(id), count(DISTINCT s) FROM read_parquet('{path}')").fetchone() == \
        con.execute(f"SELECT count(*), sum(id), count(DISTINCT s) FROM read_parquet('{original}')").fetchone()


def test_polars_file(tmp_path):
    pl = pytest.importorskip("polars")
    rng = np.random.default_rng(9)
    df = pl.DataFrame({"id": rng.permutation(50_000), "s": [f"p{x}" for x in rng.integers(0, 20_000, 50_000)],
                       "x": rng.normal(size=50_000)})
    path = tmp_path / "p.parquet"
    df.write_parquet(path, row_group_size=10_000, statistics=True)
    before = path.read_bytes()
    original = tmp_path / "orig.parquet"
    original.write_bytes(before)
    t = pq.read_table(path)
    pqbloom.add_bloom_filters(path, ["id", "s", "x"], position="between_row_groups")
    assert_reads_equal(t, path)
    assert_pages_identical(before, path, same_offsets=False, original_path=original)
    assert_present_values_probe_present(path, ["id", "s", "x"])
    assert pl.read_parquet(path).equals(df)
    verdicts = [v for x in range(100) for v in duckdb_verdicts(path, "s", f"q{x}")]
    assert sum(verdicts) >= 0.95 * len(verdicts)


# =============================================================================================
# encrypted files


def _encrypted(tmp_path, plaintext_footer: bool, algorithm: str, uniform: bool) -> tuple[Path, pa.Table]:
    t = _table(9000)
    path = tmp_path / "e.parquet"
    props = FileEncryptionProperties(KEY, None if uniform else {"s": COL_KEY, "id": COL_KEY}, algorithm=algorithm,
                                     plaintext_footer=plaintext_footer)
    pqbloom.write_table(t, str(path), row_group_size=3000, encryption_properties=props)
    return path, t


@pytest.mark.parametrize("position", POSITIONS)
@pytest.mark.parametrize("plaintext_footer,algorithm", [(False, "AES_GCM_V1"), (True, "AES_GCM_CTR_V1")])
def test_encrypted_file_with_column_keys(tmp_path, position, plaintext_footer, algorithm):
    path, t = _encrypted(tmp_path, plaintext_footer, algorithm, uniform=False)
    before = path.read_bytes()
    original = tmp_path / "orig.parquet"
    original.write_bytes(before)
    with pytest.raises(KeyNotFoundError) as info:  # refused without keys, file untouched
        pqbloom.add_bloom_filters(path, ["s"])
    assert path.read_bytes() == before
    with pytest.raises(KeyNotFoundError) as info:  # the column's own key is needed to encrypt its filter
        pqbloom.add_bloom_filters(path, ["s"], decryption_properties=FileDecryptionProperties(KEY))
    assert_no_key_in(info.value)
    assert path.read_bytes() == before
    props = FileDecryptionProperties(KEY, {"s": COL_KEY, "id": COL_KEY})
    r = pqbloom.add_bloom_filters(path, ["s", "id", "d"], decryption_properties=props, position=position)
    assert path.read_bytes()[:4] == before[:4] and path.read_bytes()[-4:] == before[-4:]
    assert len(r.changes) == 9
    enc = {c.column: c for c in r.changes if c.row_group == 0}
    # an encrypted column's filter: two GCM modules, header (length, nonce, tag) and bitset
    hlen = len(pqbloom.bloom.BloomFilter(enc["s"].num_bytes).header_bytes())
    assert enc["s"].stored_bytes == (4 + 12 + hlen + 16) + (4 + 12 + enc["s"].num_bytes + 16)
    assert enc["d"].stored_bytes == hlen + enc["d"].num_bytes  # a plaintext column's is plaintext
    with pqbloom.ParquetFile(str(path), decryption_properties=props) as f:
        meta = f.chunk_metadata(0, f.column_descriptor("s"))
        raw = f.range_reader.read(meta.bloom_filter_offset, 4)
        assert int.from_bytes(raw, "little") == 12 + hlen + 16  # a module length, not a Thrift header
        for rg in range(3):
            part = t.slice(rg * 3000, 3000)
            for col, phys in (("s", "BYTE_ARRAY"), ("id", "INT64"), ("d", "DOUBLE")):
                h = plain_hashes(part.column(col).to_pylist(), phys)
                assert f.bloom_filter(rg, col).check_hashes(h).all()
            assert not f.bloom_filter_might_contain(rg, "id", 1)  # ids are multiples of 3
        assert f.read().to_pydict() == pqbloom.read_table(str(original), decryption_properties=props).to_pydict()
    assert_pages_identical_encrypted(before, path, props, original)
    # a filtered read with the new filters
    got = pqbloom.read_table(str(path), filters=[("id", "==", t.column("id")[4].as_py())], decryption_properties=props)
    assert got.num_rows == 1


def assert_pages_identical_encrypted(before: bytes, path, props, original) -> None:
    after = Path(path).read_bytes()
    with pqbloom.ParquetFile(str(original), decryption_properties=props) as a, \
            pqbloom.ParquetFile(str(path), decryption_properties=props) as b:
        for rg in range(a.num_row_groups):
            for d in a.columns:
                ma, mb = a.chunk_metadata(rg, d), b.chunk_metadata(rg, d)
                sa, la = a.chunk_range(ma, rg, d, stated=True)
                sb, lb = b.chunk_range(mb, rg, d, stated=True)
                assert la == lb and after[sb:sb + lb] == before[sa:sa + la]


def test_encrypted_end_position_needs_only_the_keys_of_the_named_columns(tmp_path):
    path, t = _encrypted(tmp_path, False, "AES_GCM_V1", uniform=False)
    pqbloom.add_bloom_filters(path, ["d"], decryption_properties=FileDecryptionProperties(KEY))
    props = FileDecryptionProperties(KEY, {"s": COL_KEY, "id": COL_KEY})
    assert pqbloom.read_table(str(path), decryption_properties=props).to_pydict() == t.to_pydict()
    # moving the page indexes changes offsets an unreadable chunk's metadata may hold: its key is needed
    with pytest.raises(KeyNotFoundError, match="position='end'"):
        pqbloom.add_bloom_filters(path, ["f"], position="before_page_indexes",
                                  decryption_properties=FileDecryptionProperties(KEY))


@pytest.mark.parametrize("plaintext_footer", [False, True])
def test_pyarrow_reads_an_encrypted_file_after_the_edit(tmp_path, plaintext_footer):
    """pyarrow (a subprocess: it may abort on encrypted metadata) decrypts the result, footer included."""
    path, t = _encrypted(tmp_path, plaintext_footer, "AES_GCM_V1", uniform=True)
    pqbloom.add_bloom_filters(path, ["s", "id"], decryption_properties=FileDecryptionProperties(KEY),
                              position="between_row_groups")
    out = run_pyarrow("""
        props = pe.create_decryption_properties(bytes.fromhex(sys.argv[2]))
        t = pq.read_table(sys.argv[1], decryption_properties=props)
        print(json.dumps(table_json(t)))
    """, str(path), KEY.hex())
    got = json.loads(out.strip().splitlines()[-1])
    assert values_equal(got, {k: v for k, v in t.to_pydict().items()})


# =============================================================================================
# the corpora: every plain file pyarrow reads


def _corpus_files(root: Path, limit_bytes: int = 4 << 20) -> list[Path]:
    if not root.exists():
        return []
    return sorted(p for p in root.rglob("*.parquet") if p.is_file() and p.stat().st_size <= limit_bytes)


@pytest.mark.parametrize("corpus,position", [(FIXTURES_DATA, "end"), (FIXTURES_DATA, "between_row_groups"),
                                             (REAL_WORLD, "before_page_indexes"), (REAL_WORLD, "between_row_groups")])
def test_corpus_sweep(tmp_path, corpus, position):
    require(corpus)
    files = _corpus_files(corpus)
    assert files, f"no Parquet file in {corpus}"
    done, skipped = 0, {}
    work = tmp_path / "x.parquet"
    for src in files:
        try:
            original = pq.read_table(src)
            md = pq.ParquetFile(src).metadata
        except Exception:  # noqa: BLE001 - files pyarrow refuses are not the subject here
            continue
        if md.num_rows == 0 or any(md.row_group(g).column(c).file_path for g in range(md.num_row_groups)
                                   for c in range(md.num_columns)):
            continue
        cols = [md.schema.column(i).path for i in range(md.num_columns) if md.schema.column(i).physical_type != "BOOLEAN"]
        if not cols:
            continue
        before = src.read_bytes()
        work.write_bytes(before)
        try:
            pqbloom.add_bloom_filters(work, cols, existing="replace", position=position, fsync=False)
        except (UnsupportedError, pqbloom.errors.CorruptFileError, KeyError) as exc:
            # refused (unknown footer fields, corrupt pages, ambiguous names): typed, and the file untouched
            assert work.read_bytes() == before, src
            skipped[src.name] = f"{type(exc).__name__}: {exc}"
            continue
        assert_reads_equal(original, work)
        assert_pages_identical(before, work, same_offsets=position != "between_row_groups", original_path=src)
        if any(md.row_group(0).column(c).has_offset_index for c in range(md.num_columns)):
            assert_offset_indexes_follow_pages(before, src, work)
        simple = [md.schema.column(i).path for i in range(md.num_columns)
                  if md.schema.column(i).physical_type in ("INT32", "INT64", "FLOAT", "DOUBLE")
                  and md.schema.column(i).logical_type.type in ("NONE", "INT")
                  and md.schema.column(i).converted_type in ("NONE", "INT_8", "INT_16", "INT_32", "INT_64", "UINT_8",
                                                             "UINT_16", "UINT_32", "UINT_64")
                  and md.schema.column(i).max_repetition_level == 0
                  and md.schema.column(i).path in original.column_names]
        if simple:
            assert_present_values_probe_present(work, simple)
        done += 1
    assert done >= 40, (done, skipped)
    # what may be refused, and why: nothing else
    for name, why in skipped.items():
        assert any(w in why for w in ("does not know", "CRC", "ambiguous", "BOOLEAN")), (name, why)


# =============================================================================================
# property: random tables, random writer options, random edit options


@st.composite
def _cases(draw):
    n = draw(st.integers(1, 3000))
    seed = draw(st.integers(0, 2**32 - 1))
    rng = np.random.default_rng(seed)
    card = draw(st.sampled_from([1, 7, 500, 100_000]))
    nulls = draw(st.booleans())
    mask = (rng.random(n) < 0.2) if nulls else None
    cols = {
        "i64": pa.array(rng.integers(-card, card + 1, n), pa.int64(), mask=mask),
        "i32": pa.array(rng.integers(-card, card + 1, n).astype(np.int32), pa.int32()),
        "s": pa.array([f"s{x}" for x in rng.integers(0, card, n)], mask=mask),
        "f": pa.array(rng.integers(0, card, n).astype(np.float64) / 3),
        "bin": pa.array([bytes([x % 256]) * (x % 5) for x in rng.integers(0, card, n).tolist()], pa.binary()),
    }
    writer = dict(row_group_size=draw(st.integers(1, 1500)), use_dictionary=draw(st.booleans()),
                  write_page_index=draw(st.booleans()), data_page_size=draw(st.sampled_from([256, 4096, 1 << 20])),
                  compression=draw(st.sampled_from(["none", "snappy", "zstd"])),
                  data_page_version=draw(st.sampled_from(["1.0", "2.0"])))
    chosen = draw(st.lists(st.sampled_from(sorted(cols)), min_size=1, unique=True))
    edit = dict(position=draw(st.sampled_from(POSITIONS)), fpp=draw(st.sampled_from([0.3, 0.01, 0.0001])))
    return pa.table(cols), writer, chosen, edit


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(case=_cases())
def test_property_random_tables_and_options(tmp_path, case):
    t, writer, chosen, edit = case
    path = tmp_path / "p.parquet"
    pq.write_table(t, path, **writer)
    before = path.read_bytes()
    original = tmp_path / "o.parquet"
    original.write_bytes(before)
    pqbloom.add_bloom_filters(path, chosen, fsync=False, **edit)
    assert_reads_equal(t, path)
    assert_pages_identical(before, path, same_offsets=edit["position"] != "between_row_groups", original_path=original)
    if writer["write_page_index"]:
        assert_offset_indexes_follow_pages(before, original, path)
    assert_present_values_probe_present(path, chosen)
    # and back: removing them leaves a file pyarrow reads the same
    pqbloom.remove_bloom_filters(path, fsync=False)
    assert_reads_equal(t, path)
    md = pq.ParquetFile(path).metadata
    assert all(md.row_group(g).column(c).bloom_filter_offset is None
               for g in range(md.num_row_groups) for c in range(md.num_columns))
