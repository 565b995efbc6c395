"""Filters and predicate pushdown: exact results under every pruning layer, against a pure-Python
reference and against pyarrow; pruning that is real and reported; fixtures with hostile
statistics and page indexes; datasets in pyarrow's and Spark's layouts; the CLI."""

from __future__ import annotations

import datetime as dt
import decimal
import io
import json
import math
import os
import uuid

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.dataset as pads
import pyarrow.parquet as pq
import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

import pqbloom
from pqbloom.cli import main as cli
from pqbloom.io import coalesce_ranges
from pqbloom.scan import (
    And,
    Compare,
    Const,
    Explain,
    Expr,
    IsIn,
    IsNull,
    Not,
    Or,
    field,
    parse_filter,
    to_expression,
)
from tests.conftest import values_equal

# ---------------------------------------------------------------------------
# A pure-Python reference: Kleene logic over the Python values of a full read
# ---------------------------------------------------------------------------
_NULL = None


def _isnan(v):
    return isinstance(v, float) and math.isnan(v)


def _ref_cmp(v, op, lit):
    if v is None or lit is None:
        return _NULL
    if isinstance(v, str) and isinstance(lit, str):
        v, lit = v.encode("utf-8"), lit.encode("utf-8")  # byte-wise, as Parquet orders strings
    return {"==": v == lit, "!=": v != lit, "<": v < lit, "<=": v <= lit, ">": v > lit, ">=": v >= lit}[op]


def ref_eval(e: Expr, row: dict):
    if isinstance(e, Const):
        return e.value
    if isinstance(e, Compare):
        return _ref_cmp(row[e.column], e.op, e.value)
    if isinstance(e, IsNull):
        isnull = row[e.column] is None
        return (not isnull) if e.negate else isnull
    if isinstance(e, IsIn):
        v = row[e.column]
        if v is None:
            return any(x is None for x in e.values)
        if _isnan(v):
            return any(_isnan(x) for x in e.values)
        return any(x is not None and not _isnan(x) and v == x for x in e.values)
    if isinstance(e, Not):
        r = ref_eval(e.operand, row)
        return None if r is None else not r
    if isinstance(e, And):
        a, b = ref_eval(e.left, row), ref_eval(e.right, row)
        if a is False or b is False:
            return False
        return None if a is None or b is None else True
    if isinstance(e, Or):
        a, b = ref_eval(e.left, row), ref_eval(e.right, row)
        if a is True or b is True:
            return True
        return None if a is None or b is None else False
    raise TypeError(e)


def expected_rows(full: pqbloom.Table, expr: Expr) -> list[dict]:
    return [r for r in full.to_pylist() if ref_eval(expr, r) is True]


def rows_equal(a: list[dict], b: list[dict]) -> bool:
    return len(a) == len(b) and all(values_equal(x, y) for x, y in zip(a, b))


def to_arrow_expr(e: Expr):
    if isinstance(e, Const):
        return pads.scalar(e.value)
    if isinstance(e, Compare):
        f = pc.field(e.column)
        return {"==": f == e.value, "!=": f != e.value, "<": f < e.value, "<=": f <= e.value,
                ">": f > e.value, ">=": f >= e.value}[e.op]
    if isinstance(e, IsNull):
        return pc.field(e.column).is_valid() if e.negate else pc.field(e.column).is_null()
    if isinstance(e, IsIn):
        return pc.field(e.column).isin(list(e.values))
    if isinstance(e, Not):
        return ~to_arrow_expr(e.operand)
    if isinstance(e, And):
        return to_arrow_expr(e.left) & to_arrow_expr(e.right)
    if isinstance(e, Or):
        return to_arrow_expr(e.left) | to_arrow_expr(e.right)
    raise TypeError(e)


def arrow_supports(e: Expr) -> bool:
    """pyarrow's is_in hashes floats bitwise (so 0.0 does not match -0.0); skip those lists."""
    if isinstance(e, IsIn):
        return not (e.column == "f" and any(isinstance(v, (int, float)) and v == 0 for v in e.values))
    if isinstance(e, Not):
        return arrow_supports(e.operand)
    if isinstance(e, (And, Or)):
        return arrow_supports(e.left) and arrow_supports(e.right)
    return True


# ---------------------------------------------------------------------------
# Hypothesis: random data, random layouts, random predicates
# ---------------------------------------------------------------------------
SCHEMA = pqbloom.Schema.from_types({"k": "int64", "i": "int64", "f": "double", "s": "string", "d": "date",
                                    "u": "uint32"}, not_null=["k"])
U32 = [0, 1, 7, 2**31 - 1, 2**31, 2**31 + 5, 2**32 - 2, 2**32 - 1]
STRINGS = ["", "a", "ab", "abc", "b", "ba", "é", "éa", "z", "\U0001f600", "aé"]
FLOATS = [0.0, -0.0, 1.0, -1.0, 1.5, 2.0, float("nan"), float("inf"), float("-inf"), 1e300, -2.5]
DATES = [dt.date(1970, 1, 1), dt.date(2000, 2, 29), dt.date(2024, 1, 31), dt.date(1969, 12, 31),
         dt.date(2024, 2, 1)]

# small values, sparse even values (odd literals then fall inside min/max yet are absent: Bloom
# filters, dictionaries and the page index have something to prune), and extremes
int_vals = st.one_of(st.integers(-6, 6), st.integers(-100, 100).map(lambda x: 2 * x),
                     st.sampled_from([-(2**63), 2**63 - 1, 2**40]))
