# cython: language_level=3, boundscheck=False, wraparound=False, initializedcheck=False, cdivision=True
"""A Thrift compact-protocol ``PageHeader`` parsed in C, for the page loop (a chunk of small pages
spent more time building Thrift objects than decoding values).

It reads only what the page reader needs (page type, sizes, crc; the data page, dictionary page and
v2 data page headers' counts, encodings and lengths) and skips every other field and nested struct
(statistics, unknown fields) generically. The rules are those of Thrift's C decoder
(``thrift.protocol.fastbinary``, which :mod:`pqbloom.format` uses): a varint reads at most 3 (i16),
5 (i32) or 10 (i64) bytes and keeps the low bits, a field of an unexpected type is skipped, the
last of repeated fields wins (a repeated struct field replaces the earlier one whole). Anything
unusual (a string over 1 GiB, a container over 2**24 entries, a UUID, structs nested deeper than
``_MAX_DEPTH``) is refused with an error code like any malformed input: the caller then decodes
the header with Thrift, which raises its own error or decodes it. So this parser may refuse
more than Thrift, never accept what Thrift refuses, and agrees with Thrift on what it accepts.

Every read is preceded by a check of the bytes left (``end - pos``); nothing is written but the
result struct.
"""

from libc.stdint cimport int16_t, int32_t, int64_t, uint8_t, uint16_t, uint32_t, uint64_t

from pqbloom._kernels._util cimport u8_ptr

# error codes (negative returns): the caller decodes the header with Thrift instead
TRUNCATED = -1  # a read past the end of the buffer
VARINT_TOO_LONG = -2
BAD_TYPE = -3  # an unknown (or unsupported) compact type code
BAD_LENGTH = -4  # a string, list or map length out of the accepted range
TOO_DEEP = -5

cdef enum:
    E_TRUNCATED = -1
    E_VARINT_TOO_LONG = -2
    E_BAD_TYPE = -3
    E_BAD_LENGTH = -4
    E_TOO_DEEP = -5

cdef enum:
    # compact protocol type codes
    CT_STOP = 0
    CT_TRUE = 1
    CT_FALSE = 2
    CT_BYTE = 3
    CT_I16 = 4
    CT_I32 = 5
    CT_I64 = 6
    CT_DOUBLE = 7
    CT_BINARY = 8
    CT_LIST = 9
    CT_SET = 10
    CT_MAP = 11
    CT_STRUCT = 12

cdef enum:
    _MAX_DEPTH = 64
    # Thrift's limits as pqbloom.format sets them (STRING_LENGTH_LIMIT, CONTAINER_LENGTH_LIMIT)
    _STRING_LIMIT = 1 << 30
    _CONTAINER_LIMIT = 1 << 24

    # which struct a field list belongs to
    K_PAGE = 0
    K_DATA = 1
    K_DICT = 2
    K_V2 = 3



cdef struct Reader:
    const uint8_t *p
    int64_t pos
    int64_t end


cdef inline int _varint(Reader *r, int max_bytes, uint64_t *out) noexcept nogil:
    """A varint of at most ``max_bytes`` bytes; bits past 64 are dropped (the caller truncates to
    its width, as Thrift's template does)."""
    cdef uint64_t val = 0
    cdef int i, shift = 0
    cdef uint8_t b
    for i in range(max_bytes):
        if r.pos >= r.end:
            return E_TRUNCATED
        b = r.p[r.pos]
        r.pos += 1
        val |= (<uint64_t>(b & 0x7F)) << shift
        if not (b & 0x80):
            out[0] = val
            return 0
        shift += 7
    return E_VARINT_TOO_LONG


cdef inline int _i32(Reader *r, int64_t *out) noexcept nogil:
    cdef uint64_t v
    cdef uint32_t u
    cdef int rc = _varint(r, 5, &v)
    if rc:
        return rc
    u = <uint32_t>v
    out[0] = <int32_t>((u >> 1) ^ (<uint32_t>0 - (u & 1)))  # zigzag
    return 0


cdef inline int _length(Reader *r, int64_t limit, int64_t *out) noexcept nogil:
    """A string / container length (an unsigned 32-bit varint, read as Thrift's int32)."""
    cdef uint64_t v
    cdef int rc = _varint(r, 5, &v)
    if rc:
        return rc
    out[0] = <int32_t><uint32_t>v
    if out[0] < 0 or out[0] > limit:
        return E_BAD_LENGTH
    return 0


