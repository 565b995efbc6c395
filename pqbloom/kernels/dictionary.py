"""The dictionary kernels (compiled module ``dictionary``): distinct values in order of first appearance by
hashing (:func:`unique_first`, which stops once a size limit is passed), and the number of distinct
64-bit values (:func:`count_distinct`, for Bloom filter hashes). The reference is
:mod:`pqbloom.kernels.reference.dictionary` (sorting).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..arrays import BinaryArray
from . import built, compiled
from .reference import dictionary as reference

__all__ = ["unique_first", "count_distinct"]

#: the compiled module (its calls and error codes) when built; whether it is in use is decided per call
_dictionary: Any = built("dictionary")


def _check(rc: int) -> int | None:
    """The distinct count, None for a limit passed; raise for the other errors."""
    if rc >= 0:
        return rc
    if rc in (_dictionary.TOO_MANY, _dictionary.TOO_BIG):
        return None
    if rc == _dictionary.BAD_OFFSETS:
        raise ValueError("invalid BinaryArray: offsets decrease or reach outside the data")
    if rc == _dictionary.NO_MEMORY:
        raise MemoryError("dictionary: no memory for the hash table")
    raise AssertionError(f"dictionary kernel returned {rc}")  # pragma: no cover


def unique_first(values: Any, max_count: int | None = None,
                 max_bytes: int | None = None) -> tuple[np.ndarray, np.ndarray] | None:
    """The distinct ``values`` in order of first appearance: ``(firsts, codes)``, the int64 position
    of each one's first appearance and each value's int32 index into them; or None when there are
    more than ``max_count`` distinct values, or (byte strings) their PLAIN encoding, 4 + length
    bytes each, passes ``max_bytes``. The compiled build stops as soon as a limit is passed.

    ``values``: 1-D numbers (compared by bit pattern: -0.0 and +0.0 differ, NaN payloads differ),
    2-D uint8 rows, or a BinaryArray.
    """
    if compiled("dictionary") is None:
        return reference.unique_first(values, max_count, max_bytes)
    n = len(values)
    if n >= 1 << 31:  # int32 codes
        return reference.unique_first(values, max_count, max_bytes)
    limit = n if max_count is None else max(0, min(int(max_count), n))
    codes = np.empty(n, np.int32)
    firsts = np.empty(limit, np.int64)
    if isinstance(values, BinaryArray):
        offsets = np.ascontiguousarray(values.offsets, dtype=np.int64)
        cap = (1 << 62) if max_bytes is None else int(max_bytes)
        rc = _dictionary.build_binary(offsets, np.ascontiguousarray(values.data), limit, cap, codes, firsts)
    else:
        a = np.asarray(values)
        if a.ndim == 2:
            w = a.shape[1]
            if w == 0 or a.dtype != np.uint8:
                return reference.unique_first(values, max_count, max_bytes)
            rc = _dictionary.build_rows(np.ascontiguousarray(a).reshape(-1), w, limit, codes, firsts)
        elif a.ndim == 1 and a.dtype.kind in "iufb" and a.dtype.itemsize in (1, 2, 4, 8):
            rc = _dictionary.build_fixed(np.ascontiguousarray(a).view(f"u{a.dtype.itemsize}"), limit, codes, firsts)
        else:
            return reference.unique_first(values, max_count, max_bytes)
    count = _check(int(rc))
    if count is None:
        return None
    return (firsts[:count].copy() if count < limit // 2 else firsts[:count]), codes


def count_distinct(keys: np.ndarray) -> int:
    """The number of distinct values of a uint64 array (any integer array, read as uint64)."""
    k = np.ascontiguousarray(np.asarray(keys).reshape(-1))
    k = k.view(np.uint64) if k.dtype.kind in "iu" and k.dtype.itemsize == 8 else k.astype(np.uint64)
    if compiled("dictionary") is None:
        return reference.count_distinct(k)
    rc = int(_dictionary.count_distinct(k))
    if rc < 0:
        raise MemoryError("dictionary: no memory to count distinct values")
    return rc
