"""Reading a row selection in the file layer (pqbloom.file.row_reads): a page read on its own that is
corrupt raises the typed error a whole-chunk read raises (no fallback hides it); pages that do not stand
on their own give way to the whole chunk on a checked condition."""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import pqbloom
from pqbloom.errors import ParquetError
from pqbloom.file import PagesDoNotStandAlone, RowSelection
from pqbloom.file.page_reads import decode_flat_pages


def _file(tmp_path, **kw):
    n = 20_000
    t = pa.table({"id": pa.array(np.arange(n, dtype=np.int64)), "v": pa.array(np.arange(n, dtype=np.float64) / 7)})
    path = tmp_path / "f.parquet"
    pq.write_table(t, path, write_page_index=True, data_page_size=4096, use_dictionary=False, compression="snappy",
                   write_page_checksum=kw.get("crc", False), row_group_size=n)
    return path, t


def _corrupt_page(path, column: str, page: int) -> bytes:
    data = bytearray(path.read_bytes())
    with pqbloom.ParquetFile(path) as pf:
        d = pf.column_descriptor(column)
        layout = pf.row_group_reader(0).page_index([d], column_index=False)[d.index].layout
        off, size = layout.offsets[page], layout.sizes[page]
    for i in range(off + size - 40, off + size):  # the end of the page body: its compressed values
        data[i] ^= 0x5A
    return bytes(data)


@pytest.mark.parametrize("crc", [False, True])
def test_a_corrupt_page_read_alone_raises_what_the_whole_chunk_raises(tmp_path, crc):
    path, _ = _file(tmp_path, crc=crc)
    bad = _corrupt_page(path, "v", 3)
    with pytest.raises(ParquetError) as whole:
        pqbloom.read_table(bad)
    with pqbloom.ParquetFile(bad) as pf:
        d = pf.column_descriptor("v")
        reader = pf.row_group_reader(0)
        layout = reader.page_index([d], column_index=False)[d.index].layout
        first = int(layout.first_rows[3])
        with pytest.raises(ParquetError) as part:
            reader.read_rows([d], RowSelection.of_ranges([(first, first + 1)]))
    assert type(part.value) is type(whole.value)
    assert part.value.column == "v" and part.value.row_group == 0
    assert not reader.counts.notes  # no fallback: the pages stood on their own, the corruption is the file's


def test_pages_the_offset_index_misplaces_are_read_from_the_whole_chunk(tmp_path):
    path, t = _file(tmp_path)
    with pqbloom.ParquetFile(path) as pf:
        d = pf.column_descriptor("id")
        reader = pf.row_group_reader(0)
        layout = reader.page_index([d], column_index=False)[d.index].layout
        assert layout is not None and layout.num_pages > 4
        layout.offsets[2] += 1  # no header where the index says
        sel = RowSelection.of_ranges([(int(layout.first_rows[2]) + 5, int(layout.first_rows[2]) + 9)])
        got = reader.read_rows([d], sel)["id"].to_pylist()
        assert got == t.column("id").to_pylist()[sel.starts[0]:sel.ends[0]]
        assert "read the whole chunk" in reader.counts.notes[0]
        with pytest.raises(PagesDoNotStandAlone):
            decode_flat_pages(pf, 0, d, layout, np.array([2]), {(layout.offsets[2], layout.sizes[2]):
                                                               pf.range_reader.read(layout.offsets[2], layout.sizes[2])})
