"""Reads and writes through URLs and ``filesystem=`` (issue #18, section 1).

Lookups run against a local HTTP server with byte ranges and injected latency
(:mod:`tests.range_server`), which counts requests, bytes and round trips of latency (the longest chain
of requests each started after the previous one ended). Files are written by pyarrow, with Bloom
filters and page indexes, and every answer is compared with pyarrow reading the same file.
"""

from __future__ import annotations

import os
import subprocess
import sys
import uuid

import fsspec
import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq
import pytest

import pqbloom
from pqbloom.errors import CorruptFileError
from pqbloom.io import RangeReader
from tests.paths import ROOT
from tests.range_server import RangeServer

ROWS = 2_000_000  # the case
LATENCY = 0.1  # long enough that the server's own scheduling cannot blur two waves into one
FILES = 50
FILE_ROWS = 20_000


def _table(ids: np.ndarray, seed: int) -> pa.Table:
    rng = np.random.default_rng(seed)
    return pa.table({"id": ids, "s": pc.cast(pa.array(ids * 3 + 1), pa.string()), "x": rng.random(len(ids))})


@pytest.fixture(scope="module")
def served(tmp_path_factory):
    """One 2M-row file and a 50-file directory, written by pyarrow with Bloom filters on ``id``."""
    root = tmp_path_factory.mktemp("served")
    rng = np.random.default_rng(7)
    ids = rng.permutation(ROWS).astype(np.int64) * 2  # even ids, random order: only Bloom filters prune
    big = root / "big.parquet"
    pq.write_table(_table(ids, 1), big, bloom_filter_options={"id": {"ndv": ROWS, "fpp": 0.01}},
                   write_page_index=True)
    (root / "ds").mkdir()
    for k in range(FILES):
        part = np.arange(k * FILE_ROWS, (k + 1) * FILE_ROWS, dtype=np.int64) * 2
        rng.shuffle(part)
        pq.write_table(_table(part, k), root / "ds" / f"part-{k:03d}.parquet",
                       bloom_filter_options={"id": {"ndv": FILE_ROWS, "fpp": 0.01}}, write_page_index=True)
    (root / "ds" / "_SUCCESS").write_bytes(b"")
    with RangeServer(root, latency=LATENCY) as srv:
        yield srv, root, ids


def _same_as_pyarrow(got: pqbloom.Table, path, value: int) -> None:
    want = pq.read_table(path, filters=[("id", "==", value)])
    assert got.num_rows == want.num_rows
    g, w = got.to_pydict(), want.to_pydict()
    for name in ("id", "s", "x"):
        assert sorted(g[name]) == sorted(w[name]), name


def test_absent_id_lookup_takes_three_round_trips_and_under_100kb(served):
    srv, root, ids = served
    srv.reset()
    got = pqbloom.read_table(srv.url("big.parquet"), filters=[("id", "==", 3)])  # odd: absent
    c = srv.counts()
    assert c["round_trips"] <= 3, (c, srv.log)
    assert c["bytes"] < 100_000, c
    _same_as_pyarrow(got, root / "big.parquet", 3)


def test_present_id_lookup_takes_at_most_six_round_trips(served):
    srv, root, ids = served
    value = int(ids[1_234_567])
    srv.reset()
    got = pqbloom.read_table(srv.url("big.parquet"), filters=[("id", "==", value)])
    c = srv.counts()
    assert c["round_trips"] <= 6, (c, srv.log)
    assert got.num_rows == 1
    _same_as_pyarrow(got, root / "big.parquet", value)


def test_bloom_probes_of_all_row_groups_go_out_together(served):
    # pyarrow's default 1Mi rows per row group: two row groups, both probed, in one round trip
    srv, root, _ = served
    pf = pqbloom.ParquetFile(srv.url("big.parquet"))
    assert pf.num_row_groups == 2
    srv.reset()
    assert pf.read(filters=pqbloom.field("id") == 2_000_001).num_rows == 0  # odd: absent, inside both ranges
    c = srv.counts()
    assert c == {"requests": 4, "bytes": c["bytes"], "round_trips": 1, "max_concurrency": 4}, (c, srv.log)
    assert c["bytes"] <= 4 * 64
    # the tail (whose Content-Range gives the size) with the leading magic, then the probes: as the server counted
    assert pf.io_stats.requests == 2 + 4


