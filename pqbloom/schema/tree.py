"""The schema as a tree: a :class:`Schema` of top-level fields, its flattening into the file's schema
elements, the leaf columns read back from them (:class:`ColumnDescriptor`), and the logical tree
(:class:`LNode`) that record shredding and assembly walk.

* :meth:`Schema.to_elements` flattens the fields depth first into the footer's schema elements (lists in
  the three-level form, maps as ``key_value`` groups); :func:`leaves_from_elements` walks a footer's elements
  into leaf descriptors, validating counts, types, annotations and depth as it goes. The elements are
  :mod:`pqbloom.format`'s records (:class:`~pqbloom.format.schema.SchemaElement`), never Thrift structs.
* :class:`LNode` is the *logical* tree of a file schema: the Parquet group/leaf elements
  interpreted with the LogicalTypes backward-compatibility rules (three-level lists, legacy
  two-level lists, unannotated repeated fields, MAP / MAP_KEY_VALUE), each node carrying the
  definition level at which it is non-null and, for lists and maps, the level at which they
  hold at least one element (:func:`build_tree`).
"""

from __future__ import annotations

import copy
from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass, replace
from dataclasses import field as dataclass_field
from typing import Any

from ..errors import CorruptFileError, SchemaError, UnsupportedError
from ..format import gc_paused
from ..format.enums import ConvertedType, FieldRepetitionType, PhysicalType, name_of
from ..format.schema import LogicalAnnotation, SchemaElement
from .arrow_face import ArrowSchemaFace
from .fields import (
    GROUP_ANNOTATIONS,
    MAX_SCHEMA_DEPTH,
    Field,
    LogicalType,
    NestedField,
    check_field_depth,
    decimal_digits,
    make_field,
    too_deep_message,
)

__all__ = ["Schema", "ColumnDescriptor", "leaves_from_elements", "malformed_annotation", "annotation_applies", "LNode",
           "build_tree", "repeated_def_levels", "has_leaves", "check_writable"]

# the valid values of the enumerations a schema element holds (this module's loops run once per column)
_REPETITIONS = frozenset(m.value for m in FieldRepetitionType)
_PHYSICAL_TYPES = frozenset(m.value for m in PhysicalType)

class Schema(ArrowSchemaFace):
    """An ordered list of top-level fields (flat :class:`Field` or :class:`NestedField`).

    ``metadata`` is the key-value metadata that goes with the data (a table's, a file's footer) and
    ``arrow_hints`` the Arrow types it came with: they take no part in comparisons (``==``), and give
    pyarrow's answers where pyarrow's ``Schema`` has members (``metadata``, ``pandas_metadata``, ``types``,
    ``field(i).type``, ``str()``: see :class:`~pqbloom.schema.arrow_face.ArrowSchemaFace`)."""

    def __init__(self, fields: list[Field], metadata: Mapping[str, str | None] | None = None, *,
                 arrow_hints: Any = None) -> None:
        names = [f.name for f in fields]
        if len(set(names)) != len(names):
            dups = sorted(n for n, k in Counter(names).items() if k > 1)
            raise SchemaError(f"duplicate column name(s) {', '.join(map(repr, dups))} among {len(names)} columns")
        self.fields = list(fields)
        self._kv = {k: v or "" for k, v in metadata.items()} if metadata else None
        self._hints = arrow_hints
        self._arrow: Any = None

    @classmethod
    def from_types(cls, types: dict[str, str], *, not_null: tuple[str, ...] | list[str] = ()) -> Schema:
        """``Schema.from_types({"id": "int64", "name": "string"}, not_null=["id"])``."""
        return cls([make_field(n, t, nullable=n not in not_null) for n, t in types.items()])

    @property
    def names(self) -> list[str]:
        """The field names, in order."""
        return [f.name for f in self.fields]

    def field(self, name: str | int) -> Field:
        """The field named ``name`` (KeyError when there is none), or at position ``name`` when it is an
        int (as pyarrow's ``Schema.field``)."""
        if isinstance(name, int):
            f = self.fields[name]
        else:
            for f in self.fields:
                if f.name == name:
                    break
            else:
                raise KeyError(name)
        if self._kv or self._hints is not None:  # its Arrow type comes from this schema's metadata and types
            f = copy.copy(f)
            object.__setattr__(f, "_schema", self)
        return f

    def __len__(self) -> int:
        return len(self.fields)

    def __iter__(self):  # type: ignore[no-untyped-def]
        return iter(self.fields)

    def __eq__(self, other: object) -> bool:
        if isinstance(other, Schema):
            return self.fields == other.fields
        if type(other).__module__.startswith("pyarrow") and type(other).__name__ == "Schema":
            return self.equals(other)  # ``table.schema == pa_schema``, as pyarrow compares schemas
        return False

    def __repr__(self) -> str:
        return "Schema(\n" + "".join(f"  {f}\n" for f in self.fields) + ")"

    def to_elements(self) -> list[SchemaElement]:
        """Flatten into the footer's schema elements: a root group, then each field depth first.

        Lists are written in the standard three-level form (``list`` / ``element``), maps as
        ``key_value`` groups holding a required ``key`` and a ``value``.
        """
        out = [SchemaElement("schema", num_children=len(self.fields))]
        for f in self.fields:
            check_field_depth(f)
            _emit(f, out, None)
        return out

    def leaves(self) -> list[ColumnDescriptor]:
        """The leaf columns this schema is written as (paths, levels, leaf ordinals)."""
        return leaves_from_elements(self.to_elements())[0]

    def leaf_paths(self) -> list[tuple[str, ...]]:
        """The path of each leaf column (a tuple of names), in file order."""
        return [d.path for d in self.leaves()]


