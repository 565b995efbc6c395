"""Reader hardening, part 2: schema depth, allocation failures, memory ceilings on every allocation,
legacy LZ4 bounds and the parquet-cpp < 3.0 v2 page compatibility case (issue #15, items 7, 8, 10, 13, 14).

Hostile files are built from real pages (pqbloom's or pyarrow's) with edited headers or footers; the
peers (pyarrow, DuckDB) say what a file holds or whether it is readable at all.
"""

from __future__ import annotations

import io
import subprocess
import sys

import cramjam
import duckdb
import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import pqbloom
from pqbloom import compression
from pqbloom.cli import main as cli
from pqbloom.encodings import encode_delta_binary_packed
from pqbloom.errors import CorruptFileError, MemoryLimitError, SchemaError, UnsupportedError
from pqbloom.file import column_reader as column_reader_mod
from pqbloom.file import pages as pages_mod
from pqbloom.format import T
from pqbloom.format import codec as format_codec
from pqbloom.memory.scratch import Scratch
from tests.corpora import needs
from tests.paths import REAL_WORLD

from .test_hardening import LIE, MB, rebuild, rewrite_footer, single_chunk, traced

#: pyarrow's default schema_depth_limit: levels counting the root (DuckDB reads up to 500)
PYARROW_DEPTH_LIMIT = 100

# -- 7. deeply nested schemas -------------------------------------------------------------------------


def _nested_structs(levels: int) -> pa.Table:
    """A table whose one column is ``levels`` structs deep, around an int32 leaf: two rows, one null."""
    t: pa.DataType = pa.int32()
    v: object = 5
    for _ in range(levels):
        t = pa.struct([pa.field("f", t)])
        v = {"f": v}
    return pa.table({"c": pa.array([v, None], type=t)})


def _deep_file(tmp_path, levels: int) -> str:
    path = str(tmp_path / f"deep{levels}.parquet")
    pq.write_table(_nested_structs(levels), path)
    return path


