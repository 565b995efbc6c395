"""The footer (``FileMetaData``), decoded lazily.

:func:`decode_file_metadata` decodes a footer with many row groups lazily: the
C decoder skims the row groups once (recording where each starts) and each
RowGroup is decoded on first access (see :class:`RowGroupList`). With few row
groups, a row group of many columns keeps its column chunks undecoded until
accessed (:class:`ColumnChunkList`). Large footers are decoded with the cyclic
garbage collector paused (:func:`~pqbloom.format.codec.gc_paused`). The decode is charged to the
read's memory budget, and the Thrift limits in force when the footer is decoded
(:class:`~pqbloom.limits.ThriftLimits`) also apply to the row groups and column chunks decoded later.
:meth:`RowGroupList.statistics_skim` decodes only what statistics pruning reads.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any, overload

from thrift.Thrift import TType

from .._thrift import ttypes as T
from ..errors import CorruptFileError
from ..limits import THRIFT_LIMITS, charge, thrift_limits
from .codec import ACCELERATED, decoding_position, gc_paused, read_struct

__all__ = ["decode_file_metadata", "RowGroupList", "ColumnChunkList", "LAZY_ROW_GROUPS_MIN", "LAZY_COLUMNS_MIN",
           "BULK_AFTER_MISSES"]

# Footers with fewer row groups are decoded whole: laziness only pays off when a
# reader may touch a few of many row groups.
LAZY_ROW_GROUPS_MIN = 64
# A RowGroupList decodes all row groups at once after this many were decoded one by one.
BULK_AFTER_MISSES = 16
# A row group (of a footer decoded eagerly) with at least this many column chunks keeps them as a
# ColumnChunkList: a reader of a few columns of a wide file decodes only those.
LAZY_COLUMNS_MIN = 256


# -- lazy row groups ----------------------------------------------------------------------------

class _RowGroupMark:
    """What the skim keeps of a RowGroup: where it starts in the footer and its row count.

    The C decoder creates a struct object before reading its fields, so at that moment the
    buffer position is the struct's first byte.
    """

    __slots__ = ("pos", "num_rows")

    def __init__(self) -> None:
        self.pos = decoding_position()
        self.num_rows: int | None = None


def _skim_spec() -> tuple[Any, ...]:
    """FileMetaData's thrift_spec with each row group read as a _RowGroupMark (other fields skipped)."""
    spec = list(getattr(T.FileMetaData, "thrift_spec"))  # noqa: B009 - set at import time, unknown to mypy
    rg_field = spec[4]
    assert rg_field is not None and rg_field[2] == "row_groups"
    num_rows = getattr(T.RowGroup, "thrift_spec")[3]  # noqa: B009
    assert num_rows is not None and num_rows[2] == "num_rows"
    mark_spec = (None, None, None, num_rows)
    spec[4] = (rg_field[0], rg_field[1], rg_field[2], (TType.STRUCT, [_RowGroupMark, mark_spec], False), None)
    return tuple(spec)


_SKIM_SPEC = _skim_spec()


class _ChunkMark:
    """What the column skim keeps of a ColumnChunk: where it starts in the footer."""

    __slots__ = ("pos",)

    def __init__(self) -> None:
        self.pos = decoding_position()


def _lazy_columns_spec() -> tuple[Any, ...]:
    """RowGroup's thrift_spec with each column chunk read as a _ChunkMark (its fields skipped)."""
    spec = list(getattr(T.RowGroup, "thrift_spec"))  # noqa: B009
    f = spec[1]
    assert f is not None and f[2] == "columns"
    spec[1] = (f[0], f[1], f[2], (TType.STRUCT, [_ChunkMark, (None,)], False), None)
    return tuple(spec)


_LAZY_COLUMNS_SPEC = _lazy_columns_spec()


# -- statistics skim: what row-group pruning reads, without materializing full RowGroups ----------

# Plain classes: the C decoder creates each with no arguments and sets the fields it reads;
# fields the skim skips (or the footer lacks) read as the class-level None.
class _StatsRowGroup:
    """A RowGroup with only ``num_rows`` and ``columns`` decoded."""

    num_rows = columns = None


class _StatsChunk:
    """A ColumnChunk with only ``meta_data`` decoded."""

    meta_data = None


class _StatsChunkMeta:
    """A ColumnMetaData with only ``num_values``, ``statistics`` (and ``size_statistics``) decoded."""

    num_values = statistics = size_statistics = None


