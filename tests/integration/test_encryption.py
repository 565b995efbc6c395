"""Encrypted files end to end: pqbloom.write_table / read_table / ParquetFile with keys.

(The primitives -- AAD, module framing, ciphers, properties, KMS and key tools -- are in
tests/unit/crypto/test_crypto.py; the keys and helpers both use are in tests/conftest.py.)

- every encrypted parquet-testing fixture decrypts to its documented values;
- round trips pqbloom -> pqbloom and pqbloom <-> pyarrow (GCM and GCM-CTR, encrypted and
  plaintext footer, uniform and per-column keys, several row groups, page index, dictionary
  and v2 pages); pyarrow runs in a subprocess since it may std::terminate;
- encrypted Bloom filters, checked independently of our reader with raw AES-GCM;
- tampering, wrong/missing keys and prefixes, truncation and module splicing raise typed
  errors that never show a key.
"""

from __future__ import annotations

import json
import struct
import zlib
from pathlib import Path

import numpy as np
import pytest
from cryptography.hazmat.primitives.ciphers.aead import AESGCM

import pqbloom
from pqbloom.bloom import BloomFilter
from pqbloom.crypto import (
    CryptoFactory,
    EncryptionConfiguration,
    FileDecryptionProperties,
    FileEncryptionProperties,
    InMemoryKms,
    KmsConnectionConfig,
    ModuleType,
)
from pqbloom.errors import (
    AuthenticationError,
    ChecksumError,
    CorruptFileError,
    DecryptionError,
    EncryptionError,
    KeyNotFoundError,
)
from pqbloom.file import encryption as crypto_io
from pqbloom.format import T, decode, decode_prefix, encode
from tests.conftest import (
    ALL_KEYS,
    COL_KEY,
    K16,
    K32,
    KEY,
    MASTER,
    OTHER_KEY,
    assert_no_key_in,
    fixture_file,
    key_retriever,
    run_pyarrow,
    split_tail,
)
from tests.corpora import needs
from tests.paths import FIXTURES_DATA as DATA

COLUMN_OF_KEY_256 = {"kc1": "double_field", "kc2": "float_field", "kc3": "boolean_field", "kc4": "int32_field",
                     "kc5": "ba_field", "kc6": "flba_field", "kc7": "int64_field.list.element", "kc8": "int96_field"}
FLAT = ["boolean_field", "int32_field", "int96_field", "float_field", "double_field", "ba_field", "flba_field"]

# name -> (key set, encrypted columns (None: all), aad prefix to supply)
FIXTURES = {
    "uniform_encryption.parquet.encrypted": ("128", None, None),
    "encrypt_columns_and_footer.parquet.encrypted": ("128", {"double_field", "float_field"}, None),
    "encrypt_columns_and_footer_aad.parquet.encrypted": ("128", {"double_field", "float_field"}, None),
    "encrypt_columns_and_footer_ctr.parquet.encrypted": ("128", {"double_field", "float_field"}, None),
    "encrypt_columns_plaintext_footer.parquet.encrypted": ("128", {"double_field", "float_field"}, None),
    "aes256/uniform_encryption.parquet.encrypted": ("256", None, None),
    "aes256/encrypt_columns_and_footer.parquet.encrypted": ("256", "all", None),
    "aes256/encrypt_columns_and_footer_disable_aad_storage.parquet.encrypted": ("256", "all", b"tester"),
}
OTHER_FIXTURES = {"external_key_material_java.parquet.encrypted"}


def check_dataset(table: pqbloom.Table, n: int = 50) -> None:
    """The shared 50-row dataset of the parquet-testing encryption fixtures."""
    i = np.arange(n)
    cols = {c.field.name: c for c in table.columns}
    if "boolean_field" in cols:
        assert cols["boolean_field"].values.tolist() == (i % 2 == 0).tolist()
    if "int32_field" in cols:
        assert cols["int32_field"].values.tolist() == i.tolist()
    if "int96_field" in cols:
        words = np.ascontiguousarray(cols["int96_field"].values).view("<u4").reshape(n, 3)
        assert words.tolist() == np.stack([i, i + 1, i + 2], axis=1).tolist()
    if "float_field" in cols:
        assert cols["float_field"].values.tolist() == (i * np.float32(1.1)).astype(np.float32).tolist()
    if "double_field" in cols:
        np.testing.assert_array_equal(cols["double_field"].values, i * 1.1111111)
    if "ba_field" in cols:
        assert cols["ba_field"].to_pylist() == [b"parquet%03d" % k if k % 2 == 0 else None for k in range(n)]
    if "flba_field" in cols:
        assert [bytes(r) for r in cols["flba_field"].values] == [bytes([k]) * 10 for k in range(n)]


# =============================================================================================
# fixtures


@needs(DATA)
def test_every_encrypted_fixture_is_known():
    found = {str(p.relative_to(DATA)) for p in DATA.rglob("*.parquet.encrypted")}
    assert found, f"no encrypted fixtures under {DATA}"
    assert found <= set(FIXTURES) | OTHER_FIXTURES, sorted(found - set(FIXTURES) - OTHER_FIXTURES)
    # the manifest lists these as extracted
    assert {"uniform_encryption.parquet.encrypted", "encrypt_columns_plaintext_footer.parquet.encrypted",
            "encrypt_columns_and_footer_ctr.parquet.encrypted", "aes256/uniform_encryption.parquet.encrypted",
            "external_key_material_java.parquet.encrypted"} <= found


def _fixture_props(name: str, how: str) -> FileDecryptionProperties:
    keyset, _, aad = FIXTURES[name]
    keys = K16 if keyset == "128" else K32
    if how == "retriever":
        return FileDecryptionProperties(key_retriever=key_retriever(keys), aad_prefix=aad)
    if keyset == "128":
        column_keys = {"double_field": keys["kc1"], "float_field": keys["kc2"]}
    else:
        column_keys = {col: keys[kid] for kid, col in COLUMN_OF_KEY_256.items()}
    return FileDecryptionProperties(footer_key=keys["kf"], column_keys=column_keys, aad_prefix=aad)


