"""Late-materialized reads: the rows of a :class:`~pqbloom.scan.selection.RowSelection` of some
columns, decoding only the pages that hold them where an OffsetIndex allows it; a repeated leaf's
elements for evaluation; a one-column predicate evaluated page by page.
"""

from __future__ import annotations

import copy
from collections.abc import Sequence
from dataclasses import dataclass
from dataclasses import field as dc_field
from functools import partial
from typing import TYPE_CHECKING, Any

import numpy as np

from ..errors import CorruptFileError, MemoryLimitError
from ..file.column_reader import ChunkParts, assemble_values, build_column, concat_values, split_nested
from ..file.levels import LeafLevels, check_levels
from ..file.page_walk import walk_page_headers, walk_page_ranges
from ..file.pages import parse_page_header
from ..format import PageType
from ..io import read_ranges
from ..table import Column, column_from_values
from .bind import BoundColumn, BoundFilter, BoundNode
from .evaluate import RepeatedColumn, evaluate
from .explain import Explain
from .selection import COALESCE_GAP, PageIndexCache, PageLayout, RowSelection, pages_for, row_group_rows

if TYPE_CHECKING:
    from ..file.reader import FileReader
    from ..schema import ColumnDescriptor

__all__ = ["read_columns", "read_repeated", "read_repeated_pages", "stream_scan", "take_ranges", "STREAM_MIN_PAGES"]


def take_ranges(col: Column, pos_starts: np.ndarray, lengths: np.ndarray) -> Column:
    """Rows ``[pos_starts[i], pos_starts[i] + lengths[i])`` of ``col``, concatenated."""
    if len(pos_starts) == 1:
        s = int(pos_starts[0])
        if s == 0 and int(lengths[0]) == len(col):
            return col
        return col.slice(s, int(lengths[0]))
    total = int(lengths.sum())
    before = np.cumsum(lengths) - lengths
    idx = np.repeat(pos_starts - before, lengths) + np.arange(total, dtype=np.int64)
    return col.take(idx)


@dataclass
class _ColRead:
    desc: ColumnDescriptor
    whole: bool
    pages: np.ndarray | None = None
    ranges: list[tuple[int, int]] = dc_field(default_factory=list)
    layout: PageLayout | None = None
    walk: bool = False  # find the pages from their headers (no OffsetIndex)


