"""Envelope encryption ("key tools"), compatible with parquet-java's PropertiesDrivenCryptoFactory
and ``pyarrow.parquet.encryption``.

Every file gets random data keys (DEKs). A DEK is wrapped by a KMS master key, either directly
(single wrapping) or through a key-encryption key (KEK) that is itself wrapped by the KMS
(double wrapping, the default). The wrapped material is the PKMT1 JSON format, stored in the
file's key_metadata (internal storage) or in a sidecar ``_KEY_MATERIAL_FOR_<file name>.json``
next to the file (external storage), with key_metadata then holding only a reference; the
sidecar is committed together with the file (:mod:`pqbloom.crypto.key_material`).

Local wrapping (KEK wrapping a DEK, and the in-memory KMS) is
``base64(nonce(12) || AES-GCM ciphertext || tag(16))`` with an AAD: the raw KEK id bytes for a
DEK, the master key id as UTF-8 for the in-memory KMS.

Nothing here logs or prints key bytes.
"""

from __future__ import annotations

import base64
import binascii
import json
import os
import threading
import time
from abc import ABC, abstractmethod
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import timedelta
from typing import Any

from cryptography.exceptions import InvalidTag
from cryptography.hazmat.primitives.ciphers.aead import AESGCM

from ..errors import AuthenticationError, DecryptionError, EncryptionError, KeyNotFoundError
from .ciphers import AES_GCM_V1, ALGORITHMS, NONCE_LENGTH, check_key
from .key_material import (
    KEY_MATERIAL_FILE_PREFIX,
    ExternalKeyMaterial,
    commit_lock,
    key_material_path,
    new_generation,
    read_key_material,
    replace_key_material,
)
from .properties import FileDecryptionProperties, FileEncryptionProperties, column_path

__all__ = [
    "KEY_MATERIAL_FILE_PREFIX",
    "CryptoFactory",
    "DecryptionConfiguration",
    "EncryptionConfiguration",
    "InMemoryKms",
    "KmsClient",
    "KmsConnectionConfig",
    "decrypt_key_locally",
    "encrypt_key_locally",
    "key_material_path",
]

KEY_MATERIAL_TYPE = "PKMT1"
FOOTER_KEY_REFERENCE = "footerKey"
COLUMN_KEY_REFERENCE_PREFIX = "columnKey"
KEK_LENGTH = 16
KEK_ID_LENGTH = 16
DEFAULT = "DEFAULT"

# JSON field names (parquet-java KeyMaterial / KeyMetadata)
_TYPE = "keyMaterialType"
_INTERNAL = "internalStorage"
_REFERENCE = "keyReference"
_IS_FOOTER = "isFooterKey"
_KMS_ID = "kmsInstanceID"
_KMS_URL = "kmsInstanceURL"
_MASTER = "masterKeyID"
_WRAPPED_DEK = "wrappedDEK"
_DOUBLE = "doubleWrapping"
_KEK_ID = "keyEncryptionKeyID"
_WRAPPED_KEK = "wrappedKEK"


# ---------------------------------------------------------------------------------------------
# local wrapping


def encrypt_key_locally(key: bytes, wrapping_key: bytes, aad: bytes) -> str:
    """``base64(nonce || AES-GCM(wrapping_key, key, aad) || tag)``, as parquet-java KeyToolkit."""
    raw = check_key(wrapping_key, what="wrapping key")
    nonce = os.urandom(NONCE_LENGTH)
    return base64.b64encode(nonce + AESGCM(raw).encrypt(nonce, bytes(key), bytes(aad))).decode("ascii")


