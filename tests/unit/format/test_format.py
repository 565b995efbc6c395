"""The Thrift codec and the format enums: accelerated path, spec bytes, unknown fields, regenerated bindings."""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest
from thrift.protocol import TCompactProtocol

from pqbloom import format as fmt
from pqbloom.format import T, enums
from tests.corpora import needs
from tests.paths import FIXTURES, ROOT


@needs(FIXTURES)
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


def _gen_thrift():
    import importlib.util

    spec = importlib.util.spec_from_file_location("gen_thrift", ROOT / "scripts" / "gen_thrift.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_regenerated_bindings_match():
    """The committed bindings are what scripts/gen_thrift.py generated from the committed IDL.

    No Thrift compiler needed (a fresh machine has none): thrift/GENERATED.json records the IDL's hash,
    the compiler version and each generated file's hash; CI regenerates with the compiler
    (``gen_thrift.py --check`` in .ci/run)."""
    r = subprocess.run([sys.executable, "scripts/gen_thrift.py", "--verify"], capture_output=True, text=True,
                       cwd=ROOT, env={"PATH": "/nonexistent", "PYTHONPATH": str(ROOT)})
    assert r.returncode == 0, r.stderr


@pytest.mark.parametrize("edited", ["thrift/parquet.thrift", "pqbloom/_thrift/ttypes.py"])
def test_bindings_check_catches_edits_without_regeneration(tmp_path, monkeypatch, edited):
    import shutil

    g = _gen_thrift()
    root = tmp_path / "repo"
    for rel in ("thrift", "pqbloom/_thrift"):
        shutil.copytree(ROOT / rel, root / rel, ignore=shutil.ignore_patterns("__pycache__"))
    monkeypatch.setattr(g, "ROOT", root)
    monkeypatch.setattr(g, "IDL", root / "thrift" / "parquet.thrift")
    monkeypatch.setattr(g, "TARGET", root / "pqbloom" / "_thrift")
    monkeypatch.setattr(g, "RECORD", root / "thrift" / "GENERATED.json")
    assert g.verify() == []
    with open(root / edited, "a") as fh:
        fh.write("\n// edited by hand\n" if edited.endswith(".thrift") else "\n# edited by hand\n")
    problems = g.verify()
    assert problems and any(edited.rsplit("/", 1)[-1] in p for p in problems), problems
