"""The one page codec: a column chunk's bytes -> decoded pages.

A page is a Thrift ``PageHeader`` (plaintext, or an AES-GCM module when the column is encrypted:
:func:`parse_page_header`), then its body: CRC check, decryption (the only hook is
:func:`pqbloom.file.encryption.ReaderDecryption.decrypt`, by :class:`~pqbloom.crypto.ModuleType`),
decompression (bounded by the header's uncompressed size: :mod:`pqbloom.compression`), repetition and
definition levels, and values through the encodings' one dispatch (:func:`pqbloom.encodings.decode_values`).
:func:`iter_pages` walks a chunk page by page; the file reader (:mod:`pqbloom.file.reader`) supplies the
bytes, the layout tool (:mod:`pqbloom.cli.layout`) parses headers only.
"""

from __future__ import annotations

import re
import zlib
from collections.abc import Callable, Iterator, Sequence
from functools import lru_cache
from typing import Any

import numpy as np

from .. import compression as compression_mod
from ..crypto import ModuleType
from ..encodings import (
    bit_width_of,
    decode_bit_packed_levels,
    decode_levels_v1,
    decode_plain,
    decode_rle_bitpacked,
    decode_values,
    is_dictionary_encoding,
)
from ..encodings.rle import is_single_value, level_dtype
from ..errors import ChecksumError, CorruptFileError, UnsupportedError
from ..format import Encoding, PageType, decode_page_header, decode_page_header_prefix
from ..kernels.hybrid import page_levels
from ..kernels.pageheader import page_header
from ..limits import BUDGET, charge
from ..schema import ColumnDescriptor, Field
from ..statistics import parse_created_by
from .binary_sink import BinarySink
from .chunk_window import ChunkBytes, ChunkWindow
from .encryption import ReaderDecryption

Buffer = bytes | bytearray | memoryview

#: bytes a page header is expected to fit in when a chunk is read by windows (a longer one is retried)
HEADER_ROOM = 1 << 16

# the enumerations' values as plain ints: the page loop compares with them per page, and an IntEnum
# member's lookup and comparison cost several times an int's
_DICTIONARY_PAGE, _INDEX_PAGE = int(PageType.DICTIONARY_PAGE), int(PageType.INDEX_PAGE)
_DATA_PAGE, _DATA_PAGE_V2 = int(PageType.DATA_PAGE), int(PageType.DATA_PAGE_V2)
_PLAIN, _PLAIN_DICTIONARY, _BIT_PACKED = int(Encoding.PLAIN), int(Encoding.PLAIN_DICTIONARY), int(Encoding.BIT_PACKED)
_RLE_DICTIONARY = int(Encoding.RLE_DICTIONARY)

__all__ = ["parse_page_header", "page_header_fields", "flat_page_header", "FlatHeader", "iter_pages",
           "crc_matches", "decode_page_values", "v2_flag_ignored", "chunk_size_undercounted", "CHUNK_SIZE_SHORTFALL"]


def parse_page_header(buf: ChunkBytes, pos: int, *, offset: int, decryption: ReaderDecryption | None = None,
                      rg: int = 0, desc: ColumnDescriptor | None = None, page_ordinal: int = 0,
                      first: bool = False, dictionary_hint: bool = False) -> tuple[Any, int]:
    """Parse the page header at ``buf[pos]``; return it (the ``PageHeader`` struct) and the position just
    after it.

    ``offset`` is the file position of ``buf[pos]`` (for error messages). With ``decryption`` (the
    column is encrypted) the header is a module: a 4-byte length, then the AES-GCM ciphertext of the
    header, decrypted with row group ``rg``, column ``desc`` and page ``page_ordinal``. ``first``
    says the page may be the chunk's dictionary page, whose header has another module type;
    ``dictionary_hint`` says the footer puts the dictionary page here (which type is tried first).
    A header cut short raises :class:`~pqbloom.errors.CorruptFileError`.
    """
    if decryption is None:
        return decode_page_header(buf, pos, offset=offset)
    if desc is None:
        raise ValueError("an encrypted page header needs its column descriptor")
    mlen = int.from_bytes(buf[pos:pos + 4], "little")
    if pos + 4 + mlen > len(buf):
        raise CorruptFileError("encrypted page header runs past the chunk", offset=offset)
    # the first page may be the dictionary page (header module type DICTIONARY_PAGE_HEADER, no page
    # ordinal): file.encryption tries the likelier module type first and GCM tells which one is right
    hbytes = decryption.decrypt_page_header(bytes(buf[pos:pos + 4 + mlen]), rg, desc, page_ordinal, first=first,
                                            dictionary_hint=dictionary_hint)
    header, _ = decode_page_header_prefix(hbytes, offset=offset)
    return header, pos + 4 + mlen