def read_columns(pf: FileReader, rg: int, descs: Sequence[ColumnDescriptor], sel: RowSelection | None,
                 idx: PageIndexCache, ex: Explain) -> dict[str, Column]:
    """Columns holding exactly the rows of ``sel`` (None = all) of row group ``rg``.

    Only the pages overlapping ``sel`` are read where an OffsetIndex allows it, or where the page
    headers of a flat chunk without one tell each page's rows (:mod:`pqbloom.file.page_walk`): from
    a local file they are walked with small reads first, from elsewhere once the chunk is read
    whole (then only decoding is saved). All byte ranges of the row group are fetched in one
    coalesced batch.

    Encrypted files take the same path: their OffsetIndex modules are decrypted and authenticated
    (:meth:`PageIndexCache.load`) and each page read on its own is opened with its ordinal. A read
    of every row of an encrypted file (``sel`` None) opens no page index: it reads the chunks whole,
    and decrypting the indexes would only count pages for the Explain.
    """
    # nested output columns (reader.NestedSelection: structs, lists, maps) are read whole by the reader
    nested_out, descs = split_nested(pf, rg, descs, sel, ex, levels=idx.levels)

    nrows = row_group_rows(pf, rg)
    encrypted = pf.decryption is not None
    if sel is not None and len(sel.starts) == 1 and sel.starts[0] == 0 and sel.ends[0] == nrows:
        sel = None
    if sel is not None or not encrypted:
        idx.load(descs, column_index=False)
    plans: list[_ColRead] = []
    for d in descs:
        layout = idx.oi.get(d.index)
        meta = pf.chunk_metadata(rg, d)
        if meta.num_values == 0:
            plans.append(_ColRead(d, True))
            continue
        start, length = pf.chunk_range(meta, rg, d)
        # without an OffsetIndex, a selection of rows walks the chunk's page headers: before reading
        # the pages where small reads are cheap (a local file), else once the chunk is read
        walk = layout is None and sel is not None and d.max_repetition_level == 0 \
            and not (pf.decryption is not None and pf.decryption.column_encrypted(d))  # headers are modules
        if walk and pf.range_reader.local:
            walk = False
            walked = walk_page_ranges(partial(pf.range_reader.read, what="page header"), start, length, d,
                                      meta.num_values, nrows)
            if walked is not None:
                layout = PageLayout(walked.first_rows, walked.offsets, walked.sizes, walked.prefix, walked.rows,
                                    walked.dictionary_encoded)
        if layout is not None:
            ex.pages_total += layout.num_pages
        if layout is not None and sel is not None:
            pages = pages_for(layout, sel)
            if len(pages) < layout.num_pages:
                plans.append(_ColRead(d, False, pages, layout.ranges(pages), layout))
                ex.pages_read += len(pages)
                ex.pages_skipped += layout.num_pages - len(pages)
                continue
        plans.append(_ColRead(d, True, ranges=[(start, length)], layout=layout, walk=walk))
        if layout is not None:
            ex.pages_read += layout.num_pages
        elif not walk:
            ex.chunks_read_whole += 1
    flat = [r for p in plans for r in p.ranges if r not in idx.kept]
    got_ranges = dict(zip(flat, read_ranges(pf.range_reader, flat, max_gap=COALESCE_GAP, what="column chunk")))
    got_ranges.update(idx.kept)
    out: dict[str, Column] = dict(nested_out)
    for p in plans:
        d = p.desc
        pieces = [got_ranges[r] for r in p.ranges]
        parts: ChunkParts | None = None
        if not p.whole:
            assert p.layout is not None and p.pages is not None and sel is not None
            col = _decode_pages(pf, rg, d, p.layout, p.pages, pieces, p.ranges[0][0], sel)
            if col is not None:
                out[d.dotted_path] = col
                continue
            ex.notes.append(f"page-level read of {d.dotted_path} in row group {rg} failed; read the whole chunk")
        elif p.walk and pieces:
            assert sel is not None
            col = _walked_pages(pf, rg, d, pieces[0], p.ranges[0][0], sel, ex)
            if col is not None:
                out[d.dotted_path] = col
                continue
        if p.whole and pieces:
            try:
                got = pf.decode_chunk(pieces[0], p.ranges[0][0], pf.chunk_metadata(rg, d), rg, d)
                parts = got if got.num_rows == nrows else None
            except (MemoryError, MemoryLimitError):  # memory, not a reason to retry: it would fail again
                raise
            except Exception:  # noqa: BLE001 - the checked path below re-reads and reports properly
                parts = None
        if parts is None:
            parts = pf.read_chunk_parts(rg, d)
        col = build_column(d.field, [parts])
        out[d.dotted_path] = col if sel is None else take_ranges(col, sel.starts, sel.lengths)
    return out


