"""A file's bytes before its footer, copied with byte ranges inserted, deleted or replaced: :class:`Splice`.

Editing a finished Parquet file (adding or removing Bloom filters: :mod:`pqbloom.file.add_bloom`) keeps
every page byte for byte and changes only what lies around them. A :class:`Splice` records the edits,
maps any offset of the original file to where the same byte lies in the new one (:meth:`Splice.new_offset`:
the footer's offsets are rewritten with it), and copies the original bytes with the edits applied
(:meth:`Splice.write`). It knows nothing of Parquet: which ranges may move is the caller's business.

An insertion at ``p`` goes before the original byte ``p`` (so whatever started at ``p`` moves after it);
an offset inside a deleted or replaced range maps to where the range's replacement starts.
"""

from __future__ import annotations

from bisect import bisect_right, insort
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

__all__ = ["Splice", "COPY_BLOCK"]

#: bytes copied per read
COPY_BLOCK = 8 << 20


@dataclass
class Splice:
    """Edits of the bytes ``[0, end)`` of a file (``end``: where its footer starts)."""

    end: int
    #: position -> the byte strings inserted there, in order
    inserts: dict[int, list[bytes]] = field(default_factory=dict)
    #: (start, end) -> the bytes that replace them (empty: a deletion)
    replaces: dict[tuple[int, int], bytes] = field(default_factory=dict)
    _frozen: tuple[np.ndarray, np.ndarray, list[tuple[int, int]]] | None = None
    #: the replaced ranges in start order (overlap checks by bisection)
    _sorted: list[tuple[int, int]] = field(default_factory=list)
    #: position -> cumulative lengths of its insertions (for :meth:`inserted_offset`)
    _group_ends: dict[int, list[int]] = field(default_factory=dict)

    def insert(self, at: int, data: bytes) -> int:
        """Insert ``data`` before the original byte ``at``, after what was inserted there before; the index
        of this insertion at ``at`` (for :meth:`inserted_offset`)."""
        if not 0 < at <= self.end:
            raise ValueError(f"insertion at {at} outside (0, {self.end}]")
        self._frozen = None
        group = self.inserts.setdefault(at, [])
        group.append(bytes(data))
        ends = self._group_ends.setdefault(at, [])
        ends.append((ends[-1] if ends else 0) + len(data))
        return len(group) - 1

    def replace(self, start: int, end: int, data: bytes = b"") -> None:
        """Replace the original bytes ``[start, end)`` by ``data`` (nothing: delete them)."""
        if not 0 < start < end <= self.end:
            raise ValueError(f"range [{start}, {end}) outside (0, {self.end}]")
        # the neighbours in start order are the only ranges it can overlap (those recorded do not overlap)
        j = bisect_right(self._sorted, (start, 1 << 62))
        for s, e in self._sorted[max(0, j - 1):j + 1]:
            if s < end and start < e:
                raise ValueError(f"range [{start}, {end}) overlaps the edited range [{s}, {e})")
        self._frozen = None
        insort(self._sorted, (start, end))
        self.replaces[(start, end)] = bytes(data)

    def delete(self, start: int, end: int) -> None:
        """Drop the original bytes ``[start, end)``."""
        self.replace(start, end, b"")

    # -- offsets ------------------------------------------------------------------------------
    def _tables(self) -> tuple[np.ndarray, np.ndarray, list[tuple[int, int]]]:
        """(positions, cumulative shift from each position on, sorted edited ranges)."""
        if self._frozen is None:
            for p in self.inserts:
                j = bisect_right(self._sorted, (p, 1 << 62)) - 1
                if j >= 0 and self._sorted[j][0] < p < self._sorted[j][1]:
                    s, e = self._sorted[j]
                    raise ValueError(f"insertion at {p} inside the edited range [{s}, {e})")
            events: dict[int, int] = {}
            for p, group in self.inserts.items():
                events[p] = events.get(p, 0) + sum(len(d) for d in group)
            for (s, e), data in self.replaces.items():
                events[e] = events.get(e, 0) + len(data) - (e - s)
            pos = np.array(sorted(events), dtype=np.int64)
            shift = np.cumsum(np.array([events[int(p)] for p in pos], dtype=np.int64))
            self._frozen = (pos, shift, list(self._sorted))
        return self._frozen

    def new_offsets(self, offsets: Any) -> np.ndarray:
        """:meth:`new_offset` of many offsets at once (an int64 array)."""
        pos, shift, ranges = self._tables()
        o = np.asarray(offsets, dtype=np.int64)
        if ranges:  # an offset inside an edited range maps to the range's start
            starts = np.array([s for s, _ in ranges], dtype=np.int64)
            ends = np.array([e for _, e in ranges], dtype=np.int64)
            i = np.searchsorted(starts, o, side="right") - 1
            inside = (i >= 0) & (o < ends[np.maximum(i, 0)])
            o = np.where(inside, starts[np.maximum(i, 0)], o)
        if not len(pos):
            return o
        i = np.searchsorted(pos, o, side="right") - 1
        return o + np.where(i >= 0, shift[np.maximum(i, 0)], 0)

    def new_offset(self, offset: int) -> int:
        """Where the original byte ``offset`` lies in the new file (an offset at or past :attr:`end`, the
        footer's, moves with everything else)."""
        pos, shift, ranges = self._tables()
        if ranges:
            j = bisect_right(ranges, (offset, 1 << 62)) - 1
            if j >= 0 and ranges[j][0] <= offset < ranges[j][1]:
                offset = ranges[j][0]
        i = int(np.searchsorted(pos, offset, side="right")) - 1
        return offset + (int(shift[i]) if i >= 0 else 0)

    def inserted_offset(self, at: int, index: int) -> int:
        """Where the ``index``-th insertion at ``at`` starts in the new file."""
        ends = self._group_ends[at]
        return self.new_offset(at) - ends[-1] + (ends[index - 1] if index else 0)

    @property
    def new_end(self) -> int:
        """Where the new footer starts."""
        return self.new_offset(self.end)

    @property
    def moves(self) -> bool:
        """Whether any original byte before :attr:`end` moves or changes (an insertion at :attr:`end` moves
        only the footer, which is written anew)."""
        return bool(self.replaces) or any(p < self.end and any(group) for p, group in self.inserts.items())

    # -- bytes --------------------------------------------------------------------------------
    def write(self, read: Callable[[int, int], bytes], write: Callable[[bytes], Any]) -> int:
        """Copy the original bytes (``read(offset, length)``) to ``write`` with the edits applied; the
        bytes written (:attr:`new_end`)."""
        self._tables()  # checks the edits fit together
        ops: list[tuple[int, int, int, bytes]] = []  # (position, 0 insert / 1 replace, end, data)
        for p, group in self.inserts.items():
            ops.extend((p, 0, p, d) for d in group)
        ops.extend((s, 1, e, d) for (s, e), d in self.replaces.items())
        ops.sort(key=lambda op: (op[0], op[1]))
        cur = written = 0
        for p, _, e, data in ops:
            written += _copy(read, write, cur, p)
            if data:
                write(data)
                written += len(data)
            cur = max(cur, e)
        written += _copy(read, write, cur, self.end)
        return written


def _copy(read: Callable[[int, int], bytes], write: Callable[[bytes], Any], start: int, end: int) -> int:
    """Copy the original bytes ``[start, end)`` in blocks of :data:`COPY_BLOCK`."""
    pos = start
    while pos < end:
        n = min(COPY_BLOCK, end - pos)
        data = read(pos, n)
        if len(data) != n:
            raise OSError(f"read {len(data)} bytes at offset {pos}, expected {n}")
        write(data)
        pos += n
    return max(0, end - start)
