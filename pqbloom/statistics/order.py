"""Sort orders: the order a column's min/max follow (parquet.thrift ColumnOrder TYPE_ORDER), and comparing
values in it. Both sides use it: the writer to compute statistics and page indexes, the reader to trust
and compare them.
"""

from __future__ import annotations

import struct
from enum import Enum
from typing import Any

from ..format.enums import ConvertedType, PhysicalType

__all__ = ["SortOrder", "sort_order_for", "compare", "is_floating", "is_float16", "BINARY_TYPES", "UTF8_KINDS"]

#: the physical types whose values are byte strings (BYTE_ARRAY, FIXED_LEN_BYTE_ARRAY)
BINARY_TYPES = (PhysicalType.BYTE_ARRAY, PhysicalType.FIXED_LEN_BYTE_ARRAY)
#: logical kinds whose values are UTF-8 text (truncated bounds never split a code point)
UTF8_KINDS = ("STRING", "ENUM", "JSON")
_UNSIGNED_CONVERTED = (ConvertedType.UINT_8, ConvertedType.UINT_16, ConvertedType.UINT_32, ConvertedType.UINT_64)
# Logical kinds whose min/max have no defined order (spec: ColumnOrder "undefined").
_UNDEFINED_KINDS = ("INTERVAL", "GEOMETRY", "GEOGRAPHY", "VARIANT")
_KNOWN_KINDS = (
    "STRING", "ENUM", "JSON", "BSON", "UUID", "DATE", "TIME", "TIMESTAMP", "DECIMAL",
    "INTEGER_SIGNED", "INTEGER_UNSIGNED", "FLOAT16", "INTERVAL", "UNKNOWN",
)


class SortOrder(Enum):
    """The order min/max follow; UNDEFINED: none (no min/max are written or trusted)."""

    SIGNED = "SIGNED"
    UNSIGNED = "UNSIGNED"
    UNDEFINED = "UNDEFINED"


def sort_order_for(ptype: int, logical_kind: str | None, converted_type: int | None) -> SortOrder:
    """The order min/max follow for a column (parquet.thrift ColumnOrder TYPE_ORDER rules).

    The logical kind wins over the converted type; an unrecognized logical kind
    gives UNDEFINED (no min/max), which is always safe.
    """
    if ptype == PhysicalType.INT96:
        return SortOrder.UNDEFINED
    kind = logical_kind
    if kind is not None and kind not in _KNOWN_KINDS:
        return SortOrder.UNDEFINED
    if kind in _UNDEFINED_KINDS or (kind is None and converted_type == ConvertedType.INTERVAL):
        return SortOrder.UNDEFINED
    if ptype in BINARY_TYPES:
        if kind in ("DECIMAL", "FLOAT16") or (kind is None and converted_type == ConvertedType.DECIMAL):
            return SortOrder.SIGNED
        return SortOrder.UNSIGNED
    if kind == "INTEGER_UNSIGNED" or (kind is None and converted_type in _UNSIGNED_CONVERTED):
        return SortOrder.UNSIGNED
    return SortOrder.SIGNED


def is_float16(ptype: int, logical_kind: str | None, type_length: int | None = None) -> bool:
    """Whether a column holds FLOAT16 values (FIXED_LEN_BYTE_ARRAY of 2 bytes annotated FLOAT16)."""
    return ptype == PhysicalType.FIXED_LEN_BYTE_ARRAY and logical_kind == "FLOAT16" and type_length in (None, 2)


def is_floating(ptype: int, logical_kind: str | None) -> bool:
    """Whether a column holds floating-point values (FLOAT, DOUBLE, FLOAT16): NaN counts, signed zeros."""
    return ptype in (PhysicalType.FLOAT, PhysicalType.DOUBLE) or is_float16(ptype, logical_kind)


def _cmp(a: Any, b: Any) -> int:
    return (a > b) - (a < b)


def _float_key(x: Any) -> tuple[int, float]:
    f = float(x)
    return (1, 0.0) if f != f else (0, f)


def compare(a: Any, b: Any, ptype: int, sort_order: SortOrder, logical_kind: str | None = None) -> int:
    """-1, 0 or 1 as ``a`` sorts before, with or after ``b`` in the column's order.

    Accepts decoded statistics values (``decode_stat_value``) or the matching
    Python values. Rules: unsigned ints compare modulo 2**32 / 2**64; signed
    binary (DECIMAL) compares as big-endian two's complement ints (bytes or
    int accepted); other binary compares byte-wise with a prefix first;
    floats compare numerically with -0.0 == +0.0 and NaN after every number
    (NaN == NaN). Because -0.0 == +0.0 here, a min of +0 / max of -0 can never
    exclude the other zero.
    """
    if sort_order is SortOrder.UNDEFINED:
        raise ValueError("values of a column with undefined sort order cannot be compared")
    if ptype == PhysicalType.BOOLEAN:
        return _cmp(int(bool(a)), int(bool(b)))
    if ptype in (PhysicalType.INT32, PhysicalType.INT64):
        if sort_order is SortOrder.UNSIGNED:
            m = 1 << (32 if ptype == PhysicalType.INT32 else 64)
            return _cmp(int(a) % m, int(b) % m)
        return _cmp(int(a), int(b))
    if ptype in (PhysicalType.FLOAT, PhysicalType.DOUBLE) or (
            ptype == PhysicalType.FIXED_LEN_BYTE_ARRAY and logical_kind == "FLOAT16"):
        if isinstance(a, bytes | bytearray):
            a = struct.unpack("<e", bytes(a))[0]
        if isinstance(b, bytes | bytearray):
            b = struct.unpack("<e", bytes(b))[0]
        return _cmp(_float_key(a), _float_key(b))
    if ptype in BINARY_TYPES:
        if sort_order is SortOrder.SIGNED:
            ia = a if isinstance(a, int) else int.from_bytes(bytes(a), "big", signed=True)
            ib = b if isinstance(b, int) else int.from_bytes(bytes(b), "big", signed=True)
            return _cmp(ia, ib)
        return _cmp(bytes(a), bytes(b))
    raise ValueError(f"physical type {ptype} has no defined order")
