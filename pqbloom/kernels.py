"""The decoding and encoding loops numpy cannot vectorize, compiled when possible.

Each function runs the compiled kernel (Cython, :mod:`pqbloom._kernels`, built by ``pip install``)
unless the extension is missing or ``PQBLOOM_PURE_PYTHON=1`` is set, in which case it runs the
numpy reference of the same name in :mod:`pqbloom.kernels_reference`. Both give the same results
and raise the same :mod:`pqbloom.errors` exceptions with the same messages; the compiled kernels
release the GIL, so threads decode in parallel.

``COMPILED`` says which is in use (tests switch it to run both). Each compiled module is built on its
own: ``BUILT`` names those that were, ``MISSING`` those that were not (their kernels run the
reference; ``EXTENSION_BUILT`` is True when none is missing).

The kernels:

1. :func:`decode_hybrid`: RLE / bit-packed hybrid into a preallocated array (levels, dictionary
   indices, booleans), returning the bytes used; :func:`page_levels`: a data page's repetition and
   definition levels (v1 or v2 blocks) in one call, counting the values present;
2. :func:`decode_plain_byte_array`: PLAIN BYTE_ARRAY to offsets + data in one pass;
3. :func:`take_binary` (:func:`take_binary_into`): gather by index (dictionary take), no padding;
4. :func:`scatter_nulls`: nulls placed from definition levels, with Arrow's validity bitmap;
   :func:`spread_offsets`: a byte-array column's offsets spread to its rows in place;
5. :func:`rebuild_prefixes`: DELTA_BYTE_ARRAY values from prefix lengths and suffixes;
6. :func:`list_offsets`: repetition and definition levels to the innermost list's offsets;
   :func:`check_chunk_levels`: a nested chunk's levels checked (and its records counted) in one pass;
7. :func:`binary_argminmax` and :func:`encode_plain_byte_array` (write path);
8. :func:`decimal_buffer`: DECIMAL values to Arrow decimal128 / decimal256 bytes;
9. :func:`decode_delta_binary_packed`: DELTA_BINARY_PACKED (INT32 / INT64 values, and the lengths
   and prefixes of the DELTA byte-array encodings);
10. :func:`page_header`: the fields of a Thrift ``PageHeader`` the page loop reads (its reference is
    the Thrift decoder of :mod:`pqbloom.format`, which the caller runs whenever this returns None);
11. :func:`decimal_objects` and :func:`time_objects`: ``decimal.Decimal`` and ``datetime.time`` objects in
    bulk, for object columns (these hold the GIL: they create objects).
"""

from __future__ import annotations

import importlib
import os
from typing import Any

import numpy as np

from . import kernels_decimals, kernels_delta, kernels_objects
from . import kernels_reference as reference
from .arrays import BinaryArray, Buffer, as_u8
from .encodings.hybrid_numpy import empty_run_message
from .errors import CorruptFileError

__all__ = [
    "COMPILED", "EXTENSION_BUILT", "decode_hybrid", "page_levels", "decode_plain_byte_array",
    "decode_plain_byte_array_into", "take_binary", "take_binary_into", "scatter_nulls", "spread_offsets",
    "rebuild_prefixes", "list_offsets", "check_chunk_levels", "binary_argminmax", "encode_plain_byte_array",
    "decimal_buffer", "decode_delta_binary_packed", "page_header", "decimal_objects", "time_objects", "MODULES",
    "BUILT", "MISSING",
]


#: the compiled modules of pqbloom/_kernels (``pool``: the buffer pool of :mod:`pqbloom.buffers`; ``arrow_c`` and
#: ``arrow_c_import``: the Arrow C interfaces of :mod:`pqbloom.arrow_c`)
MODULES: tuple[str, ...] = ("binary", "decimals", "delta", "hybrid", "levels", "pageheader", "pool", "arrow_c",
                           "arrow_c_import", "objects")


# each compiled module or None: each is built on its own (setup.py), so a module that failed to
# compile leaves the others in use, and its kernels run the numpy reference
_modules: dict[str, Any] = {}
for _name in MODULES:
    try:
        _modules[_name] = importlib.import_module(f"pqbloom._kernels.{_name}")
    except ImportError:  # not built (no C compiler at install time, a failed compile, a source checkout)
        _modules[_name] = None
# the compiled modules (no stubs: Any), None where not built
_binary, _decimals, _delta, _hybrid, _levels, _pageheader, _objects = (
    _modules[name] for name in ("binary", "decimals", "delta", "hybrid", "levels", "pageheader", "objects"))
