# cython: language_level=3, boundscheck=False, wraparound=False, initializedcheck=False, cdivision=True
"""Snappy raw-block decompression (the read path's most common codec).

A snappy block is a chain of elements (a literal, or a copy of earlier output), each starting with a
tag byte that says its kind and length, so finding the next element waits on the one before. Two
loops decode it, and which is faster depends on the data:

- the *branching* loop tests each tag's kind. Where kinds follow a pattern (fixed-width strings: a
  copy of the length prefix, then a literal, again and again) the branch predictor learns it and
  this is the fastest loop; where they do not (e-mail addresses, URLs) about one tag in three costs
  a misprediction;
- the *selecting* loop computes both kinds' outcomes and selects one with ``cmov``: no branch to
  mispredict, but a longer chain of steps from one tag to the next. On the pages of 10M e-mail
  addresses and URLs it took 0.75 of the branching loop's time (0.85 of cramjam's); on the pages of
  16-character strings and of list<int64>, decoded into buffers not in cache, 1.12 and 1.21 times
  as long.

So each MiB of output starts with two short probes, one per loop, timed with the CPU's time-stamp
counter, and the faster one decodes the rest of that MiB. A probe can be disturbed (an interrupt);
the cost is one MiB decoded by the slower loop. A page too short to probe (under 64 KiB) goes to
the selecting loop: its output is in cache, where that loop was the faster (on blocks of 16 and 60
KiB of the benchmark's e-mails and lists, 0.66-0.85 of cramjam's time, the branching loop 1.06-1.17).
Without a time-stamp counter (not x86-64) the branching loop decodes everything (see
:data:`ADAPTIVE`). The output is the same either way.

Memory safety: both loops run only while an element cannot reach past either buffer by the margins
below (an element they take reads at most 66 bytes from its tag and writes at most 72 from the output
position); the last bytes of each buffer, and every element the fast paths do not take, go through
:c:func:`pqb_us_element`, which checks each bound. A copy's offset is checked against the output
written so far, so no element reads before the output's start. Malformed input returns an error
code, never reads or writes outside the buffers.
"""

from libc.stdint cimport uint8_t, uint64_t

