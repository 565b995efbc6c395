"""``read_table(...).to_pandas()`` of whole tables against ``pyarrow.parquet.read_table(...).to_pandas()`` of the
same file (issue #32): a lineitem-shaped table (int keys, decimals, dates, one-character flags, low-cardinality
strings, comments) with zoned timestamps, nulls in every nullable column, and pandas' nullable dtypes
(``Int64``, ``boolean``, ``Float64``, ``string``) restored from the pandas metadata.

Files are written by pyarrow (several row groups; dictionary or plain; decimals as FIXED_LEN_BYTE_ARRAY or
INT32 / INT64; data pages v1 or v2), with and without the pandas metadata, and by DuckDB. The frames must be
equal (``assert_frame_equal``: dtypes, index, values) and every object column's values the same objects
(type and ``repr``: ``Decimal('1.50')`` is not ``Decimal('1.5')`` there). Both the compiled kernels and
their numpy reference run.
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

import pqbloom
from pqbloom import kernels

N = 9_000


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


def _decimals(rng: np.random.Generator, n: int, lo: int, hi: int, nulls: float) -> list[decimal.Decimal | None]:
    cents = rng.integers(lo, hi, n)
    null = rng.random(n) < nulls
    return [None if z else decimal.Decimal(int(c)).scaleb(-2) for c, z in zip(cents.tolist(), null.tolist())]


def _dates(rng: np.random.Generator, n: int, nulls: float) -> list[dt.date | None]:
    days = rng.integers(8035, 10_591, n)  # 1992-01-01 .. 1998-12-31, as TPC-H's
    null = rng.random(n) < nulls
    return [None if z else dt.date(1970, 1, 1) + dt.timedelta(days=int(d)) for d, z in zip(days.tolist(), null.tolist())]


def _lineitem_frame(seed: int) -> pd.DataFrame:
    """A lineitem-shaped frame with pandas' nullable dtypes, zoned timestamps and nulls."""
    rng = np.random.default_rng(seed)
    words = np.array(["furiously", "carefully", "quickly", "blithely", "regular", "pending", "final", "ironic",
                      "deposits", "requests", "accounts", "packages", "théodolites", "naïve"], dtype=object)
    comments = [" ".join(rng.choice(words, rng.integers(1, 5)).tolist())[:44] for _ in range(N)]
    modes = np.array(["AIR", "MAIL", "SHIP", "TRUCK", "RAIL", "FOB", "REG AIR"], dtype=object)
    ts = pd.to_datetime(rng.integers(694_224_000, 915_148_800, N), unit="s", utc=True)
    null = rng.random(N) < 0.1
    frame = pd.DataFrame({
        "l_orderkey": np.sort(rng.integers(1, 6_000_000, N)).astype(np.int64),
        "l_linenumber": rng.integers(1, 8, N).astype(np.int32),
        "l_quantity": _decimals(rng, N, 100, 5_001, 0.0),
        "l_extendedprice": _decimals(rng, N, 90_000, 10_494_951, 0.05),
        "l_discount": _decimals(rng, N, 0, 11, 0.0),
        "l_tax": _decimals(rng, N, -8, 9, 0.2),  # negatives too
        "l_returnflag": rng.choice(np.array(["A", "N", "R"], dtype=object), N),
        "l_linestatus": pd.array(rng.choice(np.array(["O", "F"], dtype=object), N), dtype="string"),
        "l_shipdate": _dates(rng, N, 0.0),
        "l_commitdate": _dates(rng, N, 0.1),
        "l_receiptdate": _dates(rng, N, 1.0),  # every value null
        "l_shipmode": rng.choice(modes, N),
        "l_comment": pd.array([None if z else c for c, z in zip(comments, null.tolist())], dtype="string"),
        "shipped_at": ts.tz_convert("America/New_York"),
        "logged_at": pd.Series(ts.tz_convert("Asia/Kolkata")).where(~null).array,
        "l_suppkey": pd.Series(rng.integers(1, 10_000, N), dtype="Int64").where(~null).array,
        "l_late": pd.Series(rng.random(N) < 0.3, dtype="boolean").where(rng.random(N) > 0.1).array,
        "l_weight": pd.Series(rng.random(N) * 100, dtype="Float64").where(rng.random(N) > 0.1).array,
    }, index=pd.RangeIndex(10, 10 + 2 * N, 2, name="row"))
    return frame


def _arrow_table(frame: pd.DataFrame, with_pandas_metadata: bool) -> pa.Table:
    types = {f"l_{n}": pa.decimal128(15, 2) for n in ("quantity", "extendedprice", "discount", "tax")}
    schema = pa.Schema.from_pandas(frame, preserve_index=True)
    for name, typ in types.items():
        schema = schema.set(schema.get_field_index(name), pa.field(name, typ))
    table = pa.Table.from_pandas(frame, schema=schema, preserve_index=True)
    return table if with_pandas_metadata else table.replace_schema_metadata(None)


