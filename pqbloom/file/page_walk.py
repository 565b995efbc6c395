"""Where the data pages of a flat column chunk are and which rows each covers, from the page
headers alone (no decompression, no decoding): what an OffsetIndex would say, for chunks written
without one (pyarrow's default files).

A filtered read uses it to decode only the pages holding selected rows
(:meth:`pqbloom.file.row_reads.RowGroupReader.read_rows`). The walk answers only when the headers are consistent
with the footer; anything else returns None and the caller decodes the whole chunk as before.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from ..encodings import is_dictionary_encoding
from ..errors import CorruptFileError
from ..format import PageType
from ..schema import ColumnDescriptor
from .pages import parse_page_header

__all__ = ["WalkedPages", "walk_page_headers", "walk_page_ranges", "HEADER_WINDOW", "MAX_HEADER"]


@dataclass
class WalkedPages:
    """Data pages of one chunk found by walking its page headers (file offsets, header included)."""

    first_rows: np.ndarray  # first row of each data page, strictly increasing from 0
    offsets: list[int]
    sizes: list[int]
    prefix: tuple[int, int]  # (offset, length) of the dictionary page, length 0 without one
    rows: int
    dictionary_encoded: np.ndarray  # whether each data page's values need the dictionary page


HEADER_WINDOW = 1024  # bytes read at a page's start for its header when walking by ranged reads
MAX_HEADER = 1 << 20  # a header longer than this (huge statistics) ends a ranged walk: read the chunk whole


def walk_page_headers(buf: bytes, base: int, desc: ColumnDescriptor, num_values: int | None,
                      rows: int) -> WalkedPages | None:
    """The data pages of the flat, unencrypted chunk ``buf`` (its bytes, read from file offset
    ``base``), or None when their rows cannot be known from the headers alone.

    ``num_values`` is the chunk's value count from the footer and ``rows`` the row group's. A flat
    column holds one value (or null) per row, so a v1 page covers ``num_values`` rows and a v2 page
    ``num_rows`` (which must agree with its ``num_values``). None when: the column is repeated (its
    rows are known only from repetition levels), the chunk's count is not the row group's, a header
    does not parse or a page runs past the chunk, a dictionary page comes after a data page or twice,
    a page of another type or with no rows appears, the pages' rows do not add up to exactly
    ``rows``, or bytes follow the last page.
    """
    return walk_page_ranges(_no_read, base, len(buf), desc, num_values, rows, first_window=bytes(buf))


def _no_read(offset: int, length: int) -> bytes:  # pragma: no cover - the first window holds the whole chunk
    raise AssertionError("the whole chunk is in memory")


def walk_page_ranges(read: Callable[[int, int], bytes], start: int, length: int, desc: ColumnDescriptor,
                     num_values: int | None, rows: int, *, first_window: bytes = b"") -> WalkedPages | None:
    """:func:`walk_page_headers` of the chunk at file offset ``start`` (``length`` bytes), reading only
    its page headers: ``read(offset, n)`` returns ``n`` bytes of the file, called with windows of
    :data:`HEADER_WINDOW` bytes at page starts (larger while a header is cut short, up to
    :data:`MAX_HEADER`). ``first_window`` holds bytes already read from ``start``. Once the windows
    add up to an eighth of the chunk (small pages), the rest of the chunk is read in one request: the
    walk never reads much more than the chunk itself."""
    if desc.max_repetition_level > 0 or num_values is None or num_values != rows or rows <= 0 or length <= 0:
        return None
    first: list[int] = []
    encoded: list[bool] = []
    offsets: list[int] = []
    sizes: list[int] = []
    prefix = (start, 0)
    seen = 0
    pos = start
    end = start + length
    wbuf, woff = first_window[:length], start  # bytes of the file from woff
    budget = length // 8  # bytes of header windows before reading the rest of the chunk at once
    fetched = 0
    try:
        while seen < rows:
            if pos >= end:
                return None
            # the header at pos, from the current window or a new one read at pos
            size = HEADER_WINDOW
            while True:
                if woff <= pos < woff + len(wbuf):
                    try:
                        header, hend = parse_page_header(wbuf, pos - woff, offset=pos)
                        break
                    except CorruptFileError:
                        if woff + len(wbuf) >= end or len(wbuf) >= MAX_HEADER:
                            return None  # cut short by the chunk itself, or no header: not ours to judge
                        size = max(size, len(wbuf) * 16) if woff == pos else size
                n = min(size, end - pos)
                if fetched + n > budget:
                    n = end - pos
                fetched += n
                wbuf, woff = read(pos, n), pos
                if len(wbuf) != n:
                    return None
            body = woff + hend
            csize = header.compressed_page_size
            if csize is None or csize < 0 or body + csize > end:
                return None
            ptype = header.type
            if ptype == PageType.DICTIONARY_PAGE:
                if offsets or prefix[1] > 0:
                    return None
                prefix = (pos, body + csize - pos)
            elif ptype == PageType.DATA_PAGE:
                dp = header.data_page_header
                n_rows = dp.num_values if dp is not None else None
                if n_rows is None or n_rows <= 0:
                    return None
                first.append(seen)
                encoded.append(is_dictionary_encoding(dp.encoding))
                offsets.append(pos)
                sizes.append(body + csize - pos)
                seen += n_rows
            elif ptype == PageType.DATA_PAGE_V2:
                dp2 = header.data_page_header_v2
                if dp2 is None or dp2.num_rows is None or dp2.num_rows <= 0 or dp2.num_values != dp2.num_rows:
                    return None
                first.append(seen)
                encoded.append(is_dictionary_encoding(dp2.encoding))
                offsets.append(pos)
                sizes.append(body + csize - pos)
                seen += dp2.num_rows
            else:
                return None
            pos = body + csize
    except CorruptFileError:  # a read past the file: the whole-chunk path reports it
        return None
    if seen != rows or pos != end or not offsets:
        return None
    return WalkedPages(np.array(first, np.int64), offsets, sizes, prefix, rows, np.array(encoded, bool))
