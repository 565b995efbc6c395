"""What pyarrow's ``Schema`` and ``Field`` answer, on pqbloom's :class:`~pqbloom.schema.Schema` and
:class:`~pqbloom.schema.Field`: ``metadata`` (bytes to bytes), ``pandas_metadata``, ``types``,
``field(i)``, ``get_field_index``, ``equals`` and ``Field.type`` (a ``pyarrow.DataType``).

The Arrow types come from the table layer's conversion (:mod:`pqbloom.table.arrow_file_schema`, installed
with :func:`set_arrow_conversion` when :mod:`pqbloom.table` is imported): they need pyarrow, and say an
ImportError naming it otherwise. A schema that knows its key-value metadata and the Arrow types its data
came with (a table's, a file's) gives those types: time zones, durations, dictionaries, large strings.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from typing import Any

__all__ = ["ArrowConversion", "set_arrow_conversion", "to_arrow_schema", "ArrowSchemaFace"]

#: (top-level fields, key-value metadata (str -> str), the Arrow types the data came with) -> pyarrow.Schema
ArrowConversion = Callable[[Sequence[Any], Mapping[str, str | None] | None, Any], Any]

_conversion: ArrowConversion | None = None


def set_arrow_conversion(fn: ArrowConversion) -> None:
    """Install the function that makes a ``pyarrow.Schema`` of fields (pqbloom.table does, on import)."""
    global _conversion
    _conversion = fn


def to_arrow_schema(fields: Sequence[Any], metadata: Mapping[str, str | None] | None = None, hints: Any = None) -> Any:
    """The ``pyarrow.Schema`` pyarrow reads for a file of ``fields`` (see :meth:`Schema.to_arrow`)."""
    if _conversion is None:
        raise ImportError("Arrow types need pqbloom.table (import pqbloom) and pyarrow")
    return _conversion(fields, metadata, hints)


class ArrowSchemaFace:
    """pyarrow's ``Schema`` members, for :class:`~pqbloom.schema.Schema` (its ``fields``, and the
    key-value metadata and Arrow types a table or file gave it)."""

    fields: list[Any]
    _kv: dict[str, str] | None
    _hints: Any
    _arrow: Any

    def to_arrow(self, metadata: Mapping[str, str | None] | None = None) -> Any:
        """The ``pyarrow.Schema`` pyarrow reads for a file of this schema (needs pyarrow: ImportError
        otherwise). ``metadata``: the file's key-value metadata; its ``ARROW:schema``, when present,
        refines the types as pyarrow's reader does (time zones, durations, dictionaries), and the
        rest becomes the schema's metadata. Without it, the schema's own (a table's or a file's)."""
        if metadata is not None:
            return to_arrow_schema(self.fields, metadata)
        if self._arrow is None:
            self._arrow = to_arrow_schema(self.fields, self._kv, self._hints)
        return self._arrow

    @property
    def arrow_hints(self) -> Any:
        """The Arrow types the data came with (the table layer's ``ArrowSchema``), or None."""
        return self._hints

    @property
    def key_value_metadata(self) -> dict[str, str]:
        """The key-value metadata that goes with the schema (a table's or a file's), as text."""
        return dict(self._kv or {})

    @property
    def metadata(self) -> dict[bytes, bytes] | None:
        """The metadata as pyarrow's ``Schema.metadata`` gives it: bytes to bytes, None when there is none."""
        if not self._kv:
            return None
        return {k.encode(): (v or "").encode() for k, v in self._kv.items()}

    @property
    def pandas_metadata(self) -> dict[str, Any] | None:
        """pandas' metadata (the ``"pandas"`` key, decoded), as pyarrow's ``Schema.pandas_metadata``."""
        text = (self._kv or {}).get("pandas")
        return json.loads(text) if text else None

    @property
    def types(self) -> list[Any]:
        """The fields' Arrow types (``pyarrow.DataType``; needs pyarrow)."""
        return list(self.to_arrow().types)

    def get_field_index(self, name: str) -> int:
        """The position of the field named ``name``; -1 when there is none or several (as pyarrow)."""
        hits = [i for i, f in enumerate(self.fields) if f.name == name]
        return hits[0] if len(hits) == 1 else -1

    def arrow_type(self, name: str) -> Any:
        """The Arrow type of the field named ``name``."""
        return self.to_arrow().field(name).type

    def equals(self, other: Any, check_metadata: bool = False) -> bool:
        """Whether ``other`` (a pqbloom or pyarrow schema) has the same fields (and metadata with
        ``check_metadata``), compared as pyarrow compares schemas."""
        if isinstance(other, ArrowSchemaFace) and not check_metadata:
            return self.fields == other.fields
        theirs = other.to_arrow() if isinstance(other, ArrowSchemaFace) else other
        return bool(self.to_arrow().equals(theirs, check_metadata=check_metadata))

    def to_string(self, truncate_metadata: bool = True, show_field_metadata: bool = True,
                  show_schema_metadata: bool = True) -> str:
        """pyarrow's ``Schema.to_string`` of this schema (needs pyarrow)."""
        return str(self.to_arrow().to_string(truncate_metadata=truncate_metadata,
                                             show_field_metadata=show_field_metadata,
                                             show_schema_metadata=show_schema_metadata))

    def __str__(self) -> str:
        """pyarrow's text of the schema when pyarrow is installed (``print(table.schema)`` prints what
        it prints with pyarrow), else :func:`repr`."""
        try:
            return str(self.to_arrow())
        except Exception:  # noqa: BLE001 - no pyarrow, or a type it cannot show: pqbloom's own text
            return repr(self)
