"""Fuzz the pqbloom reader: only pqbloom.errors.ParquetError may escape.

Two engines:

* ``atheris`` (coverage-guided, libFuzzer; ``pip install atheris``), used by default when importable;
* ``random``: a dependency-free, deterministic mutation loop (byte flips, splices, truncations,
  overwrites with "interesting" integers and varints) seeded by ``--seed``.

Examples::

    python fuzz/fuzz_reader.py --seconds 90                  # atheris when installed, else random
    python fuzz/fuzz_reader.py --engine random --runs 20000 --seed 1   # deterministic (CI)
    python fuzz/fuzz_reader.py --reproduce crash-file        # re-run one input, show the traceback

Each exercised entry point: ParquetFile(bytes) (with the seed keys when the file is encrypted), reading
every column, iter_batches, read_row_group, a filtered read, bloom_filter / bloom_filter_might_contain
for every chunk, raw Thrift decoding of FileMetaData / PageHeader / BloomFilterHeader, and every
decompressor. Crashing inputs are written to ``--crash-dir`` (default fuzz/crashes/).
"""

from __future__ import annotations

import argparse
import glob
import os
import random
import signal
import sys
import time
import traceback

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))  # run from a checkout without installing

FOOTER_KEY = b"0123456789012345"
COL_KEY = b"1234567890123450"
MAX_INPUT = 64 * 1024
MEMORY_LIMIT = 256 * 1024 * 1024


def _import_target(instrument: bool):
    if instrument:
        import atheris

        with atheris.instrument_imports(include=["pqbloom"]):
            import pqbloom
            import pqbloom.compression
            import pqbloom.format
            import pqbloom.scan  # noqa: F401
    import pqbloom
    from pqbloom import compression, format
    from pqbloom.bloom import BloomFilter
    from pqbloom.errors import ParquetError

    return pqbloom, compression, format, BloomFilter, ParquetError


pqbloom = compression = fmt = BloomFilter = ParquetError = None  # set by _setup


def _setup(instrument: bool) -> None:
    global pqbloom, compression, fmt, BloomFilter, ParquetError
    pqbloom, compression, fmt, BloomFilter, ParquetError = _import_target(instrument)


def _guard(fn, *args, **kw):
    """Run one entry point; typed errors are fine, anything else propagates (a finding)."""
    try:
        return fn(*args, **kw)
    except ParquetError:
        return None


def _exercise_file(pf) -> None:
    for c in pf.columns:
        _ = c.dotted_path
    _ = pf.num_rows, pf.key_value_metadata
    _guard(lambda: pf.schema)  # SchemaError for e.g. duplicate column names, which the footer may hold
    _guard(lambda: pf.table_schema)
    t = _guard(pf.read)
    if t is not None:
        # to_pydict may refuse typed (UnsupportedError for a timestamp outside datetime's range)
        _guard(t.to_pydict)
    _guard(lambda: [b.num_rows for b in pf.iter_batches(batch_size=5)])
    for i in range(min(pf.num_row_groups, 8)):
        _guard(pf.read_row_group, i)
        for d in pf.columns[:16]:
            _guard(pf.column_chunk, i, d.dotted_path)
            bf = _guard(pf.bloom_filter, i, d.dotted_path)
            if bf is not None:
                bf.fill_ratio()
            if d.max_repetition_level == 0 and _probe_value(d) is not None:
                _guard(pf.bloom_filter_might_contain, i, d.dotted_path, _probe_value(d))
    flat = [d for d in pf.columns if d.max_repetition_level == 0 and _probe_value(d) is not None]
    if flat:
        d = flat[0]
        expr = pqbloom.field(d.dotted_path) == _probe_value(d)
        _guard(lambda: pf.read(filters=expr))
        _guard(lambda: [b.num_rows for b in pf.iter_batches(batch_size=7, filters=expr)])
        plan = _guard(pqbloom.plan_file, pf, pqbloom.field(d.dotted_path) != _probe_value(d))
        if plan is not None:
            for rg in _guard(plan.row_groups) or []:
                _guard(plan.read_row_group, rg)
    # a leaf inside a list or map: "some element matches" filters, page pruning of repeated leaves
    repeated = [d for d in pf.columns if d.max_repetition_level > 0 and _probe_value(d) is not None]
    if repeated:
        d = repeated[0]
        _guard(lambda: pf.read(filters=pqbloom.field(d.dotted_path) == _probe_value(d)))
        _guard(lambda: pf.read(filters=pqbloom.field(d.dotted_path).is_null()))
    if pf.columns:  # a projection of one top-level field (nested ones pruned to one leaf)
        _guard(lambda: pf.read(columns=[pf.columns[-1].dotted_path]))


