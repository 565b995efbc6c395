"""A file's Parquet schema as pyarrow's ``ParquetSchema``, ``ColumnSchema`` and ``ParquetLogicalType`` show it
(``pq.read_metadata(f).schema.column(i)``, ``statistics.logical_type``).

:class:`ParquetSchema` is pqbloom's flat :class:`~pqbloom.schema.Schema` (one field per leaf, named by its
dotted path: ``names`` are the paths, where pyarrow gives each leaf's last name) with pyarrow's members:
``column(i)`` / ``schema[i]`` (a :class:`ColumnSchema`), ``to_arrow_schema()``, ``equals``. The texts
(``str(column.logical_type)``, ``str(column)``, ``converted_type``) are pyarrow's, checked against pyarrow 26.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from ..format.enums import ConvertedType, PhysicalType, name_of
from ..schema import ColumnDescriptor, Field, LogicalType, Schema

__all__ = ["ParquetLogicalType", "ColumnSchema", "ParquetSchema", "converted_type_name"]

_CONVERTED_VALUES = frozenset(m.value for m in ConvertedType)
_TIME_UNITS = {"ms": "milliseconds", "us": "microseconds", "ns": "nanoseconds"}
#: LogicalType.kind -> (pyarrow's ``ParquetLogicalType.type``, its text) for the annotations without parameters
_PLAIN = {"STRING": ("STRING", "String"), "ENUM": ("ENUM", "Enum"), "JSON": ("JSON", "JSON"),
          "BSON": ("BSON", "BSON"), "UUID": ("UUID", "UUID"), "DATE": ("DATE", "Date"),
          "FLOAT16": ("FLOAT16", "Float16"), "UNKNOWN": ("UNKNOWN", "Null"), "INTERVAL": ("INTERVAL", "Interval"),
          "VARIANT": ("VARIANT", "Variant"), "GEOMETRY": ("GEOMETRY", "Geometry"),
          "GEOGRAPHY": ("GEOGRAPHY", "Geography")}


def _flag(b: bool) -> str:
    return "true" if b else "false"


class ParquetLogicalType:
    """A column's logical type as pyarrow's ``ParquetLogicalType``: ``type`` (``"STRING"``, ``"INT"``,
    ``"TIMESTAMP"``, ``"NONE"``...), ``str()`` (``"Int(bitWidth=8, isSigned=true)"``) and ``to_json()``."""

    __slots__ = ("_lt", "_undefined")

    def __init__(self, lt: LogicalType | None, undefined: bool = False) -> None:
        self._lt = lt
        #: the footer's annotation is a LogicalType member newer than pqbloom (pyarrow: "Undefined")
        self._undefined = undefined and lt is None

    @classmethod
    def of(cls, desc: ColumnDescriptor) -> ParquetLogicalType:
        """The logical type of leaf ``desc``."""
        stored = desc.element.logical_type
        return cls(desc.logical_type, stored is not None and stored.kind is None)

    @property
    def type(self) -> str:
        """The annotation's kind, as pyarrow names it."""
        lt = self._lt
        if lt is None:
            return "UNDEFINED" if self._undefined else "NONE"
        if lt.kind == "INTEGER":
            return "INT"
        return _PLAIN[lt.kind][0] if lt.kind in _PLAIN else lt.kind

    def _parts(self) -> tuple[str, list[tuple[str, Any]]]:
        lt = self._lt
        if lt is None:
            return ("Undefined" if self._undefined else "None"), []
        k = lt.kind
        if k == "INTEGER":
            return "Int", [("bitWidth", lt.bit_width), ("isSigned", lt.signed)]
        if k == "DECIMAL":
            return "Decimal", [("precision", lt.precision), ("scale", lt.scale)]
        if k == "TIME":
            return "Time", [("isAdjustedToUTC", lt.utc), ("timeUnit", _TIME_UNITS.get(lt.unit or "", lt.unit))]
        if k == "TIMESTAMP":
            return "Timestamp", [("isAdjustedToUTC", lt.utc), ("timeUnit", _TIME_UNITS.get(lt.unit or "", lt.unit)),
                                 ("is_from_converted_type", lt.legacy), ("force_set_converted_type", False)]
        return (_PLAIN[k][1] if k in _PLAIN else k.title()), []

    def __str__(self) -> str:
        name, params = self._parts()
        if not params:
            return name
        shown = ", ".join(f"{k}={_flag(v) if isinstance(v, bool) else v}" for k, v in params)
        return f"{name}({shown})"

    def __repr__(self) -> str:
        return f"<pqbloom.ParquetLogicalType: {self}>"

    def to_json(self) -> str:
        """The annotation as pyarrow's ``to_json()`` gives it (``{"Type":"Int","bitWidth":8,...}``)."""
        name, params = self._parts()
        return json.dumps({"Type": name, **dict(params)}, separators=(",", ":"))

    def __eq__(self, other: object) -> bool:
        return isinstance(other, ParquetLogicalType) and str(self) == str(other)

    def __hash__(self) -> int:
        return hash(str(self))


def _implied_converted(lt: LogicalType) -> str:
    """The ConvertedType a LogicalType implies, as parquet-cpp derives it (``LogicalType::ToConvertedType``):
    none for times and timestamps not adjusted to UTC, nanoseconds, UUID, FLOAT16 and the newer types."""
    k = lt.kind
    if k == "INTEGER":
        return f"{'' if lt.signed else 'U'}INT_{lt.bit_width}"
    if k in ("TIME", "TIMESTAMP"):
        unit = {"ms": "MILLIS", "us": "MICROS"}.get(lt.unit or "")
        return f"{k}_{unit}" if lt.utc and unit else "NONE"
    return {"STRING": "UTF8", "ENUM": "ENUM", "DECIMAL": "DECIMAL", "DATE": "DATE", "JSON": "JSON",
            "BSON": "BSON", "INTERVAL": "INTERVAL"}.get(k, "NONE")


