"""Page headers: built from plain values and encoded (the writer), decoded for the file layer (the reader).

The encoders return the compact-Thrift bytes of one ``PageHeader``; the decoders return the struct and where
it ends, and raise :class:`~pqbloom.errors.CorruptFileError` for bytes that do not decode.
"""

from __future__ import annotations

from typing import Any

from .._thrift import ttypes as T
from .codec import decode_at, decode_prefix, encode
from .enums import Encoding, PageType

__all__ = ["encode_dictionary_page_header", "encode_data_page_header", "encode_data_page_header_v2",
           "decode_page_header", "decode_page_header_prefix"]


def encode_dictionary_page_header(*, uncompressed_page_size: int, compressed_page_size: int, num_values: int,
                                  encoding: int = Encoding.PLAIN, crc: int | None = None) -> bytes:
    """A DICTIONARY_PAGE header (values not sorted)."""
    return encode(T.PageHeader(type=PageType.DICTIONARY_PAGE, uncompressed_page_size=uncompressed_page_size,
                               compressed_page_size=compressed_page_size, crc=crc,
                               dictionary_page_header=T.DictionaryPageHeader(num_values=num_values, encoding=encoding,
                                                                             is_sorted=False)))


def encode_data_page_header(*, uncompressed_page_size: int, compressed_page_size: int, num_values: int,
                            encoding: int, crc: int | None = None) -> bytes:
    """A DATA_PAGE (v1) header; its levels are RLE/bit-packed hybrid."""
    return encode(T.PageHeader(type=PageType.DATA_PAGE, uncompressed_page_size=uncompressed_page_size,
                               compressed_page_size=compressed_page_size, crc=crc,
                               data_page_header=T.DataPageHeader(
                                   num_values=num_values, encoding=encoding,
                                   definition_level_encoding=Encoding.RLE, repetition_level_encoding=Encoding.RLE)))


def encode_data_page_header_v2(*, uncompressed_page_size: int, compressed_page_size: int, num_values: int,
                               num_nulls: int, num_rows: int, encoding: int, definition_levels_byte_length: int,
                               repetition_levels_byte_length: int, is_compressed: bool,
                               crc: int | None = None) -> bytes:
    """A DATA_PAGE_V2 header."""
    return encode(T.PageHeader(type=PageType.DATA_PAGE_V2, uncompressed_page_size=uncompressed_page_size,
                               compressed_page_size=compressed_page_size, crc=crc,
                               data_page_header_v2=T.DataPageHeaderV2(
                                   num_values=num_values, num_nulls=num_nulls, num_rows=num_rows, encoding=encoding,
                                   definition_levels_byte_length=definition_levels_byte_length,
                                   repetition_levels_byte_length=repetition_levels_byte_length,
                                   is_compressed=is_compressed)))


def decode_page_header(buf: bytes | bytearray | memoryview, pos: int, *, offset: int | None = None) -> tuple[Any, int]:
    """The ``PageHeader`` struct at ``buf[pos]`` (not copied) and the position just after it."""
    return decode_at(T.PageHeader, buf, pos, offset=offset, what="page header")  # type: ignore[arg-type]


def decode_page_header_prefix(data: bytes | bytearray | memoryview, *, offset: int | None = None) -> tuple[Any, int]:
    """The ``PageHeader`` struct at the start of ``data`` (a decrypted header module) and its length."""
    return decode_prefix(T.PageHeader, data, offset=offset, what="page header")
