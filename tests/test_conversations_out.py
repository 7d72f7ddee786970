"""Conversations back out (#32, the data side): the report, the review page's data, ``leaks``
and ``stress`` carry the turns before the question; single-turn outputs do not change.

Data: examples/chat_log.jsonl (three chats written for noisegauge).
"""

from __future__ import annotations

import hashlib
import json
import logging
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from noisegauge import FakeJudge, evaluate
from noisegauge.cli.main import cli
from noisegauge.leaks.aggregate import tally
from noisegauge.report import write_report
from noisegauge.report.data import sample_view
from noisegauge.stress import stress
from noisegauge.stress.generation import cache_key
from noisegauge.stress.golden import GoldenItem
from report_helpers import data_block, write_jsonl

ROOT = Path(__file__).resolve().parents[1]
CHAT_LOG = ROOT / "examples" / "chat_log.jsonl"
ROWS: list[dict[str, Any]] = [json.loads(x) for x in CHAT_LOG.read_text("utf-8").splitlines()
                              if x.strip()]
STARTER = ROWS[1]  # "Does it include phone support too?" after a turn about the Starter plan
PHONE = "Yes, the Starter plan includes 24/7 phone support."
BUSINESS = STARTER["retrieved_contexts"][1]


def _rows(judge: Any = None) -> list[dict[str, Any]]:
    report = evaluate(ROWS, judge=judge or FakeJudge(), cache=False, progress=False)
    return list(report.rows())


def test_the_report_data_carries_the_turns_and_a_single_turn_none(tmp_path: Path) -> None:
    rows = _rows()
    views = [sample_view(r, i, ("precision",), _Table()) for i, r in enumerate(rows)]
    assert views[1]["hi"] == [["user", "Does the Starter plan include email support?"],
                              ["assistant", "Yes, the Starter plan includes email support on weekdays."]]
    assert views[1]["q"] == "Does it include phone support too?"
    single = {**rows[1], "input": {k: v for k, v in rows[1]["input"].items() if k != "history"}}
    assert "hi" not in sample_view(single, 1, ("precision",), _Table())
    html = write_report(tmp_path / "r.html", rows, title="chats").read_text("utf-8")
    assert "Yes, the Starter plan includes email support on weekdays." in json.loads(
        data_block(html))["samples"][1]["hi"][1][1]


class _Table:
    """The chunk table sample_view fills (index per text)."""

    def __init__(self) -> None:
        self.texts: list[str] = []

    def add(self, text: str) -> int:
        self.texts.append(text)
        return len(self.texts) - 1


def _leaky_judge() -> FakeJudge:
    # The Business plan's chunk states the claim: it leaked from there (irrelevant noise).
    return FakeJudge(verdicts={(BUSINESS, PHONE): "entailed"})


def test_leaks_show_the_turns_that_give_a_leaked_claim_its_meaning(tmp_path: Path) -> None:
    rows = _rows(_leaky_judge())
    found = tally(rows, top=5)
    examples = [ex for s in found.sources for ex in s.examples]
    assert [ex.text for ex in examples] == [PHONE]
    assert examples[0].context == (
        "user: Does the Starter plan include email support? · assistant: Yes, the Starter plan "
        "includes email support on weekdays. · question: Does it include phone support too?")
    path = write_jsonl(tmp_path / "results.jsonl", rows)
    result = CliRunner().invoke(cli, ["leaks", str(path)])
    assert result.exit_code == 0, result.output
    assert "     in: user: Does the Starter plan include email support?" in result.output
    # the report's Sources tab shows it too (escaped text, server-side)
    html = write_report(tmp_path / "r.html", rows, title="chats").read_text("utf-8")
    assert 'class="ctx muted">user: Does the Starter plan include email support?' in html


def test_a_single_turn_leak_has_no_context_line(tmp_path: Path) -> None:
    single = {k: v for k, v in STARTER.items() if k != "history"}
    rows = list(evaluate([single], judge=_leaky_judge(), cache=False, progress=False).rows())
    (ex,) = [ex for s in tally(rows, top=5).sources for ex in s.examples]
    assert ex.context is None
    result = CliRunner().invoke(cli, ["leaks", str(write_jsonl(tmp_path / "r.jsonl", rows))])
    assert result.exit_code == 0 and " in: " not in result.output


def test_the_review_page_serves_the_turns(tmp_path: Path) -> None:
    from batch_helpers import require_extra

    require_extra("review")
    from people_helpers import review_server

    rows = _rows()
    with review_server(rows, tmp_path / "labels.jsonl") as state:
        samples = {s["id"]: s for s in state.snapshot()["samples"]}
    assert samples["chat02-history-support"]["history"] == [
        ["user", "Does the Starter plan include email support?"],
        ["assistant", "Yes, the Starter plan includes email support on weekdays."]]
    assert samples["chat02-history-support"]["question"] == "Does it include phone support too?"


# --- stress ----------------------------------------------------------------------------------

GOLDEN = [{"id": "g-chat", "history": STARTER["history"], "user_input": STARTER["user_input"],
           "reference": STARTER["reference"], "retrieved_contexts": [STARTER["retrieved_contexts"][0]]},
          {"id": "g-single", "user_input": "How long does shipping to Canada take?",
           "reference": "Shipping to Canada takes five business days.",
           "retrieved_contexts": ["Shipping to Canada takes five business days."]}]


