"""pandas' metadata (the ``"pandas"`` key-value entry), written and read as pyarrow does.

pyarrow stores, next to a frame's columns, a JSON document describing how to rebuild the frame:
which columns are index levels (or a RangeIndex as a range), each column's pandas and numpy
dtype, the column labels' own index, and ``DataFrame.attrs``. This module builds that document
from a frame (:func:`build_metadata`) and rebuilds the column labels from it
(:func:`column_index`); :mod:`pqbloom.table.pandas` does the rest.
"""

from __future__ import annotations

import ast
import datetime as _dt
import decimal
import json
from collections.abc import Mapping
from typing import Any

import numpy as np

from .._version import __version__
from ..errors import SchemaError
from .arrow_schema import EXTENSION_NAME_KEY, ArrowField

__all__ = ["PANDAS_KEY", "stored_index_columns", "build_metadata", "column_index", "index_level_name", "range_descriptor",
           "logical_type", "tz_name", "tz_from_name", "label_to_string"]

PANDAS_KEY = "pandas"

_NUMPY_LOGICAL = {np.bool_: "bool", np.int8: "int8", np.int16: "int16", np.int32: "int32", np.int64: "int64",
                  np.uint8: "uint8", np.uint16: "uint16", np.uint32: "uint32", np.uint64: "uint64",
                  np.float32: "float32", np.float64: "float64", np.str_: "string", np.bytes_: "bytes"}


def tz_name(tz: Any) -> str:
    """Arrow's name of a tzinfo: an IANA key, ``UTC``, or a fixed offset such as ``+05:30``."""
    key = getattr(tz, "key", None) or getattr(tz, "zone", None)  # zoneinfo, pytz
    if isinstance(key, str):
        return key
    if type(tz).__name__ == "tzutc":  # dateutil
        return "UTC"
    path = getattr(tz, "_filename", None)  # dateutil's tzfile keeps only the file it came from
    if isinstance(path, str) and path:
        return path.split("zoneinfo/", 1)[-1].lstrip("/")
    if isinstance(tz, _dt.tzinfo):
        off = tz.utcoffset(None)
        if off is not None:
            if not off:
                return "UTC"
            sign = "-" if off < _dt.timedelta(0) else "+"
            minutes = abs(int(off.total_seconds())) // 60
            return f"{sign}{minutes // 60:02d}:{minutes % 60:02d}"
    raise SchemaError(f"cannot name the time zone {tz!r}")


def tz_from_name(name: str) -> _dt.tzinfo:
    """The tzinfo pyarrow gives pandas for an Arrow time zone name (zoneinfo, or a fixed offset)."""
    import zoneinfo

    if len(name) == 6 and name[0] in "+-" and name[3] == ":" and name[1:3].isdigit() and name[4:].isdigit():
        off = _dt.timedelta(hours=int(name[1:3]), minutes=int(name[4:]))
        return _dt.timezone(-off if name[0] == "-" else off) if off else _dt.timezone.utc
    try:
        return zoneinfo.ZoneInfo(name)
    except (zoneinfo.ZoneInfoNotFoundError, ValueError):
        # the instants are right in any zone; UTC is the one every reader knows
        return zoneinfo.ZoneInfo("UTC")


def logical_type(af: ArrowField) -> str:
    """pandas metadata's ``pandas_type`` of a column of Arrow field ``af``."""
    if af.dictionary is not None:
        return "categorical"
    if af.meta(EXTENSION_NAME_KEY):
        return "object"
    t = af.type
    k = t.kind
    if k == "int":
        return f"{'' if t.signed else 'u'}int{t.bit_width}"
    if k == "float":
        return ("float16", "float32", "float64")[t.precision] if 0 <= t.precision <= 2 else "object"
    if k == "list" and af.children:
        return f"list[{logical_type(af.children[0])}]"
    if k == "timestamp":
        return "datetimetz" if t.tz is not None else "datetime"
    return {"null": "empty", "bool": "bool", "date": "date", "time": "time", "binary": "bytes",
            "fixed_size_binary": "bytes", "utf8": "unicode", "decimal": "decimal"}.get(k, "object")


