"""Value and level encodings: pure functions from numpy arrays / BinaryArray to bytes and back.

:func:`encode_values` / :func:`decode_values` choose the encoding of a page's values by its ``Encoding``.
Decoders accept ``bytes``, ``bytearray``, ``memoryview`` or uint8 numpy arrays,
return dense values, and raise :class:`~pqbloom.errors.CorruptFileError` on
malformed or truncated input.
"""

from .bitpack import as_u8, bit_pack, bit_unpack, bit_width_of, decode_bit_packed_levels
from .byte_stream_split import decode_byte_stream_split, encode_byte_stream_split
from .delta import (
    common_prefix_lengths,
    decode_delta_binary_packed,
    decode_delta_byte_array,
    decode_delta_length_byte_array,
    encode_delta_binary_packed,
    encode_delta_byte_array,
    encode_delta_length_byte_array,
)
from .dictionary import (
    build_dictionary,
    decode_dictionary_indices,
    encode_dictionary_indices,
    encode_with_dictionary,
    estimate_distinct_fraction,
    take_dictionary,
)
from .dispatch import decode_values, encode_values, encoding_applies, is_dictionary_encoding
from .plain import decode_plain, encode_plain, value_width
from .rle import (
    decode_levels_v1,
    decode_rle_bitpacked,
    decode_rle_booleans,
    encode_levels_v1,
    encode_rle_bitpacked,
    encode_rle_booleans,
)

__all__ = [
    "decode_values",
    "encode_values",
    "encoding_applies",
    "is_dictionary_encoding",
    "as_u8",
    "bit_pack",
    "bit_unpack",
    "bit_width_of",
    "build_dictionary",
    "common_prefix_lengths",
    "decode_bit_packed_levels",
    "decode_byte_stream_split",
    "decode_delta_binary_packed",
    "decode_delta_byte_array",
    "decode_delta_length_byte_array",
    "decode_dictionary_indices",
    "decode_levels_v1",
    "decode_plain",
    "decode_rle_bitpacked",
    "decode_rle_booleans",
    "encode_byte_stream_split",
    "encode_delta_binary_packed",
    "encode_delta_byte_array",
    "encode_delta_length_byte_array",
    "encode_dictionary_indices",
    "encode_with_dictionary",
    "encode_levels_v1",
    "encode_plain",
    "encode_rle_bitpacked",
    "encode_rle_booleans",
    "estimate_distinct_fraction",
    "take_dictionary",
    "value_width",
]
