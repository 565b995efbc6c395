"""The page loop's fast path for definition levels that say "every value present" (issue 32).

A page of a nullable column whose definition levels are RLE runs of the maximum level only yields
no presence flags (``iter_pages(full_flags=False)``): its levels are recognised from the run headers
(:func:`pqbloom.encodings.rle.is_single_value`) and never decoded. These tests hold that path to the
general level decoder on hand-made v1 and v2 pages (with and without nulls, bit widths 1-3, runs
split across headers, bit-packed runs, runs that overshoot), page by page and chunk by chunk, and
to pyarrow on files pyarrow writes.
"""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import pqbloom
from pqbloom.encodings.bitpack import bit_width_of, uleb128
from pqbloom.encodings.rle import encode_rle_bitpacked, is_single_value
from pqbloom.errors import ParquetError
from pqbloom.file.column_builder import place_pages
from pqbloom.file.column_reader import build_column, collect_chunk
from pqbloom.file.pages import iter_pages
from pqbloom.format import T, encode

_RLE, _DATA_PAGE, _DATA_PAGE_V2 = 3, 0, 3


def _descriptor(tmp_path: Any, max_def: int) -> Any:
    """A nullable int64 leaf at ``max_def`` from a file pyarrow writes (nested optional structs)."""
    typ: Any = pa.int64()
    for _ in range(max_def - 1):
        typ = pa.struct([("v", typ)])
    path = str(tmp_path / f"schema{max_def}.parquet")
    pq.write_table(pa.table({"c": pa.array([None], typ)}), path)
    pf = pqbloom.ParquetFile(path)
    d = pf.columns[0]
    assert d.max_definition_level == max_def and d.max_repetition_level == 0
    return d


def _runs(counts: list[int], value: int, bit_width: int) -> bytes:
    """RLE runs of ``value``, one header per count."""
    width = (bit_width + 7) // 8
    return b"".join(uleb128(c << 1) + value.to_bytes(width, "little") for c in counts)


@st.composite
def _page(draw: Any, max_def: int) -> tuple[bool, bytes, int, int]:
    """(v2, definition level bytes (the hybrid, no length), levels count, values present)."""
    bw = bit_width_of(max_def)
    n = draw(st.integers(1, 300))
    how = draw(st.sampled_from(["split", "split", "nulls", "bitpacked", "overshoot", "other", "trailing"]))
    if how in ("split", "overshoot", "trailing"):
        cuts = sorted(draw(st.lists(st.integers(1, n - 1), max_size=10, unique=True))) if n > 1 else []
        counts = [b - a for a, b in zip([0, *cuts], [*cuts, n])]
        if how == "overshoot":
            counts[-1] += draw(st.integers(1, 5))
        levels = _runs(counts, max_def, bw)
        if how == "trailing":
            levels += bytes(draw(st.lists(st.integers(0, 255), min_size=1, max_size=3)))
        return draw(st.booleans()), levels, n, n
    if how == "bitpacked":  # every value present, written bit-packed (no RLE run)
        levels_arr = np.full(n, max_def, np.int32)
        return draw(st.booleans()), encode_rle_bitpacked(levels_arr, bw, min_rle_run=10**6), n, n
    if how == "other":  # runs of one value below the maximum: every value null
        low = draw(st.integers(0, max_def - 1))
        return draw(st.booleans()), _runs([n], low, bw), n, 0
    levels_arr = np.array(draw(st.lists(st.integers(0, max_def), min_size=n, max_size=n)), np.int32)
    return draw(st.booleans()), encode_rle_bitpacked(levels_arr, bw), n, int(np.count_nonzero(levels_arr == max_def))


def _chunk(pages: list[tuple[bool, bytes, int, int]], seed: int) -> tuple[bytes, int]:
    rng = np.random.default_rng(seed)
    out = []
    total = 0
    for v2, levels, n, present in pages:
        values = rng.integers(-2**40, 2**40, present).astype("<i8").tobytes()
        if v2:
            body = levels + values
            header = T.PageHeader(type=_DATA_PAGE_V2, uncompressed_page_size=len(body), compressed_page_size=len(body),
                                  data_page_header_v2=T.DataPageHeaderV2(
                                      num_values=n, num_nulls=n - present, num_rows=n, encoding=0,
                                      definition_levels_byte_length=len(levels), repetition_levels_byte_length=0,
                                      is_compressed=False))
        else:
            body = len(levels).to_bytes(4, "little") + levels + values
            header = T.PageHeader(type=_DATA_PAGE, uncompressed_page_size=len(body), compressed_page_size=len(body),
                                  data_page_header=T.DataPageHeader(num_values=n, encoding=0,
                                                                    definition_level_encoding=_RLE,
                                                                    repetition_level_encoding=_RLE))
        out.append(encode(header) + body)
        total += n
    return b"".join(out), total


def _pages(buf: bytes, total: int, desc: Any, full_flags: bool, **kw: Any) -> Any:
    meta = SimpleNamespace(codec=0, num_values=total, total_compressed_size=len(buf), dictionary_page_offset=None,
                           data_page_offset=4)

    def extend(b: Any, base: int) -> bytes:
        raise pqbloom.errors.CorruptFileError("no more bytes")

    return iter_pages(buf, 4, meta, 0, desc, row_count=total, decryption=None, verify_checksums=False,
                      v2_always_compressed=False, extend=extend, full_flags=full_flags, **kw)


def _outcome(fn: Any) -> Any:
    try:
        return fn()
    except ParquetError as exc:  # the same failure, whichever path met it
        return type(exc)


