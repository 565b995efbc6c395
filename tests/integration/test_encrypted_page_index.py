"""The page index of encrypted files: ColumnIndex / OffsetIndex modules (AAD module types 6 and 7,
row-group and column ordinals, no page ordinal) are decrypted with their column's key, authenticated,
and prune pages exactly as a plaintext file's do.

- files written by pqbloom, pyarrow and Spark (parquet-java): a filtered read skips pages and reads a
  fraction of the bytes, with the rows pyarrow (decrypting in a subprocess) or Spark give;
- the parquet-testing fixtures (parquet-cpp, parquet-mr): their encrypted indexes authenticate;
- parquet-java prunes pages with the encrypted page index pqbloom writes;
- a flipped byte in an index module, or a module moved to another column or row group, raises
  AuthenticationError in a filtered read that uses it; a read of every row opens no index;
- without a column's key its index is not used, and only reading the column raises.
"""

from __future__ import annotations

import json
import struct
from pathlib import Path

import numpy as np
import pytest
from cryptography.hazmat.primitives.ciphers.aead import AESGCM

import pqbloom
from pqbloom.crypto import (
    CryptoFactory,
    EncryptionConfiguration,
    FileDecryptionProperties,
    FileEncryptionProperties,
    InMemoryKms,
    KmsConnectionConfig,
)
from pqbloom.errors import AuthenticationError, KeyNotFoundError
from pqbloom.file.column_reader import build_column
from pqbloom.format import T, decode, decode_prefix
from tests.conftest import (
    COL_KEY,
    K16,
    KEY,
    MASTER,
    SPARK_MASTER_KEYS,
    assert_no_key_in,
    key_retriever,
    run_pyarrow,
    split_tail,
)
from tests.corpora import require
from tests.paths import FIXTURES_DATA

N = 20_000
OPTS = dict(row_group_size=10_000, data_page_size=2048, compression="snappy", use_dictionary=["v"])


def columns(n: int = N) -> dict:
    i = np.arange(n)
    return {"id": i.astype(np.int64), "id2": (i + 1_000_000).astype(np.int64),
            "email": [f"user{j:06d}@example.com" for j in range(n)],
            "v": ((i * 7919) % 1000).astype(np.int32),
            "score": [j * 0.5 if j % 7 else None for j in range(n)]}


def rows_where(table: dict, keep) -> dict:
    """The rows of a column dict (lists) for which ``keep(row)`` is true."""
    names = list(table)
    rows = [dict(zip(names, r)) for r in zip(*(table[k] for k in names))]
    picked = [r for r in rows if keep(r)]
    return {k: [r[k] for r in picked] for k in names}


# filter -> the same filter in Python
FILTERS = [
    ([("id", ">=", 12_345), ("id", "<", 12_400)], lambda r: 12_345 <= r["id"] < 12_400),
    ([("email", "==", "user017000@example.com")], lambda r: r["email"] == "user017000@example.com"),
    ([("id", ">=", 3_000), ("id", "<", 3_050), ("id2", ">", 1_003_010)],
     lambda r: 3_000 <= r["id"] < 3_050 and r["id2"] > 1_003_010),
]


def _kms_props(path: Path, kind: str, *, algorithm: str = "AES_GCM_V1", plaintext_footer: bool = False,
               master: dict | None = None, footer: str = "kf", column_keys: dict | None = None):
    factory = CryptoFactory(lambda config: InMemoryKms(master or MASTER))
    if kind == "uniform":
        column_keys = {}
    elif column_keys is None:
        column_keys = {"kc1": ["email"], "kc2": ["id"]}
    config = EncryptionConfiguration(footer_key=footer, column_keys=column_keys,
                                     uniform_encryption=kind == "uniform", encryption_algorithm=algorithm,
                                     plaintext_footer=plaintext_footer)
    return factory.file_encryption_properties(KmsConnectionConfig(), config, file_path=path)


def _kms_decryption(path: Path, master: dict | None = None) -> FileDecryptionProperties:
    factory = CryptoFactory(lambda config: InMemoryKms(master or MASTER))
    return factory.file_decryption_properties(KmsConnectionConfig(), file_path=path)


def _explained(path, filters, props=None, columns=None) -> tuple[dict, pqbloom.Explain]:
    ex = pqbloom.Explain()
    kw = {} if props is None else {"decryption_properties": props}
    table = pqbloom.read_table(path, columns=columns, filters=filters, explain=ex, **kw)
    return table.to_pydict(), ex


