"""Inputs -> physical: columns from Python values, numpy arrays and masked arrays, flat or nested, and the
types inferred for them.

Values become their Parquet *physical* representation (see :mod:`pqbloom.arrays`); None, NaN-less nulls
(pandas' NA and NaT, numpy's NaT, masked entries) become the null mask. Python lists and dicts become
list and struct columns (:func:`column_from_pylist`); a column may be relabelled with a compatible field
(:func:`conform`), checking nullability all the way down.
"""

from __future__ import annotations

import datetime as _dt
import decimal
import itertools
import uuid
from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import Any

import numpy as np

from ..arrays import BinaryArray
from ..errors import SchemaError
from ..format.enums import PhysicalType, numpy_dtype
from ..schema import MAX_SCHEMA_DEPTH, Field, NestedField, make_field, nested_field
from .arrow_schema import ArrowField, with_durations
from .column import Column, NestedColumn
from .outputs import DECIMAL_CONTEXT

__all__ = ["column_from_values", "column_from_pylist", "nested_column", "infer_field", "infer_flat_field", "looks_nested",
           "physical_from_array", "as_durations", "timestamps_to_int96", "conform", "tighten", "with_field",
           "null_column", "empty_column", "empty_values"]

_UNIT_PER_S = {"ms": 1_000, "us": 1_000_000, "ns": 1_000_000_000}


# ---------------------------------------------------------------------------
# flat values
# ---------------------------------------------------------------------------
def _is_na(v: Any) -> bool:
    if v is None:
        return True
    try:
        import pandas as pd

        return v is pd.NA or v is pd.NaT
    except ImportError:  # pragma: no cover
        return False


def infer_flat_field(name: str, values: Any) -> Field:
    """The flat type of a column of Python values or a numpy array (what ``Table.from_pydict`` infers)."""
    if isinstance(values, np.ndarray) and values.dtype != object:
        dt = values.dtype
        if isinstance(values, np.ma.MaskedArray):
            dt = values.data.dtype
        k = dt.kind
        if k == "b":
            return make_field(name, "bool")
        if k == "i":
            return make_field(name, {1: "int8", 2: "int16", 4: "int32", 8: "int64"}[dt.itemsize])
        if k == "u":
            return make_field(name, {1: "uint8", 2: "uint16", 4: "uint32", 8: "uint64"}[dt.itemsize])
        if k == "f":
            return make_field(name, {2: "float16", 4: "float", 8: "double"}[dt.itemsize])
        if k == "M":
            unit = np.datetime_data(dt)[0]
            if unit == "D":
                return make_field(name, "date")
            if unit in ("ms", "us", "ns"):
                return make_field(name, f"timestamp[{unit}]")
            return make_field(name, "timestamp[us]")
        if k == "m":
            # durations are counts of their unit (their Arrow type, when known, says which: from_pydict);
            # a TIME is a time of day, which a duration is not
            return make_field(name, "int64")
        if k == "U":
            return make_field(name, "string")
        if k == "S":
            return make_field(name, "binary")
        if k == "V":
            return make_field(name, f"fixed[{dt.itemsize}]")
        raise SchemaError(f"column {name!r}: cannot store numpy dtype {dt}")
    if isinstance(values, BinaryArray):
        return make_field(name, "binary")
    sample = next((v for v in values if v is not None), None)
    if sample is None:
        return make_field(name, "int32")  # all null: any type will do; int32 is what Spark reads fine
    if isinstance(sample, (bool, np.bool_)):
        return make_field(name, "bool")
    if isinstance(sample, (int, np.integer)):
        return make_field(name, "int64")
    if isinstance(sample, (float, np.floating)):
        return make_field(name, "double")
    if isinstance(sample, str):
        return make_field(name, "string")
    if isinstance(sample, (bytes, bytearray, memoryview)):
        return make_field(name, "binary")
    if isinstance(sample, _dt.datetime):
        return make_field(name, "timestamp[us, UTC]" if sample.tzinfo is not None else "timestamp[us]")
    if isinstance(sample, _dt.date):
        return make_field(name, "date")
    if isinstance(sample, _dt.time):
        return make_field(name, "time[us]")
    if isinstance(sample, (_dt.timedelta, np.timedelta64)):
        # a duration: INT64 counts of microseconds (what the caller's Arrow type says: nested_column)
        return make_field(name, "int64")
    if isinstance(sample, uuid.UUID):
        return make_field(name, "uuid")
    if isinstance(sample, decimal.Decimal):
        # as pyarrow infers: the most integer digits plus the most fractional digits of any value
        int_digits, scale = 0, 0
        for d in values:
            if d is None or not isinstance(d, decimal.Decimal) or not d.is_finite():
                continue
            t = d.as_tuple()
            exp = int(t.exponent)
            prec, sc = len(t.digits), -exp
            if sc < 0:
                prec, sc = prec - sc, 0
            int_digits, scale = max(int_digits, prec - sc), max(scale, sc)
        precision = max(int_digits + scale, 1)
        return make_field(name, f"decimal({precision}, {scale})")
    raise SchemaError(f"column {name!r}: cannot infer a Parquet type for {type(sample).__name__}")


