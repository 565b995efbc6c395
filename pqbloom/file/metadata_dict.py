"""pyarrow's ``to_dict()`` of a file's metadata objects (:mod:`pqbloom.file.metadata`): the same keys, in
the same order, as pyarrow 26 gives them (``geo_statistics`` is always None: pqbloom reads no geospatial
statistics)."""

from __future__ import annotations

from typing import Any

__all__ = ["statistics_dict", "chunk_dict", "row_group_dict", "file_dict"]


def statistics_dict(st: Any) -> dict[str, Any]:
    """A :class:`~pqbloom.file.metadata.ColumnStatistics` as pyarrow's ``Statistics.to_dict()``."""
    return {"has_min_max": st.has_min_max, "min": st.min, "max": st.max, "null_count": st.null_count,
            "distinct_count": st.distinct_count, "num_values": st.num_values, "physical_type": st.physical_type}


def chunk_dict(c: Any) -> dict[str, Any]:
    """A :class:`~pqbloom.file.metadata.ColumnChunkMetadata` as pyarrow's ``ColumnChunkMetaData.to_dict()``."""
    st = c.statistics
    return {"file_offset": c.file_offset or 0, "file_path": c.file_path, "physical_type": c.physical_type,
            "num_values": c.num_values, "path_in_schema": c.path_in_schema, "is_stats_set": c.is_stats_set,
            "statistics": None if st is None else statistics_dict(st), "geo_statistics": None,
            "compression": c.compression, "encodings": c.encodings, "has_dictionary_page": c.has_dictionary_page,
            "dictionary_page_offset": c.dictionary_page_offset, "data_page_offset": c.data_page_offset,
            "total_compressed_size": c.total_compressed_size, "total_uncompressed_size": c.total_uncompressed_size,
            "bloom_filter_offset": c.bloom_filter_offset, "bloom_filter_length": c.bloom_filter_length}


def row_group_dict(rg: Any) -> dict[str, Any]:
    """A :class:`~pqbloom.file.metadata.RowGroupMetadata` as pyarrow's ``RowGroupMetaData.to_dict()``."""
    return {"num_columns": rg.num_columns, "num_rows": rg.num_rows, "total_byte_size": rg.total_byte_size,
            "columns": [chunk_dict(c) for c in rg.columns()],
            "sorting_columns": [{"column_index": s.column_index, "descending": s.descending,
                                 "nulls_first": s.nulls_first} for s in rg.sorting_columns]}


def file_dict(md: Any) -> dict[str, Any]:
    """A :class:`~pqbloom.file.metadata.FileMetadata` as pyarrow's ``FileMetaData.to_dict()``."""
    return {"created_by": md.created_by or "", "num_columns": md.num_columns, "num_rows": md.num_rows,
            "num_row_groups": md.num_row_groups, "row_groups": [row_group_dict(rg) for rg in md.row_groups()],
            "format_version": md.format_version, "serialized_size": md.serialized_size}
