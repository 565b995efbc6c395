"""Random Arrow tables and schemas for the peer-writer corpus (``tests/integration/test_peer_writers.py``).

Hypothesis draws the *shape* of a case (the schema, the row count, the null density, how often
extreme values appear, whether values repeat, a seed); :func:`random_table` then builds the values
with numpy from that seed, so a 50,000-row table costs milliseconds and a failing case is
reproduced exactly by its shape.

Values cover what readers get wrong: integer extremes, NaN, -0.0 and infinities, empty and long
strings (longer than 64 bytes, where writers truncate statistics), text with NUL and astral
characters, binary with zero bytes, decimals at their precision's bounds, temporal values at the
ends of their range, empty and null lists, null structs over non-null children.

Nothing here imports pqbloom.
"""

from __future__ import annotations

import decimal
import json
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pyarrow as pa
from hypothesis import strategies as st

__all__ = [
    "Shape",
    "fields_strategy",
    "random_array",
    "random_table",
    "shape_strategy",
    "type_strategy",
]

#: characters strings are made of: ASCII, multi-byte, combining, NUL, the last BMP and the last code point
_CHARS = np.array(list("abcxyzABC019 _-.,/") + ["\x00", "\x01", "é", "ß", "中", "文", "\u0301", "😀", "𝄞",
                                                 "\uffff", "\U0010ffff", "\n", "'", '"'])
_SPECIAL_TEXT = ["", "\x00", "a\x00b", "é", "😀" * 20, "z" * 100, "\uffff", "\U0010ffff" * 17, " ", "Z" * 64,
                 "Z" * 65]
_SPECIAL_BYTES = [b"", b"\x00", b"\xff" * 70, b"\x00" * 65, b"\x80", b"\x00\xff\x00"]

#: seconds from the epoch of 0001-01-02 and 9999-12-30: Python datetimes hold them in every zone
_DT_MIN_S, _DT_MAX_S = -62135510400, 253402128000
#: nanoseconds from the epoch that pandas' Timestamp holds (pyarrow's Python value for ns), with a day to spare
_NS_MIN, _NS_MAX = -(2**63) + 86_400 * 10**9, 2**63 - 1 - 86_400 * 10**9
_UNIT = {"s": 1, "ms": 10**3, "us": 10**6, "ns": 10**9}
_DAY_MIN, _DAY_MAX = -719162, 2932896  # date32 of 0001-01-01 and 9999-12-31


@dataclass(frozen=True)
class Shape:
    """How a table's values are drawn (everything but the schema)."""

    num_rows: int
    null_p: float = 0.1          # probability that a nullable value is null
    special_p: float = 0.05      # probability that a value is one of its type's edge cases
    low_card: bool = False       # values repeat from a pool of a few (dictionary encoding, Bloom filters)
    max_list: int = 4            # list and map lengths are 0..max_list
    seed: int = 0
    ns_safe: bool = False        # timestamps within what nanoseconds hold (INT96, coercion to ns)


def shape_strategy(max_rows: int = 50_000) -> st.SearchStrategy[Shape]:
    rows = st.one_of(st.sampled_from([0, 1, 2, 3]), st.integers(4, 300), st.integers(300, 5_000),
                     st.sampled_from([max_rows]))
    return st.builds(Shape, num_rows=rows, null_p=st.sampled_from([0.0, 0.05, 0.3, 0.9, 1.0]),
                     special_p=st.sampled_from([0.0, 0.02, 0.3]), low_card=st.booleans(),
                     max_list=st.sampled_from([0, 1, 4]), seed=st.integers(0, 2**32 - 1))


