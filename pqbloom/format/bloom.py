"""The Bloom filter header: encoded for the split-block filters pqbloom writes, decoded into a record.

:mod:`pqbloom.bloom` validates what :func:`decode_bloom_filter_header` reports (which algorithm, hash and
compression the header names, its ``numBytes``); this module only knows the struct.
"""

from __future__ import annotations

from dataclasses import dataclass

from .._thrift import ttypes as T
from .codec import decode_prefix, encode

__all__ = ["BloomFilterHeaderFields", "encode_bloom_filter_header", "decode_bloom_filter_header"]


@dataclass(slots=True)
class BloomFilterHeaderFields:
    """A decoded ``BloomFilterHeader``: ``num_bytes`` (None when absent) and whether its algorithm is
    BLOCK (split-block), its hash XXHASH and its compression UNCOMPRESSED (the only ones the format has).
    Made per probed filter (slotted, not frozen: cheaper to create)."""

    num_bytes: int | None
    block: bool
    xxhash: bool
    uncompressed: bool


def encode_bloom_filter_header(num_bytes: int) -> bytes:
    """The compact-Thrift header of a split-block filter of ``num_bytes`` (BLOCK / XXHASH / UNCOMPRESSED)."""
    return encode(T.BloomFilterHeader(numBytes=num_bytes, algorithm=T.BloomFilterAlgorithm(BLOCK=T.SplitBlockAlgorithm()),
                                      hash=T.BloomFilterHash(XXHASH=T.XxHash()),
                                      compression=T.BloomFilterCompression(UNCOMPRESSED=T.Uncompressed())))


def decode_bloom_filter_header(data: bytes | bytearray | memoryview, *, offset: int | None = None
                               ) -> tuple[BloomFilterHeaderFields, int]:
    """The header at the start of ``data`` and its length; :class:`~pqbloom.errors.CorruptFileError`
    when it does not decode."""
    h, used = decode_prefix(T.BloomFilterHeader, data, offset=offset, what="BloomFilterHeader")
    return BloomFilterHeaderFields(
        None if h.numBytes is None else int(h.numBytes),
        h.algorithm is not None and h.algorithm.BLOCK is not None,
        h.hash is not None and h.hash.XXHASH is not None,
        h.compression is not None and h.compression.UNCOMPRESSED is not None), used
