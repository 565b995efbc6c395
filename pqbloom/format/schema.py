"""Schema elements: the footer's flattened schema tree as format's own records.

:class:`SchemaElement` and :class:`LogicalAnnotation` hold what parquet.thrift's ``SchemaElement`` and its
``LogicalType`` union say, with plain values: :mod:`pqbloom.schema` builds its fields from them when a file
is read (:func:`schema_elements` converts the decoded structs, once per column when the footer is opened)
and flattens its fields into them when one is written (:func:`schema_structs`, for the footer's encoder).
The records keep the Thrift field names, except ``logicalType`` (``logical_type`` here); what they mean
(legacy converted types, lists and maps) is :mod:`pqbloom.schema`'s business, not this module's. They are
slotted dataclasses that nothing changes once made, not frozen ones: a frozen dataclass costs several times
as much to create, and a footer has one element per column (10,000 in a wide file).
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from .._thrift import ttypes as T

__all__ = ["SchemaElement", "LogicalAnnotation", "schema_elements", "schema_structs", "LOGICAL_KINDS"]

#: the members of the ``LogicalType`` union a record names, in the order a reader tests them (the first
#: set member wins, should a damaged file set several); LIST and MAP annotate groups
LOGICAL_KINDS = ("STRING", "ENUM", "JSON", "BSON", "UUID", "DATE", "FLOAT16", "UNKNOWN", "DECIMAL", "TIME",
                 "TIMESTAMP", "INTEGER", "VARIANT", "GEOMETRY", "GEOGRAPHY", "LIST", "MAP")

_UNIT_MEMBERS = {"ms": "MILLIS", "us": "MICROS", "ns": "NANOS"}
_UNIT_CLASSES = {"ms": T.MilliSeconds, "us": T.MicroSeconds, "ns": T.NanoSeconds}
# members without parameters: the member name -> its (empty) struct
_EMPTY_MEMBERS = {"STRING": T.StringType, "ENUM": T.EnumType, "JSON": T.JsonType, "BSON": T.BsonType,
                  "UUID": T.UUIDType, "DATE": T.DateType, "FLOAT16": T.Float16Type, "UNKNOWN": T.NullType,
                  "LIST": T.ListType, "MAP": T.MapType}


@dataclass(slots=True, unsafe_hash=True)  # hashed as a key of the writer's cache: never changed once made
class LogicalAnnotation:
    """A ``LogicalType`` union: the member set (``kind``, one of :data:`LOGICAL_KINDS`; None for a member
    this reader does not know) and its parameters. ``unit`` is ``"ms"``, ``"us"`` or ``"ns"`` (None for a
    TIME or TIMESTAMP whose unit is unknown). ``is_list`` / ``is_map``: whether the LIST / MAP member is set
    (even beside another one)."""

    kind: str | None
    unit: str | None = None
    utc: bool = False
    precision: int | None = None
    scale: int | None = None
    bit_width: int | None = None
    signed: bool = True
    version: int | None = None
    crs: str | None = None
    algorithm: int | None = None
    is_list: bool = False
    is_map: bool = False


@dataclass(slots=True)
class SchemaElement:
    """One element of the footer's schema: a group (``num_children`` > 0, or no ``type``) or a leaf. Every
    field is as stored, None when absent (a damaged file may hold values of any type here: the schema layer
    checks them)."""

    name: Any
    type: int | None = None
    type_length: int | None = None
    repetition_type: int | None = None
    num_children: int | None = None
    converted_type: int | None = None
    scale: int | None = None
    precision: int | None = None
    field_id: int | None = None
    logical_type: LogicalAnnotation | None = None


# -- read: structs -> records ----------------------------------------------------------------------------

#: the annotations without parameters (and a lone LIST or MAP), one record each
_SHARED = {k: LogicalAnnotation(k) for k in _EMPTY_MEMBERS if k not in ("LIST", "MAP")}
_SHARED["LIST"] = LogicalAnnotation("LIST", is_list=True)
_SHARED["MAP"] = LogicalAnnotation("MAP", is_map=True)


def _unit(u: Any) -> str | None:
    if u is None:
        return None
    if u.MILLIS is not None:
        return "ms"
    if u.MICROS is not None:
        return "us"
    if u.NANOS is not None:
        return "ns"
    return None


def _annotation(lt: Any) -> LogicalAnnotation:
    """The record of a decoded ``LogicalType`` union."""
    is_list, is_map = lt.LIST is not None, lt.MAP is not None
    for kind in LOGICAL_KINDS:
        member = getattr(lt, kind)
        if member is None:
            continue
        shared = _SHARED.get(kind)
        if shared is not None and shared.is_list == is_list and shared.is_map == is_map:
            return shared  # one record for every column annotated so (records are never changed)
        if kind == "DECIMAL":
            return LogicalAnnotation(kind, precision=member.precision, scale=member.scale, is_list=is_list,
                                     is_map=is_map)
        if kind in ("TIME", "TIMESTAMP"):
            return LogicalAnnotation(kind, unit=_unit(member.unit), utc=bool(member.isAdjustedToUTC),
                                     is_list=is_list, is_map=is_map)
        if kind == "INTEGER":
            return LogicalAnnotation(kind, bit_width=member.bitWidth, signed=bool(member.isSigned), is_list=is_list,
                                     is_map=is_map)
        if kind == "VARIANT":
            return LogicalAnnotation(kind, version=member.specification_version, is_list=is_list, is_map=is_map)
        if kind == "GEOMETRY":
            return LogicalAnnotation(kind, crs=member.crs, is_list=is_list, is_map=is_map)
        if kind == "GEOGRAPHY":
            return LogicalAnnotation(kind, crs=member.crs, algorithm=member.algorithm, is_list=is_list,
                                     is_map=is_map)
        return LogicalAnnotation(kind, is_list=is_list, is_map=is_map)
    return LogicalAnnotation(None)


def schema_elements(structs: Sequence[Any]) -> list[SchemaElement]:
    """The records of a decoded footer's ``schema`` list (one per element, in order)."""
    out: list[SchemaElement] = []
    append = out.append
    record = SchemaElement
    for el in structs:  # once per column of the file: plain attribute reads
        lt = el.logicalType
        append(record(el.name, el.type, el.type_length, el.repetition_type, el.num_children, el.converted_type,
                      el.scale, el.precision, el.field_id, None if lt is None else _annotation(lt)))
    return out


