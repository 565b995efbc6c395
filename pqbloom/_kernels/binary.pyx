# cython: language_level=3, boundscheck=False, wraparound=False, initializedcheck=False, cdivision=True
"""Variable-length byte arrays (offsets + data, Arrow's binary layout): PLAIN decode and encode,
gather by index (dictionary take), DELTA_BYTE_ARRAY prefix rebuild, and byte-wise min/max.

Offsets are int64 and every kernel first checks the offsets it reads (non-decreasing, within the
data) and every length prefix against the bytes left, so no read or write leaves its buffer. Sizes
are int64; a sum that could overflow is checked before it is made.
"""

from libc.stdint cimport int32_t, int64_t, uint8_t, uint32_t, uint64_t
from cpython.bytes cimport PyBytes_AS_STRING, PyBytes_FromStringAndSize
from libc.string cimport memcpy, memmove

from pqbloom._kernels._util cimport (bswap64, check_offsets, copy_value, hugepage_hint, load_le32, load_le64,
                                     plain_size, prefetch, u8_mut, u8_ptr)

# error codes (negative returns); details in ``info``
PREFIX_PAST_END = -1  # info: the value whose length prefix is cut off
LAST_PAST_END = -2  # info: bytes the last value runs past the end
BAD_OFFSETS = -3  # offsets not non-decreasing within the data
INDEX_OUT_OF_RANGE = -4  # info: position of the first bad index
INVALID_PREFIX = -5  # a negative prefix length, or a non-zero first one
PREFIX_TOO_LONG = -6  # info: the first value whose prefix is longer than the value before it
TOO_LARGE = -7  # the output would not fit 63 bits
VALUE_TOO_LONG = -8  # info: the first value longer than 2**31-1 bytes (PLAIN encode)
BAD_COUNT = -9  # a value count outside 0..2**31-1, or more than the input's length prefixes could hold
UNUSABLE = -10  # the output offsets are too short for the values

cdef enum:
    E_PREFIX_PAST_END = -1
    E_LAST_PAST_END = -2
    E_BAD_OFFSETS = -3
    E_INDEX_OUT_OF_RANGE = -4
    E_INVALID_PREFIX = -5
    E_PREFIX_TOO_LONG = -6
    E_TOO_LARGE = -7
    E_VALUE_TOO_LONG = -8
    E_BAD_COUNT = -9
    E_UNUSABLE = -10

cdef int64_t _I64_MAX = 0x7FFFFFFFFFFFFFFF

ctypedef fused index_t:
    int32_t
    int64_t


# -- PLAIN BYTE_ARRAY ---------------------------------------------------------------------------

cdef int64_t _plain_decode(const uint8_t *src, int64_t end, int64_t count, int64_t *offsets, uint8_t *dst,
                           int64_t cap, int64_t *info, int64_t base=0) noexcept nogil:
    cdef int64_t pos = 0, total = 0, i, ln, r, k
    cdef bint copying = True
    for i in range(count):
        if end - pos < 4:
            info[0] = i
            return E_PREFIX_PAST_END
        ln = load_le32(src + pos)
        offsets[i] = base + total
        if ln > end - pos - 4:
            # runs past the end: reported as the encodings' loop does (pos stays below 2**33 past
            # the end here, so nothing overflows)
            if i == count - 1:
                info[0] = pos + 4 + ln - end
                return E_LAST_PAST_END
            info[0] = i + 1
            return E_PREFIX_PAST_END
        if total + ln > cap:
            # more data than fits beside the prefixes still to come: the walk must end in an
            # error further on, so go on checking without copying
            copying = False
        if ln and copying:
            r = (ln + 15) & ~15
            if ln <= 128 and total + r <= cap and pos + 4 + r <= end:
                # a short value in fixed 16-byte copies (vector moves, no call): the bytes past it
                # land where the next values go, inside dst (checked), and are overwritten
                k = 0
                while k < ln:
                    memcpy(dst + total + k, src + pos + 4 + k, 16)
                    k += 16
            else:
                memcpy(dst + total, src + pos + 4, <size_t>ln)
        pos += 4 + ln
        total += ln
    offsets[count] = base + total
    if not copying:  # unreachable when data is as long as documented
        return E_TOO_LARGE
    info[0] = total  # the value bytes (the caller must not read them back from offsets[count], which a
    return pos       # column region shares with the next region: another thread may be writing it)


