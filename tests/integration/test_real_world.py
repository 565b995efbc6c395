"""The standing real-world test: every file of ``../shared/fixtures/real-world`` (654 files from other
projects' test data, many writers) against pyarrow and DuckDB.

For every file (the work is in :mod:`tests.integration.real_world_support`, in two worker processes with a
per-file timeout and an address-space cap):

* pyarrow, DuckDB and pqbloom read it. Where pyarrow reads it, pqbloom's reading must equal pyarrow's
  via ``Table.to_arrow()`` (row counts, names, types up to the differences listed in
  ``ACCEPTED_TYPE_DIFFERENCES``, values NaN-aware) and via ``to_pylist()`` (Python values of the types
  pyarrow's ``as_py`` gives). Where both peers refuse it, pqbloom must raise a typed error from
  :mod:`pqbloom.errors`, within ``REFUSAL_SECONDS`` and ``REFUSAL_BYTES`` of traced allocation.
* What pqbloom read is written back with pqbloom, and so is pyarrow's Table; pyarrow and DuckDB read
  both files: the values equal pyarrow's reading of the original (and DuckDB's of the original or of
  pyarrow's own write of its Table), DuckDB sees the same types, and the footer carries the same
  annotations (logical and converted types, VARIANT groups) as the original (or as pyarrow writes them).
* Everything else is a listed decision below (``DECISIONS``): a file pqbloom refuses that a peer reads,
  one it reads that pyarrow refuses, one where pyarrow and DuckDB disagree. Each says why and states
  what is checked; a decision that no longer holds fails like any other difference.

Bloom filter probing of the corpus is in ``tests/integration/test_real_world_bloom.py``.
``python -m tests.integration.test_real_world`` prints the counts (``test_counts`` asserts them).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

import pytest

from tests.corpora import needs, params, require

from .real_world_support import CORPUS, REFUSAL_BYTES, REFUSAL_SECONDS, corpus_files, run_corpus

FILES = corpus_files()  # none without the corpus: the tests below are then skipped naming it
PATHS = [p for p, _, _ in FILES]
LISTING = CORPUS / "FILES.tsv"

#: Arrow type differences between pqbloom's ``to_arrow()`` and pyarrow that carry no information, so are
#: accepted (the values are compared all the same). They are applied by ``canon_type`` in the support module.
ACCEPTED_TYPE_DIFFERENCES = {
    "string / binary vs large_string / large_binary / *_view": "offset width only; pyarrow restores a large "
    "type from the Arrow schema a writer stored, pqbloom picks by size",
    "dictionary<values=T> vs T": "pyarrow restores dictionary encoding from a stored Arrow schema; the values "
    "are the same once decoded",
    "list / map child field names": "pyarrow and pqbloom both name them after the file's elements; only legacy "
    "forms differ in how they are named (element, array, item, <name>_tuple)",
    "ENUM as string vs binary": "pqbloom reads ENUM as text, as the spec says to (and DuckDB and Spark do); pyarrow "
    "as binary. Compared after decoding pyarrow's bytes as UTF-8",
}

#: Python values: pqbloom's ``to_pylist()`` gives what pyarrow's ``as_py`` gives, except these.
ACCEPTED_PYTHON_DIFFERENCES = {
    "text that is not UTF-8": "str with surrogate escapes, which encode back to the same bytes (pyarrow raises); "
    "compared as bytes",
    "ENUM": "str (pyarrow: bytes)",
}


@dataclass(frozen=True)
class Decision:
    """What pqbloom does with a file where the peers disagree or pqbloom departs from one, and why.

    ``outcome``: ``"as pyarrow"`` (pqbloom reads it equal to pyarrow; DuckDB refuses it with an error
    matching ``duckdb``), ``"as duckdb"`` (pyarrow refuses it with an error matching ``pyarrow``; pqbloom
    reads it equal to DuckDB), ``"refuse"`` (pqbloom raises ``error``, matching ``match``, though a peer reads
    it). ``accept`` lists problem patterns that are expected (and must all occur), with reasons in ``why``.
    ``writes_what_pyarrow_refuses``: pqbloom writes pyarrow's Table although pyarrow refuses to."""

    outcome: str
    why: str
    duckdb: str = ""
    pyarrow: str = ""
    error: str = ""
    match: str = ""
    accept: tuple[str, ...] = ()
    writes_what_pyarrow_refuses: bool = False


