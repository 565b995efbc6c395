"""Parquet Modular Encryption primitives (pqbloom.crypto): AAD, module framing, ciphers, properties, key tools.

Encrypted files written and read end to end through the public API are in
tests/integration/test_encryption.py; the keys and helpers both use are in tests/conftest.py.

The fixture tests walk real encrypted files (parquet-cpp 19, parquet-mr 1.12/1.14/1.17) with
nothing but pqbloom.format and pqbloom.crypto: tail -> footer -> column metadata -> page header
and page modules -> ColumnIndex / OffsetIndex -> Bloom filter modules.
"""

from __future__ import annotations

import base64
import json
import os
import struct
from pathlib import Path

import numpy as np
import pytest
import xxhash
from cryptography.hazmat.primitives.ciphers import Cipher, algorithms, modes
from cryptography.hazmat.primitives.ciphers.aead import AESGCM

from pqbloom.crypto import (
    AES_GCM_CTR_V1,
    CryptoFactory,
    DecryptionConfiguration,
    EncryptionConfiguration,
    FileDecryptionProperties,
    FileEncryptionProperties,
    InMemoryKms,
    KmsConnectionConfig,
    ModuleCipher,
    ModuleType,
    check_ordinal,
    decrypt_ctr,
    decrypt_gcm,
    decrypt_key_locally,
    encrypt_ctr,
    encrypt_gcm,
    encrypt_key_locally,
    key_material_path,
    module_aad,
    read_module_length,
    sign_footer,
    verify_footer_signature,
)
from pqbloom.crypto.ciphers import InvocationCounter
from pqbloom.errors import (
    AuthenticationError,
    CorruptFileError,
    CryptoError,
    DecryptionError,
    EncryptionError,
    KeyNotFoundError,
    ParquetError,
)
from pqbloom.file.encryption import decode_footer_region as read_footer
from pqbloom.file.encryption import decrypted_column_metadata, finalize_column_chunk, footer_tail
from pqbloom.format import T, algorithm_params, column_crypto, decode, decode_prefix, encode, encryption_algorithm
from pqbloom.io import AtomicFileSink
from tests.conftest import K16, K32, MASTER, fixture_file, key_retriever, run_pyarrow, split_tail

KEY = bytes(range(16))
FILE_AAD = b"prefix" + b"\x01\x02\x03\x04\x05\x06\x07\x08"


# =============================================================================================
# AAD


@pytest.mark.parametrize(
    ("module_type", "suffix"),
    [
        (ModuleType.FOOTER, b"\x00"),
        (ModuleType.COLUMN_META_DATA, b"\x01\x03\x00\x05\x01"),
        (ModuleType.DATA_PAGE, b"\x02\x03\x00\x05\x01\x07\x02"),
        (ModuleType.DICTIONARY_PAGE, b"\x03\x03\x00\x05\x01"),
        (ModuleType.DATA_PAGE_HEADER, b"\x04\x03\x00\x05\x01\x07\x02"),
        (ModuleType.DICTIONARY_PAGE_HEADER, b"\x05\x03\x00\x05\x01"),
        (ModuleType.COLUMN_INDEX, b"\x06\x03\x00\x05\x01"),
        (ModuleType.OFFSET_INDEX, b"\x07\x03\x00\x05\x01"),
        (ModuleType.BLOOM_FILTER_HEADER, b"\x08\x03\x00\x05\x01"),
        (ModuleType.BLOOM_FILTER_BITSET, b"\x09\x03\x00\x05\x01"),
    ],
)
def test_module_aad_table(module_type, suffix):
    # row group 3, column 0x105 = 261, page 0x207 = 519; int16 little-endian
    assert module_aad(FILE_AAD, module_type, 3, 261, 519) == FILE_AAD + suffix


def test_module_type_numbers():
    assert [int(m) for m in ModuleType] == list(range(10))
    assert ModuleType.BLOOM_FILTER_HEADER == 8 and ModuleType.BLOOM_FILTER_BITSET == 9


@pytest.mark.parametrize("field", ["row_group", "column", "page"])
def test_module_aad_ordinal_overflow(field):
    args = {"row_group": 0, "column": 0, "page": 0}
    args[field] = 32767
    module_aad(b"", ModuleType.DATA_PAGE, **args)  # the largest int16 is fine
    args[field] = 32768
    with pytest.raises(EncryptionError, match="32767|int16"):
        module_aad(b"", ModuleType.DATA_PAGE, **args)
    check_ordinal(field, 32767)
    with pytest.raises(EncryptionError, match="int16"):
        check_ordinal(field, 32768)


def test_module_aad_needs_ordinals():
    with pytest.raises(EncryptionError):
        module_aad(b"", ModuleType.COLUMN_INDEX)  # no row group / column
    with pytest.raises(EncryptionError):
        module_aad(b"", ModuleType.DATA_PAGE, 0, 0)  # no page ordinal
    assert module_aad(b"x", ModuleType.DICTIONARY_PAGE, 0, 0) == b"x\x03\x00\x00\x00\x00"


# =============================================================================================
# module framing, GCM and CTR


def test_gcm_module_layout_and_roundtrip():
    aad = module_aad(FILE_AAD, ModuleType.COLUMN_INDEX, 0, 1)
    for size in (0, 1, 100, 5000):
        plaintext = os.urandom(size)
        module = encrypt_gcm(KEY, plaintext, aad)
        assert len(module) == size + 32
        assert struct.unpack("<I", module[:4])[0] == len(module) - 4 == size + 28
        assert read_module_length(module) == size + 28
        # independent check with the raw AEAD: nonce || ciphertext || tag
        assert AESGCM(KEY).decrypt(module[4:16], module[16:], aad) == plaintext
        assert decrypt_gcm(KEY, module, aad) == plaintext
        assert decrypt_gcm(KEY, bytearray(module), aad) == plaintext
        assert decrypt_gcm(KEY, memoryview(module), aad) == plaintext


def test_ctr_module_layout_and_iv():
    plaintext = os.urandom(1000)
    module = encrypt_ctr(KEY, plaintext)
    assert len(module) == len(plaintext) + 16
    assert struct.unpack("<I", module[:4])[0] == len(module) - 4 == len(plaintext) + 12
    nonce = module[4:16]
    # the documented IV: nonce || 00 00 00 01 (big-endian counter 1)
    dec = Cipher(algorithms.AES(KEY), modes.CTR(nonce + b"\x00\x00\x00\x01")).decryptor()
    assert dec.update(module[16:]) + dec.finalize() == plaintext
    assert decrypt_ctr(KEY, module) == plaintext
    # a counter starting at 0 would not decrypt it
    wrong = Cipher(algorithms.AES(KEY), modes.CTR(nonce + b"\x00\x00\x00\x00")).decryptor()
    assert wrong.update(module[16:]) + wrong.finalize() != plaintext


def test_nonces_are_fresh():
    aad = module_aad(b"", ModuleType.FOOTER)
    modules = [encrypt_gcm(KEY, b"same plaintext", aad) for _ in range(50)]
    assert len({m[4:16] for m in modules}) == 50
    assert len({m for m in modules}) == 50
    ctr = [encrypt_ctr(KEY, b"same plaintext") for _ in range(50)]
    assert len({m[4:16] for m in ctr}) == 50
    cipher = ModuleCipher("AES_GCM_V1", b"")
    assert len({cipher.encrypt(KEY, ModuleType.DATA_PAGE, b"p", 0, 0, 0)[4:16] for _ in range(20)}) == 20


@pytest.mark.parametrize("byte_index", [0, 3, 4, 15, 16, 30, 31, 32, 47])
def test_gcm_tamper_any_part(byte_index):
    """Flip one bit in the length field, the nonce, the ciphertext or the tag."""
    aad = module_aad(FILE_AAD, ModuleType.DATA_PAGE, 0, 0, 0)
    module = bytearray(encrypt_gcm(KEY, b"sixteen bytes!!!", aad))  # 4 + 12 + 16 + 16 = 48 bytes
    assert len(module) == 48
    module[byte_index] ^= 0x01
    with pytest.raises(AuthenticationError):
        decrypt_gcm(KEY, bytes(module), aad)


