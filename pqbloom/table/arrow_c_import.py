"""Columns in through the Arrow C Data and Stream Interfaces, without pyarrow: any object with
``__arrow_c_stream__`` or ``__arrow_c_array__`` (a polars DataFrame, a DuckDB relation, a pyarrow or arro3
table, a nanoarrow array stream) as pqbloom columns, converted as :mod:`pqbloom.table.arrow` converts the
same data from pyarrow (same physical types, same names of list and map members, durations as INT64 counts
whose unit the Arrow types keep, dictionaries kept whole).

Buffers are in the machine's byte order, as the C interface says. The C interface carries no buffer sizes: each is worked out here from the type, length and offset, and the
offsets an array holds are checked (non-decreasing, inside the child or data they index) before a byte is
read through them; a struct that does not hold together is :class:`~pqbloom.errors.SchemaError`. Values are
copied into pqbloom's own arrays: nothing of the producer's memory is kept once a column is made.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import numpy as np

from .. import arrow_c
from ..arrays import BinaryArray
from ..errors import SchemaError
from ..format.enums import PhysicalType
from ..schema import MAX_SCHEMA_DEPTH, Field, LogicalType, make_field, nested_field
from .arrow_c_types import field_of_desc
from .arrow_schema import TIME_UNITS, ArrowField, ArrowSchema
from .build import conform, infer_flat_field, physical_from_array, tighten
from .column import Column, NestedColumn, with_dictionary
from .decimals import DecimalOverflow, big_endian_from_words, ints_from_words

__all__ = ["read_arrow_c", "is_arrow_c"]

_NUMPY = {("int", 8, True): "i1", ("int", 8, False): "u1", ("int", 16, True): "=i2", ("int", 16, False): "=u2",
          ("int", 32, True): "=i4", ("int", 32, False): "=u4", ("int", 64, True): "=i8", ("int", 64, False): "=u8"}
_FLOATS = {0: "=f2", 1: "=f4", 2: "=f8"}
_EXTENSIONS = {"arrow.uuid": "uuid", "arrow.json": "json"}


def is_arrow_c(data: Any) -> bool:
    """Whether ``data`` exports the Arrow PyCapsule interface as a table (a stream or an array)."""
    return hasattr(data, "__arrow_c_stream__") or hasattr(data, "__arrow_c_array__")


def read_arrow_c(data: Any) -> tuple[list[Column], dict[str, str], ArrowSchema, int]:
    """The columns, key-value metadata, Arrow types and row count of an object that exports a table (a struct
    of columns) through ``__arrow_c_stream__`` (preferred) or ``__arrow_c_array__``."""
    err = arrow_c.import_error()
    try:
        if hasattr(data, "__arrow_c_stream__"):
            reader = arrow_c.stream_from_capsule(data.__arrow_c_stream__())
            try:
                schema = field_of_desc(reader.schema())
                batches = []
                while (b := reader.next()) is not None:
                    batches.append(b)
            finally:
                reader.release()
        else:
            schema_capsule, array_capsule = data.__arrow_c_array__()
            schema = field_of_desc(arrow_c.schema_of(schema_capsule))
            batches = [arrow_c.array_from_capsule(array_capsule)]
        if schema.type.kind != "struct" or schema.dictionary is not None:
            raise SchemaError(f"an Arrow {schema.type.kind} is not a table (a struct of columns)")
        for f in schema.children:
            if _depth(f) + 1 > MAX_SCHEMA_DEPTH:
                raise SchemaError(f"column {f.name!r} is nested {_depth(f) + 1:,} levels deep; "
                                  f"pqbloom reads and writes at most {MAX_SCHEMA_DEPTH}")
        parts = [_batch_columns(schema, b) for b in batches]
    except err as exc:
        raise SchemaError(f"Arrow C interface: {exc}") from None
    if len(parts) == 1:
        columns = parts[0]
    elif parts:
        columns = [Column.concat(_one_field(list(cols))) for cols in zip(*parts)] if schema.children else []
    else:
        columns = [_convert(f, _Empty(f), 0, 0) for f in schema.children]
    rows = sum(b.length for b in batches)
    metadata = dict(schema.metadata)
    return columns, metadata, ArrowSchema(schema.children, schema.metadata), rows


def _one_field(parts: list[Column]) -> list[Column]:
    """A column's parts from several batches under one field: their own where they agree, else the first of
    theirs all the parts conform to (nullability inferred from one batch's nulls may differ in another)."""
    fields = [p.field for p in parts]
    if all(f == fields[0] for f in fields):
        return parts
    for f in fields:
        try:
            return [conform(p, f) for p in parts]
        except SchemaError:
            continue
    raise SchemaError(f"column {fields[0].name!r}: batches of different types")


def _depth(f: ArrowField) -> int:
    """Schema levels below ``f`` (lists and maps count two, as written); a loop, not recursion."""
    deepest, todo = 0, [(f, 1)]
    while todo:
        g, d = todo.pop()
        deepest = max(deepest, d)
        step = 2 if g.type.kind in ("list", "large_list", "fixed_size_list", "list_view", "large_list_view") else 1
        for c in g.children:
            todo.extend([(k, d + 2) for k in c.children] if g.type.kind == "map" else [(c, d + step)])
    return deepest


def _batch_columns(schema: ArrowField, batch: Any) -> list[Column]:
    if batch.n_children != len(schema.children):
        raise SchemaError(f"a batch of {batch.n_children} columns for a schema of {len(schema.children)}")
    if batch.null_count != 0 and _mask(batch, 0, batch.length) is not None:
        raise SchemaError("a struct array with null rows is not a table")
    return [_convert(f, batch.child(i), batch.offset, batch.length) for i, f in enumerate(schema.children)]


class _Empty:
    """A zero-length array of any type (the columns of a stream without batches)."""

    length = offset = null_count = n_buffers = 0

    def __init__(self, f: ArrowField) -> None:
        self.f = f

    @property
    def n_children(self) -> int:
        return len(self.f.children)

    def has_buffer(self, i: int) -> bool:
        return False

    def buffer(self, i: int, nbytes: int) -> bytes:
        return b"\0" * nbytes

    def child(self, i: int) -> _Empty:
        return _Empty(self.f.children[i])

    def dictionary(self) -> _Empty:
        return _Empty(replace(self.f, dictionary=None))


# -- buffers --------------------------------------------------------------------------------------------------

def _check_range(a: Any, start: int, n: int, what: str = "array") -> int:
    """The absolute index of slot ``start`` of ``a`` (its offset added), after checking ``start + n`` fits."""
    if start < 0 or n < 0 or start + n > a.length:
        raise SchemaError(f"Arrow C interface: slots {start}..{start + n} of an {what} of length {a.length}")
    return int(a.offset) + start


def _fixed(a: Any, i: int, base: int, n: int, dtype: str) -> np.ndarray:
    """``n`` values of ``dtype`` from slot ``base`` of buffer ``i``, copied."""
    item = np.dtype(dtype).itemsize
    if not n:
        return np.zeros(0, dtype)
    return np.frombuffer(a.buffer(i, (base + n) * item), dtype, count=n, offset=base * item).copy()


def _bits(a: Any, i: int, base: int, n: int) -> np.ndarray:
    """``n`` bits of buffer ``i`` from bit ``base``, as bools."""
    if not n:
        return np.zeros(0, bool)
    first, last = base // 8, (base + n + 7) // 8
    raw = np.frombuffer(a.buffer(i, last), np.uint8)[first:last]
    return np.unpackbits(raw, bitorder="little", count=(last - first) * 8)[base % 8:base % 8 + n].astype(bool)


def _mask(a: Any, base: int, n: int) -> np.ndarray | None:
    """The null mask (True = null) of ``n`` slots from absolute slot ``base``; None without nulls."""
    if a.null_count == 0 or a.n_buffers == 0 or not a.has_buffer(0):
        return None
    mask = ~_bits(a, 0, base, n)
    return mask if mask.any() else None


def _offsets(a: Any, base: int, n: int, large: bool, limit: int, what: str) -> np.ndarray:
    """``n + 1`` offsets from slot ``base`` as int64, checked: non-decreasing, from 0 up to ``limit``."""
    offs = _fixed(a, 1, base, n + 1, "=i8" if large else "=i4").astype(np.int64)
    if n and (int(offs[0]) < 0 or int(offs[-1]) > limit or bool((np.diff(offs) < 0).any())):
        raise SchemaError(f"Arrow C interface: {what} offsets decrease or point outside its {limit} entries")
    return offs if n else np.zeros(1, np.int64)


# -- conversion -------------------------------------------------------------------------------------------------

def _convert(f: ArrowField, a: Any, start: int, n: int, name: str | None = None, nullable: bool | None = None
             ) -> Column:
    """The column of ``n`` slots of Arrow array ``a`` from slot ``start``, field ``f`` (named ``name``)."""
    name = f.name if name is None else name
    nullable = f.nullable if nullable is None else nullable
    base = _check_range(a, start, n, f"array {name!r}")
    if f.dictionary is not None:
        return _dictionary(f, a, base, n, name, nullable)
    k = f.type.kind
    if k == "null":
        fld = Field(name, PhysicalType.INT32, LogicalType("UNKNOWN"), True)
        return Column(fld, np.zeros(n, np.int32), np.ones(n, bool) if n else None)
    mask = _mask(a, base, n)
    if mask is not None and not nullable:
        nullable = True  # Arrow allows it under a non-nullable field; keep the data
    if k in ("struct", "list", "large_list", "fixed_size_list", "list_view", "large_list_view", "map"):
        return _nested(f, a, base, n, name, nullable, mask)
    col = _flat(f, a, base, n, name, nullable, mask)
    ext = _EXTENSIONS.get(f.meta("ARROW:extension:name") or "")
    if ext is None:
        return col
    fld = make_field(name, ext, nullable=col.field.nullable)
    if fld.physical_type != col.field.physical_type or fld.type_length != col.field.type_length:
        raise SchemaError(f"column {name!r}: {f.meta('ARROW:extension:name')} over {k} has no Parquet mapping")
    return Column(fld, col.values, col.mask)


def _flat(f: ArrowField, a: Any, base: int, n: int, name: str, nullable: bool, mask: np.ndarray | None) -> Column:
    t, k = f.type, f.type.kind
    if k in ("utf8", "large_utf8", "binary", "large_binary", "utf8_view", "binary_view"):
        fld = make_field(name, "string" if "utf8" in k else "binary", nullable=nullable)
        strs = _views(a, base, n) if k.endswith("_view") else _binary(a, base, n, k.startswith("large"))
        return Column(fld, strs, mask)
    if k == "fixed_size_binary":
        w = t.width
        raw = _fixed(a, 1, base * w, n * w, "u1") if w else np.zeros(0, np.uint8)
        return Column(make_field(name, f"fixed[{w}]", nullable=nullable), raw.reshape(n, w), mask)
    if k == "decimal":
        return _decimal(f, a, base, n, name, nullable, mask)
    if k == "bool":
        vals: np.ndarray = _bits(a, 1, base, n)
    elif k == "int":
        vals = _fixed(a, 1, base, n, _NUMPY[("int", t.bit_width, t.signed)])
    elif k == "float":
        vals = _fixed(a, 1, base, n, _FLOATS[t.precision])
    elif k in ("timestamp", "time", "duration", "date"):
        return _temporal(f, a, base, n, name, nullable, mask)
    else:
        raise SchemaError(f"column {name!r}: Arrow type {k} is not supported")
    if mask is not None:
        vals[mask] = 0
    fld = infer_flat_field(name, vals).with_nullable(nullable)
    return Column(fld, physical_from_array(fld, vals), mask)


def _temporal(f: ArrowField, a: Any, base: int, n: int, name: str, nullable: bool, mask: np.ndarray | None
              ) -> Column:
    t, k = f.type, f.type.kind
    wide = k in ("timestamp", "duration") or (k == "date" and t.unit == 1) or (k == "time" and t.bit_width == 64)
    vals = _fixed(a, 1, base, n, "=i8" if wide else "=i4").astype(np.int64)
    if mask is not None:
        vals[mask] = 0
    if k == "duration":  # INT64 counts, as pyarrow stores them (the Arrow types keep the unit)
        return Column(make_field(name, "int64", nullable=nullable), vals, mask)
    if k == "date":
        if t.unit == 1:  # date64: milliseconds at midnight, stored as days (pyarrow refuses other values)
            if bool((vals % 86_400_000 != 0).any()):
                raise SchemaError(f"column {name!r}: a date64 value is not at midnight")
            vals = vals // 86_400_000
        return Column(make_field(name, "date", nullable=nullable), vals.astype(np.int32), mask)
    unit = TIME_UNITS[t.unit]
    if unit == "s":  # seconds are stored as milliseconds
        unit, vals = "ms", vals * 1000
    if k == "timestamp":
        fld = make_field(name, f"timestamp[{unit}{', UTC' if t.tz is not None else ''}]", nullable=nullable)
        return Column(fld, vals, mask)
    fld = make_field(name, f"time[{unit}]", nullable=nullable)
    return Column(fld, vals.astype(np.int32 if fld.physical_type == PhysicalType.INT32 else np.int64), mask)


def _binary(a: Any, base: int, n: int, large: bool) -> BinaryArray:
    if not n:
        return BinaryArray(np.zeros(1, np.int64), np.zeros(0, np.uint8))
    offs = _offsets(a, base, n, large, 2**63 - 1, "binary")
    end = int(offs[-1])
    data = np.frombuffer(a.buffer(2, end), np.uint8)[int(offs[0]):end].copy()
    return BinaryArray(offs - offs[0], data)


def _views(a: Any, base: int, n: int) -> BinaryArray:
    """Byte strings from Arrow's view layout (16-byte views: up to 12 bytes inline, else a buffer and offset)."""
    if not n:
        return BinaryArray(np.zeros(1, np.int64), np.zeros(0, np.uint8))
    views = _fixed(a, 1, base * 16, n * 16, "u1").reshape(n, 16)
    lens = views[:, 0:4].copy().view("=i4").reshape(-1).astype(np.int64)
    if bool((lens < 0).any()):
        raise SchemaError("Arrow C interface: a view of negative length")
    n_data = a.n_buffers - 3  # validity, views, the data buffers, then their sizes
    if n_data < 0:
        raise SchemaError(f"Arrow C interface: a view array with {a.n_buffers} buffers")
    sizes = np.frombuffer(a.buffer(a.n_buffers - 1, 8 * n_data), "=i8").astype(np.int64) if n_data else \
        np.zeros(0, np.int64)
    # every source as one byte space: the views themselves (inline values) first, then each data buffer
    starts_of = np.concatenate([[0], np.cumsum(np.concatenate([[n * 16], sizes]))]).astype(np.int64)
    spaces = [views.reshape(-1)] + [np.frombuffer(a.buffer(2 + i, int(sizes[i])), np.uint8) for i in range(n_data)]
    inline = lens <= 12
    if bool(inline.all()):  # every value inline: row-major order of the inline bytes is the values' order
        offsets = np.zeros(n + 1, np.int64)
        np.cumsum(lens, out=offsets[1:])
        return BinaryArray(offsets, views[:, 4:16][np.arange(12) < lens[:, None]])
    buf = views[:, 8:12].copy().view("=i4").reshape(-1).astype(np.int64)
    off = views[:, 12:16].copy().view("=i4").reshape(-1).astype(np.int64)
    src = np.where(inline, np.arange(n, dtype=np.int64) * 16 + 4, 0)
    long = ~inline
    if bool(long.any()):
        b, o, ln = buf[long], off[long], lens[long]
        if bool(((b < 0) | (b >= n_data)).any()) or bool(((o < 0) | (o + ln > sizes[np.clip(b, 0, max(n_data - 1, 0))])).any()):
            raise SchemaError("Arrow C interface: a view points outside its data buffers")
        src[long] = starts_of[b + 1] + o
    space = np.concatenate(spaces)
    offsets = np.zeros(n + 1, np.int64)
    np.cumsum(lens, out=offsets[1:])
    idx = np.repeat(src - offsets[:-1], lens) + np.arange(int(offsets[-1]), dtype=np.int64)
    return BinaryArray(offsets, space[idx])


def _decimal(f: ArrowField, a: Any, base: int, n: int, name: str, nullable: bool, mask: np.ndarray | None
             ) -> Column:
    t = f.type
    fld = make_field(name, f"decimal({t.precision}, {t.scale})", nullable=nullable)
    w = t.bit_width // 8
    words = _fixed(a, 1, base * w, n * w, "u1").reshape(n, w)
    if mask is not None:  # null slots may hold anything
        words[mask] = 0
    try:
        if fld.physical_type in (PhysicalType.INT32, PhysicalType.INT64):
            vals: Any = ints_from_words(words, 32 if fld.physical_type == PhysicalType.INT32 else 64)
        else:
            vals = big_endian_from_words(words, fld.type_length or w)
    except DecimalOverflow:
        raise SchemaError(f"column {name!r}: a value has more digits than decimal({t.precision}, {t.scale}) "
                          f"declares") from None
    return Column(fld, vals, mask)


def _dictionary(f: ArrowField, a: Any, base: int, n: int, name: str, nullable: bool) -> Column:
    """A dictionary-encoded column as its values plus its whole dictionary, in its order (see
    :func:`pqbloom.table.arrow._dictionary_from_arrow`)."""
    d = f.dictionary
    assert d is not None
    dict_node = a.dictionary()
    if dict_node is None:
        raise SchemaError(f"column {name!r}: a dictionary-encoded array without its dictionary")
    value_field = replace(f, dictionary=None, metadata=())
    values = _convert(value_field, dict_node, 0, dict_node.length, name, True)
    mask = _mask(a, base, n)
    codes = _fixed(a, 1, base, n, _NUMPY[("int", d.index_bit_width, d.index_signed)]).astype(np.int64)
    if mask is not None:
        codes[mask] = 0
    live = codes if mask is None else codes[~mask]
    if len(live) and (int(live.min()) < 0 or int(live.max()) >= len(values)):
        raise SchemaError(f"column {name!r}: a dictionary index outside its {len(values)} values")
    if isinstance(values, NestedColumn):
        raise SchemaError(f"column {name!r}: a dictionary of nested values is not supported")
    if not len(values):  # no values: every slot is null
        plain = Column(values.field.with_nullable(nullable or n > 0), _repeat_empty(values, n),
                       np.ones(n, bool) if n else None)
    else:
        taken = values.take(codes)
        full = taken.mask
        if mask is not None:
            full = mask if full is None else (full | mask)
        plain = Column(values.field.with_nullable(nullable or full is not None), taken.values, full)
    return with_dictionary(plain, [values.dense()])


def _repeat_empty(values: Column, n: int) -> Any:
    """``n`` placeholder values of ``values``' type (for an all-null column whose dictionary is empty)."""
    if isinstance(values.values, BinaryArray):
        return BinaryArray(np.zeros(n + 1, np.int64), np.zeros(0, np.uint8))
    v = np.asarray(values.values)
    return np.zeros((n, *v.shape[1:]), v.dtype)


def _nested(f: ArrowField, a: Any, base: int, n: int, name: str, nullable: bool, mask: np.ndarray | None
            ) -> Column:
    k = f.type.kind
    if k == "struct":
        if a.n_children != len(f.children):
            raise SchemaError(f"column {name!r}: {a.n_children} arrays for a struct of {len(f.children)}")
        kids = []
        for i, cf in enumerate(f.children):
            c = _convert(cf, a.child(i), base, n, cf.name, True)
            target = c.field.with_nullable(cf.nullable or (c.mask is not None and (
                mask is None or bool((c.mask & ~mask).any()))))
            kids.append(tighten(c, target, mask))
        return NestedColumn(nested_field(name, "struct", [c.field for c in kids], nullable=nullable), n, mask, kids)
    if a.n_children != 1 or len(f.children) != 1:
        raise SchemaError(f"column {name!r}: a {k} needs one child array")
    child = a.child(0)
    if k == "fixed_size_list":
        size = f.type.width
        raw = (np.arange(n + 1, dtype=np.int64) + base) * size
        if n and int(raw[-1]) > child.length:
            raise SchemaError(f"column {name!r}: {n} lists of {size} over {child.length} values")
    elif k in ("list_view", "large_list_view"):
        return _list_view(f, a, base, n, name, nullable, mask)
    else:
        raw = _offsets(a, base, n, k == "large_list", child.length, f"list {name!r}")
    first, count = int(raw[0]), int(raw[-1] - raw[0])
    offsets = raw - raw[0]
    if k == "map":
        ef = f.children[0]
        if child.n_children != 2 or len(ef.children) != 2:
            raise SchemaError(f"column {name!r}: map entries need a key and a value")
        ebase = _check_range(child, first, count, f"map {name!r}'s entries")
        kcol = _convert(ef.children[0], child.child(0), ebase, count, "key", False)
        vcol = _convert(ef.children[1], child.child(1), ebase, count, "value", True)
        vcol = tighten(vcol, vcol.field.with_nullable(ef.children[1].nullable or vcol.mask is not None), None)
        fld = nested_field(name, "map", [kcol.field, vcol.field], nullable=nullable)
        return NestedColumn(fld, n, mask, [kcol, vcol], offsets)
    return _list(f, n, name, nullable, mask, offsets, _convert(f.children[0], child, first, count, "element", True))


def _list(f: ArrowField, n: int, name: str, nullable: bool, mask: np.ndarray | None, offsets: np.ndarray,
          elem: Column) -> Column:
    elem = tighten(elem, elem.field.with_nullable(f.children[0].nullable or elem.mask is not None), None)
    return NestedColumn(nested_field(name, "list", [elem.field], nullable=nullable), n, mask, [elem], offsets)


def _list_view(f: ArrowField, a: Any, base: int, n: int, name: str, nullable: bool, mask: np.ndarray | None
               ) -> Column:
    """A list view (offsets and sizes, in any order) as a list: its elements gathered in slot order."""
    large = f.type.kind == "large_list_view"
    dt = "=i8" if large else "=i4"
    child = a.child(0)
    starts = _fixed(a, 1, base, n, dt).astype(np.int64)
    sizes = _fixed(a, 2, base, n, dt).astype(np.int64)
    if mask is not None:
        sizes[mask] = 0
    if n and (bool((starts < 0).any()) or bool((sizes < 0).any()) or bool((starts + sizes > child.length).any())):
        raise SchemaError(f"column {name!r}: a list view points outside its {child.length} values")
    offsets = np.zeros(n + 1, np.int64)
    np.cumsum(sizes, out=offsets[1:])
    elems = _convert(f.children[0], child, 0, child.length, "element", True)
    idx = np.repeat(starts - offsets[:-1], sizes) + np.arange(int(offsets[-1]), dtype=np.int64)
    return _list(f, n, name, nullable, mask, offsets, elems.take(idx))