cdef inline bint _valid_type(int ct) noexcept nogil:
    return CT_STOP <= ct <= CT_STRUCT


cdef int _skip(Reader *r, int ct, int depth) noexcept nogil:
    """Skip one value of compact type ``ct`` (a bool here is an element: one byte)."""
    cdef uint64_t v
    cdef int64_t n, i
    cdef int rc, et, kt, vt
    cdef uint8_t b
    if ct == CT_TRUE or ct == CT_FALSE or ct == CT_BYTE:
        if r.pos >= r.end:
            return E_TRUNCATED
        r.pos += 1
        return 0
    if ct == CT_I16:
        return _varint(r, 3, &v)
    if ct == CT_I32:
        return _varint(r, 5, &v)
    if ct == CT_I64:
        return _varint(r, 10, &v)
    if ct == CT_DOUBLE:
        if r.end - r.pos < 8:
            return E_TRUNCATED
        r.pos += 8
        return 0
    if ct == CT_BINARY:
        rc = _length(r, _STRING_LIMIT, &n)
        if rc:
            return rc
        if r.end - r.pos < n:
            return E_TRUNCATED
        r.pos += n
        return 0
    if depth >= _MAX_DEPTH:
        return E_TOO_DEEP
    if ct == CT_LIST or ct == CT_SET:
        if r.pos >= r.end:
            return E_TRUNCATED
        b = r.p[r.pos]
        r.pos += 1
        et = b & 0x0F
        n = b >> 4
        if not _valid_type(et):
            return E_BAD_TYPE
        if n == 15:
            rc = _length(r, _CONTAINER_LIMIT, &n)
            if rc:
                return rc
        if n and et == CT_STOP:
            return E_BAD_TYPE
        for i in range(n):  # every element takes at least one byte: bounded by the buffer
            rc = _skip(r, et, depth + 1)
            if rc:
                return rc
        return 0
    if ct == CT_MAP:
        rc = _length(r, _CONTAINER_LIMIT, &n)
        if rc:
            return rc
        if n == 0:
            return 0
        if r.pos >= r.end:
            return E_TRUNCATED
        b = r.p[r.pos]
        r.pos += 1
        kt = b >> 4
        vt = b & 0x0F
        if not _valid_type(kt) or not _valid_type(vt) or kt == CT_STOP or vt == CT_STOP:
            return E_BAD_TYPE
        for i in range(n):
            rc = _skip(r, kt, depth + 1)
            if rc:
                return rc
            rc = _skip(r, vt, depth + 1)
            if rc:
                return rc
        return 0
    if ct == CT_STRUCT:
        return _struct(r, -1, NULL, depth + 1)
    return E_BAD_TYPE


cdef inline int _slot(int kind, int tag) noexcept nogil:
    """The result slot of an i32 (or, for v2 tag 7, bool) field ``tag`` of struct ``kind``, or -1."""
    if kind == K_PAGE:
        return S_TYPE + tag - 1 if 1 <= tag <= 4 else -1
    if kind == K_DATA:
        return S_DP + tag - 1 if 1 <= tag <= 4 else -1
    if kind == K_DICT:
        return S_DICT + tag - 1 if 1 <= tag <= 2 else -1
    if kind == K_V2:
        return S_V2 + tag - 1 if 1 <= tag <= 7 else -1
    return -1


cdef void _clear(HeaderFields *res, int first, int n) noexcept nogil:
    cdef int i
    for i in range(first, first + n):
        res.has[i] = False


