"""Python values -> a column's physical domain: the one conversion of literals that filters bind
(:mod:`pqbloom.scan.bind`), Bloom filters probe (:func:`physical_candidates`) and the command line
parses (:func:`parse_literal`).

Conventions, shared by all three:

* an aware ``datetime`` is its UTC instant; a naive ``datetime`` is read as wall-clock time in UTC,
  so on a column with ``isAdjustedToUTC=true`` it means that UTC instant and on a local-time column
  (``isAdjustedToUTC=false``) it means that wall-clock reading (how pyarrow and Spark store both);
* a ``date`` on a timestamp column is its midnight; a ``datetime`` on a date column is a fraction of
  a day, which matches no stored date unless it is midnight;
* a ``Decimal`` (or int, or float read by its shortest repr) is compared by value: at the column's
  scale it must be a whole number of units (``1.50`` is ``1.5`` at scale 1; ``1.55`` cannot occur);
* a ``str`` on a UUID column is parsed as a UUID; on temporal and decimal columns as ISO 8601 / a
  decimal number; on other binary columns it is its UTF-8 bytes.
"""

from __future__ import annotations

import datetime as _dt
import decimal
import math
import struct
import uuid
from fractions import Fraction
from typing import Any

import numpy as np

from ..errors import LiteralTypeError
from ..format import PhysicalType
from .fields import Field, decimal_flba_width
from .tree import ColumnDescriptor

__all__ = ["NaNLiteral", "NAN", "parse_temporal", "exact_number", "int_literal", "float_literal",
           "float_representable", "bytes_literal", "physical_candidates", "parse_literal", "int_bounds",
           "narrow_int_width", "stored_ints"]

_UNIT_PER_S = {"ms": 1_000, "us": 1_000_000, "ns": 1_000_000_000}
_EPOCH = _dt.datetime(1970, 1, 1)
_EPOCH_UTC = _dt.datetime(1970, 1, 1, tzinfo=_dt.timezone.utc)


class NaNLiteral:
    """Marker for a NaN literal (an integer or decimal column holds none)."""

    def __repr__(self) -> str:
        return "NAN"


#: the one NaN marker
NAN = NaNLiteral()


_BINARY = (PhysicalType.BYTE_ARRAY, PhysicalType.FIXED_LEN_BYTE_ARRAY, PhysicalType.INT96)
#: the Julian day of 1970-01-01 (INT96 timestamps count days from the Julian epoch)
_JULIAN_EPOCH = 2_440_588


def _width(f: Field) -> int | None:
    return 12 if f.physical_type == PhysicalType.INT96 else f.type_length


def _kind(f: Field) -> str | None:
    return f.logical_type.kind if f.logical_type is not None else None


def parse_temporal(s: str, kind: str) -> Any:
    """ISO 8601 text as a ``time`` (kind TIME), ``date`` (DATE, when it has no time part) or
    ``datetime`` (a trailing ``Z`` is UTC); ValueError when it is none of them."""
    s = s.strip()
    try:
        if kind == "TIME":
            return _dt.time.fromisoformat(s)
        if kind == "DATE" and len(s) <= 10:
            return _dt.date.fromisoformat(s)
        return _dt.datetime.fromisoformat(s.replace("Z", "+00:00"))
    except ValueError:
        raise ValueError(f"cannot read {s!r} as a {kind.lower()}") from None


def _datetime_seconds(v: _dt.datetime) -> Fraction:
    d = v - (_EPOCH_UTC if v.tzinfo is not None else _EPOCH)
    # a pandas Timestamp (what to_pydict gives for nanosecond columns) carries nanoseconds beyond microsecond
    return (Fraction(d.days * 86400 + d.seconds) + Fraction(d.microseconds, 1_000_000)
            + Fraction(getattr(v, "nanosecond", 0), 1_000_000_000))


