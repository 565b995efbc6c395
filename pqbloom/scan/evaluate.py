"""Exact evaluation of a bound filter over decoded columns, in three-valued logic: every node gives
the rows where it is true and the rows where it is false; the others are null.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..arrays import BinaryArray
from ..bloom import hash_scalar, hash_values
from ..file import EncodedColumn
from ..limits import charge
from ..schema import PhysicalType
from ..table import Column, column_from_values, int96_ticks
from ..table.outputs import logical_numpy
from .bind import (
    BoundAnd,
    BoundAny,
    BoundColumn,
    BoundCompare,
    BoundConst,
    BoundIsIn,
    BoundIsNull,
    BoundLeaf,
    BoundNode,
    BoundNonNull,
    BoundNot,
    BoundOr,
    bound_leaves,
)

__all__ = ["RepeatedColumn", "evaluate", "entry_truth", "matches", "key_array", "leaf_truth", "null_row_truth"]


# ---------------------------------------------------------------------------
# Exact evaluation (three-valued: T = rows where true, F = rows where false)
# ---------------------------------------------------------------------------
def _binary_cmp(arr: BinaryArray, key: bytes) -> np.ndarray:
    """-1 / 0 / 1 per value as it sorts before / equal to / after ``key`` (byte-wise, prefix first)."""
    n = len(arr)
    lens = arr.lengths()
    L = len(key)
    out = np.sign(lens - L).astype(np.int8)
    if n == 0 or L == 0 or arr.data.size == 0:
        return out
    k = np.frombuffer(key, np.uint8)
    starts = arr.offsets[:-1]
    cols = np.arange(L, dtype=np.int64)
    block = max(1, (1 << 22) // L)
    last = arr.data.size - 1
    for b0 in range(0, n, block):
        b1 = min(n, b0 + block)
        ln = lens[b0:b1, None]
        inval = cols[None, :] >= ln
        idx = np.minimum(starts[b0:b1, None] + cols[None, :], last)
        m = arr.data[idx]
        diff = (m != k[None, :]) & ~inval
        has = diff.any(axis=1)
        if not has.any():
            continue
        first = diff.argmax(axis=1)
        rows = np.arange(b1 - b0)
        less = m[rows, first] < k[first]
        out[b0:b1] = np.where(has, np.where(less, -1, 1), out[b0:b1])
    return out


def _binary_equal(arr: BinaryArray, key: bytes) -> np.ndarray:
    lens = arr.lengths()
    L = len(key)
    out = lens == L
    cand = np.flatnonzero(out)
    if len(cand) and L:
        starts = arr.offsets[:-1][cand]
        m = arr.data[starts[:, None] + np.arange(L, dtype=np.int64)[None, :]]
        out[cand] = (m == np.frombuffer(key, np.uint8)[None, :]).all(axis=1)
    return out


def _binary_isin(arr: BinaryArray, keys: list[bytes]) -> np.ndarray:
    if not keys or len(arr) == 0:
        return np.zeros(len(arr), bool)
    if len(keys) <= 4:
        out = np.zeros(len(arr), bool)
        for k in keys:
            out |= _binary_equal(arr, k)
        return out
    h = hash_values(arr, PhysicalType.BYTE_ARRAY)
    kh = np.array([hash_scalar(k, PhysicalType.BYTE_ARRAY) for k in keys], np.uint64)
    cand = np.flatnonzero(np.isin(h, kh))
    out = np.zeros(len(arr), bool)
    if len(cand):
        ks = set(keys)
        out[cand] = np.fromiter((arr[int(i)] in ks for i in cand), bool, count=len(cand))
    return out


def key_array(col: Column, bc: BoundColumn) -> np.ndarray | BinaryArray:
    """The column's values in the comparison domain of ``bc``."""
    v = col.values
    p = bc.ptype
    if bc.dom in ("int", "uint"):
        if p == PhysicalType.BOOLEAN:
            return np.asarray(v, bool).astype(np.int8)
        if p == PhysicalType.INT96:
            return _int96_keys(v, col.mask)
        if bc.narrow is not None:
            return logical_numpy(bc.field, np.asarray(v))  # the values the read returns
        if bc.dom == "uint":
            return np.asarray(v).view(np.uint32 if p == PhysicalType.INT32 else np.uint64)
        return np.asarray(v)
    if bc.dom == "float":
        if p == PhysicalType.FIXED_LEN_BYTE_ARRAY:
            return np.ascontiguousarray(v, dtype=np.uint8).view("<f2").reshape(-1).astype(np.float64)
        return np.asarray(v).astype(np.float64, copy=False)
    if bc.dom == "decimal":
        if isinstance(v, np.ndarray):  # FLBA (n, w)
            w = v.shape[1] if v.ndim == 2 else 0
            if 0 < w <= 8:
                m = np.ascontiguousarray(v, dtype=np.uint8)
                pad = np.where(m[:, :1] >= 0x80, 0xFF, 0x00).astype(np.uint8)
                full = np.concatenate([np.repeat(pad, 8 - w, axis=1), m], axis=1)
                return np.ascontiguousarray(full).view(">i8").reshape(-1).astype(np.int64)
            return np.array([int.from_bytes(bytes(r), "big", signed=True) for r in v], dtype=object)
        return np.array([int.from_bytes(b, "big", signed=True) if b else 0 for b in v], dtype=object)
    if isinstance(v, BinaryArray):
        return v
    # (n, width) rows of bytes; an empty column's width from the type (-1 cannot be inferred from 0 values)
    return BinaryArray.from_fixed(np.asarray(v, np.uint8).reshape(len(v), -1 if len(v) else bc.type_length or 0))


