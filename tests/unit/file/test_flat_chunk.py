"""The compiled page loop (``pqbloom/_kernels/chunkloop.pyx``, :mod:`pqbloom.file.flat_chunk`): flat
INT32 / INT64 / FLOAT / DOUBLE chunks written by pyarrow read as pyarrow reads them, through the
compiled loop (checked: it decoded them, it did not give up), and every chunk it gives up on (corrupt
bytes, a CRC mismatch, a page it does not take) reads, or fails, exactly as the Python page loop makes
it."""

from __future__ import annotations

import io
from decimal import Decimal
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import pqbloom
from pqbloom.errors import ChecksumError, ParquetError
from pqbloom.file import chunks as chunks_module
from pqbloom.file import flat_chunk
from pqbloom.file.chunk_window import WINDOW

CODECS = ["NONE", "SNAPPY", "ZSTD", "LZ4", "GZIP", "BROTLI"]


class Calls:
    """What the compiled loop did with each chunk it was offered: decoded it, or gave up (None)."""

    def __init__(self, monkeypatch: Any) -> None:
        self.decoded = self.gave_up = self.selected = 0
        real = flat_chunk.decode_flat_chunk

        def spy(*args: Any, **kwargs: Any) -> Any:
            got = real(*args, **kwargs)
            self.selected += kwargs.get("positions") is not None and got is not None
            if got is None:
                self.gave_up += 1
            else:
                self.decoded += 1
            return got
        monkeypatch.setattr(chunks_module, "decode_flat_chunk", spy)


def _write(table: pa.Table, **options: Any) -> bytes:
    sink = io.BytesIO()
    pq.write_table(table, sink, **options)
    return sink.getvalue()


def _column(rng: np.random.Generator, dtype: str, n: int, null_rate: float, distinct: int) -> pa.Array:
    if dtype in ("decimal", "fixed5"):  # FIXED_LEN_BYTE_ARRAY: pyarrow's decimals, fixed-size binary
        ints = _column(rng, "int64", n, null_rate, distinct)
        if dtype == "decimal":
            return pa.array([None if v is None else Decimal(v % 10**13).scaleb(-2) for v in ints.to_pylist()],
                            pa.decimal128(15, 2))
        return pa.array([None if v is None else (v % 2**40).to_bytes(5, "little") for v in ints.to_pylist()],
                        pa.binary(5))
    if dtype.startswith("f"):
        pool = rng.standard_normal(max(distinct, 1)).astype(dtype)
    else:
        info = np.iinfo(dtype)
        pool = rng.integers(info.min, info.max, max(distinct, 1), dtype=dtype, endpoint=True)
    values = pool[rng.integers(0, len(pool), n)]
    mask = rng.random(n) < null_rate if null_rate else None
    return pa.array(values, mask=mask)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(seed=st.integers(0, 2**32 - 1),
       dtype=st.sampled_from(["int32", "int64", "float32", "float64", "decimal", "fixed5"]),
       n=st.integers(0, 30_000), null_rate=st.sampled_from([0.0, 0.0, 0.1, 0.9, 1.0]),
       distinct=st.sampled_from([1, 7, 1000, 100_000]), codec=st.sampled_from(CODECS),
       version=st.sampled_from(["1.0", "2.0"]), dictionary=st.booleans(),
       page_size=st.sampled_from([512, 8192, 1 << 20]), required=st.booleans(), threads=st.booleans())
