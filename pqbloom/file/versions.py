"""The ``version`` writer option: which Parquet format version's types a file uses, as pyarrow decides.

pyarrow's ``write_table(version=...)``, for the types that differ (checked against pyarrow 26's footers):

* ``"2.6"``: nanosecond timestamps stay nanoseconds (``TIMESTAMP(NANOS)``), uint32 is INT32 ``UINT_32``;
* ``"2.4"``: nanosecond timestamps are written as microseconds (an exact conversion, else an error:
  pyarrow's ``coerce_timestamps`` / ``allow_truncated_timestamps`` are not offered);
* ``"1.0"``: as ``"2.4"``, and uint32 is written as a plain INT64 (1.0 readers know no unsigned
  32-bit logical type). uint8, uint16 and uint64 keep their types, as in pyarrow.

Only top-level columns are converted; a nested field holding such a leaf under ``"1.0"``/``"2.4"`` is
refused (:class:`~pqbloom.errors.UnsupportedError`) rather than written with a type the version lacks.
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from ..errors import SchemaError, UnsupportedError
from ..format import PhysicalType
from ..schema import Field, NestedField, Schema
from ..table import Column, NestedColumn, Table

__all__ = ["footer_version", "schema_for_version", "table_for_version"]


def footer_version(version: str | None) -> int:
    """``FileMetaData.version``: 2 for ``"2.x"`` (as pyarrow writes), else 1 (pqbloom's default)."""
    return 2 if version is not None and version.startswith("2") else 1


def _is_ns(f: Field) -> bool:
    lt = f.logical_type
    return lt is not None and lt.kind == "TIMESTAMP" and lt.unit == "ns"


def _is_u32(f: Field) -> bool:
    lt = f.logical_type
    return lt is not None and lt.kind == "INTEGER" and lt.bit_width == 32 and not lt.signed


def _convert_field(f: Field, version: str) -> Field:
    lt = f.logical_type
    if lt is not None and _is_ns(f):
        return replace(f, logical_type=replace(lt, unit="us"))
    if version == "1.0" and _is_u32(f):
        return replace(f, physical_type=PhysicalType.INT64, logical_type=None)
    return f


def _needs(f: Field, version: str) -> bool:
    return _is_ns(f) or (version == "1.0" and _is_u32(f))


def _check_nested(f: NestedField, version: str) -> None:
    for leaf in Schema([f]).leaves():
        if _needs(leaf.field, version):
            raise UnsupportedError(f"column {f.name!r}: version={version!r} has no type for its leaf "
                                   f"{leaf.dotted_path!r} ({leaf.field.type_name}); write it with version='2.6'")


def schema_for_version(schema: Schema, version: str | None) -> Schema:
    """``schema`` with the types ``version`` lacks replaced as pyarrow replaces them (module doc)."""
    if version is None or version == "2.6":
        return schema
    fields: list[Field] = []
    for f in schema.fields:
        if isinstance(f, NestedField):
            _check_nested(f, version)
            fields.append(f)
        else:
            fields.append(_convert_field(f, version))
    return Schema(fields)


def table_for_version(t: Table, version: str | None) -> Table:
    """``t`` with its values converted as :func:`schema_for_version` converts its types."""
    if version is None or version == "2.6":
        return t
    cols = []
    changed = False
    for c in t.columns:
        f = c.field
        if isinstance(c, NestedColumn) or isinstance(f, NestedField) or not _needs(f, version):
            if isinstance(f, NestedField):
                _check_nested(f, version)
            cols.append(c)
            continue
        changed = True
        values = np.asarray(c.values)
        if _is_ns(f):
            live = values if c.mask is None else values[~c.mask]
            if np.any(live % 1000):
                raise SchemaError(f"column {f.name!r}: nanosecond timestamps that are not whole microseconds "
                                  f"cannot be written with version={version!r} (use version='2.6')")
            values = values // 1000
        else:  # uint32 held as int32 bits -> int64
            values = values.view(np.uint32).astype(np.int64)
        cols.append(Column(_convert_field(f, version), values, c.mask))
    return Table(cols, t.metadata, t.arrow_schema, num_rows=t.num_rows) if changed else t
