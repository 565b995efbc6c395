"""``sorting_columns``: the row order a writer declares in each row group (``RowGroup.sorting_columns``).

:class:`SortingColumn` is named and shaped as pyarrow's ``pyarrow.parquet.SortingColumn``
(``column_index`` is the index of the leaf column in the file's schema). The writer states what the
caller says; it does not sort or check the data.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from ..errors import SchemaError
from ..format import sorting_columns
from ..schema import ColumnDescriptor

__all__ = ["SortingColumn", "resolve_sorting_columns", "sorting_columns_from_thrift", "sorting_columns_struct"]


@dataclass(frozen=True)
class SortingColumn:
    """One key of a row group's sort order: the leaf column at ``column_index``, descending or not, and
    whether nulls come first."""

    column_index: int
    descending: bool = False
    nulls_first: bool = False


_ORDERS = {"ascending": False, "descending": True}


def resolve_sorting_columns(spec: Any, leaves: Sequence[ColumnDescriptor]) -> list[SortingColumn] | None:
    """The :class:`SortingColumn` list of a ``sorting_columns`` option (None when not given).

    Each key is a column name (a top-level primitive column or a leaf's dotted path; ascending, nulls
    last), a ``(name, "ascending" | "descending")`` tuple, or an object with ``column_index``,
    ``descending`` and ``nulls_first`` (pyarrow's ``SortingColumn``). Raises
    :class:`~pqbloom.errors.SchemaError` for a name or index the schema does not have and ValueError for
    an unknown order.
    """
    if spec is None:
        return None
    if isinstance(spec, (str, bytes)) or hasattr(spec, "column_index"):
        spec = [spec]
    by_path = {d.dotted_path: i for i, d in enumerate(leaves)}
    out: list[SortingColumn] = []

    def index_of(name: str) -> int:
        if name not in by_path:
            raise SchemaError(f"sorting_columns names {name!r}, which is not a leaf column "
                              f"(leaves: {list(by_path)[:20]})")
        return by_path[name]

    for key in spec:
        if isinstance(key, str):
            out.append(SortingColumn(index_of(key)))
        elif isinstance(key, tuple) and len(key) == 2 and isinstance(key[0], str):
            order = str(key[1]).lower()
            if order not in _ORDERS:
                raise ValueError(f"sort order must be 'ascending' or 'descending', got {key[1]!r}")
            out.append(SortingColumn(index_of(key[0]), _ORDERS[order]))
        elif hasattr(key, "column_index"):
            idx = int(key.column_index)
            if not 0 <= idx < len(leaves):
                raise SchemaError(f"sorting column index {idx} is out of range: the schema has {len(leaves)} "
                                  f"leaf columns")
            out.append(SortingColumn(idx, bool(getattr(key, "descending", False)),
                                     bool(getattr(key, "nulls_first", False))))
        else:
            raise ValueError(f"bad sorting column {key!r}: use a name, (name, 'ascending'|'descending') or a "
                             f"SortingColumn")
    return out


def sorting_columns_struct(cols: Sequence[SortingColumn] | None) -> list[Any] | None:
    """The footer's ``RowGroup.sorting_columns`` structs (None when no order is declared)."""
    return sorting_columns([(c.column_index, c.descending, c.nulls_first) for c in cols or ()])


def sorting_columns_from_thrift(raw: Sequence[Any] | None) -> tuple[SortingColumn, ...]:
    """What a footer's ``RowGroup.sorting_columns`` declares (empty when nothing)."""
    return tuple(SortingColumn(int(c.column_idx), bool(c.descending), bool(c.nulls_first)) for c in raw or ())
