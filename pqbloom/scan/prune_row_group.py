"""The pruning layers that read more than the footer, for one row group at a time: Bloom filters
(``==`` / ``isin``), dictionary pages (when every data page is dictionary-encoded), then the page
index (row ranges no page run can exclude).

Bloom probes come before dictionaries because they cost two reads of at most 96 bytes while a
dictionary page can be a megabyte.
"""

from __future__ import annotations

import logging
import struct
from collections.abc import Iterable, Sequence
from typing import Any

import numpy as np

from ..arrays import BinaryArray
from ..errors import BloomFilterError, ParquetError
from ..file import BloomProbes, ChunkPageIndex, EncodedColumn, PageLayout, PageStatistics, RowGroupReader
from ..schema import ColumnDescriptor, PhysicalType
from ..schema.literals import stored_ints
from ..statistics import column_index_bounds, column_index_is_usable
from ..table import Column
from .bind import BoundColumn, BoundCompare, BoundFilter, BoundIsIn, BoundLeaf, bound_leaves
from .evaluate import key_array, leaf_truth, null_row_truth
from .explain import Explain
from .prune import (
    UnitStats,
    Verdict,
    column_stats,
    combine_verdicts,
    element_counts,
    footer_of,
    leaf_may,
    narrow_bounds,
    to_domain,
)

log = logging.getLogger(__name__)

__all__ = ["RowGroupPruner", "page_selection", "MAX_DICTIONARY_BYTES", "BLOOM_WHOLE_FILTER_PROBES",
           "bloom_probe_requests", "prefetch_bloom_probes"]

MAX_DICTIONARY_BYTES = 1 << 20  # dictionary pages larger than this are not read just to prune
BLOOM_WHOLE_FILTER_PROBES = 8  # with more values than this, read the filter once instead of block by block


def _bloom_keys(leaf: BoundLeaf) -> list[Any] | None:
    """Keys whose absence from a Bloom filter proves the leaf false on every non-null, non-NaN row."""
    if not leaf.col.bloom_ok:
        return None
    if isinstance(leaf, BoundCompare) and leaf.op == "==":
        return [leaf.key]
    if isinstance(leaf, BoundIsIn):
        return list(leaf.keys)
    return None


def _bloom_probes(bc: BoundColumn, key: Any) -> list[Any]:
    """The physical values a key may be stored as (both zeros for a float zero, both extensions of a
    narrow integer's low bits)."""
    if bc.dom == "float":
        zs = (0.0, -0.0) if key == 0 else (key,)
        return [np.float16(z).tobytes() for z in zs] if bc.ptype == PhysicalType.FIXED_LEN_BYTE_ARRAY else list(zs)
    if bc.dom == "decimal":
        assert bc.type_length is not None
        return [int(key).to_bytes(bc.type_length, "big", signed=True)]
    if bc.dom in ("int", "uint"):
        return stored_ints(key, bc.field)  # a narrow integer's two stored forms
    return [key]


def _probe_wants(bound: BoundFilter, row_groups: Sequence[int]) -> list[BloomProbes]:
    """The Bloom probes the pruners of ``row_groups`` may make: per leaf with keys and row group, the
    physical values of the keys the footer statistics do not rule out."""
    if bound.node is None:
        return []
    rows = footer_of(bound)[0]
    out: list[BloomProbes] = []
    for leaf in bound_leaves(bound.node):
        keys = _bloom_keys(leaf)
        if not keys:
            continue
        bc = leaf.col
        for rg in row_groups:
            try:
                st = column_stats(bound, rg, bc, int(rows[rg]))
                probes = [p for k in keys if (st.lo is None or st.lo <= k) and (st.hi is None or k <= st.hi)
                          for p in _bloom_probes(bc, k)]
            except (ParquetError, TypeError, ValueError, OverflowError):
                continue  # the pruner meets the same problem and reports it
            if probes:
                out.append((rg, bc.desc, probes))
    return out


def bloom_probe_requests(bound: BoundFilter, row_groups: Sequence[int]) -> list[tuple[int, int]]:
    """The byte ranges the Bloom probes of ``row_groups`` will read (headers and blocks of plaintext
    filters; whole filters where a leaf has more keys than :data:`BLOOM_WHOLE_FILTER_PROBES`), so that a
    remote reader can fetch them all at once. Ranges a pruner may end up not reading are included (a
    row group another leaf rules out); a filter that cannot be located is left to the pruner."""
    return bound.pf.bloom_probe_ranges(_probe_wants(bound, row_groups), whole_over=BLOOM_WHOLE_FILTER_PROBES)


