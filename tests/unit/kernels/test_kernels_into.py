"""Kernels that write into the caller's buffers (a column's region) against their numpy reference:
``take_binary_into`` (dictionary expansion straight into a chunk's buffer), ``scatter_nulls``
with ``out`` (a page's values to its rows of a column, from a view at any byte of the page) and
``gather_dictionary`` (a dictionary page's indices looked up into its rows, nulls placed)."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pqbloom.arrays import BinaryArray
from pqbloom.encodings.rle import encode_rle_bitpacked
from pqbloom.errors import CorruptFileError
from pqbloom.kernels import binary as binary_kernels
from pqbloom.kernels import hybrid as hybrid_kernels
from pqbloom.kernels import levels as level_kernels
from tests.unit.kernels.test_kernels import compiled

PROPS = settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def _take_into(dictionary: BinaryArray, idx: np.ndarray, room: int, base: int) -> Any:
    """(result, offsets, the bytes taken) of take_binary_into, or the error's type and message."""
    offsets = np.full(len(idx) + 3, -7, np.int64)
    data = np.full(room, 0xAB, np.uint8)
    try:
        got = binary_kernels.take_binary_into(dictionary, idx, offsets, data, base)
    except (CorruptFileError, ValueError) as exc:
        return type(exc).__name__, str(exc)
    if got is None:
        return None
    return got, offsets[:len(idx) + 1].tolist(), data[:got].tobytes(), offsets[len(idx) + 1:].tolist()


@PROPS
@given(values=st.lists(st.binary(max_size=80), min_size=1, max_size=40),
       picks=st.lists(st.integers(-3, 45), max_size=300), slack=st.integers(-40, 70),
       base=st.integers(0, 1 << 40), wide=st.booleans())
def test_take_into_is_the_reference(values: list[bytes], picks: list[int], slack: int, base: int,
                                    wide: bool) -> None:
    dictionary = BinaryArray.from_pylist(values)
    idx = np.array(picks, np.int64 if wide else np.int32)
    need = sum(len(values[i]) for i in picks if 0 <= i < len(values))
    room = max(need + slack, 0)
    with compiled(True):
        got = _take_into(dictionary, idx, room, base)
    with compiled(False):
        want = _take_into(dictionary, idx, room, base)
    assert got == want
    if all(0 <= i < len(values) for i in picks):
        if room >= need:  # the values, their offsets from base; nothing past the offsets' end written
            expected = b"".join(values[i] for i in picks)
            assert got[0] == len(expected) and got[2] == expected
            assert got[1][0] == base and np.diff(got[1]).tolist() == [len(values[i]) for i in picks]
            assert got[3] == [-7, -7]
        else:
            assert got is None
    else:
        assert got[0] == "CorruptFileError" and "out of range" in got[1]


def test_take_into_never_writes_past_its_data() -> None:
    # a region inside a larger buffer: the short-value fast path (32-byte moves) stays inside it
    values = BinaryArray.from_pylist([b"a", b"bc", b"def"])
    whole = np.full(64, 0xEE, np.uint8)
    offsets = np.empty(5, np.int64)
    with compiled(True):
        got = binary_kernels.take_binary_into(values, np.array([2, 1, 0, 2], np.int32), offsets, whole[10:19], 10)
    assert got == 9
    assert whole[10:19].tobytes() == b"defbcadef"
    assert (whole[:10] == 0xEE).all() and (whole[19:] == 0xEE).all()
    assert offsets.tolist() == [10, 13, 15, 16, 19]


_DTYPES = [np.int8, np.int16, np.int32, np.int64, np.float32, np.float64]


@PROPS
@given(present=st.lists(st.booleans(), max_size=400), dtype=st.sampled_from(_DTYPES + [None]),
       shift=st.integers(0, 7), seed=st.integers(0, 2**32 - 1), extra=st.sampled_from([0, 0, 0, 1, -1]))
