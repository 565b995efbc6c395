"""Reading the rows of a :class:`~pqbloom.file.selection.RowSelection` of one row group: the file layer's
side of a filtered read. :class:`RowGroupReader` keeps what the reads of one row group share (its page
index, a dictionary page read for pruning, repeated leaves already decoded) and counts the pages it
reads and skips (:class:`PageCounts`).

Page selection happens here: only the pages overlapping the selection are read where an OffsetIndex
allows it, or where the page headers of a flat chunk without one tell each page's rows
(:mod:`pqbloom.file.page_walk`: from a local file they are walked with small reads first, from elsewhere
once the chunk is read whole, when only decoding is saved). All byte ranges of a call are fetched in one
coalesced batch (:func:`pqbloom.io.read_ranges`). Pages that do not stand on their own
(:mod:`pqbloom.file.page_reads`) give way to the whole chunk, with a note.

Encrypted files take the same path: their OffsetIndex modules are decrypted and authenticated
(:mod:`pqbloom.file.page_index`) and each page read on its own is opened with its ordinal. A read of every
row of an encrypted file (``selection`` None) opens no page index: it reads the chunks whole, and
decrypting the indexes would only count pages.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from functools import partial
from typing import Any, cast

import numpy as np

from ..errors import ParquetError
from ..format import PageType
from ..io import read_ranges
from ..schema import ColumnDescriptor
from ..table import Column
from .chunk_window import ChunkWindow
from .chunks import ChunkAccess
from .column_reader import (
    DECODE_FAILURES,
    ChunkParts,
    NestedSelection,
    Values,
    build_column,
    located_error,
    split_nested,
)
from .dictionary_hits import DictionaryHits, collect_hits
from .dictionary_probe import read_pruning_dictionary
from .encoded_column import EncodedColumn
from .flat_chunk import placed_column
from .levels import LeafLevels
from .page_index import ChunkPageIndex, PageIndex
from .page_reads import (
    decode_flat_pages,
    decode_repeated_pages,
    decode_whole_chunk,
    flat_page_rows,
    slices,
    whole_chunk_rows,
)
from .page_walk import walk_page_headers, walk_page_ranges
from .selection import (
    COALESCE_GAP,
    PageLayout,
    PagesDoNotStandAlone,
    RowSelection,
    pages_for,
    ranges_positions,
    take_ranges,
)

__all__ = ["RowGroupReader", "PageCounts", "RepeatedRows", "PageColumns"]


@dataclass
class PageCounts:
    """Pages of offset-indexed or header-walked chunks read and skipped, and chunks decoded without
    page selection; ``notes`` says what could not be used and why."""

    notes: list[str]
    pages_total: int = 0
    pages_read: int = 0
    pages_skipped: int = 0
    chunks_read_whole: int = 0

    def pages(self, total: int, read: int) -> None:
        """Count ``read`` of a chunk's ``total`` pages read, the rest skipped."""
        self.pages_total += total
        self.pages_read += read
        self.pages_skipped += total - read


@dataclass
class RepeatedRows:
    """A repeated leaf's levels over some rows: ``levels`` holds records in row order; ``first_rows`` is
    the row of each record when they are not every row of the row group (None)."""

    levels: LeafLevels
    first_rows: np.ndarray | None


@dataclass
class PageColumns:
    """A flat column's selected pages, decoded one at a time: ``pages`` yields (the selected rows of a
    page, the column at those rows)."""

    pages: Iterator[tuple[RowSelection, Column]]
    num_pages: int  # pages of the chunk
    read: int  # pages that will be read


def _rows_of(d: ColumnDescriptor, parts: ChunkParts | EncodedColumn) -> Column | EncodedColumn:
    return parts if isinstance(parts, EncodedColumn) else build_column(d.field, [parts])


#: a selection of at most this share of the rows decoded is taken from each page as it is decoded
SPARSE_SHARE = 0.25


def _sparse(selected: int, decoded: int) -> bool:
    """Whether ``selected`` of ``decoded`` rows are few enough to take page by page (no whole column built)."""
    return selected <= SPARSE_SHARE * decoded


