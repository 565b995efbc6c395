"""CSV and JSON Lines to Parquet, streamed in bounded memory.

:func:`convert` reads its input in chunks of ``chunk_rows`` rows (``csv`` / ``json`` modules),
types each chunk's columns with numpy, gathers chunks until a row group is full and hands it
to :class:`pqbloom.ParquetWriter`. Memory is bounded by one row group of typed columns plus
one chunk of parsed text, whatever the size of the input.

Types come from the first chunk unless given (``--schema 'id:int64,ts:timestamp[us, UTC]'``;
a schema may name only some columns, the others are still inferred). Later chunks are coerced
to those types; a value that does not fit stops the conversion with its line number, and
nothing is written (the output appears only when the writer closes without error).

Column types are inferred by :mod:`pqbloom.cli.infer` (CSV: bool, int64, double, date, timestamp,
then string; JSON Lines keep their JSON types); empty fields (and any ``null_values``) are nulls.
The input is read by :mod:`pqbloom.cli.textio`.

Encryption options (``--footer-key-hex``, ``--column-key``, ``--kms-config``...) are parsed by
:mod:`pqbloom.crypto.options`, which documents the KMS config file.
"""

from __future__ import annotations

import gzip
import io
import logging
import os
import re
import shutil
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import IO, Any

from ..api import ParquetWriter
from ..crypto import FileEncryptionProperties
from ..errors import SchemaError
from ..file.options import BloomFilterSpec
from ..schema import Field, Schema, make_field
from ..table import Table
from .errors import ConvertError
from .infer import ColumnTyper, infer_json_type, infer_text_type
from .textio import CountingReader, csv_chunks, jsonl_chunks

__all__ = [
    "ConvertError",
    "ConvertResult",
    "ProgressCallback",
    "convert",
    "parse_schema_spec",
    "progress_mode",
    "parse_bloom_spec",
]

DEFAULT_CHUNK_ROWS = 65_536

log = logging.getLogger(__name__)

#: ``on_progress(rows converted, input bytes those rows came from, input size or None)``
ProgressCallback = Callable[[int, int, "int | None"], None]


@dataclass
class ConvertResult:
    """What :func:`convert` did: rows and row groups written, bytes in and out, time, the schema used."""

    rows: int = 0
    row_groups: int = 0
    input_bytes: int = 0
    output_bytes: int = 0
    seconds: float = 0.0
    schema: Schema | None = None
    engine: str = ""  # the CSV / JSON parser used: "pyarrow" or "python"
    notes: list[str] = field(default_factory=list)


# ---------------------------------------------------------------------------------------------
# option parsing


def _split_top(text: str, sep: str = ",") -> list[str]:
    """Split on ``sep`` outside brackets and parentheses (``timestamp[us, UTC]``, ``decimal(10, 2)``)."""
    out: list[str] = []
    cur: list[str] = []
    depth = 0
    for ch in text:
        if ch in "[(":
            depth += 1
        elif ch in "])":
            depth -= 1
        if ch == sep and depth == 0:
            out.append("".join(cur))
            cur = []
        else:
            cur.append(ch)
    out.append("".join(cur))
    return [p.strip() for p in out if p.strip()]


def parse_schema_spec(spec: str) -> list[Field]:
    """``"id:int64 not null, email:string, ts:timestamp[us, UTC]"`` -> fields (types as in Schema.from_types).

    ``@path`` reads the spec from a file.
    """
    if spec.startswith("@"):
        with open(spec[1:], encoding="utf-8") as fh:
            spec = fh.read()
    fields = []
    for item in _split_top(spec.replace("\n", ",")):
        name, sep, type_text = item.partition(":")
        if not sep or not name.strip() or not type_text.strip():
            raise ConvertError(f"--schema entry {item!r} is not NAME:TYPE")
        type_text = type_text.strip()
        not_null = False
        m = re.search(r"\s+not\s+null\s*\Z", type_text, re.IGNORECASE)
        if m:
            not_null, type_text = True, type_text[:m.start()]
        try:
            fields.append(make_field(name.strip(), type_text, nullable=not not_null))
        except SchemaError as exc:
            raise ConvertError(f"--schema column {name.strip()!r}: {exc}") from None
    if not fields:
        raise ConvertError("--schema is empty")
    Schema(fields)  # duplicate names
    return fields


