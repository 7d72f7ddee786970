"""Paired statistics for A/B comparisons, seeded and reproducible.

Every function takes the per-question differences ``d_i = b_i - a_i`` of two systems on the
same inputs. With numpy installed the resampling is vectorised, and with scipy the bootstrap
interval is BCa (bias-corrected and accelerated); without them the same tests run in pure
Python (a percentile interval), just slower.
"""

from __future__ import annotations

import itertools
import random
from collections.abc import Sequence

from .summary import bootstrap_ci

__all__ = ["holm", "paired_bootstrap_ci", "paired_permutation_test"]


def paired_bootstrap_ci(diffs: Sequence[float], *, confidence: float = 0.95,
                        resamples: int = 10_000, seed: int = 0) -> tuple[float, float]:
    """Bootstrap interval of the mean difference: questions are resampled with replacement,
    each with its own pair. BCa when scipy is installed, else the percentile interval."""
    if not diffs:
        raise ValueError("no paired differences")
    if not 0 < confidence < 1:
        raise ValueError("confidence must be in (0, 1)")
    if min(diffs) == max(diffs):  # every question moved by the same amount
        return float(diffs[0]), float(diffs[0])
    bca = bootstrap_ci(diffs, resamples=resamples, seed=seed, confidence=confidence)
    if bca is not None:
        return bca
    means = sorted(_resampled_means(diffs, resamples, seed))
    tail = (1 - confidence) / 2
    return means[int(tail * resamples)], means[min(resamples - 1, int((1 - tail) * resamples))]


def _resampled_means(diffs: Sequence[float], resamples: int, seed: int) -> list[float]:
    n = len(diffs)
    try:
        import numpy as np
    except ImportError:
        rng = random.Random(seed)
        return [sum(rng.choices(diffs, k=n)) / n for _ in range(resamples)]
    data = np.asarray(diffs, dtype=float)
    gen = np.random.default_rng(seed)
    out: list[float] = []
    step = max(1, 4_000_000 // n)  # bounds memory: step x n indices at a time
    for start in range(0, resamples, step):
        idx = gen.integers(0, n, size=(min(step, resamples - start), n))
        out += data[idx].mean(axis=1).tolist()
    return out


def paired_permutation_test(diffs: Sequence[float], *, resamples: int = 10_000, seed: int = 0,
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
    return (_monte_carlo_hits(values, observed, resamples, seed) + 1) / (resamples + 1)


def _monte_carlo_hits(values: Sequence[float], observed: float, resamples: int, seed: int) -> int:
    try:
        import numpy as np
    except ImportError:
        rng = random.Random(seed)
        hits = 0
        for _ in range(resamples):
            bits = rng.getrandbits(len(values))
            total = sum(v if (bits >> i) & 1 else -v for i, v in enumerate(values))
            hits += abs(total) >= observed
        return hits
    data = np.asarray(values, dtype=float)
    gen = np.random.default_rng(seed)
    hits = 0
    step = max(1, 4_000_000 // len(values))
    for start in range(0, resamples, step):
        signs = gen.choice((-1.0, 1.0), size=(min(step, resamples - start), len(values)))
        hits += int((np.abs(signs @ data) >= observed).sum())
    return hits


def holm(p_values: Sequence[float | None]) -> list[float | None]:
    """Holm-Bonferroni adjusted p-values for a family of tests (None: not tested).

    The i-th smallest of m p-values is multiplied by (m - i + 1), made monotone and capped at
    1, so "adjusted p < alpha" holds the family-wise error rate at alpha.
    """
    tested = sorted((p, i) for i, p in enumerate(p_values) if p is not None)
    m = len(tested)
    out: list[float | None] = [None] * len(p_values)
    running = 0.0
    for rank, (p, i) in enumerate(tested):
        running = max(running, min(1.0, (m - rank) * p))
        out[i] = running
    return out