def _pages(ex: pqbloom.Explain) -> tuple[int, int, int, int]:
    return ex.pages_total, ex.pages_read, ex.pages_skipped, ex.chunks_read_whole


# =============================================================================================
# pqbloom's files, pyarrow as the oracle


VARIANTS = [(alg, pf, kind) for alg in ("AES_GCM_V1", "AES_GCM_CTR_V1") for pf in (False, True)
            for kind in ("uniform", "columns")]


@pytest.fixture(scope="module")
def written(tmp_path_factory):
    out = tmp_path_factory.mktemp("encrypted_page_index")
    plain = out / "plain.parquet"
    pqbloom.write_table(columns(), plain, **OPTS)
    files = {}
    for alg, pf, kind in VARIANTS:
        path = out / f"{alg}_{pf}_{kind}.parquet"
        pqbloom.write_table(columns(), path, encryption_properties=_kms_props(path, kind, algorithm=alg,
                                                                              plaintext_footer=pf), **OPTS)
        files[(alg, pf, kind)] = path
    got = json.loads(run_pyarrow(
        """
        factory = pe.CryptoFactory(Kms)
        result = {}
        for path in json.loads(sys.argv[1]):
            props = factory.file_decryption_properties(pe.KmsConnectionConfig(), pe.DecryptionConfiguration(), path)
            result[path] = table_json(pq.read_table(path, decryption_properties=props))
        print(json.dumps(result))
        """,
        json.dumps([str(p) for p in files.values()]),
    ))
    return plain, files, {k: got[str(p)] for k, p in files.items()}


@pytest.mark.parametrize(("alg", "pf", "kind"), VARIANTS)
def test_filtered_read_of_encrypted_file_prunes_pages(written, alg, pf, kind):
    plain, files, pyarrow_tables = written
    path = files[(alg, pf, kind)]
    props = _kms_decryption(path)
    size = path.stat().st_size
    for filters, keep in FILTERS:
        got, ex = _explained(path, filters, props)
        assert got == rows_where(pyarrow_tables[(alg, pf, kind)], keep), filters
        assert got["id"], filters  # the filters select rows
        # the same pages as the plaintext twin: the page index was read and used as there
        _, plain_ex = _explained(plain, filters)
        assert _pages(ex) == _pages(plain_ex), filters
        assert ex.pages_skipped > 10 * ex.pages_read and ex.chunks_read_whole == 0, str(ex)
        assert ex.bytes_read < size / 4, str(ex)
        assert ex.notes == []


def test_filtered_batches_and_row_group_pruned_by_page_index(written):
    plain, files, pyarrow_tables = written
    path = files[("AES_GCM_V1", False, "uniform")]
    props = _kms_decryption(path)
    filters, keep = FILTERS[0]
    want = rows_where(pyarrow_tables[("AES_GCM_V1", False, "uniform")], keep)
    ex = pqbloom.Explain()
    with pqbloom.ParquetFile(path, decryption_properties=props) as f:
        batches = list(f.iter_batches(100, filters=filters, explain=ex))
    assert [v for b in batches for v in b.column("id").to_pylist()] == want["id"]
    assert ex.pages_skipped > 0
    # rows of id's first pages and of id2's last pages: none of row group 0 is in both, which only
    # the page index tells (statistics prune row group 1)
    apart = [("id", "<", 100), ("id2", ">", 1_009_000)]
    got, ex = _explained(path, apart, props)
    _, plain_ex = _explained(plain, apart)
    assert got["id"] == [] and ex.row_groups_pruned_page_index == plain_ex.row_groups_pruned_page_index == 1
    assert ex.row_groups_pruned_statistics == 1 and ex.pages_read == 0


def test_encrypted_page_index_over_http(written):
    """Over HTTP (a concurrent reader: page indexes are fetched ahead for the output columns too)."""
    from tests.range_server import RangeServer

    plain, files, pyarrow_tables = written
    path = files[("AES_GCM_V1", True, "columns")]
    props = _kms_decryption(path)
    with RangeServer(path.parent) as srv:
        for filters, keep in FILTERS:
            srv.reset()
            got, ex = _explained(srv.url(path.name), filters, props)
            assert got == rows_where(pyarrow_tables[("AES_GCM_V1", True, "columns")], keep), filters
            assert ex.pages_skipped > 10 * ex.pages_read and ex.chunks_read_whole == 0, str(ex)
            assert srv.counts()["bytes"] < path.stat().st_size / 4, srv.counts()