def test_scatter_into_out_is_the_reference(present: list[bool], dtype: Any, shift: int, seed: int,
                                           extra: int) -> None:
    mask = np.array(present, bool)
    rng = np.random.default_rng(seed)
    ndense = max(int(mask.sum()) + extra, 0)
    width = 12 if dtype is None else np.dtype(dtype).itemsize  # None: INT96-like rows of 12 bytes
    raw = rng.integers(0, 256, ndense * width + shift, dtype=np.uint8).tobytes()
    flat = np.frombuffer(memoryview(raw)[shift:], np.uint8)  # a view at any byte, as a page's values
    dense = flat.reshape(ndense, 12) if dtype is None else flat.view(dtype)
    outs = []
    for on in (True, False):
        out = np.full((len(mask),) + dense.shape[1:], 0x5A, dense.dtype) if dtype is None else \
            np.full(len(mask), 7, dense.dtype)
        with compiled(on):
            try:
                values, validity = level_kernels.scatter_nulls(dense, mask, 1, "page", out)
                assert values is out
                outs.append((out.tobytes(), validity.tobytes()))
            except CorruptFileError as exc:
                outs.append(("error", str(exc)))
    assert outs[0] == outs[1]
    if ndense == int(mask.sum()):
        expected = np.zeros((len(mask),) + dense.shape[1:], dense.dtype)
        expected[mask] = dense
        assert outs[0][0] == expected.tobytes()
        assert outs[0][1] == np.packbits(mask, bitorder="little").tobytes()
    else:
        assert outs[0][0] == "error"


@pytest.mark.parametrize("on", [True, False])
def test_scatter_refuses_an_out_that_cannot_take_the_rows(on: bool) -> None:
    dense = np.arange(3, dtype=np.int64)
    mask = np.array([True, False, True, True])
    for bad in (np.empty(3, np.int64), np.empty(4, np.int32), np.empty(8, np.int64)[::2],
                np.frombuffer(bytes(32), np.int64)):
        with compiled(on), pytest.raises(ValueError, match="out must be"):
            level_kernels.scatter_nulls(dense, mask, 1, "page", bad)


def _spread(dense_lens: list[int], present: np.ndarray, count: int, extra: int) -> Any:
    """(the offsets after spread_offsets, in place) or the error's type and message."""
    full = np.full(len(present) + 1 + extra, -9, np.int64)
    full[:len(dense_lens) + 1] = np.concatenate([[0], np.cumsum(dense_lens, dtype=np.int64)])
    before = full.copy()
    try:
        level_kernels.spread_offsets(full, present, count)
    except (CorruptFileError, ValueError) as exc:
        assert np.array_equal(full, before)  # nothing written on a refusal
        return type(exc).__name__, str(exc)
    return full.tolist()


@PROPS
@given(flags=st.lists(st.booleans(), max_size=300), lens=st.data(), off_by=st.sampled_from([0, 0, 0, -1, 1]),
       extra=st.integers(0, 3))
def test_spread_offsets_is_the_reference(flags: list[bool], lens: Any, off_by: int, extra: int) -> None:
    # a byte-array column's dense offsets spread to its rows in place (null rows repeat the offset
    # before them); a count that disagrees with the flags is refused without a write
    present = np.array(flags, bool)
    count = int(present.sum()) + off_by
    dense_lens = lens.draw(st.lists(st.integers(0, 9), min_size=max(count, 0), max_size=max(count, 0)))
    if count < 0 or len(present) + 1 + extra < count + 1:
        return
    with compiled(True):
        got = _spread(dense_lens, present, count, extra)
    with compiled(False):
        want = _spread(dense_lens, present, count, extra)
    assert got == want
    if off_by == 0:  # the offsets of the rows as numpy places them
        ends = np.concatenate([[0], np.cumsum(dense_lens, dtype=np.int64)])
        rows = np.concatenate([[0], ends[np.cumsum(present, dtype=np.int64)]])
        assert got[:len(present) + 1] == rows.tolist() and got[len(present) + 1:] == [-9] * extra
    else:
        assert got[0] == "CorruptFileError"


