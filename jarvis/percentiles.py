"""The one percentile of Jarvis's figures: the eval report, `jarvis report`, the benchmarks.

Convention: linear interpolation between the two closest ranks (the "inclusive" method of
``statistics.quantiles``, numpy's default "linear"): the p-th percentile of n sorted values lies at
position p/100 × (n − 1), counted from 0. So p50 of [1, 2, 3, 4] is 2.5, p95 of 1..100 is 95.05, and
p0 / p100 are the smallest / largest value. One value is its own every percentile.
"""
from __future__ import annotations

import math
from typing import Iterable


def percentile(values: Iterable[float], share: float) -> float:
    """The ``share`` quantile of ``values`` (``share`` in [0, 1]: 0.95 for p95), by the convention above.
    Raises ValueError for no values or a share outside [0, 1]."""
    ordered = sorted(values)
    if not ordered:
        raise ValueError("the percentile of no values")
    if not 0.0 <= share <= 1.0:
        raise ValueError(f"share must be between 0 and 1, got {share}")
    position = share * (len(ordered) - 1)
    low = math.floor(position)
    high = min(low + 1, len(ordered) - 1)
    return ordered[low] + (ordered[high] - ordered[low]) * (position - low)
