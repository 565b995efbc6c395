"""Thin codec over the generated Thrift bindings (compact protocol, C-accelerated).

Decoding reads exactly one struct and reports how many bytes it used, so a
caller can find what follows it (a page after its header) and can ignore
trailing padding (parquet-java zero-pads encrypted Thrift modules). Large
structures are decoded with the cyclic garbage collector paused
(:func:`gc_paused`). The lazy footer (:mod:`pqbloom.format.footer`) decodes
through :func:`read_struct`.
"""

from __future__ import annotations

import contextlib
import gc
import threading
from collections.abc import Iterator
from io import BytesIO
from typing import Any, TypeVar

from thrift.protocol import TCompactProtocol
from thrift.Thrift import TType
from thrift.transport import TTransport

from ..errors import CorruptFileError, MetadataLimitError
from ..limits import THRIFT_LIMITS, ThriftLimits, out_of_memory

__all__ = ["decode", "decode_prefix", "decode_at", "encode", "read_struct", "decoding_position", "ACCELERATED",
           "gc_paused", "count_fields"]

S = TypeVar("S")

# Caps that keep a lying length field from allocating gigabytes inside the
# Thrift decoder; real footers stay far below them. Under a ThriftLimits (pqbloom.limits: the footer of a
# file being opened) its limits apply instead. Either way no string or list may be longer than the bytes
# left in the buffer (each list element takes at least one byte), so a lying length allocates nothing.
STRING_LENGTH_LIMIT = 1 << 30
CONTAINER_LENGTH_LIMIT = 1 << 24


try:
    from thrift.protocol import fastbinary as _fastbinary
except ImportError:  # pragma: no cover - the C extension ships with the thrift wheel
    _fastbinary = None

ACCELERATED = _fastbinary is not None


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


# One transport + protocol per thread, reused by every decode: building them costs more than
# decoding a small struct (a page header), and the C decoder keeps no state in them between calls.
_tls = threading.local()


def _thread_protocol() -> Any:
    prot = getattr(_tls, "prot", None)
    if prot is None:
        prot = _tls.prot = _protocol(TTransport.TMemoryBuffer(b""))
    return prot


def read_struct(cls: type[S], buf: bytes | bytearray | memoryview, pos: int, offset: int | None, what: str | None,
                spec: Any = None) -> tuple[S, int]:
    """Decode one ``cls`` (or ``spec``, an alternative thrift_spec) at ``buf[pos]``; the object and end.

    ``offset`` (the file position of ``buf``) and ``what`` only serve error messages: bytes that do not
    decode raise :class:`~pqbloom.errors.CorruptFileError`, an allocation failure
    :class:`~pqbloom.errors.MemoryLimitError`. During the call :func:`decoding_position` tells where
    the decoder is.
    """
    bio = BytesIO(buf if isinstance(buf, bytes) else bytes(buf))  # shares a bytes object, no copy
    if pos:
        bio.seek(pos)
    obj = cls()
    prot = _thread_protocol()
    limits = THRIFT_LIMITS.get()
    room = max(0, len(buf) - pos)
    string_cap = STRING_LENGTH_LIMIT if limits is None else limits.string_size
    container_cap = CONTAINER_LENGTH_LIMIT if limits is None else limits.container_size
    prot.string_length_limit = min(string_cap, room)
    prot.container_length_limit = min(container_cap, room)
    prot.trans._buffer = bio
    _tls.bio = bio  # for decoding_position
    try:
        if ACCELERATED:
            prot._fast_decode(obj, prot, [cls, spec if spec is not None else cls.thrift_spec])  # type: ignore[attr-defined]
        else:  # pragma: no cover - only without the C extension
            obj.read(prot)  # type: ignore[attr-defined]
    except CorruptFileError:
        raise
    except MemoryError as exc:  # the machine's limit, not a sign of a damaged file
        raise out_of_memory(exc, f"decoding {what or cls.__name__}") from exc
    except Exception as exc:  # the Thrift runtime raises many types on garbage
        name = what or cls.__name__
        if limits is not None and isinstance(exc, OverflowError):
            over = _over_limit(exc, limits, room)
            if over:
                raise MetadataLimitError(f"{name} holds {over}; if the file is trusted, raise the limit"
                                         + ("" if offset is None else f" (offset {offset})")) from None
        raise CorruptFileError(f"cannot decode {name}: {exc.__class__.__name__}: {exc}", offset=offset) from None
    finally:
        prot.trans._buffer = _EMPTY
        _tls.bio = None
    return obj, bio.tell()


def _over_limit(exc: OverflowError, limits: ThriftLimits, room: int) -> str | None:
    """What ``exc`` (the decoder's "size exceeded specified limit: N") says went past ``limits``; None
    when the limit it hit was the bytes left in the buffer (a length no buffer holds: corruption)."""
    text = str(exc)
    if "exceeded specified limit" not in text:
        return None
    try:
        hit = int(text.rsplit(":", 1)[1])
    except ValueError:
        return None
    if hit >= room:
        return None
    over = []
    if hit == limits.string_size:
        over.append(f"a string longer than thrift_string_size_limit ({hit:,} bytes)")
    if hit == limits.container_size:
        over.append(f"a list longer than thrift_container_size_limit ({hit:,} elements)")
    return " or ".join(over) or None


