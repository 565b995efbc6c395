"""The Spark schema the data source reports: the first data file's Arrow schema as Spark DDL, plus Hive
partition columns (``long`` when every value is an integer, else ``string``)."""

from __future__ import annotations

import os
from collections.abc import Container, Mapping, Sequence
from typing import TYPE_CHECKING

from ..api import ParquetFile
from ..errors import UnsupportedError
from ..format import T
from ..scan.dataset import discover, partition_types, partition_value
from .common import name_list, open_file

if TYPE_CHECKING:
    import pyarrow as pa

#: a data file's Hive partition values, typed (``long`` keys as int; None for null)
PartitionValues = dict[str, int | str | None]

__all__ = ["PartitionValues", "arrow_to_ddl", "columns_option", "discover_files", "file_arrow_schema", "spark_schema",
           "spark_types", "without_extensions"]


def arrow_to_ddl(t: pa.DataType) -> str:
    """The Spark DDL type (``"long"``, ``"array<string>"``...) of Arrow type ``t``; UnsupportedError when Spark
    has none."""
    import pyarrow as pa

    if pa.types.is_boolean(t):
        return "boolean"
    if pa.types.is_int8(t):
        return "byte"
    if pa.types.is_int16(t) or pa.types.is_uint8(t):
        return "short"
    if pa.types.is_int32(t) or pa.types.is_uint16(t):
        return "int"
    if pa.types.is_int64(t) or pa.types.is_uint32(t):
        return "long"
    if pa.types.is_uint64(t):
        return "decimal(20,0)"
    if pa.types.is_float16(t) or pa.types.is_float32(t):
        return "float"
    if pa.types.is_float64(t):
        return "double"
    if pa.types.is_string(t) or pa.types.is_large_string(t):
        return "string"
    if pa.types.is_binary(t) or pa.types.is_large_binary(t) or pa.types.is_fixed_size_binary(t):
        return "binary"
    if pa.types.is_date(t):
        return "date"
    if pa.types.is_timestamp(t):
        return "timestamp" if t.tz is not None else "timestamp_ntz"
    if pa.types.is_decimal(t):
        return f"decimal({t.precision},{t.scale})"
    if pa.types.is_list(t) or pa.types.is_large_list(t) or pa.types.is_fixed_size_list(t):
        return f"array<{arrow_to_ddl(t.value_type)}>"
    if pa.types.is_map(t):
        return f"map<{arrow_to_ddl(t.key_type)},{arrow_to_ddl(t.item_type)}>"
    if pa.types.is_struct(t):
        return "struct<" + ",".join(f"`{t.field(i).name}`:{arrow_to_ddl(t.field(i).type)}"
                                    for i in range(t.num_fields)) + ">"
    if pa.types.is_null(t):
        return "void"
    raise UnsupportedError(f"no Spark type for Arrow type {t}")


def without_extensions(t: pa.DataType) -> pa.DataType:
    """``t`` with Arrow extension types (arrow.uuid, arrow.json, as ``to_arrow()`` gives them) replaced by
    their storage types, all the way down: Spark takes the storage (binary, string)."""
    import pyarrow as pa

    if isinstance(t, pa.BaseExtensionType):
        return without_extensions(t.storage_type)
    if pa.types.is_struct(t):
        return pa.struct([t.field(i).with_type(without_extensions(t.field(i).type)) for i in range(t.num_fields)])
    if pa.types.is_map(t):
        return pa.map_(t.key_field.with_type(without_extensions(t.key_type)),
                       t.item_field.with_type(without_extensions(t.item_type)))
    if pa.types.is_list(t):
        return pa.list_(t.value_field.with_type(without_extensions(t.value_type)))
    if pa.types.is_large_list(t):
        return pa.large_list(t.value_field.with_type(without_extensions(t.value_type)))
    return t


def file_arrow_schema(pf: ParquetFile, columns: Sequence[str] | None) -> pa.Schema:
    """The Arrow schema Spark gets for ``columns`` of ``pf`` (all when None): storage types for extension
    types, timestamps in microseconds (instants in UTC), every field nullable."""
    import pyarrow as pa

    sch = pf.empty_table(columns).to_arrow().schema
    fields = []
    by_name = {f.name: f for f in pf.table_schema}
    for f in sch:
        pqf = by_name.get(f.name)
        t = without_extensions(f.type)
        if pa.types.is_timestamp(t) and (t.tz is not None or getattr(pqf, "physical_type", None) == T.Type.INT96):
            t = pa.timestamp("us", tz="UTC")  # instants (INT96 as Spark writes it, or isAdjustedToUTC)
        elif pa.types.is_timestamp(t):
            t = pa.timestamp("us")
        fields.append(pa.field(f.name, t, True))
    return pa.schema(fields)


def spark_types(pf: ParquetFile, skip: Container[str]) -> dict[str, str]:
    """``{column: Spark DDL type}`` of the file's top-level columns (not those in ``skip``)."""
    return {f.name: arrow_to_ddl(f.type) for f in file_arrow_schema(pf, None) if f.name not in skip}


def spark_schema(path: str, options: Mapping[str, str] | None = None) -> str:
    """The Spark DDL schema the data source reports for ``path`` (a file or a directory)."""
    options = options or {}
    files, ptypes = discover_files(path)
    cols = columns_option(options)
    file_cols = None if cols is None else [c for c in cols if c not in ptypes]
    with open_file(files[0][0], options) as pf:
        asch = file_arrow_schema(pf, file_cols)
    parts = [f"`{f.name}` {arrow_to_ddl(f.type)}" for f in asch]
    parts += [f"`{k}` {'long' if t == 'int64' else 'string'}" for k, t in ptypes.items()
              if cols is None or k in cols]
    if cols is not None:  # keep the requested order
        order = {c: i for i, c in enumerate(cols)}
        parts.sort(key=lambda p: order[p.split("`")[1]])
    return ", ".join(parts)


def columns_option(options: Mapping[str, str]) -> list[str] | None:
    """The ``columns`` option (``"a,b"``), or None to read every column."""
    return name_list(options, "columns")


def discover_files(path: str) -> tuple[list[tuple[str, PartitionValues]], dict[str, str]]:
    """``[(file, typed partition values)]`` and ``{partition key: "int64" | "string"}`` of a file or a
    directory (Hive partitions; see :mod:`pqbloom.scan.dataset`)."""
    if os.path.isfile(path):
        return [(path, {})], {}
    if not os.path.isdir(path):
        raise FileNotFoundError(f"no such file or directory: {path!r}")
    frags = discover(path)
    if not frags:
        raise FileNotFoundError(f"no data files under {path!r}")
    ptypes = partition_types(frags)
    return [(fr.path, {k: partition_value(fr.partitions.get(k), t) for k, t in ptypes.items()}) for fr in frags], ptypes
