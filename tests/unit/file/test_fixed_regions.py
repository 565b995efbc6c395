"""Fixed-width columns of several row groups are placed page by page into their rows of the column's
buffer (FixedRegions): the same tables as pyarrow reads, with or without threads, nulls and dictionary
fallbacks included, and a chunk that comes back dense is written into its rows by the builder."""

from __future__ import annotations

import decimal

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import pqbloom
from pqbloom.file.column_builder import ColumnBuilder, FixedRegions
from pqbloom.file.column_reader import ChunkParts
from pqbloom.schema import make_field


def _table(n: int, seed: int) -> pa.Table:
    rng = np.random.default_rng(seed)
    nulls = rng.random(n) < 0.15
    runs = (np.arange(n) // 700) % 3 == 0  # long stretches of nulls too (whole blocks of slots)

    def masked(values: np.ndarray, typ: pa.DataType, mask: np.ndarray = nulls) -> pa.Array:
        return pa.array(values, type=typ, mask=mask)

    ints = rng.integers(-(2**62), 2**62, n)
    return pa.table({
        "i64": masked(ints, pa.int64()),
        "i32_runs": masked(rng.integers(-5, 5, n).astype(np.int32), pa.int32(), runs),
        "i8": masked(rng.integers(-100, 100, n).astype(np.int8), pa.int8()),
        "f32": masked(rng.random(n).astype(np.float32), pa.float32()),
        "f64_required": pa.array(rng.random(n)),
        "flag": masked(rng.random(n) < 0.5, pa.bool_()),
        "ts": masked(ints // 1000, pa.timestamp("us", tz="UTC")),
        "day": masked(rng.integers(0, 30000, n).astype(np.int32), pa.date32()),
        "dec": pa.array([None if m else decimal.Decimal(int(v % 10**9)) / 100 for v, m in zip(ints, nulls)],
                        pa.decimal128(12, 2)),
        "t": masked((rng.integers(0, 86_400_000_000, n)), pa.time64("us")),
    })


@pytest.mark.parametrize("dictionary", [True, False])
@pytest.mark.parametrize("use_threads", [True, False])
def test_several_row_groups_read_as_pyarrow_reads_them(tmp_path, monkeypatch, dictionary: bool,  # type: ignore[no-untyped-def]
                                                       use_threads: bool) -> None:
    table = _table(23_456, 7)
    path = tmp_path / "t.parquet"
    # small pages and a small dictionary limit: pages of every encoding, dictionary fallbacks mid-chunk
    pq.write_table(table, path, row_group_size=5_000, data_page_size=4_000, use_dictionary=dictionary,
                   dictionary_pagesize_limit=2_000, write_statistics=False)
    made: list[str] = []
    real_init = FixedRegions.__init__

    def spy(self, f, rows, nullable):  # type: ignore[no-untyped-def]
        made.append(f.name)
        real_init(self, f, rows, nullable)

    monkeypatch.setattr(FixedRegions, "__init__", spy)
    got = pqbloom.read_table(str(path), use_threads=use_threads).to_arrow()
    assert got.equals(pq.read_table(path))
    # every fixed-width column, the decimal (FIXED_LEN_BYTE_ARRAY rows) too, went into its rows
    assert sorted(made) == sorted(table.column_names)
    # and a subset of row groups in another order (rows placed where their chunk goes)
    pf = pqbloom.ParquetFile(str(path))
    part = pf.read_row_groups([3, 0, 4], use_threads=use_threads).to_arrow()
    assert part.equals(pq.ParquetFile(path).read_row_groups([3, 0, 4]))


def test_a_dense_chunk_among_placed_ones_goes_to_its_rows() -> None:
    f = make_field("x", "int64", nullable=True)
    regions = FixedRegions(f, [4, 3, 5], nullable=True)
    builder = ColumnBuilder(f, 12, None, None, regions)
    # chunk 0 placed in its rows (as place_pages writes them), chunk 1 dense with nulls, chunk 2 placed
    rows0, mask0 = regions.rows(0)
    rows0[:] = [1, 0, 3, 4]
    mask0[:] = [True, False, True, True]
    builder.add(ChunkParts([rows0], mask0, 4, placed=True))
    builder.add(ChunkParts([np.array([20, 22], np.int64)], np.array([True, False, True]), 3))
    rows2, mask2 = regions.rows(2)
    rows2[:] = [30, 31, 32, 33, 34]
    mask2[:] = True
    builder.add(ChunkParts([rows2], mask2, 5, placed=True))
    col = builder.finish()
    assert col.values.tolist() == [1, 0, 3, 4, 20, 0, 22, 30, 31, 32, 33, 34]
    assert col.mask.tolist() == [False, True, False, False, False, True, False] + [False] * 5
