"""Aggregation across samples: mean, 95% interval, counts of n, undefined and errors.

The interval is a bootstrap BCa interval (``scipy.stats.bootstrap``, 2,000 seeded resamples)
when scipy is installed (``pip install '.[stats]'``) and 10 <= n <= 1,000: metric
values are bounded, skewed and often piled up at 0 or 1, where a symmetric interval misleads.
Otherwise it is a Student-t interval (beyond 1,000 values the two agree closely, and the
bootstrap would cost seconds per metric). There is no interval for n < 2, and every interval
is clipped to [0, 1] since every metric is a fraction.

This is the one definition: the CLI summary, the HTML report, the Markdown summary and MLflow
all take their intervals from ``interval``, and their label from ``methods_note``.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Literal

__all__ = ["MetricSummary", "summarize", "mean_ci", "interval", "bootstrap_ci", "METHOD_NAMES",
           "methods_note"]

Method = Literal["bca", "t"]

#: BCa needs enough values for its jackknife; beyond the upper bound the t-interval is as good.
BCA_MIN_N = 10
BCA_MAX_N = 1000
BCA_RESAMPLES = 2000

#: Each method's true name, as every output labels its intervals.
METHOD_NAMES: dict[Method, str] = {
    "bca": f"BCa bootstrap ({BCA_RESAMPLES:,} seeded resamples)",
    "t": "Student-t",
}

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
    """One metric over a run. ``mean`` is None when no sample defined it; ``ci`` also when
    fewer than two did. ``method`` says how the interval was made (``bca`` or ``t``)."""

    name: str
    mean: float | None
    ci: tuple[float, float] | None
    n: int          # samples with a defined value
    undefined: int  # samples scored, but the metric had no denominator
    errors: int     # samples that could not be scored at all
    method: Method | None = None


def bootstrap_ci(values: Sequence[float], *, resamples: int = BCA_RESAMPLES, seed: int = 0,
                 confidence: float = 0.95) -> tuple[float, float] | None:
    """BCa bootstrap interval of the mean with scipy, seeded; None when scipy is not
    installed or the data are degenerate (all equal: the interval is then the value)."""
    try:
        import numpy as np
        from scipy import stats
    except ImportError:
        return None
    data = np.asarray(values, dtype=float)
    if len(data) < 2 or float(np.ptp(data)) == 0.0:
        return None
    batch = max(1, 4_000_000 // len(data))  # bounds memory: resamples x n doubles per batch
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # DegenerateDataWarning: handled by the NaN check
        res = stats.bootstrap((data,), np.mean, n_resamples=resamples, confidence_level=confidence,
                              method="BCa", random_state=np.random.default_rng(seed),
                              batch=batch, vectorized=True)
    lo, hi = float(res.confidence_interval.low), float(res.confidence_interval.high)
    if math.isnan(lo) or math.isnan(hi):
        return None
    return lo, hi


def interval(values: Sequence[float]) -> tuple[float | None, tuple[float, float] | None,
                                               Method | None]:
    """Mean, 95% interval and the method used (see the module docstring). The figures do
    not depend on the order of ``values``: the resampling reads positions, and rows finish
    in any order (several samples in flight, worker processes, Ray blocks)."""
    values = sorted(values)
    n = len(values)
    if n == 0:
        return None, None, None
    m = math.fsum(values) / n
    if n == 1:
        return m, None, None
    if BCA_MIN_N <= n <= BCA_MAX_N:
        ci = bootstrap_ci(values)
        if ci is not None:
            return m, (max(0.0, ci[0]), min(1.0, ci[1])), "bca"
    var = math.fsum((v - m) ** 2 for v in values) / (n - 1)
    half = _t975(n - 1) * math.sqrt(var / n)
    return m, (max(0.0, m - half), min(1.0, m + half)), "t"


def mean_ci(values: Sequence[float]) -> tuple[float | None, tuple[float, float] | None]:
    """Mean and 95% interval (``interval`` without the method)."""
    m, ci, _ = interval(values)
    return m, ci


def summarize(name: str, values: Iterable[float | None], errors: int = 0) -> MetricSummary:
    """Summarise defined values; ``None`` entries count as undefined, never as 0."""
    defined: list[float] = []
    undefined = 0
    for v in values:
        if v is None:
            undefined += 1
        else:
            defined.append(v)
    m, ci, method = interval(defined)
    return MetricSummary(name, m, ci, len(defined), undefined, errors, method)


def methods_note(summaries: Iterable[MetricSummary]) -> str:
    """How the intervals of these summaries were made, in words: ``95% interval: BCa
    bootstrap (2,000 seeded resamples)``; with the metrics named when methods differ."""
    by: dict[Method, list[str]] = {}
    none: list[str] = []
    for s in summaries:
        if s.method is None:
            none.append(s.name)
        else:
            by.setdefault(s.method, []).append(s.name)
    parts = [METHOD_NAMES[m] + (f" for {', '.join(names)}" if len(by) > 1 else "")
             for m, names in by.items()]
    if none and parts:
        parts.append(f"none for {', '.join(none)} (fewer than 2 values)")
    if not parts:
        return "95% interval: none (fewer than 2 values per metric)"
    return "95% interval: " + "; ".join(parts)