def parse_bloom_spec(spec: str) -> tuple[str, dict[str, float | int]]:
    """``"email"`` or ``"email:fpp=0.001,ndv=100000"`` -> (column, Bloom filter options)."""
    name, sep, rest = spec.partition(":")
    name = name.strip()
    if not name:
        raise ConvertError(f"--bloom {spec!r} names no column")
    opts: dict[str, float | int] = {}
    for item in _split_top(rest) if sep else []:
        k, eq, v = item.partition("=")
        k = k.strip().lower()
        try:
            if not eq:
                raise ValueError
            if k == "fpp":
                opts["fpp"] = float(v)
                if not 0.0 < opts["fpp"] < 1.0:
                    raise ValueError
            elif k in ("ndv", "max_bytes"):
                opts[k] = int(float(v))
                if opts[k] <= 0:
                    raise ValueError
            else:
                raise ConvertError(f"--bloom {name}: unknown option {k!r} (use fpp=, ndv=, max_bytes=)")
        except ValueError:
            raise ConvertError(f"--bloom {name}: bad option {item!r} (fpp in (0, 1), ndv and max_bytes "
                               "positive integers)") from None
    return name, opts or {"fpp": 0.01}

# ---------------------------------------------------------------------------------------------
# progress


class _Progress:
    """A progress bar over the input bytes on stderr: tqdm's or rich's when one is installed, else (when
    asked for with ``--progress``) a plain one-line bar; ``None`` mode shows nothing."""

    def __init__(self, total: int | None, mode: str | None, callback: ProgressCallback | None = None) -> None:
        self.total = total
        self.mode = mode
        self.callback = callback
        self.t0 = time.perf_counter()
        self.last = 0.0
        self.done = 0
        self.impl: Any = None
        if mode == "tqdm":
            import tqdm

            self.impl = tqdm.tqdm(total=total, unit="B", unit_scale=True, file=sys.stderr, desc="convert")
        elif mode == "rich":
            import rich.progress

            self.impl = rich.progress.Progress(transient=True)
            self.impl.start()
            self.task = self.impl.add_task("convert", total=total)

    def update(self, done: int, rows: int, force: bool = False) -> None:
        """Show ``done`` input bytes and ``rows`` rows converted so far."""
        if self.callback is not None:
            self.callback(rows, done, self.total)
        if self.mode is None:
            return
        if self.mode == "tqdm":
            self.impl.update(done - self.done)
            self.impl.set_postfix(rows=f"{rows:,}", refresh=False)
            self.done = done
            return
        if self.mode == "rich":
            self.impl.update(self.task, completed=done)
            return
        now = time.perf_counter()
        if not force and now - self.last < 0.2:
            return
        self.last = now
        el = max(now - self.t0, 1e-9)
        rate = f"{rows / el:,.0f} rows/s"
        width = max(min(shutil.get_terminal_size((80, 20)).columns, 120) - 50, 10)
        if self.total:
            frac = min(done / self.total, 1.0)
            fill = int(frac * width)
            bar = "[" + "#" * fill + "-" * (width - fill) + f"] {frac:6.1%}"
        else:
            bar = f"{done / 1e6:,.1f} MB read"
        sys.stderr.write(f"\r{bar} {rows:,} rows {rate}\x1b[K")
        sys.stderr.flush()

    def close(self) -> None:
        """Take the bar away (the command prints its own summary)."""
        if self.mode == "tqdm":
            self.impl.close()
        elif self.mode == "rich":
            self.impl.stop()
        elif self.mode == "plain":
            sys.stderr.write("\r\x1b[K")
            sys.stderr.flush()
        self.mode = None