# ---------------------------------------------------------------------------
# schemas
# ---------------------------------------------------------------------------
def type_strategy(leaves: Sequence[pa.DataType], nested: Sequence[str] = (), depth: int = 3,
                  map_keys: Sequence[pa.DataType] = (pa.string(), pa.int32())) -> st.SearchStrategy[pa.DataType]:
    """Arrow types: one of ``leaves``, or (up to ``depth`` levels) a ``list``, ``large_list``,
    ``fixed_size_list``, ``struct`` or ``map`` (the kinds named in ``nested``) of such types."""
    leaf = st.sampled_from(list(leaves))
    if depth <= 0 or not nested:
        return leaf
    # view types only at the top level: pyarrow 26 cannot write them inside a struct ("Slicing not implemented")
    inner = [t for t in leaves if not (pa.types.is_string_view(t) or pa.types.is_binary_view(t))]
    sub = type_strategy(inner, nested, depth - 1, map_keys)
    child = st.tuples(sub, st.booleans())
    options: list[st.SearchStrategy[pa.DataType]] = [leaf]
    if "list" in nested:
        options.append(child.map(lambda c: pa.list_(pa.field("item", c[0], nullable=c[1] or pa.types.is_null(c[0])))))
    if "large_list" in nested:
        options.append(sub.map(pa.large_list))
    if "fixed_size_list" in nested:
        options.append(st.tuples(sub, st.integers(1, 3)).map(lambda c: pa.list_(c[0], c[1])))
    if "struct" in nested:
        options.append(st.lists(child, min_size=1, max_size=3).map(
            lambda cs: pa.struct([pa.field(f"f{i}", t, nullable=nn or pa.types.is_null(t))
                                  for i, (t, nn) in enumerate(cs)])))
    if "map" in nested:
        options.append(st.tuples(st.sampled_from(list(map_keys)), sub).map(lambda kv: pa.map_(kv[0], kv[1])))
    return st.one_of(options)


def fields_strategy(types: st.SearchStrategy[pa.DataType], max_columns: int = 6,
                    required: bool = True) -> st.SearchStrategy[list[pa.Field]]:
    """Top-level fields ``c0``, ``c1``... of the drawn types (some not nullable when ``required``)."""
    nullable = st.booleans() if required else st.just(True)
    return st.lists(st.tuples(types, nullable), min_size=1, max_size=max_columns).map(
        lambda cs: [pa.field(f"c{i}", t, nullable=nn or pa.types.is_null(t)) for i, (t, nn) in enumerate(cs)])


# ---------------------------------------------------------------------------
# values
# ---------------------------------------------------------------------------
def random_table(fields: Sequence[pa.Field], shape: Shape) -> pa.Table:
    rng = np.random.default_rng(shape.seed)
    cols = [random_array(f.type, shape.num_rows, rng, shape, nullable=f.nullable) for f in fields]
    return pa.Table.from_arrays(cols, schema=pa.schema(list(fields)))


def random_array(t: pa.DataType, n: int, rng: np.random.Generator, shape: Shape, *, nullable: bool = True) -> pa.Array:
    """``n`` values of type ``t`` (nulls with probability ``shape.null_p`` when ``nullable``)."""
    valid = rng.random(n) >= shape.null_p if nullable else np.ones(n, bool)
    mask = None if valid.all() else pa.array(~valid)
    if pa.types.is_null(t):
        return pa.nulls(n)
    if isinstance(t, pa.BaseExtensionType):
        storage = random_array(t.storage_type, n, rng, shape, nullable=nullable)
        if t.extension_name == "arrow.json":
            storage = pa.array([None if v is None else json.dumps(v) for v in storage.to_pylist()], pa.string())
        return pa.ExtensionArray.from_storage(t, storage)
    if pa.types.is_struct(t):
        kids = [random_array(f.type, n, rng, shape, nullable=f.nullable) for f in t]
        return pa.StructArray.from_arrays(kids, fields=list(t), mask=mask)
    if pa.types.is_fixed_size_list(t):
        vf = t.value_field
        kids = random_array(vf.type, n * t.list_size, rng, shape, nullable=vf.nullable)
        return pa.FixedSizeListArray.from_arrays(kids, type=t, mask=mask)
    if pa.types.is_list(t) or pa.types.is_large_list(t) or pa.types.is_map(t):
        lengths = rng.integers(0, shape.max_list + 1, n)
        lengths[~valid] = 0
        offsets = np.zeros(n + 1, np.int64)
        np.cumsum(lengths, out=offsets[1:])
        total = int(offsets[-1])
        if pa.types.is_map(t):
            # keys are unique within each map: a per-map base plus the position in the map
            base = rng.integers(0, 1000, n).repeat(lengths)
            pos = np.arange(total) - offsets[:-1].repeat(lengths)
            if pa.types.is_string(t.key_type):
                keys = pa.array([f"k{b}-{p}" for b, p in zip(base.tolist(), pos.tolist())], t.key_type)
            else:
                keys = pa.array((base * 8 + pos).astype(np.int64), pa.int64()).cast(t.key_type)
            items = random_array(t.item_type, total, rng, shape, nullable=t.item_field.nullable)
            return pa.MapArray.from_arrays(pa.array(offsets.astype(np.int32)), keys, items, type=t, mask=mask)
        vf = t.value_field
        kids = random_array(vf.type, total, rng, shape, nullable=vf.nullable)
        if pa.types.is_large_list(t):
            return pa.LargeListArray.from_arrays(pa.array(offsets), kids, type=t, mask=mask)
        return pa.ListArray.from_arrays(pa.array(offsets.astype(np.int32)), kids, type=t, mask=mask)
    if pa.types.is_dictionary(t):
        k = int(rng.integers(1, 12))
        dictionary = pa.array(list(dict.fromkeys(_text(k, rng, shape))), t.value_type)
        idx = rng.integers(0, len(dictionary), n)
        return pa.DictionaryArray.from_arrays(pa.array(idx, t.index_type, mask=~valid if mask is not None else None),
                                              dictionary)
    if pa.types.is_string_view(t) or pa.types.is_binary_view(t):  # built as their offset types (if_else has no
        base = pa.string() if pa.types.is_string_view(t) else pa.binary()  # view kernels)
        return random_array(base, n, rng, shape, nullable=nullable).cast(t)
    if shape.low_card and n > 1:
        k = int(rng.integers(1, 9))
        pool = _values(t, k, rng, shape)
        return _masked(pool.take(pa.array(rng.integers(0, k, n))), valid)
    return _masked(_values(t, n, rng, shape), valid)


