"""The Arrow schema that Arrow writers keep in a Parquet footer (key ``ARROW:schema``), without pyarrow.

pyarrow stores its table's Arrow schema, serialized as an Arrow IPC ``Schema`` message and
base64-encoded, in the footer's key-value metadata, and reading a file it takes from there what the
Parquet schema cannot say: time zones, durations (stored as plain INT64), dictionary encoding,
large/view string types and field metadata. This module encodes and decodes that message for the
types Parquet can hold (:class:`ArrowField` trees), gives the Arrow type pyarrow infers for each
Parquet field (:func:`natural_field`), and combines the two as pyarrow's reader does
(:func:`effective_field`) or as a writer must (:func:`writable_field`: the stored schema may only
say what is true of the file's columns, since pyarrow trusts it).
"""

from __future__ import annotations

import base64
import binascii
import struct
from collections.abc import Mapping
from dataclasses import dataclass, replace
from functools import lru_cache
from typing import Any

from ..format import flatbuf
from ..format.enums import PhysicalType
from ..format.flatbuf import FlatbufferError, Scalar, Table, Vector
from ..schema import NestedField

__all__ = ["ArrowType", "ArrowField", "ArrowSchema", "ARROW_SCHEMA_KEY", "encode_schema", "decode_schema",
           "natural_field", "effective_field", "writable_field", "file_arrow_schema", "footer_metadata",
           "from_pyarrow", "schema_hints", "with_durations", "leaf_arrow_field", "leaf_duration_unit", "TIME_UNITS"]

ARROW_SCHEMA_KEY = "ARROW:schema"
FIELD_ID_KEY = "PARQUET:field_id"
EXTENSION_NAME_KEY = "ARROW:extension:name"
EXTENSION_META_KEY = "ARROW:extension:metadata"
TIME_UNITS = ("s", "ms", "us", "ns")  # Arrow's TimeUnit enum, by value

# Arrow's Type union: name -> (id, attributes as (attribute, struct code or "str"/"[i]", default))
_TYPES: dict[str, tuple[int, tuple[tuple[str, str, Any], ...]]] = {
    "null": (1, ()),
    "int": (2, (("bit_width", "i", 0), ("signed", "?", False))),
    "float": (3, (("precision", "h", 0),)),  # 0 half, 1 single, 2 double
    "binary": (4, ()),
    "utf8": (5, ()),
    "bool": (6, ()),
    "decimal": (7, (("precision", "i", 0), ("scale", "i", 0), ("bit_width", "i", 128))),
    "date": (8, (("unit", "h", 1),)),  # 0 day, 1 millisecond
    "time": (9, (("unit", "h", 1), ("bit_width", "i", 32))),
    "timestamp": (10, (("unit", "h", 0), ("tz", "str", None))),
    "interval": (11, (("unit", "h", 0),)),
    "list": (12, ()),
    "struct": (13, ()),
    "union": (14, (("unit", "h", 0), ("type_ids", "[i]", None))),  # unit holds the union mode
    "fixed_size_binary": (15, (("width", "i", 0),)),
    "fixed_size_list": (16, (("width", "i", 0),)),
    "map": (17, (("keys_sorted", "?", False),)),
    "duration": (18, (("unit", "h", 1),)),
    "large_binary": (19, ()),
    "large_utf8": (20, ()),
    "large_list": (21, ()),
    "run_end_encoded": (22, ()),
    "binary_view": (23, ()),
    "utf8_view": (24, ()),
    "list_view": (25, ()),
    "large_list_view": (26, ()),
}
_BY_ID = {tid: name for name, (tid, _) in _TYPES.items()}
_LIST_KINDS = ("list", "large_list", "list_view", "large_list_view", "fixed_size_list")
_METADATA_V5 = 4


class ArrowSchemaError(ValueError):
    """An ``ARROW:schema`` value that is not a well-formed Arrow IPC Schema message."""


@dataclass(frozen=True)
class ArrowType:
    """One Arrow type; attributes unused by ``kind`` keep their defaults (see ``_TYPES``)."""

    kind: str
    bit_width: int = 0
    signed: bool = False
    precision: int = 0
    scale: int = 0
    unit: int = 0
    tz: str | None = None
    width: int = 0
    keys_sorted: bool = False
    type_ids: tuple[int, ...] | None = None


@dataclass(frozen=True)
class Dictionary:
    """Dictionary encoding of a field: its index type and whether the categories are ordered."""

    id: int
    index_bit_width: int = 32
    index_signed: bool = True
    ordered: bool = False


