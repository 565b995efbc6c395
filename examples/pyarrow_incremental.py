"""A pyarrow.parquet script in the Arrow cookbook's style: writing a file incrementally with
``ParquetWriter``, then reading it back in batches, row groups and columns.

    python examples/pyarrow_incremental.py                  # import pqbloom as pq
    PQ_IMPL=pyarrow python examples/pyarrow_incremental.py  # import pyarrow.parquet as pq

Each line is one call's result (``show``), so the two runs compare line by line
(tests/integration/test_pyarrow_scripts.py; the lines that differ on purpose are listed, with their
reasons, in docs/guide/pyarrow-compatibility.md).
"""

from __future__ import annotations

import os
import tempfile

import numpy as np
import pyarrow as pa

if os.environ.get("PQ_IMPL") == "pyarrow":
    import pyarrow.parquet as pq
else:
    import pqbloom as pq  # the only change a pyarrow.parquet user makes

from _script_calls import keep, show  # examples/_script_calls.py: one line per call

SCHEMA = pa.schema([
    ("id", pa.int64()),
    ("sensor", pa.string()),
    ("reading", pa.float64()),
    ("ok", pa.bool_()),
])


def readings(start: int, n: int) -> pa.RecordBatch:
    """``n`` readings from id ``start``: eight sensors, a reading, every seventh one flagged."""
    ids = np.arange(start, start + n)
    return pa.record_batch([
        pa.array(ids),
        pa.array([f"sensor-{i % 8}" for i in ids]),
        pa.array(ids * 0.25),
        pa.array(ids % 7 != 0),
    ], schema=SCHEMA)


def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "readings.parquet")

        # write incrementally: one row group per batch, then a table cut into row groups of 1000
        writer = keep("ParquetWriter(compression=)", lambda: pq.ParquetWriter(path, SCHEMA, compression="zstd"))
        for k in range(3):
            show(f"write_batch({k})", lambda k=k: writer.write_batch(readings(1000 * k, 1000)))
        show("write_table(row_group_size=1000)",
             lambda: writer.write_table(pa.Table.from_batches([readings(3000, 2000)]), row_group_size=1000))
        show("close()", writer.close)

        pf = keep("ParquetFile", lambda: pq.ParquetFile(path))
        show("num_row_groups", lambda: pf.num_row_groups)
        show("metadata.num_rows", lambda: pf.metadata.num_rows)
        show("row group sizes", lambda: [pf.metadata.row_group(i).num_rows for i in range(pf.num_row_groups)])
        show("schema_arrow", lambda: pf.schema_arrow)
        show("schema_arrow.names", lambda: pf.schema_arrow.names)

        # batches of exactly batch_size rows, across row groups
        show("iter_batches(1500) sizes", lambda: [b.num_rows for b in pf.iter_batches(batch_size=1500)])
        show("iter_batches(columns=) first ids",
             lambda: [b.column("id")[0].as_py() for b in pf.iter_batches(batch_size=2000, columns=["id"])])
        first = keep("first batch", lambda: next(pf.iter_batches(batch_size=5, columns=["id", "sensor", "reading"])))
        show("batch.num_rows", lambda: first.num_rows)
        show("batch.num_columns", lambda: first.num_columns)
        show("batch.schema.names", lambda: first.schema.names)
        show("batch.column_names", lambda: first.column_names)
        show("batch.to_pydict()", lambda: first.to_pydict())
        show("batch.to_pylist()[0]", lambda: first.to_pylist()[0])
        show("batch['reading'][3]", lambda: first["reading"][3])
        show("batch.column(1).to_pylist()", lambda: first.column(1).to_pylist())
        show("batch.to_pandas().shape", lambda: first.to_pandas().shape)
        show("batch.to_pandas() sum", lambda: float(first.to_pandas()["reading"].sum()))
        show("pa.table(batch).num_rows", lambda: pa.table(first).num_rows)
        show("pa.record_batch(batch).num_rows", lambda: pa.record_batch(first).num_rows)
        show("pa.Table.from_batches(batches).num_rows",
             lambda: pa.Table.from_batches(list(pf.iter_batches(batch_size=4000))).num_rows)
        show("len(batch)", lambda: len(first))
        show("batch.slice(1, 2).to_pydict()", lambda: first.slice(1, 2).to_pydict())

        # row groups and columns
        show("read_row_group(2).num_rows", lambda: pf.read_row_group(2).num_rows)
        show("read_row_group(2, columns=['id']) ids",
             lambda: pf.read_row_group(2, columns=["id"]).column("id").to_pylist()[:3])
        show("read_row_groups([0, 4]).num_rows", lambda: pf.read_row_groups([0, 4]).num_rows)
        show("read(columns=['sensor']).column_names", lambda: pf.read(columns=["sensor"]).column_names)
        show("scan_contents()", lambda: pf.scan_contents())
        show("scan_contents(['id'])", lambda: pf.scan_contents(["id"]))

        table = keep("read_table", lambda: pq.read_table(path))
        show("table.num_rows", lambda: table.num_rows)
        show("table.shape", lambda: table.shape)
        show("table.column('sensor')[9]", lambda: table.column("sensor")[9])
        show("table['id'][4999]", lambda: table["id"][4999])
        show("table.column('ok').null_count", lambda: table.column("ok").null_count)
        show("table.to_batches(max_chunksize=2000) sizes",
             lambda: [b.num_rows for b in table.to_batches(max_chunksize=2000)])
        show("table.slice(10, 3).to_pylist()", lambda: table.slice(10, 3).to_pylist())
        show("sort_by reading descending",
             lambda: table.sort_by([("reading", "descending")]).column("id").to_pylist()[:3])
        show("table.equals(read again)", lambda: table.equals(pq.read_table(path)))
        show("read_table(columns=, filters=) rows",
             lambda: pq.read_table(path, columns=["id"], filters=[("id", "<", 42)]).num_rows)

        # add to a file opened with the writer as a context manager, then the footer's metadata
        path2 = os.path.join(tmp, "two.parquet")
        with pq.ParquetWriter(path2, SCHEMA, compression="snappy") as w:
            w.write_table(pa.Table.from_batches([readings(0, 10)]))
            show("add_key_value_metadata", lambda: w.add_key_value_metadata({"origin": "sensors"}))
        show("metadata after add_key_value_metadata",
             lambda: pq.read_metadata(path2).metadata.get(b"origin"))
        show("ParquetFile(...).closed after with", lambda: _closed_after_with(path2))
        show("read_table(file object).num_rows", lambda: _read_file_object(path2))


def _closed_after_with(path: str) -> bool:
    with pq.ParquetFile(path) as f:
        f.read()
    return f.closed


def _read_file_object(path: str) -> int:
    with open(path, "rb") as fh:
        return pq.read_table(fh).num_rows


if __name__ == "__main__":
    main()
