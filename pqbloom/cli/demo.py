"""``pqbloom demo``: write embedded sample data with Bloom filters, read it back, probe it, inspect it.

Without ``--output-dir`` the file goes to a temporary directory that is removed before the command
returns (the output says so); with it, the file stays there and the output says where.
"""

from __future__ import annotations

import argparse
import os
import tempfile
import time

import numpy as np

from ..table import Table
from .report import inspect_file, print_inspect

__all__ = ["cmd_demo", "demo_table"]


def demo_table(n: int = 200_000, seed: int = 7) -> Table:
    """Embedded sample data: an events table with a unique id, an email, an amount and a timestamp."""
    rng = np.random.default_rng(seed)
    ids = rng.permutation(np.arange(10_000_000, 10_000_000 + 2 * n, 2, dtype=np.int64))
    users = rng.integers(0, n // 10 + 1, n)
    emails = np.array([f"user{u}@example.com" for u in users.tolist()])
    amounts = np.round(rng.gamma(2.0, 30.0, n), 2)
    ts = (np.datetime64("2026-01-01T00:00:00", "us") + rng.integers(0, 86_400_000_000 * 30, n)).astype("datetime64[us]")
    return Table.from_pydict({"id": ids, "email": emails, "amount": amounts, "ts": ts})


def cmd_demo(args: argparse.Namespace) -> int:
    """``pqbloom demo [--output-dir DIR]``: the tour; nothing is left behind unless DIR is given."""
    if args.output_dir:
        os.makedirs(args.output_dir, exist_ok=True)
        rc = _demo(args.rows, args.output_dir)
        print(f"\nthe file stays in {args.output_dir}")
        return rc
    with tempfile.TemporaryDirectory(prefix="pqbloom-demo-") as workdir:
        rc = _demo(args.rows, workdir)
    print(f"\nremoved {workdir} (keep the file with --output-dir DIR)")
    return rc


def _demo(rows: int, workdir: str) -> int:
    from ..api import ParquetFile, write_table

    t = demo_table(rows)
    path = os.path.join(workdir, "events.parquet")
    t0 = time.perf_counter()
    write_table(t, path, row_group_size=max(rows // 4, 1), compression="zstd",
                bloom_filter_options={"id": True, "email": {"fpp": 0.01}})
    t1 = time.perf_counter()
    print(f"wrote {t.num_rows:,} rows to {path} ({os.path.getsize(path):,} bytes) in {t1 - t0:.2f} s")
    print("  Bloom filters on id and email, zstd, 4 row groups, page indexes")
    with ParquetFile(path) as pf:
        back = pf.read()
        t2 = time.perf_counter()
        same = back.to_arrow().equals(t.to_arrow()) if _have_pyarrow() else back.to_pydict() == t.to_pydict()
        print(f"read it back in {t2 - t1:.2f} s: {back.num_rows:,} rows, equal to what was written: {same}")
        present_id = int(t.column("id").values[123])
        absent_id = present_id + 1  # ids are even, so an odd one is absent yet inside every min/max
        for label, value in (("present", present_id), ("absent", absent_id)):
            maybe = [i for i in range(pf.num_row_groups) if pf.bloom_filter_might_contain(i, "id", value)]
            print(f"  id {value} ({label}): Bloom filters say row groups {maybe} of {pf.num_row_groups} may hold it")
        email = t.column("email").to_pylist()[5]
        maybe = [i for i in range(pf.num_row_groups) if pf.bloom_filter_might_contain(i, "email", email)]
        print(f"  email {email!r}: row groups {maybe} may hold it")
        nope = "nobody@nowhere.invalid"
        maybe = [i for i in range(pf.num_row_groups) if pf.bloom_filter_might_contain(i, "email", nope)]
        print(f"  email {nope!r}: row groups {maybe} may hold it")
    print()
    print_inspect(inspect_file(path))
    return 0 if same else 1


def _have_pyarrow() -> bool:
    try:
        import pyarrow  # noqa: F401
    except ImportError:
        return False
    return True
