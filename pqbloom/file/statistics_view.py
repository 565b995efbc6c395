"""A column chunk's statistics as pqbloom gives them (:class:`ColumnStatistics`, :class:`SizeStatistics`),
from the footer's ``Statistics`` struct: what :attr:`pqbloom.file.metadata.ColumnChunkMetadata.statistics`
returns.

Statistics are given the way a reader may rely on them (:class:`pqbloom.statistics.ChunkStats`):
``min``/``max`` are None when the column's sort order is unknown or the writer is known to have
written wrong bounds (old parquet-mr on binary columns), even when the footer holds bytes there.
That differs from pyarrow, which shows such bounds; a pruning decision made on them would be wrong.
"""

from __future__ import annotations

import decimal
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..arrays import BinaryArray
from ..format import column_order_name, statistics_fields
from ..format.enums import NUMERIC_DTYPES, PhysicalType, name_of
from ..schema import ColumnDescriptor
from ..statistics import ChunkStats, sort_order_for
from ..table import Column
from .metadata_dict import statistics_dict
from .object_text import object_text
from .parquet_schema import ParquetLogicalType, converted_type_name

__all__ = ["ColumnStatistics", "SizeStatistics", "chunk_statistics"]

_TEXT_KINDS = frozenset(("STRING", "ENUM", "JSON"))


def _stat_kind(desc: ColumnDescriptor) -> str | None:
    lt = desc.logical_type
    if lt is None:
        return None
    if lt.kind == "INTEGER":
        return "INTEGER_SIGNED" if lt.signed else "INTEGER_UNSIGNED"
    return lt.kind


@dataclass(frozen=True)
class ColumnStatistics:
    """A column chunk's statistics, as far as they can be trusted.

    ``min`` and ``max`` are Python values of the column's logical type, as pyarrow's ``Statistics``
    gives them: ``datetime`` (aware for UTC-adjusted timestamps; pandas ``Timestamp`` for nanoseconds,
    as pyarrow), ``date``, ``time``, ``Decimal``, ``str`` for text (bytes when a truncated bound is not
    valid UTF-8), ``uuid.UUID``, non-negative ints for unsigned columns; FLOAT16 gives a float (pyarrow:
    the two raw bytes) and UUID a ``uuid.UUID`` (pyarrow: the 16 bytes). ``min_raw``/``max_raw`` are the same bounds in the physical domain (int, float,
    bool, bytes; unscaled decimals; unsigned ints non-negative). ``num_values``: the chunk's values
    less its nulls (its values when the null count is unknown), as pyarrow counts them. ``is_min_value_exact``/``is_max_value_exact`` are None when
    the writer did not say (a truncated bound is not exact).
    """

    min_raw: Any
    max_raw: Any
    null_count: int | None
    distinct_count: int | None
    nan_count: int | None
    is_min_value_exact: bool | None
    is_max_value_exact: bool | None
    min: Any = None
    max: Any = None
    num_values: int = 0
    physical_type: str | None = None
    #: the column's logical type, as pyarrow's ``Statistics.logical_type`` (``str()``: ``"String"``...)
    logical_type: ParquetLogicalType = ParquetLogicalType(None)
    #: the column's legacy converted type's name (``"UTF8"``, ``"NONE"``...)
    converted_type: str = "NONE"

    def __repr__(self) -> str:
        """pyarrow's text of a ``Statistics`` (:func:`~pqbloom.file.object_text.object_text`)."""
        return object_text(self, "Statistics", [
            ("has_min_max", self.has_min_max), ("min", self.min), ("max", self.max), ("null_count", self.null_count),
            ("distinct_count", self.distinct_count), ("num_values", self.num_values),
            ("physical_type", self.physical_type), ("logical_type", self.logical_type),
            ("converted_type (legacy)", self.converted_type)])

    @property
    def has_min_max(self) -> bool:
        """Whether both bounds are known and trusted."""
        return self.min_raw is not None and self.max_raw is not None

    @property
    def has_null_count(self) -> bool:
        """Whether the writer recorded how many nulls the chunk holds."""
        return self.null_count is not None

    @property
    def has_distinct_count(self) -> bool:
        """Whether the writer recorded how many distinct values the chunk holds."""
        return self.distinct_count is not None

    def to_dict(self) -> dict[str, Any]:
        """The statistics as pyarrow's ``Statistics.to_dict()``."""
        return statistics_dict(self)

    def equals(self, other: ColumnStatistics) -> bool:
        """Whether ``other`` holds the same statistics."""
        return self == other


