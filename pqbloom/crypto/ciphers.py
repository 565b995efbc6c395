"""Parquet Modular Encryption: module types, AAD building, AES-GCM / AES-CTR modules.

This layer knows module bytes and nothing else. A module on disk is::

    GCM:  length(4, LE) || nonce(12) || ciphertext(n) || tag(16)     length = n + 28
    CTR:  length(4, LE) || nonce(12) || ciphertext(n)                length = n + 12

AES_GCM_CTR_V1 uses CTR only for data and dictionary pages (module types 2 and
3); every other module, and everything under AES_GCM_V1, uses GCM.

Error messages may name the module type and ordinals, never a key.
"""

from __future__ import annotations

import hashlib
import hmac
import os
import struct
import threading
from collections.abc import Mapping
from enum import IntEnum

from cryptography.exceptions import InvalidTag
from cryptography.hazmat.primitives.ciphers import Cipher, algorithms, modes
from cryptography.hazmat.primitives.ciphers.aead import AESGCM

from ..errors import AuthenticationError, CorruptFileError, DecryptionError, EncryptionError

__all__ = [
    "AES_GCM_CTR_V1",
    "AES_GCM_V1",
    "ALGORITHMS",
    "CTR_OVERHEAD",
    "GCM_INVOCATION_LIMIT",
    "GCM_OVERHEAD",
    "KEY_LENGTHS",
    "MAX_ORDINAL",
    "MODULE_LENGTH_SIZE",
    "NONCE_LENGTH",
    "SIGNATURE_LENGTH",
    "TAG_LENGTH",
    "InvocationCounter",
    "ModuleCipher",
    "ModuleType",
    "check_key",
    "check_ordinal",
    "decrypt_ctr",
    "decrypt_gcm",
    "encrypt_ctr",
    "encrypt_gcm",
    "module_aad",
    "read_module_length",
    "redact",
    "sign_footer",
    "verify_footer_signature",
]

AES_GCM_V1 = "AES_GCM_V1"
AES_GCM_CTR_V1 = "AES_GCM_CTR_V1"
ALGORITHMS = (AES_GCM_V1, AES_GCM_CTR_V1)

KEY_LENGTHS = (16, 24, 32)
NONCE_LENGTH = 12
TAG_LENGTH = 16
MODULE_LENGTH_SIZE = 4
#: bytes a GCM module adds inside its length field (nonce + tag); on disk add 4 for the length itself
GCM_OVERHEAD = NONCE_LENGTH + TAG_LENGTH
#: bytes a CTR module adds inside its length field (nonce); on disk add 4 for the length itself
CTR_OVERHEAD = NONCE_LENGTH
#: nonce || tag stored after a signed plaintext footer
SIGNATURE_LENGTH = NONCE_LENGTH + TAG_LENGTH
#: ordinals are int16 in the AAD
MAX_ORDINAL = 32767
#: a key must not drive more than 2**32 GCM encryptions (NIST SP 800-38D, RBG nonces)
GCM_INVOCATION_LIMIT = 2**32

_CTR_INITIAL_COUNTER = b"\x00\x00\x00\x01"
_MAX_MODULE_LENGTH = 2**32 - 1

Buffer = bytes | bytearray | memoryview


class ModuleType(IntEnum):
    """Module type byte of the AAD. The only place these numbers live."""

    FOOTER = 0
    COLUMN_META_DATA = 1
    DATA_PAGE = 2
    DICTIONARY_PAGE = 3
    DATA_PAGE_HEADER = 4
    DICTIONARY_PAGE_HEADER = 5
    COLUMN_INDEX = 6
    OFFSET_INDEX = 7
    BLOOM_FILTER_HEADER = 8
    BLOOM_FILTER_BITSET = 9


_PAGE_ORDINAL_TYPES = frozenset({ModuleType.DATA_PAGE, ModuleType.DATA_PAGE_HEADER})
_CTR_TYPES = frozenset({ModuleType.DATA_PAGE, ModuleType.DICTIONARY_PAGE})