def _gather(buf: bytes, count: int, dictionary: np.ndarray, present: np.ndarray | None) -> Any:
    """(rows written, bytes used) of gather_dictionary, or the error's type and message."""
    rows = len(present) if present is not None else count
    out = np.full((rows,) + dictionary.shape[1:], 0x5A, dictionary.dtype)
    try:
        used = hybrid_kernels.gather_dictionary(buf, count, dictionary, present, out)
    except (CorruptFileError, ValueError) as exc:
        return type(exc).__name__, str(exc)
    return out.tobytes(), used


@PROPS
@given(size=st.integers(1, 300), picks=st.lists(st.integers(0, 310), max_size=400),
       flags=st.one_of(st.none(), st.lists(st.booleans(), max_size=500)),
       kind=st.sampled_from(["i4", "i8", "f8", "u1", "u1x1", "u1x3", "u1x16"]), runs=st.booleans(),
       cut=st.integers(0, 4))
def test_gather_dictionary_is_the_reference(size: int, picks: list[int], flags: list[bool] | None, kind: str,
                                            runs: bool, cut: int) -> None:
    rng = np.random.default_rng(size)
    if kind.startswith("u1x"):
        dictionary = rng.integers(0, 256, (size, int(kind[3:])), dtype=np.uint8)
    elif kind == "u1":  # one byte per entry (a filter's table of ranks: pqbloom.file.dictionary_hits)
        dictionary = rng.integers(0, 256, size, dtype=np.uint8)
    else:
        dictionary = rng.integers(-(2**31), 2**31, size).astype(kind)
    idx = np.array(picks, np.int64)
    if runs:  # long repeats: RLE runs
        idx = np.repeat(idx, 9)[:len(picks)]
    present = None
    if flags is not None:  # as many values as flags set (the levels say so)
        present = np.array(flags + [True] * max(len(idx) - sum(flags), 0), bool)
        idx = idx[:int(present.sum())]
        idx = np.concatenate([idx, np.zeros(int(present.sum()) - len(idx), np.int64)])
    bw = max(int(idx.max()).bit_length(), 1) if len(idx) else 1
    buf = bytes([bw]) + encode_rle_bitpacked(idx, bw)
    if cut:  # a page cut short: the runs end early (an error unless the cut is padding)
        buf = buf[:max(len(buf) - cut, 1)]
    with compiled(True):
        got = _gather(buf, len(idx), dictionary, present)
    with compiled(False):
        want = _gather(buf, len(idx), dictionary, present)
    assert got == want
    if not cut and all(i < size for i in idx):  # the values at their rows, zeros at the others
        rows = dictionary[idx]
        if present is not None:
            full = np.zeros((len(present),) + dictionary.shape[1:], dictionary.dtype)
            full[present] = rows
            rows = full
        assert got[0] == rows.tobytes() and got[1] <= len(buf)
    elif not cut:
        assert got[0] == "CorruptFileError" and "out of range" in got[1]


def test_gather_dictionary_refuses_flags_that_disagree() -> None:
    dictionary = np.arange(4, dtype=np.int64)
    buf = bytes([2]) + encode_rle_bitpacked(np.array([1, 2, 3]), 2)
    for on in (True, False):
        with compiled(on):
            with pytest.raises(CorruptFileError, match="2 defined levels but 3 values"):
                hybrid_kernels.gather_dictionary(buf, 3, dictionary, np.array([True, False, True]),
                                                 np.empty(3, np.int64))
            with pytest.raises(CorruptFileError, match="index 3 out of range"):
                hybrid_kernels.gather_dictionary(buf, 3, dictionary[:3], None, np.empty(3, np.int64))
            with pytest.raises(CorruptFileError, match="bit width 40"):
                hybrid_kernels.gather_dictionary(bytes([40, 1]), 3, dictionary, None, np.empty(3, np.int64))
