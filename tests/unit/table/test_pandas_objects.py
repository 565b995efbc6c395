"""Object columns of ``to_pandas()`` (and ``to_pylist()``, ``to_numpy()``) against pyarrow reading the same
file (issue #32): DECIMAL as ``decimal.Decimal``, DATE as ``datetime.date``, TIME as ``datetime.time``, and
zoned timestamps, which pandas holds natively.

pyarrow writes each file (decimals as FIXED_LEN_BYTE_ARRAY or, with ``store_decimal_as_integer``, as INT32 /
INT64), both libraries read it, and the columns must be the same: the same dtype, the same values, and for
Decimal objects the same ``repr`` (coefficient and exponent: ``Decimal('1.50')`` is not ``Decimal('1.5')``
there, though they compare equal). The values are drawn to reach each way the converters build objects:
scattered values (one object each), values in a short range (one object per value of the range, gathered
by offset), and a few distinct values over thousands of rows (one object per distinct value, gathered by
``np.unique``'s codes). Both the compiled kernels and their numpy reference run (the ``mode`` fixture).
"""

from __future__ import annotations

import datetime as dt
import decimal
import io
from collections.abc import Iterator

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import pqbloom
from pqbloom import kernels
from pqbloom.errors import UnsupportedError
from pqbloom.format.enums import PhysicalType
from tests.conftest import fixture_file

PROPS = settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow,
                                                                         HealthCheck.function_scoped_fixture])
EXACT = decimal.Context(prec=400, Emax=999_999, Emin=-999_999)
#: days since 1970-01-01 of datetime.date's first and last days
FIRST_DAY, LAST_DAY = -719_162, 2_932_896


@pytest.fixture(params=["compiled", "reference"])
def mode(request: pytest.FixtureRequest) -> Iterator[str]:
    on = request.param == "compiled"
    if on and not kernels.EXTENSION_BUILT:
        pytest.fail("the compiled kernels are not built: run `pip install -e .` (needs a C compiler)")
    saved = kernels.COMPILED
    kernels.COMPILED = on
    try:
        yield request.param
    finally:
        kernels.COMPILED = saved


def _file(table: pa.Table, **options: object) -> bytes:
    sink = io.BytesIO()
    pq.write_table(table, sink, **options)  # type: ignore[arg-type]
    return sink.getvalue()


def _typed(values: list[object]) -> list[str]:
    """Each value's type and repr: equal Decimals of other exponents, or dates and datetimes, differ here."""
    return [f"{type(v).__name__}:{v!r}" for v in values]


def _same_object_column(data: bytes, name: str) -> None:
    """pqbloom's to_pandas, to_pylist and to_numpy of column ``name`` are pyarrow's (to_pandas: same dtype)."""
    want = pq.read_table(io.BytesIO(data)).to_pandas()[name]
    table = pqbloom.read_table(io.BytesIO(data))
    got = table.to_pandas()[name]
    assert got.dtype == want.dtype == object
    assert _typed(got.tolist()) == _typed(want.tolist())
    want_py = pq.read_table(io.BytesIO(data)).column(name).to_pylist()
    assert _typed(table.column(name).to_pylist()) == _typed(want_py)


@st.composite
def _ints(draw: st.DrawFn, lo: int, hi: int) -> list[int]:
    """Values in ``lo..hi`` in one of three shapes: scattered, in a short range, or a few distinct values
    repeated over thousands of rows (in a random order, drawn from a seed)."""
    shape = draw(st.sampled_from(["scattered", "short range", "few distinct"]))
    if shape == "scattered":
        return draw(st.lists(st.integers(lo, hi) | st.sampled_from([lo, hi, max(lo, min(hi, 0))]), max_size=60))
    if shape == "short range":
        start = draw(st.integers(lo, hi))
        width = draw(st.integers(0, 20))
        return draw(st.lists(st.integers(start, min(hi, start + width)), min_size=0, max_size=300))
    distinct = draw(st.lists(st.integers(lo, hi), min_size=1, max_size=12, unique=True))
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    n = draw(st.integers(4200, 9000))
    return [distinct[i] for i in rng.integers(0, len(distinct), n).tolist()]


def _nulls(draw: st.DrawFn, n: int) -> list[bool]:
    if not draw(st.booleans()):
        return [False] * n
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    return (rng.random(n) < draw(st.sampled_from([0.05, 0.5, 1.0]))).tolist()


