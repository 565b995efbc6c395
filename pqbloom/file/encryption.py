"""Parquet Modular Encryption wired into the writer and the reader.

The writer and the reader each call one object from this module:

- :class:`WriterEncryption` turns every module the writer produces into its on-disk bytes
  (encrypted with the column's key and the module's AAD, or passed through for plaintext
  columns), and builds the encrypted or signed footer tail;
- :class:`ReaderDecryption` opens an encrypted footer (or checks a signed plaintext one),
  decrypts column metadata, page headers, pages, page indexes and Bloom filters, and refuses
  to touch encrypted columns it has no key for.

The ciphers, AAD rules and key lookup live in :mod:`pqbloom.crypto`, which works on
:mod:`pqbloom.format`'s records (algorithm, column crypto metadata); this module knows where in a file
each module sits, and puts the crypto metadata into the footer's structs (:func:`finalize_column_chunk`,
:func:`footer_tail`) and reads it out of them (:func:`decode_footer_region`,
:func:`decrypted_column_metadata`). Error messages name columns and ordinals, never keys.
"""

from __future__ import annotations

from typing import Any

from ..bloom import BloomFilter
from ..crypto.ciphers import (
    GCM_OVERHEAD,
    MAX_ORDINAL,
    MODULE_LENGTH_SIZE,
    SIGNATURE_LENGTH,
    Buffer,
    ModuleType,
    read_module_length,
)
from ..crypto.properties import (
    MAGIC_ENCRYPTED_FOOTER,
    MAGIC_PLAIN,
    ColumnPath,
    FileDecryptionContext,
    FileDecryptionProperties,
    FileEncryptionContext,
    FileEncryptionProperties,
    column_path,
)
from ..errors import AuthenticationError, CorruptFileError, DecryptionError, EncryptionError, KeyNotFoundError
from ..format import (
    algorithm_params,
    column_crypto,
    column_crypto_struct,
    decode_column_metadata,
    decode_file_crypto_metadata,
    decode_footer,
    decode_footer_prefix,
    encode,
    encode_file_crypto_metadata,
    set_footer_encryption,
    stripped_column_metadata,
)
from .bloom_site import BloomFilterSite

__all__ = ["ReaderDecryption", "WriterEncryption", "encrypt_module", "finalize_column_chunk", "footer_tail",
           "decrypted_column_metadata", "decode_footer_region"]

#: a Bloom filter header module is a few dozen bytes (parquet-java pads it to 100); anything far
#: larger is corrupt and must not drive a big read
_MAX_BLOOM_HEADER_MODULE = 64 * 1024


def _check_ordinal(kind: str, value: int) -> None:
    # MAX_ORDINAL is looked up at call time so tests can lower it
    if value < 0 or value > MAX_ORDINAL:
        raise EncryptionError(
            f"{kind} ordinal {value} does not fit the int16 AAD field of encrypted modules "
            f"(an encrypted file holds at most {MAX_ORDINAL + 1} {kind}s)"
        )


# =============================================================================================
# writing


