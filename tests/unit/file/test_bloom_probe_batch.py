"""A Bloom probe reads the filter header and the value's block in one batch (one round trip remotely),
and a lookup's probes of every row group go out in one prefetch on a concurrent reader."""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

import pqbloom
from pqbloom.io import RangeReader


class BatchLog(RangeReader):
    """A local reader that logs each batch of reads and says it is concurrent (as remote readers do)."""

    concurrent = True

    def __init__(self, data: bytes) -> None:
        super().__init__(data)
        self.batches: list[list[tuple[int, int]]] = []
        self.kept: dict[tuple[int, int], bytes] = {}

    def read(self, offset: int, length: int, *, what: str = "data") -> bytes:
        return self.read_many([(offset, length)], what=what)[0]

    def read_many(self, ranges: list[tuple[int, int]], *, what: str = "data") -> list[bytes]:
        todo = [r for r in ranges if r not in self.kept]
        if todo:
            self.batches.append(todo)
        return [self.kept[r] if r in self.kept else super(BatchLog, self).read(*r, what=what) for r in ranges]

    def prefetch(self, ranges: list[tuple[int, int]], *, what: str = "data") -> None:
        self.batches.append(list(ranges))
        for r in ranges:
            self.kept[r] = super().read(*r, what=what)


def _file(tmp_path) -> bytes:
    ids = np.arange(0, 400_000, 2, dtype=np.int64)
    np.random.default_rng(3).shuffle(ids)
    path = tmp_path / "f.parquet"
    pq.write_table(pa.table({"id": ids}), path, row_group_size=50_000,
                   bloom_filter_options={"id": {"ndv": 50_000, "fpp": 0.01}})
    return path.read_bytes()


def test_probe_reads_header_and_block_in_one_batch(tmp_path):
    r = BatchLog(_file(tmp_path))
    pf = pqbloom.ParquetFile(r)
    r.batches.clear()
    assert pf.bloom_filter_might_contain(0, "id", int(pq.read_table(tmp_path / "f.parquet").column("id")[7].as_py()))
    assert len(r.batches) == 1 and len(r.batches[0]) == 2  # header and block together
    assert [n for _, n in r.batches[0]] == [64, 32]


def test_lookup_prefetches_every_row_groups_probes_at_once(tmp_path):
    r = BatchLog(_file(tmp_path))
    pf = pqbloom.ParquetFile(r)
    assert pf.num_row_groups == 4
    r.batches.clear()
    ex = pqbloom.Explain()
    assert pf.read(filters=pqbloom.field("id") == 200_001, explain=ex).num_rows == 0  # odd: absent
    assert ex.row_groups_pruned_bloom_filter == 4
    assert len(r.batches) == 1 and len(r.batches[0]) == 8  # 4 row groups x (header, block), one batch
