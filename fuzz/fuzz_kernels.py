"""Fuzz the compiled kernels (pqbloom.kernels) differentially against their numpy reference.

atheris instruments Python, not Cython, so this is a deterministic random-mutation loop: each run
picks a kernel, builds a valid input from random values (pqbloom's encoders where there is one),
then mutates it (byte flips, interesting values, truncations, hostile lengths and indices) and calls
the kernel through the dispatch, compiled and then reference. A run fails when the two disagree
(result, or error type and message), or when the compiled path raises anything but a
``pqbloom.errors`` exception that the reference raises too. An out-of-bounds access that does not
crash is only caught with a sanitizer: ``scripts/sanitize.sh`` (run by CI) builds the kernels with
AddressSanitizer and UndefinedBehaviorSanitizer in a scratch copy of the tree and runs this loop and
a short ``fuzz_reader.py`` run under them; pass it other arguments for a longer run::

    bash scripts/sanitize.sh --runs 200000 --seed 3

Examples::

    python fuzz/fuzz_kernels.py --runs 20000 --seed 1            # deterministic (CI)
    python fuzz/fuzz_kernels.py --seconds 600 --seed 7 --only hybrid
"""

from __future__ import annotations

import argparse
import os
import random
import struct
import sys
import time
import traceback
from collections.abc import Callable
from typing import Any

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))  # run from a checkout without installing

import numpy as np  # noqa: E402

from pqbloom import compression, kernels  # noqa: E402
from pqbloom.arrays import BinaryArray  # noqa: E402
from pqbloom.encodings.bitpack import uleb128  # noqa: E402
from pqbloom.encodings.delta import encode_delta_binary_packed  # noqa: E402
from pqbloom.encodings.rle import encode_rle_bitpacked  # noqa: E402
from pqbloom.errors import ParquetError  # noqa: E402
from pqbloom.file.column_writer import EncodedPage, compress_page  # noqa: E402
from pqbloom.file.pages import page_header_fields  # noqa: E402
from pqbloom.format import T, encode  # noqa: E402
from pqbloom.kernels import binary as binary_kernels  # noqa: E402
from pqbloom.kernels import bloom as bloom_kernels  # noqa: E402
from pqbloom.kernels import decimals as decimal_kernels  # noqa: E402
from pqbloom.kernels import delta as delta_kernels  # noqa: E402
from pqbloom.kernels import dictionary as dictionary_kernels  # noqa: E402
from pqbloom.kernels import hybrid as hybrid_kernels  # noqa: E402
from pqbloom.kernels import levels as level_kernels  # noqa: E402
from pqbloom.kernels import objects as object_kernels  # noqa: E402

INTERESTING = [0x00, 0x01, 0x02, 0x03, 0x7F, 0x80, 0x81, 0xFE, 0xFF]


# -- input builders ---------------------------------------------------------------------------------

def mutate(rng: random.Random, data: bytes) -> bytes:
    b = bytearray(data)
    for _ in range(rng.randint(0, 4)):
        op = rng.randint(0, 5)
        if op == 0 and b:
            b[rng.randrange(len(b))] = rng.choice(INTERESTING)
        elif op == 1 and b:
            b[rng.randrange(len(b))] ^= 1 << rng.randint(0, 7)
        elif op == 2:
            b = b[:rng.randint(0, len(b))]
        elif op == 3:  # a hostile varint or length somewhere
            at = rng.randint(0, len(b))
            word = rng.choice([uleb128(rng.choice([0, 1, 2**31, 2**32, 2**63, 2**64 - 1])),
                               struct.pack("<I", rng.choice([0xFFFFFFFF, 0x80000000, 0x7FFFFFFF, len(b)])),
                               bytes([0xFF] * rng.randint(1, 11))])
            b[at:at + len(word)] = word
        elif op == 4:
            b += bytes(rng.randrange(256) for _ in range(rng.randint(0, 8)))
    return bytes(b)


def as_buffer(rng: random.Random, data: bytes) -> Any:
    """``data`` as bytes, or as a numpy array of exactly its size (a sanitizer then sees reads past
    its end; a bytes object has a terminating NUL after its data)."""
    return data if rng.random() < 0.5 else np.frombuffer(data, np.uint8).copy()


def rand_bytes(rng: random.Random, n: int) -> bytes:
    return bytes(rng.randrange(256) for _ in range(n))


def rand_values(rng: random.Random, max_n: int = 60, max_len: int = 24) -> list[bytes]:
    alphabet = rng.choice([b"ab", b"\x00\xff\x80", bytes(range(256))])
    return [bytes(rng.choice(alphabet) for _ in range(rng.randint(0, max_len))) for _ in range(rng.randint(0, max_n))]


def rand_binary(rng: random.Random, values: list[bytes]) -> BinaryArray:
    b = BinaryArray.from_pylist(values)
    lead = rng.randint(0, 3)
    if not lead:
        return b
    return BinaryArray(b.offsets + lead, np.concatenate([np.full(lead, 0xEE, np.uint8), b.data]))


