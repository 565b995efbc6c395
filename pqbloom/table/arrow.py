"""The Arrow bridge, inward: columns from pyarrow arrays (flat and nested, extension and dictionary types,
decimals converted with numpy), as pyarrow writes the same data to Parquet; and, outward, the Arrow types a
table carries (from pyarrow, pandas or a file's ``ARROW:schema``) applied to its pyarrow arrays. The
arrays themselves are made by :mod:`pqbloom.table.outputs`. pyarrow is imported only when these run.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..arrays import BinaryArray
from ..errors import SchemaError
from ..format.enums import PhysicalType
from ..schema import MAX_SCHEMA_DEPTH, Field, LogicalType, make_field, nested_field
from .arrow_schema import TIME_UNITS, ArrowField, ArrowSchema, effective_field, natural_field, to_pyarrow_type
from .build import infer_flat_field, physical_from_array, tighten
from .column import Column, NestedColumn, dictionary_codes, nested_pylist, with_dictionary
from .decimals import DecimalOverflow, big_endian_from_words, ints_from_words
from .outputs import durations_to_py, in_zone, zone_info

__all__ = ["column_from_arrow", "column_from_arrow_field", "arrow_column", "is_arrow_nested", "arrow_type_depth",
           "apply_arrow_type", "typed_pylist", "hinted_pylist", "column_arrow_field"]


def arrow_column(afield: Any, arr: Any) -> Column:
    """A column from one column of a pyarrow table (its field and chunked array), as ``Table.from_arrow``
    takes it: durations, at any depth, become their INT64 counts (the table's Arrow schema keeps the unit)."""
    return column_from_arrow_field(afield, arr)


def is_arrow_nested(t: Any) -> bool:
    """Whether a pyarrow type is a struct, list (of any layout) or map."""
    import pyarrow.types as pat

    return bool(pat.is_struct(t) or pat.is_list(t) or pat.is_large_list(t) or pat.is_map(t)
                or pat.is_fixed_size_list(t) or (hasattr(pat, "is_list_view") and (pat.is_list_view(t)
                                                                                    or pat.is_large_list_view(t))))


def arrow_type_depth(t: Any) -> int:
    """Schema levels (the root not counted) an Arrow type is written as; a loop, not recursion."""
    import pyarrow as pa

    deepest = 0
    todo = [(t, 1)]
    while todo:
        u, depth = todo.pop()
        deepest = max(deepest, depth)
        if isinstance(u, pa.StructType):
            todo.extend((u.field(i).type, depth + 1) for i in range(u.num_fields))
        elif isinstance(u, pa.MapType):
            todo.extend([(u.key_type, depth + 2), (u.item_type, depth + 2)])
        elif hasattr(u, "value_type") and is_arrow_nested(u):
            todo.append((u.value_type, depth + 2))
        elif isinstance(u, pa.DictionaryType):
            todo.append((u.value_type, depth))
    return deepest


def column_from_arrow(arr: Any, name: str, nullable: bool = True) -> Column:
    """A column from a pyarrow array (nested or flat); list elements are named ``element``."""
    import pyarrow as pa
    import pyarrow.types as pat

    if isinstance(arr, pa.ChunkedArray):
        arr = arr.combine_chunks()
    t = arr.type
    n = len(arr)
    if not is_arrow_nested(t):
        if pat.is_null(t):  # stored as Arrow does: INT32 with the Null (UNKNOWN) logical type
            f = Field(name, PhysicalType.INT32, LogicalType("UNKNOWN"), True)
            return Column(f, np.zeros(n, np.int32), np.ones(n, bool) if n else None)
        return column_from_arrow_field(pa.field(name, t, nullable), arr)
    mask = arr.is_null().to_numpy(zero_copy_only=False) if arr.null_count else None
    if mask is not None and not nullable:
        nullable = True  # Arrow allows it under a non-nullable field; keep the data
    if pat.is_struct(t):
        kids = []
        for i in range(t.num_fields):
            cf = t.field(i)
            c = column_from_arrow(arr.field(i), cf.name, True)
            target = c.field.with_nullable(cf.nullable or (c.mask is not None and (
                mask is None or bool((c.mask & ~mask).any()))))
            kids.append(tighten(c, target, mask))
        fld = nested_field(name, "struct", [k.field for k in kids], nullable=nullable)
        return NestedColumn(fld, n, mask, kids)
    if hasattr(pat, "is_list_view") and (pat.is_list_view(t) or pat.is_large_list_view(t)):
        arr = arr.cast(pa.large_list(t.value_field))
        t = arr.type
    if pat.is_fixed_size_list(t):
        size = t.list_size
        raw_off = (np.arange(n + 1, dtype=np.int64) + arr.offset) * size
        values = arr.values
    else:
        raw_off = np.asarray(arr.offsets, dtype=np.int64)
        values = arr.values
    starts = raw_off[:-1]
    raw_lens = np.diff(raw_off)
    lens = raw_lens if mask is None else np.where(mask, 0, raw_lens)
    offsets = np.zeros(n + 1, np.int64)
    np.cumsum(lens, out=offsets[1:])
    total = int(offsets[-1])
    if mask is None or not bool((raw_lens[mask] > 0).any()):
        child_arr = values.slice(int(raw_off[0]) if n else 0, int(raw_off[-1] - raw_off[0]) if n else 0)
    else:  # null slots backed by non-empty ranges: drop those elements
        src = np.repeat(starts, lens) + (np.arange(total, dtype=np.int64) - np.repeat(offsets[:-1], lens))
        child_arr = values.take(pa.array(src, pa.int64()))
    if pat.is_map(t):
        kf, itf = t.key_field, t.item_field
        kcol = column_from_arrow(child_arr.field(0), "key", False)
        vcol = column_from_arrow(child_arr.field(1), "value", True)
        vcol = tighten(vcol, vcol.field.with_nullable(itf.nullable or vcol.mask is not None), None)
        del kf
        fld = nested_field(name, "map", [kcol.field, vcol.field], nullable=nullable)
        return NestedColumn(fld, n, mask, [kcol, vcol], offsets)
    vf = t.value_field
    child = column_from_arrow(child_arr, "element", True)
    child = tighten(child, child.field.with_nullable(vf.nullable or child.mask is not None), None)
    fld = nested_field(name, "list", [child.field], nullable=nullable)
    return NestedColumn(fld, n, mask, [child], offsets)


def column_from_arrow_field(afield: Any, chunked: Any) -> Column:
    """A column from a pyarrow array or chunked array (flat or nested) and its pyarrow field."""
    import pyarrow as pa
    import pyarrow.types as pat

    arr = chunked.combine_chunks() if hasattr(chunked, "combine_chunks") else chunked
    t = arr.type
    if is_arrow_nested(t) or pa.types.is_null(t):
        if arrow_type_depth(t) + 1 > MAX_SCHEMA_DEPTH:  # conversion recurses once per level
            raise SchemaError(f"column {afield.name!r} is nested {arrow_type_depth(t) + 1:,} levels deep; "
                              f"pqbloom reads and writes at most {MAX_SCHEMA_DEPTH}")
        return column_from_arrow(arr, afield.name, afield.nullable)
    name = afield.name
    nullable = afield.nullable
    if isinstance(t, pa.BaseExtensionType):
        return _extension_from_arrow(afield, arr)
    if pat.is_string_view(t) or pat.is_binary_view(t):  # the same values in the offsets layout
        arr = arr.cast(pa.large_string() if pat.is_string_view(t) else pa.large_binary())
        return column_from_arrow_field(pa.field(name, arr.type, nullable), arr)
    if pat.is_duration(t):  # INT64 counts of the unit, as pyarrow stores them (the Arrow schema keeps the unit)
        return column_from_arrow_field(pa.field(name, pa.int64(), nullable), arr.cast(pa.int64()))
    if pat.is_date64(t):  # milliseconds at midnight; Parquet's DATE counts days, as pyarrow writes it
        return column_from_arrow_field(pa.field(name, pa.date32(), nullable), arr.cast(pa.date32()))
    mask = arr.is_null().to_numpy(zero_copy_only=False) if arr.null_count else None
    if pat.is_string(t) or pat.is_large_string(t) or pat.is_binary(t) or pat.is_large_binary(t):
        fld = make_field(name, "string" if (pat.is_string(t) or pat.is_large_string(t)) else "binary", nullable=nullable)
        bufs = arr.buffers()
        odt = np.int64 if (pat.is_large_string(t) or pat.is_large_binary(t)) else np.int32
        offs = np.frombuffer(bufs[1], dtype=odt)[arr.offset:arr.offset + len(arr) + 1].astype(np.int64)
        data = np.frombuffer(bufs[2], dtype=np.uint8) if bufs[2] is not None else np.zeros(0, np.uint8)
        return Column(fld, BinaryArray(offs, data).compact(), mask)
    if pat.is_fixed_size_binary(t):
        fld = make_field(name, f"fixed[{t.byte_width}]", nullable=nullable)
        raw = np.frombuffer(arr.buffers()[1], np.uint8)[arr.offset * t.byte_width:(arr.offset + len(arr)) * t.byte_width]
        return Column(fld, raw.reshape(len(arr), t.byte_width), mask)
    if pat.is_decimal(t):
        return _decimal_from_arrow(name, nullable, arr, mask)
    if pat.is_timestamp(t):
        spec = f"timestamp[{t.unit}{', UTC' if t.tz is not None else ''}]"
        fld = make_field(name, spec if t.unit != "s" else spec.replace("[s", "[ms"), nullable=nullable)
        vals = arr.cast(pa.int64()).fill_null(0).to_numpy()
        if t.unit == "s":
            vals = vals * 1000
        return Column(fld, vals.astype(np.int64), mask)
    if pat.is_date32(t):
        fld = make_field(name, "date", nullable=nullable)
        return Column(fld, arr.cast(pa.int32()).fill_null(0).to_numpy().astype(np.int32), mask)
    if pat.is_time32(t) or pat.is_time64(t):
        unit = t.unit if t.unit != "s" else "ms"
        fld = make_field(name, f"time[{unit}]", nullable=nullable)
        vals = arr.cast(pa.int64() if pat.is_time64(t) else pa.int32()).fill_null(0).to_numpy()
        if t.unit == "s":
            vals = vals * 1000
        return Column(fld, vals.astype(np.int32 if fld.physical_type == PhysicalType.INT32 else np.int64), mask)
    if pat.is_boolean(t) or pat.is_integer(t) or pat.is_floating(t):
        np_vals = arr.fill_null(False if pat.is_boolean(t) else 0).to_numpy(zero_copy_only=False)
        fld = infer_flat_field(name, np_vals).with_nullable(nullable)
        return Column(fld, physical_from_array(fld, np_vals), mask)
    if pat.is_dictionary(t):
        return _dictionary_from_arrow(pa.field(name, t.value_type, nullable), arr)
    raise SchemaError(f"column {name!r}: pyarrow type {t} is not supported")


def _dictionary_from_arrow(value_field: Any, arr: Any) -> Column:
    """A dictionary-encoded column as its values plus its whole dictionary, unused values and order kept
    (a categorical's categories: pyarrow writes them all to the dictionary page, and reads them back as
    the categories, in that order, which an ordered categorical's comparisons depend on)."""
    import pyarrow as pa

    plain = column_from_arrow_field(value_field, arr.dictionary_decode())
    if type(plain) is not Column:
        return plain
    values = column_from_arrow_field(pa.field(value_field.name, value_field.type, True), arr.dictionary)
    if type(values) is not Column or values.field.physical_type != plain.field.physical_type \
            or values.field.type_length != plain.field.type_length:
        return plain
    # the dictionary first, in its order (a value it lists twice, or a null in it, is kept once, or not)
    return with_dictionary(plain, [values.dense()])


#: Arrow extension types that map to a Parquet annotation, as pyarrow writes them
_EXTENSION_ANNOTATIONS = {"arrow.uuid": "uuid", "arrow.json": "json"}


def _extension_from_arrow(afield: Any, arr: Any) -> Column:
    """An Arrow extension column: ``arrow.uuid`` becomes UUID and ``arrow.json`` JSON (as pyarrow writes
    them); any other extension type (``arrow.bool8``, ``arrow.opaque``, ...) is written as its storage type
    without an annotation, which is also what pyarrow writes for those."""
    import pyarrow as pa

    t = arr.type
    storage = column_from_arrow_field(pa.field(afield.name, t.storage_type, afield.nullable), arr.storage)
    spec = _EXTENSION_ANNOTATIONS.get(t.extension_name)
    if spec is None:
        return storage
    fld = make_field(afield.name, spec, nullable=storage.field.nullable)
    if fld.physical_type != storage.field.physical_type or fld.type_length != storage.field.type_length:
        raise SchemaError(f"column {afield.name!r}: {t.extension_name} over {t.storage_type} has no Parquet mapping")
    return Column(fld, storage.values, storage.mask)


def _decimal_from_arrow(name: str, nullable: bool, arr: Any, mask: np.ndarray | None) -> Column:
    """An Arrow decimal column as DECIMAL(p, s) in the physical type pqbloom picks for p (INT32 up to 9
    digits, INT64 up to 18, else the narrowest FIXED_LEN_BYTE_ARRAY), converted with numpy."""
    t = arr.type
    fld = make_field(name, f"decimal({t.precision}, {t.scale})", nullable=nullable)
    w = t.byte_width
    n = len(arr)
    buf = arr.buffers()[1]
    words = (np.frombuffer(buf, np.uint8)[arr.offset * w:(arr.offset + n) * w] if buf is not None
             else np.zeros(0, np.uint8)).reshape(n, w)
    if mask is not None:  # null slots may hold anything
        words = words.copy()
        words[mask] = 0
    try:
        if fld.physical_type in (PhysicalType.INT32, PhysicalType.INT64):
            vals: Any = ints_from_words(words, 32 if fld.physical_type == PhysicalType.INT32 else 64)
        else:
            vals = big_endian_from_words(words, fld.type_length or w)
    except DecimalOverflow:
        raise SchemaError(f"column {name!r}: a value has more digits than {t} declares") from None
    return Column(fld, vals, mask)


def apply_arrow_type(col: Column, arr: Any, hints: ArrowSchema) -> Any:
    """A column's pyarrow array with the Arrow type pyarrow reads for it from the same file (time
    zone, duration, dictionary...); the array unchanged where there is nothing to apply."""
    import pyarrow as pa

    hint = hints.field(col.field.name)
    n = natural_field(col.field, written=False) if hint is not None else None
    if n is None or hint is None:
        return arr
    eff = effective_field(n, hint)
    if eff == n:
        return arr
    target = to_pyarrow_type(eff)
    if pa.types.is_dictionary(target):
        dictionary = getattr(col, "dictionary", None)
        if dictionary is not None:
            dict_arr = Column(col.field.with_nullable(True), dictionary).to_arrow()
            codes = pa.array(dictionary_codes(col, dictionary), type=pa.int32(), mask=col.mask)
            try:  # the stored index type, as pyarrow reads it (int32 when the codes do not fit it)
                codes = codes.cast(target.index_type)
            except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
                target = pa.dictionary(pa.int32(), target.value_type, target.ordered)
            return pa.DictionaryArray.from_arrays(codes, dict_arr.cast(target.value_type), ordered=target.ordered)
    try:
        return arr.cast(target)
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError, pa.ArrowTypeError):
        return arr  # not a type these values can take: keep the Parquet-derived one


