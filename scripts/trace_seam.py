"""Measure the scan/file seam: how often a one-row filtered lookup crosses between ``pqbloom.scan`` and
``pqbloom.file``, and how many of pqbloom's modules it enters.

    python scripts/trace_seam.py [--rows 1000000] [--row-groups 4] [--page-size 65536] [--layout clustered]

Writes a file (``id`` int64 unique even integers, ``s`` a short string, ``x`` float64; Bloom filter on
``id``, page index on) into a temporary directory, opens it once untraced, then traces one
``pqbloom.read_table(path, filters=[("id", "==", k)], use_threads=False)`` of a present id under
:func:`sys.setprofile` (Python frames only, of the calling thread: hence one thread). It prints, as JSON:

* ``modules``: distinct ``pqbloom.*`` modules whose functions ran;
* ``crossings``: transitions between a ``pqbloom.scan.*`` frame and a ``pqbloom.file.*`` frame, counted
  along the stack: each call from a scan frame into a file frame (directly, or through modules of
  neither package: ``pqbloom.table``, ``numpy``...) and each call from file back into scan is one; a
  property read or a generator resumed is a call too. The value types both sides share
  (:data:`VOCABULARY`: ``RowSelection``, ``PageLayout`` in ``pqbloom.file.selection``) count as
  neither side, as ``pqbloom.table``'s ``Column`` does (``--strict`` counts them as file);
* ``calls_into_file``: distinct (scan caller, file callee) function pairs of those crossings.

:func:`measure` is what ``tests/unit/scan/test_seam.py`` calls.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
from collections import Counter
from types import FrameType
from typing import Any

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
if ROOT not in sys.path:
    sys.path.insert(0, ROOT)

import pqbloom  # noqa: E402


def write_file(path: str, rows: int, row_groups: int, page_size: int, layout: str) -> np.ndarray:
    """The lookup file; returns its ids in row order."""
    rng = np.random.default_rng(42)
    ids = (rng.permutation(rows) * 2).astype(np.int64)
    rg = -(-rows // row_groups)
    if layout == "clustered":
        for s in range(0, rows, rg):
            ids[s:s + rg].sort()
    t = pqbloom.Table.from_pydict({"id": ids, "s": [f"v{i % 1000}" for i in range(rows)], "x": rng.random(rows)},
                                  pqbloom.Schema.from_types({"id": "int64", "s": "string", "x": "double"}))
    pqbloom.write_table(t, path, row_group_size=rg, compression="snappy", data_page_size=page_size,
                        bloom_filter_options={"id": {"fpp": 0.01}})
    return ids


#: the seam's vocabulary: value types both sides use (RowSelection, PageLayout), counted as neither side, as
#: pqbloom.table's Column is
VOCABULARY = ("pqbloom.file.selection",)


def _package(module: str) -> str | None:
    if module in VOCABULARY:
        return None
    if module.startswith("pqbloom.scan.") or module == "pqbloom.scan":
        return "scan"
    if module.startswith("pqbloom.file.") or module == "pqbloom.file":
        return "file"
    return None


def trace(fn: Any, *, strict: bool = False) -> dict[str, Any]:
    """Run ``fn()`` under a profiler; the seam figures described in the module docstring."""
    modules: set[str] = set()
    pairs: Counter[tuple[str, str]] = Counter()
    # per live frame: the package of the nearest scan/file frame at or below it, and that frame's function
    side: dict[int, tuple[str | None, str]] = {}
    crossings = 0

    def prof(frame: FrameType, event: str, arg: Any) -> None:
        nonlocal crossings
        if event == "call":
            mod = frame.f_globals.get("__name__", "")
            if mod.startswith("pqbloom"):
                modules.add(mod)
            back = frame.f_back
            below = side.get(id(back), (None, "")) if back is not None else (None, "")
            pkg = "file" if strict and mod in VOCABULARY else _package(mod)
            name = f"{mod}.{frame.f_code.co_name}"
            if pkg is None:
                side[id(frame)] = below
                return
            if below[0] is not None and below[0] != pkg:
                crossings += 1
                if pkg == "file":
                    pairs[(below[1], name)] += 1
            side[id(frame)] = (pkg, name)
        elif event == "return":
            side.pop(id(frame), None)

    sys.setprofile(prof)
    try:
        fn()
    finally:
        sys.setprofile(None)
    return {"modules": len(modules), "crossings": crossings,
            "calls_into_file": sorted(f"{a} -> {b}" for a, b in pairs),
            "module_list": sorted(modules)}


def measure(directory: str, *, rows: int = 1_000_000, row_groups: int = 4, page_size: int = 65536,
            layout: str = "clustered", strict: bool = False) -> dict[str, Any]:
    """Write the lookup file under ``directory`` and trace one filtered lookup of a present id."""
    path = os.path.join(directory, "lookup.parquet")
    ids = write_file(path, rows, row_groups, page_size, layout)
    key = int(ids[len(ids) // 3])
    expect = pqbloom.read_table(path, filters=[("id", "==", key)])  # warm imports and caches
    assert expect.num_rows == 1
    got: list[Any] = []
    # one thread: sys.setprofile sees the calling thread only, and a threaded read evaluates its row
    # groups on the decode pool
    out = trace(lambda: got.append(pqbloom.read_table(path, filters=[("id", "==", key)], use_threads=False)),
                strict=strict)
    assert got[0].num_rows == 1 and got[0].column("id").to_pylist() == [key]
    return out


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--rows", type=int, default=1_000_000)
    p.add_argument("--row-groups", type=int, default=4)
    p.add_argument("--page-size", type=int, default=65536)
    p.add_argument("--layout", choices=("clustered", "random"), default="clustered")
    p.add_argument("--verbose", action="store_true", help="also list the modules and the calls into file/")
    p.add_argument("--strict", action="store_true", help="count RowSelection / PageLayout calls as crossings")
    a = p.parse_args()
    with tempfile.TemporaryDirectory() as d:
        out = measure(d, rows=a.rows, row_groups=a.row_groups, page_size=a.page_size, layout=a.layout, strict=a.strict)
    if not a.verbose:
        out.pop("module_list")
        out["calls_into_file"] = len(out["calls_into_file"])
    print(json.dumps(out, indent=1))


if __name__ == "__main__":
    main()
