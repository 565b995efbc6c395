"""Checks one Parquet file (or directory) written by another writer against pqbloom, using the peers
as oracles. Used by ``tests/integration/test_peer_writers.py``; only pqbloom's public API is used.

:func:`check_file` returns the differences it finds as sentences (an empty list when pqbloom reads
the file exactly as the oracle does):

* **read**: ``pqbloom.read_table(f)`` against ``pyarrow.parquet.read_table(f)``: row counts, names,
  Arrow types up to :data:`ACCEPTED_TYPE_DIFFERENCES` (``canon_type`` of ``tests/real_world_support``),
  values NaN-aware via ``to_arrow()``, and via ``to_pydict()`` against pyarrow's ``to_pylist()`` with
  the Python types pyarrow's ``as_py`` gives (maps as lists of ``(key, value)`` tuples too). Where
  pyarrow refuses the file DuckDB is the oracle; where both refuse, pqbloom must raise a
  :mod:`pqbloom.errors` exception.
* **filters**: for a few leaves (top-level, inside structs, and elements of lists, where a filter
  selects the rows with some matching element), ``==`` a present value, ``==`` an absent one, a
  closed range, ``isin`` and ``is_null``: pqbloom's filtered read equals pyarrow's reading filtered
  with ``pyarrow.compute`` (SQL semantics: null rows never match; NaN matches nothing).
* **Bloom filters**: for every column chunk whose footer (as pyarrow reads it) has a Bloom filter,
  every value pyarrow reads from that chunk, converted to the physical value the filter hashes
  without pqbloom, must test present with ``ParquetFile.bloom_filter(...).might_contain_many`` and a
  sample of them with ``ParquetFile.bloom_filter_might_contain``, both as stored (``physical=True``) and
  as the logical value pyarrow reads (``datetime``, ``Decimal``...).
* **write-back**: ``pqbloom.write_table`` of pqbloom's reading; pyarrow reads the result equal to its
  reading of the original, and DuckDB reads it as it reads the original (types and values).
"""

from __future__ import annotations

import datetime as dt
import decimal
import glob
import math
import os
import traceback
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

import pqbloom
from pqbloom.errors import ParquetError

from .real_world_support import arrays_difference, canon_type, first_difference, pydict_difference
from .real_world_support import compare_arrow as _compare_tables

__all__ = ["ACCEPTED_TYPE_DIFFERENCES", "Outcome", "check_file", "duck"]

#: Arrow type differences between pqbloom's ``to_arrow()`` and pyarrow's reading that carry no information;
#: ``compare_arrow`` (``canon_type``) removes exactly these before comparing types, anything else is a problem
ACCEPTED_TYPE_DIFFERENCES = {
    "string / binary vs large_string / large_binary / string_view / binary_view": "offset width only",
    "dictionary<values=T> vs T": "pyarrow restores dictionary encoding from a stored Arrow schema; compared "
    "after decoding",
    "list / map child field names": "both follow the file's element names; legacy list forms differ in naming",
    "ENUM as string vs binary": "pqbloom reads ENUM as text (the spec; DuckDB and Spark agree), pyarrow as bytes",
}

_DUCK: dict[str, Any] = {}


def compare_arrow(ours: pa.Table, theirs: pa.Table, what: str, *, enum_names: frozenset[str] = frozenset()) -> list[str]:
    """``compare_arrow`` of ``tests.integration.real_world_support``; tables without rows compare by names and types only
    (pyarrow cannot combine zero chunks of a nested extension type)."""
    if ours.num_rows == theirs.num_rows == 0 and ours.column_names == theirs.column_names:
        return [f"{what}: column {n!r} is {canon_type(a.type)}, expected {canon_type(b.type)}"
                for n, a, b in zip(theirs.column_names, ours.schema, theirs.schema)
                if canon_type(a.type) != canon_type(b.type) and n not in enum_names]
    return _compare_tables(ours, theirs, what, enum_names=enum_names)


def duck() -> Any:
    """One DuckDB connection per process (one thread: the machine is shared)."""
    if "con" not in _DUCK:
        import duckdb

        _DUCK["con"] = duckdb.connect(config={"threads": 1})
    return _DUCK["con"]


@dataclass
class Outcome:
    """What :func:`check_file` found: problems (must be empty), and what was exercised."""

    path: str
    problems: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    oracle: str = ""
    rows: int = 0
    filters: int = 0
    bloom_chunks: int = 0
    bloom_values: int = 0


