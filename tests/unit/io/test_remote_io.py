"""pqbloom.io.remote: exact counted range requests, prefetched ranges, and what a misbehaving store gets."""

from __future__ import annotations

import pytest

from pqbloom.errors import CorruptFileError
from pqbloom.io.remote import RemoteRangeReader, prefetch_many
from pqbloom.io.sources import file_url_path, is_url

DATA = bytes(range(256)) * 40


class FakeStore:
    """A filesystem answering ``cat_file`` as a store would, logging each request; ``mode`` misbehaves."""

    protocol = "fake"

    def __init__(self, mode: str = "ok") -> None:
        self.mode = mode
        self.requests: list[tuple[str, int, int]] = []

    def size(self, path: str) -> int:
        self.requests.append((path, -1, -1))
        return len(DATA)

    def cat_file(self, path: str, start: int, end: int) -> bytes:
        self.requests.append((path, start, end))
        if self.mode == "short":
            return DATA[start:end - 1]
        if self.mode == "ignores-range":
            return DATA
        if self.mode == "broken":
            raise RuntimeError("connection reset")
        return DATA[start:end]


def test_each_read_is_one_exact_range_request():
    fs = FakeStore()
    r = RemoteRangeReader(fs, "b/f", size=len(DATA))
    assert r.read(100, 7) == DATA[100:107]
    assert r.read_many([(0, 4), (9000, 32)]) == [DATA[:4], DATA[9000:9032]]
    assert fs.requests == [("b/f", 100, 107), ("b/f", 0, 4), ("b/f", 9000, 9032)]  # no read-ahead
    assert (r.stats.requests, r.stats.bytes_read) == (3, 7 + 4 + 32)


def test_unknown_size_costs_one_counted_request():
    fs = FakeStore()
    r = RemoteRangeReader(fs, "b/f")
    assert r.size == len(DATA) and fs.requests == [("b/f", -1, -1)] and r.stats.requests == 1


def test_prefetched_ranges_serve_reads_inside_them():
    fs = FakeStore()
    r = RemoteRangeReader(fs, "b/f", size=len(DATA))
    r2 = RemoteRangeReader(fs, "b/g", size=len(DATA))
    prefetch_many([(r, [(1000, 100), (5000, 64)]), (r2, [(0, 10)])])
    n = len(fs.requests)
    assert r.read(1010, 20) == DATA[1010:1030] and r.read(5000, 64) == DATA[5000:5064]
    assert r2.read(2, 3) == DATA[2:5]
    assert len(fs.requests) == n  # all from what was prefetched
    assert r.read(1090, 20) == DATA[1090:1110]  # runs past the prefetched range: fetched
    assert len(fs.requests) == n + 1


def test_reads_outside_the_file_are_corrupt_file_errors():
    r = RemoteRangeReader(FakeStore(), "b/f", size=len(DATA))
    with pytest.raises(CorruptFileError, match="outside the file"):
        r.read(len(DATA) - 4, 8)
    with pytest.raises(CorruptFileError, match="outside the file"):
        r.prefetch([(-1, 4)])


def test_short_answer_is_a_corrupt_file_error():
    with pytest.raises(CorruptFileError, match="asked for 7 bytes, got 6"):
        RemoteRangeReader(FakeStore("short"), "b/f", size=len(DATA)).read(100, 7)


def test_store_ignoring_range_still_gives_the_range():
    assert RemoteRangeReader(FakeStore("ignores-range"), "b/f", size=len(DATA)).read(300, 5) == DATA[300:305]


def test_transport_failure_is_an_oserror_naming_the_file():
    r = RemoteRangeReader(FakeStore("broken"), "b/f", size=len(DATA), name="fake://b/f")
    with pytest.raises(OSError, match="fake://b/f: RuntimeError: connection reset"):
        r.read(0, 4)


def test_urls_and_file_urls():
    assert is_url("s3://b/k") and is_url("memory://x") and not is_url("/tmp/x") and not is_url("C:\\x")
    assert file_url_path("file:///tmp/a%20b.parquet") == "/tmp/a b.parquet"
    assert file_url_path("file://localhost/tmp/x") == "/tmp/x"
    assert file_url_path("s3://b/k") is None
