"""Page decompression writes each page once, into a buffer of the promised size."""

from __future__ import annotations

import tracemalloc

import cramjam
import numpy as np
import pyarrow as pa
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pqbloom import compression
from pqbloom.errors import CorruptFileError

MB = 1 << 20
ARROW_ZSTD = pa.Codec("zstd")


@pytest.mark.traces_memory
def test_zstd_page_decompresses_in_one_buffer_of_its_size() -> None:
    # 48 MiB of compressible data in one frame that states its size (as writers emit it): one buffer
    # of that size, not 1 MiB reads joined into a growing bytearray and then copied into bytes
    payload = np.resize(np.frombuffer(b"parquet page values 0123456789", np.uint8), 48 * MB).tobytes()
    comp = ARROW_ZSTD.compress(payload, asbytes=True)
    codec = compression.codec_by_name("zstd")
    tracemalloc.start()
    try:
        out = compression.decompress(codec, comp, len(payload))
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert bytes(out) == payload
    assert peak < 1.2 * len(payload), peak


@pytest.mark.parametrize("frames", [1, 2])
@pytest.mark.parametrize("delta", [-1, 1])
def test_zstd_page_of_another_size_than_promised_is_corrupt(frames: int, delta: int) -> None:
    payload = b"abc" * 10_000
    comp = ARROW_ZSTD.compress(payload, asbytes=True) * frames
    codec = compression.codec_by_name("zstd")
    assert bytes(compression.decompress(codec, comp, frames * len(payload))) == payload * frames
    with pytest.raises(CorruptFileError):
        compression.decompress(codec, comp, frames * len(payload) + delta)
    if frames == 2:  # the first frame states exactly the promise; the second one is a bomb
        with pytest.raises(CorruptFileError, match="inflates past"):
            compression.decompress(codec, comp, len(payload))


# -- zstd pages against Arrow's zstd: frames with and without a stated size, corrupt frames --------------

def _zstd_frame(payload: bytes, level: int, stated: bool) -> bytes:
    """One zstd frame of ``payload`` by Arrow's bundled libzstd (it states the content size), or by a
    streaming compressor (cramjam's: no stated size, as streaming writers emit)."""
    if stated:
        return ARROW_ZSTD.compress(payload, asbytes=True)  # type: ignore[no-any-return]
    c = cramjam.zstd.Compressor(level=level)
    c.compress(payload)
    return bytes(c.finish())


def _zstd_outcome(data: bytes, size: int) -> object:
    try:
        return bytes(compression.decompress(compression.codec_by_name("zstd"), data, size))
    except CorruptFileError as exc:
        return CorruptFileError, "inflates past" in str(exc)


@settings(max_examples=150, deadline=None)
@given(payload=st.binary(max_size=3000), level=st.integers(1, 9), frames=st.integers(1, 3), stated=st.booleans(),
       cut=st.integers(0, 40), flip=st.lists(st.tuples(st.integers(0, 10_000), st.integers(1, 255)), max_size=3),
       delta=st.sampled_from([0, 0, 0, -1, 1, -100]))
def test_zstd_pages_read_as_arrow_reads_them(payload: bytes, level: int, frames: int, stated: bool, cut: int,
                                             flip: list[tuple[int, int]], delta: int) -> None:
    frame = _zstd_frame(payload, level, stated)
    data = bytearray(frame * frames)
    if cut:  # truncated
        del data[max(len(data) - cut, 0):]
    for pos, x in flip:  # corrupted
        if data:
            data[pos % len(data)] ^= x
    size = max(len(payload) + delta, 0)
    got = _zstd_outcome(bytes(data), size)
    if not cut and not flip and delta == 0 and frames == 1:
        assert got == payload
        assert got == ARROW_ZSTD.decompress(bytes(data), size, asbytes=True)
    elif frames > 1 and not cut and not flip and delta == 0 and payload:
        assert got == (CorruptFileError, True)  # the second frame is past the promise
    elif isinstance(got, bytes):  # a page read whole is the promised size, and Arrow reads the same bytes
        assert len(got) == size
        try:
            want = ARROW_ZSTD.decompress(bytes(data), size, asbytes=True)
        except (OSError, pa.ArrowException):
            return  # (Arrow refuses what pqbloom's size checks accept only in their error)
        assert got == want


def test_zstd_reads_a_view_of_the_chunk() -> None:
    # pages reach the codec as views into the chunk's bytes, not copies
    payload = bytes(range(256)) * 500
    frame = _zstd_frame(payload, 3, True)
    chunk = b"header" + frame + b"next page"
    view = memoryview(chunk)[6:6 + len(frame)]
    assert bytes(compression.decompress(compression.codec_by_name("zstd"), view, len(payload))) == payload


@settings(max_examples=40, deadline=None)
@given(sizes=st.lists(st.integers(compression._SMALL, 3 * compression._SMALL), min_size=2, max_size=8),
       keep=st.lists(st.booleans(), min_size=8, max_size=8), codec=st.sampled_from(["snappy", "zstd"]))
def test_a_page_buffer_is_taken_again_only_once_its_lease_is_released(sizes, keep, codec) -> None:
    """Pages decompress into the thread's spare buffer once the last page's lease is released: a page
    still viewed (its values are views of it) keeps its bytes, whatever decompresses after it."""
    c = compression.codec_by_name(codec)
    kept = []
    for i, size in enumerate(sizes):
        payload = bytes([i % 251 + 1]) * size
        out, lease = compression.decompress_leased(c, c.compress(payload), size)
        assert bytes(out) == payload and lease is not None
        view = np.frombuffer(out, np.uint8)  # as PLAIN numeric values are
        if keep[i]:
            kept.append((view, payload))
            assert not lease.release_unless_viewed(view)
        else:
            assert lease.release_unless_viewed(view.copy())
        del out, view
    for view, payload in kept:
        assert view.tobytes() == payload


def test_a_released_page_buffer_takes_the_next_page() -> None:
    c = compression.codec_by_name("snappy")
    payload = b"x" * (4 * compression._SMALL)
    first, lease = compression.decompress_leased(c, c.compress(payload), len(payload))
    address = np.frombuffer(first, np.uint8).ctypes.data
    assert lease is not None
    lease.release()
    second, _ = compression.decompress_leased(c, c.compress(payload), len(payload))
    assert np.frombuffer(second, np.uint8).ctypes.data == address  # no new allocation per page


def test_a_page_its_caller_owns_is_never_a_reused_buffer() -> None:
    c = compression.codec_by_name("snappy")
    payload = b"y" * (4 * compression._SMALL)
    mine = compression.decompress(c, c.compress(payload), len(payload))
    other, lease = compression.decompress_leased(c, c.compress(payload), len(payload))
    assert lease is not None and not np.shares_memory(np.frombuffer(mine, np.uint8), np.frombuffer(other, np.uint8))
    lease.release()
    compression.decompress_leased(c, c.compress(b"z" * len(payload)), len(payload))[1].release()  # type: ignore[union-attr]
    assert bytes(mine) == payload
