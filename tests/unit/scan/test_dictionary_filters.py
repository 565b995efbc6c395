"""Filters evaluated on a chunk's dictionary (once per entry, then mapped to the rows by their codes):
exact results against pyarrow's filtering of its reading of dictionary-encoded files written by pyarrow and
pqbloom (nulls, NaN, byte-wise string order, every comparison, ``in`` lists with None, chunks that fall
back to PLAIN pages part-way, several row groups, repeated leaves), the filtered column never expanded
for every row (``Explain.chunks_evaluated_on_dictionary``), corrupt indices reported, and threaded
reads identical to one-thread reads."""

from __future__ import annotations

import decimal
import io
import math

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq
import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

import pqbloom
from pqbloom.errors import CorruptFileError
from pqbloom.file.encoded_column import EncodedColumn, collect_encoded
from pqbloom.file.pages import parse_page_header
from pqbloom.scan import And, Compare, Explain, Expr, IsIn, IsNull, Not, Or, field
from tests.conftest import values_equal

# ---------------------------------------------------------------------------
# Value pools per column type: few distinct values, so that dictionaries are small and values repeat
# ---------------------------------------------------------------------------
STRINGS = ["", "a", "ab", "b", "B", "abc", "é", "zz", "a\x00", "héllo", "~", "\u00ff", "\U0001f600"]
TYPES = {
    "string": (pa.string(), st.sampled_from(STRINGS)),
    "int32": (pa.int32(), st.integers(-5, 5)),
    "int64": (pa.int64(), st.integers(-(2**40), 2**40) | st.integers(-3, 3)),
    "float64": (pa.float64(), st.sampled_from([float("nan"), 0.0, 1.5, -2.25, 3.0, 1e300, -math.inf, math.inf])),
    "binary3": (pa.binary(3), st.binary(min_size=3, max_size=3)),
    "decimal": (pa.decimal128(9, 2), st.integers(-500, 500).map(lambda i: decimal.Decimal(i).scaleb(-2))),
    "date": (pa.date32(), st.integers(0, 30).map(lambda d: pa.scalar(d, pa.date32()).as_py())),
}


@st.composite
def leaf_pairs(draw, kind: str):
    """A leaf on column ``v``: (pqbloom expression, the same as a pyarrow expression)."""
    _, values = TYPES[kind]
    op = draw(st.sampled_from(["==", "!=", "<", "<=", ">", ">=", "in", "not in", "null", "valid"]))
    f = pc.field("v")
    if op == "null":
        return IsNull("v"), f.is_null()
    if op == "valid":
        return IsNull("v", negate=True), f.is_valid()
    if op in ("in", "not in"):
        vals = draw(st.lists(st.none() | values, max_size=5))
        if kind == "float64":  # pyarrow's is_in hashes floats bitwise: keep the zeros of one sign
            vals = [v for v in vals if v != 0 or v is None]
        e: Expr = IsIn("v", vals)
        a = f.isin(vals)
        return (Not(e), ~a) if op == "not in" else (e, a)
    lit = draw(values)
    return Compare("v", op, lit), {"==": f == lit, "!=": f != lit, "<": f < lit, "<=": f <= lit, ">": f > lit,
                                   ">=": f >= lit}[op]


@st.composite
def predicates(draw, kind: str):
    """Leaves on ``v`` combined with and / or / not, some with a condition on ``id``."""
    a, aa = draw(leaf_pairs(kind))
    shape = draw(st.sampled_from(["leaf", "not", "and", "or", "id"]))
    if shape == "leaf":
        return a, aa
    if shape == "not":
        return Not(a), ~aa
    if shape == "id":
        k = draw(st.integers(0, 300))
        return And(a, Compare("id", ">=", k)), aa & (pc.field("id") >= k)
    b, bb = draw(leaf_pairs(kind))
    return (And(a, b), aa & bb) if shape == "and" else (Or(a, b), aa | bb)


