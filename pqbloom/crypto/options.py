"""Key options, as the command line and the Spark data source take them, turned into
:class:`~pqbloom.crypto.FileEncryptionProperties` / :class:`~pqbloom.crypto.FileDecryptionProperties`.

Both front ends parse their text options here, once:

* a key: 32, 48 or 64 hex digits (``0x`` allowed), or ``@PATH``: a key file holding the key as hex
  text or as exactly 16, 24 or 32 raw bytes;
* column keys: ``COLUMN=KEY`` items on the command line (``--column-key``, repeatable),
  ``"col:KEY,col2:KEY"`` for Spark (``column_keys``);
* master keys of an in-memory KMS (:class:`~pqbloom.crypto.InMemoryKms`): a KMS config file
  (``--kms-config``, below) or a parquet-java style key list ``"keyA:BASE64,keyB:BASE64"``
  (Spark's ``kms_key_list``, the syntax of ``parquet.encryption.key.list``).

A malformed value or a conflicting combination raises :class:`KeyOptionError` (a
:class:`~pqbloom.errors.CryptoError` and a ``ValueError``) naming the option and what was
expected; messages give lengths, never key material.

KMS configuration file (``--kms-config``), JSON; only ``master_keys`` is needed for reading::

    {
      "master_keys": {"kf": "<32, 48 or 64 hex digits>", "kc": "base64:<16, 24 or 32 bytes>"},
      "footer_key": "kf",
      "column_keys": {"kc": ["email", "ssn"]},
      "uniform_encryption": false,
      "plaintext_footer": false,
      "encryption_algorithm": "AES_GCM_V1",
      "double_wrapping": true,
      "internal_key_material": true,
      "data_key_length_bits": 128,
      "kms_instance_id": "DEFAULT"
    }

Each file written through a KMS gets fresh data keys, wrapped into its key metadata exactly as
parquet-java's ``PropertiesDrivenCryptoFactory`` does, so the same master keys read the file back
in pyarrow or Spark. With ``"internal_key_material": false`` the keys go to
``_KEY_MATERIAL_FOR_<output>.json``, committed together with the output
(:mod:`pqbloom.crypto.key_material`): a write that fails leaves an older output and its keys as
they were.
"""

from __future__ import annotations

import base64
import binascii
import json
import re
from collections.abc import Iterable, Mapping
from typing import Any

from ..errors import CryptoError
from .ciphers import AES_GCM_V1
from .keytools import CryptoFactory, EncryptionConfiguration, InMemoryKms, KmsConnectionConfig
from .properties import FileDecryptionProperties, FileEncryptionProperties

__all__ = [
    "KeyOptionError",
    "decryption_properties",
    "decryption_properties_from_options",
    "encryption_properties",
    "encryption_properties_from_options",
    "in_memory_kms",
    "load_kms_config",
    "parse_column_keys",
    "parse_key",
    "parse_key_list",
    "parse_master_key",
    "read_key_file",
]

_HEX_RE = re.compile(r"(?:0x)?([0-9a-fA-F]+)\Z")
_HEX_DIGITS = (32, 48, 64)
_KEY_BYTES = (16, 24, 32)
_KMS_CONFIG_ENTRIES = frozenset({
    "master_keys", "footer_key", "column_keys", "uniform_encryption", "plaintext_footer", "encryption_algorithm",
    "double_wrapping", "internal_key_material", "data_key_length_bits", "kms_instance_id", "kms_instance_url",
    "cache_lifetime_seconds"})


class KeyOptionError(CryptoError, ValueError):
    """A key option is malformed, or options that exclude each other were given together."""


# ---------------------------------------------------------------------------------------------
# single values


def parse_key(text: str, what: str) -> bytes:
    """An AES key from hex text (32, 48 or 64 digits) or ``@path`` (see :func:`read_key_file`).

    Error messages name ``what`` and the length, never the key.
    """
    text = text.strip()
    if text.startswith("@"):
        return read_key_file(text[1:], what)
    m = _HEX_RE.match(text)
    if not m or len(m.group(1)) not in _HEX_DIGITS:
        raise KeyOptionError(f"{what} is not a hex AES key: expected 32, 48 or 64 hex digits, "
                             f"got {len(text)} characters")
    return bytes.fromhex(m.group(1))


def read_key_file(path: str, what: str) -> bytes:
    """The key in the file at ``path``: hex text (32, 48 or 64 digits), or exactly 16, 24 or 32 raw bytes."""
    with open(path, "rb") as fh:
        raw = fh.read(4096)
    try:
        text = raw.decode("ascii").strip()
    except UnicodeDecodeError:
        text = ""
    m = _HEX_RE.match(text) if text else None
    if m and len(m.group(1)) in _HEX_DIGITS:
        return bytes.fromhex(m.group(1))
    if len(raw) in _KEY_BYTES:
        return raw
    raise KeyOptionError(f"{what}: key file {path!r} holds neither 32/48/64 hex digits nor 16/24/32 raw bytes")