def test_gcm_wrong_key_aad_and_truncation():
    aad = module_aad(FILE_AAD, ModuleType.COLUMN_META_DATA, 0, 2)
    module = encrypt_gcm(KEY, b"metadata", aad)
    with pytest.raises(AuthenticationError):
        decrypt_gcm(bytes(16), module, aad)
    with pytest.raises(AuthenticationError):
        decrypt_gcm(KEY, module, module_aad(FILE_AAD, ModuleType.COLUMN_META_DATA, 0, 3))  # spliced column
    with pytest.raises(AuthenticationError):
        decrypt_gcm(KEY, module, module_aad(b"other" + FILE_AAD[5:], ModuleType.COLUMN_META_DATA, 0, 2))
    with pytest.raises(AuthenticationError):
        decrypt_gcm(KEY, module[:-1], aad)
    with pytest.raises(AuthenticationError):
        decrypt_gcm(KEY, module + b"\x00", aad)
    with pytest.raises(AuthenticationError):
        decrypt_gcm(KEY, b"\x01\x00", aad)


def test_ctr_tamper_goes_undetected_but_length_is_checked():
    module = bytearray(encrypt_ctr(KEY, b"page bytes here"))
    module[20] ^= 0x80
    assert decrypt_ctr(KEY, bytes(module)) != b"page bytes here"  # no tag in CTR
    module[0] ^= 0x01
    with pytest.raises(AuthenticationError):
        decrypt_ctr(KEY, bytes(module))


def test_read_module_length_bounds():
    module = encrypt_gcm(KEY, b"abc", b"")
    buf = b"xx" + module + b"yy"
    assert read_module_length(buf, 2) == len(module) - 4
    with pytest.raises(CorruptFileError):
        read_module_length(buf[: len(module)], 2)  # module runs past the buffer
    assert read_module_length(buf[:6], 2, whole=False) == len(module) - 4
    with pytest.raises(CorruptFileError):
        read_module_length(b"\x01\x00", 0)


@pytest.mark.parametrize("size", [0, 15, 17, 20, 33])
def test_key_length_checked_without_leaking(size):
    key = bytes([0xAB]) * size
    for call, err in [
        (lambda: encrypt_gcm(key, b"x", b""), EncryptionError),
        (lambda: encrypt_ctr(key, b"x"), EncryptionError),
        (lambda: decrypt_gcm(key, encrypt_gcm(KEY, b"x", b""), b""), DecryptionError),
        (lambda: ModuleCipher("AES_GCM_V1", b"").encrypt(key, ModuleType.FOOTER, b"x"), EncryptionError),
        (lambda: FileEncryptionProperties(key), EncryptionError),
        (lambda: FileDecryptionProperties(footer_key=key), DecryptionError),
    ]:
        with pytest.raises(err) as info:
            call()
        text = str(info.value)
        assert str(size) in text
        if size:
            assert key.hex() not in text and repr(key) not in text and "\\xab" not in text


@pytest.mark.parametrize("size", [16, 24, 32])
def test_all_aes_key_sizes(size):
    key = os.urandom(size)
    cipher = ModuleCipher("AES_GCM_CTR_V1", FILE_AAD)
    for mt in ModuleType:
        module = cipher.encrypt(key, mt, b"payload", 1, 2, 3)
        assert cipher.decrypt(key, mt, module, 1, 2, 3) == b"payload"


def test_module_cipher_chooses_ctr_only_for_pages():
    gcm = ModuleCipher("AES_GCM_V1", FILE_AAD)
    ctr = ModuleCipher(AES_GCM_CTR_V1, FILE_AAD)
    for mt in ModuleType:
        plaintext = b"x" * 40
        expect_ctr = mt in (ModuleType.DATA_PAGE, ModuleType.DICTIONARY_PAGE)
        module = ctr.encrypt(KEY, mt, plaintext, 0, 1, 2)
        assert len(module) == len(plaintext) + (16 if expect_ctr else 32)
        assert ctr.overhead(mt) == (16 if expect_ctr else 32)
        if expect_ctr:
            assert decrypt_ctr(KEY, module) == plaintext
        else:
            assert decrypt_gcm(KEY, module, module_aad(FILE_AAD, mt, 0, 1, 2)) == plaintext
        assert len(gcm.encrypt(KEY, mt, plaintext, 0, 1, 2)) == len(plaintext) + 32
        assert gcm.decrypt(KEY, mt, gcm.encrypt(KEY, mt, plaintext, 0, 1, 2), 0, 1, 2) == plaintext


def test_module_cipher_binds_type_and_ordinals():
    cipher = ModuleCipher("AES_GCM_V1", FILE_AAD)
    module = cipher.encrypt(KEY, ModuleType.DATA_PAGE_HEADER, b"header", 2, 3, 4)
    assert cipher.decrypt(KEY, ModuleType.DATA_PAGE_HEADER, module, 2, 3, 4) == b"header"
    for args in [(ModuleType.DATA_PAGE_HEADER, 2, 3, 5), (ModuleType.DATA_PAGE_HEADER, 1, 3, 4),
                 (ModuleType.DATA_PAGE_HEADER, 2, 4, 4), (ModuleType.DATA_PAGE, 2, 3, 4),
                 (ModuleType.DICTIONARY_PAGE_HEADER, 2, 3, -1)]:
        with pytest.raises(AuthenticationError) as info:
            cipher.decrypt(KEY, args[0], module, *args[1:])
        assert ModuleType(args[0]).name in str(info.value)
        assert KEY.hex() not in str(info.value)
    other_file = ModuleCipher("AES_GCM_V1", FILE_AAD[:-1] + b"\x09")
    with pytest.raises(AuthenticationError):
        other_file.decrypt(KEY, ModuleType.DATA_PAGE_HEADER, module, 2, 3, 4)
    with pytest.raises(AuthenticationError, match="column 'a.b'"):
        cipher.decrypt(bytes(16), ModuleType.DATA_PAGE_HEADER, module, 2, 3, 4, what="page header of column 'a.b'")


def test_invocation_limit():
    counter = InvocationCounter(limit=5)
    cipher = ModuleCipher("AES_GCM_CTR_V1", b"", counter)
    for _ in range(3):
        cipher.encrypt(KEY, ModuleType.DATA_PAGE, b"p", 0, 0, 0)  # CTR: not a GCM invocation
    for _ in range(5):
        cipher.encrypt(KEY, ModuleType.DATA_PAGE_HEADER, b"h", 0, 0, 0)
    assert counter.count(KEY) == 5
    with pytest.raises(EncryptionError, match="more than 5"):
        cipher.encrypt(KEY, ModuleType.DATA_PAGE_HEADER, b"h", 0, 0, 0)
    cipher.encrypt(bytes(16), ModuleType.FOOTER, b"f")  # another key has its own count
    assert InvocationCounter().limit == 2**32
    assert KEY.hex() not in repr(counter)


def test_footer_signature():
    footer = encode(T.FileMetaData(version=1, schema=[], num_rows=0, row_groups=[]))
    signature = sign_footer(KEY, footer, FILE_AAD)
    assert len(signature) == 28
    verify_footer_signature(KEY, footer, signature, FILE_AAD)
    # the tag is AES-GCM over the footer with AAD = file_aad || 00 and the stored nonce
    assert AESGCM(KEY).encrypt(signature[:12], footer, FILE_AAD + b"\x00")[-16:] == signature[12:]
    for tampered in (
        (bytes(16), footer, signature, FILE_AAD),
        (KEY, footer[:-1] + bytes([footer[-1] ^ 1]), signature, FILE_AAD),
        (KEY, footer, signature[:5] + bytes([signature[5] ^ 1]) + signature[6:], FILE_AAD),
        (KEY, footer, signature[:-1] + bytes([signature[-1] ^ 1]), FILE_AAD),
        (KEY, footer, signature, FILE_AAD + b"x"),
        (KEY, footer, signature[:27], FILE_AAD),
    ):
        with pytest.raises(AuthenticationError):
            verify_footer_signature(*tampered)