def test_pyarrow_files_read_as_pyarrow_reads_them_through_the_compiled_loop(
        monkeypatch: Any, seed: int, dtype: str, n: int, null_rate: float, distinct: int, codec: str,
        version: str, dictionary: bool, page_size: int, required: bool, threads: bool) -> None:
    rng = np.random.default_rng(seed)
    col = _column(rng, dtype, n, 0.0 if required else null_rate, distinct)
    field = pa.field("x", col.type, nullable=not required)
    table = pa.table({"x": col, "y": _column(rng, "int64", n, 0.0, 50)}, schema=pa.schema([field, ("y", pa.int64())]))
    data = _write(table, compression=codec, data_page_version=version, use_dictionary=dictionary,
                  data_page_size=page_size, row_group_size=rng.integers(1, 40_000), write_page_checksum=bool(seed % 2))
    calls = Calls(monkeypatch)
    got = pqbloom.read_table(io.BytesIO(data), use_threads=threads).to_arrow()
    assert got.equals(pq.read_table(io.BytesIO(data)))
    assert calls.gave_up == 0
    # every chunk is offered to the compiled loop but those whose value count its bytes could not hold
    # without long runs (all nulls, one value): their rows are allocated as their pages decode
    meta = pq.ParquetFile(io.BytesIO(data)).metadata
    offered = sum(1 for g in range(meta.num_row_groups) for c in range(2)
                  if 0 < meta.row_group(g).column(c).num_values
                  <= 256 * meta.row_group(g).column(c).total_compressed_size + 4096)
    assert calls.decoded == offered


