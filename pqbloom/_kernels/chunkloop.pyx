# cython: language_level=3, boundscheck=False, wraparound=False, initializedcheck=False, cdivision=True
"""The page loop of a flat fixed-width column chunk in C, without the GIL from its first page to its last.

The Python page loop (:func:`pqbloom.file.pages.iter_pages`) runs short GIL-free steps (a page's
decompression, a gather) between Python ones; two threads decoding such chunks spend their time
handing the GIL back and forth, and a threaded read gained nothing on numeric columns. This loop
takes the common chunk whole: INT32, INT64, FLOAT or DOUBLE values of a column that is required or
optional at the top level, v1 or v2 data pages, PLAIN or dictionary-encoded, uncompressed or
compressed with a codec whose C library this module was built with (snappy, zstd, LZ4_RAW: the
maintained libraries themselves, called from here; :data:`CODECS` says which). Everything else (a
page it does not take, any sign of corruption, a page larger than the caller allows) stops it with
:data:`FALLBACK`, and the caller decodes the chunk again with the Python loop, which raises the
errors and handles the rare cases: this loop never decides what a malformed chunk means.

The values land at their rows in the caller's buffer, nulls as zeros, presence flags (definition
level == 1) in the caller's flags; a required PLAIN page decompresses straight into its rows.
Every read is checked against the bytes it reads from (the headers' sizes, the buffer's end, the
output's rows) with arithmetic that cannot overflow; the hybrid runs, the header parse and the
dictionary gathers are those of :mod:`~pqbloom._kernels.hybrid` and :mod:`~pqbloom._kernels.pageheader`.
"""

from libc.stdint cimport int8_t, int32_t, int64_t, uint8_t
from libc.stdlib cimport free, malloc
from libc.string cimport memcpy, memset

from pqbloom._kernels._util cimport count_equal_bytes, u8_mut, u8_ptr
from pqbloom._kernels.hybrid cimport decode_indices, gather_dense, gather_present, level_block_int8
from pqbloom._kernels.pageheader cimport S_CRC, S_CSIZE, S_DICT, S_DP, S_TYPE, S_USIZE, S_V2, HeaderFields, parse_fields

