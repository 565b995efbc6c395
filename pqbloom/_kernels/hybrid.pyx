# cython: language_level=3, boundscheck=False, wraparound=False, initializedcheck=False, cdivision=True
"""RLE / bit-packed hybrid decoding (levels, dictionary indices, booleans).

Layout (parquet-format ``Encodings.md``)::

    run := rle-run | bit-packed-run
    rle-run := varint(count << 1) value-in-ceil(bit_width/8)-LE-bytes
    bit-packed-run := varint(groups << 1 | 1) groups*bit_width bytes  (8 values per group, LSB first)

One pass over the runs writes the values straight into the caller's array. The semantics are those
of :func:`pqbloom.kernels.reference.hybrid.decode_hybrid` (the encodings' run loop): a run header is a varint
of at most 5 bytes holding at most 32 bits (as parquet-java and Arrow read it), a run of 0 values
is corrupt (a decoder would make no progress: Arrow refuses it), a bit-packed run may lack only bytes
of its last group (a final run cut short of its padding; a run claiming more groups than the input
holds is corrupt), and the bytes used end after the last run needed (its padding included, as far
as the input holds it).

Bounds checking is explicit (the directives above turn Cython's off): every read is preceded by a
comparison of what it needs against the bytes left, with 64-bit arithmetic that cannot overflow.
"""

from libc.stdint cimport int8_t, int16_t, int32_t, int64_t, uint8_t, uint32_t, uint64_t
from libc.stdlib cimport free, malloc
from libc.string cimport memcpy, memset

from pqbloom._kernels._util cimport count_equal_bytes, load_le32, load_le64, u8_mut, u8_ptr

# error codes (negative returns); the Python wrapper turns them into CorruptFileError
HEADER_TRUNCATED = -1  # a run header's varint is cut off
HEADER_TOO_LONG = -2  # a run header's varint goes on past 10 bytes
BITPACKED_TRUNCATED = -3  # info: bytes needed, offset, bytes available
RLE_VALUE_TRUNCATED = -4
VALUE_TOO_WIDE = -5  # info: the largest RLE value (int8/int16 output only)
EMPTY_RUN = -8  # info: 1 for a bit-packed run (0 for RLE), the offset of its header

cdef enum:
    E_HEADER_TRUNCATED = -1
    E_HEADER_TOO_LONG = -2
    E_BITPACKED_TRUNCATED = -3
    E_RLE_VALUE_TRUNCATED = -4
    E_VALUE_TOO_WIDE = -5
    E_EMPTY_RUN = -8

ctypedef fused out_t:
    int8_t
    int16_t
    int32_t
    uint8_t  # booleans: any non-zero value is True


cdef inline void _unpack8(const uint8_t *p, int bw, uint32_t mask, uint32_t *dst) noexcept nogil:
    """Eight values of ``bw`` bits (1..32) from ``p``, which must have ``bw + 8`` readable bytes.

    Value j starts at bit j*bw: one 64-bit little-endian load at its first byte holds it whole
    (it starts at bit < 8 of the word and spans at most 32 bits).
    """
    cdef int j, bit
    for j in range(8):
        bit = j * bw
        dst[j] = <uint32_t>(load_le64(p + (bit >> 3)) >> (bit & 7)) & mask


cdef inline void _unpack8_narrow(const uint8_t *p, int bw, uint32_t mask, uint32_t *dst) noexcept nogil:
    """:func:`_unpack8` for ``bw`` <= 8 (levels): the group's ``bw`` bytes in one 64-bit load, which
    must have 8 readable bytes."""
    cdef uint64_t w = load_le64(p)
    cdef int j
    for j in range(8):
        dst[j] = <uint32_t>(w >> (j * bw)) & mask


cdef inline void _store(out_t *out, const uint32_t *vals, int64_t n) noexcept nogil:
    cdef int64_t j
    for j in range(n):
        if out_t is uint8_t:
            out[j] = vals[j] != 0
        else:
            out[j] = <out_t>vals[j]  # int32: the bit pattern (values of 32 bits may be negative)