def parse_master_key(value: object, what: str) -> bytes:
    """A master key as a KMS config file gives it: hex text, ``base64:...`` or ``@path``."""
    if not isinstance(value, str):
        raise KeyOptionError(f"{what} must be a string (hex, or base64:...)")
    if value.startswith("base64:"):
        return _base64_key(value[len("base64:"):], what)
    return parse_key(value, what)


def _base64_key(text: str, what: str) -> bytes:
    try:
        raw = base64.b64decode(text.strip(), validate=True)
    except (binascii.Error, ValueError):
        raise KeyOptionError(f"{what} is not valid base64") from None
    if len(raw) not in _KEY_BYTES:
        raise KeyOptionError(f"{what} has {len(raw)} bytes; AES keys have 16, 24 or 32")
    return raw


def parse_column_keys(items: Iterable[str], what: str, *, separator: str = "=") -> dict[str, bytes]:
    """``{column: key}`` from ``COLUMN<separator>KEY`` items (KEY as :func:`parse_key` takes it).

    A column given twice is an error (which key was meant?).
    """
    keys: dict[str, bytes] = {}
    for item in items:
        name, sep, value = item.partition(separator)
        name = name.strip()
        if not sep or not name:
            raise KeyOptionError(f"{what} takes COLUMN{separator}HEX (or COLUMN{separator}@KEYFILE)")
        if name in keys:
            raise KeyOptionError(f"{what} gives column {name!r} twice")
        keys[name] = parse_key(value, f"{what} key of column {name!r}")
    return keys


def parse_key_list(text: str, what: str) -> dict[str, bytes]:
    """``{master key id: key}`` from a parquet-java key list, ``"keyA:BASE64,keyB:BASE64"``."""
    keys: dict[str, bytes] = {}
    for item in text.split(","):
        if not item.strip():
            continue
        key_id, sep, value = item.partition(":")
        key_id = key_id.strip()
        if not sep or not key_id:
            raise KeyOptionError(f"{what} takes KEY_ID:BASE64 entries separated by commas")
        if key_id in keys:
            raise KeyOptionError(f"{what} gives master key {key_id!r} twice")
        keys[key_id] = _base64_key(value, f"{what}: master key {key_id!r}")
    if not keys:
        raise KeyOptionError(f"{what} lists no master keys")
    return keys


# ---------------------------------------------------------------------------------------------
# an in-memory KMS


def load_kms_config(path: str) -> dict[str, Any]:
    """Read and check a KMS config file (format in the module docstring); master keys come back as bytes."""
    try:
        with open(path, encoding="utf-8") as fh:
            cfg = json.load(fh)
    except json.JSONDecodeError as exc:
        raise KeyOptionError(f"KMS config {path!r} is not valid JSON (line {exc.lineno}: {exc.msg})") from None
    if not isinstance(cfg, dict):
        raise KeyOptionError(f"KMS config {path!r} must be a JSON object")
    unknown = sorted(set(cfg) - _KMS_CONFIG_ENTRIES)
    if unknown:
        raise KeyOptionError(f"KMS config {path!r}: unknown entries {unknown}")
    mk = cfg.get("master_keys")
    if not isinstance(mk, dict) or not mk:
        raise KeyOptionError(f"KMS config {path!r} needs \"master_keys\": {{\"id\": \"hex key\", ...}}")
    cfg["master_keys"] = {str(k): parse_master_key(v, f"master key {str(k)!r} in the KMS config")
                          for k, v in mk.items()}
    return cfg


def in_memory_kms(master_keys: Mapping[str, bytes], *, kms_instance_id: str | None = None,
                  kms_instance_url: str | None = None) -> tuple[CryptoFactory, KmsConnectionConfig]:
    """A crypto factory whose KMS is an :class:`~pqbloom.crypto.InMemoryKms` of ``master_keys``,
    and the connection config to use with it."""
    master = dict(master_keys)
    conn = KmsConnectionConfig()
    if kms_instance_id is not None:
        conn.kms_instance_id = kms_instance_id
    if kms_instance_url is not None:
        conn.kms_instance_url = kms_instance_url
    return CryptoFactory(lambda config: InMemoryKms(master, config)), conn


