# cython: language_level=3, boundscheck=False, wraparound=False, initializedcheck=False, cdivision=True
"""The page loop of a flat fixed-width column chunk in C, without the GIL from its first page to its last
but for each page's decompression.

The Python page loop (:func:`pqbloom.file.pages.iter_pages`) runs short GIL-free steps (a page's
decompression, a gather) between Python ones; two threads decoding such chunks spend their time
handing the GIL back and forth, and a threaded read gained nothing on numeric columns. This loop
takes the common chunk whole: INT32, INT64, FLOAT, DOUBLE or FIXED_LEN_BYTE_ARRAY values of a column
that is required or optional at the top level, v1 or v2 data pages, PLAIN or dictionary-encoded. Page
headers, levels, dictionary indices, gathers and null placement run here without the GIL. A compressed page is
handed to the caller's ``decompress(src, dst, size)`` (pqbloom's codecs: cramjam, python-zstandard,
zlib, which release the GIL while they work), and a page's CRC to ``check_crc(data, crc)``: the GIL
is taken for those calls only, a few microseconds a page. Everything else (a page it does not take,
any sign of corruption, an exception from a callback, a page larger than the caller allows) stops
it with :data:`FALLBACK`, and the caller decodes the chunk again with the Python loop, which raises
the errors and handles the rare cases: this loop never decides what a malformed chunk means.

The values land at their rows in the caller's buffer, nulls as zeros, presence flags (definition
level == 1) in the caller's flags; a required PLAIN page decompresses straight into its rows. With
``positions`` only those rows are kept, each page's taken as it decodes. Every read is checked
against the bytes it reads from (the headers' sizes, the buffer's end, the output's rows) with
arithmetic that cannot overflow; the hybrid runs, the header parse and the dictionary gathers are
those of :mod:`~pqbloom._kernels.hybrid` and :mod:`~pqbloom._kernels.pageheader`.
"""

from cpython.memoryview cimport PyMemoryView_FromMemory
from cpython.buffer cimport PyBUF_READ, PyBUF_WRITE
from libc.stdint cimport int8_t, int32_t, int64_t, uint8_t, uint32_t
from libc.stdlib cimport free, malloc
from libc.string cimport memcpy, memset

from pqbloom._kernels._util cimport count_equal_bytes, u8_mut, u8_ptr
from pqbloom._kernels.hybrid cimport decode_indices, gather_dense, gather_present, level_block_int8
from pqbloom._kernels.pageheader cimport S_CRC, S_CSIZE, S_DICT, S_DP, S_TYPE, S_USIZE, S_V2, HeaderFields, parse_fields

