"""pyarrow.parquet scripts (examples/pyarrow_*.py, in the Arrow cookbook's style) give pyarrow's results on
pqbloom with only the import changed.

Each script prints one line per call (``label: result``); it is run with ``PQ_IMPL=pyarrow`` and with
pqbloom, and the lines compared. At least 90% of a script's lines must be pyarrow's, and the lines that
differ must be exactly those docs/guide/pyarrow-compatibility.md lists for the script (with the reason),
so a new difference, and a fixed one, both show up here. The page's summary ("N of M") is checked too.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from functools import cache

import pytest

from tests.paths import ROOT

EXAMPLES = ROOT / "examples"
DOC = ROOT / "docs" / "guide" / "pyarrow-compatibility.md"
#: the scripts of one call per line (pyarrow_compat.py prints its own way: test_example_pyarrow_compat.py)
SCRIPTS = sorted(p.name for p in EXAMPLES.glob("pyarrow_*.py") if p.name != "pyarrow_compat.py")


@cache
def _run(script: str, impl: str) -> list[str]:
    env = {**os.environ, "PQ_IMPL": impl, "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")])}
    out = subprocess.run([sys.executable, str(EXAMPLES / script)], env=env, capture_output=True, text=True,
                         timeout=600)
    assert out.returncode == 0, out.stderr
    return out.stdout.splitlines()


def _label(line: str) -> str:
    return line.split(": ", 1)[0]


def _documented() -> dict[str, set[str]]:
    """script -> the labels of the lines the page says differ."""
    out: dict[str, set[str]] = {}
    for m in re.finditer(r"^\| `examples/(pyarrow_\w+\.py)` \| `([^`]+)` \| .+ \|$", DOC.read_text(), re.M):
        out.setdefault(m.group(1), set()).add(m.group(2))
    return out


def _summary() -> dict[str, tuple[int, int]]:
    """script -> (lines equal, lines) as the page's summary table states them."""
    return {m.group(1): (int(m.group(2)), int(m.group(3))) for m in re.finditer(
        r"^\| `examples/(pyarrow_\w+\.py)` \| .+ \| (\d+) of (\d+) \|$", DOC.read_text(), re.M)}


def test_there_are_scripts_and_each_changes_only_the_import():
    assert len(SCRIPTS) >= 5
    for script in SCRIPTS:
        imports = re.findall(r"^\s*import (\S+) as pq\b", (EXAMPLES / script).read_text(), re.M)
        assert sorted(imports) == ["pqbloom", "pyarrow.parquet"], script


@pytest.mark.parametrize("script", SCRIPTS)
def test_script_gives_pyarrows_results(script, record_property):
    theirs, ours = _run(script, "pyarrow"), _run(script, "pqbloom")
    labels = [_label(line) for line in theirs]
    assert len(set(labels)) == len(labels), f"{script}: each line's label must be unique"
    assert [_label(line) for line in ours] == labels  # one line per call, in the same order
    differing = {_label(a) for a, b in zip(theirs, ours) if a != b}
    same = len(theirs) - len(differing)
    record_property("pyarrow_match", f"{same}/{len(theirs)}")
    print(f"{script}: {same} of {len(theirs)} lines are pyarrow's")
    assert same >= 0.9 * len(theirs), f"{script}: only {same} of {len(theirs)} lines are pyarrow's"
    assert differing == _documented().get(script, set()), (
        f"{script}: the differing lines and docs/guide/pyarrow-compatibility.md disagree: not listed "
        f"{sorted(differing - _documented().get(script, set()))}, listed but equal "
        f"{sorted(_documented().get(script, set()) - differing)}")
    assert _summary().get(script) == (same, len(theirs)), f"{script}: the page's summary says {_summary().get(script)}"


def test_all_scripts_together_give_pyarrows_results_on_90_percent_of_their_calls():
    total = same = 0
    for script in SCRIPTS:
        theirs, ours = _run(script, "pyarrow"), _run(script, "pqbloom")
        total += len(theirs)
        same += sum(a == b for a, b in zip(theirs, ours))
    print(f"all scripts: {same} of {total} lines are pyarrow's ({same / total:.1%})")
    assert total >= 100
    assert same >= 0.9 * total, f"only {same} of {total} lines are pyarrow's"


def test_the_page_lists_only_scripts_that_exist():
    assert set(_documented()) <= set(SCRIPTS)
    assert set(SCRIPTS) <= set(_summary())
