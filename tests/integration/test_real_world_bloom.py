"""Every Bloom filter in the real-world corpus holds every value its chunk holds (issue #15).

For every file of ``../shared/fixtures/real-world`` whose footer gives a column chunk a
``bloom_filter_offset``, and every such chunk: the values come from pyarrow's reading of that row
group (never pqbloom's reader), converted to the physical domain the filter hashes (PLAIN bytes:
integers little-endian at their stored width, dates and timestamps as their stored integers,
decimals as their unscaled big-endian bytes, UUIDs as 16 bytes...). All of them are hashed at once
and checked against the bitset pqbloom reads, with an independent numpy version of the spec's
``filter_check`` and with pqbloom's vectorized check; a sample also goes through the single-block
probe (``ParquetFile.bloom_filter_might_contain``) and is re-hashed with the ``xxhash`` package.
None may test absent.

A filter that breaks the rule of :mod:`pqbloom.file.bloom_site` (header disagreeing with the footer,
unknown algorithm, size not a power of two, placement) must raise
:class:`~pqbloom.errors.BloomFilterError` from the probe API instead, and a filtered read for a
present value must return exactly pyarrow's rows. ``INCONSISTENT`` lists those files, with why.

Footers that cannot be read without keys (the encrypted-footer files) cannot show their filters
and are not scanned; the plaintext-footer encrypted file has no filter.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq
import xxhash

import pqbloom
from pqbloom.arrays import BinaryArray
from pqbloom.bloom import hash_values
from pqbloom.errors import BloomFilterError, CryptoError, ParquetError
from pqbloom.format import T
from tests.corpora import require
from tests.paths import REAL_WORLD as REAL

#: files whose filters pqbloom must refuse (BloomFilterError), with the number of such chunks and why
INCONSISTENT = {
    "duckdb-duckdb/data/parquet-testing/bloom_filter_short_numbytes.parquet":
        (1, "header numBytes 256, but bloom_filter_length is 16 + 512"),
    "duckdb-duckdb/data/parquet-testing/bloom_filter_bad_numbytes.parquet":
        (30, "DuckDB's test of damaged headers: numBytes 10000, 0 or missing, unknown or missing unions, "
             "undecodable"),
    "duckdb-duckdb/data/parquet-testing/bloom_filter_bad_length_range.parquet":
        (30, "as bad_numbytes, and a bloom_filter_length of 10000 that runs past the file"),
}
#: files with a (consistent) filter whose values no peer can read: the filter is loaded and checked for
#: consistency, its values cannot be probed
UNREADABLE_VALUES = {
    "duckdb-duckdb/data/parquet-testing/rle_malicious_bitwidth.parquet":
        "dictionary indices with RLE bit width 63: pyarrow, DuckDB and pqbloom all refuse the data",
}
#: files the MANIFEST names as holding Bloom filters: discovery must find them
MANIFEST_EXAMPLES = [
    "duckdb-duckdb/data/parquet-testing/issue6990.parquet",
    "duckdb-duckdb/data/parquet-testing/uuid_v2.parquet",
    "duckdb-duckdb/data/parquet-testing/multi_bloom_a.parquet",
    "duckdb-duckdb/data/parquet-testing/multi_bloom_b.parquet",
    "duckdb-duckdb/data/parquet-testing/multi_bloom_c.parquet",
    "aloneguid-parquet-dotnet/src/Parquet.Test/data/641_rle_pagesize_oob.parquet",
    *INCONSISTENT,
]
#: surely-absent probes per consistent chunk (the sanity check that filters are used at all)
ABSENT_PROBES = 64
#: values per chunk also sent through the single-block probe and re-hashed with ``xxhash``
SCALAR_SAMPLE = 16
#: filtered reads per consistent file (the inconsistent files get one per filtered column)
READS_PER_CONSISTENT_FILE = 3
#: the spec's salt (bloom-filter-spec.md), written out again so the check below is independent
SALT = np.array([0x47B6137B, 0x44974D91, 0x8824AD5B, 0xA2B7289D, 0x705495C7, 0x2DF1424B, 0x9EFC4947, 0x5C6BFB31],
                dtype=np.uint32)


# ---------------------------------------------------------------------------
# Discovery
# ---------------------------------------------------------------------------

def _bloom_chunks_pqbloom(path: Path) -> list[tuple[int, int]]:
    with pqbloom.ParquetFile(path) as pf:
        return [(i, j) for i, rg in enumerate(pf.thrift_metadata.row_groups or []) for j, cc in enumerate(rg.columns or [])
                if cc.meta_data is not None and cc.meta_data.bloom_filter_offset is not None]


def _bloom_chunks_pyarrow(path: Path) -> list[tuple[int, int]]:
    try:
        md = pq.ParquetFile(path).metadata
        return [(i, j) for i in range(md.num_row_groups) for j in range(md.row_group(i).num_columns)
                if md.row_group(i).column(j).bloom_filter_offset is not None]
    except Exception:  # noqa: BLE001 - a footer pyarrow cannot read shows no filter either
        return []


@functools.lru_cache(maxsize=1)
def discover() -> dict[str, list[tuple[int, int]]]:
    """{relative path: [(row group, leaf column)]} of every chunk with a Bloom filter."""
    require(REAL)  # absent: skipped naming it (failed in CI: tests/corpora.py)
    out = {}
    for path in sorted(REAL.rglob("*")):
        if not path.is_file() or path.suffix in (".md", ".tsv"):
            continue
        try:
            chunks = _bloom_chunks_pqbloom(path)
        except CryptoError:
            continue  # encrypted footer, no keys: nobody can see its filters
        except ParquetError:
            # a footer pqbloom refuses: ask pyarrow (never for encrypted files: pyarrow may abort on them)
            chunks = _bloom_chunks_pyarrow(path)
        if chunks:
            out[str(path.relative_to(REAL))] = chunks
    return out


# ---------------------------------------------------------------------------
# pyarrow's values in the physical domain
# ---------------------------------------------------------------------------

def leaf_values(arr: pa.Array | pa.ChunkedArray, leaf_name: str, *, nulls: bool = False) -> pa.Array:
    """The values of the one leaf a single-leaf pyarrow read returns (structs, lists, maps unwrapped);
    nulls dropped unless ``nulls`` (then the result is row-aligned, which needs no lists on the path)."""
    a = arr.combine_chunks() if isinstance(arr, pa.ChunkedArray) else arr
    while True:
        t = a.type
        if isinstance(t, pa.BaseExtensionType):
            a = a.storage
        elif pa.types.is_dictionary(t):
            a = a.dictionary_decode()
        elif pa.types.is_struct(t):
            assert t.num_fields == 1, t
            a = a.flatten()[0]  # children with the parent's nulls merged in
        elif pa.types.is_map(t):
            a = a.keys if leaf_name == t.key_field.name else a.items
        elif pa.types.is_list(t) or pa.types.is_large_list(t) or pa.types.is_fixed_size_list(t):
            assert not nulls, t
            a = a.flatten()
        else:
            return a if nulls else a.drop_null()


def _buffer(a: pa.Array, i: int, dtype: Any) -> np.ndarray:
    return np.frombuffer(a.buffers()[i], dtype=dtype)


def physical(a: pa.Array, ptype: int, width: int | None) -> Any:
    """pyarrow values as pqbloom's hash_values takes them for physical type ``ptype``."""
    a = pa.concat_arrays([a]) if a.offset else a  # buffers from offset 0
    n, t = len(a), a.type
    if ptype in (T.Type.INT32, T.Type.INT64):
        target = np.dtype("<i4") if ptype == T.Type.INT32 else np.dtype("<i8")
        if pa.types.is_decimal(t):  # unscaled value: the low 8 bytes of the little-endian 128/256-bit integer
            words = t.byte_width // 8
            return _buffer(a, 1, "<i8").reshape(-1, words)[:n, 0].astype(target)
        if pa.types.is_integer(t):
            v = a.to_numpy(zero_copy_only=False)
            if v.dtype.kind == "u" and v.dtype.itemsize == target.itemsize:
                return v.view(target)  # UINT_32/UINT_64: the same bits
            return v.astype(target)
        if pa.types.is_temporal(t):
            return pc.cast(a, pa.int32() if ptype == T.Type.INT32 else pa.int64()).to_numpy(zero_copy_only=False)
    if ptype == T.Type.FLOAT and pa.types.is_float32(t):
        return a.to_numpy(zero_copy_only=False)
    if ptype == T.Type.DOUBLE and pa.types.is_float64(t):
        return a.to_numpy(zero_copy_only=False)
    if ptype == T.Type.BYTE_ARRAY and (pa.types.is_binary(t) or pa.types.is_string(t) or
                                       pa.types.is_large_binary(t) or pa.types.is_large_string(t)):
        large = pa.types.is_large_binary(t) or pa.types.is_large_string(t)
        offsets = _buffer(a, 1, "<i8" if large else "<i4")[:n + 1].astype(np.int64)
        data = _buffer(a, 2, np.uint8) if a.buffers()[2] is not None else np.zeros(0, np.uint8)
        return BinaryArray(offsets - offsets[0], data[offsets[0]:offsets[-1]])
    if ptype == T.Type.FIXED_LEN_BYTE_ARRAY:
        assert width is not None
        if pa.types.is_fixed_size_binary(t) and t.byte_width == width:
            return _buffer(a, 1, np.uint8)[:n * width].reshape(n, width)
        if pa.types.is_float16(t) and width == 2:
            return _buffer(a, 1, np.uint8)[:2 * n].reshape(n, 2)
        if pa.types.is_decimal(t) and width <= t.byte_width:
            # two's complement, little-endian in Arrow, big-endian in Parquet (the low ``width`` bytes)
            le = _buffer(a, 1, np.uint8).reshape(-1, t.byte_width)[:n]
            return np.ascontiguousarray(le[:, ::-1][:, t.byte_width - width:])
    raise AssertionError(f"no conversion from pyarrow {t} to {T.Type._VALUES_TO_NAMES.get(ptype, ptype)}[{width}]: "
                         "add one so this chunk's filter is probed")


