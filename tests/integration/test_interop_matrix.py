"""The whole interop matrix (interop/matrix.py) in CI: writer x reader x feature, pqbloom on one side.

Runs every feature against pyarrow, Spark (parquet-java) and DuckDB in both directions plus the
parquet-testing corpus, renders the Markdown matrix (to a scratch directory), and asserts that every cell pqbloom takes part in
is green, a documented peer limitation (with its reason) or not applicable -- except the known
pqbloom bugs listed below, which the matrix shows in red until they are fixed.
"""

from __future__ import annotations

import pytest

from interop import cases as C
from interop import matrix as M
from tests.corpora import needs

pytestmark = pytest.mark.spark

# (feature, writer, reader) cells that are red because of known pqbloom bugs; each entry names the bug.
# An entry whose cell turns green is reported so it can be removed.
DECIMAL_38 = "pqbloom rounds DECIMAL values to 28 significant digits (default decimal context) on write and read"
KNOWN_BUGS: dict = {}


@pytest.fixture(scope="module")
def report(spark, tmp_path_factory):
    # the spark fixture: a missing Spark is a failure here, not a skipped column
    return M.run_matrix(tmp_path_factory.mktemp("interop"), use_spark=True, log=lambda s: None)


def test_every_feature_has_all_seven_cells(report):
    ids = [c.id for c in C.all_cases()]
    assert len(ids) == len(set(ids))
    got = {(c.case, c.writer, c.reader) for c in report.cells}
    assert got == {(i, w, r) for i in ids for w, r in M.CELL_ORDER}
    groups = {c.group for c in C.all_cases()}
    assert {"types", "codecs", "encodings", "bloom", "index", "encryption"} <= groups


def test_every_pqbloom_cell_is_green_or_a_documented_limitation(report):
    bad = []
    for c in report.cells:
        key = (c.case, c.writer, c.reader)
        if c.status == M.OK:
            continue
        if c.status in (M.LIMIT, M.NA):
            # the reason is declared with the feature, never an ad-hoc failure text
            case = next(x for x in report.cases if x.id == c.case)
            declared = set(case.writer_limits.values()) | set(case.reader_limits.values())
            if c.note in declared:
                continue
        if c.status == M.RED and key in KNOWN_BUGS:
            continue
        bad.append(f"{c.case}: {M.NAMES[c.writer]} -> {M.NAMES[c.reader]}: {c.status}: {c.note}")
    assert not bad, "\n".join(bad)


def test_known_bugs_are_still_red(report):
    by = {(c.case, c.writer, c.reader): c for c in report.cells}
    fixed = [k for k in KNOWN_BUGS if by[k].status != M.RED]
    if fixed:
        pytest.fail(f"known pqbloom bugs no longer red, remove them from KNOWN_BUGS: {fixed}")


def test_green_cells_show_their_evidence(report):
    by = {(c.case, c.writer, c.reader): c for c in report.cells}
    for case in report.cases:
        if not (case.bloom or case.page_index or case.stats):
            continue
        for (w, r), word in {("pqbloom", "spark"): "numOutputRows", ("pqbloom", "pqbloom"): "",
                             ("pqbloom", "duckdb"): ""}.items():
            c = by[(case.id, w, r)]
            if c.status == M.OK:
                assert c.evidence and word in c.evidence, (case.id, w, r, c.evidence)
    bloom_cells = [c for c in report.cells if c.case.startswith("bloom:") and c.status == M.OK]
    assert any(c.reader == "duckdb" and "parquet_bloom_probe" in c.evidence for c in bloom_cells)
    assert any(c.reader == "spark" and "numOutputRows 0" in c.evidence for c in bloom_cells)


@needs(M.FIXTURES)
def test_fixture_corpus(report):
    assert len(report.fixtures) >= 90
    red = [f"{f.path}: {f.note}" for f in report.fixtures if f.status == M.RED]
    assert not red, "\n".join(red)
    for f in report.fixtures:
        assert f.status in (M.OK, M.NA, M.NOT_YET, M.SKIP), f
        if f.status == M.NOT_YET:
            assert f.note.startswith("pqbloom: not yet (nested)"), f
        if f.status != M.OK:
            assert f.note, f


def test_matrix_markdown_written(report, tmp_path):
    # rendered into a scratch directory: the committed interop/MATRIX.md changes only through
    # `python -m interop`, never as a side effect of running the tests
    text = M.write_markdown(report, tmp_path / "MATRIX.md").read_text()
    assert "| feature |" in text and "parquet-testing corpus" in text
    assert text.count("\n| `") >= len(report.cases)