def _masked(arr: pa.Array, valid: np.ndarray) -> pa.Array:
    if valid.all():
        return arr
    import pyarrow.compute as pc

    return pc.if_else(pa.array(valid), arr, pa.nulls(len(arr), arr.type))


def _special(n: int, rng: np.random.Generator, shape: Shape) -> np.ndarray:
    return rng.random(n) < shape.special_p


def _values(t: pa.DataType, n: int, rng: np.random.Generator, shape: Shape) -> pa.Array:
    """``n`` non-null values of the primitive type ``t``."""
    sp = _special(n, rng, shape)
    if pa.types.is_boolean(t):
        return pa.array(rng.random(n) < 0.5, t)
    if pa.types.is_integer(t):
        info = np.iinfo(t.to_pandas_dtype())
        small = rng.random(n) < 0.5  # half near zero, half over the whole range
        v = np.where(small, rng.integers(max(info.min, -100), min(info.max, 100), n, endpoint=True),
                     0).astype(info.dtype)
        wide = rng.integers(info.min, info.max, n, dtype=info.dtype, endpoint=True)
        v = np.where(small, v, wide)
        picks = np.array([info.min, info.max, 0, 1, info.max - 1] + ([-1] if info.min < 0 else []), dtype=info.dtype)
        v[sp] = rng.choice(picks, int(sp.sum()))
        return pa.array(v, t)
    if pa.types.is_floating(t):
        v = rng.standard_normal(n) * 10.0 ** rng.integers(-8, 9, n)
        dt = t.to_pandas_dtype()
        with np.errstate(over="ignore"):  # float16 and float32 overflow to infinities, which are wanted too
            v = v.astype(dt)
        fin = np.finfo(dt)
        picks = np.array([np.nan, -0.0, 0.0, np.inf, -np.inf, fin.max, fin.min, fin.smallest_subnormal, 1.0], dtype=dt)
        v[sp] = rng.choice(picks, int(sp.sum()))
        return pa.array(v, t)
    if pa.types.is_string(t) or pa.types.is_large_string(t) or pa.types.is_string_view(t):
        return pa.array(_text(n, rng, shape), t)
    if pa.types.is_binary(t) or pa.types.is_large_binary(t) or pa.types.is_binary_view(t):
        lengths = _lengths(n, rng)
        data = rng.integers(0, 256, int(lengths.sum()), dtype=np.uint8).tobytes()
        ends = np.cumsum(lengths).tolist()
        vals = [data[e - k:e] for e, k in zip(ends, lengths.tolist())]
        for i in np.flatnonzero(sp).tolist():
            vals[i] = _SPECIAL_BYTES[int(rng.integers(len(_SPECIAL_BYTES)))]
        return pa.array(vals, t)
    if pa.types.is_fixed_size_binary(t):
        w = t.byte_width
        raw = rng.integers(0, 256, (n, w), dtype=np.uint8)
        raw[sp] = rng.choice([0, 255], (int(sp.sum()), 1)).astype(np.uint8)
        return pa.FixedSizeBinaryArray.from_buffers(t, n, [None, pa.py_buffer(raw.tobytes())])
    if pa.types.is_decimal(t):
        return pa.array(_decimals(t.precision, t.scale, n, rng, sp), t)
    if pa.types.is_date(t):
        days = rng.integers(_DAY_MIN, _DAY_MAX, n, endpoint=True)
        near = rng.random(n) < 0.5
        days[near] = rng.integers(-30000, 30000, int(near.sum()))
        days[sp] = rng.choice([_DAY_MIN, _DAY_MAX, 0, -1], int(sp.sum()))
        arr = pa.array(days.astype(np.int32), pa.date32())
        return arr if pa.types.is_date32(t) else pa.array(days.astype(np.int64) * 86_400_000, pa.date64())
    if pa.types.is_time(t):
        top = 86_400 * _UNIT[t.unit]
        v = rng.integers(0, top, n)
        v[sp] = rng.choice([0, top - 1], int(sp.sum()))
        return pa.array(v.astype(np.int32 if pa.types.is_time32(t) else np.int64), t)
    if pa.types.is_timestamp(t):
        lo, hi = _timestamp_range(t.unit, shape.ns_safe)
        v = rng.integers(lo, hi, n, endpoint=True)
        near = rng.random(n) < 0.5  # 1970 +- 60 years
        v[near] = rng.integers(-2 * 10**9, 2 * 10**9, int(near.sum())) * _UNIT[t.unit]
        v[sp] = rng.choice([lo, hi, 0, -1, 1], int(sp.sum()))
        return pa.array(v, t)
    if pa.types.is_duration(t):
        lim = min(2**63 - 1, 86_399_999_999 * _UNIT[t.unit]) if t.unit != "ns" else 2**63 - 1
        v = rng.integers(-lim, lim, n, endpoint=True)
        near = rng.random(n) < 0.5
        v[near] = rng.integers(-10**6, 10**6, int(near.sum()))
        v[sp] = rng.choice([-lim, lim, 0, -1], int(sp.sum()))
        return pa.array(v, t)
    raise NotImplementedError(f"no values for {t}")


