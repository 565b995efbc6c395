"""Whole files under damage and failure: truncated, garbage and bit-flipped input raise typed errors; a failed
write leaves nothing and keeps the old file; row groups stream."""

from __future__ import annotations

import os

import pyarrow.parquet as pq
import pytest

import pqbloom
from pqbloom.errors import CorruptFileError, ParquetError, SchemaError


def _good_file(tmp_path):
    p = tmp_path / "good.parquet"
    pqbloom.write_table({"a": list(range(1000)), "s": [str(i) for i in range(1000)]}, p, compression="zstd")
    return p


@pytest.mark.parametrize("cut", [1, 4, 8, 50, 200])
def test_truncated_files_raise_typed_errors(tmp_path, cut):
    data = _good_file(tmp_path).read_bytes()
    bad = tmp_path / "bad.parquet"
    bad.write_bytes(data[:-cut])
    with pytest.raises(ParquetError):
        pqbloom.read_table(bad)


def test_garbage_and_tiny_files(tmp_path):
    for blob in (b"", b"PAR1", b"PAR1PAR1", b"x" * 100, b"PAR1" + b"\xff" * 100 + (90).to_bytes(4, "little") + b"PAR1"):
        p = tmp_path / "g.parquet"
        p.write_bytes(blob)
        with pytest.raises(CorruptFileError):
            pqbloom.read_table(p)


def test_every_byte_flip_in_pages_gives_typed_error_or_data(tmp_path):
    p = _good_file(tmp_path)
    data = bytearray(p.read_bytes())
    n = int.from_bytes(data[-8:-4], "little")
    for i in range(4, len(data) - 8 - n, 97):
        d = bytearray(data)
        d[i] ^= 0xFF
        q = tmp_path / "f.parquet"
        q.write_bytes(bytes(d))
        try:
            pqbloom.read_table(q)
        except ParquetError:
            pass


def test_failed_write_leaves_nothing_and_keeps_old_file(tmp_path):
    target = tmp_path / "t.parquet"
    pqbloom.write_table({"a": [1, 2, 3]}, target)
    before = target.read_bytes()

    with pytest.raises(SchemaError):
        with pqbloom.ParquetWriter(target, pqbloom.Schema.from_types({"a": "int64"})) as w:
            w.write_table({"a": [4, 5, 6]})
            w.write_table({"a": ["not", "ints", "!"]})
    assert target.read_bytes() == before
    assert sorted(os.listdir(tmp_path)) == ["t.parquet"]

    with pytest.raises(RuntimeError):
        with pqbloom.ParquetWriter(tmp_path / "new.parquet", pqbloom.Schema.from_types({"a": "int64"})) as w:
            w.write_table({"a": [1]})
            raise RuntimeError("user code failed")
    assert sorted(os.listdir(tmp_path)) == ["t.parquet"]


def test_not_null_violation_is_schema_error(tmp_path):
    with pytest.raises(SchemaError):
        pqbloom.write_table(pqbloom.Table.from_pydict({"a": [1, None]}, pqbloom.Schema.from_types({"a": "int64"}, not_null=["a"])),
                            tmp_path / "x.parquet")
    assert not (tmp_path / "x.parquet").exists()


def test_writer_streams_row_groups(tmp_path):
    p = tmp_path / "w.parquet"
    schema = pqbloom.Schema.from_types({"id": "int64", "name": "string"})
    with pqbloom.ParquetWriter(p, schema, compression="zstd") as w:
        for k in range(3):
            w.write_batch({"id": list(range(k * 10, k * 10 + 10)), "name": [f"n{i}" for i in range(10)]})
    md = pq.read_metadata(p)
    assert md.num_row_groups == 3 and md.num_rows == 30
    assert pq.read_table(p).column("id").to_pylist() == list(range(30))
