# cython: language_level=3, boundscheck=False, wraparound=False, initializedcheck=False, cdivision=True
"""Definition and repetition levels: nulls placed among dense values, and list offsets.

* ``scatter_fixed`` / ``scatter_binary``: from definition levels (or a presence mask) and the dense
  non-null values, the full-length values (zeros, or empty values, at null slots) and Arrow's
  validity bitmap, in one pass over the levels.
* ``count_slots`` / ``list_offsets``: the offsets of the innermost list level from the repetition
  and definition levels, in one pass (the general running count of ``pqbloom.nested.assemble``).

Every write into an output is within the sizes checked on entry; a dense input with fewer values
than the levels say is detected before it is read past.
"""

from libc.stdint cimport int8_t, int16_t, int32_t, int64_t, uint8_t, uint16_t, uint32_t, uint64_t, uintptr_t
from libc.string cimport memcpy, memset

from pqbloom._kernels._util cimport count_equal_bytes, u8_mut, u8_ptr

# error codes (negative returns)
COUNT_MISMATCH = -1  # the levels define more (or fewer) values than there are
ELEMENTS_BEFORE_FIRST_SLOT = -2

cdef enum:
    E_COUNT_MISMATCH = -1
    E_ELEMENTS_BEFORE_FIRST_SLOT = -2

ctypedef fused level_t:
    int8_t
    int16_t
    int32_t
    uint8_t  # a presence mask (numpy bool viewed as uint8): max_level 1


ctypedef fused item_t:  # fixed-width values moved as whole words
    uint8_t
    uint16_t
    uint32_t
    uint64_t


cdef int64_t _count_present(const level_t *lv, int64_t n, level_t top) noexcept nogil:
    cdef int64_t i, c = 0
    if level_t is uint8_t or level_t is int8_t:  # 8 levels a word (the loop does not vectorize)
        return count_equal_bytes(<const uint8_t *>lv, n, <uint8_t>top)
    for i in range(n):
        c += lv[i] == top
    return c


cdef enum:
    _SKIP_AFTER_MIXED = 4  # groups of 8 slots placed one by one, untested, after a mixed group


# _RANK[bits][c]: how many of the bits below bit c are set (the rank of slot c among a group's present ones)
cdef uint8_t _RANK[256][8]


cdef void _fill_rank() noexcept:
    cdef int b, c
    for b in range(256):
        for c in range(8):
            _RANK[b][c] = 0 if c == 0 else _RANK[b][c - 1] + ((b >> (c - 1)) & 1)


_fill_rank()


cdef inline uint8_t _group_bits(const level_t *lv, level_t top) noexcept nogil:
    """Bit j set where ``lv[j] == top``, for the 8 levels at ``lv``."""
    cdef uint8_t bits = 0
    cdef int j
    for j in range(8):
        bits |= <uint8_t>(lv[j] == top) << j
    return bits


cdef void _scatter_words(const level_t *lv, int64_t n, level_t top, const uint8_t *src, int64_t ndense,
                         uint8_t *dst, uint8_t *validity, item_t word) noexcept nogil:
    """The scatter for 1, 2, 4 and 8-byte values (``word``: a zero of that type, which picks it),
    without a branch per slot: every slot reads a dense value (clamped to the last one, so never
    past ``src``) and keeps it or zero (a mask). Words move through fixed-size memcpy (one mov each):
    a page's values may start at any byte, after its levels."""
    cdef int64_t k = 0, b, j, i, last = ndense - 1, c, at
    cdef uint8_t bits, p
    cdef item_t m, v
    cdef size_t w = sizeof(item_t)
    for b in range(n >> 6):  # blocks of 64 slots: all present (a copy), all null (zeros), or mixed
        i = b << 6
        c = _count_present(lv + i, 64, top)
        if c == 64 and k + 64 <= ndense:
            memcpy(dst + i * w, src + k * w, 64 * w)
            memset(validity + (i >> 3), 0xFF, 8)
            k += 64
            continue
        if c == 0:
            memset(dst + i * w, 0, 64 * w)
            memset(validity + (i >> 3), 0, 8)
            continue
        # mixed (random nulls: every block): the branch above is predictable, the slots are not.
        # Within a group of 8 the slot's dense value is k + (present slots before it): a table
        # lookup, so the 8 loads do not wait on each other through a running count
        for j in range(0, 64, 8):
            bits = _group_bits(lv + i + j, top)
            validity[(i + j) >> 3] = bits
            for c in range(8):
                p = (bits >> c) & 1
                m = <item_t>0 - <item_t>p
                at = k + _RANK[bits][c]
                memcpy(&v, src + (at if at < last else last) * w, w)
                v = v & m
                memcpy(dst + (i + j + c) * w, &v, w)
            k += _RANK[bits][7] + (bits >> 7)
    for b in range((n >> 6) << 3, (n + 7) >> 3):  # the last slots, by groups of 8
        bits = 0
        for c in range(8):
            i = 8 * b + c
            if i >= n:
                break
            p = lv[i] == top
            m = <item_t>0 - <item_t>p
            memcpy(&v, src + (k if k < last else last) * w, w)
            v = v & m
            memcpy(dst + i * w, &v, w)
            k += p
            bits |= p << c
        validity[b] = bits


