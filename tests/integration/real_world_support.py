"""The real-world corpus check, one file at a time, in worker processes.

:func:`check_file` reads one file of ``../shared/fixtures/real-world`` with pyarrow, DuckDB and
pqbloom, compares pqbloom's reading with the peers', writes what it read back with pqbloom (from
the pqbloom Table and from pyarrow's Table) and reads those files with pyarrow and DuckDB. It
returns plain facts (what each reader did, the differences found); ``tests/integration/test_real_world.py``
holds the expectations and decides.

:func:`run_corpus` runs :func:`check_file` over many files in a small pool of worker processes
(each imports pyarrow, DuckDB and pqbloom once), with a per-file timeout and an address-space cap
per worker: a hang or a blow-up kills that worker and becomes a result naming the file.

``python -m tests.integration.real_world_support [PATH ...]`` prints the results as JSON (all files by default).
"""

from __future__ import annotations

import decimal
import json
import math
import multiprocessing as mp
import os
import re
import shutil
import sys
import tempfile
import time
import traceback
from multiprocessing.connection import wait
from pathlib import Path
from typing import Any

from tests.paths import REAL_WORLD as CORPUS

#: a refusal must come this quickly, with at most this much traced allocation (files are < 5 MB)
REFUSAL_SECONDS = 5.0
REFUSAL_BYTES = 256 << 20


def corpus_files() -> list[tuple[str, str, str]]:
    """(path, pyarrow 26, duckdb 2.0) for every file listed in FILES.tsv; none when the corpus is absent (the
    tests that need it are then skipped naming it: tests/corpora.py)."""
    listing = CORPUS / "FILES.tsv"
    if not listing.is_file():
        return []
    rows = listing.read_text().splitlines()[1:]
    return [(r.split("\t")[0], r.split("\t")[2], r.split("\t")[3]) for r in rows if r.strip()]


# ---------------------------------------------------------------------------
# comparing Arrow types and values
# ---------------------------------------------------------------------------
def canon_type(t: Any) -> str:
    """An Arrow type with the differences that carry no information removed: offset widths
    (large_/view types), dictionary encoding (pyarrow restores it from a stored Arrow schema),
    and the names of list and map child fields (which follow each writer's Parquet element names)."""
    import pyarrow as pa
    import pyarrow.types as pat

    if isinstance(t, pa.BaseExtensionType):
        return f"ext<{t.extension_name}>"
    if pat.is_dictionary(t):
        return canon_type(t.value_type)
    if pat.is_large_string(t) or pat.is_string_view(t):
        return "string"
    if pat.is_large_binary(t) or pat.is_binary_view(t):
        return "binary"
    if pat.is_map(t):
        nn = "" if t.item_field.nullable else " not null"
        return f"map<{canon_type(t.key_type)}, {canon_type(t.item_type)}{nn}>"
    if pat.is_list(t) or pat.is_large_list(t) or pat.is_list_view(t) or pat.is_large_list_view(t):
        nn = "" if t.value_field.nullable else " not null"
        return f"list<{canon_type(t.value_type)}{nn}>"
    if pat.is_fixed_size_list(t):
        nn = "" if t.value_field.nullable else " not null"
        return f"list[{t.list_size}]<{canon_type(t.value_type)}{nn}>"
    if pat.is_struct(t):
        return "struct<" + ", ".join(
            f"{t.field(i).name}: {canon_type(t.field(i).type)}{'' if t.field(i).nullable else ' not null'}"
            for i in range(t.num_fields)) + ">"
    return str(t)


def _storage_type(t: Any) -> Any:
    """The type whose Python values compare exactly: texts as bytes (invalid UTF-8 stays comparable),
    temporal types as their integers, extension types as their storage."""
    import pyarrow as pa
    import pyarrow.types as pat

    if isinstance(t, pa.BaseExtensionType):
        return _storage_type(t.storage_type)
    if pat.is_dictionary(t):
        return _storage_type(t.value_type)
    if pat.is_string(t) or pat.is_large_string(t) or pat.is_string_view(t) or pat.is_binary_view(t) \
            or pat.is_large_binary(t):
        return pa.binary()
    if pat.is_timestamp(t) or pat.is_duration(t) or pat.is_date64(t) or pat.is_time64(t):
        return pa.int64()
    if pat.is_date32(t) or pat.is_time32(t):
        return pa.int32()
    return t


