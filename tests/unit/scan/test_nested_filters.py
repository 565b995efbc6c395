"""Filters on leaves inside lists and maps (repeated leaves): "some element satisfies it" semantics,
checked against DuckDB and against Python over pyarrow's reading of the same file; pruning by
statistics, Bloom filters, dictionaries, level histograms and page indexes that is real (shown in
Explain) and never changes the result; files written by pyarrow and by pqbloom, and fixtures."""

from __future__ import annotations

import duckdb
import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import pqbloom
from pqbloom.scan import Explain, field

LEAF = "tags.list.element"
WRITERS = ["pyarrow", "pqbloom"]


def _tags_table(n: int = 4000, seed: int = 7) -> pa.Table:
    """ids, and lists of 0-4 even ints (some null elements, some null lists) whose values grow
    with the row, so that each row group and page covers its own range."""
    rng = np.random.default_rng(seed)
    lens = rng.integers(0, 5, n)
    base = np.repeat(np.arange(n) * 10, lens)
    vals = base + 2 * rng.integers(0, 5, int(lens.sum()))
    off = np.concatenate([[0], np.cumsum(lens)]).astype(np.int32)
    elem_null = rng.random(len(vals)) < 0.05
    list_null = rng.random(n) < 0.1
    tags = pa.ListArray.from_arrays(pa.array(off), pa.array(vals, mask=elem_null), mask=pa.array(list_null))
    return pa.table({"id": pa.array(np.arange(n)), "tags": tags})


def _write(t: pa.Table, path, writer: str, **kw) -> None:
    if writer == "pyarrow":
        pq.write_table(t, path, write_page_index=True, **kw)
    else:
        pqbloom.write_table(t, path, write_page_index=True, **kw)


def _ids(path, expr, ex: Explain | None = None) -> list[int]:
    got = pqbloom.read_table(str(path), filters=expr, explain=ex).to_arrow()
    return got.column("id").to_pylist()


def _expected(path, pred) -> list[int]:
    """Oracle: rows of pyarrow's reading whose list has an element satisfying ``pred``."""
    t = pq.read_table(path)
    return [i for i, lst in zip(t.column("id").to_pylist(), t.column("tags").to_pylist())
            if any(pred(x) for x in (lst or []))]


@pytest.fixture(scope="module", params=WRITERS)
def tags_file(request, tmp_path_factory):
    path = tmp_path_factory.mktemp("nested") / f"tags_{request.param}.parquet"
    _write(_tags_table(), path, request.param, row_group_size=1000, data_page_size=2048, use_dictionary=False,
           bloom_filter_options={LEAF: True})
    return path


# ---------------------------------------------------------------------------
# semantics against oracles
# ---------------------------------------------------------------------------
CASES = [
    (field(LEAF) == 15000, lambda x: x == 15000),
    (field(LEAF) == 15001, lambda x: x == 15001),  # odd: never present
    (field(LEAF) != 12, lambda x: x is not None and x != 12),
    (field(LEAF) < 100, lambda x: x is not None and x < 100),
    (field(LEAF) >= 39990, lambda x: x is not None and x >= 39990),
    (field(LEAF).isin([8, 20002, 33334, 5]), lambda x: x in (8, 20002, 33334, 5)),
    (field(LEAF).isin([None, 20002]), lambda x: x is None or x == 20002),
    (field(LEAF).is_null(), lambda x: x is None),
    (field(LEAF).is_valid(), lambda x: x is not None),
    ((field(LEAF) > 20000) & (field(LEAF) < 20010), lambda x: x is not None and 20000 < x < 20010),
]


@pytest.mark.parametrize("case", range(len(CASES)))
def test_existential_semantics_match_python_over_pyarrow(tags_file, case):
    expr, pred = CASES[case]
    ex = Explain()
    assert _ids(tags_file, expr, ex) == _expected(tags_file, pred)
    assert ex.rows_returned == len(_expected(tags_file, pred))