def test_a_chunk_read_window_by_window_goes_through_the_compiled_loop(tmp_path: Any, monkeypatch: Any) -> None:
    """A local chunk of several windows (``file/chunk_window.py``): pages cut by a window's end are
    read on and decoded, nulls and dictionary fallback to PLAIN mid-chunk included."""
    rng = np.random.default_rng(5)
    n = 1_500_000
    values = rng.standard_normal(n)
    values[: n // 2] = np.round(values[: n // 2], 1)  # a dictionary first, then PLAIN pages
    table = pa.table({"x": pa.array(values, mask=rng.random(n) < 0.05), "k": np.arange(n)})
    pq.write_table(table, tmp_path / "w.parquet", compression="snappy", data_page_size=100_000,
                   dictionary_pagesize_limit=64 << 10)
    groups = pq.ParquetFile(tmp_path / "w.parquet").metadata.num_row_groups
    meta = pq.ParquetFile(tmp_path / "w.parquet").metadata.row_group(0)
    assert min(meta.column(i).total_compressed_size for i in range(2)) > 2 * WINDOW  # read by windows
    calls = Calls(monkeypatch)
    got = pqbloom.read_table(tmp_path / "w.parquet", use_threads=False).to_arrow()
    assert got.equals(pq.read_table(tmp_path / "w.parquet"))
    assert (calls.decoded, calls.gave_up) == (2 * groups, 0)


def _data_page_body(data: bytes) -> int:
    """The offset of a byte inside the first data page's values of column 0 (past its header)."""
    col = pq.ParquetFile(io.BytesIO(data)).metadata.row_group(0).column(0)
    return col.data_page_offset + col.total_compressed_size // 2 if not col.has_dictionary_page \
        else col.data_page_offset + (col.total_compressed_size - (col.data_page_offset - col.dictionary_page_offset)) // 2


def _read_both(monkeypatch: Any, data: bytes) -> tuple[Any, Any]:
    """The outcome of a read with the compiled loop, and with the Python loop only: the table as
    pyarrow, or the error's type and message."""
    def outcome() -> Any:
        try:
            return pqbloom.read_table(io.BytesIO(data), use_threads=False).to_arrow()
        except ParquetError as exc:
            return type(exc), str(exc)

    with_loop = outcome()
    with monkeypatch.context() as m:
        m.setattr(flat_chunk, "available", lambda: False)
        without = outcome()
    return with_loop, without


def test_a_crc_mismatch_is_the_python_loops_checksum_error(monkeypatch: Any) -> None:
    table = pa.table({"x": np.arange(10_000, dtype=np.int64)})
    data = bytearray(_write(table, compression="snappy", use_dictionary=False, write_page_checksum=True))
    at = _data_page_body(bytes(data))
    data[at] ^= 0x55
    calls = Calls(monkeypatch)
    with_loop, without = _read_both(monkeypatch, bytes(data))
    assert with_loop == without
    assert with_loop[0] is ChecksumError
    assert calls.gave_up == 1 and calls.decoded == 0
    # the same bytes without checking CRCs: the compiled loop decodes the page (snappy's output is wrong,
    # or snappy refuses it: whatever the Python loop does, the compiled loop does)
    with pqbloom.ParquetFile(io.BytesIO(bytes(data)), verify_checksums=False) as pf:
        try:
            got: Any = pf.read().to_arrow()
        except ParquetError as exc:
            got = type(exc)
    with monkeypatch.context() as m:
        m.setattr(flat_chunk, "available", lambda: False)
        with pqbloom.ParquetFile(io.BytesIO(bytes(data)), verify_checksums=False) as pf:
            try:
                expected: Any = pf.read().to_arrow()
            except ParquetError as exc:
                expected = type(exc)
    assert got == expected if isinstance(got, type) else got.equals(expected)


@pytest.mark.parametrize("codec", CODECS)
@pytest.mark.parametrize("dictionary", [True, False])
def test_corrupt_pages_fail_as_the_python_loop_fails(monkeypatch: Any, codec: str, dictionary: bool) -> None:
    """Bytes flipped all over the pages of a chunk (no CRC): each read gives what the Python loop
    gives, the same table or the same error."""
    rng = np.random.default_rng(11)
    n = 5_000
    table = pa.table({"x": pa.array(rng.integers(0, 300, n), mask=rng.random(n) < 0.2),
                      "f": rng.standard_normal(n).astype(np.float32)})
    data = _write(table, compression=codec, use_dictionary=dictionary, data_page_size=2048)
    col = pq.ParquetFile(io.BytesIO(data)).metadata.row_group(0).column(0)
    start = col.dictionary_page_offset if col.has_dictionary_page else col.data_page_offset
    for trial in range(40):
        bad = bytearray(data)
        for _ in range(1 + trial % 3):
            at = start + int(rng.integers(0, col.total_compressed_size))
            bad[at] = int(rng.integers(0, 256))
        with_loop, without = _read_both(monkeypatch, bytes(bad))
        if isinstance(with_loop, tuple) or isinstance(without, tuple):
            assert with_loop == without, trial
        else:
            assert with_loop.equals(without), trial


def test_chunks_it_does_not_take_read_through_the_python_loop(monkeypatch: Any) -> None:
    """DELTA_BINARY_PACKED and BYTE_STREAM_SPLIT chunks, strings, booleans, nested and encrypted
    columns and reads under a memory limit are not offered to it; their tables are pyarrow's."""
    rng = np.random.default_rng(2)
    n = 20_000
    table = pa.table({"d": rng.integers(0, 10**6, n), "b": rng.standard_normal(n), "s": [str(i) for i in range(n)],
                      "t": rng.random(n) < 0.5, "l": pa.array([[i] for i in range(n)])})
    data = _write(table, use_dictionary=False, column_encoding={"d": "DELTA_BINARY_PACKED", "b": "BYTE_STREAM_SPLIT"})
    calls = Calls(monkeypatch)
    assert pqbloom.read_table(io.BytesIO(data)).to_arrow().equals(pq.read_table(io.BytesIO(data)))
    assert calls.decoded == calls.gave_up == 0
    plain = _write(pa.table({"x": rng.integers(0, 10, n)}))
    got = pqbloom.read_table(io.BytesIO(plain), memory_limit=64 << 20).to_arrow()
    assert got.equals(pq.read_table(io.BytesIO(plain)))
    assert calls.decoded == 0
    pqbloom.read_table(io.BytesIO(plain))
    assert calls.decoded == 1


def test_a_chunk_claiming_more_values_than_its_row_group_is_the_python_loops_error(monkeypatch: Any) -> None:
    table = pa.table({"x": np.arange(1000, dtype=np.int64)})
    data = _write(table, compression="NONE", use_dictionary=False)
    with pqbloom.ParquetFile(io.BytesIO(data)) as pf:
        pf.thrift_metadata.row_groups[0].num_rows = 999
        with pytest.raises(ParquetError) as raised:
            pf.read(use_threads=False)
    assert "claims 1,000 values for a row group of 999 rows" in str(raised.value)


def test_the_kernel_refuses_bad_arguments() -> None:
    """Arguments that do not fit are a ValueError before anything is decoded; where the module was not
    built, the wrapper says so (None) and every chunk goes to the Python loop."""
    from pqbloom.kernels import built
    from pqbloom.kernels.chunkloop import flat_chunk as make

    kernel = built("chunkloop")
    out = np.zeros(10, np.int64)
    every = np.empty(0, np.int64)
    if kernel is None:
        assert make(10, 8, out, None, decompress=None, check_crc=None, max_page=0, v2_always_compressed=False) is None
        return
    flags = np.empty(0, np.uint8)
    for args in [(11, 8, None, None, out.view(np.uint8), flags, 0, False, False, every),  # out too short
                 (10, 0, None, None, out.view(np.uint8), flags, 0, False, False, every),  # width
                 (10, 1 << 17, None, None, np.zeros(1 << 21, np.uint8), flags, 0, False, False, every),  # too wide
                 (10, 8, None, None, out.view(np.uint8), np.empty(5, np.uint8), 0, False, True, every),  # flags short
                 (10, 8, 99, None, out.view(np.uint8), flags, 0, False, False, every),  # not callable
                 (10, 8, None, None, out.view(np.uint8), flags, 0, False, False, np.array([3, 3])),  # not increasing
                 (10, 8, None, None, out.view(np.uint8), flags, 0, False, False, np.array([2, 10])),  # past the rows
                 (10, 8, None, None, out.view(np.uint8), flags, 0, False, False, np.array([-1]))]:  # negative
        with pytest.raises(ValueError):
            kernel.FlatChunk(*args)
    with pytest.raises(ValueError):  # a non-contiguous output would be a copy, written and lost
        make(5, 8, out[::2], None, decompress=None, check_crc=None, max_page=0, v2_always_compressed=False)
    state = kernel.FlatChunk(10, 8, None, None, out.view(np.uint8), flags, 0, False, False, every)
    with pytest.raises(ValueError):
        state.run(b"abc", 4)
    assert state.run(b"", 0) == 0 and state.need == 1 and not state.done


@pytest.mark.parametrize("threads", [False, True])
def test_filtered_reads_take_their_rows_from_chunks_the_compiled_loop_decoded(monkeypatch: Any, threads: bool) -> None:
    """Late materialization of the other columns of a filtered read (sparse and dense selections,
    nulls) decodes their chunks in the compiled loop and takes the selected rows: pyarrow's rows."""
    rng = np.random.default_rng(8)
    n = 200_000
    table = pa.table({"key": pa.array(rng.integers(0, 1000, n).astype(str)),
                      "id": np.arange(n, dtype=np.int64),
                      "x": pa.array(rng.standard_normal(n), mask=rng.random(n) < 0.3),
                      "k": pa.array(rng.integers(0, 50, n).astype(np.int32), mask=rng.random(n) < 0.1)})
    data = _write(table, compression="snappy", row_group_size=50_000)
    calls = Calls(monkeypatch)
    got = pqbloom.read_table(io.BytesIO(data), filters=pqbloom.field("key") == "7", use_threads=threads)
    assert calls.selected == 3 * 4  # id, x, k of each row group: their selected rows only, page by page
    for expr, spec in [(pqbloom.field("key") == "7", [("key", "==", "7")]),
                       (pqbloom.field("k") < 40, [("k", "<", 40)]),
                       (pqbloom.field("x") > 0.5, [("x", ">", 0.5)])]:
        got = pqbloom.read_table(io.BytesIO(data), filters=expr, use_threads=threads).to_arrow()
        assert got.equals(pq.read_table(io.BytesIO(data), filters=spec))
    assert calls.decoded > 0 and calls.gave_up == 0