def plain(arr: Any) -> Any:
    """``arr`` rebuilt with :func:`_storage_type` all the way down (nulls kept)."""
    import pyarrow as pa
    import pyarrow.types as pat

    if isinstance(arr, pa.ChunkedArray):
        arr = arr.combine_chunks() if arr.num_chunks != 1 else arr.chunk(0)
    t = arr.type
    if isinstance(t, pa.BaseExtensionType):
        return plain(arr.storage)
    if pat.is_dictionary(t):
        return plain(arr.dictionary_decode())
    mask = arr.is_null() if arr.null_count else None
    if pat.is_struct(t):
        kids = [plain(c) for c in arr.flatten()]
        return pa.StructArray.from_arrays(kids, fields=[pa.field(t.field(i).name, kids[i].type)
                                                        for i in range(t.num_fields)], mask=mask) \
            if t.num_fields else arr
    if pat.is_map(t):
        return pa.MapArray.from_arrays(arr.offsets, plain(arr.keys), plain(arr.items), mask=mask)
    if pat.is_list_view(t) or pat.is_large_list_view(t):
        return plain(arr.cast(pa.large_list(t.value_field)))
    if pat.is_list(t) or pat.is_large_list(t):
        cls = pa.ListArray if pat.is_list(t) else pa.LargeListArray
        return cls.from_arrays(arr.offsets, plain(arr.values), mask=mask)
    if pat.is_fixed_size_list(t):
        return plain(arr.cast(pa.list_(t.value_field)))
    st = _storage_type(t)
    if st == t:
        return arr
    if pat.is_string(t) or pat.is_large_string(t) or pat.is_large_binary(t):
        return arr.view(pa.large_binary() if pat.is_large_string(t) or pat.is_large_binary(t)
                        else pa.binary()).cast(pa.binary())
    return arr.cast(st)


def same_value(a: Any, b: Any) -> bool:
    """Deep equality where NaN equals NaN, 0.0 and -0.0 differ, and types matter (1 != 1.0 != True,
    a naive datetime != an aware one, a dict != a list of pairs)."""
    if isinstance(a, float) and isinstance(b, float):
        if math.isnan(a) or math.isnan(b):
            return math.isnan(a) and math.isnan(b)
        return a == b and math.copysign(1, a) == math.copysign(1, b)
    if type(a) is not type(b):
        # a pandas Timestamp (pyarrow's value for nanoseconds) against a datetime: exact instant only
        if _is_timestamp_like(a) and _is_timestamp_like(b):
            return _ts_key(a) == _ts_key(b)
        return False
    if isinstance(a, (list, tuple)):
        return len(a) == len(b) and all(same_value(x, y) for x, y in zip(a, b))
    if isinstance(a, dict):
        return list(a.keys()) == list(b.keys()) and all(same_value(a[k], b[k]) for k in a)
    if hasattr(a, "as_tuple") and hasattr(b, "as_tuple"):  # Decimal: same digits and exponent
        return bool(a.as_tuple() == b.as_tuple()) or (a.is_nan() and b.is_nan())
    if hasattr(a, "utcoffset") and hasattr(a, "tzinfo") and hasattr(a, "hour"):  # datetime, time
        return bool(a == b) and (a.tzinfo is None) == (b.tzinfo is None) and a.utcoffset() == b.utcoffset()
    return bool(a == b)


def _is_timestamp_like(v: Any) -> bool:
    import datetime as dt

    return isinstance(v, dt.datetime)


def _ts_key(v: Any) -> tuple[Any, ...]:
    aware = v.tzinfo is not None
    naive = v.replace(tzinfo=None) - v.utcoffset() if aware else v
    return (naive, getattr(v, "nanosecond", 0), aware)


#: Python value types whose ``==`` is exact (no NaN, sign of zero, exponent or time zone subtleties)
_EXACT_TYPES = frozenset((type(None), bool, int, str, bytes))


def first_difference(a: list[Any], b: list[Any]) -> str | None:
    """Where two lists of Python values first differ (:func:`same_value`), or None."""
    if len(a) != len(b):
        return f"{len(a)} values vs {len(b)}"
    if _fast_equal(a, b):
        return None
    for i, (x, y) in enumerate(zip(a, b)):
        if not same_value(x, y):
            return f"row {i}: {_short(x)} vs {_short(y)}"
    return None


def _fast_equal(a: list[Any], b: list[Any]) -> bool:
    """:func:`same_value` of every pair, decided in bulk for flat columns of one value type (the
    pairwise walk is the slow fallback, and the one that reports the difference)."""
    import decimal

    import numpy as np

    ta, tb = set(map(type, a)), set(map(type, b))
    if ta != tb or len(ta - {type(None)}) > 1:
        return False
    if ta <= _EXACT_TYPES:
        return a == b
    (vt,) = ta - {type(None)}
    nones_a = [x is None for x in a]
    if nones_a != [y is None for y in b]:
        return False
    xs = [x for x in a if x is not None]
    ys = [y for y in b if y is not None]
    if vt is float:  # same bits: NaN equals NaN, 0.0 differs from -0.0
        return bool(np.array_equal(np.array(xs, np.float64).view(np.int64), np.array(ys, np.float64).view(np.int64)))
    if vt is decimal.Decimal:  # the same digits and exponent
        return list(map(str, xs)) == list(map(str, ys))
    return False


