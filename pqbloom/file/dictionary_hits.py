"""The rows of a dictionary-encoded chunk whose index is one of some dictionary entries, found from the
pages' index bytes: each page's RLE/bit-packed indices are looked up in a table of one small number
per entry (:func:`pqbloom.kernels.hybrid.gather_dictionary`), so neither an array of every row's index
nor a lookup per row is built. A filter on a column evaluated once per dictionary entry finds its
matching rows this way (:class:`DictionaryHits`, gathered by :func:`collect_hits`).

Only chunks whose every data page uses the dictionary qualify: the first page of another encoding
ends the gathering (None), and the caller reads the chunk as it otherwise would.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

import numpy as np

from ..errors import CorruptFileError
from ..kernels.hybrid import gather_dictionary
from ..limits import charge
from ..schema import Field
from ..table import Column
from .column_reader import Values
from .encoded_column import EncodedColumn

__all__ = ["DictionaryHits", "collect_hits"]

#: entries up to this many hits are numbered in one byte per row (0: no hit)
_BYTE_RANKS = 255


class DictionaryHits:
    """Per row of a chunk, which of the entries ``hits`` (sorted entry indices) its index is: ``ranks``
    holds 1 + the position in ``hits`` of a row's entry, 0 for a row whose entry is not a hit or that is
    null; ``present`` marks the rows with a value (None: every row has one)."""

    __slots__ = ("field", "dictionary", "hits", "ranks", "present")

    def __init__(self, field: Field, dictionary: Values, hits: np.ndarray, ranks: np.ndarray,
                 present: np.ndarray | None) -> None:
        self.field = field
        self.dictionary = dictionary
        self.hits = hits
        self.ranks = ranks
        self.present = present

    def __len__(self) -> int:
        return len(self.ranks)

    def rows(self, *, nulls: bool) -> np.ndarray:
        """The rows (ascending) whose entry is a hit, and with ``nulls`` the null rows too."""
        hit = self.ranks != 0
        if nulls and self.present is not None:
            hit |= ~self.present
        return np.flatnonzero(hit)

    def column(self, rows: np.ndarray) -> Column:
        """The values of ``rows`` (rows whose entry is a hit, or null rows) as a column."""
        # one lookup of each row's rank (rank 0: a null row, given the null code): no per-row temporaries
        # wider than the codes, which a memory limit sized for the result would not hold
        lookup = np.empty(len(self.hits) + 1, np.int32 if len(self.dictionary) < 2**31 - 1 else np.int64)
        lookup[0] = len(self.dictionary)
        lookup[1:] = self.hits
        codes = lookup[self.ranks[rows]]
        return EncodedColumn(self.field, self.dictionary, [codes], len(self.dictionary)).decoded()


def collect_hits(pages: Iterable[tuple[str, Any, Any, Any]], f: Field, num_rows: int,
                 hits_of: Callable[[Values], np.ndarray | None]) -> DictionaryHits | None:
    """The :class:`DictionaryHits` of a flat chunk's pages (:func:`pqbloom.file.pages.iter_pages` with
    ``raw_indices``, ``views`` and ``full_flags=False``), which hold ``num_rows`` rows. ``hits_of(dictionary)``
    gives the entries wanted (sorted, distinct indices), or None to give up. None: a page is not
    dictionary-encoded, or ``hits_of`` gave up (the caller reads the chunk otherwise). Raises
    CorruptFileError for an index outside the dictionary, flags that disagree with the values or a
    row count other than ``num_rows``."""
    ranks: np.ndarray | None = None
    table: np.ndarray | None = None
    flags: np.ndarray | None = None
    dictionary: Values | None = None
    hits = np.zeros(0, np.int64)
    row0 = 0
    for kind, values, present, page_dictionary in pages:
        if kind != "rle":
            return None
        if table is None:
            dictionary = page_dictionary
            wanted = hits_of(page_dictionary)
            if wanted is None:
                return None
            hits = np.asarray(wanted, np.int64)
            dtype = np.uint8 if len(hits) <= _BYTE_RANKS else np.int32
            table = np.zeros(len(page_dictionary), dtype)
            table[hits] = np.arange(1, len(hits) + 1)
            charge(num_rows * (table.itemsize + 1), f"the filter's matches over {num_rows:,} rows")
            ranks = np.empty(num_rows, dtype)
        elif page_dictionary is not dictionary:  # (one dictionary page per chunk: iter_pages checks)
            return None
        assert ranks is not None
        buf, count = values
        m = len(present) if present is not None else count
        if m > num_rows - row0:
            raise CorruptFileError(f"the chunk's pages hold more than the {num_rows} rows expected")
        out = ranks[row0:row0 + m]
        if present is not None:
            if flags is None:
                flags = np.ones(num_rows, np.bool_)
            flags[row0:row0 + m] = present
        if m:
            gather_dictionary(buf, count, table, present, out)
        elif count:
            raise CorruptFileError(f"{count} values decoded for 0 present slots")
        values = present = None  # the page's buffer is free for the next page
        row0 += m
    if row0 != num_rows:
        raise CorruptFileError(f"column has {row0} rows where {num_rows} are expected")
    if ranks is None or dictionary is None:  # no data page (no rows): nothing gained
        return None
    return DictionaryHits(f, dictionary, hits, ranks, flags)
