# Shared inline helpers of the kernels (cimported; no module of their own).
#
# Byte loads go through memcpy: unaligned access is fine on every platform the wheels target, and
# the compiler turns a fixed-size memcpy into one load. Parquet is little-endian on disk, so a
# big-endian host swaps bytes after loading.

from libc.stdint cimport int64_t, uint8_t, uint32_t, uint64_t

cdef extern from *:
    """
    #include <stdint.h>
    #include <string.h>
    /* Portable byte swaps, no compiler builtin (compilers turn them into one instruction). The
       big-endian test below is GCC's and clang's macro; MSVC targets only little-endian machines. */
    static inline uint64_t pqb_bswap64(uint64_t v) {
        /* portable byte swap (compilers turn it into one instruction) */
        return ((v & 0xFFULL) << 56) | ((v & 0xFF00ULL) << 40) | ((v & 0xFF0000ULL) << 24)
             | ((v & 0xFF000000ULL) << 8) | ((v >> 8) & 0xFF000000ULL) | ((v >> 24) & 0xFF0000ULL)
             | ((v >> 40) & 0xFF00ULL) | (v >> 56);
    }
    static inline uint32_t pqb_bswap32(uint32_t v) {
        return ((v & 0xFFu) << 24) | ((v & 0xFF00u) << 8) | ((v >> 8) & 0xFF00u) | (v >> 24);
    }
    static inline uint64_t pqb_load_le64(const uint8_t *p) {
        uint64_t v;
        memcpy(&v, p, 8);
    #if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
        v = pqb_bswap64(v);
    #endif
        return v;
    }
    #if defined(__linux__)
    #include <sys/mman.h>
    #endif
    /* Ask for transparent huge pages on a large fresh buffer, as numpy does for its arrays: a new
       36 MB output otherwise costs ~9,000 page faults, more than writing it. A hint only. */
    static inline void pqb_hugepage_hint(void *p, size_t n) {
    #if defined(__linux__) && defined(MADV_HUGEPAGE)
        if (n >= ((size_t)4 << 20)) {
            size_t offset = 4096u - (size_t)p % 4096u;
            madvise((char *)p + offset, n - offset, MADV_HUGEPAGE);
        }
    #else
        (void)p; (void)n;
    #endif
    }
    static inline uint32_t pqb_load_le32(const uint8_t *p) {
        uint32_t v;
        memcpy(&v, p, 4);
    #if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
        v = pqb_bswap32(v);
    #endif
        return v;
    }

    /* How many of n bytes equal top, 8 at a time: a byte of w ^ top is zero exactly where the byte
       equals top; the exact zero-byte test sets its 0x80 bit, and one multiply adds up the eight. */
    static inline int64_t pqb_count_equal_bytes(const uint8_t *p, int64_t n, uint8_t top) {
        const uint64_t ones = 0x0101010101010101ULL, low7 = 0x7F7F7F7F7F7F7F7FULL;
        const uint64_t pattern = ones * top;
        int64_t c = 0, i = 0;
        for (; i + 8 <= n; i += 8) {
            uint64_t w;
            memcpy(&w, p + i, 8);
            w ^= pattern;
            w = ~(((w & low7) + low7) | w | low7);
            c += (int64_t)((((w >> 7) * ones) >> 56) & 0xFF);
        }
        for (; i < n; ++i) c += p[i] == top;
        return c;
    }
    /* Copy a value of ln bytes (ln <= both rooms, the bytes writable at dst and readable at src).
       Short values (the usual string) go in 32-byte steps, each two vector moves, instead of a
       memcpy call of a varying length; the bytes written past the value stay inside dst_room (as
       the bytes read past it stay inside src_room), for the caller's next value to overwrite. */
    static inline void pqb_copy_value(uint8_t *dst, int64_t dst_room, const uint8_t *src, int64_t src_room,
                                      int64_t ln) {
        int64_t r = (ln + 31) & ~(int64_t)31;
        if (ln <= 128 && src_room >= r && dst_room >= r) {
            for (int64_t j = 0; j < r; j += 32) memcpy(dst + j, src + j, 32);
        } else if (ln) {
            memcpy(dst, src, (size_t)ln);
        }
    }
    /* A hint to start loading the cache line at p (never faults, whatever p is). */
    static inline void pqb_prefetch(const void *p) {
    #if defined(__GNUC__)
        __builtin_prefetch(p);
    #else
        (void)p;
    #endif
    }
    """
    uint64_t load_le64 "pqb_load_le64"(const uint8_t *p) noexcept nogil
    void prefetch "pqb_prefetch"(const void *p) noexcept nogil
    void copy_value "pqb_copy_value"(uint8_t *dst, int64_t dst_room, const uint8_t *src, int64_t src_room,
                                     int64_t ln) noexcept nogil
    uint32_t load_le32 "pqb_load_le32"(const uint8_t *p) noexcept nogil
    uint64_t bswap64 "pqb_bswap64"(uint64_t v) noexcept nogil
    void hugepage_hint "pqb_hugepage_hint"(void *p, size_t n) noexcept nogil
    int64_t count_equal_bytes "pqb_count_equal_bytes"(const uint8_t *p, int64_t n, uint8_t top) noexcept nogil


cdef inline const uint8_t *u8_ptr(const uint8_t[::1] view) noexcept nogil:
    """The first byte of a (possibly empty) byte view; NULL when empty (never dereferenced then)."""
    if view.shape[0] == 0:
        return NULL
    return &view[0]


cdef inline uint8_t *u8_mut(uint8_t[::1] view) noexcept nogil:
    """:func:`u8_ptr` of a writable view."""
    if view.shape[0] == 0:
        return NULL
    return &view[0]


cdef inline int64_t check_offsets(const int64_t *off, int64_t n, int64_t size) noexcept nogil:
    """0 when ``off[0..n]`` (n + 1 entries) are non-decreasing and within ``0..size``, else -1.

    Every kernel over offsets + data calls this first, so its inner loops may slice ``data`` by
    any two consecutive offsets without a further check.
    """
    cdef int64_t i
    if off[0] < 0 or off[n] > size:
        return -1
    for i in range(n):
        if off[i + 1] < off[i]:
            return -1
    return 0


cdef enum:
    PLAIN_BAD_OFFSETS = -3  # binary.BAD_OFFSETS
    PLAIN_VALUE_TOO_LONG = -8  # binary.VALUE_TOO_LONG


cdef inline int64_t plain_size(const int64_t *off, int64_t n, int64_t data_len, int64_t *info) noexcept nogil:
    """Bytes of the PLAIN BYTE_ARRAY encoding of ``off[0..n]``'s values (4 + length each), or
    PLAIN_BAD_OFFSETS (see :func:`check_offsets`) or PLAIN_VALUE_TOO_LONG (a value over 2**31-1
    bytes; ``info[0]``: its position)."""
    cdef int64_t i
    if check_offsets(off, n, data_len):
        return PLAIN_BAD_OFFSETS
    for i in range(n):
        if off[i + 1] - off[i] > 0x7FFFFFFF:
            info[0] = i
            return PLAIN_VALUE_TOO_LONG
    return 4 * n + off[n] - off[0]
