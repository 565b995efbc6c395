"""CSV and JSON Lines to Parquet, streamed in bounded memory.

:func:`convert` reads its input in chunks of ``chunk_rows`` rows (``csv`` / ``json`` modules),
types each chunk's columns with numpy, gathers chunks until a row group is full and hands it
to :class:`pqbloom.ParquetWriter`. Memory is bounded by one row group of typed columns plus
one chunk of parsed text, whatever the size of the input.

Types come from the first chunk unless given (``--schema 'id:int64,ts:timestamp[us, UTC]'``;
a schema may name only some columns, the others are still inferred). Later chunks are coerced
to those types; a value that does not fit stops the conversion with its line number, and
nothing is written (the output appears only when the writer closes without error).

CSV inference tries, per column: bool (true/false), int64, double, date (``YYYY-MM-DD``),
timestamp (ISO 8601; ``timestamp[us, UTC]`` when the values carry ``Z`` or an offset, which
are converted to UTC), then string. Empty fields (and any ``null_values``) are nulls.
JSON Lines keep their JSON types (bool, int64, double, string); ISO date/timestamp strings
become date/timestamp, objects and arrays are stored as JSON text, mixed types as strings.

Encryption options (``--footer-key-hex``, ``--column-key``, ``--kms-config``...) are parsed by
:mod:`pqbloom.crypto.options`, which documents the KMS config file.
"""

from __future__ import annotations

import csv
import decimal
import gzip
import io
import itertools
import json
import os
import re
import shutil
import sys
import time
import uuid
import warnings
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import IO, Any

import numpy as np

from ..arrays import BinaryArray
from ..errors import ParquetError, SchemaError
from ..format import T
from ..schema import Field, Schema, make_field
from ..table import Column, Table, column_from_values

__all__ = [
    "ConvertError",
    "ConvertResult",
    "convert",
    "parse_schema_spec",
    "parse_bloom_spec",
]

DEFAULT_CHUNK_ROWS = 65_536
PT = T.Type
_INTS = (PT.INT32, PT.INT64)
_FLOATS = (PT.FLOAT, PT.DOUBLE)
_TRUE = {"true", "t", "yes", "y"}
_FALSE = {"false", "f", "no", "n"}
_DATE_RE = re.compile(r"\d{4}-\d{2}-\d{2}\Z")
_TS_RE = re.compile(r"\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}(:\d{2}(\.\d{1,9})?)?(Z|[+-]\d{2}:?\d{2})?\Z")
_TZ_RE = re.compile(r"(Z|[+-]\d{2}:?\d{2})\Z")


class ConvertError(ParquetError, ValueError):
    """The input cannot be converted as asked (bad option, malformed line, value of the wrong type)."""


@dataclass
class ConvertResult:
    rows: int = 0
    row_groups: int = 0
    input_bytes: int = 0
    output_bytes: int = 0
    seconds: float = 0.0
    schema: Schema | None = None
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


def parse_bloom_spec(spec: str) -> tuple[str, dict[str, Any]]:
    """``"email"`` or ``"email:fpp=0.001,ndv=100000"`` -> (column, Bloom filter options)."""
    name, sep, rest = spec.partition(":")
    name = name.strip()
    if not name:
        raise ConvertError(f"--bloom {spec!r} names no column")
    opts: dict[str, Any] = {}
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
# reading the input in chunks


class _CountingReader(io.RawIOBase):
    """Counts the bytes read from a binary stream (for the progress bar)."""

    def __init__(self, raw: IO[bytes]) -> None:
        self.raw = raw
        self.count = 0

    def readable(self) -> bool:
        return True

    def readinto(self, b: Any) -> int:
        data = self.raw.read(len(b))
        n = len(data)
        b[:n] = data
        self.count += n
        return n