def case_hybrid(rng: random.Random) -> tuple[Callable[..., Any], tuple[Any, ...]]:
    bw = rng.choice([0, 1, 2, 3, 4, 7, 8, 9, 15, 16, 17, 24, 31, 32, rng.randint(0, 33)])
    n = rng.randint(0, 300)
    dtype = rng.choice([np.int8, np.int16, np.int32, np.bool_])
    if dtype in (np.int8, np.int16) and bw >= np.dtype(dtype).itemsize * 8:
        dtype = np.int32
    if 0 < bw <= 32:
        top = (1 << min(bw, 31)) - 1
        vals = np.array([rng.choice([0, top, rng.randint(0, top)]) for _ in range(n)], np.int64)
        vals = np.repeat(vals, [rng.choice([1, 1, 9, 30]) for _ in range(n)])[:n]
        data = encode_rle_bitpacked(vals, bw)
    else:
        data = rand_bytes(rng, rng.randint(0, 40))
    data = mutate(rng, data) if rng.random() < 0.8 else data
    count = rng.choice([n, rng.randint(0, n + 20)])

    def run(buf: bytes, bit_width: int, count: int, dt: Any) -> tuple[np.ndarray, int]:
        out = np.zeros(count + 2, dt)
        used = hybrid_kernels.decode_hybrid(buf, bit_width, count, out)
        return out[:count], used
    return run, (as_buffer(rng, data), bw, count, dtype)


def case_gather(rng: random.Random) -> tuple[Callable[..., Any], tuple[Any, ...]]:
    """A dictionary page's indices looked up into rows (nulls placed): indices maybe out of range,
    runs mutated, flags that disagree with the count."""
    n = rng.randint(0, 200)
    size = rng.randint(1, 40)
    width = rng.choice([1, 2, 3, 4, 8, 12, 16])
    dictionary = np.frombuffer(rand_bytes(rng, size * width), np.uint8).reshape(size, width)
    if width in (4, 8) and rng.random() < 0.5:
        dictionary = dictionary.reshape(-1).view(np.int32 if width == 4 else np.int64)
    elif width == 1 and rng.random() < 0.5:  # one byte per entry, 1-D: a filter's table (file/dictionary_hits)
        dictionary = dictionary.reshape(-1)
    idx = np.array([rng.randint(0, size + (2 if rng.random() < 0.1 else -1)) for _ in range(n)], np.int64)
    bw = max(int(idx.max()).bit_length() if n else 0, rng.choice([0, 1, 5]))
    data = bytes([bw]) + encode_rle_bitpacked(idx, bw) if bw else bytes([0])
    data = mutate(rng, data) if rng.random() < 0.5 else data
    nulls = rng.random() < 0.6
    present = np.array([rng.random() < 0.7 for _ in range(n + rng.randint(0, 30))], bool) if nulls else None
    count = int(np.count_nonzero(present)) if present is not None else n
    if rng.random() < 0.1:
        count = max(0, count + rng.choice([-1, 1]))

    def run(buf: Any, count: int, dictionary: np.ndarray, present: np.ndarray | None) -> Any:
        rows = len(present) if present is not None else count
        out = np.full((rows,) + dictionary.shape[1:], 7, dictionary.dtype)
        used = hybrid_kernels.gather_dictionary(buf, count, dictionary, present, out)
        return out, used
    return run, (as_buffer(rng, data), count, dictionary, present)


def case_page_levels(rng: random.Random) -> tuple[Callable[..., Any], tuple[Any, ...]]:
    """A data page's levels (v1: length-prefixed blocks; v2: stated lengths), then value bytes."""
    rep_bw, def_bw = rng.choice([0, 0, 1, 2, 3]), rng.choice([0, 1, 1, 2, 3, 7, 8])
    dtype = np.int8 if max(rep_bw, def_bw) <= 7 else np.int32
    n = rng.randint(0, 200)
    blocks = []
    for bw in (rep_bw, def_bw):
        vals = np.array([rng.randint(0, (1 << bw) - 1) if bw else 0 for _ in range(n)], np.int64)
        blocks.append(encode_rle_bitpacked(np.repeat(vals, rng.choice([1, 12]))[:n], bw) if bw else b"")
    v2 = rng.random() < 0.5
    lens = [len(b) for b in blocks]
    data = b"".join(blocks) if v2 else b"".join(len(b).to_bytes(4, "little") + b for b in blocks if b)
    data = mutate(rng, data + rand_bytes(rng, rng.randint(0, 8))) if rng.random() < 0.8 else data
    count = rng.choice([n, rng.randint(0, n + 20)])
    rl, dl = (lens[0], lens[1]) if v2 else (-1, -1)
    if v2 and rl + dl > len(data):  # the page reader checks the stated lengths against the page first
        rl, dl = 0, min(lens[1], len(data))

    def run(buf: Any, count: int, rep_bw: int, def_bw: int, rl: int, dl: int, dt: Any) -> tuple[Any, ...]:
        reps, defs = np.zeros(count, dt), np.zeros(count, dt)
        used, present = hybrid_kernels.page_levels(buf, count, rep_bw, def_bw, rl, dl, reps, defs, (1 << def_bw) - 1)
        return (reps if rep_bw else None), (defs if def_bw else None), used, present
    return run, (as_buffer(rng, data), count, rep_bw, def_bw, rl, dl, dtype)