def _sql_source(path: Path) -> str:
    p = str(path).replace("'", "''")
    if path.is_dir():
        p = p.rstrip("/") + "/**/*.parquet"
    return f"read_parquet('{p}', hive_partitioning = false)"


def duck_arrow(path: Path) -> tuple[list[tuple[str, str]], pa.Table | None, list[Any]]:
    """DuckDB's column types, its reading as an Arrow table (None when it cannot export one) and its rows."""
    con = duck()
    src = _sql_source(path)
    types = [(r[0], r[1]) for r in con.sql(f"DESCRIBE SELECT * FROM {src}").fetchall()]
    try:
        return types, con.sql(f"SELECT * FROM {src}").to_arrow_table(), []
    except Exception:  # noqa: BLE001 - a type DuckDB cannot export to Arrow: Python rows instead
        return types, None, con.sql(f"SELECT * FROM {src}").fetchall()


def _duck_rows(path: Path) -> list[Any]:
    return duck().sql(f"SELECT * FROM {_sql_source(path)}").fetchall()


def check_file(path: str | os.PathLike[str], scratch: str | os.PathLike[str], *, seed: int = 0,
               write_back: bool = True) -> Outcome:
    """All the checks of the module docstring on ``path``; ``scratch`` is a directory for write-backs."""
    path = Path(path)
    out = Outcome(str(path))
    rng = np.random.default_rng(seed)
    try:
        at = pq.read_table(path)
    except Exception as exc:  # noqa: BLE001 - pyarrow refuses: DuckDB is the oracle
        at = None
        pa_error = f"{type(exc).__name__}: {exc}"
    try:
        t = pqbloom.read_table(path)
        pq_error = None
    except ParquetError as exc:
        t, pq_error = None, f"{type(exc).__name__}: {exc}"
    except Exception as exc:  # noqa: BLE001 - an untyped error is a finding whatever the peers do
        out.problems.append(f"read: untyped {type(exc).__name__}: {exc}\n{traceback.format_exc()[-1500:]}")
        return out

    if at is None:
        try:
            rows = _duck_rows(path)
        except Exception as exc:  # noqa: BLE001
            out.oracle = "refused"
            if t is not None:
                out.problems.append(f"pyarrow ({pa_error}) and DuckDB ({exc}) refuse the file, pqbloom reads it")
            return out
        out.oracle = "duckdb"
        out.notes.append(f"pyarrow refuses it: {pa_error}")
        if t is None:
            out.problems.append(f"DuckDB reads it, pqbloom refuses: {pq_error}")
            return out
        out.rows = t.num_rows
        out.problems.extend(_compare_with_duck_rows(t, rows))
        return out

    footer_rows = sum(pq.ParquetFile(f).metadata.num_rows for f in _files(path))
    if at.num_rows != footer_rows:
        # pyarrow loses rows (a pyarrow bug, see the test module): DuckDB is the oracle when it reads them all
        out.notes.append(f"pyarrow reads {at.num_rows} of the footer's {footer_rows} rows: DuckDB is the oracle")
        out.oracle = "duckdb"
        if t is None:
            out.problems.append(f"pqbloom refuses the file: {pq_error}")
            return out
        out.rows = t.num_rows
        out.problems.extend(_compare_with_duck_arrow(t, path, footer_rows))
        return out
    out.oracle, out.rows = "pyarrow", at.num_rows
    if t is None:
        out.problems.append(f"pyarrow reads it, pqbloom refuses: {pq_error}")
        return out
    pq_schema = _parquet_schema(path)
    enum_names = frozenset(c.name for c in pq_schema if c.logical_type.type == "ENUM")
    out.problems.extend(_compare_read(t, at, enum_names, out.notes))
    if out.problems:
        return out  # the later checks compare against the same reading
    out.problems.extend(_check_filters(path, at, pq_schema, rng, out))
    out.problems.extend(_check_bloom(path, out))
    if write_back:
        out.problems.extend(_check_write_back(path, t, at, Path(scratch), enum_names))
    return out


def _parquet_schema(path: Path) -> list[Any]:
    f = path if path.is_file() else sorted(Path(p) for p in glob.glob(str(path / "**" / "*.parquet"),
                                                                        recursive=True))[0]
    s = pq.ParquetFile(f).schema
    return [s.column(i) for i in range(len(s))]


