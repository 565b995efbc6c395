"""Columns out through the Arrow C Data Interface, without pyarrow: each column as the Arrow array
``to_arrow()`` makes of it (the same types and values; :mod:`pqbloom.table.outputs` is the reference), as an
:class:`Node` (an Arrow field plus the buffers, children and dictionary of its array), which
:mod:`pqbloom.arrow_c` exports as PyCapsules.

numpy buffers go out as they are (no copy) where pqbloom's layout is Arrow's: fixed-width values, fixed-size
binary, UTF-8 and binary data, int64 offsets (``large_*`` types), dates, times, timestamps, durations. A
conversion is made where it is not: validity bitmaps (pqbloom keeps a byte per null flag), booleans (bytes to
bits), int32 offsets of ``string`` / ``binary`` / ``list`` / ``map`` (pqbloom's are int64), decimals (to
Arrow's little-endian words), INT96 timestamps (to nanoseconds), unsigned or narrow integers stored wider,
views (``string_view``), and dictionary indices.

The Arrow types a table carries (:meth:`~pqbloom.table.table.Table.arrow_types`: time zones, durations,
dictionaries, large and view types) apply as ``to_arrow`` applies them with a pyarrow cast
(:func:`with_hint`); a consumer's ``requested_schema`` casts the same way (:func:`cast_node`), or raises
:class:`~pqbloom.errors.SchemaError` where no such cast exists here.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import numpy as np

from ..arrays import BinaryArray
from ..encodings import build_dictionary, encode_with_dictionary
from ..errors import CorruptFileError, SchemaError, UnsupportedError
from ..format.enums import PhysicalType
from ..kernels import decimals as decimal_kernels
from ..schema import Field, NestedField
from .arrow_c_types import index_type, schema_desc
from .arrow_schema import (
    TIME_UNITS,
    ArrowField,
    ArrowSchema,
    ArrowType,
    Dictionary,
    effective_field,
    int_type,
    natural_field,
    timestamp,
)
from .decimals import arrow_decimal_width
from .int96 import int96_to_ns
from .outputs import logical_numpy

__all__ = ["Node", "CannotCast", "column_node", "with_hint", "cast_node", "array_desc", "schema_desc", "validity"]

_EXT = "ARROW:extension:name"
_EXT_META = "ARROW:extension:metadata"
_INT32_MAX = 2**31 - 1


class CannotCast(Exception):
    """No cast of a node to an Arrow type here (``to_arrow`` keeps the type it has then, as pyarrow's
    failed cast leaves it)."""


class Node:
    """An Arrow array ready for export: its field, length, null count, buffers (numpy arrays or None),
    children and dictionary (a Node of the values), and ``source``: pqbloom's own values where a cast can
    use them (a :class:`~pqbloom.arrays.BinaryArray`, or a list's int64 offsets)."""

    __slots__ = ("field", "length", "null_count", "buffers", "children", "dictionary", "source", "mask")

    def __init__(self, field: ArrowField, length: int, null_count: int, buffers: tuple[Any, ...],
                 children: tuple[Node, ...] = (), dictionary: Node | None = None, source: Any = None,
                 mask: np.ndarray | None = None) -> None:
        self.field = field
        self.length = length
        self.null_count = null_count
        self.buffers = buffers
        self.children = children
        self.dictionary = dictionary
        self.source = source
        self.mask = mask

    def renamed(self, name: str, nullable: bool, metadata: tuple[tuple[str, str], ...] | None = None) -> Node:
        """This node under another field name, nullability and metadata (None: only its extension type's,
        which is part of its type)."""
        if metadata is None:
            metadata = tuple((k, v) for k, v in self.field.metadata if k in (_EXT, _EXT_META))
        f = replace(self.field, name=name, nullable=nullable, metadata=metadata)
        return Node(f, self.length, self.null_count, self.buffers, self.children, self.dictionary, self.source,
                    self.mask)


def array_desc(node: Node) -> tuple[Any, ...]:
    """The array description (:mod:`pqbloom.arrow_c`) of ``node``."""
    return (node.length, node.null_count, 0, node.buffers, tuple(array_desc(c) for c in node.children),
            None if node.dictionary is None else array_desc(node.dictionary))


# -- buffers ------------------------------------------------------------------------------------------------

def validity(mask: np.ndarray | None) -> tuple[np.ndarray | None, int]:
    """Arrow's validity bitmap of a null mask (True = null) and the null count; (None, 0) without nulls."""
    if mask is None:
        return None, 0
    nulls = int(np.count_nonzero(mask))
    if not nulls:
        return None, 0
    bits = np.packbits(mask, bitorder="little")
    np.invert(bits, out=bits)
    if len(mask) % 8:  # the padding bits past the last slot stay 0
        bits[-1] &= (1 << (len(mask) % 8)) - 1
    return bits, nulls


def _offsets32(offsets: np.ndarray) -> np.ndarray:
    """int64 offsets as Arrow's int32 ones (the caller checked that they fit)."""
    return np.ascontiguousarray(offsets, dtype=np.int32)


def _bytes(a: np.ndarray) -> np.ndarray:
    """A C-contiguous array (a view when ``a`` already is one)."""
    return np.ascontiguousarray(a)


# -- natural export: what to_arrow makes ------------------------------------------------------------------

def column_node(col: Any) -> Node:
    """The Arrow array ``col.to_arrow()`` makes (Column or NestedColumn), as a Node named after the column."""
    f = col.field
    if isinstance(f, NestedField):
        return _nested_node(col)
    return _flat_node(f, col.values, col.mask)


def _flat_node(f: Field, v: Any, mask: np.ndarray | None) -> Node:
    n = len(v)
    lt = f.logical_type
    kind = lt.kind if lt is not None else None
    p = f.physical_type
    name, nullable = f.name, f.nullable
    bits, nulls = validity(mask)
    if kind == "UNKNOWN":  # the Null logical type: every value is null, no buffers
        return Node(ArrowField(name, ArrowType("null"), nullable), n, n, ())
    if kind == "DECIMAL":
        return _decimal_node(f, v, bits, nulls, mask)
    if isinstance(v, BinaryArray):
        meta = ((_EXT_META, ""), (_EXT, "arrow.json")) if kind == "JSON" else ()
        return _binary_node(ArrowField(name, ArrowType("utf8" if kind in ("STRING", "JSON", "ENUM") else "binary"),
                                       nullable, metadata=meta), v, mask)
    if p == PhysicalType.FIXED_LEN_BYTE_ARRAY and kind != "FLOAT16":
        w = f.type_length or 0
        meta = ((_EXT_META, ""), (_EXT, "arrow.uuid")) if kind == "UUID" else ()
        return Node(ArrowField(name, ArrowType("fixed_size_binary", width=w), nullable, metadata=meta), n, nulls,
                    (bits, _bytes(v)), mask=mask)
    if p == PhysicalType.BOOLEAN:
        return Node(ArrowField(name, ArrowType("bool"), nullable), n, nulls,
                    (bits, np.packbits(np.asarray(v, bool), bitorder="little")), mask=mask)
    data = v
    if kind == "DATE":
        t = ArrowType("date", unit=0)
    elif kind == "TIMESTAMP":
        t = timestamp(lt.unit, "UTC" if lt.utc else None)  # type: ignore[union-attr, arg-type]
    elif p == PhysicalType.INT96:
        t, data = timestamp("ns"), int96_to_ns(v, mask, f.name)
    elif kind == "TIME":
        t = ArrowType("time", unit=TIME_UNITS.index(lt.unit), bit_width=32 if p == PhysicalType.INT32 else 64)  # type: ignore[union-attr, arg-type]
    elif kind == "FLOAT16":
        t = ArrowType("float", precision=0)
    elif kind == "INTEGER":
        data = logical_numpy(f, v)
        t = int_type(data.dtype.itemsize * 8, data.dtype.kind == "i")
    else:
        t = _numpy_type(np.asarray(v).dtype, f.name)
    return Node(ArrowField(name, t, nullable), n, nulls, (bits, _bytes(data)), mask=mask)


def _binary_node(f: ArrowField, v: BinaryArray, mask: np.ndarray | None) -> Node:
    """Byte strings as ``f``'s type (utf8 or binary), or its large type past 2 GiB of data, as ``to_arrow``
    makes them."""
    c = v.compact()
    bits, nulls = validity(mask)
    big = c.nbytes >= 2**31
    t = ArrowType("large_" + f.type.kind) if big else f.type
    offs = c.offsets if big else (np.zeros(len(c) + 1, np.int32) if not c.nbytes else _offsets32(c.offsets))
    return Node(replace(f, type=t), len(c), nulls, (bits, offs, c.data), source=c, mask=mask)


def _numpy_type(dt: np.dtype, name: str) -> ArrowType:
    """The Arrow type of a numpy dtype, as ``pyarrow.from_numpy_dtype`` gives it for the physical dtypes."""
    if dt.kind in "iu":
        return int_type(dt.itemsize * 8, dt.kind == "i")
    if dt.kind == "f" and dt.itemsize in (2, 4, 8):
        return ArrowType("float", precision={2: 0, 4: 1, 8: 2}[dt.itemsize])
    raise UnsupportedError(f"column {name!r}: values of dtype {dt} have no Arrow type here")


def _decimal_node(f: Field, v: Any, bits: Any, nulls: int, mask: np.ndarray | None) -> Node:
    """A DECIMAL column as Arrow's decimal128 / decimal256 words, as ``to_arrow`` makes them."""
    n = len(v)
    lt = f.logical_type
    assert lt is not None
    precision, scale = lt.precision or 0, lt.scale or 0
    width = arrow_decimal_width(precision)
    if width is None:
        raise UnsupportedError(f"column {f.name!r}: DECIMAL({precision}, {scale}) has more digits than Arrow's "
                               f"decimal types hold (76); read it with to_pylist()")
    if isinstance(v, BinaryArray):
        src: Any = v
    elif f.physical_type == PhysicalType.FIXED_LEN_BYTE_ARRAY:
        src = np.asarray(v, dtype=np.uint8).reshape(n, f.type_length or 0)
    else:
        a = np.asarray(v)
        src = a if a.dtype in (np.dtype(np.int32), np.dtype(np.int64)) else a.astype(np.int64)
    try:
        words = decimal_kernels.decimal_buffer(src, width)
    except CorruptFileError:
        raise UnsupportedError(f"column {f.name!r}: a DECIMAL({precision}, {scale}) value needs more than the "
                               f"{width} bytes of Arrow's decimal{8 * width}") from None
    t = ArrowType("decimal", precision=precision, scale=scale, bit_width=8 * width)
    return Node(ArrowField(f.name, t, f.nullable), n, nulls, (bits, _bytes(words)), mask=mask)


def _nested_node(col: Any) -> Node:
    f = col.field
    n = len(col)
    kids = tuple(column_node(c) for c in col.children)
    bits, nulls = validity(col.mask)
    if col.kind == "struct":
        af = ArrowField(f.name, ArrowType("struct"), f.nullable, tuple(k.field for k in kids))
        return Node(af, n, nulls, (bits,), kids, mask=col.mask)
    offsets = col.offsets
    if col.kind == "list":
        large = int(offsets[-1]) >= _INT32_MAX
        t = ArrowType("large_list" if large else "list")
        offs = _bytes(offsets) if large else _offsets32(offsets)
        return Node(ArrowField(f.name, t, f.nullable, (kids[0].field,)), n, nulls, (bits, offs), kids,
                    source=offsets, mask=col.mask)
    key = kids[0].renamed(kids[0].field.name, False, kids[0].field.metadata)
    entries = Node(ArrowField("entries", ArrowType("struct"), False, (key.field, kids[1].field)), key.length,
                   0, (None,), (key, kids[1]))
    return Node(ArrowField(f.name, ArrowType("map"), f.nullable, (entries.field,)), n, nulls,
                (bits, _offsets32(offsets)), (entries,), mask=col.mask)


# -- Arrow types applied: pyarrow's casts, for the ones to_arrow needs --------------------------------------

def with_hint(col: Any, node: Node, hints: ArrowSchema | None) -> Node:
    """``node`` (of column ``col``) with the Arrow type ``hints`` give it, as ``to_arrow`` applies it (see
    :func:`pqbloom.table.arrow.apply_arrow_type`): unchanged where there is nothing to apply or no cast."""
    hint = hints.field(col.field.name) if hints is not None else None
    if hint is None:
        return node
    n = natural_field(col.field, written=False)
    if n is None:
        return node
    eff = effective_field(n, hint)
    if eff == n:
        return node
    dictionary = getattr(col, "dictionary", None)
    if eff.dictionary is not None and dictionary is not None:
        return _categorical(col, node, dictionary, eff)
    try:
        return cast_node(node, eff)
    except CannotCast:
        return node


def _categorical(col: Any, node: Node, dictionary: Any, eff: ArrowField) -> Node:
    """A column with its own dictionary (a categorical's categories, used or not) as Arrow's dictionary
    array: the dictionary whole and in its order, indices of the stored index type (int32 when they do
    not fit it)."""
    values = _flat_node(col.field.with_nullable(True), dictionary, None)
    try:
        values = cast_node(values, replace(eff, name="", nullable=True, dictionary=None, metadata=()))
    except CannotCast:
        pass
    codes = np.full(len(col), 0, np.int64)
    got = encode_with_dictionary(dictionary, col.dense(), col.field.physical_type)
    if got is None:
        raise SchemaError(f"column {col.field.name!r}: values outside its dictionary")
    codes[~col.mask if col.mask is not None else slice(None)] = got[1]
    d = eff.dictionary
    assert d is not None
    if not _fits(codes, index_type(d)):
        d = Dictionary(d.id, 32, True, d.ordered)
    return _dictionary_node(node, values, codes, d)


def _fits(codes: np.ndarray, t: ArrowType) -> bool:
    info = np.iinfo(f"{'i' if t.signed else 'u'}{t.bit_width // 8}")
    return not len(codes) or (int(codes.min()) >= info.min and int(codes.max()) <= info.max)


def _dictionary_node(node: Node, values: Node, codes: np.ndarray, d: Dictionary) -> Node:
    it = index_type(d)
    idx = codes.astype(f"{'i' if it.signed else 'u'}{it.bit_width // 8}")
    bits, nulls = validity(node.mask)
    f = replace(node.field, type=values.field.type, children=values.field.children, dictionary=d)
    return Node(f, node.length, nulls, (bits, idx), (), values.renamed("", True, ()), mask=node.mask)


def cast_node(node: Node, target: ArrowField) -> Node:
    """``node`` cast to ``target``'s type (its members named, nullable and with metadata as ``target``'s), for
    the casts the Arrow types of a table need and a consumer may ask for: a time zone, INT64 counts as
    durations, string and binary to their large or view types (or string as binary), lists to large lists,
    binary-like values to a dictionary; members of structs, lists and maps cast likewise. Raises
    :class:`CannotCast` for any other."""
    return _cast_type(node, target).renamed(target.name, target.nullable, target.metadata)


def _cast_type(node: Node, target: ArrowField) -> Node:
    src, dst = node.field.type, target.type
    if target.dictionary is not None:
        if node.field.dictionary is not None:
            if node.field.dictionary != target.dictionary or src != dst:
                raise CannotCast
            return node
        return _encode(node, target)
    if node.field.dictionary is not None:
        raise CannotCast
    if node.children or target.children:
        return _cast_nested(node, target)
    if src == dst:
        return node
    k, dk = src.kind, dst.kind
    if k == "timestamp" and dk == "timestamp" and src.unit == dst.unit:
        return _retyped(node, dst)
    if k == "int" and src.bit_width == 64 and src.signed and dk == "duration":
        return _retyped(node, dst)
    if k in ("utf8", "large_utf8", "binary", "large_binary") and isinstance(node.source, BinaryArray) and (
            dk in ("binary", "large_binary", "binary_view") or (
                k in ("utf8", "large_utf8") and dk in ("utf8", "large_utf8", "utf8_view"))):
        return _binary_as(node, dst)
    raise CannotCast


def _retyped(node: Node, t: ArrowType) -> Node:
    return Node(replace(node.field, type=t), node.length, node.null_count, node.buffers, node.children,
                node.dictionary, node.source, node.mask)


def _binary_as(node: Node, t: ArrowType) -> Node:
    c: BinaryArray = node.source
    bits = node.buffers[0]
    if t.kind in ("large_utf8", "large_binary"):  # pqbloom's own int64 offsets: no copy
        buffers: tuple[Any, ...] = (bits, _bytes(c.offsets), c.data)
    elif t.kind in ("utf8", "binary"):
        if c.nbytes > _INT32_MAX:
            raise CannotCast
        buffers = (bits, _offsets32(c.offsets), c.data)
    else:
        buffers = (bits, *_views(c))
    return Node(replace(node.field, type=t), node.length, node.null_count, buffers, source=c, mask=node.mask)


def _views(c: BinaryArray) -> tuple[np.ndarray, ...]:
    """Arrow's view layout of ``c``: 16-byte views (length, then up to 12 bytes inline, else a 4-byte prefix,
    buffer 0 and the offset into it), the data as the one variadic buffer, and its size."""
    if c.nbytes > _INT32_MAX:
        raise CannotCast
    n = len(c)
    starts = c.offsets[:-1]
    lens = np.diff(c.offsets)
    views = np.zeros((n, 16), np.uint8)
    views[:, 0:4] = lens.astype("=i4").view(np.uint8).reshape(n, 4)
    long = lens > 12
    for j in range(12):  # inline bytes (short values) and the 4-byte prefix (long ones), a position at a time
        rows = np.flatnonzero((lens > j) & (~long if j >= 4 else True))
        views[rows, 4 + j] = c.data[starts[rows] + j]
    rows = np.flatnonzero(long)
    views[rows, 12:16] = starts[rows].astype("=i4").view(np.uint8).reshape(-1, 4)  # buffer index 0 stays 0
    return views.reshape(-1), c.data, np.array([len(c.data)], np.int64)


def _encode(node: Node, target: ArrowField) -> Node:
    """A binary-like node dictionary-encoded as a pyarrow cast to a dictionary type does it: the distinct
    values in order of first appearance, indices of the target's index type."""
    c = node.source
    if not isinstance(c, BinaryArray) or node.children:
        raise CannotCast
    d = target.dictionary
    assert d is not None
    keep = ~node.mask if node.mask is not None else None
    dense = c if keep is None else c.filter(keep)
    values, dense_codes = build_dictionary(dense, PhysicalType.BYTE_ARRAY)
    codes = np.zeros(node.length, np.int64)
    codes[keep if keep is not None else slice(None)] = dense_codes
    if not _fits(codes, index_type(d)):
        raise CannotCast
    text = node.field.type.kind in ("utf8", "large_utf8")
    vnode = _binary_node(ArrowField("", ArrowType("utf8" if text else "binary")), values, None)
    vnode = cast_node(vnode, ArrowField("", target.type, True))
    return _dictionary_node(node, vnode, codes, d)


def _cast_nested(node: Node, target: ArrowField) -> Node:
    src, dst = node.field.type, target.type
    if len(node.children) != len(target.children):
        raise CannotCast
    if src.kind == "struct" and dst.kind == "struct":
        if [c.field.name for c in node.children] != [c.name for c in target.children]:
            raise CannotCast
        kids = tuple(cast_node(c, t) for c, t in zip(node.children, target.children))
        return Node(replace(node.field, type=dst, children=tuple(k.field for k in kids)), node.length,
                    node.null_count, node.buffers, kids, mask=node.mask)
    if src.kind in ("list", "large_list") and dst.kind in ("list", "large_list"):
        kid = cast_node(node.children[0], target.children[0])
        offsets = node.source
        if dst.kind == src.kind:
            buffers = node.buffers
        elif dst.kind == "large_list":
            buffers = (node.buffers[0], _bytes(np.asarray(offsets, np.int64)))
        else:
            if int(offsets[-1]) > _INT32_MAX:
                raise CannotCast
            buffers = (node.buffers[0], _offsets32(offsets))
        return Node(replace(node.field, type=dst, children=(kid.field,)), node.length, node.null_count, buffers,
                    (kid,), source=offsets, mask=node.mask)
    if src.kind == "map" and dst.kind == "map":
        entries, te = node.children[0], target.children[0]
        if len(entries.children) != 2 or len(te.children) != 2:
            raise CannotCast
        kids = tuple(cast_node(c, t) for c, t in zip(entries.children, te.children))
        ent = Node(replace(te, children=tuple(k.field for k in kids), dictionary=None), entries.length, 0,
                   (None,), kids)
        return Node(replace(node.field, type=dst, children=(ent.field,)), node.length, node.null_count,
                    node.buffers, (ent,), mask=node.mask)
    raise CannotCast

