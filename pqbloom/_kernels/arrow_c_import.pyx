# cython: language_level=3, boundscheck=True, wraparound=False
"""The Arrow C Data Interface and C Stream Interface, imported.

:func:`schema_of` reads an ``arrow_schema`` PyCapsule into a schema description (as
:mod:`pqbloom._kernels.arrow_c` takes them; copied: nothing of the struct is kept); :func:`array_from_capsule`
moves an ``ArrowArray`` out of its capsule into an :class:`ImportedArray`, which releases it when the last
object that needs its memory goes (its child nodes, and the :class:`ForeignBuffer` objects of its buffers,
hold it); :func:`stream_from_capsule` moves an ``ArrowArrayStream`` out into a :class:`StreamReader`. The
sizes of buffers are the caller's to work out from the type (the interface does not carry them); counts,
depths and indices are checked here. The producer's callbacks run without the GIL.

No platform calls: malloc/free and the CPython API only.
"""

from cpython.buffer cimport PyBuffer_FillInfo
from cpython.pycapsule cimport PyCapsule_GetPointer, PyCapsule_IsValid
from libc.stdint cimport int32_t, int64_t
from libc.stdlib cimport free, malloc
from libc.string cimport memcpy, memset, strlen

from pqbloom._kernels.arrow_c_abi cimport (ARROWC_MAX_DEPTH, ARROWC_MAX_FANOUT, ArrowArray, ArrowArrayStream,
                                           ArrowSchema)

from pqbloom._kernels.arrow_c import ArrowCError

MAX_DEPTH = ARROWC_MAX_DEPTH
MAX_FANOUT = ARROWC_MAX_FANOUT


cdef bytes _metadata_bytes(const char* m):
    """The C interface's key-value metadata, as its bytes (the count, then each length and value)."""
    cdef int32_t n, k
    cdef const char* p = m
    cdef int32_t i, j
    if m == NULL:
        return None
    memcpy(&n, p, 4)
    if n < 0 or n > ARROWC_MAX_FANOUT:
        raise ArrowCError(f"schema metadata with {n} entries")
    p += 4
    for i in range(n):
        for j in range(2):
            memcpy(&k, p, 4)
            if k < 0:
                raise ArrowCError(f"schema metadata entry of length {k}")
            p += 4 + k
    return m[:p - m]


cdef object _read_schema(const ArrowSchema* s, int depth):
    if depth > ARROWC_MAX_DEPTH:
        raise ArrowCError(f"schema nested more than {MAX_DEPTH} levels deep")
    if s == NULL or s.release == NULL:
        raise ArrowCError("a released or missing ArrowSchema")
    if s.format == NULL:
        raise ArrowCError("an ArrowSchema without a format")
    if s.n_children < 0 or s.n_children > ARROWC_MAX_FANOUT or (s.n_children and s.children == NULL):
        raise ArrowCError(f"an ArrowSchema with {s.n_children} children")
    cdef int64_t i
    kids = []
    for i in range(s.n_children):
        kids.append(_read_schema(s.children[i], depth + 1))
    dictionary = _read_schema(s.dictionary, depth + 1) if s.dictionary != NULL else None
    name = s.name[:strlen(s.name)].decode("utf-8", "replace") if s.name != NULL else ""
    return (s.format[:strlen(s.format)].decode("utf-8", "replace"), name, _metadata_bytes(s.metadata),
            s.flags, tuple(kids), dictionary)


def schema_of(capsule):
    """The description of the schema in an ``arrow_schema`` PyCapsule (the struct stays the capsule's)."""
    if not PyCapsule_IsValid(capsule, "arrow_schema"):
        raise ArrowCError("not an arrow_schema PyCapsule")
    return _read_schema(<ArrowSchema*>PyCapsule_GetPointer(capsule, "arrow_schema"), 0)


