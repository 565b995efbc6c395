"""pandas DataFrames to and from pqbloom Tables, the way pyarrow converts them.

Writing (:func:`columns_from_pandas`, for ``Table.from_pandas``) keeps what a frame says beyond its
values: nullable dtypes' nulls, time zones, durations, categoricals and the index, in pyarrow's two
places: the Arrow types (stored as the footer's ``ARROW:schema``, see :mod:`pqbloom.table.arrow_schema`)
and pandas' own metadata (the footer's ``"pandas"`` entry, see :mod:`pqbloom.table.pandas_meta`).
Reading (:func:`dataframe`, for ``Table.to_pandas``) restores both from pqbloom's files and pyarrow's
alike, and otherwise converts each column as ``pyarrow.Table.to_pandas()`` does, so either library
reads the same frame from the same file. pandas is imported only when these functions run.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import Any

import numpy as np

from ..arrays import BinaryArray
from ..errors import CorruptFileError, SchemaError, UnsupportedError
from ..format.enums import PhysicalType
from ..schema import Field, LogicalType, Schema, make_field
from .arrow import arrow_column, typed_pylist
from .arrow_schema import (
    ArrowField,
    ArrowSchema,
    ArrowType,
    Dictionary,
    duration,
    effective_field,
    from_pyarrow,
    natural_field,
    timestamp,
)
from .build import column_from_values, looks_nested, nested_column
from .column import Column, DictionaryColumn, dictionary_codes, object_array, with_dictionary
from .objects import date_objects, time_objects
from .outputs import validity_buffer
from .pandas_meta import (
    PANDAS_KEY,
    build_metadata,
    column_index,
    index_level_name,
    label_to_string,
    range_descriptor,
    tz_from_name,
    tz_name,
)

__all__ = ["columns_from_pandas", "dataframe"]

_MAX_EXACT_FLOAT_INT = 2**53


# ---------------------------------------------------------------------------
# pandas -> columns
# ---------------------------------------------------------------------------
def columns_from_pandas(df: Any, schema: Any = None,
                        preserve_index: bool | None = None) -> tuple[list[Column], dict[str, str], ArrowSchema]:
    """The columns of a Table of ``df``'s columns, then its index levels (``preserve_index`` as in pyarrow: None
    stores a RangeIndex as metadata only and any other index as columns, True stores every index as
    columns, False none); with pandas metadata and Arrow types as pyarrow's ``Table.from_pandas``.
    A ``schema`` (a :class:`~pqbloom.Schema` or ``{name: type}``) decides, as pyarrow's does, which
    columns and index levels are stored, in its order, and their types."""
    if not df.columns.is_unique:
        raise SchemaError(f"duplicate column names in the DataFrame: {list(df.columns)}")
    given = _given_fields(schema)
    names, series, index_values, descriptors, all_names = (
        _parts_given(df, given, preserve_index) if given else _parts(df, preserve_index))
    if len(set(all_names)) != len(all_names):
        raise SchemaError(f"duplicate column names once the index is stored: {all_names}")
    columns: list[Column] = []
    arrow_fields: list[ArrowField] = []
    for name, values in zip(all_names, series + index_values):
        col, af = _convert(name, values, given.get(name))
        columns.append(col)
        arrow_fields.append(af)
    meta = build_metadata(df, names, all_names[:len(series)], series, index_values, descriptors, arrow_fields,
                          preserve_index)
    md = {PANDAS_KEY: meta}
    return columns, md, ArrowSchema(tuple(arrow_fields), tuple(md.items()))


_Parts = tuple[list[Any], list[Any], list[Any], list[Any], list[str]]


def _parts(df: Any, preserve_index: bool | None) -> _Parts:
    """(labels, data columns, index levels stored as columns, index descriptors, stored names)."""
    import pandas as pd

    names = [label_to_string(c) for c in df.columns]
    series = [df.iloc[:, i] for i in range(df.shape[1])]
    levels = [df.index.get_level_values(i) for i in range(df.index.nlevels)] if preserve_index is not False else []
    descriptors: list[Any] = []
    index_names: list[str] = []
    index_values: list[Any] = []
    for i, level in enumerate(levels):
        name = index_level_name(level, i, names + index_names)
        if isinstance(df.index, pd.RangeIndex) and preserve_index is None:
            descriptors.append(range_descriptor(df.index))  # metadata only
            continue
        descriptors.append(name)
        index_names.append(name)
        index_values.append(level)
    return names, series, index_values, descriptors, [str(n) for n in names] + index_names


def _parts_given(df: Any, given: dict[str, Field], preserve_index: bool | None) -> _Parts:
    """As :func:`_parts`, for the columns and index levels ``given`` names, in its order."""
    import pandas as pd

    labels = {str(label_to_string(c)): i for i, c in enumerate(df.columns)}
    level_names = [None if n is None else str(label_to_string(n)) for n in df.index.names]
    names: list[Any] = []
    series: list[Any] = []
    index_values: list[Any] = []
    index_names: list[str] = []
    for name in given:
        if name in labels:
            names.append(name)
            series.append(df.iloc[:, labels[name]])
            continue
        if name in level_names:
            pos = level_names.index(name)
        elif _is_generated_index_name(name) and int(name[14:-2]) < df.index.nlevels:
            pos = int(name[14:-2])
        else:
            raise SchemaError(f"schema names column {name!r}, which the frame has neither as a column "
                              "nor as an index level")
        if preserve_index is False:
            raise SchemaError(f"schema names index level {name!r} but preserve_index is False")
        if isinstance(df.index, pd.RangeIndex) and preserve_index is None:
            raise SchemaError(f"schema names the RangeIndex {name!r}, which is stored as metadata only: "
                              "pass preserve_index=True to store it as a column")
        index_values.append(df.index.get_level_values(pos))
        index_names.append(name)
    return names, series, index_values, list(index_names), names + index_names


def _given_fields(schema: Any) -> dict[str, Field]:
    if schema is None:
        return {}
    if not isinstance(schema, Schema):
        schema = Schema.from_types(dict(schema))
    return {f.name: f for f in schema.fields}


def _convert(name: str, values: Any, given: Field | None) -> tuple[Column, ArrowField]:
    """One Series or Index as a Column plus the Arrow field pyarrow would make of it."""
    col, hint = _convert_given(name, values, given) if given is not None else _convert_values(name, values)
    n = natural_field(col.field)
    if hint is None:
        if n is None:
            raise SchemaError(f"column {name!r}: type {col.field.type_name} has no Arrow equivalent")
        return col, n
    return col, hint if n is None else replace(hint, name=name, nullable=n.nullable)


def _convert_given(name: str, values: Any, given: Field) -> tuple[Column, ArrowField | None]:
    """A column of the type the caller's schema gives it (converted as ``Table.from_pydict`` converts
    values), keeping a time zone or a duration unit where the schema's type can hold them."""
    import pandas as pd

    dtype = values.dtype
    null = np.asarray(pd.isna(values), dtype=bool)
    if isinstance(dtype, np.dtype) and dtype.kind in "biufmM":
        raw: Any = np.ma.MaskedArray(values.to_numpy(), null)
    else:
        raw = [None if m else v for v, m in zip(values.tolist(), null.tolist())]
    col = column_from_values(name, raw, given)
    lt = given.logical_type
    if isinstance(dtype, pd.DatetimeTZDtype) and lt is not None and lt.kind == "TIMESTAMP" and lt.utc:
        return col, ArrowField(name, timestamp(lt.unit or "us", tz_name(dtype.tz)))
    if isinstance(dtype, np.dtype) and dtype.kind == "m" and lt is None and given.physical_type == PhysicalType.INT64:
        return col, ArrowField(name, duration(_unit(values.to_numpy())))
    return col, None


