"""Filtered reads of one file: prune row groups (statistics for all at once, then Bloom filters,
dictionaries and the page index one by one), evaluate the filter exactly on the rows left, and
decode the other columns only where rows match. :class:`FilePlan` exposes the same steps for
planning (``pqbloom.spark`` plans one input partition per surviving row group).
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from functools import partial
from typing import TYPE_CHECKING, Any

import numpy as np

from ..file import EncodedColumn, RowGroupReader, RowSelection
from ..file.parallel import map_ordered
from ..table import Table
from .bind import BoundConst, BoundFilter, BoundNode
from .evaluate import matches
from .explain import Explain
from .expr import Expr
from .parse import FilterLike, to_expression
from .prune import statistics_pass, statistics_verdicts
from .prune_row_group import RowGroupPruner, page_selection, prefetch_bloom_probes
from .read import dictionary_scan, read_repeated, stream_scan

if TYPE_CHECKING:
    from ..file.reader import FileReader

__all__ = ["FilePlan", "plan_file", "read_filtered", "iter_filtered_batches"]


def _read_row_group(bound: BoundFilter, rg: int, out_descs: Sequence[Any], ex: Explain) -> Table | None:
    """The rows of row group ``rg`` where the filter is true (None when none is), counting in ``ex``."""
    # the row group's reader is made only once the cheap layers (statistics, Bloom filters) let it be
    pruner = RowGroupPruner(bound, rg, ex, bound.pf.row_group_rows(rg) if bound.footer is None
                            else int(bound.footer[0][rg]))
    try:
        return _filtered_rows(bound, pruner, out_descs, ex)
    finally:
        if pruner.has_reader:
            c = pruner.reader.counts
            ex.pages_total += c.pages_total
            ex.pages_read += c.pages_read
            ex.pages_skipped += c.pages_skipped
            ex.chunks_read_whole += c.chunks_read_whole


def _filtered_rows(bound: BoundFilter, pruner: RowGroupPruner, out_descs: Sequence[Any], ex: Explain) -> Table | None:
    rows = pruner.rows
    ex.row_groups_total += 1
    ex.rows_total += rows
    node = bound.node
    if rows == 0:
        return None
    if node is None:
        ex.row_groups_read += 1
        ex.rows_returned += rows
        cols = pruner.reader.read_rows(out_descs, None)
        return Table([cols[d.dotted_path] for d in out_descs])
    if isinstance(node, BoundConst):
        ex.row_groups_pruned_statistics += 1
        return None
    if not pruner.verdict(False, False)[0]:
        ex.row_groups_pruned_statistics += 1
        return None
    if not pruner.verdict(True, False)[0]:
        ex.row_groups_pruned_bloom_filter += 1
        return None
    if not pruner.verdict(True, True)[0]:
        ex.row_groups_pruned_dictionary += 1
        return None
    reader = pruner.reader
    # (a remote file fetches the page index of the output columns in the same round trip)
    ranges = page_selection(bound, reader, pruner, ex, also=out_descs)
    if ranges is not None and not ranges:
        ex.row_groups_pruned_page_index += 1
        return None
    ex.row_groups_read += 1
    scan = None if ranges is None else RowSelection.of_ranges(ranges)
    streamed = stream_scan(bound, reader, node, scan)
    if streamed is not None:
        absolute, pcol, scanned = streamed
        ex.rows_decoded += scanned
        ex.rows_returned += len(absolute)
        if len(absolute) == 0:
            return None
        name = next(iter(bound.cols))
        rest = [d for d in out_descs if d.dotted_path != name]
        others = reader.read_rows(rest, RowSelection.of_rows(absolute)) if rest else {}
        return Table([pcol if d.dotted_path == name else others[d.dotted_path] for d in out_descs])
    if scan is None:
        done, table = _dictionary_rows(bound, pruner, reader, node, out_descs, rows, ex)
        if done:
            return table
    pred_descs = [bc.desc for bc in bound.cols.values() if not bc.repeated]
    # a dictionary-encoded chunk comes as codes into its dictionary: the filter is evaluated per entry
    pcols = reader.read_encoded(pred_descs, scan)
    n = rows if scan is None else scan.num_rows
    ex.rows_decoded += n
    env: dict[str, Any] = {}
    known: dict[str, Any] = {}  # truths pruning found on a chunk's dictionary, for the same entries here
    for name, c in pcols.items():
        if isinstance(c, EncodedColumn):
            if len(c.entries) > len(c):  # more entries than rows (a few rows of a chunk): decode those instead
                c = c.decoded()
            else:
                ex.chunks_evaluated_on_dictionary += 1
                known[name] = pruner.dictionary_truths(name, c)
        env[name] = c
    for bc in bound.cols.values():
        if bc.repeated:
            env[bc.name] = read_repeated(reader, bc, scan)
    local = np.flatnonzero(matches(node, env, n, known=known))
    ex.rows_returned += len(local)
    if len(local) == 0:
        return None
    rest = [d for d in out_descs if d.dotted_path not in pcols]
    others = {}
    if rest:
        absolute = local if scan is None else scan.absolute(local)
        others = reader.read_rows(rest, RowSelection.of_rows(absolute))
    out = []
    for d in out_descs:
        if d.dotted_path not in pcols:
            out.append(others[d.dotted_path])
            continue
        pc = env[d.dotted_path]
        if len(local) < n:
            pc = pc.take(local)
        out.append(pc.decoded() if isinstance(pc, EncodedColumn) else pc)
    return Table(out)


def _dictionary_rows(bound: BoundFilter, pruner: RowGroupPruner, reader: RowGroupReader, node: BoundNode,
                     out_descs: Sequence[Any], rows: int, ex: Explain) -> tuple[bool, Table | None]:
    """(True, the matching rows or None when none match) of a whole row group filtered on one
    dictionary-encoded column, evaluated on its dictionary and mapped to the rows from the pages' index
    bytes (:func:`dictionary_scan`); (False, None) when the chunk does not qualify (nothing counted
    then: the caller reads it as codes)."""
    name = next(iter(bound.cols))
    got = dictionary_scan(bound, reader, node, pruner.dicts.get(name), pruner.entry_truths.get(name),
                          partial(pruner.same_dictionary, name))
    if got is None:
        return False, None
    hits, null_match = got
    ex.rows_decoded += rows
    ex.chunks_evaluated_on_dictionary += 1
    local = hits.rows(nulls=null_match)
    ex.rows_returned += len(local)
    if len(local) == 0:
        return True, None
    rest = [d for d in out_descs if d.dotted_path != name]
    others = reader.read_rows(rest, RowSelection.of_rows(local)) if rest else {}
    return True, Table([hits.column(local) if d.dotted_path == name else others[d.dotted_path] for d in out_descs])


# ---------------------------------------------------------------------------
# Entry points used by ParquetFile / read_table / datasets
# ---------------------------------------------------------------------------
def _start(pf: FileReader, filters: FilterLike) -> tuple[BoundFilter, Explain, int, int]:
    expr = to_expression(filters)
    bound = BoundFilter(pf, expr)
    ex = Explain(filter=str(expr) if expr is not None else "")
    st = pf.io_stats
    return bound, ex, st.requests, st.bytes_read


def _finish(pf: FileReader, ex: Explain, req0: int, bytes0: int, target: Explain | None, *,
            io_from_open: bool) -> None:
    st = pf.io_stats
    ex.requests = st.requests - (0 if io_from_open else req0)
    ex.bytes_read = st.bytes_read - (0 if io_from_open else bytes0)
    ex.file_bytes = pf.file_size
    ex.files_total = 1
    if ex.row_groups_total and ex.row_groups_read == 0 and ex.rows_decoded == 0:
        ex.files_pruned_metadata = 1
    if target is not None:
        target.add(ex)


def _row_group_task(bound: BoundFilter, rg: int, out_descs: Sequence[Any]) -> tuple[Table | None, Explain]:
    ex = Explain()
    return _read_row_group(bound, rg, out_descs, ex), ex


def read_filtered(pf: FileReader, columns: Sequence[str] | None = None, filters: FilterLike = None, *,
                  explain: Explain | None = None, io_from_open: bool = False, use_threads: bool = False) -> Table:
    """Rows of ``pf`` where ``filters`` is true (all rows when None), pruning as described above.

    ``use_threads``: the row groups left by the statistics are pruned further, read and evaluated on the
    decode pool (:func:`pqbloom.file.parallel.map_ordered`: results in row-group order, the first
    failing row group's error raised), except in an encrypted file."""
    bound, ex, r0, b0 = _start(pf, filters)
    out_descs = pf.select_columns(columns)
    tables = []
    rgs = statistics_pass(bound, ex)
    prefetch_bloom_probes(bound, rgs)  # remote files: every row group's probes in one round trip
    # each row group fills an Explain of its own, added to the call's in row-group order
    tasks = [partial(_row_group_task, bound, rg, out_descs) for rg in rgs]
    threads = use_threads and len(rgs) > 1 and pf.decodes_on_threads
    for t, sub in map_ordered(tasks, use_threads=True) if threads else (task() for task in tasks):
        ex.add(sub)
        if t is not None and t.num_rows:
            tables.append(t)
    _finish(pf, ex, r0, b0, explain, io_from_open=io_from_open)
    if not tables:
        return pf.empty_table(columns)
    return tables[0] if len(tables) == 1 else Table.concat(tables)


def iter_filtered_batches(pf: FileReader, batch_size: int, columns: Sequence[str] | None, filters: FilterLike, *,
                          explain: Explain | None = None) -> Iterator[Table]:
    """Batches of matching rows, one row group decoded at a time; ``explain`` is filled as it goes."""
    if batch_size <= 0:
        raise ValueError("batch_size must be positive")
    bound, ex, r0, b0 = _start(pf, filters)
    out_descs = pf.select_columns(columns)
    try:
        rgs = statistics_pass(bound, ex)
        prefetch_bloom_probes(bound, rgs)
        for rg in rgs:
            t = _read_row_group(bound, rg, out_descs, ex)
            if t is None:
                continue
            for s in range(0, t.num_rows, batch_size):
                yield t.slice(s, batch_size)
    finally:
        _finish(pf, ex, r0, b0, explain, io_from_open=False)



# ---------------------------------------------------------------------------
# Public planning API: which row groups of a file can match, then read them one by one
# (pqbloom.spark plans one Spark input partition per surviving row group with it)
# ---------------------------------------------------------------------------
class FilePlan:
    """A filter bound to one open file (a ``ParquetFile``); build it with :func:`plan_file`.

    Binding (literals converted to each column's physical domain) happens once, in the
    constructor, and fails as a filtered read would (``KeyError`` for a column the file does not
    have, ``TypeError`` for a literal that cannot be compared with its column). The plan holds
    the open file: use it while the file is open.
    """

    def __init__(self, pf: FileReader, filters: FilterLike = None) -> None:
        self._expr = to_expression(filters)
        self._bound = BoundFilter(pf, self._expr)

    @property
    def file(self) -> FileReader:
        """The file this plan reads."""
        return self._bound.pf

    @property
    def expression(self) -> Expr | None:
        """The filter as an expression (None: no filter, every row matches)."""
        return self._expr

    def row_groups(self, *, dictionaries: bool = False, explain: Explain | None = None) -> list[int]:
        """Indexes of the non-empty row groups that footer statistics and Bloom filters (and, with
        ``dictionaries=True``, dictionary pages) cannot rule out, in file order.

        Only metadata is read: Bloom filter blocks are probed, and dictionary pages are read only
        when ``dictionaries`` is true (they can be large, so planning leaves them off by default;
        :meth:`read_row_group` uses them anyway). ``explain`` receives ``row_groups_total`` and
        the ``row_groups_pruned_*`` counters of the layers used.
        """
        ex = explain if explain is not None else Explain()
        bound = self._bound
        pf = bound.pf
        out: list[int] = []
        if bound.node is None or bound.always_empty:
            for rg in range(bound.num_row_groups):
                if pf.row_group_rows(rg) == 0:
                    continue
                ex.row_groups_total += 1
                if bound.node is None:
                    out.append(rg)
                else:
                    ex.row_groups_pruned_statistics += 1
            return out
        rows, may = statistics_verdicts(bound)
        ex.row_groups_total += int((rows > 0).sum())
        ex.row_groups_pruned_statistics += int(((rows > 0) & ~may).sum())
        candidates = np.flatnonzero((rows > 0) & may).tolist()
        prefetch_bloom_probes(bound, candidates)
        for rg in candidates:
            pruner = RowGroupPruner(bound, rg, ex, int(rows[rg]))
            if not pruner.verdict(True, False)[0]:
                ex.row_groups_pruned_bloom_filter += 1
            elif dictionaries and not pruner.verdict(True, True)[0]:
                ex.row_groups_pruned_dictionary += 1
            else:
                out.append(rg)
        return out

    def read_row_group(self, row_group: int, columns: Sequence[str] | None = None, *,
                       explain: Explain | None = None) -> Table | None:
        """The rows of ``row_group`` where the filter is true, as a Table of ``columns`` (all when None),
        or None when none match. Prunes and reads exactly as :func:`read_filtered` does for one row
        group (statistics, Bloom filter, dictionary, page index, late materialization), and returns the
        table as the file's other reads do (its metadata, INT96 in the file's unit)."""
        pf = self._bound.pf
        if not 0 <= row_group < pf.num_row_groups:
            raise IndexError(f"row group {row_group} out of range: the file has {pf.num_row_groups}")
        ex = explain if explain is not None else Explain()
        t = _read_row_group(self._bound, row_group, pf.select_columns(columns), ex)
        return None if t is None else pf.with_file_metadata(t, [])


def plan_file(pf: FileReader, filters: FilterLike = None) -> FilePlan:
    """Bind ``filters`` (an :class:`Expr`, DNF list or None) to the open file ``pf``.

    >>> with pqbloom.ParquetFile(path) as pf:
    ...     plan = plan_file(pf, field("id") == 42)
    ...     tables = [plan.read_row_group(rg) for rg in plan.row_groups()]
    """
    return FilePlan(pf, filters)
