"""FileReader: footer -> row groups -> column chunks -> pages -> arrays, knowing no expressions.

Every byte comes through :class:`pqbloom.io.RangeReader`, which counts what is read. Pages decode in
:mod:`pqbloom.file.pages` (the one place that decrypts page modules), chunks assemble in
:mod:`pqbloom.file.column_reader`, nested columns in :mod:`pqbloom.file.levels`. The filter engine
(:mod:`pqbloom.scan`) drives a FileReader through the members :mod:`pqbloom.file.row_access` lists; the
user's object, :class:`pqbloom.api.ParquetFile`, adds filtered reads on top.
"""

from __future__ import annotations

import os
from collections import Counter
from collections.abc import Generator, Iterator, Sequence
from contextlib import closing
from functools import partial
from typing import IO, TYPE_CHECKING, Any

import numpy as np

from ..arrays import BinaryArray
from ..crypto import FileDecryptionProperties
from ..errors import ColumnNotFoundError, CorruptFileError, ParquetError, SchemaError
from ..format import PhysicalType, RowGroupList, SchemaElement, schema_elements
from ..io import IOStats, RangeReader
from ..io.sources import open_source
from ..limits import charge, memory_budget, run_limited
from ..schema import ColumnDescriptor, Field, LNode, Schema, build_tree, leaves_from_elements
from ..table import (
    INT96_UNITS,
    Column,
    NestedColumn,
    Table,
    coerce_int96,
    column_from_values,
    empty_column,
    int96_field,
    null_column,
    with_dictionary,
)
from ..table.arrow_schema import ARROW_SCHEMA_KEY, ArrowSchema, effective_field, natural_field, schema_hints
from .batches import iter_batches
from .binary_sink import BinarySink
from .column_builder import ByteArrayRegions, ColumnBuilder, FixedRegions, placed_type
from .column_reader import (
    DECODE_FAILURES,
    DictIndices,
    NestedSelection,
    Values,
    build_column,
    concat_values,
    located_error,
    to_sink,
)
from .encryption import ReaderDecryption
from .footer import DEFAULT_THRIFT_CONTAINER_SIZE_LIMIT, DEFAULT_THRIFT_STRING_SIZE_LIMIT, FooterLocation, open_footer
from .leaf_values import LeafValues
from .levels import LeafLevels, assemble, check_levels
from .metadata import ColumnChunkMetadata, FileMetadata
from .pages import join_levels, plausible_count
from .parallel import BATCH_WEIGHT, map_ordered, map_ordered_batched
from .parquet_schema import ParquetSchema
from .read_hints import read_hints
from .row_access import RowAccess
from .select import select_columns

if TYPE_CHECKING:
    from typing import Self  # Python 3.11; annotations only (3.10 is supported)

__all__ = ["FileReader", "FooterLocation", "NestedSelection", "Source"]

#: reads whose chunks decode to fewer bytes than this (footer sizes) decode in the calling thread
SMALL_READ = 16 << 20

Source = str | os.PathLike[str] | bytes | bytearray | memoryview | IO[bytes] | RangeReader  #: path, URL, bytes, file, reader