def test_stress_gives_the_history_to_a_pipeline_that_takes_it(tmp_path: Path) -> None:
    seen: list[tuple[str, list[dict[str, str]]]] = []

    def pipeline(question: str, contexts: Sequence[str],
                 history: list[dict[str, str]] | None = None) -> str:
        seen.append((question, list(history or [])))
        return contexts[0]

    report = stress(GOLDEN, pipeline=pipeline, levels=[0], judge="fake", concurrency=1)
    assert sorted(seen) == sorted([(STARTER["user_input"], STARTER["history"]),
                                   (GOLDEN[1]["user_input"], [])])
    by_id = {r.item_id: r for r in report.rows}
    assert by_id["g-chat"].result_row()["input"]["history"] == STARTER["history"]
    assert "history" not in by_id["g-single"].result_row()["input"]
    assert by_id["g-chat"].sample_record()["history"] == STARTER["history"]
    assert by_id["g-chat"].result.status != "error"
    written = report.write(tmp_path / "out", plot=False)
    assert written  # the files a conversation's rows went into read back as results
    rows = [json.loads(x) for x in (tmp_path / "out" / "results.jsonl").read_text().splitlines()]
    assert [r["input"].get("history") for r in rows if r["item_id"] == "g-chat"] == [STARTER["history"]]


def test_stress_warns_when_the_pipeline_takes_no_history(caplog: pytest.LogCaptureFixture) -> None:
    calls: list[int] = []

    def pipeline(question: str, contexts: Sequence[str]) -> str:
        calls.append(len(contexts))
        return contexts[0]

    with caplog.at_level(logging.WARNING, logger="noisegauge"):
        stress(GOLDEN, pipeline=pipeline, levels=[0], judge="fake", concurrency=1)
    assert calls == [1, 1]  # called as always: (question, contexts)
    assert any("1 golden rows are conversations (e.g. g-chat)" in r.getMessage()
               for r in caplog.records)


def test_the_generation_cache_key_takes_the_history_and_only_then() -> None:
    identity = {"pipeline": "callable", "target": "m:f"}
    old = hashlib.sha256(json.dumps({"pipeline": identity, "question": "Q?", "contexts": ["c"]},
                                    sort_keys=True, ensure_ascii=False).encode()).hexdigest()
    assert cache_key(identity, "Q?", ["c"]) == old == cache_key(identity, "Q?", ["c"], [])
    a = cache_key(identity, "Q?", ["c"], [{"role": "user", "content": "About Starter."}])
    b = cache_key(identity, "Q?", ["c"], [{"role": "user", "content": "About Business."}])
    assert len({old, a, b}) == 3


def test_a_golden_item_reads_its_conversation() -> None:
    item = GoldenItem.from_record({**GOLDEN[0], "history": None,
                                   "user_input": [*STARTER["history"],
                                                  {"role": "user", "content": STARTER["user_input"]}]}, 0)
    assert item.question == STARTER["user_input"]
    assert [(t.role, t.content) for t in item.history] == [
        (t["role"], t["content"]) for t in STARTER["history"]]


def test_to_pandas_has_a_history_column_only_for_conversations() -> None:
    pytest.importorskip("pandas", reason="pip install -e '.[tables]'")
    chats = evaluate(ROWS, judge=FakeJudge(), cache=False, progress=False).to_pandas()
    assert list(chats.columns[:5]) == ["id", "status", "reason", "history", "user_input"]
    assert chats["history"][1] == STARTER["history"]
    single = {k: v for k, v in STARTER.items() if k != "history"}
    one = evaluate([single], judge=FakeJudge(), cache=False, progress=False).to_pandas()
    assert "history" not in one.columns
    # the frame reads back as the same conversations
    again = evaluate(chats, judge=FakeJudge(), cache=False, progress=False)
    assert [s.history for s in again.samples] == [s.history for s in evaluate(
        ROWS, judge=FakeJudge(), cache=False, progress=False).samples]


def test_a_failing_conversation_in_ci_says_what_it_followed() -> None:
    from noisegauge.report.digest import sample_lines
    from noisegauge.thresholds import SampleFailure

    rows = _rows(_leaky_judge())
    lines = sample_lines(SampleFailure(1, rows[1], ()), ["precision"])
    assert lines[1:3] == [
        "  after 1 earlier turn, then assistant: Yes, the Starter plan includes email support "
        "on weekdays.",
        "  Q: Does it include phone support too?"]
    single = {**rows[1], "input": {k: v for k, v in rows[1]["input"].items() if k != "history"}}
    assert sample_lines(SampleFailure(1, single, ()), ["precision"])[1] == (
        "  Q: Does it include phone support too?")


def test_the_golden_review_page_shows_a_golden_rows_conversation(tmp_path: Path) -> None:
    from noisegauge.people.golden import golden_digest, question_text, read_golden
    from noisegauge.people.golden_page import GoldenState
    from noisegauge.people.labels import LabelFile

    source = ROOT / "tests" / "data" / "golden_review.jsonl"
    first = json.loads(source.read_text("utf-8").splitlines()[0])
    before = golden_digest(first)
    chat = {**first, "id": "chat", "history": STARTER["history"]}
    path = tmp_path / "golden.jsonl"
    path.write_text(json.dumps(first) + "\n" + json.dumps(chat) + "\n", encoding="utf-8")
    rows = read_golden(path)
    state = GoldenState(rows, LabelFile(tmp_path / "events.jsonl"))
    views = {v["id"]: v for v in state.snapshot()["rows"]}
    assert views["chat"]["history"] == [[t["role"], t["content"]] for t in STARTER["history"]]
    assert views[first["id"]]["history"] == []
    assert golden_digest(rows[0]) == before  # a single-turn row keeps its digest
    assert views[first["id"]]["question"] == question_text(first) == first["user_input"]
    assert golden_digest(rows[1]) != before  # other turns before it: another question