def decrypt_key_locally(wrapped: str, wrapping_key: bytes, aad: bytes) -> bytes:
    """Inverse of :func:`encrypt_key_locally`; AuthenticationError on a wrong key/AAD or bad data."""
    raw = check_key(wrapping_key, decrypting=True, what="wrapping key")
    try:
        blob = base64.b64decode(wrapped, validate=True)
    except (binascii.Error, ValueError, TypeError):
        raise DecryptionError("wrapped key is not valid base64") from None
    if len(blob) < NONCE_LENGTH + 16:
        raise AuthenticationError("wrapped key is too short")
    try:
        return AESGCM(raw).decrypt(blob[:NONCE_LENGTH], blob[NONCE_LENGTH:], bytes(aad))
    except InvalidTag:
        raise AuthenticationError("cannot unwrap key: wrong wrapping key or AAD, or tampered wrapped key") from None


# ---------------------------------------------------------------------------------------------
# KMS interface


@dataclass
class KmsConnectionConfig:
    """How to reach a KMS. ``key_access_token`` is never shown by repr."""

    kms_instance_id: str = DEFAULT
    kms_instance_url: str = DEFAULT
    key_access_token: str = field(default=DEFAULT, repr=False)
    custom_kms_conf: dict[str, str] = field(default_factory=dict, repr=False)


class KmsClient(ABC):
    """A KMS: wraps and unwraps keys with master keys it holds."""

    @abstractmethod
    def wrap_key(self, key_bytes: bytes, master_key_identifier: str) -> str:
        """Wrap ``key_bytes`` with the master key; return a string (stored in JSON)."""

    @abstractmethod
    def unwrap_key(self, wrapped_key: str, master_key_identifier: str) -> bytes:
        """Inverse of :meth:`wrap_key`."""


class InMemoryKms(KmsClient):
    """Test/demo KMS holding master keys in memory, wrapping exactly like parquet-java's InMemoryKMS:
    ``base64(nonce || AES-GCM(master_key, key, aad=master_key_id UTF-8) || tag)``.
    """

    def __init__(self, master_keys: Mapping[str, bytes], config: KmsConnectionConfig | None = None) -> None:
        self._master_keys = {
            str(k): check_key(v, what=f"master key {str(k)!r}") for k, v in master_keys.items()
        }
        self.config = config

    def _master(self, master_key_identifier: str, decrypting: bool) -> bytes:
        try:
            return self._master_keys[master_key_identifier]
        except KeyError:
            if decrypting:
                raise KeyNotFoundError(f"master key {master_key_identifier!r} is not in the KMS") from None
            raise EncryptionError(f"master key {master_key_identifier!r} is not in the KMS") from None

    def wrap_key(self, key_bytes: bytes, master_key_identifier: str) -> str:
        """Wrap (encrypt) a data key with the master key named ``master_key_identifier``."""
        master = self._master(master_key_identifier, False)
        return encrypt_key_locally(key_bytes, master, master_key_identifier.encode("utf-8"))

    def unwrap_key(self, wrapped_key: str, master_key_identifier: str) -> bytes:
        """Unwrap a data key wrapped by :meth:`wrap_key` with the same master key."""
        master = self._master(master_key_identifier, True)
        return decrypt_key_locally(wrapped_key, master, master_key_identifier.encode("utf-8"))

    def __repr__(self) -> str:
        return f"InMemoryKms(master_key_ids={sorted(self._master_keys)})"


KmsClientFactory = Callable[[KmsConnectionConfig], KmsClient]


# ---------------------------------------------------------------------------------------------
# configurations


def _seconds(lifetime: timedelta | float | int) -> float:
    return lifetime.total_seconds() if isinstance(lifetime, timedelta) else float(lifetime)