@st.composite
def files(draw):
    """A table (``id``; ``v`` of some type, nulls and repeats; ``w`` nullable ints) and how to write it."""
    kind = draw(st.sampled_from(sorted(TYPES)))
    typ, values = TYPES[kind]
    n = draw(st.integers(1, 300))
    pool = draw(st.lists(values, min_size=1, max_size=40))
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    null_rate = draw(st.sampled_from([0.0, 0.2, 1.0]))
    v = [None if rng.random() < null_rate else pool[j] for j in rng.integers(0, len(pool), n)]
    w = pa.array(rng.integers(-9, 9, n), mask=rng.random(n) < 0.3)
    table = pa.table({"id": pa.array(np.arange(n, dtype=np.int64)), "v": pa.array(v, typ), "w": w})
    writer = draw(st.sampled_from(["pyarrow", "pyarrow", "pqbloom"]))
    opts: dict = {"row_group_size": draw(st.sampled_from([n, 64, 17])),
                  "data_page_size": draw(st.sampled_from([1 << 20, 100])),
                  "write_page_index": draw(st.booleans())}
    if writer == "pyarrow":
        # a small dictionary limit makes pyarrow fall back to PLAIN pages part-way through a chunk
        opts["dictionary_pagesize_limit"] = draw(st.sampled_from([1 << 20, 40, 1]))
        opts["write_batch_size"] = 8  # (pyarrow checks the limit after each batch)
    return kind, table, writer, opts


def _write(table: pa.Table, writer: str, opts: dict) -> bytes:
    buf = io.BytesIO()
    if writer == "pyarrow":
        pq.write_table(table, buf, **opts)
    else:
        pqbloom.write_table(table, buf, **opts)
    return buf.getvalue()


def _pyarrow_filtered(raw: bytes, arrow_expr) -> pa.Table:
    """pyarrow's reading of the file, filtered by pyarrow's evaluation of the expression. (Not
    ``pq.read_table(filters=...)``: pyarrow prunes row groups by statistics that leave NaN out, so that
    ``~(v < 1.5)`` loses a NaN row of a row group whose other values are below 1.5.)"""
    return pq.read_table(pa.BufferReader(raw)).filter(arrow_expr)


def _assert_same(got: pa.Table, want: pa.Table, what: str) -> None:
    assert got.column_names == want.column_names, what
    for name in want.column_names:
        g, w = got.column(name).to_pylist(), want.column(name).to_pylist()
        assert len(g) == len(w) and all(values_equal(x, y) for x, y in zip(g, w)), (what, name, g, w)


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data(), spec=files())
def test_filtered_read_equals_pyarrow(data, spec) -> None:
    kind, table, writer, opts = spec
    expr, arrow_expr = data.draw(predicates(kind))
    raw = _write(table, writer, opts)
    try:
        want = _pyarrow_filtered(raw, arrow_expr)
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError, pa.ArrowTypeError, OverflowError, TypeError):
        assume(False)  # a comparison pyarrow cannot express
        return
    for threads in (False, True):
        ex = Explain()
        got = pqbloom.ParquetFile(raw).read(filters=expr, explain=ex, use_threads=threads)
        _assert_same(got.to_arrow(), want, f"{expr} threads={threads}")
        assert ex.rows_returned == want.num_rows
    # the same without the filter column in the output (its matching rows never decoded), and in batches
    got_ids = pqbloom.ParquetFile(raw).read(columns=["id", "w"], filters=expr).to_arrow()
    _assert_same(got_ids, want.select(["id", "w"]), str(expr))
    batches = list(pqbloom.ParquetFile(raw).iter_batches(batch_size=13, filters=expr))
    assert sum((b.column("id").to_pylist() for b in batches), []) == want.column("id").to_pylist()


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data(), spec=files())
def test_dnf_filters_equal_pyarrow(data, spec) -> None:
    """pyarrow-style lists (``in`` / ``not in`` with None among the values, every comparison)."""
    kind, table, writer, opts = spec
    _, values = TYPES[kind]
    op = data.draw(st.sampled_from(["=", "!=", "<", "<=", ">", ">=", "in", "not in"]))
    if op in ("in", "not in"):
        lit = data.draw(st.lists(st.none() | values, min_size=1, max_size=4))
        if kind == "float64":
            lit = [x for x in lit if x is None or x != 0] or [1.5]
    else:
        lit = data.draw(values)
    filters = [("v", op, lit)]
    raw = _write(table, writer, opts)
    try:
        want = _pyarrow_filtered(raw, pq.filters_to_expression(filters))
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError, pa.ArrowTypeError, OverflowError, TypeError):
        assume(False)
        return
    _assert_same(pqbloom.ParquetFile(raw).read(filters=filters).to_arrow(), want, str(filters))


