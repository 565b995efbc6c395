"""The row order of ``Table.sort_by``, as pyarrow's (stable; nulls last, or first with
``null_placement="at_start"``; NaN sorts as the largest number)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from .column import Column, NestedColumn

__all__ = ["sort_indices", "sort_keys"]

_ORDERS = ("ascending", "descending")


def sort_keys(sorting: str | Sequence[Any]) -> list[tuple[str, str]]:
    """``(column, "ascending" | "descending")`` pairs of pyarrow's ``sorting`` argument: a column name (ascending)
    or a list of names and ``(name, order)`` pairs."""
    if isinstance(sorting, str):
        return [(sorting, "ascending")]
    keys: list[tuple[str, str]] = []
    for key in sorting:
        if isinstance(key, str):
            keys.append((key, "ascending"))
        elif isinstance(key, (tuple, list)) and len(key) == 2 and isinstance(key[0], str) and key[1] in _ORDERS:
            keys.append((key[0], key[1]))
        else:
            raise ValueError(f"a sort key is a column name or (name, 'ascending' | 'descending'), not {key!r}")
    if not keys:
        raise ValueError("sort_by needs at least one key")
    return keys


def _codes(col: Column, descending: bool, nulls_first: bool) -> np.ndarray:
    """Integer sort codes of ``col``'s rows: equal values equal codes, in the order asked for."""
    if isinstance(col, NestedColumn):
        raise TypeError(f"column {col.field.name!r} is {col.field.type_name}: only primitive columns can be sort keys")
    values = col.to_numpy()
    null = np.zeros(len(col), bool) if col.mask is None else col.mask
    dense = values[~null]
    codes = np.empty(len(values), np.int64)
    if len(dense):
        _, inverse = np.unique(dense, return_inverse=True)
        inverse = inverse.astype(np.int64).reshape(-1)
        top = int(inverse.max()) if len(inverse) else 0
        codes[~null] = top - inverse if descending else inverse
    else:
        top = 0
    codes[null] = -1 if nulls_first else top + 1
    return codes


def sort_indices(columns: Sequence[Column], keys: Sequence[tuple[str, str]], null_placement: str) -> np.ndarray:
    """The row positions that put the rows in the order of ``keys`` (stable: ties keep their order)."""
    if null_placement not in ("at_end", "at_start"):
        raise ValueError(f"null_placement must be 'at_end' or 'at_start', not {null_placement!r}")
    by_name = {c.field.name: c for c in columns}
    codes = []
    for name, order in keys:
        if name not in by_name:
            raise KeyError(f"no column {name!r} to sort by; columns are {list(by_name)}")
        codes.append(_codes(by_name[name], order == "descending", null_placement == "at_start"))
    return np.lexsort(tuple(reversed(codes))) if codes else np.arange(0)