class _StatsValues:
    """A Statistics without ``distinct_count`` (never decoded, reads as None)."""

    max = min = null_count = distinct_count = max_value = min_value = is_max_value_exact = None
    is_min_value_exact = nan_count = None


class _StatsFooter:
    row_groups = None


def _only(cls: Any, names: set[str]) -> list[Any]:
    """``cls.thrift_spec`` with every field not in ``names`` skipped (set to None)."""
    spec = getattr(cls, "thrift_spec")  # noqa: B009 - set at import time, unknown to mypy
    return [f if f is not None and f[2] in names else None for f in spec]


def _with_struct(spec: list[Any], name: str, cls: type, sub: list[Any], *, in_list: bool = False) -> None:
    """Point field ``name`` of ``spec`` (a struct, or a list of structs) at ``cls``/``sub``."""
    i = next(i for i, f in enumerate(spec) if f is not None and f[2] == name)
    f = spec[i]
    inner = [cls, tuple(sub)]
    spec[i] = (f[0], f[1], f[2], (TType.STRUCT, inner, False) if in_list else inner, None)


def _stats_skim_spec(size_statistics: bool) -> tuple[Any, ...]:
    fields = {"num_values", "statistics"} | ({"size_statistics"} if size_statistics else set())
    meta = _only(T.ColumnMetaData, fields)
    _with_struct(meta, "statistics", _StatsValues, _only(T.Statistics, {
        "max", "min", "null_count", "max_value", "min_value", "is_max_value_exact", "is_min_value_exact",
        "nan_count"}))
    chunk = _only(T.ColumnChunk, {"meta_data"})
    _with_struct(chunk, "meta_data", _StatsChunkMeta, meta)
    rg = _only(T.RowGroup, {"num_rows", "columns"})
    _with_struct(rg, "columns", _StatsChunk, chunk, in_list=True)
    footer = _only(T.FileMetaData, {"row_groups"})
    _with_struct(footer, "row_groups", _StatsRowGroup, rg, in_list=True)
    return tuple(footer)


_STATS_SKIM_SPECS = {False: _stats_skim_spec(False), True: _stats_skim_spec(True)}


class _LazyList(Sequence[Any]):
    """A list of Thrift structs decoded from footer bytes on first access, then kept; all of the
    rest at once after :data:`BULK_AFTER_MISSES` single decodes (a reader touching many items, a
    scan or pruning, pays the eager cost once instead of a call per item).

    Subclasses decode one item (:meth:`_decode_one`) and all of them (:meth:`_decode_all`).
    """

    _noun = "items"

    def __init__(self, footer: bytes, starts: list[int], offset: int | None) -> None:
        self._footer = footer
        self._starts = starts
        self._items: list[Any] = [None] * len(starts)
        self._offset = offset
        self._misses = 0
        #: the Thrift limits the footer was opened under, for the items decoded later
        self._limits = THRIFT_LIMITS.get()

    def __len__(self) -> int:
        return len(self._items)

    @overload
    def __getitem__(self, i: int) -> Any: ...

    @overload
    def __getitem__(self, i: slice) -> list[Any]: ...

    def __getitem__(self, i: int | slice) -> Any:
        if isinstance(i, slice):
            return [self[j] for j in range(*i.indices(len(self._items)))]
        item = self._items[i]  # raises IndexError like a list
        if item is None:
            with thrift_limits(self._limits):
                item = self._decode(i if i >= 0 else i + len(self._items))
        return item

    def __iter__(self) -> Iterator[Any]:
        for i in range(len(self._items)):
            yield self[i]

    def _decode(self, i: int) -> Any:
        self._misses += 1
        if self._misses > BULK_AFTER_MISSES:
            self._decode_all()
            self._misses = -(1 << 62)  # never again
            if self._items[i] is not None:
                return self._items[i]
        item = self._decode_one(i)  # also reports what the bulk pass left undecoded
        self._items[i] = item
        return item

    def _at(self, start: int) -> int | None:
        return None if self._offset is None else self._offset + start

    def _decode_one(self, i: int) -> Any:
        raise NotImplementedError

    def _decode_all(self) -> None:
        raise NotImplementedError

    @property
    def decoded(self) -> int:
        """How many items have been decoded so far."""
        return sum(item is not None for item in self._items)

    def __eq__(self, other: object) -> bool:
        if isinstance(other, (list, _LazyList)):
            return len(self) == len(other) and all(a == b for a, b in zip(self, other))
        return NotImplemented

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"{type(self).__name__}({len(self)} {self._noun}, {self.decoded} decoded)"


