"""The compiled kernels (pqbloom.kernels) against their numpy reference and independent oracles.

* Property tests (hypothesis): compiled == reference on random and adversarial inputs (truncated
  buffers, huge claimed lengths, negative lengths as int32, bit widths 0 and 32, runs crossing the
  end, indices out of range, empty inputs): the same results, or the same typed error with the same
  message. The reference is in turn checked against the encodings' public functions it mirrors.
* Oracle tests, run in both modes (the ``mode`` fixture): each kernel through the dispatch against
  an independent truth (the writer's encoders, Python's ``int.to_bytes``, ``sorted``, pyarrow).
"""

from __future__ import annotations

import struct
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

import numpy as np
import pyarrow as pa
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pqbloom import kernels
from pqbloom.arrays import BinaryArray
from pqbloom.encodings.bitpack import uleb128
from pqbloom.encodings.delta import common_prefix_lengths, decode_delta_byte_array, encode_delta_byte_array
from pqbloom.encodings.dictionary import take_dictionary
from pqbloom.encodings.plain import decode_plain_byte_array, encode_plain_byte_array
from pqbloom.encodings.rle import encode_rle_bitpacked
from pqbloom.errors import CorruptFileError, ParquetError
from pqbloom.kernels import binary as binary_kernels
from pqbloom.kernels import decimals as decimal_kernels
from pqbloom.kernels import hybrid as hybrid_kernels
from pqbloom.kernels import levels as level_kernels
from pqbloom.kernels.reference import binary as binary_reference
from pqbloom.kernels.reference import hybrid as hybrid_reference
from pqbloom.statistics import binary_argminmax

PROPS = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])


# -- harness --------------------------------------------------------------------------------------

@contextmanager
def compiled(on: bool) -> Iterator[None]:
    """Run the dispatch with the compiled kernels (on) or the reference (off)."""
    if on and not kernels.EXTENSION_BUILT:
        pytest.fail("the compiled kernels are not built: run `pip install -e .` (needs a C compiler)")
    saved = kernels.COMPILED
    kernels.COMPILED = on
    try:
        yield
    finally:
        kernels.COMPILED = saved


@pytest.fixture(params=["compiled", "reference"])
def mode(request: pytest.FixtureRequest) -> Iterator[str]:
    with compiled(request.param == "compiled"):
        yield request.param


def norm(x: Any) -> Any:
    """A comparable form of a kernel's result."""
    if isinstance(x, BinaryArray):
        return ("binary", x.to_pylist(), int(x.offsets[-1] - x.offsets[0]))
    if isinstance(x, np.ndarray):
        return ("array", x.dtype.str, x.shape, x.tobytes())
    if isinstance(x, tuple):
        return tuple(norm(v) for v in x)
    return x


def outcome(fn: Callable[..., Any], *args: Any) -> tuple[Any, ...]:
    """("ok", result) of ``fn(*args)``, or the error's type and message."""
    try:
        return ("ok", norm(fn(*args)))
    except (ParquetError, ValueError, TypeError) as e:
        return ("error", type(e).__name__, str(e))


def same(fn: Callable[..., Any], *args: Any) -> tuple[Any, ...]:
    """Run ``fn(*args)`` (which calls the dispatch) compiled and with the reference; assert they agree."""
    with compiled(True):
        got = outcome(fn, *args)
    with compiled(False):
        want = outcome(fn, *args)
    assert got == want
    return got


def binaries(max_len: int = 40, alphabet: bytes = b"ab\x00\xff\x7f\x80") -> st.SearchStrategy[list[bytes]]:
    small = st.binary(max_size=max_len)
    tight = st.lists(st.sampled_from(list(alphabet)), max_size=12).map(bytes)  # ties and prefixes
    return st.lists(st.one_of(small, tight), max_size=60)


def binary_array(values: list[bytes], lead: int = 0, tail: int = 0) -> BinaryArray:
    """A BinaryArray, optionally not compact (unused bytes before and after the values)."""
    b = BinaryArray.from_pylist(values)
    if not lead and not tail:
        return b
    data = np.concatenate([np.full(lead, 0xEE, np.uint8), b.data, np.full(tail, 0xDD, np.uint8)])
    return BinaryArray(b.offsets + lead, data)


@st.composite
def mutated(draw: st.DrawFn, data: bytes) -> bytes:
    """``data`` truncated, with bytes overwritten by interesting values, or extended."""
    b = bytearray(data)
    for _ in range(draw(st.integers(0, 3))):
        if not b:
            break
        i = draw(st.integers(0, len(b) - 1))
        b[i] = draw(st.sampled_from([0x00, 0x01, 0x7F, 0x80, 0xFF, 0xFE, 0x03, draw(st.integers(0, 255))]))
    if draw(st.booleans()):
        b = b[:draw(st.integers(0, len(b)))]
    if draw(st.integers(0, 4)) == 0:
        b += draw(st.binary(max_size=8))
    return bytes(b)


# -- 1. RLE / bit-packed hybrid -------------------------------------------------------------------

OUT_DTYPES = [np.int8, np.int16, np.int32, np.bool_]


def _fits(dtype: Any, bw: int) -> bool:
    return dtype in (np.int32, np.bool_) or bw < np.dtype(dtype).itemsize * 8


def hybrid_outcome(buf: bytes, bw: int, count: int, dtype: Any) -> tuple[Any, ...]:
    def run() -> tuple[np.ndarray, int]:
        out = np.full(max(count, 0) + 3, 0x55, dtype) if dtype != np.bool_ else np.ones(max(count, 0) + 3, bool)
        used = hybrid_kernels.decode_hybrid(buf, bw, count, out)
        return out[:count], used
    return same(run)


@st.composite
def hybrid_streams(draw: st.DrawFn) -> tuple[bytes, int, int]:
    """Hand-built runs: RLE and bit-packed, non-minimal varint headers, a last run short of its
    padding or cut anywhere, counts below and above what the runs hold."""
    bw = draw(st.sampled_from([0, 1, 2, 3, 4, 5, 7, 8, 9, 12, 15, 16, 17, 24, 31, 32]))
    vbytes = (bw + 7) // 8
    out = bytearray()
    total = 0
    for _ in range(draw(st.integers(0, 6))):
        if draw(st.booleans()):
            n = draw(st.integers(1, 40)) if draw(st.integers(0, 9)) else 0  # a run of 0 values is corrupt
            header = n << 1
            value = draw(st.integers(0, (1 << (8 * vbytes)) - 1)) if vbytes else 0
            body = value.to_bytes(vbytes, "little")
            total += n
        else:
            groups = draw(st.integers(1, 6)) if draw(st.integers(0, 9)) else 0
            header = groups << 1 | 1
            body = draw(st.binary(min_size=groups * bw, max_size=groups * bw))
            total += groups * 8
        h = uleb128(header)
        if draw(st.integers(0, 5)) == 0:  # a non-minimal varint: same value, more bytes
            h = bytes(b | 0x80 for b in h) + b"\x00"
        out += h + body
    data = draw(mutated(bytes(out))) if draw(st.booleans()) else bytes(out)
    count = draw(st.one_of(st.just(total), st.integers(0, total + 20)))
    return data, bw, count


