"""The command line's manners (issue 18, section 4): directories, user errors, decoded statistics,
``--version`` and ``python -m pqbloom``, the convert summary and progress, and a demo that leaves nothing.

Every run calls :func:`pqbloom.cli.main.main` in-process (capsys); the entry points run as subprocesses in
tests/integration/test_cli_processes.py.
Expected values come from pyarrow (the datasets and files here are written by pyarrow).
"""

from __future__ import annotations

import datetime as dt
import decimal
import json
import os
import sys
import types

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import pqbloom
from pqbloom.cli import convert as convert_mod
from pqbloom.cli import main as cli


def call(capsys, *args: str) -> tuple[int, str, str]:
    rc = cli.main([str(a) for a in args])
    out, err = capsys.readouterr()
    return rc, out, err


@pytest.fixture
def hive_dir(tmp_path):
    """A Hive-partitioned dataset written by pyarrow (year=2023/, year=2024/), with Bloom-less files."""
    root = tmp_path / "ds"
    t = pa.table({"id": list(range(10)), "name": [f"n{i}" for i in range(10)],
                  "year": [2023] * 4 + [2024] * 6})
    pq.write_to_dataset(t, root, partition_cols=["year"])
    return root


def test_directory_commands_read_the_dataset(capsys, hive_dir):
    want = pq.read_table(hive_dir)  # pyarrow's dataset reading of the same directory
    rc, out, err = call(capsys, "head", hive_dir, "-n", "20")
    assert rc == 0, err
    rows = [json.loads(line) for line in out.splitlines()]
    key = lambda r: r["id"]  # noqa: E731
    assert sorted(rows, key=key) == sorted(want.to_pylist(), key=key)
    rc, out, _ = call(capsys, "head", hive_dir, "-n", "3")
    assert rc == 0 and len(out.splitlines()) == 3
    rc, out, err = call(capsys, "schema", hive_dir)
    assert rc == 0, err
    assert "id: int64" in out and "name: string" in out and "year: int64 (partition key)" in out
    rc, out, err = call(capsys, "inspect", hive_dir)
    assert rc == 0, err
    assert f"dataset: {hive_dir} (2 file(s)" in out and "rows: 10 in 2 row group(s)" in out and "partition keys: year" in out
    rc, out, _ = call(capsys, "inspect", hive_dir, "--json")
    info = json.loads(out)
    assert info["num_rows"] == want.num_rows and {tuple(f["partitions"].items()) for f in info["files"]} == {
        (("year", "2023"),), (("year", "2024"),)}
    rc, out, err = call(capsys, "probe", hive_dir, "id", "3")
    assert rc == 0, err
    lines = out.splitlines()
    assert len(lines) == 2 and lines[0].startswith("year=2023") and "no Bloom filter" in lines[0]


def test_directory_errors_name_the_path(capsys, tmp_path, hive_dir):
    empty = tmp_path / "empty"
    empty.mkdir()
    for cmd in ("inspect", "schema", "head"):
        rc, _, err = call(capsys, cmd, empty)
        assert rc == 1 and "Errno" not in err and str(empty) in err and "without Parquet data files" in err
    rc, _, err = call(capsys, "layout", hive_dir, "-o", tmp_path / "x.svg")
    assert rc == 2 and "Errno" not in err and f"{hive_dir} is a directory" in err


def test_query_type_mismatch_is_a_user_error(capsys, tmp_path):
    path = tmp_path / "t.parquet"
    pq.write_table(pa.table({"id": [1, 2, 3], "s": ["a", "b", "c"]}), path)
    for flt, words in (("id == 'abc'", "int64"), ("s > 3", "string")):
        rc, out, err = call(capsys, "query", path, "--filter", flt)
        assert rc == 1 and out == ""
        assert err.startswith("pqbloom: error: --filter") and words in err and "unexpected" not in err, err
        assert len(err.strip().splitlines()) == 1


def test_inspect_shows_timestamps_dates_decimals_as_such(capsys, tmp_path):
    path = tmp_path / "typed.parquet"
    utc = dt.timezone.utc
    t = pa.table({
        "ts": pa.array([dt.datetime(2024, 1, 1, 12, 30, tzinfo=utc), dt.datetime(2024, 3, 5, tzinfo=utc)],
                       pa.timestamp("us", tz="UTC")),
        "local": pa.array([dt.datetime(2020, 2, 29, 1, 2, 3), dt.datetime(2021, 1, 1)], pa.timestamp("ms")),
        "d": pa.array([dt.date(2024, 1, 2), dt.date(2025, 12, 31)], pa.date32()),
        "dec": pa.array([decimal.Decimal("1.25"), decimal.Decimal("-30.10")], pa.decimal128(10, 2)),
        "big": pa.array([decimal.Decimal("12345678901234567890.123"), decimal.Decimal("0.001")], pa.decimal128(30, 3)),
        "tm": pa.array([dt.time(8, 0), dt.time(17, 45, 1)], pa.time64("us")),
    })
    pq.write_table(t, path)
    md = pq.ParquetFile(path).metadata.row_group(0)
    want = {md.column(j).path_in_schema: (md.column(j).statistics.min, md.column(j).statistics.max)
            for j in range(md.num_columns)}  # pyarrow's logical statistics
    rc, out, err = call(capsys, "inspect", path)
    assert rc == 0, err
    for lo, hi in want.values():
        assert f"stats: min={lo} max={hi} nulls=0" in out, (lo, hi, out)
    rc, out, _ = call(capsys, "inspect", path, "--json")
    cols = {c["column"]: c["statistics"] for c in json.loads(out)["row_groups"][0]["columns"]}
    for name, (lo, hi) in want.items():
        assert (cols[name]["min"], cols[name]["max"]) == (str(lo), str(hi)), name