def _numpy_datetime_seconds(v: np.datetime64) -> Fraction:
    unit, count = np.datetime_data(v.dtype)
    per = {"D": Fraction(86400), "h": Fraction(3600), "m": Fraction(60), "s": Fraction(1),
           "ms": Fraction(1, 10**3), "us": Fraction(1, 10**6), "ns": Fraction(1, 10**9)}.get(unit)
    if per is None:
        raise ValueError(f"unsupported datetime64 unit {unit}")
    return int(v.astype(np.int64)) * count * per


def exact_number(v: Any, what: str) -> Fraction | float | NaNLiteral:
    """Exact value of a numeric literal; ±inf stay floats, NaN is :data:`NAN` (TypeError otherwise;
    ``what`` names the column's type in the message)."""
    if isinstance(v, (bool, np.bool_, int, np.integer)):
        return Fraction(int(v))
    if isinstance(v, (float, np.floating)):
        f = float(v)
        if f != f:
            return NAN
        return f if math.isinf(f) else Fraction(f)
    if isinstance(v, decimal.Decimal):
        if v.is_nan():
            return NAN
        return float(v) if v.is_infinite() else Fraction(v)
    if isinstance(v, Fraction):
        return v
    raise LiteralTypeError(f"cannot compare a {what} column with {type(v).__name__} {v!r}")


def _duration_ticks(v: Any, unit: str) -> Fraction:
    """A ``timedelta`` (``pandas.Timedelta``'s nanoseconds included) or ``numpy.timedelta64`` in ticks of ``unit``."""
    per = Fraction(_UNIT_PER_S.get(unit, 1))
    if isinstance(v, np.timedelta64):
        if np.isnat(v):
            raise ValueError("NaT is not a duration to compare with (use is_null)")
        return Fraction(int(v.astype("m8[ns]").astype(np.int64)), 1_000_000_000) * per
    secs = Fraction(v.days * 86400 + v.seconds) + Fraction(v.microseconds, 1_000_000) \
        + Fraction(getattr(v, "nanoseconds", 0), 1_000_000_000)
    return secs * per


def int_literal(v: Any, f: Field, duration_unit: str | None = None) -> Fraction | float | NaNLiteral:
    """A literal as an exact number in an integer-like column's domain (ticks of the timestamp or
    time unit, days, unscaled decimal units, INT96 nanoseconds...); not necessarily whole or in range.
    ``duration_unit``: the column holds Arrow durations of that unit (its ``ARROW:schema`` says so), and a
    ``timedelta`` or ``numpy.timedelta64`` is their count of it."""
    kind = _kind(f)
    name = f.type_name
    lt = f.logical_type
    if f.physical_type == PhysicalType.INT96 or kind == "TIMESTAMP":
        unit = "ns" if f.physical_type == PhysicalType.INT96 or lt is None else (lt.unit or "us")
        if isinstance(v, str):
            v = parse_temporal(v, "TIMESTAMP")
        if isinstance(v, _dt.datetime):
            return _datetime_seconds(v) * _UNIT_PER_S[unit]
        if isinstance(v, _dt.date):
            return Fraction((v - _dt.date(1970, 1, 1)).days * 86400 * _UNIT_PER_S[unit])
        if isinstance(v, np.datetime64):
            return _numpy_datetime_seconds(v) * _UNIT_PER_S[unit]
        return exact_number(v, name)
    if kind == "DATE":
        if isinstance(v, str):
            v = parse_temporal(v, "DATE")
        if isinstance(v, _dt.datetime):
            return _datetime_seconds(v) / 86400
        if isinstance(v, _dt.date):
            return Fraction((v - _dt.date(1970, 1, 1)).days)
        if isinstance(v, np.datetime64):
            return _numpy_datetime_seconds(v) / 86400
        return exact_number(v, name)
    if kind == "TIME":
        unit = (lt.unit if lt is not None else None) or "us"
        if isinstance(v, str):
            v = parse_temporal(v, "TIME")
        if isinstance(v, _dt.time):
            secs = Fraction((v.hour * 60 + v.minute) * 60 + v.second) + Fraction(v.microsecond, 1_000_000)
            return secs * _UNIT_PER_S[unit]
        if isinstance(v, np.timedelta64):
            return Fraction(int(v.astype(f"timedelta64[{unit}]").astype(np.int64)))
        return exact_number(v, name)
    if kind == "DECIMAL":
        scale = (lt.scale if lt is not None else None) or 0
        if isinstance(v, str):
            try:
                v = decimal.Decimal(v.strip())
            except decimal.InvalidOperation:
                raise ValueError(f"cannot read {v!r} as a decimal") from None
        elif isinstance(v, (float, np.floating)) and math.isfinite(float(v)):
            v = decimal.Decimal(repr(float(v)))  # 1.1 means 1.1, not its binary approximation
        q = exact_number(v, name)
        return q * 10**scale if isinstance(q, Fraction) else q
    if isinstance(v, str):
        raise LiteralTypeError(f"cannot compare a {name} column with the string {v!r}")
    if isinstance(v, (_dt.timedelta, np.timedelta64)):
        if duration_unit is None or f.physical_type != PhysicalType.INT64 or kind is not None:
            raise LiteralTypeError(f"cannot compare a {name} column with {type(v).__name__} {v!r}: a timedelta "
                                   f"compares with a duration column (INT64 whose ARROW:schema type is a duration)")
        return _duration_ticks(v, duration_unit)
    return exact_number(v, name)