#: the flat page header the page loop reads: (end, type, uncompressed size, compressed size, crc,
#: data page header, dictionary page header, v2 data page header), None for an absent field; the
#: nested headers are tuples (num_values, encoding, definition / repetition level encodings),
#: (num_values, encoding) and (num_values, num_nulls, num_rows, encoding, definition / repetition
#: levels byte lengths, is_compressed)
FlatHeader = tuple[Any, ...]


def flat_page_header(header: Any, end: int) -> FlatHeader:
    """``header`` (decoded by Thrift, ending at ``end``) as the compiled parser returns it."""
    dp, dh, v2 = header.data_page_header, header.dictionary_page_header, header.data_page_header_v2
    return (end, header.type, header.uncompressed_page_size, header.compressed_page_size, header.crc,
            None if dp is None else (dp.num_values, dp.encoding, dp.definition_level_encoding,
                                     dp.repetition_level_encoding),
            None if dh is None else (dh.num_values, dh.encoding),
            None if v2 is None else (v2.num_values, v2.num_nulls, v2.num_rows, v2.encoding,
                                     v2.definition_levels_byte_length, v2.repetition_levels_byte_length,
                                     v2.is_compressed))


def page_header_fields(buf: Buffer, pos: int, *, offset: int) -> FlatHeader:
    """The plaintext page header at ``buf[pos]`` as a :data:`FlatHeader`: parsed by the compiled
    kernel (:func:`pqbloom.kernels.pageheader.page_header`, no Thrift objects), else, and for any bytes the kernel
    does not accept, by Thrift, which raises the :class:`~pqbloom.errors.CorruptFileError`."""
    got = page_header(buf, pos)
    return got if got is not None else _thrift_page_header(buf, pos, offset)


def _thrift_page_header(buf: Buffer, pos: int, offset: int) -> FlatHeader:
    header, end = decode_page_header(buf, pos, offset=offset)
    return flat_page_header(header, end)


def _open_module(decryption: ReaderDecryption | None, module_type: ModuleType, data: Buffer, rg: int,
                 desc: ColumnDescriptor, page: int = -1) -> Buffer:
    """The single place where stored page bytes become plaintext."""
    if decryption is None:
        return data
    return decryption.decrypt(module_type, bytes(data), rg, desc, page)


