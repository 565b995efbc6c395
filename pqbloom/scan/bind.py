"""Binding: an expression's literals converted once per file to each column's physical domain.

The bound tree (:class:`BoundNode` and its subclasses) is what evaluation and pruning work on: its
leaves hold a :class:`BoundColumn` (the column with the domain its values compare in) and keys in
that domain, and comparisons with literals that cannot occur in the column are already folded
(``int32_col == 2**40`` is false for every non-null row, ``int_col < 2.5`` is ``int_col <= 2``).
"""

from __future__ import annotations

import math
from collections.abc import Iterator, Mapping
from fractions import Fraction
from typing import TYPE_CHECKING, Any

import numpy as np

from ..file import FooterStats
from ..schema import PhysicalType, repeated_def_levels
from ..schema.literals import (
    NaNLiteral,
    bytes_literal,
    float_literal,
    float_representable,
    int_bounds,
    int_literal,
    narrow_int_width,
)
from ..statistics import sort_order_for
from .expr import And, Compare, Const, Expr, IsIn, IsNull, Not, Or

if TYPE_CHECKING:
    from ..file.reader import FileReader
    from ..schema import ColumnDescriptor

__all__ = ["BoundColumn", "BoundNode", "BoundLeaf", "BoundCompare", "BoundNonNull", "BoundIsNull", "BoundIsIn",
           "BoundAnd", "BoundOr", "BoundNot", "BoundAny", "BoundConst", "BoundFilter", "bind", "bound_leaves"]

# ---------------------------------------------------------------------------
# Binding: literals -> the column's physical domain
# ---------------------------------------------------------------------------
class BoundColumn:
    """A predicate column of one file, with the domain its values compare in.

    Domains: "int" (signed INT32/INT64 incl. DATE/TIMESTAMP/TIME/DECIMAL, BOOLEAN as 0/1,
    INT96 as nanoseconds), "uint", "float" (FLOAT/DOUBLE/FLOAT16), "decimal" (binary DECIMAL as
    unscaled ints), "bytes" (other binary, compared byte-wise unsigned).
    """

    def __init__(self, desc: ColumnDescriptor, column_order: str | None, duration_unit: str | None = None) -> None:
        self.desc = desc
        # the column holds Arrow durations of this unit (its ARROW:schema says so): timedelta literals count it
        self.duration_unit = duration_unit
        f = desc.field
        self.field = f
        self.name = desc.dotted_path
        # a leaf inside a list or map: terms on it are "some element satisfies it" (BoundAny)
        self.repeated = desc.max_repetition_level > 0
        self.max_def = desc.max_definition_level
        # entries with def >= elem_def are elements (null or not); below are null or empty lists
        self.elem_def = repeated_def_levels(desc)[-1]
        self.ptype = f.physical_type
        self.type_length = f.type_length
        lt = f.logical_type
        self.kind = lt.kind if lt is not None else None
        if self.kind == "INTEGER":
            assert lt is not None
            self.stat_kind: str | None = "INTEGER_SIGNED" if lt.signed else "INTEGER_UNSIGNED"
        else:
            self.stat_kind = self.kind
        self.sort_order = sort_order_for(self.ptype, self.stat_kind, desc.element.converted_type)
        self.column_order = column_order
        p = self.ptype
        if p in (PhysicalType.BOOLEAN, PhysicalType.INT96):
            self.dom = "int"
        elif p in (PhysicalType.INT32, PhysicalType.INT64):
            self.dom = "uint" if self.stat_kind == "INTEGER_UNSIGNED" else "int"
        elif p in (PhysicalType.FLOAT, PhysicalType.DOUBLE) \
                or (p == PhysicalType.FIXED_LEN_BYTE_ARRAY and self.kind == "FLOAT16"):
            self.dom = "float"
        elif self.kind == "DECIMAL":
            self.dom = "decimal"
        else:
            self.dom = "bytes"
        self.lo, self.hi = int_bounds(f) if self.intlike else (None, None)
        # an integer annotated narrower than its physical type: the read keeps the low bits of what is
        # stored (a UINT_8 stored as INT32 -1 reads 255, as pyarrow and DuckDB read it), so keys, bounds
        # and dictionaries are narrowed the same way (or not trusted) before they are compared
        self.narrow = narrow_int_width(f)
        # the Null logical type (UNKNOWN): the read returns null for every value, whatever is stored
        self.all_null = self.kind == "UNKNOWN"
        # Bloom filters hash the physical bytes; only where a value has exactly one representation
        self.bloom_ok = p not in (PhysicalType.BOOLEAN, PhysicalType.INT96) \
            and not (self.dom == "decimal" and p == PhysicalType.BYTE_ARRAY)

    @property
    def intlike(self) -> bool:
        """Whether values compare as exact integers (the "int", "uint" and "decimal" domains)."""
        return self.dom in ("int", "uint", "decimal")