def test_version(capsys):
    with pytest.raises(SystemExit) as info:
        cli.main(["--version"])
    assert info.value.code == 0 and capsys.readouterr().out.strip() == f"pqbloom {pqbloom.__version__}"


def test_convert_to_a_directory_is_a_clear_error(capsys, tmp_path):
    src = tmp_path / "in.csv"
    src.write_text("a,b\n1,x\n")
    out_dir = tmp_path / "out"
    out_dir.mkdir()
    rc, out, err = call(capsys, "convert", src, out_dir)
    assert rc == 1 and out == ""
    assert f"the output {out_dir} is a directory" in err and "Errno" not in err
    assert list(out_dir.iterdir()) == []


def test_demo_leaves_nothing_behind(capsys, tmp_path, monkeypatch):
    import tempfile

    scratch = tmp_path / "tmp"
    scratch.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(scratch))
    rc, out, err = call(capsys, "demo", "--rows", "4000")
    assert rc == 0, err
    assert list(scratch.iterdir()) == [] and "removed " in out and "--output-dir" in out
    keep = tmp_path / "keep"
    rc, out, err = call(capsys, "demo", "--rows", "4000", "--output-dir", keep)
    assert rc == 0 and (keep / "events.parquet").exists() and f"stays in {keep}" in out


# ---------------------------------------------------------------------------------------------
# progress


def _csv(tmp_path, n=5000):
    src = tmp_path / "p.csv"
    src.write_text("id,s\n" + "".join(f"{i},v{i}\n" for i in range(n)))
    return src


class _FakeTqdm:
    instances: list[_FakeTqdm] = []

    def __init__(self, total=None, **kwargs):
        self.total, self.n, self.closed = total, 0, False
        _FakeTqdm.instances.append(self)

    def update(self, n):
        self.n += n

    def set_postfix(self, **kwargs):
        pass

    def close(self):
        self.closed = True


def test_convert_progress_bar_from_tqdm_on_a_terminal_and_nothing_without(tmp_path, monkeypatch, capsys):
    src = _csv(tmp_path)
    monkeypatch.setattr(sys.stderr, "isatty", lambda: True, raising=False)
    # neither tqdm nor rich: nothing extra on a terminal
    monkeypatch.setitem(sys.modules, "tqdm", None)
    monkeypatch.setitem(sys.modules, "rich", None)
    convert_mod.convert(str(src), str(tmp_path / "a.parquet"), chunk_rows=1000)
    assert capsys.readouterr().err == ""
    # tqdm installed: its bar, over the input bytes
    _FakeTqdm.instances.clear()
    monkeypatch.setitem(sys.modules, "tqdm", types.SimpleNamespace(tqdm=_FakeTqdm))
    convert_mod.convert(str(src), str(tmp_path / "b.parquet"), chunk_rows=1000)
    (bar,) = _FakeTqdm.instances
    assert bar.total == os.path.getsize(src) and bar.n == bar.total and bar.closed


def test_convert_and_write_table_progress_callbacks(tmp_path):
    src = _csv(tmp_path)
    for engine in ("python", "pyarrow"):
        seen: list[tuple[int, int, int | None]] = []
        r = convert_mod.convert(str(src), str(tmp_path / f"c-{engine}.parquet"), chunk_rows=1000, progress=False,
                                engine=engine, on_progress=lambda rows, done, total, seen=seen: seen.append((rows, done, total)))
        assert r.engine == engine and seen and seen[-1][0] == r.rows == 5000
        assert [s[0] for s in seen] == sorted(s[0] for s in seen)  # rows only grow
        assert seen[-1][1] == seen[-1][2] == os.path.getsize(src)
        if engine == "python":  # one call per parsed chunk
            assert [s[0] for s in seen] == [1000, 2000, 3000, 4000, 5000, 5000][:len(seen)]
    calls: list[tuple[int, int]] = []
    pqbloom.write_table({"id": list(range(2500))}, tmp_path / "w.parquet", row_group_size=1000,
                        progress=lambda done, total: calls.append((done, total)))
    assert calls == [(1000, 2500), (2000, 2500), (2500, 2500)]
    assert pq.ParquetFile(tmp_path / "w.parquet").metadata.num_row_groups == 3


def test_inspect_does_not_show_untrusted_bounds_as_values(capsys):
    """fixed_length_decimal.parquet (old parquet-mr) has min/max with no column order: pqbloom does not rely on
    them (pqbloom.file.metadata), so inspect says so instead of printing bytes as if they were values."""
    from tests.conftest import fixture_file

    rc, out, err = call(capsys, "inspect", fixture_file("fixed_length_decimal.parquet"), "--json")
    assert rc == 0, err
    s = json.loads(out)["row_groups"][0]["columns"][0]["statistics"]
    assert s["min"] is None and s["max"] is None and s["bounds_untrusted"] is True
    rc, out, _ = call(capsys, "inspect", fixture_file("int32_decimal.parquet"), "--json")
    s = json.loads(out)["row_groups"][0]["columns"][0]["statistics"]
    assert (s["min"], s["max"]) == ("1.00", "24.00") and "bounds_untrusted" not in s
    want = pq.ParquetFile(fixture_file("int32_decimal.parquet")).metadata.row_group(0).column(0).statistics
    assert (s["min"], s["max"]) == (str(want.min), str(want.max))  # pyarrow's reading
