"""ParquetWriter: tables -> row groups -> column chunks -> pages -> bytes on disk.

The writer decides the file layout (row groups, Bloom filters in either
placement, page indexes, footer). Every module it writes passes through one
step, :meth:`ParquetWriter._module`, which encrypts it when the column (or
footer) has a key, so encryption is one step rather than sprinkled around.
"""

from __future__ import annotations

import functools
import zlib
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from . import compression as compression_mod
from ._version import __version__
from .arrays import BinaryArray
from .bloom import BloomFilter, hash_values, optimal_num_bytes
from .encodings import (
    bit_width_of,
    build_dictionary,
    encode_dictionary_indices,
    encode_levels_v1,
    encode_plain,
    encode_rle_bitpacked,
    encode_values,
    encode_with_dictionary,
    estimate_distinct_fraction,
)
from .errors import SchemaError
from .file.levels import shred
from .format import T, encode, gc_paused
from .io import open_sink
from .schema import (
    ColumnDescriptor,
    Field,
    LNode,
    LogicalType,
    NestedField,
    Schema,
    build_tree,
    check_writable,
    leaves_from_thrift,
)
from .statistics import build_column_index, build_offset_index, compute_statistics, sort_order_for
from .table import Column, NestedColumn, Table
from .table.arrow_schema import footer_metadata, from_pyarrow

__all__ = ["ParquetWriter", "write_table", "WriterOptions", "BloomFilterOptions"]

CREATED_BY = f"pqbloom version {__version__}"
MAGIC = b"PAR1"
PT = T.Type
E = T.Encoding

_ENCODINGS_BY_NAME = {
    "PLAIN": E.PLAIN,
    "DELTA_BINARY_PACKED": E.DELTA_BINARY_PACKED,
    "DELTA_LENGTH_BYTE_ARRAY": E.DELTA_LENGTH_BYTE_ARRAY,
    "DELTA_BYTE_ARRAY": E.DELTA_BYTE_ARRAY,
    "BYTE_STREAM_SPLIT": E.BYTE_STREAM_SPLIT,
    "RLE": E.RLE,
}


@dataclass
class BloomFilterOptions:
    """Bloom filter settings of one column (names as in pyarrow's ``bloom_filter_options``)."""

    fpp: float = 0.01
    ndv: int | None = None  # None: size from the row group's actual distinct count
    max_bytes: int = 128 * 1024 * 1024

    @classmethod
    def from_user(cls, spec: Any) -> BloomFilterOptions | None:
        if spec is None or spec is False:
            return None
        if spec is True:
            return cls()
        if isinstance(spec, BloomFilterOptions):
            return spec
        if isinstance(spec, dict):
            unknown = set(spec) - {"fpp", "ndv", "max_bytes", "enabled"}
            if unknown:
                raise ValueError(f"unknown bloom filter options {sorted(unknown)}")
            if spec.get("enabled", True) is False:
                return None
            opt = cls(fpp=float(spec.get("fpp", 0.01)), ndv=spec.get("ndv"),
                      max_bytes=int(spec.get("max_bytes", 128 * 1024 * 1024)))
            if not 0.0 < opt.fpp < 1.0:
                raise ValueError(f"bloom filter fpp must be in (0, 1), got {opt.fpp}")
            if opt.ndv is not None and opt.ndv < 0:
                raise ValueError("bloom filter ndv must be positive")
            return opt
        raise ValueError(f"bad bloom filter option {spec!r}: use True, False or a dict")