# -- DECIMAL ---------------------------------------------------------------------------------------------

@PROPS
@given(data=st.data(), precision=st.integers(1, 76), as_integer=st.booleans())
def test_decimals_are_pyarrows(mode: str, data: st.DataObject, precision: int, as_integer: bool) -> None:
    scale = data.draw(st.integers(0, precision))
    bound = 10**precision - 1
    ints = data.draw(_ints(-bound, bound))
    mask = _nulls(data.draw, len(ints))
    typ = pa.decimal128(precision, scale) if precision <= 38 else pa.decimal256(precision, scale)
    values = [None if m else decimal.Decimal(v).scaleb(-scale, context=EXACT) for v, m in zip(ints, mask)]
    # INT32 / INT64 up to 18 digits with store_decimal_as_integer, else FIXED_LEN_BYTE_ARRAY
    data_ = _file(pa.table({"d": pa.array(values, typ)}), store_decimal_as_integer=as_integer)
    _same_object_column(data_, "d")
    want = pq.read_table(io.BytesIO(data_)).column("d").to_pylist()
    assert _typed(pqbloom.read_table(io.BytesIO(data_)).column("d").to_numpy().tolist()) == _typed(want)


@pytest.mark.parametrize("name", ["int32_decimal.parquet", "int64_decimal.parquet", "fixed_length_decimal.parquet",
                                  "fixed_length_decimal_legacy.parquet", "byte_array_decimal.parquet"])
def test_decimal_files_of_other_writers(mode: str, name: str) -> None:
    """parquet-testing's DECIMAL files, INT32 to BYTE_ARRAY (the one physical type pyarrow never writes)."""
    data = fixture_file(name).read_bytes()
    _same_object_column(data, pq.read_schema(io.BytesIO(data)).names[0])


def test_decimals_wider_than_arrow_holds(mode: str, tmp_path) -> None:
    """DECIMAL(100, 1), past Arrow's 76 digits (pyarrow refuses the file, so this one is a round trip): each
    value is converted alone, from its bytes, and comes back as written."""
    big = decimal.Decimal("9" * 99 + ".5")
    values = [big, None, decimal.Decimal("-3.0"), big.copy_negate(), decimal.Decimal("0.0")]
    path = tmp_path / "wide.parquet"
    pqbloom.write_table(pqbloom.Table.from_pydict({"d": values}, schema={"d": "decimal(100, 1)"}), path)
    leaf = pqbloom.read_metadata(path).schema.fields[0]
    assert leaf.physical_type in (PhysicalType.FIXED_LEN_BYTE_ARRAY, PhysicalType.BYTE_ARRAY)
    got = pqbloom.read_table(path)
    assert _typed(got.to_pandas()["d"].tolist()) == _typed(values)
    assert _typed(got.column("d").to_pylist()) == _typed(values)


# -- DATE ------------------------------------------------------------------------------------------------

@PROPS
@given(data=st.data())
def test_dates_are_pyarrows(mode: str, data: st.DataObject) -> None:
    """Dates anywhere in datetime.date's years 1 to 9999 (numpy's datetime64[ns] holds only 1677 to 2262:
    pyarrow gives date objects all the same)."""
    days = data.draw(_ints(FIRST_DAY, LAST_DAY))
    mask = _nulls(data.draw, len(days))
    arr = pa.array(np.array(days, np.int32), pa.int32(), mask=np.array(mask, bool)).view(pa.date32())
    _same_object_column(_file(pa.table({"day": arr})), "day")