def iter_pages(buf: ChunkBytes, base: int, meta: Any, rg: int, desc: ColumnDescriptor, *,
               row_count: int | None, decryption: ReaderDecryption | None, verify_checksums: bool,
               v2_always_compressed: bool, extend: Callable[[ChunkBytes, int], bytes],
               levels: bool = False, sink: BinarySink | None = None,
               window: ChunkWindow | None = None, views: bool = False,
               page_ordinals: Sequence[int] | None = None,
               num_values: int | None = None, encoded_indices: bool = False,
               full_flags: bool = True, raw_indices: bool = False) -> Iterator[tuple[str, Any, Any, Any]]:
    """Yield (kind, values, presence flags or None, dictionary) for each data page of a chunk.

    ``buf`` holds the chunk's bytes from file offset ``base``; ``meta`` is its (decrypted) metadata;
    ``row_count`` the row group's row count. ``kind`` is ``"dict"`` (``values`` are indices into
    ``dictionary``) or ``"values"``. With ``levels=True`` the third item is instead
    ``(definition levels, repetition levels)``, each None when its maximum is 0 (nested leaves are read
    that way). ``extend(buf, base)`` returns a longer ``buf`` when pages run past the chunk's stated
    size (some old writers undercount it); ``v2_always_compressed`` is :func:`v2_flag_ignored` of the
    writer. With a ``sink`` (:class:`~pqbloom.file.binary_sink.BinarySink`) PLAIN pages of byte
    arrays decode straight into it; the caller passes every page's values to ``sink.add``. With a
    ``window`` (:class:`~pqbloom.file.chunk_window.ChunkWindow`) ``buf`` is its first window, and the
    chunk's later bytes are read as the pages need them. With ``views``, a PLAIN page's fixed-width
    values may be a read-only view of its buffer, valid until the next page is asked for (a caller
    that copies each page out at once saves the page's copy). With ``encoded_indices`` too, a
    dictionary-encoded page of a fixed-width column (its dictionary a numpy array) comes undecoded:
    kind ``"rle"``, ``values`` = (a view of its value bytes, the number of values), for a caller that
    looks the values up straight into its rows (:func:`pqbloom.kernels.hybrid.gather_dictionary`).
    ``raw_indices`` (with ``views``) does the same for every dictionary-encoded page, whatever the
    dictionary's type (byte strings too): for a caller that looks up something else than the values
    by the indices (a filter's truth per dictionary entry).

    Buffers: a page decompresses into a scratch buffer whose lease this loop holds
    (:func:`pqbloom.compression.decompress_leased`), and a ``window`` holds the lease of the chunk's
    bytes. A lease is released when the caller asks for the next page (or, for the dictionary page,
    once it is decoded) unless something handed on may view its buffer (values decoded as views of
    the page, the dictionary; with ``views`` the caller has copied the values out by then): those
    keep the buffer, which is then never reused (:mod:`pqbloom.memory.scratch`).

    ``page_ordinals``: ``buf`` holds only some data pages of the chunk (after its dictionary page, if
    any), and these are their ordinals in the chunk (from its OffsetIndex), in order. An encrypted
    page's AAD binds its ordinal, so a page read on its own needs it; there, a dictionary page is
    accepted only where the chunk begins. ``num_values``: the values (level entries) those pages hold,
    in place of the chunk's ``meta.num_values``.

    ``full_flags=False`` (without ``levels``): a page of a nullable column whose definition levels are
    RLE runs of the maximum level only (every value present, :func:`~pqbloom.encodings.rle.is_single_value`)
    yields None for its presence flags, as a page of a required column does: the caller treats
    such a page as all present, and no levels or flags are built for it.
    """
    if desc.max_repetition_level > 0 and not levels:
        raise UnsupportedError(f"column {desc.dotted_path!r} is repeated; read it through its top-level field")
    max_rep = desc.max_repetition_level
    encoded_indices = encoded_indices and views  # the caller looks the values up before the next page
    raw_indices = raw_indices and views
    extended = False
    f = desc.field
    codec = compression_mod.codec_by_id(meta.codec)
    total_values = meta.num_values if num_values is None else num_values
    if total_values is None or total_values < 0:
        raise CorruptFileError("negative value count in column metadata")
    if max_rep == 0 and row_count is not None and total_values > row_count:
        # one value per row: more is impossible, and a few bytes of RLE could make it gigabytes
        raise CorruptFileError(f"column chunk claims {total_values:,} values for a row group of {row_count:,} rows")
    max_def = desc.max_definition_level
    # facts of the chunk every page needs, worked out once
    levels_of = _ChunkLevels(max_rep, max_def, total_values) if levels and total_values <= plausible_count(
        meta.total_compressed_size or 0) else _page_levels(max_rep, max_def)
    # pages whose levels are one value ("all present") are recognised from their run headers
    def_bw = levels_of.def_bw if not full_flags and not levels and max_rep == 0 else 0
    phys, type_length, type_name = f.physical_type, f.type_length, f.type_name
    dictionary = None
    seen = 0
    pos = 0
    data_pages = 0  # data pages met so far
    header_decryption = decryption if decryption is not None and decryption.column_encrypted(desc) else None
    chunk_start = None
    if page_ordinals is not None:
        dict_off, data_off = meta.dictionary_page_offset, meta.data_page_offset
        chunk_start = dict_off if dict_off is not None and data_off is not None and 4 <= dict_off < data_off \
            else data_off
    view, view_of = memoryview(b""), None  # a view of buf, made again only when buf changes
    while seen < total_values:
        if window is not None:  # bytes of decoded pages dropped, the next ones read (file/chunk_window.py)
            buf, base, pos = window.advance(buf, base, pos, HEADER_ROOM)
        if pos >= len(buf):
            if not extended:
                buf, extended = extend(buf, base), True
                continue
            raise CorruptFileError(f"column chunk ends after {seen} of {total_values} values",
                                   offset=base + pos)
        hdr_raw_start = pos
        if page_ordinals is None:
            page_ordinal = data_pages
        elif data_pages < len(page_ordinals):
            page_ordinal = page_ordinals[data_pages]
        else:
            raise CorruptFileError(f"more than the {len(page_ordinals)} data pages expected", offset=base + pos)
        try:
            if header_decryption is None:
                hdr = page_header(buf, pos)  # page_header_fields, one call less per page
                if hdr is None:
                    hdr = _thrift_page_header(buf, pos, base + pos)
            else:
                header, end = parse_page_header(
                    buf, pos, offset=base + pos, decryption=header_decryption, rg=rg, desc=desc,
                    page_ordinal=page_ordinal, first=dictionary is None and data_pages == 0
                    and (chunk_start is None or base + pos == chunk_start),
                    dictionary_hint=meta.dictionary_page_offset is not None
                    and base + pos == meta.dictionary_page_offset)
                hdr = flat_page_header(header, end)
            pos, ptype, usize, csize, crc, dp, dh, dp2 = hdr
        except CorruptFileError:
            if window is None or base + len(buf) >= window.end:
                raise
            # a header longer than HEADER_ROOM (huge statistics): read the rest of the chunk, parse again
            buf, base, pos = window.advance(buf, base, pos, window.end - base - pos)
            continue
        if window is not None and csize is not None and csize > 0:
            was = base
            buf, base, pos = window.advance(buf, base, pos, csize)
            hdr_raw_start -= base - was
        if csize is None or usize is None or csize < 0 or usize < 0 or pos + csize > len(buf):  # rare: then
            if csize is not None and csize >= 0 and pos + csize > len(buf) and not extended:
                buf, extended = extend(buf, base), True
            if csize is None or usize is None or csize < 0 or usize < 0 or pos + csize > len(buf):
                raise CorruptFileError(f"page sizes (compressed {csize}, uncompressed {usize}) do not fit the chunk",
                                       offset=base + hdr_raw_start)
        if view_of is not buf:
            view, view_of = memoryview(buf), buf
        stored = view[pos:pos + csize]  # a view: slicing bytes copied every page
        pos += csize
        if verify_checksums and crc is not None:
            if not crc_matches(stored, crc):
                raise ChecksumError("page CRC mismatch", offset=base + hdr_raw_start)
        if ptype == _DICTIONARY_PAGE:
            if dh is None or dh[0] is None or dh[0] < 0:
                raise CorruptFileError("dictionary page header is missing or has a negative count",
                                       offset=base + hdr_raw_start)
            if dictionary is not None:
                raise CorruptFileError("second dictionary page in a column chunk", offset=base + hdr_raw_start)
            body = _open_module(decryption, ModuleType.DICTIONARY_PAGE, stored, rg, desc)
            raw, page_lease = compression_mod.decompress_leased(codec, body, usize)
            if dh[1] != _PLAIN and dh[1] != _PLAIN_DICTIONARY:
                raise UnsupportedError(f"dictionary page encoding {dh[1]}")
            dictionary, _ = decode_plain(raw, f.physical_type, dh[0], f.type_length)
            raw = b""
            # (decode_plain copies: the buffer is free for the first data page) the dictionary lives as
            # long as the chunk's pages, so whatever it may view stays with it
            if page_lease is not None:
                page_lease.release_unless_viewed(dictionary)
            if window is not None:
                window.keep_if_viewed(dictionary)
            continue
        if ptype == _INDEX_PAGE:
            continue
        if ptype != _DATA_PAGE and ptype != _DATA_PAGE_V2:
            raise CorruptFileError(f"unknown page type {ptype}", offset=base + hdr_raw_start)
        body = stored if decryption is None else _open_module(decryption, ModuleType.DATA_PAGE, stored, rg, desc,
                                                              page_ordinal)
        data_pages += 1
        page_present: np.ndarray | None = None
        page_lease = None
        if ptype == _DATA_PAGE:
            if dp is None:
                raise CorruptFileError("data page without its header", offset=base + hdr_raw_start)
            n, enc, def_enc, rep_enc = dp
            if n is None or n < 0 or n > total_values - seen:
                raise CorruptFileError(f"data page claims {n} values; {total_values - seen} remain",
                                       offset=base + hdr_raw_start)
            raw, page_lease = compression_mod.decompress_leased(codec, body, usize)
            # (a block that does not fit the page goes to the decoder, which says so)
            p = 4 + int.from_bytes(raw[:4], "little") if def_bw and def_enc != _BIT_PACKED and len(raw) >= 4 else -1
            if 0 <= p <= len(raw) and is_single_value(raw, 4, p, n, max_def, def_bw):
                reps = defs = None  # the values start after the whole block, as the decoder has them
                n_present = n
            elif levels_of.arrays:
                reps, defs, p, n_present = levels_of.v1(raw, n, rep_enc, def_enc)
            else:  # a required flat column: no levels (v1's first case, a call less per page)
                reps = defs = None
                p, n_present = 0, n
            if defs is not None and not levels:
                page_present = defs == max_def
            values_buf = memoryview(raw)[p:]
        else:
            if dp2 is None:
                raise CorruptFileError("v2 data page without its header", offset=base + hdr_raw_start)
            n, _, rows, enc, dl, rl, is_compressed = dp2
            if max_rep == 0 and max_def == 0 and n is not None and n > total_values - seen \
                    and rows is not None and 0 <= rows <= total_values - seen:
                # a required flat column holds one value per row and its page has no levels to
                # count: where num_values claims more than the chunk has left but num_rows fits,
                # the rows are what the chunk and the row group say, and what pyarrow and DuckDB
                # read (by rows); parquet-go wrote such pages. With levels, pyarrow refuses too.
                n = rows
            if n is None or n < 0 or n > total_values - seen or dl is None or rl is None or dl < 0 or rl < 0 \
                    or dl + rl > len(body):
                raise CorruptFileError("v2 data page header is inconsistent", offset=base + hdr_raw_start)
            if def_bw and is_single_value(body, rl, rl + dl, n, max_def, def_bw):
                reps = defs = None
                n_present = n
            else:
                reps, defs, n_present = levels_of.v2(body, n, rl, dl)
            if defs is not None and not levels:
                page_present = defs == max_def
            rest = body[rl + dl:]
            if is_compressed is None or is_compressed or v2_always_compressed:
                rest, page_lease = compression_mod.decompress_leased(codec, rest, usize - rl - dl)
            values_buf = memoryview(rest)
        seen += n
        if enc == _PLAIN:  # decode_page_values' first case, two calls less per page
            sunk = sink.decode_plain(values_buf, n_present) if sink is not None else None
            kind, values = "values", (sunk[0] if sunk is not None else
                                      decode_plain(values_buf, phys, n_present, type_length, copy=not views)[0])
        elif (raw_indices and dictionary is not None or encoded_indices and type(dictionary) is np.ndarray) \
                and (enc == _RLE_DICTIONARY or enc == _PLAIN_DICTIONARY):
            kind, values = "rle", (values_buf, n_present)
        else:
            kind, values = decode_page_values(values_buf, enc, n_present, f, dictionary, phys, type_length, type_name)
        flags = (defs, reps) if levels else page_present
        yield kind, values, flags, dictionary
        # the caller asked for the next page: this page's buffers go back for it, unless what was handed
        # on may view them. The levels and presence flags are arrays made here (never views of a page);
        # with ``views`` the caller has copied the values out by now, else they may be views of the page
        # (or of the window, an uncompressed page) and are checked
        raw = rest = b""
        values_buf = _NO_BYTES
        handed = None if views else (values, flags)
        values = None
        if handed is None:
            if page_lease is not None:
                page_lease.release()
        else:
            if page_lease is not None:
                page_lease.release_unless_viewed(handed)
            if window is not None:
                window.keep_if_viewed(handed)
    if seen != total_values:
        raise CorruptFileError(f"column chunk holds {seen} values, metadata says {total_values}")
    if window is not None:
        window.close()  # every page handed on: the last window's bytes are free (unless kept above)


