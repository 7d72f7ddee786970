"""Conversations in and back out (#32, the data side): every reader turns a chat into a
``Sample`` whose ``history`` holds the turns before the question, malformed conversations
are row errors naming the message and the fix, and the history travels through results,
the report, the review page, ``leaks``, the journal and ``stress``.

Data: examples/chat_log.jsonl (three chats written for noisegauge, one per input form).
"""

from __future__ import annotations

import csv
import hashlib
import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from noisegauge import FakeJudge, Sample, evaluate
from noisegauge.cli.main import cli
from noisegauge.errors import InvalidInput, InvalidSample
from noisegauge.io.ragas import object_row
from noisegauge.io.readers import open_source
from noisegauge.io.results import read_results
from noisegauge.io.rows import sample_row
from noisegauge.samples import Turn

ROOT = Path(__file__).resolve().parents[1]
CHAT_LOG = ROOT / "examples" / "chat_log.jsonl"
ROWS: list[dict[str, Any]] = [json.loads(x) for x in CHAT_LOG.read_text("utf-8").splitlines()
                              if x.strip()]
#: What each row of chat_log.jsonl reads as: (question, history).
EXPECTED = [
    ("And for monthly plans?", (
        Turn("system", "You are Lumora's support assistant."),
        Turn("user", "What is the refund window on annual plans?"),
        Turn("assistant", "Annual plans can be refunded within 30 days of purchase."))),
    ("Does it include phone support too?", (
        Turn("user", "Does the Starter plan include email support?"),
        Turn("assistant", "Yes, the Starter plan includes email support on weekdays."))),
    ("Is it tracked?", (
        Turn("user", "How long does shipping to Canada take?"),
        Turn("assistant", "Shipping to Canada takes five business days."))),
]
BASE = {"response": "Seven days.", "reference": "Seven days.", "retrieved_contexts": ["c"]}


def _read(record: dict[str, Any], row: int = 3, **kw: Any) -> Sample:
    return Sample.from_record({**BASE, **record}, row=row, **kw)


def _error(record: dict[str, Any]) -> str:
    with pytest.raises(InvalidSample) as info:
        _read(record)
    return str(info.value)


def _conversations(samples: list[Sample | None]) -> list[tuple[str, tuple[Turn, ...]]]:
    return [(s.user_input, s.history) for s in samples if s is not None]


def _scored(data: Any, **kw: Any) -> Any:
    report = evaluate(data, judge=FakeJudge(), cache=False, progress=False, **kw)
    assert [r.reason for r in report.results if r.status == "error"] == []
    return report


# --- Sample.from_record ----------------------------------------------------------------------

def test_each_form_of_chat_log_reads_as_question_and_history() -> None:
    samples = [Sample.from_record(r, row=i) for i, r in enumerate(ROWS)]
    assert _conversations(list(samples)) == EXPECTED


def test_to_record_writes_history_beside_a_string_and_reads_back_the_same() -> None:
    sample = Sample.from_record(ROWS[0])
    record = sample.to_record()
    assert record["user_input"] == "And for monthly plans?"
    assert record["history"][0] == {"role": "system", "content": "You are Lumora's support assistant."}
    assert Sample.from_record(record) == sample


def test_a_single_turn_record_is_unchanged() -> None:
    record = {"id": "x", "user_input": "Q?", **BASE}
    sample = Sample.from_record(record)
    assert sample.history == ()
    assert sample.to_record() == record  # no history key: single-turn outputs did not move
    assert "history" not in sample.metadata


