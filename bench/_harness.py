"""Benchmark harness: competing callables measured in one process, interleaved, with per-case peaks.

What is measured, and how:

* **Time.** Every contender of a case is built first (its factory imports its library, opens
  connections, builds its native input), so no import or setup runs inside a timer. Each contender
  is then called once to warm up (and to check it returns the expected number of rows; in a read
  case pyarrow's contenders warm up first and every pqbloom result must equal the first one's
  table, or the contender is reported as failed; a case with its own ``check`` hands it every
  contender's warm-up result, whatever the library, with the same consequence), then the
  contenders run in interleaved rounds, ``repeat`` of them (at least 5), so a burst of load on a
  shared machine hits all of them alike; each round starts one contender later (A B C, B C A,
  C A B, ...) so that none always runs right after the same one (whose freed memory, caches and
  page-cache state it would inherit). ``gc.collect()`` runs before every
  call, outside the timer, and in write cases ``os.sync()`` too: the previous writer's dirty pages
  are on disk before the next writer starts, so the kernel's write-back of one writer's file does
  not take CPU (2 cores here) from the next writer's timed call (each writer's own flushes, at
  close or at a rename over the old file, stay in its timer); the timer covers the call and the construction of its result, and the
  result is dropped before the next call. The figure reported is the median; min and max are
  printed too (``spread`` = (max - min) / median, a noise gauge).
* **CPU time.** The process's CPU seconds over the same call (``time.process_time``: every thread),
  median, and its ratios (``cpu ratio``). Wall time is the target; CPU time says what it cost:
  pyarrow's ``read_table(use_threads=False)`` still reads and decodes on its I/O thread pool
  (pre-buffering), so on 2 cores its CPU seconds run to ~1.8 times its wall seconds, while
  pqbloom's ``use_threads=False`` stays on the calling thread.
* **Peak memory.** One process cannot give per-case peaks: tracemalloc sees Python's and numpy's
  allocations but not Arrow's memory pool, DuckDB's buffer manager or polars' allocator; Arrow's
  pool statistics see Arrow only; and every allocator keeps freed memory for the next case, which
  hides that case's real need. So the memory column
  comes from a short-lived child process per contender (``python _harness.py --child RECIPE``):
  the child builds the contender with the same factory (imports and input included), collects
  garbage, resets the kernel's resident-set high-water mark (``/proc/self/clear_refs`` = 5), reads
  its resident set ``VmRSS``, makes ONE call, and reports ``VmHWM - VmRSS before``: the most
  physical memory the call added at any moment, result included, from every allocator. The
  ``peak/result`` column divides that by the Arrow size of the result (for a read) or of the input
  (for a write), one reference for every engine. Without ``/proc`` (not Linux) the child falls
  back to ``ru_maxrss`` growth, which a setup peak can hide; the method is recorded in the JSON.
  The measured call is the child's first: a warm-up would leave freed memory in the allocators for
  the measured call to reuse. The factories import what the call needs beforehand, so the one-time
  costs left in it are a few MiB to ~20 MiB (lazy imports, thread pools, allocator arenas): noise
  at the default sizes, but they dominate at ``--quick`` sizes, where ``peak/result`` means little.

Contenders are described by :class:`Recipe` (a bench script, a module-level factory in it, and
JSON arguments) so that the parent and the memory child build the very same callable.
"""

from __future__ import annotations

import gc
import importlib.util
import json
import os
import platform
import statistics
import subprocess
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

MIN_REPEAT = 5


@dataclass(frozen=True)
class Recipe:
    """``factory(*args)`` in ``script`` returns the zero-argument callable to measure."""

    script: str
    factory: str
    args: tuple[Any, ...]


def recipe(factory: Callable[..., Callable[[], Any]], *args: Any) -> Recipe:
    """A recipe for a module-level ``factory`` of a bench script (args must be JSON values)."""
    mod = sys.modules[factory.__module__]
    script = getattr(mod, "__file__", None)
    if not script:
        raise ValueError(f"{factory.__module__} has no file")
    json.dumps(args)  # fail early on an argument a child could not receive
    return Recipe(os.path.abspath(script), factory.__name__, tuple(args))


