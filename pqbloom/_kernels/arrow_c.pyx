# cython: language_level=3, boundscheck=True, wraparound=False
"""The Arrow C Data Interface and C Stream Interface, exported: the structs and the PyCapsules that carry them.

A *schema description* (nested tuples ``(format, name, metadata, flags, children, dictionary)``; ``format``
and ``name`` str, ``metadata`` the bytes of the C interface's key-value encoding or None) becomes an
``ArrowSchema``; an *array description* (``(length, null_count, offset, buffers, children, dictionary)``;
``buffers`` a tuple of objects with the buffer protocol, C-contiguous, or None) an ``ArrowArray`` whose
buffers point into those objects, which the struct keeps alive (a reference and a buffer view per buffer)
until its release callback runs; a description iterator an ``ArrowArrayStream``. Each comes back in a
PyCapsule named as the PyCapsule interface says (``arrow_schema``, ``arrow_array``, ``arrow_array_stream``),
whose destructor releases a struct nobody moved out. Release callbacks may run on any thread: they take the
GIL only to drop the Python references. :mod:`pqbloom._kernels.arrow_c_import` is the other direction.

No platform calls: malloc/free and the CPython API only.
"""

from cpython.buffer cimport PyBUF_SIMPLE, PyBuffer_Release, PyObject_GetBuffer
from cpython.pycapsule cimport PyCapsule_GetPointer, PyCapsule_New
from cpython.ref cimport Py_DECREF, Py_INCREF, PyObject
from libc.stdint cimport int64_t
from libc.stdlib cimport calloc, free, malloc
from libc.string cimport memcpy, memset

# The Arrow C stream interface reports errors as errno codes. Only these two are used: glibc, macOS
# and the MSVC runtime all define them in <errno.h> (Cython's libc.errno also declares POSIX-only names).
cdef extern from "<errno.h>":
    enum:
        EINVAL
        EIO

from pqbloom._kernels.arrow_c_abi cimport (ARROWC_MAX_DEPTH, ARROWC_MAX_FANOUT, ArrowArray, ArrowArrayStream,
                                           ArrowSchema)

MAX_DEPTH = ARROWC_MAX_DEPTH
MAX_FANOUT = ARROWC_MAX_FANOUT


class ArrowCError(ValueError):
    """A description this module cannot export, or a C struct :mod:`arrow_c_import` cannot import."""


# -- export: schemas ------------------------------------------------------------------------------------

cdef char* _cstring(bytes b) except NULL:
    """A malloc'ed NUL-terminated copy of ``b``."""
    cdef Py_ssize_t n = len(b)
    cdef char* out = <char*>malloc(n + 1)
    if out == NULL:
        raise MemoryError()
    if n:
        memcpy(out, <const char*>b, n)
    out[n] = 0
    return out


cdef void _release_schema(ArrowSchema* s) noexcept nogil:
    """Free a schema this module built: its strings, its children and dictionary (unless moved)."""
    cdef int64_t i
    if s == NULL or s.release == NULL:
        return
    if s.children != NULL:
        for i in range(s.n_children):
            if s.children[i] != NULL:
                if s.children[i].release != NULL:
                    s.children[i].release(s.children[i])
                free(s.children[i])
        free(s.children)
    if s.dictionary != NULL:
        if s.dictionary.release != NULL:
            s.dictionary.release(s.dictionary)
        free(s.dictionary)
    free(<void*>s.format)
    free(<void*>s.name)
    free(<void*>s.metadata)
    s.children = NULL
    s.dictionary = NULL
    s.format = NULL
    s.name = NULL
    s.metadata = NULL
    s.release = NULL


cdef int _fill_schema(ArrowSchema* out, object desc, int depth) except -1:
    """Build ``out`` from a schema description; on error ``out`` is left released (nothing leaks)."""
    memset(out, 0, sizeof(ArrowSchema))
    if depth > ARROWC_MAX_DEPTH:
        raise ArrowCError(f"schema nested more than {MAX_DEPTH} levels deep")
    fmt, name, metadata, flags, children, dictionary = desc
    cdef Py_ssize_t n = len(children)
    cdef Py_ssize_t i
    if n > ARROWC_MAX_FANOUT:
        raise ArrowCError(f"schema node with {n} children")
    out.release = _release_schema  # from here on, releasing frees whatever was built
    try:
        out.format = _cstring(fmt.encode("utf-8"))
        out.name = _cstring(name.encode("utf-8"))
        if metadata is not None:
            out.metadata = <const char*>malloc(len(metadata) if len(metadata) else 1)
            if out.metadata == NULL:
                raise MemoryError()
            if len(metadata):
                memcpy(<void*>out.metadata, <const char*>metadata, len(metadata))
        out.flags = flags
        if n:
            out.children = <ArrowSchema**>calloc(n, sizeof(ArrowSchema*))
            if out.children == NULL:
                raise MemoryError()
            out.n_children = n
            for i in range(n):
                out.children[i] = <ArrowSchema*>calloc(1, sizeof(ArrowSchema))
                if out.children[i] == NULL:
                    raise MemoryError()
                _fill_schema(out.children[i], children[i], depth + 1)
        if dictionary is not None:
            out.dictionary = <ArrowSchema*>calloc(1, sizeof(ArrowSchema))
            if out.dictionary == NULL:
                raise MemoryError()
            _fill_schema(out.dictionary, dictionary, depth + 1)
    except BaseException:
        _release_schema(out)
        raise
    return 0