_DUCKDB_BAD_UTF8 = ("as pyarrow", "the STRING column holds bytes that are not UTF-8. DuckDB refuses the file; pyarrow "
                    "and pqbloom read the bytes as stored (to_arrow gives the same bytes as pyarrow; to_pylist "
                    "decodes with surrogate escapes, which encode back to those bytes). No guess is made about "
                    "what the bytes mean, and nothing is lost")

DECISIONS: dict[str, Decision] = {
    # -- pyarrow reads, DuckDB refuses: pyarrow is right
    "aloneguid-parquet-dotnet/src/Parquet.Test/data/decimals_with_precision_but_no_scale.parquet": Decision(
        "as pyarrow", "a legacy DECIMAL with a precision and no scale: the spec gives the scale a default of 0, "
        "as pyarrow reads it; DuckDB insists on a scale", duckdb="DECIMAL requires a length and scale"),
    "dask-fastparquet/test-data/no_columns.parquet": Decision(
        "as pyarrow", "rows without columns (issue #15, defect 4): the footer says 2 rows; DuckDB refuses a file "
        "without columns", duckdb="Need at least one non-root column"),
    "dask-fastparquet/test-data/no_columns_new.parquet": Decision(
        "as pyarrow", "as no_columns.parquet", duckdb="Need at least one non-root column"),
    "duckdb-duckdb/data/parquet-testing/empty-group/empty_group_test.parquet": Decision(
        "as pyarrow", "an empty group (issue #15, defect 9): a field without leaves reads as null in every row, as "
        "pyarrow reads it (no column chunk says anything about its rows); DuckDB has no empty STRUCT. pqbloom "
        "writes it back (pyarrow refuses to write a struct without fields): only nulls, which is all such a "
        "field can hold, and pyarrow reads the result equal to the original",
        duckdb="Not implemented Error: STRUCT", writes_what_pyarrow_refuses=True),
    "duckdb-duckdb/data/parquet-testing/invalid.parquet": Decision(
        _DUCKDB_BAD_UTF8[0], _DUCKDB_BAD_UTF8[1], duckdb="Invalid string encoding"),
    "duckdb-duckdb/data/parquet-testing/invalid_utf8_dba.parquet": Decision(
        _DUCKDB_BAD_UTF8[0], _DUCKDB_BAD_UTF8[1], duckdb="Invalid string encoding"),
    "duckdb-duckdb/data/parquet-testing/invalid_utf8_dictionary.parquet": Decision(
        _DUCKDB_BAD_UTF8[0], _DUCKDB_BAD_UTF8[1], duckdb="Invalid string encoding"),
    "duckdb-duckdb/data/parquet-testing/invalid_utf8_dlba.parquet": Decision(
        _DUCKDB_BAD_UTF8[0], _DUCKDB_BAD_UTF8[1], duckdb="Invalid string encoding"),
    "duckdb-duckdb/data/parquet-testing/variant_malicious.parquet": Decision(
        "as pyarrow", "a VARIANT whose value bytes are corrupt: DuckDB decodes variants and refuses; pyarrow and "
        "pqbloom read the group as a struct of its binary fields, which are stored soundly",
        duckdb="Data corruption detected"),
    # -- pyarrow refuses, DuckDB reads
    "duckdb-duckdb/data/parquet-testing/bigdecimal.parquet": Decision(
        "as duckdb", "DECIMAL(77, 38) on BYTE_ARRAY: Arrow's decimals stop at 76 digits, so pyarrow refuses the "
        "file and pqbloom's to_arrow() raises UnsupportedError; to_pylist() gives the exact Decimals. DuckDB reads "
        "a DECIMAL wider than 38 digits as DOUBLE: compared as the nearest doubles",
        pyarrow="Decimal precision out of range"),
    "duckdb-duckdb/data/parquet-testing/decimal/byte_array_decimal_empty_value.parquet": Decision(
        "as duckdb", "a DECIMAL value of zero bytes: pyarrow refuses it; DuckDB reads 0, which is what writers "
        "that encode 0 as no bytes mean (Go's big.Int.Bytes() does); pqbloom reads it as DuckDB does",
        pyarrow="Length of byte array passed to Decimal128::FromBigEndian was 0"),
    "duckdb-duckdb/data/parquet-testing/bug4903.parquet": Decision(
        "as pyarrow", "INT96 timestamps before 1677-09-21 (column dt3): int64 nanoseconds cannot hold them, and "
        "pyarrow's default silently wraps them to other instants (DuckDB reads them as microseconds). pqbloom "
        "reads the raw values (and writes them back as stored) but to_arrow() raises TimestampRangeError naming "
        "coerce_int96_timestamp_unit; with it set to 'us' pqbloom reads them equal to pyarrow's 'us' and to DuckDB "
        "(tests/integration/test_real_world_shapes.py)",
        accept=(r"to_arrow\(\): TimestampRangeError: column 'dt3'.*coerce_int96_timestamp_unit",)),
    "duckdb-duckdb/data/parquet-testing/bug13053-2.parquet": Decision(
        "refuse", "two top-level columns of one name: a table cannot hold both (pyarrow refuses the file too); "
        "DuckDB renames one", error="SchemaError", match="duplicate column name", pyarrow="Multiple matches"),
    # -- pqbloom's writing differs from what DuckDB read in the original
    "aloneguid-parquet-dotnet/src/Parquet.Test/data/issues/681_nested.parquet": Decision(
        "as pyarrow", "an unannotated repeated group of one field is, by LogicalTypes.md's backward-compatibility "
        "rules, a list of that group (a struct), as pyarrow reads it; DuckDB collapses it to a list of the field. "
        "pqbloom writes the list of structs in the standard form, which DuckDB then reads as such",
        accept=(r"write\(pqbloom Table\) read by DuckDB: DuckDB types .*\('data_group', 'STRUCT\(nested VARCHAR\)"
                r"\[\]'\).*expected .*\('data_group', 'VARCHAR\[\]'\)",)),
}