@pytest.mark.parametrize("day", [FIRST_DAY - 1, LAST_DAY + 1, -(2**31), 2**31 - 1])
def test_a_date_outside_datetime_date_is_a_typed_error(mode: str, day: int) -> None:
    """pyarrow raises (ValueError, OverflowError); pqbloom raises its UnsupportedError, never another
    exception, and reads the column where that date is null or through to_numpy."""
    days = np.array([0, day, 5], np.int32)
    data = _file(pa.table({"day": pa.array(days, pa.int32()).view(pa.date32())}))
    with pytest.raises(ValueError):
        pq.read_table(io.BytesIO(data)).to_pandas()
    table = pqbloom.read_table(io.BytesIO(data))
    with pytest.raises(UnsupportedError, match=f"column 'day': date {day} .* outside the range of datetime.date"):
        table.to_pandas()
    with pytest.raises(UnsupportedError, match="outside the range of datetime.date"):
        table.column("day").to_pylist()
    assert table.column("day").to_numpy().view(np.int64).tolist() == days.tolist()
    masked = _file(pa.table({"day": pa.array(days, pa.int32(), mask=np.array([False, True, False])).view(
        pa.date32())}))
    assert pqbloom.read_table(io.BytesIO(masked)).to_pandas()["day"].tolist() == [
        dt.date(1970, 1, 1), None, dt.date(1970, 1, 6)]


# -- TIME ------------------------------------------------------------------------------------------------

@PROPS
@given(data=st.data(), unit=st.sampled_from(["ms", "us", "ns"]))
def test_times_are_pyarrows(mode: str, data: st.DataObject, unit: str) -> None:
    per_day = {"ms": 86_400_000, "us": 86_400_000_000, "ns": 86_400_000_000_000}[unit]
    ticks = data.draw(_ints(0, per_day - 1))
    mask = _nulls(data.draw, len(ticks))
    if unit == "ns":  # datetime.time holds microseconds: pyarrow refuses other nanoseconds (test below)
        ticks = [t - t % 1000 for t in ticks]
    typ = pa.time32(unit) if unit == "ms" else pa.time64(unit)
    arr = pa.array(ticks, pa.int32() if unit == "ms" else pa.int64(), mask=np.array(mask, bool)).view(typ)
    _same_object_column(_file(pa.table({"t": arr})), "t")


def test_nanosecond_times_that_datetime_cannot_hold_are_refused_as_pyarrow_does(mode: str) -> None:
    """to_pandas of a time64[ns] value with nanoseconds: pyarrow raises (ArrowInvalid, also with safe=False);
    pqbloom raises UnsupportedError rather than truncate the value. to_pylist truncates, as pyarrow's does."""
    arr = pa.array([1_000, 86_399_999_999_999, 5_000], pa.int64()).view(pa.time64("ns"))
    data = _file(pa.table({"t": arr}))
    with pytest.raises(pa.ArrowInvalid, match="non-zero nanoseconds"):
        pq.read_table(io.BytesIO(data)).to_pandas()
    table = pqbloom.read_table(io.BytesIO(data))
    with pytest.raises(UnsupportedError, match="86399999999999 .* whole number of microseconds"):
        table.to_pandas()
    assert table.column("t").to_pylist() == pq.read_table(io.BytesIO(data)).column("t").to_pylist()
    masked = pa.array([1_000, 86_399_999_999_999, 5_000], pa.int64(), mask=np.array([False, True, False]))
    got = pqbloom.read_table(io.BytesIO(_file(pa.table({"t": masked.view(pa.time64("ns"))})))).to_pandas()
    assert got["t"].tolist() == [dt.time(0, 0, 0, 1), None, dt.time(0, 0, 0, 5)]


# -- zoned timestamps (pandas holds them natively) ------------------------------------------------------

ZONES = ["UTC", "America/New_York", "Europe/Paris", "Asia/Kolkata", "Australia/Lord_Howe", "+05:30", "-08:00"]


@PROPS
@given(data=st.data(), unit=st.sampled_from(["s", "ms", "us", "ns"]), tz=st.sampled_from(ZONES))
def test_zoned_timestamps_are_pyarrows(data: st.DataObject, unit: str, tz: str) -> None:
    # instants pandas holds in each unit (datetime64[ns]: 1677 to 2262)
    bound = {"s": 10**11, "ms": 10**14, "us": 10**17, "ns": 9 * 10**18}[unit]
    ticks = data.draw(_ints(-bound, bound))
    mask = _nulls(data.draw, len(ticks))
    arr = pa.array(ticks, pa.int64(), mask=np.array(mask, bool)).view(pa.timestamp(unit, tz=tz))
    data_ = _file(pa.table({"t": arr}))
    want = pq.read_table(io.BytesIO(data_)).to_pandas()
    got = pqbloom.read_table(io.BytesIO(data_)).to_pandas()
    assert got["t"].dtype == want["t"].dtype
    pd.testing.assert_frame_equal(got, want)
