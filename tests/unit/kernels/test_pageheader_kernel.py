"""The compiled page-header parser (pqbloom.kernels.pageheader.page_header) against Thrift's decoder.

The parser's reference is Thrift (``pqbloom.format.decode_at``): on random encoded ``PageHeader``
objects (statistics, index page headers, unknown fields of every compact type, fields of the wrong
type, repeated fields) both give the same fields and end; on truncated and mutated bytes the parser
either agrees with Thrift or refuses (None), and the page reader's
:func:`pqbloom.file.pages.page_header_fields` then raises Thrift's error or returns Thrift's result.
"""

from __future__ import annotations

import struct
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pqbloom import kernels
from pqbloom.encodings.bitpack import uleb128
from pqbloom.errors import CorruptFileError
from pqbloom.file.pages import flat_page_header, page_header_fields
from pqbloom.format import T, decode_at, encode
from pqbloom.kernels import pageheader as pageheader_kernels

PROPS = settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])

pytestmark = pytest.mark.skipif(not kernels.COMPILED, reason="the compiled kernels are not in use")

i32 = st.integers(-(2**31), 2**31 - 1)
opt_i32 = st.none() | i32 | st.integers(-3, 8)
opt_bool = st.none() | st.booleans()
opt_bytes = st.none() | st.binary(max_size=20)
opt_i64 = st.none() | st.integers(-(2**63), 2**63 - 1)


def zigzag(v: int, bits: int) -> int:
    return ((v << 1) ^ (v >> (bits - 1))) & ((1 << bits) - 1)


# -- raw compact-protocol values (for unknown fields): (compact type, encoded bytes) ---------------

def _list(items: list[tuple[int, bytes]], ct: int) -> tuple[int, bytes]:
    body = b"".join(b for _, b in items)
    n = len(items)
    head = bytes([(n << 4) | ct]) if n < 15 else bytes([0xF0 | ct]) + uleb128(n)
    return 9, head + body


def _struct(fields: list[tuple[int, tuple[int, bytes]]]) -> tuple[int, bytes]:
    out = b""
    last = 0
    for tag, (ct, data) in fields:
        if ct in (1, 2):
            data = b""  # a bool field's value is its type code
        if 0 < tag - last <= 15:
            out += bytes([((tag - last) << 4) | ct])
        else:
            out += bytes([ct]) + uleb128(zigzag(tag, 16))
        out += data
        last = tag
    return 12, out + b"\x00"


scalars = st.one_of(
    st.booleans().map(lambda v: (1 if v else 2, bytes([1 if v else 2]))),
    st.integers(-128, 127).map(lambda v: (3, struct.pack("<b", v))),
    st.integers(-(2**15), 2**15 - 1).map(lambda v: (4, uleb128(zigzag(v, 16)))),
    i32.map(lambda v: (5, uleb128(zigzag(v, 32)))),
    st.integers(-(2**63), 2**63 - 1).map(lambda v: (6, uleb128(zigzag(v, 64)))),
    st.floats(allow_nan=False).map(lambda v: (7, struct.pack("<d", v))),
    st.binary(max_size=30).map(lambda v: (8, uleb128(len(v)) + v)),
)


@st.composite
def maps(draw: Any, children: st.SearchStrategy[tuple[int, bytes]]) -> tuple[int, bytes]:
    """A map of 0-3 entries, keys of one scalar type, values all one (drawn) value."""
    kt, kdata = draw(scalars)
    vt, vdata = draw(children)
    n = draw(st.integers(0, 3))
    if n == 0:
        return 11, b"\x00"
    pairs = [(kdata, vdata)] + [(draw(scalars.filter(lambda x: x[0] == kt))[1], vdata) for _ in range(n - 1)]
    kt_e = 1 if kt in (1, 2) else kt
    vt_e = 1 if vt in (1, 2) else vt
    return 11, uleb128(n) + bytes([(kt_e << 4) | vt_e]) + b"".join(k + v for k, v in pairs)


raw_values = st.recursive(scalars, lambda ch: st.one_of(
    st.lists(ch, min_size=1, max_size=17).map(lambda xs: _list([x for x in xs if x[0] == xs[0][0]],
                                                                 1 if xs[0][0] in (1, 2) else xs[0][0])),
    st.lists(st.tuples(st.integers(-40, 40), ch), max_size=5).map(_struct),
    maps(ch),
), max_leaves=12)


# -- PageHeader objects -----------------------------------------------------------------------------

statistics = st.none() | st.builds(T.Statistics, max=opt_bytes, min=opt_bytes, null_count=opt_i64,
                                   distinct_count=opt_i64, max_value=opt_bytes, min_value=opt_bytes,
                                   is_max_value_exact=opt_bool, is_min_value_exact=opt_bool, nan_count=opt_i64)
data_page = st.none() | st.builds(T.DataPageHeader, num_values=opt_i32, encoding=opt_i32,
                                  definition_level_encoding=opt_i32, repetition_level_encoding=opt_i32,
                                  statistics=statistics)