cdef extern from *:
    """
    #include <stdint.h>
    #include <string.h>
    #if defined(__GNUC__)
    #define PQB_US_LIKELY(x) __builtin_expect(!!(x), 1)
    #define PQB_US_UNLIKELY(x) __builtin_expect(!!(x), 0)
    #else
    #define PQB_US_LIKELY(x) (x)
    #define PQB_US_UNLIKELY(x) (x)
    #endif
    #if defined(__x86_64__) && defined(__GNUC__)
    #include <x86intrin.h>
    #define PQB_US_PROBE 1
    /* selects the compiler must not turn back into branches */
    #define PQB_US_CMOV_NZ(dst, val, cond) \\
        __asm__("testq %2, %2\\n\\tcmovnzq %1, %0" : "+r"(dst) : "r"((__typeof__(dst))(val)), "r"((uint64_t)(cond)) : "cc")
    #define PQB_US_CMOV_EQ(dst, val, x, c) \\
        __asm__("cmpq %3, %2\\n\\tcmoveq %1, %0" : "+r"(dst) : "r"((__typeof__(dst))(val)), "r"((uint64_t)(x)), "i"(c) : "cc")
    #else
    #define PQB_US_PROBE 0
    #define PQB_US_CMOV_NZ(dst, val, cond) do { if (cond) (dst) = (val); } while (0)
    #define PQB_US_CMOV_EQ(dst, val, x, c) do { if ((x) == (c)) (dst) = (val); } while (0)
    #endif

    /* the fast loops' margins: an element they take reads at most 66 bytes from its tag (a literal
       of up to 60 bytes read in 16-byte steps, and the byte after it) and writes at most 72 bytes
       from the output position (a 64-byte repeating pattern written 8 bytes at a time) */
    #define PQB_US_IN_MARGIN 66
    #define PQB_US_OUT_MARGIN 80
    /* output decoded by one loop before the loops are probed again, and each probe's length */
    #define PQB_US_SEGMENT ((size_t)1 << 20)
    #define PQB_US_PROBE_BYTES ((size_t)16 << 10)

    enum { PQB_US_OK = 0, PQB_US_TRUNCATED = -1, PQB_US_BAD_OFFSET = -2, PQB_US_OVERFLOW = -3,
           PQB_US_SHORT = -4, PQB_US_BAD_LENGTH = -5, PQB_US_LENGTH_MISMATCH = -6 };

    static inline uint32_t pqb_us_load32(const uint8_t *p) {
        uint32_t v;
        memcpy(&v, p, 4);
    #if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
        v = __builtin_bswap32(v);
    #endif
        return v;
    }

    /* A copy whose source overlaps its output (1 <= op - src < 16): the pattern of op - src bytes
       repeats. From 8 bytes back on, 8 bytes at a time (each step reads bytes already written); from
       fewer, the pattern is made once in a register and stored at steps of a whole number of
       patterns: no load waits for the store before it. Writes at most 8 bytes past op + len (the
       caller keeps 16 writable). */
    static const uint8_t PQB_US_MOD[8][8] = {
        {0, 0, 0, 0, 0, 0, 0, 0}, {0, 0, 0, 0, 0, 0, 0, 0}, {0, 1, 0, 1, 0, 1, 0, 1}, {0, 1, 2, 0, 1, 2, 0, 1},
        {0, 1, 2, 3, 0, 1, 2, 3}, {0, 1, 2, 3, 4, 0, 1, 2}, {0, 1, 2, 3, 4, 5, 0, 1}, {0, 1, 2, 3, 4, 5, 6, 0}};
    /* whole patterns of d bytes in 8: 8 - 8 % d */
    static const uint8_t PQB_US_STEP[8] = {8, 8, 8, 6, 8, 5, 6, 7};
    static inline void pqb_us_pattern(uint8_t *op, const uint8_t *src, size_t len) {
        size_t d = (size_t)(op - src), step;
        uint64_t v;
        if (d >= 8) {
            for (size_t i = 0; i < len; i += 8) {
                memcpy(&v, src + i, 8);
                memcpy(op + i, &v, 8);
            }
            return;
        }
        /* byte i of the word is src[i % d]: eight independent loads, no division */
        v = 0;
        for (int i = 0; i < 8; ++i) v |= (uint64_t)src[PQB_US_MOD[d][i]] << (8 * i);
    #if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
        v = __builtin_bswap64(v);
    #endif
        step = PQB_US_STEP[d];
        for (size_t i = 0; i < len; i += step) memcpy(op + i, &v, 8);
    }

    /* One element with every bound checked: *ipp is advanced past it and *opp past its output.
       Returns PQB_US_OK or an error code. */
    static int pqb_us_element(const uint8_t **ipp, const uint8_t *ip_end, uint8_t *out, uint8_t **opp,
                              uint8_t *op_end) {
        const uint8_t *ip = *ipp;
        uint8_t *op = *opp;
        uint32_t tag = *ip++;
        size_t len, off;
        if ((tag & 3) == 0) {
            len = tag >> 2;
            if (len >= 60) {
                size_t nb = len - 59;
                if ((size_t)(ip_end - ip) < nb) return PQB_US_TRUNCATED;
                len = 0;
                for (size_t i = 0; i < nb; ++i) len |= (size_t)ip[i] << (8 * i);
                ip += nb;
            }
            len += 1;
            if ((size_t)(ip_end - ip) < len) return PQB_US_TRUNCATED;
            if ((size_t)(op_end - op) < len) return PQB_US_OVERFLOW;
            memcpy(op, ip, len);
            *ipp = ip + len;
            *opp = op + len;
            return PQB_US_OK;
        }
        if ((tag & 3) == 1) {
            if (ip_end - ip < 1) return PQB_US_TRUNCATED;
            len = 4 + ((tag >> 2) & 7);
            off = ((size_t)(tag >> 5) << 8) | ip[0];
            ip += 1;
        } else if ((tag & 3) == 2) {
            if (ip_end - ip < 2) return PQB_US_TRUNCATED;
            len = (tag >> 2) + 1;
            off = (size_t)ip[0] | ((size_t)ip[1] << 8);
            ip += 2;
        } else {
            if (ip_end - ip < 4) return PQB_US_TRUNCATED;
            len = (tag >> 2) + 1;
            off = pqb_us_load32(ip);
            ip += 4;
        }
        if (off == 0 || off > (size_t)(op - out)) return PQB_US_BAD_OFFSET;
        if ((size_t)(op_end - op) < len) return PQB_US_OVERFLOW;
        {
            const uint8_t *src = op - off;
            if ((size_t)(op_end - op) < len + 16) {  /* near the end: exactly, byte by byte */
                for (size_t i = 0; i < len; ++i) op[i] = src[i];
            } else if (off >= 16) {
                for (size_t i = 0; i < len; i += 16) memcpy(op + i, src + i, 16);
            } else {
                pqb_us_pattern(op, src, len);
            }
        }
        *ipp = ip;
        *opp = op + len;
        return PQB_US_OK;
    }

    /* The rest of an element of 16 < len <= 64 bytes whose first 16 are written: from its source (a
       literal's bytes, off = 16 then, or earlier output off >= 8 bytes back) in steps of 16 bytes, or
       of 8 when the source is less than 16 bytes back, each reading only bytes already written.
       Writes at most 64 bytes past the element's start. */
    static inline void pqb_us_rest(uint8_t *op, const uint8_t *src, size_t len, size_t off) {
        if (off >= 16) {
            for (size_t i = 16; i < len; i += 16) memcpy(op + i, src + i, 16);
        } else {
            for (size_t i = 16; i < len; i += 8) {
                uint64_t v;
                memcpy(&v, src + i, 8);
                memcpy(op + i, &v, 8);
            }
        }
    }

    /* The first 16 bytes of an element (a literal's, or a copy's from at least 8 bytes back): two
       8-byte loads and stores, the second reading what the first wrote when the source is 8 to 15
       bytes back */
    static inline void pqb_us_first16(uint8_t *op, const uint8_t *src) {
        uint64_t a, b;
        memcpy(&a, src, 8);
        memcpy(op, &a, 8);
        memcpy(&b, src + 8, 8);
        memcpy(op + 8, &b, 8);
    }

    /* The branching loop, while ip < ip_fast and op < op_stop (op_stop <= the output's end less
       PQB_US_OUT_MARGIN). Takes literals of up to 60 bytes and the copies with a 1- or 2-byte offset;
       the others go through pqb_us_element. Returns PQB_US_OK or an error code. */
    static int pqb_us_branching(const uint8_t **ipp, const uint8_t *ip_fast, const uint8_t *ip_end,
                                uint8_t *out, uint8_t **opp, uint8_t *op_stop, uint8_t *op_end) {
        const uint8_t *ip = *ipp;
        uint8_t *op = *opp;
        int err = PQB_US_OK;
        while (PQB_US_LIKELY(ip < ip_fast && op < op_stop)) {
            uint32_t tag = ip[0];
            if ((tag & 3) == 0) {
                size_t len = (tag >> 2) + 1;
                if (PQB_US_LIKELY(len <= 60)) {
                    pqb_us_first16(op, ip + 1);
                    if (PQB_US_UNLIKELY(len > 16)) pqb_us_rest(op, ip + 1, len, 16);
                    ip += 1 + len;
                    op += len;
                    continue;
                }
            } else if ((tag & 3) != 3) {
                uint32_t w = pqb_us_load32(ip + 1);
                size_t len, off;
                if ((tag & 3) == 1) {
                    len = 4 + ((tag >> 2) & 7);
                    off = ((size_t)(tag >> 5) << 8) | (w & 0xff);
                } else {
                    len = (tag >> 2) + 1;
                    off = w & 0xffff;
                }
                if (PQB_US_LIKELY(off >= 8 && off <= (size_t)(op - out))) {
                    pqb_us_first16(op, op - off);
                    if (PQB_US_UNLIKELY(len > 16)) pqb_us_rest(op, op - off, len, off);
                    ip += 1 + (tag & 3);
                    op += len;
                    continue;
                }
                if (off >= 1 && off <= (size_t)(op - out)) {  /* from 1 to 7 bytes back */
                    pqb_us_pattern(op, op - off, len);
                    ip += 1 + (tag & 3);
                    op += len;
                    continue;
                }
            }
            err = pqb_us_element(&ip, ip_end, out, &op, op_end);
            if (err) break;
        }
        *ipp = ip;
        *opp = op;
        return err;
    }

    /* The selecting loop, under the same conditions, taking the same elements. Requires
       op - out >= 16 (a literal's stand-in offset of 16 then passes the offset check). */
    static int pqb_us_selecting(const uint8_t **ipp, const uint8_t *ip_fast, const uint8_t *ip_end,
                                uint8_t *out, uint8_t **opp, uint8_t *op_stop, uint8_t *op_end) {
        const uint8_t *ip = *ipp;
        uint8_t *op = *opp;
        int err = PQB_US_OK;
        for (;;) {
            /* elements the loop can take with no bound check: each advances ip by at most 61 and
               op by at most 64 */
            size_t k_in = ip < ip_fast ? (size_t)(ip_fast - ip) / 61 : 0;
            size_t k_out = op < op_stop ? (size_t)(op_stop - op) / 64 : 0;
            size_t k = k_in < k_out ? k_in : k_out;
            uint64_t tag;
            if (k == 0) break;
            tag = ip[0];
            while (k--) {
                uint64_t w = pqb_us_load32(ip + 1);
                uint64_t type = tag & 3;
                uint64_t x = tag >> 2;
                uint64_t len = x + 1;                    /* a literal's, a 2- or 4-byte copy's */
                uint64_t adv = x + 2;                    /* a literal's tag, then its bytes */
                uint64_t off = w & 0xffff;               /* a 2-byte copy's */
                uint64_t off1 = ((tag & 0xe0) << 3) | (w & 0xff);
                uint64_t len1 = (x & 7) + 4;
                uint64_t slow = (type == 3) | ((type == 0) & (x >= 60));
                /* the next tag, loaded for both kinds and then selected: from one tag to the next
                   is a shift, a load and a select */
                uint64_t next = ip[x + 2];
                uint64_t next_copy = ip[type + 1];
                const uint8_t *src;
                PQB_US_CMOV_NZ(next, next_copy, type);
                PQB_US_CMOV_NZ(adv, type + 1, type);
                PQB_US_CMOV_EQ(off, off1, type, 1);
                PQB_US_CMOV_EQ(len, len1, type, 1);
                PQB_US_CMOV_EQ(off, 16, type, 0);
                if (PQB_US_UNLIKELY(slow | (off - 8 > (uint64_t)(op - out) - 8))) {
                    if (!slow && off - 1 < (uint64_t)(op - out)) {  /* from 1 to 7 bytes back */
                        pqb_us_pattern(op, op - off, len);
                        op += len;
                        ip += adv;
                        tag = next;
                        continue;
                    }
                    err = pqb_us_element(&ip, ip_end, out, &op, op_end);
                    if (err) goto done;
                    break;  /* the counts are recomputed */
                }
                src = op - off;
                PQB_US_CMOV_EQ(src, ip + 1, type, 0);
                pqb_us_first16(op, src);
                if (PQB_US_UNLIKELY(len > 16)) pqb_us_rest(op, src, len, off);
                op += len;
                ip += adv;
                tag = next;
            }
        }
    done:
        *ipp = ip;
        *opp = op;
        return err;
    }

    /* Where a loop run of at most `step` output bytes from op stops: never past limit (an op at or
       past limit, after a long literal, gives a run of nothing) */
    static inline uint8_t *pqb_us_stop(uint8_t *op, uint8_t *limit, size_t step) {
        if (op >= limit) return op;
        return (size_t)(limit - op) > step ? op + step : limit;
    }

    /* Decompress the elements at ip[0:n] (the block after its length varint) into out[0:out_len],
       which they must fill exactly. Returns PQB_US_OK or an error code. */
    static int pqb_snappy_decompress(const uint8_t *ip, size_t n, uint8_t *out, size_t out_len) {
        const uint8_t *ip_end = ip + n;
        const uint8_t *ip_fast = n > PQB_US_IN_MARGIN ? ip_end - PQB_US_IN_MARGIN : ip;
        uint8_t *op = out, *op_end = out + out_len;
        uint8_t *op_fast = out_len > PQB_US_OUT_MARGIN ? op_end - PQB_US_OUT_MARGIN : out;
        int err = PQB_US_OK;
        /* the first 16 bytes element by element (the selecting loop's offset check assumes them) */
        while (ip < ip_end && op - out < 16) {
            err = pqb_us_element(&ip, ip_end, out, &op, op_end);
            if (err) return err;
        }
        /* the loop for a stretch too short to probe: the last probe's choice, or before any, the
           selecting loop where it is built (a short page's output is in cache, where it was the
           faster on every page kind measured) */
        int selecting = PQB_US_PROBE;
        while (ip < ip_fast && op < op_fast) {
            const uint8_t *ip0 = ip;
            uint8_t *op0 = op;
            uint8_t *seg_end = pqb_us_stop(op, op_fast, PQB_US_SEGMENT);
    #if PQB_US_PROBE
            if ((size_t)(seg_end - op) > 4 * PQB_US_PROBE_BYTES) {
                uint64_t t0, t1, t2;
                uint8_t *a0 = op, *b0;
                t0 = __rdtsc();
                err = pqb_us_branching(&ip, ip_fast, ip_end, out, &op, pqb_us_stop(op, seg_end, PQB_US_PROBE_BYTES), op_end);
                if (err) return err;
                t1 = __rdtsc();
                b0 = op;
                err = pqb_us_selecting(&ip, ip_fast, ip_end, out, &op, pqb_us_stop(op, seg_end, PQB_US_PROBE_BYTES), op_end);
                if (err) return err;
                t2 = __rdtsc();
                /* cycles per byte, compared without a division */
                selecting = (double)(t2 - t1) * (double)(b0 - a0) < (double)(t1 - t0) * (double)(op - b0);
            }
    #endif
            if (op < seg_end) {
                err = selecting ? pqb_us_selecting(&ip, ip_fast, ip_end, out, &op, seg_end, op_end)
                                : pqb_us_branching(&ip, ip_fast, ip_end, out, &op, seg_end, op_end);
                if (err) return err;
            }
            if (ip == ip0 && op == op0) break;  /* no progress: the tail loop takes over */
        }
        while (ip < ip_end) {
            err = pqb_us_element(&ip, ip_end, out, &op, op_end);
            if (err) return err;
        }
        return op == op_end ? PQB_US_OK : PQB_US_SHORT;
    }
    """
    int c_snappy_decompress "pqb_snappy_decompress"(const uint8_t *ip, size_t n, uint8_t *out,
                                                     size_t out_len) noexcept nogil
    int c_probe "PQB_US_PROBE"
    enum:
        PQB_US_TRUNCATED
        PQB_US_BAD_OFFSET
        PQB_US_OVERFLOW
        PQB_US_SHORT
        PQB_US_BAD_LENGTH
        PQB_US_LENGTH_MISMATCH

