"""Bit-level decoding shared by the numpy decoders (the kernels' reference and the encodings): value
counts checked, varints read, LSB-first bit-packed groups unpacked. Vectorized with numpy; the only
Python loops run once per one of the eight value slots of a group.
"""

from __future__ import annotations

import numpy as np

from ...errors import CorruptFileError

__all__ = ["MAX_COUNT", "checked_count", "read_uleb128", "unpack_groups", "pack_groups"]

#: counts beyond this cannot come from one Parquet page (num_values is an i32)
MAX_COUNT = (1 << 31) - 1


def checked_count(count: int, what: str) -> int:
    """``count`` as an int, or CorruptFileError when no page could hold that many values (negative, or
    more than an i32 count)."""
    count = int(count)
    if count < 0 or count > MAX_COUNT:
        raise CorruptFileError(f"{what}: invalid value count {count}")
    return count


def read_uleb128(b: bytes | bytearray | memoryview, pos: int, end: int, what: str = "varint") -> tuple[int, int]:
    """Decode one varint from ``b[pos:end]``; return (value, new position). At most 10 bytes."""
    result = 0
    shift = 0
    while True:
        if pos >= end:
            raise CorruptFileError(f"{what}: truncated varint")
        byte = b[pos]
        pos += 1
        result |= (byte & 0x7F) << shift
        if not byte & 0x80:
            return result, pos
        shift += 7
        if shift >= 70:
            raise CorruptFileError(f"{what}: varint too long")


def _byte_lut(bit_width: int) -> np.ndarray:
    """For bit widths dividing 8: the ``8 // bit_width`` values packed in each possible byte, as
    one little-endian word per byte (a gather of whole words unpacks a byte string)."""
    per = 8 // bit_width
    b = np.arange(256, dtype=np.uint8)[:, None]
    sh = (np.arange(per, dtype=np.uint8) * bit_width)[None, :]
    vals = np.ascontiguousarray((b >> sh) & ((1 << bit_width) - 1), dtype=np.uint8)
    return vals.view(f"<u{per}").reshape(256)


_LUTS = {2: _byte_lut(2), 4: _byte_lut(4)}


def unpack_groups(u8: np.ndarray, bit_width: int, count: int) -> np.ndarray:
    """Unpack ``count`` LSB-first values of ``bit_width`` bits from bytes the caller checked hold them
    (zero-padding a partial group).

    The result is unsigned, uint8 for widths up to 8 and at most uint64 (callers widen as needed).
    """
    groups = (count + 7) // 8
    nb = groups * bit_width
    if len(u8) < nb:
        u8 = np.concatenate([u8, np.zeros(nb - len(u8), np.uint8)])
    else:
        u8 = np.ascontiguousarray(u8[:nb])
    if bit_width in (8, 16, 32, 64):
        return u8.view(f"<u{bit_width // 8}")[:count].copy()  # never a view of the caller's buffer
    if bit_width == 1:
        return np.unpackbits(u8, bitorder="little", count=count)
    lut = _LUTS.get(bit_width)
    if lut is not None:  # one gather of a word per byte (intp indices gather fastest)
        return np.take(lut, u8.astype(np.intp)).view(np.uint8)[:count]
    if groups == 0:
        return np.zeros(0, np.uint8 if bit_width <= 8 else np.uint64)
    if bit_width <= 32:
        # value j of every group: one little-endian word read at its first byte (a strided view;
        # the value starts at bit sh < 8 of it, so 4 bytes hold up to 25 bits and 8 bytes the rest)
        buf = np.zeros(nb + 8, np.uint8)
        buf[:nb] = u8
        word_t = np.dtype("<u4") if bit_width <= 25 else np.dtype("<u8")
        out_t = np.uint8 if bit_width <= 8 else np.uint16 if bit_width <= 16 else np.uint32
        res = np.empty((groups, 8), out_t)
        wmask = word_t.type((1 << bit_width) - 1)
        for j in range(8):
            bit = j * bit_width
            words = np.ndarray((groups,), dtype=word_t, buffer=buf, offset=bit >> 3, strides=(bit_width,))
            col = words >> word_t.type(bit & 7)
            col &= wmask
            res[:, j] = col
        return res.reshape(-1)[:count]
    mat = u8.reshape(groups, bit_width)
    out = np.empty((groups, 8), np.uint64)
    for j in range(8):
        bit = j * bit_width
        off, sh = bit >> 3, bit & 7
        nbytes = (sh + bit_width + 7) >> 3
        acc = mat[:, off].astype(np.uint64)
        for k in range(1, min(nbytes, 8)):
            acc |= mat[:, off + k].astype(np.uint64) << np.uint64(8 * k)
        if sh:
            acc >>= np.uint64(sh)
        if nbytes == 9:
            acc |= mat[:, off + 8].astype(np.uint64) << np.uint64(64 - sh)
        out[:, j] = acc
    if bit_width < 64:
        out &= np.uint64((1 << bit_width) - 1)
    return out.reshape(-1)[:count]