#: the compiled modules that were built (and import)
BUILT: tuple[str, ...] = tuple(name for name in MODULES if _modules[name] is not None)
#: the compiled modules that were not built: their kernels run the numpy reference
MISSING: tuple[str, ...] = tuple(name for name in MODULES if name not in BUILT)

#: every compiled module was built
EXTENSION_BUILT: bool = not MISSING
#: the compiled kernels are in use (else the numpy reference), for the modules in BUILT
COMPILED: bool = bool(BUILT) and os.environ.get("PQBLOOM_PURE_PYTHON", "") in ("", "0")


def _use(module: Any) -> bool:
    """Whether a kernel runs compiled: the kernels are in use and its module was built."""
    return COMPILED and module is not None


def _bytes(buf: Buffer) -> np.ndarray:
    """A contiguous uint8 view (a copy only when ``buf`` is a strided array)."""
    return np.ascontiguousarray(as_u8(buf))


def _info() -> np.ndarray:
    return np.zeros(3, np.int64)


def _bad_offsets() -> ValueError:
    return ValueError("invalid BinaryArray: offsets decrease or reach outside the data")


# -- 1. RLE / bit-packed hybrid ------------------------------------------------------------------

def decode_hybrid(buf: Buffer, bit_width: int, count: int, out: np.ndarray) -> int:
    """Decode ``count`` values of the RLE / bit-packed hybrid into ``out[:count]``; return the bytes used.

    ``out``: int8 / int16 (levels; an RLE value wider than ``bit_width`` is corrupt), int32 (levels,
    dictionary indices: values as stored) or bool (non-zero is True). Truncated or inconsistent
    input raises CorruptFileError; see :func:`pqbloom.kernels_reference.decode_hybrid`.
    """
    if not _use(_hybrid):
        return reference.decode_hybrid(buf, bit_width, count, out)
    count = reference.check_hybrid_args(bit_width, count, out)
    info = _info()
    rc = int(_hybrid.decode(_bytes(buf), bit_width, count, out.view(np.uint8) if out.dtype == np.bool_ else out,
                            info))
    if rc >= 0:
        return rc
    raise _hybrid_error(rc, info, bit_width)


def _hybrid_error(rc: int, info: Any, bit_width: int) -> CorruptFileError:
    """The reference's CorruptFileError for a negative return of the compiled hybrid decoder."""
    if rc == _hybrid.HEADER_TRUNCATED:
        return CorruptFileError("RLE/bit-packed run header: truncated varint")
    if rc == _hybrid.HEADER_TOO_LONG:
        return CorruptFileError("RLE/bit-packed run header: varint too long")
    if rc == _hybrid.BITPACKED_TRUNCATED:
        return CorruptFileError(f"bit-packed run truncated: needs {info[0]} bytes at offset {info[1]}, have {info[2]}")
    if rc == _hybrid.RLE_VALUE_TRUNCATED:
        return CorruptFileError("RLE run value truncated")
    if rc == _hybrid.EMPTY_RUN:
        return CorruptFileError(empty_run_message(bool(info[0]), int(info[1])))
    return CorruptFileError(f"RLE run value {info[0]} does not fit {bit_width} bits")


_NO_LEVELS = np.zeros(0, np.int8)


def page_levels(buf: Buffer, count: int, rep_bw: int, def_bw: int, rep_len: int, def_len: int,
                reps: np.ndarray | None, defs: np.ndarray | None, max_def: int) -> tuple[int, int]:
    """A data page's repetition and definition levels in one call: (bytes they take, number of
    definition levels equal to ``max_def``); see :func:`pqbloom.kernels_reference.page_levels`."""
    if not _use(_hybrid):
        return reference.page_levels(buf, count, rep_bw, def_bw, rep_len, def_len, reps, defs, max_def)
    # an absent block's array is not touched; the kernel takes one dtype for both
    r = reps if rep_bw else (defs if def_bw else _NO_LEVELS)
    d = defs if def_bw else r
    try:
        # the kernel checks what its memory safety needs (widths, lengths, dtypes, shapes) and raises
        # ValueError, TypeError or OverflowError for a bad call: the reference's checks then give the
        # same message. ``buf`` goes as it is (a contiguous byte buffer: bytes, a memoryview, uint8).
        got = _hybrid.page_levels(buf, count, rep_bw, def_bw, rep_len, def_len, r, d, max_def)
    except (ValueError, TypeError, OverflowError, BufferError):
        u8 = _bytes(buf)  # a strided or non-byte buffer: as the reference takes it
        try:
            got = _hybrid.page_levels(u8, count, rep_bw, def_bw, rep_len, def_len, r, d, max_def)
        except (ValueError, TypeError, OverflowError):
            reference.check_page_levels_args(u8, count, rep_bw, def_bw, rep_len, def_len, reps, defs)
            raise
    rc = got[0]
    if rc >= 0:
        return got  # type: ignore[no-any-return]
    if rc == _hybrid.LEVELS_NO_PREFIX:
        raise CorruptFileError("level data truncated: no length prefix")
    if rc == _hybrid.LEVELS_PAST_END:
        raise CorruptFileError(f"level data length {got[1]} exceeds the {got[2]} bytes available")
    raise _hybrid_error(rc, got[1:4], def_bw if got[4] else rep_bw)  # got[4]: which block failed


