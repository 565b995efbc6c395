"""Bloom filters against peers that need no JVM: DuckDB, pyarrow, the parquet-mr fixtures, the CLI, and the FPP.

Each test can fail: DuckDB probes and prunes with the filters pqbloom writes
(and trusts a deliberately wrong one, which proves it reads them), pyarrow
locates them at the offsets our footer gives, pqbloom finds every value in
filters pyarrow and parquet-mr wrote and builds byte-identical bitsets, and
the measured false-positive rate matches the theory.
"""

from __future__ import annotations

import math
import subprocess
import sys
from pathlib import Path

import duckdb
import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import pqbloom
from pqbloom.bloom import BloomFilter, optimal_num_bytes, theoretical_fpp
from pqbloom.format import T

PT = T.Type
PLACEMENTS = ["after_row_group", "end"]


# ---------------------------------------------------------------------------
# shared helpers (also used by test_spark.py)
# ---------------------------------------------------------------------------

def chunk_meta(path, rg: int, column: str):
    """Our parser's ColumnMetaData of one chunk."""
    with pqbloom.ParquetFile(str(path)) as pf:
        md = pf.thrift_metadata
    names = [c.meta_data.path_in_schema[-1] for c in md.row_groups[rg].columns]
    return md.row_groups[rg].columns[names.index(column)].meta_data


def forge_bloom_filter(path, rg: int, column: str, victim_candidates, ptype) -> object:
    """Overwrite, in place, the bitset of ``column``'s filter in row group ``rg`` with a filter of the
    same size over all of the chunk's values except one ``victim`` (the first candidate the forged
    filter really excludes). Returns the victim. The header, offsets and lengths stay untouched.
    """
    with pqbloom.ParquetFile(str(path)) as pf:
        values = pf.read_row_group(rg, columns=[column]).column(column).to_pylist()
        original = pf.bloom_filter(rg, column)
    assert original is not None
    meta = chunk_meta(path, rg, column)
    off = meta.bloom_filter_offset
    raw = Path(path).read_bytes()
    num_bytes, header_len = BloomFilter.parse_header(raw[off:off + 256])
    assert num_bytes == original.num_bytes
    assert raw[off + header_len:off + header_len + num_bytes] == original.bitset()
    present = set(values)
    for victim in victim_candidates:
        if victim not in present:
            continue
        forged = BloomFilter(num_bytes)
        forged.insert([v for v in values if v != victim], ptype)
        if not forged.might_contain(victim, ptype):
            break
    else:  # pragma: no cover - with ~thousands of candidates this cannot happen
        raise AssertionError("no victim value could be excluded")
    with open(path, "r+b") as f:
        f.seek(off + header_len)
        f.write(forged.bitset())
    # the file now claims the victim is absent from row group rg, while the row is still there
    with pqbloom.ParquetFile(str(path)) as pf:
        assert not pf.bloom_filter(rg, column).might_contain(victim, ptype)
        assert victim in pf.read_row_group(rg, columns=[column]).column(column).to_pylist()
    return victim


