"""Benchmark data: realistic columns generated with vectorized numpy, handed to each engine natively.

Columns are kept in a neutral form (:class:`Col`: numpy values, an optional null mask, and for
strings int64 offsets + uint8 bytes) and converted, before any timer, to a pyarrow Table, a pqbloom
Table, a polars DataFrame. Every generator is seeded, so a child process (the memory measurement in
``_harness``) rebuilds exactly the same data from the same arguments.

Variable-length strings are assembled from random pieces without a Python loop per row: each piece
is a ``(rows, width)`` uint8 matrix with a ``(rows, width)`` mask of the bytes it really has; the
pieces are stacked side by side and ``matrix[mask]`` (row-major) yields the concatenated bytes of
every row, ``mask.sum(1)`` its length. Rows are built in chunks to bound the temporaries.
"""

from __future__ import annotations

import functools
import os
import pickle
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

CHUNK = 1_000_000  # rows per assembly chunk: bounds the (rows, width) temporaries to ~100 MB
ROW_GROUP = 1_000_000


@dataclass(frozen=True)
class Col:
    """One column. ``kind`` is ``int64``, ``double``, ``string``, ``timestamp_us``, ``list_int64``
    (``values`` the flat elements, ``offsets`` per row) or ``struct`` (``children``)."""

    kind: str
    values: Any
    mask: np.ndarray | None = None  # True = null
    offsets: np.ndarray | None = None  # strings and lists: int64, rows + 1
    children: tuple[tuple[str, Col], ...] = ()

    def __len__(self) -> int:
        if self.kind == "struct":
            return len(self.children[0][1])
        return len(self.offsets) - 1 if self.offsets is not None else len(self.values)


# -- string pieces ---------------------------------------------------------------------------------
def _words(rng: np.random.Generator, n: int, lo: int, hi: int) -> tuple[np.ndarray, np.ndarray]:
    """``n`` random lowercase words of ``lo..hi`` letters: a (n, hi) matrix and their lengths."""
    return rng.integers(97, 123, (n, hi), dtype=np.uint8), rng.integers(lo, hi + 1, n)


