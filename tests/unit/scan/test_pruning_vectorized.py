"""Statistics pruning of all row groups at once (scan.prune.gather_stats / leaf_may_arrays) gives, for
every row group, exactly the verdicts of the per-row-group reference (meta_stats / leaf_may).

The reference path is the one the rest of the suite checks against peers; here hypothesis draws
random footer statistics (legacy and new fields, wrong lengths, NaN and zero bounds, truncated
binary bounds, bogus counts, missing metadata) and random filters over them. A file test checks
that the statistics skim of a lazily decoded footer gathers what the full decode does.
"""

from __future__ import annotations

import struct

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import pqbloom
from pqbloom.file import FooterStats
from pqbloom.format import RowGroupList, T, column_order_name, schema_elements
from pqbloom.scan import Explain, field
from pqbloom.scan.bind import BoundColumn, BoundFilter, bind, bound_leaves
from pqbloom.scan.prune import (
    UnitStats,
    combine_verdicts,
    gather_stats,
    leaf_may,
    leaf_may_arrays,
    meta_stats,
    statistics_verdicts,
)
from pqbloom.scan.prune_row_group import RowGroupPruner
from pqbloom.schema import leaves_from_elements

PT = T.Type
CT = T.ConvertedType
REQ, OPT, REP = T.FieldRepetitionType.REQUIRED, T.FieldRepetitionType.OPTIONAL, T.FieldRepetitionType.REPEATED


def _int_lt(bits: int, signed: bool) -> T.LogicalType:
    return T.LogicalType(INTEGER=T.IntType(bitWidth=bits, isSigned=signed))


def _dec_lt(precision: int, scale: int) -> T.LogicalType:
    return T.LogicalType(DECIMAL=T.DecimalType(scale=scale, precision=precision))


# (name, leaf SchemaElement kwargs, how to encode a stats value, literal strategy)
_I32 = [-(1 << 31), -5, -1, 0, 1, 2, 5, 7, (1 << 31) - 1]
_I64 = [-(1 << 63), -5, -1, 0, 1, 5, 7, (1 << 62), (1 << 63) - 1]
_FLOATS = [float("-inf"), -2.5, -1.0, -0.0, 0.0, 1e-8, 1.0, 2.5, float("inf"), float("nan")]
_BYTES = [b"", b"\x00", b"a", b"a\x00", b"ab", b"abc", b"b", b"\x7f", b"\x80", b"\xff", b"\xff\xff"]

