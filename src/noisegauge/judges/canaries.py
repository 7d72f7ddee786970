"""Judge canaries: probes with known answers, for any judge, before a run and during it.

A judge that calls a sentence "contradicted" by itself, or copes with English but not with
Korean, makes every number of a run meaningless while the run still says ``ok``. The
canaries catch that for the price of a few calls (an LLM judge packs every check probe into
one call and the extraction probes into one per language):

- a claim against its own text: ``entailed``;
- a number, a date and a plan name swapped: anything but ``entailed``;
- a claim against an unrelated premise: ``neutral``;
- a sentence with two facts: exactly two claims, neither of them the question;

each in English and Korean. ``CANARY_VERSION`` names the set; it belongs in a run's
report (``CanaryReport.to_dict()``), not in the judge's identity, so changing the probes
never invalidates cached answers.

A run passes when at least ``THRESHOLD`` of the probes pass and every check kind passes at
least once (a judge that answers "neutral" to everything fails the first kind).
``watch(judge, report)`` returns the judge with a few probes mixed in while it works
(one after every ``every`` checks that reach it), so a server that changes model or degrades
under load shows up in the same report.
"""

from __future__ import annotations

import asyncio
import contextvars
import math
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, cast

from ..errors import JudgeError
from ..verdicts import Verdict
from .base import BatchChecker, Judge, JudgeWrapper, SampleJudge, Usage, metered

__all__ = ["CANARY_VERSION", "PROBES", "THRESHOLD", "CanaryReport", "Probe", "ProbeResult",
           "run_canaries", "watch"]

CANARY_VERSION = "ng-canaries-1"
THRESHOLD = 0.75
CHECK_KINDS = ("entailed", "swap", "unrelated")


@dataclass(frozen=True)
class Probe:
    """One question with a known answer. ``kind``: entailed, swap, unrelated (check
    ``claim`` against ``text``) or extract (claims of ``text`` for ``question``)."""

    id: str
    language: str
    kind: str
    text: str
    claim: str = ""
    question: str = ""


def _probes(lang: str, own: str, swaps: Sequence[tuple[str, str, str]], unrelated: str,
            two_facts: str, question: str) -> tuple[Probe, ...]:
    return (Probe(f"{lang}-self", lang, "entailed", own, own),
            *(Probe(f"{lang}-{name}-swap", lang, "swap", premise, claim)
              for name, premise, claim in swaps),
            Probe(f"{lang}-unrelated", lang, "unrelated", unrelated, own),
            Probe(f"{lang}-two-facts", lang, "extract", two_facts, question=question))


PROBES: tuple[Probe, ...] = (
    *_probes("en", "Refunds are available within 30 days of purchase.", [
        ("number", "The Pro plan costs $20 per month.", "The Pro plan costs $25 per month."),
        ("date", "The spring sale ends on March 31, 2024.",
         "The spring sale ends on April 30, 2024."),
        ("plan", "The Enterprise plan requires 90 days' notice to cancel.",
         "The Pro plan requires 90 days' notice to cancel.")],
        "The office cafeteria serves lunch from noon to 2 pm.",
        "The Pro plan costs $20 per month and includes 5 user seats.",
        "What does the Pro plan cost and include?"),
    *_probes("ko", "구매 후 30일 이내에 환불을 받을 수 있습니다.", [
        ("number", "프로 요금제는 월 20달러입니다.", "프로 요금제는 월 25달러입니다."),
        ("date", "봄 세일은 2024년 3월 31일에 끝납니다.", "봄 세일은 2024년 4월 30일에 끝납니다."),
        ("plan", "엔터프라이즈 요금제는 해지하려면 90일 전에 통보해야 합니다.",
         "프로 요금제는 해지하려면 90일 전에 통보해야 합니다.")],
        "사내 식당은 정오부터 오후 2시까지 점심을 제공합니다.",
        "프로 요금제는 월 20달러이며 사용자 5명이 포함됩니다.",
        "프로 요금제의 가격과 포함 사항은 무엇인가요?"),
)

_WORDS = re.compile(r"[\W_]+", re.UNICODE)


def _norm(text: str) -> str:
    return _WORDS.sub(" ", text.casefold()).strip()


@dataclass(frozen=True)
class ProbeResult:
    probe: Probe
    passed: bool
    got: str                    #: the verdict, or the claims joined by " | "
    error: str | None = None    #: why the judge gave no answer

    def to_dict(self) -> dict[str, Any]:
        out = {"id": self.probe.id, "kind": self.probe.kind, "language": self.probe.language,
               "passed": self.passed, "got": self.got}
        if self.error is not None:
            out["error"] = self.error
        return out


def _grade(probe: Probe, answer: Verdict | list[str]) -> ProbeResult:
    if isinstance(answer, list):
        question = _norm(probe.question)
        echoes = any(question and question in _norm(c) for c in answer)
        passed = len(answer) == 2 and not echoes
        return ProbeResult(probe, passed, " | ".join(answer))
    wanted = {"entailed": answer is Verdict.ENTAILED, "swap": answer is not Verdict.ENTAILED,
              "unrelated": answer is Verdict.NEUTRAL}
    return ProbeResult(probe, wanted[probe.kind], answer.value)


async def _run(judge: Judge, probe: Probe) -> ProbeResult:
    try:
        if probe.kind == "extract":
            return _grade(probe, list(await judge.extract(probe.text, probe.question)))
        (verdict,) = await judge.check(probe.text, [probe.claim])
        return _grade(probe, verdict)
    except JudgeError as exc:
        return ProbeResult(probe, False, "", f"{type(exc).__name__}: {exc}")