_MODULES: dict[str, Any] = {}


def _module_for(script: str) -> Any:
    for mod in list(sys.modules.values()):
        f = getattr(mod, "__file__", None)
        if f and os.path.abspath(f) == script:
            return mod
    if script not in _MODULES:
        sys.path.insert(0, os.path.dirname(script))
        name = "_bench_" + os.path.splitext(os.path.basename(script))[0]
        spec = importlib.util.spec_from_file_location(name, script)
        assert spec is not None and spec.loader is not None
        mod = importlib.util.module_from_spec(spec)
        sys.modules[name] = mod
        spec.loader.exec_module(mod)
        _MODULES[script] = mod
    return _MODULES[script]


def build(r: Recipe) -> Callable[[], Any]:
    return getattr(_module_for(r.script), r.factory)(*r.args)  # type: ignore[no-any-return]


@dataclass
class Contender:
    """``family`` is the library (pqbloom, pyarrow, duckdb, polars); ``threads`` is ``1`` (asked for
    one thread), ``1core`` (pyarrow asked for one thread with its thread pools at one thread each:
    its ``use_threads=False`` alone still decodes on its I/O pool), ``default`` (the library's
    default) or ``n/a`` (the call has no such option);
    ``variant`` tells calls of one library apart (``+to_arrow``, ``encrypted``)."""

    family: str
    threads: str
    recipe: Recipe
    variant: str = ""

    @property
    def label(self) -> str:
        short = {"pqbloom": "pq", "pyarrow": "pa"}.get(self.family, self.family)
        return short + self.variant + {"1": " 1t", "1core": " 1core", "default": "", "n/a": ""}[self.threads]


@dataclass
class Case:
    name: str
    rows: int
    contenders: list[Contender]
    tags: tuple[str, ...] = ()
    result_bytes: int | None = None  # Arrow size of the result (reads) or of the input (writes)
    note: str = ""
    pairs: list[tuple[str, str]] = field(default_factory=list)  # (numerator, denominator) labels
    # called with every contender's warm-up result, whatever its library; raises AssertionError when
    # the result is not the expected one (the contender is then reported as failed, and not timed)
    check: Callable[[Any], None] | None = None


@dataclass
class Outcome:
    label: str
    family: str
    threads: str
    variant: str
    times: list[float] = field(default_factory=list)
    cpu_times: list[float] = field(default_factory=list)  # the process's CPU seconds (all threads)
    peak_bytes: int | None = None
    peak_method: str = ""
    error: str = ""

    @property
    def median(self) -> float | None:
        return statistics.median(self.times) if self.times else None

    @property
    def cpu_median(self) -> float | None:
        return statistics.median(self.cpu_times) if self.cpu_times else None


@dataclass
class CaseResult:
    name: str
    rows: int
    tags: tuple[str, ...]
    result_bytes: int | None
    note: str
    outcomes: list[Outcome]
    ratios: dict[str, float]
    cpu_ratios: dict[str, float] = field(default_factory=dict)

    def outcome(self, label: str) -> Outcome | None:
        return next((o for o in self.outcomes if o.label == label), None)


def standard_pairs(contenders: Sequence[Contender]) -> list[tuple[str, str]]:
    """pqbloom against pyarrow at the same thread setting (either side without the option pairs
    with both), and pqbloom's default against DuckDB and polars (threaded by default)."""
    pairs = []
    for p in contenders:
        if p.family != "pqbloom" or p.variant not in ("", "+to_arrow"):
            continue
        for q in contenders:
            same_threads = p.threads == q.threads or "n/a" in (p.threads, q.threads) or \
                (p.threads, q.threads) == ("1", "1core")
            if q.family == "pyarrow" and same_threads:
                pairs.append((p.label, q.label))
            elif q.family in ("duckdb", "polars") and p.threads != "1" and p.variant == "":
                pairs.append((p.label, q.label))
    return pairs


def _rows_of(result: Any) -> int | None:
    if result is None:
        return None
    for attr in ("num_rows", "height"):
        if hasattr(result, attr):
            return int(getattr(result, attr))
    return len(result)