opt = lambda s: st.one_of(st.none(), s)  # noqa: E731


@st.composite
def tables(draw):
    n = draw(st.integers(0, 120))
    ints = draw(st.lists(opt(int_vals), min_size=n, max_size=n))
    if draw(st.booleans()):  # sorted data makes page-index pruning bite
        ints = sorted(v for v in ints if v is not None) + [None] * sum(v is None for v in ints)
    data = {
        "k": list(range(n)),
        "i": ints,
        "f": draw(st.lists(opt(st.sampled_from(FLOATS)), min_size=n, max_size=n)),
        "s": draw(st.lists(opt(st.sampled_from(STRINGS)), min_size=n, max_size=n)),
        "d": draw(st.lists(opt(st.sampled_from(DATES)), min_size=n, max_size=n)),
        "u": draw(st.lists(opt(st.sampled_from(U32)), min_size=n, max_size=n)),
    }
    opts = {
        "row_group_size": draw(st.integers(1, 50)),
        "data_page_size": draw(st.sampled_from([16, 64, 256, 1 << 20])),
        "use_dictionary": draw(st.booleans()),
        "data_page_version": draw(st.sampled_from(["1.0", "2.0"])),
        "compression": draw(st.sampled_from(["none", "snappy"])),
        "bloom_filter_options": {c: True for c in draw(st.sets(st.sampled_from(["i", "f", "s", "d", "u"])))},
        "write_page_index": True,
    }
    return data, opts


LITERALS = {
    "i": st.one_of(int_vals, st.integers(-201, 201),
                   st.sampled_from([2.5, -0.5, 2**64, -(2**64), float("nan"), float("inf")])),
    "f": st.one_of(st.sampled_from(FLOATS), st.integers(-3, 3)),
    "s": st.sampled_from(STRINGS + ["aa", "c", "\x00"]),
    "d": st.sampled_from(DATES + [dt.date(2010, 5, 5), dt.date(1900, 1, 1)]),
    "u": st.one_of(st.sampled_from(U32), st.sampled_from([-1, 2**32, 2**31 - 0.5])),
}
COLS = sorted(LITERALS)


@st.composite
def leaves(draw):
    c = draw(st.sampled_from(COLS))
    kind = draw(st.sampled_from(["cmp", "cmp", "cmp", "isin", "null"]))
    if kind == "cmp":
        return Compare(c, draw(st.sampled_from(["==", "!=", "<", "<=", ">", ">="])), draw(LITERALS[c]))
    if kind == "isin":
        return IsIn(c, draw(st.lists(st.one_of(LITERALS[c], st.none()), max_size=4)))
    return IsNull(c, negate=draw(st.booleans()))


# point lookups on sparse values: what Bloom filters, dictionaries and the page index prune
point_leaves = st.one_of(
    st.builds(lambda v: Compare("i", "==", v), st.integers(-201, 201)),
    st.builds(lambda vs: IsIn("i", vs), st.lists(st.integers(-201, 201), min_size=1, max_size=3)),
    st.builds(lambda v: Compare("s", "==", v), st.sampled_from(["aa", "c", "b", "abc"])),
)

predicates = st.recursive(
    st.one_of(leaves(), point_leaves),
    lambda inner: st.one_of(st.builds(And, inner, inner), st.builds(Or, inner, inner), st.builds(Not, inner)),
    max_leaves=5,
)


def write_bytes(data, opts) -> bytes:
    buf = io.BytesIO()
    pqbloom.write_table(pqbloom.Table.from_pydict(data, SCHEMA), buf, **opts)
    return buf.getvalue()


def check_filtered(raw: bytes, expr: Expr) -> Explain:
    pf = pqbloom.ParquetFile(raw)
    full = pf.read()
    want = expected_rows(full, expr)
    ex = Explain()
    got = pf.read(filters=expr, explain=ex)
    assert rows_equal(got.to_pylist(), want), (str(expr), [r["k"] for r in got.to_pylist()], [r["k"] for r in want])
    # projection that leaves out the predicate columns (late materialization path)
    got_k = pf.read(columns=["k"], filters=expr).column("k").to_pylist()
    assert got_k == [r["k"] for r in want]
    # batches
    batches = list(pf.iter_batches(batch_size=7, filters=expr))
    assert sum((b.column("k").to_pylist() for b in batches), []) == [r["k"] for r in want]
    assert ex.rows_returned == len(want)
    return ex


# The unit tier draws fewer examples of the four property tests below; tests/integration/test_properties_thorough.py
# runs the same tests with the full counts (300, 150, 100, 100).
@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(tables(), predicates)
def test_filtered_read_equals_reference(table_and_opts, expr):
    data, opts = table_and_opts
    check_filtered(write_bytes(data, opts), expr)


@st.composite
def lookup_tables(draw):
    """Larger row groups of repeated strings and sparse ints: dictionaries and Bloom filters prune."""
    n = draw(st.integers(60, 240))
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    ints = (rng.integers(-100, 101, n) * 2).tolist()
    if draw(st.booleans()):
        ints.sort()
    strs = [STRINGS[j] for j in rng.integers(0, len(STRINGS), n)]
    nulls = rng.random(n) < draw(st.sampled_from([0.0, 0.1]))
    data = {"k": list(range(n)), "i": [None if z else v for v, z in zip(ints, nulls)],
            "f": [None] * n, "s": [None if z else v for v, z in zip(strs, nulls[::-1])], "d": [None] * n, "u": [1] * n}
    opts = {"row_group_size": draw(st.integers(20, 80)), "data_page_size": draw(st.sampled_from([64, 512])),
            "use_dictionary": draw(st.booleans()),
            "bloom_filter_options": {c: True for c in draw(st.sets(st.sampled_from(["i", "s"])))}}
    return data, opts


