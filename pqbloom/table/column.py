"""In-memory columns: physical values plus a null mask.

A :class:`Column` stores values in their Parquet *physical* representation
(see :mod:`pqbloom.arrays`) for the full length of the column, with
``mask[i] == True`` where row ``i`` is null (the value slot then holds a
placeholder). A :class:`DictionaryColumn` also carries the dictionary its values
are drawn from. A :class:`NestedColumn` is a struct, list or map in Arrow's layout:
a validity mask, ``int64`` offsets for lists and maps, and child columns (flat
columns or further nested ones). Conversions out (numpy, Python, Arrow) are
:mod:`pqbloom.table.outputs`; conversions in, :mod:`pqbloom.table.build` and
:mod:`pqbloom.table.arrow`.
"""

from __future__ import annotations

import copy
import operator
import warnings
from collections.abc import Sequence
from dataclasses import replace
from typing import Any

import numpy as np

from ..arrays import BinaryArray
from ..encodings import build_dictionary, encode_with_dictionary
from ..errors import SchemaError
from ..format.enums import PhysicalType
from ..schema import Field, NestedField
from .arrow_c_protocol import column_array_capsules, column_schema_capsule, column_stream_capsule
from .int96 import int96_field, int96_range_error, int96_ticks
from .outputs import nested_to_arrow, to_arrow, to_numpy, to_pylist
from .scalar import Scalar

__all__ = ["Column", "DictionaryColumn", "NestedColumn", "with_dictionary", "dictionary_codes", "take_ranges",
           "coerce_int96", "column_nbytes", "slice_bounds", "nested_pylist", "check_maps_as_pydicts", "object_array"]


def slice_bounds(n: int, offset: int, length: int | None) -> tuple[int, int]:
    """(start, stop) of pyarrow's ``slice(offset, length)`` over ``n`` rows: ``length`` rows from ``offset``
    (to the end when None), clipped to the end. pyarrow's errors: IndexError for a negative offset,
    ValueError for a negative length."""
    offset = operator.index(offset)
    if offset < 0:
        raise IndexError(f"slice offset must be non-negative, not {offset} (slice takes (offset, length), as pyarrow)")
    start = min(offset, n)
    if length is None:
        return start, n
    length = operator.index(length)
    if length < 0:
        raise ValueError(f"slice length must be non-negative, not {length} (slice takes (offset, length), as pyarrow)")
    return start, min(start + length, n)