def case_plain_decode(rng: random.Random) -> tuple[Callable[..., Any], tuple[Any, ...]]:
    values = rand_values(rng)
    data = b"".join(struct.pack("<I", len(v)) + v for v in values)
    data = mutate(rng, data) if rng.random() < 0.8 else data
    return binary_kernels.decode_plain_byte_array, (as_buffer(rng, data),
                                             rng.choice([len(values), rng.randint(0, len(values) + 3)]))


def case_plain_decode_into(rng: random.Random) -> tuple[Callable[..., Any], tuple[Any, ...]]:
    fn, (buf, count) = case_plain_decode(rng)

    def run(buf: Any, count: int, spare: int, capacity: int) -> Any:
        offsets = np.zeros(max(count + 1 + spare, 0), np.int64)
        data = np.zeros(capacity, np.uint8)
        got = binary_kernels.decode_plain_byte_array_into(buf, count, offsets, data, 5)
        return None if got is None else (got, offsets[:count + 1], data[:got[0]])
    return run, (buf, count, rng.randint(-2, 2), rng.randint(0, 600))


def case_take(rng: random.Random) -> tuple[Callable[..., Any], tuple[Any, ...]]:
    arr = rand_binary(rng, rand_values(rng))
    n = len(arr)
    idx = [rng.choice([rng.randint(0, max(n - 1, 0)), n, -1, n - 1, 2**31 - 1, -(2**31)]) if rng.random() < 0.05
           else rng.randint(0, max(n - 1, 0)) for _ in range(rng.randint(0, 80))]
    return binary_kernels.take_binary, (arr, np.array(idx, rng.choice([np.int32, np.int64])))


def case_take_into(rng: random.Random) -> tuple[Callable[..., Any], tuple[Any, ...]]:
    fn, (arr, idx) = case_take(rng)

    def run(arr: BinaryArray, idx: np.ndarray, spare: int, capacity: int, base: int) -> Any:
        offsets = np.zeros(max(len(idx) + 1 + spare, 0), np.int64)
        data = np.zeros(capacity + 64, np.uint8)  # the region, then bytes no write may reach
        got = binary_kernels.take_binary_into(arr, idx, offsets, data[:capacity], base)
        assert not data[capacity:].any(), "take_binary_into wrote past its data"
        return None if got is None else (got, offsets[:len(idx) + 1], data[:got])
    return run, (arr, idx, rng.randint(-2, 2), rng.randint(0, 600), rng.choice([0, 7, 2**40]))


def case_scatter_into(rng: random.Random) -> tuple[Callable[..., Any], tuple[Any, ...]]:
    n = rng.randint(0, 300)
    mask = np.array([rng.random() < rng.choice([0.02, 0.5, 0.98]) for _ in range(n)], bool)
    nd = max(0, int(mask.sum()) + rng.choice([0, 0, 0, -1, 1]))
    dtype = rng.choice(["i1", "i2", "i4", "i8", "f8"])
    shift = rng.randint(0, 7)  # a page's values start at any byte
    width = np.dtype(dtype).itemsize
    dense = np.frombuffer(memoryview(rand_bytes(rng, nd * width + shift))[shift:], dtype)

    def run(dense: np.ndarray, mask: np.ndarray) -> Any:
        out = np.full(len(mask) + 4, 9, dense.dtype)  # the rows, then rows no write may reach
        values, validity = level_kernels.scatter_nulls(dense, mask, 1, "page", out[:len(mask)])
        assert (out[len(mask):] == 9).all(), "scatter_nulls wrote past its rows"
        return values, validity
    return run, (dense, mask)


def case_spread(rng: random.Random) -> tuple[Callable[..., Any], tuple[Any, ...]]:
    """A byte-array column's dense offsets spread to its rows in place; sometimes a count the flags
    do not agree with (refused, nothing written)."""
    n = rng.randint(0, 300)
    mask = np.array([rng.random() < rng.choice([0.02, 0.5, 0.98]) for _ in range(n)], bool)
    count = max(0, int(mask.sum()) + rng.choice([0, 0, 0, -1, 1]))
    extra = rng.randint(0, 3)
    dense = np.cumsum([0] + [rng.randint(0, 9) for _ in range(count)], dtype=np.int64)

    def run(dense: np.ndarray, mask: np.ndarray) -> Any:
        full = np.full(max(len(mask), count) + 1 + extra, -9, np.int64)
        full[:len(dense)] = dense
        level_kernels.spread_offsets(full, mask, count)
        return full
    return run, (dense, mask)


