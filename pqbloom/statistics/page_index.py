"""Page indexes: what the ColumnIndex of a chunk holds (write side: its boundary order, counts and
histograms; the OffsetIndex is only page locations, built by :func:`pqbloom.format.offset_index`), and the
rules a reader applies before a ColumnIndex drives pruning (read side): consistency checks and decoded page
bounds, with the same trust rules as chunk statistics (:mod:`pqbloom.statistics.read`).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from ..format import ColumnIndexFields, StatisticsFields
from ..format.enums import BoundaryOrder, PhysicalType
from .order import BINARY_TYPES, SortOrder, compare, is_floating
from .read import STAT_VALUE_SIZES, column_order_kind, decode_bound, decode_stat_value, fix_zero_bounds

__all__ = ["build_column_index", "column_index_is_usable", "column_index_bounds"]


# ---------------------------------------------------------------------------
# Page index
# ---------------------------------------------------------------------------
def _boundary_order(bounds: list[tuple[Any, Any]], ptype: int, sort_order: SortOrder,
                    logical_kind: str | None) -> int:
    if not bounds:
        return BoundaryOrder.UNORDERED  # only null pages (what pyarrow writes)
    asc = desc = True
    for (lo0, hi0), (lo1, hi1) in zip(bounds, bounds[1:]):
        c_lo = compare(lo0, lo1, ptype, sort_order, logical_kind)
        c_hi = compare(hi0, hi1, ptype, sort_order, logical_kind)
        if c_lo > 0 or c_hi > 0:
            asc = False
        if c_lo < 0 or c_hi < 0:
            desc = False
        if not asc and not desc:
            return BoundaryOrder.UNORDERED
    return BoundaryOrder.ASCENDING if asc else BoundaryOrder.DESCENDING


def build_column_index(
    page_stats: list[StatisticsFields | None],
    null_page_flags: list[bool],
    ptype: int,
    sort_order: SortOrder,
    *,
    logical_kind: str | None = None,
    type_length: int | None = None,
    repetition_level_histograms: Sequence[Sequence[int] | np.ndarray] | None = None,
    definition_level_histograms: Sequence[Sequence[int] | np.ndarray] | None = None,
) -> ColumnIndexFields | None:
    """What a chunk's ColumnIndex holds, from per-page statistics, or None when the rules forbid one
    (the file layer encodes it: :func:`pqbloom.format.encode_column_index`).

    None for INT96, an undefined order, or any non-null page without min/max
    (e.g. a float page holding only NaN under TYPE_ORDER). ``null_counts`` and
    ``nan_counts`` are written when every page has them. The level histograms
    (one per page, ``max_level + 1`` counts each) are stored flattened, page
    after page; pass None for a level whose maximum is 0.
    """
    if len(page_stats) != len(null_page_flags):
        raise ValueError("page_stats and null_page_flags differ in length")
    for hs in (repetition_level_histograms, definition_level_histograms):
        if hs is not None and (len(hs) != len(page_stats) or len({len(h) for h in hs}) > 1):
            raise ValueError("level histograms need one list per page, all of one length")
    if ptype == PhysicalType.INT96 or sort_order is SortOrder.UNDEFINED or not page_stats:
        return None
    kind = logical_kind
    if kind is None and sort_order is SortOrder.SIGNED and ptype in BINARY_TYPES:
        kind = "DECIMAL"
    mins: list[bytes] = []
    maxs: list[bytes] = []
    bounds: list[tuple[Any, Any]] = []
    for st, is_null in zip(page_stats, null_page_flags):
        if is_null:
            mins.append(b"")
            maxs.append(b"")
            continue
        if st is None or st.min_value is None or st.max_value is None:
            return None
        mins.append(bytes(st.min_value))
        maxs.append(bytes(st.max_value))
        if len(page_stats) > 1:  # one page is ASCENDING whatever its bounds: no need to decode them
            bounds.append((decode_stat_value(st.min_value, ptype, type_length, kind),
                           decode_stat_value(st.max_value, ptype, type_length, kind)))
        else:
            bounds.append((None, None))
    null_counts = nan_counts = None
    if all(st is not None and st.null_count is not None for st in page_stats):
        null_counts = [int(st.null_count) for st in page_stats]  # type: ignore[union-attr, arg-type]
    if is_floating(ptype, logical_kind):
        if all(st is not None and st.nan_count is not None for st in page_stats):
            nan_counts = [int(st.nan_count) for st in page_stats]  # type: ignore[union-attr, arg-type]
    return ColumnIndexFields(
        null_pages=[bool(f) for f in null_page_flags],
        min_values=mins,
        max_values=maxs,
        boundary_order=_boundary_order(bounds, ptype, sort_order, kind),
        null_counts=null_counts,
        nan_counts=nan_counts,
        repetition_level_histograms=None if repetition_level_histograms is None
        else _flat_ints(repetition_level_histograms),
        definition_level_histograms=None if definition_level_histograms is None
        else _flat_ints(definition_level_histograms),
    )


def _flat_ints(per_page: Sequence[Sequence[int] | np.ndarray]) -> list[int]:
    """Per-page histograms, page after page, as Python ints (``tolist`` for arrays: no numpy scalars)."""
    out: list[int] = []
    for h in per_page:
        out.extend(h.tolist() if isinstance(h, np.ndarray) else (int(c) for c in h))
    return out


def column_index_is_usable(
    ci: Any,
    *,
    num_pages: int | None = None,
    page_row_counts: Sequence[int] | None = None,
    ptype: int | None = None,
) -> bool:
    """False when a ColumnIndex (:class:`pqbloom.file.PageStatistics`, or anything with its fields) is internally
    inconsistent and must not drive pruning.

    Checks: list lengths agree (with ``num_pages`` / the OffsetIndex too);
    counts are non-negative; a null page has a positive null count (or covers
    no rows), and at least ``page_row_counts[i]`` nulls when row counts are
    given; when every page claims to be a null page, ``null_counts`` must be
    present to confirm it (the parquet-mr ``datapage_v1-*-checksum`` fixtures
    mark all pages null with counts -1); bounds of fixed-size types have the
    right size; the boundary order is a known value.
    """
    null_pages = ci.null_pages
    if null_pages is None or ci.min_values is None or ci.max_values is None:
        return False
    n = len(null_pages)
    if len(ci.min_values) != n or len(ci.max_values) != n:
        return False
    if num_pages is not None and n != num_pages:
        return False
    if page_row_counts is not None and len(page_row_counts) != n:
        return False
    if ci.boundary_order not in (BoundaryOrder.UNORDERED, BoundaryOrder.ASCENDING,
                                 BoundaryOrder.DESCENDING):
        return False
    nc = ci.null_counts
    if nc is not None and (len(nc) != n or any(c is None or c < 0 for c in nc)):
        return False
    if ci.nan_counts is not None and (len(ci.nan_counts) != n or any(c is None or c < 0 for c in ci.nan_counts)):
        return False
    if n and all(bool(p) for p in null_pages) and nc is None:
        return False
    size = STAT_VALUE_SIZES.get(ptype) if ptype is not None else None
    for i in range(n):
        rows = page_row_counts[i] if page_row_counts is not None else None
        if null_pages[i]:
            if nc is not None:
                if rows is not None and nc[i] < rows:
                    return False
                if rows is None and nc[i] == 0:
                    return False
        elif size is not None and (len(ci.min_values[i]) != size or len(ci.max_values[i]) != size):
            return False
    return True


def column_index_bounds(
    ci: Any,
    ptype: int,
    sort_order: SortOrder,
    *,
    column_order: str | None = "TYPE_ORDER",
    type_length: int | None = None,
    logical_kind: str | None = None,
) -> list[tuple[Any, Any]]:
    """Decoded (min, max) per page with the same trust rules as ``ChunkStats``.

    Null pages and unusable bounds (NaN, undefined order, unknown or absent
    column order) give None. Call ``column_index_is_usable`` first.
    """
    n = len(ci.null_pages or [])
    order = column_order_kind(column_order)
    if order in (None, "UNKNOWN") or sort_order is SortOrder.UNDEFINED or ptype == PhysicalType.INT96:
        return [(None, None)] * n
    out: list[tuple[Any, Any]] = []
    for i in range(n):
        if ci.null_pages[i]:
            out.append((None, None))
            continue
        lo = decode_bound(ci.min_values[i], ptype, type_length, logical_kind, sort_order)
        hi = decode_bound(ci.max_values[i], ptype, type_length, logical_kind, sort_order)
        out.append(fix_zero_bounds(lo, hi, ptype, logical_kind, order))
    return out