cdef extern from *:
    """
    #include <limits.h>
    #include <stdint.h>
    #include <string.h>
    #if defined(PQB_HAVE_SNAPPY)
    #include <snappy-c.h>
    #endif
    #if defined(PQB_HAVE_ZSTD)
    #include <zstd.h>
    #endif
    #if defined(PQB_HAVE_LZ4)
    #include <lz4.h>
    #endif
    #if defined(PQB_HAVE_ZLIB)
    #include <zlib.h>
    #endif

    /* Whether a page's CRC can be checked here (zlib's crc32, the one the Python loop uses). */
    static int pqb_has_crc32(void) {
    #if defined(PQB_HAVE_ZLIB)
        return 1;
    #else
        return 0;
    #endif
    }

    /* 0 when the CRC-32 of the n bytes at p is crc (its low 32 bits), else -1 (or no zlib). */
    static int pqb_check_crc(const uint8_t *p, int64_t n, int64_t crc) {
    #if defined(PQB_HAVE_ZLIB)
        uLong c = crc32(0L, Z_NULL, 0);
        while (n > 0) {  /* zlib's length is a uInt */
            uInt step = n > (int64_t)0x40000000 ? (uInt)0x40000000 : (uInt)n;
            c = crc32(c, (const Bytef *)p, step);
            p += step;
            n -= step;
        }
        return (uint32_t)c == (uint32_t)(crc & 0xFFFFFFFF) ? 0 : -1;
    #else
        (void)p; (void)n; (void)crc;
        return -1;
    #endif
    }

    /* Parquet's CompressionCodec ids this build decompresses (UNCOMPRESSED 0, SNAPPY 1, ZSTD 6, LZ4_RAW 7) */
    static int pqb_has_codec(int codec) {
        switch (codec) {
        case 0: return 1;
    #if defined(PQB_HAVE_SNAPPY)
        case 1: return 1;
    #endif
    #if defined(PQB_HAVE_ZSTD)
        case 6: return 1;
    #endif
    #if defined(PQB_HAVE_LZ4)
        case 7: return 1;
    #endif
        default: return 0;
        }
    }

    static void *pqb_zstd_context(void) {
    #if defined(PQB_HAVE_ZSTD)
        return (void *)ZSTD_createDCtx();
    #else
        return NULL;
    #endif
    }

    static void pqb_zstd_free(void *ctx) {
    #if defined(PQB_HAVE_ZSTD)
        if (ctx != NULL) ZSTD_freeDCtx((ZSTD_DCtx *)ctx);
    #else
        (void)ctx;
    #endif
    }

    /* 0 when the csize bytes at src decompress to exactly usize bytes at dst (room for usize, at
       least 1), else -1. The rules are the Python codecs' (pqbloom.compression): snappy's block must
       declare the page's size, a zstd frame must state it (a frame without it, or more frames, go
       to the Python codec, which streams them with a bound), LZ4 cannot inflate more than 255x. */
    static int pqb_decompress(int codec, void *zctx, const uint8_t *src, int64_t csize, uint8_t *dst,
                              int64_t usize) {
        if (csize < 0 || usize < 0) return -1;
        switch (codec) {
        case 0:
            if (csize != usize) return -1;
            if (usize) memcpy(dst, src, (size_t)usize);
            return 0;
    #if defined(PQB_HAVE_SNAPPY)
        case 1: {
            size_t n = 0;
            if (snappy_uncompressed_length((const char *)src, (size_t)csize, &n) != SNAPPY_OK || n != (size_t)usize)
                return -1;
            n = (size_t)usize;
            if (snappy_uncompress((const char *)src, (size_t)csize, (char *)dst, &n) != SNAPPY_OK
                    || n != (size_t)usize)
                return -1;
            return 0;
        }
    #endif
    #if defined(PQB_HAVE_ZSTD)
        case 6: {
            size_t n;
            if (zctx == NULL || ZSTD_getFrameContentSize(src, (size_t)csize) != (unsigned long long)usize) return -1;
            n = ZSTD_decompressDCtx((ZSTD_DCtx *)zctx, dst, (size_t)usize, src, (size_t)csize);
            if (ZSTD_isError(n) || n != (size_t)usize) return -1;
            return 0;
        }
    #endif
    #if defined(PQB_HAVE_LZ4)
        case 7: {
            int n;
            if (csize > INT_MAX || usize > INT_MAX || usize > 255 * csize + 64) return -1;
            n = LZ4_decompress_safe((const char *)src, (char *)dst, (int)csize, (int)usize);
            if (n < 0 || (int64_t)n != usize) return -1;
            return 0;
        }
    #endif
        default:
            return -1;
        }
    }
    """
    int has_codec "pqb_has_codec"(int codec) noexcept nogil
    int has_crc32 "pqb_has_crc32"() noexcept nogil
    int check_crc "pqb_check_crc"(const uint8_t *p, int64_t n, int64_t crc) noexcept nogil
    void *zstd_context "pqb_zstd_context"() noexcept nogil
    void zstd_free "pqb_zstd_free"(void *ctx) noexcept nogil
    int decompress "pqb_decompress"(int codec, void *zctx, const uint8_t *src, int64_t csize, uint8_t *dst,
                                    int64_t usize) noexcept nogil

#: anything the loop does not take, or corrupt input: decode the chunk with the Python page loop
FALLBACK = -1

#: the CompressionCodec ids this build decompresses in C
CODECS = frozenset(c for c in range(8) if has_codec(c))
#: whether this build checks page CRCs (a chunk whose pages carry them is otherwise left to Python)
CRC32 = bool(has_crc32())

cdef enum:
    E_FALLBACK = -1
    E_TRUNCATED = -1  # pageheader's: the header runs past the bytes given
    # PageType
    P_DATA = 0
    P_INDEX = 1
    P_DICTIONARY = 2
    P_DATA_V2 = 3
    # Encoding
    ENC_PLAIN = 0
    ENC_PLAIN_DICTIONARY = 2
    ENC_BIT_PACKED = 4
    ENC_RLE_DICTIONARY = 8