def column_from_values(name: str, values: Any, field: Field | None = None) -> Column:
    """Convert user input (list, numpy array, masked array, BinaryArray) to a physical Column."""
    if isinstance(values, Column):
        if field is None:
            return values
        if type(values) is not Column or isinstance(field, NestedField):
            return conform(values, field)
        return Column(field, values.values, values.mask)
    if isinstance(field, NestedField):
        return column_from_pylist(values, field)
    if field is None and not isinstance(values, BinaryArray) and (
            not isinstance(values, np.ndarray) or values.dtype == object):
        if looks_nested(values):
            return column_from_pylist(values, infer_field(name, values))
    if field is None:
        if isinstance(values, np.ndarray) and values.ndim != 1:
            # (pyarrow refuses them too; inferred as their element type, they failed deep in the writer)
            raise SchemaError(f"column {name!r}: a numpy array must be one-dimensional, this one has shape "
                              f"{values.shape}")
        field = infer_flat_field(name, values)
    mask: np.ndarray | None = None
    if isinstance(values, np.ma.MaskedArray):
        mask = np.ma.getmaskarray(values)
        values = values.filled(0) if values.dtype.kind not in "OUS" else values.data
    if isinstance(values, np.ndarray) and values.dtype.kind in "mM":
        nat = np.isnat(values)
        if nat.any():  # NaT is numpy's null: store a null (and a zero in its slot), as pyarrow does
            mask = nat if mask is None else (mask | nat)
            values = np.where(nat, np.zeros(1, values.dtype), values)
    if isinstance(values, np.ndarray) and values.dtype == object or not isinstance(values, (np.ndarray, BinaryArray)):
        seq = list(values)
        nulls = np.fromiter((v is None or _is_na(v) for v in seq), dtype=bool, count=len(seq))
        if nulls.any():
            mask = nulls if mask is None else (mask | nulls)
        phys = _physical_from_objects(field, seq, nulls)
    else:
        phys = physical_from_array(field, values)
    if mask is not None and not mask.any():
        mask = None
    if mask is not None and not field.nullable:
        raise SchemaError(f"column {name!r} is declared not null but has {int(mask.sum())} nulls")
    return Column(field, phys, mask)


