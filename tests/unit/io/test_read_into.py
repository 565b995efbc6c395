"""Reads into a caller's buffer (RangeReader.read_into, which the chunk windows' scratch buffers are
filled by): a read fills exactly what it asks. (The scratch buffers themselves: tests/unit/memory.)"""

from __future__ import annotations

import io

import pytest

from pqbloom.errors import CorruptFileError
from pqbloom.io import RangeReader


@pytest.mark.parametrize("kind", ["path", "bytes", "file object"])
def test_read_into_fills_what_it_is_asked(tmp_path, kind: str) -> None:  # type: ignore[no-untyped-def]
    payload = bytes(range(256)) * 40
    path = tmp_path / "f.bin"
    path.write_bytes(payload)
    source = {"path": str(path), "bytes": payload, "file object": io.BytesIO(payload)}[kind]
    reader = RangeReader(source)  # type: ignore[arg-type]
    out = memoryview(bytearray(b"\xee" * 700))
    reader.read_into(1234, out[100:600], what="column chunk")
    assert bytes(out[100:600]) == payload[1234:1734]
    assert bytes(out[:100]) == b"\xee" * 100 and bytes(out[600:]) == b"\xee" * 100
    assert reader.stats.requests == 1 and reader.stats.bytes_read == 500
    with pytest.raises(CorruptFileError, match="column chunk of 500 bytes at offset 10000 lies outside"):
        reader.read_into(10000, out[:500], what="column chunk")
