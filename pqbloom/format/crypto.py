"""The crypto metadata of Parquet Modular Encryption as format's own records, and its structs.

* :class:`AlgorithmParams`: an ``EncryptionAlgorithm`` union (AES_GCM_V1 or AES_GCM_CTR_V1) with its AAD
  fields; :func:`algorithm_params` reads one (a file naming another algorithm raises
  :class:`~pqbloom.errors.DecryptionError`), :func:`encryption_algorithm` builds one.
* :class:`ColumnCrypto`: a chunk's ``ColumnCryptoMetaData`` (footer key, or its own key with a path and key
  metadata); :func:`column_crypto` / :func:`column_crypto_struct`.
* ``FileCryptoMetaData``, the prefix of an encrypted footer: :func:`encode_file_crypto_metadata`,
  :func:`decode_file_crypto_metadata`; :func:`footer_key_metadata` finds the footer key's metadata in a
  footer region without keys.

:mod:`pqbloom.crypto` (ciphers, keys, AADs) works on the records; :mod:`pqbloom.file.encryption` puts the
structs into the footer.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from .._thrift import ttypes as T
from ..errors import CorruptFileError, DecryptionError
from .codec import decode_prefix, encode

__all__ = ["AlgorithmParams", "algorithm_params", "encryption_algorithm", "ColumnCrypto", "column_crypto",
           "column_crypto_struct", "encode_file_crypto_metadata", "decode_file_crypto_metadata", "FileCryptoFields",
           "footer_key_metadata", "AES_GCM_V1", "AES_GCM_CTR_V1"]

AES_GCM_V1 = "AES_GCM_V1"
AES_GCM_CTR_V1 = "AES_GCM_CTR_V1"


@dataclass(frozen=True)
class AlgorithmParams:
    """A file's encryption algorithm (``name``: ``"AES_GCM_V1"`` or ``"AES_GCM_CTR_V1"``) and its AAD fields as
    stored: the prefix (when the file stores it), the file's unique part, and whether readers must supply
    the prefix."""

    name: str
    aad_prefix: bytes | None = None
    aad_file_unique: bytes | None = None
    supply_aad_prefix: bool | None = None

    def __repr__(self) -> str:
        prefix = None if self.aad_prefix is None else f"<{len(self.aad_prefix)} bytes>"
        return (f"AlgorithmParams({self.name}, aad_prefix={prefix}, aad_file_unique=<{len(self.aad_file_unique or b'')} "
                f"bytes>, supply_aad_prefix={self.supply_aad_prefix})")


def algorithm_params(algorithm: Any) -> AlgorithmParams:
    """The record of a decoded ``EncryptionAlgorithm``; :class:`~pqbloom.errors.DecryptionError` when it names
    neither AES_GCM_V1 nor AES_GCM_CTR_V1."""
    for name in (AES_GCM_V1, AES_GCM_CTR_V1):
        member = getattr(algorithm, name, None)
        if member is not None:
            return AlgorithmParams(name, None if member.aad_prefix is None else bytes(member.aad_prefix),
                                   None if member.aad_file_unique is None else bytes(member.aad_file_unique),
                                   member.supply_aad_prefix)
    raise DecryptionError("file names an unknown encryption algorithm (neither AES_GCM_V1 nor AES_GCM_CTR_V1)")


def encryption_algorithm(params: AlgorithmParams) -> Any:
    """The ``EncryptionAlgorithm`` struct of ``params``."""
    cls = T.AesGcmV1 if params.name == AES_GCM_V1 else T.AesGcmCtrV1
    if params.name not in (AES_GCM_V1, AES_GCM_CTR_V1):
        raise ValueError(f"unknown encryption algorithm {params.name!r}")
    member = cls(aad_prefix=params.aad_prefix, aad_file_unique=params.aad_file_unique,
                 supply_aad_prefix=params.supply_aad_prefix)
    return T.EncryptionAlgorithm(**{params.name: member})


@dataclass(slots=True)
class ColumnCrypto:
    """A chunk's ``ColumnCryptoMetaData``: ``kind`` ``"footer_key"`` (encrypted with the footer key),
    ``"column_key"`` (its own key: ``path_in_schema``, ``key_metadata``) or ``"unknown"`` (a member this
    reader does not know). Made per chunk (slotted, not frozen: cheaper to create)."""

    kind: str
    path_in_schema: tuple[str, ...] | None = None
    key_metadata: bytes | None = None


_FOOTER_KEYED = ColumnCrypto("footer_key")


def column_crypto(crypto: Any) -> ColumnCrypto | None:
    """The record of a decoded ``ColumnCryptoMetaData`` (None: a plaintext chunk)."""
    if crypto is None:
        return None
    if crypto.ENCRYPTION_WITH_FOOTER_KEY is not None:
        return _FOOTER_KEYED
    with_key = crypto.ENCRYPTION_WITH_COLUMN_KEY
    if with_key is None:
        return ColumnCrypto("unknown")
    path = with_key.path_in_schema
    return ColumnCrypto("column_key", None if path is None else tuple(path),
                        None if with_key.key_metadata is None else bytes(with_key.key_metadata))


def column_crypto_struct(crypto: ColumnCrypto) -> Any:
    """The ``ColumnCryptoMetaData`` struct of a footer-keyed or column-keyed chunk."""
    if crypto.kind == "footer_key":
        return T.ColumnCryptoMetaData(ENCRYPTION_WITH_FOOTER_KEY=T.EncryptionWithFooterKey())
    if crypto.kind == "column_key":
        return T.ColumnCryptoMetaData(ENCRYPTION_WITH_COLUMN_KEY=T.EncryptionWithColumnKey(
            path_in_schema=list(crypto.path_in_schema or ()), key_metadata=crypto.key_metadata))
    raise ValueError(f"cannot write column crypto metadata of kind {crypto.kind!r}")


@dataclass(frozen=True)
class FileCryptoFields:
    """A decoded ``FileCryptoMetaData``: the algorithm (None when absent) and the footer key's metadata."""

    algorithm: AlgorithmParams | None
    key_metadata: bytes | None


