"""`pqbloom convert` on a big CSV: wall time and peak memory.

    python bench/bench_convert.py [--rows 10000000] [--keep DIR] [-- EXTRA CONVERT ARGS]

Generates a CSV of ``--rows`` rows in a temporary directory (id int, email with 1M distinct
values, amount, UTC timestamp, a text note; about 80 bytes a row), then runs the ``pqbloom``
console script (``python -m pqbloom.cli`` when it is not on PATH) as a user would:

    pqbloom convert big.csv big.parquet --bloom id --bloom email --compression zstd

and reports wall time, rows/s and peak RSS. ``--engines python,pyarrow --repeat N`` runs the conversion
once per CSV engine (``--csv-engine``) in interleaved rounds and reports each engine's median rows/s. Peak RSS is the child's own high-water mark
(``VmHWM`` from /proc, sampled until it exits; ``ru_maxrss`` of children is printed too, as
an upper bound that also counts the pages the child shared with this process before exec).
"""

from __future__ import annotations

import argparse
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time


def generate(path: str, rows: int, chunk: int = 200_000) -> None:
    with open(path, "w", encoding="utf-8") as fh:
        fh.write("id,email,amount,ts,note\n")
        for start in range(0, rows, chunk):
            stop = min(start + chunk, rows)
            fh.write("".join(
                f"{i * 7919 % 1000000007},user{i * 31 % 1000003}@example.com,{i % 100000 * 0.37:.2f},"
                f"2026-{1 + i % 12:02d}-{1 + i % 28:02d}T{i % 24:02d}:{i % 60:02d}:{i % 59:02d}Z,note {i % 5000}\n"
                for i in range(start, stop)))


def _hwm_kib(pid: int) -> int | None:
    try:
        with open(f"/proc/{pid}/status") as fh:
            for line in fh:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1])
    except OSError:
        return None
    return None


def run_convert(args: list[str]) -> tuple[float, int, int, int, str]:
    exe = shutil.which("pqbloom")
    cmd = ([exe] if exe else [sys.executable, "-m", "pqbloom.cli"]) + args
    t0 = time.perf_counter()
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    peak = 0
    while proc.poll() is None:
        hwm = _hwm_kib(proc.pid)
        if hwm:
            peak = max(peak, hwm)
        time.sleep(0.05)
    out, err = proc.communicate()
    wall = time.perf_counter() - t0
    children = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    return wall, peak, children, proc.returncode, (out + err).decode(errors="replace")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--rows", type=int, default=10_000_000)
    ap.add_argument("--keep", metavar="DIR", help="write the CSV and Parquet files here and keep them")
    ap.add_argument("--engines", metavar="LIST", help="compare CSV engines, e.g. python,pyarrow (--csv-engine)")
    ap.add_argument("--repeat", type=int, default=1, help="interleaved rounds when comparing engines")
    ap.add_argument("extra", nargs="*", help="more arguments for pqbloom convert (after --)")
    a = ap.parse_args()
    workdir = a.keep or tempfile.mkdtemp(prefix="pqbloom-bench-convert-")
    os.makedirs(workdir, exist_ok=True)
    csv_path = os.path.join(workdir, "big.csv")
    out_path = os.path.join(workdir, "big.parquet")
    try:
        t0 = time.perf_counter()
        generate(csv_path, a.rows)
        csv_bytes = os.path.getsize(csv_path)
        print(f"generated {a.rows:,} rows, {csv_bytes / 2**20:,.0f} MiB of CSV in {time.perf_counter() - t0:.1f} s")
        args = ["convert", csv_path, out_path, "--bloom", "id", "--bloom", "email", "--compression", "zstd",
                *a.extra]
        if a.engines:
            return compare_engines(args, a.engines.split(","), a.repeat, a.rows)
        wall, peak_kib, children_kib, rc, output = run_convert(args)
        if rc != 0:
            print(output, file=sys.stderr)
            return rc
        size = os.path.getsize(out_path)
        print(f"pqbloom {' '.join(args[:1] + ['big.csv', 'big.parquet'] + args[3:])}")
        print(f"  wall time   {wall:8.1f} s   ({a.rows / wall:,.0f} rows/s, {csv_bytes / 2**20 / wall:,.1f} MiB/s)")
        print(f"  peak RSS    {peak_kib / 1024:8.0f} MiB (VmHWM; ru_maxrss of children: {children_kib / 1024:.0f} MiB)")
        print(f"  CSV {csv_bytes / 2**20:,.0f} MiB -> Parquet {size / 2**20:,.1f} MiB")
        return 0
    finally:
        if not a.keep:
            shutil.rmtree(workdir, ignore_errors=True)


def compare_engines(args: list[str], engines: list[str], repeat: int, rows: int) -> int:
    """Each engine once per round, rounds interleaved; the median wall time and rows/s of each."""
    import statistics

    walls: dict[str, list[float]] = {e: [] for e in engines}
    for r in range(repeat):
        for e in engines:
            wall, peak_kib, _, rc, output = run_convert([*args, "--csv-engine", e])
            if rc != 0:
                print(output, file=sys.stderr)
                return rc
            walls[e].append(wall)
            print(f"  round {r + 1} {e:8s} {wall:8.1f} s ({rows / wall:,.0f} rows/s, peak {peak_kib / 1024:,.0f} MiB)")
    for e in engines:
        med = statistics.median(walls[e])
        print(f"{e:8s} median {med:8.1f} s   {rows / med:,.0f} rows/s over {repeat} run(s)")
    if len(engines) == 2:
        a, b = (statistics.median(walls[e]) for e in engines)
        print(f"{engines[1]} is {a / b:.1f}x {engines[0]}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
