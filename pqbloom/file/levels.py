"""Record shredding and assembly: nested columns <-> the (values, definition levels, repetition levels) of
their leaves.

:func:`assemble` turns the decoded (values, definition levels, repetition levels) of the leaves into a
column (flat or nested: :mod:`pqbloom.table.column`), and :func:`shred` does the reverse. Both walk the
logical tree of the schema (:class:`~pqbloom.schema.LNode`) and work level by level with numpy over whole
arrays: no Python loop runs per value. :func:`check_levels` refuses levels no valid writer produces.

Assembly, for a node living in context ``(dA, r)`` (``dA``: definition level at which its
innermost repeated ancestor holds an element, 0 at the top; ``r``: its number of repeated
ancestors): the node's slots start at the level entries with ``def >= dA`` and ``rep <= r``;
a slot is non-null when ``def >= node.def_level``; a list slot's elements start at entries
with ``def >= node.elem_def`` and ``rep <= r + 1``, and its offsets count those.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..arrays import BinaryArray
from ..errors import CorruptFileError, UnsupportedError
from ..kernels import levels as level_kernels
from ..limits import charge
from ..schema import ColumnDescriptor, Field, LNode, NestedField, repeated_def_levels
from ..table.build import empty_values
from ..table.column import Column, NestedColumn
from ..table.nulls import place_nulls

__all__ = ["LeafLevels", "ShreddedLeaf", "assemble", "shred", "check_levels", "LEVEL_DTYPE"]

#: the levels of a shredded column whose maximum level reaches 128 (else they are int8)
LEVEL_DTYPE = np.int16


def check_levels(desc: ColumnDescriptor, defs: np.ndarray | None, reps: np.ndarray | None, n: int) -> int:
    """Reject levels no valid writer produces: out of range, a first record continuing a list,
    or a repetition into a list that has no element. Returns the chunk's number of records."""
    return level_kernels.check_chunk_levels(defs, reps, desc.max_definition_level, desc.max_repetition_level,
                                      repeated_def_levels(desc), n)


# ---------------------------------------------------------------------------
# levels -> nested values
# ---------------------------------------------------------------------------
class LeafLevels:
    """A decoded leaf chunk: dense (non-null) physical values and its levels (None when the max is 0).

    ``room``: when given, the values are the head of this buffer of one slot per level entry, which
    belongs to this object alone: its one assembly places the nulls among the values within it and
    cuts it to the slots (no second full-length array).

    ``single_use``: the object goes to one assembly, which drops each level array once it has read it
    for the last time (the repetition levels after the innermost list's offsets, the definition
    levels at the leaf): a list's levels are two arrays as long as its elements, and without this
    they outlived the whole assembly (the peak of a nested read).
    """

    __slots__ = ("values", "room", "defs", "reps", "num_values", "records", "single_use")

    def __init__(self, values: Any, defs: np.ndarray | None, reps: np.ndarray | None, num_values: int,
                 records: int | None = None, room: np.ndarray | None = None, single_use: bool = False) -> None:
        self.values = values
        self.room = room
        self.defs = defs
        self.reps = reps
        self.num_values = num_values
        #: the number of records (entries with repetition level 0), when already counted
        self.records = records
        self.single_use = single_use


def _all_null(fld: Field, n: int) -> Any:
    """``n`` placeholder values (zeros, empty values) of a flat field: a slot of every one is null."""
    ev = empty_values(fld)
    if isinstance(ev, BinaryArray):
        charge(8 * n, "placing nulls")
        return BinaryArray(np.zeros(n + 1, np.int64), ev.data)
    charge(n * ev.itemsize * int(np.prod(ev.shape[1:], dtype=np.int64)), "placing nulls")
    return np.zeros((n,) + ev.shape[1:], ev.dtype)


#: slots placed per step by :func:`_spread_in_place`
_BLOCK = 1 << 16


def _count_at_least(levels: np.ndarray, level: int) -> int:
    """How many ``levels`` are at least ``level``, by blocks (no mask of them all is made)."""
    return sum(int(np.count_nonzero(levels[a:a + _BLOCK] >= level)) for a in range(0, len(levels), _BLOCK))


def _defined_slots(defs: np.ndarray, ctx_def: int, maxd: int, nslots: int) -> np.ndarray:
    """Whether each of the ``nslots`` slots (entries with ``def >= ctx_def``) holds a value (``def ==
    maxd``), made block by block: a list's elements would otherwise select, then compare, two more
    arrays as long as the chunk's levels while those are alive (the peak of a threaded read)."""
    if nslots == len(defs):
        return defs == maxd
    out = np.empty(nslots, bool)
    at = 0
    for a in range(0, len(defs), _BLOCK):
        seg = defs[a:a + _BLOCK]
        got = seg[seg >= ctx_def] == maxd
        out[at:at + len(got)] = got
        at += len(got)
    assert at == nslots  # nslots counts the same entries of the same levels
    return out