def progress_mode(progress: bool | None, isatty: bool) -> str | None:
    """Which bar to show: ``progress`` None shows tqdm's or rich's on a terminal (nothing without them);
    True shows one anyway (the plain bar without them, or when stderr is not a terminal: rich draws
    nothing there); False none."""
    if progress is False or (progress is None and not isatty):
        return None
    if not isatty:
        return "plain"
    for name in ("tqdm", "rich"):
        try:
            __import__(name)
        except ImportError:
            continue
        return name
    return "plain" if progress else None


# ---------------------------------------------------------------------------------------------
# conversion


def _detect_format(path: str, fmt: str | None) -> str:
    if fmt:
        f = fmt.lower()
        if f in ("csv", "tsv"):
            return f
        if f in ("jsonl", "ndjson", "json"):
            return "jsonl"
        raise ConvertError(f"unknown input format {fmt!r} (csv, tsv or jsonl)")
    base = path[:-3] if path.endswith(".gz") else path
    ext = os.path.splitext(base)[1].lower()
    if ext in (".csv", ".txt"):
        return "csv"
    if ext == ".tsv":
        return "tsv"
    if ext in (".jsonl", ".ndjson", ".json"):
        return "jsonl"
    raise ConvertError(f"cannot tell the format of {path!r} from its name; give --format csv or --format jsonl")


#: convert's options that are :class:`pqbloom.ParquetWriter`'s (passed on to it as they are)
WRITER_OPTIONS = frozenset((
    "flavor", "version", "use_dictionary", "compression", "write_statistics", "use_deprecated_int96_timestamps",
    "compression_level", "use_byte_stream_split", "column_encoding", "writer_engine_version", "data_page_version",
    "use_compliant_nested_type", "encryption_properties", "write_batch_size", "dictionary_pagesize_limit",
    "store_schema", "write_page_index", "write_page_checksum", "sorting_columns", "store_decimal_as_integer",
    "write_time_adjusted_to_utc", "max_rows_per_page", "bloom_filter_options", "use_content_defined_chunking",
    "coerce_timestamps", "allow_truncated_timestamps", "max_row_group_bytes", "data_page_size",
    "bloom_filter_position", "bloom_filter_skip_dictionary", "key_value_metadata", "statistics_truncate_length",
    "fsync", "use_threads",
))


