"""The compiled page loop of a flat fixed-width chunk (compiled module ``chunkloop``). Its reference is
the Python page loop itself (:func:`pqbloom.file.pages.iter_pages` with
:func:`pqbloom.file.column_builder.place_pages`), which decodes every chunk this loop does not take
whole: :func:`flat_chunk` returns None when the module is not in use, and the caller runs it.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from . import compiled

__all__ = ["flat_chunk", "available", "FALLBACK"]

#: :meth:`FlatChunk.run`'s answer for a chunk the compiled loop leaves to the Python loop
FALLBACK = -1

_EVERY_ROW = np.empty(0, np.int64)


def available() -> bool:
    """Whether the compiled page loop is in use (built, and the compiled kernels not switched off)."""
    return compiled("chunkloop") is not None


def flat_chunk(total: int, width: int, out: np.ndarray, present: np.ndarray | None, *,
               decompress: Callable[[memoryview, memoryview, int], bool] | None,
               check_crc: Callable[[memoryview, int], bool] | None, max_page: int, v2_always_compressed: bool,
               positions: np.ndarray | None = None) -> Any:
    """A ``FlatChunk`` decoding ``total`` values of ``width`` bytes (1 to 65536) into ``out`` and, for an
    optional column, its presence flags into ``present`` (a bool array); with ``positions`` (increasing
    int64 rows under ``total``) only those rows, one after the other. ``decompress(src, dst, size)``
    writes a page's ``size`` decompressed bytes at the start of ``dst`` and says whether it did (None:
    pages are stored as they are); ``check_crc(data, crc)`` says whether a page matches its CRC (None:
    not checked). None when the compiled loop is not in use. Feed it the chunk's bytes with
    ``run(buf, pos)``: the position after the pages it decoded, or :data:`FALLBACK`."""
    if not out.flags.c_contiguous or (present is not None and not present.flags.c_contiguous):
        raise ValueError("chunkloop.flat_chunk: the output buffers must be contiguous")  # (a copy would be lost)
    kernel = compiled("chunkloop")
    if kernel is None:
        return None
    flags = np.empty(0, np.uint8) if present is None else present.view(np.uint8)
    return kernel.FlatChunk(total, width, decompress, check_crc, out.view(np.uint8).reshape(-1), flags, max_page,
                            v2_always_compressed, present is not None, _EVERY_ROW if positions is None else positions)
