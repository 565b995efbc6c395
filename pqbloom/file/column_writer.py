"""One column chunk -> bytes: the dictionary choice, page cuts at record boundaries, levels, value
encodings (through :func:`pqbloom.encodings.encode_values`), compression, statistics (chunk and page),
the Bloom filter's insertions, and what the page index will need. The file writer
(:mod:`pqbloom.file.writer`) decides where chunks, filters and indexes go; the chunk writer receives
its encryption (:class:`pqbloom.file.encryption.WriterEncryption`) as an argument.
"""

from __future__ import annotations

import contextlib
import functools
import logging
import zlib
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any, Protocol

import numpy as np

from .. import compression as compression_mod
from ..arrays import BinaryArray
from ..bloom import BloomFilter, hash_values, optimal_num_bytes
from ..compression import Buffer
from ..crypto import ModuleType
from ..encodings import (
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
from ..errors import SchemaError
from ..format import (
    Encoding,
    PageType,
    PhysicalType,
    column_chunk,
    column_metadata,
    encode_data_page_header,
    encode_data_page_header_v2,
    encode_dictionary_page_header,
)
from ..kernels.dictionary import count_distinct
from ..schema import ColumnDescriptor, Field, LogicalType
from ..statistics import DictionaryBounds, compute_statistics, sort_order_for
from .encryption import WriterEncryption, encrypt_module
from .options import ENCODINGS_BY_NAME, BloomFilterOptions, WriterOptions
from .parallel import map_ordered

log = logging.getLogger(__name__)

__all__ = ["ByteSink", "ColumnChunkWriter", "ColumnPlan", "EncodedPage", "LeafData", "PendingChunk",
           "PageIndexEntry", "THREADED_MIN_BYTES", "bytes_per_value", "compress_page", "check_encoding", "page_bounds", "level_histogram", "sum_histograms",
           "distinct_count", "write_pair"]


def _converted_type(lt: LogicalType | None) -> int | None:
    """The legacy ConvertedType of a logical type (worked out once per distinct type, not per column)."""
    return _converted_type_cached(lt, lt.legacy) if lt is not None else None


@functools.lru_cache(maxsize=256)
def _converted_type_cached(lt: LogicalType, legacy: bool) -> int | None:
    # ``legacy`` takes no part in LogicalType equality, so it is part of the key here
    return lt.to_annotation()[1]


def _logical_kind(f: Field) -> str | None:
    lt = f.logical_type
    if lt is None:
        return None
    if lt.kind == "INTEGER":
        return "INTEGER_SIGNED" if lt.signed else "INTEGER_UNSIGNED"
    return lt.kind


@dataclass
class PageIndexEntry:
    """What a chunk's column and offset index will hold: per page statistics, null flags, locations
    (offset, size, first row), unencoded byte-array sizes and level histograms."""

    stats: list[Any]
    null_pages: list[bool]
    locations: list[tuple[int, int, int]]
    unencoded: list[int] | None
    rep_histograms: list[np.ndarray] | None = None  # per page, when max_rep > 0
    def_histograms: list[np.ndarray] | None = None  # per page, when max_def > 0


@dataclass
class PendingChunk:
    """What a written column chunk still needs once its row group is done."""

    chunk: Any  # the ColumnChunk struct (pqbloom.format.column_chunk), completed by the file writer
    meta: Any  # its ColumnMetaData struct
    bloom: BloomFilter | None
    page_index: PageIndexEntry | None
    column: int
    row_group: int


class ColumnPlan:
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
        cl = opts.compression_level
        self.level: int | None = opt(cl) if isinstance(cl, dict) else cl
        if isinstance(cl, int) and isinstance(opts.compression, dict) and \
                self.codec.name not in compression_mod.LEVELS:
            self.level = None  # one level for all, codecs per column: it applies where the codec has levels
        compression_mod.check_level(self.codec, self.level)
        enc_name = opt(opts.encodings_by_column)
        self.encoding = ENCODINGS_BY_NAME[enc_name.upper()] if enc_name else None
        if self.encoding is not None:
            check_encoding(f, self.encoding)
        bss = opts.use_byte_stream_split
        #: the encoding of pages written without a dictionary when ``column_encoding`` names none
        self.fallback_encoding: Encoding | None = None
        if (f.name in bss or top in bss) if isinstance(bss, (list, tuple, set)) else bool(bss):
            # as pyarrow: where the type has it, and only when the pages are not dictionary-encoded
            if f.physical_type in BYTE_STREAM_SPLIT_TYPES:
                self.fallback_encoding = Encoding.BYTE_STREAM_SPLIT
        ud = opts.use_dictionary
        self.dictionary = ((f.name in ud or top in ud) if isinstance(ud, (list, tuple, set)) else bool(ud)) \
            and self.encoding is None
        if f.physical_type == PhysicalType.BOOLEAN:
            self.dictionary = False
        ws = opts.write_statistics
        self.statistics = (f.name in ws or top in ws) if isinstance(ws, (list, tuple, set)) else bool(ws)
        self.logical_kind = _logical_kind(f)
        self.sort_order = sort_order_for(f.physical_type, self.logical_kind, _converted_type(f.logical_type))
        self.bloom = BloomFilterOptions.from_user(opt(opts.bloom_filters))
        if self.bloom is not None and f.physical_type == PhysicalType.BOOLEAN:
            if f.name in opts.bloom_filters or desc is None:
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
class LeafData:
    """What one column chunk holds: dense values and levels (None when their maximum is 0)."""

    dense: Any
    defs: np.ndarray | None
    reps: np.ndarray | None
    num_values: int
    all_defined: bool = False  # a flat column without nulls: every definition level is the maximum
    dictionary: Any = None  # values the dictionary page must hold, in order (a categorical's categories)


#: the physical types BYTE_STREAM_SPLIT is defined for
BYTE_STREAM_SPLIT_TYPES = frozenset((PhysicalType.FLOAT, PhysicalType.DOUBLE, PhysicalType.INT32, PhysicalType.INT64,
                                     PhysicalType.FIXED_LEN_BYTE_ARRAY))


def check_encoding(f: Field, enc: Encoding) -> None:
    """SchemaError when ``column_encoding`` asks for an encoding ``f``'s physical type does not have."""
    p = f.physical_type
    ok = {
        Encoding.PLAIN: True,
        Encoding.DELTA_BINARY_PACKED: p in (PhysicalType.INT32, PhysicalType.INT64),
        Encoding.DELTA_LENGTH_BYTE_ARRAY: p == PhysicalType.BYTE_ARRAY,
        Encoding.DELTA_BYTE_ARRAY: p in (PhysicalType.BYTE_ARRAY, PhysicalType.FIXED_LEN_BYTE_ARRAY),
        Encoding.BYTE_STREAM_SPLIT: p in (PhysicalType.FLOAT, PhysicalType.DOUBLE, PhysicalType.INT32, PhysicalType.INT64, PhysicalType.FIXED_LEN_BYTE_ARRAY),
        Encoding.RLE: p == PhysicalType.BOOLEAN,
    }[enc]
    if not ok:
        raise SchemaError(f"encoding {Encoding(enc).name} cannot encode column {f.name!r} "
                          f"({f.type_name})")


def bytes_per_value(values: Any, f: Field) -> float:
    """Approximate plain-encoded bytes per value (for page and row-group cuts)."""
    if isinstance(values, BinaryArray):
        n = len(values)
        return 4.0 + (values.nbytes / n if n else 0.0)
    if f.physical_type == PhysicalType.BOOLEAN:
        return 0.125
    if isinstance(values, np.ndarray):
        return float(values.itemsize * (values.shape[1] if values.ndim == 2 else 1))
    return 8.0


def page_bounds(num_rows: int, bytes_per_row: float, page_size: int,
                max_rows: int | None = None) -> list[tuple[int, int]]:
    """(first row, end row) of each page: pages of about ``page_size`` bytes and at most ``max_rows``
    rows (at least one page, maybe empty)."""
    rows_per_page = max(1, int(page_size // max(bytes_per_row, 1e-9)))
    rows_per_page = min(rows_per_page, 20_000_000, max_rows or 20_000_000)
    return [(s, min(s + rows_per_page, num_rows)) for s in range(0, num_rows, rows_per_page)] or [(0, 0)]


class ByteSink(Protocol):
    """Where chunks are written: :func:`pqbloom.io.open_sink`'s sinks."""

    def write(self, data: Buffer) -> Any: ...

    def tell(self) -> int: ...


class ColumnChunkWriter:
    """Writes column chunks to one file's sink: dictionary choice, page cuts, levels, statistics, the
    Bloom filter's insertions. ``encryption`` (None: plaintext) encrypts each page and header module
    of an encrypted column; where the Bloom filter and page index go is the file writer's business."""

    def __init__(self, sink: ByteSink, options: WriterOptions, encryption: WriterEncryption | None) -> None:
        self.sink = sink
        self.options = options
        self.encryption = encryption
        #: one entry per Bloom filter built: its size, the distinct values it holds, bits per value, est. FPP
        self.bloom_filter_stats: list[dict[str, Any]] = []
        # encoded definition levels of pages without nulls, by (entries, bit width, v2): many
        # columns of one row group share them
        self.full_levels: dict[tuple[int, int, bool], bytes] = {}

    def write(self, plan: ColumnPlan, data: LeafData, rg: int) -> PendingChunk:
        """Write one column chunk (dictionary page, data pages) of row group ``rg`` at the sink's
        position; return what its row group and the end of the file still need."""
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
        distinct_values = None  # the dense values' distinct values, when a dictionary built from them has them
        if plan.dictionary and (n_dense > 0 or data.dictionary is not None and len(data.dictionary) > 0):
            built = None
            if data.dictionary is not None:
                built = encode_with_dictionary(data.dictionary, dense, f.physical_type, opts.dictionary_limit)
            mostly_distinct = built is None and estimate_distinct_fraction(dense) > 0.5
            if built is None and not mostly_distinct:
                built = build_dictionary(dense, f.physical_type, opts.dictionary_limit)
                distinct_values = built[0] if built is not None else None
            if built is not None:
                dict_values, indices = built
            elif log.isEnabledFor(level := logging.DEBUG if mostly_distinct else logging.INFO):
                # mostly distinct values: the expected choice (DEBUG); a dictionary over its size limit: a
                # fallback the user may want to tune (INFO)
                why = ("more than half of the values are distinct" if mostly_distinct else
                       f"the dictionary would exceed dictionary_pagesize_limit ({opts.dictionary_limit:,} B)")
                log.log(level, "column %s, row group %d: dictionary encoding not used (%s); %s pages", f.name, rg, why,
                        Encoding(plan.encoding or plan.fallback_encoding or Encoding.PLAIN).name)
        # format version 1.0 names dictionary pages and dictionary-coded data pages PLAIN_DICTIONARY (the
        # same bytes), as pyarrow writes them; later versions PLAIN and RLE_DICTIONARY
        legacy_dictionary = opts.version == "1.0"
        dict_page_encoding = Encoding.PLAIN_DICTIONARY if legacy_dictionary else Encoding.PLAIN
        value_encoding = (Encoding.PLAIN_DICTIONARY if legacy_dictionary else Encoding.RLE_DICTIONARY) \
            if dict_values is not None else (plan.encoding or plan.fallback_encoding or Encoding.PLAIN)

        # -- Bloom filter over the dense values
        bloom = None
        if plan.bloom is not None and not (opts.bloom_filter_skip_dictionary and dict_values is not None):
            # a dictionary built from the values holds each of them once: its hashes are the column's
            # distinct hashes, so inserting them sets the same bits and counting them counts the same
            # values (a given dictionary, a categorical's, may hold values the column does not)
            hashes = hash_values(dense if distinct_values is None else distinct_values, f.physical_type)
            ndv = plan.bloom.ndv
            if ndv is None:
                ndv = distinct_count(hashes)
            else:
                ndv = min(ndv, n_dense)  # as peers do: never size past what the row group holds
            bloom = BloomFilter(optimal_num_bytes(max(ndv, 1), plan.bloom.fpp, plan.bloom.max_bytes))
            bloom.insert_hashes(hashes)
            distinct = ndv if plan.bloom.ndv is None else distinct_count(hashes)
            self.bloom_filter_stats.append({
                "row_group": rg, "column": f.name, "num_bytes": bloom.num_bytes, "distinct_values": distinct,
                "bits_per_distinct_value": bloom.num_bytes * 8 / max(distinct, 1),
                "estimated_fpp": bloom.estimated_fpp(),
            })

        # -- pages
        v2 = opts.data_page_version == "2.0"
        codec = plan.codec
        data_start = self.sink.tell()
        dictionary_offset = None
        total_uncompressed = 0
        # in pyarrow's order: the dictionary page's encoding, RLE (levels), then the data pages' encodings
        encodings: list[int] = []
        encoding_stats: dict[tuple[int, int], int] = {}
        if dict_values is not None:
            dict_bytes = encode_plain(dict_values, f.physical_type, f.type_length)
            body = compression_mod.compress(codec, dict_bytes, plan.level)
            body = encrypt_module(self.encryption, ModuleType.DICTIONARY_PAGE, body, rg, col)
            header = encode_dictionary_page_header(
                uncompressed_page_size=len(dict_bytes), compressed_page_size=len(body), num_values=len(dict_values),
                encoding=dict_page_encoding, crc=_crc(body) if opts.write_page_checksum else None)
            hbytes = encrypt_module(self.encryption, ModuleType.DICTIONARY_PAGE_HEADER, header, rg, col)
            dictionary_offset = self.sink.tell()
            write_pair(self.sink, hbytes, body)
            total_uncompressed += len(hbytes) + len(dict_bytes)
            encodings.append(dict_page_encoding)
            encoding_stats[(PageType.DICTIONARY_PAGE, dict_page_encoding)] = 1
            per_row = bit_width_of(max(len(dict_values) - 1, 0)) / 8 + 0.01
        else:
            per_row = bytes_per_value(dense, f)
        bounds = page_bounds(num_rows, max(per_row * n_dense / max(num_rows, 1), 0.01), opts.page_size,
                             opts.max_rows_per_page)
        data_page_offset = self.sink.tell()
        pi_stats, pi_null_pages, pi_locations, pi_unencoded = [], [], [], []
        # level histograms (SizeStatistics) per page, for every column whose max level is > 0
        pi_rep_hist: list[np.ndarray] = []
        pi_def_hist: list[np.ndarray] = []
        chunk_stats = None
        def_width, rep_width = bit_width_of(plan.max_def), bit_width_of(plan.max_rep)
        # pages compressed on workers: where there are several and enough bytes to repay the hand-offs
        threaded = opts.use_threads and len(bounds) > 1 and per_row * n_dense >= THREADED_MIN_BYTES
        # byte-array chunks of several pages: the chunk's min and max are among its pages' (raw, untruncated)
        # bounds, so its statistics come from those rather than from a second pass over every value
        raw_bounds: list[bytes] | None = [] if plan.statistics and len(bounds) > 1 and \
            f.physical_type in (PhysicalType.BYTE_ARRAY, PhysicalType.FIXED_LEN_BYTE_ARRAY) else None
        pages_with_values = 0
        # dictionary-encoded strings: a page's bounds from its indices' ranks, not from comparing its values
        dict_bounds = DictionaryBounds.build(dict_values, n_dense, f.physical_type, plan.sort_order) \
            if plan.statistics and dict_values is not None else None
        # v1 pages of PLAIN byte arrays: the values go to compress_page unencoded and are encoded
        # there, on the worker that compresses the page when pages are compressed on threads
        plain_in_compressor = not v2 and dict_values is None and value_encoding == Encoding.PLAIN and \
            f.physical_type == PhysicalType.BYTE_ARRAY

        def encoded_pages() -> Iterator[Callable[[], EncodedPage]]:
            """Levels, values and statistics of each page, encoded here in the calling thread; each
            yields the job that compresses it (run on a worker with ``threaded``)."""
            nonlocal pages_with_values
            for page_no, (r0, r1) in enumerate(bounds):
                if self.encryption is not None:
                    self.encryption.check_ordinal("page", page_no)
                e0, e1 = (r0, r1) if row_start is None else (int(row_start[r0]), int(row_start[r1]))
                d0, d1 = (e0, e1) if dense_start is None else (int(dense_start[e0]), int(dense_start[e1]))
                pv = dense.slice(d0, d1) if isinstance(dense, BinaryArray) else dense[d0:d1]
                vbytes: bytes | BinaryArray
                if dict_values is not None:
                    assert indices is not None
                    vbytes = encode_dictionary_indices(indices[d0:d1], len(dict_values))
                elif plain_in_compressor:
                    vbytes = pv  # encoded by compress_page
                else:
                    vbytes = encode_values(pv, value_encoding, f.physical_type, f.type_length)
                num_values = e1 - e0
                num_nulls = num_values - (d1 - d0)
                page_stats = None
                if plan.statistics:
                    stats_of = pv if dict_bounds is None or indices is None else dict_bounds.bounds(indices[d0:d1])
                    page_stats = compute_statistics(stats_of, f.physical_type, null_count=num_nulls,
                                                    sort_order=plan.sort_order, logical_kind=plan.logical_kind,
                                                    type_length=f.type_length,
                                                    max_binary_length=opts.statistics_truncate_length,
                                                    raw_bounds=raw_bounds)
                    pages_with_values += d1 > d0
                rep_bytes = def_bytes = b""
                encode_lv = encode_rle_bitpacked if v2 else encode_levels_v1
                # levels: RLE for runs of 64 or more, bit-packing between: fewer runs to decode, and as
                # small once compressed
                if rep_levels is not None:
                    rep_bytes = encode_lv(rep_levels[e0:e1], rep_width, 64)
                if def_levels is not None:
                    if data.all_defined:  # the same bytes for every page of this length: encode them once
                        key = (e1 - e0, def_width, v2)
                        def_bytes = self.full_levels.get(key, b"")
                        if not def_bytes:
                            if len(self.full_levels) >= 64:
                                self.full_levels.clear()
                            def_bytes = self.full_levels[key] = encode_lv(def_levels[e0:e1], def_width, 64)
                    else:
                        def_bytes = encode_lv(def_levels[e0:e1], def_width, 64)
                page = EncodedPage(page_no, r0, r1, e0, e1, num_nulls, page_stats, rep_bytes, def_bytes, vbytes,
                                   pv.nbytes if isinstance(pv, BinaryArray) else None)
                yield functools.partial(compress_page, page, codec, plan.level, v2)

        # pages are written in order by this thread whether or not they were compressed on workers,
        # so the file's bytes do not depend on ``use_threads``; closing stops the workers on an error
        with contextlib.closing(map_ordered(encoded_pages(), use_threads=threaded)) as compressed:
            for page in compressed:
                num_values = page.e1 - page.e0
                page_no = page.page_no
                body = encrypt_module(self.encryption, ModuleType.DATA_PAGE, page.body, rg, col, page_no)
                crc = _crc(body) if opts.write_page_checksum else None
                if v2:
                    page_header = encode_data_page_header_v2(
                        uncompressed_page_size=page.uncompressed_size, compressed_page_size=len(body),
                        num_values=num_values, num_nulls=page.num_nulls, num_rows=page.r1 - page.r0,
                        encoding=value_encoding, definition_levels_byte_length=len(page.def_bytes),
                        repetition_levels_byte_length=len(page.rep_bytes), is_compressed=page.is_compressed, crc=crc)
                    ptype = PageType.DATA_PAGE_V2
                else:
                    page_header = encode_data_page_header(
                        uncompressed_page_size=page.uncompressed_size, compressed_page_size=len(body),
                        num_values=num_values, encoding=value_encoding, crc=crc)
                    ptype = PageType.DATA_PAGE
                hbytes = encrypt_module(self.encryption, ModuleType.DATA_PAGE_HEADER, page_header, rg, col, page_no)
                offset = self.sink.tell()
                write_pair(self.sink, hbytes, body)
                total_uncompressed += len(hbytes) + page.uncompressed_size
                encoding_stats[(ptype, value_encoding)] = encoding_stats.get((ptype, value_encoding), 0) + 1
                pi_locations.append((offset, len(hbytes) + len(body), page.r0))
                pi_stats.append(page.stats)
                pi_null_pages.append(page.num_nulls == num_values)
                if page.unencoded is not None:
                    pi_unencoded.append(page.unencoded)
                if rep_levels is not None:  # level 0 starts each of the page's rows
                    pi_rep_hist.append(level_histogram(rep_levels[page.e0:page.e1], plan.max_rep, 0,
                                                       page.r1 - page.r0))
                if plan.max_def > 0:  # the top level marks each value
                    pi_def_hist.append(level_histogram(
                        def_levels[page.e0:page.e1] if def_levels is not None else None,
                        plan.max_def, plan.max_def, num_values - page.num_nulls))
        encodings.append(Encoding.RLE)  # levels (pyarrow lists it for columns without levels too)
        if value_encoding not in encodings and encoding_stats.keys() - {(PageType.DICTIONARY_PAGE, dict_page_encoding)}:
            encodings.append(value_encoding)
        if plan.statistics and len(bounds) == 1 and pi_stats[0] is not None:
            chunk_stats = pi_stats[0]  # one page: its statistics are the chunk's (same values, same nulls)
        elif plan.statistics:
            chunk_values = dense
            if raw_bounds is not None and len(raw_bounds) == 2 * pages_with_values:  # else some page had none
                chunk_values = _as_values(raw_bounds, f.physical_type)
            chunk_stats = compute_statistics(chunk_values, f.physical_type, null_count=n - n_dense,
                                             sort_order=plan.sort_order, logical_kind=plan.logical_kind,
                                             type_length=f.type_length,
                                             max_binary_length=opts.statistics_truncate_length)
        total_compressed = self.sink.tell() - data_start
        rep_hists = pi_rep_hist if plan.max_rep > 0 else None
        def_hists = pi_def_hist if plan.max_def > 0 else None
        # size statistics for byte arrays and levels; histograms are omitted where the max level is 0, as the
        # spec allows and pyarrow does
        meta = column_metadata(
            physical_type=f.physical_type, encodings=encodings, path_in_schema=plan.path,
            codec=codec.thrift_id, num_values=n, total_uncompressed_size=total_uncompressed,
            total_compressed_size=total_compressed, data_page_offset=data_page_offset,
            dictionary_page_offset=dictionary_offset, statistics=chunk_stats, encoding_stats=encoding_stats,
            unencoded_byte_array_data_bytes=dense.nbytes if isinstance(dense, BinaryArray) else None,
            repetition_level_histogram=sum_histograms(rep_hists, plan.max_rep),
            definition_level_histogram=sum_histograms(def_hists, plan.max_def))
        chunk = column_chunk(meta)
        page_index = None
        if opts.write_page_index:
            page_index = PageIndexEntry(pi_stats if plan.statistics else [], pi_null_pages, pi_locations,
                                         pi_unencoded if isinstance(dense, BinaryArray) else None,
                                         rep_hists, def_hists)
        return PendingChunk(chunk, meta, bloom, page_index, col, rg)


@dataclass
class EncodedPage:
    """One data page between encoding and writing: rows ``r0:r1``, level entries ``e0:e1``, its
    statistics, the encoded levels and values; :func:`compress_page` fills in the body."""

    page_no: int
    r0: int
    r1: int
    e0: int
    e1: int
    num_nulls: int
    stats: Any
    rep_bytes: bytes
    def_bytes: bytes
    values: Any  # the encoded values (bytes-like), or PLAIN byte arrays' BinaryArray; dropped once compressed
    unencoded: int | None  # byte-array pages: the values' bytes before encoding (offset index)
    body: Any = b""  # levels and values as stored, before encryption
    uncompressed_size: int = 0
    is_compressed: bool = True  # v2 pages: whether the values are compressed


def compress_page(page: EncodedPage, codec: compression_mod.Codec, level: int | None, v2: bool) -> EncodedPage:
    """Build ``page``'s body: v1 compresses levels and values together; v2 keeps its levels
    uncompressed and stores the values uncompressed when compression would not make them smaller.
    Touches nothing but ``page`` (it may run on a worker thread)."""
    levels = page.rep_bytes + page.def_bytes
    vbytes = page.values
    if isinstance(vbytes, BinaryArray):  # v1 PLAIN byte arrays, encoded here (on the worker with threads)
        vbytes = encode_values(vbytes, Encoding.PLAIN, PhysicalType.BYTE_ARRAY)
    if v2:
        comp = compression_mod.compress(codec, vbytes, level)
        if len(comp) >= len(vbytes) and codec.name != "UNCOMPRESSED":
            comp, page.is_compressed = vbytes, False
        page.body = levels + comp if levels else comp
    else:
        page.body = compression_mod.compress_joined(codec, levels, vbytes, level)
    page.uncompressed_size = len(levels) + len(vbytes)
    page.values = None
    return page


_SMALL_WRITE = 1 << 16
#: the least (estimated, encoded) bytes of a column chunk whose pages are compressed on worker threads:
#: below it the hand-off to a worker costs more than compressing in place
THREADED_MIN_BYTES = 1 << 17


def write_pair(sink: ByteSink, head: Buffer, body: Buffer) -> None:
    """Write a header and its body; one sink call when the body is small enough that joining
    them costs less than a second call (many small column chunks)."""
    if len(body) <= _SMALL_WRITE:
        sink.write(b"".join((head, body)))
    else:
        sink.write(head)
        sink.write(body)


def level_histogram(levels: np.ndarray | None, max_level: int, known_level: int, known_count: int) -> np.ndarray:
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


def sum_histograms(per_page: list[np.ndarray] | None, max_level: int) -> list[int] | None:
    """A chunk's level histogram: the sum of its pages' (None when the column has no such levels)."""
    if per_page is None:
        return None
    if len(per_page) == 1:
        return per_page[0].tolist()
    total = np.zeros(max_level + 1, np.int64)
    for h in per_page:
        total += h
    return [int(x) for x in total]


def distinct_count(hashes: np.ndarray) -> int:
    """Distinct 64-bit hashes (:func:`pqbloom.kernels.dictionary.count_distinct`)."""
    return count_distinct(hashes)


def _as_values(raw: list[bytes], ptype: int) -> Any:
    """Byte strings as the dense values of ``ptype`` (a BinaryArray, or FIXED_LEN_BYTE_ARRAY rows)."""
    if ptype == PhysicalType.BYTE_ARRAY:
        return BinaryArray.from_pylist(raw)
    return np.frombuffer(b"".join(raw), np.uint8).reshape(len(raw), -1) if raw else np.zeros((0, 1), np.uint8)


def _crc(data: Buffer) -> int:
    c = zlib.crc32(data)
    return c - (1 << 32) if c >= 1 << 31 else c  # thrift i32 is signed
