"""A pyarrow ``KmsClient`` that wraps keys like parquet-java's InMemoryKMS, written independently of
pqbloom: ``base64(nonce + AES-GCM(master key, data key, aad=master key id))``.

Used by the pyarrow side of the encryption tests and the interop matrix (in subprocesses, since
pyarrow may ``std::terminate`` on encrypted metadata it cannot read).
"""

from __future__ import annotations

import base64
import os
from typing import Any

import pyarrow.parquet.encryption as pe
from cryptography.hazmat.primitives.ciphers.aead import AESGCM


def in_memory_kms(master: dict[str, bytes]) -> Any:
    """A ``KmsClient`` class (pass it to ``pe.CryptoFactory``) holding the ``master`` keys."""

    class Kms(pe.KmsClient):
        def __init__(self, config: Any) -> None:
            pe.KmsClient.__init__(self)

        def wrap_key(self, key_bytes: bytes, master_key_identifier: str) -> str:
            nonce = os.urandom(12)
            ct = AESGCM(master[master_key_identifier]).encrypt(nonce, key_bytes, master_key_identifier.encode())
            return base64.b64encode(nonce + ct).decode()

        def unwrap_key(self, wrapped_key: str, master_key_identifier: str) -> bytes:
            blob = base64.b64decode(wrapped_key)
            return AESGCM(master[master_key_identifier]).decrypt(blob[:12], blob[12:], master_key_identifier.encode())

    return Kms
