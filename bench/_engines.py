"""The engines under test, as factories of zero-argument callables (see ``_harness.Recipe``).

Each factory imports its library and builds its input before returning the callable, so nothing
but the work itself is timed. pyarrow's ``read_table`` imports ``pyarrow.dataset`` on its first
call; the factory imports it beforehand. Factories take JSON arguments only: the harness's memory
child rebuilds them from the same arguments.

Thread settings: pyarrow ``use_threads=False`` vs its default (threads); pqbloom the same when its
``read_table`` / ``write_table`` accepts ``use_threads`` (detected with ``inspect.signature``,
following ``**kwargs`` into ``ParquetFile`` / ``ParquetWriter`` / ``WriterOptions``), otherwise one
pqbloom contender with threads ``n/a``; DuckDB and polars with their defaults (threaded).
"""

from __future__ import annotations

import functools
import importlib
import inspect
from collections.abc import Callable
from typing import Any

from _data import ROW_GROUP, arrow_table, dataset, pqbloom_table
from _harness import Contender, recipe

KEYS = {"footer_key": b"0123456789012345", "column_keys": {"id": b"1234567890123450"}}
BLOOM = {"id": {"fpp": 0.01}}


def _accepts(fn: Any, name: str, forwards_to: tuple[Any, ...] = ()) -> bool:
    """Whether ``fn`` takes keyword ``name``, directly or through ``**kwargs`` it forwards."""
    params = inspect.signature(fn).parameters
    if name in params and params[name].kind is not inspect.Parameter.VAR_KEYWORD:
        return True
    if any(p.kind is inspect.Parameter.VAR_KEYWORD for p in params.values()) and forwards_to:
        return _accepts(forwards_to[0], name, forwards_to[1:])
    return False


def pqbloom_threads() -> dict[str, bool]:
    """Whether pqbloom's read_table / write_table accept ``use_threads``."""
    import pqbloom
    from pqbloom import WriterOptions

    return {"read": _accepts(pqbloom.read_table, "use_threads", (pqbloom.ParquetFile,)),
            "write": _accepts(pqbloom.write_table, "use_threads", (pqbloom.ParquetWriter, WriterOptions))}


def pqbloom_threads_note() -> str:
    t = pqbloom_threads()
    return ("pqbloom use_threads: " + ", ".join(
        f"{op} {'accepted (1t = use_threads=False; default = not passed)' if ok else 'not accepted (threads n/a)'}"
        for op, ok in t.items()))


@functools.cache
def available(name: str) -> bool:
    """Whether the optional peer ``name`` imports (a missing or broken install skips its column)."""
    try:
        importlib.import_module(name)
    except Exception:
        return False
    return True


def peers_note() -> str:
    notes = []
    for name in ("duckdb", "polars"):
        if available(name):
            notes.append(f"{name} {importlib.import_module(name).__version__}")
        else:
            notes.append(f"{name} not installed (or does not import): its column is skipped")
    return "peers: " + "; ".join(notes)


def _thread_kw(op: str, threads: str) -> dict[str, Any]:
    return {"use_threads": False} if threads == "1" and pqbloom_threads()[op] else {}


# -- reads ---------------------------------------------------------------------------------------------
def pqbloom_read(path: str, threads: str, to_arrow: bool, encrypted: bool = False) -> Callable[[], Any]:
    import pqbloom

    kw = _thread_kw("read", threads)
    if encrypted:
        kw["decryption_properties"] = pqbloom.FileDecryptionProperties(**KEYS)  # type: ignore[arg-type]
    if to_arrow:
        import pyarrow  # noqa: F401  (to_arrow imports it)

        return lambda: pqbloom.read_table(path, **kw).to_arrow()
    return lambda: pqbloom.read_table(path, **kw)


def pyarrow_read(path: str, threads: str) -> Callable[[], Any]:
    import pyarrow as pa
    import pyarrow.dataset  # noqa: F401  (read_table imports it on first use)
    import pyarrow.parquet as pq

    kw = {"use_threads": False} if threads in ("1", "1core") else {}
    if threads != "1core":
        return lambda: pq.read_table(path, **kw)

    def one_core() -> Any:
        # use_threads=False still reads and decodes on Arrow's I/O pool (~1.8 CPU seconds per wall
        # second on 2 cores); with both pools at one thread it is as close to one core as pyarrow goes.
        # Resizing the pools takes microseconds; restored for the other contenders.
        cpu, io = pa.cpu_count(), pa.io_thread_count()
        pa.set_cpu_count(1)
        pa.set_io_thread_count(1)
        try:
            return pq.read_table(path, **kw)
        finally:
            pa.set_cpu_count(cpu)
            pa.set_io_thread_count(io)
    return one_core


def duckdb_read(path: str) -> Callable[[], Any]:
    import duckdb
    import pyarrow  # noqa: F401

    con = duckdb.connect()
    query = f"SELECT * FROM read_parquet('{path}')"
    return lambda: con.sql(query).fetch_arrow_table()