def _convert_values(name: str, values: Any) -> tuple[Column, ArrowField | None]:
    import pandas as pd

    dtype = values.dtype
    if isinstance(dtype, pd.SparseDtype):
        raise SchemaError(f"column {name!r}: sparse data is not supported")
    if isinstance(dtype, pd.CategoricalDtype):
        return _categorical(name, values)
    if isinstance(dtype, pd.DatetimeTZDtype):
        naive = np.asarray(values.array.tz_convert("UTC").tz_localize(None))
        return _datetimes(name, naive, tz_name(dtype.tz))
    if isinstance(dtype, pd.ArrowDtype):
        import pyarrow as pa

        arr = pa.array(values.array)
        hints = from_pyarrow(pa.schema([pa.field(name, arr.type)]))
        return arrow_column(pa.field(name, arr.type), arr), hints.fields[0] if hints is not None else None
    if isinstance(dtype, pd.StringDtype):
        hint = ArrowField(name, ArrowType("large_utf8" if dtype.storage == "pyarrow" else "utf8"))
        if dtype.storage == "pyarrow":  # pyarrow holds the strings already: take its buffers
            import pyarrow as pa

            strings = pa.array(values.array)
            return arrow_column(pa.field(name, strings.type), strings), hint
        objs = values.array.to_numpy(dtype=object, na_value=None)
        return column_from_values(name, objs, make_field(name, "string")), hint
    if isinstance(values.array, (pd.arrays.IntegerArray, pd.arrays.FloatingArray, pd.arrays.BooleanArray)):
        arr = values.array
        data = arr.to_numpy(dtype=dtype.numpy_dtype, na_value=dtype.numpy_dtype.type(0))
        return column_from_values(name, np.ma.MaskedArray(data, np.asarray(arr.isna()))), None
    if isinstance(dtype, np.dtype):
        arr = values.to_numpy()
        k = dtype.kind
        if k == "M":
            return _datetimes(name, arr, None)
        if k == "m":
            return _durations(name, arr)
        if k == "f":
            return column_from_values(name, np.ma.MaskedArray(arr, np.isnan(arr))), None
        if k in "biu":
            return column_from_values(name, arr), None
        if k == "O":
            return _objects(name, arr)
    raise SchemaError(f"column {name!r}: cannot store pandas dtype {dtype}")


