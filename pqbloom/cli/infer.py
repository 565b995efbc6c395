"""Column types for ``pqbloom convert``: inferred from a first chunk, then applied to every chunk.

CSV inference tries, per column: bool (true/false), int64 (integers past its range stay strings
rather than rounded doubles), double, date (``YYYY-MM-DD``),
timestamp (ISO 8601; ``timestamp[us, UTC]`` when the values carry ``Z`` or an offset, which
are converted to UTC), then string. JSON Lines keep their JSON types (bool, int64, double,
string; integers past int64 become decimal(38,0), never rounded doubles, and more than 38 digits, or
integers beside fractions that a double would round, are a ConvertError asking for ``--schema``); ISO date/timestamp strings become date/timestamp, arrays lists and objects structs (JSON
text when their members mix types or shapes), mixed types strings. :class:`ColumnTyper` turns one chunk's raw values into a typed column (vectorized
with numpy), reporting the first value that does not fit with its line.
"""

from __future__ import annotations

import decimal
import json
import re
import uuid
import warnings
from collections.abc import Sequence
from typing import Any

import numpy as np

from ..arrays import BinaryArray
from ..errors import ParquetError, SchemaError
from ..schema import Field, NestedField, PhysicalType, make_field
from ..table import Column, column_from_values
from ..table.build import infer_field
from .errors import ConvertError
from .textio import SourceLines

__all__ = ["ColumnTyper", "infer_json_type", "infer_text_type"]

_INTS = (PhysicalType.INT32, PhysicalType.INT64)
_FLOATS = (PhysicalType.FLOAT, PhysicalType.DOUBLE)
_TRUE = {"true", "t", "yes", "y"}
_FALSE = {"false", "f", "no", "n"}
_INT_RE = re.compile(r"\s*[+-]?\d+\s*\Z")
_DATE_RE = re.compile(r"\d{4}-\d{2}-\d{2}\Z")
_TS_RE = re.compile(r"\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}(:\d{2}(\.\d{1,9})?)?(Z|[+-]\d{2}:?\d{2})?\Z")
_TZ_RE = re.compile(r"(Z|[+-]\d{2}:?\d{2})\Z")


_DECIMAL38 = 10**38


def _exact_double(v: int) -> bool:
    """Whether the integer ``v`` is a float64 exactly (not rounded, not too large)."""
    try:
        return int(float(v)) == v
    except OverflowError:
        return False


def _looks(regex: re.Pattern[str], vals: Sequence[str]) -> bool:
    return bool(vals) and all(regex.match(v) for v in vals)


def infer_text_type(name: str, vals: Sequence[str]) -> Field:
    """The type of a column of non-null strings (CSV), most specific first."""
    if not vals:
        return make_field(name, "string")
    arr = np.asarray(vals)
    if {v.strip().lower() for v in vals[:100]} <= {"true", "false"} \
            and {v.strip().lower() for v in vals} <= {"true", "false"}:
        return make_field(name, "bool")
    for dtype, type_name in ((np.int64, "int64"), (np.float64, "double")):
        try:
            arr.astype(dtype)
            return make_field(name, type_name)
        except (ValueError, OverflowError):
            if type_name == "int64" and _looks(_INT_RE, vals):
                # integers past int64: a double would round them; keep the digits
                return make_field(name, "string")
    if _looks(_DATE_RE, vals):
        try:
            arr.astype("datetime64[D]")
            return make_field(name, "date")
        except ValueError:
            pass
    if _looks(_TS_RE, vals):
        tz = [bool(_TZ_RE.search(v)) for v in vals]
        if all(tz) or not any(tz):
            try:
                _parse_timestamps(arr, "us")
                return make_field(name, "timestamp[us, UTC]" if all(tz) else "timestamp[us]")
            except ValueError:
                pass
    return make_field(name, "string")


