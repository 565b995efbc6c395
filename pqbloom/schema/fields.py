"""Fields: the types of a table's columns, with physical and logical types.

A user describes a column with a type string (``"int64"``, ``"string"``,
``"timestamp[us, UTC]"``, ``"decimal(10, 2)"``, ``"fixed[16]"``, ``"list<string>"``...) or lets
pqbloom infer it from the data. The same classes describe the fields read from a file's
footer, where groups (structs, lists, maps) may appear; :mod:`pqbloom.schema.tree` flattens
them into the file's schema elements and reads them back.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, replace
from dataclasses import field as dataclass_field
from typing import Any

from ..errors import SchemaError
from ..format.enums import ConvertedType, PhysicalType, name_of
from ..format.schema import LogicalAnnotation, SchemaElement
from .arrow_face import to_arrow_schema

__all__ = ["LogicalType", "Field", "NestedField", "parse_type", "format_type", "make_field", "nested_field",
           "decimal_digits", "decimal_flba_width", "MAX_SCHEMA_DEPTH", "GROUP_ANNOTATIONS", "field_depth",
           "check_field_depth", "too_deep_message", "quote_name", "CT_NA"]


#: ConvertedType 24: "NA", which parquet-cpp before the Null logical type wrote for all-null columns
#: (not in parquet.thrift any more; pyarrow still reads it as null)
CT_NA = 24

#: annotations without parameters -> the ConvertedType written beside them (UNKNOWN: see ``_annotation``)
_PLAIN_ANNOTATIONS: dict[str, int | None] = {
    "STRING": ConvertedType.UTF8, "ENUM": ConvertedType.ENUM, "JSON": ConvertedType.JSON, "BSON": ConvertedType.BSON,
    "UUID": None, "DATE": ConvertedType.DATE, "FLOAT16": None, "UNKNOWN": None}

_LEGACY_CONVERTED = {"UTF8": "STRING", "ENUM": "ENUM", "JSON": "JSON", "BSON": "BSON", "DATE": "DATE",
                     "INTERVAL": "INTERVAL"}


@dataclass(frozen=True)
class LogicalType:
    """A logical annotation. ``kind`` is one of STRING, ENUM, JSON, BSON, UUID, DATE, TIME, TIMESTAMP,
    DECIMAL, INTEGER, FLOAT16, UNKNOWN (all-null), INTERVAL (a legacy ConvertedType), GEOMETRY and
    GEOGRAPHY (leaves), VARIANT (a group: see :class:`NestedField`).

    ``legacy`` marks an annotation a file gave as a ConvertedType only (older writers): it is written
    back the same way, since readers give some of those another meaning than the LogicalType (DuckDB
    reads a legacy TIMESTAMP_MILLIS as a local timestamp, the LogicalType as an instant). It takes no
    part in comparisons."""

    kind: str
    unit: str | None = None  # TIME/TIMESTAMP: ms, us, ns
    utc: bool = False  # TIME/TIMESTAMP isAdjustedToUTC
    precision: int | None = None  # DECIMAL
    scale: int | None = None  # DECIMAL
    bit_width: int | None = None  # INTEGER
    signed: bool = True  # INTEGER
    version: int | None = None  # VARIANT specification_version
    crs: str | None = None  # GEOMETRY / GEOGRAPHY
    algorithm: int | None = None  # GEOGRAPHY edge interpolation
    legacy: bool = dataclass_field(default=False, compare=False)

    def __str__(self) -> str:
        k = self.kind
        if k in ("TIME", "TIMESTAMP"):
            return f"{k}({self.unit}{', UTC' if self.utc else ''})"
        if k == "DECIMAL":
            return f"DECIMAL({self.precision}, {self.scale})"
        if k == "INTEGER":
            return f"{'' if self.signed else 'U'}INT{self.bit_width}"
        if k == "VARIANT" and self.version is not None:
            return f"VARIANT({self.version})"
        return k

    # -- the footer's annotation (pqbloom.format's records) ----------------------------------------------
    def to_annotation(self) -> tuple[LogicalAnnotation | None, int | None]:
        """The footer's annotation of this type: (the ``LogicalType`` member, or None; the legacy
        ConvertedType, or None). A ``legacy`` type is written as its ConvertedType only."""
        lt, ct = self._annotation()
        if self.legacy and ct is not None:
            return None, ct
        return lt, ct

    def _annotation(self) -> tuple[LogicalAnnotation | None, int | None]:
        k = self.kind
        if k in _PLAIN_ANNOTATIONS:
            ct = _PLAIN_ANNOTATIONS[k]
            if k == "UNKNOWN":
                ct = CT_NA if self.legacy else None
            return LogicalAnnotation(k), ct
        if k == "DECIMAL":
            return LogicalAnnotation(k, precision=self.precision, scale=self.scale), ConvertedType.DECIMAL
        if k == "TIME":
            ct = {"ms": ConvertedType.TIME_MILLIS, "us": ConvertedType.TIME_MICROS}.get(self.unit or "")
            return LogicalAnnotation(k, unit=self.unit or None, utc=self.utc), ct
        if k == "TIMESTAMP":
            # legacy readers treat TIMESTAMP_* as UTC instants; only annotate those
            legacy = {"ms": ConvertedType.TIMESTAMP_MILLIS, "us": ConvertedType.TIMESTAMP_MICROS}
            ct = legacy.get(self.unit or "") if self.utc else None
            return LogicalAnnotation(k, unit=self.unit or None, utc=self.utc), ct
        if k == "INTEGER":
            ct = getattr(ConvertedType, f"{'' if self.signed else 'U'}INT_{self.bit_width}")
            return LogicalAnnotation(k, bit_width=self.bit_width, signed=self.signed), ct
        if k == "INTERVAL":
            return None, ConvertedType.INTERVAL
        if k == "VARIANT":
            return LogicalAnnotation(k, version=self.version), None
        if k == "GEOMETRY":
            return LogicalAnnotation(k, crs=self.crs), None
        if k == "GEOGRAPHY":
            return LogicalAnnotation(k, crs=self.crs, algorithm=self.algorithm), None
        raise SchemaError(f"unknown logical type {k}")

    @staticmethod
    def from_element(el: SchemaElement) -> LogicalType | None:
        """Logical type of a schema element, from its LogicalType or else its legacy ConvertedType."""
        lt = el.logical_type
        if lt is not None:
            k = lt.kind
            if k in _PLAIN_ANNOTATIONS:
                return LogicalType(k)
            if k == "DECIMAL":
                return LogicalType("DECIMAL", precision=lt.precision, scale=lt.scale)
            if k == "TIME" or k == "TIMESTAMP":
                if lt.unit is None:
                    return None
                return LogicalType(k, unit=lt.unit, utc=lt.utc)
            if k == "INTEGER":
                return LogicalType("INTEGER", bit_width=lt.bit_width, signed=lt.signed)
            if k == "VARIANT":
                return LogicalType("VARIANT", version=lt.version)
            if k == "GEOMETRY":
                return LogicalType("GEOMETRY", crs=lt.crs)
            if k == "GEOGRAPHY":
                return LogicalType("GEOGRAPHY", crs=lt.crs, algorithm=lt.algorithm)
            # MAP/LIST or a member newer than us: fall through to converted_type
        ct = el.converted_type
        if ct is None:
            return None
        if ct == CT_NA:
            return LogicalType("UNKNOWN", legacy=True)
        name = name_of(ConvertedType, ct)
        if name in _LEGACY_CONVERTED:
            return LogicalType(_LEGACY_CONVERTED[name], legacy=True)
        if name == "DECIMAL":
            return LogicalType("DECIMAL", precision=el.precision, scale=el.scale or 0, legacy=True)
        if name in ("TIME_MILLIS", "TIME_MICROS"):
            return LogicalType("TIME", unit="ms" if name.endswith("MILLIS") else "us", utc=True, legacy=True)
        if name in ("TIMESTAMP_MILLIS", "TIMESTAMP_MICROS"):
            return LogicalType("TIMESTAMP", unit="ms" if name.endswith("MILLIS") else "us", utc=True, legacy=True)
        if name and (name.startswith("INT_") or name.startswith("UINT_")):
            signed = name.startswith("INT_")
            return LogicalType("INTEGER", bit_width=int(name.split("_")[1]), signed=signed, legacy=True)
        return None


@dataclass(frozen=True)
class Field:
    """One flat column of a table: name, physical type, logical type, nullability."""

    name: str
    physical_type: int
    logical_type: LogicalType | None = None
    nullable: bool = True
    type_length: int | None = None  # FIXED_LEN_BYTE_ARRAY width
    field_id: int | None = None

    @property
    def type_name(self) -> str:
        """The field's type as text (``"int64"``, ``"timestamp[us, UTC]"``...), as :func:`make_field` reads it."""
        return format_type(self.physical_type, self.logical_type, self.type_length)

    def __str__(self) -> str:
        return f"{self.name}: {self.type_name}{'' if self.nullable else ' not null'}"

    @property
    def type(self) -> Any:
        """The field's Arrow type, a ``pyarrow.DataType`` (needs pyarrow), as pyarrow's ``Field.type``: the
        type pyarrow reads for a column of this field, refined by the Arrow types of the schema the field
        came from (``table.schema.field("ts").type`` keeps the table's time zone)."""
        owner = self.__dict__.get("_schema")
        if owner is not None:
            return owner.arrow_type(self.name)
        return to_arrow_schema([self]).field(0).type

    def with_nullable(self, nullable: bool) -> Field:
        """A copy of the field with ``nullable`` set as given."""
        return replace(self, nullable=nullable)


