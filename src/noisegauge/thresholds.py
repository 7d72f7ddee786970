"""Quality bars on a run: ``noise_sensitivity_relevant="<=0.2"``, ``faithfulness=">=0.8"``.

Shared by ``assert_scores`` (pytest), ``noisegauge score --config`` and the JUnit and
Markdown writers. A bar is checked against the metric's mean over the run; a mean that no
sample defined fails, since it cannot show the bar was met. Per sample, the same bar tells
which samples pull the mean the wrong way (the "worst samples" of a failure message).

>>> t = Threshold.parse("noise_sensitivity_relevant", "<= 0.2")
>>> t.passes(0.1), t.passes(0.3), str(t)
(True, False, 'noise_sensitivity_relevant <= 0.2')
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from .engine.catalogue import canonical
from .engine.summary import MetricSummary
from .errors import InvalidInput

__all__ = ["Op", "Threshold", "Outcome", "SampleFailure", "parse_thresholds", "check",
           "failing_samples", "canonical_metric"]

Op = Literal["<=", "<", ">=", ">"]
_SPEC = re.compile(r"^\s*(<=|>=|<|>|=<|=>)\s*([-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?)\s*$")
_FLIP = {"=<": "<=", "=>": ">="}

def canonical_metric(name: str) -> str:
    """Our column name for ``name`` (RAGChecker/Ragas aliases accepted)."""
    return canonical(name)


@dataclass(frozen=True)
class Threshold:
    """``metric op value``: the run's mean must satisfy it."""

    metric: str
    op: Op
    value: float

    @classmethod
    def parse(cls, metric: str, spec: str | Threshold) -> Threshold:
        """From ``"<=0.2"``, ``">= 0.8"``; a bare number is refused (which way is ambiguous)."""
        if isinstance(spec, Threshold):
            return spec
        name = canonical_metric(metric)
        m = _SPEC.match(spec) if isinstance(spec, str) else None
        if m is None:
            raise InvalidInput(
                f"threshold for {name}: {spec!r} is not a bar; write it as a comparison, "
                f'e.g. {name}="<=0.2" (lower is better) or {name}=">=0.8"')
        value = float(m.group(2))
        if not math.isfinite(value):
            raise InvalidInput(f"threshold for {name}: {spec!r} is not a finite number")
        op = _FLIP.get(m.group(1), m.group(1))
        return cls(name, op, value)  # type: ignore[arg-type]

    def passes(self, value: float) -> bool:
        if self.op == "<=":
            return value <= self.value
        if self.op == "<":
            return value < self.value
        if self.op == ">=":
            return value >= self.value
        return value > self.value

    @property
    def lower_is_better(self) -> bool:
        return self.op in ("<=", "<")

    def excess(self, value: float) -> float:
        """How far ``value`` is on the wrong side of the bar (<= 0 when it passes)."""
        return value - self.value if self.lower_is_better else self.value - value

    def __str__(self) -> str:
        return f"{self.metric} {self.op} {self.value:g}"


def parse_thresholds(specs: Mapping[str, Any]) -> list[Threshold]:
    """``{"faithfulness": ">=0.8", ...}`` -> thresholds, in the given order."""
    out = []
    for name, spec in specs.items():
        if isinstance(spec, (int, float)) and not isinstance(spec, bool):
            key = canonical_metric(name)
            raise InvalidInput(f"threshold for {key}: a bare number ({spec!r}) does not say which "
                               f'way is good; write {key}="<={spec}" or {key}=">={spec}" '
                               "(a string)")
        if not isinstance(spec, (str, Threshold)):
            raise InvalidInput(f"threshold for {name}: expected a string such as '<=0.2', "
                               f"got {type(spec).__name__} {spec!r}")
        out.append(Threshold.parse(name, spec))
    return out


@dataclass(frozen=True)
class Outcome:
    """One threshold checked against a run."""

    threshold: Threshold
    mean: float | None
    ci: tuple[float, float] | None
    n: int
    undefined: int
    errors: int
    passed: bool

    @property
    def message(self) -> str:
        t = self.threshold
        if self.mean is None:
            return (f"{t}: no sample defined {t.metric} ({self.undefined} undefined, "
                    f"{self.errors} errors), so the bar cannot be shown to hold")
        ci = (f" (95% CI {self.ci[0]:.3f}-{self.ci[1]:.3f})"
              if self.ci is not None and self.n > 1 else "")
        return f"{t}: mean {self.mean:.3f}{ci} over {self.n} samples"


def check(thresholds: Sequence[Threshold], summary: Mapping[str, MetricSummary]) -> list[Outcome]:
    """Each threshold against the run's summary (a metric missing from it fails)."""
    out = []
    for t in thresholds:
        s = summary.get(t.metric)
        if s is None:
            out.append(Outcome(t, None, None, 0, 0, 0, False))
            continue
        passed = s.mean is not None and t.passes(s.mean)
        out.append(Outcome(t, s.mean, s.ci, s.n, s.undefined, s.errors, passed))
    return out


@dataclass(frozen=True)
class SampleFailure:
    """A sample that misses a bar on its own (or could not be scored)."""

    index: int
    row: Mapping[str, Any]
    #: (threshold, the sample's value) for each bar this sample misses.
    missed: tuple[tuple[Threshold, float], ...]

    @property
    def error(self) -> bool:
        return self.row.get("status") == "error"

    @property
    def id(self) -> str:
        rid = self.row.get("id")
        return str(rid) if rid is not None else f"row {self.index}"

    @property
    def worst(self) -> float:
        return max((t.excess(v) for t, v in self.missed), default=math.inf)


def failing_samples(rows: Iterable[Mapping[str, Any]],
                    thresholds: Sequence[Threshold]) -> list[SampleFailure]:
    """Error rows, then samples missing a bar on their own, worst excess first."""
    errors: list[SampleFailure] = []
    missing: list[SampleFailure] = []
    for i, row in enumerate(rows):
        index = row.get("index", i)
        index = index if isinstance(index, int) else i
        if row.get("status") == "error":
            errors.append(SampleFailure(index, row, ()))
            continue
        metrics = row.get("metrics") or {}
        missed = tuple((t, float(metrics[t.metric])) for t in thresholds
                       if isinstance(metrics.get(t.metric), (int, float))
                       and not t.passes(float(metrics[t.metric])))
        if missed:
            missing.append(SampleFailure(index, row, missed))
    missing.sort(key=lambda f: (-f.worst, f.index))
    return errors + missing