@PROPS
@given(hybrid_streams(), st.sampled_from(OUT_DTYPES))
def test_hybrid_compiled_equals_reference(stream: tuple[bytes, int, int], dtype: Any) -> None:
    data, bw, count = stream
    if _fits(dtype, bw):
        hybrid_outcome(data, bw, count, dtype)


@PROPS
@given(st.binary(max_size=64), st.integers(0, 33), st.integers(-2, 300), st.sampled_from(OUT_DTYPES))
def test_hybrid_random_bytes(data: bytes, bw: int, count: int, dtype: Any) -> None:
    if _fits(dtype, bw):
        hybrid_outcome(data, bw, count, dtype)


def loop_decode_hybrid(buf: bytes, bw: int, count: int, dtype: Any) -> tuple[np.ndarray, int]:
    """An independent oracle: the hybrid decoded run by run in plain Python (the spec's layout, the
    run checks of Arrow's parser, the encodings' error messages)."""
    if bw == 0 or count == 0:
        return np.zeros(count, dtype), 0
    vbytes = (bw + 7) // 8
    vals: list[int] = []
    rle_max = -1
    pos = 0
    while len(vals) < count:
        if pos >= len(buf):
            raise CorruptFileError("RLE/bit-packed run header: truncated varint")
        start = pos
        # a run header is an unsigned 32-bit varint (at most 5 bytes), as parquet-java and Arrow read it
        header = 0
        for k in range(6):
            if k == 5:
                raise CorruptFileError("RLE/bit-packed run header: varint too long")
            if pos >= len(buf):
                raise CorruptFileError("RLE/bit-packed run header: truncated varint")
            header |= (buf[pos] & 0x7F) << (7 * k)
            pos += 1
            if not buf[pos - 1] & 0x80:
                break
        if header >> 32:
            raise CorruptFileError("RLE/bit-packed run header: varint too long")
        left = count - len(vals)
        if header & 1:
            groups = header >> 1
            if not groups:
                raise CorruptFileError(f"bit-packed run of 0 values at offset {start}")
            take = min(groups * 8, left)
            # the values wanted, and every group but the last whole (a final run may lack padding)
            need = (max(take, (groups - 1) * 8 + 1) * bw + 7) // 8
            if pos + need > len(buf):
                raise CorruptFileError(f"bit-packed run truncated: needs {need} bytes at offset {pos}, "
                                       f"have {len(buf) - pos}")
            bits = int.from_bytes(buf[pos:pos + need], "little")
            vals += [(bits >> (bw * j)) & ((1 << bw) - 1) for j in range(take)]
            pos = min(pos + groups * bw, len(buf))
        else:
            if not header >> 1:
                raise CorruptFileError(f"RLE run of 0 values at offset {start}")
            if pos + vbytes > len(buf):
                raise CorruptFileError("RLE run value truncated")
            v = int.from_bytes(buf[pos:pos + vbytes], "little")
            pos += vbytes
            take = min(header >> 1, left)
            rle_max = max(rle_max, v)
            vals += [v] * take
    if dtype in (np.int8, np.int16) and rle_max >> bw > 0:
        raise CorruptFileError(f"RLE run value {rle_max} does not fit {bw} bits")
    arr = np.array(vals, np.uint32)
    out = arr != 0 if dtype == np.bool_ else arr.view(np.int32) if dtype == np.int32 else arr.astype(dtype)
    return out, pos


@PROPS
@given(hybrid_streams(), st.sampled_from(OUT_DTYPES))
def test_hybrid_reference_equals_plain_loop(stream: tuple[bytes, int, int], dtype: Any) -> None:
    """The reference (the encodings' decoder) against the run-by-run oracle: values, bytes used, errors."""
    data, bw, count = stream
    if not _fits(dtype, bw):
        return
    def ref() -> tuple[np.ndarray, int]:
        out = np.empty(count, dtype)
        used = hybrid_reference.decode_hybrid(data, bw, count, out)
        return out, used
    assert outcome(ref) == outcome(loop_decode_hybrid, data, bw, count, dtype)


@pytest.mark.parametrize("bw", [1, 3, 8, 13, 24, 32])
def test_hybrid_every_truncation(bw: int) -> None:
    """A stream of RLE and bit-packed runs cut at every byte: the same values or the same error
    (off-by-one bounds show here: a run short of exactly one byte)."""
    rng = np.random.default_rng(bw)
    vbytes = (bw + 7) // 8
    runs = [uleb128(5 << 1) + (1).to_bytes(vbytes, "little"),
            uleb128(3 << 1 | 1) + rng.integers(0, 256, 3 * bw).astype(np.uint8).tobytes(),
            uleb128(200 << 1) + ((1 << bw) - 1).to_bytes(vbytes, "little"),
            uleb128(2 << 1 | 1) + rng.integers(0, 256, 2 * bw).astype(np.uint8).tobytes()]
    stream = b"".join(runs)
    for count in (5 + 24 + 200 + 16, 5 + 24 + 200 + 11):  # all values; the last group partly
        for cut in range(len(stream) + 1):
            hybrid_outcome(stream[:cut], bw, count, np.int32)


@pytest.mark.parametrize("bw", [0, 1, 2, 3, 7, 8, 13, 16, 20, 31, 32])
def test_hybrid_decodes_what_the_writer_encodes(mode: str, bw: int) -> None:
    rng = np.random.default_rng(bw)
    top = (1 << bw) - 1 if bw < 32 else (1 << 31) - 1
    vals = np.where(rng.random(5000) < 0.5, rng.integers(0, top + 1, 5000), 0)
    vals[1000:1400] = top  # a long RLE run
    vals = vals.astype(np.int64)
    enc = encode_rle_bitpacked(vals.astype(np.uint32).view(np.int32) if bw == 32 else vals, bw)
    out = np.empty(len(vals), np.int32)
    used = hybrid_kernels.decode_hybrid(enc + b"\xAA\xBB", bw, len(vals), out)
    assert used == (0 if bw == 0 else len(enc))
    assert np.array_equal(out.view(np.uint32) if bw == 32 else out, vals if bw else np.zeros_like(vals))