def physical_from_array(field: Field, arr: Any) -> Any:
    """The physical values of ``field`` from a numpy array (or a BinaryArray); SchemaError when they do not fit."""
    p, lt = field.physical_type, field.logical_type
    if isinstance(arr, BinaryArray):
        if p == PhysicalType.BYTE_ARRAY:
            return arr
        if p == PhysicalType.FIXED_LEN_BYTE_ARRAY:
            w = arr.fixed_width()
            if w != field.type_length and len(arr):
                raise SchemaError(f"column {field.name!r}: values must all be {field.type_length} bytes")
            return arr.as_matrix(field.type_length or 0)
        raise SchemaError(f"column {field.name!r}: binary values for a {field.type_name} column")
    arr = np.asarray(arr)
    k = arr.dtype.kind
    if p == PhysicalType.BYTE_ARRAY:
        if k in "US":
            return BinaryArray.from_numpy_strings(arr)
        raise SchemaError(f"column {field.name!r}: cannot store {arr.dtype} as {field.type_name}")
    if p == PhysicalType.FIXED_LEN_BYTE_ARRAY:
        if lt is not None and lt.kind == "FLOAT16":
            return np.ascontiguousarray(arr.astype(np.float16)).view(np.uint8).reshape(-1, 2)
        if arr.ndim == 2 and arr.dtype == np.uint8 and arr.shape[1] == field.type_length:
            return np.ascontiguousarray(arr)
        if k in "SV" and arr.dtype.itemsize == field.type_length:
            return np.ascontiguousarray(arr).view(np.uint8).reshape(-1, field.type_length or 0)
        if lt is not None and lt.kind == "DECIMAL" and k in "iu":
            return _ints_to_be_bytes([int(x) for x in arr.tolist()], field.type_length or 16)
        raise SchemaError(f"column {field.name!r}: cannot store {arr.dtype} as {field.type_name}")
    if p == PhysicalType.INT96:
        if arr.ndim == 2 and arr.shape[1] == 12:
            return np.ascontiguousarray(arr, dtype=np.uint8)
        if k == "M":
            return timestamps_to_int96(arr.astype("datetime64[ns]").view(np.int64))
        raise SchemaError(f"column {field.name!r}: INT96 needs datetime64 or (n, 12) bytes")
    if lt is not None and lt.kind == "DATE" and k == "M":
        return arr.astype("datetime64[D]").view(np.int64).astype(np.int32)
    if lt is not None and lt.kind == "TIMESTAMP" and k == "M":
        return arr.astype(f"datetime64[{lt.unit}]").view(np.int64)
    if lt is not None and lt.kind == "TIME" and k == "m":
        out = arr.astype(f"timedelta64[{lt.unit}]").view(np.int64)
        _check_time_of_day(field, out)
        return out.astype(np.int32) if p == PhysicalType.INT32 else out
    if lt is None and p == PhysicalType.INT64 and k == "m":  # a duration: the count of its unit
        return np.ascontiguousarray(arr.view(np.int64))
    target = numpy_dtype(p)
    if target is None:
        raise SchemaError(f"column {field.name!r}: unsupported type {field.type_name}")
    if k == "M" or k == "m":
        raise SchemaError(f"column {field.name!r}: cannot store {arr.dtype} as {field.type_name}")
    if lt is not None and lt.kind == "INTEGER" and not lt.signed and k == "u":
        # unsigned values keep their bits; Parquet stores them in the signed physical type
        return arr.astype(np.uint32 if p == PhysicalType.INT32 else np.uint64).view(target)
    if p in (PhysicalType.INT32, PhysicalType.INT64) and k == "f":
        raise SchemaError(f"column {field.name!r}: float values for an integer column")
    if p in (PhysicalType.INT32, PhysicalType.INT64) and k in "iu" and arr.size:
        info = np.iinfo(target)
        lo, hi = arr.min(), arr.max()
        if lt is not None and lt.kind == "INTEGER":
            bits = lt.bit_width or 64
            info_lo, info_hi = (-(2 ** (bits - 1)), 2 ** (bits - 1) - 1) if lt.signed else (0, 2**bits - 1)
        else:
            info_lo, info_hi = int(info.min), int(info.max)
        if int(lo) < info_lo or int(hi) > info_hi:
            raise SchemaError(f"column {field.name!r}: values outside the range of {field.type_name}")
    return np.ascontiguousarray(arr.astype(target, copy=False))


def _ints_to_be_bytes(ints: list[int], width: int) -> np.ndarray:
    out = np.zeros((len(ints), width), np.uint8)
    for i, v in enumerate(ints):
        try:
            out[i] = np.frombuffer(v.to_bytes(width, "big", signed=True), np.uint8)
        except OverflowError:
            raise SchemaError(f"decimal value {v} does not fit in {width} bytes") from None
    return out


def _unscaled(d: Any, scale: int) -> int:
    if isinstance(d, decimal.Decimal):
        q = d.scaleb(scale, context=DECIMAL_CONTEXT)
        if q != q.to_integral_value(context=DECIMAL_CONTEXT):
            raise SchemaError(f"decimal {d} has more than {scale} fractional digits")
        return int(q)
    return int(d)