def _int96_keys(v: Any, mask: np.ndarray | None) -> np.ndarray:
    """INT96 values as nanoseconds, exact: Python ints (object array) when some do not fit int64
    (years before 1677 or after 2262), so that they compare as what they are rather than wrapped."""
    ns, bad = int96_ticks(v, "ns", mask)
    if not bad.any():
        return ns
    m = np.ascontiguousarray(v, dtype=np.uint8).reshape(-1, 12)
    nanos = m[:, :8].copy().view("<i8").reshape(-1).astype(object)
    days = m[:, 8:].copy().view("<u4").reshape(-1).astype(np.int64).astype(object)
    out = (days - 2_440_588) * 86_400_000_000_000 + nanos
    if mask is not None:
        out[mask] = 0
    return np.asarray(out, dtype=object)


def _np_cmp(a: Any, op: str, k: Any) -> np.ndarray:
    if op == "==":
        r = a == k
    elif op == "!=":
        r = a != k
    elif op == "<":
        r = a < k
    elif op == "<=":
        r = a <= k
    elif op == ">":
        r = a > k
    else:
        r = a >= k
    return np.asarray(r, dtype=bool)


def leaf_truth(leaf: BoundLeaf, col: Column, keys: np.ndarray | BinaryArray | None) -> tuple[np.ndarray, np.ndarray]:
    """(rows where ``leaf`` is true, rows where it is false) over ``col``; ``keys`` is
    :func:`key_array` of ``col`` for a comparison or ``isin`` (None for the other leaves)."""
    n = len(col)
    if col.mask is None and isinstance(leaf, BoundCompare) and not isinstance(keys, BinaryArray):
        r = _np_cmp(keys, leaf.op, leaf.key)
        return r, ~r
    null = col.mask if col.mask is not None else np.zeros(n, bool)
    valid = ~null
    if isinstance(leaf, BoundIsNull):
        t = valid.copy() if leaf.negate else null.copy()
        return t, ~t
    if isinstance(leaf, BoundNonNull):
        return (valid, np.zeros(n, bool)) if leaf.value else (np.zeros(n, bool), valid)
    assert keys is not None  # a comparison or isin: the caller passes key_array(col)
    if isinstance(leaf, BoundIsIn):
        bc = leaf.col
        if isinstance(keys, BinaryArray):
            member = _binary_isin(keys, leaf.keys)
        elif keys.dtype == object:
            ks = set(leaf.keys)
            member = np.fromiter((x in ks for x in keys), bool, count=n)
        elif leaf.keys:
            kk = np.array(leaf.keys, dtype=np.float64 if bc.dom == "float" else (
                np.uint64 if bc.dom == "uint" else object))
            if kk.dtype == object:  # keys past int64 (INT96 nanoseconds) match no int64 value
                kk = np.array([k for k in leaf.keys if -(1 << 63) <= k < (1 << 63)], dtype=np.int64)
            member = np.isin(keys, kk)
        else:
            member = np.zeros(n, bool)
        if leaf.has_nan and bc.dom == "float":
            assert isinstance(keys, np.ndarray)  # float keys are float64 arrays
            member |= np.isnan(keys)
        t = (valid & member) | (null & leaf.has_null)
        return t, ~t
    assert isinstance(leaf, BoundCompare)
    if isinstance(keys, BinaryArray):
        if leaf.op in ("==", "!="):
            eq = _binary_equal(keys, leaf.key)
            r = eq if leaf.op == "==" else ~eq
        else:
            r = _np_cmp(_binary_cmp(keys, leaf.key), leaf.op, 0)
    else:
        r = _np_cmp(keys, leaf.op, leaf.key)
    return valid & r, valid & ~r


