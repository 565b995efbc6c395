"""Which rows of a row group to read: :class:`RowSelection` (sorted disjoint row ranges), the page
layout of a chunk from its OffsetIndex (:class:`PageLayout`), and the page index of a row group read
in coalesced batches (:class:`PageIndexCache`).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from ..crypto import ModuleType
from ..errors import CorruptFileError, ParquetError
from ..format import T, decode_prefix
from ..io import read_ranges
from .explain import Explain

if TYPE_CHECKING:
    from ..file.levels import LeafLevels
    from ..file.reader import FileReader
    from ..schema import ColumnDescriptor

__all__ = ["RowSelection", "PageLayout", "PageIndexCache", "pages_for", "row_group_rows", "COALESCE_GAP"]

COALESCE_GAP = 4096  # merge reads separated by at most this many bytes


def row_group_rows(pf: FileReader, rg: int) -> int:
    """Rows of row group ``rg`` as the footer gives them (0 when missing or negative: nothing to read)."""
    n = pf.thrift_metadata.row_groups[rg].num_rows
    return int(n) if n is not None and n > 0 else 0


# ---------------------------------------------------------------------------
# Page index
# ---------------------------------------------------------------------------
@dataclass
class PageLayout:
    """Where the data pages of one column chunk are and which rows each holds (from its OffsetIndex,
    checked against the chunk by :class:`PageIndexCache`)."""

    first_rows: np.ndarray  # first row of each data page
    offsets: list[int]
    sizes: list[int]
    prefix: tuple[int, int]  # (offset, length) of what precedes the first data page (dictionary)
    rows: int
    # whether each data page needs the dictionary page (from page headers; None: unknown, assume so)
    dictionary_encoded: np.ndarray | None = None

    @property
    def num_pages(self) -> int:
        """Number of data pages."""
        return len(self.offsets)

    def ranges(self, pages: np.ndarray) -> list[tuple[int, int]]:
        """(offset, length) of data pages ``pages``, after the dictionary page when one of them needs it."""
        need = self.prefix[1] > 0 and (self.dictionary_encoded is None or bool(self.dictionary_encoded[pages].any()))
        return ([self.prefix] if need else []) + [(self.offsets[q], self.sizes[q]) for q in pages.tolist()]

    def page_rows(self) -> np.ndarray:
        """Rows of each data page."""
        return np.diff(np.append(self.first_rows, self.rows))


class PageIndexCache:
    """ColumnIndex / OffsetIndex of the chunks of one row group, read in coalesced batches."""

    def __init__(self, pf: FileReader, rg: int, ex: Explain) -> None:
        self.pf, self.rg, self.ex = pf, rg, ex
        self.ci: dict[int, Any] = {}
        self.oi: dict[int, PageLayout | None] = {}
        self.kept: dict[tuple[int, int], bytes] = {}  # byte ranges already read (dictionary pages)
        # whole repeated-leaf chunks decoded for the filter, kept for the output assembly of the same
        # row group so that a leaf both filtered on and returned is decoded once
        self.levels: dict[int, LeafLevels] = {}

    def load(self, descs: Iterable[ColumnDescriptor], column_index: bool) -> None:
        """Read the OffsetIndex (and with ``column_index`` the ColumnIndex) of the chunks of ``descs``
        not loaded yet, in one coalesced batch; an index that cannot be read or used becomes None.

        In an encrypted file each index of an encrypted column is an AES-GCM module (types
        COLUMN_INDEX / OFFSET_INDEX, bound to its row group and column): it is decrypted with the
        column's key, and one that fails authentication raises
        :class:`~pqbloom.errors.AuthenticationError` (tampered, or moved from another chunk), never
        silently dropped. Without the column's key its index is not used (no page pruning for that
        column, and no error: only reading the column itself needs the key)."""
        pf, rg = self.pf, self.rg
        chunks = pf.thrift_metadata.row_groups[rg].columns
        if len(chunks) != len(pf.columns):  # as ParquetFile.chunk_metadata checks
            raise CorruptFileError(f"row group has {len(chunks)} column chunks for {len(pf.columns)} columns",
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
            bufs = read_ranges(pf.range_reader, [(o, n) for _, _, o, n in wants], max_gap=COALESCE_GAP, what="page index")
        except ParquetError as exc:
            self.ex.notes.append(f"page index of row group {rg} unreadable ({exc}); not used")
            for kind, idx, _, _ in wants:
                (self.oi if kind == "oi" else self.ci)[idx] = None
            return
        for (kind, idx, off, _), buf in zip(wants, bufs):
            if pf.decryption is not None:  # AuthenticationError propagates: see above
                buf = pf.open_module(ModuleType.COLUMN_INDEX if kind == "ci" else ModuleType.OFFSET_INDEX,
                                     bytes(buf), rg, pf.columns[idx])
            try:
                if kind == "ci":
                    self.ci[idx] = decode_prefix(T.ColumnIndex, buf, offset=off, what="column index")[0]
                else:
                    oi = decode_prefix(T.OffsetIndex, buf, offset=off, what="offset index")[0]
                    self.oi[idx] = self._layout(pf.columns[idx], oi)
            except ParquetError:
                (self.oi if kind == "oi" else self.ci)[idx] = None

    def _layout(self, desc: ColumnDescriptor, oi: Any) -> PageLayout | None:
        """The OffsetIndex as a page layout, or None when it disagrees with the chunk."""
        pf, rg = self.pf, self.rg
        rows = row_group_rows(pf, rg)
        locs = oi.page_locations
        if not locs:
            return None
        try:
            meta = pf.chunk_metadata(rg, desc)
            start, length = pf.chunk_range(meta, rg, desc)
        except ParquetError:
            return None
        # a repeated leaf counts level entries (>= 1 per row); its pages begin at rows, which
        # read_repeated checks when it decodes them
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


# ---------------------------------------------------------------------------
# Reading selected rows of columns
# ---------------------------------------------------------------------------
class RowSelection:
    """Sorted, disjoint row ranges ``[starts[i], ends[i])`` of a row group."""

    __slots__ = ("starts", "ends")

    def __init__(self, starts: np.ndarray, ends: np.ndarray) -> None:
        self.starts, self.ends = starts.astype(np.int64, copy=False), ends.astype(np.int64, copy=False)

    @classmethod
    def of_ranges(cls, ranges: Sequence[tuple[int, int]]) -> RowSelection:
        """From sorted, disjoint ``(start, end)`` pairs."""
        a = np.array(ranges, np.int64).reshape(-1, 2)
        return cls(a[:, 0], a[:, 1])

    @classmethod
    def of_rows(cls, rows: np.ndarray) -> RowSelection:
        """From sorted distinct row numbers."""
        if len(rows) == 0:
            return cls(np.zeros(0, np.int64), np.zeros(0, np.int64))
        brk = np.flatnonzero(np.diff(rows) != 1) + 1
        return cls(rows[np.r_[0, brk]], rows[np.r_[brk - 1, len(rows) - 1]] + 1)

    @property
    def lengths(self) -> np.ndarray:
        """Rows of each range."""
        return self.ends - self.starts

    @property
    def num_rows(self) -> int:
        """Rows selected."""
        return int(self.lengths.sum())

    def absolute(self, local: np.ndarray) -> np.ndarray:
        """Row numbers of positions ``local`` within the concatenated ranges."""
        cum = np.cumsum(self.lengths)
        r = np.searchsorted(cum, local, side="right")
        return self.starts[r] + (local - (cum[r] - self.lengths[r]))


def pages_for(layout: PageLayout, sel: RowSelection) -> np.ndarray:
    """Data pages overlapping the row ranges of ``sel``."""
    fr = layout.first_rows
    p0 = np.searchsorted(fr, sel.starts, side="right") - 1
    p1 = np.searchsorted(fr, sel.ends - 1, side="right") - 1
    mark = np.zeros(layout.num_pages + 1, np.int64)
    np.add.at(mark, p0, 1)
    np.add.at(mark, p1 + 1, -1)
    return np.flatnonzero(np.cumsum(mark)[:-1] > 0)