NESTED_KINDS = ("struct", "list", "map")


@dataclass(frozen=True)
class NestedField(Field):
    """A struct, list or map column: ``kind`` plus child fields.

    A list has one child (the element), a map two (key, value; the key is never null), a
    struct one per member. Children carry their local names. ``physical_type`` is -1.
    Build one with :func:`nested_field` or a type string: ``make_field("tags", "list<string>")``.
    """

    kind: str = "struct"
    children: tuple[Field, ...] = ()

    @property
    def type_name(self) -> str:
        """The nested type as text (``"list<int64>"``, ``"struct<a: int32>"``...)."""

        def member(c: Field) -> str:
            return c.type_name + ("" if c.nullable else " not null")

        if self.kind == "list":
            return f"list<{member(self.children[0])}>"
        if self.kind == "map":
            return f"map<{self.children[0].type_name}, {member(self.children[1])}>"
        body = "struct<" + ", ".join(f"{quote_name(c.name)}: {member(c)}" for c in self.children) + ">"
        return body if self.logical_type is None else f"{body} ({self.logical_type})"

    def child(self, name: str) -> Field:
        """The child field named ``name``."""
        for c in self.children:
            if c.name == name:
                return c
        raise KeyError(name)


def nested_field(name: str, kind: str, children: list[Field] | tuple[Field, ...], *, nullable: bool = True,
                 field_id: int | None = None, logical_type: LogicalType | None = None) -> NestedField:
    """A struct/list/map field; lists take one child, maps two (key, value).

    A struct may have no members (an empty group: it holds no data, and reads back as null, as
    pyarrow reads it). ``logical_type`` annotates a struct's group: VARIANT is the one kept."""
    kind = kind.lower()
    if kind not in NESTED_KINDS:
        raise SchemaError(f"unknown nested kind {kind!r}")
    ch = tuple(children)
    if kind == "list" and len(ch) != 1:
        raise SchemaError("a list has exactly one child (the element)")
    if kind == "map":
        if len(ch) != 2:
            raise SchemaError("a map has exactly two children (key, value)")
        if ch[0].nullable:
            ch = (replace(ch[0], nullable=False),) + ch[1:]
    if kind == "struct":
        names = [c.name for c in ch]
        if len(set(names)) != len(names):
            raise SchemaError(f"duplicate member names in struct {name!r}: {names}")
    if logical_type is not None and (kind != "struct" or logical_type.kind not in GROUP_ANNOTATIONS):
        raise SchemaError(f"a {kind} cannot carry the annotation {logical_type}")
    return NestedField(name, -1, logical_type, nullable, None, field_id, kind, ch)


