"""Peer-written golden files (interop/golden/, made by interop/make_golden.py): pqbloom reads them.

No JVM needed: the files were written once by pyarrow, Spark (parquet-java) and DuckDB and are
committed. Each one must read back as exactly the canonical data it was written from; Bloom
filters must hold every present value and exclude almost all absent ones (through both the
whole-filter and the single-block probe); the encrypted Spark files must decrypt through a KMS
holding the documented master keys, and not without them.
"""

from __future__ import annotations

import hashlib
import json

import numpy as np
import pyarrow.parquet as pq
import pytest

import pqbloom
from interop import cases as C
from pqbloom.errors import AuthenticationError, KeyNotFoundError
from tests.conftest import SPARK_MASTER_KEYS
from tests.paths import GOLDEN

MANIFEST = json.loads((GOLDEN / "MANIFEST.json").read_text())
CASES = C.golden_cases()
KEYS = SPARK_MASTER_KEYS


def _props(path, keys=KEYS):
    factory = pqbloom.CryptoFactory(lambda config: pqbloom.InMemoryKms(keys))
    return factory.file_decryption_properties(pqbloom.KmsConnectionConfig(), file_path=str(path))


def _open(name):
    path = GOLDEN / f"{name}.parquet"
    case = CASES[name]
    return pqbloom.ParquetFile(path, decryption_properties=_props(path) if case.encryption else None)


def test_manifest_covers_every_golden_file_and_checksums_match():
    files = sorted(p.name for p in GOLDEN.glob("*.parquet"))
    assert files == sorted(MANIFEST) == sorted(f"{n}.parquet" for n in CASES)
    for name, info in MANIFEST.items():
        data = (GOLDEN / name).read_bytes()
        assert hashlib.sha256(data).hexdigest() == info["sha256"], f"{name} changed; rerun interop.make_golden"
        assert len(data) < 32 * 1024
    writers = {info["writer"].split()[0] for info in MANIFEST.values()}
    assert writers == {"pyarrow", "spark", "duckdb"}


# pqbloom bug (see interop/MATRIX.md, types:decimal): DECIMAL values with more than 28 significant
# digits are rounded to 28 (decimal's default context) when read (and when written).
DECIMAL_BUG = "pqbloom rounds DECIMAL values to 28 significant digits (default decimal context)"
BUGGY_COLUMNS = {"d38"}


@pytest.mark.parametrize("name", sorted(CASES))
def test_pqbloom_reads_exactly_the_written_values(name):
    case = CASES[name]
    with _open(name) as pf:
        got = C.canon_pqbloom(pf.read())
        assert pf.num_rows == case.n
    expected = {k: v for k, v in case.data().items() if k not in BUGGY_COLUMNS}
    diff = C.first_difference(expected, {k: v for k, v in got.items() if k not in BUGGY_COLUMNS})
    assert diff is None, f"{name}: {diff}"


@pytest.mark.parametrize("name", ["pyarrow_types", "spark_types"])
def test_decimal_38_digits_read_exactly(name):
    with _open(name) as pf:
        got = C.canon_pqbloom(pf.read(["d38"]))
    assert C.first_difference({"d38": CASES[name].data()["d38"]}, got) is None


@pytest.mark.parametrize("name", sorted(n for n, c in CASES.items() if c.encryption is None))
def test_pyarrow_agrees(name):
    """The expected values are what the peer really stored: pyarrow reads the same."""
    case = CASES[name]
    table = pq.read_table(GOLDEN / f"{name}.parquet")
    diff = C.first_difference(case.data(), C.canon_arrow(table, {c.name: c.kind for c in case.columns}))
    assert diff is None, f"{name}: {diff}"


def test_types_are_the_peers_physical_and_logical_types():
    from interop.matrix import _arrow_parquet_type, _expected_parquet_type, _type_matches

    for name in ("pyarrow_types", "spark_types", "spark_int96"):
        got = _arrow_parquet_type(str(GOLDEN / f"{name}.parquet"))
        for col in CASES[name].columns:
            assert _type_matches(_expected_parquet_type(col), got[col.name]), (name, col.name, got[col.name])
    assert "parquet-mr" in pqbloom.ParquetFile(GOLDEN / "spark_types.parquet").created_by


@pytest.mark.parametrize("name", sorted(n for n, c in CASES.items() if c.bloom is not None))
def test_bloom_filters_of_every_peer(name):
    case = CASES[name]
    data = case.data()
    with _open(name) as pf:
        rgs = [rg.num_rows for rg in pf.thrift_metadata.row_groups]
        start = 0
        for rg, n in enumerate(rgs):
            for col in case.bloom.columns:
                bf = pf.bloom_filter(rg, col)
                assert bf is not None, f"{name}: no filter on {col} in row group {rg}"
                ptype = pf.column_descriptor(col).physical_type
                present = data[col][start:start + n]
                assert np.all(bf.might_contain_many(present, ptype)), f"{name}: a present {col} tests negative"
                for v in present[:10]:
                    assert pf.bloom_filter_might_contain(rg, col, v) is True
                absent = C.absent_values(case, col, 200)
                hits = [pf.bloom_filter_might_contain(rg, col, v) for v in absent]
                assert hits == [bf.might_contain(v, ptype) for v in absent]
                assert sum(hits) <= 0.1 * len(absent), f"{name}: {col} filter admits {sum(hits)} of 200 absent"
            start += n


def test_encrypted_spark_files_need_the_keys():
    path = GOLDEN / "spark_encrypted.parquet"
    assert path.read_bytes()[-4:] == b"PARE"
    with pytest.raises(KeyNotFoundError):
        pqbloom.ParquetFile(path)
    wrong = dict(KEYS, keyB=KEYS["keyC"])
    with pqbloom.ParquetFile(path, decryption_properties=_props(path, wrong)) as pf:
        assert pf.read(["id", "d"]).num_rows == 200  # keyA and keyC still right
        with pytest.raises(AuthenticationError):
            pf.read(["s"])
    assert b"secret-" not in path.read_bytes()

    ctr = GOLDEN / "spark_encrypted_ctr_plaintext_footer.parquet"
    assert ctr.read_bytes()[-4:] == b"PAR1"
    case = CASES["spark_encrypted_ctr_plaintext_footer"]
    with pqbloom.ParquetFile(ctr) as pf:  # a legacy read: the plaintext column only
        assert pf.read(["id"]).column("id").to_pylist() == case.data()["id"]
        with pytest.raises(KeyNotFoundError):
            pf.read(["s"])
    with pqbloom.ParquetFile(ctr, decryption_properties=_props(ctr)) as pf:
        assert pf.decryption.ctx.algorithm_name == "AES_GCM_CTR_V1"
        md = json.loads(pf.thrift_metadata.footer_signing_key_metadata)
        assert md["doubleWrapping"] is False and md["masterKeyID"] == "keyA"
