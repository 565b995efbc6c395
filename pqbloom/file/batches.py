"""A file's rows in batches of exactly ``batch_size`` rows, across row groups, as pyarrow's
``ParquetFile.iter_batches`` cuts them (a file of five row groups of 1,000 rows read by 1,500 gives
1,500, 1,500, 1,500 and 500).

Each row group is decoded page by page and cut by row count (:class:`~pqbloom.file.column_reader.RowQueue`;
a nested column is assembled one row group at a time, :class:`~pqbloom.file.column_reader.NestedQueue`);
the rows a row group ends with, fewer than a batch, wait for the next row group's first rows. Every row
group is checked on its own: its columns must agree on its row count, so a damaged row group can never
shift one column's rows against another's. Memory stays bounded by the batch, one decoded page per column
and the compressed bytes of the current column chunks (a nested column: its row group's column).
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any, Protocol

from ..errors import CorruptFileError
from ..schema import ColumnDescriptor
from ..table import Column, Table
from .column_reader import NestedQueue, NestedSelection, RowQueue

__all__ = ["BatchSource", "iter_batches"]


class BatchSource(Protocol):
    """What batching reads of a :class:`~pqbloom.file.reader.FileReader`."""

    def row_group_rows(self, rg: int) -> int: ...

    def read_nested(self, rg: int, sel: NestedSelection) -> Column: ...

    def iter_chunk_pages(self, rg: int, desc: ColumnDescriptor) -> Iterator[tuple[Any, Any]]: ...


def iter_batches(reader: BatchSource, descs: Sequence[Any], row_groups: Sequence[int], batch_size: int) -> Iterator[Table]:
    """Tables of ``batch_size`` rows (the last may be shorter) of the columns ``descs`` (from
    ``reader.select_columns``) of ``row_groups``, in that order."""
    carry: Table | None = None  # the last row group's tail, fewer rows than a batch
    for i in row_groups:
        first = batch_size - (carry.num_rows if carry is not None else 0)
        for piece in _row_group_pieces(reader, i, descs, batch_size, first):
            if carry is not None:
                piece = Table.concat([carry, piece])
                carry = None
            if piece.num_rows == batch_size:
                yield piece
            else:  # a row group's last rows: the next row group completes the batch
                carry = piece
    if carry is not None and carry.num_rows:
        yield carry


def _row_group_pieces(reader: BatchSource, i: int, descs: Sequence[Any], batch_size: int,
                      first: int) -> Iterator[Table]:
    """Row group ``i`` cut into a first piece of at most ``first`` rows, then pieces of ``batch_size``."""
    expected = reader.row_group_rows(i)
    want = first
    if not descs:  # no columns: rows only
        start = 0
        while start < expected:
            n = min(want, expected - start)
            yield Table([], num_rows=n)
            start, want = start + n, batch_size
        return
    streams = [iter([(reader.read_nested(i, d),)]) if isinstance(d, NestedSelection)
               else reader.iter_chunk_pages(i, d) for d in descs]
    queues = [NestedQueue() if isinstance(d, NestedSelection) else RowQueue(d.field) for d in descs]
    emitted = 0
    while True:
        for q, stream in zip(queues, streams):
            while q.rows < want and not q.exhausted:
                page = next(stream, None)
                if page is None:
                    q.exhausted = True
                else:
                    q.push(*page)
        n = min(min(q.rows for q in queues), want)
        if n == 0:
            if any(q.rows for q in queues) or emitted != expected:
                raise CorruptFileError("columns disagree on the row count", row_group=i)
            return
        emitted += n
        if emitted > expected:
            raise CorruptFileError(f"columns hold more rows than the row group's {expected}", row_group=i)
        yield Table([q.pop(n) for q in queues])
        want = batch_size
