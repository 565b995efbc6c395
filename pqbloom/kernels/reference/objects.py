"""Numpy reference of the object kernels (:func:`pqbloom.kernels.objects.decimal_objects`,
:func:`pqbloom.kernels.objects.time_objects`): the oracle the compiled module ``pqbloom._kernels.objects`` is tested
against and its fallback. The digits of every value are computed with numpy over the whole column (as
fixed-width text); only the constructor runs once per value, as in the compiled kernel.
"""

from __future__ import annotations

import datetime as _dt
import decimal

import numpy as np

__all__ = ["decimal_objects", "time_objects", "decimal_suffix", "check_decimal_words", "MICROS_PER_DAY"]

#: the microseconds of a day: a time of day is below it
MICROS_PER_DAY = 86_400_000_000
_GROUP = 10**9  # digits are made nine at a time: 10**9 < 2**32, so (remainder << 32 | limb) fits 64 bits


def decimal_suffix(scale: int) -> bytes:
    """The exponent written after a value's digits: ``b"E-2"`` for scale 2 (``"12345E-2"`` is the
    Decimal pyarrow makes of ``"123.45"``: coefficient 12345, exponent -2), nothing for scale 0."""
    if not -(2**31) <= scale < 2**31:  # Parquet's scale is an i32 (and the compiled kernel's suffix is short)
        raise ValueError(f"decimal scale {scale} is outside int32")
    return b"" if scale == 0 else f"E{-scale:+d}".encode()


def check_decimal_words(values: np.ndarray) -> np.ndarray:
    """``values`` as the kernels take them, contiguous: int64 values, or ``(n, width)`` uint8 words."""
    a = np.asarray(values)
    if a.ndim == 1 and a.dtype == np.int64 or (
            a.ndim == 2 and a.dtype == np.uint8 and a.shape[1] % 4 == 0 and 0 < a.shape[1] <= 64):
        return np.ascontiguousarray(a)
    raise TypeError(f"decimal values are int64 or (n, width) uint8 words (width a multiple of 4, at most 64), "
                    f"not {a.dtype} {a.shape}")


def _limbs(values: np.ndarray) -> np.ndarray:
    """int64 values or uint8 words as ``(n, limbs)`` uint32 limbs of little-endian two's complement, least
    significant first."""
    b = values.astype("<i8").view(np.uint8).reshape(-1, 8) if values.ndim == 1 else values
    b = b.astype(np.uint32)
    return b[:, 0::4] | (b[:, 1::4] << 8) | (b[:, 2::4] << 16) | (b[:, 3::4] << 24)


def _digit_text(values: np.ndarray, suffix: bytes) -> list[str]:
    """Each value's text: a sign (``-`` or ``0``), its digits zero-padded to a fixed width, then ``suffix``."""
    limbs = _limbs(values)
    n, count = limbs.shape
    neg = (limbs[:, -1] >> 31).astype(bool)
    # the magnitude of the negative values: invert, then add one carrying through the limbs
    mag = np.where(neg[:, None], ~limbs, limbs).astype(np.uint64)
    carry = neg.astype(np.uint64)
    for j in range(count):
        mag[:, j] += carry
        carry = mag[:, j] >> np.uint64(32)
        mag[:, j] &= np.uint64(0xFFFFFFFF)
    groups = -(-(count * 32) // 29) + 1  # nine-digit groups of 32 * count bits (10**9 > 2**29)
    text = np.empty((n, 1 + 9 * groups), np.uint8)
    text[:, 0] = np.where(neg, ord("-"), ord("0"))
    for g in range(groups - 1, -1, -1):  # least significant group last in the text
        rem = np.zeros(n, np.uint64)
        for j in range(count - 1, -1, -1):
            cur = (rem << np.uint64(32)) | mag[:, j]
            mag[:, j] = cur // np.uint64(_GROUP)
            rem = cur % np.uint64(_GROUP)
        for d in range(8, -1, -1):
            text[:, 1 + 9 * g + d] = (rem % np.uint64(10)).astype(np.uint8) + ord("0")
            rem //= np.uint64(10)
    if suffix:
        text = np.concatenate([text, np.frombuffer(suffix, np.uint8)[None, :].repeat(n, axis=0)], axis=1)
    strings: list[str] = np.ascontiguousarray(text).view(f"S{text.shape[1]}").reshape(n).astype("U").tolist()
    return strings


def decimal_objects(values: np.ndarray, scale: int, mask: np.ndarray | None = None) -> np.ndarray:
    """An object array of ``decimal.Decimal`` of DECIMAL unscaled ``values`` at ``scale``, exactly as pyarrow
    makes them (the coefficient and exponent of its text, ``Decimal('1.50')`` for 150 at scale 2); None where
    ``mask`` is True. ``values``: int64, or ``(n, width)`` uint8 rows of little-endian two's complement
    (``width`` a multiple of 4, at most 64)."""
    words = check_decimal_words(values)
    n = len(words)
    if mask is not None and len(mask) != n:
        raise ValueError("the mask's length is not the values'")
    suffix = decimal_suffix(scale)
    if n == 0:
        return np.empty(0, object)
    out = np.fromiter(map(decimal.Decimal, _digit_text(words, suffix)), dtype=object, count=n)
    if mask is not None:
        out[np.asarray(mask, bool)] = None
    return out


def time_objects(micros: np.ndarray, mask: np.ndarray | None = None) -> np.ndarray:
    """An object array of ``datetime.time`` of microseconds after midnight (``0 .. MICROS_PER_DAY``); None
    where ``mask`` is True. A value outside a day (not masked) is a ValueError naming its position."""
    us = np.ascontiguousarray(micros, dtype=np.int64)
    n = len(us)
    if mask is not None and len(mask) != n:
        raise ValueError("the mask's length is not the values'")
    m = np.zeros(n, bool) if mask is None else np.asarray(mask, bool)
    bad = ((us < 0) | (us >= MICROS_PER_DAY)) & ~m
    if bool(bad.any()):
        raise ValueError(f"time_objects: value {int(np.argmax(bad))} is outside a day")
    us = np.where(m, 0, us)
    # each value as an instant of 1970-01-01 (numpy makes datetime objects), then its time of day
    out = np.fromiter(map(_dt.datetime.time, us.astype("datetime64[us]").astype(object)), dtype=object, count=n)
    if mask is not None:
        out[m] = None
    return out
