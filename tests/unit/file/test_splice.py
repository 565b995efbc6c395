"""Splice (pqbloom/file/splice.py): bytes copied with ranges inserted, deleted or replaced, and every kept
byte's new offset. The oracle is the edit done by hand on a Python bytes object."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pqbloom.file import splice as splice_mod
from pqbloom.file.splice import Splice


def _apply(data: bytes, sp: Splice, block: int = 7) -> bytes:
    out = bytearray()
    old = splice_mod.COPY_BLOCK
    splice_mod.COPY_BLOCK = block
    try:
        n = sp.write(lambda o, k: data[o:o + k], out.extend)
    finally:
        splice_mod.COPY_BLOCK = old
    assert n == len(out) == sp.new_end
    return bytes(out)


@st.composite
def _edits(draw):
    size = draw(st.integers(2, 300))
    data = draw(st.binary(min_size=size, max_size=size))
    # disjoint edited ranges first, then insertions outside their interiors
    cuts = sorted(draw(st.lists(st.integers(1, size), max_size=8, unique=True)))
    ranges = []
    for a, b in zip(cuts[::2], cuts[1::2]):
        if a < b:
            ranges.append((a, b, draw(st.binary(max_size=20))))
    inside = {p for a, b, _ in ranges for p in range(a + 1, b)}
    inserts = [(p, draw(st.binary(min_size=1, max_size=20)))
               for p in draw(st.lists(st.integers(1, size), max_size=6)) if p not in inside]
    return data, ranges, inserts


@settings(max_examples=300, deadline=None)
@given(case=_edits())
def test_splice_matches_the_edit_done_by_hand(case):
    data, ranges, inserts = case
    sp = Splice(len(data))
    for a, b, rep in ranges:
        sp.replace(a, b, rep)
    handles = [(p, sp.insert(p, d), d) for p, d in inserts]
    # by hand: walk the positions, inserting before the byte, replacing ranges
    expected = bytearray()
    edited = {a: (b, rep) for a, b, rep in ranges}
    by_pos: dict[int, list[bytes]] = {}
    for p, d in inserts:
        by_pos.setdefault(p, []).append(d)
    where = {}
    i = 0
    while i <= len(data):
        for d in by_pos.get(i, []):
            expected += d
        if i == len(data):
            break
        if i in edited:
            b, rep = edited[i]
            where[i] = len(expected)
            expected += rep
            i = b
            continue
        where[i] = len(expected)
        expected.append(data[i])
        i += 1
    assert _apply(data, sp) == bytes(expected)
    for o, new in where.items():  # every kept byte (and each edited range's start) is found where it went
        assert sp.new_offset(o) == new
    kept = [o for o in where if not any(a <= o < b for a, b, _ in ranges)]
    assert sp.new_offsets(kept).tolist() == [where[o] for o in kept]
    for o in kept:
        assert expected[where[o]] == data[o]
    for p, idx, d in handles:
        off = sp.inserted_offset(p, idx)
        assert bytes(expected[off:off + len(d)]) == d
    assert sp.moves == (bool(ranges) or any(p < len(data) for p, _ in inserts))


def test_bad_edits_are_refused():
    sp = Splice(100)
    sp.delete(10, 20)
    with pytest.raises(ValueError, match="overlaps"):
        sp.replace(15, 30, b"x")
    with pytest.raises(ValueError, match="outside"):
        sp.insert(0, b"x")
    with pytest.raises(ValueError, match="outside"):
        sp.delete(90, 101)
    sp.insert(15, b"x")
    with pytest.raises(ValueError, match="inside"):
        sp.new_offset(50)


def test_a_short_read_is_an_error():
    sp = Splice(10)
    with pytest.raises(OSError, match="expected"):
        sp.write(lambda o, n: b"\0" * (n - 1), lambda b: None)
