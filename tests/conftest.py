"""Shared by every test: the repository and fixture paths (from tests/paths.py), the test keys and key
helpers, the pyarrow encryption subprocess, the Spark session, and NaN-aware value equality.

Test modules import the constants and helpers by name (``from tests.conftest import K16, run_pyarrow``)
and request the fixtures (``fixtures_dir``, ``spark``) as arguments.
"""

import base64
import math
import os
import struct
import subprocess
import sys
import textwrap
from collections.abc import Callable
from pathlib import Path

import pytest

from interop.spark_support import MASTER_KEYS as SPARK_MASTER_KEYS_BASE64
from tests.corpora import check_item, require
from tests.paths import FIXTURES, FIXTURES_DATA, GOLDEN, REAL_WORLD, ROOT
from tests.tracemalloc_guard import install as _guard_tracemalloc
from tests.tracemalloc_guard import starts as _tracemalloc_starts

# before any test traces: tracemalloc.stop() can crash the interpreter on CPython < 3.12.9 (see the module)
_guard_tracemalloc()

__all__ = [
    "ALL_KEYS", "COL_KEY", "FIXTURES", "FIXTURES_DATA", "GOLDEN", "K16", "K32", "KEY", "MASTER", "OTHER_KEY",
    "REAL_WORLD", "ROOT", "SPARK_MASTER_KEYS", "assert_no_key_in", "fixture_file", "key_retriever",
    "run_pyarrow", "split_tail", "values_equal",
]

# ---------------------------------------------------------------------------------------------
# test keys: never real secrets

#: the keys of the parquet-testing encryption fixtures (AES-128), by key id; also the master keys of the
#: in-memory KMS (pqbloom's and pyarrow's, interop/pyarrow_kms.py) in the KMS tests
K16 = {"kf": b"0123456789012345", "kc1": b"1234567890123450", "kc2": b"1234567890123451"}
#: the keys of the aes256/ fixtures: a footer key and one key per column (kc1..kc8)
K32 = {"kf": b"01234567890123456789012345678901"}
K32.update({f"kc{i}": b"1234567890123456789012345678901" + str((i + 1) % 10).encode() for i in range(1, 9)})
#: the KMS master keys (master key id -> key) that the KMS tests wrap data keys with
MASTER = dict(K16)
#: plain keys for files written by the tests: footer key, a column key, and a key that fits nothing
KEY = b"K" * 16
COL_KEY = b"C" * 16
OTHER_KEY = b"Z" * 16
#: every key above: none may appear in an error message or repr
ALL_KEYS = (KEY, COL_KEY, OTHER_KEY, *K16.values(), *K32.values())
#: parquet-java's test master keys (interop/spark_support.py, base64 there), decoded
SPARK_MASTER_KEYS = {k: base64.b64decode(v) for k, v in SPARK_MASTER_KEYS_BASE64.items()}


def key_retriever(keys: dict[str, bytes]) -> Callable[[bytes], bytes]:
    """A ``key_retriever`` for FileDecryptionProperties: key metadata is the key id (as the fixtures store it)."""
    return lambda key_metadata: keys[key_metadata.decode("ascii")]


def assert_no_key_in(exc: BaseException, keys=ALL_KEYS) -> None:
    """No key shows in the exception's message or repr, raw, hex or as a bytes literal."""
    text = f"{exc} {exc!r}"
    for key in keys:
        assert key.decode("latin-1") not in text
        assert key.hex() not in text and key.hex().upper() not in text
        assert repr(key) not in text


def fixture_file(name: str) -> Path:
    """A file of parquet-testing's data/ directory; a missing one skips the test naming it (fails it in CI:
    tests/corpora.py)."""
    return require(FIXTURES_DATA / name)


def split_tail(data: bytes) -> tuple[bytes, bytes]:
    """(footer region, magic) of a whole file's bytes: the region is FileCryptoMetaData + footer when encrypted."""
    length = struct.unpack("<I", data[-8:-4])[0]
    return data[len(data) - 8 - length : -8], data[-4:]


# ---------------------------------------------------------------------------------------------
# pyarrow's encryption as an oracle, in a subprocess (pyarrow may std::terminate on encrypted metadata)