def _timestamp_range(unit: str, ns_safe: bool) -> tuple[int, int]:
    if unit == "ns" or ns_safe:
        return _NS_MIN // (10**9 // _UNIT[unit]), _NS_MAX // (10**9 // _UNIT[unit])
    return _DT_MIN_S * _UNIT[unit], _DT_MAX_S * _UNIT[unit]


def _lengths(n: int, rng: np.random.Generator) -> np.ndarray:
    lengths = rng.integers(0, 13, n)
    long = rng.random(n) < 0.05  # longer than 64 bytes: truncated statistics
    lengths[long] = rng.integers(60, 300, int(long.sum()))
    return lengths


def _text(n: int, rng: np.random.Generator, shape: Shape) -> list[str]:
    lengths = _lengths(n, rng)
    chars = rng.choice(_CHARS, int(lengths.sum())).tolist()
    out = []
    pos = 0
    for k in lengths.tolist():
        out.append("".join(chars[pos:pos + k]))
        pos += k
    for i in np.flatnonzero(_special(n, rng, shape)).tolist():
        out[i] = _SPECIAL_TEXT[int(rng.integers(len(_SPECIAL_TEXT)))]
    return out


def _decimals(precision: int, scale: int, n: int, rng: np.random.Generator, sp: np.ndarray) -> list[decimal.Decimal]:
    digits = rng.integers(1, precision + 1, n)
    top = 10**precision - 1
    out = []
    # integers of up to 76 digits: three 63-bit draws are enough for any precision
    draws = rng.integers(0, 2**62, (n, 5)).tolist()
    signs = (rng.random(n) < 0.5).tolist()
    sps = sp.tolist()
    choice = rng.integers(0, 3, n).tolist()
    for i, d in enumerate(digits.tolist()):
        if sps[i]:
            u = (top, -top, 0)[choice[i]]
        else:
            a, b, c, e, f = draws[i]
            u = ((a << 248) | (b << 186) | (c << 124) | (e << 62) | f) % (10**d)
            u = -u if signs[i] else u
        out.append(decimal.Decimal((1 if u < 0 else 0, tuple(int(ch) for ch in str(abs(u))), -scale)))
    return out