def polars_read(path: str) -> Callable[[], Any]:
    import polars as pl

    return lambda: pl.read_parquet(path)


def read_contenders(path: str, *, to_arrow: bool = True, native: bool = True, peers: bool = True,
                    one_core: bool = False) -> list[Contender]:
    """pqbloom (native Table and/or +to_arrow) at each thread setting, pyarrow 1 thread and default
    (and on one core with ``one_core``), and DuckDB / polars when ``peers`` and installed."""
    pq_threads = ("1", "default") if pqbloom_threads()["read"] else ("n/a",)
    out = []
    for variant, on in (("", native), ("+to_arrow", to_arrow)):
        if on:
            out += [Contender("pqbloom", t, recipe(pqbloom_read, path, t, variant == "+to_arrow"), variant)
                    for t in pq_threads]
    out += [Contender("pyarrow", t, recipe(pyarrow_read, path, t))
            for t in (("1", "1core", "default") if one_core else ("1", "default"))]
    if peers:
        out += [Contender(n, "default", recipe(f, path)) for n, f in (("duckdb", duckdb_read), ("polars", polars_read))
                if available(n)]
    return out


# -- writes --------------------------------------------------------------------------------------------
class Written:
    """What a write callable returns: the path, and its row count for the harness's warm-up check
    (read from the footer by pyarrow, or by pqbloom for an encrypted footer)."""

    def __init__(self, path: str, encrypted: bool = False) -> None:
        self.path, self.encrypted = path, encrypted

    @property
    def num_rows(self) -> int:
        if self.encrypted:
            import pqbloom

            with pqbloom.ParquetFile(self.path, decryption_properties=pqbloom.FileDecryptionProperties(**KEYS)) as pf:
                return pf.num_rows
        import pyarrow.parquet as pq

        return int(pq.read_metadata(self.path).num_rows)


def pqbloom_write(data: str, rows: int, path: str, threads: str, bloom: bool, encrypt: bool) -> Callable[[], Any]:
    import pqbloom

    t = pqbloom_table(dataset(data, rows))
    kw: dict[str, Any] = {"row_group_size": ROW_GROUP, "compression": "snappy", **_thread_kw("write", threads)}
    if bloom:
        kw["bloom_filter_options"] = BLOOM
    if encrypt:
        kw["encryption_properties"] = pqbloom.FileEncryptionProperties(**KEYS)  # type: ignore[arg-type]

    def write() -> Written:
        pqbloom.write_table(t, path, **kw)
        return Written(path, encrypt)

    return write


def pyarrow_write(data: str, rows: int, path: str, bloom: bool) -> Callable[[], Any]:
    import pyarrow.parquet as pq

    t = arrow_table(dataset(data, rows))
    kw: dict[str, Any] = {"row_group_size": ROW_GROUP, "compression": "snappy"}
    if bloom:
        kw["bloom_filter_options"] = BLOOM

    def write() -> Written:
        pq.write_table(t, path, **kw)
        return Written(path)

    return write


def duckdb_write(data: str, rows: int, path: str) -> Callable[[], Any]:
    import duckdb

    con = duckdb.connect()
    con.register("src", arrow_table(dataset(data, rows)))
    sql = f"COPY src TO '{path}' (FORMAT parquet, COMPRESSION snappy, ROW_GROUP_SIZE {ROW_GROUP})"

    def write() -> Written:
        con.execute(sql)
        return Written(path)

    return write


def polars_write(data: str, rows: int, path: str) -> Callable[[], Any]:
    import polars as pl

    df = pl.from_arrow(arrow_table(dataset(data, rows)))

    def write() -> Written:
        df.write_parquet(path, compression="snappy", row_group_size=ROW_GROUP)  # type: ignore[union-attr]
        return Written(path)

    return write


def write_contenders(data: str, rows: int, out_dir: str, *, bloom: bool = False, peers: bool = True) -> list[Contender]:
    """Each writer from its own native input built before the timer, each to its own file."""
    import os

    def out(name: str) -> str:
        return os.path.join(out_dir, f"w-{data}-{name}.parquet")

    pq_threads = ("1", "default") if pqbloom_threads()["write"] else ("n/a",)
    cs = [Contender("pqbloom", t, recipe(pqbloom_write, data, rows, out("pqbloom" + t.replace("/", "")), t, bloom, False))
          for t in pq_threads]
    cs.append(Contender("pyarrow", "n/a", recipe(pyarrow_write, data, rows, out("pyarrow"), bloom)))
    if peers and not bloom:  # DuckDB and polars do not take the same Bloom filter option
        cs += [Contender(n, "default", recipe(f, data, rows, out(n))) for n, f in
               (("duckdb", duckdb_write), ("polars", polars_write)) if available(n)]
    return cs
