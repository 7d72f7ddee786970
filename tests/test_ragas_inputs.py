"""Ragas objects in: EvaluationDataset, SingleTurnSample lists, EvaluationResult, result frames.

Checked against small stand-ins shaped like Ragas 0.4's classes (always) and against the
installed Ragas when it can be imported (skipped otherwise).
"""

from __future__ import annotations

import asyncio
import math
from typing import Any

import pytest

from noisegauge import Faithfulness, FakeJudge, NoiseSensitivity, evaluate
from noisegauge.errors import InvalidInput

# The stand-ins for Ragas' samples are pydantic models, as Ragas' are ('[openai]' brings it).
pydantic = pytest.importorskip("pydantic", reason="pip install -e '.[openai]'")
BaseModel = pydantic.BaseModel

ROWS = [
    {"user_input": "What is the cancellation policy for the Pro plan?",
     "response": "The Pro plan can be cancelled anytime. The Pro plan requires a 90-day notice period.",
     "reference": "The Pro plan can be cancelled anytime. The Pro plan requires a 30-day notice period.",
     "retrieved_contexts": ["The Pro plan requires a 30-day notice period.",
                            "The Pro plan can be cancelled anytime. The Pro plan requires a 90-day notice period."]},
    {"user_input": "Can the Pro plan be cancelled?", "response": "The Pro plan can be cancelled anytime.",
     "reference": "The Pro plan can be cancelled anytime.",
     "retrieved_contexts": ["The Pro plan can be cancelled anytime.", "Enterprise needs a form."]},
]


# --- stand-ins with Ragas 0.4's shapes (ragas.dataset_schema) ---------------------------------

class SingleTurnSample(BaseModel):
    user_input: str | None = None
    retrieved_contexts: list[str] | None = None
    reference_contexts: list[str] | None = None
    response: str | None = None
    multi_responses: list[str] | None = None
    reference: str | None = None
    rubrics: dict[str, str] | None = None

    def to_dict(self) -> dict[str, Any]:
        return self.model_dump(exclude_none=True)


class MultiTurnSample(BaseModel):
    user_input: list[dict[str, str]]
    reference: str | None = None


class EvaluationDataset(BaseModel):
    samples: list[SingleTurnSample | MultiTurnSample]

    def __iter__(self) -> Any:  # type: ignore[override]
        return iter(self.samples)

    def __len__(self) -> int:
        return len(self.samples)


class EvaluationResult:
    def __init__(self, dataset: EvaluationDataset, scores: list[dict[str, float]]) -> None:
        self.dataset = dataset
        self.scores = scores


def _values(report: Any, name: str) -> list[float | None]:
    return [r.value(name) for r in report.results]


@pytest.fixture(scope="module")
def expected() -> list[float | None]:
    report = evaluate(ROWS, judge=FakeJudge(), cache=False, progress=False)
    return _values(report, "noise_sensitivity_relevant")


def test_expected_values_are_not_trivial(expected: list[float | None]) -> None:
    assert expected == [0.5, 0.0]


def test_evaluation_dataset_list_of_samples_and_result(expected: list[float | None]) -> None:
    samples = [SingleTurnSample(**r) for r in ROWS]
    dataset = EvaluationDataset(samples=samples)  # type: ignore[arg-type]
    for data in (dataset, samples, EvaluationResult(dataset, [{"faithfulness": 1.0}] * 2)):
        report = evaluate(dataset=data, metrics=[NoiseSensitivity(judge=FakeJudge())],
                          cache=False, progress=False)
        assert _values(report, "noise_sensitivity_relevant") == expected
        assert report.samples[0] is not None and report.samples[0].user_input == ROWS[0]["user_input"]


def test_ragas_fields_beyond_ours_are_kept_as_metadata() -> None:
    sample = SingleTurnSample(**ROWS[1], reference_contexts=["gold"], rubrics={"a": "b"})
    report = evaluate([sample], judge=FakeJudge(), cache=False, progress=False)
    s = report.samples[0]
    assert s is not None and s.metadata == {"reference_contexts": ["gold"], "rubrics": {"a": "b"}}


