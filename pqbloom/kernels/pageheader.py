"""The page header kernel (compiled module ``pageheader``): the fields of a Thrift ``PageHeader`` the
page loop reads, as a flat tuple. Its reference is the Thrift decoder of :mod:`pqbloom.format`, which the
caller runs whenever :func:`page_header` returns None.
"""

from __future__ import annotations

from typing import Any

from ..arrays import Buffer
from . import compiled

__all__ = ["page_header"]


def page_header(buf: Buffer, pos: int) -> tuple[Any, ...] | None:
    """The page header at ``buf[pos]`` as a flat tuple (see ``pqbloom._kernels.pageheader.parse``),
    or None: not compiled, or bytes the compiled parser does not accept (malformed or unusual). The
    caller then decodes the header with Thrift (:func:`pqbloom.format.decode_at`), which raises the
    error, so both modes fail with the same message."""
    kernel = compiled("pageheader")
    if kernel is None:
        return None
    try:
        got = kernel.parse(buf, pos)
    except (ValueError, TypeError, BufferError):  # not a contiguous byte buffer, or pos outside it
        return None
    return None if type(got) is int else got  # type: ignore[no-any-return]