def _unit(arr: np.ndarray) -> str:
    unit = np.datetime_data(arr.dtype)[0]
    if unit not in ("s", "ms", "us", "ns"):
        raise SchemaError(f"unsupported datetime unit {unit!r}")
    return unit


def _datetimes(name: str, arr: np.ndarray, tz: str | None) -> tuple[Column, ArrowField]:
    """UTC (or naive) datetime64 values; seconds are stored as milliseconds, as pyarrow does."""
    unit = _unit(arr)
    mask = np.isnat(arr)
    ints = arr.view(np.int64).copy()
    ints[mask] = 0
    stored = "ms" if unit == "s" else unit
    if unit == "s":
        ints *= 1000
    f = make_field(name, f"timestamp[{stored}{', UTC' if tz else ''}]")
    return Column(f, ints, mask), ArrowField(name, timestamp(unit, tz))


def _durations(name: str, arr: np.ndarray) -> tuple[Column, ArrowField]:
    """timedelta64 values as INT64 counts of their unit, with the Arrow duration type to say so."""
    unit = _unit(arr)
    mask = np.isnat(arr)
    ints = arr.view(np.int64).copy()
    ints[mask] = 0
    return Column(make_field(name, "int64"), ints, mask), ArrowField(name, duration(unit))


def _null_column(name: str, n: int) -> Column:
    """A column of ``n`` nulls of Arrow's null type (Parquet's UNKNOWN annotation), as pyarrow
    stores an object column holding no values."""
    return Column(Field(name, PhysicalType.INT32, LogicalType("UNKNOWN")), np.zeros(n, np.int32), np.ones(n, bool))