# =============================================================================================
# properties


def test_file_aad_prefix_rules():
    unique = b"12345678"

    def alg(**kw):
        return algorithm_params(T.EncryptionAlgorithm(AES_GCM_V1=T.AesGcmV1(aad_file_unique=unique, **kw)))

    assert FileDecryptionProperties().file_aad_from(alg()) == unique
    assert FileDecryptionProperties().file_aad_from(alg(aad_prefix=b"tester")) == b"tester" + unique
    assert FileDecryptionProperties(aad_prefix=b"tester").file_aad_from(alg(aad_prefix=b"tester")) == b"tester" + unique
    with pytest.raises(DecryptionError, match="AAD prefix mismatch"):
        FileDecryptionProperties(aad_prefix=b"other").file_aad_from(alg(aad_prefix=b"tester"))
    supplied = alg(supply_aad_prefix=True)
    assert FileDecryptionProperties(aad_prefix=b"tester").file_aad_from(supplied) == b"tester" + unique
    with pytest.raises(KeyNotFoundError, match="AAD prefix"):
        FileDecryptionProperties().file_aad_from(supplied)
    with pytest.raises(DecryptionError, match="AAD prefix mismatch"):
        FileDecryptionProperties(aad_prefix=b"tester").file_aad_from(alg())
    ctr = algorithm_params(T.EncryptionAlgorithm(AES_GCM_CTR_V1=T.AesGcmCtrV1(aad_prefix=b"p", aad_file_unique=unique)))
    assert FileDecryptionProperties().new_file_context(ctr).cipher.algorithm == AES_GCM_CTR_V1


def test_encryption_context_algorithm_struct():
    props = FileEncryptionProperties(KEY, aad_prefix=b"tester", store_aad_prefix=False, algorithm="AES_GCM_CTR_V1")
    a, b = props.new_file_context(), props.new_file_context()
    assert a.aad_file_unique != b.aad_file_unique and len(a.aad_file_unique) == 8
    assert a.file_aad == b"tester" + a.aad_file_unique
    member = a.algorithm
    assert member.name == "AES_GCM_CTR_V1"
    assert member.aad_prefix is None and member.supply_aad_prefix is True
    assert member.aad_file_unique == a.aad_file_unique
    stored = FileEncryptionProperties(KEY, aad_prefix=b"tester").new_file_context().algorithm
    assert stored.name == "AES_GCM_V1" and stored.aad_prefix == b"tester" and not stored.supply_aad_prefix
    # what the writer stores round-trips through Thrift and gives the reader the same file AAD
    struct_ = decode(T.EncryptionAlgorithm, encode(encryption_algorithm(a.algorithm)))
    assert struct_.AES_GCM_V1 is None and struct_.AES_GCM_CTR_V1.supply_aad_prefix is True
    alg = algorithm_params(struct_)
    assert FileDecryptionProperties(aad_prefix=b"tester").file_aad_from(alg) == a.file_aad


def test_column_setup_uniform_and_per_column():
    uniform = FileEncryptionProperties(KEY).new_file_context()
    key, crypto = uniform.column_setup("a.b")
    assert key == KEY and crypto.kind == "footer_key"
    k1, k2 = os.urandom(16), os.urandom(32)
    props = FileEncryptionProperties(KEY, {"a.b": k1, ("c",): k2}, column_key_metadata={"a.b": b"kc1"})
    ctx = props.new_file_context()
    key, crypto = ctx.column_setup("a.b")
    assert key == k1
    assert crypto.kind == "column_key" and crypto.path_in_schema == ("a", "b")
    assert crypto.key_metadata == b"kc1"
    key, crypto = ctx.column_setup(["c"])
    assert key == k2 and crypto.key_metadata is None
    assert ctx.column_setup("d") == (None, None)
    assert ctx.is_encrypted(("a", "b")) and not ctx.is_encrypted("d")
    ctx.check_columns(["a.b", "c", "d"])
    with pytest.raises(EncryptionError, match="'c'"):
        ctx.check_columns(["a.b", "d"])
    with pytest.raises(EncryptionError):
        FileEncryptionProperties(KEY, {"a": k1}, column_key_metadata={"z": b"x"})
    with pytest.raises(EncryptionError):
        FileEncryptionProperties(KEY, algorithm="AES_CBC")


def _chunk(path: list[str]) -> T.ColumnChunk:
    stats = T.Statistics(null_count=0, min_value=b"\x01", max_value=b"\x09")
    md = T.ColumnMetaData(type=1, encodings=[0], path_in_schema=path, codec=0, num_values=10,
                          total_uncompressed_size=50, total_compressed_size=60, data_page_offset=4,
                          statistics=stats, bloom_filter_offset=100, bloom_filter_length=40)
    return T.ColumnChunk(file_offset=0, meta_data=md)


def _file_with_footer(ctx, columns: list[list[str]]) -> tuple[bytes, T.FileMetaData]:
    chunks = []
    for i, path in enumerate(columns):
        chunk = _chunk(path)
        finalize_column_chunk(ctx, chunk, path, 0, i)
        chunks.append(chunk)
    fmd = T.FileMetaData(version=2, schema=[T.SchemaElement(name="schema", num_children=0)], num_rows=10,
                         row_groups=[T.RowGroup(columns=chunks, total_byte_size=0, num_rows=10, ordinal=0)])
    return ctx.magic + footer_tail(ctx, fmd), fmd


def _commit(path: Path, data: bytes, props: FileEncryptionProperties) -> None:
    """Publish hand-built file bytes as the writer does: external key material is committed with them."""
    sink = AtomicFileSink(path, companion=props.key_material)
    sink.write(data)
    sink.commit()


@pytest.mark.parametrize("plaintext_footer", [False, True])
@pytest.mark.parametrize("uniform", [False, True])
def test_footer_tail_roundtrip(plaintext_footer, uniform):
    col_key = os.urandom(24)
    props = FileEncryptionProperties(
        KEY, None if uniform else {"a": col_key}, plaintext_footer=plaintext_footer,
        footer_key_metadata=b"kf", column_key_metadata=None if uniform else {"a": b"kc"},
    )
    ctx = props.new_file_context()
    data, _ = _file_with_footer(ctx, [["a"], ["b"]])
    assert data[:4] == data[-4:] == (b"PAR1" if plaintext_footer else b"PARE")
    region, magic = split_tail(data)
    dprops = FileDecryptionProperties(key_retriever=key_retriever({"kf": KEY, "kc": col_key}))
    fmd, dctx = read_footer(region, magic, dprops)
    assert dctx is not None and dctx.file_aad == ctx.file_aad
    a, b = fmd.row_groups[0].columns
    if uniform and not plaintext_footer:
        assert a.meta_data.statistics is not None and a.encrypted_column_metadata is None
    elif plaintext_footer:
        assert a.meta_data is not None and a.meta_data.statistics is None and a.meta_data.bloom_filter_offset is None
        assert a.encrypted_column_metadata is not None
    else:
        assert a.meta_data is None and a.encrypted_column_metadata is not None
    full = decrypted_column_metadata(dctx, a, 0, 0)
    assert full.statistics.max_value == b"\x09" and full.bloom_filter_offset == 100
    if uniform:
        assert b.crypto_metadata.ENCRYPTION_WITH_FOOTER_KEY is not None
    else:
        assert b.crypto_metadata is None and b.meta_data.statistics is not None
        assert dctx.column_key("b", column_crypto(b.crypto_metadata)) is None
    # the encrypted ColumnMetaData is bound to its ordinals
    if a.encrypted_column_metadata is not None:
        with pytest.raises(AuthenticationError):
            decrypted_column_metadata(dctx, a, 0, 1)
    if plaintext_footer:
        # legacy reading: no properties, no verification, plaintext columns usable
        legacy, none = read_footer(region, magic, None)
        assert none is None and legacy.num_rows == 10
        bad = bytearray(region)
        bad[region.index(b"schema")] ^= 0x20  # "schema" -> "Schema": still valid Thrift
        with pytest.raises(AuthenticationError):
            read_footer(bytes(bad), magic, dprops)
        read_footer(bytes(bad), magic, FileDecryptionProperties(footer_key=KEY, check_footer_integrity=False))
    else:
        with pytest.raises(KeyNotFoundError):
            read_footer(region, magic, None)
        with pytest.raises(AuthenticationError):
            read_footer(region, magic, FileDecryptionProperties(footer_key=os.urandom(16)))


