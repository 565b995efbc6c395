"""A flat fixed-width column chunk decoded whole by the compiled page loop (:mod:`pqbloom.kernels.chunkloop`).

The Python page loop (:func:`~pqbloom.file.pages.iter_pages` into
:func:`~pqbloom.file.column_builder.place_pages`) holds the GIL between its short compiled steps, so
threads decoding numeric chunks waited on each other more than they worked. The compiled loop takes
the chunks most files are made of (INT32, INT64, FLOAT, DOUBLE, FIXED_LEN_BYTE_ARRAY; required or
optional at the top level; PLAIN or dictionary-encoded pages; any codec) and decodes one without the
GIL but for each page's decompression, which it hands back to pqbloom's codecs
(:mod:`pqbloom.compression`: the maintained libraries, which release the GIL as they work). It gives
the same :class:`ChunkParts` as ``place_pages``; anything it does not take, or any sign of
corruption, makes it give up (:func:`decode_flat_chunk` returns None) and the caller decodes the
chunk with the Python loop, which handles the rare cases and raises the errors.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import Any

import numpy as np

from ..compression import codec_by_id, snappy_into
from ..errors import ParquetError
from ..format import NUMERIC_DTYPES, CompressionCodec, Encoding, PhysicalType
from ..kernels.chunkloop import FALLBACK, available, flat_chunk
from ..limits import BUDGET, charge
from ..memory import pool
from ..schema import ColumnDescriptor, Field
from ..table import Column
from .chunk_window import ChunkBytes, ChunkWindow
from .column_reader import ChunkParts
from .pages import HEADER_ROOM, crc_matches, plausible_count

__all__ = ["compiled_loop_takes", "decode_flat_chunk", "placed_column"]

#: the encodings a chunk the compiled loop takes may list (values; RLE for levels): a chunk listing
#: another (DELTA_*, BYTE_STREAM_SPLIT, BIT_PACKED levels) goes to the Python loop without a try
_ENCODINGS = frozenset(int(e) for e in (Encoding.PLAIN, Encoding.PLAIN_DICTIONARY, Encoding.RLE,
                                        Encoding.RLE_DICTIONARY))
#: the loop copies values as they are stored (little-endian): on a big-endian host the Python loop,
#: which converts them to the native order, decodes every chunk
_LITTLE_ENDIAN = sys.byteorder == "little"
#: the largest page (decompressed) the compiled loop allocates for: beyond, the Python loop's
_MAX_PAGE = 1 << 30
#: the widest FIXED_LEN_BYTE_ARRAY value it takes (the kernel's MAX_WIDTH)
_MAX_WIDTH = 1 << 16


def _row_layout(desc: ColumnDescriptor) -> tuple[np.dtype[Any], tuple[int, ...], int] | None:
    """(dtype, row shape, bytes a value) of the column's decoded values as the Python loop gives them
    (:func:`pqbloom.encodings.decode_plain`), or None for a type the compiled loop does not take."""
    dtype = NUMERIC_DTYPES.get(desc.physical_type)  # (little-endian, as stored: see _LITTLE_ENDIAN)
    if dtype is not None:
        return dtype, (), dtype.itemsize
    width = desc.field.type_length
    if desc.physical_type == PhysicalType.FIXED_LEN_BYTE_ARRAY and width is not None and 0 < width <= _MAX_WIDTH:
        return np.dtype(np.uint8), (width,), width
    return None


def compiled_loop_takes(meta: Any, desc: ColumnDescriptor, *, encrypted: bool) -> bool:
    """Whether the chunk (its ``ColumnMetaData``) is one the compiled loop decodes: a flat INT32, INT64,
    FLOAT, DOUBLE or FIXED_LEN_BYTE_ARRAY column of a file without encryption (``encrypted``: the file has some), whose
    codec pqbloom has and whose encodings the loop takes. Reads under a memory limit stay with the
    Python loop, which charges each page to it."""
    return (_LITTLE_ENDIAN and desc.max_repetition_level == 0 and desc.max_definition_level <= 1 and not encrypted
            and _row_layout(desc) is not None and available() and _decompressor(meta.codec) is not False
            and BUDGET.get() is None
            and bool(meta.encodings) and _ENCODINGS.issuperset(meta.encodings)
            # the chunk's rows are allocated before its first page: a count its bytes could not
            # plausibly hold (a lie; or a column of long runs) goes to the Python loop, which
            # allocates only for what its pages hold
            and meta.num_values is not None and meta.num_values <= plausible_count(meta.total_compressed_size or 0))


def decode_flat_chunk(buf: ChunkBytes, base: int, window: ChunkWindow | None, meta: Any, desc: ColumnDescriptor, *,
                      out: tuple[np.ndarray, np.ndarray | None] | None, row_count: int | None,
                      verify_checksums: bool, v2_always_compressed: bool,
                      positions: np.ndarray | None = None) -> ChunkParts | None:
    """The chunk whose bytes start at ``buf`` (file offset ``base``; with a ``window``, its first window,
    the rest read as the pages need it), decoded by the compiled loop into ``out`` (its rows of the
    column's values and flags, as :func:`~pqbloom.file.column_builder.place_pages` takes them) or new
    buffers: the chunk's :class:`ChunkParts`, or None when the chunk claims more values than its row
    group's ``row_count`` rows, or when the compiled loop gave up (with a window,
    the caller reads the chunk again: the window has moved on). With ``positions`` (increasing rows
    of the chunk, int64) the parts hold only those rows, each page's taken as it decodes (``out`` is
    then not used)."""
    total = meta.num_values
    if total is None or total < 0 or row_count is None or total > row_count:
        return None  # (the Python loop says what is wrong)
    layout = _row_layout(desc)
    if layout is None:
        return None
    dtype, row_shape, width = layout
    rows = total if positions is None else len(positions)
    values, flags = out if out is not None and positions is None else (None, None)
    if values is None or values.shape != (rows,) + row_shape or values.dtype != dtype:
        charge(rows * width, f"the values of a column chunk of {rows:,} rows")
        values = pool.empty((rows,) + row_shape, dtype)
    optional = desc.max_definition_level > 0
    present = None
    if optional:
        present = flags if flags is not None and len(flags) == rows and flags.dtype == np.bool_ \
            else np.empty(rows, np.bool_)
    size = meta.total_uncompressed_size
    decompress = _decompressor(meta.codec)
    state = flat_chunk(total, width, values, present,
                       decompress=decompress if callable(decompress) else None,
                       check_crc=crc_matches if verify_checksums else None,
                       max_page=min(size, _MAX_PAGE) if size is not None and size > 0 else 0,
                       v2_always_compressed=v2_always_compressed, positions=positions)
    if state is None:
        return None
    pos = 0
    first = True
    while True:
        got = state.run(buf, pos)
        if state.done:  # (a FALLBACK leaves it undone)
            break
        if got == FALLBACK or window is None:
            # (without a window: the pages run past the chunk's stated size, the Python loop's case)
            if window is not None and not first:
                window.close()  # it moved on: the caller opens the chunk again
            return None
        left = len(buf) - got
        buf, base, pos = window.advance(buf, base, got, max(state.need, HEADER_ROOM))
        first = False
        if len(buf) - pos <= left:  # no more bytes: the chunk ends inside a page
            window.close()
            return None
    if window is not None:
        window.close()
    nulls = state.nulls
    if optional and not nulls and (flags is None or present is not flags):
        present = None  # no null: as place_pages, no flags (or the column's, already all True)
    return ChunkParts([values], present, rows, placed=True, nulls=nulls)


def placed_column(f: Field, parts: ChunkParts) -> Column:
    """The column of a chunk's placed parts (:func:`decode_flat_chunk`: every row's value, nulls as zeros)."""
    values = parts.pieces[0]
    return Column(f, values, None if parts.present is None else ~parts.present)


_DECOMPRESSORS: dict[int, Callable[[memoryview, memoryview, int], bool] | None | bool] = {}


def _decompressor(codec: int) -> Callable[[memoryview, memoryview, int], bool] | None | bool:
    """The compiled loop's ``decompress(src, dst, size)`` for a codec: pqbloom's own decompressor for it
    (:mod:`pqbloom.compression`) writing into ``dst`` (or copied there, for a codec that makes its own
    buffer); None for an uncompressed chunk; False for a codec pqbloom does not have (the Python
    loop reports it)."""
    if codec in _DECOMPRESSORS:
        return _DECOMPRESSORS[codec]
    got: Callable[[memoryview, memoryview, int], bool] | None | bool
    if codec == CompressionCodec.UNCOMPRESSED:
        got = None
    elif codec == CompressionCodec.SNAPPY:
        got = snappy_into
    else:
        try:
            got = _into(codec_by_id(codec).decompress)
        except (ParquetError, KeyError, ValueError, TypeError):
            got = False
    _DECOMPRESSORS[codec] = got
    return got


def _into(decompress: Callable[..., Any]) -> Callable[[memoryview, memoryview, int], bool]:
    def run(src: memoryview, dst: memoryview, size: int) -> bool:
        given: list[memoryview] = []

        def take(n: int) -> Any:
            if n <= len(dst):
                given.append(dst[:n])
                return given[-1]
            return bytearray(n)

        out = decompress(src, size, take)
        if len(out) != size:
            return False
        if not given:  # (a codec that takes a buffer returns it or its start: pqbloom.compression.Take)
            dst[:size] = out
        return True
    return run
