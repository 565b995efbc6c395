"""Round trips against pyarrow in both directions: types, encodings, codecs, page versions, nulls."""

from __future__ import annotations

import datetime as dt
import decimal

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import pqbloom
from pqbloom.format import T
from tests.conftest import values_equal

RNG = np.random.default_rng(42)
N = 3000


def _with_nulls(values, every=7):
    return [None if i % every == 3 else v for i, v in enumerate(values)]


def _sample_columns():
    """(name, type spec, python values) covering every physical type and the common logical types."""
    ints = RNG.integers(-(2**31), 2**31 - 1, N).tolist()
    longs = RNG.integers(-(2**62), 2**62, N).tolist()
    strs = [f"s{int(x)}-{'é' * (int(x) % 3)}" for x in RNG.integers(0, 500, N)]
    return [
        ("b", "bool", [bool(x) for x in RNG.integers(0, 2, N)]),
        ("i32", "int32", ints),
        ("i64", "int64", longs),
        ("i8", "int8", RNG.integers(-128, 128, N).tolist()),
        ("i16", "int16", RNG.integers(-(2**15), 2**15, N).tolist()),
        ("u8", "uint8", RNG.integers(0, 256, N).tolist()),
        ("u16", "uint16", RNG.integers(0, 2**16, N).tolist()),
        ("u32", "uint32", RNG.integers(0, 2**32, N, dtype=np.uint64).tolist()),
        ("u64", "uint64", RNG.integers(0, 2**64 - 1, N, dtype=np.uint64).tolist()),
        ("f32", "float", [float(np.float32(x)) for x in RNG.normal(size=N)]),
        ("f64", "double", [float(x) for x in RNG.normal(size=N)] ),
        ("s", "string", strs),
        ("bin", "binary", [bytes(RNG.integers(0, 256, int(k), dtype=np.uint8)) for k in RNG.integers(0, 20, N)]),
        ("fixed", "fixed[5]", [bytes(RNG.integers(0, 256, 5, dtype=np.uint8)) for _ in range(N)]),
        ("date", "date", [dt.date(1960, 1, 1) + dt.timedelta(days=int(x)) for x in RNG.integers(0, 40000, N)]),
        ("ts_ms", "timestamp[ms]", [int(x) for x in RNG.integers(-(10**12), 10**13, N)]),
        ("ts_us_utc", "timestamp[us, UTC]", [int(x) for x in RNG.integers(-(10**15), 10**16, N)]),
        ("ts_ns", "timestamp[ns]", [int(x) for x in RNG.integers(-(10**18), 10**18, N)]),
        ("t_ms", "time[ms]", [int(x) for x in RNG.integers(0, 86_400_000, N)]),
        ("t_us", "time[us]", [int(x) for x in RNG.integers(0, 86_400_000_000, N)]),
        ("dec32", "decimal(9, 2)", [decimal.Decimal(int(x)).scaleb(-2) for x in RNG.integers(-(10**9) + 1, 10**9, N)]),
        ("dec64", "decimal(18, 4)", [decimal.Decimal(int(x)).scaleb(-4) for x in RNG.integers(-(10**17), 10**17, N)]),
        ("dec128", "decimal(30, 5)", [decimal.Decimal(int(x) * 10**12 + 7).scaleb(-5) for x in RNG.integers(-(10**17), 10**17, N)]),
        ("decbin", "decimal(12, 3) as binary", [decimal.Decimal(int(x)).scaleb(-3) for x in RNG.integers(-(10**11), 10**11, N)]),
        ("uuid", "uuid", [bytes(RNG.integers(0, 256, 16, dtype=np.uint8)) for _ in range(N)]),
        ("f16", "float16", [float(np.float16(x)) for x in RNG.normal(size=N)]),
        ("js", "json", [f'{{"k": {int(x)}}}' for x in RNG.integers(0, 50, N)]),
    ]


def _table(nulls: bool):
    data, types = {}, {}
    for name, spec, vals in _sample_columns():
        data[name] = _with_nulls(vals) if nulls else vals
        types[name] = spec
    schema = pqbloom.Schema.from_types(types, not_null=[] if nulls else list(types))
    return pqbloom.Table.from_pydict(data, schema)


def _arrow_read(path):
    return pq.read_table(path)


def _assert_same_as_arrow(ours: pqbloom.Table, arrow: pa.Table):
    assert arrow.num_rows == ours.num_rows
    for name in ours.column_names:
        got = ours.column(name).to_arrow()
        exp = arrow.column(name).combine_chunks()
        if got.type != exp.type:
            if pa.types.is_fixed_size_binary(got.type) or pa.types.is_binary(got.type) or pa.types.is_string(got.type):
                exp = exp.cast(got.type) if not hasattr(exp.type, "storage_type") else exp.storage.cast(got.type)
            else:
                exp = exp.cast(got.type)
        assert values_equal(got.to_pylist(), exp.to_pylist()), f"column {name} differs"


