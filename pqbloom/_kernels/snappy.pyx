# cython: language_level=3, boundscheck=False, wraparound=False, initializedcheck=False, cdivision=True
"""Snappy raw-block compression (the write path's default codec).

cramjam's compressor (Rust ``snap``) took about 1.3 times as long per page as the C++ library
pyarrow bundles, which made pqbloom's single-threaded string write slower than pyarrow's. This is
the reference algorithm of the snappy format description (64 KiB fragments, a hash table of 4-byte
sequences with the skip heuristic, matches extended 8 bytes at a time), in C, GIL released. Its
output is ordinary snappy: cramjam, pyarrow and every Parquet reader decompress it (tested). Its
speed comes from keeping loads off the chain of dependent steps that bounds it (the next search's
first bytes come from words loaded during the match, not reloaded once its length is known), from
selects instead of branches where the outcome is a coin toss, and from fixed-size copies.

:func:`compress_plain` compresses a PLAIN BYTE_ARRAY page without the page: each 64 KiB of its
encoding is written into a small buffer that stays in cache and compressed from there, which gives
the same bytes as encoding the page first.

Memory safety: the caller gives an output buffer of at least :func:`max_compressed_length` bytes
(the format's worst case, checked here); within a fragment every 4- and 8-byte load stays at least
15 bytes before the fragment's end (``ip_limit``), and a match is extended only up to that end.
Decompression stays with cramjam, which checks its input.
"""

from libc.stdint cimport int64_t, uint8_t
from libc.stdlib cimport free, malloc

from ._util cimport PLAIN_BAD_OFFSETS, PLAIN_VALUE_TOO_LONG, plain_size, u8_ptr

