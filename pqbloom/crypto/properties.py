"""What to encrypt with which key (writing) and where keys come from (reading).

``FileEncryptionProperties`` is configured once and can serve many files; each file
gets its own ``FileEncryptionContext`` (fresh ``aad_file_unique``) from
``new_file_context()``. ``FileDecryptionProperties.new_file_context(algorithm)`` does
the same for reading, from the algorithm stored in the file (:class:`pqbloom.format.AlgorithmParams`).

The crypto metadata of a file (algorithm, column crypto metadata) is :mod:`pqbloom.format`'s records
here; putting it into the footer's structs and reading it out of them is :mod:`pqbloom.file.encryption`'s job.

Key semantics follow parquet-java / pyarrow:
- no ``column_keys``: uniform encryption, every column is encrypted with the footer key;
- ``column_keys`` given: exactly those columns are encrypted, each with its own key, the
  rest are plaintext.
"""

from __future__ import annotations

import os
import struct
import threading
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import TYPE_CHECKING

from ..errors import CryptoError, DecryptionError, EncryptionError, KeyNotFoundError
from ..format import AlgorithmParams, ColumnCrypto
from .ciphers import (
    AES_GCM_V1,
    ALGORITHMS,
    GCM_INVOCATION_LIMIT,
    Buffer,
    InvocationCounter,
    ModuleCipher,
    ModuleType,
    check_key,
    redact,
)

if TYPE_CHECKING:
    from ..io import CommitCompanion

__all__ = [
    "AAD_FILE_UNIQUE_LENGTH",
    "FileDecryptionContext",
    "FileDecryptionProperties",
    "FileEncryptionContext",
    "FileEncryptionProperties",
    "KeyRetriever",
    "column_path",
    "MAGIC_ENCRYPTED_FOOTER",
    "MAGIC_PLAIN",
]

AAD_FILE_UNIQUE_LENGTH = 8
MAGIC_ENCRYPTED_FOOTER = b"PARE"
MAGIC_PLAIN = b"PAR1"

KeyRetriever = Callable[[bytes], bytes]
ColumnPath = str | Sequence[str]


def column_path(path: ColumnPath) -> str:
    """Dotted form of a column path: ``"a.b.c"`` or ``("a", "b", "c")`` -> ``"a.b.c"``."""
    if isinstance(path, str):
        return path
    return ".".join(str(p) for p in path)


def _path_parts(path: ColumnPath) -> list[str]:
    return path.split(".") if isinstance(path, str) else [str(p) for p in path]


def _opt_bytes(value: bytes | bytearray | memoryview | str | None, what: str) -> bytes | None:
    if value is None:
        return None
    if isinstance(value, str):
        return value.encode("utf-8")
    if isinstance(value, bytes | bytearray | memoryview):
        return bytes(value)
    raise TypeError(f"{what} must be bytes or str, not {type(value).__name__}")


# =============================================================================================
# writing