def _files(path: Path) -> list[Path]:
    if path.is_file():
        return [path]
    return sorted(Path(p) for p in glob.glob(str(path / "**" / "*.parquet"), recursive=True)
                  if not Path(p).name.startswith(("_", ".")))


# ---------------------------------------------------------------------------
# reading
# ---------------------------------------------------------------------------
def _compare_read(t: Any, at: pa.Table, enum_names: frozenset[str], notes: list[str]) -> list[str]:
    if t.num_rows != at.num_rows:
        return [f"read: {t.num_rows} rows, pyarrow {at.num_rows}"]
    if t.column_names != at.column_names:
        return [f"read: columns {t.column_names}, pyarrow {at.column_names}"]
    try:
        ta = t.to_arrow()
    except Exception as exc:  # noqa: BLE001
        return [f"to_arrow(): {type(exc).__name__}: {exc}"]
    problems = compare_arrow(ta, at, "to_arrow()", enum_names=enum_names)
    try:
        d = t.to_pydict()
    except Exception as exc:  # noqa: BLE001
        return [*problems, f"to_pydict(): {type(exc).__name__}: {exc}"]
    for i, name in enumerate(at.column_names):
        diff = pydict_difference(d[name], at.column(i), at.schema.field(i), enum_names, notes)
        if not diff and _zoned(at.schema.field(i).type):
            # pqbloom gives aware datetimes in UTC (table.py), pyarrow in the column's zone: the instants must
            # be equal (checked exactly here, beyond pydict_difference's conversion to the column's type)
            ft = at.schema.field(i).type
            diff = first_difference(_in_utc(d[name]), _in_utc([_as_pqbloom_values(v, ft)
                                                                for v in at.column(i).to_pylist()]))
        if diff:
            problems.append(f"to_pydict(): column {name!r} differs: {diff}")
    return problems


def _zoned(t: pa.DataType) -> bool:
    """Whether ``t`` holds a timestamp whose zone is not UTC."""
    if pa.types.is_timestamp(t):
        return t.tz is not None and t.tz not in ("UTC", "+00:00", "Etc/UTC")
    if isinstance(t, pa.BaseExtensionType):
        return _zoned(t.storage_type)
    return any(_zoned(t.field(k).type) for k in range(t.num_fields)) if pa.types.is_nested(t) else False


def _in_utc(v: Any) -> Any:
    """``v`` with every aware datetime (nested in lists and dicts too) moved to UTC."""
    if isinstance(v, dt.datetime) and v.tzinfo is not None:
        return v.astimezone(dt.timezone.utc)
    if isinstance(v, list):
        return [_in_utc(x) for x in v]
    if isinstance(v, tuple):  # a map's (key, value)
        return tuple(_in_utc(x) for x in v)
    if isinstance(v, dict):
        return {k: _in_utc(x) for k, x in v.items()}
    return v


def _as_pqbloom_values(v: Any, t: pa.DataType) -> Any:
    """pyarrow's Python value in pqbloom's form (the same: maps as lists of (key, value) tuples)."""
    if v is None:
        return None
    if pa.types.is_map(t):
        return [(_as_pqbloom_values(k, t.key_type), _as_pqbloom_values(x, t.item_type)) for k, x in v]
    if pa.types.is_struct(t):
        return {k: _as_pqbloom_values(x, t.field(k).type) for k, x in v.items()}
    if pa.types.is_list(t) or pa.types.is_large_list(t) or pa.types.is_fixed_size_list(t):
        return [_as_pqbloom_values(x, t.value_type) for x in v]
    return v


def _compare_with_duck_arrow(t: Any, path: Path, footer_rows: int) -> list[str]:
    """pqbloom's ``to_arrow()`` against DuckDB's Arrow reading, each DuckDB column cast to pqbloom's type."""
    try:
        _, da, _ = duck_arrow(path)
    except Exception as exc:  # noqa: BLE001
        return [f"pyarrow loses rows and DuckDB refuses the file ({exc}): no oracle"]
    if da is None or da.num_rows != footer_rows:
        return [f"pyarrow loses rows and DuckDB reads {None if da is None else da.num_rows} of {footer_rows}: no oracle"]
    ta = t.to_arrow()
    if ta.num_rows != footer_rows:
        return [f"read: {ta.num_rows} rows, the footer and DuckDB {footer_rows}"]
    out = []
    for name in ta.column_names:
        try:
            theirs = da.column(name).cast(ta.schema.field(name).type)
        except Exception as exc:  # noqa: BLE001
            out.append(f"column {name!r}: DuckDB's reading does not cast to pqbloom's type: {exc}")
            continue
        diff = arrays_difference(ta.column(name), theirs)
        if diff:
            out.append(f"to_arrow(): column {name!r} differs from DuckDB: {diff}")
    return out


