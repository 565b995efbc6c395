"""Tables of the issue #32 benchmark (``bench_lineitem.py``), generated with vectorized numpy, seeded.

* ``lineitem``: shaped like TPC-H's lineitem (its columns, types and value distributions, written
  independently of dbgen): ``l_orderkey`` int64 (ascending, 1-7 lines per order, sparse keys as in
  TPC-H), ``l_partkey`` / ``l_suppkey`` int64, ``l_linenumber`` int32, ``l_quantity``,
  ``l_extendedprice``, ``l_discount``, ``l_tax`` decimal(15,2), ``l_returnflag`` /
  ``l_linestatus`` one-character strings, ``l_shipdate`` / ``l_commitdate`` / ``l_receiptdate``
  dates, ``l_shipinstruct`` (4 values) / ``l_shipmode`` (7 values) strings, ``l_comment`` 10-44
  characters cut at random from a pool of text (nearly all distinct).
* ``events``: timestamps with time zones and strings, some nulls: ``id`` int64, ``created``
  timestamp[us, UTC], ``local`` timestamp[ms, Europe/Paris] (5% null), ``email`` (~all distinct),
  ``category`` (100 values, 5% null).
* ``dict1000``: ``id`` int64, ``key`` a string of 1,000 distinct values (dictionary-encoded by every
  writer), ``x`` float64.
* ``narrow3``: ``id`` int64, ``x`` float64, ``category`` (100 distinct strings): the many-row-groups file.
* ``wide``: ``c0`` .. ``cN`` float64.

Each is a pyarrow Table (the reference form: every other engine's input is converted from it before
any timer). With ``$PQBLOOM_BENCH_CACHE`` naming a directory, a table is kept there as an Arrow IPC
file, so that the memory child (``_harness``) loads it rather than generating it again.
"""

from __future__ import annotations

import functools
import os
from collections.abc import Callable
from typing import Any

import numpy as np
from _data import CACHE_ENV, categories, emails, null_mask

EPOCH_1992 = int(np.datetime64("1992-01-01", "D").astype(np.int64))
CURRENT = int(np.datetime64("1995-06-17", "D").astype(np.int64))  # TPC-H's CURRENTDATE
LAST_ORDER = int(np.datetime64("1998-08-02", "D").astype(np.int64))
INSTRUCT = ["DELIVER IN PERSON", "COLLECT COD", "NONE", "TAKE BACK RETURN"]
MODES = ["REG AIR", "AIR", "RAIL", "SHIP", "TRUCK", "MAIL", "FOB"]
WORDS = ("furiously quickly carefully blithely slyly ironic final regular special pending express bold even "
         "silent unusual fluffy idle ruthless daring busy close careful dogged stealthy thin enticing "
         "deposits packages requests accounts instructions foxes theodolites pinto beans platelets "
         "asymptotes dependencies excuses ideas courts dolphins multipliers sauternes warthogs frets dinos "
         "attainments somas tithes waters sheaves braids hockey players sleep wake are cajole haggle nag "
         "use boost affix detect integrate maintain nod was lose sublate solve thrash promise engage "
         "hinder print x-ray breach eat grow impress mold poach serve run dazzle snooze doze unwind kindle "
         "play hang believe doubt about above according across after against along alongside among "
         "around at atop before behind beneath beside besides between beyond by despite during except "
         "for from inside into near of on outside over past since through throughout to toward under "
         "until up upon without with within the").split()
COMMENT_MIN, COMMENT_MAX = 10, 44
POOL_BYTES = 1 << 20


# -- Arrow builders ---------------------------------------------------------------------------------
def _decimal(pa: Any, unscaled: np.ndarray, precision: int = 15, scale: int = 2) -> Any:
    """decimal128(precision, scale) from int64 unscaled values (16-byte little-endian words)."""
    words = np.empty((len(unscaled), 2), np.int64)
    words[:, 0] = unscaled
    words[:, 1] = unscaled >> 63
    return pa.Array.from_buffers(pa.decimal128(precision, scale), len(unscaled), [None, pa.py_buffer(words)])


def _strings(pa: Any, offsets: np.ndarray, data: np.ndarray, mask: np.ndarray | None = None) -> Any:
    validity = None if mask is None else pa.py_buffer(np.packbits(~mask, bitorder="little"))
    nulls = 0 if mask is None else int(mask.sum())
    return pa.Array.from_buffers(pa.string(), len(offsets) - 1, [validity, pa.py_buffer(offsets.astype(np.int32)),
                                                                 pa.py_buffer(data)], null_count=nulls)