lookup_predicates = st.recursive(point_leaves, lambda inner: st.one_of(
    st.builds(And, inner, inner), st.builds(Or, inner, inner), st.builds(Not, inner)), max_leaves=3)


@settings(max_examples=50, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(lookup_tables(), lookup_predicates)
def test_point_lookups_pruned_yet_exact(table_and_opts, expr):
    check_filtered(write_bytes(*table_and_opts), expr)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(tables(), predicates)
def test_filtered_read_equals_pyarrow(table_and_opts, expr):
    assume(arrow_supports(expr))
    data, opts = table_and_opts
    raw = write_bytes(data, opts)
    try:
        want = pq.read_table(pa.BufferReader(raw), filters=to_arrow_expr(expr))
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError, pa.ArrowTypeError, OverflowError, TypeError):
        assume(False)  # pyarrow cannot express this comparison (e.g. uint32 < -1)
        return
    got = pqbloom.ParquetFile(raw).read(filters=expr)
    assert got.column("k").to_pylist() == want.column("k").to_pylist(), str(expr)


dnf_leaf = st.builds(
    lambda c, op, v: (c, op, v),
    st.sampled_from(["i", "s", "d"]),
    st.sampled_from(["=", "==", "!=", "<", "<=", ">", ">="]),
    st.none(),
).flatmap(lambda t: LITERALS[t[0]].map(lambda v: (t[0], t[1], v)))
dnf_in = st.sampled_from(["i", "s", "d"]).flatmap(
    lambda c: st.tuples(st.just(c), st.sampled_from(["in", "not in"]), st.lists(LITERALS[c], min_size=1, max_size=3)))
dnf_terms = st.lists(st.one_of(dnf_leaf, dnf_in), min_size=1, max_size=3)
dnf = st.one_of(dnf_terms, st.lists(dnf_terms, min_size=1, max_size=3))


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(tables(), dnf)
def test_dnf_filters_match_pyarrow(table_and_opts, filters):
    data, opts = table_and_opts
    raw = write_bytes(data, opts)
    try:
        want = pq.read_table(pa.BufferReader(raw), filters=filters)
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError, pa.ArrowTypeError, OverflowError, TypeError):
        assume(False)
        return
    got = pqbloom.ParquetFile(raw).read(filters=filters)
    assert got.column("k").to_pylist() == want.column("k").to_pylist(), filters
    full = pqbloom.ParquetFile(raw).read()
    assert [r["k"] for r in expected_rows(full, to_expression(filters))] == got.column("k").to_pylist()


# ---------------------------------------------------------------------------
# Pruning is real and reported
# ---------------------------------------------------------------------------
N_ROWS = 200_000


@pytest.fixture(scope="module")
def lookup_files(tmp_path_factory):
    """Unique even ids in random order (every row group spans nearly the whole range), Bloom on id."""
    d = tmp_path_factory.mktemp("lookup")
    rng = np.random.default_rng(5)
    ids = (rng.permutation(N_ROWS) * 2).astype(np.int64)
    s = np.array([f"s{v:08d}" for v in rng.integers(0, 10**8, N_ROWS)])
    x = rng.random(N_ROWS)
    ours = d / "pqbloom.parquet"
    pqbloom.write_table({"id": ids, "s": s, "x": x}, str(ours), row_group_size=20_000,
                        bloom_filter_options={"id": True}, data_page_size=64 * 1024)
    theirs = d / "pyarrow.parquet"
    pq.write_table(pa.table({"id": ids, "s": s, "x": x}), theirs, row_group_size=20_000,
                   bloom_filter_options={"id": True}, write_page_index=True, data_page_size=64 * 1024,
                   use_dictionary=False)
    return ids, {"pqbloom": ours, "pyarrow": theirs}