def _probe_value(desc):
    from pqbloom.format import T

    # a literal of the column's own logical type: the harness fuzzes files, not filter-binding misuse
    name = desc.field.type_name
    if name.startswith("decimal"):
        import decimal

        return decimal.Decimal(3)
    if name == "float16":
        return 0.5
    p = desc.physical_type
    if p == T.Type.INT96:
        return None  # deprecated timestamps: no probe value of a type every API accepts
    if p in (T.Type.INT32, T.Type.INT64):
        return 3
    if p in (T.Type.FLOAT, T.Type.DOUBLE):
        return 0.5
    if p == T.Type.BOOLEAN:
        return True
    if p == T.Type.FIXED_LEN_BYTE_ARRAY:
        return b"\0" * max(1, desc.type_length or 1)
    return "n1"


def one_input(data: bytes) -> None:
    """The fuzz target: raises only for findings."""
    from pqbloom.format import T

    data = bytes(data[:MAX_INPUT])
    # 1. the whole file, with and without the seed keys
    props = pqbloom.FileDecryptionProperties(footer_key=FOOTER_KEY, column_keys={"name": COL_KEY, "id": COL_KEY})
    for kw in ({}, {"decryption_properties": props}):
        if kw and not (data.endswith(b"PARE") or b"encryption" in data or data[-4:] == b"PAR1"):
            continue
        # a ceiling per read: inputs may legitimately decode to gigabytes (large_string_map.brotli, 4 KB
        # on disk, holds two 1 GiB strings); MemoryLimitError is a typed error like any other
        pf = _guard(pqbloom.ParquetFile, data, memory_limit=MEMORY_LIMIT, **kw)
        if pf is not None:
            _exercise_file(pf)
        if not kw and not data.endswith(b"PARE") and pf is not None and pf.thrift_metadata.encryption_algorithm is None:
            break  # a plaintext file: no need to try the keys
    # 2. raw decoders on a slice chosen by the input itself
    start = data[0] % max(1, len(data)) if data else 0
    tail = data[start:]
    for cls in (T.FileMetaData, T.PageHeader, T.ColumnMetaData):
        _guard(fmt.decode_prefix, cls, tail)
    r = _guard(BloomFilter.parse, tail)
    if r is not None:
        r[0].might_contain(1, T.Type.INT64)
    # 3. every decompressor with a promised size derived from the input
    promise = int.from_bytes(data[1:4], "little") % (4 * len(data) + 64) if len(data) > 4 else 0
    for codec in compression._CODECS:
        _guard(compression.decompress, codec, tail, promise)


class _Timeout(Exception):
    pass


def _on_alarm(signum, frame):
    raise _Timeout()


def load_corpus(path: str) -> list[bytes]:
    out = []
    for p in sorted(glob.glob(os.path.join(path, "*"))):
        if os.path.isfile(p):
            with open(p, "rb") as f:
                out.append(f.read())
    return out


INTERESTING = [0, 1, 2, 0x7F, 0x80, 0xFF, 0x7FFF, 0xFFFF, 0x7FFFFFFF, 0x80000000, 0xFFFFFFFF, 2**31 - 1,
               2**32 + 7, 2**40, 2**62, 2**63 - 1, 32, 4096, 1 << 27]


def _varint(n: int) -> bytes:
    n = (n << 1) ^ (n >> 63)  # zigzag like Thrift compact
    out = bytearray()
    while True:
        b = n & 0x7F
        n >>= 7
        if n:
            out.append(b | 0x80)
        else:
            out.append(b)
            return bytes(out)