def test_decryption_key_lookup():
    props = FileDecryptionProperties(footer_key=KEY, column_keys={"a.b": K16["kc1"]})
    assert props.footer_key_for(b"anything") == KEY
    assert props.column_key_for(["a", "b"], None) == K16["kc1"]
    with pytest.raises(KeyNotFoundError, match="'x.y'"):
        props.column_key_for("x.y", b"kc2")
    calls = []

    def lookup(md: bytes) -> bytes:
        calls.append(md)
        return K16[md.decode()]

    via = FileDecryptionProperties(key_retriever=lookup)
    assert via.footer_key_for(b"kf") == K16["kf"]
    assert via.column_key_for("x.y", b"kc2") == K16["kc2"]
    assert via.column_key_for("z", b"kc2") == K16["kc2"]
    assert calls == [b"kf", b"kc2"]  # cached per key metadata
    with pytest.raises(KeyNotFoundError, match="'q'"):
        via.column_key_for("q", b"unknown")
    with pytest.raises(KeyNotFoundError):
        FileDecryptionProperties().footer_key_for(b"kf")
    with pytest.raises(DecryptionError):
        FileDecryptionProperties(key_retriever=lambda md: b"short").footer_key_for(b"kf")


def test_repr_hides_keys():
    col_key = bytes(range(100, 132))
    secret_token = "s3cr3t-token"
    objects = [
        FileEncryptionProperties(KEY, {"a": col_key}, aad_prefix=b"tester", footer_key_metadata=b"kf"),
        FileEncryptionProperties(KEY).new_file_context(),
        FileDecryptionProperties(footer_key=KEY, column_keys={"a": col_key}),
        FileDecryptionProperties(footer_key=KEY).new_file_context(
            algorithm_params(T.EncryptionAlgorithm(AES_GCM_V1=T.AesGcmV1(aad_file_unique=b"u")))),
        InMemoryKms({"kf": KEY, "kc1": col_key}),
        KmsConnectionConfig(key_access_token=secret_token),
        ModuleCipher("AES_GCM_V1", b""),
        CryptoFactory(lambda cfg: InMemoryKms({"kf": KEY})),
        EncryptionConfiguration(footer_key="kf", column_keys={"kc1": ["a"]}),
    ]
    for obj in objects:
        text = repr(obj) + str(obj)
        for key in (KEY, col_key):
            assert key.hex() not in text and repr(key) not in text and str(key) not in text
            assert base64.b64encode(key).decode() not in text
        assert secret_token not in text


# =============================================================================================
# real fixtures


class Walk:
    """Decrypts one fixture the way a reader would, module by module."""

    def __init__(self, name: str, props: FileDecryptionProperties | None) -> None:
        self.data = fixture_file(name).read_bytes()
        assert self.data[:4] == self.data[-4:]
        region, magic = split_tail(self.data)
        self.region, self.magic = region, magic
        self.fmd, self.ctx = read_footer(region, magic, props)

    def chunks(self):
        for rg_i, rg in enumerate(self.fmd.row_groups):
            for col_i, chunk in enumerate(rg.columns):
                md = decrypted_column_metadata(self.ctx, chunk, rg_i, col_i)
                path = ".".join(md.path_in_schema)
                yield rg_i, col_i, path, chunk, md, self.ctx.column_key(path, column_crypto(chunk.crypto_metadata))

    def column(self, path: str):
        for item in self.chunks():
            if item[2] == path:
                return item
        raise AssertionError(path)

    def pages(self, rg_i, col_i, md, key):
        """Yield (PageHeader, page body) for every page of an encrypted chunk."""
        d, ctx = self.data, self.ctx
        pos = md.dictionary_page_offset or md.data_page_offset
        end = pos + md.total_compressed_size
        page, first = 0, True
        while pos < end:
            length = read_module_length(d, pos)
            header_type = ModuleType.DICTIONARY_PAGE_HEADER if first and md.dictionary_page_offset else \
                ModuleType.DATA_PAGE_HEADER
            ordinal = -1 if header_type == ModuleType.DICTIONARY_PAGE_HEADER else page
            header = decode(T.PageHeader, ctx.decrypt(key, header_type, d[pos : pos + 4 + length], rg_i, col_i,
                                                       ordinal))
            pos += 4 + length
            is_dict = header.type == T.PageType.DICTIONARY_PAGE
            assert is_dict == (header_type == ModuleType.DICTIONARY_PAGE_HEADER)
            page_type = ModuleType.DICTIONARY_PAGE if is_dict else ModuleType.DATA_PAGE
            module = d[pos : pos + header.compressed_page_size]
            assert read_module_length(module) + 4 == header.compressed_page_size
            body = ctx.decrypt(key, page_type, module, rg_i, col_i, ordinal)
            assert len(body) == header.compressed_page_size - ctx.cipher.overhead(page_type)
            yield header, body
            pos += header.compressed_page_size
            first = False
            if not is_dict:
                page += 1
        assert pos == end

    def indexes(self, rg_i, col_i, chunk, key):
        d = self.data
        ci = oi = None
        if chunk.column_index_offset is not None:
            module = d[chunk.column_index_offset : chunk.column_index_offset + chunk.column_index_length]
            ci = decode(T.ColumnIndex, self.ctx.decrypt(key, ModuleType.COLUMN_INDEX, module, rg_i, col_i))
        module = d[chunk.offset_index_offset : chunk.offset_index_offset + chunk.offset_index_length]
        oi = decode(T.OffsetIndex, self.ctx.decrypt(key, ModuleType.OFFSET_INDEX, module, rg_i, col_i))
        return ci, oi


def _snappy(body: bytes) -> bytes:
    import cramjam

    return bytes(cramjam.snappy.decompress_raw(body))


def _walk_all_encrypted(walk: Walk, expect_encrypted: set[str] | None):
    seen = set()
    for rg_i, col_i, path, chunk, md, key in walk.chunks():
        if key is None:
            assert chunk.crypto_metadata is None and chunk.encrypted_column_metadata is None
            continue
        seen.add(path)
        headers = [h for h, _ in walk.pages(rg_i, col_i, md, key)]
        ci, oi = walk.indexes(rg_i, col_i, chunk, key)
        data_pages = [h for h in headers if h.type != T.PageType.DICTIONARY_PAGE]
        assert len(oi.page_locations) == len(data_pages)
        assert oi.page_locations[0].first_row_index == 0
        if ci is not None:
            assert len(ci.null_pages) == len(data_pages)
        total = sum((h.data_page_header or h.data_page_header_v2).num_values for h in data_pages)
        assert total == md.num_values
    if expect_encrypted is not None:
        assert seen == expect_encrypted
    return seen


ALL8 = {"boolean_field", "int32_field", "int64_field", "int96_field", "float_field", "double_field", "ba_field",
        "flba_field"}