class WriterEncryption:
    """Encryption state of one file being written by :class:`pqbloom.file.writer.ParquetWriter`."""

    def __init__(self, properties: FileEncryptionProperties, schema: Any) -> None:
        if not isinstance(properties, FileEncryptionProperties):
            raise TypeError(
                "encryption_properties must be pqbloom.crypto.FileEncryptionProperties, "
                f"not {type(properties).__name__}"
            )
        self.properties = properties
        self._ctx = properties.new_file_context()
        # one entry per leaf column (nested fields have several), in file order
        self._paths: list[tuple[str, ...]] = [tuple(p) for p in schema.leaf_paths()]
        self._ctx.check_columns(list(self._paths))
        if self._paths:
            _check_ordinal("column", len(self._paths) - 1)
        self._keys: list[bytes | None] = [self._ctx.column_setup(p)[0] for p in self._paths]

    def __repr__(self) -> str:
        return f"WriterEncryption({self.properties!r})"

    @property
    def plaintext_footer(self) -> bool:
        return self._ctx.plaintext_footer

    @property
    def magic(self) -> bytes:
        return self._ctx.magic

    def is_encrypted(self, col: int) -> bool:
        return self._keys[col] is not None

    def check_ordinal(self, kind: str, n: int) -> None:
        """EncryptionError once a row group, column or page ordinal passes 32767."""
        _check_ordinal(kind, n)

    def encrypt(self, module_type: ModuleType, data: Buffer, rg: int, col: int, page: int = -1) -> Buffer:
        """The whole on-disk module (length field included); ``data`` itself for a plaintext column."""
        key = self._keys[col]
        if key is None:
            return data
        _check_ordinal("row group", rg)
        if page >= 0:
            _check_ordinal("page", page)
        return self._ctx.encrypt(key, module_type, data, rg, col, page)

    def finish_footer(self, fmd: Any, pending: list[Any]) -> bytes:
        """Finalize every column chunk's crypto metadata; return footer || len(4 LE) || magic (``fmd``: the
        FileMetaData struct, ``pending``: the writer's chunks, with their ColumnChunk structs)."""
        for p in pending:
            finalize_column_chunk(self._ctx, p.chunk, self._paths[p.column], p.row_group, p.column)
        return footer_tail(self._ctx, fmd)


def finalize_column_chunk(ctx: FileEncryptionContext, chunk: Any, path: ColumnPath, row_group: int,
                          column: int) -> None:
    """Apply the metadata rules to a ``ColumnChunk`` struct whose ``meta_data`` is complete.

    - plaintext column: untouched;
    - footer-key column, encrypted footer: ``crypto_metadata`` only, ``meta_data`` stays;
    - otherwise ``encrypted_column_metadata`` holds the encrypted ColumnMetaData module and
      ``meta_data`` is dropped (encrypted footer) or stripped of statistics (plaintext footer).
    """
    key, crypto = ctx.column_setup(path)
    if key is None or crypto is None:
        return
    chunk.crypto_metadata = column_crypto_struct(crypto)
    if crypto.kind == "footer_key" and not ctx.plaintext_footer:
        chunk.encrypted_column_metadata = None
        return
    full = chunk.meta_data
    if full is None:
        raise EncryptionError(f"column chunk {column_path(path)!r} has no meta_data to encrypt")
    chunk.encrypted_column_metadata = ctx.encrypt(key, ModuleType.COLUMN_META_DATA, encode(full), row_group, column)
    chunk.meta_data = stripped_column_metadata(full) if ctx.plaintext_footer else None


def footer_tail(ctx: FileEncryptionContext, fmd: Any) -> bytes:
    """Everything after the last module of an encrypted file: footer (encrypted or signed) || len(4 LE) ||
    magic. A plaintext footer names the algorithm and the footer key metadata (set on ``fmd``, the
    FileMetaData struct); an encrypted one leaves them to the FileCryptoMetaData before it."""
    if ctx.plaintext_footer:
        set_footer_encryption(fmd, ctx.algorithm, ctx.footer_key_metadata)
        return ctx.footer_tail(encode(fmd), b"")
    set_footer_encryption(fmd, None, None)
    return ctx.footer_tail(encode(fmd), encode_file_crypto_metadata(ctx.algorithm, ctx.footer_key_metadata))


def encrypt_module(encryption: WriterEncryption | None, module_type: ModuleType, data: Buffer, rg: int, col: int,
                   page: int = -1) -> Buffer:
    """The single place where a written module becomes its on-disk bytes: encrypted when the file and
    column are keyed, ``data`` itself otherwise."""
    if encryption is None:
        return data
    return encryption.encrypt(module_type, data, rg, col, page)


# =============================================================================================
# reading


