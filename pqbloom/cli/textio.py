"""The input of ``pqbloom convert`` read in chunks of rows: CSV (the ``csv`` module, in C) and JSON Lines.

Each :class:`InputChunk` holds one chunk's raw values column by column, and :class:`SourceLines`
knows which input line each row came from, so a value that does not fit its type is reported with
its line number.
"""

from __future__ import annotations

import csv
import io
import itertools
import json
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import IO, Any

from .errors import ConvertError

__all__ = ["CountingReader", "InputChunk", "SourceLines", "csv_chunks", "jsonl_chunks"]


class CountingReader(io.RawIOBase):
    """A raw binary stream over ``raw`` that counts the bytes read (``count``, for the progress bar)."""

    def __init__(self, raw: IO[bytes]) -> None:
        self.raw = raw
        self.count = 0

    def readable(self) -> bool:
        """Always true: this stream is for reading."""
        return True

    def readinto(self, b: Any) -> int:  # Any: io.RawIOBase's own signature (a writable buffer)
        """Read up to ``len(b)`` bytes into ``b``; the number read (0 at the end)."""
        data = self.raw.read(len(b))
        n = len(data)
        b[:n] = data
        self.count += n
        return n


class SourceLines:
    """Where the ``n`` rows of a chunk came from, for error messages.

    CSV: rows ``first``... when each record is one line (``exact``), else records ``record0 + 1``...
    somewhere between lines ``first`` and ``last`` (quoted newlines); JSON Lines: the ``explicit``
    line of each row.
    """

    def __init__(self, n: int, *, first: int = 0, record0: int = 0, exact: bool = True,
                 explicit: list[int] | None = None, last: int = 0) -> None:
        self.n, self.first, self.record0, self.exact, self.explicit, self.last = n, first, record0, exact, explicit, last

    def __len__(self) -> int:
        return self.n

    def where(self, i: int) -> str:
        """Where row ``i`` of the chunk came from: ``"line 12"`` or ``"record 7 (between lines 5 and 9)"``."""
        if self.explicit is not None:
            return f"line {self.explicit[i]}"
        if self.exact:
            return f"line {self.first + i}"
        return f"record {self.record0 + i + 1} (between lines {self.first} and {self.last})"

    def span(self) -> str:
        """Where the whole chunk came from."""
        if not self.n:
            return "input"
        return f"{self.where(0)} to {self.where(self.n - 1)}"


@dataclass
class InputChunk:
    """One chunk of input rows, column by column, with their column ``names`` and source ``lines``."""

    names: list[str]
    columns: list[Sequence[Any]]  # CSV: tuples of str (nulls still as text); JSON: values, None for null
    lines: SourceLines
    text: bool  # True: CSV strings


def csv_chunks(fh: IO[str], *, delimiter: str, header: bool, names: list[str] | None,
               chunk_rows: int) -> Iterator[InputChunk]:
    """CSV text in chunks of up to ``chunk_rows`` records (blank lines skipped).

    Column names come from the header row (an empty one becomes ``f<i>``), else from ``names``,
    else ``f0, f1...``. A record with the wrong number of fields raises ConvertError naming its line.
    An input with a header and no rows yields one empty chunk (so the columns are known).
    """
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
                    yield InputChunk(cols, [() for _ in cols], SourceLines(0), True)
                return
            got = len(rows)
            exact = last - first + 1 == got
            if not exact and not all(rows):
                rows = [r for r in rows if r]  # blank lines
                if not rows:
                    continue
            if not cols:
                cols = [f"f{i}" for i in range(len(rows[0]))]
            lines = SourceLines(len(rows), first=first, record0=records, exact=exact, last=last)
            widths = set(map(len, rows))
            if widths != {len(cols)}:
                i = next(k for k, r in enumerate(rows) if len(r) != len(cols))
                raise ConvertError(f"{lines.where(i)}: expected {len(cols)} fields, found {len(rows[i])}")
            records += len(rows)
            columns: list[Sequence[Any]] = list(zip(*rows))
            del rows
            yield InputChunk(cols, columns, lines, True)
            if got < chunk_rows:
                return
    except csv.Error as exc:
        raise ConvertError(f"line {reader.line_num}: {exc}") from None


def jsonl_chunks(fh: IO[str], *, chunk_rows: int) -> Iterator[InputChunk]:
    """JSON Lines (one object per line; blank lines skipped) in chunks of up to ``chunk_rows`` rows.

    The columns are the keys met in the first chunk, in order of appearance (missing keys are
    nulls); a key first met in a later chunk raises ConvertError (declare it with ``--schema``).
    """
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
        yield InputChunk(list(cols), columns, SourceLines(len(lines), explicit=lines), False)
