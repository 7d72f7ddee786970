"""Traces in (#34): OTLP/JSON exports written by the real OpenTelemetry SDK, scored trace by
trace exactly as the same samples written as plain JSONL; traces without a reference get
faithfulness only and "no reference" elsewhere; broken traces are error rows naming them."""

from __future__ import annotations

import base64
import json
from pathlib import Path
from typing import Any

import pytest

pd = pytest.importorskip("pandas", reason="to_pandas needs the tables extra")
pytest.importorskip("openinference.semconv.trace", reason="needs the traces extra: "
                    "pip install '.[traces]'")
pytest.importorskip("ijson", reason="needs the traces extra: pip install '.[traces]'")
sdk_trace = pytest.importorskip("opentelemetry.sdk.trace", reason="needs the traces-test "
                                "extra: pip install '.[traces-test]'")
pytest.importorskip("opentelemetry.exporter.otlp.proto.common.trace_encoder",
                    reason="needs the traces-test extra: pip install '.[traces-test]'")
from click.testing import CliRunner  # noqa: E402
from google.protobuf import json_format  # noqa: E402
from openinference.semconv.trace import (  # noqa: E402
    DocumentAttributes,
    MessageAttributes,
    OpenInferenceSpanKindValues,
    RerankerAttributes,
    SpanAttributes,
)
from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans  # noqa: E402
from opentelemetry.sdk.trace.export import SimpleSpanProcessor  # noqa: E402
from opentelemetry.sdk.trace.export.in_memory_span_exporter import (  # noqa: E402
    InMemorySpanExporter,
)

from noisegauge import evaluate  # noqa: E402
from noisegauge.cli.main import cli  # noqa: E402
from noisegauge.io.openinference import TraceSpan, open_traces, rows_from_spans  # noqa: E402
from noisegauge.samples import Turn  # noqa: E402

KIND = SpanAttributes.OPENINFERENCE_SPAN_KIND
K = OpenInferenceSpanKindValues