@pytest.mark.parametrize("nulls", [False, True], ids=["required", "nullable"])
@pytest.mark.parametrize("version", ["1.0", "2.0"])
@pytest.mark.parametrize("dictionary", [True, False], ids=["dict", "plain"])
def test_pqbloom_writes_pyarrow_reads_all_types(tmp_path, nulls, version, dictionary):
    t = _table(nulls)
    path = tmp_path / "t.parquet"
    pqbloom.write_table(t, path, data_page_version=version, use_dictionary=dictionary, data_page_size=4096,
                        row_group_size=1000, write_page_checksum=True)
    arrow = _arrow_read(path)
    _assert_same_as_arrow(t, arrow)
    # our own reader agrees too, and pyarrow verifies our page CRCs
    pq.read_table(path, page_checksum_verification=True)
    back = pqbloom.read_table(path)
    assert back.schema == t.schema
    for name in t.column_names:
        assert values_equal(back.column(name).to_pylist(), t.column(name).to_pylist()), name
    md = pq.read_metadata(path)
    assert md.num_row_groups == 3
    assert md.created_by.startswith("pqbloom version")


@pytest.mark.parametrize("codec", ["none", "snappy", "gzip", "zstd", "lz4_raw", "brotli"])
def test_codecs_both_directions(tmp_path, codec):
    t = _table(True)
    ours = tmp_path / "ours.parquet"
    pqbloom.write_table(t, ours, compression=codec, data_page_size=8192)
    _assert_same_as_arrow(t, _arrow_read(ours))
    # pyarrow names the LZ4_RAW codec (id 7) "LZ4"
    expected_name = {"none": "UNCOMPRESSED", "lz4_raw": "LZ4"}.get(codec, codec.upper())
    assert pq.read_metadata(ours).row_group(0).column(0).compression.upper() == expected_name
    theirs = tmp_path / "theirs.parquet"
    arrow = t.to_arrow()
    pq.write_table(arrow, theirs, compression="lz4" if codec == "lz4_raw" else codec, data_page_size=8192)
    back = pqbloom.read_table(theirs)
    _assert_same_as_arrow(back, pq.read_table(theirs))


@pytest.mark.parametrize("encoding,columns", [
    ("DELTA_BINARY_PACKED", ["i32", "i64", "u32", "date", "ts_ns", "dec64"]),
    ("DELTA_LENGTH_BYTE_ARRAY", ["s", "bin"]),
    ("DELTA_BYTE_ARRAY", ["s", "bin", "fixed"]),
    ("BYTE_STREAM_SPLIT", ["f32", "f64", "i32", "i64", "fixed"]),
])
@pytest.mark.parametrize("version", ["1.0", "2.0"])
def test_encodings_both_directions(tmp_path, encoding, columns, version):
    t = _table(True).select(columns)
    ours = tmp_path / "ours.parquet"
    pqbloom.write_table(t, ours, column_encoding={c: encoding for c in columns}, data_page_version=version,
                        data_page_size=2048)
    md = pq.read_metadata(ours)
    for i in range(len(columns)):
        assert encoding in md.row_group(0).column(i).encodings
    _assert_same_as_arrow(t, _arrow_read(ours))
    theirs = tmp_path / "theirs.parquet"
    # pyarrow stores decimal128 as FIXED_LEN_BYTE_ARRAY, which its delta encoder refuses
    columns = [c for c in columns if not c.startswith("dec")]
    t = t.select(columns)
    pq.write_table(t.to_arrow(), theirs, use_dictionary=False, column_encoding={c: encoding for c in columns},
                   data_page_version=version, data_page_size=2048)
    _assert_same_as_arrow(pqbloom.read_table(theirs), pq.read_table(theirs))


def test_pyarrow_dictionary_and_v2_and_nulls_read(tmp_path):
    arrow = _table(True).to_arrow()
    for version in ("1.0", "2.0"):
        p = tmp_path / f"d{version}.parquet"
        pq.write_table(arrow, p, data_page_version=version, use_dictionary=True, data_page_size=1024,
                       row_group_size=700)
        _assert_same_as_arrow(pqbloom.read_table(p), pq.read_table(p))


def test_pyarrow_boolean_rle_v2(tmp_path):
    arrow = pa.table({"b": pa.array(_with_nulls([bool(x) for x in RNG.integers(0, 2, 5000)]))})
    p = tmp_path / "b.parquet"
    pq.write_table(arrow, p, data_page_version="2.0", use_dictionary=False, column_encoding={"b": "RLE"})
    assert "RLE" in pq.read_metadata(p).row_group(0).column(0).encodings
    assert pqbloom.read_table(p).column("b").to_pylist() == arrow.column("b").to_pylist()