#: problems accepted wherever they occur: (name, predicate(problem, result), reason). None today: the
#: GeoParquet files, whose geometry DuckDB builds from the ``geo`` key-value metadata, used to need one
#: until the writer carried the metadata of a pyarrow Table.
ACCEPTED_PROBLEMS: list[tuple[str, Any, str]] = []


#: the counts this corpus gives today; any change must be looked at (and this updated)
EXPECTED_COUNTS = {
    "files": 654,
    "equal to pyarrow (read and both write-backs)": 590,
    "equal to pyarrow, where DuckDB refuses or differs (listed)": 11,
    "equal to DuckDB, where pyarrow refuses (listed)": 2,
    "typed refusals where both peers refuse": 50,
    "refused though a peer reads it (listed)": 1,
    "written back from the pqbloom Table and checked": 603,
    "written back from the pyarrow Table and checked": 601,
    "typed refusal classes": {"CorruptFileError": 44, "KeyNotFoundError": 6},
}


def _selected_paths(request: pytest.FixtureRequest) -> list[str]:
    """The files the selected tests need (all of them when the counts are asked for)."""
    chosen = set()
    for item in request.session.items:
        if item.module is not None and item.module.__name__ == __name__:
            callspec = getattr(item, "callspec", None)
            if callspec is not None and "path" in callspec.params:
                chosen.add(callspec.params["path"])  # None: the placeholder of an absent corpus
            elif "results" in getattr(item, "fixturenames", ()):
                return PATHS
    return [p for p in PATHS if p in chosen]