def test_fixture_uniform_128():
    walk = Walk("uniform_encryption.parquet.encrypted", FileDecryptionProperties(footer_key=K16["kf"]))
    assert walk.magic == b"PARE" and walk.fmd.num_rows == 50
    fcm, _ = decode_prefix(T.FileCryptoMetaData, walk.region)
    assert fcm.key_metadata == b"kf" and len(fcm.encryption_algorithm.AES_GCM_V1.aad_file_unique) == 8
    assert walk.ctx.file_aad == fcm.encryption_algorithm.AES_GCM_V1.aad_file_unique
    _walk_all_encrypted(walk, ALL8)
    # page content: double_field dictionary page (SNAPPY, PLAIN doubles i * 1.1111111)
    rg_i, col_i, _, chunk, md, key = walk.column("double_field")
    header, body = next(walk.pages(rg_i, col_i, md, key))
    assert header.type == T.PageType.DICTIONARY_PAGE
    values = np.frombuffer(_snappy(body), "<f8")
    np.testing.assert_allclose(values, np.arange(50) * 1.1111111)
    ci, oi = walk.indexes(rg_i, col_i, chunk, key)
    assert struct.unpack("<d", ci.min_values[0])[0] == 0.0
    assert struct.unpack("<d", ci.max_values[0])[0] == pytest.approx(49 * 1.1111111)
    # the OffsetIndex page size covers header module + page module
    loc = oi.page_locations[0]
    length = read_module_length(walk.data, loc.offset)
    header = decode(T.PageHeader, walk.ctx.decrypt(key, ModuleType.DATA_PAGE_HEADER,
                                                   walk.data[loc.offset : loc.offset + 4 + length], 0, col_i, 0))
    assert loc.compressed_page_size == 4 + length + header.compressed_page_size


def test_fixture_uniform_128_wrong_key_and_prefix():
    with pytest.raises(AuthenticationError):
        Walk("uniform_encryption.parquet.encrypted", FileDecryptionProperties(footer_key=K16["kc1"]))
    # the literal numeric key bytes from the upstream README are not the key
    with pytest.raises(AuthenticationError):
        Walk("uniform_encryption.parquet.encrypted", FileDecryptionProperties(footer_key=bytes(
            [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 0, 1, 2, 3, 4, 5])))
    with pytest.raises(DecryptionError, match="AAD prefix"):
        Walk("uniform_encryption.parquet.encrypted", FileDecryptionProperties(footer_key=K16["kf"], aad_prefix=b"x"))


def test_fixture_uniform_aes256():
    walk = Walk("aes256/uniform_encryption.parquet.encrypted", FileDecryptionProperties(footer_key=K32["kf"]))
    assert len(walk.ctx.footer_key()) == 32
    assert walk.fmd.created_by.startswith("parquet-mr")
    seen = _walk_all_encrypted(walk, None)
    assert seen == (ALL8 - {"int64_field"}) | {"int64_field.list.element"}
    # UNCOMPRESSED required int32 PLAIN page: the values 0..49
    rg_i, col_i, _, _, md, key = walk.column("int32_field")
    header, body = next(walk.pages(rg_i, col_i, md, key))
    assert header.type == T.PageType.DATA_PAGE
    assert np.frombuffer(body[-200:], "<i4").tolist() == list(range(50))


def test_fixture_columns_and_footer_128():
    walk = Walk("encrypt_columns_and_footer.parquet.encrypted",
                FileDecryptionProperties(key_retriever=key_retriever(K16)))
    _walk_all_encrypted(walk, {"float_field", "double_field"})
    _, _, _, chunk, _, key = walk.column("float_field")
    assert key == K16["kc2"] and chunk.meta_data is None
    assert chunk.crypto_metadata.ENCRYPTION_WITH_COLUMN_KEY.key_metadata == b"kc2"
    # the value of encrypted_column_metadata is a whole module, length field included
    assert read_module_length(chunk.encrypted_column_metadata) + 4 == len(chunk.encrypted_column_metadata)
    # a footer key alone reads the plaintext columns but names the missing column key
    walk2 = Walk("encrypt_columns_and_footer.parquet.encrypted", FileDecryptionProperties(footer_key=K16["kf"]))
    chunk = walk2.fmd.row_groups[0].columns[4]
    with pytest.raises(KeyNotFoundError, match="float_field"):
        decrypted_column_metadata(walk2.ctx, chunk, 0, 4, path="float_field")
    # swapping the two column keys fails authentication
    swapped = {"kf": K16["kf"], "kc1": K16["kc2"], "kc2": K16["kc1"]}
    walk3 = Walk("encrypt_columns_and_footer.parquet.encrypted", FileDecryptionProperties(key_retriever=key_retriever(swapped)))
    with pytest.raises(AuthenticationError):
        list(walk3.chunks())


def test_fixture_stored_aad_prefix():
    walk = Walk("encrypt_columns_and_footer_aad.parquet.encrypted",
                FileDecryptionProperties(key_retriever=key_retriever(K16)))
    assert walk.ctx.algorithm.name == "AES_GCM_V1" and walk.ctx.algorithm.aad_prefix == b"tester"
    assert walk.ctx.file_aad.startswith(b"tester")
    _walk_all_encrypted(walk, {"float_field", "double_field"})
    Walk("encrypt_columns_and_footer_aad.parquet.encrypted",
         FileDecryptionProperties(key_retriever=key_retriever(K16), aad_prefix=b"tester"))
    with pytest.raises(DecryptionError, match="AAD prefix mismatch"):
        Walk("encrypt_columns_and_footer_aad.parquet.encrypted",
             FileDecryptionProperties(key_retriever=key_retriever(K16), aad_prefix=b"tester2"))


@pytest.mark.parametrize("name,keys", [
    ("aes256/encrypt_columns_and_footer_disable_aad_storage.parquet.encrypted", K32),
])
def test_fixture_supplied_aad_prefix(name, keys):
    walk = Walk(name, FileDecryptionProperties(key_retriever=key_retriever(keys), aad_prefix=b"tester"))
    member = walk.ctx.algorithm
    assert member.name == "AES_GCM_V1" and member.aad_prefix is None and member.supply_aad_prefix
    _walk_all_encrypted(walk, None)
    with pytest.raises(KeyNotFoundError, match="AAD prefix"):
        Walk(name, FileDecryptionProperties(key_retriever=key_retriever(keys)))
    with pytest.raises(AuthenticationError):
        Walk(name, FileDecryptionProperties(key_retriever=key_retriever(keys), aad_prefix=b"tester!"))


def test_fixture_aes256_every_column_own_key():
    walk = Walk("aes256/encrypt_columns_and_footer.parquet.encrypted",
                FileDecryptionProperties(key_retriever=key_retriever(K32)))
    metadata = {}
    for _, _, path, chunk, _, key in walk.chunks():
        metadata[path] = chunk.crypto_metadata.ENCRYPTION_WITH_COLUMN_KEY.key_metadata
        assert len(key) == 32
    assert metadata["int64_field.list.element"] == b"kc7" and metadata["int96_field"] == b"kc8"
    _walk_all_encrypted(walk, None)


def test_fixture_ctr():
    walk = Walk("encrypt_columns_and_footer_ctr.parquet.encrypted",
                FileDecryptionProperties(key_retriever=key_retriever(K16)))
    assert walk.ctx.cipher.algorithm == AES_GCM_CTR_V1
    _walk_all_encrypted(walk, {"float_field", "double_field"})
    rg_i, col_i, _, _, md, key = walk.column("double_field")
    header, body = next(walk.pages(rg_i, col_i, md, key))
    np.testing.assert_allclose(np.frombuffer(_snappy(body), "<f8"), np.arange(50) * 1.1111111)
    # CTR page module = len || nonce || ciphertext (16 bytes of overhead); decrypt it by hand
    pos = md.dictionary_page_offset
    pos += 4 + read_module_length(walk.data, pos)
    module = walk.data[pos : pos + header.compressed_page_size]
    assert len(module) == len(body) + 16
    dec = Cipher(algorithms.AES(key), modes.CTR(module[4:16] + b"\x00\x00\x00\x01")).decryptor()
    assert dec.update(module[16:]) + dec.finalize() == body
    # while the page header next to it is GCM (would not decrypt as CTR/GCM mix-up)
    with pytest.raises(AuthenticationError):
        walk.ctx.decrypt(key, ModuleType.DICTIONARY_PAGE_HEADER, module, rg_i, col_i)


