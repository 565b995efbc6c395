"""ParquetWriter: tables -> row groups -> column chunks -> pages -> bytes on disk.

The writer decides the file layout: row groups, Bloom filters in either placement, page indexes,
footer, and the sink (:func:`pqbloom.io.open_sink`: the file appears only when the writer closes
without error). One column chunk is :class:`pqbloom.file.column_writer.ColumnChunkWriter`'s job. Every
module passes through :func:`pqbloom.file.encryption.encrypt_module`, which encrypts it when the
column (or footer) has a key, so encryption is one step rather than sprinkled around.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from types import TracebackType
from typing import IO, TYPE_CHECKING, Any

import numpy as np

from .._version import __version__
from ..crypto import FileEncryptionProperties, ModuleType
from ..errors import SchemaError, UnsupportedError
from ..format import (
    ConvertedType,
    encode,
    encode_column_index,
    file_metadata,
    gc_paused,
    offset_index,
    row_group,
)
from ..io.sources import open_sink
from ..schema import ColumnDescriptor, LNode, NestedField, Schema, build_tree, check_writable, leaves_from_elements
from ..statistics import build_column_index
from ..table import Column, NestedColumn, Table, conform
from ..table.arrow_schema import footer_metadata, from_pyarrow
from .column_writer import ColumnChunkWriter, ColumnPlan, LeafData, PendingChunk, bytes_per_value
from .encryption import WriterEncryption, encrypt_module
from .levels import shred
from .metadata import FileMetadata
from .options import BloomFilterOptions, BloomFilterSpec, WriterOptions
from .parquet_schema import ParquetSchema
from .sorting import resolve_sorting_columns, sorting_columns_struct
from .versions import footer_version, schema_for_version, table_for_version

if TYPE_CHECKING:
    from typing import Self  # Python 3.11; annotations only (3.10 is supported)

__all__ = ["ParquetWriter", "WriterOptions", "BloomFilterOptions", "CREATED_BY", "Destination", "options_from"]

#: the footer's ``created_by``
CREATED_BY = f"pqbloom version {__version__}"
MAGIC = b"PAR1"

#: where a file is written: a path (written atomically: see :func:`pqbloom.io.open_sink`) or a writable
#: binary stream
Destination = str | os.PathLike[str] | IO[bytes]


class ParquetWriter:
    """Write a Parquet file one table (row group or more) at a time, as pyarrow's ``ParquetWriter``.

    ``with ParquetWriter("out.parquet", schema, compression="zstd") as w: w.write_table(t)``

    ``schema`` is a :class:`pqbloom.Schema`, a dict of type strings (``{"id": "int64"}``), a pyarrow
    schema, or data whose schema to take (anything :func:`pqbloom.write_table` accepts). The file
    appears at the target path only when the writer closes without error; until then it is written
    beside it under a temporary name. ``where`` may be a URL or a path on ``filesystem`` (fsspec or
    pyarrow).

    The options, all keyword-only (names and meanings as pyarrow's; :class:`pqbloom.WriterOptions`
    describes each): ``compression``, ``compression_level``, ``version``, ``use_dictionary``,
    ``write_statistics``, ``data_page_size``, ``data_page_version``, ``dictionary_pagesize_limit``,
    ``column_encoding``, ``use_byte_stream_split``, ``max_rows_per_page``, ``write_batch_size``,
    ``row_group_size`` (the default of :meth:`write_table`), ``max_row_group_bytes``,
    ``sorting_columns``, ``write_page_index`` (default True, unlike pyarrow), ``write_page_checksum``,
    ``bloom_filter_options``, ``bloom_filter_position``, ``bloom_filter_skip_dictionary``,
    ``key_value_metadata``, ``store_schema``, ``statistics_truncate_length``, ``coerce_timestamps``,
    ``allow_truncated_timestamps``, ``use_deprecated_int96_timestamps``, ``store_decimal_as_integer``,
    ``write_time_adjusted_to_utc``, ``use_compliant_nested_type``, ``flavor``, ``encryption_properties``,
    ``fsync``, ``use_threads``. ``writer_engine_version`` is accepted and ignored, as pyarrow does;
    ``use_content_defined_chunking`` must be False (pqbloom does not cut pages by content).
    """

    def __init__(self, where: Destination, schema: Schema | Any, *, filesystem: Any = None,
                 flavor: str | None = None, version: str | None = "2.6", use_dictionary: bool | list[str] = True,
                 compression: str | dict[str, str] | None = "snappy", write_statistics: bool | list[str] = True,
                 use_deprecated_int96_timestamps: bool | None = None,
                 compression_level: int | dict[str, int] | None = None,
                 use_byte_stream_split: bool | list[str] = False, column_encoding: dict[str, str] | None = None,
                 writer_engine_version: str | None = None, data_page_version: str = "1.0",
                 use_compliant_nested_type: bool = True,
                 encryption_properties: FileEncryptionProperties | None = None, write_batch_size: int | None = None,
                 dictionary_pagesize_limit: int | None = None, store_schema: bool = True,
                 write_page_index: bool = True, write_page_checksum: bool = False, sorting_columns: Any = None,
                 store_decimal_as_integer: bool | None = None, write_time_adjusted_to_utc: bool = False,
                 max_rows_per_page: int | None = None, bloom_filter_options: dict[str, BloomFilterSpec] | None = None,
                 use_content_defined_chunking: bool = False, coerce_timestamps: str | None = None,
                 allow_truncated_timestamps: bool = False, row_group_size: int | None = None,
                 max_row_group_bytes: int | None = None, data_page_size: int | None = None,
                 bloom_filter_position: str = "after_row_group", bloom_filter_skip_dictionary: bool = False,
                 key_value_metadata: dict[str, str] | None = None, statistics_truncate_length: int = 64,
                 fsync: bool = False, use_threads: bool = True) -> None:
        del writer_engine_version  # pyarrow ignores it too
        if use_content_defined_chunking:
            raise UnsupportedError("use_content_defined_chunking: pqbloom cuts pages by size, not by content")
        self._open(where, schema, filesystem, options_from(locals()))

    @classmethod
    def with_options(cls, where: Destination, schema: Schema | Any, options: WriterOptions, *,
                     filesystem: Any = None) -> ParquetWriter:
        """A writer of ``options`` (a :class:`WriterOptions`, already made)."""
        self = cls.__new__(cls)
        self._open(where, schema, filesystem, options)
        return self

    def _open(self, where: Destination, schema: Schema | Any, filesystem: Any, options: WriterOptions) -> None:
        #: key-value metadata and Arrow types the data came with (pandas', pyarrow's): stored in the footer
        self._data_metadata: dict[str, str] | None = None
        self._arrow_hints: Any = None
        self._added_metadata: dict[str, str] = {}
        #: the footer struct, its size and key-value metadata, once written
        self._written: tuple[Any, int, dict[str, Any]] | None = None
        self._closed = True  # until the sink is open
        if isinstance(schema, Mapping) and schema and all(isinstance(v, str) for v in schema.values()):
            schema = Schema.from_types(dict(schema))  # {"id": "int64", "email": "string"}
        elif not isinstance(schema, Schema):
            if hasattr(schema, "names"):  # a pyarrow schema
                self._arrow_hints = from_pyarrow(schema)
                self._data_metadata = {k.decode(): v.decode() for k, v in (schema.metadata or {}).items()}
                schema = _schema_from_arrow(schema)
            else:
                data = Table.coerce(schema)
                self._data_metadata, self._arrow_hints = data.metadata, data.arrow_schema
                schema = data.schema
        self.options = options
        if self.options.version not in (None, "1.0", "2.4", "2.6"):
            self.options.validate(schema)  # raises the version error before the schema is converted
        #: the schema the data is given in (the file's may differ: see :mod:`pqbloom.file.versions`)
        self._given_schema = schema
        schema = schema_for_version(schema, self.options)
        # flattened once: leaves, tree, validation and the footer all use it (10,000 columns cost)
        with gc_paused():
            self._schema_elements = schema.to_elements()
            if not self.options.use_compliant_nested_type:
                legacy_list_names(self._schema_elements)
            leaves = leaves_from_elements(self._schema_elements)[0]
            self._tree: list[LNode] = build_tree(self._schema_elements, leaves)
        self.options.validate(schema, leaves)
        self._sorting = sorting_columns_struct(resolve_sorting_columns(self.options.sorting_columns, leaves))
        for f in schema.fields:
            check_writable(f)
        self.schema = schema
        self._num_leaves = len(leaves)
        self._plans: list[ColumnPlan] = []
        #: for each top-level field, the plans of its leaves
        self._field_plans: list[list[ColumnPlan]] = []
        for f, node in zip(schema.fields, self._tree):
            if isinstance(f, NestedField):
                plans = [ColumnPlan(d.field, d.index, self.options, d, f.name) for d in node.leaves()]
            else:
                plans = [ColumnPlan(f, len(self._plans), self.options)]
            self._plans.extend(plans)
            self._field_plans.append(plans)
        self._crypto: WriterEncryption | None = None
        if self.options.encryption_properties is not None:
            self._crypto = WriterEncryption(self.options.encryption_properties, schema)
        # external key material (a sidecar) is committed together with the file, never before it
        self._sink = open_sink(where, fsync=self.options.fsync, filesystem=filesystem,
                               companion=getattr(self.options.encryption_properties, "key_material", None))
        self._row_groups: list[Any] = []  # RowGroup structs, for the footer
        self._chunk_writer = ColumnChunkWriter(self._sink, self.options, self._crypto)
        #: one entry per Bloom filter written: its size, the distinct values it holds, bits per value, est. FPP
        self.bloom_filter_stats: list[dict[str, Any]] = self._chunk_writer.bloom_filter_stats
        self._pending: list[PendingChunk] = []  # chunks whose Bloom filter / page index are written at the end
        self._num_rows = 0
        self._closed = False
        try:
            self._sink.write(b"PARE" if self._crypto is not None and not self._crypto.plaintext_footer else MAGIC)
        except BaseException:
            self._sink.abort()
            raise

    # -- public ---------------------------------------------------------------
    def write_table(self, table: Any, row_group_size: int | None = None,
                    progress: Callable[[int, int], None] | None = None) -> None:
        """Append rows, cutting row groups of at most ``row_group_size`` rows.

        ``progress(rows_written, total_rows)`` is called after each row group (rows of this call)."""
        t = table_for_version(Table.coerce(table, self._given_schema), self.options)
        if self._data_metadata is None:  # the first table's metadata describes the file
            self._data_metadata, self._arrow_hints = t.metadata, t.arrow_schema
        if t.schema.names != self.schema.names:
            t = _conform(t, self.schema)
        elif t.schema != self.schema:
            t = _conform(t, self.schema)
        size = row_group_size or self.options.row_group_rows
        if self.options.max_row_group_bytes and t.num_rows:
            per_row = sum(_row_bytes(c) for c in t.columns)
            size = max(1, min(size, int(self.options.max_row_group_bytes // max(per_row, 1e-9))))
        try:
            if t.num_rows == 0:
                return
            for start in range(0, t.num_rows, size):
                with gc_paused():  # a row group of many columns builds many small metadata objects
                    self._write_row_group(t.slice(start, size))
                if progress is not None:
                    progress(min(start + size, t.num_rows), t.num_rows)
        except BaseException:
            self.abort()
            raise

    def write(self, table_or_batch: Any, row_group_size: int | None = None) -> None:
        """Write a table or a record batch (as :meth:`write_table`), as pyarrow's ``ParquetWriter.write``."""
        self.write_table(table_or_batch, row_group_size)

    def write_batch(self, batch: Any, row_group_size: int | None = None) -> None:
        """Write ``batch`` as one row group (or row groups of ``row_group_size`` rows when given, as pyarrow)."""
        t = Table.coerce(batch, self._given_schema)
        self.write_table(t, row_group_size=row_group_size or max(t.num_rows, 1))

    def add_key_value_metadata(self, key_value_metadata: Mapping[str, str]) -> None:
        """Add key-value pairs to the footer's metadata (written when the file is closed), as pyarrow's."""
        if self._closed:
            raise ValueError("the writer is closed: its footer is written")
        self._added_metadata.update({str(k): str(v) for k, v in key_value_metadata.items()})

    @property
    def is_open(self) -> bool:
        """Whether rows can still be written (not yet closed nor aborted), as pyarrow's ``is_open``."""
        return not self._closed

    def close(self) -> None:
        """Write Bloom filters and page indexes that were held back, the footer, and publish the file."""
        if self._closed:
            return
        try:
            with gc_paused():
                self._finish()
            self._sink.commit()
        except BaseException:
            self._sink.abort()
            raise
        finally:
            self._closed = True

    def abort(self) -> None:
        """Discard everything written so far; nothing appears at the target path."""
        if not self._closed:
            self._sink.abort()
            self._closed = True

    def __enter__(self) -> Self:
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        if exc_type is not None:
            self.abort()
        else:
            self.close()

    # -- row groups ---------------------------------------------------------------
    def _write_row_group(self, t: Table) -> None:
        rg = len(self._row_groups)
        if self._crypto is not None:
            self._crypto.check_ordinal("row group", rg)
        start = self._sink.tell()
        chunks = []
        total_uncompressed = 0
        pending = []
        for plans, node, column in zip(self._field_plans, self._tree, t.columns):
            if not plans:  # a field of empty groups: nothing to write, and only nulls read back
                if column.null_count != len(column):
                    raise SchemaError(f"column {column.field.name!r}: an empty struct (a group without leaves) "
                                      f"holds no data in Parquet, so only null values can be written "
                                      f"({len(column) - column.null_count} are not)")
                continue
            if isinstance(column, NestedColumn):
                leaves = shred(column, node)
                datas = []
                for plan in plans:
                    sl = leaves[plan.index]
                    datas.append(LeafData(sl.values, sl.defs if plan.max_def else None,
                                           sl.reps if plan.max_rep else None, sl.num_values))
            else:
                plan = plans[0]
                mask = column.mask
                defs = None if plan.max_def == 0 else (
                    np.ones(len(column), np.uint8) if mask is None else (~mask).astype(np.uint8))
                datas = [LeafData(column.dense(), defs, None, len(column), mask is None,
                                   getattr(column, "dictionary", None))]
            for plan, data in zip(plans, datas):
                p = self._chunk_writer.write(plan, data, rg)
                chunks.append(p.chunk)
                total_uncompressed += p.meta.total_uncompressed_size
                pending.append(p)
        compressed = self._sink.tell() - start
        if self.options.bloom_filter_position == "after_row_group":
            for p in pending:
                self._write_bloom(p)
                p.bloom = None
        self._pending.extend(pending)
        first = chunks[0].meta_data if chunks else None
        file_offset = start
        if first is not None and first.dictionary_page_offset is not None:
            file_offset = first.dictionary_page_offset
        self._row_groups.append(row_group(
            columns=chunks, total_byte_size=total_uncompressed, num_rows=t.num_rows,
            file_offset=file_offset, total_compressed_size=compressed, ordinal=rg if rg < 32768 else None,
            sorting_columns=self._sorting))
        self._num_rows += t.num_rows

    # -- end of file ------------------------------------------------------------------
    def _write_bloom(self, p: PendingChunk) -> None:
        if p.bloom is None:
            return
        offset = self._sink.tell()
        header = encrypt_module(self._crypto, ModuleType.BLOOM_FILTER_HEADER, p.bloom.header_bytes(), p.row_group, p.column)
        bitset = encrypt_module(self._crypto, ModuleType.BLOOM_FILTER_BITSET, p.bloom.bitset(), p.row_group, p.column)
        self._sink.write(header)
        self._sink.write(bitset)
        p.meta.bloom_filter_offset = offset
        p.meta.bloom_filter_length = len(header) + len(bitset)

    def _finish(self) -> None:
        if self.options.bloom_filter_position == "end":
            for p in self._pending:
                self._write_bloom(p)
        # column indexes, then offset indexes (the order every peer writes)
        for p in self._pending:
            pi = p.page_index
            if pi is None or not pi.stats or any(s is None for s in pi.stats):
                continue
            plan = self._plans[p.column]
            ci = build_column_index(pi.stats, pi.null_pages, plan.field.physical_type, plan.sort_order,
                                    repetition_level_histograms=pi.rep_histograms,
                                    definition_level_histograms=pi.def_histograms)
            if ci is None:
                continue
            data = encrypt_module(self._crypto, ModuleType.COLUMN_INDEX, encode_column_index(ci), p.row_group,
                                  p.column)
            p.chunk.column_index_offset = self._sink.tell()
            p.chunk.column_index_length = len(data)
            self._sink.write(data)
        for p in self._pending:
            pi = p.page_index
            if pi is None:
                continue
            oi = offset_index(pi.locations, pi.unencoded)
            data = encrypt_module(self._crypto, ModuleType.OFFSET_INDEX, encode(oi), p.row_group, p.column)
            p.chunk.offset_index_offset = self._sink.tell()
            p.chunk.offset_index_length = len(data)
            self._sink.write(data)
        user = {**(self.options.key_value_metadata or {}), **self._added_metadata}
        if self.options.store_schema:
            kv_items = footer_metadata(self.schema, user, self._data_metadata, self._arrow_hints)
        else:  # as pyarrow: neither the Arrow schema nor the data's metadata (pandas'), only the user's
            kv_items = dict(user)
        fmd = file_metadata(version=footer_version(self.options.version), schema=self._schema_elements,
                            num_rows=self._num_rows, row_groups=self._row_groups, key_value_metadata=kv_items,
                            created_by=CREATED_BY, num_columns=self._num_leaves)
        if self._crypto is not None:
            tail = self._crypto.finish_footer(fmd, self._pending)
        else:
            footer = encode(fmd)
            tail = footer + len(footer).to_bytes(4, "little") + MAGIC
        self._sink.write(tail)
        self._written = (fmd, len(tail) - 8, kv_items)

    @property
    def metadata(self) -> FileMetadata:
        """The written file's footer, once the writer is closed (as pyarrow's writer's ``metadata``: what
        ``metadata_collector`` gathers)."""
        if self._written is None:
            raise ValueError("the footer is written when the writer closes: close it first")
        fmd, size, kv = self._written
        leaves = leaves_from_elements(self._schema_elements)[0]
        schema = ParquetSchema(leaves, lambda: self.schema.to_arrow(kv))

        def chunk_meta(rg: int, desc: ColumnDescriptor) -> Any:
            return fmd.row_groups[rg].columns[desc.index].meta_data

        return FileMetadata(fmd, schema, leaves, self._num_rows, chunk_meta, encrypted=self._crypto is not None,
                            serialized_size=size)