def _typed(f: ArrowField) -> bool:
    """Whether ``f`` holds (itself or in a member) values whose Python form its Arrow type decides:
    timestamps of a zone other than UTC, durations."""
    t = f.type
    return (t.kind == "timestamp" and t.tz not in (None, "UTC")) or t.kind == "duration" \
        or any(_typed(c) for c in f.children)


def _member_fields(col: NestedColumn, f: ArrowField | None) -> list[ArrowField | None]:
    """The Arrow fields of ``col``'s child columns, from ``f`` (the effective field of ``col``, whose
    children follow the column's: a map's are its entries' key and value)."""
    n = len(col.children)
    if f is None:
        return [None] * n
    kids: tuple[ArrowField, ...] = f.children
    if col.kind == "map":
        kids = f.children[0].children if len(f.children) == 1 else ()
    return list(kids) if len(kids) == n else [None] * n


def typed_pylist(col: Column, f: ArrowField | None, maps_as_pydicts: str | None = None) -> list[Any]:
    """``col``'s Python values with its Arrow field ``f`` applied (at any depth), as pyarrow's ``to_pylist``
    gives a column of that type: timestamps of a zone in that zone (the same instants), durations as
    ``datetime.timedelta`` (``pandas.Timedelta`` for nanoseconds); maps as ``maps_as_pydicts`` asks
    (:meth:`NestedColumn.to_pylist`)."""
    if f is None or not _typed(f):
        return col.to_pylist(maps_as_pydicts=maps_as_pydicts)
    if isinstance(col, NestedColumn):
        kids = [typed_pylist(c, h, maps_as_pydicts) for c, h in zip(col.children, _member_fields(col, f))]
        return nested_pylist(col, kids, maps_as_pydicts)
    t = f.type
    if t.kind == "duration" and col.field.physical_type == PhysicalType.INT64 and col.field.logical_type is None:
        return durations_to_py(col.field.name, col.values, TIME_UNITS[t.unit], col.mask)
    vals = col.to_pylist()
    if t.kind == "timestamp" and t.tz not in (None, "UTC"):
        return in_zone(vals, zone_info(t.tz))
    return vals


def column_arrow_field(col: Column, hints: ArrowSchema | None) -> ArrowField | None:
    """The Arrow field pyarrow reads for ``col`` given the Arrow types ``hints`` (None: unknown)."""
    n = natural_field(col.field, written=False)
    if n is None:
        return None
    return effective_field(n, hints.field(col.field.name) if hints is not None else None)


def hinted_pylist(col: Column, hints: ArrowSchema | None, maps_as_pydicts: str | None = None) -> list[Any]:
    """``col.to_pylist()`` with the Arrow types ``hints`` (a file's ``ARROW:schema``, or the pandas or pyarrow
    data the table came from) applied, as pyarrow's ``to_pylist`` gives the same column: a
    ``timestamp[..., tz=Europe/Paris]`` in that zone, a ``duration[ms]`` as ``timedelta`` (pqbloom's own
    Python values of a UTC-adjusted timestamp are in UTC, of a duration its INT64 count)."""
    if hints is None:
        return col.to_pylist(maps_as_pydicts=maps_as_pydicts)
    return typed_pylist(col, column_arrow_field(col, hints), maps_as_pydicts)