def convert(input_path: str, output_path: str, *, format: str | None = None, schema: str | list[Field] | None = None,
            chunk_rows: int = DEFAULT_CHUNK_ROWS, row_group_size: int = 1_000_000, delimiter: str | None = None,
            header: bool = True, null_values: Sequence[str] = ("",), progress: bool | None = None,
            encoding: str = "utf-8", on_progress: ProgressCallback | None = None, engine: str = "auto",
            flavor: str | None = None, version: str | None = "2.6", use_dictionary: bool | list[str] = True,
            compression: str | dict[str, str] | None = "snappy", write_statistics: bool | list[str] = True,
            use_deprecated_int96_timestamps: bool | None = None,
            compression_level: int | dict[str, int] | None = None, use_byte_stream_split: bool | list[str] = False,
            column_encoding: dict[str, str] | None = None, writer_engine_version: str | None = None,
            data_page_version: str = "1.0", use_compliant_nested_type: bool = True,
            encryption_properties: FileEncryptionProperties | None = None, write_batch_size: int | None = None,
            dictionary_pagesize_limit: int | None = None, store_schema: bool = True, write_page_index: bool = True,
            write_page_checksum: bool = False, sorting_columns: Any = None,
            store_decimal_as_integer: bool | None = None, write_time_adjusted_to_utc: bool = False,
            max_rows_per_page: int | None = None, bloom_filter_options: dict[str, BloomFilterSpec] | None = None,
            use_content_defined_chunking: bool = False, coerce_timestamps: str | None = None,
            allow_truncated_timestamps: bool = False, max_row_group_bytes: int | None = None,
            data_page_size: int | None = None, bloom_filter_position: str = "after_row_group",
            bloom_filter_skip_dictionary: bool = False, key_value_metadata: dict[str, str] | None = None,
            statistics_truncate_length: int = 64, fsync: bool = False, use_threads: bool = True) -> ConvertResult:
    """Convert a CSV / TSV / JSON Lines file (``.gz`` too; ``-`` is standard input) to Parquet.

    The writer's options (``flavor`` to ``use_threads``: ``compression``, ``bloom_filter_options``,
    ``bloom_filter_position``, ``write_page_index``, ``encryption_properties``...) are
    :class:`pqbloom.ParquetWriter`'s, with its defaults. ``progress``: None
    shows tqdm's or rich's progress bar on stderr when it is a terminal and one of them is installed;
    True shows a bar anyway; False none. ``on_progress(rows, input_bytes, input_size)`` is called after
    each chunk with the rows converted so far, the input bytes they came from and the input's size (None
    for standard input); on the pyarrow path, whose reader reads ahead, those bytes are measured on the text of
    the rows converted (:func:`pqbloom.cli.fastcsv.text_bytes`), not on what has been read.

    ``engine`` parses CSV files: ``"auto"`` (pyarrow's CSV reader when pyarrow is installed, see
    :mod:`pqbloom.cli.fastcsv`; the ``csv`` module otherwise, and for standard input), ``"pyarrow"``
    (an error without pyarrow) or ``"python"``. Both give the same types and values; an input the fast
    path cannot convert exactly as the ``csv`` module path would is redone on that path.
    """
    writer_options = {k: v for k, v in locals().items() if k in WRITER_OPTIONS}
    if chunk_rows <= 0 or row_group_size <= 0:
        raise ConvertError("--chunk-rows and --row-group-size must be positive")
    if engine not in ("auto", "pyarrow", "python"):
        raise ConvertError(f"unknown CSV engine {engine!r} (auto, pyarrow or python)")
    fmt = _detect_format(input_path, format)
    if input_path != "-" and os.path.exists(output_path) and os.path.exists(input_path) \
            and os.path.samefile(input_path, output_path):
        raise ConvertError("the output would overwrite the input")
    explicit = parse_schema_spec(schema) if isinstance(schema, str) else list(schema or [])
    args: dict[str, Any] = dict(fmt=fmt, explicit=explicit, chunk_rows=chunk_rows, row_group_size=row_group_size,
                delimiter=delimiter, header=header, null_values=null_values, progress=progress, encoding=encoding,
                on_progress=on_progress, writer_options=writer_options)
    if engine != "python" and fmt in ("csv", "tsv"):
        from . import fastcsv

        if not fastcsv.available():
            if engine == "pyarrow":
                raise ConvertError("--csv-engine pyarrow needs pyarrow (pip install pyarrow)")
        elif input_path != "-":
            try:
                return _convert_arrow(input_path, output_path, **args)
            except fastcsv.Fallback as exc:
                log.info("convert %s: pyarrow's CSV reader not used (%s); parsing with the csv module", input_path,
                         exc)
    return _convert_pure(input_path, output_path, **args)


def _open_input(input_path: str) -> tuple[IO[bytes], CountingReader, IO[bytes], int | None]:
    """(raw file, its byte counter, the decompressed binary stream, total bytes or None for stdin)."""
    if input_path == "-":
        raw: IO[bytes] = sys.stdin.buffer
        total = None
    else:
        raw = open(input_path, "rb")  # noqa: SIM115
        total = os.fstat(raw.fileno()).st_size
    counter = CountingReader(raw)
    binary: IO[bytes] = io.BufferedReader(counter, 1 << 20)  # type: ignore[arg-type]
    if input_path.endswith(".gz"):
        binary = gzip.GzipFile(fileobj=binary, mode="rb")  # type: ignore[assignment]
    return raw, counter, binary, total


