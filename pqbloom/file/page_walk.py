"""Where the data pages of a flat column chunk are and which rows each covers, from the page
headers alone (no decompression, no decoding): what an OffsetIndex would say, for chunks written
without one (pyarrow's default files).

A filtered read uses it to decode only the pages holding selected rows
(:func:`pqbloom.scan.read.read_columns`). The walk answers only when the headers are consistent
with the footer; anything else returns None and the caller decodes the whole chunk as before.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..errors import CorruptFileError
from ..format import PageType
from ..schema import ColumnDescriptor
from .pages import parse_page_header

__all__ = ["WalkedPages", "walk_page_headers"]


@dataclass
class WalkedPages:
    """Data pages of one chunk found by walking its page headers (file offsets, header included)."""

    first_rows: np.ndarray  # first row of each data page, strictly increasing from 0
    offsets: list[int]
    sizes: list[int]
    prefix: tuple[int, int]  # (offset, length) of the dictionary page, length 0 without one
    rows: int


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
    if desc.max_repetition_level > 0 or num_values is None or num_values != rows or rows <= 0:
        return None
    first: list[int] = []
    offsets: list[int] = []
    sizes: list[int] = []
    prefix = (base, 0)
    seen = 0
    pos = 0
    end = len(buf)
    try:
        while seen < rows:
            if pos >= end:
                return None
            header, body = parse_page_header(buf, pos, offset=base + pos)
            csize = header.compressed_page_size
            if csize is None or csize < 0 or body + csize > end:
                return None
            ptype = header.type
            if ptype == PageType.DICTIONARY_PAGE:
                if offsets or prefix[1] > 0:
                    return None
                prefix = (base + pos, body + csize - pos)
            elif ptype == PageType.DATA_PAGE:
                dp = header.data_page_header
                n = dp.num_values if dp is not None else None
                if n is None or n <= 0:
                    return None
                first.append(seen)
                offsets.append(base + pos)
                sizes.append(body + csize - pos)
                seen += n
            elif ptype == PageType.DATA_PAGE_V2:
                dp2 = header.data_page_header_v2
                if dp2 is None or dp2.num_rows is None or dp2.num_rows <= 0 or dp2.num_values != dp2.num_rows:
                    return None
                first.append(seen)
                offsets.append(base + pos)
                sizes.append(body + csize - pos)
                seen += dp2.num_rows
            else:
                return None
            pos = body + csize
    except CorruptFileError:  # a header that does not parse: the whole-chunk path reports it
        return None
    if seen != rows or pos != end or not offsets:
        return None
    return WalkedPages(np.array(first, np.int64), offsets, sizes, prefix, rows)