def _objects(name: str, arr: np.ndarray) -> tuple[Column, ArrowField | None]:
    """An object column: None, NaN, NaT and pd.NA are nulls; the type is inferred as pyarrow infers it."""
    import pandas as pd

    null = np.asarray(pd.isna(arr), dtype=bool)
    kind = pd.api.types.infer_dtype(arr, skipna=True)
    vals = arr.copy()
    vals[null] = None
    if kind == "empty":
        return _null_column(name, len(arr)), None
    if kind in ("floating", "mixed-integer-float", "integer-na"):
        floats = np.where(null, 0.0, vals).astype(np.float64)
        return column_from_values(name, np.ma.MaskedArray(floats, null)), None
    if kind in ("timedelta", "timedelta64"):
        return _durations(name, np.asarray(pd.to_timedelta(vals).as_unit("us")))
    if kind in ("datetime", "datetime64"):
        first = vals[~null][0]
        tz = getattr(first, "tzinfo", None)
        if tz is not None:
            stamps = pd.to_datetime(vals, utc=True).tz_localize(None).as_unit("us")
            return _datetimes(name, np.asarray(stamps), tz_name(tz))
    if kind in ("mixed", "mixed-integer", "unknown-array"):
        try:
            items = vals.tolist()
            if looks_nested(items):  # lists and dicts: nested columns (durations inside keep their type)
                return nested_column(name, items)
            return column_from_values(name, items), None
        except SchemaError:
            raise SchemaError(f"column {name!r}: values of mixed types cannot be stored") from None
    return column_from_values(name, vals), None


def _categorical(name: str, values: Any) -> tuple[Column, ArrowField]:
    """A categorical as its values plus the categories as the dictionary, and Arrow's dictionary type."""
    dtype = values.dtype
    codes = np.asarray(values.array.codes)
    cats, cat_field = _convert(name, dtype.categories, None)
    if type(cats) is not Column:
        raise SchemaError(f"column {name!r}: categories of {cat_field.type.kind} values are not supported")
    null = codes < 0
    if len(cats) == 0:
        vals = column_from_values(name, [None] * len(codes), cats.field)
    else:
        vals = cats.take(np.where(null, 0, codes))
    arrow = replace(cat_field, dictionary=Dictionary(0, codes.dtype.itemsize * 8, True, bool(dtype.ordered)))
    return DictionaryColumn(vals.field, vals.values, null, cats.values), arrow


# ---------------------------------------------------------------------------
# columns -> pandas
# ---------------------------------------------------------------------------
_NUMPY_NAMES = {"int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64", "float16", "float32",
                "float64", "object", "bool"}


