"""A/B paired tests over two runs' stress rows, per golden question (``stress.compare`` and
the report's compare both use them): a sign-flip permutation p-value and a paired bootstrap
interval per metric and level, Holm-adjusted across the metrics of a level."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

from ..errors import InvalidInput
from . import catalogue
from .paired import holm, paired_bootstrap_ci, paired_permutation_test

__all__ = ["PairedTest", "paired_tests"]


@dataclass(frozen=True)
class PairedTest:
    """B minus A for one metric at one level (``level=None``: all noisy levels pooled)."""

    metric: str
    level: int | None
    n: int
    mean_a: float | None
    mean_b: float | None
    diff: float | None
    ci: tuple[float, float] | None
    p_value: float | None      # this test alone
    significant: bool          # adjusted p < alpha and the interval excludes 0
    better: str | None  # "a", "b", or None (no real difference, or no direction)
    p_adjusted: float | None = None  # Holm-adjusted across the metrics of this level



def _key(row: Mapping[str, Any]) -> tuple[str, int, int]:
    return (str(row["item_id"]), int(row["level"]), int(row["repeat"]))


def paired_tests(rows_a: Iterable[Mapping[str, Any]], rows_b: Iterable[Mapping[str, Any]], *,
                 metrics: Sequence[str] | None = None, alpha: float = 0.05, seed: int = 0,
                 resamples: int = 10_000) -> tuple[PairedTest, ...]:
    """Paired tests (B minus A) from two sets of stress result rows of the same plan, per
    metric (the family by default) and level, and pooled over the noisy levels."""
    metrics = catalogue.family() if metrics is None else metrics
    index_a = {_key(r): r for r in rows_a}
    index_b = {_key(r): r for r in rows_b}
    if set(index_a) != set(index_b):
        missing = sorted(set(index_a) ^ set(index_b))[:3]
        raise InvalidInput(f"the two runs do not cover the same questions/levels/repeats "
                           f"(e.g. {missing}); run both with the same golden set and levels")
    for key, ra in index_a.items():
        if ra.get("contexts_sha256") != index_b[key].get("contexts_sha256"):
            raise InvalidInput(f"{key[0]} at level {key[1]}, repeat {key[2]}: the two runs saw "
                               "different contexts; use the same seed, strategy, pool and position")
    if resamples < 10_000:
        raise InvalidInput(f"resamples={resamples}: use at least 10,000 for stable intervals")
    levels = sorted({k[1] for k in index_a})
    tests = []
    for level in [*levels, None]:
        keys = [k for k in index_a if (k[1] == level if level is not None else k[1] > 0)]
        family = [_test(metric, level, keys, index_a, index_b, seed, resamples)
                  for metric in metrics]
        adjusted = holm([t.p_value for t in family])
        tests += [_decide(t, p, alpha) for t, p in zip(family, adjusted, strict=True)]
    order = {m: i for i, m in enumerate(metrics)}
    tests.sort(key=lambda t: order[t.metric])  # metric-major, as before
    return tuple(tests)


def _decide(t: PairedTest, p_adjusted: float | None, alpha: float) -> PairedTest:
    if t.diff is None or t.ci is None or p_adjusted is None:
        return t
    significant = p_adjusted < alpha and (t.ci[0] > 0 or t.ci[1] < 0)
    better = None
    if significant and not catalogue.neutral(t.metric):
        b_higher = t.diff > 0
        better = "b" if b_higher != catalogue.lower_is_better(t.metric) else "a"
    return replace(t, p_adjusted=p_adjusted, significant=significant, better=better)


def _test(metric: str, level: int | None, keys: Sequence[tuple[str, int, int]],
          index_a: Mapping[Any, Mapping[str, Any]], index_b: Mapping[Any, Mapping[str, Any]],
          seed: int, resamples: int) -> PairedTest:
    per_item: dict[str, list[tuple[float, float]]] = defaultdict(list)
    for k in keys:
        va = (index_a[k].get("metrics") or {}).get(metric)
        vb = (index_b[k].get("metrics") or {}).get(metric)
        if va is not None and vb is not None:  # a pair needs both sides defined
            per_item[k[0]].append((float(va), float(vb)))
    pairs = [(sum(x for x, _ in v) / len(v), sum(y for _, y in v) / len(v)) for v in per_item.values()]
    if not pairs:
        return PairedTest(metric, level, 0, None, None, None, None, None, False, None)
    diffs = [y - x for x, y in pairs]
    n = len(pairs)
    diff = sum(diffs) / n
    ci = paired_bootstrap_ci(diffs, seed=seed, resamples=resamples)
    p = paired_permutation_test(diffs, seed=seed, resamples=resamples)
    return PairedTest(metric, level, n, sum(x for x, _ in pairs) / n, sum(y for _, y in pairs) / n,
                      diff, ci, p, False, None)  # significance: after the Holm step
