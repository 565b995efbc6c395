"""The interop matrix: writer x reader x feature, with pqbloom on one side of every cell.

For each case of :mod:`interop.cases` every writer (pqbloom, pyarrow, Spark/parquet-java,
DuckDB) writes the case's canonical data, the written file is checked for the feature
(codec, dictionary pages, page version, encodings, Bloom filter placement, page index,
statistics, encryption layout, Parquet types), and then

* pqbloom's file is read by all four readers, and
* each peer's file is read by pqbloom.

A cell is ``ok`` only when the reader returns exactly the written values *and*, for Bloom
filters, page indexes and statistics, the reader demonstrably used them where it can:

* pqbloom: ``bloom_filter_might_contain`` / ``BloomFilter.might_contain`` exclude absent
  in-range values and keep every present one; the ColumnIndex/OffsetIndex decode, are usable
  and bound every page's values; with the predicate module, a filtered read skips pages /
  prunes row groups (``Explain``);
* Spark: the scan node's ``numOutputRows`` is 0 for an absent in-range value with Bloom
  filtering and every row without it; fewer rows than the row group with the column index
  and the whole row group without it; one row group by statistics, all without;
* DuckDB: ``parquet_bloom_probe`` excludes absent values and never a present one;
  ``parquet_metadata`` shows the statistics;
* pyarrow: reads the values and reports the Bloom filter / page index locations; it cannot
  probe or prune with them, which is recorded as the peer's limitation.

Cells a peer cannot do at all carry the peer's limitation and its reason. ``run_fixtures``
reads every file of the parquet-testing corpus. ``render_markdown`` writes MATRIX.md.
"""

from __future__ import annotations

import base64
import contextlib
import json
import math
import os
import pickle
import shutil
import struct
import subprocess
import sys
import tempfile
import textwrap
import time
import traceback
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from . import cases as C
from .spark_support import spark_conf

ROOT = Path(__file__).resolve().parent.parent
FIXTURES = (ROOT / ".." / "shared" / "fixtures" / "parquet-testing").resolve()
MATRIX_MD = Path(__file__).resolve().parent / "MATRIX.md"

OK, LIMIT, RED, NA, SKIP, NOT_YET = "ok", "limit", "RED", "n/a", "skip", "not yet"
CELL_ORDER = [("pqbloom", "pqbloom"), ("pqbloom", "pyarrow"), ("pqbloom", "spark"), ("pqbloom", "duckdb"),
              ("pyarrow", "pqbloom"), ("spark", "pqbloom"), ("duckdb", "pqbloom")]
NAMES = {"pqbloom": "pqbloom", "pyarrow": "pyarrow", "spark": "Spark", "duckdb": "DuckDB"}


def master_keys() -> dict[str, bytes]:
    from .spark_support import MASTER_KEYS

    return {k: base64.b64decode(v) for k, v in MASTER_KEYS.items()}


# ---------------------------------------------------------------------------------------------
# results


@dataclass
class Cell:
    case: str
    writer: str
    reader: str
    status: str
    note: str = ""  # why the cell is not ok (the limitation, the failure); empty when ok
    evidence: str = ""  # what was checked / observed
    seconds: float = 0.0


@dataclass
class Written:
    writer: str
    path: str | None
    status: str  # OK: file written and checked; LIMIT / RED / SKIP: no usable file
    note: str = ""
    row_groups: list[int] = field(default_factory=list)  # rows per row group


@dataclass
class FixtureResult:
    path: str
    status: str
    note: str = ""


@dataclass
class Report:
    cells: list[Cell] = field(default_factory=list)
    fixtures: list[FixtureResult] = field(default_factory=list)
    cases: list[C.Case] = field(default_factory=list)
    seconds: float = 0.0
    versions: dict[str, str] = field(default_factory=dict)

    def counts(self) -> dict[str, int]:
        out: dict[str, int] = {}
        for c in self.cells:
            out[c.status] = out.get(c.status, 0) + 1
        return out

    def fixture_counts(self) -> dict[str, int]:
        out: dict[str, int] = {}
        for f in self.fixtures:
            out[f.status] = out.get(f.status, 0) + 1
        return out

    def red(self) -> list[Cell]:
        return [c for c in self.cells if c.status == RED]


class CheckFailed(Exception):
    """A cell's check failed (the message says what)."""


def require(cond: bool, msg: str) -> None:
    if not cond:
        raise CheckFailed(msg)


# ---------------------------------------------------------------------------------------------
# environment: Spark and DuckDB handles


class Env:
    def __init__(self, workdir: Path, use_spark: bool = True, log: Callable[[str], None] = print) -> None:
        self.workdir = workdir
        self.use_spark = use_spark
        self.log = log
        self._spark: Any = None
        self._duck: Any = None
        self.spark_error: str | None = None

    @property
    def spark(self) -> Any:
        if not self.use_spark:
            return None
        if self._spark is None and self.spark_error is None:
            try:
                from .spark_support import get_spark

                self._spark = get_spark()
                self._spark.sparkContext.setLogLevel("OFF")  # expected failures would log stack traces
            except Exception as exc:  # pragma: no cover - depends on the machine
                self.spark_error = f"{type(exc).__name__}: {exc}"
        return self._spark

    @property
    def duck(self) -> Any:
        if self._duck is None:
            import duckdb

            self._duck = duckdb.connect()
            self._duck.execute("SET TimeZone='UTC'").fetchall()
        return self._duck

    def close(self) -> None:
        if self._spark is not None:
            with contextlib.suppress(Exception):
                self._spark.sparkContext.setLogLevel("WARN")
        if self._duck is not None:
            self._duck.close()


# ---------------------------------------------------------------------------------------------
# pqbloom


def pqbloom_decryption(path: str | Path) -> Any:
    import pqbloom

    keys = master_keys()
    factory = pqbloom.CryptoFactory(lambda config: pqbloom.InMemoryKms(keys))
    return factory.file_decryption_properties(pqbloom.KmsConnectionConfig(), file_path=str(path))


def pqbloom_encryption(enc: C.Encryption, path: str | Path) -> Any:
    import pqbloom

    keys = master_keys()
    factory = pqbloom.CryptoFactory(lambda config: pqbloom.InMemoryKms(keys))
    config = pqbloom.EncryptionConfiguration(
        footer_key=enc.footer_key, column_keys=dict(enc.column_keys), uniform_encryption=enc.uniform,
        encryption_algorithm=enc.algorithm, plaintext_footer=enc.plaintext_footer,
        double_wrapping=enc.double_wrapping, internal_key_material=enc.internal_key_material)
    return factory.file_encryption_properties(pqbloom.KmsConnectionConfig(), config, file_path=str(path))


def write_pqbloom(case: C.Case, data: dict[str, list[Any]], path: Path) -> None:
    import pqbloom

    opts: dict[str, Any] = {"row_group_size": case.row_group}
    opts.update(case.pqbloom_opts)
    if case.encryption is not None:
        opts["encryption_properties"] = pqbloom_encryption(case.encryption, path)
    pqbloom.write_table(C.pqbloom_input(case, data), str(path), schema=C.pqbloom_schema(case), **opts)


def _open_pqbloom(case: C.Case, path: str) -> Any:
    import pqbloom

    props = pqbloom_decryption(path) if case.encryption is not None else None
    return pqbloom.ParquetFile(path, decryption_properties=props)


def read_pqbloom(case: C.Case, path: str) -> dict[str, list[Any]]:
    with _open_pqbloom(case, path) as pf:
        return C.canon_pqbloom(pf.read())


# ---------------------------------------------------------------------------------------------
# pyarrow (in-process for plaintext files; a subprocess for encrypted ones, since pyarrow may
# std::terminate the whole process on encrypted metadata it has no key for)

PYARROW_KMS = textwrap.dedent(
    """
    import base64, os, pickle, sys
    import pyarrow as pa, pyarrow.parquet as pq
    import pyarrow.parquet.encryption as pe
    from interop import cases as C
    from interop.pyarrow_kms import in_memory_kms
    from interop.spark_support import MASTER_KEYS

    MASTER = {k: base64.b64decode(v) for k, v in MASTER_KEYS.items()}

    Kms = in_memory_kms(MASTER)

    case = {c.id: c for c in C.all_cases() + list(C.golden_cases().values())}[sys.argv[1]]
    path = sys.argv[2]
    out = sys.argv[3]
    factory = pe.CryptoFactory(Kms)
    """
)

PYARROW_WRITE_ENC = PYARROW_KMS + textwrap.dedent(
    """
    e = case.encryption
    config = pe.EncryptionConfiguration(
        footer_key=e.footer_key, column_keys=dict(e.column_keys), uniform_encryption=e.uniform,
        encryption_algorithm=e.algorithm, plaintext_footer=e.plaintext_footer,
        double_wrapping=e.double_wrapping, internal_key_material=e.internal_key_material)
    props = factory.file_encryption_properties(pe.KmsConnectionConfig(), config, path)
    opts = dict(row_group_size=case.row_group)
    opts.update(case.pyarrow_opts)
    pq.write_table(C.arrow_table(case, case.data()), path, encryption_properties=props, **opts)
    """
)

