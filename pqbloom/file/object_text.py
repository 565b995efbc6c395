"""The text pyarrow prints for its Parquet metadata objects (``print(pf.metadata)``, ``print(stats)``):
a header naming the object, then one ``name: value`` line per member, indented; nested objects (a
chunk's statistics) are indented under their member's name. pqbloom's metadata objects use it as their
``repr``, so what a pyarrow.parquet script prints reads the same, the header's class name aside."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

__all__ = ["object_text"]


def object_text(obj: Any, name: str, members: Sequence[tuple[str, Any]]) -> str:
    """``<pqbloom.NAME object at 0x...>`` and a ``  member: value`` line per member; a value that is a
    multi-line text (a nested object's) goes on the lines below its member's name, indented by four."""
    lines = [f"<pqbloom.{name} object at {id(obj):#x}>"]
    for key, value in members:
        text = repr(value) if isinstance(value, tuple) else str(value)
        if "\n" in text or key in ("statistics", "geo_statistics"):
            lines.append(f"  {key}:")
            lines.extend(f"    {line}" for line in text.split("\n"))
        else:
            lines.append(f"  {key}: {text}")
    return "\n".join(lines)
