"""The filter engine's side of late materialization: the file layer reads rows
(:class:`~pqbloom.file.RowGroupReader`: page selection, IO and decoding of a
:class:`~pqbloom.file.RowSelection`), this module turns what it returns into what evaluation needs: a
repeated leaf's elements per row (:func:`read_repeated`), a one-column predicate evaluated page by page
(:func:`stream_scan`), a one-column predicate over a dictionary-encoded chunk mapped to the rows from the
pages' index bytes (:func:`dictionary_scan`).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from ..errors import CorruptFileError
from ..file import DictionaryHits, PagesDoNotStandAlone, RowGroupReader, RowSelection
from ..table import Column, column_from_values
from .bind import BoundColumn, BoundFilter, BoundNode
from .evaluate import RepeatedColumn, entry_truth, matches

__all__ = ["read_repeated", "stream_scan", "dictionary_scan", "STREAM_MIN_PAGES"]


def read_repeated(reader: RowGroupReader, bc: BoundColumn, sel: RowSelection | None) -> RepeatedColumn:
    """The elements of repeated leaf ``bc`` in the rows of ``sel`` (None = all) of the reader's row group.

    With a usable OffsetIndex only the pages overlapping ``sel`` are read; they must begin at
    records (checked against the decoded repetition levels), else the whole chunk is read.
    """
    d = bc.desc
    nrows = reader.rows
    if sel is not None and sel.covers(nrows):
        sel = None
    got = reader.read_repeated(d, sel)
    lv, first = got.levels, got.first_rows
    assert lv.reps is not None and lv.defs is not None  # a repeated leaf has both levels
    # the decoded record of each level entry, then its position in the selected rows (-1: not selected)
    rec = np.cumsum(lv.reps == 0) - 1
    records = int(rec[-1]) + 1 if len(rec) else 0
    want = nrows if first is None else len(first)
    if records != want:  # a corrupt chunk: its records would land outside the row group
        raise CorruptFileError(f"column holds {records} records where {want} rows are expected", row_group=reader.rg,
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


STREAM_MIN_PAGES = 2


def stream_scan(bound: BoundFilter, reader: RowGroupReader, node: BoundNode,
                scan: RowSelection | None) -> tuple[np.ndarray, Column, int] | None:
    """Evaluate a one-column predicate page by page (no whole-chunk column is built).

    Returns (matching rows, the predicate column at those rows, rows evaluated), or None when the
    chunk does not qualify (not one flat column, no usable OffsetIndex, a dictionary, few pages) or its
    pages do not stand on their own (the caller then takes the whole-chunk path).
    """
    if len(bound.cols) != 1:
        return None
    d = next(iter(bound.cols.values())).desc
    pages = reader.page_columns(d, scan, min_pages=STREAM_MIN_PAGES)
    if pages is None:
        return None
    hits: list[np.ndarray] = []
    cols: list[Column] = []
    scanned = 0
    try:
        for sub, part in pages.pages:
            m = sub.num_rows
            scanned += m
            local = np.flatnonzero(matches(node, {d.dotted_path: part}, m))
            if len(local):
                hits.append(sub.absolute(local))
                cols.append(part.take(local))
    except PagesDoNotStandAlone:
        return None
    if not hits:
        return np.zeros(0, np.int64), column_from_values(d.field.name, [], d.field), scanned
    return np.concatenate(hits), (cols[0] if len(cols) == 1 else Column.concat(cols)), scanned


def dictionary_scan(bound: BoundFilter, reader: RowGroupReader, node: BoundNode, dictionary: Any,
                    known: Mapping[int, tuple[np.ndarray, np.ndarray]] | None,
                    same_dictionary: Any) -> tuple[DictionaryHits, bool] | None:
    """Evaluate a one-column predicate over a chunk whose every data page is dictionary-encoded, once per
    dictionary entry, and find the matching rows from the pages' index bytes
    (:meth:`~pqbloom.file.RowGroupReader.read_dictionary_hits`): no index per row, no lookup per row.

    ``dictionary``: the chunk's dictionary as pruning read it (None: not read, the chunk does not
    qualify); ``known``: the truths of leaves pruning found on it (by ``id`` of leaf), used when
    ``same_dictionary(dictionary the read decodes)`` says it is the same. Returns (the hits, whether
    null rows match too), or None when the chunk does not qualify (not one flat column, more entries
    than rows, a page of another encoding): the caller then reads the chunk as codes."""
    if dictionary is None or len(bound.cols) != 1:
        return None
    bc = next(iter(bound.cols.values()))
    if bc.repeated or len(dictionary) > reader.rows:  # more entries than rows: decoding the rows is cheaper
        return None
    null_match = [False]

    def hits_of(entries: Any) -> np.ndarray | None:
        if len(entries) > reader.rows:
            return None
        col = Column(bc.desc.field.with_nullable(True), entries, None)
        truth = entry_truth(node, col, bc.name, known if same_dictionary(entries) else None)
        null_match[0] = bool(truth[-1])
        return np.flatnonzero(truth[:-1])

    got = reader.read_dictionary_hits(bc.desc, hits_of)
    return None if got is None else (got, null_match[0])