def test_fixture_plaintext_footer():
    name = "encrypt_columns_plaintext_footer.parquet.encrypted"
    walk = Walk(name, FileDecryptionProperties(key_retriever=key_retriever(K16)))
    assert walk.magic == b"PAR1"
    assert walk.fmd.footer_signing_key_metadata == b"kf"
    _walk_all_encrypted(walk, {"float_field", "double_field"})
    _, _, _, chunk, full, _ = walk.column("double_field")
    assert chunk.meta_data.statistics is None and full.statistics is not None
    # the signature: nonce || tag after the serialized FileMetaData
    _, used = decode_prefix(T.FileMetaData, walk.region)
    footer, signature = walk.region[:used], walk.region[used:]
    assert len(signature) == 28
    verify_footer_signature(K16["kf"], footer, signature, walk.ctx.file_aad)
    with pytest.raises(AuthenticationError):
        verify_footer_signature(K16["kc1"], footer, signature, walk.ctx.file_aad)
    # flip one byte of a string inside the footer (still valid Thrift) -> signature fails
    where = walk.region.index(b"parquet-cpp")
    bad = walk.region[:where] + b"P" + walk.region[where + 1 :]
    with pytest.raises(AuthenticationError):
        read_footer(bad, b"PAR1", FileDecryptionProperties(key_retriever=key_retriever(K16)))
    bad_sig = walk.region[:-1] + bytes([walk.region[-1] ^ 1])
    with pytest.raises(AuthenticationError):
        read_footer(bad_sig, b"PAR1", FileDecryptionProperties(key_retriever=key_retriever(K16)))
    # legacy mode: no keys, footer readable, signature not checked
    legacy, ctx = read_footer(walk.region, b"PAR1", None)
    assert ctx is None and legacy.num_rows == 50


# =============================================================================================
# Bloom filter modules (types 8 and 9)

SALT = np.array([0x47B6137B, 0x44974D91, 0x8824AD5B, 0xA2B7289D, 0x705495C7, 0x2DF1424B, 0x9EFC4947, 0x5C6BFB31],
                dtype=np.uint64)


def _sbbf_positions(h: int, num_bytes: int) -> tuple[int, np.ndarray]:
    z = num_bytes // 32
    block = ((h >> 32) * z) >> 32
    bits = ((np.uint64(h & 0xFFFFFFFF) * SALT) & np.uint64(0xFFFFFFFF)) >> np.uint64(27)
    return block, bits.astype(np.uint32)


def sbbf_insert(bitset: bytearray, value: bytes) -> None:
    block, bits = _sbbf_positions(xxhash.xxh64_intdigest(value), len(bitset))
    words = np.frombuffer(bitset, "<u4", count=8, offset=32 * block).copy()
    words |= np.uint32(1) << bits
    bitset[32 * block : 32 * block + 32] = words.astype("<u4").tobytes()


def sbbf_check(bitset: bytes, value: bytes) -> bool:
    block, bits = _sbbf_positions(xxhash.xxh64_intdigest(value), len(bitset))
    words = np.frombuffer(bitset, "<u4", count=8, offset=32 * block)
    return bool(np.all(words & (np.uint32(1) << bits)))


def read_encrypted_bloom(data: bytes, md: T.ColumnMetaData, ctx, key: bytes, rg: int, col: int
                         ) -> tuple[T.BloomFilterHeader, bytes]:
    offset = md.bloom_filter_offset
    n1 = read_module_length(data, offset)
    header = decode(T.BloomFilterHeader, ctx.decrypt(key, ModuleType.BLOOM_FILTER_HEADER,
                                                     data[offset : offset + 4 + n1], rg, col))
    offset2 = offset + 4 + n1
    n2 = read_module_length(data, offset2)
    bitset = ctx.decrypt(key, ModuleType.BLOOM_FILTER_BITSET, data[offset2 : offset2 + 4 + n2], rg, col)
    assert len(bitset) == header.numBytes
    assert header.algorithm.BLOCK is not None and header.hash.XXHASH is not None
    if md.bloom_filter_length is not None:
        assert md.bloom_filter_length == (4 + n1) + (4 + n2)
    # swapping the two modules' types fails: each is bound to its module type
    with pytest.raises(AuthenticationError):
        ctx.decrypt(key, ModuleType.BLOOM_FILTER_BITSET, data[offset : offset + 4 + n1], rg, col)
    return header, bitset


def test_sbbf_helper_on_plain_fixture():
    blob = fixture_file("bloom_filter.xxhash.bin").read_bytes()
    header, used = decode_prefix(T.BloomFilterHeader, blob)
    bitset = blob[used : used + header.numBytes]
    assert all(sbbf_check(bitset, w) for w in (b"hello", b"parquet", b"bloom", b"filter"))
    assert not sbbf_check(bitset, b"Hello")


def test_encrypted_bloom_modules_roundtrip():
    """Build header + bitset modules the way a writer does and read them back like the fixture."""
    values = [struct.pack("<d", i + 0.5) for i in range(2000)]
    bitset = bytearray(2048)
    for v in values:
        sbbf_insert(bitset, v)
    header = T.BloomFilterHeader(numBytes=2048, algorithm=T.BloomFilterAlgorithm(BLOCK=T.SplitBlockAlgorithm()),
                                 hash=T.BloomFilterHash(XXHASH=T.XxHash()),
                                 compression=T.BloomFilterCompression(UNCOMPRESSED=T.Uncompressed()))
    key = os.urandom(16)
    ctx = FileEncryptionProperties(KEY, {"d": key}).new_file_context()
    prefix = b"\x00" * 37
    modules = (ctx.encrypt(key, ModuleType.BLOOM_FILTER_HEADER, encode(header) + bytes(84), 0, 3)
               + ctx.encrypt(key, ModuleType.BLOOM_FILTER_BITSET, bytes(bitset), 0, 3))
    md = T.ColumnMetaData(bloom_filter_offset=len(prefix), bloom_filter_length=len(modules))
    dctx = FileDecryptionProperties(footer_key=KEY, column_keys={"d": key}).new_file_context(ctx.algorithm)
    got_header, got_bitset = read_encrypted_bloom(prefix + modules, md, dctx, key, 0, 3)
    assert got_header.numBytes == 2048 and got_bitset == bytes(bitset)
    assert all(sbbf_check(got_bitset, v) for v in values)
    with pytest.raises(AuthenticationError):
        read_encrypted_bloom(prefix + modules, md, dctx, key, 0, 2)


def test_in_memory_kms_wrap_format():
    kms = InMemoryKms(MASTER)
    dek = os.urandom(16)
    wrapped = kms.wrap_key(dek, "kc1")
    blob = base64.b64decode(wrapped)
    assert len(blob) == 12 + 16 + 16
    assert AESGCM(MASTER["kc1"]).decrypt(blob[:12], blob[12:], b"kc1") == dek  # AAD = master key id
    assert kms.unwrap_key(wrapped, "kc1") == dek
    with pytest.raises(AuthenticationError):
        kms.unwrap_key(wrapped, "kc2")
    with pytest.raises(KeyNotFoundError, match="'nope'"):
        kms.unwrap_key(wrapped, "nope")
    assert decrypt_key_locally(encrypt_key_locally(dek, KEY, b"id"), KEY, b"id") == dek


