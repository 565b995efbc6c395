"""The Arrow PyCapsule interface of tables and columns, out: ``__arrow_c_schema__``, ``__arrow_c_array__`` and
``__arrow_c_stream__`` (what :class:`~pqbloom.table.table.Table` and the column classes call), without pyarrow.

A table goes out as a struct array of its columns (a record batch), with the table's key-value metadata on the
struct's schema, every column as ``Table.to_arrow()`` gives it (:mod:`pqbloom.table.arrow_c_export`); a
stream holds one such batch. A column goes out as ``Column.to_arrow()`` gives it. A consumer's
``requested_schema`` (a PyCapsule of an ArrowSchema) casts each column where
:func:`~pqbloom.table.arrow_c_export.cast_node` can; otherwise :class:`~pqbloom.errors.SchemaError`.
"""

from __future__ import annotations

from typing import Any

from .. import arrow_c
from ..errors import SchemaError
from .arrow_c_export import CannotCast, Node, array_desc, cast_node, column_node, schema_desc, with_hint
from .arrow_c_types import field_of_desc
from .arrow_schema import ArrowField, ArrowSchema, ArrowType

__all__ = ["table_nodes", "table_schema_capsule", "table_array_capsules", "table_stream_capsule",
           "column_schema_capsule", "column_array_capsules", "column_stream_capsule"]


def table_nodes(columns: list[Any], hints: ArrowSchema | None) -> list[Node]:
    """The columns as ``Table.to_arrow()`` gives them: ``hints`` (the table's Arrow types) applied, each top-level
    field named and nullable as its column, without field metadata but that of the extension types pyarrow
    knows and ``to_arrow`` makes (``arrow.json``, ``arrow.uuid``: part of the type, not of the field)."""
    out = []
    for c in columns:
        natural = column_node(c)
        nd = with_hint(c, natural, hints)
        out.append(nd.renamed(c.field.name, c.field.nullable, natural.renamed("", True).field.metadata))
    return out


def _struct_field(nodes: list[Node], metadata: dict[str, str]) -> ArrowField:
    return ArrowField("", ArrowType("struct"), False, tuple(nd.field for nd in nodes),
                      metadata=tuple((str(k), str(v)) for k, v in metadata.items() if v is not None))


def _struct_desc(nodes: list[Node], num_rows: int) -> tuple[Any, ...]:
    return num_rows, 0, 0, (None,), tuple(array_desc(nd) for nd in nodes), None


def _requested(requested_schema: Any) -> ArrowField | None:
    return None if requested_schema is None else field_of_desc(arrow_c.schema_of(requested_schema))


def _cast(nd: Node, target: ArrowField, what: str) -> Node:
    try:
        return cast_node(nd, target)
    except CannotCast:
        raise SchemaError(f"{what}: cannot provide Arrow type {target.type.kind!r} (requested) for "
                          f"{nd.field.type.kind!r}") from None


def _for_request(nodes: list[Node], requested_schema: Any) -> list[Node]:
    """``nodes`` cast to a requested struct schema's fields, by position."""
    req = _requested(requested_schema)
    if req is None:
        return nodes
    if req.type.kind != "struct" or len(req.children) != len(nodes):
        raise SchemaError(f"requested schema of {len(req.children)} {req.type.kind} fields for a table of "
                          f"{len(nodes)} columns")
    return [_cast(nd, t, f"column {nd.field.name!r}") for nd, t in zip(nodes, req.children)]


def table_schema_capsule(columns: list[Any], hints: ArrowSchema | None, metadata: dict[str, str]) -> Any:
    """``Table.__arrow_c_schema__``: the struct schema of the table's columns, with its metadata."""
    return arrow_c.export_schema(schema_desc(_struct_field(table_nodes(columns, hints), metadata)))


def table_array_capsules(columns: list[Any], hints: ArrowSchema | None, metadata: dict[str, str], num_rows: int,
                         requested_schema: Any = None) -> tuple[Any, Any]:
    """``Table.__arrow_c_array__``: the table as one struct array (schema and array capsules)."""
    nodes = _for_request(table_nodes(columns, hints), requested_schema)
    return (arrow_c.export_schema(schema_desc(_struct_field(nodes, metadata))),
            arrow_c.export_array(_struct_desc(nodes, num_rows)))


def table_stream_capsule(batches: list[tuple[list[Any], int]], hints: ArrowSchema | None,
                         metadata: dict[str, str], requested_schema: Any = None) -> Any:
    """``Table.__arrow_c_stream__``: a stream of the record batches ``batches`` (each its columns and row
    count; at least one, for the schema). Every batch is converted before the stream is made, so that an
    error is raised here rather than given to the consumer mid-stream."""
    converted = [(_for_request(table_nodes(cols, hints), requested_schema), n) for cols, n in batches]
    schema = schema_desc(_struct_field(converted[0][0], metadata))
    first = schema_desc(_struct_field(converted[0][0], {}))
    for nodes, _ in converted[1:]:
        if schema_desc(_struct_field(nodes, {})) != first:
            raise SchemaError("the batches of a stream have different Arrow types")
    return arrow_c.export_stream(schema, [_struct_desc(nodes, n) for nodes, n in converted])


def _column_node(col: Any, requested_schema: Any) -> Node:
    nd = column_node(col)
    req = _requested(requested_schema)
    return nd if req is None else _cast(nd, req, f"column {col.field.name!r}")


def column_schema_capsule(col: Any) -> Any:
    """``Column.__arrow_c_schema__``: the field of ``Column.to_arrow()``'s array, named after the column."""
    return arrow_c.export_schema(schema_desc(column_node(col).field))


def column_array_capsules(col: Any, requested_schema: Any = None) -> tuple[Any, Any]:
    """``Column.__arrow_c_array__``: the column as ``Column.to_arrow()`` gives it (schema and array capsules)."""
    nd = _column_node(col, requested_schema)
    return arrow_c.export_schema(schema_desc(nd.field)), arrow_c.export_array(array_desc(nd))


def column_stream_capsule(col: Any, requested_schema: Any = None) -> Any:
    """``Column.__arrow_c_stream__``: a stream of one array, the column."""
    nd = _column_node(col, requested_schema)
    return arrow_c.export_stream(schema_desc(nd.field), [array_desc(nd)])
