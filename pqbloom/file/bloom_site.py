"""Where a column chunk's Bloom filter sits in a file, and whether it may be trusted to prune.

The footer says where a filter starts (``bloom_filter_offset``) and, since format 2.10, how many
bytes it takes (``bloom_filter_length``); the filter's own header says how big its bitset is. A
reader that believes one and not the other probes the wrong blocks and calls present values absent
(DuckDB's ``bloom_filter_short_numbytes.parquet``: numBytes 256 in the header, 16 + 512 in the
footer). So a filter is used only when all of it agrees:

* the header decodes with algorithm BLOCK, hash XXHASH, compression UNCOMPRESSED and numBytes a
  power of two from 32 B to 128 MiB (:meth:`pqbloom.bloom.BloomFilter.parse_header`);
* header + bitset == ``bloom_filter_length`` when the length is set (encrypted: the header module
  plus a bitset module of numBytes + the GCM overhead);
* the filter starts after the leading magic and outside its own chunk's pages, and ends before
  the footer.

The checks use numbers the reader already holds (footer fields, the decoded header), so a probe
still reads only the header and one 32-byte block. A failure raises
:class:`~pqbloom.errors.BloomFilterError` naming row group, column and the disagreement; the
filtered reader catches it and does not prune (:class:`pqbloom.scan.Explain` says why).
"""

from __future__ import annotations

from dataclasses import dataclass

from ..errors import BloomFilterError

__all__ = ["MAGIC_BYTES", "BloomFilterSite"]

#: the leading ``PAR1``/``PARE``: nothing of a column chunk can start inside it
MAGIC_BYTES = 4


@dataclass(frozen=True)
class BloomFilterSite:
    """One column chunk's Bloom filter as the footer describes it, with the bounds it must keep.

    ``footer_offset`` is the first byte of the footer; ``chunk`` the ``[start, end)`` of the chunk's
    pages when the footer gives them sanely (None otherwise: that check is skipped).
    """

    offset: int
    length: int | None
    footer_offset: int
    chunk: tuple[int, int] | None
    row_group: int
    column: str

    def error(self, reason: str, offset: int | None = None) -> BloomFilterError:
        """A :class:`~pqbloom.errors.BloomFilterError` for this chunk."""
        return BloomFilterError(reason, offset=self.offset if offset is None else offset,
                                row_group=self.row_group, column=self.column)

    def check_placement(self, min_length: int = 1) -> None:
        """Before any read: the filter starts after the leading magic, outside its chunk's pages and
        before the footer; a stated length is at least ``min_length`` and ends before the footer."""
        off, length, footer = self.offset, self.length, self.footer_offset
        if off < MAGIC_BYTES:
            raise self.error(f"bloom_filter_offset {off} lies in the leading magic")
        if off >= footer:
            raise self.error(f"bloom_filter_offset {off} is not before the footer (at {footer})")
        if self.chunk is not None and self.chunk[0] <= off < self.chunk[1]:
            raise self.error(f"bloom_filter_offset {off} lies inside the column chunk's pages "
                             f"[{self.chunk[0]}, {self.chunk[1]})")
        if length is not None:
            if length < min_length:
                raise self.error(f"bloom_filter_length {length} cannot hold a Bloom filter")
            if off + length > footer:
                raise self.error(f"bloom_filter_length {length} runs from offset {off} into the footer (at {footer})")

    def check_extent(self, used: int, what: str) -> None:
        """After the header: the ``used`` bytes the header implies (``what`` explains them) equal
        ``bloom_filter_length`` when set, end before the footer and stay clear of the chunk's pages."""
        if self.length is not None and used != self.length:
            raise self.error(f"{what} make {used} bytes, but bloom_filter_length says {self.length}")
        end = self.offset + used
        if end > self.footer_offset:
            raise self.error(f"{what} make {used} bytes, which run into the footer (at {self.footer_offset})")
        if self.chunk is not None and self.offset < self.chunk[1] and self.chunk[0] < end:
            raise self.error(f"{what} make {used} bytes, which overlap the column chunk's pages "
                             f"[{self.chunk[0]}, {self.chunk[1]})")