#: anything the loop does not take, or corrupt input: decode the chunk with the Python page loop
FALLBACK = -1
#: the widest value it takes (FIXED_LEN_BYTE_ARRAY), in bytes
MAX_WIDTH = 1 << 16

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
    ``decompress(src, dst, size)``: writes the page ``src`` decompressed into ``dst`` (``size`` bytes),
    true when it did (None: the pages are stored uncompressed); ``check_crc(data, crc)``: whether a
    page's stored bytes match its CRC (None: CRCs are not checked);
    ``positions``: empty for every row, else the rows to keep (strictly increasing, under ``total``):
    ``out`` and ``present`` then hold those rows only, each page's values taken as it decodes (a
    filtered read's late materialization)."""

    cdef int64_t total, seen, width, max_page, rows
    cdef bint compressed, optional, v2_always_compressed, verify_checksums
    cdef object decompressor, crc_checker
    cdef uint8_t *out
    cdef int8_t *present
    cdef object out_owner, present_owner, positions_owner
    cdef const int64_t *positions
    cdef int64_t selected, taken
    cdef int8_t *levels
    cdef int64_t levels_size
    cdef uint8_t *scratch
    cdef int64_t scratch_size
    cdef int32_t *idx
    cdef int64_t idx_size
    cdef uint8_t *dictionary
    cdef int64_t dict_len
    cdef bint has_dictionary
    #: values found present so far (optional columns)
    cdef readonly int64_t present_count
    #: bytes the next page needs from the position :meth:`run` returned (0: none asked)
    cdef readonly int64_t need

    def __cinit__(self, int64_t total, int64_t width, object decompress, object check_crc, uint8_t[::1] out not None,
                  uint8_t[::1] present not None, int64_t max_page, bint v2_always_compressed,
                  bint optional, const int64_t[::1] positions not None):
        cdef int64_t rows = positions.shape[0] if positions.shape[0] else total, i
        if total < 0 or not 1 <= width <= MAX_WIDTH or out.shape[0] // width < rows or max_page < 0 \
                or (optional and present.shape[0] < rows) \
                or (decompress is not None and not callable(decompress)) \
                or (check_crc is not None and not callable(check_crc)):
            raise ValueError("chunkloop.FlatChunk: invalid arguments")
        for i in range(positions.shape[0]):
            if positions[i] < (positions[i - 1] + 1 if i else 0) or positions[i] >= total:
                raise ValueError("chunkloop.FlatChunk: positions must increase and lie under the chunk's rows")
        self.total, self.width, self.max_page = total, width, max_page
        self.compressed, self.decompressor, self.crc_checker = decompress is not None, decompress, check_crc
        self.v2_always_compressed, self.verify_checksums = v2_always_compressed, check_crc is not None
        self.out = u8_mut(out)
        self.optional = optional
        self.present = <int8_t *>u8_mut(present) if optional else NULL
        self.positions = &positions[0] if positions.shape[0] else NULL
        self.selected, self.taken = positions.shape[0], 0
        # the pointers stay valid while this lives
        self.out_owner, self.present_owner, self.positions_owner = out, present, positions
        self.seen = self.rows = self.present_count = self.need = 0
        self.scratch, self.idx, self.dictionary, self.levels = NULL, NULL, NULL, NULL
        self.scratch_size = self.idx_size = self.dict_len = self.levels_size = 0
        self.has_dictionary = False

    def __dealloc__(self):
        free(self.scratch)
        free(self.idx)
        free(self.dictionary)
        free(self.levels)

    @property
    def done(self) -> bool:
        """Every value of the chunk is decoded."""
        return self.seen == self.total

    @property
    def nulls(self) -> int:
        """Rows written without a value so far."""
        return (self.taken if self.positions != NULL else self.rows) - self.present_count if self.optional else 0

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
        """A buffer of more than ``size`` bytes (a decompressor may ask for one spare byte, to see a page
        inflate past its size), kept for the next pages; NULL when out of memory."""
        size += 1
        if size > self.scratch_size:
            free(self.scratch)
            self.scratch = <uint8_t *>malloc(<size_t>size)
            self.scratch_size = size if self.scratch != NULL else 0
        return self.scratch

    cdef int _decompress(self, const uint8_t *src, int64_t csize, uint8_t *dst, int64_t usize,
                         int64_t room) noexcept nogil:
        """0 when the ``csize`` bytes at ``src`` decompress to exactly ``usize`` bytes at ``dst`` (which
        has ``room`` >= ``usize`` bytes), else -1. Stored bytes are copied; a codec's are
        the caller's ``decompress`` (the GIL taken for the call: the codecs release it as they work)."""
        cdef bint ok
        if not self.compressed:
            if csize != usize:
                return -1
            if usize:
                memcpy(dst, src, <size_t>usize)
            return 0
        with gil:
            try:
                ok = self.decompressor(PyMemoryView_FromMemory(<char *>src, csize, PyBUF_READ),
                                       PyMemoryView_FromMemory(<char *>dst, room, PyBUF_WRITE), usize)
            except BaseException:  # noqa: B036 - any failure is the Python loop's to report
                ok = False
        return 0 if ok else -1

    cdef int _check_crc(self, const uint8_t *data, int64_t n, int64_t crc) noexcept nogil:
        """0 when the caller's ``check_crc`` accepts the CRC of the ``n`` bytes at ``data``."""
        cdef bint ok
        with gil:
            try:
                ok = self.crc_checker(PyMemoryView_FromMemory(<char *>data, n, PyBUF_READ), crc)
            except BaseException:  # noqa: B036
                ok = False
        return 0 if ok else -1

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
            if self.verify_checksums and h.has[S_CRC] and self._check_crc(p + hend, csize, h.value[S_CRC]):
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
        self.dictionary = <uint8_t *>malloc(<size_t>(usize + 1))
        if self.dictionary == NULL:
            return -1
        if self._decompress(body, csize, self.dictionary, usize, usize + 1):
            return -1
        self.dict_len = n
        self.has_dictionary = True
        return 0

    cdef int _data_page(self, const uint8_t *body, int64_t csize, int64_t usize, int64_t n, int64_t enc,
                        int64_t rep_len, int64_t def_len, bint compressed) noexcept nogil:
        """One data page of ``n`` values: v1 (``rep_len`` -1: levels inside the compressed bytes)
        or v2 (the level blocks' lengths, stored uncompressed before the values)."""
        cdef int64_t w = self.width, row = self.rows, npresent = n, lp = 0, vlen, got
        cdef int64_t info[4]
        cdef const uint8_t *values
        cdef uint8_t *buf
        cdef int8_t *lv = NULL
        cdef bint whole = self.positions == NULL
        cdef bint plain = enc == ENC_PLAIN
        if self.optional:  # the levels (0 or 1): straight into the flags of a read of every row
            lv = self.present + row if whole else self._levels(n)
            if lv == NULL:
                return -1
        if rep_len >= 0:
            if def_len < 0 or rep_len > csize or def_len > csize - rep_len or rep_len > usize \
                    or def_len > usize - rep_len:
                return -1
            if self.optional:
                if level_block_int8(body, rep_len + def_len, rep_len, def_len, 1, n, lv, info, &lp) < 0:
                    return -1
                npresent = count_equal_bytes(<const uint8_t *>lv, n, 1)
            lp = rep_len + def_len
            vlen = usize - lp
            if not compressed:  # the values stored as they are: the bytes there are
                values = body + lp
                vlen = csize - lp
            elif whole and not self.optional and plain and vlen == n * w:
                # a required PLAIN page decompresses straight into its rows
                return self._decompress(body + lp, csize - lp, self.out + row * w, vlen, vlen) \
                    or self._advance(n, n)
            else:
                buf = self._scratch(vlen)
                if buf == NULL or self._decompress(body + lp, csize - lp, buf, vlen, self.scratch_size):
                    return -1
                values = buf
        else:
            if whole and not self.optional and plain and usize == n * w:
                return self._decompress(body, csize, self.out + row * w, usize, usize) \
                    or self._advance(n, n)
            buf = self._scratch(usize)
            if buf == NULL or self._decompress(body, csize, buf, usize, self.scratch_size):
                return -1
            if self.optional:
                if level_block_int8(buf, usize, 0, -1, 1, n, lv, info, &lp) < 0:
                    return -1
                npresent = count_equal_bytes(<const uint8_t *>lv, n, 1)
            values = buf + lp
            vlen = usize - lp
        if plain:
            if npresent > vlen // w:
                return -1
        elif enc == ENC_RLE_DICTIONARY or enc == ENC_PLAIN_DICTIONARY:
            if not self.has_dictionary or self._indices(values, vlen, npresent):
                return -1
        else:
            return -1
        if whole:
            return self._place_all(values, plain, lv, n, npresent) or self._advance(n, npresent)
        got = self._place_selected(values, plain, lv, n)
        return -1 if got < 0 else self._advance(n, got)

    cdef int _advance(self, int64_t n, int64_t present) noexcept nogil:
        """``n`` more values decoded, ``present`` more rows written with a value."""
        self.seen += n
        self.rows += n
        self.present_count += present
        return 0

    cdef int8_t *_levels(self, int64_t n) noexcept nogil:
        """A page's levels, when only some rows are kept: a buffer reused by the next pages."""
        if n < 1:
            n = 1
        if n > self.levels_size:
            free(self.levels)
            self.levels = <int8_t *>malloc(<size_t>n)
            self.levels_size = n if self.levels != NULL else 0
        return self.levels

    cdef int _indices(self, const uint8_t *values, int64_t vlen, int64_t npresent) noexcept nogil:
        """A dictionary-encoded page's ``npresent`` indices (a bit width byte, then the hybrid) into
        ``self.idx``."""
        cdef int64_t info[4]
        cdef int bw
        if npresent == 0:
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
        return 0

    cdef int _place_all(self, const uint8_t *values, bint plain, const int8_t *lv, int64_t n,
                        int64_t npresent) noexcept nogil:
        """The page's values (PLAIN, or ``self.idx`` into the dictionary) to its ``n`` rows, nulls
        (``lv`` 0) as zeros."""
        cdef uint8_t *dst = self.out + self.rows * self.width
        if npresent == 0:
            if n:
                memset(dst, 0, <size_t>(n * self.width))
            return 0
        if plain:
            if npresent == n:
                memcpy(dst, values, <size_t>(n * self.width))
            else:
                _scatter(values, npresent, <const uint8_t *>lv, n, self.width, dst)
            return 0
        if npresent == n:
            return <int>gather_dense(self.idx, n, self.dictionary, self.dict_len, self.width, dst)
        return <int>gather_present(self.idx, npresent, self.dictionary, self.dict_len, self.width,
                                   <const uint8_t *>lv, n, dst)

    cdef int64_t _place_selected(self, const uint8_t *values, bint plain, const int8_t *lv,
                                 int64_t n) noexcept nogil:
        """The kept rows among the page's ``n``: their values (PLAIN, or ``self.idx`` into the
        dictionary) to the next slots of ``out``, nulls as zeros; the number written with a value,
        or -1 (an index outside the dictionary)."""
        cdef int64_t w = self.width, k = self.taken, end = self.rows + n, r, dense, scan = 0, before = 0, got = 0
        cdef uint32_t ix
        cdef uint8_t *dst
        while k < self.selected and self.positions[k] < end:
            r = self.positions[k] - self.rows
            dst = self.out + k * w
            if lv != NULL:
                while scan < r:  # (the rows kept increase: the count of values before them runs on)
                    before += lv[scan]
                    scan += 1
                self.present[k] = lv[r]
                if not lv[r]:
                    memset(dst, 0, <size_t>w)
                    k += 1
                    continue
                dense = before  # (below the page's present count: row r itself is present)
            else:
                dense = r
            if plain:
                memcpy(dst, values + dense * w, <size_t>w)
            else:
                ix = <uint32_t>self.idx[dense]
                if ix >= self.dict_len:
                    return -1
                memcpy(dst, self.dictionary + <int64_t>ix * w, <size_t>w)
            got += 1
            k += 1
        self.taken = k
        return got


cdef void _scatter(const uint8_t *values, int64_t count, const uint8_t *present, int64_t rows, int64_t w,
                   uint8_t *dst) noexcept nogil:
    """``count`` dense values of ``w`` bytes to the rows ``present`` marks (their number checked by
    the caller), zeros to the others. (One loop per common width: with the width a constant, the
    compiler makes each copy one load and one store.)"""
    cdef int64_t i, j = 0
    if w == 8:
        for i in range(rows):
            if present[i]:
                memcpy(dst + 8 * i, values + 8 * j, 8)
                j += 1
            else:
                memset(dst + 8 * i, 0, 8)
    elif w == 4:
        for i in range(rows):
            if present[i]:
                memcpy(dst + 4 * i, values + 4 * j, 4)
                j += 1
            else:
                memset(dst + 4 * i, 0, 4)
    else:  # FIXED_LEN_BYTE_ARRAY
        for i in range(rows):
            if present[i]:
                memcpy(dst + w * i, values + w * j, <size_t>w)
                j += 1
            else:
                memset(dst + w * i, 0, <size_t>w)
