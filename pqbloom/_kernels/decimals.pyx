# cython: language_level=3, boundscheck=False, wraparound=False, initializedcheck=False, cdivision=True
"""Parquet DECIMAL values to Arrow decimal128 / decimal256 buffers.

Parquet stores a decimal's unscaled value as big-endian two's complement bytes (FIXED_LEN_BYTE_ARRAY
or BYTE_ARRAY, any length, an empty value being 0) or as an INT32 / INT64. Arrow wants 16 or 32
little-endian two's complement bytes per value: the bytes are reversed and sign-extended. A value
longer than the output fits only when its extra leading bytes are all sign extension; the first
one that does not is reported (info: its position).
"""

from libc.stdint cimport int32_t, int64_t, uint8_t, uint64_t
from libc.string cimport memset

from pqbloom._kernels._util cimport check_offsets, u8_mut, u8_ptr

DOES_NOT_FIT = -1
BAD_OFFSETS = -2

cdef enum:
    E_DOES_NOT_FIT = -1
    E_BAD_OFFSETS = -2

ctypedef fused int_t:
    int32_t
    int64_t


cdef inline int _convert(const uint8_t *v, int64_t ln, uint8_t *dst, int width) noexcept nogil:
    """One big-endian value of ``ln`` bytes into ``width`` little-endian bytes; -1 if it does not fit."""
    cdef int64_t k, keep = ln if ln < width else width
    cdef uint8_t fill = 0
    if ln:
        fill = 0xFF if v[ln - keep] & 0x80 else 0  # the sign of the bytes kept
        for k in range(ln - keep):  # dropped leading bytes must repeat that sign
            if v[k] != fill:
                return -1
    for k in range(keep):
        dst[k] = v[ln - 1 - k]
    memset(dst + keep, fill, <size_t>(width - keep))
    return 0


cdef inline void _short(const uint8_t *v, int64_t ln, uint8_t *dst, int width) noexcept nogil:
    """One big-endian value of 1 to 8 bytes (it always fits): gathered into a word, sign-extended with
    unsigned arithmetic (no shift of a negative number), its 8 bytes stored, the rest sign fill."""
    cdef uint64_t x = 0, m = (<uint64_t>1) << (8 * ln - 1)
    cdef int64_t k
    for k in range(ln):
        x = (x << 8) | v[k]
    x = (x ^ m) - m
    for k in range(8):
        dst[k] = <uint8_t>(x >> (8 * k))
    memset(dst + 8, 0xFF if x >> 63 else 0, <size_t>(width - 8))


cdef int64_t _from_fixed(const uint8_t *src, int64_t n, int64_t value_len, int width, uint8_t *dst,
                         int64_t *info) noexcept nogil:
    cdef int64_t i
    if 1 <= value_len <= 8:  # decimal(18) and narrower, as pyarrow writes them (width is 16 or 32)
        for i in range(n):
            _short(src + i * value_len, value_len, dst + i * width, width)
        return 0
    for i in range(n):
        if _convert(src + i * value_len, value_len, dst + i * width, width):
            info[0] = i
            return E_DOES_NOT_FIT
    return 0


def from_fixed(const uint8_t[::1] values, int64_t n, int64_t value_len, int width, uint8_t[::1] out,
               int64_t[::1] info):
    """``n`` values of ``value_len`` bytes each (FIXED_LEN_BYTE_ARRAY) into ``out``; 0 or DOES_NOT_FIT."""
    if n < 0 or value_len < 0 or width not in (16, 32) or info.shape[0] < 1 \
            or (value_len and values.shape[0] // value_len < n) or out.shape[0] // width < n:
        raise ValueError("decimals.from_fixed: invalid arguments")
    cdef int64_t rc
    with nogil:
        rc = _from_fixed(u8_ptr(values), n, value_len, width, u8_mut(out), &info[0])
    return rc


cdef int64_t _from_binary(const int64_t *off, int64_t n, const uint8_t *src, int64_t size, int width,
                          uint8_t *dst, int64_t *info) noexcept nogil:
    cdef int64_t i
    if check_offsets(off, n, size):
        return E_BAD_OFFSETS
    for i in range(n):
        if _convert(src + off[i], off[i + 1] - off[i], dst + i * width, width):
            info[0] = i
            return E_DOES_NOT_FIT
    return 0


def from_binary(const int64_t[::1] offsets, const uint8_t[::1] data, int width, uint8_t[::1] out,
                int64_t[::1] info):
    """Variable-length values (BYTE_ARRAY) into ``out``; 0, DOES_NOT_FIT or BAD_OFFSETS."""
    cdef int64_t n = offsets.shape[0] - 1, rc
    if n < 0 or width not in (16, 32) or out.shape[0] // width < n or info.shape[0] < 1:
        raise ValueError("decimals.from_binary: invalid arguments")
    with nogil:
        rc = _from_binary(&offsets[0], n, u8_ptr(data), data.shape[0], width, u8_mut(out), &info[0])
    return rc


cdef void _from_ints(const int_t *values, int64_t n, int width, uint8_t *dst) noexcept nogil:
    cdef int64_t i, v
    cdef int k
    for i in range(n):
        v = values[i]
        for k in range(8):  # byte by byte: right on either host byte order
            dst[i * width + k] = (v >> (8 * k)) & 0xFF
        memset(dst + i * width + 8, 0xFF if v < 0 else 0, <size_t>(width - 8))


def from_ints(const int_t[::1] values, int width, uint8_t[::1] out):
    """INT32 / INT64 unscaled values, sign-extended into ``out``."""
    cdef int64_t n = values.shape[0]
    if width not in (16, 32) or out.shape[0] // width < n:
        raise ValueError("decimals.from_ints: invalid arguments")
    if n == 0:
        return 0
    with nogil:
        _from_ints(&values[0], n, width, &out[0])
    return 0