def test_tool_messages_and_tool_only_assistant_turns_are_skipped() -> None:
    s = _read({"user_input": [
        {"role": "user", "content": "Hi"},
        {"role": "assistant", "content": None, "tool_calls": [{"id": "1", "type": "function"}]},
        {"role": "tool", "tool_call_id": "1", "content": "search results"},
        {"role": "assistant", "content": "Hello!"},
        {"role": "developer", "content": "Be brief."},
        {"role": "user", "content": "Refund window?"},
        # the retrieval for the last question, after it: skipped too
        {"role": "assistant", "content": "", "tool_calls": [{"id": "2", "type": "function"}]},
        {"role": "tool", "tool_call_id": "2", "content": "30 days"}]})
    assert s.user_input == "Refund window?"
    assert s.history == (Turn("user", "Hi"), Turn("assistant", "Hello!"),
                         Turn("system", "Be brief."))


@pytest.mark.parametrize(("record", "message"), [
    ({"user_input": [{"role": "user", "content": "a"}, {"role": "assistant", "content": "b"}]},
     "row 3, field 'user_input[1]': is the assistant's turn, but a conversation must end with "
     "the user's turn that 'response' answers (expected the user's question as the last "
     "message; the assistant's answer to it goes in 'response')"),
    ({"question": [{"role": "bot", "content": "a"}]},
     "row 3, field 'question[0].role': is 'bot' (expected one of user, assistant, system (OpenAI "
     "'role') or human, ai, system (Ragas 'type'); tool messages are skipped)"),
    ({"user_input": [{"type": "human", "content": 5}]},
     "row 3, field 'user_input[0].content': has type int (expected a string, or a list of "
     '{"type": "text", "text": "..."} parts)'),
    ({"user_input": []},
     "row 3, field 'user_input': is an empty conversation (expected at least the user's "
     "question as a message, or the question as a string)"),
    ({"user_input": [{"role": "user", "content": [{"type": "image_url", "image_url": {}}]}]},
     "row 3, field 'user_input[0].content[0]': is a part of type 'image_url' (expected "
     '{"type": "text", "text": "..."}: only text can be judged; remove image or audio parts)'),
    ({"user_input": ["What?"]},
     "row 3, field 'user_input[0]': has type str (expected a message object "
     '{"role": ..., "content": "..."})'),
    ({"user_input": [{"content": "What?"}]},
     "row 3, field 'user_input[0]': has no role (expected a 'role' (or Ragas 'type'): one of "
     "user, assistant, system (OpenAI 'role') or human, ai, system (Ragas 'type'); tool "
     "messages are skipped)"),
    ({"user_input": [{"role": "assistant", "content": "  "}, {"role": "user", "content": "Q?"}]},
     "row 3, field 'user_input[0].content': is empty (expected the message's text; remove a "
     "message that says nothing)"),
    ({"user_input": {"role": "user", "content": "Q?"}},
     "row 3, field 'user_input': has type dict (expected the question as a string, or the "
     'conversation as a list of messages ({"role": "user", "content": "..."}), the last one '
     "the user's)"),
    ({"user_input": "Q?", "history": "we talked before"},
     "row 3, field 'history': has type str (expected a list of messages ({\"role\": \"user\" | "
     '"assistant" | "system", "content": "..."}), oldest first)'),
    ({"user_input": [{"role": "user", "content": "a"}, {"role": "user", "content": "b"}],
      "history": [{"role": "user", "content": "x"}]},
     "row 3, field 'history': is given, and user_input is a conversation too (expected the "
     "earlier turns once: in the conversation, or in 'history' beside a string user_input)"),
])
def test_a_malformed_conversation_names_the_row_the_message_and_the_fix(
        record: dict[str, Any], message: str) -> None:
    assert _error(record) == message


def test_the_history_counts_against_the_size_limit() -> None:
    turns = [{"role": "user", "content": "x" * 60}, {"role": "assistant", "content": "y" * 60}]
    assert _read({"user_input": "Q?", "history": turns}, max_chars=200).history
    with pytest.raises(InvalidSample, match=r"field 'history': has 120 characters in its 2 "
                                            r"turns \(expected at most 100 characters"):
        _read({"user_input": "Q?", "history": turns}, max_chars=100)


