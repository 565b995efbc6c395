"""A read's transient buffers (pages decompressed, a chunk's bytes read a window at a time) are reused from
page to page, and no result aliases a reused buffer: with POISON on, every buffer is overwritten as it is
released, so a value still viewing one would differ from what pyarrow reads. Files of many small pages, in
every way a page's values may view its buffer (PLAIN numbers as views, DELTA_LENGTH_BYTE_ARRAY bytes as
views, uncompressed pages as views of the chunk's bytes)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import pqbloom
from pqbloom import compression
from pqbloom.arrays import BinaryArray
from pqbloom.file import chunk_window
from pqbloom.memory import scratch as scratch_mod
from pqbloom.memory.scratch import Lease, Scratch

ROWS = 400_000  # an int64 chunk of 3.2 MB: read by windows (pqbloom.file.chunk_window) when local
PAGE = 32 << 10


def _table() -> pa.Table:
    rng = np.random.default_rng(7)
    ints = rng.integers(-(1 << 60), 1 << 60, ROWS)
    nulls = rng.random(ROWS) < 0.1
    words = np.array([f"w{i % 5000:05d}x" for i in range(ROWS)], dtype=object)
    return pa.table({
        "i": pa.array(ints),
        "n": pa.array(ints // 3, mask=nulls),
        "d": pa.array(words),  # DELTA_LENGTH_BYTE_ARRAY: values' bytes are a view of the page
        "s": pa.array(words),  # dictionary-encoded
        "f": pa.array(rng.random(ROWS)),
    })


@pytest.fixture(scope="module", params=[("snappy", "1.0"), ("zstd", "2.0"), ("none", "1.0"), ("none", "2.0")],
                ids=["snappy-v1", "zstd-v2", "uncompressed-v1", "uncompressed-v2"])
def written(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, pa.Table]:
    codec, version = request.param
    path = tmp_path_factory.mktemp("leases") / f"{codec}-{version}.parquet"
    t = _table()
    pq.write_table(t, path, compression=codec, data_page_size=PAGE, data_page_version=version,
                   use_dictionary=["s"], column_encoding={"d": "DELTA_LENGTH_BYTE_ARRAY", "i": "PLAIN",
                                                          "n": "PLAIN", "f": "PLAIN"},
                   row_group_size=ROWS)
    return path, pq.read_table(path)


@pytest.fixture(autouse=True)
def _poison(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(scratch_mod, "POISON", True)


def _arrays(values: Any) -> list[np.ndarray]:
    if isinstance(values, BinaryArray):
        return [values.offsets, values.data]
    return [values] if isinstance(values, np.ndarray) else []


def _free_buffers() -> list[np.ndarray]:
    """The buffers this thread's scratches would hand out again."""
    return list(compression.PAGES.free) + list(chunk_window.WINDOWS.free)


@pytest.mark.parametrize("use_threads", [False, True])
def test_a_read_never_aliases_a_reused_buffer(written: tuple[Path, pa.Table], use_threads: bool) -> None:
    path, want = written
    got = pqbloom.read_table(str(path), use_threads=use_threads)
    again = pqbloom.read_table(str(path), use_threads=use_threads)  # reuses what the first read released
    for t in (got, again):
        assert t.to_arrow().equals(want)
    for col in got.columns:
        for a in _arrays(col.values):
            for buf in _free_buffers():
                assert not np.shares_memory(a, buf), col.field.name


def test_batches_kept_while_later_pages_decode_stay_intact(written: tuple[Path, pa.Table]) -> None:
    path, want = written
    batches = list(pqbloom.ParquetFile(str(path)).iter_batches(batch_size=30_000))  # all kept, then checked
    assert len(batches) > 10
    assert pa.concat_tables([b.to_arrow() for b in batches]).equals(want)


def test_pages_of_a_chunk_reuse_a_few_buffers(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The (Python) page loop releases each page's buffer when the next page is asked for: a chunk of a
    hundred pages decompresses into a buffer or two, and reads its bytes into a few windows. (The
    compiled page loop, which would take these chunks, decompresses into one buffer of its own.)"""
    from pqbloom.file import flat_chunk

    monkeypatch.setattr(flat_chunk, "available", lambda: False)
    path = tmp_path / "ints.parquet"
    values = np.arange(ROWS, dtype=np.int64) * 7919
    pq.write_table(pa.table({"i": values}), path, compression="snappy", data_page_size=PAGE,
                   use_dictionary=False, row_group_size=ROWS)
    raw = tmp_path / "raw.parquet"
    pq.write_table(pa.table({"i": values}), raw, compression="none", data_page_size=PAGE,
                   use_dictionary=False, row_group_size=ROWS)
    taken: dict[int, list[int]] = {}
    real_take = Scratch.take

    def counting_take(self: Scratch, size: int) -> Lease:
        lease = real_take(self, size)
        taken.setdefault(id(self), []).append(int(np.frombuffer(lease.view, np.uint8).ctypes.data))
        return lease

    monkeypatch.setattr(Scratch, "take", counting_take)
    assert pqbloom.read_table(str(path), use_threads=False).column("i").to_numpy().tolist() == values.tolist()
    pages = taken[id(compression.PAGES)]
    assert len(pages) >= 50 and len(set(pages)) <= 2, (len(pages), len(set(pages)))
    taken.clear()
    assert pqbloom.read_table(str(raw), use_threads=False).column("i").to_numpy().tolist() == values.tolist()
    windows = taken[id(chunk_window.WINDOWS)]
    assert len(windows) >= 3 and len(set(windows)) <= 3, (len(windows), len(set(windows)))