def _choice(pa: Any, rng: np.random.Generator, vocab: list[str], n: int) -> Any:
    idx = pa.array(rng.integers(0, len(vocab), n).astype(np.int32))
    return pa.DictionaryArray.from_arrays(idx, pa.array(vocab)).dictionary_decode()


def _comments(rng: np.random.Generator, n: int) -> tuple[np.ndarray, np.ndarray]:
    """``n`` strings of COMMENT_MIN..COMMENT_MAX bytes cut at random places of a pool of random words
    (TPC-H's dbgen cuts its comments from a text pool too): (int64 offsets, bytes)."""
    words = np.array(WORDS)
    pool = " ".join(words[rng.integers(0, len(words), POOL_BYTES // 5)]).encode()
    pool_arr = np.frombuffer(pool, np.uint8)
    lens = rng.integers(COMMENT_MIN, COMMENT_MAX + 1, n)
    starts = rng.integers(0, len(pool_arr) - COMMENT_MAX, n)
    offsets = np.zeros(n + 1, np.int64)
    np.cumsum(lens, out=offsets[1:])
    data = np.empty(int(offsets[-1]), np.uint8)
    step = 1_000_000
    cols = np.arange(COMMENT_MAX)
    for a in range(0, n, step):  # bounds the (rows, COMMENT_MAX) temporaries
        b = min(n, a + step)
        mat = pool_arr[starts[a:b, None] + cols]
        data[offsets[a]:offsets[b]] = mat[cols < lens[a:b, None]]
    return offsets, data


def lineitem(rows: int, seed: int = 32) -> Any:
    """The lineitem-shaped table (module docstring)."""
    import pyarrow as pa

    rng = np.random.default_rng(seed)
    per_order = rng.integers(1, 8, rows // 4 + 8)
    while per_order.sum() < rows:  # never for rows > ~100: 1-7 lines, 4 on average
        per_order = np.concatenate([per_order, rng.integers(1, 8, rows)])
    ends = np.cumsum(per_order)
    orders = int(np.searchsorted(ends, rows)) + 1
    per_order = per_order[:orders]
    order_of_line = np.repeat(np.arange(orders), per_order)[:rows]
    first_line = np.repeat(ends[:orders] - per_order, per_order)[:rows]
    linenumber = (np.arange(rows) - first_line + 1).astype(np.int32)
    orderkey = (order_of_line // 8) * 32 + order_of_line % 8 + 1  # TPC-H's sparse order keys
    orderdate = rng.integers(EPOCH_1992, LAST_ORDER + 1, orders)[order_of_line]
    sf = max(rows / 6_000_000, 0.005)
    parts, supps = int(200_000 * sf), int(10_000 * sf)
    partkey = rng.integers(1, parts + 1, rows)
    suppkey = rng.integers(1, supps + 1, rows)
    quantity = rng.integers(1, 51, rows)
    retail_cents = 90_000 + (partkey // 10) % 20_001 + 100 * (partkey % 1_000)
    shipdate = orderdate + rng.integers(1, 122, rows)
    commitdate = orderdate + rng.integers(30, 91, rows)
    receiptdate = shipdate + rng.integers(1, 31, rows)
    returned = receiptdate <= CURRENT
    flag_idx = np.where(returned, rng.integers(0, 2, rows), 2).astype(np.int32)  # R or A, else N
    flags = pa.DictionaryArray.from_arrays(pa.array(flag_idx), pa.array(["R", "A", "N"])).dictionary_decode()
    status_idx = (shipdate <= CURRENT).astype(np.int32)  # F shipped, O open
    status = pa.DictionaryArray.from_arrays(pa.array(status_idx), pa.array(["O", "F"])).dictionary_decode()
    c_off, c_data = _comments(rng, rows)

    def date(days: np.ndarray) -> Any:
        return pa.array(days.astype(np.int32), pa.int32()).view(pa.date32())

    return pa.table({
        "l_orderkey": pa.array(orderkey.astype(np.int64)),
        "l_partkey": pa.array(partkey.astype(np.int64)),
        "l_suppkey": pa.array(suppkey.astype(np.int64)),
        "l_linenumber": pa.array(linenumber),
        "l_quantity": _decimal(pa, quantity * 100),
        "l_extendedprice": _decimal(pa, quantity * retail_cents),
        "l_discount": _decimal(pa, rng.integers(0, 11, rows)),
        "l_tax": _decimal(pa, rng.integers(0, 9, rows)),
        "l_returnflag": flags,
        "l_linestatus": status,
        "l_shipdate": date(shipdate),
        "l_commitdate": date(commitdate),
        "l_receiptdate": date(receiptdate),
        "l_shipinstruct": _choice(pa, rng, INSTRUCT, rows),
        "l_shipmode": _choice(pa, rng, MODES, rows),
        "l_comment": _strings(pa, c_off, c_data),
    })


def events(rows: int, seed: int = 33) -> Any:
    """Timestamps with zones and strings, some nulls (module docstring)."""
    import pyarrow as pa

    rng = np.random.default_rng(seed)
    start = int(np.datetime64("2024-01-01T00:00:00", "us").astype(np.int64))
    created = start + rng.integers(0, 365 * 86_400 * 10**6, rows)
    local_mask = null_mask(rows, 0.05, seed + 1)
    em, cat = emails(rows, seed + 2), categories(rows, 100, seed + 3)
    return pa.table({
        "id": pa.array(np.arange(rows, dtype=np.int64)),
        "created": pa.array(created, pa.timestamp("us", tz="UTC")),
        "local": pa.array(created // 1000, pa.timestamp("ms", tz="Europe/Paris"), mask=local_mask),
        "email": _strings(pa, em.offsets, em.values),
        "category": _strings(pa, cat.offsets, cat.values, null_mask(rows, 0.05, seed + 4)),
    })


def dict1000(rows: int, seed: int = 34) -> Any:
    """A 1,000-value string column among an int64 and a float64 (module docstring)."""
    import pyarrow as pa

    rng = np.random.default_rng(seed)
    key = categories(rows, 1000, seed + 1)
    return pa.table({"id": pa.array(np.arange(rows, dtype=np.int64)), "key": _strings(pa, key.offsets, key.values),
                     "x": pa.array(rng.random(rows))})


def narrow3(rows: int, seed: int = 35) -> Any:
    import pyarrow as pa

    rng = np.random.default_rng(seed)
    cat = categories(rows, 100, seed + 1)
    return pa.table({"id": pa.array(rng.integers(0, 2**40, rows)), "x": pa.array(rng.standard_normal(rows)),
                     "category": _strings(pa, cat.offsets, cat.values)})


def wide(rows: int, columns: int, seed: int = 36) -> Any:
    import pyarrow as pa

    rng = np.random.default_rng(seed)
    return pa.table({f"c{i}": pa.array(rng.standard_normal(rows)) for i in range(columns)})


TABLES: dict[str, Callable[..., Any]] = {"lineitem": lineitem, "events": events, "dict1000": dict1000,
                                         "narrow3": narrow3, "wide": wide}


@functools.lru_cache(maxsize=2)
def table(name: str, rows: int, *args: int) -> Any:
    """The named table (module docstring), cached in memory and under ``$PQBLOOM_BENCH_CACHE``."""
    import pyarrow as pa

    cache = os.environ.get(CACHE_ENV)
    if not cache:
        return TABLES[name](rows, *args)
    path = os.path.join(cache, f"table-{name}-{rows}-{'-'.join(map(str, args))}.arrow")
    if not os.path.exists(path):
        t = TABLES[name](rows, *args)
        with pa.OSFile(path + ".tmp", "wb") as sink, pa.ipc.new_file(sink, t.schema) as w:
            w.write_table(t)
        os.replace(path + ".tmp", path)
        return t
    with pa.OSFile(path, "rb") as src:
        return pa.ipc.open_file(src).read_all()  # read, not mapped: the table is resident as when generated


def describe(t: Any) -> str:
    """Short shape summary: types, string lengths and distinct counts, null fractions."""
    import pyarrow as pa
    import pyarrow.compute as pc

    parts = []
    for name, col in zip(t.column_names, t.columns):
        s = f"{name} {col.type}"
        if pa.types.is_string(col.type):
            lens = pc.binary_length(col)
            s += f" len {pc.min(lens).as_py()}-{pc.max(lens).as_py()}, {pc.count_distinct(col).as_py():,} distinct"
        if col.null_count:
            s += f", {col.null_count / max(len(col), 1):.0%} null"
        parts.append(s)
    return "; ".join(parts)