class _Lines:
    """Where the rows of a chunk came from, for error messages."""

    def __init__(self, n: int, *, first: int = 0, record0: int = 0, exact: bool = True,
                 explicit: list[int] | None = None, last: int = 0) -> None:
        self.n, self.first, self.record0, self.exact, self.explicit, self.last = n, first, record0, exact, explicit, last

    def __len__(self) -> int:
        return self.n

    def where(self, i: int) -> str:
        if self.explicit is not None:
            return f"line {self.explicit[i]}"
        if self.exact:
            return f"line {self.first + i}"
        return f"record {self.record0 + i + 1} (between lines {self.first} and {self.last})"

    def span(self) -> str:
        if not self.n:
            return "input"
        return f"{self.where(0)} to {self.where(self.n - 1)}"


@dataclass
class _Chunk:
    names: list[str]
    columns: list[Sequence[Any]]  # CSV: tuples of str (nulls still as text); JSON: values, None for null
    lines: _Lines
    text: bool  # True: CSV strings


def _csv_chunks(fh: IO[str], *, delimiter: str, header: bool, names: list[str] | None,
                chunk_rows: int) -> Iterator[_Chunk]:
    reader = csv.reader(fh, delimiter=delimiter)
    try:
        if header:
            try:
                head = next(reader)
            except StopIteration:
                return
            cols = [h.strip() or f"f{i}" for i, h in enumerate(head)]
        else:
            cols = list(names) if names else []
        records = 0
        while True:
            first = reader.line_num + 1
            rows = list(itertools.islice(reader, chunk_rows))  # csv parses in C; typing is per column
            last = reader.line_num
            if not rows:
                if records == 0 and cols:
                    yield _Chunk(cols, [() for _ in cols], _Lines(0), True)
                return
            got = len(rows)
            exact = last - first + 1 == got
            if not exact and not all(rows):
                rows = [r for r in rows if r]  # blank lines
                if not rows:
                    continue
            if not cols:
                cols = [f"f{i}" for i in range(len(rows[0]))]
            lines = _Lines(len(rows), first=first, record0=records, exact=exact, last=last)
            widths = set(map(len, rows))
            if widths != {len(cols)}:
                i = next(k for k, r in enumerate(rows) if len(r) != len(cols))
                raise ConvertError(f"{lines.where(i)}: expected {len(cols)} fields, found {len(rows[i])}")
            records += len(rows)
            columns: list[Sequence[Any]] = list(zip(*rows))
            del rows
            yield _Chunk(cols, columns, lines, True)
            if got < chunk_rows:
                return
    except csv.Error as exc:
        raise ConvertError(f"line {reader.line_num}: {exc}") from None


def _jsonl_chunks(fh: IO[str], *, chunk_rows: int) -> Iterator[_Chunk]:
    cols: list[str] = []
    index: dict[str, int] = {}
    fixed = False  # columns are fixed after the first chunk
    lineno = 0
    done = False
    first = True
    while not done:
        records: list[dict[str, Any]] = []
        lines: list[int] = []
        for line in fh:
            lineno += 1
            s = line.strip()
            if not s:
                continue
            try:
                rec = json.loads(s)
            except json.JSONDecodeError as exc:
                raise ConvertError(f"line {lineno}: invalid JSON ({exc.msg} at column {exc.colno})") from None
            if not isinstance(rec, dict):
                raise ConvertError(f"line {lineno}: expected a JSON object, found {type(rec).__name__}")
            for k in rec:
                if k not in index:
                    if fixed:
                        raise ConvertError(f"line {lineno}: key {k!r} is not among the columns taken from the first "
                                           f"{chunk_rows:,} lines; declare it with --schema")
                    index[k] = len(cols)
                    cols.append(k)
            records.append(rec)
            lines.append(lineno)
            if len(records) >= chunk_rows:
                break
        else:
            done = True
        fixed = True
        if not records and not first:
            return
        first = False
        columns: list[Sequence[Any]] = [[r.get(c) for r in records] for c in cols]
        del records
        yield _Chunk(list(cols), columns, _Lines(len(lines), explicit=lines), False)


# ---------------------------------------------------------------------------------------------
# typing


def _looks(regex: re.Pattern[str], vals: Sequence[str]) -> bool:
    return bool(vals) and all(regex.match(v) for v in vals)