# -- write: records -> structs ---------------------------------------------------------------------------

@functools.lru_cache(maxsize=256)
def _logical_struct(a: LogicalAnnotation) -> Any:
    """The ``LogicalType`` struct of an annotation (one per distinct annotation: the encoder never changes
    a struct, so elements share it)."""
    k = a.kind
    if k in _EMPTY_MEMBERS:
        return T.LogicalType(**{k: _EMPTY_MEMBERS[k]()})
    if k == "DECIMAL":
        return T.LogicalType(DECIMAL=T.DecimalType(scale=a.scale, precision=a.precision))
    if k in ("TIME", "TIMESTAMP"):
        unit = None if a.unit is None else T.TimeUnit(**{_UNIT_MEMBERS[a.unit]: _UNIT_CLASSES[a.unit]()})
        cls = T.TimeType if k == "TIME" else T.TimestampType
        return T.LogicalType(**{k: cls(isAdjustedToUTC=a.utc, unit=unit)})
    if k == "INTEGER":
        return T.LogicalType(INTEGER=T.IntType(bitWidth=a.bit_width, isSigned=a.signed))
    if k == "VARIANT":
        return T.LogicalType(VARIANT=T.VariantType(specification_version=a.version))
    if k == "GEOMETRY":
        return T.LogicalType(GEOMETRY=T.GeometryType(crs=a.crs))
    if k == "GEOGRAPHY":
        return T.LogicalType(GEOGRAPHY=T.GeographyType(crs=a.crs, algorithm=a.algorithm))
    raise ValueError(f"no LogicalType member {k!r}")


def schema_structs(elements: Sequence[SchemaElement]) -> list[Any]:
    """The footer's ``schema`` list (``SchemaElement`` structs) of the records ``elements``."""
    out: list[Any] = []
    for el in elements:
        lt = el.logical_type
        out.append(T.SchemaElement(name=el.name, type=el.type, type_length=el.type_length,
                                   repetition_type=el.repetition_type, num_children=el.num_children,
                                   converted_type=el.converted_type, scale=el.scale, precision=el.precision,
                                   field_id=el.field_id, logicalType=None if lt is None else _logical_struct(lt)))
    return out
