"""Reading a column chunk's Bloom filter: whole, or one 32-byte block for a single probe.

Where the filter is and whether it may be trusted is :mod:`pqbloom.file.bloom_site`'s job; this
module fetches the bytes through the file's :class:`~pqbloom.io.RangeReader` (an encrypted filter
through :meth:`pqbloom.file.encryption.ReaderDecryption.read_bloom_filter`, since a GCM module can only
be authenticated whole).
"""

from __future__ import annotations

from typing import Any

from ..bloom import BloomFilter, hash_scalar
from ..errors import CorruptFileError
from ..io import RangeReader
from ..schema import ColumnDescriptor
from ..schema.literals import physical_candidates
from .bloom_site import BloomFilterSite

__all__ = ["chunk_bloom_site", "locate_bloom_filter", "probe_bloom_filter", "probe_ranges", "read_bloom_filter"]


def locate_bloom_filter(meta: Any, row_group: int, desc: ColumnDescriptor, footer_offset: int,
                        chunk: tuple[int, int] | None) -> BloomFilterSite | None:
    """Where the footer puts the chunk's Bloom filter (None: no filter). ``chunk`` is the (start, end)
    of the chunk's pages when known, which the filter must not overlap."""
    off = meta.bloom_filter_offset
    if off is None:
        return None
    return BloomFilterSite(int(off), None if meta.bloom_filter_length is None else int(meta.bloom_filter_length),
                           footer_offset, chunk, row_group, desc.dotted_path)


def chunk_bloom_site(reader: Any, row_group: int, desc: ColumnDescriptor, meta: Any
                     ) -> BloomFilterSite | None:
    """Where the footer puts the chunk's Bloom filter in ``reader`` (a FileReader; None: no filter)."""
    if meta.bloom_filter_offset is None:
        return None
    chunk = None
    if meta.num_values:  # empty chunks may carry zero offsets
        try:
            start, length = reader.chunk_range(meta, row_group, desc, stated=True)  # not the read's padding
            chunk = (start, start + length)
        except CorruptFileError:
            pass  # unknown page extent: reading the chunk fails on its own; skip the overlap check
    return locate_bloom_filter(meta, row_group, desc, reader.footer_location.footer_offset, chunk)


def _header_range(site: BloomFilterSite, probe: int) -> tuple[int, int]:
    """The bounded read of a plaintext filter's header: at most ``probe`` bytes, never into the footer."""
    room = site.footer_offset - site.offset if site.length is None else site.length
    return site.offset, min(probe, room)


def _parse_header(site: BloomFilterSite, head: bytes) -> tuple[int, int]:
    """(numBytes, header length) of a plaintext filter, checked against the footer."""
    num_bytes, hlen = BloomFilter.parse_header(head, offset=site.offset, row_group=site.row_group,
                                               column=site.column)
    site.check_extent(hlen + num_bytes, f"Bloom filter header ({hlen} bytes, numBytes {num_bytes}) and bitset")
    return num_bytes, hlen


def _read_header(io: RangeReader, site: BloomFilterSite, probe: int) -> tuple[int, int]:
    """Read (at most ``probe`` bytes, never into the footer) and check a plaintext filter's header."""
    off, n = _header_range(site, probe)
    return _parse_header(site, io.read(off, n, what="Bloom filter header"))


def _guess_layout(site: BloomFilterSite) -> tuple[int, int] | None:
    """(header length, numBytes) as ``bloom_filter_length`` alone implies them: numBytes is a power of two
    and the header (about 15 bytes) is shorter than it, so numBytes is the largest power of two below
    the length. A guess, checked against the header once it is read."""
    length = site.length
    if length is None or length <= 32:
        return None
    num_bytes = 1 << (length.bit_length() - 1)
    hlen = length - num_bytes
    return (hlen, num_bytes) if 0 < hlen < num_bytes else None


def probe_ranges(site: BloomFilterSite, value: Any, desc: ColumnDescriptor) -> list[tuple[int, int]]:
    """The reads :func:`probe_bloom_filter` makes for ``value``: the header, and (when the footer gives the
    filter's length) the block the value maps to, so both can go out at once."""
    head = _header_range(site, 64)
    guess = _guess_layout(site)
    if guess is None:
        return [head]
    return _ranges_for_hashes(site, [hash_scalar(value, desc.physical_type, desc.type_length)])


def _ranges_for_hashes(site: BloomFilterSite, hashes: list[int]) -> list[tuple[int, int]]:
    """The header's range, and the block of each hash where the footer's length implies the layout."""
    head = _header_range(site, 64)
    guess = _guess_layout(site)
    if guess is None:
        return [head]
    hlen, num_bytes = guess
    blocks = dict.fromkeys(site.offset + hlen + 32 * int(BloomFilter.block_index(h, num_bytes // 32)) for h in hashes)
    return [head, *((off, 32) for off in blocks)]


def probe_bloom_filter(io: RangeReader, site: BloomFilterSite, value: Any, desc: ColumnDescriptor, *,
                       physical: bool = False, duration_unit: str | None = None) -> bool:
    """Probe one logical value (see :func:`pqbloom.schema.literals.physical_candidates`) against a
    plaintext filter: the header and the block each of its physical forms maps to (one, but for zeros
    of floats and BYTE_ARRAY decimals), read together when the footer's ``bloom_filter_length`` tells
    where the blocks are (one round trip on a remote reader), else one after the other. A value the
    column cannot hold is absent without a read. ``physical=True``: ``value`` is already the stored
    value (hashed as it is). ``duration_unit``: the column holds Arrow durations of that unit (a ``timedelta``
    is their count of it)."""
    candidates = [value] if physical else physical_candidates(value, desc.field, duration_unit)
    if not candidates:
        return False
    hashes = [hash_scalar(c, desc.physical_type, desc.type_length) for c in candidates]
    site.check_placement()
    ranges = _ranges_for_hashes(site, hashes)
    bufs = io.read_many(ranges, what="Bloom filter")
    num_bytes, hlen = _parse_header(site, bufs[0])
    fetched = dict(zip(ranges[1:], bufs[1:]))
    for h in hashes:
        block = (site.offset + hlen + 32 * int(BloomFilter.block_index(h, num_bytes // 32)), 32)
        words = fetched.get(block)
        if words is None:  # the footer's length did not tell the layout (or told it wrong): read it now
            words = io.read(*block, what="Bloom filter block")
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