def decode_footer_region(footer_region: bytes, magic: bytes, properties: FileDecryptionProperties | None
                         ) -> tuple[Any, FileDecryptionContext | None]:
    """Decode a file's footer region (the ``L`` bytes before ``len(4) || magic``): the FileMetaData struct
    and the file's decryption context.

    - ``PARE``: FileCryptoMetaData then the encrypted footer module; needs ``properties``.
    - ``PAR1`` with ``encryption_algorithm`` set: plaintext footer plus 28-byte signature, verified
      when ``properties`` is given and ``check_footer_integrity`` is on. Without properties the
      footer is returned with no context (legacy reading of plaintext columns).
    - ``PAR1`` without it: an ordinary file; returns ``(metadata, None)``.
    """
    region = bytes(footer_region)
    if magic == MAGIC_ENCRYPTED_FOOTER:
        if properties is None:
            raise KeyNotFoundError("the file has an encrypted footer; decryption properties are needed")
        fcm, used = decode_file_crypto_metadata(region)
        if fcm.algorithm is None:
            raise DecryptionError("FileCryptoMetaData has no encryption algorithm")
        ctx = properties.new_file_context(fcm.algorithm, fcm.key_metadata)
        plain = ctx.decrypt_footer(region[used:])
        return decode_footer(plain, what="decrypted FileMetaData"), ctx
    if magic != MAGIC_PLAIN:
        raise DecryptionError(f"unknown file magic {magic!r}")
    fmd, used = decode_footer_prefix(region)
    if fmd.encryption_algorithm is None or properties is None:
        return fmd, None
    ctx = properties.new_file_context(algorithm_params(fmd.encryption_algorithm), fmd.footer_signing_key_metadata)
    if properties.check_footer_integrity:
        signature = region[used:]
        if len(signature) != SIGNATURE_LENGTH:
            raise AuthenticationError(
                f"plaintext footer is followed by {len(signature)} bytes, not a {SIGNATURE_LENGTH}-byte signature"
            )
        ctx.verify_footer(region[:used], signature)
    return fmd, ctx


def decrypted_column_metadata(ctx: FileDecryptionContext, chunk: Any, row_group: int, column: int,
                              path: ColumnPath | None = None) -> Any:
    """The full ColumnMetaData struct of a ``ColumnChunk`` struct, decrypting ``encrypted_column_metadata``
    if present."""
    if chunk.encrypted_column_metadata is None:
        if chunk.meta_data is None:
            raise DecryptionError(f"column chunk {column} of row group {row_group} has no metadata")
        return chunk.meta_data
    crypto = column_crypto(chunk.crypto_metadata)
    if path is None:
        if crypto is not None and crypto.kind == "column_key" and crypto.path_in_schema is not None:
            path = list(crypto.path_in_schema)
        elif chunk.meta_data is not None:
            path = list(chunk.meta_data.path_in_schema)
        else:
            path = f"#{column}"
    key = ctx.column_key(path, crypto)
    if key is None:
        raise DecryptionError(f"column {column_path(path)!r} has encrypted metadata but no crypto_metadata")
    plain = ctx.decrypt(key, ModuleType.COLUMN_META_DATA, chunk.encrypted_column_metadata, row_group, column,
                        what=f"ColumnMetaData of column {column_path(path)!r} (row group {row_group})")
    return decode_column_metadata(plain, what="decrypted ColumnMetaData")


def _describe(module_type: ModuleType, desc: Any, rg: int, page: int) -> str:
    mt = ModuleType(module_type)
    text = f"{mt.name.lower().replace('_', ' ')} of column {desc.dotted_path!r} (row group {rg}"
    if mt in (ModuleType.DATA_PAGE, ModuleType.DATA_PAGE_HEADER):
        text += f", page {page}"
    return text + ")"