def _compare_with_duck_rows(t: Any, rows: list[Any]) -> list[str]:
    if len(rows) != t.num_rows:
        return [f"read: {t.num_rows} rows, DuckDB {len(rows)}"]
    d = t.to_pydict()
    out = []
    for i, name in enumerate(t.column_names):
        diff = first_difference(d[name], [r[i] for r in rows])
        if diff:
            out.append(f"to_pydict(): column {name!r} differs from DuckDB: {diff}")
    return out


# ---------------------------------------------------------------------------
# filters
# ---------------------------------------------------------------------------
def _decoded(a: Any) -> pa.Array:
    a = a.combine_chunks() if isinstance(a, pa.ChunkedArray) else a
    if isinstance(a.type, pa.BaseExtensionType):
        a = a.storage
    if pa.types.is_dictionary(a.type):
        a = a.dictionary_decode()
    return a


def _filter_targets(at: pa.Table, pq_schema: list[Any]) -> list[tuple[str, str, pa.Array, pa.DataType]]:
    """(kind, pqbloom path, row-aligned values or list array, value type) of the leaves a filter can name:
    ``flat`` (top-level or inside structs only) and ``exists`` (the elements of a top-level list)."""
    out = []
    for col in pq_schema:
        parts = col.path.split(".")
        if parts[0] not in at.column_names:
            continue
        arr = _decoded(at.column(parts[0]))
        ext = at.schema.field(parts[0]).type
        i = 1
        while pa.types.is_struct(arr.type) and i < len(parts):
            names = [arr.type.field(k).name for k in range(arr.type.num_fields)]
            if parts[i] not in names:
                break
            ext = arr.type.field(parts[i]).type
            arr = _decoded(arr.flatten()[names.index(parts[i])])
            i += 1
        if i == len(parts) and not _is_nested(arr.type):
            out.append(("flat", col.path, arr, ext))
        elif (pa.types.is_list(arr.type) or pa.types.is_large_list(arr.type)) and \
                not _is_nested(arr.type.value_type) and i == 1:
            out.append(("exists", col.path, arr, arr.type.value_type))
    return [o for o in out if _filterable(o[2].type.value_type if o[0] == "exists" else o[2].type)]


def _is_nested(t: pa.DataType) -> bool:
    return pa.types.is_nested(t)


def _filterable(t: pa.DataType) -> bool:
    # durations, intervals and half floats are no filter literals; null columns have nothing to find
    return not (pa.types.is_duration(t) or pa.types.is_interval(t) or pa.types.is_float16(t) or pa.types.is_null(t)
                or pa.types.is_dictionary(t) or isinstance(t, pa.BaseExtensionType))


def _literal(v: Any, ext: pa.DataType) -> Any:
    """The value a user passes to ``pqbloom.field(...) == v`` for pyarrow's Python value ``v``."""
    if isinstance(ext, pa.BaseExtensionType) and ext.extension_name == "arrow.uuid" and isinstance(v, bytes):
        return uuid.UUID(bytes=v)
    return v


def _sortable(v: Any) -> bool:
    return v is not None and not (isinstance(v, float) and math.isnan(v))