def _null_slots(defs: np.ndarray, reps: np.ndarray, ctx_def: int, ctx_rep: int, def_level: int,
                nslots: int) -> np.ndarray:
    """Whether each of a list's ``nslots`` slots (entries with ``rep <= ctx_rep`` and ``def >=
    ctx_def``) is null (``def < def_level``), block by block: no mask as long as the levels."""
    out = np.empty(nslots, bool)
    at = 0
    for a in range(0, len(defs), _BLOCK):
        d, r = defs[a:a + _BLOCK], reps[a:a + _BLOCK]
        head = d[r <= ctx_rep]  # definition levels of the slots
        if ctx_def > 0:
            head = head[head >= ctx_def]
        if at + len(head) > nslots:
            raise CorruptFileError(f"list: more slots in the levels than its offsets count ({nslots})")
        np.less(head, def_level, out=out[at:at + len(head)])
        at += len(head)
    if at != nslots:
        raise CorruptFileError(f"list: {at} slots in the levels, its offsets count {nslots}")
    return out


def _slot_values(lv: LeafLevels, present: np.ndarray | None, where: str) -> Any:
    """The leaf's values, one per slot: the dense ones (``present`` None: every slot holds one), or
    those spread to the ``present`` slots with zeros (empty values) between. In the leaf's room when
    it has one (the room is used up: ``lv`` gives its values once)."""
    room, lv.room = lv.room, None
    if room is None:
        return lv.values if present is None else place_nulls(lv.values, present, where)
    count = len(lv.values)
    lv.values = None  # the last view of the room: it may now shrink in place
    n = count if present is None else len(present)
    if present is not None:
        _spread_in_place(room, present, count, where)
    if len(room) != n:
        try:  # realloc: a large buffer shrinks where it is, without a copy
            room.resize((n,) + room.shape[1:], refcheck=True)
        except ValueError:
            return room[:n]
    return room


def _spread_in_place(room: np.ndarray, present: np.ndarray, count: int, where: str) -> None:
    """Spread the ``count`` values at the head of ``room`` to the ``present`` slots of its first
    ``len(present)``, zeros elsewhere. Blocks go from the last to the first: the values of slots
    ``a..b`` come from ``count(present[:a])..count(present[:b])``, at or below ``a..b``, which no block
    written before (all above ``b``) touched; each block's values are copied out before it is written."""
    n = len(present)
    if len(room) < n:
        raise CorruptFileError(f"leaf {where!r}: {n} slots for {len(room)} level entries")
    starts = range(0, n, _BLOCK)
    before = [0]
    for a in starts:
        before.append(before[-1] + int(np.count_nonzero(present[a:a + _BLOCK])))
    if before[-1] != count:
        raise CorruptFileError(f"leaf {where!r} has {before[-1]} defined levels but {count} values")
    for a, c0, c1 in zip(starts[::-1], before[-2::-1], before[:0:-1]):
        seg = present[a:a + _BLOCK]
        vals = room[c0:c1].copy()
        dst = room[a:a + len(seg)]
        dst[~seg] = 0
        dst[seg] = vals


def assemble(node: LNode, data: Mapping[int, LeafLevels], ctx_def: int = 0, ctx_rep: int = 0,
             fld: Field | None = None) -> Column:
    """Build the column of ``node`` from its leaves' decoded levels and values (keyed by leaf ordinal);
    ``fld``: ``node.to_field()`` when the caller has it (a parent passes its field's children)."""
    if fld is None:
        fld = node.to_field()
    if node.kind == "leaf":
        assert node.desc is not None
        lv = data[node.desc.index]
        maxd = node.desc.max_definition_level
        defs = lv.defs
        if defs is None:
            n = lv.num_values
            if len(lv.values) != n:
                raise CorruptFileError(f"leaf {node.desc.dotted_path!r} decoded {len(lv.values)} values for {n} levels")
            return Column(fld, lv.values, None)
        n = len(defs)
        nslots = n if ctx_def <= 0 else _count_at_least(defs, ctx_def)
        # the entries at maxd (>= ctx_def) are all slots: counted without selecting the slots first
        npresent = _count_at_least(defs, maxd)
        ndense = len(lv.values)
        if npresent != ndense:
            raise CorruptFileError(f"leaf {node.desc.dotted_path!r} has {npresent} defined levels but "
                                   f"{ndense} values")
        present = _defined_slots(defs, ctx_def, maxd, nslots) if 0 < npresent < nslots else None
        del defs
        if lv.single_use:
            lv.defs = None  # read for the last time: the leaf's ancestors read them before it
        if npresent == nslots:
            return Column(fld, _slot_values(lv, None, node.desc.dotted_path), None)
        if present is None:
            return Column(fld, _all_null(fld, nslots), np.ones(nslots, bool) if node.nullable else None)
        full = _slot_values(lv, present, node.desc.dotted_path)
        # the flags become the null mask in place: no second chunk-long array while the levels live
        return Column(fld, full, np.logical_not(present, out=present) if node.nullable else None)
    assert isinstance(fld, NestedField)
    if not _has_leaf(node):
        raise UnsupportedError(f"{'.'.join(node.path)!r} is an empty group inside a field that holds data: its "
                               f"slots cannot be told from the levels of its siblings (pyarrow and DuckDB refuse it too)")
    first = node.first_leaf()
    lv = data[first.index]
    # the slots are worked out in a frame of their own, so that its level temporaries (and references
    # to the levels) are gone before the children are assembled
    nslots, mask, offsets = _node_slots(node, lv, first.max_repetition_level, ctx_def, ctx_rep)
    if node.kind == "struct":
        return _struct(node, fld, data, ctx_def, ctx_rep, nslots, mask)
    assert offsets is not None
    if lv.single_use and ctx_rep + 1 == first.max_repetition_level:
        lv.reps = None  # the innermost list read them last: its elements are not repeated
    del lv
    return _list(node, fld, data, nslots, mask, offsets, ctx_rep + 1)


