"""Writing through the data source: task files staged under ``_temporary/``, job commit and abort,
partitioned writes.

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
back after the data columns; Spark's reader and this data source type integer keys ``int`` when
every value fits 32 bits, else ``long``).
A task keeps one open file, and up to ``row_group_size`` buffered rows, per partition value it
sees. ``overwrite`` replaces the whole directory, not only the partitions written.
"""

from __future__ import annotations

import os
import shutil
import uuid
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from ..api import ParquetWriter
from ..crypto.options import encryption_properties_from_options
from ..datasets import partition_dir
from ..table import Table
from .common import DataSourceArrowWriter, WriterCommitMessage, flag, name_list, option

if TYPE_CHECKING:
    import pyarrow as pa

__all__ = ["PqbloomWriter", "TaskFiles"]


def _write_options(options: Mapping[str, str]) -> dict[str, Any]:
    """ParquetWriter keyword arguments from the write options (encryption aside)."""
    out: dict[str, Any] = {}
    comp = option(options, "compression")
    if comp is not None:
        out["compression"] = comp
    rgs = option(options, "row_group_size")
    if rgs is not None:
        out["row_group_size"] = int(rgs)
    bloom_cols = name_list(options, "bloom_filter_columns") or []
    if bloom_cols:
        spec: dict[str, Any] = {}
        fpp = option(options, "bloom_fpp")
        ndv = option(options, "bloom_ndv")
        if fpp is not None:
            spec["fpp"] = float(fpp)
        if ndv is not None:
            spec["ndv"] = int(ndv)
        out["bloom_filter_options"] = {c: dict(spec) if spec else True for c in bloom_cols}
    pos = option(options, "bloom_position")
    if pos is not None:
        out["bloom_filter_position"] = pos
    pi = option(options, "page_index")
    if pi is not None:
        out["write_page_index"] = flag(pi, True)
    ud = option(options, "use_dictionary")
    if ud is not None:
        out["use_dictionary"] = flag(ud, True)
    return out


@dataclass
class TaskFiles(WriterCommitMessage):
    """What one write task produced: temporary paths and their final names."""

    moves: list[tuple[str, str]] = field(default_factory=list)
    rows: int = 0


class PqbloomWriter(DataSourceArrowWriter):
    """Writes one job: each task's files are staged, the job commit moves them into ``path``."""

    def __init__(self, path: str, options: dict[str, str], overwrite: bool) -> None:
        self.path = path
        self.options = options
        self.overwrite = overwrite
        self.job_id = uuid.uuid4().hex[:12]

    def _staging(self) -> str:
        return os.path.join(self.path, "_temporary", self.job_id)

    def write(self, iterator: Iterator[pa.RecordBatch]) -> TaskFiles:
        """Write one task's batches to staged files (one per partition value); what to move at commit."""
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
                batch = _writable_batch(batch)
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
                    subdir = partition_dir(keys, values, style="hive")
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

    def commit(self, messages: list[WriterCommitMessage | None]) -> None:
        """Move every task's files into place (after deleting the old data files when overwriting),
        then write ``_SUCCESS``."""
        os.makedirs(self.path, exist_ok=True)
        done = _task_files(messages)
        if self.overwrite:
            keep = {dst for m in done for _, dst in m.moves}
            for entry in os.listdir(self.path):
                full = os.path.join(self.path, entry)
                if entry == "_temporary" or full in keep:
                    continue
                if os.path.isdir(full):
                    shutil.rmtree(full)
                else:
                    os.remove(full)
        for m in done:
            for src, dst in m.moves:
                os.makedirs(os.path.dirname(dst), exist_ok=True)
                os.replace(src, dst)
        self._cleanup()
        with open(os.path.join(self.path, "_SUCCESS"), "w"):
            pass

    def abort(self, messages: list[WriterCommitMessage | None]) -> None:
        """Delete what the tasks wrote; nothing of the job is left."""
        for m in _task_files(messages):
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
        self.writer: ParquetWriter | None = None
        self.pending: list[pa.RecordBatch] = []
        self.buffered = 0

    def add(self, batch: pa.RecordBatch) -> None:
        """Buffer ``batch``; write the full row groups buffered so far."""
        self.pending.append(batch)
        self.buffered += batch.num_rows
        if self.buffered >= self.rg_rows:
            self._flush(False)

    def _flush(self, final: bool) -> None:
        import pyarrow as pa

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
        """Close and delete the temporary file (the task failed)."""
        if self.writer is not None:
            try:
                self.writer.close()
            except Exception:
                pass
            self.writer = None
        if os.path.exists(self.tmp):
            os.remove(self.tmp)


def _task_files(messages: list[WriterCommitMessage | None]) -> list[TaskFiles]:
    """The tasks' messages (None for a task that failed before reporting)."""
    return [m for m in messages if isinstance(m, TaskFiles)]


def _partition_by_option(options: Mapping[str, str]) -> list[str]:
    return name_list(options, "partition_by") or []


def _split_by_keys(batch: pa.RecordBatch, keys: Sequence[str]) -> Iterator[tuple[tuple[Any, ...], pa.RecordBatch]]:
    """(key values, rows) for every distinct combination of ``keys`` in ``batch`` (vectorized:
    one dictionary encoding per key, one stable sort)."""
    import numpy as np
    import pyarrow as pa
    import pyarrow.compute as pc

    codes = np.zeros(batch.num_rows, np.int64)
    for k in keys:
        enc = pc.dictionary_encode(batch.column(k), null_encoding="encode")
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


def _writable_batch(batch: pa.RecordBatch) -> pa.RecordBatch:
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