def crc_matches(stored: Buffer, crc: int) -> bool:
    """Whether a page's stored bytes (after its header) match the CRC-32 its header gives (the low 32
    bits: writers store it as a signed i32)."""
    return (zlib.crc32(stored) & 0xFFFFFFFF) == (crc & 0xFFFFFFFF)


def decode_page_values(buf: memoryview, enc: int, n: int, f: Field, dictionary: object | None,
                       ptype: int | None = None, type_length: int | None = None,
                       type_name: str | None = None) -> tuple[str, Any]:
    """Decode ``n`` values of one page in encoding ``enc``: ``("dict", indices)`` for a dictionary
    encoding (which needs ``dictionary``), else ``("values", values)``. ``ptype``, ``type_length`` and
    ``type_name`` are ``f``'s, passed by a caller that worked them out once for the chunk."""
    if is_dictionary_encoding(enc):
        if dictionary is None:
            raise CorruptFileError("dictionary-encoded page without a dictionary page")
        return ("dict", decode_values(buf, enc, f.physical_type if ptype is None else ptype, n))
    if ptype is None:
        ptype, type_length, type_name = f.physical_type, f.type_length, f.type_name
    return ("values", decode_values(buf, enc, ptype, n, type_length, type_name=type_name))


class _ChunkLevels:
    """The repetition and definition levels of a chunk's data pages: bit widths and dtype worked out
    once, each page's levels decoded in one kernel call (:func:`pqbloom.kernels.hybrid.page_levels`)."""

    __slots__ = ("max_rep", "max_def", "rep_bw", "def_bw", "dtype", "rep_dtype", "def_dtype", "arrays", "chunk",
                 "chunk_reps", "chunk_defs", "filled")

    def __init__(self, max_rep: int, max_def: int, chunk: int = 0) -> None:
        """``chunk``: the chunk's level entries, when its pages' levels are kept for the whole chunk:
        they then decode into views of one array per level kind (see :func:`chunk_levels`)."""
        self.max_rep, self.max_def = max_rep, max_def
        self.chunk, self.filled = chunk, 0
        self.chunk_reps: np.ndarray | None = None
        self.chunk_defs: np.ndarray | None = None
        self.rep_bw = bit_width_of(max_rep) if max_rep > 0 else 0
        self.def_bw = bit_width_of(max_def) if max_def > 0 else 0
        self.rep_dtype, self.def_dtype = level_dtype(max_rep), level_dtype(max_def)
        # one dtype for both (the kernel's): int8 unless a level needs 8 bits or more
        self.dtype = np.dtype(np.int8 if max(self.rep_bw, self.def_bw) <= 7 else np.int32)
        self.arrays = (self.rep_bw > 0) + (self.def_bw > 0)

    def _plausible(self, raw: Buffer, n: int) -> bool:
        # the kernels decode into arrays of n levels made first: a count beyond what the bytes could
        # plausibly hold (a lying header) goes to the per-block decoders, which find the runs before
        # they allocate (as pqbloom.encodings.rle.decode_hybrid decides); v1 inlines this test
        return n <= _LEVELS_PER_BYTE * len(raw) + 4096

    def _arrays(self, n: int) -> tuple[np.ndarray | None, np.ndarray | None]:
        """Where a page's ``n`` levels decode: the next stretch of the chunk's arrays, or new arrays."""
        a, b = self.filled, self.filled + n
        if b > self.chunk or not self.chunk:  # (one instance without a chunk serves every chunk: _page_levels)
            if BUDGET.get() is not None:  # the message is formatted only then: most reads have no budget
                charge(n * (self.dtype.itemsize * self.arrays + 1),
                       f"the levels and presence flags of a page of {n:,} values")
            return (np.empty(n, self.dtype) if self.rep_bw else None,
                    np.empty(n, self.dtype) if self.def_bw else None)
        if not a:
            charge(self.chunk * self.dtype.itemsize * self.arrays, f"the levels of a chunk of {self.chunk:,} values")
            self.chunk_reps = np.empty(self.chunk, self.dtype) if self.rep_bw else None
            self.chunk_defs = np.empty(self.chunk, self.dtype) if self.def_bw else None
        self.filled = b
        return (None if self.chunk_reps is None else self.chunk_reps[a:b],
                None if self.chunk_defs is None else self.chunk_defs[a:b])

    def _decode(self, raw: Buffer, n: int, rl: int, dl: int) -> tuple[np.ndarray | None, np.ndarray | None, int, int]:
        reps, defs = self._arrays(n)
        used, n_present = page_levels(raw, n, self.rep_bw, self.def_bw, rl, dl, reps, defs, self.max_def)
        return reps, defs, used, n_present

    def v1(self, raw: Buffer, n: int, rep_enc: int | None,
           def_enc: int | None) -> tuple[np.ndarray | None, np.ndarray | None, int, int]:
        """(repetition levels, definition levels, bytes they take, values present) of a v1 page."""
        if not self.arrays:
            return None, None, 0, n
        if (not self.rep_bw or rep_enc != _BIT_PACKED) and (not self.def_bw or def_enc != _BIT_PACKED) \
                and n <= _LEVELS_PER_BYTE * len(raw) + 4096:
            return self._decode(raw, n, -1, -1)
        p = 0
        reps = defs = None
        if self.rep_bw:
            if rep_enc == _BIT_PACKED:
                reps = decode_bit_packed_levels(raw, self.rep_bw, n)
                p = (n * self.rep_bw + 7) // 8
            else:
                reps, p = decode_levels_v1(raw, self.rep_bw, n, self.rep_dtype)
        if not self.def_bw:
            return reps, None, p, n
        if def_enc == _BIT_PACKED:
            defs = decode_bit_packed_levels(memoryview(raw)[p:], self.def_bw, n)
            p += (n * self.def_bw + 7) // 8
        else:
            defs, used = decode_levels_v1(memoryview(raw)[p:], self.def_bw, n, self.def_dtype)
            p += used
        return reps, defs, p, int(np.count_nonzero(defs == self.max_def))

    def v2(self, body: Buffer, n: int, rl: int, dl: int) -> tuple[np.ndarray | None, np.ndarray | None, int]:
        """(repetition levels, definition levels, values present) of a v2 page whose blocks take
        ``rl`` and ``dl`` bytes (checked to fit ``body``)."""
        if not self.arrays:
            return None, None, n
        if self._plausible(body, n):
            reps, defs, _, n_present = self._decode(body, n, rl, dl)
            return reps, defs, n_present
        reps = defs = None
        if self.rep_bw:
            reps = decode_rle_bitpacked(body[:rl], self.rep_bw, n, self.rep_dtype)
        if not self.def_bw:
            return reps, None, n
        defs = decode_rle_bitpacked(body[rl:rl + dl], self.def_bw, n, self.def_dtype)
        return reps, defs, int(np.count_nonzero(defs == self.max_def))


