"""One run path: the CLI runs ``aevaluate``; a Report is built from the rows the run writes,
so an interrupted-and-resumed run and an uninterrupted one give the same bytes, hints
included; hints only on wrong claims no chunk entails; evidence of mixed judges merged."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from batch_helpers import ROOT, rows
from noisegauge import (
    Faithfulness,
    FakeJudge,
    Hallucination,
    InvalidInput,
    NoiseSensitivity,
    evaluate,
)
from noisegauge.cli.main import cli
from noisegauge.judges.lexical import LexicalJudge
from noisegauge.runner.journal import journal_path
from noisegauge.runner.run import output_row
from noisegauge.scoring.results import SampleResult

SUPPORT = ROOT / "examples" / "support_bot.jsonl"


class Abort(BaseException):
    """Stands in for a kill: not an Exception, so nothing turns it into an error row."""


class AbortingLexical(LexicalJudge):
    """The lexical judge, dying when it meets ``at``."""

    def __init__(self, at: str) -> None:
        super().__init__()
        self.at = at

    async def extract(self, text: str, question: str | None = None) -> list[str]:
        if self.at in text:
            raise Abort
        return await super().extract(text, question)


def test_resumed_run_writes_and_reports_the_same_bytes(tmp_path: Path) -> None:
    data = [json.loads(line) for line in SUPPORT.read_text().splitlines()]
    kw: dict[str, Any] = {"cache": False, "progress": False}
    ref = evaluate(data, None, judge="lexical", out=tmp_path / "ref.jsonl", **kw)
    ref.to_jsonl(tmp_path / "ref_report.jsonl")

    out = tmp_path / "out.jsonl"
    with pytest.raises(Abort):  # dies part way, with some rows journaled
        evaluate(data, None, judge=AbortingLexical(data[7]["response"][:40]), out=out,
                 concurrency=1, workers=1, **kw)  # one process: rows 0-6 are journaled first
    assert journal_path(out).exists() and not out.exists()
    resumed = evaluate(data, None, judge="lexical", out=out, **kw)
    assert 0 < resumed.stats.resumed < len(data)
    resumed.to_jsonl(tmp_path / "resumed_report.jsonl")

    expected = (tmp_path / "ref.jsonl").read_bytes()
    assert out.read_bytes() == expected
    assert (tmp_path / "resumed_report.jsonl").read_bytes() == expected
    assert (tmp_path / "ref_report.jsonl").read_bytes() == expected
    # The hints survived the journal: the example has wrong claims no chunk entails.
    hinted = [c for r in map(json.loads, expected.splitlines()) for c in r["response_claims"]
              if c["closest_chunk"] is not None]
    assert hinted
    assert resumed.results[0].evidence == ref.results[0].evidence
    assert [r.to_row() for r in resumed.results] == [r.to_row() for r in ref.results]


def test_hint_only_on_wrong_claims_no_chunk_entails() -> None:
    claims = {"R": ["Pro needs 90 days.", "Pro is for teams.", "Pro costs 9."],
              "REF": ["Pro needs 30 days.", "Pro is for teams."]}
    correct = {"Pro is for teams.", "Pro costs 9."}   # the reference entails these
    in_chunk = {"Pro costs 9."}                        # a chunk entails only this one

    def verdict(premise: str, claim: str) -> str:
        if premise == "REF":
            return "entailed" if claim in correct else "neutral"
        if premise == "R":
            return "entailed" if claim == "Pro is for teams." else "neutral"
        return "entailed" if claim in in_chunk and "costs" in premise else "neutral"

    judge = FakeJudge(claims=lambda text, q: claims[text], verdicts=verdict)
    chunks = ["Enterprise needs 90 days notice.", "Pro is for teams of ten; Pro costs 9."]
    report = evaluate([{"user_input": "q", "response": "R", "reference": "REF",
                        "retrieved_contexts": chunks}], None, judge=judge, cache=False,
                      progress=False)
    by_text = {c.text: c for c in report.results[0].evidence.response_claims}  # type: ignore[union-attr]
    wrong = by_text["Pro needs 90 days."]
    assert (wrong.correct, wrong.entailed_by, wrong.closest_chunk) == (False, (), 0)
    self_known = by_text["Pro is for teams."]  # correct, no chunk entails it, words in chunk 1
    assert self_known.bucket == "self_knowledge" and self_known.closest_chunk is None
    assert by_text["Pro costs 9."].closest_chunk is None  # entailed by a chunk


class _Judge(FakeJudge):
    def __init__(self, name: str, **kw: Any) -> None:
        super().__init__(**kw)
        self.name = name

    def identity(self) -> dict[str, Any]:
        return {"judge": self.name}


def test_mixed_judges_evidence_is_keyed_by_judge(tmp_path: Path) -> None:
    ns_judge = _Judge("ns")  # sentences as claims
    other = _Judge("other", claims=lambda text, q: [text])  # the whole text is one claim
    data = rows(3)
    metrics = [Faithfulness(judge=other), NoiseSensitivity(judge=ns_judge),
               Hallucination(judge=other)]
    out = tmp_path / "mixed.jsonl"
    report = evaluate(data, metrics, cache=False, progress=False, out=out)
    row = json.loads(out.read_text().splitlines()[0])
    # The row's own evidence is the noise-sensitivity judge's (two sentence claims)...
    assert [c["text"] for c in row["response_claims"]] == ["Alpha 0 is one.", "Beta 0 is two."]
    # ... and the other judge's evidence sits beside it, with what it produced.
    (extra,) = row["evidence_by_judge"]
    assert extra["judge"] == {"judge": "other"}
    assert extra["metrics"] == ["faithfulness", "hallucination"]
    assert [c["text"] for c in extra["response_claims"]] == [data[0]["response"]]
    assert row["metrics"]["faithfulness"] == 0.0  # the other judge's claim: no chunk has it all
    assert row["metrics"]["noise_sensitivity_irrelevant"] == 0.5  # the ns judge's
    assert report.results[0].by_judge[0].metrics == ("faithfulness", "hallucination")
    assert [json.loads(x) for x in out.read_text().splitlines()] == list(report.rows())


def test_a_failing_judge_group_makes_the_row_an_error_with_both_evidences() -> None:
    from noisegauge.errors import JudgeOutputError

    class Broken(_Judge):
        async def extract(self, text: str, question: str | None = None) -> list[str]:
            raise JudgeOutputError("unusable answer")

    report = evaluate(rows(1), [NoiseSensitivity(judge=_Judge("ns")),
                                Faithfulness(judge=Broken("broken"))],
                      cache=False, progress=False)
    r = report.results[0]
    assert (r.status, r.error_kind, r.reason) == ("error", "output",
                                                  "JudgeOutputError: unusable answer")
    assert r.value("noise_sensitivity_irrelevant") == 0.5 and r.value("faithfulness") is None
    assert r.evidence is not None and r.by_judge[0].status == "error"


def test_rows_round_trip_through_results() -> None:
    data = rows(3) + [{"id": "bad", "user_input": "q"}, {**rows(1)[0], "id": "u",
                                                         "response": ""}]
    report = evaluate(data, "noise_sensitivity,context_precision_ranked,faithfulness",
                      judge=FakeJudge(), cache=False, progress=False)
    extra = ("context_precision_ranked",)
    for row in report.rows():
        i = row["index"]
        again = output_row(i, SampleResult.from_row(json.loads(json.dumps(row))), extra,
                           report.judges, report.samples[i])
        assert json.dumps(again) == json.dumps(row)
    assert [r.status for r in report.results] == ["ok", "ok", "ok", "error", "undefined"]


def test_keep_results_false_keeps_only_totals(tmp_path: Path) -> None:
    report = evaluate(rows(4), None, judge=FakeJudge(), cache=False, progress=False,
                      keep_results=False, out=tmp_path / "o.jsonl")
    assert report.results == [] and len(report) == 4 and report.stats.status["ok"] == 4
    assert report.summary()["faithfulness"].n == 4
    with pytest.raises(InvalidInput, match="keep_results=False"):
        report.to_jsonl(tmp_path / "again.jsonl")
    assert len((tmp_path / "o.jsonl").read_text().splitlines()) == 4


def test_the_cli_runs_aevaluate(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import noisegauge.cli.score as score_cli

    calls: list[dict[str, Any]] = []
    real = score_cli.aevaluate

    async def spy(*args: Any, **kwargs: Any) -> Any:
        calls.append(kwargs)
        return await real(*args, **kwargs)

    monkeypatch.setattr(score_cli, "aevaluate", spy)
    src = tmp_path / "in.jsonl"
    src.write_text("".join(json.dumps(r) + "\n" for r in rows(2)))
    res = CliRunner().invoke(cli, ["score", str(src), "--judge", "fake", "-q"],
                             catch_exceptions=False)
    assert res.exit_code == 0, res.output
    assert len(calls) == 1 and calls[0]["keep_results"] is False