@dataclass
class EncryptionConfiguration:
    """Which columns to encrypt with which master keys (parquet-java / pyarrow semantics).

    ``column_keys`` maps a master key id to the columns it protects (``{"kc1": ["a", "b.c"]}``),
    or is the parquet-java string form ``"kc1:a,b.c;kc2:d"``. Each column still gets its own
    random data key. ``uniform_encryption`` encrypts all columns with the footer data key instead.
    """

    footer_key: str
    column_keys: Mapping[str, list[str]] | str = field(default_factory=dict)
    uniform_encryption: bool = False
    encryption_algorithm: str = AES_GCM_V1
    plaintext_footer: bool = False
    double_wrapping: bool = True
    cache_lifetime: timedelta | float = timedelta(minutes=10)
    internal_key_material: bool = True
    data_key_length_bits: int = 128

    def column_key_map(self) -> dict[str, list[str]]:
        """``{master key id: [column paths]}`` from either form of ``column_keys``."""
        if isinstance(self.column_keys, str):
            result: dict[str, list[str]] = {}
            for part in self.column_keys.split(";"):
                part = part.strip()
                if not part:
                    continue
                master, sep, cols = part.partition(":")
                if not sep or not master.strip():
                    raise EncryptionError(f"cannot parse column keys entry {part!r}; expected 'keyId:col1,col2'")
                names = [c.strip() for c in cols.split(",") if c.strip()]
                if not names:
                    raise EncryptionError(f"column keys entry for {master.strip()!r} lists no columns")
                result.setdefault(master.strip(), []).extend(names)
            return result
        return {str(k): [column_path(c) for c in v] for k, v in self.column_keys.items()}


@dataclass
class DecryptionConfiguration:
    cache_lifetime: timedelta | float = timedelta(minutes=10)


# ---------------------------------------------------------------------------------------------
# key material


def _dumps(obj: Mapping[str, Any]) -> str:
    return json.dumps(obj, separators=(",", ":"))


def _parse_json_object(data: bytes | str, what: str) -> dict[str, Any]:
    try:
        text = data.decode("utf-8") if isinstance(data, bytes | bytearray) else str(data)
        obj = json.loads(text)
    except (UnicodeDecodeError, ValueError):
        raise KeyNotFoundError(f"{what} is not PKMT1 key material JSON") from None
    if not isinstance(obj, dict):
        raise KeyNotFoundError(f"{what} is not a JSON object")
    return obj


class _TtlCache:
    """A small thread-safe dict whose entries expire."""

    def __init__(self) -> None:
        self._data: dict[Any, tuple[float, Any]] = {}
        self._lock = threading.Lock()

    def get(self, key: Any) -> Any:
        with self._lock:
            item = self._data.get(key)
            if item is None:
                return None
            if item[0] < time.monotonic():
                del self._data[key]
                return None
            return item[1]

    def put(self, key: Any, value: Any, lifetime: float) -> None:
        with self._lock:
            self._data[key] = (time.monotonic() + lifetime, value)

    def clear(self) -> None:
        with self._lock:
            self._data.clear()

    def __len__(self) -> int:
        return len(self._data)


# ---------------------------------------------------------------------------------------------
# the factory


