"""pqbloom's metadata objects against pyarrow's reading of the same footers (files written by pyarrow,
DuckDB and the real-world corpus), and encrypted footers from the parquet-testing corpus."""

from __future__ import annotations

import datetime as dt
import decimal
import uuid
from pathlib import Path

import duckdb
import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import pqbloom
from pqbloom.errors import KeyNotFoundError
from tests.conftest import K16
from tests.corpora import needs
from tests.integration.real_world_support import CORPUS, corpus_files
from tests.paths import FIXTURES_DATA


def _compare(path: Path, *, stats: bool = True) -> int:
    """Compare every field both libraries expose; the number of column chunks compared."""
    ours = pqbloom.read_metadata(str(path))
    theirs = pq.read_metadata(path)
    # pqbloom counts the row groups' rows (some writers leave FileMetaData.num_rows wrong)
    assert ours.num_rows == sum(theirs.row_group(i).num_rows for i in range(theirs.num_row_groups))
    assert ours.num_row_groups == theirs.num_row_groups
    assert ours.num_columns == theirs.num_columns
    assert (ours.created_by or "") == theirs.created_by  # pyarrow shows a missing one as ""
    assert ours.format_version == theirs.format_version  # "1.0" or "2.6", as pyarrow names them
    assert ours.serialized_size == theirs.serialized_size
    # the Parquet schema as pyarrow shows it: every leaf's name, path, levels, types and converted type
    assert len(ours.schema) == len(theirs.schema)
    for i in range(len(theirs.schema)):
        assert str(ours.schema.column(i)) == str(theirs.schema.column(i)), (path, i)
        assert ours.schema.column(i).logical_type.to_json() == theirs.schema.column(i).logical_type.to_json()
    kv = {k.decode(): v.decode() for k, v in (theirs.metadata or {}).items()}
    # a key without a value is None in pqbloom, "" in pyarrow
    assert {k: "" if v is None else v for k, v in ours.key_value_metadata.items()} == kv
    assert ours.metadata == theirs.metadata
    chunks = 0
    for i in range(theirs.num_row_groups):
        rg, prg = ours.row_group(i), theirs.row_group(i)
        assert (rg.num_rows, rg.num_columns, rg.total_byte_size) == (prg.num_rows, prg.num_columns, prg.total_byte_size)
        assert [(sc.column_index, sc.descending, sc.nulls_first) for sc in rg.sorting_columns] == \
            [(sc.column_index, sc.descending, sc.nulls_first) for sc in prg.sorting_columns or ()]
        for j in range(prg.num_columns):
            c, pc = rg.column(j), prg.column(j)
            assert c.path_in_schema == pc.path_in_schema
            assert c.physical_type == pc.physical_type
            # pyarrow names LZ4_RAW (codec 7) "LZ4" and the deprecated Hadoop LZ4 (codec 5) "UNKNOWN";
            # pqbloom gives the format's names
            assert {"LZ4_RAW": "LZ4", "LZ4": "UNKNOWN"}.get(c.compression, c.compression) == pc.compression
            assert c.num_values == pc.num_values
            assert set(c.encodings) == set(pc.encodings)
            assert (c.data_page_offset, c.has_dictionary_page) == (pc.data_page_offset, pc.has_dictionary_page)
            if pc.has_dictionary_page:
                assert c.dictionary_page_offset == pc.dictionary_page_offset
            assert (c.total_compressed_size, c.total_uncompressed_size) == (pc.total_compressed_size,
                                                                              pc.total_uncompressed_size)
            assert (c.has_column_index, c.has_offset_index) == (pc.has_column_index, pc.has_offset_index)
            assert c.bloom_filter_offset == pc.bloom_filter_offset
            assert c.bloom_filter_length == pc.bloom_filter_length
            assert c.is_encrypted is False
            assert c.file_path == pc.file_path
            s, ps = c.statistics, pc.statistics
            # pyarrow hides statistics it does not trust; pqbloom's trust rules (tests/test_statistics.py)
            # keep the counts, and bounds where the writer's known bug cannot have touched them (min == max)
            if ps is not None:
                assert s is not None
            if stats and s is not None and ps is not None:
                assert s.null_count == (ps.null_count if ps.has_null_count else None)
                assert s.distinct_count == (ps.distinct_count if ps.has_distinct_count else None)
                assert s.num_values == ps.num_values
                assert s.physical_type == ps.physical_type
                assert (str(s.logical_type), s.converted_type) == (str(ps.logical_type), ps.converted_type)
                if s.has_min_max and ps.has_min_max:  # the trust rules differ at the edges (see above)
                    try:
                        pmin, pmax = ps.min, ps.max
                    except UnicodeDecodeError:  # pyarrow cannot show a bound that is not UTF-8
                        pmin = pmax = None
                        assert isinstance(s.min, bytes) or isinstance(s.max, bytes)  # pqbloom gives its bytes
                    if pmin is not None and pc.physical_type != "INT96":
                        assert (s.min, s.max) == _as_pqbloom_gives(ps.logical_type, pmin, pmax)
                        assert type(s.min) is type(_as_pqbloom_gives(ps.logical_type, pmin, pmax)[0])
            chunks += 1
    return chunks


