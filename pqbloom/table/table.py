"""In-memory tables: columns of physical values (:mod:`pqbloom.table.column`) plus the metadata and Arrow
types that go with them, and conversions from and to Python values, numpy, pandas and pyarrow, so that
the writer and reader only ever see physical arrays.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from typing import Any

import numpy as np

from .. import arrow_c
from ..arrays import BinaryArray
from ..errors import ColumnNotFoundError, SchemaError
from ..schema import Field, Schema, make_field
from .arrow import apply_arrow_type, arrow_column, hinted_pylist
from .arrow_c_import import is_arrow_c, read_arrow_c
from .arrow_c_protocol import table_array_capsules, table_schema_capsule, table_stream_capsule
from .arrow_schema import ArrowField, ArrowSchema, duration, from_pyarrow, schema_hints
from .build import as_durations, column_from_values, looks_nested, nested_column
from .column import Column, check_maps_as_pydicts, column_nbytes, slice_bounds
from .outputs import arrow_field
from .pandas import columns_from_pandas, dataframe
from .pandas_meta import PANDAS_KEY
from .polars_frames import have_pyarrow, polars_columns
from .sort import sort_indices, sort_keys

__all__ = ["Table"]

#: pyarrow's ``to_pandas`` defaults of the options pqbloom passes to pyarrow when they differ
_TO_PANDAS_DEFAULTS: dict[str, Any] = {
    "categories": None, "strings_to_categorical": False, "zero_copy_only": False, "integer_object_nulls": False,
    "date_as_object": True, "timestamp_as_object": False, "maps_as_pydicts": None, "types_mapper": None,
    "coerce_temporal_nanoseconds": False}


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
        self.schema = Schema([c.field for c in self.columns], metadata,
                             arrow_hints=arrow_schema if isinstance(arrow_schema, ArrowSchema) else None)
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

    @property
    def shape(self) -> tuple[int, int]:
        """``(num_rows, num_columns)``, as pyarrow's."""
        return self._num_rows, len(self.columns)

    @property
    def nbytes(self) -> int:
        """Bytes held by the table's buffers (values, offsets, null masks; pqbloom's own arrays, so not the
        figure pyarrow gives for its Arrow buffers)."""
        return sum(column_nbytes(c) for c in self.columns)

    def get_total_buffer_size(self) -> int:
        """:attr:`nbytes` (pyarrow's name for the buffers' size, shared buffers counted once)."""
        return self.nbytes

    def field(self, name: str | int) -> Field:
        """The field of column ``name`` (or at position ``name``), as pyarrow's ``Table.field``."""
        return self.schema.field(name)

    def itercolumns(self) -> Iterator[Column]:
        """The columns, in order."""
        return iter(self.columns)

    def drop_columns(self, columns: str | Sequence[str]) -> Table:
        """The table without ``columns`` (a name or a list), as pyarrow's; KeyError names one it lacks."""
        drop = [columns] if isinstance(columns, str) else list(columns)
        missing = [c for c in drop if c not in self.column_names]
        if missing:
            raise KeyError(f"no column {missing[0]!r} to drop; columns are {self.column_names}")
        return self._like([c for c in self.columns if c.field.name not in drop], num_rows=self._num_rows)

    drop = drop_columns

    def rename_columns(self, names: Sequence[str] | Mapping[str, str]) -> Table:
        """The table with its columns renamed: a new name for each (in order), or a mapping of old name to
        new, as pyarrow's."""
        if isinstance(names, Mapping):
            new = [names.get(n, n) for n in self.column_names]
        else:
            new = list(names)
            if len(new) != len(self.columns):
                raise ValueError(f"rename_columns takes {len(self.columns)} names, not {len(new)}")
        return Table([c.renamed(n) if n != c.field.name else c for c, n in zip(self.columns, new)],
                     self.metadata, None, num_rows=self._num_rows)

    # -- pyarrow's column edits: a new table each time ----------------------------------
    def _with_columns(self, columns: list[Column], name: str, values: Any) -> Table:
        """A table of ``columns`` in which the one named ``name`` is made of ``values``; its Arrow type is
        what ``values`` carry (a pyarrow array's, or none), not a stored one of the same name."""
        if isinstance(values, Column):
            extra = Table([values.renamed(name) if values.field.name != name else values])
        elif type(values).__module__.startswith("pyarrow"):
            import pyarrow as pa

            extra = Table.from_arrow(pa.table({name: values}))
        else:
            extra = Table.from_pydict({name: values})
        columns = [extra.columns[0] if c is None else c for c in columns]
        old = self.arrow_schema.fields if self.arrow_schema is not None else ()
        new = extra.arrow_schema.fields if extra.arrow_schema is not None else ()
        hints = tuple(f for f in old if f.name != name) + tuple(new)
        meta = self.arrow_schema.metadata if self.arrow_schema is not None else ()
        return Table(columns, self.metadata, ArrowSchema(hints, meta) if hints or meta else None,
                     num_rows=self._num_rows)

    def add_column(self, i: int, field_: str | Any, column: Any) -> Table:
        """The table with ``column`` (a pqbloom column, a pyarrow array, a list or numpy array) inserted
        at position ``i``, named ``field_`` (a name or a pyarrow field), as pyarrow's."""
        name = field_ if isinstance(field_, str) else field_.name
        cols: list[Any] = list(self.columns)
        cols.insert(i, None)
        return self._with_columns(cols, name, column)

    def append_column(self, field_: str | Any, column: Any) -> Table:
        """The table with ``column`` added last (see :meth:`add_column`), as pyarrow's."""
        return self.add_column(self.num_columns, field_, column)

    def set_column(self, i: int, field_: str | Any, column: Any) -> Table:
        """The table with the column at position ``i`` replaced by ``column`` named ``field_`` (see
        :meth:`add_column`), as pyarrow's."""
        if not 0 <= i < self.num_columns:
            raise IndexError(f"column index {i} out of range for {self.num_columns} columns")
        name = field_ if isinstance(field_, str) else field_.name
        cols: list[Any] = list(self.columns)
        cols[i] = None
        return self._with_columns(cols, name, column)

    def remove_column(self, i: int) -> Table:
        """The table without the column at position ``i``, as pyarrow's."""
        if not 0 <= i < self.num_columns:
            raise IndexError(f"column index {i} out of range for {self.num_columns} columns")
        return self._like(self.columns[:i] + self.columns[i + 1:], num_rows=self._num_rows)

    def replace_schema_metadata(self, metadata: Mapping[Any, Any] | None = None) -> Table:
        """The table with its schema metadata replaced by ``metadata`` (str or bytes keys and values;
        None: none), as pyarrow's; pandas' metadata goes with the rest."""
        def text(v: Any) -> str:
            return v.decode("utf-8") if isinstance(v, bytes) else str(v)

        md = {text(k): text(v) for k, v in (metadata or {}).items()}
        hints = ArrowSchema(self.arrow_schema.fields) if self.arrow_schema is not None else None
        return Table(self.columns, md, hints, num_rows=self._num_rows)

    def drop_null(self) -> Table:
        """The rows with no null in any column, as pyarrow's."""
        keep = np.ones(self._num_rows, dtype=bool)
        for c in self.columns:
            if c.mask is not None:
                keep &= ~np.asarray(c.mask, dtype=bool)
        return self if bool(keep.all()) else self.take(np.flatnonzero(keep))

    def sort_by(self, sorting: str | Sequence[Any], null_placement: str = "at_end") -> Table:
        """The rows sorted by ``sorting`` (a column name, or a list of names and ``(name, "ascending" |
        "descending")`` pairs), as pyarrow's: stable, nulls last (``null_placement="at_start"``: first)."""
        return self.take(sort_indices(self.columns, sort_keys(sorting), null_placement))

    def filter(self, mask: Any) -> Table:
        """The rows where ``mask`` (booleans: a list, numpy or pyarrow array) is true; a null keeps no row."""
        keep = np.asarray(mask.to_numpy(zero_copy_only=False) if hasattr(mask, "to_numpy") else mask, dtype=object)
        if len(keep) != self._num_rows:
            raise ValueError(f"a mask of {len(keep)} values for a table of {self._num_rows} rows")
        return self.take(np.flatnonzero(keep == True))  # noqa: E712 - None (null) keeps no row

    def to_batches(self, max_chunksize: int | None = None) -> list[Table]:
        """The rows as tables of at most ``max_chunksize`` rows (one when None), as pyarrow's ``to_batches``:
        a pqbloom batch is a Table (``pyarrow.record_batch(batch)`` makes a pyarrow one)."""
        if max_chunksize is not None and max_chunksize <= 0:
            raise ValueError("max_chunksize must be positive")
        step = max_chunksize or max(self._num_rows, 1)
        return [self.slice(i, step) for i in range(0, self._num_rows, step)]

    def combine_chunks(self) -> Table:
        """The table itself (its columns are each one contiguous array already)."""
        return self

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

    def to_pandas(self, memory_pool: Any = None, categories: Sequence[str] | None = None,
                  strings_to_categorical: bool = False, zero_copy_only: bool = False,
                  integer_object_nulls: bool = False, date_as_object: bool = True, timestamp_as_object: bool = False,
                  use_threads: bool = True, deduplicate_objects: bool = True, ignore_metadata: bool = False,
                  safe: bool = True, split_blocks: bool = False, self_destruct: bool = False,
                  maps_as_pydicts: str | None = None, types_mapper: Callable[[Any], Any] | None = None,
                  coerce_temporal_nanoseconds: bool = False) -> Any:
        """A DataFrame, as ``pyarrow.Table.to_pandas()`` makes it from the same file: pandas' metadata
        restores the index, nullable and string dtypes; the Arrow types time zones, durations and
        categoricals. Without them, ints with nulls become float64 (unless that would round a value:
        then they stay exact Python ints), strings pandas' string dtype, dates and times Python objects.

        The options are pyarrow's. ``ignore_metadata`` (pandas' metadata is not applied: no index, the
        columns as stored) is pqbloom's own; ``memory_pool``, ``use_threads``, ``deduplicate_objects``,
        ``safe``, ``split_blocks`` and ``self_destruct`` are accepted without effect (memory and speed hints:
        the frame is the same). ``categories``, ``strings_to_categorical``, ``zero_copy_only``,
        ``integer_object_nulls``, ``date_as_object=False``, ``timestamp_as_object``, ``maps_as_pydicts``,
        ``types_mapper`` and ``coerce_temporal_nanoseconds`` convert through pyarrow (:meth:`to_arrow`, then
        pyarrow's ``to_pandas`` with them: needs pyarrow), so they give exactly pyarrow's frame."""
        del memory_pool, use_threads, deduplicate_objects, safe, split_blocks, self_destruct  # hints only
        through_arrow = {k: v for k, v in (
            ("categories", categories), ("strings_to_categorical", strings_to_categorical),
            ("zero_copy_only", zero_copy_only), ("integer_object_nulls", integer_object_nulls),
            ("date_as_object", date_as_object), ("timestamp_as_object", timestamp_as_object),
            ("maps_as_pydicts", maps_as_pydicts), ("types_mapper", types_mapper),
            ("coerce_temporal_nanoseconds", coerce_temporal_nanoseconds)) if v != _TO_PANDAS_DEFAULTS[k]}
        if through_arrow:
            return self.to_arrow().to_pandas(ignore_metadata=ignore_metadata, **through_arrow)
        metadata = {k: v for k, v in self.metadata.items() if k != PANDAS_KEY} if ignore_metadata else self.metadata
        return dataframe(self.columns, metadata, self.arrow_types(), self._num_rows)

    def __repr__(self) -> str:
        return f"Table({self.num_rows} rows, {self.schema!r})"

    def __str__(self) -> str:
        """pyarrow's text of the table when pyarrow is installed (``print(table)`` prints what it prints
        with pyarrow, a file's row groups aside: pqbloom's columns are one chunk each), else :func:`repr`."""
        try:
            return str(self.to_arrow())
        except Exception:  # noqa: BLE001 - no pyarrow, or a value it cannot hold: pqbloom's own text
            return repr(self)

    def equals(self, other: Any, check_metadata: bool = False) -> bool:
        """Whether both tables have the same schema and the same values, compared as :meth:`to_pydict` gives
        them; ``other`` may be a pyarrow table, then compared as pyarrow's ``Table.equals`` compares
        (:meth:`to_arrow`; needs pyarrow). ``check_metadata`` also compares the key-value metadata."""
        if not isinstance(other, Table):
            if type(other).__module__.startswith("pyarrow"):
                return bool(self.to_arrow().equals(other, check_metadata=check_metadata))
            return False
        if check_metadata and self.metadata != other.metadata:
            return False
        return self.schema == other.schema and self.to_pydict() == other.to_pydict()
