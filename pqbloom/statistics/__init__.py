"""Column statistics and page indexes: computing them (write side, :mod:`~pqbloom.statistics.compute`) and
trusting them (read side, :mod:`~pqbloom.statistics.read`), in the column's sort order
(:mod:`~pqbloom.statistics.order`); page indexes in :mod:`~pqbloom.statistics.page_index`.

Everything here is a pure function over in-memory values; no IO. Hot paths are
vectorized with numpy (no Python loop per value).

Value representation (the dense non-null values of one chunk or page):
BOOLEAN ``bool``; INT32 ``int32``; INT64 ``int64``; FLOAT ``float32``; DOUBLE
``float64``; INT96 ``(n, 12) uint8``; FIXED_LEN_BYTE_ARRAY ``(n, width) uint8``;
BYTE_ARRAY :class:`~pqbloom.arrays.BinaryArray`.
"""

from .compute import DictionaryBounds, binary_argminmax, compute_statistics, truncate_max_value, truncate_min_value
from .order import SortOrder, compare, sort_order_for
from .page_index import build_column_index, column_index_bounds, column_index_is_usable
from .read import ChunkStats, column_order_kind, decode_stat_value, legacy_stats_trusted, parse_created_by

__all__ = [
    "SortOrder",
    "sort_order_for",
    "compute_statistics",
    "truncate_min_value",
    "truncate_max_value",
    "binary_argminmax",
    "DictionaryBounds",
    "decode_stat_value",
    "compare",
    "ChunkStats",
    "column_order_kind",
    "legacy_stats_trusted",
    "parse_created_by",
    "build_column_index",
    "column_index_bounds",
    "column_index_is_usable",
]