def options_from(arguments: Mapping[str, Any]) -> WriterOptions:
    """:class:`WriterOptions` of the keyword arguments of a writing function (its ``locals()``; arguments
    that are not options are left out)."""
    return WriterOptions(**{k: v for k, v in arguments.items() if k in _OPTION_NAMES})


_OPTION_NAMES = frozenset(WriterOptions.__dataclass_fields__)


def legacy_list_names(elements: list[Any]) -> None:
    """Name the leaf of every three-level list ``item`` instead of ``element`` (pyarrow's
    ``use_compliant_nested_type=False``): ``tags.list.item``."""
    for i, el in enumerate(elements[:-2]):
        if el.converted_type == ConvertedType.LIST and el.num_children == 1:
            inner = elements[i + 1]
            if inner.name == "list" and inner.num_children == 1 and elements[i + 2].name == "element":
                elements[i + 2].name = "item"


def _row_bytes(col: Column) -> float:
    """Approximate uncompressed bytes per row of a (possibly nested) column."""
    if isinstance(col, NestedColumn):
        n = max(len(col), 1)
        return sum(_row_bytes(c) * len(c) for c in col.children) / n + 1
    return bytes_per_value(col.values, col.field)


def _schema_from_arrow(arrow_schema: Any) -> Schema:
    import pyarrow as pa

    empty = pa.table({f.name: pa.array([], f.type) for f in arrow_schema}, schema=arrow_schema)
    return Table.from_arrow(empty).schema


def _conform(t: Table, schema: Schema) -> Table:
    """Put ``t``'s columns in schema order and types, or say precisely what does not match."""
    have = set(t.column_names)
    missing = [n for n in schema.names if n not in have]
    extra = [n for n in t.column_names if n not in set(schema.names)]
    if missing or extra:
        raise SchemaError(f"table does not match the writer's schema: missing {missing}, unexpected {extra}")
    cols = []
    for f in schema.fields:
        c = t.column(f.name)
        if isinstance(f, NestedField) or isinstance(c, NestedColumn):
            cols.append(conform(c, f))
            continue
        if c.field.physical_type != f.physical_type or c.field.type_length != f.type_length:
            raise SchemaError(f"column {f.name!r} is {c.field.type_name}, the schema says {f.type_name}")
        if c.mask is not None and not f.nullable:
            raise SchemaError(f"column {f.name!r} is declared not null but has {c.null_count} nulls")
        cols.append(Column(f, c.values, c.mask))
    return Table(cols)