@pytest.mark.parametrize("writer", ["pqbloom", "pyarrow"])
def test_absent_id_pruned_by_bloom_in_every_row_group(lookup_files, writer):
    ids, paths = lookup_files
    path = paths[writer]
    absent = int(np.sort(ids)[N_ROWS // 2]) + 1  # odd: never written, inside every row group's min/max
    with pqbloom.ParquetFile(path) as pf:
        for rg in range(pf.num_row_groups):
            st_ = pf.column_chunk(rg, "id").statistics
            assert st_ is not None
    ex = Explain()
    t = pqbloom.read_table(path, filters=field("id") == absent, explain=ex)
    assert t.num_rows == 0
    assert ex.row_groups_total == 10
    assert ex.row_groups_pruned_bloom_filter == 10, str(ex)
    assert ex.row_groups_pruned_statistics == 0
    assert ex.rows_decoded == 0 and ex.pages_read == 0
    assert ex.bytes_read < 100 * 1024 < os.path.getsize(path) // 10, str(ex)
    assert "Bloom filter 10" in str(ex)


@pytest.mark.parametrize("writer", ["pqbloom", "pyarrow"])
def test_present_id_reads_one_row_group_and_few_pages(lookup_files, writer):
    ids, paths = lookup_files
    path = paths[writer]
    target = int(ids[123_456])
    ex = Explain()
    t = pqbloom.read_table(path, filters=[("id", "=", target)], explain=ex)
    assert t.to_pydict()["id"] == [target]
    with pqbloom.ParquetFile(path) as pf:
        full = pf.read()
    assert t.to_pylist() == [full.take(np.array([123_456])).to_pylist()[0]]
    assert ex.row_groups_read <= 2  # the right one, plus a Bloom false positive at worst
    assert ex.row_groups_pruned_bloom_filter >= 8
    assert ex.pages_skipped > 0  # s and x: only the pages holding the row
    assert ex.bytes_read < os.path.getsize(path) / 5


def test_range_predicate_prunes_by_statistics_and_pages(tmp_path):
    n = 100_000
    path = tmp_path / "sorted.parquet"
    ids = np.arange(n, dtype=np.int64)
    pqbloom.write_table({"id": ids, "v": ids * 3}, str(path), row_group_size=10_000, data_page_size=4096)
    ex = Explain()
    t = pqbloom.read_table(path, filters=(field("id") >= 25_000) & (field("id") < 25_100), explain=ex)
    assert t.column("id").to_pylist() == list(range(25_000, 25_100))
    assert t.column("v").to_pylist() == [3 * i for i in range(25_000, 25_100)]
    assert ex.row_groups_pruned_statistics == 9, str(ex)
    assert ex.row_groups_read == 1
    assert ex.pages_skipped > ex.pages_read > 0
    assert ex.rows_decoded < 2_000  # only the pages the page index could not rule out


def test_page_index_skipping_on_pyarrow_file(tmp_path):
    n = 50_000
    path = tmp_path / "pa_sorted.parquet"
    tbl = pa.table({"id": np.arange(n, dtype=np.int64), "name": [f"n{i}" for i in range(n)]})
    pq.write_table(tbl, path, row_group_size=n, write_page_index=True, data_page_size=2048)
    ex = Explain()
    t = pqbloom.read_table(path, filters=(field("id") > 30_000) & (field("id") <= 30_010), explain=ex)
    assert t.column("name").to_pylist() == [f"n{i}" for i in range(30_001, 30_011)]
    assert ex.row_groups_read == 1 and ex.pages_skipped > 10 * ex.pages_read, str(ex)
    # a predicate the page index rules out entirely
    ex2 = Explain()
    assert pqbloom.read_table(path, filters=(field("id") < 100) & (field("id") > 40_000), explain=ex2).num_rows == 0
    assert ex2.row_groups_pruned_statistics == 0 and ex2.row_groups_pruned_page_index == 1, str(ex2)


def test_dictionary_pruning(tmp_path):
    path = tmp_path / "dict.parquet"
    cities = ["amsterdam", "berlin", "cairo", "dakar", "zurich"]
    vals = [cities[i % 5] if (i // 1000) % 2 == 0 else cities[(i % 2) * 4] for i in range(10_000)]
    pqbloom.write_table({"city": vals, "k": np.arange(10_000)}, str(path), row_group_size=1000)
    ex = Explain()
    t = pqbloom.read_table(path, filters=field("city") == "berlin", explain=ex)  # inside min/max everywhere
    assert t.num_rows == vals.count("berlin")
    assert ex.row_groups_pruned_dictionary == 5 and ex.row_groups_pruned_statistics == 0, str(ex)
    assert ex.dictionaries_read == 10


def test_not_equal_never_matches_nulls_and_negation(tmp_path):
    path = tmp_path / "nulls.parquet"
    pqbloom.write_table({"x": [1, None, 5, None, 7], "y": [0.0, -0.0, float("nan"), None, 2.0]}, str(path),
                        row_group_size=2, bloom_filter_options={"x": True, "y": True})
    read = lambda f: pqbloom.read_table(path, filters=f).to_pydict()  # noqa: E731
    assert read(field("x") != 5)["x"] == [1, 7]
    assert read(~(field("x") == 5))["x"] == [1, 7]
    assert read(field("x").is_null())["x"] == [None, None]
    assert read(~field("x").isin([5]))["x"] == [1, None, None, 7]  # pyarrow's is_in: never null
    assert read([("x", "not in", [5])])["x"] == [1, None, None, 7]
    assert read(field("x").isin([5, None]))["x"] == [None, 5, None]
    y = read(field("y") == 0.0)["y"]
    assert len(y) == 2 and {math.copysign(1, v) for v in y} == {1.0, -1.0}
    assert len(read(field("y") == -0.0)["y"]) == 2
    assert len(read(field("y").isin([-0.0]))["y"]) == 2
    assert math.isnan(read(field("y").isin([float("nan")]))["y"][0])
    assert read(field("y") == float("nan"))["y"] == []
    assert len(read(field("y") != 1.0)["y"]) == 4  # NaN != 1 is true; null is not


def test_typed_literals(tmp_path):
    path = tmp_path / "types.parquet"
    utc = dt.timezone.utc
    u1, u2 = uuid.UUID(int=1), uuid.UUID(int=2**127)
    data = {
        "dec9": [decimal.Decimal("1.10"), decimal.Decimal("-2.05"), None, decimal.Decimal("3.00")],
        "dec30": [decimal.Decimal("12345678901234567890.12"), decimal.Decimal("-1.00"), decimal.Decimal("0.01"),
                  None],
        "decb": [decimal.Decimal("1.5"), decimal.Decimal("-300.25"), None, decimal.Decimal("70000.00")],
        "ts": [dt.datetime(2024, 1, 1, tzinfo=utc), dt.datetime(2024, 1, 1, 0, 0, 0, 1000, tzinfo=utc), None,
               dt.datetime(1960, 5, 5, tzinfo=utc)],
        "u64": [2**64 - 1, 0, 2**63, None],
        "uu": [u1, u2, None, u1],
        "b": [True, False, None, True],
        "t": [dt.time(1, 2, 3), dt.time(0, 0), None, dt.time(23, 59, 59, 999000)],
        "fl": [1.5, None, -0.0, 0.1],
        "h": [1.5, None, -0.0, 65504.0],
    }
    schema = pqbloom.Schema.from_types({"dec9": "decimal(9, 2)", "dec30": "decimal(30, 2)",
                                        "decb": "decimal(12, 2) as binary", "ts": "timestamp[ms, UTC]",
                                        "u64": "uint64", "uu": "uuid", "b": "bool", "t": "time[ms]",
                                        "fl": "float", "h": "float16"})
    pqbloom.write_table(pqbloom.Table.from_pydict(data, schema), str(path), row_group_size=2,
                        bloom_filter_options={c: True for c in data if c != "b"})
    full = pqbloom.read_table(path)
    cases = [
        field("dec9") == decimal.Decimal("1.1"), field("dec9") == 1.1, field("dec9") > -2.051,
        field("dec9") < "1.105", field("dec9").isin([3, decimal.Decimal("-2.05")]), field("dec9") == 1.105,
        field("dec30") > 10**19, field("dec30") == decimal.Decimal("-1"), field("dec30").isin([0.01]),
        field("decb") <= -300.25, field("decb") == 70000, field("decb").isin([1.5, 2]),
        field("ts") == dt.datetime(2024, 1, 1, 0, 0, 0, 1000, tzinfo=utc), field("ts") > dt.datetime(2024, 1, 1),
        field("ts") < dt.date(2000, 1, 1), field("ts") == "2024-01-01T00:00:00.001+00:00",
        field("u64") > 2**63 - 1, field("u64") == 2**64 - 1, field("u64") < 0, field("u64").isin([0, -1]),
        field("uu") == u2, field("uu") > u1, field("uu").isin([u1]),
        field("b") == True, field("b") != True, field("b") < 1,  # noqa: E712
        field("t") > dt.time(1, 0), field("t") == "01:02:03",
        field("fl") == 0.1, field("fl") == 0.0, field("fl") < 0.1, field("fl").isin([0.1, 1.5]),
        field("h") == 0.0, field("h") >= 65504, field("h") == 0.1,
    ]
    rows = full.to_pylist()
    for e in cases:
        got = pqbloom.read_table(path, filters=e).to_pylist()
        want = [r for r in rows if _typed_ref(e, r)]
        assert rows_equal(got, want), str(e)


def _typed_ref(e: Compare | IsIn, row) -> bool:
    v = row[e.column]
    if v is None:
        return False

    def norm(x):
        if e.column == "ts" and isinstance(x, str):
            x = dt.datetime.fromisoformat(x)
        if e.column == "ts" and type(x) is dt.date:
            x = dt.datetime(x.year, x.month, x.day)
        if e.column == "ts" and x.tzinfo is None:  # naive literals are taken as UTC
            return x.replace(tzinfo=dt.timezone.utc)
        if e.column == "t" and isinstance(x, str):
            return dt.time.fromisoformat(x)
        if e.column.startswith("dec"):
            return decimal.Decimal(repr(x)) if isinstance(x, float) else decimal.Decimal(x)
        return x

    if e.column == "fl":
        v = float(np.float32(v))
    if isinstance(e, IsIn):
        return any(v == norm(x) for x in e.values)
    x = norm(e.value)
    if e.column == "uu":
        v, x = v.bytes, x.bytes
    return _ref_cmp(v, e.op, x) is True


# ---------------------------------------------------------------------------
# Fixtures with hostile metadata
# ---------------------------------------------------------------------------
def _compare_to_reference(path, exprs):
    full = pqbloom.read_table(path)
    for e in exprs:
        got = pqbloom.read_table(path, filters=e).to_pylist()
        assert rows_equal(got, expected_rows(full, e)), str(e)


def test_nan_in_stats_fixture(fixtures_dir):
    path = fixtures_dir / "data" / "nan_in_stats.parquet"
    exprs = [field("x") > 1, field("x") >= 1, field("x") == 1.0, field("x") != 1.0, ~(field("x") <= 1),
             field("x").isin([float("nan")]), field("x") < 10, ~(field("x") < 10), field("x") == float("nan")]
    _compare_to_reference(path, exprs)
    full = pqbloom.read_table(path).to_pylist()
    assert len(pqbloom.read_table(path, filters=~(field("x") <= 1)).to_pylist()) == \
        sum(1 for r in full if not (r["x"] <= 1))


def test_bogus_column_index_does_not_prune(fixtures_dir):
    path = fixtures_dir / "data" / "datapage_v1-uncompressed-checksum.parquet"
    full = pqbloom.read_table(path)
    a = full.column("a").to_pylist()
    probe = a[len(a) // 2]
    exprs = [field("a") == probe, field("a") > probe, field("b").is_null(), field("b").is_valid(),
             (field("a") < probe) & (field("b") >= 0)]
    _compare_to_reference(path, exprs)
    ex = Explain()
    assert pqbloom.read_table(path, filters=field("a") == probe, explain=ex).num_rows >= 1
    assert ex.row_groups_pruned_page_index == 0


def test_int32_with_null_pages_fixture(fixtures_dir):
    path = fixtures_dir / "data" / "int32_with_null_pages.parquet"
    vals = [v for v in pqbloom.read_table(path).column("int32_field").to_pylist() if v is not None]
    mid = sorted(vals)[len(vals) // 2]
    exprs = [field("int32_field").is_null(), field("int32_field") > mid, field("int32_field") == vals[3],
             ~(field("int32_field") > 0), field("int32_field").isin([vals[0], None])]
    _compare_to_reference(path, exprs)
    for e in exprs:
        want = pq.read_table(path, filters=to_arrow_expr(e)).column(0).to_pylist()
        assert pqbloom.read_table(path, filters=e).column(0).to_pylist() == want, str(e)


TINY_PAGE_FILTERS = [
    [("id", ">=", 3000), ("id", "<", 3100)],
    [("int_col", "==", 3)],
    [("string_col", "in", ["1", "7"]), ("id", "<", 500)],
    [[("bool_col", "==", True), ("id", "<", 40)], [("bigint_col", ">", 80), ("month", "==", 3)]],
    [("float_col", "<", 2.0), ("date_string_col", ">", "12/01/10")],
    [("id", "not in", list(range(0, 7300, 3)))],
    [("double_col", "!=", 10.1), ("year", "==", 2010)],
]


@pytest.mark.parametrize("filters", TINY_PAGE_FILTERS)
def test_alltypes_tiny_pages_matches_pyarrow(fixtures_dir, filters):
    path = fixtures_dir / "data" / "alltypes_tiny_pages.parquet"
    ex = Explain()
    got = pqbloom.read_table(path, filters=filters, explain=ex)
    want = pq.read_table(path, filters=filters)
    assert got.column("id").to_pylist() == want.column("id").to_pylist()
    for name in ("string_col", "float_col", "timestamp_col", "bool_col"):
        assert got.column(name).to_pylist() == want.column(name).to_pylist(), name
    assert ex.pages_total > 100


def test_alltypes_tiny_pages_page_skipping(fixtures_dir):
    path = fixtures_dir / "data" / "alltypes_tiny_pages.parquet"
    ex = Explain()
    t = pqbloom.read_table(path, filters=(field("id") >= 3000) & (field("id") < 3020), explain=ex)
    assert t.column("id").to_pylist() == list(range(3000, 3020))
    assert ex.pages_skipped > 10 * ex.pages_read, str(ex)


# ---------------------------------------------------------------------------
# Datasets
# ---------------------------------------------------------------------------
def _sort_by(tbl, key):
    rows = tbl.to_pylist()
    return sorted(rows, key=lambda r: r[key])


def test_hive_dataset_written_by_pyarrow(tmp_path):
    n = 3000
    tbl = pa.table({"id": np.arange(n), "year": np.repeat([2020, 2021, 2022], n // 3),
                    "cat": np.tile(["a", "b", "c d/e"], n // 3), "v": np.arange(n) * 0.5})
    root = tmp_path / "ds"
    pq.write_to_dataset(tbl, root, partition_cols=["year", "cat"])
    (root / "_SUCCESS").write_bytes(b"")
    filters = [("year", ">=", 2021), ("cat", "==", "c d/e"), ("id", "<", 2500)]
    ex = Explain()
    got = pqbloom.read_table(str(root), filters=filters, explain=ex)
    want = pq.read_table(root, filters=filters)
    assert got.num_rows == want.num_rows > 0
    gs, ws = _sort_by(got, "id"), _sort_by(want, "id")
    assert [(r["id"], r["year"], r["cat"], r["v"]) for r in gs] == \
        [(r["id"], r["year"], r["cat"], r["v"]) for r in ws]
    assert ex.files_total == 9 and ex.files_pruned_partition == 7, str(ex)
    assert got.schema.field("year").type_name == "int64" and got.schema.field("cat").type_name == "string"
    # the partition filter alone; an all-pruned read still has the schema
    assert pqbloom.read_table(str(root), filters=field("year") == 1999).column_names == ["id", "v", "year", "cat"]
    assert pqbloom.read_table(str(root), columns=["cat", "id"], filters=field("cat") == "a").num_rows == n // 3


def test_spark_layout_by_hand(tmp_path):
    root = tmp_path / "events"
    rng = np.random.default_rng(1)
    rows = []
    for part, dtv in enumerate(["2024-01-01", "2024-01-02", None]):
        d = root / f"dt={dtv if dtv is not None else '__HIVE_DEFAULT_PARTITION__'}"
        d.mkdir(parents=True)
        for j in range(2):
            ids = np.arange(1000) + 1000 * (2 * part + j)
            pqbloom.write_table({"id": ids, "x": rng.random(1000)},
                                str(d / f"part-0000{j}-0a1b2c3d-c000.snappy.parquet"),
                                row_group_size=250, bloom_filter_options={"id": True})
            rows.extend((int(i), dtv) for i in ids)
        (d / ".part-00000-0a1b2c3d-c000.snappy.parquet.crc").write_bytes(b"junk")
    (root / "_SUCCESS").write_bytes(b"")
    (root / "_temporary").mkdir()
    (root / "_temporary" / "part-9.parquet").write_bytes(b"not parquet")
    ex = Explain()
    t = pqbloom.read_table(str(root), filters=(field("dt") == "2024-01-02") & (field("id") == 2500), explain=ex)
    assert t.to_pydict()["id"] == [2500] and t.to_pydict()["dt"] == ["2024-01-02"]
    assert ex.files_total == 6 and ex.files_pruned_partition == 4
    assert ex.row_groups_total == 8 and ex.row_groups_pruned_statistics + ex.row_groups_pruned_bloom_filter == 7
    nulls = pqbloom.read_table(str(root), filters=field("dt").is_null())
    assert sorted(nulls.column("id").to_pylist()) == [i for i, d in rows if d is None]
    everything = pqbloom.read_table(str(root))
    assert sorted(zip(everything.column("id").to_pylist(), everything.column("dt").to_pylist()),
                  key=lambda r: r[0]) == rows


# ---------------------------------------------------------------------------
# API, grammar, IO, CLI
# ---------------------------------------------------------------------------
def test_expression_api_and_grammar():
    e = (field("a") == 1) & ~field("b").isin(["x", "y"]) | field("c").is_null()
    assert e.columns() == {"a", "b", "c"}
    with pytest.raises(TypeError):
        bool(field("a") == 1)
    with pytest.raises(TypeError):
        _ = field("a") == field("b")
    p = parse_filter("a = 1 and not b in ('x', 'it''s') or c is not null and 5 < d")
    assert str(p) == "((a == 1 and not b in ('x', \"it's\")) or (c is not null and d > 5))"
    assert str(parse_filter("x not in (1, 2.5, null) or `weird name` <> 'q'")) == \
        "(not x in (1, 2.5, None) or weird name != 'q')"
    with pytest.raises(ValueError):
        parse_filter("a == ")
    with pytest.raises(ValueError):
        to_expression([("a", "~", 1)])
    assert str(to_expression([[("a", "=", 1)], [("b", "in", [2])]])) == "(a == 1 or b in (2))"


def test_coalesce_ranges_and_one_request_per_row_group(tmp_path):
    assert coalesce_ranges([(10, 5), (0, 10), (20, 5), (100, 1)], max_gap=5) == [(0, 25), (100, 1)]
    assert coalesce_ranges([(0, 10), (5, 2)]) == [(0, 10)]
    path = tmp_path / "wide.parquet"
    pqbloom.write_table({f"c{i}": np.arange(1000) * i for i in range(6)}, str(path), row_group_size=500,
                        write_page_index=False)
    ex = Explain()
    t = pqbloom.read_table(path, explain=ex)
    assert t.num_rows == 1000
    assert ex.requests == 1 + 2  # footer, then one coalesced read per row group


def test_unknown_filter_column_and_iter_batches_explain(tmp_path):
    path = tmp_path / "t.parquet"
    pqbloom.write_table({"a": np.arange(100)}, str(path), row_group_size=10)
    with pqbloom.ParquetFile(path) as pf:
        with pytest.raises(KeyError):
            pf.read(filters=field("nope") == 1)
        ex = Explain()
        got = [b.column("a").to_pylist() for b in pf.iter_batches(batch_size=3, filters="a >= 95", explain=ex)]
        assert sum(got, []) == [95, 96, 97, 98, 99]
        assert ex.row_groups_pruned_statistics == 9 and ex.rows_returned == 5


def test_cli_query(tmp_path, capsys):
    path = tmp_path / "q.parquet"
    pqbloom.write_table({"id": np.arange(0, 2000, 2), "name": [f"n{i}" for i in range(1000)]}, str(path),
                        row_group_size=100, bloom_filter_options={"id": True})
    assert cli.main(["query", str(path), "--filter", "id == 5 or id in (10, 12)", "--explain"]) == 0
    out = capsys.readouterr().out
    lines = out.splitlines()
    rows = [json.loads(x) for x in lines if x.startswith("{")]
    assert rows == [{"id": 10, "name": "n5"}, {"id": 12, "name": "n6"}]
    assert "row groups: 10 total, 1 read" in out and "Bloom filter" in out
    assert cli.main(["query", str(path), "--filter", "id >", "--explain"]) == 1


# ---------------------------------------------------------------------------
# Public planning API: plan_file / FilePlan
# ---------------------------------------------------------------------------
def _pyarrow_bloom_file(path, n=8000, rg=1000):
    """ids 0, 2, 4, ... in random order (min/max of every row group span nearly the range, so only
    Bloom filters prune), a dictionary-encoded string column, written by pyarrow."""
    rng = np.random.default_rng(11)
    ids = rng.permutation(n) * 2
    letters = np.array(["a", "c", "e", "g"])[np.arange(n) % 4]  # every row group holds a..g, never b
    pq.write_table(pa.table({"id": ids, "s": letters}), path, row_group_size=rg,
                   bloom_filter_options={"id": {"ndv": rg, "fpp": 0.01}}, use_dictionary=["s"])
    return ids


def test_plan_file_row_groups_and_read_row_group(tmp_path):
    from pqbloom.scan import FilePlan, plan_file

    path = str(tmp_path / "bloom.parquet")
    ids = _pyarrow_bloom_file(path)
    rg_of = {int(v): i // 1000 for i, v in enumerate(ids)}
    ref = pq.ParquetFile(path)
    with pqbloom.ParquetFile(path) as pf:
        everything = plan_file(pf)
        assert isinstance(everything, FilePlan) and everything.expression is None and everything.file is pf
        assert everything.row_groups() == list(range(8))
        for v in (ids[5], ids[4321], ids[7999]):  # present: the row group holding it always survives
            ex = Explain()
            plan = plan_file(pf, field("id") == int(v))
            kept = plan.row_groups(explain=ex)
            assert rg_of[int(v)] in kept
            assert ex.row_groups_total == 8 and ex.row_groups_pruned_bloom_filter == 8 - len(kept)
            got = plan.read_row_group(rg_of[int(v)], ["s", "id"])
            want = ref.read_row_group(rg_of[int(v)], columns=["s", "id"]).filter(pc.field("id") == int(v))
            assert got is not None and got.to_pylist() == want.to_pylist()
            for other in kept:
                if other != rg_of[int(v)]:  # a Bloom false positive reads nothing
                    assert plan.read_row_group(other) is None
        # absent (odd) keys inside every row group's min/max: only the Bloom filter prunes them
        survivors = 0
        for v in range(1001, 1401, 2):
            ex = Explain()
            kept = plan_file(pf, [("id", "==", v)]).row_groups(explain=ex)
            assert ex.row_groups_pruned_statistics == 0
            survivors += len(kept)
        assert survivors <= 0.05 * 200 * 8  # fpp 0.01 per row group, with a wide margin
        # statistics prune a key above the maximum
        ex = Explain()
        assert plan_file(pf, field("id") > 2 * 8000).row_groups(explain=ex) == []
        assert ex.row_groups_pruned_statistics == 8
        # dictionaries are opt-in at planning: "b" is inside min/max ("a".."g") but in no dictionary
        ex = Explain()
        assert plan_file(pf, field("s") == "b").row_groups(explain=ex) == list(range(8))
        assert plan_file(pf, field("s") == "b").row_groups(dictionaries=True, explain=ex) == []
        assert ex.row_groups_pruned_dictionary == 8
        with pytest.raises(IndexError):
            everything.read_row_group(8)
        with pytest.raises(KeyError):
            plan_file(pf, field("nope") == 1)
        with pytest.raises(TypeError):
            plan_file(pf, field("id") == "x")


# ---------------------------------------------------------------------------
# Datasets: every file must agree on the columns read
# ---------------------------------------------------------------------------
def test_dataset_schema_mismatch_names_both_files(tmp_path):
    from pqbloom.errors import SchemaError

    root = tmp_path / "ds"
    root.mkdir()
    pq.write_table(pa.table({"id": pa.array([1, 2], pa.int64()), "s": ["a", "b"]}), root / "a.parquet")
    # same columns in another order: fine, rows come out in the first file's column order
    pq.write_table(pa.table({"s": ["c"], "id": pa.array([3], pa.int64())}), root / "b.parquet")
    t = pqbloom.read_table(str(root))
    assert t.column_names == ["id", "s"] and t.to_pydict() == {"id": [1, 2, 3], "s": ["a", "b", "c"]}
    # a type mismatch
    pq.write_table(pa.table({"id": pa.array([4], pa.int32()), "s": ["d"]}), root / "c.parquet")
    with pytest.raises(SchemaError, match=r"column 'id' is int64 in .*a\.parquet but int32 in .*c\.parquet"):
        pqbloom.read_table(str(root))
    assert pqbloom.read_table(str(root), columns=["s"]).to_pydict() == {"s": ["a", "b", "c", "d"]}
    (root / "c.parquet").unlink()
    # a column only some files have: an error (not nulls), unless only common columns are read
    pq.write_table(pa.table({"id": pa.array([5], pa.int64()), "s": ["e"], "x": [1.5]}), root / "d.parquet")
    with pytest.raises(SchemaError, match=r"column 'x' is in .*d\.parquet but not in .*a\.parquet"):
        pqbloom.read_table(str(root))
    assert pqbloom.read_table(str(root), columns=["id"], filters=field("id") >= 3).to_pydict() == {"id": [3, 5]}
    with pytest.raises(SchemaError, match=r"column 'x' is in .*d\.parquet but not in .*a\.parquet"):
        pqbloom.read_table(str(root), columns=["x", "id"])
    with pytest.raises(KeyError, match="no column 'nope'"):
        pqbloom.read_table(str(root), columns=["nope"])


def test_literal_of_the_wrong_type_is_a_typed_error(tmp_path):
    # the caller's mistake, told apart from a bug by its type (the CLI reports it as a user error)
    from pqbloom.errors import LiteralTypeError, ParquetError

    p = tmp_path / "t.parquet"
    pqbloom.write_table({"id": np.arange(10, dtype=np.int64)}, p, bloom_filter_options={"id": True})
    with pytest.raises(LiteralTypeError, match="int64 column with the string 'abc'") as info:
        pqbloom.read_table(p, filters=[("id", "=", "abc")])
    assert isinstance(info.value, ParquetError) and isinstance(info.value, TypeError)
    with pqbloom.ParquetFile(p) as pf, pytest.raises(LiteralTypeError):
        pf.bloom_filter_might_contain(0, "id", "abc")
