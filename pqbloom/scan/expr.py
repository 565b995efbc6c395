"""Filter expressions: the user's tree (``field("id") == 5``, ``&``, ``|``, ``~``) and its folding
against constants (partition values, columns a file does not have).

An expression knows only column names and Python literals; :mod:`pqbloom.scan.bind` converts it to
one file's physical domains. The semantics (three-valued logic, NaN, repeated leaves) are described
in :mod:`pqbloom.scan`.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from typing import Any

__all__ = ["Expr", "Compare", "IsIn", "IsNull", "And", "Or", "Not", "Const", "FieldRef", "field", "substitute",
           "could_be_true", "COMPARISON_OPS"]

#: the comparison operators of :class:`Compare`
COMPARISON_OPS = ("==", "!=", "<", "<=", ">", ">=")


class Expr:
    """A boolean filter expression. Combine with ``&``, ``|`` and ``~``."""

    __slots__ = ()

    def __and__(self, other: Expr) -> Expr:
        return And(self, _expect_expr(other))

    def __rand__(self, other: Expr) -> Expr:
        return And(_expect_expr(other), self)

    def __or__(self, other: Expr) -> Expr:
        return Or(self, _expect_expr(other))

    def __ror__(self, other: Expr) -> Expr:
        return Or(_expect_expr(other), self)

    def __invert__(self) -> Expr:
        return Not(self)

    def __bool__(self) -> bool:
        raise TypeError("a filter expression has no truth value: combine with &, | and ~ (not and/or/not)")

    def columns(self) -> set[str]:
        """Names of the columns the expression reads."""
        raise NotImplementedError

    def __repr__(self) -> str:
        return f"<pqbloom expression {self}>"


def _expect_expr(e: Any) -> Expr:
    if not isinstance(e, Expr):
        raise TypeError(f"expected a filter expression, got {type(e).__name__}")
    return e


def _fmt_value(v: Any) -> str:
    if isinstance(v, float) and math.isnan(v):
        return "nan"
    return repr(v)


class Compare(Expr):
    """``column OP value`` with OP one of :data:`COMPARISON_OPS`; null when the row's value or ``value`` is null."""

    __slots__ = ("column", "op", "value")

    def __init__(self, column: str, op: str, value: Any) -> None:
        if op not in COMPARISON_OPS:
            raise ValueError(f"unknown comparison {op!r}")
        self.column, self.op, self.value = column, op, value

    def columns(self) -> set[str]:
        return {self.column}

    def __str__(self) -> str:
        return f"{self.column} {self.op} {_fmt_value(self.value)}"


class IsIn(Expr):
    """``column in values``: never null (a null row matches when None is listed, NaN a listed NaN)."""

    __slots__ = ("column", "values")

    def __init__(self, column: str, values: Iterable[Any]) -> None:
        if isinstance(values, (str, bytes)):
            raise TypeError("isin takes a collection of values, not a single string")
        self.column, self.values = column, tuple(values)

    def columns(self) -> set[str]:
        return {self.column}

    def __str__(self) -> str:
        return f"{self.column} in ({', '.join(_fmt_value(v) for v in self.values)})"


class IsNull(Expr):
    """``column is null`` (``is not null`` when ``negate``)."""

    __slots__ = ("column", "negate")

    def __init__(self, column: str, negate: bool = False) -> None:
        self.column, self.negate = column, negate

    def columns(self) -> set[str]:
        return {self.column}

    def __str__(self) -> str:
        return f"{self.column} is {'not ' if self.negate else ''}null"


class _Binary(Expr):
    """A logical connective of two expressions."""

    __slots__ = ("left", "right")
    word = ""

    def __init__(self, left: Expr, right: Expr) -> None:
        self.left, self.right = left, right

    def columns(self) -> set[str]:
        return self.left.columns() | self.right.columns()

    def __str__(self) -> str:
        return f"({self.left} {self.word} {self.right})"


class And(_Binary):
    """``left and right`` (Kleene: false wins over null)."""

    __slots__ = ()
    word = "and"


class Or(_Binary):
    """``left or right`` (Kleene: true wins over null)."""

    __slots__ = ()
    word = "or"


class Not(Expr):
    """``not operand`` (null stays null)."""

    __slots__ = ("operand",)

    def __init__(self, operand: Expr) -> None:
        self.operand = operand

    def columns(self) -> set[str]:
        return self.operand.columns()

    def __str__(self) -> str:
        return f"not {self.operand}"


class Const(Expr):
    """TRUE, FALSE or NULL (None) for every row."""

    __slots__ = ("value",)

    def __init__(self, value: bool | None) -> None:
        self.value = value

    def columns(self) -> set[str]:
        return set()

    def __str__(self) -> str:
        return {True: "true", False: "false", None: "null"}[self.value]


