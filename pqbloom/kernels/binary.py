"""The byte-array kernels (compiled module ``binary``): PLAIN BYTE_ARRAY to offsets + data in one pass
(:func:`decode_plain_byte_array`, or straight into a column's buffers), the dictionary gather
(:func:`take_binary`, :func:`take_binary_into`: no padding), DELTA_BYTE_ARRAY values from prefix lengths
and suffixes (:func:`rebuild_prefixes`), and for the write path :func:`binary_argminmax` and
:func:`encode_plain_byte_array`. The reference is :mod:`pqbloom.kernels.reference.binary`.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..arrays import BinaryArray, Buffer, as_u8
from ..errors import CorruptFileError
from . import built, compiled
from .reference import binary as reference

__all__ = ["decode_plain_byte_array", "decode_plain_byte_array_into", "take_binary", "take_binary_into",
           "rebuild_prefixes", "binary_argminmax", "encode_plain_byte_array"]


#: the compiled module (its calls and error codes) when built; whether it is in use is decided per call
_binary: Any = built("binary")


def _use() -> bool:
    return compiled("binary") is not None


def _bytes(buf: Buffer) -> np.ndarray:
    """A contiguous uint8 view (a copy only when ``buf`` is a strided array)."""
    return np.ascontiguousarray(as_u8(buf))


def _info() -> np.ndarray:
    return np.zeros(3, np.int64)


def _bad_offsets() -> ValueError:
    return ValueError("invalid BinaryArray: offsets decrease or reach outside the data")


# -- PLAIN BYTE_ARRAY decode -------------------------------------------------------------------

def _plain_byte_array_input(buf: Buffer, count: int) -> tuple[np.ndarray, int, int]:
    """The page as uint8, the checked value count and the page size (the reference's checks)."""
    u8 = _bytes(buf)
    count = int(count)
    if count < 0 or count > (1 << 31) - 1:
        raise CorruptFileError(f"PLAIN BYTE_ARRAY: invalid value count {count}")
    size = len(u8)
    if 4 * count > size:
        raise CorruptFileError(f"PLAIN BYTE_ARRAY: {count} values need at least {4 * count} bytes, "
                               f"only {size} available")
    return u8, count, size


def _check_plain_decode(rc: int, info: np.ndarray, size: int) -> None:
    """The reference's CorruptFileError for the kernel's two input errors."""
    if rc == _binary.PREFIX_PAST_END:
        raise CorruptFileError(f"PLAIN BYTE_ARRAY: value length prefix past the end of the {size}-byte page "
                               f"(value {info[0]})")
    if rc == _binary.LAST_PAST_END:
        raise CorruptFileError(f"PLAIN BYTE_ARRAY: last value runs {info[0]} bytes past the end of the page")


def decode_plain_byte_array(buf: Buffer, count: int) -> tuple[BinaryArray, int]:
    """``count`` values of 4-byte little-endian length + bytes: (BinaryArray, bytes used).

    One pass over the input; the data is allocated once (its size is bounded by the input less
    the length prefixes). CorruptFileError for a length prefix or a value past the end.
    """
    if not _use():
        return reference.decode_plain_byte_array(buf, count)
    try:
        size = memoryview(buf).nbytes  # type: ignore[arg-type]
        count = int(count)
    except (TypeError, ValueError):  # the checks below raise what the reference does
        size = -1
    if 0 <= count <= size // 4:
        offsets = np.empty(count + 1, np.int64)
        data = np.empty(size - 4 * count, np.uint8)
        try:
            got = _binary.plain_decode_into(buf, count, offsets, data, 0)
        except (ValueError, TypeError, BufferError):  # a strided or non-byte buffer
            got = None
        if type(got) is tuple:
            total, used = got
            if len(data) - total > (1 << 16):  # bytes after the values (rare): do not keep them alive
                return BinaryArray.wrap(offsets, data[:total].copy()), used
            return BinaryArray.wrap(offsets, data[:total]), used
    # an invalid count, an input error (named by the checks below) or a buffer the kernel refused
    u8, count, size = _plain_byte_array_input(buf, count)
    offsets = np.empty(count + 1, np.int64)
    data = np.empty(size - 4 * count, np.uint8)
    info = _info()
    rc = int(_binary.plain_decode(u8, count, offsets, data, info))
    _check_plain_decode(rc, info, size)
    if rc < 0:  # pragma: no cover - the data buffer is sized so that it cannot overflow
        raise AssertionError(f"binary.plain_decode returned {rc}")
    total = int(offsets[-1])
    if len(data) - total > (1 << 16):  # bytes after the values (rare): do not keep them alive
        return BinaryArray(offsets, data[:total].copy()), rc
    return BinaryArray(offsets, data[:total]), rc


def decode_plain_byte_array_into(buf: Buffer, count: int, offsets: np.ndarray, data: np.ndarray,
                                 base: int = 0) -> tuple[int, int] | None:
    """:func:`decode_plain_byte_array` straight into the caller's buffers (a column's, so the page
    is not copied a second time): ``offsets[:count + 1]`` (contiguous int64, starting at ``base``)
    and the bytes into ``data`` (contiguous uint8) from 0. Returns (value bytes, input bytes used),
    or None when the values do not fit (the kernel then stops writing at the end of ``data`` and
    ``offsets[:count + 1]`` holds garbage). Errors as :func:`decode_plain_byte_array`."""
    if not _use():
        return reference.decode_plain_byte_array_into(buf, count, offsets, data, base)
    try:
        # one call per page: the kernel checks the count and the buffers (typed memoryviews: dtype,
        # contiguity, writability), so the checks below run only when it refuses or fails
        got = _binary.plain_decode_into(buf, count, offsets, data, base)
    except (ValueError, TypeError, BufferError, OverflowError):
        got = None
    if type(got) is tuple:
        return got  # type: ignore[no-any-return]
    if got == _binary.TOO_LARGE or got == _binary.UNUSABLE:
        return None
    return _plain_into_checked(buf, count, offsets, data, base)


def _plain_into_checked(buf: Buffer, count: int, offsets: np.ndarray, data: np.ndarray,
                        base: int) -> tuple[int, int] | None:
    """:func:`decode_plain_byte_array_into` with every check in Python (the errors' details)."""
    u8 = _bytes(buf)
    reference.check_offsets_base(base, len(u8))  # a bad call first, as the kernel and the reference say
    u8, count, size = _plain_byte_array_input(u8, count)
    if not reference.into_buffers_usable(count, offsets, data):
        return None
    info = _info()
    # decoded from 0 aside, then written once with base: a column region's first and last entries are
    # shared with its neighbours' regions, so they never hold a value relative to this page
    rel = np.empty(count + 1, np.int64)
    rc = int(_binary.plain_decode(u8, count, rel, data, info))
    _check_plain_decode(rc, info, size)
    if rc == _binary.TOO_LARGE:
        return None
    if rc < 0:  # pragma: no cover - no other error is reported
        raise AssertionError(f"binary.plain_decode returned {rc}")
    np.add(rel, base, out=offsets[:count + 1])
    return int(rel[count]), rc


# -- 3. gather (dictionary take) -----------------------------------------------------------------

def _index_array(indices: Any) -> np.ndarray | None:
    """int32 / int64 indices as the kernel takes them; None for a type only the reference handles."""
    idx = np.asarray(indices)
    if idx.ndim != 1:
        return None
    if idx.dtype in (np.dtype(np.int32), np.dtype(np.int64)):
        return np.ascontiguousarray(idx)
    if idx.dtype.kind == "i" or (idx.dtype.kind == "u" and idx.dtype.itemsize < 8):
        return np.ascontiguousarray(idx, dtype=np.int64)
    return None


def take_binary(values: BinaryArray, indices: Any) -> BinaryArray:
    """``values[indices]`` as a compact BinaryArray, copied in two passes (sizes, then bytes):
    no padding, no per-byte index. CorruptFileError for an index out of range, naming the
    smallest index when one is negative, else the largest (as the dictionary decoder does)."""
    idx = _index_array(indices) if _use() else None
    if idx is None:
        return reference.take_binary(values, indices)
    offs = np.ascontiguousarray(values.offsets, dtype=np.int64)
    data = np.ascontiguousarray(values.data)
    new_off = np.empty(len(idx) + 1, np.int64)
    info = _info()
    total = int(_binary.take_offsets(offs, len(data), idx, new_off, info))
    if total == _binary.INDEX_OUT_OF_RANGE:
        lo, hi = int(idx.min()), int(idx.max())
        raise CorruptFileError(f"dictionary index {lo if lo < 0 else hi} out of range for a dictionary "
                               f"of {len(values)} values")
    if total == _binary.BAD_OFFSETS:
        raise _bad_offsets()
    if total < 0:  # pragma: no cover - more than 2**63 bytes cannot be allocated anyway
        raise CorruptFileError("dictionary take: values too large")
    out = np.empty(total, np.uint8)
    rc = int(_binary.take_data(offs, data, idx, out))
    if rc != total:  # pragma: no cover - the inputs changed between the passes
        raise RuntimeError("take_binary: inputs changed during the gather")
    return BinaryArray(new_off, out)


def take_binary_into(values: BinaryArray, indices: Any, offsets: np.ndarray, data: np.ndarray,
                     base: int = 0) -> int | None:
    """:func:`take_binary` straight into the caller's buffers (a column's region, so the values are
    not copied a second time): ``offsets[:len(indices) + 1]`` (contiguous int64, starting at ``base``)
    and the bytes into ``data`` (contiguous uint8) from 0, never past it. Returns the bytes taken,
    or None when they do not fit (``offsets`` then holds garbage). Errors as :func:`take_binary`."""
    idx = _index_array(indices) if _use() else None
    if idx is None or not reference.into_buffers_usable(len(idx), offsets, data):
        return reference.take_binary_into(values, indices, offsets, data, base)
    info = _info()
    rc = int(_binary.take_into(np.ascontiguousarray(values.offsets, dtype=np.int64), np.ascontiguousarray(values.data),
                               idx, offsets, data, base, info))
    if rc >= 0:
        return rc
    if rc != _binary.UNUSABLE:
        take_binary(values, idx)  # raises the error (bad index, bad offsets) as the two-pass gather does
    return None



# -- DELTA_BYTE_ARRAY prefix rebuild -----------------------------------------------------------

def rebuild_prefixes(prefix: np.ndarray, suffixes: BinaryArray) -> BinaryArray:
    """DELTA_BYTE_ARRAY values: value i is the first ``prefix[i]`` bytes of value i-1, then suffix i.

    Every prefix length is checked against the previous value's length (CorruptFileError). The
    sizes are computed first, so the data is allocated once.
    """
    p = np.asarray(prefix)
    if not _use() or p.dtype.kind not in "iu" or (
            p.dtype != np.int32 and len(p) and not (int(p.min()) >= -(1 << 31) and int(p.max()) < (1 << 31))):
        return reference.rebuild_prefixes(prefix, suffixes)
    p32 = np.ascontiguousarray(p, dtype=np.int32)
    n = len(p32)
    if n != len(suffixes):
        raise ValueError(f"{n} prefix lengths for {len(suffixes)} suffixes")
    soff = np.ascontiguousarray(suffixes.offsets, dtype=np.int64)
    sdata = np.ascontiguousarray(suffixes.data)
    offsets = np.empty(n + 1, np.int64)
    info = _info()
    total = int(_binary.prefix_offsets(p32, soff, len(sdata), offsets, info))
    if total == _binary.INVALID_PREFIX:
        raise CorruptFileError("DELTA_BYTE_ARRAY: invalid prefix length")
    if total == _binary.PREFIX_TOO_LONG:
        raise CorruptFileError("DELTA_BYTE_ARRAY: prefix longer than the previous value")
    if total == _binary.BAD_OFFSETS:
        raise _bad_offsets()
    if total < 0:  # pragma: no cover - needs more than 2**63 bytes of values
        raise CorruptFileError("DELTA_BYTE_ARRAY: values too large")
    if n == 0 or not bool(p32.any()):
        return suffixes  # as the reference: nothing to rebuild
    out = np.empty(total, np.uint8)
    rc = int(_binary.prefix_data(p32, soff, sdata, out))
    if rc != total:  # pragma: no cover - the inputs changed between the passes
        raise RuntimeError("rebuild_prefixes: inputs changed during the rebuild")
    return BinaryArray(offsets, out)



# -- write path --------------------------------------------------------------------------------

def binary_argminmax(values: BinaryArray | np.ndarray) -> tuple[int, int]:
    """Indices of the first smallest and first largest value in byte-wise unsigned order (a prefix
    before the longer value). A BinaryArray or an ``(n, w)`` uint8 matrix, ``n`` > 0."""
    if not _use():
        return reference.binary_argminmax(values)
    if len(values) == 0:
        raise ValueError("binary_argminmax of no values")
    if isinstance(values, np.ndarray):
        mat = np.ascontiguousarray(values, dtype=np.uint8)
        n, w = mat.shape
        offs = np.arange(n + 1, dtype=np.int64) * w
        data = mat.reshape(-1)
    else:
        offs = np.ascontiguousarray(values.offsets, dtype=np.int64)
        data = np.ascontiguousarray(values.data)
    res = np.zeros(2, np.int64)
    if int(_binary.argminmax(offs, data, res)) < 0:
        raise _bad_offsets()
    return int(res[0]), int(res[1])


def encode_plain_byte_array(values: BinaryArray) -> bytes:
    """PLAIN BYTE_ARRAY: each value as a 4-byte little-endian length, then its bytes (one pass)."""
    if not _use():
        return reference.encode_plain_byte_array(values)
    if not isinstance(values, BinaryArray):
        raise TypeError(f"BYTE_ARRAY values must be a BinaryArray, got {type(values).__name__}")
    offs = np.ascontiguousarray(values.offsets, dtype=np.int64)
    data = np.ascontiguousarray(values.data)
    size = int(_binary.plain_encode_size(offs, len(data), _info()))
    if size == _binary.VALUE_TOO_LONG:
        raise ValueError("a BYTE_ARRAY value is longer than 2**31-1 bytes")
    if size < 0:
        raise _bad_offsets()
    out = _binary.plain_encode_bytes(offs, data, size)
    if out is None:  # pragma: no cover - the inputs changed between the passes
        raise RuntimeError("encode_plain_byte_array: inputs changed during the encoding")
    return out  # type: ignore[no-any-return]
