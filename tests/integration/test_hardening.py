"""Hardening: fuzz findings, hostile sizes, crash-safe writes, scale edge cases, concurrent reads."""

from __future__ import annotations

import contextlib
import glob
import io
import os
import random
import signal
import subprocess
import sys
import textwrap
import threading
import time
import tracemalloc
from collections.abc import Iterator

import numpy as np
import pytest

import pqbloom
from pqbloom import compression
from pqbloom.bloom import BloomFilter
from pqbloom.errors import CorruptFileError, ParquetError, SchemaError
from pqbloom.format import T, decode, decode_at, decode_prefix, encode
from tests.paths import ROOT

LIE = 2**31 - 1
MB = 1 << 20


# -- helpers -------------------------------------------------------------------------------------------
def _write(table, **opts) -> bytes:
    buf = io.BytesIO()
    pqbloom.write_table(table, buf, **opts)
    return buf.getvalue()


def _split(data: bytes):
    flen = int.from_bytes(data[-8:-4], "little")
    foff = len(data) - 8 - flen
    return foff, decode(T.FileMetaData, data[foff:foff + flen])


def _join(body: bytes, md) -> bytes:
    f = encode(md)
    return body + f + len(f).to_bytes(4, "little") + b"PAR1"


def rewrite_footer(data: bytes, fn) -> bytes:
    """Apply ``fn`` to the decoded FileMetaData and re-encode it (page bytes unchanged)."""
    foff, md = _split(data)
    fn(md)
    return _join(data[:foff], md)


def single_chunk(table, **opts):
    """A one-column, one-row-group file as (pages [[header, body]...], FileMetaData)."""
    opts.setdefault("write_page_index", False)
    opts.setdefault("write_statistics", False)
    data = _write(table, **opts)
    foff, md = _split(data)
    m = md.row_groups[0].columns[0].meta_data
    start = m.dictionary_page_offset if m.dictionary_page_offset is not None else m.data_page_offset
    end = start + m.total_compressed_size
    pages, pos = [], start
    while pos < end:
        h, pos = decode_at(T.PageHeader, data, pos)
        pages.append([h, data[pos:pos + h.compressed_page_size]])
        pos += h.compressed_page_size
    return pages, md


def rebuild(pages, md) -> bytes:
    """Serialize pages (headers may have been edited) into a fresh file with consistent offsets."""
    out = bytearray(b"PAR1")
    cc = md.row_groups[0].columns[0]
    m = cc.meta_data
    m.dictionary_page_offset = None
    first_data = None
    for h, body in pages:
        if h.type == T.PageType.DICTIONARY_PAGE and first_data is None:
            m.dictionary_page_offset = len(out)
        elif first_data is None:
            first_data = len(out)
        out += encode(h) + body
    m.data_page_offset = first_data if first_data is not None else 4
    m.total_compressed_size = len(out) - 4
    m.bloom_filter_offset = m.bloom_filter_length = None
    cc.column_index_offset = cc.column_index_length = cc.offset_index_offset = cc.offset_index_length = None
    return _join(bytes(out), md)


def _read_everything(data: bytes, **kw) -> None:
    pf = pqbloom.ParquetFile(data, **kw)
    pf.read()
    for _ in pf.iter_batches(batch_size=1000):
        pass


class _Traced:
    peak = 0


@contextlib.contextmanager
def traced() -> Iterator[_Traced]:
    """``with traced() as mem: ...`` then ``mem.peak``: the tracemalloc peak inside the block."""
    mem = _Traced()
    tracemalloc.start()
    try:
        yield mem
    finally:
        mem.peak = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()


def assert_typed_and_bounded(data: bytes, limit: int = 64 * MB, **kw) -> ParquetError:
    """Reading ``data`` must raise a ParquetError with a tracemalloc peak below ``limit``."""
    with traced() as mem:
        with pytest.raises(ParquetError) as info:
            _read_everything(data, **kw)
    assert mem.peak < limit, f"peak {mem.peak / MB:.1f} MiB for a lying size"
    return info.value


# -- 1. fuzz findings (each minimized by generating the corrupt footer) ---------------------------------
def _base() -> bytes:
    return _write({"id": np.arange(10, dtype=np.int64), "s": [f"v{i}" for i in range(10)]},
                  bloom_filter_options={"id": True})


def test_fuzz_row_group_without_num_rows():
    # fuzz finding: ParquetFile.num_rows raised TypeError (sum with None)
    def fn(md):
        md.row_groups[0].num_rows = None

    with pytest.raises(CorruptFileError, match="row count"):
        pqbloom.ParquetFile(rewrite_footer(_base(), fn))


def test_fuzz_row_group_without_columns():
    def fn(md):
        md.row_groups[0].columns = None

    with pytest.raises(CorruptFileError):
        pqbloom.ParquetFile(rewrite_footer(_base(), fn))


def test_fuzz_chunk_without_data_page_offset():
    # fuzz finding: ParquetFile.chunk_range compared an int with None (TypeError)
    def fn(md):
        m = md.row_groups[0].columns[0].meta_data
        m.data_page_offset = None
        m.dictionary_page_offset = 4

    pf = pqbloom.ParquetFile(rewrite_footer(_base(), fn))
    with pytest.raises(CorruptFileError, match="data page offset|required field .data_page_offset."):
        pf.read()
    with pytest.raises(CorruptFileError):
        list(pf.iter_batches())


def test_fuzz_schema_element_without_name():
    # fuzz finding: schema.leaves_from_thrift / nested.build_tree joined a None name (TypeError)
    def fn(md):
        md.schema[1].name = None

    with pytest.raises(CorruptFileError, match="no name"):
        pqbloom.ParquetFile(rewrite_footer(_base(), fn))


