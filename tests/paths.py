"""Where the tests find the repository and the shared fixtures: the one place these paths are computed.

Imported by ``tests/conftest.py`` and by any test (or helper run as a script) that needs a path, so
that moving a test file never changes what it reads.
"""

from __future__ import annotations

from pathlib import Path

#: the repository root (the directory holding pqbloom/, interop/, bench/, README.md)
ROOT = Path(__file__).resolve().parent.parent
#: the parquet-testing corpus (``../shared/fixtures/parquet-testing``; MANIFEST.md describes it)
FIXTURES = (ROOT / ".." / "shared" / "fixtures" / "parquet-testing").resolve()
#: its data files
FIXTURES_DATA = FIXTURES / "data"
#: the real-world corpus (``../shared/fixtures/real-world``; MANIFEST.md and FILES.tsv describe it)
REAL_WORLD = (ROOT / ".." / "shared" / "fixtures" / "real-world").resolve()
#: the committed peer-written golden files (interop/make_golden.py writes them)
GOLDEN = ROOT / "interop" / "golden"
