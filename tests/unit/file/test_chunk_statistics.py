"""Chunk statistics of byte-array columns cut into many pages (the writer takes them from the pages'
bounds): read by pyarrow, they are the values' true min and max, truncated as the spec allows."""

from __future__ import annotations

import decimal

import pyarrow as pa
import pyarrow.parquet as pq
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import pqbloom

_SETTINGS = settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])


def _incremented(prefix: bytes) -> bytes | None:
    """The shortest upper bound of every value starting with ``prefix``: its last non-0xFF byte + 1."""
    stripped = prefix.rstrip(b"\xff")
    return stripped[:-1] + bytes([stripped[-1] + 1]) if stripped else None


def _chunk_stats(path):
    md = pq.ParquetFile(path).metadata
    return [md.row_group(i).column(0).statistics for i in range(md.num_row_groups)]


@_SETTINGS
@given(values=st.lists(st.one_of(st.none(), st.binary(max_size=90),
                                 st.builds(lambda k, b: b"\xff" * k + b, st.integers(0, 80), st.binary(max_size=3))),
                       min_size=1, max_size=400),
       limit=st.integers(1, 80), page_size=st.integers(16, 3000), row_group=st.integers(50, 400))
def test_binary_chunk_bounds_over_many_pages(tmp_path, values, limit, page_size, row_group):
    path = tmp_path / "b.parquet"
    pqbloom.write_table(pa.table({"b": pa.array(values, pa.binary())}), path, data_page_size=page_size,
                        row_group_size=row_group, statistics_truncate_length=limit, use_dictionary=False)
    for i, stats in enumerate(_chunk_stats(path)):
        chunk = [v for v in values[i * row_group:(i + 1) * row_group] if v is not None]
        assert stats.null_count == min(row_group, len(values) - i * row_group) - len(chunk)
        if not chunk:
            assert not stats.has_min_max
            continue
        lo, hi = min(chunk), max(chunk)
        assert stats.min_raw == (lo if len(lo) <= limit else lo[:limit])
        up = _incremented(hi[:limit]) if len(hi) > limit else None
        assert stats.max_raw == (hi if up is None else up)


@_SETTINGS
@given(values=st.lists(st.one_of(st.none(), st.integers(-(10**30), 10**30)), min_size=1, max_size=300),
       page_size=st.integers(16, 1000))
def test_decimal_chunk_bounds_over_many_pages(tmp_path, values, page_size):
    # DECIMAL(38) in FIXED_LEN_BYTE_ARRAY: signed order, never truncated
    path = tmp_path / "d.parquet"
    arr = pa.array([None if v is None else decimal.Decimal(v) for v in values], pa.decimal128(38, 0))
    pqbloom.write_table(pa.table({"d": arr}), path, data_page_size=page_size, use_dictionary=False)
    (stats,) = _chunk_stats(path)
    present = [v for v in values if v is not None]
    if not present:
        assert not stats.has_min_max
        return
    assert (stats.min, stats.max) == (decimal.Decimal(min(present)), decimal.Decimal(max(present)))