def test_directory_lookup_takes_four_round_trips(served):
    srv, root, _ = served
    url = srv.url("ds/")
    pqbloom.read_table(url, filters=[("id", "==", 1)])  # warm the client's connection pool, as a service would
    # 100 requests in flight at once reach this one-process server over a few tens of milliseconds on a
    # loaded machine: a longer latency keeps that spread from looking like an extra round trip
    srv.latency = 0.25
    srv.reset()
    got = pqbloom.read_table(url, filters=[("id", "==", 1001)])  # odd: absent from every file
    c = srv.counts()
    assert c["round_trips"] <= 4, c
    _same_as_pyarrow(got, root / "ds", 1001)
    # a present id: right answer (as pyarrow reads the directory), and the same few waves plus the data
    value = 2 * (FILE_ROWS * 17 + 123)
    srv.reset()
    got = pqbloom.read_table(url, filters=[("id", "==", value)])
    srv.latency = LATENCY
    # list, sizes, footers, the dictionary page, the matching pages, the other columns' pages
    assert srv.counts()["round_trips"] <= 6, srv.counts()
    _same_as_pyarrow(got, root / "ds", value)
    assert pqbloom.read_table(url).num_rows == FILES * FILE_ROWS


def test_whole_reads_and_metadata_over_http_match_pyarrow(served):
    srv, root, _ = served
    url = srv.url("ds/part-003.parquet")
    local = root / "ds" / "part-003.parquet"
    assert pqbloom.read_table(url).to_pydict() == pq.read_table(local).to_pydict()
    md = pqbloom.read_metadata(url)
    assert (md.num_rows, md.num_row_groups) == (pq.read_metadata(local).num_rows, pq.read_metadata(local).num_row_groups)
    assert [f.name for f in pqbloom.read_schema(url)] == pq.read_schema(local).names
    with pqbloom.ParquetFile(url) as pf:
        assert pf.bloom_filter_might_contain(0, "id", 2 * 3 * FILE_ROWS + 2)  # a present value


def test_missing_and_non_parquet_urls_raise(served):
    srv, root, _ = served
    with pytest.raises(FileNotFoundError):
        pqbloom.read_table(srv.url("nope.parquet"))
    (root / "text.parquet").write_bytes(b"not parquet at all, just text" * 10)
    with pytest.raises(CorruptFileError, match="not a Parquet file"):
        pqbloom.read_table(srv.url("text.parquet"))


# -- memory://, file://, filesystem= -------------------------------------------------------------
def _sample() -> pa.Table:
    ids = np.arange(5000, dtype=np.int64)
    return pa.table({"id": ids, "name": pc.cast(pa.array(ids), pa.string())})


def test_memory_url_write_and_read():
    base = f"memory://pqbloom-test-{uuid.uuid4().hex}"
    t = _sample()
    pqbloom.write_table(t, f"{base}/a.parquet", bloom_filter_options={"id": True}, row_group_size=1000)
    fs = fsspec.filesystem("memory")
    with fs.open(f"{base}/a.parquet", "rb") as f:
        assert pq.read_table(f).equals(t)  # pyarrow reads what was written there
    assert pqbloom.read_table(f"{base}/a.parquet").to_arrow().equals(t)
    assert pqbloom.read_table(f"{base}/a.parquet", filters=[("id", "==", 77)]).to_pydict() == \
        {"id": [77], "name": ["77"]}
    assert pqbloom.read_metadata(f"{base}/a.parquet").num_row_groups == 5
    assert pqbloom.read_schema(f"{base}/a.parquet").names == ["id", "name"]
    pqbloom.write_table(t, f"{base}/b.parquet")
    assert pqbloom.read_table(f"{base}/", filters=[("id", "<", 3)]).num_rows == 6  # a directory: both files
    assert not [p for p in fs.ls(base, detail=False) if "pqbloom-tmp" in p]


