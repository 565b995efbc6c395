"""Column chunks of a :class:`~pqbloom.file.reader.FileReader`: their metadata (decrypted when needed),
byte ranges, pages, and Bloom filters.

:class:`ChunkAccess` is a mixin: the reader owns the footer, the leaves and the IO; these methods turn
a (row group, column) into checked offsets, decoded pages and probed filters.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from functools import partial
from typing import Any

import numpy as np

from ..bloom import BloomFilter
from ..crypto import ModuleType
from ..errors import CorruptFileError, ParquetError
from ..format import CompressionCodec, PageType, PhysicalType
from ..io import RangeReader
from ..schema import ColumnDescriptor
from ..schema.literals import physical_candidates
from ..table import Column
from ..table.arrow_schema import leaf_duration_unit, schema_hints
from .binary_sink import BinarySink
from .bloom_reader import chunk_bloom_site, probe_bloom_filter, read_bloom_filter
from .bloom_site import BloomFilterSite
from .chunk_window import ChunkBytes, ChunkWindow
from .column_builder import place_pages, placed_type
from .column_reader import DECODE_FAILURES, ChunkParts, NestedSelection, collect_chunk, located_error
from .encryption import ReaderDecryption
from .flat_chunk import compiled_loop_takes, decode_flat_chunk
from .footer import FooterLocation, check_column_metadata
from .levels import LeafLevels
from .pages import CHUNK_SIZE_SHORTFALL, chunk_size_undercounted, iter_pages, v2_flag_ignored

__all__ = ["ChunkAccess"]


#: codecs whose decompression runs at about memory speed
_CHEAP_CODECS = frozenset((CompressionCodec.UNCOMPRESSED, CompressionCodec.SNAPPY, CompressionCodec.LZ4,
                           CompressionCodec.LZ4_RAW))
#: decoded bytes of a chunk small enough to decode in the calling thread whatever it holds
_SMALL_CHUNK = 256 << 10
#: stored bytes of a page whose decompression is short, whatever the codec
_SMALL_PAGE = 64 << 10
_DATA_PAGES = frozenset((PageType.DATA_PAGE, PageType.DATA_PAGE_V2))


class ChunkAccess:
    """Column-chunk access for :class:`~pqbloom.file.reader.FileReader` (a mixin: the reader sets the
    attributes below and provides :meth:`column_descriptor`)."""

    thrift_metadata: Any  # the decoded FileMetaData struct
    footer_location: FooterLocation
    range_reader: RangeReader
    decryption: ReaderDecryption | None
    verify_checksums: bool
    _leaves: list[ColumnDescriptor]
    #: each chunk's checked (and decrypted) ColumnMetaData by (row group, leaf index): a read asks for a
    #: chunk's several times (weights, ranges, pages), and a file of many row groups has thousands of chunks
    _chunk_metas: dict[tuple[int, int], Any]

    @property
    def created_by(self) -> str | None:
        """The writer the footer names (``created_by``), if any."""
        return self.thrift_metadata.created_by

    def column_descriptor(self, column: int | str) -> ColumnDescriptor:  # pragma: no cover - the reader's
        raise NotImplementedError

    @property
    def columns(self) -> list[ColumnDescriptor]:  # pragma: no cover - the reader's
        """The leaf columns, in file order."""
        raise NotImplementedError

    def read_leaf_levels(self, rg: int, desc: ColumnDescriptor, *,
                         for_assembly: bool = False) -> LeafLevels:  # pragma: no cover - the reader's
        """One leaf chunk with its levels."""
        raise NotImplementedError

    def read_nested(self, rg: int, sel: NestedSelection,
                    levels: dict[int, LeafLevels] | None = None) -> Column:  # pragma: no cover - the reader's
        """The nested column ``sel`` of row group ``rg``."""
        raise NotImplementedError

    def row_group_rows(self, rg: int) -> int:
        """Rows of row group ``rg`` as the footer gives them (0 when missing or negative: nothing to read)."""
        n = self.thrift_metadata.row_groups[rg].num_rows
        return int(n) if n is not None and n > 0 else 0

    def duration_unit(self, desc: ColumnDescriptor) -> str | None:
        """The unit of column ``desc`` when its stored Arrow type (the footer's ``ARROW:schema``) is a
        duration, else None: a ``timedelta`` literal compares with such a column as its count of the unit."""
        kv = {kv.key: kv.value for kv in (self.thrift_metadata.key_value_metadata or []) if kv.value is not None}
        return leaf_duration_unit(schema_hints(kv), desc.path, desc.field)

    def chunk_metadata(self, rg_index: int, desc: ColumnDescriptor) -> Any:
        """The ``ColumnMetaData`` of column ``desc`` in row group ``rg_index``, decrypted when the column
        is encrypted (:class:`~pqbloom.errors.KeyNotFoundError` without its key)."""
        key = (rg_index, desc.index)
        meta = self._chunk_metas.get(key)
        if meta is not None:
            return meta
        rgs = self.thrift_metadata.row_groups
        if not 0 <= rg_index < len(rgs):
            raise IndexError(f"row group {rg_index} out of range")
        chunks = rgs[rg_index].columns
        if len(chunks) != len(self._leaves):
            raise CorruptFileError(f"row group has {len(chunks)} column chunks for {len(self._leaves)} columns",
                                   row_group=rg_index)
        cc = chunks[desc.index]
        if self.decryption is not None:
            meta = self.decryption.column_metadata(cc, rg_index, desc)
        elif cc.meta_data is None:
            raise CorruptFileError("column chunk has no metadata", row_group=rg_index, column=desc.dotted_path)
        else:
            meta = cc.meta_data
        check_column_metadata(meta, rg_index, desc.dotted_path)
        self._chunk_metas[key] = meta
        return meta

    def chunk_weight(self, rg: int, desc: ColumnDescriptor | NestedSelection, heavy: int) -> int:
        """A chunk's decoded bytes as its footer states them, to batch decoding tasks by; ``heavy`` (a
        batch of its own) for a nested column, a size of ``heavy`` or more, or metadata that is unusable
        (the chunk's task reports it)."""
        if isinstance(desc, NestedSelection):
            return heavy
        try:
            size = self.chunk_metadata(rg, desc).total_uncompressed_size
        except ParquetError:
            return heavy
        return size if size is not None and 0 <= size < heavy else heavy

    def decodes_inline(self, rg: int, desc: ColumnDescriptor | NestedSelection, *, small: bool = True) -> bool:
        """Whether a chunk decodes in short GIL-free steps (a page's copy or gather, a fast
        decompression) between Python ones, which a worker thread would spend handing the GIL back and
        forth (:func:`~pqbloom.file.parallel.map_ordered_batched`'s ``inline``): with ``small``, a flat
        chunk of under :data:`_SMALL_CHUNK` decoded bytes (the caller passes it for a read made of such
        chunks: beside large ones, small chunks cost the pool little); and a flat fixed-width chunk that
        is uncompressed, snappy or LZ4, or whose pages are small as stored (a costly codec's steps are as
        long as its pages). Byte-array and nested chunks decode in long kernel calls: they go to the pool."""
        if isinstance(desc, NestedSelection) or desc.max_repetition_level > 0:
            return False
        try:
            meta = self.chunk_metadata(rg, desc)
        except ParquetError:
            return False  # (the chunk's task reports it)
        size, stored = meta.total_uncompressed_size, meta.total_compressed_size
        if small and size is not None and 0 <= size < _SMALL_CHUNK:
            return True  # (even in the compiled page loop: its Python around a small chunk is most of it)
        if not placed_type(desc.physical_type):
            return False
        if compiled_loop_takes(meta, desc, encrypted=self.decryption is not None):
            return False  # decoded without the GIL but for its pages' decompression
        if meta.codec in _CHEAP_CODECS:
            return True
        pages = sum(s.count or 0 for s in meta.encoding_stats or () if s.page_type in _DATA_PAGES)
        return pages > 0 and stored is not None and 0 <= stored < _SMALL_PAGE * pages

    def chunk_weights(self, chunks: Sequence[tuple[int, ColumnDescriptor | NestedSelection]], heavy: int) -> list[int]:
        """:meth:`chunk_weight` of each of ``chunks`` (row group, column)."""
        return [self.chunk_weight(rg, desc, heavy) for rg, desc in chunks]

    def inline_marks(self, chunks: Sequence[tuple[int, ColumnDescriptor | NestedSelection]]) -> list[bool]:
        """:meth:`decodes_inline` of each of ``chunks`` (row group, column), small chunks counted as
        such when the read is made of them (:meth:`small_chunks`)."""
        small = self.small_chunks(chunks)
        return [self.decodes_inline(rg, desc, small=small) for rg, desc in chunks]

    def small_chunks(self, chunks: Sequence[tuple[int, ColumnDescriptor | NestedSelection]]) -> bool:
        """Whether ``chunks`` decode to under :data:`_SMALL_CHUNK` bytes on average (footer sizes; a
        nested or unusable chunk counts as large): many small row groups."""
        total = 0
        for rg, desc in chunks:
            total += self.chunk_weight(rg, desc, _SMALL_CHUNK)
            if total >= _SMALL_CHUNK * len(chunks):
                return False
        return True

    def open_module(self, module_type: ModuleType, data: bytes, rg: int, desc: ColumnDescriptor,
                    page: int = -1) -> bytes:
        """Stored module bytes (a page index, a page) -> plaintext: decrypted with the column's key when the
        file is encrypted, ``data`` itself otherwise."""
        if self.decryption is None:
            return data
        return self.decryption.decrypt(module_type, data, rg, desc, page)

    def chunk_range(self, meta: Any, rg: int, desc: ColumnDescriptor, *,
                    stated: bool = False) -> tuple[int, int]:
        """(start, length) of a chunk's pages in the file, checked to lie between the magic and the footer;
        padded for the writers that undercount it (:func:`~pqbloom.file.pages.chunk_size_undercounted`)
        unless ``stated``: the bytes to read, or (``stated``) the extent the footer gives."""
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
        if not stated and chunk_size_undercounted(self.created_by):
            # PARQUET-816: the pages of parquet-mr < 1.2.9 run on past the stated size (by a dictionary
            # page header); the page loop stops at the chunk's value count, before any padding byte
            length += min(CHUNK_SIZE_SHORTFALL, end_limit - start - length)
        return start, length

    def read_chunk_parts(self, rg: int, desc: ColumnDescriptor, *, placed: bool = False,
                         sink: BinarySink | None = None,
                         out: tuple[np.ndarray, np.ndarray | None] | None = None) -> ChunkParts:
        """Decode one column chunk into dense value pieces plus presence flags; check its row count.
        ``placed``: a fixed-width chunk may come as one full-length array, nulls placed
        (``ChunkParts.placed``; :func:`pqbloom.file.column_builder.place_pages`), written into ``out``
        when given (its rows of the column's values and presence flags: ``FixedRegions``). ``sink``: a
        byte-array chunk decodes into it (its region of the column's buffers: ``ChunkParts.region``)."""
        parts = self._read_chunk_unchecked(rg, desc, placed, sink, out)
        expected = self.thrift_metadata.row_groups[rg].num_rows
        if expected is None or expected < 0:
            raise CorruptFileError("negative row count", row_group=rg)
        if parts.num_rows != expected:
            raise CorruptFileError(f"column has {parts.num_rows} rows but the row group has {expected}",
                                   row_group=rg, column=desc.dotted_path)
        return parts

    def _read_chunk_unchecked(self, rg: int, desc: ColumnDescriptor, placed: bool = False,
                              sink: BinarySink | None = None,
                              out: tuple[np.ndarray, np.ndarray | None] | None = None) -> ChunkParts:
        meta = self.chunk_metadata(rg, desc)
        if meta.num_values == 0:  # empty chunks may carry no pages and zero offsets
            return ChunkParts([], None, 0)
        start, length = self.chunk_range(meta, rg, desc)
        buf, window = self.open_chunk(start, length)
        try:
            if placed and placed_type(desc.physical_type):
                parts = self.compiled_chunk(buf, start, window, meta, rg, desc, out)
                if parts is not None:
                    return parts
                if window is not None and window.lease is None:  # the compiled loop moved it on: again
                    buf, window = self.open_chunk(start, length)
                # views: place_pages copies each page's values out before it asks for the next
                pages = self.iter_pages(buf, start, meta, rg, desc, window=window, views=True, encoded_indices=True,
                                        full_flags=False)
                return place_pages(pages, desc.field, meta.num_values, desc.max_definition_level > 0,
                                   *(out or (None, None)))
            return self.decode_chunk(buf, start, meta, rg, desc, window, sink)
        except (ParquetError, *DECODE_FAILURES) as exc:
            raise located_error(exc, rg, desc) from None

    def compiled_chunk(self, buf: ChunkBytes, base: int, window: ChunkWindow | None, meta: Any, rg: int,
                       desc: ColumnDescriptor, out: tuple[np.ndarray, np.ndarray | None] | None = None,
                       positions: np.ndarray | None = None) -> ChunkParts | None:
        """The chunk decoded whole by the compiled page loop (:mod:`pqbloom.file.flat_chunk`) as
        placed :class:`ChunkParts` (into ``out`` when given; only the rows at ``positions`` when
        given), or None: not a chunk it takes, or it gave
        up (the Python loop then decodes it; with a ``window`` that the loop moved on, and so closed,
        from the chunk's start again, :meth:`open_chunk`)."""
        if not compiled_loop_takes(meta, desc, encrypted=self.decryption is not None):
            return None
        return decode_flat_chunk(buf, base, window, meta, desc, out=out,
                                 row_count=self.thrift_metadata.row_groups[rg].num_rows,
                                 verify_checksums=self.verify_checksums,
                                 v2_always_compressed=v2_flag_ignored(self.created_by), positions=positions)

    def open_chunk(self, start: int, length: int) -> tuple[ChunkBytes, ChunkWindow | None]:
        """The chunk's bytes at ``start`` for :meth:`iter_pages`: all of them, or on a local source the
        first window of a :class:`~pqbloom.file.chunk_window.ChunkWindow` (returned too) that reads on."""
        window = ChunkWindow.for_chunk(self.range_reader, start, length)
        if window is not None:
            return window.first(), window
        return self.range_reader.read(start, length, what="column chunk"), None

    def _next_chunk_start(self, start: int) -> int:
        bound = self.footer_location.footer_offset
        for rg in self.thrift_metadata.row_groups:
            for cc in rg.columns:
                m = cc.meta_data
                if m is None:
                    continue
                for off in (m.dictionary_page_offset, m.data_page_offset):
                    if off is not None and start < off < bound:
                        bound = off
        return bound

    def decode_chunk(self, buf: ChunkBytes, base: int, meta: Any, rg: int,
                     desc: ColumnDescriptor, window: ChunkWindow | None = None,
                     sink: BinarySink | None = None, page_ordinals: Sequence[int] | None = None,
                     num_values: int | None = None) -> ChunkParts:
        """Decode a flat chunk's bytes ``buf`` (read from file offset ``base``; the first window of
        ``window`` if given) into value pieces and presence flags (errors unlocated:
        :meth:`read_chunk_parts` adds row group and column); byte arrays into ``sink`` when given.
        ``page_ordinals``: ``buf`` holds only these data pages of the chunk, holding ``num_values`` values
        (see :meth:`iter_pages`; :mod:`pqbloom.file.page_reads` reads pages that way)."""
        if sink is None or desc.physical_type != PhysicalType.BYTE_ARRAY:
            sink = None if num_values is not None else \
                BinarySink.for_chunk(meta, desc, window.end - window.start if window is not None else len(buf))
        pages = self.iter_pages(buf, base, meta, rg, desc, sink=sink, window=window, page_ordinals=page_ordinals,
                                num_values=num_values, full_flags=False)
        return collect_chunk(pages, desc, meta.num_values if num_values is None else num_values, sink)

    def _extend_chunk(self, buf: ChunkBytes, base: int) -> bytes:
        """Some old writers undercount total_compressed_size; let pages run on up to the next chunk."""
        bound = self._next_chunk_start(base)
        if bound <= base + len(buf):
            raise CorruptFileError("pages run past the end of the column chunk", offset=base)
        return self.range_reader.read(base, bound - base, what="column chunk")

    def iter_pages(self, buf: ChunkBytes, base: int, meta: Any, rg: int, desc: ColumnDescriptor, *,
                   levels: bool = False, sink: BinarySink | None = None,
                   window: ChunkWindow | None = None, views: bool = False,
                   page_ordinals: Sequence[int] | None = None, num_values: int | None = None,
                   encoded_indices: bool = False, full_flags: bool = True,
                   raw_indices: bool = False) -> Iterator[tuple[str, Any, Any, Any]]:
        """Yield (kind, values, presence flags or None, dictionary) for each data page of a chunk whose
        bytes ``buf`` start at file offset ``base`` (see :func:`pqbloom.file.pages.iter_pages`;
        ``buf`` is the first window of ``window``, when given: :meth:`open_chunk`). ``page_ordinals``:
        ``buf`` holds only the data pages of these ordinals (after the dictionary page, if any), as
        a page-level read from the OffsetIndex gathers them; encrypted pages need their ordinals;
        ``num_values``: the values those pages hold (the chunk's count otherwise); ``encoded_indices``
        (with ``views``): dictionary-encoded pages of fixed-width values come undecoded (kind ``"rle"``);
        ``full_flags=False``: a page of a nullable column without nulls may yield None for its flags;
        ``raw_indices`` (with ``views``): every dictionary-encoded page comes undecoded (kind ``"rle"``).

        With ``levels=True`` the third item is instead ``(definition levels, repetition levels)``,
        each None when its maximum is 0 (nested leaves are read that way).
        """
        return iter_pages(buf, base, meta, rg, desc, row_count=self.thrift_metadata.row_groups[rg].num_rows,
                          decryption=self.decryption, verify_checksums=self.verify_checksums,
                          v2_always_compressed=v2_flag_ignored(self.created_by), extend=self._extend_chunk,
                          levels=levels, sink=sink, window=window, views=views, page_ordinals=page_ordinals,
                          num_values=num_values, encoded_indices=encoded_indices, full_flags=full_flags,
                          raw_indices=raw_indices)

    # -- Bloom filters ------------------------------------------------------------------
    def _bloom_site(self, row_group: int, desc: ColumnDescriptor, meta: Any) -> BloomFilterSite | None:
        """Where the footer puts the chunk's Bloom filter (None: no filter); see :mod:`pqbloom.file.bloom_site`."""
        return chunk_bloom_site(self, row_group, desc, meta)

    def bloom_filter_might_contain(self, row_group: int, column: int | str, value: Any, *,
                                   physical: bool = False) -> bool | None:
        """Probe one value against a chunk's Bloom filter with minimal IO; None when there is no filter.
        The value is a logical one, as :meth:`bloom_filter`'s ``might_contain`` takes it; one the
        column cannot hold (out of range, not whole at the column's scale or unit) gives False.
        ``physical=True``: ``value`` is already what the column stores (an unscaled decimal, ticks of
        the timestamp's unit: what the scan layer binds a filter's literals to).

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
            if bf is None:
                return None
            return bf.might_contain(value, desc.physical_type, desc.type_length) if physical else bf.might_contain(value)
        return probe_bloom_filter(self.range_reader, site, value, desc, physical=physical,
                                  duration_unit=None if physical else self.duration_unit(desc))

    def bloom_filter(self, row_group: int, column: int | str) -> BloomFilter | None:
        """The column chunk's Bloom filter, or None when it has none. It is bound to the column, so
        ``bloom_filter(0, "email").might_contain("a@x.org")`` needs no type and takes the column's
        logical values (``datetime``, ``date``, ``time``, ``Decimal``, ``uuid.UUID``...: see
        :meth:`pqbloom.bloom.BloomFilter.might_contain`).

        Raises :class:`~pqbloom.errors.BloomFilterError` when the filter's header disagrees with the
        footer or the spec (see :mod:`pqbloom.file.bloom_site`): such a filter can report present values absent.
        """
        desc = self.column_descriptor(column)
        meta = self.chunk_metadata(row_group, desc)
        site = self._bloom_site(row_group, desc, meta)
        if site is None:
            return None
        if self.decryption is not None and self.decryption.column_encrypted(desc):
            bf = self.decryption.read_bloom_filter(self.range_reader, site, desc)
        else:
            bf = read_bloom_filter(self.range_reader, site)
        return bf.for_column(desc.physical_type, desc.type_length,
                             partial(physical_candidates, f=desc.field, duration_unit=self.duration_unit(desc)))

