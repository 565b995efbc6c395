"""Lookups on object storage: requests, bytes and round trips of latency, pqbloom vs pyarrow vs DuckDB.

    python bench/bench_remote.py [--rows 2000000] [--files 50] [--file-rows 20000] [--latency 0.03]
                                 [--repeat 3]

Serves, over a local HTTP server with byte ranges and ``--latency`` seconds per request
(``tests/range_server.py``, on 127.0.0.1), two datasets written by pyarrow into a temporary directory
with a Bloom filter on ``id`` and page indexes: one file of ``--rows`` rows (ids ``2 * permutation``:
random order, so only the Bloom filter can prune; pyarrow's default 1Mi-row row groups) and a
directory of ``--files`` files of ``--file-rows`` rows each. Lookups: an absent id (odd, inside every
row group's min/max) and a present id, on the file and on the directory, returning all columns:

* pqbloom            ``pqbloom.read_table(url, filters=[("id", "==", v)])``
* pqbloom (file obj) ``pqbloom.read_table(fsspec.open(url).open(), filters=...)``: a file object with
  fsspec's default read-ahead cache, what a user had to do before URLs were accepted (file only)
* pyarrow            ``pq.read_table(url, filters=..., filesystem=fsspec HTTPFileSystem)``
* DuckDB             ``read_parquet(url) WHERE id = v``: its ``httpfs`` extension must be downloaded
  (``INSTALL httpfs``), so offline it reads through the same fsspec filesystem registered with
  ``register_filesystem`` (said in the output); without either it is left out, and the output says so.

Counted at the server, per lookup: requests, response bytes, and round trips of latency (the longest
chain of requests each started after the previous one ended: the latencies a client waited one after
another). Figures are medians over ``--repeat`` runs of each lookup, engines interleaved; the time
column is wall time, which on a shared machine is noisy (the counts are not).
"""

from __future__ import annotations

import argparse
import datetime
import os
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from typing import Any

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

import fsspec  # noqa: E402  (the repository root is on sys.path when run as a script)
import pyarrow as pa  # noqa: E402
import pyarrow.compute as pc  # noqa: E402
import pyarrow.parquet as pq  # noqa: E402
from fsspec.implementations.http import HTTPFileSystem  # noqa: E402

import pqbloom  # noqa: E402
from tests.range_server import RangeServer  # noqa: E402


def write_data(root: str, rows: int, files: int, file_rows: int) -> np.ndarray:
    rng = np.random.default_rng(0)
    ids = rng.permutation(rows).astype(np.int64) * 2

    def table(v: np.ndarray) -> pa.Table:
        return pa.table({"id": v, "s": pc.cast(pa.array(v * 3 + 1), pa.string()), "x": rng.random(len(v))})

    pq.write_table(table(ids), os.path.join(root, "big.parquet"),
                   bloom_filter_options={"id": {"ndv": rows, "fpp": 0.01}}, write_page_index=True)
    os.makedirs(os.path.join(root, "ds"))
    for k in range(files):
        part = np.arange(k * file_rows, (k + 1) * file_rows, dtype=np.int64) * 2
        rng.shuffle(part)
        pq.write_table(table(part), os.path.join(root, "ds", f"part-{k:03d}.parquet"),
                       bloom_filter_options={"id": {"ndv": file_rows, "fpp": 0.01}}, write_page_index=True)
    return ids


class _DuckHTTP(HTTPFileSystem):
    """fsspec's HTTP filesystem with the ``modified`` DuckDB asks for (HTTP has no such call; a constant
    date changes nothing about what is read)."""

    def modified(self, path: str) -> datetime.datetime:
        return datetime.datetime(2000, 1, 1, tzinfo=datetime.timezone.utc)