def _decode_pages(pf: FileReader, rg: int, d: ColumnDescriptor, layout: PageLayout, pages: np.ndarray,
                  pieces: Sequence[bytes | memoryview], base: int, sel: RowSelection) -> Column | None:
    """The rows of ``sel`` from data pages ``pages`` of ``layout`` (``pieces``: the dictionary page,
    when there is one, then those pages' bytes, from file offset ``base``), or None when they do not
    decode on their own into exactly their rows (the caller then decodes the whole chunk)."""
    prow = layout.page_rows()
    want = int(prow[pages].sum())
    try:
        meta = copy.copy(pf.chunk_metadata(rg, d))
        meta.num_values = want
        got = pf.decode_chunk(b"".join(pieces), base, meta, rg, d, page_ordinals=pages.tolist())
        if got.num_rows != want:
            return None
    except (MemoryError, MemoryLimitError):  # memory, not a reason to retry: it would fail again
        raise
    except Exception:  # noqa: BLE001 - fall back to the whole chunk
        return None
    # where each range starts inside the decoded pages
    out_start = np.cumsum(prow[pages]) - prow[pages]
    p0 = np.searchsorted(layout.first_rows, sel.starts, side="right") - 1
    slot = np.searchsorted(pages, p0)
    pos = out_start[slot] + (sel.starts - layout.first_rows[p0])
    return take_ranges(build_column(d.field, [got]), pos, sel.lengths)


def _walked_pages(pf: FileReader, rg: int, d: ColumnDescriptor, buf: bytes, base: int, sel: RowSelection,
                  ex: Explain) -> Column | None:
    """The rows of ``sel`` of a chunk without an OffsetIndex (its bytes ``buf`` from file offset
    ``base``), decoding only the data pages that hold them, found by walking the page headers
    (:func:`pqbloom.file.page_walk.walk_page_headers`). None when the headers do not tell each
    page's rows, every page is needed, or the pages do not decode on their own: the caller then
    decodes the whole chunk as it would without the walk."""
    meta = pf.chunk_metadata(rg, d)
    walked = walk_page_headers(buf, base, d, meta.num_values, row_group_rows(pf, rg))
    if walked is None:
        ex.chunks_read_whole += 1
        return None
    layout = PageLayout(walked.first_rows, walked.offsets, walked.sizes, walked.prefix, walked.rows,
                        walked.dictionary_encoded)
    ex.pages_total += layout.num_pages
    pages = pages_for(layout, sel)
    if len(pages) < layout.num_pages:
        mv = memoryview(buf)
        rngs = layout.ranges(pages)
        col = _decode_pages(pf, rg, d, layout, pages, [mv[o - base:o - base + n] for o, n in rngs], rngs[0][0], sel)
        if col is not None:
            ex.pages_read += len(pages)
            ex.pages_skipped += layout.num_pages - len(pages)
            return col
        ex.notes.append(f"page-level read of {d.dotted_path} in row group {rg} failed; read the whole chunk")
    ex.pages_read += layout.num_pages
    return None


