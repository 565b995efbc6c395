"""The file layer's face to the filter engine: :class:`RowAccess`, a mixin of
:class:`~pqbloom.file.reader.FileReader` (over :class:`~pqbloom.file.chunks.ChunkAccess`).

:mod:`pqbloom.scan` uses a FileReader through these 18 members only (``tests/unit/scan/test_seam.py``
checks that it touches none of the internals named below):

* the schema and shape: :meth:`binding_facts` (the filter's columns, their statistics order and
  duration unit, the writer, the row group count), ``select_columns``, ``num_row_groups``,
  :meth:`row_group_rows`;
* footer statistics as pqbloom objects: :meth:`footer_statistics` (every row group at once),
  :meth:`chunk_statistics` (one chunk);
* Bloom filters: ``bloom_filter``, ``bloom_filter_might_contain`` (``physical=True``),
  :meth:`bloom_probe_ranges` and :meth:`prefetch_bloom_probes` (remote files: every probe in one trip),
  :attr:`reads_concurrently`;
* a row group's reads: :meth:`row_group_reader`, a :class:`~pqbloom.file.row_reads.RowGroupReader`
  (``rows``, ``page_index``, ``dictionary``, ``read_rows`` / ``read_encoded`` / ``read_repeated`` /
  ``page_columns`` of a :class:`~pqbloom.file.selection.RowSelection`, ``counts``);
* results and accounting: ``empty_table``, ``with_file_metadata``, ``io_stats``, :attr:`file_size`;
  :attr:`decodes_on_threads` (whether row groups may be read on worker threads).

Nothing of the format (Thrift structs), of the IO layer or of decryption crosses: ``thrift_metadata``,
``range_reader``, ``decryption``, ``chunk_metadata``, ``decode_chunk`` and ``iter_pages`` stay inside
:mod:`pqbloom.file`.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..errors import ParquetError
from ..format import column_order_name
from ..schema import ColumnDescriptor
from .bloom_reader import chunk_bloom_site, probe_ranges
from .chunks import ChunkAccess
from .footer_stats import FooterStats, footer_statistics
from .row_reads import RowGroupReader

__all__ = ["RowAccess", "BloomProbes", "BindingFacts"]

#: (row group, column, the physical values to probe) of one Bloom filter
BloomProbes = tuple[int, ColumnDescriptor, Sequence[Any]]


@dataclass
class BindingFacts:
    """What binding a filter to a file needs, in one call: each named column's descriptor, statistics
    order (:meth:`RowAccess.column_order`) and Arrow duration unit (``duration_unit``), and the file's
    writer and row group count."""

    columns: dict[str, tuple[ColumnDescriptor, str | None, str | None]]
    created_by: str | None
    num_row_groups: int


class RowAccess(ChunkAccess):
    """What the filter engine reads of a file (see the module docstring)."""

    def binding_facts(self, names: Iterable[str]) -> BindingFacts:
        """:class:`BindingFacts` of the leaf columns ``names`` (dotted paths; ``KeyError`` for a column the
        file does not have, :class:`~pqbloom.errors.SchemaError` for an ambiguous one)."""
        cols = {}
        for name in names:
            desc = self.column_descriptor(name)
            cols[name] = (desc, self.column_order(desc), self.duration_unit(desc))
        return BindingFacts(cols, self.created_by, len(self.thrift_metadata.row_groups))

    def column_order(self, desc: ColumnDescriptor) -> str | None:
        """How the footer says ``desc``'s statistics are ordered: "TYPE_ORDER", "IEEE_754_TOTAL_ORDER",
        "INT96_TIMESTAMP_ORDER", "UNKNOWN" (an order this reader does not know: bounds unusable), or None
        when the footer gives no column orders (or not one per leaf)."""
        orders = self.thrift_metadata.column_orders
        if orders is None or len(orders) != len(self._leaves):
            return None
        return column_order_name(orders[desc.index])

    def footer_statistics(self, descs: Sequence[ColumnDescriptor]
                          ) -> tuple[np.ndarray, dict[int, list[FooterStats | None]]]:
        """Row counts of every row group and the footer statistics of the chunks of ``descs`` in each, by
        leaf index (None: the chunk's metadata is unusable); see :func:`~pqbloom.file.footer_stats.footer_statistics`."""
        return footer_statistics(self, descs, len(self._leaves))

    def chunk_statistics(self, row_group: int, desc: ColumnDescriptor) -> FooterStats:
        """The footer statistics of one chunk (decrypted when needed; :class:`~pqbloom.errors.ParquetError`
        when its metadata is unusable or its key is missing)."""
        return FooterStats.of(self.chunk_metadata(row_group, desc))

    def row_group_reader(self, row_group: int, notes: list[str] | None = None) -> RowGroupReader:
        """The reads of one row group for a filtered read; ``notes`` receives what could not be used."""
        return RowGroupReader(self, row_group, notes)

    @property
    def reads_concurrently(self) -> bool:
        """Whether ranges asked for together are fetched concurrently (a remote file): gathering reads pays."""
        return self.range_reader.concurrent

    @property
    def decodes_on_threads(self) -> bool:
        """Whether row groups may be read on worker threads (:mod:`pqbloom.file.parallel`): not in an
        encrypted file, whose key retrievers are the user's code."""
        return self.decryption is None

    @property
    def file_size(self) -> int:
        """The file's size in bytes."""
        return self.range_reader.size

    def bloom_probe_ranges(self, probes: Sequence[BloomProbes], *, whole_over: int) -> list[tuple[int, int]]:
        """The byte ranges probing ``probes`` reads: the header and block of each value of plaintext
        filters, whole filters where more than ``whole_over`` values are probed. A filter that cannot be
        located is left out (probing it reports the problem); encrypted files: none (read whole)."""
        if self.decryption is not None:
            return []
        out: list[tuple[int, int]] = []
        for rg, desc, values in probes:
            try:
                site = chunk_bloom_site(self, rg, desc, self.chunk_metadata(rg, desc))
                if site is None:
                    continue
                site.check_placement()
                if len(values) > whole_over:
                    if site.length is not None:
                        out.append((site.offset, site.length))
                    continue
                for v in values:
                    out.extend(probe_ranges(site, v, desc))
            except (ParquetError, TypeError, ValueError, OverflowError):
                continue  # the probe meets the same problem and reports it
        return out

    def prefetch_bloom_probes(self, probes: Sequence[BloomProbes], *, whole_over: int) -> None:
        """On a remote file, fetch the reads of :meth:`bloom_probe_ranges` in one concurrent round trip
        (the probes then find them); a local file reads them as it probes."""
        if not self.range_reader.concurrent:
            return
        ranges = self.bloom_probe_ranges(probes, whole_over=whole_over)
        if ranges:
            self.range_reader.prefetch(ranges, what="Bloom filter")