@pytest.mark.parametrize("how", ["retriever", "explicit"])
@pytest.mark.parametrize("name", sorted(FIXTURES))
def test_fixture_decrypts_to_documented_values(name, how):
    path = fixture_file(name)
    props = _fixture_props(name, how)
    table = pqbloom.read_table(path, columns=FLAT, decryption_properties=props)
    assert table.num_rows == 50 and table.column_names == FLAT
    check_dataset(table)
    with pqbloom.ParquetFile(path, decryption_properties=props) as pf:
        assert pf.num_rows == 50 and pf.num_row_groups == 1
        encrypted = FIXTURES[name][1]
        for desc in pf.columns:
            meta = pf.column_chunk(0, desc.dotted_path)  # decrypted metadata
            expect = encrypted is None or encrypted == "all" or desc.dotted_path in encrypted
            assert meta.path_in_schema == desc.dotted_path and meta.is_encrypted is expect
            assert pf.decryption.column_encrypted(desc) is expect
            if desc.dotted_path in ("double_field", "float_field"):
                assert meta.statistics is not None  # the full metadata, not the stripped copy
        nested = [d.dotted_path for d in pf.columns if d.max_repetition_level > 0]
        assert nested, "int64_field is repeated in every fixture"
        # the repeated leaf (bare REPEATED INT64 or int64_field.list.element, kc7 in the aes256 set) reads
        # as the list column of its top-level field
        lists = pf.read(nested)
        assert lists.column_names == ["int64_field"]
        assert lists.column("int64_field").to_pylist() == [[2 * i * 10**12, (2 * i + 1) * 10**12] for i in range(50)]
        whole = pf.read()
        assert whole.column("int64_field").to_pylist() == lists.column("int64_field").to_pylist()
        # one column at a time, each row group
        for col in FLAT:
            check_dataset(pf.read_row_group(0, [col]))


def test_fixture_stored_aad_prefix():
    path = fixture_file("encrypt_columns_and_footer_aad.parquet.encrypted")
    check_dataset(pqbloom.read_table(path, columns=FLAT, decryption_properties=FileDecryptionProperties(
        key_retriever=key_retriever(K16))))
    check_dataset(pqbloom.read_table(path, columns=FLAT, decryption_properties=FileDecryptionProperties(
        key_retriever=key_retriever(K16), aad_prefix=b"tester")))
    with pytest.raises(DecryptionError, match="(?i)aad prefix") as info:
        pqbloom.read_table(path, columns=FLAT, decryption_properties=FileDecryptionProperties(
            key_retriever=key_retriever(K16), aad_prefix=b"other"))
    assert_no_key_in(info.value)


def test_fixture_supplied_aad_prefix():
    name = "aes256/encrypt_columns_and_footer_disable_aad_storage.parquet.encrypted"
    path = fixture_file(name)
    check_dataset(pqbloom.read_table(path, columns=FLAT, decryption_properties=FileDecryptionProperties(
        key_retriever=key_retriever(K32), aad_prefix=b"tester")))
    with pytest.raises(KeyNotFoundError, match="aad_prefix") as info:
        pqbloom.read_table(path, columns=FLAT, decryption_properties=FileDecryptionProperties(key_retriever=key_retriever(K32)))
    assert_no_key_in(info.value)
    with pytest.raises(AuthenticationError) as info:
        pqbloom.read_table(path, columns=FLAT, decryption_properties=FileDecryptionProperties(
            key_retriever=key_retriever(K32), aad_prefix=b"tester2"))
    assert_no_key_in(info.value)


def test_fixture_plaintext_footer_signed_and_readable_without_keys():
    path = fixture_file("encrypt_columns_plaintext_footer.parquet.encrypted")
    data = path.read_bytes()
    assert data[:4] == data[-4:] == b"PAR1"
    # with keys: signature verified, everything readable
    check_dataset(pqbloom.read_table(path, columns=FLAT, decryption_properties=FileDecryptionProperties(
        key_retriever=key_retriever(K16))))
    # a wrong footer key fails the signature check
    with pytest.raises(AuthenticationError, match="signature") as info:
        pqbloom.ParquetFile(path, decryption_properties=FileDecryptionProperties(
            footer_key=K16["kc1"], column_keys={"double_field": K16["kc1"], "float_field": K16["kc2"]}))
    assert_no_key_in(info.value)
    # a flipped bit in the plaintext footer (inside created_by) fails it too
    pos = data.rfind(b"parquet-cpp")
    assert pos > 0
    tampered = bytearray(data)
    tampered[pos] ^= 0x01
    with pytest.raises(AuthenticationError):
        pqbloom.ParquetFile(bytes(tampered), decryption_properties=FileDecryptionProperties(key_retriever=key_retriever(K16)))
    # ...but a legacy read without keys does not check it, and reads the plaintext columns
    plain = ["boolean_field", "int32_field", "int96_field", "ba_field", "flba_field"]
    with pqbloom.ParquetFile(path) as pf:
        check_dataset(pf.read(plain))
        for col in ("double_field", "float_field"):
            with pytest.raises(KeyNotFoundError, match=col):
                pf.read([col])
            with pytest.raises(KeyNotFoundError, match=col):
                pf.column_chunk(0, col)
            with pytest.raises(KeyNotFoundError, match=col):
                pf.bloom_filter(0, col)
        with pytest.raises(KeyNotFoundError, match="float_field"):  # the first encrypted column in FLAT
            pf.read(FLAT)
    # only one column key: the other column still names itself
    with pqbloom.ParquetFile(path, decryption_properties=FileDecryptionProperties(
            footer_key=K16["kf"], column_keys={"double_field": K16["kc1"]})) as pf:
        check_dataset(pf.read(["double_field", "ba_field"]))
        with pytest.raises(KeyNotFoundError, match="float_field"):
            pf.read(["float_field"])


def test_fixture_encrypted_footer_needs_keys():
    path = fixture_file("encrypt_columns_and_footer.parquet.encrypted")
    with pytest.raises(KeyNotFoundError, match="decryption_properties"):
        pqbloom.ParquetFile(path)
    with pytest.raises(KeyNotFoundError, match="footer"):
        pqbloom.ParquetFile(path, decryption_properties=FileDecryptionProperties(column_keys={"x": K16["kc1"]}))
    # footer key only: the plaintext columns read, the keyed ones name themselves
    with pqbloom.ParquetFile(path, decryption_properties=FileDecryptionProperties(footer_key=K16["kf"])) as pf:
        check_dataset(pf.read(["boolean_field", "ba_field"]))
        with pytest.raises(KeyNotFoundError, match="float_field") as info:
            pf.read(["float_field"])
        assert_no_key_in(info.value)
    # a retriever that does not know a key id
    keys = {"kf": K16["kf"], "kc1": K16["kc1"]}
    with pqbloom.ParquetFile(path, decryption_properties=FileDecryptionProperties(key_retriever=key_retriever(keys))) as pf:
        check_dataset(pf.read(["double_field"]))
        with pytest.raises(KeyNotFoundError, match="float_field") as info:
            pf.read(["float_field"])
        assert_no_key_in(info.value)
    # a wrong column key
    with pqbloom.ParquetFile(path, decryption_properties=FileDecryptionProperties(
            footer_key=K16["kf"], column_keys={"double_field": K16["kc2"], "float_field": K16["kc2"]})) as pf:
        check_dataset(pf.read(["float_field"]))
        with pytest.raises(AuthenticationError, match="double_field") as info:
            pf.read(["double_field"])
        assert_no_key_in(info.value)


