"""In-memory tables: columns of physical values plus a null mask, and conversions.

A :class:`Column` stores values in their Parquet *physical* representation
(see :mod:`pqbloom.arrays`) for the full length of the column, with
``mask[i] == True`` where row ``i`` is null (the value slot then holds a
placeholder). Conversions to and from Python objects, numpy, pandas and
pyarrow live here so that the writer and reader only ever see physical arrays.
"""

from __future__ import annotations

import datetime as _dt
import decimal
import uuid
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import numpy as np

from .arrays import BinaryArray
from .arrow_schema import ArrowField, ArrowSchema, duration, effective_field, from_pyarrow, natural_field, schema_hints
from .errors import SchemaError, UnsupportedError
from .schema import MAX_SCHEMA_DEPTH, Field, NestedField, Schema, make_field

__all__ = ["Column", "DictionaryColumn", "Table"]

PT_BOOLEAN, PT_INT32, PT_INT64, PT_INT96, PT_FLOAT, PT_DOUBLE, PT_BYTE_ARRAY, PT_FLBA = range(8)

_NUMPY_OF = {PT_BOOLEAN: np.bool_, PT_INT32: np.int32, PT_INT64: np.int64, PT_FLOAT: np.float32,
             PT_DOUBLE: np.float64}
_UNIT_PER_S = {"ms": 1_000, "us": 1_000_000, "ns": 1_000_000_000}


class Column:
    """One column: physical values (full length) and an optional null mask (True = null)."""

    __slots__ = ("field", "values", "mask")

    def __init__(self, field: Field, values: Any, mask: np.ndarray | None = None) -> None:
        self.field = field
        self.values = values
        if mask is not None:
            mask = np.asarray(mask, dtype=bool)
            if not mask.any():
                mask = None
        if mask is not None and not field.nullable:
            raise SchemaError(f"column {field.name!r} is declared not null but has {int(mask.sum())} nulls")
        self.mask = mask

    def __len__(self) -> int:
        return len(self.values)

    @property
    def null_count(self) -> int:
        return 0 if self.mask is None else int(self.mask.sum())

    def dense(self) -> Any:
        """The non-null values only."""
        if self.mask is None:
            return self.values
        keep = ~self.mask
        if isinstance(self.values, BinaryArray):
            return self.values.filter(keep)
        return self.values[keep]

    def slice(self, start: int, stop: int) -> Column:
        v = self.values.slice(start, stop) if isinstance(self.values, BinaryArray) else self.values[start:stop]
        return Column(self.field, v, None if self.mask is None else self.mask[start:stop])

    def take(self, idx: np.ndarray) -> Column:
        v = self.values.take(idx) if isinstance(self.values, BinaryArray) else self.values[idx]
        return Column(self.field, v, None if self.mask is None else self.mask[idx])

    # -- output ---------------------------------------------------------------
    def to_numpy(self) -> np.ndarray:
        """Values as numpy in their logical type; nulls become None (object arrays), NaN or NaT."""
        return _to_numpy(self)

    def to_pylist(self) -> list[Any]:
        return _to_pylist(self)

    def to_arrow(self) -> Any:
        return _to_arrow(self)

    def __repr__(self) -> str:
        return f"Column({self.field}, len={len(self)}, nulls={self.null_count})"

    @staticmethod
    def concat(parts: Sequence[Column]) -> Column:
        if type(parts[0]) is not Column:  # nested columns concatenate their own way
            return type(parts[0]).concat(parts)
        f = parts[0].field
        if isinstance(parts[0].values, BinaryArray):
            vals: Any = BinaryArray.concat([p.values for p in parts])
        else:
            vals = np.concatenate([p.values for p in parts]) if parts else parts[0].values
        if any(p.mask is not None for p in parts):
            mask = np.concatenate([p.mask if p.mask is not None else np.zeros(len(p), bool) for p in parts])
        else:
            mask = None
        return Column(f, vals, mask)


class DictionaryColumn(Column):
    """A column whose values are drawn from ``dictionary`` (distinct values, in order): a pandas
    categorical, or a column read with its file's dictionary pages. The writer stores the dictionary
    page as this dictionary, and ``to_pandas`` makes it the categories."""

    __slots__ = ("dictionary",)

    def __init__(self, field: Field, values: Any, mask: np.ndarray | None, dictionary: Any) -> None:
        super().__init__(field, values, mask)
        self.dictionary = dictionary

    def slice(self, start: int, stop: int) -> Column:
        c = super().slice(start, stop)
        return DictionaryColumn(c.field, c.values, c.mask, self.dictionary)

    def take(self, idx: np.ndarray) -> Column:
        c = super().take(idx)
        return DictionaryColumn(c.field, c.values, c.mask, self.dictionary)

    @staticmethod
    def concat(parts: Sequence[Column]) -> Column:
        plain = Column.concat([Column(p.field, p.values, p.mask) for p in parts])
        dicts = [getattr(p, "dictionary", None) for p in parts]
        if any(d is None for d in dicts) or any(not _same_values(dicts[0], d) for d in dicts[1:]):
            return plain
        return DictionaryColumn(plain.field, plain.values, plain.mask, dicts[0])


def _same_values(a: Any, b: Any) -> bool:
    if a is b:
        return True
    if isinstance(a, BinaryArray) and isinstance(b, BinaryArray):
        return a.to_pylist() == b.to_pylist()
    return isinstance(a, np.ndarray) and isinstance(b, np.ndarray) and a.shape == b.shape and bool((a == b).all())


def with_dictionary(col: Column, dictionaries: Sequence[Any]) -> Column:
    """``col`` as a :class:`DictionaryColumn` whose dictionary is ``dictionaries`` (its chunks'
    dictionary pages, in order) followed by any other value it holds, each value once: the
    categories pyarrow makes of a dictionary-encoded column when it joins the chunks."""
    from .encodings import build_dictionary

    pieces = [*dictionaries, col.dense()]
    if isinstance(col.values, BinaryArray):
        if not all(isinstance(p, BinaryArray) for p in pieces):
            return col
        both: Any = BinaryArray.concat(pieces)
    else:
        both = np.concatenate([np.asarray(p) for p in pieces])
    dictionary, _ = build_dictionary(both, col.field.physical_type)
    return DictionaryColumn(col.field, col.values, col.mask, dictionary)