def _infer_text(name: str, vals: Sequence[str]) -> Field:
    """The type of a column of non-null strings (CSV), most specific first."""
    if not vals:
        return make_field(name, "string")
    arr = np.asarray(vals)
    if {v.strip().lower() for v in vals[:100]} <= {"true", "false"} \
            and {v.strip().lower() for v in vals} <= {"true", "false"}:
        return make_field(name, "bool")
    for dtype, type_name in ((np.int64, "int64"), (np.float64, "double")):
        try:
            arr.astype(dtype)
            return make_field(name, type_name)
        except (ValueError, OverflowError):
            pass
    if _looks(_DATE_RE, vals):
        try:
            arr.astype("datetime64[D]")
            return make_field(name, "date")
        except ValueError:
            pass
    if _looks(_TS_RE, vals):
        tz = [bool(_TZ_RE.search(v)) for v in vals]
        if all(tz) or not any(tz):
            try:
                _parse_timestamps(arr, "us")
                return make_field(name, "timestamp[us, UTC]" if all(tz) else "timestamp[us]")
            except ValueError:
                pass
    return make_field(name, "string")


def _infer_json(name: str, vals: list[Any]) -> Field:
    """The type of a column of non-null JSON values."""
    if not vals:
        return make_field(name, "string")
    kinds = {type(v) for v in vals}
    if kinds == {bool}:
        return make_field(name, "bool")
    if kinds <= {int}:
        return make_field(name, "int64" if all(-(2**63) <= v < 2**63 for v in vals) else "double")
    if kinds <= {int, float}:
        return make_field(name, "double")
    if kinds == {str}:
        f = _infer_text(name, vals)
        lt = f.logical_type
        return f if lt is not None and lt.kind in ("DATE", "TIMESTAMP") else make_field(name, "string")
    if kinds & {dict, list}:
        return make_field(name, "json")
    return make_field(name, "string")


def _parse_timestamps(arr: np.ndarray, unit: str) -> np.ndarray:
    """ISO 8601 strings -> datetime64[unit]; values with ``Z`` or an offset are converted to UTC."""
    if arr.size and bool(np.char.endswith(arr, "Z").all()):
        arr = np.char.rstrip(arr, "Z")  # the common case, kept vectorized
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        try:
            return arr.astype(f"datetime64[{unit}]")
        except (UserWarning, DeprecationWarning):
            pass
    # some carry an offset: split it off, parse the rest, shift
    vals = arr.tolist()
    offsets = np.zeros(len(vals), np.int64)  # minutes east of UTC
    naive = []
    for i, v in enumerate(vals):
        m = _TZ_RE.search(v)
        if m is None:
            naive.append(v)
            continue
        tz = m.group(1)
        naive.append(v[:m.start()])
        if tz != "Z":
            digits = tz[1:].replace(":", "")
            mins = int(digits[:2]) * 60 + int(digits[2:])
            offsets[i] = mins if tz[0] == "+" else -mins
    out = np.asarray(naive).astype(f"datetime64[{unit}]")
    return out - offsets.astype("timedelta64[m]").astype(f"timedelta64[{unit}]")


def _binary_from_strs(strs: Sequence[str], char_lens: np.ndarray) -> BinaryArray:
    """UTF-8 BinaryArray of ``strs``: one join and one encode when the text is ASCII."""
    joined = "".join(strs)
    data = joined.encode("utf-8")
    if len(data) != len(joined):
        return BinaryArray.from_pylist(strs)
    offsets = np.zeros(len(strs) + 1, np.int64)
    np.cumsum(char_lens, out=offsets[1:])
    return BinaryArray(offsets, np.frombuffer(data, np.uint8))