cdef class FlatChunk:
    """One chunk's decoding state, fed the chunk's bytes by :meth:`run` (all at once, or window by window).

    ``out``: the chunk's rows (``rows * width`` bytes, written); ``present``: its presence flags (one
    byte per row, 0 or 1) for an optional column, empty for a required one; ``max_page``: the largest
    page (decompressed) this loop allocates for, a larger one is left to the Python loop;
    ``verify_checksums``: pages that carry a CRC are checked (a mismatch is left to the Python loop)."""

    cdef int64_t total, seen, width, max_page, rows
    cdef int codec
    cdef bint optional, v2_always_compressed, verify_checksums
    cdef uint8_t *out
    cdef int8_t *present
    cdef object out_owner, present_owner
    cdef uint8_t *scratch
    cdef int64_t scratch_size
    cdef int32_t *idx
    cdef int64_t idx_size
    cdef uint8_t *dictionary
    cdef int64_t dict_len
    cdef bint has_dictionary
    cdef void *zctx
    #: values found present so far (optional columns)
    cdef readonly int64_t present_count
    #: bytes the next page needs from the position :meth:`run` returned (0: none asked)
    cdef readonly int64_t need

    def __cinit__(self, int64_t total, int64_t width, int codec, uint8_t[::1] out not None,
                  uint8_t[::1] present not None, int64_t max_page, bint v2_always_compressed,
                  bint verify_checksums):
        if total < 0 or width not in (4, 8) or out.shape[0] // width < total or max_page < 0 \
                or (present.shape[0] != 0 and present.shape[0] < total) or not has_codec(codec):
            raise ValueError("chunkloop.FlatChunk: invalid arguments")
        self.total, self.width, self.codec, self.max_page = total, width, codec, max_page
        self.v2_always_compressed, self.verify_checksums = v2_always_compressed, verify_checksums
        self.out = u8_mut(out)
        self.optional = present.shape[0] != 0
        self.present = <int8_t *>u8_mut(present) if self.optional else NULL
        self.out_owner, self.present_owner = out, present  # the pointers stay valid while this lives
        self.seen = self.rows = self.present_count = self.need = 0
        self.scratch, self.idx, self.dictionary = NULL, NULL, NULL
        self.scratch_size = self.idx_size = self.dict_len = 0
        self.has_dictionary = False
        self.zctx = zstd_context() if codec == 6 else NULL
        if codec == 6 and self.zctx == NULL:
            raise MemoryError()

    def __dealloc__(self):
        free(self.scratch)
        free(self.idx)
        free(self.dictionary)
        zstd_free(self.zctx)

    @property
    def done(self) -> bool:
        """Every value of the chunk is decoded."""
        return self.seen == self.total

    @property
    def nulls(self) -> int:
        """Rows without a value so far."""
        return self.rows - self.present_count if self.optional else 0

    def run(self, const uint8_t[::1] buf not None, int64_t pos):
        """Decode the whole pages at ``buf[pos:]``: the position after the last one decoded (with
        :attr:`need` the bytes the next one needs from there, when ``buf`` ends before it), or
        :data:`FALLBACK`."""
        if pos < 0 or pos > buf.shape[0]:
            raise ValueError("chunkloop.FlatChunk.run: position outside the buffer")
        cdef int64_t rc
        cdef const uint8_t *p = u8_ptr(buf)
        cdef int64_t end = buf.shape[0]
        with nogil:
            rc = self._run(p, end, pos)
        return rc

    cdef uint8_t *_scratch(self, int64_t size) noexcept nogil:
        """A buffer of at least ``size`` bytes (at least 1), kept for the next pages; NULL when out of memory."""
        if size < 1:
            size = 1
        if size > self.scratch_size:
            free(self.scratch)
            self.scratch = <uint8_t *>malloc(<size_t>size)
            self.scratch_size = size if self.scratch != NULL else 0
        return self.scratch

    cdef int64_t _run(self, const uint8_t *p, int64_t end, int64_t pos) noexcept nogil:
        cdef HeaderFields h
        cdef int64_t hend, ptype, usize, csize, n
        cdef int rc
        self.need = 0
        while self.seen < self.total:
            if pos >= end:
                self.need = 1
                return pos
            rc = parse_fields(p, pos, end, &h, &hend)
            if rc == E_TRUNCATED:  # perhaps cut by the window's end
                self.need = end - pos + 1
                return pos
            if rc:
                return E_FALLBACK
            if not (h.has[S_TYPE] and h.has[S_USIZE] and h.has[S_CSIZE]):
                return E_FALLBACK
            ptype, usize, csize = h.value[S_TYPE], h.value[S_USIZE], h.value[S_CSIZE]
            if usize < 0 or csize < 0 or usize > self.max_page:
                return E_FALLBACK
            if csize > end - hend:
                self.need = hend - pos + csize
                return pos
            if self.verify_checksums and h.has[S_CRC] and check_crc(p + hend, csize, h.value[S_CRC]):
                return E_FALLBACK  # (the Python loop raises the ChecksumError)
            if ptype == P_DICTIONARY:
                if self._dictionary_page(&h, p + hend, csize, usize):
                    return E_FALLBACK
            elif ptype == P_DATA:
                if not h.has_dp or not h.has[S_DP] or not h.has[S_DP + 1]:
                    return E_FALLBACK
                n = h.value[S_DP]
                if n < 0 or n > self.total - self.seen:
                    return E_FALLBACK
                if self.optional and h.has[S_DP + 2] and h.value[S_DP + 2] == ENC_BIT_PACKED:
                    return E_FALLBACK
                if self._data_page(p + hend, csize, usize, n, h.value[S_DP + 1], -1, -1, True):
                    return E_FALLBACK
            elif ptype == P_DATA_V2:
                if not h.has_v2 or not (h.has[S_V2] and h.has[S_V2 + 3] and h.has[S_V2 + 4] and h.has[S_V2 + 5]):
                    return E_FALLBACK
                n = h.value[S_V2]
                if n < 0 or n > self.total - self.seen:
                    return E_FALLBACK
                if self._data_page(p + hend, csize, usize, n, h.value[S_V2 + 3], h.value[S_V2 + 5],
                                   h.value[S_V2 + 4],
                                   self.v2_always_compressed or not h.has[S_V2 + 6] or h.value[S_V2 + 6] != 0):
                    return E_FALLBACK
            elif ptype != P_INDEX:
                return E_FALLBACK
            pos = hend + csize
        return pos

    cdef int _dictionary_page(self, HeaderFields *h, const uint8_t *body, int64_t csize, int64_t usize) noexcept nogil:
        cdef int64_t n
        if self.has_dictionary or self.seen or not h.has_dict or not h.has[S_DICT] or not h.has[S_DICT + 1]:
            return -1
        n = h.value[S_DICT]
        if n < 0 or (h.value[S_DICT + 1] != ENC_PLAIN and h.value[S_DICT + 1] != ENC_PLAIN_DICTIONARY) \
                or n > usize // self.width:
            return -1
        self.dictionary = <uint8_t *>malloc(<size_t>(usize if usize > 0 else 1))
        if self.dictionary == NULL:
            return -1
        if decompress(self.codec, self.zctx, body, csize, self.dictionary, usize):
            return -1
        self.dict_len = n
        self.has_dictionary = True
        return 0

    cdef int _data_page(self, const uint8_t *body, int64_t csize, int64_t usize, int64_t n, int64_t enc,
                        int64_t rep_len, int64_t def_len, bint compressed) noexcept nogil:
        """One data page of ``n`` values: v1 (``rep_len`` -1: levels inside the compressed bytes)
        or v2 (the level blocks' lengths, stored uncompressed before the values)."""
        cdef int64_t w = self.width, row = self.rows, npresent = n, lp = 0, vlen, info[4]
        cdef const uint8_t *raw
        cdef const uint8_t *values
        cdef uint8_t *dst = self.out + row * w
        cdef uint8_t *buf
        cdef bint v2 = rep_len >= 0
        if v2:
            if def_len < 0 or rep_len > csize or def_len > csize - rep_len or rep_len > usize \
                    or def_len > usize - rep_len:
                return -1
            if self.optional:
                if level_block_int8(body, rep_len + def_len, rep_len, def_len, 1, n, self.present + row, info, &lp) < 0:
                    return -1
                npresent = count_equal_bytes(<const uint8_t *>(self.present + row), n, 1)
            lp = rep_len + def_len
            vlen = usize - lp
            if not compressed:  # the values stored as they are: the bytes there are
                values = body + lp
                vlen = csize - lp
            elif not self.optional and enc == ENC_PLAIN and vlen == n * w and n <= self.total - row:
                return decompress(self.codec, self.zctx, body + lp, csize - lp, dst, vlen) or self._advance(n, n)
            else:
                buf = self._scratch(vlen)
                if buf == NULL or decompress(self.codec, self.zctx, body + lp, csize - lp, buf, vlen):
                    return -1
                values = buf
        else:
            if not self.optional and enc == ENC_PLAIN and usize == n * w:
                return decompress(self.codec, self.zctx, body, csize, dst, usize) or self._advance(n, n)
            buf = self._scratch(usize)
            if buf == NULL or decompress(self.codec, self.zctx, body, csize, buf, usize):
                return -1
            raw = buf
            if self.optional:
                if level_block_int8(raw, usize, 0, -1, 1, n, self.present + row, info, &lp) < 0:
                    return -1
                npresent = count_equal_bytes(<const uint8_t *>(self.present + row), n, 1)
            values = raw + lp
            vlen = usize - lp
        if enc == ENC_PLAIN:
            if npresent > vlen // w:
                return -1
            if npresent == n:
                if n:
                    memcpy(dst, values, <size_t>(n * w))
            else:
                _scatter(values, npresent, <const uint8_t *>(self.present + row), n, w, dst)
        elif enc == ENC_RLE_DICTIONARY or enc == ENC_PLAIN_DICTIONARY:
            if not self.has_dictionary or self._gather(values, vlen, n, npresent, dst):
                return -1
        else:
            return -1
        return self._advance(n, npresent)

    cdef int _advance(self, int64_t n, int64_t npresent) noexcept nogil:
        self.seen += n
        self.rows += n
        self.present_count += npresent
        return 0

    cdef int _gather(self, const uint8_t *values, int64_t vlen, int64_t n, int64_t npresent,
                     uint8_t *dst) noexcept nogil:
        """A dictionary-encoded page's ``npresent`` indices (a bit width byte, then the hybrid)
        looked up into its ``n`` rows."""
        cdef int64_t info[4]
        cdef int bw
        if npresent == 0:
            if n:
                memset(dst, 0, <size_t>(n * self.width))
            return 0
        if vlen < 1 or npresent > 2147483647:
            return -1
        bw = values[0]
        if bw > 32:
            return -1
        if npresent > self.idx_size:
            free(self.idx)
            self.idx = <int32_t *>malloc(<size_t>npresent * sizeof(int32_t))
            self.idx_size = npresent if self.idx != NULL else 0
            if self.idx == NULL:
                return -1
        if bw == 0:
            memset(self.idx, 0, <size_t>npresent * sizeof(int32_t))
        elif decode_indices(values + 1, vlen - 1, bw, npresent, self.idx, info) < 0:
            return -1
        if npresent == n:
            return <int>gather_dense(self.idx, n, self.dictionary, self.dict_len, self.width, dst)
        return <int>gather_present(self.idx, npresent, self.dictionary, self.dict_len, self.width,
                                   <const uint8_t *>(self.present + self.rows), n, dst)


cdef void _scatter(const uint8_t *values, int64_t count, const uint8_t *present, int64_t rows, int64_t w,
                   uint8_t *dst) noexcept nogil:
    """``count`` dense values of ``w`` bytes to the rows ``present`` marks (their number checked by
    the caller), zeros to the others."""
    cdef int64_t i, j = 0
    if w == 8:
        for i in range(rows):
            if present[i]:
                memcpy(dst + 8 * i, values + 8 * j, 8)
                j += 1
            else:
                memset(dst + 8 * i, 0, 8)
    else:
        for i in range(rows):
            if present[i]:
                memcpy(dst + 4 * i, values + 4 * j, 4)
                j += 1
            else:
                memset(dst + 4 * i, 0, 4)