_LIST = LogicalAnnotation("LIST", is_list=True)
_MAP = LogicalAnnotation("MAP", is_map=True)


def _emit(f: Field, out: list[SchemaElement], name: str | None, repetition: int | None = None) -> None:
    if repetition is not None:
        rep = repetition
    else:
        rep = FieldRepetitionType.OPTIONAL if f.nullable else FieldRepetitionType.REQUIRED
    nm = f.name if name is None else name
    if isinstance(f, NestedField):
        if f.kind == "struct":
            lt, ct = f.logical_type.to_annotation() if f.logical_type is not None else (None, None)
            out.append(SchemaElement(nm, repetition_type=rep, num_children=len(f.children), field_id=f.field_id,
                                     logical_type=lt, converted_type=ct))
            for c in f.children:
                _emit(c, out, None)
        elif f.kind == "list":
            out.append(SchemaElement(nm, repetition_type=rep, num_children=1, converted_type=ConvertedType.LIST,
                                     logical_type=_LIST, field_id=f.field_id))
            out.append(SchemaElement("list", repetition_type=FieldRepetitionType.REPEATED, num_children=1))
            _emit(f.children[0], out, "element")
        else:
            out.append(SchemaElement(nm, repetition_type=rep, num_children=1, converted_type=ConvertedType.MAP,
                                     logical_type=_MAP, field_id=f.field_id))
            out.append(SchemaElement("key_value", repetition_type=FieldRepetitionType.REPEATED, num_children=2))
            _emit(f.children[0], out, "key", FieldRepetitionType.REQUIRED)
            _emit(f.children[1], out, "value")
        return
    ann = f.logical_type
    lt, ct = ann.to_annotation() if ann is not None else (None, None)
    scale, precision = (ann.scale, ann.precision) if ann is not None and ann.kind == "DECIMAL" else (None, None)
    out.append(SchemaElement(nm, f.physical_type, f.type_length, rep, None, ct, scale, precision, f.field_id, lt))


@dataclass
class ColumnDescriptor:
    """A leaf column of a file schema, with its levels and path."""

    path: tuple[str, ...]
    element: SchemaElement
    max_definition_level: int
    max_repetition_level: int
    index: int  # leaf ordinal, the column ordinal used in AADs
    field: Field
    ancestors: list[SchemaElement] = dataclass_field(default_factory=list)  # from root's child down to the leaf

    @property
    def dotted_path(self) -> str:
        return ".".join(self.path)

    @property
    def physical_type(self) -> int:
        return self.field.physical_type

    @property
    def type_length(self) -> int | None:
        return self.field.type_length

    @property
    def logical_type(self) -> LogicalType | None:
        return self.field.logical_type


