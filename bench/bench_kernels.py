"""Micro-benchmark of the compiled kernels (pqbloom.kernels) against their numpy reference.

Each kernel runs on realistic sizes (1M variable-length strings of 5-60 bytes, 10M levels with
10% nulls...), compiled and reference interleaved in one process, median of ``--repeat`` runs;
the inputs are built before the timers. Prints milliseconds, throughput and the speed-up, then
the wall time of two threads decoding at once (the kernels release the GIL).

    python bench/bench_kernels.py [--repeat 5] [--scale 1.0] [--only plain_decode]
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import threading
import time
from collections.abc import Callable
from typing import Any

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))  # run from a checkout without installing

import numpy as np  # noqa: E402

from pqbloom import kernels  # noqa: E402
from pqbloom.arrays import BinaryArray  # noqa: E402
from pqbloom.encodings.delta import common_prefix_lengths, encode_delta_binary_packed  # noqa: E402
from pqbloom.encodings.plain import encode_plain_byte_array  # noqa: E402
from pqbloom.encodings.rle import decode_rle_bitpacked, encode_rle_bitpacked  # noqa: E402
from pqbloom.kernels import binary as binary_kernels  # noqa: E402
from pqbloom.kernels import decimals as decimal_kernels  # noqa: E402
from pqbloom.kernels import delta as delta_kernels  # noqa: E402
from pqbloom.kernels import hybrid as hybrid_kernels  # noqa: E402
from pqbloom.kernels import levels as level_kernels  # noqa: E402

RNG = np.random.default_rng(42)


def strings(n: int, lo: int = 5, hi: int = 60, alphabet: bytes = b"abcdefghijklmnopqrstuvwxyz0123456789@.") -> BinaryArray:
    lens = RNG.integers(lo, hi + 1, n)
    offsets = np.zeros(n + 1, np.int64)
    np.cumsum(lens, out=offsets[1:])
    data = np.frombuffer(alphabet, np.uint8)[RNG.integers(0, len(alphabet), int(offsets[-1]))]
    return BinaryArray(offsets, data)


def time_it(fn: Callable[[], Any], repeat: int) -> float:
    out = []
    for _ in range(repeat):
        t = time.perf_counter()
        fn()
        out.append(time.perf_counter() - t)
    return statistics.median(out)


# name, unit, amount (bytes or values), call, and what pqbloom runs today for it when that is not the
# reference (the reference mirrors today's code except for the hybrid's run scanner and decimals)
Case = tuple[Any, ...]


def python_decimals(values: Any) -> Any:
    """Today's DECIMAL to Arrow (pqbloom.table): a Python int and Decimal per value, then pa.array."""
    import decimal

    import pyarrow as pa

    rows = values.to_pylist() if isinstance(values, BinaryArray) else [bytes(r) for r in values]
    return pa.array([decimal.Decimal(int.from_bytes(b, "big", signed=True)) for b in rows], pa.decimal128(38, 0))