def test_hybrid_booleans_and_levels(mode: str) -> None:
    rng = np.random.default_rng(1)
    bits = rng.random(10_007) < 0.9
    enc = encode_rle_bitpacked(bits.view(np.uint8), 1)
    out = np.empty(len(bits), bool)
    assert hybrid_kernels.decode_hybrid(enc, 1, len(bits), out) == len(enc)
    assert np.array_equal(out, bits)
    levels = np.empty(len(bits), np.int8)
    hybrid_kernels.decode_hybrid(enc, 1, len(bits), levels)
    assert np.array_equal(levels, bits.astype(np.int8))


@pytest.mark.parametrize("data, message", [
    (b"", "truncated varint"),
    (b"\x80", "truncated varint"),
    (b"\xff" * 10 + b"\x01", "varint too long"),
    # 2 groups of 3 bits: the 8 values wanted and a value of the second group need 4 bytes
    (b"\x05\x01", "bit-packed run truncated: needs 4 bytes at offset 1, have 1"),
    (b"\x10", "RLE run value truncated"),
    # run headers are unsigned 32-bit varints: a sixth byte, or bits past 32, are not one
    (b"\x80" * 5 + b"\x01", "varint too long"),
    (b"\x80\x80\x80\x80\x10\x01", "varint too long"),
    # a run of 0 values makes no progress (Impala's bad_rle_literal_count.parquet: 0 groups)
    (b"\x01\x24\x00", "bit-packed run of 0 values at offset 0"),
    (b"\x00\x01\x10\x01", "RLE run of 0 values at offset 0"),
    (b"\x04\x01\x81\x80\x00\x07", "bit-packed run of 0 values at offset 2"),
])
def test_hybrid_corrupt_input(mode: str, data: bytes, message: str) -> None:
    with pytest.raises(CorruptFileError, match=message):
        hybrid_kernels.decode_hybrid(data, 3, 8, np.empty(8, np.int32))


def test_hybrid_huge_run_counts_are_capped(mode: str) -> None:
    # RLE runs of up to 2**31-1 values (the most a 32-bit header holds): only the values wanted are
    # produced (pyarrow reads these too)
    for header in (uleb128((2**31 - 1) << 1), bytes([0xFE, 0xFF, 0xFF, 0xFF, 0x0F])):
        out = np.empty(5, np.int32)
        assert hybrid_kernels.decode_hybrid(header + b"\x04", 3, 5, out) == len(header) + 1
        assert out.tolist() == [4] * 5
    # a final bit-packed run may lack its last group's padding: 2 groups, 9 values of 3 bits present
    out = np.empty(8, np.int32)
    assert hybrid_kernels.decode_hybrid(uleb128(2 << 1 | 1) + b"\xff\xff\xff\x07", 3, 8, out) == 5
    assert out.tolist() == [7] * 8


def test_hybrid_runs_the_input_cannot_hold(mode: str) -> None:
    """A bit-packed run claiming more groups than the input holds (beyond the last group's padding)
    is corrupt even when the values wanted are there; a header past 32 bits is not a run header
    (pyarrow and DuckDB refuse both; the reader used to return the values)."""
    out = np.empty(8, np.int32)
    with pytest.raises(CorruptFileError, match="needs 4 bytes at offset 1, have 3"):
        hybrid_kernels.decode_hybrid(uleb128(2 << 1 | 1) + b"\xff\xff\xff", 3, 8, out)
    with pytest.raises(CorruptFileError, match="needs 805306366 bytes"):
        hybrid_kernels.decode_hybrid(uleb128(2**28 << 1 | 1) + b"\xff\xff\xff", 3, 8, out)
    for header in (uleb128((1 << 63) << 1), bytes([0xFE] * 9 + [0x7F]), uleb128(2**31 << 1)):
        with pytest.raises(CorruptFileError, match="varint too long"):
            hybrid_kernels.decode_hybrid(header + b"\x04", 3, 5, np.empty(5, np.int32))


def test_hybrid_value_wider_than_level(mode: str) -> None:
    with pytest.raises(CorruptFileError, match="RLE run value 9 does not fit 3 bits"):
        hybrid_kernels.decode_hybrid(b"\x10\x09", 3, 8, np.empty(8, np.int8))
    out = np.empty(8, np.int32)  # indices keep the value (the dictionary take checks it)
    hybrid_kernels.decode_hybrid(b"\x10\x09", 3, 8, out)
    assert out.tolist() == [9] * 8


def test_hybrid_bad_calls(mode: str) -> None:
    with pytest.raises(CorruptFileError, match="bit width 33"):
        hybrid_kernels.decode_hybrid(b"\x02\x01", 33, 1, np.empty(1, np.int32))
    with pytest.raises(CorruptFileError, match="invalid value count -1"):
        hybrid_kernels.decode_hybrid(b"\x02\x01", 3, -1, np.empty(1, np.int32))
    with pytest.raises(ValueError, match="do not fit"):
        hybrid_kernels.decode_hybrid(b"\x02\x01", 8, 1, np.empty(1, np.int8))
    with pytest.raises(ValueError, match="int8, int16, int32 or bool"):
        hybrid_kernels.decode_hybrid(b"\x02\x01", 3, 1, np.empty(1, np.int64))
    with pytest.raises(ValueError, match="output of 1 values"):
        hybrid_kernels.decode_hybrid(b"\x04\x01", 3, 2, np.empty(1, np.int32))


# -- 1b. a data page's levels in one call ----------------------------------------------------------

@st.composite
def level_pages(draw: st.DrawFn) -> tuple[bytes, int, int, int, int, int, Any]:
    """A data page's level blocks (v1: each a 4-byte length then the hybrid; v2: stated lengths),
    value bytes after them; sometimes mutated, counts below and above what the blocks hold."""
    rep_bw = draw(st.sampled_from([0, 0, 1, 2, 3]))
    def_bw = draw(st.sampled_from([0, 1, 1, 2, 3, 7, 8, 9]))
    dtype = np.int8 if max(rep_bw, def_bw) <= 7 else draw(st.sampled_from([np.int16, np.int32]))
    n = draw(st.integers(0, 150))
    blocks = []
    for bw in (rep_bw, def_bw):
        if not bw:
            blocks.append(b"")
            continue
        vals = draw(st.lists(st.integers(0, (1 << bw) - 1), min_size=n, max_size=n))
        run = draw(st.sampled_from([1, 10]))
        blocks.append(encode_rle_bitpacked(np.repeat(np.array(vals, np.int64), run)[:n], bw))
    v2 = draw(st.booleans())
    tail = draw(st.binary(max_size=6))
    if v2:
        data, rl, dl = blocks[0] + blocks[1] + tail, len(blocks[0]), len(blocks[1])
    else:
        data, rl, dl = b"".join(len(b).to_bytes(4, "little") + b for b in blocks if b) + tail, -1, -1
    if draw(st.booleans()):
        data = draw(mutated(data))
        if v2 and rl + dl > len(data):  # the page reader checks the stated lengths first
            rl, dl = 0, len(data)
    count = draw(st.one_of(st.just(n), st.integers(0, n + 20)))
    return data, count, rep_bw, def_bw, rl, dl, dtype