PYARROW_READ_ENC = PYARROW_KMS + textwrap.dedent(
    """
    props = factory.file_decryption_properties(pe.KmsConnectionConfig(), pe.DecryptionConfiguration(), path)
    f = pq.ParquetFile(path, decryption_properties=props)
    table = f.read()
    md = f.metadata
    info = {"row_groups": [md.row_group(i).num_rows for i in range(md.num_row_groups)],
            "bloom": {}, "index": {}}
    for i in range(md.num_row_groups):
        for j in range(md.num_columns):
            c = md.row_group(i).column(j)
            info["bloom"].setdefault(c.path_in_schema, []).append(c.bloom_filter_offset)
            info["index"].setdefault(c.path_in_schema, []).append((c.has_column_index, c.has_offset_index))
    kinds = {c.name: c.kind for c in case.columns}
    with open(out, "wb") as fh:
        pickle.dump({"values": C.canon_arrow(table, kinds), "info": info}, fh)
    """
)


def run_pyarrow_subprocess(script: str, case_id: str, path: str, timeout: float = 300) -> Any:
    with tempfile.TemporaryDirectory(prefix="pqbloom-interop-") as tmp:
        out = os.path.join(tmp, "out.pickle")
        env = dict(os.environ)
        env["PYTHONPATH"] = str(ROOT) + os.pathsep + env.get("PYTHONPATH", "")
        proc = subprocess.run([sys.executable, "-c", script, case_id, path, out], capture_output=True, text=True,
                              timeout=timeout, cwd=str(ROOT), env=env)
        if proc.returncode != 0:
            tail = (proc.stderr or proc.stdout).strip().splitlines()[-3:]
            raise CheckFailed(f"pyarrow subprocess exited {proc.returncode}: {' | '.join(tail)[-400:]}")
        if os.path.exists(out):
            with open(out, "rb") as fh:
                return pickle.load(fh)
        return None


def write_pyarrow(case: C.Case, data: dict[str, list[Any]], path: Path) -> None:
    if case.encryption is not None:
        run_pyarrow_subprocess(PYARROW_WRITE_ENC, case.id, str(path))
        return
    import pyarrow.parquet as pq

    opts: dict[str, Any] = {"row_group_size": case.row_group}
    opts.update(case.pyarrow_opts)
    pq.write_table(C.arrow_table(case, data), str(path), **opts)


def _kinds(case: C.Case) -> dict[str, str]:
    return {c.name: c.kind for c in case.columns}


def read_pyarrow(case: C.Case, path: str) -> tuple[dict[str, list[Any]], dict[str, Any]]:
    """(values, info) -- info has row group sizes and Bloom offsets per column."""
    if case.encryption is not None:
        res = run_pyarrow_subprocess(PYARROW_READ_ENC, case.id, path)
        return res["values"], res["info"]
    import pyarrow.parquet as pq

    f = pq.ParquetFile(path)
    table = f.read()
    md = f.metadata
    info: dict[str, Any] = {"row_groups": [md.row_group(i).num_rows for i in range(md.num_row_groups)],
                            "bloom": {}, "index": {}, "stats": {}}
    for i in range(md.num_row_groups):
        for j in range(md.num_columns):
            c = md.row_group(i).column(j)
            info["bloom"].setdefault(c.path_in_schema, []).append(c.bloom_filter_offset)
            info["index"].setdefault(c.path_in_schema, []).append((c.has_column_index, c.has_offset_index))
            st = c.statistics
            info["stats"].setdefault(c.path_in_schema, []).append(
                None if st is None or not st.has_min_max else (st.min, st.max, st.null_count))
    return C.canon_arrow(table, _kinds(case)), info


# ---------------------------------------------------------------------------------------------
# Spark


def _spark_df(env: Env, case: C.Case, data: dict[str, list[Any]]) -> Any:
    from pyspark.sql import functions as F

    df = env.spark.createDataFrame(C.arrow_table(case, data))
    casts = {c.name: c.spark_cast for c in case.columns if c.spark_cast}
    if casts:
        df = df.select(*[F.col(c).cast(casts[c]).alias(c) if c in casts else F.col(c) for c in df.columns])
    return df


def spark_encryption_options(enc: C.Encryption) -> dict[str, str]:
    opts = {
        "parquet.encryption.algorithm": enc.algorithm,
        "parquet.encryption.plaintext.footer": str(enc.plaintext_footer).lower(),
        "parquet.encryption.double.wrapping": str(enc.double_wrapping).lower(),
        "parquet.encryption.key.material.store.internally": str(enc.internal_key_material).lower(),
    }
    if enc.uniform:
        opts["parquet.encryption.uniform.key"] = enc.footer_key
    else:
        opts["parquet.encryption.footer.key"] = enc.footer_key
        opts["parquet.encryption.column.keys"] = ";".join(f"{k}:{','.join(v)}" for k, v in enc.column_keys.items())
    return opts


def write_spark(env: Env, case: C.Case, data: dict[str, list[Any]], out_dir: Path) -> str:
    from .spark_support import spark_write_with_bloom

    df = _spark_df(env, case, data)
    options = dict(case.spark_opts)
    if case.encryption is not None:
        options.update(spark_encryption_options(case.encryption))
    bloom: dict[str, int | None] | None = {c: case.row_group * 2 for c in case.bloom.columns} if case.bloom else None
    # a row group holds a few thousand rows of these datasets
    block = 48 * 1024 if case.n >= 2500 else None
    with spark_conf(env.spark, case.spark_conf):
        path = spark_write_with_bloom(df, out_dir, bloom, block_size=block, options=options)
    return path


def _spark_read(env: Env, path: str, options: dict[str, str] | None = None) -> Any:
    r = env.spark.read
    for k, v in (options or {}).items():
        r = r.option(k, v)
    return r.parquet(path)


def read_spark(env: Env, case: C.Case, path: str) -> dict[str, list[Any]]:
    return C.canon_arrow(_spark_read(env, path).toArrow(), _kinds(case))


def spark_scan(env: Env, path: str, column: str, value: Any, options: dict[str, str]) -> tuple[list[Any], int]:
    from pyspark.sql import functions as F

    from .spark_support import collect_with_scan_rows

    df = _spark_read(env, path, options).where(F.col(column) == F.lit(value))
    rows, scanned = collect_with_scan_rows(df)
    return [r[column] for r in rows], scanned


# ---------------------------------------------------------------------------------------------
# DuckDB


def write_duckdb(env: Env, case: C.Case, data: dict[str, list[Any]], path: Path) -> None:
    con = env.duck
    con.register("pqbloom_case", C.arrow_table(case, data))
    try:
        cols = ", ".join(f'CAST("{c.name}" AS {c.duckdb_cast}) AS "{c.name}"' if c.duckdb_cast else f'"{c.name}"'
                         for c in case.columns)
        opts = f"FORMAT parquet, ROW_GROUP_SIZE {max(case.row_group, 2048)}"
        if case.duckdb_opts:
            opts += ", " + case.duckdb_opts
        con.execute(f"COPY (SELECT {cols} FROM pqbloom_case) TO '{path}' ({opts})").fetchall()
    finally:
        con.unregister("pqbloom_case")


def read_duckdb(env: Env, case: C.Case, path: str) -> dict[str, list[Any]]:
    table = env.duck.sql(f"SELECT * FROM read_parquet('{path}')").to_arrow_table()
    return C.canon_arrow(table, _kinds(case))


# ---------------------------------------------------------------------------------------------
# what the written file must show


def _chunk_start(m: Any) -> int:
    starts = [m.data_page_offset]
    if m.dictionary_page_offset:
        starts.append(m.dictionary_page_offset)
    return min(starts)


def _first_data_page_type(path: str, m: Any) -> int:
    from pqbloom.format import T, decode_prefix

    with open(path, "rb") as fh:
        pos = _chunk_start(m)
        for _ in range(3):
            fh.seek(pos)
            header, used = decode_prefix(T.PageHeader, fh.read(64 * 1024))
            if header.type != T.PageType.DICTIONARY_PAGE:
                return header.type
            pos += used + header.compressed_page_size
    raise CheckFailed("no data page found")


def _arrow_parquet_type(path: str) -> dict[str, tuple[str, dict[str, Any]]]:
    import pyarrow.parquet as pq

    sch = pq.ParquetFile(path).schema
    out = {}
    for i in range(len(sch)):
        c = sch.column(i)
        lt = c.logical_type
        js = json.loads(lt.to_json()) if lt is not None and lt.type != "NONE" else {}
        out[c.path] = (c.physical_type, js)
    return out


def _expected_parquet_type(col: C.Col) -> tuple[str, dict[str, Any]]:
    from pqbloom.format import T
    from pqbloom.schema import parse_type

    phys, lt, _ = parse_type(col.pq)
    pname = T.Type._VALUES_TO_NAMES[phys]
    if lt is None:
        return pname, {}
    k = lt.kind
    unit = {"ms": "milliseconds", "us": "microseconds", "ns": "nanoseconds"}.get(lt.unit or "")
    if k == "INTEGER":
        return pname, {"Type": "Int", "bitWidth": lt.bit_width, "isSigned": lt.signed}
    if k == "TIMESTAMP":
        return pname, {"Type": "Timestamp", "isAdjustedToUTC": lt.utc, "timeUnit": unit}
    if k == "TIME":
        return pname, {"Type": "Time", "isAdjustedToUTC": lt.utc, "timeUnit": unit}
    if k == "DECIMAL":
        return pname, {"Type": "Decimal", "precision": lt.precision, "scale": lt.scale}
    return pname, {"Type": {"STRING": "String", "DATE": "Date", "UUID": "UUID", "FLOAT16": "Float16"}.get(k, k)}


