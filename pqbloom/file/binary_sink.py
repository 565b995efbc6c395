"""One preallocated buffer for the byte-array values of a flat column chunk.

Without it every PLAIN page of a BYTE_ARRAY chunk decodes into its own offsets + data, and the
column is then copied once more to join the pages. With it each PLAIN page decodes straight into
the chunk's buffer at its place (the compiled PLAIN kernel writes there directly), other pages
(dictionary-encoded, DELTA_*) are copied in, and the chunk ends as one BinaryArray: one copy of
the values fewer. Its size comes from the chunk's SizeStatistics (exact), or, for a chunk with no
dictionary, from its uncompressed size (an upper bound: a PLAIN value costs its bytes plus a
4-byte prefix). When the values do not fit (statistics that lie), the rest of the chunk is kept as
separate pieces, as without a sink: the sink can make a read slower, never wrong.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..arrays import BinaryArray
from ..format.enums import Encoding, PhysicalType
from ..kernels.binary import decode_plain_byte_array_into, take_binary_into
from ..limits import charge
from ..memory import pool
from ..schema import ColumnDescriptor

__all__ = ["BinarySink"]

#: below this many values, and below MIN_BYTES stored, a chunk gains nothing worth the bookkeeping
MIN_VALUES = 4096
#: a chunk of fewer values but this many stored bytes (a few long values a page, many pages) gains
#: the join of its pages
MIN_BYTES = 1 << 16
#: a capacity claimed beyond this many times the stored chunk is not believed (no sink)
MAX_EXPANSION = 64


class BinarySink:
    """Values of one chunk, in page order, in one offsets + data buffer (see the module doc).

    The buffers are the sink's own (:meth:`for_chunk`), or a chunk's region of a whole column's
    (:meth:`in_column`): offsets ``[0, count]`` of the region and bytes ``[start, end)`` of the
    column's data, the offsets counting from the column's first byte."""

    def __init__(self, num_values: int, capacity: int) -> None:
        charge(capacity + 8 * (num_values + 1), f"the value buffer of a column chunk of {num_values:,} values")
        self.offsets = pool.empty(num_values + 1, np.int64)
        self.data = pool.empty(capacity, np.uint8)
        self._start(0, capacity)

    def _start(self, start: int, end: int) -> None:
        self.offsets[0] = start
        self.start = start  # where the chunk's bytes begin in ``data``
        self.pos = start  # where the next value's bytes go
        self.end = end  # the end of the room
        self.n = 0  # values so far
        self.rest: list[Any] = []  # pieces after the first that did not fit (kept in order)
        self.last: BinaryArray | None = None  # the piece decode_plain returned last
        self.shared = False  # the buffers are a column's (in_column)

    @classmethod
    def in_column(cls, offsets: np.ndarray, data: np.ndarray, start: int, end: int) -> BinarySink:
        """A sink writing into a region of a column's buffers (allocated and charged by the caller):
        at most ``len(offsets) - 1`` values, their bytes in ``data[start:end]``."""
        sink = cls.__new__(cls)
        sink.offsets, sink.data = offsets, data
        sink._start(start, end)
        sink.shared = True
        return sink

    @property
    def nbytes(self) -> int:
        """Value bytes written so far."""
        return self.pos - self.start

    @classmethod
    def for_chunk(cls, meta: Any, desc: ColumnDescriptor, stored_bytes: int, *,
                  nested: bool = False) -> BinarySink | None:
        """A sink for a flat BYTE_ARRAY chunk of known value size, else None. With ``nested``, also for
        a leaf of a nested column (its values are at most its ``num_values`` level entries)."""
        n = meta.num_values
        if desc.physical_type != PhysicalType.BYTE_ARRAY or (desc.max_repetition_level > 0 and not nested) \
                or n is None or (n < MIN_VALUES and stored_bytes < MIN_BYTES):
            return None
        ss = meta.size_statistics
        cap = ss.unencoded_byte_array_data_bytes if ss is not None else None
        if cap is None:
            dict_encoded = meta.dictionary_page_offset is not None or any(
                e in (Encoding.PLAIN_DICTIONARY, Encoding.RLE_DICTIONARY) for e in meta.encodings or ())
            cap = None if dict_encoded else meta.total_uncompressed_size
        if cap is None or cap < 0 or cap > MAX_EXPANSION * max(stored_bytes, 1 << 16):
            return None
        return cls(n, cap)

    def decode_plain(self, buf: Any, count: int) -> tuple[BinaryArray, int] | None:
        """Decode ``count`` PLAIN values of ``buf`` in place: (a view of them, bytes used), or None
        when they do not fit (the caller decodes them the usual way and :meth:`add` keeps them)."""
        if self.rest or self.n + count > len(self.offsets) - 1:
            return None
        got = decode_plain_byte_array_into(buf, count, self.offsets[self.n:self.n + count + 1],
                                                   self.data[self.pos:self.end], self.pos)
        if got is None:
            self.offsets[self.n] = self.pos  # the failed attempt overwrote it
            return None
        size, used = got
        piece = BinaryArray.wrap(self.offsets[self.n:self.n + count + 1], self.data)
        self.n += count
        self.pos += size
        self.last = piece
        return piece, used

    def take(self, dictionary: Any, indices: np.ndarray) -> bool:
        """Expand a page's dictionary ``indices`` straight into the buffers (True), or do nothing
        (False: not byte arrays, or they do not fit; the caller expands them and :meth:`add` keeps
        them). A bad index raises as the dictionary expansion does."""
        k = len(indices)
        if self.rest or not isinstance(dictionary, BinaryArray) or self.n + k > len(self.offsets) - 1:
            return False
        got = take_binary_into(dictionary, indices, self.offsets[self.n:self.n + k + 1],
                                       self.data[self.pos:self.end], self.pos)
        if got is None:
            self.offsets[self.n] = self.pos  # the failed attempt overwrote it
            return False
        self.n += k
        self.pos += got
        return True

    def add(self, values: Any) -> None:
        """Append a decoded piece (a no-op for the piece :meth:`decode_plain` just returned, which a
        caller may also skip by testing ``values is sink.last``)."""
        if values is self.last:
            self.last = None
            return
        k = len(values)
        if not self.rest and isinstance(values, BinaryArray) and self.n + k <= len(self.offsets) - 1:
            c = values.compact()
            if self.pos + len(c.data) <= self.end:
                self.data[self.pos:self.pos + len(c.data)] = c.data
                np.add(c.offsets[1:], self.pos, out=self.offsets[self.n + 1:self.n + k + 1])
                self.n += k
                self.pos += len(c.data)
                return
        self.rest.append(values)

    def complete(self) -> bool:
        """Whether every value landed in the buffers, filling the room exactly (a column's region:
        the chunk is in place, and its neighbours' regions are untouched)."""
        return not self.rest and self.pos == self.end

    def dense(self) -> list[Any]:
        """A column's region, once every chunk of the column is decoded: the values as
        :meth:`pieces`, their offsets copied, the shared first and last entries from this sink's
        own count (a neighbour whose statistics lied may have written another value there)."""
        if not self.n:
            return list(self.rest)
        offsets = self.offsets[:self.n + 1].copy()
        offsets[0], offsets[-1] = self.start, self.pos
        return [BinaryArray(offsets, self.data)] + self.rest

    def pieces(self) -> list[Any]:
        """The chunk's values: one BinaryArray for all that fit, then the pieces that did not."""
        if self.shared:
            # a view of the column's buffers, offsets counting from the column's first byte. Its first
            # and last entries are shared with the neighbouring regions, which other threads may still
            # be writing: only the column's builder, once every chunk is done, may rely on it
            # (:meth:`dense`)
            return ([BinaryArray(self.offsets[:self.n + 1], self.data)] if self.n else []) + self.rest
        head = self.data[:self.pos]
        if len(self.data) - self.pos > max(self.pos // 4, 1 << 16):  # an upper bound far off: do
            head = head.copy()  # not keep the unused tail allocated with the column
        first = BinaryArray(self.offsets[:self.n + 1], head)
        return ([first] if self.n else []) + self.rest
