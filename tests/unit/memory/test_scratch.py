"""The scratch buffers of a read's transient bytes (pqbloom.memory.scratch) are leases: a buffer is handed out
again only after its holder released it, never while a lease or a view holds it; a second release is an
error; each thread has its own buffers. No reference counts are consulted (the package has no
``sys.getrefcount``)."""

from __future__ import annotations

import threading

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pqbloom.arrays import BinaryArray
from pqbloom.memory import scratch as scratch_mod
from pqbloom.memory.scratch import Lease, Scratch, may_view
from tests.paths import ROOT


def _address(lease: Lease) -> int:
    return int(np.frombuffer(lease.view, np.uint8).ctypes.data)


def test_no_reference_count_guesses_in_the_package() -> None:
    hits = [str(p.relative_to(ROOT)) for p in (ROOT / "pqbloom").rglob("*.py*")
            if p.suffix in (".py", ".pyx", ".pxd") and "getrefcount" in p.read_text()]
    assert hits == []


@settings(max_examples=150, deadline=None)
@given(steps=st.lists(st.tuples(st.sampled_from(["take", "release", "detach", "drop"]), st.integers(0, 3000),
                                st.integers(0, 7)), min_size=1, max_size=40),
       keep=st.integers(1, 3))
def test_a_buffer_is_reused_only_after_its_owner_released_it(steps: list[tuple[str, int, int]], keep: int) -> None:
    scratch = Scratch(keep=keep, smallest=256, largest=2048)  # sizes above largest: never kept
    held: list[tuple[Lease, np.ndarray, bytes]] = []  # a lease, a view of its buffer, what was written
    detached: list[tuple[np.ndarray, bytes]] = []  # views of buffers their lease left to them
    released: set[int] = set()  # addresses of buffers given back, which a take may hand out again
    for i, (op, size, pick) in enumerate(steps):
        if op == "take" or not held:
            lease = scratch.take(size)
            assert len(lease.view) == size and not lease.view.readonly and lease.held
            if size:
                mine = np.frombuffer(lease.view, np.uint8)
                for _, other, _ in held:  # never the memory of another live lease
                    assert not np.shares_memory(mine, other)
                for other, _ in detached:  # nor of a buffer left to its views
                    assert not np.shares_memory(mine, other)
                fill = bytes([i % 251 + 1]) * size
                lease.view[:] = fill
                held.append((lease, mine, fill))
            else:
                lease.release()
            continue
        lease, view, fill = held.pop(pick % len(held))
        if op == "release":
            lease.release()
            assert not lease.held
            released.add(int(view.ctypes.data))
        elif op == "detach":
            lease.detach()
            detached.append((view, fill))
        else:  # dropped without a release: never handed out again
            detached.append((view, fill))
        for _, other, want in held:
            assert other.tobytes() == want
        for other, want in detached:
            assert other.tobytes() == want
    assert len(scratch.free) <= keep


def test_a_released_buffer_is_taken_again() -> None:
    scratch = Scratch(keep=2, smallest=1024)
    first = scratch.take(1000)
    address = _address(first)
    second = scratch.take(900)  # the first is held: another buffer
    assert _address(second) != address
    first.release()
    assert _address(scratch.take(900)) == address


def test_double_release_is_an_error() -> None:
    scratch = Scratch(keep=2, smallest=1024)
    lease = scratch.take(100)
    lease.release()
    with pytest.raises(RuntimeError, match="released twice"):
        lease.release()
    with pytest.raises(RuntimeError, match="after its release"):
        lease.view  # noqa: B018 - the property raises
    assert len(scratch.free) == 1  # given back once
    other = scratch.take(100)
    other.detach()
    with pytest.raises(RuntimeError, match="detached"):
        other.release()
    with pytest.raises(RuntimeError):
        other.detach()


def test_a_with_block_releases_its_lease() -> None:
    scratch = Scratch(keep=2, smallest=1024)
    with scratch.take(10) as lease:
        address = _address(lease)
        assert lease.held
    assert not lease.held and _address(scratch.take(10)) == address
    with scratch.take(10) as kept:
        kept.detach()  # the block's end does not release a lease detached inside it
    assert not kept.held


def test_release_unless_viewed_keeps_a_viewed_buffer_out_of_reuse() -> None:
    scratch = Scratch(keep=2, smallest=1024)
    lease = scratch.take(64)
    lease.view[:] = b"\x07" * 64
    values = np.frombuffer(lease.view, np.int64)  # as PLAIN fixed-width values are
    assert lease.viewed_by(values) and not lease.release_unless_viewed(values)
    assert not lease.held and scratch.free == []
    again = scratch.take(64)
    again.view[:] = b"\x00" * 64
    assert not np.shares_memory(np.frombuffer(again.view, np.uint8), values)
    assert values.tolist() == [0x0707070707070707] * 8
    copied = values.copy()
    assert again.release_unless_viewed(copied, None, b"bytes", 3)  # nothing of it views the buffer
    assert len(scratch.free) == 1


def test_may_view_looks_into_binary_arrays_and_tuples_and_assumes_the_worst_of_the_rest() -> None:
    buf = np.zeros(100, np.uint8)
    inside = BinaryArray(np.array([0, 4, 10], np.int64), buf[20:30])
    outside = BinaryArray(np.array([0, 4, 10], np.int64), np.zeros(10, np.uint8))
    assert may_view(buf, inside) and not may_view(buf, outside)
    assert may_view(buf, (None, [outside, buf[99:]])) and not may_view(buf, (None, [outside], buf[:0]))
    assert may_view(buf, memoryview(buf))  # not a type it knows: taken to view it
    assert not may_view(buf, (None, b"x", "s", 1, 2.0))


def test_threads_get_separate_buffers() -> None:
    scratch = Scratch(keep=2, smallest=1024)
    mine = scratch.take(100)
    mine_address = _address(mine)
    mine.release()  # free in this thread: another thread does not get it
    got: dict[str, int] = {}
    ready = threading.Barrier(2)

    def work(name: str) -> None:
        lease = scratch.take(100)
        got[name] = _address(lease)
        ready.wait()  # both hold their lease at once
        lease.release()
        got[name + " free"] = len(scratch.free)

    threads = [threading.Thread(target=work, args=(n,)) for n in ("a", "b")]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len({got["a"], got["b"], mine_address}) == 3
    assert got["a free"] == got["b free"] == 1 and len(scratch.free) == 1  # each thread's own list
    assert _address(scratch.take(100)) == mine_address


def test_oversized_buffers_are_not_kept() -> None:
    scratch = Scratch(keep=2, smallest=1024, largest=4096)
    big = scratch.take(10_000)
    big.release()
    assert scratch.free == []


def test_poison_fills_a_released_buffer(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(scratch_mod, "POISON", True)
    scratch = Scratch(keep=2, smallest=1024)
    lease = scratch.take(16)
    lease.view[:] = b"\x01" * 16
    leaked = np.frombuffer(lease.view, np.uint8)  # a view kept past the release (a bug)
    lease.release()
    assert leaked.tolist() == [scratch_mod.POISON_BYTE] * 16