def test_matches_duckdb_list_functions(tags_file):
    con = duckdb.connect()

    def duck(where: str) -> list[int]:
        q = f"SELECT id FROM read_parquet('{tags_file}') WHERE {where} ORDER BY id"
        return [r[0] for r in con.execute(q).fetchall()]

    assert _ids(tags_file, field(LEAF) == 15000) == duck("list_contains(tags, 15000)")
    assert _ids(tags_file, field(LEAF) > 39000) == duck("len(list_filter(tags, lambda x: x > 39000)) > 0")
    assert _ids(tags_file, field(LEAF).isin([8, 20002])) == \
        duck("len(list_filter(tags, lambda x: x IN (8, 20002))) > 0")
    # the row-level result is two-valued: NOT keeps rows whose list is null or empty
    assert _ids(tags_file, ~(field(LEAF) == 15000)) == duck("NOT coalesce(list_contains(tags, 15000), false)")
    assert _ids(tags_file, ~(field(LEAF) > 100)) == \
        duck("NOT coalesce(len(list_filter(tags, lambda x: x > 100)) > 0, false)")


def test_not_keeps_null_and_empty_lists(tmp_path):
    t = pa.table({"id": [0, 1, 2, 3, 4, 5],
                  "tags": pa.array([[5], [], None, [1, None], [5, 5], [None]], pa.list_(pa.int64()))})
    for writer in WRITERS:
        path = tmp_path / f"small_{writer}.parquet"
        _write(t, path, writer)
        assert _ids(path, field(LEAF) == 5) == [0, 4]
        assert _ids(path, ~(field(LEAF) == 5)) == [1, 2, 3, 5]
        assert _ids(path, field(LEAF) != 5) == [3]
        assert _ids(path, ~(field(LEAF) != 5)) == [0, 1, 2, 4, 5]
        assert _ids(path, field(LEAF).is_null()) == [3, 5]
        assert _ids(path, field(LEAF).is_valid()) == [0, 3, 4]
        assert _ids(path, ~field(LEAF).is_valid()) == [1, 2, 5]
        # comparing with null is null for every element: no row is true, so its negation keeps all
        assert _ids(path, field(LEAF) == None) == []  # noqa: E711
        assert _ids(path, ~(field(LEAF) == None)) == [0, 1, 2, 3, 4, 5]  # noqa: E711
        # mixed with a flat column, through the DNF and text forms too
        assert _ids(path, (field(LEAF) == 5) | (field("id") == 2)) == [0, 2, 4]
        assert _ids(path, [(LEAF, "in", [1, 7]), ("id", ">", 0)]) == [3]
        assert _ids(path, f"not {LEAF} = 5 and id < 3") == [1, 2]


def test_output_columns_include_the_filtered_list(tags_file):
    expr = field(LEAF).isin([8, 20002, 33334])
    got = pqbloom.read_table(str(tags_file), filters=expr).to_arrow()
    tags = pq.read_table(tags_file).column("tags").to_pylist()
    keep = [i for i, lst in enumerate(tags) if any(x in (8, 20002, 33334) for x in lst or [])]
    assert got.column("tags").to_pylist() == [tags[i] for i in keep]
    only_id = pqbloom.read_table(str(tags_file), columns=["id"], filters=expr).to_arrow()
    assert only_id.column_names == ["id"] and only_id.column("id").to_pylist() == keep
    with pqbloom.ParquetFile(str(tags_file)) as pf:
        batches = list(pf.iter_batches(batch_size=2, columns=["id"], filters=expr))
    assert [i for b in batches for i in b.to_arrow().column("id").to_pylist()] == keep


def test_filtered_and_returned_leaf_is_decoded_once(tags_file, monkeypatch):
    # the leaf chunk decoded to evaluate the filter is reused to assemble the returned list column
    expr = field(LEAF) != 12  # keeps rows in every row group: no page or row-group pruning
    calls: list[tuple[int, str]] = []
    real = pqbloom.ParquetFile.read_leaf_levels

    def counting(self, rg, desc):
        calls.append((rg, desc.dotted_path))
        return real(self, rg, desc)

    monkeypatch.setattr(pqbloom.ParquetFile, "read_leaf_levels", counting)
    ex = Explain()
    got = pqbloom.read_table(str(tags_file), filters=expr, explain=ex).to_arrow()
    tags = pq.read_table(tags_file).column("tags").to_pylist()
    keep = [i for i, lst in enumerate(tags) if any(x is not None and x != 12 for x in lst or [])]
    assert got.column("id").to_pylist() == keep
    assert got.column("tags").to_pylist() == [tags[i] for i in keep]
    assert ex.row_groups_read == 4
    assert sorted(calls) == [(rg, LEAF) for rg in range(4)]