def case_scatter(rng: random.Random) -> tuple[Callable[..., Any], tuple[Any, ...]]:
    n = rng.randint(0, 100)
    max_level = rng.randint(0, 3)
    dtype = rng.choice(["i1", "i2", "i4", "mask"])
    levels = np.array([rng.randint(0, 3) for _ in range(n)], np.int8)
    lv = levels == max_level if dtype == "mask" else levels.astype(dtype)
    present = int(np.count_nonzero(levels == max_level))
    nd = max(0, present + rng.choice([0, 0, 0, -1, 1]))
    kind = rng.choice(["f8", "i4", "bool", "flba", "binary"])
    dense: Any
    if kind == "binary":
        dense = rand_binary(rng, rand_values(rng, 0, 8)[:0] + [rand_bytes(rng, rng.randint(0, 5)) for _ in range(nd)])
    elif kind == "flba":
        dense = np.frombuffer(rand_bytes(rng, nd * 3), np.uint8).reshape(nd, 3)
    elif kind == "bool":
        dense = np.array([rng.random() < 0.5 for _ in range(nd)], bool)
    else:
        dense = np.array([rng.randint(-100, 100) for _ in range(nd)], kind)
    return level_kernels.scatter_nulls, (dense, lv, max_level)


def case_prefix(rng: random.Random) -> tuple[Callable[..., Any], tuple[Any, ...]]:
    suffixes = rand_binary(rng, rand_values(rng, 40, 6))
    n = len(suffixes)
    prefix = []
    prev = 0
    for i in range(n):
        p = min(rng.randint(0, prev), 2**31 - 1) if i else 0
        if rng.random() < 0.03:
            p = rng.choice([-1, min(prev + 1, 2**31 - 1), 2**31 - 1, -(2**31)])
        prefix.append(p)
        prev = min(max(p, 0) + len(suffixes[i]), 2**31 - 1)
    return binary_kernels.rebuild_prefixes, (np.array(prefix, np.int32), suffixes)


def case_list_offsets(rng: random.Random) -> tuple[Callable[..., Any], tuple[Any, ...]]:
    n = rng.randint(0, 80)
    dt = rng.choice(["i1", "i2", "i4"])
    defs = np.array([rng.randint(0, 4) for _ in range(n)], dt)
    reps = np.array([0 if rng.random() < 0.3 else rng.randint(0, 2) for _ in range(n)], rng.choice(["i1", "i4"]))
    return level_kernels.list_offsets, (defs, reps, rng.randint(0, 4), rng.randint(0, 3), rng.randint(0, 2))


def case_check_levels(rng: random.Random) -> tuple[Callable[..., Any], tuple[Any, ...]]:
    """A nested chunk's levels: mostly valid list<list<...>> shapes, some entries out of range."""
    max_rep = rng.randint(1, 4)
    rep_def = [0] + sorted(rng.sample(range(1, 2 * max_rep + 2), max_rep))
    max_def = rep_def[-1] + rng.randint(0, 2)
    n = rng.randint(1, 120)
    reps = [0] + [rng.choice([0, rng.randint(0, max_rep)]) for _ in range(n - 1)]
    defs = [max(rep_def[r], rng.randint(0, max_def)) if rng.random() < 0.9 else rng.randint(0, max_def) for r in reps]
    for _ in range(rng.choice([0, 0, 1, 2])):  # out of range, negative, a first record continuing
        (reps if rng.random() < 0.5 else defs)[rng.randrange(n)] = rng.choice([-1, max_rep + 1, max_def + 1, 1])
    dt = rng.choice(["i1", "i2", "i4"])
    return level_kernels.check_chunk_levels, (np.array(defs, dt), np.array(reps, dt), max_def, max_rep, rep_def, n)


def case_argminmax(rng: random.Random) -> tuple[Callable[..., Any], tuple[Any, ...]]:
    if rng.random() < 0.3:
        n, w = rng.randint(0, 20), rng.randint(0, 9)
        return binary_kernels.binary_argminmax, (np.frombuffer(rand_bytes(rng, n * w), np.uint8).reshape(n, w) % 3,)
    return binary_kernels.binary_argminmax, (rand_binary(rng, rand_values(rng)),)


def case_encode(rng: random.Random) -> tuple[Callable[..., Any], tuple[Any, ...]]:
    return binary_kernels.encode_plain_byte_array, (rand_binary(rng, rand_values(rng)),)