def page_levels_run(data: bytes, count: int, rep_bw: int, def_bw: int, rl: int, dl: int,
                    dtype: Any) -> tuple[Any, ...]:
    reps, defs = np.full(count, 0x55, dtype), np.full(count, 0x55, dtype)
    used, present = hybrid_kernels.page_levels(data, count, rep_bw, def_bw, rl, dl, reps if rep_bw else None,
                                        defs if def_bw else None, (1 << def_bw) - 1)
    return (reps if rep_bw else None), (defs if def_bw else None), used, present


@PROPS
@given(level_pages())
def test_page_levels_compiled_equals_reference(page: tuple[bytes, int, int, int, int, int, Any]) -> None:
    same(page_levels_run, *page)


@PROPS
@given(level_pages())
def test_page_levels_equal_the_per_block_decoders(page: tuple[bytes, int, int, int, int, int, Any]) -> None:
    # oracle: each block decoded on its own by the encodings' public decoders (as pages were before)
    from pqbloom.encodings import decode_levels_v1, decode_rle_bitpacked
    data, count, rep_bw, def_bw, rl, dl, dtype = page

    def blocks() -> tuple[Any, ...]:
        pos, out = 0, []
        for bw, stated in ((rep_bw, rl), (def_bw, dl)):
            if not bw:
                out.append(None)
                pos += max(stated, 0)
            elif stated < 0:
                lv, used = decode_levels_v1(memoryview(data)[pos:], bw, count, dtype)
                out.append(lv)
                pos += used
            else:
                out.append(decode_rle_bitpacked(data[pos:pos + stated], bw, count, dtype))
                pos += stated
        present = count if out[1] is None else int(np.count_nonzero(out[1] == (1 << def_bw) - 1))
        return out[0], out[1], (rl + dl if rl >= 0 else pos), present

    for on in (True, False):
        with compiled(on):
            assert outcome(page_levels_run, *page) == outcome(blocks)


def test_page_levels_errors(mode: str) -> None:
    def call(data: bytes, rep_bw: int, def_bw: int, count: int = 8) -> tuple[int, int]:
        return hybrid_kernels.page_levels(data, count, rep_bw, def_bw, -1, -1, np.empty(count, np.int8),
                                   np.empty(count, np.int8), (1 << def_bw) - 1)
    with pytest.raises(CorruptFileError, match="no length prefix"):
        call(b"\x02\x00", 0, 1)
    with pytest.raises(CorruptFileError, match="level data length 9 exceeds the 2 bytes available"):
        call(b"\x09\x00\x00\x00\x10\x01", 0, 1)
    good = b"\x02\x00\x00\x00\x10\x01"  # 8 levels of 1
    assert call(good + good, 1, 1) == (12, 8)
    with pytest.raises(CorruptFileError, match="no length prefix"):
        call(good + b"\x02", 1, 1)  # the definition block lacks its prefix
    # a value too wide names the bit width of the block it is in
    wide = b"\x02\x00\x00\x00\x10\x05"
    with pytest.raises(CorruptFileError, match="RLE run value 5 does not fit 1 bits"):
        call(wide + good, 1, 2)
    with pytest.raises(CorruptFileError, match="RLE run value 5 does not fit 2 bits"):
        call(good + wide, 1, 2)
    with pytest.raises(ValueError):
        hybrid_kernels.page_levels(good, 8, 0, 1, 3, -1, None, np.empty(8, np.int8), 1)  # one v2 length only


@pytest.mark.parametrize("args", [
    (8, 0, 8, -1, -1, np.int8),  # 8-bit levels do not fit int8
    (8, 0, 3, -1, -1, np.int64),  # not a level dtype
    (8, 0, 3, -1, -1, np.bool_),
    (-1, 0, 3, -1, -1, np.int8),  # a negative count
    (8, 33, 3, -1, -1, np.int32),  # a bit width past 32
    (8, 0, 3, 5, 9, np.int8),  # v2 blocks longer than the page
    (1 << 40, 0, 3, -1, -1, np.int8),  # a count past 2**31 - 1
])
def test_page_levels_bad_calls_same_message(args: tuple[Any, ...]) -> None:
    count, rep_bw, def_bw, rl, dl, dt = args

    def run() -> tuple[int, int]:
        out = np.zeros(max(min(count, 64), 0), dt)
        return hybrid_kernels.page_levels(b"\x02\x00\x00\x00\x10\x01", count, rep_bw, def_bw, rl, dl, out, out, 1)
    got = same(run)
    assert got[0] == "error" and got[1] == "ValueError"


# -- 2. PLAIN BYTE_ARRAY decode -------------------------------------------------------------------

def plain_bytes(values: list[bytes]) -> bytes:
    return b"".join(struct.pack("<I", len(v)) + v for v in values)


@st.composite
def plain_pages(draw: st.DrawFn) -> tuple[bytes, int]:
    values = draw(binaries())
    data = plain_bytes(values)
    choice = draw(st.integers(0, 3))
    if choice == 1:
        data = draw(mutated(data))
    elif choice == 2 and values:  # a hostile length prefix: huge, or negative as int32
        k = draw(st.integers(0, len(values) - 1))
        pos = sum(4 + len(v) for v in values[:k])
        bad = draw(st.sampled_from([0xFFFFFFFF, 0x80000000, 0x7FFFFFFF, len(data), len(data) - pos - 3]))
        data = data[:pos] + struct.pack("<I", bad & 0xFFFFFFFF) + data[pos + 4:]
    count = draw(st.one_of(st.just(len(values)), st.integers(0, len(values) + 3)))
    return data, count


@PROPS
@given(plain_pages())
def test_plain_decode_compiled_equals_reference(page: tuple[bytes, int]) -> None:
    data, count = page
    same(binary_kernels.decode_plain_byte_array, data, count)
    # the reference is the encodings' decoder
    assert outcome(binary_reference.decode_plain_byte_array, data, count) == \
        outcome(decode_plain_byte_array, data, count)


