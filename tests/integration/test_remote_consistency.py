"""Remote reads that stay true to the object and to the listing (issue #29, items 3 and 7).

* An object replaced while it is read (same name, same size, plaintext pages without CRC, so nothing in
  the bytes tells the versions apart) raises :class:`~pqbloom.errors.SourceChangedError` naming the URL,
  where it returned rows of both versions or answered a filter from the stale footer. The test server
  (:mod:`tests.range_server`) replaces the file between two requests of one read.
* A Hive dataset whose listing percent-encodes ``=`` (``country%3DFR/``, as Python's ``http.server``
  lists) keeps its partition columns, as pyarrow reads the same directory locally; ``pqbloom.dataset``
  takes URLs as it takes directories.
"""

from __future__ import annotations

import os

import fsspec
import numpy as np
import pyarrow as pa
import pyarrow.dataset as pads
import pyarrow.parquet as pq
import pytest

import pqbloom
from pqbloom.errors import ParquetError, SourceChangedError
from tests.range_server import RangeServer

ROWS = 200_000
NEW = 1_000_000  # ids of the second version start here


def _write(path, ids: np.ndarray) -> None:
    # plain, uncompressed, no dictionary, no page CRC: two versions of exactly the same size and layout
    pq.write_table(pa.table({"id": ids, "v": ids * 10}), path, compression="none", use_dictionary=False,
                   row_group_size=50_000, data_page_size=64 << 10, write_page_checksum=False)


@pytest.fixture
def versions(tmp_path):
    """``data.parquet`` (ids 0..ROWS-1) and ``next.parquet``, the same file of ids NEW.., same size."""
    _write(tmp_path / "data.parquet", np.arange(ROWS, dtype=np.int64))
    _write(tmp_path / "next.parquet", np.arange(ROWS, dtype=np.int64) + NEW)
    assert os.path.getsize(tmp_path / "data.parquet") == os.path.getsize(tmp_path / "next.parquet")
    return tmp_path


def _replace_at(root, index: int, name: str = "data.parquet"):
    """An ``on_request`` hook that replaces ``name`` by next.parquet before answering request ``index``."""
    def hook(i: int, rel: str, rng: str | None) -> None:
        if i == index:
            os.utime(root / "next.parquet", (1_700_000_000, 1_700_000_000))  # another Last-Modified too
            os.replace(root / "next.parquet", root / name)
    return hook


@pytest.mark.parametrize("index", [2, 4], ids=["between footer and pages", "between pages"])
@pytest.mark.parametrize("filtered", [False, True])
@pytest.mark.parametrize("etags", [True, False], ids=["ETag", "Last-Modified"])
def test_object_replaced_during_a_read_raises_naming_the_url(versions, index, filtered, etags):
    # the footer is requests 0 and 1 (tail and leading magic, together); pages come after
    with RangeServer(versions, etags=etags, on_request=_replace_at(versions, index)) as srv:
        url = srv.url("data.parquet")
        filters = [("id", ">=", 0)] if filtered else None
        with pytest.raises(SourceChangedError) as info:
            got = pqbloom.read_table(url, filters=filters)
            ids = np.asarray(got.column("id").to_numpy())
            pytest.fail(f"{got.num_rows} rows, {int((ids >= NEW).sum())} of the new version")
        assert info.value.url == url and url in str(info.value)
        assert isinstance(info.value, ParquetError) and isinstance(info.value, OSError)
        # read again, the new version reads whole
        assert pqbloom.read_table(url, filters=filters).to_pydict() == \
            pq.read_table(versions / "data.parquet", filters=filters).to_pydict()


def test_filter_is_not_answered_from_a_stale_footer(versions):
    # the old footer's statistics put id 5 in row group 0; its pages then come from the new version
    with RangeServer(versions, on_request=_replace_at(versions, 2)) as srv:
        with pytest.raises(SourceChangedError):
            pqbloom.read_table(srv.url("data.parquet"), filters=[("id", "==", 5)])


def test_if_match_is_sent_with_every_range_after_the_first_answer(versions):
    with RangeServer(versions) as srv:
        url = srv.url("data.parquet")
        got = pqbloom.read_table(url)
        assert got.to_pydict() == pq.read_table(versions / "data.parquet").to_pydict()
        srv.counts()
        first, magic, *pages = sorted(srv.log, key=lambda r: r.start)
        with pqbloom.ParquetFile(url) as pf:
            etag = pf.range_reader.pinned_etag()
        assert etag is not None and first.if_match is None and magic.if_match is None
        assert len(pages) >= 4 and all(r.if_match == etag for r in pages)


