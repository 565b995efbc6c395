"""The Spark schema the data source reports: the first data file's Arrow schema as Spark DDL, plus Hive
partition columns typed as Spark's own reader types integer keys (``int`` when every value fits 32 bits,
``long`` when 64 bits; ``void`` when every value is null), else ``string`` (:func:`partition_spark_types`).

The types are those Spark's built-in Parquet reader gives the same file: unsigned integers widen
(UINT_8 -> short, UINT_16 -> int, UINT_32 -> long, UINT_64 -> decimal(20,0)), INT96 and
isAdjustedToUTC timestamps are instants (``timestamp``), others ``timestamp_ntz``, all in
microseconds, at any depth. TIMESTAMP(NANOS) Spark refuses ("Illegal Parquet type") unless
``spark.sql.legacy.parquet.nanosAsLong`` reads it as its raw ``long``: the data source refuses it at
``load()`` too, unless the ``nanos_as_long`` option asks for the same ``long``. Every field is
nullable, at every depth, as Spark's file sources declare them.
"""

from __future__ import annotations

import os
from collections.abc import Container, Mapping, Sequence
from typing import TYPE_CHECKING

from ..api import ParquetFile
from ..datasets import discover, partition_types, partition_value
from ..errors import UnsupportedError
from ..schema import Field, NestedField, PhysicalType
from .common import flag, name_list, open_file, option

if TYPE_CHECKING:
    import pyarrow as pa

#: a data file's Hive partition values, typed (``long`` keys as int; None for null)
PartitionValues = dict[str, int | str | None]

__all__ = ["PartitionValues", "arrow_to_ddl", "columns_option", "discover_files", "file_arrow_schema",
           "nanos_as_long_option", "partition_spark_types", "spark_schema", "spark_arrow_type", "spark_types", "stored_fields"]

_INT32 = (-(1 << 31), (1 << 31) - 1)


def _quote(name: str) -> str:
    """A column or field name as a Spark DDL identifier (backticks, a backtick doubled)."""
    return "`" + name.replace("`", "``") + "`"


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
        return "struct<" + ",".join(f"{_quote(t.field(i).name)}:{arrow_to_ddl(t.field(i).type)}"
                                    for i in range(t.num_fields)) + ">"
    if pa.types.is_null(t):
        return "void"
    raise UnsupportedError(f"no Spark type for Arrow type {t}")


def nanos_as_long_option(options: Mapping[str, str]) -> bool:
    """The ``nanos_as_long`` read option: TIMESTAMP(NANOS) columns as their raw ``long`` (nanoseconds
    since the epoch), as Spark's ``spark.sql.legacy.parquet.nanosAsLong`` reads them; off by default."""
    return flag(option(options, "nanos_as_long"), False)


def _children(f: Field | None, n: int) -> list[Field | None]:
    """The ``n`` child fields of ``f`` in order (Nones when ``f`` is not a nested field with ``n`` children)."""
    if isinstance(f, NestedField) and len(f.children) == n:
        return list(f.children)
    return [None] * n


def spark_arrow_type(t: pa.DataType, f: Field | None, *, nanos_as_long: bool, column: str) -> pa.DataType:
    """Arrow type ``t`` (of Parquet field ``f``, column ``column``) as Spark's Parquet reader types it, at
    every depth: storage types for extension types, timestamps in microseconds (INT96 and
    isAdjustedToUTC as UTC instants), TIMESTAMP(NANOS) as int64 with ``nanos_as_long`` (else
    UnsupportedError, as Spark refuses them), every child field nullable."""
    import pyarrow as pa

    if isinstance(t, pa.BaseExtensionType):
        return spark_arrow_type(t.storage_type, f, nanos_as_long=nanos_as_long, column=column)
    if pa.types.is_timestamp(t):
        if f is not None and f.physical_type == PhysicalType.INT96:
            return pa.timestamp("us", tz="UTC")  # INT96 is an instant, as Spark writes and reads it
        lt = f.logical_type if f is not None else None
        # the file's own type decides (an ARROW:schema hint may say ns where the file holds micros)
        unit, utc = (lt.unit, lt.utc) if lt is not None and lt.kind == "TIMESTAMP" else (t.unit, t.tz is not None)
        if unit == "ns":
            if nanos_as_long:
                return pa.int64()
            raise UnsupportedError(
                f"pqbloom data source: column {column!r} is a TIMESTAMP(NANOS) column, which Spark's own Parquet "
                f"reader refuses too (Illegal Parquet type). Read it as long (nanoseconds since the epoch, as "
                f"spark.sql.legacy.parquet.nanosAsLong does) with .option(\"nanos_as_long\", \"true\"), or leave "
                f"it out with the columns option")
        return pa.timestamp("us", tz="UTC") if utc else pa.timestamp("us")

    def sub(child: pa.DataType, cf: Field | None) -> pa.DataType:
        return spark_arrow_type(child, cf, nanos_as_long=nanos_as_long, column=column)

    if pa.types.is_list(t) or pa.types.is_large_list(t) or pa.types.is_fixed_size_list(t):
        (ef,) = _children(f, 1)
        return pa.list_(sub(t.value_type, ef))
    if pa.types.is_map(t):
        kf, vf = _children(f, 2)
        return pa.map_(sub(t.key_type, kf), sub(t.item_type, vf))
    if pa.types.is_struct(t):
        kids = _children(f, t.num_fields)
        return pa.struct([pa.field(t.field(i).name, sub(t.field(i).type, kids[i]), True)
                          for i in range(t.num_fields)])
    return t