cdef int _struct(Reader *r, int kind, HeaderFields *res, int depth) noexcept nogil:
    """The fields of one struct up to its stop byte: those of ``kind`` into ``res``, the rest
    skipped (``kind`` -1: all skipped)."""
    cdef uint64_t v
    cdef int64_t val
    cdef int rc, ct, slot, sub
    cdef int16_t tag = 0
    cdef uint16_t u
    cdef uint8_t b
    while True:
        if r.pos >= r.end:
            return E_TRUNCATED
        b = r.p[r.pos]
        r.pos += 1
        ct = b & 0x0F
        if ct == CT_STOP:
            return 0
        if not _valid_type(ct):
            return E_BAD_TYPE
        if b >> 4:
            tag = <int16_t>(tag + (b >> 4))
        else:
            rc = _varint(r, 3, &v)
            if rc:
                return rc
            u = <uint16_t>v
            tag = <int16_t>((u >> 1) ^ (<uint16_t>0 - (u & 1)))
        slot = _slot(kind, tag) if kind >= 0 else -1
        if slot >= 0 and kind == K_V2 and tag == 7:
            if ct == CT_TRUE or ct == CT_FALSE:
                res.value[slot] = ct == CT_TRUE
                res.has[slot] = True
                continue
            slot = -1
        if slot >= 0 and ct == CT_I32:
            rc = _i32(r, &val)
            if rc:
                return rc
            res.value[slot] = val
            res.has[slot] = True
            continue
        if kind == K_PAGE and ct == CT_STRUCT and (tag == 5 or tag == 7 or tag == 8):
            if depth >= _MAX_DEPTH:
                return E_TOO_DEEP
            # a repeated struct field replaces the earlier one whole
            if tag == 5:
                sub = K_DATA
                _clear(res, S_DP, 4)
                res.has_dp = True
            elif tag == 7:
                sub = K_DICT
                _clear(res, S_DICT, 2)
                res.has_dict = True
            else:
                sub = K_V2
                _clear(res, S_V2, 7)
                res.has_v2 = True
            rc = _struct(r, sub, res, depth + 1)
            if rc:
                return rc
            continue
        if ct == CT_TRUE or ct == CT_FALSE:  # a bool field's value is its type code
            continue
        rc = _skip(r, ct, depth)
        if rc:
            return rc


cdef int parse_fields(const uint8_t *p, int64_t pos, int64_t end, HeaderFields *res,
                      int64_t *end_pos) noexcept nogil:
    """The ``PageHeader`` at ``p[pos:end]`` into ``res`` (for the compiled page loop,
    :mod:`pqbloom._kernels.chunkloop`): 0 and the position after it in ``end_pos``, or an error code."""
    cdef Reader r
    cdef int rc
    r.p = p
    r.pos = pos
    r.end = end
    _clear(res, 0, N_SLOTS)
    res.has_dp = res.has_dict = res.has_v2 = False
    rc = _struct(&r, K_PAGE, res, 0)
    end_pos[0] = r.pos
    return rc


cdef inline object _get(HeaderFields *res, int slot):
    return res.value[slot] if res.has[slot] else None


def parse(const uint8_t[::1] buf, int64_t pos):
    """Parse the ``PageHeader`` at ``buf[pos]``: ``(end, type, uncompressed size, compressed size,
    crc, data page header, dictionary page header, v2 data page header)`` with ``end`` the position
    after it and None for an absent field; the three nested headers are tuples (or None) of
    (num_values, encoding, definition_level_encoding, repetition_level_encoding), (num_values,
    encoding) and (num_values, num_nulls, num_rows, encoding, definition_levels_byte_length,
    repetition_levels_byte_length, is_compressed: True when absent, as Thrift's default). A negative
    int (an error code) when the bytes are not a header this parser accepts."""
    cdef HeaderFields res
    cdef int rc
    cdef int64_t end
    if pos < 0 or pos > buf.shape[0]:
        raise ValueError("pageheader.parse: position outside the buffer")
    with nogil:
        rc = parse_fields(u8_ptr(buf), pos, buf.shape[0], &res, &end)
    if rc:
        return rc
    dp = dh = v2 = None
    if res.has_dp:
        dp = (_get(&res, S_DP), _get(&res, S_DP + 1), _get(&res, S_DP + 2), _get(&res, S_DP + 3))
    if res.has_dict:
        dh = (_get(&res, S_DICT), _get(&res, S_DICT + 1))
    if res.has_v2:
        v2 = (_get(&res, S_V2), _get(&res, S_V2 + 1), _get(&res, S_V2 + 2), _get(&res, S_V2 + 3),
              _get(&res, S_V2 + 4), _get(&res, S_V2 + 5),
              bool(res.value[S_V2 + 6]) if res.has[S_V2 + 6] else True)
    return (end, _get(&res, S_TYPE), _get(&res, S_USIZE), _get(&res, S_CSIZE), _get(&res, S_CRC), dp, dh, v2)