def dataframe(columns: Sequence[Column], metadata: Mapping[str, str], hints: ArrowSchema | None,
              num_rows: int) -> Any:
    """The DataFrame pyarrow's ``to_pandas()`` gives for the same data and metadata: a table's ``columns``
    (of ``num_rows`` rows), its key-value ``metadata`` and the Arrow types it carries (``hints``)."""
    import pandas as pd

    arrow = {c.field.name: _arrow_field(c.field, hints) for c in columns}
    meta = _pandas_metadata(dict(metadata))
    columns_meta = meta.get("columns", []) if meta else []
    by_field = {c.get("field_name", c.get("name")): c for c in columns_meta if isinstance(c, dict)}
    tz_override = _metadata_time_zones(columns_meta, arrow)
    remaining = list(columns)
    index_arrays: list[Any] = []
    index_names: list[Any] = []
    for descr in (meta or {}).get("index_columns", []):
        if isinstance(descr, str):
            pos = next((i for i, c in enumerate(remaining) if c.field.name == descr), None)
            if pos is None:
                continue
            col = remaining.pop(pos)
            level = _to_pandas_values(col, arrow[col.field.name], None, tz_override.get(descr))
            if _is_object(level):
                level = pd.Index(level, dtype=object)
            logical = by_field.get(descr, {}).get("name")
            index_arrays.append(level)
            index_names.append(None if logical == descr and _is_generated_index_name(descr) else logical)
        elif isinstance(descr, dict) and descr.get("kind") == "range":
            rng = pd.RangeIndex(descr["start"], descr["stop"], step=descr["step"], name=descr.get("name"))
            if len(rng) != num_rows:
                continue  # metadata of another length (a slice, a filtered read): pyarrow drops it too
            index_arrays.append(rng)
            index_names.append(descr.get("name"))
    if len(index_arrays) > 1:
        index = pd.MultiIndex.from_arrays(index_arrays, names=index_names)
    elif index_arrays:
        index = index_arrays[0] if isinstance(index_arrays[0], pd.Index) else pd.Index(index_arrays[0],
                                                                                        name=index_names[0])
    else:
        index = pd.RangeIndex(num_rows)
    data = {}
    for i, col in enumerate(remaining):
        name = col.field.name
        ext = _extension_dtype(by_field.get(name), arrow[name]) if meta else None
        data[i] = _to_pandas_values(col, arrow[name], ext, tz_override.get(name))
    # object arrays go in as they are: pandas would infer its string dtype for strings pyarrow leaves as objects
    df = pd.DataFrame({i: pd.Series(v, index=index, dtype=object, copy=False) if _is_object(v) else v
                       for i, v in data.items()}, index=index)
    names = [by_field.get(c.field.name, {}).get("name", c.field.name) if meta else c.field.name for c in remaining]
    df.columns = column_index(names, (meta or {}).get("column_indexes", []))
    attrs = (meta or {}).get("attributes")
    if isinstance(attrs, dict):
        df.attrs = attrs
    return df


def _is_object(values: Any) -> bool:
    return isinstance(values, np.ndarray) and values.dtype == object


def _arrow_field(f: Field, hints: ArrowSchema | None) -> ArrowField | None:
    n = natural_field(f, written=False)
    if n is None:
        return None
    return effective_field(n, hints.field(f.name) if hints is not None else None)


def _pandas_metadata(metadata: dict[str, str]) -> dict[str, Any] | None:
    text = metadata.get(PANDAS_KEY)
    if not text:
        return None
    try:
        meta = json.loads(text)
    except ValueError:
        return None  # not pandas' metadata after all: the columns alone are read
    return meta if isinstance(meta, dict) else None


def _is_generated_index_name(name: str) -> bool:
    return name.startswith("__index_level_") and name.endswith("__") and name[14:-2].isdigit()


def _metadata_time_zones(columns_meta: list[Any], arrow: dict[str, ArrowField | None]) -> dict[str, str]:
    """Columns whose pandas metadata names another zone than their Arrow type: pyarrow then takes
    the metadata's zone, in nanoseconds."""
    out = {}
    for c in columns_meta:
        if not isinstance(c, dict) or c.get("pandas_type") != "datetimetz":
            continue
        name = c.get("field_name") or c.get("name")
        tz = (c.get("metadata") or {}).get("timezone")
        af = arrow.get(name) if isinstance(name, str) else None
        if isinstance(name, str) and isinstance(tz, str) and af is not None and af.type.kind == "timestamp" and af.type.tz != tz:
            out[name] = tz
    return out


def _extension_dtype(col_meta: dict[str, Any] | None, af: ArrowField | None) -> Any:
    """The pandas extension dtype the metadata's ``numpy_type`` names (Int64, boolean, string...)."""
    import pandas as pd

    if not col_meta:
        return None
    numpy_type = col_meta.get("numpy_type")
    if not isinstance(numpy_type, str) or numpy_type in _NUMPY_NAMES:
        return None
    try:
        dtype = pd.api.types.pandas_dtype(numpy_type)
    except (TypeError, ValueError):
        return None
    if not isinstance(dtype, pd.api.extensions.ExtensionDtype) or not hasattr(dtype, "__from_arrow__"):
        return None
    if isinstance(dtype, pd.StringDtype) and af is not None and af.dictionary is not None:
        return None  # a dictionary-encoded column becomes a categorical instead
    return dtype