def test_object_replaced_in_a_dataset_read_raises(versions):
    (versions / "ds").mkdir()
    os.replace(versions / "data.parquet", versions / "ds" / "a.parquet")
    _write(versions / "ds" / "b.parquet", np.arange(10, dtype=np.int64))
    # request 0 lists the directory, 1-4 open both files (tails and magics together); then pages
    with RangeServer(versions, on_request=_replace_at(versions, 5, "ds/a.parquet")) as srv:
        with pytest.raises(SourceChangedError, match="a.parquet"):
            pqbloom.read_table(srv.url("ds/"))


# -- item 7: percent-encoded listings, URLs as datasets --------------------------------------------

def _hive(root, city: str = "New York"):
    """A Hive directory as Spark writes it: ``country=US/city=New%20York/`` (the value escaped)."""
    rows = {("FR", "Paris"): [1, 2], ("DE", "Berlin"): [3], ("US", city): [4, 5, 6]}
    for (country, name), ids in rows.items():
        d = root / "ds" / f"country={country}" / f"city={name.replace(' ', '%20')}"
        d.mkdir(parents=True)
        pq.write_table(pa.table({"id": np.array(ids, np.int64)}), d / "part-0.parquet")
    (root / "ds" / "_SUCCESS").write_bytes(b"")
    return root


@pytest.fixture
def hive(tmp_path):
    return _hive(tmp_path)


def _pyarrow_rows(root, filters=None) -> list[tuple]:
    t = pads.dataset(root, format="parquet", partitioning="hive").to_table(
        filter=pq.filters_to_expression(filters) if filters else None).to_pydict()
    return sorted(zip(t["id"], map(str, t["country"]), map(str, t["city"])))


def _rows(t: pqbloom.Table) -> list[tuple]:
    d = t.to_pydict()
    return sorted(zip(d["id"], d["country"], d["city"]))


@pytest.mark.parametrize("filters", [None, [("country", "==", "FR")], [("city", "==", "New York"), ("id", ">", 4)]])
def test_percent_encoded_listing_keeps_partition_columns(hive, filters):
    with RangeServer(hive, quote_listing=True) as srv:
        url = srv.url("ds/")
        assert any("/country%3DFR/" in u for u in fsspec.filesystem("http").ls(url, detail=False))  # '=' encoded
        want = _pyarrow_rows(hive / "ds", filters)
        assert want
        assert _rows(pqbloom.read_table(url, filters=filters)) == want
        ds = pqbloom.dataset(url)
        assert ds.partition_columns == ["country", "city"]
        assert len(ds.files) == 3 and ds.schema.names == ["id", "country", "city"]
        assert _rows(ds.to_table(filters=filters)) == want
        assert _rows(pqbloom.read_table(ds, filters=filters)) == want


def test_dataset_of_a_url_and_of_a_filesystem_path(tmp_path):
    hive = _hive(tmp_path, city="NYC")  # the listing below gives names raw: none that needs escaping
    want = _pyarrow_rows(hive / "ds")
    with RangeServer(hive) as srv:
        assert _rows(pqbloom.dataset(srv.url("ds/")).to_table()) == want
        one = srv.url("ds/country=FR/city=Paris/part-0.parquet")
        assert pqbloom.dataset(one).to_table().to_pydict() == {"id": [1, 2]}
        assert pqbloom.dataset([one, srv.url("ds/country=DE/city=Berlin/part-0.parquet")]).to_table().to_pydict() \
            == {"id": [1, 2, 3]}
    mem = fsspec.filesystem("memory")
    base = f"/pqbloom-ds-{os.getpid()}-{id(hive)}"
    for path in (hive / "ds").rglob("*.parquet"):
        mem.pipe(f"{base}/{path.relative_to(hive / 'ds').as_posix()}", path.read_bytes())
    try:
        ds = pqbloom.dataset(base, filesystem=mem)
        assert _rows(ds.to_table()) == want
        assert [fr.partitions for fr, _ in ds.plan_files([("country", "==", "DE")])] == \
            [{"country": "DE", "city": "Berlin"}]
        assert _rows(pqbloom.dataset(f"memory://{base}/").to_table()) == want
    finally:
        mem.rm(base, recursive=True)
