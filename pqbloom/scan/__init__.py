"""The filter engine: expressions, literal binding, pruning, exact evaluation, filtered reads.

Expressions
-----------
``field("id") == 5``, ``!=``, ``<``, ``<=``, ``>``, ``>=``, ``field("s").isin([...])``,
``field("x").is_null()``, ``field("x").is_valid()``, combined with ``&``, ``|`` and ``~``.
:func:`to_expression` also takes pyarrow-style DNF lists (``[("id", "==", 5), ...]`` is an AND,
``[[...], [...]]`` an OR of ANDs; ops ``= == != < <= > >= in not in``) and :func:`parse_filter`
a small text grammar (``id == 5 and (s in ('a', 'b') or x is null)``) used by ``pqbloom query``.

Semantics (SQL / Arrow three-valued logic)
------------------------------------------
* A comparison with a null value is null, and a row is returned only when the filter is *true*:
  ``x != 5`` and ``~(x == 5)`` never return rows where ``x`` is null.
* Floats follow IEEE 754 as Arrow compute does: NaN compares false with everything except
  ``!=`` (true); ``-0.0 == +0.0``.
* ``isin`` is never null (as pyarrow's ``is_in``): a null row matches when ``None`` is in the
  list, NaN matches a NaN in the list, and otherwise a value matches when it ``==`` a listed
  value (so, unlike pyarrow's bitwise hashing, ``isin([0.0])`` also matches ``-0.0``).
  ``not in`` is ``~isin`` and therefore returns null rows unless ``None`` is listed.
* A leaf inside a list or map (a *repeated* leaf, named by its full path as in
  ``ParquetFile.schema``: ``field("tags.list.element") == 5``, ``"m.key_value.key"``) is tested
  per element and the row is selected when *at least one* element satisfies the test (SQL's
  ``EXISTS``, DuckDB's ``list_contains`` / ``len(list_filter(...)) > 0``). At row level such a term
  is two-valued: false when no element satisfies it, including rows whose list is null or empty.
  ``is_null()`` / ``is_valid()`` on a repeated leaf ask whether some element is null / non-null.
  ``~(field("tags.list.element") == 5)`` therefore keeps rows with null or empty lists.
* Literals are user values (int, float, Decimal, str, bytes, date, datetime, time, UUID) converted
  to the column's *physical* domain once per file: DATE -> days, TIMESTAMP/TIME -> ticks of the
  unit (aware datetimes are taken in UTC, naive ones as given), DECIMAL -> unscaled integers,
  STRING -> UTF-8 bytes compared byte-wise, unsigned ints compare unsigned. A literal that cannot
  occur in the column folds the comparison (``int32_col == 2**40`` is false for every non-null
  row, ``int_col < 2.5`` becomes ``int_col <= 2``).

Pruning (cheapest first), all of it conservative
------------------------------------------------
Every node yields *may be true* / *may be false* for a unit of rows (row group or page run), so
``~``, ``&`` and ``|`` prune soundly. Row groups are pruned by footer statistics
(:class:`~pqbloom.statistics.ChunkStats`: NaN bounds, truncated bounds, legacy stats and sort
orders already vetted; evaluated for every row group of a file at once, on arrays gathered from
one skim of the footer), then by Bloom filters for ``==`` / ``isin`` (one header read and one
32-byte block per probe; ``0.0`` probes both zeros; never for NaN or BYTE_ARRAY decimals), then
by dictionary pages when ``encoding_stats`` show every data page is dictionary-encoded (the
dictionary is exact). Bloom probes come before dictionaries because they cost two reads of at
most 96 bytes while a dictionary page can be a megabyte. Then the page index
(ColumnIndex + OffsetIndex, only when :func:`~pqbloom.statistics.column_index_is_usable` and the
offsets are consistent with the chunk) selects row ranges; only the pages overlapping them are
read and decoded for the predicate columns; the predicate is evaluated exactly on those rows,
and the other columns are decoded only for the pages holding matching rows (late
materialization). Encrypted files take the same page-level steps: the ColumnIndex and OffsetIndex
of an encrypted column are AES-GCM modules, decrypted with the column's key and authenticated
against their row group and column (a tampered or moved one raises
:class:`~pqbloom.errors.AuthenticationError`), and each page is opened with its ordinal. A column
whose key is not given has no page pruning (reading it raises, using others does not); a read of
every row opens no page index. Dictionary pruning is for plaintext files, page-header walks for
plaintext chunks.

For a repeated leaf, statistics, Bloom filters, dictionaries and page indexes describe its
elements, so they can only prove "no element satisfies the test" (the rows are all false), never
"every row is true" (a row may have no element). Pages of a repeated leaf with an OffsetIndex
begin at record boundaries (the spec requires it; checked when decoding), so page pruning works
as for flat columns.

Explain
-------
Pass an :class:`Explain` to ``ParquetFile.read(..., explain=ex)``, ``iter_batches`` or
``read_table``; it is filled with what the read did (row groups pruned per layer, pages
read/skipped, rows decoded/returned, requests and bytes read).

Modules (each imports only those listed before it, and the file layer's public face)
-----------------------------------------------------------------------------------
:mod:`.expr` (the expression tree), :mod:`.parse` (DNF lists and the text grammar), :mod:`.explain`,
:mod:`.bind` (literals to a column's physical domain; the bound tree), :mod:`.evaluate` (exact
three-valued evaluation), :mod:`.prune` (statistics verdicts, every row group at once),
:mod:`.prune_row_group` (Bloom filters, dictionaries, page index), :mod:`.read` (late
materialization's evaluation side), :mod:`.plan` (:func:`read_filtered`, :class:`FilePlan`). Many
files (directories, Hive partitions, globs, URLs, ``write_to_dataset``) are :mod:`pqbloom.datasets`,
above this package.

The seam with the file layer
----------------------------
The engine decides which rows; the file layer reads them. It reads a file through the members
:mod:`pqbloom.file.row_access` lists (footer statistics as :class:`~pqbloom.file.FooterStats`, Bloom
probes, and per row group a :class:`~pqbloom.file.RowGroupReader`: the page index as
:class:`~pqbloom.file.PageStatistics` and :class:`~pqbloom.file.PageLayout`, dictionaries for pruning,
and ``read_rows`` / ``read_repeated`` / ``page_columns`` of a :class:`~pqbloom.file.RowSelection`), and
imports nothing of :mod:`pqbloom.format`, :mod:`pqbloom.io` or :mod:`pqbloom.crypto`.
``scripts/trace_seam.py`` counts how often a lookup crosses it.
"""

from __future__ import annotations

from ..file import RowSelection
from .bind import BoundFilter
from .explain import Explain
from .expr import And, Compare, Const, Expr, FieldRef, IsIn, IsNull, Not, Or, could_be_true, field, substitute
from .parse import FilterLike, parse_filter, to_expression
from .plan import FilePlan, iter_filtered_batches, plan_file, read_filtered

__all__ = [
    "And",
    "BoundFilter",
    "Compare",
    "Const",
    "Explain",
    "Expr",
    "FieldRef",
    "FilePlan",
    "FilterLike",
    "IsIn",
    "IsNull",
    "Not",
    "Or",
    "RowSelection",
    "could_be_true",
    "field",
    "iter_filtered_batches",
    "parse_filter",
    "plan_file",
    "read_filtered",
    "substitute",
    "to_expression",
]
