"""A PySpark (4.x) Python Data Source named ``pqbloom``: Spark reads and writes through pqbloom.

>>> import pqbloom.spark
>>> pqbloom.spark.register(spark)
>>> df = spark.read.format("pqbloom").load("/data/events")          # a file or a directory
>>> df.where("id = 42").collect()                                   # Spark filters the rows
>>> spark.read.format("pqbloom").option("filter", "id = 42").load(p)  # pruned by stats + Bloom filters
>>> df.write.format("pqbloom").option("bloom_filter_columns", "id,email").mode("overwrite").save(path)

Reading
    The schema comes from the footer of the first data file (plus Hive ``key=value`` partition
    columns, ``long`` when every value is an integer, else ``string``). Planning checks every
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
    README). The DataFrame then holds only the matching rows,
    for every query on it. Planning (``partitions()``, on Spark's planning Python worker)
    evaluates it against partition values, row-group statistics and Bloom filters and yields one
    input partition per surviving (file, row group): an absent-key lookup plans zero partitions;
    ``read()`` applies it exactly (pages, dictionaries, rows). A filter that cannot be parsed or
    bound to the first file's columns fails at ``load()``.

    Options: ``columns`` ("a,b"), explicit-key decryption ``footer_key_hex`` and ``column_keys``
    ("col:HEX,col2:HEX"), or KMS decryption ``kms_key_list`` ("keyA:BASE64,keyB:BASE64", an
    in-memory KMS with the same syntax as parquet-java's ``parquet.encryption.key.list``).

Writing
    Each task writes one ``part-<uuid>-<partition>.parquet`` under ``<dir>/_temporary/`` with
    pqbloom; ``commit()`` renames the task files into ``<dir>`` and writes ``_SUCCESS``;
    ``abort()`` deletes them. Options: ``compression``, ``row_group_size`` (rows),
    ``bloom_filter_columns`` ("id,email"), ``bloom_fpp``, ``bloom_ndv``, ``bloom_position``
    (``after_row_group``/``end``), ``page_index`` (true/false), ``use_dictionary``, and either
    explicit encryption keys ``footer_key_hex`` / ``column_keys`` ("col:HEX") / ``plaintext_footer``
    or KMS encryption (PKMT1 key metadata, readable by parquet-java's
    ``PropertiesDrivenCryptoFactory``): ``kms_key_list``, ``encryption_footer_key`` (a master key
    id) and ``encryption_column_keys`` ("keyB:email;keyC:ssn").

    Save modes: the Python data source API only tells the writer ``overwrite`` (true/false).
    ``append`` adds part files; ``overwrite`` deletes the existing data files of the directory at
    commit time (after the new files are written). ``error``/``errorifexists``/``ignore`` (and
    so the default mode, ``errorifexists``) are rejected by Spark itself for Python data sources
    (``UNSUPPORTED_DATA_SOURCE_SAVE_MODE``; see the tests): always call ``.mode(...)``.

    Partitioned writes: Spark 4.3 rejects ``df.write.partitionBy(...)`` for a Python data source
    before any task runs ("The provided partitioning or clustering columns do not match the
    existing table's": the source's table has no partitioning and the API has no way to declare
    one; ``bucketBy`` is rejected too). Use the ``partition_by`` option instead
    (``.option("partition_by", "country,year")``): each task splits its rows by those columns'
    values and writes one file per value combination under Hive-style ``country=FR/year=2024/``
    directories (values as ``str(value)`` with Hive's ``%XX`` escapes; null and ``""`` as
    ``__HIVE_DEFAULT_PARTITION__``); the partition columns are not stored in the files. Spark's
    native reader, pyarrow and this data source read the layout back (the partition columns come
    back as ``long`` when every value is an integer, else ``string``, and after the data columns).
    A task keeps one open file, and up to ``row_group_size`` buffered rows, per partition value it
    sees. ``overwrite`` replaces the whole directory, not only the partitions written.

Importing this module does not need pyspark; :func:`register` does.
"""