def test_fuzz_filtered_read_with_missing_column_chunk():
    # fuzz finding (atheris): scan.selection.PageIndexCache.load (now file.page_index.PageIndex.load) indexed a short chunk list (IndexError)
    def fn(md):
        md.row_groups[0].columns = md.row_groups[0].columns[:1]

    pf = pqbloom.ParquetFile(rewrite_footer(_base(), fn))
    with pytest.raises(CorruptFileError, match="column chunks"):
        pf.read(filters=pqbloom.field("s") == "v3")


def test_fuzz_duplicate_top_level_names(tmp_path):
    # fuzz finding (atheris, CI): ParquetFile.schema raised for a footer with two columns named alike and the
    # harness did not expect it. pyarrow writes such files; its dataset reader refuses them too. The footer
    # stays readable; the schema and reads say which name is duplicated.
    import pyarrow as pa
    import pyarrow.parquet as pq

    path = str(tmp_path / "dup.parquet")
    pq.write_table(pa.Table.from_arrays([pa.array([1, 2]), pa.array([3, 4]), pa.array(["x", "y"])],
                                        names=["a", "a", "b"]), path)
    pf = pqbloom.ParquetFile(path)
    assert pf.num_rows == 2 and [c.dotted_path for c in pf.columns] == ["a", "a", "b"]
    with pytest.raises(SchemaError, match="duplicate column name.*'a'"):
        _ = pf.schema
    with pytest.raises(SchemaError, match="'a'"):
        pf.read()
    # fuzz finding (atheris, seed 7): a filter on the repeated name bound to one of them (the last)
    for call in (lambda: pf.read(filters=pqbloom.field("a") == 3), lambda: pf.read(columns=["a"]),
                 lambda: pf.column_chunk(0, "a"), lambda: pf.bloom_filter(0, "a")):
        with pytest.raises(SchemaError, match="'a' is ambiguous"):
            call()
    # the other columns stay readable
    assert pf.read(columns=["b"], filters=pqbloom.field("b") == "y").to_pydict() == {"b": ["y"]}


def test_fuzz_empty_column_name_can_be_filtered(tmp_path):
    # fuzz finding (atheris, CI settings with 150,000 inputs): field("") raised TypeError, so a column whose
    # name is "" (legal; pyarrow writes it) could not be filtered on
    import pyarrow as pa
    import pyarrow.parquet as pq

    path = str(tmp_path / "empty_name.parquet")
    pq.write_table(pa.Table.from_arrays([pa.array([1, 2, 3]), pa.array(["x", "y", "z"])], names=["", "b"]), path)
    rows = pq.read_table(path).to_pylist()
    for expr, keep in ((pqbloom.field("") == 2, lambda r: r[""] == 2),
                       (pqbloom.field("").isin([1, 3]), lambda r: r[""] in (1, 3)),
                       ([("", ">", 1)], lambda r: r[""] > 1)):
        assert pqbloom.read_table(path, filters=expr).to_arrow().to_pylist() == [r for r in rows if keep(r)]
    assert pqbloom.read_table(path, columns=[""]).to_pydict() == {"": [1, 2, 3]}


@pytest.mark.parametrize("num_rows", [2, 30])
def test_fuzz_repeated_leaf_with_more_records_than_rows(num_rows):
    # fuzz finding (atheris, CI settings with 150,000 inputs): a filter on a list leaf whose chunk holds more
    # records than its row group indexed past the row mask (IndexError); fewer would have gone unnoticed
    import pyarrow as pa

    tags = pa.array([[i, i + 1] if i % 3 else [] for i in range(10)], pa.list_(pa.int64()))
    data = _write(pa.table({"tags": tags}), write_page_index=False)

    def fn(md):
        md.row_groups[0].num_rows = md.num_rows = num_rows

    pf = pqbloom.ParquetFile(rewrite_footer(data, fn))
    for expr in (pqbloom.field("tags.list.element") == 5, pqbloom.field("tags.list.element") != 5):
        with pytest.raises(CorruptFileError, match="10 records where .* rows are expected"):
            pf.read(filters=expr)


def test_fuzz_nested_chunk_without_num_values():
    # fuzz finding (random and atheris engines, CI settings): a list leaf's chunk without num_values
    # raised TypeError (its count compared with what its bytes can hold) where a flat chunk's is corrupt
    import pyarrow as pa

    tags = pa.array([[i, i + 1] if i % 3 else [] for i in range(10)], pa.list_(pa.int64()))
    data = _write(pa.table({"tags": tags}), write_page_index=False)

    def fn(md):
        md.row_groups[0].columns[0].meta_data.num_values = None

    for threads in (False, True):
        with pytest.raises(CorruptFileError, match="without a value count|required field .num_values."):
            pqbloom.read_table(rewrite_footer(data, fn), use_threads=threads)


ANNOTATIONS = {  # (logical type set on a column of _base(), its schema element: 1 = id int64, 2 = s string)
    "int24": (lambda: T.LogicalType(INTEGER=T.IntType(bitWidth=24, isSigned=False)), 1),
    "decimal_p0": (lambda: T.LogicalType(DECIMAL=T.DecimalType(scale=0, precision=0)), 1),
    "decimal_scale_over_precision": (lambda: T.LogicalType(DECIMAL=T.DecimalType(scale=5, precision=3)), 1),
    "string_on_int64": (lambda: T.LogicalType(STRING=T.StringType()), 1),
    "decimal_p19_on_int64": (lambda: T.LogicalType(DECIMAL=T.DecimalType(scale=2, precision=19)), 1),
    "uint32_on_int64": (lambda: T.LogicalType(INTEGER=T.IntType(bitWidth=32, isSigned=False)), 1),
    "date_on_byte_array": (lambda: T.LogicalType(DATE=T.DateType()), 2),
    "uuid_on_byte_array": (lambda: T.LogicalType(UUID=T.UUIDType()), 2),
    "decimal_on_byte_array": (lambda: T.LogicalType(DECIMAL=T.DecimalType(scale=1, precision=5)), 2),
}