def infer_json_type(name: str, vals: list[Any]) -> Field:
    """The type of a column of non-null JSON values."""
    if not vals:
        return make_field(name, "string")
    kinds = {type(v) for v in vals}
    if kinds == {bool}:
        return make_field(name, "bool")
    if kinds <= {int}:
        if all(-(2**63) <= v < 2**63 for v in vals):
            return make_field(name, "int64")
        # past int64 (uint64's upper half too): exact decimals, never rounded doubles
        too_long = next((v for v in vals if not -_DECIMAL38 < v < _DECIMAL38), None)
        if too_long is None:
            return make_field(name, "decimal(38,0)")
        raise ConvertError(f"column {name!r}: the JSON integer {too_long} has more than 38 digits, more than an "
                           f"inferred type holds exactly; pass --schema '{name}:string' (its digits as text) or "
                           f"'{name}:decimal(76,0)'")
    if kinds <= {int, float}:
        inexact = next((v for v in vals if type(v) is int and not _exact_double(v)), None)
        if inexact is not None:
            raise ConvertError(f"column {name!r} mixes JSON integers and fractions, and the integer {inexact} has "
                               f"no exact double; pass --schema '{name}:decimal(P,S)' or '{name}:string'")
        return make_field(name, "double")
    if kinds == {str}:
        f = infer_text_type(name, vals)
        lt = f.logical_type
        return f if lt is not None and lt.kind in ("DATE", "TIMESTAMP") else make_field(name, "string")
    if kinds <= {dict} or kinds <= {list}:
        # arrays and objects as lists and structs when their members have one type each
        try:
            f = infer_field(name, vals)
            if isinstance(f, NestedField) and f.kind in ("list", "struct") and nested_mismatch(f, vals) is None:
                column_from_values(name, vals, f)
                return f
        except (ParquetError, ValueError, TypeError, OverflowError, KeyError):
            pass
    if kinds & {dict, list}:
        return make_field(name, "json")  # mixed shapes: the JSON text, never a lossy guess
    return make_field(name, "string")


def nested_mismatch(f: Field, values: Sequence[Any]) -> str | None:
    """Why JSON ``values`` do not fit the list / struct field ``f`` exactly (an object key the struct lacks,
    an array where an object belongs...), or None. Building the column would drop such a key silently."""
    if not isinstance(f, NestedField):
        return "an array or object where a scalar belongs" if any(isinstance(v, (list, dict)) for v in values) \
            else None
    if f.kind == "list":
        items: list[Any] = []
        for v in values:
            if v is None:
                continue
            if not isinstance(v, list):
                return f"{type(v).__name__} where an array belongs"
            items.extend(v)
        return nested_mismatch(f.children[0], items)
    if f.kind == "struct":
        names = {c.name for c in f.children}
        for v in values:
            if v is None:
                continue
            if not isinstance(v, dict):
                return f"{type(v).__name__} where an object belongs"
            extra = [k for k in v if k not in names]
            if extra:
                return f"key {extra[0]!r} not in {f.type_name}"
        for c in f.children:
            why = nested_mismatch(c, [v.get(c.name) for v in values if v is not None])
            if why is not None:
                return why
        return None
    return "a map"  # JSON objects are structs, never maps


def _parse_timestamps(arr: np.ndarray, unit: str) -> np.ndarray:
    """ISO 8601 strings -> datetime64[unit]; values with ``Z`` or an offset are converted to UTC."""
    if arr.size and bool(np.char.endswith(arr, "Z").all()):
        arr = np.char.rstrip(arr, "Z")  # the common case, kept vectorized
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        try:
            return arr.astype(f"datetime64[{unit}]")
        except (UserWarning, DeprecationWarning):
            pass
    # some carry an offset: split it off, parse the rest, shift
    vals = arr.tolist()
    offsets = np.zeros(len(vals), np.int64)  # minutes east of UTC
    naive = []
    for i, v in enumerate(vals):
        m = _TZ_RE.search(v)
        if m is None:
            naive.append(v)
            continue
        tz = m.group(1)
        naive.append(v[:m.start()])
        if tz != "Z":
            digits = tz[1:].replace(":", "")
            mins = int(digits[:2]) * 60 + int(digits[2:])
            offsets[i] = mins if tz[0] == "+" else -mins
    out = np.asarray(naive).astype(f"datetime64[{unit}]")
    return out - offsets.astype("timedelta64[m]").astype(f"timedelta64[{unit}]")


def _binary_from_strs(strs: Sequence[str], char_lens: np.ndarray) -> BinaryArray:
    """UTF-8 BinaryArray of ``strs``: one join and one encode when the text is ASCII."""
    joined = "".join(strs)
    data = joined.encode("utf-8")
    if len(data) != len(joined):
        return BinaryArray.from_pylist(strs)
    offsets = np.zeros(len(strs) + 1, np.int64)
    np.cumsum(char_lens, out=offsets[1:])
    return BinaryArray(offsets, np.frombuffer(data, np.uint8))