def cases(scale: float) -> list[Case]:
    n_str = int(1_000_000 * scale)
    n_lv = int(10_000_000 * scale)
    out: list[Case] = []

    # 1. hybrid: definition levels with 10% nulls (bit-packed runs), dictionary indices, booleans
    defs = (RNG.random(n_lv) >= 0.1).astype(np.int8)
    enc_defs = encode_rle_bitpacked(defs, 1)
    lv_out = np.empty(n_lv, np.int8)
    out.append(("hybrid: 10M def levels, 10% nulls", "Mvalues", n_lv,
                lambda: hybrid_kernels.decode_hybrid(enc_defs, 1, n_lv, lv_out),
                lambda: decode_rle_bitpacked(enc_defs, 1, n_lv, np.int8)))
    runs = np.repeat((RNG.random(n_lv // 1000) >= 0.5).astype(np.int8), 1000)  # long runs: RLE
    enc_runs = encode_rle_bitpacked(runs, 1)
    out.append(("hybrid: 10M def levels, runs of 1000", "Mvalues", n_lv,
                lambda: hybrid_kernels.decode_hybrid(enc_runs, 1, len(runs), lv_out),
                lambda: decode_rle_bitpacked(enc_runs, 1, len(runs), np.int8)))
    idx = RNG.integers(0, 100, n_lv).astype(np.int32)
    enc_idx = encode_rle_bitpacked(idx, 7)
    idx_out = np.empty(n_lv, np.int32)
    out.append(("hybrid: 10M dict indices, 7 bits", "Mvalues", n_lv,
                lambda: hybrid_kernels.decode_hybrid(enc_idx, 7, n_lv, idx_out),
                lambda: decode_rle_bitpacked(enc_idx, 7, n_lv)))

    # 2. PLAIN BYTE_ARRAY decode
    s = strings(n_str)
    page = encode_plain_byte_array(s)
    out.append(("plain decode: 1M strings 5-60 B", "MB", len(page), lambda: binary_kernels.decode_plain_byte_array(page, n_str)))

    # 3. dictionary take: 100 distinct strings, and 1M distinct
    dict100 = strings(100)
    take_idx = RNG.integers(0, 100, n_str).astype(np.int32)
    out.append(("take: 1M of 100 distinct strings", "Mvalues", n_str, lambda: binary_kernels.take_binary(dict100, take_idx)))
    perm = RNG.permutation(n_str).astype(np.int32)
    out.append(("take: 1M of 1M distinct strings", "Mvalues", n_str, lambda: binary_kernels.take_binary(s, perm)))

    # 4. null scatter: int64 and strings, 10% nulls
    present = defs.astype(bool)
    dense = RNG.integers(0, 1 << 40, int(present.sum()))
    out.append(("scatter: 10M int64, 10% nulls", "Mvalues", n_lv, lambda: level_kernels.scatter_nulls(dense, defs, 1)))
    sdefs = defs[:n_str]
    sdense = strings(int(sdefs.sum()))
    out.append(("scatter: 1M strings, 10% nulls", "Mvalues", n_str, lambda: level_kernels.scatter_nulls(sdense, sdefs, 1)))

    # 5. DELTA_BYTE_ARRAY prefix rebuild: sorted URLs sharing prefixes
    hosts = [b"https://www.example%d.com/path/" % i for i in range(200)]
    hs = RNG.integers(0, len(hosts), n_str)
    tail = strings(n_str, 3, 20)
    urls = BinaryArray.from_pylist(sorted(hosts[h] + t for h, t in zip(hs.tolist(), tail.to_pylist())))
    prefix = common_prefix_lengths(urls).astype(np.int32)
    suffixes = BinaryArray.from_pylist([u[p:] for u, p in zip(urls.to_pylist(), prefix.tolist())])
    out.append(("prefix rebuild: 1M sorted URLs", "MB", urls.nbytes, lambda: binary_kernels.rebuild_prefixes(prefix, suffixes)))

    # 6. list offsets: list<int64>, 10M entries, ~5 elements per list, some null/empty lists
    starts = RNG.random(n_lv) < 0.2
    starts[0] = True
    reps = np.where(starts, 0, 1).astype(np.int8)
    ldefs = np.full(n_lv, 3, np.int8)
    ldefs[starts & (RNG.random(n_lv) < 0.05)] = 1
    reps[1:][ldefs[:-1] == 1] = 0  # an empty list has one entry
    out.append(("list offsets: 10M entries", "Mvalues", n_lv, lambda: level_kernels.list_offsets(ldefs, reps, 2)))

    # 7. write path
    out.append(("argminmax: 1M strings 5-60 B", "Mvalues", n_str, lambda: binary_kernels.binary_argminmax(s)))
    out.append(("plain encode: 1M strings 5-60 B", "MB", len(page), lambda: binary_kernels.encode_plain_byte_array(s)))

    # 8. decimals
    # DECIMAL(38) values (up to 30 digits here) as 16-byte big-endian rows
    hi = RNG.integers(-(2**35), 2**35, n_str)
    lo = RNG.integers(0, 2**62, n_str)
    flba = np.empty((n_str, 16), np.uint8)
    flba[:, :8] = hi.astype(">i8").view(np.uint8).reshape(n_str, 8)
    flba[:, 8:] = lo.astype(">u8").view(np.uint8).reshape(n_str, 8)
    out.append(("decimal: 1M FLBA(16) -> 128", "Mvalues", n_str, lambda: decimal_kernels.decimal_buffer(flba, 16),
                lambda: python_decimals(flba)))
    var = BinaryArray.from_pylist([int(v).to_bytes(9, "big", signed=True)[RNG.integers(0, 5):]
                                   for v in RNG.integers(-(2**60), 2**60, n_str // 4)])
    out.append(("decimal: 250k BYTE_ARRAY -> 128", "Mvalues", len(var), lambda: decimal_kernels.decimal_buffer(var, 16),
                lambda: python_decimals(var)))
    ints = RNG.integers(-(2**62), 2**62, n_str)
    out.append(("decimal: 1M INT64 -> 256", "Mvalues", n_str, lambda: decimal_kernels.decimal_buffer(ints, 32)))

    # 9. DELTA_BINARY_PACKED: timestamps in nanoseconds (wide deltas), and string lengths (narrow)
    stamps = np.cumsum(RNG.integers(0, 10**9, n_lv))
    enc_stamps = encode_delta_binary_packed(stamps)
    out.append(("delta: 10M int64 timestamps", "Mvalues", n_lv,
                lambda: delta_kernels.decode_delta_binary_packed(enc_stamps, None, np.int64)))
    enc_lens = encode_delta_binary_packed(RNG.integers(5, 60, n_lv).astype(np.int32))
    out.append(("delta: 10M int32 lengths 5-60", "Mvalues", n_lv,
                lambda: delta_kernels.decode_delta_binary_packed(enc_lens, None, np.int32)))
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--scale", type=float, default=1.0, help="input sizes relative to the defaults")
    ap.add_argument("--only", default=None, help="run the cases whose name contains this")
    args = ap.parse_args()
    if not kernels.EXTENSION_BUILT:
        print("the compiled kernels are not built (pip install -e .)", file=sys.stderr)
        return 2
    print("building inputs...", file=sys.stderr)
    todo = [c for c in cases(args.scale) if args.only is None or args.only in c[0]]
    print(f"{'kernel':38} {'today':>10} {'reference':>10} {'compiled':>10} {'speed-up':>9}   "
          f"throughput (reference -> compiled)")
    for name, unit, amount, call, *rest in todo:
        times: dict[bool, float] = {}
        for mode in (False, True, False, True):  # interleaved
            kernels.COMPILED = mode
            call()  # warm
            t = time_it(call, args.repeat)
            times[mode] = min(times.get(mode, t), t)
        ref, comp = times[False], times[True]
        today = f"{time_it(rest[0], args.repeat) * 1e3:8.1f}ms" if rest and rest[0] is not None else f"{'=ref':>10}"
        print(f"{name:38} {today} {ref * 1e3:8.1f}ms {comp * 1e3:8.1f}ms {ref / comp:8.1f}x   "
              f"{amount / ref / 1e6:8.1f} -> {amount / comp / 1e6:8.1f} {unit}/s")
    kernels.COMPILED = True
    n = int(1_000_000 * args.scale)
    page_s = encode_plain_byte_array(strings(n))
    # two threads decoding at once: with the GIL released and two free cores they overlap (~1x)
    one = time_it(lambda: binary_kernels.decode_plain_byte_array(page_s, n), args.repeat)

    def two() -> None:
        ts = [threading.Thread(target=binary_kernels.decode_plain_byte_array, args=(page_s, n)) for _ in range(2)]
        for t in ts:
            t.start()
        for t in ts:
            t.join()
    both = time_it(two, args.repeat)
    print(f"threads: one plain decode {one * 1e3:.1f} ms; two at once in two threads {both * 1e3:.1f} ms "
          f"({both / one:.2f}x one; 2.0x means no overlap)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