def _config_kms(cfg: Mapping[str, Any]) -> tuple[CryptoFactory, KmsConnectionConfig]:
    return in_memory_kms(cfg["master_keys"],
                         kms_instance_id=str(cfg["kms_instance_id"]) if "kms_instance_id" in cfg else None,
                         kms_instance_url=str(cfg["kms_instance_url"]) if "kms_instance_url" in cfg else None)


# ---------------------------------------------------------------------------------------------
# properties: the one place each kind is built


def _explicit_encryption(footer_key: bytes, column_keys: Mapping[str, bytes], *, algorithm: str | None,
                         plaintext_footer: bool, aad_prefix: str | None) -> FileEncryptionProperties:
    return FileEncryptionProperties(
        footer_key, dict(column_keys) or None, algorithm=algorithm or AES_GCM_V1, plaintext_footer=plaintext_footer,
        aad_prefix=None if aad_prefix is None else aad_prefix.encode("utf-8"))


def _kms_encryption(kms: tuple[CryptoFactory, KmsConnectionConfig], config: EncryptionConfiguration, *,
                    output_path: str | None, aad_prefix: str | None) -> FileEncryptionProperties:
    factory, conn = kms
    props = factory.file_encryption_properties(conn, config, file_path=output_path)
    if aad_prefix is not None:
        props.aad_prefix = aad_prefix.encode("utf-8")
    return props


def _decryption(footer_key: bytes | None, column_keys: Mapping[str, bytes],
                kms: tuple[CryptoFactory, KmsConnectionConfig] | None, *, aad_prefix: str | None,
                file_path: str | None) -> FileDecryptionProperties | None:
    """Explicit keys first, then the KMS (through the keys' metadata in the file); None when nothing is given."""
    retriever = None
    if kms is not None:
        factory, conn = kms
        retriever = factory.file_decryption_properties(conn, file_path=file_path).key_retriever
    if footer_key is None and not column_keys and retriever is None and aad_prefix is None:
        return None
    return FileDecryptionProperties(footer_key, dict(column_keys) or None, key_retriever=retriever,
                                    aad_prefix=None if aad_prefix is None else aad_prefix.encode("utf-8"))


# ---------------------------------------------------------------------------------------------
# the command line's options


def _footer_key(footer_key_hex: str | None, footer_key_file: str | None) -> bytes | None:
    if footer_key_hex is not None and footer_key_file is not None:
        raise KeyOptionError("give --footer-key-hex or --footer-key-file, not both")
    if footer_key_hex is not None:
        return parse_key(footer_key_hex, "--footer-key-hex")
    if footer_key_file is not None:
        return read_key_file(footer_key_file, "--footer-key-file")
    return None


def encryption_properties(*, footer_key_hex: str | None = None, footer_key_file: str | None = None,
                          column_keys: Iterable[str] = (), plaintext_footer: bool = False,
                          algorithm: str | None = None, aad_prefix: str | None = None,
                          kms_config: str | None = None, output_path: str | None = None
                          ) -> FileEncryptionProperties | None:
    """Encryption properties from the ``pqbloom convert`` options, or None when none asks for encryption.

    Explicit keys (``--footer-key-hex`` / ``--footer-key-file``, ``--column-key COL=HEX``) or a KMS config
    file (``--kms-config``, with ``footer_key`` and ``column_keys`` naming master keys), not both.
    ``output_path`` is the file being written (external key material is stored beside it).
    """
    column_keys = list(column_keys)
    explicit = footer_key_hex is not None or footer_key_file is not None or bool(column_keys)
    if kms_config is not None:
        if explicit:
            raise KeyOptionError("give either explicit keys (--footer-key-hex/--footer-key-file/--column-key) "
                                 "or --kms-config, not both")
        cfg = load_kms_config(kms_config)
        if "footer_key" not in cfg:
            raise KeyOptionError(f"KMS config {kms_config!r} needs \"footer_key\" (a master key id) for writing")
        config = EncryptionConfiguration(
            footer_key=str(cfg["footer_key"]),
            column_keys=cfg.get("column_keys", {}),
            uniform_encryption=bool(cfg.get("uniform_encryption", False)),
            encryption_algorithm=str(algorithm or cfg.get("encryption_algorithm", AES_GCM_V1)),
            plaintext_footer=bool(plaintext_footer or cfg.get("plaintext_footer", False)),
            double_wrapping=bool(cfg.get("double_wrapping", True)),
            internal_key_material=bool(cfg.get("internal_key_material", True)),
            data_key_length_bits=int(cfg.get("data_key_length_bits", 128)),
        )
        return _kms_encryption(_config_kms(cfg), config, output_path=output_path, aad_prefix=aad_prefix)
    if not explicit:
        if plaintext_footer or algorithm or aad_prefix is not None:
            raise KeyOptionError("--plaintext-footer, --algorithm and --aad-prefix need keys "
                                 "(--footer-key-hex/--footer-key-file or --kms-config)")
        return None
    footer_key = _footer_key(footer_key_hex, footer_key_file)
    if footer_key is None:
        raise KeyOptionError("--column-key needs a footer key too (--footer-key-hex or --footer-key-file)")
    return _explicit_encryption(footer_key, parse_column_keys(column_keys, "--column-key"), algorithm=algorithm,
                                plaintext_footer=plaintext_footer, aad_prefix=aad_prefix)