def plain_decode(const uint8_t[::1] buf, int64_t count, int64_t[::1] offsets, uint8_t[::1] data,
                 int64_t[::1] info):
    """Decode ``count`` length-prefixed values in one pass: ``offsets[:count + 1]`` and the bytes
    into ``data`` (at least ``len(buf) - 4 * count`` long: no valid input holds more).

    Returns the bytes used (then ``info[0]`` is the value bytes) or an error code. The checks are the
    ones of the encodings' loop: a prefix that starts past ``len(buf) - 4`` is cut off (the value
    after the one that overran, or the first one), a last value running past the end says by how much.
    """
    if count < 0 or offsets.shape[0] < count + 1 or info.shape[0] < 1:
        raise ValueError("binary.plain_decode: invalid arguments")
    cdef int64_t rc
    with nogil:
        rc = _plain_decode(u8_ptr(buf), buf.shape[0], count, &offsets[0], u8_mut(data), data.shape[0], &info[0])
    return rc


def plain_decode_into(const uint8_t[::1] buf, int64_t count, int64_t[::1] offsets, uint8_t[::1] data,
                      int64_t base):
    """:func:`plain_decode` with the page reader's checks, for a call per page: the offsets start at
    ``base`` (0 .. 2**63-1 less the input's size, else ValueError: the offsets must not wrap). Returns
    (value bytes, input bytes used), or an error code: BAD_COUNT (the count is
    invalid or needs more than the input's bytes for its prefixes), UNUSABLE (``offsets`` shorter
    than ``count + 1``), TOO_LARGE (the values do not fit ``data``) or an input error of
    :func:`plain_decode` (its details are not returned: the caller decodes again to name them)."""
    if base < 0 or base > _I64_MAX - buf.shape[0]:
        # the offsets are base + (at most the page's bytes): they must neither be negative nor wrap
        raise ValueError("binary.plain_decode_into: invalid arguments")
    if count < 0 or count > 0x7FFFFFFF or 4 * count > buf.shape[0]:
        return E_BAD_COUNT
    if offsets.shape[0] < count + 1:
        return E_UNUSABLE
    cdef int64_t rc, info = 0
    with nogil:
        rc = _plain_decode(u8_ptr(buf), buf.shape[0], count, &offsets[0], u8_mut(data), data.shape[0], &info, base)
    if rc < 0:
        return rc
    return info, rc


def plain_encode_size(const int64_t[::1] offsets, int64_t data_len, int64_t[::1] info):
    """Bytes of the PLAIN encoding of the values (4 + length each), or an error code: offsets
    outside ``data_len`` bytes, or a value longer than 2**31-1 bytes (info: its position)."""
    if offsets.shape[0] < 1 or info.shape[0] < 1:
        raise ValueError("binary.plain_encode_size: invalid arguments")
    cdef int64_t rc
    with nogil:
        rc = plain_size(&offsets[0], offsets.shape[0] - 1, data_len, &info[0])
    return rc


cdef int64_t _plain_encode(const int64_t *off, int64_t n, const uint8_t *src, int64_t size, uint8_t *dst,
                           int64_t cap) noexcept nogil:
    cdef int64_t i, a, ln, pos = 0
    if check_offsets(off, n, size):
        return E_BAD_OFFSETS
    for i in range(n):
        a = off[i]
        ln = off[i + 1] - a
        if ln > 0x7FFFFFFF:
            return E_VALUE_TOO_LONG
        if ln > cap - pos - 4:
            return E_TOO_LARGE
        dst[pos] = ln & 0xFF
        dst[pos + 1] = (ln >> 8) & 0xFF
        dst[pos + 2] = (ln >> 16) & 0xFF
        dst[pos + 3] = (ln >> 24) & 0xFF
        pos += 4
        copy_value(dst + pos, cap - pos, src + a, size - a, ln)  # (the next value overwrites the rest)
        pos += ln
    return pos