def test_fixture_ctr_pages_are_ctr():
    path = fixture_file("encrypt_columns_and_footer_ctr.parquet.encrypted")
    props = FileDecryptionProperties(key_retriever=key_retriever(K16))
    with pqbloom.ParquetFile(path, decryption_properties=props) as pf:
        assert pf.decryption.ctx.algorithm_name == "AES_GCM_CTR_V1"
        check_dataset(pf.read(FLAT))


def test_fixture_external_key_material_java():
    path = fixture_file("external_key_material_java.parquet.encrypted")
    factory = CryptoFactory(lambda config: InMemoryKms(MASTER))
    props = factory.file_decryption_properties(KmsConnectionConfig(), file_path=path)
    table = pqbloom.read_table(path, decryption_properties=props)
    assert table.column("integers").to_pylist() == list(range(100))
    assert table.column("strings").to_pylist() == ["abcdefghij"[i % 10] + str(i) for i in range(100)]
    # without the file path the sidecar cannot be found
    with pytest.raises(KeyNotFoundError):
        pqbloom.read_table(path, decryption_properties=factory.file_decryption_properties(KmsConnectionConfig()))
    # a KMS holding a wrong master key
    bad = CryptoFactory(lambda config: InMemoryKms({**MASTER, "kc2": K16["kc1"]}))
    with pqbloom.ParquetFile(path, decryption_properties=bad.file_decryption_properties(
            KmsConnectionConfig(), file_path=path)) as pf:
        assert pf.read(["integers"]).column("integers").to_pylist() == list(range(100))
        with pytest.raises(AuthenticationError) as info:
            pf.read(["strings"])
        assert_no_key_in(info.value)


def aad(file_aad: bytes, module_type: int, rg: int | None = None, col: int | None = None,
        page: int | None = None) -> bytes:
    out = file_aad + bytes([module_type])
    if rg is not None:
        out += struct.pack("<hh", rg, col)
    if page is not None:
        out += struct.pack("<h", page)
    return out


def gcm_open(key: bytes, module: bytes, module_aad: bytes) -> bytes:
    length = struct.unpack("<I", module[:4])[0]
    assert length == len(module) - 4
    return AESGCM(key).decrypt(module[4:16], module[16:], module_aad)


class Opened:
    """A file written by pqbloom, opened with raw AES-GCM (encrypted-footer mode)."""

    def __init__(self, data: bytes, footer_key: bytes, aad_prefix: bytes | None = None) -> None:
        self.data = data
        region, magic = split_tail(data)
        if magic == b"PARE":
            fcm, used = decode_prefix(T.FileCryptoMetaData, region)
            alg = fcm.encryption_algorithm
            self.fcm_bytes = region[:used]
        else:
            fmd, used = decode_prefix(T.FileMetaData, region)
            alg = fmd.encryption_algorithm
        fields = alg.AES_GCM_V1 or alg.AES_GCM_CTR_V1
        self.ctr = alg.AES_GCM_CTR_V1 is not None
        self.file_aad = (fields.aad_prefix or aad_prefix or b"") + fields.aad_file_unique
        self.footer_key = footer_key
        if magic == b"PARE":
            self.fmd = decode(T.FileMetaData, gcm_open(footer_key, region[used:], aad(self.file_aad, 0)))
        else:
            self.fmd = fmd

    def meta(self, rg: int, col: int, key: bytes) -> T.ColumnMetaData:
        cc = self.fmd.row_groups[rg].columns[col]
        if cc.encrypted_column_metadata is None:
            return cc.meta_data
        return decode(T.ColumnMetaData, gcm_open(key, cc.encrypted_column_metadata, aad(self.file_aad, 1, rg, col)))

    def pages(self, rg: int, col: int, key: bytes):
        """[(kind, header_offset, header_module_len, page_offset, page_module_len, header)]"""
        md = self.meta(rg, col, key)
        pos = md.dictionary_page_offset or md.data_page_offset
        end = pos + md.total_compressed_size
        out, ordinal = [], 0
        while pos < end:
            hlen = 4 + struct.unpack("<I", self.data[pos:pos + 4])[0]
            module = self.data[pos:pos + hlen]
            first_dict = not out and md.dictionary_page_offset is not None
            if first_dict:
                header = decode(T.PageHeader, gcm_open(key, module, aad(self.file_aad, 5, rg, col)))
            else:
                header = decode(T.PageHeader, gcm_open(key, module, aad(self.file_aad, 4, rg, col, ordinal)))
            kind = "dict" if header.type == T.PageType.DICTIONARY_PAGE else "data"
            out.append((kind, pos, hlen, pos + hlen, header.compressed_page_size, header))
            pos += hlen + header.compressed_page_size
            if kind == "data":
                ordinal += 1
        assert pos == end
        return out

    def reseal(self, fmd: T.FileMetaData) -> bytes:
        """The same file with a new footer, encrypted with the footer key (encrypted-footer mode)."""
        region, _ = split_tail(self.data)
        nonce = b"\x07" * 12
        body = encode(fmd)
        module = struct.pack("<I", len(body) + 28) + nonce + AESGCM(self.footer_key).encrypt(
            nonce, body, aad(self.file_aad, 0))
        new_region = self.fcm_bytes + module
        return self.data[: len(self.data) - 8 - len(region)] + new_region + struct.pack("<I", len(new_region)) + b"PARE"


def sample(n: int = 2500) -> dict:
    i = np.arange(n)
    return {
        "id": i.astype(np.int64),
        "email": [f"user{j % 300}@example.com" for j in range(n)],
        "score": [j * 0.5 if j % 7 else None for j in range(n)],
        "flag": i % 3 == 0,
        "code": (i % 11).astype(np.int32),
    }


def expected_pylists(n: int = 2500) -> dict:
    d = sample(n)
    return {"id": d["id"].tolist(), "email": d["email"], "score": d["score"], "flag": d["flag"].tolist(),
            "code": d["code"].tolist()}


WRITE_OPTS = dict(row_group_size=1000, data_page_size=512, write_page_checksum=True, compression="snappy")


# =============================================================================================
# pqbloom -> pqbloom


