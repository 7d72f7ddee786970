"""noisegauge's metrics as Phoenix experiment evaluators (``run_experiment(...,
evaluators=make_evaluators("lexical"))``), as the MLflow scorers are for MLflow.

An evaluator reads the example's ``input`` (the question: text, or ``question`` /
``user_input`` / ``query``), the task's ``output`` (``response`` or ``answer``, and
``retrieved_contexts``, optionally ``retrieved_context_ids``) and the example's ``expected``
(``reference`` / ``expected_response``; without one only faithfulness is defined, the rest
is undefined, "no reference"). Its result: the score, the claims it counts with the chunks
they leaked from as the explanation; an undefined metric has no score and says why.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from ..engine.metrics import check_compat
from ..errors import InvalidInput, MissingDependency
from ..judges.base import Judge
from ..judges.registry import get_judge
from ..samples import Sample
from .evidence_text import JudgedMemo, check_metrics, explain, field_text

__all__ = ["make_evaluators", "sample_from_example"]


def _list(value: Any, key: str) -> list[Any] | None:
    found = value.get(key) if isinstance(value, Mapping) else None
    return list(found) if isinstance(found, Sequence) and not isinstance(found, str) else None


def sample_from_example(input: Any, output: Any, expected: Any) -> Sample:
    """The sample of one experiment run; a missing field is named with its fix."""
    question = field_text(input, "question", "user_input", "query", "input")
    response = field_text(output, "response", "answer", "output")
    contexts = _list(output, "retrieved_contexts") or _list(output, "contexts")
    reference = field_text(expected, "reference", "expected_response", "ground_truth", "answer")
    missing = [what for what, value in (
        ("the example's input (the question: text or {'question': ...})", question),
        ("the task's output 'response'", response),
        ("the task's output 'retrieved_contexts' (a list of texts)", contexts))
        if value is None]
    if missing:
        raise InvalidInput(f"noisegauge evaluator: missing {', '.join(missing)}")
    ids = _list(output, "retrieved_context_ids")
    assert question is not None and response is not None and contexts is not None
    return Sample(user_input=question, response=response, reference=reference,
                  retrieved_contexts=tuple(str(c) for c in contexts),
                  chunk_ids=tuple(str(i) for i in ids) if ids is not None else None)


def make_evaluators(judge: Judge | str, metrics: Sequence[str] | None = None, *,
                    compat: str | None = None) -> list[Any]:
    """One Phoenix evaluator (``noisegauge.METRIC``, kind CODE) per metric, sharing one
    judged pass per run."""
    try:
        from phoenix.client.experiments import create_evaluator
    except ImportError as exc:
        raise MissingDependency("noisegauge as a Phoenix evaluator", "phoenix",
                                "arize-phoenix-client") from exc
    names = check_metrics(metrics)
    memo = JudgedMemo(get_judge(judge) if isinstance(judge, str) else judge, check_compat(compat))

    def make(name: str) -> Any:
        # sync: Phoenix's run_experiment calls evaluators from plain threads
        def evaluate(input: Any, output: Any, expected: Any) -> dict[str, Any]:
            sample = sample_from_example(input, output, expected)
            result = memo.judged_sync(sample)
            value = result.value(name)
            if result.status == "error" or value is None:
                metric = result.metrics.get(name)
                reason = (metric.reason if metric is not None else None) or result.reason \
                    or "undefined"
                label = "error" if result.status == "error" else "undefined"
                return {"score": None, "label": label, "explanation": reason}
            text, leaked = explain(result, name, sample.chunk_ids)
            return {"score": float(value), "explanation": text,
                    "metadata": {"leaked_from": leaked, "status": result.status}}

        evaluate.__name__ = name
        return create_evaluator(kind="CODE", name=f"noisegauge.{name}")(evaluate)

    return [make(n) for n in names]