def plain_bytes(values: Any, ptype: int, i: int) -> bytes:
    """The PLAIN encoding of value ``i`` (what the filter hashes), built without pqbloom."""
    if isinstance(values, BinaryArray):
        return values.data[values.offsets[i]:values.offsets[i + 1]].tobytes()
    v = np.asarray(values)
    return v[i].tobytes() if v.ndim == 2 else v[i:i + 1].astype(v.dtype.newbyteorder("<")).tobytes()


def scalar(values: Any, ptype: int, i: int) -> Any:
    """Value ``i`` in the domain ``ParquetFile.bloom_filter_might_contain`` takes."""
    if ptype in (T.Type.INT32, T.Type.INT64):
        return int(values[i])
    if ptype in (T.Type.FLOAT, T.Type.DOUBLE):
        return float(values[i])
    return plain_bytes(values, ptype, i)


def absent_candidates(values: Any, ptype: int, width: int | None, k: int) -> Any:
    """``k`` values of the chunk's physical type that the chunk surely does not hold (deterministic)."""
    rng = np.random.default_rng(20_150)
    if ptype in (T.Type.INT32, T.Type.INT64):
        dt = np.int32 if ptype == T.Type.INT32 else np.int64
        cand = rng.integers(np.iinfo(dt).min, np.iinfo(dt).max, 4 * k, dtype=dt)
        return cand[~np.isin(cand, np.asarray(values))][:k]
    if ptype in (T.Type.FLOAT, T.Type.DOUBLE):
        dt = np.float32 if ptype == T.Type.FLOAT else np.float64
        cand = (rng.random(4 * k) * 1e9 + 0.123).astype(dt)
        return cand[~np.isin(cand, np.asarray(values))][:k]
    if ptype == T.Type.BYTE_ARRAY:
        held = {plain_bytes(values, ptype, i) for i in range(len(values))}
        cand = [f"pqbloom surely absent {j} {rng.integers(1 << 62)}".encode() for j in range(4 * k)]
        return BinaryArray.from_pylist([c for c in cand if c not in held][:k])
    assert width is not None
    m = np.asarray(values)
    cand = rng.integers(0, 256, (4 * k, width), dtype=np.uint8)
    held_rows = {r.tobytes() for r in m}
    return cand[[r.tobytes() not in held_rows for r in cand]][:k]


