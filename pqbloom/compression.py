"""Codec registry: Parquet CompressionCodec <-> (compress, decompress).

Every codec is a maintained library: snappy, lz4 and brotli are cramjam's (its ``*_into`` calls
decompress into a buffer given here), zstd is python-zstandard's (its stream reader decompresses into
a buffer given here), gzip is the standard library's zlib. pqbloom carries no
codec of its own (docs/dependencies.md says why).

Every decompressor is told the size the page header promises and refuses to
produce more, so a lying header cannot turn a small page into a huge
allocation (decompression bombs).

:func:`decompress` returns bytes its caller owns outright; :func:`decompress_leased` may decompress
into a buffer each thread reuses (:mod:`pqbloom.memory.scratch`), and returns its lease, which the
caller releases once nothing views the page (the page loop: :mod:`pqbloom.file.pages`).
"""

from __future__ import annotations

import threading
import zlib
from collections.abc import Callable
from dataclasses import dataclass

import cramjam
import numpy as np
import zstandard

from .errors import CorruptFileError, UnsupportedError
from .format.enums import CompressionCodec, name_of
from .limits import BUDGET, charge, out_of_memory
from .memory.scratch import Lease, Scratch

__all__ = ["Codec", "codec_by_name", "codec_by_id", "compress", "compress_joined", "decompress",
           "decompress_leased", "snappy_into", "check_level", "CODEC_NAMES", "LEVELS"]

Buffer = bytes | bytearray | memoryview
#: where a decompressor writes: ``take(size)`` gives a writable buffer of ``size`` bytes. A decompressor
#: that asks for one returns it, or a slice of it from its start (the compiled page loop relies on it:
#: :mod:`pqbloom.file.flat_chunk`); one that does not returns a buffer of its own
Take = Callable[[int], Buffer]


@dataclass(frozen=True)
class Codec:
    name: str
    thrift_id: int
    compress: Callable[[Buffer], Buffer] | None  # bytes-like: bytes or a memoryview
    decompress: Callable[[Buffer, int, Take], Buffer]  # (data, promised size, where its output goes)


def _check_size(out: Buffer, expected: int, name: str) -> Buffer:
    if len(out) != expected:
        raise CorruptFileError(f"{name} page decompressed to {len(out)} bytes, header says {expected}")
    return out


#: below this size a zeroed bytearray is made faster than an uninitialized numpy array and its view
_SMALL = 1 << 14


#: pages decompress into buffers each thread reuses once they are released (see
#: :mod:`pqbloom.memory.scratch`: a new allocation per page faulted its memory in again, page after page)
PAGES = Scratch()


def _new_buffer(size: int) -> Buffer:
    """A writable buffer of ``size`` bytes its caller owns, not zeroed when large (bytearray(size) first
    writes zeros over it, which only costs less than numpy's array and memoryview for a small page)."""
    if size < _SMALL:
        return bytearray(size)
    return memoryview(np.empty(size, np.uint8))  # type: ignore[arg-type]


class _LeaseTaker:
    """A ``take`` that leases large buffers from :data:`PAGES` and keeps the lease for the caller."""

    __slots__ = ("lease",)

    def __init__(self) -> None:
        self.lease: Lease | None = None

    def __call__(self, size: int) -> Buffer:
        if size < _SMALL:
            return bytearray(size)
        if self.lease is not None:  # (no decompressor takes twice; should one, the first goes to GC)
            self.lease.detach()
        self.lease = PAGES.take(size)
        return self.lease.view


# -- snappy -------------------------------------------------------------------
def _snappy_compress(data: Buffer) -> Buffer:
    # a view of cramjam's buffer: bytes(...) copied every page once more
    return memoryview(cramjam.snappy.compress_raw(data))


def _snappy_decompress(data: Buffer, size: int, take: Take) -> Buffer:
    # the block's own length first: a header's huge claim is refused before anything is allocated
    declared = cramjam.snappy.decompress_raw_len(data)
    if declared != size:
        raise CorruptFileError(f"SNAPPY page declares {declared} bytes, header says {size}")
    # straight into a buffer of the declared size: bytes(decompress_raw(...)) copied every page once more
    out = take(size)
    n = cramjam.snappy.decompress_raw_into(data, out)
    if n != size:
        raise CorruptFileError(f"SNAPPY page decompressed to {n} bytes, header says {size}")
    return out


def snappy_into(data: Buffer, out: Buffer, size: int) -> bool:
    """Whether the snappy block ``data`` decompresses to exactly ``size`` bytes at the start of ``out``
    (which has at least ``size`` bytes; a block that declares more than ``out`` holds raises): the
    checks of :func:`_snappy_decompress` in one call, for the compiled page loop, which calls it once
    a page and leaves any failure to the Python page loop to report."""
    return bool(cramjam.snappy.decompress_raw_into(data, out) == size)