_BYTE_ARRAY_KINDS = frozenset(("STRING", "ENUM", "JSON", "BSON", "GEOMETRY", "GEOGRAPHY"))
_FIXED_WIDTH_KINDS = {"UUID": 16, "FLOAT16": 2, "INTERVAL": 12}


def malformed_annotation(lt: LogicalType) -> str | None:
    """What is wrong with the parameters of a logical annotation read from a file, or None.

    Arrow C++ and parquet-java refuse such a schema too (LogicalTypes.md: INTEGER has a bit
    width of 8, 16, 32 or 64; DECIMAL a precision of at least 1 and a scale within it)."""
    if lt.kind == "INTEGER" and lt.bit_width not in (8, 16, 32, 64):
        return f"INTEGER bit width {lt.bit_width} is not 8, 16, 32 or 64"
    if lt.kind == "DECIMAL":
        p, sc = lt.precision, lt.scale or 0
        if p is None or p < 1 or sc < 0 or sc > p:
            return f"DECIMAL precision {p} / scale {lt.scale} are invalid"
    return None


def annotation_applies(lt: LogicalType, ptype: int, type_length: int | None) -> bool:
    """Whether the (well-formed) annotation ``lt`` may annotate physical type ``ptype``
    (LogicalTypes.md), e.g. STRING only BYTE_ARRAY, DATE only INT32, DECIMAL(p) only a type
    that holds p digits. Readers drop a LogicalType that does not apply and read the physical
    values, as Arrow C++ does (parquet-java refuses the file); a ConvertedType-only annotation that
    does not apply makes the file corrupt, as both Arrow C++ and DuckDB say."""
    k = lt.kind
    if k in _BYTE_ARRAY_KINDS:
        return ptype == PhysicalType.BYTE_ARRAY
    if k in _FIXED_WIDTH_KINDS:
        return ptype == PhysicalType.FIXED_LEN_BYTE_ARRAY and type_length == _FIXED_WIDTH_KINDS[k]
    if k == "DATE":
        return ptype == PhysicalType.INT32
    if k == "TIME":
        return ptype == (PhysicalType.INT32 if lt.unit == "ms" else PhysicalType.INT64)
    if k == "TIMESTAMP":
        return ptype == PhysicalType.INT64
    if k == "INTEGER":
        return ptype == (PhysicalType.INT64 if lt.bit_width == 64 else PhysicalType.INT32)
    if k == "DECIMAL":
        p = lt.precision or 0
        if lt.legacy:  # Arrow C++ reads a converted DECIMAL of any precision on these types
            return ptype in (PhysicalType.INT32, PhysicalType.INT64, PhysicalType.BYTE_ARRAY,
                             PhysicalType.FIXED_LEN_BYTE_ARRAY)
        if ptype == PhysicalType.INT32:
            return p <= 9
        if ptype == PhysicalType.INT64:
            return p <= 18
        if ptype == PhysicalType.FIXED_LEN_BYTE_ARRAY:
            return type_length is not None and type_length >= 1 and p <= decimal_digits(type_length)
        return ptype == PhysicalType.BYTE_ARRAY
    if k == "VARIANT":
        return False  # annotates groups only
    return True  # UNKNOWN: any type