def duckdb_engine() -> tuple[Callable[[str, int], int] | None, str]:
    """A DuckDB lookup and how it reaches HTTP (or None and why not)."""
    try:
        import duckdb
    except ImportError:
        return None, "DuckDB: not installed"
    con = duckdb.connect()
    try:  # every lookup reads afresh, as the other engines do (DuckDB >= 1.3 caches remote bytes otherwise)
        con.execute("SET enable_external_file_cache = false")
    except Exception:  # noqa: BLE001 - older DuckDB: no such cache
        pass
    how = "httpfs"
    try:
        con.execute("LOAD httpfs")
    except Exception:  # noqa: BLE001 - not installed: try to install it (needs the internet)
        try:
            con.execute("INSTALL httpfs")
            con.execute("LOAD httpfs")
        except Exception as exc:  # noqa: BLE001
            first = str(exc).splitlines()[0]
            how = (f"fsspec's HTTPFileSystem registered with register_filesystem, since httpfs cannot be had "
                   f"offline ({first[:90]}...)")
            con.register_filesystem(_DuckHTTP())

    def run(url: str, v: int) -> int:
        src = url + "*.parquet" if url.endswith("/") else url
        return len(con.execute(f"SELECT * FROM read_parquet('{src}') WHERE id = {v}").fetchall())

    return run, "DuckDB reads HTTP through " + how


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--rows", type=int, default=2_000_000)
    ap.add_argument("--files", type=int, default=50)
    ap.add_argument("--file-rows", type=int, default=20_000)
    ap.add_argument("--latency", type=float, default=0.03)
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args(argv)

    http = fsspec.filesystem("http")
    engines: dict[str, Callable[[str, int], int]] = {
        "pqbloom": lambda url, v: pqbloom.read_table(url, filters=[("id", "==", v)]).num_rows,
        "pqbloom (file obj)": lambda url, v: pqbloom.read_table(fsspec.open(url).open(),
                                                                filters=[("id", "==", v)]).num_rows,
        # pyarrow cannot list an HTTP directory itself: the listing is done through the same fsspec
        # filesystem, inside the measured call
        "pyarrow": lambda url, v: pq.read_table(sorted(http.ls(url, detail=False)) if url.endswith("/") else url,
                                                filters=[("id", "==", v)], filesystem=http).num_rows,
    }
    duck, duck_note = duckdb_engine()
    if duck is not None:
        engines["DuckDB"] = duck
    with tempfile.TemporaryDirectory(prefix="bench_remote_") as root:
        t0 = time.perf_counter()
        ids = write_data(root, args.rows, args.files, args.file_rows)
        print(f"data: {args.rows:,} rows in one file ({os.path.getsize(os.path.join(root, 'big.parquet')):,} B) and "
              f"{args.files} files of {args.file_rows:,} rows, written by pyarrow {pa.__version__} in "
              f"{time.perf_counter() - t0:.1f}s; latency {args.latency * 1000:.0f} ms per request; machine shared, "
              f"wall times noisy")
        print(duck_note)
        present_file = int(ids[len(ids) // 2 + 7])
        present_dir = 2 * (args.file_rows * (args.files // 3) + 123)
        cases = [("file, absent id", "big.parquet", 2 * (args.rows // 2) + 1, 0),
                 ("file, present id", "big.parquet", present_file, 1),
                 (f"{args.files}-file directory, absent id", "ds/", 2 * (args.file_rows * args.files // 2) + 1, 0),
                 (f"{args.files}-file directory, present id", "ds/", present_dir, 1)]
        with RangeServer(root, latency=args.latency) as srv:
            results: dict[tuple[str, str], list[dict[str, Any]]] = {}
            for name, rel, v, want in cases:
                url = srv.url(rel)
                for eng, fn in engines.items():  # warm-up: connection pools, fsspec listings, imports
                    if eng == "pqbloom (file obj)" and rel.endswith("/"):
                        continue
                    try:
                        fn(url, v)
                    except Exception as exc:  # noqa: BLE001 - reported, not fatal
                        results[(name, eng)] = [{"error": f"{type(exc).__name__}: {str(exc)[:100]}"}]
                for _ in range(args.repeat):
                    for eng, fn in engines.items():
                        if eng == "pqbloom (file obj)" and rel.endswith("/") or "error" in (results.get((name, eng))
                                                                                           or [{}])[0]:
                            continue
                        srv.reset()
                        t = time.perf_counter()
                        try:
                            got = fn(url, v)
                        except Exception as exc:  # noqa: BLE001 - reported with the figures, not fatal
                            results[(name, eng)] = [{"error": f"{type(exc).__name__}: {str(exc)[:100]}"}]
                            continue
                        dt = time.perf_counter() - t
                        c = srv.counts()
                        c["seconds"] = dt
                        c["rows_ok"] = got == want
                        results.setdefault((name, eng), []).append(c)
        print()
        print(f"{'case':<34} {'engine':<20} {'requests':>9} {'bytes':>13} {'round trips':>12} {'max conc.':>10}"
              f" {'time (s)':>9}  rows")
        for name, _, _, _ in cases:
            for eng in engines:
                runs = results.get((name, eng))
                if not runs:
                    continue
                if "error" in runs[0]:
                    print(f"{name:<34} {eng:<20} error: {runs[0]['error']}")
                    continue

                def med(k: str, runs: list[dict[str, Any]] = runs) -> float:
                    return statistics.median(r[k] for r in runs)
                ok = "ok" if all(r["rows_ok"] for r in runs) else "WRONG"
                print(f"{name:<34} {eng:<20} {med('requests'):>9,.0f} {med('bytes'):>13,.0f} "
                      f"{med('round_trips'):>12.0f} {med('max_concurrency'):>10.0f} {med('seconds'):>9.3f}  {ok}")
        print("\nround trips: the longest chain of requests each started after the previous ended (server clock)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