def _check_filters(path: Path, at: pa.Table, pq_schema: list[Any], rng: np.random.Generator,
                   out: Outcome) -> list[str]:
    targets = _filter_targets(at, pq_schema)
    if not targets or at.num_rows == 0:
        return []
    problems = []
    chosen = rng.choice(len(targets), min(2, len(targets)), replace=False).tolist()
    for k in chosen:
        kind, leaf, arr, ext = targets[k]
        values = pc.list_flatten(arr) if kind == "exists" else arr
        present = [v for v in values.to_pylist() if v is not None]
        typ = values.type
        cases: list[tuple[str, Any, Any]] = []  # (description, pqbloom filter, pyarrow element mask)
        f = pqbloom.field(leaf)
        if present:
            v = present[int(rng.integers(len(present)))]
            lit = _literal(v, ext)
            sv = pa.scalar(v, typ)
            cases.append((f"{leaf} == {v!r}", f == lit, pc.equal(values, sv)))
            absent = _absent_value(typ, set(map(_key, present)), rng)
            if absent is not None:
                cases.append((f"{leaf} == {absent!r} (absent)", f == _literal(absent, ext),
                              pc.equal(values, pa.scalar(absent, typ))))
                if kind == "flat":
                    cases.append((f"{leaf} in [{v!r}, {absent!r}]", f.isin([lit, _literal(absent, ext)]),
                                  pc.is_in(values, pa.array([v, absent], typ))))
            ordered = [x for x in present if _sortable(x)]
            if len(ordered) >= 2 and not pa.types.is_boolean(typ) and _orderable(typ):
                a, b = (ordered[int(i)] for i in rng.integers(len(ordered), size=2))
                lo, hi = (a, b) if _key(a) <= _key(b) else (b, a)
                # on list elements each comparison is its own EXISTS (pqbloom's documented semantics), so the
                # range selects rows with some element >= lo and some element <= hi
                cases.append((f"{lo!r} <= {leaf} <= {hi!r}", (f >= _literal(lo, ext)) & (f <= _literal(hi, ext)),
                              (pc.greater_equal(values, pa.scalar(lo, typ)), pc.less_equal(values, pa.scalar(hi, typ)))))
        if kind == "flat":
            cases.append((f"{leaf} is null", f.is_null(), pc.is_null(values)))
        for what, expr, mask in cases:
            out.filters += 1
            rows = pc.and_(_row_mask(kind, arr, mask[0]), _row_mask(kind, arr, mask[1])) if isinstance(mask, tuple) \
                else _row_mask(kind, arr, mask)
            expected = at.filter(rows)
            try:
                got = pqbloom.read_table(path, filters=expr)
            except Exception as exc:  # noqa: BLE001
                problems.append(f"filter {what}: {type(exc).__name__}: {exc}")
                continue
            try:
                ga = got.to_arrow()
            except Exception as exc:  # noqa: BLE001
                problems.append(f"filter {what}: to_arrow(): {type(exc).__name__}: {exc}")
                continue
            problems.extend(compare_arrow(ga, expected, f"filter {what}"))
    return problems


def _orderable(t: pa.DataType) -> bool:
    return not (pa.types.is_fixed_size_binary(t) or pa.types.is_boolean(t))


def _row_mask(kind: str, arr: pa.Array, mask: pa.Array) -> pa.Array:
    mask = pc.fill_null(mask, False)
    if kind == "flat":
        return mask
    parents = pc.list_parent_indices(arr).to_numpy()
    rows = np.zeros(len(arr), bool)
    rows[parents[mask.to_numpy(zero_copy_only=False)]] = True
    return pa.array(rows)


def _key(v: Any) -> Any:
    """A hashable, orderable stand-in for a Python value (aware datetimes as UTC instants)."""
    if isinstance(v, dt.datetime) and v.tzinfo is not None:
        return (v.astimezone(dt.timezone.utc).replace(tzinfo=None), getattr(v, "nanosecond", 0))
    if isinstance(v, dt.datetime):
        return (v, getattr(v, "nanosecond", 0))
    if isinstance(v, float) and math.isnan(v):
        return "nan"
    return v


def _absent_value(t: pa.DataType, present: set[Any], rng: np.random.Generator) -> Any:
    from .peer_tables import Shape, random_array

    cand = random_array(t, 64, rng, Shape(64, null_p=0.0, special_p=0.3, seed=0), nullable=False).to_pylist()
    for v in cand:
        if _key(v) not in present and _sortable(v):
            return v
    return None


