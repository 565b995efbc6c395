"""One flat column gathered from its decoded chunks (one per row group), into its final buffers.

Fixed-width values land at their rows in one full-length buffer, nulls placed on the way (each
page's values go to the rows its presence flags mark), so a nullable column costs no dense copy
and no second full-length array; a column of one chunk without nulls is that chunk's array itself.
Byte arrays of several chunks whose SizeStatistics give each chunk's bytes decode straight into
their regions of the column's buffers (:class:`ByteArrayRegions`); otherwise they are copied into
one buffer sized from SizeStatistics (a column of one chunk, decoded into one buffer by a
:class:`~pqbloom.file.binary_sink.BinarySink`, is that buffer), their nulls placed at the end (new
offsets only: the bytes are shared). Whatever does not fit (a type that
changes between chunks, statistics that lie) falls back to joining the pieces at the end.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import numpy as np

from ..arrays import BinaryArray
from ..encodings import decode_dictionary_indices
from ..errors import CorruptFileError
from ..format import PhysicalType
from ..kernels.hybrid import gather_dictionary
from ..kernels.levels import scatter_nulls, spread_offsets
from ..limits import charge
from ..memory import pool
from ..schema import Field
from ..table import Column, place_nulls
from ..table.build import empty_values
from .binary_sink import BinarySink
from .column_reader import ChunkParts, assemble_values, chunk_flags, concat_values, expand_dictionary, page_flags

__all__ = ["ColumnBuilder", "ByteArrayRegions", "FixedRegions", "place_pages", "placed_type"]


def placed_type(physical_type: int) -> bool:
    """Whether chunks of this physical type are placed page by page (:func:`place_pages`): the
    fixed-width ones, numbers and FIXED_LEN_BYTE_ARRAY rows (byte arrays go to a BinarySink)."""
    return physical_type != PhysicalType.BYTE_ARRAY


def _owns_its_bytes(a: np.ndarray) -> bool:
    """Whether ``a`` can become a column as it is: writable, and not a view into a larger buffer
    (a page's bytes) that it would keep alive."""
    base = a.base
    return bool(a.flags.writeable) and (base is None or (isinstance(base, np.ndarray) and base.nbytes == a.nbytes))


def place_pages(pages: Iterable[tuple[str, Any, Any, Any]], f: Field, total: int, nullable: bool,
                out: np.ndarray | None = None, present_out: np.ndarray | None = None) -> ChunkParts:
    """A flat fixed-width chunk's pages (:func:`pqbloom.file.pages.iter_pages`, with ``views`` and
    ``encoded_indices``: their values may be views of the page, copied out here before the next is
    asked for) written to their rows of one buffer of ``total`` rows as they decode, nulls placed
    (zeros): the chunk costs its column and one page, not its dense pages plus a copy of them. A
    dictionary-encoded page is looked up straight into its rows (one kernel call), a page without
    nulls copied (no scatter). ``out``: that buffer (the chunk's rows of the column's,
    :class:`FixedRegions`; it is then ``pieces[0]``), else one is made; ``present_out``: where the
    chunk's presence flags are joined (its rows of the column's mask; then ``present``). Pages that
    do not fit (a type that changes within the chunk) end it: the rest is gathered as
    :func:`collect_chunk` does."""
    if out is not None and len(out) != total:
        out = None
    r = 0
    nulls = 0  # rows without a value, so far
    flags: list[np.ndarray | int] = []  # each page's presence flags, or its row count when it has no nulls
    parts: list[tuple[str, Any]] | None = None  # dense pages, once placement has stopped
    dictionary = None
    for kind, values, present, dictionary in pages:
        if present is not None:
            flags.append(present)
        elif nullable:  # a page without nulls (iter_pages' full_flags=False)
            flags.append(values[1] if kind == "rle" else len(values))
        if kind == "rle":
            count = values[1]
            n = len(present) if present is not None else count
            if parts is None:
                if out is None:
                    out = _chunk_buffer(total, dictionary)
                if dictionary.dtype == out.dtype and dictionary.shape[1:] == out.shape[1:] and r + n <= total:
                    gather_dictionary(values[0], count, dictionary, present if count != n else None, out[r:r + n])
                    r += n
                    nulls += n - count
                    continue
            kind, values = "dict", decode_dictionary_indices(*values)
        if parts is not None:
            parts.append((kind, _own(values)))
            continue
        if kind == "dict":
            values = expand_dictionary(dictionary, values)
        n = len(present) if present is not None else len(values)
        if type(values) is np.ndarray and out is None:
            out = _chunk_buffer(total, values)
        if out is None or type(values) is not np.ndarray or values.dtype != out.dtype \
                or values.shape[1:] != out.shape[1:] or r + n > total:
            head = [] if out is None or r == 0 else [_dense(out[:r], page_flags(flags[:-1]))]
            # copies: the head is a view of ``out`` (maybe the column's, which the builder may write
            # these values back into), a page's values may be a view of its buffer
            parts = [("values", h.copy()) for h in head] + [("values", _own(values))]
            out = None
            continue
        if present is None or len(values) == n:  # no nulls (the values are as many as the rows)
            out[r:r + n] = values
        else:  # the values to the present rows, zeros to the others, in one pass
            scatter_nulls(values, present, 1, "a page of the chunk", out[r:r + n])
            nulls += n - len(values)
        r += n
        values = None  # copied out: the page loop releases its buffer for the next page (memory.scratch)
    if parts is not None:
        return assemble_values(f, parts, chunk_flags(flags, nullable), dictionary, total)
    if out is None:  # no pages
        return assemble_values(f, [], chunk_flags(flags, nullable), dictionary, total)
    if r != total:
        raise CorruptFileError(f"column chunk holds {r} rows, metadata says {total}")
    present_all = None
    joined = chunk_flags(flags, nullable)  # None: no page has a null
    if joined is None and nullable and flags and present_out is not None and len(present_out) == total:
        present_out[:] = True  # the chunk's rows of the column's mask stay its flags (ColumnBuilder.mask)
        present_all = present_out
    elif joined:
        if present_out is not None and len(present_out) == total:
            present_all = np.concatenate(joined, out=present_out)  # (the lengths summed to r == total)
        else:
            present_all = np.concatenate(joined) if len(joined) != 1 else joined[0]
    return ChunkParts([out], present_all, total, placed=True, nulls=nulls if nullable else 0)


def _chunk_buffer(total: int, like: np.ndarray) -> np.ndarray:
    """A buffer for ``total`` rows of ``like``'s dtype and row shape, charged to the read's budget."""
    charge(total * like.dtype.itemsize * int(np.prod(like.shape[1:], dtype=np.int64)),
           f"the values of a column chunk of {total:,} rows")
    return pool.empty((total,) + like.shape[1:], like.dtype)  # every row is written by the caller


def _own(values: Any) -> Any:
    """A page's values that stay valid after the next page decodes (a copy of an array, which may
    be a view of the page's buffer)."""
    return values.copy() if isinstance(values, np.ndarray) else values


def _dense(rows: np.ndarray, flags: list[np.ndarray]) -> np.ndarray:
    """The non-null values among placed ``rows`` (``flags``: presence of each page placed, or none)."""
    if not flags:
        return rows
    present = np.concatenate(flags) if len(flags) != 1 else flags[0]
    return rows if bool(present.all()) else rows[present]


def _nulls_in_place(dense: BinaryArray, present: np.ndarray) -> BinaryArray | None:
    """``dense`` with nulls placed (empty values at the rows ``present`` marks absent), its offsets
    spread within their own buffer when it has room for every row (a BinarySink's or this builder's,
    sized for the rows): no second offsets array. None when it has not (place_nulls then).

    Blocks of rows go from the last to the first: row ``r``'s offset is the dense offset number
    ``count(present[:r + 1]) <= r + 1``, which no block written before (all above ``r + 1``) moved."""
    off, n = dense.offsets, len(present)
    base = off.base
    if not (isinstance(base, np.ndarray) and base.dtype == np.int64 and base.ndim == 1 and len(base) >= n + 1
            and base.flags.writeable and base.flags.c_contiguous and off.flags.c_contiguous
            and off.ctypes.data == base.ctypes.data) or n == 0:
        return None
    full = base[:n + 1]
    spread_offsets(full, present, len(dense))
    return BinaryArray(full, dense.data)


class ByteArrayRegions:
    """A byte-array column of several chunks decoded in place: one offsets buffer for its rows and
    one data buffer of the bytes SizeStatistics give each chunk, each chunk decoding into its own
    region (:meth:`pqbloom.file.binary_sink.BinarySink.in_column`), in parallel or not. Without it
    every chunk decodes into a buffer of its own and is then copied into the column's.

    A chunk whose bytes are not what its statistics said (too many: they do not fit its region;
    too few: the region is not filled) cannot be trusted in place: the column is then joined from
    each chunk's values (:meth:`ColumnBuilder.finish`), as without regions."""

    def __init__(self, f: Field, rows: list[int], sizes: list[int]) -> None:
        total_rows, total_bytes = sum(rows), sum(sizes)
        charge(total_bytes + 8 * (total_rows + 1), f"the result buffer of column {f.name!r}")
        # not zeroed: each chunk writes every entry of its rows (its sink the first and those of its
        # values, the spreading those of its nulls), and the column is used only when every chunk did
        self.offsets = pool.empty(total_rows + 1, np.int64)
        self.offsets[0] = 0  # (a column of no rows has no chunk to write it)
        self.data = pool.empty(total_bytes, np.uint8)
        self.row_starts = np.concatenate([[0], np.cumsum(rows, dtype=np.int64)]).tolist()
        self.byte_starts = np.concatenate([[0], np.cumsum(sizes, dtype=np.int64)]).tolist()

    def sink(self, j: int) -> BinarySink:
        """The sink of chunk ``j`` (in the order the sizes were given)."""
        r0, r1 = self.row_starts[j], self.row_starts[j + 1]
        return BinarySink.in_column(self.offsets[r0:r1 + 1], self.data, self.byte_starts[j], self.byte_starts[j + 1])


class FixedRegions:
    """The full-length buffer of a flat fixed-width column of several chunks: chunk ``j`` places its
    pages straight into its rows (:meth:`rows`, given to :func:`place_pages`), from any thread (the
    rows are disjoint), and the builder finds them there: no chunk buffer, no copy into the column.
    A chunk whose values do not fit (a type that changes) comes back dense, and the builder writes
    it into its rows itself (or joins the column, :meth:`ColumnBuilder.finish`)."""

    def __init__(self, f: Field, rows: list[int], nullable: bool) -> None:
        ev = empty_values(f)  # the values' in-memory dtype and row shape
        total = sum(rows)
        charge(total * (ev.itemsize * int(np.prod(ev.shape[1:], dtype=np.int64)) + nullable),
               f"the result buffer of column {f.name!r}")
        self.values = pool.empty((total,) + ev.shape[1:], ev.dtype)  # every row is written by a chunk
        # the chunks' presence flags, joined in place (then inverted in place: the column's null mask)
        self.present = pool.empty(total, np.bool_) if nullable else None
        self.row_starts = np.concatenate([[0], np.cumsum(rows, dtype=np.int64)]).tolist()
        #: each chunk's rows, made once: the builder knows a chunk placed there by these very objects
        self.views = [(self.values[r0:r1], None if self.present is None else self.present[r0:r1])
                      for r0, r1 in zip(self.row_starts, self.row_starts[1:])]

    def rows(self, j: int) -> tuple[np.ndarray, np.ndarray | None]:
        """The rows of chunk ``j`` (in the order the row counts were given): values, presence flags."""
        return self.views[j]


class ColumnBuilder:
    """Gathers decoded chunks of one column into preallocated buffers (module doc)."""

    def __init__(self, f: Field, num_rows: int, data_bytes: int | None,
                 regions: ByteArrayRegions | None = None, fixed: FixedRegions | None = None) -> None:
        self.f = f
        self.regions = regions
        self.region_parts: list[ChunkParts] = []  # with regions: the chunks, kept for finish()
        self.num_rows = num_rows
        self.data_bytes = data_bytes
        self.rows = 0
        # fixed width: the rows so far, nulls placed (zeros), or the one chunk that is the whole column
        fixed = fixed if fixed is not None and len(fixed.values) == num_rows else None
        self.fixed_rows = fixed.views if fixed is not None else None
        self.out: np.ndarray | None = fixed.values if fixed is not None else None
        # the fixed regions' mask, while every chunk's flags are its rows of it
        self.mask: np.ndarray | None = fixed.present if fixed is not None else None
        self.held: np.ndarray | None = None
        # byte arrays: dense values so far in data / offsets, or a first piece not yet copied
        self.n = 0
        self.data: np.ndarray | None = None
        self.offsets: np.ndarray | None = None
        self.nbytes = 0
        self.pending: BinaryArray | None = None
        self.fallback: list[ChunkParts] = []  # dense pieces joined at the end, nulls placed then
        # each chunk's presence flags (None: it has none, every row present) and rows
        self.present: list[np.ndarray | None] = []
        self.chunk_rows: list[int] = []
        self.has_nulls = False

    def _flags(self, upto: int | None = None) -> np.ndarray:
        """The presence flags of the chunks added (of the first ``upto``), joined."""
        flags = [p if p is not None else np.ones(k, bool)
                 for p, k in zip(self.present[:upto], self.chunk_rows[:upto])]
        return np.concatenate(flags) if len(flags) != 1 else flags[0]

    def add(self, parts: ChunkParts) -> None:
        """Append one decoded chunk."""
        row0, j = self.rows, len(self.chunk_rows)
        self.rows += parts.num_rows
        present = parts.present
        if present is None:
            nulls = False
        else:
            nulls = bool(parts.nulls) if parts.nulls is not None else not bool(present.all())
        self.present.append(present)
        self.chunk_rows.append(parts.num_rows)
        # the mask holds every chunk's flags while each came in its rows of it (FixedRegions)
        if self.mask is not None and (present is None or self.fixed_rows is None or present is not self.fixed_rows[j][1]):
            self.mask = None
        self.has_nulls = self.has_nulls or nulls
        if self.regions is not None:  # decoded in place: nothing to copy (finish checks them)
            self.region_parts.append(parts)
            return
        fixed = bool(parts.pieces) and all(type(p) is np.ndarray for p in parts.pieces)
        if not self.fallback and self.rows <= self.num_rows and fixed and self.n == 0 and self.pending is None \
                and self.data is None and self._place(parts, row0, present if nulls else None, j):
            return
        pieces = [_dense(parts.pieces[0], [] if present is None else [present])] if parts.placed \
            else list(parts.pieces)
        if self.fallback or self.rows > self.num_rows or self.out is not None or self.held is not None or fixed:
            self._to_fallback(row0)
            self.fallback.append(ChunkParts(pieces, None, 0))
            return
        for piece in pieces:
            # once a piece has fallen back, the rest follow it (the order of the values is kept)
            if self.fallback or not self._copy(piece):
                self.fallback.append(ChunkParts([piece], None, 0))

    def _place(self, parts: ChunkParts, row0: int, present: np.ndarray | None, j: int) -> bool:
        """Fixed-width pieces (of chunk ``j``) to their rows (False: they do not fit the buffer;
        nothing was written)."""
        pieces = parts.pieces
        first = pieces[0]
        if self.held is not None:
            return False
        if self.out is None and row0 == 0 and (present is None or parts.placed) and len(pieces) == 1 \
                and len(first) == parts.num_rows == self.num_rows and _owns_its_bytes(first):
            self.held = first  # the whole column: no copy
            return True
        if self.out is None:
            charge(self.num_rows * first.dtype.itemsize * int(np.prod(first.shape[1:], dtype=np.int64)),
                   f"the result buffer of column {self.f.name!r}")
            # every row is written below: values, or zeros at nulls (as place_nulls leaves them)
            self.out = pool.empty((self.num_rows,) + first.shape[1:], first.dtype)
        out = self.out
        if any(p.dtype != out.dtype or p.shape[1:] != out.shape[1:] for p in pieces):
            return False
        if parts.placed:
            # placed in the column's own rows (FixedRegions: the very view it was given), or copied there
            if self.fixed_rows is None or first is not self.fixed_rows[j][0]:
                out[row0:row0 + parts.num_rows] = first
            return True
        if present is None:
            if sum(len(p) for p in pieces) != parts.num_rows:
                raise CorruptFileError(f"column {self.f.name!r}: decoded {sum(len(p) for p in pieces)} values "
                                       f"for {parts.num_rows} rows without nulls")
            r = row0
            for p in pieces:
                out[r:r + len(p)] = p
                r += len(p)
            return True
        spans = parts.page_rows if parts.page_rows is not None and len(parts.page_rows) == len(pieces) else None
        if spans is None:  # pieces that are not the pages: one span (the join costs one chunk, not the column)
            pieces, spans = [pieces[0] if len(pieces) == 1 else concat_values(pieces, self.f)], [parts.num_rows]
        r = 0
        for p, k in zip(pieces, spans):
            scatter_nulls(p, present[r:r + k], 1, f"column {self.f.name!r}", out[row0 + r:row0 + r + k])
            r += k
        return True

    def _to_fallback(self, row0: int) -> None:
        """Fixed-width rows placed so far back to dense values: something did not fit after them."""
        head: Any = self.held if self.held is not None else self.out
        self.out = self.held = None
        if head is None or row0 == 0:
            return
        head = head[:row0]
        before = self._flags(-1)  # of the chunks before this one (row0 > 0: there are some)
        self.fallback.append(ChunkParts([head if bool(before.all()) else head[before]], None, 0))

    def _copy(self, piece: Any) -> bool:
        if not isinstance(piece, BinaryArray):
            return False
        if self.pending is None and self.data is None and self.n == 0:
            # held, not copied: a column of one chunk (decoded into one buffer by a BinarySink)
            # is this piece itself
            self.pending, self.n = piece, len(piece)
            return True
        if self.pending is not None:
            head, self.pending, self.n = self.pending, None, 0
            if not self._copy_binary(head):
                self.fallback.append(ChunkParts([head], None, 0))
                return False
        return self._copy_binary(piece)

    def _copy_binary(self, piece: BinaryArray) -> bool:
        k = len(piece)
        if self.data_bytes is None:
            return False
        if self.data is None:
            charge(self.data_bytes + 8 * (self.num_rows + 1), f"the result buffer of column {self.f.name!r}")
            self.data = pool.empty(self.data_bytes, np.uint8)
            self.offsets = pool.zeros(self.num_rows + 1, np.int64)
        c = piece.compact()
        if self.nbytes + c.nbytes > len(self.data) or self.n + k > self.num_rows:
            return False
        assert self.offsets is not None
        self.data[self.nbytes:self.nbytes + c.nbytes] = c.data
        np.add(c.offsets[1:], self.nbytes, out=self.offsets[self.n + 1:self.n + k + 1])
        self.nbytes += c.nbytes
        self.n += k
        return True

    def _in_regions(self) -> bool:
        """Whether every chunk filled its region exactly, one value per non-null row."""
        rg = self.regions
        assert rg is not None
        if len(self.region_parts) != len(rg.row_starts) - 1:
            return False
        for j, (parts, present) in enumerate(zip(self.region_parts, self.present)):
            rows = rg.row_starts[j + 1] - rg.row_starts[j]
            n_present = parts.num_rows if present is None else int(np.count_nonzero(present))
            sink = parts.region
            if sink is None:  # an empty chunk (no pages) fits an empty region only
                if rows or rg.byte_starts[j + 1] != rg.byte_starts[j] or parts.num_rows:
                    return False
                continue
            if parts.num_rows != rows or not sink.complete() or sink.start != rg.byte_starts[j] \
                    or sink.n != n_present:
                return False
        return True

    def _finish_regions(self) -> Column:
        rg = self.regions
        assert rg is not None
        if self._in_regions():
            # the entries between regions were written by two threads each: set once more here, from
            # the sizes every chunk was just checked to fill, so no thread's write order matters
            rg.offsets[rg.row_starts] = rg.byte_starts
            for j, (parts, present) in enumerate(zip(self.region_parts, self.present)):
                if parts.num_rows and parts.region is not None and parts.region.n != parts.num_rows \
                        and present is not None:
                    spread_offsets(rg.offsets[rg.row_starts[j]:rg.row_starts[j + 1] + 1], present, parts.region.n)
            values = BinaryArray(rg.offsets, rg.data)
            return Column(self.f, values, ~self._flags() if self.has_nulls else None)
        # statistics that lied: join each chunk's own values (never the entries shared with a neighbour)
        pieces = [p for parts in self.region_parts
                  for p in (parts.region.dense() if parts.region is not None else parts.pieces)]
        dense = concat_values(pieces, self.f)
        if not self.has_nulls:
            return Column(self.f, dense, None)
        present = self._flags()
        return Column(self.f, place_nulls(dense, present), ~present)

    def finish(self) -> Column:
        """The column of every chunk added, nulls placed."""
        if self.regions is not None:
            return self._finish_regions()
        if not self.fallback and (self.held is not None or self.out is not None):
            values: Any = self.held if self.held is not None else self.out
            values = values if self.rows == len(values) else values[:self.rows]
            if not self.has_nulls:
                return Column(self.f, values, None)
            if self.mask is not None and len(self.mask) == self.rows:  # the flags of every chunk, in place
                return Column(self.f, values, np.logical_not(self.mask, out=self.mask))
            return Column(self.f, values, ~self._flags())
        head: list[Any] = []
        if self.pending is not None:
            head.append(self.pending)
        elif self.data is not None and self.offsets is not None:
            head.append(BinaryArray(self.offsets[:self.n + 1], self.data[:self.nbytes]))
        if self.fallback:
            # something did not fit the fast path: join what was copied plus the rest
            dense = concat_values(head + [p for c in self.fallback for p in c.pieces], self.f)
        else:
            dense = head[0] if head else concat_values([], self.f)
        if not self.has_nulls:
            return Column(self.f, dense, None)
        present = self._flags()
        placed = _nulls_in_place(dense, present) if isinstance(dense, BinaryArray) else None
        return Column(self.f, place_nulls(dense, present) if placed is None else placed, ~present)
