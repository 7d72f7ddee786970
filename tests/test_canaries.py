"""Judge canaries: known-answer probes for any judge, before a run and during it."""

from __future__ import annotations

import asyncio
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from batch_helpers import require_extra
from noisegauge import FakeJudge, get_judge
from noisegauge.judges.base import metered
from noisegauge.judges.canaries import (
    CANARY_VERSION,
    PROBES,
    CanaryReport,
    run_canaries,
    watch,
)
from noisegauge.judges.llm.probe import PROBE_TEXT
from noisegauge.testing import FakeOpenAIServer, FakeRequest, judge_responder

ROOT = Path(__file__).resolve().parents[1]
EXAMPLES = ROOT / "examples" / "support_bot.jsonl"


def two_claims(text: str, question: str | None) -> list[str]:
    """A splitter that gets the two-fact probes right (and leaves other texts whole)."""
    for sep in (" and includes ", "이며 "):
        if sep in text:
            head, tail = text.split(sep, 1)
            return [head + ".", tail]
    return [text]


def test_the_set_is_versioned_bilingual_and_covers_every_kind():
    assert CANARY_VERSION.startswith("ng-canaries-")
    assert len(PROBES) == 12 and len({p.id for p in PROBES}) == 12
    for lang in ("en", "ko"):
        kinds = sorted(p.kind for p in PROBES if p.language == lang)
        assert kinds == ["entailed", "extract", "swap", "swap", "swap", "unrelated"]


def test_a_judge_that_gets_everything_right_passes():
    def right(premise: str, claim: str) -> str:
        if claim == premise:
            return "entailed"
        unrelated = {p.text for p in PROBES if p.kind == "unrelated"}
        return "neutral" if premise in unrelated else "contradicted"
    report = asyncio.run(run_canaries(FakeJudge(claims=two_claims, verdicts=right)))
    assert (report.passed, report.total, report.ok) == (12, 12, True)
    assert report.line() == f"judge canaries 12/12 ({CANARY_VERSION})"
    assert report.warning() is None


def test_a_judge_that_calls_identical_text_contradicted_fails_loudly():
    # What the 1.5B model of issue 11 did.
    report = asyncio.run(run_canaries(FakeJudge(claims=two_claims,
                                                verdicts=lambda p, c: "contradicted")))
    assert not report.ok and report.passed == 8  # swaps and extraction pass; 4 fail
    warning = report.warning()
    assert warning is not None and "not trustworthy" in warning
    assert "en-self, en-unrelated, ko-self, ko-unrelated: 'contradicted'" in warning


def test_a_judge_that_never_says_entailed_fails_despite_a_high_score():
    report = asyncio.run(run_canaries(FakeJudge(claims=two_claims,
                                                verdicts=lambda p, c: "neutral")))
    assert report.passed == 10 and not report.ok  # 10/12, but no "entailed" ever


def test_extraction_that_echoes_the_question_or_keeps_one_claim_fails():
    echo = FakeJudge(claims=lambda text, q: [q or "", text])
    report = asyncio.run(run_canaries(echo))
    got = {r.probe.id: r for r in report.results if r.probe.kind == "extract"}
    assert not got["en-two-facts"].passed and not got["ko-two-facts"].passed
    whole = asyncio.run(run_canaries(FakeJudge()))  # sentences: one claim per sentence
    assert [r.got for r in whole.results if r.probe.kind == "extract"] == [
        p.text for p in PROBES if p.kind == "extract"]


def test_judge_errors_are_failed_probes_with_the_reason():
    report = asyncio.run(run_canaries(FakeJudge(verdicts={}, strict=True)))
    checks = [r for r in report.results if r.probe.kind != "extract"]
    assert all(not r.passed and "JudgeOutputError" in (r.error or "") for r in checks)
    assert "JudgeOutputError" in (report.warning() or "")


def test_the_lexical_judge_report_is_honest():
    report = asyncio.run(run_canaries(get_judge("lexical")))
    failed = sorted(r.probe.id for r in report.results if not r.passed)
    # It cannot split a two-fact sentence, and a Korean plan swap fools word overlap.
    assert failed == ["en-two-facts", "ko-plan-swap", "ko-two-facts"]
    assert report.ok and report.line().startswith("judge canaries 9/12")


def test_the_explanation_names_the_failed_probes_never_all_passed():
    report = asyncio.run(run_canaries(get_judge("lexical")))
    text = report.explain()
    assert text.startswith("9 of 12 known-answer probes passed (")
    assert "failed: en-two-facts, ko-plan-swap, ko-two-facts;" in text
    assert "probes passed:" not in text  # the old wording, printed beside failed probes
    right = asyncio.run(run_canaries(FakeJudge(claims=two_claims, verdicts=lambda p, c: (
        "entailed" if c == p else "neutral" if p in {x.text for x in PROBES if x.kind == "unrelated"}
        else "contradicted"))))
    assert right.explain().startswith("12 of 12 known-answer probes passed (")
    assert "failed" not in right.explain()


