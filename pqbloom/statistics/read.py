"""Column statistics, read side: which statistics a reader may trust, and their decoded values.

Read-side rules (``ChunkStats.from_fields``)
--------------------------------------------
* Column order UNKNOWN (a ColumnOrder union member we do not know) -> no
  min/max at all (spec: ignore them).
* ``min_value``/``max_value`` are used when the file declares a column order
  (TYPE_ORDER, IEEE_754_TOTAL_ORDER, or INT96_TIMESTAMP_ORDER); without
  ``column_orders`` their meaning is undefined by the spec and they are ignored.
* Legacy ``min``/``max`` are used only when neither new field is present and:
  - the column order is SIGNED (or min == max, where order does not matter);
  - for BYTE_ARRAY/FLBA the writer is identified by ``created_by`` and is not
    parquet-mr < 1.8.0 (PARQUET-251: values corrupted by buffer reuse, never
    trusted), not parquet-mr < 1.10.0 and not parquet-cpp < 1.3.0 unless
    min == max (PARQUET-686: those compared binary with signed bytes; the
    fixture ``fixed_length_decimal.parquet`` from parquet-mr 1.8.2 really has
    a wrong min). An unknown writer's legacy binary stats are not trusted.
    (Stricter than Arrow C++, which trusts parquet-mr >= 1.8.0 and unknown
    writers; erring on the side of no pruning.)
* Float bounds that are NaN are dropped (that bound becomes None); under
  TYPE_ORDER a +0.0 min becomes -0.0 and a -0.0 max becomes +0.0, because a
  writer may have stored either sign for a zero bound.
* Negative ``null_count``/``nan_count`` are treated as absent (None).
"""

from __future__ import annotations

import re
import struct
from dataclasses import dataclass
from typing import Any

from ..errors import CorruptFileError
from ..format import StatisticsFields
from ..format.enums import PhysicalType
from .order import BINARY_TYPES, SortOrder, is_floating

__all__ = ["decode_stat_value", "STAT_VALUE_SIZES", "parse_created_by", "column_order_kind", "legacy_stats_trusted",
           "decode_bound", "fix_zero_bounds", "ChunkStats"]


# ---------------------------------------------------------------------------
# Decoding
# ---------------------------------------------------------------------------
#: the size in bytes of a statistics value of each fixed-size physical type
STAT_VALUE_SIZES: dict[int, int] = {
    PhysicalType.BOOLEAN: 1, PhysicalType.INT32: 4, PhysicalType.INT64: 8, PhysicalType.FLOAT: 4, PhysicalType.DOUBLE: 8,
    PhysicalType.INT96: 12,
}
#: the struct format of a PLAIN value of each numeric physical type
_PLAIN_FMT: dict[int, str] = {
    PhysicalType.INT32: "<i", PhysicalType.INT64: "<q", PhysicalType.FLOAT: "<f", PhysicalType.DOUBLE: "<d",
}


def decode_stat_value(
    raw: bytes, ptype: int, type_length: int | None = None, logical_kind: str | None = None
) -> Any:
    """A Python scalar from a PLAIN-encoded (unprefixed) statistics value.

    BOOLEAN -> bool; INT32/INT64 -> int (signed; see ``compare`` for unsigned
    columns, or ``logical_kind="INTEGER_UNSIGNED"`` to get the unsigned value);
    FLOAT/DOUBLE -> float; INT96 and other binary -> bytes. With
    ``logical_kind`` FLOAT16 an FLBA(2) value becomes a float and DECIMAL on
    BYTE_ARRAY/FLBA becomes the unscaled int. Binary values may be shorter
    than ``type_length`` (truncated bounds from other writers).
    """
    raw = bytes(raw)
    size = STAT_VALUE_SIZES.get(ptype)
    if size is not None and len(raw) != size:
        raise CorruptFileError(f"statistics value of {len(raw)} bytes for a {size}-byte physical type")
    if ptype == PhysicalType.BOOLEAN:
        return raw[0] != 0
    if ptype in _PLAIN_FMT:
        v = struct.unpack(_PLAIN_FMT[ptype], raw)[0]
        if logical_kind == "INTEGER_UNSIGNED" and ptype in (PhysicalType.INT32, PhysicalType.INT64):
            v %= 1 << (32 if ptype == PhysicalType.INT32 else 64)
        return v
    if ptype in BINARY_TYPES:
        if logical_kind == "FLOAT16" and ptype == PhysicalType.FIXED_LEN_BYTE_ARRAY:
            if len(raw) != 2:
                raise CorruptFileError(f"FLOAT16 statistics value of {len(raw)} bytes")
            return struct.unpack("<e", raw)[0]
        if logical_kind == "DECIMAL":
            return int.from_bytes(raw, "big", signed=True)
        return raw
    if ptype == PhysicalType.INT96:
        return raw
    raise ValueError(f"unknown physical type {ptype}")