def _pick(vocab: tuple[np.ndarray, np.ndarray], idx: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    mat, lens = vocab
    return mat[idx], np.arange(mat.shape[1]) < lens[idx][:, None]


def _const(text: str, n: int, present: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
    b = np.frombuffer(text.encode(), dtype=np.uint8)
    mask = np.ones((n, len(b)), dtype=bool) if present is None else np.repeat(present[:, None], len(b), 1)
    return np.broadcast_to(b, (n, len(b))), mask


def _digits(num: np.ndarray, width: int, present: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Decimal digits of ``num`` (< 10**width) without leading zeros."""
    powers = 10 ** np.arange(width - 1, -1, -1, dtype=np.int64)
    mat = ((num[:, None] // powers) % 10 + 48).astype(np.uint8)
    ndig = np.maximum(1, np.floor(np.log10(np.maximum(num, 1))).astype(np.int64) + 1)
    mask = np.arange(width) >= (width - ndig)[:, None]
    if present is not None:
        mask &= present[:, None]
    return mat, mask


def _assemble(pieces: list[tuple[np.ndarray, np.ndarray]]) -> tuple[np.ndarray, np.ndarray]:
    mat = np.concatenate([p[0] for p in pieces], axis=1)
    mask = np.concatenate([p[1] for p in pieces], axis=1)
    return mask.sum(1), mat[mask]


def _chunked(n: int, seed: int, build: Callable[[np.random.Generator, int], list[Any]]) -> Col:
    rng = np.random.default_rng(seed)
    lens, datas = [], []
    for start in range(0, n, CHUNK):
        ln, data = _assemble(build(rng, min(CHUNK, n - start)))
        lens.append(ln)
        datas.append(data)
    offsets = np.zeros(n + 1, dtype=np.int64)
    if n:
        np.cumsum(np.concatenate(lens), out=offsets[1:])
    data = np.concatenate(datas) if datas else np.zeros(0, np.uint8)
    return Col("string", data, offsets=offsets)


def emails(n: int, seed: int = 11) -> Col:
    """``first.last123@domain.tld``: 8 to ~40 bytes, nearly all distinct."""
    vocab_rng = np.random.default_rng(seed + 1000)
    first, last = _words(vocab_rng, 400, 3, 9), _words(vocab_rng, 2000, 4, 12)
    domain, tld = _words(vocab_rng, 60, 3, 12), _words(vocab_rng, 6, 2, 3)

    def build(rng: np.random.Generator, k: int) -> list[Any]:
        has_num = rng.random(k) < 0.85
        return [_pick(first, rng.integers(0, 400, k)), _const(".", k), _pick(last, rng.integers(0, 2000, k)),
                _digits(rng.integers(0, 100_000, k), 5, has_num), _const("@", k),
                _pick(domain, rng.integers(0, 60, k)), _const(".", k), _pick(tld, rng.integers(0, 6, k))]

    return _chunked(n, seed, build)


def urls(n: int, seed: int = 12) -> Col:
    """``https://[sub.]host.tld/seg[/seg[/seg]]?id=N``: ~25 to ~90 bytes, nearly all distinct."""
    vocab_rng = np.random.default_rng(seed + 1000)
    host, tld, seg = _words(vocab_rng, 5000, 4, 14), _words(vocab_rng, 8, 2, 4), _words(vocab_rng, 3000, 2, 12)
    sub_mat = np.zeros((4, 4), np.uint8)
    for i, s in enumerate((b"", b"www", b"api", b"m")):
        sub_mat[i, :len(s)] = np.frombuffer(s, np.uint8) if s else 0
    sub = (sub_mat, np.array([0, 3, 3, 1]))

    def build(rng: np.random.Generator, k: int) -> list[Any]:
        sub_idx = rng.integers(0, 4, k)
        nseg = rng.integers(1, 4, k)
        has_q = rng.random(k) < 0.9
        parts = [_const("https://", k), _pick(sub, sub_idx), _const(".", k, sub_idx > 0),
                 _pick(host, rng.integers(0, 5000, k)), _const(".", k), _pick(tld, rng.integers(0, 8, k))]
        for j in range(3):
            present = nseg > j
            m, mk = _pick(seg, rng.integers(0, 3000, k))
            parts += [_const("/", k, present), (m, mk & present[:, None])]
        parts += [_const("?id=", k, has_q), _digits(rng.integers(0, 10_000_000, k), 7, has_q)]
        return parts

    return _chunked(n, seed, build)


def random_words(n: int, lo: int, hi: int, seed: int) -> Col:
    """Random lowercase strings of ``lo..hi`` letters (``lo == hi``: fixed width)."""
    return _chunked(n, seed, lambda rng, k: [_pick(_words(rng, k, lo, hi), np.arange(k))])


def categories(n: int, distinct: int, seed: int) -> Col:
    """``distinct`` different words of 4 to 20 letters, repeated at random."""
    vocab = _words(np.random.default_rng(seed + 1000), distinct, 4, 20)
    return _chunked(n, seed, lambda rng, k: [_pick(vocab, rng.integers(0, distinct, k))])


def null_mask(n: int, fraction: float, seed: int) -> np.ndarray:
    return np.random.default_rng(seed).random(n) < fraction


def with_nulls(col: Col, mask: np.ndarray | None) -> Col:
    return Col(col.kind, col.values, mask, col.offsets, col.children)


# -- the benchmark tables --------------------------------------------------------------------------
CACHE_ENV = "PQBLOOM_BENCH_CACHE"


@functools.lru_cache(maxsize=2)
def dataset(name: str, rows: int) -> dict[str, Col]:
    """The named table. Cached in memory (the write contenders of one case share the same arrays) and,
    when ``$PQBLOOM_BENCH_CACHE`` names a directory, on disk (a memory child loads it rather than
    generating it again)."""
    cache = os.environ.get(CACHE_ENV)
    if not cache:
        return DATASETS[name](rows)
    path = os.path.join(cache, f"data-{name}-{rows}.pickle")
    if os.path.exists(path):
        with open(path, "rb") as f:
            return pickle.load(f)  # type: ignore[no-any-return]
    cols = DATASETS[name](rows)
    with open(path + ".tmp", "wb") as f:
        pickle.dump(cols, f, protocol=5)
    os.replace(path + ".tmp", path)
    return cols


def _core(rows: int, nulls: bool) -> dict[str, Col]:
    rng = np.random.default_rng(1)
    cols = {"id": Col("int64", rng.permutation(rows).astype(np.int64)), "email": emails(rows),
            "url": urls(rows), "code": random_words(rows, 16, 16, 13), "x": Col("double", rng.random(rows))}
    if nulls:
        cols = {k: (c if k == "id" else with_nulls(c, null_mask(rows, 0.1, 20 + i))) for i, (k, c) in
                enumerate(cols.items())}
    return cols


def _nulls10(rows: int) -> dict[str, Col]:
    rng = np.random.default_rng(2)
    return {"i": with_nulls(Col("int64", rng.integers(-2**62, 2**62, rows)), null_mask(rows, 0.1, 21)),
            "d": with_nulls(Col("double", rng.standard_normal(rows)), null_mask(rows, 0.1, 22)),
            "s": with_nulls(random_words(rows, 16, 16, 23), null_mask(rows, 0.1, 24))}


def _categories_ts(rows: int) -> dict[str, Col]:
    rng = np.random.default_rng(3)
    start = np.datetime64("2024-01-01T00:00:00", "us").astype(np.int64)
    return {"category": categories(rows, 100, 31),
            "ts": Col("timestamp_us", start + rng.integers(0, 365 * 86_400 * 10**6, rows))}


def _list_struct(rows: int) -> dict[str, Col]:
    rng = np.random.default_rng(4)
    lens = rng.integers(0, 10, rows)
    offsets = np.zeros(rows + 1, np.int64)
    np.cumsum(lens, out=offsets[1:])
    items = Col("list_int64", rng.integers(0, 10**9, int(offsets[-1])), null_mask(rows, 0.05, 41), offsets)
    rec = Col("struct", None, None, None, (("a", Col("int64", rng.integers(0, 10**6, rows))),
                                           ("b", random_words(rows, 3, 15, 42))))
    return {"items": items, "rec": rec}


DATASETS: dict[str, Callable[[int], dict[str, Col]]] = {
    "core": lambda rows: _core(rows, False),
    "core-nulls": lambda rows: _core(rows, True),
    "emails-urls": lambda rows: {"email": emails(rows), "url": urls(rows)},
    "nulls10": _nulls10,
    "categories-ts": _categories_ts,
    "list-struct": _list_struct,
}


# -- native forms ----------------------------------------------------------------------------------
def _validity(pa: Any, mask: np.ndarray | None) -> Any:
    return None if mask is None else pa.py_buffer(np.packbits(~mask, bitorder="little"))


def _arrow_array(pa: Any, c: Col) -> Any:
    n, nulls = len(c), (0 if c.mask is None else int(c.mask.sum()))
    if c.kind == "string":
        big = c.offsets[-1] >= 2**31  # type: ignore[index]
        typ, off = (pa.large_string(), c.offsets) if big else (pa.string(), c.offsets.astype(np.int32))  # type: ignore[union-attr]
        return pa.Array.from_buffers(typ, n, [_validity(pa, c.mask), pa.py_buffer(off), pa.py_buffer(c.values)],
                                     null_count=nulls)
    if c.kind == "list_int64":
        off = c.offsets.astype(np.int32)  # type: ignore[union-attr]
        return pa.Array.from_buffers(pa.list_(pa.int64()), n, [_validity(pa, c.mask), pa.py_buffer(off)],
                                     null_count=nulls, children=[pa.array(c.values)])
    if c.kind == "struct":
        return pa.StructArray.from_arrays([_arrow_array(pa, ch) for _, ch in c.children],
                                          names=[k for k, _ in c.children])
    typ = {"int64": pa.int64(), "double": pa.float64(), "timestamp_us": pa.timestamp("us")}[c.kind]
    return pa.Array.from_buffers(typ, n, [_validity(pa, c.mask), pa.py_buffer(c.values)], null_count=nulls)


def arrow_table(cols: dict[str, Col]) -> Any:
    import pyarrow as pa

    return pa.table({k: _arrow_array(pa, c) for k, c in cols.items()})


def pqbloom_table(cols: dict[str, Col]) -> Any:
    """A pqbloom Table of flat int64 / double / string columns (the shapes the write cases use)."""
    import pqbloom
    from pqbloom.arrays import BinaryArray
    from pqbloom.table import Column

    types = {"int64": "int64", "double": "double", "string": "string"}
    schema = pqbloom.Schema.from_types({k: types[c.kind] for k, c in cols.items()})
    out = []
    for k, c in cols.items():
        values = BinaryArray(c.offsets, c.values) if c.kind == "string" else c.values  # type: ignore[arg-type]
        out.append(Column(schema.field(k), values, c.mask))
    return pqbloom.Table(out)


def write_arrow_file(cols: dict[str, Col], path: str, **options: Any) -> Any:
    """Write ``cols`` with pyarrow (snappy, 1M-row row groups) and return the Arrow table."""
    import pyarrow.parquet as pq

    t = arrow_table(cols)
    pq.write_table(t, path, row_group_size=ROW_GROUP, compression="snappy", **options)
    return t


def describe(cols: dict[str, Col]) -> str:
    """Short shape summary: string lengths and distinct fraction, null fractions."""
    import pyarrow.compute as pc

    parts = []
    for k, c in cols.items():
        s = f"{k} {c.kind}"
        if c.kind == "string":
            lens = np.diff(c.offsets)  # type: ignore[arg-type]
            arr = _arrow_array(__import__("pyarrow"), with_nulls(c, None))
            distinct = pc.count_distinct(arr).as_py() / max(len(c), 1)
            s += f" len {lens.min()}-{lens.max()} (mean {lens.mean():.0f}), {distinct:.1%} distinct"
        if c.mask is not None:
            s += f", {c.mask.mean():.0%} null"
        parts.append(s)
    return "; ".join(parts)
