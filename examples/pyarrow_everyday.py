"""A pyarrow.parquet script of everyday calls, written after the other examples to check them on calls
they do not make: files in memory and file objects, nested and decimal columns, time zones, filters on
dates and decimals, a table's column edits, a DataFrame's index, metadata printed as it is.

    python examples/pyarrow_everyday.py                  # import pqbloom as pq
    PQ_IMPL=pyarrow python examples/pyarrow_everyday.py  # import pyarrow.parquet as pq

Each line is one call's result (``show``), so the two runs compare line by line
(tests/integration/test_pyarrow_scripts.py; the lines that differ on purpose are listed, with their
reasons, in docs/guide/pyarrow-compatibility.md).
"""

from __future__ import annotations

import datetime as dt
import decimal
import io
import os
import tempfile
from typing import Any

import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

if os.environ.get("PQ_IMPL") == "pyarrow":
    import pyarrow.parquet as pq
else:
    import pqbloom as pq  # the only change a pyarrow.parquet user makes

from _script_calls import show  # examples/_script_calls.py: one line per call


def body(obj: Any) -> list[str]:
    """What ``print(obj)`` shows, its first line (``<module.Class object at 0x...>``) left out."""
    return str(obj).split("\n")[1:]


def orders() -> pa.Table:
    """Ten orders: an id, a status, an amount (decimal), when (UTC), a day, tags and a point."""
    n = 10
    return pa.table({
        "id": pa.array(range(n), pa.int32()),
        "status": [("new", "paid", "sent")[i % 3] for i in range(n)],
        "amount": pa.array([decimal.Decimal(f"{i * 3}.25") if i % 4 else None for i in range(n)],
                           pa.decimal128(9, 2)),
        "at": pa.array([dt.datetime(2024, 1, 1, i, tzinfo=dt.timezone.utc) for i in range(n)],
                       pa.timestamp("ms", "UTC")),
        "day": pa.array([dt.date(2024, 1, 1 + i) for i in range(n)]),
        "tags": pa.array([["a"] * (i % 3) if i != 5 else None for i in range(n)], pa.list_(pa.string())),
        "pt": pa.array([{"x": i, "y": i * 0.5} for i in range(n)]),
    })


