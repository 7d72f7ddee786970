"""A run judged against its bars: what the JUnit and Markdown writers (and CI) show.

Built from result rows in one pass; only the rows that fail are kept, so a CI run over a
large file stays small in memory.
"""

from __future__ import annotations

import time
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from ..engine.summary import MetricSummary
from ..judges.base import Usage
from ..thresholds import Outcome, SampleFailure, Threshold, check, failing_samples
from .totals import RunStats

__all__ = ["GateReport"]


@dataclass(frozen=True)
class GateReport:
    """A run's totals, its bars' outcomes and the samples that fail on their own."""

    title: str
    rows: int
    status: Mapping[str, int]
    summary: Mapping[str, MetricSummary]
    outcomes: tuple[Outcome, ...]
    failures: tuple[SampleFailure, ...]
    judges: tuple[Mapping[str, Any], ...] = ()
    usage: Usage = field(default_factory=Usage)
    elapsed: float = 0.0
    timestamp: float = field(default_factory=time.time)

    @property
    def passed(self) -> bool:
        return all(o.passed for o in self.outcomes)

    @property
    def errors(self) -> int:
        return int(self.status.get("error", 0))

    @classmethod
    def from_rows(cls, rows: Iterable[Mapping[str, Any]], metric_names: Sequence[str],
                  thresholds: Sequence[Threshold], *, title: str,
                  judges: Sequence[Mapping[str, Any]] = (), elapsed: float = 0.0) -> GateReport:
        """One pass over result rows (``score --out`` shape, e.g. ``Report.rows()``)."""
        names = tuple(dict.fromkeys([*metric_names, *(t.metric for t in thresholds)]))
        stats = RunStats(names)
        kept: list[Mapping[str, Any]] = []
        bars = list(thresholds)
        for i, row in enumerate(rows):
            stats.add(i, row, resumed=False)
            if failing_samples([row], bars):
                kept.append({**row, "index": row.get("index", i)})
            if not judges and isinstance(row.get("judges"), list):
                judges = tuple(j for j in row["judges"] if isinstance(j, Mapping))
        summary = stats.summary()
        # Only bars that failed on the mean send samples to the list; errors always do.
        failed = [o.threshold for o in check(bars, summary) if not o.passed]
        return cls(title=title, rows=stats.rows, status=dict(stats.status), summary=summary,
                   outcomes=tuple(check(bars, summary)),
                   failures=tuple(failing_samples(kept, failed)), judges=tuple(judges),
                   usage=stats.usage, elapsed=elapsed)