class BoundNode:
    """A node of a filter bound to one file's columns (see the subclasses)."""

    __slots__ = ()


class BoundLeaf(BoundNode):
    """A test of one column's value (on a repeated column: of one element, under a :class:`BoundAny`)."""

    __slots__ = ("col",)
    col: BoundColumn


class BoundCompare(BoundLeaf):
    """``value OP key`` with ``key`` in the column's domain (null for null rows)."""

    __slots__ = ("op", "key")

    def __init__(self, col: BoundColumn, op: str, key: Any) -> None:
        self.col, self.op, self.key = col, op, key


class BoundNonNull(BoundLeaf):
    """``value`` for every non-null row, null for null rows (a folded comparison)."""

    __slots__ = ("value",)

    def __init__(self, col: BoundColumn, value: bool) -> None:
        self.col, self.value = col, value


class BoundIsNull(BoundLeaf):
    """``is null`` (``is not null`` when ``negate``); never null itself."""

    __slots__ = ("negate",)

    def __init__(self, col: BoundColumn, negate: bool) -> None:
        self.col, self.negate = col, negate


class BoundIsIn(BoundLeaf):
    """Membership in ``keys`` (sorted, distinct, in the column's domain; literals that cannot occur
    are dropped); ``has_null`` / ``has_nan``: the list holds None / NaN. Never null itself."""

    __slots__ = ("keys", "has_null", "has_nan")

    def __init__(self, col: BoundColumn, keys: list[Any], has_null: bool, has_nan: bool) -> None:
        self.col, self.keys, self.has_null, self.has_nan = col, keys, has_null, has_nan


class BoundAnd(BoundNode):
    """``a and b`` (Kleene)."""

    __slots__ = ("a", "b")

    def __init__(self, a: BoundNode, b: BoundNode) -> None:
        self.a, self.b = a, b


class BoundOr(BoundNode):
    """``a or b`` (Kleene)."""

    __slots__ = ("a", "b")

    def __init__(self, a: BoundNode, b: BoundNode) -> None:
        self.a, self.b = a, b


class BoundNot(BoundNode):
    """``not a`` (null stays null)."""

    __slots__ = ("a",)

    def __init__(self, a: BoundNode) -> None:
        self.a = a


class BoundAny(BoundNode):
    """A leaf on a repeated column: true for rows where some element satisfies it, else false."""

    __slots__ = ("a",)

    def __init__(self, a: BoundLeaf) -> None:
        self.a = a


class BoundConst(BoundNode):
    """True, False or null (None) for every row."""

    __slots__ = ("value",)

    def __init__(self, value: bool | None) -> None:
        self.value = value


def _bind_compare(bc: BoundColumn, op: str, v: Any) -> BoundNode:
    if v is None:
        return BoundConst(None)  # comparing with null is null for every row
    if bc.intlike:
        q = int_literal(v, bc.field, bc.duration_unit)
        if isinstance(q, NaNLiteral):
            return BoundNonNull(bc, op == "!=")
        lo, hi = bc.lo, bc.hi
        above = (isinstance(q, float) and q > 0) or (hi is not None and q > hi)
        below = (isinstance(q, float) and q < 0) or (lo is not None and q < lo)
        integral = isinstance(q, Fraction) and q.denominator == 1
        if op == "==":
            return BoundCompare(bc, "==", int(q)) if integral and not above and not below else BoundNonNull(bc, False)
        if op == "!=":
            return BoundCompare(bc, "!=", int(q)) if integral and not above and not below else BoundNonNull(bc, True)
        if above:
            return BoundNonNull(bc, op in ("<", "<="))
        if below:
            return BoundNonNull(bc, op in (">", ">="))
        assert isinstance(q, Fraction)
        if op == "<":
            return BoundCompare(bc, "<", math.ceil(q))
        if op == "<=":
            return BoundCompare(bc, "<=", math.floor(q))
        if op == ">":
            return BoundCompare(bc, ">", math.floor(q))
        return BoundCompare(bc, ">=", math.ceil(q))
    if bc.dom == "float":
        f = float_literal(v, bc.field)
        if f != f:
            return BoundNonNull(bc, op == "!=")
        if op in ("==", "!=") and not float_representable(f, bc.field):
            return BoundNonNull(bc, op == "!=")
        return BoundCompare(bc, op, f)
    b = bytes_literal(v, bc.field)
    if op in ("==", "!=") and bc.ptype == PhysicalType.FIXED_LEN_BYTE_ARRAY and len(b) != bc.type_length:
        return BoundNonNull(bc, op == "!=")
    return BoundCompare(bc, op, b)