def test_plain_decode_every_truncation_and_boundary_length() -> None:
    values = [b"abc", b"", b"hello world", b"\xff"]
    page = plain_bytes(values)
    for cut in range(len(page) + 1):
        for count in (len(values) - 1, len(values)):
            same(binary_kernels.decode_plain_byte_array, page[:cut], count)
    pos = 0
    for k, v in enumerate(values):  # each length prefix claiming one byte less, the exact rest, one byte more
        rest = len(page) - pos - 4
        for claim in (rest - 1, rest, rest + 1, rest + 2):
            bad = page[:pos] + struct.pack("<I", claim) + page[pos + 4:]
            for count in range(k, len(values) + 1):
                same(binary_kernels.decode_plain_byte_array, bad, count)
        pos += 4 + len(v)


def test_plain_decode(mode: str) -> None:
    values = [b"", b"a", b"hello" * 20, b"\x00\xff"] * 50
    page = plain_bytes(values) + b"trailing"
    got, used = binary_kernels.decode_plain_byte_array(np.frombuffer(page, np.uint8), len(values))
    assert got.to_pylist() == values and used == len(page) - 8
    with pytest.raises(CorruptFileError, match=r"length prefix past the end of the 8-byte page \(value 1\)"):
        binary_kernels.decode_plain_byte_array(b"\x01\x00\x00\x00a\x05\x00\x00", 2)
    with pytest.raises(CorruptFileError, match="last value runs 4294967292 bytes past the end"):
        binary_kernels.decode_plain_byte_array(b"\xff\xff\xff\xff\x00\x00\x00", 1)
    with pytest.raises(CorruptFileError, match="3 values need at least 12 bytes"):
        binary_kernels.decode_plain_byte_array(b"\x00" * 11, 3)
    assert binary_kernels.decode_plain_byte_array(b"", 0)[0].to_pylist() == []


def plain_into(data: bytes, count: int, spare_offsets: int, capacity: int, base: int) -> tuple[Any, ...]:
    """decode_plain_byte_array_into fresh buffers (filled with a marker): its result and what it wrote."""
    offsets = np.full(max(count + 1 + spare_offsets, 0), -7, np.int64)
    out = np.full(capacity, 0xAB, np.uint8)
    got = binary_kernels.decode_plain_byte_array_into(data, count, offsets, out, base)
    if got is None:
        return (None,)
    size, used = got
    return (size, used, offsets[:count + 1].tolist(), out[:size].tobytes())


@PROPS
@given(plain_pages(), st.integers(-2, 2), st.integers(0, 400), st.integers(0, 2**40))
def test_plain_decode_into_compiled_equals_reference(page: tuple[bytes, int], spare: int, capacity: int,
                                                     base: int) -> None:
    data, count = page
    got = same(plain_into, data, count, spare, capacity, base)
    # when the values fit, they are what decode_plain_byte_array returns, shifted by base
    whole = outcome(binary_reference.decode_plain_byte_array, data, count)
    if got[0] == "ok" and got[1] != (None,):
        size, used, offs, written = got[1]
        values = BinaryArray(np.array(offs, np.int64) - base, np.frombuffer(written, np.uint8))
        assert whole == ("ok", (norm(values), used))
    elif got[0] == "error":
        assert whole == got  # the same error as the ordinary decode, even where it would not fit
    else:  # None: too few offsets (checked first), or valid values that need more than the capacity
        assert spare < 0 or (whole[0] == "ok" and whole[1][0][2] > capacity)


def test_plain_decode_into(mode: str) -> None:
    values = [b"", b"a", b"hello" * 20, b"\x00\xff"] * 50
    page = plain_bytes(values) + b"trailing"
    size = sum(len(v) for v in values)
    offsets, data = np.zeros(len(values) + 1, np.int64), np.zeros(size, np.uint8)
    assert binary_kernels.decode_plain_byte_array_into(page, len(values), offsets, data, 1000) == (size, len(page) - 8)
    assert BinaryArray(offsets - 1000, data).to_pylist() == values
    # one byte short of room, or one offset short: None, the caller decodes the usual way
    assert binary_kernels.decode_plain_byte_array_into(page, len(values), offsets, data[:-1]) is None
    assert binary_kernels.decode_plain_byte_array_into(page, len(values), offsets[:-1], data) is None
    assert binary_kernels.decode_plain_byte_array_into(page, len(values), offsets.astype(np.int32), data) is None
    # a corrupt page is an error even where it would not fit
    with pytest.raises(CorruptFileError, match="last value runs 4294967292 bytes past the end"):
        binary_kernels.decode_plain_byte_array_into(b"\xff\xff\xff\xff\x00\x00\x00", 1, offsets, data[:0])


# -- 3. gather ------------------------------------------------------------------------------------

@PROPS
@given(binaries(), st.lists(st.integers(-3, 70), max_size=80), st.sampled_from([np.int32, np.int64, np.int16]),
       st.integers(0, 3), st.integers(0, 3))
def test_take_compiled_equals_reference(values: list[bytes], idx: list[int], dtype: Any, lead: int, tail: int) -> None:
    arr = binary_array(values, lead, tail)
    indices = np.array(idx, dtype)
    got = same(binary_kernels.take_binary, arr, indices)
    assert got == outcome(take_dictionary, arr, indices)  # what the dictionary decoder does today
    if got[0] == "ok":
        assert got[1][1] == [values[i] for i in idx]


def test_take_long_and_empty_values(mode: str) -> None:
    arr = BinaryArray.from_pylist([b"x" * 1000, b"", b"abc"])
    idx = np.array([0, 1, 2, 0, 1], np.int32)
    assert binary_kernels.take_binary(arr, idx).to_pylist() == [b"x" * 1000, b"", b"abc", b"x" * 1000, b""]
    with pytest.raises(CorruptFileError, match="dictionary index 3 out of range for a dictionary of 3 values"):
        binary_kernels.take_binary(arr, np.array([0, 3, 1], np.int32))
    with pytest.raises(CorruptFileError, match="dictionary index -1 out of range"):
        binary_kernels.take_binary(arr, np.array([5, -1], np.int64))
    with pytest.raises(CorruptFileError, match="dictionary of 0 values"):
        binary_kernels.take_binary(BinaryArray.from_pylist([]), np.array([0], np.int32))


# -- 4. null scatter ------------------------------------------------------------------------------

DENSE_KINDS = ["f8", "i4", "i8", "bool", "flba3", "flba0", "binary"]


def dense_values(kind: str, n: int, rng: np.random.Generator) -> Any:
    if kind == "binary":
        return binary_array([bytes(rng.integers(0, 256, rng.integers(0, 6)).astype(np.uint8)) for _ in range(n)], 2, 1)
    if kind.startswith("flba"):
        return rng.integers(0, 256, (n, int(kind[4:]))).astype(np.uint8)
    if kind == "bool":
        return rng.random(n) < 0.5
    return rng.integers(-1000, 1000, n).astype(kind)


