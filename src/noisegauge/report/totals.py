"""Run totals kept while rows stream by: per-metric values (8 bytes each), counts, usage."""

from __future__ import annotations

from array import array
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from ..engine import catalogue
from ..engine.summary import MetricSummary, interval
from ..judges.base import Usage
from ..leaks.aggregate import Agreement, agreement_slot

__all__ = ["RunStats", "UNCERTAIN_HIGH"]

#: From this share of uncertain verdicts on, the summary suggests a stronger judge.
UNCERTAIN_HIGH = 0.10


@dataclass
class RunStats:
    """Totals of one run. ``usage`` covers every row in the output, ``run_usage`` only the
    judge work done by this process (resumed rows cost nothing now)."""

    metric_names: tuple[str, ...]
    rows: int = 0
    status: dict[str, int] = field(default_factory=lambda: {"ok": 0, "undefined": 0, "error": 0})
    resumed: int = 0
    usage: Usage = field(default_factory=Usage)
    run_usage: Usage = field(default_factory=Usage)
    #: (row index, error kind, reason) of the first errors, for the run's message.
    first_errors: list[tuple[int, str, str]] = field(default_factory=list)
    #: error kind (``transport``, ``output``, ``input``...) -> rows.
    error_kinds: dict[str, int] = field(default_factory=dict)
    _values: dict[str, array[float]] = field(default_factory=dict)
    _undefined: dict[str, int] = field(default_factory=dict)
    #: check -> [verdicts in the judge's uncertainty band, verdicts] (scored judges only)
    _doubt: dict[str, list[int]] = field(default_factory=dict)
    #: irrelevant-noise claims whose mode hangs on a possible paraphrase (``paraphrase_doubt``)
    paraphrase_doubts: int = 0
    #: chunks by labels vs the judge: both relevant, labels only, judge only, neither
    _agree: list[int] = field(default_factory=lambda: [0, 0, 0, 0])

    def add(self, index: int, row: Mapping[str, Any], *, resumed: bool) -> None:
        """Count one output row (the CONTRACTS row shape)."""
        self.rows += 1
        status = str(row.get("status"))
        self.status[status] = self.status.get(status, 0) + 1
        usage = Usage.from_dict(dict(row.get("usage") or {}))
        self.usage.add(usage)
        if resumed:
            self.resumed += 1
        else:
            self.run_usage.add(usage)
        if status == "error":
            kind = str(row.get("error_kind") or "other")
            self.error_kinds[kind] = self.error_kinds.get(kind, 0) + 1
            if len(self.first_errors) < 20:
                self.first_errors.append((index, kind, str(row.get("reason"))))
            return
        for check, (u, n) in (row.get("uncertain") or {}).items():
            acc = self._doubt.setdefault(str(check), [0, 0])
            acc[0] += int(u)
            acc[1] += int(n)
        self.paraphrase_doubts += sum(
            1 for c in row.get("response_claims") or ()
            if isinstance(c, Mapping) and c.get("paraphrase_doubt"))
        for chunk in row.get("chunks") or ():
            slot = agreement_slot(chunk) if isinstance(chunk, Mapping) else None
            if slot is not None:
                self._agree[slot] += 1
        metrics = row.get("metrics") or {}
        for name in self.metric_names:
            value = metrics.get(name)
            if value is None:
                self._undefined[name] = self._undefined.get(name, 0) + 1
            else:
                self._values.setdefault(name, array("d")).append(float(value))

    def summary(self) -> dict[str, MetricSummary]:
        """Per metric: mean, 95% interval, n defined, undefined, errors."""
        out: dict[str, MetricSummary] = {}
        for name in self.metric_names:
            values = self._values.get(name, array("d"))
            mean, ci, method = interval(values)
            out[name] = MetricSummary(name, mean, ci, len(values), self._undefined.get(name, 0),
                                      self.status.get("error", 0), method)
        return out

    def agreement(self) -> Agreement | None:
        """Labels against the judge's relevance (``relevance="both"``), else None."""
        return Agreement(*self._agree) if any(self._agree) else None

    def uncertain_shares(self) -> dict[str, float]:
        """Per metric: the share of the verdicts it reads that lie in the judge's uncertainty
        band (those still count as not entailed). Empty when the judge gave no scores."""
        out: dict[str, float] = {}
        for name in self.metric_names:
            checks = [self._doubt[c] for c in _checks(name) if c in self._doubt]
            total = sum(n for _, n in checks)
            if total:
                out[name] = sum(u for u, _ in checks) / total
        return out

    def uncertain_hint(self, high: float = UNCERTAIN_HIGH) -> str | None:
        """One line for the summary when many verdicts are uncertain, else None."""
        total = sum(n for _, n in self._doubt.values())
        share = sum(u for u, _ in self._doubt.values()) / total if total else 0.0
        if share < high:
            return None
        return (f"{share:.0%} of verdicts are uncertain with the offline judge; an LLM judge "
                "will be more reliable here (see \"uncertain\" in each claim's evidence)")


    def paraphrase_hint(self) -> str | None:
        """One line for the summary when some noise's mode hangs on a possible paraphrase."""
        n = self.paraphrase_doubts
        if not n:
            return None
        return (f"{n:,} irrelevant-noise claim{'s' if n != 1 else ''} may be relevant noise: the "
                "chunk it came from is about what a reference claim says, in other words the "
                "offline judge cannot match; --judge openai:MODEL reads paraphrases (see "
                "\"paraphrase_doubt\" in each claim's evidence)")


def _checks(name: str) -> tuple[str, ...]:
    try:
        return catalogue.spec(name).checks
    except KeyError:  # a column the catalogue does not know (a custom Metric subclass)
        return ()
