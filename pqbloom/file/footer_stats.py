"""What the footer says of a column chunk for pruning, as pqbloom's objects: :class:`FooterStats`
(value count, statistics with their bounds still encoded, the definition-level histogram), for one
chunk or for a column's chunks in every row group at once (:func:`footer_statistics`: from one
statistics skim of a lazily decoded footer when possible, since decoding every full RowGroup costs
more than pruning them). Decoding the bounds and the verdicts on them are the filter engine's
(:mod:`pqbloom.scan.prune`, with :mod:`pqbloom.statistics`).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from ..errors import CorruptFileError, ParquetError
from ..format import RowGroupList, StatisticsFields, statistics_fields
from ..schema import ColumnDescriptor
from .chunks import ChunkAccess

__all__ = ["FooterStats", "footer_statistics"]


class FooterStats:
    """One chunk's footer entry as pruning reads it: its value count, its statistics
    (:class:`pqbloom.format.StatisticsFields`, which :meth:`pqbloom.statistics.ChunkStats.from_fields`
    reads; None when the chunk has none) and its definition-level histogram."""

    __slots__ = ("num_values", "statistics", "definition_level_histogram")

    def __init__(self, num_values: int | None, statistics: StatisticsFields | None,
                 definition_level_histogram: list[int] | None = None) -> None:
        self.num_values = num_values
        self.statistics = statistics
        self.definition_level_histogram = definition_level_histogram

    @classmethod
    def of(cls, meta: Any) -> FooterStats:
        """From a (decoded or skimmed) ``ColumnMetaData``."""
        s = meta.statistics
        ss = meta.size_statistics
        return cls(meta.num_values, None if s is None else statistics_fields(s),
                   None if ss is None else ss.definition_level_histogram)

    def __repr__(self) -> str:
        return f"FooterStats(num_values={self.num_values}, statistics={self.statistics})"


def footer_statistics(pf: ChunkAccess, descs: Sequence[ColumnDescriptor], n_leaves: int
                      ) -> tuple[np.ndarray, dict[int, list[FooterStats | None]]]:
    """Row counts of every row group (0 where missing or negative) and the :class:`FooterStats` of the
    chunks of ``descs`` in each (None: the chunk's metadata is unusable), by leaf index."""
    rgs = pf.thrift_metadata.row_groups
    n = len(rgs)
    skim = None
    if pf.decryption is None and isinstance(rgs, RowGroupList) and rgs.decoded < n:
        try:
            skim = rgs.statistics_skim(size_statistics=any(d.max_repetition_level > 0 for d in descs))
        except CorruptFileError:
            skim = None
        # anything RowGroupList would reject on access: take the path that reports it
        if skim is not None and any(g.num_rows is None or g.num_rows < 0 or g.columns is None for g in skim):
            skim = None
    out: dict[int, list[FooterStats | None]] = {}
    if skim is not None:
        rows = np.array([g.num_rows for g in skim], np.int64)
        for d in descs:
            i = d.index
            out[i] = [FooterStats.of(g.columns[i].meta_data)
                      if len(g.columns) == n_leaves and g.columns[i].meta_data is not None else None for g in skim]
        return rows, out
    rows = np.zeros(n, np.int64)
    for d in descs:
        out[d.index] = [None] * n
    for rg in range(n):
        rows[rg] = pf.row_group_rows(rg)
        for d in descs:
            try:
                out[d.index][rg] = FooterStats.of(pf.chunk_metadata(rg, d))
            except ParquetError:
                pass
    return rows, out
