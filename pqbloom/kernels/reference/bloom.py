"""Numpy reference of the Bloom filter kernels (:mod:`pqbloom.kernels.bloom`): the oracle the compiled
kernels are tested against and their fallback.

XXH64 of many values is the numpy XXH64 of :mod:`pqbloom.xxhash64` (bit-exact with the ``xxhash``
package); split-block insertion and the helpers a filter's probes share are here.
"""

from __future__ import annotations

import numpy as np

from ...xxhash64 import xxh64_binary, xxh64_fixed, xxh64_u32, xxh64_u64

__all__ = ["SALT", "MASK_SHIFT", "WORDS_PER_BLOCK", "FILTER_CHUNK", "xxh64_binary", "xxh64_fixed", "xxh64_u32",
           "xxh64_u64", "masks", "block_indices", "missing_bits", "insert_hashes"]

#: The eight odd multipliers of the SBBF ``mask`` function (one per word).
SALT = (0x47B6137B, 0x44974D91, 0x8824AD5B, 0xA2B7289D, 0x705495C7, 0x2DF1424B, 0x9EFC4947, 0x5C6BFB31)
MASK_SHIFT = 27  # (x * salt) mod 2**32 >> 27 selects a bit 0..31
#: Words per block.
WORDS_PER_BLOCK = 8
#: Hashes masked and inserted/checked per numpy pass.
FILTER_CHUNK = 1 << 14
_SALT_TILE = np.tile(np.array(SALT, dtype=np.uint32), FILTER_CHUNK)
_BLOCK_VOID = np.dtype((np.void, 4 * WORDS_PER_BLOCK))


def masks(low: np.ndarray) -> np.ndarray:
    """The ``(n, 8)`` uint32 SBBF masks of the low 32 bits of hashes (``n <= FILTER_CHUNK``).

    Built with 1-D passes (``repeat`` then a multiply by the tiled salts):
    numpy is much slower when broadcasting over an inner axis of length 8.
    """
    pos = np.repeat(low, WORDS_PER_BLOCK)
    pos *= _SALT_TILE[:len(pos)]
    pos >>= np.uint32(MASK_SHIFT)
    np.left_shift(np.uint32(1), pos, out=pos)
    return pos.reshape(-1, WORDS_PER_BLOCK)


def block_indices(h: np.ndarray, num_blocks: int) -> np.ndarray:
    """The block of each uint64 hash: ``((h >> 32) * num_blocks) >> 32``."""
    # (h >> 32) < 2**32 and num_blocks < 2**31, so the product fits in 64 bits.
    idx = h >> np.uint64(32)
    idx *= np.uint64(num_blocks)
    idx >>= np.uint64(32)
    return idx.astype(np.intp)


def missing_bits(words64: np.ndarray, idx: np.ndarray, masks64: np.ndarray) -> np.ndarray:
    """Per row, the OR of the mask bits not set in block ``idx`` (0 means present)."""
    g = np.take(words64, idx, axis=0)
    np.invert(g, out=g)
    g &= masks64
    acc = g[:, 0] | g[:, 1]
    acc |= g[:, 2]
    acc |= g[:, 3]
    return acc


def insert_hashes(words: np.ndarray, hashes: np.ndarray) -> None:
    """Insert uint64 ``hashes`` into the filter whose ``(num_blocks, 8)`` uint32 ``words`` are given.

    Per chunk: gather the target blocks, OR the masks in, scatter the blocks back as 32-byte items.
    When several hashes of a chunk share a block only the last scatter survives, so the rows whose
    bits did not land are then applied with ``np.bitwise_or.at`` (which handles repeated indices).
    This is faster than ``bitwise_or.at`` alone, which handles every hash one at a time.
    """
    words64 = words.view(np.uint64)  # (blocks, 4): two words per uint64, same bit layout
    blocks = words.view(_BLOCK_VOID).reshape(-1)
    z = words.shape[0]
    for s in range(0, len(hashes), FILTER_CHUNK):
        part = hashes[s:s + FILTER_CHUNK]
        idx = block_indices(part, z)
        m = masks(part.astype(np.uint32)).view(np.uint64)
        merged = np.take(words64, idx, axis=0)
        merged |= m
        blocks[idx] = merged.view(_BLOCK_VOID).reshape(-1)
        lost = np.flatnonzero(missing_bits(words64, idx, m))
        if len(lost):
            np.bitwise_or.at(words64, idx[lost], m[lost])
