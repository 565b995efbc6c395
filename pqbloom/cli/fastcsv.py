"""The fast CSV path of ``pqbloom convert``: pyarrow's multithreaded CSV parser, when pyarrow is installed.

pyarrow only splits the text into fields (every column read as strings, nulls as the same
``null_values``); the types are still inferred by :func:`pqbloom.cli.infer.infer_text_type` from the
same first ``chunk_rows`` rows, so both paths give the same schema for the same CSV. Values are
typed with pyarrow's casts only where a cast and the pure path's numpy parse agree: each column's
strings must first match a strict pattern (decimal integers, plain decimal numbers, ``YYYY-MM-DD``,
ISO 8601 timestamps with valid fields). Anything else (``0x10``, ``+5``, ``inf``, a leap second, a
value that does not fit, a ragged row, a BOM, a type other than bool, int64, double, date, timestamp
or string) raises :class:`Fallback`, and :func:`pqbloom.cli.convert.convert` redoes the whole file
on the pure path, which then converts it or reports the exact line.
"""

from __future__ import annotations

import codecs
import csv
import gzip
import io
from collections.abc import Iterator, Sequence
from typing import IO, Any

import numpy as np

from ..arrays import BinaryArray
from ..schema import Field
from ..table import Column, column_from_values
from .infer import infer_text_type

__all__ = ["pool", "ArrowInput", "Fallback", "FAST_TYPES", "available", "arrow_csv_batches", "header_names", "infer_fields",
           "typed_column", "text_bytes"]

#: the types the fast path can produce (inference gives only these; --schema may ask for others)
FAST_TYPES = frozenset(("bool", "int64", "double", "date", "timestamp[us]", "timestamp[us, UTC]", "string"))

_FLOAT = r"^-?([0-9]+\.?[0-9]*|\.[0-9]+)([eE][-+]?[0-9]+)?$"
_DATE = r"^[0-9]{4}-(0[1-9]|1[0-2])-(0[1-9]|[12][0-9]|3[01])$"
_TIME = r"([01][0-9]|2[0-3]):[0-5][0-9](:[0-5][0-9](\.[0-9]{1,6})?)?"
_TS = rf"^[0-9]{{4}}-(0[1-9]|1[0-2])-(0[1-9]|[12][0-9]|3[01])[T ]{_TIME}$"
_TS_TZ = rf"^[0-9]{{4}}-(0[1-9]|1[0-2])-(0[1-9]|[12][0-9]|3[01])[T ]{_TIME}(Z|[+-][0-9]{{2}}:[0-9]{{2}})$"
_TRUE = ["true", "t", "yes", "y"]
_FALSE = ["false", "f", "no", "n"]


class Fallback(Exception):
    """The fast path cannot convert this input exactly as the pure path would: use the pure path."""


def available() -> bool:
    """Whether pyarrow (with its CSV reader) can be imported."""
    try:
        import pyarrow.csv  # noqa: F401
    except ImportError:
        return False
    return True


def _open_text(path: str, encoding: str) -> IO[str]:
    raw: Any = gzip.open(path, "rb") if path.endswith(".gz") else open(path, "rb")  # noqa: SIM115
    return io.TextIOWrapper(raw, encoding=encoding, newline="")


def header_names(path: str, *, encoding: str, delimiter: str, header: bool, names: list[str] | None) -> list[str]:
    """The column names the pure path gives (header row stripped, empty ones ``f<i>``; else ``names`` or
    ``f0, f1...`` over the first record's width). A BOM, an empty input or a header that spans lines
    falls back."""
    with _open_text(path, encoding) as fh:
        first = fh.readline()
        if not first or first.startswith("\ufeff"):
            raise Fallback("empty input or byte-order mark")
        row = next(csv.reader([first], delimiter=delimiter), None)
        if row is None or first.count('"') % 2:
            raise Fallback("header spans lines")
    if header:
        return [h.strip() or f"f{i}" for i, h in enumerate(row)]
    return list(names) if names else [f"f{i}" for i in range(len(row))]