class ColumnTyper:
    """Turns one chunk's raw values of a column into a typed Column of ``field``.

    ``hint`` says where the type came from (given by ``--schema``, or inferred), for error messages;
    ``null_values`` are the texts that mean null in CSV (``""``: the empty field).
    """

    def __init__(self, f: Field, *, hint: str, null_values: frozenset[str]) -> None:
        self.field = f
        self.hint = hint
        self.empty_is_null = "" in null_values
        self.markers = sorted(null_values - {""})

    def nulls(self, values: Sequence[Any], text: bool) -> tuple[np.ndarray, np.ndarray | None]:
        """(null mask, character lengths) of raw values; ``text``: CSV strings (lengths None for JSON)."""
        n = len(values)
        if not text:
            return np.fromiter((v is None for v in values), bool, count=n), None
        lens = np.fromiter(map(len, values), np.int64, count=n)
        nulls = lens == 0 if self.empty_is_null else np.zeros(n, bool)
        if self.markers:
            nulls |= np.isin(np.asarray(values), self.markers)
        return nulls, lens

    def column(self, values: Sequence[Any], lines: SourceLines, text: bool) -> Column:
        """The typed column of one chunk's raw ``values``; a value that does not fit raises
        :class:`~pqbloom.cli.errors.ConvertError` naming its line (from ``lines``)."""
        f = self.field
        nulls, lens = self.nulls(values, text)
        if not f.nullable and nulls.any():
            where = lines.where(int(np.argmax(nulls)))
            raise ConvertError(f"{where}: column {f.name!r} is declared not null but the value is missing")
        if isinstance(f, NestedField):
            why = nested_mismatch(f, values)
            bad = None if why is None else next(i for i in range(len(values))
                                                if nested_mismatch(f, [values[i]]) is not None)
            if bad is not None:
                raise ConvertError(f"{lines.where(bad)}: column {f.name!r}: {why} ({self.hint})")
        try:
            return self._column(values, nulls, lens, text)
        except ConvertError:
            raise
        except (SchemaError, ValueError, TypeError, OverflowError, decimal.InvalidOperation) as exc:
            bad = self._first_bad(values, nulls, text)
            where = lines.where(bad) if bad is not None else lines.span()
            if bad is not None:
                raise ConvertError(f"{where}: column {f.name!r}: value {values[bad]!r} does not fit {f.type_name} "
                                   f"({self.hint})") from None
            raise ConvertError(f"{where}: column {f.name!r}: values do not fit {f.type_name} ({self.hint}; "
                               f"{exc})") from None

    def _first_bad(self, values: Sequence[Any], nulls: np.ndarray, text: bool) -> int | None:
        for i, v in enumerate(values):
            if nulls[i]:
                continue
            try:
                self._column([v], np.zeros(1, bool), np.array([len(v)]) if text else None, text)
            except (ParquetError, ValueError, TypeError, OverflowError, decimal.InvalidOperation):
                return i
        return None

    def _column(self, values: Sequence[Any], nulls: np.ndarray, lens: np.ndarray | None, text: bool) -> Column:
        f = self.field
        lt = f.logical_type
        kind = lt.kind if lt is not None else None
        has_nulls = bool(nulls.any())
        mask = nulls if has_nulls else None
        if isinstance(f, NestedField):
            return column_from_values(f.name, list(values), f)
        if f.physical_type == PhysicalType.BYTE_ARRAY and kind != "DECIMAL":
            if text:
                assert lens is not None
                strs = values
                if has_nulls and self.markers:
                    strs = ["" if isnull else v for v, isnull in zip(values, nulls.tolist())]
                    lens = np.where(nulls, 0, lens)
                return Column(f, _binary_from_strs(strs, lens), mask)
            if kind == "JSON":
                items = [None if v is None else json.dumps(v) for v in values]
            else:
                items = [None if v is None else (v if isinstance(v, str) else json.dumps(v)) for v in values]
            return Column(f, BinaryArray.from_pylist(items), mask)
        if text or all(isinstance(v, str) for v in values if v is not None):
            arr = self._parse_text(values, nulls, has_nulls)
            if not isinstance(arr, np.ndarray):
                return column_from_values(f.name, arr, f)
            return column_from_values(f.name, np.ma.masked_array(arr, mask=nulls) if has_nulls else arr, f)
        # JSON numbers and booleans
        nn = [v for v in values if v is not None]
        if f.physical_type == PhysicalType.BOOLEAN:
            if any(type(v) is not bool for v in nn):
                raise TypeError("not a boolean")
            arr = np.array([v is True for v in values], bool)
        elif kind in ("TIMESTAMP", "DATE", "TIME") or f.physical_type in _INTS and kind in (None, "INTEGER"):
            if any(type(v) is not int for v in nn) and not all(
                    type(v) in (int, float) and float(v).is_integer() for v in nn):
                raise TypeError("not an integer")
            dtype = np.uint64 if kind == "INTEGER" and lt is not None and not lt.signed else np.int64
            arr = np.array([0 if v is None else int(v) for v in values], dtype)
            if kind in ("TIMESTAMP", "DATE", "TIME"):  # numbers are already in the column's unit
                return Column(f, arr.astype(np.int32) if f.physical_type == PhysicalType.INT32 else arr, mask)
        elif f.physical_type in _FLOATS:
            if any(type(v) not in (int, float) for v in nn):
                raise TypeError("not a number")
            if any(type(v) is int and not _exact_double(v) for v in nn):
                raise ValueError("an integer a double would round")
            arr = np.array([0.0 if v is None else float(v) for v in values], np.float64)
        else:
            return column_from_values(f.name, [self._obj(v) for v in values], f)
        return column_from_values(f.name, np.ma.masked_array(arr, mask=nulls) if has_nulls else arr, f)

    def _obj(self, v: Any) -> Any:
        lt = self.field.logical_type
        if v is None or lt is None:
            return v
        if lt.kind == "DECIMAL":
            return decimal.Decimal(v.strip() if isinstance(v, str) else str(v))
        if lt.kind == "UUID" and isinstance(v, str):
            return uuid.UUID(v.strip())
        return v

    def _parse_text(self, values: Sequence[Any], nulls: np.ndarray, has_nulls: bool) -> Any:
        """Strings -> numpy array of the field's type (vectorized), or a list of objects for the rest."""
        f = self.field
        lt = f.logical_type
        kind = lt.kind if lt is not None else None
        if kind in ("DECIMAL", "UUID") or f.physical_type in (PhysicalType.FIXED_LEN_BYTE_ARRAY, PhysicalType.INT96):
            if f.physical_type == PhysicalType.INT96 or kind not in ("DECIMAL", "UUID"):
                raise TypeError(f"cannot parse text as {f.type_name}")
            return [None if isnull else self._obj(v) for v, isnull in zip(values, nulls.tolist())]
        arr = np.asarray(values) if len(values) else np.asarray([], dtype="U1")
        if arr.dtype.kind != "U":
            arr = np.asarray([("" if v is None else v) for v in values])
        if has_nulls:
            filler = {"DATE": "1970-01-01", "TIMESTAMP": "1970-01-01T00:00", "TIME": "00:00"}.get(kind or "", "0")
            arr = np.where(nulls, "false" if f.physical_type == PhysicalType.BOOLEAN else filler, arr)
        if f.physical_type == PhysicalType.BOOLEAN:
            low = np.char.lower(np.char.strip(arr))
            t, fl = np.isin(low, sorted(_TRUE)), np.isin(low, sorted(_FALSE))
            if not bool((t | fl).all()):
                raise ValueError("not a boolean (true/false)")
            return t
        if kind == "DATE":
            return arr.astype("datetime64[D]")
        if kind == "TIMESTAMP":
            assert lt is not None
            return _parse_timestamps(arr, lt.unit or "us")
        if kind == "TIME":
            assert lt is not None
            stamps = np.char.add("1970-01-01T", np.char.strip(arr)).astype(f"datetime64[{lt.unit or 'us'}]")
            return stamps - stamps.astype("datetime64[D]")
        if f.physical_type in _INTS:
            return arr.astype(np.int64 if lt is None or lt.signed else np.uint64)
        if f.physical_type in _FLOATS:
            return arr.astype(np.float64)
        raise TypeError(f"cannot parse text as {f.type_name}")