def case_decimal(rng: random.Random) -> tuple[Callable[..., Any], tuple[Any, ...]]:
    width = rng.choice([16, 32])
    kind = rng.randint(0, 2)
    n = rng.randint(0, 30)
    if kind == 0:
        w = rng.randint(0, 40)
        raw = bytearray(rand_bytes(rng, n * w))
        for i in range(n):  # mostly sign extension in front, sometimes not
            if w > width and rng.random() < 0.9:
                fill = 0xFF if raw[i * w + w - width] & 0x80 else 0
                raw[i * w:i * w + w - width] = bytes([fill]) * (w - width)
        return decimal_kernels.decimal_buffer, (np.frombuffer(bytes(raw), np.uint8).reshape(n, w), width)
    if kind == 1:
        vals = []
        for _ in range(n):
            v = rng.randint(-(2 ** (8 * width - 1)), 2 ** (8 * width - 1) - 1) >> rng.randint(0, 8 * width)
            size = (v.bit_length() + 8) // 8 + rng.randint(0, 3)
            vals.append(v.to_bytes(size, "big", signed=True) if rng.random() < 0.95 else rand_bytes(rng, 40))
        return decimal_kernels.decimal_buffer, (rand_binary(rng, vals), width)
    return decimal_kernels.decimal_buffer, (np.array([rng.randint(-(2**63), 2**63 - 1) for _ in range(n)], np.int64), width)


def _rand_mask(rng: random.Random, n: int) -> np.ndarray | None:
    """None, a mask of ``n`` flags, or (rarely) one of the wrong length."""
    r = rng.random()
    if r < 0.4:
        return None
    size = n if r < 0.95 else rng.randint(0, n + 2)
    return np.array([rng.random() < 0.3 for _ in range(size)], dtype=bool)


def case_decimal_objects(rng: random.Random) -> tuple[Callable[..., Any], tuple[Any, ...]]:
    """Decimal objects of int64 values or little-endian words of any width the kernel takes (and some it
    refuses), at any scale (int32 extremes and beyond included)."""
    n = rng.randint(0, 40)
    scale = rng.choice([0, 2, -3, 38, 76, rng.randint(-200, 200), 2**31 - 1, -(2**31), 2**31])
    if rng.random() < 0.4:
        values = np.array([rng.randint(-(2**63), 2**63 - 1) >> rng.randint(0, 63) for _ in range(n)], np.int64)
    else:
        width = rng.choice([4, 8, 12, 16, 32, 48, 64] * 4 + [0, 6, 68])
        raw = bytearray(rand_bytes(rng, n * width))
        for i in range(n):  # mostly small values (sign extension above a few bytes), sometimes extremes
            if width and rng.random() < 0.6:
                keep = rng.randint(0, width)
                fill = 0xFF if keep and raw[i * width + keep - 1] & 0x80 else 0
                raw[i * width + keep:(i + 1) * width] = bytes([fill]) * (width - keep)
        values = np.frombuffer(bytes(raw), np.uint8).reshape(n, width)
    return object_kernels.decimal_objects, (values, scale, _rand_mask(rng, n))


def case_time_objects(rng: random.Random) -> tuple[Callable[..., Any], tuple[Any, ...]]:
    """time objects of microseconds, mostly within a day, some outside it (masked or not)."""
    day = 86_400_000_000
    n = rng.randint(0, 40)
    micros = [rng.choice([rng.randint(0, day - 1), 0, day - 1, day, -1, rng.randint(-(2**63), 2**63 - 1)])
              if rng.random() < 0.1 else rng.randint(0, day - 1) for _ in range(n)]
    return object_kernels.time_objects, (np.array(micros, np.int64), _rand_mask(rng, n))


def case_delta(rng: random.Random) -> tuple[Callable[..., Any], tuple[Any, ...]]:
    """DELTA_BINARY_PACKED from the encoder (varied layouts and value ranges), or a hand-made header
    over random bytes (widths 0..255 in the blocks, any count)."""
    dtype = rng.choice([np.int32, np.int64])
    n = rng.randint(0, 700)
    if rng.random() < 0.8:
        bits = np.iinfo(dtype).bits
        vals = np.array([rng.getrandbits(bits) - (1 << (bits - 1)) for _ in range(n)], np.int64) >> rng.randint(0, bits)
        if rng.random() < 0.3:
            vals = np.cumsum(vals % 1000)
        layout = rng.choice([(128, 4), (128, 1), (256, 8), (512, 16), (1024, 32)])
        data = encode_delta_binary_packed(vals.astype(dtype), *layout)
    else:
        data = (uleb128(rng.choice([128, 256, 384, 65536, rng.randint(0, 300)])) + uleb128(rng.choice([1, 2, 4, 8, 3]))
                + uleb128(n) + uleb128(rng.getrandbits(rng.choice([1, 8, 64, 70])))
                + rand_bytes(rng, rng.randint(0, 200)))
    data = mutate(rng, data) if rng.random() < 0.7 else data
    count = rng.choice([None, n, rng.randint(-1, n + 3)])
    return delta_kernels.decode_delta_binary_packed, (as_buffer(rng, data), count, dtype)


