"""The RLE / bit-packed hybrid kernels (compiled module ``hybrid``): :func:`decode_hybrid` into a
preallocated array (levels, dictionary indices, booleans), returning the bytes used, and
:func:`page_levels`, a data page's repetition and definition levels (v1 or v2 blocks) in one call,
counting the values present. The reference is :mod:`pqbloom.kernels.reference.hybrid`.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..arrays import Buffer, as_u8
from ..errors import CorruptFileError
from . import compiled
from .reference import hybrid as reference
from .reference.hybrid import empty_run_message
from .reference.hybrid_encode import encode_hybrid as reference_encode

__all__ = ["decode_hybrid", "page_levels", "encode_hybrid", "gather_dictionary"]


def decode_hybrid(buf: Buffer, bit_width: int, count: int, out: np.ndarray) -> int:
    """Decode ``count`` values of the RLE / bit-packed hybrid into ``out[:count]``; return the bytes used.

    ``out``: int8 / int16 (levels; an RLE value wider than ``bit_width`` is corrupt), int32 (levels,
    dictionary indices: values as stored) or bool (non-zero is True). Truncated or inconsistent
    input raises CorruptFileError; see :func:`pqbloom.kernels.reference.hybrid.decode_hybrid`.
    """
    kernel = compiled("hybrid")
    if kernel is None:
        return reference.decode_hybrid(buf, bit_width, count, out)
    count = reference.check_hybrid_args(bit_width, count, out)
    info = np.zeros(3, np.int64)
    rc = int(kernel.decode(np.ascontiguousarray(as_u8(buf)), bit_width, count,
                           out.view(np.uint8) if out.dtype == np.bool_ else out, info))
    if rc >= 0:
        return rc
    raise _hybrid_error(kernel, rc, info, bit_width)


def _hybrid_error(kernel: Any, rc: int, info: Any, bit_width: int) -> CorruptFileError:
    """The reference's CorruptFileError for a negative return of the compiled hybrid decoder."""
    if rc == kernel.HEADER_TRUNCATED:
        return CorruptFileError("RLE/bit-packed run header: truncated varint")
    if rc == kernel.HEADER_TOO_LONG:
        return CorruptFileError("RLE/bit-packed run header: varint too long")
    if rc == kernel.BITPACKED_TRUNCATED:
        return CorruptFileError(f"bit-packed run truncated: needs {info[0]} bytes at offset {info[1]}, have {info[2]}")
    if rc == kernel.RLE_VALUE_TRUNCATED:
        return CorruptFileError("RLE run value truncated")
    if rc == kernel.EMPTY_RUN:
        return CorruptFileError(empty_run_message(bool(info[0]), int(info[1])))
    return CorruptFileError(f"RLE run value {info[0]} does not fit {bit_width} bits")


_NO_LEVELS = np.zeros(0, np.int8)


def page_levels(buf: Buffer, count: int, rep_bw: int, def_bw: int, rep_len: int, def_len: int,
                reps: np.ndarray | None, defs: np.ndarray | None, max_def: int) -> tuple[int, int]:
    """A data page's repetition and definition levels in one call: (bytes they take, number of
    definition levels equal to ``max_def``); see :func:`pqbloom.kernels.reference.hybrid.page_levels`."""
    kernel = compiled("hybrid")
    if kernel is None:
        return reference.page_levels(buf, count, rep_bw, def_bw, rep_len, def_len, reps, defs, max_def)
    # an absent block's array is not touched; the kernel takes one dtype for both
    r = reps if rep_bw else (defs if def_bw else _NO_LEVELS)
    d = defs if def_bw else r
    try:
        # the kernel checks what its memory safety needs (widths, lengths, dtypes, shapes) and raises
        # ValueError, TypeError or OverflowError for a bad call: the reference's checks then give the
        # same message. ``buf`` goes as it is (a contiguous byte buffer: bytes, a memoryview, uint8).
        got = kernel.page_levels(buf, count, rep_bw, def_bw, rep_len, def_len, r, d, max_def)
    except (ValueError, TypeError, OverflowError, BufferError):
        u8 = np.ascontiguousarray(as_u8(buf))  # a strided or non-byte buffer: as the reference takes it
        try:
            got = kernel.page_levels(u8, count, rep_bw, def_bw, rep_len, def_len, r, d, max_def)
        except (ValueError, TypeError, OverflowError):
            reference.check_page_levels_args(u8, count, rep_bw, def_bw, rep_len, def_len, reps, defs)
            raise
    rc = got[0]
    if rc >= 0:
        return got  # type: ignore[no-any-return]
    if rc == kernel.LEVELS_NO_PREFIX:
        raise CorruptFileError("level data truncated: no length prefix")
    if rc == kernel.LEVELS_PAST_END:
        raise CorruptFileError(f"level data length {got[1]} exceeds the {got[2]} bytes available")
    raise _hybrid_error(kernel, rc, got[1:4], def_bw if got[4] else rep_bw)  # got[4]: which block failed


