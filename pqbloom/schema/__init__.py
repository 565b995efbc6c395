"""Schemas: fields with physical and logical types (:mod:`~pqbloom.schema.fields`), and the schema as a
tree: its file schema elements, leaf columns and logical tree (:mod:`~pqbloom.schema.tree`).

:class:`PhysicalType` is the format's enumeration, re-exported for code above the file layer that
compares a field's physical type (the filter engine imports nothing of :mod:`pqbloom.format`)."""

from ..format.enums import PhysicalType
from .arrow_face import set_arrow_conversion
from .fields import (
    GROUP_ANNOTATIONS,
    MAX_SCHEMA_DEPTH,
    Field,
    LogicalType,
    NestedField,
    check_field_depth,
    decimal_flba_width,
    make_field,
    nested_field,
    parse_type,
)
from .tree import (
    ColumnDescriptor,
    LNode,
    Schema,
    build_tree,
    check_writable,
    has_leaves,
    leaves_from_elements,
    repeated_def_levels,
)

__all__ = ["PhysicalType", "LogicalType", "Field", "NestedField", "Schema", "ColumnDescriptor", "parse_type", "make_field",
           "nested_field", "decimal_flba_width", "MAX_SCHEMA_DEPTH", "GROUP_ANNOTATIONS", "check_field_depth",
           "leaves_from_elements", "LNode", "build_tree", "repeated_def_levels", "has_leaves", "check_writable", "set_arrow_conversion"]