from __future__ import annotations

import os
import shutil
import uuid
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

from .crypto.options import decryption_properties_from_options, encryption_properties_from_options
from .dataset import HIVE_NULL, SchemaCheck, discover, partition_types, partition_value
from .errors import UnsupportedError
from .predicate import Const, Explain, Expr, could_be_true, parse_filter, plan_file, substitute
from .reader import ParquetFile

try:  # pyspark is optional: only register() and the data source classes need it
    from pyspark.sql.datasource import (
        DataSource,
        DataSourceArrowWriter,
        DataSourceReader,
        InputPartition,
        WriterCommitMessage,
    )

    HAVE_PYSPARK = True
except ImportError:  # pragma: no cover - exercised only without pyspark
    HAVE_PYSPARK = False

    class DataSource:  # type: ignore[no-redef]
        def __init__(self, options: Any) -> None:
            self.options = options

    class DataSourceReader:  # type: ignore[no-redef]
        pass

    class DataSourceArrowWriter:  # type: ignore[no-redef]
        pass

    class InputPartition:  # type: ignore[no-redef]
        def __init__(self, value: Any) -> None:
            self.value = value

    class WriterCommitMessage:  # type: ignore[no-redef]
        pass


__all__ = ["PqbloomDataSource", "SHORT_NAME", "plan_row_groups", "register", "spark_schema"]

SHORT_NAME = "pqbloom"


def register(spark: Any) -> None:
    """Register the ``pqbloom`` data source with ``spark`` (no session setting is changed)."""
    if not HAVE_PYSPARK:
        raise ImportError("pqbloom.spark.register needs pyspark>=4.0 (pip install 'pqbloom[spark]')")
    spark.dataSource.register(PqbloomDataSource)


# ---------------------------------------------------------------------------
# options
# ---------------------------------------------------------------------------
def _opt(options: Any, name: str, default: str | None = None) -> str | None:
    v = options.get(name)
    return default if v is None or v == "" else str(v)


def _bool(v: str | None, default: bool) -> bool:
    if v is None:
        return default
    return v.strip().lower() in ("1", "true", "yes", "on")


def _write_options(options: Any) -> dict[str, Any]:
    out: dict[str, Any] = {}
    comp = _opt(options, "compression")
    if comp is not None:
        out["compression"] = comp
    rgs = _opt(options, "row_group_size")
    if rgs is not None:
        out["row_group_size"] = int(rgs)
    bloom_cols = [c.strip() for c in (_opt(options, "bloom_filter_columns", "") or "").split(",") if c.strip()]
    if bloom_cols:
        spec: dict[str, Any] = {}
        fpp = _opt(options, "bloom_fpp")
        ndv = _opt(options, "bloom_ndv")
        if fpp is not None:
            spec["fpp"] = float(fpp)
        if ndv is not None:
            spec["ndv"] = int(ndv)
        out["bloom_filter_options"] = {c: dict(spec) if spec else True for c in bloom_cols}
    pos = _opt(options, "bloom_position")
    if pos is not None:
        out["bloom_filter_position"] = pos
    pi = _opt(options, "page_index")
    if pi is not None:
        out["write_page_index"] = _bool(pi, True)
    ud = _opt(options, "use_dictionary")
    if ud is not None:
        out["use_dictionary"] = _bool(ud, True)
    return out


