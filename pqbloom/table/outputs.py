"""Physical -> outputs: a column's physical values as numpy, Python objects and pyarrow arrays, in their
logical types, as pyarrow converts the same file. Functions over (field, values, null mask), so that
the column classes (:mod:`pqbloom.table.column`) call them without this module knowing the classes.
"""

from __future__ import annotations

import datetime as _dt
import uuid
from collections.abc import Sequence
from typing import Any

import numpy as np

from ..arrays import BinaryArray
from ..errors import CorruptFileError, UnsupportedError
from ..format.enums import PhysicalType
from ..kernels.decimals import decimal_buffer
from ..memory import pool
from ..schema import Field
from .decimals import arrow_decimal_width
from .int96 import int96_to_ns
from .objects import DECIMAL_CONTEXT, date_objects, decimal_objects, time_objects

__all__ = ["logical_numpy", "to_numpy", "to_pylist", "to_arrow", "arrow_field", "nested_to_arrow", "validity_buffer",
           "zone_info", "in_zone", "durations_to_py", "DECIMAL_CONTEXT"]


def logical_numpy(f: Field, v: Any, mask: np.ndarray | None = None) -> np.ndarray:
    """Physical values ``v`` of field ``f`` as numpy in their logical type (nulls not applied; ``mask``
    marks the null slots, whose placeholders are not range-checked)."""
    lt = f.logical_type
    kind = lt.kind if lt is not None else None
    p = f.physical_type
    if p == PhysicalType.INT96:
        return int96_to_ns(v, mask, f.name).view("datetime64[ns]")
    if kind == "DATE":
        return v.astype(np.int64).view("datetime64[D]")
    if kind == "TIMESTAMP":
        return v.astype(np.int64).view(f"datetime64[{lt.unit}]")  # type: ignore[union-attr]
    if kind == "TIME":
        return v.astype(np.int64).view(f"timedelta64[{lt.unit}]")  # type: ignore[union-attr]
    if kind == "INTEGER":
        bits, signed = lt.bit_width or 64, lt.signed  # type: ignore[union-attr]
        # a view when the width is the physical one (as for columns without an annotation): no copy
        if not signed:
            u = v.view(np.uint32 if p == PhysicalType.INT32 else np.uint64)
            return u.astype({8: np.uint8, 16: np.uint16, 32: np.uint32, 64: np.uint64}[bits], copy=False)
        return v.astype({8: np.int8, 16: np.int16, 32: np.int32, 64: np.int64}[bits], copy=False)
    if kind == "FLOAT16":
        return np.ascontiguousarray(v).view(np.float16).reshape(-1)
    return v


def to_numpy(f: Field, values: Any, mask: np.ndarray | None) -> np.ndarray:
    """A column's values as numpy in their logical type; nulls become None (object arrays), NaN or NaT."""
    kind = f.logical_type.kind if f.logical_type is not None else None
    if kind == "UNKNOWN":  # the Null logical type: every value is null, whatever is stored
        return np.full(len(values), None, dtype=object)
    if kind == "DECIMAL":
        return decimal_objects(f, values, mask)
    fixed = f.physical_type == PhysicalType.FIXED_LEN_BYTE_ARRAY
    if isinstance(values, BinaryArray) or fixed and kind != "FLOAT16":
        return np.array(to_pylist(f, values, mask), dtype=object)
    out = logical_numpy(f, values, mask)
    if mask is None:
        return out
    if out.dtype.kind in "mM":
        out = out.copy()
        out[mask] = np.datetime64("NaT") if out.dtype.kind == "M" else np.timedelta64("NaT")
        return out
    if out.dtype.kind == "f":
        out = out.astype(np.float64 if out.dtype.itemsize > 4 else out.dtype, copy=True)
        out[mask] = np.nan
        return out
    obj = out.astype(object)
    obj[mask] = None
    return obj


