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

from .. import kernels
from ..arrays import BinaryArray
from ..format import T
from ..format.enums import Encoding, PhysicalType
from ..limits import charge
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
    """Values of one chunk, in page order, in one offsets + data buffer (see the module doc)."""

    def __init__(self, num_values: int, capacity: int) -> None:
        charge(capacity + 8 * (num_values + 1), f"the value buffer of a column chunk of {num_values:,} values")
        self.offsets = np.empty(num_values + 1, np.int64)
        self.offsets[0] = 0
        self.data = np.empty(capacity, np.uint8)
        self.n = 0  # values so far
        self.nbytes = 0
        self.rest: list[Any] = []  # pieces after the first that did not fit (kept in order)
        self.last: BinaryArray | None = None  # the piece decode_plain returned last

    @classmethod
    def for_chunk(cls, meta: T.ColumnMetaData, desc: ColumnDescriptor, stored_bytes: int, *,
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
        got = kernels.decode_plain_byte_array_into(buf, count, self.offsets[self.n:self.n + count + 1],
                                                   self.data[self.nbytes:], self.nbytes)
        if got is None:
            self.offsets[self.n] = self.nbytes  # the failed attempt overwrote it
            return None
        size, used = got
        piece = BinaryArray.wrap(self.offsets[self.n:self.n + count + 1], self.data)
        self.n += count
        self.nbytes += size
        self.last = piece
        return piece, used

    def add(self, values: Any) -> None:
        """Append a decoded piece (a no-op for the piece :meth:`decode_plain` just returned, which a
        caller may also skip by testing ``values is sink.last``)."""
        if values is self.last:
            self.last = None
            return
        k = len(values)
        if not self.rest and isinstance(values, BinaryArray) and self.n + k <= len(self.offsets) - 1:
            c = values.compact()
            if self.nbytes + len(c.data) <= len(self.data):
                self.data[self.nbytes:self.nbytes + len(c.data)] = c.data
                np.add(c.offsets[1:], self.nbytes, out=self.offsets[self.n + 1:self.n + k + 1])
                self.n += k
                self.nbytes += len(c.data)
                return
        self.rest.append(values)

    def pieces(self) -> list[Any]:
        """The chunk's values: one BinaryArray for all that fit, then the pieces that did not."""
        head = self.data[:self.nbytes]
        if len(self.data) - self.nbytes > max(self.nbytes // 4, 1 << 16):  # an upper bound far off: do
            head = head.copy()  # not keep the unused tail allocated with the column
        first = BinaryArray(self.offsets[:self.n + 1], head)
        return ([first] if self.n else []) + self.rest
