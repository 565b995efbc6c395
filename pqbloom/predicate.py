"""Filters and predicate pushdown: expressions, literal binding, pruning, exact evaluation.

Expressions
-----------
``field("id") == 5``, ``!=``, ``<``, ``<=``, ``>``, ``>=``, ``field("s").isin([...])``,
``field("x").is_null()``, ``field("x").is_valid()``, combined with ``&``, ``|`` and ``~``.
:func:`to_expression` also takes pyarrow-style DNF lists (``[("id", "==", 5), ...]`` is an AND,
``[[...], [...]]`` an OR of ANDs; ops ``= == != < <= > >= in not in``) and :func:`parse_filter`
a small text grammar (``id == 5 and (s in ('a', 'b') or x is null)``) used by ``pqbloom query``.

Semantics (SQL / Arrow three-valued logic)
------------------------------------------
* A comparison with a null value is null, and a row is returned only when the filter is *true*:
  ``x != 5`` and ``~(x == 5)`` never return rows where ``x`` is null.
* Floats follow IEEE 754 as Arrow compute does: NaN compares false with everything except
  ``!=`` (true); ``-0.0 == +0.0``.
* ``isin`` is never null (as pyarrow's ``is_in``): a null row matches when ``None`` is in the
  list, NaN matches a NaN in the list, and otherwise a value matches when it ``==`` a listed
  value (so, unlike pyarrow's bitwise hashing, ``isin([0.0])`` also matches ``-0.0``).
  ``not in`` is ``~isin`` and therefore returns null rows unless ``None`` is listed.
* A leaf inside a list or map (a *repeated* leaf, named by its full path as in
  ``ParquetFile.schema``: ``field("tags.list.element") == 5``, ``"m.key_value.key"``) is tested
  per element and the row is selected when *at least one* element satisfies the test (SQL's
  ``EXISTS``, DuckDB's ``list_contains`` / ``len(list_filter(...)) > 0``). At row level such a term
  is two-valued: false when no element satisfies it, including rows whose list is null or empty.
  ``is_null()`` / ``is_valid()`` on a repeated leaf ask whether some element is null / non-null.
  ``~(field("tags.list.element") == 5)`` therefore keeps rows with null or empty lists.
* Literals are user values (int, float, Decimal, str, bytes, date, datetime, time, UUID) converted
  to the column's *physical* domain once per file: DATE -> days, TIMESTAMP/TIME -> ticks of the
  unit (aware datetimes are taken in UTC, naive ones as given), DECIMAL -> unscaled integers,
  STRING -> UTF-8 bytes compared byte-wise, unsigned ints compare unsigned. A literal that cannot
  occur in the column folds the comparison (``int32_col == 2**40`` is false for every non-null
  row, ``int_col < 2.5`` becomes ``int_col <= 2``).

Pruning (cheapest first), all of it conservative
------------------------------------------------
Every node yields *may be true* / *may be false* for a unit of rows (row group or page run), so
``~``, ``&`` and ``|`` prune soundly. Row groups are pruned by footer statistics
(:class:`~pqbloom.statistics.ChunkStats`: NaN bounds, truncated bounds, legacy stats and sort
orders already vetted; evaluated for every row group of a file at once, on arrays gathered from
one skim of the footer), then by Bloom filters for ``==`` / ``isin`` (one header read and one
32-byte block per probe; ``0.0`` probes both zeros; never for NaN or BYTE_ARRAY decimals), then
by dictionary pages when ``encoding_stats`` show every data page is dictionary-encoded (the
dictionary is exact). Bloom probes come before dictionaries because they cost two reads of at
most 96 bytes while a dictionary page can be a megabyte. Then the page index
(ColumnIndex + OffsetIndex, only when :func:`~pqbloom.statistics.column_index_is_usable` and the
offsets are consistent with the chunk) selects row ranges; only the pages overlapping them are
read and decoded for the predicate columns; the predicate is evaluated exactly on those rows,
and the other columns are decoded only for the pages holding matching rows (late
materialization). Encrypted files skip the page-level steps and decode whole chunks.

For a repeated leaf, statistics, Bloom filters, dictionaries and page indexes describe its
elements, so they can only prove "no element satisfies the test" (the rows are all false), never
"every row is true" (a row may have no element). Pages of a repeated leaf with an OffsetIndex
begin at record boundaries (the spec requires it; checked when decoding), so page pruning works
as for flat columns.

Explain
-------
Pass an :class:`Explain` to ``ParquetFile.read(..., explain=ex)``, ``iter_batches`` or
``read_table``; it is filled with what the read did (row groups pruned per layer, pages
read/skipped, rows decoded/returned, requests and bytes read).
"""

from __future__ import annotations

import copy
import datetime as _dt
import decimal
import math
import re
import struct
import uuid
import zlib
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from dataclasses import field as dc_field
from dataclasses import fields as dc_fields
from fractions import Fraction
from typing import TYPE_CHECKING, Any

import numpy as np

from .arrays import BinaryArray
from .errors import BloomFilterError, CorruptFileError, MemoryLimitError, ParquetError
from .format import RowGroupList, T, decode_prefix
from .io import read_ranges
from .limits import charge
from .statistics import (
    ChunkStats,
    SortOrder,
    column_index_bounds,
    column_index_is_usable,
    column_order_kind,
    legacy_stats_trusted,
    sort_order_for,
)
from .table import Column, Table

if TYPE_CHECKING:
    from .file.levels import LeafLevels
    from .reader import ParquetFile
    from .schema import ColumnDescriptor

__all__ = [
    "Expr",
    "FieldRef",
    "field",
    "Explain",
    "to_expression",
    "parse_filter",
    "read_filtered",
    "iter_filtered_batches",
    "FilePlan",
    "plan_file",
]

PT = T.Type
E = T.Encoding
_OPS = ("==", "!=", "<", "<=", ">", ">=")
_FLIP = {"==": "==", "!=": "!=", "<": ">", "<=": ">=", ">": "<", ">=": "<="}
_UNIT_PER_S = {"ms": 1_000, "us": 1_000_000, "ns": 1_000_000_000}
_EPOCH = _dt.datetime(1970, 1, 1)
_EPOCH_UTC = _dt.datetime(1970, 1, 1, tzinfo=_dt.timezone.utc)
MAX_DICTIONARY_BYTES = 1 << 20  # dictionary pages larger than this are not read just to prune
BLOOM_WHOLE_FILTER_PROBES = 8  # with more values than this, read the filter once instead of block by block
COALESCE_GAP = 4096  # merge reads separated by at most this many bytes


# ---------------------------------------------------------------------------
# Expressions
# ---------------------------------------------------------------------------
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
    __slots__ = ("column", "op", "value")

    def __init__(self, column: str, op: str, value: Any) -> None:
        if op not in _OPS:
            raise ValueError(f"unknown comparison {op!r}")
        self.column, self.op, self.value = column, op, value

    def columns(self) -> set[str]:
        return {self.column}

    def __str__(self) -> str:
        return f"{self.column} {self.op} {_fmt_value(self.value)}"


class IsIn(Expr):
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
    __slots__ = ()
    word = "and"


class Or(_Binary):
    __slots__ = ()
    word = "or"


class Not(Expr):
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
        return IsIn(self.name, values)

    def is_null(self) -> IsNull:
        return IsNull(self.name)

    def is_valid(self) -> IsNull:
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


def to_expression(filters: Any) -> Expr | None:
    """An :class:`Expr` from an expression, a pyarrow-style DNF list, a filter string, or None."""
    if filters is None or isinstance(filters, Expr):
        return filters
    if isinstance(filters, str):
        return parse_filter(filters)
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

    def take(self, kind: str) -> Any:
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
            self.take("or")
            e = Or(e, self.and_())
        return e

    def and_(self) -> Expr:
        e = self.unary()
        while self.peek() == "and":
            self.take("and")
            e = And(e, self.unary())
        return e

    def unary(self) -> Expr:
        if self.peek() == "not":
            self.take("not")
            return Not(self.unary())
        if self.peek() == "(":
            self.take("(")
            e = self.or_()
            self.take(")")
            return e
        return self.predicate()

    def literal(self) -> Any:
        if self.peek() == "null":
            self.take("null")
            return None
        return self.take("lit")

    def predicate(self) -> Expr:
        if self.peek() == "lit" and self.peek(1) == "op" and self.peek(2) == "ident":
            v = self.take("lit")
            op = self.take("op")
            return Compare(self.take("ident"), _FLIP[op], v)
        col = self.take("ident")
        nxt = self.peek()
        if nxt == "op":
            op = self.take("op")
            return Compare(col, op, self.literal())
        if nxt == "is":
            self.take("is")
            neg = self.peek() == "not"
            if neg:
                self.take("not")
            self.take("null")
            return IsNull(col, negate=neg)
        neg = nxt == "not"
        if neg:
            self.take("not")
        self.take("in")
        self.take("(")
        vals = [self.literal()]
        while self.peek() == ",":
            self.take(",")
            vals.append(self.literal())
        self.take(")")
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


# ---------------------------------------------------------------------------
# Binding: literals -> the column's physical domain
# ---------------------------------------------------------------------------
class _BCol:
    """A predicate column of one file, with the domain its values compare in.

    Domains: "int" (signed INT32/INT64 incl. DATE/TIMESTAMP/TIME/DECIMAL, BOOLEAN as 0/1,
    INT96 as nanoseconds), "uint", "float" (FLOAT/DOUBLE/FLOAT16), "decimal" (binary DECIMAL as
    unscaled ints), "bytes" (other binary, compared byte-wise unsigned).
    """

    def __init__(self, desc: ColumnDescriptor, column_order: Any) -> None:
        from .schema import repeated_def_levels

        self.desc = desc
        f = desc.field
        self.field = f
        self.name = desc.dotted_path
        # a leaf inside a list or map: terms on it are "some element satisfies it" (_BAny)
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
        self.lo: int | None = None
        self.hi: int | None = None
        if p == PT.BOOLEAN:
            self.dom, self.lo, self.hi = "int", 0, 1
        elif p == PT.INT96:
            self.dom, self.lo, self.hi = "int", -(1 << 63), (1 << 63) - 1
        elif p in (PT.INT32, PT.INT64):
            bits = 32 if p == PT.INT32 else 64
            if self.stat_kind == "INTEGER_UNSIGNED":
                self.dom, self.lo, self.hi = "uint", 0, (1 << bits) - 1
            else:
                self.dom, self.lo, self.hi = "int", -(1 << (bits - 1)), (1 << (bits - 1)) - 1
        elif p in (PT.FLOAT, PT.DOUBLE) or (p == PT.FIXED_LEN_BYTE_ARRAY and self.kind == "FLOAT16"):
            self.dom = "float"
        elif self.kind == "DECIMAL":
            self.dom = "decimal"
            if p == PT.FIXED_LEN_BYTE_ARRAY and self.type_length:
                self.lo, self.hi = -(1 << (8 * self.type_length - 1)), (1 << (8 * self.type_length - 1)) - 1
        else:
            self.dom = "bytes"
        # Bloom filters hash the physical bytes; only where a value has exactly one representation
        self.bloom_ok = p not in (PT.BOOLEAN, PT.INT96) and not (self.dom == "decimal" and p == PT.BYTE_ARRAY)

    @property
    def intlike(self) -> bool:
        return self.dom in ("int", "uint", "decimal")


class _BNode:
    __slots__ = ()


class _BLeaf(_BNode):
    __slots__ = ("col",)
    col: _BCol


class _BCmp(_BLeaf):
    __slots__ = ("op", "key")

    def __init__(self, col: _BCol, op: str, key: Any) -> None:
        self.col, self.op, self.key = col, op, key


class _BNonNull(_BLeaf):
    """``value`` for every non-null row, null for null rows (a folded comparison)."""

    __slots__ = ("value",)

    def __init__(self, col: _BCol, value: bool) -> None:
        self.col, self.value = col, value


class _BIsNull(_BLeaf):
    __slots__ = ("negate",)

    def __init__(self, col: _BCol, negate: bool) -> None:
        self.col, self.negate = col, negate


class _BIsIn(_BLeaf):
    __slots__ = ("keys", "has_null", "has_nan")

    def __init__(self, col: _BCol, keys: list[Any], has_null: bool, has_nan: bool) -> None:
        self.col, self.keys, self.has_null, self.has_nan = col, keys, has_null, has_nan


class _BAnd(_BNode):
    __slots__ = ("a", "b")

    def __init__(self, a: _BNode, b: _BNode) -> None:
        self.a, self.b = a, b


class _BOr(_BNode):
    __slots__ = ("a", "b")

    def __init__(self, a: _BNode, b: _BNode) -> None:
        self.a, self.b = a, b


class _BNot(_BNode):
    __slots__ = ("a",)

    def __init__(self, a: _BNode) -> None:
        self.a = a


class _BAny(_BNode):
    """A leaf on a repeated column: true for rows where some element satisfies it, else false."""

    __slots__ = ("a",)

    def __init__(self, a: _BLeaf) -> None:
        self.a = a