class Table:
    """A small columnar table: ``num_rows``, ``column_names``, ``column(name)``, conversions.

    ``metadata`` is the key-value metadata that goes with the data (pandas' ``"pandas"`` entry, a
    file's footer entries); ``arrow_schema`` the Arrow types the data came with, where they say more
    than the Parquet schema (time zones, durations, categoricals: see :mod:`pqbloom.arrow_schema`).
    A writer stores both; ``to_pandas`` and ``to_arrow`` apply them.

    The row count is the columns' length; a table without columns has its own (``num_rows``), as a
    file of rows without columns does (pyarrow reads such files, and so a table keeps their rows).
    """

    def __init__(self, columns: Sequence[Column], metadata: Mapping[str, str] | None = None,
                 arrow_schema: Any = None, *, num_rows: int | None = None) -> None:
        self.columns = list(columns)
        self.schema = Schema([c.field for c in self.columns])
        lens = {len(c) for c in self.columns}
        if len(lens) > 1:
            raise SchemaError(f"columns have different lengths: { {c.field.name: len(c) for c in self.columns} }")
        n = lens.pop() if lens else (num_rows or 0)
        if num_rows is not None and num_rows != n:
            raise SchemaError(f"columns of {n} rows for a table of {num_rows} rows")
        if n < 0:
            raise SchemaError(f"a table cannot have {n} rows")
        self._num_rows = n
        self.metadata: dict[str, str] = dict(metadata or {})
        self.arrow_schema = arrow_schema

    def _like(self, columns: Sequence[Column], num_rows: int | None = None) -> Table:
        """A table of ``columns`` (``num_rows`` rows) that keeps this one's metadata and Arrow types."""
        return Table(columns, self.metadata, self.arrow_schema, num_rows=num_rows)

    # -- construction ---------------------------------------------------------
    @classmethod
    def from_pydict(cls, data: Mapping[str, Any], schema: Schema | Mapping[str, str] | None = None) -> Table:
        """Build from ``{name: list | numpy array}``; types come from ``schema`` or are inferred."""
        if schema is not None and not isinstance(schema, Schema):
            schema = Schema.from_types(dict(schema))
        cols = []
        hints = []
        for name, values in data.items():
            f = schema.field(name) if schema is not None else None
            durations = _as_durations(name, values) if f is None else None
            if durations is not None:  # INT64 counts, with the Arrow type that says what they count
                values, unit = durations
                f = make_field(name, "int64")
                hints.append(ArrowField(name, duration(unit)))
            cols.append(column_from_values(name, values, f))
        if schema is not None:
            missing = set(schema.names) - set(data)
            if missing:
                raise SchemaError(f"data lacks columns {sorted(missing)} of the schema")
            order = {n: i for i, n in enumerate(schema.names)}
            cols.sort(key=lambda c: order[c.field.name])
        return cls(cols, None, ArrowSchema(tuple(hints)) if hints else None)

    @classmethod
    def from_pandas(cls, df: Any, schema: Schema | None = None, preserve_index: bool | None = None) -> Table:
        """Convert a DataFrame as ``pyarrow.Table.from_pandas`` does: NaN, None, NaT and pd.NA are
        nulls; nullable dtypes, time zones, durations and categoricals keep their Arrow types; the
        index is stored (``preserve_index`` as in pyarrow) and pandas' metadata describes the frame,
        so that :meth:`to_pandas` (and pyarrow) rebuild it from a file."""
        from .pandas_compat import table_from_pandas

        return table_from_pandas(df, schema, preserve_index)

    @classmethod
    def from_arrow(cls, table: Any) -> Table:
        import pyarrow as pa

        cols = []
        for i in range(table.num_columns):
            f, arr = table.schema.field(i), table.column(i)
            if pa.types.is_duration(f.type):  # stored as INT64; the Arrow schema keeps the unit
                f, arr = pa.field(f.name, pa.int64(), f.nullable), arr.cast(pa.int64())
            cols.append(_column_from_arrow(f, arr))
        md = {k.decode("utf-8", "replace"): v.decode("utf-8", "replace") for k, v in (table.schema.metadata or {}).items()}
        return cls(cols, md, from_pyarrow(table.schema), num_rows=table.num_rows)

    @classmethod
    def coerce(cls, data: Any, schema: Schema | None = None) -> Table:
        """Accept a Table, a dict of columns, a pandas DataFrame or a pyarrow Table."""
        if isinstance(data, Table):
            return data
        if isinstance(data, Mapping):
            return cls.from_pydict(data, schema)
        mod = type(data).__module__
        if mod.startswith("pyarrow"):
            return cls.from_arrow(data)
        if mod.startswith("pandas"):
            return cls.from_pandas(data, schema)
        raise TypeError(f"cannot make a table from {type(data).__name__}")

    # -- access -----------------------------------------------------------------
    @property
    def num_rows(self) -> int:
        return self._num_rows

    @property
    def num_columns(self) -> int:
        return len(self.columns)

    @property
    def column_names(self) -> list[str]:
        return [c.field.name for c in self.columns]

    def column(self, name: str | int) -> Column:
        if isinstance(name, int):
            return self.columns[name]
        for c in self.columns:
            if c.field.name == name:
                return c
        raise KeyError(f"no column {name!r}; columns are {self.column_names}")

    def __getitem__(self, name: str) -> Column:
        return self.column(name)

    def __len__(self) -> int:
        return self._num_rows

    def select(self, names: Iterable[str]) -> Table:
        return self._like([self.column(n) for n in names], num_rows=self._num_rows)

    def slice(self, start: int, stop: int | None = None) -> Table:
        stop = self._num_rows if stop is None else min(stop, self._num_rows)
        start = min(max(start, 0), stop)
        return self._like([c.slice(start, stop) for c in self.columns], num_rows=max(stop - start, 0))

    def take(self, idx: np.ndarray) -> Table:
        idx = np.asarray(idx)
        n = int(np.count_nonzero(idx)) if idx.dtype == bool else len(idx)
        return self._like([c.take(idx) for c in self.columns], num_rows=n)

    @staticmethod
    def concat(tables: Sequence[Table]) -> Table:
        if not tables:
            return Table([])
        return tables[0]._like([Column.concat([t.columns[i] for t in tables]) for i in range(tables[0].num_columns)],
                               num_rows=sum(t.num_rows for t in tables))

    def to_pydict(self) -> dict[str, list[Any]]:
        return {c.field.name: c.to_pylist() for c in self.columns}

    def to_pylist(self) -> list[dict[str, Any]]:
        d = self.to_pydict()
        names = list(d)
        return [dict(zip(names, row)) for row in zip(*d.values())] if names else [{} for _ in range(self._num_rows)]

    def to_arrow(self) -> Any:
        import pyarrow as pa

        arrays = [c.to_arrow() for c in self.columns]
        hints = self.arrow_types()
        if hints is not None:
            arrays = [_apply_arrow_type(c, a, hints) for c, a in zip(self.columns, arrays)]
        fields = [pa.field(c.field.name, a.type, c.field.nullable) for c, a in zip(self.columns, arrays)]
        if not arrays:  # rows without columns: pyarrow keeps the row count of a table that has none
            # (the metadata goes on first: replacing the schema of a column-less table loses its rows)
            holder = pa.table({"_": pa.nulls(self._num_rows)}).replace_schema_metadata(self.metadata or None)
            return holder.drop_columns(["_"])
        return pa.Table.from_arrays(arrays, schema=pa.schema(fields, metadata=self.metadata or None))

    def arrow_types(self) -> ArrowSchema | None:
        """The Arrow types the data came with (from pandas, pyarrow or a file's ``ARROW:schema``)."""
        return self.arrow_schema if isinstance(self.arrow_schema, ArrowSchema) else schema_hints(self.metadata)

    def to_pandas(self) -> Any:
        """A DataFrame, as ``pyarrow.Table.to_pandas()`` makes it from the same file: pandas' metadata
        restores the index, nullable and string dtypes; the Arrow types time zones, durations and
        categoricals. Without them, ints with nulls become float64 (unless that would round a value:
        then they stay exact Python ints), strings pandas' string dtype, dates and times Python objects."""
        from .pandas_compat import table_to_pandas

        return table_to_pandas(self)

    def __repr__(self) -> str:
        return f"Table({self.num_rows} rows, {self.schema!r})"

    def equals(self, other: Table) -> bool:
        return self.schema == other.schema and self.to_pydict() == other.to_pydict()