@dataclass
class RepeatedColumn:
    """A repeated leaf over a run of rows: its non-null element values with the row of each, and the
    row of each null element. Rows whose list is null or empty appear in neither."""

    values: Column  # no mask
    value_rows: np.ndarray
    null_rows: np.ndarray


def _any_truth(leaf: BoundLeaf, rc: RepeatedColumn, keys: Any, n: int) -> tuple[np.ndarray, np.ndarray]:
    """Rows where some element satisfies ``leaf`` (true), and the others (false)."""
    t, _ = leaf_truth(leaf, rc.values, keys)
    out = np.zeros(n, bool)
    out[rc.value_rows[t]] = True
    if len(rc.null_rows) and null_row_truth(leaf)[0]:
        out[rc.null_rows] = True
    return out, ~out


#: at most this many entries true (or false) map to rows by comparing codes, one pass each; more by a gather
_MAX_CODE_COMPARES = 4


def _lookup(table: np.ndarray, col: EncodedColumn) -> np.ndarray:
    """``table[codes]`` of ``col``'s rows: a truth value per entry (and the null code, last) mapped to the
    rows, piece by piece of the codes (a page each as decoded) into one array."""
    n = len(col)
    hits = np.flatnonzero(table)
    if len(hits) == 0:
        return np.zeros(n, bool)
    if len(hits) == len(table):
        return np.ones(n, bool)
    # Python ints: compared with the codes in their own width (a numpy int64 scalar would make numpy
    # convert every int32 code to int64 first)
    few_hits = hits.tolist() if len(hits) <= _MAX_CODE_COMPARES else None
    few_misses = None if few_hits is not None else np.flatnonzero(~table)
    misses = few_misses.tolist() if few_misses is not None and len(few_misses) <= _MAX_CODE_COMPARES else None
    out = np.empty(n, bool)
    pos = 0
    for codes in col.pieces:
        o = out[pos:pos + len(codes)]
        pos += len(codes)
        if few_hits is not None:
            np.equal(codes, few_hits[0], out=o)
            for h in few_hits[1:]:
                o |= codes == h
        elif misses is not None:
            np.not_equal(codes, misses[0], out=o)
            for m in misses[1:]:
                o &= codes != m
        else:  # (every code is below len(table): checked when decoded)
            np.take(table, codes, out=o, mode="clip")
    return out


def _on_entries(x: BoundNode, col: EncodedColumn, name: str, need_f: bool,
                known: Mapping[int, tuple[np.ndarray, np.ndarray]]) -> tuple[np.ndarray, np.ndarray | None]:
    """``x`` (whose only column is ``col``) evaluated once per dictionary entry and once on a null row,
    then mapped to the rows by their codes. ``known``: truths of leaves over the entries and a null row
    already worked out, by ``id`` of leaf (see :func:`matches`); when it holds every leaf of ``x``,
    they are only combined."""
    t_all, f_all = _entry_truths(x, col.entries_column(), name, need_f, known)
    t = _lookup(t_all, col)
    return t, (_lookup(f_all, col) if need_f and f_all is not None else None)


def _entry_truths(x: BoundNode, entries: Column, name: str, need_f: bool,
                  known: Mapping[int, tuple[np.ndarray, np.ndarray]]) -> tuple[np.ndarray, np.ndarray | None]:
    """(true, false) of ``x`` (whose only column is ``name``) on each of ``entries`` (a column without
    nulls), then on a null row; ``known`` as in :func:`_on_entries`."""
    m = len(entries) + 1
    if known and all(len(known.get(id(lf), ((), ()))[0]) == m for lf in bound_leaves(x)):
        return _evaluate(x, {}, m, need_f, {}, known)
    te, fe = evaluate(x, {name: entries}, len(entries))
    tn, fn = evaluate(x, {name: column_from_values(name, [None], entries.field)}, 1)
    return np.concatenate([te, tn]), np.concatenate([fe, fn])


def entry_truth(node: BoundNode, entries: Column, name: str,
                known: Mapping[int, tuple[np.ndarray, np.ndarray]] | None = None) -> np.ndarray:
    """Where ``node`` (whose only column is ``name``) is true: on each of ``entries`` (a column of the
    values of a chunk's dictionary, without nulls), then on a null row (one more flag). ``known``: the
    truths of some leaves over the same entries and a null row, by ``id`` of leaf (see :func:`matches`)."""
    return _entry_truths(node, entries, name, False, known or {})[0]


def _column_names(x: BoundNode) -> set[str]:
    return {lf.col.name for lf in bound_leaves(x)}


