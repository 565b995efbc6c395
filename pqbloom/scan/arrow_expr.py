"""A ``pyarrow.compute`` expression as a filter (``filters=pc.field("x") > 3``), converted to pqbloom's
:class:`~pqbloom.scan.expr.Expr`.

pyarrow does not expose an expression's structure, but it pickles one as Arrow's ``Serialize`` lays it out:
an Arrow IPC file of one row whose columns are the literals and whose schema metadata lists the tree in
order (``call`` NAME, its arguments, ``options`` COLUMN, ``end``; ``field_ref`` NAME; ``nested_field_ref``
COUNT and its names; ``literal`` COLUMN). The metadata is read in order by pqbloom's own IPC schema
decoder (pyarrow's ``Schema.metadata`` is a dict and would merge the repeated keys); the literals are
pyarrow scalars, taken with ``as_py()`` (typed: a decimal is a ``Decimal``, a timestamp a ``datetime``).

Supported: ``==``, ``!=``, ``<``, ``<=``, ``>``, ``>=`` between a field and a literal (either side), ``&``,
``|``, ``~``, ``isin``, ``is_null`` (``nan_is_null`` too), ``is_valid`` and a literal ``True``/``False``;
a nested field (``pc.field("s", "x")``) is its dotted path. Anything else (two fields compared, ``cast``,
arithmetic, other functions) raises :class:`TypeError` naming what is not supported.
"""

from __future__ import annotations

import base64
import math
from typing import Any

from ..table.arrow_schema import ArrowSchemaError, decode_schema
from .expr import And, Compare, Const, Expr, IsIn, IsNull, Not, Or

__all__ = ["is_arrow_expression", "from_arrow_expression"]

_COMPARISONS = {"equal": "==", "not_equal": "!=", "less": "<", "less_equal": "<=", "greater": ">",
                "greater_equal": ">="}
_FLIP = {"==": "==", "!=": "!=", "<": ">", "<=": ">=", ">": "<", ">=": "<="}
#: SetLookupOptions.null_matching_behavior: MATCH (a listed null matches nulls) is 0
_MATCH = 0


def is_arrow_expression(obj: Any) -> bool:
    """Whether ``obj`` is a ``pyarrow.compute.Expression``."""
    t = type(obj)
    return t.__name__ == "Expression" and t.__module__.startswith("pyarrow")


class _Reader:
    """Walks the serialized tree: the metadata pairs in order, and the literal columns."""

    def __init__(self, pairs: list[tuple[str, str]], batch: Any, text: str) -> None:
        self.pairs, self.batch, self.text, self.pos = pairs, batch, text, 0

    def literal(self, column: str) -> Any:
        return self.batch.column(int(column))[0]

    def node(self) -> tuple[Any, ...]:
        if self.pos >= len(self.pairs):
            raise TypeError(f"cannot read the pyarrow expression {self.text}: it ends early")
        key, value = self.pairs[self.pos]
        self.pos += 1
        if key == "literal":
            return ("literal", self.literal(value).as_py())
        if key == "field_ref":
            return ("field", value)
        if key == "nested_field_ref":
            names = [self.node() for _ in range(int(value))]
            if any(n[0] != "field" for n in names):
                raise TypeError(f"unsupported field reference in the pyarrow expression {self.text}")
            return ("field", ".".join(n[1] for n in names))
        if key == "call":
            args: list[tuple[Any, ...]] = []
            options = None
            while self.pos < len(self.pairs) and self.pairs[self.pos][0] != "end":
                if self.pairs[self.pos][0] == "options":
                    options = self.literal(self.pairs[self.pos][1]).as_py()
                    self.pos += 1
                else:
                    args.append(self.node())
            self.pos += 1  # the call's "end"
            return ("call", value, args, dict(options or {}))
        raise TypeError(f"cannot read the pyarrow expression {self.text}: unknown part {key!r}")


def _unsupported(text: str, what: str) -> TypeError:
    return TypeError(f"the pyarrow expression {text} cannot be a pqbloom filter: {what} (filters compare a column "
                     f"with a literal, combined with &, | and ~; isin, is_null and is_valid)")


def _convert(node: tuple[Any, ...], text: str) -> Expr:
    kind = node[0]
    if kind == "literal":
        if isinstance(node[1], bool) or node[1] is None:
            return Const(node[1])
        raise _unsupported(text, f"the literal {node[1]!r} is not a condition")
    if kind == "field":
        raise _unsupported(text, f"the bare field {node[1]!r} is not a condition")
    _, name, args, options = node
    if name in _COMPARISONS:
        op = _COMPARISONS[name]
        (a, b) = args
        if a[0] == "field" and b[0] == "literal":
            return Compare(a[1], op, b[1])
        if a[0] == "literal" and b[0] == "field":
            return Compare(b[1], _FLIP[op], a[1])
        raise _unsupported(text, f"{name} of {a[0]} and {b[0]}")
    if name in ("and_kleene", "and"):
        return And(_convert(args[0], text), _convert(args[1], text))
    if name in ("or_kleene", "or"):
        return Or(_convert(args[0], text), _convert(args[1], text))
    if name == "invert":
        return Not(_convert(args[0], text))
    if name in ("is_in", "is_null", "is_valid"):
        if len(args) != 1 or args[0][0] != "field":
            raise _unsupported(text, f"{name} of something other than a field")
        column = args[0][1]
        if name == "is_valid":
            return IsNull(column, negate=True)
        if name == "is_null":
            if options.get("nan_is_null"):
                return Or(IsNull(column), IsIn(column, [math.nan]))
            return IsNull(column)
        values = list(options.get("value_set") or [])
        if options.get("null_matching_behavior", _MATCH) != _MATCH:
            values = [v for v in values if v is not None]  # SKIP / EMIT_NULL: a listed null matches nothing
        return IsIn(column, values)
    raise _unsupported(text, f"the function {name!r}")


def from_arrow_expression(expr: Any) -> Expr:
    """The pqbloom filter of a ``pyarrow.compute`` expression (see the module doc)."""
    import pyarrow as pa

    text = str(expr)
    try:
        buf = expr.__reduce__()[1][0]
        raw = buf.to_pybytes()
        if not raw.startswith(b"ARROW1"):
            raise ArrowSchemaError("not an Arrow IPC file")
        schema = decode_schema(base64.b64encode(raw[8:]).decode("ascii"))  # the pairs, in order
        batch = pa.ipc.open_file(buf).get_batch(0) if schema.fields else None
    except (ArrowSchemaError, IndexError, TypeError, ValueError, pa.ArrowException) as exc:
        raise TypeError(f"cannot read the pyarrow expression {text} ({exc}); pass the filter as a DNF list "
                        f"or a pqbloom.field expression") from None
    reader = _Reader(list(schema.metadata), batch, text)
    tree = reader.node()
    if reader.pos != len(reader.pairs):
        raise TypeError(f"cannot read the pyarrow expression {text}: parts left over")
    return _convert(tree, text)