def decryption_properties(*, footer_key_hex: str | None = None, footer_key_file: str | None = None,
                          column_keys: Iterable[str] = (), aad_prefix: str | None = None,
                          kms_config: str | None = None, file_path: str | None = None
                          ) -> FileDecryptionProperties | None:
    """Decryption properties from the options of the reading commands, or None when none are given.

    Explicit keys are tried first, then the master keys of ``--kms-config`` (only ``master_keys`` is
    read from it). ``file_path`` is the file being read (for external key material).
    """
    footer_key = _footer_key(footer_key_hex, footer_key_file)
    keys = parse_column_keys(column_keys, "--column-key")
    kms = _config_kms(load_kms_config(kms_config)) if kms_config is not None else None
    return _decryption(footer_key, keys, kms, aad_prefix=aad_prefix, file_path=file_path)


# ---------------------------------------------------------------------------------------------
# the Spark data source's options (a mapping of option name to text; "" counts as absent)


def _option(options: Mapping[str, str], name: str) -> str | None:
    v = options.get(name)
    return None if v is None or v == "" else str(v)


def _flag(options: Mapping[str, str], name: str) -> bool:
    v = _option(options, name)
    return v is not None and v.strip().lower() in ("1", "true", "yes", "on")


def _option_column_keys(options: Mapping[str, str]) -> dict[str, bytes]:
    text = _option(options, "column_keys")
    if text is None:
        return {}
    return parse_column_keys([item for item in text.split(",") if item.strip()], "column_keys", separator=":")


def _option_kms(options: Mapping[str, str]) -> tuple[CryptoFactory, KmsConnectionConfig] | None:
    text = _option(options, "kms_key_list")
    return None if text is None else in_memory_kms(parse_key_list(text, "kms_key_list"))


def encryption_properties_from_options(options: Mapping[str, str]) -> FileEncryptionProperties | None:
    """Encryption properties from the Spark data source's write options, or None when none asks for encryption.

    KMS encryption: ``kms_key_list`` (master keys), ``encryption_footer_key`` (a master key id) and
    ``encryption_column_keys`` (``"keyB:email;keyC:ssn"``; without it every column is encrypted with
    the footer key). Otherwise explicit keys: ``footer_key_hex`` and ``column_keys`` (``"col:HEX,..."``).
    ``plaintext_footer`` (true/false) applies to both.
    """
    footer_id = _option(options, "encryption_footer_key")
    plaintext_footer = _flag(options, "plaintext_footer")
    if footer_id is not None:
        kms = _option_kms(options)
        if kms is None:
            raise KeyOptionError("encryption_footer_key needs kms_key_list (master keys of the in-memory KMS)")
        col_keys = _option(options, "encryption_column_keys") or ""
        config = EncryptionConfiguration(footer_key=footer_id, column_keys=col_keys, uniform_encryption=not col_keys,
                                         plaintext_footer=plaintext_footer)
        return _kms_encryption(kms, config, output_path=None, aad_prefix=None)
    footer_hex = _option(options, "footer_key_hex")
    column_keys = _option_column_keys(options)
    if footer_hex is None:
        if column_keys:
            raise KeyOptionError("column_keys needs footer_key_hex")
        return None
    return _explicit_encryption(parse_key(footer_hex, "footer_key_hex"), column_keys, algorithm=None,
                                plaintext_footer=plaintext_footer, aad_prefix=None)


def decryption_properties_from_options(options: Mapping[str, str]) -> FileDecryptionProperties | None:
    """Decryption properties from the Spark data source's read options, or None when none are given.

    ``kms_key_list`` (master keys of an in-memory KMS), or else explicit keys ``footer_key_hex`` and
    ``column_keys`` (``"col:HEX,..."``).
    """
    kms = _option_kms(options)
    if kms is not None:
        return _decryption(None, {}, kms, aad_prefix=None, file_path=None)
    footer_hex = _option(options, "footer_key_hex")
    footer_key = None if footer_hex is None else parse_key(footer_hex, "footer_key_hex")
    return _decryption(footer_key, _option_column_keys(options), None, aad_prefix=None, file_path=None)