def write_tampered_file(path, placement: str = "after_row_group", n: int = 20_000, rg: int = 1):
    """A pqbloom file (4 row groups, int64 even ``id`` in random order, ``email``) whose ``id`` filter in
    row group ``rg`` omits one present value. Returns (victim id, number of rows)."""
    rng = np.random.default_rng(99)
    ids = rng.permutation(np.arange(0, 2 * n, 2, dtype=np.int64))
    emails = [f"u{x:08x}@example.com" for x in rng.permutation(n)]
    pqbloom.write_table({"id": ids, "email": emails}, str(path), row_group_size=n // 4,
                        bloom_filter_options={"id": True, "email": True}, use_dictionary=False,
                        bloom_filter_position=placement)
    chunk = ids[rg * (n // 4):(rg + 1) * (n // 4)]
    mid = (int(chunk.min()) + int(chunk.max())) // 2
    candidates = sorted(chunk.tolist(), key=lambda v: abs(v - mid))  # well inside min/max of every page
    victim = forge_bloom_filter(path, rg, "id", candidates, PT.INT64)
    return int(victim), n


# ---------------------------------------------------------------------------
# DuckDB
# ---------------------------------------------------------------------------

def _probe_table(n: int = 8000):
    rng = np.random.default_rng(5)
    perm = rng.permutation(n)
    return {
        "i64": (perm.astype(np.int64) * 2 + 10**12),
        "i32": (perm.astype(np.int32) * 2 - 5000),
        "f64": perm.astype(np.float64) + 0.5,
        "s": np.array([f"k{x:07d}" for x in perm]),
    }


def _absent(col: str, k: np.ndarray):
    if col == "i64":
        return [int(x) * 2 + 1 + 10**12 for x in k]
    if col == "i32":
        return [int(x) * 2 + 1 - 5000 for x in k]
    if col == "f64":
        return [float(x) + 0.25 for x in k]
    return [f"k{int(x):07d}-" for x in k]  # sorts inside min/max


def _py(v):
    return v.item() if isinstance(v, np.generic) else v


@pytest.fixture(scope="module", params=PLACEMENTS)
def probe_file(request, tmp_path_factory):
    data = _probe_table()
    path = tmp_path_factory.mktemp("probe") / f"probe_{request.param}.parquet"
    pqbloom.write_table(data, str(path), row_group_size=2000, bloom_filter_position=request.param,
                        bloom_filter_options={c: True for c in data})
    return path, data


@pytest.mark.parametrize("col", ["i64", "i32", "f64", "s"])
def test_duckdb_probe_finds_every_inserted_value(probe_file, col):
    path, data = probe_file
    con = duckdb.connect()
    values = data[col]
    rg_size = 2000
    num_rg = len(values) // rg_size
    rng = np.random.default_rng(len(col))
    # present values: DuckDB must never exclude the row group that holds them
    for i in rng.choice(len(values), 150, replace=False).tolist():
        v = _py(values[i])
        rows = con.execute("SELECT row_group_id, bloom_filter_excludes FROM parquet_bloom_probe(?, ?, ?)",
                           [str(path), col, v]).fetchall()
        assert len(rows) == num_rg
        verdict = dict(rows)
        assert verdict[i // rg_size] is False, f"DuckDB excludes present {col}={v!r} from row group {i // rg_size}"
    # absent values: DuckDB (reading our bitset) excludes the vast majority
    excluded = total = 0
    for v in _absent(col, rng.integers(0, len(values), 100)):
        rows = con.execute("SELECT bloom_filter_excludes FROM parquet_bloom_probe(?, ?, ?)",
                           [str(path), col, v]).fetchall()
        excluded += sum(bool(r[0]) for r in rows)
        total += len(rows)
    assert excluded >= 0.95 * total, f"DuckDB excluded only {excluded}/{total} absent probes"
    # and agrees with our reader one to one
    with pqbloom.ParquetFile(str(path)) as pf:
        ptype = pf.column_descriptor(col).physical_type
        for v in _absent(col, range(20)):
            ours = [not pf.bloom_filter(r, col).might_contain(v, ptype) for r in range(num_rg)]
            theirs = [bool(x[0]) for x in con.execute(
                "SELECT bloom_filter_excludes FROM parquet_bloom_probe(?, ?, ?) ORDER BY row_group_id",
                [str(path), col, v]).fetchall()]
            assert ours == theirs


@pytest.mark.parametrize("placement", PLACEMENTS)
def test_duckdb_prunes_with_a_deliberately_wrong_filter(tmp_path, placement):
    path = tmp_path / "tampered.parquet"
    victim, n = write_tampered_file(path, placement)
    con = duckdb.connect()
    # the row is in the data: an aggregate FILTER (not pushed into the scan) finds it
    full = f"SELECT count(*) FILTER (WHERE id = ?), count(*) FROM read_parquet('{path}')"
    assert con.execute(full, [victim]).fetchone() == (1, n)
    # DuckDB trusted our (wrong) filter and skipped the row group
    assert con.execute(f"SELECT count(*) FROM read_parquet('{path}') WHERE id = ?", [victim]).fetchone()[0] == 0
    excl = dict(con.execute("SELECT row_group_id, bloom_filter_excludes FROM parquet_bloom_probe(?, 'id', ?)",
                            [str(path), victim]).fetchall())
    assert excl[1] is True
    # an untouched present value in the same row group is still found through the filter
    other = pqbloom.read_table(str(path)).column("id").to_pylist()[n // 4 + 7]
    assert con.execute(f"SELECT count(*) FROM read_parquet('{path}') WHERE id = ?", [other]).fetchone()[0] == 1


# ---------------------------------------------------------------------------
# pyarrow
# ---------------------------------------------------------------------------

@pytest.mark.parametrize("placement", PLACEMENTS)
def test_pyarrow_sees_our_bloom_filter_offsets_and_reads_data(tmp_path, placement):
    rng = np.random.default_rng(3)
    n = 12_000
    data = {
        "id": rng.permutation(n).astype(np.int64),
        "i32": rng.integers(-1000, 1000, n).astype(np.int32),
        "s": [f"name-{x}" for x in rng.integers(0, 3000, n)],
        "d": rng.normal(size=n),
    }
    path = tmp_path / "f.parquet"
    pqbloom.write_table(data, str(path), row_group_size=3000, bloom_filter_position=placement,
                        bloom_filter_options={"id": True, "s": {"fpp": 0.05}, "i32": True})
    with pqbloom.ParquetFile(str(path)) as pf:
        ours = pf.thrift_metadata
    pmd = pq.ParquetFile(path).metadata
    assert pmd.num_row_groups == 4
    size = path.stat().st_size
    data_ends = []
    for rg in range(pmd.num_row_groups):
        for j in range(pmd.num_columns):
            pc = pmd.row_group(rg).column(j)
            m = ours.row_groups[rg].columns[j].meta_data
            assert pc.bloom_filter_offset == m.bloom_filter_offset
            assert pc.bloom_filter_length == m.bloom_filter_length
            if pc.path_in_schema == "d":
                assert pc.bloom_filter_offset is None
                continue
            assert pc.bloom_filter_offset is not None and 4 <= pc.bloom_filter_offset < size
            bf = pqbloom.ParquetFile(str(path)).bloom_filter(rg, pc.path_in_schema)
            assert pc.bloom_filter_length == len(bf.header_bytes()) + bf.num_bytes
        last = pmd.row_group(rg).column(pmd.num_columns - 1)
        data_ends.append(last.data_page_offset + last.total_compressed_size)
    first_filter = min(pmd.row_group(r).column(j).bloom_filter_offset for r in range(4) for j in range(3))
    if placement == "end":
        assert first_filter >= data_ends[-1]
    else:
        for rg in range(3):
            nxt = pmd.row_group(rg + 1).column(0)
            nxt_start = nxt.dictionary_page_offset or nxt.data_page_offset
            for j in range(3):
                off = pmd.row_group(rg).column(j).bloom_filter_offset
                assert data_ends[rg] <= off < nxt_start
    got = pq.read_table(path)
    assert got.column("id").to_pylist() == data["id"].tolist()
    assert got.column("i32").to_pylist() == data["i32"].tolist()
    assert got.column("s").to_pylist() == data["s"]
    assert got.column("d").to_pylist() == data["d"].tolist()


def test_pqbloom_reads_pyarrow_bloom_filters_byte_identical(tmp_path):
    rng = np.random.default_rng(8)
    n = 20_000
    t = pa.table({
        "id": rng.permutation(n).astype(np.int64) * 3,
        "i32": rng.permutation(n).astype(np.int32) - 7000,
        "f64": rng.normal(size=n),
        "s": [f"user-{x}@example.org" for x in rng.permutation(n)],
    })
    opts = {"id": {"ndv": 5000, "fpp": 0.01}, "i32": True, "f64": {"ndv": 5000, "fpp": 0.05}, "s": True}
    pa_path, pb_path = tmp_path / "pa.parquet", tmp_path / "pb.parquet"
    pq.write_table(t, pa_path, row_group_size=5000, bloom_filter_options=opts)
    pqbloom.write_table(t, str(pb_path), row_group_size=5000, bloom_filter_options=opts)
    ptypes = {"id": PT.INT64, "i32": PT.INT32, "f64": PT.DOUBLE, "s": PT.BYTE_ARRAY}
    with pqbloom.ParquetFile(str(pa_path)) as theirs, pqbloom.ParquetFile(str(pb_path)) as ours:
        assert theirs.num_row_groups == 4
        for rg in range(4):
            chunk = t.slice(rg * 5000, 5000)
            for col, ptype in ptypes.items():
                values = chunk.column(col).to_pylist() if col == "s" else chunk.column(col).to_numpy()
                bf = theirs.bloom_filter(rg, col)
                assert bf is not None
                assert bf.might_contain_many(values, ptype).all()
                assert all(bf.might_contain(_py(v), ptype) for v in values[:50])
                # rebuilding the same values into a filter of the same size gives pyarrow's exact bytes
                mine = BloomFilter(bf.num_bytes)
                mine.insert(values, ptype)
                assert mine.bitset() == bf.bitset(), f"bitset differs from pyarrow's for {col} rg {rg}"
                # and pqbloom's writer, given the same options, stores the same filter
                ob = ours.bloom_filter(rg, col)
                assert ob.num_bytes == bf.num_bytes and ob.bitset() == bf.bitset()
                meta_pa = chunk_meta(pa_path, rg, col)
                assert meta_pa.bloom_filter_length == len(bf.header_bytes()) + bf.num_bytes


# ---------------------------------------------------------------------------
# parquet-mr fixtures
# ---------------------------------------------------------------------------

def test_parquet_mr_fixture_bloom_filters(fixtures_dir):
    files = sorted((fixtures_dir / "data").glob("data_index_bloom_encoding_*.parquet"))
    names = [f.name for f in files]
    assert "data_index_bloom_encoding_stats.parquet" in names
    for path in files:
        pf_arrow = pq.ParquetFile(path)
        md = pf_arrow.metadata
        with pqbloom.ParquetFile(str(path)) as pf:
            checked = 0
            for rg in range(md.num_row_groups):
                values = pf_arrow.read_row_group(rg).column("String").to_pylist()
                meta = chunk_meta(path, rg, "String")
                if path.name == "data_index_bloom_encoding_stats.parquet":
                    assert meta.bloom_filter_length is None  # header must be decoded to learn the size
                    # parquet-mr placed it after the page indexes
                    cc = pqbloom.read_metadata(str(path)).row_group(rg).column(0)
                    assert meta.bloom_filter_offset > cc.offset_index_offset > cc.column_index_offset
                bf = pf.bloom_filter(rg, "String")
                assert bf is not None
                for v in values:
                    assert bf.might_contain(v, PT.BYTE_ARRAY), f"{path.name}: {v!r} not in its filter"
                assert bf.might_contain_many(values, PT.BYTE_ARRAY).all()
                absent = [f"not-there-{i}" for i in range(1000)]
                assert bf.might_contain_many(absent, PT.BYTE_ARRAY).mean() < 0.05
                checked += len(values)
            assert checked == md.num_rows > 0


# ---------------------------------------------------------------------------
# CLI
# ---------------------------------------------------------------------------

def test_cli_probe_reports_each_row_group(tmp_path):
    path = tmp_path / "cli.parquet"
    ids = np.arange(4000, dtype=np.int64) * 2  # sorted: row group r holds [2000r, 2000r + 1998]
    emails = [f"e{i}@x.org" for i in range(4000)]
    pqbloom.write_table({"id": ids, "email": emails, "nofilter": ids}, str(path), row_group_size=1000,
                        bloom_filter_options={"id": True, "email": True})
    with pqbloom.ParquetFile(str(path)) as pf:
        filters = [pf.bloom_filter(r, "id") for r in range(4)]
    absent = next(v for v in range(1, 10**6, 2) if not any(f.might_contain(v, PT.INT64) for f in filters))
    present = [10, 4002]  # row groups 0 and 2

    def run(*args):
        proc = subprocess.run([sys.executable, "-m", "pqbloom.cli", "probe", str(path), *args],
                              capture_output=True, text=True, timeout=120)
        assert proc.returncode == 0, proc.stderr
        return proc.stdout.splitlines()

    lines = run("id", *map(str, present + [absent]))
    expected = []
    for r in range(4):
        for v in present + [absent]:
            if v == absent:
                verdict = "absent"
            elif v // 2000 == r:
                verdict = "may be present"
            else:
                verdict = "may be present" if filters[r].might_contain(v, PT.INT64) else "absent"
            expected.append(f"row group {r}: id = {v!r}: {verdict}")
    assert lines == expected
    assert sum("absent" in ln for ln in lines) >= 9  # the other row groups really do say "absent"

    lines = run("email", "e5@x.org", "nobody@x.org")
    assert lines[0] == "row group 0: email = 'e5@x.org': may be present"
    assert sum(ln.endswith("'e5@x.org': may be present") for ln in lines) >= 1
    lines = run("nofilter", "10")
    assert lines == [f"row group {r}: nofilter = 10: no Bloom filter" for r in range(4)]


# ---------------------------------------------------------------------------
# False-positive rate
# ---------------------------------------------------------------------------

@pytest.mark.parametrize("options", [{"fpp": 0.01}, {"fpp": 0.05, "ndv": 50_000}, {"fpp": 0.001}])
def test_measured_false_positive_rate(tmp_path, options):
    n = 100_000
    rng = np.random.default_rng(17)
    ids = rng.permutation(n).astype(np.int64) * 2  # even
    path = tmp_path / "fpp.parquet"
    pqbloom.write_table({"id": ids}, str(path), bloom_filter_options={"id": options})
    with pqbloom.ParquetFile(str(path)) as pf:
        assert pf.num_row_groups == 1
        bf = pf.bloom_filter(0, "id")
    assert bf.num_bytes == optimal_num_bytes(options.get("ndv", n), options["fpp"])
    assert bf.might_contain_many(ids, PT.INT64).all()
    probes = rng.integers(0, 2**62, 1_000_000, dtype=np.int64) | 1  # odd, hence absent
    measured = float(bf.might_contain_many(probes, PT.INT64).mean())
    theory = theoretical_fpp(n, bf.num_bytes)
    sigma = math.sqrt(theory * (1 - theory) / len(probes))
    bits_per_value = bf.num_bytes * 8 / n
    assert abs(measured - theory) <= max(5 * sigma, 0.05 * theory), (
        f"measured FPP {measured:.5f} vs theoretical {theory:.5f} at {bits_per_value:.1f} bits/value")
    assert abs(bf.estimated_fpp() - theory) <= 0.05 * theory
    if options.get("ndv", n) >= n:  # the sizing rule delivered at least the requested rate
        assert measured <= options["fpp"] * 1.05
