"""Aggregation across samples: mean, 95% interval, counts of undefined and errors."""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass

__all__ = ["MetricSummary", "summarize", "mean_ci"]

# Two-sided 97.5% Student-t quantiles for small n; beyond the table the normal 1.96 is used.
_T975 = {1: 12.706, 2: 4.303, 3: 3.182, 4: 2.776, 5: 2.571, 6: 2.447, 7: 2.365, 8: 2.306,
         9: 2.262, 10: 2.228, 11: 2.201, 12: 2.179, 13: 2.160, 14: 2.145, 15: 2.131,
         16: 2.120, 17: 2.110, 18: 2.101, 19: 2.093, 20: 2.086, 25: 2.060, 30: 2.042,
         40: 2.021, 60: 2.000, 120: 1.980}


def _t975(df: int) -> float:
    if df in _T975:
        return _T975[df]
    keys = sorted(k for k in _T975 if k <= df)
    return _T975[keys[-1]] if df <= 120 else 1.96


@dataclass(frozen=True)
class MetricSummary:
    """One metric over a run. ``mean``/``ci`` are None when no sample defined it."""

    name: str
    mean: float | None
    ci: tuple[float, float] | None
    n: int          # samples with a defined value
    undefined: int  # samples scored, but the metric had no denominator
    errors: int     # samples that could not be scored at all


def mean_ci(values: list[float]) -> tuple[float | None, tuple[float, float] | None]:
    """Mean and a Student-t 95% interval, clipped to [0, 1] since every metric is a fraction."""
    n = len(values)
    if n == 0:
        return None, None
    m = sum(values) / n
    if n == 1:
        return m, (m, m)
    var = sum((v - m) ** 2 for v in values) / (n - 1)
    half = _t975(n - 1) * math.sqrt(var / n)
    return m, (max(0.0, m - half), min(1.0, m + half))


def summarize(name: str, values: Iterable[float | None], errors: int = 0) -> MetricSummary:
    """Summarise defined values; ``None`` entries count as undefined, never as 0."""
    defined: list[float] = []
    undefined = 0
    for v in values:
        if v is None:
            undefined += 1
        else:
            defined.append(v)
    m, ci = mean_ci(defined)
    return MetricSummary(name, m, ci, len(defined), undefined, errors)