PYARROW_PRELUDE = textwrap.dedent(
    """
    import base64, json, os, sys
    import pyarrow as pa, pyarrow.parquet as pq
    import pyarrow.parquet.encryption as pe
    from interop.pyarrow_kms import in_memory_kms

    MASTER = {master!r}

    Kms = in_memory_kms(MASTER)  # interop/pyarrow_kms.py: parquet-java's InMemoryKMS wrapping

    def table_json(t):
        return {{name: t.column(name).to_pylist() for name in t.column_names}}
    """
).format(master=MASTER)  # the subprocess's KMS holds the same master keys


def run_pyarrow(script: str, *args: str) -> str:
    """Run ``script`` after :data:`PYARROW_PRELUDE` (``pa``, ``pq``, ``pe``, ``Kms``, ``MASTER``, ``table_json``)
    in a fresh interpreter at the repository root; return its stdout, failing the test on a non-zero exit."""
    proc = subprocess.run([sys.executable, "-c", PYARROW_PRELUDE + textwrap.dedent(script), *args],
                          capture_output=True, text=True, timeout=300, cwd=ROOT)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return proc.stdout


# ---------------------------------------------------------------------------------------------
# Spark (parquet-java as an oracle): one session per run


@pytest.fixture(scope="session")
def spark():
    """The shared local SparkSession (``interop.spark_support.get_spark``), stopped at the end of the run.

    Modules that need it set up further (the pqbloom data source registered, a conf changed) override this
    fixture with one of the same name that requests it."""
    try:
        from interop.spark_support import get_spark, stop_spark
    except ImportError as exc:  # pragma: no cover
        pytest.fail(f"Spark oracle unavailable: {exc}")
    session = get_spark()
    yield session
    stop_spark()


@pytest.fixture(scope="session")
def fixtures_dir() -> Path:
    """The parquet-testing corpus; absent, the test is skipped naming it (failed in CI: tests/corpora.py)."""
    return require(FIXTURES)


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


def pytest_configure(config):
    config.addinivalue_line("markers", "needs_corpus(*paths): reads these paths of the shared corpora "
                                       "(../shared/fixtures): skipped naming a missing one, failed where "
                                       "PQBLOOM_REQUIRE_CORPORA=1 (tests/corpora.py)")


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_setup(item):
    check_item(item)  # before the fixtures: a missing corpus skips (or, in CI, fails) the test naming it


def pytest_sessionstart(session):
    from tests.writers import snapshot

    session.config._pqbloom_repo_before = snapshot(ROOT)  # tests write only under temporary directories


def pytest_sessionfinish(session, exitstatus):
    from tests.writers import snapshot, written

    before = getattr(session.config, "_pqbloom_repo_before", None)
    changed = written(before, snapshot(ROOT)) if before is not None else []
    if changed:
        reporter = session.config.pluginmanager.get_plugin("terminalreporter")
        msg = f"the test run wrote into the repository (tests write only under tmp_path): {changed}"
        if reporter is not None:
            reporter.write_line(msg, red=True)
        session.exitstatus = pytest.ExitCode.TESTS_FAILED


def pytest_collection_modifyitems(config, items):
    # make sure a missing optional peer is a failure, not a silent pass
    os.environ.setdefault("PQBLOOM_TESTING", "1")
    # markers from where a test is and what it uses, so that -m selects by them without a list to keep
    integration = ROOT / "tests" / "integration"
    for item in items:
        if integration in Path(str(item.fspath)).parents:
            item.add_marker(pytest.mark.integration)
        if "spark" in getattr(item, "fixturenames", ()):
            item.add_marker(pytest.mark.spark)
    # tracing stays on once a test has traced (tests/tracemalloc_guard.py): those tests go last, in order
    items.sort(key=lambda item: item.get_closest_marker("traces_memory") is not None)


@pytest.hookimpl(wrapper=True)
def pytest_runtest_call(item):
    before = _tracemalloc_starts()
    result = yield
    if _tracemalloc_starts() != before and item.get_closest_marker("traces_memory") is None:
        pytest.fail("this test starts tracemalloc: mark it @pytest.mark.traces_memory so that it runs with "
                    "the other tracing tests at the end of the session (see tests/tracemalloc_guard.py)")
    return result