class RowGroupList(_LazyList):
    """``FileMetaData.row_groups`` of a footer decoded by :func:`decode_file_metadata`.

    ``num_rows`` holds every row group's row count (from the skim) without decoding any.
    A row group whose bytes disagree with the skim, or that lacks its row count or column
    chunks, raises :class:`~pqbloom.errors.CorruptFileError` when accessed.
    """

    _noun = "row groups"

    def __init__(self, footer: bytes, starts: list[int], num_rows: list[int | None], offset: int | None) -> None:
        super().__init__(footer, starts, offset)
        self.num_rows = num_rows

    def _decode_one(self, i: int) -> Any:
        start = self._starts[i]
        at = self._at(start)
        rg, end = read_struct(T.RowGroup, self._footer, start, at, f"metadata of row group {i}")
        if (i + 1 < len(self._starts) and end != self._starts[i + 1]) or rg.num_rows != self.num_rows[i]:
            raise CorruptFileError("row group metadata does not match the footer skim", row_group=i, offset=at)
        if rg.num_rows is None or rg.num_rows < 0 or rg.columns is None:
            raise CorruptFileError("row group lacks its row count or column chunks", row_group=i, offset=at)
        return rg

    def _decode_all(self) -> None:
        with gc_paused():
            md = read_struct(T.FileMetaData, self._footer, 0, self._offset, "file metadata")[0]
        rgs = md.row_groups
        if rgs is None or len(rgs) != len(self._items):
            raise CorruptFileError("row groups of the footer do not match its skim", offset=self._offset)
        for i, rg in enumerate(rgs):
            if self._items[i] is None:
                if rg.num_rows != self.num_rows[i] or rg.num_rows is None or rg.num_rows < 0 or rg.columns is None:
                    continue  # left for _decode_one to report with its position
                self._items[i] = rg

    def statistics_skim(self, *, size_statistics: bool = False) -> list[Any]:
        """Every row group with only what statistics pruning reads, in one pass of the C decoder.

        Items have ``num_rows`` and ``columns``; each column chunk has ``meta_data`` with
        ``num_values``, ``statistics`` (as a Statistics, without ``distinct_count``) and, when asked,
        ``size_statistics``; every other field reads as None. Nothing is cached: full row groups are
        still decoded on access. Creating the few objects pruning needs costs a fraction of
        decoding whole RowGroups (encodings, paths, offsets, encoding stats of every chunk).
        Raises :class:`~pqbloom.errors.CorruptFileError` when the footer does not decode.
        """
        with gc_paused(), thrift_limits(self._limits):
            md = read_struct(_StatsFooter, self._footer, 0, self._offset, "file metadata",
                             spec=_STATS_SKIM_SPECS[size_statistics])[0]
        rgs = md.row_groups
        if rgs is None or len(rgs) != len(self._items):
            raise CorruptFileError("row groups of the footer do not match its skim", offset=self._offset)
        return list(rgs)


class ColumnChunkList(_LazyList):
    """``RowGroup.columns`` of a wide row group, decoded chunk by chunk on access.

    A chunk whose bytes do not end where the next one starts raises
    :class:`~pqbloom.errors.CorruptFileError` when accessed.
    """

    _noun = "column chunks"

    def __init__(self, footer: bytes, rg_start: int, starts: list[int], offset: int | None, row_group: int) -> None:
        super().__init__(footer, starts, offset)
        self._rg_start = rg_start
        self._row_group = row_group

    def _decode_one(self, i: int) -> Any:
        start = self._starts[i]
        at = self._at(start)
        cc, end = read_struct(T.ColumnChunk, self._footer, start, at, "column chunk metadata")
        if i + 1 < len(self._starts) and end != self._starts[i + 1]:
            raise CorruptFileError("column chunk metadata does not match the footer skim", row_group=self._row_group,
                                   offset=at)
        return cc

    def _decode_all(self) -> None:
        at = self._at(self._rg_start)
        with gc_paused():
            rg = read_struct(T.RowGroup, self._footer, self._rg_start, at, f"metadata of row group {self._row_group}")[0]
        if rg.columns is None or len(rg.columns) != len(self._items):
            raise CorruptFileError("column chunks of the row group do not match the footer skim",
                                   row_group=self._row_group, offset=at)
        for i, cc in enumerate(rg.columns):
            if self._items[i] is None:
                self._items[i] = cc