class Column:
    """One column: physical values (full length) and an optional null mask (True = null)."""

    __slots__ = ("field", "values", "mask")

    def __init__(self, field: Field, values: Any, mask: np.ndarray | None = None) -> None:
        self.field = field
        self.values = values
        if mask is not None:
            mask = np.asarray(mask, dtype=bool)
            if not mask.any():
                mask = None
        if mask is not None and not field.nullable:
            raise SchemaError(f"column {field.name!r} is declared not null but has {int(mask.sum())} nulls")
        self.mask = mask

    def __len__(self) -> int:
        return len(self.values)

    @property
    def null_count(self) -> int:
        """How many values are null."""
        return 0 if self.mask is None else int(self.mask.sum())

    def dense(self) -> Any:
        """The non-null values only."""
        if self.mask is None:
            return self.values
        keep = ~self.mask
        if isinstance(self.values, BinaryArray):
            return self.values.filter(keep)
        return self.values[keep]

    def slice(self, offset: int = 0, length: int | None = None) -> Column:
        """``length`` rows from row ``offset`` (to the end when None), as pyarrow's ``slice(offset, length)``:
        clipped to the column's end; a negative offset raises IndexError, a negative length ValueError."""
        start, stop = slice_bounds(len(self), offset, length)
        v = self.values.slice(start, stop) if isinstance(self.values, BinaryArray) else self.values[start:stop]
        return Column(self.field, v, None if self.mask is None else self.mask[start:stop])

    def take(self, idx: np.ndarray) -> Column:
        """The rows at the positions ``idx``, in that order."""
        v = self.values.take(idx) if isinstance(self.values, BinaryArray) else self.values[idx]
        return Column(self.field, v, None if self.mask is None else self.mask[idx])

    def renamed(self, name: str) -> Column:
        """The same values under the name ``name`` (the buffers are shared)."""
        out = copy.copy(self)
        out.field = replace(self.field, name=name)
        return out

    def __getitem__(self, i: int) -> Scalar:
        """The value at row ``i`` (negative counts from the end) as a :class:`~pqbloom.table.scalar.Scalar`, as
        pyarrow's ``column[i]``: ``table["id"][0].as_py()``."""
        n = len(self)
        k = operator.index(i)
        if not -n <= k < n:
            raise IndexError(f"index {k} out of range for a column of {n} rows")
        k %= n
        value = self.slice(k, 1).to_pylist()[0]
        return Scalar(value, self.mask is None or not bool(self.mask[k]))

    def __iter__(self) -> Any:
        return (Scalar(v, v is not None) for v in self.to_pylist())

    @property
    def type(self) -> Any:
        """The column's Arrow type (a ``pyarrow.DataType``: needs pyarrow), as :attr:`pqbloom.Field.type`."""
        return self.field.type

    @property
    def num_chunks(self) -> int:
        """1, as pyarrow's ``ChunkedArray.num_chunks`` counts them: a pqbloom column is one chunk."""
        return 1

    # -- output ---------------------------------------------------------------
    def to_numpy(self) -> np.ndarray:
        """Values as numpy in their logical type; nulls become None (object arrays), NaN or NaT."""
        return to_numpy(self.field, self.values, self.mask)

    def to_pylist(self, *, maps_as_pydicts: str | None = None) -> list[Any]:
        """Values as Python objects (as pyarrow's ``as_py`` gives them); None for nulls.
        ``maps_as_pydicts`` as pyarrow's (see :meth:`NestedColumn.to_pylist`): it concerns map columns only."""
        check_maps_as_pydicts(maps_as_pydicts)
        return to_pylist(self.field, self.values, self.mask)

    def to_arrow(self) -> Any:
        """Values as the pyarrow array pyarrow reads for this column's type."""
        return to_arrow(self.field, self.values, self.mask)

    # -- the Arrow PyCapsule interface (no pyarrow): the array to_arrow() gives, shared where it can be
    def __arrow_c_schema__(self) -> Any:
        """An ``arrow_schema`` PyCapsule: the Arrow field of :meth:`to_arrow`'s array."""
        return column_schema_capsule(self)

    def __arrow_c_array__(self, requested_schema: Any = None) -> tuple[Any, Any]:
        """``arrow_schema`` and ``arrow_array`` PyCapsules of :meth:`to_arrow`'s array (numpy buffers shared,
        not copied, where Arrow's layout is pqbloom's: see :mod:`pqbloom.table.arrow_c_export`)."""
        return column_array_capsules(self, requested_schema)

    def __arrow_c_stream__(self, requested_schema: Any = None) -> Any:
        """An ``arrow_array_stream`` PyCapsule of one array, :meth:`to_arrow`'s."""
        return column_stream_capsule(self, requested_schema)

    def __repr__(self) -> str:
        return f"Column({self.field}, len={len(self)}, nulls={self.null_count})"

    def __str__(self) -> str:
        """pyarrow's text of the column (a one-chunk ``ChunkedArray``) when pyarrow is installed, else
        :func:`repr`."""
        try:
            import pyarrow as pa

            return str(pa.chunked_array([self.to_arrow()]))
        except Exception:  # noqa: BLE001 - no pyarrow, or a value it cannot hold: pqbloom's own text
            return repr(self)

    @staticmethod
    def concat(parts: Sequence[Column]) -> Column:
        if type(parts[0]) is not Column:  # nested columns concatenate their own way
            return type(parts[0]).concat(parts)
        f = parts[0].field
        if isinstance(parts[0].values, BinaryArray):
            vals: Any = BinaryArray.concat([p.values for p in parts])
        else:
            vals = np.concatenate([p.values for p in parts]) if parts else parts[0].values
        if any(p.mask is not None for p in parts):
            mask = np.concatenate([p.mask if p.mask is not None else np.zeros(len(p), bool) for p in parts])
        else:
            mask = None
        return Column(f, vals, mask)


class DictionaryColumn(Column):
    """A column whose values are drawn from ``dictionary`` (distinct values, in order): a pandas
    categorical, or a column read with its file's dictionary pages. The writer stores the dictionary
    page as this dictionary, and ``to_pandas`` makes it the categories."""

    __slots__ = ("dictionary",)

    def __init__(self, field: Field, values: Any, mask: np.ndarray | None, dictionary: Any) -> None:
        super().__init__(field, values, mask)
        self.dictionary = dictionary

    def slice(self, offset: int = 0, length: int | None = None) -> Column:
        c = super().slice(offset, length)
        return DictionaryColumn(c.field, c.values, c.mask, self.dictionary)

    def take(self, idx: np.ndarray) -> Column:
        c = super().take(idx)
        return DictionaryColumn(c.field, c.values, c.mask, self.dictionary)

    @staticmethod
    def concat(parts: Sequence[Column]) -> Column:
        plain = Column.concat([Column(p.field, p.values, p.mask) for p in parts])
        dicts = [getattr(p, "dictionary", None) for p in parts]
        if any(d is None for d in dicts) or any(not _same_values(dicts[0], d) for d in dicts[1:]):
            return plain
        return DictionaryColumn(plain.field, plain.values, plain.mask, dicts[0])