def _docs(prefix: str, docs: list[tuple[str, str]]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for i, (doc_id, text) in enumerate(docs):
        out[f"{prefix}.{i}.{DocumentAttributes.DOCUMENT_ID}"] = doc_id
        out[f"{prefix}.{i}.{DocumentAttributes.DOCUMENT_CONTENT}"] = text
    return out


def _messages(prefix: str, msgs: list[tuple[str, str]]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for i, (role, content) in enumerate(msgs):
        out[f"{prefix}.{i}.{MessageAttributes.MESSAGE_ROLE}"] = role
        out[f"{prefix}.{i}.{MessageAttributes.MESSAGE_CONTENT}"] = content
    return out


D = {"p1": "The Pro plan costs 30 dollars a month.",
     "p2": "The Basic plan costs 10 dollars a month.",
     "r1": "Refunds are accepted within 30 days of purchase.",
     "r2": "Refunds for hardware are accepted within 14 days.",
     "s1": "Shipping to Canada takes five business days."}


def _rag(tracer: Any, question: str, answer: str | None, retrievers: list[list[str]],
         reranked: list[str] | None = None, metadata: dict[str, Any] | None = None,
         history: list[tuple[str, str]] = ()) -> str:
    """One RAG request, traced as an instrumented app would (OpenInference attributes)."""
    root_attrs: dict[str, Any] = {KIND: K.CHAIN.value, SpanAttributes.INPUT_VALUE: question}
    if metadata is not None:
        root_attrs[SpanAttributes.METADATA] = json.dumps(metadata)
    with tracer.start_as_current_span("rag", attributes=root_attrs) as root:
        for ids in retrievers:
            with tracer.start_as_current_span("retrieve", attributes={
                    KIND: K.RETRIEVER.value, SpanAttributes.INPUT_VALUE: question,
                    **_docs(SpanAttributes.RETRIEVAL_DOCUMENTS, [(i, D[i]) for i in ids])}):
                pass
        if reranked is not None:
            seen = [i for ids in retrievers for i in ids]
            with tracer.start_as_current_span("rerank", attributes={
                    KIND: K.RERANKER.value,
                    **_docs(RerankerAttributes.RERANKER_INPUT_DOCUMENTS, [(i, D[i]) for i in seen]),
                    **_docs(RerankerAttributes.RERANKER_OUTPUT_DOCUMENTS,
                            [(i, D[i]) for i in reranked])}):
                pass
        llm_attrs = {KIND: K.LLM.value, **_messages(SpanAttributes.LLM_INPUT_MESSAGES, [
            ("system", "Answer from the context."), *history, ("user", question)])}
        with tracer.start_as_current_span("llm", attributes=llm_attrs):
            pass
        if answer is not None:
            root.set_attribute(SpanAttributes.OUTPUT_VALUE, answer)
        return format(root.get_span_context().trace_id, "032x")


def _export(tmp_path: Path) -> tuple[Path, dict[str, str], list[dict[str, Any]]]:
    """Traces written by the SDK, encoded by the OTLP exporter's own encoder: two files (one
    trace's LLM span in the second, as a collector flushing mid-trace writes it), a bad line."""
    exporter = InMemorySpanExporter()
    provider = sdk_trace.TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    tracer = provider.get_tracer("rag-app")
    ids = {
        "rerank": _rag(tracer, "How much is the Pro plan?",
                       "The Pro plan costs 30 dollars a month.", [["p2", "r1"], ["p1", "s1"]],
                       reranked=["p1", "p2"], history=[("user", "Hi"), ("assistant", "Hello!")]),
        "two": _rag(tracer, "How long do refunds take?",
                    "Refunds are accepted within 30 days. Shipping takes two days.",
                    [["r1", "s1"], ["r2", "r1"]], metadata={"reference_id": "g-refund"}),
        "noref": _rag(tracer, "How long does shipping to Canada take?",
                      "Shipping to Canada takes five business days.", [["s1", "r2"]]),
        "noanswer": _rag(tracer, "What is the Basic plan?", None, [["p2"]]),
    }
    spans = exporter.get_finished_spans()
    llm_of_rerank = [s for s in spans if s.name == "llm"
                     and format(s.context.trace_id, "032x") == ids["rerank"]]
    first = [s for s in spans if s not in llm_of_rerank]
    out = tmp_path / "export"
    out.mkdir()
    # The OTLP exporter's encoding, as protobuf's JSON mapping writes it (base64 ids)...
    line = json_format.MessageToJson(encode_spans(first), indent=None)
    (out / "a.jsonl").write_text(line + "\n" + '{"resourceSpans": [oops\n', encoding="utf-8")
    # ... and as the collector's file exporter writes it (hex ids), pretty-printed.
    doc = json_format.MessageToDict(encode_spans(llm_of_rerank))
    for rs in doc["resourceSpans"]:
        for ss in rs["scopeSpans"]:
            for sp in ss["spans"]:
                for key in ("traceId", "spanId", "parentSpanId"):
                    sp[key] = base64.b64decode(sp[key]).hex()
    (out / "b.json").write_text(json.dumps(doc, indent=2), encoding="utf-8")
    golden = [
        {"user_input": "  how much is the PRO plan? ", "reference": "The Pro plan costs 30 dollars a month.",
         "reference_context_ids": ["p1"]},
        {"id": "g-refund", "user_input": "Refund window?",
         "reference": "Refunds are accepted within 30 days of purchase."},
    ]
    return out, ids, golden


def _plain(golden: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The same samples, written by hand as plain JSONL rows."""
    return [
        {"id": "rerank", "user_input": "How much is the Pro plan?",
         "response": "The Pro plan costs 30 dollars a month.",
         "reference": golden[0]["reference"], "reference_context_ids": ["p1"],
         "retrieved_contexts": [D["p1"], D["p2"]], "retrieved_context_ids": ["p1", "p2"]},
        {"id": "two", "user_input": "How long do refunds take?",
         "response": "Refunds are accepted within 30 days. Shipping takes two days.",
         "reference": golden[1]["reference"],
         "retrieved_contexts": [D["r1"], D["s1"], D["r2"]],
         "retrieved_context_ids": ["r1", "s1", "r2"]},
        # faithfulness reads no reference: any reference gives the trace's value
        {"id": "noref", "user_input": "How long does shipping to Canada take?",
         "response": "Shipping to Canada takes five business days.", "reference": "unused",
         "retrieved_contexts": [D["s1"], D["r2"]], "retrieved_context_ids": ["s1", "r2"]},
    ]


def test_traces_score_as_the_same_samples_in_jsonl(tmp_path: Path) -> None:
    export, ids, golden = _export(tmp_path)
    refs = tmp_path / "golden.jsonl"
    refs.write_text("".join(json.dumps(g) + "\n" for g in golden), encoding="utf-8")
    traces = evaluate(export, format="openinference", references=refs, cache=False,
                      progress=False).to_pandas().set_index("id")
    plain = tmp_path / "plain.jsonl"
    plain.write_text("".join(json.dumps(r) + "\n" for r in _plain(golden)), encoding="utf-8")
    jsonl = evaluate(plain, cache=False, progress=False).to_pandas().set_index("id")
    names = [c for c in jsonl.columns if c in (
        "noise_sensitivity_relevant", "noise_sensitivity_irrelevant", "hallucination",
        "self_knowledge", "faithfulness", "precision", "recall", "f1", "claim_recall",
        "context_precision", "context_utilization")]
    assert len(names) == 11
    for key in ("rerank", "two"):
        got, want = traces.loc[ids[key]], jsonl.loc[key]
        assert got["status"] == want["status"] == "ok"
        for name in names:
            assert pd.isna(got[name]) == pd.isna(want[name]), name
            if not pd.isna(want[name]):
                assert got[name] == pytest.approx(want[name]), (key, name)
        assert got["retrieved_contexts"] == want["retrieved_contexts"]
    noref = traces.loc[ids["noref"]]
    assert noref["faithfulness"] == pytest.approx(jsonl.loc["noref", "faithfulness"])
    assert noref["status"] == "undefined" and noref["reason"].startswith("no reference")
    for name in names:
        if name != "faithfulness":
            assert pd.isna(noref[name]), name
    broken = traces[traces["status"] == "error"]
    reasons = " | ".join(str(r) for r in broken["reason"])
    assert f"trace {ids['noanswer']}: no answer" in reasons and "output.value" in reasons
    assert "a.jsonl line 2: not valid JSON" in reasons
    assert len(traces) == 5


def test_undefined_reasons_and_summary_count_them(tmp_path: Path) -> None:
    export, ids, golden = _export(tmp_path)
    refs = tmp_path / "golden.jsonl"
    refs.write_text("".join(json.dumps(g) + "\n" for g in golden), encoding="utf-8")
    out = tmp_path / "out.jsonl"
    result = CliRunner().invoke(cli, ["score", str(export), "--format", "openinference",
                                       "--references", str(refs), "--out", str(out),
                                       "--no-cache", "--allow-errors"])
    assert result.exit_code == 0, result.output
    rows = {r["id"]: r for r in map(json.loads, out.read_text(encoding="utf-8").splitlines())}
    noref = rows[ids["noref"]]
    assert noref["metrics"]["faithfulness"] is not None
    assert noref["undefined"]["noise_sensitivity_relevant"] == "no reference"
    assert noref["undefined"]["hallucination"] == "no reference"
    assert noref["undefined"]["context_utilization"] == "no reference"
    assert rows[ids["noanswer"]]["status"] == "error"
    assert rows[ids["rerank"]]["status"] == "ok"


def test_references_need_the_openinference_format(tmp_path: Path) -> None:
    plain = tmp_path / "p.jsonl"
    plain.write_text(json.dumps(_plain([{"reference": "a"}, {"reference": "b"}])[0]) + "\n")
    result = CliRunner().invoke(cli, ["score", str(plain), "--references", str(plain),
                                       "--no-cache"])
    assert result.exit_code == 2 and "--format openinference" in result.output


def _span(tid: str, sid: str, parent: str | None, kind: str, start: int,
          **attrs: Any) -> TraceSpan:
    return TraceSpan(tid, sid, parent, kind.lower(), kind, start, attrs)


def test_bad_traces_are_named_not_dropped() -> None:
    spans = [
        # an orphan (its parent in no file), a wrong-typed document, nested attributes
        _span("t1", "a", "gone", "CHAIN", 1, **{"input.value": "Q?", "output.value": "A."}),
        _span("t1", "b", "a", "RETRIEVER", 2, retrieval={"documents": [
            {"document": {"id": "d1", "content": "A."}}, {"document": {"content": 7}}]}),
        # a question of the wrong type, no LLM span to fall back on
        _span("t2", "a", None, "CHAIN", 1, **{"input.value": 42, "output.value": "A."}),
    ]
    rows = list(rows_from_spans(spans))
    assert rows[0].sample is not None and rows[0].sample.retrieved_contexts == ("A.",)
    problems = rows[0].sample.metadata["trace_problems"]
    assert any("parent gone" in p for p in problems)
    assert any("retrieval.documents.1" in p and "type int" in p for p in problems)
    assert rows[1].error is not None
    message = str(rows[1].error)
    assert "trace t2: no question" in message and "input.value has type int" in message


def test_ten_thousand_documents_in_one_span(tmp_path: Path) -> None:
    docs = [{"key": f"retrieval.documents.{i}.document.content",
             "value": {"stringValue": f"Document {i} says {i}."}} for i in range(10_000)]
    span = {"traceId": "ab" * 16, "spanId": "cd" * 8, "name": "retrieve",
            "startTimeUnixNano": "2", "attributes": [
                {"key": KIND, "value": {"stringValue": "RETRIEVER"}}, *docs,
                {"key": "retrieval.documents.3.document.id", "value": {"intValue": "bad"}}]}
    root = {"traceId": "ab" * 16, "spanId": "ef" * 8, "name": "rag", "startTimeUnixNano": "1",
            "attributes": [{"key": "input.value", "value": {"stringValue": "Q?"}},
                           {"key": "output.value", "value": {"stringValue": "A."}}]}
    span["parentSpanId"] = root["spanId"]
    path = tmp_path / "big.json"
    path.write_text(json.dumps({"resourceSpans": [{"scopeSpans": [{"spans": [root, span]}]}]},
                               indent=1), encoding="utf-8")
    rows = list(open_traces(path))
    assert len(rows) == 1 and rows[0].sample is not None
    assert len(rows[0].sample.retrieved_contexts) == 10_000
    problems = rows[0].sample.metadata["trace_problems"]
    assert any("retrieval.documents.3.document.id" in p and "unreadable" in p for p in problems)


def test_spans_of_a_trace_over_two_files_come_together(tmp_path: Path) -> None:
    export, ids, _ = _export(tmp_path)
    rows = {r.sample.id: r.sample for r in open_traces(export) if r.sample is not None}
    rerank = rows[ids["rerank"]]
    # its LLM span (and so the earlier turns) is in b.json, with hex ids; the rest in a.jsonl
    assert rerank.history == (Turn("user", "Hi"), Turn("assistant", "Hello!"))
    assert "history" not in rerank.metadata  # one place for the turns: Sample.history
    assert "trace_problems" not in rerank.metadata
    assert rerank.chunk_ids == ("p1", "p2")  # the reranker's output, not the retrievers'
    assert rerank.reference is None  # no --references: nothing joined


def test_without_the_extra_the_install_line(tmp_path: Path,
                                            monkeypatch: pytest.MonkeyPatch) -> None:
    import sys

    from noisegauge.errors import MissingDependency

    monkeypatch.setitem(sys.modules, "openinference.semconv.trace", None)
    monkeypatch.delitem(sys.modules, "noisegauge.io.openinference")
    (tmp_path / "t.jsonl").write_text("{}\n")
    with pytest.raises(MissingDependency, match=r"pip install '\.\[traces\]'"):
        evaluate(tmp_path / "t.jsonl", format="openinference", cache=False, progress=False)


def test_plain_rows_without_reference_opt_in(tmp_path: Path) -> None:
    row = {"id": "x", "user_input": "How long does shipping to Canada take?",
           "response": "Shipping to Canada takes five business days.",
           "retrieved_contexts": [D["s1"]]}
    plain = tmp_path / "p.jsonl"
    plain.write_text(json.dumps(row) + "\n", encoding="utf-8")
    refused = evaluate(plain, cache=False, progress=False).results[0]
    assert refused.status == "error" and "reference" in str(refused.reason)
    scored = evaluate(plain, cache=False, progress=False, allow_no_reference=True).results[0]
    assert scored.status == "undefined" and scored.value("faithfulness") == 1.0
    assert scored.metrics["precision"].reason == "no reference"
    out = tmp_path / "o.jsonl"
    result = CliRunner().invoke(cli, ["score", str(plain), "--allow-no-reference", "--out",
                                      str(out), "--no-cache"])
    assert result.exit_code == 0, result.output
    assert json.loads(out.read_text())["undefined"]["recall"] == "no reference"


def test_extra_columns_say_no_reference_too(tmp_path: Path) -> None:
    row = {"id": "x", "user_input": "Q?", "response": "Shipping takes five days.",
           "retrieved_contexts": [D["s1"]]}
    report = evaluate([row], metrics=["faithfulness", "context_precision_ranked"],
                      cache=False, progress=False, allow_no_reference=True)
    result = report.results[0]
    assert result.metrics["context_precision_ranked"].reason == "no reference"
    assert result.metrics["faithfulness"].value is not None


def test_question_and_answer_from_the_llm_span() -> None:
    spans = [
        _span("t", "root", None, "AGENT", 1),
        _span("t", "llm", "root", "LLM", 3, **{
            **_messages(SpanAttributes.LLM_INPUT_MESSAGES, [
                ("system", "Be brief."), ("user", "Hi"), ("assistant", "Hello!"),
                ("user", "Refund window?")]),
            **_messages(SpanAttributes.LLM_OUTPUT_MESSAGES, [("assistant", "30 days.")])}),
        # a reranker that starts after the LLM span did not feed it: the retriever's documents
        _span("t", "late", "root", "RERANKER", 4, **_docs(
            RerankerAttributes.RERANKER_OUTPUT_DOCUMENTS, [("s1", D["s1"])])),
        _span("t", "ret", "root", "RETRIEVER", 2, **_docs(
            SpanAttributes.RETRIEVAL_DOCUMENTS, [("r1", D["r1"])])),
    ]
    (row,) = rows_from_spans(spans)
    assert row.sample is not None
    assert (row.sample.user_input, row.sample.response) == ("Refund window?", "30 days.")
    assert row.sample.retrieved_contexts == (D["r1"],)
    # the system prompt (the RAG template) is no turn of the conversation
    assert row.sample.history == (Turn("user", "Hi"), Turn("assistant", "Hello!"))