# ---------------------------------------------------------------------------
# Read side: which statistics to trust
# ---------------------------------------------------------------------------
_CREATED_BY = re.compile(r"^\s*(.+?)\s+version\s+(\d+)(?:\.(\d+))?(?:\.(\d+))?", re.IGNORECASE)


def parse_created_by(created_by: str | None) -> tuple[str, tuple[int, int, int]] | None:
    """("parquet-mr", (1, 8, 2)) from "parquet-mr version 1.8.2 (build ...)"; None if unparseable."""
    if not created_by:
        return None
    m = _CREATED_BY.match(created_by)
    if not m:
        return None
    app = m.group(1).strip().lower()
    ver = tuple(int(g) if g is not None else 0 for g in m.group(2, 3, 4))
    return app, (ver[0], ver[1], ver[2])


def column_order_kind(column_order: str | None) -> str | None:
    """A column order's name: "TYPE_ORDER", "IEEE_754_TOTAL_ORDER", "INT96_TIMESTAMP_ORDER", "UNKNOWN" (a
    member of the union this reader does not know: bounds unusable), or None when the file has no column
    orders (the file layer names a footer's ``ColumnOrder``: :func:`pqbloom.format.column_order_name`)."""
    if column_order is not None and not isinstance(column_order, str):
        raise TypeError(f"a column order is given by its name, not {type(column_order).__name__}")
    return column_order


def legacy_stats_trusted(
    ptype: int, sort_order: SortOrder, created_by: str | None, min_raw: bytes | None, max_raw: bytes | None
) -> bool:
    """Whether the deprecated ``min``/``max`` fields may be used (rules in the module doc)."""
    if sort_order is SortOrder.UNDEFINED or ptype == PhysicalType.INT96:
        return False
    same = min_raw is not None and max_raw is not None and bytes(min_raw) == bytes(max_raw)
    if sort_order is not SortOrder.SIGNED and not same:
        return False
    if ptype not in BINARY_TYPES:
        return True
    writer = parse_created_by(created_by)
    if writer is None:
        return False
    app, ver = writer
    if app == "parquet-mr":
        if ver < (1, 8, 0):
            return False  # PARQUET-251
        if ver < (1, 10, 0) and not same:
            return False  # PARQUET-686: signed byte comparison
    if app == "parquet-cpp" and ver < (1, 3, 0) and not same:
        return False
    return True


def decode_bound(raw: bytes | None, ptype: int, type_length: int | None, logical_kind: str | None,
                 sort_order: SortOrder) -> Any:
    """A stored min or max (of chunk statistics or of a column index page) as the decoded value a pruner
    compares, or None when it cannot be trusted: absent, undecodable, a FLOAT16 of the wrong size, or NaN.
    Unsigned columns give non-negative ints; signed binary without an annotation is read as a DECIMAL."""
    if raw is None:
        return None
    kind = logical_kind
    if kind is None and sort_order is SortOrder.SIGNED and ptype in BINARY_TYPES:
        kind = "DECIMAL"  # signed binary without a FLOAT16 annotation is a decimal
    if kind == "FLOAT16" and len(raw) != 2:
        return None
    try:
        v = decode_stat_value(raw, ptype, type_length, kind)
    except CorruptFileError:
        return None
    if sort_order is SortOrder.UNSIGNED and ptype in (PhysicalType.INT32, PhysicalType.INT64):
        v %= 1 << (32 if ptype == PhysicalType.INT32 else 64)
    if isinstance(v, float) and v != v:
        return None  # NaN bound: unusable
    return v


