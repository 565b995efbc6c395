"""Core write/read benchmark: pqbloom vs pyarrow (and DuckDB, polars) on the same table, one process.

    python bench/bench_core.py [--rows 10000000] [--repeat 5] [--bloom] [--encrypt] [--only TEXT]
                               [--no-memory] [--quick] [--json PATH]

Table (generated with vectorized numpy, ``_data.py``): ``id`` int64 (unique, random order),
``email`` and ``url`` (variable-length strings, 15-44 and 18-81 bytes, nearly all distinct),
``code`` (16-char string), ``x`` float64; once without nulls and once with 10% nulls in every
column but ``id``. Snappy, 1,000,000-row row groups, files in a temporary directory.

Cases, each measured by ``_harness.py`` (one process, imports and inputs outside the timers, one
warm-up, interleaved rounds, median; peak memory from a child process per contender):

* ``write``: each writer from its own native input built before the timer (a pqbloom Table, a
  pyarrow Table; DuckDB from a registered Arrow table, polars from a DataFrame);
* ``read <table> / <writer>'s file``: cross reads: every reader reads the file pyarrow wrote and
  the file pqbloom wrote. pqbloom's native ``read_table`` and ``read_table(...).to_arrow()`` are
  separate rows (``pq+to_arrow``: the like of pyarrow's ``read_table``, which returns Arrow).

``--bloom`` also runs everything with a Bloom filter on ``id`` (both writers write one).
``--encrypt`` measures pqbloom alone: plaintext vs ``id`` encrypted with its own key (AES-GCM,
encrypted footer; the Bloom filter on ``id`` is on both sides, so it is encrypted too).
The ratio columns are pqbloom / peer medians: below 1.00x pqbloom is faster.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile

_HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(_HERE))  # pqbloom from this tree, not an installed copy
sys.path.insert(0, _HERE)

from _data import CACHE_ENV, ROW_GROUP, arrow_table, dataset, pqbloom_table, write_arrow_file  # noqa: E402
from _engines import (  # noqa: E402
    BLOOM,
    KEYS,
    peers_note,
    pqbloom_read,
    pqbloom_threads_note,
    pqbloom_write,
    read_contenders,
    write_contenders,
)
from _harness import Case, CaseResult, Contender, environment, print_summary, recipe, run_case, save_json  # noqa: E402

TABLES = {"core": "no nulls", "core-nulls": "10% nulls"}


def _mib(path: str) -> str:
    return f"{os.path.getsize(path) / 2**20:.1f} MiB"


def _write_pqbloom_file(data: str, rows: int, path: str, bloom: bool, encrypt: bool = False) -> None:
    import pqbloom

    kw: dict = {"row_group_size": ROW_GROUP, "compression": "snappy"}
    if bloom:
        kw["bloom_filter_options"] = BLOOM
    if encrypt:
        kw["encryption_properties"] = pqbloom.FileEncryptionProperties(**KEYS)  # type: ignore[arg-type]
    pqbloom.write_table(pqbloom_table(dataset(data, rows)), path, **kw)


def core_cases(rows: int, tmp: str, bloom: bool, only: str = "") -> list[Case]:
    """Per table: the write case and the two cross-read cases (files written here, untimed)."""
    cases = []
    tag = ", Bloom filter on id" if bloom else ""
    for data, what in TABLES.items():
        suffix = "-bloom" if bloom else ""
        files = {"pyarrow": os.path.join(tmp, f"{data}{suffix}-pyarrow.parquet"),
                 "pqbloom": os.path.join(tmp, f"{data}{suffix}-pqbloom.parquet")}
        size = arrow_table(dataset(data, rows)).nbytes
        cases.append(Case(f"write {what}{tag}", rows, write_contenders(data, rows, tmp, bloom=bloom), ("write",),
                          size))
        for writer, path in files.items():
            name = f"read {what}{tag} / {writer}'s file"
            if only not in name:
                continue
            if writer == "pyarrow":
                write_arrow_file(dataset(data, rows), path, **({"bloom_filter_options": BLOOM} if bloom else {}))
            else:
                _write_pqbloom_file(data, rows, path, bloom)
            cases.append(Case(name, rows, read_contenders(path), ("read",), size,
                              note=f"file {_mib(path)}"))
    return cases


def encrypt_cases(rows: int, tmp: str) -> list[Case]:
    plain, enc = os.path.join(tmp, "plain.parquet"), os.path.join(tmp, "encrypted.parquet")
    _write_pqbloom_file("core", rows, plain, True)
    _write_pqbloom_file("core", rows, enc, True, encrypt=True)
    size = arrow_table(dataset("core", rows)).nbytes
    w = [Contender("pqbloom", "default", recipe(pqbloom_write, "core", rows, os.path.join(tmp, "w-plain.parquet"),
                                                 "default", True, False)),
         Contender("pqbloom", "default", recipe(pqbloom_write, "core", rows, os.path.join(tmp, "w-enc.parquet"),
                                                 "default", True, True), " encrypted")]
    r = [Contender("pqbloom", "default", recipe(pqbloom_read, plain, "default", False, False)),
         Contender("pqbloom", "default", recipe(pqbloom_read, enc, "default", False, True), " encrypted")]
    pairs = [("pq encrypted", "pq")]
    note = f"Bloom filter on id; id encrypted with its own key; files {_mib(plain)} plaintext, {_mib(enc)} encrypted"
    return [Case("write, plaintext vs encrypted", rows, w, ("encrypt",), size, note, pairs),
            Case("read, plaintext vs encrypted", rows, r, ("encrypt",), size, note, pairs)]


def main(argv: list[str] | None = None) -> list[CaseResult]:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--rows", type=int, default=10_000_000)
    ap.add_argument("--repeat", type=int, default=5, help="timed rounds per case (at least 5)")
    ap.add_argument("--bloom", action="store_true", help="also measure with a Bloom filter on id")
    ap.add_argument("--encrypt", action="store_true",
                    help="pqbloom only: id column encrypted with its own key (and its Bloom filter) vs plaintext")
    ap.add_argument("--only", default="", help="run only the cases whose name contains this text")
    ap.add_argument("--no-memory", action="store_true", help="skip the peak-memory child processes")
    ap.add_argument("--quick", action="store_true", help="smoke run: 20,000 rows")
    ap.add_argument("--json", help="save the results to this JSON file")
    args = ap.parse_args(argv)
    rows = 20_000 if args.quick else args.rows
    env = environment({"script": "bench_core", "rows": rows, "repeat": args.repeat})
    print(f"bench_core: {rows:,} rows, median of {max(args.repeat, 5)} interleaved rounds; "
          f"load average {env.get('loadavg')}")
    print(pqbloom_threads_note())
    print(peers_note())
    print("labels: pq = pqbloom read_table / write_table, pq+to_arrow = read_table(...).to_arrow(), "
          "pa = pyarrow; '1t' = use_threads=False, no suffix = library default")
    results: list[CaseResult] = []
    with tempfile.TemporaryDirectory(prefix="pqbloom-bench-") as tmp:
        os.environ[CACHE_ENV] = tmp
        if args.encrypt:
            cases = encrypt_cases(rows, tmp)
        else:
            cases = [c for bloom in ([False, True] if args.bloom else [False]) for c in core_cases(rows, tmp, bloom, args.only)]
        for case in cases:
            if args.only in case.name:
                results.append(run_case(case, args.repeat, memory=not args.no_memory))
                if "write" in case.tags:
                    print("   files: " + ", ".join(f"{c.label} {_mib(c.recipe.args[2])}" for c in case.contenders
                                                   if os.path.exists(c.recipe.args[2])))
        if args.encrypt:
            for r in results:
                for k, v in r.ratios.items():
                    print(f"{r.name}: encryption overhead {v - 1:+.1%} ({k})")
        else:
            print_summary(results)
    if args.json:
        save_json(args.json, env, results)
    return results


if __name__ == "__main__":
    main()
