"""UTC-adjusted timestamps come back in ``zoneinfo.ZoneInfo("UTC")``, as pyarrow gives them (rows and
statistics), so what a script prints of them is pyarrow's."""

from __future__ import annotations

import datetime as dt

import pyarrow as pa
import pyarrow.parquet as papq

import pqbloom


def test_utc_timestamps_are_pyarrows_values_with_pyarrows_tzinfo(tmp_path):
    p = tmp_path / "t.parquet"
    vals = [dt.datetime(2024, 1, d, 12, tzinfo=dt.timezone.utc) for d in (1, 2)] + [None]
    papq.write_table(pa.table({"ms": pa.array(vals, pa.timestamp("ms", "UTC")),
                               "us": pa.array(vals, pa.timestamp("us", "UTC"))}), p)
    theirs = papq.read_table(p)
    ours = pqbloom.read_table(p)
    for name in ("ms", "us"):
        assert repr(ours.column(name).to_pylist()) == repr(theirs.column(name).to_pylist())
    j = 1
    st, pst = pqbloom.read_metadata(p).row_group(0).column(j).statistics, \
        papq.read_metadata(p).row_group(0).column(j).statistics
    assert repr((st.min, st.max)) == repr((pst.min, pst.max))