def evaluate(node: BoundNode, cols: Mapping[str, Any], n: int) -> tuple[np.ndarray, np.ndarray]:
    """(rows where the predicate is true, rows where it is false); the rest are null.

    ``cols`` maps a column name to its :class:`Column` over the ``n`` rows, or for a repeated leaf
    to a :class:`RepeatedColumn`, or for a dictionary-encoded chunk to an
    :class:`~pqbloom.file.EncodedColumn`: every subtree of the filter on that column alone is then
    evaluated on its dictionary entries and mapped to the rows by their codes.
    """
    t, f = _evaluate(node, cols, n, True, {}, {})
    assert f is not None
    return t, f


def matches(node: BoundNode, cols: Mapping[str, Any], n: int, *,
            known: Mapping[str, Mapping[int, tuple[np.ndarray, np.ndarray]]] | None = None) -> np.ndarray:
    """The rows where the predicate is true (see :func:`evaluate`). ``known``: by column name, for
    a column given as an :class:`~pqbloom.file.EncodedColumn`, the truths of some of its leaves (by
    ``id`` of leaf: rows where true, rows where false) over its entries followed by a null row, as
    pruning on the chunk's dictionary found them; those leaves are not evaluated again."""
    return _evaluate(node, cols, n, False, known or {}, {})[0]


def _evaluate(node: BoundNode, cols: Mapping[str, Any], n: int, want_f: bool,
              known: Mapping[str, Mapping[int, tuple[np.ndarray, np.ndarray]]],
              leaves: Mapping[int, tuple[np.ndarray, np.ndarray]]) -> tuple[np.ndarray, np.ndarray | None]:
    """:func:`evaluate`, and ``f`` None unless ``want_f``. ``known``: see :func:`matches`; ``leaves``:
    truths of leaves over these ``n`` rows, by ``id`` of leaf, taken as they are."""
    # the truth masks of the nodes, key arrays and the caller's row numbers of the matches: a page of
    # a few bytes can stand for millions of rows, so the read's memory budget counts them first
    # (comparing byte strings gathers by byte: a word per byte of the values)
    value_bytes = sum(int(v.offsets[-1] - v.offsets[0]) for v in (getattr(c, "values", None) for c in cols.values())
                      if isinstance(v, BinaryArray))
    charge(16 * n + 8 * value_bytes, f"evaluating the filter over {n:,} rows")
    cache: dict[str, Any] = {}
    encoded = {name for name, c in cols.items() if isinstance(c, EncodedColumn)}

    def go(x: BoundNode, need_f: bool) -> tuple[np.ndarray, np.ndarray | None]:
        if isinstance(x, BoundConst):
            if x.value is None:
                return np.zeros(n, bool), np.zeros(n, bool)
            ones = np.ones(n, bool)
            return (ones, ~ones) if x.value else (~ones, ones)
        if leaves and isinstance(x, BoundLeaf) and id(x) in leaves:
            return leaves[id(x)]
        if encoded:
            names = _column_names(x)
            if len(names) == 1 and names <= encoded:
                name = names.pop()
                return _on_entries(x, cols[name], name, need_f, known.get(name, {}))
        if isinstance(x, BoundAny):
            leaf = x.a
            rc = cols[leaf.col.name]
            keys = None
            if isinstance(leaf, (BoundCompare, BoundIsIn)):
                keys = cache.get(leaf.col.name)
                if keys is None:
                    keys = cache[leaf.col.name] = key_array(rc.values, leaf.col)
            return _any_truth(leaf, rc, keys, n)
        if isinstance(x, BoundLeaf):
            col = cols[x.col.name]
            keys = None
            if isinstance(x, (BoundCompare, BoundIsIn)):
                keys = cache.get(x.col.name)
                if keys is None:
                    keys = cache[x.col.name] = key_array(col, x.col)
            return leaf_truth(x, col, keys)
        if isinstance(x, BoundNot):
            t, f = go(x.a, True)
            assert f is not None
            return f, t
        assert isinstance(x, (BoundAnd, BoundOr))
        ta, fa = go(x.a, need_f)
        tb, fb = go(x.b, need_f)
        conj = isinstance(x, BoundAnd)
        f = None
        if need_f:
            assert fa is not None and fb is not None
            f = fa | fb if conj else fa & fb
        return (ta & tb if conj else ta | tb), f

    return go(node, want_f)


def null_row_truth(leaf: BoundLeaf) -> tuple[bool, bool]:
    """The result of a leaf on a null row."""
    if isinstance(leaf, BoundIsNull):
        return (False, True) if leaf.negate else (True, False)
    if isinstance(leaf, BoundIsIn):
        return leaf.has_null, not leaf.has_null
    return False, False
