"""The pruning layers that read more than the footer, for one row group at a time: Bloom filters
(``==`` / ``isin``), dictionary pages (when every data page is dictionary-encoded), then the page
index (row ranges no page run can exclude).

Bloom probes come before dictionaries because they cost two reads of at most 96 bytes while a
dictionary page can be a megabyte.
"""

from __future__ import annotations

import logging
import struct
import zlib
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from .. import compression as compression_mod
from ..encodings import decode_plain
from ..errors import BloomFilterError, ParquetError
from ..file.bloom_reader import chunk_bloom_site, probe_ranges
from ..file.pages import parse_page_header
from ..format import Encoding, PageType, PhysicalType
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
    leaf_may,
    narrow_bounds,
    to_domain,
)
from .selection import PageIndexCache, PageLayout, row_group_rows

log = logging.getLogger(__name__)

if TYPE_CHECKING:
    from ..file.reader import FileReader

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


def bloom_probe_requests(bound: BoundFilter, row_groups: Sequence[int]) -> list[tuple[int, int]]:
    """The byte ranges the Bloom probes of ``row_groups`` will read (headers and blocks of plaintext
    filters; whole filters where a leaf has more keys than :data:`BLOOM_WHOLE_FILTER_PROBES`), so that a
    remote reader can fetch them all at once. Ranges a pruner may end up not reading are included (a
    row group another leaf rules out); a filter that cannot be located is left to the pruner."""
    pf = bound.pf
    if bound.node is None or pf.decryption is not None:
        return []
    out: list[tuple[int, int]] = []
    for leaf in bound_leaves(bound.node):
        keys = _bloom_keys(leaf)
        if not keys:
            continue
        bc = leaf.col
        for rg in row_groups:
            try:
                st = column_stats(pf, rg, bc)
                probes = [p for k in keys if (st.lo is None or st.lo <= k) and (st.hi is None or k <= st.hi)
                          for p in _bloom_probes(bc, k)]
                if not probes:
                    continue
                site = chunk_bloom_site(pf, rg, bc.desc, pf.chunk_metadata(rg, bc.desc))
                if site is None:
                    continue
                site.check_placement()
                if len(probes) > BLOOM_WHOLE_FILTER_PROBES:
                    if site.length is not None:
                        out.append((site.offset, site.length))
                    continue
                for p in probes:
                    out.extend(probe_ranges(site, p, bc.desc))
            except (ParquetError, TypeError, ValueError, OverflowError):
                continue  # the pruner meets the same problem and reports it
    return out


def prefetch_bloom_probes(bound: BoundFilter, row_groups: Sequence[int]) -> None:
    """On a remote reader, fetch the Bloom probes of all ``row_groups`` in one concurrent round trip
    (the pruner's reads then find them); a local reader reads them as the pruner goes."""
    reader = bound.pf.range_reader
    if not reader.concurrent or len(row_groups) == 0:
        return
    ranges = bloom_probe_requests(bound, row_groups)
    if ranges:
        reader.prefetch(ranges, what="Bloom filter")


class RowGroupPruner:
    """Row-group-level verdicts with lazily fetched Bloom filters and dictionaries."""

    def __init__(self, bound: BoundFilter, rg: int, ex: Explain) -> None:
        self.bound, self.pf, self.rg, self.ex = bound, bound.pf, rg, ex
        self.stats: dict[str, UnitStats] = {}
        self.bloom_cache: dict[tuple[int, Any], bool] = {}
        self.bloom_unused: set[int] = set()  # columns whose filter failed: not tried again in this row group
        self.dicts: dict[str, Any] = {}
        self.leaf_verdict: dict[int, tuple[bool, bool]] = {}
        self.kept: dict[tuple[int, int], bytes] = {}  # dictionary pages already read

    def stat(self, bc: BoundColumn) -> UnitStats:
        """The footer statistics of ``bc`` in this row group (read once)."""
        s = self.stats.get(bc.name)
        if s is None:
            s = self.stats[bc.name] = column_stats(self.pf, self.rg, bc)
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
            d = _read_dictionary(self.pf, self.rg, bc, self.kept)
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
        mt, mf = bool(t.any()), bool(f.any())
        if st.nulls is None or st.nulls > 0:
            nt, nf = null_row_truth(leaf)
            mt, mf = mt or nt, mf or nf
        return mt, mf