def leaves_from_elements(elements: list[SchemaElement]) -> tuple[list[ColumnDescriptor], list[SchemaElement]]:
    """Walk the flattened schema into leaf descriptors; validate counts, types and depth as we go.

    A schema deeper than :data:`MAX_SCHEMA_DEPTH` raises :class:`~pqbloom.errors.UnsupportedError`.
    """
    if not elements:
        raise CorruptFileError("file schema is empty")
    root = elements[0]
    leaves: list[ColumnDescriptor] = []
    pos = 1
    n_elements = len(elements)
    # hoisted: this loop runs once per column of the file (10,000 for a wide one)
    reps = _REPETITIONS
    types = _PHYSICAL_TYPES
    optional, repeated = FieldRepetitionType.OPTIONAL.value, FieldRepetitionType.REPEATED.value
    required = FieldRepetitionType.REQUIRED.value
    flba = PhysicalType.FIXED_LEN_BYTE_ARRAY.value
    logical = LogicalType.from_element

    nroot = root.num_children if root.num_children is not None else len(elements) - 1
    # an explicit stack of open groups (children still to see, path, levels, ancestors): a footer may
    # nest groups far deeper than Python recursion goes; its depth is checked before anything else
    stack: list[tuple[list[int], tuple[str, ...], int, int, list[Any]]] = [([nroot], (), 0, 0, [])]
    with gc_paused():  # a wide schema builds tens of thousands of objects
        while stack:
            left, prefix, d, r, ancestors = stack[-1]
            if not left[0]:
                stack.pop()
                continue
            left[0] -= 1
            if pos >= n_elements:
                raise CorruptFileError("schema ends before all declared children were seen")
            el = elements[pos]
            pos += 1
            name = el.name
            if not isinstance(name, str):
                raise CorruptFileError(f"schema element {pos - 1} has no name")
            rep = el.repetition_type
            if rep is not None and rep not in reps:
                raise CorruptFileError(f"schema element {name!r} has invalid repetition {rep}")
            dd = d + 1 if rep == optional or rep == repeated else d
            rr = r + 1 if rep == repeated else r
            path = prefix + (name,)
            if len(path) >= MAX_SCHEMA_DEPTH:
                raise UnsupportedError(too_deep_message(_schema_depth(elements), "the file's schema"))
            ptype = el.type
            nc = el.num_children
            if nc is not None and nc > 0 or ptype is None:
                nc = nc or 0
                if nc < 0 or nc > n_elements:
                    raise CorruptFileError(f"schema group {name!r} claims {nc} children")
                stack.append(([nc], path, dd, rr, ancestors + [el]))
                continue
            if ptype not in types:
                raise CorruptFileError(f"schema element {name!r} has invalid physical type {ptype}")
            tl = el.type_length
            if ptype == flba and (tl is None or tl < 0):
                raise CorruptFileError(f"FIXED_LEN_BYTE_ARRAY column {name!r} lacks a valid type_length")
            lt = logical(el)
            if lt is not None:
                problem = malformed_annotation(lt)
                if problem is not None:
                    raise CorruptFileError(f"column {'.'.join(path)!r}: {problem}")
                if not annotation_applies(lt, ptype, tl):
                    if lt.legacy:  # Arrow C++ refuses these (its LogicalType check is lenient)
                        raise CorruptFileError(f"column {'.'.join(path)!r}: converted type {lt} cannot "
                                               f"annotate {name_of(PhysicalType, ptype)}")
                    lt = None
            fld = Field(".".join(path), ptype, lt, rep != required, tl if ptype == flba else None,
                        el.field_id)
            leaves.append(ColumnDescriptor(path, el, dd, rr, len(leaves), fld, ancestors + [el]))
    if pos != n_elements:  # elements no group claims: the counts are wrong, any reading of them a guess
        raise CorruptFileError(f"the schema has {n_elements} elements but its groups claim {pos}")
    return leaves, elements


def _schema_depth(elements: list[SchemaElement]) -> int:
    """Levels of a flattened schema, counting the root (a plain loop: no recursion, no validation)."""
    deepest = 0
    open_groups: list[int] = []
    for el in elements:
        while open_groups and open_groups[-1] == 0:
            open_groups.pop()
        if open_groups:
            open_groups[-1] -= 1
        nc = el.num_children if isinstance(el.num_children, int) else 0
        if nc > 0 or el is elements[0]:
            open_groups.append(max(nc, 0))
            deepest = max(deepest, len(open_groups))
        else:
            deepest = max(deepest, len(open_groups) + 1)
    return deepest


