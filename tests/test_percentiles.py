"""The one percentile behind every p50/p95 Jarvis prints (eval report, jarvis report, benchmarks)."""
from __future__ import annotations

import statistics

import pytest
from hypothesis import given
from hypothesis import strategies as st

from jarvis.percentiles import percentile


def test_the_convention_is_linear_between_the_closest_ranks():
    assert percentile([1, 2, 3, 4], 0.5) == 2.5
    assert percentile(range(1, 101), 0.95) == pytest.approx(95.05)
    assert percentile([7.0], 0.95) == 7.0
    assert (percentile([3, 1, 2], 0.0), percentile([3, 1, 2], 1.0)) == (1, 3)


@given(st.lists(st.floats(-1e6, 1e6), min_size=2, max_size=200), st.integers(1, 99))
def test_it_is_the_inclusive_quantile_of_the_standard_library(values, percent):
    expected = statistics.quantiles(values, n=100, method="inclusive")[percent - 1]
    assert percentile(values, percent / 100) == pytest.approx(expected, rel=1e-9, abs=1e-6)


@pytest.mark.parametrize("values, share", [([], 0.5), ([1.0], 1.5), ([1.0], -0.1)])
def test_no_values_or_a_share_outside_0_1_is_an_error(values, share):
    with pytest.raises(ValueError):
        percentile(values, share)