# ---------------------------------------------------------------------------
# Repeated leaves: lists of dictionary-encoded strings ("some element satisfies it")
# ---------------------------------------------------------------------------
def _list_reference(t: pa.Table, arrow_pred) -> list[int]:
    """ids of the rows whose list has an element satisfying ``arrow_pred`` (pyarrow compute)."""
    tags = t.column("tags").combine_chunks()
    flat = pc.list_flatten(tags)
    parents = pc.list_parent_indices(tags)
    hit = arrow_pred(flat).fill_null(False)
    rows = sorted(set(pc.filter(parents, hit).to_pylist()))
    ids = t.column("id").to_pylist()
    return [ids[r] for r in rows]


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 2**32 - 1), n=st.integers(1, 200), writer=st.sampled_from(["pyarrow", "pqbloom"]),
       op=st.sampled_from(["==", "!=", "<", ">=", "in", "null", "valid"]), lit=st.sampled_from(STRINGS),
       limit=st.sampled_from([1 << 20, 30]), group=st.sampled_from([200, 31]))
def test_repeated_leaf_on_dictionary_strings(seed, n, writer, op, lit, limit, group) -> None:
    rng = np.random.default_rng(seed)
    lens = rng.integers(0, 4, n)
    vals = [None if rng.random() < 0.1 else STRINGS[j] for j in rng.integers(0, len(STRINGS), int(lens.sum()))]
    off = np.concatenate([[0], np.cumsum(lens)]).astype(np.int32)
    tags = pa.ListArray.from_arrays(pa.array(off), pa.array(vals, pa.string()), mask=pa.array(rng.random(n) < 0.1))
    t = pa.table({"id": pa.array(np.arange(n)), "tags": tags})
    buf = io.BytesIO()
    if writer == "pyarrow":
        pq.write_table(t, buf, row_group_size=group, dictionary_pagesize_limit=limit, write_batch_size=8)
    else:
        pqbloom.write_table(t, buf, row_group_size=group)
    leaf = field("tags.list.element")
    if op == "null":
        expr, pred = leaf.is_null(), pc.is_null
    elif op == "valid":
        expr, pred = leaf.is_valid(), pc.is_valid
    elif op == "in":
        keys = [lit, "b", None]
        expr, pred = leaf.isin(keys), (lambda a: pc.is_in(a, pa.array(keys, pa.string())))
    else:
        expr = Compare("tags.list.element", op, lit)
        pred = {"==": lambda a: pc.equal(a, lit), "!=": lambda a: pc.not_equal(a, lit),
                "<": lambda a: pc.less(a, lit), ">=": lambda a: pc.greater_equal(a, lit)}[op]
    raw = buf.getvalue()
    got = pqbloom.ParquetFile(raw).read(filters=expr).to_arrow()
    assert got.column("id").to_pylist() == _list_reference(pq.read_table(pa.BufferReader(raw)), pred), str(expr)


