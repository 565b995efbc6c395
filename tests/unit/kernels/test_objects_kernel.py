"""The object kernels (``pqbloom.kernels.objects``: ``decimal_objects``, ``time_objects``; compiled module
``pqbloom._kernels.objects``) against their numpy reference and independent oracles: pyarrow's own
Decimal objects (its ``as_py`` of decimal128 / decimal256) and Python's ``datetime.time``.

Decimals are compared by ``repr`` (coefficient and exponent: ``Decimal('1.50')`` is not ``Decimal('1.5')``
there, though they compare equal), nulls by position.
"""

from __future__ import annotations

import datetime as dt
import decimal
from collections.abc import Iterator
from contextlib import contextmanager

import numpy as np
import pyarrow as pa
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pqbloom import kernels
from pqbloom.kernels import objects as object_kernels
from pqbloom.kernels.reference import objects as object_reference

PROPS = settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])
EXACT = decimal.Context(prec=400, Emax=999_999, Emin=-999_999)


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


def reprs(values: object) -> list[str]:
    return [repr(v) for v in list(values)]  # type: ignore[call-overload]


def words_of(ints: list[int], width: int) -> np.ndarray:
    return np.frombuffer(b"".join(v.to_bytes(width, "little", signed=True) for v in ints), np.uint8).reshape(-1, width)


def python_decimal(v: int, scale: int) -> decimal.Decimal:
    return decimal.Decimal(v).scaleb(-scale, context=EXACT)


# -- against pyarrow's Decimal objects ----------------------------------------------------------------

@PROPS
@given(data=st.data(), precision=st.integers(1, 76), nulls=st.booleans())
def test_decimal_objects_are_pyarrows(data: st.DataObject, precision: int, nulls: bool) -> None:
    scale = data.draw(st.integers(0, precision))
    bound = 10**precision - 1
    ints = data.draw(st.lists(st.integers(-bound, bound) | st.sampled_from([0, bound, -bound, 1, -1]), max_size=60))
    mask = np.array(data.draw(st.lists(st.booleans(), min_size=len(ints), max_size=len(ints))) if nulls
                    else [False] * len(ints), dtype=bool)
    typ = pa.decimal128(precision, scale) if precision <= 38 else pa.decimal256(precision, scale)
    width = 16 if precision <= 38 else 32
    want = pa.array([None if m else python_decimal(v, scale) for v, m in zip(ints, mask.tolist())], typ).to_pylist()
    for on in (True, False) if kernels.EXTENSION_BUILT else (False,):
        with compiled(on):
            got = object_kernels.decimal_objects(words_of(ints, width), scale, mask if nulls else None)
            assert got.dtype == object and reprs(got) == reprs(want)
            if precision <= 18:  # int64 values: the same objects
                assert reprs(object_kernels.decimal_objects(np.array(ints, np.int64), scale, mask)) == reprs(want)


# -- compiled == reference == Python --------------------------------------------------------------------

int64s = st.integers(-(2**63), 2**63 - 1)


@PROPS
@given(ints=st.lists(int64s | st.sampled_from([0, -1, 1, -(2**63), 2**63 - 1, 10**18, -(10**18)]), max_size=80),
       scale=st.integers(-30, 60))
def test_int64_values_any_scale(ints: list[int], scale: int) -> None:
    values = np.array(ints, np.int64)
    want = [python_decimal(v, scale) for v in ints]
    ref = object_reference.decimal_objects(values, scale)
    assert reprs(ref) == reprs(want)
    if kernels.EXTENSION_BUILT:
        with compiled(True):
            assert reprs(object_kernels.decimal_objects(values, scale)) == reprs(want)
    # the exponent is the scale's, whatever the value (zero included), as pyarrow makes them
    assert all(d.as_tuple().exponent == -scale for d in ref)


@PROPS
@given(data=st.data(), width=st.sampled_from([4, 8, 12, 16, 20, 32, 48, 64]), scale=st.integers(0, 40))
def test_word_values_of_every_width(data: st.DataObject, width: int, scale: int) -> None:
    lo, hi = -(2 ** (8 * width - 1)), 2 ** (8 * width - 1) - 1
    ints = data.draw(st.lists(st.integers(lo, hi) | st.sampled_from([0, -1, lo, hi, 10**9, -(10**9)]), max_size=40))
    want = [python_decimal(v, scale) for v in ints]
    words = words_of(ints, width)
    assert reprs(object_reference.decimal_objects(words, scale)) == reprs(want)
    if kernels.EXTENSION_BUILT:
        with compiled(True):
            assert reprs(object_kernels.decimal_objects(words, scale)) == reprs(want)


def test_masked_slots_are_none_and_arguments_are_checked(mode: str) -> None:
    got = object_kernels.decimal_objects(np.array([5, 7, -9], np.int64), 1, np.array([False, True, False]))
    assert reprs(got) == ["Decimal('0.5')", "None", "Decimal('-0.9')"]
    assert object_kernels.decimal_objects(np.zeros(0, np.int64), 3).shape == (0,)
    with pytest.raises(ValueError, match="mask's length"):
        object_kernels.decimal_objects(np.array([1, 2], np.int64), 0, np.array([True]))
    for bad in (np.array([1, 2], np.int32), np.zeros((2, 6), np.uint8), np.zeros((2, 68), np.uint8)):
        with pytest.raises(TypeError, match="decimal values are int64"):
            object_kernels.decimal_objects(bad, 0)


# -- times ---------------------------------------------------------------------------------------------

DAY = 86_400_000_000


@PROPS
@given(micros=st.lists(st.integers(0, DAY - 1) | st.sampled_from([0, DAY - 1]), max_size=80), data=st.data())
def test_time_objects(micros: list[int], data: st.DataObject) -> None:
    mask = np.array(data.draw(st.lists(st.booleans(), min_size=len(micros), max_size=len(micros))), dtype=bool)
    want = [None if m else dt.time(us // 3_600_000_000, us // 60_000_000 % 60, us // 1_000_000 % 60, us % 1_000_000)
            for us, m in zip(micros, mask.tolist())]
    assert object_reference.time_objects(np.array(micros, np.int64), mask).tolist() == want
    if kernels.EXTENSION_BUILT:
        with compiled(True):
            assert object_kernels.time_objects(np.array(micros, np.int64), mask).tolist() == want


@pytest.mark.parametrize("bad", [-1, DAY, 2**62])
def test_a_time_outside_a_day_is_refused_alike(mode: str, bad: int) -> None:
    with pytest.raises(ValueError, match="value 1 is outside a day"):
        object_kernels.time_objects(np.array([5, bad, 7], np.int64))
    # masked, it is not looked at
    assert object_kernels.time_objects(np.array([5, bad], np.int64), np.array([False, True])).tolist() == [
        dt.time(0, 0, 0, 5), None]


@pytest.mark.parametrize("scale", [2**31, -(2**31) - 1, 10**40])
def test_a_scale_outside_int32_is_refused_alike(mode: str, scale: int) -> None:
    # Parquet's scale is an i32; the compiled kernel's exponent suffix has room for no more
    for values in (np.array([1], np.int64), np.zeros((0, 16), np.uint8)):
        with pytest.raises(ValueError, match="outside int32"):
            object_kernels.decimal_objects(values, scale)
