"""A flat column read as codes into its chunk's dictionary, for the filter engine: a predicate is then
evaluated once per dictionary entry and mapped to the rows by their codes, instead of on every row's
decoded value (:class:`EncodedColumn`, gathered from a chunk's pages by :func:`collect_encoded`).

A writer whose dictionary grows too large falls back to PLAIN pages part-way through a chunk (pyarrow,
parquet-mr): the values of such pages are appended to the entries, one entry per value, so every row of
the chunk has a code whatever its page's encoding, and evaluation on the entries covers both kinds of page.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import numpy as np

from ..errors import CorruptFileError
from ..limits import charge
from ..schema import Field
from ..table import Column, place_nulls
from .column_reader import ChunkParts, Values, assemble_values, concat_values, expand_dictionary

__all__ = ["EncodedColumn", "collect_encoded"]

_INT32_CODES = (1 << 31) - 1  # entries (and the null code after them) an int32 code can number


class EncodedColumn:
    """The rows of a flat column as codes into ``entries``: the chunk's dictionary page, followed by the
    values of any PLAIN data page. A row's code is its entry, or ``len(entries)`` (:attr:`null_code`)
    where the row is null. The codes come in ``pieces`` (consecutive runs of rows, one per page as
    decoded: joined only when :attr:`codes` is asked for); ``dictionary_size`` entries came from the
    dictionary page."""

    __slots__ = ("field", "entries", "pieces", "dictionary_size", "_rows")

    def __init__(self, field: Field, entries: Values, pieces: list[np.ndarray], dictionary_size: int) -> None:
        self.field = field
        self.entries = entries
        self.pieces = pieces
        self.dictionary_size = dictionary_size
        self._rows = sum(len(p) for p in pieces)

    def __len__(self) -> int:
        return self._rows

    def __repr__(self) -> str:
        return f"EncodedColumn({self.field}, len={len(self)}, entries={len(self.entries)})"

    @property
    def null_code(self) -> int:
        """The code of a null row (one past the last entry)."""
        return len(self.entries)

    @property
    def codes(self) -> np.ndarray:
        """Every row's code (the pieces joined, once)."""
        if len(self.pieces) != 1:
            self.pieces = [np.concatenate(self.pieces) if self.pieces else np.zeros(0, np.int32)]
        return self.pieces[0]

    def entries_column(self) -> Column:
        """The entries as a column (no nulls): what a predicate is evaluated on."""
        return Column(self.field.with_nullable(True), self.entries, None)

    def _starts(self) -> np.ndarray:
        """The first row of each piece, then the row count."""
        return np.concatenate([[0], np.cumsum([len(p) for p in self.pieces])]).astype(np.int64)

    def slice(self, offset: int = 0, length: int | None = None) -> EncodedColumn:
        """Rows ``offset`` to ``offset + length`` (the end when None), still encoded (the pieces in the
        range, without joining the codes)."""
        stop = len(self) if length is None else offset + length
        if len(self.pieces) == 1 or offset < 0 or stop > len(self):
            return EncodedColumn(self.field, self.entries, [self.codes[offset:stop]], self.dictionary_size)
        starts = self._starts()
        out = [p[max(offset - a, 0):stop - a] for p, a in zip(self.pieces, starts.tolist())
               if a < stop and a + len(p) > offset]
        return EncodedColumn(self.field, self.entries, out, self.dictionary_size)

    def take(self, idx: np.ndarray) -> EncodedColumn:
        """The rows at positions ``idx``, still encoded. Ascending positions (a filter's selection) are
        gathered piece by piece, without joining the codes."""
        n = len(idx)
        if len(self.pieces) == 1 or n == 0 or int(idx[0]) < 0 or int(idx[-1]) >= len(self) or \
                (n > 1 and not bool(np.all(idx[1:] >= idx[:-1]))):
            return EncodedColumn(self.field, self.entries, [self.codes[idx]], self.dictionary_size)
        starts = self._starts()
        cuts = np.searchsorted(idx, starts).tolist()
        out = [p[idx[lo:hi] - a] for p, a, lo, hi in zip(self.pieces, starts.tolist(), cuts, cuts[1:]) if hi > lo]
        return EncodedColumn(self.field, self.entries, out, self.dictionary_size)

    def decoded(self) -> Column:
        """The rows' values as a :class:`~pqbloom.table.Column` (expansion charged to the read's budget)."""
        codes = self.codes
        present = codes != self.null_code
        if bool(present.all()):
            return Column(self.field, expand_dictionary(self.entries, codes), None)
        dense = expand_dictionary(self.entries, codes[present])
        return Column(self.field, place_nulls(dense, present), ~present)