# ---------------------------------------------------------------------------------------------
# keys and AAD


def check_key(key: object, *, decrypting: bool = False, what: str = "key") -> bytes:
    """Return ``key`` as bytes if it is a valid AES key (16, 24 or 32 bytes).

    Raises EncryptionError (or DecryptionError when ``decrypting``); the message gives the
    length, never the key.
    """
    err = DecryptionError if decrypting else EncryptionError
    if not isinstance(key, bytes | bytearray | memoryview):
        raise err(f"{what} must be bytes, not {type(key).__name__}")
    raw = bytes(key)
    if len(raw) not in KEY_LENGTHS:
        raise err(f"{what} has {len(raw)} bytes; AES keys have 16, 24 or 32 bytes")
    return raw


def _ordinal(name: str, value: int, module_type: ModuleType) -> bytes:
    if not isinstance(value, int) or value < 0:
        raise EncryptionError(f"{module_type.name} module needs a {name} ordinal >= 0, got {value!r}")
    if value > MAX_ORDINAL:
        raise EncryptionError(
            f"{name} ordinal {value} does not fit the int16 AAD field of {module_type.name} "
            f"(at most {MAX_ORDINAL + 1} {name}s)"
        )
    return struct.pack("<h", value)


def check_ordinal(kind: str, value: int) -> None:
    """Raise EncryptionError unless ``value`` fits an AAD ordinal (0..32767); ``kind`` is
    "row group", "column" or "page"."""
    if not isinstance(value, int) or value < 0 or value > MAX_ORDINAL:
        raise EncryptionError(
            f"{kind} ordinal {value!r} does not fit the int16 AAD field of encrypted modules "
            f"(at most {MAX_ORDINAL + 1} {kind}s)"
        )


def module_aad(file_aad: bytes, module_type: int, row_group: int = -1, column: int = -1, page: int = -1) -> bytes:
    """AAD of one module: ``file_aad || type [|| rg(int16 LE) || col(int16 LE) [|| page(int16 LE)]]``.

    The footer takes no ordinals; data pages and data page headers also take the page ordinal.
    """
    mt = ModuleType(module_type)
    aad = bytes(file_aad) + bytes((int(mt),))
    if mt == ModuleType.FOOTER:
        return aad
    aad += _ordinal("row group", row_group, mt) + _ordinal("column", column, mt)
    if mt in _PAGE_ORDINAL_TYPES:
        aad += _ordinal("page", page, mt)
    return aad


def _describe(module_type: int, row_group: int, column: int, page: int) -> str:
    mt = ModuleType(module_type)
    if mt == ModuleType.FOOTER:
        return "footer"
    text = f"{mt.name} module (row group {row_group}, column {column}"
    if mt in _PAGE_ORDINAL_TYPES:
        text += f", page {page}"
    return text + ")"


# ---------------------------------------------------------------------------------------------
# module framing


def read_module_length(buf: Buffer, offset: int = 0, *, whole: bool = True) -> int:
    """Length field of the module starting at ``buf[offset]``: bytes after the 4-byte field.

    The module occupies ``4 + result`` bytes. With ``whole`` (the default) the module must fit
    in ``buf``; otherwise only the length field has to be there. Raises CorruptFileError.
    """
    if offset < 0 or offset + MODULE_LENGTH_SIZE > len(buf):
        raise CorruptFileError("encrypted module length field is cut off", offset=offset)
    (length,) = struct.unpack_from("<I", buf, offset)
    if whole and offset + MODULE_LENGTH_SIZE + length > len(buf):
        raise CorruptFileError(
            f"encrypted module of {length} bytes runs past the end of its buffer "
            f"({len(buf) - offset - MODULE_LENGTH_SIZE} bytes available)",
            offset=offset,
        )
    return int(length)