def _as_pqbloom_gives(logical_type, lo, hi):
    """pyarrow's bounds in the types pqbloom gives them where the two differ on purpose: FLOAT16 as a
    float and UUID as uuid.UUID (pyarrow: the raw bytes), ENUM as str (pyarrow: bytes)."""
    kind = logical_type.type
    if kind == "FLOAT16":
        return tuple(float(np.frombuffer(v, "<f2")[0]) for v in (lo, hi))
    if kind == "UUID":
        return uuid.UUID(bytes=lo), uuid.UUID(bytes=hi)
    if kind == "ENUM" and isinstance(lo, bytes):
        return tuple(v.decode() if isinstance(v, bytes) else v for v in (lo, hi))
    return lo, hi


def test_pyarrow_written_file(tmp_path):
    n = 5000
    t = pa.table({
        "id": pa.array(range(n), pa.int64()),
        "u": pa.array([i % 300 for i in range(n)], pa.uint32()),
        "x": pa.array([None if i % 7 == 0 else i / 3 for i in range(n)], pa.float64()),
        "s": pa.array([None if i % 11 == 0 else f"name-{i % 97:03d}" for i in range(n)]),
        "b": pa.array([i % 3 == 0 for i in range(n)]),
        "ts": pa.array([dt.datetime(2024, 1, 1, tzinfo=dt.timezone.utc) + dt.timedelta(seconds=i) for i in range(n)],
                       pa.timestamp("us", tz="UTC")),
        "d": pa.array([decimal.Decimal(i) / 100 for i in range(n)], pa.decimal128(12, 2)),
        "tags": pa.array([[f"t{i % 5}", None] if i % 4 else None for i in range(n)], pa.list_(pa.string())),
    })
    p = tmp_path / "pa.parquet"
    pq.write_table(t, p, row_group_size=1500, write_page_index=True, compression="zstd",
                   bloom_filter_options={"id": {"ndv": n, "fpp": 0.01}} if _pyarrow_writes_bloom() else None,
                   write_statistics=True)
    assert _compare(p) == 4 * 8  # 4 row groups x 8 leaves
    md = pqbloom.read_metadata(str(p))
    c = md.row_group(1).column(0)
    assert (c.statistics.min, c.statistics.max) == (1500, 2999)
    assert md.row_group(0).column(3).statistics.min == "name-000"  # a text bound comes back as str
    with pytest.raises(IndexError):
        md.row_group(4)
    with pytest.raises(IndexError):
        md.row_group(0).column(9)


def _pyarrow_writes_bloom() -> bool:
    import inspect

    return "bloom_filter_options" in inspect.signature(pq.ParquetWriter.__init__).parameters or \
        "bloom_filter_options" in (pq.ParquetWriter.__init__.__doc__ or "") or \
        "bloom_filter_options" in (pq.write_table.__doc__ or "")


def test_duckdb_written_file(tmp_path):
    p = tmp_path / "duck.parquet"
    duckdb.sql(f"COPY (SELECT range AS id, 'v' || (range % 50) AS s, range * 0.5 AS x FROM range(30000)) "
               f"TO '{p}' (FORMAT parquet, ROW_GROUP_SIZE 10000)")
    assert _compare(p) == 3 * 3


def test_pqbloom_written_file_read_by_pyarrow(tmp_path):
    p = tmp_path / "ours.parquet"
    pqbloom.write_table({"id": list(range(1000)), "s": [f"k{i}" for i in range(1000)]}, str(p),
                        bloom_filter_options={"id": True})
    assert _compare(p) == 2
    c = pqbloom.read_metadata(str(p)).row_group(0).column(0)
    assert c.bloom_filter_offset is not None and c.bloom_filter_length and c.bloom_filter_length > 16