class CryptoFactory:
    """Makes file encryption/decryption properties from a KMS (parquet-java / pyarrow compatible)."""

    def __init__(self, kms_client_factory: KmsClientFactory) -> None:
        self.kms_client_factory = kms_client_factory
        self._clients = _TtlCache()  # (instance id, url, token) -> KmsClient
        self._write_keks = _TtlCache()  # (token, master key id) -> (kek, kek id, wrapped kek)
        self._read_keks = _TtlCache()  # (token, kek id b64) -> kek

    def __repr__(self) -> str:
        return f"CryptoFactory(kms_client_factory={getattr(self.kms_client_factory, '__name__', 'callable')})"

    def remove_cache_entries(self) -> None:
        """Forget cached KMS clients and KEKs (after a master key rotation, for instance)."""
        self._clients.clear()
        self._write_keks.clear()
        self._read_keks.clear()

    def _client(self, config: KmsConnectionConfig, lifetime: float) -> KmsClient:
        key = (config.kms_instance_id, config.kms_instance_url, config.key_access_token)
        client = self._clients.get(key)
        if client is None:
            client = self.kms_client_factory(config)
            self._clients.put(key, client, lifetime)
        return client

    # -- writing ---------------------------------------------------------------------------

    def file_encryption_properties(
        self,
        kms_connection_config: KmsConnectionConfig,
        encryption_config: EncryptionConfiguration,
        file_path: str | os.PathLike[str] | None = None,
    ) -> FileEncryptionProperties:
        """Fresh random data keys for one file, wrapped into PKMT1 key metadata.

        With ``internal_key_material=False`` the key material goes to ``_KEY_MATERIAL_FOR_<name>.json``
        beside ``file_path``, but only when the file written with these properties is committed
        (``properties.key_material``, see :mod:`pqbloom.crypto.key_material`); the properties serve
        that path only. The key ids are this write's own (``footerKey.<generation>``...).
        """
        cfg = encryption_config
        if not cfg.footer_key:
            raise EncryptionError("footer_key (a master key id) is required")
        algorithm = str(cfg.encryption_algorithm).upper()
        if algorithm not in ALGORITHMS:
            raise EncryptionError(f"unknown encryption algorithm {cfg.encryption_algorithm!r}")
        if cfg.data_key_length_bits not in (128, 192, 256):
            raise EncryptionError(f"data_key_length_bits must be 128, 192 or 256, not {cfg.data_key_length_bits}")
        key_map = cfg.column_key_map()
        if cfg.uniform_encryption and key_map:
            raise EncryptionError("uniform_encryption and column_keys cannot both be set")
        if not cfg.uniform_encryption and not key_map:
            raise EncryptionError("either column_keys or uniform_encryption must be set")
        if not cfg.internal_key_material and file_path is None:
            raise EncryptionError("external key material (internal_key_material=False) needs the file path")
        lifetime = _seconds(cfg.cache_lifetime)
        client = self._client(kms_connection_config, lifetime)
        dek_length = cfg.data_key_length_bits // 8
        external: dict[str, str] = {}
        generation = new_generation()

        def material(dek: bytes, master_id: str, is_footer: bool, reference: str) -> bytes:
            mat = self._wrap(client, kms_connection_config, dek, master_id, is_footer, cfg.double_wrapping,
                             lifetime, internal=cfg.internal_key_material)
            if cfg.internal_key_material:
                return _dumps(mat).encode("utf-8")
            external[reference] = _dumps(mat)
            ref = {_TYPE: KEY_MATERIAL_TYPE, _INTERNAL: False, _REFERENCE: reference}
            return _dumps(ref).encode("utf-8")

        footer_dek = os.urandom(dek_length)
        footer_metadata = material(footer_dek, cfg.footer_key, True, f"{FOOTER_KEY_REFERENCE}.{generation}")
        column_keys: dict[str, bytes] = {}
        column_metadata: dict[str, bytes] = {}
        index = 0
        for master_id, columns in key_map.items():
            for col in columns:
                if col in column_keys:
                    raise EncryptionError(f"column {col!r} is listed under more than one master key")
                dek = os.urandom(dek_length)
                column_keys[col] = dek
                column_metadata[col] = material(dek, master_id, False,
                                                f"{COLUMN_KEY_REFERENCE_PREFIX}{index}.{generation}")
                index += 1
        props = FileEncryptionProperties(
            footer_dek,
            column_keys or None,
            algorithm=algorithm,
            plaintext_footer=cfg.plaintext_footer,
            footer_key_metadata=footer_metadata,
            column_key_metadata=column_metadata or None,
        )
        if not cfg.internal_key_material:
            assert file_path is not None
            props.key_material = ExternalKeyMaterial(file_path, generation, external)
        return props

    def _wrap(self, client: KmsClient, config: KmsConnectionConfig, dek: bytes, master_id: str, is_footer: bool,
              double: bool, lifetime: float, *, internal: bool) -> dict[str, Any]:
        mat: dict[str, Any] = {_TYPE: KEY_MATERIAL_TYPE}
        if internal:
            mat[_INTERNAL] = True
        mat[_IS_FOOTER] = is_footer
        if is_footer:
            mat[_KMS_ID] = config.kms_instance_id
            mat[_KMS_URL] = config.kms_instance_url
        mat[_MASTER] = master_id
        if double:
            cache_key = (config.key_access_token, master_id)
            entry = self._write_keks.get(cache_key)
            if entry is None:
                kek, kek_id = os.urandom(KEK_LENGTH), os.urandom(KEK_ID_LENGTH)
                entry = (kek, kek_id, client.wrap_key(kek, master_id))
                self._write_keks.put(cache_key, entry, lifetime)
            kek, kek_id, wrapped_kek = entry
            mat[_WRAPPED_DEK] = encrypt_key_locally(dek, kek, kek_id)
            mat[_DOUBLE] = True
            mat[_KEK_ID] = base64.b64encode(kek_id).decode("ascii")
            mat[_WRAPPED_KEK] = wrapped_kek
        else:
            mat[_WRAPPED_DEK] = client.wrap_key(dek, master_id)
            mat[_DOUBLE] = False
        return mat

    # -- key rotation ------------------------------------------------------------------------

    def rotate_master_keys(
        self,
        kms_connection_config: KmsConnectionConfig,
        file_path: str | os.PathLike[str],
        *,
        double_wrapping: bool = True,
        cache_lifetime: timedelta | float = timedelta(minutes=10),
    ) -> None:
        """Rewrap the keys in a file's key-material sidecar with the KMS's current master keys.

        Like pyarrow's ``CryptoFactory.rotate_master_keys`` and parquet-java's
        ``KeyToolkit.rotateMasterKeys``, for files with external key material; unlike them it also
        takes pqbloom's per-write key ids (``footerKey.<generation>``), telling footer keys by their
        ``isFooterKey`` field rather than by the id. The data keys, and so the file, do not change;
        the sidecar is replaced atomically, under the same lock as pqbloom's writes to the file.
        """
        lifetime = _seconds(cache_lifetime)
        path = os.path.abspath(os.fspath(file_path))
        unwrapper = _KeyUnwrapper(self, kms_connection_config, lifetime, path)
        self._write_keks.clear()  # new KEKs: the cached ones are wrapped with the old master keys
        with commit_lock(path):
            store = read_key_material(key_material_path(path))
            client = self._client(kms_connection_config, lifetime)
            rotated: dict[str, str] = {}
            for key_id, text in store.items():
                if not isinstance(text, str):
                    raise KeyNotFoundError(f"key material file entry {key_id!r} is not a string")
                material = _parse_json_object(text, f"key material {key_id!r}")
                dek = unwrapper.unwrap(material)
                rotated[key_id] = _dumps(self._wrap(
                    client, kms_connection_config, dek, material[_MASTER], bool(material.get(_IS_FOOTER)),
                    double_wrapping, lifetime, internal=False))
            replace_key_material(path, rotated)

    # -- reading ---------------------------------------------------------------------------

    def file_decryption_properties(
        self,
        kms_connection_config: KmsConnectionConfig,
        decryption_config: DecryptionConfiguration | None = None,
        file_path: str | os.PathLike[str] | None = None,
        *,
        aad_prefix: bytes | None = None,
    ) -> FileDecryptionProperties:
        """Decryption properties whose key retriever unwraps PKMT1 key metadata through the KMS.

        ``file_path`` is needed only for files with external key material.
        """
        lifetime = _seconds((decryption_config or DecryptionConfiguration()).cache_lifetime)
        retriever = _KeyUnwrapper(self, kms_connection_config, lifetime, file_path)
        return FileDecryptionProperties(key_retriever=retriever, aad_prefix=aad_prefix)


