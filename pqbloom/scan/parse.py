"""Filters written as data or text: pyarrow-style DNF lists and the small text grammar of
``pqbloom query --filter`` (and Spark's ``filter`` option), both turned into :class:`~pqbloom.scan.expr.Expr`.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from typing import Any, Protocol, TypeAlias

from .arrow_expr import from_arrow_expression, is_arrow_expression
from .expr import And, Compare, Expr, FieldRef, IsIn, IsNull, Not, Or

__all__ = ["FilterLike", "ArrowExpression", "to_expression", "parse_filter"]

#: What ``filters=`` accepts: an expression, a filter string (:func:`parse_filter`), a DNF list of
#: ``(column, op, value)`` terms (an AND) or of such lists (an OR of ANDs), a ``pyarrow.compute``
#: expression, or None (every row).
FilterLike: TypeAlias = "Expr | str | Sequence[Any] | ArrowExpression | None"


class ArrowExpression(Protocol):
    """A ``pyarrow.compute.Expression`` (``pc.field("x") > 3``), as ``filters=`` takes it."""

    def equals(self, other: Any) -> bool: ...

# ``5 < x`` is read as ``x > 5``
_FLIP = {"==": "==", "!=": "!=", "<": ">", "<=": ">=", ">": "<", ">=": "<="}


_DNF_OPS = {"=": "==", "==": "==", "!=": "!=", "<": "<", "<=": "<=", ">": ">", ">=": ">="}


def _dnf_term(term: Any) -> Expr:
    if not isinstance(term, (tuple, list)) or len(term) != 3:
        raise ValueError(f"a filter term must be (column, op, value), got {term!r}")
    col, op, val = term
    if not isinstance(col, str):
        raise TypeError(f"filter column must be a name, got {col!r}")
    o = str(op).strip().lower()
    if o in _DNF_OPS:
        return Compare(col, _DNF_OPS[o], val)
    if o in ("in", "not in"):
        if isinstance(val, (str, bytes)) or not isinstance(val, Iterable):
            raise TypeError(f"'{o}' needs a collection of values, got {val!r}")
        e: Expr = IsIn(col, val)
        return Not(e) if o == "not in" else e
    raise ValueError(f"unknown filter op {op!r}; use one of =, ==, !=, <, <=, >, >=, in, not in")


def _conjunction(terms: Sequence[Any]) -> Expr:
    if not terms:
        raise ValueError("empty filter conjunction")
    out = _dnf_term(terms[0])
    for t in terms[1:]:
        out = And(out, _dnf_term(t))
    return out


def to_expression(filters: FilterLike) -> Expr | None:
    """An :class:`Expr` from an expression, a pyarrow-style DNF list, a filter string, a
    ``pyarrow.compute`` expression (:mod:`pqbloom.scan.arrow_expr`), or None."""
    if filters is None or isinstance(filters, Expr):
        return filters
    if isinstance(filters, str):
        return parse_filter(filters)
    if is_arrow_expression(filters):
        return from_arrow_expression(filters)
    if isinstance(filters, FieldRef):
        raise TypeError("a bare field is not a filter; compare it with a value")
    if not isinstance(filters, (list, tuple)) or not filters:
        raise ValueError(f"filters must be an expression or a non-empty list, got {filters!r}")
    if all(isinstance(t, (list, tuple)) and t and isinstance(t[0], (list, tuple)) for t in filters):
        out = _conjunction(filters[0])
        for conj in filters[1:]:
            out = Or(out, _conjunction(conj))
        return out
    return _conjunction(filters)


# ---------------------------------------------------------------------------
# Text grammar (pqbloom query --filter)
# ---------------------------------------------------------------------------
_TOKEN = re.compile(r"""
    \s*(?:
      (?P<num>[-+]?(?:\d+\.\d*|\.\d+|\d+)(?:[eE][-+]?\d+)?)(?![A-Za-z_])
    | (?P<str>'(?:[^'\\]|\\.|'')*'|"(?:[^"\\]|\\.)*")
    | (?P<bq>`[^`]+`)
    | (?P<op>==|!=|<>|<=|>=|=|<|>)
    | (?P<punct>[(),])
    | (?P<word>[A-Za-z_][A-Za-z0-9_.$]*)
    )""", re.VERBOSE)


def _tokenize(text: str) -> list[tuple[str, Any]]:
    out: list[tuple[str, Any]] = []
    pos = 0
    text = text.rstrip()
    while pos < len(text):
        m = _TOKEN.match(text, pos)
        if m is None or m.end() == pos:
            raise ValueError(f"cannot parse filter at {text[pos:pos + 20]!r}")
        pos = m.end()
        kind = m.lastgroup
        s = m.group(kind or 0)
        if kind == "num":
            out.append(("lit", float(s) if any(c in s for c in ".eE") else int(s)))
        elif kind == "str":
            body = s[1:-1]
            if s[0] == "'":
                body = body.replace("''", "'")
            out.append(("lit", re.sub(r"\\(.)", r"\1", body)))
        elif kind == "bq":
            out.append(("ident", s[1:-1]))
        elif kind == "op":
            out.append(("op", {"=": "==", "<>": "!="}.get(s, s)))
        elif kind == "punct":
            out.append((s, s))
        else:
            low = s.lower()
            if low in ("and", "or", "not", "in", "is", "null"):
                out.append((low, low))
            elif low in ("true", "false"):
                out.append(("lit", low == "true"))
            elif low in ("nan", "inf", "-inf"):
                out.append(("lit", float(low)))
            else:
                out.append(("ident", s))
    return out


class _Parser:
    def __init__(self, text: str) -> None:
        self.toks = _tokenize(text)
        self.i = 0
        self.text = text

    def peek(self, k: int = 0) -> str | None:
        j = self.i + k
        return self.toks[j][0] if j < len(self.toks) else None

    def expect(self, kind: str) -> Any:
        """Consume the next token, which must be of ``kind``, and return its value."""
        if self.peek() != kind:
            got = self.toks[self.i][1] if self.i < len(self.toks) else "end of filter"
            raise ValueError(f"filter {self.text!r}: expected {kind}, got {got!r}")
        v = self.toks[self.i][1]
        self.i += 1
        return v

    def parse(self) -> Expr:
        e = self.or_()
        if self.i != len(self.toks):
            raise ValueError(f"filter {self.text!r}: unexpected {self.toks[self.i][1]!r}")
        return e

    def or_(self) -> Expr:
        e = self.and_()
        while self.peek() == "or":
            self.expect("or")
            e = Or(e, self.and_())
        return e

    def and_(self) -> Expr:
        e = self.unary()
        while self.peek() == "and":
            self.expect("and")
            e = And(e, self.unary())
        return e

    def unary(self) -> Expr:
        if self.peek() == "not":
            self.expect("not")
            return Not(self.unary())
        if self.peek() == "(":
            self.expect("(")
            e = self.or_()
            self.expect(")")
            return e
        return self.predicate()

    def literal(self) -> Any:
        if self.peek() == "null":
            self.expect("null")
            return None
        return self.expect("lit")

    def predicate(self) -> Expr:
        if self.peek() == "lit" and self.peek(1) == "op" and self.peek(2) == "ident":
            v = self.expect("lit")
            op = self.expect("op")
            return Compare(self.expect("ident"), _FLIP[op], v)
        col = self.expect("ident")
        nxt = self.peek()
        if nxt == "op":
            op = self.expect("op")
            return Compare(col, op, self.literal())
        if nxt == "is":
            self.expect("is")
            neg = self.peek() == "not"
            if neg:
                self.expect("not")
            self.expect("null")
            return IsNull(col, negate=neg)
        neg = nxt == "not"
        if neg:
            self.expect("not")
        self.expect("in")
        self.expect("(")
        vals = [self.literal()]
        while self.peek() == ",":
            self.expect(",")
            vals.append(self.literal())
        self.expect(")")
        e: Expr = IsIn(col, vals)
        return Not(e) if neg else e


def parse_filter(text: str) -> Expr:
    """Parse ``col op literal`` terms joined by ``and`` / ``or`` / ``not`` and parentheses.

    Ops: ``= == != <> < <= > >=``, ``in (...)``, ``not in (...)``, ``is null``, ``is not null``.
    Literals: numbers, ``'strings'`` or ``"strings"``, ``true``, ``false``, ``null``, ``nan``.
    Strings are converted to the column's type when bound (``d >= '2024-01-31'`` on a DATE).
    Names may be dotted or back-quoted.
    """
    if not text or not text.strip():
        raise ValueError("empty filter")
    return _Parser(text).parse()