def _same_values(a: Any, b: Any) -> bool:
    if a is b:
        return True
    if isinstance(a, BinaryArray) and isinstance(b, BinaryArray):
        return a.to_pylist() == b.to_pylist()
    return isinstance(a, np.ndarray) and isinstance(b, np.ndarray) and a.shape == b.shape and bool((a == b).all())


def with_dictionary(col: Column, dictionaries: Sequence[Any]) -> Column:
    """``col`` as a :class:`DictionaryColumn` whose dictionary is ``dictionaries`` (its chunks'
    dictionary pages, in order) followed by any other value it holds, each value once: the
    categories pyarrow makes of a dictionary-encoded column when it joins the chunks."""
    pieces = [*dictionaries, col.dense()]
    if isinstance(col.values, BinaryArray):
        if not all(isinstance(p, BinaryArray) for p in pieces):
            return col
        both: Any = BinaryArray.concat(pieces)
    else:
        both = np.concatenate([np.asarray(p) for p in pieces])
    dictionary, _ = build_dictionary(both, col.field.physical_type)
    return DictionaryColumn(col.field, col.values, col.mask, dictionary)


def dictionary_codes(col: Column, dictionary: Any, null_code: int = 0) -> np.ndarray:
    """Each row's index into ``dictionary`` (``null_code`` for nulls), found by hashing, not per value."""
    codes = np.full(len(col), null_code, np.int32)
    got = encode_with_dictionary(dictionary, col.dense(), col.field.physical_type)
    if got is None:
        raise SchemaError(f"column {col.field.name!r}: values outside its dictionary")
    codes[~col.mask if col.mask is not None else slice(None)] = got[1]
    return codes


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
                nulls = np.flatnonzero(mask)  # the null slots only, not every slot's length
                if bool((offsets[nulls + 1] > offsets[nulls]).any()):  # null slots backed by elements: drop those
                    lens = np.diff(offsets)
                    keep_lens = np.where(mask, 0, lens)
                    new_off = np.zeros(len(offsets), np.int64)
                    np.cumsum(keep_lens, out=new_off[1:])
                    _, elem = take_ranges(offsets, np.flatnonzero(~mask))
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

    def slice(self, offset: int = 0, length: int | None = None) -> NestedColumn:
        start, stop = slice_bounds(self._n, offset, length)
        mask = None if self.mask is None else self.mask[start:stop]
        if self.offsets is None:
            return NestedColumn(self.field, stop - start, mask, [c.slice(start, stop - start) for c in self.children])
        a, b = int(self.offsets[start]), int(self.offsets[stop])
        return NestedColumn(self.field, stop - start, mask, [c.slice(a, b - a) for c in self.children],
                            self.offsets[start:stop + 1] - a)

    def take(self, idx: np.ndarray) -> NestedColumn:
        idx = np.asarray(idx)
        if idx.dtype == bool:
            idx = np.flatnonzero(idx)
        idx = idx.astype(np.int64, copy=False)
        mask = None if self.mask is None else self.mask[idx]
        if self.offsets is None:
            return NestedColumn(self.field, len(idx), mask, [c.take(idx) for c in self.children])
        off, elem = take_ranges(self.offsets, idx)
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
    def to_pylist(self, *, maps_as_pydicts: str | None = None) -> list[Any]:
        """Python values, as pyarrow's ``to_pylist`` gives them: dicts for structs, lists for lists, and for
        maps lists of ``(key, value)`` tuples, in the file's order (keys may repeat, or be structs or lists,
        which a dict cannot hold); None for nulls. ``maps_as_pydicts`` as pyarrow's: ``"lossy"`` gives maps
        as dicts (the last of repeated keys wins, with a warning), ``"strict"`` too but raises ``KeyError``
        on a repeated key; a key a dict cannot hold raises ``TypeError`` then."""
        check_maps_as_pydicts(maps_as_pydicts)
        return nested_pylist(self, [c.to_pylist(maps_as_pydicts=maps_as_pydicts) for c in self.children],
                             maps_as_pydicts)

    def to_numpy(self) -> np.ndarray:
        """The Python values (:meth:`to_pylist`) in a one-dimensional object array."""
        return object_array(self.to_pylist())

    def to_arrow(self) -> Any:
        """A pyarrow StructArray, ListArray (LargeListArray past 2**31 - 1 elements) or MapArray."""
        return nested_to_arrow(self.kind, self._n, self.mask, self.offsets, [c.to_arrow() for c in self.children],
                               [c.field for c in self.children])

    def __repr__(self) -> str:
        return f"NestedColumn({self.field}, len={len(self)}, nulls={self.null_count})"


