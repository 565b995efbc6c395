"""Where a file's column chunks, pages and Bloom filters lie, from the footer and the page headers alone
(no page is decompressed or decoded): what the byte map of ``pqbloom layout`` (:mod:`pqbloom.cli.layout`)
draws, as pqbloom's records.

* :func:`chunk_extents`: each column chunk's offsets and sizes as the footer gives them. A chunk encrypted
  with a key not given still shows what a plaintext footer keeps of it (offsets, no Bloom filter).
* :func:`chunk_page_spans`: the pages of one chunk, walked header by header. With the column's key the
  headers are decrypted to tell the page kinds; without it the pages are still found, since every
  encrypted module starts with its length.
* :func:`bloom_filter_length`: a Bloom filter's length when the footer does not give it.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from ..bloom import BloomFilter
from ..crypto import MODULE_LENGTH_SIZE
from ..errors import CorruptFileError, KeyNotFoundError, ParquetError
from ..format import Encoding, PageType, name_of
from ..io import RangeReader
from ..schema import ColumnDescriptor
from .pages import parse_page_header

__all__ = ["ChunkExtent", "PageSpan", "chunk_extents", "chunk_page_spans", "bloom_filter_length"]

_MAX_HEADER_READ = 16 * 1024 * 1024


@dataclass
class ChunkExtent:
    """One column chunk as the footer places it. ``readable``: its full metadata could be read (a plaintext
    column, or its key was given); otherwise the offsets are what a plaintext footer keeps of an encrypted
    column, and there is no Bloom filter location. The offset fields are None when the footer has none."""

    row_group: int
    desc: ColumnDescriptor
    encrypted: bool
    readable: bool
    has_metadata: bool
    num_values: int | None = None
    dictionary_page_offset: int | None = None
    data_page_offset: int | None = None
    total_compressed_size: int | None = None
    bloom_filter_offset: int | None = None
    bloom_filter_length: int | None = None
    column_index_offset: int | None = None
    column_index_length: int | None = None
    offset_index_offset: int | None = None
    offset_index_length: int | None = None


@dataclass
class PageSpan:
    """One page of a chunk: ``kind`` ``"dictionary-page"``, ``"data-page"`` or ``"index-page"``, where it lies
    (header included), its header and body sizes, and what its header says (None where it could not be
    read: an encrypted page without its key)."""

    kind: str
    offset: int
    length: int
    header_length: int
    compressed: int
    uncompressed: int | None = None
    page_type: str | None = None
    encoding: str | None = None
    num_values: int | None = None
    page: int | None = None  # data page ordinal within the chunk
    note: str | None = None


def chunk_extents(reader: Any) -> Iterator[ChunkExtent]:
    """Every column chunk of the file behind ``reader`` (a :class:`~pqbloom.file.reader.FileReader`), row
    group by row group, in leaf order."""
    for rg_index, rg in enumerate(reader.thrift_metadata.row_groups):
        for desc, cc in zip(reader.columns, rg.columns or []):
            encrypted = cc.crypto_metadata is not None
            try:
                meta = reader.chunk_metadata(rg_index, desc)
                readable = True
            except KeyNotFoundError:
                meta = cc.meta_data  # plaintext footer: offsets without statistics or Bloom filter fields
                readable = False
            ext = ChunkExtent(rg_index, desc, encrypted, readable, meta is not None,
                              column_index_offset=cc.column_index_offset, column_index_length=cc.column_index_length,
                              offset_index_offset=cc.offset_index_offset, offset_index_length=cc.offset_index_length)
            if meta is not None:
                ext.num_values = meta.num_values
                ext.dictionary_page_offset, ext.data_page_offset = meta.dictionary_page_offset, meta.data_page_offset
                ext.total_compressed_size = meta.total_compressed_size
                if readable:
                    ext.bloom_filter_offset, ext.bloom_filter_length = meta.bloom_filter_offset, meta.bloom_filter_length
            yield ext


def chunk_page_spans(reader: Any, ext: ChunkExtent) -> tuple[tuple[int, int] | None, list[PageSpan], str | None]:
    """The pages of chunk ``ext``, from their headers (bodies are never read): ``(start, length)`` of the chunk
    as far as it lies before the footer (None when the footer places it nowhere), its pages, and what stopped
    the walk early (a header that does not parse, a page running past the chunk...), or None."""
    dict_off, data_off = ext.dictionary_page_offset, ext.data_page_offset
    start = dict_off if dict_off is not None and 4 <= dict_off < (data_off or 0) else data_off
    length = ext.total_compressed_size
    if start is None or length is None or start < 4 or length <= 0:
        return None, [], None
    rr: RangeReader = reader.range_reader
    end = min(start + length, reader.footer_location.footer_offset, rr.size)
    out: list[PageSpan] = []
    pos = start
    ordinal = 0
    desc, rg = ext.desc, ext.row_group
    try:
        while pos < end:
            if ext.encrypted and not ext.readable:
                hlen = MODULE_LENGTH_SIZE + int.from_bytes(rr.read(pos, 4, what="page header module"), "little")
                blen = MODULE_LENGTH_SIZE + int.from_bytes(rr.read(pos + hlen, 4, what="page module"), "little")
                if pos + hlen + blen > end:
                    raise CorruptFileError("encrypted page runs past its column chunk", offset=pos)
                is_dict = pos == dict_off and ordinal == 0 and not out
                out.append(PageSpan("dictionary-page" if is_dict else "data-page", pos, hlen + blen, hlen, blen,
                                    page=None if is_dict else ordinal,
                                    note="no key: header not decrypted, kind inferred"))
                ordinal += 0 if is_dict else 1
                pos += hlen + blen
                continue
            if ext.encrypted:
                mlen = int.from_bytes(rr.read(pos, 4, what="page header module"), "little")
                module = rr.read(pos, MODULE_LENGTH_SIZE + mlen, what="page header module")
                header, hlen = parse_page_header(module, 0, offset=pos, decryption=reader.decryption, rg=rg,
                                                 desc=desc, page_ordinal=ordinal, first=not out,
                                                 dictionary_hint=pos == dict_off)
            else:
                header, hlen = _read_page_header(rr, pos, end)
            csize = header.compressed_page_size
            if csize is None or csize < 0 or pos + hlen + csize > end:
                raise CorruptFileError(f"page of {csize} bytes runs past its column chunk", offset=pos)
            span = PageSpan("data-page", pos, hlen + csize, hlen, csize, header.uncompressed_page_size,
                            None if header.type is None else name_of(PageType, header.type))
            if header.type == PageType.DICTIONARY_PAGE:
                span.kind = "dictionary-page"
                dh = header.dictionary_page_header
                if dh is not None:
                    span.encoding, span.num_values = _encoding(dh.encoding), dh.num_values
            elif header.type == PageType.INDEX_PAGE:
                span.kind = "index-page"
            else:
                span.page = ordinal
                ordinal += 1
                dp = header.data_page_header if header.type == PageType.DATA_PAGE else header.data_page_header_v2
                if dp is not None:
                    span.encoding, span.num_values = _encoding(dp.encoding), dp.num_values
            out.append(span)
            pos += hlen + csize
    except ParquetError as exc:
        return (start, end - start), out, f"pages after offset {pos} not scanned: {exc}"
    return (start, end - start), out, None


def _encoding(v: int | None) -> str | None:
    return None if v is None else name_of(Encoding, v)


def _read_page_header(reader: RangeReader, pos: int, end: int) -> tuple[Any, int]:
    """Decode the plaintext page header at ``pos``, reading only as much as it needs."""
    n = min(256, end - pos)
    while True:
        buf = reader.read(pos, n, what="page header")
        try:
            return parse_page_header(buf, 0, offset=pos)
        except CorruptFileError:
            if n >= end - pos or n >= _MAX_HEADER_READ:
                raise
            n = min(n * 8, end - pos, _MAX_HEADER_READ)


def bloom_filter_length(reader: Any, ext: ChunkExtent) -> int:
    """The length of chunk ``ext``'s Bloom filter when the footer does not give it (older writers), from its
    header (its modules' length fields when encrypted); :class:`~pqbloom.errors.ParquetError` when that cannot
    be read."""
    off = ext.bloom_filter_offset
    if off is None:
        raise ValueError("the chunk has no Bloom filter")
    rr: RangeReader = reader.range_reader
    if ext.encrypted:
        h = MODULE_LENGTH_SIZE + int.from_bytes(rr.read(off, 4, what="Bloom filter"), "little")
        b = MODULE_LENGTH_SIZE + int.from_bytes(rr.read(off + h, 4, what="Bloom filter"), "little")
        return h + b
    head = rr.read(off, min(256, rr.size - off), what="Bloom filter header")
    num_bytes, hlen = BloomFilter.parse_header(head, offset=off)
    return hlen + num_bytes
