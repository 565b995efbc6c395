"""Where everything of a file lies, for an edit that adds or drops Bloom filters (:mod:`pqbloom.file.add_bloom`):
which bytes may move, where new filters go, which old ones can be cut out.

:class:`FileLayout` gathers, from the footer and the chunks' metadata, every byte range something points
at: column chunks, column and offset indexes, Bloom filters. From it:

* :meth:`FileLayout.insertion_points`: where new filters go for each position: ``"end"`` (after everything,
  before the new footer: no byte before it moves), ``"before_page_indexes"`` (the page indexes move, the
  pages stay) and ``"between_row_groups"`` (after each row group's pages: every later byte moves, and the
  offset indexes, which hold page offsets, are rewritten: :meth:`FileLayout.rewrite_offset_indexes`);
* :meth:`FileLayout.removable`: whether an old filter's bytes may be cut out (no page moves, nothing else
  lies in them), else they stay in the file, unreferenced.
"""

from __future__ import annotations

from bisect import bisect_left
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..crypto import ModuleType
from ..errors import KeyNotFoundError, ParquetError, UnsupportedError
from ..format import decode_offset_index, encode
from .chunk_layout import ChunkExtent, bloom_filter_length, chunk_extents
from .splice import Splice

__all__ = ["FileLayout", "POSITIONS"]

#: where :func:`pqbloom.add_bloom_filters` may put new filters
POSITIONS = ("end", "before_page_indexes", "between_row_groups")


