"""Bit packing and the RLE / bit-packing hybrid encoding (levels, dictionary indices, booleans).

Layout of the hybrid (parquet-format ``Encodings.md``)::

    run := rle-run | bit-packed-run
    rle-run := varint(count << 1) value-in-ceil(bit_width/8)-LE-bytes
    bit-packed-run := varint(groups << 1 | 1) groups*bit_width bytes  (8 values per group, LSB first)

All packing and unpacking is vectorized with numpy; the only Python loops run
once per run header (RLE runs are inherently sequential) or once per one of
the eight value slots of a group.
"""

from __future__ import annotations

import numpy as np

from ..errors import CorruptFileError

__all__ = [
    "as_u8",
    "bit_width_of",
    "bit_pack",
    "bit_unpack",
    "encode_rle_bitpacked",
    "decode_rle_bitpacked",
    "encode_levels_v1",
    "decode_levels_v1",
    "decode_bit_packed_levels",
    "encode_rle_booleans",
    "decode_rle_booleans",
    "read_uleb128",
    "uleb128",
]

#: parquet-java and Arrow never write bit-packed runs longer than 63 groups
#: (the header then fits one byte); we follow them for maximal compatibility.
_MAX_GROUPS_PER_RUN = 63
#: counts beyond this cannot come from one Parquet page (num_values is an i32)
_MAX_COUNT = (1 << 31) - 1

Buffer = bytes | bytearray | memoryview | np.ndarray


def as_u8(buf: Buffer) -> np.ndarray:
    """A 1-D uint8 view of ``buf`` (bytes, bytearray, memoryview or a uint8 array)."""
    if isinstance(buf, np.ndarray):
        if buf.dtype != np.uint8:
            raise TypeError(f"expected a uint8 array, got {buf.dtype}")
        return buf.reshape(-1)
    return np.frombuffer(buf, dtype=np.uint8)


def _check_count(count: int, what: str) -> int:
    count = int(count)
    if count < 0 or count > _MAX_COUNT:
        raise CorruptFileError(f"{what}: invalid value count {count}")
    return count


# -- varints ------------------------------------------------------------------

def uleb128(value: int) -> bytes:
    """Unsigned LEB128 ("varint") of a non-negative int."""
    if value < 0:
        raise ValueError("uleb128 of a negative number")
    out = bytearray()
    while True:
        b = value & 0x7F
        value >>= 7
        if value:
            out.append(b | 0x80)
        else:
            out.append(b)
            return bytes(out)


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


# -- bit packing --------------------------------------------------------------

def bit_width_of(max_value: int) -> int:
    """Bits needed to store every value in ``0..max_value``."""
    max_value = int(max_value)
    if max_value < 0:
        raise ValueError("bit_width_of a negative value")
    return max_value.bit_length()


def _uint_dtype(bit_width: int) -> type[np.unsignedinteger]:
    return np.uint32 if bit_width <= 32 else np.uint64


