"""Column chunk assembly: decoded pages -> one column.

A chunk decodes (in :mod:`pqbloom.file.pages`) into dense value pieces, dictionary indices and
presence flags; this module resolves the dictionary (charging the expansion to the read's memory
budget), gathers the pieces of one or several chunks into one preallocated column, places nulls
(scatter), and cuts decoded pages into batches. Nothing here reads bytes from the file.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

import numpy as np

from ..arrays import BinaryArray
from ..encodings import take_dictionary
from ..errors import CorruptFileError, MemoryLimitError, ParquetError
from ..limits import charge, current_budget, out_of_memory
from ..schema import ColumnDescriptor, Field, LNode
from ..table import Column, column_from_values, place_nulls
from .binary_sink import BinarySink
from .levels import LeafLevels

#: what a decoded page holds: fixed-width values as a numpy array, byte strings as a BinaryArray
Values = np.ndarray | BinaryArray

__all__ = ["ChunkParts", "NestedSelection", "NestedQueue", "RowQueue", "DictIndices",
           "DECODE_FAILURES", "located_error", "expand_dictionary", "assemble_values", "collect_chunk", "collect_rows",
           "to_sink", "build_column",
           "concat_values", "split_nested", "NestedSource", "Values"]


class NestedSelection:
    """A nested output column: its name, its logical subtree (maybe pruned) and the leaves it reads."""

    is_nested = True

    def __init__(self, name: str, node: LNode) -> None:
        self.dotted_path = name
        self.node = node
        self.leaves = node.leaves()
        self.max_repetition_level = max((d.max_repetition_level for d in self.leaves), default=0)

    @property
    def field(self) -> Field:
        """The output column's field (a NestedField, pruned to the selected leaves)."""
        return self.node.to_field()

    def __repr__(self) -> str:
        return f"NestedSelection({self.dotted_path!r}, leaves={[d.dotted_path for d in self.leaves]})"



class NestedQueue:
    """A nested column of one row group waiting to be cut into batches."""

    def __init__(self) -> None:
        self.col: Column | None = None
        self.rows = 0
        self.exhausted = False

    def push(self, col: Column) -> None:
        """Hold ``col`` (a whole row group's column) for cutting."""
        self.col = col
        self.rows = len(col)

    def pop(self, n: int) -> Column:
        """The next ``n`` rows."""
        assert self.col is not None
        head = self.col.slice(0, n)
        self.col = self.col.slice(n)
        self.rows -= n
        return head



@dataclass
class ChunkParts:
    """A decoded column chunk: dense (non-null) value pieces and, for nullable columns, presence flags."""

    pieces: list[Any]
    present: np.ndarray | None
    num_rows: int
    page_rows: list[int] | None = None  # rows of each piece, when the pieces are the pages (nullable chunks)
    placed: bool = False  # pieces[0] holds every row, nulls placed (file/column_builder.place_pages)
    region: BinarySink | None = None  # the column region the chunk decoded into (BinarySink.in_column)
    nulls: int | None = None  # rows without a value, when known (else counted from ``present``)


def expand_dictionary(dictionary: Values | None, idx: np.ndarray) -> Values:
    """Expand dictionary indices, first charging the result to the read's memory budget (if any):
    a small page of indices into long entries is where a file grows most when decoded."""
    budget = current_budget()
    if budget is not None and len(idx):
        if isinstance(dictionary, BinaryArray):
            lens = dictionary.lengths()
            lo, hi = int(idx.min()), int(idx.max())
            if 0 <= lo and hi < len(lens):  # take_dictionary reports bad indices
                budget.charge(int(lens[idx].sum()) + 8 * (len(idx) + 1),
                              f"the dictionary expansion of {len(idx):,} values")
        else:
            arr = np.asarray(dictionary)
            budget.charge(len(idx) * arr.itemsize * int(np.prod(arr.shape[1:], dtype=np.int64)),
                          f"the dictionary expansion of {len(idx):,} values")
    return take_dictionary(dictionary, idx)