def spec_check(bitset: bytes, hashes: np.ndarray) -> np.ndarray:
    """The spec's filter_check for many hashes: block ((h >> 32) * z) >> 32, then eight salted bits."""
    words = np.frombuffer(bitset, dtype="<u4").reshape(-1, 8)
    out = np.empty(len(hashes), bool)
    for s in range(0, len(hashes), 1 << 16):
        h = hashes[s:s + (1 << 16)].astype(np.uint64)
        block = ((h >> np.uint64(32)) * np.uint64(len(words))) >> np.uint64(32)
        low = (h & np.uint64(0xFFFFFFFF)).astype(np.uint32)
        bit = (low[:, None] * SALT[None, :]) >> np.uint32(27)  # uint32 products wrap, as in the spec
        out[s:s + len(h)] = ((words[block.astype(np.intp)] >> bit) & np.uint32(1)).all(axis=1)
    return out


# ---------------------------------------------------------------------------
# The scan
# ---------------------------------------------------------------------------

@dataclass
class Scan:
    files: int = 0
    chunks: int = 0
    consistent_chunks: int = 0
    values_probed: int = 0
    scalar_probes: int = 0
    absent_probes: int = 0
    absent_hits: int = 0  # surely-absent probes the filters ruled out
    unreadable_values: int = 0  # chunks of UNREADABLE_VALUES
    filtered_reads: int = 0
    inconsistent: dict[str, int] = field(default_factory=dict)
    failures: list[str] = field(default_factory=list)

    def summary(self) -> str:
        return (f"real-world Bloom filters: {self.files} files, {self.chunks} chunks "
                f"({self.consistent_chunks} consistent, {sum(self.inconsistent.values())} refused in "
                f"{len(self.inconsistent)} files), {self.values_probed:,} values probed (none absent), "
                f"{self.scalar_probes} single-block probes, {self.unreadable_values} chunks whose values no peer reads, {self.absent_hits}/{self.absent_probes} surely-absent "
                f"probes ruled out, {self.filtered_reads} filtered reads equal to pyarrow")


