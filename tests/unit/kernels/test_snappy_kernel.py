"""The compiled snappy compressor (pqbloom/_kernels/snappy.pyx) against independent decoders.

Its output must be ordinary snappy: cramjam and pyarrow (Arrow's bundled C++ snappy) decompress it
back to the input, at every length around the 64 KiB fragments and the 15-byte input margin, on
random, repetitive and incompressible data. The codec layer (``compression``) gives the same pages
in both kernel modes (cramjam compresses in the reference mode).
"""

from __future__ import annotations

import cramjam
import numpy as np
import pyarrow as pa
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pqbloom import compression, kernels

from .test_kernels import compiled

PROPS = settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
ARROW_SNAPPY = pa.Codec("snappy")


def _compress(data: bytes) -> bytes:
    with compiled(True):
        out = kernels.snappy_compress(data)
    assert out is not None
    return bytes(out)


def _check(data: bytes) -> bytes:
    comp = _compress(data)
    assert len(comp) <= 32 + len(data) + len(data) // 6  # the format's worst case
    assert bytes(cramjam.snappy.decompress_raw(comp)) == data
    assert ARROW_SNAPPY.decompress(comp, decompressed_size=len(data)).to_pybytes() == data
    return comp


def _text(rng: np.random.Generator, n: int, alphabet: int) -> bytes:
    words = [bytes(rng.integers(97, 97 + alphabet, rng.integers(1, 12), dtype=np.uint8)) for _ in range(50)]
    out = bytearray()
    while len(out) < n:
        out += words[int(rng.integers(len(words)))] + b" "
    return bytes(out[:n])


@PROPS
@given(st.binary(max_size=4000))
def test_random_bytes_round_trip(data: bytes) -> None:
    _check(data)


@PROPS
@given(seed=st.integers(0, 2**32 - 1), n=st.integers(0, 200_000), alphabet=st.integers(1, 26))
def test_repetitive_text_round_trips(seed: int, n: int, alphabet: int) -> None:
    _check(_text(np.random.default_rng(seed), n, alphabet))


@pytest.mark.parametrize("n", [*range(0, 40), 65_535, 65_536, 65_537, 65_536 + 14, 65_536 + 15, 65_536 + 16,
                               2 * 65_536 - 1, 3 * 65_536 + 7, 1 << 20])
@pytest.mark.parametrize("kind", ["zeros", "period3", "random", "text"])
def test_lengths_around_fragments_and_margins(n: int, kind: str) -> None:
    rng = np.random.default_rng(n)
    data = {"zeros": bytes(n), "period3": (b"abc" * (n // 3 + 1))[:n],
            "random": rng.integers(0, 256, n, dtype=np.uint8).tobytes(), "text": _text(rng, n, 5)}[kind]
    comp = _check(data)
    if kind in ("zeros", "period3") and n > 1000:
        assert len(comp) < n // 10  # it does compress
    if kind == "random" and n > 1000:
        assert len(comp) <= n + n // 50 + 16  # incompressible input costs only literal headers


def test_compresses_as_well_as_cramjam_on_strings() -> None:
    # the same algorithm family: on realistic text no more than cramjam's size (it is Arrow's 1.1.x
    # loop with a 2**15-entry table, which finds more matches)
    data = _text(np.random.default_rng(7), 1 << 20, 20)
    assert len(_compress(data)) <= len(cramjam.snappy.compress_raw(data))


@pytest.mark.parametrize("on", [True, False])
def test_codec_layer_in_both_modes(on: bool) -> None:
    data = _text(np.random.default_rng(3), 300_000, 8)
    codec = compression.codec_by_name("snappy")
    with compiled(on):
        comp = bytes(compression.compress(codec, memoryview(data)))
        assert (kernels.snappy_compress(data) is None) is (not on)
    assert bytes(compression.decompress(codec, comp, len(data))) == data
    assert ARROW_SNAPPY.decompress(comp, decompressed_size=len(data)).to_pybytes() == data