class _Typer:
    """Turns one chunk's raw values of a column into a typed Column of ``field``."""

    def __init__(self, f: Field, *, hint: str, null_values: frozenset[str]) -> None:
        self.field = f
        self.hint = hint
        self.empty_is_null = "" in null_values
        self.markers = sorted(null_values - {""})

    def nulls(self, values: Sequence[Any], text: bool) -> tuple[np.ndarray, np.ndarray | None]:
        n = len(values)
        if not text:
            return np.fromiter((v is None for v in values), bool, count=n), None
        lens = np.fromiter(map(len, values), np.int64, count=n)
        nulls = lens == 0 if self.empty_is_null else np.zeros(n, bool)
        if self.markers:
            nulls |= np.isin(np.asarray(values), self.markers)
        return nulls, lens

    def column(self, values: Sequence[Any], lines: _Lines, text: bool) -> Column:
        f = self.field
        nulls, lens = self.nulls(values, text)
        if not f.nullable and nulls.any():
            where = lines.where(int(np.argmax(nulls)))
            raise ConvertError(f"{where}: column {f.name!r} is declared not null but the value is missing")
        try:
            return self._column(values, nulls, lens, text)
        except ConvertError:
            raise
        except (SchemaError, ValueError, TypeError, OverflowError, decimal.InvalidOperation) as exc:
            bad = self._first_bad(values, nulls, text)
            where = lines.where(bad) if bad is not None else lines.span()
            if bad is not None:
                raise ConvertError(f"{where}: column {f.name!r}: value {values[bad]!r} does not fit {f.type_name} "
                                   f"({self.hint})") from None
            raise ConvertError(f"{where}: column {f.name!r}: values do not fit {f.type_name} ({self.hint}; "
                               f"{exc})") from None

    def _first_bad(self, values: Sequence[Any], nulls: np.ndarray, text: bool) -> int | None:
        for i, v in enumerate(values):
            if nulls[i]:
                continue
            try:
                self._column([v], np.zeros(1, bool), np.array([len(v)]) if text else None, text)
            except (ParquetError, ValueError, TypeError, OverflowError, decimal.InvalidOperation):
                return i
        return None

    def _column(self, values: Sequence[Any], nulls: np.ndarray, lens: np.ndarray | None, text: bool) -> Column:
        f = self.field
        lt = f.logical_type
        kind = lt.kind if lt is not None else None
        has_nulls = bool(nulls.any())
        mask = nulls if has_nulls else None
        if f.physical_type == PT.BYTE_ARRAY and kind != "DECIMAL":
            if text:
                assert lens is not None
                strs = values
                if has_nulls and self.markers:
                    strs = ["" if isnull else v for v, isnull in zip(values, nulls.tolist())]
                    lens = np.where(nulls, 0, lens)
                return Column(f, _binary_from_strs(strs, lens), mask)
            if kind == "JSON":
                items = [None if v is None else json.dumps(v) for v in values]
            else:
                items = [None if v is None else (v if isinstance(v, str) else json.dumps(v)) for v in values]
            return Column(f, BinaryArray.from_pylist(items), mask)
        if text or all(isinstance(v, str) for v in values if v is not None):
            arr = self._parse_text(values, nulls, has_nulls)
            if not isinstance(arr, np.ndarray):
                return column_from_values(f.name, arr, f)
            return column_from_values(f.name, np.ma.masked_array(arr, mask=nulls) if has_nulls else arr, f)
        # JSON numbers and booleans
        nn = [v for v in values if v is not None]
        if f.physical_type == PT.BOOLEAN:
            if any(type(v) is not bool for v in nn):
                raise TypeError("not a boolean")
            arr = np.array([v is True for v in values], bool)
        elif kind in ("TIMESTAMP", "DATE", "TIME") or f.physical_type in _INTS and kind in (None, "INTEGER"):
            if any(type(v) is not int for v in nn) and not all(
                    type(v) in (int, float) and float(v).is_integer() for v in nn):
                raise TypeError("not an integer")
            dtype = np.uint64 if kind == "INTEGER" and lt is not None and not lt.signed else np.int64
            arr = np.array([0 if v is None else int(v) for v in values], dtype)
            if kind in ("TIMESTAMP", "DATE", "TIME"):  # numbers are already in the column's unit
                return Column(f, arr.astype(np.int32) if f.physical_type == PT.INT32 else arr, mask)
        elif f.physical_type in _FLOATS:
            if any(type(v) not in (int, float) for v in nn):
                raise TypeError("not a number")
            arr = np.array([0.0 if v is None else float(v) for v in values], np.float64)
        else:
            return column_from_values(f.name, [self._obj(v) for v in values], f)
        return column_from_values(f.name, np.ma.masked_array(arr, mask=nulls) if has_nulls else arr, f)

    def _obj(self, v: Any) -> Any:
        lt = self.field.logical_type
        if v is None or lt is None:
            return v
        if lt.kind == "DECIMAL":
            return decimal.Decimal(v.strip() if isinstance(v, str) else str(v))
        if lt.kind == "UUID" and isinstance(v, str):
            return uuid.UUID(v.strip())
        return v

    def _parse_text(self, values: Sequence[Any], nulls: np.ndarray, has_nulls: bool) -> Any:
        """Strings -> numpy array of the field's type (vectorized), or a list of objects for the rest."""
        f = self.field
        lt = f.logical_type
        kind = lt.kind if lt is not None else None
        if kind in ("DECIMAL", "UUID") or f.physical_type in (PT.FIXED_LEN_BYTE_ARRAY, PT.INT96):
            if f.physical_type == PT.INT96 or kind not in ("DECIMAL", "UUID"):
                raise TypeError(f"cannot parse text as {f.type_name}")
            return [None if isnull else self._obj(v) for v, isnull in zip(values, nulls.tolist())]
        arr = np.asarray(values) if len(values) else np.asarray([], dtype="U1")
        if arr.dtype.kind != "U":
            arr = np.asarray([("" if v is None else v) for v in values])
        if has_nulls:
            filler = {"DATE": "1970-01-01", "TIMESTAMP": "1970-01-01T00:00", "TIME": "00:00"}.get(kind or "", "0")
            arr = np.where(nulls, "false" if f.physical_type == PT.BOOLEAN else filler, arr)
        if f.physical_type == PT.BOOLEAN:
            low = np.char.lower(np.char.strip(arr))
            t, fl = np.isin(low, sorted(_TRUE)), np.isin(low, sorted(_FALSE))
            if not bool((t | fl).all()):
                raise ValueError("not a boolean (true/false)")
            return t
        if kind == "DATE":
            return arr.astype("datetime64[D]")
        if kind == "TIMESTAMP":
            assert lt is not None
            return _parse_timestamps(arr, lt.unit or "us")
        if kind == "TIME":
            assert lt is not None
            stamps = np.char.add("1970-01-01T", np.char.strip(arr)).astype(f"datetime64[{lt.unit or 'us'}]")
            return stamps - stamps.astype("datetime64[D]")
        if f.physical_type in _INTS:
            return arr.astype(np.int64 if lt is None or lt.signed else np.uint64)
        if f.physical_type in _FLOATS:
            return arr.astype(np.float64)
        raise TypeError(f"cannot parse text as {f.type_name}")


