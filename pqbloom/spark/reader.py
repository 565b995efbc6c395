"""Reading through the data source: planning (one input partition per surviving (file, row group)) and
reading each partition as Arrow batches.

The schema comes from the footer of the first data file, typed as Spark's own Parquet reader
types it (:mod:`pqbloom.spark.schema`: unsigned integers widened, timestamps in microseconds,
every field nullable at every depth), plus Hive ``key=value`` partition columns (``int`` or
``long`` for integer keys, as Spark types them, else ``string``). Every batch :meth:`PqbloomReader.read`
returns is cast to exactly that schema. TIMESTAMP(NANOS) columns fail at ``load()``, as Spark's
reader refuses them, unless the ``nanos_as_long`` option reads them as ``long`` nanoseconds (Spark's
``spark.sql.legacy.parquet.nanosAsLong``). Planning checks every
file it opens against that first file: the same columns (or, with the ``columns`` option,
at least the requested ones) with the same Spark types, else
:class:`~pqbloom.errors.SchemaError` naming both files and the column. Columns missing from
some files are an error, not nulls (no ``mergeSchema``): read the common columns with
``columns``. Files pruned by partition values are not opened, so not checked.

Spark's filters (``df.where(...)``) are not pushed down: Spark evaluates them on every row
the source returns. Spark 4.3 keeps a Python data source's read plan on the DataFrame and
reuses it for later scans that push no filter (see :class:`PqbloomReader`), so a plan built
from one query's filters would answer the next query wrongly. To prune, give the filter as
the ``filter`` option (pqbloom's grammar and semantics, as ``pqbloom.read_table(filters=...)``
and ``pqbloom query --filter``: ``"id = 42"``, ``"email in ('a', 'b') and amount >= 1"``,
``"x is null"``; where Spark SQL differs: NaN follows IEEE 754, ``in (..., null)`` matches
null rows and ``not in`` keeps them, a timestamp literal without an offset is UTC; see the
guide's Spark page, ``docs/guide/spark.md``). The DataFrame then holds only the matching rows,
for every query on it. Planning (``partitions()``, on Spark's planning Python worker)
evaluates it against partition values, row-group statistics and Bloom filters and yields one
input partition per surviving (file, row group): an absent-key lookup plans zero partitions;
``read()`` applies it exactly (pages, dictionaries, rows). A filter that cannot be parsed or
bound to the first file's columns fails at ``load()``.

Options: ``columns`` ("a,b"), ``nanos_as_long`` ("true"), explicit-key decryption ``footer_key_hex`` and ``column_keys``
("col:HEX,col2:HEX"), or KMS decryption ``kms_key_list`` ("keyA:BASE64,keyB:BASE64", an
in-memory KMS with the same syntax as parquet-java's ``parquet.encryption.key.list``).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import TYPE_CHECKING

from ..api import ParquetFile
from ..datasets import SchemaCheck
from ..errors import SchemaError
from ..scan import Const, Explain, Expr, could_be_true, parse_filter, plan_file, substitute
from .common import DataSourceReader, InputPartition, open_file, option
from .schema import PartitionValues, columns_option, discover_files, spark_types

if TYPE_CHECKING:
    import pyarrow as pa
    from pyspark.sql.types import StructType

__all__ = ["PqbloomReader", "RowGroupPartition", "check_filter", "file_expr", "filter_option", "plan_row_groups"]


def filter_option(options: Mapping[str, str]) -> Expr | None:
    """The ``filter`` read option parsed (pqbloom's filter grammar, :func:`~pqbloom.scan.parse_filter`)."""
    text = option(options, "filter")
    if text is None:
        return None
    try:
        return parse_filter(text)
    except ValueError as exc:
        raise ValueError(f"pqbloom data source: cannot parse the filter option: {exc}") from None


def check_filter(expr: Expr, pf: ParquetFile, env: PartitionValues, path: str) -> None:
    """Bind ``expr`` to ``pf`` as planning will (partition keys substituted), as a clear ValueError."""
    may, e = file_expr(expr, env)
    if not may or e is None:
        return
    try:
        plan_file(pf, e)
    except (KeyError, TypeError, ValueError) as exc:
        msg = exc.args[0] if isinstance(exc, KeyError) and exc.args else exc
        raise ValueError(f"pqbloom data source: the filter option {str(expr)!r} does not apply to "
                         f"{path}: {msg}") from None


def file_expr(expr: Expr | None, env: PartitionValues) -> tuple[bool, Expr | None]:
    """(may match, expression left for the file) after substituting partition values."""
    if expr is None:
        return True, None
    if env:
        expr = substitute(expr, env)
        if not could_be_true(expr):
            return False, None
        if isinstance(expr, Const):
            return True, None
    return True, expr


def plan_row_groups(pf: ParquetFile, expr: Expr | None, ex: Explain | None = None) -> list[int]:
    """Row groups of ``pf`` that statistics and Bloom filters cannot rule out for ``expr``
    (:meth:`pqbloom.scan.FilePlan.row_groups`; dictionaries are left to the read tasks)."""
    return plan_file(pf, expr).row_groups(explain=ex)


class RowGroupPartition(InputPartition):
    """One (file, row group) unit of work."""

    def __init__(self, path: str, row_group: int, env: PartitionValues, expr: Expr | None) -> None:
        super().__init__((path, row_group))
        self.path = path
        self.row_group = row_group
        self.env = env
        self.expr = expr

    def __repr__(self) -> str:
        return f"RowGroupPartition({self.path!r}, rg={self.row_group})"


class PqbloomReader(DataSourceReader):
    """Plans (on Spark's planning worker) and reads (in the tasks) one scan.

    Deliberately no ``pushFilters``: Spark 4.3 keeps the plan a Python data source returns (this
    reader, pickled, and its partitions) on the DataFrame's relation (``PythonDataSourceV2.readInfo``)
    and replaces it only when a later scan of that DataFrame pushes filters. Every scan that pushes
    none (``count()``, ``collect()``, a write) reuses the last plan, and the scans of one DataFrame
    in one query (union, self join) share one. A plan built from pushed filters would so answer
    another query's filter; Spark evaluates every filter itself instead. The plan depends only on
    the DataFrame's options: the ``filter`` option is part of what the DataFrame is, so pruning
    with it is right for every query on it.
    """

    def __init__(self, path: str, options: dict[str, str], schema: StructType) -> None:
        self.path = path
        self.options = options
        self.schema = schema
        self.names = [f.name for f in schema.fields]
        self.expr: Expr | None = filter_option(options)
        self.explain: Explain | None = None  # filled by partitions() (on the planning worker)

    def arrow_schema(self) -> pa.Schema:
        """The Arrow schema Spark checks every returned batch against: pyspark's own conversion of the
        declared schema (``to_arrow_schema``, as ``plan_data_source_read`` calls it): every field nullable
        at every depth, Spark's child names (``element``, ``key``/``value``), timestamps in UTC."""
        from pyspark.sql.pandas.types import to_arrow_schema

        try:
            return to_arrow_schema(self.schema, timezone="UTC")
        except TypeError:  # pragma: no cover - a pyspark whose to_arrow_schema takes no timezone
            return to_arrow_schema(self.schema)

    def partitions(self) -> list[RowGroupPartition]:  # type: ignore[override]
        """Surviving (file, row group) units. Empty when nothing can match; Spark then still runs one
        placeholder task (``InputPartition(None)``) for which :meth:`read` yields nothing."""
        files, ptypes = discover_files(self.path)
        ex = Explain(filter=str(self.expr) if self.expr is not None else "")
        ex.files_total = len(files)
        cols = columns_option(self.options)
        wanted = None if cols is None else [c for c in cols if c not in ptypes]
        check = SchemaCheck(wanted)
        first = files[0][0]  # the file schema() took the schema from
        with open_file(first, self.options) as pf:
            check.add(first, spark_types(pf, ptypes, self.options, wanted))
        parts: list[RowGroupPartition] = []
        for path, env in files:
            may, e = file_expr(self.expr, env)
            if not may:
                ex.files_pruned_partition += 1
                continue
            with open_file(path, self.options) as pf:
                if path != first:  # footers are read here anyway: check every file against the first
                    check.add(path, spark_types(pf, ptypes, self.options, wanted))
                for rg in plan_row_groups(pf, e, ex):
                    parts.append(RowGroupPartition(path, rg, env, e))
        self.explain = ex
        return parts

    def read(self, partition: InputPartition) -> Iterator[pa.RecordBatch]:
        """The rows of one planned (file, row group) that match the ``filter`` option, as Arrow batches."""
        import pyarrow as pa

        if not isinstance(partition, RowGroupPartition):
            return  # Spark runs one placeholder partition when planning found none: nothing to read
        p = partition
        target = self.arrow_schema()
        file_names = [n for n in self.names if n not in p.env]
        with open_file(p.path, self.options) as pf:
            t = plan_file(pf, p.expr).read_row_group(p.row_group, file_names)
            if t is None or t.num_rows == 0:
                return
            at = t.to_arrow()
        n = at.num_rows
        arrays = []
        for f in target:
            if f.name in p.env:  # a partition column: typed by the schema, not by each value (a null is untyped)
                v = p.env[f.name]
                arrays.append(pa.repeat(pa.scalar(None if v is None else (str(v) if pa.types.is_string(f.type) else v),
                                                  f.type), n))
            else:
                arrays.append(conform_column(at.column(f.name), f, p.path))
        table = pa.Table.from_arrays(arrays, schema=target)
        yield from table.to_batches(max_chunksize=65536)


def conform_column(a: pa.ChunkedArray, f: pa.Field, path: str) -> pa.ChunkedArray:
    """Column ``a`` of ``path`` cast to the declared Arrow type of ``f`` (children nullable, unsigned
    integers widened, timestamps in microseconds, INT96 and instants in UTC); a value the declared type
    cannot hold is a SchemaError naming the column and file, never a changed value."""
    import pyarrow as pa

    if a.type == f.type:  # Arrow's type equality includes the children's nullability
        return a
    try:
        return a.cast(f.type)  # safe: fails rather than truncate or overflow
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError) as exc:
        raise SchemaError(f"pqbloom data source: column {f.name!r} of {path} cannot be read as Spark's "
                          f"{f.type}: {exc}") from None

