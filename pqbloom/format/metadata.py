"""The footer's structs built from plain values (the writer), and decoded whole (encrypted footers, decrypted
column metadata): ``ColumnMetaData`` with its statistics and size statistics, ``ColumnChunk``, ``RowGroup``
with its sorting columns, ``FileMetaData`` with its schema, key-value metadata and column orders.

The file layer fills in what is known only later (Bloom filter and page index offsets, the crypto metadata
of encrypted chunks) on the structs these functions return; everything else passes plain values.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from .._thrift import ttypes as T
from .codec import decode, decode_prefix
from .crypto import AlgorithmParams, encryption_algorithm
from .schema import SchemaElement, schema_structs
from .statistics import StatisticsFields, statistics_struct

__all__ = ["column_metadata", "column_chunk", "stripped_column_metadata", "sorting_columns", "row_group",
           "file_metadata", "set_footer_encryption", "decode_footer", "decode_footer_prefix",
           "decode_column_metadata", "set_key_value"]


def column_metadata(*, physical_type: int, encodings: Sequence[int], path_in_schema: Sequence[str], codec: int,
                    num_values: int, total_uncompressed_size: int, total_compressed_size: int,
                    data_page_offset: int, dictionary_page_offset: int | None,
                    statistics: StatisticsFields | None, encoding_stats: Mapping[tuple[int, int], int],
                    unencoded_byte_array_data_bytes: int | None = None,
                    repetition_level_histogram: list[int] | None = None,
                    definition_level_histogram: list[int] | None = None) -> Any:
    """A chunk's ``ColumnMetaData``. ``encoding_stats``: (page type, encoding) -> pages, written in key
    order. ``SizeStatistics`` are written when any of their three fields is given."""
    meta = T.ColumnMetaData(
        type=physical_type, encodings=list(encodings), path_in_schema=list(path_in_schema), codec=codec,
        num_values=num_values, total_uncompressed_size=total_uncompressed_size,
        total_compressed_size=total_compressed_size, data_page_offset=data_page_offset,
        dictionary_page_offset=dictionary_page_offset,
        statistics=None if statistics is None else statistics_struct(statistics),
        encoding_stats=[T.PageEncodingStats(page_type=k[0], encoding=k[1], count=v)
                        for k, v in sorted(encoding_stats.items())])
    if unencoded_byte_array_data_bytes is not None or repetition_level_histogram is not None \
            or definition_level_histogram is not None:
        meta.size_statistics = T.SizeStatistics(unencoded_byte_array_data_bytes=unencoded_byte_array_data_bytes,
                                                repetition_level_histogram=repetition_level_histogram,
                                                definition_level_histogram=definition_level_histogram)
    return meta


def column_chunk(meta: Any) -> Any:
    """The ``ColumnChunk`` holding ``meta`` (its index offsets and crypto metadata are set later)."""
    return T.ColumnChunk(file_offset=0, meta_data=meta)


def stripped_column_metadata(full: Any) -> Any:
    """What legacy readers may see of an encrypted column in plaintext-footer mode: ``full`` without
    statistics, encoding stats, Bloom filter or size statistics."""
    return T.ColumnMetaData(
        type=full.type, encodings=full.encodings, path_in_schema=full.path_in_schema, codec=full.codec,
        num_values=full.num_values, total_uncompressed_size=full.total_uncompressed_size,
        total_compressed_size=full.total_compressed_size, data_page_offset=full.data_page_offset,
        index_page_offset=full.index_page_offset, dictionary_page_offset=full.dictionary_page_offset)


def sorting_columns(keys: Sequence[tuple[int, bool, bool]] | None) -> list[Any] | None:
    """``RowGroup.sorting_columns`` from (leaf index, descending, nulls first) keys; None when there are none."""
    if not keys:
        return None
    return [T.SortingColumn(column_idx=i, descending=d, nulls_first=n) for i, d, n in keys]


def row_group(*, columns: list[Any], total_byte_size: int, num_rows: int, file_offset: int,
              total_compressed_size: int, ordinal: int | None, sorting_columns: list[Any] | None) -> Any:
    """A ``RowGroup`` of the ``ColumnChunk`` structs ``columns`` (``sorting_columns``: from
    :func:`sorting_columns`, shared by every row group of a file)."""
    return T.RowGroup(columns=columns, total_byte_size=total_byte_size, num_rows=num_rows, file_offset=file_offset,
                      total_compressed_size=total_compressed_size, ordinal=ordinal, sorting_columns=sorting_columns)


def file_metadata(*, version: int, schema: Sequence[SchemaElement], num_rows: int, row_groups: list[Any],
                  key_value_metadata: Mapping[Any, Any] | None, created_by: str, num_columns: int) -> Any:
    """The ``FileMetaData`` of a file pqbloom writes (keys and values of ``key_value_metadata`` as text, a None
    value absent): every leaf's statistics in TYPE_ORDER."""
    kv = [T.KeyValue(key=str(k), value=None if v is None else str(v)) for k, v in (key_value_metadata or {}).items()]
    order = T.ColumnOrder(TYPE_ORDER=T.TypeDefinedOrder())  # encoded, never mutated: one for every column
    return T.FileMetaData(version=version, schema=schema_structs(schema), num_rows=num_rows, row_groups=row_groups,
                          key_value_metadata=kv or None, created_by=created_by, column_orders=[order] * num_columns)


def set_footer_encryption(md: Any, algorithm: AlgorithmParams | None, key_metadata: bytes | None) -> None:
    """Set (or clear, with None) a footer's ``encryption_algorithm`` and ``footer_signing_key_metadata``: a
    signed plaintext footer names them, an encrypted one leaves them to its ``FileCryptoMetaData``."""
    md.encryption_algorithm = None if algorithm is None else encryption_algorithm(algorithm)
    md.footer_signing_key_metadata = key_metadata


def decode_footer(data: bytes | bytearray | memoryview, *, what: str = "file metadata") -> Any:
    """A whole ``FileMetaData`` (a decrypted footer), decoded eagerly."""
    return decode(T.FileMetaData, data, what=what)


def decode_footer_prefix(data: bytes | bytearray | memoryview) -> tuple[Any, int]:
    """The ``FileMetaData`` at the start of ``data`` (a signed plaintext footer) and its length (the
    signature follows)."""
    return decode_prefix(T.FileMetaData, data, what="FileMetaData")


def decode_column_metadata(data: bytes | bytearray | memoryview, *, what: str = "ColumnMetaData") -> Any:
    """A ``ColumnMetaData`` (a decrypted one)."""
    return decode(T.ColumnMetaData, data, what=what)


def set_key_value(md: Any, key: str, value: str | None) -> None:
    """Set one entry of a ``FileMetaData``'s key-value metadata (replacing an entry of that key, appended
    otherwise); the other entries keep their order."""
    kvs = list(md.key_value_metadata or [])
    for kv in kvs:
        if kv.key == key:
            kv.value = value
            break
    else:
        kvs.append(T.KeyValue(key=key, value=value))
    md.key_value_metadata = kvs
