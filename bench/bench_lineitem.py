"""Issue #32 benchmark ("Speed where users feel it"): what users do with a lineitem-shaped table.

    python bench/bench_lineitem.py [--rows 1000000] [--filter-rows 10000000] [--row-groups 2000]
                                   [--rows-per-group 5000] [--wide-columns 500] [--wide-rows 100000]
                                   [--repeat 5] [--only TEXT] [--no-memory] [--quick] [--json PATH]

Tables (``_lineitem.py``, vectorized numpy, seeded): a TPC-H lineitem-shaped table (int64 keys,
int32, four decimal(15,2), three dates, one-character flags, low-cardinality strings, 10-44 character
comments), a table of timestamps with zones and strings (some nulls), a 1,000-value string column,
a 3-column table cut in many row groups, a table of many float64 columns.

Cases (each contender built before its timer, warmed up, checked, then timed in interleaved rounds,
median of at least 5; ``_harness.py`` says how; peak memory from a child process per contender):

* ``write lineitem``: plain (pqbloom, pyarrow, DuckDB, polars), with Bloom filters on ``l_orderkey``
  and ``l_comment`` (pqbloom, pyarrow: the same ndv and fpp), encrypted with a footer key and two
  column keys through each library's CryptoFactory and an in-memory KMS (pqbloom, pyarrow; pyarrow
  cannot write Bloom filters into an encrypted file, so this one has none). Snappy, 1,000,000-row
  row groups. Check: the file reads back in pyarrow equal to the input (and has the Bloom filters,
  as DuckDB's ``parquet_metadata`` sees the footer).
* ``to_pandas``: ``read_table(f).to_pandas()`` on pyarrow's lineitem file and on the timestamps-with-
  zones file, vs pyarrow (``use_threads=False`` for both steps in ``pa 1t``) and
  ``pl.read_parquet(f).to_pandas()``. DuckDB is left out: its ``.df()`` gives decimals as float64
  and zoned timestamps in UTC, not the same frame. Check: the frame equals pyarrow's (polars' date
  columns, datetime64 there, must hold the same dates).
* ``filter``: equality on a 1,000-value dictionary-encoded string column (pyarrow's file, ``--filter-rows``
  rows, 1Mi-row row groups; the value is in every row group, so only the predicate decides).
* ``full read, many row groups`` (``--row-groups`` x ``--rows-per-group``, 3 columns) and ``full read,
  wide`` (``--wide-columns`` float64 x ``--wide-rows``), pyarrow's files.
* ``to_arrow``: pqbloom's ``read_table`` and ``read_table(...).to_arrow()`` on lineitem files written
  by pqbloom and by pyarrow, against pyarrow's ``read_table``.
* ``full read lineitem / <writer>'s file``: files written by pyarrow, DuckDB, polars and pqbloom with
  each library's defaults (the files users have). Prints the geomean of pqbloom / the fastest peer
  with threads on both sides (the issue's moonshot: pyarrow-, DuckDB- and polars-written files) and
  of pqbloom / pyarrow single-threaded.
* ``bytes read``: untimed; pqbloom's ``io_stats`` after a full local read of each file, divided by
  the file's size (the issue's target: each byte fetched once, 1.00x).

Every contender's result is checked against pyarrow's (or, for writes, the written file read back by
pyarrow against the input) before anything is timed; a contender that fails its check is reported as
failed and not timed. Labels: pq = pqbloom, pa = pyarrow; ``1t`` = one thread (``use_threads=False``),
no suffix = the library's default (threads). Ratios are pqbloom / peer medians: below 1.00x pqbloom
is faster.
"""

from __future__ import annotations

import argparse
import gc
import math
import os
import sys
import tempfile
from typing import Any

_HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(_HERE))  # pqbloom from this tree, not an installed copy
sys.path.insert(0, _HERE)

from _data import CACHE_ENV  # noqa: E402
from _engines import peers_note, polars_read, pqbloom_read, pqbloom_threads_note, pyarrow_read  # noqa: E402
from _harness import (  # noqa: E402
    Case,
    CaseResult,
    Contender,
    Target,
    environment,
    print_summary,
    print_targets,
    recipe,
    run_case,
    save_json,
    standard_pairs,
)
from _lineitem import describe  # noqa: E402
from _lineitem_engines import (  # noqa: E402
    BLOOM_COLUMNS,
    COLUMN_KEYS,
    Expect,
    assert_same_frame,
    assert_same_table,
    check_written,
    duckdb_filter,
    duckdb_read,
    duckdb_write,
    polars_filter,
    polars_pandas,
    polars_write,
    pqbloom_filter,
    pqbloom_pandas,
    pqbloom_write,
    pyarrow_filter,
    pyarrow_pandas,
    pyarrow_write,
    spec_table,
    write_peer_file,
)

