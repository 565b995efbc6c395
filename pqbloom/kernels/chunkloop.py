"""The compiled page loop of a flat fixed-width chunk (compiled module ``chunkloop``). Its reference is
the Python page loop itself (:func:`pqbloom.file.pages.iter_pages` with
:func:`pqbloom.file.column_builder.place_pages`), which decodes every chunk this loop does not take
whole: :func:`flat_chunk` returns None for those, and the caller runs it.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from . import compiled

__all__ = ["flat_chunk", "codecs", "FALLBACK"]

#: :meth:`FlatChunk.run`'s answer for a chunk the compiled loop leaves to the Python loop
FALLBACK = -1


def codecs() -> frozenset[int]:
    """The CompressionCodec ids the compiled loop decompresses (those whose C library it was built
    with), empty when it is not in use."""
    kernel = compiled("chunkloop")
    return frozenset() if kernel is None else kernel.CODECS  # type: ignore[no-any-return]


def flat_chunk(total: int, width: int, codec: int, out: np.ndarray, present: np.ndarray | None, *,
               max_page: int, v2_always_compressed: bool, verify_checksums: bool) -> Any:
    """A ``FlatChunk`` decoding ``total`` values of ``width`` (4 or 8) bytes into ``out`` and, for an
    optional column, its presence flags into ``present`` (a bool array of ``total`` rows); None when
    the compiled loop is not in use or does not take the codec. Feed it the chunk's bytes with
    ``run(buf, pos)``: the position after the pages it decoded, or :data:`FALLBACK`. With
    ``verify_checksums``, pages that carry a CRC are checked (without zlib in the build, such a chunk
    falls back)."""
    kernel = compiled("chunkloop")
    if kernel is None or codec not in kernel.CODECS:
        return None
    flags = np.empty(0, np.uint8) if present is None else present.view(np.uint8)
    return kernel.FlatChunk(total, width, codec, out.view(np.uint8).reshape(-1), flags, max_page,
                            v2_always_compressed, verify_checksums)
