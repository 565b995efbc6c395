"""Decoding some data pages of a column chunk: the pages a :class:`~pqbloom.file.selection.PageLayout`
places (from an OffsetIndex or a walk of the page headers), with the chunk's dictionary page when they
need it and with their page ordinals (an encrypted page's AAD binds its ordinal).

The pages are first checked to stand on their own: each header parses where the layout puts it, is a
data page filling exactly its layout entry and (for a flat column) holds exactly the layout's rows, and
what precedes them is one dictionary page. When they do not, :class:`~pqbloom.file.selection.PagesDoNotStandAlone`
says so and the caller reads the whole chunk. A repeated leaf's rows are known only once its
repetition levels are decoded: its pages must each begin a record and hold the layout's rows, checked
after decoding, with the same outcome. Once the pages stand on their own, whatever fails in decoding
them is the file's: it raises the typed error a whole-chunk read raises, naming row group and column.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from ..errors import CorruptFileError, ParquetError
from ..format import PageType
from ..schema import ColumnDescriptor
from ..table import Column
from .chunk_window import ChunkBytes, ChunkWindow
from .chunks import ChunkAccess
from .column_reader import DECODE_FAILURES, ChunkParts, assemble_values, collect_rows, concat_values, located_error
from .encoded_column import EncodedColumn, collect_encoded
from .levels import LeafLevels, check_levels
from .pages import flat_page_header, page_header_fields, parse_page_header
from .selection import PageLayout, PagesDoNotStandAlone

__all__ = ["page_value_counts", "decode_flat_pages", "flat_page_rows", "decode_repeated_pages", "decode_whole_chunk",
           "whole_chunk_rows", "decoded_rows"]

_DATA_PAGE, _DATA_PAGE_V2, _DICTIONARY_PAGE = int(PageType.DATA_PAGE), int(PageType.DATA_PAGE_V2), \
    int(PageType.DICTIONARY_PAGE)

Ranges = Mapping[tuple[int, int], ChunkBytes]  # bytes read, by (file offset, length)


def _header(pf: ChunkAccess, rg: int, d: ColumnDescriptor, buf: ChunkBytes, offset: int, ordinal: int, *,
            dictionary: bool = False) -> tuple[Any, ...]:
    """The flat header of the page at the start of ``buf`` (PagesDoNotStandAlone when none parses)."""
    dec = pf.decryption if pf.decryption is not None and pf.decryption.column_encrypted(d) else None
    try:
        if dec is None:
            return page_header_fields(buf, 0, offset=offset)
        header, end = parse_page_header(buf, 0, offset=offset, decryption=dec, rg=rg, desc=d, page_ordinal=ordinal,
                                        first=dictionary, dictionary_hint=dictionary)
        return flat_page_header(header, end)
    except CorruptFileError:
        raise PagesDoNotStandAlone(f"no page header at offset {offset}") from None


def page_value_counts(pf: ChunkAccess, rg: int, d: ColumnDescriptor, layout: PageLayout, pages: np.ndarray,
                      got: Ranges) -> list[int]:
    """The values (level entries) of each of data pages ``pages``, from their headers, once they are
    checked to stand on their own (see the module docstring; a repeated leaf's rows are checked later).
    Raises :class:`PagesDoNotStandAlone`."""
    flat = d.max_repetition_level == 0
    prow = layout.page_rows()
    if layout.needs_prefix(pages):
        off, size = layout.prefix
        end, ptype, _, csize = _header(pf, rg, d, got[layout.prefix], off, 0, dictionary=True)[:4]
        if ptype != _DICTIONARY_PAGE or csize is None or end + csize != size:
            raise PagesDoNotStandAlone("what precedes the first data page is not one dictionary page")
    counts = []
    for q in pages.tolist():
        off, size = layout.offsets[q], layout.sizes[q]
        end, ptype, _, csize, _, dp, _, dp2 = _header(pf, rg, d, got[(off, size)], off, q)
        if csize is None or end + csize != size:
            raise PagesDoNotStandAlone(f"data page {q} does not fill its entry of the layout")
        if ptype == _DATA_PAGE and dp is not None:
            n, rows = dp[0], dp[0] if flat else None
        elif ptype == _DATA_PAGE_V2 and dp2 is not None:
            n, rows = dp2[0], dp2[2]
            if flat and n != rows:
                raise PagesDoNotStandAlone(f"data page {q} holds {n} values in {rows} rows")
        else:
            raise PagesDoNotStandAlone(f"page {q} of the layout is not a data page")
        if n is None or n < 1 or (rows is not None and rows != int(prow[q])):
            raise PagesDoNotStandAlone(f"data page {q} does not hold the rows the layout gives it")
        counts.append(int(n))
    return counts


def _joined(layout: PageLayout, pages: np.ndarray, got: Ranges) -> tuple[bytes, int]:
    """The bytes of data pages ``pages`` (after the dictionary page when they need it), one after the
    other as :func:`pqbloom.file.pages.iter_pages` walks them, and the file offset they start at."""
    rngs = layout.ranges(pages)
    return b"".join(got[r] for r in rngs), rngs[0][0]


def _decode(pf: ChunkAccess, rg: int, d: ColumnDescriptor, buf: ChunkBytes, base: int, encoded: bool,
            page_ordinals: Sequence[int] | None = None, num_values: int | None = None,
            window: ChunkWindow | None = None) -> ChunkParts | EncodedColumn:
    """``pf.decode_chunk`` of the bytes (the first window of ``window`` when given), or with ``encoded``
    the rows of a chunk with dictionary pages as an :class:`~pqbloom.file.encoded_column.EncodedColumn`
    (its dictionary pages left unexpanded)."""
    meta = pf.chunk_metadata(rg, d)
    try:
        if not encoded:
            return pf.decode_chunk(buf, base, meta, rg, d, window, page_ordinals=page_ordinals, num_values=num_values)
        pages = pf.iter_pages(buf, base, meta, rg, d, page_ordinals=page_ordinals, num_values=num_values,
                              window=window)
        return collect_encoded(pages, d.field, d.max_definition_level > 0,
                               meta.num_values if num_values is None else num_values)
    except (ParquetError, *DECODE_FAILURES) as exc:
        raise located_error(exc, rg, d) from None


def _decode_rows(pf: ChunkAccess, rg: int, d: ColumnDescriptor, buf: ChunkBytes, base: int, positions: np.ndarray,
                 rows: int, page_ordinals: Sequence[int] | None = None, num_values: int | None = None,
                 window: ChunkWindow | None = None) -> Column:
    """The rows at ``positions`` of the pages in ``buf`` (holding ``rows`` rows; the first window of
    ``window`` when given), each page's taken as it is decoded
    (:func:`~pqbloom.file.column_reader.collect_rows`)."""
    try:
        pages = pf.iter_pages(buf, base, pf.chunk_metadata(rg, d), rg, d, views=True, page_ordinals=page_ordinals,
                              num_values=num_values, window=window, full_flags=False)
        return collect_rows(pages, d.field, positions, rows)
    except (ParquetError, *DECODE_FAILURES) as exc:
        raise located_error(exc, rg, d) from None


def decoded_rows(parts: ChunkParts | EncodedColumn) -> int:
    """The rows a decoded chunk (or run of its pages) holds."""
    return len(parts) if isinstance(parts, EncodedColumn) else parts.num_rows


def decode_flat_pages(pf: ChunkAccess, rg: int, d: ColumnDescriptor, layout: PageLayout, pages: np.ndarray,
                      got: Ranges, *, encoded: bool = False) -> ChunkParts | EncodedColumn:
    """Data pages ``pages`` of a flat chunk (their bytes, and the dictionary page's when needed, in
    ``got``) decoded into value pieces and presence flags of exactly their rows (``encoded``: as codes into
    the dictionary when some page uses it, see :func:`_decode`)."""
    want = sum(page_value_counts(pf, rg, d, layout, pages, got))
    buf, base = _joined(layout, pages, got)
    parts = _decode(pf, rg, d, buf, base, encoded, pages.tolist(), want)
    rows = decoded_rows(parts)
    if rows != want:  # (the headers were checked: a decoder that disagrees is the file's problem)
        raise CorruptFileError(f"pages decoded to {rows} rows where their headers give {want}",
                               row_group=rg, column=d.dotted_path)
    return parts


def flat_page_rows(pf: ChunkAccess, rg: int, d: ColumnDescriptor, layout: PageLayout, pages: np.ndarray,
                   got: Ranges, positions: np.ndarray) -> Column:
    """The rows at ``positions`` (counted from the first row of data pages ``pages`` of a flat chunk) as
    a column, each page's rows taken as it is decoded: :func:`decode_flat_pages` for a sparse selection."""
    want = sum(page_value_counts(pf, rg, d, layout, pages, got))
    buf, base = _joined(layout, pages, got)
    return _decode_rows(pf, rg, d, buf, base, positions, want, pages.tolist(), want)


def decode_repeated_pages(pf: ChunkAccess, rg: int, d: ColumnDescriptor, layout: PageLayout, pages: np.ndarray,
                          got: Ranges) -> LeafLevels:
    """Data pages ``pages`` of a repeated leaf decoded with their levels; each must begin a record and
    hold exactly the rows the layout gives it (else :class:`PagesDoNotStandAlone`)."""
    counts = page_value_counts(pf, rg, d, layout, pages, got)
    n = sum(counts)
    buf, base = _joined(layout, pages, got)
    parts: list[tuple[str, object]] = []
    defs_l: list[np.ndarray] = []
    reps_l: list[np.ndarray] = []
    dictionary = None
    try:
        for kind, vals, (defs, reps), page_dictionary in pf.iter_pages(
                buf, base, pf.chunk_metadata(rg, d), rg, d, levels=True, page_ordinals=pages.tolist(), num_values=n):
            dictionary = page_dictionary
            parts.append((kind, vals))
            defs_l.append(defs)
            reps_l.append(reps)
        values = concat_values(assemble_values(d.field, parts, None, dictionary, n).pieces, d.field)
        defs_all, reps_all = np.concatenate(defs_l), np.concatenate(reps_l)
    except (ParquetError, *DECODE_FAILURES) as exc:
        raise located_error(exc, rg, d) from None
    if len(reps_l) != len(counts) or len(reps_all) != n:
        raise PagesDoNotStandAlone("the pages decoded to other page boundaries than their headers give")
    # every page must begin a record and hold exactly the rows the layout gives it
    starts = np.cumsum(counts) - np.array(counts)
    recs = np.add.reduceat((reps_all == 0).astype(np.int64), starts)
    if bool((reps_all[starts] != 0).any()) or not np.array_equal(recs, layout.page_rows()[pages]):
        raise PagesDoNotStandAlone("a page does not begin a record or holds other rows than the layout gives it")
    try:
        check_levels(d, defs_all, reps_all, n)
    except (ParquetError, *DECODE_FAILURES) as exc:
        raise located_error(exc, rg, d) from None
    return LeafLevels(values, defs_all, reps_all, n)


def whole_chunk_rows(pf: ChunkAccess, rg: int, d: ColumnDescriptor, buf: ChunkBytes, base: int, rows: int,
                     positions: np.ndarray, *, window: ChunkWindow | None = None) -> Column:
    """The rows at ``positions`` of a flat chunk holding ``rows`` rows (its bytes read from file offset
    ``base``; the first window of ``window`` when given: :meth:`~pqbloom.file.chunks.ChunkAccess.open_chunk`),
    each page's rows taken as it is decoded: :func:`decode_whole_chunk` for a sparse selection."""
    return _decode_rows(pf, rg, d, buf, base, positions, rows, window=window)


def decode_whole_chunk(pf: ChunkAccess, rg: int, d: ColumnDescriptor, buf: ChunkBytes, base: int,
                       rows: int, *, encoded: bool = False, window: ChunkWindow | None = None) -> ChunkParts | EncodedColumn:
    """A flat chunk's bytes (read from file offset ``base``; the first window of ``window`` when given)
    decoded, holding exactly ``rows`` rows: what :meth:`~pqbloom.file.chunks.ChunkAccess.read_chunk_parts`
    does (``encoded``: as codes into the dictionary when some page uses it, see :func:`_decode`)."""
    parts = _decode(pf, rg, d, buf, base, encoded, window=window)
    got = decoded_rows(parts)
    if got != rows:
        raise CorruptFileError(f"column has {got} rows but the row group has {rows}",
                               row_group=rg, column=d.dotted_path)
    return parts


def slices(buf: ChunkBytes, base: int, ranges: Sequence[tuple[int, int]]) -> dict[tuple[int, int], memoryview]:
    """Views of ``ranges`` (file offsets) of ``buf``, the bytes read from file offset ``base``."""
    mv = memoryview(buf)
    return {(o, n): mv[o - base:o - base + n] for o, n in ranges}
