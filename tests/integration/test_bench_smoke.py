"""The benchmark scripts still run: bench_core.py and bench_realworld.py at --quick sizes.

Smoke only (no timing is asserted): each script exits 0, measures every contender (a contender
that raised would leave a case without figures), prints its ratios, and saves a JSON that a
before/after comparison can read.
"""

import json
import os
import subprocess
import sys
from pathlib import Path

from tests.corpora import needs
from tests.paths import REAL_WORLD, ROOT

TIMEOUT = 900


def run_bench(script: str, *args: str, tmp_path: Path) -> tuple[str, dict]:
    out = tmp_path / "results.json"
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(p for p in (str(ROOT), os.environ.get("PYTHONPATH", "")) if p))
    proc = subprocess.run([sys.executable, str(ROOT / "bench" / script), "--quick", "--json", str(out), *args],
                          capture_output=True, text=True, timeout=TIMEOUT, env=env, cwd=tmp_path)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    doc = json.loads(out.read_text())
    for case in doc["cases"]:
        for o in case["outcomes"]:
            assert not o["error"], f"{case['name']} / {o['label']}: {o['error']}"
            assert len(o["times"]) >= 5, (case["name"], o["label"])
        assert case["ratios"], case["name"]
    return proc.stdout, doc


def test_bench_core_quick_cross_reads_with_memory(tmp_path):
    stdout, doc = run_bench("bench_core.py", "--only", "no nulls", tmp_path=tmp_path)
    names = [c["name"] for c in doc["cases"]]
    assert names == ["write no nulls", "read no nulls / pyarrow's file", "read no nulls / pqbloom's file"]
    for case in doc["cases"]:
        labels = {o["label"] for o in case["outcomes"]}
        assert {"pa", "pa 1t"} <= labels or case["name"].startswith("write"), labels
        for o in case["outcomes"]:
            assert o["peak_bytes"] is not None and o["peak_bytes"] > 0, (case["name"], o["label"], o["peak_method"])
    assert any(k.startswith("pq+to_arrow") for k in doc["cases"][1]["ratios"])
    assert "ratio pq" in stdout and "Summary" in stdout


def test_bench_core_quick_encrypt(tmp_path):
    stdout, doc = run_bench("bench_core.py", "--encrypt", "--no-memory", tmp_path=tmp_path)
    assert [list(c["ratios"]) for c in doc["cases"]] == [["pq encrypted/pq"]] * 2
    assert stdout.count("encryption overhead") == 2


@needs(REAL_WORLD)  # its corpus case reads the real-world files
def test_bench_realworld_quick(tmp_path):
    stdout, doc = run_bench("bench_realworld.py", "--no-memory", tmp_path=tmp_path)
    tags = [c["tags"] for c in doc["cases"]]
    assert tags.count(["read"]) == 4 and tags.count(["write"]) == 1 and tags.count(["corpus"]) == 1, tags
    assert len(doc["targets"]) == 6
    assert "Targets (issue #17)" in stdout and "pq+to_arrow 1t/pa 1t" in stdout  # both single-threaded
    # the read cases also pair pqbloom's single thread with pyarrow on one core
    for case in doc["cases"]:
        if case["tags"] == ["read"]:
            assert "pq 1t/pa 1core" in case["ratios"] and "pq 1t/pa 1core" in case["cpu_ratios"], case["name"]


def test_bench_lineitem_quick(tmp_path):
    """Every case of issue #32's benchmark runs, and every contender passes its result check (a failed
    check would leave the contender with an error and no times)."""
    stdout, doc = run_bench("bench_lineitem.py", "--no-memory", tmp_path=tmp_path)
    names = [c["name"] for c in doc["cases"]]
    assert [n.split(":")[0].split(",")[0] for n in names] == (
        ["write lineitem"] * 3 + ["to_pandas"] * 2 + ["filter"] + ["full read"] * 2 + ["to_arrow"] * 2
        + ["full read lineitem / pyarrow's file", "full read lineitem / duckdb's file",
           "full read lineitem / polars's file", "full read lineitem / pqbloom's file"]), names
    families = {c["name"]: {o["family"] for o in c["outcomes"]} for c in doc["cases"]}
    assert families["write lineitem"] == {"pqbloom", "pyarrow", "duckdb", "polars"}
    assert all(f >= {"pqbloom", "pyarrow", "duckdb", "polars"} for n, f in families.items() if n.startswith("full read"))
    assert "pq+to_arrow/pq" in doc["cases"][8]["ratios"]
    assert len(doc["peer_reads"]["files"]) == 4 and doc["peer_reads"]["geomean_fastest_peer"] > 0
    assert doc["bytes_read"] and all(e["1t"]["ratio"] >= 1.0 for e in doc["bytes_read"])  # the footer is read too
    assert len(doc["targets"]) == 6
    assert "Targets (issue #32)" in stdout and "geomean vs the fastest peer" in stdout