def to_pylist(f: Field, v: Any, mask: np.ndarray | None) -> list[Any]:
    """A column's values as Python objects in their logical type (as pyarrow's ``as_py`` gives them);
    None for nulls."""
    lt = f.logical_type
    kind = lt.kind if lt is not None else None
    p = f.physical_type
    if kind == "UNKNOWN":  # the Null logical type: every value is null, whatever is stored (as pyarrow reads it)
        return [None] * len(v)
    if kind == "DECIMAL":
        return decimal_objects(f, v, mask).tolist()  # type: ignore[no-any-return]
    if kind == "DATE":
        return date_objects(f.name, v, mask).tolist()  # type: ignore[no-any-return]
    if isinstance(v, BinaryArray):
        if kind in ("STRING", "JSON", "ENUM"):
            vals = [b.decode("utf-8", errors="surrogateescape") for b in v]
        else:
            vals = v.to_pylist()
    elif p == PhysicalType.FIXED_LEN_BYTE_ARRAY and kind != "FLOAT16":
        raw = [bytes(r) for r in np.ascontiguousarray(v).reshape(len(v), -1)] if len(v) else []
        if kind == "UUID":
            vals = [uuid.UUID(bytes=b) for b in raw]
        else:
            vals = raw
    elif kind == "TIMESTAMP" or p == PhysicalType.INT96:
        ints = int96_to_ns(v, mask, f.name) if p == PhysicalType.INT96 else v
        unit: str = "ns" if p == PhysicalType.INT96 or lt is None or lt.unit is None else lt.unit
        vals = _timestamps_to_py(f.name, np.asarray(ints, np.int64), unit, lt is not None and lt.utc, mask)
    elif kind == "TIME":
        ticks = v.astype(np.int64)
        per_us = {"ms": 1000, "us": 1, "ns": 0}[lt.unit]  # type: ignore[union-attr, index]
        micros = ticks // 1000 if per_us == 0 else ticks * per_us
        # a time of day outside 0..24 h (some writers store negative ones) wraps around the day, as
        # pyarrow and DuckDB read it
        return time_objects(micros % 86_400_000_000, mask).tolist()  # type: ignore[no-any-return]
    else:
        vals = logical_numpy(f, v).tolist()
    if mask is not None:
        for i in np.flatnonzero(mask).tolist():
            vals[i] = None
    return vals


#: the instants datetime.datetime holds, in microseconds since the epoch
_DATETIME_US = (-62_135_596_800_000_000, 253_402_300_799_999_999)