#: annotations a struct's group may carry (lists and maps are annotated by their kind)
GROUP_ANNOTATIONS = frozenset(("VARIANT",))


def quote_name(name: str) -> str:
    """``name`` as a type string writes it: bare when it is an identifier, else in backquotes."""
    return name if re.fullmatch(r"[A-Za-z_][A-Za-z0-9_.$-]*", name) else "`" + name.replace("`", "``") + "`"


def _split_top(s: str, sep: str) -> list[str]:
    """Split at ``sep`` outside brackets and backquotes."""
    out: list[str] = []
    cur: list[str] = []
    depth, quoted = 0, False
    for ch in s:
        if ch == "`":
            quoted = not quoted
        elif not quoted:
            if ch in "<([":
                depth += 1
            elif ch in ">)]":
                depth -= 1
            elif ch == sep and depth == 0:
                out.append("".join(cur))
                cur = []
                continue
        cur.append(ch)
    if depth != 0 or quoted:
        raise SchemaError(f"unbalanced brackets in type {s!r}")
    out.append("".join(cur))
    return out


def _strip_not_null(spec: str) -> tuple[str, bool]:
    m = re.fullmatch(r"(?is)(.*?)\s+not\s+null\s*", spec)
    return (m.group(1).strip(), False) if m else (spec.strip(), True)