def to_sink(sink: BinarySink, kind: str, values: Any, dictionary: Values | None) -> None:
    """One page's values into ``sink``: dictionary indices expanded straight into it (else by
    :func:`expand_dictionary`, then copied in); values the sink decoded in place are there already."""
    if kind == "dict":
        if not sink.take(dictionary, values):
            sink.add(expand_dictionary(dictionary, values))
    elif values is not sink.last:
        sink.add(values)


def collect_chunk(pages: Iterable[tuple[str, Any, Any, Any]], desc: ColumnDescriptor, num_values: int,
                  sink: BinarySink | None = None) -> ChunkParts:
    """Gather the pages of a flat chunk (:func:`pqbloom.file.pages.iter_pages`, given ``sink`` if
    any) into value pieces and presence flags. With a sink, dictionary pages are expanded at once
    into it and every page lands in its one buffer: the chunk is a single BinaryArray."""
    parts: list[tuple[str, Any]] = []
    levels: list[np.ndarray | int] = []
    nullable = desc.max_definition_level > 0
    dictionary = None
    for kind, values, present, page_dictionary in pages:
        dictionary = page_dictionary
        if present is not None:
            levels.append(present)
        elif nullable:  # a page without nulls (iter_pages' full_flags=False): its row count
            levels.append(len(values))
        if sink is not None:
            to_sink(sink, kind, values, dictionary)
        else:
            parts.append((kind, values))
    if sink is not None:
        parts = [("values", p) for p in sink.pieces()]
    chunk = assemble_values(desc.field, parts, chunk_flags(levels, nullable), dictionary, num_values)
    if sink is not None and sink.shared:
        chunk.region = sink
    return chunk


def page_flags(flags: list[np.ndarray | int]) -> list[np.ndarray]:
    """The presence flags of a chunk's pages, a page without nulls given by its row count (an int)."""
    return [np.ones(p, np.bool_) if type(p) is int else p for p in flags]  # type: ignore[misc]


def chunk_flags(flags: list[np.ndarray | int], nullable: bool) -> list[np.ndarray] | None:
    """:func:`page_flags` of a chunk's pages for :func:`assemble_values`: None (no presence flags, every
    row present) for a required column or when no page has a null."""
    if not nullable or (flags and all(type(p) is int for p in flags)):
        return None
    return page_flags(flags)


def assemble_values(f: Field, parts: list[tuple[str, Any]], levels: list[np.ndarray] | None,
                    dictionary: Values | None, total: int) -> ChunkParts:
    """Resolve dictionary pages and gather the presence flags of a chunk."""
    if parts and all(kind == "dict" for kind, _ in parts):
        idx = np.concatenate([v for _, v in parts]) if len(parts) > 1 else parts[0][1]
        pieces = [expand_dictionary(dictionary, idx)]
    else:
        pieces = [expand_dictionary(dictionary, v) if kind == "dict" else v for kind, v in parts]
    if levels is None:
        return ChunkParts(pieces, None, total)
    present = np.concatenate(levels) if len(levels) != 1 else levels[0]
    if len(present) != total:
        raise CorruptFileError(f"decoded {len(present)} definition levels for {total} values")
    return ChunkParts(pieces, present, total, [len(v) for v in levels] if len(levels) == len(pieces) > 1 else None)