PEERS = ("pyarrow", "duckdb", "polars")
WRITERS = ("pyarrow", "duckdb", "polars", "pqbloom")
MOONSHOT_WRITERS = ("pyarrow", "duckdb", "polars")
THREADS = ("1", "default")

TARGETS = [
    Target("writes (plain, Bloom, encrypted): pqbloom / pyarrow", "write", ("default",), ("n/a",), 1.0),
    Target("read_table(...).to_pandas(): pqbloom / pyarrow, same threads", "to_pandas", THREADS, THREADS, 1.0),
    Target("filter on a dictionary-encoded column: pqbloom / polars", "filter", ("default",), ("default",), 1.0,
           den_family="polars"),
    Target("many row groups, wide: pqbloom 1 thread / pyarrow 1 thread", "shape", ("1",), ("1",), 1.0),
    Target("many row groups, wide: pqbloom / pyarrow, threads on both sides", "shape", ("default",), ("default",),
           1.0),
    Target("full reads of the peers' files: pqbloom 1 thread / pyarrow 1 thread", "peer-read", ("1",), ("1",), 1.0,
           variants=("",)),
]


def _mib(n: float) -> str:
    return f"{n / 2**20:.1f} MiB"


def _read_contenders(path: str, *, peers: bool = True, to_arrow: bool = False) -> list[Contender]:
    cs = [Contender("pqbloom", t, recipe(pqbloom_read, path, t, False)) for t in THREADS]
    if to_arrow:
        cs += [Contender("pqbloom", t, recipe(pqbloom_read, path, t, True), "+to_arrow") for t in THREADS]
    cs += [Contender("pyarrow", t, recipe(pyarrow_read, path, t)) for t in THREADS]
    if peers:
        cs += [Contender("duckdb", "default", recipe(duckdb_read, path)),
               Contender("polars", "default", recipe(polars_read, path))]
    return cs


def _read_check(path: str, sort_by: str | None = None) -> Expect:
    import pyarrow.parquet as pq

    return Expect(lambda: pq.read_table(path), lambda ref, res: assert_same_table(ref, res, sort_by))


