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
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from .._async import run_sync
from ..engine.ab import PairedTest, paired_tests
from ..errors import InvalidInput
from .pipelines import Pipeline, PipelineInterrupted
from .stress_report import StressReport, read_rows
from .sweep import astress

__all__ = ["PairedTest", "CompareReport", "compare_rows", "compare_reports", "compare_dirs",
           "acompare", "compare"]


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


def compare_rows(rows_a: Iterable[Mapping[str, Any]], rows_b: Iterable[Mapping[str, Any]], *,
                 a: str = "A", b: str = "B", metrics: Sequence[str] | None = None,
                 alpha: float = 0.05, seed: int = 0, resamples: int = 10_000) -> CompareReport:
    """Paired tests from two sets of ``results.jsonl`` rows of the same plan (``metrics``:
    the family by default; see ``engine.ab``)."""
    return CompareReport(a, b, paired_tests(rows_a, rows_b, metrics=metrics, alpha=alpha,
                                            seed=seed, resamples=resamples), alpha)


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