cdef class _ArrayRoot:
    """Owns an imported ``ArrowArray`` (moved out of its producer's struct) and releases it when it goes."""

    cdef ArrowArray* root

    def __dealloc__(self):
        if self.root != NULL:
            if self.root.release != NULL:
                with nogil:
                    self.root.release(self.root)
            free(self.root)
            self.root = NULL


cdef class ForeignBuffer:
    """Read-only bytes of an imported array's buffer (``len(buf)`` bytes); keeps the array alive."""

    cdef _ArrayRoot owner
    cdef const void* ptr
    cdef Py_ssize_t size

    def __len__(self):
        return self.size

    def __getbuffer__(self, Py_buffer* view, int flags):
        PyBuffer_FillInfo(view, self, <void*>self.ptr, self.size, 1, flags)

    def __releasebuffer__(self, Py_buffer* view):
        pass


cdef class ImportedArray:
    """One node of an imported array: its length, offset, null count, buffers and children."""

    cdef _ArrayRoot owner
    cdef const ArrowArray* node
    cdef int depth

    @property
    def length(self):
        return self.node.length

    @property
    def offset(self):
        return self.node.offset

    @property
    def null_count(self):
        return self.node.null_count

    @property
    def n_buffers(self):
        return self.node.n_buffers

    @property
    def n_children(self):
        return self.node.n_children

    def has_buffer(self, Py_ssize_t i):
        """Whether buffer ``i`` is there (a null pointer is not)."""
        if i < 0 or i >= self.node.n_buffers:
            raise ArrowCError(f"buffer {i} of an array with {self.node.n_buffers}")
        return self.node.buffers[i] != NULL

    def buffer(self, Py_ssize_t i, Py_ssize_t nbytes):
        """Buffer ``i`` as a :class:`ForeignBuffer` of ``nbytes`` (which the caller works out from the type)."""
        if i < 0 or i >= self.node.n_buffers:
            raise ArrowCError(f"buffer {i} of an array with {self.node.n_buffers}")
        if nbytes < 0:
            raise ArrowCError(f"buffer {i} of {nbytes} bytes")
        cdef const void* ptr = self.node.buffers[i]
        if ptr == NULL and nbytes > 0:
            raise ArrowCError(f"buffer {i} is missing ({nbytes} bytes expected)")
        cdef ForeignBuffer buf = ForeignBuffer.__new__(ForeignBuffer)
        buf.owner = self.owner
        buf.ptr = ptr if ptr != NULL else <const void*>b""
        buf.size = nbytes
        return buf

    def child(self, Py_ssize_t i):
        if i < 0 or i >= self.node.n_children:
            raise ArrowCError(f"child {i} of an array with {self.node.n_children}")
        return _node(self.owner, self.node.children[i], self.depth + 1)

    def dictionary(self):
        """The dictionary node, or None."""
        if self.node.dictionary == NULL:
            return None
        return _node(self.owner, self.node.dictionary, self.depth + 1)


cdef ImportedArray _node(_ArrayRoot owner, const ArrowArray* a, int depth):
    if depth > ARROWC_MAX_DEPTH:
        raise ArrowCError(f"array nested more than {MAX_DEPTH} levels deep")
    if a == NULL or a.release == NULL:
        raise ArrowCError("a released or missing ArrowArray")
    if a.length < 0 or a.offset < 0 or a.null_count < -1 or a.n_buffers < 0 or a.n_children < 0 \
            or a.n_buffers > ARROWC_MAX_FANOUT or a.n_children > ARROWC_MAX_FANOUT \
            or (a.n_buffers and a.buffers == NULL) or (a.n_children and a.children == NULL):
        raise ArrowCError(f"an ArrowArray of length {a.length}, offset {a.offset}, {a.n_buffers} buffers, "
                          f"{a.n_children} children")
    cdef ImportedArray out = ImportedArray.__new__(ImportedArray)
    out.owner = owner
    out.node = a
    out.depth = depth
    return out