class _RowGroupCutter:
    """Tables in, row groups of exactly ``size`` rows out (the last one shorter), written as they fill:
    both parsing paths cut a conversion into the same row groups, whatever their chunk sizes."""

    def __init__(self, writer: ParquetWriter, size: int, result: ConvertResult) -> None:
        self.writer, self.size, self.result = writer, size, result
        self.pending: list[Table] = []
        self.pending_rows = 0

    def add(self, t: Table) -> None:
        self.pending.append(t)
        self.pending_rows += t.num_rows
        self.result.rows += t.num_rows
        while self.pending_rows >= self.size:
            whole = self._joined()
            self._write(whole.slice(0, self.size))
            rest = whole.slice(self.size)
            self.pending, self.pending_rows = ([rest] if rest.num_rows else []), rest.num_rows

    def finish(self) -> None:
        """Write what is left as the last row group and close the file."""
        if self.pending_rows:
            self._write(self._joined())
        self.pending = []
        self.writer.close()

    def _joined(self) -> Table:
        return Table.concat(self.pending) if len(self.pending) > 1 else self.pending[0]

    def _write(self, t: Table) -> None:
        self.writer.write_table(t, row_group_size=self.size)
        self.result.row_groups += 1


def _convert_arrow(input_path: str, output_path: str, *, fmt: str, explicit: list[Field], chunk_rows: int,
                   row_group_size: int, delimiter: str | None, header: bool, null_values: Sequence[str],
                   progress: bool | None, encoding: str, on_progress: ProgressCallback | None,
                   writer_options: dict[str, Any]) -> ConvertResult:
    """The CSV path over pyarrow's reader (:mod:`.fastcsv`); raises ``Fallback`` before publishing anything."""
    import pyarrow as pa

    from . import fastcsv

    delim = delimiter or ("\t" if fmt == "tsv" else ",")
    if len(delim) != 1 or any(f.type_name not in fastcsv.FAST_TYPES for f in explicit):
        raise fastcsv.Fallback("a delimiter or --schema type the fast path does not handle")
    by_name = {f.name: f for f in explicit}
    names = fastcsv.header_names(input_path, encoding=encoding, delimiter=delim, header=header,
                                 names=[f.name for f in explicit] if not header and explicit else None)
    if [n for n in by_name if n not in names] or (not header and explicit and len(explicit) != len(names)):
        raise fastcsv.Fallback("--schema does not match the columns")  # the pure path words the error
    result = ConvertResult(engine="pyarrow")
    t0 = time.perf_counter()
    source = fastcsv.ArrowInput(input_path)
    bar = _Progress(source.size, progress_mode(progress, sys.stderr.isatty()), on_progress)
    writer: ParquetWriter | None = None
    fields: list[Field] | None = None
    first: list[list[Any]] = []
    first_rows = 0
    cutter: _RowGroupCutter | None = None

    def start(batches: list[list[Any]]) -> list[Any]:
        """Infer the fields from the first rows (as the pure path does), open the writer; the rows' columns."""
        nonlocal fields, writer, cutter
        cols = [pa.concat_arrays([b[i] for b in batches], memory_pool=fastcsv.pool()) for i in range(len(names))]
        fields = [by_name.get(n) or inferred for n, inferred in zip(names, fastcsv.infer_fields(names, cols, chunk_rows))]
        result.schema = Schema(fields)
        writer = ParquetWriter(output_path, result.schema, row_group_size=row_group_size, **writer_options)
        cutter = _RowGroupCutter(writer, row_group_size, result)
        return cols

    text = 0  # bytes of text of the rows converted: the progress (pyarrow's reader is ahead of them)

    def add(cols: list[Any]) -> None:
        nonlocal text
        assert cutter is not None and fields is not None
        cutter.add(Table([fastcsv.typed_column(f, c) for f, c in zip(fields, cols)]))
        text += fastcsv.text_bytes(cols)

    try:
        batches = fastcsv.arrow_csv_batches(source, len(names), encoding=encoding, delimiter=delim, header=header,
                                            null_values=null_values, chunk_rows=chunk_rows)
        for cols in batches:
            if fields is None:  # gather the rows the pure path infers from
                first.append(cols)
                first_rows += len(cols[0]) if cols else 0
                if first_rows < chunk_rows:
                    continue
            if fields is None:
                cols, first = start(first), []
            add(cols)
            bar.update(source.done(text), result.rows)
        if fields is None:
            if not first_rows:
                raise fastcsv.Fallback("no rows")  # the pure path's empty-input behaviour
            add(start(first))
            bar.update(source.done(text), result.rows)
        assert cutter is not None
        cutter.finish()
        bar.update(source.size, result.rows, force=True)  # every row converted and written
    except BaseException:
        if writer is not None:
            writer.abort()
        bar.close()
        raise
    finally:
        source.close()
    result.seconds = time.perf_counter() - t0
    result.input_bytes = source.size
    result.output_bytes = os.path.getsize(output_path) if os.path.exists(output_path) else 0
    bar.close()
    return result