def scatter_oracle(dense: Any, present: np.ndarray) -> Any:
    """The expected placement, value by value: dense values in the present slots, empty ones elsewhere."""
    it = iter(dense.to_pylist() if isinstance(dense, BinaryArray) else list(dense))
    if isinstance(dense, BinaryArray):
        return BinaryArray.from_pylist([next(it) if p else b"" for p in present.tolist()])
    out = np.zeros((len(present),) + dense.shape[1:], dense.dtype)
    for i in np.flatnonzero(present).tolist():
        out[i] = next(it)
    return out


@PROPS
@given(st.lists(st.integers(0, 3), max_size=70), st.integers(0, 4), st.sampled_from(["i1", "i2", "i4", "mask"]),
       st.sampled_from(DENSE_KINDS), st.integers(-1, 1), st.integers(0, 2**32 - 1))
def test_scatter_compiled_equals_reference(levels: list[int], max_level: int, ltype: str, kind: str, skew: int,
                                           seed: int) -> None:
    lv = np.array(levels, np.int8) == max_level if ltype == "mask" else np.array(levels, ltype)
    present = lv if ltype == "mask" else lv == max_level
    ndense = max(0, int(np.count_nonzero(present)) + skew)  # skew: too few or too many values
    dense = dense_values(kind, ndense, np.random.default_rng(seed))
    got = same(level_kernels.scatter_nulls, dense, lv, max_level, "leaf 'x'")
    if ndense == np.count_nonzero(present):
        assert got == ("ok", norm((scatter_oracle(dense, present), np.packbits(present, bitorder="little"))))
    else:
        assert got[:2] == ("error", "CorruptFileError")


def test_scatter_nulls_to_arrow(mode: str) -> None:
    """The values and bitmap are what Arrow expects (pyarrow builds the same array)."""
    rng = np.random.default_rng(5)
    defs = (rng.random(1001) < 0.9).astype(np.int16) + 1  # 1 = null, 2 = present
    present = defs == 2
    dense = rng.integers(0, 10**9, int(present.sum()))
    values, validity = level_kernels.scatter_nulls(dense, defs, 2)
    arr = pa.Array.from_buffers(pa.int64(), len(defs), [pa.py_buffer(validity), pa.py_buffer(values)])
    expect = np.full(len(defs), None, object)
    expect[present] = dense
    assert arr.to_pylist() == expect.tolist()
    strings = BinaryArray.from_pylist([b"v%d" % i for i in range(int(present.sum()))])
    svals, svalid = level_kernels.scatter_nulls(strings, defs, 2)
    sarr = pa.Array.from_buffers(pa.binary(), len(defs), [pa.py_buffer(svalid), pa.py_buffer(svals.offsets.astype(np.int32)),
                                                          pa.py_buffer(svals.data)])
    sexpect = np.full(len(defs), None, object)
    sexpect[present] = strings.to_pylist()
    assert sarr.to_pylist() == sexpect.tolist()


def test_scatter_object_values(mode: str) -> None:
    """Python objects are placed by numpy (copying their pointers in C would skip reference counts)."""
    dense = np.array([b"x", None, 3], object)
    values, validity = level_kernels.scatter_nulls(dense, np.array([1, 0, 1, 1], np.int8), 1)
    assert values.tolist() == [b"x", 0, None, 3] and validity.tolist() == [0b1101]


def test_scatter_count_mismatch(mode: str) -> None:
    with pytest.raises(CorruptFileError, match="leaf 'a': 2 defined levels but 3 values"):
        level_kernels.scatter_nulls(np.arange(3), np.array([1, 0, 1], np.int8), 1, "leaf 'a'")
    with pytest.raises(CorruptFileError, match="2 defined levels but 1 values"):
        level_kernels.scatter_nulls(BinaryArray.from_pylist([b"a"]), np.array([True, True]))


# -- 5. DELTA_BYTE_ARRAY prefix rebuild -----------------------------------------------------------

@PROPS
@given(binaries(max_len=30, alphabet=b"abc"))
def test_prefix_rebuild_of_encoded_values(values: list[bytes]) -> None:
    arr = BinaryArray.from_pylist(values)
    prefix = common_prefix_lengths(arr).astype(np.int32)
    suffixes = BinaryArray.from_pylist([v[p:] for v, p in zip(values, prefix.tolist())])
    got = same(binary_kernels.rebuild_prefixes, prefix, suffixes)
    assert got == ("ok", norm(arr))
    # and as the encodings' decoder rebuilds the encoded values
    decoded, _ = decode_delta_byte_array(encode_delta_byte_array(arr), len(values))
    assert norm(decoded) == got[1]


@PROPS
@given(st.lists(st.one_of(st.integers(-3, 12), st.sampled_from([2**31 - 1, -(2**31)])), max_size=40), st.data())
def test_prefix_rebuild_adversarial(prefix: list[int], data: st.DataObject) -> None:
    suffixes = binary_array(data.draw(st.lists(st.binary(max_size=5), min_size=len(prefix), max_size=len(prefix))),
                            data.draw(st.integers(0, 2)))
    p = np.array(prefix, np.int32)
    got = same(binary_kernels.rebuild_prefixes, p, suffixes)
    if got[0] == "error":
        assert got[1] == "CorruptFileError"


def test_prefix_rebuild_boundary_lengths() -> None:
    s = BinaryArray.from_pylist([b"abcd", b"x", b"", b"yz"])
    for i in range(1, 4):
        for p in range(-1, 7):
            prefix = np.array([0, 4, 5, 5], np.int32)
            prefix[i] = p
            same(binary_kernels.rebuild_prefixes, prefix, s)


def test_prefix_rebuild_errors(mode: str) -> None:
    s = BinaryArray.from_pylist([b"ab", b"c", b"d"])
    with pytest.raises(CorruptFileError, match="invalid prefix length"):
        binary_kernels.rebuild_prefixes(np.array([0, 5, -1], np.int32), s)  # negative wins over too long
    with pytest.raises(CorruptFileError, match="invalid prefix length"):
        binary_kernels.rebuild_prefixes(np.array([1, 0, 0], np.int32), s)
    with pytest.raises(CorruptFileError, match="prefix longer than the previous value"):
        binary_kernels.rebuild_prefixes(np.array([0, 2, 4], np.int32), s)
    assert binary_kernels.rebuild_prefixes(np.array([0, 2, 3], np.int32), s).to_pylist() == [b"ab", b"abc", b"abcd"]