cdef void _schema_capsule_free(object capsule) noexcept:
    cdef ArrowSchema* s = <ArrowSchema*>PyCapsule_GetPointer(capsule, "arrow_schema")
    if s == NULL:
        return
    if s.release != NULL:
        s.release(s)
    free(s)


def export_schema(desc):
    """An ``arrow_schema`` PyCapsule of a schema description."""
    cdef ArrowSchema* s = <ArrowSchema*>calloc(1, sizeof(ArrowSchema))
    if s == NULL:
        raise MemoryError()
    try:
        _fill_schema(s, desc, 0)
    except BaseException:
        free(s)
        raise
    return PyCapsule_New(s, "arrow_schema", _schema_capsule_free)


# -- export: arrays -------------------------------------------------------------------------------------

ctypedef struct ArrayPrivate:
    PyObject* keep          # the tuple of buffer objects (a reference)
    Py_buffer* views        # one per buffer
    unsigned char* held     # one per buffer: whether its view was taken
    int64_t n_views


cdef void _drop_views(ArrayPrivate* p) noexcept nogil:
    """Release the buffer views and the reference of an array's private data (takes the GIL)."""
    cdef int64_t i
    if p == NULL:
        return
    if p.views != NULL or p.keep != NULL:
        with gil:
            if p.views != NULL:
                for i in range(p.n_views):
                    if p.held != NULL and p.held[i]:
                        PyBuffer_Release(&p.views[i])
            if p.keep != NULL:
                Py_DECREF(<object>p.keep)
    free(p.views)
    free(p.held)
    free(p)


cdef void _release_array(ArrowArray* a) noexcept nogil:
    """Free an array this module built: children and dictionary (unless moved), buffer views."""
    cdef int64_t i
    if a == NULL or a.release == NULL:
        return
    if a.children != NULL:
        for i in range(a.n_children):
            if a.children[i] != NULL:
                if a.children[i].release != NULL:
                    a.children[i].release(a.children[i])
                free(a.children[i])
        free(a.children)
    if a.dictionary != NULL:
        if a.dictionary.release != NULL:
            a.dictionary.release(a.dictionary)
        free(a.dictionary)
    free(<void*>a.buffers)
    _drop_views(<ArrayPrivate*>a.private_data)
    a.children = NULL
    a.dictionary = NULL
    a.buffers = NULL
    a.private_data = NULL
    a.release = NULL


cdef int _fill_array(ArrowArray* out, object desc, int depth) except -1:
    """Build ``out`` from an array description; on error ``out`` is left released (nothing leaks)."""
    memset(out, 0, sizeof(ArrowArray))
    if depth > ARROWC_MAX_DEPTH:
        raise ArrowCError(f"array nested more than {MAX_DEPTH} levels deep")
    length, null_count, offset, buffers, children, dictionary = desc
    buffers = tuple(buffers)
    cdef Py_ssize_t nb = len(buffers)
    cdef Py_ssize_t nc = len(children)
    cdef Py_ssize_t i
    cdef ArrayPrivate* p
    if nb > ARROWC_MAX_FANOUT or nc > ARROWC_MAX_FANOUT:
        raise ArrowCError(f"array node with {nb} buffers and {nc} children")
    if length < 0 or offset < 0 or null_count < -1 or null_count > length:
        raise ArrowCError(f"array of length {length}, offset {offset}, {null_count} nulls")
    p = <ArrayPrivate*>calloc(1, sizeof(ArrayPrivate))
    if p == NULL:
        raise MemoryError()
    out.private_data = p
    out.release = _release_array
    try:
        out.length = length
        out.null_count = null_count
        out.offset = offset
        Py_INCREF(buffers)
        p.keep = <PyObject*>buffers
        if nb:
            p.views = <Py_buffer*>calloc(nb, sizeof(Py_buffer))
            p.held = <unsigned char*>calloc(nb, 1)
            out.buffers = <const void**>calloc(nb, sizeof(void*))
            if p.views == NULL or p.held == NULL or out.buffers == NULL:
                raise MemoryError()
            p.n_views = nb
            out.n_buffers = nb
            for i in range(nb):
                b = buffers[i]
                if b is None:
                    continue
                PyObject_GetBuffer(b, &p.views[i], PyBUF_SIMPLE)  # C-contiguous, or it raises
                p.held[i] = 1
                out.buffers[i] = p.views[i].buf
        if nc:
            out.children = <ArrowArray**>calloc(nc, sizeof(ArrowArray*))
            if out.children == NULL:
                raise MemoryError()
            out.n_children = nc
            for i in range(nc):
                out.children[i] = <ArrowArray*>calloc(1, sizeof(ArrowArray))
                if out.children[i] == NULL:
                    raise MemoryError()
                _fill_array(out.children[i], children[i], depth + 1)
        if dictionary is not None:
            out.dictionary = <ArrowArray*>calloc(1, sizeof(ArrowArray))
            if out.dictionary == NULL:
                raise MemoryError()
            _fill_array(out.dictionary, dictionary, depth + 1)
    except BaseException:
        _release_array(out)
        raise
    return 0