# ---------------------------------------------------------------------------
# schema
# ---------------------------------------------------------------------------
def _arrow_to_ddl(t: Any) -> str:
    import pyarrow as pa

    if pa.types.is_boolean(t):
        return "boolean"
    if pa.types.is_int8(t):
        return "byte"
    if pa.types.is_int16(t) or pa.types.is_uint8(t):
        return "short"
    if pa.types.is_int32(t) or pa.types.is_uint16(t):
        return "int"
    if pa.types.is_int64(t) or pa.types.is_uint32(t):
        return "long"
    if pa.types.is_uint64(t):
        return "decimal(20,0)"
    if pa.types.is_float16(t) or pa.types.is_float32(t):
        return "float"
    if pa.types.is_float64(t):
        return "double"
    if pa.types.is_string(t) or pa.types.is_large_string(t):
        return "string"
    if pa.types.is_binary(t) or pa.types.is_large_binary(t) or pa.types.is_fixed_size_binary(t):
        return "binary"
    if pa.types.is_date(t):
        return "date"
    if pa.types.is_timestamp(t):
        return "timestamp" if t.tz is not None else "timestamp_ntz"
    if pa.types.is_decimal(t):
        return f"decimal({t.precision},{t.scale})"
    if pa.types.is_list(t) or pa.types.is_large_list(t) or pa.types.is_fixed_size_list(t):
        return f"array<{_arrow_to_ddl(t.value_type)}>"
    if pa.types.is_map(t):
        return f"map<{_arrow_to_ddl(t.key_type)},{_arrow_to_ddl(t.item_type)}>"
    if pa.types.is_struct(t):
        return "struct<" + ",".join(f"`{t.field(i).name}`:{_arrow_to_ddl(t.field(i).type)}"
                                    for i in range(t.num_fields)) + ">"
    if pa.types.is_null(t):
        return "void"
    raise UnsupportedError(f"no Spark type for Arrow type {t}")


def _without_extensions(t: Any) -> Any:
    """``t`` with Arrow extension types (arrow.uuid, arrow.json, as ``to_arrow()`` gives them) replaced by
    their storage types, all the way down: Spark takes the storage (binary, string)."""
    import pyarrow as pa

    if isinstance(t, pa.BaseExtensionType):
        return _without_extensions(t.storage_type)
    if pa.types.is_struct(t):
        return pa.struct([t.field(i).with_type(_without_extensions(t.field(i).type)) for i in range(t.num_fields)])
    if pa.types.is_map(t):
        return pa.map_(t.key_field.with_type(_without_extensions(t.key_type)),
                       t.item_field.with_type(_without_extensions(t.item_type)))
    if pa.types.is_list(t):
        return pa.list_(t.value_field.with_type(_without_extensions(t.value_type)))
    if pa.types.is_large_list(t):
        return pa.large_list(t.value_field.with_type(_without_extensions(t.value_type)))
    return t


def _file_arrow_schema(pf: ParquetFile, columns: Sequence[str] | None) -> Any:
    import pyarrow as pa

    sch = pf._empty(columns).to_arrow().schema
    fields = []
    by_name = {f.name: f for f in pf.table_schema}
    for f in sch:
        pqf = by_name.get(f.name)
        t = _without_extensions(f.type)
        if pa.types.is_timestamp(t) and (t.tz is not None or getattr(pqf, "physical_type", None) == 1):
            t = pa.timestamp("us", tz="UTC")  # instants (INT96 as Spark writes it, or isAdjustedToUTC)
        elif pa.types.is_timestamp(t):
            t = pa.timestamp("us")
        fields.append(pa.field(f.name, t, True))
    return pa.schema(fields)


def _spark_types(pf: ParquetFile, skip: Any) -> dict[str, str]:
    """``{column: Spark DDL type}`` of the file's top-level columns (not those in ``skip``)."""
    return {f.name: _arrow_to_ddl(f.type) for f in _file_arrow_schema(pf, None) if f.name not in skip}


def spark_schema(path: str, options: Any = None) -> str:
    """The Spark DDL schema the data source reports for ``path`` (a file or a directory)."""
    options = options or {}
    files, ptypes = _discover(path)
    cols = _columns_option(options)
    file_cols = None if cols is None else [c for c in cols if c not in ptypes]
    with ParquetFile(files[0][0], decryption_properties=decryption_properties_from_options(options)) as pf:
        asch = _file_arrow_schema(pf, file_cols)
    parts = [f"`{f.name}` {_arrow_to_ddl(f.type)}" for f in asch]
    parts += [f"`{k}` {'long' if t == 'int64' else 'string'}" for k, t in ptypes.items()
              if cols is None or k in cols]
    if cols is not None:  # keep the requested order
        order = {c: i for i, c in enumerate(cols)}
        parts.sort(key=lambda p: order[p.split("`")[1]])
    return ", ".join(parts)