@dataclass
class CanaryReport:
    """Probe results before the run (``results``) and during it (``during``)."""

    version: str = CANARY_VERSION
    results: list[ProbeResult] = field(default_factory=list)
    during: list[ProbeResult] = field(default_factory=list)
    usage: Usage = field(default_factory=Usage)  #: what the probes cost (not in the run's)
    #: Why no probe ran although canaries were on (every answer came from the cache...).
    not_run: str | None = None

    @property
    def passed(self) -> int:
        return sum(r.passed for r in self.results)

    @property
    def total(self) -> int:
        return len(self.results)

    @property
    def ok(self) -> bool:
        """At least ``THRESHOLD`` passed, and every check kind passed at least once."""
        if not self.results:
            return True
        kinds = {r.probe.kind for r in self.results if r.passed}
        present = {r.probe.kind for r in self.results}
        return self.passed >= THRESHOLD * self.total and all(
            k in kinds for k in CHECK_KINDS if k in present)

    def failures(self) -> list[ProbeResult]:
        return [r for r in self.results + self.during if not r.passed]

    def score(self) -> str:
        """``9/12 (ng-canaries-1)``: for a judge's identity report (not its cache key)."""
        return f"{self.passed}/{self.total} ({self.version})"

    def line(self) -> str:
        """``judge canaries 9/12 (ng-canaries-1)``, plus the during-run count."""
        text = f"judge canaries {self.score()}"
        if self.during:
            text += f", during the run {sum(r.passed for r in self.during)}/{len(self.during)}"
        return text

    def explain(self) -> str:
        """What the canary line measures, and what to do below the bar."""
        need = math.ceil(THRESHOLD * self.total)
        failed = [r.probe.id for r in self.results if not r.passed]
        what = (f"{self.passed} of {self.total} known-answer probes passed (a claim against its "
                f"own text, a swapped number, date or plan, an unrelated premise, a two-fact "
                f"extraction, in English and Korean)"
                + (f"; failed: {', '.join(failed)}" if failed else "")
                + f"; the bar is {need}/{self.total} with each kind of check passed once")
        if self.ok:
            return f"{what}. At or above it, the judge reads these basics right."
        return (f"{what}. Below it this judge's scores are not trustworthy: check that the "
                "endpoint serves the model you named, try a stronger model, or compare with "
                "--judge lexical; --strict stops before the rows cost anything.")

    def warning(self) -> str | None:
        """A loud message when the judge looks unfit, naming what it got wrong."""
        if self.ok:
            return None
        errors: dict[str, list[str]] = {}  # one line per distinct error, not per probe
        for r in self.failures():
            errors.setdefault(r.error or repr(r.got), []).append(r.probe.id)
        wrong = "; ".join(f"{', '.join(ids)}: {what}" for what, ids in list(errors.items())[:6])
        return (f"{self.line()} is below the bar ({THRESHOLD:.0%} and every kind of check "
                f"passed once): this judge's scores are not trustworthy. Failed: {wrong}")

    def to_dict(self) -> dict[str, Any]:
        return {"version": self.version, "passed": self.passed, "total": self.total,
                "ok": self.ok, "results": [r.to_dict() for r in self.results],
                "during": [r.to_dict() for r in self.during], "usage": self.usage.to_dict()}


async def run_canaries(judge: Judge, probes: Sequence[Probe] = PROBES) -> CanaryReport:
    """Every probe, at once (so a batching judge packs them into few calls)."""
    report = CanaryReport()
    if isinstance(judge, SampleJudge):
        return report  # it judges whole stored samples: nothing to probe
    with metered() as usage:
        report.results = list(await asyncio.gather(*(_run(judge, p) for p in probes)))
    report.usage = usage
    return report


class _Watch(JudgeWrapper):
    """A judge that runs one canary probe after every ``every`` checks it passes on."""

    def __init__(self, judge: Judge, report: CanaryReport, every: int, limit: int) -> None:
        super().__init__(judge)
        self.report = report
        self._every = max(1, every)
        self._limit = limit
        self._checks = 0
        self._next = 0
        self._tasks: set[asyncio.Task[None]] = set()

    async def extract(self, text: str, question: str | None = None) -> list[str]:
        return await self.inner.extract(text, question)

    async def check(self, premise: str, claims: Sequence[str]) -> list[Verdict]:
        self._tick()
        return await self.inner.check(premise, claims)

    def _tick(self) -> None:
        self._checks += 1
        if self._checks % self._every or len(self.report.during) + len(self._tasks) >= self._limit:
            return
        checks = [p for p in PROBES if p.kind != "extract"]
        probe = checks[self._next % len(checks)]
        self._next += 1
        # Outside the sample's meter and batch: the probe is billed to the report only.
        task = contextvars.Context().run(asyncio.ensure_future, self._probe(probe))
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def _probe(self, probe: Probe) -> None:
        with metered() as usage:
            result = await _run(self.inner, probe)
        self.report.during.append(result)
        self.report.usage.add(usage)

    async def finish(self) -> None:
        """Wait for probes still running (call before reading the report)."""
        if self._tasks:
            await asyncio.gather(*self._tasks, return_exceptions=True)


class _BatchWatch(_Watch):
    async def check_many(self, premises: Sequence[str],
                         claims: Sequence[str]) -> list[list[Verdict]]:
        self._tick()
        return await cast(BatchChecker, self.inner).check_many(premises, claims)


def watch(judge: Judge, report: CanaryReport, *, every: int = 50, limit: int = 10) -> Judge:
    """``judge``, running one probe after every ``every`` checks (at most ``limit`` in all),
    results in ``report.during``. Same identity, so caching and grouping are unchanged."""
    if isinstance(judge, SampleJudge):
        return judge
    cls = _BatchWatch if isinstance(judge, BatchChecker) else _Watch
    return cls(judge, report, every, limit)
