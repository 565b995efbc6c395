"""The suite's writers check (tests/writers.py): a file created or changed in the repository during the
run is reported; the same tree twice is not."""

from __future__ import annotations

import subprocess

from tests.writers import snapshot, written


def _git(root, *args):
    subprocess.run(["git", *args], cwd=root, check=True, capture_output=True)


def test_snapshot_reports_new_and_changed_files(tmp_path):
    repo = tmp_path / "repo"
    repo.mkdir()
    _git(repo, "init", "-q")
    (repo / ".gitignore").write_text("scratch/\n")
    (repo / "MATRIX.md").write_text("v1\n")
    (repo / "dirty.txt").write_text("a\n")
    _git(repo, "add", ".")
    _git(repo, "-c", "user.email=t@t", "-c", "user.name=t", "commit", "-qm", "init")
    (repo / "dirty.txt").write_text("b\n")  # already changed before the run
    before = snapshot(repo)
    assert before is not None and written(before, snapshot(repo)) == []
    (repo / "MATRIX.md").write_text("v2\n")  # a test rewrote a tracked file
    (repo / "dirty.txt").write_text("c\n")  # ... changed an already changed one again
    (repo / "new.parquet").write_bytes(b"PAR1")  # ... left a file behind
    (repo / "scratch").mkdir()
    (repo / "scratch" / "ignored.bin").write_bytes(b"x")  # ignored by git: not the repository's content
    assert written(before, snapshot(repo)) == ["MATRIX.md", "dirty.txt", "new.parquet"]


def test_no_check_outside_a_git_work_tree(tmp_path):
    assert snapshot(tmp_path) is None and written(None, None) == []