def _columns_option(options: Any) -> list[str] | None:
    text = _opt(options, "columns")
    if text is None:
        return None
    return [c.strip() for c in text.split(",") if c.strip()]


def _discover(path: str) -> tuple[list[tuple[str, dict[str, Any]]], dict[str, str]]:
    """[(file, typed partition values)], {partition key: 'int64'|'string'}."""
    if os.path.isfile(path):
        return [(path, {})], {}
    if not os.path.isdir(path):
        raise FileNotFoundError(f"no such file or directory: {path!r}")
    frags = discover(path)
    if not frags:
        raise FileNotFoundError(f"no data files under {path!r}")
    ptypes = partition_types(frags)
    return [(fr.path, {k: partition_value(fr.partitions.get(k), t) for k, t in ptypes.items()}) for fr in frags], ptypes


# ---------------------------------------------------------------------------
# filters and planning
# ---------------------------------------------------------------------------
def _filter_option(options: Any) -> Expr | None:
    """The ``filter`` read option parsed (pqbloom's filter grammar, :func:`~pqbloom.predicate.parse_filter`)."""
    text = _opt(options, "filter")
    if text is None:
        return None
    try:
        return parse_filter(text)
    except ValueError as exc:
        raise ValueError(f"pqbloom data source: cannot parse the filter option: {exc}") from None


def _check_filter(expr: Expr, pf: ParquetFile, env: dict[str, Any], path: str) -> None:
    """Bind ``expr`` to ``pf`` as planning will (partition keys substituted), as a clear ValueError."""
    may, e = _file_expr(expr, env)
    if not may or e is None:
        return
    try:
        plan_file(pf, e)
    except (KeyError, TypeError, ValueError) as exc:
        msg = exc.args[0] if isinstance(exc, KeyError) and exc.args else exc
        raise ValueError(f"pqbloom data source: the filter option {str(expr)!r} does not apply to "
                         f"{path}: {msg}") from None