@dataclass
class FileLayout:
    """The byte ranges a file's footer points at (see the module docstring)."""

    footer_offset: int
    extents: dict[tuple[int, int], ChunkExtent] = field(default_factory=dict)
    #: (start, end) of each chunk's pages as the footer states them, by (row group, column)
    chunks: dict[tuple[int, int], tuple[int, int]] = field(default_factory=dict)
    #: (start, end) of each Bloom filter, by (row group, column); end None when its length is unknown
    blooms: dict[tuple[int, int], tuple[int, int | None]] = field(default_factory=dict)
    #: (start, end or None) of each column index and offset index
    column_indexes: dict[tuple[int, int], tuple[int, int | None]] = field(default_factory=dict)
    offset_indexes: dict[tuple[int, int], tuple[int, int | None]] = field(default_factory=dict)
    #: chunks whose metadata could not be read (an encrypted column without its key): their filters are unknown
    unreadable: list[tuple[int, int]] = field(default_factory=list)

    @classmethod
    def of(cls, reader: Any) -> FileLayout:
        """The layout of the file behind ``reader`` (a :class:`~pqbloom.file.reader.FileReader`)."""
        out = cls(reader.footer_location.footer_offset)
        for ext in chunk_extents(reader):
            key = (ext.row_group, ext.desc.index)
            out.extents[key] = ext
            if not ext.readable:
                out.unreadable.append(key)
            start = ext.dictionary_page_offset
            if start is None or not 4 <= start < (ext.data_page_offset or 0):
                start = ext.data_page_offset
            if ext.num_values and start is not None and start >= 4 and (ext.total_compressed_size or 0) > 0:
                out.chunks[key] = (start, start + int(ext.total_compressed_size or 0))
            if ext.bloom_filter_offset is not None:
                length = ext.bloom_filter_length
                if length is None:
                    try:
                        length = bloom_filter_length(reader, ext)
                    except (ParquetError, ValueError):
                        length = None
                off = int(ext.bloom_filter_offset)
                out.blooms[key] = (off, None if length is None else off + int(length))
            for offset, length, where in ((ext.column_index_offset, ext.column_index_length, out.column_indexes),
                                          (ext.offset_index_offset, ext.offset_index_length, out.offset_indexes)):
                if offset is not None and offset > 0:
                    where[key] = (int(offset), None if length is None else int(offset) + int(length))
        return out

    @property
    def data_end(self) -> int:
        """The end of the last chunk's pages (the first byte past every page, as the footer states them)."""
        return max((e for _, e in self.chunks.values()), default=4)

    def _starts(self) -> list[int]:
        """Where each thing the footer points at starts, and the footer."""
        ranges = [*self.chunks.values(), *self.blooms.values(), *self.column_indexes.values(),
                  *self.offset_indexes.values()]
        return sorted({s for s, _ in ranges} | {self.footer_offset})

    def insertion_points(self, position: str, row_groups: int) -> dict[int, int]:
        """Row group -> where its new filters go (every row group the same point but for
        ``"between_row_groups"``). :class:`~pqbloom.errors.UnsupportedError` when the file's layout does
        not allow the position."""
        if position == "end":
            return dict.fromkeys(range(row_groups), self.footer_offset)
        data_end = self.data_end
        if position == "before_page_indexes":
            starts = [s for s, _ in (*self.column_indexes.values(), *self.offset_indexes.values())]
            at = min(starts, default=self.footer_offset)
            if at < data_end:
                raise UnsupportedError(f"the page indexes do not all follow the pages (one starts at {at}, the pages "
                                       f"end at {data_end}): put the filters at position='end'")
            return dict.fromkeys(range(row_groups), at)
        if position != "between_row_groups":
            raise ValueError(f"position must be one of {', '.join(POSITIONS)}; got {position!r}")
        for key, (s, _) in self.offset_indexes.items():
            if s < data_end:
                raise UnsupportedError(f"the offset index of row group {key[0]}, column {key[1]} lies among the pages "
                                       f"(at {s}, the pages end at {data_end}): put the filters at position='end'")
        starts = self._starts()
        last: dict[int, int] = {}
        for (rg, _), (_, e) in self.chunks.items():
            last[rg] = max(e, last.get(rg, e))
        # the next thing that starts where each row group's pages end (or after): a writer that
        # undercounts a chunk's size (PARQUET-816) still ends its pages where the next chunk begins
        return {rg: starts[bisect_left(starts, last[rg])] for rg in range(row_groups) if rg in last}

    def removable(self, dropped: set[tuple[int, int]], position: str) -> set[tuple[int, int]]:
        """The Bloom filters of ``dropped`` that may be cut out: each one's extent is known, nothing kept
        lies in it, no other cut-out filter overlaps it, and (unless ``position`` rewrites the offset
        indexes) no page moves."""
        if self.unreadable:
            return set()
        kept = [r for k, r in self.blooms.items() if k not in dropped]
        # an extent unknown (end None): only where it starts is sure, so it occupies that one byte
        others = sorted((s, s + 1 if e is None else e) for s, e in
                        [*self.chunks.values(), *kept, *self.column_indexes.values(), *self.offset_indexes.values()])
        starts = [s for s, _ in others]
        reach = np.maximum.accumulate(np.array([e for _, e in others] or [0], dtype=np.int64))
        data_end = self.data_end
        out: set[tuple[int, int]] = set()
        cut_end = -1
        for key in sorted(dropped, key=lambda k: self.blooms[k]):
            start, end = self.blooms[key]
            if end is None or start < 4 or end > self.footer_offset or start < cut_end:
                continue
            if position != "between_row_groups" and start < data_end:
                continue
            i = bisect_left(starts, end)  # the ranges that start before this filter ends
            if i and int(reach[i - 1]) > start:  # one of them reaches into it
                continue
            out.add(key)
            cut_end = end
        return out

    def rewrite_offset_indexes(self, reader: Any, footer: Any, splice: Splice) -> int:
        """Replace (in ``splice``) each offset index whose page offsets move by one holding the new offsets,
        re-encrypted with its column's key, and give ``footer`` (the :class:`~pqbloom.file.edit_footer.FooterEdit`)
        its new length; the number rewritten."""
        # every new offset first, every replacement after: a replacement resets the splice's offset tables
        # (page offsets do not depend on it: the offset indexes all follow the pages)
        done: list[tuple[int, int, int, int, bytes]] = []
        for (rg, col), (start, end) in sorted(self.offset_indexes.items()):
            if end is None:
                raise UnsupportedError(f"the offset index of row group {rg}, column {col} has no length: its page "
                                       f"offsets cannot be rewritten; put the filters at position='end'")
            desc = reader.columns[col]
            stored = reader.range_reader.read(start, end - start, what="offset index")
            try:
                plain = reader.open_module(ModuleType.OFFSET_INDEX, stored, rg, desc)
            except KeyNotFoundError as exc:
                raise KeyNotFoundError(f"the offset index of column {desc.dotted_path!r} holds page offsets that "
                                       f"move, and its key is not given ({exc}); use position='end'") from None
            oi = decode_offset_index(plain, offset=start)
            locations = oi.page_locations or []
            old = np.array([loc.offset for loc in locations], dtype=np.int64)
            new = splice.new_offsets(old)
            if np.array_equal(old, new):
                continue
            for loc, o in zip(locations, new.tolist()):
                loc.offset = o
            data = encode(oi)
            key = footer.column_key(rg, col)
            if key is not None:
                data = footer.ctx.cipher.encrypt(key, ModuleType.OFFSET_INDEX, data, rg, col)
            done.append((rg, col, start, end, data))
        for rg, col, start, end, data in done:
            splice.replace(start, end, data)
            footer.chunk(rg, col).offset_index_length = len(data)  # compact integers may have grown
        return len(done)