# -- gzip (several concatenated members are legal) ------------------------------
def _gzip_compress(data: Buffer) -> bytes:
    c = zlib.compressobj(6, zlib.DEFLATED, 31)
    return c.compress(bytes(data)) + c.flush()


def _gzip_compress_level(data: Buffer, level: int) -> bytes:
    c = zlib.compressobj(level, zlib.DEFLATED, 31)
    return c.compress(bytes(data)) + c.flush()


def _gzip_decompress(data: Buffer, size: int, take: Take) -> bytes:
    out = bytearray()
    rest = bytes(data)
    while rest:
        d = zlib.decompressobj(47)  # gzip or zlib header, auto-detected
        out += d.decompress(rest, size + 1 - len(out))
        if len(out) > size:
            raise CorruptFileError(f"GZIP page inflates past the {size} bytes its header promises")
        if not d.eof:
            raise CorruptFileError("GZIP page is truncated")
        rest = d.unused_data
    return bytes(out)


# -- zstd ---------------------------------------------------------------------
_ZSTD_LEVEL = 3


def _zstd_compress(data: Buffer) -> bytes:
    return zstandard.ZstdCompressor(level=_ZSTD_LEVEL).compress(data)


def _zstd_compress_level(data: Buffer, level: int) -> bytes:
    return zstandard.ZstdCompressor(level=level).compress(data)


_zstd_local = threading.local()  # a decompressor per thread (one must not be used by two threads at once)


def _zstd_decompressor() -> zstandard.ZstdDecompressor:
    dctx = getattr(_zstd_local, "dctx", None)
    if dctx is None:
        dctx = _zstd_local.dctx = zstandard.ZstdDecompressor()
    return dctx


def _zstd_decompress(data: Buffer, size: int, take: Take) -> Buffer:
    if zstandard.frame_content_size(data) == size:
        # the frame states the size the page header promises (what writers do): decompress into a
        # buffer one byte longer, so that more output (further frames: a bomb) fills the spare byte
        # and is refused. The reader gets the whole page as one read, so that libzstd decodes the
        # frame in one pass straight into the buffer (fed in smaller reads, as by default or by
        # cramjam's streaming decoder, it goes through its window buffer and a large page takes much
        # longer).
        out = take(size + 1)
        view = memoryview(out)
        reader = _zstd_decompressor().stream_reader(data, read_size=max(len(data), 1), read_across_frames=True)
        pos = 0
        while pos <= size:
            n = reader.readinto(view[pos:])
            if not n:
                break
            pos += n
        if pos > size:
            raise CorruptFileError(f"ZSTD page inflates past the {size} bytes its header promises")
        return view[:pos]  # a short page is reported by the size check
    # no stated size (or another one): nothing is allocated on the header's word; a streaming read
    # stops one byte past the promise instead of inflating a bomb; read_across_frames accepts writers
    # that emit several concatenated frames
    reader = _zstd_decompressor().stream_reader(bytes(data), read_across_frames=True)
    buf = bytearray()
    while len(buf) <= size:
        chunk = reader.read(min(1 << 20, size + 1 - len(buf)))  # read(n) allocates n bytes up front
        if not chunk:
            break
        buf += chunk
    if len(buf) > size:
        raise CorruptFileError(f"ZSTD page inflates past the {size} bytes its header promises")
    return buf


# -- lz4 ----------------------------------------------------------------------
def _lz4_raw_compress(data: Buffer) -> Buffer:
    return memoryview(cramjam.lz4.compress_block(data, store_size=False))  # as snappy: no copy


# an LZ4 block cannot expand by more than 255x (each length byte adds at most 255 bytes)
_LZ4_MAX_RATIO = 255


def _lz4_raw_decompress(data: Buffer, size: int, take: Take = _new_buffer) -> Buffer:
    if size == 0:
        return b""
    if size > _LZ4_MAX_RATIO * len(data) + 64:
        raise CorruptFileError(f"LZ4 block of {len(data)} bytes cannot inflate to the {size} bytes its header claims")
    # decompress_block(output_len=size) pads a short result with zeros; decompress_block_into reports
    # how many bytes it wrote, so a lying size is caught
    out = take(size)  # (a copy of the result into bytes cost every page once more)
    n = cramjam.lz4.decompress_block_into(bytes(data), out)
    if n != size:
        raise CorruptFileError(f"LZ4 block decompressed to {n} bytes, header says {size}")
    return out


