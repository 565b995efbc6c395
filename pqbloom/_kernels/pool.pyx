# cython: language_level=3, boundscheck=False, wraparound=False
"""Large buffers kept for reuse after they are freed (the memory of a read's columns).

A read's columns are hundreds of megabytes of fresh memory. glibc gives each such buffer its own
mapping and unmaps it when the array is freed, so the next read faults every page in again, and on a
virtual machine whose host takes freed pages back that costs more than decoding (figures in
docs/benchmarks.md, "Memory"). pyarrow keeps freed memory in its own allocator; this
module does the same for the buffers pqbloom hands out: a :class:`PoolBuffer` exports a block by
the buffer protocol, and when the last reference to it goes (the array, its views, an Arrow buffer
made from it), the block returns to a free list instead of to the system. A block is taken again by
a request it fits with at most a quarter to spare; blocks unused for ``decay`` seconds are
unmapped, and so is a block freed while ``limit`` bytes are already free.

Blocks from ``HUGE`` (4 MiB) up are rounded to 2 MiB and advised as huge pages where the system has
them (Linux); smaller ones (a wide table's columns: hundreds of blocks of under a megabyte per read)
are rounded to 64 KiB, so a block holds at most a quarter more than asked for. Blocks are private
anonymous mappings where the system has them (Linux, macOS, the BSDs) and plain ``malloc`` blocks
elsewhere (Windows): ``MMAP`` says which. The free blocks are kept by capacity (a dict of lists, oldest
first), so a take looks at the distinct capacities, not at every free block. Everything runs under the
GIL (takes and gives back are a few dict and list operations). :mod:`pqbloom.memory.pool` configures
the pool and schedules the trims.
"""

from time import monotonic

from cpython.buffer cimport PyBuffer_FillInfo
from cpython.pyport cimport PY_SSIZE_T_MAX
from libc.stdint cimport uintptr_t

cdef extern from *:
    """
    #include <stdlib.h>
    #if defined(__unix__) || defined(__APPLE__)
    #include <sys/mman.h>
    #if !defined(MAP_ANONYMOUS) && defined(MAP_ANON)
    #define MAP_ANONYMOUS MAP_ANON
    #endif
    #endif
    #if defined(MAP_ANONYMOUS) && defined(MAP_PRIVATE) && defined(MAP_FAILED)
    #define PQB_POOL_MMAP 1
    static void *pqb_pool_map(size_t n, int huge) {
        void *p = mmap(NULL, n, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (p == MAP_FAILED) return NULL;
    #if defined(MADV_HUGEPAGE)
        if (huge) madvise(p, n, MADV_HUGEPAGE);  /* advice only: its failure changes nothing */
    #else
        (void)huge;
    #endif
        return p;
    }
    static void pqb_pool_unmap(void *p, size_t n) { munmap(p, n); }
    #else
    /* no anonymous mappings (Windows): plain allocations, kept and reused the same way */
    #define PQB_POOL_MMAP 0
    static void *pqb_pool_map(size_t n, int huge) { (void)huge; return malloc(n); }
    static void pqb_pool_unmap(void *p, size_t n) { (void)n; free(p); }
    #endif
    """
    int PQB_POOL_MMAP
    void *pool_map "pqb_pool_map"(size_t n, int huge) noexcept
    void pool_unmap "pqb_pool_unmap"(void *p, size_t n) noexcept

cdef extern from "Python.h":
    int PyTraceMalloc_Track(unsigned int domain, uintptr_t ptr, size_t size)
    int PyTraceMalloc_Untrack(unsigned int domain, uintptr_t ptr)

# tracemalloc sees a buffer while it is handed out, as it sees numpy's (which traces in its own domain)
DEF TRACE_DOMAIN = 0x70716271


#: the blocks are anonymous mappings (else malloc blocks)
MMAP = bool(PQB_POOL_MMAP)


cdef double _now():
    return monotonic()  # (portable; called once per block taken or freed, under the GIL)

DEF HUGE = 4 * 1024 * 1024       # blocks from here up: huge-page sized and advised
DEF HUGE_ALIGN = 2 * 1024 * 1024
DEF SMALL_ALIGN = 64 * 1024

# the free blocks by capacity: {capacity: [(address, time freed), ...] oldest first}
cdef dict _free = {}
cdef Py_ssize_t _free_bytes = 0
cdef Py_ssize_t _free_count = 0
cdef Py_ssize_t _limit = 0
cdef double _decay = 10.0
cdef Py_ssize_t _mapped = 0
cdef object _on_free = None  # called (no arguments) when a block joins the free list


cdef Py_ssize_t _capacity(Py_ssize_t size):
    """The block a request of ``size`` bytes gets: 64 KiB steps below HUGE, 2 MiB steps from it."""
    cdef Py_ssize_t step = HUGE_ALIGN if size >= HUGE else SMALL_ALIGN
    return (max(size, 1) + step - 1) // step * step


