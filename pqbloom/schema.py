"""Schema: fields with physical and logical types, and the leaf columns of a file.

A user describes a column with a type string (``"int64"``, ``"string"``,
``"timestamp[us, UTC]"``, ``"decimal(10, 2)"``, ``"fixed[16]"``...) or lets
pqbloom infer it from the data. The same classes describe the schema read
from a file's footer, where groups (structs, lists, maps) may appear.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from dataclasses import dataclass, replace
from dataclasses import field as dataclass_field
from typing import Any

from .errors import CorruptFileError, SchemaError, UnsupportedError
from .format import T, gc_paused

__all__ = ["LogicalType", "Field", "NestedField", "Schema", "ColumnDescriptor", "parse_type", "make_field",
           "nested_field", "decimal_flba_width", "PHYSICAL_NAMES", "MAX_SCHEMA_DEPTH", "check_field_depth"]

PT = T.Type
CT = T.ConvertedType
PHYSICAL_NAMES = dict(T.Type._VALUES_TO_NAMES)

_UNITS = ("ms", "us", "ns")


#: ConvertedType 24: "NA", which parquet-cpp before the Null logical type wrote for all-null columns
#: (not in parquet.thrift any more; pyarrow still reads it as null)
CT_NA = 24

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

    # -- thrift mapping -------------------------------------------------------
    def to_thrift(self) -> tuple[Any, int | None]:
        """Return (T.LogicalType or None, legacy ConvertedType or None)."""
        lt, ct = self._to_thrift()
        if self.legacy and ct is not None:
            return None, ct
        return lt, ct

    def _to_thrift(self) -> tuple[Any, int | None]:
        k = self.kind
        unit = None
        if self.unit:
            unit = T.TimeUnit(**{{"ms": "MILLIS", "us": "MICROS", "ns": "NANOS"}[self.unit]: {
                "ms": T.MilliSeconds, "us": T.MicroSeconds, "ns": T.NanoSeconds}[self.unit]()})
        if k == "STRING":
            return T.LogicalType(STRING=T.StringType()), CT.UTF8
        if k == "ENUM":
            return T.LogicalType(ENUM=T.EnumType()), CT.ENUM
        if k == "JSON":
            return T.LogicalType(JSON=T.JsonType()), CT.JSON
        if k == "BSON":
            return T.LogicalType(BSON=T.BsonType()), CT.BSON
        if k == "UUID":
            return T.LogicalType(UUID=T.UUIDType()), None
        if k == "DATE":
            return T.LogicalType(DATE=T.DateType()), CT.DATE
        if k == "FLOAT16":
            return T.LogicalType(FLOAT16=T.Float16Type()), None
        if k == "UNKNOWN":
            return T.LogicalType(UNKNOWN=T.NullType()), CT_NA if self.legacy else None
        if k == "DECIMAL":
            return T.LogicalType(DECIMAL=T.DecimalType(scale=self.scale, precision=self.precision)), CT.DECIMAL
        if k == "TIME":
            ct = {"ms": CT.TIME_MILLIS, "us": CT.TIME_MICROS}.get(self.unit or "")
            return T.LogicalType(TIME=T.TimeType(isAdjustedToUTC=self.utc, unit=unit)), ct
        if k == "TIMESTAMP":
            # legacy readers treat TIMESTAMP_* as UTC instants; only annotate those
            ct = {"ms": CT.TIMESTAMP_MILLIS, "us": CT.TIMESTAMP_MICROS}.get(self.unit or "") if self.utc else None
            return T.LogicalType(TIMESTAMP=T.TimestampType(isAdjustedToUTC=self.utc, unit=unit)), ct
        if k == "INTEGER":
            ct = getattr(CT, f"{'' if self.signed else 'U'}INT_{self.bit_width}")
            return T.LogicalType(INTEGER=T.IntType(bitWidth=self.bit_width, isSigned=self.signed)), ct
        if k == "INTERVAL":
            return None, CT.INTERVAL
        if k == "VARIANT":
            return T.LogicalType(VARIANT=T.VariantType(specification_version=self.version)), None
        if k == "GEOMETRY":
            return T.LogicalType(GEOMETRY=T.GeometryType(crs=self.crs)), None
        if k == "GEOGRAPHY":
            return T.LogicalType(GEOGRAPHY=T.GeographyType(crs=self.crs, algorithm=self.algorithm)), None
        raise SchemaError(f"unknown logical type {k}")

    @staticmethod
    def from_thrift(el: Any) -> LogicalType | None:
        """Logical type of a SchemaElement, from LogicalType or else the legacy ConvertedType."""
        lt = el.logicalType
        if lt is not None:
            if lt.STRING is not None:
                return LogicalType("STRING")
            if lt.ENUM is not None:
                return LogicalType("ENUM")
            if lt.JSON is not None:
                return LogicalType("JSON")
            if lt.BSON is not None:
                return LogicalType("BSON")
            if lt.UUID is not None:
                return LogicalType("UUID")
            if lt.DATE is not None:
                return LogicalType("DATE")
            if lt.FLOAT16 is not None:
                return LogicalType("FLOAT16")
            if lt.UNKNOWN is not None:
                return LogicalType("UNKNOWN")
            if lt.DECIMAL is not None:
                return LogicalType("DECIMAL", precision=lt.DECIMAL.precision, scale=lt.DECIMAL.scale)
            if lt.TIME is not None or lt.TIMESTAMP is not None:
                t = lt.TIME if lt.TIME is not None else lt.TIMESTAMP
                u = t.unit
                unit = "ms" if u is not None and u.MILLIS is not None else (
                    "us" if u is not None and u.MICROS is not None else (
                        "ns" if u is not None and u.NANOS is not None else None))
                if unit is None:
                    return None
                return LogicalType("TIME" if lt.TIME is not None else "TIMESTAMP", unit=unit,
                                   utc=bool(t.isAdjustedToUTC))
            if lt.INTEGER is not None:
                return LogicalType("INTEGER", bit_width=lt.INTEGER.bitWidth, signed=bool(lt.INTEGER.isSigned))
            if lt.VARIANT is not None:
                return LogicalType("VARIANT", version=lt.VARIANT.specification_version)
            if lt.GEOMETRY is not None:
                return LogicalType("GEOMETRY", crs=lt.GEOMETRY.crs)
            if lt.GEOGRAPHY is not None:
                return LogicalType("GEOGRAPHY", crs=lt.GEOGRAPHY.crs, algorithm=lt.GEOGRAPHY.algorithm)
            # MAP/LIST or a member newer than us: fall through to converted_type
        ct = el.converted_type
        if ct is None:
            return None
        if ct == CT_NA:
            return LogicalType("UNKNOWN", legacy=True)
        name = T.ConvertedType._VALUES_TO_NAMES.get(ct)
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
        return format_type(self.physical_type, self.logical_type, self.type_length)

    def __str__(self) -> str:
        return f"{self.name}: {self.type_name}{'' if self.nullable else ' not null'}"

    def with_nullable(self, nullable: bool) -> Field:
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
        def member(c: Field) -> str:
            return c.type_name + ("" if c.nullable else " not null")

        if self.kind == "list":
            return f"list<{member(self.children[0])}>"
        if self.kind == "map":
            return f"map<{self.children[0].type_name}, {member(self.children[1])}>"
        body = "struct<" + ", ".join(f"{_quote_name(c.name)}: {member(c)}" for c in self.children) + ">"
        return body if self.logical_type is None else f"{body} ({self.logical_type})"

    def child(self, name: str) -> Field:
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


def is_nested(f: Field) -> bool:
    return isinstance(f, NestedField)


def _quote_name(name: str) -> str:
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


def format_type(physical: int, logical: LogicalType | None, type_length: int | None) -> str:
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
            base = {PT.INT32: "int32", PT.INT64: "int64", PT.BYTE_ARRAY: "binary"}.get(physical, f"fixed[{type_length}]")
            return f"decimal({logical.precision}, {logical.scale}) as {base}"
        if k in ("UUID", "FLOAT16"):
            return k.lower()
        return k.lower()
    return {
        PT.BOOLEAN: "bool", PT.INT32: "int32", PT.INT64: "int64", PT.INT96: "int96", PT.FLOAT: "float",
        PT.DOUBLE: "double", PT.BYTE_ARRAY: "binary",
    }.get(physical, f"fixed[{type_length}]")


_SIMPLE: dict[str, tuple[int, LogicalType | None, int | None]] = {
    "bool": (PT.BOOLEAN, None, None),
    "boolean": (PT.BOOLEAN, None, None),
    "int32": (PT.INT32, None, None),
    "int64": (PT.INT64, None, None),
    "int96": (PT.INT96, None, None),
    "float": (PT.FLOAT, None, None),
    "float32": (PT.FLOAT, None, None),
    "double": (PT.DOUBLE, None, None),
    "float64": (PT.DOUBLE, None, None),
    "binary": (PT.BYTE_ARRAY, None, None),
    "bytes": (PT.BYTE_ARRAY, None, None),
    "string": (PT.BYTE_ARRAY, LogicalType("STRING"), None),
    "str": (PT.BYTE_ARRAY, LogicalType("STRING"), None),
    "utf8": (PT.BYTE_ARRAY, LogicalType("STRING"), None),
    "enum": (PT.BYTE_ARRAY, LogicalType("ENUM"), None),
    "json": (PT.BYTE_ARRAY, LogicalType("JSON"), None),
    "bson": (PT.BYTE_ARRAY, LogicalType("BSON"), None),
    "uuid": (PT.FIXED_LEN_BYTE_ARRAY, LogicalType("UUID"), 16),
    "date": (PT.INT32, LogicalType("DATE"), None),
    "date32": (PT.INT32, LogicalType("DATE"), None),
    "float16": (PT.FIXED_LEN_BYTE_ARRAY, LogicalType("FLOAT16"), 2),
    "halffloat": (PT.FIXED_LEN_BYTE_ARRAY, LogicalType("FLOAT16"), 2),
}
for _bits in (8, 16, 32, 64):
    _phys = PT.INT64 if _bits == 64 else PT.INT32
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
        return PT.FIXED_LEN_BYTE_ARRAY, None, int(m.group(2))
    m = re.fullmatch(r"(timestamp|time)\[(ms|us|ns)(,utc)?\]", s)
    if m:
        kind, unit, utc = m.group(1).upper(), m.group(2), bool(m.group(3))
        if kind == "TIME":
            phys = PT.INT32 if unit == "ms" else PT.INT64
        else:
            phys = PT.INT64
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
                return PT.INT32, lt, None
            if precision <= 18:
                return PT.INT64, lt, None
            return PT.FIXED_LEN_BYTE_ARRAY, lt, decimal_flba_width(precision)
        if base == "int32":
            if precision > 9:
                raise SchemaError(f"decimal precision {precision} does not fit int32")
            return PT.INT32, lt, None
        if base == "int64":
            if precision > 18:
                raise SchemaError(f"decimal precision {precision} does not fit int64")
            return PT.INT64, lt, None
        if base == "binary":
            return PT.BYTE_ARRAY, lt, None
        return PT.FIXED_LEN_BYTE_ARRAY, lt, int(m.group(5))
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
        raise SchemaError(_too_deep(deepest + 2, f"column {name!r}"))


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


class Schema:
    """An ordered list of top-level fields (flat :class:`Field` or :class:`NestedField`)."""

    def __init__(self, fields: list[Field]) -> None:
        names = [f.name for f in fields]
        if len(set(names)) != len(names):
            dups = sorted(n for n, k in Counter(names).items() if k > 1)
            raise SchemaError(f"duplicate column name(s) {', '.join(map(repr, dups))} among {len(names)} columns")
        self.fields = list(fields)

    @classmethod
    def from_types(cls, types: dict[str, str], *, not_null: tuple[str, ...] | list[str] = ()) -> Schema:
        """``Schema.from_types({"id": "int64", "name": "string"}, not_null=["id"])``."""
        return cls([make_field(n, t, nullable=n not in not_null) for n, t in types.items()])

    @property
    def names(self) -> list[str]:
        return [f.name for f in self.fields]

    def field(self, name: str) -> Field:
        for f in self.fields:
            if f.name == name:
                return f
        raise KeyError(name)

    def __len__(self) -> int:
        return len(self.fields)

    def __iter__(self):  # type: ignore[no-untyped-def]
        return iter(self.fields)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Schema) and self.fields == other.fields

    def __repr__(self) -> str:
        return "Schema(\n" + "".join(f"  {f}\n" for f in self.fields) + ")"

    def to_thrift(self) -> list[Any]:
        """Flatten into FileMetaData.schema elements: a root group, then each field depth first.

        Lists are written in the standard three-level form (``list`` / ``element``), maps as
        ``key_value`` groups holding a required ``key`` and a ``value``.
        """
        out = [T.SchemaElement(name="schema", num_children=len(self.fields))]
        for f in self.fields:
            check_field_depth(f)
            _emit_thrift(f, out, None)
        return out

    def leaves(self) -> list[ColumnDescriptor]:
        """The leaf columns this schema is written as (paths, levels, leaf ordinals)."""
        return leaves_from_thrift(self.to_thrift())[0]

    def leaf_paths(self) -> list[tuple[str, ...]]:
        return [d.path for d in self.leaves()]


def _emit_thrift(f: Field, out: list[Any], name: str | None, repetition: int | None = None) -> None:
    FRT = T.FieldRepetitionType
    rep = repetition if repetition is not None else (FRT.OPTIONAL if f.nullable else FRT.REQUIRED)
    nm = f.name if name is None else name
    if isinstance(f, NestedField):
        if f.kind == "struct":
            lt, ct = f.logical_type.to_thrift() if f.logical_type is not None else (None, None)
            out.append(T.SchemaElement(name=nm, repetition_type=rep, num_children=len(f.children),
                                       field_id=f.field_id, logicalType=lt, converted_type=ct))
            for c in f.children:
                _emit_thrift(c, out, None)
        elif f.kind == "list":
            out.append(T.SchemaElement(name=nm, repetition_type=rep, num_children=1, converted_type=CT.LIST,
                                       logicalType=T.LogicalType(LIST=T.ListType()), field_id=f.field_id))
            out.append(T.SchemaElement(name="list", repetition_type=FRT.REPEATED, num_children=1))
            _emit_thrift(f.children[0], out, "element")
        else:
            out.append(T.SchemaElement(name=nm, repetition_type=rep, num_children=1, converted_type=CT.MAP,
                                       logicalType=T.LogicalType(MAP=T.MapType()), field_id=f.field_id))
            out.append(T.SchemaElement(name="key_value", repetition_type=FRT.REPEATED, num_children=2))
            _emit_thrift(f.children[0], out, "key", FRT.REQUIRED)
            _emit_thrift(f.children[1], out, "value")
        return
    lt, ct = f.logical_type.to_thrift() if f.logical_type is not None else (None, None)
    el = T.SchemaElement(
        name=nm,
        type=f.physical_type,
        type_length=f.type_length,
        repetition_type=rep,
        logicalType=lt,
        converted_type=ct,
        field_id=f.field_id,
    )
    if f.logical_type is not None and f.logical_type.kind == "DECIMAL":
        el.precision = f.logical_type.precision
        el.scale = f.logical_type.scale
    out.append(el)


@dataclass
class ColumnDescriptor:
    """A leaf column of a file schema, with its levels and path."""

    path: tuple[str, ...]
    element: Any  # T.SchemaElement
    max_definition_level: int
    max_repetition_level: int
    index: int  # leaf ordinal, the column ordinal used in AADs
    field: Field
    ancestors: list[Any] = dataclass_field(default_factory=list)  # SchemaElements from root's child down to the leaf

    @property
    def dotted_path(self) -> str:
        return ".".join(self.path)

    @property
    def physical_type(self) -> int:
        return self.field.physical_type

    @property
    def type_length(self) -> int | None:
        return self.field.type_length

    @property
    def logical_type(self) -> LogicalType | None:
        return self.field.logical_type


FRT_OPTIONAL = T.FieldRepetitionType.OPTIONAL
FRT_REPEATED = T.FieldRepetitionType.REPEATED
FRT_REQUIRED = T.FieldRepetitionType.REQUIRED


_BYTE_ARRAY_KINDS = frozenset(("STRING", "ENUM", "JSON", "BSON", "GEOMETRY", "GEOGRAPHY"))
_FIXED_WIDTH_KINDS = {"UUID": 16, "FLOAT16": 2, "INTERVAL": 12}


def malformed_annotation(lt: LogicalType) -> str | None:
    """What is wrong with the parameters of a logical annotation read from a file, or None.

    Arrow C++ and parquet-java refuse such a schema too (LogicalTypes.md: INTEGER has a bit
    width of 8, 16, 32 or 64; DECIMAL a precision of at least 1 and a scale within it)."""
    if lt.kind == "INTEGER" and lt.bit_width not in (8, 16, 32, 64):
        return f"INTEGER bit width {lt.bit_width} is not 8, 16, 32 or 64"
    if lt.kind == "DECIMAL":
        p, sc = lt.precision, lt.scale or 0
        if p is None or p < 1 or sc < 0 or sc > p:
            return f"DECIMAL precision {p} / scale {lt.scale} are invalid"
    return None


def annotation_applies(lt: LogicalType, ptype: int, type_length: int | None) -> bool:
    """Whether the (well-formed) annotation ``lt`` may annotate physical type ``ptype``
    (LogicalTypes.md), e.g. STRING only BYTE_ARRAY, DATE only INT32, DECIMAL(p) only a type
    that holds p digits. Readers drop a LogicalType that does not apply and read the physical
    values, as Arrow C++ does (parquet-java refuses the file); a ConvertedType-only annotation that
    does not apply makes the file corrupt, as both Arrow C++ and DuckDB say."""
    k = lt.kind
    if k in _BYTE_ARRAY_KINDS:
        return ptype == PT.BYTE_ARRAY
    if k in _FIXED_WIDTH_KINDS:
        return ptype == PT.FIXED_LEN_BYTE_ARRAY and type_length == _FIXED_WIDTH_KINDS[k]
    if k == "DATE":
        return ptype == PT.INT32
    if k == "TIME":
        return ptype == (PT.INT32 if lt.unit == "ms" else PT.INT64)
    if k == "TIMESTAMP":
        return ptype == PT.INT64
    if k == "INTEGER":
        return ptype == (PT.INT64 if lt.bit_width == 64 else PT.INT32)
    if k == "DECIMAL":
        p = lt.precision or 0
        if lt.legacy:  # Arrow C++ reads a converted DECIMAL of any precision on these types
            return ptype in (PT.INT32, PT.INT64, PT.BYTE_ARRAY, PT.FIXED_LEN_BYTE_ARRAY)
        if ptype == PT.INT32:
            return p <= 9
        if ptype == PT.INT64:
            return p <= 18
        if ptype == PT.FIXED_LEN_BYTE_ARRAY:
            return type_length is not None and type_length >= 1 and p <= decimal_digits(type_length)
        return ptype == PT.BYTE_ARRAY
    if k == "VARIANT":
        return False  # annotates groups only
    return True  # UNKNOWN: any type


#: The deepest schema pqbloom reads or writes, in levels counting the root (pyarrow's default
#: ``schema_depth_limit``; DuckDB stops at 500). The schema walks recurse once or twice per level, so
#: this bound is what keeps every one of them far from Python's recursion limit.
MAX_SCHEMA_DEPTH = 100


def leaves_from_thrift(elements: list[Any]) -> tuple[list[ColumnDescriptor], list[Any]]:
    """Walk the flattened schema into leaf descriptors; validate counts, types and depth as we go.

    A schema deeper than :data:`MAX_SCHEMA_DEPTH` raises :class:`~pqbloom.errors.UnsupportedError`.
    """
    if not elements:
        raise CorruptFileError("file schema is empty")
    root = elements[0]
    leaves: list[ColumnDescriptor] = []
    pos = 1
    n_elements = len(elements)
    # hoisted: this loop runs once per column of the file (10,000 for a wide one)
    reps = T.FieldRepetitionType._VALUES_TO_NAMES
    types = T.Type._VALUES_TO_NAMES
    optional, repeated, required = FRT_OPTIONAL, FRT_REPEATED, FRT_REQUIRED
    flba = PT.FIXED_LEN_BYTE_ARRAY
    logical = LogicalType.from_thrift

    nroot = root.num_children if root.num_children is not None else len(elements) - 1
    # an explicit stack of open groups (children still to see, path, levels, ancestors): a footer may
    # nest groups far deeper than Python recursion goes; its depth is checked before anything else
    stack: list[tuple[list[int], tuple[str, ...], int, int, list[Any]]] = [([nroot], (), 0, 0, [])]
    with gc_paused():  # a wide schema builds tens of thousands of objects
        while stack:
            left, prefix, d, r, ancestors = stack[-1]
            if not left[0]:
                stack.pop()
                continue
            left[0] -= 1
            if pos >= n_elements:
                raise CorruptFileError("schema ends before all declared children were seen")
            el = elements[pos]
            pos += 1
            name = el.name
            if not isinstance(name, str):
                raise CorruptFileError(f"schema element {pos - 1} has no name")
            rep = el.repetition_type
            if rep is not None and rep not in reps:
                raise CorruptFileError(f"schema element {name!r} has invalid repetition {rep}")
            dd = d + 1 if rep == optional or rep == repeated else d
            rr = r + 1 if rep == repeated else r
            path = prefix + (name,)
            if len(path) >= MAX_SCHEMA_DEPTH:
                raise UnsupportedError(_too_deep(_schema_depth(elements), "the file's schema"))
            ptype = el.type
            nc = el.num_children
            if nc is not None and nc > 0 or ptype is None:
                nc = nc or 0
                if nc < 0 or nc > n_elements:
                    raise CorruptFileError(f"schema group {name!r} claims {nc} children")
                stack.append(([nc], path, dd, rr, ancestors + [el]))
                continue
            if ptype not in types:
                raise CorruptFileError(f"schema element {name!r} has invalid physical type {ptype}")
            tl = el.type_length
            if ptype == flba and (tl is None or tl < 0):
                raise CorruptFileError(f"FIXED_LEN_BYTE_ARRAY column {name!r} lacks a valid type_length")
            lt = logical(el)
            if lt is not None:
                problem = malformed_annotation(lt)
                if problem is not None:
                    raise CorruptFileError(f"column {'.'.join(path)!r}: {problem}")
                if not annotation_applies(lt, ptype, tl):
                    if lt.legacy:  # Arrow C++ refuses these (its LogicalType check is lenient)
                        raise CorruptFileError(f"column {'.'.join(path)!r}: converted type {lt} cannot "
                                               f"annotate {PHYSICAL_NAMES.get(ptype, ptype)}")
                    lt = None
            fld = Field(".".join(path), ptype, lt, rep != required, tl if ptype == flba else None,
                        el.field_id)
            leaves.append(ColumnDescriptor(path, el, dd, rr, len(leaves), fld, ancestors + [el]))
    if pos != n_elements:  # elements no group claims: the counts are wrong, any reading of them a guess
        raise CorruptFileError(f"the schema has {n_elements} elements but its groups claim {pos}")
    return leaves, elements


def _schema_depth(elements: list[Any]) -> int:
    """Levels of a flattened schema, counting the root (a plain loop: no recursion, no validation)."""
    deepest = 0
    open_groups: list[int] = []
    for el in elements:
        while open_groups and open_groups[-1] == 0:
            open_groups.pop()
        if open_groups:
            open_groups[-1] -= 1
        nc = el.num_children if isinstance(el.num_children, int) else 0
        if nc > 0 or el is elements[0]:
            open_groups.append(max(nc, 0))
            deepest = max(deepest, len(open_groups))
        else:
            deepest = max(deepest, len(open_groups) + 1)
    return deepest


def _too_deep(depth: int, what: str) -> str:
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
        raise SchemaError(_too_deep(depth, f"column {f.name!r}"))


def flat_schema_from_leaves(leaves: list[ColumnDescriptor]) -> Schema:
    return Schema([c.field for c in leaves])


def require_flat(col: ColumnDescriptor) -> None:
    if col.max_repetition_level > 0:
        raise UnsupportedError(f"column {col.dotted_path!r} is repeated (lists/maps are not supported yet)")
