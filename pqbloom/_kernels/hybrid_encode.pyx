# cython: language_level=3, boundscheck=False, wraparound=False, initializedcheck=False, cdivision=True
"""The RLE / bit-packed hybrid encoder (the writer's levels and dictionary indices).

Split from :mod:`pqbloom._kernels.hybrid` (the decoders): the writer's loop shares nothing with the
reader's. The numpy reference is :mod:`pqbloom.kernels.reference.hybrid_encode`; the wrapper is
:func:`pqbloom.kernels.hybrid.encode_hybrid`. Every write is checked against the output's capacity.
"""

from libc.stdint cimport int8_t, int16_t, int32_t, int64_t, uint8_t, uint32_t, uint64_t
from libc.string cimport memcpy, memset

from pqbloom._kernels._util cimport count_equal_bytes, load_le32, load_le64, u8_mut, u8_ptr

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