@needs(FIXTURES_DATA, CORPUS / "FILES.tsv")
def test_real_world_corpus_sample():
    """Every 7th file of the corpus that pyarrow reads: the same footer facts."""
    compared = files = 0
    for path, pa_status, _ in corpus_files()[::7]:
        if pa_status != "reads":
            continue
        try:
            pq.read_metadata(CORPUS / path)
        except Exception:  # noqa: BLE001 - pyarrow reads the data but not every footer field helper
            continue
        compared += _compare(CORPUS / path)
        files += 1
    assert files > 50 and compared > 300


@needs(FIXTURES_DATA, CORPUS / "FILES.tsv")
def test_whole_corpus_logical_statistics():
    """Every plaintext file of both corpora that pyarrow reads the footer of: the same footer facts,
    statistics decoded to the same Python values (datetimes, dates, times, Decimals, strings...)."""
    paths = sorted(FIXTURES_DATA.glob("*.parquet")) + [CORPUS / p for p, st, _ in corpus_files() if st == "reads"]
    compared = 0
    kinds = set()
    for path in paths:
        ours = pqbloom.read_metadata(str(path))
        if ours.is_encrypted:
            continue
        try:
            pq.read_metadata(path)
        except Exception:  # noqa: BLE001 - a footer pyarrow refuses is not compared
            continue
        compared += _compare(path)
        for i in range(ours.num_row_groups):
            for c in ours.row_group(i).columns():
                st = c.statistics
                if st is not None and st.has_min_max:
                    kinds.add(type(st.min).__name__)
    assert compared > 2000
    assert {"datetime", "date", "time", "Decimal", "str", "bytes", "int", "float", "bool", "UUID"} <= kinds, kinds


def test_statistics_logical_values(tmp_path):
    utc = dt.timezone.utc
    t = pa.table({
        "ts": pa.array([dt.datetime(2024, 5, 1, 3, tzinfo=utc), dt.datetime(2020, 1, 1, tzinfo=utc)],
                       pa.timestamp("ms", tz="UTC")),
        "local": pa.array([dt.datetime(2024, 5, 1, 3), dt.datetime(2020, 1, 1)], pa.timestamp("us")),
        "d": pa.array([dt.date(2024, 5, 1), dt.date(1999, 12, 31)]),
        "t": pa.array([dt.time(1, 2, 3), dt.time(23, 0)], pa.time64("us")),
        "dec": pa.array([decimal.Decimal("-1.50"), decimal.Decimal("2.25")], pa.decimal128(38, 2)),
        "deci": pa.array([decimal.Decimal("-1.50"), decimal.Decimal("2.25")], pa.decimal128(9, 2)),
        "u": pa.array([2**64 - 1, 5], pa.uint64()),
    })
    p = tmp_path / "logical.parquet"
    pq.write_table(t, p, store_decimal_as_integer=True)
    _compare(p)
    st = [pqbloom.read_metadata(str(p)).row_group(0).column(j).statistics for j in range(7)]
    assert (st[0].min, st[0].max) == (dt.datetime(2020, 1, 1, tzinfo=utc), dt.datetime(2024, 5, 1, 3, tzinfo=utc))
    assert st[0].min_raw == 1577836800000  # the physical bound stays at hand
    assert st[1].min == dt.datetime(2020, 1, 1) and st[1].min.tzinfo is None
    assert (st[2].min, st[3].max) == (dt.date(1999, 12, 31), dt.time(23, 0))
    assert (st[4].min, st[5].max) == (decimal.Decimal("-1.50"), decimal.Decimal("2.25"))
    assert st[4].min_raw == -150
    assert (st[6].min, st[6].max, st[6].num_values) == (5, 2**64 - 1, 2)


@needs(FIXTURES_DATA, CORPUS / "FILES.tsv")
def test_encrypted_footer_metadata():
    p = FIXTURES_DATA / "uniform_encryption.parquet.encrypted"
    props = pqbloom.FileDecryptionProperties(footer_key=K16["kf"])
    md = pqbloom.read_metadata(str(p), decryption_properties=props)
    assert md.is_encrypted and md.num_rows == 50
    c = md.row_group(0).column(0)
    assert c.is_encrypted and c.num_values == 50


@needs(FIXTURES_DATA, CORPUS / "FILES.tsv")
def test_plaintext_footer_without_column_keys():
    p = FIXTURES_DATA / "encrypt_columns_plaintext_footer.parquet.encrypted"
    md = pqbloom.read_metadata(str(p))
    assert md.is_encrypted and md.num_rows == 50
    encrypted = [c for c in md.row_group(0).columns() if c.is_encrypted]
    assert encrypted, "the fixture encrypts some columns"
    with pytest.raises(KeyNotFoundError):
        encrypted[0].statistics  # noqa: B018 - the access is the test