class ReaderDecryption:
    """Decryption state of one file opened by :class:`pqbloom.file.reader.FileReader`.

    ``ctx`` is None for a plaintext-footer encrypted file opened without decryption properties:
    its plaintext columns read as usual, and anything that touches an encrypted column raises
    :class:`~pqbloom.errors.KeyNotFoundError` naming the column.
    """

    def __init__(self, ctx: FileDecryptionContext | None, metadata: Any, encrypted_footer: bool) -> None:
        self.ctx = ctx
        self.metadata = metadata
        self.encrypted_footer = encrypted_footer
        self._encrypted_cache: dict[int, bool] = {}
        self._meta_cache: dict[tuple[int, int], Any] = {}  # decrypted ColumnMetaData structs

    def __repr__(self) -> str:
        return f"ReaderDecryption({self.ctx!r}, encrypted_footer={self.encrypted_footer})"

    # -- opening -----------------------------------------------------------------------------

    @classmethod
    def open(cls, footer_bytes: bytes, is_pare: bool, properties: Any, *,
             offset: int | None = None) -> tuple[ReaderDecryption | None, Any]:
        """Decode the footer region (the bytes before ``len(4) || magic``).

        ``PARE``: FileCryptoMetaData then the encrypted footer module. ``PAR1`` with
        properties: a signed plaintext footer (signature checked) -- or an ordinary file,
        which is refused, since the caller expected an encrypted one.
        """
        if properties is not None and not isinstance(properties, FileDecryptionProperties):
            raise TypeError(
                "decryption_properties must be pqbloom.crypto.FileDecryptionProperties, "
                f"not {type(properties).__name__}"
            )
        if is_pare and properties is None:
            raise KeyNotFoundError("the file has an encrypted footer (PARE); decryption_properties are needed")
        try:
            md, ctx = decode_footer_region(footer_bytes, MAGIC_ENCRYPTED_FOOTER if is_pare else MAGIC_PLAIN,
                                           properties)
        except CorruptFileError as exc:
            if exc.offset is None and offset is not None:
                raise CorruptFileError(str(exc), offset=offset) from None
            raise
        if md.schema is None or md.row_groups is None:
            raise CorruptFileError("file metadata lacks a schema or row groups", offset=offset)
        if ctx is None:
            # PAR1 without encryption_algorithm: a plaintext file read with keys. Like parquet-java
            # and parquet-cpp, refuse it: a plaintext file put in place of an encrypted one would
            # otherwise be read without any integrity check.
            raise DecryptionError(
                "the file is not encrypted, but decryption_properties were given "
                "(open it without decryption_properties to read a plaintext file)"
            )
        return cls(ctx, md, is_pare), md

    @classmethod
    def plaintext_without_keys(cls, md: Any) -> ReaderDecryption:
        """A plaintext-footer encrypted file opened without keys (signature not checked)."""
        return cls(None, md, False)

    # -- column metadata ---------------------------------------------------------------------

    def _chunk(self, rg: int, col: int) -> Any:
        rgs = self.metadata.row_groups
        if not 0 <= rg < len(rgs):
            raise IndexError(f"row group {rg} out of range")
        chunks = rgs[rg].columns or []
        if not 0 <= col < len(chunks):
            raise CorruptFileError(f"row group has no column chunk {col}", row_group=rg)
        return chunks[col]

    def column_encrypted(self, desc: Any) -> bool:
        """Whether the column's chunks are encrypted (consistently across row groups)."""
        col = desc.index
        cached = self._encrypted_cache.get(col)
        if cached is not None:
            return cached
        flags = set()
        for i in range(len(self.metadata.row_groups)):
            flags.add(self._chunk(i, col).crypto_metadata is not None)
        if len(flags) > 1:
            raise CorruptFileError("column is encrypted in some row groups and not in others",
                                   column=desc.dotted_path)
        result = flags == {True}
        self._encrypted_cache[col] = result
        return result

    def _no_keys(self, desc: Any) -> KeyNotFoundError:
        return KeyNotFoundError(
            f"column {desc.dotted_path!r} is encrypted and no decryption_properties were given "
            "(only the plaintext columns of the file can be read without keys)"
        )

    def _key(self, rg: int, desc: Any) -> bytes | None:
        chunk = self._chunk(rg, desc.index)
        if chunk.crypto_metadata is None:
            return None
        if self.ctx is None:
            raise self._no_keys(desc)
        return self.ctx.column_key(desc.path, column_crypto(chunk.crypto_metadata))

    def key_available(self, rg: int, desc: Any) -> bool:
        """Whether the chunk's modules can be opened: it is plaintext, or its key (the column's own, or
        the footer key) is at hand. A missing key is no error here: callers that only use the chunk as
        an aid (its page index, to prune the pages of other columns) then do without it."""
        try:
            self._key(rg, desc)
        except KeyNotFoundError:
            return False
        return True

    def column_metadata(self, cc: Any, rg: int, desc: Any) -> Any:
        """The chunk's full ColumnMetaData, decrypting ``encrypted_column_metadata`` when present."""
        if cc.crypto_metadata is None:
            if cc.meta_data is None:
                raise CorruptFileError("column chunk has no metadata", row_group=rg, column=desc.dotted_path)
            return cc.meta_data
        if self.ctx is None:
            raise self._no_keys(desc)
        cache_key = (rg, desc.index)
        cached = self._meta_cache.get(cache_key)
        if cached is not None:
            return cached
        if cc.encrypted_column_metadata is None:
            # footer-key column under an encrypted (or signed) footer: meta_data stays in place
            if cc.meta_data is None:
                raise CorruptFileError("encrypted column chunk has neither meta_data nor encrypted_column_metadata",
                                       row_group=rg, column=desc.dotted_path)
            meta = cc.meta_data
        else:
            meta = decrypted_column_metadata(self.ctx, cc, rg, desc.index, desc.path)
        if meta.path_in_schema is not None and tuple(meta.path_in_schema) != tuple(desc.path):
            raise CorruptFileError(f"column metadata names path {'.'.join(meta.path_in_schema)!r}",
                                   row_group=rg, column=desc.dotted_path)
        self._meta_cache[cache_key] = meta
        return meta

    # -- modules -----------------------------------------------------------------------------

    def decrypt(self, module_type: ModuleType, data: bytes, rg: int, desc: Any, page: int = -1) -> bytes:
        """Plaintext of one stored module; ``data`` itself for a plaintext column."""
        key = self._key(rg, desc)
        if key is None:
            return data
        assert self.ctx is not None
        return self.ctx.decrypt(key, module_type, data, rg, desc.index, page,
                                what=_describe(module_type, desc, rg, page))

    def decrypt_page_header(self, module: bytes, rg: int, desc: Any, page: int, *, first: bool,
                            dictionary_hint: bool) -> bytes:
        """Plaintext of a page header module.

        The first page of a chunk may be a dictionary page, whose header is module type 5 with no
        page ordinal; every other header is type 4 with the data page ordinal. For the first page
        the type ``dictionary_hint`` suggests is tried first, then the other: the AAD binds the
        module type, so at most one authenticates.
        """
        if not first:
            return self.decrypt(ModuleType.DATA_PAGE_HEADER, module, rg, desc, page)
        order = [(ModuleType.DICTIONARY_PAGE_HEADER, -1), (ModuleType.DATA_PAGE_HEADER, page)]
        if not dictionary_hint:
            order.reverse()
        try:
            return self.decrypt(order[0][0], module, rg, desc, order[0][1])
        except AuthenticationError as exc:
            error = exc
        try:
            return self.decrypt(order[1][0], module, rg, desc, order[1][1])
        except AuthenticationError:
            raise error from None

    def read_bloom_filter(self, range_reader: Any, site: BloomFilterSite, desc: Any) -> BloomFilter:
        """Read and decrypt an encrypted Bloom filter: header module (type 8), then the bitset module
        (type 9) right after it. ``site.length`` (bloom_filter_length) covers both modules. The
        decrypted header, the bitset module's length and bloom_filter_length must agree, and the
        filter must end before the footer (:mod:`pqbloom.file.bloom_site`), else
        :class:`~pqbloom.errors.BloomFilterError`."""
        rg = site.row_group
        key = self._key(rg, desc)
        if key is None:  # plaintext column in an encrypted file
            raise AssertionError("read_bloom_filter called for a plaintext column")
        site.check_placement(min_length=2 * (MODULE_LENGTH_SIZE + GCM_OVERHEAD))
        offset, length = site.offset, site.length
        if length is not None:
            buf = range_reader.read(offset, length, what="encrypted Bloom filter")
            hlen = self._module_length(buf, 0, site)
            bstart = MODULE_LENGTH_SIZE + hlen
            header_module = buf[:bstart]
            blen = self._module_length(buf, bstart, site)
            if bstart + MODULE_LENGTH_SIZE + blen != length:
                raise site.error(f"encrypted Bloom filter header module ({bstart} bytes) and bitset module "
                                 f"({MODULE_LENGTH_SIZE + blen} bytes) make {bstart + MODULE_LENGTH_SIZE + blen} "
                                 f"bytes, but bloom_filter_length says {length}")
            bitset_module = buf[bstart:]
        else:
            head = range_reader.read(offset, min(MODULE_LENGTH_SIZE, site.footer_offset - offset),
                                     what="Bloom filter header")
            hlen = self._module_length(head, 0, site, whole=False)
            if hlen > _MAX_BLOOM_HEADER_MODULE or offset + MODULE_LENGTH_SIZE + hlen > site.footer_offset:
                raise site.error(f"an encrypted Bloom filter header module of {hlen} bytes is implausible")
            header_module = range_reader.read(offset, MODULE_LENGTH_SIZE + hlen, what="Bloom filter header")
            bstart = MODULE_LENGTH_SIZE + hlen
            bitset_module = b""  # read once the header says how big the bitset is
        assert self.ctx is not None
        header_plain = self.ctx.decrypt(key, ModuleType.BLOOM_FILTER_HEADER, header_module, rg, desc.index,
                                        what=_describe(ModuleType.BLOOM_FILTER_HEADER, desc, rg, -1))
        num_bytes, _ = BloomFilter.parse_header(header_plain, offset=offset, row_group=rg, column=site.column)
        expected = MODULE_LENGTH_SIZE + GCM_OVERHEAD + num_bytes
        # with a length, this also proves the stored bitset module is exactly ``expected`` bytes
        site.check_extent(bstart + expected, f"encrypted Bloom filter header module ({bstart} bytes, numBytes "
                                             f"{num_bytes}) and a {num_bytes}-byte bitset module ({expected} bytes)")
        if length is None:
            bitset_module = range_reader.read(offset + bstart, expected, what="Bloom filter bitset")
        bitset = self.ctx.decrypt(key, ModuleType.BLOOM_FILTER_BITSET, bitset_module, rg, desc.index,
                                  what=_describe(ModuleType.BLOOM_FILTER_BITSET, desc, rg, -1))
        if len(bitset) != num_bytes:
            raise site.error(f"the decrypted Bloom filter bitset has {len(bitset)} bytes, the header says {num_bytes}",
                             offset=offset + bstart)
        return BloomFilter.from_bitset(bitset)

    @staticmethod
    def _module_length(buf: bytes, pos: int, site: BloomFilterSite, *, whole: bool = True) -> int:
        try:
            return read_module_length(buf, pos, whole=whole)
        except CorruptFileError:
            raise site.error("an encrypted Bloom filter module's length field runs past bloom_filter_length",
                             offset=site.offset + pos) from None
