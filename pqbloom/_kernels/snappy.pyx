# cython: language_level=3, boundscheck=False, wraparound=False, initializedcheck=False, cdivision=True
"""Snappy raw-block compression (the write path's default codec).

cramjam's compressor (Rust ``snap``) took about 1.3 times as long per page as the C++ library
pyarrow bundles, which made pqbloom's single-threaded string write slower than pyarrow's. This is
the reference algorithm of the snappy format description (64 KiB fragments, a hash table of 4-byte
sequences with the skip heuristic, matches extended 8 bytes at a time), in C, GIL released. Its
output is ordinary snappy: cramjam, pyarrow and every Parquet reader decompress it (tested).

Memory safety: the caller gives an output buffer of at least :func:`max_compressed_length` bytes
(the format's worst case, checked here); within a fragment every 4- and 8-byte load stays at least
15 bytes before the fragment's end (``ip_limit``), and a match is extended only up to that end.
Decompression stays with cramjam, which checks its input.
"""

from libc.stdint cimport int64_t, uint8_t

cdef extern from *:
    """
    #include <stdint.h>
    #include <string.h>

    #define PQB_SNAPPY_BLOCK 65536
    #define PQB_SNAPPY_MARGIN 15
    #define PQB_SNAPPY_MAX_HASH_BITS 15

    static inline uint32_t pqb_sn_load32(const uint8_t *p) { uint32_t v; memcpy(&v, p, 4); return v; }
    static inline uint64_t pqb_sn_load64(const uint8_t *p) { uint64_t v; memcpy(&v, p, 8); return v; }

    static inline uint32_t pqb_sn_hash(uint32_t bytes, int shift) {
        return (bytes * 0x1e35a7bdu) >> shift;
    }

    /* Bytes s1 and s2 have in common, s2 reading no further than s2_limit (s1 < s2 always). */
    static inline int64_t pqb_sn_match(const uint8_t *s1, const uint8_t *s2, const uint8_t *s2_limit) {
        int64_t matched = 0;
        while (s2 + 8 <= s2_limit) {
            uint64_t x = pqb_sn_load64(s2) ^ pqb_sn_load64(s1 + matched);
            if (x == 0) { s2 += 8; matched += 8; continue; }
    #if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
            while (*s2 == s1[matched]) { ++s2; ++matched; }
            return matched;
    #else
            return matched + (__builtin_ctzll(x) >> 3);
    #endif
        }
        while (s2 < s2_limit && *s2 == s1[matched]) { ++s2; ++matched; }
        return matched;
    }

    static inline uint8_t *pqb_sn_literal(uint8_t *op, const uint8_t *lit, int64_t len) {
        int64_t n = len - 1;
        if (n < 60) {
            *op++ = (uint8_t)(n << 2);
        } else {
            int count = 0;
            int64_t m = n;
            while (m > 0) { m >>= 8; ++count; }
            *op++ = (uint8_t)((59 + count) << 2);
            for (int i = 0; i < count; ++i) { *op++ = (uint8_t)(n & 0xff); n >>= 8; }
        }
        memcpy(op, lit, (size_t)len);
        return op + len;
    }

    static inline uint8_t *pqb_sn_copy64(uint8_t *op, int64_t offset, int64_t len) {
        /* 4 <= len <= 64, offset < 65536 */
        if (len < 12 && offset < 2048) {
            *op++ = (uint8_t)(1 + ((len - 4) << 2) + ((offset >> 8) << 5));
            *op++ = (uint8_t)(offset & 0xff);
        } else {
            *op++ = (uint8_t)(2 + ((len - 1) << 2));
            *op++ = (uint8_t)(offset & 0xff);
            *op++ = (uint8_t)(offset >> 8);
        }
        return op;
    }

    static inline uint8_t *pqb_sn_copy(uint8_t *op, int64_t offset, int64_t len) {
        while (len >= 68) { op = pqb_sn_copy64(op, offset, 64); len -= 64; }
        if (len > 64) { op = pqb_sn_copy64(op, offset, 60); len -= 60; }
        return pqb_sn_copy64(op, offset, len);
    }

    /* A literal of len <= 16 bytes copied as 16: the caller guarantees 16 readable bytes at lit and
       the output's slack (the worst-case bound keeps 32 bytes) covers the overwrite. */
    static inline uint8_t *pqb_sn_short_literal(uint8_t *op, const uint8_t *lit, int64_t len) {
        *op++ = (uint8_t)((len - 1) << 2);
        memcpy(op, lit, 16);
        return op + len;
    }

    /* One fragment of at most 64 KiB; table has 1 << bits entries (zeroed here). The loop is the
       one of snappy 1.1.10 (the version Arrow bundles): after each match the next 16 positions are
       tried one by one, then the skip heuristic takes over. Every load stays below ip_limit + 16
       (the fragment's end, as ip_limit is 15 bytes before it). */
    static uint8_t *pqb_sn_fragment(const uint8_t *input, int64_t n, uint8_t *op, uint16_t *table, int bits) {
        const uint8_t *ip = input, *ip_end = input + n, *base_ip = input, *next_emit = input;
        const int shift = 32 - bits;
        memset(table, 0, sizeof(uint16_t) << bits);
        if (n < PQB_SNAPPY_MARGIN) goto remainder;
        {
            const uint8_t *ip_limit = ip_end - PQB_SNAPPY_MARGIN;
            for (;;) {
                const uint8_t *candidate;
                uint64_t data;
                uint32_t skip = 32;
                next_emit = ip++;
                data = pqb_sn_load64(ip);
                if (ip_limit - ip >= 16) {
                    int64_t delta = ip - base_ip;
                    for (int j = 0; j < 4; ++j) {
                        for (int k = 0; k < 4; ++k) {
                            int i = 4 * j + k;
                            uint16_t *entry = table + pqb_sn_hash((uint32_t)data, shift);
                            candidate = base_ip + *entry;
                            *entry = (uint16_t)(delta + i);
                            if (pqb_sn_load32(candidate) == (uint32_t)data) {
                                *op = (uint8_t)(i << 2);
                                memcpy(op + 1, next_emit, 16);
                                ip += i;
                                op += i + 2;
                                goto emit_match;
                            }
                            data >>= 8;
                        }
                        data = pqb_sn_load64(ip + 4 * j + 4);
                    }
                    ip += 16;
                    skip += 16;
                }
                for (;;) {
                    uint16_t *entry = table + pqb_sn_hash((uint32_t)data, shift);
                    uint32_t step = skip >> 5;
                    const uint8_t *next_ip = ip + step;
                    skip += step;
                    if (next_ip > ip_limit) {
                        ip = next_emit;
                        goto remainder;
                    }
                    candidate = base_ip + *entry;
                    *entry = (uint16_t)(ip - base_ip);
                    if ((uint32_t)data == pqb_sn_load32(candidate)) break;
                    data = pqb_sn_load32(next_ip);
                    ip = next_ip;
                }
                op = (ip - next_emit <= 16) ? pqb_sn_short_literal(op, next_emit, ip - next_emit)
                                            : pqb_sn_literal(op, next_emit, ip - next_emit);
            emit_match:
                do {
                    const uint8_t *start = ip;
                    int64_t matched = 4 + pqb_sn_match(candidate + 4, ip + 4, ip_end);
                    uint16_t *entry;
                    ip += matched;
                    op = pqb_sn_copy(op, start - candidate, matched);
                    if (ip >= ip_limit) { next_emit = ip; goto remainder; }
                    data = pqb_sn_load64(ip);
                    table[pqb_sn_hash(pqb_sn_load32(ip - 1), shift)] = (uint16_t)(ip - 1 - base_ip);
                    entry = table + pqb_sn_hash((uint32_t)data, shift);
                    candidate = base_ip + *entry;
                    *entry = (uint16_t)(ip - base_ip);
                } while ((uint32_t)data == pqb_sn_load32(candidate));
                /* the loop's head: next_emit = ip, and the search starts one byte on (ip was just tried) */
            }
        }
    remainder:
        if (next_emit < ip_end) op = pqb_sn_literal(op, next_emit, ip_end - next_emit);
        return op;
    }

    static uint8_t *pqb_sn_fragments(const uint8_t *src, int64_t n, uint8_t *op, uint16_t *table) {
        for (int64_t pos = 0; pos < n; pos += PQB_SNAPPY_BLOCK) {
            int64_t len = n - pos < PQB_SNAPPY_BLOCK ? n - pos : PQB_SNAPPY_BLOCK;
            int bits = 8;
            while (bits < PQB_SNAPPY_MAX_HASH_BITS && ((int64_t)1 << bits) < len) ++bits;
            op = pqb_sn_fragment(src + pos, len, op, table, bits);
        }
        return op;
    }

    /* One raw block of the bytes of a then b (as if joined): the varint of the total length, then
       a's fragments, then b's. Fragments are the compressor's affair (a copy never reaches before its
       own fragment), so a page's levels and values compress without being joined first. Returns
       bytes written. */
    static int64_t pqb_snappy_compress2(const uint8_t *a, int64_t na, const uint8_t *b, int64_t nb, uint8_t *dst) {
        uint8_t *op = dst;
        uint64_t v = (uint64_t)(na + nb);
        uint16_t table[1 << PQB_SNAPPY_MAX_HASH_BITS];
        while (v >= 0x80) { *op++ = (uint8_t)(v | 0x80); v >>= 7; }
        *op++ = (uint8_t)v;
        op = pqb_sn_fragments(a, na, op, table);
        op = pqb_sn_fragments(b, nb, op, table);
        return (int64_t)(op - dst);
    }
    """
    int64_t c_snappy_compress2 "pqb_snappy_compress2"(const uint8_t *a, int64_t na, const uint8_t *b, int64_t nb,
                                                      uint8_t *dst) noexcept nogil

