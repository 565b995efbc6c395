"""Probe ids for the lookup benchmarks: ids that row-group statistics cannot prune."""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np

import pqbloom


def ids_inside_every_row_group(paths: Iterable[str], ids: np.ndarray) -> np.ndarray:
    """The values of ``ids`` strictly inside the int64 ``id`` min/max range of every row group of
    ``paths``, so that a lookup of them (or of an absent neighbour) is decided by Bloom filters and
    data, never by statistics alone."""
    los, his = [], []
    for path in paths:
        with pqbloom.ParquetFile(path) as pf:
            for rg in range(pf.num_row_groups):
                st = pf.column_chunk(rg, "id").statistics
                los.append(st.min)
                his.append(st.max)
    lo, hi = max(los), min(his)
    return ids[(ids > lo) & (ids < hi - 2)]
