"""examples/pyarrow_compat.py, a pyarrow.parquet user's script, prints the same with ``import pqbloom as pq``
as with ``import pyarrow.parquet as pq`` (the script's only switch, ``PQ_IMPL``)."""

from __future__ import annotations

import os
import re
import subprocess
import sys

from tests.paths import ROOT

SCRIPT = ROOT / "examples" / "pyarrow_compat.py"


def _run(impl: str) -> str:
    env = {**os.environ, "PQ_IMPL": impl, "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")])}
    out = subprocess.run([sys.executable, str(SCRIPT)], env=env, capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    return out.stdout


def test_same_output_with_pyarrow_and_pqbloom():
    # the import is the only difference between the two runs
    imports = re.findall(r"^\s*import (\S+) as pq\b", SCRIPT.read_text(), re.M)
    assert sorted(imports) == ["pqbloom", "pyarrow.parquet"]
    theirs, ours = _run("pyarrow"), _run("pqbloom")
    assert ours == theirs
    for expected in ("min=2024-01-01 00:00:00+00:00", "(Decimal)", "(date)", "ts: timestamp[us, tz=UTC]",
                     "read_row_groups([1, 3]): 500 rows", "iter_batches(row_groups=[2]): [100, 100, 50]",
                     "read_table(filters=...): 4 rows",
                     "sorting_columns: [(0, False, False)]", "'day=2024-01-01', 'day=2024-01-02'",
                     "dataset read: 120 rows", "two files: 2000 rows"):
        assert expected in ours, expected