@dataclass(frozen=True)
class ArrowField:
    """A named Arrow field; for a dictionary-encoded field ``type`` is the value type."""

    name: str
    type: ArrowType
    nullable: bool = True
    children: tuple[ArrowField, ...] = ()
    dictionary: Dictionary | None = None
    metadata: tuple[tuple[str, str], ...] = ()

    def meta(self, key: str) -> str | None:
        return dict(self.metadata).get(key)


@dataclass(frozen=True)
class ArrowSchema:
    fields: tuple[ArrowField, ...]
    metadata: tuple[tuple[str, str], ...] = ()

    def field(self, name: str) -> ArrowField | None:
        """The first top-level field named ``name`` (None when there is none)."""
        return next((f for f in self.fields if f.name == name), None)


def int_type(bits: int, signed: bool) -> ArrowType:
    return ArrowType("int", bit_width=bits, signed=signed)


def timestamp(unit: str, tz: str | None = None) -> ArrowType:
    return ArrowType("timestamp", unit=TIME_UNITS.index(unit), tz=tz)


def duration(unit: str) -> ArrowType:
    return ArrowType("duration", unit=TIME_UNITS.index(unit))


# ---------------------------------------------------------------------------
# encoding
# ---------------------------------------------------------------------------
def _kv_vector(items: tuple[tuple[str, str], ...]) -> Vector | None:
    return Vector(tuple(Table({0: k, 1: v}) for k, v in items)) if items else None


def _type_table(t: ArrowType) -> Table:
    out: dict[int, Any] = {}
    for slot, (attr, code, _) in enumerate(_TYPES[t.kind][1]):
        v = getattr(t, attr)
        if code == "str":
            out[slot] = v
        elif code == "[i]":
            out[slot] = None if v is None else Vector(tuple(v), "i")
        else:
            out[slot] = Scalar(code, v)
    return Table(out)


def _field_table(f: ArrowField) -> Table:
    fields: dict[int, Any] = {
        0: f.name, 1: Scalar("?", f.nullable), 2: Scalar("B", _TYPES[f.type.kind][0]), 3: _type_table(f.type),
        5: Vector(tuple(_field_table(c) for c in f.children)), 6: _kv_vector(f.metadata)}
    if f.dictionary is not None:
        d = f.dictionary
        fields[4] = Table({0: Scalar("q", d.id),
                           1: Table({0: Scalar("i", d.index_bit_width), 1: Scalar("?", d.index_signed)}),
                           2: Scalar("?", d.ordered), 3: Scalar("h", 0)})
    return Table(fields)


def encode_schema(schema: ArrowSchema) -> str:
    """The base64 text of an Arrow IPC message holding ``schema``, as pyarrow stores under ``ARROW:schema``."""
    schema_table = Table({0: Scalar("h", 0), 1: Vector(tuple(_field_table(f) for f in schema.fields)),
                          2: _kv_vector(schema.metadata)})
    body = flatbuf.encode(Table({0: Scalar("h", _METADATA_V5), 1: Scalar("B", 1), 2: schema_table,
                                 3: Scalar("q", 0)}))
    # continuation marker, then the metadata length (the FlatBuffer is already padded to 8 bytes)
    return base64.b64encode(struct.pack("<Ii", 0xFFFFFFFF, len(body)) + body).decode("ascii")


# ---------------------------------------------------------------------------
# decoding
# ---------------------------------------------------------------------------
def _kv_items(tv: flatbuf.TableView, slot: int) -> tuple[tuple[str, str], ...]:
    out = []
    for kv in tv.tables(slot) or []:
        k, v = kv.string(0), kv.string(1)
        if k is not None:
            out.append((k, v or ""))
    return tuple(out)


def _decode_type(kind: str, tv: flatbuf.TableView | None) -> ArrowType:
    kw: dict[str, Any] = {}
    for slot, (attr, code, default) in enumerate(_TYPES[kind][1]):
        if tv is None:
            kw[attr] = default
        elif code == "str":
            kw[attr] = tv.string(slot)
        elif code == "[i]":
            ids = tv.scalars(slot, "i")
            kw[attr] = None if ids is None else tuple(ids)
        else:
            kw[attr] = tv.scalar(slot, code, default)
    return ArrowType(kind, **kw)