# ---------------------------------------------------------------------------
# the logical schema tree
# ---------------------------------------------------------------------------
@dataclass
class LNode:
    """One node of the logical schema: a leaf, struct, list or map."""

    name: str
    kind: str  # "leaf", "struct", "list", "map"
    nullable: bool
    def_level: int  # the node is non-null when def >= def_level
    rep_level: int  # number of repeated ancestors
    path: tuple[str, ...]  # schema path of the element this node stands for
    children: list[LNode] = dataclass_field(default_factory=list)
    elem_def: int = 0  # list / map: def level at which the slot holds at least one element
    desc: ColumnDescriptor | None = None
    field_id: int | None = None
    annotation: LogicalType | None = None  # a struct's group annotation (VARIANT)

    def leaves(self) -> list[ColumnDescriptor]:
        if self.desc is not None:
            return [self.desc]
        return [d for c in self.children for d in c.leaves()]

    def first_leaf(self) -> ColumnDescriptor:
        n = self
        while n.desc is None:
            n = n.children[0]
        return n.desc

    def to_field(self) -> Field:
        if self.kind == "leaf":
            assert self.desc is not None
            return replace(self.desc.field, name=self.name, nullable=self.nullable)
        ch = tuple(c.to_field() for c in self.children)
        return NestedField(self.name, -1, self.annotation, self.nullable, None, self.field_id, self.kind, ch)

    def prune(self, keep: set[int]) -> LNode | None:
        """This subtree restricted to the leaves whose ordinals are in ``keep`` (maps stay whole)."""
        if self.kind == "leaf":
            return self if self.desc is not None and self.desc.index in keep else None
        if self.kind == "map":
            return self if any(d.index in keep for d in self.leaves()) else None
        kids = [k for k in (c.prune(keep) for c in self.children) if k is not None]
        if not kids:
            return None
        return replace(self, children=kids)


@dataclass
class _SNode:
    el: SchemaElement
    path: tuple[str, ...]
    children: list[_SNode]
    desc: ColumnDescriptor | None


def _snodes(elements: list[SchemaElement], leaves: list[ColumnDescriptor]) -> list[_SNode]:
    pos = 1
    leaf_i = 0

    def walk(n: int, prefix: tuple[str, ...]) -> list[_SNode]:
        nonlocal pos, leaf_i
        out = []
        for _ in range(n):
            el = elements[pos]
            pos += 1
            path = prefix + (el.name,)
            if el.num_children is not None and el.num_children > 0 or el.type is None:
                out.append(_SNode(el, path, walk(el.num_children or 0, path), None))
            else:
                out.append(_SNode(el, path, [], leaves[leaf_i]))
                leaf_i += 1
        return out

    root = elements[0]
    return walk(root.num_children if root.num_children is not None else len(elements) - 1, ())


def _is_list(el: SchemaElement) -> bool:
    return el.converted_type == ConvertedType.LIST or (el.logical_type is not None and el.logical_type.is_list)


def _is_map(el: SchemaElement) -> bool:
    return el.converted_type in (ConvertedType.MAP, ConvertedType.MAP_KEY_VALUE) or (
        el.logical_type is not None and el.logical_type.is_map)