# ---------------------------------------------------------------------------
# inputs -> physical
# ---------------------------------------------------------------------------
def _is_na(v: Any) -> bool:
    if v is None:
        return True
    try:
        import pandas as pd

        return v is pd.NA or v is pd.NaT or (isinstance(v, float) and False)
    except ImportError:  # pragma: no cover
        return False


def _infer_field(name: str, values: Any) -> Field:
    if isinstance(values, np.ndarray) and values.dtype != object:
        dt = values.dtype
        if isinstance(values, np.ma.MaskedArray):
            dt = values.data.dtype
        k = dt.kind
        if k == "b":
            return make_field(name, "bool")
        if k == "i":
            return make_field(name, {1: "int8", 2: "int16", 4: "int32", 8: "int64"}[dt.itemsize])
        if k == "u":
            return make_field(name, {1: "uint8", 2: "uint16", 4: "uint32", 8: "uint64"}[dt.itemsize])
        if k == "f":
            return make_field(name, {2: "float16", 4: "float", 8: "double"}[dt.itemsize])
        if k == "M":
            unit = np.datetime_data(dt)[0]
            if unit == "D":
                return make_field(name, "date")
            if unit in ("ms", "us", "ns"):
                return make_field(name, f"timestamp[{unit}]")
            return make_field(name, "timestamp[us]")
        if k == "m":
            # durations are counts of their unit (their Arrow type, when known, says which: from_pydict);
            # a TIME is a time of day, which a duration is not
            return make_field(name, "int64")
        if k == "U":
            return make_field(name, "string")
        if k == "S":
            return make_field(name, "binary")
        if k == "V":
            return make_field(name, f"fixed[{dt.itemsize}]")
        raise SchemaError(f"column {name!r}: cannot store numpy dtype {dt}")
    if isinstance(values, BinaryArray):
        return make_field(name, "binary")
    sample = next((v for v in values if v is not None), None)
    if sample is None:
        return make_field(name, "int32")  # all null: any type will do; int32 is what Spark reads fine
    if isinstance(sample, (bool, np.bool_)):
        return make_field(name, "bool")
    if isinstance(sample, (int, np.integer)):
        return make_field(name, "int64")
    if isinstance(sample, (float, np.floating)):
        return make_field(name, "double")
    if isinstance(sample, str):
        return make_field(name, "string")
    if isinstance(sample, (bytes, bytearray, memoryview)):
        return make_field(name, "binary")
    if isinstance(sample, _dt.datetime):
        return make_field(name, "timestamp[us, UTC]" if sample.tzinfo is not None else "timestamp[us]")
    if isinstance(sample, _dt.date):
        return make_field(name, "date")
    if isinstance(sample, _dt.time):
        return make_field(name, "time[us]")
    if isinstance(sample, uuid.UUID):
        return make_field(name, "uuid")
    if isinstance(sample, decimal.Decimal):
        # as pyarrow infers: the most integer digits plus the most fractional digits of any value
        int_digits, scale = 0, 0
        for d in values:
            if d is None or not isinstance(d, decimal.Decimal) or not d.is_finite():
                continue
            t = d.as_tuple()
            exp = int(t.exponent)
            prec, sc = len(t.digits), -exp
            if sc < 0:
                prec, sc = prec - sc, 0
            int_digits, scale = max(int_digits, prec - sc), max(scale, sc)
        precision = max(int_digits + scale, 1)
        return make_field(name, f"decimal({precision}, {scale})")
    raise SchemaError(f"column {name!r}: cannot infer a Parquet type for {type(sample).__name__}")


def column_from_values(name: str, values: Any, field: Field | None = None) -> Column:
    """Convert user input (list, numpy array, masked array, BinaryArray) to a physical Column."""
    if isinstance(values, Column):
        if field is None:
            return values
        if type(values) is not Column or isinstance(field, NestedField):
            from .nested import conform

            return conform(values, field)
        return Column(field, values.values, values.mask)
    if isinstance(field, NestedField):
        from .nested import column_from_pylist

        return column_from_pylist(values, field)
    if field is None and not isinstance(values, BinaryArray) and (
            not isinstance(values, np.ndarray) or values.dtype == object):
        from .nested import column_from_pylist, infer_field, looks_nested

        if looks_nested(values):
            return column_from_pylist(values, infer_field(name, values))
    if field is None:
        field = _infer_field(name, values)
    mask: np.ndarray | None = None
    if isinstance(values, np.ma.MaskedArray):
        mask = np.ma.getmaskarray(values)
        values = values.filled(0) if values.dtype.kind not in "OUS" else values.data
    if isinstance(values, np.ndarray) and values.dtype.kind in "mM":
        nat = np.isnat(values)
        if nat.any():  # NaT is numpy's null: store a null (and a zero in its slot), as pyarrow does
            mask = nat if mask is None else (mask | nat)
            values = np.where(nat, np.zeros(1, values.dtype), values)
    if isinstance(values, np.ndarray) and values.dtype == object or not isinstance(values, (np.ndarray, BinaryArray)):
        seq = list(values)
        nulls = np.fromiter((v is None or _is_na(v) for v in seq), dtype=bool, count=len(seq))
        if nulls.any():
            mask = nulls if mask is None else (mask | nulls)
        phys = _physical_from_objects(field, seq, nulls)
    else:
        phys = _physical_from_array(field, values)
    if mask is not None and not mask.any():
        mask = None
    if mask is not None and not field.nullable:
        raise SchemaError(f"column {name!r} is declared not null but has {int(mask.sum())} nulls")
    return Column(field, phys, mask)