# -- 6. list offsets ------------------------------------------------------------------------------

Lists = list[list[int | None] | None]


def list_levels(rows: Lists) -> tuple[np.ndarray, np.ndarray, list[int]]:
    """Levels of an optional list of optional ints (def 0 null list, 1 empty, 2 null element,
    3 value) and the expected offsets, written out by hand."""
    defs: list[int] = []
    reps: list[int] = []
    offsets = [0]
    for row in rows:
        if not row:
            defs.append(0 if row is None else 1)
            reps.append(0)
        for j, v in enumerate(row or []):
            defs.append(2 if v is None else 3)
            reps.append(0 if j == 0 else 1)
        offsets.append(offsets[-1] + len(row or []))
    return np.array(defs, np.int8), np.array(reps, np.int8), offsets


rows_strategy = st.lists(st.one_of(st.none(), st.lists(st.one_of(st.none(), st.integers()), max_size=4)), max_size=40)


@PROPS
@given(rows_strategy)
def test_list_offsets_of_written_levels(rows: Lists) -> None:
    defs, reps, offsets = list_levels(rows)
    got = same(level_kernels.list_offsets, defs, reps, 2)
    assert got == ("ok", norm(np.array(offsets, np.int64)))


@PROPS
@given(st.lists(st.one_of(st.none(), rows_strategy), max_size=8))
def test_list_offsets_innermost_of_two_levels(outer: list[Lists | None]) -> None:
    """list<list<int>>: the inner lists' slots are the outer elements (ctx_def 2, ctx_rep 1)."""
    defs: list[int] = []
    reps: list[int] = []
    offsets = [0]
    for rows in outer:
        if not rows:  # a null (def 0) or empty (def 1) outer list: no inner slot
            defs.append(0 if rows is None else 1)
            reps.append(0)
            continue
        d, r, _ = list_levels(rows)
        first = len(defs)
        defs += (d + 2).tolist()  # inner levels shifted by the outer list's 2
        reps += (np.where(r == 1, 2, 1)).tolist()
        reps[first] = 0
        for row in rows:
            offsets.append(offsets[-1] + len(row or []))
    got = same(level_kernels.list_offsets, np.array(defs, np.int16), np.array(reps, np.int16), 4, 2, 1)
    assert got == ("ok", norm(np.array(offsets, np.int64)))


@PROPS
@given(st.lists(st.tuples(st.integers(0, 4), st.integers(0, 2)), max_size=50), st.integers(0, 5), st.integers(0, 3),
       st.integers(0, 2), st.sampled_from(["i1", "i2", "i4"]))
def test_list_offsets_random_levels(levels: list[tuple[int, int]], elem_def: int, ctx_def: int, ctx_rep: int,
                                    dtype: str) -> None:
    defs = np.array([d for d, _ in levels], dtype)
    reps = np.array([r for _, r in levels], "i4" if dtype == "i1" else dtype)  # mixed types too
    got = same(level_kernels.list_offsets, defs, reps, elem_def, ctx_def, ctx_rep)
    if got[0] == "error":
        assert got[1:] == ("CorruptFileError", "list: elements before the first slot")


# -- 7. write path --------------------------------------------------------------------------------

@PROPS
@given(binaries(), st.integers(0, 3))
def test_argminmax(values: list[bytes], lead: int) -> None:
    arr = binary_array(values, lead, 1)
    got = same(binary_kernels.binary_argminmax, arr)
    if not values:
        assert got[:2] == ("error", "ValueError")
        return
    # the first smallest and first largest value, in Python's bytes order
    assert got == ("ok", (values.index(min(values)), values.index(max(values))))
    assert got[1] == binary_argminmax(arr)


@PROPS
@given(st.integers(1, 30), st.integers(0, 9), st.integers(0, 2**32 - 1))
def test_argminmax_matrix(n: int, w: int, seed: int) -> None:
    mat = np.random.default_rng(seed).integers(0, 3, (n, w)).astype(np.uint8)
    got = same(binary_kernels.binary_argminmax, mat)
    rows = [bytes(r) for r in mat]
    assert got == ("ok", (rows.index(min(rows)), rows.index(max(rows)))) == ("ok", binary_argminmax(mat))


@PROPS
@given(binaries(), st.integers(0, 3), st.integers(0, 3))
def test_plain_encode(values: list[bytes], lead: int, tail: int) -> None:
    arr = binary_array(values, lead, tail)
    got = same(binary_kernels.encode_plain_byte_array, arr)
    assert got == ("ok", plain_bytes(values)) == ("ok", encode_plain_byte_array(arr))


def shared_heads() -> st.SearchStrategy[list[bytes]]:
    """Values with long common heads (URLs, paths) and lengths around the kernels' 8-byte words and
    32-byte copy steps, past the 128 bytes copied in steps."""
    heads = st.sampled_from([b"", b"https://", b"https://www.example.org/", b"\xff" * 20, b"a" * 64, b"a" * 127])
    tail = st.lists(st.sampled_from(list(b"ab\x00\xff\x7f\x80")), max_size=80).map(bytes)
    return st.lists(st.tuples(heads, tail).map(lambda ht: ht[0] + ht[1]), max_size=40)


@PROPS
@given(shared_heads(), st.integers(0, 3))
def test_argminmax_shared_heads(values: list[bytes], lead: int) -> None:
    # the compiled comparison goes word by word past the first 8 bytes
    arr = binary_array(values, lead, 1)
    got = same(binary_kernels.binary_argminmax, arr)
    if values:
        assert got == ("ok", (values.index(min(values)), values.index(max(values))))


@PROPS
@given(shared_heads(), st.integers(0, 3), st.integers(0, 40))
def test_plain_encode_long_values(values: list[bytes], lead: int, tail: int) -> None:
    # values up to and past 128 bytes, copied in 32-byte steps near the end of either buffer or not
    arr = binary_array(values, lead, tail)
    got = same(binary_kernels.encode_plain_byte_array, arr)
    assert got == ("ok", plain_bytes(values)) == ("ok", encode_plain_byte_array(arr))


def test_plain_encode_type_error(mode: str) -> None:
    with pytest.raises(TypeError, match="must be a BinaryArray"):
        binary_kernels.encode_plain_byte_array([b"a"])  # type: ignore[arg-type]


# -- 8. decimals ----------------------------------------------------------------------------------

def le_bytes(v: int, width: int) -> bytes:
    return v.to_bytes(width, "little", signed=True)


