"""Parquet split-block Bloom filters (SBBF).

This module knows nothing about files, column chunks or keys. It provides:

* :func:`hash_values` / :func:`hash_scalar`: the Parquet Bloom filter hash of
  column values, i.e. XXH64 over each value's PLAIN encoding without a length
  prefix (INT32/FLOAT 4 bytes LE, INT64/DOUBLE 8 bytes LE, INT96 12 bytes,
  FIXED_LEN_BYTE_ARRAY its width, BYTE_ARRAY the raw bytes), with the vectorized XXH64 of
  :mod:`pqbloom.xxhash64`.
* :func:`optimal_num_bytes`: the filter size parquet-java and Arrow pick for a
  number of distinct values and a false-positive probability.
* :class:`BloomFilter`: the filter itself (vectorized insert and check),
  serialization of the Thrift ``BloomFilterHeader`` plus bitset, and a strict
  parser that validates sizes before allocating anything.

BOOLEAN columns have no Bloom filter: the PLAIN encoding of a boolean is a
bit, not a byte string, and neither parquet-java nor Arrow C++ builds one
(pyarrow: "BloomFilterBuilder does not support boolean type"), so hashing
booleans raises :class:`~pqbloom.errors.UnsupportedError`.
"""

from __future__ import annotations

import math
import struct
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
import xxhash

from .arrays import BinaryArray
from .errors import BloomFilterError, CorruptFileError, UnsupportedError
from .format import decode_bloom_filter_header, encode_bloom_filter_header
from .format.enums import NUMERIC_DTYPES, PhysicalType, name_of
from .kernels.bloom import insert_hashes as insert_into_words
from .kernels.bloom import xxh64_binary, xxh64_fixed, xxh64_u32, xxh64_u64
from .kernels.reference.bloom import FILTER_CHUNK, MASK_SHIFT, SALT, WORDS_PER_BLOCK, block_indices, masks, missing_bits

__all__ = [
    "BLOCK_BYTES",
    "MIN_BLOOM_FILTER_BYTES",
    "MAX_BLOOM_FILTER_BYTES",
    "SALT",
    "BloomFilter",
    "hash_scalar",
    "hash_values",
    "optimal_num_bytes",
    "theoretical_fpp",
]

# --------------------------------------------------------------------------
# Constants
# --------------------------------------------------------------------------

#: Bytes per block: eight 32-bit words.
BLOCK_BYTES = 32
#: Smallest and largest filter Arrow C++ and parquet-java create or accept.
MIN_BLOOM_FILTER_BYTES = 32
MAX_BLOOM_FILTER_BYTES = 128 * 1024 * 1024


#: Bytes decoded when looking for the Thrift header (a valid one is ~16 bytes).
_HEADER_PROBE_BYTES = 256



# --------------------------------------------------------------------------
# Hashing Parquet values
# --------------------------------------------------------------------------

_INT96_WIDTH = 12


def _no_boolean() -> UnsupportedError:
    return UnsupportedError(
        "Bloom filters are not defined for BOOLEAN columns (parquet-java and Arrow do not build them)"
    )


def _as_numeric(values: Any, ptype: int) -> np.ndarray:
    target = NUMERIC_DTYPES[ptype]
    if isinstance(values, np.ndarray):
        a = values.reshape(-1) if values.ndim != 1 else values
        if a.dtype == target:
            return a
        if target.kind == "i" and a.dtype.kind in "iu" and a.dtype.itemsize == target.itemsize:
            # e.g. UINT_32 data stored as INT32: hash the same bits
            return a.astype(a.dtype.newbyteorder("<"), copy=False).view(target)
        if not np.can_cast(a.dtype, target, casting="safe"):
            raise TypeError(f"cannot hash {a.dtype} values as {name_of(PhysicalType, ptype)}")
        return a.astype(target)
    return np.asarray(values, dtype=target).reshape(-1)


