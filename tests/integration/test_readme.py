"""What the README promises beyond its blocks running (``test_docs.py`` runs every block of it):

* it is short, and its first code block writes a file with a Bloom filter (checked by DuckDB) and looks a
  value up;
* its two setup commands are the ones CI runs: the demo runs, and the test command is ``.ci/run``'s (and
  the one the contributor guide gives);
* examples/README.md's Python blocks run in the Spark session.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from tests.docs_blocks import commands, parse
from tests.paths import ROOT

README = parse(ROOT / "README.md")
EXAMPLES_README = ROOT / "examples" / "README.md"


def sh_block(page_blocks, text: str) -> list[str]:
    """The commands of the one ``sh`` block holding ``text``."""
    found = [b for b in page_blocks if b.lang == "sh" and text in b.code]
    assert len(found) == 1, f"expected one sh block with {text!r}, found {len(found)}"
    return commands(found[0].code)


def test_readme_is_short():
    lines = (ROOT / "README.md").read_text().splitlines()
    assert len(lines) <= 200, f"README.md has {len(lines)} lines: user material belongs in docs/guide/"


def test_first_block_writes_a_bloom_filter_and_looks_up(tmp_path, monkeypatch):
    duckdb = pytest.importorskip("duckdb")
    first = README.blocks[0]
    assert first.lang == "python" and not first.skip, "the README's first code block is the tour's"
    monkeypatch.chdir(tmp_path)
    exec(compile(first.code, first.where(), "exec"), {"__name__": "readme"})
    written = sorted(tmp_path.glob("*.parquet"))
    assert written, "the first block writes no file"
    for path in written:
        rows = duckdb.sql(f"select path_in_schema, bloom_filter_offset from parquet_metadata('{path}')").fetchall()
        with_filter = {name for name, offset in rows if offset is not None}
        assert with_filter, f"{path.name}: DuckDB sees no Bloom filter"
        # and DuckDB's own probe of the value the block looks up finds it possible in some row group
        probe = duckdb.sql(f"select bool_or(not bloom_filter_excludes) from "
                           f"parquet_bloom_probe('{path}', 'email', 'user7@example.com')").fetchall()
        assert probe == [(True,)]
    assert "bloom_filter_might_contain" in first.code or "might_contain" in first.code


def test_setup_blocks_are_the_commands_ci_runs(tmp_path):
    demo = sh_block(README.blocks, "pqbloom demo")
    tests = sh_block(README.blocks, "python -m pytest -q")
    assert demo == ["pip install -e . && pqbloom demo"]
    assert len(tests) == 1 and tests[0].startswith("pip install -e ") and tests[0].endswith("python -m pytest -q")
    ci = (ROOT / ".ci" / "run").read_text()
    assert "python -m pytest -q" in ci and "pip install -q -e" in ci
    # the contributor guide gives the same command
    assert sh_block(parse(ROOT / "docs" / "contributing.md").blocks, "python -m pytest -q\n") == tests
    # the demo runs (the install half is what CI does first)
    exe = Path(sys.executable).parent / "pqbloom"
    assert exe.exists(), f"the pqbloom console script is not installed next to {sys.executable}"
    out = subprocess.run([str(exe), "demo"], cwd=tmp_path, capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    assert "Bloom" in out.stdout


@pytest.mark.spark
def test_examples_readme_python_blocks_run(tmp_path, monkeypatch, spark):
    """examples/README.md's Python blocks run as written in the Spark test session (writes under tmp_path)."""
    import tempfile

    import pqbloom

    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))  # the block's mkdtemp() lands in tmp_path
    ns: dict[str, object] = {"__name__": "examples_readme", "spark": spark}
    for block in parse(EXAMPLES_README).blocks:
        if block.lang == "python":
            exec(compile(block.code, block.where(), "exec"), ns)
    path = str(ns["path"])
    assert path.startswith(str(tmp_path))
    assert pqbloom.read_table(path).num_rows == 1000
    assert ns["df"].count() == 1000  # type: ignore[attr-defined]
    # partition_by: Hive directories that pqbloom reads back with the partition column
    parts = sorted(p.name for p in Path(path + "_by_bucket").iterdir() if p.is_dir())
    assert parts == ["bucket=0", "bucket=1", "bucket=2"]
    back = pqbloom.read_table(path + "_by_bucket", filters="bucket == 1")
    assert back.num_rows == 333 and set(back.column("bucket").to_pylist()) == {1}
