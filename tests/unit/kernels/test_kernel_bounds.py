"""Bounds the compiled kernels check for their own memory safety, by direct calls (issue #29, item 13).

The reader never passes these arguments today; the kernels promise to check what their memory safety
needs anyway, so a direct call with them must raise (or do nothing), never read or write out of bounds.
Each case was found with the extension built with ``-fsanitize=address,undefined`` (see
``fuzz/fuzz_kernels.py``): a level-block length sum that overflowed, offsets that wrapped past 2**63,
and ``memset`` given the NULL pointer of an empty view.
"""

from __future__ import annotations

import numpy as np
import pytest

from pqbloom.kernels import binary as binary_kernels
from pqbloom.kernels import hybrid as hybrid_kernels
from pqbloom.kernels import levels as level_kernels
from pqbloom.kernels.reference import binary as binary_reference
from tests.unit.kernels.test_kernels import compiled

hybrid = pytest.importorskip("pqbloom._kernels.hybrid", reason="the compiled kernels are not built")
binary = pytest.importorskip("pqbloom._kernels.binary", reason="the compiled kernels are not built")
levels = pytest.importorskip("pqbloom._kernels.levels", reason="the compiled kernels are not built")

I64_MAX = 2**63 - 1


@pytest.mark.parametrize("rep_bw, def_bw, rep_len, def_len", [
    (1, 0, I64_MAX, 1),  # the sum wraps negative: it "fit" the 2-byte page
    (0, 1, 2**62, 2**62),  # the definition levels would be read 2**62 bytes past the page
    (1, 1, 2, I64_MAX),
])
def test_page_levels_v2_lengths_past_the_page_raise(rep_bw: int, def_bw: int, rep_len: int, def_len: int) -> None:
    page = b"\x02\x01\x02\x01"  # two blocks of one RLE run each
    lv = np.zeros(4, np.int8)
    with pytest.raises(ValueError, match="invalid arguments"):
        hybrid.page_levels(page, 1, rep_bw, def_bw, rep_len, def_len, lv, lv, 1)
    for on in (True, False):  # the dispatch and the reference say the same
        with compiled(on), pytest.raises(ValueError, match="must both be given and fit the page"):
            hybrid_kernels.page_levels(page, 1, rep_bw, def_bw, rep_len, def_len, lv, lv.copy(), 1)


def test_page_levels_v2_lengths_that_fit_still_decode() -> None:
    lv, dv = np.zeros(1, np.int8), np.zeros(1, np.int8)
    assert hybrid.page_levels(b"\x02\x01\x02\x01", 1, 1, 1, 2, 2, lv, dv, 1) == (4, 1)
    assert lv.tolist() == dv.tolist() == [1]


@pytest.mark.parametrize("base", [-1, I64_MAX, I64_MAX - 4, -(2**63)])
def test_plain_decode_into_refuses_a_base_the_offsets_would_wrap_past(base: int) -> None:
    page = b"\x01\x00\x00\x00x"  # one value, b"x"
    offsets = np.full(2, -7, np.int64)
    data = np.zeros(8, np.uint8)
    with pytest.raises(ValueError, match="invalid arguments"):
        binary.plain_decode_into(page, 1, offsets, data, base)
    assert offsets.tolist() == [-7, -7]  # nothing written
    for on in (True, False):
        with compiled(on), pytest.raises(ValueError, match="offsets base"):
            binary_kernels.decode_plain_byte_array_into(page, 1, offsets, data, base)


def test_plain_decode_into_takes_the_largest_base_that_cannot_wrap() -> None:
    page = b"\x01\x00\x00\x00x"
    top = I64_MAX - len(page)
    for on in (True, False):
        offsets = np.zeros(2, np.int64)
        data = np.zeros(8, np.uint8)
        with compiled(on):
            assert binary_kernels.decode_plain_byte_array_into(page, 1, offsets, data, top) == (1, 5)
        assert offsets.tolist() == [top, top + 1] and data[:1].tobytes() == b"x"
    binary_reference.check_offsets_base(top, len(page))


@pytest.mark.parametrize("itemsize", [1, 2, 4, 8, 3])
def test_scatter_fixed_of_no_slots_writes_nothing(itemsize: int) -> None:
    """Empty views have NULL data pointers; memset(NULL, 0, 0) is undefined behaviour (UBSan: "null
    pointer passed as argument 1"). No slots: nothing to write, 0 values placed."""
    empty = np.zeros(0, np.uint8)
    for lv in (np.zeros(0, np.int8), np.zeros(0, np.int16), np.zeros(0, np.int32), empty):
        assert levels.scatter_fixed(lv, 1, empty, itemsize, empty, empty) == 0
        # dense values that no slot takes are still a mismatch
        assert levels.scatter_fixed(lv, 1, np.zeros(itemsize, np.uint8), itemsize, empty, empty) \
            == levels.COUNT_MISMATCH
    for on in (True, False):
        with compiled(on):
            out, validity = level_kernels.scatter_nulls(np.zeros(0, np.int64), np.zeros(0, np.int8), 1)
        assert len(out) == 0


@pytest.mark.parametrize("count, dict_len, width, rows, flags", [
    (1, 2**62, 4, 1, 0),  # dict_len * width wraps: the 16-byte dictionary "held" 2**62 entries
    (1, 4, 2**62, 1, 0),
    (1, 4, 4, 2**62, 0),  # rows * width wraps past the 16-byte out
    (5, 4, 4, 5, 0),  # more rows than out holds
    (2, 4, 4, 4, 3),  # fewer flags than rows
    (2**31, 4, 4, 4, 0),  # a count past what the index buffer takes
    (-1, 4, 4, 0, 0),
])
def test_gather_dictionary_refuses_arguments_past_its_buffers(count: int, dict_len: int, width: int, rows: int,
                                                              flags: int) -> None:
    dictionary, out = np.zeros(16, np.uint8), np.zeros(16, np.uint8)
    with pytest.raises(ValueError, match="invalid arguments"):
        hybrid.gather_dictionary(bytes([2, 3, 0]), count, dictionary, dict_len, width, np.ones(flags, np.uint8),
                                 out, rows)


def test_gather_dictionary_of_no_values_writes_nothing_through_null() -> None:
    """Empty views have NULL data pointers: no values, no rows, nothing touched."""
    empty = np.zeros(0, np.uint8)
    assert hybrid.gather_dictionary(b"", 0, np.zeros(8, np.uint8), 1, 8, empty, empty, 0) == 0
    # flags marking rows that no value fills are corrupt, not a write past the empty index buffer
    assert hybrid.gather_dictionary(b"", 0, np.zeros(8, np.uint8), 1, 8, np.ones(2, np.uint8),
                                    np.zeros(16, np.uint8), 2) == hybrid.GATHER_FAILED
