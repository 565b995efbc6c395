"""Real-world speed benchmark (issue #17): the issue's cases and the corpus files over 1 MiB.

    python bench/bench_realworld.py [--rows 10000000] [--repeat 5] [--only TEXT] [--quick]
                                    [--no-memory] [--json PATH]

Cases (files written by pyarrow, snappy, 1,000,000-row row groups, in a temporary directory; data
from ``_data.py``, vectorized numpy, seeded):

* ``emails + URLs``: two variable-length string columns, 15-44 and 18-81 bytes, nearly all distinct;
* ``10% nulls``: int64, double and 16-char string, each 10% null;
* ``100-distinct strings + timestamp``: a 4-20 byte string taking 100 values, a timestamp[us];
* ``list<int64> + struct``: ``--rows / 10`` rows (1M by default) of a list of 0-9 int64 (5% null
  lists) and a struct of int64 and a 3-15 byte string;
* ``write: emails + URLs``: each writer from its own native input built before the timer;
* ``corpus: <file>``: every file over 1 MiB in ``../shared/fixtures/real-world``, read whole:
  pqbloom ``read_table(...).to_arrow()`` vs ``pq.read_table``.

Every case runs its contenders in one process, warmed up, interleaved, median of ``--repeat``
(at least 5) rounds (``_harness.py`` says exactly what is timed and how peak memory is taken).
Readers: pqbloom native (``pq``) and ``+to_arrow``, pyarrow ``use_threads=False`` (``pa 1t``), the
same with Arrow's thread pools at one thread each (``pa 1core``, the issue's cases only: ``pa 1t``
still decodes on Arrow's I/O pool), and default (``pa``), DuckDB and polars where installed (not for
the corpus files). The run ends with
a table of pqbloom/peer ratios and one line per target of the issue. ``--json`` saves everything
for a before/after comparison.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile

_HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(_HERE))  # pqbloom from this tree, not an installed copy
sys.path.insert(0, _HERE)

from _data import CACHE_ENV, arrow_table, dataset, describe, write_arrow_file  # noqa: E402
from _engines import peers_note, pqbloom_threads_note, read_contenders, write_contenders  # noqa: E402
from _harness import (  # noqa: E402
    Case,
    CaseResult,
    Target,
    environment,
    print_summary,
    print_targets,
    run_case,
    save_json,
)

CORPUS = os.path.join(os.path.dirname(_HERE), "..", "shared", "fixtures", "real-world")
MIN_CORPUS_BYTES = 2**20

# (name, dataset, rows divisor)
READS = [("emails + URLs, variable length, ~all distinct", "emails-urls", 1),
         ("10% nulls: int64, double, 16-char string", "nulls10", 1),
         ("100-distinct strings + timestamp", "categories-ts", 1),
         ("list<int64> + struct", "list-struct", 10)]

SINGLE = ("1", "n/a")  # pqbloom without use_threads counts on both sides of the comparison
TARGETS = [
    Target("read, single-threaded: pqbloom / pyarrow use_threads=False", "read", SINGLE, ("1",), 1.0, 1.5),
    Target("read, one core: pqbloom use_threads=False / pyarrow use_threads=False, pools of one thread", "read",
           SINGLE, ("1core",), 1.0, 1.5),
    Target("read, threads on both sides: pqbloom default / pyarrow default", "read", ("default", "n/a"),
           ("default",), 1.2),
    Target("corpus files over 1 MiB: pqbloom+to_arrow / pyarrow use_threads=False", "corpus", SINGLE, ("1",), 2.0),
    Target("write emails + URLs: pqbloom / pyarrow", "write", SINGLE, ("n/a",), 1.0),
    Target("peak memory of pqbloom's native reads / result size", "read", ("1", "default", "n/a"),
           ("1", "default"), 1.5, memory=True, variants=("",)),
]


def corpus_files(quick: bool) -> list[str]:
    """Files over 1 MiB in the real-world corpus (only the smallest with ``quick``)."""
    found = []
    for dirpath, _, names in os.walk(CORPUS):
        for n in names:
            p = os.path.join(dirpath, n)
            if n.endswith(".parquet") and os.path.getsize(p) > MIN_CORPUS_BYTES:
                found.append(p)
    found.sort(key=os.path.getsize if quick else (lambda p: p))
    return found[:1] if quick else found


def build_cases(rows: int, tmp: str, quick: bool, only: str) -> list[Case]:
    import pyarrow.parquet as pq

    cases = []
    for name, data, div in READS:
        if only not in name:
            continue
        n = max(rows // div, 1)
        path = os.path.join(tmp, f"{data}.parquet")
        cols = dataset(data, n)
        size = write_arrow_file(cols, path).nbytes
        cases.append(Case(name, n, read_contenders(path, one_core=True), ("read",), size,
                          f"file {os.path.getsize(path) / 2**20:.1f} MiB; {describe(cols)}"))
    name = "write: emails + URLs"
    if only in name:
        size = arrow_table(dataset("emails-urls", rows)).nbytes
        cases.append(Case(name, rows, write_contenders("emails-urls", rows, tmp), ("write",), size))
    for path in corpus_files(quick):
        name = "corpus: " + os.path.relpath(path, CORPUS)
        if only not in name:
            continue
        try:
            t = pq.read_table(path)
        except Exception as e:  # pyarrow cannot read it either: nothing to compare against
            print(f"(skipped {name}: pyarrow raised {type(e).__name__})")
            continue
        cases.append(Case(name, t.num_rows, read_contenders(path, native=False, peers=False), ("corpus",), t.nbytes,
                          f"file {os.path.getsize(path) / 2**20:.1f} MiB, {t.num_columns} columns"))
    return cases


def main(argv: list[str] | None = None) -> list[CaseResult]:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--rows", type=int, default=10_000_000)
    ap.add_argument("--repeat", type=int, default=5, help="timed rounds per case (at least 5)")
    ap.add_argument("--only", default="", help="run only the cases whose name contains this text")
    ap.add_argument("--no-memory", action="store_true", help="skip the peak-memory child processes")
    ap.add_argument("--quick", action="store_true", help="smoke run: 20,000 rows, the smallest corpus file")
    ap.add_argument("--json", help="save the results to this JSON file")
    args = ap.parse_args(argv)
    rows = 20_000 if args.quick else args.rows
    env = environment({"script": "bench_realworld", "rows": rows, "repeat": args.repeat})
    print(f"bench_realworld: {rows:,} rows, median of {max(args.repeat, 5)} interleaved rounds; "
          f"load average {env.get('loadavg')}")
    print(pqbloom_threads_note())
    print(peers_note())
    print("labels: pq = pqbloom read_table / write_table, pq+to_arrow = read_table(...).to_arrow(), "
          "pa = pyarrow; '1t' = use_threads=False, no suffix = library default")
    with tempfile.TemporaryDirectory(prefix="pqbloom-bench-") as tmp:
        os.environ[CACHE_ENV] = tmp
        results = [run_case(c, args.repeat, memory=not args.no_memory) for c in build_cases(rows, tmp, args.quick,
                                                                                            args.only)]
    print_summary(results)
    evals = print_targets(TARGETS, results)
    if args.json:
        save_json(args.json, env, results, evals)
    return results


if __name__ == "__main__":
    main()