@dataclass
class WriterOptions:
    compression: str | dict[str, str] = "snappy"
    row_group_size: int = 1024 * 1024  # rows
    max_row_group_bytes: int | None = None  # approximate, uncompressed
    data_page_size: int = 1024 * 1024
    data_page_version: str = "1.0"
    use_dictionary: bool | list[str] = True
    dictionary_pagesize_limit: int = 1024 * 1024
    column_encoding: dict[str, str] = field(default_factory=dict)
    write_statistics: bool | list[str] = True
    write_page_index: bool = True
    write_page_checksum: bool = False
    bloom_filter_options: dict[str, Any] = field(default_factory=dict)
    bloom_filter_position: str = "after_row_group"
    bloom_filter_skip_dictionary: bool = False
    key_value_metadata: dict[str, str] | None = None
    statistics_truncate_length: int = 64
    fsync: bool = False
    encryption_properties: Any = None

    def validate(self, schema: Schema, leaves: list[ColumnDescriptor] | None = None) -> None:
        if self.data_page_version not in ("1.0", "2.0"):
            raise ValueError("data_page_version must be '1.0' or '2.0'")
        if self.bloom_filter_position not in ("after_row_group", "end"):
            raise ValueError("bloom_filter_position must be 'after_row_group' or 'end'")
        if self.row_group_size <= 0 or self.data_page_size <= 0:
            raise ValueError("row_group_size and data_page_size must be positive")
        names = set(schema.names) | {d.dotted_path for d in (schema.leaves() if leaves is None else leaves)}
        for what, cols in (("bloom_filter_options", self.bloom_filter_options),
                           ("column_encoding", self.column_encoding)):
            unknown = set(cols) - names
            if unknown:
                raise SchemaError(f"{what} names columns not in the schema: {sorted(unknown)}")
        if isinstance(self.compression, dict):
            unknown = set(self.compression) - names
            if unknown:
                raise SchemaError(f"compression names columns not in the schema: {sorted(unknown)}")
        for name, enc in self.column_encoding.items():
            if enc.upper() not in _ENCODINGS_BY_NAME:
                raise ValueError(f"unknown encoding {enc!r} for column {name!r}")


def _converted_type(lt: LogicalType | None) -> int | None:
    """The legacy ConvertedType of a logical type (one Thrift build per distinct type, not per column)."""
    return _converted_type_cached(lt, lt.legacy) if lt is not None else None


@functools.lru_cache(maxsize=256)
def _converted_type_cached(lt: LogicalType, legacy: bool) -> int | None:
    # ``legacy`` takes no part in LogicalType equality, so it is part of the key here
    return lt.to_thrift()[1]


def _logical_kind(f: Field) -> str | None:
    lt = f.logical_type
    if lt is None:
        return None
    if lt.kind == "INTEGER":
        return "INTEGER_SIGNED" if lt.signed else "INTEGER_UNSIGNED"
    return lt.kind


@dataclass
class _PageIndexEntry:
    stats: list[Any]
    null_pages: list[bool]
    locations: list[tuple[int, int, int]]
    unencoded: list[int] | None
    rep_histograms: list[np.ndarray] | None = None  # per page, when max_rep > 0
    def_histograms: list[np.ndarray] | None = None  # per page, when max_def > 0


@dataclass
class _PendingChunk:
    """What a written column chunk still needs once its row group is done."""

    chunk: Any  # T.ColumnChunk
    meta: Any  # T.ColumnMetaData
    bloom: BloomFilter | None
    page_index: _PageIndexEntry | None
    column: int
    row_group: int


class _ColumnPlan:
    """Per-leaf-column decisions made once from the options.

    Options name a column by its top-level name or, for a leaf of a nested field, by its dotted
    path (``"tags.list.element"``); the path wins when both are given.
    """

    def __init__(self, f: Field, index: int, opts: WriterOptions, desc: ColumnDescriptor | None = None,
                 top: str | None = None) -> None:
        self.field = f
        self.index = index
        top = top or f.name

        def opt(d: Any, default: Any = None) -> Any:
            return d.get(f.name, d.get(top, default))

        comp = opt(opts.compression, "snappy") if isinstance(opts.compression, dict) else opts.compression
        self.codec = compression_mod.codec_by_name(comp)
        enc_name = opt(opts.column_encoding)
        self.encoding = _ENCODINGS_BY_NAME[enc_name.upper()] if enc_name else None
        if self.encoding is not None:
            _check_encoding(f, self.encoding)
        ud = opts.use_dictionary
        self.dictionary = ((f.name in ud or top in ud) if isinstance(ud, (list, tuple, set)) else bool(ud)) \
            and self.encoding is None
        if f.physical_type == PT.BOOLEAN:
            self.dictionary = False
        ws = opts.write_statistics
        self.statistics = (f.name in ws or top in ws) if isinstance(ws, (list, tuple, set)) else bool(ws)
        self.logical_kind = _logical_kind(f)
        self.sort_order = sort_order_for(f.physical_type, self.logical_kind, _converted_type(f.logical_type))
        self.bloom = BloomFilterOptions.from_user(opt(opts.bloom_filter_options))
        if self.bloom is not None and f.physical_type == PT.BOOLEAN:
            if f.name in opts.bloom_filter_options or desc is None:
                raise SchemaError(f"column {f.name!r}: Bloom filters are not defined for BOOLEAN columns")
            self.bloom = None  # a whole nested field asked for filters: skip its boolean leaves
        if desc is None:
            self.max_def = 1 if f.nullable else 0
            self.max_rep = 0
            self.path = [f.name]
        else:
            self.max_def = desc.max_definition_level
            self.max_rep = desc.max_repetition_level
            self.path = list(desc.path)


