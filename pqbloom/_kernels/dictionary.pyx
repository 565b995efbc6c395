# cython: language_level=3, boundscheck=False, wraparound=False, initializedcheck=False, cdivision=True
"""Dictionary building by hashing (writer side): distinct values in order of first appearance.

One pass over the values with an open-addressing hash table (linear probing, at most half full,
doubled as it fills): each value gets the index of its dictionary entry, and a new value's position
is recorded in ``firsts`` (so entries are numbered in order of first appearance, as parquet-java
and Arrow write them). Values are compared exactly: fixed-width values by their bit pattern (a
float's -0.0 and +0.0 are two entries, NaNs of different payloads are distinct), byte strings by
length and bytes once their hashes agree. The hash is internal (never stored in a file).

The build stops as soon as the dictionary passes a limit (``max_count`` entries, or for byte
strings ``max_bytes`` of PLAIN encoding: 4 + length per entry), so a column that will not be
dictionary-encoded costs only the values read until then.

:func:`count_distinct` counts the distinct 64-bit values of an array (Bloom filter hashes) with
the same table.

Every index is checked: offsets first (:func:`check_offsets`), then each value lies inside the data;
the output arrays are sized by the caller and checked here.
"""

from libc.stdint cimport INT64_MAX, int32_t, int64_t, uint8_t, uint16_t, uint32_t, uint64_t
from libc.stdlib cimport calloc, free
from libc.string cimport memcmp, memcpy

from pqbloom._kernels._util cimport check_offsets, load_le64, u8_ptr

# negative returns; the Python wrapper turns them into None (a limit) or an exception
TOO_MANY = -1  # more distinct values than max_count
TOO_BIG = -2  # the distinct byte strings' PLAIN encoding passes max_bytes
BAD_OFFSETS = -3  # offsets decrease or reach outside the data
NO_MEMORY = -4  # the hash table could not be allocated

cdef enum:
    E_TOO_MANY = -1
    E_TOO_BIG = -2
    E_BAD_OFFSETS = -3
    E_NO_MEMORY = -4

cdef extern from *:
    """
    #include <stdint.h>
    /* splitmix64's finalizer: every input bit moves every output bit */
    static inline uint64_t pqb_dict_mix(uint64_t x) {
        x ^= x >> 30;
        x *= 0xBF58476D1CE4E5B9ULL;
        x ^= x >> 27;
        x *= 0x94D049BB133111EBULL;
        x ^= x >> 31;
        return x;
    }
    /* One 8-byte word into a running hash. */
    static inline uint64_t pqb_dict_step(uint64_t h, uint64_t w) {
        h = (h ^ w) * 0x9E3779B97F4A7C15ULL;
        return h ^ (h >> 29);
    }
    """
    uint64_t mix "pqb_dict_mix"(uint64_t x) noexcept nogil
    uint64_t step "pqb_dict_step"(uint64_t h, uint64_t w) noexcept nogil

ctypedef fused key_t:
    uint8_t
    uint16_t
    uint32_t
    uint64_t

cdef struct Slot:
    uint64_t key  # the value (fixed width) or its hash (byte strings)
    int64_t id  # dictionary entry + 1; 0: an empty slot

cdef struct Table:
    Slot *slots
    uint64_t mask  # capacity - 1 (a power of two)


cdef inline uint64_t hash_bytes(const uint8_t *p, int64_t n, int64_t room) noexcept nogil:
    """Hash of the ``n`` bytes at ``p``, of which ``room`` >= n are readable (a last partial word is
    loaded whole and masked when the bytes after the value are readable, else copied)."""
    cdef uint64_t h = mix(<uint64_t>n + 0x9E3779B97F4A7C15ULL)
    cdef uint64_t w
    cdef uint8_t tail[8]
    cdef int64_t i = 0, r
    while i + 8 <= n:
        h = step(h, load_le64(p + i))
        i += 8
    r = n - i
    if r:
        if room - i >= 8:
            w = load_le64(p + i) & (0xFFFFFFFFFFFFFFFFULL >> (64 - 8 * r))
        else:
            tail[0] = tail[1] = tail[2] = tail[3] = tail[4] = tail[5] = tail[6] = tail[7] = 0
            memcpy(tail, p + i, <size_t>r)
            w = load_le64(tail)
        h = step(h, w)
    return mix(h)


cdef int table_init(Table *t, int64_t expected) noexcept nogil:
    """A table for about ``expected`` entries to begin with (it grows): 0, or -1 without memory."""
    cdef uint64_t cap = 16
    while cap < 2 * <uint64_t>expected and cap < 1024:
        cap <<= 1
    t.slots = <Slot *>calloc(<size_t>cap, sizeof(Slot))
    t.mask = cap - 1
    return 0 if t.slots != NULL else -1


