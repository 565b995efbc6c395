"""External key material seen from other processes (tests/unit/crypto/test_key_material.py has the rest):
writers killed (SIGKILL) before and after every rename of a rewrite and at random times, two writers racing
on one target while a reader polls it, and Spark (parquet-java) reading every commit state pqbloom leaves.
Whatever happens, the file at the target decrypts with the sidecar beside it and holds the old or the new
data. Kept out of the unit tier: each case starts processes (or a JVM)."""

from __future__ import annotations

import os
import random
import shutil
import signal
import subprocess
import sys
import textwrap
import time

import pytest

from pqbloom.crypto import key_material_path
from pqbloom.errors import CryptoError
from tests.paths import ROOT as REPO_ROOT
from tests.unit.crypto.test_key_material import (  # noqa: F401 (peer_states is a fixture)
    CHILD_ENV,
    N,
    for_pyarrow_reads,
    generations,
    leftovers,
    peer_states,
    read_version,
    run_child,
    write_version,
)

# -- SIGKILL at every step, and at random times -----------------------------------------------

_KILL_AT_RENAME = """
    import os, signal, sys
    from tests.unit.crypto.test_key_material import write_version
    path, version, when, k = sys.argv[1], int(sys.argv[2]), sys.argv[3], int(sys.argv[4])
    real, calls = os.replace, [0]

    def replace(src, dst, **kw):
        calls[0] += 1
        if calls[0] == k and when == "before":
            os.kill(os.getpid(), signal.SIGKILL)
        real(src, dst, **kw)
        if calls[0] == k and when == "after":
            os.kill(os.getpid(), signal.SIGKILL)

    os.replace = replace
    write_version(path, version)
    print(calls[0])
"""


def test_sigkill_before_and_after_every_rename_of_a_rewrite(tmp_path):
    path = tmp_path / "t.parquet"
    write_version(path, 1)
    write_version(path, 2)  # two generations in the sidecar: a rewrite now takes every step
    proc = run_child(_KILL_AT_RENAME, path, 3, "never", 0)
    assert proc.returncode == 0, proc.stderr
    renames = int(proc.stdout)
    assert renames >= 2 and read_version(path) == 3
    current, version = 3, 3
    snapshots = []
    for k in range(1, renames + 1):
        for when in ("before", "after"):
            version += 1
            proc = run_child(_KILL_AT_RENAME, path, version, when, k)
            assert proc.returncode == -signal.SIGKILL, (k, when, proc.returncode, proc.stderr[-2000:])
            got = read_version(path)  # the file at the target decrypts with the sidecar at the target
            assert got in (current, version), (k, when, got)
            current = got
            snap = tmp_path / f"snap-{k}-{when}"
            snap.mkdir()
            shutil.copy2(path, snap / path.name)
            shutil.copy2(key_material_path(path), key_material_path(snap / path.name))
            snapshots.append(snap / path.name)
            for name in leftovers(tmp_path):  # a killed writer may leave its temporary file
                os.remove(tmp_path / name)
    # the states a kill leaves are read by pyarrow too (extra keys in the sidecar are harmless)
    got = for_pyarrow_reads(snapshots)
    assert got == {str(s): [read_version(s)] * N for s in snapshots}


_REWRITE_LOOP = """
    import sys
    from tests.unit.crypto.test_key_material import write_version
    path, version = sys.argv[1], int(sys.argv[2])
    print("ready", flush=True)
    while True:
        print(version, flush=True)
        write_version(path, version)
        version += 1
"""


def test_sigkill_at_random_times_during_rewrites(tmp_path):
    path = tmp_path / "t.parquet"
    write_version(path, 0)
    at_target, next_version = 0, 1
    rng = random.Random(15)
    for _ in range(8):
        p = subprocess.Popen([sys.executable, "-c", textwrap.dedent(_REWRITE_LOOP), str(path), str(next_version)],
                             stdout=subprocess.PIPE, text=True, cwd=REPO_ROOT, env=CHILD_ENV)
        try:
            assert p.stdout is not None and p.stdout.readline().strip() == "ready"
            time.sleep(rng.uniform(0.0, 0.4))
        finally:
            os.kill(p.pid, signal.SIGKILL)
        started = [int(line) for line in p.stdout.read().split()]
        p.wait()
        got = read_version(path)  # decrypts: the old file, or one of the versions this writer started
        allowed = {at_target, *started[-2:]}  # all but the last it started completed
        assert got in allowed, (at_target, started[-3:], got)
        at_target, next_version = got, max([got, *started]) + 1
        for name in leftovers(tmp_path):
            os.remove(tmp_path / name)
    assert at_target > 8  # the writers got somewhere


# -- racing writers and a reader polling -------------------------------------------------------

_RACER = """
    import sys
    from tests.unit.crypto.test_key_material import write_version
    path, writer, rounds = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
    for i in range(rounds):
        write_version(path, writer * 100_000 + i, 2_000)
"""


def test_racing_writers_and_a_polling_reader(tmp_path):
    path = tmp_path / "t.parquet"
    write_version(path, 0, 2_000)
    rounds = 60
    racers = [subprocess.Popen([sys.executable, "-c", textwrap.dedent(_RACER), str(path), str(w), str(rounds)],
                               stderr=subprocess.PIPE, text=True, cwd=REPO_ROOT, env=CHILD_ENV) for w in (1, 2)]
    reads, replaced_while_reading, undecryptable = 0, 0, []
    while any(p.poll() is None for p in racers):
        with open(path, "rb") as fh:
            inode = os.fstat(fh.fileno()).st_ino
            try:
                read_version(path, fh)
                reads += 1
            except CryptoError as exc:
                if os.stat(path).st_ino == inode:  # still the file at the target: it lacks its keys
                    undecryptable.append(f"{type(exc).__name__}: {exc}")
                else:  # replaced after we opened it and its keys pruned since: not the target's file
                    replaced_while_reading += 1
    for p in racers:
        assert p.wait() == 0, p.stderr.read()[-2000:] if p.stderr else ""
    assert undecryptable == []
    assert reads > 10
    assert read_version(path) in (100_000 + rounds - 1, 200_000 + rounds - 1)
    assert len(generations(path)) <= 2 and leftovers(tmp_path) == []
    print(f"{reads} reads during the race, {replaced_while_reading} of a file replaced while it was read")


# -- Spark reads every commit state -----------------------------------------------------------

@pytest.mark.spark
def test_spark_reads_every_commit_state(peer_states, spark):  # noqa: F811
    for name, (path, version) in peer_states.items():
        rows = spark.read.parquet(str(path)).selectExpr("count(*) AS n", "min(v) AS lo", "max(v) AS hi",
                                                        "sum(id) AS s").collect()[0]
        assert (rows.n, rows.lo, rows.hi, rows.s) == (N, version, version, N * (N - 1) // 2), name
