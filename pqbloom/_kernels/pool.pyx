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

Blocks are rounded to 2 MiB: private anonymous mappings where the system has them (Linux, macOS,
the BSDs), advised as huge pages where it has those (Linux), and plain ``malloc`` blocks elsewhere
(Windows): ``MMAP`` says which. Everything runs under the GIL (takes and gives back are a few list
operations). :mod:`pqbloom.memory.pool` configures the pool and schedules the trims.
"""

from time import monotonic

from cpython.buffer cimport PyBuffer_FillInfo
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
    static void *pqb_pool_map(size_t n) {
        void *p = mmap(NULL, n, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (p == MAP_FAILED) return NULL;
    #if defined(MADV_HUGEPAGE)
        madvise(p, n, MADV_HUGEPAGE);  /* advice only: its failure changes nothing */
    #endif
        return p;
    }
    static void pqb_pool_unmap(void *p, size_t n) { munmap(p, n); }
    #else
    /* no anonymous mappings (Windows): plain allocations, kept and reused the same way */
    #define PQB_POOL_MMAP 0
    static void *pqb_pool_map(size_t n) { return malloc(n); }
    static void pqb_pool_unmap(void *p, size_t n) { (void)n; free(p); }
    #endif
    """
    int PQB_POOL_MMAP
    void *pool_map "pqb_pool_map"(size_t n) noexcept
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

DEF ALIGN = 2 * 1024 * 1024

# the free list: (capacity, address, time freed), at most a few dozen blocks
cdef list _free = []
cdef Py_ssize_t _free_bytes = 0
cdef Py_ssize_t _limit = 0
cdef double _decay = 10.0
cdef Py_ssize_t _mapped = 0
cdef object _on_free = None  # called (no arguments) when a block joins the free list


cdef void _unmap(uintptr_t addr, Py_ssize_t cap):
    global _mapped
    pool_unmap(<void *>addr, cap)
    _mapped -= cap


cdef void _trim(double now, Py_ssize_t keep):
    """Unmap blocks freed more than ``decay`` seconds ago, then the oldest until at most ``keep``
    bytes are free."""
    global _free_bytes
    cdef Py_ssize_t i = 0
    while i < len(_free):
        cap, addr, t = _free[i]
        if now - t > _decay:
            _free.pop(i)
            _free_bytes -= cap
            _unmap(addr, cap)
        else:
            i += 1
    while _free_bytes > keep and _free:
        cap, addr, t = _free.pop(0)
        _free_bytes -= cap
        _unmap(addr, cap)


cdef class PoolBuffer:
    """``size`` writable bytes (uninitialized, like ``numpy.empty``) in a pooled block."""
    cdef uintptr_t addr
    cdef Py_ssize_t size
    cdef Py_ssize_t cap

    def __cinit__(self, Py_ssize_t size):
        global _free_bytes, _mapped
        cdef Py_ssize_t cap = (max(size, 1) + ALIGN - 1) // ALIGN * ALIGN
        cdef Py_ssize_t i, best = -1
        cdef void *p
        self.addr = 0
        self.size = size
        _trim(_now(), _limit)
        for i in range(len(_free)):
            c = _free[i][0]
            if cap <= c <= cap + cap // 4 and (best < 0 or c < _free[best][0]):
                best = i
        if best >= 0:
            c, a, _ = _free.pop(best)
            _free_bytes -= c
            self.addr, self.cap = a, c
            PyTraceMalloc_Track(TRACE_DOMAIN, self.addr, size)
            return
        p = pool_map(cap)
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
        global _free_bytes
        if not self.addr:
            return
        addr, self.addr = self.addr, 0
        PyTraceMalloc_Untrack(TRACE_DOMAIN, addr)
        # beyond the limit the block goes back to the system at once; the free list is only
        # appended to here (a collection may free a block while a take walks the list)
        if _free is None or _free_bytes + self.cap > _limit:  # (None: the module is being torn down)
            _unmap(addr, self.cap)
            return
        _free.append((self.cap, addr, _now()))
        _free_bytes += self.cap
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
    return _mapped, _free_bytes, len(_free)