def test_file_url_reads_and_writes_locally(tmp_path):
    t = _sample()
    url = (tmp_path / "c.parquet").as_uri()
    assert url.startswith("file://")
    pqbloom.write_table(t, url)
    assert pq.read_table(tmp_path / "c.parquet").equals(t)
    with pqbloom.ParquetFile(url) as pf:
        assert type(pf.range_reader) is RangeReader  # the local os.pread path
        assert pf.read().to_arrow().equals(t)
    (tmp_path / "d").mkdir()
    pq.write_table(t, tmp_path / "d" / "p.parquet")
    assert pqbloom.read_table((tmp_path / "d").as_uri(), filters=[("id", "==", 9)]).num_rows == 1


def test_filesystem_argument_fsspec_and_pyarrow():
    from pyarrow.fs import FSSpecHandler, PyFileSystem

    mem = fsspec.filesystem("memory")
    base = f"/pqbloom-fs-{uuid.uuid4().hex}"
    t = _sample()
    pqbloom.write_table(t, f"{base}/e.parquet", filesystem=mem)
    assert pq.read_table(f"{base}/e.parquet", filesystem=mem).equals(t)
    assert pqbloom.read_table(f"{base}/e.parquet", filesystem=mem).to_arrow().equals(t)
    assert pqbloom.read_metadata(f"{base}/e.parquet", filesystem=mem).num_rows == 5000
    with pqbloom.ParquetFile(f"{base}/e.parquet", filesystem=mem) as pf:
        assert pf.read(filters=pqbloom.field("id") == 4999).num_rows == 1
    # a pyarrow filesystem (here pyarrow's wrapper of the same memory filesystem)
    arrow_fs = PyFileSystem(FSSpecHandler(mem))
    pqbloom.write_table(t, f"{base}/f.parquet", filesystem=arrow_fs)
    assert pq.read_table(f"{base}/f.parquet", filesystem=arrow_fs).equals(t)
    assert pqbloom.read_table(f"{base}/f.parquet", filesystem=arrow_fs).to_arrow().equals(t)
    assert pqbloom.read_table(f"{base}/", filesystem=arrow_fs).num_rows == 10_000
    with pqbloom.ParquetWriter(f"{base}/g.parquet", t.schema, filesystem=mem) as w:
        w.write_table(pqbloom.Table.coerce(t))
    assert pq.read_table(f"{base}/g.parquet", filesystem=mem).equals(t)


def test_failed_remote_write_leaves_nothing():
    mem = fsspec.filesystem("memory")
    base = f"/pqbloom-abort-{uuid.uuid4().hex}"
    mem.mkdir(base)
    t = _sample()
    pqbloom.write_table(t, f"{base}/keep.parquet", filesystem=mem)
    before = mem.cat_file(f"{base}/keep.parquet")
    with pytest.raises(RuntimeError, match="stop"):
        with pqbloom.ParquetWriter(f"memory://{base}/keep.parquet", t.schema) as w:
            w.write_table(pqbloom.Table.coerce(t))
            raise RuntimeError("stop")
    assert mem.cat_file(f"{base}/keep.parquet") == before  # the old file is intact
    assert mem.ls(base, detail=False) == [f"{base}/keep.parquet"]  # and no temporary object is left


def test_fsspec_is_optional(tmp_path):
    code = ("import sys, pqbloom, numpy as np; assert 'fsspec' not in sys.modules\n"
            "pqbloom.write_table({'a': np.arange(3)}, sys.argv[1]); pqbloom.read_table(sys.argv[1])\n"
            "assert 'fsspec' not in sys.modules\n"
            "sys.modules['fsspec'] = None  # as if not installed\n"
            "try:\n    pqbloom.read_table('s3://bucket/x.parquet')\n"
            "except ImportError as e:\n    print(e)\n")
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(p for p in (str(ROOT), os.environ.get("PYTHONPATH", "")) if p))
    out = subprocess.run([sys.executable, "-c", code, str(tmp_path / "o.parquet")],
                         capture_output=True, text=True, env=env, cwd=str(ROOT), check=False)
    assert out.returncode == 0, out.stderr
    assert "pip install pqbloom[remote]" in out.stdout