def _check_chunk(scan: Scan, rel: str, pf: pqbloom.ParquetFile, pa_file: pq.ParquetFile, rg: int, j: int) -> Any:
    """Probe one chunk; return (values, physical type) for the filtered-read check."""
    desc = pf.columns[j]
    ptype, width = desc.physical_type, desc.type_length
    where = f"{rel} row group {rg} column {desc.dotted_path!r}"
    if rel in UNREADABLE_VALUES:
        assert pf.bloom_filter(rg, j) is not None, where  # consistent, so loaded
        try:
            pa_file.read_row_group(rg)
            scan.failures.append(f"{where}: listed in UNREADABLE_VALUES, but pyarrow now reads it: probe its values")
        except Exception:  # noqa: BLE001, S110 - pyarrow's OSError: the listed reason still holds
            pass
        scan.unreadable_values += 1
        return None
    leaf = leaf_values(pa_file.reader.read_row_group(rg, column_indices=[j]).column(0), desc.path[-1])
    values = physical(leaf, ptype, width)
    try:
        bf = pf.bloom_filter(rg, j)
    except BloomFilterError as exc:
        scan.inconsistent[rel] = scan.inconsistent.get(rel, 0) + 1
        if rel not in INCONSISTENT:
            scan.failures.append(f"{where}: refused ({exc}), but the file is not listed in INCONSISTENT")
        try:
            probe = scalar(values, ptype, 0) if len(values) else (0 if ptype in (T.Type.INT32, T.Type.INT64) else b"")
            verdict = pf.bloom_filter_might_contain(rg, j, probe)
            scan.failures.append(f"{where}: bloom_filter refused the filter, the single-block probe said {verdict}")
        except BloomFilterError:
            pass
        return values
    assert bf is not None, where
    scan.consistent_chunks += 1
    if rel in INCONSISTENT:
        scan.failures.append(f"{where}: accepted, but INCONSISTENT lists the file")
    hashes = hash_values(values, ptype, width)
    ours, spec = bf.check_hashes(hashes), spec_check(bf.bitset(), hashes)
    scan.values_probed += len(hashes)
    if not (spec.all() and np.array_equal(ours, spec)):
        scan.failures.append(f"{where}: {int((~spec).sum())} of {len(hashes)} present values test absent "
                             f"(pqbloom's check: {int((~ours).sum())})")
    for i in np.linspace(0, len(hashes) - 1, min(SCALAR_SAMPLE, len(hashes))).astype(int).tolist():
        if int(hashes[i]) != xxhash.xxh64_intdigest(plain_bytes(values, ptype, i)):
            scan.failures.append(f"{where}: value {i} hashes differently from xxhash over its PLAIN bytes")
        if pf.bloom_filter_might_contain(rg, j, scalar(values, ptype, i)) is not True:
            scan.failures.append(f"{where}: the single-block probe calls value {i} absent")
        scan.scalar_probes += 1
    cand = absent_candidates(values, ptype, width, ABSENT_PROBES)
    ruled_out = int((~spec_check(bf.bitset(), hash_values(cand, ptype, width))).sum())
    scan.absent_probes += len(cand)
    scan.absent_hits += ruled_out
    if len(cand) and ruled_out == 0 and bf.estimated_fpp() < 0.5:
        scan.failures.append(f"{where}: none of {len(cand)} surely-absent values tests absent "
                             f"(estimated fpp {bf.estimated_fpp():.3g})")
    return values


