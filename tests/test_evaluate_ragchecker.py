"""RAGChecker users switch both ways: read its JSON, rescore with zero judge calls, write it back."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from batch_helpers import RAGCHECKER_OUTPUTS
from noisegauge import FakeJudge, evaluate
from noisegauge.io import RAGCHECKER_GROUPS, RAGCHECKER_NAMES

STORED: dict[str, Any] = json.loads(RAGCHECKER_OUTPUTS.read_text())
_LABELS = {"Entailment", "Neutral", "Contradiction"}


def _claim_text(claim: Any) -> str:
    return claim if isinstance(claim, str) else " ".join(p.strip() for p in claim)


def _check_export(exported: dict[str, Any]) -> None:
    assert len(exported["results"]) == len(STORED["results"])
    for ours, theirs in zip(exported["results"], STORED["results"], strict=True):
        for key in ("query_id", "query", "gt_answer", "response", "retrieved_context"):
            assert ours[key] == theirs[key], key
        for key in ("answer2response", "response2answer", "retrieved2response", "retrieved2answer"):
            assert ours[key] == theirs[key], key  # RAGChecker's own labels, same matrices
        assert ours["response_claims"] == [_claim_text(c) for c in theirs["response_claims"]]
        assert ours["gt_answer_claims"] == [_claim_text(c) for c in theirs["gt_answer_claims"]]
        assert set(ours["metrics"]) == set(theirs["metrics"])
        for name, value in theirs["metrics"].items():
            assert ours["metrics"][name] == pytest.approx(value, abs=1e-4), name
    assert exported["metrics"] == STORED["metrics"]  # grouped aggregate, exactly


def test_rescoring_with_precomputed_reproduces_ragchecker(tmp_path: Path) -> None:
    report = evaluate(RAGCHECKER_OUTPUTS, judge="precomputed", progress=False)
    assert report.usage.calls == 0 and report.usage.cached_calls == 0
    assert [r.id for r in report.results] == ["0", "1"]
    for result, stored in zip(report.results, STORED["results"], strict=True):
        for ours, theirs in RAGCHECKER_NAMES.items():
            assert result.value(ours) == pytest.approx(stored["metrics"][theirs], abs=1e-4)
    exported = report.to_ragchecker(tmp_path / "export.json")
    _check_export(exported)
    assert json.loads((tmp_path / "export.json").read_text()) == exported
    # ... and back: our export is valid RAGChecker input that rescoring reproduces again.
    again = evaluate(tmp_path / "export.json", judge="precomputed", progress=False)
    assert [r.to_row() for r in again.results] == [r.to_row() for r in report.results]


def test_streaming_output_in_ragchecker_format(tmp_path: Path) -> None:
    out = tmp_path / "out.json"
    evaluate(RAGCHECKER_OUTPUTS, judge="precomputed", out=out, progress=False)
    _check_export(json.loads(out.read_text()))
    assert not (tmp_path / "out.json.partial").exists()


def test_export_of_freshly_judged_rows_and_undefined_values() -> None:
    rows = [
        {"query_id": "a", "query": "q", "gt_answer": "Alpha is one.", "response": "Alpha is one.",
         "retrieved_context": [{"doc_id": "d1", "text": "Alpha is one."}]},
        {"query_id": "b", "query": "q", "gt_answer": "Alpha is one.", "response": "",
         "retrieved_context": []},
        {"query_id": "c", "query": "", "gt_answer": "x", "response": "y", "retrieved_context": []},
    ]
    exported = evaluate(rows, judge=FakeJudge(), cache=False, progress=False).to_ragchecker()
    a, b = exported["results"]  # the unreadable row cannot be a RAGChecker record ...
    assert exported["noisegauge"]["unreadable_rows"][0]["index"] == 2  # ... so it is listed
    assert a["retrieved_context"] == [{"doc_id": "d1", "text": "Alpha is one."}]
    assert a["answer2response"] == ["Entailment"] and a["retrieved2response"] == [["Entailment"]]
    assert set(a["answer2response"]) <= _LABELS
    assert b["metrics"]["noise_sensitivity_in_relevant"] is None  # undefined, not 0.0
    assert b["noisegauge"]["status"] == "undefined"
    generator = exported["metrics"]["generator"]
    assert list(generator) == list(RAGCHECKER_GROUPS["generator"])
    assert generator["faithfulness"] == 100.0  # averaged over defined values only
