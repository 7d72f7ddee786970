"""Two result files of the same inputs, side by side: paired differences per metric and the
samples that got better or worse.

The statistics are the stress A/B's (``engine.paired``): a paired bootstrap interval of the
mean difference and a sign-flip permutation p-value, over the samples both runs define.
Two stress runs (rows with ``item_id``, ``level`` and ``repeat``) are compared exactly as
``noisegauge compare`` compares them (``engine.ab.paired_tests``: per golden question,
all noisy levels pooled), so the CLI and the report print the same numbers.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ..engine import catalogue
from ..engine.ab import paired_tests
from ..engine.paired import paired_bootstrap_ci, paired_permutation_test
from ..errors import InvalidInput

__all__ = ["MetricDiff", "SampleChange", "Comparison", "pair_rows", "compare_runs"]


@dataclass(frozen=True)
class MetricDiff:
    """This run minus the other, over ``n`` samples defined in both."""

    name: str
    n: int
    mean_this: float | None
    mean_other: float | None
    diff: float | None
    ci: tuple[float, float] | None
    p_value: float | None
    better: str | None  # "this", "other", or None (no clear difference, or no direction)


@dataclass(frozen=True)
class SampleChange:
    """One paired sample whose noise or precision moved; ``position`` indexes this run."""

    position: int
    other_position: int
    id: str
    noise_this: float | None
    noise_other: float | None
    precision_this: float | None
    precision_other: float | None

    @property
    def key(self) -> tuple[float, float]:
        """(change in noise sensitivity, change in precision), this minus other."""
        dn = (self.noise_this or 0.0) - (self.noise_other or 0.0)
        dp = (self.precision_this or 0.0) - (self.precision_other or 0.0)
        return round(dn, 9), round(dp, 9)


@dataclass(frozen=True)
class Comparison:
    other_label: str
    pairs: tuple[tuple[int, int], ...]  # (position in this run, position in the other)
    diffs: tuple[MetricDiff, ...]
    better: tuple[SampleChange, ...]
    worse: tuple[SampleChange, ...]
    unmatched_this: int
    unmatched_other: int
    paired_by: str
    n_better: int = 0  # all better / worse samples (the lists hold the biggest moves)
    n_worse: int = 0
    this_label: str = "this run"


def _key_of(rows: Sequence[Mapping[str, Any]]) -> list[str] | None:
    ids = [r.get("id") for r in rows]
    if any(i is None for i in ids) or len(set(map(str, ids))) != len(ids):
        return None
    return [str(i) for i in ids]


def pair_rows(this: Sequence[Mapping[str, Any]], other: Sequence[Mapping[str, Any]]
              ) -> tuple[list[tuple[int, int]], str]:
    """Pairs of positions: by id when both runs have unique ids, else by row index."""
    ka, kb = _key_of(this), _key_of(other)
    if ka is not None and kb is not None:
        where = {k: j for j, k in enumerate(kb)}
        pairs = [(i, where[k]) for i, k in enumerate(ka) if k in where]
        by = "id"
    else:
        def idx(rows: Sequence[Mapping[str, Any]]) -> dict[int, int]:
            return {int(r.get("index", p)): p for p, r in enumerate(rows)}
        ia, ib = idx(this), idx(other)
        pairs = [(ia[k], ib[k]) for k in sorted(ia) if k in ib]
        by = "row index"
    if not pairs:
        raise InvalidInput("the two result files share no sample (neither ids nor row indices "
                           "match); --compare needs results of the same inputs")
    return pairs, by


def _value(row: Mapping[str, Any], name: str) -> float | None:
    for key in ("metrics", "diagnostics"):
        block = row.get(key) or {}
        if name in block:
            return None if block[name] is None else float(block[name])
    return None


def _noise(row: Mapping[str, Any]) -> float | None:
    rel = _value(row, "noise_sensitivity_relevant")
    irr = _value(row, "noise_sensitivity_irrelevant")
    return None if rel is None or irr is None else rel + irr


def _diff(name: str, pairs: Sequence[tuple[int, int]], this: Sequence[Mapping[str, Any]],
          other: Sequence[Mapping[str, Any]], alpha: float, seed: int) -> MetricDiff:
    vals = [(a, b) for a, b in ((_value(this[i], name), _value(other[j], name)) for i, j in pairs)
            if a is not None and b is not None]
    if not vals:
        return MetricDiff(name, 0, None, None, None, None, None, None)
    diffs = [a - b for a, b in vals]
    n = len(vals)
    mean = sum(diffs) / n
    ci = paired_bootstrap_ci(diffs, seed=seed)
    p = paired_permutation_test(diffs, seed=seed, resamples=5000)
    better = None
    if p < alpha and (ci[0] > 0 or ci[1] < 0) and not catalogue.neutral(name):
        better = "this" if (mean > 0) != catalogue.lower_is_better(name) else "other"
    return MetricDiff(name, n, sum(a for a, _ in vals) / n, sum(b for _, b in vals) / n, mean, ci,
                      p, better)


#: How two stress runs are paired: the definition ``noisegauge compare`` uses.
STRESS_PAIRING = ("golden question, all noisy levels pooled (each question's mean over its "
                  "noisy levels and repeats), as `noisegauge compare` does")


def _is_stress(rows: Sequence[Mapping[str, Any]]) -> bool:
    return bool(rows) and all(k in r for r in rows for k in ("item_id", "level", "repeat"))


def _stress_diffs(this: Sequence[Mapping[str, Any]], other: Sequence[Mapping[str, Any]],
                  names: Sequence[str], row_diffs: Sequence[MetricDiff], alpha: float,
                  seed: int) -> tuple[MetricDiff, ...]:
    """The metrics' differences by ``engine.ab.paired_tests`` (other = A, this = B);
    names it does not test (diagnostics) keep their row-paired difference."""
    tested = [n for n in names if n in catalogue.family()]
    tests = {t.metric: t for t in paired_tests(other, this, metrics=tested, alpha=alpha,
                                                seed=seed) if t.level is None}
    out = []
    for d in row_diffs:
        if d.name not in tested:
            out.append(d)
            continue
        t = tests[d.name]
        better = {"b": "this", "a": "other"}.get(t.better or "")
        out.append(MetricDiff(d.name, t.n, t.mean_b, t.mean_a, t.diff, t.ci, t.p_value, better))
    return tuple(out)


def compare_runs(this: Sequence[Mapping[str, Any]], other: Sequence[Mapping[str, Any]],
                 names: Sequence[str], *, other_label: str = "other",
                 this_label: str = "this run", alpha: float = 0.05,
                 seed: int = 0, max_listed: int = 25) -> Comparison:
    """Per-metric paired differences (this minus other) and the samples whose noise
    sensitivity (both modes), or else precision, moved, biggest moves first."""
    pairs, by = pair_rows(this, other)
    diffs = tuple(_diff(n, pairs, this, other, alpha, seed) for n in names)
    if _is_stress(this) and _is_stress(other):
        diffs, by = _stress_diffs(this, other, names, diffs, alpha, seed), STRESS_PAIRING
    changes = []
    for i, j in pairs:
        ch = SampleChange(i, j, str(this[i].get("id") if this[i].get("id") is not None else f"row {i}"),
                          _noise(this[i]), _noise(other[j]), _value(this[i], "precision"),
                          _value(other[j], "precision"))
        if ch.key != (0.0, 0.0):
            changes.append(ch)
    # Better: less noise, or the same noise and more precision.
    better = sorted((c for c in changes if c.key[0] < 0 or (c.key[0] == 0 and c.key[1] > 0)),
                    key=lambda c: (c.key[0], -c.key[1]))
    worse = sorted((c for c in changes if c.key[0] > 0 or (c.key[0] == 0 and c.key[1] < 0)),
                   key=lambda c: (-c.key[0], c.key[1]))
    paired_this = {i for i, _ in pairs}
    paired_other = {j for _, j in pairs}
    return Comparison(other_label, tuple(pairs), diffs, tuple(better[:max_listed]),
                      tuple(worse[:max_listed]), len(this) - len(paired_this),
                      len(other) - len(paired_other), by, len(better), len(worse), this_label)