# =============================================================================================
# other writers' files


def test_pyarrow_written_encrypted_page_index_prunes(tmp_path):
    out = tmp_path / "pa"
    out.mkdir()
    got = json.loads(run_pyarrow(
        """
        out, n = sys.argv[1], 60000  # pyarrow's pages hold at least 1024 rows
        t = pa.table({"id": pa.array(range(n), pa.int64()), "id2": pa.array(range(1000000, 1000000 + n), pa.int64()),
                      "email": [f"user{j:06d}@example.com" for j in range(n)],
                      "v": pa.array([(j * 7919) % 1000 for j in range(n)], pa.int32()),
                      "score": [j * 0.5 if j % 7 else None for j in range(n)]})
        factory = pe.CryptoFactory(Kms)
        result = {}
        for kind in ("uniform", "columns"):
            for alg in ("AES_GCM_V1", "AES_GCM_CTR_V1"):
                path = f"{out}/{kind}_{alg}.parquet"
                keys = {} if kind == "uniform" else {"kc1": ["email"], "kc2": ["id"]}
                config = pe.EncryptionConfiguration(footer_key="kf", column_keys=keys,
                                                    uniform_encryption=kind == "uniform", encryption_algorithm=alg)
                props = factory.file_encryption_properties(pe.KmsConnectionConfig(), config, path)
                pq.write_table(t, path, encryption_properties=props, row_group_size=30000, data_page_size=2048,
                               write_page_index=True, use_dictionary=["email"])
                dprops = factory.file_decryption_properties(pe.KmsConnectionConfig(), pe.DecryptionConfiguration(), path)
                assert pq.ParquetFile(path, decryption_properties=dprops).metadata.row_group(0).column(0).has_column_index
                result[path] = table_json(pq.read_table(path, decryption_properties=dprops))
        print(json.dumps(result))
        """,
        str(out),
    ))
    assert len(got) == 4
    for path, table in got.items():
        props = _kms_decryption(Path(path))
        for filters, keep in FILTERS:
            rows, ex = _explained(path, filters, props)
            assert rows == rows_where(table, keep), (path, filters)
            assert ex.pages_skipped > 4 * ex.pages_read and ex.chunks_read_whole == 0, (path, str(ex))
            assert ex.bytes_read < Path(path).stat().st_size / 4, (path, str(ex))


FIXTURE_PROPS = {
    "uniform_encryption.parquet.encrypted": dict(footer_key=K16["kf"]),
    "encrypt_columns_and_footer.parquet.encrypted": dict(key_retriever=key_retriever(K16)),
    "encrypt_columns_and_footer_ctr.parquet.encrypted": dict(key_retriever=key_retriever(K16)),
    "encrypt_columns_plaintext_footer.parquet.encrypted": dict(key_retriever=key_retriever(K16)),
}


def _fixture(name: str) -> Path:
    return require(FIXTURES_DATA / name)


@pytest.mark.parametrize("name", sorted(FIXTURE_PROPS))
def test_fixture_encrypted_indexes_authenticate(name):
    """parquet-cpp's encrypted ColumnIndex / OffsetIndex (one page per chunk, so nothing to skip): a
    filtered read opens and uses them (their pages are counted), and gives the documented rows."""
    path = _fixture(name)
    props = FileDecryptionProperties(**FIXTURE_PROPS[name])
    # the 50-row dataset: double_field = i * 1.1111111, int32_field = i
    ex = pqbloom.Explain()
    got = pqbloom.read_table(path, columns=["int32_field", "double_field"], filters=[("double_field", ">", 40.0)],
                             explain=ex, decryption_properties=props)
    assert got.column("int32_field").values.tolist() == [i for i in range(50) if i * 1.1111111 > 40.0]
    assert ex.pages_total == 2 and ex.chunks_read_whole == 0, str(ex)  # both columns' OffsetIndex used
    # a flipped byte in the encrypted ColumnIndex of double_field
    with pqbloom.ParquetFile(path, decryption_properties=props) as f:
        desc = f.column_descriptor("double_field")
        cc = f.thrift_metadata.row_groups[0].columns[desc.index]
        assert cc.crypto_metadata is not None and cc.column_index_offset is not None
        offset = cc.column_index_offset
    bad = bytearray(path.read_bytes())
    bad[offset + 20] ^= 0x04
    with pytest.raises(AuthenticationError, match="column index of column 'double_field'") as info:
        _explained(bytes(bad), [("double_field", ">", 40.0)], props)
    assert_no_key_in(info.value)
    assert pqbloom.read_table(bytes(bad), columns=["double_field"], decryption_properties=props).num_rows == 50