cdef extern from *:
    """
    #include <stdint.h>
    #include <string.h>
    /* The 8 bits of a byte as 8 bytes of 0 or 1 (bit j -> byte j), in a few word operations: the
       byte copied into every lane, lane j keeping bit j, then 0x80 - (1 << j) added to lane j so that
       its top bit says whether bit j was set (no lane carries into the next: each sum is <= 0x80). */
    static inline void pqb_spread_bits(uint8_t byte, uint8_t *out) {
        uint64_t x = ((uint64_t)byte * 0x0101010101010101ULL) & 0x8040201008040201ULL;
        x = ((x + 0x00406070787C7E7FULL) >> 7) & 0x0101010101010101ULL;
    #if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
        x = __builtin_bswap64(x);
    #endif
        memcpy(out, &x, 8);
    }
    """
    void spread_bits "pqb_spread_bits"(uint8_t byte, uint8_t *out) noexcept nogil


cdef inline void _unpack8_bits(uint8_t byte, out_t *out) noexcept nogil:
    """Bit width 1 (levels of optional columns, booleans): eight values from one byte (one 8-byte
    store for byte-wide outputs: a value at a time, the levels of a large column took measurably
    longer; docs/benchmarks.md)."""
    cdef int j
    if out_t is int8_t or out_t is uint8_t:
        spread_bits(byte, <uint8_t *>out)
    else:
        for j in range(8):
            out[j] = (byte >> j) & 1


cdef void _unpack_run(const uint8_t *src, int64_t avail, int bw, int64_t take, out_t *out) noexcept nogil:
    """``take`` values of a bit-packed run at ``src``; ``avail`` bytes are readable from ``src``.

    The caller checked ``avail >= ceil(take * bw / 8)``. Whole groups far enough from the end of
    the input are unpacked straight into ``out``; the rest from a zero-padded copy (a final run
    may lack its padding bytes, and the 64-bit loads must not read past the buffer).
    """
    cdef uint32_t mask = <uint32_t>((<uint64_t>1 << bw) - 1)
    cdef uint32_t vals[8]
    cdef uint8_t tmp[48]
    cdef int64_t g = 0, ngroups = (take + 7) >> 3, full = take >> 3, at, n, have, safe
    if bw == 1:
        for g in range(full):  # a group is one byte, all within the checked bytes
            _unpack8_bits(src[g], out + g * 8)
        g = full
    else:
        # groups whose 64-bit loads stay inside the input: g * bw + bw + 8 <= avail (all of them
        # but near the end of the input: no division per run then, runs are often one group)
        if avail >= full * bw + 8:
            safe = full
        else:
            safe = (avail - bw - 8) // bw + 1 if avail >= bw + 8 else 0
            if safe > full:
                safe = full
        if bw <= 8:
            for g in range(safe):
                _unpack8_narrow(src + g * bw, bw, mask, vals)
                _store(out + g * 8, vals, 8)
        else:
            for g in range(safe):
                _unpack8(src + g * bw, bw, mask, vals)
                _store(out + g * 8, vals, 8)
        g = safe
    while g < ngroups:
        at = g * bw
        n = take - g * 8
        if n > 8:
            n = 8
        memset(tmp, 0, sizeof(tmp))
        have = avail - at
        if have > bw:
            have = bw
        if have > 0:
            memcpy(tmp, src + at, <size_t>have)
        _unpack8(tmp, bw, mask, vals)
        _store(out + g * 8, vals, n)
        g += 1


cdef inline void _fill(out_t *out, int64_t n, uint32_t v) noexcept nogil:
    cdef int64_t j
    cdef out_t x
    if out_t is uint8_t:
        x = v != 0
    else:
        x = <out_t>v
    if out_t is int8_t or out_t is uint8_t:
        if n <= 16:  # short runs (levels): a call to memset costs more than the stores
            for j in range(n):
                out[j] = x
        else:
            memset(out, <int>x, <size_t>n)
    else:
        for j in range(n):
            out[j] = x