def _interpret(sn: _SNode, parent_def: int, parent_rep: int, forced_required: bool = False) -> LNode:
    el = sn.el
    rep = FieldRepetitionType.REQUIRED if forced_required else (el.repetition_type if el.repetition_type is not None
                                                 else FieldRepetitionType.REQUIRED)
    if rep == FieldRepetitionType.REPEATED:
        # an unannotated repeated field: a required list of required elements
        d, r = parent_def + 1, parent_rep + 1
        elem = _interpret(sn, d, r, forced_required=True)
        return LNode(el.name, "list", False, parent_def, parent_rep, sn.path, [elem], elem_def=d,
                     field_id=el.field_id)
    d = parent_def + (1 if rep == FieldRepetitionType.OPTIONAL else 0)
    nullable = rep == FieldRepetitionType.OPTIONAL
    if sn.desc is not None:
        return LNode(el.name, "leaf", nullable, d, parent_rep, sn.path, desc=sn.desc, field_id=el.field_id)
    kids = sn.children
    if not kids:
        if _is_list(el) or _is_map(el):
            raise CorruptFileError(f"{'list' if _is_list(el) else 'map'} group {'.'.join(sn.path)!r} has no children")
        # an empty group: a struct without members, as Arrow reads it (it holds no data)
        return LNode(el.name, "struct", nullable, d, parent_rep, sn.path, [], field_id=el.field_id)
    one_repeated = len(kids) == 1 and kids[0].el.repetition_type == FieldRepetitionType.REPEATED
    if _is_list(el) and one_repeated:
        rg = kids[0]
        de, re_ = d + 1, parent_rep + 1
        if rg.desc is not None or len(rg.children) > 1 or rg.el.name == "array" or rg.el.name == el.name + "_tuple":
            # legacy two-level forms: the repeated field itself is the (required) element
            elem = _interpret(rg, de, re_, forced_required=True)
        else:
            if not rg.children:
                raise CorruptFileError(f"list group {'.'.join(rg.path)!r} has no children")
            elem = _interpret(rg.children[0], de, re_)
        return LNode(el.name, "list", nullable, d, parent_rep, sn.path, [elem], elem_def=de, field_id=el.field_id)
    if _is_map(el) and one_repeated and kids[0].desc is None:
        kv = kids[0]
        de, re_ = d + 1, parent_rep + 1
        if len(kv.children) == 2:
            key = _interpret(kv.children[0], de, re_)
            value = _interpret(kv.children[1], de, re_)
            return LNode(el.name, "map", nullable, d, parent_rep, sn.path, [key, value], elem_def=de,
                         field_id=el.field_id)
        if len(kv.children) == 1:  # a map without values reads as the list of its keys (as Arrow does)
            elem = _interpret(kv.children[0], de, re_)
        else:
            elem = _interpret(kv, de, re_, forced_required=True)
        return LNode(el.name, "list", nullable, d, parent_rep, sn.path, [elem], elem_def=de, field_id=el.field_id)
    children = [_interpret(c, d, parent_rep) for c in kids]
    ann = LogicalType.from_element(el) if el.logical_type is not None else None
    return LNode(el.name, "struct", nullable, d, parent_rep, sn.path, children, field_id=el.field_id,
                 annotation=ann if ann is not None and ann.kind in GROUP_ANNOTATIONS else None)


def build_tree(elements: list[SchemaElement], leaves: list[ColumnDescriptor]) -> list[LNode]:
    """The logical trees of the top-level fields of a file schema."""
    return [_interpret(sn, 0, 0) for sn in _snodes(elements, leaves)]


def repeated_def_levels(desc: ColumnDescriptor) -> list[int]:
    """For k = 0..max_rep: the definition level at which the k-th repeated ancestor holds an element."""
    out = [0]
    d = 0
    for el in desc.ancestors:
        if el.repetition_type in (FieldRepetitionType.OPTIONAL, FieldRepetitionType.REPEATED):
            d += 1
        if el.repetition_type == FieldRepetitionType.REPEATED:
            out.append(d)
    return out


def has_leaves(field: Field) -> bool:
    """Whether a field holds any leaf column (empty groups, and groups of them, hold none)."""
    return not isinstance(field, NestedField) or any(has_leaves(c) for c in field.children)


def check_writable(field: Field) -> None:
    """Refuse what no reader reads back: an empty group inside a field that has leaves (pyarrow
    refuses such a file; a top-level field without leaves reads back as nulls, see :func:`null_column`)."""
    if not isinstance(field, NestedField) or not has_leaves(field):
        return
    for c in field.children:
        if isinstance(c, NestedField) and not has_leaves(c):
            raise SchemaError(f"field {field.name!r}: member {c.name!r} is an empty struct (a group without leaves) "
                              f"inside a field that holds data; readers refuse such a schema (pyarrow: "
                              f"'non-leaf node has no children')")
        check_writable(c)
