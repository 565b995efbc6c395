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
    """The rows of a flat column as ``codes`` into ``entries``: the chunk's dictionary page, followed by
    the values of any PLAIN data page. ``codes[i]`` is row ``i``'s entry, or ``len(entries)`` where the row
    is null; ``dictionary_size`` entries came from the dictionary page."""

    __slots__ = ("field", "entries", "codes", "dictionary_size")

    def __init__(self, field: Field, entries: Values, codes: np.ndarray, dictionary_size: int) -> None:
        self.field = field
        self.entries = entries
        self.codes = codes
        self.dictionary_size = dictionary_size

    def __len__(self) -> int:
        return len(self.codes)

    def __repr__(self) -> str:
        return f"EncodedColumn({self.field}, len={len(self)}, entries={len(self.entries)})"

    @property
    def null_code(self) -> int:
        """The code of a null row (one past the last entry)."""
        return len(self.entries)

    def entries_column(self) -> Column:
        """The entries as a column (no nulls): what a predicate is evaluated on."""
        return Column(self.field.with_nullable(True), self.entries, None)

    def slice(self, offset: int = 0, length: int | None = None) -> EncodedColumn:
        """Rows ``offset`` to ``offset + length`` (the end when None), still encoded."""
        stop = len(self.codes) if length is None else offset + length
        return EncodedColumn(self.field, self.entries, self.codes[offset:stop], self.dictionary_size)

    def take(self, idx: np.ndarray) -> EncodedColumn:
        """The rows at positions ``idx``, still encoded."""
        return EncodedColumn(self.field, self.entries, self.codes[idx], self.dictionary_size)

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
    parts: list[tuple[str, Any]] = []
    levels: list[np.ndarray] = []
    dictionary = None
    for kind, values, present, page_dictionary in pages:
        dictionary = page_dictionary
        parts.append((kind, values))
        if present is not None:
            levels.append(present)
    if dictionary is None or not any(kind == "dict" for kind, _ in parts):
        return assemble_values(f, parts, levels if nullable else None, dictionary, num_values)
    size = len(dictionary)
    plain = sum(len(v) for kind, v in parts if kind != "dict")
    dtype = np.int32 if size + plain < _INT32_CODES else np.int64
    pieces: list[Any] = [dictionary]
    codes_l: list[np.ndarray] = []
    nxt = size
    for kind, v in parts:
        if kind == "dict":
            codes_l.append(_checked(v, size).astype(dtype, copy=False))
        else:  # a PLAIN page: its values become entries of their own
            codes_l.append(np.arange(nxt, nxt + len(v), dtype=dtype))
            pieces.append(v)
            nxt += len(v)
    entries = concat_values(pieces, f) if len(pieces) > 1 else dictionary
    dense = codes_l[0] if len(codes_l) == 1 else np.concatenate(codes_l)
    present = None
    if nullable and levels:
        present = levels[0] if len(levels) == 1 else np.concatenate(levels)
        if len(present) != num_values:
            raise CorruptFileError(f"decoded {len(present)} definition levels for {num_values} values")
    if present is None or len(dense) == len(present):
        if len(dense) != num_values:
            raise CorruptFileError(f"decoded {len(dense)} values for {num_values} rows")
        return EncodedColumn(f, entries, dense, size)
    if int(np.count_nonzero(present)) != len(dense):
        raise CorruptFileError(f"{len(dense)} values decoded for {int(np.count_nonzero(present))} present slots")
    charge(dense.itemsize * len(present), f"the dictionary codes of {len(present):,} rows")
    codes = np.full(len(present), len(entries), dtype)
    codes[present] = dense
    return EncodedColumn(f, entries, codes, size)
