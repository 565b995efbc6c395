"""The footer under ``memory_limit`` and pyarrow's Thrift size limits (issue #29, item 12).

A file whose footer holds one huge key-value value read at 1.44 GiB peak under ``memory_limit=64 MiB``:
opening a file never charged its footer. Now its bytes and its decode are charged, and a single Thrift
string or list beyond ``thrift_string_size_limit`` / ``thrift_container_size_limit`` (pyarrow's names and
defaults) raises :class:`~pqbloom.errors.MetadataLimitError` before it is allocated. pyarrow says, with the
same limits, whether each file is readable.

The huge footers are written piece by piece (a marker value replaced by the real length and bytes), so
that making them costs no more memory than reading them should.
"""

from __future__ import annotations

import io

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import pqbloom
from pqbloom.errors import CorruptFileError, MemoryLimitError, MetadataLimitError, ParquetError
from pqbloom.format import T, decode, encode

from .test_hardening import MB, traced

MARK = "@@pqbloom-test-marker@@"


def _small_file(**opts) -> bytes:
    buf = io.BytesIO()
    pq.write_table(pa.table({"a": np.arange(10, dtype=np.int64)}), buf, store_schema=False, **opts)
    return buf.getvalue()


def _split(data: bytes):
    flen = int.from_bytes(data[-8:-4], "little")
    foff = len(data) - 8 - flen
    return data[:foff], decode(T.FileMetaData, data[foff:foff + flen])


def _varint(n: int) -> bytes:
    out = bytearray()
    while True:
        b, n = n & 0x7F, n >> 7
        out.append(b | (0x80 if n else 0))
        if not n:
            return bytes(out)


def _file_with_value(path, size: int) -> None:
    """A pyarrow file whose footer holds one key-value pair ``big`` of ``size`` bytes of ``x``."""
    body, md = _split(_small_file())
    md.key_value_metadata = [T.KeyValue(key="big", value=MARK)]
    footer = encode(md)
    marker = _varint(len(MARK)) + MARK.encode()
    assert footer.count(marker) == 1
    head, tail = footer.split(marker)
    length = _varint(size)
    flen = len(head) + len(length) + size + len(tail)
    with open(path, "wb") as f:
        f.write(body + head + length)
        chunk = b"x" * MB
        for start in range(0, size, MB):
            f.write(chunk[:min(MB, size - start)])
        f.write(tail + flen.to_bytes(4, "little") + b"PAR1")


@pytest.mark.traces_memory
@pytest.mark.parametrize("value_mb", [48, 90], ids=["decode over the limit", "bytes over the limit"])
def test_footer_is_charged_to_memory_limit(tmp_path, value_mb):
    path = str(tmp_path / "kv.parquet")
    _file_with_value(path, value_mb * MB)
    assert pq.read_metadata(path).num_rows == 10  # pyarrow reads it (under its 100 MB string limit)
    for read in (lambda: pqbloom.read_table(path, memory_limit=64 * MB),
                 lambda: pqbloom.ParquetFile(path, memory_limit=64 * MB),
                 lambda: pqbloom.read_table(str(tmp_path), memory_limit=64 * MB)):  # a directory of it
        with traced() as mem:
            with pytest.raises(MemoryLimitError, match="footer|file metadata"):
                read()
        assert mem.peak < 64 * MB, f"peak {mem.peak / MB:.1f} MiB under memory_limit=64 MiB"


@pytest.mark.traces_memory
def test_string_beyond_the_default_limit_is_refused_as_pyarrow_refuses_it(tmp_path):
    path = str(tmp_path / "kv.parquet")
    _file_with_value(path, 110 * MB)  # pyarrow's default thrift_string_size_limit is 100 MB
    with pytest.raises(OSError, match="limit"):
        pq.read_metadata(path)
    with traced() as mem:
        with pytest.raises(MetadataLimitError, match="thrift_string_size_limit"):
            pqbloom.read_table(path)
    assert mem.peak < 150 * MB, f"peak {mem.peak / MB:.1f} MiB"  # the footer's bytes, never a decoded copy
    with pytest.raises(MemoryLimitError):  # with a budget, nothing of it is read
        pqbloom.read_table(path, memory_limit=64 * MB)


