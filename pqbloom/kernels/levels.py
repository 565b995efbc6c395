"""The level kernels (compiled module ``levels``): nulls placed from definition levels with Arrow's
validity bitmap (:func:`scatter_nulls`), a byte-array column's offsets spread to its rows in place
(:func:`spread_offsets`), repetition and definition levels to the innermost list's offsets
(:func:`list_offsets`), and a nested chunk's levels checked and its records counted in one pass
(:func:`check_chunk_levels`). The reference is :mod:`pqbloom.kernels.reference.levels`.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..arrays import BinaryArray
from ..errors import CorruptFileError
from . import built, compiled
from .reference import levels as reference
from .reference.hybrid import LEVEL_DTYPES

__all__ = ["scatter_nulls", "spread_offsets", "list_offsets", "check_chunk_levels"]

#: the compiled module (its calls and error codes) when built; whether it is in use is decided per call
_levels: Any = built("levels")


def _use() -> bool:
    return compiled("levels") is not None


# -- nulls placed from definition levels -------------------------------------------------------

def _level_arg(levels: np.ndarray, max_level: int) -> tuple[np.ndarray, int] | None:
    """Levels as the kernels take them: a bool mask as uint8 with level 1, levels widened to int32
    when their type cannot hold ``max_level``; None for a level only the reference handles."""
    lv = np.ascontiguousarray(reference.check_levels(levels, "levels"))
    if lv.dtype == np.bool_:
        return lv.view(np.uint8), 1
    if not -(1 << 31) <= max_level < (1 << 31):
        return None
    info = np.iinfo(lv.dtype)
    if not info.min <= max_level <= info.max:
        lv = lv.astype(np.int32)
    return lv, max_level


def scatter_nulls(dense: Any, levels: np.ndarray, max_level: int = 1, where: str = "column",
                  out: np.ndarray | None = None) -> tuple[Any, np.ndarray]:
    """Full-length values and Arrow's validity bitmap (little-endian bits) from dense values, in
    one pass over the definition levels (or a bool presence mask).

    ``dense``: a numpy array (1-D, or 2-D uint8 rows) or a BinaryArray (its data is shared, not
    copied). Null slots hold zeros (empty values). CorruptFileError when the levels define a
    different number of values than ``dense`` holds. ``out``: where the values go (see
    :func:`pqbloom.kernels.reference.levels.scatter_nulls`; every row of it is written).
    """
    if _use() and out is not None and type(dense) is type(levels) is type(out) is np.ndarray \
            and levels.dtype == np.bool_ and dense.ndim == levels.ndim == 1 and out.shape == levels.shape \
            and dense.dtype == out.dtype and dense.dtype.kind in "iufbmM" and dense.flags.c_contiguous \
            and levels.flags.c_contiguous and out.flags.c_contiguous and out.flags.writeable:
        validity = np.empty((len(levels) + 7) // 8, np.uint8)  # (the reader's case: the checks made short)
        if int(_levels.scatter_fixed(levels.view(np.uint8), 1, dense.view(np.uint8), dense.itemsize,
                                     out.view(np.uint8), validity)) >= 0:
            return out, validity
    # plain data only: the kernel copies bytes, which would not count references to Python objects
    plain = isinstance(dense, BinaryArray) or (isinstance(dense, np.ndarray) and not dense.dtype.hasobject)
    arg = _level_arg(levels, max_level) if _use() and plain else None
    if arg is None:
        return reference.scatter_nulls(dense, levels, max_level, where, out)
    lv, top = arg
    n = len(lv)
    if out is not None:
        reference.check_scatter_out(dense, n, out)
    validity = np.empty((n + 7) // 8, np.uint8)
    if isinstance(dense, BinaryArray):
        offs = np.ascontiguousarray(dense.offsets, dtype=np.int64)
        out_off = np.empty(n + 1, np.int64)
        rc = int(_levels.scatter_binary(lv, top, offs, out_off, validity))
        result: Any = None if rc < 0 else BinaryArray(out_off, dense.compact().data)
    else:
        d = np.ascontiguousarray(dense)
        row = d.dtype.itemsize * int(np.prod(d.shape[1:], dtype=np.int64))
        result = np.empty((n,) + d.shape[1:], d.dtype) if out is None else out
        if row == 0:  # zero-width rows: nothing to place, only the count to check
            rc = int(_levels.scatter_fixed(lv, top, np.zeros(len(d), np.uint8), 1, np.empty(n, np.uint8), validity))
            rc = rc if rc < 0 else len(d)
        else:
            rc = int(_levels.scatter_fixed(lv, top, d.reshape(-1).view(np.uint8), row,
                                           result.reshape(-1).view(np.uint8), validity))
    if rc < 0:
        present = lv == top
        raise CorruptFileError(f"{where}: {int(np.count_nonzero(present))} defined levels but {len(dense)} values")
    return result, validity


def spread_offsets(full: np.ndarray, present: np.ndarray, count: int) -> None:
    """The ``count + 1`` dense offsets at the head of ``full`` spread to one per row in place; see
    :func:`pqbloom.kernels.reference.levels.spread_offsets` (one backward pass here, no index array)."""
    if not (_use() and isinstance(full, np.ndarray) and full.dtype == np.int64 and full.flags.c_contiguous
            and full.flags.writeable and isinstance(present, np.ndarray) and present.dtype == np.bool_
            and present.ndim == 1 and present.flags.c_contiguous and 0 <= count < len(full)
            and len(present) < len(full)):
        return reference.spread_offsets(full, present, count)
    if int(_levels.spread_offsets(full, present.view(np.uint8), count)) < 0:
        reference.spread_offsets(full, present, count)  # raises its CorruptFileError (nothing written)



# -- repetition levels to list offsets ---------------------------------------------------------

def list_offsets(defs: np.ndarray, reps: np.ndarray, elem_def: int, ctx_def: int = 0, ctx_rep: int = 0,
                 where: str = "list") -> np.ndarray:
    """Offsets (int64, one per slot + 1) of the innermost list level, in one pass over the levels.

    Slots start at the entries with ``reps <= ctx_rep`` and ``defs >= ctx_def``; elements are the
    entries with ``defs >= elem_def``. CorruptFileError for an element before the first slot.
    """
    if not _use() or not all(-(1 << 31) <= x < (1 << 31) for x in (elem_def, ctx_def, ctx_rep)):
        return reference.list_offsets(defs, reps, elem_def, ctx_def, ctx_rep, where)
    d = reference.check_levels(defs, "definition levels")
    r = reference.check_levels(reps, "repetition levels")
    if len(d) != len(r):
        raise ValueError(f"{len(d)} definition levels for {len(r)} repetition levels")
    if d.dtype != r.dtype or d.dtype == np.bool_:
        d, r = d.astype(np.int32), r.astype(np.int32)
    d, r = np.ascontiguousarray(d), np.ascontiguousarray(r)
    nslots = int(_levels.count_slots(d, r, ctx_def, ctx_rep))
    out = np.empty(nslots + 1, np.int64)
    rc = int(_levels.list_offsets(d, r, ctx_def, ctx_rep, elem_def, out))
    if rc == _levels.ELEMENTS_BEFORE_FIRST_SLOT:
        raise CorruptFileError(f"{where}: elements before the first slot")
    if rc != nslots:  # pragma: no cover - the levels changed between the passes
        raise RuntimeError("list_offsets: levels changed during the pass")
    return out


def check_chunk_levels(defs: np.ndarray | None, reps: np.ndarray | None, max_def: int, max_rep: int,
                       rep_def: list[int], n: int) -> int:
    """Refuse a chunk's levels no valid writer produces and count its records, in one pass over
    both level arrays; see :func:`pqbloom.kernels.reference.levels.check_chunk_levels`."""
    if not _use() or defs is None or reps is None or not len(reps) or len(defs) != len(reps) \
            or defs.dtype != reps.dtype or defs.dtype not in LEVEL_DTYPES \
            or not 0 <= max_rep < len(rep_def) or rep_def[0] != 0 \
            or not 0 <= max_def <= np.iinfo(defs.dtype).max or max_rep > np.iinfo(defs.dtype).max \
            or not all(0 <= x <= max_def for x in rep_def[:max_rep + 1]):
        # levels the kernel's one type cannot hold the maxima of (or mixed types): the reference
        return reference.check_chunk_levels(defs, reps, max_def, max_rep, rep_def, n)
    info = np.zeros(4, np.int64)
    _levels.check_chunk(np.ascontiguousarray(defs), np.ascontiguousarray(reps), max_def, max_rep,
                        np.array(rep_def[:max_rep + 1], np.int64), info)
    if info[1] or info[2] or info[3] or reps[0] != 0:  # an error: the reference finds and reports it
        return reference.check_chunk_levels(defs, reps, max_def, max_rep, rep_def, n)
    return int(info[0])