def _lz4_legacy_decompress(data: Buffer, size: int, take: Take) -> Buffer:
    """Deprecated LZ4 codec: Hadoop framing (BE sizes) in practice, raw blocks or LZ4 frames from some writers.

    Whatever the layout, LZ4 cannot expand its input more than 255 times, so a size claim beyond that
    is refused before any buffer is made (the frame fallback used to allocate the claim whole).
    """
    raw = bytes(data)
    if size > _LZ4_MAX_RATIO * len(raw) + 64:
        raise CorruptFileError(f"LZ4 page of {len(raw)} bytes cannot inflate to the {size} bytes its header claims")
    try:
        out = bytearray()
        pos = 0
        while pos < len(raw):
            if pos + 8 > len(raw):
                raise ValueError("truncated hadoop frame")
            expect = int.from_bytes(raw[pos:pos + 4], "big")
            clen = int.from_bytes(raw[pos + 4:pos + 8], "big")
            pos += 8
            if clen > len(raw) - pos or len(out) + expect > size:
                raise ValueError("bad hadoop frame")
            out += _lz4_raw_decompress(raw[pos:pos + clen], expect)
            pos += clen
        if len(out) == size:
            return bytes(out)
    except MemoryError:
        raise
    except Exception:  # not Hadoop-framed; try the other historical layouts
        pass
    try:
        return _check_size(_lz4_raw_decompress(raw, size), size, "LZ4")
    except MemoryError:
        raise
    except Exception:
        pass
    try:  # LZ4 frame format, bounded to one byte past the promise (frames can be bombs)
        buf = bytearray(size + 1)
        n = cramjam.lz4.decompress_into(raw, buf)
    except MemoryError:
        raise
    except Exception as exc:
        raise CorruptFileError(f"LZ4 page cannot be decompressed: {exc}") from None
    if n != size:
        raise CorruptFileError(f"LZ4 page decompressed to {n}+ bytes, header says {size}")
    return bytes(buf[:n])


# -- brotli -------------------------------------------------------------------
def _brotli_compress(data: Buffer) -> bytes:
    return bytes(cramjam.brotli.compress(data, level=5))


def _brotli_compress_level(data: Buffer, level: int) -> bytes:
    return bytes(cramjam.brotli.compress(data, level=level))


def _brotli_decompress(data: Buffer, size: int, take: Take) -> bytes:
    # output_len=size would allocate whatever the header claims up front; instead grow a bounded
    # buffer (decompress_into fails when it is too small) up to one byte past the promise
    src = bytes(data)
    cap = min(size + 1, max(1 << 16, 16 * len(src)))
    while True:
        out = bytearray(cap)
        try:
            n = cramjam.brotli.decompress_into(src, out)
        except cramjam.DecompressionError as exc:
            if "whole buffer" not in str(exc):
                raise
            if cap > size:
                raise CorruptFileError(f"BROTLI page inflates past the {size} bytes its header promises") from None
            cap = min(size + 1, cap * 4)
            continue
        if n > size:
            raise CorruptFileError(f"BROTLI page inflates past the {size} bytes its header promises")
        return bytes(out[:n])


def _none_decompress(data: Buffer, size: int, take: Take) -> Buffer:
    return data  # the stored bytes are the page: no copy


_CODECS = [
    Codec("UNCOMPRESSED", CompressionCodec.UNCOMPRESSED, bytes, _none_decompress),
    Codec("SNAPPY", CompressionCodec.SNAPPY, _snappy_compress, _snappy_decompress),
    Codec("GZIP", CompressionCodec.GZIP, _gzip_compress, _gzip_decompress),
    Codec("BROTLI", CompressionCodec.BROTLI, _brotli_compress, _brotli_decompress),
    Codec("LZ4", CompressionCodec.LZ4, None, _lz4_legacy_decompress),
    Codec("ZSTD", CompressionCodec.ZSTD, _zstd_compress, _zstd_decompress),
    Codec("LZ4_RAW", CompressionCodec.LZ4_RAW, _lz4_raw_compress, _lz4_raw_decompress),
]
_BY_NAME = {c.name: c for c in _CODECS}
_BY_ID = {c.thrift_id: c for c in _CODECS}
# "lz4" is LZ4_RAW for writing, as in pyarrow (the legacy LZ4 codec is framed differently by each writer)
_ALIASES = {"NONE": "UNCOMPRESSED", "LZ4RAW": "LZ4_RAW", "LZ4": "LZ4_RAW"}
CODEC_NAMES = tuple(c.name for c in _CODECS if c.compress is not None)
#: codec name -> (lowest, highest) ``compression_level`` and the compressor that takes it (pyarrow's ranges;
#: the level used without one: zstd 3, gzip 6, brotli 5). LZ4_RAW has none here: cramjam's block compressor
#: has no high-compression mode (its ``mode``/``compression`` arguments change nothing), so a level would
#: be ignored; it is refused instead.
LEVELS: dict[str, tuple[int, int, Callable[[Buffer, int], Buffer]]] = {
    "ZSTD": (-(1 << 17), 22, _zstd_compress_level),
    "GZIP": (0, 9, _gzip_compress_level),
    "BROTLI": (0, 11, _brotli_compress_level),
}


