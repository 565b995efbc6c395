"""Key options shared by the command line and the Spark data source (``pqbloom.crypto.options``).

The command line's own behaviour is in ``tests/unit/cli/test_cli.py``; here: the Spark option vocabulary, the errors
(typed, naming the option, never the key) and that both front ends build the same properties.
"""

from __future__ import annotations

import base64

import numpy as np
import pytest

import pqbloom
from pqbloom.crypto.options import (
    KeyOptionError,
    decryption_properties,
    decryption_properties_from_options,
    encryption_properties,
    encryption_properties_from_options,
    parse_column_keys,
    parse_key,
    parse_key_list,
)
from pqbloom.errors import CryptoError, KeyNotFoundError, ParquetError

FK = "000102030405060708090a0b0c0d0e0f"
CK = "101112131415161718191a1b1c1d1e1f"
B64 = base64.b64encode(bytes.fromhex(FK)).decode()
B64C = base64.b64encode(bytes.fromhex(CK)).decode()


def _roundtrip(tmp_path, enc, dec):
    path = str(tmp_path / "t.parquet")
    pqbloom.write_table({"id": np.arange(5), "email": [f"u{i}" for i in range(5)]}, path, encryption_properties=enc)
    return pqbloom.read_table(path, decryption_properties=dec).to_pydict()


def test_spark_explicit_keys_round_trip(tmp_path):
    opts = {"footer_key_hex": FK, "column_keys": f"email:{CK}, ", "plaintext_footer": "true"}
    enc = encryption_properties_from_options(opts)
    assert enc is not None and enc.plaintext_footer and enc.column_key("email") == bytes.fromhex(CK)
    assert enc.column_key("id") is None
    got = _roundtrip(tmp_path, enc, decryption_properties_from_options(opts))
    assert got["email"] == [f"u{i}" for i in range(5)]
    with pytest.raises(KeyNotFoundError, match="'email'"):  # the footer key alone does not open the column
        pqbloom.read_table(str(tmp_path / "t.parquet"), decryption_properties=decryption_properties_from_options(
            {"footer_key_hex": FK}))


def test_spark_kms_key_list_round_trip(tmp_path):
    key_list = f"keyA:{B64}, keyB:{B64C}"  # as interop's parquet.encryption.key.list: spaces allowed
    enc = encryption_properties_from_options({"kms_key_list": key_list, "encryption_footer_key": "keyA",
                                              "encryption_column_keys": "keyB:email"})
    assert enc is not None and enc.footer_key_metadata is not None
    got = _roundtrip(tmp_path, enc, decryption_properties_from_options({"kms_key_list": key_list}))
    assert got["id"] == list(range(5))
    # the same master keys through the command line's KMS config read it too
    cfg = tmp_path / "kms.json"
    cfg.write_text(f'{{"master_keys": {{"keyA": "base64:{B64}", "keyB": "{CK}"}}}}')
    dec = decryption_properties(kms_config=str(cfg))
    assert pqbloom.read_table(str(tmp_path / "t.parquet"), decryption_properties=dec).to_pydict() == got


def test_no_options_means_no_encryption():
    assert encryption_properties_from_options({}) is None
    assert encryption_properties_from_options({"footer_key_hex": "", "column_keys": ""}) is None
    assert decryption_properties_from_options({"column_keys": ""}) is None
    assert encryption_properties() is None and decryption_properties() is None


def test_both_front_ends_build_the_same_explicit_properties():
    cli = encryption_properties(footer_key_hex=FK, column_keys=[f"email={CK}"], plaintext_footer=True)
    spark = encryption_properties_from_options({"footer_key_hex": FK, "column_keys": f"email:{CK}",
                                                "plaintext_footer": "yes"})
    assert cli is not None and spark is not None
    for p in (cli, spark):
        assert (p.footer_key, p.column_key("email"), p.plaintext_footer, p.algorithm, p.aad_prefix) == (
            bytes.fromhex(FK), bytes.fromhex(CK), True, "AES_GCM_V1", None)


@pytest.mark.parametrize("opts, match", [
    ({"column_keys": f"email{CK}", "footer_key_hex": FK}, "column_keys takes COLUMN:HEX"),
    ({"column_keys": f"email:{CK},email:{CK}", "footer_key_hex": FK}, "column 'email' twice"),
    ({"column_keys": f"email:{CK[:-2]}", "footer_key_hex": FK}, "key of column 'email' is not a hex AES key"),
    ({"footer_key_hex": FK[:-1] + "z"}, "footer_key_hex is not a hex AES key"),
    ({"column_keys": f"email:{CK}"}, "column_keys needs footer_key_hex"),
    ({"encryption_footer_key": "keyA"}, "needs kms_key_list"),
    ({"kms_key_list": f"keyA{B64}", "encryption_footer_key": "keyA"}, "KEY_ID:BASE64"),
    ({"kms_key_list": f"keyA:{B64[:-4]}!!", "encryption_footer_key": "keyA"}, "'keyA' is not valid base64"),
    ({"kms_key_list": f"keyA:{base64.b64encode(b'x' * 10).decode()}", "encryption_footer_key": "keyA"},
     "10 bytes"),
])
def test_malformed_spark_options_fail_typed_without_key_material(opts, match):
    for build in (encryption_properties_from_options, decryption_properties_from_options):
        if build is decryption_properties_from_options and "encryption_footer_key" in opts \
                and "kms_key_list" not in opts:
            continue  # reading ignores the write-only option
        if build is decryption_properties_from_options and "needs footer_key_hex" in match:
            continue  # reading with column keys alone is fine (plaintext footer)
        with pytest.raises(KeyOptionError, match=match) as info:
            build(opts)
        assert isinstance(info.value, ParquetError) and isinstance(info.value, CryptoError)
        assert isinstance(info.value, ValueError)
        text = str(info.value)
        for secret in (FK, CK, B64, B64C, FK[:-1], CK[:-2], B64[:-4]):
            assert secret not in text


def test_spark_data_source_never_echoes_a_malformed_column_key(tmp_path):
    """A column_keys entry without its ``:`` used to be echoed whole in the error, key included."""
    pytest.importorskip("pyspark")
    from pqbloom.spark import PqbloomDataSource

    path = tmp_path / "t.parquet"
    pqbloom.write_table({"a": [1]}, str(path))
    with pytest.raises(ValueError) as info:
        PqbloomDataSource({"path": str(path), "footer_key_hex": FK, "column_keys": f"email{CK}"}).schema()
    assert CK not in str(info.value) and "column_keys" in str(info.value)


def test_parsers():
    assert parse_key(f"0x{FK.upper()}", "k") == bytes.fromhex(FK)
    assert parse_column_keys(["a.b = " + CK], "--column-key") == {"a.b": bytes.fromhex(CK)}
    assert parse_key_list(f" keyA:{B64} ,", "kms_key_list") == {"keyA": bytes.fromhex(FK)}
    with pytest.raises(KeyOptionError, match="lists no master keys"):
        parse_key_list(" , ", "kms_key_list")


def test_spark_kms_options_take_precedence_over_explicit_read_keys(tmp_path):
    """As before the options were shared: with ``kms_key_list`` a read uses the KMS only."""
    dec = decryption_properties_from_options({"kms_key_list": f"keyA:{B64}", "footer_key_hex": "not hex"})
    assert dec is not None and dec.key_retriever is not None
    assert "footer_key=none" in repr(dec)