def test_a_ragas_result_dataframe(expected: list[float | None]) -> None:
    pd = pytest.importorskip("pandas")
    # What Ragas' EvaluationResult.to_pandas() returns: inputs, then its metric columns (NaN
    # where Ragas failed); reference_contexts absent (None) on these rows.
    frame = pd.DataFrame([{**r, "reference_contexts": None, "noise_sensitivity_relevant": math.nan,
                           "faithfulness": 1.0} for r in ROWS])
    report = evaluate(frame, ["noise_sensitivity_relevant"], judge=FakeJudge(), cache=False,
                      progress=False)
    assert _values(report, "noise_sensitivity_relevant") == expected
    assert [r.status for r in report.results] == ["ok", "ok"]


def test_a_multi_turn_sample_without_chunks_is_an_error_row_that_says_why() -> None:
    # Ragas' MultiTurnSample has no retrieved_contexts field: the chunks come from a tool
    # message after the question (tests/test_conversations_io.py scores such samples).
    conversation = [{"type": "human", "content": "Can the Pro plan be cancelled?"},
                    {"type": "ai", "content": "Yes, anytime."}]
    dataset = EvaluationDataset(samples=[SingleTurnSample(**ROWS[1]),  # type: ignore[list-item]
                                         MultiTurnSample(user_input=conversation, reference="Yes.")])
    report = evaluate(dataset, judge=FakeJudge(), cache=False, progress=False)
    assert [r.status for r in report.results] == ["ok", "error"]
    assert report.results[1].reason == (
        "row 1, field 'retrieved_contexts': a MultiTurnSample carries no retrieved chunks: no "
        "retrieved_contexts, and no tool message after the last human message (expected the "
        "chunks the answer was written from: the retrieval tool's ToolMessage between the "
        "question and the answer, or rows as dicts with retrieved_contexts beside the "
        "conversation)")


def test_a_sample_missing_a_reference_names_the_field() -> None:
    report = evaluate([SingleTurnSample(user_input="q", response="a", retrieved_contexts=[])],
                      judge=FakeJudge(), cache=False, progress=False)
    assert report.results[0].status == "error"
    assert "field 'reference': is missing" in (report.results[0].reason or "")


def test_legacy_single_turn_ascore_and_ascore_take_a_sample(expected: list[float | None]) -> None:
    scorer = NoiseSensitivity(llm=FakeJudge())
    sample = SingleTurnSample(**ROWS[0])
    assert asyncio.run(scorer.single_turn_ascore(sample)) == expected[0]
    assert scorer.single_turn_score(sample) == expected[0]
    assert scorer.score(sample).value == expected[0]
    irrelevant = NoiseSensitivity(llm=FakeJudge(), mode="irrelevant")
    assert irrelevant.single_turn_score(sample) == 0.0


def test_metrics_need_no_judge_and_take_llm_as_the_judges_other_name() -> None:
    ns = NoiseSensitivity()
    assert type(ns.judge).__name__ == "LexicalJudge" and ns.mode == "relevant"
    assert NoiseSensitivity(mode="irrelevant").judge is ns.judge  # one shared default judge
    judge = FakeJudge()
    assert NoiseSensitivity(llm=judge).judge is judge
    assert type(Faithfulness(llm="fake").judge).__name__ == "FakeJudge"
    with pytest.raises(TypeError, match="not both"):
        NoiseSensitivity(judge=judge, llm=judge)
    with pytest.raises(InvalidInput, match="cannot use a builtins.object as a judge"):
        NoiseSensitivity(llm=object())


# --- the installed Ragas, when there is one -------------------------------------------------

def test_real_ragas_objects(expected: list[float | None]) -> None:
    schema = pytest.importorskip("ragas.dataset_schema", reason="ragas is not installed")
    samples = [schema.SingleTurnSample(**r) for r in ROWS]
    dataset = schema.EvaluationDataset(samples=samples)
    for data in (dataset, samples):
        report = evaluate(data, [NoiseSensitivity(judge=FakeJudge())], cache=False, progress=False)
        assert _values(report, "noise_sensitivity_relevant") == expected
    assert NoiseSensitivity(llm=FakeJudge()).single_turn_score(samples[0]) == expected[0]