def _row_group_at(buf: bytes, start: int, end_hint: int, offset: int | None, index: int) -> tuple[Any, int]:
    """One row group at ``buf[start]`` and where it ends; its column chunks lazy (a ColumnChunkList)
    when it spans enough bytes to hold :data:`LAZY_COLUMNS_MIN` of them and their positions check out."""
    if end_hint - start >= 24 * LAZY_COLUMNS_MIN:  # a column chunk takes at least ~24 bytes
        rg, end = read_struct(T.RowGroup, buf, start, offset, None, spec=_LAZY_COLUMNS_SPEC)
        marks = rg.columns
        if marks is not None and len(marks) >= LAZY_COLUMNS_MIN:
            starts = [m.pos for m in marks]
            if all(a < b for a, b in zip(starts, starts[1:])) and starts[0] > start:
                cols = ColumnChunkList(buf, start, starts, offset, index)
                try:  # positions come from how the C decoder reads: check two of them now
                    cols[0]
                    cols[len(cols) - 2]
                except CorruptFileError:
                    pass
                else:
                    cols._misses = 0
                    rg.columns = cols
                    return rg, end
    return read_struct(T.RowGroup, buf, start, offset, None)


def decode_file_metadata(data: bytes | bytearray | memoryview, *, offset: int | None = None,
                         what: str = "file metadata") -> Any:
    """Decode a ``FileMetaData`` footer; with :data:`LAZY_ROW_GROUPS_MIN` or more row groups its
    ``row_groups`` is a :class:`RowGroupList` (decoded on access), else a plain list.

    The whole footer is still parsed once, so malformed bytes anywhere fail here, typed. The decode is
    charged to the current memory budget (:mod:`pqbloom.limits`) as the footer's length: the strings and
    values it copies out of the footer take up to that.
    """
    charge(len(data), f"the decoded {what} ({len(data):,} bytes)")
    buf = data if isinstance(data, bytes) else bytes(data)
    if len(buf) < _GC_PAUSE_BYTES:
        return _decode_file_metadata(buf, offset, what)
    with gc_paused():
        return _decode_file_metadata(buf, offset, what)


def _row_groups_at(buf: bytes, marks: list[_RowGroupMark], offset: int | None) -> list[Any] | None:
    """The row groups the skim marked, decoded one by one; None when they do not line up with
    the marks (each must end where the next starts and have its skimmed row count) or do not
    decode, so that the caller decodes the whole footer and reports any error as it would."""
    out = []
    for i, m in enumerate(marks):
        try:
            rg, end = _row_group_at(buf, m.pos, marks[i + 1].pos if i + 1 < len(marks) else len(buf), offset, i)
        except CorruptFileError:
            return None
        if rg.num_rows != m.num_rows or (i + 1 < len(marks) and end != marks[i + 1].pos):
            return None
        out.append(rg)
    return out


# Footers at least this long are decoded with the cyclic collector paused (see gc_paused).
_GC_PAUSE_BYTES = 1 << 16


def _decode_file_metadata(buf: bytes, offset: int | None, what: str) -> Any:
    if not ACCELERATED:  # pragma: no cover - only without the C extension
        return read_struct(T.FileMetaData, buf, 0, offset, what)[0]
    md, _ = read_struct(T.FileMetaData, buf, 0, offset, what, spec=_SKIM_SPEC)
    marks = md.row_groups
    if marks is None:
        return read_struct(T.FileMetaData, buf, 0, offset, what)[0]
    if len(marks) < LAZY_ROW_GROUPS_MIN:
        # the skim decoded everything else (a wide schema is much of the work): add the row groups
        rgs = _row_groups_at(buf, marks, offset)
        if rgs is None:
            return read_struct(T.FileMetaData, buf, 0, offset, what)[0]
        md.row_groups = rgs
        return md
    starts = [m.pos for m in marks]
    rows = RowGroupList(buf, starts, [m.num_rows for m in marks], offset)
    # the positions rely on how the C decoder reads; if they are not what they should be
    # (increasing, each row group ending where the next starts), decode everything eagerly
    if any(a >= b for a, b in zip(starts, starts[1:])):
        return read_struct(T.FileMetaData, buf, 0, offset, what)[0]
    try:
        rows[0]
        rows[len(rows) - 2]
    except CorruptFileError:
        return read_struct(T.FileMetaData, buf, 0, offset, what)[0]
    md.row_groups = rows
    return md