cdef ImportedArray _adopt(ArrowArray* src):
    """Move ``src`` into a new root (``src`` is left released)."""
    cdef _ArrayRoot root = _ArrayRoot.__new__(_ArrayRoot)
    root.root = <ArrowArray*>malloc(sizeof(ArrowArray))
    if root.root == NULL:
        raise MemoryError()
    memcpy(root.root, src, sizeof(ArrowArray))
    src.release = NULL
    return _node(root, root.root, 0)


def array_from_capsule(capsule):
    """Move the array of an ``arrow_array`` PyCapsule into an :class:`ImportedArray`."""
    if not PyCapsule_IsValid(capsule, "arrow_array"):
        raise ArrowCError("not an arrow_array PyCapsule")
    cdef ArrowArray* a = <ArrowArray*>PyCapsule_GetPointer(capsule, "arrow_array")
    if a.release == NULL:
        raise ArrowCError("the arrow_array PyCapsule holds a released array")
    return _adopt(a)


cdef class StreamReader:
    """An imported ``ArrowArrayStream``: :meth:`schema`, then :meth:`next` until it gives None."""

    cdef ArrowArrayStream* stream

    def __dealloc__(self):
        if self.stream != NULL:
            if self.stream.release != NULL:
                with nogil:
                    self.stream.release(self.stream)
            free(self.stream)
            self.stream = NULL

    cdef str _error(self, int rc):
        cdef const char* msg = NULL
        if self.stream.get_last_error != NULL:
            msg = self.stream.get_last_error(self.stream)
        text = msg[:strlen(msg)].decode("utf-8", "replace") if msg != NULL else ""
        return f"the Arrow stream failed (error {rc}){': ' + text if text else ''}"

    def schema(self):
        """The stream's schema, as a description."""
        cdef ArrowSchema s
        cdef int rc
        if self.stream == NULL or self.stream.release == NULL:
            raise ArrowCError("the stream is released")
        memset(&s, 0, sizeof(ArrowSchema))
        with nogil:
            rc = self.stream.get_schema(self.stream, &s)
        if rc != 0:
            raise ArrowCError(self._error(rc))
        try:
            return _read_schema(&s, 0)
        finally:
            if s.release != NULL:
                with nogil:
                    s.release(&s)

    def next(self):
        """The next array (an :class:`ImportedArray`), or None at the end (the stream is then released)."""
        cdef ArrowArray a
        cdef int rc
        if self.stream == NULL or self.stream.release == NULL:
            return None
        memset(&a, 0, sizeof(ArrowArray))
        with nogil:
            rc = self.stream.get_next(self.stream, &a)
        if rc != 0:
            raise ArrowCError(self._error(rc))
        if a.release == NULL:
            with nogil:
                self.stream.release(self.stream)
            return None
        try:
            return _adopt(&a)
        except BaseException:
            if a.release != NULL:
                with nogil:
                    a.release(&a)
            raise

    def release(self):
        """Release the stream now (else when this object goes)."""
        if self.stream != NULL and self.stream.release != NULL:
            with nogil:
                self.stream.release(self.stream)


def stream_from_capsule(capsule):
    """Move the stream of an ``arrow_array_stream`` PyCapsule into a :class:`StreamReader`."""
    if not PyCapsule_IsValid(capsule, "arrow_array_stream"):
        raise ArrowCError("not an arrow_array_stream PyCapsule")
    cdef ArrowArrayStream* src = <ArrowArrayStream*>PyCapsule_GetPointer(capsule, "arrow_array_stream")
    if src.release == NULL:
        raise ArrowCError("the arrow_array_stream PyCapsule holds a released stream")
    cdef StreamReader r = StreamReader.__new__(StreamReader)
    r.stream = <ArrowArrayStream*>malloc(sizeof(ArrowArrayStream))
    if r.stream == NULL:
        raise MemoryError()
    memcpy(r.stream, src, sizeof(ArrowArrayStream))
    src.release = NULL
    return r