def collect_rows(pages: Iterable[tuple[str, Any, Any, Any]], f: Field, positions: np.ndarray, num_rows: int) -> Column:
    """The rows at ``positions`` (sorted, distinct; counted from the first row of ``pages``, which hold
    ``num_rows`` rows) of a flat chunk's decoded pages (:func:`pqbloom.file.pages.iter_pages`, no sink;
    views allowed): each page's selected values are taken as it comes, so neither a column of every row
    nor the dictionary expansion of unselected rows is built (a sparse selection: late materialization).
    A page without presence flags (``full_flags=False``: no nulls) has every row present."""
    vals: list[Any] = []
    flags: list[np.ndarray | int] = []  # a page without flags (no nulls): its count of selected rows
    row0 = lo = 0
    dictionary = None
    for kind, values, present, page_dictionary in pages:
        dictionary = page_dictionary
        m = len(present) if present is not None else len(values)
        row0 += m
        hi = int(positions.searchsorted(row0))  # (the pages follow one another: this page's start is lo)
        local = positions[lo:hi] - (row0 - m)
        lo = hi
        if present is not None:
            keep = present[local]
            flags.append(keep)
            if len(values) != m:  # the dense (non-null) position of each selected present row
                local = (np.cumsum(present, dtype=np.int64) - 1)[local[keep]]
        else:
            flags.append(len(local))
        if kind == "dict":
            vals.append(expand_dictionary(dictionary, values[local]))
        else:
            vals.append(values.take(local) if isinstance(values, BinaryArray) else values[local])
        values = present = None  # the page's buffer is free for the next page (pqbloom.scratch)
    if row0 != num_rows:
        raise CorruptFileError(f"column has {row0} rows where {num_rows} are expected")
    present_all = None
    if any(type(p) is not int for p in flags):
        kept = page_flags(flags)
        present_all = np.concatenate(kept) if len(kept) != 1 else kept[0]
    parts = ChunkParts(vals, present_all, len(positions))
    return build_column(f, [parts])


# what numpy and the codecs raise on garbage, turned into CorruptFileError naming the chunk; and
# MemoryError, which is the machine's limit, not the file's fault (MemoryLimitError)
DECODE_FAILURES = (ValueError, IndexError, TypeError, OverflowError, MemoryError)


def located_error(exc: Exception, rg: int, desc: ColumnDescriptor) -> Exception:
    """The error to raise for a failure while decoding a chunk: typed, naming the row group and column."""
    if isinstance(exc, MemoryError):
        exc = out_of_memory(exc, f"column {desc.dotted_path!r} of row group {rg}")
        exc.located = True  # type: ignore[attr-defined]
        return exc
    if isinstance(exc, CorruptFileError):
        return exc if exc.column is not None else type(exc)(str(exc), row_group=rg, column=desc.dotted_path)
    if isinstance(exc, MemoryLimitError) and not getattr(exc, "located", False):
        located = MemoryLimitError(f"{exc} (column {desc.dotted_path!r}, row group {rg})")
        located.located = True  # type: ignore[attr-defined]
        return located
    if isinstance(exc, ParquetError):
        return exc
    return CorruptFileError(f"cannot decode column chunk: {exc.__class__.__name__}: {exc}",
                            row_group=rg, column=desc.dotted_path)


class DictIndices:
    """A page's dictionary indices, expanded only when a batch takes them: one page of small
    indices into long entries can decode to far more than the batch asked for."""

    __slots__ = ("dictionary", "idx")

    def __init__(self, dictionary: Values, idx: np.ndarray) -> None:
        self.dictionary = dictionary
        self.idx = idx

    def __len__(self) -> int:
        return len(self.idx)

    def slice(self, start: int, stop: int) -> DictIndices:
        """The indices ``start:stop``, still unexpanded."""
        return DictIndices(self.dictionary, self.idx[start:stop])

    def expand(self) -> Values:
        """The indexed values (charged to the read's memory budget)."""
        return expand_dictionary(self.dictionary, self.idx)