def arrays_difference(ours: Any, theirs: Any) -> str | None:
    """Where two Arrow arrays of the same canonical type first differ, or None (Arrow's equality
    first; values one by one only when it says unequal, as it does for NaN)."""
    po, pt = plain(ours), plain(theirs)
    if po.type == pt.type and po.equals(pt):
        return None
    return first_difference(po.to_pylist(), pt.to_pylist())


def _short(v: Any) -> str:
    s = f"{v!r} ({type(v).__name__})"
    return s if len(s) < 200 else s[:200] + "..."


def compare_arrow(ours: Any, theirs: Any, what: str, *, enum_names: frozenset[str] = frozenset()) -> list[str]:
    """Differences between two Arrow tables: row count, names, canonical types, values."""
    out = []
    if ours.num_rows != theirs.num_rows:
        out.append(f"{what}: {ours.num_rows} rows, expected {theirs.num_rows}")
    if ours.column_names != theirs.column_names:
        out.append(f"{what}: columns {ours.column_names}, expected {theirs.column_names}")
        return out
    for i, name in enumerate(theirs.column_names):
        fo, ft = ours.schema.field(i), theirs.schema.field(i)
        co, ct = canon_type(fo.type), canon_type(ft.type)
        enum_column = (co, ct) == ("string", "binary") and name in enum_names
        if co != ct and not enum_column and not _enum_difference(co, ct, enum_names):
            out.append(f"{what}: column {name!r} is {co}, expected {ct}")
            continue
        if fo.nullable != ft.nullable:
            out.append(f"{what}: column {name!r} nullable={fo.nullable}, expected {ft.nullable}")
        try:
            diff = arrays_difference(ours.column(i), theirs.column(i))
        except Exception as exc:  # noqa: BLE001 - any failure to compare is a finding
            diff = f"cannot compare: {type(exc).__name__}: {exc}"
        if diff:
            out.append(f"{what}: column {name!r} differs: {diff}")
    return out


def _enum_difference(ours: str, theirs: str, enum_names: frozenset[str]) -> bool:
    """pqbloom reads ENUM as string (the spec: interpret as UTF-8; DuckDB and Spark read text), pyarrow
    as binary: accepted where the only differences are such leaves."""
    if not enum_names:
        return False
    pat = re.escape(theirs)
    for name in enum_names:
        pat = pat.replace(re.escape(f"{name}: binary"), re.escape(f"{name}: ") + "(binary|string)")
    pat = pat.replace(re.escape("list<binary"), "list<(binary|string)")
    return re.fullmatch(pat, ours) is not None


# ---------------------------------------------------------------------------
# annotations of a written footer, as pyarrow reads them
# ---------------------------------------------------------------------------
_STRUCTURAL = {"List", "Map", "MapKeyValue"}


def annotations(path: str | Path, *, physical: bool = True, oracle: str = "pyarrow") -> list[str]:
    """The non-structural annotations of a file's schema in depth-first order, as ``oracle`` (pyarrow,
    or DuckDB's ``parquet_schema`` where pyarrow cannot open the file) reports them: groups by their
    annotation (VARIANT...), then every leaf as its logical type, converted type and, with
    ``physical``, its physical type. List and map annotations are left out (legacy list forms are
    rewritten in the standard form). pyarrow says which logical types come from a converted type
    only, so a legacy annotation written back in the modern form shows up."""
    if oracle == "duckdb":
        return _duck_annotations(path, physical)
    import pyarrow.parquet as pq

    schema = pq.ParquetFile(path).schema
    out = []
    for line in str(schema).splitlines()[1:]:
        m = re.search(r" \(([A-Z][A-Za-z]*(\([^()]*\))?)\) \{$", line)
        if m and m.group(1) not in _STRUCTURAL:
            out.append(f"group {m.group(1)}")
    for i in range(len(schema)):
        c = schema.column(i)
        # str() has every parameter (to_json leaves out a GEOGRAPHY's algorithm), and whether a logical
        # type comes from a converted type only
        lt = str(c.logical_type).replace(", force_set_converted_type=false", "")
        phys = c.physical_type + (f"({c.length})" if c.physical_type == "FIXED_LEN_BYTE_ARRAY" else "")
        out.append(f"leaf {phys if physical else ''} {lt} {c.converted_type}")
    return out


def _duck_annotations(path: str | Path, physical: bool) -> list[str]:
    rows = _WORKER["duckdb"].sql(
        "SELECT type, type_length, num_children, converted_type, scale, precision, logical_type, duckdb_type "
        f"FROM parquet_schema({_quote(path)})").fetchall()[1:]
    out = []
    for typ, tl, _, ct, scale, precision, lt, dt in rows:
        if typ is None:
            if dt == "VARIANT" or (ct or lt) and ct not in ("LIST", "MAP", "MAP_KEY_VALUE") \
                    and not str(lt).startswith(("ListType", "MapType")):
                out.append(f"group {dt} {ct} {lt}")
        else:
            out.append(f"leaf {(typ, tl) if physical else ''} {ct} {scale} {precision} {lt}")
    return out