@pytest.mark.parametrize("case", sorted(ANNOTATIONS))
def test_fuzz_annotations_that_do_not_fit_their_column(case):
    # fuzz finding (atheris, seed 13): INTEGER(24) reached to_pylist and raised KeyError. Oracle: pyarrow,
    # which refuses malformed annotation parameters and reads the physical values under an annotation
    # that does not apply to the column's physical type.
    import pyarrow.parquet as pq

    make, i = ANNOTATIONS[case]

    def fn(md):
        md.schema[i].logicalType, md.schema[i].converted_type = make(), None

    data = rewrite_footer(_base(), fn)
    try:
        expected = pq.read_table(io.BytesIO(data)).to_pydict()
    except OSError as exc:
        assert "logical type" in str(exc)
        with pytest.raises(CorruptFileError, match=f"column '{('id', 's')[i - 1]}'"):
            pqbloom.ParquetFile(data)
        return
    got = pqbloom.ParquetFile(data).read().to_pydict()
    assert got == expected


def test_fuzz_corpus_seeds_read_cleanly():
    files = sorted(glob.glob(os.path.join(str(ROOT), "fuzz", "corpus", "*.parquet")))
    assert files
    sys.path.insert(0, os.path.join(str(ROOT), "fuzz"))
    try:
        import fuzz_reader
    finally:
        sys.path.pop(0)
    fuzz_reader._setup(False)
    for p in files:
        with open(p, "rb") as f:
            fuzz_reader.one_input(f.read())