def int_bounds(f: Field) -> tuple[int | None, int | None]:
    """The (lowest, highest) value of an integer-like column's domain (None: unbounded)."""
    p = f.physical_type
    if p == PhysicalType.BOOLEAN:
        return 0, 1
    if p == PhysicalType.INT96:
        # nanoseconds: an unsigned Julian day and a signed int64 of nanoseconds reach past int64
        day = 86_400_000_000_000
        return -_JULIAN_EPOCH * day - (1 << 63), ((1 << 32) - 1 - _JULIAN_EPOCH) * day + (1 << 63) - 1
    if p in (PhysicalType.INT32, PhysicalType.INT64):
        bits = 32 if p == PhysicalType.INT32 else 64
        lt = f.logical_type
        if lt is not None and lt.kind == "INTEGER":
            if lt.bit_width in (8, 16, 32, 64) and lt.bit_width <= bits:
                bits = lt.bit_width  # an INT(8) column holds -128..127 (INT(8, false): 0..255)
            if not lt.signed:
                return 0, (1 << bits) - 1
        return -(1 << (bits - 1)), (1 << (bits - 1)) - 1
    if p == PhysicalType.FIXED_LEN_BYTE_ARRAY and f.type_length:
        return -(1 << (8 * f.type_length - 1)), (1 << (8 * f.type_length - 1)) - 1
    return None, None


def narrow_int_width(f: Field) -> int | None:
    """The bit width of an INT32/INT64 column annotated as a narrower integer (INT(8), INT(16, false),
    INT(32) on INT64...), whose stored values the read narrows to that width (as pyarrow and DuckDB
    read them: the low bits, in the annotation's signedness); None for every other column."""
    p = f.physical_type
    lt = f.logical_type
    if p not in (PhysicalType.INT32, PhysicalType.INT64) or lt is None or lt.kind != "INTEGER":
        return None
    bits = 32 if p == PhysicalType.INT32 else 64
    return lt.bit_width if lt.bit_width in (8, 16, 32) and lt.bit_width < bits else None


def stored_ints(n: int, f: Field) -> list[int]:
    """The physical values a writer may have stored for the value ``n`` of an integer column: ``n``
    itself, and on a column annotated narrower than its physical type also its low bits taken with
    the other signedness (parquet-mr 1.8 and Drill store a UINT_8 255 as INT32 -1; others an INT_8
    -1 as 255). Both read back as ``n``; a Bloom filter holds the hash of whichever was stored."""
    bits = narrow_int_width(f)
    if bits is None:
        return [n]
    low = n & ((1 << bits) - 1)
    other = low - (1 << bits) if low >> (bits - 1) else low  # low bits read signed
    if other == n:
        other = low  # n was signed: its low bits read unsigned
    return [n] if other == n else [n, other]