cdef void _scatter_rows(const level_t *lv, int64_t n, level_t top, const uint8_t *src, int64_t ndense,
                        int64_t w, uint8_t *dst, uint8_t *validity) noexcept nogil:
    """The scatter for rows of any width (FIXED_LEN_BYTE_ARRAY, INT96)."""
    cdef int64_t i, k = 0, b, j, stop
    cdef uint8_t bits
    for b in range((n + 7) >> 3):
        bits = 0
        stop = n - 8 * b
        if stop > 8:
            stop = 8
        for j in range(stop):
            i = 8 * b + j
            if lv[i] == top and k < ndense:
                memcpy(dst + i * w, src + k * w, <size_t>w)
                k += 1
                bits |= 1 << j
            else:
                memset(dst + i * w, 0, <size_t>w)
        validity[b] = bits


cdef int64_t _scatter_fixed(const level_t *lv, int64_t n, level_t top, const uint8_t *src, int64_t ndense,
                            int64_t w, uint8_t *dst, uint8_t *validity) noexcept nogil:
    # the count first: the levels must define exactly the dense values (this also keeps the
    # loops below simple; they stay within ``src`` whatever the levels say)
    if _count_present(lv, n, top) != ndense:
        return E_COUNT_MISMATCH
    if n == 0:
        # no slots: ``dst`` and ``validity`` may be empty views, whose pointers are NULL (memset must
        # not be given NULL, even for 0 bytes)
        return 0
    if ndense == 0:
        memset(dst, 0, <size_t>(n * w))
        memset(validity, 0, <size_t>((n + 7) >> 3))
    elif w == 8:
        _scatter_words(lv, n, top, src, ndense, dst, validity, <uint64_t>0)
    elif w == 4:
        _scatter_words(lv, n, top, src, ndense, dst, validity, <uint32_t>0)
    elif w == 2:
        _scatter_words(lv, n, top, src, ndense, dst, validity, <uint16_t>0)
    elif w == 1:
        _scatter_words(lv, n, top, src, ndense, dst, validity, <uint8_t>0)
    else:
        _scatter_rows(lv, n, top, src, ndense, w, dst, validity)
    return ndense


def scatter_fixed(const level_t[::1] levels, int max_level, const uint8_t[::1] dense, int64_t itemsize,
                  uint8_t[::1] out, uint8_t[::1] validity):
    """Slot i of ``out`` (``itemsize`` bytes each) gets the next dense value where
    ``levels[i] == max_level``, zeros elsewhere; bit i of ``validity`` says which.

    ``max_level`` must fit the levels' type. Returns the number of values placed, or
    COUNT_MISMATCH when ``dense`` does not hold exactly as many values as the levels define.
    """
    cdef int64_t n = levels.shape[0], rc
    if itemsize <= 0 or dense.shape[0] % itemsize or out.shape[0] // itemsize < n \
            or validity.shape[0] < (n + 7) // 8:
        raise ValueError("levels.scatter_fixed: invalid arguments")
    cdef const level_t *lv = &levels[0] if n else NULL
    with nogil:
        rc = _scatter_fixed(lv, n, <level_t>max_level, u8_ptr(dense), dense.shape[0] // itemsize, itemsize,
                            u8_mut(out), u8_mut(validity))
    return rc


cdef int64_t _spread_offsets(int64_t *full, const uint8_t *present, int64_t n, int64_t count) noexcept nogil:
    cdef int64_t i, c = n - count_equal_bytes(present, n, 0)
    if c != count:
        return E_COUNT_MISMATCH
    # from the last row down: row i ends at dense offset c = (present rows up to i), and c <= i + 1,
    # so the entry read is one this loop has not overwritten yet (it writes i + 1 after reading)
    for i in range(n - 1, -1, -1):
        full[i + 1] = full[c]
        c -= present[i] != 0
    return 0