def bit_pack(values: np.ndarray, bit_width: int) -> bytes:
    """Pack ``values`` LSB-first with ``bit_width`` bits each (0..64) into ``ceil(n*bw/8)`` bytes.

    Only the low ``bit_width`` bits of each value are kept (negative values are
    taken as two's complement).
    """
    return _bit_pack_u8(values, bit_width)[: (len(values) * bit_width + 7) // 8].tobytes()


def _bit_pack_u8(values: np.ndarray, bit_width: int) -> np.ndarray:
    """Pack into whole groups of 8 values: a uint8 array of ``ceil(n/8) * bit_width`` bytes."""
    if not 0 <= bit_width <= 64:
        raise ValueError(f"bit width {bit_width} out of range 0..64")
    v = np.asarray(values).reshape(-1)
    n = len(v)
    if v.dtype.kind not in "iub":
        raise TypeError(f"cannot bit-pack {v.dtype}")
    if bit_width == 0 or n == 0:
        return np.zeros(0, np.uint8)
    groups = (n + 7) // 8
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


def bit_unpack(buf: Buffer, bit_width: int, count: int) -> np.ndarray:
    """Unpack ``count`` LSB-first values of ``bit_width`` bits (0..64).

    Returns uint32 for widths up to 32, uint64 above. Needs ``ceil(count*bw/8)`` bytes.
    """
    if not 0 <= bit_width <= 64:
        raise CorruptFileError(f"bit width {bit_width} out of range 0..64")
    count = _check_count(count, "bit-packed values")
    dt = _uint_dtype(bit_width)
    if bit_width == 0:
        return np.zeros(count, dt)
    u8 = as_u8(buf)
    need = (count * bit_width + 7) // 8
    if len(u8) < need:
        raise CorruptFileError(f"bit-packed data truncated: {count} values of {bit_width} bits need {need} bytes, "
                               f"have {len(u8)}")
    return _unpack_groups(u8[:need], bit_width, count).astype(dt, copy=False)


def _unpack_groups(u8: np.ndarray, bit_width: int, count: int) -> np.ndarray:
    """Unpack from bytes already checked to hold ``count`` values (zero-padding a partial group)."""
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


# -- RLE / bit-packing hybrid -------------------------------------------------

def encode_rle_bitpacked(values: np.ndarray, bit_width: int) -> bytes:
    """Encode with the hybrid (no length prefix).

    Runs of >= 8 equal values become RLE runs (after letting the preceding
    bit-packed stretch grow to a whole number of groups); everything else is
    bit-packed in runs of at most 63 groups, the last one zero-padded.
    """
    if not 0 <= bit_width <= 32:
        raise ValueError(f"bit width {bit_width} out of range 0..32")
    v = np.asarray(values).reshape(-1)
    n = len(v)
    if n == 0:
        return b""
    if v.dtype.kind not in "iub":
        raise TypeError(f"cannot RLE-encode {v.dtype}")
    if bit_width < 32 and n and (int(v.min()) < 0 or int(v.max()) >= (1 << bit_width)):
        raise ValueError(f"values do not fit in {bit_width} bits")
    vbytes = (bit_width + 7) // 8
    change = np.flatnonzero(v[1:] != v[:-1]) + 1
    starts = np.concatenate(([0], change))
    lens = np.diff(np.concatenate((starts, [n])))
    long_runs = np.flatnonzero(lens >= 8)
    parts: list[bytes] = []
    pos = 0
    if len(long_runs):
        run_starts = starts[long_runs].tolist()
        run_ends = (starts[long_runs] + lens[long_runs]).tolist()
        run_vals = v[starts[long_runs]].astype(np.int64).tolist()
        for s, e, val in zip(run_starts, run_ends, run_vals):
            a = pos + ((s - pos + 7) & ~7)  # end of the bit-packed stretch, whole groups
            if e - a < 8:
                continue
            if a > pos:
                _emit_bitpacked(parts, v[pos:a], bit_width)
            parts.append(uleb128((e - a) << 1))
            parts.append((val & 0xFFFFFFFF).to_bytes(4, "little")[:vbytes])
            pos = e
    if pos < n:
        _emit_bitpacked(parts, v[pos:], bit_width)
    return b"".join(parts)


def _emit_bitpacked(parts: list[bytes], chunk: np.ndarray, bit_width: int) -> None:
    packed = _bit_pack_u8(chunk, bit_width).tobytes()
    groups = (len(chunk) + 7) // 8
    step = _MAX_GROUPS_PER_RUN * bit_width
    full_header = bytes([(_MAX_GROUPS_PER_RUN << 1) | 1])
    g = 0
    off = 0
    while g < groups:
        ng = min(_MAX_GROUPS_PER_RUN, groups - g)
        parts.append(full_header if ng == _MAX_GROUPS_PER_RUN else uleb128((ng << 1) | 1))
        parts.append(packed[off:off + ng * bit_width] if bit_width else b"")
        g += ng
        off += step


def decode_rle_bitpacked(buf: Buffer, bit_width: int, count: int) -> np.ndarray:
    """Decode exactly ``count`` values (int32) of the hybrid encoding.

    Raises CorruptFileError when the runs end before ``count`` values. A final
    bit-packed run may hold padding values (and may even lack the bytes of
    the padding). ``bit_width == 0`` yields zeros without reading ``buf``.
    """
    return _decode_hybrid(buf, bit_width, count)[0]


def _decode_hybrid(buf: Buffer, bit_width: int, count: int) -> tuple[np.ndarray, int]:
    """Decode the hybrid; return the values and the bytes the runs used."""
    if not 0 <= bit_width <= 32:
        raise CorruptFileError(f"RLE/bit-packed bit width {bit_width} out of range 0..32")
    count = _check_count(count, "RLE/bit-packed hybrid")
    if bit_width == 0:
        return np.zeros(count, np.int32), 0
    if count == 0:
        return np.zeros(0, np.int32), 0
    u8 = as_u8(buf)
    b = buf if isinstance(buf, bytes) else u8.data
    end = len(b)
    vbytes = (bit_width + 7) // 8
    # per run: length in values, is-bit-packed flag, RLE value
    seg_len: list[int] = []
    seg_bp: list[bool] = []
    rle_vals: list[int] = []
    bp_slices: list[tuple[int, int]] = []  # byte ranges of bit-packed runs
    got = 0
    pos = 0
    while got < count:
        header, pos = read_uleb128(b, pos, end, "RLE/bit-packed run header")
        if header & 1:
            groups = header >> 1
            nvals = groups * 8
            take = min(nvals, count - got)
            nbytes = groups * bit_width
            need = (take * bit_width + 7) // 8
            if pos + need > end:
                raise CorruptFileError(f"bit-packed run truncated: needs {need} bytes at offset {pos}, have {end - pos}")
            if take:
                bp_slices.append((pos, min(pos + nbytes, end)))
                seg_len.append(take)
                seg_bp.append(True)
            pos = min(pos + nbytes, end)
            got += take
        else:
            run = header >> 1
            if pos + vbytes > end:
                raise CorruptFileError("RLE run value truncated")
            val = int.from_bytes(b[pos:pos + vbytes], "little")
            pos += vbytes
            take = min(run, count - got)
            if take:
                seg_len.append(take)
                seg_bp.append(False)
                rle_vals.append(val)
            got += take
    if not bp_slices:
        out = np.repeat(np.array(rle_vals, np.uint32).view(np.int32), np.array(seg_len, np.int64))
        return out, pos
    # unpack every bit-packed run in one go: runs are whole groups of bit_width bytes
    # except possibly the last one, which may be short of its padding bytes
    if len(bp_slices) == 1:
        a, z = bp_slices[0]
        packed = u8[a:z]
    else:
        packed = np.concatenate([u8[a:z] for a, z in bp_slices])
    # every run but the last holds exactly its groups*8 values, so the
    # concatenation is group-aligned and its first n_bp values are the ones used
    n_bp = sum(ln for ln, isbp in zip(seg_len, seg_bp) if isbp)
    bp_values = _unpack_groups(packed, bit_width, n_bp).astype(np.uint32, copy=False).view(np.int32)
    if not rle_vals:
        return bp_values, pos
    lens_arr = np.array(seg_len, np.int64)
    mask = np.repeat(np.array(seg_bp, bool), lens_arr)
    out = np.empty(count, np.int32)
    out[mask] = bp_values
    rle_lens = lens_arr[~np.array(seg_bp, bool)]
    out[~mask] = np.repeat(np.array(rle_vals, np.uint32).view(np.int32), rle_lens)
    return out, pos


# -- levels and booleans ------------------------------------------------------

def encode_levels_v1(levels: np.ndarray, bit_width: int) -> bytes:
    """4-byte little-endian length, then the hybrid (levels of v1 data pages)."""
    body = encode_rle_bitpacked(levels, bit_width)
    return len(body).to_bytes(4, "little") + body


def decode_levels_v1(buf: Buffer, bit_width: int, count: int) -> tuple[np.ndarray, int]:
    """Decode length-prefixed levels; return (levels int32, bytes consumed = 4 + length)."""
    u8 = as_u8(buf)
    if len(u8) < 4:
        raise CorruptFileError("level data truncated: no length prefix")
    length = int.from_bytes(u8[:4].tobytes(), "little")
    if length > len(u8) - 4:
        raise CorruptFileError(f"level data length {length} exceeds the {len(u8) - 4} bytes available")
    levels = decode_rle_bitpacked(u8[4:4 + length], bit_width, count)
    return levels, 4 + length


def decode_bit_packed_levels(buf: Buffer, bit_width: int, count: int) -> np.ndarray:
    """Decode the deprecated BIT_PACKED level encoding (MSB-first, no header) into int32 levels.

    The levels use ``ceil(count * bit_width / 8)`` bytes (no length prefix).
    """
    if not 0 <= bit_width <= 32:
        raise CorruptFileError(f"bit width {bit_width} out of range 0..32")
    count = _check_count(count, "BIT_PACKED levels")
    if bit_width == 0:
        return np.zeros(count, np.int32)
    u8 = as_u8(buf)
    need = (count * bit_width + 7) // 8
    if len(u8) < need:
        raise CorruptFileError(f"BIT_PACKED levels truncated: need {need} bytes, have {len(u8)}")
    bits = np.unpackbits(u8[:need], bitorder="big", count=count * bit_width).reshape(count, bit_width)
    weights = np.int64(1) << np.arange(bit_width - 1, -1, -1, dtype=np.int64)
    vals = bits.astype(np.int64) @ weights
    return vals.astype(np.uint32).view(np.int32)


def encode_rle_booleans(values: np.ndarray) -> bytes:
    """Booleans as RLE (data pages v2): 4-byte LE length + hybrid with bit width 1."""
    return encode_levels_v1(np.asarray(values, dtype=bool).view(np.uint8), 1)


def decode_rle_booleans(buf: Buffer, count: int) -> tuple[np.ndarray, int]:
    """Decode RLE booleans; return (bool array, bytes consumed)."""
    vals, used = decode_levels_v1(buf, 1, count)
    return vals.astype(bool), used