@dataclass
class _LeafData:
    """What one column chunk holds: dense values and levels (None when their maximum is 0)."""

    dense: Any
    defs: np.ndarray | None
    reps: np.ndarray | None
    num_values: int
    all_defined: bool = False  # a flat column without nulls: every definition level is the maximum
    dictionary: Any = None  # values the dictionary page must hold, in order (a categorical's categories)


def _check_encoding(f: Field, enc: int) -> None:
    p = f.physical_type
    ok = {
        E.PLAIN: True,
        E.DELTA_BINARY_PACKED: p in (PT.INT32, PT.INT64),
        E.DELTA_LENGTH_BYTE_ARRAY: p == PT.BYTE_ARRAY,
        E.DELTA_BYTE_ARRAY: p in (PT.BYTE_ARRAY, PT.FIXED_LEN_BYTE_ARRAY),
        E.BYTE_STREAM_SPLIT: p in (PT.FLOAT, PT.DOUBLE, PT.INT32, PT.INT64, PT.FIXED_LEN_BYTE_ARRAY),
        E.RLE: p == PT.BOOLEAN,
    }[enc]
    if not ok:
        raise SchemaError(f"encoding {T.Encoding._VALUES_TO_NAMES[enc]} cannot encode column {f.name!r} "
                          f"({f.type_name})")


def _take(values: Any, idx: Any) -> Any:
    if isinstance(values, BinaryArray):
        return values.take(idx) if not isinstance(idx, slice) else values.slice(idx.start, idx.stop)
    return values[idx]


def _bytes_per_value(values: Any, f: Field) -> float:
    if isinstance(values, BinaryArray):
        n = len(values)
        return 4.0 + (values.nbytes / n if n else 0.0)
    if f.physical_type == PT.BOOLEAN:
        return 0.125
    if isinstance(values, np.ndarray):
        return float(values.itemsize * (values.shape[1] if values.ndim == 2 else 1))
    return 8.0


