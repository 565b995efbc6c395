"""The compiled snappy decompressor (pqbloom/_kernels/unsnappy.pyx) against cramjam's and Arrow's.

Blocks come from two independent compressors (cramjam's Rust ``snap`` and Arrow's bundled C++
snappy), of data shaped to reach every path of the decoder: literals of every length class, copies
from 1 to 15 bytes back (repeating patterns), near and far copies, 4-byte offsets (written by hand:
no compressor makes them for blocks under 64 KiB), outputs long enough for the probes that pick a
loop. Malformed blocks (mutated, truncated, lying about their length) must be rejected exactly when
cramjam rejects them, and an accepted block must give cramjam's bytes.
"""

from __future__ import annotations

import platform

import cramjam
import numpy as np
import pyarrow as pa
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pqbloom import compression, kernels
from pqbloom.errors import CorruptFileError

try:
    from pqbloom._kernels import unsnappy
except ImportError:  # the tests fail below (compiled() insists on the extension), not skip
    unsnappy = None

from .test_kernels import compiled

PROPS = settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
ARROW_SNAPPY = pa.Codec("snappy")


def _ours(block: bytes, size: int) -> bytes | None:
    """The kernel's output, or None when it rejects the block (called directly: the dispatch leaves
    machines without the selecting loop to cramjam, and the kernel must be right there too)."""
    out = bytearray(size)
    return bytes(out) if unsnappy.decompress_into(block, out) == 0 else None


def _cramjam(block: bytes, size: int) -> bytes | None:
    out = bytearray(size)
    try:
        if cramjam.snappy.decompress_raw_len(block) != size:
            return None
        n = cramjam.snappy.decompress_raw_into(block, out)
    except cramjam.DecompressionError:
        return None
    return bytes(out) if n == size else None


def _check_valid(data: bytes) -> None:
    for block in (bytes(cramjam.snappy.compress_raw(data)), ARROW_SNAPPY.compress(data, asbytes=True)):
        assert _ours(block, len(data)) == data


def _shaped(rng: np.random.Generator, n: int) -> bytes:
    """Text-like, numeric and repeating pieces back to back: every kind of element, mixed."""
    out = bytearray()
    while len(out) < n:
        kind = int(rng.integers(6))
        if kind == 0:  # a run of one short pattern (copies from 1 to 15 bytes back)
            out += bytes(rng.integers(0, 256, int(rng.integers(1, 16)), dtype=np.uint8)) * int(rng.integers(2, 40))
        elif kind == 1:  # incompressible (long literals)
            out += bytes(rng.integers(0, 256, int(rng.integers(1, 3000)), dtype=np.uint8))
        elif kind == 2:  # words from a small vocabulary (short copies and literals, no pattern)
            words = [b"alpha", b"be", b"gamma", b"delta!", b"epsilon", b"@example.com", b"https://"]
            out += b"".join(words[int(i)] for i in rng.integers(0, len(words), int(rng.integers(1, 200))))
        elif kind == 3:  # sorted int64 (copies 8 bytes back)
            out += np.cumsum(rng.integers(0, 50, int(rng.integers(1, 300)))).astype(np.int64).tobytes()
        elif kind == 4:  # fixed-width strings behind a length prefix (a regular literal/copy rhythm)
            for _ in range(int(rng.integers(1, 100))):
                out += b"\x10\x00\x00\x00" + bytes(rng.integers(48, 58, 16, dtype=np.uint8))
        else:  # a long copy of something far back
            if out:
                start = int(rng.integers(0, len(out)))
                out += out[start:start + int(rng.integers(1, 70_000))]
    return bytes(out[:n])


@PROPS
@given(st.binary(max_size=3000))
def test_random_bytes(data: bytes) -> None:
    _check_valid(data)


@PROPS
@given(st.integers(0, 2**32 - 1), st.sampled_from([0, 1, 15, 16, 17, 80, 100, 4000, 70_000, 300_000]))
def test_shaped_data(seed: int, n: int) -> None:
    _check_valid(_shaped(np.random.default_rng(seed), n))


@pytest.mark.parametrize("n", [0, 1, 15, 16, 17, 65, 66, 67, 79, 80, 81, 16 << 10, (64 << 10) + 7, (3 << 20) + 5])
def test_lengths_around_the_margins(n: int) -> None:
    rng = np.random.default_rng(n)
    _check_valid(_shaped(rng, n))
    _check_valid(bytes(n))
    _check_valid(bytes(rng.integers(0, 256, n, dtype=np.uint8)))


def _varint(n: int) -> bytes:
    out = bytearray()
    while True:
        out.append((n & 0x7F) | (0x80 if n > 0x7F else 0))
        n >>= 7
        if not n:
            return bytes(out)


def _literal(data: bytes) -> bytes:
    n = len(data) - 1
    if n < 60:
        return bytes([n << 2]) + data
    size = (n.bit_length() + 7) // 8
    return bytes([(59 + size) << 2]) + n.to_bytes(size, "little") + data


