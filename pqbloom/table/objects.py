"""Object columns built over whole columns: ``decimal.Decimal``, ``datetime.date`` and ``datetime.time``
values, as pyarrow's ``to_pandas()`` (object dtype) and ``as_py`` give them.

pandas has no dtype for these (pyarrow gives DECIMAL and DATE columns as object arrays), so one Python
object per value is unavoidable; what is avoided is Python work per value. Each converter gets the
column's integers with numpy, then makes the objects in bulk: the compiled kernels of
:func:`pqbloom.kernels.objects.decimal_objects` and :func:`pqbloom.kernels.objects.time_objects`, numpy's own
``datetime64[D]`` to ``datetime.date`` conversion. A column whose values repeat makes one object per
distinct value and gathers them (Decimal and date objects are immutable): by offset when the values lie
in a range shorter than the column (dates, small decimals), else, for decimals, through ``np.unique``
when a sample of the column shows repeats.
"""

from __future__ import annotations

import decimal
from collections.abc import Callable
from typing import Any

import numpy as np

from ..arrays import BinaryArray
from ..errors import CorruptFileError, UnsupportedError
from ..format.enums import PhysicalType
from ..kernels import decimals as decimal_kernels
from ..kernels import objects as object_kernels
from ..schema import Field

__all__ = ["decimal_objects", "date_objects", "time_objects", "DATE_DAYS", "DECIMAL_CONTEXT"]

#: the days since 1970-01-01 of ``datetime.date``'s first and last days (0001-01-01, 9999-12-31)
DATE_DAYS = (-719_162, 2_932_896)

# Parquet decimals reach 38 digits (and more on BYTE_ARRAY); Python's default context keeps only 28.
DECIMAL_CONTEXT = decimal.Context(prec=200, Emax=999_999, Emin=-999_999)

#: values sampled to decide whether a column's values repeat enough to convert each distinct one once
_SAMPLE = 1024

_Build = Callable[[np.ndarray, "np.ndarray | None"], np.ndarray]


def _per_distinct(ints: np.ndarray, mask: np.ndarray | None, build: _Build, unique: bool) -> np.ndarray:
    """``build(values, mask)`` (an object array, None where masked) of int64 ``ints``, making one object per
    distinct value where they repeat: by offset into ``lo..hi`` when that range is shorter than half the
    column, else (``unique``) by ``np.unique`` when a strided sample of the values has repeats."""
    valid = ints if mask is None else ints[~mask]
    if not len(valid):
        return np.full(len(ints), None, dtype=object)
    lo, hi = int(valid.min()), int(valid.max())
    if hi - lo < len(valid) // 2:
        table = build(np.arange(lo, hi + 1, dtype=np.int64), None)
        out = table[ints - lo if mask is None else np.where(mask, 0, ints - lo)]
    elif unique and len(valid) > 4 * _SAMPLE and len(np.unique(valid[::len(valid) // _SAMPLE])) < _SAMPLE // 2:
        distinct, codes = np.unique(ints if mask is None else np.where(mask, lo, ints), return_inverse=True)
        out = build(distinct, None)[codes.reshape(-1)]
    else:
        return build(ints, mask)
    if mask is not None:
        out[mask] = None
    return out


def _decimal_from_bytes(b: bytes, scale: int) -> decimal.Decimal:
    return decimal.Decimal(int.from_bytes(b, "big", signed=True)).scaleb(-scale, context=DECIMAL_CONTEXT)


def _unscaled(f: Field, v: Any) -> np.ndarray | None:
    """A DECIMAL column's unscaled values as the object kernel takes them: int64 when every value fits,
    else ``(n, 16 or 32)`` uint8 little-endian words; None when a value needs more than 32 bytes."""
    p = f.physical_type
    if not isinstance(v, BinaryArray) and p != PhysicalType.FIXED_LEN_BYTE_ARRAY:
        return np.asarray(v).astype(np.int64, copy=False)
    n = len(v)
    src = v if isinstance(v, BinaryArray) else np.asarray(v, dtype=np.uint8).reshape(n, f.type_length or 0)
    precision = (f.logical_type.precision or 0) if f.logical_type is not None else 0
    for width in (16, 32) if precision <= 38 else (32,):
        try:  # big-endian bytes to little-endian words, in one pass (the one conversion to_arrow makes)
            words = decimal_kernels.decimal_buffer(src, width).reshape(n, width)
        except CorruptFileError:  # a value wider than the words (more digits than the precision says)
            continue
        if width == 16:
            halves = words.view("<i8")
            if bool(np.array_equal(halves[:, 1], halves[:, 0] >> 63)):  # every value fits int64
                return halves[:, 0].astype(np.int64)
        return words
    return None


def decimal_objects(f: Field, v: Any, mask: np.ndarray | None) -> np.ndarray:
    """A DECIMAL column's values as an object array of ``decimal.Decimal`` (None for nulls), each the
    Decimal pyarrow makes of the value: its coefficient and exponent (``Decimal('1.50')``, not ``1.5``)."""
    scale = (f.logical_type.scale or 0) if f.logical_type is not None else 0
    unscaled = _unscaled(f, v)
    if unscaled is None:  # over 76 digits (BYTE_ARRAY values beyond any Arrow decimal): each value alone
        raw = v.to_pylist() if isinstance(v, BinaryArray) else [bytes(r) for r in np.asarray(v, np.uint8).reshape(
            len(v), -1)]
        out = np.empty(len(raw), dtype=object)
        out[:] = [_decimal_from_bytes(b, scale) for b in raw]
        if mask is not None:
            out[mask] = None
        return out
    if unscaled.ndim == 2:
        return object_kernels.decimal_objects(unscaled, scale, mask)
    return _per_distinct(unscaled, mask, lambda ints, m: object_kernels.decimal_objects(ints, scale, m), unique=True)


def date_objects(name: str, days: np.ndarray, mask: np.ndarray | None) -> np.ndarray:
    """DATE values (days since 1970-01-01) as an object array of ``datetime.date`` (None for nulls), as
    pyarrow's ``to_pandas()`` gives them. A date outside ``datetime.date``'s years 1 to 9999 raises
    :class:`~pqbloom.errors.UnsupportedError` (pyarrow raises too)."""
    ints = np.asarray(days).astype(np.int64, copy=False)
    bad = (ints < DATE_DAYS[0]) | (ints > DATE_DAYS[1])
    if mask is not None:
        bad &= ~mask
    if bool(bad.any()):
        raise UnsupportedError(f"column {name!r}: date {int(ints[bad][0])} (days since 1970-01-01) is outside the "
                               f"range of datetime.date (years 1 to 9999); use to_arrow() or to_numpy()")

    def build(values: np.ndarray, m: np.ndarray | None) -> np.ndarray:
        # numpy makes datetime.date objects of datetime64[D] values (those of years 1 to 9999)
        out: np.ndarray = (values if m is None else np.where(m, 0, values)).astype("datetime64[D]").astype(object)
        if m is not None:
            out[m] = None
        return out

    return _per_distinct(ints, mask, build, unique=False)


def time_objects(micros: np.ndarray, mask: np.ndarray | None) -> np.ndarray:
    """Microseconds after midnight as an object array of ``datetime.time`` (None for nulls); every value
    not masked must be in ``0 .. 86_400_000_000`` (ValueError otherwise: the callers check first)."""
    return object_kernels.time_objects(micros, mask)