class Builder:
    """Writes the files a selected case reads (untimed, once) and builds the cases."""

    def __init__(self, args: argparse.Namespace, tmp: str) -> None:
        self.a, self.tmp = args, tmp
        self.lineitem = ["lineitem", args.rows]
        self.files: dict[str, str] = {}  # what the bytes-read report covers: label -> path

    def path(self, name: str) -> str:
        return os.path.join(self.tmp, name + ".parquet")

    def peer_file(self, writer: str, spec: list[Any], label: str) -> str:
        path = self.path(f"{spec[0]}-{'-'.join(map(str, spec[1:]))}-{writer}")
        if not os.path.exists(path):
            write_peer_file(writer, spec, path)
        self.files[f"{label} / {writer}'s file"] = path
        return path

    def pyarrow_file(self, spec: list[Any], label: str, **options: Any) -> str:
        import pyarrow.parquet as pq

        path = self.path(f"{spec[0]}-{'-'.join(map(str, spec[1:]))}-pyarrow-custom")
        if not os.path.exists(path):
            pq.write_table(spec_table(spec), path, **options)
        self.files[f"{label} / pyarrow's file"] = path
        return path

    def cases(self) -> list[Case]:
        out: list[Case] = []
        for make in (self.writes, self.to_pandas, self.filter, self.shapes, self.to_arrow, self.peer_reads):
            out += make()
        return out

    def wanted(self, name: str) -> bool:
        return self.a.only in name

    def writes(self) -> list[Case]:
        spec, rows, out = self.lineitem, self.a.rows, []
        modes = [("plain", "write lineitem"),
                 ("bloom", f"write lineitem, Bloom filters on {' + '.join(BLOOM_COLUMNS)}"),
                 ("encrypted", f"write lineitem, encrypted: footer key + {len(COLUMN_KEYS)} column keys")]
        for mode, name in modes:
            if not self.wanted(name):
                continue

            def dest(writer: str, mode: str = mode) -> str:
                return self.path(f"w-{mode}-{writer}")

            cs = [Contender("pqbloom", t, recipe(pqbloom_write, spec, dest("pqbloom" + t), t, mode)) for t in THREADS]
            cs.append(Contender("pyarrow", "n/a", recipe(pyarrow_write, spec, dest("pyarrow"), mode)))
            if mode == "plain":
                cs += [Contender("duckdb", "default", recipe(duckdb_write, spec, dest("duckdb"))),
                       Contender("polars", "default", recipe(polars_write, spec, dest("polars")))]
            check = Expect(lambda: spec_table(spec), check_written(spec, mode == "bloom"))
            note = "snappy, 1,000,000-row row groups" + (
                "; encryption properties (new data keys, KMS-wrapped) made in the timed call" if mode == "encrypted"
                else "")
            out.append(Case(name, rows, cs, ("write",), spec_table(spec).nbytes, note, check=check))
        return out

    def to_pandas(self) -> list[Case]:
        out = []
        for spec, what in ((self.lineitem, "lineitem"), (["events", self.a.rows], "timestamps with zones + strings")):
            name = f"to_pandas: {what} / pyarrow's file"
            if not self.wanted(name):
                continue
            path = self.peer_file("pyarrow", spec, spec[0])
            cs = [Contender("pqbloom", t, recipe(pqbloom_pandas, path, t)) for t in THREADS]
            cs += [Contender("pyarrow", t, recipe(pyarrow_pandas, path, t)) for t in THREADS]
            cs.append(Contender("polars", "default", recipe(polars_pandas, path)))
            import pyarrow.parquet as pq

            check = Expect(lambda path=path: pq.read_table(path).to_pandas(), assert_same_frame)
            out.append(Case(name, self.a.rows, cs, ("to_pandas",), spec_table(spec).nbytes,
                            f"file {_mib(os.path.getsize(path))}; {describe(spec_table(spec))}", check=check))
        return out

    def filter(self) -> list[Case]:
        import pyarrow.compute as pc

        name = f"filter: key == value, 1,000-value dictionary-encoded string, {self.a.filter_rows:,} rows"
        if not self.wanted(name):
            return []
        spec = ["dict1000", self.a.filter_rows]
        t = spec_table(spec)
        path = self.pyarrow_file(spec, "1,000-value strings", row_group_size=1 << 20)
        value = t.column("key")[0].as_py()
        matches = int(pc.sum(pc.equal(t.column("key"), value)).as_py())
        cs = [Contender("pqbloom", th, recipe(pqbloom_filter, path, th, "key", value)) for th in THREADS]
        cs += [Contender("pyarrow", th, recipe(pyarrow_filter, path, th, "key", value)) for th in THREADS]
        cs += [Contender("polars", "default", recipe(polars_filter, path, "key", value)),
               Contender("duckdb", "default", recipe(duckdb_filter, path, "key", value))]
        import pyarrow.parquet as pq

        check = Expect(lambda: pq.read_table(path, filters=[("key", "=", value)]),
                       lambda ref, res: assert_same_table(ref, res, "id"))
        note = (f"pyarrow's file {_mib(os.path.getsize(path))}, 1Mi-row row groups; {matches:,} rows match "
                f"'{value}' (in every row group); result compared with pyarrow's in id order")
        return [Case(name, matches, cs, ("filter",), None, note, check=check)]

    def shapes(self) -> list[Case]:
        out = []
        groups, per = self.a.row_groups, self.a.rows_per_group
        name = f"full read, many row groups: {groups:,} x {per:,} rows, 3 columns"
        if self.wanted(name):
            spec = ["narrow3", groups * per]
            path = self.pyarrow_file(spec, "many row groups", row_group_size=per)
            out.append(Case(name, groups * per, _read_contenders(path), ("shape",), spec_table(spec).nbytes,
                            f"pyarrow's file {_mib(os.path.getsize(path))}; {describe(spec_table(spec))}",
                            check=_read_check(path)))
        cols, rows = self.a.wide_columns, self.a.wide_rows
        name = f"full read, wide: {cols:,} float64 columns x {rows:,} rows"
        if self.wanted(name):
            spec = ["wide", rows, cols]
            path = self.pyarrow_file(spec, "wide")
            out.append(Case(name, rows, _read_contenders(path), ("shape",), spec_table(spec).nbytes,
                            f"pyarrow's file {_mib(os.path.getsize(path))}", check=_read_check(path)))
        return out

    def to_arrow(self) -> list[Case]:
        out = []
        for writer in ("pqbloom", "pyarrow"):
            name = f"to_arrow: lineitem / {writer}'s file"
            if not self.wanted(name):
                continue
            path = self.peer_file(writer, self.lineitem, "lineitem")
            cs = _read_contenders(path, peers=False, to_arrow=True)
            pairs = [("pq+to_arrow 1t", "pq 1t"), ("pq+to_arrow", "pq")] + standard_pairs(cs)
            out.append(Case(name, self.a.rows, cs, ("to_arrow",), spec_table(self.lineitem).nbytes,
                            f"file {_mib(os.path.getsize(path))}; pq+to_arrow/pq = the cost of to_arrow()",
                            pairs, check=_read_check(path)))
        return out

    def peer_reads(self) -> list[Case]:
        out = []
        for writer in WRITERS:
            name = f"full read lineitem / {writer}'s file"
            if not self.wanted(name):
                continue
            path = self.peer_file(writer, self.lineitem, "lineitem")
            out.append(Case(name, self.a.rows, _read_contenders(path), ("peer-read",),
                            spec_table(self.lineitem).nbytes, _file_note(path), check=_read_check(path)))
        return out


