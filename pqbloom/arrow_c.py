"""The Arrow C Data Interface and C Stream Interface, without pyarrow: the compiled structs and PyCapsules of
:mod:`pqbloom._kernels.arrow_c` (export) and :mod:`pqbloom._kernels.arrow_c_import` behind typed errors, and the C interface's key-value metadata encoding.

A schema is described by nested tuples ``(format, name, metadata, flags, children, dictionary)`` and an array
by ``(length, null_count, offset, buffers, children, dictionary)`` (see :mod:`pqbloom._kernels.arrow_c`);
:mod:`pqbloom.table.arrow_c_export` and :mod:`pqbloom.table.arrow_c_import` make and read them. Without the
compiled module (a build without a C compiler) every function here raises
:class:`~pqbloom.errors.UnsupportedError` saying so.
"""

from __future__ import annotations

import struct
from collections.abc import Iterable
from typing import Any

from . import kernels
from .errors import SchemaError, UnsupportedError

__all__ = ["AVAILABLE", "FLAG_DICTIONARY_ORDERED", "FLAG_NULLABLE", "FLAG_MAP_KEYS_SORTED", "export_schema",
           "export_array", "export_stream", "schema_of", "array_from_capsule", "stream_from_capsule",
           "encode_metadata", "decode_metadata"]

FLAG_DICTIONARY_ORDERED = 1
FLAG_NULLABLE = 2
FLAG_MAP_KEYS_SORTED = 4


def _load() -> tuple[Any, Any] | None:
    # whatever kernels.COMPILED says: these modules have no numpy reference
    ext, imp = kernels.built("arrow_c"), kernels.built("arrow_c_import")
    return None if ext is None or imp is None else (ext, imp)  # built without a C compiler, or a source checkout


_mods = _load()
_ext, _imp = _mods if _mods is not None else (None, None)
#: the compiled module is there (else the functions below raise UnsupportedError)
AVAILABLE: bool = _ext is not None


def _module() -> Any:
    if _ext is None:
        raise UnsupportedError("the Arrow PyCapsule interface needs pqbloom's compiled module "
                               "pqbloom._kernels.arrow_c (and arrow_c_import), which this installation lacks (it was built without "
                               "a C compiler); use to_arrow() with pyarrow, or reinstall with one")
    return _ext


def _checked(name: str, *args: Any) -> Any:
    """The compiled modules' function ``name`` called with ``args``, their ArrowCError as SchemaError."""
    ext = _module()
    try:
        return getattr(ext if hasattr(ext, name) else _imp, name)(*args)
    except ext.ArrowCError as exc:
        raise SchemaError(f"Arrow C interface: {exc}") from None


def export_schema(desc: tuple[Any, ...]) -> Any:
    """An ``arrow_schema`` PyCapsule of a schema description."""
    return _checked("export_schema", desc)


def export_array(desc: tuple[Any, ...]) -> Any:
    """An ``arrow_array`` PyCapsule of an array description (its buffers shared, kept alive by the capsule's
    struct until its consumer releases it)."""
    return _checked("export_array", desc)


def export_stream(schema_desc: tuple[Any, ...], batches: Iterable[tuple[Any, ...]]) -> Any:
    """An ``arrow_array_stream`` PyCapsule of a schema description and an iterable of array descriptions."""
    return _checked("export_stream", schema_desc, batches)


def schema_of(capsule: Any) -> tuple[Any, ...]:
    """The description of an ``arrow_schema`` PyCapsule's schema."""
    return _checked("schema_of", capsule)  # type: ignore[no-any-return]


def array_from_capsule(capsule: Any) -> Any:
    """The array of an ``arrow_array`` PyCapsule, moved out of it (an ``ImportedArray``)."""
    return _checked("array_from_capsule", capsule)


def stream_from_capsule(capsule: Any) -> Any:
    """The stream of an ``arrow_array_stream`` PyCapsule, moved out of it (a ``StreamReader``)."""
    return _checked("stream_from_capsule", capsule)


def import_error() -> type[Exception]:
    """The compiled module's error class (raised by the methods of imported arrays and streams)."""
    return _module().ArrowCError  # type: ignore[no-any-return]


def encode_metadata(items: Iterable[tuple[str, str]]) -> bytes | None:
    """The C interface's encoding of key-value metadata (native-endian int32 count, then each key and value
    as an int32 length and its UTF-8 bytes); None for no items."""
    pairs = [(k.encode("utf-8"), v.encode("utf-8")) for k, v in items]
    if not pairs:
        return None
    out = [struct.pack("=i", len(pairs))]
    for k, v in pairs:
        out += [struct.pack("=i", len(k)), k, struct.pack("=i", len(v)), v]
    return b"".join(out)


def decode_metadata(raw: bytes | None) -> tuple[tuple[str, str], ...]:
    """The key-value pairs of the C interface's metadata encoding (bytes not UTF-8 replaced)."""
    if not raw:
        return ()
    try:
        (n,) = struct.unpack_from("=i", raw, 0)
        pos = 4
        out = []
        for _ in range(n):
            (kl,) = struct.unpack_from("=i", raw, pos)
            k = raw[pos + 4:pos + 4 + kl]
            pos += 4 + kl
            (vl,) = struct.unpack_from("=i", raw, pos)
            v = raw[pos + 4:pos + 4 + vl]
            pos += 4 + vl
            out.append((k.decode("utf-8", "replace"), v.decode("utf-8", "replace")))
    except struct.error:
        raise SchemaError("Arrow C interface: truncated schema metadata") from None
    return tuple(out)