@pytest.mark.parametrize("algorithm", ["AES_GCM_V1", "AES_GCM_CTR_V1"])
@pytest.mark.parametrize("plaintext_footer", [False, True])
@pytest.mark.parametrize("keys", ["uniform", "columns"])
@pytest.mark.parametrize("page_version", ["1.0", "2.0"])
def test_roundtrip(tmp_path, algorithm, plaintext_footer, keys, page_version):
    path = tmp_path / "t.parquet"
    column_keys = None if keys == "uniform" else {"email": COL_KEY, "score": OTHER_KEY}
    props = FileEncryptionProperties(KEY, column_keys, algorithm=algorithm, plaintext_footer=plaintext_footer,
                                     footer_key_metadata=b"kf")
    pqbloom.write_table(sample(), path, encryption_properties=props, data_page_version=page_version, **WRITE_OPTS)
    data = path.read_bytes()
    magic = b"PAR1" if plaintext_footer else b"PARE"
    assert data[:4] == data[-4:] == magic
    assert b"@example.com" not in data  # the email column is always encrypted
    assert (b"pqbloom version" in data) is plaintext_footer
    dprops = FileDecryptionProperties(KEY, {"email": COL_KEY, "score": OTHER_KEY})
    with pqbloom.ParquetFile(path, decryption_properties=dprops) as pf:
        assert pf.num_row_groups == 3
        assert pf.read().to_pydict() == expected_pylists()
        kinds = set()
        for rg in range(3):
            for desc in pf.columns:
                meta = pf.column_chunk(rg, desc.dotted_path)
                assert meta.statistics is not None
                assert pf.decryption.column_encrypted(desc) is (keys == "uniform" or desc.dotted_path in column_keys)
                kinds.add(meta.dictionary_page_offset is not None)
        assert kinds == {True, False}  # dictionary and non-dictionary chunks
    # the raw metadata follows the rules
    opened = Opened(data, KEY)
    assert opened.ctr is (algorithm == "AES_GCM_CTR_V1")
    names = ["id", "email", "score", "flag", "code"]
    for rg_i, rg in enumerate(opened.fmd.row_groups):
        assert rg.ordinal == rg_i
        for col, cc in enumerate(rg.columns):
            name = names[col]
            own_key = column_keys is not None and name in column_keys
            encrypted = column_keys is None or own_key
            assert (cc.crypto_metadata is not None) is encrypted
            if not encrypted:
                assert cc.encrypted_column_metadata is None and cc.meta_data.statistics is not None
            elif own_key:
                assert cc.crypto_metadata.ENCRYPTION_WITH_COLUMN_KEY.path_in_schema == [name]
                assert cc.encrypted_column_metadata is not None
                assert (cc.meta_data is not None) is plaintext_footer
                if plaintext_footer:
                    assert cc.meta_data.statistics is None and cc.meta_data.encoding_stats is None
            else:
                assert cc.crypto_metadata.ENCRYPTION_WITH_FOOTER_KEY is not None
                assert (cc.encrypted_column_metadata is not None) is plaintext_footer
            assert cc.column_index_offset is not None and cc.offset_index_offset is not None
    # reading without keys
    if plaintext_footer:
        with pqbloom.ParquetFile(path) as pf:
            if keys == "columns":
                assert pf.read(["id", "flag"]).to_pydict() == {k: expected_pylists()[k] for k in ("id", "flag")}
            with pytest.raises(KeyNotFoundError, match="email"):
                pf.read(["email"])
    else:
        with pytest.raises(KeyNotFoundError):
            pqbloom.ParquetFile(path)


def test_roundtrip_every_module_is_where_the_rules_say(tmp_path):
    """Walk a file with raw AES-GCM: page headers, pages, CRCs, sizes, page indexes, ordinals."""
    path = tmp_path / "t.parquet"
    props = FileEncryptionProperties(KEY, {"email": COL_KEY}, aad_prefix=b"tester")
    pqbloom.write_table(sample(), path, encryption_properties=props, **WRITE_OPTS)
    opened = Opened(path.read_bytes(), KEY)
    assert opened.file_aad.startswith(b"tester") and len(opened.file_aad) == 6 + 8
    data = opened.data
    for rg in range(3):
        key = COL_KEY
        col = 1
        pages = opened.pages(rg, col, key)
        # 300 distinct emails: dictionary-encoded in the two full row groups, plain in the last
        assert pages[0][0] == ("dict" if rg < 2 else "data")
        assert len([p for p in pages if p[0] == "data"]) >= 2
        ordinal = 0
        for kind, _hoff, _hlen, poff, plen, header in pages:
            module = data[poff:poff + plen]
            # compressed_page_size is the whole page module; the CRC covers the stored module
            assert struct.unpack("<I", module[:4])[0] + 4 == plen
            assert header.crc is not None and header.crc & 0xFFFFFFFF == zlib.crc32(module)
            if kind == "dict":
                body = gcm_open(key, module, aad(opened.file_aad, 3, rg, col))
            else:
                body = gcm_open(key, module, aad(opened.file_aad, 2, rg, col, ordinal))
                ordinal += 1
            assert len(body) == plen - 32
        cc = opened.fmd.row_groups[rg].columns[col]
        ci = decode(T.ColumnIndex, gcm_open(key, data[cc.column_index_offset:][:cc.column_index_length],
                                            aad(opened.file_aad, 6, rg, col)))
        oi = decode(T.OffsetIndex, gcm_open(key, data[cc.offset_index_offset:][:cc.offset_index_length],
                                            aad(opened.file_aad, 7, rg, col)))
        data_pages = [p for p in pages if p[0] == "data"]
        assert len(ci.null_pages) == len(oi.page_locations) == len(data_pages)
        for loc, (_, hoff, hlen, _, plen, _) in zip(oi.page_locations, data_pages):
            assert (loc.offset, loc.compressed_page_size) == (hoff, hlen + plen)
        # plaintext column: no module framing at all
        md = opened.meta(rg, 0, KEY)
        header, _ = decode_prefix(T.PageHeader, data[md.data_page_offset:])
        assert header.type in (T.PageType.DATA_PAGE, T.PageType.DATA_PAGE_V2)


def test_dictionary_page_found_without_dictionary_page_offset(tmp_path):
    """Old writers leave dictionary_page_offset unset and point data_page_offset at the dictionary
    page; the reader then finds the dictionary page header by its module type (5, not 4)."""
    path = tmp_path / "t.parquet"
    pqbloom.write_table(sample(), path, encryption_properties=FileEncryptionProperties(KEY), **WRITE_OPTS)
    opened = Opened(path.read_bytes(), KEY)
    fmd = opened.fmd
    md = fmd.row_groups[0].columns[1].meta_data
    assert md.dictionary_page_offset is not None
    md.data_page_offset, md.dictionary_page_offset = md.dictionary_page_offset, None
    with pqbloom.ParquetFile(opened.reseal(fmd), decryption_properties=FileDecryptionProperties(KEY)) as pf:
        assert pf.read(["email"]).column("email").to_pylist() == sample()["email"]