class FileEncryptionProperties:
    """Keys and options for writing encrypted files.

    Args:
        footer_key: Key of the footer (and of every column under uniform encryption).
        column_keys: ``{"a.b.c": key}``. Only these columns are encrypted, each with its own key.
            ``None`` or empty: uniform encryption with the footer key.
        algorithm: ``"AES_GCM_V1"`` or ``"AES_GCM_CTR_V1"``.
        plaintext_footer: Keep the footer readable (``PAR1``) and sign it with the footer key.
        aad_prefix: Optional AAD prefix binding the file to an identity; stored in the file unless
            ``store_aad_prefix`` is false.
        store_aad_prefix: False: the AAD prefix is not stored, and readers must supply it.
        footer_key_metadata: Opaque bytes stored next to the footer key so readers can find it.
        column_key_metadata: ``{"a.b.c": bytes}``, stored next to each column key.
        invocation_limit: How many AES-GCM encryptions one key may do (2**32, NIST SP 800-38D's bound
            for random nonces); past it the write raises EncryptionError.
    """

    def __init__(
        self,
        footer_key: bytes,
        column_keys: Mapping[str, bytes] | None = None,
        *,
        algorithm: str = AES_GCM_V1,
        plaintext_footer: bool = False,
        aad_prefix: bytes | None = None,
        store_aad_prefix: bool = True,
        footer_key_metadata: bytes | str | None = None,
        column_key_metadata: Mapping[str, bytes | str] | None = None,
        invocation_limit: int = GCM_INVOCATION_LIMIT,
    ) -> None:
        self._footer_key = check_key(footer_key, what="footer key")
        keys: dict[str, bytes] = {}
        parts: dict[str, list[str]] = {}
        for path, key in (column_keys or {}).items():
            name = column_path(path)
            if name in keys:
                raise EncryptionError(f"column {name!r} is given two keys")
            keys[name] = check_key(key, what=f"key of column {name!r}")
            parts[name] = _path_parts(path)
        self._column_keys = keys
        self._column_parts = parts
        name = str(algorithm).upper()
        if name not in ALGORITHMS:
            raise EncryptionError(f"unknown encryption algorithm {algorithm!r}; expected one of {ALGORITHMS}")
        self.algorithm = name
        self.plaintext_footer = bool(plaintext_footer)
        self.aad_prefix = _opt_bytes(aad_prefix, "aad_prefix")
        self.store_aad_prefix = bool(store_aad_prefix)
        self.footer_key_metadata = _opt_bytes(footer_key_metadata, "footer_key_metadata")
        metadata: dict[str, bytes] = {}
        for path, value in (column_key_metadata or {}).items():
            name = column_path(path)
            if name not in keys:
                raise EncryptionError(f"key metadata given for column {name!r}, which has no column key")
            md = _opt_bytes(value, f"key metadata of column {name!r}")
            if md is not None:
                metadata[name] = md
        self.column_key_metadata = metadata
        self._counter = InvocationCounter(invocation_limit)
        #: key material stored outside the file, which the writer commits together with the file
        #: (set by :meth:`pqbloom.crypto.CryptoFactory.file_encryption_properties`)
        self.key_material: CommitCompanion | None = None

    # -- queries ---------------------------------------------------------------------------

    @property
    def uniform(self) -> bool:
        """True when every column is encrypted with the footer key."""
        return not self._column_keys

    @property
    def footer_key(self) -> bytes:
        """The footer key (bytes; never shown in the repr)."""
        return self._footer_key

    @property
    def encrypted_columns(self) -> frozenset[str] | None:
        """Dotted paths of the column-key columns, or None under uniform encryption (all)."""
        return None if self.uniform else frozenset(self._column_keys)

    def column_key(self, path: ColumnPath) -> bytes | None:
        """Key of a column, or None when it is stored in plaintext."""
        if self.uniform:
            return self._footer_key
        return self._column_keys.get(column_path(path))

    def new_file_context(self) -> FileEncryptionContext:
        """Per-file state: a fresh random ``aad_file_unique`` and the file's module cipher."""
        return FileEncryptionContext(self, os.urandom(AAD_FILE_UNIQUE_LENGTH))

    def __repr__(self) -> str:
        cols = "uniform (footer key)" if self.uniform else sorted(self._column_keys)
        prefix = "none" if self.aad_prefix is None else f"<{len(self.aad_prefix)} bytes, stored={self.store_aad_prefix}>"
        return (
            f"FileEncryptionProperties(algorithm={self.algorithm}, plaintext_footer={self.plaintext_footer}, "
            f"footer_key=<{len(self._footer_key) * 8}-bit>, encrypted_columns={cols}, aad_prefix={prefix}, "
            f"footer_key_metadata={'set' if self.footer_key_metadata else 'none'})"
        )