def _rows(table: pa.Table) -> list[dict[str, Any]]:
    """Rows as Python values, extension columns (arrow.uuid...) as their storage: the comparison is about
    which rows come back, not about extension types (issue #15, defect 11, is about those)."""
    cols = [c.combine_chunks() for c in table.columns]
    cols = [c.storage if isinstance(c.type, pa.BaseExtensionType) else c for c in cols]
    return pa.table(cols, names=table.column_names).to_pylist()


def _check_filtered_read(scan: Scan, rel: str, path: Path, pf: pqbloom.ParquetFile, j: int) -> None:
    """A filtered read for a present value of leaf ``j`` returns exactly pyarrow's rows."""
    desc = pf.columns[j]
    table = pq.read_table(path)
    leaf = leaf_values(pq.ParquetFile(path).reader.read_all(column_indices=[j]).column(0), desc.path[-1], nulls=True)
    present = leaf.drop_null()
    if pa.types.is_floating(present.type):
        present = present.filter(pc.invert(pc.is_nan(present)))
    if len(present) == 0:
        return
    for pick in sorted({0, len(present) // 2}):
        value = present[pick]
        mask = pc.fill_null(pc.equal(leaf, value), False)
        want = table.filter(mask)
        got = pqbloom.read_table(path, filters=pqbloom.field(desc.dotted_path) == value.as_py())
        scan.filtered_reads += 1
        if got.num_rows != want.num_rows or _rows(got.to_arrow()) != _rows(want):
            scan.failures.append(f"{rel}: filter {desc.dotted_path} == {value.as_py()!r} returns {got.num_rows} "
                                 f"rows, pyarrow {want.num_rows}")


@functools.lru_cache(maxsize=1)
def scan_corpus() -> Scan:
    scan = Scan()
    for rel, chunks in discover().items():
        path = REAL / rel
        scan.files += 1
        scan.chunks += len(chunks)
        pa_file = pq.ParquetFile(path)
        with pqbloom.ParquetFile(path) as pf:
            for rg, j in chunks:
                try:
                    _check_chunk(scan, rel, pf, pa_file, rg, j)
                except Exception as exc:  # noqa: BLE001 - collect every chunk's failure, report them together
                    scan.failures.append(f"{rel} row group {rg} column {j}: {type(exc).__name__}: {exc}")
            columns = sorted({j for _, j in chunks if pf.columns[j].max_repetition_level == 0})
            if rel in UNREADABLE_VALUES:
                columns = []
            elif rel not in INCONSISTENT:
                columns = columns[:READS_PER_CONSISTENT_FILE]
            for j in columns:
                try:
                    _check_filtered_read(scan, rel, path, pf, j)
                except Exception as exc:  # noqa: BLE001
                    scan.failures.append(f"{rel} filtered read on column {j}: {type(exc).__name__}: {exc}")
    return scan


# ---------------------------------------------------------------------------
# Tests
# ---------------------------------------------------------------------------

def test_discovery_finds_the_files_with_bloom_filters():
    found = discover()
    missing = [f for f in MANIFEST_EXAMPLES if f not in found]
    assert not missing, missing
    assert len(found) >= 14 and sum(map(len, found.values())) >= 480, {k: len(v) for k, v in found.items()}


def test_no_present_value_tests_absent():
    scan = scan_corpus()
    print(scan.summary())
    assert not scan.failures, scan.summary() + "\n" + "\n".join(scan.failures[:50])
    assert scan.values_probed >= 100_000 and scan.consistent_chunks >= 400, scan.summary()


def test_inconsistent_filters_are_refused_and_filtered_reads_stay_right():
    scan = scan_corpus()
    assert scan.inconsistent == {rel: n for rel, (n, _) in INCONSISTENT.items()}, scan.summary()
    assert not scan.failures, "\n".join(scan.failures[:50])
    assert scan.filtered_reads >= 2 * 7, scan.summary()


def test_filters_are_used_at_all():
    """Deterministic surely-absent probes: each consistent chunk rules out at least one (checked per chunk
    in the scan), and most overall."""
    scan = scan_corpus()
    assert scan.absent_probes >= 64 * 400 and scan.absent_hits > 0.8 * scan.absent_probes, scan.summary()