def _quote(path: str | Path) -> str:
    return "'" + str(path).replace("'", "''") + "'"


def annotation_differences(ours: list[str], theirs: list[str], what: str) -> list[str]:
    if len(ours) != len(theirs):
        return [f"{what}: {len(ours)} annotated elements, expected {len(theirs)}: {ours} vs {theirs}"]
    return [f"{what}: element {i} is annotated {a}, expected {b}" for i, (a, b) in enumerate(zip(ours, theirs))
            if a != b]


# ---------------------------------------------------------------------------
# one file
# ---------------------------------------------------------------------------
_WORKER: dict[str, Any] = {}


class DuckReading:
    """DuckDB's reading of a file: column types, and the rows (as an Arrow table when DuckDB can
    export it, which compares at C speed; as Python rows, fetched when needed)."""

    def __init__(self, path: str | Path) -> None:
        con = _WORKER["duckdb"]
        self.path = str(path)
        self.types: list[tuple[str, str]] | None = None
        self.arrow: Any = None
        self._rows: list[Any] | None = None
        try:
            self.types = [(r[0], r[1]) for r in
                          con.sql(f"DESCRIBE SELECT * FROM read_parquet({self._quoted})").fetchall()]
            try:
                self.arrow = con.sql(f"SELECT * FROM read_parquet({self._quoted})").to_arrow_table()
            except Exception:  # noqa: BLE001 - a type DuckDB cannot export: rows only
                self._rows = self._fetch()
            self.status = "reads"
        except Exception as exc:  # noqa: BLE001 - DuckDB refuses: recorded
            self.types = None
            self.status = f"{type(exc).__name__}: {str(exc).splitlines()[0][:300]}"

    @property
    def reads(self) -> bool:
        return self.types is not None

    def _fetch(self) -> list[Any]:
        return [list(r) for r in _WORKER["duckdb"].sql(f"SELECT * FROM read_parquet({self._quoted})").fetchall()]

    @property
    def _quoted(self) -> str:
        return _quote(self.path) + ", hive_partitioning = false"

    def rows(self) -> list[Any]:
        if self._rows is None:
            self._rows = self._fetch()
        return self._rows

    def columns(self) -> list[list[Any]]:
        rows = self.rows()
        return [[r[i] for r in rows] for i in range(len(self.types or []))]


def _duck_differences(ours: DuckReading, theirs: DuckReading, what: str) -> list[str]:
    if not ours.reads:
        return [f"{what}: DuckDB refuses it ({ours.status})"]
    out = []
    if ours.types != theirs.types:
        out.append(f"{what}: DuckDB types {ours.types}, expected {theirs.types}")
        return out
    if ours.arrow is not None and theirs.arrow is not None and ours.arrow.schema == theirs.arrow.schema \
            and ours.arrow.equals(theirs.arrow):
        return out
    for name, x, y in zip([n for n, _ in ours.types], ours.columns(), theirs.columns()):
        diff = first_difference(x, y)
        if diff:
            out.append(f"{what}: DuckDB values of column {name!r} differ: {diff}")
    return out


def _enum_names(path: str | Path) -> frozenset[str]:
    import pyarrow.parquet as pq

    try:
        s = pq.ParquetFile(path).schema
    except Exception:  # noqa: BLE001
        return frozenset()
    return frozenset(s.column(i).name for i in range(len(s)) if s.column(i).logical_type.type == "ENUM")