def _type_matches(expected: tuple[str, dict[str, Any]], got: tuple[str, dict[str, Any]]) -> bool:
    if expected[0] != got[0]:
        return False
    exp, js = expected[1], got[1]
    if not exp:  # a plain INT32/INT64 may carry the equivalent signed Int annotation
        bits = {"INT32": 32, "INT64": 64}.get(got[0])
        return not js or js == {"Type": "Int", "bitWidth": bits, "isSigned": True}
    return all(js.get(k) == v for k, v in exp.items())


def verify_written(case: C.Case, writer: str, path: str) -> tuple[list[int], str]:
    """Check the file shows the case's feature; return (rows per row group, a note). Raises CheckFailed."""
    from pqbloom.format import T

    with _open_pqbloom(case, path) as pf:
        md = pf.thrift_metadata
        names = [d.dotted_path for d in pf.columns]
        metas = [[pf.chunk_metadata(i, d) for d in pf.columns] for i in range(len(md.row_groups))]
    rgs = [rg.num_rows for rg in md.row_groups]
    require(sum(rgs) == case.n, f"file has {sum(rgs)} rows, expected {case.n}")
    notes = []
    exp = case.expect
    if "types" in exp and case.encryption is None:
        got_types = _arrow_parquet_type(path)
        for column in case.columns:
            want = _expected_parquet_type(column)
            got = got_types.get(column.name)
            require(got is not None and _type_matches(want, got),
                    f"column {column.name} is {got}, expected {want}")
    if "codec" in exp:
        codecs = {T.CompressionCodec._VALUES_TO_NAMES[m.codec] for row in metas for m in row}
        require(codecs == {exp["codec"]}, f"codecs {sorted(codecs)}, expected {exp['codec']}")
    if "dictionary" in exp:
        dict_cols = sorted({names[j] for row in metas for j, m in enumerate(row) if m.dictionary_page_offset
                            or T.Encoding.RLE_DICTIONARY in m.encodings or T.Encoding.PLAIN_DICTIONARY in m.encodings})
        if exp["dictionary"]:
            require("cat" in dict_cols, f"low-cardinality column not dictionary-encoded (dictionary: {dict_cols})")
        else:
            require(not dict_cols, f"dictionary-encoded columns {dict_cols}")
        notes.append(f"dictionary-encoded: {', '.join(dict_cols) or 'none'}")
    if "page_version" in exp:
        page_type = T.PageType.DATA_PAGE_V2 if exp["page_version"] == "2.0" else T.PageType.DATA_PAGE
        kinds = {_first_data_page_type(path, m) for row in metas for m in row}
        require(kinds == {page_type}, f"page types {sorted(T.PageType._VALUES_TO_NAMES[k] for k in kinds)}")
    if "encodings" in exp:
        special = {T.Encoding.DELTA_BINARY_PACKED, T.Encoding.DELTA_BYTE_ARRAY, T.Encoding.DELTA_LENGTH_BYTE_ARRAY,
                   T.Encoding.BYTE_STREAM_SPLIT}
        used: dict[str, set[str]] = {}
        for row in metas:
            for j, m in enumerate(row):
                used.setdefault(names[j], set()).update(T.Encoding._VALUES_TO_NAMES[e] for e in m.encodings
                                                        if e in special)
        if writer in ("pqbloom", "pyarrow"):
            for col, enc in exp["encodings"].items():
                require(used.get(col) == {enc}, f"column {col} uses {sorted(used.get(col, ()))}, expected {enc}")
        else:
            require(any(used.values()), "no DELTA_* / BYTE_STREAM_SPLIT encoding used")
        notes.append("; ".join(f"{c}: {'/'.join(sorted(v)) or 'PLAIN'}" for c, v in used.items()))
    if "bloom" in exp:
        assert case.bloom is not None
        for col in case.bloom.columns:
            j = names.index(col)
            offs = [row[j].bloom_filter_offset for row in metas]
            require(all(o is not None for o in offs), f"no Bloom filter on {col} in some row group: {offs}")
        placement = _bloom_placement(metas, case.bloom.columns[0], names)
        if writer == "pqbloom" and exp["bloom"] in ("after_row_group", "end"):
            require(placement == exp["bloom"], f"Bloom filters placed {placement}, expected {exp['bloom']}")
        notes.append(f"Bloom filters {placement.replace('_', ' ')}")
    if "page_index" in exp:
        j = names.index(exp["page_index"])
        for rg in md.row_groups:
            cc = rg.columns[j]
            require(cc.column_index_offset is not None and cc.offset_index_offset is not None,
                    f"no page index on {exp['page_index']}")
    if "stats" in exp:
        for col in exp["stats"]:
            j = names.index(col)
            for row in metas:
                st = row[j].statistics
                require(st is not None and st.null_count is not None
                        and (st.min_value is not None or st.min is not None), f"no statistics on {col}")
    if "encryption" in exp:
        notes.append(_verify_encrypted(case, path, md, names))
    if case.bloom or case.stats or case.page_index:
        require(len(rgs) >= 2, f"only {len(rgs)} row group(s)")
    notes.insert(0, f"{len(rgs)} row groups")
    return rgs, "; ".join(n for n in notes if n)


def _bloom_placement(metas: list[list[Any]], column: str, names: list[str]) -> str:
    starts = [min(_chunk_start(m) for m in row) for row in metas]
    ends = [max(_chunk_start(m) + m.total_compressed_size for m in row) for row in metas]
    first = metas[0][names.index(column)].bloom_filter_offset
    if len(starts) > 1 and ends[0] <= first < starts[1]:
        return "after_row_group"
    if first >= ends[-1]:
        return "end"
    return f"at offset {first}"


def _verify_encrypted(case: C.Case, path: str, md: Any, names: list[str]) -> str:
    """Magic, algorithm, footer mode, key metadata and which columns are encrypted with which key."""
    from pqbloom.format import T, decode_prefix

    enc = case.encryption
    assert enc is not None
    data = Path(path).read_bytes()
    magic = data[-4:]
    require(magic == (b"PAR1" if enc.plaintext_footer else b"PARE"), f"magic {magic!r}")
    length = struct.unpack("<I", data[-8:-4])[0]
    region = data[len(data) - 8 - length:-8]
    if enc.plaintext_footer:
        fmd, _ = decode_prefix(T.FileMetaData, region)
        alg, key_metadata = fmd.encryption_algorithm, fmd.footer_signing_key_metadata
    else:
        fcm, _ = decode_prefix(T.FileCryptoMetaData, region)
        alg, key_metadata = fcm.encryption_algorithm, fcm.key_metadata
    require(alg is not None, "no encryption algorithm in the footer")
    got_alg = "AES_GCM_CTR_V1" if alg.AES_GCM_CTR_V1 is not None else "AES_GCM_V1"
    require(got_alg == enc.algorithm, f"algorithm {got_alg}, expected {enc.algorithm}")
    km = json.loads(key_metadata)
    if km.get("internalStorage") is False:
        require(not enc.internal_key_material, "external key material not asked for")
        sidecar = Path(path).parent / f"_KEY_MATERIAL_FOR_{Path(path).name}.json"
        require(sidecar.is_file(), f"no key material sidecar {sidecar.name}")
        km = json.loads(json.loads(sidecar.read_text())[km["keyReference"]])
    else:
        require(enc.internal_key_material, "key material stored internally")
    require(km.get("doubleWrapping") is enc.double_wrapping, f"doubleWrapping {km.get('doubleWrapping')}")
    require(km.get("masterKeyID") == enc.footer_key, f"footer master key {km.get('masterKeyID')}")
    col_master = {c: k for k, cols in enc.column_keys.items() for c in cols}
    for rg in md.row_groups:
        for j, cc in enumerate(rg.columns):
            name = names[j]
            cm = cc.crypto_metadata
            if enc.uniform:
                require(cm is not None and cm.ENCRYPTION_WITH_FOOTER_KEY is not None, f"{name} not on the footer key")
            elif name in col_master:
                require(cm is not None and cm.ENCRYPTION_WITH_COLUMN_KEY is not None, f"{name} has no column key")
            else:
                require(cm is None, f"{name} is encrypted but has no key configured")
    secret = [v for v in case.data()["s"][:50]]
    require(not any(v.encode() in data for v in secret), "plaintext of an encrypted column found in the file")
    mode = "uniform" if enc.uniform else "column keys " + ", ".join(f"{k}:{'+'.join(v)}"
                                                                      for k, v in enc.column_keys.items())
    return (f"{got_alg}, {'plaintext' if enc.plaintext_footer else 'encrypted'} footer, {mode}, "
            f"{'double' if enc.double_wrapping else 'single'} wrapping")


# ---------------------------------------------------------------------------------------------
# evidence: Bloom filters


def _rg_slices(rgs: list[int]) -> list[tuple[int, int]]:
    out, start = [], 0
    for n in rgs:
        out.append((start, start + n))
        start += n
    return out


def _predicate_available() -> bool:
    import pqbloom

    return hasattr(pqbloom, "field") and hasattr(pqbloom, "Explain")