def test_external_key_material_java_fixture():
    """Unwrap parquet-mr 1.12's double-wrapped DEKs from the sidecar and decrypt the file."""
    path = fixture_file("external_key_material_java.parquet.encrypted")
    sidecar = json.loads(Path(key_material_path(path)).read_text())
    assert set(sidecar) == {"footerKey", "columnKey0", "columnKey1"}
    footer_material = json.loads(sidecar["footerKey"])
    kms = InMemoryKms(MASTER)
    kek = kms.unwrap_key(footer_material["wrappedKEK"], footer_material["masterKeyID"])
    footer_dek = decrypt_key_locally(footer_material["wrappedDEK"], kek,
                                     base64.b64decode(footer_material["keyEncryptionKeyID"]))
    # by hand: footer DEK decrypts the footer
    data = path.read_bytes()
    region, magic = split_tail(data)
    fcm, used = decode_prefix(T.FileCryptoMetaData, region)
    assert json.loads(fcm.key_metadata) == {"keyMaterialType": "PKMT1", "internalStorage": False,
                                            "keyReference": "footerKey"}
    file_aad = FileDecryptionProperties().file_aad_from(algorithm_params(fcm.encryption_algorithm))
    fmd = decode(T.FileMetaData, decrypt_gcm(footer_dek, region[used:], module_aad(file_aad, ModuleType.FOOTER)))
    assert fmd.num_rows == 100
    # through the CryptoFactory: external material found next to the file
    factory = CryptoFactory(lambda config: InMemoryKms(MASTER))
    props = factory.file_decryption_properties(KmsConnectionConfig(), file_path=path)
    assert props.footer_key_for(fcm.key_metadata) == footer_dek
    walk = Walk("external_key_material_java.parquet.encrypted", props)
    seen = _walk_all_encrypted(walk, {"integers", "strings"})
    assert seen == {"integers", "strings"}
    # a KMS with the wrong master key cannot unwrap
    bad = CryptoFactory(lambda config: InMemoryKms({**MASTER, "kf": K16["kc1"]}))
    with pytest.raises(AuthenticationError):
        bad.file_decryption_properties(KmsConnectionConfig(), file_path=path).footer_key_for(fcm.key_metadata)
    # without the file path the material cannot be found
    with pytest.raises(KeyNotFoundError):
        factory.file_decryption_properties(KmsConnectionConfig()).footer_key_for(fcm.key_metadata)


class CountingKms(InMemoryKms):
    def __init__(self, keys):
        super().__init__(keys)
        self.wraps = 0
        self.unwraps = 0

    def wrap_key(self, key_bytes, master_key_identifier):
        self.wraps += 1
        return super().wrap_key(key_bytes, master_key_identifier)

    def unwrap_key(self, wrapped_key, master_key_identifier):
        self.unwraps += 1
        return super().unwrap_key(wrapped_key, master_key_identifier)


@pytest.mark.parametrize("double_wrapping", [True, False])
@pytest.mark.parametrize("internal", [True, False])
def test_crypto_factory_roundtrip(tmp_path, double_wrapping, internal):
    kms = CountingKms(MASTER)
    factory = CryptoFactory(lambda config: kms)
    config = EncryptionConfiguration(footer_key="kf", column_keys={"kc1": ["a", "b.c"], "kc2": ["d"]},
                                     double_wrapping=double_wrapping, internal_key_material=internal,
                                     data_key_length_bits=256)
    file_path = tmp_path / "f.parquet"
    props = factory.file_encryption_properties(KmsConnectionConfig(), config, file_path=file_path)
    assert len(props.footer_key) == 32 and props.encrypted_columns == {"a", "b.c", "d"}
    assert len({props.footer_key, props.column_key("a"), props.column_key("b.c"), props.column_key("d")}) == 4
    footer_md = json.loads(props.footer_key_metadata)
    if internal:
        assert footer_md["keyMaterialType"] == "PKMT1" and footer_md["internalStorage"] is True
        assert footer_md["isFooterKey"] is True and footer_md["masterKeyID"] == "kf"
        assert footer_md["kmsInstanceID"] == "DEFAULT" and footer_md["kmsInstanceURL"] == "DEFAULT"
        assert footer_md["doubleWrapping"] is double_wrapping
        assert ("wrappedKEK" in footer_md) is double_wrapping and ("keyEncryptionKeyID" in footer_md) is double_wrapping
        column_md = json.loads(props.column_key_metadata["d"])
        assert column_md["isFooterKey"] is False and "kmsInstanceID" not in column_md
        assert column_md["masterKeyID"] == "kc2"
        assert not Path(key_material_path(file_path)).exists()
    else:
        gen = props.key_material.generation  # this write's own key ids: footerKey.<gen>, columnKey<i>.<gen>
        assert len(gen) == 16 and int(gen, 16) >= 0
        assert footer_md == {"keyMaterialType": "PKMT1", "internalStorage": False,
                             "keyReference": f"footerKey.{gen}"}
        assert not Path(key_material_path(file_path)).exists()  # written only with the file
    ctx = props.new_file_context()
    data, _ = _file_with_footer(ctx, [["a"], ["b", "c"], ["d"], ["e"]])
    _commit(file_path, data, props)
    if not internal:
        sidecar = json.loads(Path(key_material_path(file_path)).read_text())
        assert set(sidecar) == {f"{k}.{gen}" for k in ("footerKey", "columnKey0", "columnKey1", "columnKey2")}
        assert json.loads(sidecar[f"footerKey.{gen}"])["isFooterKey"] is True
        assert "internalStorage" not in json.loads(sidecar[f"columnKey0.{gen}"])
    if double_wrapping:
        assert kms.wraps == 3  # one KEK per master key, reused for every DEK
        material = footer_md if internal else json.loads(
            json.loads(Path(key_material_path(file_path)).read_text())[f"footerKey.{gen}"])
        assert len(base64.b64decode(material["keyEncryptionKeyID"])) == 16
    else:
        assert kms.wraps == 4  # every DEK goes to the KMS
    # a second file gets fresh DEKs; KEKs come from the cache
    props2 = factory.file_encryption_properties(KmsConnectionConfig(), config, file_path=tmp_path / "g.parquet")
    assert props2.footer_key != props.footer_key
    assert kms.wraps == (3 if double_wrapping else 8)

    reader_kms = CountingKms(MASTER)
    reader = CryptoFactory(lambda config: reader_kms)
    dprops = reader.file_decryption_properties(KmsConnectionConfig(), file_path=file_path)
    assert dprops.footer_key_for(props.footer_key_metadata) == props.footer_key
    for col in ("a", "b.c", "d"):
        assert dprops.column_key_for(col, props.column_key_metadata[col]) == props.column_key(col)
    assert reader_kms.unwraps == (3 if double_wrapping else 4)  # KEKs cached by id

    # end to end through the module layer
    fmd, dctx = read_footer(*split_tail(data), dprops)
    assert decrypted_column_metadata(dctx, fmd.row_groups[0].columns[2], 0, 2).statistics.max_value == b"\x09"


def test_crypto_factory_uniform_and_validation(tmp_path):
    factory = CryptoFactory(lambda config: InMemoryKms(MASTER))
    props = factory.file_encryption_properties(
        KmsConnectionConfig(), EncryptionConfiguration(footer_key="kf", uniform_encryption=True,
                                                      encryption_algorithm="AES_GCM_CTR_V1", plaintext_footer=True))
    assert props.uniform and props.algorithm == AES_GCM_CTR_V1 and props.plaintext_footer
    assert len(props.footer_key) == 16
    string_form = factory.file_encryption_properties(
        KmsConnectionConfig(), EncryptionConfiguration(footer_key="kf", column_keys="kc1:a,b;kc2:c"))
    assert string_form.encrypted_columns == {"a", "b", "c"}
    assert json.loads(string_form.column_key_metadata["c"])["masterKeyID"] == "kc2"
    for bad in (
        EncryptionConfiguration(footer_key="kf"),
        EncryptionConfiguration(footer_key="kf", uniform_encryption=True, column_keys={"kc1": ["a"]}),
        EncryptionConfiguration(footer_key="kf", column_keys={"kc1": ["a"], "kc2": ["a"]}),
        EncryptionConfiguration(footer_key="kf", uniform_encryption=True, data_key_length_bits=100),
        EncryptionConfiguration(footer_key="kf", uniform_encryption=True, internal_key_material=False),
        EncryptionConfiguration(footer_key="nope", uniform_encryption=True),
    ):
        with pytest.raises(EncryptionError):
            factory.file_encryption_properties(KmsConnectionConfig(), bad)