def _as_arrow(res: Any) -> Any:
    """A pqbloom Table as a pyarrow Table (a pyarrow result as it is)."""
    return res if type(res).__module__.startswith("pyarrow") else res.to_arrow()


def _fmt_err(e: BaseException) -> str:
    return f"{type(e).__name__}: {str(e).splitlines()[0][:140] if str(e) else ''}"


def run_case(case: Case, repeat: int, memory: bool, out: Any = sys.stdout) -> CaseResult:
    """Measure one case (see the module docstring) and print its block."""
    repeat = max(repeat, MIN_REPEAT)
    outcomes = [Outcome(c.label, c.family, c.threads, c.variant) for c in case.contenders]
    calls: list[Callable[[], Any] | None] = [None] * len(case.contenders)
    # a read case's pqbloom results are compared with pyarrow's (a fast wrong answer is no result):
    # pyarrow's contenders warm up first, the first one's table is the reference
    reference: Any = None
    check = "read" in case.tags
    order = sorted(range(len(case.contenders)), key=lambda i: case.contenders[i].family != "pyarrow") if check \
        else range(len(case.contenders))
    for i in order:
        c, o = case.contenders[i], outcomes[i]
        try:
            fn = build(c.recipe)
            res = fn()  # warm-up, also the correctness checks below
            got = _rows_of(res)
            if got is not None and got != case.rows:
                raise AssertionError(f"returned {got} rows, expected {case.rows}")
            if check and c.family == "pyarrow" and reference is None:
                reference = res
            elif check and c.family == "pqbloom" and reference is not None and not _as_arrow(res).equals(reference):
                raise AssertionError("the result differs from pyarrow's")
            if case.check is not None:
                case.check(res)
            del res
            calls[i] = fn
        except Exception as e:  # a peer or pqbloom that cannot do this case: say so, measure the rest
            o.error = _fmt_err(e)
    del reference
    gc.collect()
    n = len(calls)
    settle_writes = "write" in case.tags and hasattr(os, "sync")
    for r in range(repeat):
        for i in range(n):  # round r starts at contender r: none always runs right after the same one
            fn, o = calls[(r + i) % n], outcomes[(r + i) % n]
            if fn is None:
                continue
            gc.collect()
            if settle_writes:
                os.sync()
            c0, t0 = time.process_time(), time.perf_counter()
            res = fn()
            dt, cpu = time.perf_counter() - t0, time.process_time() - c0
            del res
            o.times.append(dt)
            o.cpu_times.append(cpu)
    del calls
    gc.collect()
    if memory:
        for c, o in zip(case.contenders, outcomes):
            if not o.error:
                o.peak_bytes, o.peak_method = child_peak(c.recipe)
    ratios, cpu_ratios = {}, {}
    for num, den in case.pairs or standard_pairs(case.contenders):
        a, b = next(x for x in outcomes if x.label == num), next(x for x in outcomes if x.label == den)
        if a.median and b.median:
            ratios[f"{num}/{den}"] = a.median / b.median
        if a.cpu_median and b.cpu_median:
            cpu_ratios[f"{num}/{den}"] = a.cpu_median / b.cpu_median
    result = CaseResult(case.name, case.rows, case.tags, case.result_bytes, case.note, outcomes, ratios, cpu_ratios)
    print_case(result, out)
    return result


def child_peak(r: Recipe, timeout: float = 1800) -> tuple[int | None, str]:
    """Peak memory one call of ``r`` adds, measured in a fresh process (module docstring)."""
    env = dict(os.environ)
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    env["PYTHONPATH"] = os.pathsep.join(p for p in (root, env.get("PYTHONPATH", "")) if p)
    try:
        proc = subprocess.run([sys.executable, os.path.abspath(__file__), "--child", json.dumps(asdict(r))],
                              capture_output=True, text=True, timeout=timeout, env=env)
    except subprocess.TimeoutExpired:
        return None, "timeout"
    if proc.returncode != 0:
        return None, "child failed: " + (proc.stderr.strip().splitlines() or ["?"])[-1][:120]
    d = json.loads(proc.stdout.strip().splitlines()[-1])
    return d["peak"], d["method"]