# ---------------------------------------------------------------------------
# pruning is real and sound
# ---------------------------------------------------------------------------
def test_statistics_prune_row_groups(tags_file):
    ex = Explain()
    assert _ids(tags_file, field(LEAF) == 15000, ex) == _expected(tags_file, lambda x: x == 15000)
    assert ex.row_groups_total == 4
    assert ex.row_groups_pruned_statistics == 3
    # "no element" is all that element statistics can prove: the negation prunes nothing
    ex = Explain()
    _ids(tags_file, ~(field(LEAF) < 100000), ex)
    assert ex.row_groups_pruned == 0


def test_bloom_filters_prune_absent_values(tags_file):
    # odd values lie inside every row group's [min, max] of its range but are never written
    ex = Explain()
    assert _ids(tags_file, field(LEAF).isin([12001, 12003]), ex) == []
    assert ex.row_groups_pruned_statistics == 3
    assert ex.row_groups_pruned_bloom_filter == 1
    assert ex.bloom_filter_probes >= 1
    assert ex.rows_decoded == 0


@pytest.mark.parametrize("writer", WRITERS)
def test_dictionaries_prune(tmp_path, writer):
    t = pa.table({"id": pa.array(np.arange(3000)),
                  "tags": pa.array([[2 * (i % 7), 2 * (i % 5)] if i % 4 else [] for i in range(3000)],
                                   pa.list_(pa.int64()))})
    path = tmp_path / "dict.parquet"
    _write(t, path, writer, row_group_size=1000)
    ex = Explain()
    assert _ids(path, field(LEAF) == 3, ex) == []
    assert ex.row_groups_pruned_dictionary == 3 and ex.dictionaries_read == 3
    ex = Explain()
    assert _ids(path, field(LEAF) == 8, ex) == _expected(path, lambda x: x == 8)
    assert ex.row_groups_pruned == 0


@pytest.mark.parametrize("writer", WRITERS)
def test_level_histograms_prune_is_null(tmp_path, writer):
    # empty and null lists but no null element: null_count > 0, yet the definition-level
    # histogram shows that no element is null
    t = pa.table({"id": pa.array(np.arange(2000)),
                  "tags": pa.array([[i, i + 1] if i % 3 else ([] if i % 2 else None) for i in range(2000)],
                                   pa.list_(pa.int64()))})
    path = tmp_path / "hist.parquet"
    _write(t, path, writer, row_group_size=500)
    assert pqbloom.read_metadata(str(path)).row_group(0).column(1).statistics.null_count > 0
    ex = Explain()
    assert _ids(path, field(LEAF).is_null(), ex) == []
    assert ex.row_groups_pruned_statistics == 4
    assert _ids(path, ~field(LEAF).is_valid()) == [i for i in range(2000) if i % 3 == 0]


@pytest.mark.parametrize("writer", WRITERS)
def test_page_index_prunes_pages_of_repeated_leaf(tmp_path, writer):
    t = _tags_table(20000, seed=3)
    path = tmp_path / "pages.parquet"
    if writer == "pyarrow":
        _write(t, path, writer, row_group_size=20000, use_dictionary=False, max_rows_per_page=500,
               data_page_size=1 << 30)
    else:
        _write(t, path, writer, row_group_size=20000, use_dictionary=False, data_page_size=2048)
    for expr, pred in [(field(LEAF) == 123456, lambda x: x == 123456),
                       (field(LEAF).isin([30000, 150002]), lambda x: x in (30000, 150002)),
                       ((field(LEAF) >= 100000) & (field(LEAF) < 101000), lambda x: x is not None and
                        100000 <= x < 101000)]:
        ex = Explain()
        assert _ids(path, expr, ex) == _expected(path, pred)
        assert ex.row_groups_read == 1
        assert ex.pages_skipped > ex.pages_read > 0
        assert ex.rows_decoded < 20000 // 4
        assert not ex.notes  # every page read began at a record, as the OffsetIndex said