def stored_fields(pf: ParquetFile) -> dict[str, Field]:
    """The file's top-level fields as stored, by name: ``table_schema`` shows INT96 leaves as the local
    timestamps the data source reads them as, where Spark takes them as instants."""
    return {f.name: f for f in pf.stored_fields}


def file_arrow_schema(pf: ParquetFile, columns: Sequence[str] | None, *, nanos_as_long: bool = False) -> pa.Schema:
    """The Arrow schema Spark gets for ``columns`` of ``pf`` (all when None), typed as
    :func:`spark_arrow_type` says, every field nullable."""
    import pyarrow as pa

    stored = stored_fields(pf)
    return pa.schema([pa.field(f.name, spark_arrow_type(f.type, stored.get(f.name), nanos_as_long=nanos_as_long,
                                                        column=f.name), True)
                      for f in pf.empty_table(columns).to_arrow().schema])


def spark_types(pf: ParquetFile, skip: Container[str], options: Mapping[str, str],
                columns: Container[str] | None = None) -> dict[str, str]:
    """``{column: Spark DDL type}`` of the file's top-level columns (those in ``columns``, all when None;
    not those in ``skip``). A column left out is not typed: it may be one Spark has no type for."""
    nanos = nanos_as_long_option(options)
    stored = stored_fields(pf)
    return {f.name: arrow_to_ddl(spark_arrow_type(f.type, stored.get(f.name), nanos_as_long=nanos, column=f.name))
            for f in pf.empty_table(None).to_arrow().schema
            if f.name not in skip and (columns is None or f.name in columns)}


def spark_schema(path: str, options: Mapping[str, str] | None = None) -> str:
    """The Spark DDL schema the data source reports for ``path`` (a file or a directory)."""
    options = options or {}
    files, ptypes = discover_files(path)
    cols = columns_option(options)
    file_cols = None if cols is None else [c for c in cols if c not in ptypes]
    with open_file(files[0][0], options) as pf:
        asch = file_arrow_schema(pf, file_cols, nanos_as_long=nanos_as_long_option(options))
    parts = [(f.name, arrow_to_ddl(f.type)) for f in asch]
    parts += [(k, t) for k, t in partition_spark_types(files, ptypes).items() if cols is None or k in cols]
    if cols is not None:  # keep the requested order
        order = {c: i for i, c in enumerate(cols)}
        parts.sort(key=lambda p: order[p[0]])
    return ", ".join(f"{_quote(n)} {t}" for n, t in parts)


def partition_spark_types(files: Sequence[tuple[str, PartitionValues]], ptypes: Mapping[str, str]) -> dict[str, str]:
    """``{partition key: Spark DDL type}`` as Spark's own reader infers them for integer and string
    keys: ``int`` when every non-null value is an integer that fits 32 bits, ``long`` when 64 bits,
    ``void`` when every value is null, else ``string`` (where Spark infers a decimal, double, date or
    timestamp type from other values, the data source keeps the text)."""
    out: dict[str, str] = {}
    for k, t in ptypes.items():
        vals = [v for _, env in files if isinstance(v := env.get(k), int)]
        if all(env.get(k) is None for _, env in files):
            out[k] = "void"
        elif t != "int64":
            out[k] = "string"
        else:
            out[k] = "int" if _INT32[0] <= min(vals) and max(vals) <= _INT32[1] else "long"
    return out


def columns_option(options: Mapping[str, str]) -> list[str] | None:
    """The ``columns`` option (``"a,b"``), or None to read every column."""
    return name_list(options, "columns")


def discover_files(path: str) -> tuple[list[tuple[str, PartitionValues]], dict[str, str]]:
    """``[(file, typed partition values)]`` and ``{partition key: "int64" | "string"}`` of a file or a
    directory (Hive partitions; see :mod:`pqbloom.datasets`)."""
    if os.path.isfile(path):
        return [(path, {})], {}
    if not os.path.isdir(path):
        raise FileNotFoundError(f"no such file or directory: {path!r}")
    frags = discover(path)
    if not frags:
        raise FileNotFoundError(f"no data files under {path!r}")
    ptypes = partition_types(frags)
    return [(fr.path, {k: partition_value(fr.partitions.get(k), t) for k, t in ptypes.items()}) for fr in frags], ptypes