def test_aad_prefix_not_stored(tmp_path):
    path = tmp_path / "t.parquet"
    props = FileEncryptionProperties(KEY, aad_prefix=b"table-7", store_aad_prefix=False)
    pqbloom.write_table(sample(300), path, encryption_properties=props)
    good = FileDecryptionProperties(KEY, aad_prefix=b"table-7")
    assert pqbloom.read_table(path, decryption_properties=good).to_pydict() == expected_pylists(300)
    with pytest.raises(KeyNotFoundError, match="aad_prefix"):
        pqbloom.read_table(path, decryption_properties=FileDecryptionProperties(KEY))
    with pytest.raises(AuthenticationError) as info:
        pqbloom.read_table(path, decryption_properties=FileDecryptionProperties(KEY, aad_prefix=b"table-8"))
    assert_no_key_in(info.value)


def test_key_retriever_and_key_metadata(tmp_path):
    path = tmp_path / "t.parquet"
    props = FileEncryptionProperties(KEY, {"email": COL_KEY}, footer_key_metadata=b"kf",
                                     column_key_metadata={"email": b"kc1"})
    pqbloom.write_table(sample(300), path, encryption_properties=props)
    keys = {"kf": KEY, "kc1": COL_KEY}
    table = pqbloom.read_table(path, decryption_properties=FileDecryptionProperties(key_retriever=key_retriever(keys)))
    assert table.to_pydict() == expected_pylists(300)


def test_crypto_factory_roundtrip(tmp_path):
    path = tmp_path / "t.parquet"
    factory = CryptoFactory(lambda config: InMemoryKms(MASTER))
    props = factory.file_encryption_properties(
        KmsConnectionConfig(), EncryptionConfiguration(footer_key="kf", column_keys={"kc1": ["email"], "kc2": ["id"]},
                                                       internal_key_material=False), file_path=path)
    pqbloom.write_table(sample(300), path, encryption_properties=props)
    reader = CryptoFactory(lambda config: InMemoryKms(MASTER))
    table = pqbloom.read_table(path, decryption_properties=reader.file_decryption_properties(
        KmsConnectionConfig(), file_path=path))
    assert table.to_pydict() == expected_pylists(300)


def test_writer_validates_properties(tmp_path):
    path = tmp_path / "t.parquet"
    with pytest.raises(EncryptionError, match="nope"):
        pqbloom.write_table(sample(10), path, encryption_properties=FileEncryptionProperties(KEY, {"nope": COL_KEY}))
    with pytest.raises(TypeError):
        pqbloom.write_table(sample(10), path, encryption_properties={"footer_key": KEY})
    assert not path.exists()
    # a plaintext file is refused when keys are given (it could stand in for an encrypted one)
    pqbloom.write_table(sample(10), path)
    with pytest.raises(DecryptionError, match="not encrypted"):
        pqbloom.ParquetFile(path, decryption_properties=FileDecryptionProperties(KEY))
    with pytest.raises(TypeError):
        pqbloom.ParquetFile(path, decryption_properties={"footer_key": KEY})


def test_row_group_ordinal_limit(tmp_path):
    """32768 row groups fit an encrypted file; the 32769th does not."""
    path = tmp_path / "many.parquet"
    n = 32768 + 1
    with pytest.raises(EncryptionError, match="row group") as info:
        pqbloom.write_table({"a": np.arange(n, dtype=np.int32)}, path, row_group_size=1,
                            encryption_properties=FileEncryptionProperties(KEY), write_page_index=False,
                            write_statistics=False, compression="none")
    assert_no_key_in(info.value)
    assert not path.exists() and not list(tmp_path.iterdir())  # nothing published, no temp file left


@pytest.mark.parametrize("what", ["page", "column", "row group"])
def test_ordinal_limits_with_a_lower_limit(tmp_path, monkeypatch, what):
    monkeypatch.setattr(crypto_io, "MAX_ORDINAL", 2)
    path = tmp_path / "t.parquet"
    table = {f"c{i}": np.arange(12, dtype=np.int64) for i in range(4 if what == "column" else 1)}
    opts = dict(encryption_properties=FileEncryptionProperties(KEY), use_dictionary=False, compression="none")
    if what == "page":
        opts["data_page_size"] = 8  # one value per page
    if what == "row group":
        opts["row_group_size"] = 3  # four row groups
    with pytest.raises(EncryptionError, match=what):
        pqbloom.write_table(table, path, **opts)
    assert not path.exists()
    # within the limit it works
    small = {k: v[:3] for k, v in table.items()} if what != "column" else {"c0": table["c0"]}
    opts.pop("row_group_size", None)
    pqbloom.write_table(small, path, **opts)
    assert pqbloom.read_table(path, decryption_properties=FileDecryptionProperties(KEY)).to_pydict() == \
        {k: v.tolist() for k, v in small.items()}


# =============================================================================================
# Bloom filters