def test_statistics_visible_to_pyarrow(tmp_path):
    t = pqbloom.Table.from_pydict({"x": [5, None, -3, 12], "s": ["b", "a", None, "c"]})
    p = tmp_path / "s.parquet"
    pqbloom.write_table(t, p)
    st_x = pq.read_metadata(p).row_group(0).column(0).statistics
    assert (st_x.min, st_x.max, st_x.null_count) == (-3, 12, 1)
    st_s = pq.read_metadata(p).row_group(0).column(1).statistics
    assert (st_s.min, st_s.max, st_s.null_count) == ("a", "c", 1)


def test_key_value_metadata_and_schema_round_trip(tmp_path):
    p = tmp_path / "kv.parquet"
    pqbloom.write_table({"a": [1, 2]}, p, key_value_metadata={"origin": "test", "n": "2"})
    assert pq.read_metadata(p).metadata[b"origin"] == b"test"
    assert pqbloom.ParquetFile(p).key_value_metadata == {"origin": "test", "n": "2"}


def test_pandas_and_arrow_inputs(tmp_path):
    import pandas as pd

    df = pd.DataFrame({"a": [1, 2, 3], "b": ["x", None, "z"], "c": [1.5, float("nan"), None]})
    p = tmp_path / "pd.parquet"
    pqbloom.write_table(df, p)
    back = pqbloom.read_table(p)
    assert back.column("b").to_pylist() == ["x", None, "z"]
    # pandas' missing-value NaN is stored as a null, as pyarrow's from_pandas stores it
    assert back.column("c").to_pylist() == pa.Table.from_pandas(df).column("c").to_pylist() == [1.5, None, None]
    p2 = tmp_path / "pa.parquet"
    at = pa.table({"x": pa.array([1, None, 3], pa.int16()), "y": pa.array(["a", "b", None], pa.large_string())})
    pqbloom.write_table(at, p2)
    assert pq.read_table(p2).column("x").to_pylist() == [1, None, 3]
    assert pqbloom.read_table(p2).to_pandas()["y"].tolist()[:2] == ["a", "b"]


def test_iter_batches_and_file_objects(tmp_path):
    t = _table(True).select(["i64", "s"])
    p = tmp_path / "b.parquet"
    pqbloom.write_table(t, p, row_group_size=1000)
    with open(p, "rb") as fh:
        pf = pqbloom.ParquetFile(fh)
        batches = list(pf.iter_batches(batch_size=400, columns=["s"]))
    assert max(b.num_rows for b in batches) == 400
    assert sum(b.num_rows for b in batches) == N
    assert [v for b in batches for v in b.column("s").to_pylist()] == t.column("s").to_pylist()
    pf = pqbloom.ParquetFile(p)
    assert pf.read_row_group(2).column("i64").to_pylist() == t.column("i64").to_pylist()[2000:3000]


def test_special_floats_bitwise(tmp_path):
    vals = np.array([0.0, -0.0, np.nan, np.inf, -np.inf, 1e-310, -1.5], dtype=np.float64)
    weird_nan = np.array([0x7FF8000000000123], dtype=np.uint64).view(np.float64)
    vals = np.concatenate([vals, weird_nan])
    p = tmp_path / "f.parquet"
    pqbloom.write_table({"f": vals}, p, use_dictionary=False)
    back = pqbloom.read_table(p).column("f").values
    assert back.view(np.uint64).tolist() == vals.view(np.uint64).tolist()
    arrow = pq.read_table(p).column("f").to_numpy()
    assert arrow.view(np.uint64).tolist() == vals.view(np.uint64).tolist()
    st_ = pq.read_metadata(p).row_group(0).column(0).statistics
    assert st_.min == -np.inf and st_.max == np.inf


_scalar_types = {
    "int64": st.integers(-(2**63), 2**63 - 1),
    "int32": st.integers(-(2**31), 2**31 - 1),
    "double": st.floats(allow_nan=False, width=64),
    "float": st.floats(allow_nan=False, width=32),
    "string": st.text(max_size=12),
    "binary": st.binary(max_size=12),
    "bool": st.booleans(),
}


@st.composite
def _tables(draw):
    ncols = draw(st.integers(1, 4))
    nrows = draw(st.integers(0, 60))
    types, data = {}, {}
    for i in range(ncols):
        spec = draw(st.sampled_from(sorted(_scalar_types)))
        nullable = draw(st.booleans())
        elem = _scalar_types[spec]
        vals = draw(st.lists(st.none() | elem if nullable else elem, min_size=nrows, max_size=nrows))
        types[f"c{i}"] = (spec, nullable)
        data[f"c{i}"] = vals
    return types, data


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(tbl=_tables(), version=st.sampled_from(["1.0", "2.0"]), dictionary=st.booleans(),
       codec=st.sampled_from(["none", "snappy", "zstd"]))