class RowQueue:
    """Decoded pages of one column waiting to be cut into batches by row count."""

    def __init__(self, f: Field) -> None:
        self.f = f
        self.pages: list[tuple[Any, np.ndarray | None]] = []
        self.rows = 0
        self.exhausted = False

    def push(self, dense: Values | DictIndices, present: np.ndarray | None) -> None:
        """Queue one decoded page: dense values (or DictIndices) and presence flags (None: no nulls)."""
        n = len(present) if present is not None else len(dense)
        if n:
            self.pages.append((dense, present))
            self.rows += n

    def pop(self, n: int) -> Column:
        """The next ``n`` rows as a Column (dictionary indices expanded now)."""
        taken: list[ChunkParts] = []
        need = n
        while need:
            dense, present = self.pages[0]
            rows = len(present) if present is not None else len(dense)
            if rows <= need:
                self.pages.pop(0)
                taken.append(ChunkParts([dense], present, rows))
                need -= rows
                continue
            k = need if present is None else int(np.count_nonzero(present[:need]))
            sliceable = isinstance(dense, (BinaryArray, DictIndices))
            head = dense.slice(0, k) if sliceable else dense[:k]
            tail = dense.slice(k, len(dense)) if sliceable else dense[k:]
            taken.append(ChunkParts([head], None if present is None else present[:need], need))
            self.pages[0] = (tail, None if present is None else present[need:])
            need = 0
        self.rows -= n
        for part in taken:
            part.pieces = [p.expand() if isinstance(p, DictIndices) else p for p in part.pieces]
        return build_column(self.f, taken)


def build_column(f: Field, chunks: list[ChunkParts]) -> Column:
    """Join chunks (of one or several row groups) into one full-length Column with a single copy."""
    dense = concat_values([p for c in chunks for p in c.pieces], f)
    if all(c.present is None for c in chunks):
        return Column(f, dense, None)
    present = np.concatenate([c.present if c.present is not None else np.ones(c.num_rows, bool) for c in chunks])
    if bool(present.all()):
        return Column(f, dense, None)
    return Column(f, place_nulls(dense, present), ~present)


def concat_values(pieces: list[Any], f: Field) -> Any:
    """Join decoded value pieces of one column (an empty column of ``f``'s type when there are none)."""
    if not pieces:
        return column_from_values(f.name, [], f).values
    if len(pieces) == 1:
        return pieces[0]
    if isinstance(pieces[0], BinaryArray):
        charge(sum(p.nbytes + 8 * len(p) for p in pieces), f"joining the pages of column {f.name!r}")
        return BinaryArray.concat(pieces)
    charge(sum(p.nbytes for p in pieces), f"joining the pages of column {f.name!r}")
    return np.concatenate(pieces)





class NestedSource(Protocol):
    """What :func:`split_nested` needs of a file: :meth:`pqbloom.file.reader.FileReader.read_nested`."""

    def read_nested(self, rg: int, sel: NestedSelection,
                    levels: dict[int, LeafLevels] | None = None) -> Column:
        """The nested column ``sel`` of row group ``rg``."""
        ...


def split_nested(pf: NestedSource, rg: int, descs: Sequence[ColumnDescriptor | NestedSelection], rows: Any,
                 ex: Any = None, levels: dict[int, LeafLevels] | None = None
                 ) -> tuple[dict[str, Column], list[ColumnDescriptor]]:
    """For the filtered reader (:mod:`pqbloom.scan`): read the nested selections among
    ``descs`` for row group ``rg`` and return them (by output name) with the flat rest.

    ``rows`` selects rows: None (all), sorted row numbers, or an object with ``absolute`` and
    ``num_rows`` (row ranges). Nested columns are assembled from their whole chunks; ``levels``
    holds leaf chunks of this row group already decoded (by leaf index), which are reused.
    """
    out: dict[str, Column] = {}
    flat: list[ColumnDescriptor] = []
    for d in descs:
        if not isinstance(d, NestedSelection):
            flat.append(d)
            continue
        if ex is not None and hasattr(ex, "chunks_read_whole"):
            ex.chunks_read_whole += sum(1 for leaf in d.leaves if not levels or leaf.index not in levels)
        col = pf.read_nested(rg, d, levels)
        if rows is not None:
            idx = rows.absolute(np.arange(rows.num_rows)) if hasattr(rows, "absolute") else np.asarray(rows)
            col = col.take(idx)
        out[d.dotted_path] = col
    return out, flat