@lru_cache(maxsize=32)
def _page_levels(max_rep: int, max_def: int) -> _ChunkLevels:
    """The levels of chunks whose pages' levels each decode into arrays of their own: one instance
    per maximum levels (it keeps no state between pages then), made once and shared."""
    return _ChunkLevels(max_rep, max_def)


_NO_BYTES = memoryview(b"")

#: as pqbloom.encodings.rle: the compiled hybrid takes counts up to this many values per input byte
_LEVELS_PER_BYTE = 256


def plausible_count(nbytes: int) -> int:
    """The most level entries (or values) ``nbytes`` of RLE runs are taken to hold before arrays of
    that many are made: a larger count is a lying header, decoded run by run instead."""
    return _LEVELS_PER_BYTE * nbytes + 4096


def join_levels(pieces: list[np.ndarray], n: int) -> np.ndarray:
    """The ``n`` levels of a chunk from its pages' levels: the chunk's array itself when the pieces
    are views that tile it (decoded in place, see ``_ChunkLevels``), else their concatenation."""
    if len(pieces) == 1:
        return pieces[0]
    base = pieces[0].base if pieces else None
    if isinstance(base, np.ndarray) and base.ndim == 1 and len(base) == n and all(p.base is base for p in pieces) \
            and sum(len(p) for p in pieces) == n:
        return base
    return np.concatenate(pieces)