def _page_list(buf: bytes, total: int, desc: Any, full_flags: bool) -> Any:
    return [(kind, np.array(values), None if flags is None else np.array(flags))
            for kind, values, flags, _ in _pages(buf, total, desc, full_flags)]


def _column(parts: Any, desc: Any) -> Any:
    """(values, nulls) of a chunk's rows, a null as 0."""
    if parts.placed:  # every row in pieces[0], nulls placed
        values = parts.pieces[0]
        mask = ~parts.present if parts.present is not None else np.zeros(len(values), bool)
    else:
        col = build_column(desc.field, [parts])
        values = np.asarray(col.values)
        mask = col.mask if col.mask is not None else np.zeros(len(values), bool)
    assert len(values) == len(mask) == parts.num_rows
    return np.where(mask, 0, values).tolist(), np.asarray(mask).tolist()


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data(), max_def=st.integers(1, 5), seed=st.integers(0, 2**16))
def test_fast_path_matches_general_levels(tmp_path: Any, data: Any, max_def: int, seed: int) -> None:
    desc = _DESCRIPTORS.get(max_def) or _DESCRIPTORS.setdefault(max_def, _descriptor(tmp_path, max_def))
    pages = data.draw(st.lists(_page(max_def), min_size=1, max_size=4))
    buf, total = _chunk(pages, seed)

    general = _outcome(lambda: _page_list(buf, total, desc, True))
    fast = _outcome(lambda: _page_list(buf, total, desc, False))
    if isinstance(general, type):
        assert fast is general
        return
    assert not isinstance(fast, type)
    assert len(fast) == len(general)
    for (gk, gv, gf), (fk, fv, ff) in zip(general, fast):
        assert gk == fk and np.array_equal(gv, fv)
        assert gf is not None  # the general path always gives a nullable page its flags
        if ff is None:
            assert bool(gf.all())
        else:
            assert np.array_equal(gf, ff)
    # a page of runs of the maximum level only takes the fast path
    for (_v2, levels, n, _present), (_, _, ff) in zip(pages, fast):
        if is_single_value(levels, 0, len(levels), n, max_def, bit_width_of(max_def)):
            assert ff is None

    # whole chunks, as the file reader gathers them (collect_chunk, and place_pages with views)
    want = _column(collect_chunk(_pages(buf, total, desc, True), desc, total), desc)
    assert _column(collect_chunk(_pages(buf, total, desc, False), desc, total), desc) == want
    nullable = desc.max_definition_level > 0
    placed = place_pages(_pages(buf, total, desc, False, views=True), desc.field, total, nullable)
    assert _column(placed, desc) == want
    out, present_out = np.empty(total, np.int64), np.empty(total, np.bool_)
    placed = place_pages(_pages(buf, total, desc, False, views=True), desc.field, total, nullable, out, present_out)
    assert _column(placed, desc) == want


_DESCRIPTORS: dict[int, Any] = {}


@given(counts=st.lists(st.integers(1, 2000), min_size=1, max_size=12), bw=st.integers(1, 3), value=st.integers(0, 7))
def test_is_single_value_matches_decoded_runs(counts: list[int], bw: int, value: int) -> None:
    value &= (1 << bw) - 1
    buf = _runs(counts, value, bw)
    n = sum(counts)
    assert is_single_value(buf, 0, len(buf), n, value, bw) is (len(counts) <= 8)
    assert not is_single_value(buf, 0, len(buf), n, value ^ 1, bw)
    assert not is_single_value(buf, 0, len(buf) - 1, n, value, bw)  # the last run's value cut off
    assert not is_single_value(buf, 0, len(buf), n + 1, value, bw)  # fewer values than asked
    if counts[-1] > 1:
        assert not is_single_value(buf, 0, len(buf), n - 1, value, bw)  # the last run overshoots


@pytest.mark.parametrize("version", ["1.0", "2.6"])
@pytest.mark.parametrize("page_version", ["1.0", "2.0"])
def test_pyarrow_files_with_and_without_nulls(tmp_path: Any, version: str, page_version: str) -> None:
    rng = np.random.default_rng(7)
    n = 20_000
    with_nulls = pa.array(rng.standard_normal(n), mask=rng.random(n) < 0.1)
    no_nulls = pa.array(rng.integers(0, 1000, n))
    # nulls in some pages only: a chunk whose pages mix flags and "all present"
    some = np.zeros(n, bool)
    some[15_000:15_010] = True
    mixed = pa.array(np.arange(n, dtype=np.int32), mask=some)
    strings = pa.array([None if i % 1000 == 0 else f"s{i % 37}" for i in range(n)])
    clean_strings = pa.array([f"t{i % 11}" for i in range(n)])
    nested = pa.array([{"v": None if i % 4000 == 1 else i} for i in range(n)])
    table = pa.table({"with_nulls": with_nulls, "no_nulls": no_nulls, "mixed": mixed, "strings": strings,
                      "clean_strings": clean_strings, "nested": nested})
    path = str(tmp_path / "t.parquet")
    pq.write_table(table, path, row_group_size=7_000, data_page_size=4096, version=version,
                   data_page_version=page_version, use_dictionary=["no_nulls", "strings"])
    want = pq.read_table(path)
    for threads in (False, True):
        got = pqbloom.read_table(path, use_threads=threads).to_arrow()
        for name in want.column_names:
            assert got.column(name).to_pylist() == want.column(name).to_pylist(), name