@pytest.fixture(scope="module")
def results(request: pytest.FixtureRequest) -> dict[str, dict[str, Any]]:
    require(LISTING)
    sizes = {p: (CORPUS / p).stat().st_size for p in PATHS}
    # largest first: the slowest files start early, so the two workers finish together
    return run_corpus(sorted(_selected_paths(request), key=lambda p: -sizes[p]))


def classify(r: dict[str, Any]) -> tuple[str, list[str], list[str]]:
    """(category, unexplained problems, accepted-problem names) of one file's result."""
    path = r["path"]
    d = DECISIONS.get(path)
    problems = list(r.get("problems", []))
    accepted: list[str] = []
    for name, pred, _ in ACCEPTED_PROBLEMS:
        hit = [p for p in problems if pred(p, r)]
        if hit:
            accepted.append(name)
            problems = [p for p in problems if p not in hit]
    errors: list[str] = []
    if r.get("crashed"):
        return "crashed", problems, accepted
    pa_reads, duck_reads, pq_reads = r["pyarrow"] == "reads", r["duckdb"] == "reads", r["pqbloom"] == "reads"
    if d is not None:
        for pat in d.accept:
            hit = [p for p in problems if re.search(pat, p)]
            if not hit:
                errors.append(f"decision expects a problem matching {pat!r}; there is none")
            problems = [p for p in problems if p not in hit]
        if d.duckdb and (duck_reads or not re.search(d.duckdb, r["duckdb"])):
            errors.append(f"decision expects DuckDB to refuse with {d.duckdb!r}; DuckDB: {r['duckdb']}")
        if d.pyarrow and (pa_reads or not re.search(d.pyarrow, r["pyarrow"])):
            errors.append(f"decision expects pyarrow to refuse with {d.pyarrow!r}; pyarrow: {r['pyarrow']}")
        if d.writes_what_pyarrow_refuses != bool(r.get("writes_what_pyarrow_refuses")):
            errors.append(f"decision says pqbloom writes what pyarrow refuses to write: {d.writes_what_pyarrow_refuses}")
        if d.outcome == "refuse":
            if pq_reads or r.get("error") != d.error or not re.search(d.match, r["pqbloom"]):
                errors.append(f"decision expects {d.error} matching {d.match!r}; pqbloom: {r['pqbloom']}")
            category = "refused though a peer reads it (listed)"
        elif d.outcome == "as pyarrow":
            if not (pa_reads and pq_reads and r.get("oracle") == "pyarrow"):
                errors.append(f"decision expects pqbloom to read it as pyarrow; pqbloom: {r['pqbloom']}")
            category = "equal to pyarrow, where DuckDB refuses or differs (listed)"
        elif d.outcome == "as duckdb":
            if not (duck_reads and pq_reads and r.get("oracle") == "duckdb"):
                errors.append(f"decision expects pqbloom to read it as DuckDB; pqbloom: {r['pqbloom']}")
            category = "equal to DuckDB, where pyarrow refuses (listed)"
        else:
            errors.append(f"unknown decision outcome {d.outcome!r}")
            category = "?"
        return category, errors + problems, accepted
    if r.get("writes_what_pyarrow_refuses"):
        errors.append("pqbloom writes pyarrow's Table where pyarrow refuses to: needs a listed decision")
    if pa_reads:
        if not pq_reads:
            errors.append(f"pyarrow reads it, pqbloom refuses: {r['pqbloom']}")
        if not duck_reads:
            errors.append(f"pyarrow reads it, DuckDB refuses ({r['duckdb']}): needs a listed decision")
        return "equal to pyarrow (read and both write-backs)", errors + problems, accepted
    if duck_reads:
        errors.append(f"pyarrow refuses it ({r['pyarrow']}), DuckDB reads it: needs a listed decision")
        return "?", errors + problems, accepted
    # both peers refuse: a typed error, quickly, with bounded memory
    if pq_reads:
        errors.append("both peers refuse it, pqbloom reads it: needs a listed decision")
    elif r.get("error") == "UNTYPED":
        errors.append(f"untyped error: {r['pqbloom']}")
    if r.get("seconds", 0) > REFUSAL_SECONDS:
        errors.append(f"the refusal took {r['seconds']} s")
    if r.get("peak_bytes", 0) > REFUSAL_BYTES:
        errors.append(f"the refusal traced {r['peak_bytes']:,} bytes")
    return "typed refusals where both peers refuse", errors + problems, accepted