def test_string_limit_is_configurable_as_pyarrow(tmp_path):
    path = str(tmp_path / "kv.parquet")
    _file_with_value(path, 3 * MB)
    with pytest.raises(OSError):
        pq.ParquetFile(path, thrift_string_size_limit=MB)
    with pytest.raises(MetadataLimitError, match="thrift_string_size_limit"):
        pqbloom.ParquetFile(path, thrift_string_size_limit=MB)
    with pytest.raises(MetadataLimitError):
        pqbloom.read_table(path, thrift_string_size_limit=MB)
    with pytest.raises(MetadataLimitError):
        pqbloom.dataset([path], thrift_string_size_limit=MB).to_table()
    want = pq.read_metadata(path).metadata[b"big"].decode()
    assert pqbloom.ParquetFile(path).key_value_metadata["big"] == want
    with pqbloom.ParquetFile(path, thrift_string_size_limit=4 * MB, memory_limit=16 * MB) as pf:
        assert pf.key_value_metadata["big"] == want
        assert pf.read().to_pydict() == pq.read_table(path).to_pydict()
    with pytest.raises(ValueError, match="thrift_string_size_limit"):
        pqbloom.ParquetFile(path, thrift_string_size_limit=0)


def test_container_limit_is_configurable_as_pyarrow(tmp_path):
    body, md = _split(_small_file())
    md.key_value_metadata = [T.KeyValue(key=f"k{i}", value="v") for i in range(2000)]
    f = encode(md)
    path = tmp_path / "many.parquet"
    path.write_bytes(body + f + len(f).to_bytes(4, "little") + b"PAR1")
    with pytest.raises(OSError):
        pq.ParquetFile(path, thrift_container_size_limit=1000)
    with pytest.raises(MetadataLimitError, match="thrift_container_size_limit"):
        pqbloom.ParquetFile(str(path), thrift_container_size_limit=1000)
    assert len(pqbloom.ParquetFile(str(path)).key_value_metadata) == len(pq.read_metadata(path).metadata) == 2000


def test_limits_hold_for_row_groups_decoded_later(tmp_path):
    # 100 row groups: the footer keeps them undecoded until accessed; one carries a 2 MB statistic
    buf = io.BytesIO()
    pq.write_table(pa.table({"s": [f"v{i:03d}" for i in range(100)]}), buf, row_group_size=1)
    body, md = _split(buf.getvalue())
    md.row_groups[50].columns[0].meta_data.statistics.max_value = b"z" * (2 * MB)
    f = encode(md)
    path = tmp_path / "stats.parquet"
    path.write_bytes(body + f + len(f).to_bytes(4, "little") + b"PAR1")
    with pytest.raises(OSError):
        pq.ParquetFile(path, thrift_string_size_limit=MB)  # pyarrow decodes the whole footer on open
    with pytest.raises(MetadataLimitError):
        with pqbloom.ParquetFile(str(path), thrift_string_size_limit=MB) as pf:
            pf.read()
    assert pqbloom.read_table(str(path)).num_rows == 100


def test_lying_lengths_in_a_small_footer_stay_corruption(tmp_path):
    # a string length no footer of this size can hold is a damaged file, whatever the limits
    data = bytearray(_small_file())
    body, md = _split(bytes(data))
    md.created_by = MARK
    f = encode(md)
    marker = _varint(len(MARK)) + MARK.encode()
    f = f.replace(marker, _varint(200 * MB) + MARK.encode())
    bad = body + f + len(f).to_bytes(4, "little") + b"PAR1"
    for kw in ({}, {"thrift_string_size_limit": 10 * MB}):
        with pytest.raises(CorruptFileError) as info:
            pqbloom.ParquetFile(bad, **kw)
        assert not isinstance(info.value, MetadataLimitError) and isinstance(info.value, ParquetError)