def _decode_field(tv: flatbuf.TableView) -> ArrowField:
    type_id = tv.scalar(2, "B", 0)
    kind = _BY_ID.get(type_id)
    if kind is None:
        raise ArrowSchemaError(f"unknown Arrow type id {type_id}")
    dictionary = None
    dv = tv.table(4)
    if dv is not None:
        it = dv.table(1)
        dictionary = Dictionary(dv.scalar(0, "q", 0), it.scalar(0, "i", 32) if it else 32,
                                bool(it.scalar(1, "?", False)) if it else True, bool(dv.scalar(2, "?", False)))
    children = tuple(_decode_field(c) for c in tv.tables(5) or [])
    return ArrowField(tv.string(0) or "", _decode_type(kind, tv.table(3)), bool(tv.scalar(1, "?", False)),
                      children, dictionary, _kv_items(tv, 6))


@lru_cache(maxsize=64)
def decode_schema(text: str) -> ArrowSchema:
    """Decode an ``ARROW:schema`` value; :class:`ArrowSchemaError` when it is not one."""
    try:
        raw = base64.b64decode(text, validate=False)
    except (binascii.Error, ValueError):
        raise ArrowSchemaError("ARROW:schema is not base64") from None
    try:
        # since Arrow 0.15 a message starts with a continuation marker; before, with the length
        start = 8 if raw[:4] == b"\xff\xff\xff\xff" else 4
        (length,) = struct.unpack_from("<i", raw, start - 4)
        if length <= 0 or start + length > len(raw):
            raise ArrowSchemaError("ARROW:schema message length is out of range")
        msg = flatbuf.root(raw[start:start + length])
        if msg.scalar(1, "B", 0) != 1:
            raise ArrowSchemaError("ARROW:schema does not hold a Schema message")
        sv = msg.table(2)
        if sv is None:
            raise ArrowSchemaError("ARROW:schema message has no header")
        fields = tuple(_decode_field(f) for f in sv.tables(1) or [])
        return ArrowSchema(fields, _kv_items(sv, 2))
    except (FlatbufferError, struct.error, RecursionError) as exc:
        raise ArrowSchemaError(f"malformed ARROW:schema: {exc}") from None


def schema_hints(metadata: Mapping[str, Any] | None) -> ArrowSchema | None:
    """The decoded ``ARROW:schema`` of key-value metadata; None when absent or malformed (the Parquet
    schema alone then describes the columns, as it does for files from non-Arrow writers)."""
    text = (metadata or {}).get(ARROW_SCHEMA_KEY)
    if not text:
        return None
    try:
        return decode_schema(text)
    except ArrowSchemaError:
        return None


# ---------------------------------------------------------------------------
# Parquet field -> Arrow field, as pyarrow infers it
# ---------------------------------------------------------------------------
#: the (physical type, unit) pairs a TIME may have
_TIME_TYPES = ((PhysicalType.INT32, "ms"), (PhysicalType.INT64, "us"), (PhysicalType.INT64, "ns"))
_EXT_JSON = ((EXTENSION_META_KEY, ""), (EXTENSION_NAME_KEY, "arrow.json"))  # in pyarrow's order
_EXT_UUID = ((EXTENSION_META_KEY, ""), (EXTENSION_NAME_KEY, "arrow.uuid"))


