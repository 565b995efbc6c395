"""A pyarrow.parquet script in the Arrow cookbook's style: ``write_table``'s options (compression per
column, format and data page versions, dictionaries, encodings, timestamps, statistics, page index,
Spark flavor) and what the footer says back about each.

    python examples/pyarrow_writer_options.py                  # import pqbloom as pq
    PQ_IMPL=pyarrow python examples/pyarrow_writer_options.py  # import pyarrow.parquet as pq

Each line is one call's result (``show``), so the two runs compare line by line
(tests/integration/test_pyarrow_scripts.py; the lines that differ on purpose are listed, with their
reasons, in docs/guide/pyarrow-compatibility.md).
"""

from __future__ import annotations

import datetime as dt
import os
import tempfile

import pyarrow as pa

if os.environ.get("PQ_IMPL") == "pyarrow":
    import pyarrow.parquet as pq
else:
    import pqbloom as pq  # the only change a pyarrow.parquet user makes

from _script_calls import keep, show  # examples/_script_calls.py: one line per call


def events(n: int = 2000) -> pa.Table:
    start = dt.datetime(2024, 6, 1, 12, 0, 0)
    return pa.table({
        "event_id": pa.array(range(n), pa.int64()),
        "kind": pa.array([("click", "view", "buy")[i % 3] for i in range(n)]),
        "at": pa.array([start + dt.timedelta(milliseconds=1234 * i, microseconds=i % 7) for i in range(n)],
                       pa.timestamp("us")),
        "score": pa.array([i / 7 for i in range(n)], pa.float32()),
        "weight": pa.array([i * 0.001 for i in range(n)], pa.float64()),
        "tags": pa.array([[f"t{i % 4}", f"t{i % 5}"] for i in range(n)], pa.list_(pa.string())),
    })


def encodings(path: str, column: int) -> tuple[str, ...]:
    return pq.ParquetFile(path).metadata.row_group(0).column(column).encodings


