"""The scan/file seam stays narrow (issue #31): the filter engine imports nothing of the format, IO or
encryption layers, reads a FileReader only through the members ``pqbloom.file.row_access`` lists, and a
one-row filtered lookup crosses between the two packages a bounded number of times
(``scripts/trace_seam.py``)."""

from __future__ import annotations

import ast
import importlib.util
from pathlib import Path

import pytest

from tests.paths import ROOT

SCAN = ROOT / "pqbloom" / "scan"
# dataset code moves to its own package (issue #31); until then it keeps its IO imports
MOVING = {"dataset.py", "sources.py", "write_dataset.py"}
FORBIDDEN = ("pqbloom.format", "pqbloom.io", "pqbloom.crypto", "pqbloom._thrift")
# what scan may never touch on a FileReader: the format's structs, the IO layer, decryption, chunk decoding
FORBIDDEN_MEMBERS = {"thrift_metadata", "range_reader", "decryption", "chunk_metadata", "decode_chunk", "iter_pages",
                     "open_module", "chunk_range", "read_chunk_parts", "footer_location"}


def _modules() -> list[Path]:
    return sorted(p for p in SCAN.glob("*.py") if p.name not in MOVING)


def _imports(path: Path) -> list[str]:
    """Absolute names of every module ``path`` imports (inside functions and TYPE_CHECKING too)."""
    tree = ast.parse(path.read_text())
    out = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            out.extend(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = "pqbloom.scan".split(".")[: 2 - (node.level - 1)]
                mod = ".".join(base + ([node.module] if node.module else []))
            else:
                mod = node.module or ""
            out.append(mod)
            out.extend(f"{mod}.{a.name}" for a in node.names)  # "from .. import format"
    return out


@pytest.mark.parametrize("path", _modules(), ids=lambda p: p.name)
def test_scan_imports_nothing_of_format_io_or_crypto(path: Path) -> None:
    bad = [m for m in _imports(path) if any(m == f or m.startswith(f + ".") for f in FORBIDDEN)]
    assert not bad, f"{path.name} imports {bad}"


@pytest.mark.parametrize("path", _modules(), ids=lambda p: p.name)
def test_scan_uses_no_file_internals(path: Path) -> None:
    used = {n.attr for n in ast.walk(ast.parse(path.read_text())) if isinstance(n, ast.Attribute)}
    assert not used & FORBIDDEN_MEMBERS, f"{path.name} uses {sorted(used & FORBIDDEN_MEMBERS)}"


def _trace_seam():
    spec = importlib.util.spec_from_file_location("trace_seam", ROOT / "scripts" / "trace_seam.py")
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


#: crossings of a one-row lookup in a file of 4 row groups (3 ruled out by their Bloom filters, one
#: probe each): binding, column selection, footer statistics, IO counters, a Bloom probe per row group,
#: then one row group's dictionary check, page index, page-by-page scan and late-materialized read
MAX_CROSSINGS = 20


def test_a_one_row_lookup_crosses_the_seam_a_bounded_number_of_times(tmp_path: Path) -> None:
    got = _trace_seam().measure(str(tmp_path), rows=200_000, row_groups=4, page_size=8192)
    assert got["crossings"] <= MAX_CROSSINGS, got["calls_into_file"]
    # no call of a file-layer internal from scan (what the seam used to be made of)
    for call in got["calls_into_file"]:
        callee = call.split(" -> ")[1].rsplit(".", 1)[1]
        assert callee not in FORBIDDEN_MEMBERS | {"split_nested", "build_column"}, call