def float_literal(v: Any, f: Field) -> float:
    """A literal for a FLOAT/DOUBLE/FLOAT16 column, as a Python float (TypeError for others)."""
    if isinstance(v, str):
        raise LiteralTypeError(f"cannot compare a {f.type_name} column with the string {v!r}")
    if isinstance(v, (bool, int, float, np.integer, np.floating, decimal.Decimal, Fraction)):
        return float(v)
    raise LiteralTypeError(f"cannot compare a {f.type_name} column with {type(v).__name__} {v!r}")


def float_representable(x: float, f: Field) -> bool:
    """Whether ``x`` is exactly a value of the column's float type (float32, float16, double)."""
    if f.physical_type == PhysicalType.DOUBLE or x != x or math.isinf(x):
        return True
    with np.errstate(over="ignore"):
        narrow = np.float32(x) if f.physical_type == PhysicalType.FLOAT else np.float16(x)
    return float(narrow) == x


def bytes_literal(v: Any, f: Field) -> bytes:
    """A literal for a binary column: str as UTF-8 (as a UUID on a UUID column), bytes, ``uuid.UUID``."""
    if isinstance(v, str):
        if _kind(f) == "UUID":
            try:
                return uuid.UUID(v.strip()).bytes
            except ValueError:
                raise ValueError(f"cannot read {v!r} as a UUID") from None
        return v.encode("utf-8")
    if isinstance(v, (bytes, bytearray, memoryview)):
        return bytes(v)
    if isinstance(v, uuid.UUID):
        return v.bytes
    raise LiteralTypeError(f"cannot compare a {f.type_name} column with {type(v).__name__} {v!r}")


def _is_intlike(f: Field) -> bool:
    p = f.physical_type
    return p in (PhysicalType.BOOLEAN, PhysicalType.INT96, PhysicalType.INT32, PhysicalType.INT64) \
        or (_kind(f) == "DECIMAL" and p in (PhysicalType.FIXED_LEN_BYTE_ARRAY, PhysicalType.BYTE_ARRAY))


def _is_float(f: Field) -> bool:
    p = f.physical_type
    return p in (PhysicalType.FLOAT, PhysicalType.DOUBLE) \
        or (p == PhysicalType.FIXED_LEN_BYTE_ARRAY and _kind(f) == "FLOAT16")