def _unquote(name: str) -> str:
    name = name.strip()
    if len(name) >= 2 and name[0] == name[-1] == "`":
        return name[1:-1].replace("``", "`")
    return name


def _parse_member(spec: str, default_name: str | None) -> Field:
    spec, nullable = _strip_not_null(spec)
    parts = _split_top(spec, ":")
    if len(parts) > 2:
        raise SchemaError(f"bad member {spec!r}")
    if len(parts) == 2:
        name, tspec = _unquote(parts[0]), parts[1]
    elif default_name is not None:
        name, tspec = default_name, parts[0]
    else:
        raise SchemaError(f"struct member {spec!r} needs a name: 'name: type'")
    if not name:
        raise SchemaError(f"empty member name in {spec!r}")
    return make_field(name, tspec.strip(), nullable=nullable)


def _parse_nested(name: str, spec: str, nullable: bool, field_id: int | None) -> NestedField | None:
    m = re.fullmatch(r"(?is)\s*(list|array|struct|map)\s*<(.*)>\s*", spec)
    if not m:
        return None
    kind = m.group(1).lower()
    kind = "list" if kind == "array" else kind
    inner = m.group(2)
    parts = [p for p in _split_top(inner, ",")]
    if kind == "list":
        if len(parts) != 1:
            raise SchemaError(f"list type {spec!r} takes one element type")
        return nested_field(name, "list", [_parse_member(parts[0], "element")], nullable=nullable, field_id=field_id)
    if kind == "map":
        if len(parts) != 2:
            raise SchemaError(f"map type {spec!r} takes a key and a value type")
        key = _parse_member(parts[0], "key")
        return nested_field(name, "map", [replace(key, nullable=False), _parse_member(parts[1], "value")],
                            nullable=nullable, field_id=field_id)
    if not inner.strip():  # empty groups exist in files (nested_field builds them), not in type strings
        raise SchemaError(f"struct type {spec!r} has no members")
    return nested_field(name, "struct", [_parse_member(p, None) for p in parts], nullable=nullable,
                        field_id=field_id)


#: the type string of a physical type without an annotation (FIXED_LEN_BYTE_ARRAY adds its width)
_PLAIN_TYPE_STRINGS: dict[int, str] = {
    PhysicalType.BOOLEAN: "bool", PhysicalType.INT32: "int32", PhysicalType.INT64: "int64", PhysicalType.INT96: "int96",
    PhysicalType.FLOAT: "float", PhysicalType.DOUBLE: "double", PhysicalType.BYTE_ARRAY: "binary",
}
#: the physical types a DECIMAL type string names by their own type string (``as int64``)
_DECIMAL_BASES = (PhysicalType.INT32, PhysicalType.INT64, PhysicalType.BYTE_ARRAY)