# ---------------------------------------------------------------------------
# The filtered column is evaluated on its dictionary, never expanded for every row
# ---------------------------------------------------------------------------
def _dict_file(path, n: int = 50_000, groups: int = 5, **kw) -> pa.Table:
    rng = np.random.default_rng(3)
    words = np.array([f"w{i:04d}" for i in range(300)], dtype=object)
    key = words[rng.integers(0, len(words), n)]
    key[rng.random(n) < 0.05] = None
    t = pa.table({"id": pa.array(np.arange(n)), "key": pa.array(key.tolist(), pa.string()), "x": rng.random(n)})
    pq.write_table(t, path, row_group_size=n // groups, **kw)
    return t


def test_explain_counts_chunks_evaluated_on_their_dictionary(tmp_path) -> None:
    path = tmp_path / "d.parquet"
    _dict_file(path)
    # (pyarrow dictionary-encodes x too: its 10,000 doubles per row group fit the dictionary)
    for expr, chunks in ((field("key") == "w0007", 5), (field("key").isin(["w0001", "w0100", None]), 5),
                         (field("key") < "w0100", 5), (field("key").is_null(), 5),
                         (~(field("key") != "w0003") | (field("x") > 0.999), 10)):
        ex = Explain()
        got = pqbloom.read_table(str(path), filters=expr, explain=ex).to_arrow()
        assert ex.row_groups_read == 5 and ex.chunks_evaluated_on_dictionary == chunks, (str(expr), str(ex))
        assert f"{chunks} predicate chunks evaluated on their dictionary" in str(ex)
        assert ex.to_dict()["chunks_evaluated_on_dictionary"] == chunks
        assert got.num_rows == ex.rows_returned > 0


def test_filtered_column_values_are_not_expanded_for_every_row(tmp_path, monkeypatch) -> None:
    """The dictionary entries a read expands are those of the matching rows only."""
    from pqbloom.file import column_reader, encoded_column

    path = tmp_path / "d.parquet"
    t = _dict_file(path, groups=1)
    expanded: list[int] = []
    real = column_reader.expand_dictionary

    def spy(dictionary, idx):
        expanded.append(len(idx))
        return real(dictionary, idx)

    monkeypatch.setattr(column_reader, "expand_dictionary", spy)
    monkeypatch.setattr(encoded_column, "expand_dictionary", spy)
    got = pqbloom.read_table(str(path), filters=field("key") == "w0042").to_arrow()
    want = t.filter(pc.field("key") == "w0042")
    assert got.column("id").to_pylist() == want.column("id").to_pylist()
    # pyarrow dictionary-encodes id and x too (they fit): each of the three columns expands its matching rows
    assert sum(expanded) <= 3 * want.num_rows, expanded


@pytest.mark.parametrize(("expr", "filters"), [
    (field("key") == "w0042", [("key", "=", "w0042")]),
    (field("key").isin(["w0001", "w0100"]), [("key", "in", ["w0001", "w0100"])]),
    (field("key") >= "w0290", [("key", ">=", "w0290")]),
    (~(field("key") != "w0003"), [("key", "=", "w0003")]),
])
def test_pruning_verdict_on_the_dictionary_is_not_evaluated_again(tmp_path, monkeypatch, expr, filters) -> None:
    """A leaf that dictionary pruning evaluated on a chunk's entries is not evaluated on them again by
    the read of that chunk (issue 32): one evaluation per chunk, the rows pyarrow's filtered read gives."""
    from pqbloom.scan import evaluate, prune_row_group

    path = tmp_path / "d.parquet"
    _dict_file(path, groups=5)
    calls: list[int] = []
    real = evaluate.leaf_truth

    def spy(leaf, col, keys):
        calls.append(len(col))
        return real(leaf, col, keys)

    monkeypatch.setattr(evaluate, "leaf_truth", spy)
    monkeypatch.setattr(prune_row_group, "leaf_truth", spy)
    ex = Explain()
    got = pqbloom.read_table(str(path), filters=expr, explain=ex).to_arrow()
    want = pq.read_table(path, filters=filters)
    assert ex.dictionaries_read == 5 and ex.chunks_evaluated_on_dictionary == 5, str(ex)
    assert calls == [300] * 5  # once per row group, by pruning, on its 300-entry dictionary
    assert got.column("id").to_pylist() == want.column("id").to_pylist()
    assert got.column("key").to_pylist() == want.column("key").to_pylist()


def test_dictionary_truths_need_the_same_entries() -> None:
    """The pruner hands its verdicts on a dictionary to the read only for that very dictionary."""
    from pqbloom.arrays import BinaryArray
    from pqbloom.scan.prune_row_group import RowGroupPruner

    f = pqbloom.Schema.from_types({"k": "string"}).field("k")
    pruner = RowGroupPruner.__new__(RowGroupPruner)  # (only its dictionaries and verdicts are used)
    truths = {7: (np.array([True, False, False, False]), np.array([False, True, True, False]))}
    pruner.dicts = {"k": BinaryArray.from_pylist([b"a", b"bc", b"d"])}
    pruner.entry_truths = {"k": truths}

    def col(entries, size=None):
        return EncodedColumn(f, entries, [np.zeros(2, np.int32)], len(entries) if size is None else size)

    assert pruner.dictionary_truths("k", col(BinaryArray.from_pylist([b"a", b"bc", b"d"]))) is truths
    assert pruner.dictionary_truths("k", col(BinaryArray.from_pylist([b"a", b"b", b"cd"]))) == {}
    assert pruner.dictionary_truths("k", col(BinaryArray.from_pylist([b"a", b"bc", b"e"]))) == {}
    assert pruner.dictionary_truths("k", col(BinaryArray.from_pylist([b"a", b"bc", b"d", b"x"]), 3)) == {}
    assert pruner.dictionary_truths("other", col(BinaryArray.from_pylist([b"a", b"bc", b"d"]))) == {}
    pruner.dicts = {"k": np.array([1, 2, 3], np.int64)}
    assert pruner.dictionary_truths("k", col(np.array([1, 2, 3], np.int64))) is truths
    assert pruner.dictionary_truths("k", col(np.array([1, 2, 3], np.int32))) == {}
    assert pruner.dictionary_truths("k", col(np.array([1, 2, 4], np.int64))) == {}


def test_mixed_dictionary_and_plain_chunk(tmp_path) -> None:
    """A chunk that falls back to PLAIN pages part-way: dictionary pages on codes, PLAIN pages as entries."""
    path = tmp_path / "m.parquet"
    rng = np.random.default_rng(5)
    n = 20_000
    s = [None if z else f"s{k}" for k, z in zip(rng.integers(0, 5000, n), rng.random(n) < 0.1)]
    f = rng.integers(0, 60, n).astype(float)
    f[rng.random(n) < 0.05] = np.nan
    t = pa.table({"id": pa.array(np.arange(n)), "s": pa.array(s), "f": pa.array(f, mask=rng.random(n) < 0.1)})
    pq.write_table(t, path, dictionary_pagesize_limit=2000, data_page_size=1000, row_group_size=7000)
    md = pq.ParquetFile(path).metadata
    assert {"PLAIN", "RLE_DICTIONARY"} <= set(md.row_group(0).column(1).encodings)
    filters = [[("s", "==", "s7")], [("s", "<", "s2")], [("s", "not in", ["s1", "s2", None])], [("f", ">", 10.0)],
               [("f", "!=", 3.0)], [("f", "in", [1.0, 2.0, float("nan")])], [("s", ">=", "s2"), ("f", "<", 20.0)]]
    for flt in filters:
        ex = Explain()
        got = pqbloom.read_table(str(path), filters=flt, explain=ex).to_arrow()
        _assert_same(got, _pyarrow_filtered(path.read_bytes(), pq.filters_to_expression(flt)), str(flt))
        assert ex.chunks_evaluated_on_dictionary == ex.row_groups_read * (2 if len(flt) == 2 else 1), str(ex)


@pytest.mark.parametrize("typ", [pa.binary(3), pa.string(), pa.float64(), pa.decimal128(9, 2)])
def test_all_null_chunk_with_an_empty_dictionary(tmp_path, typ) -> None:
    """pyarrow writes an empty dictionary page for an all-null chunk: pruning and evaluation on its
    (zero) entries work for every type (a fixed-width one's empty entries used to fail to reshape)."""
    path = tmp_path / "n.parquet"
    t = pa.table({"id": pa.array(np.arange(10)), "v": pa.array([None] * 10, typ)})
    pq.write_table(t, path)
    for expr, arrow_expr in ((field("v").isin([None]), pc.field("v").isin(pa.array([None], typ))),
                             (field("v").is_null(), pc.field("v").is_null()),
                             (~field("v").is_valid(), ~pc.field("v").is_valid())):
        got = pqbloom.read_table(str(path), filters=expr).to_arrow()
        assert got.column("id").to_pylist() == t.filter(arrow_expr).column("id").to_pylist() == list(range(10))


def test_corrupt_dictionary_index_raises(tmp_path) -> None:
    """An index past the dictionary's end is the file's error, never a null or another entry."""
    path = tmp_path / "c.parquet"
    n = 1000
    t = pa.table({"s": pa.array(["a", "b", "c"] + ["c"] * (n - 3), pa.string())})
    t = t.cast(pa.schema([pa.field("s", pa.string(), nullable=False)]))
    pq.write_table(t, path, compression="none", write_statistics=False)
    raw = bytearray(path.read_bytes())
    # the data page's indices: bit width 2, then a bit-packed group of 8 (0, 1, 2, 2, ...): make the
    # first index 3, one past the dictionary of 3 entries
    at = raw.find(bytes([2, 3, 0b10100100]))
    assert at > 0
    raw[at + 2] = 0b10100111
    path.write_bytes(bytes(raw))
    for expr in (field("s") == "a", field("s").is_null(), field("s") != "zz"):
        with pytest.raises(CorruptFileError, match="dictionary index 3 out of range"):
            pqbloom.read_table(str(path), filters=expr)


def test_collect_encoded_checks_indices_and_levels() -> None:
    f = pqbloom.Schema.from_types({"s": "string"}).field("s")
    d = pqbloom.arrays.BinaryArray.from_pylist([b"x", b"y"])
    good = collect_encoded([("dict", np.array([0, 1, 1], np.int32), None, d)], f, False, 3)
    assert isinstance(good, EncodedColumn) and good.codes.tolist() == [0, 1, 1]
    for bad in (np.array([0, 2], np.int32), np.array([-1, 0], np.int32)):
        with pytest.raises(CorruptFileError, match="out of range for a dictionary of 2 values"):
            collect_encoded([("dict", bad, None, d)], f, False, 2)
    present = np.array([True, False, True])
    mixed = collect_encoded([("dict", np.array([1], np.int32), present[:2], d),
                             ("values", pqbloom.arrays.BinaryArray.from_pylist([b"z"]), present[2:], d)], f, True, 3)
    assert isinstance(mixed, EncodedColumn)
    assert mixed.codes.tolist() == [1, 3, 2] and mixed.entries.to_pylist() == [b"x", b"y", b"z"]
    assert mixed.decoded().to_pylist() == ["y", None, "z"]
    with pytest.raises(CorruptFileError, match="2 values decoded for 3 present slots"):
        collect_encoded([("dict", np.array([1, 0], np.int32), np.ones(3, bool), d)], f, True, 3)
    with pytest.raises(CorruptFileError, match="decoded 2 rows where 3 are expected"):
        collect_encoded([("dict", np.array([1, 0], np.int32), None, d)], f, False, 3)
    # one piece of codes per page, joined only when asked
    paged = collect_encoded([("dict", np.array([1], np.int32), present[:2], d),
                             ("dict", np.array([0, 0], np.int32), None, d)], f, True, 4)
    assert isinstance(paged, EncodedColumn) and len(paged.pieces) == 2 and len(paged) == 4
    assert paged.slice(1, 2).codes.tolist() == [2, 0] and paged.codes.tolist() == [1, 2, 0, 0]


@settings(max_examples=200, deadline=None)
@given(lengths=st.lists(st.integers(0, 6), min_size=1, max_size=5), data=st.data())
def test_encoded_column_take_and_slice_across_pieces(lengths, data) -> None:
    # take and slice gather from the per-page pieces without joining them: the same rows as numpy's
    # indexing of the joined codes, for ascending, unsorted, repeated and negative positions
    f = pqbloom.Schema.from_types({"s": "string"}).field("s")
    entries = pqbloom.arrays.BinaryArray.from_pylist([b"a", b"b", b"c"])
    rng = np.random.default_rng(data.draw(st.integers(0, 2**32 - 1)))
    pieces = [rng.integers(0, 4, k).astype(np.int32) for k in lengths]
    joined = np.concatenate(pieces)
    n = len(joined)
    col = EncodedColumn(f, entries, list(pieces), 3)
    if n:
        idx = np.array(data.draw(st.lists(st.integers(-n, n - 1), max_size=12)), np.int64)
        if data.draw(st.booleans()):
            idx = np.sort(idx[idx >= 0])
        assert col.take(idx).codes.tolist() == joined[idx].tolist()
    offset = data.draw(st.integers(0, n))
    length = data.draw(st.one_of(st.none(), st.integers(0, n - offset)))
    stop = n if length is None else offset + length
    part = col.slice(offset, length)
    assert len(part) == stop - offset and part.codes.tolist() == joined[offset:stop].tolist()
    assert col.codes.tolist() == joined.tolist()


# ---------------------------------------------------------------------------
# use_threads: row groups on the decode pool, results and errors in row-group order
# ---------------------------------------------------------------------------
def test_threads_give_the_one_thread_result_and_its_first_error(tmp_path) -> None:
    path = tmp_path / "d.parquet"
    _dict_file(path, groups=5)
    for expr in (field("key") == "w0007", field("x") < 0.3, field("key").is_null() | (field("x") > 0.9)):
        one = pqbloom.read_table(str(path), filters=expr, use_threads=False).to_arrow()
        many = pqbloom.read_table(str(path), filters=expr, use_threads=True).to_arrow()
        assert one.equals(many)
    n = 40_000
    t = pa.table({"id": pa.array(np.arange(n)), "s": pa.array([f"v{i % 3}" for i in range(n)], pa.string())})
    t = t.cast(pa.schema([pa.field("id", pa.int64()), pa.field("s", pa.string(), nullable=False)]))
    path2 = tmp_path / "e.parquet"
    pq.write_table(t, path2, compression="none", row_group_size=n // 4, write_statistics=False)
    raw = bytearray(path2.read_bytes())
    md = pq.ParquetFile(path2).metadata
    # the indices' bit width (the first byte after the page header: a required column has no levels)
    # made 40 in row groups 1 and 3: the error raised names row group 1, with threads too
    for rg in (1, 3):
        start = md.row_group(rg).column(1).data_page_offset
        _, end = parse_page_header(bytes(raw[start:start + 256]), 0, offset=start)
        assert raw[start + end] == 2
        raw[start + end] = 40
    path2.write_bytes(bytes(raw))
    for threads in (False, True):
        with pytest.raises(CorruptFileError) as err:
            pqbloom.read_table(str(path2), filters=field("s") == "v1", use_threads=threads)
        assert err.value.row_group == 1, str(err.value)

