"""A minimal FlatBuffers encoder and bounds-checked decoder (tables, strings, vectors, scalars).

Only what Arrow's IPC ``Schema`` message needs (see :mod:`pqbloom.table.arrow_schema`); no code
generation and no dependency. The encoder lays a buffer out front to back: each table is preceded
by its vtable and followed by the objects it refers to, so every offset points forward, as the
format requires, and every scalar sits at a multiple of its size from the buffer's start, as
FlatBuffers verifiers (Arrow's among them) check. The decoder never reads outside its buffer and
bounds nesting depth, so a hostile buffer costs an exception, never a crash or a hang.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass, field
from typing import Any

__all__ = ["FlatbufferError", "Scalar", "Table", "Vector", "encode", "TableView", "root"]

MAX_DEPTH = 64  # as FlatBuffers' own verifier


class FlatbufferError(ValueError):
    """A buffer that is not a well-formed FlatBuffer (or is nested deeper than ``MAX_DEPTH``)."""


@dataclass(frozen=True)
class Scalar:
    """A fixed-size value: ``fmt`` is a struct code (``b B h H i I q Q ?``)."""

    fmt: str
    value: Any


Value = Any  # a Scalar, str, Table or Vector


@dataclass
class Table:
    """A table to encode: ``fields`` maps slot numbers (schema field order) to values."""

    fields: dict[int, Value | None] = field(default_factory=dict)


@dataclass(frozen=True)
class Vector:
    """A vector of tables (``fmt`` None) or of scalars of one struct code."""

    items: tuple[Any, ...]
    fmt: str | None = None




def _align(n: int, a: int) -> int:
    return (n + a - 1) // a * a


class _Encoder:
    def __init__(self) -> None:
        self.buf = bytearray()

    def pad_to(self, pos: int) -> None:
        self.buf.extend(b"\0" * (pos - len(self.buf)))

    def table(self, t: Table) -> int:
        inline = [(slot, v) for slot, v in t.fields.items() if v is not None]
        sizes = {slot: struct.calcsize("<" + v.fmt) if isinstance(v, Scalar) else 4 for slot, v in inline}
        cur, offs = 4, {}  # the table starts with its soffset to the vtable
        for slot, _ in sorted(inline, key=lambda sv: -sizes[sv[0]]):
            cur = _align(cur, sizes[slot])
            offs[slot] = cur
            cur += sizes[slot]
        table_align = max([4, *sizes.values()])
        nslots = max(offs, default=-1) + 1
        vt = struct.pack(f"<{2 + nslots}H", 4 + 2 * nslots, cur, *(offs.get(s, 0) for s in range(nslots)))
        vt_pos = _align(len(self.buf), 2)
        self.pad_to(vt_pos)
        self.buf.extend(vt)
        pos = _align(len(self.buf), table_align)
        self.pad_to(pos)
        body = bytearray(cur)
        struct.pack_into("<i", body, 0, pos - vt_pos)
        later = []
        for slot, v in inline:
            if isinstance(v, Scalar):
                struct.pack_into("<" + v.fmt, body, offs[slot], v.value)
            else:
                later.append((pos + offs[slot], v))
        self.buf.extend(body)
        for at, v in later:
            self.patch(at, self.value(v))
        return pos

    def patch(self, at: int, target: int) -> None:
        struct.pack_into("<I", self.buf, at, target - at)

    def value(self, v: Value) -> int:
        if isinstance(v, Table):
            return self.table(v)
        if isinstance(v, str):
            data = v.encode("utf-8")
            pos = _align(len(self.buf), 4)
            self.pad_to(pos)
            self.buf.extend(struct.pack("<I", len(data)) + data + b"\0")
            return pos
        if isinstance(v, Vector):
            if v.fmt is not None:
                size = struct.calcsize("<" + v.fmt)
                pos = _align(len(self.buf) + 4, max(size, 4)) - 4
                self.pad_to(pos)
                self.buf.extend(struct.pack(f"<I{len(v.items)}{v.fmt}", len(v.items), *v.items))
                return pos
            pos = _align(len(self.buf), 4)
            self.pad_to(pos)
            self.buf.extend(struct.pack("<I", len(v.items)) + bytes(4 * len(v.items)))
            for i, item in enumerate(v.items):
                self.patch(pos + 4 + 4 * i, self.value(item))
            return pos
        raise TypeError(f"cannot encode {type(v).__name__} as a FlatBuffer value")


def encode(root_table: Table) -> bytes:
    """The FlatBuffer whose root is ``root_table``; its length is a multiple of 8."""
    enc = _Encoder()
    enc.buf.extend(bytes(4))
    enc.patch(0, enc.table(root_table))
    enc.pad_to(_align(len(enc.buf), 8))
    return bytes(enc.buf)


class TableView:
    """Read access to one table of a FlatBuffer; every read is bounds-checked."""

    __slots__ = ("_buf", "_pos", "_vt", "_vt_size", "_depth")

    def __init__(self, buf: bytes, pos: int, depth: int = 0) -> None:
        if depth > MAX_DEPTH:
            raise FlatbufferError("tables nested too deeply")
        self._buf, self._pos, self._depth = buf, pos, depth
        vt = pos - _unpack(buf, "<i", pos)
        self._vt_size = _unpack(buf, "<H", vt)
        if self._vt_size < 4 or self._vt_size % 2 or vt + self._vt_size > len(buf):
            raise FlatbufferError("bad vtable")
        self._vt = vt

    def _field(self, slot: int) -> int:
        voff = 4 + 2 * slot
        if voff + 2 > self._vt_size:
            return 0
        off = _unpack(self._buf, "<H", self._vt + voff)
        return self._pos + off if off else 0

    def has(self, slot: int) -> bool:
        return self._field(slot) != 0

    def scalar(self, slot: int, fmt: str, default: Any) -> Any:
        at = self._field(slot)
        return default if not at else _unpack(self._buf, "<" + fmt, at)

    def _target(self, slot: int) -> int:
        at = self._field(slot)
        return 0 if not at else at + _unpack(self._buf, "<I", at)

    def string(self, slot: int) -> str | None:
        at = self._target(slot)
        if not at:
            return None
        n = _unpack(self._buf, "<I", at)
        if at + 4 + n > len(self._buf):
            raise FlatbufferError("string runs past the buffer")
        try:
            return self._buf[at + 4:at + 4 + n].decode("utf-8")
        except UnicodeDecodeError:
            raise FlatbufferError("string is not UTF-8") from None

    def table(self, slot: int) -> TableView | None:
        at = self._target(slot)
        return TableView(self._buf, at, self._depth + 1) if at else None

    def tables(self, slot: int) -> list[TableView] | None:
        at = self._target(slot)
        if not at:
            return None
        n = _unpack(self._buf, "<I", at)
        if at + 4 + 4 * n > len(self._buf):
            raise FlatbufferError("vector runs past the buffer")
        out = []
        for i in range(n):
            p = at + 4 + 4 * i
            out.append(TableView(self._buf, p + _unpack(self._buf, "<I", p), self._depth + 1))
        return out

    def scalars(self, slot: int, fmt: str) -> list[Any] | None:
        at = self._target(slot)
        if not at:
            return None
        n = _unpack(self._buf, "<I", at)
        size = struct.calcsize("<" + fmt)
        if at + 4 + size * n > len(self._buf):
            raise FlatbufferError("vector runs past the buffer")
        return list(struct.unpack_from(f"<{n}{fmt}", self._buf, at + 4))


def _unpack(buf: bytes, fmt: str, at: int) -> Any:
    if at < 0 or at + struct.calcsize(fmt) > len(buf):
        raise FlatbufferError(f"offset {at} is outside the buffer")
    return struct.unpack_from(fmt, buf, at)[0]


def root(buf: bytes) -> TableView:
    """The root table of a FlatBuffer."""
    return TableView(buf, _unpack(buf, "<I", 0))