def main() -> None:
    table = orders()
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "orders.parquet")
        pq.write_table(table, path, row_group_size=4, compression="gzip")
        r = pq.read_table(path)
        show("read_table equals", lambda: r.equals(table))
        show("schema == written schema", lambda: r.schema == table.schema)
        show("schema.to_string()", lambda: pq.read_schema(path).to_string())
        show("to_pylist()[1]", lambda: r.to_pylist()[1])
        show("to_pandas dtypes", lambda: dict(r.to_pandas().dtypes.astype(str)))
        show("to_pandas equals pyarrow's frame", lambda: r.to_pandas().drop(columns=["tags"]).equals(
            table.to_pandas().drop(columns=["tags"])))
        show("to_pandas tags cell", lambda: type(r.to_pandas()["tags"][1]).__name__)
        show("read columns", lambda: pq.read_table(path, columns=["id", "amount"]).column_names)
        show("read a struct member", lambda: pq.read_table(path, columns=["pt.x"]).column_names)
        show("read_table(use_threads=False)", lambda: pq.read_table(path, use_threads=False).num_rows)

        pf = pq.ParquetFile(path)
        show("num_row_groups", lambda: pf.num_row_groups)
        show("schema_arrow", lambda: pf.schema_arrow)
        show("schema.names", lambda: pf.schema.names)
        show("read_row_group(1).num_rows", lambda: pf.read_row_group(1).num_rows)
        show("read_row_group(1, columns=)", lambda: pf.read_row_group(1, columns=["status"]).to_pydict())
        show("read_row_groups([0, 2])", lambda: pf.read_row_groups([0, 2]).num_rows)
        show("read(columns=)", lambda: pf.read(columns=["status"]).num_columns)
        show("iter_batches(batch_size=3, columns=)",
             lambda: [b.num_rows for b in pf.iter_batches(batch_size=3, columns=["id"])])
        show("iter_batches(row_groups=[0])",
             lambda: [b.num_rows for b in pf.iter_batches(batch_size=3, row_groups=[0])])
        show("first batch to_pandas shape", lambda: next(pf.iter_batches(batch_size=3)).to_pandas().shape)

        md = pq.read_metadata(path)
        show("print(metadata) members", lambda: [line.split(":")[0] for line in body(md)])
        show("print(row_group(0)) members", lambda: [line.split(":")[0] for line in body(md.row_group(0))])
        show("row_group(0) num_rows, sorting_columns",
             lambda: (md.row_group(0).num_rows, md.row_group(0).sorting_columns))
        show("print(statistics)", lambda: body(md.row_group(0).column(2).statistics))
        show("compression", lambda: md.row_group(0).column(0).compression)
        show("amount min, max", lambda: (md.row_group(0).column(2).statistics.min,
                                         md.row_group(0).column(2).statistics.max))
        show("at min", lambda: md.row_group(0).column(3).statistics.min)
        show("day max", lambda: md.row_group(1).column(4).statistics.max)
        show("null_count", lambda: md.row_group(0).column(2).statistics.null_count)
        show("tags path_in_schema", lambda: md.row_group(0).column(5).path_in_schema)
        show("pt paths", lambda: [md.row_group(0).column(j).path_in_schema for j in (6, 7)])
        show("num_columns (leaves)", lambda: md.num_columns)

        show("filter ==", lambda: pq.read_table(path, filters=[("status", "==", "paid")]).num_rows)
        show("filter in", lambda: pq.read_table(path, filters=[("status", "in", {"new", "sent"})]).num_rows)
        show("filter timestamp", lambda: pq.read_table(
            path, filters=[("at", ">=", pd.Timestamp("2024-01-01 05:00", tz="UTC"))]).num_rows)
        show("filter date", lambda: pq.read_table(path, filters=[("day", "<", dt.date(2024, 1, 4))]).num_rows)
        show("filter decimal", lambda: pq.read_table(
            path, filters=[("amount", ">", decimal.Decimal("10"))])["id"].to_pylist())
        show("filter expression", lambda: pq.read_table(
            path, filters=(pc.field("id") > 2) & (pc.field("status") != "new")).num_rows)
        show("filter nothing", lambda: pq.read_table(path, filters=[("id", ">", 100)]).num_rows)

        show("append_column", lambda: r.append_column("one", pa.array([1] * 10)).column_names)
        show("add_column", lambda: r.add_column(0, "one", pa.array([1] * 10)).schema.field("one").type)
        show("set_column", lambda: r.set_column(0, "id2", pa.array(range(10, 20))).column("id2").to_pylist()[:3])
        show("remove_column", lambda: r.remove_column(1).column_names)
        show("replace_schema_metadata", lambda: r.replace_schema_metadata({"k": "v"}).schema.metadata)
        show("drop_null rows", lambda: r.drop_null().num_rows)
        show("column num_chunks", lambda: pq.read_table(path, columns=["id"]).column("id").num_chunks)
        show("pt[3].as_py()", lambda: r.column("pt")[3].as_py())
        show("take", lambda: r.take([0, 9])["status"].to_pylist())

        buf = io.BytesIO()
        pq.write_table(table, buf)
        show("read BytesIO", lambda: pq.read_table(io.BytesIO(buf.getvalue())).num_rows)
        show("read BufferReader", lambda: pq.read_table(pa.BufferReader(buf.getvalue())).num_rows)
        show("ParquetFile(open file)", lambda: _rows_of_open_file(path))

        frame = pd.DataFrame({"x": [1.5, None, 3.0], "y": ["a", "b", None]}, index=pd.Index([7, 8, 9], name="k"))
        fpath = os.path.join(tmp, "frame.parquet")
        pq.write_table(pa.Table.from_pandas(frame), fpath)
        show("read_pandas index", lambda: pq.read_pandas(fpath).to_pandas().index.tolist())
        show("DataFrame round trip", lambda: pq.read_table(fpath).to_pandas().equals(frame))
        frame.to_parquet(os.path.join(tmp, "pandas.parquet"))
        show("pandas-written columns", lambda: pq.read_table(os.path.join(tmp, "pandas.parquet")).column_names)

        kpath = os.path.join(tmp, "dict.parquet")
        pq.write_table(pa.table({"k": ["a", "b"] * 5}), kpath, use_dictionary=["k"])
        show("use_dictionary encodings", lambda: pq.read_metadata(kpath).row_group(0).column(0).encodings)
        show("read_dictionary column type", lambda: pq.read_table(kpath, read_dictionary=["k"]).column("k").type)
        show("read_dictionary schema type",
             lambda: pq.read_table(kpath, read_dictionary=["k"]).schema.field("k").type)

        with pq.ParquetWriter(os.path.join(tmp, "w.parquet"), table.schema) as w:
            for batch in table.to_batches(max_chunksize=4):
                w.write_batch(batch)
        show("write_batch row groups", lambda: pq.read_metadata(os.path.join(tmp, "w.parquet")).num_row_groups)

        root = os.path.join(tmp, "by_status")
        pq.write_to_dataset(table.select(["id", "status"]), root, partition_cols=["status"])
        show("dataset directories", lambda: sorted(os.listdir(root)))
        show("dataset read columns", lambda: pq.read_table(root).column_names)
        show("dataset filter", lambda: pq.read_table(root, filters=[("status", "=", "sent")]).num_rows)
        show("dataset ids", lambda: sorted(pq.read_table(root)["id"].to_pylist()))
        show("ParquetDataset read(columns=)", lambda: pq.ParquetDataset(root).read(columns=["id"]).num_rows)


def _rows_of_open_file(path: str) -> int:
    with open(path, "rb") as fh:
        return pq.ParquetFile(fh).metadata.num_rows


if __name__ == "__main__":
    main()