@pytest.mark.parametrize("position", ["after_row_group", "end"])
@pytest.mark.parametrize("algorithm", ["AES_GCM_V1", "AES_GCM_CTR_V1"])
def test_encrypted_bloom_filters(tmp_path, position, algorithm):
    path = tmp_path / "t.parquet"
    props = FileEncryptionProperties(KEY, {"email": COL_KEY}, algorithm=algorithm)
    pqbloom.write_table(sample(), path, encryption_properties=props,
                        bloom_filter_options={"email": True, "id": True}, bloom_filter_position=position,
                        **WRITE_OPTS)
    opened = Opened(path.read_bytes(), KEY)
    data = opened.data
    emails = sample()["email"]
    dprops = FileDecryptionProperties(KEY, {"email": COL_KEY})
    with pqbloom.ParquetFile(path, decryption_properties=dprops) as pf:
        for rg in range(3):
            md = opened.meta(rg, 1, COL_KEY)
            off, length = md.bloom_filter_offset, md.bloom_filter_length
            # independently: header module (type 8) then bitset module (type 9) right after it
            hlen = 4 + struct.unpack("<I", data[off:off + 4])[0]
            header_plain = gcm_open(COL_KEY, data[off:off + hlen], aad(opened.file_aad, 8, rg, 1))
            header = decode(T.BloomFilterHeader, header_plain)
            blen = 4 + struct.unpack("<I", data[off + hlen:off + hlen + 4])[0]
            assert length == hlen + blen and blen == 4 + 28 + header.numBytes
            bitset = gcm_open(COL_KEY, data[off + hlen:off + length], aad(opened.file_aad, 9, rg, 1))
            assert len(bitset) == header.numBytes
            # the modules are bound to their type: header AAD does not open the bitset
            with pytest.raises(Exception):  # noqa: B017 - cryptography's InvalidTag
                gcm_open(COL_KEY, data[off + hlen:off + length], aad(opened.file_aad, 8, rg, 1))
            reference = BloomFilter.from_bitset(bitset)
            bf = pf.bloom_filter(rg, "email")
            assert bf.bitset() == reference.bitset()
            rows = emails[rg * 1000:(rg + 1) * 1000]
            assert all(bf.might_contain(v, T.Type.BYTE_ARRAY) for v in rows)
            assert sum(bf.might_contain(f"absent{j}@nowhere", T.Type.BYTE_ARRAY) for j in range(1000)) < 100
            # the plaintext column keeps a plaintext Bloom filter
            md0 = opened.meta(rg, 0, KEY)
            plain_bf, used = BloomFilter.parse(data[md0.bloom_filter_offset:][:md0.bloom_filter_length])
            assert used == md0.bloom_filter_length
            assert all(plain_bf.might_contain(v, T.Type.INT64) for v in range(rg * 1000, min((rg + 1) * 1000, 2500)))
            assert pf.bloom_filter(rg, "id").bitset() == plain_bf.bitset()
    # without bloom_filter_length (older writers) the reader reads the header module length first
    fmd = opened.fmd
    fields = fmd.row_groups[0].columns[1]
    md = opened.meta(0, 1, COL_KEY)
    md.bloom_filter_length = None
    fields.encrypted_column_metadata = struct.pack("<I", 0)  # replaced below
    nonce = b"\x05" * 12
    body = encode(md)
    fields.encrypted_column_metadata = struct.pack("<I", len(body) + 28) + nonce + AESGCM(COL_KEY).encrypt(
        nonce, body, aad(opened.file_aad, 1, 0, 1))
    resealed = opened.reseal(fmd)
    with pqbloom.ParquetFile(resealed, decryption_properties=dprops) as pf:
        assert pf.column_chunk(0, "email").bloom_filter_length is None
        bf = pf.bloom_filter(0, "email")
        assert all(bf.might_contain(v, T.Type.BYTE_ARRAY) for v in emails[:1000])


# =============================================================================================
# negative cases


def _bloom_file(tmp_path, name="t.parquet", props=None, checksums=False) -> Path:
    path = tmp_path / name
    props = props or FileEncryptionProperties(KEY, {"email": COL_KEY})
    pqbloom.write_table(sample(), path, encryption_properties=props, bloom_filter_options={"email": True},
                        **{**WRITE_OPTS, "write_page_checksum": checksums})
    return path


DPROPS = FileDecryptionProperties(KEY, {"email": COL_KEY})


def _read_everything(source, props=DPROPS):
    with pqbloom.ParquetFile(source, decryption_properties=props) as pf:
        pf.read()
        for rg in range(pf.num_row_groups):
            for desc in pf.columns:
                pf.bloom_filter(rg, desc.dotted_path)
                cc = pf.thrift_metadata.row_groups[rg].columns[desc.index]
                for mt, off, length in ((ModuleType.COLUMN_INDEX, cc.column_index_offset, cc.column_index_length),
                                        (ModuleType.OFFSET_INDEX, cc.offset_index_offset, cc.offset_index_length)):
                    if off is not None:
                        pf.open_module(mt, pf.range_reader.read(off, length), rg, desc)


def _flip(data: bytes, pos: int) -> bytes:
    out = bytearray(data)
    out[pos] ^= 0x10
    return bytes(out)


def test_clean_file_reads_everything(tmp_path):
    _read_everything(_bloom_file(tmp_path))


@pytest.mark.parametrize("target", ["data_page", "dict_page", "data_page_header", "dict_page_header",
                                    "column_metadata", "footer", "footer_crypto_metadata", "column_index",
                                    "offset_index", "bloom_header", "bloom_bitset", "signed_footer",
                                    "data_page_with_crc"])
def test_flipped_bit_is_detected(tmp_path, target):
    plaintext_footer = target == "signed_footer"
    path = _bloom_file(tmp_path, props=FileEncryptionProperties(KEY, {"email": COL_KEY},
                                                                plaintext_footer=plaintext_footer),
                       checksums=target == "data_page_with_crc")
    data = path.read_bytes()
    opened = Opened(data, KEY)
    rg, col = 1, 1
    pages = opened.pages(rg, col, COL_KEY)
    md = opened.meta(rg, col, COL_KEY)
    cc = opened.fmd.row_groups[rg].columns[col]
    region, _ = split_tail(data)
    footer_start = len(data) - 8 - len(region)
    if target in ("data_page", "data_page_with_crc"):
        _, _, _, poff, plen, _ = pages[2]
        bad = _flip(data, poff + plen - 20)
    elif target == "dict_page":
        _, _, _, poff, plen, _ = pages[0]
        bad = _flip(data, poff + 20)
    elif target == "data_page_header":
        _, hoff, hlen, _, _, _ = pages[1]
        bad = _flip(data, hoff + 17)
    elif target == "dict_page_header":
        _, hoff, hlen, _, _, _ = pages[0]
        bad = _flip(data, hoff + hlen - 1)
    elif target == "column_metadata":
        fmd = opened.fmd
        ecm = bytearray(fmd.row_groups[rg].columns[col].encrypted_column_metadata)
        ecm[30] ^= 0x01
        fmd.row_groups[rg].columns[col].encrypted_column_metadata = bytes(ecm)
        bad = opened.reseal(fmd)
    elif target == "footer":
        bad = _flip(data, len(data) - 8 - 40)
    elif target == "footer_crypto_metadata":
        unique = data.rfind(opened.file_aad[-8:], footer_start)
        assert unique > 0
        bad = _flip(data, unique + 3)
    elif target == "column_index":
        bad = _flip(data, cc.column_index_offset + 25)
    elif target == "offset_index":
        bad = _flip(data, cc.offset_index_offset + 25)
    elif target == "bloom_header":
        bad = _flip(data, md.bloom_filter_offset + 20)
    elif target == "bloom_bitset":
        bad = _flip(data, md.bloom_filter_offset + md.bloom_filter_length - 100)
    else:
        pos = data.rfind(b"pqbloom version")
        assert pos > footer_start
        bad = _flip(data, pos)
    assert bad != data and len(bad) == len(data) or target == "column_metadata"
    # the CRC (over the stored module) catches a flipped page first; GCM catches the rest
    error = ChecksumError if target == "data_page_with_crc" else AuthenticationError
    with pytest.raises(error) as info:
        _read_everything(bad)
    assert_no_key_in(info.value)


