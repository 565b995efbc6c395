"""The compiled DELTA_BINARY_PACKED decoder (pqbloom.kernels.delta.decode_delta_binary_packed) against its
numpy reference and an independent oracle.

* Property tests (hypothesis): compiled == reference (same values and bytes used, or the same
  typed error with the same message) on streams from the repo's encoder, on hand-built streams
  (mixed bit widths up to 64, 0-width miniblocks, unused miniblocks with garbage widths and no
  data, a last miniblock short of its padding, INT32 wrap, counts not a multiple of a miniblock),
  mutated and truncated.
* Oracle: hand-built streams decoded by :func:`oracle`, a bit-by-bit Python reading of the spec
  (Python ints, no numpy, nothing from pqbloom), in both modes.
* Adversarial inputs: every truncation of a small stream, huge counts under a memory budget,
  width 65, varints of 10 and 11 bytes.
"""

from __future__ import annotations

import io
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import pqbloom
from pqbloom.encodings.bitpack import uleb128
from pqbloom.encodings.delta import decode_delta_binary_packed, encode_delta_binary_packed
from pqbloom.errors import MemoryLimitError, ParquetError
from pqbloom.kernels import delta as delta_kernels
from pqbloom.limits import memory_budget
from tests.unit.kernels.test_kernels import compiled

PROPS = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
DTYPES = [np.int32, np.int64]
U64 = (1 << 64) - 1


def outcome(buf: Any, count: int | None, dtype: Any, limit: int | None = None) -> tuple[Any, ...]:
    try:
        with memory_budget(limit):
            vals, used = delta_kernels.decode_delta_binary_packed(buf, count, dtype)
        return ("ok", vals.dtype.str, vals.tolist(), used)
    except (ParquetError, ValueError, TypeError) as e:
        return ("error", type(e).__name__, str(e))


def same(buf: Any, count: int | None, dtype: Any, limit: int | None = None) -> tuple[Any, ...]:
    """Decode compiled and with the reference; assert they agree; return the outcome."""
    with compiled(True):
        got = outcome(buf, count, dtype, limit)
    with compiled(False):
        want = outcome(buf, count, dtype, limit)
    assert got == want
    return got


def zigzag(v: int) -> int:
    return (v << 1) ^ (v >> 127) if v >= 0 else ((-v) << 1) - 1


