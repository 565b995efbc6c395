"""Tests that read the shared corpora (``../shared/fixtures`` beside the checkout: parquet-testing and the
real-world files) run where they are and are skipped, naming the missing path, where they are not: a fresh
clone collects and runs every other test. CI sets ``PQBLOOM_REQUIRE_CORPORA=1`` (``.ci/run``), which turns a
missing corpus into a failure, so that the corpus tests cannot silently stop running there.

Three ways to say that a test needs a corpus path:

* ``@needs(path)`` (or a module's ``pytestmark = needs(path)``): the ``needs_corpus`` marker, checked by
  ``tests/conftest.py`` before the test runs;
* ``require(path)`` inside a test or fixture (``fixture_file``, ``fixtures_dir`` call it);
* ``params(values, path)`` for a parametrization computed from a corpus at import (a directory listing):
  the values, or, where the corpus is absent, one placeholder marked ``needs(path)``, so that the test is
  still collected and reported as skipped rather than vanishing as an empty parameter set.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest

__all__ = ["REQUIRE_ENV", "needs", "require", "params", "missing_message", "check_item"]

#: set to 1 where the corpora must be present (CI): a missing one then fails the tests that need it
REQUIRE_ENV = "PQBLOOM_REQUIRE_CORPORA"


def required() -> bool:
    """Whether a missing corpus fails (``PQBLOOM_REQUIRE_CORPORA`` set to anything but empty or 0)."""
    return os.environ.get(REQUIRE_ENV, "") not in ("", "0")


def missing_message(path: Path) -> str:
    return (f"shared corpus not found: {path} (tests read ../shared/fixtures beside the checkout; "
            f"{REQUIRE_ENV}=1, as CI sets it, makes this a failure)")


def require(path: Path | str) -> Path:
    """``path`` when it exists; else the test is skipped naming it (failed under ``PQBLOOM_REQUIRE_CORPORA``)."""
    path = Path(path)
    if not path.exists():
        if required():
            pytest.fail(missing_message(path), pytrace=False)
        pytest.skip(missing_message(path))
    return path


def needs(*paths: Path | str) -> pytest.MarkDecorator:
    """The marker of a test (or, as ``pytestmark``, a module) that reads these corpus paths."""
    return pytest.mark.needs_corpus(*paths)


def params(values: Sequence[Any], path: Path | str, arity: int = 1) -> list[Any]:
    """``values`` (a parametrization read from the corpus at ``path``), or, when ``path`` is absent, one
    placeholder of ``arity`` arguments that is skipped (failed under ``PQBLOOM_REQUIRE_CORPORA``) naming it."""
    if Path(path).exists():
        return list(values)
    return [pytest.param(*([None] * arity), id="corpus-absent", marks=needs(path))]


def check_item(item: pytest.Item) -> None:
    """Skip (or fail) ``item`` when a path its ``needs_corpus`` markers name is missing (conftest's hook)."""
    for marker in item.iter_markers("needs_corpus"):
        for p in marker.args:
            require(p)
