"""A chunk's dictionary page read on its own, for pruning: when every data page of a plaintext chunk is
dictionary-encoded (its ``encoding_stats`` say so), the dictionary holds exactly the chunk's distinct
values, and a filter engine can rule the row group out without decoding a data page.
"""

from __future__ import annotations

from typing import Any

from .. import compression as compression_mod
from ..encodings import decode_plain
from ..format import Encoding, PageType
from ..schema import ColumnDescriptor
from .chunks import ChunkAccess
from .pages import crc_matches, parse_page_header

__all__ = ["read_pruning_dictionary"]


def read_pruning_dictionary(pf: ChunkAccess, rg: int, desc: ColumnDescriptor, rows: int, max_bytes: int,
                            keep: dict[tuple[int, int], bytes] | None = None) -> Any:
    """The decoded dictionary of chunk (``rg``, ``desc``) when every data page is dictionary-encoded, else
    None (also for encrypted files, a dictionary page larger than ``max_bytes`` and one failing its
    checksum: the full read reports that). The page's bytes go into ``keep`` by (offset, length): a later
    page-level read of the chunk needs them. Raises :class:`~pqbloom.errors.ParquetError` when the chunk's
    metadata or the page cannot be read."""
    if pf.decryption is not None:
        return None
    meta = pf.chunk_metadata(rg, desc)
    es = meta.encoding_stats
    # a repeated leaf counts level entries, not rows
    if not es or (meta.num_values != rows and desc.max_repetition_level == 0):
        return None
    data = [s for s in es if s.page_type in (PageType.DATA_PAGE, PageType.DATA_PAGE_V2) and (s.count or 0) > 0]
    if not data or any(s.encoding not in (Encoding.PLAIN_DICTIONARY, Encoding.RLE_DICTIONARY) for s in data):
        return None
    if not any(s.page_type == PageType.DICTIONARY_PAGE for s in es):
        return None
    start, length = pf.chunk_range(meta, rg, desc)
    span = (meta.data_page_offset or 0) - start  # the dictionary page lies between its offset and the data's
    reader = pf.range_reader
    if reader.concurrent and start == meta.dictionary_page_offset and 0 < span <= max_bytes + 4096:
        reader.prefetch([(start, min(span, length))], what="dictionary page")  # header and page: one trip
    head = reader.read(start, min(length, 512), what="dictionary page header")
    header, hlen = parse_page_header(head, 0, offset=start)
    if header.type != PageType.DICTIONARY_PAGE or header.dictionary_page_header is None:
        return None
    csize, usize = header.compressed_page_size, header.uncompressed_page_size
    dh = header.dictionary_page_header
    if csize is None or usize is None or csize < 0 or usize < 0 or hlen + csize > length \
            or csize > max_bytes or usize > 8 * max_bytes or dh.num_values is None \
            or dh.num_values < 0 or dh.encoding not in (Encoding.PLAIN, Encoding.PLAIN_DICTIONARY):
        return None
    body = head[hlen:hlen + csize] if hlen + csize <= len(head) else \
        reader.read(start + hlen, csize, what="dictionary page")
    if pf.verify_checksums and header.crc is not None and not crc_matches(body, header.crc):
        return None  # the full read reports the checksum error
    if keep is not None:  # the page is the prefix a later page-level read of this chunk needs
        keep[(start, hlen + csize)] = head[:hlen] + body
    raw, lease = compression_mod.decompress_leased(compression_mod.codec_by_id(meta.codec), body, usize)
    values, _ = decode_plain(raw, desc.physical_type, dh.num_values, desc.type_length)
    if lease is not None:  # (decode_plain copies) the page's buffer is free for the next read's pages
        lease.release_unless_viewed(values)
    return values
