"""The smoke test of an installed pqbloom: CI copies this file out of the tree and runs it against the
wheel built from the sdist, in a fresh virtualenv (``.ci/run``), so it imports nothing but pqbloom,
numpy and pytest (pyarrow when there: the cross-check is skipped without it).

With ``PQBLOOM_REQUIRE_KERNELS=1`` every compiled module must be in use; a table written through each
codec, with a Bloom filter, reads back equal to the data it was made from.
"""

from __future__ import annotations

import os

import numpy as np
import pytest

import pqbloom
import pqbloom.kernels

N = 3000
IDS = list(range(0, 3 * N, 3))
WORDS = [f"word-{i % 41}-{'x' * (i % 7)}" for i in range(N)]
VALUES = [i * 0.5 if i % 5 else None for i in range(N)]


def test_the_compiled_kernels_are_in_use_when_required() -> None:
    k = pqbloom.kernels
    # every listed module is either in use or reported missing, never both (the fallback is per module)
    assert set(k.BUILT) | set(k.MISSING) == set(k.MODULES) and not set(k.BUILT) & set(k.MISSING)
    if os.environ.get("PQBLOOM_REQUIRE_KERNELS", "") not in ("", "0"):
        assert k.COMPILED
        assert not k.MISSING, k.MISSING
        assert set(k.BUILT) == set(k.MODULES)


@pytest.mark.parametrize("codec", ["snappy", "zstd", "gzip", "lz4_raw", "brotli", "none"])
def test_a_table_reads_back_as_written(tmp_path, codec: str) -> None:
    path = str(tmp_path / f"t-{codec}.parquet")
    mask = np.array([v is None for v in VALUES])
    pqbloom.write_table({"id": np.array(IDS, np.int64), "word": WORDS,
                         "x": np.ma.masked_array([v or 0.0 for v in VALUES], mask=mask)},
                        path, compression=codec, row_group_size=1000, data_page_size=2048,
                        bloom_filter_options={"word": True})
    want = {"id": IDS, "word": WORDS, "x": VALUES}
    assert pqbloom.read_table(path).to_pydict() == want
    assert pqbloom.read_table(path, filters=[("word", "==", "word-3-xxx")]).to_pydict()["id"] == \
        [i for i, w in zip(IDS, WORDS) if w == "word-3-xxx"]
    try:
        import pyarrow.parquet as pq
    except ImportError:
        return
    assert pq.read_table(path).to_pydict() == want
