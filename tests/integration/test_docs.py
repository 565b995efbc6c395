"""Every code block of the documentation runs as written: README.md and every page under docs/.

How blocks run and how a block says it needs Spark or is not run: ``tests/docs_blocks.py``. Each page is
one test (its blocks build on each other, in a fresh scratch directory and namespace); a page whose
blocks need Spark runs in the Spark session and carries the ``spark`` marker. Blocks that are not run are
reported with their reasons as a warning of the page's test.
"""

from __future__ import annotations

import os
import subprocess
import sys
import warnings
from pathlib import Path

import pytest

from tests.docs_blocks import Page, commands, doc_pages, parse, pqbloom_argv
from tests.paths import ROOT

PAGES = [parse(p) for p in doc_pages()]


class BlocksNotRun(UserWarning):
    """A page's blocks that are not run, with the reasons their annotations give."""

GUIDE = [p for p in PAGES if p.name.startswith("docs/guide/")]


def run_command(argv: list[str], cwd: Path) -> subprocess.CompletedProcess[str]:
    """``pqbloom ARGV`` as a process of this interpreter, importing this checkout's package."""
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]))
    return subprocess.run([sys.executable, "-m", "pqbloom", *argv], cwd=cwd, env=env, capture_output=True,
                          text=True, timeout=300)


def run_page(page: Page, cwd: Path, ns: dict[str, object], outputs: dict[str, str] | None = None) -> list[str]:
    """Run the page's blocks in order; the blocks not run, with their reasons. ``outputs`` gets each
    command's standard output."""
    not_run = []
    for block in page.blocks:
        if block.skip:
            not_run.append(f"{block.where()}: {block.skip}")
            continue
        if block.lang == "python":
            try:
                exec(compile(block.code, block.where(), "exec"), ns)
            except Exception as exc:  # say which block, with its first line
                first = block.code.splitlines()[0] if block.code.strip() else ""
                raise AssertionError(f"{block.where()} ({first!r}) failed: {exc!r}") from exc
            continue
        for line in commands(block.code):
            argv = pqbloom_argv(line)
            assert argv is not None, (f"{block.where()}: {line!r} is not a pqbloom command: annotate the block "
                                      f"with <!-- test: skip: REASON --> to say why it is not run")
            out = run_command(argv, cwd)
            assert out.returncode == 0, f"{block.where()}: {line!r} exited with {out.returncode}: {out.stderr}"
            if outputs is not None:
                outputs[line] = out.stdout
    return not_run


def check_command_line_page(outputs: dict[str, str], cwd: Path) -> None:
    """What the command-line page's commands print and write, beyond exiting with 0."""
    by_command = {line.split()[1]: out for line, out in outputs.items()}
    assert {"convert", "inspect", "layout", "probe", "head", "query"} <= set(by_command)
    probe = by_command["probe"].lower()
    assert "present" in probe or "maybe" in probe, probe
    assert "42" in by_command["query"]
    assert (cwd / "layout.svg").read_text().startswith("<")


#: page -> a check of its commands' outputs once its blocks have run
OUTPUT_CHECKS = {"docs/guide/command-line.md": check_command_line_page}


@pytest.fixture
def memory_filesystem():
    """fsspec's memory filesystem is global to the process: what a page writes there is removed after it."""
    try:
        from fsspec.implementations.memory import MemoryFileSystem
    except ImportError:  # pragma: no cover
        yield
        return
    files, dirs = set(MemoryFileSystem.store), list(MemoryFileSystem.pseudo_dirs)
    yield
    for key in set(MemoryFileSystem.store) - files:
        del MemoryFileSystem.store[key]
    MemoryFileSystem.pseudo_dirs[:] = dirs


@pytest.mark.parametrize("page", [pytest.param(p, id=p.name, marks=[pytest.mark.spark] if p.needs_spark else [])
                                  for p in PAGES])
def test_page_blocks_run(page: Page, tmp_path, monkeypatch, request, memory_filesystem):
    monkeypatch.chdir(tmp_path)
    ns: dict[str, object] = {"__name__": "docs"}
    if page.needs_spark:
        ns["spark"] = request.getfixturevalue("spark")
    outputs: dict[str, str] = {}
    not_run = run_page(page, tmp_path, ns, outputs)
    if page.name in OUTPUT_CHECKS:
        OUTPUT_CHECKS[page.name](outputs, tmp_path)
    if not_run:
        warnings.warn(BlocksNotRun(f"{page.name}: {len(not_run)} block(s) not run:\n  " + "\n  ".join(not_run)), stacklevel=1)


@pytest.mark.parametrize("page", GUIDE, ids=[p.name for p in GUIDE])
def test_guide_pages_have_code_that_runs(page: Page):
    """A guide page is examples first: at least one block of it runs."""
    assert any(not b.skip for b in page.blocks), f"{page.name} has no code block that runs"


def test_the_guide_is_there():
    names = {p.name for p in GUIDE}
    for topic in ("reading-and-writing", "filters-and-bloom-filters", "pandas-and-polars", "datasets-and-partitions",
                  "object-storage", "encryption", "spark", "command-line", "performance"):
        assert f"docs/guide/{topic}.md" in names