TYPES: dict[str, tuple[dict, object, list]] = {
    "int32": (dict(type=PT.INT32), lambda v: struct.pack("<i", v), _I32 + [2.5, -7.5, 1 << 40]),
    "uint32": (dict(type=PT.INT32, logicalType=_int_lt(32, False), converted_type=CT.UINT_32),
               lambda v: struct.pack("<I", v % (1 << 32)), [0, 1, 5, (1 << 31), (1 << 32) - 1, -1, 1 << 33]),
    "int64": (dict(type=PT.INT64), lambda v: struct.pack("<q", v), _I64 + [0.5, 1 << 64]),
    # narrower than stored: bounds are usable only inside the annotation's range (issue #29)
    "uint8": (dict(type=PT.INT32, logicalType=_int_lt(8, False), converted_type=CT.UINT_8),
              lambda v: struct.pack("<i", v), [0, 1, 5, 127, 128, 255, 256, -1]),
    "int16": (dict(type=PT.INT32, logicalType=_int_lt(16, True), converted_type=CT.INT_16),
              lambda v: struct.pack("<i", v), [-(1 << 15), -1, 0, 5, (1 << 15) - 1, 1 << 15, 65535]),
    "uint64": (dict(type=PT.INT64, logicalType=_int_lt(64, False), converted_type=CT.UINT_64),
               lambda v: struct.pack("<Q", v % (1 << 64)), [0, 1, 5, (1 << 63), (1 << 64) - 1, -3, 1 << 65]),
    "bool": (dict(type=PT.BOOLEAN), lambda v: bytes([int(v) & 1]), [True, False, 0, 1, 2]),
    "float": (dict(type=PT.FLOAT), lambda v: struct.pack("<f", v), _FLOATS + [0.1, 3]),
    "double": (dict(type=PT.DOUBLE), lambda v: struct.pack("<d", v), _FLOATS + [0.1, 3]),
    "float16": (dict(type=PT.FIXED_LEN_BYTE_ARRAY, type_length=2, logicalType=T.LogicalType(FLOAT16=T.Float16Type())),
                lambda v: struct.pack("<e", v), _FLOATS + [0.1]),
    "string": (dict(type=PT.BYTE_ARRAY, logicalType=T.LogicalType(STRING=T.StringType()), converted_type=CT.UTF8),
               lambda v: v, [b.decode("latin-1") for b in _BYTES[:8]] + [b"\xff", b"\x80"]),
    "binary": (dict(type=PT.BYTE_ARRAY), lambda v: v, _BYTES),
    "flba3": (dict(type=PT.FIXED_LEN_BYTE_ARRAY, type_length=3), lambda v: v, [b"abc", b"\x00\x00\x00", b"\xff\xff\xff",
                                                                           b"abd", b"ab"]),
    "dec_bin": (dict(type=PT.BYTE_ARRAY, logicalType=_dec_lt(30, 2), converted_type=CT.DECIMAL, precision=30, scale=2),
                lambda v: v.to_bytes(16, "big", signed=True), [0, 1, -1, 0.5, "12.34", 1 << 70, -(1 << 70), "0.001"]),
    "dec_flba": (dict(type=PT.FIXED_LEN_BYTE_ARRAY, type_length=5, logicalType=_dec_lt(10, 0),
                      converted_type=CT.DECIMAL, precision=10, scale=0),
                 lambda v: (v % (1 << 40)).to_bytes(5, "big"), [0, 1, -1, 7, (1 << 39) - 1, -(1 << 39), 1 << 40]),
    "int96": (dict(type=PT.INT96), lambda v: v.to_bytes(12, "little", signed=True), [0, 5]),
    "interval": (dict(type=PT.FIXED_LEN_BYTE_ARRAY, type_length=12, converted_type=CT.INTERVAL), lambda v: v,
                 [b"\x00" * 12]),
}
_RAW_POOL = {  # stored bounds: values of the type plus deliberately wrong-length junk
    "int32": _I32, "uint32": [0, 1, 5, 1 << 31, (1 << 32) - 1], "int64": _I64,
    "uint8": [0, 5, 127, 128, 255, 256, -1, -128], "int16": [-(1 << 15), -1, 0, 5, (1 << 15) - 1, 1 << 15, 65535, -70000],
    "uint64": [0, 1, 5, 1 << 63, (1 << 64) - 1], "bool": [0, 1], "float": _FLOATS, "double": _FLOATS,
    "float16": _FLOATS, "string": _BYTES, "binary": _BYTES, "flba3": [b"abc", b"abd", b"\x00\x00\x00", b"\xff\xff\xff"],
    "dec_bin": [0, 1, -1, 1234, -(1 << 70), 1 << 70], "dec_flba": [0, 1, -1, 7, (1 << 39) - 1, -(1 << 39)],
    "int96": [0, 5], "interval": [b"\x00" * 12],
}
ORDERS = [None, T.ColumnOrder(TYPE_ORDER=T.TypeDefinedOrder()), T.ColumnOrder(),  # the last: UNKNOWN
          T.ColumnOrder(IEEE_754_TOTAL_ORDER=T.IEEE754TotalOrder())]
WRITERS = [None, "parquet-mr version 1.8.2", "parquet-mr version 1.7.0", "parquet-mr version 1.12.3",
           "parquet-cpp-arrow version 15.0.0", "parquet-cpp version 1.2.0", "some writer"]


def _bcol(kind: str, repeated: bool, order) -> BoundColumn:
    leaf = T.SchemaElement(name="element" if repeated else "c", repetition_type=OPT, **TYPES[kind][0])
    if repeated:
        els = [T.SchemaElement(name="root", num_children=1),
               T.SchemaElement(name="l", repetition_type=OPT, num_children=1, converted_type=CT.LIST),
               T.SchemaElement(name="list", repetition_type=REP, num_children=1), leaf]
    else:
        els = [T.SchemaElement(name="root", num_children=1), leaf]
    desc = leaves_from_elements(schema_elements(els))[0][0]
    return BoundColumn(desc, column_order_name(order))


