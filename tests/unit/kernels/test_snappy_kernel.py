"""The compiled snappy compressor (pqbloom/_kernels/snappy.pyx) against independent decoders.

Its output must be ordinary snappy: cramjam and pyarrow (Arrow's bundled C++ snappy) decompress it
back to the input, at every length around the 64 KiB fragments and the 15-byte input margin, on
random, repetitive and incompressible data. The codec layer (``compression``) gives the same pages
in both kernel modes (cramjam compresses in the reference mode). PLAIN byte arrays encoded inside the
compressor give the very bytes of compressing the encoded page, which is built here independently.
"""

from __future__ import annotations

import struct
from pathlib import Path

import cramjam
import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import pqbloom
from pqbloom import compression, kernels
from pqbloom.arrays import BinaryArray

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


# -- PLAIN byte arrays encoded inside the compressor -------------------------------------------------

def _plain(values: list[bytes]) -> bytes:
    """PLAIN BYTE_ARRAY built here, independently of the encoders: a little-endian length, the bytes."""
    return b"".join(struct.pack("<I", len(v)) + v for v in values)


def _fused(head: bytes, values: BinaryArray) -> tuple[bytes, int]:
    with compiled(True):
        got = kernels.snappy_compress_plain_byte_array(head, values)
    assert got is not None
    return bytes(got[0]), got[1]


def _check_fused(head: bytes, items: list[bytes], lead: int = 0) -> None:
    b = BinaryArray.from_pylist(items)
    if lead:  # a slice of a larger buffer: offsets that do not start at 0
        b = BinaryArray(b.offsets + lead, np.concatenate([np.full(lead, 0xEE, np.uint8), b.data]))
    comp, size = _fused(head, b)
    want = head + _plain(items)
    assert size == len(want) - len(head)
    assert ARROW_SNAPPY.decompress(comp, decompressed_size=len(want)).to_pybytes() == want
    assert bytes(cramjam.snappy.decompress_raw(comp)) == want
    # byte for byte what compressing the encoded page gives (levels and values as two pieces)
    with compiled(True):
        whole = kernels.snappy_compress(head, want[len(head):]) if head else kernels.snappy_compress(want)
    assert whole is not None and bytes(whole) == comp


@PROPS
@given(items=st.lists(st.binary(max_size=300), max_size=300), head=st.binary(max_size=200), lead=st.integers(0, 3))
def test_plain_byte_arrays_compressed_as_encoded(items: list[bytes], head: bytes, lead: int) -> None:
    _check_fused(head, items, lead)


@pytest.mark.parametrize("lengths", [
    [65_532, 0, 5],  # the first value's 4 + 65,532 bytes end exactly at the first fragment's end
    [65_531, 7], [65_533, 7], [65_534, 1, 2],  # a length prefix cut by the fragment's end
    [200_000],  # one value over several fragments
    [0] * 20_000,  # only length prefixes
    [3] * 30_000 + [70_000] + [1] * 10,
])
def test_plain_values_cut_by_fragments(lengths: list[int]) -> None:
    rng = np.random.default_rng(len(lengths))
    items = [bytes(rng.integers(97, 100, n, dtype=np.uint8)) for n in lengths]
    _check_fused(b"", items)
    _check_fused(b"\x02\x00\x00\x00\x03\x07", items, lead=2)


def test_plain_in_compressor_refuses_bad_offsets() -> None:
    data = np.frombuffer(b"abcdef", np.uint8)
    with compiled(True):
        for offsets in ([0, 4, 2], [0, 7], [-1, 2]):
            with pytest.raises(ValueError, match="offsets decrease or reach outside the data"):
                kernels.snappy_compress_plain_byte_array(b"", BinaryArray(np.array(offsets, np.int64), data))
    with compiled(False):  # the reference mode encodes, then compresses with cramjam: not here
        assert kernels.snappy_compress_plain_byte_array(b"", BinaryArray.from_pylist([b"a"])) is None


@pytest.mark.parametrize("on", [True, False])
def test_written_long_strings_pyarrow_reads(on: bool, tmp_path: Path) -> None:
    # v1 pages of nullable PLAIN strings (levels, then values cut across fragments), snappy: encoded
    # inside the compressor when compiled, encoded then compressed by cramjam otherwise
    rng = np.random.default_rng(5)
    values: list[str | None] = [None if rng.random() < 0.1 else "x" * int(rng.choice([0, 3, 40, 70_000]))
                                + str(i) for i in range(3000)]
    path = tmp_path / "s.parquet"
    schema = pqbloom.Schema.from_types({"s": "string"})
    with compiled(on):
        pqbloom.write_table(pqbloom.Table.from_pydict({"s": values}, schema), path, use_dictionary=False,
                            data_page_size=1 << 20)
    meta = pq.read_metadata(path).row_group(0).column(0)
    assert meta.compression == "SNAPPY" and "PLAIN" in meta.encodings
    assert pq.read_table(path).column("s").to_pylist() == values
