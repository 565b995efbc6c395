"""The README's code blocks run as written.

Python blocks run in order, in one namespace, in a scratch directory (the tour writes
``events.parquet``, later blocks read it; the Spark block gets the shared session as ``spark``).
Shell blocks: the demo command of the setup block runs; the test command of the setup block is the
one CI runs; every command of the command-line block runs against a CSV made here.
"""

from __future__ import annotations

import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

from tests.paths import ROOT

README = (ROOT / "README.md").read_text()
EXAMPLES_README = ROOT / "examples" / "README.md"
BLOCK = re.compile(r"```(\w+)\n(.*?)```", re.S)


def blocks(lang: str, text: str = README) -> list[str]:
    return [body for kind, body in BLOCK.findall(text) if kind == lang]


def run_python_blocks(path: Path, ns: dict[str, object]) -> dict[str, object]:
    """Run every Python block of ``path`` in order in the namespace ``ns`` (a block builds on the earlier ones)."""
    py = blocks("python", path.read_text())
    assert py, f"{path.name} has no Python block"
    for i, code in enumerate(py):
        try:
            exec(compile(code, f"{path.name} python block {i + 1}", "exec"), ns)
        except Exception as exc:  # say which block, with its first line
            raise AssertionError(f"{path.name} python block {i + 1} ({code.splitlines()[0]!r}) failed: {exc!r}") from exc
    return ns


def commands(block: str) -> list[str]:
    """Shell commands of a block: continuation lines joined, comments dropped."""
    text = block.replace("\\\n", " ")
    out = []
    for line in text.splitlines():
        line = re.sub(r"\s+#.*$", "", line).strip()
        if line and not line.startswith("#"):
            out.append(line)
    return out


def pqbloom_exe() -> str:
    exe = Path(sys.executable).parent / "pqbloom"
    assert exe.exists(), f"the pqbloom console script is not installed next to {sys.executable}"
    return str(exe)


def run_cli(line: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    argv = shlex.split(line)
    assert argv[0] == "pqbloom", line
    return subprocess.run([pqbloom_exe(), *argv[1:]], cwd=cwd, capture_output=True, text=True, timeout=300)


@pytest.mark.spark
def test_python_blocks_run_in_order(tmp_path, monkeypatch, spark):
    assert len(blocks("python")) >= 5, "the README lost its examples"
    monkeypatch.chdir(tmp_path)
    ns = run_python_blocks(ROOT / "README.md", {"__name__": "readme", "spark": spark})
    # what the tour promises
    import pqbloom

    assert ns["bf"].might_contain("user7@example.com")  # type: ignore[attr-defined]
    assert pqbloom.read_table(tmp_path / "events.parquet").num_rows == len(ns["ids"])  # type: ignore[arg-type]
    assert (tmp_path / "events_by_bucket" / "_SUCCESS").exists()


@pytest.mark.spark
def test_examples_readme_python_blocks_run(tmp_path, monkeypatch, spark):
    """examples/README.md's Python blocks run as written in the Spark test session (writes under tmp_path)."""
    import tempfile

    import pqbloom

    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))  # the block's mkdtemp() lands in tmp_path
    ns = run_python_blocks(EXAMPLES_README, {"__name__": "examples_readme", "spark": spark})
    path = str(ns["path"])
    assert path.startswith(str(tmp_path))
    assert pqbloom.read_table(path).num_rows == 1000
    assert ns["df"].count() == 1000  # type: ignore[attr-defined]
    # partition_by: Hive directories that pqbloom reads back with the partition column
    parts = sorted(p.name for p in Path(path + "_by_bucket").iterdir() if p.is_dir())
    assert parts == ["bucket=0", "bucket=1", "bucket=2"]
    back = pqbloom.read_table(path + "_by_bucket", filters="bucket == 1")
    assert back.num_rows == 333 and set(back.column("bucket").to_pylist()) == {1}


def test_setup_blocks_are_the_commands_ci_runs(tmp_path):
    setup = [commands(b) for b in blocks("sh")[:2]]
    demo, tests = setup[0][0], setup[1][0]
    assert demo == "pip install -e . && pqbloom demo"
    assert tests.startswith("pip install -e ") and tests.endswith("python -m pytest -q")
    ci = (ROOT / ".ci" / "run").read_text()
    assert "python -m pytest -q" in ci and "pip install -q -e" in ci
    # the demo runs (the install half is what CI does first)
    out = run_cli(demo.split("&&")[1].strip(), tmp_path)
    assert out.returncode == 0, out.stderr
    assert "Bloom" in out.stdout


def test_command_line_block_runs(tmp_path):
    cli = [b for b in blocks("sh") if "pqbloom convert" in b]
    assert len(cli) == 1
    rows = ["id,ts,email"] + [f"{i},2024-01-01T00:00:{i % 60:02d}Z,user{i}@example.com" for i in range(1000)]
    (tmp_path / "events.csv").write_text("\n".join(rows) + "\n")
    for line in commands(cli[0]):
        out = run_cli(line, tmp_path)
        assert out.returncode == 0, f"{line}: {out.stderr}"
        if line.startswith("pqbloom probe"):
            assert "present" in out.stdout.lower() or "maybe" in out.stdout.lower(), out.stdout
        if line.startswith("pqbloom query"):
            assert "42" in out.stdout
    assert (tmp_path / "layout.svg").read_text().startswith("<")
