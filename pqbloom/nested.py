"""Nested columns (structs, lists, maps): the schema tree, record shredding and assembly.

* :class:`LNode` is the *logical* tree of a file schema: the Parquet group/leaf elements
  interpreted with the LogicalTypes backward-compatibility rules (three-level lists, legacy
  two-level lists, unannotated repeated fields, MAP / MAP_KEY_VALUE), each node carrying the
  definition level at which it is non-null and, for lists and maps, the level at which they
  hold at least one element.
* :class:`NestedColumn` is an in-memory nested column in Arrow's layout: a validity mask,
  ``int64`` offsets for lists and maps, and child columns (flat :class:`~pqbloom.table.Column`
  leaves or further nested columns).
* :func:`assemble` turns the decoded (values, definition levels, repetition levels) of the
  leaves into a nested column, and :func:`shred` does the reverse. Both work level by level
  with numpy over whole arrays: no Python loop runs per value.

Assembly, for a node living in context ``(dA, r)`` (``dA``: definition level at which its
innermost repeated ancestor holds an element, 0 at the top; ``r``: its number of repeated
ancestors): the node's slots start at the level entries with ``def >= dA`` and ``rep <= r``;
a slot is non-null when ``def >= node.def_level``; a list slot's elements start at entries
with ``def >= node.elem_def`` and ``rep <= r + 1``, and its offsets count those.
"""

from __future__ import annotations

import itertools
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from .arrays import BinaryArray
from .errors import CorruptFileError, SchemaError, UnsupportedError
from .format.enums import PhysicalType
from .schema import (
    MAX_SCHEMA_DEPTH,
    ColumnDescriptor,
    Field,
    LNode,
    LogicalType,
    NestedField,
    nested_field,
    repeated_def_levels,
)
from .table import Column

__all__ = ["NestedColumn", "assemble", "shred", "column_from_pylist",
           "column_from_arrow", "infer_field", "LeafLevels", "ShreddedLeaf"]

LEVEL_DTYPE = np.int16


def check_levels(desc: ColumnDescriptor, defs: np.ndarray | None, reps: np.ndarray | None, n: int) -> None:
    """Reject levels no valid writer produces: out of range, a first record continuing a list,
    or a repetition into a list that has no element."""
    if defs is not None and len(defs) and (int(defs.max()) > desc.max_definition_level or int(defs.min()) < 0):
        raise CorruptFileError(f"definition level out of range 0..{desc.max_definition_level}")
    if reps is None or not len(reps):
        return
    if int(reps.max()) > desc.max_repetition_level or int(reps.min()) < 0:
        raise CorruptFileError(f"repetition level out of range 0..{desc.max_repetition_level}")
    if reps[0] != 0:
        raise CorruptFileError(f"the first repetition level is {int(reps[0])}, not 0: the chunk starts inside a record")
    if defs is None:
        return
    rd = repeated_def_levels(desc)
    for k in range(1, desc.max_repetition_level + 1):
        # an entry repeating at level k, and the entry before it, must reach that list's elements
        low = defs < rd[k]
        low[1:] |= low[:-1]
        cont = reps.view(bool) if k == 1 == desc.max_repetition_level and reps.itemsize == 1 else reps == k
        if bool((cont & low).any()):
            raise CorruptFileError("a repetition level continues a list that has no element")


