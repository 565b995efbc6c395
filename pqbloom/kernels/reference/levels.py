"""Numpy reference of the level kernels (:mod:`pqbloom.kernels.levels`): nulls placed from definition
levels, a byte-array column's offsets spread to its rows, repetition levels to list offsets, and a
nested chunk's level checks. The argument checks shared with the compiled path live here too
(``check_*``), so both modes reject a bad call the same way.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ...arrays import BinaryArray
from ...errors import CorruptFileError
from .hybrid import LEVEL_DTYPES

__all__ = ["check_levels", "scatter_nulls", "check_scatter_out", "spread_offsets", "list_offsets",
           "check_chunk_levels"]


# -- nulls placed from definition levels ---------------------------------------------------------

def check_levels(levels: np.ndarray, what: str) -> np.ndarray:
    """``levels`` as a 1-D array of int8, int16 or int32 (or a bool mask); ValueError otherwise."""
    lv = np.asarray(levels)
    if lv.ndim != 1:
        raise ValueError(f"{what} must be 1-D")
    if lv.dtype == np.bool_ or lv.dtype in LEVEL_DTYPES:
        return lv
    if lv.dtype.kind in "iu" and (not len(lv) or (int(lv.min()) >= -(1 << 31) and int(lv.max()) < (1 << 31))):
        return lv.astype(np.int32)
    raise ValueError(f"{what} must be int8, int16 or int32 levels (or a bool mask), not {lv.dtype}")


def _present(levels: np.ndarray, max_level: int) -> np.ndarray:
    lv = check_levels(levels, "levels")
    return lv if lv.dtype == np.bool_ else lv == max_level


def scatter_nulls(dense: Any, levels: np.ndarray, max_level: int = 1, where: str = "column",
                  out: np.ndarray | None = None) -> tuple[Any, np.ndarray]:
    """Full-length values and Arrow's validity bitmap from dense (non-null) values.

    ``levels`` are definition levels (a value is present where they equal ``max_level``) or a bool
    presence mask. ``dense`` is a numpy array (1-D, or 2-D uint8 rows for FIXED_LEN_BYTE_ARRAY) or
    a BinaryArray. Null slots hold zeros (empty values); the bitmap is little-endian packed bits,
    ``ceil(n / 8)`` bytes. CorruptFileError when the levels define a different number of values.
    ``out``: the array the values are written to (and returned), for a numpy ``dense``: contiguous,
    writable, ``len(levels)`` rows of ``dense``'s dtype and row shape (ValueError otherwise).
    """
    present = _present(levels, max_level)
    if out is not None:
        check_scatter_out(dense, len(present), out)
    npresent = int(np.count_nonzero(present))
    if npresent != len(dense):
        raise CorruptFileError(f"{where}: {npresent} defined levels but {len(dense)} values")
    values = _scatter(dense, present)
    if out is not None:
        out[...] = values
        values = out
    return values, np.packbits(present, bitorder="little")


def check_scatter_out(dense: Any, n: int, out: np.ndarray) -> None:
    """ValueError unless ``out`` can take the ``n`` scattered rows of ``dense`` (see :func:`scatter_nulls`)."""
    if not isinstance(dense, np.ndarray) or not isinstance(out, np.ndarray) or out.dtype != dense.dtype \
            or out.shape != (n,) + dense.shape[1:] or not out.flags.c_contiguous or not out.flags.writeable:
        raise ValueError("scatter_nulls: out must be a contiguous, writable array of the values' dtype and "
                         "row shape with one row per level")


def _scatter(dense: Any, present: np.ndarray) -> Any:
    """Dense values spread to the slots of ``present``; placeholders (zeros, empty values) elsewhere."""
    n = len(present)
    if isinstance(dense, BinaryArray):
        lens = np.zeros(n, np.int64)
        lens[present] = dense.lengths()
        offs = np.zeros(n + 1, np.int64)
        np.cumsum(lens, out=offs[1:])
        return BinaryArray(offs, dense.compact().data)
    out = np.zeros((n,) + dense.shape[1:], dense.dtype)
    out[present] = dense
    return out


_SPREAD_BLOCK = 1 << 16


def spread_offsets(full: np.ndarray, present: np.ndarray, count: int) -> None:
    """Spread the ``count + 1`` dense offsets at the head of ``full`` (int64, at least
    ``len(present) + 1`` entries) to one per row, in place: row i ends where its last present row's
    value ends (a null row repeats the offset before it). CorruptFileError when ``present`` does
    not flag exactly ``count`` rows (nothing written then)."""
    present = np.asarray(present, dtype=bool)
    n = len(present)
    if count < 0 or len(full) < max(n, count) + 1:
        raise ValueError("spread_offsets: the offsets do not hold the rows")
    starts = list(range(0, n, _SPREAD_BLOCK))
    before = [0]
    for a in starts:  # (np.add.reduceat would first cast every flag to int64)
        before.append(before[-1] + int(np.count_nonzero(present[a:a + _SPREAD_BLOCK])))
    if before[-1] != count:
        raise CorruptFileError(f"{count} values for {before[-1]} non-null slots")
    for a, c0 in zip(starts[::-1], before[-2::-1]):
        b = min(a + _SPREAD_BLOCK, n)
        idx = np.cumsum(present[a:b], dtype=np.int64)
        idx += c0
        full[a + 1:b + 1] = full[idx]  # gathered before written: reads at or below b



# -- repetition levels to list offsets ----------------------------------------------------------

def list_offsets(defs: np.ndarray, reps: np.ndarray, elem_def: int, ctx_def: int = 0, ctx_rep: int = 0,
                 where: str = "list") -> np.ndarray:
    """Offsets (int64, one per slot + 1) of the innermost list level of a column.

    The list's slots start at the entries with ``reps <= ctx_rep`` and ``defs >= ctx_def``; its
    elements are the entries with ``defs >= elem_def``, each counted in the slot before it (the
    running count of ``pqbloom.file.levels.assemble``). An element before the first slot is a
    CorruptFileError.
    """
    d = check_levels(defs, "definition levels")
    r = check_levels(reps, "repetition levels")
    if len(d) != len(r):
        raise ValueError(f"{len(d)} definition levels for {len(r)} repetition levels")
    slot = r <= ctx_rep
    if ctx_def > 0:
        slot &= d >= ctx_def
    pos = np.flatnonzero(slot)
    cs = np.cumsum(d >= elem_def, dtype=np.int64)
    nslots = len(pos)
    before = (int(cs[pos[0] - 1]) if pos[0] else 0) if nslots else (int(cs[-1]) if len(cs) else 0)
    if before:
        raise CorruptFileError(f"{where}: elements before the first slot")
    offsets = np.zeros(nslots + 1, np.int64)
    if nslots:
        offsets[1:nslots] = cs[pos[1:] - 1]
        offsets[-1] = cs[-1]
    return offsets


def check_chunk_levels(defs: np.ndarray | None, reps: np.ndarray | None, max_def: int, max_rep: int,
                       rep_def: list[int], n: int) -> int:
    """Refuse a chunk's levels no valid writer produces (CorruptFileError): out of range, a first
    record continuing a list, or a repetition into a list that has no element (``rep_def[k]``: the
    definition level at which the k-th repeated ancestor holds an element). Returns the number of
    records: entries with repetition level 0 (``n`` without repetition levels)."""
    if defs is not None and len(defs) and (int(defs.max()) > max_def or int(defs.min()) < 0):
        raise CorruptFileError(f"definition level out of range 0..{max_def}")
    if reps is None:
        return n
    if not len(reps):
        return 0
    if int(reps.max()) > max_rep or int(reps.min()) < 0:
        raise CorruptFileError(f"repetition level out of range 0..{max_rep}")
    if reps[0] != 0:
        raise CorruptFileError(f"the first repetition level is {int(reps[0])}, not 0: the chunk starts inside a record")
    if defs is not None:
        for k in range(1, max_rep + 1):
            # an entry repeating at level k, and the entry before it, must reach that list's elements
            low = defs < rep_def[k]
            low[1:] |= low[:-1]
            if bool((low & (reps == k)).any()):
                raise CorruptFileError("a repetition level continues a list that has no element")
    return int(np.count_nonzero(reps == 0))
