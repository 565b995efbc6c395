"""Statistics, column orders and the page index: format's own records, and the structs built from them.

* :class:`StatisticsFields`: a chunk's or page's ``Statistics`` with plain values (bounds still encoded).
  :mod:`pqbloom.statistics` computes them when writing and decides which to trust when reading;
  :func:`statistics_fields` and :func:`statistics_struct` convert to and from the struct.
* :func:`column_order_name`: a footer's ``ColumnOrder`` union as the name of its member.
* :class:`ColumnIndexFields` (what a writer stores in a chunk's ``ColumnIndex``) and
  :func:`encode_column_index`; :func:`offset_index` builds a chunk's ``OffsetIndex`` from its page
  locations; :func:`decode_column_index` / :func:`decode_offset_index` decode them for the file layer.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from .._thrift import ttypes as T
from ..errors import ParquetError
from .codec import decode_prefix, encode

__all__ = ["StatisticsFields", "statistics_fields", "statistics_struct", "column_order_name", "ColumnIndexFields",
           "encode_column_index", "offset_index", "decode_column_index", "decode_offset_index", "COLUMN_ORDERS"]

#: the members of the ``ColumnOrder`` union this reader knows
COLUMN_ORDERS = ("TYPE_ORDER", "IEEE_754_TOTAL_ORDER", "INT96_TIMESTAMP_ORDER")


@dataclass(slots=True)
class StatisticsFields:
    """A ``Statistics``: counts and bounds as stored (PLAIN-encoded bytes), None where absent. The
    field names are the format's (``min_value``, ``max_value``, ``is_min_value_exact``..., and the
    deprecated ``min`` / ``max``). Made per chunk and per page, never changed once made (slotted, not
    frozen: a frozen dataclass costs several times as much to create)."""

    null_count: int | None = None
    nan_count: int | None = None
    distinct_count: int | None = None
    min_value: bytes | None = None
    max_value: bytes | None = None
    is_min_value_exact: bool | None = None
    is_max_value_exact: bool | None = None
    min: bytes | None = None  # noqa: A003 - the format's name
    max: bytes | None = None  # noqa: A003


def statistics_fields(s: Any) -> StatisticsFields:
    """The record of a decoded (or skimmed: no ``distinct_count``) ``Statistics`` struct."""
    return StatisticsFields(s.null_count, s.nan_count, getattr(s, "distinct_count", None), s.min_value, s.max_value,
                            s.is_min_value_exact, s.is_max_value_exact, s.min, s.max)


def statistics_struct(f: StatisticsFields) -> Any:
    """The ``Statistics`` struct of a record."""
    return T.Statistics(null_count=f.null_count, nan_count=f.nan_count, distinct_count=f.distinct_count,
                        min_value=f.min_value, max_value=f.max_value, is_min_value_exact=f.is_min_value_exact,
                        is_max_value_exact=f.is_max_value_exact, min=f.min, max=f.max)


def column_order_name(order: Any) -> str | None:
    """A decoded ``ColumnOrder``: the name of its member (:data:`COLUMN_ORDERS`), ``"UNKNOWN"`` for a member
    this reader does not know, None for no column order."""
    if order is None:
        return None
    for name in COLUMN_ORDERS:
        if getattr(order, name, None) is not None:
            return name
    return "UNKNOWN"


@dataclass(slots=True)
class ColumnIndexFields:
    """A chunk's ``ColumnIndex`` as a writer stores it: per data page, whether it holds only nulls, its
    encoded min and max (empty for a null page), the boundary order; the counts and level histograms
    (flattened, page after page) when given."""

    null_pages: list[bool]
    min_values: list[bytes]
    max_values: list[bytes]
    boundary_order: int
    null_counts: list[int] | None = None
    nan_counts: list[int] | None = None
    repetition_level_histograms: list[int] | None = None
    definition_level_histograms: list[int] | None = None


def encode_column_index(ci: ColumnIndexFields) -> bytes:
    """The compact-Thrift ``ColumnIndex`` of ``ci``."""
    return encode(T.ColumnIndex(null_pages=ci.null_pages, min_values=ci.min_values, max_values=ci.max_values,
                                boundary_order=ci.boundary_order, null_counts=ci.null_counts,
                                nan_counts=ci.nan_counts, repetition_level_histograms=ci.repetition_level_histograms,
                                definition_level_histograms=ci.definition_level_histograms))


def offset_index(page_locations: Sequence[tuple[int, int, int]],
                 unencoded_byte_array_data_bytes: Sequence[int] | None = None) -> Any:
    """An ``OffsetIndex`` from (file offset, compressed size incl. header, first row index) per data page,
    and the unencoded byte-array bytes of each page (byte-array columns). Raises
    :class:`~pqbloom.errors.ParquetError` for locations no reader could use."""
    locs = []
    prev_row = -1
    for offset, size, first_row in page_locations:
        if first_row <= prev_row or (prev_row < 0 and first_row != 0):
            raise ParquetError(f"page first_row_index {first_row} must start at 0 and increase strictly")
        if offset < 0 or size <= 0:
            raise ParquetError(f"invalid page location (offset {offset}, size {size})")
        prev_row = first_row
        locs.append(T.PageLocation(offset=int(offset), compressed_page_size=int(size), first_row_index=int(first_row)))
    oi = T.OffsetIndex(page_locations=locs)
    if unencoded_byte_array_data_bytes is not None:
        if len(unencoded_byte_array_data_bytes) != len(locs):
            raise ParquetError("unencoded_byte_array_data_bytes needs one entry per page")
        oi.unencoded_byte_array_data_bytes = [int(v) for v in unencoded_byte_array_data_bytes]
    return oi


def decode_column_index(buf: bytes | bytearray | memoryview, *, offset: int | None = None) -> Any:
    """The ``ColumnIndex`` struct at the start of ``buf`` (for the file layer)."""
    return decode_prefix(T.ColumnIndex, buf, offset=offset, what="column index")[0]


def decode_offset_index(buf: bytes | bytearray | memoryview, *, offset: int | None = None) -> Any:
    """The ``OffsetIndex`` struct at the start of ``buf`` (for the file layer)."""
    return decode_prefix(T.OffsetIndex, buf, offset=offset, what="offset index")[0]
