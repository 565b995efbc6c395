"""Scale (issue 10): 10,000 row groups and 10,000 columns stay correct.

Expected values come from pyarrow (its reading of the same file, its metadata) or from the
input data; timing is left to bench/bench_many_row_groups.py.
"""

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import pqbloom
from pqbloom.errors import CorruptFileError
from pqbloom.file import column_writer as column_writer_mod
from pqbloom.format import ColumnChunkList, RowGroupList, T, decode_prefix, encode
from pqbloom.format.footer import LAZY_COLUMNS_MIN, LAZY_ROW_GROUPS_MIN
from pqbloom.statistics import SortOrder, compute_statistics
from pqbloom.statistics import compute as statistics_compute

N_RG, PER_RG = 10_000, 4
N_COLS, N_ROWS = 10_000, 3


# -- 10,000 row groups ------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def many_rg(tmp_path_factory):
    path = tmp_path_factory.mktemp("scale") / "many_rg.parquet"
    ids = np.arange(N_RG * PER_RG, dtype=np.int64)
    keys = np.random.default_rng(7).permutation(ids)  # unsorted: statistics barely prune, Bloom filters do
    pqbloom.write_table({"id": ids, "key": keys}, path, row_group_size=PER_RG, compression="uncompressed",
                        bloom_filter_options={"key": True}, write_page_index=False)
    return path, ids, keys


def _stat_overlaps(md, col: int, lo: int, hi: int) -> int:
    """Row groups whose [min, max] of column ``col`` (as pyarrow reads the statistics) meets [lo, hi]."""
    n = 0
    for i in range(md.num_row_groups):
        st = md.row_group(i).column(col).statistics
        assert st is not None and st.has_min_max
        n += st.min <= hi and st.max >= lo
    return n


def test_many_row_groups_footer_decodes_lazily_and_matches_pyarrow(many_rg):
    path, _, _ = many_rg
    pa_md = pq.ParquetFile(path).metadata
    with pqbloom.ParquetFile(path) as pf:
        rgs = pf.thrift_metadata.row_groups
        assert isinstance(rgs, RowGroupList)
        assert pf.num_row_groups == pa_md.num_row_groups == N_RG
        assert pf.num_rows == pa_md.num_rows
        assert rgs.decoded <= 2  # opening checked the skim on two row groups, no more
        last = pf.read_row_group(N_RG - 1)
        assert last.to_pydict() == pq.ParquetFile(path).read_row_group(N_RG - 1).to_pydict()
        assert rgs.decoded <= 3
        # every row group decoded on demand agrees with pyarrow's reading of the footer
        for i in range(0, N_RG, 97):
            rg, prg = rgs[i], pa_md.row_group(i)
            assert rg.num_rows == prg.num_rows
            m = rg.columns[1].meta_data
            st = prg.column(1).statistics
            assert int.from_bytes(m.statistics.min_value, "little", signed=True) == st.min
            assert int.from_bytes(m.statistics.max_value, "little", signed=True) == st.max
            assert m.data_page_offset == prg.column(1).data_page_offset
        # the lazy list compares and re-encodes like the eager one
        data = path.read_bytes()
        flen = int.from_bytes(data[-8:-4], "little")
        eager = decode_prefix(T.FileMetaData, data[-8 - flen:-8])[0]
        assert not isinstance(eager.row_groups, RowGroupList)
        assert pf.thrift_metadata == eager
        assert encode(pf.thrift_metadata) == data[-8 - flen:-8]


def test_many_row_groups_min_max_pruning_reads_what_statistics_imply(many_rg):
    path, ids, _ = many_rg
    lo, hi = 12_345, 12_402  # spans row groups 3086..3100
    expect_rgs = _stat_overlaps(pq.ParquetFile(path).metadata, 0, lo, hi)
    assert expect_rgs == 15
    ex = pqbloom.Explain()
    got = pqbloom.read_table(path, filters=[("id", ">=", lo), ("id", "<=", hi)], explain=ex)
    peer = pq.read_table(path, filters=[("id", ">=", lo), ("id", "<=", hi)])
    assert got.to_pydict() == peer.to_pydict()
    assert got.column("id").to_pylist() == ids[lo:hi + 1].tolist()
    assert ex.row_groups_total == N_RG
    assert ex.row_groups_read == expect_rgs
    assert ex.row_groups_pruned_statistics == N_RG - expect_rgs
    assert ex.rows_returned == hi - lo + 1