def _file_expr(expr: Expr | None, env: dict[str, Any]) -> tuple[bool, Expr | None]:
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
    (:meth:`pqbloom.predicate.FilePlan.row_groups`; dictionaries are left to the read tasks)."""
    return plan_file(pf, expr).row_groups(explain=ex)


class RowGroupPartition(InputPartition):
    """One (file, row group) unit of work."""

    def __init__(self, path: str, row_group: int, env: dict[str, Any], expr: Expr | None) -> None:
        super().__init__((path, row_group))
        self.path = path
        self.row_group = row_group
        self.env = env
        self.expr = expr

    def __repr__(self) -> str:
        return f"RowGroupPartition({self.path!r}, rg={self.row_group})"


# ---------------------------------------------------------------------------
# the data source
# ---------------------------------------------------------------------------
class PqbloomDataSource(DataSource):
    """``spark.read.format("pqbloom")`` / ``df.write.format("pqbloom")``; see the module doc."""

    @classmethod
    def name(cls) -> str:
        return SHORT_NAME

    def _path(self) -> str:
        p = self.options.get("path")
        if not p:
            raise ValueError("the pqbloom data source needs a path: .load(path) / .save(path)")
        p = str(p)
        return p[len("file:"):] if p.startswith("file:") else p

    def schema(self) -> str:
        path = self._path()
        expr = _filter_option(self.options)
        if expr is not None:  # a bad filter fails at load(), not at the first action
            files, _ = _discover(path)
            first, env = files[0]
            with ParquetFile(first, decryption_properties=decryption_properties_from_options(self.options)) as pf:
                _check_filter(expr, pf, env, first)
        return spark_schema(path, self.options)

    def reader(self, schema: Any) -> PqbloomReader:
        return PqbloomReader(self._path(), dict(self.options), schema)

    def writer(self, schema: Any, overwrite: bool) -> PqbloomWriter:
        return PqbloomWriter(self._path(), dict(self.options), overwrite)


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

    def __init__(self, path: str, options: dict[str, str], schema: Any) -> None:
        self.path = path
        self.options = options
        self.names = [f.name for f in schema.fields]
        # partition columns come from paths: typed by the schema, not by each value (a null is untyped)
        self.long_columns = {f.name for f in schema.fields if f.dataType.typeName() == "long"}
        self.expr: Expr | None = _filter_option(options)
        self.explain: Explain | None = None  # filled by partitions() (on the planning worker)

    def partitions(self) -> list[RowGroupPartition]:  # type: ignore[override]
        """Surviving (file, row group) units. Empty when nothing can match; Spark then still runs one
        placeholder task (``InputPartition(None)``) for which :meth:`read` yields nothing."""
        files, ptypes = _discover(self.path)
        dec = decryption_properties_from_options(self.options)
        ex = Explain(filter=str(self.expr) if self.expr is not None else "")
        ex.files_total = len(files)
        cols = _columns_option(self.options)
        check = SchemaCheck(None if cols is None else [c for c in cols if c not in ptypes])
        first = files[0][0]  # the file schema() took the schema from
        with ParquetFile(first, decryption_properties=dec) as pf:
            check.add(first, _spark_types(pf, ptypes))
        parts: list[RowGroupPartition] = []
        for path, env in files:
            may, e = _file_expr(self.expr, env)
            if not may:
                ex.files_pruned_partition += 1
                continue
            with ParquetFile(path, decryption_properties=dec) as pf:
                if path != first:  # footers are read here anyway: check every file against the first
                    check.add(path, _spark_types(pf, ptypes))
                for rg in plan_row_groups(pf, e, ex):
                    parts.append(RowGroupPartition(path, rg, env, e))
        self.explain = ex
        return parts

    def read(self, partition: Any) -> Iterator[Any]:
        import pyarrow as pa

        if not isinstance(partition, RowGroupPartition):
            return  # Spark runs one placeholder partition when planning found none: nothing to read
        p = partition
        dec = decryption_properties_from_options(self.options)
        with ParquetFile(p.path, decryption_properties=dec) as pf:
            file_names = [n for n in self.names if n not in p.env]
            target = _file_arrow_schema(pf, file_names)
            t = plan_file(pf, p.expr).read_row_group(p.row_group, file_names)
            if t is None or t.num_rows == 0:
                return
            at = t.to_arrow()
        arrays = []
        for f in target:
            a = at.column(f.name)
            arrays.append(a.cast(f.type) if a.type != f.type else a)
        n = at.num_rows
        cols = dict(zip(target.names, arrays))
        for k, v in p.env.items():
            if k in self.long_columns:
                cols[k] = pa.repeat(pa.scalar(v, pa.int64()), n)
            else:
                cols[k] = pa.repeat(pa.scalar(None if v is None else str(v), pa.string()), n)
        table = pa.table({nm: cols[nm] for nm in self.names})
        yield from table.to_batches(max_chunksize=65536)


@dataclass
class TaskFiles(WriterCommitMessage):
    """What one write task produced: temporary paths and their final names."""

    moves: list[tuple[str, str]] = field(default_factory=list)
    rows: int = 0


class PqbloomWriter(DataSourceArrowWriter):
    def __init__(self, path: str, options: dict[str, str], overwrite: bool) -> None:
        self.path = path
        self.options = options
        self.overwrite = overwrite
        self.job_id = uuid.uuid4().hex[:12]

    def _staging(self) -> str:
        return os.path.join(self.path, "_temporary", self.job_id)

    def write(self, iterator: Iterator[Any]) -> TaskFiles:
        import pyarrow as pa
        from pyspark import TaskContext

        ctx = TaskContext.get()
        pid = ctx.partitionId() if ctx is not None else 0
        attempt = ctx.attemptNumber() if ctx is not None else 0
        staging = self._staging()
        name = f"part-{pid:05d}-{self.job_id}.parquet"
        opts = _write_options(self.options)
        enc = encryption_properties_from_options(self.options)
        if enc is not None:
            opts["encryption_properties"] = enc
        keys = _partition_by_option(self.options)
        outputs: dict[str, _OutputFile] = {}  # Hive directory ("" unpartitioned) -> its file

        def output(subdir: str) -> _OutputFile:
            out = outputs.get(subdir)
            if out is None:
                os.makedirs(os.path.join(staging, subdir), exist_ok=True)
                tmp = os.path.join(staging, subdir, f"{name}.attempt{attempt}")
                out = outputs[subdir] = _OutputFile(tmp, os.path.join(self.path, subdir, name), opts)
            return out

        rows = 0
        try:
            for batch in iterator:
                if batch.num_rows == 0:
                    continue
                batch = _writable(batch)
                rows += batch.num_rows
                if not keys:
                    output("").add(batch)
                    continue
                missing = [k for k in keys if k not in batch.schema.names]
                if missing:
                    raise ValueError(f"partition_by column {missing[0]!r} is not in the data "
                                     f"(columns: {batch.schema.names})")
                if len(keys) == batch.num_columns:
                    raise ValueError("partition_by cannot name every column: no data would be left to write")
                data_cols = [c for c in batch.schema.names if c not in keys]  # Hive: keys live in paths
                for values, part in _split_by_keys(batch, keys):
                    subdir = os.path.join(*(f"{_escape_path_name(k)}={_partition_dir_value(v)}"
                                            for k, v in zip(keys, values)))
                    output(subdir).add(pa.RecordBatch.from_arrays(
                        [part.column(c) for c in data_cols], schema=pa.schema([part.schema.field(c) for c in data_cols])))
            moves = []
            for out in outputs.values():
                if out.close():
                    moves.append((out.tmp, out.final))
        except BaseException:
            for out in outputs.values():
                out.discard()
            raise
        return TaskFiles(moves, rows)  # an empty task writes no file

    def commit(self, messages: list[Any]) -> None:
        os.makedirs(self.path, exist_ok=True)
        if self.overwrite:
            keep = {dst for m in messages if m is not None for _, dst in m.moves}
            for entry in os.listdir(self.path):
                full = os.path.join(self.path, entry)
                if entry == "_temporary" or full in keep:
                    continue
                if os.path.isdir(full):
                    shutil.rmtree(full)
                else:
                    os.remove(full)
        for m in messages:
            if m is None:
                continue
            for src, dst in m.moves:
                os.makedirs(os.path.dirname(dst), exist_ok=True)
                os.replace(src, dst)
        self._cleanup()
        with open(os.path.join(self.path, "_SUCCESS"), "w"):
            pass

    def abort(self, messages: list[Any]) -> None:
        for m in messages:
            if m is None:
                continue
            for src, _ in m.moves:
                if os.path.exists(src):
                    os.remove(src)
        self._cleanup()

    def _cleanup(self) -> None:
        shutil.rmtree(self._staging(), ignore_errors=True)
        tmp_root = os.path.join(self.path, "_temporary")
        try:
            os.rmdir(tmp_root)  # only when no other job is using it
        except OSError:
            pass


class _OutputFile:
    """One file a write task produces: Spark's Arrow batches (``spark.sql.execution.arrow.
    maxRecordsPerBatch`` rows each) are buffered so each row group gets ``row_group_size`` rows
    (ParquetWriter cuts one row group per ``write_table``)."""

    def __init__(self, tmp: str, final: str, opts: dict[str, Any]) -> None:
        self.tmp, self.final, self.opts = tmp, final, opts
        self.rg_rows = int(opts.get("row_group_size", 1024 * 1024))
        self.writer: Any = None
        self.pending: list[Any] = []
        self.buffered = 0

    def add(self, batch: Any) -> None:
        self.pending.append(batch)
        self.buffered += batch.num_rows
        if self.buffered >= self.rg_rows:
            self._flush(False)

    def _flush(self, final: bool) -> None:
        import pyarrow as pa

        from .table import Table
        from .writer import ParquetWriter

        if not self.pending:
            return
        table = pa.Table.from_batches(self.pending)
        self.pending, self.buffered = [], 0
        cut = table.num_rows if final else (table.num_rows // self.rg_rows) * self.rg_rows
        if cut:
            t = Table.from_arrow(table.slice(0, cut))
            if self.writer is None:
                self.writer = ParquetWriter(self.tmp, t.schema, **self.opts)
            self.writer.write_table(t)
        if cut < table.num_rows:
            self.pending = table.slice(cut).to_batches()
            self.buffered = table.num_rows - cut

    def close(self) -> bool:
        """Write what is buffered and close; False when no row was ever written (no file)."""
        self._flush(True)
        if self.writer is None:
            return False
        self.writer.close()
        self.writer = None
        return True

    def discard(self) -> None:
        if self.writer is not None:
            try:
                self.writer.close()
            except Exception:
                pass
            self.writer = None
        if os.path.exists(self.tmp):
            os.remove(self.tmp)


def _partition_by_option(options: Any) -> list[str]:
    return [c.strip() for c in (_opt(options, "partition_by", "") or "").split(",") if c.strip()]


def _split_by_keys(batch: Any, keys: Sequence[str]) -> Iterator[tuple[tuple[Any, ...], Any]]:
    """(key values, rows) for every distinct combination of ``keys`` in ``batch`` (vectorized:
    one dictionary encoding per key, one stable sort)."""
    import numpy as np
    import pyarrow as pa
    import pyarrow.compute as pc

    codes = np.zeros(batch.num_rows, np.int64)
    dicts = []
    for k in keys:
        enc = pc.dictionary_encode(batch.column(k), null_encoding="encode")
        dicts.append(enc.dictionary)
        idx = enc.indices.to_numpy(zero_copy_only=False).astype(np.int64)
        codes = codes * len(enc.dictionary) + idx
    order = np.argsort(codes, kind="stable")
    sorted_codes = codes[order]
    starts = np.flatnonzero(np.r_[True, sorted_codes[1:] != sorted_codes[:-1]])
    ends = np.r_[starts[1:], len(order)]
    taken = batch.take(pa.array(order))
    first_rows = order[starts]
    for s, e, r in zip(starts.tolist(), ends.tolist(), first_rows.tolist()):
        yield tuple(batch.column(k)[r].as_py() for k in keys), taken.slice(s, e - s)


# Characters Hive and Spark escape in partition directory names (ExternalCatalogUtils.escapePathName)
_PATH_ESCAPE = frozenset('"#%\'*/:=?\\\x7f{[]^') | frozenset(chr(c) for c in range(0x20))


def _escape_path_name(text: str) -> str:
    return "".join(f"%{ord(c):02X}" if c in _PATH_ESCAPE else c for c in text)


def _partition_dir_value(v: Any) -> str:
    if v is None or v == "":
        return HIVE_NULL
    if isinstance(v, bool):
        return "true" if v else "false"
    return _escape_path_name(str(v))


def _writable(batch: Any) -> Any:
    """Spark's Arrow batches with timezone-aware timestamps as pqbloom expects them (UTC instants)."""
    import pyarrow as pa

    arrays, fields = [], []
    for f, a in zip(batch.schema, batch.columns):
        t = f.type
        if pa.types.is_timestamp(t) and t.tz is not None and t.tz != "UTC":
            a = a.cast(pa.timestamp(t.unit, tz="UTC"))
            f = pa.field(f.name, a.type, f.nullable)
        arrays.append(a)
        fields.append(f)
    return pa.RecordBatch.from_arrays(arrays, schema=pa.schema(fields))