class _BConst(_BNode):
    __slots__ = ("value",)

    def __init__(self, value: bool | None) -> None:
        self.value = value


class _NaN:
    """Marker for a NaN literal."""


_NAN = _NaN()


def _parse_temporal(s: str, kind: str) -> Any:
    s = s.strip()
    try:
        if kind == "TIME":
            return _dt.time.fromisoformat(s)
        if kind == "DATE" and len(s) <= 10:
            return _dt.date.fromisoformat(s)
        return _dt.datetime.fromisoformat(s.replace("Z", "+00:00"))
    except ValueError:
        raise ValueError(f"cannot read {s!r} as a {kind.lower()}") from None


def _datetime_seconds(v: _dt.datetime) -> Fraction:
    if v.tzinfo is not None:
        d = v - _EPOCH_UTC
    else:
        d = v - _EPOCH
    return Fraction(d.days * 86400 + d.seconds) + Fraction(d.microseconds, 1_000_000)


def _numpy_datetime_seconds(v: np.datetime64) -> Fraction:
    unit, count = np.datetime_data(v.dtype)
    per = {"D": Fraction(86400), "h": Fraction(3600), "m": Fraction(60), "s": Fraction(1),
           "ms": Fraction(1, 10**3), "us": Fraction(1, 10**6), "ns": Fraction(1, 10**9)}.get(unit)
    if per is None:
        raise ValueError(f"unsupported datetime64 unit {unit}")
    return int(v.astype(np.int64)) * count * per


def _number_fraction(v: Any, what: str) -> Fraction | float | _NaN:
    """Exact value of a numeric literal; ±inf stay floats, NaN is _NAN."""
    if isinstance(v, (bool, np.bool_)):
        return Fraction(int(v))
    if isinstance(v, (int, np.integer)):
        return Fraction(int(v))
    if isinstance(v, (float, np.floating)):
        f = float(v)
        if f != f:
            return _NAN
        if math.isinf(f):
            return f
        return Fraction(f)
    if isinstance(v, decimal.Decimal):
        if v.is_nan():
            return _NAN
        if v.is_infinite():
            return float(v)
        return Fraction(v)
    if isinstance(v, Fraction):
        return v
    raise TypeError(f"cannot compare a {what} column with {type(v).__name__} {v!r}")


def _int_literal(v: Any, bc: _BCol) -> Fraction | float | _NaN:
    """A literal as an exact number in the column's integer domain (ticks, days, unscaled units...)."""
    kind = bc.kind
    name = bc.field.type_name
    if bc.ptype == PT.INT96 or kind == "TIMESTAMP":
        unit = "ns" if bc.ptype == PT.INT96 else (bc.field.logical_type.unit or "us")  # type: ignore[union-attr]
        if isinstance(v, str):
            v = _parse_temporal(v, "TIMESTAMP")
        if isinstance(v, _dt.datetime):
            return _datetime_seconds(v) * _UNIT_PER_S[unit]
        if isinstance(v, _dt.date):
            return Fraction((v - _dt.date(1970, 1, 1)).days * 86400 * _UNIT_PER_S[unit])
        if isinstance(v, np.datetime64):
            return _numpy_datetime_seconds(v) * _UNIT_PER_S[unit]
        return _number_fraction(v, name)
    if kind == "DATE":
        if isinstance(v, str):
            v = _parse_temporal(v, "DATE")
        if isinstance(v, _dt.datetime):
            return _datetime_seconds(v) / 86400
        if isinstance(v, _dt.date):
            return Fraction((v - _dt.date(1970, 1, 1)).days)
        if isinstance(v, np.datetime64):
            return _numpy_datetime_seconds(v) / 86400
        return _number_fraction(v, name)
    if kind == "TIME":
        unit = bc.field.logical_type.unit or "us"  # type: ignore[union-attr]
        if isinstance(v, str):
            v = _parse_temporal(v, "TIME")
        if isinstance(v, _dt.time):
            secs = Fraction((v.hour * 60 + v.minute) * 60 + v.second) + Fraction(v.microsecond, 1_000_000)
            return secs * _UNIT_PER_S[unit]
        if isinstance(v, np.timedelta64):
            return Fraction(int(v.astype(f"timedelta64[{unit}]").astype(np.int64)))
        return _number_fraction(v, name)
    if kind == "DECIMAL":
        scale = bc.field.logical_type.scale or 0  # type: ignore[union-attr]
        if isinstance(v, str):
            try:
                v = decimal.Decimal(v.strip())
            except decimal.InvalidOperation:
                raise ValueError(f"cannot read {v!r} as a decimal") from None
        elif isinstance(v, (float, np.floating)) and math.isfinite(float(v)):
            v = decimal.Decimal(repr(float(v)))  # 1.1 means 1.1, not its binary approximation
        q = _number_fraction(v, name)
        return q * 10**scale if isinstance(q, Fraction) else q
    if isinstance(v, str):
        raise TypeError(f"cannot compare a {name} column with the string {v!r}")
    return _number_fraction(v, name)


def _float_literal(v: Any, bc: _BCol) -> float:
    if isinstance(v, str):
        raise TypeError(f"cannot compare a {bc.field.type_name} column with the string {v!r}")
    if isinstance(v, (bool, int, float, np.integer, np.floating, decimal.Decimal, Fraction)):
        return float(v)
    raise TypeError(f"cannot compare a {bc.field.type_name} column with {type(v).__name__} {v!r}")


def _float_representable(f: float, bc: _BCol) -> bool:
    if bc.ptype == PT.DOUBLE or f != f or math.isinf(f):
        return True
    with np.errstate(over="ignore"):
        narrow = np.float32(f) if bc.ptype == PT.FLOAT else np.float16(f)
    return float(narrow) == f


def _bytes_literal(v: Any, bc: _BCol) -> bytes:
    if isinstance(v, str):
        return v.encode("utf-8")
    if isinstance(v, (bytes, bytearray, memoryview)):
        return bytes(v)
    if isinstance(v, uuid.UUID):
        return v.bytes
    raise TypeError(f"cannot compare a {bc.field.type_name} column with {type(v).__name__} {v!r}")


def _bind_compare(bc: _BCol, op: str, v: Any) -> _BNode:
    if v is None:
        return _BConst(None)  # comparing with null is null for every row
    if bc.intlike:
        q = _int_literal(v, bc)
        if isinstance(q, _NaN):
            return _BNonNull(bc, op == "!=")
        lo, hi = bc.lo, bc.hi
        above = (isinstance(q, float) and q > 0) or (hi is not None and q > hi)
        below = (isinstance(q, float) and q < 0) or (lo is not None and q < lo)
        integral = isinstance(q, Fraction) and q.denominator == 1
        if op == "==":
            return _BCmp(bc, "==", int(q)) if integral and not above and not below else _BNonNull(bc, False)
        if op == "!=":
            return _BCmp(bc, "!=", int(q)) if integral and not above and not below else _BNonNull(bc, True)
        if above:
            return _BNonNull(bc, op in ("<", "<="))
        if below:
            return _BNonNull(bc, op in (">", ">="))
        assert isinstance(q, Fraction)
        if op == "<":
            return _BCmp(bc, "<", math.ceil(q))
        if op == "<=":
            return _BCmp(bc, "<=", math.floor(q))
        if op == ">":
            return _BCmp(bc, ">", math.floor(q))
        return _BCmp(bc, ">=", math.ceil(q))
    if bc.dom == "float":
        f = _float_literal(v, bc)
        if f != f:
            return _BNonNull(bc, op == "!=")
        if op in ("==", "!=") and not _float_representable(f, bc):
            return _BNonNull(bc, op == "!=")
        return _BCmp(bc, op, f)
    b = _bytes_literal(v, bc)
    if op in ("==", "!=") and bc.ptype == PT.FIXED_LEN_BYTE_ARRAY and len(b) != bc.type_length:
        return _BNonNull(bc, op == "!=")
    return _BCmp(bc, op, b)


def _bind_isin(bc: _BCol, values: tuple[Any, ...]) -> _BNode:
    keys: list[Any] = []
    has_null = has_nan = False
    for v in values:
        if v is None:
            has_null = True
            continue
        if bc.intlike:
            q = _int_literal(v, bc)
            if isinstance(q, _NaN):
                has_nan = True  # an integer column holds no NaN
            elif isinstance(q, Fraction) and q.denominator == 1 and (bc.lo is None or q >= bc.lo) \
                    and (bc.hi is None or q <= bc.hi):
                keys.append(int(q))
        elif bc.dom == "float":
            f = _float_literal(v, bc)
            if f != f:
                has_nan = True
            elif _float_representable(f, bc):
                keys.append(0.0 if f == 0 else f)
        else:
            b = _bytes_literal(v, bc)
            if bc.ptype != PT.FIXED_LEN_BYTE_ARRAY or len(b) == bc.type_length:
                keys.append(b)
    keys = sorted(set(keys))
    return _BIsIn(bc, keys, has_null, has_nan and bc.dom == "float")


def _bind(e: Expr, cols: Mapping[str, _BCol]) -> _BNode:
    if isinstance(e, Const):
        return _BConst(e.value)
    if isinstance(e, Not):
        inner = _bind(e.operand, cols)
        if isinstance(inner, _BConst):
            return _BConst(None if inner.value is None else not inner.value)
        return _BNot(inner)
    if isinstance(e, And):
        return _BAnd(_bind(e.left, cols), _bind(e.right, cols))
    if isinstance(e, Or):
        return _BOr(_bind(e.left, cols), _bind(e.right, cols))
    if isinstance(e, (Compare, IsIn, IsNull)):
        bc = cols[e.column]
        leaf: _BNode
        if isinstance(e, IsNull):
            leaf = _BIsNull(bc, e.negate)
        elif isinstance(e, IsIn):
            leaf = _bind_isin(bc, e.values)
        else:
            leaf = _bind_compare(bc, e.op, e.value)
        if not bc.repeated:
            return leaf
        if isinstance(leaf, _BConst):  # null for every element: no element satisfies it
            assert leaf.value is None
            return _BConst(False)
        assert isinstance(leaf, _BLeaf)
        return _BAny(leaf)
    raise TypeError(f"not a filter expression: {e!r}")


def _leaves(n: _BNode) -> Iterator[_BLeaf]:
    if isinstance(n, _BLeaf):
        yield n
    elif isinstance(n, (_BAnd, _BOr)):
        yield from _leaves(n.a)
        yield from _leaves(n.b)
    elif isinstance(n, (_BNot, _BAny)):
        yield from _leaves(n.a)