def _cli(*args: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    old = sys.stdout, sys.stderr
    sys.stdout, sys.stderr = out, err
    try:
        rc = cli.main(list(args))
    finally:
        sys.stdout, sys.stderr = old
    return rc, out.getvalue(), err.getvalue()


def _cli_commands(path: str, levels: int, tmp_path) -> list[list[str]]:
    leaf = "c" + ".f" * levels
    return [["schema", path], ["inspect", path, "--pages"], ["head", path, "-n", "2"],
            ["query", path, "-f", f"{leaf} == 5", "--explain"],
            ["probe", path, leaf, "5"], ["layout", path, "-o", str(tmp_path / "layout.svg")]]


def test_footer_nested_1000_groups_is_a_typed_error_everywhere(tmp_path):
    # pyarrow (schema_depth_limit 100) and DuckDB (500 levels) both refuse this file; before the fix
    # pqbloom raised RecursionError from ParquetFile(), read_schema and every CLI command
    path = _deep_file(tmp_path, 1000)
    with pytest.raises(OSError, match="too deeply nested"):
        pq.read_table(path)
    with pytest.raises(duckdb.Error, match="nested more than"):
        duckdb.sql(f"select * from '{path}'").fetchall()
    for fn in (pqbloom.ParquetFile, pqbloom.read_schema, pqbloom.read_table, pqbloom.read_metadata):
        with pytest.raises(UnsupportedError, match="1,002 levels deep"):
            fn(path)
    for cmd in _cli_commands(path, 1000, tmp_path):
        rc, _, err = _cli(*cmd)
        assert rc == 1 and "levels deep" in err and "ecursion" not in err, (cmd, err)


def test_deepest_schema_pyarrow_reads_is_read_whole(tmp_path):
    # the deepest schema pyarrow's default limit accepts: read equal to pyarrow everywhere, even from a
    # call stack already 400 frames deep (every walk has its margin)
    levels = PYARROW_DEPTH_LIMIT - 2  # struct levels; with the root and the leaf, PYARROW_DEPTH_LIMIT
    path = _deep_file(tmp_path, levels)
    expected = pq.read_table(path)
    assert expected.column("c").to_pylist()[1] is None
    deeper = _deep_file(tmp_path, levels + 1)
    with pytest.raises(OSError, match="too deeply nested"):
        pq.read_table(deeper)
    with pytest.raises(UnsupportedError, match="levels deep"):
        pqbloom.ParquetFile(deeper)

    def check() -> None:
        pf = pqbloom.ParquetFile(path)
        str(pf.table_schema), str(pf.schema), repr(pf.thrift_metadata.schema[1])
        t = pf.read()
        repr(t)
        assert t.to_arrow().equals(expected)
        assert t.to_pylist() == expected.to_pylist()
        for batch in pf.iter_batches(batch_size=1):
            batch.to_pylist()
        leaf = "c" + ".f" * levels
        hit = pqbloom.read_table(path, filters=pqbloom.field(leaf) == 5)
        assert hit.to_pylist() == expected.slice(0, 1).to_pylist()
        assert pqbloom.read_table(path, columns=[leaf]).column(leaf).to_pylist() == [5, None]
        out = str(tmp_path / "back.parquet")
        pqbloom.write_table(t, out)
        assert pq.read_table(out).equals(expected)
        pqbloom.write_table(expected, out)
        assert pq.read_table(out).equals(expected)
        for cmd in _cli_commands(path, levels, tmp_path):
            rc, _, err = _cli(*cmd)
            assert rc == 0, (cmd, err)

    def deep(k: int) -> None:
        check() if k == 0 else deep(k - 1)

    deep(400)


def test_writing_a_schema_deeper_than_readable_is_a_schema_error(tmp_path):
    levels = PYARROW_DEPTH_LIMIT + 10
    spec = "struct<f: " * levels + "int32" + ">" * levels
    with pytest.raises(SchemaError, match="levels deep"):
        pqbloom.Schema.from_types({"c": spec})
    table = _nested_structs(1000)
    with pytest.raises(SchemaError, match="levels deep"):
        pqbloom.write_table(table, str(tmp_path / "x.parquet"))
    with pytest.raises(SchemaError, match="levels deep"):
        pqbloom.write_table({"c": table.column("c").to_pylist()}, str(tmp_path / "y.parquet"))
    assert not list(tmp_path.iterdir())


# -- 8. an allocation failure is not corruption ----------------------------------------------------------


def _snappy_file(tmp_path) -> str:
    path = str(tmp_path / "snappy.parquet")
    pq.write_table(pa.table({"id": np.arange(1000, dtype=np.int64), "s": [f"v{i}" for i in range(1000)]}), path,
                   compression="snappy")
    return path


def _assert_memory_not_corrupt(fn) -> None:
    with pytest.raises(MemoryLimitError) as info:
        fn()
    assert "orrupt" not in str(info.value) and "MemoryError" in str(info.value), info.value
    assert not isinstance(info.value, CorruptFileError)


@pytest.mark.parametrize("where", ["decompressor", "decoder", "dictionary", "footer"])
def test_allocation_failure_is_a_memory_error_not_corruption(tmp_path, monkeypatch, where):
    path = _snappy_file(tmp_path)
    pf = pqbloom.ParquetFile(path)

    def no_memory(*a, **k):
        raise MemoryError()

    if where == "decompressor":
        # the page's output buffer (a scratch lease), and cramjam's own allocations
        monkeypatch.setattr(Scratch, "take", no_memory)
        monkeypatch.setattr(cramjam.snappy, "decompress_raw", no_memory)
        monkeypatch.setattr(cramjam.snappy, "decompress_raw_into", no_memory)
    elif where == "decoder":
        monkeypatch.setattr(pages_mod, "decode_plain", no_memory)
    elif where == "dictionary":
        monkeypatch.setattr(column_reader_mod, "take_dictionary", no_memory)
    else:
        monkeypatch.setattr(format_codec._thread_protocol(), "_fast_decode", no_memory)
    if where == "footer":
        _assert_memory_not_corrupt(lambda: pqbloom.ParquetFile(path))
        return
    _assert_memory_not_corrupt(pf.read)
    _assert_memory_not_corrupt(lambda: pf.read_row_group(0))
    _assert_memory_not_corrupt(lambda: list(pf.iter_batches(batch_size=100)))
    _assert_memory_not_corrupt(lambda: pqbloom.read_table(path, filters=pqbloom.field("id") == 5))
    _assert_memory_not_corrupt(lambda: pqbloom.read_table(path, columns=["s"], filters=pqbloom.field("id") >= 5))


def test_allocation_failure_in_legacy_lz4_is_not_corruption(monkeypatch):
    data = _legacy_lz4_file(np.arange(1000, dtype=np.int64))
    assert pqbloom.ParquetFile(data).read().column("v").to_pylist() == list(range(1000))

    def no_memory(*a, **k):
        raise MemoryError()

    monkeypatch.setattr(cramjam.lz4, "decompress_block_into", no_memory)
    monkeypatch.setattr(cramjam.lz4, "decompress_into", no_memory)
    _assert_memory_not_corrupt(pqbloom.ParquetFile(data).read)


_OOM_SCRIPT = """
import resource, sys
import pqbloom
from pqbloom.errors import MemoryLimitError
path = sys.argv[1]
pf = pqbloom.ParquetFile(path)
with open("/proc/self/status") as f:
    vm = next(int(line.split()[1]) * 1024 for line in f if line.startswith("VmSize:"))
resource.setrlimit(resource.RLIMIT_AS, (vm + (256 << 20), resource.RLIM_INFINITY))
try:
    pf.read()
except MemoryLimitError as exc:
    print("MemoryLimitError:", exc)
except BaseException as exc:
    print("OTHER:", type(exc).__name__, exc)
else:
    print("READ")
"""


def test_real_allocation_failure_under_an_address_space_limit(tmp_path):
    # a sound 1 GiB column of zeros (a few MB of zstd) read in a process that can only map 256 MiB more
    path = str(tmp_path / "zeros.parquet")
    pq.write_table(pa.table({"z": pa.array(np.zeros(128 * MB, np.int64))}), path, compression="zstd",
                   use_dictionary=False)
    proc = subprocess.run([sys.executable, "-c", _OOM_SCRIPT, path], capture_output=True, text=True, timeout=300)
    out = proc.stdout.strip()
    assert out.startswith("MemoryLimitError:"), (out, proc.stderr[-2000:])
    assert "orrupt" not in out


# -- 14. the legacy LZ4 codec is bounded by what its input can hold -------------------------------------

def _hadoop_frame(raw: bytes) -> bytes:
    block = bytes(cramjam.lz4.compress_block(raw, store_size=False))
    return len(raw).to_bytes(4, "big") + len(block).to_bytes(4, "big") + block


def _legacy_lz4_file(values, *, layout: str = "hadoop", claim: int | None = None) -> bytes:
    """One uncompressed v1 page per chunk recompressed with the deprecated LZ4 codec (as parquet-cpp
    wrote it: Hadoop framing; or a raw block or an LZ4 frame, as other writers did). ``claim`` replaces the
    uncompressed size the page header states."""
    pages, md = single_chunk({"v": values}, compression="none", use_dictionary=False)
    for page in pages:
        h, raw = page
        if layout == "hadoop":
            body = _hadoop_frame(raw)
        elif layout == "raw":
            body = bytes(cramjam.lz4.compress_block(raw, store_size=False))
        else:
            body = bytes(cramjam.lz4.compress(raw))
        page[1] = body
        h.compressed_page_size = len(body)
        if claim is not None:
            h.uncompressed_page_size = claim
    md.row_groups[0].columns[0].meta_data.codec = T.CompressionCodec.LZ4
    return rebuild(pages, md)


@pytest.mark.parametrize("layout", ["hadoop", "raw", "frame"])
def test_legacy_lz4_layouts_read(layout):
    values = np.arange(5000, dtype=np.int64) % 7
    data = _legacy_lz4_file(values, layout=layout)
    assert pqbloom.ParquetFile(data).read().column("v").to_pylist() == values.tolist()


@pytest.mark.traces_memory
@pytest.mark.parametrize("layout", ["hadoop", "raw", "frame"])
def test_legacy_lz4_huge_claim_allocates_nothing_without_a_limit(layout):
    # before the fix a ~100-byte page claiming 2 GiB made the frame fallback allocate 2 GiB + 1
    data = _legacy_lz4_file(np.zeros(8, np.int64), layout=layout, claim=LIE)
    assert len(data) < 1000
    with traced() as mem:
        with pytest.raises(CorruptFileError, match="LZ4"):
            pqbloom.ParquetFile(data).read()
    assert mem.peak < 4 * MB, mem.peak


@pytest.mark.traces_memory
def test_legacy_lz4_bound_direct():
    # the codec itself: an input of n bytes cannot hold more than ~255 n bytes in any LZ4 layout
    body = _hadoop_frame(bytes(64))
    for size in (LIE, 255 * len(body) + 65, 1 << 30):
        with traced() as mem:
            with pytest.raises(CorruptFileError):
                compression.decompress(compression.codec_by_id(T.CompressionCodec.LZ4), body, size)
        assert mem.peak < MB, (size, mem.peak)


def test_legacy_lz4_fixtures_still_read(fixtures_dir):
    for name in ("hadoop_lz4_compressed.parquet", "hadoop_lz4_compressed_larger.parquet",
                 "non_hadoop_lz4_compressed.parquet"):
        path = str(fixtures_dir / "data" / name)
        assert pqbloom.read_table(path).to_arrow().equals(pq.read_table(path)), name


# -- 13. memory_limit bounds every allocation of a read ---------------------------------------------------

def _uvarint(n: int) -> bytes:
    out = bytearray()
    while True:
        b = n & 0x7F
        n >>= 7
        if n:
            out.append(b | 0x80)
        else:
            out.append(b)
            return bytes(out)


def _rle_run(count: int, value: int, bit_width: int) -> bytes:
    """One RLE run of the hybrid: ``count`` copies of ``value`` in a few bytes."""
    return _uvarint(count << 1) + value.to_bytes((bit_width + 7) // 8, "little")


def _dbp(values: np.ndarray) -> bytes:
    return encode_delta_binary_packed(values, block_size=65536, miniblocks=8)


def _hostile(kind: str, n: int, *, version: str = "1.0", nullable: bool = False, nested: bool = False) -> bytes:
    """A one-page file whose page honestly encodes ``n`` values in a few bytes, with the chunk, row
    group and file counts saying ``n`` too (every claim agrees; only the expansion is large).

    ``nested``: the values are the elements of one list (a single row), levels as RLE runs."""
    if nested:
        return _hostile_list(kind, n, version=version)
    if kind in ("dict", "dict0"):
        table = {"v": np.zeros(100, np.int32)}  # enough repeats for the writer to choose a dictionary
    elif kind == "bool":
        table = {"v": np.zeros(1, bool)}
    elif kind == "delta":
        table = {"v": np.zeros(1, np.int64)}
    else:
        table = {"v": ["abcd"]}
    schema = pqbloom.Schema([pqbloom.schema.Field("v", {"dict": T.Type.INT32, "dict0": T.Type.INT32,
                                                        "bool": T.Type.BOOLEAN,
                                                        "delta": T.Type.INT64}.get(kind, T.Type.BYTE_ARRAY),
                                                  None if kind in ("dict", "dict0", "bool", "delta") else
                                                  pqbloom.schema.LogicalType("STRING"), nullable)])
    pages, md = single_chunk(table, schema=schema, compression="none", data_page_version=version,
                             use_dictionary=kind.startswith("dict"))
    assert (pages[0][0].type == T.PageType.DICTIONARY_PAGE) == kind.startswith("dict")
    defs = _rle_run(n, 1, 1) if nullable else b""
    values, enc = _hostile_values(kind, n)
    _set_page(pages, md, n, version, defs, values, enc, nullable)
    return rebuild(pages, md)


def _hostile_values(kind: str, n: int) -> tuple[bytes, int]:
    if kind == "dict":
        values, enc = b"\x01" + _rle_run(n, 0, 1), T.Encoding.RLE_DICTIONARY
    elif kind == "dict0":  # bit width 0: an RLE run header alone stands for any number of index 0
        values, enc = b"\x00" + _rle_run(n, 0, 0), T.Encoding.RLE_DICTIONARY
    elif kind == "bool":
        run = _rle_run(n, 1, 1)
        values, enc = len(run).to_bytes(4, "little") + run, T.Encoding.RLE
    elif kind == "delta":  # zero deltas in blocks of 65,536: 9 bytes a block
        values, enc = _dbp(np.zeros(n, np.int64)), T.Encoding.DELTA_BINARY_PACKED
    else:  # DELTA_BYTE_ARRAY: a 255-byte value, then n - 1 values repeating it whole (prefix 255, suffix "")
        prefix = np.full(n, 255, np.int32)
        prefix[0] = 0
        suffix = np.zeros(n, np.int32)
        suffix[0] = 255
        values, enc = _dbp(prefix) + _dbp(suffix) + b"x" * 255, T.Encoding.DELTA_BYTE_ARRAY
    return values, enc


def _set_page(pages, md, n: int, version: str, defs: bytes, values: bytes, enc: int, nullable: bool,
              reps: bytes = b"", rows: int | None = None) -> None:
    h, _ = pages[-1]
    rows = n if rows is None else rows
    if version == "1.0":
        lv = b"".join(len(x).to_bytes(4, "little") + x for x in (reps, defs) if x)
        body = lv + values
        h.data_page_header.num_values = n
        h.data_page_header.encoding = enc
    else:
        body = reps + defs + values
        dp = h.data_page_header_v2
        dp.num_values, dp.num_rows = n, rows
        dp.num_nulls = 0
        dp.encoding = enc
        dp.definition_levels_byte_length = len(defs)
        dp.repetition_levels_byte_length = len(reps)
        dp.is_compressed = False
    pages[-1][1] = body
    h.compressed_page_size = h.uncompressed_page_size = len(body)
    h.crc = None
    md.row_groups[0].columns[0].meta_data.num_values = n
    md.row_groups[0].columns[0].meta_data.encodings = [enc]
    md.row_groups[0].num_rows = md.num_rows = rows


def _hostile_list(kind: str, n: int, *, version: str) -> bytes:
    """One row holding a list of ``n`` elements (levels and values a few bytes of RLE runs)."""
    assert kind in ("dict", "dict0", "bool")
    ptype = "bool" if kind == "bool" else "int32"
    schema = pqbloom.Schema.from_types({"v": f"list<{ptype}>"})
    elem = [False] * 100 if kind == "bool" else [0] * 100
    pages, md = single_chunk({"v": [elem]}, schema=schema, compression="none", data_page_version=version,
                             use_dictionary=kind.startswith("dict"))
    reps = _rle_run(1, 0, 1) + _rle_run(n - 1, 1, 1)
    defs = _rle_run(n, 3, 2)
    values, enc = _hostile_values(kind, n)
    _set_page(pages, md, n, version, defs, values, enc, True, reps=reps, rows=1)
    return rebuild(pages, md)


LIMIT = 8 * MB
_EXPECTED = {"dict": 0, "dict0": 0, "bool": True, "delta": 0, "dba": "x" * 255}
_HOSTILE = [("dict", False, False), ("dict", True, False), ("dict0", False, False), ("bool", False, False),
            ("bool", True, False), ("delta", False, False), ("dba", False, False), ("dba", True, False),
            ("dict", False, True), ("dict0", False, True), ("bool", False, True)]


def _reads(data: bytes, kind: str, nested: bool):
    pf = pqbloom.ParquetFile(data, memory_limit=LIMIT)
    leaf = "v.list.element" if nested else "v"
    return [("read", pf.read), ("read_row_group", lambda: pf.read_row_group(0)),
            ("iter_batches", lambda: [b.num_rows for b in pf.iter_batches(batch_size=65536)]),
            ("filtered", lambda: pf.read(filters=pqbloom.field(leaf) == _EXPECTED[kind]))]


@pytest.mark.traces_memory
@pytest.mark.parametrize("version", ["1.0", "2.0"])
@pytest.mark.parametrize("kind,nullable,nested", _HOSTILE)
def test_memory_limit_bounds_every_allocation_of_hostile_pages(kind, nullable, nested, version):
    # the builder makes valid files: pyarrow reads a small one as we do
    small = _hostile(kind, 1000, version=version, nullable=nullable, nested=nested)
    expected = pq.read_table(pa.BufferReader(small))
    want = [[_EXPECTED[kind]] * 1000] if nested else [_EXPECTED[kind]] * 1000
    assert expected.column("v").to_pylist() == want
    assert pqbloom.ParquetFile(small).read().column("v").to_pylist() == want
    sizes = [LIMIT // 16, LIMIT // 2, 2 * LIMIT]
    if kind in ("dict", "dict0", "bool"):
        sizes += [1 << 27, LIE]  # 2**31 - 1 values: 8 GiB of int32 indices before the fix
    if kind == "dba":
        sizes = [s // 64 for s in sizes]  # each value is 255 bytes
    for n in sizes:
        data = _hostile(kind, n, version=version, nullable=nullable, nested=nested)
        assert len(data) < 1_000_000
        for name, op in _reads(data, kind, nested):
            with traced() as mem:
                try:
                    op()
                    outcome = "read"
                except MemoryLimitError:
                    outcome = "refused"
            assert mem.peak < 2 * LIMIT, (kind, n, name, mem.peak / MB)
            if n >= 2 * LIMIT:
                assert outcome == "refused", (kind, n, name)


# -- 10. v2 data pages of parquet-cpp before 2.0.0 (ARROW-10353) and v2 pages that overstate num_values ---

def _v2_flag_cleared(created_by: str | None, table, **opts) -> bytes:
    """pqbloom's v2 snappy pages with ``is_compressed = false``, as parquet-cpp < 2.0.0 wrote them."""
    pages, md = single_chunk(table, compression="snappy", data_page_version="2.0", **opts)
    for h, _ in pages:
        if h.type == T.PageType.DATA_PAGE_V2:
            assert h.data_page_header_v2.is_compressed is not False
            h.data_page_header_v2.is_compressed = False
    md.created_by = created_by
    return rebuild(pages, md)


@pytest.mark.parametrize("created_by", ["parquet-cpp version 1.5.1-SNAPSHOT", "parquet-cpp version 1.9.9",
                                        "parquet-cpp version 2.0.0", "parquet-cpp-arrow version 2.0.0",
                                        "parquet-cpp-arrow version 4.0.0", "parquet-mr version 1.12.0", None])
@pytest.mark.parametrize("case", ["plain", "nullable", "dictionary", "strings"])
def test_v2_pages_of_parquet_cpp_before_2_read_as_pyarrow_reads_them(created_by, case):
    # Arrow decompresses these pages whatever is_compressed says when the writer is parquet-cpp < 2.0.0
    # (its fix for ARROW-10353); for every other writer the flag holds and the page is refused
    rng = np.random.default_rng(5)
    if case == "strings":
        table = {"v": [f"s{i % 37}" * (i % 5) for i in range(2000)]}
    elif case == "nullable":
        table = {"v": np.ma.masked_array(np.arange(2000, dtype=np.int64), rng.random(2000) < 0.3)}
    else:
        table = {"v": np.arange(2000, dtype=np.int64) % 13}
    data = _v2_flag_cleared(created_by, table, use_dictionary=case == "dictionary")
    try:
        expected = pq.read_table(pa.BufferReader(data))
    except (OSError, pa.ArrowException):
        expected = None
    old_cpp = created_by is not None and created_by.startswith("parquet-cpp version 1.")
    assert (expected is not None) == old_cpp
    if expected is None:
        with pytest.raises(CorruptFileError):
            pqbloom.ParquetFile(data).read()
        return
    pf = pqbloom.ParquetFile(data)
    assert pf.read().to_arrow().equals(expected)
    assert pa.concat_tables([b.to_arrow() for b in pf.iter_batches(batch_size=300)]).equals(expected)


@needs(REAL_WORLD)
def test_v2_page_whose_num_values_exceeds_its_chunk_reads_its_rows(fixtures_dir):
    # parquet-go's malformed/num_values_exceeds_data.parquet: the page of 'id' says num_values 7,732,
    # num_rows 500; the chunk, the row group, the 4,000 PLAIN bytes and the statistics all say 500.
    # pyarrow and DuckDB read by rows and return ids 0..499; we read the same.
    path = str(fixtures_dir.parent / "real-world" / "parquet-go-parquet-go" / "testdata" / "malformed" /
               "num_values_exceeds_data.parquet")
    expected = pq.read_table(path)
    assert expected.column("id").to_pylist() == list(range(500))
    assert duckdb.sql(f"select count(*), max(id) from '{path}'").fetchall() == [(500, 499)]
    assert pqbloom.read_table(path).to_arrow().equals(expected)
    assert pqbloom.read_table(path, filters=pqbloom.field("id") == 499).to_pylist() == [
        {"id": 499, "name": "name-0499"}]


def _overstated_v2(num_values: int, num_rows: int | None, required: bool) -> bytes:
    schema = pqbloom.Schema.from_types({"id": "int64"}, not_null=["id"] if required else [])
    pages, md = single_chunk({"id": np.arange(500, dtype=np.int64)}, schema=schema, compression="none",
                             data_page_version="2.0", use_dictionary=False)
    dp = pages[-1][0].data_page_header_v2
    dp.num_values, dp.num_rows = num_values, num_rows
    return rebuild(pages, md)


def test_v2_page_overstating_num_values_of_a_required_column_reads_as_pyarrow():
    data = _overstated_v2(7732, 500, True)
    expected = pq.read_table(pa.BufferReader(data))
    assert expected.column("id").to_pylist() == list(range(500))
    assert pqbloom.ParquetFile(data).read().to_arrow().equals(expected)


@pytest.mark.parametrize("num_values,num_rows,required", [(7732, None, True), (7732, 7732, True),
                                                          (7732, 600, True), (7732, 500, False)])
def test_v2_page_overstating_num_values_otherwise_is_refused(num_values, num_rows, required):
    # the exception above is narrow: without a num_rows that fits the chunk, or with levels to count
    # (which pyarrow checks against num_values), the page stays refused
    data = _overstated_v2(num_values, num_rows, required)
    if not required:
        with pytest.raises(OSError, match="do not match num_values"):
            pq.read_table(pa.BufferReader(data))
    with pytest.raises(CorruptFileError, match="v2 data page header is inconsistent"):
        pqbloom.ParquetFile(data).read()


@pytest.mark.traces_memory
@pytest.mark.parametrize("kind", ["dict", "dict0", "bool"])
def test_impossible_value_counts_allocate_nothing_without_a_limit(kind):
    # no memory_limit: an RLE run of 2**31 - 1 values is legitimate in a row group that has that many
    # rows, but a flat chunk cannot hold more values than its row group has rows; before the fix the
    # page was decoded (8 GiB of indices) and only then compared with the row count
    def fn(md):
        md.row_groups[0].num_rows = md.num_rows = 10

    data = rewrite_footer(_hostile(kind, LIE), fn)
    with traced() as mem:
        with pytest.raises(CorruptFileError, match="claims 2,147,483,647 values for a row group of 10 rows"):
            pqbloom.ParquetFile(data).read()
        with pytest.raises(CorruptFileError):
            list(pqbloom.ParquetFile(data).iter_batches())
        with pytest.raises(CorruptFileError):
            pqbloom.ParquetFile(data).read(filters=pqbloom.field("v") == _EXPECTED[kind])
    assert mem.peak < 4 * MB, mem.peak
