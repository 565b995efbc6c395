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

from libc.stdint cimport int8_t, int16_t, int32_t, int64_t, uint8_t
from libc.string cimport memcpy, memset

from pqbloom._kernels._util cimport u8_mut, u8_ptr

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


cdef inline void _copy_item(uint8_t *dst, const uint8_t *src, int64_t w) noexcept nogil:
    # the common sizes become single loads and stores
    if w == 8:
        memcpy(dst, src, 8)
    elif w == 4:
        memcpy(dst, src, 4)
    elif w == 2:
        memcpy(dst, src, 2)
    elif w == 1:
        dst[0] = src[0]
    else:
        memcpy(dst, src, <size_t>w)


cdef int64_t _scatter_fixed(const level_t *lv, int64_t n, level_t top, const uint8_t *src, int64_t ndense,
                            int64_t w, uint8_t *dst, uint8_t *validity) noexcept nogil:
    cdef int64_t i, k = 0, b, j, stop
    cdef uint8_t bits
    for b in range((n + 7) >> 3):  # one validity byte per 8 slots
        bits = 0
        stop = n - 8 * b
        if stop > 8:
            stop = 8
        for j in range(stop):
            i = 8 * b + j
            if lv[i] == top:
                if k >= ndense:
                    return E_COUNT_MISMATCH
                _copy_item(dst + i * w, src + k * w, w)
                k += 1
                bits |= 1 << j
            else:
                memset(dst + i * w, 0, <size_t>w)
        validity[b] = bits
    if k != ndense:
        return E_COUNT_MISMATCH
    return k


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


cdef int64_t _scatter_binary(const level_t *lv, int64_t n, level_t top, const int64_t *doff, int64_t ndense,
                             int64_t *out_off, uint8_t *validity) noexcept nogil:
    cdef int64_t i, k = 0, b, j, stop, base = doff[0]
    cdef uint8_t bits
    out_off[0] = 0
    for b in range((n + 7) >> 3):
        bits = 0
        stop = n - 8 * b
        if stop > 8:
            stop = 8
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
    cdef int64_t i, k = 0, count = 0
    for i in range(n):
        if reps[i] <= ctx_rep and defs[i] >= ctx_def:  # a slot starts: its elements start here
            if k + 1 >= cap:  # more slots than counted (the levels changed since)
                return E_COUNT_MISMATCH
            out[k] = count
            k += 1
        if defs[i] >= elem_def:
            if k == 0:
                return E_ELEMENTS_BEFORE_FIRST_SLOT
            count += 1
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