def _file_note(path: str) -> str:
    import pyarrow.parquet as pq

    md = pq.read_metadata(path)
    codecs = sorted({md.row_group(0).column(i).compression for i in range(md.num_columns)}) if md.num_row_groups else []
    return (f"file {_mib(os.path.getsize(path))}, {md.num_row_groups} row groups, {'/'.join(codecs)}, "
            f"created by {md.created_by}")


# -- reports ------------------------------------------------------------------------------------------
def geomean(values: list[float]) -> float | None:
    return math.exp(sum(map(math.log, values)) / len(values)) if values else None


def fastest_peer(r: CaseResult) -> tuple[str, float] | None:
    """The peer (pyarrow, DuckDB, polars) at its default threads with the lowest median."""
    meds = [(o.label, o.median) for o in r.outcomes if o.family in PEERS and o.threads == "default" and o.median]
    return min(meds, key=lambda m: m[1]) if meds else None  # type: ignore[arg-type, return-value]


def peer_read_report(results: list[CaseResult]) -> dict[str, Any]:
    """Per lineitem file: pqbloom (threads) / the fastest peer (threads), pqbloom 1t / pyarrow 1t;
    the geomeans (the moonshot's over pyarrow-, DuckDB- and polars-written files)."""
    rows, moon, single = [], [], []
    for r in results:
        if "peer-read" not in r.tags:
            continue
        writer = r.name.split("/ ")[-1].split("'s file")[0]
        pq_, fast = r.outcome("pq"), fastest_peer(r)
        entry: dict[str, Any] = {"writer": writer}
        if pq_ and pq_.median and fast:
            entry.update(fastest=fast[0], ratio_fastest=pq_.median / fast[1])
            if writer in MOONSHOT_WRITERS:
                moon.append(entry["ratio_fastest"])
        if "pq 1t/pa 1t" in r.ratios:
            entry["ratio_1t"] = r.ratios["pq 1t/pa 1t"]
            single.append(entry["ratio_1t"])
        rows.append(entry)
    if not rows:
        return {}
    print("\nFull reads of the lineitem files: pqbloom / the fastest peer (threads on both sides), "
          "pqbloom 1t / pyarrow 1t")
    for e in rows:
        fast = f"{e['ratio_fastest']:.2f}x (vs {e['fastest']})" if "ratio_fastest" in e else "-"
        one = f"{e['ratio_1t']:.2f}x" if "ratio_1t" in e else "-"
        label = f"{e['writer']}'s file"
        print(f"  {label:<16} threads {fast:<22} 1 thread {one}")
    g_moon, g_single = geomean(moon), geomean(single)
    if g_moon is not None:
        verdict = "MET" if g_moon <= 1.0 else "NOT MET"
        print(f"  geomean vs the fastest peer, pyarrow/DuckDB/polars files ({len(moon)}): {g_moon:.2f}x "
              f"(moonshot target <= 1.00x: {verdict})")
    if g_single is not None:
        print(f"  geomean pq 1t / pa 1t, all files ({len(single)}): {g_single:.2f}x")
    return {"files": rows, "geomean_fastest_peer": g_moon, "geomean_1t_vs_pyarrow_1t": g_single}


