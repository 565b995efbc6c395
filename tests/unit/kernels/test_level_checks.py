"""The one-pass check of a nested chunk's levels (pqbloom.kernels.levels.check_chunk_levels) against its
numpy reference and an independent oracle, and the null scatter on levels that come in runs.

* Property tests (hypothesis): compiled == reference (the same record count, or the same
  CorruptFileError with the same message) on random levels, in and out of range, with every
  level dtype, and on levels shredded from random nested rows (valid, then mutated).
* Oracle: a plain Python reading of the rules on the same inputs (in both modes).
* scatter_nulls on runs of present and null slots (whole groups of 8 take the kernel's run
  paths), with one value too many or too few: compiled == reference == a Python oracle.
"""

from __future__ import annotations

import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pqbloom.arrays import BinaryArray
from pqbloom.kernels import levels as level_kernels
from tests.unit.kernels.test_kernels import compiled, outcome, same

PROPS = settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def oracle(defs: list[int], reps: list[int], max_def: int, max_rep: int, rep_def: list[int]) -> tuple[str, ...]:
    """The rules entry by entry, in the reference's order of reporting."""
    if any(not 0 <= d <= max_def for d in defs):
        return ("error", "CorruptFileError", f"definition level out of range 0..{max_def}")
    if not reps:
        return ("ok", 0)
    if any(not 0 <= r <= max_rep for r in reps):
        return ("error", "CorruptFileError", f"repetition level out of range 0..{max_rep}")
    if reps[0] != 0:
        return ("error", "CorruptFileError",
                f"the first repetition level is {reps[0]}, not 0: the chunk starts inside a record")
    for i in range(1, len(reps)):
        k = reps[i]
        if k and (defs[i] < rep_def[k] or defs[i - 1] < rep_def[k]):
            return ("error", "CorruptFileError", "a repetition level continues a list that has no element")
    return ("ok", sum(r == 0 for r in reps))


def check(defs: list[int], reps: list[int], max_def: int, max_rep: int, rep_def: list[int], dtype: str) -> None:
    d, r = np.array(defs, dtype), np.array(reps, dtype)
    got = same(level_kernels.check_chunk_levels, d, r, max_def, max_rep, rep_def, len(d))
    assert got == oracle(defs, reps, max_def, max_rep, rep_def)


# a schema's shape: max_rep repeated levels, each list's elements at rep_def[k]
shapes = st.sampled_from([(2, 1, [0, 2]), (3, 1, [0, 2]), (1, 1, [0, 1]), (4, 2, [0, 2, 4]), (5, 4, [0, 2, 3, 4, 5]),
                          (6, 3, [0, 1, 3, 5])])


@PROPS
@given(shapes, st.lists(st.tuples(st.integers(-2, 7), st.integers(-1, 5)), max_size=60),
       st.sampled_from(["i1", "i2", "i4"]))
def test_random_levels(shape: tuple[int, int, list[int]], levels: list[tuple[int, int]], dtype: str) -> None:
    max_def, max_rep, rep_def = shape
    check([d for d, _ in levels], [r for _, r in levels], max_def, max_rep, rep_def, dtype)


def shredded(rows: list[list[list[int | None] | None] | None]) -> tuple[list[int], list[int]]:
    """Levels of list<list<int?>?>? (def: 1 outer list, 2 outer element, 3 inner list, 4 inner
    element, 5 value; rep_def [0, 2, 4])."""
    defs: list[int] = []
    reps: list[int] = []
    for row in rows:
        if not row:
            defs.append(0 if row is None else 1)
            reps.append(0)
            continue
        for i, inner in enumerate(row):
            r0 = 0 if i == 0 else 1
            if not inner:
                defs.append(2 if inner is None else 3)
                reps.append(r0)
                continue
            for j, v in enumerate(inner):
                defs.append(4 if v is None else 5)
                reps.append(r0 if j == 0 else 2)
    return defs, reps


inner = st.one_of(st.none(), st.lists(st.one_of(st.none(), st.integers()), max_size=4))
rows_strategy = st.lists(st.one_of(st.none(), st.lists(inner, max_size=4)), min_size=1, max_size=30)


@PROPS
@given(rows_strategy, st.lists(st.tuples(st.integers(0, 200), st.integers(0, 5), st.booleans()), max_size=3),
       st.sampled_from(["i1", "i2", "i4"]))
def test_shredded_then_mutated(rows: list[list[list[int | None] | None] | None], edits: list[tuple[int, int, bool]],
                               dtype: str) -> None:
    defs, reps = shredded(rows)
    check(defs, reps, 5, 2, [0, 2, 4], dtype)  # valid: counts the rows
    for at, level, on_reps in edits:
        (reps if on_reps else defs)[at % len(defs)] = level
    check(defs, reps, 5, 2, [0, 2, 4], dtype)


def test_records_counted_in_both_modes() -> None:
    defs, reps = shredded([[[1, None], None, []], None, [], [[2]]])
    for on in (True, False):
        with compiled(on):
            assert level_kernels.check_chunk_levels(np.array(defs, np.int8), np.array(reps, np.int8), 5, 2, [0, 2, 4],
                                              len(defs)) == 4
    # without repetition levels the records are the entries; mixed dtypes take the reference
    assert outcome(level_kernels.check_chunk_levels, np.array([0, 1], np.int8), None, 1, 0, [0], 2) == ("ok", 2)
    assert outcome(level_kernels.check_chunk_levels, np.array(defs, np.int16), np.array(reps, np.int8), 5, 2,
                   [0, 2, 4], len(defs)) == ("ok", 4)


@PROPS
@given(st.lists(st.tuples(st.booleans(), st.integers(1, 40)), max_size=12), st.sampled_from([-1, 0, 0, 0, 1]),
       st.sampled_from(["i8", "f8", "i2", "bool", "binary"]), st.sampled_from(["i1", "i4", "mask"]))
def test_scatter_runs(runs: list[tuple[bool, int]], extra: int, kind: str, lvtype: str) -> None:
    present = [p for p, k in runs for _ in range(k)]
    nd = max(0, sum(present) + extra)
    levels = np.array([3 if p else 2 for p in present], np.int8)
    lv = levels == 3 if lvtype == "mask" else levels.astype(lvtype)
    dense = (BinaryArray.from_pylist([bytes([i % 251]) * (i % 3) for i in range(nd)]) if kind == "binary"
             else np.arange(1, nd + 1).astype(kind))
    got = same(level_kernels.scatter_nulls, dense, lv, 3)
    if nd != sum(present):
        assert got[0] == "error"
        return
    it = iter(range(nd))
    if kind == "binary":
        want = BinaryArray.from_pylist([bytes([i % 251]) * (i % 3) if p else b"" for p, i in
                                        ((p, next(it) if p else 0) for p in present)])
    else:
        want = np.array([next(it) + 1 if p else 0 for p in present]).astype(kind)
    bits = np.packbits(np.array(present, bool), bitorder="little")
    assert got == outcome(lambda: (want, bits))
