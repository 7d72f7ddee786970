"""The metric objects as the seed documents use them: ascore/score/.value, statuses, the bridge."""

from __future__ import annotations

import asyncio

import pytest

from noisegauge import (
    Faithfulness,
    FakeJudge,
    JudgeOutputError,
    NoiseSensitivity,
    Sample,
    SyncInAsyncError,
    ascore_sample,
)

PRO = "Pro plan subscriptions can be cancelled anytime with a 30-day notice period."
ENT = "Enterprise plan subscriptions require a 90-day notice period."
FIELDS = {
    "user_input": "What is the cancellation policy for the Pro plan?",
    "response": "Pro plan subscriptions can be cancelled anytime with a 30-day notice period. "
                "Enterprise plan subscriptions require a 90-day notice period.",
    "reference": PRO,
    "retrieved_contexts": [PRO, ENT],
}


def test_sync_and_async_give_identical_results() -> None:
    metric = NoiseSensitivity(judge=FakeJudge(), mode="irrelevant")
    sync = metric.score(**FIELDS)
    async_ = asyncio.run(metric.ascore(**FIELDS))
    assert sync == async_
    # The second sentence is wrong for the question and comes only from the Enterprise chunk.
    assert sync.value == pytest.approx(0.5)
    assert sync.status == "ok" and sync.reason is None


def test_score_inside_a_running_loop_raises_and_says_await() -> None:
    metric = NoiseSensitivity(judge="fake")

    async def inside() -> None:
        with pytest.raises(SyncInAsyncError, match="await scorer.ascore"):
            metric.score(**FIELDS)
        assert (await metric.ascore(**FIELDS)).value == 0.0

    asyncio.run(inside())


def test_mode_is_validated() -> None:
    with pytest.raises(ValueError, match="relevant"):
        NoiseSensitivity(judge="fake", mode="relevent")  # type: ignore[arg-type]


def test_result_carries_all_metrics_and_evidence() -> None:
    result = Faithfulness(judge="fake").score(**FIELDS)
    assert result.name == "faithfulness" and result.value == 1.0
    sample = result.sample
    assert sample.value("noise_sensitivity_irrelevant") == pytest.approx(0.5)
    assert sample.evidence is not None
    buckets = [c.bucket for c in sample.evidence.response_claims]
    assert buckets == ["grounded", "irrelevant_noise"]
    assert sample.evidence.response_claims[1].leaked_from == (1,)
    row = sample.to_row()
    assert row["response_claims"][1]["bucket"] == "irrelevant_noise"
    from noisegauge.leaks import text_digest

    chunks = FIELDS["retrieved_contexts"]
    assert row["chunks"] == [
        {"index": 0, "relevant": True, "entails_reference_claims": [0], "entails_response_claims": [0],
         "source": text_digest(chunks[0]), "relevance_from": "judge", "relevant_by_judge": None},
        {"index": 1, "relevant": False, "entails_reference_claims": [], "entails_response_claims": [1],
         "source": text_digest(chunks[1]), "relevance_from": "judge", "relevant_by_judge": None},
    ]


def test_empty_response_is_undefined_not_zero() -> None:
    result = NoiseSensitivity(judge="fake").score(**{**FIELDS, "response": ""})
    assert result.value is None and result.status == "undefined"
    assert result.reason == "no response claims"
    assert result.sample.status == "undefined"


def test_judge_failure_is_an_error_with_reason_not_a_number() -> None:
    judge = FakeJudge(verdicts={}, strict=True)
    result = NoiseSensitivity(judge=judge).score(**FIELDS)
    assert result.status == "error" and result.value is None
    assert "JudgeOutputError" in (result.reason or "")


def test_a_judge_returning_the_wrong_shape_is_caught() -> None:
    class Short(FakeJudge):
        async def check(self, premise, claims):  # type: ignore[no-untyped-def]
            return (await super().check(premise, claims))[:-1]

    result = asyncio.run(ascore_sample(Sample.from_record(FIELDS), Short()))
    assert result.status == "error" and "verdict matrix" in (result.reason or "")


def test_judge_string_spec_is_resolved_once() -> None:
    metric = NoiseSensitivity(judge="fake")
    assert isinstance(metric.judge, FakeJudge)
    with pytest.raises(Exception, match="unknown judge"):
        NoiseSensitivity(judge="nope")


def test_metrics_are_immutable() -> None:
    metric = NoiseSensitivity(judge="fake")
    with pytest.raises(AttributeError):
        metric.mode = "irrelevant"  # type: ignore[misc]


def test_judge_output_error_is_exported() -> None:
    assert issubclass(JudgeOutputError, Exception)


def test_mixed_up_tiers_are_hallucination_with_a_provenance_hint() -> None:
    """The seed's example: the Enterprise value attributed to the Pro plan. No chunk entails it,
    so RAGChecker's algebra calls it hallucination; the evidence still points at the chunk."""
    fields = {**FIELDS, "response": "Pro plan subscriptions require a 90-day notice period."}
    result = NoiseSensitivity(judge="fake").score(**fields)
    assert result.value == 0.0
    claim = result.sample.evidence.response_claims[0]  # type: ignore[union-attr]
    assert claim.bucket == "hallucination"
    assert claim.closest_chunk == 1 and claim.closest_overlap is not None
    assert result.sample.to_row()["response_claims"][0]["closest_chunk"] == 1


def test_closest_chunk_follows_the_wrong_detail_not_the_topic() -> None:
    """'90-day' is what makes the claim wrong; the chunk that says 90 days is where it came
    from, even though the Pro chunk shares more words with the claim overall."""
    from noisegauge.scoring.provenance import closest_chunk
    pro = "Pro plan subscriptions can be cancelled at any time with a 30-day notice period."
    ent = "Enterprise contracts require a 90-day notice and a signed offboarding form."
    claim = "The Pro plan requires a 90-day notice period."
    assert closest_chunk(claim, [pro, ent], reference=pro) == (1, round(3 / 7, 3))
    assert closest_chunk(claim, [pro, ent]) is not None  # without a reference: overall overlap
    assert closest_chunk("Completely unrelated words here.", [pro, ent], reference=pro) is None