class _KeyUnwrapper:
    """key_metadata bytes -> data key, for one file."""

    def __init__(self, factory: CryptoFactory, config: KmsConnectionConfig, lifetime: float,
                 file_path: str | os.PathLike[str] | None) -> None:
        self.factory = factory
        self.config = config
        self.lifetime = lifetime
        self.file_path = None if file_path is None else os.fspath(file_path)
        self._external: dict[str, Any] | None = None
        self._lock = threading.Lock()

    def __repr__(self) -> str:
        return f"_KeyUnwrapper(file_path={self.file_path!r})"

    def _external_material(self, reference: str) -> dict[str, Any]:
        if self.file_path is None:
            raise KeyNotFoundError("key material is stored outside the file; the file path is needed to find it")
        with self._lock:
            if self._external is None or reference not in self._external:
                # first use, or an id the sidecar read earlier lacks: the file was rewritten since
                self._external = read_key_material(key_material_path(self.file_path))
            store = self._external
        text = store.get(reference)
        if not isinstance(text, str):
            raise KeyNotFoundError(f"key material file has no entry {reference!r}")
        return _parse_json_object(text, f"key material {reference!r}")

    def __call__(self, key_metadata: bytes) -> bytes:
        meta = _parse_json_object(key_metadata, "key metadata")
        if meta.get(_TYPE) != KEY_MATERIAL_TYPE:
            raise KeyNotFoundError(f"key metadata has key material type {meta.get(_TYPE)!r}, not {KEY_MATERIAL_TYPE!r}")
        internal = meta.get(_INTERNAL)
        if internal is True:
            material = meta
        elif internal is False:
            reference = meta.get(_REFERENCE)
            if not isinstance(reference, str):
                raise KeyNotFoundError("external key metadata has no keyReference")
            material = self._external_material(reference)
        else:
            raise KeyNotFoundError("key metadata lacks a boolean internalStorage field")
        return self.unwrap(material)

    def unwrap(self, mat: Mapping[str, Any]) -> bytes:
        """The data key of one PKMT1 key material object."""
        if mat.get(_TYPE, KEY_MATERIAL_TYPE) != KEY_MATERIAL_TYPE:
            raise KeyNotFoundError(f"key material type {mat.get(_TYPE)!r} is not {KEY_MATERIAL_TYPE!r}")
        master_id, wrapped_dek = mat.get(_MASTER), mat.get(_WRAPPED_DEK)
        if not isinstance(master_id, str) or not isinstance(wrapped_dek, str):
            raise KeyNotFoundError("key material lacks masterKeyID or wrappedDEK")
        config = self.config
        if mat.get(_IS_FOOTER) and config.kms_instance_id == DEFAULT and isinstance(mat.get(_KMS_ID), str):
            # parquet-java takes the KMS instance from the footer key material when none is configured
            config = KmsConnectionConfig(
                kms_instance_id=mat[_KMS_ID],
                kms_instance_url=mat.get(_KMS_URL, config.kms_instance_url)
                if config.kms_instance_url == DEFAULT else config.kms_instance_url,
                key_access_token=config.key_access_token,
                custom_kms_conf=dict(config.custom_kms_conf),
            )
            self.config = config
        client = self.factory._client(config, self.lifetime)
        if not mat.get(_DOUBLE, False):
            return bytes(client.unwrap_key(wrapped_dek, master_id))
        kek_id_text, wrapped_kek = mat.get(_KEK_ID), mat.get(_WRAPPED_KEK)
        if not isinstance(kek_id_text, str) or not isinstance(wrapped_kek, str):
            raise KeyNotFoundError("double-wrapped key material lacks keyEncryptionKeyID or wrappedKEK")
        try:
            kek_id = base64.b64decode(kek_id_text, validate=True)
        except (binascii.Error, ValueError):
            raise DecryptionError("keyEncryptionKeyID is not valid base64") from None
        cache_key = (config.key_access_token, kek_id_text)
        kek = self.factory._read_keks.get(cache_key)
        if kek is None:
            kek = bytes(client.unwrap_key(wrapped_kek, master_id))
            self.factory._read_keks.put(cache_key, kek, self.lifetime)
        return decrypt_key_locally(wrapped_dek, kek, kek_id)