def read_repeated(pf: FileReader, rg: int, bc: BoundColumn, sel: RowSelection | None, idx: PageIndexCache,
                  ex: Explain) -> RepeatedColumn:
    """The elements of repeated leaf ``bc`` in the rows of ``sel`` (None = all) of row group ``rg``.

    With a usable OffsetIndex only the pages overlapping ``sel`` are read; they must begin at
    records (checked against the decoded repetition levels), else the whole chunk is read.
    """
    d = bc.desc
    nrows = row_group_rows(pf, rg)
    if sel is not None and len(sel.starts) == 1 and sel.starts[0] == 0 and sel.ends[0] == nrows:
        sel = None
    if sel is not None or pf.decryption is None:  # as read_columns: every row of an encrypted file, no index
        idx.load([d], column_index=False)
    layout = idx.oi.get(d.index)
    if layout is not None:
        ex.pages_total += layout.num_pages
    lv: LeafLevels | None = None
    first: np.ndarray | None = None  # absolute row of each decoded record, when not 0..nrows-1
    if layout is not None and sel is not None:
        pages = pages_for(layout, sel)
        if len(pages) < layout.num_pages:
            got = read_repeated_pages(pf, rg, d, layout, pages, idx)
            if got is not None:
                lv = got
                prow = layout.page_rows()[pages]
                first = np.repeat(layout.first_rows[pages] - (np.cumsum(prow) - prow), prow)
                first += np.arange(len(first), dtype=np.int64)
                ex.pages_read += len(pages)
                ex.pages_skipped += layout.num_pages - len(pages)
            else:
                ex.notes.append(f"page-level read of {d.dotted_path} in row group {rg} failed; read the whole chunk")
    if lv is None:
        lv = idx.levels.get(d.index)
        if lv is None:
            lv = idx.levels[d.index] = pf.read_leaf_levels(rg, d)
        if layout is not None:
            ex.pages_read += layout.num_pages
        else:
            ex.chunks_read_whole += 1
    assert lv.reps is not None and lv.defs is not None  # a repeated leaf has both levels
    # the decoded record of each level entry, then its position in the selected rows (-1: not selected)
    rec = np.cumsum(lv.reps == 0) - 1
    records = int(rec[-1]) + 1 if len(rec) else 0
    want = nrows if first is None else len(first)
    if records != want:  # a corrupt chunk: its records would land outside the row group
        raise CorruptFileError(f"column holds {records} records where {want} rows are expected", row_group=rg,
                               column=d.dotted_path)
    if sel is not None:
        pos = np.full(nrows, -1, np.int64)
        pos[sel.absolute(np.arange(sel.num_rows, dtype=np.int64))] = np.arange(sel.num_rows, dtype=np.int64)
        rec = pos[rec if first is None else first[rec]]
    defs = lv.defs
    is_value = defs == bc.max_def
    value_rows = rec[is_value]
    null_rows = rec[(defs >= bc.elem_def) & ~is_value]
    values = Column(bc.field.with_nullable(True), lv.values, None)
    if sel is not None:
        keep = value_rows >= 0
        if not keep.all():
            values = values.take(np.flatnonzero(keep))
            value_rows = value_rows[keep]
        null_rows = null_rows[null_rows >= 0]
    return RepeatedColumn(values, value_rows, null_rows)


def read_repeated_pages(pf: FileReader, rg: int, d: ColumnDescriptor, layout: PageLayout, pages: np.ndarray,
                        idx: PageIndexCache) -> LeafLevels | None:
    """LeafLevels of the data pages ``pages`` of a repeated leaf (with the dictionary page), or None
    when they do not decode on their own or do not hold exactly their OffsetIndex rows."""
    rngs = [layout.prefix] if layout.prefix[1] > 0 else []
    rngs += [(layout.offsets[q], layout.sizes[q]) for q in pages.tolist()]
    want = [r for r in rngs if r not in idx.kept]
    got = dict(zip(want, read_ranges(pf.range_reader, want, max_gap=COALESCE_GAP, what="column chunk")))
    got.update(idx.kept)
    prow = layout.page_rows()[pages]
    dec = pf.decryption if pf.decryption is not None and pf.decryption.column_encrypted(d) else None
    try:
        # each page header tells how many level entries it holds
        counts = []
        for q in pages.tolist():
            h, _ = parse_page_header(got[(layout.offsets[q], layout.sizes[q])], 0, offset=int(layout.offsets[q]),
                                     decryption=dec, rg=rg, desc=d, page_ordinal=q)
            dp = h.data_page_header if h.type == PageType.DATA_PAGE else h.data_page_header_v2
            if dp is None or dp.num_values is None or dp.num_values < 1:
                return None
            counts.append(int(dp.num_values))
        meta = copy.copy(pf.chunk_metadata(rg, d))
        meta.num_values = sum(counts)
        parts: list[tuple[str, Any]] = []
        defs_l: list[np.ndarray] = []
        reps_l: list[np.ndarray] = []
        dictionary = None
        buf = b"".join(got[r] for r in rngs)
        for kind, vals, (defs, reps), page_dictionary in pf.iter_pages(buf, rngs[0][0], meta, rg, d, levels=True,
                                                                       page_ordinals=pages.tolist()):
            dictionary = page_dictionary
            parts.append((kind, vals))
            defs_l.append(defs)
            reps_l.append(reps)
        if len(reps_l) != len(counts):
            return None
        values = concat_values(assemble_values(d.field, parts, None, dictionary, meta.num_values).pieces, d.field)
        defs_all, reps_all = np.concatenate(defs_l), np.concatenate(reps_l)
        check_levels(d, defs_all, reps_all, meta.num_values)
        # every page must begin a record and hold exactly the rows the OffsetIndex gives it
        starts = np.cumsum(counts) - np.array(counts)
        recs = np.add.reduceat((reps_all == 0).astype(np.int64), starts)
        if bool((reps_all[starts] != 0).any()) or not np.array_equal(recs, prow):
            return None
    except (MemoryError, MemoryLimitError):  # memory, not a reason to retry: it would fail again
        raise
    except Exception:  # noqa: BLE001 - the whole-chunk path re-reads and reports properly
        return None
    return LeafLevels(values, defs_all, reps_all, meta.num_values)


