# cython: language_level=3, boundscheck=False, wraparound=False, initializedcheck=False, cdivision=True
"""Parquet Bloom filter kernels: XXH64 (seed 0) of many values, and split-block insertion.

XXH64 follows the xxHash specification (v0.1.1) byte for byte: stripes of 32 bytes into four
accumulators, then 8-, 4- and 1-byte tails, then the avalanche; multiplications wrap modulo 2**64
and rotations are two shifts and an OR (no compiler builtin). Values are read as little-endian, as
the specification and Parquet's Bloom filter spec hash their plain encoding: byte strings as they
are, INT32/FLOAT and INT64/DOUBLE as their 4 and 8 little-endian bytes (the lanes' integer values).

Insertion sets, for each hash, one bit in each of the eight 32-bit words of block
``((hash >> 32) * num_blocks) >> 32``, bit ``((low 32 bits * salt[i]) mod 2**32) >> 27`` of word i.

Offsets are checked (:func:`check_offsets`) before any byte is read; rows lie within their buffer
by the wrapper's arithmetic, checked here.
"""

from libc.stdint cimport int64_t, uint8_t, uint32_t, uint64_t

from pqbloom._kernels._util cimport check_offsets, load_le32, load_le64, u8_ptr

BAD_OFFSETS = -3  # offsets decrease or reach outside the data

cdef enum:
    BAD_OFFSETS_ = -3

cdef extern from *:
    """
    #include <stdint.h>
    #define PQB_P1 0x9E3779B185EBCA87ULL
    #define PQB_P2 0xC2B2AE3D27D4EB4FULL
    #define PQB_P3 0x165667B19E3779F9ULL
    #define PQB_P4 0x85EBCA77C2B2AE63ULL
    #define PQB_P5 0x27D4EB2F165667C5ULL
    static inline uint64_t pqb_rotl64(uint64_t x, int r) { return (x << r) | (x >> (64 - r)); }
    static inline uint64_t pqb_xxh_round(uint64_t acc, uint64_t lane) {
        acc += lane * PQB_P2;
        acc = pqb_rotl64(acc, 31);
        return acc * PQB_P1;
    }
    static inline uint64_t pqb_xxh_merge(uint64_t acc, uint64_t v) {
        acc ^= pqb_xxh_round(0, v);
        return acc * PQB_P1 + PQB_P4;
    }
    static inline uint64_t pqb_xxh_avalanche(uint64_t h) {
        h ^= h >> 33;
        h *= PQB_P2;
        h ^= h >> 29;
        h *= PQB_P3;
        h ^= h >> 32;
        return h;
    }
    static inline uint64_t pqb_xxh_lane8(uint64_t h, uint64_t lane) {
        h ^= pqb_xxh_round(0, lane);
        return pqb_rotl64(h, 27) * PQB_P1 + PQB_P4;
    }
    static inline uint64_t pqb_xxh_lane4(uint64_t h, uint32_t lane) {
        h ^= (uint64_t)lane * PQB_P1;
        return pqb_rotl64(h, 23) * PQB_P2 + PQB_P3;
    }
    static inline uint64_t pqb_xxh_byte(uint64_t h, uint8_t b) {
        h ^= (uint64_t)b * PQB_P5;
        return pqb_rotl64(h, 11) * PQB_P1;
    }
    static inline uint64_t pqb_xxh_start(uint64_t n) { return PQB_P5 + n; }
    static const uint32_t pqb_bloom_salt[8] = {0x47B6137Bu, 0x44974D91u, 0x8824AD5Bu, 0xA2B7289Du,
                                               0x705495C7u, 0x2DF1424Bu, 0x9EFC4947u, 0x5C6BFB31u};
    /* XXH64 (seed 0) of the n bytes at p. */
    static inline uint64_t pqb_xxh64(const uint8_t *p, int64_t n) {
        const uint8_t *end = p + n;
        uint64_t h;
        if (n >= 32) {
            uint64_t v1 = PQB_P1 + PQB_P2, v2 = PQB_P2, v3 = 0, v4 = (uint64_t)0 - PQB_P1;
            const uint8_t *limit = end - 32;
            do {
                v1 = pqb_xxh_round(v1, pqb_load_le64(p));
                v2 = pqb_xxh_round(v2, pqb_load_le64(p + 8));
                v3 = pqb_xxh_round(v3, pqb_load_le64(p + 16));
                v4 = pqb_xxh_round(v4, pqb_load_le64(p + 24));
                p += 32;
            } while (p <= limit);
            h = pqb_rotl64(v1, 1) + pqb_rotl64(v2, 7) + pqb_rotl64(v3, 12) + pqb_rotl64(v4, 18);
            h = pqb_xxh_merge(h, v1);
            h = pqb_xxh_merge(h, v2);
            h = pqb_xxh_merge(h, v3);
            h = pqb_xxh_merge(h, v4);
        } else {
            h = PQB_P5;
        }
        h += (uint64_t)n;
        while (end - p >= 8) {
            h = pqb_xxh_lane8(h, pqb_load_le64(p));
            p += 8;
        }
        if (end - p >= 4) {
            h = pqb_xxh_lane4(h, pqb_load_le32(p));
            p += 4;
        }
        while (p < end) {
            h = pqb_xxh_byte(h, *p);
            p++;
        }
        return pqb_xxh_avalanche(h);
    }
    """
    uint64_t xxh64 "pqb_xxh64"(const uint8_t *p, int64_t n) noexcept nogil
    uint64_t xxh_start "pqb_xxh_start"(uint64_t n) noexcept nogil
    uint64_t xxh_lane8 "pqb_xxh_lane8"(uint64_t h, uint64_t lane) noexcept nogil
    uint64_t xxh_lane4 "pqb_xxh_lane4"(uint64_t h, uint32_t lane) noexcept nogil
    uint64_t xxh_avalanche "pqb_xxh_avalanche"(uint64_t h) noexcept nogil
    const uint32_t *SALT "pqb_bloom_salt"