# ---------------------------------------------------------------------------
# the nested column
# ---------------------------------------------------------------------------
class NestedColumn(Column):
    """A struct, list or map column in Arrow's layout.

    ``children`` holds one column per struct member, the element column of a list, or the
    key and value columns of a map. Lists and maps have ``offsets`` (``int64``, length n + 1,
    starting at 0): slot ``i`` holds child entries ``offsets[i]:offsets[i + 1]`` (empty when null).
    """

    __slots__ = ("children", "offsets", "_n")

    def __init__(self, field: Field, length: int, mask: np.ndarray | None, children: Sequence[Column],
                 offsets: np.ndarray | None = None) -> None:
        if not isinstance(field, NestedField):
            raise SchemaError(f"column {field.name!r}: a nested column needs a struct, list or map field")
        self.field = field
        self.values = None
        self._n = int(length)
        if mask is not None:
            mask = np.asarray(mask, dtype=bool)
            if len(mask) != self._n:
                raise SchemaError(f"column {field.name!r}: mask of {len(mask)} for {self._n} rows")
            if not mask.any():
                mask = None
        if mask is not None and not field.nullable:
            raise SchemaError(f"column {field.name!r} is declared not null but has {int(mask.sum())} nulls")
        self.mask = mask
        self.children = list(children)
        if len(self.children) != len(field.children):
            raise SchemaError(f"column {field.name!r}: {len(self.children)} children for {field.type_name}")
        if field.kind == "struct":
            self.offsets = None
            for c in self.children:
                if len(c) != self._n:
                    raise SchemaError(f"column {field.name!r}: member {c.field.name!r} has {len(c)} rows, "
                                      f"the struct {self._n}")
        else:
            if offsets is None:
                raise SchemaError(f"column {field.name!r}: a {field.kind} needs offsets")
            offsets = np.asarray(offsets, dtype=np.int64)
            if len(offsets) != self._n + 1 or (len(offsets) and offsets[0] != 0):
                raise SchemaError(f"column {field.name!r}: offsets must have n + 1 entries starting at 0")
            if mask is not None and len(offsets) > 1:
                lens = np.diff(offsets)
                if bool((lens[mask] > 0).any()):  # null slots backed by elements: drop those
                    keep_lens = np.where(mask, 0, lens)
                    new_off = np.zeros(len(offsets), np.int64)
                    np.cumsum(keep_lens, out=new_off[1:])
                    _, elem = _take_ranges(offsets, np.flatnonzero(~mask))
                    children = [c.take(elem) for c in children]
                    offsets = new_off
            self.offsets = offsets
            self.children = list(children)
            for c in self.children:
                if len(c) != int(offsets[-1]):
                    raise SchemaError(f"column {field.name!r}: child {c.field.name!r} has {len(c)} entries, "
                                      f"the offsets {int(offsets[-1])}")

    @property
    def kind(self) -> str:
        return self.field.kind  # type: ignore[attr-defined, no-any-return]

    def __len__(self) -> int:
        return self._n

    def dense(self) -> Any:
        raise TypeError(f"column {self.field.name!r} is nested; it has no dense physical values")

    def slice(self, start: int, stop: int) -> NestedColumn:
        start = max(0, min(start, self._n))
        stop = max(start, min(stop, self._n))
        mask = None if self.mask is None else self.mask[start:stop]
        if self.offsets is None:
            return NestedColumn(self.field, stop - start, mask, [c.slice(start, stop) for c in self.children])
        a, b = int(self.offsets[start]), int(self.offsets[stop])
        return NestedColumn(self.field, stop - start, mask, [c.slice(a, b) for c in self.children],
                            self.offsets[start:stop + 1] - a)

    def take(self, idx: np.ndarray) -> NestedColumn:
        idx = np.asarray(idx)
        if idx.dtype == bool:
            idx = np.flatnonzero(idx)
        idx = idx.astype(np.int64, copy=False)
        mask = None if self.mask is None else self.mask[idx]
        if self.offsets is None:
            return NestedColumn(self.field, len(idx), mask, [c.take(idx) for c in self.children])
        off, elem = _take_ranges(self.offsets, idx)
        return NestedColumn(self.field, len(idx), mask, [c.take(elem) for c in self.children], off)

    @staticmethod
    def concat(parts: Sequence[Column]) -> NestedColumn:
        ps = [p for p in parts if isinstance(p, NestedColumn)]
        if len(ps) != len(parts) or not ps:
            raise SchemaError("cannot concatenate nested and flat columns")
        f = ps[0].field
        n = sum(len(p) for p in ps)
        mask = None
        if any(p.mask is not None for p in ps):
            mask = np.concatenate([p.mask if p.mask is not None else np.zeros(len(p), bool) for p in ps])
        kids = [type(ps[0].children[i]).concat([p.children[i] for p in ps]) for i in range(len(ps[0].children))]
        if ps[0].offsets is None:
            return NestedColumn(f, n, mask, kids)
        offs = [np.zeros(1, np.int64)]
        base = 0
        for p in ps:
            assert p.offsets is not None
            offs.append(p.offsets[1:] + base)
            base += int(p.offsets[-1])
        return NestedColumn(f, n, mask, kids, np.concatenate(offs))

    # -- output -----------------------------------------------------------------
    def to_pylist(self) -> list[Any]:
        """Python values: dicts for structs, lists for lists, dicts for maps; None for nulls."""
        n = self._n
        valid = [True] * n if self.mask is None else (~self.mask).tolist()
        kind = self.kind
        if kind == "struct":
            names = [c.field.name for c in self.children]
            cols = [c.to_pylist() for c in self.children]
            return [dict(zip(names, vals)) if ok else None for vals, ok in zip(zip(*cols), valid)] if cols else \
                [{} if ok else None for ok in valid]
        assert self.offsets is not None
        off = self.offsets.tolist()
        if kind == "list":
            vals = self.children[0].to_pylist()
            return [vals[off[i]:off[i + 1]] if valid[i] else None for i in range(n)]
        keys = self.children[0].to_pylist()
        items = self.children[1].to_pylist()
        return [dict(zip(keys[off[i]:off[i + 1]], items[off[i]:off[i + 1]])) if valid[i] else None
                for i in range(n)]

    def to_numpy(self) -> np.ndarray:
        out = np.empty(self._n, dtype=object)
        out[:] = self.to_pylist()
        return out

    def to_arrow(self) -> Any:
        import pyarrow as pa

        n = self._n
        validity = None if self.mask is None else pa.py_buffer(np.packbits(~self.mask, bitorder="little").tobytes())
        kids = [c.to_arrow() for c in self.children]
        afields = [pa.field(c.field.name, a.type, c.field.nullable) for c, a in zip(self.children, kids)]
        kind = self.kind
        if kind == "struct":
            return pa.Array.from_buffers(pa.struct(afields), n, [validity], null_count=self.null_count,
                                         children=kids)
        assert self.offsets is not None
        large = int(self.offsets[-1]) >= 2**31 - 1
        offs = pa.py_buffer(np.ascontiguousarray(self.offsets if large else self.offsets.astype(np.int32)))
        if kind == "list":
            typ = pa.large_list(afields[0]) if large else pa.list_(afields[0])
            return pa.Array.from_buffers(typ, n, [validity, offs], null_count=self.null_count, children=kids)
        kf = pa.field(afields[0].name, afields[0].type, False)
        entries = pa.Array.from_buffers(pa.struct([kf, afields[1]]), len(kids[0]), [None], children=kids)
        return pa.Array.from_buffers(pa.map_(kf, afields[1]), n, [validity, pa.py_buffer(
            np.ascontiguousarray(self.offsets.astype(np.int32)))], null_count=self.null_count, children=[entries])

    def __repr__(self) -> str:
        return f"NestedColumn({self.field}, len={len(self)}, nulls={self.null_count})"