def test_a_sample_built_in_code_checks_its_turns() -> None:
    with pytest.raises(InvalidSample, match=r"field 'history\[0\]': has type dict \(expected "
                                            r"Turn\(role, content\)"):
        Sample(user_input="Q?", response="", reference="r", retrieved_contexts=(),
               history=({"role": "user", "content": "x"},))  # type: ignore[arg-type]
    with pytest.raises(InvalidSample, match=r"field 'history\[0\].role': is 'bot'"):
        Sample(user_input="Q?", response="", reference="r", retrieved_contexts=(),
               history=(Turn("bot", "x"),))  # type: ignore[arg-type]


# --- every reader ----------------------------------------------------------------------------

def test_jsonl_json_and_in_memory_rows_score_with_their_history(tmp_path: Path) -> None:
    as_json = tmp_path / "chat.json"
    as_json.write_text(json.dumps(ROWS), encoding="utf-8")
    columns = {k: [r.get(k) for r in ROWS] for k in ("id", "user_input", "history", "response",
                                                      "reference", "retrieved_contexts")}
    for data in (CHAT_LOG, as_json, ROWS, columns,
                 [Sample.from_record(r) for r in ROWS]):
        report = _scored(data)
        assert _conversations(report.samples) == EXPECTED, data


def _csv(path: Path, rows: list[dict[str, Any]]) -> Path:
    names = ["id", "user_input", "history", "response", "reference", "retrieved_contexts"]
    with path.open("w", newline="", encoding="utf-8") as f:
        w = csv.writer(f)
        w.writerow(names)
        for r in rows:
            w.writerow([v if isinstance(v := r.get(n), str) else "" if v is None
                        else json.dumps(v, ensure_ascii=False) for n in names])
    return path


def test_csv_with_a_json_cell_scores_with_its_history(tmp_path: Path) -> None:
    report = _scored(_csv(tmp_path / "chat.csv", ROWS))
    assert _conversations(report.samples) == EXPECTED


def test_a_csv_question_that_only_starts_with_a_bracket_stays_a_question(tmp_path: Path) -> None:
    rows = [{**BASE, "id": "a", "user_input": "[beta] Is the API stable?"},
            {**BASE, "id": "b", "user_input": '["a", "b"] which one?'}]
    report = _scored(_csv(tmp_path / "q.csv", rows))
    assert [s.user_input for s in report.samples if s] == [r["user_input"] for r in rows]


def test_dataframe_and_parquet_with_list_or_json_columns(tmp_path: Path) -> None:
    pd = pytest.importorskip("pandas", reason="pip install -e '.[tables]'")
    pytest.importorskip("pyarrow", reason="pip install -e '.[tables]'")
    # history as a list of structs (string user_input), and user_input as JSON text
    flat = [Sample.from_record(r).to_record() for r in ROWS]
    frame = pd.DataFrame(flat)
    texts = pd.DataFrame([{**r, "user_input": json.dumps(r["user_input"])
                           if not isinstance(r["user_input"], str) else r["user_input"],
                           "history": json.dumps(r["history"]) if "history" in r else None}
                          for r in ROWS])
    frame.to_parquet(tmp_path / "structs.parquet")
    texts.to_parquet(tmp_path / "texts.parquet")
    for data in (frame, tmp_path / "structs.parquet", tmp_path / "texts.parquet"):
        report = _scored(data)
        assert _conversations(report.samples) == EXPECTED, data