@dataclass(frozen=True)
class SizeStatistics:
    """A column chunk's ``SizeStatistics``: the bytes of its byte-array values before encoding, and its
    repetition and definition level histograms (a count per level), each None when the writer gave none."""

    unencoded_byte_array_data_bytes: int | None
    repetition_level_histogram: list[int] | None
    definition_level_histogram: list[int] | None


def _logical(desc: ColumnDescriptor, v: Any) -> Any:
    """A physical bound as the Python value of the column's logical type (what reading a column
    holding it gives: the same conversion as :meth:`pqbloom.Table.to_pylist`)."""
    if v is None:
        return None
    p = desc.physical_type
    lt = desc.logical_type
    if lt is not None and lt.kind == "DECIMAL" and isinstance(v, int) and p not in (PhysicalType.INT32,
                                                                                      PhysicalType.INT64):
        return decimal.Decimal(f"{v}E-{lt.scale or 0}")  # exact (binary decimals come unscaled from ChunkStats)
    if lt is not None and lt.kind in _TEXT_KINDS:
        return _text(v)  # bytes when a (truncated) bound is not valid UTF-8
    vals: Any
    if p in (PhysicalType.INT32, PhysicalType.INT64) and isinstance(v, int):
        bits = 32 if p == PhysicalType.INT32 else 64
        vals = np.array([v & ((1 << bits) - 1)], np.uint64 if bits == 64 else np.uint32).view(NUMERIC_DTYPES[p])
    elif p == PhysicalType.BOOLEAN:
        return bool(v)
    elif p in (PhysicalType.FLOAT, PhysicalType.DOUBLE):
        vals = np.array([v], NUMERIC_DTYPES[p])
    elif p == PhysicalType.FIXED_LEN_BYTE_ARRAY and isinstance(v, bytes) and len(v) == desc.type_length:
        vals = np.frombuffer(v, np.uint8).reshape(1, len(v))
    elif p == PhysicalType.BYTE_ARRAY and isinstance(v, (bytes, str)):
        vals = BinaryArray.from_pylist([v])
    else:
        return v
    try:
        return Column(desc.field, vals, None).to_pylist()[0]
    except (ValueError, TypeError, ArithmeticError, OverflowError):
        return v


def _text(v: Any) -> Any:
    if isinstance(v, bytes):
        try:
            return v.decode("utf-8")
        except UnicodeDecodeError:
            return v
    return v


def chunk_statistics(raw: Any, desc: ColumnDescriptor, chunk_values: int, column_order: Any,
                     created_by: str | None) -> ColumnStatistics:
    """The :class:`ColumnStatistics` of the footer's ``Statistics`` struct ``raw`` of a chunk of leaf ``desc``
    holding ``chunk_values`` values (nulls included)."""
    kind = _stat_kind(desc)
    order = sort_order_for(desc.physical_type, kind, desc.element.converted_type)
    cs = ChunkStats.from_fields(statistics_fields(raw), desc.physical_type, order,
                                column_order=column_order_name(column_order), created_by=created_by,
                                type_length=desc.type_length, logical_kind=kind)
    lo, hi = cs.min, cs.max
    nulls = cs.null_count
    # as pyarrow: the chunk's values less its nulls (all of them when the null count is unknown)
    num_values = max(chunk_values - (nulls or 0), 0)
    return ColumnStatistics(lo, hi, nulls, cs.distinct_count, cs.nan_count, cs.min_exact, cs.max_exact,
                            _logical(desc, lo), _logical(desc, hi), num_values, name_of(PhysicalType, desc.physical_type),
                            ParquetLogicalType.of(desc), converted_type_name(desc))