def format_type(physical: int, logical: LogicalType | None, type_length: int | None) -> str:
    """The type string of a flat type (what :func:`parse_type` reads back)."""
    if logical is not None:
        k = logical.kind
        if k == "STRING":
            return "string"
        if k == "INTEGER":
            return f"{'' if logical.signed else 'u'}int{logical.bit_width}"
        if k == "DATE":
            return "date"
        if k in ("TIME", "TIMESTAMP"):
            return f"{k.lower()}[{logical.unit}{', UTC' if logical.utc else ''}]"
        if k == "DECIMAL":
            base = _PLAIN_TYPE_STRINGS[physical] if physical in _DECIMAL_BASES else f"fixed[{type_length}]"
            return f"decimal({logical.precision}, {logical.scale}) as {base}"
        return k.lower()
    return _PLAIN_TYPE_STRINGS.get(physical, f"fixed[{type_length}]")


_SIMPLE: dict[str, tuple[int, LogicalType | None, int | None]] = {
    "bool": (PhysicalType.BOOLEAN, None, None),
    "boolean": (PhysicalType.BOOLEAN, None, None),
    "int32": (PhysicalType.INT32, None, None),
    "int64": (PhysicalType.INT64, None, None),
    "int96": (PhysicalType.INT96, None, None),
    "float": (PhysicalType.FLOAT, None, None),
    "float32": (PhysicalType.FLOAT, None, None),
    "double": (PhysicalType.DOUBLE, None, None),
    "float64": (PhysicalType.DOUBLE, None, None),
    "binary": (PhysicalType.BYTE_ARRAY, None, None),
    "bytes": (PhysicalType.BYTE_ARRAY, None, None),
    "string": (PhysicalType.BYTE_ARRAY, LogicalType("STRING"), None),
    "str": (PhysicalType.BYTE_ARRAY, LogicalType("STRING"), None),
    "utf8": (PhysicalType.BYTE_ARRAY, LogicalType("STRING"), None),
    "enum": (PhysicalType.BYTE_ARRAY, LogicalType("ENUM"), None),
    "json": (PhysicalType.BYTE_ARRAY, LogicalType("JSON"), None),
    "bson": (PhysicalType.BYTE_ARRAY, LogicalType("BSON"), None),
    "uuid": (PhysicalType.FIXED_LEN_BYTE_ARRAY, LogicalType("UUID"), 16),
    "date": (PhysicalType.INT32, LogicalType("DATE"), None),
    "date32": (PhysicalType.INT32, LogicalType("DATE"), None),
    "float16": (PhysicalType.FIXED_LEN_BYTE_ARRAY, LogicalType("FLOAT16"), 2),
    "halffloat": (PhysicalType.FIXED_LEN_BYTE_ARRAY, LogicalType("FLOAT16"), 2),
}
for _bits in (8, 16, 32, 64):
    _phys = PhysicalType.INT64 if _bits == 64 else PhysicalType.INT32
    if _bits != 32 and _bits != 64:
        _SIMPLE[f"int{_bits}"] = (_phys, LogicalType("INTEGER", bit_width=_bits, signed=True), None)
    _SIMPLE[f"uint{_bits}"] = (_phys, LogicalType("INTEGER", bit_width=_bits, signed=False), None)


def parse_type(spec: str) -> tuple[int, LogicalType | None, int | None]:
    """Parse a type string into (physical type, logical type, type_length)."""
    s = spec.strip().lower().replace(" ", "")
    if s in _SIMPLE:
        return _SIMPLE[s]
    m = re.fullmatch(r"(fixed|fixed_len_byte_array|flba)\[(\d+)\]", s)
    if m:
        return PhysicalType.FIXED_LEN_BYTE_ARRAY, None, int(m.group(2))
    m = re.fullmatch(r"(timestamp|time)\[(ms|us|ns)(,utc)?\]", s)
    if m:
        kind, unit, utc = m.group(1).upper(), m.group(2), bool(m.group(3))
        if kind == "TIME":
            phys = PhysicalType.INT32 if unit == "ms" else PhysicalType.INT64
        else:
            phys = PhysicalType.INT64
        return phys, LogicalType(kind, unit=unit, utc=utc), None
    m = re.fullmatch(r"decimal\((\d+),(\d+)\)(as(int32|int64|binary|fixed\[(\d+)\]))?", s)
    if m:
        precision, scale = int(m.group(1)), int(m.group(2))
        if not 1 <= precision or scale > precision:
            raise SchemaError(f"invalid decimal precision/scale in {spec!r}")
        lt = LogicalType("DECIMAL", precision=precision, scale=scale)
        base = m.group(4)
        if base is None:
            # what parquet-java and Arrow pick by default: the narrowest that fits
            if precision <= 9:
                return PhysicalType.INT32, lt, None
            if precision <= 18:
                return PhysicalType.INT64, lt, None
            return PhysicalType.FIXED_LEN_BYTE_ARRAY, lt, decimal_flba_width(precision)
        if base == "int32":
            if precision > 9:
                raise SchemaError(f"decimal precision {precision} does not fit int32")
            return PhysicalType.INT32, lt, None
        if base == "int64":
            if precision > 18:
                raise SchemaError(f"decimal precision {precision} does not fit int64")
            return PhysicalType.INT64, lt, None
        if base == "binary":
            return PhysicalType.BYTE_ARRAY, lt, None
        return PhysicalType.FIXED_LEN_BYTE_ARRAY, lt, int(m.group(5))
    raise SchemaError(f"unknown type {spec!r}")