def mutate(rng: random.Random, data: bytes, corpus: list[bytes]) -> bytes:
    b = bytearray(data)
    for _ in range(rng.choice((1, 1, 1, 2, 3, 5, 8))):
        op = rng.randrange(9)
        if not b:
            b = bytearray(rng.choice(corpus))
        i = rng.randrange(len(b))
        if op == 0:
            b[i] ^= 1 << rng.randrange(8)
        elif op == 1:
            b[i] = rng.randrange(256)
        elif op == 2:
            v = rng.choice(INTERESTING)
            blob = _varint(v) if rng.random() < 0.6 else (v & 0xFFFFFFFF).to_bytes(4, "little")
            b[i:i + len(blob)] = blob
        elif op == 3:
            del b[i:i + rng.randrange(1, 16)]
        elif op == 4:
            b[i:i] = bytes(rng.randrange(256) for _ in range(rng.randrange(1, 8)))
        elif op == 5:
            other = rng.choice(corpus)
            j = rng.randrange(len(other))
            b[i:i + 32] = other[j:j + rng.randrange(1, 64)]
        elif op == 6:  # truncate but keep the tail (footer length + magic) plausible
            cut = rng.randrange(1, max(2, len(b) // 4))
            b = b[:max(0, i - cut)] + b[i:]
        elif op == 7:  # poke the footer length
            if len(b) >= 8:
                flen = int.from_bytes(b[-8:-4], "little")
                b[-8:-4] = ((flen + rng.randint(-40, 40)) & 0xFFFFFFFF).to_bytes(4, "little")
        else:  # duplicate a region
            j = rng.randrange(len(b))
            b[i:i] = b[j:j + rng.randrange(1, 128)]
    return bytes(b[:MAX_INPUT])


def _save_crash(crash_dir: str, data: bytes) -> str:
    import hashlib

    os.makedirs(crash_dir, exist_ok=True)
    path = os.path.join(crash_dir, "crash-" + hashlib.sha1(data).hexdigest()[:16])
    with open(path, "wb") as f:
        f.write(data)
    return path


def run_random(args: argparse.Namespace, corpus: list[bytes]) -> int:
    rng = random.Random(args.seed)
    signal.signal(signal.SIGALRM, _on_alarm)
    deadline = time.monotonic() + args.seconds if args.seconds else None
    pool = list(corpus)
    findings: dict[str, str] = {}
    runs = 0
    while True:
        if args.runs and runs >= args.runs:
            break
        if deadline is not None and time.monotonic() >= deadline:
            break
        data = mutate(rng, rng.choice(pool), corpus) if runs >= len(corpus) else corpus[runs]
        runs += 1
        signal.alarm(args.timeout)
        try:
            one_input(data)
        except _Timeout:
            key = "timeout"
            if key not in findings:
                findings[key] = _save_crash(args.crash_dir, data)
                print(f"TIMEOUT (> {args.timeout}s) -> {findings[key]}", flush=True)
        except Exception as exc:  # noqa: BLE001 - every escape is a finding
            tb = traceback.extract_tb(exc.__traceback__)
            key = f"{type(exc).__name__}@{tb[-1].filename}:{tb[-1].lineno}"
            if key not in findings:
                findings[key] = _save_crash(args.crash_dir, data)
                print(f"FINDING {key}: {exc!r:.200} -> {findings[key]}", flush=True)
        finally:
            signal.alarm(0)
        if rng.random() < 0.02 and len(pool) < 512:
            pool.append(data)  # a crude way to walk further from the seeds
        if args.verbose and runs % 1000 == 0:
            print(f"{runs} runs", flush=True)
    print(f"random engine: {runs} runs, {len(findings)} distinct findings", flush=True)
    return 1 if findings else 0


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--engine", choices=("auto", "atheris", "random"), default="auto")
    ap.add_argument("--seconds", type=int, default=0, help="stop after N seconds")
    ap.add_argument("--runs", type=int, default=0, help="stop after N inputs (deterministic with --engine random)")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--timeout", type=int, default=10, help="seconds per input before it counts as a hang")
    ap.add_argument("--corpus", default=os.path.join(HERE, "corpus"))
    ap.add_argument("--seed-dir", action="append", default=[],
                    help="more seed inputs (e.g. the fixture corpus); files over 64 KiB are left out")
    ap.add_argument("--crash-dir", default=os.path.join(HERE, "crashes"))
    ap.add_argument("--reproduce", metavar="FILE", help="run one input and print its traceback")
    ap.add_argument("-v", "--verbose", action="store_true")
    args, rest = ap.parse_known_args(argv)
    if not args.seconds and not args.runs and not args.reproduce:
        args.seconds = 60
    if args.reproduce:
        _setup(False)
        with open(args.reproduce, "rb") as f:
            one_input(f.read())
        print("no finding")
        return 0
    engine = args.engine
    if engine == "auto":
        try:
            import atheris  # noqa: F401

            engine = "atheris"
        except ImportError:
            engine = "random"
    corpus = load_corpus(args.corpus)
    small_seeds = sorted(p for d in args.seed_dir for p in glob.glob(os.path.join(d, "**", "*.parquet"), recursive=True)
                         if os.path.getsize(p) <= MAX_INPUT)
    for p in small_seeds:
        with open(p, "rb") as f:
            corpus.append(f.read())
    if not corpus:
        raise SystemExit(f"empty corpus at {args.corpus}; run fuzz/make_corpus.py")
    if engine == "random":
        _setup(False)
        return run_random(args, corpus)
    import atheris

    _setup(True)
    work = os.path.join(args.crash_dir, "atheris-corpus")
    os.makedirs(work, exist_ok=True)
    os.makedirs(args.crash_dir, exist_ok=True)
    if small_seeds:  # libFuzzer reads whole directories: give it a directory of the small seeds only
        import shutil

        seeds = os.path.join(args.crash_dir, "extra-seeds")
        os.makedirs(seeds, exist_ok=True)
        for i, p in enumerate(small_seeds):
            shutil.copyfile(p, os.path.join(seeds, f"{i:04d}-{os.path.basename(p)}"))
        extra_dirs = [seeds]
    else:
        extra_dirs = []
    lf = [sys.argv[0], work, args.corpus, *extra_dirs, f"-seed={args.seed}", f"-timeout={args.timeout}",
          f"-max_len={MAX_INPUT}", "-rss_limit_mb=3072", f"-artifact_prefix={args.crash_dir}/"]
    if args.seconds:
        lf.append(f"-max_total_time={args.seconds}")
    if args.runs:
        lf.append(f"-runs={args.runs}")
    atheris.Setup(lf + rest, one_input)
    atheris.Fuzz()
    return 0


if __name__ == "__main__":
    sys.exit(main())