def _bind_isin(bc: BoundColumn, values: tuple[Any, ...]) -> BoundNode:
    keys: list[Any] = []
    has_null = has_nan = False
    for v in values:
        if v is None:
            has_null = True
            continue
        if bc.intlike:
            q = int_literal(v, bc.field, bc.duration_unit)
            if isinstance(q, NaNLiteral):
                has_nan = True  # an integer column holds no NaN
            elif isinstance(q, Fraction) and q.denominator == 1 and (bc.lo is None or q >= bc.lo) \
                    and (bc.hi is None or q <= bc.hi):
                keys.append(int(q))
        elif bc.dom == "float":
            f = float_literal(v, bc.field)
            if f != f:
                has_nan = True
            elif float_representable(f, bc.field):
                keys.append(0.0 if f == 0 else f)
        else:
            b = bytes_literal(v, bc.field)
            if bc.ptype != PhysicalType.FIXED_LEN_BYTE_ARRAY or len(b) == bc.type_length:
                keys.append(b)
    keys = sorted(set(keys))
    return BoundIsIn(bc, keys, has_null, has_nan and bc.dom == "float")


def bind(e: Expr, cols: Mapping[str, BoundColumn]) -> BoundNode:
    """``e`` with its literals converted to the domains of ``cols`` (every column ``e`` names), folding
    what the conversion decides (a negated constant; a leaf on a repeated column that is null for
    every element is false). Raises ``TypeError`` / ``ValueError`` for a literal the column cannot
    compare with."""
    if isinstance(e, Const):
        return BoundConst(e.value)
    if isinstance(e, Not):
        inner = bind(e.operand, cols)
        if isinstance(inner, BoundConst):
            return BoundConst(None if inner.value is None else not inner.value)
        return BoundNot(inner)
    if isinstance(e, And):
        return BoundAnd(bind(e.left, cols), bind(e.right, cols))
    if isinstance(e, Or):
        return BoundOr(bind(e.left, cols), bind(e.right, cols))
    if isinstance(e, (Compare, IsIn, IsNull)):
        bc = cols[e.column]
        leaf: BoundNode
        if bc.all_null and not bc.repeated:
            # every row reads as null: ``is null`` holds, a comparison is null, ``isin`` holds where
            # the list has None (what the stored values or their statistics say does not count)
            if isinstance(e, IsNull):
                return BoundConst(not e.negate)
            if isinstance(e, IsIn):
                return BoundConst(any(v is None for v in e.values))
            return BoundConst(None)
        if isinstance(e, IsNull):
            leaf = BoundIsNull(bc, e.negate)
        elif isinstance(e, IsIn):
            leaf = _bind_isin(bc, e.values)
        else:
            leaf = _bind_compare(bc, e.op, e.value)
        if not bc.repeated:
            return leaf
        if isinstance(leaf, BoundConst):  # null for every element: no element satisfies it
            assert leaf.value is None
            return BoundConst(False)
        assert isinstance(leaf, BoundLeaf)
        return BoundAny(leaf)
    raise TypeError(f"not a filter expression: {e!r}")


def bound_leaves(n: BoundNode) -> Iterator[BoundLeaf]:
    """The leaves of ``n``, left to right (those under a :class:`BoundAny` included)."""
    if isinstance(n, BoundLeaf):
        yield n
    elif isinstance(n, (BoundAnd, BoundOr)):
        yield from bound_leaves(n.a)
        yield from bound_leaves(n.b)
    elif isinstance(n, (BoundNot, BoundAny)):
        yield from bound_leaves(n.a)


# ---------------------------------------------------------------------------
# A filter bound to one file
# ---------------------------------------------------------------------------
class BoundFilter:
    """A filter bound to the columns of one open file.

    ``node`` is the bound tree, or None when every row matches (no filter, or one folded to true);
    ``cols`` maps each column the filter names to its :class:`BoundColumn`. A column the file does
    not have raises ``KeyError`` (from ``column_descriptor``).
    """

    def __init__(self, pf: FileReader, expr: Expr | None) -> None:
        self.pf = pf
        self.expr = expr
        self.node: BoundNode | None = None
        self.cols: dict[str, BoundColumn] = {}
        facts = pf.binding_facts(sorted(expr.columns()) if expr is not None else ())
        #: the file's writer (``created_by``: which legacy statistics to trust) and row group count
        self.created_by, self.num_row_groups = facts.created_by, facts.num_row_groups
        #: footer statistics of the filter's columns in every row group, once gathered (:mod:`.prune`)
        self.footer: tuple[np.ndarray, dict[int, list[FooterStats | None]]] | None = None
        if expr is None:
            return
        for name, (desc, order, unit) in facts.columns.items():
            self.cols[name] = BoundColumn(desc, order, unit)
        self.node = bind(expr, self.cols)
        if isinstance(self.node, BoundConst) and self.node.value is True:
            self.node = None

    @property
    def always_empty(self) -> bool:
        """Whether no row can match: the filter folded to false or null."""
        return isinstance(self.node, BoundConst)  # False or null for every row (True folded to None)