def check_file(rel: str) -> dict[str, Any]:
    """Everything the test needs to know about one corpus file (see the module docstring)."""
    import tracemalloc

    import pyarrow.parquet as pq

    import pqbloom
    from pqbloom.errors import ParquetError
    from tests.tracemalloc_guard import install

    install()  # a spawned worker does not load tests/conftest.py; pyarrow's pool threads race stop() here too

    path = CORPUS / rel
    tmp = Path(_WORKER["tmp"])
    r: dict[str, Any] = {"path": rel, "problems": [], "notes": []}
    problems: list[str] = r["problems"]

    # -- the peers
    try:
        at = pq.read_table(path)
        r["pyarrow"] = "reads"
    except Exception as exc:  # noqa: BLE001
        at = None
        r["pyarrow"] = f"{type(exc).__name__}: {str(exc).splitlines()[0][:300]}"
    duck_orig = DuckReading(path)
    r["duckdb"] = duck_orig.status
    if at is not None:
        r["metadata_keys"] = sorted(k.decode(errors="replace") for k in (at.schema.metadata or {}))

    # -- pqbloom (traced when both peers refuse: a refusal must be quick and small)
    traced = at is None and not duck_orig.reads
    if traced:
        tracemalloc.start()
    # CPU time, not wall time: the bound is about work done (a refusal must not decode the file), and a
    # loaded CI machine stretches wall time; a real hang is caught by the worker's timeout (run_corpus)
    t0 = time.process_time()
    t = None
    try:
        t = pqbloom.read_table(path)
        r["pqbloom"] = "reads"
    except ParquetError as exc:
        r["pqbloom"] = f"{type(exc).__name__}: {exc}"[:400]
        r["error"] = type(exc).__name__
    except Exception as exc:  # noqa: BLE001
        r["pqbloom"] = f"UNTYPED {type(exc).__name__}: {exc}"[:400]
        r["error"] = "UNTYPED"
        problems.append(f"read: untyped {type(exc).__name__}: {exc}\n{traceback.format_exc()[-1500:]}")
    r["seconds"] = round(time.process_time() - t0, 3)
    if traced:
        r["peak_bytes"] = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()

    # -- pqbloom's reading against the oracle
    enum_names = _enum_names(path)
    if t is not None and at is not None:
        r["oracle"] = "pyarrow"
        problems.extend(_compare_with_pyarrow(t, at, enum_names, r["notes"]))
    elif t is not None and duck_orig.reads:
        r["oracle"] = "duckdb"
        problems.extend(_compare_with_duckdb(t, duck_orig))

    # -- write back what was read, read that with the peers
    if t is not None:
        out = tmp / "from_pqbloom.parquet"
        try:
            pqbloom.write_table(t, out)
        except Exception as exc:  # noqa: BLE001
            problems.append(f"write(pqbloom Table): {type(exc).__name__}: {exc}")
            r["write_error"] = type(exc).__name__
        else:
            oracle, ann = _annotation_oracle(path)
            if oracle is None:
                r["notes"].append("no peer reads the schema: annotations not compared")
            problems.extend(_check_written(out, "write(pqbloom Table)", at, duck_orig, ann, enum_names,
                                           oracle=oracle or "pyarrow", physical=True))
        finally:
            out.unlink(missing_ok=True)
    if at is not None:
        out = tmp / "from_pyarrow.parquet"
        ref = tmp / "by_pyarrow.parquet"
        try:  # the oracle for writing a pyarrow Table: what pyarrow itself writes for it
            pq.write_table(at, ref)
            ref_ann: list[str] | None = annotations(ref, physical=False)
            ref_duck: DuckReading | None = DuckReading(ref)
        except Exception as exc:  # noqa: BLE001 - pyarrow cannot write its own reading
            r["pyarrow_write_error"] = f"{type(exc).__name__}: {exc}"
            ref_ann = ref_duck = None
        try:
            pqbloom.write_table(at, out)
        except Exception as exc:  # noqa: BLE001
            r["arrow_write_error"] = f"{type(exc).__name__}: {exc}"
            if ref_ann is not None or not isinstance(exc, ParquetError):
                problems.append(f"write(pyarrow Table): {type(exc).__name__}: {exc}")
        else:
            if ref_ann is None:
                # pqbloom writes what pyarrow refuses to write (a listed decision): its values are compared
                # with the original's; there is no oracle for the annotations
                r["writes_what_pyarrow_refuses"] = True
                ref_duck = duck_orig
            problems.extend(_check_written(out, "write(pyarrow Table)", at, ref_duck, ref_ann, frozenset(),
                                           oracle="pyarrow", physical=False))
        finally:
            out.unlink(missing_ok=True)
            ref.unlink(missing_ok=True)
    return r


def _compare_with_pyarrow(t: Any, at: Any, enum_names: frozenset[str], notes: list[str]) -> list[str]:
    out = []
    if t.num_rows != at.num_rows:
        return [f"read: {t.num_rows} rows, pyarrow {at.num_rows}"]
    if t.column_names != at.column_names:
        return [f"read: columns {t.column_names}, pyarrow {at.column_names}"]
    try:
        ta = t.to_arrow()
    except Exception as exc:  # noqa: BLE001
        return [f"to_arrow(): {type(exc).__name__}: {exc}"]
    out.extend(compare_arrow(ta, at, "to_arrow()", enum_names=enum_names))
    from pqbloom.errors import ParquetError

    for i, name in enumerate(at.column_names):
        try:
            got = t.column(i).to_pylist()
        except ParquetError as exc:  # allowed where pyarrow has no Python values either
            try:
                at.column(i).to_pylist()
            except Exception as pexc:  # noqa: BLE001
                notes.append(f"to_pydict(): column {name!r}: pqbloom raises {type(exc).__name__}, pyarrow "
                             f"{type(pexc).__name__} ({exc})")
                continue
            out.append(f"to_pydict(): column {name!r}: {type(exc).__name__}: {exc}, pyarrow has the values")
            continue
        except Exception as exc:  # noqa: BLE001
            out.append(f"to_pydict(): column {name!r}: untyped {type(exc).__name__}: {exc}")
            continue
        diff = pydict_difference(got, at.column(i), at.schema.field(i), enum_names, notes)
        if diff:
            out.append(f"to_pydict(): column {name!r} differs: {diff}")
    return out