def test_a_parquet_struct_column_with_both_role_and_type(tmp_path: Path) -> None:
    pd = pytest.importorskip("pandas", reason="pip install -e '.[tables]'")
    pytest.importorskip("pyarrow", reason="pip install -e '.[tables]'")
    # One column for OpenAI and Ragas rows: each message gets both keys, one of them null.
    openai = [{"role": "user", "content": "Annual refunds?"}, {"role": "assistant", "content": "30 days."},
              {"role": "user", "content": "Monthly?"}]
    ragas = [{"type": "human", "content": "Canada shipping?"}, {"type": "ai", "content": "Five days."},
             {"type": "human", "content": "Tracked?"}]
    pd.DataFrame([{"id": "o", "user_input": openai, **BASE}, {"id": "r", "user_input": ragas, **BASE}]
                 ).to_parquet(tmp_path / "mixed.parquet")
    report = _scored(tmp_path / "mixed.parquet")
    assert _conversations(report.samples) == [
        ("Monthly?", (Turn("user", "Annual refunds?"), Turn("assistant", "30 days."))),
        ("Tracked?", (Turn("user", "Canada shipping?"), Turn("assistant", "Five days.")))]


def test_a_hugging_face_dataset() -> None:
    datasets = pytest.importorskip("datasets", reason="pip install datasets")
    flat = [Sample.from_record(r).to_record() for r in ROWS]
    report = _scored(datasets.Dataset.from_list(flat))
    assert _conversations(report.samples) == EXPECTED


def test_the_results_of_a_conversation_carry_and_reread_it(tmp_path: Path) -> None:
    out = tmp_path / "results.jsonl"
    result = CliRunner().invoke(cli, ["score", str(CHAT_LOG), "--judge", "fake", "--out",
                                      str(out), "--no-cache"])
    assert result.exit_code == 0, result.output
    rows = read_results(out)
    assert [r["input"]["user_input"] for r in rows] == [q for q, _ in EXPECTED]
    assert [tuple(Turn(**t) for t in r["input"]["history"]) for r in rows] == [h for _, h in EXPECTED]
    # and read again as an input (rows keep the conversation)
    again = [Sample.from_record({**r["input"], "id": r["id"]}) for r in rows]
    assert _conversations(list(again)) == EXPECTED


@pytest.mark.parametrize(("history", "problem"), [
    ("hi", "'input.history' is a string, not a list of turns"),
    (["hi"], "'input.history[0]' is a string, not a {role, content} object"),
    ([{"role": "bot", "content": "x"}], "'input.history[0].role' is 'bot', not one of user, "
                                         "assistant, system"),
    ([{"role": "user", "content": 3}], "'input.history[0].content' is a number, not a string"),
])
def test_a_results_file_with_a_broken_history_names_line_and_field(
        tmp_path: Path, history: Any, problem: str) -> None:
    path = tmp_path / "r.jsonl"
    row = {"status": "ok", "metrics": {}, "input": {"user_input": "Q?", "history": history}}
    path.write_text(json.dumps(row) + "\n", encoding="utf-8")
    with pytest.raises(InvalidInput, match="line 1: field " + problem.replace("[", r"\[")
                       .replace("]", r"\]").replace("{", r"\{").replace("}", r"\}")):
        read_results(path)


# --- Ragas MultiTurnSample --------------------------------------------------------------------

pydantic = pytest.importorskip("pydantic", reason="pip install -e '.[openai]'")


class HumanMessage(pydantic.BaseModel):  # Ragas 0.4's ragas.messages shapes
    content: str
    metadata: dict[str, Any] | None = None
    type: str = "human"


class AIMessage(pydantic.BaseModel):
    content: str
    metadata: dict[str, Any] | None = None
    type: str = "ai"
    tool_calls: list[dict[str, Any]] | None = None


class ToolMessage(pydantic.BaseModel):
    content: str
    metadata: dict[str, Any] | None = None
    type: str = "tool"


class MultiTurnSample(pydantic.BaseModel):
    user_input: list[HumanMessage | AIMessage | ToolMessage]
    reference: str | None = None
    reference_tool_calls: list[dict[str, Any]] | None = None