class FileEncryptionContext:
    """Encryption state of one file being written.

    The writer calls :meth:`column_setup` per leaf column, encrypts every module of an
    encrypted column with :meth:`encrypt` (or ``cipher.encrypt``), and ends the file with
    :meth:`footer_tail` over the serialized footer (:mod:`pqbloom.file.encryption` puts
    :attr:`algorithm` and each column's crypto metadata into the footer first).
    The file starts with :attr:`magic`.
    """

    def __init__(self, properties: FileEncryptionProperties, aad_file_unique: bytes) -> None:
        self.properties = properties
        self.aad_file_unique = bytes(aad_file_unique)
        prefix = properties.aad_prefix
        self.file_aad = (prefix or b"") + self.aad_file_unique
        stored = prefix if (prefix is not None and properties.store_aad_prefix) else None
        supply = prefix is not None and not properties.store_aad_prefix
        #: what the file stores of its algorithm
        self.algorithm = AlgorithmParams(properties.algorithm, stored, self.aad_file_unique, supply)
        self.cipher = ModuleCipher(properties.algorithm, self.file_aad, properties._counter)

    def __repr__(self) -> str:
        return f"FileEncryptionContext({self.properties!r})"

    @property
    def plaintext_footer(self) -> bool:
        return self.properties.plaintext_footer

    @property
    def magic(self) -> bytes:
        return MAGIC_PLAIN if self.properties.plaintext_footer else MAGIC_ENCRYPTED_FOOTER

    @property
    def footer_key(self) -> bytes:
        return self.properties.footer_key

    @property
    def footer_key_metadata(self) -> bytes | None:
        return self.properties.footer_key_metadata

    def check_columns(self, leaf_paths: Iterable[ColumnPath]) -> None:
        """Raise EncryptionError if a column key names a column that is not in the schema."""
        present = {column_path(p) for p in leaf_paths}
        missing = sorted(set(self.properties._column_keys) - present)
        if missing:
            raise EncryptionError(f"column keys given for columns not in the schema: {missing}")

    def is_encrypted(self, path: ColumnPath) -> bool:
        return self.properties.column_key(path) is not None

    def column_setup(self, path: ColumnPath) -> tuple[bytes | None, ColumnCrypto | None]:
        """``(key, crypto_metadata)`` of a column; ``(None, None)`` for a plaintext column."""
        props = self.properties
        if props.uniform:
            return props.footer_key, _FOOTER_KEYED
        name = column_path(path)
        key = props._column_keys.get(name)
        if key is None:
            return None, None
        parts = _path_parts(path) if not isinstance(path, str) else props._column_parts[name]
        return key, ColumnCrypto("column_key", tuple(parts), props.column_key_metadata.get(name))

    def encrypt(self, key: bytes, module_type: int, plaintext: Buffer, row_group: int = -1, column: int = -1,
                page: int = -1) -> bytes:
        """One whole module (length field included); see :class:`ModuleCipher`."""
        return self.cipher.encrypt(key, module_type, plaintext, row_group, column, page)

    def footer_tail(self, footer: bytes, file_crypto_metadata: bytes) -> bytes:
        """Everything after the last module: footer (encrypted or signed) || len(4 LE) || magic.

        ``footer`` is the serialized FileMetaData (naming the algorithm and the footer key metadata when
        the footer stays plaintext); ``file_crypto_metadata`` the serialized FileCryptoMetaData an
        encrypted footer starts with (unused for a plaintext footer).
        """
        if self.plaintext_footer:
            body = footer + self.cipher.sign_footer(self.footer_key, footer)
        else:
            body = file_crypto_metadata + self.cipher.encrypt_footer(self.footer_key, footer)
        return body + struct.pack("<I", len(body)) + self.magic


_FOOTER_KEYED = ColumnCrypto("footer_key")


# =============================================================================================
# reading


