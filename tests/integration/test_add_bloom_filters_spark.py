"""Spark (parquet-java) reads and prunes with Bloom filters ``pqbloom.add_bloom_filters`` added to files Spark
wrote: plain and dictionary-encoded chunks (parquet-java writes no filter for the latter, but reads one), every
position, and an encrypted file (the filter under the column's key, AAD types 8 and 9).

Evidence of pruning is the scan node's ``numOutputRows`` (interop/spark_support.py): for a value absent from
every row group but inside a row group's min/max it drops to 0 with the new filters, and stays above 0 (all
rows, for a value inside every row group's min/max) with Bloom filtering switched off. Dictionary filtering is switched off in both reads, so that only the
Bloom filter can prune a dictionary-encoded chunk.
"""

from __future__ import annotations

from pathlib import Path

import pytest

import pqbloom
from pqbloom.crypto import CryptoFactory, InMemoryKms, KmsConnectionConfig
from tests.conftest import SPARK_MASTER_KEYS

pytestmark = pytest.mark.spark

N = 120_000
NO_DICT_FILTER = {"parquet.filter.dictionary.enabled": "false"}
BLOOM_OFF = {**NO_DICT_FILTER, "parquet.filter.bloom.enabled": "false"}


def _frame(spark):
    # even ids (odd ones absent); codes c00000..c00998, even numbers only, every one in every row group (few
    # enough that parquet-java keeps the chunk dictionary-encoded with small pages)
    return spark.range(0, N).selectExpr("id * 2 AS id", "format_string('c%05d', ((id * 7919) % 500) * 2) AS code",
                                        "cast(id % 97 AS int) AS v")


def _scan(spark, path, where, options):
    from interop.spark_support import collect_with_scan_rows

    r = spark.read
    for k, v in options.items():
        r = r.option(k, v)
    return collect_with_scan_rows(r.parquet(str(path)).where(where))


def _spark_file(spark, tmp_path, options=None) -> str:
    from interop.spark_support import spark_write_with_bloom

    return spark_write_with_bloom(_frame(spark), tmp_path / "spark", block_size=256 * 1024, page_size=16 * 1024,
                                  options={"parquet.enable.dictionary#id": "false",
                                           # small pages (for the page index), a dictionary for all codes
                                           "parquet.dictionary.page.size": str(1 << 20), **(options or {})})


@pytest.mark.parametrize("position", ["end", "between_row_groups"])
def test_spark_prunes_with_filters_added_to_its_file(spark, tmp_path, position):
    path = _spark_file(spark, tmp_path)
    md = pqbloom.read_metadata(path)
    assert md.num_row_groups >= 3
    assert all(md.row_group(g).column(c).bloom_filter_offset is None for g in range(md.num_row_groups)
               for c in range(3))
    assert "RLE_DICTIONARY" in md.row_group(0).column(1).encodings or "PLAIN_DICTIONARY" in md.row_group(0).column(1).encodings
    rows_before = sorted(tuple(r) for r in spark.read.parquet(path).collect())
    before = Path(path).read_bytes()
    r = pqbloom.add_bloom_filters(path, ["id", "code"], position=position)
    assert len(r.changes) == 2 * md.num_row_groups
    assert sorted(tuple(r) for r in spark.read.parquet(path).collect()) == rows_before
    # pages untouched (the same bytes, where pyarrow's metadata places them)
    from tests.integration.test_add_bloom_filters import chunk_ranges

    after = Path(path).read_bytes()
    orig = tmp_path / "orig.parquet"
    orig.write_bytes(before)
    old, new = chunk_ranges(orig), chunk_ranges(path)
    assert all(after[new[k][0]:new[k][0] + n] == before[s:s + n] for k, (s, n) in old.items())
    # absent: 77777 inside one row group's min/max (ids ascend), c00431 inside every row group's
    for where, control in (("id = 77777", None), ("code = 'c00431'", N)):
        rows, scanned = _scan(spark, path, where, NO_DICT_FILTER)
        assert rows == [] and scanned == 0, f"{where}: Spark scanned {scanned} rows: it did not use the new filter"
        rows, scanned = _scan(spark, path, where, BLOOM_OFF)  # the control: statistics alone read rows
        assert rows == [] and scanned > 0 and scanned == (control or scanned), (where, scanned)
    for where, count in (("id = 77778", 1), ("code = 'c00432'", N // 500)):  # present: found
        rows, scanned = _scan(spark, path, where, NO_DICT_FILTER)
        assert len(rows) == count and scanned > 0, where
    # the page index parquet-java wrote still leads to the right rows (moved pages: rewritten offsets)
    rows, scanned = _scan(spark, path, "id >= 100000 AND id < 100020", {})
    assert sorted(r["id"] for r in rows) == list(range(100000, 100020, 2))
    rows_off, scanned_off = _scan(spark, path, "id >= 100000 AND id < 100020",
                                  {"parquet.filter.columnindex.enabled": "false"})
    assert scanned < scanned_off  # the column index pruned pages


def test_spark_prunes_with_encrypted_filters_added_to_its_encrypted_file(spark, tmp_path):
    path = _spark_file(spark, tmp_path, {"parquet.encryption.footer.key": "keyA",
                                         "parquet.encryption.column.keys": "keyB:id,code"})
    assert Path(path).read_bytes()[:4] == b"PARE"
    rows_before = sorted(tuple(r) for r in spark.read.parquet(path).collect())
    props = CryptoFactory(lambda config: InMemoryKms(SPARK_MASTER_KEYS)).file_decryption_properties(
        KmsConnectionConfig(), file_path=path)
    with pytest.raises(pqbloom.errors.KeyNotFoundError):
        pqbloom.add_bloom_filters(path, ["id"])
    r = pqbloom.add_bloom_filters(path, ["id", "code", "v"], decryption_properties=props)
    enc = [c for c in r.changes if c.column == "id"]
    # two GCM modules (length, nonce, tag): the Thrift header and the bitset
    assert enc and all(c.stored_bytes == len(pqbloom.bloom.BloomFilter(c.num_bytes).header_bytes()) + c.num_bytes
                       + 2 * (4 + 12 + 16) for c in enc)
    assert Path(path).read_bytes()[:4] == b"PARE"
    assert sorted(tuple(r) for r in spark.read.parquet(path).collect()) == rows_before
    for where, control in (("id = 77777", None), ("code = 'c00431'", N)):
        rows, scanned = _scan(spark, path, where, NO_DICT_FILTER)
        assert rows == [] and scanned == 0, f"{where}: parquet-java did not decrypt and use the filter ({scanned})"
        rows, scanned = _scan(spark, path, where, BLOOM_OFF)
        assert rows == [] and scanned > 0 and scanned == (control or scanned), (where, scanned)
    rows, _ = _scan(spark, path, "code = 'c00432'", NO_DICT_FILTER)
    assert len(rows) == N // 500