# -- 2. PLAIN BYTE_ARRAY decode ------------------------------------------------------------------

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
    if not _use(_binary):
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
    if not _use(_binary):
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
    idx = _index_array(indices) if _use(_binary) else None
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
    idx = _index_array(indices) if _use(_binary) else None
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


# -- 4. nulls placed from definition levels ------------------------------------------------------

def _level_arg(levels: np.ndarray, max_level: int) -> tuple[np.ndarray, int] | None:
    """Levels as the kernels take them: a bool mask as uint8 with level 1, levels widened to int32
    when their type cannot hold ``max_level``; None for a level only the reference handles."""
    lv = np.ascontiguousarray(reference.check_levels(levels, "levels"))
    if lv.dtype == np.bool_:
        return lv.view(np.uint8), 1
    if not -(1 << 31) <= max_level < (1 << 31):
        return None
    info = np.iinfo(lv.dtype)
    if not info.min <= max_level <= info.max:
        lv = lv.astype(np.int32)
    return lv, max_level


def scatter_nulls(dense: Any, levels: np.ndarray, max_level: int = 1, where: str = "column",
                  out: np.ndarray | None = None) -> tuple[Any, np.ndarray]:
    """Full-length values and Arrow's validity bitmap (little-endian bits) from dense values, in
    one pass over the definition levels (or a bool presence mask).

    ``dense``: a numpy array (1-D, or 2-D uint8 rows) or a BinaryArray (its data is shared, not
    copied). Null slots hold zeros (empty values). CorruptFileError when the levels define a
    different number of values than ``dense`` holds. ``out``: where the values go (see
    :func:`pqbloom.kernels_reference.scatter_nulls`; every row of it is written).
    """
    if _use(_levels) and out is not None and type(dense) is type(levels) is type(out) is np.ndarray \
            and levels.dtype == np.bool_ and dense.ndim == levels.ndim == 1 and out.shape == levels.shape \
            and dense.dtype == out.dtype and dense.dtype.kind in "iufbmM" and dense.flags.c_contiguous \
            and levels.flags.c_contiguous and out.flags.c_contiguous and out.flags.writeable:
        validity = np.empty((len(levels) + 7) // 8, np.uint8)  # (the reader's case: the checks made short)
        if int(_levels.scatter_fixed(levels.view(np.uint8), 1, dense.view(np.uint8), dense.itemsize,
                                     out.view(np.uint8), validity)) >= 0:
            return out, validity
    # plain data only: the kernel copies bytes, which would not count references to Python objects
    plain = isinstance(dense, BinaryArray) or (isinstance(dense, np.ndarray) and not dense.dtype.hasobject)
    arg = _level_arg(levels, max_level) if _use(_levels) and plain else None
    if arg is None:
        return reference.scatter_nulls(dense, levels, max_level, where, out)
    lv, top = arg
    n = len(lv)
    if out is not None:
        reference.check_scatter_out(dense, n, out)
    validity = np.empty((n + 7) // 8, np.uint8)
    if isinstance(dense, BinaryArray):
        offs = np.ascontiguousarray(dense.offsets, dtype=np.int64)
        out_off = np.empty(n + 1, np.int64)
        rc = int(_levels.scatter_binary(lv, top, offs, out_off, validity))
        result: Any = None if rc < 0 else BinaryArray(out_off, dense.compact().data)
    else:
        d = np.ascontiguousarray(dense)
        row = d.dtype.itemsize * int(np.prod(d.shape[1:], dtype=np.int64))
        result = np.empty((n,) + d.shape[1:], d.dtype) if out is None else out
        if row == 0:  # zero-width rows: nothing to place, only the count to check
            rc = int(_levels.scatter_fixed(lv, top, np.zeros(len(d), np.uint8), 1, np.empty(n, np.uint8), validity))
            rc = rc if rc < 0 else len(d)
        else:
            rc = int(_levels.scatter_fixed(lv, top, d.reshape(-1).view(np.uint8), row,
                                           result.reshape(-1).view(np.uint8), validity))
    if rc < 0:
        present = lv == top
        raise CorruptFileError(f"{where}: {int(np.count_nonzero(present))} defined levels but {len(dense)} values")
    return result, validity


def spread_offsets(full: np.ndarray, present: np.ndarray, count: int) -> None:
    """The ``count + 1`` dense offsets at the head of ``full`` spread to one per row in place; see
    :func:`pqbloom.kernels_reference.spread_offsets` (one backward pass here, no index array)."""
    if not (_use(_levels) and isinstance(full, np.ndarray) and full.dtype == np.int64 and full.flags.c_contiguous
            and full.flags.writeable and isinstance(present, np.ndarray) and present.dtype == np.bool_
            and present.ndim == 1 and present.flags.c_contiguous and 0 <= count < len(full)
            and len(present) < len(full)):
        return reference.spread_offsets(full, present, count)
    if int(_levels.spread_offsets(full, present.view(np.uint8), count)) < 0:
        reference.spread_offsets(full, present, count)  # raises its CorruptFileError (nothing written)


# -- 5. DELTA_BYTE_ARRAY prefix rebuild ----------------------------------------------------------

def rebuild_prefixes(prefix: np.ndarray, suffixes: BinaryArray) -> BinaryArray:
    """DELTA_BYTE_ARRAY values: value i is the first ``prefix[i]`` bytes of value i-1, then suffix i.

    Every prefix length is checked against the previous value's length (CorruptFileError). The
    sizes are computed first, so the data is allocated once.
    """
    p = np.asarray(prefix)
    if not _use(_binary) or p.dtype.kind not in "iu" or (
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


# -- 6. repetition levels to list offsets --------------------------------------------------------

def list_offsets(defs: np.ndarray, reps: np.ndarray, elem_def: int, ctx_def: int = 0, ctx_rep: int = 0,
                 where: str = "list") -> np.ndarray:
    """Offsets (int64, one per slot + 1) of the innermost list level, in one pass over the levels.

    Slots start at the entries with ``reps <= ctx_rep`` and ``defs >= ctx_def``; elements are the
    entries with ``defs >= elem_def``. CorruptFileError for an element before the first slot.
    """
    if not _use(_levels) or not all(-(1 << 31) <= x < (1 << 31) for x in (elem_def, ctx_def, ctx_rep)):
        return reference.list_offsets(defs, reps, elem_def, ctx_def, ctx_rep, where)
    d = reference.check_levels(defs, "definition levels")
    r = reference.check_levels(reps, "repetition levels")
    if len(d) != len(r):
        raise ValueError(f"{len(d)} definition levels for {len(r)} repetition levels")
    if d.dtype != r.dtype or d.dtype == np.bool_:
        d, r = d.astype(np.int32), r.astype(np.int32)
    d, r = np.ascontiguousarray(d), np.ascontiguousarray(r)
    nslots = int(_levels.count_slots(d, r, ctx_def, ctx_rep))
    out = np.empty(nslots + 1, np.int64)
    rc = int(_levels.list_offsets(d, r, ctx_def, ctx_rep, elem_def, out))
    if rc == _levels.ELEMENTS_BEFORE_FIRST_SLOT:
        raise CorruptFileError(f"{where}: elements before the first slot")
    if rc != nslots:  # pragma: no cover - the levels changed between the passes
        raise RuntimeError("list_offsets: levels changed during the pass")
    return out


def check_chunk_levels(defs: np.ndarray | None, reps: np.ndarray | None, max_def: int, max_rep: int,
                       rep_def: list[int], n: int) -> int:
    """Refuse a chunk's levels no valid writer produces and count its records, in one pass over
    both level arrays; see :func:`pqbloom.kernels_reference.check_chunk_levels`."""
    if not _use(_levels) or defs is None or reps is None or not len(reps) or len(defs) != len(reps) \
            or defs.dtype != reps.dtype or defs.dtype not in reference.HYBRID_DTYPES[:3] \
            or not 0 <= max_rep < len(rep_def) or rep_def[0] != 0 \
            or not 0 <= max_def <= np.iinfo(defs.dtype).max or max_rep > np.iinfo(defs.dtype).max \
            or not all(0 <= x <= max_def for x in rep_def[:max_rep + 1]):
        # levels the kernel's one type cannot hold the maxima of (or mixed types): the reference
        return reference.check_chunk_levels(defs, reps, max_def, max_rep, rep_def, n)
    info = np.zeros(4, np.int64)
    _levels.check_chunk(np.ascontiguousarray(defs), np.ascontiguousarray(reps), max_def, max_rep,
                        np.array(rep_def[:max_rep + 1], np.int64), info)
    if info[1] or info[2] or info[3] or reps[0] != 0:  # an error: the reference finds and reports it
        return reference.check_chunk_levels(defs, reps, max_def, max_rep, rep_def, n)
    return int(info[0])


# -- 7. write path -------------------------------------------------------------------------------

def binary_argminmax(values: BinaryArray | np.ndarray) -> tuple[int, int]:
    """Indices of the first smallest and first largest value in byte-wise unsigned order (a prefix
    before the longer value). A BinaryArray or an ``(n, w)`` uint8 matrix, ``n`` > 0."""
    if not _use(_binary):
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
    if not _use(_binary):
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


# -- 8. decimals to Arrow ------------------------------------------------------------------------

def decimal_buffer(values: BinaryArray | np.ndarray, byte_width: int) -> np.ndarray:
    """DECIMAL unscaled values as Arrow decimal128 (16) / decimal256 (32) bytes; see
    :func:`pqbloom.kernels_decimals.decimal_buffer` (where this kernel's wrapper lives)."""
    return kernels_decimals.decimal_buffer(values, byte_width, _decimals if COMPILED else None)


# -- 9. DELTA_BINARY_PACKED ----------------------------------------------------------------------

def decode_delta_binary_packed(buf: Buffer, count: int | None = None,
                               dtype: type | np.dtype = np.int64) -> tuple[np.ndarray, int]:
    """DELTA_BINARY_PACKED values: (int32 or int64 array, bytes the whole stream uses).

    ``count`` defaults to the header's total count; when given it must not exceed it and only the
    first ``count`` values are returned (the rest of the stream is still checked and its size
    counted). INT32 values wrap modulo 2**32. See
    :func:`pqbloom.encodings.delta_numpy.decode_delta_binary_packed_numpy` for what is accepted;
    CorruptFileError otherwise. (The wrapper is :mod:`pqbloom.kernels_delta`.)
    """
    return kernels_delta.decode_delta_binary_packed(buf, count, dtype, _delta if COMPILED else None)


# -- 10. page headers ----------------------------------------------------------------------------

def page_header(buf: Buffer, pos: int) -> tuple[Any, ...] | None:
    """The page header at ``buf[pos]`` as a flat tuple (see ``pqbloom._kernels.pageheader.parse``),
    or None: not compiled, or bytes the compiled parser does not accept (malformed or unusual). The
    caller then decodes the header with Thrift (:func:`pqbloom.format.decode_at`), which raises the
    error, so both modes fail with the same message."""
    if not _use(_pageheader):
        return None
    try:
        got = _pageheader.parse(buf, pos)
    except (ValueError, TypeError, BufferError):  # not a contiguous byte buffer, or pos outside it
        return None
    return None if type(got) is int else got  # type: ignore[no-any-return]


# -- 11. Python objects ---------------------------------------------------------------------------

def decimal_objects(values: np.ndarray, scale: int, mask: np.ndarray | None = None) -> np.ndarray:
    """``decimal.Decimal`` objects (an object array; None where ``mask``) of DECIMAL unscaled values at
    ``scale``, as pyarrow makes them; see :func:`pqbloom.kernels_reference_objects.decimal_objects`."""
    return kernels_objects.decimal_objects(values, scale, mask, _objects if _use(_objects) else None)


def time_objects(micros: np.ndarray, mask: np.ndarray | None = None) -> np.ndarray:
    """``datetime.time`` objects (an object array; None where ``mask``) of microseconds after midnight; see
    :func:`pqbloom.kernels_reference_objects.time_objects`."""
    return kernels_objects.time_objects(micros, mask, _objects if _use(_objects) else None)