STREAM_MIN_PAGES = 2


def stream_scan(bound: BoundFilter, rg: int, node: BoundNode, scan: RowSelection | None, idx: PageIndexCache,
                ex: Explain) -> tuple[np.ndarray, Column, int] | None:
    """Evaluate a one-column predicate page by page (no whole-chunk column is built).

    Returns (matching rows, the predicate column at those rows, rows evaluated), or None when the
    chunk does not qualify (no usable OffsetIndex, a dictionary, few pages) or a page
    fails to decode on its own (the caller then takes the whole-chunk path, which reports errors).
    """
    pf = bound.pf
    if len(bound.cols) != 1:
        return None
    d = next(iter(bound.cols.values())).desc
    if d.max_repetition_level > 0:
        return None
    idx.load([d], column_index=False)
    layout = idx.oi.get(d.index)
    if layout is None or layout.prefix[1] > 0 or layout.num_pages < STREAM_MIN_PAGES:
        return None
    nrows = layout.rows
    sel = scan if scan is not None else RowSelection(np.array([0], np.int64), np.array([nrows], np.int64))
    pages = pages_for(layout, sel)
    meta0 = pf.chunk_metadata(rg, d)
    prow = layout.page_rows()
    fr = layout.first_rows
    # one read per page (concurrent on a remote reader): pages are decoded one at a time, and slicing a
    # coalesced run would copy it
    bufs = pf.range_reader.read_many([(int(layout.offsets[q]), int(layout.sizes[q])) for q in pages.tolist()],
                                     what="data page")
    hits: list[np.ndarray] = []
    cols: list[Column] = []
    scanned = 0
    for q, buf in zip(pages.tolist(), bufs):
        start, count = int(fr[q]), int(prow[q])
        try:
            meta = copy.copy(meta0)
            meta.num_values = count
            parts = pf.decode_chunk(buf, layout.offsets[q], meta, rg, d, page_ordinals=[q])
        except (MemoryError, MemoryLimitError):  # memory, not a reason to retry: it would fail again
            raise
        except Exception:  # noqa: BLE001 - the whole-chunk path re-reads and reports properly
            return None
        if parts.num_rows != count:
            return None
        col = build_column(d.field, [parts])
        s0 = np.clip(sel.starts, start, start + count)
        e0 = np.clip(sel.ends, start, start + count)
        keep = e0 > s0
        sub = RowSelection(s0[keep], e0[keep])
        part = take_ranges(col, sub.starts - start, sub.lengths)
        m = sub.num_rows
        scanned += m
        t, _ = evaluate(node, {d.dotted_path: part}, m)
        local = np.flatnonzero(t)
        if len(local):
            hits.append(sub.absolute(local))
            cols.append(part.take(local))
    ex.pages_total += layout.num_pages
    ex.pages_read += len(pages)
    ex.pages_skipped += layout.num_pages - len(pages)
    if not hits:
        return np.zeros(0, np.int64), column_from_values(d.field.name, [], d.field), scanned
    return np.concatenate(hits), (cols[0] if len(cols) == 1 else Column.concat(cols)), scanned