cdef int64_t _decode(const uint8_t *src, int64_t end, int bw, int64_t count, out_t *out,
                     int64_t *info) noexcept nogil:
    """Decode ``count`` values (bw 1..32, count >= 1); return the bytes used or an error code."""
    cdef int64_t pos = 0, got = 0, left, take, need, stop, groups, run, start, least
    cdef int vbytes = (bw + 7) >> 3, shift, k
    cdef uint64_t header, byte, maxrle = 0
    cdef uint32_t v
    while got < count:
        # varint run header (as the numpy decoder's: at most 5 bytes, at most 32 bits)
        if pos >= end:
            return E_HEADER_TRUNCATED
        start = pos
        byte = src[pos]
        pos += 1
        header = byte & 0x7F
        shift = 0
        while byte & 0x80:
            shift += 7
            if shift >= 35:
                return E_HEADER_TOO_LONG
            if pos >= end:
                return E_HEADER_TRUNCATED
            byte = src[pos]
            pos += 1
            header |= (byte & 0x7F) << shift
        if header >> 32:
            return E_HEADER_TOO_LONG
        left = count - got
        if header & 1:
            # bit-packed: ``groups`` groups of 8 values; only ``take`` of them are wanted
            groups = <int64_t>(header >> 1)
            if groups == 0:
                info[0] = 1
                info[1] = start
                return E_EMPTY_RUN
            take = left if groups >= (left + 7) >> 3 else groups * 8
            # the values wanted must be there, and of the run's groups only the last may lack bytes
            # (writers that cut a final run's padding): at least one value of the last group
            # (groups < 2**31 and bw <= 32: nothing here overflows)
            least = (groups - 1) * 8 + 1
            if least < take:
                least = take
            need = (least * bw + 7) >> 3
            if need > end - pos:
                info[0] = need
                info[1] = pos
                info[2] = end - pos
                return E_BITPACKED_TRUNCATED
            stop = pos + groups * bw
            if stop > end:
                stop = end
            _unpack_run(src + pos, end - pos, bw, take, out + got)
            pos = stop
            got += take
        else:
            run = <int64_t>(header >> 1)
            if run == 0:
                info[0] = 0
                info[1] = start
                return E_EMPTY_RUN
            if vbytes > end - pos:
                return E_RLE_VALUE_TRUNCATED
            v = 0
            for k in range(vbytes):
                v |= <uint32_t>src[pos + k] << (8 * k)
            pos += vbytes
            take = run if run < left else left
            if v > maxrle:
                maxrle = v
            _fill(out + got, take, v)
            got += take
    if out_t is int8_t or out_t is int16_t:
        # narrow outputs hold levels: an RLE value wider than the bit width cannot be one
        if maxrle >> bw:
            info[0] = <int64_t>maxrle
            return E_VALUE_TOO_WIDE
    return pos


def decode(const uint8_t[::1] buf, int bit_width, int64_t count, out_t[::1] out, int64_t[::1] info):
    """Decode ``count`` values of the hybrid from ``buf`` into ``out[:count]``.

    Returns the bytes used (>= 0) or a negative error code (details in ``info``, 3 int64).
    ``bit_width`` 0 yields zeros and uses no bytes.
    """
    if not 0 <= bit_width <= 32 or count < 0 or out.shape[0] < count or info.shape[0] < 3:
        raise ValueError("hybrid.decode: invalid arguments")
    cdef int64_t rc = 0
    cdef const uint8_t *src = u8_ptr(buf)
    cdef int64_t end = buf.shape[0]
    if count == 0:
        return 0
    with nogil:
        if bit_width == 0:
            memset(&out[0], 0, <size_t>(count * sizeof(out_t)))
        else:
            rc = _decode(src, end, bit_width, count, &out[0], &info[0])
    return rc


