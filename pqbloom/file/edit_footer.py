"""The footer of a file being edited in place (:mod:`pqbloom.file.add_bloom`): decoded whole, changed, and
serialized again in the file's own mode (plaintext, signed plaintext, or encrypted).

:class:`FooterEdit` decodes the footer eagerly (a reader's footer may be lazy), refuses one whose
re-encoding would drop fields this version's Thrift definitions do not know (a logical type from a newer
format, say: the rewritten file would mean something else), rewrites offsets through a
:class:`~pqbloom.file.splice.Splice`, sets or clears each chunk's Bloom filter fields (in the column's
encrypted metadata when it has one, re-encrypted with the column's key), and builds the new tail: the
footer, re-encrypted or re-signed with the footer key, its length and the magic. Everything else of the
footer is kept as it was, ``created_by`` included: readers key writer-bug workarounds on it.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ..crypto import ModuleType
from ..errors import CorruptFileError, KeyNotFoundError, UnsupportedError
from ..format import (
    column_crypto,
    count_fields,
    decode_file_crypto_metadata,
    decode_footer_prefix,
    encode,
    set_key_value,
)
from ..schema import ColumnDescriptor
from .encryption import ReaderDecryption, decrypted_column_metadata

__all__ = ["FooterEdit", "CHUNK_OFFSET_FIELDS", "META_OFFSET_FIELDS"]

#: the ColumnChunk fields that hold file offsets
CHUNK_OFFSET_FIELDS = ("file_offset", "offset_index_offset", "column_index_offset")
#: the ColumnMetaData fields that hold file offsets
META_OFFSET_FIELDS = ("data_page_offset", "index_page_offset", "dictionary_page_offset", "bloom_filter_offset")


class FooterEdit:
    """The decoded footer of the file behind ``reader`` (a :class:`~pqbloom.file.reader.FileReader`), ready to
    change. ``region`` is the bytes between the last module and ``len(4) || magic``."""

    def __init__(self, reader: Any, region: bytes) -> None:
        loc = reader.footer_location
        dec: ReaderDecryption | None = reader.decryption
        self.leaves: list[ColumnDescriptor] = reader.columns
        self.encrypted_footer = bool(loc.encrypted_footer)
        self.file_crypto_metadata = b""
        if dec is not None and dec.ctx is None:
            raise KeyNotFoundError("the file is encrypted (a signed plaintext footer): give decryption_properties "
                                   "with the footer key, and the keys of the columns to change")
        self.ctx = None if dec is None else dec.ctx
        if self.encrypted_footer:
            assert self.ctx is not None  # a PARE file opens only with keys
            _, used = decode_file_crypto_metadata(region)
            self.file_crypto_metadata = region[:used]
            plain = self.ctx.decrypt_footer(region[used:])
        else:
            plain = region
        self.md, used = decode_footer_prefix(plain)
        original = bytes(plain[:used])
        if encode(self.md) != original and count_fields(encode(self.md)) != count_fields(original):
            raise UnsupportedError("the footer holds fields this version of pqbloom does not know (a newer format, "
                                   "or a writer's own); rewriting it would drop them, so the file is left as it is")
        #: decrypted ColumnMetaData of chunks whose metadata is encrypted, by (row group, column)
        self._full: dict[tuple[int, int], Any] = {}
        #: those of them that changed (re-encrypted by :meth:`tail`)
        self._dirty: set[tuple[int, int]] = set()

    # -- chunks ---------------------------------------------------------------------------
    def chunk(self, rg: int, col: int) -> Any:
        """The ColumnChunk struct of (row group, column)."""
        return self.md.row_groups[rg].columns[col]

    def column_key(self, rg: int, col: int) -> bytes | None:
        """The key the chunk's modules are encrypted with (None: a plaintext chunk)."""
        cc = self.chunk(rg, col)
        if cc.crypto_metadata is None:
            return None
        if self.ctx is None:  # pragma: no cover - refused in __init__
            raise KeyNotFoundError("the file is encrypted: decryption_properties are needed")
        return self.ctx.column_key(self.leaves[col].path, column_crypto(cc.crypto_metadata))

    def full_metadata(self, rg: int, col: int) -> Any:
        """The chunk's full ColumnMetaData struct as it will be written: the footer's own, or the decrypted
        ``encrypted_column_metadata`` (re-encrypted by :meth:`tail`)."""
        cc = self.chunk(rg, col)
        if cc.encrypted_column_metadata is None:
            if cc.meta_data is None:
                raise CorruptFileError("column chunk has no metadata", row_group=rg, column=self.leaves[col].dotted_path)
            return cc.meta_data
        full = self._full.get((rg, col))
        if full is None:
            if self.ctx is None:  # pragma: no cover - refused in __init__
                raise KeyNotFoundError("the file is encrypted: decryption_properties are needed")
            full = decrypted_column_metadata(self.ctx, cc, rg, col, self.leaves[col].path)
            self._full[(rg, col)] = full
        return full

    def set_bloom_filter(self, rg: int, col: int, offset: int | None, length: int | None) -> None:
        """Point the chunk at its (new) Bloom filter, or (None) at none."""
        full = self.full_metadata(rg, col)
        full.bloom_filter_offset, full.bloom_filter_length = offset, length
        self._dirty.add((rg, col))
        cc = self.chunk(rg, col)
        if cc.encrypted_column_metadata is not None and cc.meta_data is not None and offset is None:
            # a signed plaintext footer's stripped copy: no filter is left to point at
            cc.meta_data.bloom_filter_offset = cc.meta_data.bloom_filter_length = None

    def remap_offsets(self, new_offset: Callable[[int], int]) -> None:
        """Every file offset of the footer (row groups, chunks, chunk metadata, encrypted metadata
        included) through ``new_offset``; a chunk whose encrypted metadata changes needs its key."""
        for rg_index, rg in enumerate(self.md.row_groups):
            if rg.file_offset is not None:
                rg.file_offset = new_offset(rg.file_offset)
            for col, cc in enumerate(rg.columns or []):
                _remap(cc, CHUNK_OFFSET_FIELDS, new_offset)
                if cc.meta_data is not None:
                    _remap(cc.meta_data, META_OFFSET_FIELDS, new_offset)
                if cc.encrypted_column_metadata is not None:
                    full = self._peek_full(rg_index, col)
                    if _moves(full, META_OFFSET_FIELDS, new_offset):
                        _remap(full, META_OFFSET_FIELDS, new_offset)
                        self._dirty.add((rg_index, col))

    def _peek_full(self, rg: int, col: int) -> Any:
        """The decrypted metadata of an encrypted chunk, for a look at its offsets; KeyNotFoundError names
        the column when its key is not given (moving bytes changes offsets the key protects)."""
        try:
            return self.full_metadata(rg, col)
        except KeyNotFoundError as exc:
            raise KeyNotFoundError(f"bytes of the file move, which changes the offsets in the encrypted metadata "
                                   f"of column {self.leaves[col].dotted_path!r}, and its key is not given ({exc}); "
                                   f"give it, or use position='end'") from None

    def note(self, key: str, value: str) -> None:
        """Set one key-value metadata entry (where pqbloom records its edit: ``created_by`` stays the writer's)."""
        set_key_value(self.md, key, value)

    # -- bytes ----------------------------------------------------------------------------
    def tail(self) -> bytes:
        """footer (plaintext, signed, or encrypted as the original was) || len(4 LE) || magic, with every
        changed encrypted column metadata re-encrypted under its column's key."""
        for rg, col in sorted(self._dirty):
            full = self._full.get((rg, col))
            if full is None:  # the footer's own metadata, changed in place
                continue
            key = self.column_key(rg, col)
            assert self.ctx is not None and key is not None
            self.chunk(rg, col).encrypted_column_metadata = self.ctx.cipher.encrypt(
                key, ModuleType.COLUMN_META_DATA, encode(full), rg, col)
        footer = encode(self.md)
        if self.ctx is None:
            body, magic = footer, b"PAR1"
        elif self.encrypted_footer:
            body, magic = self.file_crypto_metadata + self.ctx.cipher.encrypt_footer(self.ctx.footer_key(), footer), b"PARE"
        else:
            body, magic = footer + self.ctx.cipher.sign_footer(self.ctx.footer_key(), footer), b"PAR1"
        return body + len(body).to_bytes(4, "little") + magic


def _remap(struct: Any, fields: tuple[str, ...], new_offset: Callable[[int], int]) -> None:
    for name in fields:
        v = getattr(struct, name)
        if v is not None and v > 0:
            setattr(struct, name, new_offset(v))


def _moves(struct: Any, fields: tuple[str, ...], new_offset: Callable[[int], int]) -> bool:
    return any((v := getattr(struct, name)) is not None and v > 0 and new_offset(v) != v for name in fields)