def _may_skip_pages(meta: Any, sel: RowSelection, rows: int) -> bool:
    """Whether a walk of the chunk's page headers may find pages without a row of ``sel``: not when, were
    the rows spread evenly over the data pages its ``encoding_stats`` count, every page would hold some
    (a selection spread over the whole chunk: then walking the headers only costs)."""
    stats = meta.encoding_stats
    if not stats:
        return True
    pages = sum(int(s.count or 0) for s in stats if s.page_type in (PageType.DATA_PAGE, PageType.DATA_PAGE_V2))
    if pages <= 1 or rows <= 0 or len(sel.starts) < pages:
        return pages != 1
    per = -(-rows // pages)
    first, last = sel.starts // per, (sel.ends - 1) // per
    # pages the sorted ranges reach, each counted once
    reached = np.maximum(first, np.concatenate([[0], np.maximum.accumulate(last)[:-1] + 1]))
    return int(np.maximum(last - reached + 1, 0).sum()) < pages


class RowGroupReader:
    """The reads of one row group for a filtered read (build it with ``FileReader.row_group_reader``).
    ``notes`` (a list, maybe the caller's) receives what could not be used and why."""

    def __init__(self, pf: ChunkAccess, rg: int, notes: list[str] | None = None) -> None:
        self.pf, self.rg = pf, rg
        self.rows = pf.row_group_rows(rg)
        self.counts = PageCounts(notes if notes is not None else [])
        self._index = PageIndex(pf, rg, self.rows, self.counts.notes)
        self._kept: dict[tuple[int, int], Any] = {}  # byte ranges already read (dictionary pages, chunks)
        # whole repeated-leaf chunks decoded for the filter, kept for the output assembly of the same
        # row group so that a leaf both filtered on and returned is decoded once
        self._levels: dict[int, LeafLevels] = {}

    # -- what pruning reads ----------------------------------------------------------------
    def page_index(self, descs: Iterable[ColumnDescriptor], *, column_index: bool = True,
                   prefetch: Iterable[Any] = ()) -> dict[int, ChunkPageIndex]:
        """The page index of the chunks of ``descs`` by leaf index (read once, in one coalesced batch).
        ``prefetch``: columns (``select_columns`` items) to be read next; from a remote file their page
        index comes in the same round trip."""
        descs = list(descs)
        if self.pf.range_reader.concurrent:
            descs_all = descs + [d for d in prefetch if not isinstance(d, NestedSelection)]
            self._index.load(descs_all, column_index)
        else:
            self._index.load(descs, column_index)
        return {d.index: self._index.get(d) for d in descs}

    def dictionary(self, desc: ColumnDescriptor, max_bytes: int) -> Any:
        """The dictionary of ``desc``'s chunk when every data page uses it (see
        :func:`~pqbloom.file.dictionary_probe.read_pruning_dictionary`), else None."""
        return read_pruning_dictionary(self.pf, self.rg, desc, self.rows, max_bytes, self._kept)

    def _layout(self, desc: ColumnDescriptor, sel: RowSelection | None) -> PageLayout | None:
        if sel is not None or self.pf.decryption is None:
            self._index.load([desc], False)
        return self._index.oi.get(desc.index)

    # -- reading rows ----------------------------------------------------------------------
    def read_rows(self, descs: Sequence[Any], selection: RowSelection | None) -> dict[str, Column]:
        """Columns (``FileReader.select_columns`` items) holding exactly the rows of ``selection`` (None:
        all), by output name. Nested output columns are assembled from their whole chunks."""
        return cast("dict[str, Column]", self._read(descs, selection, False))  # (not encoded)

    def read_encoded(self, descs: Sequence[ColumnDescriptor],
                     selection: RowSelection | None) -> dict[str, Column | EncodedColumn]:
        """Flat columns ``descs`` at the rows of ``selection`` (None: all) as :meth:`read_rows` reads them,
        except that a chunk with dictionary-encoded pages comes as an
        :class:`~pqbloom.file.encoded_column.EncodedColumn` (codes into its dictionary, the values of any
        PLAIN page appended to it) rather than expanded: what a filter is evaluated on."""
        return self._read(descs, selection, True)

    def _read(self, descs: Sequence[Any], selection: RowSelection | None,
              encoded: bool) -> dict[str, Column | EncodedColumn]:
        pf, rg, nrows, counts = self.pf, self.rg, self.rows, self.counts
        sel = None if selection is not None and selection.covers(nrows) else selection
        nested_out, flat = split_nested(pf, rg, descs, sel, counts, levels=self._levels)
        reads: list[tuple[ColumnDescriptor, PageLayout | None, np.ndarray | None, list[tuple[int, int]], bool]] = []
        if sel is not None or pf.decryption is None:  # every column's OffsetIndex in one coalesced batch
            self._index.load(flat, False)
        for d in flat:
            meta = pf.chunk_metadata(rg, d)
            if meta.num_values == 0:
                reads.append((d, None, None, [], False))
                continue
            layout = self._layout(d, sel)
            start, length = pf.chunk_range(meta, rg, d)
            # without an OffsetIndex, a selection of rows walks the chunk's page headers: before reading
            # the pages where small reads are cheap (a local file), else once the chunk is read
            walk = layout is None and sel is not None and d.max_repetition_level == 0 \
                and not (pf.decryption is not None and pf.decryption.column_encrypted(d)) \
                and _may_skip_pages(meta, sel, nrows)  # (encrypted headers are modules)
            if walk and pf.range_reader.local:
                walk = False
                walked = walk_page_ranges(partial(pf.range_reader.read, what="page header"), start, length, d,
                                          meta.num_values, nrows)
                if walked is not None:
                    layout = PageLayout(walked.first_rows, walked.offsets, walked.sizes, walked.prefix, walked.rows,
                                        walked.dictionary_encoded)
            if layout is not None and sel is not None:
                pages = pages_for(layout, sel)
                if len(pages) < layout.num_pages:
                    reads.append((d, layout, pages, layout.ranges(pages), False))
                    continue
            if layout is not None:
                counts.pages(layout.num_pages, layout.num_pages)
            elif not walk:
                counts.chunks_read_whole += 1
            if not walk and ChunkWindow.for_chunk(pf.range_reader, start, length) is not None:
                reads.append((d, None, None, [], False))  # read window by window as its pages decode
                continue
            reads.append((d, None, None, [(start, length)], walk))
        wanted = [r for _, _, _, rngs, _ in reads for r in rngs if r not in self._kept]
        got: dict[tuple[int, int], Any] = dict(zip(wanted, read_ranges(pf.range_reader, wanted, max_gap=COALESCE_GAP,
                                                                        what="column chunk")))
        got.update(self._kept)
        out: dict[str, Column | EncodedColumn] = dict(nested_out)
        for d, layout, chosen, rngs, walk in reads:
            col: Column | EncodedColumn | None = None
            whole = rngs[0] if rngs else None  # the whole chunk's range, when that is what was read
            if layout is not None and chosen is not None and sel is not None:
                col = self._selected_pages(d, layout, chosen, got, sel, encoded)
                whole = None
            elif walk and sel is not None and whole is not None:
                col = self._walked(d, got[whole], whole[0], sel, encoded)
            if col is None:
                col = self._whole(d, None if whole is None else (got[whole], whole[0]), sel, encoded)
            out[d.dotted_path] = col
        return out

    def read_dictionary_hits(self, d: ColumnDescriptor,
                             hits_of: Callable[[Values], np.ndarray | None]) -> DictionaryHits | None:
        """Every row of flat column ``d``'s chunk as which of the dictionary entries ``hits_of(dictionary)``
        names it holds (:func:`~pqbloom.file.dictionary_hits.collect_hits`: no array of indices is built),
        or None when a page is not dictionary-encoded, ``hits_of`` gives up or the chunk is empty: the
        caller then reads it with :meth:`read_encoded`, which counts the pages this read did not."""
        pf, rg = self.pf, self.rg
        meta = pf.chunk_metadata(rg, d)
        if d.max_repetition_level > 0 or meta.num_values == 0 or meta.num_values != self.rows:
            return None
        layout = self._layout(d, None)
        start, length = pf.chunk_range(meta, rg, d)
        kept = self._kept.get((start, length))
        window = None
        if kept is not None:
            buf = kept
        else:
            buf, window = pf.open_chunk(start, length)
            if window is None:
                self._kept[(start, length)] = buf  # read once, should the caller read the chunk again
        try:
            pages = pf.iter_pages(buf, start, meta, rg, d, window=window, views=True, raw_indices=True,
                                  full_flags=False)
            got = collect_hits(pages, d.field, self.rows, hits_of)
        except (ParquetError, *DECODE_FAILURES) as exc:
            raise located_error(exc, rg, d) from None
        if got is None:
            return None
        if kept is None and window is None:
            del self._kept[(start, length)]
        if layout is not None:
            self.counts.pages(layout.num_pages, layout.num_pages)
        else:
            self.counts.chunks_read_whole += 1
        return got

    def _whole(self, d: ColumnDescriptor, read: tuple[Any, int] | None, sel: RowSelection | None,
               encoded: bool) -> Column | EncodedColumn:
        """The rows of ``sel`` (None: all) of a chunk decoded whole: its bytes and their file offset
        (``read``), or None to read them now (window by window from a local file)."""
        pf, rg, nrows = self.pf, self.rg, self.rows
        meta = pf.chunk_metadata(rg, d)
        if meta.num_values == 0:
            col: Column | EncodedColumn = build_column(d.field, [pf.read_chunk_parts(rg, d)])
            return col if sel is None else take_ranges(col, sel.starts, sel.lengths)
        window = None
        if read is None:
            base, length = pf.chunk_range(meta, rg, d)
            buf, window = pf.open_chunk(base, length)
        else:
            buf, base = read
        if not encoded:
            # the compiled page loop (no GIL from the first page to the last): a sparse selection's
            # rows taken from each page as it decodes, else the whole chunk
            positions = sel.rows() if sel is not None and _sparse(sel.num_rows, nrows) else None
            parts = pf.compiled_chunk(buf, base, window, meta, rg, d, positions=positions)
            if parts is not None:
                col = placed_column(d.field, parts)
                return col if sel is None or positions is not None else take_ranges(col, sel.starts, sel.lengths)
            if window is not None and window.lease is None:  # the compiled loop moved it on: again
                buf, window = pf.open_chunk(base, length)
        if sel is not None and not encoded and _sparse(sel.num_rows, nrows):
            return whole_chunk_rows(pf, rg, d, buf, base, nrows, sel.rows(), window=window)
        col = _rows_of(d, decode_whole_chunk(pf, rg, d, buf, base, nrows, encoded=encoded, window=window))
        return col if sel is None else take_ranges(col, sel.starts, sel.lengths)

    def _selected_pages(self, d: ColumnDescriptor, layout: PageLayout, pages: np.ndarray, got: Any,
                        sel: RowSelection, encoded: bool, *, walked: bool = False) -> Column | EncodedColumn | None:
        """The rows of ``sel`` from data pages ``pages`` (bytes in ``got``), or None (noted) when the pages
        do not stand on their own: a walked chunk then counts every page read, an offset-indexed one the
        pages it selected (as counted before the read). ``encoded``: see :meth:`read_encoded`."""
        # where each range starts inside the decoded pages
        prow = layout.page_rows()
        out_start = np.cumsum(prow[pages]) - prow[pages]
        p0 = np.searchsorted(layout.first_rows, sel.starts, side="right") - 1
        pos = out_start[np.searchsorted(pages, p0)] + (sel.starts - layout.first_rows[p0])
        try:
            if not encoded and _sparse(sel.num_rows, int(prow[pages].sum())):
                col: Column | EncodedColumn = flat_page_rows(self.pf, self.rg, d, layout, pages, got,
                                                             ranges_positions(pos, sel.lengths))
            else:
                col = take_ranges(_rows_of(d, decode_flat_pages(self.pf, self.rg, d, layout, pages, got,
                                                                encoded=encoded)), pos, sel.lengths)
        except PagesDoNotStandAlone as why:
            self.counts.notes.append(f"page-level read of {d.dotted_path} in row group {self.rg} failed ({why}); "
                                     "read the whole chunk")
            self.counts.pages(layout.num_pages, layout.num_pages if walked else len(pages))
            return None
        self.counts.pages(layout.num_pages, len(pages))
        return col

    def _walked(self, d: ColumnDescriptor, buf: Any, base: int, sel: RowSelection,
                encoded: bool) -> Column | EncodedColumn | None:
        """The rows of ``sel`` of a chunk without an OffsetIndex (its bytes ``buf`` from file offset
        ``base``), decoding only the data pages that hold them, found by walking the page headers. None
        when the headers do not tell each page's rows or every page is needed: the caller then decodes
        the whole chunk."""
        meta = self.pf.chunk_metadata(self.rg, d)
        walked = walk_page_headers(buf, base, d, meta.num_values, self.rows)
        if walked is None:
            self.counts.chunks_read_whole += 1
            return None
        layout = PageLayout(walked.first_rows, walked.offsets, walked.sizes, walked.prefix, walked.rows,
                            walked.dictionary_encoded)
        pages = pages_for(layout, sel)
        if len(pages) == layout.num_pages:
            self.counts.pages(layout.num_pages, layout.num_pages)
            return None
        return self._selected_pages(d, layout, pages, slices(buf, base, layout.ranges(pages)), sel, encoded,
                                    walked=True)

    def read_repeated(self, desc: ColumnDescriptor, selection: RowSelection | None) -> RepeatedRows:
        """The levels of repeated leaf ``desc`` over (at least) the rows of ``selection`` (None: all): only
        the pages overlapping it where an OffsetIndex allows (their records checked against it), else the
        whole chunk, decoded once per row group."""
        rg = self.rg
        sel = None if selection is not None and selection.covers(self.rows) else selection
        layout = self._layout(desc, sel)
        if layout is not None and sel is not None:
            pages = pages_for(layout, sel)
            if len(pages) < layout.num_pages:
                want = [r for r in layout.ranges(pages) if r not in self._kept]
                got: dict[tuple[int, int], Any] = dict(zip(want, read_ranges(
                    self.pf.range_reader, want, max_gap=COALESCE_GAP, what="column chunk")))
                got.update(self._kept)
                try:
                    lv = decode_repeated_pages(self.pf, rg, desc, layout, pages, got)
                except PagesDoNotStandAlone as why:
                    self.counts.notes.append(f"page-level read of {desc.dotted_path} in row group {rg} failed "
                                             f"({why}); read the whole chunk")
                else:
                    self.counts.pages(layout.num_pages, len(pages))
                    prow = layout.page_rows()[pages]
                    first = np.repeat(layout.first_rows[pages] - (np.cumsum(prow) - prow), prow)
                    first += np.arange(len(first), dtype=np.int64)
                    return RepeatedRows(lv, first)
        lv_whole = self._levels.get(desc.index)
        if lv_whole is None:
            lv_whole = self._levels[desc.index] = self.pf.read_leaf_levels(rg, desc)
        if layout is not None:
            self.counts.pages(layout.num_pages, layout.num_pages)
        else:
            self.counts.chunks_read_whole += 1
        return RepeatedRows(lv_whole, None)

    def page_columns(self, desc: ColumnDescriptor, selection: RowSelection | None, *,
                     min_pages: int = 2) -> PageColumns | None:
        """The rows of ``selection`` (None: all) of flat column ``desc``, page by page (no whole-chunk
        column is built), or None when the chunk does not qualify: no usable OffsetIndex, a dictionary
        page, fewer than ``min_pages`` pages. Iterating raises :class:`PagesDoNotStandAlone` when a page
        does not hold its rows (the caller then reads the chunk whole); the pages are counted once the
        iteration ends."""
        if desc.max_repetition_level > 0:
            return None
        self._index.load([desc], False)
        layout = self._index.oi.get(desc.index)
        if layout is None or layout.prefix[1] > 0 or layout.num_pages < min_pages:
            return None
        sel = selection if selection is not None else \
            RowSelection(np.array([0], np.int64), np.array([layout.rows], np.int64))
        pages = pages_for(layout, sel)
        return PageColumns(self._iter_pages(desc, layout, pages, sel), layout.num_pages, len(pages))

    def _iter_pages(self, d: ColumnDescriptor, layout: PageLayout, pages: np.ndarray,
                    sel: RowSelection) -> Iterator[tuple[RowSelection, Column]]:
        fr, prow = layout.first_rows, layout.page_rows()
        rngs = [(int(layout.offsets[q]), int(layout.sizes[q])) for q in pages.tolist()]
        # one read per page (concurrent on a remote reader): pages are decoded one at a time, and
        # slicing a coalesced run would copy it
        bufs = self.pf.range_reader.read_many(rngs, what="data page")
        for q, rng, buf in zip(pages.tolist(), rngs, bufs):
            start, count = int(fr[q]), int(prow[q])
            parts = decode_flat_pages(self.pf, self.rg, d, layout, np.array([q]), {rng: buf})
            assert isinstance(parts, ChunkParts)  # (not encoded)
            sub = sel.clip(start, start + count)
            yield sub, take_ranges(build_column(d.field, [parts]), sub.starts - start, sub.lengths)
        self.counts.pages(layout.num_pages, len(pages))  # once every page stood on its own