cdef int table_grow(Table *t, bint fixed) noexcept nogil:
    """Double the capacity, re-placing every entry: 0, or -1 without memory (the table is kept)."""
    cdef uint64_t cap = (t.mask + 1) * 2, i, j, h
    cdef Slot *new = <Slot *>calloc(<size_t>cap, sizeof(Slot))
    if new == NULL:
        return -1
    for i in range(t.mask + 1):
        if t.slots[i].id:
            h = mix(t.slots[i].key) if fixed else t.slots[i].key
            j = h & (cap - 1)
            while new[j].id:
                j = (j + 1) & (cap - 1)
            new[j] = t.slots[i]
    free(t.slots)
    t.slots = new
    t.mask = cap - 1
    return 0


cdef int64_t _build_fixed(const key_t *keys, int64_t n, int64_t max_count, int32_t *codes,
                          int64_t *firsts) noexcept nogil:
    """Codes of ``keys[0..n)`` and the first position of each distinct key; the count, or an error."""
    cdef Table t
    cdef int64_t i, count = 0, code = -1
    cdef uint64_t k, prev = 0, j
    cdef Slot *s
    if n == 0:
        return 0
    if table_init(&t, n if n < max_count else max_count):
        return E_NO_MEMORY
    for i in range(n):
        k = keys[i]
        if k == prev and code >= 0:  # a run of one value (sorted or clustered columns)
            codes[i] = <int32_t>code
            continue
        j = mix(k) & t.mask
        while True:
            s = &t.slots[j]
            if s.id == 0:
                if count >= max_count:
                    free(t.slots)
                    return E_TOO_MANY
                s.key = k
                s.id = count + 1
                firsts[count] = i
                code = count
                count += 1
                if 2 * <uint64_t>count > t.mask and table_grow(&t, True):
                    free(t.slots)
                    return E_NO_MEMORY
                break
            if s.key == k:
                code = s.id - 1
                break
            j = (j + 1) & t.mask
        codes[i] = <int32_t>code
        prev = k
    free(t.slots)
    return count


cdef int64_t _build_bytes(const int64_t *off, int64_t width, const uint8_t *data, int64_t size, int64_t n,
                          int64_t max_count, int64_t max_bytes, int32_t *codes, int64_t *firsts) noexcept nogil:
    """:func:`_build_fixed` for byte strings: ``off[0..n]`` their offsets into ``data`` (checked), or
    with ``off`` NULL ``n`` rows of ``width`` bytes (``n * width <= size``, checked by the caller)."""
    cdef Table t
    cdef int64_t i, count = 0, code, start, ln, fstart, flen, total = 0, first
    cdef uint64_t h, j
    cdef Slot *s
    if n == 0:
        return 0
    if off != NULL and check_offsets(off, n, size):
        return E_BAD_OFFSETS
    if table_init(&t, n if n < max_count else max_count):
        return E_NO_MEMORY
    for i in range(n):
        if off != NULL:
            start = off[i]
            ln = off[i + 1] - start
        else:
            start = i * width
            ln = width
        h = hash_bytes(data + start, ln, size - start)
        j = h & t.mask
        while True:
            s = &t.slots[j]
            if s.id == 0:
                if count >= max_count:
                    free(t.slots)
                    return E_TOO_MANY
                total += 4 + ln
                if total > max_bytes:
                    free(t.slots)
                    return E_TOO_BIG
                s.key = h
                s.id = count + 1
                firsts[count] = i
                code = count
                count += 1
                if 2 * <uint64_t>count > t.mask and table_grow(&t, False):
                    free(t.slots)
                    return E_NO_MEMORY
                break
            if s.key == h:
                first = firsts[s.id - 1]
                if off != NULL:
                    fstart = off[first]
                    flen = off[first + 1] - fstart
                else:
                    fstart = first * width
                    flen = width
                if flen == ln and (ln == 0 or memcmp(data + fstart, data + start, <size_t>ln) == 0):
                    code = s.id - 1
                    break
            j = (j + 1) & t.mask
        codes[i] = <int32_t>code
    free(t.slots)
    return count


def _check_out(int64_t n, int64_t max_count, const int32_t[::1] codes, const int64_t[::1] firsts):
    if n < 0 or max_count < 0 or codes.shape[0] < n or firsts.shape[0] < (n if n < max_count else max_count):
        raise ValueError("dictionary: output arrays too small")


def build_fixed(const key_t[::1] keys, int64_t max_count, int32_t[::1] codes, int64_t[::1] firsts):
    """Fixed-width values (as unsigned integers of their width): the number of distinct values,
    ``codes[i]`` each value's entry and ``firsts[j]`` entry j's first position; or TOO_MANY (more than
    ``max_count``) or NO_MEMORY. ``codes`` holds n values, ``firsts`` min(n, max_count)."""
    cdef int64_t n = keys.shape[0], rc
    _check_out(n, max_count, codes, firsts)
    if n == 0:
        return 0
    with nogil:
        rc = _build_fixed(&keys[0], n, max_count, &codes[0], &firsts[0] if firsts.shape[0] else NULL)
    return rc