#: the format's limit: a raw block states its length as a 32-bit varint
MAX_INPUT = 0xFFFFFFFF


def max_compressed_length(int64_t n, int64_t m=0):
    """The most bytes a raw block of ``n`` (then ``m``) input bytes can take: the format's worst case
    for each piece."""
    return 32 + n + n // 6 + (32 + m + m // 6 if m else 0)


def compress(const uint8_t[::1] src, uint8_t[::1] dst, const uint8_t[::1] tail=None):
    """Compress ``src`` (followed by ``tail``, when given, as if joined) into ``dst`` (at least
    :func:`max_compressed_length` bytes); return the size.

    ValueError for input past the format's 32-bit length or an output buffer too small."""
    cdef int64_t n = src.shape[0], m = 0 if tail is None else tail.shape[0], written
    cdef const uint8_t *sp = NULL
    cdef const uint8_t *tp = NULL
    cdef uint8_t *dp
    if n + m > MAX_INPUT:
        raise ValueError(f"snappy: {n + m} bytes exceed the format's 4 GiB block")
    if dst.shape[0] < max_compressed_length(n, m):
        raise ValueError("snappy: output buffer smaller than the worst case")
    if n > 0:
        sp = &src[0]
    if m > 0:
        tp = &tail[0]
    dp = &dst[0]
    with nogil:
        written = c_snappy_compress2(sp, n, tp, m, dp)
    return written