def test_many_row_groups_bloom_pruning_returns_what_pyarrow_returns(many_rg):
    path, _, keys = many_rg
    probe = int(keys[len(keys) // 3])
    may = _stat_overlaps(pq.ParquetFile(path).metadata, 1, probe, probe)
    ex = pqbloom.Explain()
    got = pqbloom.read_table(path, filters=pqbloom.field("key") == probe, explain=ex)
    peer = pq.read_table(path, filters=[("key", "=", probe)])
    assert peer.num_rows == 1
    assert got.to_pydict() == peer.to_pydict()
    assert ex.row_groups_pruned_statistics == N_RG - may
    after_stats = (ex.row_groups_read + ex.row_groups_pruned_bloom_filter + ex.row_groups_pruned_dictionary
                   + ex.row_groups_pruned_page_index)
    assert after_stats == may
    # the row group holding the key is read; Bloom filters (1% target FPP) drop nearly all others
    assert 1 <= ex.row_groups_read <= 1 + may // 100


def _rewrite_footer(data: bytes, edit) -> bytes:
    flen = int.from_bytes(data[-8:-4], "little")
    md = decode_prefix(T.FileMetaData, data[-8 - flen:-8])[0]
    edit(md)
    footer = encode(md)
    return data[:-8 - flen] + footer + len(footer).to_bytes(4, "little") + b"PAR1"


def test_lazy_row_group_without_columns_fails_typed_when_read(tmp_path):
    n = LAZY_ROW_GROUPS_MIN + 36
    path = tmp_path / "f.parquet"
    pqbloom.write_table({"x": np.arange(n * 2, dtype=np.int32)}, path, row_group_size=2)
    data = path.read_bytes()

    def drop_columns(md):
        md.row_groups[70].columns = None

    bad = _rewrite_footer(data, drop_columns)
    pf = pqbloom.ParquetFile(bad)  # the row groups are skimmed, not decoded
    assert isinstance(pf.thrift_metadata.row_groups, RowGroupList)
    assert pf.read_row_group(69).column("x").to_pylist() == [138, 139]
    with pytest.raises(CorruptFileError) as ei:
        pf.read()
    assert ei.value.row_group == 70


def test_lazy_row_group_without_row_count_fails_typed_at_open(tmp_path):
    n = LAZY_ROW_GROUPS_MIN + 36
    path = tmp_path / "f.parquet"
    pqbloom.write_table({"x": np.arange(n * 2, dtype=np.int32)}, path, row_group_size=2)

    def drop_rows(md):
        md.row_groups[30].num_rows = None

    with pytest.raises(CorruptFileError) as ei:
        pqbloom.ParquetFile(_rewrite_footer(path.read_bytes(), drop_rows))
    assert ei.value.row_group == 30


def test_lazy_footer_with_garbage_in_a_row_group_fails_typed_at_open(tmp_path):
    n = LAZY_ROW_GROUPS_MIN + 36
    path = tmp_path / "f.parquet"
    pqbloom.write_table({"x": np.arange(n * 2, dtype=np.int32)}, path, row_group_size=2)
    data = bytearray(path.read_bytes())
    flen = int.from_bytes(data[-8:-4], "little")
    start = len(data) - 8 - flen
    data[start + flen // 2:start + flen // 2 + 16] = b"\xff" * 16  # a run of bogus field headers
    with pytest.raises(CorruptFileError):
        pqbloom.ParquetFile(bytes(data))


# -- 10,000 columns ----------------------------------------------------------------------------------

def _wide_arrow_table() -> pa.Table:
    rng = np.random.default_rng(3)
    vals = rng.integers(-(1 << 31), (1 << 31) - 1, size=(N_COLS, N_ROWS), dtype=np.int64).astype(np.int32)
    fields, arrays = [], []
    for i in range(N_COLS):
        col = vals[i].tolist()
        if i % 7 == 0:
            col[i % N_ROWS] = None  # some nullable columns hold a null
        nullable = i % 5 != 0  # and some columns are required
        if not nullable:
            col = vals[i].tolist()
        fields.append(pa.field(f"c{i}", pa.int32(), nullable=nullable))
        arrays.append(pa.array(col, pa.int32()))
    return pa.Table.from_arrays(arrays, schema=pa.schema(fields))


@pytest.fixture(scope="module")
def wide_input():
    return _wide_arrow_table()


def test_ten_thousand_columns_written_by_us_read_by_pyarrow_and_us(tmp_path, wide_input):
    path = tmp_path / "wide.parquet"
    pqbloom.write_table(wide_input, path)
    expect = wide_input.to_pydict()
    peer = pq.read_table(path)
    assert peer.column_names == wide_input.column_names
    assert peer.to_pydict() == expect
    pa_schema = pq.read_schema(path)
    assert [f.nullable for f in pa_schema] == [f.nullable for f in wide_input.schema]
    ours = pqbloom.read_table(path)
    assert ours.column_names == wide_input.column_names
    assert ours.to_pydict() == expect


def test_ten_thousand_columns_written_by_pyarrow_read_by_us(tmp_path, wide_input):
    path = tmp_path / "wide_pa.parquet"
    pq.write_table(wide_input, path)
    peer = pq.read_table(path)
    ours = pqbloom.read_table(path)
    assert ours.column_names == peer.column_names
    assert ours.to_pydict() == peer.to_pydict()
    # selection by name, in the order asked, from either end of the schema
    names = ["c9999", "c0", "c5000", "c7"]
    got = pqbloom.read_table(path, columns=names)
    assert got.column_names == names
    assert got.to_pydict() == pq.read_table(path, columns=names).to_pydict()
    with pqbloom.ParquetFile(path) as pf:
        assert len(pf.columns) == N_COLS
        assert pf.read(["c1234"]).to_pydict() == pq.read_table(path, columns=["c1234"]).to_pydict()
        with pytest.raises(KeyError):
            pf.read(["c10000"])


def test_ten_thousand_column_chunks_decode_on_access_and_match_pyarrow(tmp_path, wide_input):
    path = tmp_path / "wide_pa.parquet"
    pq.write_table(wide_input, path)
    pa_md = pq.ParquetFile(path).metadata
    with pqbloom.ParquetFile(path) as pf:
        cols = pf.thrift_metadata.row_groups[0].columns
        assert isinstance(cols, ColumnChunkList) and len(cols) == N_COLS == pa_md.num_columns
        assert cols.decoded <= 2  # opening checked two positions, no more
        names = ["c9998", "c3", "c5001"]
        assert pf.read(names).to_pydict() == pq.read_table(path, columns=names).to_pydict()
        assert cols.decoded <= 5
        for i in range(0, N_COLS, 331):  # each chunk decoded on demand says what pyarrow reads
            m, pm = cols[i].meta_data, pa_md.row_group(0).column(i)
            assert m.data_page_offset == pm.data_page_offset
            assert m.total_compressed_size == pm.total_compressed_size
            assert m.statistics.null_count == pm.statistics.null_count
            assert int.from_bytes(m.statistics.min_value, "little", signed=True) == pm.statistics.min
        # the lazy list compares and re-encodes like the eager one
        data = path.read_bytes()
        flen = int.from_bytes(data[-8:-4], "little")
        eager = decode_prefix(T.FileMetaData, data[-8 - flen:-8])[0]
        assert not isinstance(eager.row_groups[0].columns, ColumnChunkList)
        assert pf.thrift_metadata == eager
        assert encode(pf.thrift_metadata) == data[-8 - flen:-8]
        assert cols.decoded == N_COLS


def test_wide_footer_with_garbage_in_a_column_chunk_fails_typed(tmp_path):
    n_cols = LAZY_COLUMNS_MIN + 44
    path = tmp_path / "w.parquet"
    pqbloom.write_table({f"c{i}": np.arange(3, dtype=np.int64) + i for i in range(n_cols)}, path)
    data = path.read_bytes()
    with pqbloom.ParquetFile(data) as pf:
        assert isinstance(pf.thrift_metadata.row_groups[0].columns, ColumnChunkList)
        assert pf.read(["c150"]).column("c150").to_pylist() == [150, 151, 152]
    bad = bytearray(data)
    at = data.rindex(b"c150")  # inside chunk 150's metadata (its path)
    bad[at:at + 16] = b"\xff" * 16  # a run of bogus field headers
    with pytest.raises(CorruptFileError):
        with pqbloom.ParquetFile(bytes(bad)) as pf:
            pf.read(["c150"])


def test_wide_footer_written_by_us_matches_what_pyarrow_reads(tmp_path, wide_input):
    """The writer shares one ColumnOrder object and one schema flattening across 10,000 columns:
    the footer still says, column by column, what pyarrow's reading of it says."""
    path = tmp_path / "wide.parquet"
    pqbloom.write_table(wide_input, path)
    md = pq.ParquetFile(path).metadata
    assert md.num_columns == N_COLS and md.num_rows == N_ROWS
    for i in range(0, N_COLS, 97):
        col = md.row_group(0).column(i)
        vals = [v for v in wide_input.column(i).to_pylist() if v is not None]
        assert col.path_in_schema == f"c{i}"
        assert col.statistics.min == min(vals) and col.statistics.max == max(vals)
        assert col.statistics.null_count == N_ROWS - len(vals)
        assert md.schema.column(i).physical_type == "INT32"


# -- small-chunk fast paths (many columns of a few rows) change no byte -------------------------------

@settings(max_examples=200, deadline=None)
@given(vals=st.lists(st.integers(-(1 << 63), (1 << 63) - 1), min_size=1, max_size=40),
       int32=st.booleans(), unsigned=st.booleans())
def test_small_int_statistics_match_the_numpy_path(vals, int32, unsigned):
    ptype = T.Type.INT32 if int32 else T.Type.INT64
    arr = np.array(vals, np.int64).astype(np.int32 if int32 else np.int64)  # wraps: any bit pattern
    order = SortOrder.UNSIGNED if unsigned else SortOrder.SIGNED
    fast = compute_statistics(arr, ptype, null_count=2, sort_order=order)
    with pytest.MonkeyPatch.context() as m:
        m.setattr(statistics_compute, "_SMALL_MINMAX", -1)
        general = compute_statistics(arr, ptype, null_count=2, sort_order=order)
    assert fast == general
    view = arr.view(np.uint32 if int32 else np.uint64) if unsigned else arr
    assert fast.min_value == view.min().tobytes() and fast.max_value == view.max().tobytes()


def test_small_chunk_fast_paths_write_the_same_bytes(tmp_path, monkeypatch):
    rng = np.random.default_rng(5)
    n = 50
    table = pa.table({
        "i32": pa.array(rng.integers(-9, 9, n), pa.int32(), mask=rng.random(n) < 0.2),
        "u64": pa.array(rng.integers(0, 1 << 63, n, dtype=np.uint64) * 2, pa.uint64()),
        "f": pa.array(rng.normal(size=n)),
        "s": pa.array([f"v{i % 7}" for i in range(n)]),
        "l": pa.array([[i, i + 1] if i % 3 else None for i in range(n)], pa.list_(pa.int64())),
    })
    for kwargs in ({}, {"data_page_version": "2.0", "data_page_size": 64}, {"row_group_size": 7}):
        fast, general = tmp_path / "fast.parquet", tmp_path / "general.parquet"
        pqbloom.write_table(table, fast, **kwargs)
        with monkeypatch.context() as m:
            m.setattr(statistics_compute, "_SMALL_MINMAX", -1)
            m.setattr(column_writer_mod, "_SMALL_WRITE", -1)
            pqbloom.write_table(table, general, **kwargs)
        assert fast.read_bytes() == general.read_bytes()
        assert pq.read_table(fast).equals(table)
