"""A/B: two pipelines on the *same* noisy contexts, with a paired test per metric.

The unit of pairing is the golden question: for each level (and for all noisy levels
pooled, ``level: null``) a question's metric is averaged over repeats for A and for B, and the
test is run on the differences B - A: a sign-flip permutation p-value (exact up to 12
non-zero differences) and a paired bootstrap interval of the mean difference (10,000
resamples, BCa with scipy). Every metric is tested at once, so the p-values of one level are
Holm-adjusted across the metrics (``p_adjusted``); a difference is called real when the
adjusted p is below ``alpha`` and the interval excludes 0.
"""

from __future__ import annotations

import json
from collections import defaultdict
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass, replace
from pathlib import Path
from typing import Any

from .._async import run_sync
from ..engine import catalogue
from ..engine.paired import holm, paired_bootstrap_ci, paired_permutation_test
from ..errors import InvalidInput
from .pipelines import Pipeline, PipelineInterrupted
from .stress_report import StressReport, read_rows
from .sweep import astress

__all__ = ["PairedTest", "CompareReport", "compare_rows", "compare_reports", "compare_dirs",
           "acompare", "compare"]


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


@dataclass(frozen=True)
class CompareReport:
    a: str
    b: str
    tests: tuple[PairedTest, ...]
    alpha: float
    report_a: StressReport | None = None
    report_b: StressReport | None = None

    def test(self, metric: str, level: int | None = None) -> PairedTest:
        return next(t for t in self.tests if t.metric == metric and t.level == level)

    def to_dict(self) -> dict[str, Any]:
        return {"a": self.a, "b": self.b, "alpha": self.alpha,
                "tests": [{**asdict(t), "ci": list(t.ci) if t.ci else None} for t in self.tests]}

    def write(self, out_dir: str | Path) -> Path:
        """``compare.json``, plus each side's full stress output under ``a/`` and ``b/``."""
        d = Path(out_dir)
        d.mkdir(parents=True, exist_ok=True)
        for name, report in (("a", self.report_a), ("b", self.report_b)):
            if report is not None:
                report.write(d / name)
        path = d / "compare.json"
        path.write_text(json.dumps(self.to_dict(), indent=1) + "\n", encoding="utf-8")
        return path


def _key(row: Mapping[str, Any]) -> tuple[str, int, int]:
    return (str(row["item_id"]), int(row["level"]), int(row["repeat"]))


def compare_rows(rows_a: Iterable[Mapping[str, Any]], rows_b: Iterable[Mapping[str, Any]], *,
                 a: str = "A", b: str = "B", metrics: Sequence[str] | None = None,
                 alpha: float = 0.05, seed: int = 0, resamples: int = 10_000) -> CompareReport:
    """Paired tests from two sets of ``results.jsonl`` rows of the same plan (``metrics``:
    the family by default)."""
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
    return CompareReport(a, b, tuple(tests), alpha)


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


def compare_reports(report_a: StressReport, report_b: StressReport, *, a: str = "A",
                    b: str = "B", **kwargs: Any) -> CompareReport:
    result = compare_rows([r.result_row() for r in report_a.rows],
                          [r.result_row() for r in report_b.rows], a=a, b=b, **kwargs)
    return CompareReport(result.a, result.b, result.tests, result.alpha, report_a, report_b)


def compare_dirs(dir_a: str | Path, dir_b: str | Path, **kwargs: Any) -> CompareReport:
    """Compare two ``noisegauge stress`` output directories (their ``results.jsonl``)."""
    rows = []
    for d in (dir_a, dir_b):
        path = Path(d) / "results.jsonl"
        if not path.is_file():
            raise InvalidInput(f"{d}: no results.jsonl; is it a `noisegauge stress --out` directory?")
        rows.append(read_rows(path))
    kwargs.setdefault("a", str(dir_a))
    kwargs.setdefault("b", str(dir_b))
    return compare_rows(rows[0], rows[1], **kwargs)


async def acompare(golden: Any, *, pipelines: Sequence[str | Pipeline | Callable[..., Any]],
                   alpha: float = 0.05, **stress_kwargs: Any) -> CompareReport:
    """Run ``astress`` for two pipelines with identical noise settings, then test the pairs."""
    if len(pipelines) != 2:
        raise InvalidInput(f"compare needs exactly two pipelines, got {len(pipelines)}")
    from .golden import load_golden
    items = load_golden(golden)  # read once so both runs see the very same items
    reports = [await astress(items, pipeline=p, **stress_kwargs) for p in pipelines]
    labels = [p if isinstance(p, str) else f"pipeline {i + 1}" for i, p in enumerate(pipelines)]
    return compare_reports(reports[0], reports[1], a=labels[0], b=labels[1], alpha=alpha,
                           seed=int(stress_kwargs.get("seed", 0)))


def compare(golden: Any, **kwargs: Any) -> CompareReport:
    """Synchronous ``acompare``; raises inside a running event loop."""
    try:
        return run_sync(acompare(golden, **kwargs), hint="use `await acompare(...)`")
    except PipelineInterrupted as exc:  # a pipeline's KeyboardInterrupt stops the run
        raise KeyboardInterrupt(str(exc)) from None
