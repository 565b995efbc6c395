"""The page index of a row group's chunks (ColumnIndex and OffsetIndex), read in coalesced batches and
handed out as pqbloom's objects: a chunk's :class:`~pqbloom.file.selection.PageLayout` (its OffsetIndex,
checked against the chunk) and its :class:`PageStatistics` (its ColumnIndex: per-page bounds, null
pages and counts). Which pages may match a filter is the filter engine's business (:mod:`pqbloom.scan`).

In an encrypted file each index of an encrypted column is an AES-GCM module (types COLUMN_INDEX /
OFFSET_INDEX, bound to its row group and column): it is decrypted with the column's key, and one that
fails authentication raises :class:`~pqbloom.errors.AuthenticationError` (tampered, or moved from
another chunk), never silently dropped. Without the column's key its index is not used (no page
pruning for that column, and no error: only reading the column itself needs the key).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..crypto import ModuleType
from ..errors import CorruptFileError, ParquetError
from ..format import decode_column_index, decode_offset_index
from ..io import read_ranges
from ..schema import ColumnDescriptor
from .chunks import ChunkAccess
from .selection import COALESCE_GAP, PageLayout

__all__ = ["PageStatistics", "ChunkPageIndex", "PageIndex"]


@dataclass
class PageStatistics:
    """A chunk's ColumnIndex: per data page, whether it holds only nulls, its stored (still encoded)
    min and max, and the counts the writer gave (None: not given). The field names are the format's,
    so :func:`pqbloom.statistics.column_index_is_usable` and :func:`~pqbloom.statistics.column_index_bounds`
    read it by those names."""

    null_pages: list[bool] | None
    min_values: list[bytes] | None
    max_values: list[bytes] | None
    boundary_order: int | None
    null_counts: list[int] | None = None
    nan_counts: list[int] | None = None
    definition_level_histograms: list[int] | None = None

    @classmethod
    def of(cls, ci: Any) -> PageStatistics:
        """From the decoded ``ColumnIndex`` struct."""
        return cls(ci.null_pages, ci.min_values, ci.max_values, ci.boundary_order, ci.null_counts,
                   ci.nan_counts, ci.definition_level_histograms)


@dataclass
class ChunkPageIndex:
    """What the page index says of one chunk: its page layout and page statistics (None: absent,
    unreadable, inconsistent with the chunk, or its column's key is not given)."""

    layout: PageLayout | None
    statistics: PageStatistics | None


class PageIndex:
    """ColumnIndex / OffsetIndex of the chunks of one row group, read in coalesced batches and kept.
    ``notes`` receives what could not be used and why."""

    def __init__(self, pf: ChunkAccess, rg: int, rows: int, notes: list[str]) -> None:
        self.pf, self.rg, self.rows, self.notes = pf, rg, rows, notes
        self.ci: dict[int, PageStatistics | None] = {}
        self.oi: dict[int, PageLayout | None] = {}

    def get(self, desc: ColumnDescriptor) -> ChunkPageIndex:
        """What is loaded of ``desc``'s chunk (None where not loaded or not usable)."""
        return ChunkPageIndex(self.oi.get(desc.index), self.ci.get(desc.index))

    def load(self, descs: Iterable[ColumnDescriptor], column_index: bool) -> None:
        """Read the OffsetIndex (and with ``column_index`` the ColumnIndex) of the chunks of ``descs``
        not loaded yet, in one coalesced batch; an index that cannot be read or used becomes None
        (see the module docstring for encrypted files)."""
        pf, rg = self.pf, self.rg
        chunks = pf.thrift_metadata.row_groups[rg].columns
        n_leaves = len(pf.columns)
        if len(chunks) != n_leaves:  # as chunk_metadata checks
            raise CorruptFileError(f"row group has {len(chunks)} column chunks for {n_leaves} columns",
                                   row_group=rg)
        wants: list[tuple[str, int, int, int]] = []
        for d in descs:
            cc = chunks[d.index]
            if pf.decryption is not None and not pf.decryption.key_available(rg, d):
                self.oi.setdefault(d.index, None)
                self.ci.setdefault(d.index, None)
                continue
            if d.index not in self.oi:
                if cc.offset_index_offset is not None and cc.offset_index_length and cc.offset_index_length > 0:
                    wants.append(("oi", d.index, cc.offset_index_offset, cc.offset_index_length))
                else:
                    self.oi[d.index] = None
            if column_index and d.index not in self.ci:
                if cc.column_index_offset is not None and cc.column_index_length and cc.column_index_length > 0:
                    wants.append(("ci", d.index, cc.column_index_offset, cc.column_index_length))
                else:
                    self.ci[d.index] = None
        if not wants:
            return
        try:
            bufs = read_ranges(pf.range_reader, [(o, n) for _, _, o, n in wants], max_gap=COALESCE_GAP,
                               what="page index")
        except ParquetError as exc:
            self.notes.append(f"page index of row group {rg} unreadable ({exc}); not used")
            for kind, idx, _, _ in wants:
                (self.oi if kind == "oi" else self.ci)[idx] = None  # type: ignore[index]
            return
        leaves = pf.columns
        for (kind, idx, off, _), buf in zip(wants, bufs):
            if pf.decryption is not None:  # AuthenticationError propagates: see above
                buf = pf.open_module(ModuleType.COLUMN_INDEX if kind == "ci" else ModuleType.OFFSET_INDEX,
                                     bytes(buf), rg, leaves[idx])
            try:
                if kind == "ci":
                    self.ci[idx] = PageStatistics.of(decode_column_index(buf, offset=off))
                else:
                    oi = decode_offset_index(buf, offset=off)
                    self.oi[idx] = self._layout(leaves[idx], oi)
            except ParquetError:
                (self.oi if kind == "oi" else self.ci)[idx] = None  # type: ignore[index]

    def _layout(self, desc: ColumnDescriptor, oi: Any) -> PageLayout | None:
        """The OffsetIndex as a page layout, or None when it disagrees with the chunk."""
        pf, rg, rows = self.pf, self.rg, self.rows
        locs = oi.page_locations
        if not locs:
            return None
        try:
            meta = pf.chunk_metadata(rg, desc)
            start, length = pf.chunk_range(meta, rg, desc)
        except ParquetError:
            return None
        # a repeated leaf counts level entries (>= 1 per row); its pages begin at rows, which the
        # page-level read checks when it decodes them
        if meta.num_values != rows and not (desc.max_repetition_level > 0 and (meta.num_values or 0) >= rows):
            return None
        end = start + length
        first, offs, sizes = [], [], []
        prev_end = start
        prev_row = -1
        for loc in locs:
            o, s, r = loc.offset, loc.compressed_page_size, loc.first_row_index
            if o is None or s is None or r is None or s <= 0 or o < prev_end or o + s > end or r <= prev_row \
                    or r >= max(rows, 1):
                return None
            if prev_row < 0 and r != 0:
                return None
            first.append(r)
            offs.append(o)
            sizes.append(s)
            prev_end, prev_row = o + s, r
        return PageLayout(np.array(first, np.int64), offs, sizes, (start, offs[0] - start), rows)
