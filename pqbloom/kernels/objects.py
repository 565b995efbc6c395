"""The object kernels (compiled module ``objects``): ``decimal.Decimal`` and ``datetime.time`` objects in
bulk, for object columns (these hold the GIL: they create objects). The reference is
:mod:`pqbloom.kernels.reference.objects`."""

from __future__ import annotations

import decimal
from typing import Any

import numpy as np

from . import compiled as compiled_module
from .reference import objects as reference

__all__ = ["decimal_objects", "time_objects"]

_NO_MASK = np.empty(0, np.uint8)


def _mask_bytes(mask: np.ndarray | None, n: int) -> np.ndarray:
    if mask is None:
        return _NO_MASK
    if len(mask) != n:
        raise ValueError("the mask's length is not the values'")
    return np.ascontiguousarray(mask, dtype=bool).view(np.uint8)


def decimal_objects(values: np.ndarray, scale: int, mask: np.ndarray | None = None) -> np.ndarray:
    """``decimal.Decimal`` objects of DECIMAL unscaled values (int64, or ``(n, width)`` uint8 little-endian
    words); see :func:`pqbloom.kernels.reference.objects.decimal_objects`."""
    compiled: Any = compiled_module("objects")
    if compiled is None:
        return reference.decimal_objects(values, scale, mask)
    words = reference.check_decimal_words(values)
    out = np.empty(len(words), object)  # every slot None: masked ones stay so
    m = _mask_bytes(mask, len(words))
    suffix = np.frombuffer(reference.decimal_suffix(scale), np.uint8)
    if words.ndim == 1:
        compiled.decimals_from_int64(words, m, suffix, decimal.Decimal, out)
    else:
        compiled.decimals_from_words(words.reshape(-1), words.shape[1], m, suffix, decimal.Decimal, out)
    return out


def time_objects(micros: np.ndarray, mask: np.ndarray | None = None) -> np.ndarray:
    """``datetime.time`` objects of microseconds after midnight; see
    :func:`pqbloom.kernels.reference.objects.time_objects`."""
    compiled: Any = compiled_module("objects")
    if compiled is None:
        return reference.time_objects(micros, mask)
    us = np.ascontiguousarray(micros, dtype=np.int64)
    out = np.empty(len(us), object)
    bad = int(compiled.times_from_micros(us, _mask_bytes(mask, len(us)), out))
    if bad >= 0:
        raise ValueError(f"time_objects: value {bad} is outside a day")
    return out
