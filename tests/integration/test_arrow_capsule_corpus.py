"""Every parquet-testing file pqbloom reads into Arrow: pyarrow, polars and DuckDB consume the table through the
Arrow PyCapsule interface and get what they get from ``to_arrow()`` (types, values and schema metadata)."""

from __future__ import annotations

import duckdb
import polars as pl
import pyarrow as pa
import pytest

import pqbloom
from pqbloom.errors import ParquetError
from tests.corpora import needs, params
from tests.paths import FIXTURES

pytestmark = needs(FIXTURES)

FILES = params(sorted(p.name for p in (FIXTURES / "data").glob("*.parquet")), FIXTURES)
# too large for a test run (two 1 GiB map keys): not parametrized (test_core_fixtures reads it)
HEAVY = ["large_string_map.brotli.parquet"]
# the files pqbloom refuses (typed) rather than read into Arrow; test_core_fixtures gives each one's reason
REFUSED = ["datapage_v1-corrupt-checksum.parquet", "int96_from_spark.parquet",
           "rle-dict-uncompressed-corrupt-checksum.parquet"]


def _same(got: pa.Table, want: pa.Table) -> bool:
    """Equal, NaN equal to NaN (pyarrow's equals says NaN differs from itself)."""
    if want.equals(want):
        return got.equals(want)
    return got.schema.equals(want.schema) and repr(got.to_pydict()) == repr(want.to_pydict())


@pytest.mark.parametrize("name", REFUSED)
def test_files_pqbloom_refuses_stay_refused(name):
    # no table to export: a typed refusal (test_core_fixtures says why for each)
    with pytest.raises(ParquetError):
        pqbloom.read_table(FIXTURES / "data" / name).to_arrow()


@pytest.mark.parametrize("name", [f for f in FILES if f not in REFUSED + HEAVY])
def test_consumers_get_to_arrow_through_the_capsule_interface(name):
    t = pqbloom.read_table(FIXTURES / "data" / name)
    ref = t.to_arrow()
    got = pa.table(t)
    assert got.schema.equals(ref.schema, check_metadata=True)
    assert _same(got, ref)
    try:
        want_pl = pl.from_arrow(ref)
    except Exception:  # noqa: BLE001 - a type polars refuses from pyarrow too
        want_pl = None
    if want_pl is not None:
        got_pl = pl.DataFrame(t)
        assert got_pl.schema == want_pl.schema and got_pl.equals(want_pl, null_equal=True)
    try:
        want_dd = duckdb.sql("select * from ref").fetchall()
    except duckdb.Error:  # a type DuckDB refuses from pyarrow too
        return
    assert repr(duckdb.sql("select * from t").fetchall()) == repr(want_dd)
