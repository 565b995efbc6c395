"""Column chunks read a window at a time (file/chunk_window.py): the same tables and the same typed
errors as chunks read whole, whatever the window and however page headers fall across windows."""

from __future__ import annotations

import io

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import pqbloom
import pqbloom.file.chunk_window as chunk_window
import pqbloom.file.pages as pages
from pqbloom.errors import ParquetError
from pqbloom.file.footer import FOOTER_TAIL_READ
from tests.corpora import params
from tests.paths import FIXTURES

FILES = params([p for p in sorted((FIXTURES / "data").glob("*.parquet")) if p.name != "large_string_map.brotli.parquet"],
               FIXTURES)


def _ipc(t: pa.Table) -> bytes:
    sink = pa.BufferOutputStream()
    with pa.ipc.new_stream(sink, t.schema) as w:
        w.write_table(t)
    return bytes(sink.getvalue().to_pybytes())


def _read(source: object) -> object:
    try:
        return pqbloom.read_table(source, use_threads=False).to_arrow()
    except ParquetError as exc:
        return type(exc)


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.name)
def test_tiny_windows_read_what_whole_chunks_read(path, monkeypatch):  # type: ignore[no-untyped-def]
    # 64-byte windows and 8 bytes of header room: nearly every page header and body spans windows,
    # and most headers are longer than the room (parsed again after reading on)
    whole = _read(io.BytesIO(path.read_bytes()))  # a file object: chunks read whole
    monkeypatch.setattr(chunk_window, "WINDOW", 64)
    monkeypatch.setattr(pages, "HEADER_ROOM", 8)
    windowed = _read(path)
    if isinstance(whole, type):
        assert windowed is whole
        return
    assert not isinstance(windowed, type), windowed
    assert windowed.equals(whole) or _ipc(windowed) == _ipc(whole)  # (NaN != NaN for equals)
    try:
        expected = pq.read_table(path)
    except Exception:  # pyarrow cannot read it: the comparison above is what there is
        return
    if windowed.schema.equals(expected.schema) and not any(str(f.type).startswith(("float", "double", "halffloat"))
                                                            for f in expected.schema):
        assert windowed.equals(expected)


@pytest.mark.parametrize("use_threads", [False, True])
def test_each_byte_of_a_windowed_chunk_is_read_once(tmp_path, monkeypatch, use_threads: bool):  # type: ignore[no-untyped-def]
    # incompressible values in pages of ~3 KB, 4 KiB windows: nearly every window ends inside a page,
    # whose start was read already and must not be read again
    import numpy as np

    rng = np.random.default_rng(5)
    t = pa.table({"a": rng.integers(0, 2**63, 40_000), "b": rng.random(40_000)})
    path = tmp_path / "t.parquet"
    pq.write_table(t, path, compression="none", use_dictionary=False, data_page_size=3_000,
                   write_statistics=False)
    monkeypatch.setattr(chunk_window, "WINDOW", 4096)
    with pqbloom.ParquetFile(str(path)) as pf:
        got = pf.read(use_threads=use_threads).to_arrow()
        stats = pf.io_stats
    assert got.equals(pq.read_table(path))
    # the footer's one speculative tail read (64 KiB) overlaps the last chunk's pages; every other
    # byte is read once
    size = path.stat().st_size
    assert stats.bytes_read - FOOTER_TAIL_READ <= size, (stats.bytes_read, size)