def test_fuzz_harness_short_deterministic_run():
    """A few hundred deterministic random mutations (the long run is the CI fuzz job)."""
    r = subprocess.run([sys.executable, os.path.join(str(ROOT), "fuzz", "fuzz_reader.py"), "--engine", "random",
                        "--runs", "300", "--seed", "1", "--crash-dir", os.devnull + "-nonexistent"],
                       capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stdout + r.stderr


# -- 2. hostile sizes ------------------------------------------------------------------------------------
CODECS = ["uncompressed", "snappy", "gzip", "zstd", "brotli", "lz4_raw"]


@pytest.mark.traces_memory
@pytest.mark.parametrize("codec", CODECS)
def test_lying_uncompressed_page_size(codec):
    pages, md = single_chunk({"x": np.arange(1000, dtype=np.int64)}, compression=codec, use_dictionary=False)
    pages[0][0].uncompressed_page_size = LIE
    assert_typed_and_bounded(rebuild(pages, md))


@pytest.mark.parametrize("codec", ["brotli", "lz4_raw", "zstd", "gzip"])
def test_uncompressed_size_slightly_too_large_is_caught(codec):
    # LZ4_RAW used to zero-pad the output up to the claimed size and return garbage silently
    pages, md = single_chunk({"x": np.arange(1000, dtype=np.int64)}, compression=codec, use_dictionary=False,
                             data_page_version="2.0")
    pages[0][0].uncompressed_page_size += 8
    with pytest.raises(CorruptFileError):
        _read_everything(rebuild(pages, md))


@pytest.mark.traces_memory
def test_decompressors_refuse_huge_claims_without_allocating():
    payload = b"abc" * 1000
    for codec in compression._CODECS:
        if codec.compress is None:
            continue
        comp = codec.compress(payload)
        assert compression.decompress(codec, comp, len(payload)) == payload
        with traced() as mem:
            with pytest.raises(CorruptFileError):
                compression.decompress(codec, comp, LIE)
            with pytest.raises(CorruptFileError):
                compression.decompress(codec, comp, len(payload) - 1)
        assert mem.peak < 16 * MB, (codec.name, mem.peak)


@pytest.mark.traces_memory
def test_lz4_legacy_frame_bomb_is_bounded():
    import cramjam

    bomb = bytes(cramjam.lz4.compress(b"\0" * (64 * MB)))
    with traced() as mem:
        with pytest.raises(CorruptFileError):
            compression.decompress(compression.codec_by_id(T.CompressionCodec.LZ4), bomb, 100)
    assert mem.peak < 8 * MB


@pytest.mark.traces_memory
def test_lying_compressed_page_size():
    pages, md = single_chunk({"x": np.arange(1000, dtype=np.int64)}, compression="snappy", use_dictionary=False)
    pages[0][0].compressed_page_size = LIE
    assert_typed_and_bounded(rebuild(pages, md))


@pytest.mark.traces_memory
@pytest.mark.parametrize("version", ["1.0", "2.0"])
def test_lying_num_values(version):
    pages, md = single_chunk({"x": np.arange(1000, dtype=np.int64)}, compression="uncompressed",
                             use_dictionary=False, data_page_version=version)
    h = pages[0][0]
    (h.data_page_header or h.data_page_header_v2).num_values = LIE
    assert_typed_and_bounded(rebuild(pages, md))
    # the same lie told consistently in the chunk and row-group metadata as well
    md.row_groups[0].columns[0].meta_data.num_values = LIE
    md.row_groups[0].num_rows = LIE
    md.num_rows = LIE
    assert_typed_and_bounded(rebuild(pages, md))


@pytest.mark.traces_memory
def test_lying_dictionary_num_values():
    pages, md = single_chunk({"s": [f"v{i % 7}" for i in range(500)]}, compression="uncompressed")
    assert pages[0][0].type == T.PageType.DICTIONARY_PAGE
    pages[0][0].dictionary_page_header.num_values = LIE
    assert_typed_and_bounded(rebuild(pages, md))


@pytest.mark.traces_memory
def test_lying_bloom_num_bytes():
    data = _write({"id": np.arange(100, dtype=np.int64)}, bloom_filter_options={"id": True})
    foff, md = _split(data)
    m = md.row_groups[0].columns[0].meta_data
    hdr = BloomFilter(32).header_bytes()
    for claim in (LIE, 128 * MB, 1 << 26):
        h = decode(T.BloomFilterHeader, hdr)
        h.numBytes = claim
        lie = encode(h)
        body = data[:foff] + lie + b"\0" * 64
        for with_length in (True, False):
            md2 = decode(T.FileMetaData, encode(md))
            m2 = md2.row_groups[0].columns[0].meta_data
            m2.bloom_filter_offset = foff
            m2.bloom_filter_length = len(lie) + 64 if with_length else None
            f = _join(body, md2)
            with traced() as mem:
                pf = pqbloom.ParquetFile(f)
                with pytest.raises(CorruptFileError):
                    pf.bloom_filter(0, "id")
                with pytest.raises(CorruptFileError):
                    pf.bloom_filter_might_contain(0, "id", 5)
            assert mem.peak < 8 * MB
    with pytest.raises(CorruptFileError):
        BloomFilter.parse(encode(h) + b"\0" * 64)
    del m


def _uvarint(n: int) -> bytes:
    out = bytearray()
    while True:
        b, n = n & 0x7F, n >> 7
        out.append(b | (0x80 if n else 0))
        if not n:
            return bytes(out)


@pytest.mark.parametrize("raw", [
    bytes([0x68]) + _uvarint((1 << 30) - 1) + b"abc",  # created_by: a 1 GiB string
    bytes([0x19, 0xFC]) + _uvarint((1 << 24) - 1) + b"\0" * 8,  # schema: 16M elements
    bytes([0x59, 0xFC]) + _uvarint((1 << 24) - 1) + b"\0" * 8,  # key_value_metadata: 16M entries
    bytes([0x19, 0xFC]) + _uvarint(1 << 40) + b"\0" * 8,  # beyond the container limit
    bytes([0x68]) + _uvarint(1 << 40) + b"abc",  # beyond the string limit
], ids=["string", "schema-list", "kv-list", "huge-list", "huge-string"])
@pytest.mark.traces_memory
def test_lying_thrift_lengths(raw):
    with traced() as mem:
        with pytest.raises(CorruptFileError):
            decode_prefix(T.FileMetaData, raw)
        with pytest.raises(CorruptFileError):
            pqbloom.ParquetFile(b"PAR1" + raw + len(raw).to_bytes(4, "little") + b"PAR1")
    assert mem.peak < 8 * MB


def test_lying_footer_length():
    data = _base()
    for flen in (LIE, len(data) - 11, 0):
        bad = data[:-8] + flen.to_bytes(4, "little") + b"PAR1"
        with pytest.raises(CorruptFileError):
            pqbloom.ParquetFile(bad)


@pytest.mark.traces_memory
def test_lying_size_statistics_hint_is_distrusted():
    data = _write({"s": ["a", "b", "c"]}, use_dictionary=False)

    def fn(md):
        m = md.row_groups[0].columns[0].meta_data
        if m.size_statistics is None:
            m.size_statistics = T.SizeStatistics()
        m.size_statistics.unencoded_byte_array_data_bytes = 1 << 40

    with traced() as mem:
        t = pqbloom.ParquetFile(rewrite_footer(data, fn)).read()
    assert t.column("s").to_pylist() == ["a", "b", "c"] and mem.peak < 8 * MB


def test_fuzz_list_group_without_children():
    # fuzz finding: nested._interpret indexed the children of an empty repeated list group (IndexError)
    data = _write({"l": [[1, 2], None], "k": [1, 2]})

    def fn(md):
        names = [e.name for e in md.schema]
        i = names.index("list")
        md.schema[i].num_children = 0
        del md.schema[i + 1]  # the element leaf

    pf = pqbloom.ParquetFile(rewrite_footer(data, fn))
    with pytest.raises(CorruptFileError, match="no children"):
        pf.read()


# -- 3. crash-safe writing -------------------------------------------------------------------------------
_WRITER_CHILD = textwrap.dedent("""
    import sys, numpy as np, pqbloom
    from pqbloom import Schema, make_field
    target, n_groups = sys.argv[1], int(sys.argv[2])
    schema = pqbloom.Table.coerce({"id": np.arange(1, dtype=np.int64), "s": ["x"]}).schema
    with pqbloom.ParquetWriter(target, schema, compression="zstd", bloom_filter_options={"id": True}) as w:
        print("open", flush=True)
        for g in range(n_groups):
            ids = np.arange(g * 1000, (g + 1) * 1000, dtype=np.int64)
            w.write_table({"id": ids, "s": [f"s{i}" for i in ids]})
    print("done", flush=True)
""")


def _temp_pattern(target: str) -> str:
    # AtomicFileSink: tempfile.mkstemp(prefix=".<name>.", suffix=".pqbloom-tmp", dir=<same directory>)
    return os.path.join(os.path.dirname(target), "." + os.path.basename(target) + ".*.pqbloom-tmp")


def test_sigkilled_writer_leaves_old_file_intact(tmp_path):
    target = str(tmp_path / "t.parquet")
    pqbloom.write_table({"id": np.arange(5, dtype=np.int64), "s": list("abcde")}, target)
    with open(target, "rb") as f:
        old = f.read()
    rng = random.Random(1234)
    killed_while_open = 0
    for it in range(8):
        p = subprocess.Popen([sys.executable, "-c", _WRITER_CHILD, target, "100000"], stdout=subprocess.PIPE,
                             text=True)
        try:
            if it % 4 != 0:  # mostly kill after the writer has begun writing row groups
                assert p.stdout.readline().strip() == "open"
                killed_while_open += 1
            time.sleep(rng.uniform(0.0, 0.8))
        finally:
            os.kill(p.pid, signal.SIGKILL)
            p.wait()
            p.stdout.close()
        assert p.returncode == -signal.SIGKILL
        with open(target, "rb") as f:
            assert f.read() == old, f"iteration {it}: target changed after SIGKILL"
        assert pqbloom.read_table(target).to_pydict()["id"] == [0, 1, 2, 3, 4]
        # only the writer's own temp files may remain beside it (safe to delete: they were never committed)
        others = set(os.listdir(tmp_path)) - {"t.parquet"}
        leftovers = set(os.path.basename(x) for x in glob.glob(_temp_pattern(target)))
        assert others == leftovers
    assert killed_while_open >= 4
    assert glob.glob(_temp_pattern(target)), "expected at least one temp file from a killed writer"
    # a writer that is allowed to finish replaces the file
    subprocess.run([sys.executable, "-c", _WRITER_CHILD, target, "3"], check=True, capture_output=True)
    t = pqbloom.read_table(target)
    assert t.num_rows == 3000 and t.column("id").to_pylist()[-1] == 2999
    for tmp in glob.glob(_temp_pattern(target)):  # how a caller cleans up after crashed writers
        os.unlink(tmp)


# -- 4. scale and edge cases -----------------------------------------------------------------------------
def test_zero_rows_and_zero_row_groups():
    schema_src = {"id": np.arange(0, dtype=np.int64), "s": []}
    data = _write(schema_src)
    pf = pqbloom.ParquetFile(data)
    assert pf.num_rows == 0
    t = pf.read()
    assert t.num_rows == 0 and t.column_names == ["id", "s"]
    assert [b.num_rows for b in pf.iter_batches()] == []
    assert pf.read(filters=pqbloom.field("id") == 1).num_rows == 0
    # a footer with no row groups at all
    empty = rewrite_footer(data, lambda md: setattr(md, "row_groups", []))
    pf = pqbloom.ParquetFile(empty)
    assert pf.num_row_groups == 0 and pf.read().num_rows == 0 and list(pf.iter_batches()) == []
    import pyarrow.parquet as pq

    assert pq.read_table(io.BytesIO(empty)).num_rows == 0


def test_all_null_columns():
    import pyarrow as pa

    n = 10_000
    data = _write(pa.table({"i": pa.array([None] * n, pa.int64()), "s": pa.array([None] * n, pa.string())}),
                  bloom_filter_options={"s": True}, row_group_size=3000)
    pf = pqbloom.ParquetFile(data)
    t = pf.read()
    assert t.num_rows == n and t.column("s").to_pylist() == [None] * n
    assert sum(b.num_rows for b in pf.iter_batches(batch_size=777)) == n
    assert t.column("i").to_pylist() == [None] * n
    assert pf.read(filters=pqbloom.field("s") == "x").num_rows == 0
    assert pf.read(filters=pqbloom.field("i") == 1).num_rows == 0
    assert pf.read(filters=pqbloom.field("i").is_null()).num_rows == n
    import pyarrow.parquet as pq

    back = pq.read_table(io.BytesIO(data))
    assert back.column("s").null_count == n and back.column("i").null_count == n


def test_single_100mb_string_value():
    # used to take minutes: dictionary estimation hashed a lone 100 MB value 8 bytes per numpy pass
    value = b"x" * (100 * MB)
    t0 = time.perf_counter()
    data = _write({"s": [value]}, compression="zstd")
    back = pqbloom.ParquetFile(data).read().column("s").to_pylist()[0]
    assert back == value
    assert time.perf_counter() - t0 < 30


def test_offsets_above_4gib_are_range_checked():
    """ColumnMetaData offsets beyond 2**32 go through the 64-bit range checks (no 4 GiB file needed)."""
    data = _base()
    big = 2**32 + 100

    # a dictionary_page_offset at or past the data page is ignored (as other readers do); this one has none
    ok = rewrite_footer(data, lambda md: setattr(md.row_groups[0].columns[0].meta_data, "dictionary_page_offset", big))
    assert pqbloom.ParquetFile(ok).read(["id"]).column("id").to_pylist() == list(range(10))
    for field_name in ("data_page_offset", "total_compressed_size"):
        def fn(md, field_name=field_name):
            m = md.row_groups[0].columns[0].meta_data
            setattr(m, field_name, getattr(m, field_name) + big if getattr(m, field_name) is not None else big)
        pf = pqbloom.ParquetFile(rewrite_footer(data, fn))
        with pytest.raises(CorruptFileError, match="past|outside|offset"):
            pf.read(["id"])

    def bloom(md):
        m = md.row_groups[0].columns[0].meta_data
        m.bloom_filter_offset += big

    pf = pqbloom.ParquetFile(rewrite_footer(data, bloom))
    with pytest.raises(CorruptFileError):
        pf.bloom_filter(0, "id")
    with pytest.raises(CorruptFileError):
        pf.bloom_filter_might_contain(0, "id", 3)
    # the range check itself is 64-bit clean: a reader "sized" above 4 GiB accepts such offsets
    from pqbloom.io import RangeReader

    class Huge(io.RawIOBase):
        def seekable(self):
            return True

        def seek(self, pos, whence=0):
            self.pos = (2**33 if whence == 2 else 0) + pos
            return self.pos

        def tell(self):
            return getattr(self, "pos", 0)

        def read(self, n=-1):
            return b"\0" * n

    r = RangeReader(Huge())
    assert r.size == 2**33
    assert r.read(2**32 + 5, 16) == b"\0" * 16
    with pytest.raises(CorruptFileError):
        r.read(2**33 - 8, 16)


def test_many_row_groups_footer_and_bloom_lookup(tmp_path):
    """2,000 tiny row groups in the test (the 10,000 one is bench/bench_many_row_groups.py)."""
    n_rg, per = 2000, 2
    keys = np.random.default_rng(0).permutation(n_rg * per).astype(np.int64)
    path = str(tmp_path / "many.parquet")
    pqbloom.write_table({"key": keys}, path, row_group_size=per, compression="uncompressed",
                        bloom_filter_options={"key": True}, write_page_index=False)
    t0 = time.perf_counter()
    pf = pqbloom.ParquetFile(path)
    assert pf.num_row_groups == n_rg
    probe = int(keys[1234])
    hits = [i for i in range(n_rg) if pf.bloom_filter_might_contain(i, "key", probe)]
    assert 1234 // per in hits and len(hits) < 50
    ex = pqbloom.Explain()
    assert pf.read(filters=pqbloom.field("key") == probe, explain=ex).column("key").to_pylist() == [probe]
    assert time.perf_counter() - t0 < 20


# -- 5. concurrency --------------------------------------------------------------------------------------
@pytest.mark.parametrize("source", ["path", "bytes", "fileobj"])
def test_one_parquetfile_read_from_8_threads(tmp_path, source):
    n = 20_000
    table = {"id": np.arange(n, dtype=np.int64), "s": [f"s{i % 97}" if i % 11 else None for i in range(n)],
             "x": np.arange(n) * 0.5}
    path = str(tmp_path / "c.parquet")
    pqbloom.write_table(table, path, row_group_size=2500, compression="zstd", bloom_filter_options={"id": True})
    with open(path, "rb") as f:
        raw = f.read()
    src = {"path": path, "bytes": raw, "fileobj": io.BytesIO(raw)}[source]
    pf = pqbloom.ParquetFile(src)
    expected = pf.read().to_pydict()
    assert expected["id"] == list(range(n))
    errors: list[BaseException] = []
    barrier = threading.Barrier(8)

    def work(k: int) -> None:
        try:
            barrier.wait()
            for it in range(3):
                assert pf.read().to_pydict() == expected
                rows = []
                for b in pf.iter_batches(batch_size=1000 + k):
                    rows.extend(b.column("id").to_pylist())
                assert rows == expected["id"]
                rg = (k + it) % pf.num_row_groups
                assert pf.read_row_group(rg, ["s"]).column("s").to_pylist() == \
                    expected["s"][rg * 2500:(rg + 1) * 2500]
                probe = k * 1000 + it
                assert pf.bloom_filter_might_contain(probe // 2500, "id", probe)
                assert pf.read(filters=pqbloom.field("id") == probe).column("id").to_pylist() == [probe]
        except BaseException as exc:  # noqa: BLE001
            errors.append(exc)

    threads = [threading.Thread(target=work, args=(k,)) for k in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors[0]


# -- 5. a memory ceiling per read ---------------------------------------------------------------------
def _peer_bytes(table, **opts) -> bytes:
    import pyarrow.parquet as pq

    buf = io.BytesIO()
    pq.write_table(table, buf, **opts)
    return buf.getvalue()


def _dictionary_bomb() -> tuple[bytes, str]:
    """A 200 KB string repeated 20,000 times: pyarrow stores it in under 100 KB, it decodes to 4 GB."""
    import pyarrow as pa

    value = "x" * 200_000
    strings = pa.DictionaryArray.from_arrays(pa.array(np.zeros(20_000, np.int32)), pa.array([value]))
    data = _peer_bytes(pa.table({"id": pa.array(np.arange(20_000)), "s": strings}), compression="zstd")
    assert len(data) < 100_000
    return data, value


@pytest.mark.traces_memory
def test_memory_limit_stops_dictionary_expansion_before_allocating(tmp_path):
    data, _ = _dictionary_bomb()
    with traced() as mem:
        with pytest.raises(pqbloom.errors.MemoryLimitError, match=r"column 's', row group 0.*|memory_limit"):
            pqbloom.ParquetFile(data, memory_limit=64 * MB).read()
    assert mem.peak < 16 * MB, mem.peak
    path = tmp_path / "bomb.parquet"
    path.write_bytes(data)
    with pytest.raises(pqbloom.errors.MemoryLimitError, match="memory_limit of 67,108,864"):
        pqbloom.read_table(str(path), memory_limit=64 * MB)
    # the ceiling is a read's, not the file's: other columns and other calls are unaffected
    assert pqbloom.read_table(str(path), ["id"], memory_limit=64 * MB).column("id").to_pylist() == \
        list(range(20_000))
    with pytest.raises(pqbloom.errors.MemoryLimitError):
        pqbloom.ParquetFile(data, memory_limit=64 * MB).read_row_group(0, ["s"])
    with pytest.raises(pqbloom.errors.MemoryLimitError):
        pqbloom.read_table(str(path), filters=pqbloom.field("id") >= 0, memory_limit=64 * MB)


@pytest.mark.traces_memory
def test_memory_limit_lets_small_batches_through_a_bomb():
    """Batches expand dictionary indices lazily, so a batch costs what it holds, not the whole page."""
    data, value = _dictionary_bomb()
    pf = pqbloom.ParquetFile(data, memory_limit=64 * MB)
    it = pf.iter_batches(batch_size=100, columns=["s"])
    with traced() as mem:
        first = next(it)
    assert first.num_rows == 100 and first.column("s").to_pylist() == [value.encode()] * 100 or \
        first.column("s").to_pylist() == [value] * 100
    assert mem.peak < 48 * MB, mem.peak  # one batch is 20 MB of values
    assert sum(b.num_rows for b in it) == 19_900
    with pytest.raises(pqbloom.errors.MemoryLimitError):  # a batch that itself exceeds the ceiling
        next(pf.iter_batches(batch_size=1000, columns=["s"]))


@pytest.mark.traces_memory
def test_memory_limit_stops_decompression_bombs():
    import pyarrow as pa

    # 64 MB of zeros, PLAIN, zstd: a few KB on disk
    data = _peer_bytes(pa.table({"z": pa.array(np.zeros(8 * MB, np.int64))}), compression="zstd",
                       use_dictionary=False, data_page_size=1 << 30)
    assert len(data) < 64 * 1024
    with traced() as mem:
        with pytest.raises(pqbloom.errors.MemoryLimitError, match="column 'z'"):
            pqbloom.ParquetFile(data, memory_limit=16 * MB).read()
    assert mem.peak < 16 * MB, mem.peak  # what was allocated stayed under the ceiling; 64 MB were asked for
    assert pqbloom.ParquetFile(data, memory_limit=256 * MB).read().num_rows == 8 * MB
    with pytest.raises(ValueError):
        pqbloom.ParquetFile(data, memory_limit=0)


def test_memory_limit_covers_a_whole_directory_read(tmp_path):
    for i in range(2):
        pqbloom.write_table({"v": np.arange(MB, dtype=np.int64)}, str(tmp_path / f"part-{i}.parquet"))
    # each file decodes to ~24 MB (8 MB of pages, their 8 MB of decoded values, the 8 MB result); two
    # do not fit in 32 MB
    assert pqbloom.read_table(str(tmp_path / "part-0.parquet"), memory_limit=32 * MB).num_rows == MB
    with pytest.raises(pqbloom.errors.MemoryLimitError):
        pqbloom.read_table(str(tmp_path), memory_limit=32 * MB)
    assert pqbloom.read_table(str(tmp_path), memory_limit=64 * MB).num_rows == 2 * MB


def test_memory_budgets_of_concurrent_reads_are_independent():
    data, _ = _dictionary_bomb()
    small = _write({"a": np.arange(50_000, dtype=np.int64)})
    results: dict[str, object] = {}
    barrier = threading.Barrier(4)

    def limited(k: int) -> None:
        barrier.wait()
        try:
            pqbloom.ParquetFile(data, memory_limit=64 * MB).read(["s"])
            results[f"bomb{k}"] = "read"
        except pqbloom.errors.MemoryLimitError:
            results[f"bomb{k}"] = "limited"

    def unlimited(k: int) -> None:
        barrier.wait()
        for _ in range(20):
            assert pqbloom.ParquetFile(small).read().num_rows == 50_000
        results[f"small{k}"] = "read"

    threads = [threading.Thread(target=fn, args=(k,)) for k in range(2) for fn in (limited, unlimited)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert results == {"bomb0": "limited", "bomb1": "limited", "small0": "read", "small1": "read"}


# -- 6. BinaryArray.take with long values (copied slice by slice, no per-byte index) ---------------------
from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

from pqbloom.arrays import BinaryArray  # noqa: E402


@settings(max_examples=200, deadline=None)
@given(st.lists(st.one_of(st.binary(max_size=40), st.binary(min_size=250, max_size=700)), min_size=1,
                max_size=30), st.data())
def test_binary_take_mixed_short_and_long_values(values, data):
    arr = BinaryArray.from_pylist(values)
    lo = data.draw(st.integers(0, len(values) - 1))
    hi = data.draw(st.integers(lo + 1, len(values)))
    view = arr.slice(lo, hi)  # offsets not starting at 0
    idx = data.draw(st.lists(st.integers(0, hi - lo - 1), max_size=80))
    got = view.take(np.array(idx, dtype=np.int64))
    assert got.to_pylist() == [values[lo + i] for i in idx]
    assert got.offsets[0] == 0 and len(got.data) == got.offsets[-1]


@pytest.mark.traces_memory
def test_take_of_long_values_needs_no_per_byte_index():
    arr = BinaryArray.from_pylist([b"a" * (4 * MB), b"b" * 10])
    idx = np.array([0, 1, 0, 0, 1])
    with traced() as mem:
        out = arr.take(idx)
    assert out.to_pylist() == [arr[i] for i in idx]
    assert mem.peak < 14 * MB, mem.peak  # the 12 MB result, not 16 bytes of index per byte


def test_writer_accepts_a_mapping_of_type_strings(tmp_path):
    import pyarrow.parquet as pq

    path = str(tmp_path / "m.parquet")
    with pqbloom.ParquetWriter(path, {"id": "int64", "email": "string"}) as w:
        w.write_table({"id": np.arange(3, dtype=np.int64), "email": ["a", None, "c"]})
    back = pq.read_table(path)
    assert str(back.schema.field("id").type) == "int64" and str(back.schema.field("email").type) == "string"
    assert back.to_pydict() == {"id": [0, 1, 2], "email": ["a", None, "c"]}


# -- 7. files over 4 GiB: 64-bit offsets everywhere, checked by peers ------------------------------------
_PAST_4GIB_ROWS = 67_200_000  # 8 row groups of this many int64 (537.6 MB each) end past 2**32 bytes


def test_file_over_4gib_written_by_pqbloom_read_by_pyarrow_and_us(tmp_path):
    """8 x 537.6 MB row groups, then a small one whose pages, Bloom filter and page index all sit past 4 GiB."""
    import pyarrow.parquet as pq

    path = str(tmp_path / "big.parquet")
    n = _PAST_4GIB_ROWS
    with pqbloom.ParquetWriter(path, {"id": "int64"}, compression="none", use_dictionary=False, row_group_size=n,
                               bloom_filter_options={"id": {"ndv": 100_000}}, bloom_filter_position="end") as w:
        for g in range(8):
            w.write_table({"id": np.arange(g * n, (g + 1) * n, dtype=np.int64)})
        w.write_table({"id": np.arange(8 * n, 8 * n + 100_000, dtype=np.int64) * 3})
    assert os.path.getsize(path) > 2**32
    try:
        pf = pqbloom.ParquetFile(path)
        assert pf.num_row_groups == 9
        last = pf.thrift_metadata.row_groups[8].columns[0]
        assert min(last.meta_data.data_page_offset, last.meta_data.bloom_filter_offset,
                   last.offset_index_offset, last.column_index_offset) > 2**32
        expected = (np.arange(8 * n, 8 * n + 100_000, dtype=np.int64) * 3).tolist()
        assert pf.read_row_group(8).column("id").to_pylist() == expected
        assert pf.bloom_filter_might_contain(8, "id", 8 * n * 3 + 30)
        ex = pqbloom.Explain()
        hit = pf.read(filters=pqbloom.field("id") == 8 * n * 3 + 300, explain=ex)
        assert hit.column("id").to_pylist() == [8 * n * 3 + 300]
        # a peer agrees on the offsets and the values past 4 GiB
        peer = pq.ParquetFile(path)
        pmeta = peer.metadata.row_group(8).column(0)
        assert pmeta.data_page_offset == last.meta_data.data_page_offset
        assert pmeta.bloom_filter_offset == last.meta_data.bloom_filter_offset
        assert peer.read_row_group(8).column("id").to_pylist() == expected
        assert peer.read_row_group(7).column("id")[-1].as_py() == 8 * n - 1
    finally:
        os.unlink(path)


def test_file_over_4gib_written_by_pyarrow_read_by_us(tmp_path):
    import pyarrow as pa
    import pyarrow.parquet as pq

    path = str(tmp_path / "peer-big.parquet")
    n = 1 << 26  # pyarrow's largest row group; 8 of them hold exactly 2**32 bytes of values
    schema = pa.schema([("id", pa.int64())])
    with pq.ParquetWriter(path, schema, compression="none", use_dictionary=False, write_page_index=True) as w:
        for g in range(8):
            w.write_table(pa.table({"id": np.arange(g * n, (g + 1) * n, dtype=np.int64)}), row_group_size=n)
        w.write_table(pa.table({"id": np.arange(100_000, dtype=np.int64) - 7}))
    assert os.path.getsize(path) > 2**32
    try:
        pf = pqbloom.ParquetFile(path)
        assert pf.num_row_groups == 9 and pf.num_rows == 8 * n + 100_000
        assert pf.thrift_metadata.row_groups[8].columns[0].meta_data.data_page_offset > 2**32
        assert pf.read_row_group(8).column("id").to_pylist() == (np.arange(100_000) - 7).tolist()
        assert pf.read_row_group(7, ["id"]).column("id").to_numpy()[-3:].tolist() == [8 * n - 3, 8 * n - 2,
                                                                                     8 * n - 1]
        ex = pqbloom.Explain()
        hit = pf.read(filters=pqbloom.field("id") == -5, explain=ex)
        assert hit.column("id").to_pylist() == [-5]
    finally:
        os.unlink(path)


@pytest.mark.traces_memory
def test_memory_limit_on_large_string_map_fixture(fixtures_dir):
    """4 KB of brotli holding two 1 GiB map keys (pyarrow cannot read it): a ceiling stops it early."""
    path = str(fixtures_dir / "data" / "large_string_map.brotli.parquet")
    with traced() as mem:
        with pytest.raises(pqbloom.errors.MemoryLimitError, match="arr.key_value.key"):
            pqbloom.ParquetFile(path, memory_limit=256 * MB).read()
    assert mem.peak < 16 * MB, mem.peak  # stopped at the first page header's 1 GiB claim, before decompressing


@pytest.mark.traces_memory
def test_memory_limit_counts_levels_of_an_all_null_page():
    """Three bytes of RLE honestly encode 50M null levels: the ceiling counts them before decoding."""
    import pyarrow as pa

    data = _peer_bytes(pa.table({"n": pa.nulls(50_000_000, pa.int64())}), compression="zstd",
                       data_page_size=1 << 30)
    assert len(data) < 1_000_000
    with traced() as mem:
        with pytest.raises(pqbloom.errors.MemoryLimitError, match="column 'n'"):
            pqbloom.ParquetFile(data, memory_limit=8 * MB).read()
    assert mem.peak < 8 * MB, mem.peak
