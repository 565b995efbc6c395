"""``use_threads`` on the write side: pages compressed on worker threads give the same file, byte for
byte, as compressed in the calling thread; pyarrow reads it back; a failure on a worker leaves nothing
at the target and no worker running."""

from __future__ import annotations

import hashlib
import os
import threading
import time

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import pqbloom
import pqbloom.compression as compression_mod
import pqbloom.file.parallel as parallel
from tests.conftest import run_pyarrow


@pytest.fixture(autouse=True)
def _several_workers(monkeypatch):
    # the threaded path even on a one-CPU machine
    monkeypatch.setattr(parallel, "worker_count", lambda: 4)


def _table(n: int = 30_000) -> pa.Table:
    rng = np.random.default_rng(5)
    lens = rng.integers(0, 90, n)  # some values past statistics_truncate_length (64)
    words = ["".join(chr(97 + (i * 7 + k) % 26) for k in range(int(ln))) for i, ln in enumerate(lens)]
    nulls = rng.random(n) < 0.1
    return pa.table({
        "s": pa.array(words, mask=nulls),
        "i": pa.array(rng.integers(-10**12, 10**12, n), mask=nulls),
        "c": pa.array(rng.integers(0, 30, n)),  # dictionary-encoded
        "l": pa.array([None if i % 17 == 0 else list(range(i % 6)) for i in range(n)], pa.list_(pa.int64())),
    })


OPTIONS = [
    {},
    {"data_page_version": "2.0"},
    {"compression": "zstd", "write_page_checksum": True},
    {"compression": "gzip", "data_page_version": "2.0", "write_page_checksum": True},
    {"compression": "none"},
    {"compression": "lz4", "use_dictionary": False, "bloom_filter_options": {"s": True}},
]


def _digest(path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


@pytest.mark.parametrize("options", OPTIONS, ids=lambda o: "-".join(f"{k}={v}" for k, v in o.items()) or "default")
def test_threaded_write_is_byte_identical_and_reads_back(tmp_path, options):
    t = _table()
    kw = dict(options, data_page_size=8_000, row_group_size=12_000)
    pqbloom.write_table(t, tmp_path / "threads.parquet", use_threads=True, **kw)
    pqbloom.write_table(t, tmp_path / "one.parquet", use_threads=False, **kw)
    assert _digest(tmp_path / "threads.parquet") == _digest(tmp_path / "one.parquet")
    f = pq.ParquetFile(tmp_path / "threads.parquet")
    assert f.metadata.row_group(0).column(0).statistics is not None
    assert f.metadata.row_group(0).column(0).num_values == 12_000
    assert max(f.metadata.row_group(0).column(i).total_compressed_size for i in range(4)) > 8_000  # several pages
    assert f.read().equals(t)


def _recording_compress(monkeypatch, fail_at: int | None = None):
    """Wrap the codec entry points (pages with levels go through compress_joined, which compresses
    both parts in one call): record the thread of each page's call; raise on call ``fail_at``."""
    real, real_joined = compression_mod.compress, compression_mod.compress_joined
    calls: list[int] = []
    running = [0]
    lock = threading.Lock()
    inside = threading.local()  # compress_joined may call compress: count the page once

    def recorded(fn, *args):
        if getattr(inside, "on", False):
            return fn(*args)
        with lock:
            calls.append(threading.get_ident())
            k = len(calls)
            running[0] += 1
        inside.on = True
        try:
            time.sleep(0.002)  # keep several pages in flight
            if fail_at is not None and k == fail_at:
                raise RuntimeError("compressor failed")
            return fn(*args)
        finally:
            inside.on = False
            with lock:
                running[0] -= 1

    monkeypatch.setattr(compression_mod, "compress", lambda codec, data, level=None: recorded(real, codec, data, level))
    monkeypatch.setattr(compression_mod, "compress_joined",
                        lambda codec, head, body, level=None: recorded(real_joined, codec, head, body, level))
    return calls, running


def test_pages_are_compressed_on_workers_only_with_use_threads(tmp_path, monkeypatch):
    calls, _ = _recording_compress(monkeypatch)
    t = _table(20_000)
    me = threading.get_ident()
    pqbloom.write_table(t, tmp_path / "a.parquet", data_page_size=4_000)
    assert len(calls) > 20
    assert sum(c != me for c in calls) > len(calls) // 2  # the default: threads
    calls.clear()
    pqbloom.write_table(t, tmp_path / "b.parquet", data_page_size=4_000, use_threads=False)
    assert calls and all(c == me for c in calls)
    assert _digest(tmp_path / "a.parquet") == _digest(tmp_path / "b.parquet")


@pytest.mark.parametrize("use_threads", [True, False])
def test_failed_page_compression_leaves_nothing_and_no_worker_running(tmp_path, monkeypatch, use_threads):
    target = tmp_path / "t.parquet"
    pqbloom.write_table({"a": [1, 2, 3]}, target)
    before = target.read_bytes()
    calls, running = _recording_compress(monkeypatch, fail_at=7)
    with pytest.raises(RuntimeError, match="compressor failed"):
        pqbloom.write_table(_table(20_000), target, data_page_size=4_000, use_threads=use_threads)
    assert running[0] == 0  # every page job has finished or was cancelled before the error escaped
    done = len(calls)
    time.sleep(0.05)
    assert len(calls) == done  # and none starts afterwards
    assert target.read_bytes() == before
    assert sorted(os.listdir(tmp_path)) == ["t.parquet"]


def test_encrypted_threaded_write_is_read_by_pyarrow_and_by_pqbloom(tmp_path):
    key = b"0123456789abcdef"
    t = _table(20_000)
    for alg in ("AES_GCM_V1", "AES_GCM_CTR_V1"):
        props = pqbloom.FileEncryptionProperties(key, algorithm=alg)
        path = tmp_path / f"{alg}.parquet"
        pqbloom.write_table(t, path, encryption_properties=props, data_page_size=4_000, write_page_checksum=True)
        got = pqbloom.read_table(path, decryption_properties=pqbloom.FileDecryptionProperties(key)).to_arrow()
        assert got.equals(t)
    pq.write_table(t, tmp_path / "expected.parquet")
    # pyarrow in a subprocess (it may std::terminate on encrypted metadata it rejects)
    out = run_pyarrow(
        """
        d = sys.argv[1]
        expected = pq.read_table(os.path.join(d, "expected.parquet"))
        props = pe.create_decryption_properties(bytes.fromhex(sys.argv[2]))
        for alg in ("AES_GCM_V1", "AES_GCM_CTR_V1"):
            t = pq.read_table(os.path.join(d, alg + ".parquet"), decryption_properties=props,
                              page_checksum_verification=True)
            assert t.equals(expected), alg
        print("ok")
        """,
        str(tmp_path), key.hex(),
    )
    assert out.strip() == "ok"


def test_small_chunks_are_compressed_in_the_calling_thread(tmp_path, monkeypatch):
    # many tiny pages: a hand-off to a worker per page would cost more than the compression
    calls, _ = _recording_compress(monkeypatch)
    pqbloom.write_table({"a": np.arange(2_000, dtype=np.int64)}, tmp_path / "s.parquet", data_page_size=256,
                        use_dictionary=False)
    assert len(calls) > 10 and set(calls) == {threading.get_ident()}
    assert pq.read_table(tmp_path / "s.parquet").column("a").to_pylist() == list(range(2_000))
