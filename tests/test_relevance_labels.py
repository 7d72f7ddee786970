"""Chunk relevance from people's labels (``reference_context_ids``), and chunk ids in the input.

The engine takes the relevance flags as an input: with the judge's own flags it gives exactly
what it gives without them; labels change relevance, the noise modes and context precision,
and the evidence says where each chunk's relevance came from.
"""

from __future__ import annotations

import csv
import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from noisegauge import ClaimVerdicts, Sample, compute_metrics, evaluate
from noisegauge.cli.main import cli
from noisegauge.engine.evidence import build_evidence
from noisegauge.engine.metrics import chunk_relevance
from noisegauge.errors import InvalidSample
from noisegauge.leaks import text_digest

ROW: dict[str, Any] = {
    "id": "a", "user_input": "How much does the alder widget weigh?",
    "response": "The alder widget weighs 3 kilograms. The alder widget was designed in 1990.",
    "reference": "The alder widget weighs 3 kilograms.",
    "retrieved_contexts": ["The alder widget weighs 3 kilograms.",
                           "The alder widget was designed in 1990.", "Oslo ships on Mondays."],
    "retrieved_context_ids": ["w", "h", "o"],
    "reference_context_ids": ["h"],  # a person says the history chunk is the relevant one
}


def _row(mode: str, **change: Any) -> dict[str, Any]:
    data = {k: v for k, v in {**ROW, **change}.items() if v is not None}
    return next(iter(evaluate([data], cache=False, progress=False, relevance=mode).rows()))


def _chunks(row: dict[str, Any]) -> list[tuple[Any, ...]]:
    return [(c["source"], c["relevant"], c["relevance_from"], c.get("relevant_by_judge"))
            for c in row["chunks"]]


def test_labels_decide_relevance_and_the_evidence_says_so() -> None:
    judged = _row("judge")
    assert _chunks(judged) == [("w", True, "judge", None), ("h", False, "judge", None),
                               ("o", False, "judge", None)]
    assert [c["bucket"] for c in judged["response_claims"]] == ["grounded", "irrelevant_noise"]
    labelled = _row("auto")  # the default: labels when the row has them
    assert _chunks(labelled) == [("w", False, "labels", None), ("h", True, "labels", None),
                                 ("o", False, "labels", None)]
    # The wrong claim now leaked from a relevant chunk: relevant noise, not irrelevant.
    assert [c["bucket"] for c in labelled["response_claims"]] == ["grounded", "relevant_noise"]
    assert labelled["metrics"]["noise_sensitivity_relevant"] == 0.5
    assert labelled["metrics"]["noise_sensitivity_irrelevant"] == 0.0
    both = _row("both")
    assert _chunks(both) == [("w", False, "labels", True), ("h", True, "labels", False),
                             ("o", False, "labels", False)]
    assert both["metrics"] == labelled["metrics"]


def test_unlabelled_rows_follow_the_mode() -> None:
    auto = _row("auto", reference_context_ids=None)
    assert {c["relevance_from"] for c in auto["chunks"]} == {"judge"}
    strict = _row("labels", reference_context_ids=None)
    assert strict["status"] == "error" and strict["error_kind"] == "input"
    assert "field 'reference_context_ids': is missing" in strict["reason"]


def test_labels_need_chunk_ids_to_match() -> None:
    row = _row("auto", retrieved_context_ids=None)
    assert row["status"] == "error" and row["error_kind"] == "input"
    assert "retrieved_context_ids" in row["reason"] and "reference_context_ids" in row["reason"]
    nothing = _row("labels", retrieved_contexts=[], retrieved_context_ids=[])  # nothing to match
    assert nothing["status"] == "ok" and nothing["chunks"] == []


def test_labels_without_reference_claims_still_define_context_precision() -> None:
    cv = ClaimVerdicts.build(response_claims=["x"], reference_claims=[], answer2response=["neutral"],
                             response2answer=[], retrieved2response=[["entailed", "neutral"]],
                             retrieved2answer=[], n_chunks=2)
    assert compute_metrics(cv)["context_precision"].value is None
    labelled = compute_metrics(cv, relevant=[True, False])
    assert labelled["context_precision"].value == 0.5
    assert labelled["noise_sensitivity_relevant"].value == 1.0