class ArrowInput:
    """The input file opened with pyarrow's own IO (no Python in the read path). pyarrow's CSV reader reads
    ahead of the rows it has handed out (the whole of a small file at once), so the progress of a conversion
    is measured on the text of the rows converted (:func:`text_bytes`), mapped to the file's bytes by
    :meth:`done`."""

    def __init__(self, path: str) -> None:
        import pyarrow as pa

        self.raw = pa.OSFile(path, "rb")
        self.size = self.raw.size()
        gz = path.endswith(".gz")
        self.stream = pa.CompressedInputStream(self.raw, "gzip") if gz else self.raw
        #: bytes of text in the file (for .gz its trailer's size, modulo 2**32; None when unknown)
        self.text_size: int | None = _gzip_text_size(path) if gz else self.size

    def tell(self) -> int:
        """Bytes of the file read so far (read-ahead included)."""
        return int(self.raw.tell())

    def done(self, text: int) -> int:
        """The bytes of the file that its first ``text`` bytes of text take (for ``.gz``, in proportion to the
        text's size; where that is unknown, or says less than ``text``, what has been read)."""
        if not self.text_size or text > self.text_size:
            return self.tell()
        return min(self.size, self.size * text // self.text_size)

    def close(self) -> None:
        """Close the file."""
        self.stream.close()
        self.raw.close()


def _gzip_text_size(path: str) -> int | None:
    """The size of a gzip file's text as its trailer gives it (ISIZE: modulo 2**32, of the last member)."""
    try:
        with open(path, "rb") as fh:
            fh.seek(-4, 2)
            return int.from_bytes(fh.read(4), "little") or None
    except OSError:
        return None


def text_bytes(columns: Sequence[Any]) -> int:
    """About the bytes of CSV text that a batch's columns (pyarrow string arrays) were parsed from: every
    value's bytes and one delimiter or line end after each (quotes, CRs and nulls' text are not counted)."""
    import pyarrow.types as pat

    if not columns:
        return 0
    total = len(columns[0]) * len(columns)
    for arr in columns:
        if not len(arr):
            continue
        dtype = np.int64 if pat.is_large_string(arr.type) or pat.is_large_binary(arr.type) else np.int32
        width = np.dtype(dtype).itemsize
        offs = np.frombuffer(arr.buffers()[1], dtype, count=len(arr) + 1, offset=arr.offset * width)
        total += int(offs[-1]) - int(offs[0])
    return total


def pool() -> Any:
    """The system allocator: it returns freed blocks, where pyarrow's default pool (mimalloc) keeps them, so
    the peak stays near one block and one row group (as on the pure path) over a long file."""
    import pyarrow as pa

    return pa.system_memory_pool()


def arrow_csv_batches(source: ArrowInput, ncols: int, *, encoding: str, delimiter: str, header: bool,
                      null_values: Sequence[str], chunk_rows: int = 65_536) -> Iterator[list[Any]]:
    """The CSV as lists of pyarrow string arrays (one per column; nulls where the text is a null value), in
    blocks of about ``chunk_rows`` rows (64 bytes a row assumed; 256 KiB to 4 MiB)."""
    import pyarrow as pa
    import pyarrow.csv as pacsv

    try:
        codecs.lookup(encoding)
    except LookupError as exc:
        raise Fallback(str(exc)) from None
    gen = [f"c{i}" for i in range(ncols)]
    read = pacsv.ReadOptions(column_names=gen, skip_rows=1 if header else 0, encoding=encoding,
                             block_size=min(max(chunk_rows * 64, 1 << 18), 1 << 22))
    parse = pacsv.ParseOptions(delimiter=delimiter, newlines_in_values=True, ignore_empty_lines=True)
    conv = pacsv.ConvertOptions(column_types={g: pa.string() for g in gen}, null_values=list(null_values),
                                strings_can_be_null=True, quoted_strings_can_be_null=True)
    try:
        reader = pacsv.open_csv(source.stream, read_options=read, parse_options=parse, convert_options=conv,
                                memory_pool=pool())
        for batch in reader:
            yield [batch.column(i) for i in range(ncols)]
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError) as exc:  # ragged rows, bad encoding...
        raise Fallback(str(exc)) from None


def infer_fields(names: list[str], columns: list[Any], chunk_rows: int) -> list[Field]:
    """The pure path's inference over the first ``chunk_rows`` rows (nulls excluded)."""
    out = []
    for name, arr in zip(names, columns):
        vals = [v for v in arr.slice(0, chunk_rows).to_pylist() if v is not None]
        out.append(infer_text_type(name, vals))
    return out


def _all_match(arr: Any, pattern: str) -> bool:
    import pyarrow.compute as pc

    m = pc.match_substring_regex(pc.drop_null(arr, memory_pool=pool()), pattern, memory_pool=pool())
    return bool(pc.all(m, min_count=0, memory_pool=pool()).as_py())