def main() -> None:
    table = events()
    with tempfile.TemporaryDirectory() as tmp:
        def at(name: str) -> str:
            return os.path.join(tmp, name)

        show("compression per column", lambda: pq.write_table(
            table, at("codecs.parquet"), compression={"event_id": "zstd", "kind": "gzip", "at": "snappy",
                                                       "score": "none", "weight": "brotli", "tags": "lz4"}))
        md = keep("read_metadata", lambda: pq.read_metadata(at("codecs.parquet")))
        show("codecs", lambda: [md.row_group(0).column(j).compression for j in range(6)])
        show("default compression", lambda: (pq.write_table(table, at("default.parquet")),
                                             pq.read_metadata(at("default.parquet")).row_group(0).column(0).compression))
        show("default format_version", lambda: pq.read_metadata(at("default.parquet")).format_version)
        show("default encodings of kind", lambda: encodings(at("default.parquet"), 1))

        for version in ("1.0", "2.4", "2.6"):
            p = at(f"v{version}.parquet")
            show(f"version={version}", lambda p=p, version=version: pq.write_table(table, p, version=version))
            show(f"version={version} format_version", lambda p=p: pq.read_metadata(p).format_version)
            show(f"version={version} encodings of kind", lambda p=p: encodings(p, 1))
            show(f"version={version} encodings of event_id", lambda p=p: encodings(p, 0))

        show("data_page_version='2.0'", lambda: pq.write_table(table, at("dpv2.parquet"), data_page_version="2.0"))
        show("data_page_version='2.0' reads back", lambda: pq.read_table(at("dpv2.parquet")).equals(
            pq.read_table(at("default.parquet"))))

        show("use_dictionary=['kind']", lambda: pq.write_table(table, at("dict.parquet"), use_dictionary=["kind"]))
        show("use_dictionary=['kind'] encodings", lambda: [encodings(at("dict.parquet"), j) for j in range(3)])
        show("use_dictionary=False", lambda: pq.write_table(table, at("nodict.parquet"), use_dictionary=False))
        show("use_dictionary=False has_dictionary_page",
             lambda: pq.read_metadata(at("nodict.parquet")).row_group(0).column(1).has_dictionary_page)

        show("column_encoding", lambda: pq.write_table(
            table, at("enc.parquet"), use_dictionary=False,
            column_encoding={"event_id": "DELTA_BINARY_PACKED", "kind": "DELTA_LENGTH_BYTE_ARRAY"}))
        show("column_encoding encodings", lambda: [encodings(at("enc.parquet"), j) for j in range(2)])
        show("use_byte_stream_split=['score', 'weight']", lambda: pq.write_table(
            table, at("bss.parquet"), use_dictionary=False, use_byte_stream_split=["score", "weight"]))
        show("use_byte_stream_split encodings", lambda: [encodings(at("bss.parquet"), j) for j in (3, 4)])
        show("use_byte_stream_split reads back",
             lambda: pq.read_table(at("bss.parquet")).column("score").to_pylist()[:3])

        show("coerce_timestamps='ms', allow_truncated_timestamps=True", lambda: pq.write_table(
            table, at("ms.parquet"), coerce_timestamps="ms", allow_truncated_timestamps=True))
        show("coerce_timestamps='ms' type", lambda: pq.read_schema(at("ms.parquet")).field("at").type)
        show("coerce_timestamps='ms' logical type",
             lambda: pq.read_metadata(at("ms.parquet")).schema.column(2).logical_type)
        show("coerce_timestamps='ms' value",
             lambda: pq.read_table(at("ms.parquet")).column("at").to_pylist()[1])
        show("coerce_timestamps='ms' without allow_truncated_timestamps", lambda: pq.write_table(
            table, at("ms2.parquet"), coerce_timestamps="ms"))

        show("store_schema=False", lambda: pq.write_table(table, at("noschema.parquet"), store_schema=False))
        show("store_schema=False metadata", lambda: pq.read_metadata(at("noschema.parquet")).metadata)
        show("store_schema=True metadata keys", lambda: list(pq.read_metadata(at("default.parquet")).metadata))

        show("write_statistics=['event_id']", lambda: pq.write_table(
            table, at("stats.parquet"), write_statistics=["event_id"]))
        show("write_statistics=['event_id'] is_stats_set", lambda: [
            pq.read_metadata(at("stats.parquet")).row_group(0).column(j).is_stats_set for j in range(3)])

        show("write_page_index=True", lambda: pq.write_table(table, at("pi.parquet"), write_page_index=True))
        show("write_page_index=True offsets", lambda: pq.read_metadata(
            at("pi.parquet")).row_group(0).column(0).to_dict().get("has_offset_index",
                                                                   "see data_page_offset only"))
        show("write_batch_size, data_page_size, dictionary_pagesize_limit", lambda: pq.write_table(
            table, at("pages.parquet"), write_batch_size=256, data_page_size=4096, dictionary_pagesize_limit=2048))
        show("pages reads back", lambda: pq.read_table(at("pages.parquet")).num_rows)
        show("use_compliant_nested_type=True", lambda: pq.write_table(
            table, at("nested.parquet"), use_compliant_nested_type=True))
        show("nested leaf path", lambda: pq.read_metadata(at("nested.parquet")).row_group(0).column(5).path_in_schema)
        show("use_compliant_nested_type=False", lambda: pq.write_table(
            table, at("legacy_nested.parquet"), use_compliant_nested_type=False))
        show("legacy nested leaf path",
             lambda: pq.read_metadata(at("legacy_nested.parquet")).row_group(0).column(5).path_in_schema)
        show("legacy nested reads back", lambda: pq.read_table(at("legacy_nested.parquet")).column("tags")[0])

        spark = pa.table({"user id": [1, 2], "ts": pa.array([dt.datetime(2024, 1, 1)] * 2, pa.timestamp("us"))})
        show("flavor='spark'", lambda: pq.write_table(spark, at("spark.parquet"), flavor="spark"))
        show("flavor='spark' names", lambda: pq.read_schema(at("spark.parquet")).names)
        show("flavor='spark' ts physical type",
             lambda: pq.read_metadata(at("spark.parquet")).schema.column(1).physical_type)
        show("use_deprecated_int96_timestamps=True", lambda: pq.write_table(
            spark, at("int96.parquet"), use_deprecated_int96_timestamps=True))
        show("int96 physical type", lambda: pq.read_metadata(at("int96.parquet")).schema.column(1).physical_type)
        show("int96 reads back", lambda: pq.read_table(at("int96.parquet")).column("ts").to_pylist())

        show("row_group_size=300", lambda: pq.write_table(table, at("rg.parquet"), row_group_size=300))
        show("row_group_size=300 groups", lambda: pq.ParquetFile(at("rg.parquet")).num_row_groups)
        show("sorting_columns", lambda: pq.write_table(
            table, at("sorted.parquet"), sorting_columns=[pq.SortingColumn(0, descending=False)]))
        show("sorting_columns back", lambda: pq.read_metadata(at("sorted.parquet")).row_group(0).sorting_columns)

        # a typo is caught, naming the function
        show("typo compresion=", lambda: pq.write_table(table, at("typo.parquet"), compresion="zstd"))
        show("typo in read_table", lambda: pq.read_table(at("default.parquet"), colums=["kind"]))

        back = keep("read_table", lambda: pq.read_table(at("default.parquet")))
        show("read back equals table", lambda: back.equals(table))
        show("read back shape", lambda: back.shape)
        show("read back nbytes > 0", lambda: back.nbytes > 0)
        show("read back schema", lambda: back.schema)
        show("read back schema.field('at').type", lambda: back.schema.field("at").type)
        show("read back tags[1]", lambda: back.column("tags")[1])
        show("read back column types", lambda: [str(back.schema.field(i).type) for i in range(back.num_columns)])
        show("read back select().column_names", lambda: back.select(["kind", "event_id"]).column_names)
        show("read back drop_columns().column_names", lambda: back.drop_columns(["tags"]).column_names)
        show("read back rename_columns", lambda: back.rename_columns(["a", "b", "c", "d", "e", "f"]).column_names)


if __name__ == "__main__":
    main()