def bytes_read_report(files: dict[str, str]) -> list[dict[str, Any]]:
    """pqbloom's ``io_stats`` after a full read of each file (one thread and threads) / the file's size."""
    import pqbloom

    out = []
    for label, path in files.items():
        size = os.path.getsize(path)
        entry: dict[str, Any] = {"file": label, "size": size}
        for threads in (False, True):
            with pqbloom.ParquetFile(path) as pf:
                pf.read(use_threads=threads)
                st = pf.io_stats
            key = "threads" if threads else "1t"
            entry[key] = {"bytes_read": st.bytes_read, "requests": st.requests, "ratio": st.bytes_read / size}
        out.append(entry)
    if out:
        print("\nLocal full reads, bytes read / file size (pqbloom io_stats; target 1.00x):")
        print(f"  {'file':<40}{'size':>12}{'1t ratio':>10}{'requests':>10}{'threads':>9}{'requests':>10}")
        for e in out:
            print(f"  {e['file']:<40}{_mib(e['size']):>12}{e['1t']['ratio']:>9.2f}x{e['1t']['requests']:>10}"
                  f"{e['threads']['ratio']:>8.2f}x{e['threads']['requests']:>10}")
    return out


def main(argv: list[str] | None = None) -> list[CaseResult]:
    ap = argparse.ArgumentParser(description=(__doc__ or "").split("\n")[0])
    ap.add_argument("--rows", type=int, default=1_000_000, help="lineitem and timestamp-table rows")
    ap.add_argument("--filter-rows", type=int, default=10_000_000, help="rows of the filter case's file")
    ap.add_argument("--row-groups", type=int, default=2000)
    ap.add_argument("--rows-per-group", type=int, default=5000)
    ap.add_argument("--wide-columns", type=int, default=500)
    ap.add_argument("--wide-rows", type=int, default=100_000)
    ap.add_argument("--repeat", type=int, default=5, help="timed rounds per case (at least 5)")
    ap.add_argument("--only", default="", help="run only the cases whose name contains this text")
    ap.add_argument("--no-memory", action="store_true", help="skip the peak-memory child processes")
    ap.add_argument("--no-bytes-read", action="store_true", help="skip the bytes-read report")
    ap.add_argument("--quick", action="store_true", help="smoke run: every case at a tiny size, garbage frozen (figures mean little)")
    ap.add_argument("--json", help="save the results to this JSON file")
    args = ap.parse_args(argv)
    if args.quick:
        args.rows, args.filter_rows, args.row_groups, args.rows_per_group = 20_000, 20_000, 40, 500
        args.wide_columns, args.wide_rows = 100, 2_000
    env = environment({"script": "bench_lineitem", "repeat": args.repeat,
                       **{k: getattr(args, k) for k in ("rows", "filter_rows", "row_groups", "rows_per_group",
                                                          "wide_columns", "wide_rows")}})
    print(f"bench_lineitem: lineitem {args.rows:,} rows, filter {args.filter_rows:,} rows, "
          f"{args.row_groups:,} x {args.rows_per_group:,} row groups, {args.wide_columns} x {args.wide_rows:,} wide; "
          f"median of {max(args.repeat, 5)} interleaved rounds; load average {env.get('loadavg')}")
    print(pqbloom_threads_note())
    print(peers_note())
    print("labels: pq = pqbloom, pa = pyarrow, pq+to_arrow = read_table(...).to_arrow(); '1t' = one thread "
          "(use_threads=False), no suffix = the library's default (threads)")
    results: list[CaseResult] = []
    with tempfile.TemporaryDirectory(prefix="pqbloom-bench-lineitem-") as tmp:
        os.environ[CACHE_ENV] = tmp
        builder = Builder(args, tmp)
        cases = builder.cases()
        if args.quick:
            # the harness collects garbage before every call; at smoke sizes that is most of the run
            # (the libraries' own objects, ~100k): frozen, they are left out of every collection
            gc.freeze()
        for case in cases:
            results.append(run_case(case, args.repeat, memory=not args.no_memory))
            if isinstance(case.check, Expect):
                case.check.release()
            if "write" in case.tags:
                print("   files: " + ", ".join(f"{c.label} {_mib(os.path.getsize(c.recipe.args[1]))}"
                                               for c in case.contenders if os.path.exists(c.recipe.args[1])))
        print_summary(results)
        peer = peer_read_report(results)
        io = [] if args.no_bytes_read else bytes_read_report(builder.files)
    evals = print_targets(TARGETS, results, title="Targets (issue #32)")
    print(f"load average at the end: {os.getloadavg()}")
    if args.json:
        save_json(args.json, env, results, evals, {"peer_reads": peer, "bytes_read": io,
                                                   "loadavg_end": os.getloadavg()})
    return results


if __name__ == "__main__":
    main()
