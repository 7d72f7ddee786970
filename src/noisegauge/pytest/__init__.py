"""Assert RAG quality in tests: ``assert_scores(samples, noise_sensitivity_relevant="<=0.2")``.

>>> from noisegauge import FakeJudge
>>> from noisegauge.pytest import assert_scores
>>> rows = [{"user_input": "How long is the notice?",
...          "response": "The notice is 30 days. Refunds take 5 days.",
...          "reference": "The notice is 30 days.",
...          "retrieved_contexts": ["The notice is 30 days.", "Refunds take 5 days."]}]
>>> report = assert_scores(rows, judge=FakeJudge(), noise_sensitivity_relevant="<=0.2")
>>> try:
...     assert_scores(report, noise_sensitivity_irrelevant="<=0.2")
... except AssertionError as exc:
...     print(str(exc).splitlines()[0])
noisegauge: 1 of 1 thresholds failed (1 samples)

The failure message names the failed bars, the worst samples and their leaked claims.
Bars may come from ``[tool.noisegauge.thresholds]`` in pyproject.toml (see
``noisegauge.config``); keyword bars replace the file's bar for the same metric. The plugin
(``noisegauge.pytest_plugin``, registered through the ``pytest11`` entry point) adds
``pytest --noisegauge-report=report.html``: one HTML report of every evaluation in the session.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from typing import Any

from .._async import run_sync
from ..config import ProjectConfig, load_config
from ..engine.catalogue import family
from ..errors import InvalidInput
from ..judges.base import Judge
from ..report.digest import outcome_lines, sample_lines
from ..report.gate import GateReport
from ..runner.evaluate import Report, aevaluate
from ..scoring.metrics import Metric
from ..thresholds import Outcome, SampleFailure, Threshold, parse_thresholds

__all__ = ["ScoreAssertionError", "assert_scores", "aassert_scores", "failure_message"]


class ScoreAssertionError(AssertionError):
    """A quality bar was missed. ``outcomes`` and ``failures`` hold the details."""

    def __init__(self, message: str, outcomes: Sequence[Outcome],
                 failures: Sequence[SampleFailure], report: Report) -> None:
        super().__init__(message)
        self.outcomes = list(outcomes)
        self.failures = list(failures)
        self.report = report


def _config(config: ProjectConfig | str | os.PathLike[str] | bool | None) -> ProjectConfig:
    if isinstance(config, ProjectConfig):
        return config
    if config is False:
        return ProjectConfig()
    if config is None or config is True:
        return load_config()  # the nearest pyproject.toml above pytest's rootdir
    return load_config(config)


def _thresholds(given: Mapping[str, Any], cfg: ProjectConfig) -> list[Threshold]:
    explicit = parse_thresholds(given)
    named = {t.metric for t in explicit}
    merged = [t for t in cfg.thresholds if t.metric not in named] + explicit
    if not merged:
        where = f" (read {cfg.path})" if cfg.path else ""
        raise InvalidInput("assert_scores needs at least one bar, e.g. "
                           "assert_scores(samples, noise_sensitivity_relevant=\"<=0.2\"), or "
                           f"[tool.noisegauge.thresholds] in pyproject.toml{where}")
    return merged


def failure_message(report: Report, outcomes: Sequence[Outcome],
                    failures: Sequence[SampleFailure], *, worst: int = 3) -> str:
    """The text of a failed ``assert_scores``: bars, then the worst samples with their claims."""
    failed = [o for o in outcomes if not o.passed]
    st = report.stats.status
    counts = f"{len(report)} samples"
    if st.get("undefined") or st.get("error"):
        counts += f": {st.get('ok', 0)} ok, {st.get('undefined', 0)} undefined, " \
                  f"{st.get('error', 0)} error"
    head = f"noisegauge: {len(failed)} of {len(outcomes)} thresholds failed ({counts})"
    if not failed:
        head = f"noisegauge: {st.get('error', 0)} of {len(report)} samples could not be scored"
    lines = [head, *outcome_lines(outcomes)]
    names = [o.threshold.metric for o in outcomes]
    shown = failures[:worst]
    if shown:
        lines.append(f"worst samples ({len(shown)} of {len(failures)} that miss a bar or "
                     "could not be scored):")
        for f in shown:
            lines += sample_lines(f, names, indent="  ")
    return "\n".join(lines)


async def aassert_scores(report_or_samples: Any, /, *, judge: Judge | str | None = None,
                         llm: Any = None, metrics: Sequence[Metric | str] | None = None,
                         config: ProjectConfig | str | os.PathLike[str] | bool | None = None,
                         worst: int = 3, allow_errors: bool = False,
                         **thresholds: str) -> Report:
    """``assert_scores`` for async tests (inside a running event loop)."""
    __tracebackhide__ = True  # pytest shows the test's line and the message, not ours
    report, failed = await _checked(report_or_samples, judge=judge, llm=llm, metrics=metrics,
                                    config=config, worst=worst, allow_errors=allow_errors,
                                    **thresholds)
    if failed is not None:
        raise failed
    return report


async def _checked(report_or_samples: Any, /, *, judge: Judge | str | None, llm: Any,
                   metrics: Sequence[Metric | str] | None,
                   config: ProjectConfig | str | os.PathLike[str] | bool | None,
                   worst: int, allow_errors: bool,
                   **thresholds: str) -> tuple[Report, ScoreAssertionError | None]:
    """The report, and the assertion error to raise when a bar is missed (made here, raised
    by the caller: outside the event loop, so no asyncio frame comes with it)."""
    if judge is not None and llm is not None:
        raise TypeError("pass judge= or llm= (two names of one parameter), not both")
    cfg = _config(config)
    bars = _thresholds(thresholds, cfg)
    if isinstance(report_or_samples, Report):
        report = report_or_samples
    else:
        wanted: list[Metric | str] = list(metrics or cfg.metrics or [])
        present = {m.name if isinstance(m, Metric) else m for m in wanted}
        wanted += [t.metric for t in bars if t.metric not in present]
        chosen = llm if llm is not None else judge
        if chosen is not None and not isinstance(chosen, (str, Judge)):
            from ..judges.adapt import as_judge
            chosen = as_judge(chosen)
        report = await aevaluate(report_or_samples, wanted,
                                 judge=chosen if chosen is not None else (cfg.judge or "lexical"),
                                 progress=False)
    # Every metric of the family is in each row (one judged pass computes them all), so a
    # bar may name one the run did not ask for; an unknown name is a typo.
    known = {*report.metrics, *family()}
    missing = [t.metric for t in bars if t.metric not in known]
    if missing:
        raise InvalidInput(f"the report has no {', '.join(missing)} column(s) (it has "
                           f"{', '.join(report.metrics)}); score them or drop the bar")
    # Samples worth showing pull a *failed* bar the wrong way (GateReport keeps just those).
    gate = GateReport.from_rows(report.rows(), report.metrics, bars, title="assert_scores")
    outcomes, failures = list(gate.outcomes), list(gate.failures)
    errors = report.stats.status.get("error", 0)
    if any(not o.passed for o in outcomes) or (errors and not allow_errors):
        return report, ScoreAssertionError(failure_message(report, outcomes, failures,
                                                           worst=worst),
                                           outcomes, failures, report)
    return report, None


def assert_scores(report_or_samples: Any, /, *, judge: Judge | str | None = None,
                  llm: Any = None, metrics: Sequence[Metric | str] | None = None,
                  config: ProjectConfig | str | os.PathLike[str] | bool | None = None,
                  worst: int = 3, allow_errors: bool = False, **thresholds: str) -> Report:
    """Score ``report_or_samples`` (a ``Report``, or anything ``evaluate`` takes) and fail
    with a readable message when a bar is missed.

    Bars are keyword arguments (``faithfulness=">=0.8"``) or come from
    ``[tool.noisegauge.thresholds]`` (``config``: a path, False to ignore the file). A bar
    is checked on the metric's mean; error rows fail the assertion unless ``allow_errors``.
    ``judge``/``llm``: the judge for samples (default: the config's, else ``lexical``).
    Returns the ``Report`` so a test can look further.
    """
    __tracebackhide__ = True  # pytest shows the test's line and the message, not ours
    report, failed = run_sync(_checked(report_or_samples, judge=judge, llm=llm, metrics=metrics,
                                       config=config, worst=worst, allow_errors=allow_errors,
                                       **thresholds),
                              hint="use `await aassert_scores(...)`")
    if failed is not None:
        raise failed  # here, outside the loop: the failure is not buried under its frames
    return report