def test_the_judges_own_flags_change_nothing() -> None:
    """The relevance vector is an input: given the judge's, the engine's output is the same."""
    cv = ClaimVerdicts.build(
        response_claims=["a", "b", "c"], reference_claims=["a", "d"],
        answer2response=["entailed", "contradicted", "neutral"],
        response2answer=["entailed", "neutral"],
        retrieved2response=[["entailed", "neutral", "neutral"], ["neutral", "entailed", "neutral"],
                            ["neutral", "neutral", "entailed"]],
        retrieved2answer=[["entailed", "neutral", "neutral"], ["neutral", "neutral", "entailed"]],
        n_chunks=3)
    rel = chunk_relevance(cv)
    assert compute_metrics(cv, relevant=rel) == compute_metrics(cv)
    assert build_evidence(cv, rel) == build_evidence(cv)
    flipped = compute_metrics(cv, relevant=[not r for r in rel])
    assert flipped["context_precision"].value == 1 / 3
    with pytest.raises(ValueError, match="one per chunk"):
        compute_metrics(cv, relevant=[True])


def test_leaks_reports_agreement_with_both(tmp_path: Path) -> None:
    out = tmp_path / "r.jsonl"
    evaluate([ROW, {**ROW, "id": "b", "reference_context_ids": ["w"]}], out=out, cache=False,
             progress=False, relevance="both")
    res = CliRunner().invoke(cli, ["leaks", str(out), "--json", str(tmp_path / "l.json")],
                             catch_exceptions=False)
    assert res.exit_code == 0, res.output
    agreement = json.loads((tmp_path / "l.json").read_text())["agreement"]
    # row a: labels say h, the judge w; row b: both say w; o is irrelevant to both
    assert agreement == {"chunks": 6, "both_relevant": 1, "labels_only": 1, "judge_only": 1,
                         "neither": 3, "agreement": 4 / 6, "kappa": pytest.approx(0.25)}
    assert "chunk relevance from: labels 6." in res.output
    assert "agree 67%, Cohen's kappa 0.25" in res.output


def test_relevant_ids_names_another_field_in_csv(tmp_path: Path) -> None:
    path = tmp_path / "in.csv"
    with path.open("w", newline="", encoding="utf-8") as fh:
        w = csv.writer(fh)
        w.writerow(["id", "question", "answer", "ground_truth", "contexts", "retrieved_context_ids",
                    "gold_chunks"])
        w.writerow(["a", ROW["user_input"], ROW["response"], ROW["reference"],
                    json.dumps(ROW["retrieved_contexts"]), json.dumps(["w", "h", "o"]),
                    json.dumps(["h"])])
    out = tmp_path / "r.jsonl"
    res = CliRunner().invoke(cli, ["score", str(path), "--out", str(out), "--relevant-ids",
                                   "gold_chunks", "--relevance", "both", "-q", "--no-cache",
                                   "--no-canaries"], catch_exceptions=False)
    assert res.exit_code == 0, res.output
    # score's summary says how the labels and the judge agree: w (judge), h (labels), o
    assert "labels vs the judge's relevance on 3 chunks: agree 33%" in res.output
    row = json.loads(out.read_text().splitlines()[0])
    assert _chunks(row) == [("w", False, "labels", True), ("h", True, "labels", False),
                            ("o", False, "labels", False)]
    assert row["input"]["reference_context_ids"] == ["h"]


@pytest.mark.parametrize("chunk", [
    {"text": "T", "doc_id": "d1"}, {"text": "T", "source": "d1"},
    {"page_content": "T", "metadata": {"source": "d1"}}, {"text": "T", "metadata": {"id": "d1"}},
])
def test_chunk_objects_give_their_id(chunk: dict[str, Any]) -> None:
    s = Sample.from_record({"question": "q", "answer": "a", "reference": "r", "contexts": [chunk]})
    assert s.retrieved_contexts == ("T",) and s.chunk_ids == ("d1",)


def test_chunk_ids_are_checked_against_the_chunks() -> None:
    base = {"question": "q", "answer": "a", "reference": "r", "contexts": ["x", "y"]}
    with pytest.raises(InvalidSample, match="has 1 ids for 2 retrieved chunks"):
        Sample.from_record({**base, "retrieved_context_ids": ["a"]})
    with pytest.raises(InvalidSample, match="says chunk 0 is 'a' but the chunk says 'b'"):
        Sample.from_record({**base, "contexts": [{"text": "x", "doc_id": "b"}, "y"],
                            "retrieved_context_ids": ["a", "c"]})
    s = Sample.from_record({**base, "retrieved_context_ids": ["a", "b"],
                            "reference_context_ids": ["b"]})
    assert s.relevant_ids == ("b",)
    assert Sample.from_record(s.to_record()) == s  # labels and ids travel together


def test_a_digest_ignores_case_spacing_and_unicode_form() -> None:
    assert text_digest("Ｐｒｏ  plan\ncosts $20") == text_digest("pro plan costs $20")
    assert text_digest("pro plan costs $20") != text_digest("pro plan costs $25")
    assert text_digest("x").startswith("text:") and len(text_digest("x")) == 21