cdef extern from *:
    """
    #include <stdint.h>
    #include <string.h>

    #define PQB_SNAPPY_BLOCK 65536
    #define PQB_SNAPPY_MARGIN 15
    #define PQB_SNAPPY_MAX_HASH_BITS 15
    #define PQB_SNAPPY_SLACK 32
    /* branch hints for the layout of the hot loop (snappy's own, from its measurements) */
    #if defined(__GNUC__)
    #define PQB_LIKELY(x) __builtin_expect(!!(x), 1)
    #define PQB_UNLIKELY(x) __builtin_expect(!!(x), 0)
    #else
    #define PQB_LIKELY(x) (x)
    #define PQB_UNLIKELY(x) (x)
    #endif

    static inline uint32_t pqb_sn_load32(const uint8_t *p) { uint32_t v; memcpy(&v, p, 4); return v; }
    static inline uint64_t pqb_sn_load64(const uint8_t *p) { uint64_t v; memcpy(&v, p, 8); return v; }

    /* The top 15 bits of the product, masked to the table's size: a constant shift and a mask, as a
       shift by a variable count costs more on x86-64. */
    static inline uint32_t pqb_sn_hash(uint32_t bytes, uint32_t mask) {
        return ((bytes * 0x1e35a7bdu) >> (32 - PQB_SNAPPY_MAX_HASH_BITS)) & mask;
    }

    /* Bytes s1 and s2 have in common, s2 reading no further than s2_limit (s1 < s2 always). When the
       match ends at least 8 bytes before s2_limit, *next gets the bytes there (the low 4 are valid):
       the caller hashes them for its next search. They are taken from words loaded before the match
       length is known, so that the next hash does not wait for a load that depends on the match
       length (the dependency chain through the candidate is what limits the compressor's speed). */
    static inline int64_t pqb_sn_match(const uint8_t *s1, const uint8_t *s2, const uint8_t *s2_limit,
                                       uint64_t *next) {
        int64_t matched = 0;
        while (PQB_LIKELY(s2 + 16 <= s2_limit)) {
            uint64_t a1 = pqb_sn_load64(s1 + matched), a2 = pqb_sn_load64(s2);
            if (PQB_UNLIKELY(a1 == a2)) { s2 += 8; matched += 8; continue; }
    #if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
            while (*s2 == s1[matched]) { ++s2; ++matched; }
            *next = pqb_sn_load64(s2);
            return matched;
    #else
            {
                uint64_t x = a1 ^ a2;
                int shift = __builtin_ctzll(x);
                uint64_t a3 = pqb_sn_load64(s2 + 4);
                /* fewer than 4 bytes matched in this word: the next bytes start within a2, else
                   within a3 (s2 + 4 on); either way at a 0-3 byte shift. Selected by a mask, not
                   a branch: which word it is does not follow a pattern the predictor could learn. */
    #if defined(__x86_64__) && defined(__GNUC__)
                __asm__("testl %k2, %k2\\n\\tcmovzq %1, %0" : "+r"(a2) : "r"(a3), "r"(x) : "cc");
    #else
                {
                    uint64_t use_a3 = (uint64_t)0 - (uint64_t)((uint32_t)x == 0);
                    a2 = (a2 & ~use_a3) | (a3 & use_a3);
                }
    #endif
                *next = a2 >> (shift & 24);
                return matched + (shift >> 3);
            }
    #endif
        }
        while (s2 < s2_limit && *s2 == s1[matched]) { ++s2; ++matched; }
        if (s2 + 8 <= s2_limit) *next = pqb_sn_load64(s2);
        return matched;
    }

    static inline uint8_t *pqb_sn_literal_tag(uint8_t *op, int64_t len) {
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
        return op;
    }

    static inline uint8_t *pqb_sn_literal(uint8_t *op, const uint8_t *lit, int64_t len) {
        op = pqb_sn_literal_tag(op, len);
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

    /* A copy of 4 <= len < 12 bytes (most copies in text-like columns): its 2 or 3 bytes written by
       one 4-byte store (the output's slack covers the extra byte). */
    static inline uint8_t *pqb_sn_copy_short(uint8_t *op, int64_t offset, int64_t len) {
    #if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
        uint32_t u;
        int64_t n;
        if (offset < 2048) {
            u = (uint32_t)(1 + ((len - 4) << 2) + ((offset >> 8) << 5) + ((offset & 0xff) << 8));
            n = 2;
        } else {
            u = (uint32_t)(2 + ((len - 1) << 2) + (offset << 8));
            n = 3;
        }
        memcpy(op, &u, 4);
        return op + n;
    #else
        return pqb_sn_copy64(op, offset, len);
    #endif
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

    /* A literal inside the main loop, where it ends at most 15 bytes before the fragment's end:
       copied 16 bytes at a time (reading up to that end, writing into the output's slack) rather
       than by a memcpy call of a varying length. */
    static inline uint8_t *pqb_sn_main_literal(uint8_t *op, const uint8_t *lit, int64_t len) {
        uint8_t *end;
        if (len <= 16) return pqb_sn_short_literal(op, lit, len);
        op = pqb_sn_literal_tag(op, len);
        end = op + len;
        for (uint8_t *d = op; d < end; d += 16, lit += 16) memcpy(d, lit, 16);
        return end;
    }

    /* One fragment of at most 64 KiB; table has 1 << bits entries (zeroed here). The loop is the
       one of snappy 1.1.10 (the version Arrow bundles): after each match the next 16 positions are
       tried one by one, then the skip heuristic takes over. Every load stays below ip_limit + 16
       (the fragment's end, as ip_limit is 15 bytes before it). */
    static uint8_t *pqb_sn_fragment(const uint8_t *input, int64_t n, uint8_t *op, uint16_t *table, int bits) {
        const uint8_t *ip = input, *ip_end = input + n, *base_ip = input, *next_emit = input;
        const uint32_t mask = ((uint32_t)1 << bits) - 1;
        memset(table, 0, sizeof(uint16_t) << bits);
        if (n < PQB_SNAPPY_MARGIN) goto remainder;
        {
            const uint8_t *ip_limit = ip_end - PQB_SNAPPY_MARGIN;
            /* the 4 bytes one past the search's start: known before the load at the loop's head,
               which waits for ip (after a match, for the match's length) */
            uint32_t preload = pqb_sn_load32(ip + 1);
            for (;;) {
                const uint8_t *candidate;
                uint64_t data;
                uint32_t skip = 32;
                next_emit = ip++;
                data = pqb_sn_load64(ip);
                if (PQB_LIKELY(ip_limit - ip >= 16)) {
                    int64_t delta = ip - base_ip;
                    for (int j = 0; j < 4; ++j) {
                        for (int k = 0; k < 4; ++k) {
                            int i = 4 * j + k;
                            uint32_t dword = i == 0 ? preload : (uint32_t)data;
                            uint16_t *entry = table + pqb_sn_hash(dword, mask);
                            candidate = base_ip + *entry;
                            *entry = (uint16_t)(delta + i);
                            if (PQB_UNLIKELY(pqb_sn_load32(candidate) == dword)) {
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
                    uint16_t *entry = table + pqb_sn_hash((uint32_t)data, mask);
                    uint32_t step = skip >> 5;
                    const uint8_t *next_ip = ip + step;
                    skip += step;
                    if (PQB_UNLIKELY(next_ip > ip_limit)) {
                        ip = next_emit;
                        goto remainder;
                    }
                    candidate = base_ip + *entry;
                    *entry = (uint16_t)(ip - base_ip);
                    if ((uint32_t)data == pqb_sn_load32(candidate)) break;
                    data = pqb_sn_load32(next_ip);
                    ip = next_ip;
                }
                op = pqb_sn_main_literal(op, next_emit, ip - next_emit);
            emit_match:
                do {
                    const uint8_t *start = ip;
                    int64_t matched = 4 + pqb_sn_match(candidate + 4, ip + 4, ip_end, &data);
                    uint16_t *entry;
                    ip += matched;
                    op = matched < 12 ? pqb_sn_copy_short(op, start - candidate, matched)
                                      : pqb_sn_copy(op, start - candidate, matched);
                    /* below ip_limit, data holds the bytes at ip (set by the match) */
                    if (PQB_UNLIKELY(ip >= ip_limit)) { next_emit = ip; goto remainder; }
                    table[pqb_sn_hash(pqb_sn_load32(ip - 1), mask)] = (uint16_t)(ip - 1 - base_ip);
                    entry = table + pqb_sn_hash((uint32_t)data, mask);
                    candidate = base_ip + *entry;
                    *entry = (uint16_t)(ip - base_ip);
                } while ((uint32_t)data == pqb_sn_load32(candidate));
                /* data holds at least 5 valid bytes at ip (see pqb_sn_match): the next search
                   starts at ip + 1 */
                preload = (uint32_t)(data >> 8);
                /* the loop's head: next_emit = ip, and the search starts one byte on (ip was just tried) */
            }
        }
    remainder:
        if (next_emit < ip_end) op = pqb_sn_literal(op, next_emit, ip_end - next_emit);
        return op;
    }

    static inline int pqb_sn_table_bits(int64_t len) {
        int bits = 8;
        while (bits < PQB_SNAPPY_MAX_HASH_BITS && ((int64_t)1 << bits) < len) ++bits;
        return bits;
    }

    static uint8_t *pqb_sn_fragments(const uint8_t *src, int64_t n, uint8_t *op, uint16_t *table) {
        for (int64_t pos = 0; pos < n; pos += PQB_SNAPPY_BLOCK) {
            int64_t len = n - pos < PQB_SNAPPY_BLOCK ? n - pos : PQB_SNAPPY_BLOCK;
            op = pqb_sn_fragment(src + pos, len, op, table, pqb_sn_table_bits(len));
        }
        return op;
    }

    static inline uint8_t *pqb_sn_varint(uint8_t *op, uint64_t v) {
        while (v >= 0x80) { *op++ = (uint8_t)(v | 0x80); v >>= 7; }
        *op++ = (uint8_t)v;
        return op;
    }

    /* One raw block of the bytes of a then b (as if joined): the varint of the total length, then
       a's fragments, then b's. Fragments are the compressor's affair (a copy never reaches before its
       own fragment), so a page's levels and values compress without being joined first. Returns
       bytes written. */
    static int64_t pqb_snappy_compress2(const uint8_t *a, int64_t na, const uint8_t *b, int64_t nb, uint8_t *dst) {
        uint16_t table[1 << PQB_SNAPPY_MAX_HASH_BITS];
        uint8_t *op = pqb_sn_varint(dst, (uint64_t)(na + nb));
        op = pqb_sn_fragments(a, na, op, table);
        op = pqb_sn_fragments(b, nb, op, table);
        return (int64_t)(op - dst);
    }

    /* The next `want` bytes of the PLAIN BYTE_ARRAY encoding of the values (a 4-byte little-endian
       length, then the bytes, each), from the cursor (value *pi, *pskip bytes into its encoding) on,
       into dst, which has PQB_SNAPPY_SLACK writable bytes past `want`. The caller has checked the
       offsets (non-decreasing, inside data_len) and that the values hold at least `want` more bytes.
       A value that fits whole is copied as the PLAIN encoder copies it (pqb_copy_value). */
    static void pqb_sn_plain_fill(const int64_t *off, const uint8_t *data, int64_t data_len,
                                  int64_t *pi, int64_t *pskip, uint8_t *dst, int64_t want) {
        int64_t i = *pi, skip = *pskip, pos = 0;
        while (pos < want) {
            int64_t a = off[i], ln = off[i + 1] - a, enc = 4 + ln, take = enc - skip;
            uint8_t head[4] = {(uint8_t)ln, (uint8_t)(ln >> 8), (uint8_t)(ln >> 16), (uint8_t)(ln >> 24)};
            if (take > want - pos) take = want - pos;
            if (skip == 0 && take == enc) {
                memcpy(dst + pos, head, 4);
                pqb_copy_value(dst + pos + 4, want + PQB_SNAPPY_SLACK - pos - 4, data + a, data_len - a, ln);
            } else {  /* a value cut by a fragment's end: the bytes [skip, skip + take) of head + value */
                int64_t s = skip, e = skip + take;
                int64_t vs = s > 4 ? s : 4;
                if (s < 4) memcpy(dst + pos, head + s, (size_t)((e < 4 ? e : 4) - s));
                if (e > 4) memcpy(dst + pos + (vs - s), data + a + (vs - 4), (size_t)(e - vs));
            }
            pos += take;
            if (skip + take == enc) { ++i; skip = 0; } else { skip += take; }
        }
        *pi = i;
        *pskip = skip;
    }

    /* pqb_snappy_compress2(a, PLAIN(values)) without the PLAIN page: each 64 KiB of the encoding is
       written into scratch (PQB_SNAPPY_BLOCK + PQB_SNAPPY_SLACK bytes) and compressed while it is in
       cache. The output is byte for byte that of compressing the encoded page. nb is the encoding's
       size (4 * n + the values' bytes). */
    static int64_t pqb_snappy_compress_plain(const uint8_t *a, int64_t na, const int64_t *off, const uint8_t *data,
                                             int64_t data_len, int64_t nb, uint8_t *dst, uint8_t *scratch) {
        uint16_t table[1 << PQB_SNAPPY_MAX_HASH_BITS];
        int64_t i = 0, skip = 0;
        uint8_t *op = pqb_sn_varint(dst, (uint64_t)(na + nb));
        op = pqb_sn_fragments(a, na, op, table);
        for (int64_t pos = 0; pos < nb; pos += PQB_SNAPPY_BLOCK) {
            int64_t len = nb - pos < PQB_SNAPPY_BLOCK ? nb - pos : PQB_SNAPPY_BLOCK;
            pqb_sn_plain_fill(off, data, data_len, &i, &skip, scratch, len);
            op = pqb_sn_fragment(scratch, len, op, table, pqb_sn_table_bits(len));
        }
        return (int64_t)(op - dst);
    }
    """
    int64_t c_snappy_compress2 "pqb_snappy_compress2"(const uint8_t *a, int64_t na, const uint8_t *b, int64_t nb,
                                                      uint8_t *dst) noexcept nogil
    int64_t c_snappy_compress_plain "pqb_snappy_compress_plain"(
        const uint8_t *a, int64_t na, const int64_t *off, const uint8_t *data, int64_t data_len, int64_t nb,
        uint8_t *dst, uint8_t *scratch) noexcept nogil
    int SCRATCH_SIZE "(PQB_SNAPPY_BLOCK + PQB_SNAPPY_SLACK)"

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