_MAPS_AS_PYDICTS = (None, "lossy", "strict")


def check_maps_as_pydicts(maps_as_pydicts: str | None) -> None:
    """ValueError for a ``maps_as_pydicts`` pyarrow does not take."""
    if maps_as_pydicts not in _MAPS_AS_PYDICTS:
        raise ValueError(f"maps_as_pydicts must be 'lossy', 'strict' or None, not {maps_as_pydicts!r}")


def object_array(values: Sequence[Any]) -> np.ndarray:
    """``values`` as a one-dimensional object array (numpy does not look into lists and tuples here)."""
    return np.fromiter(values, dtype=object, count=len(values))


def _map_dict(keys: list[Any], items: list[Any], strict: bool) -> dict[Any, Any]:
    out: dict[Any, Any] = {}
    for k, v in zip(keys, items):
        if k in out:
            if strict:
                raise KeyError(f"a map holds the key {k!r} more than once: maps_as_pydicts='strict' refuses "
                               f"to drop one")
            warnings.warn(f"a map holds the key {k!r} more than once: maps_as_pydicts='lossy' keeps the last",
                          stacklevel=4)
        out[k] = v
    return out


def nested_pylist(col: NestedColumn, kids: Sequence[list[Any]], maps_as_pydicts: str | None = None) -> list[Any]:
    """The Python values of nested column ``col`` (see :meth:`NestedColumn.to_pylist`) from its children's
    Python values ``kids`` (one list per child column)."""
    n = len(col)
    valid = [True] * n if col.mask is None else (~col.mask).tolist()
    kind = col.kind
    if kind == "struct":
        names = [c.field.name for c in col.children]
        return [dict(zip(names, vals)) if ok else None for vals, ok in zip(zip(*kids), valid)] if kids else \
            [{} if ok else None for ok in valid]
    assert col.offsets is not None
    off = col.offsets.tolist()
    if kind == "list":
        vals = kids[0]
        return [vals[off[i]:off[i + 1]] if valid[i] else None for i in range(n)]
    keys, items = kids
    if maps_as_pydicts is None:
        pairs = list(zip(keys, items))
        return [pairs[off[i]:off[i + 1]] if valid[i] else None for i in range(n)]
    strict = maps_as_pydicts == "strict"
    return [_map_dict(keys[off[i]:off[i + 1]], items[off[i]:off[i + 1]], strict) if valid[i] else None
            for i in range(n)]


def take_ranges(offsets: np.ndarray, idx: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """New offsets and child indices selecting the ranges ``offsets[i]:offsets[i+1]`` for i in idx."""
    starts = offsets[idx]
    lens = offsets[idx + 1] - starts
    off = np.zeros(len(idx) + 1, np.int64)
    np.cumsum(lens, out=off[1:])
    total = int(off[-1])
    elem = np.repeat(starts - off[:-1], lens) + np.arange(total, dtype=np.int64)
    return off, elem


def column_nbytes(col: Column) -> int:
    """Bytes held by a column's arrays: values (a byte array's data and offsets), null mask, children."""
    n = 0 if col.mask is None else col.mask.nbytes
    if isinstance(col, NestedColumn):
        return n + (0 if col.offsets is None else col.offsets.nbytes) + sum(column_nbytes(c) for c in col.children)
    v = col.values
    if isinstance(v, BinaryArray):
        return n + v.offsets.nbytes + v.data.nbytes
    return n + int(getattr(v, "nbytes", 0))


def coerce_int96(col: Column, unit: str | None) -> Column:
    """``col`` with its INT96 values read in ``unit`` (None: nanoseconds, pyarrow's default): in
    nanoseconds the column stays INT96 (its raw values readable; converting one outside nanoseconds'
    range raises); in ``us`` or ``ms`` it becomes an INT64 TIMESTAMP column of that unit, and a value
    outside it raises :class:`~pqbloom.errors.TimestampRangeError` here."""
    unit = unit or "ns"
    if isinstance(col, NestedColumn):
        kids = [coerce_int96(c, unit) for c in col.children]
        if all(k is c for k, c in zip(kids, col.children)):
            return col
        nf = col.field
        assert isinstance(nf, NestedField)  # NestedColumn checks it
        return NestedColumn(replace(nf, children=tuple(k.field for k in kids)), len(col), col.mask, kids, col.offsets)
    if col.field.physical_type != PhysicalType.INT96 or unit == "ns":
        return col  # nanoseconds: checked where values are converted (to_arrow, to_numpy, to_pylist, filters)
    ticks, bad = int96_ticks(col.values, unit, col.mask)
    if bool(bad.any()):
        raise int96_range_error(col.field.name, unit, col.values, bad)
    return Column(int96_field(col.field, unit), ticks, col.mask)