def prefetch_bloom_probes(bound: BoundFilter, row_groups: Sequence[int]) -> None:
    """On a remote reader, fetch the Bloom probes of all ``row_groups`` in one concurrent round trip
    (the pruner's reads then find them); a local reader reads them as the pruner goes."""
    if len(row_groups) == 0 or bound.node is None or not bound.pf.reads_concurrently:
        return
    bound.pf.prefetch_bloom_probes(_probe_wants(bound, row_groups), whole_over=BLOOM_WHOLE_FILTER_PROBES)


class RowGroupPruner:
    """Row-group-level verdicts with lazily fetched Bloom filters and dictionaries."""

    def __init__(self, bound: BoundFilter, rg: int, ex: Explain, rows: int) -> None:
        self.bound, self.pf, self.rg, self.ex, self.rows = bound, bound.pf, rg, ex, rows
        self._reader: RowGroupReader | None = None  # made when first needed (dictionaries, reads)
        self.stats: dict[str, UnitStats] = {}
        self.bloom_cache: dict[tuple[int, Any], bool] = {}
        self.bloom_unused: set[int] = set()  # columns whose filter failed: not tried again in this row group
        self.dicts: dict[str, Any] = {}
        # by column, by id of leaf: the leaf's truth over the column's dictionary entries, then a null row
        self.entry_truths: dict[str, dict[int, tuple[np.ndarray, np.ndarray]]] = {}
        self.leaf_verdict: dict[int, tuple[bool, bool]] = {}

    @property
    def reader(self) -> RowGroupReader:
        """The file layer's reader of this row group (its notes go to the Explain's)."""
        if self._reader is None:
            self._reader = self.pf.row_group_reader(self.rg, self.ex.notes)
        return self._reader

    @property
    def has_reader(self) -> bool:
        """Whether :attr:`reader` was made (anything read beyond the footer and Bloom filters)."""
        return self._reader is not None

    def stat(self, bc: BoundColumn) -> UnitStats:
        """The footer statistics of ``bc`` in this row group (read once)."""
        s = self.stats.get(bc.name)
        if s is None:
            s = self.stats[bc.name] = column_stats(self.bound, self.rg, bc, self.rows)
        return s

    def verdict(self, use_bloom: bool, use_dict: bool) -> tuple[bool, bool]:
        """(may the filter be true, may it be false) in this row group, by statistics and, when asked,
        Bloom filters and dictionaries. Each leaf's verdict is kept for :func:`page_selection`."""
        node = self.bound.node
        assert node is not None

        def leaf_fn(leaf: BoundLeaf, nt: bool, nf: bool) -> tuple[bool, bool]:
            st = self.stat(leaf.col)
            t, f = leaf_may(leaf, st)
            if use_dict and (t and nt or f and nf):
                d = self._dictionary(leaf.col)
                if d is not None:
                    t, f = self._dict_truth(leaf, d, st)
            if use_bloom and t and nt:
                t = self._bloom_may(leaf, st)
            self.leaf_verdict[id(leaf)] = (t, f)
            return t, f

        t, f = combine_verdicts(node, leaf_fn)
        return bool(t), bool(f)

    def _bloom_may(self, leaf: BoundLeaf, st: UnitStats) -> bool:
        keys = _bloom_keys(leaf)
        if keys is None:
            return True
        if isinstance(leaf, BoundIsIn):
            # null or NaN rows may satisfy an isin without being in the filter
            if (leaf.has_null and (st.nulls is None or st.nulls > 0)) or leaf.has_nan:
                return True
        bc = leaf.col
        lo, hi = st.lo, st.hi
        keys = [k for k in keys if (lo is None or lo <= k) and (hi is None or k <= hi)]
        probes = [p for k in keys for p in _bloom_probes(bc, k)]
        if not probes:
            return False
        pf, rg = self.pf, self.rg
        if bc.desc.index in self.bloom_unused:
            return True
        try:
            if len(probes) > BLOOM_WHOLE_FILTER_PROBES:
                bf = pf.bloom_filter(rg, bc.desc.index)
                if bf is None:
                    return True
                self.ex.bloom_filter_probes += 1
                return any(bf.might_contain(p, bc.ptype, bc.type_length) for p in probes)
            for p in probes:
                ck = (bc.desc.index, struct.pack("<d", p) if isinstance(p, float) else p)
                hit = self.bloom_cache.get(ck)
                if hit is None:
                    r = pf.bloom_filter_might_contain(rg, bc.desc.index, p, physical=True)
                    if r is not None:
                        self.ex.bloom_filter_probes += 1
                    hit = self.bloom_cache[ck] = r is None or bool(r)  # None: no filter on this chunk
                if hit:
                    return True
            return False
        except ParquetError as exc:
            # never prune with a filter that cannot be read or trusted: it could call present values absent
            self.bloom_unused.add(bc.desc.index)
            self.ex.bloom_filters_unused += 1
            if isinstance(exc, BloomFilterError):
                note = f"Bloom filter of {bc.name} in row group {rg} not used: {exc.reason}"
            else:
                note = f"Bloom filter of {bc.name} in row group {rg} unreadable ({exc}); not used"
            if note not in self.ex.notes:
                self.ex.notes.append(note)
                log.warning("%s", note)  # the file's problem, not the caller's: pruning goes on without it
            return True

    def _dictionary(self, bc: BoundColumn) -> Any:
        if bc.name in self.dicts:
            return self.dicts[bc.name]
        d = None
        try:
            d = self.reader.dictionary(bc.desc, MAX_DICTIONARY_BYTES)
        except ParquetError as exc:
            self.ex.notes.append(f"dictionary of {bc.name} in row group {self.rg} unreadable ({exc}); not used")
        if d is not None:
            self.ex.dictionaries_read += 1
        self.dicts[bc.name] = d
        return d

    def _dict_truth(self, leaf: BoundLeaf, values: Any, st: UnitStats) -> tuple[bool, bool]:
        col = Column(leaf.col.field.with_nullable(True), values, None)
        keys = key_array(col, leaf.col) if isinstance(leaf, (BoundCompare, BoundIsIn)) else None
        t, f = leaf_truth(leaf, col, keys)
        nt, nf = null_row_truth(leaf)
        # kept for the read of this chunk, which would otherwise evaluate the leaf on the same entries again
        self.entry_truths.setdefault(leaf.col.name, {})[id(leaf)] = (np.append(t, nt), np.append(f, nf))
        mt, mf = bool(t.any()), bool(f.any())
        if st.nulls is None or st.nulls > 0:
            mt, mf = mt or nt, mf or nf
        return mt, mf

    def dictionary_truths(self, name: str, col: EncodedColumn) -> dict[int, tuple[np.ndarray, np.ndarray]]:
        """The truths of the leaves on column ``name`` that pruning evaluated on its chunk's dictionary
        (by ``id`` of leaf: over the entries, then a null row), when the chunk's read ``col`` has exactly
        that dictionary as its entries (no PLAIN page appended); else empty. The read's evaluation then
        need not evaluate those leaves again (:func:`~pqbloom.scan.evaluate.matches`' ``known``)."""
        truths = self.entry_truths.get(name)
        if not truths or len(col.entries) != col.dictionary_size or not self.same_dictionary(name, col.entries):
            return {}
        return truths

    def same_dictionary(self, name: str, values: Any) -> bool:
        """Whether ``values`` are the dictionary pruning read for column ``name`` (byte for byte)."""
        seen = self.dicts.get(name)
        return seen is not None and _same_values(seen, values)