def _as_matrix(values: Any, width: int, what: str) -> np.ndarray:
    if isinstance(values, BinaryArray):
        w = values.fixed_width()
        if len(values) and w != width:
            raise ValueError(f"{what} values must all be {width} bytes long")
        return values.as_matrix(width) if len(values) else np.zeros((0, width), np.uint8)
    m = np.asarray(values)
    if m.dtype != np.uint8 or m.ndim != 2:
        raise TypeError(f"{what} values must be a 2-D uint8 array, got {m.dtype} with shape {m.shape}")
    if m.shape[1] != width:
        raise ValueError(f"{what} values are {m.shape[1]} bytes wide, the column stores {width}")
    return m


def hash_values(values: Any, ptype: int, type_length: int | None = None) -> np.ndarray:
    """Bloom filter hashes (``uint64``) of column values of physical type ``ptype``.

    ``values`` uses the codebase's representation: a numpy array for INT32,
    INT64, FLOAT and DOUBLE; a 2-D ``uint8`` array ``(n, 12)`` for INT96 and
    ``(n, width)`` for FIXED_LEN_BYTE_ARRAY; a :class:`BinaryArray` (or a list
    of ``bytes``/``str``) for BYTE_ARRAY. ``type_length`` is only used to check
    FIXED_LEN_BYTE_ARRAY widths.
    """
    if ptype in NUMERIC_DTYPES:
        a = _as_numeric(values, ptype)
        out = np.empty(len(a), np.uint64)
        if a.dtype.itemsize == 4:
            xxh64_u32(np.ascontiguousarray(a).view(np.uint32), out)
        else:
            xxh64_u64(np.ascontiguousarray(a).view(np.uint64), out)
        return out
    if ptype == PhysicalType.BYTE_ARRAY:
        if not isinstance(values, BinaryArray):
            values = BinaryArray.from_pylist(values)
        return xxh64_binary(values)
    if ptype == PhysicalType.FIXED_LEN_BYTE_ARRAY:
        if isinstance(values, BinaryArray):
            width = type_length if type_length is not None else (values.fixed_width() or 0)
        else:
            width = np.asarray(values).shape[-1] if type_length is None else type_length
        return xxh64_fixed(_as_matrix(values, width, "FIXED_LEN_BYTE_ARRAY"))
    if ptype == PhysicalType.INT96:
        return xxh64_fixed(_as_matrix(values, _INT96_WIDTH, "INT96"))
    if ptype == PhysicalType.BOOLEAN:
        raise _no_boolean()
    raise ValueError(f"unknown physical type {ptype!r}")