def oracle(data: bytes, count: int | None, bits: int) -> tuple[list[int], int] | None:
    """The spec read bit by bit with Python ints: (values, bytes used), None when the stream is
    refused. What is accepted is the reference's documented contract (pqbloom.kernels.reference.delta's docstring)."""
    pos = 0

    def varint() -> int:
        nonlocal pos
        r = shift = 0
        while True:
            if pos >= len(data) or shift >= 70:
                raise IndexError
            b = data[pos]
            pos += 1
            r |= (b & 0x7F) << shift
            shift += 7
            if not b & 0x80:
                return r

    def unzig(z: int) -> int:
        return ((z >> 1) ^ -(z & 1)) & U64

    try:
        bs, nmb, total, first = varint(), varint(), varint(), unzig(varint())
        if not (bs and bs % 128 == 0 and bs <= 65536 and nmb and bs % nmb == 0 and (bs // nmb) % 32 == 0
                and total < 2**31):
            return None
        count = total if count is None else count
        if not 0 <= count <= total:
            return None
        vpm = bs // nmb
        vals = [first] if total else []
        nd = max(total - 1, 0)
        nblocks = -(-nd // bs)
        if nblocks * (1 + nmb) > len(data) - pos:
            return None
        end_ok = len(data)
        for _ in range(nblocks):
            mind = unzig(varint())
            widths = data[pos:pos + nmb]
            if len(widths) < nmb:
                return None
            pos += nmb
            for w in widths:
                if len(vals) - 1 >= nd:
                    break
                if w > 64:
                    return None
                bitpos = 8 * pos
                for _ in range(vpm):
                    if len(vals) - 1 >= nd:
                        break
                    if bitpos + w > 8 * end_ok:
                        return None
                    word = int.from_bytes(data[bitpos >> 3:((bitpos + w + 7) >> 3) + 1], "little")
                    v = (word >> (bitpos & 7)) & ((1 << w) - 1)
                    bitpos += w
                    vals.append((vals[-1] + mind + v) & U64)
                pos += vpm * w // 8
        used = min(pos, len(data))
    except IndexError:
        return None
    mod = 1 << bits
    return [((v % mod) ^ (mod >> 1)) - (mod >> 1) for v in vals[:count]], used


@st.composite
def hand_streams(draw: st.DrawFn) -> tuple[bytes, int]:
    """A stream built field by field: (bytes, the header's total count)."""
    bs = draw(st.sampled_from([128, 256, 512, 1024]))
    nmb = draw(st.sampled_from([m for m in (1, 2, 4, 8, 16, 32) if bs % m == 0 and (bs // m) % 32 == 0]))
    vpm = bs // nmb
    total = draw(st.integers(0, 3 * bs + 5))
    first = draw(st.integers(-(2**63), 2**63 - 1))
    out = bytearray(uleb128(bs) + uleb128(nmb) + uleb128(total) + uleb128(zigzag(first)))
    left = max(total - 1, 0)
    while left > 0:
        mind = draw(st.one_of(st.integers(-(2**63), 2**63 - 1), st.integers(-3, 3)))
        z = uleb128(zigzag(mind))
        if draw(st.integers(0, 6)) == 0:  # a 10-byte varint with bits past 64 (bit 64 counts)
            z = bytes(b | 0x80 for b in uleb128(zigzag(mind) & U64).ljust(9, b"\x00")[:9]) + bytes(
                [draw(st.integers(0, 0x7F))])
        out += z
        used = min(left, bs)
        nused = -(-used // vpm)
        widths = [draw(st.sampled_from([0, 1, 2, 7, 8, 13, 31, 32, 33, 56, 57, 63, 64])) for _ in range(nused)]
        widths += [draw(st.integers(0, 255)) for _ in range(nmb - nused)]  # unused: anything
        out += bytes(widths)
        for w in widths[:nused]:
            out += draw(st.binary(min_size=vpm * w // 8, max_size=vpm * w // 8))
        left -= used
    if total > 1 and draw(st.booleans()):  # drop padding the last miniblock may lack (or more)
        out = out[:len(out) - draw(st.integers(0, 16))]
    out += draw(st.binary(max_size=4))
    return bytes(out), total


@PROPS
@given(hand_streams(), st.sampled_from(DTYPES), st.data())
def test_hand_built_streams_match_oracle_in_both_modes(stream: tuple[bytes, int], dtype: Any,
                                                       data: st.DataObject) -> None:
    buf, total = stream
    count = data.draw(st.one_of(st.none(), st.integers(0, total + 2)))
    got = same(buf, count, dtype)
    want = oracle(buf, count, np.dtype(dtype).itemsize * 8)
    if want is None:
        assert got[0] == "error" and got[1] == "CorruptFileError"
    else:
        assert got == ("ok", np.dtype(dtype).str, want[0], want[1])


@PROPS
@given(st.sampled_from(DTYPES), st.integers(0, 1200), st.sampled_from([(128, 4), (256, 8), (128, 1), (512, 16)]),
       st.integers(0, 63), st.data())
def test_encoder_streams_compiled_equals_reference(dtype: Any, n: int, layout: tuple[int, int], shift: int,
                                                   data: st.DataObject) -> None:
    rng = np.random.default_rng(data.draw(st.integers(0, 2**32 - 1)))
    info = np.iinfo(dtype)
    vals = (rng.integers(info.min, info.max, n, dtype=dtype, endpoint=True) >> min(shift, info.bits - 1))
    vals[rng.random(n) < 0.05] = info.min
    vals[rng.random(n) < 0.05] = info.max
    enc = encode_delta_binary_packed(vals, *layout)
    got = same(enc + b"\xaa\xbb", None, dtype)
    assert got == ("ok", np.dtype(dtype).str, vals.tolist(), len(enc))
    same(enc, data.draw(st.integers(0, n + 1)), dtype)
    cut = data.draw(st.integers(0, len(enc)))
    same(enc[:cut], None, dtype)
    b = bytearray(enc)
    for _ in range(data.draw(st.integers(1, 3))):
        if b:
            b[data.draw(st.integers(0, len(b) - 1))] = data.draw(st.sampled_from([0, 1, 0x40, 0x41, 0x7F, 0x80, 0xFF]))
    same(bytes(b), data.draw(st.one_of(st.none(), st.integers(-1, n + 1))), dtype)
    same(np.frombuffer(bytes(b), np.uint8)[::1], None, dtype)


@pytest.mark.parametrize("dtype", DTYPES)
def test_every_truncation_of_a_small_stream(dtype: Any) -> None:
    vals = np.array([5, -3, 2**30, -(2**31), 2**31 - 1, 0, 7] * 40, dtype)
    enc = encode_delta_binary_packed(vals)
    for cut in range(len(enc) + 1):
        got = same(enc[:cut], None, dtype)
        want = oracle(enc[:cut], None, np.dtype(dtype).itemsize * 8)
        assert (got[0] == "ok") == (want is not None), cut


def test_int32_wraps_as_the_writers_intend() -> None:
    # first 2**31-1, then deltas of +1 and of 2**32 + 5: INT32 keeps the low 32 bits
    buf = uleb128(128) + uleb128(4) + uleb128(3) + uleb128(zigzag(2**31 - 1))
    buf += uleb128(zigzag(1)) + bytes([33, 0, 0, 0])
    packed = (0 | ((2**32 + 4) << 33)).to_bytes(32 * 33 // 8, "little")
    buf += packed
    for on in (True, False):
        with compiled(on):
            got32, used = decode_delta_binary_packed(buf, None, np.int32)
            got64, _ = decode_delta_binary_packed(buf, None, np.int64)
        assert got32.tolist() == [2**31 - 1, -(2**31), -(2**31) + 2**32 + 5 - 2**32]
        assert got64.tolist() == [2**31 - 1, 2**31, 2**31 + 2**32 + 5]
        assert used == len(buf)


@pytest.mark.parametrize("dtype", DTYPES)
def test_width_65_refused_only_where_values_are(dtype: Any) -> None:
    head = uleb128(128) + uleb128(4) + uleb128(10) + uleb128(0)
    used_bad = head + uleb128(0) + bytes([65, 0, 0, 0])
    got = same(used_bad + bytes(300), None, dtype)
    assert got == ("error", "CorruptFileError", "DELTA_BINARY_PACKED: miniblock bit width 65 > 64")
    # 9 deltas: only the first miniblock holds values; the others' widths and data are not read
    unused_bad = head + uleb128(zigzag(2)) + bytes([1, 65, 200, 255]) + bytes(4)
    assert same(unused_bad, None, dtype) == ("ok", np.dtype(dtype).str, list(range(0, 20, 2)), len(unused_bad))


@pytest.mark.parametrize("dtype", DTYPES)
def test_varint_overflow(dtype: Any) -> None:
    eleven = bytes([0xFF] * 10 + [0x01])
    got = same(eleven + bytes(8), None, dtype)
    assert got == ("error", "CorruptFileError", "DELTA_BINARY_PACKED header: varint too long")
    # a 10-byte first value: bits 1..64 of the varint are the value's bits (bit 64 lands in bit 63)
    ten = bytes([0x80] * 9 + [0x02])  # 2**64: zigzag of the pattern 2**63
    head = uleb128(128) + uleb128(4) + uleb128(1) + ten
    assert same(head, None, np.int64) == ("ok", "<i8", [-(2**63)], len(head))
    block_too_long = uleb128(128) + uleb128(4) + uleb128(2) + uleb128(0) + eleven + bytes(8)
    assert same(block_too_long, None, dtype)[2] == "DELTA_BINARY_PACKED block header: varint too long"
    huge_block = uleb128(2**69) + uleb128(4) + uleb128(2) + uleb128(0) + bytes(8)
    assert same(huge_block, None, dtype)[2] == f"DELTA_BINARY_PACKED: invalid block size {2**69}"


@pytest.mark.parametrize("dtype", DTYPES)
def test_huge_counts(dtype: Any) -> None:
    # 2**31-1 values claimed in a few bytes: refused unless the blocks are there
    head = uleb128(65536) + uleb128(2) + uleb128(2**31 - 1) + uleb128(0)
    assert same(head + bytes(64), None, dtype)[1] == "CorruptFileError"
    assert same(uleb128(128) + uleb128(4) + uleb128(2**31) + uleb128(0) + bytes(8), None, dtype)[2] == \
        "DELTA_BINARY_PACKED: invalid total count 2147483648"
    # 65,535 values of width 0 in 4 bytes of blocks: decoded, or refused by the memory budget alike
    zero = uleb128(65536) + uleb128(2) + uleb128(65536) + uleb128(0) + uleb128(zigzag(-1)) + bytes([0, 0])
    got = same(zero, None, dtype)
    assert got[0] == "ok" and got[2] == list(range(0, -65536, -1))
    assert same(zero, None, dtype, limit=1 << 20)[1] == MemoryLimitError.__name__
    for count in (-1, 65537, 2**40):
        assert same(zero, count, dtype)[1] == "CorruptFileError"


def test_bad_dtype_and_empty_input() -> None:
    assert same(b"", None, np.int16) == ("error", "ValueError", "dtype must be int32 or int64, got int16")
    assert same(b"", None, np.int64) == ("error", "CorruptFileError", "DELTA_BINARY_PACKED header: truncated varint")


def test_delta_columns_written_by_pyarrow_in_both_modes() -> None:
    """pyarrow writes DELTA_BINARY_PACKED (INT32 and INT64) and DELTA_LENGTH_BYTE_ARRAY; both modes
    read back what pyarrow reads."""
    rng = np.random.default_rng(7)
    n = 5000
    table = pa.table({"i64": pa.array(np.cumsum(rng.integers(-1000, 10**6, n))),
                      "i32": pa.array(rng.integers(-(2**31), 2**31, n, dtype=np.int64).astype(np.int32)),
                      "s": pa.array([("x" * int(k)) for k in rng.integers(0, 40, n)])})
    sink = io.BytesIO()
    pq.write_table(table, sink, use_dictionary=False, data_page_size=4096,
                   column_encoding={"i64": "DELTA_BINARY_PACKED", "i32": "DELTA_BINARY_PACKED",
                                    "s": "DELTA_LENGTH_BYTE_ARRAY"})
    want = pq.read_table(io.BytesIO(sink.getvalue()))
    for on in (True, False):
        with compiled(on):
            got = pqbloom.read_table(io.BytesIO(sink.getvalue())).to_arrow()
        for name in ("i64", "i32", "s"):
            assert got.column(name).to_pylist() == want.column(name).to_pylist(), (on, name)


def test_encodings_dispatch_to_the_kernel(monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[int] = []
    real = delta_kernels.decode_delta_binary_packed

    def spy(*args: Any) -> Any:
        calls.append(1)
        return real(*args)
    monkeypatch.setattr(delta_kernels, "decode_delta_binary_packed", spy)
    enc = encode_delta_binary_packed(np.arange(10))
    assert decode_delta_binary_packed(enc)[0].tolist() == list(range(10))
    assert calls == [1]

