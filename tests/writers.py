"""The test suite writes only under temporary directories: a snapshot of the repository's working tree
(``git status`` plus a hash of every changed or untracked file) taken when the run starts and compared
when it ends. ``tests/conftest.py`` fails the run when a test or fixture wrote into the repository
(``interop/MATRIX.md`` was rewritten by the tests once; regenerating it is ``python -m interop``)."""

from __future__ import annotations

import hashlib
import subprocess
from pathlib import Path


def snapshot(root: Path) -> dict[str, str] | None:
    """``{path: status and content hash}`` of the files git sees as changed or untracked (ignored files
    excluded), or None when ``root`` is not a git work tree (no check then: an unpacked source tree)."""
    try:
        proc = subprocess.run(["git", "status", "--porcelain", "-z", "--untracked-files=all"], cwd=root,
                              capture_output=True, timeout=60)
    except (OSError, subprocess.TimeoutExpired):
        return None
    if proc.returncode != 0:
        return None
    out: dict[str, str] = {}
    for entry in proc.stdout.decode("utf-8", "surrogateescape").split("\0"):
        if len(entry) < 4:
            continue
        status, path = entry[:2], entry[3:]
        p = root / path
        digest = hashlib.sha256(p.read_bytes()).hexdigest() if p.is_file() else "-"
        out[path] = f"{status} {digest}"
    return out


def written(before: dict[str, str] | None, after: dict[str, str] | None) -> list[str]:
    """Paths created, changed or deleted between two snapshots (sorted)."""
    if before is None or after is None:
        return []
    return sorted(p for p in before.keys() | after.keys() if before.get(p) != after.get(p))
