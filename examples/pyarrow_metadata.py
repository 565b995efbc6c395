"""A pyarrow.parquet script in the Arrow cookbook's style: inspecting a file's metadata without reading
its data (``read_metadata``, ``FileMetaData``, ``RowGroupMetaData``, ``ColumnChunkMetaData``,
``Statistics``, ``ParquetSchema`` / ``ColumnSchema``, ``read_schema``).

    python examples/pyarrow_metadata.py                  # import pqbloom as pq
    PQ_IMPL=pyarrow python examples/pyarrow_metadata.py  # import pyarrow.parquet as pq

Each line is one call's result (``show``), so the two runs compare line by line
(tests/integration/test_pyarrow_scripts.py; the lines that differ on purpose are listed, with their
reasons, in docs/guide/pyarrow-compatibility.md).
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

from _script_calls import keep, show  # examples/_script_calls.py: one line per call


def trips(n: int = 3000) -> pa.Table:
    """Taxi trips: ids, pickup times (UTC), zones, fares, tip flags, passengers, a few nulls."""
    start = dt.datetime(2024, 3, 1, tzinfo=dt.timezone.utc)
    return pa.table({
        "trip_id": pa.array(range(n), pa.int64()),
        "pickup": pa.array([start + dt.timedelta(seconds=97 * i) for i in range(n)], pa.timestamp("us", tz="UTC")),
        "zone": pa.array([None if i % 40 == 0 else f"zone-{i % 26:02d}" for i in range(n)]),
        "fare": pa.array([decimal.Decimal(i % 5000) / 100 for i in range(n)], pa.decimal128(7, 2)),
        "tipped": pa.array([i % 3 == 0 for i in range(n)]),
        "passengers": pa.array([1 + i % 4 for i in range(n)], pa.int8()),
        "day": pa.array([dt.date(2024, 3, 1) + dt.timedelta(days=i // 1000) for i in range(n)], pa.date32()),
    }, metadata={"source": "example"})


def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "trips.parquet")
        show("write_table", lambda: pq.write_table(trips(), path, row_group_size=1000, compression="gzip"))

        md = keep("read_metadata", lambda: pq.read_metadata(path))
        show("num_rows", lambda: md.num_rows)
        show("num_row_groups", lambda: md.num_row_groups)
        show("num_columns", lambda: md.num_columns)
        show("format_version", lambda: md.format_version)
        show("metadata keys", lambda: sorted(md.metadata))
        show("metadata[b'source']", lambda: md.metadata[b"source"])
        show("to_dict() keys", lambda: sorted(md.to_dict()))
        show("to_dict()['num_rows']", lambda: md.to_dict()["num_rows"])
        show("to_dict() row group 1 rows", lambda: md.to_dict()["row_groups"][1]["num_rows"])
        show("equals(read again)", lambda: md.equals(pq.read_metadata(path)))
        show("== read again", lambda: md == pq.ParquetFile(path).metadata)
        show("serialized_size > 0", lambda: md.serialized_size > 0)

        # the Parquet schema: one ColumnSchema per leaf
        schema = keep("metadata.schema", lambda: md.schema)
        show("schema.names", lambda: schema.names)
        show("len(schema)", lambda: len(schema))
        show("schema.to_arrow_schema()", lambda: schema.to_arrow_schema())
        show("schema.to_arrow_schema().metadata", lambda: schema.to_arrow_schema().metadata)
        for i in range(7):
            show(f"schema.column({i})", lambda i=i: schema.column(i))
        col = keep("col = schema.column(3)", lambda: schema.column(3))
        show("column(3).name", lambda: col.name)
        show("column(3).physical_type", lambda: col.physical_type)
        show("column(3).logical_type", lambda: col.logical_type)
        show("column(3).logical_type.type", lambda: col.logical_type.type)
        show("column(3).converted_type", lambda: col.converted_type)
        show("column(3).precision, scale", lambda: (col.precision, col.scale))
        show("column(3).max_definition_level", lambda: col.max_definition_level)
        show("schema[1].logical_type", lambda: schema[1].logical_type)
        show("schema.equals(itself)", lambda: schema.equals(pq.read_metadata(path).schema))

        # row groups and column chunks
        rg = keep("row_group(1)", lambda: md.row_group(1))
        show("row_group(1).num_rows", lambda: rg.num_rows)
        show("row_group(1).num_columns", lambda: rg.num_columns)
        show("row_group(1).to_dict() keys", lambda: sorted(rg.to_dict()))
        for j in range(7):
            c = keep(f"row_group(1).column({j})", lambda j=j: rg.column(j))
            show(f"chunk {j} path, type, codec",
                 lambda c=c: (c.path_in_schema, c.physical_type, c.compression))
            show(f"chunk {j} num_values, stats set", lambda c=c: (c.num_values, c.is_stats_set))
            show(f"chunk {j} statistics min/max", lambda c=c: (str(c.statistics.min), str(c.statistics.max)))
        chunk = keep("chunk = row_group(1).column(2)", lambda: rg.column(2))
        show("chunk.to_dict() keys", lambda: sorted(chunk.to_dict()))
        show("chunk.to_dict()['statistics']", lambda: chunk.to_dict()["statistics"])
        show("chunk.has_dictionary_page", lambda: chunk.has_dictionary_page)
        show("chunk.file_path", lambda: chunk.file_path)
        show("chunk.encodings", lambda: chunk.encodings)
        stats = keep("chunk.statistics", lambda: chunk.statistics)
        show("statistics.has_min_max", lambda: stats.has_min_max)
        show("statistics.null_count", lambda: stats.null_count)
        show("statistics.num_values", lambda: stats.num_values)
        show("statistics.distinct_count", lambda: stats.distinct_count)
        show("statistics.physical_type", lambda: stats.physical_type)
        show("statistics.logical_type", lambda: stats.logical_type)
        show("statistics.converted_type", lambda: stats.converted_type)
        show("statistics.to_dict()", lambda: stats.to_dict())
        show("statistics.equals(again)", lambda: stats.equals(pq.read_metadata(path).row_group(1).column(2).statistics))
        ts = keep("timestamp statistics", lambda: md.row_group(0).column(1).statistics)
        show("timestamp statistics min", lambda: ts.min)
        show("timestamp statistics logical_type", lambda: ts.logical_type)
        show("int8 statistics logical_type", lambda: md.row_group(0).column(5).statistics.logical_type)
        show("bool statistics", lambda: (md.row_group(0).column(4).statistics.min,
                                         md.row_group(0).column(4).statistics.max))
        show("date statistics max", lambda: md.row_group(2).column(6).statistics.max)

        # the Arrow schema
        arrow_schema = keep("read_schema", lambda: pq.read_schema(path))
        show("read_schema().names", lambda: arrow_schema.names)
        show("read_schema() fare type", lambda: arrow_schema.field("fare").type)
        show("read_schema() pickup type", lambda: arrow_schema.field("pickup").type)
        show("read_schema() passengers type == pa.int8()", lambda: arrow_schema.field("passengers").type == pa.int8())
        show("read_schema().metadata", lambda: arrow_schema.metadata)
        show("read_schema().field(0).name", lambda: arrow_schema.field(0).name)
        show("read_schema().field('zone').nullable", lambda: arrow_schema.field("zone").nullable)
        show("read_schema().types", lambda: arrow_schema.types)
        show("read_schema() equals schema_arrow", lambda: arrow_schema.equals(pq.ParquetFile(path).schema_arrow))
        show("ParquetFile.schema.names", lambda: pq.ParquetFile(path).schema.names)
        show("ParquetFile.metadata.row_group(2).num_rows", lambda: pq.ParquetFile(path).metadata.row_group(2).num_rows)
        show("read_metadata(file object).num_rows", lambda: _from_file_object(path))


def _from_file_object(path: str) -> int:
    with open(path, "rb") as fh:
        return pq.read_metadata(fh).num_rows


if __name__ == "__main__":
    main()