# -- a data page's levels in one call ------------------------------------------------------------

LEVELS_NO_PREFIX = -6  # a v1 level block lacks its 4-byte length prefix
LEVELS_PAST_END = -7  # info: the v1 block's stated length, the bytes available after its prefix

cdef enum:
    E_LEVELS_NO_PREFIX = -6
    E_LEVELS_PAST_END = -7


cdef int64_t _level_block(const uint8_t *src, int64_t end, int64_t pos, int64_t stated, int bw, int64_t count,
                          out_t *out, int64_t *info, int64_t *next_pos) noexcept nogil:
    """One block of levels at ``src[pos:]``: a v1 block (4-byte length prefix) when ``stated < 0``,
    else a v2 block of exactly ``stated`` bytes (the caller checked it fits). 0 or an error code;
    ``next_pos`` is where the next block starts."""
    cdef int64_t length, rc
    if stated < 0:
        if end - pos < 4:
            return E_LEVELS_NO_PREFIX
        length = <int64_t>load_le32(src + pos)
        pos += 4
        if length > end - pos:
            info[0] = length
            info[1] = end - pos
            return E_LEVELS_PAST_END
    else:
        length = stated
    rc = _decode(src + pos, length, bw, count, out, info)
    if rc < 0:
        return rc
    next_pos[0] = pos + length
    return 0


cdef int64_t _count_equal(const out_t *lv, int64_t n, int64_t top) noexcept nogil:
    cdef int64_t i, c = 0
    if out_t is int8_t:
        # int8 levels (the reader's): the scalar loop below does not vectorize for x86-64's baseline
        # (no sign extension of bytes in SSE2), and was nearly all of a page's level decoding
        if -128 <= top <= 127:
            return count_equal_bytes(<const uint8_t *>lv, n, <uint8_t>(<int8_t>top))
        return 0
    for i in range(n):
        c += <int64_t>lv[i] == top
    return c


def page_levels(const uint8_t[::1] buf, int64_t count, int rep_bw, int def_bw, int64_t rep_len, int64_t def_len,
                out_t[::1] reps not None, out_t[::1] defs not None, int64_t max_def):
    """The repetition then definition levels of one data page, ``count`` each, from the start of ``buf``.

    A bit width of 0 means the page has no such levels (nothing is read for them). ``rep_len`` and
    ``def_len`` are the v2 header's byte lengths of the two blocks (the caller checked that they fit
    ``buf``), or both -1 for v1 blocks, each a 4-byte length then the hybrid. Returns (the bytes the
    levels take (where the values start), the number of definition levels equal to ``max_def``:
    ``count`` without them), or (a negative error code, its three details, 0 when the repetition
    levels failed or 1 for the definition levels): a tuple, not an info array, as a page of a few
    values spent as long allocating one as decoding.
    """
    if not 0 <= rep_bw <= 32 or not 0 <= def_bw <= 32 or count < 0 \
            or (rep_bw and reps.shape[0] < count) or (def_bw and defs.shape[0] < count) \
            or (rep_len >= 0) != (def_len >= 0) \
            or (rep_len >= 0 and (rep_len > buf.shape[0] or def_len > buf.shape[0] - rep_len)):
        raise ValueError("hybrid.page_levels: invalid arguments")
    if out_t is uint8_t or count > 2147483647 or (out_t is int8_t and (rep_bw >= 8 or def_bw >= 8)) \
            or (out_t is int16_t and (rep_bw >= 16 or def_bw >= 16)):
        raise ValueError("hybrid.page_levels: invalid arguments")
    cdef const uint8_t *src = u8_ptr(buf)
    cdef int64_t end = buf.shape[0], pos = 0, rc = 0
    cdef int64_t info[4]
    # never dereferenced when count is 0 (the run loop then writes nothing)
    cdef out_t *rp = &reps[0] if reps.shape[0] else NULL
    cdef out_t *dp = &defs[0] if defs.shape[0] else NULL
    info[0] = info[1] = info[2] = 0
    info[3] = count
    with nogil:
        if rep_bw:
            rc = _level_block(src, end, 0, rep_len, rep_bw, count, rp, info, &pos)
            if rc < 0:
                info[3] = 0  # the block that failed
        elif rep_len > 0:
            pos = rep_len
        if rc == 0 and def_bw:
            rc = _level_block(src, end, pos, def_len, def_bw, count, dp, info, &pos)
            if rc == 0:
                info[3] = _count_equal(dp, count, max_def)
            else:
                info[3] = 1
    if rc < 0:
        return rc, info[0], info[1], info[2], info[3]
    return (rep_len + def_len if rep_len >= 0 else pos), info[3]