def _timestamps_to_py(name: str, ints: np.ndarray, unit: str, utc: bool, mask: np.ndarray | None) -> list[Any]:
    """Python values of a timestamp column, as pyarrow's ``as_py`` gives them: ``datetime.datetime``
    (aware, in ``zoneinfo.ZoneInfo("UTC")`` as pyarrow's, when the column is), or ``pandas.Timestamp`` for nanoseconds (which datetime cannot
    hold). A value outside datetime's range, or nanoseconds without pandas, raise
    :class:`~pqbloom.errors.UnsupportedError` rather than come back as something else."""
    valid = ints if mask is None else ints[~mask]
    if unit == "ns":
        try:
            import pandas as pd
        except ImportError:  # pragma: no cover - pandas is installed with the test extras
            if bool((valid % 1000 != 0).any()):
                raise UnsupportedError(f"column {name!r}: nanosecond timestamps need pandas for Python values "
                                       f"(datetime holds microseconds); use to_arrow() or to_numpy()") from None
            return _timestamps_to_py(name, ints // 1000, "us", utc, mask)
        idx = pd.DatetimeIndex(np.where(mask, 0, ints) if mask is not None else ints, dtype="datetime64[ns]")
        out: list[Any] = (idx.tz_localize("UTC") if utc else idx).tolist()
        return out
    us = ints * 1000 if unit == "ms" else ints
    bad = (valid < _DATETIME_US[0] // (1000 if unit == "ms" else 1)) | (
        valid > _DATETIME_US[1] // (1000 if unit == "ms" else 1))
    if bool(bad.any()):
        raise UnsupportedError(f"column {name!r}: timestamp {int(valid[bad][0])} ({unit}) is outside the range of "
                               f"datetime.datetime; use to_arrow() or to_numpy()")
    if mask is not None:
        us = np.where(mask, 0, us)
    naive = us.astype("datetime64[us]").astype(object).tolist()
    if not utc:
        return naive  # type: ignore[no-any-return]
    tz = utc_zone()
    return [d.replace(tzinfo=tz) for d in naive]


def utc_zone() -> _dt.tzinfo:
    """The ``tzinfo`` of UTC-adjusted values, as pyarrow gives them: ``zoneinfo.ZoneInfo("UTC")`` (the
    same instants as ``datetime.timezone.utc``, which stands in where the zone database is missing)."""
    import zoneinfo

    try:
        return zoneinfo.ZoneInfo("UTC")
    except (zoneinfo.ZoneInfoNotFoundError, ValueError):  # e.g. Windows without the tzdata package
        return _dt.timezone.utc


#: microseconds per tick of a duration unit
_US_PER = {"s": 1_000_000, "ms": 1_000, "us": 1}


def durations_to_py(name: str, ints: np.ndarray, unit: str, mask: np.ndarray | None) -> list[Any]:
    """Python values of a duration column (INT64 counts of ``unit``), as pyarrow's ``as_py`` gives them:
    ``datetime.timedelta``, or ``pandas.Timedelta`` for nanoseconds (which timedelta cannot hold); None for
    nulls. A count outside timedelta's range (or nanoseconds without pandas, unless whole microseconds)
    raises :class:`~pqbloom.errors.UnsupportedError` rather than come back as something else."""
    ints = np.asarray(ints, np.int64)
    if mask is not None:
        ints = np.where(mask, 0, ints)
    if unit == "ns":
        try:
            import pandas as pd
        except ImportError:  # pragma: no cover - pandas is installed with the test extras
            if bool((ints % 1000 != 0).any()):
                raise UnsupportedError(f"column {name!r}: nanosecond durations need pandas for Python values "
                                       f"(timedelta holds microseconds); use to_arrow() or to_numpy()") from None
            return durations_to_py(name, ints // 1000, "us", mask)
        vals: list[Any] = pd.to_timedelta(ints, unit="ns").to_list()
    else:
        per = _US_PER[unit]
        far = np.abs(ints) > (2**63 - 1) // per  # beyond int64 microseconds: numpy cannot convert them
        vals = (np.where(far, 0, ints) * per).astype("m8[us]").astype(object).tolist()
        for i in np.flatnonzero(far).tolist():  # rare: each one through Python's timedelta, which may hold it
            try:
                vals[i] = _dt.timedelta(microseconds=int(ints[i]) * per)
            except OverflowError:
                raise UnsupportedError(f"column {name!r}: duration {int(ints[i])} ({unit}) is outside the range "
                                       f"of datetime.timedelta; use to_arrow() or to_numpy()") from None
    if mask is not None:
        for i in np.flatnonzero(mask).tolist():
            vals[i] = None
    return vals


def zone_info(tz: str) -> _dt.tzinfo:
    """The ``tzinfo`` pyarrow gives the values of an Arrow time zone: a fixed offset for ``"+HH:MM"``,
    else ``zoneinfo.ZoneInfo`` (an unknown zone: :class:`~pqbloom.errors.UnsupportedError`)."""
    import re
    import zoneinfo

    m = re.fullmatch(r"([+-])(\d{2}):?(\d{2})", tz)
    if m is not None:
        off = _dt.timedelta(hours=int(m.group(2)), minutes=int(m.group(3)))
        return _dt.timezone(-off if m.group(1) == "-" else off)
    try:
        return zoneinfo.ZoneInfo(tz)
    except (zoneinfo.ZoneInfoNotFoundError, ValueError):
        raise UnsupportedError(f"time zone {tz!r} is not known to zoneinfo (install tzdata?)") from None


def in_zone(values: list[Any], tz: _dt.tzinfo) -> list[Any]:
    """Aware timestamps (``datetime`` or ``pandas.Timestamp``; None for nulls) as the same instants in ``tz``."""
    return [None if v is None else (v.tz_convert(tz) if hasattr(v, "tz_convert") else v.astimezone(tz))
            for v in values]


def validity_buffer(mask: np.ndarray | None) -> Any:
    """Arrow's validity bitmap of a null mask (True = null), or None without nulls."""
    import pyarrow as pa

    if mask is None:
        return None
    # the mask packed, then inverted in place (no inverted copy of the mask, nor of the bits)
    bits = np.packbits(mask, bitorder="little")
    np.invert(bits, out=bits)
    if len(mask) % 8:  # the padding bits past the last slot stay 0
        bits[-1] &= (1 << (len(mask) % 8)) - 1
    return pa.py_buffer(bits)


def _narrow_offsets(offsets: np.ndarray) -> np.ndarray:
    """int64 offsets (all below 2**31) as Arrow's int32 ones, in a buffer of the pool: a fresh one
    per call costs more in page faults than the conversion itself."""
    out = pool.empty(len(offsets), np.int32)
    np.copyto(out, offsets, casting="unsafe")
    return out


def arrow_field(name: str, typ: Any, nullable: bool) -> Any:
    """``pyarrow.field(name, typ, nullable)``, also for a required column of the Null logical type:
    pyarrow reads it as a non-nullable field of type null, which ``pyarrow.field`` refuses to make."""
    import pyarrow as pa

    if not nullable and pa.types.is_null(typ):
        return pa.field(name, typ).with_nullable(False)
    return pa.field(name, typ, nullable)


def to_arrow(f: Field, v: Any, mask: np.ndarray | None) -> Any:
    """A flat column's values as the pyarrow array pyarrow reads for its type from a file."""
    import pyarrow as pa

    n = len(v)
    lt = f.logical_type
    kind = lt.kind if lt is not None else None
    p = f.physical_type
    validity = validity_buffer(mask)
    nulls = 0 if mask is None else int(np.count_nonzero(mask))
    if kind == "UNKNOWN":  # the Null logical type: every value is null
        return pa.nulls(n)
    if kind == "DECIMAL":
        return _decimal_to_arrow(f, v, nulls, validity)
    if isinstance(v, BinaryArray):
        c = v.compact()
        big = c.nbytes >= 2**31
        btyp = (pa.large_string() if big else pa.string()) if kind in ("STRING", "JSON", "ENUM") else (
            pa.large_binary() if big else pa.binary())
        # offsets of empty values only (an all-null column) are zeros: made, not converted
        offs = c.offsets if big else np.zeros(n + 1, np.int32) if not c.nbytes else _narrow_offsets(c.offsets)
        arr = pa.Array.from_buffers(btyp, n, [validity, pa.py_buffer(offs), pa.py_buffer(c.data)], null_count=nulls)
        # JSON as pyarrow reads it: the arrow.json extension type over its text
        return pa.ExtensionArray.from_storage(pa.json_(btyp), arr) if kind == "JSON" else arr
    if p == PhysicalType.FIXED_LEN_BYTE_ARRAY and kind != "FLOAT16":
        w = f.type_length or 0
        arr = pa.Array.from_buffers(pa.binary(w), n, [validity, pa.py_buffer(np.ascontiguousarray(v).tobytes())],
                                    null_count=nulls)
        # UUID as pyarrow reads it: the arrow.uuid extension type over 16 bytes
        return pa.ExtensionArray.from_storage(pa.uuid(), arr) if kind == "UUID" else arr
    if kind == "DATE":
        typ: Any = pa.date32()
    elif kind == "TIMESTAMP":
        typ = pa.timestamp(lt.unit, tz="UTC" if lt.utc else None)  # type: ignore[union-attr]
    elif p == PhysicalType.INT96:
        typ = pa.timestamp("ns")
    elif kind == "TIME":
        typ = pa.time32(lt.unit) if p == PhysicalType.INT32 else pa.time64(lt.unit)  # type: ignore[union-attr]
    elif kind == "FLOAT16":
        typ = pa.float16()
    elif kind == "INTEGER":
        typ = pa.from_numpy_dtype(logical_numpy(f, v[:0]).dtype)
    elif p == PhysicalType.BOOLEAN:
        return pa.Array.from_buffers(pa.bool_(), n, [validity, pa.py_buffer(np.packbits(v, bitorder="little"))],
                                     null_count=nulls)
    else:
        typ = pa.from_numpy_dtype(v.dtype)
    # the physical buffer already has Arrow's layout except for these
    data = int96_to_ns(v, mask, f.name) if p == PhysicalType.INT96 else (logical_numpy(f, v) if kind == "INTEGER" else v)
    return pa.Array.from_buffers(typ, n, [validity, pa.py_buffer(np.ascontiguousarray(data).view(np.uint8))],
                                 null_count=nulls)


def _pooled_bytes(nbytes: int) -> np.ndarray:
    # a decimal column's words are 16 or 32 bytes a row: fresh memory faulted in page by page on each
    # conversion unless it comes from the pool, as the read's own buffers do
    return pool.empty(nbytes, np.uint8)


def _decimal_to_arrow(f: Field, v: Any, nulls: int, validity: Any) -> Any:
    """A DECIMAL column as Arrow's decimal128 (precision up to 38) or decimal256 (up to 76), built from
    the stored unscaled values with numpy. Values are taken as stored, also where they have more digits
    than the precision declares (pyarrow reads them so)."""
    import pyarrow as pa

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
        # one pass over the values (big-endian bytes or ints to little-endian words)
        words = decimal_buffer(src, width, empty=_pooled_bytes)
    except CorruptFileError:  # the only one decimal_buffer raises: a value wider than the words
        raise UnsupportedError(f"column {f.name!r}: a DECIMAL({precision}, {scale}) value needs more than the "
                               f"{width} bytes of Arrow's decimal{8 * width}") from None
    typ = pa.decimal128(precision, scale) if width == 16 else pa.decimal256(precision, scale)
    return pa.Array.from_buffers(typ, n, [validity, pa.py_buffer(words)], null_count=nulls)


def nested_to_arrow(kind: str, length: int, mask: np.ndarray | None, offsets: np.ndarray | None,
                    children: Sequence[Any], child_fields: Sequence[Field]) -> Any:
    """A struct, list or map column as a pyarrow array, from its children already converted
    (``children``: pyarrow arrays, ``child_fields`` their fields) and its null mask and offsets."""
    import pyarrow as pa

    n = length
    validity = validity_buffer(mask)
    nulls = 0 if mask is None else int(np.count_nonzero(mask))
    kids = list(children)
    afields = [arrow_field(c.name, a.type, c.nullable) for c, a in zip(child_fields, kids)]
    if kind == "struct":
        return pa.Array.from_buffers(pa.struct(afields), n, [validity], null_count=nulls, children=kids)
    assert offsets is not None
    large = int(offsets[-1]) >= 2**31 - 1
    offs = pa.py_buffer(np.ascontiguousarray(offsets if large else offsets.astype(np.int32)))
    if kind == "list":
        typ = pa.large_list(afields[0]) if large else pa.list_(afields[0])
        return pa.Array.from_buffers(typ, n, [validity, offs], null_count=nulls, children=kids)
    kf = pa.field(afields[0].name, afields[0].type, False)
    entries = pa.Array.from_buffers(pa.struct([kf, afields[1]]), len(kids[0]), [None], children=kids)
    return pa.Array.from_buffers(pa.map_(kf, afields[1]), n, [validity, pa.py_buffer(
        np.ascontiguousarray(offsets.astype(np.int32)))], null_count=nulls, children=[entries])