def _dtype_info(values: Any) -> tuple[str, dict[str, Any] | None]:
    """(``numpy_type``, ``metadata``) of a Series or Index: categoricals give their codes' dtype, time
    zone aware datetimes their unit and zone."""
    dtype = values.dtype
    if str(dtype) == "category":
        cats = getattr(values, "cat", values)
        return str(cats.codes.dtype), {"num_categories": len(cats.categories), "ordered": bool(cats.ordered)}
    if hasattr(dtype, "tz"):
        return f"datetime64[{dtype.unit}]", {"timezone": tz_name(dtype.tz)}
    return str(dtype), None


def _column_metadata(values: Any, name: Any, af: ArrowField, field_name: str) -> dict[str, Any]:
    logical = logical_type(af)
    numpy_type, extra = _dtype_info(values)
    if logical == "decimal":
        numpy_type, extra = "object", {"precision": af.type.precision, "scale": af.type.scale}
    return {"name": name, "field_name": field_name, "pandas_type": logical, "numpy_type": numpy_type,
            "metadata": extra}


def _logical_from_numpy(level: Any) -> str:
    import pandas as pd

    got = _NUMPY_LOGICAL.get(level.dtype.type)
    if got is not None:
        return got
    if hasattr(level.dtype, "tz"):
        return "datetimetz"
    if str(level.dtype).startswith("datetime64"):
        return str(level.dtype)
    inferred = pd.api.types.infer_dtype(level, skipna=True)
    return "unicode" if inferred == "string" else str(inferred)


def _simple_index_descriptor(level: Any, name: Any) -> dict[str, Any]:
    numpy_type, extra = _dtype_info(level)
    pandas_type = _logical_from_numpy(level)
    if pandas_type == "unicode":
        extra = {"encoding": "UTF-8"}
    return {"name": name, "field_name": name, "pandas_type": pandas_type, "numpy_type": numpy_type,
            "metadata": extra}


def _json_name(name: Any) -> Any:
    try:
        json.dumps(name)
        return name
    except TypeError:
        return str(name)


def range_descriptor(index: Any) -> dict[str, Any]:
    """A RangeIndex stored as metadata only."""
    return {"kind": "range", "name": _json_name(index.name), "start": int(index.start), "stop": int(index.stop),
            "step": int(index.step)}


def label_to_string(name: Any) -> Any:
    """A column label as pyarrow stores it: str kept, bytes decoded, tuples (MultiIndex) as their repr."""
    if isinstance(name, str) or name is None or (isinstance(name, float) and np.isnan(name)):
        return name
    if isinstance(name, bytes):
        return name.decode("utf-8")
    if isinstance(name, tuple):
        return str(tuple(label_to_string(n) for n in name))
    return str(name)


def index_level_name(level: Any, i: int, taken: list[Any]) -> str:
    """The column name an index level is stored under: its own name, or ``__index_level_<i>__``."""
    if level.name is not None and level.name not in taken:
        return str(label_to_string(level.name))
    j = i
    while f"__index_level_{j}__" in taken:
        j += 1
    return f"__index_level_{j}__"


def build_metadata(df: Any, names: list[Any], field_names: list[str], series: list[Any], index_values: list[Any],
                   descriptors: list[Any], arrow_fields: list[ArrowField], preserve_index: bool | None) -> str:
    """The JSON text of pandas' metadata for ``df``, as ``pyarrow.Table.from_pandas`` writes it
    (only ``creator`` differs)."""
    import pandas as pd

    columns = [_column_metadata(s, n, af, fn) for s, n, fn, af in zip(series, names, field_names, arrow_fields)]
    index_meta: list[dict[str, Any]] = []
    column_indexes: list[dict[str, Any]] = []
    if preserve_index is not False:
        stored = [d for d in descriptors if isinstance(d, str)]
        for level, descr, af in zip(index_values, stored, arrow_fields[len(series):]):
            index_meta.append(_column_metadata(level, label_to_string(level.name), af, descr))
        levels = getattr(df.columns, "levels", [df.columns])
        level_names = getattr(df.columns, "names", [df.columns.name])
        column_indexes = [_simple_index_descriptor(lv, nm) for lv, nm in zip(levels, level_names)]
    else:
        descriptors = []
    attributes = df.attrs
    try:
        json.dumps(attributes)
    except (TypeError, ValueError):
        attributes = {}
    return json.dumps({
        "index_columns": descriptors,
        "column_indexes": column_indexes,
        "columns": columns + index_meta,
        "attributes": attributes,
        "creator": {"library": "pqbloom", "version": __version__},
        "pandas_version": pd.__version__,
    })