def _copy4(offset: int, length: int) -> bytes:
    return bytes([3 | ((length - 1) << 2)]) + offset.to_bytes(4, "little")


def test_four_byte_offsets_and_long_literal_lengths() -> None:
    """Elements no compressor writes for a small block: 4-byte offsets, and literal lengths in 1 to 4
    bytes, each decoded as cramjam decodes them."""
    rng = np.random.default_rng(7)
    head = bytes(rng.integers(0, 256, 300, dtype=np.uint8))
    body = _literal(head) + _copy4(300, 64) + _copy4(5, 20) + _copy4(1, 3)
    body += _literal(head[:61]) + _literal(bytes(range(256)) * 2) + _copy4(512, 33)
    body += bytes([0xF0, 99]) + bytes(100)  # a literal's length in one byte after the tag
    out_len = 300 + 64 + 20 + 3 + 61 + 512 + 33 + 100
    block = _varint(out_len) + body
    want = _cramjam(block, out_len)
    assert want is not None
    assert _ours(block, out_len) == want


def _mutate(rng: np.random.Generator, block: bytes) -> bytes:
    b = bytearray(block)
    for _ in range(int(rng.integers(1, 4))):
        op = int(rng.integers(4))
        if op == 0 and b:
            b[int(rng.integers(len(b)))] = int(rng.integers(256))
        elif op == 1 and b:
            b[int(rng.integers(len(b)))] ^= 1 << int(rng.integers(8))
        elif op == 2:
            b = b[:int(rng.integers(len(b) + 1))]
        else:
            b += bytes(rng.integers(0, 256, int(rng.integers(1, 9)), dtype=np.uint8))
    return bytes(b)


@PROPS
@given(st.integers(0, 2**32 - 1), st.sampled_from([20, 200, 5000, 100_000]), st.sampled_from([-1, 0, 0, 0, 1]))
def test_malformed_blocks_rejected_as_cramjam_rejects_them(seed: int, n: int, size_delta: int) -> None:
    rng = np.random.default_rng(seed)
    data = _shaped(rng, n)
    block = _mutate(rng, bytes(cramjam.snappy.compress_raw(data)))
    size = max(0, len(data) + size_delta)
    assert _ours(block, size) == _cramjam(block, size)


@pytest.mark.parametrize("block", [b"", b"\x80", b"\xff\xff\xff\xff\xff\x01", b"\x05\x01\x00", b"\x04\x0c\x01\x02",
                                   b"\x08\x00a\x05\x01", b"\x08\x00a\x06\x00\x00", b"\x04\x0c\x01\x02\x03\x04\x05"])
def test_hand_made_malformed_blocks(block: bytes) -> None:
    """A bad varint, a copy before the start or of offset 0, a block shorter or longer than it states."""
    for size in (0, 1, 4, 8):
        assert _ours(block, size) == _cramjam(block, size)


def test_a_corrupt_page_fails_with_the_same_error_in_both_modes() -> None:
    data = _shaped(np.random.default_rng(3), 50_000)
    block = bytearray(cramjam.snappy.compress_raw(data))
    block[len(block) // 2:] = b"\x0e\xff\xff" * ((len(block) - len(block) // 2) // 3) + b"\x00" * ((len(block) - len(block) // 2) % 3)
    codec = compression.codec_by_name("snappy")
    errors = []
    for mode in (True, False):
        with compiled(mode), pytest.raises(CorruptFileError) as exc:
            compression.decompress(codec, bytes(block), len(data))
        errors.append(str(exc.value))
    assert errors[0] == errors[1]


def test_the_codec_layer_uses_it_and_agrees_with_the_reference() -> None:
    data = _shaped(np.random.default_rng(11), 400_000)
    block = bytes(cramjam.snappy.compress_raw(data))
    codec = compression.codec_by_name("snappy")
    for mode in (True, False):
        with compiled(mode):
            assert bytes(compression.decompress(codec, block, len(data))) == data
            # the kernel is used where it has both loops (x86-64), and only with the compiled kernels
            assert kernels.snappy_decompress_into(block, bytearray(len(data))) is (mode and unsnappy.ADAPTIVE)
    assert platform.machine() not in ("x86_64", "AMD64") or unsnappy.ADAPTIVE


def test_reads_only_its_buffers() -> None:
    """Every byte of a numpy buffer of exactly the block's size (no terminating byte after it, as
    bytes objects have), truncated at every length near the end: rejected or decoded, never past."""
    data = _shaped(np.random.default_rng(5), 3000)
    block = bytes(cramjam.snappy.compress_raw(data))
    for cut in range(max(0, len(block) - 90), len(block) + 1):
        piece = np.frombuffer(block[:cut], np.uint8).copy()
        out = np.empty(len(data), np.uint8)
        ok = unsnappy.decompress_into(piece, out) == 0
        assert ok == (cut == len(block))
        if ok:
            assert out.tobytes() == data
