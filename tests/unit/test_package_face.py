"""The package face: ``import pqbloom`` loads none of its heavy modules (numpy, the Thrift bindings,
cryptography, the reader); each public name is imported when first used, and type checkers see them
all (``TYPE_CHECKING`` imports)."""

from __future__ import annotations

import importlib.metadata
import json
import os
import subprocess
import sys

import pytest

import pqbloom
from tests.paths import ROOT

HEAVY = ["numpy", "thrift", "cryptography", "cramjam", "pqbloom._thrift", "pqbloom.crypto", "pqbloom.api",
         "pqbloom.file", "pqbloom.format", "pqbloom.kernels"]


def _run(code: str) -> object:
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=str(ROOT), timeout=120,
                          env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout.strip().splitlines()[-1])


def test_import_pqbloom_loads_no_heavy_module() -> None:
    loaded = _run(f"import json, sys; import pqbloom; print(json.dumps([m for m in {HEAVY!r} if m in sys.modules]))")
    assert loaded == []


def test_a_public_name_is_loaded_when_first_used() -> None:
    got = _run("import json, sys; import pqbloom; f = pqbloom.read_table; "
               "print(json.dumps([f.__module__, 'pqbloom.api' in sys.modules, 'read_table' in vars(pqbloom)]))")
    assert got == ["pqbloom.api", True, True]


def test_every_public_name_resolves() -> None:
    for name in pqbloom.__all__:
        assert getattr(pqbloom, name) is not None, name
    assert set(pqbloom.__all__) <= set(dir(pqbloom))
    assert pqbloom.Table is pqbloom.table.Table  # submodules resolve as attributes too
    assert pqbloom.kernels.MODULES


def test_an_unknown_name_is_an_attribute_error() -> None:
    try:
        pqbloom.no_such_name  # noqa: B018
    except AttributeError as exc:
        assert "no_such_name" in str(exc)
    else:
        raise AssertionError("no AttributeError")


def _project() -> dict[str, object]:
    tomllib = pytest.importorskip("tomllib")  # (Python 3.11+)
    return tomllib.loads((ROOT / "pyproject.toml").read_text())  # type: ignore[no-any-return]


def test_the_version_has_one_source() -> None:
    project = _project()
    assert "version" not in project["project"] and "version" in project["project"]["dynamic"]  # type: ignore[index,operator]
    assert project["tool"]["setuptools"]["dynamic"]["version"] == {"attr": "pqbloom._version.__version__"}  # type: ignore[index]
    try:
        installed = importlib.metadata.version("pqbloom")
    except importlib.metadata.PackageNotFoundError:
        return
    assert installed == pqbloom.__version__


def test_the_licence_is_shipped() -> None:
    project = _project()["project"]
    assert project["license"] == "Apache-2.0" and project["license-files"] == ["LICENSE"]  # type: ignore[index]
    assert "Apache License" in (ROOT / "LICENSE").read_text()
