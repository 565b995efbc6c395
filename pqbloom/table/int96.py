"""INT96 timestamps (Impala, Hive and Spark's legacy layout: nanoseconds of the day as a little-endian
int64, then the Julian day as a little-endian uint32) as int64 ticks of a time unit.

Nanoseconds in int64 reach only 1677-09-21 .. 2262-04-11, and INT96 files hold dates far outside that
(Spark writes ``0001-01-01`` and ``9999-12-31`` sentinels). pyarrow's default (``ns``) wraps such values
silently to other instants; converting them (to Arrow, numpy, Python), pqbloom raises
:class:`~pqbloom.errors.TimestampRangeError` instead, naming
``coerce_int96_timestamp_unit``, the reader option (pyarrow's) that reads them as ``us`` or ``ms``.
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from ..errors import TimestampRangeError
from ..format.enums import PhysicalType
from ..schema import Field, LogicalType, NestedField

__all__ = ["INT96_UNITS", "int96_ticks", "int96_to_ns", "int96_field", "int96_range_error"]

#: the units an INT96 column may be read in (``coerce_int96_timestamp_unit``), as Parquet's TIMESTAMP has them
INT96_UNITS = ("ns", "us", "ms")
_PER_NS = {"ns": 1, "us": 1_000, "ms": 1_000_000}
_DAY_NS = 86_400_000_000_000
_JULIAN_EPOCH = 2_440_588  # the Julian day of 1970-01-01
_I64 = (-(2**63), 2**63 - 1)


def int96_ticks(raw: np.ndarray, unit: str = "ns", mask: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
    """INT96 values -> (int64 ticks of ``unit`` since the epoch, True where a non-null value does not fit
    int64 in that unit). Nanoseconds of the day are floored to the unit (exact for the ``[0, 1 day)``
    writers store, as pyarrow reads them; in ``us`` and ``ms`` nanoseconds outside a day count as out of
    range, since readers divide them differently); null slots (``mask``) read as 0 and never count."""
    per = _PER_NS[unit]
    day_ticks = _DAY_NS // per
    m = np.ascontiguousarray(raw, dtype=np.uint8).reshape(-1, 12)
    nanos = m[:, :8].copy().view("<i8").reshape(-1)
    # the Julian day is unsigned in Impala/Spark's layout (Arrow reads it so too)
    days = m[:, 8:].copy().view("<u4").reshape(-1).astype(np.int64) - _JULIAN_EPOCH
    q = nanos // per if per != 1 else nanos
    # rows whose day count alone may overflow are worked out exactly below (few: they are what fails)
    lim = 2**62 // day_ticks
    safe = (days >= -lim) & (days <= lim)
    a = np.where(safe, days, 0) * day_ticks
    with np.errstate(over="ignore"):
        out = a + q
    bad = ((a ^ out) & (q ^ out)) < 0  # the sum wrapped: both operands' signs differ from its
    if per != 1:
        # nanoseconds of the day outside a day: pyarrow divides them as unsigned, Spark as signed; no guess
        bad |= (nanos < 0) | (nanos >= _DAY_NS)
    if mask is not None:
        out[mask] = 0
        bad &= ~mask
        safe |= mask
    for i in np.flatnonzero(~safe).tolist():  # only values more than ~146 years (ns) from 1970
        exact = int(days[i]) * day_ticks + int(q[i])
        if _I64[0] <= exact <= _I64[1]:
            out[i], bad[i] = exact, False
        else:
            bad[i] = True
    return out, bad


def int96_range_error(name: str, unit: str, raw: np.ndarray, bad: np.ndarray) -> TimestampRangeError:
    """The error for the INT96 values of column ``name`` that ``bad`` flags as out of range in ``unit``."""
    i = int(np.flatnonzero(bad)[0])
    m = np.ascontiguousarray(raw, dtype=np.uint8).reshape(-1, 12)[i]
    julian = int(m[8:].copy().view("<u4")[0])
    nanos = int(m[:8].copy().view("<i8")[0])
    if unit != "ns" and not 0 <= nanos < _DAY_NS:
        return TimestampRangeError(f"column {name!r}: an INT96 timestamp (Julian day {julian}) has {nanos} "
                                   f"nanoseconds of the day, outside one day: readers disagree on what it means "
                                   f"(pyarrow takes it as unsigned, Spark as signed)")
    hint = {"ns": 'read it with coerce_int96_timestamp_unit="us" (or "ms"), as pyarrow names that option',
            "us": 'read it with coerce_int96_timestamp_unit="ms"'}.get(unit, "no int64 timestamp unit holds it")
    return TimestampRangeError(f"column {name!r}: an INT96 timestamp (Julian day {julian}, {int(bad.sum())} such "
                               f"value(s)) is outside the range of int64 {unit} timestamps; {hint}")


def int96_to_ns(raw: np.ndarray, mask: np.ndarray | None = None, name: str = "?") -> np.ndarray:
    """INT96 -> int64 nanoseconds since the epoch (0 in null slots). A non-null value outside
    1677-09-21 .. 2262-04-11 raises :class:`~pqbloom.errors.TimestampRangeError` (pyarrow wraps it)."""
    out, bad = int96_ticks(raw, "ns", mask)
    if bool(bad.any()):
        raise int96_range_error(name, "ns", raw, bad)
    return out


def int96_field(f: Field, unit: str) -> Field:
    """The field an INT96 field ``f`` is read as in ``unit`` other than ``"ns"``: an INT64 TIMESTAMP
    (local, not adjusted to UTC, as pyarrow reads INT96), nested fields with their INT96 leaves so."""
    if isinstance(f, NestedField):
        return replace(f, children=tuple(int96_field(c, unit) for c in f.children))
    if f.physical_type != PhysicalType.INT96 or unit == "ns":
        return f
    return Field(f.name, PhysicalType.INT64, LogicalType("TIMESTAMP", unit=unit, utc=False), f.nullable,
                 field_id=f.field_id)
