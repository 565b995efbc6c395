"""ParquetFile: footer -> row groups -> column chunks -> pages -> arrays.

Every byte comes through :class:`pqbloom.io.RangeReader`, which counts what
is read. Every module passes through :meth:`ParquetFile._open_module`, the one
place that decrypts.
"""

from __future__ import annotations

import zlib
from collections import Counter
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from . import compression as compression_mod
from .arrays import BinaryArray
from .bloom import BloomFilter, hash_scalar
from .file.bloom_site import BloomFilterSite
from .encodings import (
    bit_width_of,
    decode_bit_packed_levels,
    decode_levels_v1,
    decode_plain,
    decode_rle_bitpacked,
    decode_values,
    is_dictionary_encoding,
    take_dictionary,
)
from .encodings.rle import level_dtype
from .errors import ChecksumError, CorruptFileError, MemoryLimitError, ParquetError, SchemaError, UnsupportedError
from .file.levels import LeafLevels, assemble, check_levels
from .format import RowGroupList, T, decode_at, decode_file_metadata, decode_prefix
from .io import RangeReader
from .limits import charge, current_budget, memory_budget, out_of_memory, run_limited
from .schema import ColumnDescriptor, Field, LNode, Schema, build_tree, leaves_from_thrift
from .statistics import parse_created_by
from .table import Column, NestedColumn, Table, empty_column, null_column, with_dictionary
from .table.arrow_schema import ARROW_SCHEMA_KEY, effective_field, natural_field, schema_hints

__all__ = ["ParquetFile", "read_table", "read_metadata", "read_schema"]

PT = T.Type
E = T.Encoding
FOOTER_TAIL_READ = 64 * 1024  # one speculative read usually covers the whole footer


@dataclass
class FooterLocation:
    metadata: Any  # T.FileMetaData
    footer_offset: int
    footer_length: int
    encrypted_footer: bool


