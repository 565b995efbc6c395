"""Reading a column chunk's Bloom filter: whole, or one 32-byte block for a single probe.

Where the filter is and whether it may be trusted is :mod:`pqbloom.file.bloom_site`'s job; this
module fetches the bytes through the file's :class:`~pqbloom.io.RangeReader` (an encrypted filter
through :meth:`pqbloom.file.encryption.ReaderDecryption.read_bloom_filter`, since a GCM module can only
be authenticated whole).
"""

from __future__ import annotations

from typing import Any

from ..bloom import BloomFilter, hash_scalar
from ..format import T
from ..io import RangeReader
from ..schema import ColumnDescriptor
from ..schema.literals import physical_candidates
from .bloom_site import BloomFilterSite

__all__ = ["locate_bloom_filter", "probe_bloom_filter", "read_bloom_filter"]


def locate_bloom_filter(meta: T.ColumnMetaData, row_group: int, desc: ColumnDescriptor, footer_offset: int,
                        chunk: tuple[int, int] | None) -> BloomFilterSite | None:
    """Where the footer puts the chunk's Bloom filter (None: no filter). ``chunk`` is the (start, end)
    of the chunk's pages when known, which the filter must not overlap."""
    off = meta.bloom_filter_offset
    if off is None:
        return None
    return BloomFilterSite(int(off), None if meta.bloom_filter_length is None else int(meta.bloom_filter_length),
                           footer_offset, chunk, row_group, desc.dotted_path)


def _read_header(io: RangeReader, site: BloomFilterSite, probe: int) -> tuple[int, int]:
    """Read (at most ``probe`` bytes, never into the footer) and check a plaintext filter's header."""
    room = site.footer_offset - site.offset if site.length is None else site.length
    head = io.read(site.offset, min(probe, room), what="Bloom filter header")
    num_bytes, hlen = BloomFilter.parse_header(head, offset=site.offset, row_group=site.row_group,
                                               column=site.column)
    site.check_extent(hlen + num_bytes, f"Bloom filter header ({hlen} bytes, numBytes {num_bytes}) and bitset")
    return num_bytes, hlen


def probe_bloom_filter(io: RangeReader, site: BloomFilterSite, value: Any, desc: ColumnDescriptor, *,
                       physical: bool = False) -> bool:
    """Probe one logical value (see :func:`pqbloom.schema.literals.physical_candidates`) against a
    plaintext filter: the header, then the single block each of its physical forms maps to (one,
    but for zeros of floats and BYTE_ARRAY decimals). A value the column cannot hold is absent
    without a read. ``physical=True``: ``value`` is already the stored value (hashed as it is)."""
    candidates = [value] if physical else physical_candidates(value, desc.field)
    if not candidates:
        return False
    hashes = [hash_scalar(c, desc.physical_type, desc.type_length) for c in candidates]
    site.check_placement()
    num_bytes, hlen = _read_header(io, site, 64)
    for h in hashes:
        block = int(BloomFilter.block_index(h, num_bytes // 32))
        words = io.read(site.offset + hlen + 32 * block, 32, what="Bloom filter block")
        if BloomFilter.check_block(words, h):
            return True
    return False


def read_bloom_filter(io: RangeReader, site: BloomFilterSite) -> BloomFilter:
    """Read a whole plaintext filter (header and bitset) after checking where it lies."""
    site.check_placement()
    if site.length is not None:  # one read: header and bitset
        data = io.read(site.offset, site.length, what="Bloom filter")
        num_bytes, hlen = BloomFilter.parse_header(data, offset=site.offset, row_group=site.row_group,
                                                   column=site.column)
        site.check_extent(hlen + num_bytes, f"Bloom filter header ({hlen} bytes, numBytes {num_bytes}) and bitset")
        return BloomFilter.from_bitset(memoryview(data)[hlen:])
    # no length (older parquet-java): a bounded header read, then the bitset
    num_bytes, hlen = _read_header(io, site, 256)
    bitset = io.read(site.offset + hlen, num_bytes, what="Bloom filter bitset")
    return BloomFilter.from_bitset(bitset)
