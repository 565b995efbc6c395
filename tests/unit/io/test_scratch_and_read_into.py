"""Reused buffers for transient bytes (pqbloom.scratch) and reads into them (RangeReader.read_into):
a buffer someone still refers to is never handed out again, and a read fills exactly what it asks."""

from __future__ import annotations

import io

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pqbloom.errors import CorruptFileError
from pqbloom.io import RangeReader
from pqbloom.scratch import Scratch


@settings(max_examples=150, deadline=None)
@given(steps=st.lists(st.tuples(st.integers(0, 3000), st.booleans(), st.integers(0, 4)), min_size=1, max_size=40),
       keep=st.integers(1, 3))
def test_a_buffer_still_referred_to_is_never_taken_again(steps: list[tuple[int, bool, int]], keep: int) -> None:
    scratch = Scratch(keep=keep, smallest=256, largest=2048)  # sizes above largest: never kept
    held: list[tuple[memoryview, bytes]] = []
    for i, (size, hold, drop) in enumerate(steps):
        for _ in range(min(drop, len(held))):  # let some go (the oldest first)
            held.pop(0)
        buf = scratch.take(size)
        assert len(buf) == size and not buf.readonly
        fill = bytes([i % 251 + 1]) * size
        buf[:] = fill
        if hold:  # as a page whose values are views of its buffer
            held.append((np.frombuffer(buf, np.uint8), fill))  # type: ignore[arg-type]
        del buf
        for view, want in held:
            assert view.tobytes() == want
    assert len(scratch.bufs) <= keep


def test_a_let_go_buffer_is_taken_again() -> None:
    scratch = Scratch(keep=2, smallest=1024)
    first = scratch.take(1000)
    address = np.frombuffer(first, np.uint8).ctypes.data
    del first
    assert np.frombuffer(scratch.take(900), np.uint8).ctypes.data == address


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
