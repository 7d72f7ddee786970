"""noisegauge's metrics as MLflow GenAI scorers (``mlflow.genai.scorers.scorer``).

Kept apart from ``mlflow.py`` so that logging runs never imports MLflow's GenAI stack.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Mapping, Sequence
from typing import Any

from ..engine.catalogue import METRIC_NAMES
from ..engine.metrics import check_compat
from ..errors import InvalidInput, InvalidSample
from ..judges.base import Judge
from ..judges.registry import get_judge
from ..samples import Sample
from ..scoring.metrics import score_sample
from ..scoring.results import SampleResult
from .evidence_text import field_text

__all__ = ["make_scorers", "sample_of"]

#: Judged samples kept so that every scorer of one row reuses one judged pass.
_MEMO = 256


def _contexts(*sources: Any) -> list[str] | None:
    for source in sources:
        if isinstance(source, Mapping):
            found = source.get("retrieved_contexts", source.get("contexts"))
            if isinstance(found, Sequence) and not isinstance(found, str):
                return [c if isinstance(c, str) else str(c.get("text", c)) if isinstance(c, Mapping)
                        else str(c) for c in found]
    return None


def _conversation(inputs: Any) -> list[Any] | None:
    """A chat app's inputs: ``messages`` (OpenAI chat format, as MLflow logs a chat model's
    request), or a list of messages under ``user_input`` / ``question``."""
    if not isinstance(inputs, Mapping):
        return None
    for key in ("messages", "user_input", "question"):
        value = inputs.get(key)
        if isinstance(value, Sequence) and not isinstance(value, str) and value:
            return list(value)
    return None


def sample_of(inputs: Any, outputs: Any, expectations: Any) -> Sample:
    """The sample an MLflow evaluation row describes; a missing field names the fix.
    ``inputs["messages"]`` (a chat) is a conversation: the last user message is the
    question, the turns before it ``Sample.history``."""
    messages = _conversation(inputs)
    question = field_text(inputs, "question", "user_input", "query") or (
        "(conversation)" if messages is not None else None)
    response = field_text(outputs, "response", "answer")
    reference = field_text(expectations, "expected_response", "reference", "ground_truth")
    contexts = _contexts(outputs, expectations, inputs)
    missing = [name for name, value in (("inputs (the question)", question),
                                        ("outputs (the response)", response),
                                        ("expectations['expected_response']", reference),
                                        ("retrieved_contexts (in outputs or expectations)",
                                         contexts)) if value is None]
    if missing:
        raise InvalidInput(f"noisegauge scorer: missing {', '.join(missing)}")
    assert question is not None and response is not None and reference is not None
    if messages is not None:
        try:
            return Sample.from_record({"user_input": messages, "response": response,
                                       "reference": reference,
                                       "retrieved_contexts": list(contexts or ())})
        except InvalidSample as exc:
            raise InvalidInput(f"noisegauge scorer: inputs: {exc}") from None
    return Sample(user_input=question, response=response, reference=reference,
                  retrieved_contexts=tuple(contexts or ()))


def make_scorers(judge: Judge | str, metrics: Sequence[str] | None = None, *,
                 compat: str | None = None) -> list[Any]:
    """One MLflow scorer per metric, sharing one judged pass per sample."""
    from mlflow.entities import Feedback
    from mlflow.genai.scorers import scorer

    names = list(metrics) if metrics is not None else list(METRIC_NAMES)
    unknown = [n for n in names if n not in METRIC_NAMES]
    if unknown:
        raise InvalidInput(f"unknown metric(s) {', '.join(unknown)}; "
                           f"known: {', '.join(METRIC_NAMES)}")
    mode = check_compat(compat)
    resolved = get_judge(judge) if isinstance(judge, str) else judge
    memo: OrderedDict[tuple[Any, ...], SampleResult] = OrderedDict()

    def judged(sample: Sample) -> SampleResult:
        # Same question after other turns is another sample: the history is part of the key.
        key = (sample.user_input, sample.response, sample.reference, sample.retrieved_contexts,
               sample.history)
        if key in memo:
            memo.move_to_end(key)
            return memo[key]
        result = score_sample(sample, resolved, compat=mode)
        memo[key] = result
        if len(memo) > _MEMO:
            memo.popitem(last=False)
        return result

    def make(name: str) -> Any:
        def score(inputs: Any, outputs: Any, expectations: Any) -> Any:
            result = judged(sample_of(inputs, outputs, expectations))
            value = result.value(name)
            if result.status == "error" or value is None:
                metric = result.metrics.get(name)
                reason = result.reason or (metric.reason if metric is not None else None) \
                    or "undefined"
                return Feedback(name=name, value=None, error=f"{result.status}: {reason}")
            claims = [f"{c.bucket}: {c.text}" for c in result.evidence.response_claims] \
                if result.evidence is not None else []
            return Feedback(name=name, value=float(value), rationale="; ".join(claims) or None)

        score.__name__ = name
        return scorer(score, name=name)

    return [make(n) for n in names]