def _natural_type(f: Any) -> tuple[ArrowType, tuple[tuple[str, str], ...]] | None:
    p, lt = f.physical_type, f.logical_type
    kind = lt.kind if lt is not None else None
    if kind == "UNKNOWN":
        return ArrowType("null"), ()
    if kind == "DECIMAL":
        prec = lt.precision or 0
        if p not in (PhysicalType.INT32, PhysicalType.INT64, PhysicalType.BYTE_ARRAY,
                     PhysicalType.FIXED_LEN_BYTE_ARRAY) or prec < 1:
            return None
        return ArrowType("decimal", precision=prec, scale=lt.scale or 0, bit_width=128 if prec <= 38 else 256), ()
    if p == PhysicalType.BOOLEAN and kind is None:
        return ArrowType("bool"), ()
    if p in (PhysicalType.INT32, PhysicalType.INT64):
        bits = 32 if p == PhysicalType.INT32 else 64
        if kind is None:
            return int_type(bits, True), ()
        if kind == "INTEGER" and lt.bit_width in (8, 16, 32, 64) and lt.bit_width <= bits:
            return int_type(lt.bit_width, lt.signed), ()
        if kind == "DATE" and p == PhysicalType.INT32:
            return ArrowType("date", unit=0), ()
        if kind == "TIME" and (p, lt.unit) in _TIME_TYPES:
            return ArrowType("time", unit=TIME_UNITS.index(lt.unit), bit_width=bits), ()
        if kind == "TIMESTAMP" and p == PhysicalType.INT64 and lt.unit in TIME_UNITS:
            return timestamp(lt.unit, "UTC" if lt.utc else None), ()
        return None
    if p == PhysicalType.INT96 and kind is None:
        return timestamp("ns"), ()
    if p in (PhysicalType.FLOAT, PhysicalType.DOUBLE) and kind is None:
        return ArrowType("float", precision=1 if p == PhysicalType.FLOAT else 2), ()
    if p == PhysicalType.BYTE_ARRAY:
        if kind == "STRING":
            return ArrowType("utf8"), ()
        if kind == "JSON":
            return ArrowType("utf8"), _EXT_JSON
        if kind in (None, "ENUM", "BSON"):
            return ArrowType("binary"), ()
        return None
    if p == PhysicalType.FIXED_LEN_BYTE_ARRAY:
        w = f.type_length or 0
        if kind == "FLOAT16" and w == 2:
            return ArrowType("float", precision=0), ()
        if kind == "UUID" and w == 16:
            return ArrowType("fixed_size_binary", width=16), _EXT_UUID
        if kind is None:
            return ArrowType("fixed_size_binary", width=w), ()
    return None


def natural_field(f: Any, *, written: bool = True, name: str | None = None) -> ArrowField | None:
    """The Arrow field pyarrow reads for pqbloom field ``f`` when the file has no ``ARROW:schema``;
    None for a type this module cannot describe. ``written``: name list and map members as pqbloom
    writes them (``element``, ``key``, ``value``) rather than as ``f`` names them."""
    nm = f.name if name is None else name
    meta: tuple[tuple[str, str], ...] = ()
    if isinstance(f, NestedField):
        if f.kind == "struct":
            kids = [natural_field(c, written=written) for c in f.children]
            typ = ArrowType("struct")
        elif f.kind == "list":
            kids = [natural_field(f.children[0], written=written, name="element" if written else None)]
            typ = ArrowType("list")
        elif f.kind == "map":
            key, value = f.children
            k = natural_field(key, written=written, name="key" if written else None)
            v = natural_field(value, written=written, name="value" if written else None)
            if k is None or v is None:
                return None
            # pyarrow names the entries after the map field itself
            kids = [ArrowField(nm, ArrowType("struct"), False, (replace(k, nullable=False), v))]
            typ = ArrowType("map")
        else:
            return None
        if any(k is None for k in kids):
            return None
        children = tuple(k for k in kids if k is not None)
    else:
        got = _natural_type(f)
        if got is None:
            return None
        typ, meta = got
        children = ()
    if getattr(f, "field_id", None) is not None:
        meta = meta + ((FIELD_ID_KEY, str(f.field_id)),)
    return ArrowField(nm, typ, bool(f.nullable), children, None, meta)


def with_durations(f: Any, paths: list[tuple[str, ...]], unit: str) -> ArrowField | None:
    """The Arrow field of pqbloom field ``f`` (as written: :func:`natural_field`) with the INT64 members at
    ``paths`` (member names below ``f``; a list's element is ``element``) typed as Arrow durations of
    ``unit``; None when ``f`` has a type this module cannot describe."""
    root = natural_field(f)
    if root is None:
        return None

    def put(af: ArrowField, path: tuple[str, ...]) -> ArrowField:
        if not path:
            return replace(af, type=duration(unit)) if af.type == int_type(64, True) else af
        kids = tuple(put(c, path[1:]) if c.name == path[0] else c for c in af.children)
        return replace(af, children=kids)

    for p in paths:
        root = put(root, p)
    return root


def leaf_arrow_field(hints: ArrowSchema | None, path: tuple[str, ...]) -> ArrowField | None:
    """The stored Arrow field of the leaf column at Parquet ``path`` (its schema elements' names), or None.

    A stored Arrow schema comes from an Arrow writer, which writes lists in three levels (a repeated group,
    then the element) and maps as a repeated group of ``key`` and ``value``; a path that does not follow
    the Arrow fields that way finds nothing."""
    cur = hints.field(path[0]) if hints is not None and path else None
    i = 1
    while cur is not None and i < len(path):
        k = cur.type.kind
        if k in _LIST_KINDS:
            cur, i = (cur.children[0] if len(cur.children) == 1 and i + 1 < len(path) else None), i + 2
        elif k == "map":
            entries = cur.children[0].children if len(cur.children) == 1 and i + 1 < len(path) else ()
            cur, i = next((c for c in entries if c.name == path[i + 1]), None), i + 2
        elif k == "struct":
            cur, i = next((c for c in cur.children if c.name == path[i]), None), i + 1
        else:
            return None
    return cur


