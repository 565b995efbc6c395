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
from ..format import RowGroupList, T
from ..schema import ColumnDescriptor
from .chunks import ChunkAccess

__all__ = ["FooterStats", "footer_statistics"]


class FooterStats:
    """One chunk's footer entry as pruning reads it. The statistics fields keep the format's names
    (``min_value``, ``max_value``, ``is_min_value_exact``..., the deprecated ``min`` / ``max``), so
    :meth:`pqbloom.statistics.ChunkStats.from_thrift` reads :attr:`statistics` as it reads the Thrift
    struct; ``statistics`` is None when the chunk has none."""

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
        return cls(meta.num_values, None if s is None else StatisticsFields.of(s),
                   None if ss is None else ss.definition_level_histogram)

    def __repr__(self) -> str:
        return f"FooterStats(num_values={self.num_values}, statistics={self.statistics})"


class StatisticsFields:
    """A chunk's ``Statistics``: counts and bounds as stored (encoded bytes)."""

    __slots__ = ("null_count", "nan_count", "distinct_count", "min_value", "max_value", "is_min_value_exact",
                 "is_max_value_exact", "min", "max")

    def __init__(self, null_count: int | None = None, nan_count: int | None = None,
                 distinct_count: int | None = None, min_value: bytes | None = None, max_value: bytes | None = None,
                 is_min_value_exact: bool | None = None, is_max_value_exact: bool | None = None,
                 min: bytes | None = None, max: bytes | None = None) -> None:  # noqa: A002 - the format's names
        self.null_count, self.nan_count, self.distinct_count = null_count, nan_count, distinct_count
        self.min_value, self.max_value = min_value, max_value
        self.is_min_value_exact, self.is_max_value_exact = is_min_value_exact, is_max_value_exact
        self.min, self.max = min, max

    @classmethod
    def of(cls, s: T.Statistics) -> StatisticsFields:
        """From the Thrift struct (a skimmed one has no ``distinct_count``)."""
        return cls(s.null_count, s.nan_count, getattr(s, "distinct_count", None), s.min_value, s.max_value,
                   s.is_min_value_exact, s.is_max_value_exact, s.min, s.max)

    def __repr__(self) -> str:
        return "StatisticsFields(" + ", ".join(f"{k}={getattr(self, k)!r}" for k in self.__slots__) + ")"


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
