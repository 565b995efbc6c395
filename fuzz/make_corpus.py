"""Regenerate the tiny seed corpus of fuzz/fuzz_reader.py (python fuzz/make_corpus.py)."""

from __future__ import annotations

import io
import os

import numpy as np

import pqbloom
from pqbloom import FileEncryptionProperties

HERE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "corpus")
# keys of the encrypted seeds; fuzz_reader.py opens PARE files with them
FOOTER_KEY = b"0123456789012345"
COL_KEY = b"1234567890123450"


def _write(name: str, table: dict, **opts) -> None:
    buf = io.BytesIO()
    pqbloom.write_table(table, buf, **opts)
    with open(os.path.join(HERE, name), "wb") as f:
        f.write(buf.getvalue())


def main() -> None:
    os.makedirs(HERE, exist_ok=True)
    n = 12
    base = {"id": np.arange(n, dtype=np.int64), "name": [f"n{i % 4}" if i % 5 else None for i in range(n)],
            "x": np.linspace(0, 1, n)}
    bloom = {"id": True, "name": True}
    _write("plain_bloom.parquet", base, compression="uncompressed", bloom_filter_options=bloom,
           row_group_size=6, write_page_checksum=True)
    _write("snappy_v2.parquet", base, compression="snappy", data_page_version="2.0", bloom_filter_options=bloom)
    _write("zstd_delta.parquet", {"id": np.arange(n, dtype=np.int32), "s": [f"v{i}" for i in range(n)]},
           compression="zstd", use_dictionary=False,
           column_encoding={"id": "DELTA_BINARY_PACKED", "s": "DELTA_BYTE_ARRAY"})
    _write("gzip_bss.parquet", {"f": np.arange(n, dtype=np.float32), "b": [bool(i % 2) for i in range(n)]},
           compression="gzip", use_dictionary=False, column_encoding={"f": "BYTE_STREAM_SPLIT"})
    _write("nested.parquet", {"l": [[1, 2], None, [], [3]], "k": [1, 2, 3, 4]}, compression="lz4_raw")
    _write("encrypted.parquet", base, compression="uncompressed", bloom_filter_options=bloom,
           encryption_properties=FileEncryptionProperties(FOOTER_KEY, {"name": COL_KEY}))
    _write("encrypted_plain_footer.parquet", base, compression="uncompressed", bloom_filter_options={"id": True},
           encryption_properties=FileEncryptionProperties(FOOTER_KEY, {"id": COL_KEY}, plaintext_footer=True))
    try:
        import pyarrow as pa
        import pyarrow.parquet as pq

        t = pa.table({"a": pa.array([1, None, 3], pa.int64()), "s": ["x", "yy", None]})
        buf = io.BytesIO()
        pq.write_table(t, buf, compression="brotli", bloom_filter_options={"a": {"ndv": 10}}
                       if "bloom_filter_options" in pq.write_table.__code__.co_varnames else None)
        with open(os.path.join(HERE, "pyarrow_brotli.parquet"), "wb") as f:
            f.write(buf.getvalue())
    except Exception as exc:  # pragma: no cover
        print("pyarrow seed skipped:", exc)


if __name__ == "__main__":
    main()