def _same_values(a: Any, b: Any) -> bool:
    """Whether two decoded dictionaries hold the same values (byte for byte): the pruning read of a
    chunk's dictionary page and the chunk read's, checked before one's verdicts stand for the other's."""
    if isinstance(a, BinaryArray) and isinstance(b, BinaryArray):
        return len(a) == len(b) and np.array_equal(a.lengths(), b.lengths()) and \
            np.array_equal(a.data[a.offsets[0]:a.offsets[-1]], b.data[b.offsets[0]:b.offsets[-1]])
    if isinstance(a, np.ndarray) and isinstance(b, np.ndarray):
        return a.dtype == b.dtype and a.shape == b.shape and a.tobytes() == b.tobytes()
    return False


def _page_stats(bc: BoundColumn, ci: PageStatistics, layout: PageLayout) -> list[UnitStats] | None:
    n = layout.num_pages
    prows = layout.page_rows()
    if not column_index_is_usable(ci, num_pages=n, page_row_counts=[int(x) for x in prows], ptype=bc.ptype):
        return None
    bounds = column_index_bounds(ci, bc.ptype, bc.sort_order, column_order=bc.column_order,
                                 type_length=bc.type_length, logical_kind=bc.stat_kind)
    hists = None
    if bc.repeated:
        w = bc.max_def + 1
        dh = ci.definition_level_histograms
        if dh is not None and len(dh) == n * w:
            hists = [dh[i * w:(i + 1) * w] for i in range(n)]
    out = []
    assert ci.null_pages is not None  # column_index_is_usable checked
    for i in range(n):
        r = int(prows[i])
        # a repeated leaf's counts are of level entries, not of the page's rows
        counts = element_counts(bc, hists[i], None) if hists is not None else None
        if counts is not None and (counts[0] == counts[1]) != bool(ci.null_pages[i]):
            counts = None  # the histogram contradicts null_pages
        if ci.null_pages[i]:
            out.append(UnitStats(counts[0], counts[1], 0) if counts is not None else UnitStats(r, r, 0))
            continue
        nulls = ci.null_counts[i] if ci.null_counts is not None else None
        nans = (ci.nan_counts[i] if ci.nan_counts is not None else None) if bc.dom == "float" else 0
        lo, hi = narrow_bounds(bc, *(to_domain(b, bc) for b in bounds[i]))
        if counts is not None:
            r, nulls = counts
        elif bc.repeated:  # the entries are unknown: at least one value besides the nulls and NaNs
            r = (nulls or 0) + (nans or 0) + 1
        out.append(UnitStats(r, nulls, nans, lo, hi, bc.dom != "bytes"))
    return out