class FieldRef:
    """A column reference: ``field("id") == 5`` builds an expression."""

    __slots__ = ("name",)

    def __init__(self, name: str) -> None:
        if not isinstance(name, str):  # "" is a legal column name (pyarrow writes it)
            raise TypeError("field() takes a column name")
        self.name = name

    def _cmp(self, op: str, other: Any) -> Compare:
        if isinstance(other, (FieldRef, Expr)):
            raise TypeError("comparing two columns is not supported; compare a column with a literal")
        return Compare(self.name, op, other)

    def __eq__(self, other: Any) -> Compare:  # type: ignore[override]
        return self._cmp("==", other)

    def __ne__(self, other: Any) -> Compare:  # type: ignore[override]
        return self._cmp("!=", other)

    def __lt__(self, other: Any) -> Compare:
        return self._cmp("<", other)

    def __le__(self, other: Any) -> Compare:
        return self._cmp("<=", other)

    def __gt__(self, other: Any) -> Compare:
        return self._cmp(">", other)

    def __ge__(self, other: Any) -> Compare:
        return self._cmp(">=", other)

    __hash__ = None  # type: ignore[assignment]

    def isin(self, values: Iterable[Any]) -> IsIn:
        """``column in values``."""
        return IsIn(self.name, values)

    def is_null(self) -> IsNull:
        """``column is null``."""
        return IsNull(self.name)

    def is_valid(self) -> IsNull:
        """``column is not null``."""
        return IsNull(self.name, negate=True)

    def __repr__(self) -> str:
        return f"field({self.name!r})"


def field(name: str) -> FieldRef:
    """Reference a column by its (dotted) name in a filter expression.

    A leaf of a struct is named by its path (``field("s.a")``). A leaf inside a list or map is
    named by its full leaf path (``field("tags.list.element")``, see ``ParquetFile.schema``) and
    tests "some element of the row's list satisfies it": ``field("tags.list.element") == 5`` is
    true for ``[1, 5]`` and false for ``[1]``, ``[]`` and a null list, so ``~(...)`` keeps those.
    """
    return FieldRef(name)


# ---------------------------------------------------------------------------
# Partial evaluation against constants (partition columns, missing columns)
# ---------------------------------------------------------------------------
def _py_cmp(a: Any, op: str, b: Any) -> bool:
    if op == "==":
        return bool(a == b)
    if op == "!=":
        return bool(a != b)
    if op == "<":
        return bool(a < b)
    if op == "<=":
        return bool(a <= b)
    if op == ">":
        return bool(a > b)
    return bool(a >= b)


def _coerce_like(v: Any, like: Any) -> Any:
    if v is None or like is None:
        return v
    if isinstance(like, str) and not isinstance(v, str):
        if isinstance(v, bytes):
            return v.decode("utf-8", "surrogateescape")
        return str(v)
    if isinstance(like, (int, float)) and isinstance(v, str):
        try:
            return int(v)
        except ValueError:
            return float(v)
    return v


def _const_leaf(e: Expr, c: Any) -> Const:
    if isinstance(e, IsNull):
        return Const((c is not None) if e.negate else (c is None))
    if isinstance(e, IsIn):
        if c is None:
            return Const(any(v is None for v in e.values))
        hit = False
        for v in e.values:
            if v is None:
                continue
            v = _coerce_like(v, c)
            if (isinstance(v, float) and v != v and isinstance(c, float) and c != c) or v == c:
                hit = True
                break
        return Const(hit)
    assert isinstance(e, Compare)
    if c is None or e.value is None:
        return Const(None)
    try:
        return Const(_py_cmp(c, e.op, _coerce_like(e.value, c)))
    except TypeError:
        raise TypeError(f"cannot compare {e.column}={c!r} with {e.value!r}") from None


def substitute(e: Expr, env: Mapping[str, Any]) -> Expr:
    """Replace leaves on columns in ``env`` by their constant result and fold (Kleene logic)."""
    if isinstance(e, (Compare, IsIn, IsNull)):
        return _const_leaf(e, env[e.column]) if e.column in env else e
    if isinstance(e, Not):
        o = substitute(e.operand, env)
        if isinstance(o, Const):
            return Const(None if o.value is None else not o.value)
        return Not(o)
    if isinstance(e, (And, Or)):
        a, b = substitute(e.left, env), substitute(e.right, env)
        is_and = isinstance(e, And)
        absorbing = not is_and  # False absorbs AND, True absorbs OR
        for x, y in ((a, b), (b, a)):
            if isinstance(x, Const):
                if x.value is absorbing:
                    return Const(absorbing)
                if x.value is (not absorbing):
                    return y
        if isinstance(a, Const) and isinstance(b, Const):
            return Const(None)
        return And(a, b) if is_and else Or(a, b)
    return e


def could_be_true(e: Expr) -> bool:
    """False when no row can satisfy ``e`` whatever its non-constant leaves are (after substitute)."""

    def go(x: Expr) -> tuple[bool, bool]:
        if isinstance(x, Const):
            return x.value is True, x.value is False
        if isinstance(x, Not):
            t, f = go(x.operand)
            return f, t
        if isinstance(x, (And, Or)):
            ta, fa = go(x.left)
            tb, fb = go(x.right)
            return (ta and tb, fa or fb) if isinstance(x, And) else (ta or tb, fa and fb)
        return True, True

    return go(e)[0]
