"""Paired statistics in pure Python (scipy is not a dependency), seeded and reproducible.

Both take the per-question differences ``d_i = b_i - a_i`` of two systems on the same inputs.
"""

from __future__ import annotations

import itertools
import random
from collections.abc import Sequence

__all__ = ["paired_bootstrap_ci", "paired_permutation_test"]


def paired_bootstrap_ci(diffs: Sequence[float], *, confidence: float = 0.95,
                        resamples: int = 2000, seed: int = 0) -> tuple[float, float]:
    """Percentile bootstrap interval of the mean difference (questions resampled with
    replacement, so each keeps its own pair)."""
    if not diffs:
        raise ValueError("no paired differences")
    if not 0 < confidence < 1:
        raise ValueError("confidence must be in (0, 1)")
    rng = random.Random(seed)
    n = len(diffs)
    means = sorted(sum(rng.choices(diffs, k=n)) / n for _ in range(resamples))
    tail = (1 - confidence) / 2
    lo = means[int(tail * resamples)]
    hi = means[min(resamples - 1, int((1 - tail) * resamples))]
    return lo, hi


def paired_permutation_test(diffs: Sequence[float], *, resamples: int = 10000, seed: int = 0,
                            exact_up_to: int = 12) -> float:
    """Two-sided sign-flip permutation p-value for "the mean difference is 0".

    Under the null each pair's sign is a coin flip. With at most ``exact_up_to`` non-zero
    differences every sign pattern is enumerated (an exact p-value); otherwise ``resamples``
    random patterns give a Monte Carlo p-value, counted as (hits + 1) / (resamples + 1) so it
    is never 0. Zero differences do not change any flipped sum, so they are left out.
    """
    if not diffs:
        raise ValueError("no paired differences")
    values = [abs(d) for d in diffs if d != 0]
    if not values:
        return 1.0
    observed = abs(sum(diffs)) - 1e-12  # tolerance: equal sums must count as "as extreme"
    m = len(values)
    if m <= exact_up_to:
        hits = sum(abs(sum(s * v for s, v in zip(signs, values, strict=True))) >= observed
                   for signs in itertools.product((1, -1), repeat=m))
        return hits / float(1 << m)
    rng = random.Random(seed)
    hits = 0
    for _ in range(resamples):
        bits = rng.getrandbits(m)
        total = sum(v if (bits >> i) & 1 else -v for i, v in enumerate(values))
        hits += abs(total) >= observed
    return (hits + 1) / (resamples + 1)
