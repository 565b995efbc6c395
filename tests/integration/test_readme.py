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
BLOCK = re.compile(r"```(\w+)\n(.*?)```", re.S)


def blocks(lang: str) -> list[str]:
    return [body for kind, body in BLOCK.findall(README) if kind == lang]


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
def test_python_blocks_run_in_order(tmp_path, monkeypatch):
    from interop.spark_support import get_spark

    py = blocks("python")
    assert len(py) >= 5, "the README lost its examples"
    monkeypatch.chdir(tmp_path)
    ns: dict[str, object] = {"__name__": "readme"}
    for i, code in enumerate(py):
        if "spark" in code and "spark" not in ns:
            ns["spark"] = get_spark()
        try:
            exec(compile(code, f"README.md python block {i + 1}", "exec"), ns)
        except Exception as exc:  # say which block, with its first line
            raise AssertionError(f"README python block {i + 1} ({code.splitlines()[0]!r}) failed: {exc!r}") from exc
    # what the tour promises
    import pqbloom

    assert ns["bf"].might_contain("user7@example.com")  # type: ignore[attr-defined]
    assert pqbloom.read_table(tmp_path / "events.parquet").num_rows == len(ns["ids"])  # type: ignore[arg-type]
    assert (tmp_path / "events_by_bucket" / "_SUCCESS").exists()


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