def decoding_position() -> int:
    """Where in its buffer the decode running on this thread (:func:`read_struct`) is.

    The C decoder creates a struct object before reading its fields, so a struct class whose
    constructor calls this learns its own first byte (see the footer skim's marks)."""
    return int(_tls.bio.tell())


_EMPTY = BytesIO(b"")


@contextlib.contextmanager
def gc_paused() -> Iterator[None]:
    """Pause the cyclic garbage collector while building (or dropping into a structure) very many
    objects without cycles: a wide or long footer, or the metadata of 10,000 column chunks.

    Its collections are triggered by allocation counts and each older-generation pass walks every
    object built so far, so decoding a 10,000-column footer spent more time in the collector than
    in the decoder. Reference counting still frees everything; a collector the caller disabled
    stays disabled.
    """
    global _gc_pauses, _gc_we_disabled
    with _gc_lock:  # nested and concurrent pauses (reader threads) share one disable/enable pair
        if _gc_pauses == 0:
            _gc_we_disabled = gc.isenabled()
            if _gc_we_disabled:
                gc.disable()
        _gc_pauses += 1
    try:
        yield
    finally:
        with _gc_lock:
            _gc_pauses -= 1
            if _gc_pauses == 0 and _gc_we_disabled:
                gc.enable()
                _gc_we_disabled = False


_gc_lock = threading.Lock()
_gc_pauses = 0
_gc_we_disabled = False


def decode_prefix(cls: type[S], data: bytes | bytearray | memoryview, *, offset: int | None = None,
                  what: str | None = None) -> tuple[S, int]:
    """Decode one ``cls`` struct from the start of ``data``; return it and the bytes consumed.

    ``offset`` (the file position of ``data``) only serves error messages.
    """
    return read_struct(cls, data, 0, offset, what)


def decode(cls: type[S], data: bytes | bytearray | memoryview, *, offset: int | None = None,
           what: str | None = None) -> S:
    """Decode one ``cls`` struct from ``data``, ignoring whatever follows it."""
    return read_struct(cls, data, 0, offset, what)[0]


def encode(obj: object) -> bytes:
    """Serialize a Thrift struct with the compact protocol."""
    if _fastbinary is not None:  # straight to the C encoder: a transport and protocol cost more than a small struct
        return _fastbinary.encode_compact(obj, [obj.__class__, obj.thrift_spec])  # type: ignore[attr-defined]
    trans = TTransport.TMemoryBuffer()  # pragma: no cover - only without the C extension
    obj.write(_protocol(trans))  # type: ignore[attr-defined]
    return trans.getvalue()


def decode_at(cls: type[S], buf: bytes | memoryview, pos: int, *, offset: int | None = None,
              what: str | None = None) -> tuple[S, int]:
    """Decode one struct starting at ``buf[pos]`` without copying ``buf``; return it and the end position."""
    return read_struct(cls, buf, pos, offset, what)


def count_fields(data: bytes | bytearray | memoryview) -> int:
    """How many fields the compact-Thrift struct at the start of ``data`` holds, nested ones included,
    whatever their ids (the generated decoder skips ids it does not know). Two encodings of one struct
    may differ in bytes (long field headers, an empty list's element type) yet hold the same fields: a
    rewrite compares counts to learn whether re-encoding a decoded struct dropped any. Pure Python: for
    the rare struct whose re-encoding is not byte-identical. :class:`~pqbloom.errors.CorruptFileError`
    when ``data`` does not hold a struct."""
    prot = TCompactProtocol.TCompactProtocol(TTransport.TMemoryBuffer(bytes(data)),
                                             string_length_limit=STRING_LENGTH_LIMIT,
                                             container_length_limit=CONTAINER_LENGTH_LIMIT)

    def value(ttype: int, depth: int) -> int:
        if depth > 64:
            raise CorruptFileError("Thrift structure nested too deeply")
        if ttype == TType.STRUCT:
            n = 0
            prot.readStructBegin()
            while True:
                _, ftype, _ = prot.readFieldBegin()
                if ftype == TType.STOP:
                    prot.readStructEnd()
                    return n
                n += 1 + value(ftype, depth + 1)
                prot.readFieldEnd()
        if ttype in (TType.LIST, TType.SET):
            etype, size = prot.readListBegin()
            n = sum(value(etype, depth + 1) for _ in range(size))
            prot.readListEnd()
            return n
        if ttype == TType.MAP:
            ktype, vtype, size = prot.readMapBegin()
            n = sum(value(ktype, depth + 1) + value(vtype, depth + 1) for _ in range(size))
            prot.readMapEnd()
            return n
        if ttype == TType.STRING:
            prot.readBinary()  # binary fields need not be UTF-8
        else:
            prot.skip(ttype)
        return 0

    try:
        return value(TType.STRUCT, 0)
    except CorruptFileError:
        raise
    except Exception as exc:  # noqa: BLE001 - the pure-Python protocol raises many kinds on bad bytes
        raise CorruptFileError(f"Thrift structure does not decode ({type(exc).__name__}: {exc})") from None