def _multi_turn() -> MultiTurnSample:
    return MultiTurnSample(user_input=[
        HumanMessage(content="What is the refund window on annual plans?"),
        AIMessage(content="Annual plans can be refunded within 30 days of purchase."),
        HumanMessage(content="And for monthly plans?"),
        AIMessage(content="", tool_calls=[{"name": "search", "args": {"q": "monthly refund"}}]),
        ToolMessage(content="Refunds: monthly plans can be refunded within 7 days of purchase."),
        ToolMessage(content="Refunds: annual plans can be refunded within 30 days of purchase."),
        AIMessage(content="Monthly plans can be refunded within 7 days of purchase.")],
        reference="Monthly plans can be refunded within 7 days of purchase.")


def test_a_ragas_multi_turn_sample_reads_its_answer_and_its_retrieval() -> None:
    report = _scored([_multi_turn()])
    s = report.samples[0]
    assert s is not None
    assert s.user_input == "And for monthly plans?"
    assert s.response == "Monthly plans can be refunded within 7 days of purchase."
    assert s.retrieved_contexts == (
        "Refunds: monthly plans can be refunded within 7 days of purchase.",
        "Refunds: annual plans can be refunded within 30 days of purchase.")
    assert s.history == (Turn("user", "What is the refund window on annual plans?"),
                         Turn("assistant", "Annual plans can be refunded within 30 days of purchase."))
    assert report.results[0].value("precision") == 1.0


def test_a_metric_scores_a_multi_turn_sample_as_ragas_calls_it() -> None:
    from noisegauge import Faithfulness

    metric = Faithfulness(judge=FakeJudge())
    assert metric.multi_turn_score(_multi_turn()) == 1.0
    result = metric.score(_multi_turn())
    assert result.sample is not None and result.status == "ok"
    assert metric.score(user_input=ROWS[0]["user_input"], response=ROWS[0]["response"],
                        reference=ROWS[0]["reference"],
                        retrieved_contexts=ROWS[0]["retrieved_contexts"]).value == 1.0


def test_a_multi_turn_sample_that_ends_with_the_question_needs_a_response() -> None:
    sample = MultiTurnSample(user_input=[HumanMessage(content="Q?"), ToolMessage(content="c")],
                             reference="r")
    row = object_row(0, sample)
    assert row.record is not None
    with pytest.raises(InvalidSample, match="field 'response': is missing"):
        Sample.from_record(row.record)


# --- OpenInference traces --------------------------------------------------------------------

def test_traces_put_the_llm_spans_earlier_turns_in_history() -> None:
    pytest.importorskip("openinference.semconv.trace", reason="pip install '.[traces]'")
    from noisegauge.io.openinference import TraceSpan, rows_from_spans

    msgs = [("system", "Answer from the context."), ("user", "Refund window on annual plans?"),
            ("assistant", "30 days."), ("user", "And for monthly plans?")]
    llm = {f"llm.input_messages.{i}.message.{k}": v for i, (role, text) in enumerate(msgs)
           for k, v in (("role", role), ("content", text))}
    llm |= {"llm.output_messages.0.message.role": "assistant",
            "llm.output_messages.0.message.content": "Seven days."}
    ret = {"retrieval.documents.0.document.id": "m",
           "retrieval.documents.0.document.content": "Monthly plans: refunds within 7 days."}
    spans = [TraceSpan("t", "root", None, "chain", "CHAIN", 1, {}),
             TraceSpan("t", "ret", "root", "retriever", "RETRIEVER", 2, ret),
             TraceSpan("t", "llm", "root", "llm", "LLM", 3, llm)]
    (row,) = rows_from_spans(spans)
    assert row.sample is not None and row.error is None
    assert row.sample.user_input == "And for monthly plans?"
    assert row.sample.history == (Turn("user", "Refund window on annual plans?"),
                                  Turn("assistant", "30 days."))
    report = _scored([row.sample], allow_no_reference=True)
    assert report.samples[0] is not None and report.samples[0].history == row.sample.history


# --- journal, fingerprints, label digests ----------------------------------------------------