def test_canaries_skipped_in_worker_processes_say_so(tmp_path):
    """With a cache, the canaries wait for this process's first uncached request; with
    ``--workers N`` the workers make every request, so they never run: the summary says that,
    not "every answer came from the cache" (which the second, all-cached run does say)."""
    env = {**os.environ, "NOISEGAUGE_CACHE": str(tmp_path / "cache.sqlite3")}

    def score(out: str) -> str:
        proc = subprocess.run([sys.executable, "-m", "noisegauge", "score", str(EXAMPLES),
                               "--workers", "2", "--out", str(tmp_path / out), "-q"],
                              capture_output=True, text=True, env=env, timeout=300)
        assert proc.returncode == 0, proc.stdout + proc.stderr
        return proc.stdout
    first = score("first.jsonl")
    assert "judge canaries not run: the rows were judged in worker processes (--workers 2)" in first
    assert "came from the cache" not in first
    again = score("second.jsonl")
    assert "judge: calls 0," in again
    assert "judge canaries not run: no request reached the judge (every answer came from the " \
           "cache" in again


def test_the_probes_cost_an_llm_judge_three_calls(fake_openai_server):
    require_extra("openai")
    judge = get_judge("openai:m", base_url=fake_openai_server.url)
    report = asyncio.run(run_canaries(judge))
    assert report.usage.calls == 3 == len(fake_openai_server.chat_requests())
    assert report.total == 12
    json.dumps(report.to_dict())  # plain JSON, for run metadata


def test_watch_mixes_probes_into_a_run_billed_to_the_report_not_the_sample():
    require_extra("openai")
    judge = FakeJudge()
    report = CanaryReport()
    watched = watch(judge, report, every=3, limit=2)
    assert watched.identity() == judge.identity()

    async def run() -> int:
        with metered() as usage:
            for i in range(9):
                await watched.check(f"Premise {i}.", ["claim"])
        await watched.finish()  # type: ignore[attr-defined]
        return usage.calls
    assert asyncio.run(run()) == 9  # the sample's meter saw only its own calls
    assert len(report.during) == 2 and report.usage.calls == 2
    assert len(judge.calls) == 11
    assert "during the run 2/2" in report.line()


def _contradicting(request: FakeRequest, choice: int) -> str:
    answer = json.loads(judge_responder()(request, choice))
    if all(isinstance(v, dict) for v in answer.values()):  # a check: contradict everything
        return json.dumps({p: dict.fromkeys(row, "contradicted") for p, row in answer.items()})
    return json.dumps(answer)


def _score(server: FakeOpenAIServer, tmp_path: Path, *extra: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "NOISEGAUGE_CACHE": "off", "NO_PROXY": "127.0.0.1"}
    return subprocess.run(
        [sys.executable, "-m", "noisegauge", "score", str(EXAMPLES), "--judge", "openai:m",
         "--base-url", server.url, "--out", str(tmp_path / "out.jsonl"), *extra],
        capture_output=True, text=True, env=env, timeout=180)


def test_score_warns_loudly_and_strict_stops_before_the_dataset(fake_openai_server, tmp_path):
    require_extra("openai")
    fake_openai_server.responder = _contradicting
    proc = _score(fake_openai_server, tmp_path, "--strict")
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert "judge canaries" in proc.stderr and "--strict" in proc.stderr
    asked = [r.body["messages"][-1]["content"] for r in fake_openai_server.chat_requests()]
    assert asked[0] == PROBE_TEXT and len(asked) == 4  # the probe, the canaries, nothing else
    assert not (tmp_path / "out.jsonl").exists()


def test_score_summary_reports_canaries_modes_and_accounting(fake_openai_server, tmp_path):
    require_extra("openai")
    fake_openai_server.json_schema = False
    proc = _score(fake_openai_server, tmp_path, "--max-concurrency", "4", "-q")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    out = proc.stdout
    assert "judge canaries " in out and f"/12 ({CANARY_VERSION})" in out
    assert "re-asks 0" in out and "timeouts 0" in out and "failed calls 0" in out
    assert "output mode json_object_schema (negotiated; refused: json_schema)" in out
    assert re.search(r"concurrency \d \(max 4, lowest \d\)", out)  # adapts below the max
    rows = [json.loads(line) for line in (tmp_path / "out.jsonl").read_text().splitlines()]
    assert {"re_asks", "fallbacks", "timeouts", "failed_calls"} <= set(rows[0]["usage"])
    # Every answered request is in a total the summary prints: the rows' or the canaries'.
    row_calls = sum(r["usage"]["calls"] for r in rows)
    canary_calls = int(re.search(r"; (\d+) calls, [\d,]+ tokens not in the rows' totals", out)[1])
    answered = [r for r in fake_openai_server.chat_requests() if r.status == 200
                and r.body["messages"][-1]["content"] != PROBE_TEXT]  # the probe: 1 token
    assert row_calls + canary_calls == len(answered)


def test_score_output_mode_option_forces_the_mode(fake_openai_server, tmp_path):
    require_extra("openai")
    proc = _score(fake_openai_server, tmp_path, "--output-mode", "text", "-q")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert {r.mode for r in fake_openai_server.chat_requests()} == {"text"}
    assert "output mode text (forced)" in proc.stdout


@pytest.mark.parametrize("probe", [p for p in PROBES if p.kind == "swap"], ids=lambda p: p.id)
def test_swap_probes_change_exactly_one_detail(probe):
    a, b = probe.text.split(), probe.claim.split()
    assert len(a) == len(b) and 1 <= sum(x != y for x, y in zip(a, b, strict=True)) <= 2


def test_no_canaries_skips_them(fake_openai_server, tmp_path):
    require_extra("openai")
    proc = _score(fake_openai_server, tmp_path, "--no-canaries", "-q")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "judge canaries" not in proc.stdout
    probes = [p.text for p in PROBES]
    assert not any(text in r.first_user for r in fake_openai_server.chat_requests()
                   for text in probes)