#: compress_plain's error codes (as binary.plain_encode_size's)
E_BAD_OFFSETS = PLAIN_BAD_OFFSETS
E_VALUE_TOO_LONG = PLAIN_VALUE_TOO_LONG


def compress_plain(const uint8_t[::1] head, const int64_t[::1] offsets, const uint8_t[::1] data, uint8_t[::1] dst):
    """:func:`compress` of ``head`` followed by the PLAIN BYTE_ARRAY encoding of the values at
    ``offsets`` into ``data``, without building that encoding; the same bytes as compressing it.
    ``dst`` must hold :func:`max_compressed_length` ``(len(head), plain_size)``, where
    ``plain_size`` is ``4 * n + offsets[n] - offsets[0]``.

    Returns the size written, or E_BAD_OFFSETS (offsets decreasing or outside ``data``) or
    E_VALUE_TOO_LONG (a value over 2**31-1 bytes). ValueError for a block past the format's limit
    or an output buffer too small."""
    cdef int64_t n = offsets.shape[0] - 1, na = head.shape[0], nb, info = 0, written
    cdef const int64_t *off
    cdef uint8_t *scratch
    if n < 0:
        raise ValueError("snappy.compress_plain: no offsets")
    off = &offsets[0]
    nb = plain_size(off, n, data.shape[0], &info)
    if nb < 0:
        return nb
    if na + nb > MAX_INPUT:
        raise ValueError(f"snappy: {na + nb} bytes exceed the format's 4 GiB block")
    if dst.shape[0] < max_compressed_length(na, nb):
        raise ValueError("snappy: output buffer smaller than the worst case")
    scratch = <uint8_t *>malloc(SCRATCH_SIZE)
    if scratch == NULL:
        raise MemoryError()
    try:
        with nogil:
            written = c_snappy_compress_plain(u8_ptr(head), na, off, u8_ptr(data), data.shape[0], nb, &dst[0],
                                              scratch)
    finally:
        free(scratch)
    return written