def plain_encode_bytes(const int64_t[::1] offsets, const uint8_t[::1] data, int64_t size):
    """The PLAIN encoding as a new ``bytes`` of :func:`plain_encode_size` bytes (written in place:
    no copy), or None when the values do not take exactly ``size`` bytes."""
    if offsets.shape[0] < 1 or size < 0:
        raise ValueError("binary.plain_encode_bytes: invalid arguments")
    out = PyBytes_FromStringAndSize(NULL, size)
    cdef uint8_t *dst = <uint8_t *>PyBytes_AS_STRING(out)
    cdef int64_t rc
    with nogil:  # nothing else sees the new bytes object yet
        hugepage_hint(dst, <size_t>size)
        rc = _plain_encode(&offsets[0], offsets.shape[0] - 1, u8_ptr(data), data.shape[0], dst, size)
    return out if rc == size else None


# -- gather (dictionary take) ---------------------------------------------------------------------

cdef int64_t _take_offsets(const int64_t *off, int64_t n, int64_t data_len, const index_t *idx, int64_t m,
                           int64_t *out_off, int64_t *info, int64_t base=0) noexcept nogil:
    # each entry is written once, with its final value (base included): a column region's first and
    # last entries are shared with the neighbouring regions, which other threads write (the same
    # value) at the same time, so no entry may hold a partial value, even for a moment
    cdef int64_t i, k, ln, total = 0
    if check_offsets(off, n, data_len):
        return E_BAD_OFFSETS
    if base < 0:
        return E_TOO_LARGE
    out_off[0] = base
    for i in range(m):
        k = idx[i]
        if k < 0 or k >= n:
            info[0] = i
            return E_INDEX_OUT_OF_RANGE
        ln = off[k + 1] - off[k]
        if ln > _I64_MAX - base - total:  # indices may repeat a long value many times
            return E_TOO_LARGE
        total += ln
        out_off[i + 1] = base + total
    return total


def take_offsets(const int64_t[::1] offsets, int64_t data_len, const index_t[::1] indices,
                 int64_t[::1] out_offsets, int64_t[::1] info):
    """First pass of a gather: ``out_offsets`` (len(indices) + 1) of the taken values; returns
    their total length or an error code (an index outside the dictionary: info, its position)."""
    cdef int64_t m = indices.shape[0], rc
    if offsets.shape[0] < 1 or out_offsets.shape[0] < m + 1 or info.shape[0] < 1:
        raise ValueError("binary.take_offsets: invalid arguments")
    cdef const index_t *idx = &indices[0] if m else NULL
    with nogil:
        rc = _take_offsets(&offsets[0], offsets.shape[0] - 1, data_len, idx, m, &out_offsets[0], &info[0])
    return rc


cdef int64_t _take_data(const int64_t *off, int64_t n, const uint8_t *src, int64_t size, const index_t *idx,
                        int64_t m, uint8_t *dst, int64_t cap) noexcept nogil:
    cdef int64_t i, k, a, ln, pos = 0
    if check_offsets(off, n, size):
        return E_BAD_OFFSETS
    for i in range(m):
        k = idx[i]
        if k < 0 or k >= n:
            return E_INDEX_OUT_OF_RANGE
        a = off[k]
        ln = off[k + 1] - a
        if ln > cap - pos:
            return E_TOO_LARGE
        copy_value(dst + pos, cap - pos, src + a, size - a, ln)  # (the next value overwrites the rest)
        pos += ln
    return pos


def take_data(const int64_t[::1] offsets, const uint8_t[::1] data, const index_t[::1] indices, uint8_t[::1] out):
    """Second pass of a gather: copy the values into ``out`` (exactly their total length).
    Every index and size is checked again: the first pass's results are not trusted."""
    cdef int64_t m = indices.shape[0], rc
    if offsets.shape[0] < 1:
        raise ValueError("binary.take_data: invalid arguments")
    cdef const index_t *idx = &indices[0] if m else NULL
    with nogil:
        rc = _take_data(&offsets[0], offsets.shape[0] - 1, u8_ptr(data), data.shape[0], idx, m, u8_mut(out),
                        out.shape[0])
    return rc


cdef int64_t _take_into(const int64_t *off, int64_t n, const uint8_t *src, int64_t size, const index_t *idx,
                        int64_t m, int64_t *out_off, uint8_t *dst, int64_t cap, int64_t base,
                        int64_t *info) noexcept nogil:
    cdef int64_t total, rc
    total = _take_offsets(off, n, size, idx, m, out_off, info, base)
    if total < 0:
        return total
    if total > cap:
        return E_UNUSABLE
    rc = _take_data(off, n, src, size, idx, m, dst, cap)
    if rc != total:  # the inputs changed between the passes (another thread): not a result
        return E_UNUSABLE if rc >= 0 else rc
    return total