def test_remote_hive_dataset_in_batches_matches_pyarrow(monkeypatch):
    import pqbloom.datasets.read as dataset

    monkeypatch.setattr(dataset, "REMOTE_BATCH", 3)  # several batches of files opened together
    mem = fsspec.filesystem("memory")
    base = f"/pqbloom-hive-{uuid.uuid4().hex}"
    ids = np.arange(4000, dtype=np.int64)
    t = pa.table({"id": ids, "k": ids % 5, "v": pc.cast(pa.array(ids * 7), pa.string())})
    for part in range(2):  # two files per partition
        pq.write_to_dataset(t.slice(part * 2000, 2000), base, partition_cols=["k"], filesystem=mem,
                            basename_template=f"p{part}-{{i}}.parquet")
    mem.pipe(f"{base}/_SUCCESS", b"")
    mem.pipe(f"{base}/k=1/.p9.parquet.crc", b"junk")  # hidden: skipped, as on a local directory
    for filters in ([("id", "==", 1234)], [("k", "==", 3), ("id", "<", 100)], None):
        got = pqbloom.read_table(f"memory://{base}/", filters=filters).to_pydict()
        want = pq.read_table(base, filesystem=mem, filters=filters).to_pydict()
        key = sorted(range(len(want["id"])), key=lambda i: want["id"][i])
        gkey = sorted(range(len(got["id"])), key=lambda i: got["id"][i])
        for name in ("id", "v", "k"):
            assert [got[name][i] for i in gkey] == [int(want[name][i]) if name == "k" else want[name][i]
                                                   for i in key], (filters, name)


def test_write_to_dataset_on_a_url_and_filesystem_reads_back_as_pyarrow_reads_it():
    mem = fsspec.filesystem("memory")
    base = f"/pqbloom-wtd-{uuid.uuid4().hex}"
    t = pa.table({"k": ["a", "b", "a", "c"], "id": [1, 2, 3, 4]})
    visited = []
    pqbloom.write_to_dataset(t, f"memory://{base}", partition_cols=["k"], file_visitor=visited.append)
    written = [w.path for w in visited]
    assert len(written) == 3 and all("k=" in p for p in written)
    assert not [p for p in mem.find(base) if "pqbloom-tmp" in p]
    got = pq.read_table(base, filesystem=mem).to_pydict()
    assert sorted(zip(got["id"], map(str, got["k"]))) == [(1, "a"), (2, "b"), (3, "a"), (4, "c")]
    ours = pqbloom.read_table(f"memory://{base}/", filters=[("k", "==", "a")]).to_pydict()
    assert sorted(ours["id"]) == [1, 3]
    pqbloom.write_to_dataset(t, f"{base}-2", partition_cols=["k"], filesystem=mem)
    assert pq.read_table(f"{base}-2", filesystem=mem).num_rows == 4
    with pytest.raises(FileExistsError):
        pqbloom.write_to_dataset(t, f"memory://{base}", existing_data_behavior="error")


def test_bench_remote_runs_and_agrees(tmp_path):
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(p for p in (str(ROOT), os.environ.get("PYTHONPATH", "")) if p))
    out = subprocess.run([sys.executable, str(ROOT / "bench" / "bench_remote.py"), "--rows", "30000", "--files", "4",
                          "--file-rows", "5000", "--repeat", "1", "--latency", "0.01"],
                         capture_output=True, text=True, env=env, cwd=tmp_path, timeout=600, check=False)
    assert out.returncode == 0, out.stderr[-3000:]
    lines = [ln for ln in out.stdout.splitlines() if ln.startswith(("file,", "4-file"))]
    pq_lines = [ln for ln in lines if " pqbloom " in ln and "(file obj)" not in ln]
    assert len(pq_lines) == 4 and all(ln.endswith("ok") for ln in pq_lines), out.stdout
    assert not [ln for ln in lines if ln.endswith("WRONG")], out.stdout