def _split(module: Buffer, minimum: int, what: str) -> memoryview:
    """Validate the length field; return the view of what follows it."""
    view = memoryview(module)
    if view.ndim != 1 or view.format != "B":
        view = view.cast("B")
    if len(view) < MODULE_LENGTH_SIZE:
        raise AuthenticationError(f"{what}: encrypted module is {len(view)} bytes, shorter than its length field")
    (length,) = struct.unpack_from("<I", view, 0)
    body = view[MODULE_LENGTH_SIZE:]
    if length != len(body):
        raise AuthenticationError(
            f"{what}: module length field says {length} bytes but {len(body)} follow (truncated or tampered)"
        )
    if length < minimum:
        raise AuthenticationError(f"{what}: module of {length} bytes is shorter than its {minimum}-byte overhead")
    return body


def _frame(nonce: bytes, payload: bytes) -> bytes:
    length = len(nonce) + len(payload)
    if length > _MAX_MODULE_LENGTH:
        raise EncryptionError(f"module of {length} bytes does not fit the 4-byte length field")
    return struct.pack("<I", length) + nonce + payload


# ---------------------------------------------------------------------------------------------
# raw GCM / CTR modules


def encrypt_gcm(key: bytes, plaintext: Buffer, aad: bytes, *, nonce: bytes | None = None) -> bytes:
    """Encrypt one GCM module: ``len || nonce || ciphertext || tag`` with a fresh random nonce."""
    raw = check_key(key)
    if nonce is None:
        nonce = os.urandom(NONCE_LENGTH)
    elif len(nonce) != NONCE_LENGTH:
        raise EncryptionError(f"GCM nonce must be {NONCE_LENGTH} bytes")
    return _frame(nonce, AESGCM(raw).encrypt(nonce, bytes(plaintext), bytes(aad)))


def decrypt_gcm(key: bytes, module: Buffer, aad: bytes, what: str | None = None) -> bytes:
    """Decrypt one whole GCM module (length field included); AuthenticationError on any mismatch."""
    label = what or "GCM module"
    raw = check_key(key, decrypting=True)
    body = _split(module, GCM_OVERHEAD, label)
    nonce = bytes(body[:NONCE_LENGTH])
    try:
        return AESGCM(raw).decrypt(nonce, bytes(body[NONCE_LENGTH:]), bytes(aad))
    except InvalidTag:
        raise AuthenticationError(
            f"{label}: AES-GCM authentication failed (wrong key or AAD prefix, or tampered data)"
        ) from None


def _ctr(key: bytes, nonce: bytes, data: bytes) -> bytes:
    ctx = Cipher(algorithms.AES(key), modes.CTR(nonce + _CTR_INITIAL_COUNTER)).encryptor()
    return ctx.update(data) + ctx.finalize()


def encrypt_ctr(key: bytes, plaintext: Buffer, *, nonce: bytes | None = None) -> bytes:
    """Encrypt one CTR module: ``len || nonce || ciphertext``; IV = nonce || 00000001."""
    raw = check_key(key)
    if nonce is None:
        nonce = os.urandom(NONCE_LENGTH)
    elif len(nonce) != NONCE_LENGTH:
        raise EncryptionError(f"CTR nonce must be {NONCE_LENGTH} bytes")
    return _frame(nonce, _ctr(raw, nonce, bytes(plaintext)))


def decrypt_ctr(key: bytes, module: Buffer, what: str | None = None) -> bytes:
    """Decrypt one whole CTR module. CTR has no tag: a wrong key gives garbage, not an error."""
    raw = check_key(key, decrypting=True)
    body = _split(module, CTR_OVERHEAD, what or "CTR module")
    return _ctr(raw, bytes(body[:NONCE_LENGTH]), bytes(body[NONCE_LENGTH:]))


# ---------------------------------------------------------------------------------------------
# plaintext-footer signature


def _footer_tag(key: bytes, footer_bytes: Buffer, nonce: bytes, file_aad: bytes) -> bytes:
    aad = module_aad(file_aad, ModuleType.FOOTER)
    return AESGCM(key).encrypt(nonce, bytes(footer_bytes), aad)[-TAG_LENGTH:]


