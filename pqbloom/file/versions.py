"""The writer options that choose a file's Parquet types, as pyarrow's ``write_table`` chooses them.

``version`` (checked against pyarrow 26's footers), for the types that differ:

* ``"2.6"``: nanosecond timestamps stay nanoseconds (``TIMESTAMP(NANOS)``), uint32 is INT32 ``UINT_32``;
* ``"2.4"``: nanosecond timestamps are written as microseconds (an exact conversion, else an error
  unless ``allow_truncated_timestamps``);
* ``"1.0"``: as ``"2.4"``, and uint32 is written as a plain INT64 (1.0 readers know no unsigned
  32-bit logical type). uint8, uint16 and uint64 keep their types, as in pyarrow.

and, as pyarrow's options of the same names:

* ``coerce_timestamps`` (``"ms"``, ``"us"``, ``"ns"``): every timestamp in that unit; a coarser unit that
  would drop digits raises :class:`~pqbloom.errors.SchemaError` (a ValueError, as pyarrow's
  ArrowInvalid) unless ``allow_truncated_timestamps``, which truncates toward zero as Arrow's cast does;
* ``use_deprecated_int96_timestamps`` (and ``flavor="spark"``): timestamps as INT96 (nanoseconds of the
  day and a Julian day; a zone's instants in UTC);
* ``store_decimal_as_integer``: True (and None, pqbloom's default) writes decimals of up to 18 digits as
  INT32/INT64; False as FIXED_LEN_BYTE_ARRAY, pyarrow's default;
* ``write_time_adjusted_to_utc``: TIME columns annotated ``isAdjustedToUTC=true``;
* ``flavor="spark"``: column names with one of Spark's reserved characters get ``_`` in its place.

Only top-level columns are converted; a nested field holding a leaf whose type ``version`` lacks is
refused (:class:`~pqbloom.errors.UnsupportedError`) rather than written with a type the version lacks,
and the other options leave nested leaves as they are.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace

import numpy as np

from ..errors import SchemaError, UnsupportedError
from ..format import PhysicalType
from ..schema import Field, NestedField, Schema, decimal_flba_width
from ..table import Column, NestedColumn, Table, timestamps_to_int96
from ..table.decimals import big_endian_from_words, ints_from_words, words_from_big_endian, words_from_ints
from .options import WriterOptions

__all__ = ["TypeChoices", "footer_version", "schema_for_version", "table_for_version", "spark_name"]

_UNITS = ("ms", "us", "ns")
#: characters Spark refuses in column names (pyarrow's ``_sanitized_spark_field_name``)
_SPARK_RESERVED = re.compile(r"[ ,;{}()\n\t=]")


def footer_version(version: str | None) -> int:
    """``FileMetaData.version``: 2 for ``"2.x"`` (as pyarrow writes), else 1 (``"1.0"`` and None)."""
    return 2 if version is not None and version.startswith("2") else 1


def spark_name(name: str) -> str:
    """``name`` with Spark's reserved characters replaced by ``_`` (pyarrow's ``flavor="spark"``)."""
    return _SPARK_RESERVED.sub("_", name)


@dataclass(frozen=True)
class TypeChoices:
    """What the options ask of the file's types (see the module doc)."""

    version: str | None = "2.6"
    coerce_timestamps: str | None = None
    allow_truncated_timestamps: bool = False
    int96: bool = False
    spark_names: bool = False
    decimals_as_integers: bool | None = None
    time_utc: bool = False

    @classmethod
    def of(cls, options: WriterOptions | str | None) -> TypeChoices:
        """The choices of writer ``options`` (or of a bare ``version`` string)."""
        if not isinstance(options, WriterOptions):
            return cls(version=options)
        o = options
        return cls(o.version, o.coerce_timestamps, o.allow_truncated_timestamps,
                   bool(o.use_deprecated_int96_timestamps), o.flavor == "spark", o.store_decimal_as_integer,
                   o.write_time_adjusted_to_utc)

    @property
    def changes_nothing(self) -> bool:
        return self == TypeChoices(self.version) and self.version in (None, "2.6")

    def timestamp_unit(self, unit: str) -> str:
        """The unit a timestamp of ``unit`` is written in."""
        if self.coerce_timestamps is not None:
            return self.coerce_timestamps
        if unit == "ns" and self.version in ("1.0", "2.4"):
            return "us"
        return unit


def _is_ns(f: Field) -> bool:
    lt = f.logical_type
    return lt is not None and lt.kind == "TIMESTAMP" and lt.unit == "ns"


def _is_u32(f: Field) -> bool:
    lt = f.logical_type
    return lt is not None and lt.kind == "INTEGER" and lt.bit_width == 32 and not lt.signed