def test_key_retriever_rejects_foreign_metadata():
    props = CryptoFactory(lambda config: InMemoryKms(MASTER)).file_decryption_properties(
        KmsConnectionConfig(), DecryptionConfiguration(cache_lifetime=1))
    for metadata in (b"kf", b"{}", b'{"keyMaterialType":"PKMT2","internalStorage":true}', b"\xff\xfe", b"[1]"):
        with pytest.raises(KeyNotFoundError):
            props.footer_key_for(metadata)


def test_kek_cache_expires():
    kms = CountingKms(MASTER)
    factory = CryptoFactory(lambda config: kms)
    config = EncryptionConfiguration(footer_key="kf", uniform_encryption=True, cache_lifetime=0)
    factory.file_encryption_properties(KmsConnectionConfig(), config)
    factory.file_encryption_properties(KmsConnectionConfig(), config)
    assert kms.wraps == 2  # lifetime 0: a new KEK each time


# ---------------------------------------------------------------------------------------------
# interop with pyarrow.parquet.encryption (in a subprocess: tests.conftest.run_pyarrow)

PYARROW_CASES = {
    "double": dict(double_wrapping=True, internal_key_material=True, plaintext_footer=False),
    "single": dict(double_wrapping=False, internal_key_material=True, plaintext_footer=False),
    "external": dict(double_wrapping=True, internal_key_material=False, plaintext_footer=False),
    "plainfooter": dict(double_wrapping=True, internal_key_material=True, plaintext_footer=True),
}


@pytest.fixture(scope="module")
def pyarrow_files(tmp_path_factory):
    out = tmp_path_factory.mktemp("pyarrow_enc")
    run_pyarrow(
        """
        import json, sys
        import pyarrow as pa, pyarrow.parquet as pq
        cases = json.loads(sys.argv[2])
        table = pa.table({"a": pa.array(range(100), pa.int64()), "b": [f"s{i}" for i in range(100)],
                          "c": pa.array([i * 0.5 for i in range(100)])})
        factory = pe.CryptoFactory(Kms)
        for name, opts in cases.items():
            path = sys.argv[1] + "/" + name + ".parquet"
            config = pe.EncryptionConfiguration(footer_key="kf", column_keys={"kc1": ["a"], "kc2": ["c"]}, **opts)
            props = factory.file_encryption_properties(pe.KmsConnectionConfig(), config, path)
            pq.write_table(table, path, encryption_properties=props, compression="none",
                           write_page_index=True)
        """,
        str(out), json.dumps(PYARROW_CASES),
    )
    return out


@pytest.mark.parametrize("case", sorted(PYARROW_CASES))
def test_pyarrow_written_keys_unwrap_with_ours(pyarrow_files, case):
    path = pyarrow_files / f"{case}.parquet"
    data = path.read_bytes()
    region, magic = split_tail(data)
    factory = CryptoFactory(lambda config: InMemoryKms(MASTER))
    props = factory.file_decryption_properties(KmsConnectionConfig(), file_path=path)
    fmd, ctx = read_footer(region, magic, props)
    assert magic == (b"PAR1" if PYARROW_CASES[case]["plaintext_footer"] else b"PARE")
    assert fmd.num_rows == 100
    key_md = fmd.footer_signing_key_metadata if magic == b"PAR1" else decode(T.FileCryptoMetaData, region).key_metadata
    material = json.loads(key_md)
    assert material["keyMaterialType"] == "PKMT1"
    assert material["internalStorage"] is PYARROW_CASES[case]["internal_key_material"]
    walk_chunks = {}
    for col_i, chunk in enumerate(fmd.row_groups[0].columns):
        md = decrypted_column_metadata(ctx, chunk, 0, col_i)
        path_name = ".".join(md.path_in_schema)
        key = ctx.column_key(path_name, column_crypto(chunk.crypto_metadata))
        walk_chunks[path_name] = (col_i, chunk, md, key)
    assert walk_chunks["b"][3] is None  # plaintext column
    col_i, chunk, md, key = walk_chunks["a"]
    assert len(key) == 16
    # decrypt every page of column "a"; its dictionary page (PLAIN int64, uncompressed) is 0..99
    walker = Walk.__new__(Walk)
    walker.data, walker.ctx = data, ctx
    pages = list(walker.pages(0, col_i, md, key))
    header, body = pages[0]
    assert header.type == T.PageType.DICTIONARY_PAGE
    assert np.frombuffer(body, "<i8").tolist() == list(range(100))
    assert any(h.type != T.PageType.DICTIONARY_PAGE for h, _ in pages)
    ci, oi = walker.indexes(0, col_i, chunk, key)
    assert struct.unpack("<q", ci.max_values[0])[0] == 99
    assert len(oi.page_locations) == len(pages) - 1
    # column "c" has its own key, different from "a"'s
    assert walk_chunks["c"][3] not in (None, key)


@pytest.mark.parametrize("double_wrapping", [True, False])
@pytest.mark.parametrize("internal", [True, False])
def test_our_key_metadata_unwraps_in_pyarrow(tmp_path, double_wrapping, internal):
    """pyarrow writes a uniform file with our footer DEK; we put our PKMT1 metadata into
    FileCryptoMetaData (not covered by the footer's GCM tag); pyarrow's CryptoFactory reads it."""
    factory = CryptoFactory(lambda config: InMemoryKms(MASTER))
    path = tmp_path / "ours.parquet"
    props = factory.file_encryption_properties(
        KmsConnectionConfig(),
        EncryptionConfiguration(footer_key="kf", uniform_encryption=True, double_wrapping=double_wrapping,
                                internal_key_material=internal),
        file_path=path,
    )
    raw = tmp_path / "raw.parquet"
    run_pyarrow(
        """
        import sys
        import pyarrow as pa, pyarrow.parquet as pq
        key = bytes.fromhex(sys.argv[2])
        props = pe.create_encryption_properties(key)
        pq.write_table(pa.table({"x": list(range(20))}), sys.argv[1], encryption_properties=props)
        """,
        str(raw), props.footer_key.hex(),
    )
    data = raw.read_bytes()
    region, magic = split_tail(data)
    fcm, used = decode_prefix(T.FileCryptoMetaData, region)
    assert magic == b"PARE" and not fcm.key_metadata
    fcm.key_metadata = props.footer_key_metadata
    new_region = encode(fcm) + region[used:]
    body = data[: len(data) - 8 - len(region)]
    _commit(path, body + new_region + struct.pack("<I", len(new_region)) + b"PARE", props)
    # our reader agrees first
    dprops = factory.file_decryption_properties(KmsConnectionConfig(), file_path=path)
    assert read_footer(*split_tail(path.read_bytes()), dprops)[0].num_rows == 20
    out = run_pyarrow(
        """
        import sys
        import pyarrow.parquet as pq
        factory = pe.CryptoFactory(Kms)
        props = factory.file_decryption_properties(pe.KmsConnectionConfig(), pe.DecryptionConfiguration(),
                                                   sys.argv[1])
        print(pq.read_table(sys.argv[1], decryption_properties=props).column("x").to_pylist())
        """,
        str(path),
    )
    assert out.strip() == str(list(range(20)))


def test_error_types_are_parquet_errors():
    assert issubclass(AuthenticationError, DecryptionError) and issubclass(KeyNotFoundError, DecryptionError)
    assert issubclass(DecryptionError, CryptoError) and issubclass(EncryptionError, CryptoError)
    assert issubclass(CryptoError, ParquetError)