def sign_footer(key: bytes, footer_bytes: Buffer, file_aad: bytes, *, nonce: bytes | None = None) -> bytes:
    """Signature of a plaintext footer: ``nonce(12) || tag(16)`` of AES-GCM(footer, AAD=file_aad||00)."""
    raw = check_key(key, what="footer key")
    if nonce is None:
        nonce = os.urandom(NONCE_LENGTH)
    elif len(nonce) != NONCE_LENGTH:
        raise EncryptionError(f"footer signature nonce must be {NONCE_LENGTH} bytes")
    return nonce + _footer_tag(raw, footer_bytes, nonce, file_aad)


def verify_footer_signature(key: bytes, footer_bytes: Buffer, nonce_and_tag: Buffer, file_aad: bytes) -> None:
    """Check a plaintext footer's signature; AuthenticationError if it does not match."""
    raw = check_key(key, decrypting=True, what="footer key")
    sig = bytes(nonce_and_tag)
    if len(sig) != SIGNATURE_LENGTH:
        raise AuthenticationError(f"footer signature is {len(sig)} bytes, expected {SIGNATURE_LENGTH}")
    expected = _footer_tag(raw, footer_bytes, sig[:NONCE_LENGTH], file_aad)
    if not hmac.compare_digest(expected, sig[NONCE_LENGTH:]):
        raise AuthenticationError(
            "plaintext footer signature does not match (wrong footer key or AAD prefix, or tampered footer)"
        )


# ---------------------------------------------------------------------------------------------
# per-key invocation counting and the per-file module cipher


class InvocationCounter:
    """Counts GCM encryptions per key and fails once a key would pass ``limit``.

    Keys are held only as the identity of a keyed fingerprint, never printed.
    """

    def __init__(self, limit: int = GCM_INVOCATION_LIMIT) -> None:
        self.limit = int(limit)
        self._counts: dict[bytes, int] = {}
        self._lock = threading.Lock()

    @staticmethod
    def _fingerprint(key: bytes) -> bytes:
        return hashlib.blake2b(key, digest_size=16, person=b"pqbloom-gcm-ctr").digest()

    def add(self, key: bytes, n: int = 1) -> int:
        """Record ``n`` GCM encryptions under ``key``; return the new total."""
        fp = self._fingerprint(key)
        with self._lock:
            total = self._counts.get(fp, 0) + n
            if total > self.limit:
                raise EncryptionError(
                    f"a key would be used for more than {self.limit} AES-GCM encryptions; "
                    "use a fresh key (for example a new data key per file)"
                )
            self._counts[fp] = total
            return total

    def count(self, key: bytes) -> int:
        with self._lock:
            return self._counts.get(self._fingerprint(key), 0)

    def __repr__(self) -> str:
        return f"InvocationCounter(limit={self.limit}, keys={len(self._counts)})"


def _algorithm_name(algorithm: object) -> str:
    """Accept "AES_GCM_V1"/"AES_GCM_CTR_V1" or a Thrift EncryptionAlgorithm union."""
    if isinstance(algorithm, str):
        name = algorithm.upper()
        if name not in ALGORITHMS:
            raise EncryptionError(f"unknown encryption algorithm {algorithm!r}; expected one of {ALGORITHMS}")
        return name
    if getattr(algorithm, "AES_GCM_V1", None) is not None:
        return AES_GCM_V1
    if getattr(algorithm, "AES_GCM_CTR_V1", None) is not None:
        return AES_GCM_CTR_V1
    raise DecryptionError("encryption algorithm is neither AES_GCM_V1 nor AES_GCM_CTR_V1")


