"""Bytes <-> columns, knowing no expressions.

Reading: :mod:`~pqbloom.file.reader` (:class:`~pqbloom.file.reader.FileReader`), :mod:`~pqbloom.file.footer`,
:mod:`~pqbloom.file.pages` (the one page codec), :mod:`~pqbloom.file.column_reader` (chunk assembly),
:mod:`~pqbloom.file.select`, :mod:`~pqbloom.file.levels` (record shredding and assembly; a leaf's values gathered
by :mod:`~pqbloom.file.leaf_values`),
:mod:`~pqbloom.file.chunks` (chunk metadata, ranges, pages, Bloom filters), :mod:`~pqbloom.file.bloom_reader` /
:mod:`~pqbloom.file.bloom_site`. Writing: :mod:`~pqbloom.file.writer`
(:class:`~pqbloom.file.writer.ParquetWriter`), :mod:`~pqbloom.file.column_writer`, :mod:`~pqbloom.file.options`.
Both: :mod:`~pqbloom.file.encryption` (Parquet Modular Encryption of a file's modules).

For the filter engine (:mod:`pqbloom.scan`): :mod:`~pqbloom.file.row_access` (the members of a
``FileReader`` it uses), :mod:`~pqbloom.file.selection` (:class:`RowSelection`, :class:`PageLayout`),
:mod:`~pqbloom.file.page_index` (the page index as :class:`PageStatistics` and layouts),
:mod:`~pqbloom.file.footer_stats` (:class:`FooterStats`), :mod:`~pqbloom.file.row_reads`
(:class:`RowGroupReader`: page selection, IO coalescing and decoding of a row selection),
:mod:`~pqbloom.file.page_reads` (decoding some pages of a chunk), :mod:`~pqbloom.file.dictionary_probe`,
:mod:`~pqbloom.file.encoded_column` (a filter column as codes into its dictionary),
:mod:`~pqbloom.file.dictionary_hits` (the rows whose dictionary entry is one of some, from the index bytes).
The names below are this package's public face for it.
"""

from .column_reader import NestedSelection
from .dictionary_hits import DictionaryHits
from .encoded_column import EncodedColumn
from .footer_stats import FooterStats
from .page_index import ChunkPageIndex, PageStatistics
from .row_access import BindingFacts, BloomProbes
from .row_reads import PageColumns, PageCounts, RepeatedRows, RowGroupReader
from .selection import COALESCE_GAP, PageLayout, PagesDoNotStandAlone, RowSelection, pages_for, take_ranges

__all__ = ["NestedSelection", "DictionaryHits", "EncodedColumn", "FooterStats", "ChunkPageIndex", "PageStatistics", "BindingFacts", "BloomProbes",
           "PageColumns", "PageCounts", "RepeatedRows", "RowGroupReader", "COALESCE_GAP", "PageLayout",
           "PagesDoNotStandAlone", "RowSelection", "pages_for", "take_ranges"]
