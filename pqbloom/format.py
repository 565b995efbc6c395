"""Thin codec over the generated Thrift bindings (compact protocol, C-accelerated).

Decoding reads exactly one struct and reports how many bytes it used, so a
caller can find what follows it (a page after its header) and can ignore
trailing padding (parquet-java zero-pads encrypted Thrift modules).
"""

from __future__ import annotations

from typing import TypeVar

from thrift.protocol import TCompactProtocol
from thrift.transport import TTransport

from ._thrift import ttypes as T
from .errors import CorruptFileError

__all__ = ["T", "decode", "decode_prefix", "decode_at", "encode", "ACCELERATED"]

S = TypeVar("S")

# Caps that keep a lying length field from allocating gigabytes inside the
# Thrift decoder; real footers stay far below them.
STRING_LENGTH_LIMIT = 1 << 30
CONTAINER_LENGTH_LIMIT = 1 << 24


def _accelerated() -> bool:
    try:
        from thrift.protocol import fastbinary  # noqa: F401
    except ImportError:
        return False
    return True


ACCELERATED = _accelerated()


def _protocol(trans: TTransport.TMemoryBuffer) -> TCompactProtocol.TCompactProtocol:
    if ACCELERATED:
        return TCompactProtocol.TCompactProtocolAccelerated(
            trans,
            fallback=False,
            string_length_limit=STRING_LENGTH_LIMIT,
            container_length_limit=CONTAINER_LENGTH_LIMIT,
        )
    return TCompactProtocol.TCompactProtocol(  # pragma: no cover - only without the C extension
        trans,
        string_length_limit=STRING_LENGTH_LIMIT,
        container_length_limit=CONTAINER_LENGTH_LIMIT,
    )


def decode_prefix(cls: type[S], data: bytes | bytearray | memoryview, *, offset: int | None = None,
                  what: str | None = None) -> tuple[S, int]:
    """Decode one ``cls`` struct from the start of ``data``; return it and the bytes consumed.

    ``offset`` (the file position of ``data``) only serves error messages.
    """
    trans = TTransport.TMemoryBuffer(bytes(data))
    obj = cls()
    try:
        obj.read(_protocol(trans))  # type: ignore[attr-defined]
    except CorruptFileError:
        raise
    except Exception as exc:  # the Thrift runtime raises many types on garbage
        name = what or cls.__name__
        raise CorruptFileError(f"cannot decode {name}: {exc.__class__.__name__}: {exc}", offset=offset) from None
    return obj, trans._buffer.tell()


def decode(cls: type[S], data: bytes | bytearray | memoryview, *, offset: int | None = None,
           what: str | None = None) -> S:
    """Decode one ``cls`` struct from ``data``, ignoring whatever follows it."""
    return decode_prefix(cls, data, offset=offset, what=what)[0]


def encode(obj: object) -> bytes:
    """Serialize a Thrift struct with the compact protocol."""
    trans = TTransport.TMemoryBuffer()
    obj.write(_protocol(trans))  # type: ignore[attr-defined]
    return trans.getvalue()


def decode_at(cls: type[S], buf: bytes, pos: int, *, offset: int | None = None,
              what: str | None = None) -> tuple[S, int]:
    """Decode one struct starting at ``buf[pos]`` without copying ``buf``; return it and the end position."""
    trans = TTransport.TMemoryBuffer(buf)
    trans._buffer.seek(pos)
    obj = cls()
    try:
        obj.read(_protocol(trans))  # type: ignore[attr-defined]
    except Exception as exc:
        name = what or cls.__name__
        raise CorruptFileError(f"cannot decode {name}: {exc.__class__.__name__}: {exc}", offset=offset) from None
    return obj, trans._buffer.tell()
