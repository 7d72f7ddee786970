"""What a run computes: the metrics, grouped by judge so each sample is judged once per judge.

Every metric reads its number from the same judged pass (``ascore_sample``), so asking for
all of them costs the judge calls of one. Metrics whose judges have the same identity share
a group (two ``get_judge("lexical")`` objects are one judge).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from ..engine import catalogue
from ..engine.metrics import Compat, MetricValue, check_compat
from ..errors import InvalidInput
from ..infra.store import JudgeCache
from ..judges.base import Judge, Usage, judge_identity
from ..judges.cached import with_cache
from ..judges.registry import get_judge
from ..scoring.labels import RelevanceMode, check_relevance
from ..scoring.metrics import Metric, NoiseSensitivity, metric_for
from ..scoring.results import JudgeEvidence, SampleResult, Status

__all__ = ["JudgeGroup", "Plan", "aclose_judges", "build_plan", "merge",
           "resolve_metrics"]


def resolve_metrics(metrics: Sequence[Metric | str] | str | None, judge: Judge) -> list[Metric]:
    """Metric objects from objects or names (``"noise_sensitivity"`` means both modes,
    ``"all"`` or None every RAGChecker metric)."""
    if metrics is None:
        metrics = ["all"]
    elif isinstance(metrics, str):
        metrics = [m.strip() for m in metrics.split(",") if m.strip()]
    out: list[Metric] = []
    for m in metrics:
        if isinstance(m, Metric):
            out.append(m)
            continue
        if not isinstance(m, str):
            raise InvalidInput(f"a metric must be a Metric object or a name, got {type(m).__name__}")
        name = catalogue.canonical(m)
        if name == "all":
            out += resolve_metrics(list(catalogue.family()), judge)
        elif name == "noise_sensitivity":
            out += resolve_metrics(["noise_sensitivity_relevant", "noise_sensitivity_irrelevant"],
                                   judge)
        elif name in catalogue.family() or name in catalogue.names("extra"):
            out.append(metric_for(name, judge))
        else:
            known = ", ".join([*catalogue.family(), *catalogue.names("extra"),
                               "noise_sensitivity", "all"])
            raise InvalidInput(f"unknown metric {m!r}; known: {known}")
    seen: dict[str, Metric] = {}
    for m in out:
        if m.name in seen and _group_key(m.judge) != _group_key(seen[m.name].judge):
            raise InvalidInput(f"two metrics fill the column {m.name!r} with different judges; "
                               "evaluate them in separate runs to compare judges")
        seen.setdefault(m.name, m)
    return list(seen.values())  # one column per name, first wins


def _plain(identity: dict[str, Any]) -> dict[str, Any]:
    """The identity as plain JSON values (it goes into rows and the journal)."""
    plain: dict[str, Any] = json.loads(json.dumps(identity, sort_keys=True, default=str))
    return plain


def _group_key(judge: Any) -> str:
    if callable(getattr(judge, "identity", None)):
        return json.dumps(judge_identity(judge), sort_keys=True, default=str)
    return f"object:{id(judge)}"  # no identity(): only the same object is the same judge


@dataclass(frozen=True)
class JudgeGroup:
    judge: Judge                     # possibly wrapped in the cache
    identity: dict[str, Any]
    metrics: tuple[Metric, ...]

    def score_options(self) -> dict[str, Any]:
        """What the group's metrics ask of its judged pass (e.g. Answer Relevancy's questions)."""
        options: dict[str, Any] = {}
        for m in self.metrics:
            options.update(m.score_options())
        return options


@dataclass(frozen=True)
class Plan:
    metrics: tuple[Metric, ...]
    groups: tuple[JudgeGroup, ...]
    #: Judges this plan built from spec strings: the run closes them when it ends.
    owned: tuple[Judge, ...] = ()
    #: ``"ragchecker"``: RAGChecker's values where a denominator is empty (see engine.metrics).
    compat: Compat | None = None
    #: Which chunks count as relevant: labels, the judge, or both (see ``scoring.labels``).
    relevance: RelevanceMode = "auto"

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(m.name for m in self.metrics)

    @property
    def main(self) -> int:
        """The group whose evidence a row shows: the first with a noise-sensitivity metric,
        else the first."""
        for g, group in enumerate(self.groups):
            if any(isinstance(m, NoiseSensitivity) for m in group.metrics):
                return g
        return 0

    @property
    def extra_names(self) -> tuple[str, ...]:
        """Requested columns beyond the RAGChecker set (e.g. ``context_precision_ranked``)."""
        in_family = catalogue.family()
        return tuple(n for n in self.names if n not in in_family)

    def config(self) -> dict[str, Any]:
        """What must match for stored results to be reused (resume)."""
        config = {"metrics": list(self.names), "judges": [g.identity for g in self.groups]}
        if self.compat is not None:  # absent by default, so earlier journals stay reusable
            config["compat"] = self.compat
        if self.relevance != "auto":  # likewise
            config["relevance"] = self.relevance
        return config


def _run_compat(resolved: Sequence[Metric], compat: Compat | None) -> Compat | None:
    """One compat mode per run: ``compat`` if given, else the one the metric objects share."""
    check_compat(compat)
    asked = {m.compat for m in resolved if m.compat is not None or compat is None}
    if compat is not None:
        asked.add(compat)
    if len(asked) > 1:
        raise InvalidInput("the metrics ask for different compat modes "
                           f"({', '.join(sorted(str(a) for a in asked))}); one run has one: pass "
                           "compat= to evaluate() instead of to each metric")
    return next(iter(asked), None)


def build_plan(metrics: Sequence[Metric | str] | str | None, judge: Judge | str | None,
               cache: JudgeCache | None, compat: Compat | None = None,
               relevance: RelevanceMode = "auto") -> Plan:
    named = metrics is None or isinstance(metrics, str) or any(isinstance(m, str) for m in metrics)
    # The default judge is built only when a metric is named rather than given as an object.
    default = get_judge(judge if judge is not None else "lexical") if named else None
    resolved = resolve_metrics(metrics, default)  # type: ignore[arg-type]
    if not resolved:
        raise InvalidInput("no metrics selected")
    by_key: dict[str, list[Metric]] = {}
    for m in resolved:
        by_key.setdefault(_group_key(m.judge), []).append(m)
    groups = tuple(
        JudgeGroup(judge=with_cache(ms[0].judge, cache),  # type: ignore[arg-type]
                   identity=_plain(judge_identity(ms[0].judge)), metrics=tuple(ms))
        for ms in by_key.values())
    owned = (default,) if default is not None and not isinstance(judge, Judge) else ()
    given = [m for m in metrics or () if isinstance(m, Metric)]  # objects, not names
    return Plan(tuple(resolved), groups, owned, _run_compat(given, compat),
                check_relevance(relevance))


async def aclose_judges(judges: Sequence[Any]) -> None:
    """Close judges that hold connections (``aclose()``, e.g. the OpenAI judge's HTTP client)."""
    for judge in judges:
        close = getattr(judge, "aclose", None)
        if callable(close):
            await close()


def merge(plan: Plan, results: Sequence[SampleResult]) -> SampleResult:
    """One row from the judged pass of each group (``results[g]`` for ``plan.groups[g]``).

    Every requested metric comes from its own judge's pass. The row's evidence (claims,
    buckets, chunks) and verdicts are the *main* group's: the one that produced noise
    sensitivity (``plan.main``); the other groups' evidence is in ``by_judge``, keyed by
    their judge identity and listing the metrics they produced. The row is an error when any
    group failed (the first failure's reason and kind); usage adds up every group's calls.
    """
    if len(results) != len(plan.groups):
        raise ValueError(f"{len(results)} results for {len(plan.groups)} judge groups")
    main = results[plan.main]
    if len(results) == 1 and not plan.extra_names:
        return main
    metrics: dict[str, MetricValue] = dict(main.metrics)
    for group, result in zip(plan.groups, results, strict=True):
        for m in group.metrics:
            picked = m.pick(result)
            metrics[m.name] = MetricValue(picked.value, picked.reason if picked.value is None
                                          else None)
    errors = [r for r in results if r.status == "error"]
    status: Status = "error" if errors else main.status
    usage = Usage()
    for r in results:
        usage.add(r.usage)
    others = tuple(
        JudgeEvidence(judge=group.identity, metrics=tuple(m.name for m in group.metrics),
                      status=result.status, reason=result.reason, evidence=result.evidence)
        for g, (group, result) in enumerate(zip(plan.groups, results, strict=True))
        if g != plan.main)
    return SampleResult(index=main.index, id=main.id, status=status,
                        reason=errors[0].reason if errors else main.reason,
                        metrics=metrics, verdicts=main.verdicts, evidence=main.evidence,
                        usage=usage, error_kind=errors[0].error_kind if errors else None,
                        by_judge=others, diagnostics=main.diagnostics,
                        relevancy=next((r.relevancy for r in results if r.relevancy is not None),
                                       None))
