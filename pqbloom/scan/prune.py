"""Pruning by statistics: may a bound filter be true (or false) somewhere in a unit of rows?

A unit is a row group or a page run; what metadata says about one column over it is a
:class:`UnitStats`. Every node yields *may be true* / *may be false* (:func:`combine_verdicts`), so
``~``, ``&`` and ``|`` prune soundly. :func:`statistics_verdicts` does this for every row group of a
file at once, on arrays gathered from one skim of the footer (:class:`UnitStatsArrays`);
:func:`meta_stats` / :func:`leaf_may` are the scalar reference it is tested against.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..errors import ParquetError
from ..file import FooterStats
from ..schema import PhysicalType
from ..statistics import ChunkStats, SortOrder, column_order_kind, legacy_stats_trusted
from .bind import (
    BoundAnd,
    BoundAny,
    BoundColumn,
    BoundCompare,
    BoundConst,
    BoundFilter,
    BoundIsIn,
    BoundIsNull,
    BoundLeaf,
    BoundNode,
    BoundNonNull,
    BoundNot,
    BoundOr,
    bound_leaves,
)
from .explain import Explain

__all__ = ["UnitStats", "UnitStatsArrays", "Verdict", "to_domain", "narrow_bounds", "leaf_may", "leaf_may_arrays",
           "combine_verdicts", "column_stats", "meta_stats", "element_counts", "gather_stats", "statistics_verdicts",
           "statistics_pass", "footer_of"]


# ---------------------------------------------------------------------------
# Pruning: may the predicate be true / false somewhere in a unit of rows?
# ---------------------------------------------------------------------------
@dataclass
class UnitStats:
    """What metadata says about one column over a unit of rows (bounds in the column's domain)."""

    rows: int
    nulls: int | None = None
    nans: int | None = None
    lo: Any = None
    hi: Any = None
    exact: bool = False


def to_domain(v: Any, bc: BoundColumn) -> int | float | bytes | None:
    """A decoded statistics value as a value of ``bc``'s comparison domain (None stays None)."""
    if v is None:
        return None
    if bc.dom in ("int", "uint", "decimal"):
        return int(v)
    if bc.dom == "float":
        return float(v)
    return bytes(v)


def narrow_bounds(bc: BoundColumn, lo: Any, hi: Any) -> tuple[Any, Any]:
    """Domain bounds of a column whose values the read narrows (:attr:`BoundColumn.narrow`): kept when
    both lie in the annotation's range, where narrowing changes no value between them; else (None, None).
    Out of range, they were computed on what was stored (a UINT_8 255 stored as INT32 -1, whose signed
    or unsigned min/max say nothing of 255): the values read are not between them."""
    if bc.narrow is None:
        return lo, hi
    if lo is None or hi is None or not bc.lo <= lo <= hi <= bc.hi:
        return None, None
    return lo, hi


def _cmp_may(op: str, k: Any, lo: Any, hi: Any, exact: bool) -> tuple[bool, bool]:
    lo_ok, hi_ok = lo is not None, hi is not None
    if op in ("==", "!="):
        inside = (not lo_ok or lo <= k) and (not hi_ok or k <= hi)
        all_equal = exact and lo_ok and hi_ok and lo == k and hi == k
        return (inside, not all_equal) if op == "==" else (not all_equal, inside)
    if op == "<":
        return (not lo_ok or lo < k), (not hi_ok or hi >= k)
    if op == "<=":
        return (not lo_ok or lo <= k), (not hi_ok or hi > k)
    if op == ">":
        return (not hi_ok or hi > k), (not lo_ok or lo <= k)
    return (not hi_ok or hi >= k), (not lo_ok or lo < k)


def leaf_may(leaf: BoundLeaf, st: UnitStats) -> tuple[bool, bool]:
    """(may ``leaf`` be true on some row, may it be false on some row) of a unit described by ``st``."""
    rows = st.rows
    nulls = st.nulls
    if rows <= 0:
        return False, False
    any_null = nulls is None or nulls > 0
    nonnull = nulls is None or nulls < rows
    if isinstance(leaf, BoundIsNull):
        return (nonnull, any_null) if leaf.negate else (any_null, nonnull)
    if isinstance(leaf, BoundNonNull):
        return nonnull and leaf.value, nonnull and not leaf.value
    is_float = leaf.col.dom == "float"
    nan = is_float and nonnull and (st.nans is None or st.nans > 0)
    number = nonnull and not (is_float and st.nans is not None and nulls is not None and st.nans + nulls >= rows)
    lo, hi = (st.lo, st.hi) if number else (None, None)
    if isinstance(leaf, BoundIsIn):
        t_num = number and any((lo is None or lo <= k) and (hi is None or k <= hi) for k in leaf.keys)
        mt = t_num or (any_null and leaf.has_null) or (nan and leaf.has_nan)
        mf = number or (any_null and not leaf.has_null) or (nan and not leaf.has_nan)
        return bool(mt), bool(mf)
    assert isinstance(leaf, BoundCompare)
    t, f = _cmp_may(leaf.op, leaf.key, lo, hi, st.exact) if number else (False, False)
    if nan:
        if leaf.op == "!=":
            t = True
        else:
            f = True
    return bool(t), bool(f)


Verdict = tuple[Any, Any]  # (may be true, may be false): bools, or bool arrays per row run


def combine_verdicts(node: BoundNode, leaf_fn: Callable[[BoundLeaf, bool, bool], Verdict]) -> Verdict:
    """Fold (may_true, may_false) up the tree; ``leaf_fn(leaf, need_t, need_f)`` gives a leaf's."""

    def go(x: BoundNode, nt: bool, nf: bool) -> Verdict:
        if isinstance(x, BoundConst):
            return x.value is True, x.value is False
        if isinstance(x, BoundLeaf):
            return leaf_fn(x, nt, nf)
        if isinstance(x, BoundAny):
            # elements tell when no row can be true; a row without elements is always false
            t, _ = go(x.a, nt, False)
            return t, True
        if isinstance(x, BoundNot):
            t, f = go(x.a, nf, nt)
            return f, t
        assert isinstance(x, (BoundAnd, BoundOr))
        is_and = isinstance(x, BoundAnd)
        ta, fa = go(x.a, nt, nf)
        if isinstance(ta, bool) and isinstance(fa, bool):
            # skip the other side (and its IO) when it cannot change the answer we need
            if is_and and (not nt or not ta) and (not nf or fa):
                return (False if nt else True), True
            if not is_and and (not nt or ta) and (not nf or not fa):
                return True, (False if nf else True)
        tb, fb = go(x.b, nt, nf)
        if is_and:
            return ta & tb, fa | fb
        return ta | tb, fa & fb

    return go(node, True, False)


def column_stats(bound: BoundFilter, rg: int, bc: BoundColumn, rows: int) -> UnitStats:
    """What the footer says about ``bc`` in row group ``rg`` of ``rows`` rows (nothing when its metadata
    is unusable): from the statistics :func:`statistics_verdicts` gathered, else asked of the file."""
    if bound.footer is not None and bc.desc.index in bound.footer[1]:
        got = bound.footer[1][bc.desc.index][rg]
        return UnitStats(rows) if got is None else meta_stats(bc, rows, got, bound.created_by)
    try:
        meta = bound.pf.chunk_statistics(rg, bc.desc)
    except ParquetError:
        return UnitStats(rows)
    return meta_stats(bc, rows, meta, bound.created_by)


def meta_stats(bc: BoundColumn, rows: int, meta: FooterStats, created_by: str | None) -> UnitStats:
    """What the footer entry ``meta`` of a chunk of ``rows`` rows says (the scalar reference of
    :func:`gather_stats`)."""
    if bc.repeated:
        # a repeated leaf's counts are of level entries (>= 1 per row): the unit is the entries
        if meta.num_values is None or meta.num_values < rows:
            return UnitStats(rows)
        rows = meta.num_values
    elif meta.num_values is not None and meta.num_values != rows:
        return UnitStats(rows)
    cs = ChunkStats.from_fields(meta.statistics, bc.ptype, bc.sort_order, column_order=bc.column_order,
                                created_by=created_by, type_length=bc.type_length, logical_kind=bc.stat_kind)
    nulls = cs.null_count if cs.null_count is not None and cs.null_count <= rows else None
    if bc.repeated:
        counts = element_counts(bc, meta.definition_level_histogram, rows)
        if counts is not None:
            rows, nulls = counts
    nans = cs.nan_count if bc.dom == "float" else 0
    exact = bc.dom != "bytes" or (cs.min_exact is True and cs.max_exact is True)
    if bc.sort_order is SortOrder.UNDEFINED:
        return UnitStats(rows, nulls, nans)
    lo, hi = narrow_bounds(bc, to_domain(cs.min, bc), to_domain(cs.max, bc))
    return UnitStats(rows, nulls, nans, lo, hi, exact)


def element_counts(bc: BoundColumn, def_hist: Sequence[int] | None, entries: int | None) -> tuple[int, int] | None:
    """(elements, null elements) of a repeated leaf from a definition-level histogram of ``entries``
    level entries (None: not known); None when there is no histogram or it does not add up.

    Without one, ``null_count`` also counts the entries of null and empty lists, which is only an
    upper bound on the null elements (still sound for pruning, just weaker for ``is_null``).
    """
    if def_hist is None or len(def_hist) != bc.max_def + 1 or any(c is None or c < 0 for c in def_hist) \
            or (entries is not None and sum(def_hist) != entries):
        return None
    elements = int(sum(def_hist[bc.elem_def:]))
    return elements, elements - int(def_hist[bc.max_def])


# ---------------------------------------------------------------------------
# Statistics pruning of every row group at once
# ---------------------------------------------------------------------------
# Footer statistics of the filter's columns are gathered for all row groups into arrays in each
# column's domain and the bound tree is evaluated on them in one go; Bloom filters, dictionaries
# and page indexes then run only on the survivors. meta_stats / leaf_may are the reference:
# tests/unit/scan/test_pruning_vectorized.py checks this path against them.
_UNKNOWN = -1  # a count metadata does not give


@dataclass
class UnitStatsArrays:
    """:class:`UnitStats` of one column over many row groups, one entry each.

    Bounds are in the column's domain (int64, uint64, float64; object for bytes and for ints
    beyond 64 bits); where ``has_lo``/``has_hi`` is false the entry is a placeholder.
    """

    rows: np.ndarray  # int64
    nulls: np.ndarray  # int64, _UNKNOWN when unknown
    nans: np.ndarray  # int64, _UNKNOWN when unknown
    lo: np.ndarray
    hi: np.ndarray
    has_lo: np.ndarray
    has_hi: np.ndarray
    exact: np.ndarray

    @classmethod
    def of(cls, stats: Sequence[UnitStats], bc: BoundColumn) -> UnitStatsArrays:
        """Pack scalar stats (the path for repeated leaves and unusual types)."""
        n = len(stats)
        return cls(np.fromiter((s.rows for s in stats), np.int64, n),
                   np.fromiter((_UNKNOWN if s.nulls is None else s.nulls for s in stats), np.int64, n),
                   np.fromiter((_UNKNOWN if s.nans is None else s.nans for s in stats), np.int64, n),
                   _domain_array([s.lo for s in stats], bc.dom), _domain_array([s.hi for s in stats], bc.dom),
                   np.fromiter((s.lo is not None for s in stats), bool, n),
                   np.fromiter((s.hi is not None for s in stats), bool, n),
                   np.fromiter((bool(s.exact) for s in stats), bool, n))


def _object_array(values: Sequence[Any]) -> np.ndarray:
    out = np.empty(len(values), object)
    out[:] = values  # element by element: np.array would turn bytes into 'S' (dropping trailing NULs)
    return out


def _int_array(values: Sequence[int]) -> np.ndarray:
    """The narrowest of int64, uint64 and object that holds ``values`` exactly."""
    for dt in (np.int64, np.uint64):
        try:
            return np.array(values, dt)
        except OverflowError:
            pass
    return _object_array(values)


def _domain_array(values: Sequence[Any], dom: str) -> np.ndarray:
    """Bounds as one array; None entries become a placeholder."""
    if dom == "float":
        return np.array([0.0 if v is None else v for v in values], np.float64)
    if dom == "bytes":
        return _object_array([b"" if v is None else v for v in values])
    return _int_array([0 if v is None else v for v in values])


_NP_CMP = {"==": np.equal, "!=": np.not_equal, "<": np.less, "<=": np.less_equal, ">": np.greater,
           ">=": np.greater_equal}


def _arr_cmp(a: np.ndarray, op: str, k: Any) -> np.ndarray:
    """``a OP k`` elementwise, exact also for a Python int ``k`` outside ``a``'s integer dtype."""
    if a.dtype.kind in "iu":
        info = np.iinfo(a.dtype)
        if not info.min <= k <= info.max:
            below = k > info.max  # every element is below k
            val = {"==": False, "!=": True, "<": below, "<=": below, ">": not below, ">=": not below}[op]
            return np.full(a.shape, val)
        k = a.dtype.type(k)
    elif a.dtype == object:
        k = _object_array([k])  # as np.bytes_ a key would lose its trailing NUL bytes
    return np.asarray(_NP_CMP[op](a, k), bool)


def _any_key_between(keys: list[Any], lo: np.ndarray, lo_ok: np.ndarray, hi: np.ndarray,
                     hi_ok: np.ndarray) -> np.ndarray:
    """Per entry: some key k (sorted, distinct) has lo <= k <= hi (a bound that is not ok is open)."""
    if not keys:
        return np.zeros(len(lo), bool)
    if lo.dtype.kind in "iu":
        info = np.iinfo(lo.dtype)
        fits = info.min <= keys[0] and keys[-1] <= info.max
        karr = np.array(keys, lo.dtype) if fits else _object_array(keys)
        if not fits:
            lo, hi = lo.astype(object), hi.astype(object)
    elif lo.dtype == object:
        karr = _object_array(keys)
    else:
        karr = np.array(keys, lo.dtype)
    first = np.where(lo_ok, np.searchsorted(karr, lo, "left"), 0)  # first key >= lo
    end = np.where(hi_ok, np.searchsorted(karr, hi, "right"), len(keys))  # past the last key <= hi
    return first < end


def leaf_may_arrays(leaf: BoundLeaf, st: UnitStatsArrays) -> tuple[np.ndarray, np.ndarray]:
    """:func:`leaf_may` for every entry of ``st`` at once."""
    rows, nulls = st.rows, st.nulls
    valid = rows > 0
    known = nulls >= 0
    any_null = valid & (~known | (nulls > 0))
    nonnull = valid & (~known | (nulls < rows))
    if isinstance(leaf, BoundIsNull):
        return (nonnull, any_null) if leaf.negate else (any_null, nonnull)
    if isinstance(leaf, BoundNonNull):
        return nonnull & leaf.value, nonnull & (not leaf.value)
    if leaf.col.dom == "float":
        nans_known = st.nans >= 0
        nan = nonnull & (~nans_known | (st.nans > 0))
        # nans + nulls >= rows, written so that it cannot overflow (0 <= nulls <= rows where known)
        number = nonnull & ~(nans_known & known & (st.nans >= rows - nulls))
    else:
        nan = np.zeros(len(rows), bool)
        number = nonnull
    lo_ok, hi_ok = number & st.has_lo, number & st.has_hi
    if isinstance(leaf, BoundIsIn):
        t_num = number & _any_key_between(leaf.keys, st.lo, lo_ok, st.hi, hi_ok)
        mt = t_num | (any_null & leaf.has_null) | (nan & leaf.has_nan)
        mf = number | (any_null & (not leaf.has_null)) | (nan & (not leaf.has_nan))
        return mt, mf
    assert isinstance(leaf, BoundCompare)
    op, k, lo, hi = leaf.op, leaf.key, st.lo, st.hi
    if op in ("==", "!="):
        inside = (~lo_ok | _arr_cmp(lo, "<=", k)) & (~hi_ok | _arr_cmp(hi, ">=", k))
        all_equal = st.exact & lo_ok & hi_ok & _arr_cmp(lo, "==", k) & _arr_cmp(hi, "==", k)
        t, f = (inside, ~all_equal) if op == "==" else (~all_equal, inside)
    elif op == "<":
        t, f = ~lo_ok | _arr_cmp(lo, "<", k), ~hi_ok | _arr_cmp(hi, ">=", k)
    elif op == "<=":
        t, f = ~lo_ok | _arr_cmp(lo, "<=", k), ~hi_ok | _arr_cmp(hi, ">", k)
    elif op == ">":
        t, f = ~hi_ok | _arr_cmp(hi, ">", k), ~lo_ok | _arr_cmp(lo, "<=", k)
    else:
        t, f = ~hi_ok | _arr_cmp(hi, ">=", k), ~lo_ok | _arr_cmp(lo, "<", k)
    t, f = t & number, f & number
    if op == "!=":
        t = t | nan
    else:
        f = f | nan
    return t, f


_STAT_SIZE: dict[int, int] = {  # bytes of a plain-encoded bound
    PhysicalType.BOOLEAN: 1, PhysicalType.INT32: 4, PhysicalType.INT64: 8, PhysicalType.FLOAT: 4,
    PhysicalType.DOUBLE: 8}


def _vector_decodable(bc: BoundColumn) -> bool:
    """Whether :func:`gather_stats` decodes this column's bounds itself (else: meta_stats per chunk)."""
    if bc.repeated:
        return False
    if bc.sort_order is SortOrder.UNDEFINED:
        return True  # no bounds to decode
    p = bc.ptype
    if bc.dom in ("int", "uint"):
        return p in (PhysicalType.BOOLEAN, PhysicalType.INT32, PhysicalType.INT64)
    if bc.dom == "float":
        return p in (PhysicalType.FLOAT, PhysicalType.DOUBLE) \
            or (p == PhysicalType.FIXED_LEN_BYTE_ARRAY and bc.stat_kind == "FLOAT16")
    binary = p in (PhysicalType.BYTE_ARRAY, PhysicalType.FIXED_LEN_BYTE_ARRAY)
    if bc.dom == "decimal":
        return binary and bc.stat_kind == "DECIMAL" and bc.sort_order is SortOrder.SIGNED
    return binary and bc.sort_order is SortOrder.UNSIGNED


def _decode_bounds(raws: list[bytes | None], bc: BoundColumn) -> tuple[np.ndarray, np.ndarray]:
    """Raw statistics values (None: absent) as domain values and a mask of the usable ones
    (``statistics.decode_bound`` + ``to_domain`` for every entry)."""
    n = len(raws)
    p = bc.ptype
    if all(r is None for r in raws):  # also every column without an order (INT96, INTERVAL...)
        return _domain_array([None] * n, bc.dom), np.zeros(n, bool)
    if bc.dom in ("decimal", "bytes"):
        has = np.fromiter((r is not None for r in raws), bool, n)
        if bc.dom == "bytes":
            return _object_array([b"" if r is None else bytes(r) for r in raws]), has
        return _int_array([0 if r is None else int.from_bytes(r, "big", signed=True) for r in raws]), has
    float16 = p == PhysicalType.FIXED_LEN_BYTE_ARRAY
    size = 2 if float16 else _STAT_SIZE[p]
    has = np.fromiter((r is not None and len(r) == size for r in raws), bool, n)
    packed = b"".join([r for r in raws if r is not None and len(r) == size])  # type: ignore[misc]
    unsigned = bc.sort_order is SortOrder.UNSIGNED
    out: np.ndarray
    if bc.dom == "float":
        dtype = "<f2" if float16 else "<f4" if p == PhysicalType.FLOAT else "<f8"
        vals = np.frombuffer(packed, dtype).astype(np.float64)
        out = np.zeros(n, np.float64)
        out[has] = vals
        has &= ~np.isnan(out)  # a NaN bound is unusable
        # (statistics.fix_zero_bounds' choice of zero sign cannot change a comparison: -0.0 == 0.0)
        return out, has
    if p == PhysicalType.BOOLEAN:
        vals = (np.frombuffer(packed, np.uint8) != 0).astype(np.int64)
    elif p == PhysicalType.INT32:
        vals = np.frombuffer(packed, "<u4" if unsigned else "<i4").astype(np.int64)
    else:
        vals = np.frombuffer(packed, "<u8" if unsigned else "<i8")
    out = np.zeros(n, vals.dtype if vals.dtype == np.uint64 else np.int64)
    out[has] = vals
    return out, has


def gather_stats(bc: BoundColumn, rows: np.ndarray, metas: Sequence[FooterStats | None],
                 created_by: str | None) -> UnitStatsArrays:
    """:func:`meta_stats` of a column's chunk in every row group at once (``metas[i]`` None: the
    chunk has no usable metadata), with the bounds decoded as arrays."""
    n = len(metas)
    row_list = rows.tolist()
    if not _vector_decodable(bc):
        return UnitStatsArrays.of([UnitStats(r) if m is None else meta_stats(bc, r, m, created_by)
                               for r, m in zip(row_list, metas)], bc)
    # chunks whose value count disagrees with the row count say nothing (meta_stats)
    ok = [m is not None and (m.num_values is None or m.num_values == r) for r, m in zip(row_list, metas)]
    stats = [m.statistics if good and m is not None else None for m, good in zip(metas, ok)]
    nulls = np.fromiter((_UNKNOWN if s is None or s.null_count is None or not 0 <= s.null_count <= r
                         else s.null_count for s, r in zip(stats, row_list)), np.int64, n)
    if bc.dom == "float":
        nans = np.fromiter((_UNKNOWN if s is None or s.nan_count is None or s.nan_count < 0 else s.nan_count
                            for s in stats), np.int64, n)
    else:
        nans = np.where(np.array(ok, bool), 0, _UNKNOWN).astype(np.int64)
    lo_raw: list[bytes | None] = [None] * n
    hi_raw: list[bytes | None] = [None] * n
    exact = np.full(n, bc.dom != "bytes")
    order = column_order_kind(bc.column_order)
    ptype, so = bc.ptype, bc.sort_order
    if not (order == "UNKNOWN" or so is SortOrder.UNDEFINED or (order == "INT96_TIMESTAMP_ORDER"
                                                                 and ptype != PhysicalType.INT96)):
        # legacy_stats_trusted depends on min/max only through whether they are equal
        trust_same = legacy_stats_trusted(ptype, so, created_by, b"", b"")
        trust_diff = legacy_stats_trusted(ptype, so, created_by, b"", b"\x00")
        for i, s in enumerate(stats):
            if s is None:
                continue
            if s.min_value is not None or s.max_value is not None:
                if order is not None:
                    lo_raw[i], hi_raw[i] = s.min_value, s.max_value
                    if bc.dom == "bytes":
                        exact[i] = s.is_min_value_exact is True and s.is_max_value_exact is True
            elif s.min is not None or s.max is not None:
                same = s.min is not None and s.max is not None and bytes(s.min) == bytes(s.max)
                if trust_same if same else trust_diff:
                    lo_raw[i], hi_raw[i] = s.min, s.max
                    exact[i] = bc.dom != "bytes"  # legacy fields carry no exactness flags
    lo, has_lo = _decode_bounds(lo_raw, bc)
    hi, has_hi = _decode_bounds(hi_raw, bc)
    if bc.narrow is not None:  # narrow_bounds of every entry
        usable = has_lo & has_hi & (lo >= bc.lo) & (lo <= hi) & (hi <= bc.hi)
        has_lo, has_hi = usable, usable.copy()
    if so is SortOrder.UNDEFINED:
        exact[:] = False
    return UnitStatsArrays(rows.astype(np.int64), nulls, nans, lo, hi, has_lo, has_hi, exact)


def footer_of(bound: BoundFilter) -> tuple[np.ndarray, dict[int, list[FooterStats | None]]]:
    """Row counts of every row group and the footer statistics of the filter's columns in each,
    asked of the file once per bound filter (the row groups' pruners use them too)."""
    if bound.footer is None:
        bound.footer = bound.pf.footer_statistics([bc.desc for bc in bound.cols.values()])
    return bound.footer


def statistics_verdicts(bound: BoundFilter) -> tuple[np.ndarray, np.ndarray]:
    """Row counts of every row group and whether footer statistics let the filter be true there
    (``RowGroupPruner.verdict(False, False)[0]`` of each)."""
    node = bound.node
    assert node is not None
    used = {lf.col.name: lf.col for lf in bound_leaves(node)}
    rows, metas = footer_of(bound)
    arrays = {name: gather_stats(bc, rows, metas[bc.desc.index], bound.created_by) for name, bc in used.items()}
    t, _ = combine_verdicts(node, lambda leaf, nt, nf: leaf_may_arrays(leaf, arrays[leaf.col.name]))
    return rows, np.broadcast_to(np.asarray(t, bool), rows.shape)


def statistics_pass(bound: BoundFilter, ex: Explain) -> list[int] | range:
    """Row groups left for :func:`_read_row_group` once statistics have pruned all of them at once;
    the empty and pruned ones are counted in ``ex`` as _read_row_group would count them."""
    # one row group gains nothing: _read_row_group prunes it by statistics itself
    if bound.node is None or isinstance(bound.node, BoundConst) or bound.num_row_groups < 2:
        return range(bound.num_row_groups)
    rows, may = statistics_verdicts(bound)
    gone = ~may | (rows <= 0)
    ex.row_groups_total += int(gone.sum())
    ex.rows_total += sum(rows[gone].tolist())
    ex.row_groups_pruned_statistics += int((gone & (rows > 0)).sum())
    return np.flatnonzero(~gone).tolist()