@pytest.mark.parametrize("path", params(PATHS, LISTING))
def test_file(path: str, results: dict[str, dict[str, Any]]) -> None:
    r = results[path]
    _, problems, _ = classify(r)
    assert not problems, f"{path}:\n  " + "\n  ".join(problems) + (
        f"\n  (pyarrow: {r.get('pyarrow')}; DuckDB: {r.get('duckdb')}; pqbloom: {r.get('pqbloom')})")


def summarize(results: dict[str, dict[str, Any]]) -> dict[str, Any]:
    counts: dict[str, Any] = {"files": len(results)}
    errors: dict[str, int] = {}
    for r in results.values():
        category, _, accepted = classify(r)
        counts[category] = counts.get(category, 0) + 1
        for name in accepted:
            counts[f"accepted: {name}"] = counts.get(f"accepted: {name}", 0) + 1
        if category == "typed refusals where both peers refuse":
            errors[r.get("error", "?")] = errors.get(r.get("error", "?"), 0) + 1
        if r.get("pqbloom") == "reads" and not r.get("write_error"):
            key = "written back from the pqbloom Table and checked"
            counts[key] = counts.get(key, 0) + 1
        if r.get("pyarrow") == "reads" and not r.get("arrow_write_error"):
            key = "written back from the pyarrow Table and checked"
            counts[key] = counts.get(key, 0) + 1
    counts["typed refusal classes"] = dict(sorted(errors.items()))
    return counts


def test_counts(results: dict[str, dict[str, Any]]) -> None:
    counts = summarize(results)
    print("\nreal-world corpus:", counts)
    assert counts == EXPECTED_COUNTS, counts


def test_pool_turns_hangs_and_blowups_into_failures_naming_the_file() -> None:
    """The worker pool itself: a check that hangs is killed at the timeout, one that allocates without
    end stops at the address-space cap, one that kills its process is reported; the others still run."""
    res = run_corpus(["hang", "grow", "abort", "clean-1", "clean-2"], check="selftest_check", timeout=5,
                     mem_bytes=2 << 30)
    assert res["hang"]["problems"] == ["check timed out after 5 s"]
    assert res["grow"]["problems"][0].startswith("check crashed: MemoryError")
    assert res["abort"]["problems"][0].startswith("check worker died (exit code -6)")
    assert res["clean-1"]["problems"] == res["clean-2"]["problems"] == []


@needs(LISTING)
def test_decisions_name_corpus_files() -> None:
    assert len(FILES) == EXPECTED_COUNTS["files"]
    assert set(DECISIONS) <= set(PATHS), sorted(set(DECISIONS) - set(PATHS))


if __name__ == "__main__":
    import json
    import sys
    import time

    t0 = time.monotonic()
    res = run_corpus(PATHS)
    print(json.dumps(summarize(res), indent=1))
    print("typed refusals and listed decisions:")
    for p in PATHS:
        r = res[p]
        if r.get("pqbloom") != "reads" or p in DECISIONS:
            print(f"  {p}: {r.get('pqbloom')}" + (f" [decision: {DECISIONS[p].outcome}]" if p in DECISIONS else ""))
    bad = {p: classify(r)[1] for p, r in res.items() if classify(r)[1]}
    print("unexplained differences:", json.dumps(bad, indent=1))
    print(f"{len(res)} files in {time.monotonic() - t0:.0f} s", file=sys.stderr)
