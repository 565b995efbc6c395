"""A pyarrow.parquet script in the Arrow cookbook's style: a Hive-partitioned dataset written with
``write_to_dataset``, read with ``ParquetDataset`` and ``read_table`` (columns, DNF filters and
``pyarrow.compute`` expressions), and its ``_common_metadata`` / ``_metadata`` files.

    python examples/pyarrow_datasets.py                  # import pqbloom as pq
    PQ_IMPL=pyarrow python examples/pyarrow_datasets.py  # import pyarrow.parquet as pq

Each line is one call's result (``show``), so the two runs compare line by line
(tests/integration/test_pyarrow_scripts.py; the lines that differ on purpose are listed, with their
reasons, in docs/guide/pyarrow-compatibility.md).
"""

from __future__ import annotations

import datetime as dt
import os
import tempfile
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc

if os.environ.get("PQ_IMPL") == "pyarrow":
    import pyarrow.parquet as pq
else:
    import pqbloom as pq  # the only change a pyarrow.parquet user makes

from _script_calls import keep, show  # examples/_script_calls.py: one line per call


def sales() -> pa.Table:
    """A year of daily sales in three regions."""
    days = [dt.date(2024, 1, 1) + dt.timedelta(days=i) for i in range(360)]
    n = len(days) * 3
    return pa.table({
        "day": pa.array([d for d in days for _ in range(3)], pa.date32()),
        "region": pa.array(["north", "south", "west"] * len(days)),
        "year": pa.array([2023 + (i // 540) for i in range(n)], pa.int32()),
        "units": pa.array([(i * 37) % 101 for i in range(n)], pa.int64()),
        "price": pa.array([round(1 + (i % 13) * 0.5, 2) for i in range(n)], pa.float64()),
        "note": pa.array([None if i % 10 else f"promo {i}" for i in range(n)]),
    })


def rel(paths: list[str], root: str) -> list[str]:
    return sorted(os.path.relpath(p, root).replace(os.sep, "/").rsplit("/", 1)[0] for p in paths)


def main() -> None:
    table = sales()
    with tempfile.TemporaryDirectory() as tmp:
        root = os.path.join(tmp, "sales")
        collector: list[Any] = []
        show("write_to_dataset(partition_cols=)", lambda: pq.write_to_dataset(
            table, root, partition_cols=["year", "region"], basename_template="part-{i}.parquet",
            metadata_collector=collector))
        show("partition directories", lambda: sorted(os.listdir(root)))
        show("metadata_collector rows", lambda: sorted(md.num_rows for md in collector))
        show("metadata_collector file paths",
             lambda: sorted(md.row_group(0).column(0).file_path for md in collector))

        ds = keep("ParquetDataset(root)", lambda: pq.ParquetDataset(root))
        show("ParquetDataset.files", lambda: rel(ds.files, root))
        show("ParquetDataset.schema.names", lambda: ds.schema.names)
        show("ParquetDataset.schema day type", lambda: ds.schema.field("day").type)
        whole = keep("ParquetDataset.read()", lambda: ds.read())
        show("read().num_rows", lambda: whole.num_rows)
        show("read().column_names", lambda: whole.column_names)
        show("read(columns=).column_names", lambda: ds.read(columns=["units", "region"]).column_names)
        show("read() units total", lambda: sum(whole.column("units").to_pylist()))
        show("read() south rows", lambda: whole.column("region").to_pylist().count("south"))

        filtered = keep("ParquetDataset(filters=)", lambda: pq.ParquetDataset(
            root, filters=[("region", "=", "west"), ("units", ">", 90)]))
        show("ParquetDataset(filters=).read().num_rows", lambda: filtered.read().num_rows)
        show("ParquetDataset(filters=) files", lambda: len(filtered.files))

        # read_table on the directory: DNF lists and pyarrow.compute expressions
        show("read_table(dir).num_rows", lambda: pq.read_table(root).num_rows)
        show("read_table(partitioning='hive').column_names",
             lambda: pq.read_table(root, partitioning="hive").column_names)
        show("read_table(partitioning=None).column_names",
             lambda: pq.read_table(root, partitioning=None).column_names)
        show("filters DNF OR", lambda: pq.read_table(
            root, filters=[[("units", ">=", 99)], [("price", "=", 7.0), ("region", "in", ["north"])]]).num_rows)
        show("filters expression ==", lambda: pq.read_table(root, filters=pc.field("region") == "south").num_rows)
        show("filters expression & |", lambda: pq.read_table(
            root, filters=(pc.field("units") < 5) & ((pc.field("year") == 2024) | (pc.field("price") > 6.5))).num_rows)
        show("filters expression isin", lambda: pq.read_table(
            root, filters=pc.field("units").isin([1, 2, 3]), columns=["units"]).column("units").to_pylist()[:5])
        show("filters expression is_null", lambda: pq.read_table(root, filters=pc.field("note").is_null()).num_rows)
        show("filters expression is_valid", lambda: pq.read_table(root, filters=pc.field("note").is_valid()).num_rows)
        show("filters expression ~ !=", lambda: pq.read_table(
            root, filters=~(pc.field("region") != "west") & (pc.field("day") <= dt.date(2024, 1, 31))).num_rows)
        show("filters expression on partition only",
             lambda: pq.read_table(root, filters=pc.field("year") > 2023, columns=["day"]).num_rows)

        # _common_metadata and _metadata, as the cookbook writes them beside the data
        show("write_metadata(_common_metadata)",
             lambda: pq.write_metadata(table.schema, os.path.join(root, "_common_metadata")))
        show("write_metadata(_metadata, metadata_collector=)", lambda: pq.write_metadata(
            table.drop_columns(["year", "region"]).schema, os.path.join(root, "_metadata"), metadata_collector=collector))
        common = keep("read_metadata(_common_metadata)", lambda: pq.read_metadata(os.path.join(root, "_common_metadata")))
        show("_common_metadata num_row_groups", lambda: common.num_row_groups)
        show("_common_metadata num_columns", lambda: common.num_columns)
        show("read_schema(_common_metadata).names", lambda: pq.read_schema(os.path.join(root, "_common_metadata")).names)
        full = keep("read_metadata(_metadata)", lambda: pq.read_metadata(os.path.join(root, "_metadata")))
        show("_metadata num_rows", lambda: full.num_rows)
        show("_metadata num_row_groups", lambda: full.num_row_groups)
        show("_metadata file paths", lambda: sorted(full.row_group(i).column(0).file_path for i in range(6)))
        show("_metadata schema names", lambda: full.schema.names)
        show("dataset still reads (hidden files skipped)", lambda: pq.read_table(root).num_rows)

        # a second dataset without partitions, and a list of files
        flat = os.path.join(tmp, "flat")
        show("write_to_dataset(no partitions)", lambda: pq.write_to_dataset(table, flat))
        show("read_table(list of files).num_rows", lambda: pq.read_table(
            [os.path.join(flat, f) for f in os.listdir(flat)], columns=["units"]).num_rows)
        show("ParquetDataset(flat).read(columns=).num_columns",
             lambda: pq.ParquetDataset(flat).read(columns=["day", "units"]).num_columns)
        show("existing_data_behavior='error'", lambda: pq.write_to_dataset(
            table, flat, existing_data_behavior="error"))


if __name__ == "__main__":
    main()