@lru_cache(maxsize=64)  # asked per chunk, of the one writer of the file
def v2_flag_ignored(created_by: str | None) -> bool:
    """ARROW-10353: parquet-cpp before 2.0.0 (Arrow before 3.0) compressed the values of every v2 data
    page with the column's codec yet stored ``is_compressed = false``; Arrow decompresses those pages
    whatever the flag says, keyed on this writer version, and so do we (for no other writer)."""
    writer = parse_created_by(created_by)
    return writer is not None and writer[0] == "parquet-cpp" and writer[1] < (2, 0, 0)


#: PARQUET-816: the most a parquet-mr 1.2.x chunk's stated size falls short (a dictionary page header)
CHUNK_SIZE_SHORTFALL = 100
_PARQUET_MR = re.compile(r"parquet-mr(?=\s|$)")
_VERSION = re.compile(r"\s+version\s+(\d+)(?:\.(\d+))?(?:\.(\d+))?")


@lru_cache(maxsize=64)
def chunk_size_undercounted(created_by: str | None) -> bool:
    """PARQUET-816 (IMPALA-694): parquet-mr before 1.2.9 left the dictionary page header out of a chunk's
    ``total_compressed_size``, so its pages run up to :data:`CHUNK_SIZE_SHORTFALL` bytes past the stated
    end. Arrow reads such chunks padded by that much (within the file), keyed on this writer version
    (the name exactly, a missing version counting as 0.0.0), and so do we (for no other writer)."""
    cb = created_by or ""
    if _PARQUET_MR.match(cb) is None:
        return False
    v = _VERSION.match(cb, len("parquet-mr"))
    if v is not None:
        return tuple(int(g or 0) for g in v.groups()) < (1, 2, 9)
    return not cb[len("parquet-mr"):].strip()  # the name alone: version 0.0.0, as Arrow reads it