def pydict_difference(got: list[Any], col: Any, f: Any, enum_names: frozenset[str],
                      notes: list[str] | None = None) -> str | None:
    """Where pqbloom's Python values ``got`` differ from pyarrow's column ``col`` (field ``f``).

    Fast: the values must have the Python types pyarrow's own ``as_py`` gives for that Arrow type
    (:func:`python_type_problem`), and converting them to that Arrow type must give pyarrow's array
    exactly. Only when that fails are the values compared one by one with pyarrow's ``to_pylist``
    (NaN-aware), which also names the first difference."""
    import pyarrow as pa

    problem = python_type_problem(got, f.type, f.name, enum_names)
    if problem:
        return problem
    expected = col.combine_chunks() if isinstance(col, pa.ChunkedArray) else col
    try:
        if pa.array(got, type=expected.type).equals(expected):
            return None
    except Exception:  # noqa: BLE001, S110 - not convertible as is: compare value by value
        pass
    try:
        exp = expected.to_pylist()
    except UnicodeDecodeError:
        # text that is not UTF-8: pyarrow has no str for it, pqbloom keeps the bytes as surrogate escapes
        # (documented); compared as bytes
        if notes is not None:
            notes.append(f"to_pydict(): column {f.name!r} holds invalid UTF-8: compared as bytes")
        return first_difference(_encode_text(got), plain(expected).to_pylist())
    except Exception as exc:  # noqa: BLE001 - pyarrow has no Python value for it
        return f"pyarrow's to_pylist raises {type(exc).__name__}: {exc}"
    exp = [_normalize_pyarrow(v, f.type, f.name, enum_names) for v in exp]
    return first_difference(got, exp)


def _encode_text(v: Any) -> Any:
    if isinstance(v, str):
        return v.encode("utf-8", errors="surrogateescape")
    if isinstance(v, list):
        return [_encode_text(x) for x in v]
    if isinstance(v, tuple):  # a map's (key, value)
        return tuple(_encode_text(x) for x in v)
    if isinstance(v, dict):
        return {k: _encode_text(x) for k, x in v.items()}
    return v


def python_type_problem(values: list[Any], t: Any, name: str, enum_names: frozenset[str]) -> str | None:
    """A value whose Python type is not the one pyarrow's ``as_py`` gives for Arrow type ``t``
    (with pqbloom's documented difference: ENUM leaves str), or None."""
    import datetime as dt
    import decimal
    import uuid

    import pyarrow as pa
    import pyarrow.types as pat

    vals = [v for v in values if v is not None]
    if not vals:
        return None
    if isinstance(t, pa.BaseExtensionType):
        want: Any = {"arrow.uuid": uuid.UUID, "arrow.json": str}.get(t.extension_name)
        if want is None:
            return python_type_problem(values, t.storage_type, name, enum_names)
    elif pat.is_dictionary(t):
        return python_type_problem(values, t.value_type, name, enum_names)
    elif pat.is_struct(t):
        if not all(type(v) is dict for v in vals):
            return f"{name}: non-dict value for a struct"
        names = t.names
        if any(list(v) != names for v in vals):
            return f"{name}: struct keys differ from {names}"
        for i in range(t.num_fields):
            c = t.field(i)
            p = python_type_problem([v[c.name] for v in vals], c.type, c.name, enum_names)
            if p:
                return p
        return None
    elif pat.is_map(t):  # lists of (key, value) tuples, as pyarrow's as_py gives them
        if not all(type(v) is list and all(type(p) is tuple and len(p) == 2 for p in v) for v in vals):
            return f"{name}: a map value that is not a list of (key, value) tuples"
        return (python_type_problem([k for v in vals for k, _ in v], t.key_type, t.key_field.name, enum_names)
                or python_type_problem([x for v in vals for _, x in v], t.item_type, t.item_field.name,
                                       enum_names))
    elif pat.is_list(t) or pat.is_large_list(t) or pat.is_fixed_size_list(t):
        if not all(type(v) is list for v in vals):
            return f"{name}: non-list value for a list"
        return python_type_problem([x for v in vals for x in v], t.value_type, t.value_field.name, enum_names)
    elif pat.is_boolean(t):
        want = bool
    elif pat.is_integer(t):
        want = int
    elif pat.is_floating(t):
        want = float
    elif pat.is_string(t) or pat.is_large_string(t) or pat.is_string_view(t):
        want = str
    elif pat.is_binary(t) or pat.is_large_binary(t) or pat.is_fixed_size_binary(t) or pat.is_binary_view(t):
        want = str if name in enum_names else bytes
    elif pat.is_decimal(t):
        want = decimal.Decimal
    elif pat.is_timestamp(t):
        kinds = {(isinstance(v, dt.datetime), v.tzinfo is not None) for v in vals if hasattr(v, "tzinfo")}
        if len(kinds) != 1 or len([v for v in vals if not hasattr(v, "tzinfo")]) or \
                kinds != {(True, t.tz is not None)}:
            return f"{name}: timestamp values of types {sorted({type(v).__name__ for v in vals})}, " \
                   f"time zone awareness {sorted(kinds)}; expected {'aware' if t.tz else 'naive'} datetimes"
        return None
    elif pat.is_date(t):
        want = dt.date
    elif pat.is_time(t):
        want = dt.time
    elif pat.is_duration(t):
        want = dt.timedelta
    elif pat.is_null(t):
        return f"{name}: non-null value in a null column"
    else:
        return None
    got = {type(v) for v in vals}
    if got != {want}:
        return f"{name}: values of type {sorted(x.__name__ for x in got)}, expected {want.__name__}"
    return None


