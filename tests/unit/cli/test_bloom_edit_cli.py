"""``pqbloom add-bloom`` and ``pqbloom remove-bloom``, run in process as a user would (``tests/unit/cli/test_cli.py``'s
``run`` and ``fails``). Input files come from pyarrow; the filters are checked with DuckDB's probe and hashes
computed here, not with pqbloom's writer."""

from __future__ import annotations

import json
import os

import duckdb
import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import pqbloom
from pqbloom.crypto import FileEncryptionProperties

from .test_cli import CK, FK, fails, run


@pytest.fixture
def pyarrow_file(tmp_path):
    rng = np.random.default_rng(2)
    t = pa.table({"id": pa.array(rng.permutation(6000) * 2, pa.int64()),
                  "s": pa.array([f"v{x}" for x in rng.integers(0, 3000, 6000)]),
                  "ok": pa.array(rng.integers(0, 2, 6000) == 1)})
    path = tmp_path / "a.parquet"
    pq.write_table(t, path, row_group_size=2000)
    return path, t


def _excluded(path, column, value) -> list[bool]:
    rows = duckdb.connect().execute("SELECT bloom_filter_excludes FROM parquet_bloom_probe(?, ?, ?) "
                                    "ORDER BY row_group_id", [str(path), column, value]).fetchall()
    return [bool(r[0]) for r in rows]


def test_add_bloom_then_remove(pyarrow_file):
    path, t = pyarrow_file
    out = run("add-bloom", path, "--columns", "id,s", "--fpp", "0.001").stdout
    assert "added in 3 row group(s)" in out and "id:" in out and "s:" in out
    assert pq.read_table(path).equals(t)
    ids = t.column("id").to_pylist()
    assert [_excluded(path, "id", ids[i])[i // 2000] for i in range(0, 6000, 250)] == [False] * 24
    assert sum(sum(_excluded(path, "id", 2 * x + 1)) for x in range(50)) >= 140  # odd ids are absent
    out = run("remove-bloom", path, "--columns", "s").stdout
    assert "s: removed in 3 row group(s)" in out
    md = pq.ParquetFile(path).metadata
    assert md.row_group(0).column(0).bloom_filter_offset is not None
    assert md.row_group(0).column(1).bloom_filter_offset is None
    assert pq.read_table(path).equals(t)


def test_dry_run_prints_sizes_and_writes_nothing(pyarrow_file):
    path, _ = pyarrow_file
    before = path.read_bytes()
    out = run("add-bloom", path, "-c", "id", "--dry-run").stdout
    assert "would change 3 Bloom filter(s)" in out and "4,096 bytes" in out  # 2000 distinct at 1%: 4 KiB bitsets
    assert path.read_bytes() == before and os.listdir(path.parent) == ["a.parquet"]
    doc = json.loads(run("add-bloom", path, "-c", "id", "--dry-run", "--json").stdout)
    assert doc["dry_run"] is True and doc["added_bytes"] == 3 * (4096 + 16)
    assert [c["distinct_values"] for c in doc["changes"]] == [2000, 2000, 2000]
    assert path.read_bytes() == before


def test_position_output_and_existing(pyarrow_file, tmp_path):
    path, t = pyarrow_file
    out_path = tmp_path / "b.parquet"
    run("add-bloom", path, "-c", "id", "--position", "between_row_groups", "-o", out_path)
    assert pq.ParquetFile(path).metadata.row_group(0).column(0).bloom_filter_offset is None
    assert pq.read_table(out_path).equals(t)
    msg = fails("add-bloom", out_path, "-c", "id")
    assert "exist already" in msg and "--existing replace" in msg
    run("add-bloom", out_path, "-c", "id", "--existing", "replace", "--fpp", "0.2")
    assert pq.read_table(out_path).equals(t)


def test_errors_are_one_line(pyarrow_file):
    path, _ = pyarrow_file
    assert "no column 'nope'" in fails("add-bloom", path, "-c", "nope")
    assert "BOOLEAN" in fails("add-bloom", path, "-c", "ok")
    assert "fpp" in fails("add-bloom", path, "-c", "id", "--fpp", "2")
    fails("add-bloom", path, code=2)  # --columns is required
    assert "invalid choice" in fails("add-bloom", path, "-c", "id", "--position", "middle", code=2)


def test_encrypted_file_needs_keys(tmp_path):
    path = tmp_path / "e.parquet"
    pqbloom.write_table({"id": list(range(100)), "s": [f"x{i}" for i in range(100)]}, str(path),
                        encryption_properties=FileEncryptionProperties(bytes.fromhex(FK), {"s": bytes.fromhex(CK)}))
    before = path.read_bytes()
    msg = fails("add-bloom", path, "-c", "s")
    assert "decryption_properties" in msg or "key" in msg
    assert path.read_bytes() == before
    run("add-bloom", path, "-c", "s,id", "--footer-key-hex", FK, "--column-key", f"s={CK}")
    out = run("probe", path, "s", "x7", "x1000", "--footer-key-hex", FK, "--column-key", f"s={CK}").stdout
    assert "s = 'x7': may be present" in out and "s = 'x1000': absent" in out