def build_binary(const int64_t[::1] offsets, const uint8_t[::1] data, int64_t max_count, int64_t max_bytes,
                 int32_t[::1] codes, int64_t[::1] firsts):
    """:func:`build_fixed` for byte strings (offsets + data): also TOO_BIG (the distinct values' 4 +
    length bytes pass ``max_bytes``) or BAD_OFFSETS."""
    cdef int64_t n = offsets.shape[0] - 1, rc
    if n < 0:
        raise ValueError("dictionary: no offsets")
    _check_out(n, max_count, codes, firsts)
    if n == 0:
        return 0
    with nogil:
        rc = _build_bytes(&offsets[0], 0, u8_ptr(data), data.shape[0], n, max_count, max_bytes, &codes[0],
                          &firsts[0] if firsts.shape[0] else NULL)
    return rc


def build_rows(const uint8_t[::1] data, int64_t width, int64_t max_count, int32_t[::1] codes, int64_t[::1] firsts):
    """:func:`build_fixed` for rows of ``width`` bytes (fixed-length byte arrays, INT96), all of ``data``."""
    cdef int64_t n, rc
    if width <= 0 or data.shape[0] % width:
        raise ValueError("dictionary: rows do not divide the data")
    n = data.shape[0] // width
    _check_out(n, max_count, codes, firsts)
    if n == 0:
        return 0
    with nogil:
        rc = _build_bytes(NULL, width, &data[0], data.shape[0], n, max_count, INT64_MAX, &codes[0],
                          &firsts[0] if firsts.shape[0] else NULL)
    return rc


cdef int64_t _count_distinct(const uint64_t *keys, int64_t n) noexcept nogil:
    """Distinct values of ``keys[0..n)`` (n > 0). The mixed keys (a bijection of the keys) are first
    split by their top bits into buckets of a few thousand, each then counted in a small table that
    stays in cache: three passes in order and none at random over a table of the whole column."""
    cdef int bits = 0
    cdef int64_t i, b, nb, count = 0, largest = 0, lo, hi, zero
    cdef uint64_t m, j, cap, mask
    cdef int64_t *cursor
    cdef uint64_t *parted
    cdef uint64_t *table
    while (n >> bits) > 4096 and bits < 16:
        bits += 1
    nb = <int64_t>1 << bits
    cursor = <int64_t *>calloc(<size_t>(nb + 1), sizeof(int64_t))
    parted = <uint64_t *>calloc(<size_t>n, sizeof(uint64_t))
    if cursor == NULL or parted == NULL:
        free(cursor)
        free(parted)
        return E_NO_MEMORY
    for i in range(n):
        b = <int64_t>(mix(keys[i]) >> (64 - bits)) if bits else 0
        cursor[b + 1] += 1
    for b in range(nb):
        if cursor[b + 1] > largest:
            largest = cursor[b + 1]
        cursor[b + 1] += cursor[b]
    for i in range(n):
        m = mix(keys[i])
        b = <int64_t>(m >> (64 - bits)) if bits else 0
        parted[cursor[b]] = m
        cursor[b] += 1
    cap = 16
    while cap < 2 * <uint64_t>largest:
        cap <<= 1
    table = <uint64_t *>calloc(<size_t>cap, sizeof(uint64_t))
    if table == NULL:
        free(cursor)
        free(parted)
        return E_NO_MEMORY
    for b in range(nb):
        # after the scatter, cursor[b] is the end of bucket b and cursor[b - 1] its start
        lo = cursor[b - 1] if b else 0
        hi = cursor[b]
        mask = 15
        while mask + 1 < 2 * <uint64_t>(hi - lo):
            mask = mask * 2 + 1
        zero = 0  # 0 marks an empty slot: a key that mixes to 0 is counted apart
        for i in range(lo, hi):
            m = parted[i]
            if m == 0:
                zero = 1
                continue
            j = m & mask
            while table[j] != 0 and table[j] != m:
                j = (j + 1) & mask
            if table[j] == 0:
                table[j] = m
                count += 1
        count += zero
        for j in range(mask + 1):
            table[j] = 0
    free(table)
    free(cursor)
    free(parted)
    return count


def count_distinct(const uint64_t[::1] keys):
    """The number of distinct values of ``keys``, or NO_MEMORY."""
    cdef int64_t n = keys.shape[0], rc
    if n == 0:
        return 0
    with nogil:
        rc = _count_distinct(&keys[0], n)
    return rc