def spread_offsets(int64_t[::1] full, const uint8_t[::1] present, int64_t count):
    """The ``count + 1`` dense offsets at the head of ``full`` spread to one per row in place (a row
    not ``present`` repeats the offset before it): 0, or COUNT_MISMATCH (nothing written) when
    ``present`` does not flag exactly ``count`` rows."""
    cdef int64_t n = present.shape[0], rc
    if count < 0 or full.shape[0] < n + 1 or full.shape[0] < count + 1:
        raise ValueError("levels.spread_offsets: invalid arguments")
    with nogil:
        rc = _spread_offsets(&full[0], u8_ptr(present), n, count)
    return rc


cdef int64_t _scatter_binary(const level_t *lv, int64_t n, level_t top, const int64_t *doff, int64_t ndense,
                             int64_t *out_off, uint8_t *validity) noexcept nogil:
    cdef int64_t i, k = 0, b, j, stop, base = doff[0], v
    cdef uint8_t bits
    cdef int skip = 0
    out_off[0] = 0
    for b in range((n + 7) >> 3):
        stop = n - 8 * b
        if skip:
            skip -= 1
        elif stop >= 8:
            # runs of 8 present (their offsets) or 8 null slots (the same offset) without a branch
            # each; after a mixed group the next few go slot by slot (as in _scatter_words)
            bits = _group_bits(lv + 8 * b, top)
            if bits == 0xFF and k + 8 <= ndense:
                for j in range(8):
                    out_off[8 * b + j + 1] = doff[k + j + 1] - base
                k += 8
                validity[b] = bits
                continue
            if bits == 0:
                v = doff[k] - base
                for j in range(8):
                    out_off[8 * b + j + 1] = v
                validity[b] = 0
                continue
            skip = _SKIP_AFTER_MIXED
        if stop > 8:
            stop = 8
        bits = 0
        for j in range(stop):
            i = 8 * b + j
            if lv[i] == top:
                if k >= ndense:
                    return E_COUNT_MISMATCH
                k += 1
                bits |= 1 << j
            out_off[i + 1] = doff[k] - base
        validity[b] = bits
    if k != ndense:
        return E_COUNT_MISMATCH
    return k


def scatter_binary(const level_t[::1] levels, int max_level, const int64_t[::1] dense_offsets,
                   int64_t[::1] out_offsets, uint8_t[::1] validity):
    """As :func:`scatter_fixed` for offsets + data: the full-length offsets (empty values at null
    slots, relative to ``dense_offsets[0]``, so they index the dense data compacted) and the
    validity bitmap. The data itself is not copied (nor read)."""
    cdef int64_t n = levels.shape[0], rc
    if dense_offsets.shape[0] < 1 or out_offsets.shape[0] < n + 1 or validity.shape[0] < (n + 7) // 8:
        raise ValueError("levels.scatter_binary: invalid arguments")
    cdef const level_t *lv = &levels[0] if n else NULL
    with nogil:
        rc = _scatter_binary(lv, n, <level_t>max_level, &dense_offsets[0], dense_offsets.shape[0] - 1,
                             &out_offsets[0], u8_mut(validity))
    return rc


cdef int64_t _count_slots(const level_t *defs, const level_t *reps, int64_t n, int ctx_def,
                          int ctx_rep) noexcept nogil:
    cdef int64_t i, c = 0
    for i in range(n):
        c += (reps[i] <= ctx_rep) & (defs[i] >= ctx_def)
    return c


def count_slots(const level_t[::1] defs, const level_t[::1] reps, int ctx_def, int ctx_rep):
    """The slots of a list: entries with ``reps <= ctx_rep`` and ``defs >= ctx_def``."""
    cdef int64_t n = defs.shape[0], rc
    if reps.shape[0] != n:
        raise ValueError("levels.count_slots: levels of different lengths")
    if n == 0:
        return 0
    with nogil:
        rc = _count_slots(&defs[0], &reps[0], n, ctx_def, ctx_rep)
    return rc