def _uses_string_dtype() -> bool:
    import pandas as pd

    if int(pd.__version__.split(".")[0]) >= 3:
        return True
    try:
        return bool(pd.get_option("future.infer_string"))
    except (KeyError, ValueError):  # pragma: no cover - pandas without the option
        return False


def _to_pandas_values(col: Column, af: ArrowField | None, ext: Any, tz_override: str | None) -> Any:
    """One column as the array pyarrow's to_pandas makes of it."""
    import pandas as pd

    if af is None:
        return col.to_numpy()  # unknown types: Python objects
    if af.children:  # nested: Python objects, their members' Arrow types applied (zones, durations)
        return object_array(typed_pylist(col, af))
    t = af.type
    k = t.kind
    if af.dictionary is not None:
        return _to_categorical(col, af)
    if ext is not None:
        got = _to_extension(col, ext)
        if got is not None:
            return got
    if k in ("utf8", "large_utf8", "utf8_view") and not af.meta("ARROW:extension:name") and _uses_string_dtype():
        return _strings(col, pd.StringDtype(na_value=np.nan))
    if k == "timestamp":
        unit = ("s", "ms", "us", "ns")[t.unit]
        raw = col.values.astype(np.int64, copy=False) if col.field.physical_type != 3 else None
        out = col.to_numpy() if raw is None else raw.view(f"datetime64[{unit}]").copy()
        if col.mask is not None:
            out[col.mask] = np.datetime64("NaT")
        tz = tz_override or t.tz
        if tz_override:
            out = out.astype("datetime64[ns]")
        if tz is None:
            return out
        return pd.array(out.view(np.int64), dtype=pd.DatetimeTZDtype(np.datetime_data(out.dtype)[0],
                                                                     tz_from_name(tz)))
    if k == "duration":
        out = col.values.astype(np.int64, copy=False).view(f"timedelta64[{('s', 'ms', 'us', 'ns')[t.unit]}]").copy()
        if col.mask is not None:
            out[col.mask] = np.timedelta64("NaT")
        return out
    if k == "int" and col.mask is not None:
        # pyarrow gives float64 with NaN for nulls; where float64 would round a value, keep exact ints
        full = Column(col.field.with_nullable(True), col.values).to_numpy()
        present = full[~col.mask]
        if present.size and float(np.abs(present.astype(np.float64)).max()) >= _MAX_EXACT_FLOAT_INT:
            return col.to_numpy()
        out = full.astype(np.float64)
        out[col.mask] = np.nan
        return out
    if k == "time":
        return _times(col, ("s", "ms", "us", "ns")[t.unit])
    if k == "binary" and col.field.logical_type is not None:  # ENUM, BSON: bytes, as pyarrow gives them
        return Column(replace(col.field, logical_type=None), col.values, col.mask).to_numpy()
    if k == "null":
        return np.full(len(col), None, dtype=object)
    if k == "date" and col.field.logical_type is not None and col.field.logical_type.kind == "DATE":
        return date_objects(col.field.name, col.values, col.mask)
    return col.to_numpy()


def _to_extension(col: Column, dtype: Any) -> Any:
    """Masked (Int64, Float64, boolean) and string dtypes, built from the values and null mask."""
    import pandas as pd

    if isinstance(dtype, pd.StringDtype):
        if col.field.logical_type is None or col.field.logical_type.kind not in ("STRING", "JSON", "ENUM"):
            return None
        return _strings(col, dtype)
    np_dtype = getattr(dtype, "numpy_dtype", None)
    if np_dtype is None or np_dtype.kind not in "biuf":
        return None
    mask = col.mask if col.mask is not None else np.zeros(len(col), bool)
    raw = Column(col.field.with_nullable(True), col.values).to_numpy()  # logical values, nulls as placeholders
    if raw.dtype.kind not in "biuf":
        return None
    with np.errstate(invalid="ignore", over="ignore"):
        data = raw.astype(np_dtype)
    if raw.dtype.kind != np_dtype.kind and not np.array_equal(data[~mask], raw[~mask]):
        return None  # the dtype cannot hold these values: convert them as pyarrow does without it
    if np_dtype.kind == "b":
        return pd.arrays.BooleanArray(data, mask)
    if np_dtype.kind == "f":
        return pd.arrays.FloatingArray(data, mask)
    return pd.arrays.IntegerArray(data, mask)