class FileReader(RowAccess):
    """A Parquet file opened for reading (path, bytes, or seekable binary file object), without filters:
    footer, schema, column lookup, chunk metadata and byte ranges, pages, Bloom filters, whole-column
    and row-group reads (chunk metadata, ranges, pages and Bloom filters: :class:`~pqbloom.file.chunks.ChunkAccess`).
    :class:`pqbloom.ParquetFile` is the user's subclass (filtered reads).

    ``verify_checksums`` checks page CRCs where the writer stored them. ``memory_limit`` (bytes) caps
    what each read call (``read``, ``read_row_group``, each batch of ``iter_batches``) may decompress
    and decode; past it the call raises :class:`~pqbloom.errors.MemoryLimitError` before allocating
    (see :mod:`pqbloom.limits`). None, the default, sets no ceiling.

    ``coerce_int96_timestamp_unit`` (as pyarrow's): the unit INT96 timestamps (Impala, Hive, Spark) are
    read in. None or ``"ns"`` keeps them INT96 read as ``timestamp[ns]``, which holds only 1677-09-21 ..
    2262-04-11: converting a value outside (Spark's ``0001-01-01`` / ``9999-12-31``) with ``to_arrow``,
    ``to_numpy``, ``to_pylist`` or ``to_pandas`` raises :class:`~pqbloom.errors.TimestampRangeError` where
    pyarrow wraps it to another instant (the raw ``values`` stay readable; filters compare it exactly). ``"us"`` or
    ``"ms"`` read them as INT64 TIMESTAMP columns of that unit (``timestamp[us]``...: years 1 to 9999).

    Opening the file reads and decodes its footer under ``memory_limit`` too. ``thrift_string_size_limit``
    (bytes, default 100,000,000) and ``thrift_container_size_limit`` (elements, default 1,000,000), as
    pyarrow's, cap a single string and a single list of the footer: a footer holding a longer one raises
    :class:`~pqbloom.errors.MetadataLimitError` before it is allocated. Raise them to read such a file.
    """

    def __init__(self, source: Source, *, decryption_properties: FileDecryptionProperties | None = None,
                 verify_checksums: bool = True, memory_limit: int | None = None,
                 coerce_int96_timestamp_unit: str | None = None,
                 thrift_string_size_limit: int = DEFAULT_THRIFT_STRING_SIZE_LIMIT,
                 thrift_container_size_limit: int = DEFAULT_THRIFT_CONTAINER_SIZE_LIMIT,
                 read_dictionary: Sequence[str] | None = None) -> None:
        if memory_limit is not None and memory_limit <= 0:
            raise ValueError("memory_limit must be a positive number of bytes (or None)")
        if coerce_int96_timestamp_unit is not None and coerce_int96_timestamp_unit not in INT96_UNITS:
            raise ValueError(f"coerce_int96_timestamp_unit must be one of {', '.join(INT96_UNITS)} (or None), not "
                             f"{coerce_int96_timestamp_unit!r} (pqbloom holds Parquet's timestamp units; for "
                             f"seconds read 'ms' and cast)")
        #: the unit INT96 timestamps are read in (None: nanoseconds, range-checked)
        self.coerce_int96_timestamp_unit = coerce_int96_timestamp_unit
        #: top-level columns read as Arrow dictionaries (pandas categoricals), as pyarrow's ``read_dictionary``
        self.read_dictionary = tuple(read_dictionary or ())
        self.memory_limit = memory_limit
        self.range_reader = open_source(source)  # URLs through fsspec (pqbloom.io.sources)
        self.verify_checksums = verify_checksums
        #: the file's decryption state (None: a plaintext file)
        self.decryption: ReaderDecryption | None = None
        self.footer_location, self.decryption = open_footer(
            self.range_reader, decryption_properties, memory_limit=memory_limit,
            string_size_limit=thrift_string_size_limit, container_size_limit=thrift_container_size_limit)
        #: the decoded footer as the format's Thrift struct: for the file layer and low-level tools (tests,
        #: interop checks); every package above the file layer reads :attr:`metadata` (pqbloom's own objects)
        self.thrift_metadata: Any = self.footer_location.metadata
        self._metadata_view: FileMetadata | None = None
        self._chunk_metas: dict[tuple[int, int], Any] = {}
        #: the footer's schema as format's records (once per column: the leaves and the tree are built from them)
        self._elements: list[SchemaElement] = schema_elements(self.thrift_metadata.schema)
        self._leaves, _ = leaves_from_elements(self._elements)
        self._by_name = {c.dotted_path: c for c in self._leaves}
        # paths that name several leaves (a footer may repeat a name): looking them up is an error
        self._ambiguous = {p for p, k in Counter(c.dotted_path for c in self._leaves).items() if k > 1} \
            if len(self._by_name) != len(self._leaves) else set()
        self._tree_cache: list[LNode] | None = None

    # -- properties ------------------------------------------------------------------
    @property
    def schema(self) -> ParquetSchema:
        """The flat schema: one field per leaf column, named by its dotted path (with pyarrow's
        ``ParquetSchema`` members: ``column(i)``, ``to_arrow_schema()``)."""
        return ParquetSchema(self._leaves, lambda: self.schema_arrow)

    @property
    def arrow_table_schema(self) -> Schema:
        """:attr:`table_schema` with the metadata and Arrow types pyarrow's ``read_schema`` gives: the stored
        ``ARROW:schema``'s metadata (else the footer's key-value metadata) and types (time zones,
        durations, dictionaries...)."""
        kv = {k: v for k, v in self.key_value_metadata.items() if v is not None}
        hints = read_hints(schema_hints(kv), self.table_schema.fields, self.read_dictionary)
        if hints is not None and ARROW_SCHEMA_KEY in kv:
            meta = dict(hints.metadata)
        else:
            meta = {k: v for k, v in kv.items() if k != ARROW_SCHEMA_KEY}
        return Schema(self.table_schema.fields, meta, arrow_hints=hints)

    @property
    def table_schema(self) -> Schema:
        """The schema of the tables :meth:`read` returns: one field per top-level field, structs,
        lists and maps as :class:`~pqbloom.schema.NestedField` (``schema`` lists the leaves instead)."""
        unit = self.coerce_int96_timestamp_unit
        return Schema([n.to_field() if unit is None else int96_field(n.to_field(), unit) for n in self._tree])

    @property
    def schema_arrow(self) -> Any:
        """The ``pyarrow.Schema`` pyarrow reads for this file (``pq.ParquetFile(f).schema_arrow``):
        the Parquet types, refined by the footer's ``ARROW:schema``, with the footer's key-value
        metadata. Needs pyarrow (ImportError otherwise)."""
        return self.table_schema.to_arrow(self.key_value_metadata)

    @property
    def _tree(self) -> list[LNode]:
        if self._tree_cache is None:
            self._tree_cache = build_tree(self._elements, self._leaves)
        return self._tree_cache

    @property
    def stored_fields(self) -> list[Field]:
        """The top-level fields as the file stores them: the fields of :attr:`table_schema` without
        ``coerce_int96_timestamp_unit`` (INT96 leaves stay INT96)."""
        return [n.to_field() for n in self._tree]

    @property
    def columns(self) -> list[ColumnDescriptor]:
        """The leaf columns, in file order (a nested field has several)."""
        return list(self._leaves)

    @property
    def num_rows(self) -> int:
        """Rows in the file: the sum of the row groups' counts."""
        # some writers leave FileMetaData.num_rows at 0; the row groups are authoritative
        rgs = self.thrift_metadata.row_groups
        return sum(rgs.num_rows if isinstance(rgs, RowGroupList) else (rg.num_rows for rg in rgs))

    @property
    def num_row_groups(self) -> int:
        """Row groups in the file."""
        return len(self.thrift_metadata.row_groups)

    @property
    def io_stats(self) -> IOStats:
        """What the file's reads have fetched so far (reads and bytes; see :class:`pqbloom.io.IOStats`)."""
        return self.range_reader.stats

    @property
    def key_value_metadata(self) -> dict[str, str | None]:
        """The footer's key-value metadata."""
        return {kv.key: kv.value for kv in (self.thrift_metadata.key_value_metadata or [])}

    @property
    def metadata(self) -> FileMetadata:
        """The footer as pqbloom's metadata objects (row groups, column chunks, statistics)."""
        if self._metadata_view is None:
            self._metadata_view = FileMetadata(self.thrift_metadata, self.schema, self._leaves, self.num_rows,
                                               self.chunk_metadata, encrypted=self.footer_location.encrypted_footer,
                                               serialized_size=self.footer_location.footer_length)
        return self._metadata_view

    def column_chunk(self, row_group: int, column: int | str) -> ColumnChunkMetadata:
        """The metadata of one column chunk, decrypted when needed (a column whose key is missing raises
        :class:`~pqbloom.errors.KeyNotFoundError`)."""
        desc = self.column_descriptor(column)
        if not 0 <= row_group < self.num_row_groups:
            raise IndexError(f"row group {row_group} out of range: the file has {self.num_row_groups}")
        self.chunk_metadata(row_group, desc)  # decrypt now: a missing key is reported here, as a typed error
        return self.metadata.row_group(row_group).column(desc.index)

    def close(self) -> None:
        """Close the underlying file (when this reader opened it)."""
        self.range_reader.close()

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- reading ---------------------------------------------------------------------
    def read(self, columns: Sequence[str] | None = None, *, use_threads: bool = True) -> Table:
        """Read the whole file (or the named columns, as :meth:`select_columns` resolves them) into a Table
        with the footer's key-value metadata and Arrow types; ``use_threads``: see :mod:`.parallel`."""
        with memory_budget(self.memory_limit):
            return self.with_file_metadata(self._read(columns, use_threads))

    def _read(self, columns: Sequence[str] | None, use_threads: bool = False,
              row_groups: Sequence[int] | None = None) -> Table:
        descs = self.select_columns(columns)
        rgs = list(range(self.num_row_groups)) if row_groups is None else list(row_groups)
        n = len(rgs)
        if not n:
            return self.empty_table(columns)
        num_rows = self.num_rows if row_groups is None else sum(self.thrift_metadata.row_groups[i].num_rows for i in rgs)
        # chunks come in column order, each folded at once into its preallocated column: peak memory
        # stays near the result's size (plus the pool's window of chunks)
        # a chunk placed into its own full-length buffer is the column itself only when it is the one
        # row group; with several, placing would add a copy (chunk buffer, then the column's), so their
        # dense pages go straight into the column buffer instead, and a byte-array column whose chunks
        # state their sizes decodes each chunk into its region of the column's buffers
        # each byte-array column's value bytes (SizeStatistics), worked out once
        hints = [None if isinstance(d, NestedSelection) else self._byte_array_size_hint(d, rgs) for d in descs]
        regions = {k: r for k, d in enumerate(descs)
                   if n > 1 and hints[k] is not None and (r := self._byte_array_regions(d, rgs)) is not None}
        sinks = {(k, j): r.sink(j) for k, r in regions.items() for j in range(n)}
        # fixed-width chunks place their pages straight into their rows of the column's buffer
        fixed = {k: fr for k, d in enumerate(descs) if n > 1 and (fr := self._fixed_regions(d, rgs)) is not None}
        outs = {(k, j): fr.rows(j) for k, fr in fixed.items() for j in range(n)}
        results = self._decode_all([(i, d) for d in descs for i in rgs], use_threads, placed=n == 1,
                                   sinks=[sinks.get((k, j)) for k in range(len(descs)) for j in range(n)],
                                   outs=[outs.get((k, j)) for k in range(len(descs)) for j in range(n)])
        with closing(results):
            cols: list[Column] = []
            for k, d in enumerate(descs):
                if isinstance(d, NestedSelection):
                    parts = [next(results) for _ in range(n)]
                    cols.append(parts[0] if n == 1 else NestedColumn.concat(parts))
                    continue
                builder = ColumnBuilder(d.field, num_rows, hints[k], regions.get(k),
                                        fixed.get(k))
                for _ in range(n):
                    builder.add(next(results))
                cols.append(builder.finish())
        return Table(cols, num_rows=num_rows)

    def read_row_groups(self, row_groups: Sequence[int], columns: Sequence[str] | None = None, *,
                        use_threads: bool = True) -> Table:
        """Read the row groups ``row_groups`` (in that order; all columns, or the named ones) into one
        Table, as pyarrow's ``ParquetFile.read_row_groups`` (``use_threads``: see :meth:`read`)."""
        rgs = [self._row_group_index(i) for i in row_groups]
        with memory_budget(self.memory_limit):
            return self.with_file_metadata(self._read(columns, use_threads, rgs), rgs)

    def _row_group_index(self, i: Any) -> int:
        if isinstance(i, bool) or not isinstance(i, (int, np.integer)):
            raise TypeError(f"a row group is given by its index, not {type(i).__name__} {i!r}")
        if not 0 <= i < self.num_row_groups:
            raise IndexError(f"row group {i} out of range (file has {self.num_row_groups})")
        return int(i)

    def _decode_all(self, chunks: list[tuple[int, Any]], use_threads: bool, placed: bool = False,
                    sinks: list[BinarySink | None] | None = None,
                    outs: list[tuple[np.ndarray, np.ndarray | None] | None] | None = None
                    ) -> Generator[Any, None, None]:
        """Decoded chunks in order (encrypted files in one thread: key retrievers are the user's code);
        ``placed``: fixed-width chunks may come with nulls placed (for a ColumnBuilder); ``sinks``: the
        byte-array column region each chunk decodes into, if any (:class:`ByteArrayRegions`); ``outs``:
        the rows of the column each fixed-width chunk is placed into, if any (:class:`FixedRegions`)."""
        sinks = sinks or [None] * len(chunks)
        outs = outs or [None] * len(chunks)
        tasks = [partial(self.read_nested, i, d) if isinstance(d, NestedSelection)
                 else partial(self.read_chunk_parts, i, d, placed=placed or out is not None, sink=sink, out=out)
                 for (i, d), sink, out in zip(chunks, sinks, outs)]
        use_threads = use_threads and self.decryption is None and len(chunks) > 1 and not self._small_read(chunks)
        if not use_threads:
            return map_ordered(tasks, use_threads=False)
        return map_ordered_batched(tasks, self.chunk_weights(chunks, BATCH_WEIGHT), inline=self.inline_marks(chunks))

    def _small_read(self, chunks: list[tuple[int, Any]]) -> bool:
        """Whether the chunks decode to less than :data:`SMALL_READ` bytes (their footer sizes): worker
        threads would gain little there, and each keeps its own allocator arena, whose freed memory
        stays resident: a small read's peak would be several times its result."""
        total = 0
        try:
            for i, d in chunks:
                for leaf in (d.leaves if isinstance(d, NestedSelection) else (d,)):
                    size = self.chunk_metadata(i, leaf).total_uncompressed_size
                    total += size if size is not None and size > 0 else SMALL_READ
                    if total >= SMALL_READ:
                        return False
        except ParquetError:  # the task reading that chunk reports it, in order
            return False
        return True

    def _byte_array_regions(self, desc: ColumnDescriptor | NestedSelection,
                            row_groups: Sequence[int]) -> ByteArrayRegions | None:
        """Buffers for a flat byte-array column whose every chunk states its value bytes
        (SizeStatistics: the caller checked :meth:`_byte_array_size_hint`) and has one value slot per row;
        None otherwise."""
        if isinstance(desc, NestedSelection) or desc.max_repetition_level > 0:
            return None
        rows, sizes = [], []
        for i in row_groups:
            m = self.chunk_metadata(i, desc)
            ss = m.size_statistics
            assert ss is not None and ss.unencoded_byte_array_data_bytes is not None  # the size hint checked
            r = self.thrift_metadata.row_groups[i].num_rows
            if r is None or r < 0 or m.num_values != r:
                return None
            rows.append(r)
            sizes.append(ss.unencoded_byte_array_data_bytes)
        return ByteArrayRegions(desc.field, rows, sizes)

    def _fixed_regions(self, desc: ColumnDescriptor | NestedSelection, row_groups: Sequence[int]) -> FixedRegions | None:
        """The column buffer of a flat fixed-width column whose every chunk has one value slot per
        row (as a flat column must); None otherwise (its chunks then come as they decode)."""
        if isinstance(desc, NestedSelection) or desc.max_repetition_level > 0 or not placed_type(desc.physical_type):
            return None
        rows = []
        for i in row_groups:
            try:
                m = self.chunk_metadata(i, desc)
            except ParquetError:  # the task reading that chunk reports it, in order
                return None
            r = self.thrift_metadata.row_groups[i].num_rows
            # a count its bytes cannot hold is a lying footer: its chunk reports it, nothing is made
            if r is None or r < 0 or m.num_values != r or r > plausible_count(m.total_compressed_size or 0):
                return None
            rows.append(r)
        return FixedRegions(desc.field, rows, desc.max_definition_level > 0)

    def _byte_array_size_hint(self, desc: ColumnDescriptor, row_groups: Sequence[int]) -> int | None:
        """Total value bytes of a BYTE_ARRAY column from SizeStatistics, when every chunk has them."""
        if desc.physical_type != PhysicalType.BYTE_ARRAY:
            return None
        total = 0
        for i in row_groups:
            try:
                m = self.chunk_metadata(i, desc)
            except ParquetError:
                return None
            ss = m.size_statistics
            if ss is None or ss.unencoded_byte_array_data_bytes is None or ss.unencoded_byte_array_data_bytes < 0:
                return None
            total += ss.unencoded_byte_array_data_bytes
        return total if total <= self.range_reader.size * 64 else None  # distrust absurd claims

    def read_row_group(self, i: int, columns: Sequence[str] | None = None, *, use_threads: bool = True) -> Table:
        """Read one row group (all columns, or the named ones) into a Table (``use_threads``: see read)."""
        if not 0 <= i < self.num_row_groups:
            raise IndexError(f"row group {i} out of range (file has {self.num_row_groups})")
        descs = self.select_columns(columns)
        with memory_budget(self.memory_limit):
            results = self._decode_all([(i, d) for d in descs], use_threads)
            with closing(results):
                cols = [next(results) if isinstance(d, NestedSelection) else build_column(d.field, [next(results)])
                        for d in descs]
            return self.with_file_metadata(Table(cols, num_rows=self.thrift_metadata.row_groups[i].num_rows), [i])

    def iter_batches(self, batch_size: int = 65536, row_groups: Sequence[int] | None = None,
                     columns: Sequence[str] | None = None, use_threads: bool = True) -> Iterator[Table]:
        """Yield Tables of ``batch_size`` rows (the last may be shorter), across row groups as pyarrow's
        (of the row groups ``row_groups`` in that order, or all; ``use_threads`` is accepted for
        pyarrow's signature: batches decode in the calling thread). Memory stays bounded by the batch,
        one decoded page per column and the compressed bytes of the current column chunks (see
        :mod:`pqbloom.file.batches`)."""
        if isinstance(batch_size, bool) or not isinstance(batch_size, (int, np.integer)) or batch_size <= 0:
            raise ValueError(f"batch_size must be a positive number of rows, not {batch_size!r}")
        rgs = range(self.num_row_groups) if row_groups is None else [self._row_group_index(i) for i in row_groups]
        return run_limited(self.memory_limit, self._iter_batches(int(batch_size), columns, rgs))

    def _iter_batches(self, batch_size: int, columns: Sequence[str] | None, row_groups: Sequence[int]) -> Iterator[Table]:
        for t in iter_batches(self, self.select_columns(columns), row_groups, batch_size):
            yield self.with_file_metadata(t, [])

    def with_file_metadata(self, table: Table, row_groups: Sequence[int] | None = None) -> Table:
        """``table`` with the footer's key-value metadata and stored Arrow types (pandas' metadata,
        ``ARROW:schema``: see :mod:`pqbloom.table.arrow_schema`). A column the Arrow types call
        dictionary-encoded also gets the dictionary pages of ``row_groups`` (all when None; none for
        batches, which cost what they hold, and filtered reads, which read no pruned row group): pyarrow
        reads them as a categorical's categories, used values or not."""
        kv = {k: v for k, v in self.key_value_metadata.items() if v is not None}
        hints = schema_hints(kv)
        if self.read_dictionary:
            hints = read_hints(hints, [c.field for c in table.columns], self.read_dictionary)
        kv.pop(ARROW_SCHEMA_KEY, None)
        # INT96 in the unit asked for: every read returns through here
        cols = [coerce_int96(c, self.coerce_int96_timestamp_unit) for c in table.columns]
        if hints is not None and (row_groups is None or len(row_groups)):
            rgs = range(self.num_row_groups) if row_groups is None else row_groups
            cols = [self._with_dictionary(c, hints, rgs) for c in cols]
        return Table(cols, kv, hints, num_rows=table.num_rows)

    def _with_dictionary(self, col: Column, hints: ArrowSchema, row_groups: Sequence[int]) -> Column:
        n = natural_field(col.field, written=False) if type(col) is Column else None
        if n is None or effective_field(n, hints.field(col.field.name)).dictionary is None:
            return col
        desc = self._leaf_by_path(col.field.name)
        if desc is None:
            return col
        parts = [d for d in (self.chunk_dictionary(i, desc.index) for i in row_groups) if d is not None]
        dense = col.dense()
        nbytes = dense.nbytes if isinstance(dense, BinaryArray) else np.asarray(dense).nbytes
        # the pages' dictionaries joined with the values: a copy of them, plus hash keys and codes
        charge(2 * nbytes + 16 * len(dense), f"the dictionary of column {col.field.name!r}")
        return with_dictionary(col, parts)

    def chunk_dictionary(self, row_group: int, column: int | str) -> Values | None:
        """The values of a flat column chunk's dictionary page (None when it has none)."""
        desc = self.column_descriptor(column)
        meta = self.chunk_metadata(row_group, desc)
        if meta.num_values == 0 or desc.max_repetition_level > 0:
            return None
        start, length = self.chunk_range(meta, row_group, desc)
        buf, window = self.open_chunk(start, length)
        try:
            for _kind, _values, _present, dictionary in self.iter_pages(buf, start, meta, row_group, desc,
                                                                         window=window):
                return dictionary  # known once the first data page is decoded
        except (ParquetError, *DECODE_FAILURES) as exc:
            raise located_error(exc, row_group, desc) from None
        return None

    def iter_chunk_pages(self, rg: int, desc: ColumnDescriptor) -> Iterator[tuple[Any, np.ndarray | None]]:
        """Dense values and presence flags of each data page of one chunk, decoded lazily."""
        meta = self.chunk_metadata(rg, desc)
        if meta.num_values == 0:
            return
        start, length = self.chunk_range(meta, rg, desc)
        buf, window = self.open_chunk(start, length)
        try:
            for kind, values, present, dictionary in self.iter_pages(buf, start, meta, rg, desc, window=window):
                yield (DictIndices(dictionary, values) if kind == "dict" else values), present
        except (ParquetError, *DECODE_FAILURES) as exc:
            raise located_error(exc, rg, desc) from None

    def empty_table(self, columns: Sequence[str] | None) -> Table:
        """A Table of no rows with the columns a read of ``columns`` would return."""
        cols = [empty_column(d.field) if isinstance(d, NestedSelection)
                else column_from_values(d.field.name, [], d.field) for d in self.select_columns(columns)]
        return Table([coerce_int96(c, self.coerce_int96_timestamp_unit) for c in cols])

    def column_descriptor(self, column: int | str) -> ColumnDescriptor:
        """The leaf column at index ``column`` or with dotted path ``column`` (IndexError / KeyError when
        there is none; :class:`~pqbloom.errors.SchemaError` when the path names several)."""
        if isinstance(column, int):
            if not 0 <= column < len(self._leaves):
                raise IndexError(f"column {column} out of range")
            return self._leaves[column]
        d = self._leaf_by_path(column)
        if d is None:
            raise ColumnNotFoundError(f"no column {column!r}; columns are {list(self._by_name)}")
        return d

    def _leaf_by_path(self, path: str) -> ColumnDescriptor | None:
        if path in self._ambiguous:
            raise SchemaError(f"column name {path!r} is ambiguous: the file's schema has "
                              f"{sum(c.dotted_path == path for c in self._leaves)} columns of that name")
        return self._by_name.get(path)

    def select_columns(self, columns: Sequence[str] | None) -> list[Any]:
        """What to read for ``columns``: a ColumnDescriptor per flat output column, a NestedSelection
        per nested one.

        A top-level name gives that field (nested fields whole). A dotted leaf path outside any
        list or map gives that leaf as a flat column named by its path (null where an enclosing
        struct is null); a dotted group path outside lists and maps gives that group the same way.
        A path inside a list or map selects its top-level field, pruned to the named leaves (as
        pyarrow does); several such paths of one field merge into one column.
        """
        return select_columns(self._tree, self._leaf_by_path, list(self._by_name), columns)

    def read_leaf_levels(self, rg: int, desc: ColumnDescriptor, *, for_assembly: bool = False) -> LeafLevels:
        """One leaf chunk with its definition and repetition levels (for nested assembly).
        ``for_assembly``: the caller hands the result to one :func:`assemble`, which may then place
        the nulls within the values' own buffer (see :class:`LeafValues`)."""
        meta = self.chunk_metadata(rg, desc)
        f = desc.field
        if meta.num_values is None or meta.num_values < 0:
            raise CorruptFileError("column chunk metadata without a value count", row_group=rg,
                                   column=desc.dotted_path)
        if meta.num_values == 0:
            z = np.zeros(0, np.int32)
            return LeafLevels(concat_values([], f), z if desc.max_definition_level else None,
                              z if desc.max_repetition_level else None, 0)
        start, length = self.chunk_range(meta, rg, desc)
        buf, window = self.open_chunk(start, length)
        # byte arrays decode into one buffer sized from SizeStatistics (no join of the pages after),
        # fixed-width values page by page into one buffer
        sink = BinarySink.for_chunk(meta, desc, length, nested=True)
        gathered = LeafValues(f, meta.num_values, room=meta.num_values <= plausible_count(length))
        try:
            defs_l: list[np.ndarray] = []
            reps_l: list[np.ndarray] = []
            dictionary = None
            for kind, values, (defs, reps), page_dictionary in self.iter_pages(buf, start, meta, rg, desc,
                                                                                levels=True, sink=sink,
                                                                                window=window):
                dictionary = page_dictionary
                if sink is None:
                    gathered.add(kind, values, dictionary)
                else:
                    to_sink(sink, kind, values, dictionary)
                if defs is not None:
                    defs_l.append(defs)
                if reps is not None:
                    reps_l.append(reps)
            room = None
            if sink is None:
                values, room = gathered.finish(dictionary, keep_room=for_assembly)
            else:
                values = concat_values(sink.pieces(), f)
            n = meta.num_values
            d_all = join_levels(defs_l, n) if desc.max_definition_level else None
            r_all = join_levels(reps_l, n) if desc.max_repetition_level else None
            del defs_l, reps_l
            for lv in (d_all, r_all):
                if lv is not None and len(lv) != n:
                    raise CorruptFileError(f"decoded {len(lv)} levels for {n} values")
            records = check_levels(desc, d_all, r_all, n)
            # narrow levels (in range, just checked) so that assembly moves a quarter of the bytes
            if d_all is not None and desc.max_definition_level < 128:
                d_all = d_all.astype(np.int8, copy=False)
            if r_all is not None and desc.max_repetition_level < 128:
                r_all = r_all.astype(np.int8, copy=False)
            return LeafLevels(values, d_all, r_all, n, records, room, single_use=for_assembly)
        except (ParquetError, *DECODE_FAILURES) as exc:
            raise located_error(exc, rg, desc) from None

    def read_nested(self, rg: int, sel: NestedSelection, levels: dict[int, LeafLevels] | None = None) -> Column:
        """The nested column ``sel`` of row group ``rg``: every leaf's levels (from ``levels`` when
        already decoded), then assembly."""
        expected = self.thrift_metadata.row_groups[rg].num_rows
        if expected is None or expected < 0:
            raise CorruptFileError("negative row count", row_group=rg)
        if not sel.leaves:  # a field of empty groups: no chunk tells its slots apart; all null, as pyarrow reads it
            return null_column(sel.field, expected)
        data = {}
        for d in sel.leaves:
            lv = levels.get(d.index) if levels else None
            if lv is None:
                lv = self.read_leaf_levels(rg, d, for_assembly=True)
            records = lv.records
            if records is None:
                records = lv.num_values if lv.reps is None else int(np.count_nonzero(lv.reps == 0))
            if records != expected:
                raise CorruptFileError(f"column has {records} rows but the row group has {expected}",
                                       row_group=rg, column=d.dotted_path)
            data[d.index] = lv
        try:
            col = assemble(sel.node, data)
        except CorruptFileError as exc:
            if exc.column is None and exc.row_group is None:
                raise CorruptFileError(str(exc), row_group=rg, column=sel.dotted_path) from None
            raise
        if len(col) != expected:
            raise CorruptFileError(f"column has {len(col)} rows but the row group has {expected}",
                                   row_group=rg, column=sel.dotted_path)
        return col
