"""In-memory tables: columns of physical values (:mod:`pqbloom.table.column`) plus the metadata and Arrow
types that go with them, and conversions from and to Python values, numpy, pandas and pyarrow, so that
the writer and reader only ever see physical arrays.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import numpy as np

from .. import arrow_c
from ..arrays import BinaryArray
from ..errors import ColumnNotFoundError, SchemaError
from ..schema import Schema, make_field
from .arrow import apply_arrow_type, arrow_column, hinted_pylist
from .arrow_c_import import is_arrow_c, read_arrow_c
from .arrow_c_protocol import table_array_capsules, table_schema_capsule, table_stream_capsule
from .arrow_schema import ArrowField, ArrowSchema, duration, from_pyarrow, schema_hints
from .build import as_durations, column_from_values, looks_nested, nested_column
from .column import Column, check_maps_as_pydicts, slice_bounds
from .outputs import arrow_field
from .pandas import columns_from_pandas, dataframe
from .polars_frames import have_pyarrow, polars_columns

__all__ = ["Table"]


class Table:
    """A small columnar table: ``num_rows``, ``column_names``, ``column(name)``, conversions.

    ``metadata`` is the key-value metadata that goes with the data (pandas' ``"pandas"`` entry, a
    file's footer entries); ``arrow_schema`` the Arrow types the data came with, where they say more
    than the Parquet schema (time zones, durations, categoricals: see :mod:`pqbloom.table.arrow_schema`).
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
            durations = as_durations(name, values) if f is None else None
            if durations is not None:  # INT64 counts, with the Arrow type that says what they count
                values, unit = durations
                f = make_field(name, "int64")
                hints.append(ArrowField(name, duration(unit)))
            elif f is None and not isinstance(values, (Column, BinaryArray)) and looks_nested(values):
                col, hint = nested_column(name, values)  # durations inside: the Arrow type says so too
                if hint is not None:
                    hints.append(hint)
                cols.append(col)
                continue
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
        columns, metadata, arrow_schema = columns_from_pandas(df, schema, preserve_index)
        return cls(columns, metadata, arrow_schema)

    @classmethod
    def from_polars(cls, df: Any, use_arrow: bool | None = None) -> Table:
        """Convert a polars DataFrame: through ``df.to_arrow()`` when pyarrow is installed (``use_arrow``
        None) or asked for, else through the Arrow PyCapsule interface (:meth:`from_arrow_c`, no pyarrow),
        so every type keeps its Arrow description; with ``use_arrow=False`` and no compiled
        :mod:`pqbloom.arrow_c`, column by column, with the losses :mod:`pqbloom.table.polars_frames` lists."""
        if use_arrow is None:
            use_arrow = have_pyarrow()
        if use_arrow:
            return cls.from_arrow(df.to_arrow())
        if arrow_c.AVAILABLE and is_arrow_c(df):
            return cls.from_arrow_c(df)
        return cls.from_pydict(polars_columns(df))

    @classmethod
    def from_arrow_c(cls, data: Any) -> Table:
        """Convert any object that exports a table through the Arrow PyCapsule interface
        (``__arrow_c_stream__``, else ``__arrow_c_array__`` of a struct array): a polars DataFrame, a DuckDB
        relation, a pyarrow or arro3 table, a nanoarrow stream... Needs no pyarrow: the C structs are read by
        :mod:`pqbloom.table.arrow_c_import`, converted as :meth:`from_arrow` converts the same data, the Arrow
        types and schema metadata kept (a writer stores them, as pyarrow's does)."""
        columns, metadata, arrow_schema, num_rows = read_arrow_c(data)
        return cls(columns, metadata, arrow_schema, num_rows=num_rows)

    @classmethod
    def from_arrow(cls, table: Any) -> Table:
        cols = [arrow_column(table.schema.field(i), table.column(i)) for i in range(table.num_columns)]
        md = {k.decode("utf-8", "replace"): v.decode("utf-8", "replace") for k, v in (table.schema.metadata or {}).items()}
        return cls(cols, md, from_pyarrow(table.schema), num_rows=table.num_rows)

    @classmethod
    def coerce(cls, data: Any, schema: Schema | None = None) -> Table:
        """Accept a Table, a dict of columns, a pandas DataFrame, a pyarrow Table, a polars DataFrame
        (:meth:`from_polars`) or any other object that exports the Arrow PyCapsule interface
        (:meth:`from_arrow_c`: a DuckDB relation, an arro3 or nanoarrow table...)."""
        if isinstance(data, Table):
            return data
        if isinstance(data, Mapping):
            return cls.from_pydict(data, schema)
        mod = type(data).__module__
        if mod.startswith("pyarrow"):  # a table or batch; a reader (no columns) through the capsule interface
            return cls.from_arrow(data) if hasattr(data, "column") or not is_arrow_c(data) else cls.from_arrow_c(data)
        if mod.startswith("pandas"):
            return cls.from_pandas(data, schema)
        if mod.startswith("polars"):
            return cls.from_polars(data)
        if is_arrow_c(data):
            return cls.from_arrow_c(data)
        raise TypeError(f"cannot make a table from {type(data).__name__}")

    # -- access -----------------------------------------------------------------
    @property
    def num_rows(self) -> int:
        """Rows in the table."""
        return self._num_rows

    @property
    def num_columns(self) -> int:
        """Top-level columns in the table."""
        return len(self.columns)

    @property
    def column_names(self) -> list[str]:
        """The top-level column names, in order."""
        return [c.field.name for c in self.columns]

    def column(self, name: str | int) -> Column:
        """The column named ``name``, or at position ``name`` when it is an int."""
        if isinstance(name, int):
            return self.columns[name]
        for c in self.columns:
            if c.field.name == name:
                return c
        raise ColumnNotFoundError(f"no column {name!r}; columns are {self.column_names}")

    def __getitem__(self, name: str) -> Column:
        return self.column(name)

    def __len__(self) -> int:
        return self._num_rows

    def select(self, names: Iterable[str]) -> Table:
        """A table of the named columns, in the order given."""
        return self._like([self.column(n) for n in names], num_rows=self._num_rows)

    def slice(self, offset: int = 0, length: int | None = None) -> Table:
        """``length`` rows from row ``offset`` (to the end when None) of every column, as pyarrow's
        ``Table.slice(offset, length)``: clipped to the table's end (an offset past it gives no rows); a
        negative offset raises IndexError, a negative length ValueError."""
        start, stop = slice_bounds(self._num_rows, offset, length)
        return self._like([c.slice(start, stop - start) for c in self.columns], num_rows=stop - start)

    def take(self, idx: np.ndarray) -> Table:
        """The rows at the positions ``idx``, in that order, of every column."""
        idx = np.asarray(idx)
        n = int(np.count_nonzero(idx)) if idx.dtype == bool else len(idx)
        return self._like([c.take(idx) for c in self.columns], num_rows=n)

    @staticmethod
    def concat(tables: Sequence[Table]) -> Table:
        if not tables:
            return Table([])
        return tables[0]._like([Column.concat([t.columns[i] for t in tables]) for i in range(tables[0].num_columns)],
                               num_rows=sum(t.num_rows for t in tables))

    def to_pydict(self, *, maps_as_pydicts: str | None = None) -> dict[str, list[Any]]:
        """``{column name: list of Python values}`` (nulls as None), as pyarrow's ``to_pydict()`` gives them.
        The Arrow types of the columns (a file's ``ARROW:schema``, or the pandas or pyarrow data they came
        from) apply at any depth: timestamps of a zone come in that zone (``zoneinfo``, or a fixed offset),
        else as UTC instants; durations as ``datetime.timedelta``. Maps are lists of ``(key, value)``
        tuples, or dicts with ``maps_as_pydicts`` ``"lossy"`` or ``"strict"`` (as pyarrow's: see
        :meth:`pqbloom.table.column.NestedColumn.to_pylist`)."""
        check_maps_as_pydicts(maps_as_pydicts)
        hints = self.arrow_types()
        return {c.field.name: hinted_pylist(c, hints, maps_as_pydicts) for c in self.columns}

    def to_pylist(self, *, maps_as_pydicts: str | None = None) -> list[dict[str, Any]]:
        """One ``{column name: value}`` dict per row (values as :meth:`to_pydict` gives them)."""
        d = self.to_pydict(maps_as_pydicts=maps_as_pydicts)
        names = list(d)
        return [dict(zip(names, row)) for row in zip(*d.values())] if names else [{} for _ in range(self._num_rows)]

    def to_arrow(self) -> Any:
        """The table as a ``pyarrow.Table`` (needs pyarrow), with the stored Arrow types and metadata."""
        import pyarrow as pa

        arrays = [c.to_arrow() for c in self.columns]
        hints = self.arrow_types()
        if hints is not None:
            arrays = [apply_arrow_type(c, a, hints) for c, a in zip(self.columns, arrays)]
        fields = [arrow_field(c.field.name, a.type, c.field.nullable) for c, a in zip(self.columns, arrays)]
        if not arrays:  # rows without columns: pyarrow keeps the row count of a table that has none
            # (the metadata goes on first: replacing the schema of a column-less table loses its rows)
            holder = pa.table({"_": pa.nulls(self._num_rows)}).replace_schema_metadata(self.metadata or None)
            return holder.drop_columns(["_"])
        return pa.Table.from_arrays(arrays, schema=pa.schema(fields, metadata=self.metadata or None))

    # -- the Arrow PyCapsule interface: polars.DataFrame(t), duckdb.sql("... from t"), pyarrow.table(t)
    def __arrow_c_schema__(self) -> Any:
        """An ``arrow_schema`` PyCapsule: :meth:`to_arrow`'s schema as a struct, with the table's metadata."""
        return table_schema_capsule(self.columns, self.arrow_types(), self.metadata)

    def __arrow_c_array__(self, requested_schema: Any = None) -> tuple[Any, Any]:
        """``arrow_schema`` and ``arrow_array`` PyCapsules of the table as one struct array (a record batch)
        holding :meth:`to_arrow`'s columns; numpy buffers are shared, not copied, where Arrow's layout is
        pqbloom's (see :mod:`pqbloom.table.arrow_c_export`). Needs no pyarrow. ``requested_schema`` (a
        PyCapsule) casts the columns where it can; else :class:`~pqbloom.errors.SchemaError`."""
        return table_array_capsules(self.columns, self.arrow_types(), self.metadata, self._num_rows,
                                    requested_schema)

    def __arrow_c_stream__(self, requested_schema: Any = None) -> Any:
        """An ``arrow_array_stream`` PyCapsule of one record batch, as :meth:`__arrow_c_array__` gives it."""
        return table_stream_capsule([(self.columns, self._num_rows)], self.arrow_types(), self.metadata,
                                    requested_schema)

    def arrow_types(self) -> ArrowSchema | None:
        """The Arrow types the data came with (from pandas, pyarrow or a file's ``ARROW:schema``)."""
        return self.arrow_schema if isinstance(self.arrow_schema, ArrowSchema) else schema_hints(self.metadata)

    def to_pandas(self) -> Any:
        """A DataFrame, as ``pyarrow.Table.to_pandas()`` makes it from the same file: pandas' metadata
        restores the index, nullable and string dtypes; the Arrow types time zones, durations and
        categoricals. Without them, ints with nulls become float64 (unless that would round a value:
        then they stay exact Python ints), strings pandas' string dtype, dates and times Python objects."""
        return dataframe(self.columns, self.metadata, self.arrow_types(), self._num_rows)

    def __repr__(self) -> str:
        return f"Table({self.num_rows} rows, {self.schema!r})"

    def equals(self, other: Table) -> bool:
        """Whether both tables have the same schema and the same values, compared as :meth:`to_pydict` gives them."""
        return self.schema == other.schema and self.to_pydict() == other.to_pydict()