def _normalize_pyarrow(v: Any, t: Any, name: str, enum_names: frozenset[str]) -> Any:
    """pyarrow's Python value in pqbloom's documented form: ENUM leaves decoded."""
    import pyarrow as pa

    if v is None:
        return None
    if isinstance(t, pa.BaseExtensionType):
        return v
    if pa.types.is_dictionary(t):
        return _normalize_pyarrow(v, t.value_type, name, enum_names)
    if pa.types.is_struct(t):
        return {k: _normalize_pyarrow(x, t.field(k).type, k, enum_names) for k, x in v.items()}
    if pa.types.is_list(t) or pa.types.is_large_list(t) or pa.types.is_fixed_size_list(t):
        return [_normalize_pyarrow(x, t.value_type, t.value_field.name, enum_names) for x in v]
    if pa.types.is_map(t):
        return [(_normalize_pyarrow(k, t.key_type, t.key_field.name, enum_names),
                 _normalize_pyarrow(x, t.item_type, t.item_field.name, enum_names)) for k, x in v]
    if isinstance(v, bytes) and name in enum_names:
        return v.decode("utf-8", errors="surrogateescape")
    return v


def _compare_with_duckdb(t: Any, duck: DuckReading) -> list[str]:
    rows = duck.rows()
    if len(rows) != t.num_rows:
        return [f"read: {t.num_rows} rows, DuckDB {len(rows)}"]
    out = []
    d = t.to_pydict()
    for (name, dtype), exp in zip(duck.types or [], duck.columns()):
        got = d[name]
        if dtype == "DOUBLE" and any(isinstance(v, decimal.Decimal) for v in got):
            # DuckDB reads a DECIMAL wider than 38 digits as DOUBLE: compared as the nearest doubles
            got = [None if v is None else float(v) for v in got]
        diff = first_difference(got, exp)
        if diff:
            out.append(f"to_pydict(): column {name!r} differs from DuckDB: {diff}")
    return out


def _annotation_oracle(path: Path, physical: bool = True) -> tuple[str | None, list[str] | None]:
    for oracle in ("pyarrow", "duckdb"):
        try:
            return oracle, annotations(path, oracle=oracle, physical=physical)
        except Exception:  # noqa: BLE001 - this peer cannot read the schema
            continue
    return None, None


def _check_written(out: Path, what: str, at: Any, duck_ref: DuckReading | None, ann_ref: list[str] | None,
                   enum_names: frozenset[str], *, oracle: str, physical: bool) -> list[str]:
    """Differences between a file pqbloom wrote and what it should hold: pyarrow's reading ``at``,
    DuckDB's reading ``duck_ref``, the annotations ``ann_ref`` (as ``oracle`` reports them)."""
    import pyarrow.parquet as pq

    problems = []
    if at is not None:
        try:
            back = pq.read_table(out)
        except Exception as exc:  # noqa: BLE001
            problems.append(f"{what}: pyarrow cannot read it: {type(exc).__name__}: {exc}")
        else:
            problems.extend(compare_arrow(back, at, f"{what} read by pyarrow", enum_names=enum_names))
    if duck_ref is not None and duck_ref.reads:
        problems.extend(_duck_differences(DuckReading(out), duck_ref, f"{what} read by DuckDB"))
    if ann_ref is not None:
        try:
            mine = annotations(out, physical=physical, oracle=oracle)
        except Exception as exc:  # noqa: BLE001
            problems.append(f"{what}: {oracle} cannot read its schema: {type(exc).__name__}: {exc}")
        else:
            problems.extend(annotation_differences(mine, ann_ref, f"{what} footer"))
    return problems


# ---------------------------------------------------------------------------
# the pool
# ---------------------------------------------------------------------------
def selftest_check(rel: str) -> dict[str, Any]:
    """A stand-in for :func:`check_file` that misbehaves on purpose (for the pool's own test): ``hang``
    sleeps, ``grow`` allocates without end, ``abort`` kills the process, anything else is clean."""
    if rel == "hang":
        time.sleep(3600)
    elif rel == "grow":
        hog = []
        while True:
            hog.append(bytearray(64 << 20))
    elif rel == "abort":
        os.abort()
    return {"path": rel, "problems": [], "notes": []}