def _physical_from_array(field: Field, arr: Any) -> Any:
    p, lt = field.physical_type, field.logical_type
    if isinstance(arr, BinaryArray):
        if p == PT_BYTE_ARRAY:
            return arr
        if p == PT_FLBA:
            w = arr.fixed_width()
            if w != field.type_length and len(arr):
                raise SchemaError(f"column {field.name!r}: values must all be {field.type_length} bytes")
            return arr.as_matrix(field.type_length or 0)
        raise SchemaError(f"column {field.name!r}: binary values for a {field.type_name} column")
    arr = np.asarray(arr)
    k = arr.dtype.kind
    if p == PT_BYTE_ARRAY:
        if k in "US":
            return BinaryArray.from_numpy_strings(arr)
        raise SchemaError(f"column {field.name!r}: cannot store {arr.dtype} as {field.type_name}")
    if p == PT_FLBA:
        if lt is not None and lt.kind == "FLOAT16":
            return np.ascontiguousarray(arr.astype(np.float16)).view(np.uint8).reshape(-1, 2)
        if arr.ndim == 2 and arr.dtype == np.uint8 and arr.shape[1] == field.type_length:
            return np.ascontiguousarray(arr)
        if k in "SV" and arr.dtype.itemsize == field.type_length:
            return np.ascontiguousarray(arr).view(np.uint8).reshape(-1, field.type_length or 0)
        if lt is not None and lt.kind == "DECIMAL" and k in "iu":
            return _ints_to_be_bytes([int(x) for x in arr.tolist()], field.type_length or 16)
        raise SchemaError(f"column {field.name!r}: cannot store {arr.dtype} as {field.type_name}")
    if p == PT_INT96:
        if arr.ndim == 2 and arr.shape[1] == 12:
            return np.ascontiguousarray(arr, dtype=np.uint8)
        if k == "M":
            return timestamps_to_int96(arr.astype("datetime64[ns]").view(np.int64))
        raise SchemaError(f"column {field.name!r}: INT96 needs datetime64 or (n, 12) bytes")
    if lt is not None and lt.kind == "DATE" and k == "M":
        return arr.astype("datetime64[D]").view(np.int64).astype(np.int32)
    if lt is not None and lt.kind == "TIMESTAMP" and k == "M":
        return arr.astype(f"datetime64[{lt.unit}]").view(np.int64)
    if lt is not None and lt.kind == "TIME" and k == "m":
        out = arr.astype(f"timedelta64[{lt.unit}]").view(np.int64)
        _check_time_of_day(field, out)
        return out.astype(np.int32) if p == PT_INT32 else out
    if lt is None and p == PT_INT64 and k == "m":  # a duration: the count of its unit
        return np.ascontiguousarray(arr.view(np.int64))
    target = _NUMPY_OF.get(p)
    if target is None:
        raise SchemaError(f"column {field.name!r}: unsupported type {field.type_name}")
    if k == "M" or k == "m":
        raise SchemaError(f"column {field.name!r}: cannot store {arr.dtype} as {field.type_name}")
    if lt is not None and lt.kind == "INTEGER" and not lt.signed and k == "u":
        # unsigned values keep their bits; Parquet stores them in the signed physical type
        return arr.astype(np.uint32 if p == PT_INT32 else np.uint64).view(target)
    if p in (PT_INT32, PT_INT64) and k == "f":
        raise SchemaError(f"column {field.name!r}: float values for an integer column")
    if p in (PT_INT32, PT_INT64) and k in "iu" and arr.size:
        info = np.iinfo(target)
        lo, hi = arr.min(), arr.max()
        if lt is not None and lt.kind == "INTEGER":
            bits = lt.bit_width or 64
            info_lo, info_hi = (-(2 ** (bits - 1)), 2 ** (bits - 1) - 1) if lt.signed else (0, 2**bits - 1)
        else:
            info_lo, info_hi = int(info.min), int(info.max)
        if int(lo) < info_lo or int(hi) > info_hi:
            raise SchemaError(f"column {field.name!r}: values outside the range of {field.type_name}")
    return np.ascontiguousarray(arr.astype(target, copy=False))


def _ints_to_be_bytes(ints: list[int], width: int) -> np.ndarray:
    out = np.zeros((len(ints), width), np.uint8)
    for i, v in enumerate(ints):
        try:
            out[i] = np.frombuffer(v.to_bytes(width, "big", signed=True), np.uint8)
        except OverflowError:
            raise SchemaError(f"decimal value {v} does not fit in {width} bytes") from None
    return out


# Parquet decimals reach 38 digits (and more on BYTE_ARRAY); Python's default context keeps only 28.
_DECIMAL_CONTEXT = decimal.Context(prec=200, Emax=999_999, Emin=-999_999)


def _unscaled(d: Any, scale: int) -> int:
    if isinstance(d, decimal.Decimal):
        q = d.scaleb(scale, context=_DECIMAL_CONTEXT)
        if q != q.to_integral_value(context=_DECIMAL_CONTEXT):
            raise SchemaError(f"decimal {d} has more than {scale} fractional digits")
        return int(q)
    return int(d)