def bloom_evidence_pqbloom(case: C.Case, path: str, data: dict[str, list[Any]], rgs: list[int]) -> str:
    import pqbloom

    assert case.bloom is not None
    notes = []
    with _open_pqbloom(case, path) as pf:
        require(pf.num_row_groups == len(rgs), "row group count differs")
        for col in case.bloom.columns:
            desc = pf.column_descriptor(col)
            ptype = desc.physical_type
            absent = C.absent_values(case, col, 40)
            excluded = total = 0
            everywhere = []
            for v in absent:
                hits = 0
                for rg in range(len(rgs)):
                    one = pf.bloom_filter_might_contain(rg, col, v)
                    require(one is not None, f"no Bloom filter on {col} in row group {rg}")
                    hits += bool(one)
                excluded += len(rgs) - hits
                total += len(rgs)
                if hits == 0:
                    everywhere.append(v)
            for rg, (lo, hi) in enumerate(_rg_slices(rgs)):
                bf = pf.bloom_filter(rg, col)
                require(bf is not None, f"no Bloom filter on {col} in row group {rg}")
                present = [v for v in data[col][lo:hi] if v is not None]
                found = bf.might_contain_many(present, ptype)
                require(bool(np.all(found)), f"{col}: {int((~np.asarray(found)).sum())} present values of row "
                                             f"group {rg} test negative")
                for v in absent[:10]:  # the whole-filter and the single-block paths agree
                    require(bf.might_contain(v, ptype) == pf.bloom_filter_might_contain(rg, col, v),
                            f"{col}: bloom_filter() and bloom_filter_might_contain() disagree on {v!r}")
                for v in present[:5]:
                    require(pf.bloom_filter_might_contain(rg, col, v) is True,
                            f"{col}: bloom_filter_might_contain False for present {v!r}")
            rate = excluded / total
            require(rate >= 0.85, f"{col}: only {rate:.0%} of absent probes excluded")
            notes.append(f"{col} {rate:.0%}")
            if _predicate_available() and everywhere:
                ex = pqbloom.Explain()
                got = pf.read(columns=[col], filters=pqbloom.field(col) == everywhere[0], explain=ex)
                require(got.num_rows == 0, f"filtered read of absent {col} returned rows")
                require(ex.row_groups_pruned_bloom_filter >= 1,
                        f"filtered read pruned no row group by Bloom filter ({ex.to_dict()})")
    note = "absent probes excluded: " + ", ".join(notes)
    if _predicate_available():
        note += "; filtered reads prune by Bloom filter"
    return note


def bloom_evidence_duckdb(env: Env, case: C.Case, path: str, data: dict[str, list[Any]], rgs: list[int]) -> str:
    assert case.bloom is not None
    con = env.duck
    notes = []
    slices = _rg_slices(rgs)
    for col in case.bloom.columns:
        for rg, (lo, hi) in enumerate(slices):
            present = [v for v in data[col][lo:hi] if v is not None][:5]
            for v in present:
                verdict = dict(con.execute("SELECT row_group_id, bloom_filter_excludes FROM parquet_bloom_probe(?, ?, ?)",
                                           [path, col, v]).fetchall())
                require(verdict.get(rg) is False, f"DuckDB excludes present {col}={v!r} from row group {rg}")
        excluded = total = 0
        first_absent = None
        for v in C.absent_values(case, col, 30):
            rows = con.execute("SELECT bloom_filter_excludes FROM parquet_bloom_probe(?, ?, ?)",
                               [path, col, v]).fetchall()
            require(len(rows) == len(rgs), f"parquet_bloom_probe gave {len(rows)} row groups")
            n = sum(bool(r[0]) for r in rows)
            excluded += n
            total += len(rows)
            if n == len(rows) and first_absent is None:
                first_absent = v
        rate = excluded / total
        require(rate >= 0.85, f"DuckDB excluded only {rate:.0%} of absent {col} probes")
        if first_absent is not None:
            cnt = con.execute(f"SELECT count(*) FROM read_parquet('{path}') WHERE \"{col}\" = ?",
                              [first_absent]).fetchall()[0][0]
            require(cnt == 0, f"absent {col} found {cnt} times")
        notes.append(f"{col} {rate:.0%}")
    return "parquet_bloom_probe excludes absent probes: " + ", ".join(notes) + "; never a present value"


SPARK_NO_DICT = {"parquet.filter.dictionary.enabled": "false", "parquet.filter.columnindex.enabled": "false"}
SPARK_NO_BLOOM = {**SPARK_NO_DICT, "parquet.filter.bloom.enabled": "false"}


def bloom_evidence_spark(env: Env, case: C.Case, path: str, data: dict[str, list[Any]], rgs: list[int],
                         excluded_by_pqbloom: Callable[[str, Any], bool] | None) -> str:
    assert case.bloom is not None
    total = sum(rgs)
    notes = []
    for col in case.bloom.columns:
        cands = C.absent_values(case, col, 30)
        if excluded_by_pqbloom is not None:
            cands = sorted(cands, key=lambda v: not excluded_by_pqbloom(col, v))
        pruned = None
        last = None
        for v in cands[:3]:
            rows, scanned = spark_scan(env, path, col, v, SPARK_NO_DICT)
            require(rows == [], f"absent {col}={v!r} returned {rows}")
            last = scanned
            if scanned == 0:
                pruned = v
                break
        require(pruned is not None, f"Spark did not prune absent {col} (scanned {last} of {total} rows)")
        rows, scanned = spark_scan(env, path, col, pruned, SPARK_NO_BLOOM)
        require(scanned == total, f"without Bloom filtering Spark scanned {scanned} of {total} rows "
                                  f"(statistics pruned {col}={pruned!r}?)")
        present = [v for v in data[col] if v is not None]
        for v in (present[0], present[-1]):
            rows, scanned = spark_scan(env, path, col, v, SPARK_NO_DICT)
            want = sum(1 for x in data[col] if x == v)
            require(len(rows) == want and scanned > 0, f"present {col}={v!r}: {len(rows)} rows, scanned {scanned}")
        notes.append(col)
    return f"numOutputRows 0 for absent in-range values of {', '.join(notes)} ({total} without Bloom filtering)"


# ---------------------------------------------------------------------------------------------
# evidence: page index and statistics


def _page_value_ranges(rg_values: list[Any], first_rows: list[int]) -> list[list[Any]]:
    bounds = first_rows + [len(rg_values)]
    return [rg_values[a:b] for a, b in zip(bounds, bounds[1:])]