_CHECKS = {"check_file": check_file, "selftest_check": selftest_check}


def _worker_main(conn: Any, tmp: str, mem_bytes: int, check: str) -> None:
    import resource

    resource.setrlimit(resource.RLIMIT_AS, (mem_bytes, mem_bytes))
    import duckdb
    import pyarrow  # noqa: F401
    import pyarrow.parquet  # noqa: F401

    import pqbloom  # noqa: F401

    _WORKER["duckdb"] = duckdb.connect(config={"threads": 1, "memory_limit": "3GB"})
    _WORKER["tmp"] = tmp
    conn.send("ready")
    while True:
        rel = conn.recv()
        if rel is None:
            return
        try:
            res = _CHECKS[check](rel)
        except BaseException as exc:  # noqa: BLE001 - the harness itself failed on this file
            res = {"path": rel, "problems": [f"check crashed: {type(exc).__name__}: {exc}\n"
                                             f"{traceback.format_exc()[-2000:]}"], "notes": []}
        conn.send(res)


class _Worker:
    def __init__(self, ctx: Any, mem_bytes: int, check: str) -> None:
        self.tmp = tempfile.mkdtemp(prefix="pqbloom-real-world-")
        self.conn, child = ctx.Pipe()
        self.proc = ctx.Process(target=_worker_main, args=(child, self.tmp, mem_bytes, check), daemon=True)
        self.proc.start()
        child.close()
        self.task: str | None = None
        self.started = 0.0
        self.created = time.monotonic()
        self.ready = False

    def stop(self, kill: bool = False) -> None:
        if kill:
            self.proc.kill()
        else:
            try:
                self.conn.send(None)
            except OSError:
                pass
        self.proc.join(10)
        if self.proc.is_alive():
            self.proc.kill()
            self.proc.join()
        shutil.rmtree(self.tmp, ignore_errors=True)


def run_corpus(rels: list[str], *, workers: int = 2, timeout: float = 90.0, mem_bytes: int = 12 << 30,
               startup_timeout: float = 120.0, progress: bool = False,
               check: str = "check_file") -> dict[str, dict[str, Any]]:
    """:func:`check_file` for every path in ``rels``, ``workers`` at a time. A file whose check
    exceeds ``timeout`` seconds, or whose worker dies (say, past ``mem_bytes`` of address space),
    gets a result with a problem naming what happened; its worker is replaced."""
    ctx = mp.get_context("spawn")
    todo = list(reversed(rels))
    results: dict[str, dict[str, Any]] = {}
    pool = [_Worker(ctx, mem_bytes, check) for _ in range(min(workers, max(len(rels), 1)))]
    try:
        while len(results) < len(rels):
            for w in pool:
                if w.ready and w.task is None and todo:
                    w.task = todo.pop()
                    w.started = time.monotonic()
                    w.conn.send(w.task)
            now = time.monotonic()
            deadlines = [w.started + timeout - now for w in pool if w.task is not None]
            ready = wait([w.conn for w in pool], timeout=max(0.05, min(deadlines, default=1.0)))
            for i, w in enumerate(pool):
                crashed = None
                if w.conn in ready:
                    try:
                        msg = w.conn.recv()
                    except (EOFError, OSError):
                        w.proc.join(10)
                        crashed = f"worker died (exit code {w.proc.exitcode})"
                    else:
                        if msg == "ready":
                            w.ready = True
                        else:
                            results[msg["path"]] = msg
                            w.task = None
                            if progress:
                                print(f"{len(results)}/{len(rels)} {msg['path']} {time.monotonic() - w.started:.1f}s",
                                      file=sys.stderr, flush=True)
                elif w.task is not None and time.monotonic() - w.started > timeout:
                    crashed = f"timed out after {timeout:.0f} s"
                elif not w.ready and time.monotonic() - w.created > startup_timeout:
                    raise RuntimeError("a corpus worker did not start")
                if crashed is not None:
                    w.stop(kill=True)
                    if not w.ready:
                        raise RuntimeError(f"a corpus worker failed to start: {crashed}")
                    if w.task is not None:
                        results[w.task] = {"path": w.task, "problems": [f"check {crashed}"], "notes": [],
                                           "crashed": crashed}
                    pool[i] = _Worker(ctx, mem_bytes, check)
    finally:
        for w in pool:
            w.stop(kill=w.task is not None)
    return results


if __name__ == "__main__":
    chosen = sys.argv[1:] or [p for p, _, _ in corpus_files()]
    t0 = time.monotonic()
    res = run_corpus(chosen, progress=True)
    json.dump([res[p] for p in chosen], sys.stdout, indent=1, default=str)
    print(f"\n{len(chosen)} files in {time.monotonic() - t0:.1f} s", file=sys.stderr)
    os._exit(0)