# =============================================================================================
# tampering


def _gcm_module_aad(file_aad: bytes, module_type: int, rg: int, col: int) -> bytes:
    return file_aad + bytes([module_type]) + struct.pack("<hh", rg, col)


@pytest.fixture(scope="module")
def uniform_file(tmp_path_factory):
    """A file whose columns all use the footer key, so that only the AAD tells index modules apart."""
    path = tmp_path_factory.mktemp("uniform") / "u.parquet"
    pqbloom.write_table(columns(), path, encryption_properties=FileEncryptionProperties(KEY), **OPTS)
    return path


def _index_modules(path: Path) -> dict[tuple[str, int, str], tuple[int, int]]:
    """(kind, row group, column) -> (offset, length) of each index module."""
    out = {}
    with pqbloom.ParquetFile(path, decryption_properties=FileDecryptionProperties(KEY)) as f:
        for rg, group in enumerate(f.thrift_metadata.row_groups):
            for desc, cc in zip(f.columns, group.columns):
                out[("ci", rg, desc.dotted_path)] = (cc.column_index_offset, cc.column_index_length)
                out[("oi", rg, desc.dotted_path)] = (cc.offset_index_offset, cc.offset_index_length)
    return out


@pytest.mark.parametrize("kind", ["ci", "oi"])
def test_flipped_index_byte_fails_a_filtered_read(uniform_file, kind):
    data = uniform_file.read_bytes()
    off, length = _index_modules(uniform_file)[(kind, 1, "id")]
    props = FileDecryptionProperties(KEY)
    for pos in (off + 4, off + length // 2, off + length - 1):  # nonce, ciphertext, tag
        bad = bytearray(data)
        bad[pos] ^= 0x01
        what = "column index" if kind == "ci" else "offset index"
        with pytest.raises(AuthenticationError, match=f"{what} of column 'id' \\(row group 1\\)") as info:
            _explained(bytes(bad), FILTERS[0][0], props)
        assert_no_key_in(info.value)
        # a read of every row opens no page index (documented: RowGroupReader.read_rows), so it still reads
        assert pqbloom.read_table(bytes(bad), decryption_properties=props).num_rows == N
        # a filtered read whose row groups are all pruned by statistics never reaches the index
        assert _explained(bytes(bad), [("id", "<", 0)], props)[0]["id"] == []


@pytest.mark.parametrize("kind", ["ci", "oi"])
def test_index_module_moved_to_another_chunk_fails(uniform_file, kind):
    """A module swapped with the same-sized one of another column or row group decrypts under the
    same key, and would give plausible page bounds: only the AAD's ordinals catch it."""
    data = uniform_file.read_bytes()
    modules = _index_modules(uniform_file)
    region, _ = split_tail(data)
    fcm, _ = decode_prefix(T.FileCryptoMetaData, region)
    fields = fcm.encryption_algorithm.AES_GCM_V1
    file_aad = (fields.aad_prefix or b"") + fields.aad_file_unique
    module_type = 6 if kind == "ci" else 7
    names = list(columns())
    pairs = {"row group": ((kind, 0, "id2"), (kind, 1, "id2")), "column": ((kind, 1, "id"), (kind, 1, "id2"))}
    for what, (a, b) in pairs.items():
        (oa, la), (ob, lb) = modules[a], modules[b]
        assert la == lb, f"{what}: {a} and {b} differ in size"
        # each decrypts under the AAD of where it was written (same key: the file is uniform)
        for (_, rg, col), (o, n) in ((a, (oa, la)), (b, (ob, lb))):
            module = data[o:o + n]
            plain = AESGCM(KEY).decrypt(module[4:16], module[16:],
                                        _gcm_module_aad(file_aad, module_type, rg, names.index(col)))
            decode(T.ColumnIndex if kind == "ci" else T.OffsetIndex, plain)
        swapped = bytearray(data)
        swapped[oa:oa + la], swapped[ob:ob + lb] = data[ob:ob + lb], data[oa:oa + la]
        with pytest.raises(AuthenticationError) as info:
            # a filter on both columns over both row groups uses every one of these modules
            _explained(bytes(swapped), [("id", ">=", 5), ("id2", "<", 1_000_000 + N - 5)], FileDecryptionProperties(KEY))
        assert_no_key_in(info.value)
    assert _explained(uniform_file, [("id", ">=", 5), ("id2", "<", 1_000_000 + N - 5)],
                      FileDecryptionProperties(KEY))[0]["id"] == list(range(5, N - 5))


def test_a_page_read_on_its_own_is_opened_with_its_ordinal(uniform_file):
    """A data page read alone (from its OffsetIndex entry) authenticates only under its own ordinal,
    and a dictionary page is accepted only where the chunk begins."""
    props = FileDecryptionProperties(KEY)
    with pqbloom.ParquetFile(uniform_file, decryption_properties=props) as f:
        for name in ("id", "v"):  # without and with a dictionary page
            desc = f.column_descriptor(name)
            layout = f.row_group_reader(1).page_index([desc], column_index=False)[desc.index].layout
            assert layout is not None and layout.num_pages > 3
            meta = f.chunk_metadata(1, desc)
            q = 2
            page = f.range_reader.read(layout.offsets[q], layout.sizes[q])
            prefix = f.range_reader.read(*layout.prefix) if layout.prefix[1] else b""
            rows = int(layout.page_rows()[q])
            first = int(layout.first_rows[q])
            want = columns()[name][10_000 + first:10_000 + first + rows]
            got = f.decode_chunk(prefix + page, layout.prefix[0], meta, 1, desc, page_ordinals=[q], num_values=rows)
            assert build_column(desc.field, [got]).to_pylist() == list(want)
            for ordinals in ([q - 1], [q + 1], None):  # the AAD binds the page ordinal
                with pytest.raises(AuthenticationError):
                    f.decode_chunk(prefix + page, layout.prefix[0], meta, 1, desc, page_ordinals=ordinals, num_values=rows)
            assert bool(prefix) is (name == "v")
            if prefix:  # the dictionary page where a data page should be
                with pytest.raises(AuthenticationError):
                    f.decode_chunk(prefix + page, layout.offsets[q], meta, 1, desc, page_ordinals=[q], num_values=rows)


# =============================================================================================
# missing keys


def test_index_of_a_column_without_its_key_is_not_used(tmp_path):
    path = tmp_path / "k.parquet"
    plain = tmp_path / "p.parquet"
    pqbloom.write_table(columns(), plain, **OPTS)
    # email and id2 on their own key, the other columns plaintext; a signed plaintext footer
    pqbloom.write_table(columns(), path, encryption_properties=FileEncryptionProperties(
        KEY, {"email": COL_KEY, "id2": COL_KEY}, plaintext_footer=True), **OPTS)
    data = {k: list(v) for k, v in columns().items()}
    on_id = [("id", ">=", 3_000), ("id", "<", 3_050)]
    want = {"id": list(range(3_000, 3_050)), "v": [(r * 7919) % 1000 for r in range(3_000, 3_050)]}
    for props in (FileDecryptionProperties(KEY), None):  # None: the plaintext footer, read as a legacy reader
        # id's index prunes; id2's and email's, unreadable, are not used and raise nothing
        got, ex = _explained(path, on_id, props, columns=["id", "v"])
        assert got == want
        assert _pages(ex) == _pages(_explained(plain, on_id, columns=["id", "v"])[1])
        assert ex.pages_skipped > 10 * ex.pages_read, str(ex)
        # reading the column itself needs its key
        with pytest.raises(KeyNotFoundError, match="id2") as info:
            _explained(path, FILTERS[2][0], props, columns=["id", "v"])  # the filter reads id2
        assert_no_key_in(info.value)
        with pytest.raises(KeyNotFoundError, match="email") as info:
            _explained(path, on_id, props, columns=["id", "email"])
        assert_no_key_in(info.value)
    # with every key: both indexes used, as on the plaintext file
    props = FileDecryptionProperties(KEY, {"email": COL_KEY, "id2": COL_KEY})
    got, ex = _explained(path, FILTERS[2][0], props)
    assert got == rows_where(data, FILTERS[2][1])
    assert _pages(ex) == _pages(_explained(plain, FILTERS[2][0])[1])


def test_encrypted_file_without_page_index(tmp_path):
    """No page index: a plaintext column of an encrypted file has its page headers walked, as in a
    plaintext file; an encrypted column (its headers are modules) is read whole."""
    path, plain = tmp_path / "n.parquet", tmp_path / "p.parquet"
    opts = {**OPTS, "write_page_index": False}
    pqbloom.write_table(columns(), plain, **opts)
    pqbloom.write_table(columns(), path, encryption_properties=FileEncryptionProperties(KEY, {"email": COL_KEY}), **opts)
    props = FileDecryptionProperties(KEY, {"email": COL_KEY})
    data = {k: list(v) for k, v in columns().items()}
    got, ex = _explained(path, FILTERS[0][0], props, columns=["id", "v"])
    assert got == {k: rows_where(data, FILTERS[0][1])[k] for k in ("id", "v")}
    # the predicate column is decoded whole, then only the pages of v holding the rows
    assert _pages(ex) == _pages(_explained(plain, FILTERS[0][0], columns=["id", "v"])[1]), str(ex)
    assert ex.pages_skipped > 4 * ex.pages_read and ex.chunks_read_whole == 1, str(ex)
    got, ex = _explained(path, FILTERS[1][0], props)
    assert got == rows_where(data, FILTERS[1][1])
    assert ex.chunks_read_whole >= 1, str(ex)


# =============================================================================================
# Spark (parquet-java)


def test_spark_written_encrypted_page_index_prunes(spark, tmp_path):
    from interop.spark_support import spark_write_with_bloom

    df = spark.range(0, N).selectExpr("id", "id + 1000000 AS id2", "format_string('user%06d@example.com', id) AS email",
                                      "cast((id * 7919) % 1000 AS int) AS v")
    path = spark_write_with_bloom(df, tmp_path / "spark", page_size=2048, block_size=256 * 1024, options={
        "parquet.encryption.footer.key": "keyA", "parquet.encryption.column.keys": "keyB:email,id",
        "parquet.enable.dictionary": "false"})
    assert Path(path).read_bytes()[:4] == b"PARE"
    props = _kms_decryption(Path(path), SPARK_MASTER_KEYS)
    with pqbloom.ParquetFile(path, decryption_properties=props) as f:
        assert f.num_row_groups >= 2 and f.thrift_metadata.row_groups[0].columns[0].crypto_metadata is not None
    for filters, sql in [(FILTERS[0][0], "id >= 12345 AND id < 12400"),
                         (FILTERS[1][0], "email = 'user017000@example.com'"),
                         (FILTERS[2][0], "id >= 3000 AND id < 3050 AND id2 > 1003010")]:
        want = sorted(r["id"] for r in spark.read.parquet(str(tmp_path / "spark")).where(sql).collect())
        got, ex = _explained(path, filters, props)
        assert sorted(got["id"]) == want and want, sql
        assert ex.pages_skipped > 10 * ex.pages_read and ex.chunks_read_whole == 0, (sql, str(ex))
        assert ex.bytes_read < Path(path).stat().st_size / 4, (sql, str(ex))


def test_spark_prunes_pages_with_pqbloom_encrypted_page_index(spark, tmp_path):
    """parquet-java decrypts the encrypted ColumnIndex / OffsetIndex pqbloom writes (column key and
    footer key) and skips pages with them: its scan returns only the rows of the matching pages."""
    from interop.spark_support import collect_with_scan_rows

    path = tmp_path / "ours" / "part-0.parquet"
    path.parent.mkdir()
    pqbloom.write_table(columns(), path, encryption_properties=_kms_props(
        path, "columns", master=SPARK_MASTER_KEYS, footer="keyA", column_keys={"keyB": ["email", "id"]}), **OPTS)
    for sql in ("id = 12345", "id2 = 1017000", "email = 'user017000@example.com'"):
        rows, scanned = collect_with_scan_rows(spark.read.parquet(str(path)).where(sql))
        assert len(rows) == 1, sql
        assert 0 < scanned < 2_000, f"{sql}: Spark scanned {scanned} rows; the page index was not used"
        # the control: without the page index, the one row group statistics leave is read whole
        off = spark.read.option("parquet.filter.columnindex.enabled", "false").parquet(str(path)).where(sql)
        rows, scanned = collect_with_scan_rows(off)
        assert len(rows) == 1 and scanned == OPTS["row_group_size"], sql
