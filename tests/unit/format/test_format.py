"""Thrift codec, corrupt input handling, atomic writes, CLI."""

from __future__ import annotations

import os
import subprocess
import sys

import numpy as np
import pyarrow.parquet as pq
import pytest
from thrift.protocol import TCompactProtocol

import pqbloom
from pqbloom import format as fmt
from pqbloom.errors import CorruptFileError, ParquetError, SchemaError
from pqbloom.format import T, enums
from tests.conftest import FIXTURES
from tests.paths import ROOT


def test_accelerated_codec_is_used(monkeypatch):
    assert fmt.ACCELERATED

    def boom(*a, **k):
        raise AssertionError("pure-Python Thrift path used")

    monkeypatch.setattr(TCompactProtocol.TCompactProtocol, "readStructBegin", boom)
    monkeypatch.setattr(TCompactProtocol.TCompactProtocol, "writeStructBegin", boom)
    data = (FIXTURES / "data" / "alltypes_plain.parquet").read_bytes()
    n = int.from_bytes(data[-8:-4], "little")
    md = fmt.decode(T.FileMetaData, data[-8 - n:-8])
    assert md.num_rows == 8
    assert fmt.decode(T.FileMetaData, fmt.encode(md)) == md


@pytest.mark.parametrize("enum, thrift_name", [
    (enums.PhysicalType, "Type"), (enums.Encoding, "Encoding"), (enums.PageType, "PageType"),
    (enums.CompressionCodec, "CompressionCodec"), (enums.ConvertedType, "ConvertedType"),
    (enums.FieldRepetitionType, "FieldRepetitionType"), (enums.BoundaryOrder, "BoundaryOrder")])
def test_enums_have_the_thrift_values(enum, thrift_name):
    # the IntEnums stand in for the generated enumerations: same names, same numbers
    assert {m.name: m.value for m in enum} == getattr(T, thrift_name)._NAMES_TO_VALUES


def test_dtype_table_covers_the_fixed_width_numbers():
    # the values of each physical type in memory: the one table, stored little-endian
    assert {enums.PhysicalType(p).name: str(d) for p, d in enums.NUMERIC_DTYPES.items()} == {
        "INT32": "int32", "INT64": "int64", "FLOAT": "float32", "DOUBLE": "float64"}
    assert all(d == d.newbyteorder("<") for d in enums.NUMERIC_DTYPES.values())
    assert enums.numpy_dtype(T.Type.BOOLEAN) == np.dtype(bool) and enums.numpy_dtype(T.Type.INT96) is None
    assert enums.numpy_dtype(T.Type.BYTE_ARRAY) is None and enums.numpy_dtype(T.Type.FIXED_LEN_BYTE_ARRAY) is None
    assert enums.name_of(enums.Encoding, 8) == "RLE_DICTIONARY" and enums.name_of(enums.Encoding, 99) == "99"


def test_bloom_header_bytes_match_the_spec_example():
    h = T.BloomFilterHeader(numBytes=1024, algorithm=T.BloomFilterAlgorithm(BLOCK=T.SplitBlockAlgorithm()),
                            hash=T.BloomFilterHash(XXHASH=T.XxHash()),
                            compression=T.BloomFilterCompression(UNCOMPRESSED=T.Uncompressed()))
    assert fmt.encode(h).hex() == "1580101c1c00001c1c00001c1c000000"


def test_decode_ignores_trailing_padding_and_reports_consumption():
    h = T.PageHeader(type=0, uncompressed_page_size=10, compressed_page_size=10)
    raw = fmt.encode(h)
    obj, used = fmt.decode_prefix(T.PageHeader, raw + b"\x00" * 84)
    assert obj == h and used == len(raw)


def test_unknown_union_member_and_fields_are_skipped():
    # a SchemaElement whose LogicalType carries member id 40 (unknown) and an unknown field 99
    el = T.SchemaElement(name="x", type=T.Type.BYTE_ARRAY)
    raw = bytearray(fmt.encode(el)[:-1])  # drop STOP
    # field 10 (struct, delta 10 from last id 4? use long form): type 0x0C struct, id 10 zigzag varint
    raw += bytes([0x0C, 0x14])  # long-form header: type struct, id 10 -> zigzag 20
    raw += bytes([0x0C, 0x50])  # inside LogicalType: field id 40 (zigzag 80) struct
    raw += bytes([0x00])  # empty struct STOP
    raw += bytes([0x00])  # LogicalType STOP
    raw += bytes([0x05, 0xC6, 0x01, 0x02])  # field 99 i32 = 1
    raw += bytes([0x00])
    out = fmt.decode(T.SchemaElement, bytes(raw))
    assert out.name == "x" and out.type == T.Type.BYTE_ARRAY


def test_regenerated_bindings_match(tmp_path):
    if subprocess.run(["which", "thrift"], capture_output=True).returncode != 0:
        pytest.fail("thrift compiler missing: install thrift-compiler")
    r = subprocess.run([sys.executable, "scripts/gen_thrift.py", "--check"], capture_output=True, text=True,
                       cwd=ROOT)
    assert r.returncode == 0, r.stderr


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


def test_cli_inspect_and_errors(tmp_path):
    p = _good_file(tmp_path)
    r = subprocess.run([sys.executable, "-m", "pqbloom.cli", "inspect", str(p)], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    assert "row group 0" in r.stdout and "ZSTD" in r.stdout and "column index" in r.stdout
    r = subprocess.run([sys.executable, "-m", "pqbloom.cli", "inspect", str(tmp_path / "missing.parquet")],
                       capture_output=True, text=True)
    assert r.returncode == 1 and "Traceback" not in r.stderr and "missing.parquet" in r.stderr
    bad = tmp_path / "bad.parquet"
    bad.write_bytes(b"PAR1 nonsense")
    r = subprocess.run([sys.executable, "-m", "pqbloom.cli", "schema", str(bad)], capture_output=True, text=True)
    assert r.returncode == 1 and "Traceback" not in r.stderr and "Parquet" in r.stderr


def test_cli_demo_runs(tmp_path):
    r = subprocess.run([sys.executable, "-m", "pqbloom.cli", "demo", "--rows", "20000", "--output-dir", str(tmp_path)],
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    assert "equal to what was written: True" in r.stdout
    assert "bloom filter: offset" in r.stdout