def page_index_evidence_pqbloom(case: C.Case, path: str, data: dict[str, list[Any]], rgs: list[int]) -> str:
    import pqbloom
    from pqbloom.crypto import ModuleType
    from pqbloom.format import T, decode_prefix
    from pqbloom.statistics import column_index_is_usable, decode_stat_value

    col = case.page_index
    assert col is not None
    pages_total = 0
    with _open_pqbloom(case, path) as pf:
        desc = pf.column_descriptor(col)
        for rg, (lo, hi) in enumerate(_rg_slices(rgs)):
            cc = pf.thrift_metadata.row_groups[rg].columns[desc.index]
            require(cc.column_index_offset is not None and cc.offset_index_offset is not None,
                    f"row group {rg}: no page index")
            raw_ci = pf.open_module(ModuleType.COLUMN_INDEX,
                                    pf.range_reader.read(cc.column_index_offset, cc.column_index_length), rg, desc)
            raw_oi = pf.open_module(ModuleType.OFFSET_INDEX,
                                    pf.range_reader.read(cc.offset_index_offset, cc.offset_index_length), rg, desc)
            ci = decode_prefix(T.ColumnIndex, raw_ci)[0]
            oi = decode_prefix(T.OffsetIndex, raw_oi)[0]
            locs = oi.page_locations
            first = [p.first_row_index for p in locs]
            counts = [b - a for a, b in zip(first, first[1:] + [rgs[rg]])]
            require(first[0] == 0 and all(c > 0 for c in counts), f"row group {rg}: bad first_row_index {first}")
            require(column_index_is_usable(ci, num_pages=len(locs), page_row_counts=counts, ptype=desc.physical_type),
                    f"row group {rg}: ColumnIndex not usable")
            meta = pf.chunk_metadata(rg, pf.column_descriptor(col))
            start = _chunk_start(meta)
            for p in locs:
                require(start <= p.offset < start + meta.total_compressed_size,
                        f"row group {rg}: page offset {p.offset} outside the chunk")
            lt = desc.field.logical_type
            for i, vals in enumerate(_page_value_ranges(data[col][lo:hi], first)):
                present = [v for v in vals if v is not None]
                if ci.null_pages[i]:
                    require(not present, f"row group {rg} page {i}: null page holds values")
                    continue
                mn = decode_stat_value(ci.min_values[i], desc.physical_type, desc.type_length,
                                       lt.kind if lt else None)
                mx = decode_stat_value(ci.max_values[i], desc.physical_type, desc.type_length,
                                       lt.kind if lt else None)
                require(mn <= min(present) and max(present) <= mx,
                        f"row group {rg} page {i}: [{mn}, {mx}] does not bound [{min(present)}, {max(present)}]")
            pages_total += len(locs)
        require(pages_total > len(rgs), f"only {pages_total} pages in {len(rgs)} row groups")
        note = f"{pages_total} pages; ColumnIndex usable and bounds every page; OffsetIndex consistent"
        if _predicate_available():
            # a value in the middle of the largest row group (Spark may leave a last one of a few rows)
            lo, hi = _rg_slices(rgs)[max(range(len(rgs)), key=lambda i: rgs[i])]
            v = data[col][(lo + hi) // 2]
            ex = pqbloom.Explain()
            got = pf.read(filters=pqbloom.field(col) == v, explain=ex)
            require(got.num_rows == 1 and got.column(col).to_pylist() == [v], f"filtered read of {col}={v} wrong")
            require(ex.pages_skipped > 0, f"filtered read skipped no page ({ex.to_dict()})")
            note += f"; filtered read skipped {ex.pages_skipped} of {ex.pages_total} pages"
    return note


def page_index_evidence_spark(env: Env, case: C.Case, path: str, data: dict[str, list[Any]], rgs: list[int]) -> str:
    col = case.page_index
    assert col is not None
    lo, hi = _rg_slices(rgs)[1]
    v = data[col][(lo + hi) // 2]
    base = {"parquet.filter.dictionary.enabled": "false", "parquet.filter.bloom.enabled": "false"}
    rows, with_ci = spark_scan(env, path, col, v, base)
    require(rows == [v], f"{col}={v}: got {rows}")
    rows, without = spark_scan(env, path, col, v, {**base, "parquet.filter.columnindex.enabled": "false"})
    require(rows == [v], f"{col}={v} without column index: got {rows}")
    require(without == hi - lo, f"without the column index Spark scanned {without} rows, expected the row group's "
                                f"{hi - lo}")
    require(with_ci < without, f"column index pruned nothing ({with_ci} of {without} rows)")
    return f"numOutputRows {with_ci} with the column index, {without} (the row group) without"


def _decode_stat(desc: Any, raw: bytes | None) -> Any:
    from pqbloom.statistics import decode_stat_value

    lt = desc.field.logical_type
    if raw is None:
        return None
    v = decode_stat_value(raw, desc.physical_type, desc.type_length, lt.kind if lt else None)
    return v.decode() if isinstance(v, bytes) and lt is not None and lt.kind == "STRING" else v


def _actual_stats(vals: list[Any]) -> tuple[Any, Any, int]:
    present = [v for v in vals if v is not None and not (isinstance(v, float) and math.isnan(v))]
    return min(present), max(present), sum(v is None for v in vals)


def stats_evidence_pqbloom(case: C.Case, path: str, data: dict[str, list[Any]], rgs: list[int]) -> str:
    import pqbloom

    with _open_pqbloom(case, path) as pf:
        for col in case.stats:
            desc = pf.column_descriptor(col)
            for rg, (lo, hi) in enumerate(_rg_slices(rgs)):
                st = pf.chunk_metadata(rg, pf.column_descriptor(col)).statistics
                mn, mx, nulls = _actual_stats(data[col][lo:hi])
                got = (_decode_stat(desc, st.min_value), _decode_stat(desc, st.max_value), st.null_count)
                require(got == (mn, mx, nulls), f"{col} row group {rg}: statistics {got}, actual {(mn, mx, nulls)}")
        note = f"min/max/null_count of {', '.join(case.stats)} exact in {len(rgs)} row groups"
        if _predicate_available():
            # a value in the middle of the largest row group (Spark may leave a last one of a few rows)
            lo, hi = _rg_slices(rgs)[max(range(len(rgs)), key=lambda i: rgs[i])]
            v = data["id"][(lo + hi) // 2]
            ex = pqbloom.Explain()
            got_t = pf.read(filters=pqbloom.field("id") == v, explain=ex)
            require(got_t.num_rows == 1, "filtered read returned the wrong rows")
            require(ex.row_groups_pruned_statistics == len(rgs) - 1,
                    f"statistics pruned {ex.row_groups_pruned_statistics} of {len(rgs) - 1} row groups")
            note += f"; filtered read pruned {ex.row_groups_pruned_statistics} row groups by statistics"
    return note


def stats_evidence_pyarrow(case: C.Case, info: dict[str, Any], data: dict[str, list[Any]], rgs: list[int]) -> str:
    for col in case.stats:
        for rg, (lo, hi) in enumerate(_rg_slices(rgs)):
            got = info["stats"][col][rg]
            want = _actual_stats(data[col][lo:hi])
            require(got is not None and tuple(got) == want, f"{col} row group {rg}: {got}, actual {want}")
    return f"pyarrow statistics exact for {', '.join(case.stats)}"


def stats_evidence_duckdb(env: Env, case: C.Case, path: str, data: dict[str, list[Any]], rgs: list[int]) -> str:
    rows = env.duck.execute("SELECT row_group_id, path_in_schema, stats_min_value, stats_max_value, stats_null_count "
                            "FROM parquet_metadata(?)", [path]).fetchall()
    got = {(r[0], r[1]): r[2:] for r in rows}
    for col in ("id", "s"):
        for rg, (lo, hi) in enumerate(_rg_slices(rgs)):
            mn, mx, nulls = _actual_stats(data[col][lo:hi])
            require(got.get((rg, col)) == (str(mn), str(mx), nulls),
                    f"{col} row group {rg}: parquet_metadata {got.get((rg, col))}, actual {(mn, mx, nulls)}")
    for rg, (lo, hi) in enumerate(_rg_slices(rgs)):
        require(got[(rg, "d")][2] == _actual_stats(data["d"][lo:hi])[2], f"d row group {rg}: null count")
    return "parquet_metadata min/max/null_count exact"


def stats_evidence_spark(env: Env, case: C.Case, path: str, data: dict[str, list[Any]], rgs: list[int]) -> str:
    lo, hi = _rg_slices(rgs)[1]
    v = data["id"][(lo + hi) // 2]
    rows, scanned = spark_scan(env, path, "id", v, SPARK_NO_BLOOM)
    require(rows == [v] and scanned == hi - lo, f"id={v}: {rows}, scanned {scanned}, expected the row group {hi - lo}")
    rows, all_rows = spark_scan(env, path, "id", v, {**SPARK_NO_BLOOM, "parquet.filter.stats.enabled": "false"})
    require(rows == [v] and all_rows == sum(rgs), f"without statistics Spark scanned {all_rows}")
    return f"numOutputRows {scanned} (one row group) by statistics, {all_rows} without"


# ---------------------------------------------------------------------------------------------
# one cell


def _values_check(expected: dict[str, list[Any]], got: dict[str, list[Any]]) -> str:
    diff = C.first_difference(expected, got)
    require(diff is None, f"values differ: {diff}")
    rows = len(next(iter(expected.values()))) if expected else 0
    return f"{rows} rows x {len(expected)} columns equal"


def run_cell(env: Env, case: C.Case, wf: Written, reader: str, data: dict[str, list[Any]],
             pq_written: Written | None) -> tuple[str, str, str]:
    """(status, note, evidence) of reading ``wf`` with ``reader``."""
    path = wf.path
    assert path is not None
    rgs = wf.row_groups
    partial = case.reader_limits.get(reader)
    hard = partial is not None and not _partial_limit(partial)
    if partial is not None and hard:
        return LIMIT, partial, ""
    notes: list[str] = []
    if reader == "pqbloom":
        notes.append(_values_check(data, read_pqbloom(case, path)))
        if case.bloom:
            notes.append(bloom_evidence_pqbloom(case, path, data, rgs))
        if case.page_index:
            notes.append(page_index_evidence_pqbloom(case, path, data, rgs))
        if case.stats:
            notes.append(stats_evidence_pqbloom(case, path, data, rgs))
    elif reader == "pyarrow":
        values, info = read_pyarrow(case, path)
        notes.append(_values_check(data, values))
        if case.bloom:
            for col in case.bloom.columns:
                require(all(o is not None for o in info["bloom"][col]), f"pyarrow sees no Bloom filter on {col}")
            notes.append("bloom_filter_offset reported for every chunk")
        if case.page_index:
            require(all(all(x) for x in info["index"][case.page_index]), "pyarrow sees no page index")
            notes.append("has_column_index/has_offset_index true")
        if case.stats:
            notes.append(stats_evidence_pyarrow(case, info, data, rgs))
    elif reader == "spark":
        if env.spark is None:
            return SKIP, f"Spark unavailable: {env.spark_error or 'disabled (--no-spark)'}", ""
        notes.append(_values_check(data, read_spark(env, case, path)))
        if case.bloom:
            excl = None
            if pq_written is not None and pq_written.path == path:
                excl = _pqbloom_excluder(case, path)
            notes.append(bloom_evidence_spark(env, case, path, data, rgs, excl))
        if case.page_index:
            notes.append(page_index_evidence_spark(env, case, path, data, rgs))
        if case.stats:
            notes.append(stats_evidence_spark(env, case, path, data, rgs))
    elif reader == "duckdb":
        notes.append(_values_check(data, read_duckdb(env, case, path)))
        if case.bloom:
            notes.append(bloom_evidence_duckdb(env, case, path, data, rgs))
        if case.stats:
            notes.append(stats_evidence_duckdb(env, case, path, data, rgs))
    evidence = "; ".join(n for n in notes if n)
    if partial is not None:
        return LIMIT, partial, evidence
    return OK, "", evidence


def _partial_limit(reason: str) -> bool:
    """Limitations where the values are still read and compared (only the feature's use is impossible)."""
    return reason in (C.PA_NO_BLOOM_PRUNE, C.PA_NO_PAGE_PRUNE, C.DUCK_NO_PAGE_INDEX_R)


def _pqbloom_excluder(case: C.Case, path: str) -> Callable[[str, Any], bool]:
    pf = _open_pqbloom(case, path)

    def excluded(col: str, v: Any) -> bool:
        try:
            return not any(pf.bloom_filter_might_contain(rg, col, v) for rg in range(pf.num_row_groups))
        except Exception:
            return False

    return excluded


# ---------------------------------------------------------------------------------------------
# the run


def write_case(env: Env, case: C.Case, data: dict[str, list[Any]], writer: str, out: Path) -> Written:
    lim = case.writer_limits.get(writer)
    if lim is not None:
        return Written(writer, None, NA if lim.startswith("n/a") else LIMIT, lim)
    if writer == "spark" and env.spark is None:
        return Written(writer, None, SKIP, f"Spark unavailable: {env.spark_error or 'disabled (--no-spark)'}")
    d = out / writer
    d.mkdir(parents=True, exist_ok=True)
    path = d / "data.parquet"
    try:
        if writer == "pqbloom":
            write_pqbloom(case, data, path)
        elif writer == "pyarrow":
            write_pyarrow(case, data, path)
        elif writer == "duckdb":
            write_duckdb(env, case, data, path)
        else:
            path = Path(write_spark(env, case, data, d / "spark_out"))
    except Exception as exc:
        return Written(writer, None, RED, f"{NAMES[writer]} failed to write: {_short(exc)}")
    try:
        rgs, note = verify_written(case, writer, str(path))
        return Written(writer, str(path), OK, note, rgs)
    except CheckFailed as exc:
        return Written(writer, str(path), RED, f"{NAMES[writer]}'s file lacks the feature: {exc}")
    except Exception as exc:  # the check opens the file with pqbloom
        return Written(writer, str(path), RED, f"pqbloom cannot open {NAMES[writer]}'s file: {_short(exc)}")


def _short(exc: BaseException) -> str:
    lines = [ln.strip() for ln in f"{type(exc).__name__}: {exc}".strip().splitlines() if ln.strip()]
    if not lines:
        return type(exc).__name__
    if type(exc).__name__ == "Py4JJavaError":  # the JVM's root cause, not py4j's wrapper line
        causes = [ln for ln in lines if ln.startswith("Caused by:")]
        java = [ln for ln in lines[1:] if "Exception" in ln and not ln.startswith("at ")]
        lines = [causes[-1]] if causes else java[:1] or lines
    return lines[0][:300]


def run_case(env: Env, case: C.Case, out: Path) -> list[Cell]:
    data = case.data()
    written = {w: write_case(env, case, data, w, out / case.id.replace(":", "_")) for w in C.WRITERS}
    cells = []
    for w, r in CELL_ORDER:
        wf = written[w]
        t0 = time.perf_counter()
        evidence = ""
        if wf.status != OK:
            status, note = wf.status, wf.note
        else:
            try:
                status, note, evidence = run_cell(env, case, wf, r, data, written["pqbloom"])
                if evidence:
                    evidence = "; ".join(x for x in (evidence, f"file: {wf.note}" if wf.note else "") if x)
            except CheckFailed as exc:
                status, note = RED, str(exc)
            except Exception as exc:
                status, note = RED, _short(exc)
                if os.environ.get("PQBLOOM_INTEROP_DEBUG"):
                    traceback.print_exc()
        cells.append(Cell(case.id, w, r, status, note, evidence, time.perf_counter() - t0))
    return cells


def run_matrix(workdir: str | Path | None = None, *, use_spark: bool = True, only: str | None = None,
               fixtures: bool = True, log: Callable[[str], None] = print) -> Report:
    start = time.perf_counter()
    report = Report()
    tmp = None
    if workdir is None:
        tmp = tempfile.mkdtemp(prefix="pqbloom-interop-")
        workdir = tmp
    work = Path(workdir)
    env = Env(work, use_spark=use_spark, log=log)
    try:
        report.versions = _versions(env)
        all_cases = C.all_cases()
        report.cases = [c for c in all_cases if only is None or only in c.id]
        for case in report.cases:
            t0 = time.perf_counter()
            cells = run_case(env, case, work)
            report.cells.extend(cells)
            summary = " ".join(f"{NAMES[c.writer][:2]}>{NAMES[c.reader][:2]}:{c.status}" for c in cells)
            log(f"{case.id:28s} {time.perf_counter() - t0:5.1f}s  {summary}")
            for c in cells:
                if c.status == RED:
                    log(f"    RED {NAMES[c.writer]} -> {NAMES[c.reader]}: {c.note}")
        if fixtures:
            t0 = time.perf_counter()
            report.fixtures = run_fixtures()
            log(f"fixture corpus: {len(report.fixtures)} files in {time.perf_counter() - t0:.1f}s "
                f"{report.fixture_counts()}")
            for f in report.fixtures:
                if f.status == RED:
                    log(f"    RED {f.path}: {f.note}")
    finally:
        env.close()
        if tmp is not None:
            shutil.rmtree(tmp, ignore_errors=True)
    report.seconds = time.perf_counter() - start
    return report


def _versions(env: Env) -> dict[str, str]:
    import duckdb
    import pyarrow

    import pqbloom

    out = {"pqbloom": pqbloom.__version__, "pyarrow": pyarrow.__version__, "duckdb": duckdb.__version__}
    if env.use_spark:
        try:
            import pyspark

            out["spark"] = pyspark.__version__
            jars = list((Path(pyspark.__file__).parent / "jars").glob("parquet-hadoop-*.jar"))
            if jars:
                out["parquet-java"] = jars[0].stem.replace("parquet-hadoop-", "")
        except ImportError:
            pass
    return out


# ---------------------------------------------------------------------------------------------
# the parquet-testing corpus

K16 = {"kf": b"0123456789012345", "kc1": b"1234567890123450", "kc2": b"1234567890123451"}
K32 = {"kf": b"01234567890123456789012345678901"}
K32.update({f"kc{i}": b"1234567890123456789012345678901" + str((i + 1) % 10).encode() for i in range(1, 9)})
AAD_SUPPLIED = {"encrypt_columns_and_footer_disable_aad_storage.parquet.encrypted",
                "aes256/encrypt_columns_and_footer_disable_aad_storage.parquet.encrypted"}
CORRUPT_CHECKSUM = {"datapage_v1-corrupt-checksum.parquet", "rle-dict-uncompressed-corrupt-checksum.parquet"}
HEAVY = {"large_string_map.brotli.parquet"}  # two 1 GiB map keys
# values MANIFEST.md documents for files pyarrow cannot read (a MAP read as a dict)
DOCUMENTED: dict[str, Any] = {"incorrect_map_schema.parquet": {"my_map": [[("parent", "another"), ("name", "report")]]}}


def _dataset50_check(table: Any) -> list[str]:
    """Columns of the shared 50-row encryption dataset that differ from MANIFEST.md's description."""
    n = 50
    i = np.arange(n)
    cols = {c.field.name: c for c in table.columns}
    bad = []
    expect: dict[str, Callable[[Any], bool]] = {
        "boolean_field": lambda c: c.values.tolist() == (i % 2 == 0).tolist(),
        "int32_field": lambda c: c.values.tolist() == i.tolist(),
        "int96_field": lambda c: np.ascontiguousarray(c.values).view("<u4").reshape(n, 3).tolist()
        == np.stack([i, i + 1, i + 2], axis=1).tolist(),
        "float_field": lambda c: c.values.tolist() == (i * np.float32(1.1)).astype(np.float32).tolist(),
        "double_field": lambda c: np.array_equal(c.values, i * 1.1111111),
        "ba_field": lambda c: c.to_pylist() == [b"parquet%03d" % k if k % 2 == 0 else None for k in range(n)],
        "flba_field": lambda c: [bytes(r) for r in c.values] == [bytes([k]) * 10 for k in range(n)],
        "int64_field": lambda c: c.to_pylist() == [[2 * k * 10**12, (2 * k + 1) * 10**12] for k in range(n)],
    }
    for name, col in cols.items():
        fn = expect.get(name)
        if fn is None or not fn(col):
            bad.append(name)
    return bad


def _fixture_encrypted(rel: str, path: Path) -> FixtureResult:
    import pqbloom
    from pqbloom.errors import UnsupportedError

    name = rel.split("/", 1)[1]
    if name == "external_key_material_java.parquet.encrypted":
        factory = pqbloom.CryptoFactory(lambda config: pqbloom.InMemoryKms(K16))
        props = factory.file_decryption_properties(pqbloom.KmsConnectionConfig(), file_path=str(path))
        t = pqbloom.read_table(path, decryption_properties=props)
        ok = (t.column("integers").to_pylist() == list(range(100))
              and t.column("strings").to_pylist() == ["abcdefghij"[i % 10] + str(i) for i in range(100)])
        return FixtureResult(rel, OK if ok else RED, "KMS, double wrapping, external key material sidecar; "
                             + ("100 documented rows" if ok else "values differ from MANIFEST.md"))
    keys = K32 if name.startswith("aes256/") else K16
    aad = b"tester" if name in AAD_SUPPLIED else None
    props = pqbloom.FileDecryptionProperties(key_retriever=lambda km: keys[km.decode()], aad_prefix=aad)
    with pqbloom.ParquetFile(path, decryption_properties=props) as pf:
        if name == "encrypt_columns_and_footer_bloom_filter.parquet.encrypted":
            t = pf.read(["double_field", "float_field", "int32_field", "name"])
            vals_ok = (t.column("double_field").to_pylist() == [i + 0.5 for i in range(2000)]
                       and t.column("float_field").to_pylist() == [i + 0.25 for i in range(2000)]
                       and t.column("int32_field").to_pylist() == list(range(2000))
                       and t.column("name").to_pylist() == [f"name_{i}" for i in range(2000)])
            filters = {c: pf.bloom_filter(0, c) for c in ("double_field", "float_field")}
            bf_ok = all(f is not None and bool(np.all(f.might_contain_many([i + off for i in range(2000)],
                                                                           pf.column_descriptor(c).physical_type)))
                        for (c, f), off in zip(filters.items(), (0.5, 0.25)))
            absent = sum(bool(pf.bloom_filter_might_contain(0, "double_field", i + 0.75)) for i in range(200))
            ok = vals_ok and bf_ok and absent < 40
            return FixtureResult(rel, OK if ok else RED,
                                 f"2000 documented rows; encrypted Bloom filters hold every value, exclude "
                                 f"{200 - absent}/200 absent" if ok else f"values {vals_ok}, filters {bf_ok}, "
                                 f"absent hits {absent}")
        flat = [d.dotted_path for d in pf.columns if d.max_repetition_level == 0]
        nested = [d.dotted_path for d in pf.columns if d.max_repetition_level > 0]
        bad = _dataset50_check(pf.read(flat))
        if bad:
            return FixtureResult(rel, RED, f"columns differ from the documented dataset: {bad}")
        note = f"{len(flat)} flat columns equal the documented 50-row dataset"
        try:
            t = pf.read(nested)
            bad = _dataset50_check(t)
            if bad:
                return FixtureResult(rel, RED, note + f"; nested {bad} differ")
            return FixtureResult(rel, OK, note + "; nested int64_field too")
        except UnsupportedError:
            return FixtureResult(rel, NOT_YET, f"pqbloom: not yet (nested) -- {note}; int64_field is a list")


def _flat_arrow(t: Any) -> Any:
    import pyarrow as pa

    while any(pa.types.is_struct(f.type) for f in t.schema):
        t = t.flatten()
    return t


def _is_nested_arrow(t: Any) -> bool:
    import pyarrow as pa

    return (pa.types.is_struct(t) or pa.types.is_list(t) or pa.types.is_large_list(t) or pa.types.is_map(t)
            or pa.types.is_fixed_size_list(t))


def _arrow_equal(got: Any, exp: Any) -> bool:
    import pyarrow as pa

    got = got.combine_chunks() if isinstance(got, pa.ChunkedArray) else got
    exp = exp.combine_chunks() if isinstance(exp, pa.ChunkedArray) else exp
    with contextlib.suppress(pa.ArrowInvalid, pa.ArrowNotImplementedError, pa.ArrowTypeError):
        if got.cast(exp.type).equals(exp):
            return True
    if pa.types.is_timestamp(exp.type):
        with contextlib.suppress(Exception):
            return got.cast(pa.int64()).to_pylist() == exp.cast(pa.int64()).to_pylist()
    try:
        return _deep_same(got.to_pylist(), exp.to_pylist())
    except Exception:
        return False


def _deep_same(a: Any, b: Any) -> bool:
    if isinstance(a, list | tuple) and isinstance(b, list | tuple):
        return len(a) == len(b) and all(_deep_same(x, y) for x, y in zip(a, b))
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(_deep_same(a[k], b[k]) for k in a)
    if isinstance(a, bytes) and isinstance(b, str):
        return a == b.encode()
    return C.same(a, b)


def _csv_check(path: Path, table: Any) -> str | None:
    """Compare with parquet-testing's *_expect.csv (by column position); None when equal."""
    import csv

    csv_path = path.with_name(path.stem + "_expect.csv")
    if not csv_path.is_file():
        return None
    with open(csv_path, newline="") as fh:
        rows = list(csv.reader(fh))
    body = rows[1:]
    cols = table.columns
    if len(body) != table.num_rows or any(len(r) != len(cols) for r in body):
        return f"{csv_path.name}: shape differs"
    for j, c in enumerate(cols):
        vals = c.to_pylist()
        for i, v in enumerate(vals):
            cell = body[i][j]
            got = "" if v is None else (v.decode() if isinstance(v, bytes) else str(v))
            if got != cell:
                return f"{csv_path.name}: {c.field.name}[{i}] {got!r} != {cell!r}"
    return None


def _nested_supported(data_dir: Path) -> bool:
    """Whether this pqbloom reads nested columns (the reader is growing them)."""
    import pqbloom
    from pqbloom.errors import UnsupportedError

    try:
        pqbloom.read_table(data_dir / "list_columns.parquet")
        return True
    except UnsupportedError:
        return False


def _fixture_plain(rel: str, path: Path) -> FixtureResult:
    import pyarrow.parquet as pq

    import pqbloom
    from pqbloom.errors import ChecksumError, ParquetError, UnsupportedError

    name = path.name
    if rel.startswith("bad_data/"):
        if name == "ARROW-GH-43605.parquet":
            exp = pq.read_table(path)
            got = pqbloom.read_table(path).to_arrow()
            ok = all(_arrow_equal(got.column(c), exp.column(c)) for c in exp.column_names)
            return FixtureResult(rel, OK if ok else RED, "pyarrow reads it; so does pqbloom, equal values")
        try:
            pqbloom.read_table(path)
        except ParquetError as exc:
            return FixtureResult(rel, OK, f"rejected with {type(exc).__name__}")
        return FixtureResult(rel, RED, "corrupt file read without error")
    if name == "int96_from_spark.parquet":
        # INT96 years 1 and 9999: pyarrow's default wraps them; pqbloom refuses to convert them and reads the
        # in-range ones as pyarrow does in milliseconds (the last value's time of day is out of spec: refused too)
        from pqbloom.errors import TimestampRangeError

        try:
            pqbloom.read_table(path).to_arrow()
            return FixtureResult(rel, RED, "INT96 outside nanoseconds converted without error")
        except TimestampRangeError:
            pass
        exp = pq.read_table(path, coerce_int96_timestamp_unit="ms").slice(0, 4)
        got = pqbloom.read_table(path, coerce_int96_timestamp_unit="ms",
                                 filters=[("a", "<=", "9999-12-31T23:59:59")]).to_arrow()
        ok = got.equals(exp)
        return FixtureResult(rel, OK if ok else RED, "INT96 past nanoseconds: TimestampRangeError by default (pyarrow "
                             "wraps); with coerce_int96_timestamp_unit='ms' equal to pyarrow")
    verify = True
    note_prefix = ""
    if name in CORRUPT_CHECKSUM:
        try:
            pqbloom.read_table(path)
            return FixtureResult(rel, RED, "wrong page CRC not detected")
        except ChecksumError:
            verify = False
            note_prefix = "ChecksumError on the bad CRC; without verification: "
    pf = pqbloom.ParquetFile(path, verify_checksums=verify)
    leaves = pf.columns
    flat = [d.dotted_path for d in leaves if d.max_repetition_level == 0]
    nested_leaves = [d.dotted_path for d in leaves if d.max_repetition_level > 0]
    if name in HEAVY:
        if nested_leaves and not _nested_supported(path.parent):
            return FixtureResult(rel, NOT_YET, "pqbloom: not yet (nested) -- and a 2 GiB memory-stress file: "
                                               f"metadata only ({pf.num_rows} rows)")
        return FixtureResult(rel, SKIP, f"2 GiB memory-stress file (two 1 GiB map keys): metadata only "
                                        f"({pf.num_rows} rows), too large for the matrix run")
    try:
        exp_full = pq.read_table(path)
    except Exception as exc:
        exp_full = None
        arrow_error = _short(exc)
    ours = pf.read(columns=flat) if flat else None
    csv_diff = _csv_check(path, ours) if ours is not None else None
    if csv_diff:
        return FixtureResult(rel, RED, csv_diff)
    csv_note = " and its _expect.csv" if path.with_name(path.stem + "_expect.csv").is_file() else ""
    if exp_full is None:
        # pyarrow cannot read it (documented in MANIFEST.md)
        try:
            got_all = pqbloom.read_table(path)
            documented = DOCUMENTED.get(name)
            if documented is None:
                return FixtureResult(rel, RED, f"pyarrow fails ({arrow_error}) and no documented values to compare")
            if not _deep_same(got_all.to_pydict(), documented):
                return FixtureResult(rel, RED, f"differs from the documented values {documented}")
            return FixtureResult(rel, OK, f"pyarrow fails ({arrow_error}); pqbloom reads the documented values "
                                          "(MANIFEST.md)")
        except UnsupportedError as exc:
            if nested_leaves:
                return FixtureResult(rel, NOT_YET, f"pqbloom: not yet (nested) -- pyarrow fails too ({arrow_error})")
            return FixtureResult(rel, RED, f"pqbloom: {_short(exc)}")
        except ParquetError as exc:
            return FixtureResult(rel, OK, f"pyarrow fails ({arrow_error}); pqbloom raises {type(exc).__name__}")
    flat_arrow = _flat_arrow(exp_full)
    compared = 0
    assert ours is not None or not flat
    for col in flat:
        if col not in flat_arrow.column_names:
            continue
        if ours is None or not _arrow_equal(ours.column(col).to_arrow(), flat_arrow.column(col)):
            return FixtureResult(rel, RED, f"column {col} differs from pyarrow")
        compared += 1
    note = f"{note_prefix}{compared} flat columns equal pyarrow{csv_note}"
    nested_top = [f.name for f in exp_full.schema if _is_nested_arrow(f.type)
                  and any(leaf.split(".")[0] == f.name for leaf in nested_leaves)]
    if not nested_top:
        return FixtureResult(rel, OK, note)
    try:
        got = pf.read(columns=nested_top).to_arrow()
    except UnsupportedError:
        return FixtureResult(rel, NOT_YET, f"pqbloom: not yet (nested) -- {note}; {len(nested_top)} nested fields")
    for col in nested_top:
        if not _arrow_equal(got.column(col), exp_full.column(col)):
            return FixtureResult(rel, RED, f"nested field {col} differs from pyarrow")
    return FixtureResult(rel, OK, f"{note}; {len(nested_top)} nested fields equal pyarrow")


def _fixture_other(rel: str, path: Path) -> FixtureResult:
    from pqbloom.bloom import BloomFilter
    from pqbloom.errors import ParquetError
    from pqbloom.format import T

    name = path.name
    if name == "bloom_filter.xxhash.bin":
        bf, _ = BloomFilter.parse(path.read_bytes())
        words = ["hello", "parquet", "bloom", "filter"]
        ok = all(bf.might_contain(w, T.Type.BYTE_ARRAY) for w in words) and not any(
            bf.might_contain(w, T.Type.BYTE_ARRAY) for w in ("Hello", "nope"))
        return FixtureResult(rel, OK if ok else RED, "SBBF with Thrift header: the 4 inserted words found, "
                             "'Hello'/'nope' excluded")
    if name == "bloom_filter.bin":
        try:
            BloomFilter.parse(path.read_bytes())
            return FixtureResult(rel, RED, "legacy murmur3 blob parsed as an SBBF")
        except ParquetError as exc:
            return FixtureResult(rel, NA, f"legacy pre-release murmur3 filter format (not in the spec); "
                                          f"rejected with {type(exc).__name__}")
    if name.endswith("_expect.csv"):
        return FixtureResult(rel, NA, f"expected values, compared with {name.replace('_expect.csv', '.parquet')}")
    if name.startswith("_KEY_MATERIAL_FOR_"):
        return FixtureResult(rel, NA, "key material sidecar, used to decrypt external_key_material_java")
    if name == "geospatial.yaml":
        return FixtureResult(rel, NA, "human-readable content of geospatial.parquet (compared with pyarrow)")
    if name == "MANIFEST.md":
        return FixtureResult(rel, NA, "corpus description (keys, expected encrypted values)")
    return FixtureResult(rel, RED, "unknown fixture: add it to the interop harness")


def run_fixtures(root: Path = FIXTURES) -> list[FixtureResult]:
    if not root.is_dir():
        return [FixtureResult(str(root), RED, "fixture corpus not found")]
    out = []
    for path in sorted(p for p in root.rglob("*") if p.is_file()):
        rel = path.relative_to(root).as_posix()
        try:
            if rel.endswith(".parquet.encrypted"):
                res = _fixture_encrypted(rel, path)
            elif rel.endswith(".parquet"):
                res = _fixture_plain(rel, path)
            else:
                res = _fixture_other(rel, path)
        except Exception as exc:
            res = FixtureResult(rel, RED, _short(exc))
        out.append(res)
    return out


# ---------------------------------------------------------------------------------------------
# output

SYMBOL = {OK: "ok", LIMIT: "peer limit", RED: "RED", NA: "n/a", SKIP: "skip", NOT_YET: "not yet"}


def _footnotes(report: Report) -> tuple[dict[tuple[str, str, str], int], list[str]]:
    index: dict[str, int] = {}
    cell_ref: dict[tuple[str, str, str], int] = {}
    for c in report.cells:
        if c.status == OK:
            continue
        reason = _reason(c)
        if reason not in index:
            index[reason] = len(index) + 1
        cell_ref[(c.case, c.writer, c.reader)] = index[reason]
    return cell_ref, list(index)


def _reason(c: Cell) -> str:
    return c.note


def render_text(report: Report) -> str:
    refs, notes = _footnotes(report)
    head = ["feature"] + [f"{NAMES[w]}>{NAMES[r]}" for w, r in CELL_ORDER]
    rows = []
    by = {(c.case, c.writer, c.reader): c for c in report.cells}
    for case in report.cases:
        row = [case.id]
        for w, r in CELL_ORDER:
            c = by.get((case.id, w, r))
            if c is None:
                row.append("-")
                continue
            sym = {OK: "ok", LIMIT: "lim", RED: "RED", NA: "n/a", SKIP: "skip"}.get(c.status, c.status)
            row.append(sym if c.status == OK else f"{sym}[{refs[(c.case, c.writer, c.reader)]}]")
        rows.append(row)
    widths = [max(len(str(r[i])) for r in [head] + rows) for i in range(len(head))]
    lines = ["  ".join(str(x).ljust(w) for x, w in zip(head, widths))]
    lines.append("  ".join("-" * w for w in widths))
    lines += ["  ".join(str(x).ljust(w) for x, w in zip(r, widths)) for r in rows]
    lines.append("")
    lines += [f"[{i}] {n}" for i, n in enumerate(notes, 1)]
    lines.append("")
    lines.append(_summary_line(report))
    return "\n".join(lines)


def _summary_line(report: Report) -> str:
    counts = report.counts()
    fx = report.fixture_counts()
    cells = ", ".join(f"{counts.get(s, 0)} {SYMBOL[s]}" for s in (OK, LIMIT, NA, SKIP, RED) if counts.get(s))
    fixtures = ", ".join(f"{fx.get(s, 0)} {SYMBOL[s]}" for s in (OK, NOT_YET, NA, SKIP, RED) if fx.get(s))
    return (f"{len(report.cells)} cells: {cells}" + (f" | fixture corpus, {len(report.fixtures)} files: {fixtures}"
                                                      if report.fixtures else "")
            + f" | {report.seconds:.0f} s")


def _md_escape(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def render_markdown(report: Report) -> str:
    refs, notes = _footnotes(report)
    by = {(c.case, c.writer, c.reader): c for c in report.cells}
    versions = ", ".join(f"{k} {v}" for k, v in report.versions.items())
    out = [
        "# Interop matrix",
        "",
        "Generated by `python -m interop` (and by `tests/integration/test_interop_matrix.py` in CI); do not edit by hand.",
        "",
        f"Peers: {versions}.",
        "",
        "Every cell has pqbloom on one side: a file written by the column's writer, read by its reader.",
        "**ok** means the reader returned exactly the written values (NaN, -0.0, nulls, full range) *and*, for",
        "Bloom filters, page indexes and statistics, demonstrably used them: pqbloom's probes exclude absent",
        "in-range values and keep every present one, its page index decodes, is usable and bounds every page",
        "(and a filtered read skips pages / prunes row groups); Spark's scan `numOutputRows` is 0 for an absent",
        "in-range value with Bloom filtering and every row without, and smaller than the row group with the",
        "column index; DuckDB's `parquet_bloom_probe` excludes absent values and never a present one. Before",
        "any reading, the written file is checked for the feature itself (codec, dictionary pages, page",
        "version, encodings, Bloom filter placement, page index, statistics, encryption layout and key",
        "metadata, Parquet types). **peer limit** is something the peer cannot do (reason in the notes; where",
        "the peer can still read, its values were checked too); **n/a** is not applicable. Cells between two",
        "peers (e.g. pyarrow -> DuckDB) are not part of this matrix.",
        "",
        f"**Summary:** {_summary_line(report)}",
        "",
        "| feature | " + " | ".join(f"{NAMES[w]} &rarr; {NAMES[r]}" for w, r in CELL_ORDER) + " |",
        "|---|" + "---|" * len(CELL_ORDER),
    ]
    for case in report.cases:
        row = [f"`{case.id}` {case.title}"]
        for w, r in CELL_ORDER:
            c = by.get((case.id, w, r))
            if c is None:
                row.append("")
            elif c.status == OK:
                row.append("ok")
            else:
                row.append(f"{SYMBOL[c.status]} [{refs[(c.case, c.writer, c.reader)]}]")
        out.append("| " + " | ".join(_md_escape(x) for x in row) + " |")
    out += ["", "## Notes", ""]
    out += [f"{i}. {_md_escape(n)}" for i, n in enumerate(notes, 1)]
    out += ["", "## Evidence per cell", "",
            "| feature | cell | evidence |", "|---|---|---|"]
    for c in report.cells:
        if c.evidence and c.status in (OK, LIMIT):
            out.append(f"| `{c.case}` | {NAMES[c.writer]} &rarr; {NAMES[c.reader]} "
                       f"{'' if c.status == OK else '(peer limit) '}| {_md_escape(c.evidence)} |")
    if report.fixtures:
        out += ["", "## parquet-testing corpus", "",
                "Every file of `../shared/fixtures/parquet-testing`, read by pqbloom and compared with pyarrow where "
                "pyarrow can read it, with the documented values (MANIFEST.md, `*_expect.csv`) otherwise; encrypted "
                "files with the keys from MANIFEST.md.", "",
                "| file | pqbloom | notes |", "|---|---|---|"]
        for f in report.fixtures:
            out.append(f"| `{f.path}` | {SYMBOL[f.status]} | {_md_escape(f.note)} |")
    out.append("")
    return "\n".join(out)


def write_markdown(report: Report, path: str | Path = MATRIX_MD) -> Path:
    p = Path(path)
    p.write_text(render_markdown(report), encoding="utf-8")
    return p
