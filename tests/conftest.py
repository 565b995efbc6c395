"""Shared by every test: the repository and fixture paths (from tests/paths.py), the test keys, the Spark
session, and NaN-aware value equality."""

import math
import os
from pathlib import Path

import pytest

from tests.paths import FIXTURES, FIXTURES_DATA, GOLDEN, REAL_WORLD, ROOT

__all__ = ["FIXTURES", "FIXTURES_DATA", "GOLDEN", "REAL_WORLD", "ROOT", "values_equal"]


@pytest.fixture(scope="session")
def fixtures_dir() -> Path:
    if not FIXTURES.is_dir():
        pytest.fail(f"fixture corpus not found at {FIXTURES}; tests read it from ../shared/fixtures")
    return FIXTURES


def values_equal(a, b) -> bool:
    """Deep equality where NaN equals NaN (and -0.0 equals 0.0 only when both are zeros of the same sign)."""
    if isinstance(a, float) and isinstance(b, float):
        if math.isnan(a) and math.isnan(b):
            return True
        return a == b and math.copysign(1, a) == math.copysign(1, b)
    if isinstance(a, (list, tuple)) and isinstance(b, (list, tuple)):
        return len(a) == len(b) and all(values_equal(x, y) for x, y in zip(a, b))
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(values_equal(a[k], b[k]) for k in a)
    return a == b


def pytest_collection_modifyitems(config, items):
    # make sure a missing optional peer is a failure, not a silent pass
    os.environ.setdefault("PQBLOOM_TESTING", "1")
