"""Nulls placed among a column's values: dense (non-null) values spread to the column's length."""

from __future__ import annotations

from typing import Any

import numpy as np

from ..arrays import BinaryArray
from ..kernels.levels import scatter_nulls
from ..limits import charge

__all__ = ["place_nulls"]


def place_nulls(dense: Any, present: np.ndarray, where: str = "column", max_level: int | None = None) -> Any:
    """Full-length physical values: ``dense`` at the ``present`` slots, zeros (empty values) elsewhere.

    ``dense``: a numpy array (1-D, or 2-D uint8 rows) or a BinaryArray (its bytes are shared, not
    copied). One pass over ``present`` (:func:`pqbloom.kernels.levels.scatter_nulls`), after charging the
    result to the read's memory budget. CorruptFileError when ``present`` holds a different number
    of values than ``dense``. With ``max_level``, ``present`` holds definition levels instead: a value
    is present where its level is ``max_level`` (no mask made from them first).
    """
    n = len(present)
    row_bytes = 8 if isinstance(dense, BinaryArray) else dense.itemsize * int(np.prod(dense.shape[1:], dtype=np.int64))
    charge(n * row_bytes, "placing nulls")
    if max_level is None:
        return scatter_nulls(dense, np.asarray(present, dtype=bool), 1, where)[0]
    return scatter_nulls(dense, present, max_level, where)[0]