# ---------------------------------------------------------------------------
# Bloom filters
# ---------------------------------------------------------------------------
def _check_bloom(path: Path, out: Outcome) -> list[str]:
    problems = []
    for f in _files(path):
        pf = pq.ParquetFile(f, arrow_extensions_enabled=False)  # pyarrow cannot flatten some nested extensions
        md = pf.metadata
        schema = pf.schema
        with pqbloom.ParquetFile(f) as ours:
            for i in range(md.num_row_groups):
                rg = md.row_group(i)
                for j in range(rg.num_columns):
                    cc = rg.column(j)
                    if cc.bloom_filter_offset is None:
                        continue
                    col = schema.column(j)
                    try:
                        leaf = _leaf_values(pf.read_row_group(i, columns=[col.path]), col)
                        if not len(leaf):
                            continue  # only nulls: nothing to probe
                        values = physical(leaf, col)
                    except _NotProbed as exc:
                        out.notes.append(f"Bloom filter of {col.path} in row group {i} not probed: {exc}")
                        continue
                    out.bloom_chunks += 1
                    out.bloom_values += len(leaf)
                    where = f"{f.name}: row group {i}, column {col.path}"
                    try:
                        bf = ours.bloom_filter(i, col.path)
                        if bf is None:
                            problems.append(f"Bloom filter {where}: pqbloom finds none, pyarrow's footer has one")
                            continue
                        hits = np.asarray(bf.might_contain_many(values))
                        if not hits.all():
                            k = int(np.flatnonzero(~hits)[0])
                            problems.append(f"Bloom filter {where}: {int((~hits).sum())} of {len(hits)} present values "
                                            f"test absent, first {leaf[k].as_py()!r}")
                            continue
                        for k in range(min(3, len(leaf))):
                            # the stored value, and the logical value pyarrow reads (datetime, Decimal...)
                            if not ours.bloom_filter_might_contain(i, col.path, _scalar(values, k), physical=True):
                                problems.append(f"Bloom filter {where}: probe of stored {leaf[k].as_py()!r} says absent")
                            if not ours.bloom_filter_might_contain(i, col.path, leaf[k].as_py()):
                                problems.append(f"Bloom filter {where}: probe of {leaf[k].as_py()!r} says absent")
                    except Exception as exc:  # noqa: BLE001
                        problems.append(f"Bloom filter {where}: {type(exc).__name__}: {exc}")
    return problems


class _NotProbed(Exception):
    pass


def _leaf_values(tbl: pa.Table, col: Any) -> pa.Array:
    """The non-null values of the one leaf ``col`` of a pyarrow read of that leaf."""
    a = _decoded(tbl.column(0))
    names = col.path.split(".")[1:]
    while True:
        t = a.type
        if isinstance(t, pa.BaseExtensionType) or pa.types.is_dictionary(t):
            a = _decoded(a)
        elif pa.types.is_struct(t):
            if t.num_fields != 1:
                raise _NotProbed(f"struct of {t.num_fields} fields")
            a = a.flatten()[0]
        elif pa.types.is_map(t):
            a = a.keys if names and names[-1] == t.key_field.name else a.items
        elif pa.types.is_list(t) or pa.types.is_large_list(t) or pa.types.is_fixed_size_list(t):
            a = a.flatten()
        else:
            return a.drop_null()


def physical(a: pa.Array, col: Any) -> Any:
    """pyarrow's values as the physical values a Bloom filter hashes (PLAIN encoding): numpy integers
    and floats, bytes, or rows of fixed-width bytes. Built without pqbloom."""
    t = a.type
    ptype = col.physical_type
    lt = col.logical_type.to_json()
    if ptype in ("INT32", "INT64"):
        target = np.int32 if ptype == "INT32" else np.int64
        if pa.types.is_decimal(t):
            return np.array([_unscaled(v, t.scale) for v in a.to_pylist()], np.int64).astype(target)
        if pa.types.is_integer(t):
            v = a.to_numpy(zero_copy_only=False)
            return v.view(target) if v.dtype.kind == "u" and v.dtype.itemsize == np.dtype(target).itemsize \
                else v.astype(target)
        if pa.types.is_date(t):
            return pc.cast(pc.cast(a, pa.date32()), pa.int32()).to_numpy(zero_copy_only=False).astype(target)
        if pa.types.is_timestamp(t) or pa.types.is_time(t) or pa.types.is_duration(t):
            unit = {"milliseconds": "ms", "microseconds": "us", "nanoseconds": "ns"}.get(_json_unit(lt), None)
            if unit is not None and not pa.types.is_duration(t):
                a = pc.cast(a, pa.timestamp(unit, t.tz) if pa.types.is_timestamp(t) else
                            (pa.time32(unit) if unit == "ms" else pa.time64(unit)))
            storage = pa.int32() if pa.types.is_time32(a.type) else pa.int64()
            return pc.cast(a, storage).to_numpy(zero_copy_only=False).astype(target)
    if ptype == "FLOAT" and pa.types.is_float32(t):
        return a.to_numpy(zero_copy_only=False)
    if ptype == "DOUBLE" and pa.types.is_float64(t):
        return a.to_numpy(zero_copy_only=False)
    if ptype == "BYTE_ARRAY":
        if pa.types.is_decimal(t):
            raise _NotProbed("a BYTE_ARRAY decimal's bytes depend on the writer")
        if pa.types.is_string(t) or pa.types.is_large_string(t) or pa.types.is_string_view(t):
            return [s.encode("utf-8") for s in a.to_pylist()]
        if pa.types.is_binary(t) or pa.types.is_large_binary(t) or pa.types.is_binary_view(t):
            return a.to_pylist()
    if ptype == "FIXED_LEN_BYTE_ARRAY":
        w = col.length
        if pa.types.is_fixed_size_binary(t) and t.byte_width == w:
            return np.frombuffer(b"".join(a.to_pylist()), np.uint8).reshape(len(a), w)
        if pa.types.is_float16(t) and w == 2:
            return a.to_numpy(zero_copy_only=False).astype("<f2").view(np.uint8).reshape(len(a), 2)
        if pa.types.is_decimal(t):
            rows = [_unscaled(v, t.scale).to_bytes(w, "big", signed=True) for v in a.to_pylist()]
            return np.frombuffer(b"".join(rows), np.uint8).reshape(len(a), w)
    if ptype in ("BOOLEAN", "INT96"):
        raise _NotProbed(f"{ptype} values")
    raise AssertionError(f"no physical conversion of pyarrow {t} to {ptype} ({lt}): add one so the filter is probed")