def test_page_read_falls_back_when_offset_index_lies(tmp_path):
    """Pages that do not hold the rows their OffsetIndex claims are not used (the whole chunk is): the
    file layer says so with PagesDoNotStandAlone, a checked condition, not a swallowed exception."""
    from pqbloom.file import PagesDoNotStandAlone, RowSelection
    from pqbloom.file.page_reads import decode_repeated_pages

    path = tmp_path / "lie.parquet"
    pqbloom.write_table(_tags_table(4000), path, row_group_size=4000, use_dictionary=False, data_page_size=2048)
    with pqbloom.ParquetFile(str(path)) as pf:
        d = pf.column_descriptor(LEAF)
        layout = pf.row_group_reader(0).page_index([d], column_index=False)[d.index].layout
        assert layout is not None and layout.num_pages > 3
        pages = np.array([1, 2])
        got = {r: pf.range_reader.read(*r) for r in layout.ranges(pages)}
        good = decode_repeated_pages(pf, 0, d, layout, pages, got)
        assert int((good.reps == 0).sum()) == int(layout.page_rows()[pages].sum())
        layout.first_rows[2] += 1  # page 1 now claims one row more than it holds
        with pytest.raises(PagesDoNotStandAlone):
            decode_repeated_pages(pf, 0, d, layout, pages, got)
        # and a filtered read over such pages still returns the right rows, noting the whole-chunk read
        reader = pf.row_group_reader(0)
        reader.page_index([d], column_index=False)[d.index].layout.first_rows[2] += 1
        rows = reader.read_repeated(d, RowSelection.of_ranges([(int(layout.first_rows[1]), int(layout.first_rows[2]))]))
        assert rows.first_rows is None and reader.counts.notes and "read the whole chunk" in reader.counts.notes[0]


# ---------------------------------------------------------------------------
# other shapes: maps, structs in lists, lists of lists, fixtures
# ---------------------------------------------------------------------------
@pytest.mark.parametrize("writer", WRITERS)
def test_maps_structs_and_nested_lists(tmp_path, writer):
    n = 600
    t = pa.table({
        "id": pa.array(range(n)),
        "m": pa.array([[(f"k{i % 11}", i), ("z", None)] if i % 5 else ([] if i % 2 else None) for i in range(n)],
                      pa.map_(pa.string(), pa.int32())),
        "ls": pa.array([[{"a": i % 13, "b": f"x{i % 3}"}, None] if i % 7 else [] for i in range(n)],
                       pa.list_(pa.struct([("a", pa.int32()), ("b", pa.string())]))),
        "ll": pa.array([[[i, i + 1], [], None] if i % 4 else [[None]] for i in range(n)],
                       pa.list_(pa.list_(pa.int64()))),
    })
    path = tmp_path / "shapes.parquet"
    _write(t, path, writer, row_group_size=200)
    rows = pq.read_table(path).to_pylist()

    def check(expr, pred):
        want = [r["id"] for r in rows if pred(r)]
        assert _ids(path, expr) == want
        assert len(want) not in (0, n)  # the case discriminates

    check(field("m.key_value.key") == "k3", lambda r: any(k == "k3" for k, _ in r["m"] or []))
    check(field("m.key_value.value") > 500, lambda r: any(v is not None and v > 500 for _, v in r["m"] or []))
    check(field("m.key_value.value").is_null(), lambda r: any(v is None for _, v in r["m"] or []))
    check(field("ls.list.element.a") == 4, lambda r: any(e is not None and e["a"] == 4 for e in r["ls"] or []))
    # a null struct element has a null leaf
    check(field("ls.list.element.b").is_null(), lambda r: any(e is None or e["b"] is None for e in r["ls"] or []))
    check(field("ll.list.element.list.element") == 301,
          lambda r: any(x == 301 for inner in r["ll"] or [] for x in inner or []))
    check(field("ll.list.element.list.element").is_null(),
          lambda r: any(x is None for inner in r["ll"] or [] for x in inner or []))
    con = duckdb.connect()
    got = con.execute(f"SELECT id FROM read_parquet('{path}') WHERE "
                      "len(list_filter(map_keys(m), lambda k: k = 'k3')) > 0 ORDER BY id").fetchall()
    assert _ids(path, field("m.key_value.key") == "k3") == [r[0] for r in got]


def _phones(r):
    return (r["phoneNumbers"] or {}).get("phone") or []