def pack_groups(values: np.ndarray, bit_width: int) -> np.ndarray:
    """Pack LSB-first into whole groups of 8 values (the last one zero-padded): a uint8 array of
    ``ceil(n/8) * bit_width`` bytes, as the hybrid's bit-packed runs and DELTA_BINARY_PACKED miniblocks
    hold them."""
    if not 0 <= bit_width <= 64:
        raise ValueError(f"bit width {bit_width} out of range 0..64")
    v = np.asarray(values).reshape(-1)
    n = len(v)
    if v.dtype.kind not in "iub":
        raise TypeError(f"cannot bit-pack {v.dtype}")
    if bit_width == 0 or n == 0:
        return np.zeros(0, np.uint8)
    groups = (n + 7) // 8
    if bit_width < 8:
        return _pack_small(v, bit_width, groups)
    u = v.astype(np.int64, copy=False).view(np.uint64) if v.dtype.kind == "i" else v.astype(np.uint64, copy=False)
    if bit_width in (8, 16, 32, 64):
        out = np.zeros(groups * 8, f"<u{bit_width // 8}")
        out[:n] = u  # unsigned narrowing keeps the low bits
        return out.view(np.uint8)
    if bit_width == 1:
        bits = np.zeros(groups * 8, np.uint8)
        bits[:n] = u & np.uint64(1)
        return np.packbits(bits, bitorder="little")
    w = np.zeros(groups * 8, np.uint64)
    w[:n] = u
    if bit_width < 64:
        w &= np.uint64((1 << bit_width) - 1)
    w2 = w.reshape(groups, 8)
    out = np.zeros((groups, bit_width), np.uint8)
    for j in range(8):
        bit = j * bit_width
        off, sh = bit >> 3, bit & 7
        nbytes = (sh + bit_width + 7) >> 3
        col = w2[:, j]
        low = col << np.uint64(sh) if sh else col
        for k in range(min(nbytes, 8)):
            out[:, off + k] |= (low >> np.uint64(8 * k)).astype(np.uint8)
        if nbytes == 9:  # the value straddles 9 bytes: its top bits were shifted out of ``low``
            out[:, off + 8] |= (col >> np.uint64(64 - sh)).astype(np.uint8)
    return out.reshape(-1)


def _pack_small(v: np.ndarray, bit_width: int, groups: int) -> np.ndarray:
    """:func:`pack_groups` for widths 1..7, on bytes: a value shifted within its first byte
    fits 16 bits, so no 64-bit copy of the input is made (levels are mostly packed this way)."""
    b = np.zeros(groups * 8, np.uint8)
    b[:len(v)] = v  # unsigned narrowing keeps the low bits (two's complement for negatives)
    b &= (1 << bit_width) - 1
    if bit_width == 1:
        return np.packbits(b, bitorder="little")
    cols = b.reshape(groups, 8)
    out = np.zeros((groups, bit_width), np.uint8)
    for j in range(8):
        bit = j * bit_width
        off, sh = bit >> 3, bit & 7
        col = cols[:, j]
        if sh + bit_width <= 8:
            out[:, off] |= col << sh if sh else col
        else:
            wide = col.astype(np.uint16) << sh
            out[:, off] |= wide.astype(np.uint8)
            out[:, off + 1] |= (wide >> 8).astype(np.uint8)
    return out.reshape(-1)
