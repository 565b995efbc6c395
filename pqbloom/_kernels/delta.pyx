# cython: language_level=3, boundscheck=False, wraparound=False, initializedcheck=False, cdivision=True
"""DELTA_BINARY_PACKED decoding (INT32 / INT64 values; DELTA_LENGTH_BYTE_ARRAY lengths,
DELTA_BYTE_ARRAY prefix and suffix lengths).

Layout (parquet-format ``Encodings.md``)::

    header := varint(block_size) varint(miniblocks_per_block) varint(total_count) zigzag_varint(first_value)
    block  := zigzag_varint(min_delta) miniblock_bit_widths[miniblocks_per_block] miniblock_bodies

Two passes, as the reference orders its checks before charging the memory budget: :func:`walk`
checks the header and every block header (what the reference accepts, exactly: see
:mod:`pqbloom.kernels.reference.delta`) and returns the bytes used; the wrapper charges and
allocates, then :func:`decode` unpacks and sums in one pass straight into the output. Any refusal
is one code (``CORRUPT``): the wrapper then lets the reference raise its exact error and message
(header values there can exceed 64 bits).

Bounds checking is explicit (the directives above turn Cython's off): a 64-bit load is used only
when the bytes it reads are inside the input; near the end bytes are loaded one at a time, those
past the end read as zeros (a last miniblock may lack its padding).
"""

from libc.stdint cimport int32_t, int64_t, uint8_t, uint32_t, uint64_t

from pqbloom._kernels._util cimport load_le64, u8_ptr

CORRUPT = -1  # the stream is refused; the reference names why

cdef enum:
    E_CORRUPT = -1
    MAX_BLOCK_SIZE = 65536
    MAX_COUNT = 2147483647

ctypedef fused out_t:
    int32_t
    int64_t


cdef struct Header:
    int64_t block_size
    int64_t n_mb
    int64_t vpm  # values per miniblock
    int64_t total
    int64_t count  # values wanted
    int64_t n_blocks
    int64_t pos  # first byte after the header
    uint64_t first


cdef inline int _varint(const uint8_t *src, int64_t end, int64_t *pos, uint64_t *lo, int *hi) noexcept nogil:
    """A varint as ``read_uleb128`` reads it (at most 10 bytes): its low 64 bits in ``lo``, bits
    64..69 in ``hi``. -1 when truncated or too long."""
    cdef uint64_t byte, r = 0
    cdef int shift = 0, h = 0
    cdef int64_t p = pos[0]
    while True:
        if p >= end:
            return -1
        byte = src[p]
        p += 1
        r |= (byte & 0x7F) << shift
        if shift == 63:
            h = <int>((byte & 0x7F) >> 1)
        if not byte & 0x80:
            break
        shift += 7
        if shift >= 70:
            return -1
    pos[0] = p
    lo[0] = r
    hi[0] = h
    return 0


cdef inline uint64_t _unzigzag(uint64_t lo, int hi) noexcept nogil:
    """The uint64 bit pattern of a zigzag value (bit 64 of the varint matters: it lands in bit 63)."""
    return ((lo >> 1) | (<uint64_t>(hi & 1) << 63)) ^ (<uint64_t>0 - (lo & 1))