#: the integer types the compiled encoder takes as they are (others are widened first)
_ENCODE_DTYPES = frozenset(np.dtype(t) for t in (np.uint8, np.int8, np.int16, np.int32, np.int64))


def encode_hybrid(values: np.ndarray, bit_width: int, min_rle_run: int = 8) -> bytes:
    """The RLE / bit-packed hybrid encoding of a 1-D integer array whose values the caller has checked
    fit ``bit_width`` (0..32) bits, no length prefix; see
    :func:`pqbloom.kernels.reference.hybrid_encode.encode_hybrid` for the runs chosen (the same bytes)."""
    kernel = compiled("hybrid_encode")
    v = np.asarray(values).reshape(-1)
    if kernel is None or not 0 <= bit_width <= 32 or min_rle_run < 8:
        return reference_encode(v, bit_width, min_rle_run)
    if v.dtype not in _ENCODE_DTYPES:
        if v.dtype == np.bool_:
            v = v.view(np.uint8)
        elif v.dtype in (np.dtype(np.uint16), np.dtype(np.uint32)):
            v = v.astype(np.int64)
        else:
            return reference_encode(v, bit_width, min_rle_run)
    n = len(v)
    # bit-packed groups, a 1-byte header per 63 of them or per stretch, at most 9 bytes per RLE run
    out = np.empty((n // 8 + 3) * (bit_width + 11) + 16, np.uint8)
    rc = int(kernel.encode(np.ascontiguousarray(v), bit_width, min_rle_run, out))
    if rc < 0:  # pragma: no cover - the output is sized for the worst case
        return reference_encode(v, bit_width, min_rle_run)
    return out[:rc].tobytes()


_NO_FLAGS = np.zeros(0, np.uint8)


def gather_dictionary(buf: Buffer, count: int, dictionary: np.ndarray, present: np.ndarray | None,
                      out: np.ndarray) -> int:
    """The ``count`` values of an RLE_DICTIONARY data page looked up in ``dictionary`` and written to
    ``out``'s rows in one pass (no array of indices, no array of values, no scatter): all rows, or
    with ``present`` (a bool mask) the rows it marks, zeros at the others. Returns the bytes used;
    see :func:`pqbloom.kernels.reference.hybrid.gather_dictionary` (arguments, errors)."""
    kernel = compiled("hybrid")
    if kernel is not None and type(out) is np.ndarray and type(dictionary) is np.ndarray \
            and out.dtype == dictionary.dtype and out.shape[1:] == dictionary.shape[1:] \
            and not out.dtype.hasobject and out.flags.c_contiguous and out.flags.writeable \
            and dictionary.flags.c_contiguous and len(out) and 0 <= count <= len(out) \
            and (len(out) == count if present is None else
                 type(present) is np.ndarray and present.dtype == np.bool_ and present.ndim == 1
                 and present.flags.c_contiguous and len(present) == len(out)):
        width = out.itemsize * (out.size // len(out))
        try:
            rc = int(kernel.gather_dictionary(buf, count, dictionary.reshape(-1).view(np.uint8), len(dictionary),
                                              width, _NO_FLAGS if present is None else present.view(np.uint8),
                                              out.reshape(-1).view(np.uint8), len(out)))
        except (ValueError, TypeError, BufferError):  # a buffer the kernel does not take (strided...)
            rc = kernel.GATHER_FAILED
        if rc >= 0:
            return rc
    # every case the kernel does not take, and the pages it refused: the reference decodes them or
    # names the error
    return reference.gather_dictionary(buf, count, dictionary, present, out)
