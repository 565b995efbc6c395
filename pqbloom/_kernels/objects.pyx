# cython: language_level=3, boundscheck=False, wraparound=False, initializedcheck=False, cdivision=True
"""Python objects built in bulk for object columns (``to_pandas``, ``to_pylist``): ``decimal.Decimal``
from unscaled integers, ``datetime.time`` from microseconds of the day.

A Decimal is made as pyarrow makes it, from its text: the unscaled integer's digits followed by a fixed
exponent suffix (``"12345" + "E-2"`` is ``Decimal('123.45')``: the same coefficient and exponent as
``"123.45"``), so no value goes through Python arithmetic. These loops hold the GIL (they create
objects); ``out`` is an object array whose slots start as None, and masked slots stay None.
"""

from cpython.datetime cimport import_datetime, time_new
from cpython.unicode cimport PyUnicode_FromStringAndSize
from libc.stdint cimport int64_t, uint8_t, uint32_t, uint64_t

import_datetime()

#: the widest words :func:`decimals_from_words` takes, in bytes (512 bits: 155 digits)
MAX_WORD_BYTES = 64
cdef enum:
    _MAX_WORD_BYTES = 64
    _MAX_LIMBS = 16
    _MAX_SUFFIX = 32
    _BUF = 256  # digits of 512 bits (155) plus the suffix, with room to spare
    _DIGITS_END = 200  # digits are written backwards ending here; the suffix follows

cdef extern from *:
    """
    #include <string.h>
    /* the digits of v written backwards ending before end; the first digit's position */
    static inline char *pqb_u64_digits(unsigned long long v, char *end) {
        do {
            *--end = (char)('0' + (int)(v % 10u));
            v /= 10u;
        } while (v);
        return end;
    }
    """
    char *pqb_u64_digits(unsigned long long v, char *end) nogil


cdef inline bint _check_mask(const uint8_t[::1] mask, Py_ssize_t n) noexcept:
    return mask.shape[0] == 0 or mask.shape[0] == n


def decimals_from_int64(const int64_t[::1] values, const uint8_t[::1] mask, const uint8_t[::1] suffix,
                        object ctor, object[::1] out):
    """``out[i] = ctor(digits(values[i]) + suffix)`` where ``mask`` (empty: no mask) is 0."""
    cdef Py_ssize_t n = values.shape[0], i, k
    cdef Py_ssize_t slen = suffix.shape[0]
    cdef char buf[_BUF]
    cdef char *start
    cdef int64_t v
    cdef uint64_t mag
    cdef bint masked = mask.shape[0] != 0
    if out.shape[0] != n or not _check_mask(mask, n) or slen > _MAX_SUFFIX:
        raise ValueError("objects.decimals_from_int64: invalid arguments")
    for k in range(slen):
        buf[_DIGITS_END + k] = <char>suffix[k]
    for i in range(n):
        if masked and mask[i]:
            continue
        v = values[i]
        # the magnitude in unsigned arithmetic: -INT64_MIN is 2**63, which int64 does not hold
        mag = (<uint64_t>0 - <uint64_t>v) if v < 0 else <uint64_t>v
        start = pqb_u64_digits(mag, buf + _DIGITS_END)
        if v < 0:
            start -= 1
            start[0] = b'-'
        out[i] = ctor(PyUnicode_FromStringAndSize(start, (buf + _DIGITS_END + slen) - start))
    return None


cdef inline uint32_t _load_le32(const uint8_t *p) noexcept nogil:
    return <uint32_t>p[0] | (<uint32_t>p[1] << 8) | (<uint32_t>p[2] << 16) | (<uint32_t>p[3] << 24)


def decimals_from_words(const uint8_t[::1] words, Py_ssize_t width, const uint8_t[::1] mask,
                        const uint8_t[::1] suffix, object ctor, object[::1] out):
    """As :func:`decimals_from_int64`, the values being ``width``-byte little-endian two's complement words
    (``width`` a multiple of 4, at most ``MAX_WORD_BYTES``)."""
    cdef Py_ssize_t n = out.shape[0], i, k, j, nl
    cdef Py_ssize_t slen = suffix.shape[0], limbs = width // 4
    cdef uint32_t limb[_MAX_LIMBS]
    cdef uint64_t cur, rem, carry
    cdef char buf[_BUF]
    cdef char *start
    cdef char *p
    cdef bint neg, masked = mask.shape[0] != 0
    if width <= 0 or width % 4 or width > _MAX_WORD_BYTES or words.shape[0] // width != n \
            or words.shape[0] % width or not _check_mask(mask, n) or slen > _MAX_SUFFIX:
        raise ValueError("objects.decimals_from_words: invalid arguments")
    for k in range(slen):
        buf[_DIGITS_END + k] = <char>suffix[k]
    for i in range(n):
        if masked and mask[i]:
            continue
        for j in range(limbs):
            limb[j] = _load_le32(&words[i * width + 4 * j])
        neg = (limb[limbs - 1] >> 31) != 0
        if neg:  # the magnitude: invert and add one, carrying through the limbs
            carry = 1
            for j in range(limbs):
                cur = <uint64_t>(~limb[j]) + carry
                limb[j] = <uint32_t>cur
                carry = cur >> 32
        nl = limbs
        while nl and limb[nl - 1] == 0:
            nl -= 1
        p = buf + _DIGITS_END
        if nl == 0:
            p -= 1
            p[0] = b'0'
        while nl:
            # divide by 10**9 (limb by limb, the remainder below 2**30 so each step fits 64 bits)
            rem = 0
            for j in range(nl - 1, -1, -1):
                cur = (rem << 32) | limb[j]
                limb[j] = <uint32_t>(cur // 1000000000u)
                rem = cur % 1000000000u
            while nl and limb[nl - 1] == 0:
                nl -= 1
            start = pqb_u64_digits(rem, p)
            if nl:  # an inner group of nine digits keeps its leading zeros
                while start > p - 9:
                    start -= 1
                    start[0] = b'0'
            p = start
        if neg:
            p -= 1
            p[0] = b'-'
        out[i] = ctor(PyUnicode_FromStringAndSize(p, (buf + _DIGITS_END + slen) - p))
    return None


def times_from_micros(const int64_t[::1] micros, const uint8_t[::1] mask, object[::1] out):
    """``out[i] = datetime.time`` of ``micros[i]`` microseconds after midnight where ``mask`` (empty: no
    mask) is 0. Returns -1, or the first position whose value is outside ``0 .. 86_400_000_000``
    (its slot and those after it left as they were)."""
    cdef Py_ssize_t n = micros.shape[0], i
    cdef int64_t us
    cdef bint masked = mask.shape[0] != 0
    if out.shape[0] != n or not _check_mask(mask, n):
        raise ValueError("objects.times_from_micros: invalid arguments")
    for i in range(n):
        if masked and mask[i]:
            continue
        us = micros[i]
        if us < 0 or us >= 86400000000:
            return i
        out[i] = time_new(<int>(us // 3600000000), <int>(us // 60000000 % 60), <int>(us // 1000000 % 60),
                          <int>(us % 1000000), None)
    return -1
