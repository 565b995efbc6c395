"""The dense values of a nested leaf chunk, gathered as its pages decode.

Fixed-width values are copied page by page into one buffer with a slot per level entry of the
chunk: room for every value the chunk can hold, and for assembly to place the nulls among them in
place (:func:`pqbloom.file.levels.assemble`). The chunk then costs its values and one page, not
its pages plus a joined copy of them. Byte arrays decoded without a sink, and pages that do not
fit the buffer (a type that changes within the chunk), are kept as pieces and joined at the end.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..limits import charge
from ..schema import Field
from .column_reader import assemble_values, concat_values, expand_dictionary

__all__ = ["LeafValues"]


class LeafValues:
    """Gathers the decoded pages of one leaf chunk of ``entries`` level entries; ``room=False``
    (a count the chunk's bytes could not plausibly hold) keeps every page as a piece."""

    __slots__ = ("f", "entries", "placing", "room", "count", "parts")

    def __init__(self, f: Field, entries: int, room: bool = True) -> None:
        self.f, self.entries = f, entries
        self.placing = room  # pages still go into the room (until one does not fit)
        self.room: np.ndarray | None = None  # the buffer, once made
        self.count = 0  # values at its head
        self.parts: list[tuple[str, Any]] = []  # pieces, once placing has stopped

    def add(self, kind: str, values: Any, dictionary: Any) -> None:
        """One page's values: ``("values", array)`` or ``("dict", indices)`` into ``dictionary``."""
        if self.placing:
            if kind == "dict" and type(dictionary) is np.ndarray:
                kind, values = "values", expand_dictionary(dictionary, values)
            if kind == "values" and type(values) is np.ndarray and not values.dtype.hasobject \
                    and self._fits(values):
                return
            self.placing = False
            if self.room is not None:  # placement stops here: the head becomes the first piece
                self.parts.append(("values", self.room[:self.count]))
                self.room = None
        self.parts.append((kind, values))

    def _fits(self, values: np.ndarray) -> bool:
        room = self.room
        if room is None:
            row = values.dtype.itemsize * int(np.prod(values.shape[1:], dtype=np.int64))
            charge(self.entries * row, f"the values of a column chunk of {self.entries:,} level entries")
            room = self.room = np.empty((self.entries,) + values.shape[1:], values.dtype)
        n = len(values)
        if values.dtype != room.dtype or values.shape[1:] != room.shape[1:] or self.count + n > len(room):
            return False
        room[self.count:self.count + n] = values
        self.count += n
        return True

    def finish(self, dictionary: Any, keep_room: bool) -> tuple[Any, np.ndarray | None]:
        """(values, room): with ``keep_room``, the values are the head of the room returned with
        them, for assembly to place in; else the room is cut to the values (no room returned)."""
        if self.room is None:
            return concat_values(assemble_values(self.f, self.parts, None, dictionary, self.entries).pieces,
                                 self.f), None
        room, self.room = self.room, None
        if keep_room:
            return room[:self.count], room
        if self.count != len(room):
            try:  # realloc: a large buffer shrinks where it is, without a copy
                room.resize((self.count,) + room.shape[1:], refcheck=True)
            except ValueError:
                return room[:self.count], None
        return room, None