@PROPS
@given(st.lists(st.integers(-(2**140), 2**140), max_size=30), st.integers(0, 40), st.sampled_from([16, 32]))
def test_decimal_fixed(values: list[int], w: int, width: int) -> None:
    fits = [v for v in values if -(2 ** (8 * w - 1)) <= v < 2 ** (8 * w - 1)] if w else [0] * len(values)
    mat = np.array([list(v.to_bytes(w, "big", signed=True)) for v in fits], np.uint8).reshape(len(fits), w)
    got = same(decimal_kernels.decimal_buffer, mat, width)
    ok = [v for v in fits if -(2 ** (8 * width - 1)) <= v < 2 ** (8 * width - 1)]
    if len(ok) == len(fits):
        assert got == ("ok", norm(np.frombuffer(b"".join(le_bytes(v, width) for v in fits), np.uint8)))
    else:
        first = next(i for i, v in enumerate(fits) if v not in ok)
        assert got == ("error", "CorruptFileError", f"DECIMAL value {first} of {w} bytes does not fit {width} bytes")


@PROPS
@given(st.lists(st.tuples(st.integers(-(2**300), 2**300), st.integers(0, 3)), max_size=30), st.sampled_from([16, 32]))
def test_decimal_binary(values: list[tuple[int, int]], width: int) -> None:
    """Variable lengths: minimal big-endian bytes plus 0..3 bytes of sign extension (0 is b"")."""
    raw = []
    for v, pad in values:
        n = (v.bit_length() + 8) // 8 if v else 0
        raw.append(v.to_bytes(n + pad, "big", signed=True))
    arr = binary_array(raw, 1, 2)
    got = same(decimal_kernels.decimal_buffer, arr, width)
    fits = [-(2 ** (8 * width - 1)) <= v < 2 ** (8 * width - 1) for v, _ in values]
    if all(fits):
        assert got == ("ok", norm(np.frombuffer(b"".join(le_bytes(v, width) for v, _ in values), np.uint8)))
    else:
        i = fits.index(False)
        assert got == ("error", "CorruptFileError", f"DECIMAL value {i} of {len(raw[i])} bytes does not fit {width} bytes")


@PROPS
@given(st.lists(st.integers(-(2**63), 2**63 - 1), max_size=30), st.sampled_from([16, 32]), st.booleans())
def test_decimal_ints(values: list[int], width: int, narrow: bool) -> None:
    if narrow:
        values = [v >> 32 for v in values]
    a = np.array(values, np.int32 if narrow else np.int64)
    got = same(decimal_kernels.decimal_buffer, a, width)
    assert got == ("ok", norm(np.frombuffer(b"".join(le_bytes(v, width) for v in values), np.uint8)))


def test_decimal_buffer_is_arrow_decimal(mode: str) -> None:
    import decimal

    vals = [-(10**37) + 7, 0, 12345, -1, 10**37]
    raw = BinaryArray.from_pylist([v.to_bytes(17, "big", signed=True) for v in vals])
    buf = decimal_kernels.decimal_buffer(raw, 16)
    arr = pa.Array.from_buffers(pa.decimal128(38, 2), len(vals), [None, pa.py_buffer(buf)])
    ctx = decimal.Context(prec=50)
    assert arr.to_pylist() == [ctx.create_decimal(v).scaleb(-2, ctx) for v in vals]
    with pytest.raises(TypeError, match="decimal values"):
        decimal_kernels.decimal_buffer(np.zeros(3, np.float64), 16)
    with pytest.raises(ValueError, match="16 or 32"):
        decimal_kernels.decimal_buffer(np.zeros(3, np.int64), 8)


def test_decimal_buffer_writes_where_the_caller_says() -> None:
    # the caller's buffer (a pooled one, in table/outputs.py) is the result, and a wrong one is refused
    given = []

    def empty(nbytes: int) -> np.ndarray:
        given.append(np.empty(nbytes, np.uint8))
        return given[-1]

    rows = np.array([list((-5).to_bytes(7, "big", signed=True)), list((2**54 + 3).to_bytes(7, "big", signed=True))],
                    np.uint8)
    got = decimal_kernels.decimal_buffer(rows, 16, empty=empty)
    if decimal_kernels.compiled_module("decimals") is not None:
        assert got is given[0]
    assert got.tobytes() == le_bytes(-5, 16) + le_bytes(2**54 + 3, 16)
    if decimal_kernels.compiled_module("decimals") is not None:
        with pytest.raises(ValueError, match="writable contiguous"):
            decimal_kernels.decimal_buffer(rows, 16, empty=lambda n: np.empty(n - 1, np.uint8))


# -- the modes --------------------------------------------------------------------------------------

def test_pure_python_switch() -> None:
    """PQBLOOM_PURE_PYTHON=1 selects the reference at import; otherwise the extension is used when built."""
    import os
    import subprocess
    import sys

    code = "import pqbloom.kernels as k; print(k.COMPILED, k.EXTENSION_BUILT)"
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(sys.path))
    pure = subprocess.run([sys.executable, "-c", code], env=dict(env, PQBLOOM_PURE_PYTHON="1"), capture_output=True,
                          text=True, check=True).stdout.split()
    default = subprocess.run([sys.executable, "-c", code], env={k: v for k, v in env.items()
                                                                if k != "PQBLOOM_PURE_PYTHON"},
                             capture_output=True, text=True, check=True).stdout.split()
    assert pure == ["False", str(kernels.EXTENSION_BUILT)]
    assert default == [str(kernels.EXTENSION_BUILT)] * 2


@pytest.mark.parametrize("dtype", [np.int8, np.int16, np.int32, np.int64, np.float64])
@pytest.mark.parametrize("pattern", ["random10", "random50", "blocks", "sparse"])
def test_scatter_long_runs_of_groups(mode: str, dtype: type, pattern: str) -> None:
    """Many 64-slot blocks (all present, all null, mixed) and a ragged tail: the values and bitmap
    numpy's own placement gives (the mixed blocks look each slot's value up by its rank in its group)."""
    rng = np.random.default_rng(len(pattern))
    n = 64 * 40 + 13
    present = {"random10": rng.random(n) > 0.1, "random50": rng.random(n) > 0.5,
               "blocks": np.repeat(rng.random(n // 64 + 1) > 0.5, 64)[:n],
               "sparse": rng.random(n) > 0.97}[pattern]
    dense = rng.integers(-100, 100, int(present.sum())).astype(dtype)
    for levels in (present, present.astype(np.int16) + 1):
        values, validity = level_kernels.scatter_nulls(dense, levels, 1 if levels.dtype == np.bool_ else 2)
        want = np.zeros(n, dtype)
        want[present] = dense
        assert values.dtype == dtype and np.array_equal(values, want)
        assert np.array_equal(validity, np.packbits(present, bitorder="little"))