def _node_slots(node: LNode, lv: LeafLevels, max_rep: int, ctx_def: int,
                ctx_rep: int) -> tuple[int, np.ndarray | None, np.ndarray | None]:
    """A struct's or list's slots from the levels of its first leaf: (count, null mask or None, and
    for a list its element offsets; None for a struct)."""
    defs, reps = lv.defs, lv.reps
    n_entries = lv.num_values
    if node.kind == "struct" and not node.nullable and defs is not None:
        # no mask to make: the slots need only be counted, not found
        slot = defs >= ctx_def if ctx_def > 0 else None
        if reps is not None and ctx_rep < max_rep:
            slot = reps <= ctx_rep if slot is None else slot & (reps <= ctx_rep)
        return n_entries if slot is None else int(np.count_nonzero(slot)), None, None
    if node.kind != "struct" and defs is not None and reps is not None and ctx_rep + 1 == max_rep:
        # the innermost list: its offsets in one pass over the levels, no slot positions made
        offsets = level_kernels.list_offsets(defs, reps, node.elem_def, ctx_def, ctx_rep, f"list {'.'.join(node.path)!r}")
        nslots = len(offsets) - 1
        return nslots, _null_slots(defs, reps, ctx_def, ctx_rep, node.def_level, nslots) if node.nullable else None, offsets
    # the node's slots start at the entries with def >= ctx_def and rep <= ctx_rep
    pos: np.ndarray | None = None  # their positions, when known
    sd: np.ndarray | None = None  # their definition levels, when known
    if reps is not None and ctx_rep < max_rep:
        # slot starts are a minority of the entries here: index them rather than mask everything
        pos = np.flatnonzero(reps == 0 if ctx_rep == 0 else reps <= ctx_rep)
        if defs is not None:
            sd = defs[pos]
            if ctx_def > 0:
                keep = sd >= ctx_def
                if not bool(keep.all()):
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
    if node.kind == "struct":
        return nslots, mask, None
    de, re_ = node.elem_def, ctx_rep + 1
    if defs is None or reps is None or pos is None or sd is None:
        raise CorruptFileError(f"list {'.'.join(node.path)!r} has a leaf without levels")
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
    return nslots, mask, offsets


def _list(node: LNode, fld: NestedField, data: Mapping[int, LeafLevels], nslots: int, mask: np.ndarray | None,
          offsets: np.ndarray, re_: int) -> NestedColumn:
    """A list (or map) of ``nslots`` slots with element ``offsets``: its children assembled in the
    context of its elements (``re_`` repeated ancestors)."""
    kids = [assemble(c, data, node.elem_def, re_, f) for c, f in zip(node.children, fld.children)]
    for k in kids:
        if len(k) != int(offsets[-1]):
            raise CorruptFileError(f"{node.kind} {'.'.join(node.path)!r}: child {k.field.name!r} has {len(k)} "
                                   f"values for {int(offsets[-1])} elements (leaves disagree on their levels)")
    return NestedColumn(fld, nslots, mask, kids, offsets)


def _struct(node: LNode, fld: NestedField, data: Mapping[int, LeafLevels], ctx_def: int, ctx_rep: int, nslots: int,
            mask: np.ndarray | None) -> NestedColumn:
    """A struct of ``nslots`` slots: its members assembled in its context."""
    kids = [assemble(c, data, ctx_def, ctx_rep, f) for c, f in zip(node.children, fld.children)]
    for k in kids:
        if len(k) != nslots:
            raise CorruptFileError(f"struct {'.'.join(node.path)!r}: member {k.field.name!r} has {len(k)} "
                                   f"values for {nslots} slots (leaves disagree on their levels)")
    return NestedColumn(fld, nslots, mask, kids)


def _has_leaf(node: LNode) -> bool:
    """Whether some leaf is under ``node`` (stops at the first; ``leaves()`` lists them all)."""
    return node.desc is not None or any(_has_leaf(c) for c in node.children)


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