def take_into(const int64_t[::1] offsets, const uint8_t[::1] data, const index_t[::1] indices,
              int64_t[::1] out_offsets, uint8_t[::1] out, int64_t base, int64_t[::1] info):
    """Both passes of a gather into the caller's buffers (a column's region): ``out_offsets[:m + 1]``
    (``m`` = len(indices)) starting at ``base``, the bytes into ``out`` from 0. Returns their total
    length, UNUSABLE when they do not fit ``out`` (nothing written to it; ``out_offsets`` then holds
    garbage), or another error code as :func:`take_offsets`. Nothing past ``out`` is ever written:
    ``out`` may be a stretch of a larger buffer that other threads write beyond."""
    cdef int64_t m = indices.shape[0], rc
    if offsets.shape[0] < 1 or out_offsets.shape[0] < m + 1 or info.shape[0] < 1:
        raise ValueError("binary.take_into: invalid arguments")
    cdef const index_t *idx = &indices[0] if m else NULL
    with nogil:
        rc = _take_into(&offsets[0], offsets.shape[0] - 1, u8_ptr(data), data.shape[0], idx, m, &out_offsets[0],
                        u8_mut(out), out.shape[0], base, &info[0])
    return rc


# -- DELTA_BYTE_ARRAY -----------------------------------------------------------------------------

cdef int64_t _prefix_offsets(const int32_t *prefix, int64_t n, const int64_t *soff, int64_t suffix_len,
                             int64_t *out_off, int64_t *info) noexcept nogil:
    cdef int64_t i, p, ln, prev = 0, total = 0, too_long = -1
    cdef bint invalid = False
    if check_offsets(soff, n, suffix_len):
        return E_BAD_OFFSETS
    out_off[0] = 0
    if n and prefix[0] != 0:
        invalid = True
    for i in range(n):
        p = prefix[i]
        if p < 0:
            invalid = True
            p = 0  # go on: a negative prefix anywhere takes precedence over a too-long one
        elif i and p > prev and too_long < 0:
            too_long = i
        # the lengths stay within the suffix bytes while every prefix is valid; invalid ones may
        # make them grow, so the sum is checked
        ln = p + (soff[i + 1] - soff[i])
        if ln > _I64_MAX - total:
            return E_TOO_LARGE
        total += ln
        out_off[i + 1] = total
        prev = ln
    if invalid:
        return E_INVALID_PREFIX
    if too_long >= 0:
        info[0] = too_long
        return E_PREFIX_TOO_LONG
    return total


def prefix_offsets(const int32_t[::1] prefix, const int64_t[::1] suffix_offsets, int64_t suffix_len,
                   int64_t[::1] out_offsets, int64_t[::1] info):
    """First pass of the prefix rebuild: the offsets of the values (prefix + suffix lengths).

    Value i is the first ``prefix[i]`` bytes of value i-1 followed by suffix i. As in the
    encodings, any negative prefix or a non-zero first one is INVALID_PREFIX (whatever else is
    wrong), else a prefix longer than the previous value is PREFIX_TOO_LONG (info: the first).
    Returns the total length of the values.
    """
    cdef int64_t n = prefix.shape[0], rc
    if suffix_offsets.shape[0] != n + 1 or out_offsets.shape[0] < n + 1 or info.shape[0] < 1:
        raise ValueError("binary.prefix_offsets: invalid arguments")
    cdef const int32_t *p = &prefix[0] if n else NULL
    with nogil:
        rc = _prefix_offsets(p, n, &suffix_offsets[0], suffix_len, &out_offsets[0], &info[0])
    return rc


cdef int64_t _prefix_data(const int32_t *prefix, int64_t n, const int64_t *soff, const uint8_t *src,
                          int64_t size, uint8_t *dst, int64_t cap) noexcept nogil:
    cdef int64_t i, p, s, pos = 0, prev = 0, prev_len = 0
    if check_offsets(soff, n, size):
        return E_BAD_OFFSETS
    for i in range(n):
        p = prefix[i]
        s = soff[i + 1] - soff[i]
        if p < 0 or p > prev_len:
            return E_INVALID_PREFIX
        if p + s > cap - pos:
            return E_TOO_LARGE
        if p:
            memmove(dst + pos, dst + prev, <size_t>p)  # the previous value, just before pos
        if s:
            memcpy(dst + pos + p, src + soff[i], <size_t>s)
        prev = pos
        prev_len = p + s
        pos += prev_len
    return pos