def test_same_question_other_history_never_shares_a_journaled_result(tmp_path: Path) -> None:
    a = Sample.from_record({**ROWS[1]})
    b = Sample.from_record({**ROWS[1], "history": [
        {"role": "user", "content": "Does the Business plan include email support?"},
        {"role": "assistant", "content": "Yes, with a named account manager."}]})
    assert a.user_input == b.user_input and sample_row(0, a).fingerprint != sample_row(0, b).fingerprint
    out = tmp_path / "out.jsonl"
    evaluate([a], judge=FakeJudge(), cache=False, progress=False, out=out)
    first = read_results(out)[0]["input"]["history"]
    evaluate([b], judge=FakeJudge(), cache=False, progress=False, out=out)  # resumes by default
    second = read_results(out)[0]["input"]["history"]
    assert first != second and second[0]["content"].startswith("Does the Business plan")


def test_a_single_turn_fingerprint_is_what_it_was() -> None:
    s = Sample(user_input="Q?", response="A.", reference="R.", retrieved_contexts=("c",))
    old = {"user_input": "Q?", "response": "A.", "reference": "R.", "retrieved_contexts": ["c"]}
    digest = hashlib.blake2b(json.dumps(old, sort_keys=True).encode("ascii"),
                             digest_size=16).hexdigest()
    assert sample_row(0, s).fingerprint == digest


def test_a_label_digest_changes_with_the_history_only() -> None:
    from noisegauge.people.labels import digest_of

    row = {"response_claims": [{"text": "Seven days."}], "reference_claims": [],
           "input": {"user_input": "Q?", "retrieved_contexts": ["c"]}}
    parts = [["Seven days."], [], ["c"]]
    single = hashlib.sha256(json.dumps(parts, ensure_ascii=False, sort_keys=True)
                            .encode("utf-8")).hexdigest()[:16]
    assert digest_of(row) == single
    chat = {**row, "input": {**row["input"], "history": [{"role": "user", "content": "Monthly?"}]}}
    assert digest_of(chat) != single


def test_open_source_keeps_a_conversation_row_as_a_record() -> None:
    (raw,) = list(open_source([ROWS[0]]))
    assert raw.error is None and raw.record is not None


def test_ragchecker_output_keeps_the_history_and_reads_back(tmp_path: Path) -> None:
    out = tmp_path / "ragchecker.json"
    result = CliRunner().invoke(cli, ["score", str(CHAT_LOG), "--judge", "fake", "--out",
                                      str(out), "--out-format", "ragchecker", "--no-cache"])
    assert result.exit_code == 0, result.output
    entries = json.loads(out.read_text("utf-8"))["results"]
    assert [e["query"] for e in entries] == [q for q, _ in EXPECTED]
    assert "history" in entries[0]
    report = _scored(out)  # RAGChecker JSON in, with its claims and verdicts
    assert _conversations(report.samples) == EXPECTED


def test_an_mlflow_chat_row_is_a_conversation() -> None:
    from noisegauge.integrations.mlflow_scorers import sample_of

    messages = [{"role": "user", "content": "Refund window on annual plans?"},
                {"role": "assistant", "content": "30 days."},
                {"role": "user", "content": "And for monthly plans?"}]
    s = sample_of({"messages": messages}, {"response": "Seven days.",
                                           "retrieved_contexts": ["Monthly: 7 days."]},
                  {"expected_response": "Seven days."})
    assert s.user_input == "And for monthly plans?"
    assert s.history == (Turn("user", "Refund window on annual plans?"), Turn("assistant", "30 days."))
    with pytest.raises(InvalidInput, match=r"inputs: field 'user_input\[1\]': is the assistant's turn"):
        sample_of({"messages": messages[:2]}, {"response": "x", "retrieved_contexts": []},
                  {"expected_response": "y"})
    plain = sample_of({"question": "Q?"}, {"response": "A.", "retrieved_contexts": []},
                      {"expected_response": "A."})
    assert (plain.user_input, plain.history) == ("Q?", ())