# -- a dictionary page's values gathered into their rows --------------------------------------------

GATHER_FAILED = -10  # anything the reference reports (the wrapper runs it for the message)

cdef enum:
    E_GATHER_FAILED = -10


cdef inline void _copy_row(uint8_t *dst, const uint8_t *src, int64_t width) noexcept nogil:
    # fixed sizes: the compiler makes each one load and store
    if width == 8:
        memcpy(dst, src, 8)
    elif width == 4:
        memcpy(dst, src, 4)
    elif width == 16:
        memcpy(dst, src, 16)
    elif width == 2:
        memcpy(dst, src, 2)
    elif width == 1:  # (a filter's table of one byte per entry: a call of memcpy per row cost most)
        dst[0] = src[0]
    else:
        memcpy(dst, src, <size_t>width)


cdef int64_t _gather_dense(const int32_t *idx, int64_t count, const uint8_t *dic, int64_t dict_len,
                           int64_t width, uint8_t *out) noexcept nogil:
    """``out[i] = dic[idx[i]]`` (rows of ``width`` bytes); -1 at the first index out of range."""
    cdef int64_t i
    cdef int64_t k
    if width == 8:
        for i in range(count):
            k = <int64_t>(<uint32_t>idx[i])  # unsigned: a negative index is out of range
            if k >= dict_len:
                return -1
            memcpy(out + 8 * i, dic + 8 * k, 8)
    elif width == 4:
        for i in range(count):
            k = <int64_t>(<uint32_t>idx[i])  # unsigned: a negative index is out of range
            if k >= dict_len:
                return -1
            memcpy(out + 4 * i, dic + 4 * k, 4)
    elif width == 1:
        for i in range(count):
            k = <int64_t>(<uint32_t>idx[i])  # unsigned: a negative index is out of range
            if k >= dict_len:
                return -1
            out[i] = dic[k]
    else:
        for i in range(count):
            k = <int64_t>(<uint32_t>idx[i])  # unsigned: a negative index is out of range
            if k >= dict_len:
                return -1
            _copy_row(out + width * i, dic + width * k, width)
    return 0


cdef int64_t _gather_present(const int32_t *idx, int64_t count, const uint8_t *dic, int64_t dict_len,
                             int64_t width, const uint8_t *present, int64_t rows, uint8_t *out) noexcept nogil:
    """The ``count`` looked-up values to the rows ``present`` marks (non-zero), zeros to the others;
    -1 at an index out of range or when the marked rows are not ``count``."""
    cdef int64_t i, j = 0
    cdef int64_t k
    for i in range(rows):
        if present[i]:
            if j >= count:
                return -1
            k = <int64_t>(<uint32_t>idx[j])
            j += 1
            if k >= dict_len:
                return -1
            _copy_row(out + width * i, dic + width * k, width)
        else:
            memset(out + width * i, 0, <size_t>width)
    return 0 if j == count else -1


# -- the loops above for the compiled page loop (pqbloom/_kernels/chunkloop.pyx; declared in hybrid.pxd) --

cdef int64_t decode_indices(const uint8_t *src, int64_t end, int bw, int64_t count, int32_t *out,
                            int64_t *info) noexcept nogil:
    return _decode(src, end, bw, count, out, info)