def _checked(idx: np.ndarray, size: int) -> np.ndarray:
    """A page's dictionary indices, checked to lie in a dictionary of ``size`` entries."""
    if len(idx) == 0:
        return idx
    if idx.dtype == np.int32:
        bad = int(idx.view(np.uint32).max()) >= size  # a negative index is out of range too
    else:
        bad = int(idx.min()) < 0 or int(idx.max()) >= size
    if bad:
        lo, hi = int(idx.min()), int(idx.max())
        raise CorruptFileError(f"dictionary index {lo if lo < 0 else hi} out of range for a dictionary "
                               f"of {size} values")
    return idx


def collect_encoded(pages: Iterable[tuple[str, Any, Any, Any]], f: Field, nullable: bool,
                    num_values: int) -> EncodedColumn | ChunkParts:
    """Gather a flat chunk's decoded pages (:func:`pqbloom.file.pages.iter_pages`, no sink) into an
    :class:`EncodedColumn` when some page is dictionary-encoded, else into :class:`ChunkParts` as
    :func:`~pqbloom.file.column_reader.collect_chunk` would. ``nullable``: the column has definition
    levels (each page then yields its presence flags). Raises CorruptFileError for an index outside
    the dictionary or flags that disagree with the values."""
    parts: list[tuple[str, Any, np.ndarray | None]] = []
    dictionary = None
    for kind, values, present, page_dictionary in pages:
        dictionary = page_dictionary
        parts.append((kind, values, present if nullable else None))
    if dictionary is None or not any(kind == "dict" for kind, _, _ in parts):
        levels = [p for _, _, p in parts if p is not None]
        return assemble_values(f, [(k, v) for k, v, _ in parts], levels if nullable else None, dictionary,
                               num_values)
    size = len(dictionary)
    plain = sum(len(v) for kind, v, _ in parts if kind != "dict")
    null_code = size + plain
    dtype = np.int32 if null_code < _INT32_CODES else np.int64
    entries_l: list[Any] = [dictionary]
    pieces: list[np.ndarray] = []
    nxt = size
    rows = 0
    for kind, v, present in parts:
        if kind == "dict":
            codes = _checked(v, size).astype(dtype, copy=False)
        else:  # a PLAIN page: its values become entries of their own
            codes = np.arange(nxt, nxt + len(v), dtype=dtype)
            entries_l.append(v)
            nxt += len(v)
        if present is not None and len(present) != len(codes):  # the page has nulls: codes per row
            if int(np.count_nonzero(present)) != len(codes):
                raise CorruptFileError(f"{len(codes)} values decoded for {int(np.count_nonzero(present))} "
                                       "present slots")
            charge(codes.itemsize * len(present), f"the dictionary codes of {len(present):,} rows")
            full = np.full(len(present), null_code, dtype)
            full[present] = codes
            codes = full
        rows += len(codes)
        pieces.append(codes)
    if rows != num_values:
        raise CorruptFileError(f"decoded {rows} rows where {num_values} are expected")
    entries = concat_values(entries_l, f) if len(entries_l) > 1 else dictionary
    return EncodedColumn(f, entries, pieces, size)