def leaf_duration_unit(hints: ArrowSchema | None, path: tuple[str, ...], f: Any) -> str | None:
    """The unit of leaf column ``f`` (at Parquet ``path``) when its stored Arrow type is a duration (an INT64
    without annotation, as Arrow writers store durations and pyarrow reads them back); else None."""
    if f.physical_type != PhysicalType.INT64 or f.logical_type is not None:
        return None
    af = leaf_arrow_field(hints, path)
    if af is None or af.type.kind != "duration" or not 0 <= af.type.unit < len(TIME_UNITS):
        return None
    return TIME_UNITS[af.type.unit]


def _merge_metadata(hint: tuple[tuple[str, str], ...], own: tuple[tuple[str, str], ...]) -> tuple[tuple[str, str], ...]:
    """``hint``'s field metadata with ``own``'s keys (field id, extension type) taking precedence."""
    keys = {k for k, _ in own}
    drop = keys | ({FIELD_ID_KEY} if FIELD_ID_KEY not in keys else set())
    if any(k == EXTENSION_NAME_KEY for k in keys):
        drop |= {EXTENSION_META_KEY}
    return tuple((k, v) for k, v in hint if k not in drop) + own


# ---------------------------------------------------------------------------
# reading: what pyarrow takes from the stored schema
# ---------------------------------------------------------------------------
def effective_field(natural: ArrowField, hint: ArrowField | None) -> ArrowField:
    """The field pyarrow reads: the Parquet-derived ``natural`` field, with the stored ``hint``'s
    time zone, duration, dictionary encoding, large/view string type and field metadata applied as
    pyarrow's reader applies them (and nothing else: units, names and nullability stay the file's)."""
    if hint is None:
        return natural
    t, h = natural.type, hint.type
    typ, dictionary = t, None
    if t.kind == "timestamp" and h.kind == "timestamp" and t.tz == "UTC" and h.tz:
        typ = replace(t, tz=h.tz)
    elif t.kind == "int" and t.bit_width == 64 and t.signed and h.kind == "duration":
        typ = h
    elif (t.kind, h.kind) in (("binary", "large_binary"), ("utf8", "large_utf8"), ("binary", "binary_view"),
                              ("utf8", "utf8_view")):
        typ = h
    elif t.kind == "list" and h.kind == "large_list":
        typ = h
    if hint.dictionary is not None and t.kind in ("binary", "utf8", "large_binary", "large_utf8") \
            and not natural.children:
        # pyarrow reads dictionaries only for binary-like values, with the stored index type (pyarrow 26)
        dictionary = replace(hint.dictionary)
        typ = t
    children = natural.children
    if children and len(hint.children) == len(children) and (
            t.kind != "struct" or [c.name for c in children] == [c.name for c in hint.children]):
        children = tuple(effective_field(c, hc) for c, hc in zip(children, hint.children))
    return replace(natural, type=typ, children=children, dictionary=dictionary,
                   metadata=_merge_metadata(hint.metadata, natural.metadata))


# ---------------------------------------------------------------------------
# writing: what may be stored for a file's column
# ---------------------------------------------------------------------------
def _storable(t: ArrowType, h: ArrowType) -> bool:
    """Whether pyarrow, writing a column of Arrow type ``h``, stores it as Parquet read back as ``t``."""
    if t == h:
        return True
    k, hk = t.kind, h.kind
    if k == "timestamp" and hk == "timestamp":
        units_ok = h.unit == t.unit or (h.unit == 0 and t.unit == 1)  # seconds are stored as milliseconds
        return units_ok and (t.tz is None) == (h.tz is None)
    if k == "int" and t.bit_width == 64 and t.signed:
        return hk == "duration"
    if k == "date":
        return hk == "date"
    if k == "time":
        return hk == "time" and t.unit == 1 and h.unit == 0 and h.bit_width == 32
    if k == "decimal":
        return hk == "decimal" and (h.precision, h.scale) == (t.precision, t.scale)
    if k == "utf8":
        return hk in ("large_utf8", "utf8_view")
    if k == "binary":
        return hk in ("large_binary", "binary_view")
    if k == "list":
        return hk in _LIST_KINDS
    if k == "map":
        return hk == "map"
    return False


