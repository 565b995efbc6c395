"""A pyarrow.parquet user's script that runs on pqbloom by changing only the import.

    python examples/pyarrow_compat.py                 # import pqbloom as pq
    PQ_IMPL=pyarrow python examples/pyarrow_compat.py # import pyarrow.parquet as pq

Both runs print the same lines (tests/integration/test_example_pyarrow_compat.py checks it). The data
is built with pyarrow, as such a user has it; each run writes its own file with its ``pq`` and reads it
back: ``write_table``, ``ParquetFile`` (``metadata`` down to a column chunk's statistics,
``schema_arrow``, ``read_row_groups``, ``iter_batches(row_groups=)``) and
``read_table(columns=, filters=, use_threads=)``, writer options (``compression_level``,
``version``, ``sorting_columns``), ``write_to_dataset(partition_cols=)`` and reading a directory or
a list of files back. Only what both libraries answer alike is printed
(not the writer's name, physical types, byte sizes or encodings, which differ between writers).
"""

from __future__ import annotations

import datetime as dt
import decimal
import os
import tempfile

import pyarrow as pa

if os.environ.get("PQ_IMPL") == "pyarrow":
    import pyarrow.parquet as pq
else:
    import pqbloom as pq  # the only change a pyarrow.parquet user makes


def make_table(n: int = 1000) -> pa.Table:
    """Orders: ids, customers, UTC timestamps, prices, dates, and a few nulls."""
    start = dt.datetime(2024, 1, 1, tzinfo=dt.timezone.utc)
    return pa.table({
        "id": pa.array(range(n), pa.int64()),
        "customer": pa.array([None if i % 50 == 0 else f"cust{i % 97:03d}" for i in range(n)]),
        "ts": pa.array([start + dt.timedelta(minutes=7 * i) for i in range(n)], pa.timestamp("us", tz="UTC")),
        "price": pa.array([decimal.Decimal(i % 1000) / 4 for i in range(n)], pa.decimal128(9, 2)),
        "day": pa.array([dt.date(2024, 1, 1) + dt.timedelta(days=i // 100) for i in range(n)], pa.date32()),
    })


def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "orders.parquet")
        pq.write_table(make_table(), path, row_group_size=250, compression="zstd",
                       bloom_filter_options={"id": {"ndv": 1000, "fpp": 0.01}})

        pf = pq.ParquetFile(path)
        md = pf.metadata
        print("rows, row groups, columns:", md.num_rows, md.num_row_groups, md.num_columns)
        rg = md.row_group(0)
        print("row group 0:", rg.num_rows, "rows")
        for j in range(rg.num_columns):
            col = rg.column(j)
            st = col.statistics
            # str(), not repr(): the two name UTC with different tzinfo objects
            print(f"  {col.path_in_schema}: {col.compression}, min={st.min} max={st.max} "
                  f"({type(st.min).__name__}), nulls={st.null_count}, values={st.num_values}")
        print("id has a Bloom filter:", rg.column(0).bloom_filter_offset is not None)
        print("statistics.min of the first chunk:", pf.metadata.row_group(0).column(0).statistics.min)

        print("schema_arrow:")
        print(pf.schema_arrow)

        t = pf.read_row_groups([1, 3], columns=["id", "customer"])
        print("read_row_groups([1, 3]):", t.num_rows, "rows,", t.column_names, t.to_pydict()["id"][:3])

        sizes = []
        first_ids = []
        for batch in pf.iter_batches(batch_size=100, row_groups=[2], columns=["id", "price"]):
            sizes.append(batch.num_rows)
            first_ids.append(batch.to_pydict()["id"][0])
        print("iter_batches(row_groups=[2]):", sizes, first_ids)

        cheap = pq.read_table(path, columns=["id", "price", "ts"],
                              filters=[("price", ">=", decimal.Decimal("249.00")), ("day", ">=", dt.date(2024, 1, 5))],
                              use_threads=False)
        print("read_table(filters=...):", cheap.num_rows, "rows")
        for row in cheap.to_pylist()[:5]:
            print("  ", {k: str(v) for k, v in row.items()})
        everything = pq.read_table(path, use_threads=True)
        print("read_table():", everything.num_rows, "rows,", everything.num_columns, "columns,",
              everything.column_names)

        # writer options as pyarrow names them, and what the footer says back
        sorted_path = os.path.join(tmp, "sorted.parquet")
        pq.write_table(make_table(), sorted_path, compression="zstd", compression_level=9, version="2.6",
                       sorting_columns=[pq.SortingColumn(0)])
        keys = pq.read_metadata(sorted_path).row_group(0).sorting_columns
        print("sorting_columns:", [(k.column_index, k.descending, k.nulls_first) for k in keys])

        # a Hive-partitioned dataset, read back whole and filtered, and a list of files
        root = os.path.join(tmp, "by_day")
        pq.write_to_dataset(make_table(), root, partition_cols=["day"])
        print("partition directories:", sorted(os.listdir(root))[:3], len(os.listdir(root)))
        back = pq.read_table(root, columns=["id", "price"], filters=[("id", "<", 120)])
        print("dataset read:", back.num_rows, "rows,", sorted(back.column("id").to_pylist())[-3:])
        both = pq.read_table([path, sorted_path], columns=["id"])
        print("two files:", both.num_rows, "rows")


if __name__ == "__main__":
    main()
