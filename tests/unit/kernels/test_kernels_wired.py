"""The read and write paths through pqbloom.kernels, in both modes (compiled and numpy reference).

pyarrow is the oracle: it writes the files pqbloom reads (hybrid levels and dictionary indices,
PLAIN and DELTA_BYTE_ARRAY strings, dictionary take, decimals to Arrow, nulls placed) and reads
the files pqbloom writes (PLAIN BYTE_ARRAY encode, binary min/max statistics). Each property runs
with the compiled kernels and with the reference (the ``mode`` fixture), so both give pyarrow's
answer; the other test files run whole in one mode per process (``PQBLOOM_PURE_PYTHON=1``).
"""

from __future__ import annotations

import decimal
import io
from collections.abc import Iterator

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import pqbloom
from pqbloom import kernels
from pqbloom.arrays import BinaryArray
from pqbloom.encodings.dictionary import take_dictionary
from pqbloom.encodings.rle import decode_rle_bitpacked, encode_rle_bitpacked
from pqbloom.errors import CorruptFileError
from pqbloom.table import place_nulls

PROPS = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow,
                                                                          HealthCheck.function_scoped_fixture])


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


def _pyarrow_file(table: pa.Table, **kw: object) -> bytes:
    sink = io.BytesIO()
    pq.write_table(table, sink, **kw)  # type: ignore[arg-type]
    return sink.getvalue()


def _read_arrow(data: bytes, name: str) -> pa.Array:
    return pqbloom.read_table(io.BytesIO(data)).column(name).to_arrow()


texts = st.lists(st.none() | st.text(max_size=30), min_size=0, max_size=300)


@PROPS
@given(values=texts, dictionary=st.booleans(), version=st.sampled_from(["1.0", "2.0"]),
       page_rows=st.sampled_from([7, 1000]))
def test_strings_written_by_pyarrow(mode: str, values: list[str | None], dictionary: bool, version: str,
                                    page_rows: int) -> None:
    """Levels (hybrid), PLAIN strings or dictionary indices + take, nulls placed."""
    arr = pa.array(values, pa.string())
    data = _pyarrow_file(pa.table({"s": arr}), use_dictionary=dictionary, data_page_version=version,
                         write_batch_size=page_rows, data_page_size=1 if page_rows == 7 else None)
    assert _read_arrow(data, "s").to_pylist() == values


@PROPS
@given(values=st.lists(st.none() | st.binary(max_size=40), max_size=300))
def test_delta_byte_array_written_by_pyarrow(mode: str, values: list[bytes | None]) -> None:
    ordered = sorted(v for v in values if v is not None)  # shared prefixes, so they are rebuilt
    col = ordered + [v for v in values if v is None]
    data = _pyarrow_file(pa.table({"b": pa.array(col, pa.binary())}), use_dictionary=False,
                         column_encoding={"b": "DELTA_BYTE_ARRAY"})
    assert _read_arrow(data, "b").to_pylist() == col


@PROPS
@given(digits=st.lists(st.none() | st.integers(-(10**38) + 1, 10**38 - 1), max_size=200),
       precision=st.sampled_from([5, 18, 38, 50]), as_int=st.booleans())
def test_decimals_written_by_pyarrow(mode: str, digits: list[int | None], precision: int, as_int: bool) -> None:
    bound = 10**precision
    vals = [None if d is None else decimal.Decimal(d % bound if d >= 0 else -((-d) % bound)) for d in digits]
    typ = pa.decimal128(precision, 0) if precision <= 38 else pa.decimal256(precision, 0)
    arr = pa.array(vals, pa.decimal256(76, 0)).cast(typ)
    data = _pyarrow_file(pa.table({"d": arr}), store_decimal_as_integer=as_int)
    got = _read_arrow(data, "d")
    assert got.type == typ and got.to_pylist() == arr.to_pylist()


@PROPS
@given(rows=st.lists(st.none() | st.lists(st.none() | st.integers(-5, 5), max_size=6), max_size=120))
def test_nested_levels_written_by_pyarrow(mode: str, rows: list[list[int | None] | None]) -> None:
    arr = pa.array(rows, pa.list_(pa.int64()))
    data = _pyarrow_file(pa.table({"l": arr}))
    assert pqbloom.read_table(io.BytesIO(data)).column("l").to_pylist() == rows


@PROPS
@given(values=st.lists(st.none() | st.text(max_size=20), min_size=1, max_size=200),
       dictionary=st.booleans())
def test_strings_pyarrow_reads(mode: str, values: list[str | None], dictionary: bool) -> None:
    """PLAIN BYTE_ARRAY encode and the binary min/max statistics, as pyarrow reads them."""
    sink = io.BytesIO()
    schema = pqbloom.Schema.from_types({"s": "string"})
    pqbloom.write_table(pqbloom.Table.from_pydict({"s": values}, schema), sink, use_dictionary=dictionary)
    data = sink.getvalue()
    assert pq.read_table(io.BytesIO(data)).column("s").to_pylist() == values
    present = [v.encode() for v in values if v is not None]
    stats = pq.read_metadata(io.BytesIO(data)).row_group(0).column(0).statistics
    if present:
        assert (stats.min.encode(), stats.max.encode()) == (min(present), max(present))


@PROPS
@given(items=st.lists(st.binary(max_size=12), min_size=1, max_size=20),
       idx=st.lists(st.integers(-3, 25), max_size=80))
def test_take_dictionary_both_modes(mode: str, items: list[bytes], idx: list[int]) -> None:
    dictionary = BinaryArray.from_pylist(items)
    indices = np.array(idx, np.int32)
    bad = [i for i in idx if not 0 <= i < len(items)]
    if bad:
        worst = min(bad) if min(bad) < 0 else max(bad)
        with pytest.raises(CorruptFileError, match=f"dictionary index {worst} out of range"):
            take_dictionary(dictionary, indices)
    else:
        assert take_dictionary(dictionary, indices).to_pylist() == [items[i] for i in idx]


@PROPS
@given(values=st.lists(st.integers(0, 3), max_size=400), long_run=st.integers(0, 300_000))
def test_hybrid_both_modes(mode: str, values: list[int], long_run: int) -> None:
    """Including RLE runs long enough (past 256 values a byte) to take the numpy decoder in both modes."""
    full = np.array(values + [2] * long_run, np.int32)
    buf = encode_rle_bitpacked(full, 2)
    assert np.array_equal(decode_rle_bitpacked(buf, 2, len(full), np.int8), full)
    with pytest.raises(CorruptFileError):
        decode_rle_bitpacked(buf, 2, len(full) + 9, np.int8)


@PROPS
@given(mask=st.lists(st.booleans(), max_size=200), binary=st.booleans())
def test_place_nulls(mode: str, mask: list[bool], binary: bool) -> None:
    present = np.array(mask, bool)
    k = int(present.sum())
    if binary:
        items = [b"v%d" % i for i in range(k)]
        got = place_nulls(BinaryArray.from_pylist(items), present)
        it = iter(items)
        assert got.to_pylist() == [next(it) if p else b"" for p in mask]
    else:
        dense = np.arange(1, k + 1, dtype=np.int64)
        it2 = iter(dense.tolist())
        assert place_nulls(dense, present).tolist() == [next(it2) if p else 0 for p in mask]
    with pytest.raises(CorruptFileError):
        place_nulls(np.zeros(k + 1, np.int64), present)