# ---------------------------------------------------------------------------------------------
# progress


class _Progress:
    def __init__(self, total: int | None, stream: IO[str] | None) -> None:
        self.total = total
        self.stream = stream
        self.t0 = time.perf_counter()
        self.last = 0.0

    def update(self, done: int, rows: int, force: bool = False) -> None:
        if self.stream is None:
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
        self.stream.write(f"\r{bar} {rows:,} rows {rate}\x1b[K")
        self.stream.flush()

    def finish(self, message: str) -> None:
        if self.stream is None:
            return
        self.stream.write(f"\r{message}\x1b[K\n")
        self.stream.flush()


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


def convert(input_path: str, output_path: str, *, format: str | None = None, schema: str | list[Field] | None = None,
            chunk_rows: int = DEFAULT_CHUNK_ROWS, row_group_size: int = 1_000_000, delimiter: str | None = None,
            header: bool = True, null_values: Sequence[str] = ("",), progress: bool | None = None,
            encoding: str = "utf-8", **writer_options: Any) -> ConvertResult:
    """Convert a CSV / TSV / JSON Lines file (``.gz`` too; ``-`` is standard input) to Parquet.

    ``writer_options`` go to :class:`pqbloom.ParquetWriter` (``compression``, ``bloom_filter_options``,
    ``bloom_filter_position``, ``write_page_index``, ``encryption_properties``...). ``progress``:
    None shows a progress bar on stderr when it is a terminal.
    """
    from ..writer import ParquetWriter

    if chunk_rows <= 0 or row_group_size <= 0:
        raise ConvertError("--chunk-rows and --row-group-size must be positive")
    fmt = _detect_format(input_path, format)
    if input_path != "-" and os.path.exists(output_path) and os.path.exists(input_path) \
            and os.path.samefile(input_path, output_path):
        raise ConvertError("the output would overwrite the input")
    nulls_set = frozenset(null_values)
    explicit = parse_schema_spec(schema) if isinstance(schema, str) else list(schema or [])
    by_name = {f.name: f for f in explicit}
    result = ConvertResult()
    t0 = time.perf_counter()
    if input_path == "-":
        raw: IO[bytes] = sys.stdin.buffer
        total = None
    else:
        raw = open(input_path, "rb")  # noqa: SIM115
        total = os.fstat(raw.fileno()).st_size
    counter = _CountingReader(raw)
    binary: IO[bytes] = io.BufferedReader(counter, 1 << 20)  # type: ignore[arg-type]
    gz = input_path.endswith(".gz")
    if gz:
        binary = gzip.GzipFile(fileobj=binary, mode="rb")  # type: ignore[assignment]
    show = sys.stderr.isatty() if progress is None else progress
    bar = _Progress(total, sys.stderr if show else None)
    writer: Any = None
    try:
        fh = io.TextIOWrapper(binary, encoding=encoding, newline="" if fmt != "jsonl" else None)
        if fmt == "jsonl":
            chunks = _jsonl_chunks(fh, chunk_rows=chunk_rows)
        else:
            names = [f.name for f in explicit] if not header and explicit else None
            delim = delimiter or ("\t" if fmt == "tsv" else ",")
            if len(delim) != 1:
                raise ConvertError("--delimiter must be one character")
            chunks = _csv_chunks(fh, delimiter=delim, header=header, names=names, chunk_rows=chunk_rows)
        typers: list[_Typer] = []
        pending: list[Table] = []
        pending_rows = 0
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
                        inferred = _infer_text(name, nn)
                    else:
                        inferred = _infer_json(name, [v for v in vals if v is not None])
                    if name not in by_name:
                        fields.append((inferred, f"type inferred from the first {len(chunk.lines):,} rows; "
                                                 f"override with --schema {name}:TYPE"))
                typers = [_Typer(f, hint=h, null_values=nulls_set) for f, h in fields]
                result.schema = Schema([t.field for t in typers])
                writer = ParquetWriter(output_path, result.schema, row_group_size=row_group_size, **writer_options)
            if len(chunk.names) != len(typers):  # JSON: keys seen first in a later chunk
                raise ConvertError("columns changed between chunks")
            if chunk.lines:
                cols = [t.column(v, chunk.lines, chunk.text) for t, v in zip(typers, chunk.columns)]
                del chunk
                pending.append(Table(cols))
                pending_rows += len(cols[0]) if cols else 0
                result.rows += len(cols[0]) if cols else 0
            while pending_rows >= row_group_size:
                t = Table.concat(pending) if len(pending) > 1 else pending[0]
                writer.write_table(t.slice(0, row_group_size), row_group_size=row_group_size)
                result.row_groups += 1
                rest = t.slice(row_group_size, t.num_rows)
                pending, pending_rows = ([rest] if rest.num_rows else []), rest.num_rows
            bar.update(counter.count, result.rows)
        if writer is None:
            raise ConvertError("the input is empty")
        if pending_rows:
            t = Table.concat(pending) if len(pending) > 1 else pending[0]
            writer.write_table(t, row_group_size=row_group_size)
            result.row_groups += 1
        pending = []
        writer.close()
    except BaseException:
        if writer is not None:
            writer.abort()
        if show:
            sys.stderr.write("\n")
        raise
    finally:
        if input_path != "-":
            raw.close()
    result.seconds = time.perf_counter() - t0
    result.input_bytes = counter.count
    result.output_bytes = os.path.getsize(output_path) if os.path.exists(output_path) else 0
    bar.finish(f"wrote {result.rows:,} rows in {result.row_groups} row group(s) to {output_path} "
               f"({result.output_bytes:,} bytes) in {result.seconds:.1f} s")
    return result