def writable_field(natural: ArrowField, hint: ArrowField | None) -> ArrowField:
    """The field to store for a column whose Parquet form reads back as ``natural``: ``hint`` (the
    Arrow field the data came with) when it describes the same stored values, else ``natural``."""
    if hint is None:
        return natural
    merged = _writable(natural, hint)
    return natural if merged is None else merged


def _writable(n: ArrowField, h: ArrowField) -> ArrowField | None:
    if not _storable(n.type, h.type) or len(n.children) != len(h.children):
        return None
    if n.type.kind == "struct" and [c.name for c in n.children] != [c.name for c in h.children]:
        return None
    kids = []
    for nc, hc in zip(n.children, h.children):
        k = _writable(nc, hc)
        if k is None:
            return None
        # list and map members keep the names the data came with, as pyarrow stores them
        kids.append(k if n.type.kind == "struct" else replace(k, name=hc.name))
    return replace(h, name=n.name, nullable=n.nullable, children=tuple(kids),
                   metadata=_merge_metadata(h.metadata, n.metadata))


def file_arrow_schema(schema: Any, hints: ArrowSchema | None, metadata: Mapping[str, str] | None = None) -> str | None:
    """The ``ARROW:schema`` value for a file of pqbloom ``schema`` whose data came with the Arrow
    schema ``hints``; None when there are no hints or a column has a type this module cannot describe
    (then the file has no stored Arrow schema and readers infer every type from Parquet)."""
    if hints is None:
        return None
    fields = []
    next_id = 0
    for f in schema.fields:
        n = natural_field(f)
        if n is None:
            return None
        w = writable_field(n, hints.field(f.name))
        w, next_id = _number_dictionaries(w, next_id)
        fields.append(w)
    meta = tuple((k, v) for k, v in (metadata or {}).items() if k != ARROW_SCHEMA_KEY and v is not None)
    return encode_schema(ArrowSchema(tuple(fields), meta))


def _number_dictionaries(f: ArrowField, next_id: int) -> tuple[ArrowField, int]:
    """Dictionary ids 0, 1, ... depth first, as Arrow's IPC writer numbers them."""
    d = f.dictionary
    if d is not None:
        d = replace(d, id=next_id)
        next_id += 1
    kids = []
    for c in f.children:
        c, next_id = _number_dictionaries(c, next_id)
        kids.append(c)
    return replace(f, dictionary=d, children=tuple(kids)), next_id


def from_pyarrow(pa_schema: Any) -> ArrowSchema | None:
    """The :class:`ArrowSchema` of a pyarrow schema (through its IPC serialization); None for a
    schema this module cannot decode (a type newer than it)."""
    raw = pa_schema.serialize().to_pybytes()
    try:
        return decode_schema(base64.b64encode(raw).decode("ascii"))
    except ArrowSchemaError:
        return None


def to_pyarrow_type(f: ArrowField) -> Any:
    """The pyarrow DataType of ``f`` (dictionary types included), through the IPC encoding."""
    import pyarrow as pa

    raw = base64.b64decode(encode_schema(ArrowSchema((f,))))
    return pa.ipc.read_schema(pa.py_buffer(raw)).field(0).type


def footer_metadata(schema: Any, user: Mapping[str, Any] | None, data: Mapping[str, str] | None,
                    hints: ArrowSchema | None) -> dict[str, Any]:
    """The key-value metadata of a file: what the data came with (pandas' entry...), then the
    user's ``key_value_metadata`` (which wins), then the ``ARROW:schema`` for the file's columns.

    An ``ARROW:schema`` the user gives is taken as the Arrow types of the data, and stored only
    where it describes the columns truly (see :func:`file_arrow_schema`).
    """
    out: dict[str, Any] = {k: v for k, v in (data or {}).items() if k != ARROW_SCHEMA_KEY}
    for k, v in (user or {}).items():
        if k == ARROW_SCHEMA_KEY:
            hints = schema_hints({k: v}) or hints
        else:
            out[str(k)] = v
    arrow = file_arrow_schema(schema, hints, {k: str(v) for k, v in out.items() if v is not None})
    if arrow is not None:
        out[ARROW_SCHEMA_KEY] = arrow
    return out