class FileDecryptionProperties:
    """Where a reader gets keys: explicit keys first, then ``key_retriever(key_metadata)``.

    Args:
        footer_key: Explicit footer key (used whatever the file's footer key metadata says).
        column_keys: ``{"a.b.c": key}`` explicit column keys.
        key_retriever: ``callable(key_metadata: bytes) -> key`` for keys not given explicitly.
        aad_prefix: AAD prefix to supply (required for files that do not store theirs).
        check_footer_integrity: Verify the signature of plaintext footers (default True).
    """

    def __init__(
        self,
        footer_key: bytes | None = None,
        column_keys: Mapping[str, bytes] | None = None,
        key_retriever: KeyRetriever | None = None,
        aad_prefix: bytes | None = None,
        *,
        check_footer_integrity: bool = True,
    ) -> None:
        self._footer_key = None if footer_key is None else check_key(footer_key, decrypting=True, what="footer key")
        self._column_keys = {
            column_path(p): check_key(k, decrypting=True, what=f"key of column {column_path(p)!r}")
            for p, k in (column_keys or {}).items()
        }
        self.key_retriever = key_retriever
        self.aad_prefix = _opt_bytes(aad_prefix, "aad_prefix")
        self.check_footer_integrity = bool(check_footer_integrity)
        self._retrieved: dict[bytes, bytes] = {}
        self._lock = threading.Lock()

    def __repr__(self) -> str:
        return (
            f"FileDecryptionProperties(footer_key={'<set>' if self._footer_key else 'none'}, "
            f"column_keys={redact(self._column_keys)}, key_retriever={'set' if self.key_retriever else 'none'}, "
            f"aad_prefix={'none' if self.aad_prefix is None else f'<{len(self.aad_prefix)} bytes>'})"
        )

    def _retrieve(self, key_metadata: bytes, where: str) -> bytes:
        with self._lock:
            cached = self._retrieved.get(key_metadata)
        if cached is not None:
            return cached
        assert self.key_retriever is not None
        try:
            key = self.key_retriever(key_metadata)
        except CryptoError as exc:
            raise type(exc)(f"{where}: {exc}") from exc
        except Exception as exc:
            raise KeyNotFoundError(f"{where}: key retriever failed ({exc.__class__.__name__}: {exc})") from exc
        if key is None:
            raise KeyNotFoundError(f"{where}: key retriever returned no key")
        key = check_key(key, decrypting=True, what=f"key returned for {where}")
        with self._lock:
            self._retrieved[key_metadata] = key
        return key

    def footer_key_for(self, key_metadata: bytes | None) -> bytes:
        """The footer key: the explicit one, else the retriever's answer for ``key_metadata``."""
        if self._footer_key is not None:
            return self._footer_key
        if self.key_retriever is not None and key_metadata is not None:
            return self._retrieve(bytes(key_metadata), "footer key")
        raise KeyNotFoundError(
            "no key for the footer: give a footer key"
            + (" or a key retriever" if key_metadata is not None else " (the file stores no footer key metadata)")
        )

    def column_key_for(self, path: ColumnPath, key_metadata: bytes | None) -> bytes:
        """Key of a column encrypted with its own key; KeyNotFoundError names the column."""
        name = column_path(path)
        key = self._column_keys.get(name)
        if key is not None:
            return key
        if self.key_retriever is not None and key_metadata is not None:
            return self._retrieve(bytes(key_metadata), f"key of column {name!r}")
        raise KeyNotFoundError(f"no key for encrypted column {name!r}")

    def file_aad_from(self, algorithm: AlgorithmParams) -> bytes:
        """``aad_prefix || aad_file_unique`` for a file, applying the stored/supplied prefix rules."""
        unique = algorithm.aad_file_unique or b""
        stored = algorithm.aad_prefix
        if self.aad_prefix is not None:
            if stored is not None and bytes(stored) != self.aad_prefix:
                raise DecryptionError("AAD prefix mismatch: the prefix supplied differs from the one stored in the file")
            if stored is None and not algorithm.supply_aad_prefix:
                raise DecryptionError(
                    "AAD prefix mismatch: a prefix was supplied but the file was written without one"
                )
            return self.aad_prefix + bytes(unique)
        if algorithm.supply_aad_prefix:
            raise KeyNotFoundError(
                "the file was written with an AAD prefix it does not store; supply it as aad_prefix"
            )
        return bytes(stored or b"") + bytes(unique)

    def new_file_context(self, algorithm: AlgorithmParams,
                         footer_key_metadata: bytes | None = None) -> FileDecryptionContext:
        """Per-file state from the file's stored algorithm and footer key metadata."""
        return FileDecryptionContext(self, algorithm, footer_key_metadata)


class FileDecryptionContext:
    """Decryption state of one file: its file AAD, module cipher, and resolved keys."""

    def __init__(self, properties: FileDecryptionProperties, algorithm: AlgorithmParams,
                 footer_key_metadata: bytes | None = None) -> None:
        self.properties = properties
        self.algorithm = algorithm
        #: FileCryptoMetaData.key_metadata or FileMetaData.footer_signing_key_metadata
        self.footer_key_metadata = footer_key_metadata
        self.algorithm_name = algorithm.name
        self.file_aad = properties.file_aad_from(algorithm)
        self.cipher = ModuleCipher(self.algorithm_name, self.file_aad)

    def __repr__(self) -> str:
        return f"FileDecryptionContext({self.algorithm_name}, {self.properties!r})"

    def footer_key(self) -> bytes:
        return self.properties.footer_key_for(self.footer_key_metadata)

    def column_key(self, path: ColumnPath, crypto_metadata: ColumnCrypto | None) -> bytes | None:
        """Key of a column chunk from its ``crypto_metadata``; None for a plaintext column."""
        if crypto_metadata is None:
            return None
        if crypto_metadata.kind == "footer_key":
            return self.footer_key()
        if crypto_metadata.kind != "column_key":
            raise DecryptionError(f"column {column_path(path)!r} names an unknown kind of column encryption")
        return self.properties.column_key_for(path, crypto_metadata.key_metadata)

    def decrypt(self, key: bytes, module_type: int, module: bytes, row_group: int = -1, column: int = -1,
                page: int = -1, *, what: str | None = None) -> bytes:
        return self.cipher.decrypt(key, module_type, module, row_group, column, page, what=what)

    def decrypt_footer(self, module: bytes) -> bytes:
        return self.cipher.decrypt(self.footer_key(), ModuleType.FOOTER, module)

    def verify_footer(self, footer_bytes: bytes, signature: bytes) -> None:
        self.cipher.verify_footer_signature(self.footer_key(), footer_bytes, signature)