@st.composite
def _raw(draw, kind: str):
    if draw(st.integers(0, 9)) == 0:
        return draw(st.one_of(st.none(), st.binary(max_size=17)))  # absent, or any length (truncated...)
    return TYPES[kind][1](draw(st.sampled_from(_RAW_POOL[kind])))


@st.composite
def _count(draw, rows: int):
    return draw(st.one_of(st.none(), st.just(-1), st.integers(0, rows + 2), st.just((1 << 63) - 1)))


@st.composite
def _chunk(draw, kind: str, bc: BoundColumn):
    rows = draw(st.integers(0, 12))
    if draw(st.integers(0, 12)) == 0:
        return rows, None  # no usable column metadata
    n_entries = rows if not bc.repeated else rows + draw(st.integers(0, 6))
    num_values = draw(st.sampled_from([n_entries, n_entries, n_entries, None, n_entries + 1, max(n_entries - 1, 0)]))
    stats = None
    if draw(st.integers(0, 8)):
        new = draw(st.booleans())
        lo, hi = draw(_raw(kind)), draw(_raw(kind))
        if draw(st.integers(0, 4)) == 0:
            hi = lo  # min == max matters for trusting legacy stats
        stats = T.Statistics(null_count=draw(_count(n_entries)), nan_count=draw(_count(n_entries)),
                             min_value=lo if new else None, max_value=hi if new else None,
                             min=None if new and draw(st.booleans()) else lo, max=None if new else hi,
                             is_min_value_exact=draw(st.sampled_from([None, True, False])),
                             is_max_value_exact=draw(st.sampled_from([None, True, False])))
    size = None
    if bc.repeated and draw(st.booleans()):
        hist = draw(st.lists(st.integers(0, 5), min_size=bc.max_def + draw(st.sampled_from([0, 1, 1, 1, 2])),
                             max_size=bc.max_def + 2))
        size = T.SizeStatistics(definition_level_histogram=hist)
    return rows, T.ColumnMetaData(num_values=num_values, statistics=stats, size_statistics=size)


@st.composite
def _expr(draw, kind: str, depth: int = 0):
    lits = TYPES[kind][2]
    c = field("c")
    choice = draw(st.integers(0, 9 if depth < 2 else 5))
    if choice <= 3:
        v = draw(st.sampled_from(lits + [None] if choice == 0 else lits))
        op = draw(st.sampled_from(["==", "!=", "<", "<=", ">", ">="]))
        return {"==": c.__eq__, "!=": c.__ne__, "<": c.__lt__, "<=": c.__le__, ">": c.__gt__, ">=": c.__ge__}[op](v)
    if choice == 4:
        return c.isin(draw(st.lists(st.sampled_from(lits + [None]), max_size=25)))
    if choice == 5:
        return c.is_null() if draw(st.booleans()) else c.is_valid()
    if choice == 6:
        return ~draw(_expr(kind, depth + 1))
    a, b = draw(_expr(kind, depth + 1)), draw(_expr(kind, depth + 1))
    return (a & b) if choice in (7, 8) else (a | b)