def _read_dictionary(pf: FileReader, rg: int, bc: BoundColumn, keep: dict[tuple[int, int], bytes] | None = None) -> Any:
    """The decoded dictionary of a chunk whose data pages are all dictionary-encoded, else None."""
    if pf.decryption is not None:
        return None
    meta = pf.chunk_metadata(rg, bc.desc)
    es = meta.encoding_stats
    # a repeated leaf counts level entries, not rows
    if not es or (meta.num_values != row_group_rows(pf, rg) and not bc.repeated):
        return None
    data = [s for s in es if s.page_type in (PageType.DATA_PAGE, PageType.DATA_PAGE_V2) and (s.count or 0) > 0]
    if not data or any(s.encoding not in (Encoding.PLAIN_DICTIONARY, Encoding.RLE_DICTIONARY) for s in data):
        return None
    if not any(s.page_type == PageType.DICTIONARY_PAGE for s in es):
        return None
    start, length = pf.chunk_range(meta, rg, bc.desc)
    span = (meta.data_page_offset or 0) - start  # the dictionary page lies between its offset and the data's
    if pf.range_reader.concurrent and start == meta.dictionary_page_offset and 0 < span <= MAX_DICTIONARY_BYTES + 4096:
        pf.range_reader.prefetch([(start, min(span, length))], what="dictionary page")  # header and page: one trip
    return _dictionary_page(pf, bc, meta.codec, start, length, keep)


def _dictionary_page(pf: FileReader, bc: BoundColumn, codec: int, start: int, length: int,
                     keep: dict[tuple[int, int], bytes] | None) -> Any:
    """The values of the dictionary page at the start of the chunk ``[start, start + length)``, or None
    when it is not one, is too large to read just to prune, or fails its checksum.

    Unencrypted chunks only; the header is parsed by the file layer's page codec.
    """
    head = pf.range_reader.read(start, min(length, 512), what="dictionary page header")
    header, hlen = parse_page_header(head, 0, offset=start)
    if header.type != PageType.DICTIONARY_PAGE or header.dictionary_page_header is None:
        return None
    csize, usize = header.compressed_page_size, header.uncompressed_page_size
    dh = header.dictionary_page_header
    if csize is None or usize is None or csize < 0 or usize < 0 or hlen + csize > length \
            or csize > MAX_DICTIONARY_BYTES or usize > 8 * MAX_DICTIONARY_BYTES or dh.num_values is None \
            or dh.num_values < 0 or dh.encoding not in (Encoding.PLAIN, Encoding.PLAIN_DICTIONARY):
        return None
    body = head[hlen:hlen + csize] if hlen + csize <= len(head) else \
        pf.range_reader.read(start + hlen, csize, what="dictionary page")
    if pf.verify_checksums and header.crc is not None and \
            (zlib.crc32(body) & 0xFFFFFFFF) != (header.crc & 0xFFFFFFFF):
        return None  # the full read reports the checksum error
    if keep is not None:  # the page is the prefix a later page-level read of this chunk needs
        keep[(start, hlen + csize)] = head[:hlen] + body
    raw = compression_mod.decompress(compression_mod.codec_by_id(codec), body, usize)
    values, _ = decode_plain(raw, bc.ptype, dh.num_values, bc.type_length)
    return values


def _page_stats(bc: BoundColumn, ci: Any, layout: PageLayout) -> list[UnitStats] | None:
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


def page_selection(bound: BoundFilter, rg: int, pruner: RowGroupPruner, idx: PageIndexCache,
                   ex: Explain) -> list[tuple[int, int]] | None:
    """Row ranges the page index cannot exclude; None when it excludes nothing (or is unusable)."""
    node = bound.node
    assert node is not None
    rows = row_group_rows(bound.pf, rg)
    leaves = list(bound_leaves(node))
    descs = {lf.col.desc.index: lf.col.desc for lf in leaves}
    idx.load(descs.values(), column_index=True)
    per_col: dict[str, tuple[np.ndarray, list[UnitStats]]] = {}
    for lf in leaves:
        bc = lf.col
        if bc.name in per_col:
            continue
        layout = idx.oi.get(bc.desc.index)
        ci = idx.ci.get(bc.desc.index)
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