def decimal_digits(width: int) -> int:
    """How many decimal digits a two's-complement integer of ``width`` bytes always holds:
    floor((8 * width - 1) * log10(2)); the product is never an integer, so float is exact enough."""
    return int((8 * width - 1) * math.log10(2))


def decimal_flba_width(precision: int) -> int:
    """Smallest byte width whose two's complement holds ``precision`` decimal digits."""
    n = 1
    while decimal_digits(n) < precision:
        n += 1
    return n


def _check_bracket_depth(name: str, spec: str) -> None:
    """Refuse a type string nested deeper than a file may be before parsing it (the parser recurses)."""
    depth = deepest = 0
    for ch in spec:
        if ch == "<":
            depth += 1
            deepest = max(deepest, depth)
        elif ch == ">":
            depth -= 1
    if deepest + 2 > MAX_SCHEMA_DEPTH:  # each bracket is a level below the root; the leaf is one more
        raise SchemaError(too_deep_message(deepest + 2, f"column {name!r}"))


def make_field(name: str, type_spec: str, *, nullable: bool = True, field_id: int | None = None) -> Field:
    """A field from a type string; ``list<T>``, ``map<K, V>`` and ``struct<a: T, b: U not null>`` give a
    :class:`NestedField` (members may end in ``not null``; a list element is nullable unless marked)."""
    if "<" in type_spec:
        _check_bracket_depth(name, type_spec)
    nf = _parse_nested(name, type_spec, nullable, field_id)
    if nf is not None:
        return nf
    phys, lt, tl = parse_type(type_spec)
    return Field(name, phys, lt, nullable, tl, field_id)


#: The deepest schema pqbloom reads or writes, in levels counting the root (pyarrow's default
#: ``schema_depth_limit``; DuckDB stops at 500). The schema walks recurse once or twice per level, so
#: this bound is what keeps every one of them far from Python's recursion limit.
MAX_SCHEMA_DEPTH = 100


def too_deep_message(depth: int, what: str) -> str:
    """The message refusing ``what``, nested ``depth`` levels deep (deeper than :data:`MAX_SCHEMA_DEPTH`)."""
    return (f"{what} is nested {depth:,} levels deep; pqbloom reads and writes at most {MAX_SCHEMA_DEPTH} "
            "(as pyarrow does by default)")


def field_depth(f: Field) -> int:
    """Schema levels ``f`` is written as, the root not counted (lists and maps add a repeated group)."""
    deepest = 0
    todo: list[tuple[Field, int]] = [(f, 1)]
    while todo:
        g, depth = todo.pop()
        deepest = max(deepest, depth)
        if isinstance(g, NestedField):
            below = depth + (1 if g.kind == "struct" else 2)
            todo.extend((c, below) for c in g.children)
    return deepest


def check_field_depth(f: Field) -> None:
    """Refuse (SchemaError) a field nested deeper than a file may be (:data:`MAX_SCHEMA_DEPTH`)."""
    depth = field_depth(f) + 1
    if depth > MAX_SCHEMA_DEPTH:
        raise SchemaError(too_deep_message(depth, f"column {f.name!r}"))