def _page_bounds(num_rows: int, bytes_per_row: float, page_size: int) -> list[tuple[int, int]]:
    rows_per_page = max(1, int(page_size // max(bytes_per_row, 1e-9)))
    rows_per_page = min(rows_per_page, 20_000_000)
    return [(s, min(s + rows_per_page, num_rows)) for s in range(0, num_rows, rows_per_page)] or [(0, 0)]


class ParquetWriter:
    """Write a Parquet file one table (row group or more) at a time.

    ``with ParquetWriter("out.parquet", schema, compression="zstd") as w: w.write_table(t)``

    The file appears at the target path only when the writer closes without
    error; until then it is written beside it under a temporary name.
    """

    def __init__(self, where: Any, schema: Schema | Any, **options: Any) -> None:
        #: key-value metadata and Arrow types the data came with (pandas', pyarrow's): stored in the footer
        self._data_metadata: dict[str, str] | None = None
        self._arrow_hints: Any = None
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
        unknown = set(options) - set(WriterOptions.__dataclass_fields__)
        if unknown:
            raise TypeError(f"unknown writer options: {sorted(unknown)}")
        self.options = WriterOptions(**options)
        # flattened once: leaves, tree, validation and the footer all use it (10,000 columns cost)
        with gc_paused():
            self._schema_elements = schema.to_thrift()
            leaves = leaves_from_thrift(self._schema_elements)[0]
            self._tree: list[LNode] = build_tree(self._schema_elements, leaves)
        self.options.validate(schema, leaves)
        for f in schema.fields:
            check_writable(f)
        self.schema = schema
        self._num_leaves = len(leaves)
        self._plans: list[_ColumnPlan] = []
        #: for each top-level field, the plans of its leaves
        self._field_plans: list[list[_ColumnPlan]] = []
        for f, node in zip(schema.fields, self._tree):
            if isinstance(f, NestedField):
                plans = [_ColumnPlan(d.field, d.index, self.options, d, f.name) for d in node.leaves()]
            else:
                plans = [_ColumnPlan(f, len(self._plans), self.options)]
            self._plans.extend(plans)
            self._field_plans.append(plans)
        self._crypto = None
        if self.options.encryption_properties is not None:
            from .file.encryption import WriterEncryption  # encryption is wired in its own module

            self._crypto = WriterEncryption(self.options.encryption_properties, schema)
        # external key material (a sidecar) is committed together with the file, never before it
        self._sink = open_sink(where, fsync=self.options.fsync,
                               companion=getattr(self.options.encryption_properties, "key_material", None))
        self._row_groups: list[Any] = []
        #: one entry per Bloom filter written: its size, the distinct values it holds, bits per value, est. FPP
        self.bloom_filter_stats: list[dict[str, Any]] = []
        self._pending: list[_PendingChunk] = []  # chunks whose Bloom filter / page index are written at the end
        # encoded definition levels of pages without nulls, by (entries, bit width, v2): many
        # columns of one row group share them
        self._full_levels: dict[tuple[int, int, bool], bytes] = {}
        self._num_rows = 0
        self._closed = False
        try:
            self._sink.write(b"PARE" if self._crypto is not None and not self._crypto.plaintext_footer else MAGIC)
        except BaseException:
            self._sink.abort()
            raise

    # -- public ---------------------------------------------------------------
    def write_table(self, table: Any, row_group_size: int | None = None) -> None:
        """Append rows, cutting row groups of at most ``row_group_size`` rows."""
        t = Table.coerce(table, self.schema)
        if self._data_metadata is None:  # the first table's metadata describes the file
            self._data_metadata, self._arrow_hints = t.metadata, t.arrow_schema
        if t.schema.names != self.schema.names:
            t = _conform(t, self.schema)
        elif t.schema != self.schema:
            t = _conform(t, self.schema)
        size = row_group_size or self.options.row_group_size
        if self.options.max_row_group_bytes and t.num_rows:
            per_row = sum(_row_bytes(c) for c in t.columns)
            size = max(1, min(size, int(self.options.max_row_group_bytes // max(per_row, 1e-9))))
        try:
            if t.num_rows == 0:
                return
            for start in range(0, t.num_rows, size):
                with gc_paused():  # a row group of many columns builds many small metadata objects
                    self._write_row_group(t.slice(start, start + size))
        except BaseException:
            self.abort()
            raise

    write = write_table

    def write_batch(self, batch: Any) -> None:
        """Write ``batch`` as exactly one row group."""
        t = Table.coerce(batch, self.schema)
        self.write_table(t, row_group_size=max(t.num_rows, 1))

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

    def __enter__(self) -> ParquetWriter:
        return self

    def __exit__(self, exc_type: Any, exc: Any, tb: Any) -> None:
        if exc_type is not None:
            self.abort()
        else:
            self.close()

    # -- modules ----------------------------------------------------------------
    def _module(self, module_type: int, data: bytes, rg: int, col: int, page: int = -1) -> bytes:
        """The single place where a module becomes its on-disk bytes (encrypted when keyed)."""
        if self._crypto is None:
            return data
        return self._crypto.encrypt(module_type, data, rg, col, page)

    def _column_encrypted(self, col: int) -> bool:
        return self._crypto is not None and self._crypto.is_encrypted(col)

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
                    datas.append(_LeafData(sl.values, sl.defs if plan.max_def else None,
                                           sl.reps if plan.max_rep else None, sl.num_values))
            else:
                plan = plans[0]
                mask = column.mask
                defs = None if plan.max_def == 0 else (
                    np.ones(len(column), np.uint8) if mask is None else (~mask).astype(np.uint8))
                datas = [_LeafData(column.dense(), defs, None, len(column), mask is None,
                                   getattr(column, "dictionary", None))]
            for plan, data in zip(plans, datas):
                p = self._write_column_chunk(plan, data, rg)
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
        self._row_groups.append(T.RowGroup(
            columns=chunks, total_byte_size=total_uncompressed, num_rows=t.num_rows,
            file_offset=file_offset, total_compressed_size=compressed, ordinal=rg if rg < 32768 else None))
        self._num_rows += t.num_rows

    def _write_column_chunk(self, plan: _ColumnPlan, data: _LeafData, rg: int) -> _PendingChunk:
        f = plan.field
        col = plan.index
        opts = self.options
        n = data.num_values  # level entries (= rows for a flat column)
        dense = data.dense
        n_dense = len(dense)
        def_levels, rep_levels = data.defs, data.reps
        # pages are cut at record boundaries: the level entry where each row starts...
        if rep_levels is None:
            row_start = None
            num_rows = n
        else:
            row_start = np.concatenate([np.flatnonzero(rep_levels == 0), [n]])
            num_rows = len(row_start) - 1
        # ...and the dense index where each level entry's value would start
        if def_levels is None or n_dense == n:
            dense_start = None
        else:
            dense_start = np.zeros(n + 1, np.int64)
            np.cumsum(def_levels == plan.max_def, out=dense_start[1:])

        # -- dictionary decision
        dict_values = None
        indices = None
        if plan.dictionary and (n_dense > 0 or data.dictionary is not None and len(data.dictionary) > 0):
            built = None
            if data.dictionary is not None:
                built = encode_with_dictionary(data.dictionary, dense, f.physical_type, opts.dictionary_pagesize_limit)
            if built is None and estimate_distinct_fraction(dense) <= 0.5:
                built = build_dictionary(dense, f.physical_type, opts.dictionary_pagesize_limit)
            if built is not None:
                dict_values, indices = built
        value_encoding = E.RLE_DICTIONARY if dict_values is not None else (plan.encoding or E.PLAIN)

        # -- Bloom filter over the dense values
        bloom = None
        if plan.bloom is not None and not (opts.bloom_filter_skip_dictionary and dict_values is not None):
            hashes = hash_values(dense, f.physical_type)
            ndv = plan.bloom.ndv
            if ndv is None:
                ndv = _distinct_count(hashes)
            else:
                ndv = min(ndv, len(hashes))  # as peers do: never size past what the row group holds
            bloom = BloomFilter(optimal_num_bytes(max(ndv, 1), plan.bloom.fpp, plan.bloom.max_bytes))
            bloom.insert_hashes(hashes)
            distinct = ndv if plan.bloom.ndv is None else _distinct_count(hashes)
            self.bloom_filter_stats.append({
                "row_group": rg, "column": f.name, "num_bytes": bloom.num_bytes, "distinct_values": distinct,
                "bits_per_distinct_value": bloom.num_bytes * 8 / max(distinct, 1),
                "estimated_fpp": bloom.estimated_fpp(),
            })

        # -- pages
        v2 = opts.data_page_version == "2.0"
        codec = plan.codec
        data_start = self._sink.tell()
        dictionary_offset = None
        total_uncompressed = 0
        encodings = set()
        encoding_stats: dict[tuple[int, int], int] = {}
        if dict_values is not None:
            dict_bytes = encode_plain(dict_values, f.physical_type, f.type_length)
            body = compression_mod.compress(codec, dict_bytes)
            body = self._module(3, body, rg, col)
            header = T.PageHeader(type=T.PageType.DICTIONARY_PAGE, uncompressed_page_size=len(dict_bytes),
                                  compressed_page_size=len(body),
                                  dictionary_page_header=T.DictionaryPageHeader(
                                      num_values=len(dict_values), encoding=E.PLAIN, is_sorted=False))
            if opts.write_page_checksum:
                header.crc = _crc(body)
            hbytes = self._module(5, encode(header), rg, col)
            dictionary_offset = self._sink.tell()
            _write_pair(self._sink, hbytes, body)
            total_uncompressed += len(hbytes) + len(dict_bytes)
            encodings.add(E.PLAIN)
            encoding_stats[(T.PageType.DICTIONARY_PAGE, E.PLAIN)] = 1
            per_row = bit_width_of(max(len(dict_values) - 1, 0)) / 8 + 0.01
        else:
            per_row = _bytes_per_value(dense, f)
        bounds = _page_bounds(num_rows, max(per_row * n_dense / max(num_rows, 1), 0.01), opts.data_page_size)
        data_page_offset = self._sink.tell()
        pi_stats, pi_null_pages, pi_locations, pi_unencoded = [], [], [], []
        # level histograms (SizeStatistics) per page, for every column whose max level is > 0
        pi_rep_hist: list[np.ndarray] = []
        pi_def_hist: list[np.ndarray] = []
        chunk_stats = None
        def_width, rep_width = bit_width_of(plan.max_def), bit_width_of(plan.max_rep)
        for page_no, (r0, r1) in enumerate(bounds):
            if self._crypto is not None:
                self._crypto.check_ordinal("page", page_no)
            e0, e1 = (r0, r1) if row_start is None else (int(row_start[r0]), int(row_start[r1]))
            d0, d1 = (e0, e1) if dense_start is None else (int(dense_start[e0]), int(dense_start[e1]))
            pv = _take(dense, slice(d0, d1))
            if dict_values is not None:
                assert indices is not None
                vbytes = encode_dictionary_indices(indices[d0:d1], len(dict_values))
            else:
                vbytes = encode_values(pv, value_encoding, f.physical_type, f.type_length)
            num_values = e1 - e0
            num_nulls = num_values - (d1 - d0)
            page_stats = None
            if plan.statistics and (opts.write_page_index or True):
                page_stats = compute_statistics(pv, f.physical_type, null_count=num_nulls,
                                                sort_order=plan.sort_order, logical_kind=plan.logical_kind,
                                                type_length=f.type_length,
                                                max_binary_length=opts.statistics_truncate_length)
            rep_bytes = def_bytes = b""
            encode_lv = encode_rle_bitpacked if v2 else encode_levels_v1
            # levels: RLE for runs of 64 or more, bit-packing between: fewer runs to decode, and as
            # small once compressed
            if rep_levels is not None:
                rep_bytes = encode_lv(rep_levels[e0:e1], rep_width, 64)
            if def_levels is not None:
                if data.all_defined:  # the same bytes for every page of this length: encode them once
                    key = (e1 - e0, def_width, v2)
                    def_bytes = self._full_levels.get(key, b"")
                    if not def_bytes:
                        if len(self._full_levels) >= 64:
                            self._full_levels.clear()
                        def_bytes = self._full_levels[key] = encode_lv(def_levels[e0:e1], def_width, 64)
                else:
                    def_bytes = encode_lv(def_levels[e0:e1], def_width, 64)
            levels = rep_bytes + def_bytes
            if v2:
                comp = compression_mod.compress(codec, vbytes)
                is_compressed = True
                if len(comp) >= len(vbytes) and codec.name != "UNCOMPRESSED":
                    comp, is_compressed = vbytes, False
                raw_body = levels + comp
                uncompressed_size = len(levels) + len(vbytes)
                page_header = T.PageHeader(
                    type=T.PageType.DATA_PAGE_V2, uncompressed_page_size=uncompressed_size,
                    data_page_header_v2=T.DataPageHeaderV2(
                        num_values=num_values, num_nulls=num_nulls, num_rows=r1 - r0, encoding=value_encoding,
                        definition_levels_byte_length=len(def_bytes), repetition_levels_byte_length=len(rep_bytes),
                        is_compressed=is_compressed))
                ptype = T.PageType.DATA_PAGE_V2
            else:
                plain_body = levels + vbytes
                raw_body = compression_mod.compress(codec, plain_body)
                uncompressed_size = len(plain_body)
                page_header = T.PageHeader(
                    type=T.PageType.DATA_PAGE, uncompressed_page_size=uncompressed_size,
                    data_page_header=T.DataPageHeader(
                        num_values=num_values, encoding=value_encoding,
                        definition_level_encoding=E.RLE, repetition_level_encoding=E.RLE))
                ptype = T.PageType.DATA_PAGE
            body = self._module(2, raw_body, rg, col, page_no)
            page_header.compressed_page_size = len(body)
            if opts.write_page_checksum:
                page_header.crc = _crc(body)
            hbytes = self._module(4, encode(page_header), rg, col, page_no)
            offset = self._sink.tell()
            _write_pair(self._sink, hbytes, body)
            total_uncompressed += len(hbytes) + uncompressed_size
            encodings.add(value_encoding)
            encoding_stats[(ptype, value_encoding)] = encoding_stats.get((ptype, value_encoding), 0) + 1
            pi_locations.append((offset, len(hbytes) + len(body), r0))
            pi_stats.append(page_stats)
            pi_null_pages.append(num_nulls == num_values)
            if isinstance(pv, BinaryArray):
                pi_unencoded.append(pv.nbytes)
            if rep_levels is not None:  # level 0 starts each of the page's rows
                pi_rep_hist.append(_level_histogram(rep_levels[e0:e1], plan.max_rep, 0, r1 - r0))
            if plan.max_def > 0:  # the top level marks each value
                pi_def_hist.append(_level_histogram(def_levels[e0:e1] if def_levels is not None else None,
                                                    plan.max_def, plan.max_def, num_values - num_nulls))
        if def_levels is not None or rep_levels is not None or v2:
            encodings.add(E.RLE)
        if plan.statistics and len(bounds) == 1 and pi_stats[0] is not None:
            chunk_stats = pi_stats[0]  # one page: its statistics are the chunk's (same values, same nulls)
        elif plan.statistics:
            chunk_stats = compute_statistics(dense, f.physical_type, null_count=n - n_dense,
                                             sort_order=plan.sort_order, logical_kind=plan.logical_kind,
                                             type_length=f.type_length,
                                             max_binary_length=opts.statistics_truncate_length)
        total_compressed = self._sink.tell() - data_start
        meta = T.ColumnMetaData(
            type=f.physical_type, encodings=sorted(encodings), path_in_schema=plan.path, codec=codec.thrift_id,
            num_values=n, total_uncompressed_size=total_uncompressed, total_compressed_size=total_compressed,
            data_page_offset=data_page_offset, dictionary_page_offset=dictionary_offset, statistics=chunk_stats,
            encoding_stats=[T.PageEncodingStats(page_type=k[0], encoding=k[1], count=v)
                            for k, v in sorted(encoding_stats.items())],
        )
        rep_hists = pi_rep_hist if plan.max_rep > 0 else None
        def_hists = pi_def_hist if plan.max_def > 0 else None
        if isinstance(dense, BinaryArray) or rep_hists is not None or def_hists is not None:
            # histograms are omitted where the max level is 0, as the spec allows and pyarrow does
            meta.size_statistics = T.SizeStatistics(
                unencoded_byte_array_data_bytes=dense.nbytes if isinstance(dense, BinaryArray) else None,
                repetition_level_histogram=_sum_histograms(rep_hists, plan.max_rep),
                definition_level_histogram=_sum_histograms(def_hists, plan.max_def))
        chunk = T.ColumnChunk(file_offset=0, meta_data=meta)
        page_index = None
        if opts.write_page_index:
            page_index = _PageIndexEntry(pi_stats if plan.statistics else [], pi_null_pages, pi_locations,
                                         pi_unencoded if isinstance(dense, BinaryArray) else None,
                                         rep_hists, def_hists)
        return _PendingChunk(chunk, meta, bloom, page_index, col, rg)

    # -- end of file ------------------------------------------------------------------
    def _write_bloom(self, p: _PendingChunk) -> None:
        if p.bloom is None:
            return
        offset = self._sink.tell()
        header = self._module(8, p.bloom.header_bytes(), p.row_group, p.column)
        bitset = self._module(9, p.bloom.bitset(), p.row_group, p.column)
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
            data = self._module(6, encode(ci), p.row_group, p.column)
            p.chunk.column_index_offset = self._sink.tell()
            p.chunk.column_index_length = len(data)
            self._sink.write(data)
        for p in self._pending:
            pi = p.page_index
            if pi is None:
                continue
            oi = build_offset_index(pi.locations, pi.unencoded)
            data = self._module(7, encode(oi), p.row_group, p.column)
            p.chunk.offset_index_offset = self._sink.tell()
            p.chunk.offset_index_length = len(data)
            self._sink.write(data)
        kv_items = footer_metadata(self.schema, self.options.key_value_metadata, self._data_metadata,
                                   self._arrow_hints)
        kv = [T.KeyValue(key=str(k), value=None if v is None else str(v)) for k, v in kv_items.items()] or None
        fmd = T.FileMetaData(
            version=1, schema=self._schema_elements, num_rows=self._num_rows, row_groups=self._row_groups,
            key_value_metadata=kv, created_by=CREATED_BY,
            column_orders=[T.ColumnOrder(TYPE_ORDER=T.TypeDefinedOrder())] * self._num_leaves)  # encoded, never mutated
        if self._crypto is not None:
            tail = self._crypto.finish_footer(fmd, self._pending)
        else:
            footer = encode(fmd)
            tail = footer + len(footer).to_bytes(4, "little") + MAGIC
        self._sink.write(tail)


_SMALL_WRITE = 1 << 16


def _write_pair(sink: Any, head: bytes, body: bytes) -> None:
    """Write a header and its body; one sink call when the body is small enough that joining
    them costs less than a second call (many small column chunks)."""
    if len(body) <= _SMALL_WRITE:
        sink.write(head + body)
    else:
        sink.write(head)
        sink.write(body)


def _level_histogram(levels: np.ndarray | None, max_level: int, known_level: int, known_count: int) -> np.ndarray:
    """How many of ``levels`` are 0..max_level, given the count of ``known_level`` (which the
    caller has already): one ``count_nonzero`` pass per other level but the last, which is the
    remainder; far cheaper than ``np.bincount`` for the few levels a schema has."""
    n = len(levels) if levels is not None else known_count
    if max_level == 1:  # the common case (a flat nullable column): the other level is the remainder
        return np.array([n - known_count, known_count] if known_level == 1 else [known_count, n - known_count],
                        np.int64)
    h = np.zeros(max_level + 1, np.int64)
    h[known_level] = known_count
    rest = [k for k in range(max_level + 1) if k != known_level]
    if not rest:
        return h
    if levels is not None:
        for k in rest[:-1]:
            h[k] = np.count_nonzero(levels == k)
    h[rest[-1]] = n - int(h.sum())
    return h


def _sum_histograms(per_page: list[np.ndarray] | None, max_level: int) -> list[int] | None:
    """A chunk's level histogram: the sum of its pages' (None when the column has no such levels)."""
    if per_page is None:
        return None
    if len(per_page) == 1:
        return per_page[0].tolist()
    total = np.zeros(max_level + 1, np.int64)
    for h in per_page:
        total += h
    return [int(x) for x in total]


def _row_bytes(col: Column) -> float:
    """Approximate uncompressed bytes per row of a (possibly nested) column."""
    if isinstance(col, NestedColumn):
        n = max(len(col), 1)
        return sum(_row_bytes(c) * len(c) for c in col.children) / n + 1
    return _bytes_per_value(col.values, col.field)


def _distinct_count(hashes: np.ndarray) -> int:
    """Distinct 64-bit hashes (a sort beats np.unique, which is far slower for this in numpy 2.x)."""
    if len(hashes) == 0:
        return 0
    s = np.sort(hashes)
    return 1 + int(np.count_nonzero(s[1:] != s[:-1]))


def _crc(data: bytes) -> int:
    c = zlib.crc32(data)
    return c - (1 << 32) if c >= 1 << 31 else c  # thrift i32 is signed


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
            from .table import conform

            cols.append(conform(c, f))
            continue
        if c.field.physical_type != f.physical_type or c.field.type_length != f.type_length:
            raise SchemaError(f"column {f.name!r} is {c.field.type_name}, the schema says {f.type_name}")
        if c.mask is not None and not f.nullable:
            raise SchemaError(f"column {f.name!r} is declared not null but has {c.null_count} nulls")
        cols.append(Column(f, c.values, c.mask))
    return Table(cols)


def write_table(table: Any, where: Any, **options: Any) -> None:
    """Write ``table`` (a pqbloom Table, dict of columns, pandas DataFrame or pyarrow Table) to ``where``.

    Options follow pyarrow's names: ``compression``, ``row_group_size``, ``data_page_size``,
    ``data_page_version``, ``use_dictionary``, ``column_encoding``, ``write_statistics``,
    ``write_page_index``, ``write_page_checksum``, ``bloom_filter_options``, ``bloom_filter_position``,
    ``key_value_metadata``, ``encryption_properties``.
    """
    schema = options.pop("schema", None)
    t = Table.coerce(table, schema)
    with ParquetWriter(where, schema or t.schema, **options) as w:
        w.write_table(t)