def _physical_from_objects(field: Field, seq: list[Any], nulls: np.ndarray) -> Any:
    p, lt = field.physical_type, field.logical_type
    kind = lt.kind if lt is not None else None
    if p == PT_BYTE_ARRAY:
        if kind == "DECIMAL":
            items: list[Any] = []
            for v, isnull in zip(seq, nulls):
                if isnull:
                    items.append(b"")
                    continue
                u = _unscaled(v, lt.scale or 0)  # type: ignore[union-attr]
                n = max(1, (u.bit_length() + 8) // 8)
                items.append(u.to_bytes(n, "big", signed=True))
            return BinaryArray.from_pylist(items)
        bad = [type(v).__name__ for v, isnull in zip(seq, nulls) if not isnull and not isinstance(v, (str, bytes, bytearray, memoryview))]
        if bad:
            raise SchemaError(f"column {field.name!r}: {bad[0]} value in a {field.type_name} column")
        return BinaryArray.from_pylist([None if isnull else v for v, isnull in zip(seq, nulls)])
    if p == PT_FLBA:
        w = field.type_length or 0
        if kind == "DECIMAL":
            return _ints_to_be_bytes([0 if isnull else _unscaled(v, lt.scale or 0) for v, isnull in zip(seq, nulls)], w)  # type: ignore[union-attr]
        if kind == "FLOAT16":
            return np.array([0.0 if isnull else v for v, isnull in zip(seq, nulls)], np.float16).view(np.uint8).reshape(-1, 2)
        out = np.zeros((len(seq), w), np.uint8)
        for i, (v, isnull) in enumerate(zip(seq, nulls)):
            if isnull:
                continue
            b = v.bytes if isinstance(v, uuid.UUID) else bytes(v)
            if len(b) != w:
                raise SchemaError(f"column {field.name!r}: value of {len(b)} bytes in a fixed[{w}] column")
            out[i] = np.frombuffer(b, np.uint8)
        return out
    if kind == "DATE":
        vals = [0 if isnull else (v - _dt.date(1970, 1, 1)).days if isinstance(v, _dt.date) else int(v)
                for v, isnull in zip(seq, nulls)]
        return np.array(vals, np.int32)
    if kind == "TIMESTAMP" or p == PT_INT96:
        unit = lt.unit if lt is not None and lt.unit else "ns"
        per_s = _UNIT_PER_S[unit]
        ints = []
        for v, isnull in zip(seq, nulls):
            if isnull:
                ints.append(0)
            elif isinstance(v, _dt.datetime):
                if v.tzinfo is not None:
                    v = v.astimezone(_dt.timezone.utc).replace(tzinfo=None)
                delta = v - _dt.datetime(1970, 1, 1)
                ints.append((delta.days * 86400 + delta.seconds) * per_s + delta.microseconds * per_s // 1_000_000)
            elif isinstance(v, np.datetime64):
                ints.append(int(v.astype(f"datetime64[{unit}]").view(np.int64)))
            else:
                ints.append(int(v))
        arr = np.array(ints, np.int64)
        return timestamps_to_int96(arr) if p == PT_INT96 else arr
    if kind == "TIME":
        per_s = _UNIT_PER_S[lt.unit or "us"]  # type: ignore[union-attr]
        ints = []
        for v, isnull in zip(seq, nulls):
            if isnull:
                ints.append(0)
            elif isinstance(v, _dt.time):
                ints.append(((v.hour * 60 + v.minute) * 60 + v.second) * per_s + v.microsecond * per_s // 1_000_000)
            elif isinstance(v, (_dt.timedelta, np.timedelta64)):
                ints.append(int(np.timedelta64(v).astype(f"timedelta64[{lt.unit}]").view(np.int64)))  # type: ignore[union-attr]
            else:
                ints.append(int(v))
        arr = np.array(ints, np.int64)
        _check_time_of_day(field, arr)
        return arr.astype(np.int32) if p == PT_INT32 else arr
    if kind == "DECIMAL":
        return np.array([0 if isnull else _unscaled(v, lt.scale or 0) for v, isnull in zip(seq, nulls)],  # type: ignore[union-attr]
                        np.int32 if p == PT_INT32 else np.int64)
    fill: Any = False if p == PT_BOOLEAN else 0
    clean = [fill if isnull else v for v, isnull in zip(seq, nulls)]
    if p != PT_BOOLEAN and any(isinstance(v, (str, bytes)) for v in clean):
        raise SchemaError(f"column {field.name!r}: text value in a {field.type_name} column")
    if kind == "INTEGER" and not lt.signed:  # type: ignore[union-attr]
        raw = np.array(clean, np.uint64 if p == PT_INT64 else np.int64)
        return _physical_from_array(field, raw.astype(np.uint64 if p == PT_INT64 else np.uint32))
    try:
        raw = np.array(clean)
    except (OverflowError, ValueError) as exc:
        raise SchemaError(f"column {field.name!r}: {exc}") from None
    if raw.size == 0:
        raw = raw.astype(_NUMPY_OF.get(p, np.int32))
    return _physical_from_array(field, raw)


def _check_time_of_day(field: Field, ticks: np.ndarray) -> None:
    """A TIME is a time of day: refuse values outside [0, 24 h) rather than store what every reader
    would show as another time (or reject)."""
    if not ticks.size:
        return
    day = 86_400 * _UNIT_PER_S[field.logical_type.unit or "us"]  # type: ignore[union-attr]
    bad = (ticks < 0) | (ticks >= day)
    if bad.any():
        v = int(ticks[bad][0])
        raise SchemaError(f"column {field.name!r}: TIME value {v} {field.logical_type.unit} is not a time of day "  # type: ignore[union-attr]
                          f"(0 to 24 h); store durations as int64 (numpy timedelta64 and pandas Timedelta are)")


def _as_durations(name: str, values: Any) -> tuple[Any, str] | None:
    """Durations (numpy timedelta64, or Python timedelta objects) as timedelta64 of an Arrow unit
    (NaT for nulls), with that unit; None for other values."""
    if isinstance(values, np.ndarray) and values.dtype.kind == "m":
        arr = values
    elif isinstance(values, (list, tuple)) or isinstance(values, np.ndarray) and values.dtype == object:
        sample = next((v for v in values if v is not None), None)
        if not isinstance(sample, (_dt.timedelta, np.timedelta64)):
            return None
        try:
            arr = np.array([np.timedelta64("NaT") if v is None else v for v in values], "m8[us]")
        except (TypeError, ValueError):
            raise SchemaError(f"column {name!r}: values of mixed types cannot be stored") from None
    else:
        return None
    unit = np.datetime_data(arr.dtype)[0]
    if unit in ("W", "D", "h", "m"):  # whole seconds: exact in Arrow's coarsest unit
        arr, unit = arr.astype("m8[s]"), "s"
    if unit not in ("s", "ms", "us", "ns"):
        raise SchemaError(f"column {name!r}: timedelta64 unit {unit!r} has no Arrow duration equivalent")
    return arr, unit


def _apply_arrow_type(col: Column, arr: Any, hints: ArrowSchema) -> Any:
    """A column's pyarrow array with the Arrow type pyarrow reads for it from the same file (time
    zone, duration, dictionary...); the array unchanged where there is nothing to apply."""
    import pyarrow as pa

    from .arrow_schema import to_pyarrow_type

    hint = hints.field(col.field.name)
    n = natural_field(col.field, written=False) if hint is not None else None
    if n is None or hint is None:
        return arr
    eff = effective_field(n, hint)
    if eff == n:
        return arr
    target = to_pyarrow_type(eff)
    if pa.types.is_dictionary(target):
        dictionary = getattr(col, "dictionary", None)
        if dictionary is not None:
            dict_arr = Column(col.field.with_nullable(True), dictionary).to_arrow()
            codes = pa.array(dictionary_codes(col, dictionary), type=pa.int32(), mask=col.mask)
            return pa.DictionaryArray.from_arrays(codes, dict_arr.cast(target.value_type), ordered=target.ordered)
    try:
        return arr.cast(target)
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError, pa.ArrowTypeError):
        return arr  # not a type these values can take: keep the Parquet-derived one


def dictionary_codes(col: Column, dictionary: Any, null_code: int = 0) -> np.ndarray:
    """Each row's index into ``dictionary`` (``null_code`` for nulls), found by hashing, not per value."""
    from .encodings import encode_with_dictionary

    codes = np.full(len(col), null_code, np.int32)
    got = encode_with_dictionary(dictionary, col.dense(), col.field.physical_type)
    if got is None:
        raise SchemaError(f"column {col.field.name!r}: values outside its dictionary")
    codes[~col.mask if col.mask is not None else slice(None)] = got[1]
    return codes


def timestamps_to_int96(ns: np.ndarray) -> np.ndarray:
    """int64 nanoseconds since the epoch -> INT96 (nanos of day LE int64, Julian day LE int32)."""
    days, nanos = np.divmod(ns.astype(np.int64), 86_400 * 1_000_000_000)
    out = np.zeros((len(ns), 12), np.uint8)
    out[:, :8] = nanos.astype("<i8").view(np.uint8).reshape(-1, 8)
    out[:, 8:] = (days + 2_440_588).astype("<i4").view(np.uint8).reshape(-1, 4)
    return out


def int96_to_ns(raw: np.ndarray) -> np.ndarray:
    """INT96 -> int64 nanoseconds since the epoch (wrapping like Arrow does for out-of-range values)."""
    m = np.ascontiguousarray(raw, dtype=np.uint8)
    nanos = m[:, :8].copy().view("<i8").reshape(-1)
    # the Julian day is unsigned in Impala/Spark's layout (Arrow reads it so too)
    days = m[:, 8:].copy().view("<u4").reshape(-1).astype(np.int64)
    with np.errstate(over="ignore"):
        return (days - 2_440_588) * np.int64(86_400_000_000_000) + nanos


# ---------------------------------------------------------------------------
# physical -> outputs
# ---------------------------------------------------------------------------
def _logical_numpy(col: Column) -> np.ndarray:
    """Values as numpy in their logical type, ignoring nulls."""
    f, v = col.field, col.values
    lt = f.logical_type
    kind = lt.kind if lt is not None else None
    p = f.physical_type
    if p == PT_INT96:
        return int96_to_ns(v).view("datetime64[ns]")
    if kind == "DATE":
        return v.astype(np.int64).view("datetime64[D]")
    if kind == "TIMESTAMP":
        return v.astype(np.int64).view(f"datetime64[{lt.unit}]")  # type: ignore[union-attr]
    if kind == "TIME":
        return v.astype(np.int64).view(f"timedelta64[{lt.unit}]")  # type: ignore[union-attr]
    if kind == "INTEGER":
        bits, signed = lt.bit_width or 64, lt.signed  # type: ignore[union-attr]
        if not signed:
            u = v.view(np.uint32 if p == PT_INT32 else np.uint64)
            return u.astype({8: np.uint8, 16: np.uint16, 32: np.uint32, 64: np.uint64}[bits])
        return v.astype({8: np.int8, 16: np.int16, 32: np.int32, 64: np.int64}[bits])
    if kind == "FLOAT16":
        return np.ascontiguousarray(v).view(np.float16).reshape(-1)
    return v


def _to_numpy(col: Column) -> np.ndarray:
    f = col.field
    kind = f.logical_type.kind if f.logical_type is not None else None
    if isinstance(col.values, BinaryArray) or f.physical_type == PT_FLBA and kind != "FLOAT16" or kind == "DECIMAL":
        return np.array(col.to_pylist(), dtype=object)
    out = _logical_numpy(col)
    if col.mask is None:
        return out
    if out.dtype.kind in "mM":
        out = out.copy()
        out[col.mask] = np.datetime64("NaT") if out.dtype.kind == "M" else np.timedelta64("NaT")
        return out
    if out.dtype.kind == "f":
        out = out.astype(np.float64 if out.dtype.itemsize > 4 else out.dtype, copy=True)
        out[col.mask] = np.nan
        return out
    obj = out.astype(object)
    obj[col.mask] = None
    return obj


def _decimal_from_bytes(b: bytes, scale: int) -> decimal.Decimal:
    return decimal.Decimal(int.from_bytes(b, "big", signed=True)).scaleb(-scale, context=_DECIMAL_CONTEXT)


def _to_pylist(col: Column) -> list[Any]:
    f, v = col.field, col.values
    lt = f.logical_type
    kind = lt.kind if lt is not None else None
    p = f.physical_type
    if isinstance(v, BinaryArray):
        if kind == "DECIMAL":
            vals: list[Any] = [_decimal_from_bytes(b, lt.scale or 0) for b in v]  # type: ignore[union-attr]
        elif kind in ("STRING", "JSON", "ENUM"):
            vals = [b.decode("utf-8", errors="surrogateescape") for b in v]
        else:
            vals = v.to_pylist()
    elif p == PT_FLBA and kind != "FLOAT16":
        raw = [bytes(r) for r in np.ascontiguousarray(v).reshape(len(v), -1)] if len(v) else []
        if kind == "DECIMAL":
            vals = [_decimal_from_bytes(b, lt.scale or 0) for b in raw]  # type: ignore[union-attr]
        elif kind == "UUID":
            vals = [uuid.UUID(bytes=b) for b in raw]
        else:
            vals = raw
    elif kind == "DECIMAL":
        vals = [decimal.Decimal(int(x)).scaleb(-(lt.scale or 0), context=_DECIMAL_CONTEXT)  # type: ignore[union-attr]
                for x in v.tolist()]
    elif kind == "DATE":
        vals = [_dt.date(1970, 1, 1) + _dt.timedelta(days=int(x)) for x in v.tolist()]
    elif kind == "TIMESTAMP" or p == PT_INT96:
        ints = int96_to_ns(v) if p == PT_INT96 else v
        unit: str = "ns" if p == PT_INT96 or lt is None or lt.unit is None else lt.unit
        vals = _timestamps_to_py(f.name, np.asarray(ints, np.int64), unit, lt is not None and lt.utc, col.mask)
    elif kind == "TIME":
        ticks = v.astype(np.int64)
        per_us = {"ms": 1000, "us": 1, "ns": 0}[lt.unit]  # type: ignore[union-attr, index]
        micros = ticks // 1000 if per_us == 0 else ticks * per_us
        vals = []
        # a time of day outside 0..24 h (some writers store negative ones) wraps around the day, as
        # pyarrow and DuckDB read it
        for us in (micros % 86_400_000_000).tolist():
            vals.append(_dt.time(us // 3_600_000_000, us // 60_000_000 % 60, us // 1_000_000 % 60, us % 1_000_000))
    else:
        vals = _logical_numpy(col).tolist()
    if col.mask is not None:
        for i in np.flatnonzero(col.mask).tolist():
            vals[i] = None
    return vals


#: the instants datetime.datetime holds, in microseconds since the epoch
_DATETIME_US = (-62_135_596_800_000_000, 253_402_300_799_999_999)


def _timestamps_to_py(name: str, ints: np.ndarray, unit: str, utc: bool, mask: np.ndarray | None) -> list[Any]:
    """Python values of a timestamp column, as pyarrow's ``as_py`` gives them: ``datetime.datetime``
    (aware, in UTC, when the column is), or ``pandas.Timestamp`` for nanoseconds (which datetime cannot
    hold). A value outside datetime's range, or nanoseconds without pandas, raise
    :class:`~pqbloom.errors.UnsupportedError` rather than come back as something else."""
    valid = ints if mask is None else ints[~mask]
    if unit == "ns":
        try:
            import pandas as pd
        except ImportError:  # pragma: no cover - pandas is installed with the test extras
            if bool((valid % 1000 != 0).any()):
                raise UnsupportedError(f"column {name!r}: nanosecond timestamps need pandas for Python values "
                                       f"(datetime holds microseconds); use to_arrow() or to_numpy()") from None
            return _timestamps_to_py(name, ints // 1000, "us", utc, mask)
        idx = pd.DatetimeIndex(np.where(mask, 0, ints) if mask is not None else ints, dtype="datetime64[ns]")
        out: list[Any] = (idx.tz_localize("UTC") if utc else idx).tolist()
        return out
    us = ints * 1000 if unit == "ms" else ints
    bad = (valid < _DATETIME_US[0] // (1000 if unit == "ms" else 1)) | (
        valid > _DATETIME_US[1] // (1000 if unit == "ms" else 1))
    if bool(bad.any()):
        raise UnsupportedError(f"column {name!r}: timestamp {int(valid[bad][0])} ({unit}) is outside the range of "
                               f"datetime.datetime; use to_arrow() or to_numpy()")
    if mask is not None:
        us = np.where(mask, 0, us)
    naive = us.astype("datetime64[us]").astype(object).tolist()
    if not utc:
        return naive  # type: ignore[no-any-return]
    tz = _dt.timezone.utc
    return [d.replace(tzinfo=tz) for d in naive]


def _validity_buffer(col: Column) -> Any:
    import pyarrow as pa

    if col.mask is None:
        return None
    return pa.py_buffer(np.packbits(~col.mask, bitorder="little").tobytes())


def _to_arrow(col: Column) -> Any:
    import pyarrow as pa

    f, v, n = col.field, col.values, len(col)
    lt = f.logical_type
    kind = lt.kind if lt is not None else None
    p = f.physical_type
    validity = _validity_buffer(col)
    nulls = col.null_count
    if kind == "UNKNOWN":  # the Null logical type: every value is null
        return pa.nulls(n)
    if kind == "DECIMAL":
        return _decimal_to_arrow(col, validity)
    if isinstance(v, BinaryArray):
        c = v.compact()
        big = c.nbytes >= 2**31
        btyp = (pa.large_string() if big else pa.string()) if kind in ("STRING", "JSON", "ENUM") else (
            pa.large_binary() if big else pa.binary())
        offs = c.offsets if big else c.offsets.astype(np.int32)
        arr = pa.Array.from_buffers(btyp, n, [validity, pa.py_buffer(offs), pa.py_buffer(c.data)], null_count=nulls)
        # JSON as pyarrow reads it: the arrow.json extension type over its text
        return pa.ExtensionArray.from_storage(pa.json_(btyp), arr) if kind == "JSON" else arr
    if p == PT_FLBA and kind != "FLOAT16":
        w = f.type_length or 0
        arr = pa.Array.from_buffers(pa.binary(w), n, [validity, pa.py_buffer(np.ascontiguousarray(v).tobytes())],
                                    null_count=nulls)
        # UUID as pyarrow reads it: the arrow.uuid extension type over 16 bytes
        return pa.ExtensionArray.from_storage(pa.uuid(), arr) if kind == "UUID" else arr
    if kind == "DATE":
        typ: Any = pa.date32()
    elif kind == "TIMESTAMP":
        typ = pa.timestamp(lt.unit, tz="UTC" if lt.utc else None)  # type: ignore[union-attr]
    elif p == PT_INT96:
        typ = pa.timestamp("ns")
    elif kind == "TIME":
        typ = pa.time32(lt.unit) if p == PT_INT32 else pa.time64(lt.unit)  # type: ignore[union-attr]
    elif kind == "FLOAT16":
        typ = pa.float16()
    elif kind == "INTEGER":
        typ = pa.from_numpy_dtype(_logical_numpy(Column(f, v[:0])).dtype)
    elif p == PT_BOOLEAN:
        return pa.Array.from_buffers(pa.bool_(), n, [validity, pa.py_buffer(np.packbits(v, bitorder="little"))],
                                     null_count=nulls)
    else:
        typ = pa.from_numpy_dtype(v.dtype)
    # the physical buffer already has Arrow's layout except for these
    data = int96_to_ns(v) if p == PT_INT96 else (_logical_numpy(col) if kind == "INTEGER" else v)
    return pa.Array.from_buffers(typ, n, [validity, pa.py_buffer(np.ascontiguousarray(data).view(np.uint8))],
                                 null_count=nulls)


def _decimal_to_arrow(col: Column, validity: Any) -> Any:
    """A DECIMAL column as Arrow's decimal128 (precision up to 38) or decimal256 (up to 76), built from
    the stored unscaled values with numpy. Values are taken as stored, also where they have more digits
    than the precision declares (pyarrow reads them so)."""
    import pyarrow as pa

    from .decimals import (
        DecimalOverflow,
        arrow_decimal_width,
        words_from_big_endian,
        words_from_byte_array,
        words_from_ints,
    )

    f, v, n = col.field, col.values, len(col)
    lt = f.logical_type
    assert lt is not None
    precision, scale = lt.precision or 0, lt.scale or 0
    width = arrow_decimal_width(precision)
    if width is None:
        raise UnsupportedError(f"column {f.name!r}: DECIMAL({precision}, {scale}) has more digits than Arrow's "
                               f"decimal types hold (76); read it with to_pylist()")
    try:
        if isinstance(v, BinaryArray):
            c = v.compact()
            words = words_from_byte_array(c.offsets, c.data, width)
        elif f.physical_type == PT_FLBA:
            words = words_from_big_endian(np.asarray(v).reshape(n, f.type_length or 0), width)
        else:
            words = words_from_ints(np.asarray(v), width)
    except DecimalOverflow:
        raise UnsupportedError(f"column {f.name!r}: a DECIMAL({precision}, {scale}) value needs more than the "
                               f"{width} bytes of Arrow's decimal{8 * width}") from None
    typ = pa.decimal128(precision, scale) if width == 16 else pa.decimal256(precision, scale)
    return pa.Array.from_buffers(typ, n, [validity, pa.py_buffer(words)], null_count=col.null_count)


def _column_from_arrow(afield: Any, chunked: Any) -> Column:
    import pyarrow as pa
    import pyarrow.types as pat

    arr = chunked.combine_chunks() if hasattr(chunked, "combine_chunks") else chunked
    t = arr.type
    from .nested import arrow_type_depth, column_from_arrow, is_arrow_nested

    if is_arrow_nested(t) or pa.types.is_null(t):
        if arrow_type_depth(t) + 1 > MAX_SCHEMA_DEPTH:  # conversion recurses once per level
            raise SchemaError(f"column {afield.name!r} is nested {arrow_type_depth(t) + 1:,} levels deep; "
                              f"pqbloom reads and writes at most {MAX_SCHEMA_DEPTH}")
        return column_from_arrow(arr, afield.name, afield.nullable)
    name = afield.name
    nullable = afield.nullable
    if isinstance(t, pa.BaseExtensionType):
        return _extension_from_arrow(afield, arr)
    if pat.is_string_view(t) or pat.is_binary_view(t):  # the same values in the offsets layout
        arr = arr.cast(pa.large_string() if pat.is_string_view(t) else pa.large_binary())
        return _column_from_arrow(pa.field(name, arr.type, nullable), arr)
    if pat.is_date64(t):  # milliseconds at midnight; Parquet's DATE counts days, as pyarrow writes it
        return _column_from_arrow(pa.field(name, pa.date32(), nullable), arr.cast(pa.date32()))
    mask = arr.is_null().to_numpy(zero_copy_only=False) if arr.null_count else None
    if pat.is_string(t) or pat.is_large_string(t) or pat.is_binary(t) or pat.is_large_binary(t):
        fld = make_field(name, "string" if (pat.is_string(t) or pat.is_large_string(t)) else "binary", nullable=nullable)
        bufs = arr.buffers()
        odt = np.int64 if (pat.is_large_string(t) or pat.is_large_binary(t)) else np.int32
        offs = np.frombuffer(bufs[1], dtype=odt)[arr.offset:arr.offset + len(arr) + 1].astype(np.int64)
        data = np.frombuffer(bufs[2], dtype=np.uint8) if bufs[2] is not None else np.zeros(0, np.uint8)
        return Column(fld, BinaryArray(offs, data).compact(), mask)
    if pat.is_fixed_size_binary(t):
        fld = make_field(name, f"fixed[{t.byte_width}]", nullable=nullable)
        raw = np.frombuffer(arr.buffers()[1], np.uint8)[arr.offset * t.byte_width:(arr.offset + len(arr)) * t.byte_width]
        return Column(fld, raw.reshape(len(arr), t.byte_width), mask)
    if pat.is_decimal(t):
        return _decimal_from_arrow(name, nullable, arr, mask)
    if pat.is_timestamp(t):
        spec = f"timestamp[{t.unit}{', UTC' if t.tz is not None else ''}]"
        fld = make_field(name, spec if t.unit != "s" else spec.replace("[s", "[ms"), nullable=nullable)
        vals = arr.cast(pa.int64()).fill_null(0).to_numpy()
        if t.unit == "s":
            vals = vals * 1000
        return Column(fld, vals.astype(np.int64), mask)
    if pat.is_date32(t):
        fld = make_field(name, "date", nullable=nullable)
        return Column(fld, arr.cast(pa.int32()).fill_null(0).to_numpy().astype(np.int32), mask)
    if pat.is_time32(t) or pat.is_time64(t):
        unit = t.unit if t.unit != "s" else "ms"
        fld = make_field(name, f"time[{unit}]", nullable=nullable)
        vals = arr.cast(pa.int64() if pat.is_time64(t) else pa.int32()).fill_null(0).to_numpy()
        if t.unit == "s":
            vals = vals * 1000
        return Column(fld, vals.astype(np.int32 if fld.physical_type == PT_INT32 else np.int64), mask)
    if pat.is_boolean(t) or pat.is_integer(t) or pat.is_floating(t):
        np_vals = arr.fill_null(False if pat.is_boolean(t) else 0).to_numpy(zero_copy_only=False)
        fld = _infer_field(name, np_vals).with_nullable(nullable)
        return Column(fld, _physical_from_array(fld, np_vals), mask)
    if pat.is_dictionary(t):
        return _column_from_arrow(pa.field(name, t.value_type, nullable), arr.dictionary_decode())
    raise SchemaError(f"column {name!r}: pyarrow type {t} is not supported")


#: Arrow extension types that map to a Parquet annotation, as pyarrow writes them
_EXTENSION_ANNOTATIONS = {"arrow.uuid": "uuid", "arrow.json": "json"}


def _extension_from_arrow(afield: Any, arr: Any) -> Column:
    """An Arrow extension column: ``arrow.uuid`` becomes UUID and ``arrow.json`` JSON (as pyarrow writes
    them); any other extension type (``arrow.bool8``, ``arrow.opaque``, ...) is written as its storage type
    without an annotation, which is also what pyarrow writes for those."""
    import pyarrow as pa

    t = arr.type
    storage = _column_from_arrow(pa.field(afield.name, t.storage_type, afield.nullable), arr.storage)
    spec = _EXTENSION_ANNOTATIONS.get(t.extension_name)
    if spec is None:
        return storage
    fld = make_field(afield.name, spec, nullable=storage.field.nullable)
    if fld.physical_type != storage.field.physical_type or fld.type_length != storage.field.type_length:
        raise SchemaError(f"column {afield.name!r}: {t.extension_name} over {t.storage_type} has no Parquet mapping")
    return Column(fld, storage.values, storage.mask)


def _decimal_from_arrow(name: str, nullable: bool, arr: Any, mask: np.ndarray | None) -> Column:
    """An Arrow decimal column as DECIMAL(p, s) in the physical type pqbloom picks for p (INT32 up to 9
    digits, INT64 up to 18, else the narrowest FIXED_LEN_BYTE_ARRAY), converted with numpy."""
    from .decimals import DecimalOverflow, big_endian_from_words, ints_from_words

    t = arr.type
    fld = make_field(name, f"decimal({t.precision}, {t.scale})", nullable=nullable)
    w = t.byte_width
    n = len(arr)
    buf = arr.buffers()[1]
    words = (np.frombuffer(buf, np.uint8)[arr.offset * w:(arr.offset + n) * w] if buf is not None
             else np.zeros(0, np.uint8)).reshape(n, w)
    if mask is not None:  # null slots may hold anything
        words = words.copy()
        words[mask] = 0
    try:
        if fld.physical_type in (PT_INT32, PT_INT64):
            vals: Any = ints_from_words(words, 32 if fld.physical_type == PT_INT32 else 64)
        else:
            vals = big_endian_from_words(words, fld.type_length or w)
    except DecimalOverflow:
        raise SchemaError(f"column {name!r}: a value has more digits than {t} declares") from None
    return Column(fld, vals, mask)
