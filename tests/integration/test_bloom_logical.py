"""Bloom filters written by pyarrow, probed with logical Python values (datetime, date, time, Decimal,
UUID, numpy scalars...) through ``ParquetFile.bloom_filter(...).might_contain``,
``bloom_filter_might_contain`` and CLI ``probe``: every value pyarrow stored is found; values the
column cannot hold are absent (False), never an exception."""

from __future__ import annotations

import datetime as dt
import decimal
import uuid

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import pqbloom
from pqbloom.cli.main import main as cli_main

UTC = dt.timezone.utc
N = 200
D = decimal.Decimal


def _columns() -> dict[str, pa.Array]:
    rng = np.random.default_rng(7)
    base = dt.datetime(2024, 3, 1, 12, 0, 0)
    ts = [base + dt.timedelta(seconds=int(s), microseconds=int(u))
          for s, u in zip(rng.integers(0, 10**7, N), rng.integers(0, 10**6, N))]
    return {
        "ts_utc": pa.array([t.replace(tzinfo=UTC) for t in ts], pa.timestamp("us", tz="UTC")),
        "ts_naive": pa.array(ts, pa.timestamp("us")),
        "ts_ms": pa.array([t.replace(microsecond=t.microsecond // 1000 * 1000) for t in ts], pa.timestamp("ms")),
        "ts_ns": pa.array([t.replace(tzinfo=UTC) for t in ts], pa.timestamp("ns", tz="UTC")),
        "d": pa.array([t.date() for t in ts], pa.date32()),
        "t_ms": pa.array([t.time().replace(microsecond=t.microsecond // 1000 * 1000) for t in ts], pa.time32("ms")),
        "t_us": pa.array([t.time() for t in ts], pa.time64("us")),
        "dec9": pa.array([D(int(x)).scaleb(-2) for x in rng.integers(-10**8, 10**8, N)], pa.decimal128(9, 2)),
        "dec18": pa.array([D(int(x)).scaleb(-4) for x in rng.integers(-10**17, 10**17, N)], pa.decimal128(18, 4)),
        "dec30": pa.array([D(int(x) * 10**10).scaleb(-3) for x in rng.integers(-10**17, 10**17, N)],
                          pa.decimal128(30, 3)),
        "u": pa.array([uuid.UUID(int=int(x) << 64 | 12345).bytes for x in rng.integers(0, 2**62, N)], pa.uuid()),
        "s": pa.array([f"user{i}@example.com" for i in range(N)]),
        "b": pa.array([bytes([i % 256, i // 256, 7]) for i in range(N)]),
        "i8": pa.array(rng.integers(-128, 128, N), pa.int8()),
        "u32": pa.array(rng.integers(0, 2**32, N, dtype=np.uint64), pa.uint32()),
        "u64": pa.array(rng.integers(2**63, 2**64 - 1, N, dtype=np.uint64), pa.uint64()),
        "i64": pa.array(rng.integers(-2**62, 2**62, N), pa.int64()),
        "f32": pa.array(rng.standard_normal(N).astype(np.float32), pa.float32()),
        "f64": pa.array(rng.standard_normal(N), pa.float64()),
        "f16": pa.array(rng.standard_normal(N).astype(np.float16), pa.float16()),
        "u8": pa.array(rng.integers(0, 256, N, dtype=np.uint8), pa.uint8()),
    }


@pytest.fixture(scope="module")
def files(tmp_path_factory) -> tuple[dict[str, str], pa.Table]:
    """The same table written by pyarrow with decimals as FIXED_LEN_BYTE_ARRAY and as INT32/INT64."""
    table = pa.table(_columns())
    d = tmp_path_factory.mktemp("bloom_logical")
    paths = {}
    for name, as_int in (("flba", False), ("ints", True)):
        p = str(d / f"{name}.parquet")
        pq.write_table(table, p, bloom_filter_options={c: {"ndv": 4 * N, "fpp": 0.01} for c in table.column_names},
                       store_decimal_as_integer=as_int, row_group_size=N // 2)
        paths[name] = p
    # the matrix this module relies on: decimals as FIXED_LEN_BYTE_ARRAY and as INT32/INT64, UUID as FLBA(16)
    flba, ints = pq.ParquetFile(paths["flba"]).schema, pq.ParquetFile(paths["ints"]).schema
    i9, i18, iu = (table.column_names.index(c) for c in ("dec9", "dec18", "u"))
    assert flba.column(i9).physical_type == flba.column(i18).physical_type == "FIXED_LEN_BYTE_ARRAY"
    assert (ints.column(i9).physical_type, ints.column(i18).physical_type) == ("INT32", "INT64")
    assert ints.column(iu).physical_type == "FIXED_LEN_BYTE_ARRAY" and ints.column(iu).logical_type.type == "UUID"
    return paths, table


def _present(table: pa.Table, col: str, rg: int) -> list:
    return table.column(col).slice(rg * (N // 2), N // 2).to_pylist()  # UUIDs come as uuid.UUID


@pytest.mark.parametrize("layout", ["flba", "ints"])
def test_present_logical_values_are_found(files, layout):
    paths, table = files
    with pqbloom.ParquetFile(paths[layout]) as pf:
        for col in table.column_names:
            for rg in range(pf.num_row_groups):
                bf = pf.bloom_filter(rg, col)
                assert bf is not None, col
                for v in _present(table, col, rg):
                    assert bf.might_contain(v), (col, v)
                    assert pf.bloom_filter_might_contain(rg, col, v) is True, (col, v)


def test_other_spellings_of_present_values(files):
    paths, table = files
    with pqbloom.ParquetFile(paths["flba"]) as pf:
        ts = _present(table, "ts_naive", 0)[0]
        ts_utc = _present(table, "ts_utc", 0)[0]
        bf = pf.bloom_filter(0, "ts_utc")
        assert bf.might_contain(ts_utc.astimezone(dt.timezone(dt.timedelta(hours=-5))))  # same instant
        assert bf.might_contain(ts)  # naive on a UTC column: read as UTC
        assert bf.might_contain(np.datetime64(ts, "us"))
        assert bf.might_contain(ts.isoformat() + "Z")
        assert pf.bloom_filter(0, "ts_naive").might_contain(np.datetime64(ts, "ns"))
        dec = _present(table, "dec9", 0)[0]
        dbf = pf.bloom_filter(0, "dec9")
        assert dbf.might_contain(dec) and dbf.might_contain(D(str(dec) + "000")) and dbf.might_contain(str(dec))
        u = _present(table, "u", 0)[0]
        assert pf.bloom_filter(0, "u").might_contain(str(u)) and pf.bloom_filter(0, "u").might_contain(u.bytes)
        i8 = _present(table, "i8", 0)[0]
        assert pf.bloom_filter(0, "i8").might_contain(np.int8(i8)) and pf.bloom_filter(0, "i8").might_contain(float(i8))
        f32 = _present(table, "f32", 0)[0]
        assert pf.bloom_filter(0, "f32").might_contain(np.float32(f32))


def test_a_logical_probe_reads_two_small_ranges(files):
    paths, table = files
    with pqbloom.ParquetFile(paths["flba"]) as pf:
        for col in ("ts_utc", "dec30", "u", "d"):
            v = _present(table, col, 1)[0]
            r0, b0 = pf.io_stats.requests, pf.io_stats.bytes_read
            assert pf.bloom_filter_might_contain(1, col, v) is True
            assert pf.io_stats.requests - r0 == 2 and pf.io_stats.bytes_read - b0 <= 64 + 32, col
        r0 = pf.io_stats.requests
        assert pf.bloom_filter_might_contain(1, "i8", 1000) is False  # cannot be in an int8 column: no read
        assert pf.io_stats.requests == r0


def test_unrepresentable_values_are_absent(files):
    paths, table = files
    cases = {
        "dec9": [D("1.001"), D("10000000.00"), 0.001, float("nan")],  # below the scale; above 9 digits of FLBA(4)
        "ts_ms": [_present(table, "ts_ms", 0)[0] + dt.timedelta(microseconds=1)],  # not whole milliseconds
        "t_ms": [dt.time(1, 2, 3, 4)],
        "d": [dt.datetime(2024, 3, 5, 1)],  # not a midnight
        "i8": [200, -129, 1.5, 2**70],
        "u32": [-1, 2**32],
        "i64": [2**63, float("inf")],
        "u": [b"short", uuid.UUID(int=1).bytes + b"x"],
        "f32": [0.1],  # no float32 equals 0.1
        "f16": [0.1, 70000.0],  # no float16 equals either
        "u8": [-1, 256],
    }
    for layout in ("flba", "ints"):
        with pqbloom.ParquetFile(paths[layout]) as pf:
            for col, values in cases.items():
                bf = pf.bloom_filter(0, col)
                for v in values:
                    assert bf.might_contain(v) is False, (layout, col, v)
                    assert pf.bloom_filter_might_contain(0, col, v) is False, (layout, col, v)


def test_absent_values_mostly_absent(files):
    paths, table = files
    rng = np.random.default_rng(99)
    absent = {
        "ts_utc": [dt.datetime(2000, 1, 1, tzinfo=UTC) + dt.timedelta(seconds=int(s)) for s in rng.integers(0, 10**8, 200)],
        "d": [dt.date(1900, 1, 1) + dt.timedelta(days=int(x)) for x in range(200)],
        "dec30": [D(int(x)).scaleb(-3) for x in rng.integers(1, 10**9, 200)],
        "u": [uuid.UUID(int=int(x)) for x in rng.integers(0, 2**62, 200)],
        "s": [f"nobody{i}@example.org" for i in range(200)],
    }
    with pqbloom.ParquetFile(paths["flba"]) as pf:
        for col, values in absent.items():
            bf = pf.bloom_filter(0, col)
            hits = sum(bf.might_contain(v) for v in values)
            assert hits <= 20, (col, hits)


def test_cli_probe_parses_logical_values(files, capsys):
    paths, table = files
    ts = _present(table, "ts_utc", 0)[0]
    cases = [("ts_utc", ts.isoformat()), ("ts_utc", ts.strftime("%Y-%m-%dT%H:%M:%S.%fZ")),
             ("ts_naive", _present(table, "ts_naive", 0)[0].isoformat()),
             ("d", _present(table, "d", 0)[0].isoformat()), ("t_us", _present(table, "t_us", 0)[0].isoformat()),
             ("dec9", str(_present(table, "dec9", 0)[0])), ("dec30", str(_present(table, "dec30", 0)[0])),
             ("u", str(_present(table, "u", 0)[0])), ("s", _present(table, "s", 0)[0]),
             ("u64", str(_present(table, "u64", 0)[0]))]
    for layout in ("flba", "ints"):
        for col, text in cases:
            assert cli_main(["probe", paths[layout], col, text]) == 0
            out = capsys.readouterr().out.splitlines()
            assert out[0].startswith(f"row group 0: {col} = ") and out[0].endswith("may be present"), (col, out)
    assert cli_main(["probe", paths["flba"], "ts_utc", "not a time"]) == 2
    assert "cannot read 'not a time' as a timestamp" in capsys.readouterr().err