def _convert_pure(input_path: str, output_path: str, *, fmt: str, explicit: list[Field], chunk_rows: int,
                  row_group_size: int, delimiter: str | None, header: bool, null_values: Sequence[str],
                  progress: bool | None, encoding: str, on_progress: ProgressCallback | None,
                  writer_options: dict[str, Any]) -> ConvertResult:
    """The ``csv`` / ``json`` module path (any input, standard input too)."""
    nulls_set = frozenset(null_values)
    by_name = {f.name: f for f in explicit}
    result = ConvertResult(engine="python")
    t0 = time.perf_counter()
    raw, counter, binary, total = _open_input(input_path)
    bar = _Progress(total, progress_mode(progress, sys.stderr.isatty()), on_progress)
    writer: ParquetWriter | None = None
    try:
        fh = io.TextIOWrapper(binary, encoding=encoding, newline="" if fmt != "jsonl" else None)
        if fmt == "jsonl":
            chunks = jsonl_chunks(fh, chunk_rows=chunk_rows)
        else:
            names = [f.name for f in explicit] if not header and explicit else None
            delim = delimiter or ("\t" if fmt == "tsv" else ",")
            if len(delim) != 1:
                raise ConvertError("--delimiter must be one character")
            chunks = csv_chunks(fh, delimiter=delim, header=header, names=names, chunk_rows=chunk_rows)
        typers: list[ColumnTyper] = []
        cutter: _RowGroupCutter | None = None
        for chunk in chunks:
            if writer is None:
                if not chunk.names:
                    raise ConvertError("the input is empty")
                unknown = [n for n in by_name if n not in chunk.names]
                if unknown:
                    raise ConvertError(f"--schema names columns the input lacks: {unknown}; "
                                       f"the input has {chunk.names}")
                if not header and explicit and len(explicit) != len(chunk.names):
                    raise ConvertError(f"without a header, --schema must name all {len(chunk.names)} columns "
                                       "in order")
                fields = []
                for name, vals in zip(chunk.names, chunk.columns):
                    if name in by_name:
                        fields.append((by_name[name], "given by --schema"))
                    elif chunk.text:
                        nn = [v for v in vals if v not in nulls_set]
                        inferred = infer_text_type(name, nn)
                    else:
                        inferred = infer_json_type(name, [v for v in vals if v is not None])
                    if name not in by_name:
                        fields.append((inferred, f"type inferred from the first {len(chunk.lines):,} rows; "
                                                 f"override with --schema {name}:TYPE"))
                typers = [ColumnTyper(f, hint=h, null_values=nulls_set) for f, h in fields]
                result.schema = Schema([t.field for t in typers])
                writer = ParquetWriter(output_path, result.schema, row_group_size=row_group_size,
                                       **writer_options)
                cutter = _RowGroupCutter(writer, row_group_size, result)
            if len(chunk.names) != len(typers):  # JSON: keys seen first in a later chunk
                raise ConvertError("columns changed between chunks")
            if chunk.lines:
                cols = [t.column(v, chunk.lines, chunk.text) for t, v in zip(typers, chunk.columns)]
                del chunk
                assert cutter is not None
                cutter.add(Table(cols))
            bar.update(counter.count, result.rows)
        if cutter is None:
            raise ConvertError("the input is empty")
        cutter.finish()
    except BaseException:
        if writer is not None:
            writer.abort()
        bar.close()
        raise
    finally:
        if input_path != "-":
            raw.close()
    result.seconds = time.perf_counter() - t0
    result.input_bytes = counter.count
    result.output_bytes = os.path.getsize(output_path) if os.path.exists(output_path) else 0
    bar.close()
    return result


