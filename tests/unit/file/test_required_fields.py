"""Footers that lack a required Thrift field: every peer refuses them, so pqbloom raises CorruptFileError.

The oracle is pyarrow (parquet-cpp's Thrift decoder checks required fields); the files are written by
pyarrow and re-encoded with one field removed.
"""

from __future__ import annotations

import io
import struct
from collections.abc import Callable
from typing import Any

import pytest

pa = pytest.importorskip("pyarrow")
pq = pytest.importorskip("pyarrow.parquet")

from thrift.protocol import TCompactProtocol  # noqa: E402
from thrift.transport import TTransport  # noqa: E402

import pqbloom  # noqa: E402
from pqbloom._thrift.ttypes import FileMetaData  # noqa: E402
from pqbloom.errors import CorruptFileError  # noqa: E402


def _pyarrow_file() -> tuple[bytes, bytes]:
    buf = io.BytesIO()
    pq.write_table(pa.table({"a": [1, 2, 3], "s": ["x", "y", "z"]}), buf)
    raw = buf.getvalue()
    n = struct.unpack("<i", raw[-8:-4])[0]
    return raw[:-8 - n], raw[-8 - n:-8]


def _decode(b: bytes) -> Any:
    md = FileMetaData()
    md.read(TCompactProtocol.TCompactProtocol(TTransport.TMemoryBuffer(b)))
    return md


def _encode(md: Any) -> bytes:
    t = TTransport.TMemoryBuffer()
    md.write(TCompactProtocol.TCompactProtocol(t))
    return t.getvalue()


def _unset(*path: str | int) -> Callable[[Any], None]:
    def edit(md: Any) -> None:
        obj = md
        for step in path[:-1]:
            obj = obj[step] if isinstance(step, int) else getattr(obj, step)
        setattr(obj, str(path[-1]), None)
    return edit


CASES = {
    "file num_rows": _unset("num_rows"),
    "file version": _unset("version"),
    "column type": _unset("row_groups", 0, "columns", 0, "meta_data", "type"),
    "column path_in_schema": _unset("row_groups", 0, "columns", 1, "meta_data", "path_in_schema"),
    "column codec": _unset("row_groups", 0, "columns", 0, "meta_data", "codec"),
    "column num_values": _unset("row_groups", 0, "columns", 1, "meta_data", "num_values"),
    "column data_page_offset": _unset("row_groups", 0, "columns", 0, "meta_data", "data_page_offset"),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_footer_without_a_required_field_is_corrupt(tmp_path: Any, case: str) -> None:
    body, footer = _pyarrow_file()
    md = _decode(footer)
    CASES[case](md)
    new = _encode(md)
    path = tmp_path / "missing.parquet"
    path.write_bytes(body + new + struct.pack("<i", len(new)) + b"PAR1")
    with pytest.raises(OSError):  # the oracle: parquet-cpp refuses the footer (ArrowInvalid is an OSError)
        pq.read_table(path)
    with pytest.raises(CorruptFileError, match="required field|lacks"):
        pqbloom.read_table(str(path))
