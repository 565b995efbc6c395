"""Throughput of pqbloom's vectorized Bloom filter hashing, build and probe.

Run: ``python bench/bench_bloom_hash.py [--int64 N] [--strings N] [--loop-sample N]``

For 10M int64 and 1M 16-byte strings it prints values/s for

* hash:  XXH64 of every value;
* build: hash + insert into a filter sized for 1 % FPP;
* probe: hash + check of the same number of absent values;
* insert / check alone on precomputed hashes;

with the vectorized code and with a per-value Python loop (``xxhash.xxh64_intdigest``
plus a pure-Python SBBF on a list of ints), measured in the same run. The loop
runs on a random sample (``--loop-sample``) and its rate is per value, so the
ratio does not depend on the sample size. Timings are the best of ``--repeat``
runs after a warm-up.
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Callable

import numpy as np
import xxhash

from pqbloom.arrays import BinaryArray
from pqbloom.bloom import SALT, BloomFilter, hash_values, optimal_num_bytes
from pqbloom.format import T

M32 = 0xFFFFFFFF


def best_time(fn: Callable[[], object], repeat: int) -> float:
    fn()  # warm-up (page faults, caches)
    best = float("inf")
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t0)
    return best


def py_hashes(chunks: list[bytes]) -> list[int]:
    h = xxhash.xxh64_intdigest
    return [h(c) for c in chunks]


def py_insert(words: list[int], z: int, hashes: list[int]) -> None:
    for h in hashes:
        base = (((h >> 32) * z) >> 32) * 8
        x = h & M32
        for w, salt in enumerate(SALT):
            words[base + w] |= 1 << (((x * salt) & M32) >> 27)


def py_check(words: list[int], z: int, hashes: list[int]) -> list[bool]:
    out = []
    for h in hashes:
        base = (((h >> 32) * z) >> 32) * 8
        x = h & M32
        out.append(all((words[base + w] >> (((x * salt) & M32) >> 27)) & 1 for w, salt in enumerate(SALT)))
    return out


def run(name: str, values: object, absent: object, ptype: int, as_bytes: Callable[[object, np.ndarray], list[bytes]],
        n: int, sample: int, repeat: int) -> None:
    num_bytes = optimal_num_bytes(n, 0.01)
    rng = np.random.default_rng(1)
    idx = np.sort(rng.choice(n, size=min(sample, n), replace=False))
    sample_in, sample_out = as_bytes(values, idx), as_bytes(absent, idx)

    # vectorized
    t_hash = best_time(lambda: hash_values(values, ptype), repeat)
    bf = BloomFilter(num_bytes)
    t_build = best_time(lambda: BloomFilter(num_bytes).insert(values, ptype), repeat)
    bf.insert(values, ptype)
    t_probe = best_time(lambda: bf.might_contain_many(absent, ptype), repeat)
    fpp = float(bf.might_contain_many(absent, ptype).mean())
    hashes = hash_values(values, ptype)
    probe_hashes = hash_values(absent, ptype)
    t_ins = best_time(lambda: BloomFilter(num_bytes).insert_hashes(hashes), repeat)
    t_chk = best_time(lambda: bf.check_hashes(probe_hashes), repeat)

    # per-value Python loop on the sample
    z = num_bytes // 32
    words = [0] * (z * 8)
    m = len(sample_in)
    l_hash = best_time(lambda: py_hashes(sample_in), 1)
    l_build = best_time(lambda: py_insert([0] * (z * 8), z, py_hashes(sample_in)), 1)
    py_insert(words, z, py_hashes(sample_in))
    l_probe = best_time(lambda: py_check(words, z, py_hashes(sample_out)), 1)
    # the loop filter only holds the sample; it must agree with a vectorized filter of the sample
    ref = BloomFilter(num_bytes)
    ref.insert_hashes(np.array(py_hashes(sample_in), dtype=np.uint64))
    assert ref.words.reshape(-1).tolist() == words, "pure-Python SBBF disagrees with BloomFilter"

    print(f"\n{name}: {n:,} values, filter {num_bytes:,} bytes ({num_bytes * 8 / n:.1f} bits/value), "
          f"measured FPP {fpp:.4%}; loop sample {m:,}")
    print(f"  {'':22s}{'vectorized':>16s}{'python loop':>16s}{'ratio':>9s}")
    for label, tv, tl in (("hash", t_hash, l_hash), ("build (hash+insert)", t_build, l_build),
                          ("probe (hash+check)", t_probe, l_probe)):
        rv, rl = n / tv, m / tl
        print(f"  {label:22s}{rv / 1e6:12.1f} M/s{rl / 1e6:12.2f} M/s{rv / rl:8.1f}x")
    print(f"  {'insert_hashes only':22s}{n / t_ins / 1e6:12.1f} M/s")
    print(f"  {'check_hashes only':22s}{n / t_chk / 1e6:12.1f} M/s")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--int64", type=int, default=10_000_000)
    ap.add_argument("--strings", type=int, default=1_000_000)
    ap.add_argument("--loop-sample", type=int, default=200_000)
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    rng = np.random.default_rng(0)

    n = args.int64
    ints = rng.integers(-(2**63), 2**63 - 1, n, dtype=np.int64)
    absent_ints = rng.integers(-(2**63), 2**63 - 1, n, dtype=np.int64)

    def int_bytes(a: object, idx: np.ndarray) -> list[bytes]:
        raw = np.asarray(a)[idx].tobytes()
        return [raw[i:i + 8] for i in range(0, len(raw), 8)]

    run("int64", ints, absent_ints, T.Type.INT64, int_bytes, n, args.loop_sample, args.repeat)

    n = args.strings
    strings = BinaryArray.from_fixed(rng.integers(0, 256, (n, 16), dtype=np.uint8))
    absent_strings = BinaryArray.from_fixed(rng.integers(0, 256, (n, 16), dtype=np.uint8))

    def str_bytes(a: object, idx: np.ndarray) -> list[bytes]:
        assert isinstance(a, BinaryArray)
        return a.take(idx).to_pylist()

    run("16-byte strings (BYTE_ARRAY)", strings, absent_strings, T.Type.BYTE_ARRAY, str_bytes, n,
        args.loop_sample, args.repeat)


if __name__ == "__main__":
    main()
