"""Each compiled module is optional on its own: one that was not built (a failed compile on some
platform) leaves the others in use, its kernels run the numpy reference, and ``pqbloom.kernels``
says which modules are missing. Checked in a fresh interpreter where one module cannot be imported."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from pqbloom import kernels
from tests.paths import ROOT

PROBE = r"""
import importlib.abc, json, sys
class Block(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        if name == "pqbloom._kernels." + sys.argv[1]:
            raise ImportError("not built (test)")
        return None
sys.meta_path.insert(0, Block())
import numpy as np
import pqbloom.kernels as k
from pqbloom.kernels import binary, hybrid
from pqbloom.kernels.reference import binary as binary_ref, hybrid as hybrid_ref
from pqbloom.arrays import BinaryArray
# a kernel of the missing module and one of another module, through the dispatch, against the reference
buf = bytes([0b00000011, 0xAA, 0xAA])  # one bit-packed group of 8 values of width 2 (levels)
out = np.zeros(8, np.int16); want = np.zeros(8, np.int16)
used = hybrid.decode_hybrid(buf, 2, 8, out); hybrid_ref.decode_hybrid(buf, 2, 8, want)
values = BinaryArray.from_pylist([b"ab", b"", b"xyz"])
print(json.dumps({"built": list(k.BUILT), "missing": list(k.MISSING), "compiled": k.COMPILED,
                  "extension_built": k.EXTENSION_BUILT, "hybrid_same": out.tolist() == want.tolist(), "used": used,
                  "binary_compiled": k.compiled("binary") is not None, "hybrid_compiled": k.compiled("hybrid") is not None,
                  "encode_same": binary.encode_plain_byte_array(values) == binary_ref.encode_plain_byte_array(values)}))
"""


def _probe(missing: str) -> dict[str, object]:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    env.pop("PQBLOOM_PURE_PYTHON", None)
    proc = subprocess.run([sys.executable, "-c", PROBE, missing], capture_output=True, text=True, env=env,
                          cwd=str(ROOT), timeout=120)
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout.strip().splitlines()[-1])  # type: ignore[no-any-return]


@pytest.mark.skipif(not kernels.EXTENSION_BUILT, reason="needs every compiled module built")
def test_a_missing_module_leaves_the_others_compiled() -> None:
    got = _probe("hybrid")
    assert got["missing"] == ["hybrid", "chunkloop"]  # (the compiled page loop cimports hybrid's loops)
    assert "hybrid" not in got["built"] and "binary" in got["built"] and "pool" in got["built"]
    assert got["compiled"] is True and got["extension_built"] is False
    assert got["binary_compiled"] is True and got["hybrid_compiled"] is False
    assert got["hybrid_same"] is True and got["used"] == 3
    assert got["encode_same"] is True


def test_the_modules_listed_are_the_ones_setup_builds() -> None:
    sources = sorted(f[:-4] for f in os.listdir(ROOT / "pqbloom" / "_kernels") if f.endswith(".pyx"))
    assert sorted(kernels.MODULES) == sources
    assert sorted(kernels.BUILT + kernels.MISSING) == sources


def test_setup_builds_the_one_list() -> None:
    """setup.py has no list of its own: it reads ``pqbloom.kernels.MODULES`` from the package's source
    (its ``_modules()``, run here without running ``setup()``)."""
    import ast

    tree = ast.parse((ROOT / "setup.py").read_text())
    assigned = {t.id for node in ast.walk(tree) if isinstance(node, ast.Assign) for t in node.targets
                if isinstance(t, ast.Name)}
    assert "MODULES" in assigned  # MODULES = _modules(): not a literal
    literal = [node for node in ast.walk(tree) if isinstance(node, ast.Assign)
               and any(isinstance(t, ast.Name) and t.id == "MODULES" for t in node.targets)]
    assert all(not isinstance(node.value, (ast.List, ast.Tuple)) for node in literal)
    func = next(node for node in tree.body if isinstance(node, ast.FunctionDef) and node.name == "_modules")
    scope: dict[str, object] = {"HERE": str(ROOT)}
    exec("import ast, os\n" + ast.get_source_segment((ROOT / "setup.py").read_text(), func), scope)
    assert scope["_modules"]() == list(kernels.MODULES)  # type: ignore[operator]
