"""take_dictionary for numeric and fixed-width (2-D uint8) dictionaries: numpy's own gather with explicit
bounds as the oracle, every index dtype, negative and too-large indices a CorruptFileError."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pqbloom.encodings.dictionary import take_dictionary
from pqbloom.errors import CorruptFileError

INDEX_DTYPES = ["int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64"]


def _oracle(arr: np.ndarray, idx: list[int]):
    if any(i < 0 or i >= len(arr) for i in idx):
        return "error"
    return np.stack([arr[i] for i in idx]) if idx else arr[:0]


@settings(max_examples=300, deadline=None)
@given(size=st.integers(0, 40), width=st.sampled_from([0, 1, 3, 12, 16]), dtype=st.sampled_from(INDEX_DTYPES),
       raw=st.lists(st.integers(-300, 300), max_size=60), seed=st.integers(0, 2**32 - 1))
def test_take_matches_oracle(size, width, dtype, raw, seed):
    rng = np.random.default_rng(seed)
    arr = (rng.integers(-2**40, 2**40, size) if width == 0
           else rng.integers(0, 256, (size, width)).astype(np.uint8))
    info = np.iinfo(dtype)
    idx = [i for i in raw if info.min <= i <= info.max]
    expected = _oracle(arr, idx)
    if isinstance(expected, str):
        with pytest.raises(CorruptFileError):
            take_dictionary(arr, np.array(idx, dtype))
        return
    got = take_dictionary(arr, np.array(idx, dtype))
    assert got.dtype == arr.dtype and got.shape == expected.shape and np.array_equal(got, expected)


@pytest.mark.parametrize("dtype", ["int32", "int64", "int8"])
@pytest.mark.parametrize("width", [0, 16])
def test_negative_index_never_counts_from_the_end(dtype, width):
    arr = np.arange(10) if width == 0 else np.zeros((10, width), np.uint8)
    with pytest.raises(CorruptFileError, match="index -1 out of range"):
        take_dictionary(arr, np.array([0, -1], dtype))


def test_huge_unsigned_index_is_out_of_range():
    with pytest.raises(CorruptFileError):
        take_dictionary(np.arange(10), np.array([2**64 - 1], np.uint64))