cdef void _array_capsule_free(object capsule) noexcept:
    cdef ArrowArray* a = <ArrowArray*>PyCapsule_GetPointer(capsule, "arrow_array")
    if a == NULL:
        return
    if a.release != NULL:
        a.release(a)
    free(a)


def export_array(desc):
    """An ``arrow_array`` PyCapsule of an array description (its buffers are shared, not copied)."""
    cdef ArrowArray* a = <ArrowArray*>calloc(1, sizeof(ArrowArray))
    if a == NULL:
        raise MemoryError()
    try:
        _fill_array(a, desc, 0)
    except BaseException:
        free(a)
        raise
    return PyCapsule_New(a, "arrow_array", _array_capsule_free)


# -- export: streams ------------------------------------------------------------------------------------

ctypedef struct StreamPrivate:
    PyObject* schema        # the schema description (a reference)
    PyObject* batches       # the iterator of array descriptions (a reference)
    char* error             # the last error's message (malloc'ed), or NULL


cdef void _set_error(StreamPrivate* p, object exc) noexcept:
    """Keep ``exc``'s message as the stream's last error (called with the GIL)."""
    free(p.error)
    p.error = NULL
    try:
        msg = f"{type(exc).__name__}: {exc}".encode("utf-8", "replace")
        p.error = _cstring(msg)
    except BaseException:
        p.error = NULL


cdef int _stream_get_schema(ArrowArrayStream* s, ArrowSchema* out) noexcept nogil:
    if s == NULL or s.release == NULL or out == NULL:
        return EINVAL
    cdef StreamPrivate* p = <StreamPrivate*>s.private_data
    with gil:
        try:
            _fill_schema(out, <object>p.schema, 0)
        except BaseException as exc:
            _set_error(p, exc)
            return EINVAL
    return 0


cdef int _stream_get_next(ArrowArrayStream* s, ArrowArray* out) noexcept nogil:
    if s == NULL or s.release == NULL or out == NULL:
        return EINVAL
    cdef StreamPrivate* p = <StreamPrivate*>s.private_data
    with gil:
        try:
            desc = next(<object>p.batches, None)
            if desc is None:  # the end: a released array
                memset(out, 0, sizeof(ArrowArray))
                return 0
            _fill_array(out, desc, 0)
        except BaseException as exc:
            _set_error(p, exc)
            return EIO
    return 0


cdef const char* _stream_last_error(ArrowArrayStream* s) noexcept nogil:
    if s == NULL or s.release == NULL:
        return NULL
    return (<StreamPrivate*>s.private_data).error


cdef void _release_stream(ArrowArrayStream* s) noexcept nogil:
    cdef StreamPrivate* p
    if s == NULL or s.release == NULL:
        return
    p = <StreamPrivate*>s.private_data
    if p != NULL:
        with gil:
            if p.schema != NULL:
                Py_DECREF(<object>p.schema)
            if p.batches != NULL:
                Py_DECREF(<object>p.batches)
        free(p.error)
        free(p)
    s.private_data = NULL
    s.release = NULL


cdef void _stream_capsule_free(object capsule) noexcept:
    cdef ArrowArrayStream* s = <ArrowArrayStream*>PyCapsule_GetPointer(capsule, "arrow_array_stream")
    if s == NULL:
        return
    if s.release != NULL:
        s.release(s)
    free(s)


def export_stream(schema_desc, batches):
    """An ``arrow_array_stream`` PyCapsule: the schema description, then the array descriptions
    ``batches`` (an iterable; consumed as the consumer asks, an exception becomes the stream's error)."""
    it = iter(batches)
    cdef ArrowArrayStream* s = <ArrowArrayStream*>calloc(1, sizeof(ArrowArrayStream))
    if s == NULL:
        raise MemoryError()
    cdef StreamPrivate* p = <StreamPrivate*>calloc(1, sizeof(StreamPrivate))
    if p == NULL:
        free(s)
        raise MemoryError()
    Py_INCREF(schema_desc)
    Py_INCREF(it)
    p.schema = <PyObject*>schema_desc
    p.batches = <PyObject*>it
    s.private_data = p
    s.get_schema = _stream_get_schema
    s.get_next = _stream_get_next
    s.get_last_error = _stream_last_error
    s.release = _release_stream
    return PyCapsule_New(s, "arrow_array_stream", _stream_capsule_free)