def codec_by_name(name: str | None) -> Codec:
    """Look up a codec for writing by its (case-insensitive) name."""
    key = (name or "UNCOMPRESSED").upper()
    key = _ALIASES.get(key, key)
    codec = _BY_NAME.get(key)
    if codec is None or codec.compress is None:
        raise ValueError(f"unknown or write-unsupported compression {name!r}; choose one of {CODEC_NAMES}")
    return codec


def codec_by_id(thrift_id: int) -> Codec:
    codec = _BY_ID.get(thrift_id)
    if codec is None:
        raise UnsupportedError(f"compression codec {name_of(CompressionCodec, thrift_id)}"
                               " is not supported")
    return codec


def check_level(codec: Codec, level: int | None) -> None:
    """Raise ValueError unless ``level`` (None: the codec's default) is a level ``codec`` takes."""
    if level is None:
        return
    if isinstance(level, bool) or not isinstance(level, int):
        raise ValueError(f"compression_level must be an int, got {level!r}")
    bounds = LEVELS.get(codec.name)
    if bounds is None:
        raise ValueError(f"codec {codec.name} does not take a compression level (only {sorted(LEVELS)} do)")
    lo, hi, _ = bounds
    if not lo <= level <= hi:
        raise ValueError(f"compression_level {level} is out of range for {codec.name}: {lo} to {hi}")


def compress(codec: Codec, data: Buffer, level: int | None = None) -> Buffer:
    """Compress ``data``; ``level`` (checked by :func:`check_level`) when not None. The result is
    bytes-like (bytes, or a memoryview of the compressor's own buffer)."""
    if level is not None:
        return LEVELS[codec.name][2](data, level)
    assert codec.compress is not None
    return codec.compress(data)


def compress_joined(codec: Codec, head: Buffer, body: Buffer, level: int | None = None) -> Buffer:
    """:func:`compress` of ``head + body`` (a v1 page's levels and values)."""
    if not len(head):
        return compress(codec, body, level)
    return compress(codec, bytes(head) + body, level)


def decompress(codec: Codec, data: Buffer, uncompressed_size: int) -> Buffer:
    """Decompress one page body, failing with CorruptFileError rather than exceeding the promised size.

    The result is bytes-like and its caller's: bytes, bytearray, a memoryview of a fresh buffer, or
    ``data`` itself when uncompressed."""
    return _decompress(codec, data, uncompressed_size, _new_buffer)


def decompress_leased(codec: Codec, data: Buffer, uncompressed_size: int) -> tuple[Buffer, Lease | None]:
    """:func:`decompress` into a reused buffer when the codec writes into one (SNAPPY, ZSTD, LZ4_RAW; large
    pages): (the page, the lease of its buffer or None). The caller holds the lease and releases it
    once nothing views the page (:meth:`~pqbloom.memory.scratch.Lease.release_unless_viewed`);
    dropping it is safe (the buffer is then never reused). Errors as :func:`decompress`."""
    taker = _LeaseTaker()
    try:
        out = _decompress(codec, data, uncompressed_size, taker)
    except BaseException:
        if taker.lease is not None:  # nothing views a page that failed
            taker.lease.release()
        raise
    return out, taker.lease


def _decompress(codec: Codec, data: Buffer, uncompressed_size: int, take: Take) -> Buffer:
    if uncompressed_size < 0:
        raise CorruptFileError(f"negative uncompressed page size {uncompressed_size}")
    if uncompressed_size == 0 and len(data) == 0:  # empty v2 value sections are stored as nothing at all
        return b""
    if BUDGET.get() is not None:  # the message is formatted only then: most reads have no budget
        charge(uncompressed_size, f"a {codec.name} page of {uncompressed_size:,} bytes")
    try:
        out = codec.decompress(data, uncompressed_size, take)
    except CorruptFileError:
        raise
    except MemoryError as exc:  # the machine's limit, not the file's fault
        raise out_of_memory(exc, f"a {codec.name} page of {uncompressed_size:,} bytes") from exc
    except Exception as exc:
        raise CorruptFileError(f"{codec.name} page cannot be decompressed: {exc.__class__.__name__}: {exc}") from None
    if len(out) == uncompressed_size:
        return out
    return _check_size(out, uncompressed_size, codec.name)
