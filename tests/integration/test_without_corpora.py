"""The README's test command on a checkout without ``../shared`` beside it (a fresh clone): every test is
collected (no module reads a corpus at import and fails), the tests that need a corpus are skipped with a
reason naming the missing path, and ``PQBLOOM_REQUIRE_CORPORA=1`` (as ``.ci/run`` sets it) turns those
skips into failures.

The checkout is this repository's files copied to a temporary directory (nothing beside it), the package
imported from here."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.corpora import REQUIRE_ENV
from tests.paths import ROOT

#: corpus tests of each kind: a module marked as a whole, with parametrizations listed from the corpus at
#: import; a test of a module that also has tests without corpora; one reading FILES.tsv at import
SELECTION = ["tests/integration/test_core_fixtures.py", "tests/unit/file/test_chunk_window.py",
             "tests/integration/test_real_world.py::test_decisions_name_corpus_files",
             "tests/integration/test_real_world.py::test_file",
             "tests/unit/statistics/test_statistics.py::test_string_stats_fixture"]


@pytest.fixture(scope="module")
def checkout(tmp_path_factory) -> Path:
    where = tmp_path_factory.mktemp("fresh") / "pqbloom-checkout"
    shutil.copytree(ROOT, where, ignore=shutil.ignore_patterns(
        ".git", "pqbloom", "__pycache__", ".hypothesis", ".mypy_cache", ".ruff_cache", ".pytest_cache",
        ".benchmarks", "build", "*.egg-info"))
    assert not (where.parent / "shared").exists()
    return where


def _pytest(checkout: Path, *args: str, require: bool = False) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k != REQUIRE_ENV}
    env["PYTHONPATH"] = os.pathsep.join([str(checkout), str(ROOT)])  # the copy's tests, this package
    if require:
        env[REQUIRE_ENV] = "1"
    return subprocess.run([sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-m", "not spark", *args],
                          cwd=checkout, env=env, capture_output=True, text=True, timeout=900)


def test_every_test_is_collected_without_the_corpora(checkout):
    proc = _pytest(checkout, "--collect-only", "-q")
    out = proc.stdout + proc.stderr
    assert proc.returncode == 0, out[-3000:]
    assert "error" not in out.lower().split("tests collected")[-1], out[-3000:]
    assert int(re.search(r"(\d+)(?:/\d+)? tests collected", out).group(1)) > 1000, out[-500:]


def test_corpus_tests_skip_naming_the_missing_path(checkout):
    proc = _pytest(checkout, "-q", "-rs", *SELECTION)
    out = proc.stdout + proc.stderr
    assert proc.returncode == 0, out[-3000:]
    missing = [str((checkout / ".." / "shared" / "fixtures" / d).resolve()) for d in ("parquet-testing", "real-world")]
    skips = [line for line in out.splitlines() if line.startswith("SKIPPED")]  # grouped by reason
    assert int(re.search(r"(\d+) skipped", out).group(1)) >= 5, out[-3000:]
    assert skips and all("shared corpus not found" in line and any(m in line for m in missing) for line in skips), skips
    assert " failed" not in out and " error" not in out, out[-3000:]


def test_ci_makes_a_missing_corpus_a_failure(checkout):
    proc = _pytest(checkout, "-q", *SELECTION, require=True)
    out = proc.stdout + proc.stderr
    assert proc.returncode != 0, out[-3000:]
    assert "shared corpus not found" in out
    assert re.search(r"\d+ (failed|errors?)", out), out[-3000:]
    assert not re.search(r"\d+ skipped", out), out[-3000:]