def _typed(values: list[object]) -> list[str]:
    return [f"{type(v).__name__}:{v!r}" for v in values]


def _same_frame(data: bytes) -> pd.DataFrame:
    want = pq.read_table(io.BytesIO(data)).to_pandas()
    got = pqbloom.read_table(io.BytesIO(data)).to_pandas()
    assert list(got.dtypes.astype(str)) == list(want.dtypes.astype(str))
    pd.testing.assert_frame_equal(got, want, check_exact=True)
    for name in want.columns:
        if want[name].dtype == object:  # Decimal, date, str objects: the same objects, not only equal ones
            assert _typed(got[name].tolist()) == _typed(want[name].tolist()), name
    return got


OPTIONS = {
    "dictionary, v1": {},
    "plain, v2": {"use_dictionary": False, "data_page_version": "2.0"},
    "decimals as integers": {"store_decimal_as_integer": True},
    "zstd, small pages": {"compression": "zstd", "data_page_size": 4096},
}


@pytest.mark.parametrize("options", OPTIONS.values(), ids=list(OPTIONS))
@pytest.mark.parametrize("with_pandas_metadata", [True, False], ids=["pandas metadata", "no metadata"])
def test_lineitem_table_to_pandas_is_pyarrows(mode: str, options: dict[str, object],
                                             with_pandas_metadata: bool) -> None:
    frame = _lineitem_frame(seed=len(options) + with_pandas_metadata)
    sink = io.BytesIO()
    pq.write_table(_arrow_table(frame, with_pandas_metadata), sink, row_group_size=4_000,
                   **options)  # type: ignore[arg-type]
    got = _same_frame(sink.getvalue())
    # the frame pyarrow's reader gives is the frame that was written (so the comparison above has teeth)
    if with_pandas_metadata:
        assert got.index.equals(frame.index) and str(got["l_suppkey"].dtype) == "Int64"
        assert str(got["shipped_at"].dtype).endswith("America/New_York]")
        assert got["l_tax"].isna().sum() == frame["l_tax"].isna().sum() > 0


def test_duckdb_written_lineitem_to_pandas_is_pyarrows(mode: str, tmp_path) -> None:
    duckdb = pytest.importorskip("duckdb")
    path = tmp_path / "lineitem.parquet"
    con = duckdb.connect()
    con.execute("SET TimeZone = 'UTC'")
    con.execute(f"""
        COPY (SELECT i AS l_orderkey,
                     (i % 7 + 1)::INTEGER AS l_linenumber,
                     ((i * 37) % 500000 / 100.0)::DECIMAL(15, 2) AS l_extendedprice,
                     CASE WHEN i % 11 = 0 THEN NULL ELSE (((i % 21) - 10) / 100)::DECIMAL(15, 2) END AS l_tax,
                     (i * 13 % 36 / 7 - 2)::DECIMAL(38, 10) AS wide,
                     DATE '1992-01-01' + (i * 7 % 2500)::INTEGER AS l_shipdate,
                     CASE WHEN i % 5 = 0 THEN NULL ELSE DATE '1995-06-17' + (i % 90)::INTEGER END AS l_commitdate,
                     TIMESTAMPTZ '1996-03-10 12:00:00+00' + to_seconds(i * 997) AS shipped_at,
                     ['A', 'N', 'R'][i % 3 + 1] AS l_returnflag,
                     CASE WHEN i % 13 = 0 THEN NULL ELSE 'comment ' || (i * 31 % 977)::VARCHAR END AS l_comment
              FROM range({N}) t(i))
        TO '{path}' (FORMAT PARQUET, ROW_GROUP_SIZE 3000)""")
    con.close()
    got = _same_frame(path.read_bytes())
    assert got["l_tax"].isna().sum() > 0
    assert {type(v) for v in got["l_tax"].dropna()} == {type(v) for v in got["wide"]} == {decimal.Decimal}


def test_a_slice_of_the_table_to_pandas_is_pyarrows_slice(mode: str) -> None:
    # strings of a slice start past offset 0 in their buffers
    frame = _lineitem_frame(seed=7)
    sink = io.BytesIO()
    pq.write_table(_arrow_table(frame, False), sink, row_group_size=4_000)
    want = pq.read_table(io.BytesIO(sink.getvalue())).slice(4_321, 2_500).to_pandas()
    got = pqbloom.read_table(io.BytesIO(sink.getvalue())).slice(4_321, 2_500).to_pandas()
    pd.testing.assert_frame_equal(got, want, check_exact=True)


def test_a_string_that_is_not_utf8_is_a_typed_error(mode: str) -> None:
    # a typed error naming the column, never a str column holding bytes that are not text
    arr = pa.array([b"ok", b"\xff\xfe", None], pa.binary()).view(pa.string())
    sink = io.BytesIO()
    pq.write_table(pa.table({"s": arr}), sink)
    with pytest.raises(pqbloom.errors.CorruptFileError, match="'s': a STRING value is not UTF-8"):
        pqbloom.read_table(io.BytesIO(sink.getvalue())).to_pandas()
