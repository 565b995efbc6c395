"""Arrow fields (:class:`~pqbloom.table.arrow_schema.ArrowField`) as the C Data Interface describes them: the
format strings of its types, and schema descriptions (the nested tuples :mod:`pqbloom.arrow_c` turns into
``ArrowSchema`` structs and reads back), both ways. A dictionary-encoded field is, in the C interface, its
index type with the value type as the schema's ``dictionary``; in an ArrowField, its value type with a
:class:`~pqbloom.table.arrow_schema.Dictionary` saying the index type.
"""

from __future__ import annotations

import re
from typing import Any

from ..arrow_c import FLAG_DICTIONARY_ORDERED, FLAG_MAP_KEYS_SORTED, FLAG_NULLABLE, decode_metadata, encode_metadata
from ..errors import SchemaError
from .arrow_schema import ArrowField, ArrowType, Dictionary, int_type

__all__ = ["format_of", "type_of_format", "schema_desc", "field_of_desc", "index_type"]

#: integer formats: (bit width, signed)
_INTS = {"c": (8, True), "C": (8, False), "s": (16, True), "S": (16, False), "i": (32, True), "I": (32, False),
         "l": (64, True), "L": (64, False)}
_INT_FORMATS = {v: k for k, v in _INTS.items()}
#: formats of types without parameters
_PLAIN = {"n": "null", "b": "bool", "z": "binary", "Z": "large_binary", "vz": "binary_view", "u": "utf8",
          "U": "large_utf8", "vu": "utf8_view", "+l": "list", "+L": "large_list", "+vl": "list_view",
          "+vL": "large_list_view", "+s": "struct", "+m": "map", "+r": "run_end_encoded"}
_PLAIN_FORMATS = {v: k for k, v in _PLAIN.items()}
_FLOATS = {"e": 0, "f": 1, "g": 2}
_UNIT_LETTERS = "smun"  # the C interface's letters of arrow_schema.TIME_UNITS, in its order
_INTERVALS = {"tiM": 0, "tiD": 1, "tin": 2}


def format_of(t: ArrowType) -> str:
    """The C Data Interface format string of Arrow type ``t``."""
    k = t.kind
    if k in _PLAIN_FORMATS:
        return _PLAIN_FORMATS[k]
    if k == "int":
        return _INT_FORMATS[(t.bit_width, t.signed)]
    if k == "float":
        return "efg"[t.precision]
    if k == "decimal":
        return f"d:{t.precision},{t.scale}" + ("" if t.bit_width == 128 else f",{t.bit_width}")
    if k == "date":
        return "tdD" if t.unit == 0 else "tdm"
    if k == "time":
        return f"tt{_UNIT_LETTERS[t.unit]}"
    if k == "timestamp":
        return f"ts{_UNIT_LETTERS[t.unit]}:{t.tz or ''}"
    if k == "duration":
        return f"tD{_UNIT_LETTERS[t.unit]}"
    if k == "interval":
        return ("tiM", "tiD", "tin")[t.unit]
    if k == "fixed_size_binary":
        return f"w:{t.width}"
    if k == "fixed_size_list":
        return f"+w:{t.width}"
    if k == "union":
        return f"+u{'sd'[t.unit]}:" + ",".join(str(i) for i in (t.type_ids or ()))
    raise SchemaError(f"Arrow type {k!r} has no C Data Interface format here")