#: both loops and the probe are built (x86-64 with GCC or Clang). Elsewhere only the branching loop
#: is, which on x86-64 took 1.1 times cramjam's time on the benchmark's e-mail and string reads, so
#: pqbloom.kernels.snappy_decompress_into leaves those machines to cramjam (the kernel still works
#: there, and the tests run it).
ADAPTIVE = bool(c_probe)

#: decompress_into's error codes: an element runs past the end of the block; a copy refers to bytes
#: before the output's start (or has offset 0); the elements produce more, or fewer, bytes than the
#: block states; the block's length varint is malformed; it states a length other than ``len(dst)``
E_TRUNCATED = PQB_US_TRUNCATED
E_BAD_OFFSET = PQB_US_BAD_OFFSET
E_OVERFLOW = PQB_US_OVERFLOW
E_SHORT = PQB_US_SHORT
E_BAD_LENGTH = PQB_US_BAD_LENGTH
E_LENGTH_MISMATCH = PQB_US_LENGTH_MISMATCH


def decompress_into(const uint8_t[::1] src, uint8_t[::1] dst):
    """Decompress the raw block ``src`` into ``dst``, which it must fill exactly (its stated length
    is ``len(dst)``); GIL released. Returns 0, or a negative error code (above); ``dst`` is then
    partly written."""
    cdef size_t n = src.shape[0], i = 0, out_len = dst.shape[0]
    cdef uint64_t value = 0
    cdef int shift = 0, rc
    cdef const uint8_t *ip
    cdef uint8_t *op = NULL
    while True:
        if i >= n or shift > 28:
            return E_BAD_LENGTH
        value |= <uint64_t>(src[i] & 0x7f) << shift
        i += 1
        if not (src[i - 1] & 0x80):
            break
        shift += 7
    if value != out_len:
        return E_LENGTH_MISMATCH
    ip = &src[0] + i
    if out_len:
        op = &dst[0]
    with nogil:
        rc = c_snappy_decompress(ip, n - i, op, out_len)
    return rc