class ParquetFile:
    """A Parquet file opened for reading (path, bytes, or seekable binary file object).

    ``verify_checksums`` checks page CRCs where the writer stored them. ``memory_limit`` (bytes) caps
    what each read call (``read``, ``read_row_group``, each batch of ``iter_batches``) may decompress
    and decode; past it the call raises :class:`~pqbloom.errors.MemoryLimitError` before allocating
    (see :mod:`pqbloom.limits`). None, the default, sets no ceiling.
    """

    def __init__(self, source: Any, *, decryption_properties: Any = None, verify_checksums: bool = True,
                 memory_limit: int | None = None) -> None:
        if memory_limit is not None and memory_limit <= 0:
            raise ValueError("memory_limit must be a positive number of bytes (or None)")
        self.memory_limit = memory_limit
        self.range_reader = source if isinstance(source, RangeReader) else RangeReader(source)
        self.verify_checksums = verify_checksums
        self.decryption: Any = None
        self._decryption_properties = decryption_properties
        self.footer_location = self._read_footer()
        self.metadata = self.footer_location.metadata
        self._leaves, _ = leaves_from_thrift(self.metadata.schema)
        self._by_name = {c.dotted_path: c for c in self._leaves}
        # paths that name several leaves (a footer may repeat a name): looking them up is an error
        self._ambiguous = {p for p, k in Counter(c.dotted_path for c in self._leaves).items() if k > 1} \
            if len(self._by_name) != len(self._leaves) else set()
        self._tree_cache: list[LNode] | None = None

    # -- footer -------------------------------------------------------------------
    def _read_footer(self) -> FooterLocation:
        r = self.range_reader
        size = r.size
        if size < 12:
            raise CorruptFileError(f"file of {size} bytes is too small to be Parquet")
        tail_len = min(size, FOOTER_TAIL_READ)
        tail = r.read(size - tail_len, tail_len, what="footer")
        magic = tail[-4:]
        if magic not in (b"PAR1", b"PARE"):
            raise CorruptFileError(f"not a Parquet file: trailing magic is {magic!r}", offset=size - 4)
        head = r.read(0, 4, what="leading magic") if size > tail_len else tail[:4]
        if head not in (b"PAR1", b"PARE"):
            raise CorruptFileError(f"not a Parquet file: leading magic is {head!r}", offset=0)
        flen = int.from_bytes(tail[-8:-4], "little")
        if flen <= 0 or flen > size - 12:
            raise CorruptFileError(f"footer length {flen} does not fit in a file of {size} bytes", offset=size - 8)
        foff = size - 8 - flen
        if flen <= tail_len - 8:
            fbytes = tail[tail_len - 8 - flen:tail_len - 8]
        else:
            fbytes = r.read(foff, flen, what="footer")
        if magic == b"PARE" or self._decryption_properties is not None:
            from .file.encryption import ReaderDecryption

            self.decryption, md = ReaderDecryption.open(fbytes, magic == b"PARE", self._decryption_properties,
                                                     offset=foff)
            _check_metadata(md, foff)
            return FooterLocation(md, foff, flen, magic == b"PARE")
        md = decode_file_metadata(fbytes, offset=foff)
        if md.encryption_algorithm is not None:
            # plaintext-footer encrypted file opened without keys: plaintext columns still read
            from .file.encryption import ReaderDecryption

            self.decryption = ReaderDecryption.plaintext_without_keys(md)
        _check_metadata(md, foff)
        return FooterLocation(md, foff, flen, False)

    # -- properties ------------------------------------------------------------------
    @property
    def schema(self) -> Schema:
        """The flat schema: one field per leaf column, named by its dotted path."""
        return Schema([c.field for c in self._leaves])

    @property
    def table_schema(self) -> Schema:
        """The schema of the tables :meth:`read` returns: one field per top-level field, structs,
        lists and maps as :class:`~pqbloom.schema.NestedField` (``schema`` lists the leaves instead)."""
        return Schema([n.to_field() for n in self._tree])

    @property
    def _tree(self) -> list[LNode]:
        if self._tree_cache is None:
            self._tree_cache = build_tree(self.metadata.schema, self._leaves)
        return self._tree_cache

    @property
    def columns(self) -> list[ColumnDescriptor]:
        return list(self._leaves)

    @property
    def num_rows(self) -> int:
        # some writers leave FileMetaData.num_rows at 0; the row groups are authoritative
        rgs = self.metadata.row_groups
        return sum(rgs.num_rows if isinstance(rgs, RowGroupList) else (rg.num_rows for rg in rgs))

    @property
    def num_row_groups(self) -> int:
        return len(self.metadata.row_groups)

    @property
    def io_stats(self) -> Any:
        return self.range_reader.stats

    @property
    def created_by(self) -> str | None:
        return self.metadata.created_by

    @property
    def key_value_metadata(self) -> dict[str, str | None]:
        return {kv.key: kv.value for kv in (self.metadata.key_value_metadata or [])}

    def column_chunk(self, row_group: int, column: int | str) -> Any:
        """The ColumnMetaData of a chunk (decrypted when needed)."""
        desc = self.column_descriptor(column)
        return self.chunk_metadata(row_group, desc)

    def close(self) -> None:
        self.range_reader.close()

    def __enter__(self) -> ParquetFile:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- reading ---------------------------------------------------------------------
    def read(self, columns: Sequence[str] | None = None, *, filters: Any = None, explain: Any = None) -> Table:
        """Read the whole file (or the named columns) into a Table.

        ``filters`` (a :func:`pqbloom.field` expression, a pyarrow-style DNF list or a filter string)
        keeps only matching rows, pruning row groups and pages first (see :mod:`pqbloom.predicate`);
        pass a :class:`pqbloom.Explain` as ``explain`` to have it filled with what the read did.
        """
        with memory_budget(self.memory_limit):
            # a filtered read keeps its pruned row groups unread: no dictionary pages are fetched for it
            filtered = filters is not None or explain is not None
            return self._with_metadata(self._read(columns, filters, explain), [] if filtered else None)

    def _read(self, columns: Sequence[str] | None, filters: Any, explain: Any) -> Table:
        if filters is not None or explain is not None:
            from .predicate import read_filtered

            return read_filtered(self, columns, filters, explain=explain)
        descs = self.select_columns(columns)
        if not self.num_row_groups:
            return self.empty_table(columns)
        # each chunk's pieces are copied straight into one preallocated column and then dropped,
        # so peak memory stays near the size of the result
        cols: list[Column] = []
        for d in descs:
            if isinstance(d, NestedSelection):
                parts = [self.read_nested(i, d) for i in range(self.num_row_groups)]
                cols.append(parts[0] if len(parts) == 1 else NestedColumn.concat(parts))
                continue
            builder = _ColumnBuilder(d.field, self.num_rows, self._byte_array_size_hint(d))
            for i in range(self.num_row_groups):
                builder.add(self.read_chunk_parts(i, d))
            cols.append(builder.finish())
        return Table(cols, num_rows=self.num_rows)

    def _byte_array_size_hint(self, desc: ColumnDescriptor) -> int | None:
        """Total value bytes of a BYTE_ARRAY column from SizeStatistics, when every chunk has them."""
        if desc.physical_type != PT.BYTE_ARRAY:
            return None
        total = 0
        for i in range(self.num_row_groups):
            try:
                m = self.chunk_metadata(i, desc)
            except ParquetError:
                return None
            ss = m.size_statistics
            if ss is None or ss.unencoded_byte_array_data_bytes is None or ss.unencoded_byte_array_data_bytes < 0:
                return None
            total += ss.unencoded_byte_array_data_bytes
        return total if total <= self.range_reader.size * 64 else None  # distrust absurd claims

    def read_row_group(self, i: int, columns: Sequence[str] | None = None) -> Table:
        """Read one row group (all columns, or the named ones) into a Table."""
        if not 0 <= i < self.num_row_groups:
            raise IndexError(f"row group {i} out of range (file has {self.num_row_groups})")
        descs = self.select_columns(columns)
        with memory_budget(self.memory_limit):
            return self._with_metadata(Table([self.read_nested(i, d) if isinstance(d, NestedSelection)
                                              else build_column(d.field, [self.read_chunk_parts(i, d)])
                                              for d in descs], num_rows=self.metadata.row_groups[i].num_rows), [i])

    def iter_batches(self, batch_size: int = 65536, columns: Sequence[str] | None = None, *, filters: Any = None,
                     explain: Any = None) -> Iterator[Table]:
        """Yield Tables of at most ``batch_size`` rows, decoding page by page.

        Memory stays bounded by the batch, one decoded page per column and the compressed bytes of the
        current column chunks; batches never span row groups.

        ``filters`` / ``explain`` as in :meth:`read`: then one row group's matching rows are decoded at a
        time (see :mod:`pqbloom.predicate`) and ``explain`` is complete once iteration ends.
        """
        if batch_size <= 0:
            raise ValueError("batch_size must be positive")
        return run_limited(self.memory_limit, self._iter_batches(batch_size, columns, filters, explain))

    def _iter_batches(self, batch_size: int, columns: Sequence[str] | None, filters: Any,
                      explain: Any) -> Iterator[Table]:
        if filters is not None or explain is not None:
            from .predicate import iter_filtered_batches

            yield from iter_filtered_batches(self, batch_size, columns, filters, explain=explain)
            return
        descs = self.select_columns(columns)
        for i in range(self.num_row_groups):
            expected = self.metadata.row_groups[i].num_rows
            if not descs:  # no columns: batches of rows only
                for start in range(0, expected, batch_size):
                    yield Table([], num_rows=min(batch_size, expected - start))
                continue
            streams = [iter([(self.read_nested(i, d),)]) if isinstance(d, NestedSelection)
                       else self._iter_chunk_pages(i, d) for d in descs]
            queues = [_NestedQueue() if isinstance(d, NestedSelection) else _RowQueue(d.field) for d in descs]
            emitted = 0
            while True:
                for q, stream in zip(queues, streams):
                    while q.rows < batch_size and not q.exhausted:
                        page = next(stream, None)
                        if page is None:
                            q.exhausted = True
                        else:
                            q.push(*page)
                n = min((q.rows for q in queues), default=0)
                n = min(n, batch_size)
                if n == 0:
                    if any(q.rows for q in queues) or (queues and emitted != expected):
                        raise CorruptFileError("columns disagree on the row count", row_group=i)
                    break
                emitted += n
                yield self._with_metadata(Table([q.pop(n) for q in queues]), [])

    def _with_metadata(self, table: Table, row_groups: Sequence[int] | None = None) -> Table:
        """``table`` with the footer's key-value metadata and stored Arrow types (pandas' metadata,
        ``ARROW:schema``: see :mod:`pqbloom.table.arrow_schema`). A column the Arrow types call
        dictionary-encoded also gets the dictionary pages of ``row_groups`` (all when None; none for
        batches, which cost what they hold, and filtered reads, which read no pruned row group): pyarrow
        reads them as a categorical's categories, used values or not."""
        kv = {k: v for k, v in self.key_value_metadata.items() if v is not None}
        hints = schema_hints(kv)
        kv.pop(ARROW_SCHEMA_KEY, None)
        cols = table.columns
        if hints is not None and (row_groups is None or len(row_groups)):
            rgs = range(self.num_row_groups) if row_groups is None else row_groups
            cols = [self._with_dictionary(c, hints, rgs) for c in cols]
        return Table(cols, kv, hints, num_rows=table.num_rows)

    def _with_dictionary(self, col: Column, hints: Any, row_groups: Sequence[int]) -> Column:
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

    def chunk_dictionary(self, row_group: int, column: int | str) -> Any:
        """The values of a flat column chunk's dictionary page (None when it has none)."""
        desc = self.column_descriptor(column)
        meta = self.chunk_metadata(row_group, desc)
        if meta.num_values == 0 or desc.max_repetition_level > 0:
            return None
        start, length = self.chunk_range(meta, row_group, desc)
        buf = self.range_reader.read(start, length, what="column chunk")
        try:
            for _kind, _values, _present, dictionary in self.iter_pages(buf, start, meta, row_group, desc):
                return dictionary  # known once the first data page is decoded
        except (ParquetError, *_DECODE_FAILURES) as exc:
            raise _located(exc, row_group, desc) from None
        return None

    def _iter_chunk_pages(self, rg: int, desc: ColumnDescriptor) -> Iterator[tuple[Any, np.ndarray | None]]:
        """Dense values and presence flags of each data page of one chunk, decoded lazily."""
        meta = self.chunk_metadata(rg, desc)
        if meta.num_values == 0:
            return
        start, length = self.chunk_range(meta, rg, desc)
        buf = self.range_reader.read(start, length, what="column chunk")
        try:
            for kind, values, present, dictionary in self.iter_pages(buf, start, meta, rg, desc):
                yield (_DictIndices(dictionary, values) if kind == "dict" else values), present
        except (ParquetError, *_DECODE_FAILURES) as exc:
            raise _located(exc, rg, desc) from None

    def empty_table(self, columns: Sequence[str] | None) -> Table:
        from .table import column_from_values

        return Table([empty_column(d.field) if isinstance(d, NestedSelection)
                      else column_from_values(d.field.name, [], d.field) for d in self.select_columns(columns)])

    def column_descriptor(self, column: int | str) -> ColumnDescriptor:
        if isinstance(column, int):
            if not 0 <= column < len(self._leaves):
                raise IndexError(f"column {column} out of range")
            return self._leaves[column]
        d = self._leaf_by_path(column)
        if d is None:
            raise KeyError(f"no column {column!r}; columns are {list(self._by_name)}")
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
        tree = self._tree
        if columns is None:
            return [self._top_selection(n) for n in tree]
        top = {n.name: n for n in tree}
        if len(top) != len(tree):
            for name in columns:
                if sum(n.name == name for n in tree) > 1:
                    raise SchemaError(f"column name {name!r} is ambiguous: the file's schema has several "
                                      "top-level fields of that name")
        out: list[Any] = []
        pruned: dict[str, tuple[int, set[int]]] = {}
        index: dict[str, tuple[LNode, list[LNode]]] | None = None
        for name in columns:
            node = top.get(name)
            if node is not None:
                out.append(self._top_selection(node))
                continue
            desc = self._leaf_by_path(name)
            if desc is not None and desc.max_repetition_level == 0:
                out.append(desc)
                continue
            if index is None:
                index = _path_index(tree)
            found = index.get(name)
            if found is None:
                raise KeyError(f"no column {name!r}; columns are {[n.name for n in tree]} "
                               f"(leaves: {list(self._by_name)})")
            node, ancestors = found
            if all(a.kind == "struct" for a in ancestors):
                out.append(NestedSelection(name, _dataclass_replace(node, name=name, nullable=node.def_level > 0)))
                continue
            root = ancestors[0]
            keep = {d.index for d in node.leaves()}
            if root.name in pruned:
                pruned[root.name][1].update(keep)
            else:
                pruned[root.name] = (len(out), keep)
                out.append(None)
        for root_name, (pos, keep) in pruned.items():
            node = top[root_name].prune(keep)
            assert node is not None
            out[pos] = NestedSelection(root_name, node)
        return out

    def _top_selection(self, node: LNode) -> Any:
        if node.kind == "leaf":
            assert node.desc is not None
            return node.desc
        return NestedSelection(node.name, node)

    def read_leaf_levels(self, rg: int, desc: ColumnDescriptor) -> LeafLevels:
        """One leaf chunk with its definition and repetition levels (for nested assembly)."""
        meta = self.chunk_metadata(rg, desc)
        f = desc.field
        if meta.num_values == 0:
            z = np.zeros(0, np.int32)
            return LeafLevels(concat_values([], f), z if desc.max_definition_level else None,
                              z if desc.max_repetition_level else None, 0)
        start, length = self.chunk_range(meta, rg, desc)
        buf = self.range_reader.read(start, length, what="column chunk")
        try:
            parts: list[tuple[str, Any]] = []
            defs_l: list[np.ndarray] = []
            reps_l: list[np.ndarray] = []
            dictionary = None
            for kind, values, (defs, reps), page_dictionary in self.iter_pages(buf, start, meta, rg, desc,
                                                                                levels=True):
                dictionary = page_dictionary
                parts.append((kind, values))
                if defs is not None:
                    defs_l.append(defs)
                if reps is not None:
                    reps_l.append(reps)
            pages = None
            pieces = assemble_values(f, parts, None, dictionary, meta.num_values).pieces
            if len(defs_l) == len(pieces) > 1 and all(type(v) is np.ndarray for v in pieces):
                # numeric pages stay apart: assembly scatters each into place (no concatenated copy)
                pages = [(len(d), v) for d, v in zip(defs_l, pieces)]
                values = None
            else:
                values = concat_values(pieces, f)
            d_all = (np.concatenate(defs_l) if len(defs_l) != 1 else defs_l[0]) if desc.max_definition_level else None
            r_all = (np.concatenate(reps_l) if len(reps_l) != 1 else reps_l[0]) if desc.max_repetition_level else None
            n = meta.num_values
            for lv in (d_all, r_all):
                if lv is not None and len(lv) != n:
                    raise CorruptFileError(f"decoded {len(lv)} levels for {n} values")
            check_levels(desc, d_all, r_all, n)
            # narrow levels (in range, just checked) so that assembly moves a quarter of the bytes
            if d_all is not None and desc.max_definition_level < 128:
                d_all = d_all.astype(np.int8, copy=False)
            if r_all is not None and desc.max_repetition_level < 128:
                r_all = r_all.astype(np.int8, copy=False)
            return LeafLevels(values, d_all, r_all, n, pages)
        except (ParquetError, *_DECODE_FAILURES) as exc:
            raise _located(exc, rg, desc) from None

    def read_nested(self, rg: int, sel: NestedSelection, levels: dict[int, LeafLevels] | None = None) -> Column:
        """The nested column ``sel`` of row group ``rg``: every leaf's levels (from ``levels`` when
        already decoded), then assembly."""
        expected = self.metadata.row_groups[rg].num_rows
        if expected is None or expected < 0:
            raise CorruptFileError("negative row count", row_group=rg)
        if not sel.leaves:  # a field of empty groups: no chunk tells its slots apart; all null, as pyarrow reads it
            return null_column(sel.field, expected)
        data = {}
        for d in sel.leaves:
            lv = levels.get(d.index) if levels else None
            if lv is None:
                lv = self.read_leaf_levels(rg, d)
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

    def chunk_metadata(self, rg_index: int, desc: ColumnDescriptor) -> Any:
        rgs = self.metadata.row_groups
        if not 0 <= rg_index < len(rgs):
            raise IndexError(f"row group {rg_index} out of range")
        chunks = rgs[rg_index].columns
        if len(chunks) != len(self._leaves):
            raise CorruptFileError(f"row group has {len(chunks)} column chunks for {len(self._leaves)} columns",
                                   row_group=rg_index)
        cc = chunks[desc.index]
        if self.decryption is not None:
            return self.decryption.column_metadata(cc, rg_index, desc)
        if cc.meta_data is None:
            raise CorruptFileError("column chunk has no metadata", row_group=rg_index, column=desc.dotted_path)
        return cc.meta_data

    def _open_module(self, module_type: int, data: bytes, rg: int, desc: ColumnDescriptor, page: int = -1) -> bytes:
        """The single place where stored module bytes become plaintext."""
        if self.decryption is None:
            return data
        return self.decryption.decrypt(module_type, data, rg, desc, page)

    # -- column chunks ----------------------------------------------------------------
    def chunk_range(self, meta: Any, rg: int, desc: ColumnDescriptor) -> tuple[int, int]:
        data_off = meta.data_page_offset
        dict_off = meta.dictionary_page_offset
        if data_off is None:
            raise CorruptFileError("column chunk has no data page offset", row_group=rg, column=desc.dotted_path)
        start = dict_off if dict_off is not None and 4 <= dict_off < data_off else data_off
        length = meta.total_compressed_size
        if start is None or length is None or start < 4 or length < 0:
            raise CorruptFileError("column chunk has invalid offsets", row_group=rg, column=desc.dotted_path)
        end_limit = self.footer_location.footer_offset
        if start + length > end_limit:
            raise CorruptFileError(f"column chunk of {length} bytes at offset {start} runs past the footer",
                                   row_group=rg, column=desc.dotted_path, offset=start)
        return start, length

    def read_chunk_parts(self, rg: int, desc: ColumnDescriptor) -> ChunkParts:
        """Decode one column chunk into dense value pieces plus presence flags; check its row count."""
        parts = self._read_chunk_unchecked(rg, desc)
        expected = self.metadata.row_groups[rg].num_rows
        if expected is None or expected < 0:
            raise CorruptFileError("negative row count", row_group=rg)
        if parts.num_rows != expected:
            raise CorruptFileError(f"column has {parts.num_rows} rows but the row group has {expected}",
                                   row_group=rg, column=desc.dotted_path)
        return parts

    def _read_chunk_unchecked(self, rg: int, desc: ColumnDescriptor) -> ChunkParts:
        meta = self.chunk_metadata(rg, desc)
        if meta.num_values == 0:  # empty chunks may carry no pages and zero offsets
            return ChunkParts([], None, 0)
        start, length = self.chunk_range(meta, rg, desc)
        buf = self.range_reader.read(start, length, what="column chunk")
        try:
            return self.decode_chunk(buf, start, meta, rg, desc)
        except (ParquetError, *_DECODE_FAILURES) as exc:
            raise _located(exc, rg, desc) from None

    def _next_chunk_start(self, start: int) -> int:
        bound = self.footer_location.footer_offset
        for rg in self.metadata.row_groups:
            for cc in rg.columns:
                m = cc.meta_data
                if m is None:
                    continue
                for off in (m.dictionary_page_offset, m.data_page_offset):
                    if off is not None and start < off < bound:
                        bound = off
        return bound

    def decode_chunk(self, buf: bytes, base: int, meta: Any, rg: int, desc: ColumnDescriptor) -> ChunkParts:
        parts: list[tuple[str, Any]] = []
        levels: list[np.ndarray] = []
        dictionary = None
        for kind, values, present, page_dictionary in self.iter_pages(buf, base, meta, rg, desc):
            dictionary = page_dictionary
            parts.append((kind, values))
            if present is not None:
                levels.append(present)
        return assemble_values(desc.field, parts, levels if desc.max_definition_level > 0 else None, dictionary,
                         meta.num_values)

    def _extend_chunk(self, buf: bytes, base: int) -> bytes:
        """Some old writers undercount total_compressed_size; let pages run on up to the next chunk."""
        bound = self._next_chunk_start(base)
        if bound <= base + len(buf):
            raise CorruptFileError("pages run past the end of the column chunk", offset=base)
        return self.range_reader.read(base, bound - base, what="column chunk")

    def iter_pages(self, buf: bytes, base: int, meta: Any, rg: int, desc: ColumnDescriptor, *,
                    levels: bool = False) -> Iterator[tuple[str, Any, Any, Any]]:
        """Yield (kind, values, presence flags or None, dictionary) for each data page of a chunk.

        With ``levels=True`` the third item is instead ``(definition levels, repetition levels)``,
        each None when its maximum is 0 (nested leaves are read that way).
        """
        if desc.max_repetition_level > 0 and not levels:
            raise UnsupportedError(f"column {desc.dotted_path!r} is repeated; read it through its top-level field")
        max_rep = desc.max_repetition_level
        extended = False
        f = desc.field
        codec = compression_mod.codec_by_id(meta.codec)
        total_values = meta.num_values
        if total_values is None or total_values < 0:
            raise CorruptFileError("negative value count in column metadata")
        rows = self.metadata.row_groups[rg].num_rows
        if max_rep == 0 and rows is not None and total_values > rows:
            # one value per row: more is impossible, and a few bytes of RLE could make it gigabytes
            raise CorruptFileError(f"column chunk claims {total_values:,} values for a row group of {rows:,} rows")
        max_def = desc.max_definition_level
        dictionary = None
        seen = 0
        pos = 0
        page_ordinal = 0
        v2_always_compressed = _v2_flag_ignored(self.created_by)
        while seen < total_values:
            if pos >= len(buf):
                if not extended:
                    buf, extended = self._extend_chunk(buf, base), True
                    continue
                raise CorruptFileError(f"column chunk ends after {seen} of {total_values} values",
                                       offset=base + pos)
            hdr_raw_start = pos
            if self.decryption is not None and self.decryption.column_encrypted(desc):
                mlen = int.from_bytes(buf[pos:pos + 4], "little")
                if pos + 4 + mlen > len(buf):
                    raise CorruptFileError("encrypted page header runs past the chunk", offset=base + pos)
                # the first page may be the dictionary page (header module type 5, no page ordinal):
                # file.encryption tries the likelier module type first and GCM tells which one is right
                hbytes = self.decryption.decrypt_page_header(
                    buf[pos:pos + 4 + mlen], rg, desc, page_ordinal,
                    first=dictionary is None and page_ordinal == 0,
                    dictionary_hint=meta.dictionary_page_offset is not None
                    and base + pos == meta.dictionary_page_offset)
                header, _ = decode_prefix(T.PageHeader, hbytes, offset=base + pos, what="page header")
                pos += 4 + mlen
            else:
                header, pos = decode_at(T.PageHeader, buf, pos, offset=base + pos, what="page header")
            csize, usize = header.compressed_page_size, header.uncompressed_page_size
            if csize is not None and csize >= 0 and pos + csize > len(buf) and not extended:
                buf, extended = self._extend_chunk(buf, base), True
            if csize is None or usize is None or csize < 0 or usize < 0 or pos + csize > len(buf):
                raise CorruptFileError(f"page sizes (compressed {csize}, uncompressed {usize}) do not fit the chunk",
                                       offset=base + hdr_raw_start)
            stored = buf[pos:pos + csize]
            pos += csize
            if self.verify_checksums and header.crc is not None:
                if (zlib.crc32(stored) & 0xFFFFFFFF) != (header.crc & 0xFFFFFFFF):
                    raise ChecksumError("page CRC mismatch", offset=base + hdr_raw_start)
            ptype = header.type
            if ptype == T.PageType.DICTIONARY_PAGE:
                dh = header.dictionary_page_header
                if dh is None or dh.num_values is None or dh.num_values < 0:
                    raise CorruptFileError("dictionary page header is missing or has a negative count",
                                           offset=base + hdr_raw_start)
                if dictionary is not None:
                    raise CorruptFileError("second dictionary page in a column chunk", offset=base + hdr_raw_start)
                body = self._open_module(3, stored, rg, desc)
                raw = compression_mod.decompress(codec, body, usize)
                if dh.encoding not in (E.PLAIN, E.PLAIN_DICTIONARY):
                    raise UnsupportedError(f"dictionary page encoding {dh.encoding}")
                dictionary, _ = decode_plain(raw, f.physical_type, dh.num_values, f.type_length)
                continue
            if ptype == T.PageType.INDEX_PAGE:
                continue
            if ptype not in (T.PageType.DATA_PAGE, T.PageType.DATA_PAGE_V2):
                raise CorruptFileError(f"unknown page type {ptype}", offset=base + hdr_raw_start)
            body = self._open_module(2, stored, rg, desc, page_ordinal)
            page_ordinal += 1
            page_present: np.ndarray | None = None
            if ptype == T.PageType.DATA_PAGE:
                dp = header.data_page_header
                if dp is None:
                    raise CorruptFileError("data page without its header", offset=base + hdr_raw_start)
                n = dp.num_values
                if n is None or n < 0 or n > total_values - seen:
                    raise CorruptFileError(f"data page claims {n} values; {total_values - seen} remain",
                                           offset=base + hdr_raw_start)
                raw = compression_mod.decompress(codec, body, usize)
                p = 0
                reps = defs = None
                if max_rep > 0:
                    if dp.repetition_level_encoding == E.BIT_PACKED:
                        reps = decode_bit_packed_levels(raw, bit_width_of(max_rep), n)
                        p = (n * bit_width_of(max_rep) + 7) // 8
                    else:
                        reps, p = decode_levels_v1(raw, bit_width_of(max_rep), n, level_dtype(max_rep))
                if max_def > 0:
                    if dp.definition_level_encoding == E.BIT_PACKED:
                        defs = decode_bit_packed_levels(memoryview(raw)[p:], bit_width_of(max_def), n)
                        p += (n * bit_width_of(max_def) + 7) // 8
                    else:
                        defs, used = decode_levels_v1(memoryview(raw)[p:], bit_width_of(max_def), n,
                                                      level_dtype(max_def))
                        p += used
                    charge(n, f"the presence flags of a page of {n:,} values")
                    present = defs == max_def
                    page_present = present
                    n_present = int(present.sum())
                else:
                    n_present = n
                enc = dp.encoding
                values_buf = memoryview(raw)[p:]
            else:
                dp2 = header.data_page_header_v2
                if dp2 is None:
                    raise CorruptFileError("v2 data page without its header", offset=base + hdr_raw_start)
                n = dp2.num_values
                rows = dp2.num_rows
                if max_rep == 0 and max_def == 0 and n is not None and n > total_values - seen \
                        and rows is not None and 0 <= rows <= total_values - seen:
                    # a required flat column holds one value per row and its page has no levels to
                    # count: where num_values claims more than the chunk has left but num_rows fits,
                    # the rows are what the chunk and the row group say, and what pyarrow and DuckDB
                    # read (by rows); parquet-go wrote such pages. With levels, pyarrow refuses too.
                    n = rows
                dl, rl = dp2.definition_levels_byte_length, dp2.repetition_levels_byte_length
                if n is None or n < 0 or n > total_values - seen or dl is None or rl is None or dl < 0 or rl < 0 \
                        or dl + rl > len(body):
                    raise CorruptFileError("v2 data page header is inconsistent", offset=base + hdr_raw_start)
                reps = defs = None
                if max_rep > 0:
                    reps = decode_rle_bitpacked(body[:rl], bit_width_of(max_rep), n, level_dtype(max_rep))
                if max_def > 0:
                    defs = decode_rle_bitpacked(body[rl:rl + dl], bit_width_of(max_def), n, level_dtype(max_def))
                    charge(n, f"the presence flags of a page of {n:,} values")
                    present = defs == max_def
                    page_present = present
                    n_present = int(present.sum())
                else:
                    n_present = n
                rest = body[rl + dl:]
                if dp2.is_compressed is None or dp2.is_compressed or v2_always_compressed:
                    rest = compression_mod.decompress(codec, rest, usize - rl - dl)
                enc = dp2.encoding
                values_buf = memoryview(rest)
            seen += n
            kind, values = self._decode_values(values_buf, enc, n_present, f, dictionary)
            yield kind, values, ((defs, reps) if levels else page_present), dictionary
        if seen != total_values:
            raise CorruptFileError(f"column chunk holds {seen} values, metadata says {total_values}")

    def _decode_values(self, buf: memoryview, enc: int, n: int, f: Any, dictionary: Any) -> tuple[str, Any]:
        if is_dictionary_encoding(enc):
            if dictionary is None:
                raise CorruptFileError("dictionary-encoded page without a dictionary page")
            return ("dict", decode_values(buf, enc, f.physical_type, n))
        return ("values", decode_values(buf, enc, f.physical_type, n, f.type_length, type_name=f.type_name))

    # -- Bloom filters ------------------------------------------------------------------
    def _bloom_site(self, row_group: int, desc: ColumnDescriptor, meta: Any) -> BloomFilterSite | None:
        """Where the footer puts the chunk's Bloom filter (None: no filter); see :mod:`pqbloom.file.bloom_site`."""
        off = meta.bloom_filter_offset
        if off is None:
            return None
        chunk = None
        if meta.num_values:  # empty chunks may carry zero offsets
            try:
                start, length = self.chunk_range(meta, row_group, desc)
                chunk = (start, start + length)
            except CorruptFileError:
                pass  # unknown page extent: reading the chunk fails on its own; skip the overlap check
        return BloomFilterSite(int(off), None if meta.bloom_filter_length is None else int(meta.bloom_filter_length),
                               self.footer_location.footer_offset, chunk, row_group, desc.dotted_path)

    def bloom_filter_might_contain(self, row_group: int, column: int | str, value: Any) -> bool | None:
        """Probe one value against a chunk's Bloom filter with minimal IO; None when there is no filter.

        For a plaintext filter this reads the header and the single 32-byte block the value maps to
        (two small reads instead of the whole bitset). Encrypted filters are read whole, since a
        GCM module can only be authenticated in full. A filter whose header disagrees with the
        footer or the spec raises :class:`~pqbloom.errors.BloomFilterError` (see :mod:`pqbloom.file.bloom_site`).
        """
        desc = self.column_descriptor(column)
        meta = self.chunk_metadata(row_group, desc)
        site = self._bloom_site(row_group, desc, meta)
        if site is None:
            return None
        if self.decryption is not None and self.decryption.column_encrypted(desc):
            bf = self.bloom_filter(row_group, column)
            return None if bf is None else bf.might_contain(value, desc.physical_type, desc.type_length)
        site.check_placement()
        num_bytes, hlen = self._bloom_header(site, 64)
        h = hash_scalar(value, desc.physical_type, desc.type_length)
        block = int(BloomFilter.block_index(h, num_bytes // 32))
        words = self.range_reader.read(site.offset + hlen + 32 * block, 32, what="Bloom filter block")
        return BloomFilter.check_block(words, h)

    def _bloom_header(self, site: BloomFilterSite, probe: int) -> tuple[int, int]:
        """Read (at most ``probe`` bytes, never into the footer) and check a plaintext filter's header."""
        room = site.footer_offset - site.offset if site.length is None else site.length
        head = self.range_reader.read(site.offset, min(probe, room), what="Bloom filter header")
        num_bytes, hlen = BloomFilter.parse_header(head, offset=site.offset, row_group=site.row_group,
                                                   column=site.column)
        site.check_extent(hlen + num_bytes, f"Bloom filter header ({hlen} bytes, numBytes {num_bytes}) and bitset")
        return num_bytes, hlen

    def bloom_filter(self, row_group: int, column: int | str) -> BloomFilter | None:
        """The column chunk's Bloom filter, or None when it has none. It is bound to the column's
        physical type, so ``bloom_filter(0, "email").might_contain("a@x.org")`` needs no type.

        Raises :class:`~pqbloom.errors.BloomFilterError` when the filter's header disagrees with the
        footer or the spec (see :mod:`pqbloom.file.bloom_site`): such a filter can report present values absent.
        """
        desc = self.column_descriptor(column)
        bf = self._read_bloom_filter(row_group, desc)
        return None if bf is None else bf.for_column(desc.physical_type, desc.type_length)

    def _read_bloom_filter(self, row_group: int, desc: ColumnDescriptor) -> BloomFilter | None:
        meta = self.chunk_metadata(row_group, desc)
        site = self._bloom_site(row_group, desc, meta)
        if site is None:
            return None
        if self.decryption is not None and self.decryption.column_encrypted(desc):
            return self.decryption.read_bloom_filter(self.range_reader, site, desc)
        site.check_placement()
        if site.length is not None:  # one read: header and bitset
            data = self.range_reader.read(site.offset, site.length, what="Bloom filter")
            num_bytes, hlen = BloomFilter.parse_header(data, offset=site.offset, row_group=row_group,
                                                       column=site.column)
            site.check_extent(hlen + num_bytes, f"Bloom filter header ({hlen} bytes, numBytes {num_bytes}) and bitset")
            return BloomFilter.from_bitset(memoryview(data)[hlen:])
        # no length (older parquet-java): a bounded header read, then the bitset
        num_bytes, hlen = self._bloom_header(site, 256)
        bitset = self.range_reader.read(site.offset + hlen, num_bytes, what="Bloom filter bitset")
        return BloomFilter.from_bitset(bitset)


def split_nested(pf: ParquetFile, rg: int, descs: Sequence[Any], rows: Any, ex: Any = None,
                 levels: dict[int, LeafLevels] | None = None) -> tuple[dict[str, Column], list[Any]]:
    """For the filtered reader (:mod:`pqbloom.predicate`): read the nested selections among
    ``descs`` for row group ``rg`` and return them (by output name) with the flat rest.

    ``rows`` selects rows: None (all), sorted row numbers, or an object with ``absolute`` and
    ``num_rows`` (row ranges). Nested columns are assembled from their whole chunks; ``levels``
    holds leaf chunks of this row group already decoded (by leaf index), which are reused.
    """
    out: dict[str, Column] = {}
    flat = []
    for d in descs:
        if not isinstance(d, NestedSelection):
            flat.append(d)
            continue
        if ex is not None and hasattr(ex, "chunks_read_whole"):
            ex.chunks_read_whole += sum(1 for leaf in d.leaves if not levels or leaf.index not in levels)
        col = pf.read_nested(rg, d, levels)
        if rows is not None:
            idx = rows.absolute(np.arange(rows.num_rows)) if hasattr(rows, "absolute") else np.asarray(rows)
            col = col.take(idx)
        out[d.dotted_path] = col
    return out, flat


class NestedSelection:
    """A nested output column: its name, its logical subtree (maybe pruned) and the leaves it reads."""

    is_nested = True

    def __init__(self, name: str, node: LNode) -> None:
        self.dotted_path = name
        self.node = node
        self.leaves = node.leaves()
        self.max_repetition_level = max((d.max_repetition_level for d in self.leaves), default=0)

    @property
    def field(self) -> Field:
        return self.node.to_field()

    def __repr__(self) -> str:
        return f"NestedSelection({self.dotted_path!r}, leaves={[d.dotted_path for d in self.leaves]})"


def _dataclass_replace(node: LNode, **kw: Any) -> LNode:
    from dataclasses import replace

    return replace(node, **kw)


def _path_index(tree: list[LNode]) -> dict[str, tuple[LNode, list[LNode]]]:
    """Dotted schema path -> (outermost logical node for it, its logical ancestors)."""
    out: dict[str, tuple[LNode, list[LNode]]] = {}

    def walk(n: LNode, anc: list[LNode]) -> None:
        out.setdefault(".".join(n.path), (n, anc))
        for c in n.children:
            walk(c, anc + [n])

    for n in tree:
        walk(n, [])
    return out


class _NestedQueue:
    """A nested column of one row group waiting to be cut into batches."""

    def __init__(self) -> None:
        self.col: Column | None = None
        self.rows = 0
        self.exhausted = False

    def push(self, col: Column) -> None:
        self.col = col
        self.rows = len(col)

    def pop(self, n: int) -> Column:
        assert self.col is not None
        head = self.col.slice(0, n)
        self.col = self.col.slice(n, len(self.col))
        self.rows -= n
        return head


@dataclass
class ChunkParts:
    """A decoded column chunk: dense (non-null) value pieces and, for nullable columns, presence flags."""

    pieces: list[Any]
    present: np.ndarray | None
    num_rows: int


def _take(dictionary: Any, idx: np.ndarray) -> Any:
    """Expand dictionary indices, first charging the result to the read's memory budget (if any):
    a small page of indices into long entries is where a file grows most when decoded."""
    budget = current_budget()
    if budget is not None and len(idx):
        if isinstance(dictionary, BinaryArray):
            lens = dictionary.lengths()
            lo, hi = int(idx.min()), int(idx.max())
            if 0 <= lo and hi < len(lens):  # take_dictionary reports bad indices
                budget.charge(int(lens[idx].sum()) + 8 * (len(idx) + 1),
                              f"the dictionary expansion of {len(idx):,} values")
        else:
            arr = np.asarray(dictionary)
            budget.charge(len(idx) * arr.itemsize * int(np.prod(arr.shape[1:], dtype=np.int64)),
                          f"the dictionary expansion of {len(idx):,} values")
    return take_dictionary(dictionary, idx)


def assemble_values(f: Any, parts: list[tuple[str, Any]], levels: list[np.ndarray] | None, dictionary: Any,
              total: int) -> ChunkParts:
    """Resolve dictionary pages and gather the presence flags of a chunk."""
    if parts and all(kind == "dict" for kind, _ in parts):
        idx = np.concatenate([v for _, v in parts]) if len(parts) > 1 else parts[0][1]
        pieces = [_take(dictionary, idx)]
    else:
        pieces = [_take(dictionary, v) if kind == "dict" else v for kind, v in parts]
    if levels is None:
        return ChunkParts(pieces, None, total)
    present = np.concatenate(levels) if len(levels) != 1 else levels[0]
    if len(present) != total:
        raise CorruptFileError(f"decoded {len(present)} definition levels for {total} values")
    return ChunkParts(pieces, present, total)


# what numpy and the codecs raise on garbage, turned into CorruptFileError naming the chunk; and
# MemoryError, which is the machine's limit, not the file's fault (MemoryLimitError)
_DECODE_FAILURES = (ValueError, IndexError, TypeError, OverflowError, MemoryError)


def _located(exc: Exception, rg: int, desc: ColumnDescriptor) -> Exception:
    """The error to raise for a failure while decoding a chunk: typed, naming the row group and column."""
    if isinstance(exc, MemoryError):
        exc = out_of_memory(exc, f"column {desc.dotted_path!r} of row group {rg}")
        exc.located = True  # type: ignore[attr-defined]
        return exc
    if isinstance(exc, CorruptFileError):
        return exc if exc.column is not None else type(exc)(str(exc), row_group=rg, column=desc.dotted_path)
    if isinstance(exc, MemoryLimitError) and not getattr(exc, "located", False):
        located = MemoryLimitError(f"{exc} (column {desc.dotted_path!r}, row group {rg})")
        located.located = True  # type: ignore[attr-defined]
        return located
    if isinstance(exc, ParquetError):
        return exc
    return CorruptFileError(f"cannot decode column chunk: {exc.__class__.__name__}: {exc}",
                            row_group=rg, column=desc.dotted_path)


class _DictIndices:
    """A page's dictionary indices, expanded only when a batch takes them: one page of small
    indices into long entries can decode to far more than the batch asked for."""

    __slots__ = ("dictionary", "idx")

    def __init__(self, dictionary: Any, idx: np.ndarray) -> None:
        self.dictionary = dictionary
        self.idx = idx

    def __len__(self) -> int:
        return len(self.idx)

    def slice(self, start: int, stop: int) -> _DictIndices:
        return _DictIndices(self.dictionary, self.idx[start:stop])

    def expand(self) -> Any:
        return _take(self.dictionary, self.idx)


class _RowQueue:
    """Decoded pages of one column waiting to be cut into batches by row count."""

    def __init__(self, f: Any) -> None:
        self.f = f
        self.pages: list[tuple[Any, np.ndarray | None]] = []
        self.rows = 0
        self.exhausted = False

    def push(self, dense: Any, present: np.ndarray | None) -> None:
        n = len(present) if present is not None else len(dense)
        if n:
            self.pages.append((dense, present))
            self.rows += n

    def pop(self, n: int) -> Column:
        taken: list[ChunkParts] = []
        need = n
        while need:
            dense, present = self.pages[0]
            rows = len(present) if present is not None else len(dense)
            if rows <= need:
                self.pages.pop(0)
                taken.append(ChunkParts([dense], present, rows))
                need -= rows
                continue
            k = need if present is None else int(np.count_nonzero(present[:need]))
            sliceable = isinstance(dense, (BinaryArray, _DictIndices))
            head = dense.slice(0, k) if sliceable else dense[:k]
            tail = dense.slice(k, len(dense)) if sliceable else dense[k:]
            taken.append(ChunkParts([head], None if present is None else present[:need], need))
            self.pages[0] = (tail, None if present is None else present[need:])
            need = 0
        self.rows -= n
        for part in taken:
            part.pieces = [p.expand() if isinstance(p, _DictIndices) else p for p in part.pieces]
        return build_column(self.f, taken)


class _ColumnBuilder:
    """Gathers decoded chunks of one column into preallocated buffers (falls back to a final concat)."""

    def __init__(self, f: Any, num_rows: int, data_bytes: int | None) -> None:
        self.f = f
        self.num_rows = num_rows
        self.data_bytes = data_bytes
        self.n = 0  # dense values so far
        self.rows = 0
        self.out: Any = None
        self.data: np.ndarray | None = None
        self.offsets: np.ndarray | None = None
        self.nbytes = 0
        self.fallback: list[ChunkParts] = []
        self.present: list[np.ndarray] = []
        self.has_nulls = False

    def add(self, parts: ChunkParts) -> None:
        self.rows += parts.num_rows
        self.present.append(parts.present if parts.present is not None else np.ones(parts.num_rows, bool))
        if parts.present is not None and not bool(parts.present.all()):
            self.has_nulls = True
        if self.fallback or self.rows > self.num_rows:
            self.fallback.append(parts)
            return
        for piece in parts.pieces:
            if not self._copy(piece):
                self.fallback.append(ChunkParts([piece], None, 0))

    def _copy(self, piece: Any) -> bool:
        k = len(piece)
        if isinstance(piece, BinaryArray):
            if self.data_bytes is None:
                return False
            if self.data is None:
                charge(self.data_bytes + 8 * (self.num_rows + 1), f"the result buffer of column {self.f.name!r}")
                self.data = np.empty(self.data_bytes, np.uint8)
                self.offsets = np.zeros(self.num_rows + 1, np.int64)
            c = piece.compact()
            if self.nbytes + c.nbytes > len(self.data) or self.n + k > self.num_rows:
                return False
            assert self.offsets is not None
            self.data[self.nbytes:self.nbytes + c.nbytes] = c.data
            self.offsets[self.n + 1:self.n + k + 1] = c.offsets[1:] + self.nbytes
            self.nbytes += c.nbytes
            self.n += k
            return True
        if self.out is None:
            charge(self.num_rows * piece.dtype.itemsize * int(np.prod(piece.shape[1:], dtype=np.int64)),
                   f"the result buffer of column {self.f.name!r}")
            self.out = np.empty((self.num_rows,) + piece.shape[1:], piece.dtype)
        if self.n + k > self.num_rows or piece.dtype != self.out.dtype:
            return False
        self.out[self.n:self.n + k] = piece
        self.n += k
        return True

    def finish(self) -> Column:
        if self.fallback:
            # something did not fit the fast path: join what was copied plus the rest
            head: list[Any] = []
            if self.out is not None:
                head.append(self.out[:self.n])
            elif self.data is not None and self.offsets is not None:
                head.append(BinaryArray(self.offsets[:self.n + 1], self.data[:self.nbytes]))
            chunks = [ChunkParts(head + [p for c in self.fallback for p in c.pieces], None, 0)]
            dense = concat_values(chunks[0].pieces, self.f)
        elif self.out is not None:
            dense = self.out[:self.n]
        elif self.data is not None and self.offsets is not None:
            dense = BinaryArray(self.offsets[:self.n + 1], self.data[:self.nbytes])
        else:
            dense = concat_values([], self.f)
        if not self.has_nulls:
            return Column(self.f, dense, None)
        present = np.concatenate(self.present)
        return Column(self.f, _scatter(dense, present), ~present)


def build_column(f: Any, chunks: list[ChunkParts]) -> Column:
    """Join chunks (of one or several row groups) into one full-length Column with a single copy."""
    dense = concat_values([p for c in chunks for p in c.pieces], f)
    if all(c.present is None for c in chunks):
        return Column(f, dense, None)
    present = np.concatenate([c.present if c.present is not None else np.ones(c.num_rows, bool) for c in chunks])
    if bool(present.all()):
        return Column(f, dense, None)
    return Column(f, _scatter(dense, present), ~present)


def concat_values(pieces: list[Any], f: Any) -> Any:
    if not pieces:
        from .table import column_from_values

        return column_from_values(f.name, [], f).values
    if len(pieces) == 1:
        return pieces[0]
    if isinstance(pieces[0], BinaryArray):
        charge(sum(p.nbytes + 8 * len(p) for p in pieces), f"joining the pages of column {f.name!r}")
        return BinaryArray.concat(pieces)
    charge(sum(p.nbytes for p in pieces), f"joining the pages of column {f.name!r}")
    return np.concatenate(pieces)


def _scatter(dense: Any, present: np.ndarray) -> Any:
    n = len(present)
    row_bytes = 8 if isinstance(dense, BinaryArray) else dense.itemsize * int(np.prod(dense.shape[1:], dtype=np.int64))
    charge(n * row_bytes, "placing nulls")
    if isinstance(dense, BinaryArray):
        lens = np.zeros(n, np.int64)
        lens[present] = dense.lengths()
        offs = np.zeros(n + 1, np.int64)
        np.cumsum(lens, out=offs[1:])
        c = dense.compact()
        return BinaryArray(offs, c.data)
    shape = (n,) + dense.shape[1:]
    out = np.zeros(shape, dense.dtype)
    out[present] = dense
    return out


def _v2_flag_ignored(created_by: str | None) -> bool:
    """ARROW-10353: parquet-cpp before 2.0.0 (Arrow before 3.0) compressed the values of every v2 data
    page with the column's codec yet stored ``is_compressed = false``; Arrow decompresses those pages
    whatever the flag says, keyed on this writer version, and so do we (for no other writer)."""
    writer = parse_created_by(created_by)
    return writer is not None and writer[0] == "parquet-cpp" and writer[1] < (2, 0, 0)


def _check_metadata(md: Any, offset: int) -> None:
    if md.schema is None or md.row_groups is None:
        raise CorruptFileError("file metadata lacks a schema or row groups", offset=offset)
    rgs = md.row_groups
    if isinstance(rgs, RowGroupList):
        # row groups decode on access (and check their column chunks then); the row counts are known now
        for i, n in enumerate(rgs.num_rows):
            if n is None or n < 0:
                raise CorruptFileError("row group lacks its row count or column chunks", row_group=i, offset=offset)
        return
    for i, rg in enumerate(rgs):
        # required Thrift fields may be absent in a corrupt footer; catch it here, not as a TypeError later
        if rg.num_rows is None or rg.num_rows < 0 or rg.columns is None:
            raise CorruptFileError("row group lacks its row count or column chunks", row_group=i, offset=offset)


def read_table(source: Any, columns: Sequence[str] | None = None, *, filters: Any = None, explain: Any = None,
               **kwargs: Any) -> Table:
    """Read a Parquet file, or a directory of them (:mod:`pqbloom.dataset`), into a Table.

    ``columns`` selects by name; ``filters`` / ``explain`` as in :meth:`ParquetFile.read` (here the
    explained IO includes the footer). A filter on a leaf inside a list or map
    (``field("tags.list.element") == 5``) keeps the rows where some element satisfies it. Other keyword arguments go to :class:`ParquetFile`
    (``decryption_properties``, ``verify_checksums``, ``memory_limit``; one ceiling for the whole call).
    """
    import os

    if isinstance(source, (str, os.PathLike)) and os.path.isdir(source):
        from .dataset import read_dataset

        with memory_budget(kwargs.get("memory_limit")):
            return read_dataset(source, columns, filters=filters, explain=explain, **kwargs)
    with ParquetFile(source, **kwargs) as pf, memory_budget(pf.memory_limit):
        if filters is None and explain is None:
            return pf.read(columns)
        from .predicate import read_filtered

        return pf._with_metadata(read_filtered(pf, columns, filters, explain=explain, io_from_open=True), [])


def read_metadata(source: Any, **kwargs: Any) -> Any:
    with ParquetFile(source, **kwargs) as pf:
        return pf.metadata


def read_schema(source: Any, **kwargs: Any) -> Schema:
    with ParquetFile(source, **kwargs) as pf:
        return pf.schema