# ---------------------------------------------------------------------------
# Exact evaluation (three-valued: T = rows where true, F = rows where false)
# ---------------------------------------------------------------------------
def _binary_cmp(arr: BinaryArray, key: bytes) -> np.ndarray:
    """-1 / 0 / 1 per value as it sorts before / equal to / after ``key`` (byte-wise, prefix first)."""
    n = len(arr)
    lens = arr.lengths()
    L = len(key)
    out = np.sign(lens - L).astype(np.int8)
    if n == 0 or L == 0 or arr.data.size == 0:
        return out
    k = np.frombuffer(key, np.uint8)
    starts = arr.offsets[:-1]
    cols = np.arange(L, dtype=np.int64)
    block = max(1, (1 << 22) // L)
    last = arr.data.size - 1
    for b0 in range(0, n, block):
        b1 = min(n, b0 + block)
        ln = lens[b0:b1, None]
        inval = cols[None, :] >= ln
        idx = np.minimum(starts[b0:b1, None] + cols[None, :], last)
        m = arr.data[idx]
        diff = (m != k[None, :]) & ~inval
        has = diff.any(axis=1)
        if not has.any():
            continue
        first = diff.argmax(axis=1)
        rows = np.arange(b1 - b0)
        less = m[rows, first] < k[first]
        out[b0:b1] = np.where(has, np.where(less, -1, 1), out[b0:b1])
    return out


def _binary_equal(arr: BinaryArray, key: bytes) -> np.ndarray:
    lens = arr.lengths()
    L = len(key)
    out = lens == L
    cand = np.flatnonzero(out)
    if len(cand) and L:
        starts = arr.offsets[:-1][cand]
        m = arr.data[starts[:, None] + np.arange(L, dtype=np.int64)[None, :]]
        out[cand] = (m == np.frombuffer(key, np.uint8)[None, :]).all(axis=1)
    return out


def _binary_isin(arr: BinaryArray, keys: list[bytes]) -> np.ndarray:
    from .bloom import hash_scalar, hash_values

    if not keys or len(arr) == 0:
        return np.zeros(len(arr), bool)
    if len(keys) <= 4:
        out = np.zeros(len(arr), bool)
        for k in keys:
            out |= _binary_equal(arr, k)
        return out
    h = hash_values(arr, PT.BYTE_ARRAY)
    kh = np.array([hash_scalar(k, PT.BYTE_ARRAY) for k in keys], np.uint64)
    cand = np.flatnonzero(np.isin(h, kh))
    out = np.zeros(len(arr), bool)
    if len(cand):
        ks = set(keys)
        out[cand] = np.fromiter((arr[int(i)] in ks for i in cand), bool, count=len(cand))
    return out


def _key_array(col: Column, bc: _BCol) -> Any:
    """The column's values in the comparison domain of ``bc``."""
    from .table import int96_to_ns

    v = col.values
    p = bc.ptype
    if bc.dom in ("int", "uint"):
        if p == PT.BOOLEAN:
            return np.asarray(v, bool).astype(np.int8)
        if p == PT.INT96:
            return int96_to_ns(v)
        if bc.dom == "uint":
            return np.asarray(v).view(np.uint32 if p == PT.INT32 else np.uint64)
        return np.asarray(v)
    if bc.dom == "float":
        if p == PT.FIXED_LEN_BYTE_ARRAY:
            return np.ascontiguousarray(v, dtype=np.uint8).view("<f2").reshape(-1).astype(np.float64)
        return np.asarray(v).astype(np.float64, copy=False)
    if bc.dom == "decimal":
        if isinstance(v, np.ndarray):  # FLBA (n, w)
            w = v.shape[1] if v.ndim == 2 else 0
            if 0 < w <= 8:
                m = np.ascontiguousarray(v, dtype=np.uint8)
                pad = np.where(m[:, :1] >= 0x80, 0xFF, 0x00).astype(np.uint8)
                full = np.concatenate([np.repeat(pad, 8 - w, axis=1), m], axis=1)
                return np.ascontiguousarray(full).view(">i8").reshape(-1).astype(np.int64)
            return np.array([int.from_bytes(bytes(r), "big", signed=True) for r in v], dtype=object)
        return np.array([int.from_bytes(b, "big", signed=True) if b else 0 for b in v], dtype=object)
    if isinstance(v, BinaryArray):
        return v
    return BinaryArray.from_fixed(np.asarray(v, np.uint8).reshape(len(v), -1))


def _np_cmp(a: Any, op: str, k: Any) -> np.ndarray:
    if op == "==":
        r = a == k
    elif op == "!=":
        r = a != k
    elif op == "<":
        r = a < k
    elif op == "<=":
        r = a <= k
    elif op == ">":
        r = a > k
    else:
        r = a >= k
    return np.asarray(r, dtype=bool)


def _leaf_truth(leaf: _BLeaf, col: Column, keys: Any) -> tuple[np.ndarray, np.ndarray]:
    n = len(col)
    if col.mask is None and isinstance(leaf, _BCmp) and not isinstance(keys, BinaryArray):
        r = _np_cmp(keys, leaf.op, leaf.key)
        return r, ~r
    null = col.mask if col.mask is not None else np.zeros(n, bool)
    valid = ~null
    if isinstance(leaf, _BIsNull):
        t = valid.copy() if leaf.negate else null.copy()
        return t, ~t
    if isinstance(leaf, _BNonNull):
        return (valid, np.zeros(n, bool)) if leaf.value else (np.zeros(n, bool), valid)
    if isinstance(leaf, _BIsIn):
        bc = leaf.col
        if isinstance(keys, BinaryArray):
            member = _binary_isin(keys, leaf.keys)
        elif keys.dtype == object:
            ks = set(leaf.keys)
            member = np.fromiter((x in ks for x in keys), bool, count=n)
        elif leaf.keys:
            kk = np.array(leaf.keys, dtype=np.float64 if bc.dom == "float" else (
                np.uint64 if bc.dom == "uint" else object))
            if kk.dtype == object:
                kk = np.array(leaf.keys, dtype=np.int64)
            member = np.isin(keys, kk)
        else:
            member = np.zeros(n, bool)
        if leaf.has_nan and bc.dom == "float":
            member |= np.isnan(keys)
        t = (valid & member) | (null & leaf.has_null)
        return t, ~t
    assert isinstance(leaf, _BCmp)
    if isinstance(keys, BinaryArray):
        if leaf.op in ("==", "!="):
            eq = _binary_equal(keys, leaf.key)
            r = eq if leaf.op == "==" else ~eq
        else:
            r = _np_cmp(_binary_cmp(keys, leaf.key), leaf.op, 0)
    else:
        r = _np_cmp(keys, leaf.op, leaf.key)
    return valid & r, valid & ~r


@dataclass
class _RepCol:
    """A repeated leaf over a run of rows: its non-null element values with the row of each, and the
    row of each null element. Rows whose list is null or empty appear in neither."""

    values: Column  # no mask
    value_rows: np.ndarray
    null_rows: np.ndarray


def _any_truth(leaf: _BLeaf, rc: _RepCol, keys: Any, n: int) -> tuple[np.ndarray, np.ndarray]:
    """Rows where some element satisfies ``leaf`` (true), and the others (false)."""
    t, _ = _leaf_truth(leaf, rc.values, keys)
    out = np.zeros(n, bool)
    out[rc.value_rows[t]] = True
    if len(rc.null_rows) and _leaf_null_truth(leaf)[0]:
        out[rc.null_rows] = True
    return out, ~out


def evaluate(node: _BNode, cols: Mapping[str, Any], n: int) -> tuple[np.ndarray, np.ndarray]:
    """(rows where the predicate is true, rows where it is false); the rest are null.

    ``cols`` maps a column name to its :class:`Column` over the ``n`` rows, or for a repeated leaf
    to a :class:`_RepCol`.
    """
    # the truth masks of the nodes, key arrays and the caller's row numbers of the matches: a page of
    # a few bytes can stand for millions of rows, so the read's memory budget counts them first
    # (comparing byte strings gathers by byte: a word per byte of the values)
    value_bytes = sum(int(v.offsets[-1] - v.offsets[0]) for v in (getattr(c, "values", None) for c in cols.values())
                      if isinstance(v, BinaryArray))
    charge(16 * n + 8 * value_bytes, f"evaluating the filter over {n:,} rows")
    cache: dict[str, Any] = {}

    def go(x: _BNode) -> tuple[np.ndarray, np.ndarray]:
        if isinstance(x, _BConst):
            if x.value is None:
                return np.zeros(n, bool), np.zeros(n, bool)
            ones = np.ones(n, bool)
            return (ones, ~ones) if x.value else (~ones, ones)
        if isinstance(x, _BAny):
            leaf = x.a
            rc = cols[leaf.col.name]
            keys = None
            if isinstance(leaf, (_BCmp, _BIsIn)):
                keys = cache.get(leaf.col.name)
                if keys is None:
                    keys = cache[leaf.col.name] = _key_array(rc.values, leaf.col)
            return _any_truth(leaf, rc, keys, n)
        if isinstance(x, _BLeaf):
            col = cols[x.col.name]
            keys = None
            if isinstance(x, (_BCmp, _BIsIn)):
                keys = cache.get(x.col.name)
                if keys is None:
                    keys = cache[x.col.name] = _key_array(col, x.col)
            return _leaf_truth(x, col, keys)
        if isinstance(x, _BNot):
            t, f = go(x.a)
            return f, t
        assert isinstance(x, (_BAnd, _BOr))
        ta, fa = go(x.a)
        tb, fb = go(x.b)
        if isinstance(x, _BAnd):
            return ta & tb, fa | fb
        return ta | tb, fa & fb

    return go(node)


# ---------------------------------------------------------------------------
# Pruning: may the predicate be true / false somewhere in a unit of rows?
# ---------------------------------------------------------------------------
@dataclass
class _Stats:
    """What metadata says about one column over a unit of rows (bounds in the column's domain)."""

    rows: int
    nulls: int | None = None
    nans: int | None = None
    lo: Any = None
    hi: Any = None
    exact: bool = False


def _to_domain(v: Any, bc: _BCol) -> Any:
    if v is None:
        return None
    if bc.dom in ("int", "uint", "decimal"):
        return int(v)
    if bc.dom == "float":
        return float(v)
    return bytes(v)


def _cmp_may(op: str, k: Any, lo: Any, hi: Any, exact: bool) -> tuple[bool, bool]:
    lo_ok, hi_ok = lo is not None, hi is not None
    if op in ("==", "!="):
        inside = (not lo_ok or lo <= k) and (not hi_ok or k <= hi)
        all_equal = exact and lo_ok and hi_ok and lo == k and hi == k
        return (inside, not all_equal) if op == "==" else (not all_equal, inside)
    if op == "<":
        return (not lo_ok or lo < k), (not hi_ok or hi >= k)
    if op == "<=":
        return (not lo_ok or lo <= k), (not hi_ok or hi > k)
    if op == ">":
        return (not hi_ok or hi > k), (not lo_ok or lo <= k)
    return (not hi_ok or hi >= k), (not lo_ok or lo < k)


def _leaf_may(leaf: _BLeaf, st: _Stats) -> tuple[bool, bool]:
    rows = st.rows
    nulls = st.nulls
    if rows <= 0:
        return False, False
    any_null = nulls is None or nulls > 0
    nonnull = nulls is None or nulls < rows
    if isinstance(leaf, _BIsNull):
        return (nonnull, any_null) if leaf.negate else (any_null, nonnull)
    if isinstance(leaf, _BNonNull):
        return nonnull and leaf.value, nonnull and not leaf.value
    is_float = leaf.col.dom == "float"
    nan = is_float and nonnull and (st.nans is None or st.nans > 0)
    number = nonnull and not (is_float and st.nans is not None and nulls is not None and st.nans + nulls >= rows)
    lo, hi = (st.lo, st.hi) if number else (None, None)
    if isinstance(leaf, _BIsIn):
        t_num = number and any((lo is None or lo <= k) and (hi is None or k <= hi) for k in leaf.keys)
        mt = t_num or (any_null and leaf.has_null) or (nan and leaf.has_nan)
        mf = number or (any_null and not leaf.has_null) or (nan and not leaf.has_nan)
        return bool(mt), bool(mf)
    assert isinstance(leaf, _BCmp)
    t, f = _cmp_may(leaf.op, leaf.key, lo, hi, st.exact) if number else (False, False)
    if nan:
        if leaf.op == "!=":
            t = True
        else:
            f = True
    return bool(t), bool(f)


def _leaf_null_truth(leaf: _BLeaf) -> tuple[bool, bool]:
    """The result of a leaf on a null row."""
    if isinstance(leaf, _BIsNull):
        return (False, True) if leaf.negate else (True, False)
    if isinstance(leaf, _BIsIn):
        return leaf.has_null, not leaf.has_null
    return False, False


Verdict = tuple[Any, Any]  # (may be true, may be false): bools, or bool arrays per row run


def _combine(node: _BNode, leaf_fn: Any) -> Verdict:
    """Fold (may_true, may_false) up the tree; ``leaf_fn(leaf, need_t, need_f)`` gives a leaf's."""

    def go(x: _BNode, nt: bool, nf: bool) -> Verdict:
        if isinstance(x, _BConst):
            return x.value is True, x.value is False
        if isinstance(x, _BLeaf):
            return leaf_fn(x, nt, nf)
        if isinstance(x, _BAny):
            # elements tell when no row can be true; a row without elements is always false
            t, _ = go(x.a, nt, False)
            return t, True
        if isinstance(x, _BNot):
            t, f = go(x.a, nf, nt)
            return f, t
        assert isinstance(x, (_BAnd, _BOr))
        is_and = isinstance(x, _BAnd)
        ta, fa = go(x.a, nt, nf)
        if isinstance(ta, bool) and isinstance(fa, bool):
            # skip the other side (and its IO) when it cannot change the answer we need
            if is_and and (not nt or not ta) and (not nf or fa):
                return (False if nt else True), True
            if not is_and and (not nt or ta) and (not nf or not fa):
                return True, (False if nf else True)
        tb, fb = go(x.b, nt, nf)
        if is_and:
            return ta & tb, fa | fb
        return ta | tb, fa & fb

    return go(node, True, False)


# ---------------------------------------------------------------------------
# Explain
# ---------------------------------------------------------------------------
@dataclass
class Explain:
    """What a (filtered) read did. Pass one as ``explain=`` to be filled in; ``str()`` renders it.

    Row groups are pruned by the cheapest layer that can: statistics, then Bloom filters, then
    dictionaries, then the page index (every page run excluded). A Bloom filter that cannot be read or
    trusted (its header disagrees with the footer: :mod:`pqbloom.file.bloom_site`) prunes nothing; it counts
    in ``bloom_filters_unused`` and a note names column, row group and reason. Page counts cover chunks whose
    OffsetIndex is known; ``chunks_read_whole`` counts chunks decoded without page selection.
    ``rows_decoded`` counts rows the predicate was evaluated on. ``requests``/``bytes_read`` are
    every read the call made (including the footer when the call opened the file).
    """

    filter: str = ""
    files_total: int = 0
    files_pruned_partition: int = 0
    files_pruned_metadata: int = 0  # every row group of the file pruned before any data was read
    row_groups_total: int = 0
    row_groups_pruned_statistics: int = 0
    row_groups_pruned_bloom_filter: int = 0
    row_groups_pruned_dictionary: int = 0
    row_groups_pruned_page_index: int = 0
    row_groups_read: int = 0
    bloom_filter_probes: int = 0
    bloom_filters_unused: int = 0  # chunks whose filter was unreadable or untrustworthy (a note says why)
    dictionaries_read: int = 0
    pages_total: int = 0
    pages_read: int = 0
    pages_skipped: int = 0
    chunks_read_whole: int = 0
    rows_total: int = 0
    rows_decoded: int = 0
    rows_returned: int = 0
    requests: int = 0
    bytes_read: int = 0
    file_bytes: int = 0
    notes: list[str] = dc_field(default_factory=list)

    @property
    def row_groups_pruned(self) -> int:
        return (self.row_groups_pruned_statistics + self.row_groups_pruned_bloom_filter
                + self.row_groups_pruned_dictionary + self.row_groups_pruned_page_index)

    def add(self, other: Explain) -> None:
        """Accumulate ``other`` (another file or row group) into this one."""
        for f in dc_fields(self):
            if f.name == "filter":
                self.filter = self.filter or other.filter
            elif f.name == "notes":
                for n in other.notes:
                    if n not in self.notes:
                        self.notes.append(n)
            else:
                setattr(self, f.name, getattr(self, f.name) + getattr(other, f.name))

    def to_dict(self) -> dict[str, Any]:
        d = {f.name: getattr(self, f.name) for f in dc_fields(self)}
        d["row_groups_pruned"] = self.row_groups_pruned
        return d

    def __str__(self) -> str:
        lines = [f"filter: {self.filter or '(none)'}"]
        if self.files_total:
            lines.append(f"files: {self.files_total} total, {self.files_pruned_partition} pruned by partition values, "
                         f"{self.files_pruned_metadata} pruned by metadata")
        lines.append(f"row groups: {self.row_groups_total} total, {self.row_groups_read} read; pruned by "
                     f"statistics {self.row_groups_pruned_statistics}, Bloom filter "
                     f"{self.row_groups_pruned_bloom_filter} ({self.bloom_filter_probes} probes, "
                     f"{self.bloom_filters_unused} not used), dictionary "
                     f"{self.row_groups_pruned_dictionary} ({self.dictionaries_read} read), page index "
                     f"{self.row_groups_pruned_page_index}")
        lines.append(f"pages: {self.pages_read} read, {self.pages_skipped} skipped (of {self.pages_total} in "
                     f"offset-indexed chunks of row groups read); {self.chunks_read_whole} chunks read whole")
        lines.append(f"rows: {self.rows_total} total, {self.rows_decoded} decoded for the predicate, "
                     f"{self.rows_returned} returned")
        lines.append(f"io: {self.requests} requests, {self.bytes_read:,} bytes read of {self.file_bytes:,}")
        lines.extend(f"note: {n}" for n in self.notes)
        return "\n".join(lines)


# ---------------------------------------------------------------------------
# Per-file plan
# ---------------------------------------------------------------------------
class _FilePlan:
    def __init__(self, pf: ParquetFile, expr: Expr | None) -> None:
        self.pf = pf
        self.expr = expr
        self.node: _BNode | None = None
        self.cols: dict[str, _BCol] = {}
        if expr is None:
            return
        md = pf.metadata
        orders = md.column_orders if md.column_orders is not None and len(md.column_orders) == len(pf.columns) \
            else None
        for name in sorted(expr.columns()):
            desc = pf.column_descriptor(name)
            self.cols[name] = _BCol(desc, orders[desc.index] if orders is not None else None)
        self.node = _bind(expr, self.cols)
        if isinstance(self.node, _BConst) and self.node.value is True:
            self.node = None

    @property
    def always_empty(self) -> bool:
        return isinstance(self.node, _BConst)  # False or null for every row (True folded to None)


def _rg_rows(pf: ParquetFile, rg: int) -> int:
    n = pf.metadata.row_groups[rg].num_rows
    return int(n) if n is not None and n > 0 else 0


def _column_stats(pf: ParquetFile, rg: int, bc: _BCol) -> _Stats:
    rows = _rg_rows(pf, rg)
    try:
        meta = pf.chunk_metadata(rg, bc.desc)
    except ParquetError:
        return _Stats(rows)
    return _meta_stats(bc, rows, meta, pf.created_by)


def _meta_stats(bc: _BCol, rows: int, meta: Any, created_by: str | None) -> _Stats:
    """What ColumnMetaData ``meta`` of a chunk of ``rows`` rows says (the scalar reference of
    :func:`_gather_stats`)."""
    if bc.repeated:
        # a repeated leaf's counts are of level entries (>= 1 per row): the unit is the entries
        if meta.num_values is None or meta.num_values < rows:
            return _Stats(rows)
        rows = meta.num_values
    elif meta.num_values is not None and meta.num_values != rows:
        return _Stats(rows)
    cs = ChunkStats.from_thrift(meta.statistics, bc.ptype, bc.sort_order, column_order=bc.column_order,
                                created_by=created_by, type_length=bc.type_length, logical_kind=bc.stat_kind)
    nulls = cs.null_count if cs.null_count is not None and cs.null_count <= rows else None
    if bc.repeated:
        ss = meta.size_statistics
        counts = _element_counts(bc, ss.definition_level_histogram if ss is not None else None, rows)
        if counts is not None:
            rows, nulls = counts
    nans = cs.nan_count if bc.dom == "float" else 0
    exact = bc.dom != "bytes" or (cs.min_exact is True and cs.max_exact is True)
    if bc.sort_order is SortOrder.UNDEFINED:
        return _Stats(rows, nulls, nans)
    return _Stats(rows, nulls, nans, _to_domain(cs.min, bc), _to_domain(cs.max, bc), exact)


def _element_counts(bc: _BCol, def_hist: Sequence[int] | None, entries: int | None) -> tuple[int, int] | None:
    """(elements, null elements) of a repeated leaf from a definition-level histogram of ``entries``
    level entries (None: not known); None when there is no histogram or it does not add up.

    Without one, ``null_count`` also counts the entries of null and empty lists, which is only an
    upper bound on the null elements (still sound for pruning, just weaker for ``is_null``).
    """
    if def_hist is None or len(def_hist) != bc.max_def + 1 or any(c is None or c < 0 for c in def_hist) \
            or (entries is not None and sum(def_hist) != entries):
        return None
    elements = int(sum(def_hist[bc.elem_def:]))
    return elements, elements - int(def_hist[bc.max_def])


# ---------------------------------------------------------------------------
# Statistics pruning of every row group at once
# ---------------------------------------------------------------------------
# Footer statistics of the filter's columns are gathered for all row groups into arrays in each
# column's domain and the bound tree is evaluated on them in one go; Bloom filters, dictionaries
# and page indexes then run only on the survivors. _meta_stats / _leaf_may are the reference:
# tests/test_pruning_vectorized.py checks this path against them.
_UNKNOWN = -1  # a count metadata does not give


@dataclass
class _StatArrays:
    """:class:`_Stats` of one column over many row groups, one entry each.

    Bounds are in the column's domain (int64, uint64, float64; object for bytes and for ints
    beyond 64 bits); where ``has_lo``/``has_hi`` is false the entry is a placeholder.
    """

    rows: np.ndarray  # int64
    nulls: np.ndarray  # int64, _UNKNOWN when unknown
    nans: np.ndarray  # int64, _UNKNOWN when unknown
    lo: np.ndarray
    hi: np.ndarray
    has_lo: np.ndarray
    has_hi: np.ndarray
    exact: np.ndarray

    @classmethod
    def of(cls, stats: Sequence[_Stats], bc: _BCol) -> _StatArrays:
        """Pack scalar stats (the path for repeated leaves and unusual types)."""
        n = len(stats)
        return cls(np.fromiter((s.rows for s in stats), np.int64, n),
                   np.fromiter((_UNKNOWN if s.nulls is None else s.nulls for s in stats), np.int64, n),
                   np.fromiter((_UNKNOWN if s.nans is None else s.nans for s in stats), np.int64, n),
                   _domain_array([s.lo for s in stats], bc.dom), _domain_array([s.hi for s in stats], bc.dom),
                   np.fromiter((s.lo is not None for s in stats), bool, n),
                   np.fromiter((s.hi is not None for s in stats), bool, n),
                   np.fromiter((bool(s.exact) for s in stats), bool, n))


def _object_array(values: Sequence[Any]) -> np.ndarray:
    out = np.empty(len(values), object)
    out[:] = values  # element by element: np.array would turn bytes into 'S' (dropping trailing NULs)
    return out


def _int_array(values: Sequence[int]) -> np.ndarray:
    """The narrowest of int64, uint64 and object that holds ``values`` exactly."""
    for dt in (np.int64, np.uint64):
        try:
            return np.array(values, dt)
        except OverflowError:
            pass
    return _object_array(values)


def _domain_array(values: Sequence[Any], dom: str) -> np.ndarray:
    """Bounds as one array; None entries become a placeholder."""
    if dom == "float":
        return np.array([0.0 if v is None else v for v in values], np.float64)
    if dom == "bytes":
        return _object_array([b"" if v is None else v for v in values])
    return _int_array([0 if v is None else v for v in values])


_NP_CMP = {"==": np.equal, "!=": np.not_equal, "<": np.less, "<=": np.less_equal, ">": np.greater,
           ">=": np.greater_equal}


def _arr_cmp(a: np.ndarray, op: str, k: Any) -> np.ndarray:
    """``a OP k`` elementwise, exact also for a Python int ``k`` outside ``a``'s integer dtype."""
    if a.dtype.kind in "iu":
        info = np.iinfo(a.dtype)
        if not info.min <= k <= info.max:
            below = k > info.max  # every element is below k
            val = {"==": False, "!=": True, "<": below, "<=": below, ">": not below, ">=": not below}[op]
            return np.full(a.shape, val)
        k = a.dtype.type(k)
    elif a.dtype == object:
        k = _object_array([k])  # as np.bytes_ a key would lose its trailing NUL bytes
    return np.asarray(_NP_CMP[op](a, k), bool)


def _any_key_between(keys: list[Any], lo: np.ndarray, lo_ok: np.ndarray, hi: np.ndarray,
                     hi_ok: np.ndarray) -> np.ndarray:
    """Per entry: some key k (sorted, distinct) has lo <= k <= hi (a bound that is not ok is open)."""
    if not keys:
        return np.zeros(len(lo), bool)
    if lo.dtype.kind in "iu":
        info = np.iinfo(lo.dtype)
        fits = info.min <= keys[0] and keys[-1] <= info.max
        karr = np.array(keys, lo.dtype) if fits else _object_array(keys)
        if not fits:
            lo, hi = lo.astype(object), hi.astype(object)
    elif lo.dtype == object:
        karr = _object_array(keys)
    else:
        karr = np.array(keys, lo.dtype)
    first = np.where(lo_ok, np.searchsorted(karr, lo, "left"), 0)  # first key >= lo
    end = np.where(hi_ok, np.searchsorted(karr, hi, "right"), len(keys))  # past the last key <= hi
    return first < end


def _leaf_may_arr(leaf: _BLeaf, st: _StatArrays) -> tuple[np.ndarray, np.ndarray]:
    """:func:`_leaf_may` for every entry of ``st`` at once."""
    rows, nulls = st.rows, st.nulls
    valid = rows > 0
    known = nulls >= 0
    any_null = valid & (~known | (nulls > 0))
    nonnull = valid & (~known | (nulls < rows))
    if isinstance(leaf, _BIsNull):
        return (nonnull, any_null) if leaf.negate else (any_null, nonnull)
    if isinstance(leaf, _BNonNull):
        return nonnull & leaf.value, nonnull & (not leaf.value)
    if leaf.col.dom == "float":
        nans_known = st.nans >= 0
        nan = nonnull & (~nans_known | (st.nans > 0))
        # nans + nulls >= rows, written so that it cannot overflow (0 <= nulls <= rows where known)
        number = nonnull & ~(nans_known & known & (st.nans >= rows - nulls))
    else:
        nan = np.zeros(len(rows), bool)
        number = nonnull
    lo_ok, hi_ok = number & st.has_lo, number & st.has_hi
    if isinstance(leaf, _BIsIn):
        t_num = number & _any_key_between(leaf.keys, st.lo, lo_ok, st.hi, hi_ok)
        mt = t_num | (any_null & leaf.has_null) | (nan & leaf.has_nan)
        mf = number | (any_null & (not leaf.has_null)) | (nan & (not leaf.has_nan))
        return mt, mf
    assert isinstance(leaf, _BCmp)
    op, k, lo, hi = leaf.op, leaf.key, st.lo, st.hi
    if op in ("==", "!="):
        inside = (~lo_ok | _arr_cmp(lo, "<=", k)) & (~hi_ok | _arr_cmp(hi, ">=", k))
        all_equal = st.exact & lo_ok & hi_ok & _arr_cmp(lo, "==", k) & _arr_cmp(hi, "==", k)
        t, f = (inside, ~all_equal) if op == "==" else (~all_equal, inside)
    elif op == "<":
        t, f = ~lo_ok | _arr_cmp(lo, "<", k), ~hi_ok | _arr_cmp(hi, ">=", k)
    elif op == "<=":
        t, f = ~lo_ok | _arr_cmp(lo, "<=", k), ~hi_ok | _arr_cmp(hi, ">", k)
    elif op == ">":
        t, f = ~hi_ok | _arr_cmp(hi, ">", k), ~lo_ok | _arr_cmp(lo, "<=", k)
    else:
        t, f = ~hi_ok | _arr_cmp(hi, ">=", k), ~lo_ok | _arr_cmp(lo, "<", k)
    t, f = t & number, f & number
    if op == "!=":
        t = t | nan
    else:
        f = f | nan
    return t, f


_STAT_SIZE = {PT.BOOLEAN: 1, PT.INT32: 4, PT.INT64: 8, PT.FLOAT: 4, PT.DOUBLE: 8}


def _vector_decodable(bc: _BCol) -> bool:
    """Whether :func:`_gather_stats` decodes this column's bounds itself (else: _meta_stats per chunk)."""
    if bc.repeated:
        return False
    if bc.sort_order is SortOrder.UNDEFINED:
        return True  # no bounds to decode
    p = bc.ptype
    if bc.dom in ("int", "uint"):
        return p in (PT.BOOLEAN, PT.INT32, PT.INT64)
    if bc.dom == "float":
        return p in (PT.FLOAT, PT.DOUBLE) or (p == PT.FIXED_LEN_BYTE_ARRAY and bc.stat_kind == "FLOAT16")
    binary = p in (PT.BYTE_ARRAY, PT.FIXED_LEN_BYTE_ARRAY)
    if bc.dom == "decimal":
        return binary and bc.stat_kind == "DECIMAL" and bc.sort_order is SortOrder.SIGNED
    return binary and bc.sort_order is SortOrder.UNSIGNED


def _decode_bounds(raws: list[bytes | None], bc: _BCol) -> tuple[np.ndarray, np.ndarray]:
    """Raw statistics values (None: absent) as domain values and a mask of the usable ones
    (``statistics._bound`` + ``_to_domain`` for every entry)."""
    n = len(raws)
    p = bc.ptype
    if all(r is None for r in raws):  # also every column without an order (INT96, INTERVAL...)
        return _domain_array([None] * n, bc.dom), np.zeros(n, bool)
    if bc.dom in ("decimal", "bytes"):
        has = np.fromiter((r is not None for r in raws), bool, n)
        if bc.dom == "bytes":
            return _object_array([b"" if r is None else bytes(r) for r in raws]), has
        return _int_array([0 if r is None else int.from_bytes(r, "big", signed=True) for r in raws]), has
    float16 = p == PT.FIXED_LEN_BYTE_ARRAY
    size = 2 if float16 else _STAT_SIZE[p]
    has = np.fromiter((r is not None and len(r) == size for r in raws), bool, n)
    packed = b"".join([r for r in raws if r is not None and len(r) == size])  # type: ignore[misc]
    unsigned = bc.sort_order is SortOrder.UNSIGNED
    out: np.ndarray
    if bc.dom == "float":
        vals = np.frombuffer(packed, "<f2" if float16 else "<f4" if p == PT.FLOAT else "<f8").astype(np.float64)
        out = np.zeros(n, np.float64)
        out[has] = vals
        has &= ~np.isnan(out)  # a NaN bound is unusable
        # (statistics._fix_zero's choice of zero sign cannot change a comparison: -0.0 == 0.0)
        return out, has
    if p == PT.BOOLEAN:
        vals = (np.frombuffer(packed, np.uint8) != 0).astype(np.int64)
    elif p == PT.INT32:
        vals = np.frombuffer(packed, "<u4" if unsigned else "<i4").astype(np.int64)
    else:
        vals = np.frombuffer(packed, "<u8" if unsigned else "<i8")
    out = np.zeros(n, vals.dtype if vals.dtype == np.uint64 else np.int64)
    out[has] = vals
    return out, has


def _gather_stats(bc: _BCol, rows: np.ndarray, metas: Sequence[Any], created_by: str | None) -> _StatArrays:
    """:func:`_meta_stats` of a column's chunk in every row group at once (``metas[i]`` None: the
    chunk has no usable metadata), with the bounds decoded as arrays."""
    n = len(metas)
    row_list = rows.tolist()
    if not _vector_decodable(bc):
        return _StatArrays.of([_Stats(r) if m is None else _meta_stats(bc, r, m, created_by)
                               for r, m in zip(row_list, metas)], bc)
    # chunks whose value count disagrees with the row count say nothing (_meta_stats)
    ok = [m is not None and (m.num_values is None or m.num_values == r) for r, m in zip(row_list, metas)]
    stats = [m.statistics if good else None for m, good in zip(metas, ok)]
    nulls = np.fromiter((_UNKNOWN if s is None or s.null_count is None or not 0 <= s.null_count <= r
                         else s.null_count for s, r in zip(stats, row_list)), np.int64, n)
    if bc.dom == "float":
        nans = np.fromiter((_UNKNOWN if s is None or s.nan_count is None or s.nan_count < 0 else s.nan_count
                            for s in stats), np.int64, n)
    else:
        nans = np.where(np.array(ok, bool), 0, _UNKNOWN).astype(np.int64)
    lo_raw: list[bytes | None] = [None] * n
    hi_raw: list[bytes | None] = [None] * n
    exact = np.full(n, bc.dom != "bytes")
    order = column_order_kind(bc.column_order)
    ptype, so = bc.ptype, bc.sort_order
    if not (order == "UNKNOWN" or so is SortOrder.UNDEFINED or (order == "INT96_TIMESTAMP_ORDER"
                                                                 and ptype != PT.INT96)):
        # legacy_stats_trusted depends on min/max only through whether they are equal
        trust_same = legacy_stats_trusted(ptype, so, created_by, b"", b"")
        trust_diff = legacy_stats_trusted(ptype, so, created_by, b"", b"\x00")
        for i, s in enumerate(stats):
            if s is None:
                continue
            if s.min_value is not None or s.max_value is not None:
                if order is not None:
                    lo_raw[i], hi_raw[i] = s.min_value, s.max_value
                    if bc.dom == "bytes":
                        exact[i] = s.is_min_value_exact is True and s.is_max_value_exact is True
            elif s.min is not None or s.max is not None:
                same = s.min is not None and s.max is not None and bytes(s.min) == bytes(s.max)
                if trust_same if same else trust_diff:
                    lo_raw[i], hi_raw[i] = s.min, s.max
                    exact[i] = bc.dom != "bytes"  # legacy fields carry no exactness flags
    lo, has_lo = _decode_bounds(lo_raw, bc)
    hi, has_hi = _decode_bounds(hi_raw, bc)
    if so is SortOrder.UNDEFINED:
        exact[:] = False
    return _StatArrays(rows.astype(np.int64), nulls, nans, lo, hi, has_lo, has_hi, exact)


def _chunk_metas(pf: ParquetFile, descs: Sequence[ColumnDescriptor]) -> tuple[np.ndarray, dict[int, list[Any]]]:
    """Row counts of every row group and the ColumnMetaData (None: unusable) of the chunks of
    ``descs``; from one statistics skim of a lazily decoded footer when possible (decoding every
    full RowGroup costs more than pruning them)."""
    rgs = pf.metadata.row_groups
    n = len(rgs)
    skim = None
    if pf.decryption is None and isinstance(rgs, RowGroupList) and rgs.decoded < n:
        try:
            skim = rgs.statistics_skim(size_statistics=any(d.max_repetition_level > 0 for d in descs))
        except CorruptFileError:
            skim = None
        # anything RowGroupList would reject on access: take the path that reports it
        if skim is not None and any(g.num_rows is None or g.num_rows < 0 or g.columns is None for g in skim):
            skim = None
    metas: dict[int, list[Any]] = {}
    if skim is not None:
        n_leaves = len(pf.columns)
        rows = np.array([g.num_rows for g in skim], np.int64)
        for d in descs:
            i = d.index
            metas[i] = [g.columns[i].meta_data if len(g.columns) == n_leaves else None for g in skim]
        return rows, metas
    rows = np.zeros(n, np.int64)
    for d in descs:
        metas[d.index] = [None] * n
    for rg in range(n):
        rows[rg] = _rg_rows(pf, rg)
        for d in descs:
            try:
                metas[d.index][rg] = pf.chunk_metadata(rg, d)
            except ParquetError:
                pass
    return rows, metas


def _statistics_verdicts(plan: _FilePlan) -> tuple[np.ndarray, np.ndarray]:
    """Row counts of every row group and whether footer statistics let the filter be true there
    (``_RowGroupPruner.verdict(False, False)[0]`` of each)."""
    node = plan.node
    assert node is not None
    pf = plan.pf
    used = {lf.col.name: lf.col for lf in _leaves(node)}
    rows, metas = _chunk_metas(pf, [bc.desc for bc in used.values()])
    arrays = {name: _gather_stats(bc, rows, metas[bc.desc.index], pf.created_by) for name, bc in used.items()}
    t, _ = _combine(node, lambda leaf, nt, nf: _leaf_may_arr(leaf, arrays[leaf.col.name]))
    return rows, np.broadcast_to(np.asarray(t, bool), rows.shape)


def _statistics_pass(plan: _FilePlan, ex: Explain) -> list[int] | range:
    """Row groups left for :func:`_read_row_group` once statistics have pruned all of them at once;
    the empty and pruned ones are counted in ``ex`` as _read_row_group would count them."""
    pf = plan.pf
    # one row group gains nothing: _read_row_group prunes it by statistics itself
    if plan.node is None or isinstance(plan.node, _BConst) or pf.num_row_groups < 2:
        return range(pf.num_row_groups)
    rows, may = _statistics_verdicts(plan)
    gone = ~may | (rows <= 0)
    ex.row_groups_total += int(gone.sum())
    ex.rows_total += sum(rows[gone].tolist())
    ex.row_groups_pruned_statistics += int((gone & (rows > 0)).sum())
    return np.flatnonzero(~gone).tolist()


def _bloom_keys(leaf: _BLeaf) -> list[Any] | None:
    """Keys whose absence from a Bloom filter proves the leaf false on every non-null, non-NaN row."""
    if not leaf.col.bloom_ok:
        return None
    if isinstance(leaf, _BCmp) and leaf.op == "==":
        return [leaf.key]
    if isinstance(leaf, _BIsIn):
        return list(leaf.keys)
    return None


def _bloom_probes(bc: _BCol, key: Any) -> list[Any]:
    """The physical values a key may be stored as (both zeros for a float zero)."""
    if bc.dom == "float":
        zs = (0.0, -0.0) if key == 0 else (key,)
        return [np.float16(z).tobytes() for z in zs] if bc.ptype == PT.FIXED_LEN_BYTE_ARRAY else list(zs)
    if bc.dom == "decimal":
        assert bc.type_length is not None
        return [int(key).to_bytes(bc.type_length, "big", signed=True)]
    return [key]


class _RowGroupPruner:
    """Row-group-level verdicts with lazily fetched Bloom filters and dictionaries."""

    def __init__(self, plan: _FilePlan, rg: int, ex: Explain) -> None:
        self.plan, self.pf, self.rg, self.ex = plan, plan.pf, rg, ex
        self.stats: dict[str, _Stats] = {}
        self.bloom_cache: dict[tuple[int, Any], bool] = {}
        self.bloom_unused: set[int] = set()  # columns whose filter failed: not tried again in this row group
        self.dicts: dict[str, Any] = {}
        self.leaf_verdict: dict[int, tuple[bool, bool]] = {}
        self.kept: dict[tuple[int, int], bytes] = {}  # dictionary pages already read

    def stat(self, bc: _BCol) -> _Stats:
        s = self.stats.get(bc.name)
        if s is None:
            s = self.stats[bc.name] = _column_stats(self.pf, self.rg, bc)
        return s

    def verdict(self, use_bloom: bool, use_dict: bool) -> tuple[bool, bool]:
        node = self.plan.node
        assert node is not None

        def leaf_fn(leaf: _BLeaf, nt: bool, nf: bool) -> tuple[bool, bool]:
            st = self.stat(leaf.col)
            t, f = _leaf_may(leaf, st)
            if use_dict and (t and nt or f and nf):
                d = self._dictionary(leaf.col)
                if d is not None:
                    t, f = self._dict_truth(leaf, d, st)
            if use_bloom and t and nt:
                t = self._bloom_may(leaf, st)
            self.leaf_verdict[id(leaf)] = (t, f)
            return t, f

        t, f = _combine(node, leaf_fn)
        return bool(t), bool(f)

    def _bloom_may(self, leaf: _BLeaf, st: _Stats) -> bool:
        keys = _bloom_keys(leaf)
        if keys is None:
            return True
        if isinstance(leaf, _BIsIn):
            # null or NaN rows may satisfy an isin without being in the filter
            if (leaf.has_null and (st.nulls is None or st.nulls > 0)) or leaf.has_nan:
                return True
        bc = leaf.col
        lo, hi = st.lo, st.hi
        keys = [k for k in keys if (lo is None or lo <= k) and (hi is None or k <= hi)]
        probes = [p for k in keys for p in _bloom_probes(bc, k)]
        if not probes:
            return False
        pf, rg = self.pf, self.rg
        if bc.desc.index in self.bloom_unused:
            return True
        try:
            if len(probes) > BLOOM_WHOLE_FILTER_PROBES:
                bf = pf.bloom_filter(rg, bc.desc.index)
                if bf is None:
                    return True
                self.ex.bloom_filter_probes += 1
                return any(bf.might_contain(p, bc.ptype, bc.type_length) for p in probes)
            for p in probes:
                ck = (bc.desc.index, struct.pack("<d", p) if isinstance(p, float) else p)
                hit = self.bloom_cache.get(ck)
                if hit is None:
                    r = pf.bloom_filter_might_contain(rg, bc.desc.index, p)
                    if r is not None:
                        self.ex.bloom_filter_probes += 1
                    hit = self.bloom_cache[ck] = r is None or bool(r)  # None: no filter on this chunk
                if hit:
                    return True
            return False
        except ParquetError as exc:
            # never prune with a filter that cannot be read or trusted: it could call present values absent
            self.bloom_unused.add(bc.desc.index)
            self.ex.bloom_filters_unused += 1
            if isinstance(exc, BloomFilterError):
                note = f"Bloom filter of {bc.name} in row group {rg} not used: {exc.reason}"
            else:
                note = f"Bloom filter of {bc.name} in row group {rg} unreadable ({exc}); not used"
            if note not in self.ex.notes:
                self.ex.notes.append(note)
            return True

    def _dictionary(self, bc: _BCol) -> Any:
        if bc.name in self.dicts:
            return self.dicts[bc.name]
        d = None
        try:
            d = _read_dictionary(self.pf, self.rg, bc, self.kept)
        except ParquetError as exc:
            self.ex.notes.append(f"dictionary of {bc.name} in row group {self.rg} unreadable ({exc}); not used")
        if d is not None:
            self.ex.dictionaries_read += 1
        self.dicts[bc.name] = d
        return d

    def _dict_truth(self, leaf: _BLeaf, values: Any, st: _Stats) -> tuple[bool, bool]:
        col = Column(leaf.col.field.with_nullable(True), values, None)
        keys = _key_array(col, leaf.col) if isinstance(leaf, (_BCmp, _BIsIn)) else None
        t, f = _leaf_truth(leaf, col, keys)
        mt, mf = bool(t.any()), bool(f.any())
        if st.nulls is None or st.nulls > 0:
            nt, nf = _leaf_null_truth(leaf)
            mt, mf = mt or nt, mf or nf
        return mt, mf


def _read_dictionary(pf: ParquetFile, rg: int, bc: _BCol, keep: dict[tuple[int, int], bytes] | None = None) -> Any:
    """The decoded dictionary of a chunk whose data pages are all dictionary-encoded, else None."""
    from . import compression as compression_mod
    from .encodings import decode_plain

    if pf.decryption is not None:
        return None
    meta = pf.chunk_metadata(rg, bc.desc)
    es = meta.encoding_stats
    # a repeated leaf counts level entries, not rows
    if not es or (meta.num_values != _rg_rows(pf, rg) and not bc.repeated):
        return None
    data = [s for s in es if s.page_type in (T.PageType.DATA_PAGE, T.PageType.DATA_PAGE_V2) and (s.count or 0) > 0]
    if not data or any(s.encoding not in (E.PLAIN_DICTIONARY, E.RLE_DICTIONARY) for s in data):
        return None
    if not any(s.page_type == T.PageType.DICTIONARY_PAGE for s in es):
        return None
    start, length = pf.chunk_range(meta, rg, bc.desc)
    head = pf.range_reader.read(start, min(length, 512), what="dictionary page header")
    header, hlen = decode_prefix(T.PageHeader, head, offset=start, what="page header")
    if header.type != T.PageType.DICTIONARY_PAGE or header.dictionary_page_header is None:
        return None
    csize, usize = header.compressed_page_size, header.uncompressed_page_size
    dh = header.dictionary_page_header
    if csize is None or usize is None or csize < 0 or usize < 0 or hlen + csize > length \
            or csize > MAX_DICTIONARY_BYTES or usize > 8 * MAX_DICTIONARY_BYTES or dh.num_values is None \
            or dh.num_values < 0 or dh.encoding not in (E.PLAIN, E.PLAIN_DICTIONARY):
        return None
    body = head[hlen:hlen + csize] if hlen + csize <= len(head) else \
        pf.range_reader.read(start + hlen, csize, what="dictionary page")
    if pf.verify_checksums and header.crc is not None and \
            (zlib.crc32(body) & 0xFFFFFFFF) != (header.crc & 0xFFFFFFFF):
        return None  # the full read reports the checksum error
    if keep is not None:  # the page is the prefix a later page-level read of this chunk needs
        keep[(start, hlen + csize)] = head[:hlen] + body
    raw = compression_mod.decompress(compression_mod.codec_by_id(meta.codec), body, usize)
    values, _ = decode_plain(raw, bc.ptype, dh.num_values, bc.type_length)
    return values


# ---------------------------------------------------------------------------
# Page index
# ---------------------------------------------------------------------------
@dataclass
class _PageLayout:
    first_rows: np.ndarray  # first row of each data page
    offsets: list[int]
    sizes: list[int]
    prefix: tuple[int, int]  # (offset, length) of what precedes the first data page (dictionary)
    rows: int

    @property
    def num_pages(self) -> int:
        return len(self.offsets)

    def page_rows(self) -> np.ndarray:
        return np.diff(np.append(self.first_rows, self.rows))


class _IndexCache:
    """ColumnIndex / OffsetIndex of the chunks of one row group, read in coalesced batches."""

    def __init__(self, pf: ParquetFile, rg: int, ex: Explain) -> None:
        self.pf, self.rg, self.ex = pf, rg, ex
        self.ci: dict[int, Any] = {}
        self.oi: dict[int, _PageLayout | None] = {}
        self.kept: dict[tuple[int, int], bytes] = {}  # byte ranges already read (dictionary pages)
        # whole repeated-leaf chunks decoded for the filter, kept for the output assembly of the same
        # row group so that a leaf both filtered on and returned is decoded once
        self.levels: dict[int, LeafLevels] = {}

    def load(self, descs: Iterable[ColumnDescriptor], column_index: bool) -> None:
        pf, rg = self.pf, self.rg
        if pf.decryption is not None:
            for d in descs:
                self.oi.setdefault(d.index, None)
                self.ci.setdefault(d.index, None)
            return
        chunks = pf.metadata.row_groups[rg].columns
        if len(chunks) != len(pf.columns):  # as ParquetFile.chunk_metadata checks
            raise CorruptFileError(f"row group has {len(chunks)} column chunks for {len(pf.columns)} columns",
                                   row_group=rg)
        wants: list[tuple[str, int, int, int]] = []
        for d in descs:
            cc = chunks[d.index]
            if d.index not in self.oi:
                if cc.offset_index_offset is not None and cc.offset_index_length and cc.offset_index_length > 0:
                    wants.append(("oi", d.index, cc.offset_index_offset, cc.offset_index_length))
                else:
                    self.oi[d.index] = None
            if column_index and d.index not in self.ci:
                if cc.column_index_offset is not None and cc.column_index_length and cc.column_index_length > 0:
                    wants.append(("ci", d.index, cc.column_index_offset, cc.column_index_length))
                else:
                    self.ci[d.index] = None
        if not wants:
            return
        try:
            bufs = read_ranges(pf.range_reader, [(o, n) for _, _, o, n in wants], max_gap=COALESCE_GAP, what="page index")
        except ParquetError as exc:
            self.ex.notes.append(f"page index of row group {rg} unreadable ({exc}); not used")
            for kind, idx, _, _ in wants:
                (self.oi if kind == "oi" else self.ci)[idx] = None
            return
        for (kind, idx, off, _), buf in zip(wants, bufs):
            try:
                if kind == "ci":
                    self.ci[idx] = decode_prefix(T.ColumnIndex, buf, offset=off, what="column index")[0]
                else:
                    oi = decode_prefix(T.OffsetIndex, buf, offset=off, what="offset index")[0]
                    self.oi[idx] = self._layout(pf.columns[idx], oi)
            except ParquetError:
                (self.oi if kind == "oi" else self.ci)[idx] = None

    def _layout(self, desc: ColumnDescriptor, oi: Any) -> _PageLayout | None:
        """The OffsetIndex as a page layout, or None when it disagrees with the chunk."""
        pf, rg = self.pf, self.rg
        rows = _rg_rows(pf, rg)
        locs = oi.page_locations
        if not locs:
            return None
        try:
            meta = pf.chunk_metadata(rg, desc)
            start, length = pf.chunk_range(meta, rg, desc)
        except ParquetError:
            return None
        # a repeated leaf counts level entries (>= 1 per row); its pages begin at rows, which
        # _read_repeated checks when it decodes them
        if meta.num_values != rows and not (desc.max_repetition_level > 0 and (meta.num_values or 0) >= rows):
            return None
        end = start + length
        first, offs, sizes = [], [], []
        prev_end = start
        prev_row = -1
        for loc in locs:
            o, s, r = loc.offset, loc.compressed_page_size, loc.first_row_index
            if o is None or s is None or r is None or s <= 0 or o < prev_end or o + s > end or r <= prev_row \
                    or r >= max(rows, 1):
                return None
            if prev_row < 0 and r != 0:
                return None
            first.append(r)
            offs.append(o)
            sizes.append(s)
            prev_end, prev_row = o + s, r
        return _PageLayout(np.array(first, np.int64), offs, sizes, (start, offs[0] - start), rows)


def _page_stats(bc: _BCol, ci: Any, layout: _PageLayout) -> list[_Stats] | None:
    n = layout.num_pages
    prows = layout.page_rows()
    if not column_index_is_usable(ci, num_pages=n, page_row_counts=[int(x) for x in prows], ptype=bc.ptype):
        return None
    bounds = column_index_bounds(ci, bc.ptype, bc.sort_order, column_order=bc.column_order,
                                 type_length=bc.type_length, logical_kind=bc.stat_kind)
    hists = None
    if bc.repeated:
        w = bc.max_def + 1
        dh = ci.definition_level_histograms
        if dh is not None and len(dh) == n * w:
            hists = [dh[i * w:(i + 1) * w] for i in range(n)]
    out = []
    for i in range(n):
        r = int(prows[i])
        # a repeated leaf's counts are of level entries, not of the page's rows
        counts = _element_counts(bc, hists[i], None) if hists is not None else None
        if counts is not None and (counts[0] == counts[1]) != bool(ci.null_pages[i]):
            counts = None  # the histogram contradicts null_pages
        if ci.null_pages[i]:
            out.append(_Stats(counts[0], counts[1], 0) if counts is not None else _Stats(r, r, 0))
            continue
        nulls = ci.null_counts[i] if ci.null_counts is not None else None
        nans = (ci.nan_counts[i] if ci.nan_counts is not None else None) if bc.dom == "float" else 0
        lo, hi = bounds[i]
        if counts is not None:
            r, nulls = counts
        elif bc.repeated:  # the entries are unknown: at least one value besides the nulls and NaNs
            r = (nulls or 0) + (nans or 0) + 1
        out.append(_Stats(r, nulls, nans, _to_domain(lo, bc), _to_domain(hi, bc), bc.dom != "bytes"))
    return out


def _page_selection(plan: _FilePlan, rg: int, pruner: _RowGroupPruner, idx: _IndexCache,
                    ex: Explain) -> list[tuple[int, int]] | None:
    """Row ranges the page index cannot exclude; None when it excludes nothing (or is unusable)."""
    node = plan.node
    assert node is not None
    rows = _rg_rows(plan.pf, rg)
    leaves = list(_leaves(node))
    descs = {lf.col.desc.index: lf.col.desc for lf in leaves}
    idx.load(descs.values(), column_index=True)
    per_col: dict[str, tuple[np.ndarray, list[_Stats]]] = {}
    for lf in leaves:
        bc = lf.col
        if bc.name in per_col:
            continue
        layout = idx.oi.get(bc.desc.index)
        ci = idx.ci.get(bc.desc.index)
        if layout is None or ci is None:
            continue
        ps = _page_stats(bc, ci, layout)
        if ps is not None:
            per_col[bc.name] = (layout.first_rows, ps)
        elif ci is not None:
            note = f"column index of {bc.name} is inconsistent; not used for pruning"
            if note not in ex.notes:
                ex.notes.append(note)
    if not per_col:
        return None
    bounds = np.unique(np.concatenate([fr for fr, _ in per_col.values()] + [np.array([0], np.int64)]))
    seg_start = bounds
    seg_end = np.append(bounds[1:], rows)

    def leaf_fn(leaf: _BLeaf, nt: bool, nf: bool) -> Verdict:
        rt, rf = pruner.leaf_verdict.get(id(leaf), (True, True))
        got = per_col.get(leaf.col.name)
        if got is None:
            return rt, rf
        fr, ps = got
        page_of = np.searchsorted(fr, seg_start, side="right") - 1
        pv = [_leaf_may(leaf, s) for s in ps]
        t = np.array([v[0] for v in pv], bool)[page_of]
        f = np.array([v[1] for v in pv], bool)[page_of]
        return t & rt, f & rf

    t, _ = _combine(node, leaf_fn)
    keep = np.broadcast_to(np.asarray(t, bool), seg_start.shape)
    if keep.all():
        return None
    out: list[tuple[int, int]] = []
    for s, e, k in zip(seg_start.tolist(), seg_end.tolist(), keep.tolist()):
        if not k:
            continue
        if out and out[-1][1] == s:
            out[-1] = (out[-1][0], e)
        else:
            out.append((s, e))
    return out


# ---------------------------------------------------------------------------
# Reading selected rows of columns
# ---------------------------------------------------------------------------
class _Sel:
    """Sorted, disjoint row ranges ``[starts[i], ends[i])`` of a row group."""

    __slots__ = ("starts", "ends")

    def __init__(self, starts: np.ndarray, ends: np.ndarray) -> None:
        self.starts, self.ends = starts.astype(np.int64, copy=False), ends.astype(np.int64, copy=False)

    @classmethod
    def of_ranges(cls, ranges: Sequence[tuple[int, int]]) -> _Sel:
        a = np.array(ranges, np.int64).reshape(-1, 2)
        return cls(a[:, 0], a[:, 1])

    @classmethod
    def of_rows(cls, rows: np.ndarray) -> _Sel:
        """From sorted distinct row numbers."""
        if len(rows) == 0:
            return cls(np.zeros(0, np.int64), np.zeros(0, np.int64))
        brk = np.flatnonzero(np.diff(rows) != 1) + 1
        return cls(rows[np.r_[0, brk]], rows[np.r_[brk - 1, len(rows) - 1]] + 1)

    @property
    def lengths(self) -> np.ndarray:
        return self.ends - self.starts

    @property
    def num_rows(self) -> int:
        return int(self.lengths.sum())

    def absolute(self, local: np.ndarray) -> np.ndarray:
        """Row numbers of positions ``local`` within the concatenated ranges."""
        cum = np.cumsum(self.lengths)
        r = np.searchsorted(cum, local, side="right")
        return self.starts[r] + (local - (cum[r] - self.lengths[r]))


def _gather(col: Column, pos_starts: np.ndarray, lengths: np.ndarray) -> Column:
    """Rows ``[pos_starts[i], pos_starts[i] + lengths[i])`` of ``col``, concatenated."""
    if len(pos_starts) == 1:
        s = int(pos_starts[0])
        if s == 0 and int(lengths[0]) == len(col):
            return col
        return col.slice(s, s + int(lengths[0]))
    total = int(lengths.sum())
    before = np.cumsum(lengths) - lengths
    idx = np.repeat(pos_starts - before, lengths) + np.arange(total, dtype=np.int64)
    return col.take(idx)


@dataclass
class _ColRead:
    desc: ColumnDescriptor
    whole: bool
    pages: np.ndarray | None = None
    ranges: list[tuple[int, int]] = dc_field(default_factory=list)
    layout: _PageLayout | None = None


def _read_columns(pf: ParquetFile, rg: int, descs: Sequence[ColumnDescriptor], sel: _Sel | None,
                  idx: _IndexCache, ex: Explain) -> dict[str, Column]:
    """Columns holding exactly the rows of ``sel`` (None = all) of row group ``rg``.

    Only the pages overlapping ``sel`` are read where an OffsetIndex allows it; all byte ranges
    of the row group are fetched in one coalesced batch.
    """
    from .reader import ChunkParts, build_column, split_nested

    # nested output columns (reader.NestedSelection: structs, lists, maps) are read whole by the reader
    nested_out, descs = split_nested(pf, rg, descs, sel, ex, levels=idx.levels)

    nrows = _rg_rows(pf, rg)
    encrypted = pf.decryption is not None
    if sel is not None and len(sel.starts) == 1 and sel.starts[0] == 0 and sel.ends[0] == nrows:
        sel = None
    idx.load(descs, column_index=False)
    plans: list[_ColRead] = []
    for d in descs:
        layout = idx.oi.get(d.index)
        if layout is not None:
            ex.pages_total += layout.num_pages
        if encrypted:
            plans.append(_ColRead(d, True))
            ex.chunks_read_whole += 1
            continue
        meta = pf.chunk_metadata(rg, d)
        if meta.num_values == 0:
            plans.append(_ColRead(d, True))
            continue
        start, length = pf.chunk_range(meta, rg, d)
        if layout is not None and sel is not None:
            pages = _pages_for(layout, sel)
            if len(pages) < layout.num_pages:
                rngs = [layout.prefix] if layout.prefix[1] > 0 else []
                rngs += [(layout.offsets[q], layout.sizes[q]) for q in pages.tolist()]
                plans.append(_ColRead(d, False, pages, rngs, layout))
                ex.pages_read += len(pages)
                ex.pages_skipped += layout.num_pages - len(pages)
                continue
        plans.append(_ColRead(d, True, ranges=[(start, length)], layout=layout))
        if layout is not None:
            ex.pages_read += layout.num_pages
        else:
            ex.chunks_read_whole += 1
    flat = [r for p in plans for r in p.ranges if r not in idx.kept]
    got_ranges = dict(zip(flat, read_ranges(pf.range_reader, flat, max_gap=COALESCE_GAP, what="column chunk")))
    got_ranges.update(idx.kept)
    out: dict[str, Column] = dict(nested_out)
    for p in plans:
        d = p.desc
        pieces = [got_ranges[r] for r in p.ranges]
        parts: ChunkParts | None = None
        if not p.whole:
            layout = p.layout
            assert layout is not None and p.pages is not None and sel is not None
            prow = layout.page_rows()
            want = int(prow[p.pages].sum())
            try:
                meta = copy.copy(pf.chunk_metadata(rg, d))
                meta.num_values = want
                got = pf.decode_chunk(b"".join(pieces), p.ranges[0][0], meta, rg, d)
                parts = got if got.num_rows == want else None
            except (MemoryError, MemoryLimitError):  # memory, not a reason to retry: it would fail again
                raise
            except Exception:  # noqa: BLE001 - fall back to the whole chunk
                parts = None
            if parts is not None:
                # where each range starts inside the decoded pages
                out_start = np.cumsum(prow[p.pages]) - prow[p.pages]
                p0 = np.searchsorted(layout.first_rows, sel.starts, side="right") - 1
                slot = np.searchsorted(p.pages, p0)
                pos = out_start[slot] + (sel.starts - layout.first_rows[p0])
                out[d.dotted_path] = _gather(build_column(d.field, [parts]), pos, sel.lengths)
                continue
            ex.notes.append(f"page-level read of {d.dotted_path} in row group {rg} failed; read the whole chunk")
        elif pieces:
            try:
                got = pf.decode_chunk(pieces[0], p.ranges[0][0], pf.chunk_metadata(rg, d), rg, d)
                parts = got if got.num_rows == nrows else None
            except (MemoryError, MemoryLimitError):  # memory, not a reason to retry: it would fail again
                raise
            except Exception:  # noqa: BLE001 - the checked path below re-reads and reports properly
                parts = None
        if parts is None:
            parts = pf.read_chunk_parts(rg, d)
        col = build_column(d.field, [parts])
        out[d.dotted_path] = col if sel is None else _gather(col, sel.starts, sel.lengths)
    return out


def _read_repeated(pf: ParquetFile, rg: int, bc: _BCol, sel: _Sel | None, idx: _IndexCache,
                   ex: Explain) -> _RepCol:
    """The elements of repeated leaf ``bc`` in the rows of ``sel`` (None = all) of row group ``rg``.

    With a usable OffsetIndex only the pages overlapping ``sel`` are read; they must begin at
    records (checked against the decoded repetition levels), else the whole chunk is read.
    """
    d = bc.desc
    nrows = _rg_rows(pf, rg)
    if sel is not None and len(sel.starts) == 1 and sel.starts[0] == 0 and sel.ends[0] == nrows:
        sel = None
    idx.load([d], column_index=False)
    layout = idx.oi.get(d.index)
    if layout is not None:
        ex.pages_total += layout.num_pages
    lv: LeafLevels | None = None
    first: np.ndarray | None = None  # absolute row of each decoded record, when not 0..nrows-1
    if layout is not None and sel is not None and pf.decryption is None:
        pages = _pages_for(layout, sel)
        if len(pages) < layout.num_pages:
            got = _read_repeated_pages(pf, rg, d, layout, pages, idx)
            if got is not None:
                lv = got
                prow = layout.page_rows()[pages]
                first = np.repeat(layout.first_rows[pages] - (np.cumsum(prow) - prow), prow)
                first += np.arange(len(first), dtype=np.int64)
                ex.pages_read += len(pages)
                ex.pages_skipped += layout.num_pages - len(pages)
            else:
                ex.notes.append(f"page-level read of {d.dotted_path} in row group {rg} failed; read the whole chunk")
    if lv is None:
        lv = idx.levels.get(d.index)
        if lv is None:
            lv = idx.levels[d.index] = pf.read_leaf_levels(rg, d)
        if layout is not None:
            ex.pages_read += layout.num_pages
        else:
            ex.chunks_read_whole += 1
    assert lv.reps is not None and lv.defs is not None  # a repeated leaf has both levels
    # the decoded record of each level entry, then its position in the selected rows (-1: not selected)
    rec = np.cumsum(lv.reps == 0) - 1
    records = int(rec[-1]) + 1 if len(rec) else 0
    want = nrows if first is None else len(first)
    if records != want:  # a corrupt chunk: its records would land outside the row group
        raise CorruptFileError(f"column holds {records} records where {want} rows are expected", row_group=rg,
                               column=d.dotted_path)
    if sel is not None:
        pos = np.full(nrows, -1, np.int64)
        pos[sel.absolute(np.arange(sel.num_rows, dtype=np.int64))] = np.arange(sel.num_rows, dtype=np.int64)
        rec = pos[rec if first is None else first[rec]]
    defs = lv.defs
    is_value = defs == bc.max_def
    value_rows = rec[is_value]
    null_rows = rec[(defs >= bc.elem_def) & ~is_value]
    values = Column(bc.field.with_nullable(True), lv.values, None)
    if sel is not None:
        keep = value_rows >= 0
        if not keep.all():
            values = values.take(np.flatnonzero(keep))
            value_rows = value_rows[keep]
        null_rows = null_rows[null_rows >= 0]
    return _RepCol(values, value_rows, null_rows)


def _read_repeated_pages(pf: ParquetFile, rg: int, d: ColumnDescriptor, layout: _PageLayout, pages: np.ndarray,
                         idx: _IndexCache) -> Any:
    """LeafLevels of the data pages ``pages`` of a repeated leaf (with the dictionary page), or None
    when they do not decode on their own or do not hold exactly their OffsetIndex rows."""
    from .file.levels import LeafLevels, check_levels
    from .reader import assemble_values, concat_values

    rngs = [layout.prefix] if layout.prefix[1] > 0 else []
    rngs += [(layout.offsets[q], layout.sizes[q]) for q in pages.tolist()]
    want = [r for r in rngs if r not in idx.kept]
    got = dict(zip(want, read_ranges(pf.range_reader, want, max_gap=COALESCE_GAP, what="column chunk")))
    got.update(idx.kept)
    prow = layout.page_rows()[pages]
    try:
        # each page header tells how many level entries it holds
        counts = []
        for q in pages.tolist():
            h, _ = decode_prefix(T.PageHeader, got[(layout.offsets[q], layout.sizes[q])], what="page header")
            dp = h.data_page_header if h.type == T.PageType.DATA_PAGE else h.data_page_header_v2
            if dp is None or dp.num_values is None or dp.num_values < 1:
                return None
            counts.append(int(dp.num_values))
        meta = copy.copy(pf.chunk_metadata(rg, d))
        meta.num_values = sum(counts)
        parts: list[tuple[str, Any]] = []
        defs_l: list[np.ndarray] = []
        reps_l: list[np.ndarray] = []
        dictionary = None
        buf = b"".join(got[r] for r in rngs)
        for kind, vals, (defs, reps), page_dictionary in pf.iter_pages(buf, rngs[0][0], meta, rg, d, levels=True):
            dictionary = page_dictionary
            parts.append((kind, vals))
            defs_l.append(defs)
            reps_l.append(reps)
        if len(reps_l) != len(counts):
            return None
        values = concat_values(assemble_values(d.field, parts, None, dictionary, meta.num_values).pieces, d.field)
        defs_all, reps_all = np.concatenate(defs_l), np.concatenate(reps_l)
        check_levels(d, defs_all, reps_all, meta.num_values)
        # every page must begin a record and hold exactly the rows the OffsetIndex gives it
        starts = np.cumsum(counts) - np.array(counts)
        recs = np.add.reduceat((reps_all == 0).astype(np.int64), starts)
        if bool((reps_all[starts] != 0).any()) or not np.array_equal(recs, prow):
            return None
    except (MemoryError, MemoryLimitError):  # memory, not a reason to retry: it would fail again
        raise
    except Exception:  # noqa: BLE001 - the whole-chunk path re-reads and reports properly
        return None
    return LeafLevels(values, defs_all, reps_all, meta.num_values)


def _pages_for(layout: _PageLayout, sel: _Sel) -> np.ndarray:
    """Data pages overlapping the row ranges of ``sel``."""
    fr = layout.first_rows
    p0 = np.searchsorted(fr, sel.starts, side="right") - 1
    p1 = np.searchsorted(fr, sel.ends - 1, side="right") - 1
    mark = np.zeros(layout.num_pages + 1, np.int64)
    np.add.at(mark, p0, 1)
    np.add.at(mark, p1 + 1, -1)
    return np.flatnonzero(np.cumsum(mark)[:-1] > 0)


STREAM_MIN_PAGES = 2


def _stream_scan(plan: _FilePlan, rg: int, node: _BNode, scan: _Sel | None, idx: _IndexCache,
                 ex: Explain) -> tuple[np.ndarray, Column, int] | None:
    """Evaluate a one-column predicate page by page (no whole-chunk column is built).

    Returns (matching rows, the predicate column at those rows, rows evaluated), or None when the
    chunk does not qualify (encrypted, no usable OffsetIndex, a dictionary, few pages) or a page
    fails to decode on its own (the caller then takes the whole-chunk path, which reports errors).
    """
    from .reader import build_column

    pf = plan.pf
    if len(plan.cols) != 1 or pf.decryption is not None:
        return None
    d = next(iter(plan.cols.values())).desc
    if d.max_repetition_level > 0:
        return None
    idx.load([d], column_index=False)
    layout = idx.oi.get(d.index)
    if layout is None or layout.prefix[1] > 0 or layout.num_pages < STREAM_MIN_PAGES:
        return None
    nrows = layout.rows
    sel = scan if scan is not None else _Sel(np.array([0], np.int64), np.array([nrows], np.int64))
    pages = _pages_for(layout, sel)
    meta0 = pf.chunk_metadata(rg, d)
    prow = layout.page_rows()
    fr = layout.first_rows
    # one read per page: pages are decoded one at a time, and slicing a coalesced run would copy it
    bufs = [pf.range_reader.read(layout.offsets[q], layout.sizes[q], what="data page") for q in pages.tolist()]
    hits: list[np.ndarray] = []
    cols: list[Column] = []
    scanned = 0
    for q, buf in zip(pages.tolist(), bufs):
        start, count = int(fr[q]), int(prow[q])
        try:
            meta = copy.copy(meta0)
            meta.num_values = count
            parts = pf.decode_chunk(buf, layout.offsets[q], meta, rg, d)
        except (MemoryError, MemoryLimitError):  # memory, not a reason to retry: it would fail again
            raise
        except Exception:  # noqa: BLE001 - the whole-chunk path re-reads and reports properly
            return None
        if parts.num_rows != count:
            return None
        col = build_column(d.field, [parts])
        s0 = np.clip(sel.starts, start, start + count)
        e0 = np.clip(sel.ends, start, start + count)
        keep = e0 > s0
        sub = _Sel(s0[keep], e0[keep])
        part = _gather(col, sub.starts - start, sub.lengths)
        m = sub.num_rows
        scanned += m
        t, _ = evaluate(node, {d.dotted_path: part}, m)
        local = np.flatnonzero(t)
        if len(local):
            hits.append(sub.absolute(local))
            cols.append(part.take(local))
    ex.pages_total += layout.num_pages
    ex.pages_read += len(pages)
    ex.pages_skipped += layout.num_pages - len(pages)
    if not hits:
        from .table import column_from_values

        return np.zeros(0, np.int64), column_from_values(d.field.name, [], d.field), scanned
    return np.concatenate(hits), (cols[0] if len(cols) == 1 else Column.concat(cols)), scanned


def _read_row_group(plan: _FilePlan, rg: int, out_descs: Sequence[ColumnDescriptor], ex: Explain) -> Table | None:
    pf = plan.pf
    rows = _rg_rows(pf, rg)
    ex.row_groups_total += 1
    ex.rows_total += rows
    node = plan.node
    if rows == 0:
        return None
    idx = _IndexCache(pf, rg, ex)
    if node is None:
        ex.row_groups_read += 1
        ex.rows_returned += rows
        cols = _read_columns(pf, rg, out_descs, None, idx, ex)
        return Table([cols[d.dotted_path] for d in out_descs])
    if isinstance(node, _BConst):
        ex.row_groups_pruned_statistics += 1
        return None
    pruner = _RowGroupPruner(plan, rg, ex)
    if not pruner.verdict(False, False)[0]:
        ex.row_groups_pruned_statistics += 1
        return None
    if not pruner.verdict(True, False)[0]:
        ex.row_groups_pruned_bloom_filter += 1
        return None
    if not pruner.verdict(True, True)[0]:
        ex.row_groups_pruned_dictionary += 1
        return None
    idx.kept = pruner.kept
    ranges = _page_selection(plan, rg, pruner, idx, ex)
    if ranges is not None and not ranges:
        ex.row_groups_pruned_page_index += 1
        return None
    ex.row_groups_read += 1
    scan = None if ranges is None else _Sel.of_ranges(ranges)
    streamed = _stream_scan(plan, rg, node, scan, idx, ex)
    if streamed is not None:
        absolute, pcol, scanned = streamed
        ex.rows_decoded += scanned
        ex.rows_returned += len(absolute)
        if len(absolute) == 0:
            return None
        name = next(iter(plan.cols))
        rest = [d for d in out_descs if d.dotted_path != name]
        others = _read_columns(pf, rg, rest, _Sel.of_rows(absolute), idx, ex) if rest else {}
        return Table([pcol if d.dotted_path == name else others[d.dotted_path] for d in out_descs])
    pred_descs = [bc.desc for bc in plan.cols.values() if not bc.repeated]
    pcols = _read_columns(pf, rg, pred_descs, scan, idx, ex)
    n = rows if scan is None else scan.num_rows
    ex.rows_decoded += n
    env: dict[str, Any] = dict(pcols)
    for bc in plan.cols.values():
        if bc.repeated:
            env[bc.name] = _read_repeated(pf, rg, bc, scan, idx, ex)
    t, _ = evaluate(node, env, n)
    local = np.flatnonzero(t)
    ex.rows_returned += len(local)
    if len(local) == 0:
        return None
    rest = [d for d in out_descs if d.dotted_path not in pcols]
    others = {}
    if rest:
        absolute = local if scan is None else scan.absolute(local)
        others = _read_columns(pf, rg, rest, _Sel.of_rows(absolute), idx, ex)
    out = []
    for d in out_descs:
        c = pcols.get(d.dotted_path)
        out.append((c if len(local) == n else c.take(local)) if c is not None else others[d.dotted_path])
    return Table(out)


# ---------------------------------------------------------------------------
# Entry points used by ParquetFile / read_table / datasets
# ---------------------------------------------------------------------------
def _start(pf: ParquetFile, filters: Any) -> tuple[_FilePlan, Explain, int, int]:
    expr = to_expression(filters)
    plan = _FilePlan(pf, expr)
    ex = Explain(filter=str(expr) if expr is not None else "")
    st = pf.io_stats
    return plan, ex, st.requests, st.bytes_read


def _finish(pf: ParquetFile, ex: Explain, req0: int, bytes0: int, target: Explain | None, *,
            io_from_open: bool) -> None:
    st = pf.io_stats
    ex.requests = st.requests - (0 if io_from_open else req0)
    ex.bytes_read = st.bytes_read - (0 if io_from_open else bytes0)
    ex.file_bytes = pf.range_reader.size
    ex.files_total = 1
    if ex.row_groups_total and ex.row_groups_read == 0 and ex.rows_decoded == 0:
        ex.files_pruned_metadata = 1
    if target is not None:
        target.add(ex)


def read_filtered(pf: ParquetFile, columns: Sequence[str] | None = None, filters: Any = None, *,
                  explain: Explain | None = None, io_from_open: bool = False) -> Table:
    """Rows of ``pf`` where ``filters`` is true (all rows when None), pruning as described above."""
    plan, ex, r0, b0 = _start(pf, filters)
    out_descs = pf.select_columns(columns)
    tables = []
    for rg in _statistics_pass(plan, ex):
        t = _read_row_group(plan, rg, out_descs, ex)
        if t is not None and t.num_rows:
            tables.append(t)
    _finish(pf, ex, r0, b0, explain, io_from_open=io_from_open)
    if not tables:
        return pf.empty_table(columns)
    return tables[0] if len(tables) == 1 else Table.concat(tables)


def iter_filtered_batches(pf: ParquetFile, batch_size: int, columns: Sequence[str] | None, filters: Any, *,
                          explain: Explain | None = None) -> Iterator[Table]:
    """Batches of matching rows, one row group decoded at a time; ``explain`` is filled as it goes."""
    if batch_size <= 0:
        raise ValueError("batch_size must be positive")
    plan, ex, r0, b0 = _start(pf, filters)
    out_descs = pf.select_columns(columns)
    try:
        for rg in _statistics_pass(plan, ex):
            t = _read_row_group(plan, rg, out_descs, ex)
            if t is None:
                continue
            for s in range(0, t.num_rows, batch_size):
                yield t.slice(s, s + batch_size)
    finally:
        _finish(pf, ex, r0, b0, explain, io_from_open=False)



# ---------------------------------------------------------------------------
# Public planning API: which row groups of a file can match, then read them one by one
# (pqbloom.spark plans one Spark input partition per surviving row group with it)
# ---------------------------------------------------------------------------
class FilePlan:
    """A filter bound to one open :class:`~pqbloom.reader.ParquetFile`; build it with :func:`plan_file`.

    Binding (literals converted to each column's physical domain) happens once, in the
    constructor, and fails as a filtered read would (``KeyError`` for a column the file does not
    have, ``TypeError`` for a literal that cannot be compared with its column). The plan holds
    the open file: use it while the file is open.
    """

    def __init__(self, pf: ParquetFile, filters: Any = None) -> None:
        self._expr = to_expression(filters)
        self._plan = _FilePlan(pf, self._expr)

    @property
    def file(self) -> ParquetFile:
        """The file this plan reads."""
        return self._plan.pf

    @property
    def expression(self) -> Expr | None:
        """The filter as an expression (None: no filter, every row matches)."""
        return self._expr

    def row_groups(self, *, dictionaries: bool = False, explain: Explain | None = None) -> list[int]:
        """Indexes of the non-empty row groups that footer statistics and Bloom filters (and, with
        ``dictionaries=True``, dictionary pages) cannot rule out, in file order.

        Only metadata is read: Bloom filter blocks are probed, and dictionary pages are read only
        when ``dictionaries`` is true (they can be large, so planning leaves them off by default;
        :meth:`read_row_group` uses them anyway). ``explain`` receives ``row_groups_total`` and
        the ``row_groups_pruned_*`` counters of the layers used.
        """
        ex = explain if explain is not None else Explain()
        plan = self._plan
        pf = plan.pf
        out: list[int] = []
        if plan.node is None or plan.always_empty:
            for rg in range(pf.num_row_groups):
                if _rg_rows(pf, rg) == 0:
                    continue
                ex.row_groups_total += 1
                if plan.node is None:
                    out.append(rg)
                else:
                    ex.row_groups_pruned_statistics += 1
            return out
        rows, may = _statistics_verdicts(plan)
        ex.row_groups_total += int((rows > 0).sum())
        ex.row_groups_pruned_statistics += int(((rows > 0) & ~may).sum())
        for rg in np.flatnonzero((rows > 0) & may).tolist():
            pruner = _RowGroupPruner(plan, rg, ex)
            if not pruner.verdict(True, False)[0]:
                ex.row_groups_pruned_bloom_filter += 1
            elif dictionaries and not pruner.verdict(True, True)[0]:
                ex.row_groups_pruned_dictionary += 1
            else:
                out.append(rg)
        return out

    def read_row_group(self, row_group: int, columns: Sequence[str] | None = None, *,
                       explain: Explain | None = None) -> Table | None:
        """The rows of ``row_group`` where the filter is true, as a Table of ``columns`` (all when None),
        or None when none match. Prunes and reads exactly as :func:`read_filtered` does for one row
        group (statistics, Bloom filter, dictionary, page index, late materialization)."""
        pf = self._plan.pf
        if not 0 <= row_group < pf.num_row_groups:
            raise IndexError(f"row group {row_group} out of range: the file has {pf.num_row_groups}")
        ex = explain if explain is not None else Explain()
        return _read_row_group(self._plan, row_group, pf.select_columns(columns), ex)


def plan_file(pf: ParquetFile, filters: Any = None) -> FilePlan:
    """Bind ``filters`` (an :class:`Expr`, DNF list or None) to the open file ``pf``.

    >>> with pqbloom.ParquetFile(path) as pf:
    ...     plan = plan_file(pf, field("id") == 42)
    ...     tables = [plan.read_row_group(rg) for rg in plan.row_groups()]
    """
    return FilePlan(pf, filters)