def _plain_page(head: bytes, values: BinaryArray) -> bytes:
    """A v1 page of PLAIN byte arrays through the writer's ``compress_page`` (encoded by the compiled
    or the reference encoder, then compressed by cramjam's snappy), decompressed."""
    codec = compression.codec_by_name("snappy")
    page = EncodedPage(0, 0, len(values), 0, len(values), 0, None, b"", head, values, None)
    compress_page(page, codec, None, False)
    return bytes(compression.decompress(codec, page.body, page.uncompressed_size))


def case_plain_page(rng: random.Random) -> tuple[Callable[..., Any], tuple[Any, ...]]:
    """A v1 page of PLAIN byte arrays: values cut from random or repetitive bytes, some of them long,
    behind a few bytes of levels."""
    period = rng.randint(1, 300)
    total = rng.choice([rng.randint(0, 300), rng.randint(0, 5000), rng.randint(60_000, 200_000)])
    buf = (rand_bytes(rng, period) * (total // period + 1))[:total]
    buf = mutate(rng, buf) if rng.random() < 0.5 else buf
    cuts = sorted(rng.randint(0, len(buf)) for _ in range(rng.choice([0, 1, 5, 50, 2000])))
    items = [buf[a:b] for a, b in zip([0, *cuts], [*cuts, len(buf)])]
    head = rand_bytes(rng, rng.choice([0, rng.randint(0, 300)]))
    return _plain_page, (head, rand_binary(rng, items))


def _rand_i32(rng: random.Random) -> int | None:
    return rng.choice([None, rng.randint(-5, 300), rng.randint(-(2**31), 2**31 - 1)])


def _rand_statistics(rng: random.Random) -> Any:
    if rng.random() < 0.5:
        return None
    return T.Statistics(max=rand_bytes(rng, rng.randint(0, 20)), min=rand_bytes(rng, rng.randint(0, 5)),
                        null_count=rng.choice([None, rng.randint(0, 2**40)]), is_max_value_exact=rng.random() < 0.5)


def case_page_header(rng: random.Random) -> tuple[Callable[..., Any], tuple[Any, ...]]:
    """A Thrift PageHeader (data page, dictionary page or v2, with statistics), encoded, then maybe
    mutated, at a random position: the compiled parser against Thrift's decoder (the reference)."""
    r = lambda: _rand_i32(rng)  # noqa: E731
    h = T.PageHeader(type=rng.choice([0, 2, 3, r()]), uncompressed_page_size=r(), compressed_page_size=r(), crc=r())
    kind = rng.randint(0, 3)
    if kind == 0:
        h.data_page_header = T.DataPageHeader(r(), r(), r(), r(), _rand_statistics(rng))
    elif kind == 1:
        h.dictionary_page_header = T.DictionaryPageHeader(r(), r(), rng.choice([None, True, False]))
    elif kind == 2:
        h.data_page_header_v2 = T.DataPageHeaderV2(r(), r(), r(), r(), r(), r(), rng.choice([None, True, False]),
                                                   _rand_statistics(rng))
    data = encode(h)
    if rng.random() < 0.3:  # an unknown field (long-form tag) before the stop byte
        data = data[:-1] + bytes([rng.choice([5, 8, 9, 11, 12])]) + uleb128(rng.randint(0, 400)) \
            + rand_bytes(rng, rng.randint(0, 12)) + b"\x00"
    data = mutate(rng, data) if rng.random() < 0.7 else data
    before = rand_bytes(rng, rng.randint(0, 3))

    def run(buf: Any, pos: int) -> Any:
        return page_header_fields(buf, pos, offset=0)
    return run, (as_buffer(rng, before + data), len(before))


def case_flat_chunk(rng: random.Random) -> tuple[Callable[..., Any], tuple[Any, ...]]:
    """A small file of flat numeric columns (pqbloom's writer, as pyarrow's options name them: v1/v2
    pages, dictionary or PLAIN, nulls, small pages, CRCs or not), its pages mutated: the compiled page
    loop (``pqbloom/_kernels/chunkloop.pyx``, or where it gives up, the Python loop on compiled
    kernels) against the Python loop on the numpy reference. (pyarrow is not imported: this runs under
    ASan, ``scripts/sanitize.sh``.)"""
    import io

    import pqbloom

    n = rng.choice([0, 1, rng.randint(1, 300), rng.randint(300, 3000)])
    kind = rng.choice(["i4", "i8", "f4", "f8"])
    raw = np.frombuffer(rand_bytes(rng, n * np.dtype(kind).itemsize), kind).copy()
    if n and rng.random() < 0.5:  # few distinct values: dictionary pages
        raw = raw[np.array([rng.randrange(n) % 17 for _ in range(n)], np.int64) % n]
    nulls = rng.choice([0.0, 0.3, 1.0])
    mask = np.array([rng.random() < nulls for _ in range(n)], bool)
    table = pqbloom.Table.from_pydict({"x": np.ma.masked_array(raw, mask=mask), "y": raw[::-1].copy()})
    sink = io.BytesIO()
    pqbloom.write_table(table, sink, compression=rng.choice(["none", "snappy", "lz4", "zstd", "gzip"]),
                        use_dictionary=rng.random() < 0.6, data_page_version=rng.choice(["1.0", "2.0"]),
                        data_page_size=rng.choice([64, 1024, 1 << 20]), write_page_checksum=rng.random() < 0.3)
    data = sink.getvalue()
    footer = len(data) - 8 - struct.unpack("<I", data[-8:-4])[0]
    if rng.random() < 0.8 and footer > 4:  # mutate the pages only (a mutated footer is fuzz_reader's)
        data = data[:4] + mutate(rng, data[4:footer])[: footer - 4].ljust(footer - 4, b"\0") + data[footer:]

    def run(data: bytes) -> Any:
        table = pqbloom.read_table(io.BytesIO(data), use_threads=False)
        return repr(table.to_pydict())
    return run, (data,)


# -- the writer's kernels: valid inputs (they take the writer's own arrays), hostile shapes and limits --

def _runs(rng: random.Random, n: int, top: int) -> np.ndarray:
    vals = np.array([rng.choice([0, top, rng.randint(0, top)]) for _ in range(n)], np.int64)
    return np.repeat(vals, [rng.choice([1, 1, 2, 8, 9, 15, 70]) for _ in range(n)])[:n]


def case_hybrid_encode(rng: random.Random) -> tuple[Callable[..., Any], tuple[Any, ...]]:
    bw = rng.choice([0, 1, 2, 3, 7, 8, 9, 15, 16, 17, 24, 31, 32, rng.randint(0, 32)])
    n = rng.choice([rng.randint(0, 40), rng.randint(0, 3000)])
    vals = _runs(rng, n, (1 << bw) - 1)
    dtype = rng.choice([d for d in (np.uint8, np.int8, np.int16, np.uint16, np.int32, np.uint32, np.int64)
                        if bw < np.iinfo(d).bits or (bw == 32 and d == np.int32)])
    v = vals.astype(np.uint32).view(np.int32) if dtype == np.int32 and bw == 32 else vals.astype(dtype)
    return hybrid_kernels.encode_hybrid, (v, bw, rng.choice([8, 8, 9, 15, 16, 100]))


def _limit(rng: random.Random) -> int | None:
    return rng.choice([None, None, 0, 1, rng.randint(0, 50), rng.randint(0, 5000)])


def case_unique_first(rng: random.Random) -> tuple[Callable[..., Any], tuple[Any, ...]]:
    kind = rng.randint(0, 2)
    n = rng.randint(0, 400)
    if kind == 0:
        dt = rng.choice(["i1", "u2", "i4", "i8", "f4", "f8", "?"])
        raw = np.frombuffer(rand_bytes(rng, n * np.dtype(dt).itemsize), np.uint8)
        vals = (raw % 2).astype(bool) if dt == "?" else (raw & rng.choice([1, 3, 255])).view(dt)
        return dictionary_kernels.unique_first, (vals, _limit(rng), None)
    if kind == 1:
        w = rng.randint(1, 20)
        rows = np.frombuffer(rand_bytes(rng, 6 * w), np.uint8).reshape(6, w)
        m = rows[np.array([rng.randrange(6) for _ in range(n)], np.int64)] if n else np.zeros((0, w), np.uint8)
        return dictionary_kernels.unique_first, (m, _limit(rng), None)
    pool = rand_values(rng, max_n=30, max_len=rng.choice([8, 24, 200]))
    values = [rng.choice(pool) for _ in range(n)] if pool else []
    return dictionary_kernels.unique_first, (rand_binary(rng, values), _limit(rng), _limit(rng))


def case_count_distinct(rng: random.Random) -> tuple[Callable[..., Any], tuple[Any, ...]]:
    n = rng.choice([rng.randint(0, 50), rng.randint(0, 20_000)])
    keys = np.array([rng.choice([0, 1, 2**63, 2**64 - 1, rng.getrandbits(64), rng.getrandbits(12)]) for _ in range(n)],
                    np.uint64)
    return dictionary_kernels.count_distinct, (keys,)


def case_xxh64(rng: random.Random) -> tuple[Callable[..., Any], tuple[Any, ...]]:
    kind = rng.randint(0, 3)
    if kind == 0:
        return bloom_kernels.xxh64_binary, (rand_binary(rng, rand_values(rng, max_len=rng.choice([8, 40, 100]))),)
    if kind == 1:
        w = rng.randint(1, 70)
        n = rng.randint(0, 30)
        return bloom_kernels.xxh64_fixed, (np.frombuffer(rand_bytes(rng, n * w), np.uint8).reshape(n, w),)
    n = rng.randint(0, 60)
    dt = np.uint32 if kind == 2 else np.uint64
    lanes = np.frombuffer(rand_bytes(rng, n * np.dtype(dt).itemsize), dt)
    fn = bloom_kernels.xxh64_u32 if kind == 2 else bloom_kernels.xxh64_u64

    def run(lanes: np.ndarray) -> np.ndarray:
        out = np.zeros(len(lanes), np.uint64)
        fn(lanes, out)
        return out
    return run, (lanes,)


def case_bloom_insert(rng: random.Random) -> tuple[Callable[..., Any], tuple[Any, ...]]:
    blocks = rng.choice([1, 2, 3, rng.randint(1, 300)])
    n = rng.randint(0, 500)
    hashes = np.frombuffer(rand_bytes(rng, 8 * n), np.uint64)
    start = np.frombuffer(rand_bytes(rng, 32 * blocks), np.uint32).reshape(blocks, 8)

    def run(start: np.ndarray, hashes: np.ndarray) -> np.ndarray:
        words = start.copy()
        bloom_kernels.insert_hashes(words, hashes)
        return words
    return run, (start, hashes)


CASES: dict[str, Callable[[random.Random], tuple[Callable[..., Any], tuple[Any, ...]]]] = {
    "hybrid": case_hybrid,
    "gather": case_gather,
    "page_levels": case_page_levels,
    "plain_decode": case_plain_decode,
    "plain_decode_into": case_plain_decode_into,
    "take": case_take,
    "scatter": case_scatter,
    "take_into": case_take_into,
    "scatter_into": case_scatter_into,
    "spread": case_spread,
    "prefix": case_prefix,
    "list_offsets": case_list_offsets,
    "check_levels": case_check_levels,
    "argminmax": case_argminmax,
    "encode": case_encode,
    "decimal": case_decimal,
    "delta": case_delta,
    "decimal_objects": case_decimal_objects,
    "time_objects": case_time_objects,
    "plain_page": case_plain_page,
    "page_header": case_page_header,
    "flat_chunk": case_flat_chunk,
    "hybrid_encode": case_hybrid_encode,
    "unique_first": case_unique_first,
    "count_distinct": case_count_distinct,
    "xxh64": case_xxh64,
    "bloom_insert": case_bloom_insert,
}


# -- the loop ---------------------------------------------------------------------------------------

def norm(x: Any) -> Any:
    if isinstance(x, BinaryArray):
        return ("binary", x.to_pylist())
    if isinstance(x, np.ndarray) and x.dtype == object:  # Decimal / time objects: by repr (exponent included)
        return ("objects", x.shape, [repr(v) for v in x.tolist()])
    if isinstance(x, np.ndarray):
        return ("array", x.dtype.str, x.shape, x.tobytes())
    if isinstance(x, tuple):
        return tuple(norm(v) for v in x)
    return x


def outcome(fn: Callable[..., Any], args: tuple[Any, ...], compiled: bool) -> tuple[Any, ...]:
    kernels.COMPILED = compiled
    try:
        return ("ok", norm(fn(*args)))
    except ParquetError as e:
        return ("error", type(e).__name__, str(e))
    except (ValueError, TypeError) as e:  # misuse: only fine when both modes say the same
        return ("usage", type(e).__name__, str(e))


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--runs", type=int, default=10_000, help="inputs to try (default 10000)")
    ap.add_argument("--seconds", type=float, default=None, help="stop after this long instead")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--only", choices=sorted(CASES), action="append", help="fuzz only these kernels")
    args = ap.parse_args()
    if not kernels.EXTENSION_BUILT:
        print("the compiled kernels are not built (pip install -e .): nothing to fuzz", file=sys.stderr)
        return 2
    names = args.only or sorted(CASES)
    rng = random.Random(args.seed)
    counts = dict.fromkeys(names, 0)
    failures = 0
    start = time.monotonic()
    run = 0
    while (args.seconds is None and run < args.runs) or (args.seconds is not None
                                                          and time.monotonic() - start < args.seconds):
        name = names[run % len(names)]
        fn, inputs = CASES[name](rng)
        try:
            got = outcome(fn, inputs, True)
            want = outcome(fn, inputs, False)
        except Exception:  # an exception neither mode may raise
            got, want = ("crash", traceback.format_exc()), None
        if got != want:
            failures += 1
            print(f"MISMATCH in {name} at run {run} (seed {args.seed}):\n  inputs: {repr(inputs)[:2000]}\n"
                  f"  compiled:  {repr(got)[:1000]}\n  reference: {repr(want)[:1000]}", file=sys.stderr)
            if failures >= 10:
                break
        counts[name] += 1
        run += 1
    kernels.COMPILED = kernels.EXTENSION_BUILT
    took = time.monotonic() - start
    print(f"fuzz_kernels: {run} inputs in {took:.1f} s (seed {args.seed}): "
          + ", ".join(f"{k} {v}" for k, v in counts.items()) + f"; {failures} mismatches")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
