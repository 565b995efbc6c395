"""A Parquet schema as the ``pyarrow.Schema`` pyarrow reads for it (``pq.ParquetFile(f).schema_arrow``).

Each field's Arrow type is the one pyarrow infers from the Parquet types
(:func:`~pqbloom.table.arrow_schema.natural_field`), refined by the footer's stored ``ARROW:schema``
where pyarrow's reader takes it (time zones, durations, dictionaries, large types, field metadata:
:func:`~pqbloom.table.arrow_schema.effective_field`); a type that module cannot describe takes the
type pqbloom's tables convert to. The schema's metadata is, as pyarrow gives it, the stored Arrow
schema's own metadata when there is one, else the footer's key-value metadata. pyarrow is needed here only (an ImportError says so).
"""

from __future__ import annotations

import base64
from collections.abc import Mapping, Sequence
from typing import Any

from ..errors import SchemaError
from ..schema import Field, Schema, set_arrow_conversion
from .arrow_schema import (
    ARROW_SCHEMA_KEY,
    FIELD_ID_KEY,
    ArrowSchema,
    effective_field,
    encode_schema,
    natural_field,
    schema_hints,
)
from .build import empty_column
from .table import Table

__all__ = ["arrow_schema_of", "import_pyarrow", "cast_to_schema"]


def import_pyarrow() -> Any:
    """The pyarrow module, or an ImportError saying what needs it (pyarrow is an optional dependency)."""
    try:
        import pyarrow
    except ImportError as exc:
        raise ImportError("this needs pyarrow, an optional dependency of pqbloom: pip install pyarrow") from exc
    return pyarrow


def _fallback_field(pa: Any, f: Field) -> Any:
    """The field as pqbloom's own conversion makes it (for types the Arrow schema codec cannot describe)."""
    typ = empty_column(f).to_arrow().type
    meta = {FIELD_ID_KEY: str(f.field_id)} if f.field_id is not None else None
    return pa.field(f.name, typ, f.nullable, metadata=meta)


def arrow_schema_of(schema: Schema | Sequence[Field], metadata: Mapping[str, str | None] | None = None,
                    hints: ArrowSchema | None = None) -> Any:
    """The ``pyarrow.Schema`` pyarrow reads for a file of ``schema`` (or of these fields) whose footer holds
    the key-value ``metadata`` (which may carry an ``ARROW:schema``); ``hints``, the Arrow types the data
    came with, stand in for a stored ``ARROW:schema`` (a table's: the schema's metadata is then
    ``metadata`` as it is). Without either, the types pyarrow infers from the Parquet types alone."""
    pa = import_pyarrow()
    kv = {k: v for k, v in (metadata or {}).items()}
    given = hints
    if hints is None:
        hints = schema_hints({k: v for k, v in kv.items() if v is not None})
    fields = []
    for f in (schema.fields if isinstance(schema, Schema) else schema):
        n = natural_field(f, written=False)
        if n is None:
            fields.append(_fallback_field(pa, f))
            continue
        if hints is not None:
            n = effective_field(n, hints.field(f.name))
        raw = base64.b64decode(encode_schema(ArrowSchema((n,))))
        fields.append(pa.ipc.read_schema(pa.py_buffer(raw)).field(0))
    if given is not None:  # a table's Arrow types: its metadata is its own
        meta = {k: "" if v is None else v for k, v in kv.items() if k != ARROW_SCHEMA_KEY}
    elif hints is not None:  # pyarrow takes the stored schema's own metadata (what the writer's table had)
        meta = dict(hints.metadata)
    else:  # every footer key; a key without a value reads as an empty one
        meta = {k: "" if v is None else v for k, v in kv.items() if k != ARROW_SCHEMA_KEY}
    return pa.schema(fields, metadata=meta or None)


def cast_to_schema(table: Table, schema: Any, columns: Sequence[str] | None = None) -> Table:
    """``table`` read "with" ``schema`` (a ``pyarrow.Schema`` or a pqbloom :class:`Schema`), as pyarrow's
    ``read_table(schema=)`` reads: the schema's fields in its order (only those in ``columns`` when
    given, in that order), each cast to the schema's type, a field the data lacks all null; the
    schema's metadata. A column whose values cannot take the type, a ``columns`` name the schema
    lacks, or a non-nullable field the data lacks raise :class:`~pqbloom.errors.SchemaError`."""
    pa = import_pyarrow()
    if isinstance(schema, Schema):
        schema = schema.to_arrow()
    if not isinstance(schema, pa.Schema):
        raise TypeError(f"schema must be a pyarrow.Schema or a pqbloom Schema, not {type(schema).__name__}")
    if columns is not None:
        missing = [c for c in columns if schema.get_field_index(c) < 0]
        if missing:
            raise SchemaError(f"columns {missing} are not in the schema {schema.names}")
        schema = pa.schema([schema.field(c) for c in columns], metadata=schema.metadata)
    data = table.to_arrow()
    arrays = []
    for f in schema:
        if f.name not in data.column_names:
            if not f.nullable:
                raise SchemaError(f"the data has no column {f.name!r}, which the schema says is never null")
            arrays.append(pa.nulls(data.num_rows, f.type))
            continue
        col = data.column(f.name)
        try:
            arrays.append(col.cast(f.type))
        except (pa.ArrowInvalid, pa.ArrowNotImplementedError, pa.ArrowTypeError) as exc:
            raise SchemaError(f"column {f.name!r} ({col.type}) cannot be read as {f.type}: {exc}") from None
    return Table.from_arrow(pa.Table.from_arrays(arrays, schema=schema))


set_arrow_conversion(arrow_schema_of)
