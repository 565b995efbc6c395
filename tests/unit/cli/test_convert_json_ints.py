"""``pqbloom convert`` of JSON Lines integers past int64: exact (decimal(38,0), read back by pyarrow as the
integers json.loads gives), or a ConvertError asking for ``--schema``; never doubles that round them."""

from __future__ import annotations

import json

import pyarrow.parquet as pq
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pqbloom.cli.convert import ConvertError, convert

BIG = [2**63, 10**30, 2**64 - 1, -(2**63) - 1, 10**38 - 1, -(10**38) + 1]


def _jsonl(path, values, key="b"):
    path.write_text("".join(json.dumps({"a": i, key: v}) + "\n" for i, v in enumerate(values)))
    return path


def _read_back(path, key="b"):
    t = pq.read_table(path)
    return t.schema.field(key).type, [None if v is None else int(v) for v in t.column(key).to_pylist()]


def test_integers_past_int64_round_trip_exactly(tmp_path):
    src = _jsonl(tmp_path / "in.jsonl", [1, None, *BIG])
    out = tmp_path / "out.parquet"
    convert(str(src), str(out))
    typ, got = _read_back(out)
    assert str(typ) == "decimal128(38, 0)"
    assert got == [1, None, *BIG]


def test_uint64_values_past_int64(tmp_path):
    vals = [0, 2**63, 2**64 - 1, 12345678901234567890]
    src = _jsonl(tmp_path / "u.jsonl", vals)
    out = tmp_path / "u.parquet"
    convert(str(src), str(out))
    assert _read_back(out)[1] == vals
    out2 = tmp_path / "u2.parquet"
    convert(str(src), str(out2), schema="b:uint64")  # the explicit schema the user may prefer
    typ, got = _read_back(out2)
    assert str(typ) == "uint64" and got == vals


def test_more_than_38_digits_fail_clearly_and_write_nothing(tmp_path):
    src = _jsonl(tmp_path / "h.jsonl", [1, 10**40])
    out = tmp_path / "h.parquet"
    with pytest.raises(ConvertError, match=r"'b'.*38 digits.*--schema 'b:string'"):
        convert(str(src), str(out))
    assert not out.exists()
    convert(str(src), str(out), schema="b:decimal(76,0)")
    assert _read_back(out)[1] == [1, 10**40]
    out.unlink()
    convert(str(src), str(out), schema="b:string")
    assert pq.read_table(out).column("b").to_pylist() == ["1", str(10**40)]


def test_integers_a_double_would_round_beside_fractions_fail_clearly(tmp_path):
    out = tmp_path / "m.parquet"
    with pytest.raises(ConvertError, match=r"'b'.*9007199254740993.*--schema"):
        convert(str(_jsonl(tmp_path / "m.jsonl", [1.5, 2**53 + 1])), str(out))
    # in a later chunk, after the first inferred double
    with pytest.raises(ConvertError, match=r"line 3.*9223372036854775807.*double"):
        convert(str(_jsonl(tmp_path / "m2.jsonl", [1.5, 2.5, 2**63 - 1])), str(out), chunk_rows=2)
    assert not out.exists()
    # exact doubles still convert (2**63 is one)
    convert(str(_jsonl(tmp_path / "m3.jsonl", [1.5, 2**63, 7])), str(out))
    assert pq.read_table(out).column("b").to_pylist() == [1.5, float(2**63), 7.0]


def test_a_later_chunk_past_the_inferred_type_fails_clearly(tmp_path):
    out = tmp_path / "c.parquet"
    with pytest.raises(ConvertError, match=r"line 3.*'b'.*does not fit int64.*--schema"):
        convert(str(_jsonl(tmp_path / "c.jsonl", [1, 2, 2**63])), str(out), chunk_rows=2)
    with pytest.raises(ConvertError, match=r"line 3.*'b'.*decimal\(38, ?0\)"):
        convert(str(_jsonl(tmp_path / "d.jsonl", [2**63, 1, 10**40])), str(out), chunk_rows=2)
    assert not out.exists()


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.lists(st.one_of(st.none(), st.integers(min_value=-(10**38) + 1, max_value=10**38 - 1)), min_size=1,
                max_size=20))
def test_any_integers_round_trip_exactly_or_not_at_all(tmp_path, values):
    src = _jsonl(tmp_path / "p.jsonl", values)
    out = tmp_path / "p.parquet"
    out.unlink(missing_ok=True)
    convert(str(src), str(out))
    typ, got = _read_back(out)
    assert got == values
    assert str(typ) in ("int64", "decimal128(38, 0)", "string")  # string: every value null