def encode_file_crypto_metadata(algorithm: AlgorithmParams, key_metadata: bytes | None) -> bytes:
    """The ``FileCryptoMetaData`` an encrypted footer starts with."""
    return encode(T.FileCryptoMetaData(encryption_algorithm=encryption_algorithm(algorithm), key_metadata=key_metadata))


def decode_file_crypto_metadata(region: bytes | bytearray | memoryview) -> tuple[FileCryptoFields, int]:
    """The ``FileCryptoMetaData`` at the start of an encrypted footer's region, and its length (the encrypted
    footer module follows). An unknown algorithm raises :class:`~pqbloom.errors.DecryptionError`."""
    fcm, used = decode_prefix(T.FileCryptoMetaData, region, what="FileCryptoMetaData")
    alg = None if fcm.encryption_algorithm is None else algorithm_params(fcm.encryption_algorithm)
    return FileCryptoFields(alg, None if fcm.key_metadata is None else bytes(fcm.key_metadata)), used


def footer_key_metadata(region: bytes | bytearray | memoryview, *, encrypted_footer: bool) -> bytes | None:
    """The footer key's metadata stored in a footer region (the bytes before ``len(4) || magic``), read
    without any key: ``FileCryptoMetaData.key_metadata`` before an encrypted footer (``PARE``), else the
    plaintext footer's ``footer_signing_key_metadata``. None when there is none or the bytes do not decode."""
    try:
        if encrypted_footer:
            return decode_prefix(T.FileCryptoMetaData, region)[0].key_metadata
        return decode_prefix(T.FileMetaData, region)[0].footer_signing_key_metadata
    except (CorruptFileError, ValueError):
        return None
