"""What the evaluator bridges (Phoenix experiments, DeepEval) share: one judged pass per
sample for every metric, and the evidence as a sentence naming the claims a metric counts
and the chunks they leaked from."""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Mapping, Sequence
from typing import Any

from .._async import run_sync
from ..engine.catalogue import METRIC_NAMES
from ..engine.metrics import Compat
from ..errors import InvalidInput
from ..judges.base import Judge
from ..samples import Sample
from ..scoring.metrics import ascore_sample
from ..scoring.results import SampleResult

__all__ = ["CLAIM_BUCKETS", "JudgedMemo", "check_metrics", "explain", "field_text"]

#: Per metric, the claim buckets it counts: their texts and chunks explain its score.
CLAIM_BUCKETS: dict[str, tuple[str, ...]] = {
    "noise_sensitivity_relevant": ("relevant_noise",),
    "noise_sensitivity_irrelevant": ("irrelevant_noise",),
    "hallucination": ("hallucination",),
    "faithfulness": ("hallucination", "self_knowledge"),  # the claims no chunk supports
    "self_knowledge": ("self_knowledge",),
}
_MEMO = 256


def check_metrics(metrics: Sequence[str] | None) -> list[str]:
    names = list(metrics) if metrics is not None else list(METRIC_NAMES)
    unknown = [n for n in names if n not in METRIC_NAMES]
    if unknown:
        raise InvalidInput(f"unknown metric(s) {', '.join(unknown)}; "
                           f"known: {', '.join(METRIC_NAMES)}")
    return names


class JudgedMemo:
    """The last judged samples, so that one metric per evaluator still judges a row once."""

    def __init__(self, judge: Judge, compat: Compat | None) -> None:
        self.judge, self.compat = judge, compat
        self._memo: OrderedDict[tuple[object, ...], SampleResult] = OrderedDict()

    async def judged(self, sample: Sample) -> SampleResult:
        key = (sample.user_input, sample.response, sample.reference, sample.retrieved_contexts,
               sample.chunk_ids)
        if key in self._memo:
            self._memo.move_to_end(key)
            return self._memo[key]
        result = await ascore_sample(sample, self.judge, compat=self.compat)
        self._memo[key] = result
        if len(self._memo) > _MEMO:
            self._memo.popitem(last=False)
        return result

    def judged_sync(self, sample: Sample) -> SampleResult:
        return run_sync(self.judged(sample), hint="use the evaluator's async form")


def explain(result: SampleResult, name: str,
            chunk_ids: Sequence[str | None] | None = None) -> tuple[str, list[str]]:
    """The claims ``name`` counts, each with the chunks it came from (their ids, else
    ``chunk N``); and those chunks. A metric without claim buckets: its value alone."""
    buckets = CLAIM_BUCKETS.get(name)
    if result.evidence is None or buckets is None:
        value = result.value(name)
        return (f"{name} = {value:.3g}" if value is not None else f"{name} undefined"), []
    leaked: list[str] = []
    parts: list[str] = []
    for claim in result.evidence.response_claims:
        if claim.bucket not in buckets:
            continue
        sources = [str(chunk_ids[i]) if chunk_ids is not None and i < len(chunk_ids)
                   and chunk_ids[i] is not None else f"chunk {i}"
                   for i in claim.leaked_from or claim.entailed_by]
        leaked.extend(s for s in sources if s not in leaked)
        parts.append(repr(claim.text) + (f" (from {', '.join(sources)})" if sources else ""))
    if not parts:
        return "no such claim", leaked
    return f"{len(parts)} claim(s): " + "; ".join(parts), leaked


def field_text(value: Any, *keys: str) -> str | None:
    """``value`` itself when it is text, else its first text field among ``keys`` (how the
    evaluator bridges read a question or an answer given bare or inside a dict)."""
    if isinstance(value, str):
        return value
    if isinstance(value, Mapping):
        for key in keys:
            if isinstance(value.get(key), str):
                return str(value[key])
    return None
