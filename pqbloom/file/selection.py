"""Which rows of a row group to read: :class:`RowSelection` (sorted disjoint row ranges, what the filter
engine hands the file layer) and :class:`PageLayout` (where the data pages of one column chunk are and
which rows each holds: from its OffsetIndex or from a walk of its page headers).

:class:`PagesDoNotStandAlone` is the checked condition under which a page-level read gives way to a
whole-chunk one: the pages are not where, or do not hold the rows, their layout says.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import overload

import numpy as np

from ..table import Column
from .encoded_column import EncodedColumn

__all__ = ["RowSelection", "PageLayout", "PagesDoNotStandAlone", "pages_for", "take_ranges", "ranges_positions",
           "COALESCE_GAP"]

COALESCE_GAP = 4096  # merge reads separated by at most this many bytes


class PagesDoNotStandAlone(Exception):  # noqa: N818 - a condition, not an error that reaches the user
    """The data pages of a layout do not decode on their own into exactly the rows it gives them (a
    header is not where the OffsetIndex says, a page holds other rows, a repeated leaf's page does not
    begin a record). The caller reads the whole chunk instead; this never escapes the reader."""


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

    def rows(self) -> np.ndarray:
        """Every selected row number, in order."""
        lengths = self.lengths
        return ranges_positions(self.starts, lengths)

    def covers(self, rows: int) -> bool:
        """Whether the selection is every row of a row group of ``rows`` rows."""
        return len(self.starts) == 1 and int(self.starts[0]) == 0 and int(self.ends[0]) == rows

    def clip(self, start: int, stop: int) -> RowSelection:
        """The selected rows within ``[start, stop)``."""
        s0 = np.clip(self.starts, start, stop)
        e0 = np.clip(self.ends, start, stop)
        keep = e0 > s0
        return RowSelection(s0[keep], e0[keep])


@dataclass
class PageLayout:
    """Where the data pages of one column chunk are and which rows each holds (from its OffsetIndex,
    checked against the chunk, or from its page headers)."""

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

    def needs_prefix(self, pages: np.ndarray) -> bool:
        """Whether reading data pages ``pages`` needs the bytes before the first data page (the dictionary)."""
        return self.prefix[1] > 0 and (self.dictionary_encoded is None or bool(self.dictionary_encoded[pages].any()))

    def ranges(self, pages: np.ndarray) -> list[tuple[int, int]]:
        """(offset, length) of data pages ``pages``, after the dictionary page when one of them needs it."""
        return ([self.prefix] if self.needs_prefix(pages) else []) + [(self.offsets[q], self.sizes[q])
                                                                      for q in pages.tolist()]

    def page_rows(self) -> np.ndarray:
        """Rows of each data page."""
        return np.diff(np.append(self.first_rows, self.rows))


def pages_for(layout: PageLayout, sel: RowSelection) -> np.ndarray:
    """Data pages overlapping the row ranges of ``sel``."""
    fr = layout.first_rows
    p0 = np.searchsorted(fr, sel.starts, side="right") - 1
    p1 = np.searchsorted(fr, sel.ends - 1, side="right") - 1
    mark = np.zeros(layout.num_pages + 1, np.int64)
    np.add.at(mark, p0, 1)
    np.add.at(mark, p1 + 1, -1)
    return np.flatnonzero(np.cumsum(mark)[:-1] > 0)


@overload
def take_ranges(col: Column, pos_starts: np.ndarray, lengths: np.ndarray) -> Column: ...
@overload
def take_ranges(col: EncodedColumn, pos_starts: np.ndarray, lengths: np.ndarray) -> EncodedColumn: ...
@overload
def take_ranges(col: Column | EncodedColumn, pos_starts: np.ndarray,
                lengths: np.ndarray) -> Column | EncodedColumn: ...
def take_ranges(col: Column | EncodedColumn, pos_starts: np.ndarray,
                lengths: np.ndarray) -> Column | EncodedColumn:
    """Rows ``[pos_starts[i], pos_starts[i] + lengths[i])`` of ``col`` (decoded or as dictionary codes),
    concatenated."""
    if len(pos_starts) == 1:
        s = int(pos_starts[0])
        if s == 0 and int(lengths[0]) == len(col):
            return col
        return col.slice(s, int(lengths[0]))
    return col.take(ranges_positions(pos_starts, lengths))


def ranges_positions(starts: np.ndarray, lengths: np.ndarray) -> np.ndarray:
    """The positions ``[starts[i], starts[i] + lengths[i])``, concatenated."""
    total = int(lengths.sum())
    before = np.cumsum(lengths) - lengths
    return np.repeat(starts - before, lengths) + np.arange(total, dtype=np.int64)
