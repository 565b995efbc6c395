"""Property tests of the unit tier, run here with the full number of examples: the unit tier (tests/unit, kept
under three minutes) draws fewer of them. Each test here calls the unit test's own body
(``.hypothesis.inner_test``) with the unit test's strategies, so the two cannot drift apart."""

from __future__ import annotations

import hypothesis.strategies as st
from hypothesis import HealthCheck, given, settings

from tests.unit.file import test_nested as nested
from tests.unit.scan import test_predicate as predicate

SLOW = [HealthCheck.too_slow]


@settings(max_examples=300, deadline=None, suppress_health_check=SLOW)
@given(predicate.tables(), predicate.predicates)
def test_filtered_read_equals_reference(table_and_opts, expr):
    predicate.test_filtered_read_equals_reference.hypothesis.inner_test(table_and_opts, expr)


@settings(max_examples=150, deadline=None, suppress_health_check=SLOW)
@given(predicate.lookup_tables(), predicate.lookup_predicates)
def test_point_lookups_pruned_yet_exact(table_and_opts, expr):
    predicate.test_point_lookups_pruned_yet_exact.hypothesis.inner_test(table_and_opts, expr)


@settings(max_examples=100, deadline=None, suppress_health_check=SLOW)
@given(predicate.tables(), predicate.predicates)
def test_filtered_read_equals_pyarrow(table_and_opts, expr):
    predicate.test_filtered_read_equals_pyarrow.hypothesis.inner_test(table_and_opts, expr)


@settings(max_examples=100, deadline=None, suppress_health_check=SLOW)
@given(predicate.tables(), predicate.dnf)
def test_dnf_filters_match_pyarrow(table_and_opts, filters):
    predicate.test_dnf_filters_match_pyarrow.hypothesis.inner_test(table_and_opts, filters)


NESTED = settings(max_examples=120, deadline=None, suppress_health_check=[*SLOW, HealthCheck.data_too_large])


@NESTED
@given(table=nested.nested_tables(), opts=nested.WRITE_OPTIONS)
def test_roundtrip_pqbloom_writes_pyarrow_reads(table, opts):
    nested.test_roundtrip_pqbloom_writes_pyarrow_reads.hypothesis.inner_test(table, opts)


@NESTED
@given(table=nested.nested_tables(), version=st.sampled_from(["1.0", "2.0"]), page=st.sampled_from([64, 1 << 20]),
       rg=st.sampled_from([5, 1000]), dictionary=st.booleans())
def test_roundtrip_pyarrow_writes_pqbloom_reads(table, version, page, rg, dictionary):
    nested.test_roundtrip_pyarrow_writes_pqbloom_reads.hypothesis.inner_test(table, version, page, rg, dictionary)
