"""Verdict scores and the judge's doubt: carried, cached, marked in the evidence, counted in the
summary, and never changing a verdict or a metric."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

from noisegauge import Sample, score_sample
from noisegauge.engine.catalogue import compute_metrics
from noisegauge.engine.evidence import build_evidence
from noisegauge.engine.matrix import ClaimVerdicts, VerdictScores
from noisegauge.infra.store import JudgeCache
from noisegauge.judges.base import ScoredChecker
from noisegauge.judges.cached import with_cache
from noisegauge.judges.lexical import LexicalJudge
from noisegauge.report.totals import RunStats
from noisegauge.verdicts import Verdict

E, N = Verdict.ENTAILED, Verdict.NEUTRAL
SAMPLE = Sample.from_record({
    "user_input": "What is the cancellation policy for the Pro plan?",
    "response": "You can cancel the Pro plan at any time. Pro cancellations need a signed form.",
    "reference": "Pro plan subscriptions can be cancelled at any time with a 30-day notice period.",
    "retrieved_contexts": [
        "Pro plan subscriptions can be cancelled at any time with a 30-day notice period.",
        "Enterprise plan subscriptions require a signed offboarding form."],
}, 0)


def scored_cv(band: tuple[float, float] | None = (0.4, 0.6)) -> ClaimVerdicts:
    return ClaimVerdicts(
        response_claims=("a", "b"), reference_claims=("c",),
        answer2response=(E, N), response2answer=(E,),
        retrieved2response=((E, N), (N, N)), retrieved2answer=((E, N),), n_chunks=2,
        scores=VerdictScores((0.9, 0.45), (0.8,), ((0.7, 0.1), (0.55, 0.0)), ((0.95, 0.3),), band))


def test_scores_round_trip_and_follow_a_chunk_permutation() -> None:
    cv = scored_cv()
    assert ClaimVerdicts.from_dict(json.loads(json.dumps(cv.to_dict()))) == cv
    swapped = cv.permute_chunks([1, 0])
    assert swapped.scores is not None
    assert swapped.scores.retrieved2response == ((0.1, 0.7), (0.0, 0.55))
    assert "scores" not in ClaimVerdicts.from_dict(
        {**cv.to_dict(), "scores": None}).to_dict()


def test_score_shapes_are_checked() -> None:
    with pytest.raises(ValueError, match="scores.answer2response"):
        ClaimVerdicts(("a",), (), (E,), (), ((E,),), (), 1,
                      scores=VerdictScores((), (), ((0.9,),), ()))


def test_evidence_marks_verdicts_in_the_band_and_metrics_ignore_scores() -> None:
    cv = scored_cv()
    ev = build_evidence(cv)
    assert ev.response_claims[0].uncertain == ()
    assert ev.response_claims[1].uncertain == ("reference", 0)   # 0.45 and 0.55 lie in [0.4, 0.6)
    row = ev.to_dict()["response_claims"][1]
    assert (row["reference_score"], row["chunk_scores"]) == (0.45, [0.55, 0.0])
    assert row["uncertain"] == ["reference", 0]
    plain = ClaimVerdicts(**{**cv.__dict__, "scores": None})
    assert compute_metrics(plain) == compute_metrics(cv)
    unscored = build_evidence(plain).to_dict()["response_claims"][0]
    assert (unscored["reference_score"], unscored["chunk_scores"], unscored["uncertain"]) == (
        None, None, [])
    assert cv.uncertain_counts() == {"answer2response": (1, 2), "response2answer": (0, 1),
                                     "retrieved2response": (1, 4), "retrieved2answer": (0, 2)}
    assert scored_cv(band=None).uncertain_counts() == {}


def test_lexical_scores_agree_with_its_verdicts() -> None:
    judge = LexicalJudge()
    assert isinstance(judge, ScoredChecker)
    premise = SAMPLE.retrieved_contexts[0]
    claims = ["You can cancel the Pro plan at any time.", "The Pro plan needs a 90-day notice.",
              "Pro plan subscriptions can be cancelled at any time with a 30-day notice period.",
              "Refunds take five days."]
    scored = judge.scored(premise, claims)
    assert [v for v, _ in scored] == judge.verdicts(premise, claims)
    for v, s in scored:
        assert 0.0 <= s <= 1.0
        assert (v is E) == (s >= judge.threshold)
    assert scored[1][1] == 0.0  # a hard cue (the number) leaves no doubt
    assert scored[2][1] == 1.0  # verbatim


def test_scored_sample_carries_scores_and_the_band(tmp_path: Path) -> None:
    judge = LexicalJudge()
    result = score_sample(SAMPLE, judge)
    assert result.verdicts is not None and result.verdicts.scores is not None
    assert result.verdicts.scores.band == judge.uncertain_band
    cached = with_cache(judge, JudgeCache(tmp_path / "c.sqlite"))
    first = score_sample(SAMPLE, cached)
    again = score_sample(SAMPLE, cached)
    assert again.verdicts == first.verdicts == result.verdicts
    assert again.usage.calls == 0 and again.usage.cached_calls > 0


def test_a_profile_threshold_moves_the_band_with_it() -> None:
    base = LexicalJudge()
    moved = LexicalJudge(threshold=base.threshold + 0.1)
    if base.uncertain_band is None:
        pytest.skip("the shipped weights carry no band")
    assert moved.uncertain_band == pytest.approx(
        (min(1.0, base.uncertain_band[0] + 0.1), min(1.0, base.uncertain_band[1] + 0.1)), abs=1e-9)


def test_run_stats_report_uncertain_shares_per_metric_and_a_hint() -> None:
    stats = RunStats(("precision", "faithfulness", "recall"))
    row = {"status": "ok", "metrics": {"precision": 0.5, "faithfulness": 1.0, "recall": 1.0},
           "uncertain": {"answer2response": [1, 2], "retrieved2response": [0, 4],
                         "response2answer": [0, 1], "retrieved2answer": [0, 2]}}
    stats.add(0, row, resumed=False)
    stats.add(1, row, resumed=False)
    shares = stats.uncertain_shares()
    assert shares == {"precision": 0.5, "faithfulness": 0.0, "recall": 0.0}
    hint = stats.uncertain_hint()
    assert hint is not None and hint.startswith("11% of verdicts are uncertain")
    quiet = RunStats(("precision",))
    quiet.add(0, {"status": "ok", "metrics": {"precision": 1.0}}, resumed=False)
    assert quiet.uncertain_shares() == {} and quiet.uncertain_hint() is None


def test_check_many_scored_matches_check_many() -> None:
    judge = LexicalJudge()
    premises, claims = list(SAMPLE.retrieved_contexts), ["You can cancel the Pro plan at any time."]
    scored = asyncio.run(judge.check_many_scored(premises, claims))
    plain = asyncio.run(judge.check_many(premises, claims))
    assert [[v for v, _ in row] for row in scored] == plain