def physical_candidates(v: Any, f: Field, duration_unit: str | None = None) -> list[Any]:
    """The physical values (int, float or bytes, as :func:`pqbloom.bloom.hash_scalar` takes them) that
    a Python value may be stored as in a column of field ``f``; empty when it cannot be a value of the
    column (out of the physical type's range, not whole at a decimal's scale or a timestamp's unit,
    NaN in an integer column, a float that float32 cannot hold, a FIXED_LEN_BYTE_ARRAY of another
    width). Bytes on a binary column (BYTE_ARRAY, FIXED_LEN_BYTE_ARRAY, INT96) are taken as stored. Several when the column may hold several encodings of it: ``0.0`` and ``-0.0``; a
    BYTE_ARRAY decimal in its minimal two's complement and every sign extension up to the width the
    precision needs; both extensions of a narrow integer's low bits (:func:`stored_ints`). TypeError /
    ValueError for a value the column cannot be compared with. ``duration_unit`` as :func:`int_literal`'s."""
    p = f.physical_type
    if isinstance(v, (bytes, bytearray, memoryview)) and p in _BINARY:  # already physical
        b = bytes(v)
        return [b] if p == PhysicalType.BYTE_ARRAY or len(b) == _width(f) else []
    if p == PhysicalType.BOOLEAN:
        if isinstance(v, (bool, np.bool_)):
            return [bool(v)]
        raise LiteralTypeError(f"cannot compare a {f.type_name} column with {type(v).__name__} {v!r}")
    if p == PhysicalType.INT96:  # nanoseconds of the day, then the Julian day (as writers normalize them)
        q = int_literal(v, f)
        if not isinstance(q, Fraction) or q.denominator != 1:
            return []
        day, ns = divmod(int(q), 86_400_000_000_000)
        jd = day + _JULIAN_EPOCH
        return [struct.pack("<qi", ns, jd)] if 0 <= jd < 1 << 31 else []
    if _is_intlike(f):
        q = int_literal(v, f, duration_unit)
        lo, hi = int_bounds(f)
        if not isinstance(q, Fraction) or q.denominator != 1 or (lo is not None and q < lo) \
                or (hi is not None and q > hi):
            return []
        n = int(q)
        if p in (PhysicalType.INT32, PhysicalType.INT64):
            return stored_ints(n, f)
        lt = f.logical_type
        if p == PhysicalType.FIXED_LEN_BYTE_ARRAY:
            return [n.to_bytes(f.type_length or 0, "big", signed=True)]
        shortest = max(1, (n.bit_length() + 8) // 8)  # the sign bit included
        precision = lt.precision if lt is not None and lt.precision else 0
        widest = max(shortest, decimal_flba_width(precision) if precision else 0)
        return [n.to_bytes(w, "big", signed=True) for w in range(shortest, widest + 1)]
    if _is_float(f):
        x = float_literal(v, f)
        if x != x:
            xs = [x]
        elif not float_representable(x, f):
            return []
        else:
            xs = [0.0, -0.0] if x == 0 else [x]
        if p == PhysicalType.FIXED_LEN_BYTE_ARRAY:
            return [np.float16(x).astype("<f2").tobytes() for x in xs]
        return xs
    b = bytes_literal(v, f)
    if p == PhysicalType.FIXED_LEN_BYTE_ARRAY and len(b) != f.type_length:
        return []
    return [b]


def parse_literal(text: str, descriptor: ColumnDescriptor | Field) -> Any:
    """Command-line text as the Python value it names in a column: ISO 8601 timestamps (with or
    without zone; ``Z`` is UTC), dates and times; decimals as ``Decimal``; UUIDs; integers; floats
    (``nan``, ``inf``); booleans (true/false/1/0); strings as themselves; binary columns without a
    string annotation as ``0x``-prefixed hex or as UTF-8 text. ValueError when the text is none of
    what the column holds."""
    f = descriptor.field if isinstance(descriptor, ColumnDescriptor) else descriptor
    p = f.physical_type
    kind = _kind(f)
    s = text.strip()
    if p == PhysicalType.INT96 or kind == "TIMESTAMP":
        return parse_temporal(s, "TIMESTAMP")
    if kind in ("DATE", "TIME"):
        return parse_temporal(s, kind)
    if kind == "DECIMAL":
        try:
            return decimal.Decimal(s)
        except decimal.InvalidOperation:
            raise ValueError(f"cannot read {text!r} as a decimal") from None
    if kind == "UUID":
        try:
            return uuid.UUID(s)
        except ValueError:
            raise ValueError(f"cannot read {text!r} as a UUID") from None
    if p == PhysicalType.BOOLEAN:
        low = s.lower()
        if low in ("true", "1"):
            return True
        if low in ("false", "0"):
            return False
        raise ValueError(f"cannot read {text!r} as a boolean")
    if p in (PhysicalType.INT32, PhysicalType.INT64):
        try:
            return int(s)
        except ValueError:
            raise ValueError(f"cannot read {text!r} as an integer") from None
    if _is_float(f):
        try:
            return float(s)
        except ValueError:
            raise ValueError(f"cannot read {text!r} as a number") from None
    if kind in ("STRING", "ENUM", "JSON") or not s.lower().startswith("0x"):
        return text
    try:
        return bytes.fromhex(s[2:])
    except ValueError:
        raise ValueError(f"cannot read {text!r} as hexadecimal bytes") from None