def page_selection(bound: BoundFilter, reader: RowGroupReader, pruner: RowGroupPruner, ex: Explain,
                   also: Iterable[ColumnDescriptor] = ()) -> list[tuple[int, int]] | None:
    """Row ranges the page index cannot exclude; None when it excludes nothing (or is unusable).
    ``also``: columns to be read next, whose page index a remote file fetches in the same round trip."""
    node = bound.node
    assert node is not None
    rows = reader.rows
    leaves = list(bound_leaves(node))
    descs = {lf.col.desc.index: lf.col.desc for lf in leaves}
    index: dict[int, ChunkPageIndex] = reader.page_index(descs.values(), prefetch=also)
    per_col: dict[str, tuple[np.ndarray, list[UnitStats]]] = {}
    for lf in leaves:
        bc = lf.col
        if bc.name in per_col:
            continue
        layout, ci = index[bc.desc.index].layout, index[bc.desc.index].statistics
        if layout is None or ci is None:
            continue
        ps = _page_stats(bc, ci, layout)
        if ps is not None:
            per_col[bc.name] = (layout.first_rows, ps)
        elif ci is not None:
            note = f"column index of {bc.name} is inconsistent; not used for pruning"
            if note not in ex.notes:
                ex.notes.append(note)
    if not per_col:
        return None
    bounds = np.unique(np.concatenate([fr for fr, _ in per_col.values()] + [np.array([0], np.int64)]))
    seg_start = bounds
    seg_end = np.append(bounds[1:], rows)

    def leaf_fn(leaf: BoundLeaf, nt: bool, nf: bool) -> Verdict:
        rt, rf = pruner.leaf_verdict.get(id(leaf), (True, True))
        got = per_col.get(leaf.col.name)
        if got is None:
            return rt, rf
        fr, ps = got
        page_of = np.searchsorted(fr, seg_start, side="right") - 1
        pv = [leaf_may(leaf, s) for s in ps]
        t = np.array([v[0] for v in pv], bool)[page_of]
        f = np.array([v[1] for v in pv], bool)[page_of]
        return t & rt, f & rf

    t, _ = combine_verdicts(node, leaf_fn)
    keep = np.broadcast_to(np.asarray(t, bool), seg_start.shape)
    if keep.all():
        return None
    out: list[tuple[int, int]] = []
    for s, e, k in zip(seg_start.tolist(), seg_end.tolist(), keep.tolist()):
        if not k:
            continue
        if out and out[-1][1] == s:
            out[-1] = (out[-1][0], e)
        else:
            out.append((s, e))
    return out