def _scalar_bytes(value: Any, ptype: int, type_length: int | None) -> bytes:
    if ptype == PhysicalType.BOOLEAN:
        raise _no_boolean()
    if ptype in (PhysicalType.INT32, PhysicalType.INT64):
        if isinstance(value, float | np.floating) or not isinstance(value, int | np.integer):
            raise TypeError(f"expected an integer for {name_of(PhysicalType, ptype)}, got {type(value).__name__}")
        bits = 32 if ptype == PhysicalType.INT32 else 64
        v = int(value)
        if not -(1 << (bits - 1)) <= v < (1 << bits):
            raise OverflowError(f"{v} does not fit in {bits} bits")
        return (v & ((1 << bits) - 1)).to_bytes(bits // 8, "little")
    if ptype == PhysicalType.FLOAT:
        return struct.pack("<f", float(value))
    if ptype == PhysicalType.DOUBLE:
        return struct.pack("<d", float(value))
    if ptype in (PhysicalType.BYTE_ARRAY, PhysicalType.FIXED_LEN_BYTE_ARRAY, PhysicalType.INT96):
        if isinstance(value, str):
            b = value.encode("utf-8")
        elif isinstance(value, bytes | bytearray | memoryview | np.ndarray):
            b = bytes(value) if not isinstance(value, np.ndarray) else value.astype(np.uint8, copy=False).tobytes()
        else:
            raise TypeError(f"expected bytes or str, got {type(value).__name__}")
        expected = _INT96_WIDTH if ptype == PhysicalType.INT96 else type_length
        if ptype != PhysicalType.BYTE_ARRAY and expected is not None and len(b) != expected:
            raise ValueError(f"value has {len(b)} bytes, the column stores {expected}")
        return b
    raise ValueError(f"unknown physical type {ptype!r}")


def hash_scalar(value: Any, ptype: int, type_length: int | None = None) -> int:
    """Bloom filter hash of one Python value stored as physical type ``ptype``.

    ``str`` is UTF-8 encoded; integers are packed little-endian to 4 or 8 bytes
    (unsigned values up to ``2**bits - 1`` are accepted and hash like their
    signed reinterpretation); floats are packed as float32 for FLOAT and
    float64 for DOUBLE.
    """
    return xxhash.xxh64_intdigest(_scalar_bytes(value, ptype, type_length))


# --------------------------------------------------------------------------
# Sizing
# --------------------------------------------------------------------------

def _floor_pow2(x: int) -> int:
    return 1 << (x.bit_length() - 1)


def _ceil_pow2(x: int) -> int:
    return 1 << (x - 1).bit_length()


def optimal_num_bytes(ndv: int, fpp: float, max_bytes: int = MAX_BLOOM_FILTER_BYTES) -> int:
    """Filter size for ``ndv`` distinct values at false-positive probability ``fpp``.

    Same rule as parquet-java and Arrow C++: ``bits = -8 * ndv / ln(1 - fpp**(1/8))``
    truncated to an integer, rounded up to a power of two, then bytes = bits / 8
    clamped to ``[32, max_bytes]`` (``max_bytes`` rounded down to a power of two,
    at least 32).
    """
    if not 0.0 < fpp < 1.0:
        raise ValueError(f"fpp must be in (0, 1), got {fpp}")
    if ndv < 0:
        raise ValueError(f"ndv must be >= 0, got {ndv}")
    cap = max(MIN_BLOOM_FILTER_BYTES, _floor_pow2(max(int(max_bytes), 1)))
    bits_f = -8.0 * ndv / math.log1p(-(fpp ** (1.0 / 8)))
    if not bits_f < cap * 8:  # also catches inf/nan
        return cap
    bits = max(int(bits_f), MIN_BLOOM_FILTER_BYTES * 8)
    return min(_ceil_pow2(bits) // 8, cap)


def theoretical_fpp(ndv: int, num_bytes: int) -> float:
    """Expected false-positive probability after inserting ``ndv`` distinct values.

    Model: values land in blocks as Poisson(lambda = ndv / blocks); a block
    holding ``k`` values has each of its 8 words' probe bit set with
    probability ``1 - (31/32)**k``; a probe is a hit if all 8 are set.
    """
    blocks = num_bytes // BLOCK_BYTES
    lam = ndv / blocks
    if lam == 0:
        return 0.0
    kmax = int(lam + 12 * math.sqrt(lam) + 40)
    k = np.arange(kmax + 1, dtype=np.float64)
    log_pois = -lam + k * math.log(lam) - np.array([math.lgamma(x + 1) for x in k.tolist()])
    return float(np.sum(np.exp(log_pois) * (1.0 - (31.0 / 32.0) ** k) ** 8))


# --------------------------------------------------------------------------
# The filter
# --------------------------------------------------------------------------

def _check_num_bytes(num_bytes: int, *, available: int | None = None, offset: int | None = None) -> None:
    if num_bytes <= 0 or num_bytes % BLOCK_BYTES:
        raise CorruptFileError(f"Bloom filter size {num_bytes} is not a positive multiple of {BLOCK_BYTES}",
                               offset=offset)
    if num_bytes > MAX_BLOOM_FILTER_BYTES:
        raise CorruptFileError(f"Bloom filter size {num_bytes} exceeds the {MAX_BLOOM_FILTER_BYTES}-byte limit",
                               offset=offset)
    if available is not None and num_bytes > available:
        raise CorruptFileError(f"Bloom filter bitset of {num_bytes} bytes but only {available} bytes available",
                               offset=offset)


def _popcount32(words: np.ndarray) -> np.ndarray:
    if hasattr(np, "bitwise_count"):
        return np.bitwise_count(words)
    return np.unpackbits(words.view(np.uint8).reshape(*words.shape, 4), axis=-1).sum(axis=-1)  # pragma: no cover


class BloomFilter:
    """A Parquet split-block Bloom filter of ``num_bytes`` bytes.

    The bitset is held as a ``(num_blocks, 8)`` uint32 array; serialized, the
    words are little-endian and block ``i`` covers bytes ``[32*i, 32*i+32)``.
    """

    __slots__ = ("_words", "_physical", "_convert")

    def __init__(self, num_bytes: int) -> None:
        """An empty filter; ``num_bytes`` must be a positive multiple of 32 (a power of two is not required)."""
        num_bytes = int(num_bytes)
        if num_bytes <= 0 or num_bytes % BLOCK_BYTES or num_bytes > MAX_BLOOM_FILTER_BYTES:
            raise ValueError(
                f"num_bytes must be a positive multiple of {BLOCK_BYTES} up to {MAX_BLOOM_FILTER_BYTES}, got {num_bytes}"
            )
        self._words = np.zeros((num_bytes // BLOCK_BYTES, WORDS_PER_BLOCK), np.uint32)
        self._physical: tuple[int, int | None] | None = None
        self._convert: Callable[[Any], list[Any]] | None = None

    def for_column(self, ptype: int, type_length: int | None = None,
                   convert: Callable[[Any], list[Any]] | None = None) -> BloomFilter:
        """Bind the filter to the physical type of the column it was read from, so that
        :meth:`might_contain` and :meth:`insert` need only the values (returns ``self``).

        ``convert`` maps a value a user probes for (a ``datetime``, a ``Decimal``...) to the physical
        values it may be stored as (none: it cannot be in the column); a filter read from a file gets
        the column's (:func:`pqbloom.schema.literals.physical_candidates`)."""
        self._physical = (ptype, type_length)
        self._convert = convert
        return self

    def _type(self, ptype: int | None, type_length: int | None) -> tuple[int, int | None]:
        if ptype is not None:
            return ptype, type_length
        if self._physical is None:
            raise TypeError("this Bloom filter is not bound to a column: pass the physical type")
        return self._physical

    # -- construction -------------------------------------------------------
    @classmethod
    def from_distinct_count(cls, ndv: int, fpp: float = 0.01, max_bytes: int = MAX_BLOOM_FILTER_BYTES) -> BloomFilter:
        """An empty filter sized by :func:`optimal_num_bytes`."""
        return cls(optimal_num_bytes(ndv, fpp, max_bytes))

    @classmethod
    def from_bitset(cls, bitset: bytes | bytearray | memoryview | np.ndarray) -> BloomFilter:
        """A filter holding a copy of a serialized bitset (no header)."""
        raw = np.frombuffer(bitset, dtype=np.uint8) if not isinstance(bitset, np.ndarray) else bitset.view(np.uint8)
        _check_num_bytes(len(raw))
        bf = cls.__new__(cls)
        bf._words = raw.reshape(-1).view("<u4").astype(np.uint32).reshape(-1, WORDS_PER_BLOCK)
        bf._physical = None
        bf._convert = None
        return bf

    @staticmethod
    def parse_header(buf: bytes | bytearray | memoryview, *, offset: int | None = None,
                     row_group: int | None = None, column: str | None = None) -> tuple[int, int]:
        """Decode and validate a Thrift ``BloomFilterHeader`` at the start of ``buf``.

        Returns ``(numBytes, header_length)``. Only the header is validated: algorithm BLOCK, hash
        XXHASH, compression UNCOMPRESSED, numBytes a power of two from 32 B to 128 MiB (what Arrow
        C++ and parquet-java write; a filter outside that is not trusted). The caller checks the
        header against the footer (:mod:`pqbloom.file.bloom_site`) and fetches the bitset or single
        32-byte blocks after it. ``offset``, ``row_group`` and ``column`` only serve the
        :class:`~pqbloom.errors.BloomFilterError` raised for a bad header.
        """
        where: dict[str, Any] = {"offset": offset, "row_group": row_group, "column": column}
        mv = memoryview(buf).cast("B")
        try:
            try:
                header, used = decode_bloom_filter_header(mv[:_HEADER_PROBE_BYTES], offset=offset)
            except CorruptFileError:
                if len(mv) <= _HEADER_PROBE_BYTES:
                    raise
                # A header with unknown extra fields may be longer than the probe.
                header, used = decode_bloom_filter_header(mv, offset=offset)
        except CorruptFileError as exc:
            raise BloomFilterError(f"Bloom filter header does not decode: {exc}", **where) from None
        if header.num_bytes is None:
            raise BloomFilterError("Bloom filter header has no numBytes", **where)
        if not header.block:
            raise BloomFilterError("Bloom filter algorithm is not BLOCK (split-block): unknown algorithm", **where)
        if not header.xxhash:
            raise BloomFilterError("Bloom filter hash is not XXHASH: unknown hash", **where)
        if not header.uncompressed:
            raise BloomFilterError("Bloom filter compression is not UNCOMPRESSED: unknown compression", **where)
        num_bytes = header.num_bytes
        if not (MIN_BLOOM_FILTER_BYTES <= num_bytes <= MAX_BLOOM_FILTER_BYTES and num_bytes & (num_bytes - 1) == 0):
            raise BloomFilterError(f"Bloom filter header says numBytes {num_bytes}, not a power of two from "
                                   f"{MIN_BLOOM_FILTER_BYTES} to {MAX_BLOOM_FILTER_BYTES}", **where)
        return num_bytes, used

    @classmethod
    def parse(cls, buf: bytes | bytearray | memoryview, *, offset: int | None = None) -> tuple[BloomFilter, int]:
        """Parse header + bitset from the start of ``buf``; return the filter and the bytes consumed.

        Every size is validated against the limits and against ``len(buf)``
        before the bitset is allocated. Malformed input raises
        :class:`~pqbloom.errors.CorruptFileError`.
        """
        mv = memoryview(buf).cast("B")
        num_bytes, used = cls.parse_header(mv, offset=offset)
        _check_num_bytes(num_bytes, available=len(mv) - used, offset=offset)
        return cls.from_bitset(mv[used:used + num_bytes]), used + num_bytes

    # -- properties ---------------------------------------------------------
    @property
    def num_bytes(self) -> int:
        return self._words.size * 4

    @property
    def num_blocks(self) -> int:
        return int(self._words.shape[0])

    @property
    def words(self) -> np.ndarray:
        """The ``(num_blocks, 8)`` uint32 array (live, not a copy)."""
        return self._words

    def bits_per_value(self, ndv: int) -> float:
        """Bits of filter per distinct value for ``ndv`` distinct values."""
        return self.num_bytes * 8 / ndv if ndv else math.inf

    def fill_ratio(self) -> float:
        """Fraction of the bits that are set."""
        return float(_popcount32(self._words).sum(dtype=np.int64)) / (self.num_bytes * 8)

    def estimated_fpp(self) -> float:
        """False-positive probability of this filter for a uniformly random absent hash.

        A probe picks a block (uniformly, for uniform hashes) and one bit in
        each of its 8 words; it is a false positive if all 8 are set, so the
        estimate is ``mean over blocks of prod over words of popcount(word)/32``.
        This uses the actual per-word fill, so it is accurate whatever the
        insertion skew.
        """
        fill = _popcount32(self._words).astype(np.float64) / 32.0
        return float(np.prod(fill, axis=1).mean())

    # -- hashes -------------------------------------------------------------
    @staticmethod
    def block_index(h: int | np.ndarray, num_blocks: int) -> Any:
        """Block of hash(es) ``h`` in a filter of ``num_blocks`` blocks: ``((h >> 32) * num_blocks) >> 32``."""
        if isinstance(h, np.ndarray):
            return block_indices(h.astype(np.uint64, copy=False), num_blocks)
        return ((int(h) >> 32) * num_blocks) >> 32

    @staticmethod
    def check_block(block_words: np.ndarray | Sequence[int] | bytes, h: int) -> bool:
        """Probe one block (8 uint32 words, or its 32 serialized bytes) with the low 32 bits of ``h``.

        Lets a reader fetch only the 32-byte block at ``block_index(h, num_blocks)``.
        """
        if isinstance(block_words, bytes | bytearray | memoryview):
            words = struct.unpack("<8I", block_words)
        else:
            words = tuple(int(w) for w in np.asarray(block_words).reshape(-1))
        if len(words) != WORDS_PER_BLOCK:
            raise ValueError("a block has 8 words")
        x = int(h) & 0xFFFFFFFF
        for word, salt in zip(words, SALT):
            if not (word >> (((x * salt) & 0xFFFFFFFF) >> MASK_SHIFT)) & 1:
                return False
        return True

    def insert_hashes(self, h: np.ndarray) -> None:
        """Insert 64-bit hashes (any integer array, read as uint64): one compiled pass
        (:func:`pqbloom.kernels.bloom.insert_hashes`), or its numpy reference."""
        insert_into_words(self._words, np.asarray(h).reshape(-1).astype(np.uint64, copy=False))

    def check_hashes(self, h: np.ndarray) -> np.ndarray:
        """For each 64-bit hash, whether it might have been inserted (``bool`` array)."""
        hashes = np.asarray(h).reshape(-1).astype(np.uint64, copy=False)
        out = np.empty(len(hashes), bool)
        words64 = self._words.view(np.uint64)
        z = self.num_blocks
        for s in range(0, len(hashes), FILTER_CHUNK):
            part = hashes[s:s + FILTER_CHUNK]
            m = masks(part.astype(np.uint32)).view(np.uint64)
            missing = missing_bits(words64, block_indices(part, z), m)
            np.equal(missing, 0, out=out[s:s + len(part)])
        return out

    def insert_hash(self, h: int) -> None:
        """Insert one 64-bit hash."""
        block = self._words[self.block_index(h, self.num_blocks)]
        x = int(h) & 0xFFFFFFFF
        for i, salt in enumerate(SALT):
            block[i] |= np.uint32(1 << (((x * salt) & 0xFFFFFFFF) >> MASK_SHIFT))

    def check_hash(self, h: int) -> bool:
        """Whether one 64-bit hash might have been inserted."""
        return self.check_block(self._words[self.block_index(h, self.num_blocks)], h)

    # -- values -------------------------------------------------------------
    def insert(self, values: Any, ptype: int | None = None, type_length: int | None = None) -> None:
        """Insert column values of physical type ``ptype`` (see :func:`hash_values`; the bound
        column's type when omitted)."""
        self.insert_hashes(hash_values(values, *self._type(ptype, type_length)))

    def might_contain(self, value: Any, ptype: int | None = None, type_length: int | None = None) -> bool:
        """Whether one Python value might be in the filter (see :func:`hash_scalar`); ``ptype``
        defaults to the type of the column the filter was read from.

        A filter read from a column (without ``ptype``) takes the column's logical values: ``str``,
        ``bytes``, ``int``, ``float``, ``datetime`` (aware: its UTC instant; naive: wall-clock time in
        UTC), ``date``, ``time``, ``Decimal``, ``uuid.UUID``, numpy scalars. A value the column cannot
        hold (out of range, not whole at the decimal's scale or the timestamp's unit) is absent: False."""
        if ptype is None and self._convert is not None:
            phys = self._type(None, None)
            return any(self.check_hash(hash_scalar(c, *phys)) for c in self._convert(value))
        return self.check_hash(hash_scalar(value, *self._type(ptype, type_length)))

    def might_contain_many(self, values: Any, ptype: int | None = None, type_length: int | None = None) -> np.ndarray:
        """Vectorized :meth:`might_contain` over column values (see :func:`hash_values`)."""
        return self.check_hashes(hash_values(values, *self._type(ptype, type_length)))

    # -- serialization ------------------------------------------------------
    def bitset(self) -> bytes:
        """The serialized bitset (little-endian words)."""
        return self._words.astype("<u4", copy=False).tobytes()

    def header_bytes(self) -> bytes:
        """The compact-Thrift ``BloomFilterHeader`` (BLOCK / XXHASH / UNCOMPRESSED)."""
        return encode_bloom_filter_header(self.num_bytes)

    def to_bytes(self) -> bytes:
        """Header followed by bitset: what a file stores at ``bloom_filter_offset``."""
        return self.header_bytes() + self.bitset()

    def __eq__(self, other: object) -> bool:
        return isinstance(other, BloomFilter) and np.array_equal(self._words, other._words)

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"BloomFilter(num_bytes={self.num_bytes}, fill_ratio={self.fill_ratio():.4f})"