# ---------------------------------------------------------------------------
# reading
# ---------------------------------------------------------------------------
_PANDAS_TO_NUMPY: dict[str, Any] = {"date": "datetime64[D]", "datetime": "datetime64[ns]",
                                    "datetimetz": "datetime64[ns]", "unicode": "str", "bytes": np.bytes_,
                                    "string": "str", "integer": np.int64, "floating": np.float64,
                                    "decimal": np.object_, "empty": np.object_}


def _numpy_of(pandas_type: str) -> Any:
    got = _PANDAS_TO_NUMPY.get(pandas_type)
    if got is not None:
        return got
    if "mixed" in pandas_type:
        return np.object_
    return np.dtype(pandas_type)


def column_index(names: list[Any], column_indexes: list[Any]) -> Any:
    """The frame's column labels from the stored names and the metadata's ``column_indexes``, with
    each level's original dtype (int labels, tuples of a MultiIndex, time zones...); plain labels when
    the metadata cannot be applied."""
    import pandas as pd

    try:
        if len(column_indexes) > 1:
            columns = pd.MultiIndex.from_tuples([ast.literal_eval(n) for n in names],
                                                names=[ci["name"] for ci in column_indexes])
        else:
            columns = pd.Index(names, name=column_indexes[0]["name"] if column_indexes else None)
        return _restore_levels(columns, column_indexes) if column_indexes else columns
    except (ValueError, TypeError, KeyError, SyntaxError, AttributeError, IndexError, decimal.InvalidOperation):
        return pd.Index(names)


def _restore_levels(columns: Any, column_indexes: list[dict[str, Any]]) -> Any:
    import pandas as pd

    levels = getattr(columns, "levels", None) or [columns]
    labels = getattr(columns, "codes", None) or [None]
    new_levels = []
    for i, lv in enumerate(levels):
        level: Any = lv
        ci: dict[str, Any] = column_indexes[i] if i < len(column_indexes) else {}
        pandas_type = ci.get("pandas_type", str(level.dtype))
        numpy_type = ci.get("numpy_type")
        dtype = _numpy_of(pandas_type)
        if dtype is np.bytes_:
            level = level.map(lambda s: s.encode("utf-8"))
        elif pandas_type == "datetimetz":
            tz = tz_from_name(column_indexes[0]["metadata"]["timezone"])
            level = pd.to_datetime(level, utc=True).tz_convert(tz)
            level = level.as_unit(np.datetime_data(str(numpy_type))[0])
        elif pandas_type == "decimal":
            level = pd.Index([decimal.Decimal(i) for i in level])
        elif level.dtype == "str" and numpy_type == "object" and (
                "mixed" in pandas_type or pandas_type in ("unicode", "string")):
            new_levels.append(level)  # pandas 3 keeps its string dtype for labels, as pyarrow does
            continue
        elif level.dtype != dtype:
            level = level.astype(dtype)
        if level.dtype != numpy_type and pandas_type != "datetimetz":
            level = level.astype(numpy_type)
        new_levels.append(level)
    if len(new_levels) > 1:
        return pd.MultiIndex(new_levels, labels, names=columns.names)
    return pd.Index(new_levels[0], dtype=new_levels[0].dtype, name=columns.name)


def stored_index_columns(metadata: Mapping[str, str] | None) -> list[str]:
    """The columns pandas' metadata (the ``"pandas"`` key of ``metadata``) names as the stored index
    levels (a ``RangeIndex`` is described, not stored: it has none), as pyarrow's
    ``read_table(use_pandas_metadata=True)`` adds them to the columns read."""
    text = (metadata or {}).get(PANDAS_KEY)
    if not text:
        return []
    try:
        meta = json.loads(text)
    except ValueError:
        return []
    return [c for c in meta.get("index_columns", []) if isinstance(c, str)] if isinstance(meta, dict) else []