cdef int _header(const uint8_t *src, int64_t end, int64_t count, Header *h) noexcept nogil:
    """Read and check the header (``count`` -1: the header's total). 0, or -1 when refused."""
    cdef int64_t pos = 0, n_deltas
    cdef uint64_t bs, nmb, total, zfirst
    cdef int hbs, hnmb, htotal, hfirst
    if _varint(src, end, &pos, &bs, &hbs) < 0 or _varint(src, end, &pos, &nmb, &hnmb) < 0 \
            or _varint(src, end, &pos, &total, &htotal) < 0 or _varint(src, end, &pos, &zfirst, &hfirst) < 0:
        return -1
    if hbs or bs == 0 or bs % 128 or bs > MAX_BLOCK_SIZE:
        return -1
    if hnmb or nmb == 0 or bs % nmb or (bs // nmb) % 32:
        return -1
    if htotal or total > MAX_COUNT:
        return -1
    if count == -1:
        count = <int64_t>total
    elif count < 0 or count > <int64_t>total:
        return -1
    h.block_size = <int64_t>bs
    h.n_mb = <int64_t>nmb
    h.vpm = <int64_t>(bs // nmb)
    h.total = <int64_t>total
    h.count = count
    n_deltas = h.total - 1 if h.total > 0 else 0
    h.n_blocks = (n_deltas + h.block_size - 1) // h.block_size
    if h.n_blocks * (1 + h.n_mb) > end - pos:
        return -1
    h.pos = pos
    h.first = _unzigzag(zfirst, hfirst)
    return 0


cdef int64_t _walk(const uint8_t *src, int64_t end, const Header *h) noexcept nogil:
    """Check every block header; return the bytes the stream uses, or -1 (the reference's walk)."""
    cdef int64_t pos = h.pos, n_deltas = h.total - 1 if h.total > 0 else 0
    cdef int64_t left = n_deltas, used, nused, walked = 0, last_w = 0, last_pos = 0, b, m, wp
    cdef uint64_t zmin
    cdef int hi, w
    for b in range(h.n_blocks):
        if _varint(src, end, &pos, &zmin, &hi) < 0:
            return -1
        if pos + h.n_mb > end:
            return -1
        wp = pos
        pos += h.n_mb
        used = left if left < h.block_size else h.block_size
        left -= used
        nused = (used + h.vpm - 1) // h.vpm  # widths past the values may be anything
        for m in range(nused):
            w = src[wp + m]
            if w > 64:
                return -1
            last_w = w
            last_pos = pos
            walked += 1
            pos += h.vpm * w // 8
    if pos > end:  # only the last miniblock may be cut short, and only in its padding
        if last_pos + ((n_deltas - (walked - 1) * h.vpm) * last_w + 7) // 8 > end:
            return -1
        pos = end
    return pos


cdef inline uint64_t _load_tail(const uint8_t *src, int64_t end, int64_t at, int n) noexcept nogil:
    """``n`` (<= 8) little-endian bytes from ``at``, the bytes at or past ``end`` as zeros."""
    cdef uint64_t v = 0
    cdef int i
    for i in range(n):
        if at + i < end:
            v |= <uint64_t>src[at + i] << (8 * i)
    return v


cdef inline void _store(out_t *out, uint64_t v) noexcept nogil:
    if out_t is int32_t:
        out[0] = <int32_t><uint32_t>v  # INT32 wraps modulo 2**32, as the writers intend
    else:
        out[0] = <int64_t>v


cdef uint64_t _miniblock(const uint8_t *src, int64_t end, int64_t pos, int w, int64_t take, uint64_t min_delta,
                         uint64_t cur, out_t *out) noexcept nogil:
    """``take`` values of a miniblock of width ``w`` at ``pos``, each the previous plus its delta;
    return the last value."""
    cdef uint64_t mask = ~<uint64_t>0 if w == 64 else (<uint64_t>1 << w) - 1, v
    cdef int64_t j, bit, at
    cdef int sh
    if w == 0:
        for j in range(take):
            cur += min_delta
            _store(out + j, cur)
        return cur
    if pos + ((take * w) >> 3) + 8 <= end:
        # every 8-byte load (and the 9th byte a value over 56 bits may need) is inside the input
        for j in range(take):
            bit = j * w
            at = pos + (bit >> 3)
            sh = bit & 7
            v = load_le64(src + at) >> sh
            if sh + w > 64:
                v |= <uint64_t>src[at + 8] << (64 - sh)
            cur += (v & mask) + min_delta
            _store(out + j, cur)
        return cur
    for j in range(take):
        bit = j * w
        at = pos + (bit >> 3)
        sh = bit & 7
        v = _load_tail(src, end, at, 8) >> sh
        if sh + w > 64:
            v |= _load_tail(src, end, at + 8, 1) << (64 - sh)
        cur += (v & mask) + min_delta
        _store(out + j, cur)
    return cur


cdef int64_t _decode(const uint8_t *src, int64_t end, const Header *h, out_t *out) noexcept nogil:
    """Decode ``h.count`` values into ``out``; 0, or -1 for a stream :func:`_walk` would refuse."""
    cdef int64_t pos = h.pos, k = 1, m, wp, take
    cdef uint64_t cur = h.first, zmin, min_delta
    cdef int hi, w
    if h.count == 0:
        return 0
    _store(out, cur)
    while k < h.count:
        if _varint(src, end, &pos, &zmin, &hi) < 0 or pos + h.n_mb > end:
            return -1
        min_delta = _unzigzag(zmin, hi)
        wp = pos
        pos += h.n_mb
        for m in range(h.n_mb):
            if k >= h.count:
                break
            w = src[wp + m]
            if w > 64:
                return -1
            take = h.count - k
            if take > h.vpm:
                take = h.vpm
            cur = _miniblock(src, end, pos, w, take, min_delta, cur, out + k)
            k += take
            pos += h.vpm * w // 8
    return 0


def walk(const uint8_t[::1] src, int64_t count, int64_t[::1] info):
    """Check a stream (``count`` -1: all its values); return the bytes it uses, with the number of
    values to decode in ``info[0]``, or ``CORRUPT``."""
    cdef Header h
    cdef int64_t rc
    cdef const uint8_t *p = u8_ptr(src)
    cdef int64_t end = src.shape[0]
    if info.shape[0] < 1:
        raise ValueError("info needs 1 slot")
    with nogil:
        rc = _header(p, end, count, &h)
        if rc == 0:
            rc = _walk(p, end, &h)
    if rc >= 0:
        info[0] = h.count
    return rc


def decode(const uint8_t[::1] src, int64_t count, out_t[::1] out):
    """Decode a stream :func:`walk` accepted into ``out`` (int32 or int64, at least the values
    wanted); 0, or ``CORRUPT``."""
    cdef Header h
    cdef int64_t rc
    cdef const uint8_t *p = u8_ptr(src)
    cdef int64_t end = src.shape[0]
    with nogil:
        rc = _header(p, end, count, &h)
        if rc == 0:
            if out.shape[0] < h.count:
                rc = -1
            elif h.count > 0:
                rc = _decode(p, end, &h, &out[0])
    return rc
