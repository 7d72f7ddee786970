"""``noisegauge testset --from-log`` on a chat log (#32): a logged conversation gives a golden
row that carries its turns (``history``), retrieval reads the question with the last user
turns ("And on the Team plan?" alone names no refund), and the row keeps its turns through
``review GOLDEN``, ``testset export`` and ``stress --strategy siblings``.

Data: tests/data/testset_docs (docs/ and chat_log.jsonl, written for noisegauge).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

pytest.importorskip("bm25s", reason="noisegauge testset needs bm25s: pip install '.[testset]'")

from noisegauge.cli.main import cli
from noisegauge.stress import stress
from noisegauge.testset import build_testset

DATA = Path(__file__).resolve().parent / "data" / "testset_docs"
DOCS = DATA / "docs"
CHAT_LOG = DATA / "chat_log.jsonl"
LOGGED = [json.loads(x) for x in CHAT_LOG.read_text("utf-8").splitlines() if x.strip()]
#: chat-1's turns before "And on the Team plan?", as a golden row writes them.
CHAT1_TURNS = [{"role": m["role"], "content": m["content"]} for m in LOGGED[0]["user_input"][:-1]]


def _read(path: Path) -> list[dict[str, Any]]:
    return [json.loads(x) for x in path.read_text("utf-8").splitlines() if x.strip()]


@pytest.fixture(scope="module")
def golden(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("chat") / "golden.jsonl"
    res = CliRunner().invoke(cli, ["testset", str(DOCS), "--from-log", str(CHAT_LOG),
                                   "--out", str(out), "--no-cache"])
    assert res.exit_code == 0, res.output
    return out


def test_a_logged_conversation_gives_a_golden_row_with_its_turns(golden: Path) -> None:
    rows = {r["id"]: r for r in _read(golden)}
    chat = rows["chat-1"]  # an OpenAI conversation in user_input, the system prompt first
    assert chat["user_input"] == "And on the Team plan?"
    assert chat["history"] == CHAT1_TURNS
    assert chat["reference"] == ("Team plan customers can ask for a full refund within 60 days "
                                 "of purchase.")
    assert chat["retrieved_context_ids"] == ["plans/team.md#3"]
    assert chat["status"] == "drafted"
    # the plan the conversation moved away from is the trap, not a second answer
    assert chat["distractors"][0] == {
        "id": "plans/pro.md#3", "kind": "look-alike", "differs": "Team vs Pro; 60 days vs 30 days",
        "text": LOGGED[0]["retrieved_contexts"][2]}
    assert chat["metadata"]["response"] == LOGGED[0]["response"]
    storage = rows["chat-2"]  # a string user_input with history beside it
    assert storage["history"] == LOGGED[1]["history"]
    assert storage["retrieved_context_ids"] == ["plans/pro.md#4"]
    assert "100 GB" in storage["reference"]
    assert [d["id"] for d in storage["distractors"] if d["kind"] == "look-alike"] == [
        "plans/team.md#4"]
    assert "history" not in rows["chat-3"]  # a single turn's row is as it always was
    assert list(rows["chat-3"])[:3] == ["id", "user_input", "reference"]


def test_the_last_user_turns_steer_what_is_retrieved(tmp_path: Path) -> None:
    """The same log rows with their turns dropped: the elliptical questions find another
    chunk (the Team storage chunk, the Pro price), which is why the turns are read."""
    bare = tmp_path / "bare.jsonl"
    bare.write_text("".join(json.dumps({**{k: v for k, v in r.items() if k != "history"},
                                        "user_input": r["user_input"][-1]["content"]
                                        if isinstance(r["user_input"], list) else r["user_input"]})
                            + "\n" for r in LOGGED[:2]), encoding="utf-8")
    without = {r.id: r for r in build_testset([DOCS], log=bare)}
    with_turns = {r.id: r for r in build_testset([DOCS], log=CHAT_LOG)}
    for rid in ("chat-1", "chat-2"):
        assert without[rid].history == ()
        assert without[rid].retrieved_context_ids != with_turns[rid].retrieved_context_ids
    assert without["chat-1"].retrieved_context_ids == ("plans/team.md#4",)
    assert without["chat-2"].retrieved_context_ids == ("plans/pro.md#2",)


def test_the_question_outweighs_the_earlier_turns_and_a_pronoun_takes_their_name() -> None:
    """examples/chat_log.jsonl over examples/lumora-kb: "And for monthly plans?" after a
    question about annual plans drafts from the monthly chunk (the earlier "annual", rare and
    next to its "what", never outweighs the "monthly" that replaced it), and the annual chunk
    is its look-alike trap; "Does it include phone support too?" after a turn about the
    Starter plan is about the Starter plan's chunk, not the Business plan's phone support."""
    root = Path(__file__).resolve().parents[1] / "examples"
    rows = {r.id: r for r in build_testset([root / "lumora-kb"], log=root / "chat_log.jsonl")}
    monthly = rows["chat01-openai-refund"]
    assert monthly.reference == "Refunds: monthly plans can be refunded within 7 days of purchase."
    assert monthly.retrieved_context_ids == ("chat01-openai-refund#1",)
    assert (monthly.distractors[0].id, monthly.distractors[0].kind,
            monthly.distractors[0].differs) == (
        "chat01-openai-refund#2", "look-alike", "monthly vs annual; 7 days vs 30 days")
    assert [t.role for t in monthly.history] == ["system", "user", "assistant"]
    starter = rows["chat02-history-support"]
    assert starter.retrieved_context_ids == ("chat02-history-support#1",)
    assert starter.retrieved_contexts[0].startswith("Starter plan:")


def test_a_questions_file_with_a_conversation_searches_the_corpus_with_its_turns(
        tmp_path: Path) -> None:
    questions = tmp_path / "questions.jsonl"
    questions.write_text(json.dumps({"id": "c1", "history": CHAT1_TURNS[1:],
                                     "user_input": "And on the Team plan?"}) + "\n",
                         encoding="utf-8")
    (row,) = build_testset([DOCS], questions=questions)
    assert row.retrieved_context_ids == ("plans/team.md#3",)
    assert [(t.role, t.content) for t in row.history] == [
        (t["role"], t["content"]) for t in CHAT1_TURNS[1:]]
    assert row.to_record()["history"] == CHAT1_TURNS[1:]


def test_a_broken_conversation_in_the_log_is_named_with_the_fix(tmp_path: Path) -> None:
    log = tmp_path / "log.jsonl"
    turns = [*LOGGED[0]["user_input"][:-1]]  # ends with the assistant's turn
    log.write_text(json.dumps({**LOGGED[0], "user_input": turns}) + "\n", encoding="utf-8")
    res = CliRunner().invoke(cli, ["testset", str(DOCS), "--from-log", str(log),
                                   "--out", str(tmp_path / "g.jsonl"), "--no-cache"])
    assert res.exit_code == 2
    assert f"{log}: row 1, field 'user_input[2]': is the assistant's turn" in res.output
    assert not (tmp_path / "g.jsonl").exists()


def test_the_golden_chat_row_keeps_its_turns_through_review_export_and_stress(
        golden: Path, tmp_path: Path) -> None:
    from noisegauge.people.golden import golden_digest, read_golden
    from noisegauge.people.golden_page import GoldenState
    from noisegauge.people.labels import LabelFile

    rows = read_golden(golden)
    events = LabelFile(tmp_path / "events.jsonl")
    state = GoldenState(rows, events)
    views = {v["id"]: v for v in state.snapshot()["rows"]}
    assert views["chat-1"]["history"] == [[t["role"], t["content"]] for t in CHAT1_TURNS]
    assert views["chat-1"]["question"] == "And on the Team plan?"
    assert views["chat-3"]["history"] == []
    for r in rows:
        events.append({"kind": "verdict", "id": r["id"], "digest": golden_digest(r),
                       "verdict": "accept"})
    final = tmp_path / "final.jsonl"
    res = CliRunner().invoke(cli, ["testset", "export", str(golden), "--labels",
                                   str(events.path), "--out", str(final)])
    assert res.exit_code == 0, res.output
    kept = {r["id"]: r for r in _read(final)}
    assert kept["chat-1"]["history"] == CHAT1_TURNS and kept["chat-1"]["draft"]["reviewed"]
    assert "history" not in kept["chat-3"]

    seen: dict[str, list[tuple[list[dict[str, str]], tuple[str, ...]]]] = {}

    def pipeline(question: str, contexts: Sequence[str],
                 history: list[dict[str, str]] | None = None) -> str:
        seen.setdefault(question, []).append((list(history or []), tuple(contexts)))
        return contexts[0]

    report = stress(final, pipeline=pipeline, strategy="siblings", levels=[0, 1],
                    judge="fake", concurrency=1, seed=0)
    asked = seen["And on the Team plan?"]
    assert len(asked) == 2 and all(h == CHAT1_TURNS for h, _ in asked)
    # at level 1 the row's own look-alike trap (the Pro refund chunk) is injected
    assert any(LOGGED[0]["retrieved_contexts"][2] in c for _, c in asked)
    assert all(h == [] for h, _ in seen[LOGGED[2]["user_input"]])
    chat_rows = [r for r in report.rows if r.item_id == "chat-1"]
    assert len(chat_rows) == 2
    assert all(r.result_row()["input"]["history"] == CHAT1_TURNS for r in chat_rows)