def _all_decimal_ints(arr: Any) -> bool:
    """Every string is ASCII digits after an optional minus (cheaper than a regex; ``--5`` still fails the cast)."""
    import pyarrow.compute as pc

    mp = pool()
    m = pc.ascii_is_decimal(pc.utf8_ltrim(pc.drop_null(arr, memory_pool=mp), characters="-", memory_pool=mp),
                            memory_pool=mp)
    return bool(pc.all(m, min_count=0, memory_pool=mp).as_py())


def _bits(buf: Any, offset: int, n: int) -> np.ndarray:
    """``n`` bits of an Arrow bitmap from bit ``offset``, as bools."""
    return np.unpackbits(np.frombuffer(buf, np.uint8), bitorder="little", count=offset + n)[offset:].astype(bool)


def _values(arr: Any, dtype: Any) -> np.ndarray:
    """A fixed-width Arrow array's value buffer as numpy (slots under nulls hold whatever Arrow left there:
    they are masked). Reading buffers directly keeps pyarrow from importing pandas (half a second)."""
    width = np.dtype(dtype).itemsize
    return np.frombuffer(arr.buffers()[1], dtype, count=len(arr), offset=arr.offset * width).copy()


def typed_column(f: Field, arr: Any) -> Column:
    """One column's strings (a pyarrow string array) as the Column the pure path builds for ``f``."""
    import pyarrow as pa
    import pyarrow.compute as pc

    n = len(arr)
    nulls = arr.null_count
    if nulls and not f.nullable:
        raise Fallback(f"null in not-null column {f.name}")
    mask = ~_bits(arr.buffers()[0], arr.offset, n) if nulls else None
    t = f.type_name
    if t == "string":
        big = arr.cast(pa.large_string(), memory_pool=pool())
        bufs = big.buffers()
        offs = np.frombuffer(bufs[1], np.int64, count=n + 1, offset=big.offset * 8)
        if mask is not None and bool((np.diff(offs)[mask] != 0).any()):
            raise Fallback("text under a null")  # the pure path stores "" there
        data = np.frombuffer(bufs[2], np.uint8)[offs[0]:offs[-1]] if bufs[2] is not None else np.zeros(0, np.uint8)
        return Column(f, BinaryArray(offs - offs[0], data.copy()), mask)
    try:
        if t == "bool":
            mp = pool()
            low = pc.utf8_lower(pc.utf8_trim_whitespace(arr, memory_pool=mp), memory_pool=mp)
            is_true = pc.match_substring_regex(low, "^(" + "|".join(_TRUE) + ")$", memory_pool=mp)
            is_false = pc.match_substring_regex(low, "^(" + "|".join(_FALSE) + ")$", memory_pool=mp)
            if not bool(pc.all(pc.or_(is_true, is_false, memory_pool=mp), min_count=0, memory_pool=mp).as_py()):
                raise Fallback("not a boolean")
            vals = _bits(is_true.buffers()[1], is_true.offset, n) & (~mask if mask is not None else True)
        elif t == "int64":
            if not _all_decimal_ints(arr):
                raise Fallback("not a plain integer")
            vals = _values(arr.cast(pa.int64(), memory_pool=pool()), np.int64)
        elif t == "double":
            if not _all_match(arr, _FLOAT):
                raise Fallback("not a plain number")
            vals = _values(arr.cast(pa.float64(), memory_pool=pool()), np.float64)
        elif t == "date":
            if not _all_match(arr, _DATE):
                raise Fallback("not YYYY-MM-DD")
            vals = _values(arr.cast(pa.date32(), memory_pool=pool()), np.int32).astype(np.int64).astype("datetime64[D]")
        elif t in ("timestamp[us]", "timestamp[us, UTC]"):
            utc = t.endswith("UTC]")
            if not _all_match(arr, _TS_TZ if utc else _TS):
                raise Fallback("not an ISO 8601 timestamp of this column's kind")
            vals = _values(arr.cast(pa.timestamp("us", tz="UTC" if utc else None), memory_pool=pool()), np.int64).view("datetime64[us]")
        else:
            raise Fallback(f"type {t}")
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError) as exc:  # out of range, Feb 30...
        raise Fallback(str(exc)) from None
    if mask is None:
        return column_from_values(f.name, vals, f)
    vals = np.where(mask, np.zeros(1, vals.dtype), vals)  # as the pure path's fillers: no stray values under nulls
    return column_from_values(f.name, np.ma.masked_array(vals, mask=mask), f)