def _strings(col: Column, dtype: Any) -> Any:
    import pandas as pd

    if getattr(dtype, "storage", None) == "pyarrow":  # pandas keeps these in pyarrow: hand it the buffers
        import pyarrow as pa

        if isinstance(col.values, BinaryArray):
            # as large_string, which pandas keeps (it casts a string array, copying its offsets to 64 bits):
            # the int64 offsets are Arrow's as they are
            c = col.values.compact()
            arr = pa.Array.from_buffers(pa.large_string(), len(c), [
                validity_buffer(col.mask), pa.py_buffer(np.ascontiguousarray(c.offsets, np.int64)),
                pa.py_buffer(c.data)])
        else:
            arr = Column(replace(col.field, logical_type=LogicalType("STRING")), col.values, col.mask).to_arrow()
        try:
            arr.validate(full=True)
        except pa.ArrowInvalid:
            raise CorruptFileError(f"column {col.field.name!r}: a STRING value is not UTF-8") from None
        return dtype.__from_arrow__(arr)
    try:
        return pd.array(col.to_numpy(), dtype=dtype)
    except UnicodeError:
        raise CorruptFileError(f"column {col.field.name!r}: a STRING value is not UTF-8") from None


def _times(col: Column, unit: str) -> np.ndarray:
    """TIME values as datetime.time objects. Nanoseconds that are not whole microseconds, which
    datetime.time cannot hold, raise :class:`~pqbloom.errors.UnsupportedError` (pyarrow refuses them too)."""
    per_us = {"s": 1_000_000, "ms": 1000, "us": 1, "ns": 0}[unit]
    ints = col.values.astype(np.int64)
    us = ints // 1000 if per_us == 0 else ints * per_us
    bad = (us < 0) | (us >= 86_400_000_000)
    if col.mask is not None:
        bad &= ~col.mask
    if bad.any():
        raise CorruptFileError(f"column {col.field.name!r}: TIME value {int(ints[bad][0])} is outside a day")
    if per_us == 0:
        lost = ints % 1000 != 0
        if col.mask is not None:
            lost &= ~col.mask
        if lost.any():
            raise UnsupportedError(f"column {col.field.name!r}: TIME value {int(ints[lost][0])} (ns) is not a whole "
                                   f"number of microseconds, which datetime.time holds; use to_arrow() or to_numpy()")
    return time_objects(us, col.mask)


def _to_categorical(col: Column, af: ArrowField) -> Any:
    """A categorical whose categories are the column's dictionary (pyarrow's: the dictionary pages
    joined, then values seen only in plain pages), else its distinct values in order of appearance."""
    import pandas as pd

    dictionary = getattr(col, "dictionary", None)
    if dictionary is None:
        dictionary = with_dictionary(col, []).dictionary  # type: ignore[attr-defined]
    codes = dictionary_codes(col, dictionary, -1)
    cats = Column(col.field.with_nullable(True), dictionary).to_numpy()
    as_str = len(cats) and af.type.kind != "binary" and _uses_string_dtype()  # no values: object, as pyarrow
    categories = pd.Index(list(cats), dtype="str" if as_str else object)
    ordered = bool(af.dictionary.ordered) if af.dictionary is not None else False
    return pd.Categorical.from_codes(codes, categories=categories, ordered=ordered)