def _status_kb(key: str) -> int | None:
    try:
        with open("/proc/self/status") as f:
            for line in f:
                if line.startswith(key + ":"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    return None


def _child(arg: str) -> None:
    d = json.loads(arg)
    fn = build(Recipe(d["script"], d["factory"], tuple(d["args"])))
    gc.collect()
    method = "VmHWM"
    try:
        with open("/proc/self/clear_refs", "w") as f:
            f.write("5")  # reset the high-water mark to the current resident set
        base = _status_kb("VmRSS")
    except OSError:
        base = None
    if base is None:
        import resource

        method = "ru_maxrss"
        base = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
    res = fn()
    if method == "VmHWM":
        peak = _status_kb("VmHWM") or 0
    else:
        import resource

        peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
    del res
    print(json.dumps({"peak": max(0, peak - base), "method": method}))


# -- reporting ----------------------------------------------------------------------------------------
def _mib(n: int | None) -> str:
    return "-" if n is None else f"{n / 2**20:.1f}"


def print_case(r: CaseResult, out: Any = sys.stdout) -> None:
    head = f"\n== {r.name}: {r.rows:,} rows"
    if r.result_bytes:
        head += f", result {_mib(r.result_bytes)} MiB in Arrow"
    print(head, file=out)
    if r.note:
        print(f"   {r.note}", file=out)
    print(f"   {'contender':<16}{'median s':>10}{'min s':>9}{'max s':>9}{'spread':>8}{'Mrows/s':>9}"
          f"{'cpu s':>8}{'peak MiB':>10}{'peak/res':>9}", file=out)
    for o in r.outcomes:
        if o.error:
            print(f"   {o.label:<16} error: {o.error}", file=out)
            continue
        med = o.median or 0.0
        spread = (max(o.times) - min(o.times)) / med if med else 0.0
        per = "-" if not (o.peak_bytes is not None and r.result_bytes) else f"{o.peak_bytes / r.result_bytes:.2f}"
        print(f"   {o.label:<16}{med:>10.4f}{min(o.times):>9.4f}{max(o.times):>9.4f}{spread:>8.0%}"
              f"{r.rows / med / 1e6 if med else 0:>9.1f}{o.cpu_median or 0:>8.3f}{_mib(o.peak_bytes):>10}{per:>9}",
              file=out)
    if r.ratios:
        print("   ratio " + "   ".join(f"{k} = {v:.2f}x" for k, v in r.ratios.items()), file=out)
    if r.cpu_ratios:
        print("   cpu ratio " + "   ".join(f"{k} = {v:.2f}x" for k, v in r.cpu_ratios.items()), file=out)
    sys.stdout.flush()


def print_summary(results: Sequence[CaseResult], out: Any = sys.stdout) -> None:
    """One line per case, one column per pqbloom/peer ratio (time, medians); then the same of CPU
    seconds."""
    for what, get in (("times", lambda r: r.ratios), ("CPU seconds (all threads)", lambda r: r.cpu_ratios)):
        keys: list[str] = []
        for r in results:
            keys += [k for k in get(r) if k not in keys]
        if not keys:
            continue
        width = max(len(r.name) for r in results) + 2
        print(f"\nSummary: ratio of median {what}, pqbloom / peer (below 1.00x pqbloom is faster)", file=out)
        print(f"{'case':<{width}}" + "".join(f"{k:>{max(len(k) + 2, 9)}}" for k in keys), file=out)
        for r in results:
            cells = "".join(f"{(f'{get(r)[k]:.2f}x' if k in get(r) else '-'):>{max(len(k) + 2, 9)}}" for k in keys)
            print(f"{r.name:<{width}}" + cells, file=out)


@dataclass
class Target:
    """A goal of the issue: ratios ``pqbloom/peer`` in the cases tagged ``tag``, over the pairs whose
    pqbloom side has a thread setting in ``num_threads`` and a variant in ``variants``, and whose
    peer is ``den_family`` with a thread setting in ``den_threads``. With ``memory``, the pqbloom
    sides' peak/result replaces the time ratio. A pqbloom contender that failed counts as missed."""

    name: str
    tag: str
    num_threads: tuple[str, ...]
    den_threads: tuple[str, ...]
    target: float
    limit: float | None = None
    den_family: str = "pyarrow"
    memory: bool = False
    variants: tuple[str, ...] = ("", "+to_arrow")


def evaluate(t: Target, results: Sequence[CaseResult]) -> dict[str, Any]:
    vals: list[tuple[str, float]] = []
    failed: list[str] = []
    for r in results:
        if t.tag not in r.tags:
            continue
        failed += [f"{r.name} [{o.label}]: {o.error}" for o in r.outcomes if o.error and o.family == "pqbloom"
                   and o.threads in t.num_threads and o.variant in t.variants]
        for key, v in r.ratios.items():
            num, den = key.split("/")
            a, b = r.outcome(num), r.outcome(den)
            if not (a and b and a.family == "pqbloom" and b.family == t.den_family and a.threads in t.num_threads
                    and a.variant in t.variants and b.threads in t.den_threads):
                continue
            if t.memory:
                if a.peak_bytes is not None and r.result_bytes:
                    vals.append((f"{r.name} [{num}]", a.peak_bytes / r.result_bytes))
            else:
                vals.append((f"{r.name} [{key}]", v))
    vals = list(dict.fromkeys(vals))
    over_target = [v for v in vals if v[1] > t.target]
    over_limit = [v for v in vals if t.limit is not None and v[1] > t.limit]
    worst = max(vals, key=lambda v: v[1]) if vals else None
    met = bool(vals) and not failed and not (over_limit if t.limit is not None else over_target)
    return {"name": t.name, "target": t.target, "limit": t.limit, "measured": len(vals),
            "over_target": len(over_target), "over_limit": len(over_limit), "worst": worst, "failed": failed,
            "met": met, "values": vals}


def print_targets(targets: Sequence[Target], results: Sequence[CaseResult], out: Any = sys.stdout,
                  title: str = "Targets (issue #17)") -> list[dict]:
    """One line per target: met / within limit / not met, how many comparisons, the worst."""
    print(f"\n{title}:", file=out)
    evals = []
    for t in targets:
        e = evaluate(t, results)
        evals.append(e)
        if not e["measured"] and not e["failed"]:
            print(f"  {t.name}: not measured in this run", file=out)
            continue
        bound = f"<= {t.target:.1f}x" + (f", limit {t.limit:.1f}x" if t.limit else "")
        if not e["met"]:
            verdict = "NOT MET"
        else:
            verdict = "MET" if not e["over_target"] else "within limit"
        line = f"  {t.name} ({bound}): {verdict}; {e['measured'] - e['over_target']}/{e['measured']} at target"
        if t.limit:
            line += f", {e['over_limit']} over the limit"
        if e["worst"]:
            line += f"; worst {e['worst'][1]:.2f}x ({e['worst'][0]})"
        if e["failed"]:
            line += f"; {len(e['failed'])} failed: " + "; ".join(e["failed"])
        print(line, file=out)
    return evals


def environment(extra: dict[str, Any] | None = None) -> dict[str, Any]:
    info: dict[str, Any] = {"python": platform.python_version(), "machine": platform.machine(),
                            "cpus": os.cpu_count(), "time": time.strftime("%Y-%m-%d %H:%M:%S")}
    try:
        info["loadavg"] = os.getloadavg()
    except OSError:
        pass
    try:
        root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
        info["commit"] = subprocess.run(["git", "-C", root, "rev-parse", "--short", "HEAD"], capture_output=True,
                                        text=True, timeout=10).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        pass
    info.update(extra or {})
    return info


def save_json(path: str, env: dict[str, Any], results: Sequence[CaseResult], targets: list[dict] | None = None,
              extra: dict[str, Any] | None = None) -> None:
    """The run as JSON: environment, cases, targets, and the script's own ``extra`` entries."""
    doc = {"environment": env, "cases": [asdict(r) for r in results], "targets": targets or [], **(extra or {})}
    with open(path, "w") as f:
        json.dump(doc, f, indent=1, default=str)


if __name__ == "__main__":
    if len(sys.argv) == 3 and sys.argv[1] == "--child":
        _child(sys.argv[2])
    else:
        sys.exit("usage: _harness.py --child RECIPE_JSON (started by the harness itself)")
