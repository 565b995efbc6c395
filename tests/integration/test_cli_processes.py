"""The ``pqbloom`` command in processes of its own: the installed ``pqbloom`` script and ``python -m pqbloom``
start and fail as a user sees them, and a conversion's peak memory (a process's own high-water mark) stays
bounded. Everything else about the command runs in process: tests/unit/cli/."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import textwrap

import pqbloom
from tests.paths import ROOT

#: the child imports this checkout's pqbloom, as the test process does
ENV = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), *sys.path])}


def test_pqbloom_script_and_python_m_pqbloom():
    script = shutil.which("pqbloom", path=os.pathsep.join([os.path.dirname(sys.executable), os.environ.get("PATH", "")]))
    assert script is not None, "the pqbloom console script is not installed (pip install -e .)"
    for cmd in ([script], [sys.executable, "-m", "pqbloom"]):
        proc = subprocess.run([*cmd, "--version"], capture_output=True, text=True, timeout=120, env=ENV)
        assert proc.returncode == 0 and proc.stdout.strip() == f"pqbloom {pqbloom.__version__}", (cmd, proc.stderr)
        proc = subprocess.run([*cmd, "schema", "/nonexistent/x.parquet"], capture_output=True, text=True, timeout=120,
                              env=ENV)
        assert proc.returncode == 1 and proc.stderr.startswith("pqbloom: error:"), (cmd, proc.stderr)
        assert "Traceback" not in proc.stderr and len(proc.stderr.strip().splitlines()) == 1


# ---------------------------------------------------------------------------------------------
# memory


# VmHWM is this process's own peak RSS (ru_maxrss would include the forking pytest process's)
PEAK = textwrap.dedent("""
    import sys
    if "--csv-engine" in sys.argv and sys.argv[sys.argv.index("--csv-engine") + 1] == "pyarrow" or \
            sys.argv[1:] == ["pyarrow"]:
        import pyarrow, pyarrow.csv, pyarrow.compute  # noqa: F401  (the fast path's baseline)
        sys.argv = sys.argv[:1] if sys.argv[1:] == ["pyarrow"] else sys.argv
    from pqbloom.cli import convert, main as cli  # noqa: F401
    rc = cli.main(sys.argv[1:]) if len(sys.argv) > 1 else 0
    with open("/proc/self/status") as fh:
        hwm = next(int(line.split()[1]) for line in fh if line.startswith("VmHWM:"))
    print(hwm // 1024)  # MiB
    sys.exit(rc)
""")


def _peak_mib(*args: str) -> int:
    proc = subprocess.run([sys.executable, "-c", PEAK, *map(str, args)], capture_output=True, text=True, timeout=600,
                          env=ENV)
    assert proc.returncode == 0, proc.stderr
    return int(proc.stdout.split()[-1])


def _memory_csv(path, n: int) -> None:
    with open(path, "w") as fh:
        fh.write("id,email,amount,ts,note\n")
        for i in range(n):
            fh.write(f"{i * 7919 % 1000003},user{i % 50000}@example.com,{i * 0.37:.2f},"
                     f"2026-02-{1 + i % 28:02d}T{i % 24:02d}:{i % 60:02d}:00Z,note number {i % 1000}\n")


def test_convert_memory_stays_bounded(tmp_path):
    src = tmp_path / "big.csv"
    n = 300_000
    _memory_csv(src, n)
    csv_mib = os.path.getsize(src) / 2**20
    opts = ("--row-group-size", "50000", "--chunk-rows", "16384", "--bloom", "id", "--bloom", "email")
    base = _peak_mib()
    bounded = _peak_mib("convert", src, tmp_path / "a.parquet", *opts, "--csv-engine", "python")
    # everything at once: one chunk and one row group of all the rows (what a naive converter holds)
    whole = _peak_mib("convert", src, tmp_path / "b.parquet", "--row-group-size", str(n), "--chunk-rows", str(n),
                      "--bloom", "id", "--bloom", "email", "--csv-engine", "python")
    assert pqbloom.read_metadata(str(tmp_path / "a.parquet")).num_rows == n
    grown, grown_whole = bounded - base, whole - base
    print(f"python: csv {csv_mib:.0f} MiB; baseline {base} MiB; bounded +{grown} MiB; whole +{grown_whole} MiB")
    assert grown < 0.4 * grown_whole
    assert grown < 3 * csv_mib + 40
    # pyarrow's path: a larger constant (its reader's blocks and threads, allocator arenas that level off at
    # about +110 MiB here, measured up to 2.7M rows), far below holding the rows (the whole 300k: +170 MiB)
    big = tmp_path / "bigger.csv"
    _memory_csv(big, 3 * n)
    base = _peak_mib("pyarrow")
    fast = [_peak_mib("convert", f, tmp_path / "c.parquet", *opts, "--csv-engine", "pyarrow") - base for f in (src, big)]
    print(f"pyarrow: baseline {base} MiB; bounded +{fast[0]} MiB ({n:,} rows), +{fast[1]} MiB ({3 * n:,} rows)")
    assert fast[1] < fast[0] + 60 and max(fast) < 150
    assert pqbloom.read_metadata(str(tmp_path / "c.parquet")).num_rows == 3 * n