dict_page = st.none() | st.builds(T.DictionaryPageHeader, num_values=opt_i32, encoding=opt_i32, is_sorted=opt_bool)
v2_page = st.none() | st.builds(T.DataPageHeaderV2, num_values=opt_i32, num_nulls=opt_i32, num_rows=opt_i32,
                                encoding=opt_i32, definition_levels_byte_length=opt_i32,
                                repetition_levels_byte_length=opt_i32, is_compressed=opt_bool, statistics=statistics)
headers = st.builds(T.PageHeader, type=opt_i32, uncompressed_page_size=opt_i32, compressed_page_size=opt_i32,
                    crc=opt_i32, data_page_header=data_page,
                    index_page_header=st.none() | st.just(T.IndexPageHeader()),
                    dictionary_page_header=dict_page, data_page_header_v2=v2_page)


@st.composite
def encoded_headers(draw: Any) -> bytes:
    """An encoded PageHeader, with unknown fields (and known ones of the wrong type, or repeated)
    appended before its stop byte."""
    data = encode(draw(headers))
    assert data.endswith(b"\x00")
    extra = draw(st.lists(st.tuples(st.integers(-300, 300), raw_values), max_size=3))
    if extra:
        # short-form tags count from the last known field: other tags than drawn, still valid
        data = data[:-1] + _struct(extra)[1]
    return data


def thrift(buf: bytes, pos: int) -> tuple[str, Any]:
    try:
        header, end = decode_at(T.PageHeader, buf, pos, offset=0, what="page header")
    except CorruptFileError as exc:
        return ("error", str(exc))
    return ("ok", flat_page_header(header, end))


def fields(buf: bytes, pos: int) -> tuple[str, Any]:
    try:
        return ("ok", page_header_fields(buf, pos, offset=0))
    except CorruptFileError as exc:
        return ("error", str(exc))


@PROPS
@given(encoded_headers(), st.binary(max_size=3), st.binary(max_size=3))
def test_parse_matches_thrift(data: bytes, before: bytes, after: bytes) -> None:
    buf = before + data + after
    got = pageheader_kernels.page_header(buf, len(before))
    assert got is not None, "the compiled parser refused a valid header"
    assert ("ok", got) == thrift(buf, len(before))
    assert got[0] == len(before) + len(data)


@PROPS
@given(encoded_headers(), st.data())
def test_truncated_and_mutated_headers(data: bytes, draw: st.DataObject) -> None:
    b = bytearray(data)
    for _ in range(draw.draw(st.integers(0, 4))):
        op = draw.draw(st.integers(0, 3))
        if op == 0 and b:
            b[draw.draw(st.integers(0, len(b) - 1))] = draw.draw(st.sampled_from([0, 1, 2, 0x0F, 0x7F, 0x80, 0xFF]))
        elif op == 1 and b:
            b[draw.draw(st.integers(0, len(b) - 1))] ^= 1 << draw.draw(st.integers(0, 7))
        elif op == 2:
            b = b[:draw.draw(st.integers(0, len(b)))]
        else:
            at = draw.draw(st.integers(0, len(b)))
            b[at:at] = draw.draw(st.sampled_from([b"\xff" * 11, uleb128(2**31), uleb128(2**32 - 1), b"\x0d",
                                                  b"\x1c\x1c\x1c\x1c", b"\x19\xfc"]))
    buf = bytes(b)
    got = pageheader_kernels.page_header(buf, 0)
    expected = thrift(buf, 0)
    if got is not None:  # accepted: Thrift accepts it too, with the same fields
        assert ("ok", got) == expected
    assert fields(buf, 0) == expected  # the reader's door: Thrift's error or result either way


def test_hostile_inputs() -> None:
    deep = b"\x5c" + b"\x1c" * 5000  # data page header, then structs nested 5000 deep, cut off
    assert pageheader_kernels.page_header(deep, 0) is None
    assert fields(deep, 0)[0] == "error"
    for buf in (b"", b"\x15", b"\x15\xff\xff\xff\xff\xff", b"\x18\xff\xff\xff\xff\x0f", b"\x19\xf8\xff\xff\xff\x7f",
                b"\x1b\xff\xff\xff\xff\x0f\x88", b"\x1e", b"\x1d" + b"\x00" * 16 + b"\x00"):
        got = pageheader_kernels.page_header(buf, 0)
        if got is not None:
            assert ("ok", got) == thrift(buf, 0)
        assert fields(buf, 0) == thrift(buf, 0)
    assert pageheader_kernels.page_header(b"\x00", 1) is None  # at the end: nothing to parse
    assert pageheader_kernels.page_header(b"\x00", 2) is None  # outside the buffer: refused, not read
    assert pageheader_kernels.page_header(b"\x00", -1) is None


def test_repeated_struct_field_replaces_the_earlier_one() -> None:
    first = encode(T.PageHeader(type=0, data_page_header=T.DataPageHeader(num_values=5, encoding=0)))
    second = encode(T.DataPageHeader(num_values=7))
    buf = first[:-1] + b"\x0c" + uleb128(zigzag(5, 16)) + second + b"\x00"
    got = pageheader_kernels.page_header(buf, 0)
    assert got is not None and got[5] == (7, None, None, None)
    assert ("ok", got) == thrift(buf, 0)