def _take_ranges(offsets: np.ndarray, idx: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """New offsets and child indices selecting the ranges ``offsets[i]:offsets[i+1]`` for i in idx."""
    starts = offsets[idx]
    lens = offsets[idx + 1] - starts
    off = np.zeros(len(idx) + 1, np.int64)
    np.cumsum(lens, out=off[1:])
    total = int(off[-1])
    elem = np.repeat(starts - off[:-1], lens) + np.arange(total, dtype=np.int64)
    return off, elem


def with_field(col: Column, field: Field, mask: np.ndarray | None) -> Column:
    """``col`` relabelled with ``field`` (same data) and the given null mask."""
    if isinstance(col, NestedColumn):
        return NestedColumn(field, len(col), mask, col.children, col.offsets)
    return Column(field, col.values, mask)


def _tighten(col: Column, field: Field, parent_null: np.ndarray | None) -> Column:
    """Give ``col`` its declared field; nulls in a not-null field are only allowed under null parents."""
    if field.nullable or col.mask is None:
        return with_field(col, field, col.mask if field.nullable else None)
    bad = col.mask if parent_null is None else (col.mask & ~parent_null)
    if bad.any():
        raise SchemaError(f"field {field.name!r} is declared not null but has {int(bad.sum())} nulls")
    return with_field(col, field, None)


def conform(col: Column, field: Field) -> Column:
    """Relabel a column (possibly nested) with a compatible field, checking nullability all the way down."""
    if not isinstance(field, NestedField):
        if isinstance(col, NestedColumn):
            raise SchemaError(f"column {field.name!r} is {col.field.type_name}, the schema says {field.type_name}")
        if col.field.physical_type != field.physical_type or col.field.type_length != field.type_length:
            raise SchemaError(f"column {field.name!r} is {col.field.type_name}, the schema says {field.type_name}")
        if col.mask is not None and not field.nullable:
            raise SchemaError(f"column {field.name!r} is declared not null but has {col.null_count} nulls")
        return Column(field, col.values, col.mask)
    if not isinstance(col, NestedColumn) or col.kind != field.kind or len(col.children) != len(field.children):
        raise SchemaError(f"column {field.name!r} is {col.field.type_name}, the schema says {field.type_name}")
    if col.mask is not None and not field.nullable:
        raise SchemaError(f"column {field.name!r} is declared not null but has {col.null_count} nulls")
    kids = []
    for c, f in zip(col.children, field.children):
        relaxed = conform(c, f.with_nullable(True))
        kids.append(_tighten(relaxed, f, col.mask if field.kind == "struct" else None))
    return NestedColumn(field, len(col), col.mask, kids, col.offsets)


# ---------------------------------------------------------------------------
# levels -> nested values
# ---------------------------------------------------------------------------
class LeafLevels:
    """A decoded leaf chunk: dense (non-null) physical values and its levels (None when the max is 0).

    The values may instead come as ``pages``: (level entries, dense numeric values) per data page.
    Assembly then scatters each page straight into the full-length column, and ``values``
    concatenates them only when asked (one copy of the chunk fewer).
    """

    __slots__ = ("_values", "pages", "defs", "reps", "num_values")

    def __init__(self, values: Any, defs: np.ndarray | None, reps: np.ndarray | None, num_values: int,
                 pages: list[tuple[int, np.ndarray]] | None = None) -> None:
        if values is None and pages is None:
            raise ValueError("LeafLevels needs values or pages")
        self._values = values
        self.pages = pages
        self.defs = defs
        self.reps = reps
        self.num_values = num_values

    @property
    def values(self) -> Any:
        if self._values is None:
            assert self.pages is not None
            pieces = [v for _, v in self.pages]
            self._values = pieces[0] if len(pieces) == 1 else np.concatenate(pieces)
        return self._values

    @property
    def num_dense(self) -> int:
        """The number of dense values (without concatenating pages)."""
        if self._values is not None or self.pages is None:
            return len(self.values)
        return sum(len(v) for _, v in self.pages)


def scatter(dense: Any, present: np.ndarray) -> Any:
    """Full-length physical values with ``dense`` at the ``present`` slots and placeholders elsewhere."""
    n = len(present)
    if isinstance(dense, BinaryArray):
        lens = np.zeros(n, np.int64)
        lens[present] = dense.lengths()
        offs = np.zeros(n + 1, np.int64)
        np.cumsum(lens, out=offs[1:])
        return BinaryArray(offs, dense.compact().data)
    out = np.zeros((n,) + dense.shape[1:], dense.dtype)
    out[present] = dense
    return out


def _scatter_pages(pages: list[tuple[int, np.ndarray]], in_ctx: np.ndarray | None, present: np.ndarray,
                   where: str) -> np.ndarray:
    """:func:`scatter` of per-page dense values: each page fills its own stretch of the output.

    ``pages`` holds (level entries, dense values) per page; ``in_ctx`` says which level entries
    are slots of the output (None: all), ``present`` which slots hold a value.
    """
    first = pages[0][1]
    out = np.zeros((len(present),) + first.shape[1:], first.dtype)
    entry = slot = 0
    for n_entries, vals in pages:
        k = n_entries if in_ctx is None else int(np.count_nonzero(in_ctx[entry:entry + n_entries]))
        seg = present[slot:slot + k]
        if int(np.count_nonzero(seg)) != len(vals) or vals.dtype != first.dtype:
            raise CorruptFileError(f"leaf {where!r}: a page has {int(np.count_nonzero(seg))} defined levels "
                                   f"but {len(vals)} values")
        out[slot:slot + k][seg] = vals
        entry += n_entries
        slot += k
    return out


def _empty_values(field: Field) -> Any:
    from .table import column_from_values

    return column_from_values(field.name, [], field.with_nullable(True)).values


def assemble(node: LNode, data: Mapping[int, LeafLevels], ctx_def: int = 0, ctx_rep: int = 0) -> Column:
    """Build the column of ``node`` from its leaves' decoded levels and values (keyed by leaf ordinal)."""
    if node.kind == "leaf":
        assert node.desc is not None
        lv = data[node.desc.index]
        maxd = node.desc.max_definition_level
        fld = node.to_field()
        defs = lv.defs
        if defs is None:
            n = lv.num_values
            if len(lv.values) != n:
                raise CorruptFileError(f"leaf {node.desc.dotted_path!r} decoded {len(lv.values)} values for {n} levels")
            return Column(fld, lv.values, None)
        in_ctx = defs >= ctx_def if ctx_def > 0 else None
        sdefs = defs[in_ctx] if in_ctx is not None else defs
        present = sdefs == maxd
        npresent = int(np.count_nonzero(present))
        ndense = lv.num_dense
        if npresent != ndense:
            raise CorruptFileError(f"leaf {node.desc.dotted_path!r} has {npresent} defined levels but "
                                   f"{ndense} values")
        if npresent == len(sdefs):
            return Column(fld, lv.values, None)
        if lv.pages is not None and len(lv.pages) > 1 and npresent:
            full = _scatter_pages(lv.pages, in_ctx, present, node.desc.dotted_path)
        else:
            full = scatter(lv.values if npresent else _empty_values(fld), present)
        return Column(fld, full, ~present if node.nullable else None)
    if not node.leaves():
        raise UnsupportedError(f"{'.'.join(node.path)!r} is an empty group inside a field that holds data: its "
                               f"slots cannot be told from the levels of its siblings (pyarrow and DuckDB refuse it too)")
    first = node.first_leaf()
    lv = data[first.index]
    defs, reps = lv.defs, lv.reps
    max_rep = first.max_repetition_level
    n_entries = lv.num_values
    # the node's slots start at the entries with def >= ctx_def and rep <= ctx_rep
    pos: np.ndarray | None = None  # their positions, when known
    sd: np.ndarray | None = None  # their definition levels, when known
    others = False  # some entry with rep <= ctx_rep is not a slot (an ancestor is null or empty there)
    if reps is not None and ctx_rep < max_rep:
        # slot starts are a minority of the entries here: index them rather than mask everything
        pos = np.flatnonzero(reps == 0 if ctx_rep == 0 else reps <= ctx_rep)
        if defs is not None:
            sd = defs[pos]
            if ctx_def > 0:
                keep = sd >= ctx_def
                if not bool(keep.all()):
                    others = True
                    pos, sd = pos[keep], sd[keep]
        nslots = len(pos)
    elif defs is not None and ctx_def > 0:
        sel = defs >= ctx_def
        sd = defs[sel]
        nslots = len(sd)
    else:
        sd = defs
        nslots = n_entries
    mask = None
    if node.nullable and sd is not None:
        mask = sd < node.def_level
    fld = node.to_field()
    if node.kind == "struct":
        kids = [assemble(c, data, ctx_def, ctx_rep) for c in node.children]
        for k in kids:
            if len(k) != nslots:
                raise CorruptFileError(f"struct {'.'.join(node.path)!r}: member {k.field.name!r} has {len(k)} "
                                       f"values for {nslots} slots (leaves disagree on their levels)")
        return NestedColumn(fld, nslots, mask, kids)
    de, re_ = node.elem_def, ctx_rep + 1
    if defs is None or reps is None or pos is None or sd is None:
        raise CorruptFileError(f"list {'.'.join(node.path)!r} has a leaf without levels")
    offsets = None
    if re_ == max_rep and not others:
        offsets = _innermost_offsets(defs, reps, pos, sd, de, ctx_rep)
    if offsets is None:
        el = defs >= de
        if re_ < max_rep:
            el &= reps <= re_
        cs = np.cumsum(el, dtype=np.int64 if n_entries >= 2**31 - 1 else np.int32)
        offsets = np.zeros(nslots + 1, np.int64)
        if n_entries:
            if (cs[pos[0] - 1] if nslots and pos[0] else cs[-1] if not nslots else 0) != 0:
                raise CorruptFileError(f"list {'.'.join(node.path)!r}: elements before the first slot")
            # elements before slot k's first entry: the running count just before it
            offsets[1:nslots] = cs[pos[1:] - 1]
            offsets[-1] = cs[-1]
    kids = [assemble(c, data, de, re_) for c in node.children]
    for k in kids:
        if len(k) != int(offsets[-1]):
            raise CorruptFileError(f"{node.kind} {'.'.join(node.path)!r}: child {k.field.name!r} has {len(k)} "
                                   f"values for {int(offsets[-1])} elements (leaves disagree on their levels)")
    return NestedColumn(fld, nslots, mask, kids, offsets)


def _innermost_offsets(defs: np.ndarray, reps: np.ndarray, pos: np.ndarray, sd: np.ndarray, de: int,
                       ctx_rep: int) -> np.ndarray | None:
    """Offsets of an innermost list whose slots start at every entry with rep <= ``ctx_rep`` (at
    ``pos``, with definition levels ``sd``), without a running count over all entries.

    Every other entry then continues the list of the slot before it (rep == ctx_rep + 1), which
    valid levels only do with an element; so a slot holds its entries, less its first one when that
    one is an empty or null list. None when the levels do not have that shape (the general count
    then decides, or reports them).
    """
    n = len(defs)
    nslots = len(pos)
    if not nslots or pos[0] != 0 or bool(((reps > ctx_rep) & (defs < de)).any()):
        return None
    lens = np.empty(nslots, np.int64)
    np.subtract(pos[1:], pos[:-1], out=lens[:-1])
    lens[-1] = n - pos[-1]
    lens -= sd < de
    offsets = np.zeros(nslots + 1, np.int64)
    np.cumsum(lens, out=offsets[1:])
    return offsets


def null_column(field: Field, n: int) -> Column:
    """``n`` null slots of ``field``, which must have no leaves (an empty group, or groups of them).

    That is how pyarrow reads a top-level field without leaves: no column chunk says anything about
    its rows, so every slot is null (and the field nullable, whatever the file declares)."""
    if not isinstance(field, NestedField):
        raise SchemaError(f"field {field.name!r} has leaves")
    field = replace(field, nullable=True)
    mask = np.ones(n, bool) if n else None
    if field.kind == "struct":
        kids = [_unset_column(c, n) for c in field.children]
        return NestedColumn(field, n, mask, kids)
    return NestedColumn(field, n, mask, [empty_column(c) for c in field.children], np.zeros(n + 1, np.int64))


def _unset_column(field: Field, n: int) -> Column:
    """The members of a null struct slot: null where they may be, placeholders where they may not."""
    if not isinstance(field, NestedField):
        raise SchemaError(f"field {field.name!r} has leaves")
    mask = np.ones(n, bool) if n and field.nullable else None
    if field.kind == "struct":
        return NestedColumn(field, n, mask, [_unset_column(c, n) for c in field.children])
    return NestedColumn(field, n, mask, [empty_column(c) for c in field.children], np.zeros(n + 1, np.int64))


def empty_column(field: Field) -> Column:
    """A zero-row column of ``field``."""
    if isinstance(field, NestedField):
        kids = [empty_column(c) for c in field.children]
        return NestedColumn(field, 0, None, kids, None if field.kind == "struct" else np.zeros(1, np.int64))
    return Column(field, _empty_values(field), None)


# ---------------------------------------------------------------------------
# nested values -> levels
# ---------------------------------------------------------------------------
@dataclass
class ShreddedLeaf:
    """One leaf of a shredded column: dense values and levels over all its level entries."""

    values: Any
    defs: np.ndarray
    reps: np.ndarray
    num_values: int


def _dense_take(col: Column, idx: np.ndarray) -> Any:
    """Physical values of ``col`` at ``idx`` (sorted, unique)."""
    v = col.values
    if len(idx) == len(v):
        return v  # idx is strictly increasing, so it is 0..n-1
    if isinstance(v, BinaryArray):
        keep = np.zeros(len(v), bool)
        keep[idx] = True
        return v.filter(keep)
    return v[idx]


def _dense_filter(values: Any, keep: np.ndarray) -> Any:
    """The physical values where ``keep`` is True."""
    return values.filter(keep) if isinstance(values, BinaryArray) else values[keep]


def shred(col: Column, node: LNode) -> dict[int, ShreddedLeaf]:
    """Definition/repetition levels and dense values of every leaf under ``node`` (by leaf ordinal).

    ``node`` is the writer's tree for the column's field (from :func:`build_tree` of its schema).
    The levels are int8 when every maximum level is below 128 (else int16).
    """
    n = len(col)
    out: dict[int, ShreddedLeaf] = {}
    top = max((max(d.max_definition_level, d.max_repetition_level) for d in node.leaves()), default=0)
    lt = np.dtype(np.int8 if top < 128 else LEVEL_DTYPE)
    _shred(col, node, np.zeros(n, lt), np.zeros(n, lt), None, True, out, None, True)
    return out


def _shred(col: Column, node: LNode, defs: np.ndarray, reps: np.ndarray, idx: np.ndarray | None, seq: bool,
           out: dict[int, ShreddedLeaf], act: np.ndarray | None = None, aligned: bool = False) -> None:
    """One node of :func:`shred`.

    ``idx`` holds, per level entry, the slot of ``col`` it stands for, or -1 where an ancestor ended
    the record branch (null or empty). ``seq`` says the entries with ``idx >= 0`` are exactly the
    slots 0..len(col)-1 in order, which spares the gathers by ``idx`` (the common case: top-level
    columns, and children of lists/maps and of structs without nulls, below such columns).
    ``aligned`` says entry i stands for slot i wherever it is active (top-level columns and the
    struct members below them, nulls or not): ``idx`` is then not needed either.
    ``act`` is ``idx >= 0`` when already known (None: every entry); ``idx`` itself may be None
    under ``aligned``, and for a leaf under ``seq``.
    """
    lt = defs.dtype
    active = act
    if aligned:
        if node.nullable:
            if col.mask is not None:
                active = ~col.mask if active is None else active & ~col.mask
            defs = defs + (np.int8(1) if active is None else active)
        if node.kind == "leaf":
            assert node.desc is not None
            dense = col.values if active is None else _dense_filter(col.values, active)
            out[node.desc.index] = ShreddedLeaf(dense, defs.astype(lt, copy=False), reps, len(defs))
            return
        assert isinstance(col, NestedColumn)
        if node.kind == "struct":
            # the members stay aligned with the struct; in order too unless a struct slot is null
            child_seq = seq and (col.mask is None or not node.nullable)
            for c, k in zip(col.children, node.children):
                _shred(c, k, defs, reps, None, child_seq, out, active, True)
            return
        if active is None:  # a list or map: its slots by position
            active = np.ones(len(col), bool)
    elif node.nullable:
        if active is None:
            assert idx is not None
            active = idx >= 0
        if col.mask is not None:
            ok = active.copy()
            if seq:
                ok[active] = ~col.mask
            else:
                assert idx is not None
                ok[active] = ~col.mask[idx[active]]
            if idx is not None:
                idx = np.where(ok, idx, -1)
            defs = defs + ok
            active = ok
        else:
            defs = defs + active
    if node.kind == "leaf":
        assert node.desc is not None
        if seq:
            dense = col.dense() if col.mask is not None and node.nullable else col.values
        else:
            assert idx is not None
            present = idx >= 0 if active is None else active
            dense = _dense_take(col, idx[present] if not bool(present.all()) else idx)
        out[node.desc.index] = ShreddedLeaf(dense, defs.astype(lt, copy=False), reps, len(defs))
        return
    assert isinstance(col, NestedColumn)
    if node.kind == "struct":
        child_seq = seq and (col.mask is None or not node.nullable)
        for c, k in zip(col.children, node.children):
            _shred(c, k, defs, reps, idx, child_seq, out, active)
        return
    # list / map: expand every slot with elements into one entry per element
    assert col.offsets is not None
    offsets = col.offsets
    if active is None:
        assert idx is not None
        active = idx >= 0
    if aligned or (seq and len(active) == len(col)):
        starts, lens = offsets[:-1], np.where(active, np.diff(offsets), 0)
    else:
        assert idx is not None
        safe = np.where(active, idx, 0)
        starts = offsets[safe]
        lens = np.where(active, offsets[np.minimum(safe + 1, len(offsets) - 1)] - starts, 0)
    expand = lens > 0
    cnt = np.where(expand, lens, 1)
    total = int(cnt.sum())
    # the children need the element index of each entry unless they are leaves read in order
    need_idx = not seq or any(k.kind != "leaf" for k in node.children)
    new_idx: np.ndarray | None = None
    if total == len(cnt):  # no slot holds more than one element: no copy of the level arrays needed
        new_defs = (defs + expand).astype(lt, copy=False)
        new_reps = reps
        new_act = expand
        if need_idx:
            new_idx = np.where(expand, starts, -1)
    else:
        first = np.zeros(len(cnt), np.int64)
        np.cumsum(cnt[:-1], out=first[1:])
        # a slot with elements has every ancestor defined, so all its entries are at elem_def; the
        # other slots keep one entry each: fill, then patch those (cheaper than repeating per slot)
        empty = ~expand
        if bool((defs[expand] == node.elem_def - 1).all()):
            new_defs = np.full(total, node.elem_def, lt)
            new_defs[first[empty]] = defs[empty]
        else:
            new_defs = np.repeat((defs + expand).astype(lt, copy=False), cnt)
        new_reps = np.full(total, node.rep_level + 1, lt)
        new_reps[first] = reps
        new_act = np.ones(total, bool)
        new_act[first[empty]] = False
        if need_idx:
            # element index of each entry: starts[g], starts[g] + 1, ... within an expanded slot g,
            # -1 for a null or empty slot; built as the running sum of steps of 1 with a jump per slot
            v = np.where(expand, starts, -1)
            last = v + cnt - 1
            step = np.ones(total, np.int64)
            step[first[0]] = v[0]
            step[first[1:]] = v[1:] - last[:-1]
            new_idx = np.cumsum(step)
    # null slots are empty, so referencing every slot in order references every element in order
    for c, k in zip(col.children, node.children):
        _shred(c, k, new_defs, new_reps, new_idx, seq, out, new_act)


# ---------------------------------------------------------------------------
# Python values -> nested columns
# ---------------------------------------------------------------------------
def _is_listlike(v: Any) -> bool:
    return isinstance(v, (list, tuple)) or (isinstance(v, np.ndarray) and v.ndim == 1)


def looks_nested(values: Any) -> bool:
    """Whether a Python sequence holds lists or dicts (so its type is a list or struct)."""
    if isinstance(values, np.ndarray) and values.dtype != object:
        return False
    for v in values:
        if v is None:
            continue
        return _is_listlike(v) or isinstance(v, Mapping)
    return False


def infer_field(name: str, values: Sequence[Any], _depth: int = 2) -> Field:
    """The type of a Python column: dicts give structs, lists give lists (maps need a schema)."""
    from .table import _infer_field

    if _depth > MAX_SCHEMA_DEPTH:  # the values nest deeper than a file may (and than recursion goes)
        raise SchemaError(f"column {name!r} is nested more than {MAX_SCHEMA_DEPTH} levels deep; pqbloom reads "
                          f"and writes at most {MAX_SCHEMA_DEPTH}")

    nonnull = [v for v in values if v is not None]
    if nonnull and all(isinstance(v, Mapping) for v in nonnull):
        keys = list(dict.fromkeys(k for v in nonnull for k in v))
        if not keys:
            raise SchemaError(f"column {name!r}: cannot infer a struct without members")
        for k in keys:
            if not isinstance(k, str):
                raise SchemaError(f"column {name!r}: struct member names must be strings (use a map<...> schema "
                                  f"for other keys)")
        return nested_field(name, "struct", [infer_field(k, [v.get(k) for v in nonnull], _depth + 1) for k in keys])
    if nonnull and all(_is_listlike(v) for v in nonnull):
        flat = list(itertools.chain.from_iterable(nonnull))
        return nested_field(name, "list", [infer_field("element", flat, _depth + 2)])
    if any(_is_listlike(v) or isinstance(v, Mapping) for v in nonnull):
        raise SchemaError(f"column {name!r} mixes nested and plain values")
    return _infer_field(name, values if not isinstance(values, np.ndarray) else values)


def _member(v: Any, name: str, pos: int) -> Any:
    if isinstance(v, Mapping):
        return v.get(name)
    if isinstance(v, (tuple, list)):
        return v[pos] if pos < len(v) else None
    return getattr(v, name, None)


def _pairs(v: Any) -> Any:
    return v.items() if isinstance(v, Mapping) else v


def column_from_pylist(values: Sequence[Any], field: Field) -> Column:
    """A column of ``field`` (flat or nested) from Python values; None is null at any level."""
    from .table import column_from_values

    if not isinstance(field, NestedField):
        return column_from_values(field.name, values, field)
    if isinstance(values, np.ndarray):
        values = values.tolist()
    n = len(values)
    nulls = np.fromiter((v is None for v in values), dtype=bool, count=n)
    if nulls.any() and not field.nullable:
        raise SchemaError(f"column {field.name!r} is declared not null but has {int(nulls.sum())} nulls")
    mask = nulls if nulls.any() else None
    if field.kind == "struct":
        kids = []
        for pos, c in enumerate(field.children):
            vals = [None if v is None else _member(v, c.name, pos) for v in values]
            kids.append(_tighten(column_from_pylist(vals, c.with_nullable(True)), c, nulls))
        return NestedColumn(field, n, mask, kids)
    for v in values:
        if v is not None and not (_is_listlike(v) or (field.kind == "map" and isinstance(v, Mapping))):
            raise SchemaError(f"column {field.name!r}: {type(v).__name__} value in a {field.type_name} column")
    lens = np.fromiter((0 if v is None else len(v) for v in values), dtype=np.int64, count=n)
    offsets = np.zeros(n + 1, np.int64)
    np.cumsum(lens, out=offsets[1:])
    if field.kind == "list":
        elem = field.children[0]
        flat = list(itertools.chain.from_iterable(v for v in values if v is not None))
        child = _tighten(column_from_pylist(flat, elem.with_nullable(True)), elem, None)
        return NestedColumn(field, n, mask, [child], offsets)
    kf, vf = field.children
    pairs = list(itertools.chain.from_iterable(_pairs(v) for v in values if v is not None))
    keys = [p[0] for p in pairs]
    items = [p[1] for p in pairs]
    if any(k is None for k in keys):
        raise SchemaError(f"column {field.name!r}: map keys cannot be null")
    kcol = _tighten(column_from_pylist(keys, kf.with_nullable(True)), kf, None)
    vcol = _tighten(column_from_pylist(items, vf.with_nullable(True)), vf, None)
    return NestedColumn(field, n, mask, [kcol, vcol], offsets)


# ---------------------------------------------------------------------------
# pyarrow -> nested columns
# ---------------------------------------------------------------------------
def is_arrow_nested(t: Any) -> bool:
    import pyarrow.types as pat

    return bool(pat.is_struct(t) or pat.is_list(t) or pat.is_large_list(t) or pat.is_map(t)
                or pat.is_fixed_size_list(t) or (hasattr(pat, "is_list_view") and (pat.is_list_view(t)
                                                                                    or pat.is_large_list_view(t))))


def arrow_type_depth(t: Any) -> int:
    """Schema levels (the root not counted) an Arrow type is written as; a loop, not recursion."""
    import pyarrow as pa

    deepest = 0
    todo = [(t, 1)]
    while todo:
        u, depth = todo.pop()
        deepest = max(deepest, depth)
        if isinstance(u, pa.StructType):
            todo.extend((u.field(i).type, depth + 1) for i in range(u.num_fields))
        elif isinstance(u, pa.MapType):
            todo.extend([(u.key_type, depth + 2), (u.item_type, depth + 2)])
        elif hasattr(u, "value_type") and is_arrow_nested(u):
            todo.append((u.value_type, depth + 2))
        elif isinstance(u, pa.DictionaryType):
            todo.append((u.value_type, depth))
    return deepest


def column_from_arrow(arr: Any, name: str, nullable: bool = True) -> Column:
    """A column from a pyarrow array (nested or flat); list elements are named ``element``."""
    import pyarrow as pa
    import pyarrow.types as pat

    from .table import _column_from_arrow

    if isinstance(arr, pa.ChunkedArray):
        arr = arr.combine_chunks()
    t = arr.type
    n = len(arr)
    if not is_arrow_nested(t):
        if pat.is_null(t):  # stored as Arrow does: INT32 with the Null (UNKNOWN) logical type
            f = Field(name, PhysicalType.INT32, LogicalType("UNKNOWN"), True)
            return Column(f, np.zeros(n, np.int32), np.ones(n, bool) if n else None)
        return _column_from_arrow(pa.field(name, t, nullable), arr)
    mask = arr.is_null().to_numpy(zero_copy_only=False) if arr.null_count else None
    if mask is not None and not nullable:
        nullable = True  # Arrow allows it under a non-nullable field; keep the data
    if pat.is_struct(t):
        kids = []
        for i in range(t.num_fields):
            cf = t.field(i)
            c = column_from_arrow(arr.field(i), cf.name, True)
            target = c.field.with_nullable(cf.nullable or (c.mask is not None and (
                mask is None or bool((c.mask & ~mask).any()))))
            kids.append(_tighten(c, target, mask))
        fld = nested_field(name, "struct", [k.field for k in kids], nullable=nullable)
        return NestedColumn(fld, n, mask, kids)
    if hasattr(pat, "is_list_view") and (pat.is_list_view(t) or pat.is_large_list_view(t)):
        arr = arr.cast(pa.large_list(t.value_field))
        t = arr.type
    if pat.is_fixed_size_list(t):
        size = t.list_size
        raw_off = (np.arange(n + 1, dtype=np.int64) + arr.offset) * size
        values = arr.values
    else:
        raw_off = np.asarray(arr.offsets, dtype=np.int64)
        values = arr.values
    starts = raw_off[:-1]
    raw_lens = np.diff(raw_off)
    lens = raw_lens if mask is None else np.where(mask, 0, raw_lens)
    offsets = np.zeros(n + 1, np.int64)
    np.cumsum(lens, out=offsets[1:])
    total = int(offsets[-1])
    if mask is None or not bool((raw_lens[mask] > 0).any()):
        child_arr = values.slice(int(raw_off[0]) if n else 0, int(raw_off[-1] - raw_off[0]) if n else 0)
    else:  # null slots backed by non-empty ranges: drop those elements
        src = np.repeat(starts, lens) + (np.arange(total, dtype=np.int64) - np.repeat(offsets[:-1], lens))
        child_arr = values.take(pa.array(src, pa.int64()))
    if pat.is_map(t):
        kf, itf = t.key_field, t.item_field
        kcol = column_from_arrow(child_arr.field(0), "key", False)
        vcol = column_from_arrow(child_arr.field(1), "value", True)
        vcol = _tighten(vcol, vcol.field.with_nullable(itf.nullable or vcol.mask is not None), None)
        del kf
        fld = nested_field(name, "map", [kcol.field, vcol.field], nullable=nullable)
        return NestedColumn(fld, n, mask, [kcol, vcol], offsets)
    vf = t.value_field
    child = column_from_arrow(child_arr, "element", True)
    child = _tighten(child, child.field.with_nullable(vf.nullable or child.mask is not None), None)
    fld = nested_field(name, "list", [child.field], nullable=nullable)
    return NestedColumn(fld, n, mask, [child], offsets)