def _unscaled(v: Any, scale: int) -> int:
    """The exact unscaled integer of a Decimal (``scaleb`` alone rounds to the context's 28 digits)."""
    return int(v.scaleb(scale, _EXACT))


_EXACT = decimal.Context(prec=200)


def _json_unit(lt: str) -> str:
    import json

    try:
        return str(json.loads(lt).get("timeUnit", ""))
    except ValueError:
        return ""


def _scalar(values: Any, k: int) -> Any:
    if isinstance(values, list):
        return values[k]
    v = values[k]
    if v.ndim == 1:
        return v.tobytes()
    return v.item()


# ---------------------------------------------------------------------------
# write-back
# ---------------------------------------------------------------------------
def _check_write_back(path: Path, t: Any, at: pa.Table, scratch: Path, enum_names: frozenset[str]) -> list[str]:
    target = scratch / "write-back.parquet"
    try:
        pqbloom.write_table(t, target)
    except Exception as exc:  # noqa: BLE001
        return [f"write-back: pqbloom.write_table of its reading: {type(exc).__name__}: {exc}"]
    try:
        problems = []
        try:
            back = pq.read_table(target)
        except Exception as exc:  # noqa: BLE001
            return [f"write-back: pyarrow cannot read it: {type(exc).__name__}: {exc}"]
        problems.extend(compare_arrow(back, at, "write-back read by pyarrow", enum_names=enum_names))
        try:
            ref = duck_arrow(path)
        except Exception:  # noqa: BLE001 - DuckDB refuses the original: nothing to compare with
            return problems
        try:
            mine = duck_arrow(target)
        except Exception as exc:  # noqa: BLE001
            return [*problems, f"write-back: DuckDB cannot read it: {type(exc).__name__}: {exc}"]
        problems.extend(_duck_difference(mine, ref))
        return problems
    finally:
        target.unlink(missing_ok=True)


def _duck_difference(mine: Any, ref: Any) -> list[str]:
    (types, tbl, rows), (rtypes, rtbl, rrows) = mine, ref
    if types != rtypes:
        return [f"write-back read by DuckDB: types {types}, DuckDB reads the original as {rtypes}"]
    if tbl is not None and rtbl is not None:
        if tbl.equals(rtbl):
            return []
        rows, rrows = tbl.to_pylist(), rtbl.to_pylist()
        keys = [n for n, _ in types]
        rows = [[r[k] for k in keys] for r in rows]
        rrows = [[r[k] for k in keys] for r in rrows]
    out = []
    for i, (name, _) in enumerate(types):
        diff = first_difference([r[i] for r in rows], [r[i] for r in rrows])
        if diff:
            out.append(f"write-back read by DuckDB: column {name!r} differs: {diff}")
    return out