cdef int64_t level_block_int8(const uint8_t *src, int64_t end, int64_t pos, int64_t stated, int bw, int64_t count,
                              int8_t *out, int64_t *info, int64_t *next_pos) noexcept nogil:
    return _level_block(src, end, pos, stated, bw, count, out, info, next_pos)


cdef int64_t gather_dense(const int32_t *idx, int64_t count, const uint8_t *dic, int64_t dict_len,
                          int64_t width, uint8_t *out) noexcept nogil:
    return _gather_dense(idx, count, dic, dict_len, width, out)


cdef int64_t gather_present(const int32_t *idx, int64_t count, const uint8_t *dic, int64_t dict_len,
                            int64_t width, const uint8_t *present, int64_t rows, uint8_t *out) noexcept nogil:
    return _gather_present(idx, count, dic, dict_len, width, present, rows, out)


def gather_dictionary(const uint8_t[::1] buf, int64_t count, const uint8_t[::1] dictionary, int64_t dict_len,
                      int64_t width, const uint8_t[::1] present, uint8_t[::1] out, int64_t rows):
    """The values of an RLE_DICTIONARY data page looked up and written to their rows in one call.

    ``buf``: the page's value bytes (the bit-width byte, then ``count`` indices in the hybrid);
    ``dictionary``: ``dict_len`` entries of ``width`` bytes; ``out``: ``rows`` rows of ``width``
    bytes. ``present`` empty: ``rows == count``, row i gets entry ``index[i]``; else ``rows`` bytes,
    the non-zero ones marking the rows the ``count`` values go to (zeros to the others). Returns
    the bytes used (>= 0), or :data:`GATHER_FAILED` for any corrupt input (a bad bit width, a bad
    run, an index out of range, a count the flags disagree with); the wrapper then runs the
    reference, which names the error. Nothing is read or written out of bounds either way.
    """
    # divisions, not products: no argument can overflow its way past a check
    if count < 0 or dict_len < 0 or width <= 0 or rows < 0 or dict_len > dictionary.shape[0] // width \
            or rows > out.shape[0] // width or (present.shape[0] == 0 and rows != count and rows) \
            or (present.shape[0] != 0 and present.shape[0] < rows) or count > 2147483647:
        raise ValueError("hybrid.gather_dictionary: invalid arguments")
    cdef const uint8_t *src = u8_ptr(buf)
    cdef const uint8_t *dic = u8_ptr(dictionary)
    cdef const uint8_t *pr = u8_ptr(present)
    cdef uint8_t *dst = &out[0] if out.shape[0] else NULL
    cdef int64_t end = buf.shape[0], rc = 0, i
    cdef int64_t info[4]
    cdef int bw
    cdef int32_t *idx = NULL
    cdef bint with_flags = present.shape[0] != 0
    if count == 0:
        if with_flags:
            for i in range(rows):
                if pr[i]:
                    return E_GATHER_FAILED
            with nogil:
                if rows:
                    memset(dst, 0, <size_t>(rows * width))
        return 0
    if end == 0:
        return E_GATHER_FAILED
    bw = src[0]
    if bw > 32:
        return E_GATHER_FAILED
    idx = <int32_t *>malloc(<size_t>count * sizeof(int32_t))
    if idx == NULL:
        raise MemoryError()
    try:
        with nogil:
            if bw == 0:
                memset(idx, 0, <size_t>count * sizeof(int32_t))
                rc = 0
            else:
                rc = _decode(src + 1, end - 1, bw, count, idx, info)
            if rc >= 0:
                if with_flags:
                    if _gather_present(idx, count, dic, dict_len, width, pr, rows, dst) < 0:
                        rc = E_GATHER_FAILED
                elif _gather_dense(idx, count, dic, dict_len, width, dst) < 0:
                    rc = E_GATHER_FAILED
            else:
                rc = E_GATHER_FAILED
    finally:
        free(idx)
    return rc + 1 if rc >= 0 else rc