def _convert_field(f: Field, c: TypeChoices) -> Field:
    lt = f.logical_type
    name = spark_name(f.name) if c.spark_names else f.name
    if name != f.name:
        f = replace(f, name=name)
    if lt is None:
        return f
    if lt.kind == "TIMESTAMP" and lt.unit in _UNITS:
        if c.int96:
            return Field(f.name, PhysicalType.INT96, None, f.nullable, None, f.field_id)
        unit = c.timestamp_unit(lt.unit)
        return f if unit == lt.unit else replace(f, logical_type=replace(lt, unit=unit))
    if lt.kind == "TIME" and c.time_utc and not lt.utc:
        return replace(f, logical_type=replace(lt, utc=True))
    if lt.kind == "DECIMAL" and lt.precision is not None:
        p = f.physical_type
        if c.decimals_as_integers is False and p in (PhysicalType.INT32, PhysicalType.INT64):
            return replace(f, physical_type=PhysicalType.FIXED_LEN_BYTE_ARRAY, type_length=decimal_flba_width(lt.precision))
        if c.decimals_as_integers and p == PhysicalType.FIXED_LEN_BYTE_ARRAY and lt.precision <= 18:
            return replace(f, physical_type=PhysicalType.INT32 if lt.precision <= 9 else PhysicalType.INT64,
                           type_length=None)
    if c.version == "1.0" and _is_u32(f):
        return replace(f, physical_type=PhysicalType.INT64, logical_type=None)
    return f


def _check_nested(f: NestedField, version: str | None) -> None:
    if version not in ("1.0", "2.4"):
        return
    for leaf in Schema([f]).leaves():
        if _is_ns(leaf.field) or (version == "1.0" and _is_u32(leaf.field)):
            raise UnsupportedError(f"column {f.name!r}: version={version!r} has no type for its leaf "
                                   f"{leaf.dotted_path!r} ({leaf.field.type_name}); write it with version='2.6'")


def schema_for_version(schema: Schema, options: WriterOptions | str | None) -> Schema:
    """``schema`` with its types (and names) as the options choose them (module doc)."""
    c = TypeChoices.of(options)
    if c.changes_nothing:
        return schema
    fields: list[Field] = []
    for f in schema.fields:
        if isinstance(f, NestedField):
            _check_nested(f, c.version)
            fields.append(replace(f, name=spark_name(f.name)) if c.spark_names else f)
        else:
            fields.append(_convert_field(f, c))
    return Schema(fields)


def _timestamps(col: Column, unit: str, target: Field, c: TypeChoices) -> np.ndarray:
    """The values of a timestamp column of ``unit`` in the type of ``target`` (another unit, or INT96)."""
    values = np.asarray(col.values, dtype=np.int64)
    live = values if col.mask is None else values[~col.mask]
    goal = "ns" if target.physical_type == PhysicalType.INT96 else target.logical_type.unit  # type: ignore[union-attr]
    shift = 3 * (_UNITS.index(goal) - _UNITS.index(unit))
    if shift > 0:
        factor = 10 ** shift
        limit = np.iinfo(np.int64).max // factor
        if live.size and (live.max() > limit or live.min() < -limit):
            raise SchemaError(f"column {col.field.name!r}: timestamps out of range of {goal} (int64)")
        values = values * factor
    elif shift < 0:
        factor = 10 ** -shift
        if not c.allow_truncated_timestamps and np.any(live % factor):
            why = f"coerce_timestamps={c.coerce_timestamps!r}" if c.coerce_timestamps else f"version={c.version!r}"
            raise SchemaError(f"column {col.field.name!r}: casting timestamps from {unit} to {goal} ({why}) would "
                              f"lose data; pass allow_truncated_timestamps=True to truncate them")
        values = np.where(values < 0, -(-values // factor), values // factor)  # toward zero, as Arrow's cast
    if target.physical_type == PhysicalType.INT96:
        return timestamps_to_int96(values)
    return values


def _decimals(col: Column, target: Field) -> np.ndarray:
    if target.physical_type == PhysicalType.FIXED_LEN_BYTE_ARRAY:
        return big_endian_from_words(words_from_ints(np.asarray(col.values), 16), target.type_length or 16)
    bits = 32 if target.physical_type == PhysicalType.INT32 else 64
    return ints_from_words(words_from_big_endian(np.asarray(col.values), 16), bits)


def _convert_column(col: Column, target: Field, c: TypeChoices) -> Column:
    f = col.field
    lt = f.logical_type
    if target.physical_type == f.physical_type and target.logical_type == lt:
        return Column(target, col.values, col.mask) if target != f else col  # renamed, or as it is
    if lt is not None and lt.kind == "TIMESTAMP" and lt.unit is not None:
        return Column(target, _timestamps(col, lt.unit, target, c), col.mask)
    if lt is not None and lt.kind == "DECIMAL":
        return Column(target, _decimals(col, target), col.mask)
    if _is_u32(f):  # uint32 held as int32 bits -> int64
        return Column(target, np.asarray(col.values).view(np.uint32).astype(np.int64), col.mask)
    return Column(target, col.values, col.mask)


def table_for_version(t: Table, options: WriterOptions | str | None) -> Table:
    """``t`` with its values converted as :func:`schema_for_version` converts its types."""
    c = TypeChoices.of(options)
    if c.changes_nothing:
        return t
    cols: list[Column] = []
    changed = False
    for col in t.columns:
        f = col.field
        if isinstance(col, NestedColumn) or isinstance(f, NestedField):
            if isinstance(f, NestedField):
                _check_nested(f, c.version)
            if c.spark_names and spark_name(f.name) != f.name:
                col = col.renamed(spark_name(f.name))
                changed = True
            cols.append(col)
            continue
        target = _convert_field(f, c)
        if target != f:
            col = _convert_column(col, target, c)
            changed = True
        cols.append(col)
    return Table(cols, t.metadata, t.arrow_schema, num_rows=t.num_rows) if changed else t