def prefix_data(const int32_t[::1] prefix, const int64_t[::1] suffix_offsets, const uint8_t[::1] suffix_data,
                uint8_t[::1] out):
    """Second pass: write the values into ``out`` (their total length), each one's prefix copied
    from the value before it in ``out``. Every size is checked again."""
    cdef int64_t n = prefix.shape[0], rc
    if suffix_offsets.shape[0] != n + 1:
        raise ValueError("binary.prefix_data: invalid arguments")
    cdef const int32_t *p = &prefix[0] if n else NULL
    with nogil:
        rc = _prefix_data(p, n, &suffix_offsets[0], u8_ptr(suffix_data), suffix_data.shape[0], u8_mut(out),
                          out.shape[0])
    return rc


# -- statistics -----------------------------------------------------------------------------------

cdef inline int _cmp(const uint8_t *a, int64_t la, const uint8_t *b, int64_t lb) noexcept nogil:
    """Byte-wise unsigned order, a prefix before the longer value. Eight bytes at a time as
    big-endian words: values that share a long head (URLs, paths) reach here for nearly every
    comparison, and a memcmp call per value cost more than the words."""
    cdef int64_t m = la if la < lb else lb
    cdef int64_t j = 0
    cdef uint64_t x, y
    while j + 8 <= m:
        x = bswap64(load_le64(a + j))
        y = bswap64(load_le64(b + j))
        if x != y:
            return -1 if x < y else 1
        j += 8
    while j < m:
        if a[j] != b[j]:
            return -1 if a[j] < b[j] else 1
        j += 1
    return (la > lb) - (la < lb)


cdef inline uint64_t _key(const uint8_t *v, int64_t ln, int64_t room) noexcept nogil:
    """The first 8 bytes of a value (zero-padded) as a big-endian word: comparing keys compares
    the values' first 8 bytes. ``room``: bytes readable from ``v`` (8-byte loads stay inside)."""
    cdef uint64_t k = 0
    cdef int64_t j
    if ln >= 8 and room >= 8:
        return bswap64(load_le64(v))
    for j in range(ln if ln < 8 else 8):
        k |= <uint64_t>v[j] << (56 - 8 * j)
    return k


cdef int64_t _argminmax(const int64_t *off, int64_t n, const uint8_t *src, int64_t size,
                        int64_t *result) noexcept nogil:
    cdef int64_t i, lo = 0, hi = 0, ln, lo_len, hi_len
    cdef uint64_t key, lo_key, hi_key
    if check_offsets(off, n, size):
        return E_BAD_OFFSETS
    lo_len = hi_len = off[1] - off[0]
    lo_key = hi_key = _key(src + off[0], lo_len, size - off[0])
    for i in range(1, n):
        ln = off[i + 1] - off[i]
        # values follow one another in memory: ask for the bytes 2 KiB ahead, which the hardware
        # prefetcher alone did not bring in time (a page's first pass over its values is this one)
        prefetch(src + off[i] + 2048)
        key = _key(src + off[i], ln, size - off[i])
        # the first 8 bytes decide most comparisons; equal keys fall back to the whole values.
        # Strict comparisons keep the first of equal values, as the numpy reference does.
        if key < lo_key or (key == lo_key and _cmp(src + off[i], ln, src + off[lo], lo_len) < 0):
            lo, lo_len, lo_key = i, ln, key
        elif key > hi_key or (key == hi_key and _cmp(src + off[i], ln, src + off[hi], hi_len) > 0):
            hi, hi_len, hi_key = i, ln, key
    result[0] = lo
    result[1] = hi
    return 0


def argminmax(const int64_t[::1] offsets, const uint8_t[::1] data, int64_t[::1] result):
    """Indices of the first smallest and the first largest value (``result[0]``, ``result[1]``)
    in byte-wise unsigned order; 0, or BAD_OFFSETS. At least one value."""
    if offsets.shape[0] < 2 or result.shape[0] < 2:
        raise ValueError("binary.argminmax: needs at least one value")
    cdef int64_t rc
    with nogil:
        rc = _argminmax(&offsets[0], offsets.shape[0] - 1, u8_ptr(data), data.shape[0], &result[0])
    return rc
