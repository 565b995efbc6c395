"""The library's logger (issue 18, section 4): ``logging.getLogger("pqbloom")`` with no handler of its own
but NullHandler, module loggers under it, messages for a Bloom filter not used (and why) and for a
dictionary given up on write, and never a key in a message."""

from __future__ import annotations

import logging

import numpy as np
import pyarrow.parquet as pq

import pqbloom
from pqbloom.crypto import FileDecryptionProperties, FileEncryptionProperties
from tests.conftest import ALL_KEYS, COL_KEY, KEY


def test_logger_has_no_handlers_of_its_own():
    import pqbloom.file.column_writer
    import pqbloom.scan.prune_row_group

    root = logging.getLogger("pqbloom")
    assert root.handlers and all(type(h) is logging.NullHandler for h in root.handlers)
    for mod in (pqbloom.file.column_writer, pqbloom.scan.prune_row_group):
        log = mod.log
        assert log.name.startswith("pqbloom.") and log.handlers == [] and log.propagate


def _no_key_in(records):
    for r in records:
        text = r.getMessage()
        for key in ALL_KEYS:
            assert key.decode("latin-1") not in text and key.hex() not in text.lower() and repr(key) not in text


def test_encrypted_write_and_read_log_fallbacks_without_keys(tmp_path, caplog):
    path = tmp_path / "enc.parquet"
    n = 20_000
    ids = np.arange(0, 2 * n, 2, dtype=np.int64)
    emails = [f"user{i % 5000}@example.com" for i in range(n)]
    props = FileEncryptionProperties(KEY, {"email": COL_KEY})
    with caplog.at_level(logging.DEBUG, logger="pqbloom"):
        pqbloom.write_table({"id": ids, "email": emails}, path, encryption_properties=props,
                            bloom_filter_options={"id": True, "email": True}, dictionary_pagesize_limit=1024)
    dict_msgs = [r for r in caplog.records if "dictionary encoding not used" in r.getMessage()]
    # email: 5,000 distinct values over a 1 KiB dictionary limit (INFO); id: all distinct (DEBUG)
    assert any(r.levelno == logging.INFO and "column email" in r.getMessage() and "dictionary_pagesize_limit"
               in r.getMessage() for r in dict_msgs), [r.getMessage() for r in dict_msgs]
    assert any(r.levelno == logging.DEBUG and "column id" in r.getMessage() for r in dict_msgs)
    assert all(r.name == "pqbloom.file.column_writer" for r in dict_msgs)

    dec = FileDecryptionProperties(footer_key=KEY, column_keys={"email": COL_KEY})
    with pqbloom.ParquetFile(path, decryption_properties=dec) as pf:
        offsets = [pf.metadata.row_group(0).column(j).bloom_filter_offset for j in range(2)]
    data = bytearray(path.read_bytes())
    for off in offsets:  # one byte of each (the id filter's plaintext header, the email filter's ciphertext)
        data[off + 1] ^= 0x02
    bad = tmp_path / "bad.parquet"
    bad.write_bytes(bytes(data))
    caplog.clear()
    with caplog.at_level(logging.DEBUG, logger="pqbloom"):
        for flt in (pqbloom.field("id") == 7, pqbloom.field("email") == "user1234567@example.com"):  # inside min/max
            ex = pqbloom.Explain()
            t = pqbloom.read_table(bad, filters=flt, explain=ex, decryption_properties=dec)
            assert t.num_rows == 0 and ex.bloom_filters_unused == 1
    warnings = [r for r in caplog.records if r.levelno == logging.WARNING]
    assert len(warnings) == 2 and all(r.name == "pqbloom.scan.prune_row_group" for r in warnings)
    assert "Bloom filter of id in row group 0 not used" in warnings[0].getMessage()
    assert "Bloom filter of email in row group 0" in warnings[1].getMessage()
    _no_key_in(caplog.records)


def test_dictionary_fallback_logged_matches_what_pyarrow_sees(tmp_path, caplog):
    """The logged fallback is real: pyarrow finds no dictionary page in the chunk the log names."""
    path = tmp_path / "d.parquet"
    with caplog.at_level(logging.INFO, logger="pqbloom"):
        pqbloom.write_table({"s": [f"value-{i % 3000:05d}" for i in range(30_000)]}, path,
                            dictionary_pagesize_limit=2048)
    assert any("column s, row group 0: dictionary encoding not used" in r.getMessage() for r in caplog.records)
    assert not pq.ParquetFile(path).metadata.row_group(0).column(0).has_dictionary_page
