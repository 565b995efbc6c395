"""Page decompression writes each page once, into a buffer of the promised size."""

from __future__ import annotations

import tracemalloc

import numpy as np
import pytest
import zstandard

from pqbloom import compression
from pqbloom.errors import CorruptFileError

MB = 1 << 20


@pytest.mark.traces_memory
def test_zstd_page_decompresses_in_one_buffer_of_its_size() -> None:
    # 48 MiB of compressible data in one frame that states its size (as writers emit it): one buffer
    # of that size, not 1 MiB reads joined into a growing bytearray and then copied into bytes
    payload = np.resize(np.frombuffer(b"parquet page values 0123456789", np.uint8), 48 * MB).tobytes()
    comp = zstandard.ZstdCompressor(level=1).compress(payload)
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
    comp = zstandard.ZstdCompressor().compress(payload) * frames
    codec = compression.codec_by_name("zstd")
    assert bytes(compression.decompress(codec, comp, frames * len(payload))) == payload * frames
    with pytest.raises(CorruptFileError):
        compression.decompress(codec, comp, frames * len(payload) + delta)
    if frames == 2:  # the first frame states exactly the promise; the second one is a bomb
        with pytest.raises(CorruptFileError, match="inflates past"):
            compression.decompress(codec, comp, len(payload))