def test_hypothesis_round_trip_with_pyarrow(tmp_path_factory, tbl, version, dictionary, codec):
    types, data = tbl
    schema = pqbloom.Schema([pqbloom.make_field(n, s, nullable=nl) for n, (s, nl) in types.items()])
    t = pqbloom.Table.from_pydict(data, schema)
    d = tmp_path_factory.mktemp("h")
    ours = d / "ours.parquet"
    pqbloom.write_table(t, ours, data_page_version=version, use_dictionary=dictionary, compression=codec,
                        data_page_size=64, row_group_size=25)
    arrow = pq.read_table(ours)
    for n in t.column_names:
        exp = data[n]
        got = arrow.column(n).to_pylist()
        if types[n][0] == "float":
            exp = [None if v is None else float(np.float32(v)) for v in exp]
        assert values_equal(got, exp), n
    theirs = d / "theirs.parquet"
    pq.write_table(arrow, theirs, data_page_version=version, use_dictionary=dictionary, compression=codec,
                   data_page_size=64, row_group_size=25)
    back = pqbloom.read_table(theirs)
    for n in t.column_names:
        assert values_equal(back.column(n).to_pylist(), arrow.column(n).to_pylist()), n


def test_column_orders_and_created_by_in_footer(tmp_path):
    p = tmp_path / "o.parquet"
    pqbloom.write_table({"a": [1]}, p)
    md = pqbloom.read_metadata(p)
    assert isinstance(md, pqbloom.FileMetadata)
    assert md.created_by.startswith("pqbloom version ")
    with pqbloom.ParquetFile(p) as pf:  # the raw footer: TYPE_ORDER column orders
        raw = pf.thrift_metadata
    assert raw.column_orders and raw.column_orders[0].TYPE_ORDER is not None


def test_iter_batches_streams_pages_with_nulls_and_dictionary(tmp_path):
    t = _table(True).select(["i64", "s", "b", "date"])
    p = tmp_path / "stream.parquet"
    pqbloom.write_table(t, p, row_group_size=1200, data_page_size=512, data_page_version="2.0")
    pf = pqbloom.ParquetFile(p)
    seen = {n: [] for n in t.column_names}
    sizes = []
    for b in pf.iter_batches(batch_size=333):
        sizes.append(b.num_rows)
        for n in t.column_names:
            seen[n].extend(b.column(n).to_pylist())
    assert max(sizes) == 333 and sum(sizes) == N
    # as pyarrow's: every batch but the last has batch_size rows, across row groups (1200 = 3*333 + 201)
    assert sizes == [333] * (N // 333) + ([N % 333] if N % 333 else [])
    assert sizes == [b.num_rows for b in pq.ParquetFile(p).iter_batches(batch_size=333)]
    for n in t.column_names:
        assert values_equal(seen[n], t.column(n).to_pylist()), n


@pytest.mark.traces_memory
def test_iter_batches_memory_is_bounded_by_the_batch(tmp_path):
    import tracemalloc

    n = 400_000
    p = tmp_path / "big.parquet"
    pqbloom.write_table({"id": np.arange(n, dtype=np.int64), "x": RNG.random(n)}, p, row_group_size=n,
                        compression="none", data_page_size=64 * 1024)
    full_bytes = n * 16
    pf = pqbloom.ParquetFile(p)
    tracemalloc.start()
    try:
        rows = 0
        for b in pf.iter_batches(batch_size=5_000):
            rows += b.num_rows
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert rows == n
    # the compressed chunk buffers (uncompressed here: 2 x 3.2 MB) plus a batch, not the decoded table twice
    assert peak < 1.3 * full_bytes, peak
    tracemalloc.start()
    try:
        pf.read()
        _, peak_full = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < peak_full


def test_decimal_38_digits_exact_both_directions(tmp_path):
    vals = [decimal.Decimal("1234567890123456789012345678.9012345678"),
            decimal.Decimal("-9999999999999999999999999999.9999999999"), None]
    t = pqbloom.Table.from_pydict({"d": vals}, pqbloom.Schema.from_types({"d": "decimal(38, 10)"}))
    p = tmp_path / "d.parquet"
    pqbloom.write_table(t, p)
    assert pq.read_table(p).column("d").to_pylist() == vals
    assert pqbloom.read_table(p).column("d").to_pylist() == vals
    p2 = tmp_path / "d2.parquet"
    pq.write_table(pa.table({"d": pa.array(vals, pa.decimal128(38, 10))}), p2)
    assert pqbloom.read_table(p2).column("d").to_pylist() == vals


def test_decimal_as_fixed_type_string():
    f = pqbloom.make_field("d", "decimal(5, 1) as fixed[3]")
    assert (f.physical_type, f.type_length) == (T.Type.FIXED_LEN_BYTE_ARRAY, 3)