def _cases():
    return st.tuples(st.sampled_from(sorted(TYPES)), st.booleans(), st.sampled_from(ORDERS),
                     st.sampled_from(WRITERS))


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(case=_cases(), data=st.data())
def test_vectorized_statistics_verdicts_match_the_scalar_reference(case, data):
    kind, repeated, order, writer = case
    bc = _bcol(kind, repeated, order)
    chunks = data.draw(st.lists(_chunk(kind, bc), min_size=1, max_size=12))
    try:
        node = bind(data.draw(_expr(kind)), {"c": bc})
    except (TypeError, ValueError):
        return  # a literal this column cannot compare with: binding fails before any pruning
    rows = np.array([r for r, _ in chunks], np.int64)
    metas = [m for _, m in chunks]
    metas = [None if m is None else FooterStats.of(m) for m in metas]  # what the file layer hands the scan
    scalar = [UnitStats(r) if m is None else meta_stats(bc, r, m, writer) for r, m in zip(rows.tolist(), metas)]
    arrays = gather_stats(bc, rows, metas, writer)
    for leaf in bound_leaves(node):
        t_arr, f_arr = leaf_may_arrays(leaf, arrays)
        expect = [leaf_may(leaf, s) for s in scalar]
        assert [(bool(t), bool(f)) for t, f in zip(t_arr, f_arr)] == expect, (kind, leaf, scalar)
    t_vec, _ = combine_verdicts(node, lambda leaf, nt, nf: leaf_may_arrays(leaf, arrays))
    t_vec = np.broadcast_to(np.asarray(t_vec, bool), rows.shape)
    for i, s in enumerate(scalar):
        t_ref, _ = combine_verdicts(node, lambda leaf, nt, nf, s=s: leaf_may(leaf, s))
        assert bool(t_vec[i]) == bool(t_ref), (kind, i, s)


# -- a real footer: the statistics skim gathers what full row groups say ------------------------------

@pytest.fixture(scope="module")
def many_typed(tmp_path_factory):
    """A pyarrow-written file of 90 row groups (enough for a lazily decoded footer) of many types."""
    rng = np.random.default_rng(3)
    n = 90 * 8
    ids = np.arange(n)
    f = rng.normal(size=n)
    f[rng.random(n) < 0.05] = np.nan
    table = pa.table({
        "id": pa.array(ids, pa.int64()),
        "u": pa.array((ids * 7919) % 1000, pa.uint32()),
        "f": pa.array(f, pa.float64(), mask=rng.random(n) < 0.1),
        "s": pa.array([f"k{i // 5:05d}" if i % 11 else None for i in ids], pa.string()),
        "d": pa.array([None if i % 13 == 0 else (i - 300) * 10 for i in range(n)], pa.decimal128(12, 2)),
        "tags": pa.array([[i, i + 1] if i % 4 else [] for i in range(n)], pa.list_(pa.int32())),
    })
    path = tmp_path_factory.mktemp("vec") / "typed.parquet"
    pq.write_table(table, path, row_group_size=8)
    return path, table


FILTERS = [
    field("id") == 500, field("id") < 17, (field("id") >= 100) & (field("id") <= 140), field("u") > 990,
    field("f") > 2.5, field("f") == 0.0, field("f") != 1.0, field("s") == "k00042", field("s").isin(["k00001", "k00140"]),
    field("s") >= "k00139", field("s").is_null(), field("d") < -2000, field("d").isin([5, 100.5, 30]),
    ~(field("id") < 700), (field("u") < 3) | (field("s") < "k0001"), field("tags.list.element") == 300,
    (field("tags.list.element") > 710) & field("id").is_valid(), field("f").isin([float("nan")]),
]


@pytest.mark.parametrize("flt", FILTERS, ids=str)
def test_skim_of_a_lazy_footer_prunes_as_full_row_groups_do(many_typed, flt):
    path, table = many_typed
    with pqbloom.ParquetFile(path) as pf:
        assert isinstance(pf.thrift_metadata.row_groups, RowGroupList)
        plan = BoundFilter(pf, flt)
        rows, may = statistics_verdicts(plan)  # from the skim: nothing decoded yet
        assert pf.thrift_metadata.row_groups.decoded <= 2
        ex = Explain()
        ref = BoundFilter(pf, flt)  # no statistics gathered: each pruner reads its row group's full metadata
        expect = [RowGroupPruner(ref, rg, ex, pf.row_group_rows(rg)).verdict(False, False)[0]
                  for rg in range(pf.num_row_groups)]
        assert may.tolist() == expect
        assert rows.tolist() == [pf.thrift_metadata.row_groups[i].num_rows for i in range(pf.num_row_groups)]
        if flt is FILTERS[0]:
            assert np.flatnonzero(may).tolist() == [500 // 8]  # ids are sorted, 8 per row group
        # and the same verdicts from already decoded row groups (no skim)
        rows2, may2 = statistics_verdicts(BoundFilter(pf, flt))
        assert may2.tolist() == expect and rows2.tolist() == rows.tolist()
