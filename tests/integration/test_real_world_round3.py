"""Real-world truth, round 3 (issue #29): files that held-back corpora have, rebuilt here from pyarrow's
output (patched page bytes or footer fields), with pyarrow's reading of the same bytes as the oracle.

* a corrupt RLE/bit-packed run (Impala's ``bad_rle_literal_count.parquet``) is refused, not read;
"""

from __future__ import annotations

import io

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import pqbloom
from pqbloom.errors import CorruptFileError
from pqbloom.format import T, decode, decode_at
from tests.unit.kernels.test_kernels import compiled


def _pyarrow_bytes(table: pa.Table, **opts) -> bytes:
    buf = io.BytesIO()
    pq.write_table(table, buf, **opts)
    return buf.getvalue()


def _footer(data: bytes):  # type: ignore[no-untyped-def]
    flen = int.from_bytes(data[-8:-4], "little")
    return decode(T.FileMetaData, data[len(data) - 8 - flen:-8])


def _pyarrow_refuses(data: bytes) -> None:
    with pytest.raises(Exception):  # noqa: B017, PT011 - pyarrow's own error types vary by version
        pq.read_table(io.BytesIO(data))


# -- item 2: a corrupt RLE/bit-packed run ------------------------------------------------------------
def _bad_rle_literal_count() -> bytes:
    """Impala's ``bad_rle_literal_count.parquet``: an INT32 column stored 1, 3, 7 dictionary-encoded,
    whose indices' bit-packed run header says 0 groups (it was 1): read on, the group's bytes become
    an RLE run of index 0 and the column ``[1, 1, 1]``."""
    schema = pa.schema([pa.field("v", pa.int32(), nullable=False)])
    data = _pyarrow_bytes(pa.table({"v": [1, 3, 7]}, schema=schema), compression="NONE", use_dictionary=True,
                          write_statistics=False, data_page_version="1.0", write_page_index=False)
    m = _footer(data).row_groups[0].columns[0].meta_data
    header, body = decode_at(T.PageHeader, data, m.data_page_offset)
    assert header.data_page_header.encoding == T.Encoding.RLE_DICTIONARY
    # the page: bit width 2, then one bit-packed run of 1 group holding 0, 1, 2 (0b00_10_01_00)
    assert data[body:body + 4] == bytes([2, 0b11, 0b00_10_01_00, 0])
    return data[:body + 1] + bytes([0b01]) + data[body + 2:]


@pytest.mark.parametrize("kernels_compiled", [True, False], ids=["compiled", "reference"])
def test_bit_packed_run_of_zero_groups_is_refused(kernels_compiled: bool) -> None:
    data = _bad_rle_literal_count()
    _pyarrow_refuses(data)
    with compiled(kernels_compiled):
        with pytest.raises(CorruptFileError, match="bit-packed run of 0 values"):
            pqbloom.read_table(data)
        with pytest.raises(CorruptFileError, match="bit-packed run of 0 values"):
            pqbloom.ParquetFile(data).read(filters=pqbloom.field("v") == 1)