def test_wrong_and_missing_keys(tmp_path):
    path = _bloom_file(tmp_path)
    cases = [
        (FileDecryptionProperties(OTHER_KEY, {"email": COL_KEY}), AuthenticationError, "footer"),
        (FileDecryptionProperties(KEY, {"email": OTHER_KEY}), AuthenticationError, "email"),
        (FileDecryptionProperties(KEY), KeyNotFoundError, "email"),
        (FileDecryptionProperties(column_keys={"email": COL_KEY}), KeyNotFoundError, "footer"),
        (FileDecryptionProperties(KEY, {"email": COL_KEY}, aad_prefix=b"x"), DecryptionError, "AAD"),
    ]
    for props, error, text in cases:
        with pytest.raises(error, match=text) as info:
            _read_everything(path, props)
        assert_no_key_in(info.value)
    with pytest.raises(DecryptionError, match="16, 24 or 32") as info:
        FileDecryptionProperties(KEY, {"email": b"short-key-bytes"})
    assert_no_key_in(info.value, ALL_KEYS + (b"short-key-bytes",))


def test_truncated_file(tmp_path):
    data = _bloom_file(tmp_path).read_bytes()
    for cut in (1, 4, 8, 100, len(data) // 2):
        with pytest.raises(CorruptFileError):
            _read_everything(data[:-cut])
    # the tail kept, the middle cut out: offsets and modules no longer line up
    region, _ = split_tail(data)
    tail = data[len(data) - 8 - len(region):]
    with pytest.raises((CorruptFileError, AuthenticationError)) as info:
        _read_everything(data[:len(data) // 3] + tail)
    assert_no_key_in(info.value)
    with pytest.raises(CorruptFileError):
        _read_everything(data[:3])


def test_modules_spliced_between_files_are_rejected(tmp_path):
    props = FileEncryptionProperties(KEY, {"email": COL_KEY})
    a = _bloom_file(tmp_path, "a.parquet", props).read_bytes()
    b = _bloom_file(tmp_path, "b.parquet", props).read_bytes()
    assert len(a) == len(b) and a != b  # same layout, different nonces and file AADs
    oa, ob = Opened(a, KEY), Opened(b, KEY)
    assert oa.file_aad != ob.file_aad
    pa_, pb = oa.pages(0, 1, COL_KEY), ob.pages(0, 1, COL_KEY)
    assert [(p[1], p[2], p[4]) for p in pa_] == [(p[1], p[2], p[4]) for p in pb]

    def splice(dst: bytes, src: bytes, off: int, length: int) -> bytes:
        return dst[:off] + src[off:off + length] + dst[off + length:]

    cases = {
        "data page": splice(a, b, pa_[1][3], pa_[1][4]),
        "page header": splice(a, b, pa_[1][1], pa_[1][2]),
        "header and page": splice(a, b, pa_[1][1], pa_[1][2] + pa_[1][4]),
        "dictionary page": splice(a, b, pa_[0][3], pa_[0][4]),
        "bloom filter": splice(a, b, oa.meta(0, 1, COL_KEY).bloom_filter_offset,
                               oa.meta(0, 1, COL_KEY).bloom_filter_length),
        "footer": a[:len(a) - 8 - len(split_tail(a)[0])] + b[len(b) - 8 - len(split_tail(b)[0]):],
    }
    # within one file: two data pages of equal size swapped
    same = [p for p in pa_ if p[0] == "data" and p[4] == pa_[1][4] and p[2] == pa_[1][2]]
    if len(same) >= 2:
        x, y = same[0], same[1]
        swapped = bytearray(a)
        swapped[x[1]:x[3] + x[4]] = a[y[1]:y[3] + y[4]]
        swapped[y[1]:y[3] + y[4]] = a[x[1]:x[3] + x[4]]
        cases["pages swapped in one file"] = bytes(swapped)
    for what, data in cases.items():
        assert data != a, what
        with pytest.raises(AuthenticationError) as info:
            _read_everything(data)
        assert_no_key_in(info.value)
    _read_everything(a)
    _read_everything(b)


# =============================================================================================
# interop with pyarrow (in a subprocess: tests.conftest.run_pyarrow)

VARIANTS = [(alg, pf, v) for alg in ("AES_GCM_V1", "AES_GCM_CTR_V1") for pf in (False, True) for v in ("1.0", "2.0")]


def test_pqbloom_to_pyarrow_uniform(tmp_path):
    files = {}
    for alg, pf, v in VARIANTS:
        path = tmp_path / f"{alg}_{pf}_{v}.parquet"
        props = FileEncryptionProperties(KEY, algorithm=alg, plaintext_footer=pf, aad_prefix=b"tester",
                                         store_aad_prefix=not pf)
        pqbloom.write_table(sample(), path, encryption_properties=props, data_page_version=v, **WRITE_OPTS)
        files[path.name] = {"path": str(path), "plaintext_footer": pf}
    out = run_pyarrow(
        """
        files = json.loads(sys.argv[1])
        key = bytes.fromhex(sys.argv[2])
        result = {}
        for name, info in files.items():
            props = pe.create_decryption_properties(key, aad_prefix=b"tester")
            t = pq.read_table(info["path"], decryption_properties=props, page_checksum_verification=True)
            f = pq.ParquetFile(info["path"], decryption_properties=props)
            md = f.metadata
            stats = None
            if not info["plaintext_footer"]:  # pyarrow shows no statistics under plaintext footers
                stats = [[md.row_group(i).column(0).statistics.min, md.row_group(i).column(0).statistics.max]
                         for i in range(md.num_row_groups)]
            result[name] = {"table": table_json(t), "row_groups": md.num_row_groups, "stats": stats,
                            "has_index": md.row_group(0).column(1).has_offset_index}
        print(json.dumps(result))
        """,
        json.dumps(files), KEY.hex(),
    )
    result = json.loads(out)
    assert set(result) == set(files)
    for name, got in result.items():
        assert got["table"] == expected_pylists(), name
        assert got["row_groups"] == 3 and got["has_index"]
        if got["stats"] is not None:
            assert got["stats"] == [[0, 999], [1000, 1999], [2000, 2499]]


@pytest.mark.parametrize("plaintext_footer", [False, True])
def test_pqbloom_to_pyarrow_column_keys(tmp_path, plaintext_footer):
    files = {}
    factory = CryptoFactory(lambda config: InMemoryKms(MASTER))
    for alg in ("AES_GCM_V1", "AES_GCM_CTR_V1"):
        for internal in (True, False):
            path = tmp_path / f"{alg}_{internal}.parquet"
            config = EncryptionConfiguration(footer_key="kf", column_keys={"kc1": ["email"], "kc2": ["score", "id"]},
                                             encryption_algorithm=alg, plaintext_footer=plaintext_footer,
                                             internal_key_material=internal)
            props = factory.file_encryption_properties(KmsConnectionConfig(), config, file_path=path)
            pqbloom.write_table(sample(), path, encryption_properties=props, data_page_version="2.0", **WRITE_OPTS)
            files[path.name] = str(path)
    out = run_pyarrow(
        """
        files = json.loads(sys.argv[1])
        factory = pe.CryptoFactory(Kms)
        result = {}
        for name, path in files.items():
            props = factory.file_decryption_properties(pe.KmsConnectionConfig(), pe.DecryptionConfiguration(), path)
            t = pq.read_table(path, decryption_properties=props, page_checksum_verification=True)
            result[name] = table_json(t)
        print(json.dumps(result))
        """,
        json.dumps(files),
    )
    result = json.loads(out)
    assert set(result) == set(files)
    for name, table in result.items():
        assert table == expected_pylists(), name


@pytest.fixture(scope="module")
def pyarrow_written(tmp_path_factory):
    out = tmp_path_factory.mktemp("pyarrow_written")
    run_pyarrow(
        """
        out = sys.argv[1]
        key = bytes.fromhex(sys.argv[2])
        n = 2500
        t = pa.table({"id": pa.array(range(n), pa.int64()),
                      "email": [f"user{j % 300}@example.com" for j in range(n)],
                      "score": [j * 0.5 if j % 7 else None for j in range(n)],
                      "flag": [j % 3 == 0 for j in range(n)],
                      "code": pa.array([j % 11 for j in range(n)], pa.int32())})
        opts = dict(row_group_size=1000, data_page_size=2048, write_page_index=True, write_page_checksum=True)
        for alg in ("AES_GCM_V1", "AES_GCM_CTR_V1"):
            for pf in (False, True):
                for v in ("1.0", "2.0"):
                    props = pe.create_encryption_properties(key, encryption_algorithm=alg, plaintext_footer=pf,
                                                            aad_prefix=b"tester", store_aad_prefix=pf)
                    pq.write_table(t, f"{out}/uniform_{alg}_{pf}_{v}.parquet", encryption_properties=props,
                                   data_page_version=v, **opts)
        factory = pe.CryptoFactory(Kms)
        for alg in ("AES_GCM_V1", "AES_GCM_CTR_V1"):
            for pf in (False, True):
                path = f"{out}/columns_{alg}_{pf}.parquet"
                config = pe.EncryptionConfiguration(footer_key="kf", column_keys={"kc1": ["email"], "kc2": ["score"]},
                                                    encryption_algorithm=alg, plaintext_footer=pf,
                                                    internal_key_material=pf)
                props = factory.file_encryption_properties(pe.KmsConnectionConfig(), config, path)
                pq.write_table(t, path, encryption_properties=props, data_page_version="2.0", **opts)
        """,
        str(out), KEY.hex(),
    )
    return out


@pytest.mark.parametrize(("alg", "pf", "v"), VARIANTS)
def test_pyarrow_to_pqbloom_uniform(pyarrow_written, alg, pf, v):
    path = pyarrow_written / f"uniform_{alg}_{pf}_{v}.parquet"
    props = FileDecryptionProperties(KEY, aad_prefix=b"tester")
    with pqbloom.ParquetFile(path, decryption_properties=props, verify_checksums=True) as pf_:
        assert pf_.num_row_groups == 3
        assert pf_.read().to_pydict() == expected_pylists()
        _read_everything(path, props)
    # pyarrow's page CRCs cover the stored (encrypted) module, like ours
    opened = Opened(path.read_bytes(), KEY, b"tester")
    if not pf:
        for _kind, _, _, poff, plen, header in opened.pages(1, 1, KEY):
            module = opened.data[poff:poff + plen]
            assert struct.unpack("<I", module[:4])[0] + 4 == plen
            assert header.crc is not None and header.crc & 0xFFFFFFFF == zlib.crc32(module)
    with pytest.raises(AuthenticationError):
        pqbloom.read_table(path, decryption_properties=FileDecryptionProperties(OTHER_KEY, aad_prefix=b"tester"))


@pytest.mark.parametrize("alg", ["AES_GCM_V1", "AES_GCM_CTR_V1"])
@pytest.mark.parametrize("pf", [False, True])
def test_pyarrow_to_pqbloom_column_keys(pyarrow_written, alg, pf):
    path = pyarrow_written / f"columns_{alg}_{pf}.parquet"
    factory = CryptoFactory(lambda config: InMemoryKms(MASTER))
    props = factory.file_decryption_properties(KmsConnectionConfig(), file_path=path)
    assert pqbloom.read_table(path, decryption_properties=props).to_pydict() == expected_pylists()
    _read_everything(path, props)
    if pf:
        with pqbloom.ParquetFile(path) as f:
            assert f.read(["id", "flag", "code"]).to_pydict() == {
                k: v for k, v in expected_pylists().items() if k in ("id", "flag", "code")}
            with pytest.raises(KeyNotFoundError, match="score"):
                f.read(["score"])


def test_public_names(tmp_path):
    """The user-facing names, as the README and docs/guide/encryption.md show them."""
    path = tmp_path / "t.parquet"
    pqbloom.write_table({"email": ["a@x", "b@x"]}, path, bloom_filter_options={"email": True},
                        encryption_properties=pqbloom.FileEncryptionProperties(KEY, {"email": COL_KEY}))
    props = pqbloom.FileDecryptionProperties(KEY, {"email": COL_KEY})
    assert pqbloom.read_table(path, decryption_properties=props).to_pydict() == {"email": ["a@x", "b@x"]}
    assert pqbloom.ParquetFile(path, decryption_properties=props).bloom_filter(0, "email").might_contain(
        "a@x", T.Type.BYTE_ARRAY)
    for name in ("CryptoFactory", "InMemoryKms", "KmsClient", "KmsConnectionConfig", "EncryptionConfiguration",
                 "DecryptionConfiguration", "FileEncryptionProperties", "FileDecryptionProperties"):
        assert name in pqbloom.__all__ and getattr(pqbloom, name) is getattr(pqbloom.crypto, name)