def _physical_from_objects(field: Field, seq: list[Any], nulls: np.ndarray) -> Any:
    p, lt = field.physical_type, field.logical_type
    kind = lt.kind if lt is not None else None
    if p == PhysicalType.BYTE_ARRAY:
        if kind == "DECIMAL":
            items: list[Any] = []
            for v, isnull in zip(seq, nulls):
                if isnull:
                    items.append(b"")
                    continue
                u = _unscaled(v, lt.scale or 0)  # type: ignore[union-attr]
                n = max(1, (u.bit_length() + 8) // 8)
                items.append(u.to_bytes(n, "big", signed=True))
            return BinaryArray.from_pylist(items)
        bad = [type(v).__name__ for v, isnull in zip(seq, nulls) if not isnull and not isinstance(v, (str, bytes, bytearray, memoryview))]
        if bad:
            raise SchemaError(f"column {field.name!r}: {bad[0]} value in a {field.type_name} column")
        return BinaryArray.from_pylist([None if isnull else v for v, isnull in zip(seq, nulls)])
    if p == PhysicalType.FIXED_LEN_BYTE_ARRAY:
        w = field.type_length or 0
        if kind == "DECIMAL":
            return _ints_to_be_bytes([0 if isnull else _unscaled(v, lt.scale or 0) for v, isnull in zip(seq, nulls)], w)  # type: ignore[union-attr]
        if kind == "FLOAT16":
            return np.array([0.0 if isnull else v for v, isnull in zip(seq, nulls)], np.float16).view(np.uint8).reshape(-1, 2)
        out = np.zeros((len(seq), w), np.uint8)
        for i, (v, isnull) in enumerate(zip(seq, nulls)):
            if isnull:
                continue
            b = v.bytes if isinstance(v, uuid.UUID) else bytes(v)
            if len(b) != w:
                raise SchemaError(f"column {field.name!r}: value of {len(b)} bytes in a fixed[{w}] column")
            out[i] = np.frombuffer(b, np.uint8)
        return out
    if kind == "DATE":
        vals = [0 if isnull else (v - _dt.date(1970, 1, 1)).days if isinstance(v, _dt.date) else int(v)
                for v, isnull in zip(seq, nulls)]
        return np.array(vals, np.int32)
    if kind == "TIMESTAMP" or p == PhysicalType.INT96:
        unit = lt.unit if lt is not None and lt.unit else "ns"
        per_s = _UNIT_PER_S[unit]
        ints = []
        for v, isnull in zip(seq, nulls):
            if isnull:
                ints.append(0)
            elif isinstance(v, _dt.datetime):
                if v.tzinfo is not None:
                    v = v.astimezone(_dt.timezone.utc).replace(tzinfo=None)
                delta = v - _dt.datetime(1970, 1, 1)
                ints.append((delta.days * 86400 + delta.seconds) * per_s + delta.microseconds * per_s // 1_000_000)
            elif isinstance(v, np.datetime64):
                ints.append(int(v.astype(f"datetime64[{unit}]").view(np.int64)))
            else:
                ints.append(int(v))
        arr = np.array(ints, np.int64)
        return timestamps_to_int96(arr) if p == PhysicalType.INT96 else arr
    if kind == "TIME":
        per_s = _UNIT_PER_S[lt.unit or "us"]  # type: ignore[union-attr]
        ints = []
        for v, isnull in zip(seq, nulls):
            if isnull:
                ints.append(0)
            elif isinstance(v, _dt.time):
                ints.append(((v.hour * 60 + v.minute) * 60 + v.second) * per_s + v.microsecond * per_s // 1_000_000)
            elif isinstance(v, (_dt.timedelta, np.timedelta64)):
                ints.append(int(np.timedelta64(v).astype(f"timedelta64[{lt.unit}]").view(np.int64)))  # type: ignore[union-attr]
            else:
                ints.append(int(v))
        arr = np.array(ints, np.int64)
        _check_time_of_day(field, arr)
        return arr.astype(np.int32) if p == PhysicalType.INT32 else arr
    if kind == "DECIMAL":
        return np.array([0 if isnull else _unscaled(v, lt.scale or 0) for v, isnull in zip(seq, nulls)],  # type: ignore[union-attr]
                        np.int32 if p == PhysicalType.INT32 else np.int64)
    if p == PhysicalType.INT64 and kind is None and isinstance(
            next((v for v, isnull in zip(seq, nulls) if not isnull), None), (_dt.timedelta, np.timedelta64)):
        # durations (inside a list or struct: infer_flat_field) as counts of microseconds
        try:
            return np.array([np.timedelta64(0, "us") if isnull else v for v, isnull in zip(seq, nulls)],
                            "m8[us]").view(np.int64)
        except (TypeError, ValueError):
            raise SchemaError(f"column {field.name!r}: values of mixed types cannot be stored") from None
    fill: Any = False if p == PhysicalType.BOOLEAN else 0
    clean = [fill if isnull else v for v, isnull in zip(seq, nulls)]
    if p != PhysicalType.BOOLEAN and any(isinstance(v, (str, bytes)) for v in clean):
        raise SchemaError(f"column {field.name!r}: text value in a {field.type_name} column")
    if kind == "INTEGER" and not lt.signed:  # type: ignore[union-attr]
        raw = np.array(clean, np.uint64 if p == PhysicalType.INT64 else np.int64)
        return physical_from_array(field, raw.astype(np.uint64 if p == PhysicalType.INT64 else np.uint32))
    try:
        raw = np.array(clean)
    except (OverflowError, ValueError) as exc:
        raise SchemaError(f"column {field.name!r}: {exc}") from None
    if raw.size == 0:
        raw = raw.astype(numpy_dtype(p) or np.dtype(np.int32))
    return physical_from_array(field, raw)


def _check_time_of_day(field: Field, ticks: np.ndarray) -> None:
    """A TIME is a time of day: refuse values outside [0, 24 h) rather than store what every reader
    would show as another time (or reject)."""
    if not ticks.size:
        return
    day = 86_400 * _UNIT_PER_S[field.logical_type.unit or "us"]  # type: ignore[union-attr]
    bad = (ticks < 0) | (ticks >= day)
    if bad.any():
        v = int(ticks[bad][0])
        raise SchemaError(f"column {field.name!r}: TIME value {v} {field.logical_type.unit} is not a time of day "  # type: ignore[union-attr]
                          f"(0 to 24 h); store durations as int64 (numpy timedelta64 and pandas Timedelta are)")


def as_durations(name: str, values: Any) -> tuple[Any, str] | None:
    """Durations (numpy timedelta64, or Python timedelta objects) as timedelta64 of an Arrow unit
    (NaT for nulls), with that unit; None for other values."""
    if isinstance(values, np.ndarray) and values.dtype.kind == "m":
        arr = values
    elif isinstance(values, (list, tuple)) or isinstance(values, np.ndarray) and values.dtype == object:
        sample = next((v for v in values if v is not None), None)
        if not isinstance(sample, (_dt.timedelta, np.timedelta64)):
            return None
        try:
            arr = np.array([np.timedelta64("NaT") if v is None else v for v in values], "m8[us]")
        except (TypeError, ValueError):
            raise SchemaError(f"column {name!r}: values of mixed types cannot be stored") from None
    else:
        return None
    unit = np.datetime_data(arr.dtype)[0]
    if unit in ("W", "D", "h", "m"):  # whole seconds: exact in Arrow's coarsest unit
        arr, unit = arr.astype("m8[s]"), "s"
    if unit not in ("s", "ms", "us", "ns"):
        raise SchemaError(f"column {name!r}: timedelta64 unit {unit!r} has no Arrow duration equivalent")
    return arr, unit


def timestamps_to_int96(ns: np.ndarray) -> np.ndarray:
    """int64 nanoseconds since the epoch -> INT96 (nanos of day LE int64, Julian day LE int32)."""
    days, nanos = np.divmod(ns.astype(np.int64), 86_400 * 1_000_000_000)
    out = np.zeros((len(ns), 12), np.uint8)
    out[:, :8] = nanos.astype("<i8").view(np.uint8).reshape(-1, 8)
    out[:, 8:] = (days + 2_440_588).astype("<i4").view(np.uint8).reshape(-1, 4)
    return out


# ---------------------------------------------------------------------------
# nested values
# ---------------------------------------------------------------------------
def _is_listlike(v: Any) -> bool:
    return isinstance(v, (list, tuple)) or (isinstance(v, np.ndarray) and v.ndim == 1)


def looks_nested(values: Any) -> bool:
    """Whether a Python sequence holds lists or dicts (so its type is a list or struct)."""
    if isinstance(values, np.ndarray) and values.dtype != object:
        return False
    for v in values:
        if v is None:
            continue
        return _is_listlike(v) or isinstance(v, Mapping)
    return False


def nested_column(name: str, values: Sequence[Any]) -> tuple[Column, ArrowField | None]:
    """A column of Python lists and dicts, its type inferred (:func:`infer_field`), and the Arrow field to
    keep with it when it holds durations (``timedelta`` members or elements, stored as INT64 counts of
    microseconds, as pyarrow infers and stores them); None when it holds none."""
    paths: list[tuple[str, ...]] = []
    f = infer_field(name, values, durations=paths)
    col = column_from_pylist(values, f)
    return col, (with_durations(f, paths, "us") if paths else None)


def infer_field(name: str, values: Sequence[Any], _depth: int = 2, *,
                durations: list[tuple[str, ...]] | None = None, _path: tuple[str, ...] = ()) -> Field:
    """The type of a Python column: dicts give structs, lists give lists (maps need a schema).
    ``durations``: the paths (member names below the column, a list's element named ``element``) of
    the members that hold durations are appended to it."""
    if _depth > MAX_SCHEMA_DEPTH:  # the values nest deeper than a file may (and than recursion goes)
        raise SchemaError(f"column {name!r} is nested more than {MAX_SCHEMA_DEPTH} levels deep; pqbloom reads "
                          f"and writes at most {MAX_SCHEMA_DEPTH}")

    nonnull = [v for v in values if v is not None]
    if nonnull and all(isinstance(v, Mapping) for v in nonnull):
        keys = list(dict.fromkeys(k for v in nonnull for k in v))
        if not keys:
            raise SchemaError(f"column {name!r}: cannot infer a struct without members")
        for k in keys:
            if not isinstance(k, str):
                raise SchemaError(f"column {name!r}: struct member names must be strings (use a map<...> schema "
                                  f"for other keys)")
        return nested_field(name, "struct", [infer_field(k, [v.get(k) for v in nonnull], _depth + 1,
                                                         durations=durations, _path=(*_path, k)) for k in keys])
    if nonnull and all(_is_listlike(v) for v in nonnull):
        flat = list(itertools.chain.from_iterable(nonnull))
        return nested_field(name, "list", [infer_field("element", flat, _depth + 2, durations=durations,
                                                       _path=(*_path, "element"))])
    if any(_is_listlike(v) or isinstance(v, Mapping) for v in nonnull):
        raise SchemaError(f"column {name!r} mixes nested and plain values")
    if durations is not None and _path and isinstance(nonnull[0] if nonnull else None, (_dt.timedelta, np.timedelta64)):
        durations.append(_path)
    return infer_flat_field(name, values)


def _member(v: Any, name: str, pos: int) -> Any:
    if isinstance(v, Mapping):
        return v.get(name)
    if isinstance(v, (tuple, list)):
        return v[pos] if pos < len(v) else None
    return getattr(v, name, None)


def _pairs(v: Any) -> Any:
    return v.items() if isinstance(v, Mapping) else v


def column_from_pylist(values: Sequence[Any], field: Field) -> Column:
    """A column of ``field`` (flat or nested) from Python values; None is null at any level."""
    if not isinstance(field, NestedField):
        return column_from_values(field.name, values, field)
    if isinstance(values, np.ndarray):
        values = values.tolist()
    n = len(values)
    nulls = np.fromiter((v is None for v in values), dtype=bool, count=n)
    if nulls.any() and not field.nullable:
        raise SchemaError(f"column {field.name!r} is declared not null but has {int(nulls.sum())} nulls")
    mask = nulls if nulls.any() else None
    if field.kind == "struct":
        kids = []
        for pos, c in enumerate(field.children):
            vals = [None if v is None else _member(v, c.name, pos) for v in values]
            kids.append(tighten(column_from_pylist(vals, c.with_nullable(True)), c, nulls))
        return NestedColumn(field, n, mask, kids)
    for v in values:
        if v is not None and not (_is_listlike(v) or (field.kind == "map" and isinstance(v, Mapping))):
            raise SchemaError(f"column {field.name!r}: {type(v).__name__} value in a {field.type_name} column")
    lens = np.fromiter((0 if v is None else len(v) for v in values), dtype=np.int64, count=n)
    offsets = np.zeros(n + 1, np.int64)
    np.cumsum(lens, out=offsets[1:])
    if field.kind == "list":
        elem = field.children[0]
        flat = list(itertools.chain.from_iterable(v for v in values if v is not None))
        child = tighten(column_from_pylist(flat, elem.with_nullable(True)), elem, None)
        return NestedColumn(field, n, mask, [child], offsets)
    kf, vf = field.children
    pairs = list(itertools.chain.from_iterable(_pairs(v) for v in values if v is not None))
    keys = [p[0] for p in pairs]
    items = [p[1] for p in pairs]
    if any(k is None for k in keys):
        raise SchemaError(f"column {field.name!r}: map keys cannot be null")
    kcol = tighten(column_from_pylist(keys, kf.with_nullable(True)), kf, None)
    vcol = tighten(column_from_pylist(items, vf.with_nullable(True)), vf, None)
    return NestedColumn(field, n, mask, [kcol, vcol], offsets)


def with_field(col: Column, field: Field, mask: np.ndarray | None) -> Column:
    """``col`` relabelled with ``field`` (same data) and the given null mask."""
    if isinstance(col, NestedColumn):
        return NestedColumn(field, len(col), mask, col.children, col.offsets)
    return Column(field, col.values, mask)


def tighten(col: Column, field: Field, parent_null: np.ndarray | None) -> Column:
    """``col`` with its declared field; nulls in a not-null field are only allowed where ``parent_null`` (the
    parent struct's nulls) is True, else SchemaError."""
    if field.nullable or col.mask is None:
        return with_field(col, field, col.mask if field.nullable else None)
    bad = col.mask if parent_null is None else (col.mask & ~parent_null)
    if bad.any():
        raise SchemaError(f"field {field.name!r} is declared not null but has {int(bad.sum())} nulls")
    return with_field(col, field, None)


def conform(col: Column, field: Field) -> Column:
    """Relabel a column (possibly nested) with a compatible field, checking nullability all the way down."""
    if not isinstance(field, NestedField):
        if isinstance(col, NestedColumn):
            raise SchemaError(f"column {field.name!r} is {col.field.type_name}, the schema says {field.type_name}")
        if col.field.physical_type != field.physical_type or col.field.type_length != field.type_length:
            raise SchemaError(f"column {field.name!r} is {col.field.type_name}, the schema says {field.type_name}")
        if col.mask is not None and not field.nullable:
            raise SchemaError(f"column {field.name!r} is declared not null but has {col.null_count} nulls")
        return Column(field, col.values, col.mask)
    if not isinstance(col, NestedColumn) or col.kind != field.kind or len(col.children) != len(field.children):
        raise SchemaError(f"column {field.name!r} is {col.field.type_name}, the schema says {field.type_name}")
    if col.mask is not None and not field.nullable:
        raise SchemaError(f"column {field.name!r} is declared not null but has {col.null_count} nulls")
    kids = []
    for c, f in zip(col.children, field.children):
        relaxed = conform(c, f.with_nullable(True))
        kids.append(tighten(relaxed, f, col.mask if field.kind == "struct" else None))
    return NestedColumn(field, len(col), col.mask, kids, col.offsets)


def null_column(field: Field, n: int) -> Column:
    """``n`` null slots of ``field``, which must have no leaves (an empty group, or groups of them).

    That is how pyarrow reads a top-level field without leaves: no column chunk says anything about
    its rows, so every slot is null (and the field nullable, whatever the file declares)."""
    if not isinstance(field, NestedField):
        raise SchemaError(f"field {field.name!r} has leaves")
    field = replace(field, nullable=True)
    mask = np.ones(n, bool) if n else None
    if field.kind == "struct":
        kids = [_unset_column(c, n) for c in field.children]
        return NestedColumn(field, n, mask, kids)
    return NestedColumn(field, n, mask, [empty_column(c) for c in field.children], np.zeros(n + 1, np.int64))


def _unset_column(field: Field, n: int) -> Column:
    """The members of a null struct slot: null where they may be, placeholders where they may not."""
    if not isinstance(field, NestedField):
        raise SchemaError(f"field {field.name!r} has leaves")
    mask = np.ones(n, bool) if n and field.nullable else None
    if field.kind == "struct":
        return NestedColumn(field, n, mask, [_unset_column(c, n) for c in field.children])
    return NestedColumn(field, n, mask, [empty_column(c) for c in field.children], np.zeros(n + 1, np.int64))


def empty_column(field: Field) -> Column:
    """A zero-row column of ``field``."""
    if isinstance(field, NestedField):
        kids = [empty_column(c) for c in field.children]
        return NestedColumn(field, 0, None, kids, None if field.kind == "struct" else np.zeros(1, np.int64))
    return Column(field, empty_values(field), None)


def empty_values(field: Field) -> Any:
    """Zero physical values of a flat ``field`` (an empty array of its in-memory form)."""
    return column_from_values(field.name, [], field.with_nullable(True)).values