cdef void _unmap(uintptr_t addr, Py_ssize_t cap):
    global _mapped
    pool_unmap(<void *>addr, cap)
    _mapped -= cap


cdef void _drop(Py_ssize_t cap, list blocks, Py_ssize_t i):
    """Unmap free block ``i`` of capacity ``cap``."""
    global _free_bytes, _free_count
    addr, _ = blocks.pop(i)
    _free_bytes -= cap
    _free_count -= 1
    _unmap(addr, cap)
    if not blocks:
        del _free[cap]


cdef void _trim(double now, Py_ssize_t keep):
    """Unmap blocks freed more than ``decay`` seconds ago, then the oldest until at most ``keep``
    bytes are free."""
    cdef Py_ssize_t cap
    cdef double oldest = 0.0
    for cap in list(_free):
        blocks = _free[cap]
        while blocks and now - (<tuple>blocks[0])[1] > _decay:  # each list is oldest first
            _drop(cap, blocks, 0)
    while _free_bytes > keep and _free:
        best = None
        for c, blocks in list(_free.items()):  # (a copy: a collection may free a block meanwhile)
            if best is None or (<tuple>blocks[0])[1] < oldest:
                best, oldest = c, (<tuple>blocks[0])[1]
        _drop(best, _free[best], 0)


cdef class PoolBuffer:
    """``size`` writable bytes (uninitialized, like ``numpy.empty``) in a pooled block."""
    cdef uintptr_t addr
    cdef Py_ssize_t size
    cdef Py_ssize_t cap

    def __cinit__(self, Py_ssize_t size):
        global _free_bytes, _free_count, _mapped
        cdef Py_ssize_t cap
        cdef Py_ssize_t best = -1, c
        cdef void *p
        self.addr = 0
        self.size = size
        if size < 0 or size > PY_SSIZE_T_MAX - HUGE_ALIGN:  # (the rounding below must not overflow)
            raise MemoryError(f"cannot map {size} bytes")
        cap = _capacity(size)
        _trim(_now(), _limit)
        if cap in _free:
            best = cap
        else:  # the smallest free capacity with at most a quarter to spare
            for c in list(_free):  # (a copy, as in _trim)
                if cap <= c <= cap + cap // 4 and (best < 0 or c < best):
                    best = c
        if best >= 0:
            blocks = _free[best]
            a, _ = blocks.pop()  # the most recently freed: the likeliest to be in the caches
            if not blocks:
                del _free[best]
            _free_bytes -= best
            _free_count -= 1
            self.addr, self.cap = a, best
            PyTraceMalloc_Track(TRACE_DOMAIN, self.addr, size)
            return
        p = pool_map(cap, cap >= HUGE)
        if p == NULL:
            raise MemoryError(f"cannot map {cap} bytes")
        _mapped += cap
        self.addr, self.cap = <uintptr_t>p, cap
        PyTraceMalloc_Track(TRACE_DOMAIN, self.addr, size)

    def __getbuffer__(self, Py_buffer *view, int flags):
        PyBuffer_FillInfo(view, self, <void *>self.addr, self.size, 0, flags)

    def __releasebuffer__(self, Py_buffer *view):
        pass

    def __len__(self):
        return self.size

    def __dealloc__(self):
        global _free_bytes, _free_count
        if not self.addr:
            return
        addr, self.addr = self.addr, 0
        PyTraceMalloc_Untrack(TRACE_DOMAIN, addr)
        # beyond the limit the block goes back to the system at once; the free lists are only
        # appended to here (a collection may free a block while a take walks them)
        if _free is None or _free_bytes + self.cap > _limit:  # (None: the module is being torn down)
            _unmap(addr, self.cap)
            return
        blocks = _free.get(self.cap)
        if blocks is None:
            _free[self.cap] = blocks = []
        blocks.append((addr, _now()))
        _free_bytes += self.cap
        _free_count += 1
        if _on_free is not None:
            try:
                _on_free()
            except Exception:
                pass


def configure(Py_ssize_t limit, double decay, on_free=None):
    """Keep at most ``limit`` free bytes (0: none, every block unmapped when freed), each for at most
    ``decay`` seconds; ``on_free()`` is called when a block joins the free list (to schedule a trim)."""
    global _limit, _decay, _on_free
    _limit, _decay, _on_free = limit, decay, on_free
    _trim(_now(), _limit)


def trim(now=None):
    """Unmap the blocks freed more than ``decay`` seconds before ``now`` (a ``time.monotonic()`` time;
    None: the present, which is what the timer passes; a test passes a later one instead of waiting);
    the number of free bytes left."""
    _trim(_now() if now is None else <double>now, _limit)
    return _free_bytes


def release():
    """Unmap every free block now."""
    _trim(_now(), 0)


def stats():
    """(bytes mapped in all, bytes free in the pool, blocks free)."""
    return _mapped, _free_bytes, _free_count