def converted_type_name(desc: ColumnDescriptor) -> str:
    """The leaf's legacy ``ConvertedType`` as pyarrow names it (``"NONE"`` when it has none): the one its
    LogicalType implies when the footer gives one (as parquet-cpp reads it, whatever is stored beside it),
    else the stored one."""
    lt = desc.logical_type
    if lt is not None and not lt.legacy:
        return _implied_converted(lt)
    if lt is None and desc.element.logical_type is not None and desc.element.logical_type.kind is None:
        return "UNKNOWN"  # a LogicalType member newer than pqbloom, as parquet-cpp names what it implies
    ct = desc.element.converted_type
    if ct is None:
        return "NONE"
    return ConvertedType(ct).name if ct in _CONVERTED_VALUES else "UNKNOWN"  # NA (24), or newer than pqbloom


class ColumnSchema:
    """One leaf column of the Parquet schema, as pyarrow's ``ColumnSchema``."""

    __slots__ = ("_desc",)

    def __init__(self, desc: ColumnDescriptor) -> None:
        self._desc = desc

    @property
    def name(self) -> str:
        """The leaf's own name (the last part of its path)."""
        return self._desc.path[-1] if self._desc.path else ""

    @property
    def path(self) -> str:
        """The leaf's dotted path."""
        return self._desc.dotted_path

    @property
    def max_definition_level(self) -> int:
        return self._desc.max_definition_level

    @property
    def max_repetition_level(self) -> int:
        return self._desc.max_repetition_level

    @property
    def physical_type(self) -> str:
        """The physical type's name (``"INT64"``...)."""
        return name_of(PhysicalType, self._desc.physical_type) or str(self._desc.physical_type)

    @property
    def logical_type(self) -> ParquetLogicalType:
        return ParquetLogicalType.of(self._desc)

    @property
    def converted_type(self) -> str:
        return converted_type_name(self._desc)

    @property
    def length(self) -> int:
        """The width of a FIXED_LEN_BYTE_ARRAY leaf (0 for other types)."""
        return self._desc.type_length or 0

    @property
    def precision(self) -> int:
        """A decimal's precision (-1 for other types)."""
        lt = self._desc.logical_type
        return lt.precision if lt is not None and lt.kind == "DECIMAL" and lt.precision is not None else -1

    @property
    def scale(self) -> int:
        """A decimal's scale (-1 for other types)."""
        lt = self._desc.logical_type
        return (lt.scale or 0) if lt is not None and lt.kind == "DECIMAL" else -1

    @property
    def field(self) -> Field:
        """pqbloom's field of the leaf."""
        return self._desc.field

    def equals(self, other: ColumnSchema) -> bool:
        """Whether both describe the same leaf (path, types, levels)."""
        return isinstance(other, ColumnSchema) and str(self) == str(other) and self.field == other.field

    def __eq__(self, other: object) -> bool:
        return isinstance(other, ColumnSchema) and self.equals(other)

    def __hash__(self) -> int:
        return hash(self.path)

    def __str__(self) -> str:
        converted = self.converted_type
        if converted == "DECIMAL":
            converted = f"DECIMAL({self.precision}, {self.scale})"
        elif self.physical_type == "FIXED_LEN_BYTE_ARRAY":
            converted = f"FIXED_LEN_BYTE_ARRAY(length={self.length})"
        return (f"<ParquetColumnSchema>\n  name: {self.name}\n  path: {self.path}\n"
                f"  max_definition_level: {self.max_definition_level}\n"
                f"  max_repetition_level: {self.max_repetition_level}\n  physical_type: {self.physical_type}\n"
                f"  logical_type: {self.logical_type}\n  converted_type (legacy): {converted}")

    __repr__ = __str__


class ParquetSchema(Schema):
    """The flat schema of a file (one field per leaf, named by its dotted path) with pyarrow's
    ``ParquetSchema`` members: :meth:`column`, ``schema[i]``, :meth:`to_arrow_schema`, :meth:`equals`."""

    def __init__(self, leaves: list[ColumnDescriptor], arrow_schema: Callable[[], Any]) -> None:
        super().__init__([c.field for c in leaves])
        self._leaves = leaves
        self._arrow_schema = arrow_schema

    def column(self, i: int) -> ColumnSchema:
        """The ``i``-th leaf column."""
        if not -len(self._leaves) <= i < len(self._leaves):
            raise IndexError(f"column {i} out of range: the schema has {len(self._leaves)} columns")
        return ColumnSchema(self._leaves[i])

    def __getitem__(self, i: int) -> ColumnSchema:
        return self.column(i)

    def to_arrow_schema(self) -> Any:
        """The ``pyarrow.Schema`` pyarrow reads for the file (``ParquetFile.schema_arrow``; needs pyarrow)."""
        return self._arrow_schema()

    def equals(self, other: Any, check_metadata: bool = False) -> bool:
        """Whether ``other`` (a ParquetSchema) has the same leaves, as pyarrow's ``ParquetSchema.equals``."""
        if isinstance(other, ParquetSchema):
            return [str(self.column(i)) for i in range(len(self))] == [str(other.column(i)) for i in range(len(other))]
        return super().equals(other, check_metadata)