def fix_zero_bounds(lo: Any, hi: Any, ptype: int, logical_kind: str | None, order: str | None) -> tuple[Any, Any]:
    """Float bounds with a zero widened to cover both zeros (a writer may have stored either sign): a zero
    min becomes -0.0, a zero max +0.0; unchanged under IEEE_754_TOTAL_ORDER and for non-float columns."""
    if not is_floating(ptype, logical_kind) or order == "IEEE_754_TOTAL_ORDER":
        return lo, hi
    if lo is not None and lo == 0:
        lo = -0.0
    if hi is not None and hi == 0:
        hi = 0.0
    return lo, hi


@dataclass(frozen=True)
class ChunkStats:
    """Statistics a pruner may rely on. ``min``/``max`` are None when unusable.

    ``min``/``max`` are decoded Python values (unsigned ints as non-negative
    ints, DECIMAL on binary as unscaled ints, FLOAT16 as float, other binary as
    bytes). ``min_exact``/``max_exact`` are None when the writer did not say.
    """

    min: Any = None
    max: Any = None
    null_count: int | None = None
    nan_count: int | None = None
    distinct_count: int | None = None
    min_exact: bool | None = None
    max_exact: bool | None = None
    source: str = "none"  # "min_value", "legacy" or "none"

    @classmethod
    def from_fields(
        cls,
        stats: StatisticsFields | None,
        ptype: int,
        sort_order: SortOrder,
        *,
        column_order: str | None = None,
        created_by: str | None = None,
        type_length: int | None = None,
        logical_kind: str | None = None,
    ) -> ChunkStats:
        """From a chunk's stored statistics (:class:`pqbloom.format.StatisticsFields`, as the file layer
        hands them out: :class:`pqbloom.file.FooterStats`' ``statistics``); None gives no statistics."""
        if stats is None:
            return cls()

        def count(v: int | None) -> int | None:
            return None if v is None or v < 0 else int(v)

        base = {
            "null_count": count(stats.null_count),
            "nan_count": count(stats.nan_count),
            "distinct_count": count(stats.distinct_count),
        }
        order = column_order_kind(column_order)
        if order == "UNKNOWN" or sort_order is SortOrder.UNDEFINED:
            return cls(**base)  # type: ignore[arg-type]
        if order == "INT96_TIMESTAMP_ORDER" and ptype != PhysicalType.INT96:
            return cls(**base)  # type: ignore[arg-type]
        has_new = stats.min_value is not None or stats.max_value is not None
        if has_new and order is not None:
            lo = decode_bound(stats.min_value, ptype, type_length, logical_kind, sort_order)
            hi = decode_bound(stats.max_value, ptype, type_length, logical_kind, sort_order)
            lo, hi = fix_zero_bounds(lo, hi, ptype, logical_kind, order)
            return cls(lo, hi, min_exact=stats.is_min_value_exact, max_exact=stats.is_max_value_exact,
                       source="min_value", **base)  # type: ignore[arg-type]
        if not has_new and (stats.min is not None or stats.max is not None):
            if legacy_stats_trusted(ptype, sort_order, created_by, stats.min, stats.max):
                lo = decode_bound(stats.min, ptype, type_length, logical_kind, sort_order)
                hi = decode_bound(stats.max, ptype, type_length, logical_kind, sort_order)
                lo, hi = fix_zero_bounds(lo, hi, ptype, logical_kind, order)
                return cls(lo, hi, source="legacy", **base)  # type: ignore[arg-type]
        return cls(**base)  # type: ignore[arg-type]