def type_of_format(fmt: str) -> ArrowType:
    """The Arrow type of a C Data Interface format string (:class:`~pqbloom.errors.SchemaError` for one it
    does not know)."""
    if fmt in _PLAIN:
        return ArrowType(_PLAIN[fmt])
    if fmt in _INTS:
        return int_type(*_INTS[fmt])
    if fmt in _FLOATS:
        return ArrowType("float", precision=_FLOATS[fmt])
    if fmt in _INTERVALS:
        return ArrowType("interval", unit=_INTERVALS[fmt])
    if fmt in ("tdD", "tdm"):
        return ArrowType("date", unit=0 if fmt == "tdD" else 1)
    m = re.fullmatch(r"tt([smun])", fmt)
    if m:
        unit = _UNIT_LETTERS.index(m.group(1))
        return ArrowType("time", unit=unit, bit_width=32 if unit < 2 else 64)
    m = re.fullmatch(r"ts([smun]):(.*)", fmt, re.S)
    if m:
        return ArrowType("timestamp", unit=_UNIT_LETTERS.index(m.group(1)), tz=m.group(2) or None)
    m = re.fullmatch(r"tD([smun])", fmt)
    if m:
        return ArrowType("duration", unit=_UNIT_LETTERS.index(m.group(1)))
    m = re.fullmatch(r"d:(\d+),(-?\d+)(?:,(\d+))?", fmt)
    if m:
        bits = int(m.group(3) or 128)
        if bits not in (32, 64, 128, 256):
            raise SchemaError(f"Arrow decimal format {fmt!r}: {bits} bits")
        return ArrowType("decimal", precision=int(m.group(1)), scale=int(m.group(2)), bit_width=bits)
    m = re.fullmatch(r"(\+?)w:(\d+)", fmt)
    if m:
        return ArrowType("fixed_size_list" if m.group(1) else "fixed_size_binary", width=int(m.group(2)))
    m = re.fullmatch(r"\+u([sd]):([\d,]*)", fmt)
    if m:
        ids = tuple(int(x) for x in m.group(2).split(",") if x)
        return ArrowType("union", unit="sd".index(m.group(1)), type_ids=ids)
    raise SchemaError(f"Arrow type format {fmt!r} is not supported")


def index_type(d: Dictionary) -> ArrowType:
    """The integer type of a dictionary's indices."""
    return int_type(d.index_bit_width, d.index_signed)


def schema_desc(f: ArrowField) -> tuple[Any, ...]:
    """The schema description (:mod:`pqbloom.arrow_c`) of Arrow field ``f``."""
    kids = tuple(schema_desc(c) for c in f.children)
    flags = FLAG_NULLABLE if f.nullable else 0
    if f.type.kind == "map" and f.type.keys_sorted:
        flags |= FLAG_MAP_KEYS_SORTED
    meta = encode_metadata(f.metadata)
    if f.dictionary is None:
        return format_of(f.type), f.name, meta, flags, kids, None
    d = f.dictionary
    values = (format_of(f.type), "", None, FLAG_NULLABLE | (flags & FLAG_MAP_KEYS_SORTED), kids, None)
    return (format_of(index_type(d)), f.name, meta,
            (flags & ~FLAG_MAP_KEYS_SORTED) | (FLAG_DICTIONARY_ORDERED if d.ordered else 0), (), values)


def field_of_desc(desc: tuple[Any, ...], next_id: list[int] | None = None) -> ArrowField:
    """The Arrow field of a schema description read from a C struct (dictionaries numbered in order)."""
    ids = next_id if next_id is not None else [0]
    fmt, name, meta, flags, kids, dictionary = desc
    children = tuple(field_of_desc(k, ids) for k in kids)
    metadata = decode_metadata(meta)
    nullable = bool(flags & FLAG_NULLABLE)
    if dictionary is None:
        t = type_of_format(fmt)
        if t.kind == "map" and flags & FLAG_MAP_KEYS_SORTED:
            t = ArrowType("map", keys_sorted=True)
        return ArrowField(name, t, nullable, children, None, metadata)
    it = type_of_format(fmt)
    if it.kind != "int":
        raise SchemaError(f"Arrow field {name!r}: dictionary indices of type {fmt!r}")
    values = field_of_desc(dictionary, ids)
    if values.dictionary is not None:
        raise SchemaError(f"Arrow field {name!r}: a dictionary of dictionary-encoded values is not supported")
    d = Dictionary(ids[0], it.bit_width, it.signed, bool(flags & FLAG_DICTIONARY_ORDERED))
    ids[0] += 1
    return ArrowField(name, values.type, nullable, values.children, d, metadata)