ctypedef fused lane_t:
    uint32_t
    uint64_t


def xxh64_binary(const int64_t[::1] offsets, const uint8_t[::1] data, uint64_t[::1] out):
    """XXH64 of each value ``data[offsets[i]:offsets[i + 1]]`` into ``out``: 0, or BAD_OFFSETS."""
    cdef int64_t n = offsets.shape[0] - 1, i, rc = 0
    cdef const uint8_t *d = u8_ptr(data)
    cdef const int64_t *off
    if n < 0 or out.shape[0] < n:
        raise ValueError("bloom.xxh64_binary: invalid arguments")
    if n == 0:
        return 0
    off = &offsets[0]
    with nogil:
        if check_offsets(off, n, data.shape[0]):
            rc = BAD_OFFSETS_
        else:
            for i in range(n):
                out[i] = xxh64(d + off[i], off[i + 1] - off[i])
    return rc


def xxh64_rows(const uint8_t[::1] data, int64_t width, uint64_t[::1] out):
    """XXH64 of each row of ``width`` bytes of ``data`` (all of it) into ``out``."""
    cdef int64_t n, i
    cdef const uint8_t *d = u8_ptr(data)
    if width <= 0 or data.shape[0] % width:
        raise ValueError("bloom.xxh64_rows: rows do not divide the data")
    n = data.shape[0] // width
    if out.shape[0] < n:
        raise ValueError("bloom.xxh64_rows: output too small")
    with nogil:
        for i in range(n):
            out[i] = xxh64(d + i * width, width)
    return 0


def xxh64_lanes(const lane_t[::1] lanes, uint64_t[::1] out):
    """XXH64 of the 4- or 8-byte little-endian encoding of each lane's integer value."""
    cdef int64_t n = lanes.shape[0], i
    if out.shape[0] < n:
        raise ValueError("bloom.xxh64_lanes: output too small")
    with nogil:
        if lane_t is uint64_t:
            for i in range(n):
                out[i] = xxh_avalanche(xxh_lane8(xxh_start(8), lanes[i]))
        else:
            for i in range(n):
                out[i] = xxh_avalanche(xxh_lane4(xxh_start(4), lanes[i]))
    return 0


def insert(uint32_t[::1] words, const uint64_t[::1] hashes):
    """Insert each hash into the split-block filter whose blocks are ``words`` (8 words each)."""
    cdef int64_t i, n = hashes.shape[0]
    cdef uint64_t num_blocks = <uint64_t>(words.shape[0] // 8), h, block
    cdef uint32_t x
    cdef uint32_t *w
    cdef int k
    if words.shape[0] % 8 or (num_blocks == 0 and n) or num_blocks >= (<uint64_t>1 << 32):
        raise ValueError("bloom.insert: words are not whole blocks")
    if n == 0:
        return 0
    with nogil:
        for i in range(n):
            h = hashes[i]
            block = ((h >> 32) * num_blocks) >> 32  # < num_blocks: (h >> 32) < 2**32
            w = &words[block * 8]
            x = <uint32_t>h
            for k in range(8):
                w[k] |= (<uint32_t>1) << ((x * SALT[k]) >> 27)
    return 0
