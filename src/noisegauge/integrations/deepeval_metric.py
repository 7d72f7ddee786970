"""noisegauge's metrics as DeepEval metrics: ``NoiseGaugeMetric("noise_sensitivity_relevant",
judge="lexical", threshold=0.2)`` in ``assert_test`` or ``deepeval.evaluate``.

A test case gives ``input`` (the question), ``actual_output`` (the response),
``expected_output`` (the reference; without one only faithfulness is defined) and
``retrieval_context`` (the chunks). ``score`` is the metric's value; ``success`` compares it
with ``threshold`` in the metric's direction (noise sensitivity and hallucination: at most
the threshold; faithfulness and the rest: at least); ``reason`` names the claims it counts
and the chunks they leaked from. An undefined metric (no reference, no claim to count) is
not a pass: ``score`` is None, ``success`` False, ``error`` says why.
"""

from __future__ import annotations

from typing import Any

from ..engine.catalogue import lower_is_better
from ..engine.metrics import check_compat
from ..errors import InvalidInput, MissingDependency
from ..judges.base import Judge
from ..judges.registry import get_judge
from ..samples import Sample
from ..scoring.results import SampleResult
from .evidence_text import JudgedMemo, check_metrics, explain

try:
    from deepeval.metrics import BaseMetric
    from deepeval.test_case import LLMTestCase
except ImportError as exc:
    raise MissingDependency("noisegauge as a DeepEval metric", "deepeval", "deepeval") from exc

__all__ = ["NoiseGaugeMetric", "sample_of_test_case"]


def sample_of_test_case(case: LLMTestCase) -> Sample:
    """The sample a DeepEval test case describes; a missing field is named with its fix."""
    contexts = case.retrieval_context
    missing = [what for what, value in (("input", case.input),
                                        ("actual_output", case.actual_output),
                                        ("retrieval_context", contexts)) if value is None]
    if missing:
        raise InvalidInput(f"NoiseGaugeMetric: the test case needs {', '.join(missing)}")
    assert contexts is not None and case.actual_output is not None
    texts = [c if isinstance(c, str) else str(getattr(c, "content", c)) for c in contexts]
    return Sample(user_input=case.input, response=case.actual_output,
                  reference=case.expected_output or None, retrieved_contexts=tuple(texts))


# deepeval ships no type hints: its BaseMetric is Any to mypy
class NoiseGaugeMetric(BaseMetric):  # type: ignore[misc]
    """One noisegauge metric as a DeepEval metric, judged offline or by any noisegauge judge."""

    def __init__(self, metric: str = "noise_sensitivity_relevant", *,
                 judge: Judge | str = "lexical", threshold: float = 0.5,
                 compat: str | None = None, memo: JudgedMemo | None = None) -> None:
        (self.metric,) = check_metrics([metric])
        self.threshold = threshold
        self.lower_is_better = lower_is_better(metric)
        self.include_reason = True
        self.async_mode = True
        self.strict_mode = False
        self.evaluation_model = f"noisegauge:{judge if isinstance(judge, str) else type(judge).__name__}"
        # metrics built with one memo judge a test case once between them
        self._memo = memo or JudgedMemo(get_judge(judge) if isinstance(judge, str) else judge,
                                        check_compat(compat))
        self.result: SampleResult | None = None
        self.error: str | None = None

    def _settle(self, result: SampleResult) -> float | None:
        self.result = result
        value = result.value(self.metric)
        self.evaluation_cost = 0.0
        if result.status == "error" or value is None:
            metric = result.metrics.get(self.metric)
            self.error = (metric.reason if metric is not None else None) or result.reason \
                or "undefined"
            self.score, self.success = None, False
            self.reason = f"{self.metric} is undefined: {self.error}"
            return None
        self.error = None
        self.score = float(value)
        text, _ = explain(result, self.metric)
        self.success = (self.score <= self.threshold if self.lower_is_better
                        else self.score >= self.threshold)
        bar = "at most" if self.lower_is_better else "at least"
        self.reason = f"{self.metric} = {self.score:.3g} (needs {bar} {self.threshold:g}); {text}"
        return self.score

    def measure(self, test_case: LLMTestCase, *args: Any, **kwargs: Any) -> float | None:
        return self._settle(self._memo.judged_sync(sample_of_test_case(test_case)))

    async def a_measure(self, test_case: LLMTestCase, *args: Any, **kwargs: Any
                        ) -> float | None:
        return self._settle(await self._memo.judged(sample_of_test_case(test_case)))

    def is_successful(self) -> bool:
        return bool(self.success)

    @property
    def __name__(self) -> str:  # DeepEval names a metric by this property
        return f"noisegauge.{self.metric}"