cdef int64_t _list_offsets(const level_t *defs, const level_t *reps, int64_t n, int ctx_def, int ctx_rep,
                           int elem_def, int64_t *out, int64_t cap) noexcept nogil:
    # branch-free per entry (slot starts and elements are unpredictable): out[k] is rewritten
    # until a slot starts there; only the rare errors branch
    cdef int64_t i, k = 0, count = 0
    cdef int s, e
    for i in range(n):
        s = (reps[i] <= ctx_rep) & (defs[i] >= ctx_def)  # a slot starts: its elements start here
        if k >= cap:  # more slots than counted (the levels changed since)
            return E_COUNT_MISMATCH
        out[k] = count
        k += s
        e = defs[i] >= elem_def
        if e & (k == 0):
            return E_ELEMENTS_BEFORE_FIRST_SLOT
        count += e
    if k >= cap:
        return E_COUNT_MISMATCH
    out[k] = count
    return k


def list_offsets(const level_t[::1] defs, const level_t[::1] reps, int ctx_def, int ctx_rep, int elem_def,
                 int64_t[::1] out):
    """Offsets (``count_slots + 1``, into ``out``) of the innermost list level whose slots start at
    the entries with ``reps <= ctx_rep`` and ``defs >= ctx_def``; the elements are the entries
    with ``defs >= elem_def``. Returns the number of slots, or ELEMENTS_BEFORE_FIRST_SLOT."""
    cdef int64_t n = defs.shape[0], rc
    if reps.shape[0] != n or out.shape[0] < 1:
        raise ValueError("levels.list_offsets: invalid arguments")
    if n == 0:
        out[0] = 0
        return 0
    with nogil:
        rc = _list_offsets(&defs[0], &reps[0], n, ctx_def, ctx_rep, elem_def, &out[0], out.shape[0])
    return rc


# -- a nested chunk's levels checked in one pass -------------------------------------------------

cdef void _check_chunk(const level_t *defs, const level_t *reps, int64_t n, level_t max_def, level_t max_rep,
                       const int64_t *rep_def, int64_t *info) noexcept nogil:
    # passes the compiler vectorizes (levels of one width, no gather, no branch per entry): ranges
    # and records, then one pass per repetition level k; errors are rare and reported after
    cdef int64_t i, k, records = 0
    cdef int bad_def = 0, bad_rep = 0, bad_cont = 0
    cdef level_t d, r, lo, t, kk
    for i in range(n):
        d = defs[i]
        r = reps[i]
        bad_def |= (d < 0) | (d > max_def)
        bad_rep |= (r < 0) | (r > max_rep)
        records += r == 0
    if not (bad_def | bad_rep):  # a range error is reported first: the rest is not needed then
        for k in range(1, max_rep + 1):
            # an entry repeating at level k, and the entry before it, must reach that list's elements
            # (entry 0 repeats at no level: the caller checks that first)
            t = <level_t>rep_def[k]
            kk = <level_t>k
            for i in range(1, n):
                lo = defs[i] if defs[i] < defs[i - 1] else defs[i - 1]
                bad_cont |= (reps[i] == kk) & (lo < t)
    info[0] = records
    info[1] = bad_def
    info[2] = bad_rep
    info[3] = bad_cont


def check_chunk(const level_t[::1] defs, const level_t[::1] reps, int64_t max_def, int64_t max_rep,
                const int64_t[::1] rep_def not None, int64_t[::1] info not None):
    """A nested chunk's definition and repetition levels (same length, n >= 1) checked:
    ``info`` gets the number of records (entries with rep 0), then three flags: a definition
    level outside 0..max_def, a repetition level outside 0..max_rep, and (only without those)
    an entry i >= 1 repeating at level k >= 1 whose definition level or its predecessor's is
    below ``rep_def[k]`` (the level at which that list holds an element). ``max_def``,
    ``max_rep`` and ``rep_def`` (``max_rep + 1`` levels, the first 0, none above ``max_def``)
    must fit the levels' type."""
    cdef int64_t n = defs.shape[0], k, top
    if level_t is int8_t:
        top = 127
    elif level_t is int16_t:
        top = 32767
    elif level_t is int32_t:
        top = 2147483647
    else:
        top = 1
    if reps.shape[0] != n or n == 0 or max_rep < 0 or rep_def.shape[0] != max_rep + 1 or rep_def[0] != 0 \
            or info.shape[0] < 4 or not 0 <= max_def <= top or max_rep > top:
        raise ValueError("levels.check_chunk: invalid arguments")
    for k in range(max_rep + 1):
        if not 0 <= rep_def[k] <= max_def:
            raise ValueError("levels.check_chunk: invalid arguments")
    with nogil:
        _check_chunk(&defs[0], &reps[0], n, <level_t>max_def, <level_t>max_rep, &rep_def[0], &info[0])