FIXTURE_CASES = [  # file, leaf, a value in it, the leaf's elements of a row as pyarrow reads it
    ("repeated_primitive_no_list.parquet", "Int32_list", 4, lambda r: r["Int32_list"]),
    ("repeated_primitive_no_list.parquet", "group_of_lists.String_list_in_group", "three",
     lambda r: (r["group_of_lists"] or {}).get("String_list_in_group")),
    ("list_columns.parquet", "int64_list.list.item", 1, lambda r: r["int64_list"]),
    ("list_columns.parquet", "utf8_list.list.item", "efg", lambda r: r["utf8_list"]),
    ("nested_maps.snappy.parquet", "a.key_value.value.key_value.key", 1,
     lambda r: [k for _, inner in r["a"] or [] for k, _ in inner or []]),
    ("repeated_no_annotation.parquet", "phoneNumbers.phone.number", 1111111111,
     lambda r: [p["number"] for p in _phones(r)]),
    ("repeated_no_annotation.parquet", "phoneNumbers.phone.kind", "home", lambda r: [p["kind"] for p in _phones(r)]),
    ("nested_lists.snappy.parquet", "a.list.element.list.element.list.element", "e",
     lambda r: [x for l1 in r["a"] or [] for l2 in l1 or [] for x in l2 or []]),
]


@pytest.mark.parametrize("case", FIXTURE_CASES, ids=lambda c: f"{c[0]}:{c[1]}")
def test_fixtures_from_other_writers(fixtures_dir, case):
    name, column, value, elements = case
    path = fixtures_dir / "data" / name
    with pqbloom.ParquetFile(str(path)) as pf:
        assert pf.column_descriptor(column).max_repetition_level > 0
        ours = pf.read().to_arrow().to_pylist()
    rows = pq.read_table(path).to_pylist()
    assert len(rows) == len(ours)
    hit = [any(v == value for v in elements(r) or []) for r in rows]
    null = [any(v is None for v in elements(r) or []) for r in rows]
    assert any(hit) and not all(hit)
    for expr, want in [(field(column) == value, hit),
                       (~(field(column) == value), [not h for h in hit]),
                       (field(column).is_null(), null)]:
        got = pqbloom.read_table(str(path), filters=expr).to_arrow().to_pylist()
        assert got == [ours[i] for i, w in enumerate(want) if w], expr


def test_encrypted_repeated_leaf_with_column_key(tmp_path):
    """Statistics, Bloom filters and page indexes of an encrypted leaf are decrypted to prune; the
    result is the same as on the plaintext file (and as Python over pyarrow's reading of that one),
    and so are the pages read."""
    from pqbloom.crypto import FileDecryptionProperties, FileEncryptionProperties

    t = _tags_table()
    plain, enc = tmp_path / "plain.parquet", tmp_path / "enc.parquet"
    opts = dict(row_group_size=1000, use_dictionary=False, data_page_size=2048, bloom_filter_options={LEAF: True})
    pqbloom.write_table(t, plain, **opts)
    key, col_key = b"K" * 16, b"C" * 16
    pqbloom.write_table(t, enc, encryption_properties=FileEncryptionProperties(key, {LEAF: col_key}), **opts)
    props = FileDecryptionProperties(footer_key=key, column_keys={LEAF: col_key})
    present = next(x for lst in t.column("tags").to_pylist()[1500:] for x in lst or [] if x is not None)
    no_element = [i for i, lst in enumerate(t.column("tags").to_pylist()) if not any(x is not None for x in lst or [])]
    skipped = []
    for expr, want, pruned in [(field(LEAF) == present, _expected(plain, lambda x: x == present), (3, 0)),
                               (field(LEAF).isin([12001]), [], (3, 1)),
                               (~(field(LEAF) >= 0), no_element, (0, 0))]:
        ex = Explain()
        got = pqbloom.read_table(str(enc), filters=expr, explain=ex, decryption_properties=props).to_arrow()
        assert got.column("id").to_pylist() == _ids(plain, expr) == want
        assert (ex.row_groups_pruned_statistics, ex.row_groups_pruned_bloom_filter) == pruned
        plain_ex = Explain()
        pqbloom.read_table(str(plain), filters=expr, explain=plain_ex)
        assert (ex.pages_total, ex.pages_read, ex.pages_skipped, ex.chunks_read_whole) == (
            plain_ex.pages_total, plain_ex.pages_read, plain_ex.pages_skipped, plain_ex.chunks_read_whole)
        skipped.append(ex.pages_skipped)
    assert any(skipped)  # the page index of the encrypted leaf pruned pages
    assert no_element and _expected(plain, lambda x: x == present)
