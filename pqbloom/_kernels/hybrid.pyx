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


# -- encoding ---------------------------------------------------------------------------------------

ENCODE_OUT_TOO_SMALL = -9  # the output buffer cannot hold the encoding (the caller sizes it)

cdef enum:
    E_ENCODE_OUT_TOO_SMALL = -9

ctypedef fused enc_t:
    uint8_t
    int8_t
    int16_t
    int32_t
    int64_t


cdef inline int64_t _put_varint(uint8_t *out, int64_t o, int64_t cap, uint64_t v) noexcept nogil:
    """``v`` as a ULEB128 varint at ``out[o]``: the new position, or -1 when it would pass ``cap``."""
    while v >= 0x80:
        if o >= cap:
            return -1
        out[o] = <uint8_t>((v & 0x7F) | 0x80)
        o += 1
        v >>= 7
    if o >= cap:
        return -1
    out[o] = <uint8_t>v
    return o + 1


cdef int64_t _put_packed(const enc_t *v, int64_t s, int64_t e, int64_t n, int bw, uint64_t mask, uint8_t *out,
                         int64_t o, int64_t cap) noexcept nogil:
    """Values ``s:e`` as bit-packed runs of at most 63 groups (values past ``n`` are zeros): the new
    position, or -1 when the output would pass ``cap``."""
    cdef int64_t c, c_end, groups, i
    cdef uint64_t acc
    cdef int nbits
    c = s
    while c < e:
        c_end = c + 63 * 8
        if c_end > e:
            c_end = e
        groups = (c_end - c + 7) // 8
        o = _put_varint(out, o, cap, (<uint64_t>groups << 1) | 1)
        if o < 0 or cap - o < groups * bw:
            return -1
        # 32 bits leave the accumulator at a time (it holds < 32 + 32 bits); a group of 8 values is
        # ``bw`` whole bytes, so what is left after the last value is whole bytes too
        acc = 0
        nbits = 0
        for i in range(c, c + groups * 8):
            if i < n:
                acc |= (<uint64_t>v[i] & mask) << nbits
            nbits += bw
            if nbits >= 32:
                out[o] = <uint8_t>acc
                out[o + 1] = <uint8_t>(acc >> 8)
                out[o + 2] = <uint8_t>(acc >> 16)
                out[o + 3] = <uint8_t>(acc >> 24)
                o += 4
                acc >>= 32
                nbits -= 32
        while nbits > 0:
            out[o] = <uint8_t>acc
            o += 1
            acc >>= 8
            nbits -= 8
        c = c_end
    return o


cdef int64_t _encode(const enc_t *v, int64_t n, int bw, int64_t min_run, uint8_t *out, int64_t cap) noexcept nogil:
    """The hybrid encoding of ``v[0..n)`` (see :func:`encode`): its size, or E_ENCODE_OUT_TOO_SMALL."""
    cdef int64_t pos = 0, o = 0, i = 0, j, a
    cdef int vbytes = (bw + 7) // 8, k
    cdef uint64_t mask = 0xFFFFFFFF if bw >= 32 else ((<uint64_t>1 << bw) - 1)
    cdef uint64_t val
    while i < n:
        j = i + 1
        while j < n and v[j] == v[i]:
            j += 1
        if j - i >= min_run:
            a = pos + ((i - pos + 7) & ~(<int64_t>7))  # the bit-packed values before it end on a whole group
            if j - a >= 8:
                if a > pos:
                    o = _put_packed(v, pos, a, n, bw, mask, out, o, cap)
                    if o < 0:
                        return E_ENCODE_OUT_TOO_SMALL
                o = _put_varint(out, o, cap, <uint64_t>(j - a) << 1)
                if o < 0 or cap - o < vbytes:
                    return E_ENCODE_OUT_TOO_SMALL
                val = <uint32_t>v[a]  # the low 32 bits (two's complement of a negative value)
                for k in range(vbytes):
                    out[o] = <uint8_t>((val >> (8 * k)) & 0xFF)
                    o += 1
                pos = j
        i = j
    if pos < n:
        o = _put_packed(v, pos, n, n, bw, mask, out, o, cap)
        if o < 0:
            return E_ENCODE_OUT_TOO_SMALL
    return o


def encode(const enc_t[::1] values, int bit_width, int64_t min_run, uint8_t[::1] out):
    """The RLE / bit-packed hybrid encoding of ``values`` (no length prefix) into ``out``: its size,
    or ENCODE_OUT_TOO_SMALL. Runs of at least ``min_run`` (>= 8) equal values become RLE runs once
    the bit-packed values before them end on a whole group (8 values of the run must remain);
    everything else is bit-packed in runs of at most 63 groups, the last one zero-padded. Only the
    low ``bit_width`` bits of a value are kept (the caller checks that they fit)."""
    cdef int64_t n = values.shape[0], rc
    if bit_width < 0 or bit_width > 32 or min_run < 8:
        raise ValueError("hybrid.encode: invalid arguments")
    if n == 0:
        return 0
    with nogil:
        rc = _encode(&values[0], n, bit_width, min_run, u8_mut(out), out.shape[0])
    return rc