class ModuleCipher:
    """Encrypts and decrypts the modules of one file (one algorithm, one file AAD).

    ``encrypt``/``decrypt`` take and return whole modules including the 4-byte length.
    Pages (types 2 and 3) use CTR under AES_GCM_CTR_V1; everything else uses GCM.
    """

    def __init__(self, algorithm: object, file_aad: bytes, counter: InvocationCounter | None = None) -> None:
        self.algorithm = _algorithm_name(algorithm)
        self.file_aad = bytes(file_aad)
        self.counter = counter if counter is not None else InvocationCounter()
        self._gcm: dict[bytes, AESGCM] = {}

    def __repr__(self) -> str:
        return f"ModuleCipher({self.algorithm}, file_aad={len(self.file_aad)} bytes)"

    def _aead(self, key: bytes) -> AESGCM:
        aead = self._gcm.get(key)
        if aead is None:
            if len(self._gcm) > 64:
                self._gcm.clear()
            aead = self._gcm[key] = AESGCM(key)
        return aead

    def uses_ctr(self, module_type: int) -> bool:
        return self.algorithm == AES_GCM_CTR_V1 and ModuleType(module_type) in _CTR_TYPES

    def overhead(self, module_type: int) -> int:
        """On-disk bytes a module of this type adds to its plaintext, length field included."""
        return MODULE_LENGTH_SIZE + (CTR_OVERHEAD if self.uses_ctr(module_type) else GCM_OVERHEAD)

    def aad(self, module_type: int, row_group: int = -1, column: int = -1, page: int = -1) -> bytes:
        return module_aad(self.file_aad, module_type, row_group, column, page)

    def encrypt(self, key: bytes, module_type: int, plaintext: Buffer, row_group: int = -1, column: int = -1,
                page: int = -1) -> bytes:
        raw = check_key(key)
        mt = ModuleType(module_type)
        aad = self.aad(mt, row_group, column, page)  # validates ordinals even for CTR pages
        nonce = os.urandom(NONCE_LENGTH)
        if self.uses_ctr(mt):
            return _frame(nonce, _ctr(raw, nonce, bytes(plaintext)))
        self.counter.add(raw)
        return _frame(nonce, self._aead(raw).encrypt(nonce, bytes(plaintext), aad))

    def decrypt(self, key: bytes, module_type: int, module: Buffer, row_group: int = -1, column: int = -1,
                page: int = -1, *, what: str | None = None) -> bytes:
        raw = check_key(key, decrypting=True)
        mt = ModuleType(module_type)
        label = what or _describe(mt, row_group, column, page)
        try:
            aad = self.aad(mt, row_group, column, page)
        except EncryptionError as exc:
            raise DecryptionError(str(exc)) from None
        if self.uses_ctr(mt):
            body = _split(module, CTR_OVERHEAD, label)
            return _ctr(raw, bytes(body[:NONCE_LENGTH]), bytes(body[NONCE_LENGTH:]))
        body = _split(module, GCM_OVERHEAD, label)
        try:
            return self._aead(raw).decrypt(bytes(body[:NONCE_LENGTH]), bytes(body[NONCE_LENGTH:]), aad)
        except InvalidTag:
            raise AuthenticationError(
                f"{label}: AES-GCM authentication failed (wrong key or AAD prefix, or tampered or moved data)"
            ) from None

    # footer helpers -------------------------------------------------------------------------

    def encrypt_footer(self, key: bytes, footer_bytes: Buffer) -> bytes:
        return self.encrypt(key, ModuleType.FOOTER, footer_bytes)

    def decrypt_footer(self, key: bytes, module: Buffer) -> bytes:
        return self.decrypt(key, ModuleType.FOOTER, module)

    def sign_footer(self, key: bytes, footer_bytes: Buffer) -> bytes:
        raw = check_key(key, what="footer key")
        self.counter.add(raw)
        return sign_footer(raw, footer_bytes, self.file_aad)

    def verify_footer_signature(self, key: bytes, footer_bytes: Buffer, nonce_and_tag: Buffer) -> None:
        verify_footer_signature(key, footer_bytes, nonce_and_tag, self.file_aad)


def redact(mapping: Mapping[str, object] | None) -> str:
    """``{name: <n bytes>}`` text for reprs: names only, never key material."""
    if not mapping:
        return "{}"
    parts = []
    for name, value in mapping.items():
        size = len(value) if isinstance(value, bytes | bytearray | memoryview) else None
        parts.append(f"{name!r}: <{size} bytes>" if size is not None else f"{name!r}: <hidden>")
    return "{" + ", ".join(parts) + "}"
