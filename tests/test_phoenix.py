"""Phoenix round trip against a REAL server (``arize-phoenix``, SQLite store, 127.0.0.1,
started once: the ``phoenix_url`` fixture): spans sent by a real OpenTelemetry OTLP
exporter, ``noisegauge score phoenix:PROJECT --annotate`` reads them through Phoenix's client
and writes each trace's metrics on its root span, read back here through Phoenix's own
client. The same spans written as an OTLP/JSON file score trace by trace the same. Also
noisegauge as a Phoenix experiment evaluator (``run_experiment``, offline lexical judge).
Needs the phoenix, phoenix-test and traces-test extras; skipped with the install line
without them.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import uuid
from pathlib import Path
from typing import Any

import pytest

from batch_helpers import ROOT, require_extra

require_extra("traces", "traces-test", "phoenix", "phoenix-test")

from google.protobuf import json_format  # noqa: E402
from openinference.semconv.resource import ResourceAttributes  # noqa: E402
from openinference.semconv.trace import (  # noqa: E402
    DocumentAttributes,
    OpenInferenceSpanKindValues,
    RerankerAttributes,
    SpanAttributes,
)
from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans  # noqa: E402
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter  # noqa: E402
from opentelemetry.sdk.resources import Resource  # noqa: E402
from opentelemetry.sdk.trace import TracerProvider  # noqa: E402
from opentelemetry.sdk.trace.export import SimpleSpanProcessor  # noqa: E402
from opentelemetry.sdk.trace.export.in_memory_span_exporter import (  # noqa: E402
    InMemorySpanExporter,
)
from phoenix.client import Client  # noqa: E402

KIND = SpanAttributes.OPENINFERENCE_SPAN_KIND
K = OpenInferenceSpanKindValues
QUIET = {"PHOENIX_TELEMETRY_ENABLED": "false", "DO_NOT_TRACK": "1", "NOISEGAUGE_CACHE": "off"}

D = {"p1": "The Pro plan costs 30 dollars a month.",
     "r1": "Refunds are accepted within 30 days of purchase.",
     "r2": "Refunds for hardware are accepted within 14 days.",
     "s1": "Shipping to Canada takes five business days."}
GOLDEN = [{"user_input": "How long do refunds take?",
           "reference": "Refunds are accepted within 30 days of purchase.",
           "reference_context_ids": ["r1"]}]


def _docs(prefix: str, ids: list[str]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for i, doc_id in enumerate(ids):
        out[f"{prefix}.{i}.{DocumentAttributes.DOCUMENT_ID}"] = doc_id
        out[f"{prefix}.{i}.{DocumentAttributes.DOCUMENT_CONTENT}"] = D[doc_id]
    return out


def _rag(tracer: Any, question: str, answer: str | None, retrieved: list[list[str]],
         reranked: list[str] | None = None) -> None:
    """One RAG request as an instrumented app traces it: two retrievers, maybe a reranker."""
    with tracer.start_as_current_span("rag", attributes={
            KIND: K.CHAIN.value, SpanAttributes.INPUT_VALUE: question}) as root:
        for ids in retrieved:
            with tracer.start_as_current_span("retrieve", attributes={
                    KIND: K.RETRIEVER.value, **_docs(SpanAttributes.RETRIEVAL_DOCUMENTS, ids)}):
                pass
        if reranked is not None:
            with tracer.start_as_current_span("rerank", attributes={
                    KIND: K.RERANKER.value,
                    **_docs(RerankerAttributes.RERANKER_OUTPUT_DOCUMENTS, reranked)}):
                pass
        with tracer.start_as_current_span("llm", attributes={KIND: K.LLM.value}):
            pass
        if answer is not None:
            root.set_attribute(SpanAttributes.OUTPUT_VALUE, answer)


def _send(url: str, project: str, tmp_path: Path) -> Path:
    """The app's traces sent to Phoenix over OTLP/HTTP, and the same spans as an OTLP/JSON
    file (what a collector's file exporter would have written)."""
    memory = InMemorySpanExporter()
    provider = TracerProvider(resource=Resource({ResourceAttributes.PROJECT_NAME: project}))
    provider.add_span_processor(SimpleSpanProcessor(OTLPSpanExporter(endpoint=f"{url}/v1/traces")))
    provider.add_span_processor(SimpleSpanProcessor(memory))
    tracer = provider.get_tracer("support-bot")
    _rag(tracer, "How long do refunds take?",
         "Refunds are accepted within 14 days. Refunds are accepted within 30 days of purchase.",
         [["r1", "s1"], ["r2", "r1"]], reranked=["r2", "r1"])
    _rag(tracer, "How long does shipping to Canada take?",
         "Shipping to Canada takes five business days.", [["s1"]])
    _rag(tracer, "What does the Pro plan cost?", None, [["p1"]])
    assert provider.force_flush(30_000)
    provider.shutdown()
    export = tmp_path / "export.jsonl"
    export.write_text(json_format.MessageToJson(encode_spans(memory.get_finished_spans()),
                                                indent=None) + "\n")
    return export


def _cli(args: list[str], cwd: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, **QUIET,
           "PYTHONPATH": os.pathsep.join([str(ROOT / "src"), os.environ.get("PYTHONPATH", "")])}
    return subprocess.run([sys.executable, "-m", "noisegauge", *args], cwd=cwd, env=env,
                          capture_output=True, text=True, timeout=600)


def _rows(path: Path) -> dict[str, dict[str, Any]]:
    return {r["id"]: r for r in map(json.loads, path.read_text().splitlines())}


def test_score_phoenix_project_and_annotate_root_spans(phoenix_url: str, tmp_path: Path) -> None:
    project = f"bot-{uuid.uuid4().hex[:8]}"
    export = _send(phoenix_url, project, tmp_path)
    (tmp_path / "golden.jsonl").write_text("".join(json.dumps(g) + "\n" for g in GOLDEN))

    done = _cli(["score", f"phoenix:{project}", "--phoenix-url", phoenix_url, "--references",
                 "golden.jsonl", "--annotate", "--out", "phoenix.jsonl", "--allow-errors",
                 "--no-cache"], tmp_path)
    assert done.returncode == 0, done.stderr
    assert f"phoenix:{project}: annotated the root spans of 3 trace(s)" in done.stdout
    from_file = _cli(["score", str(export), "--format", "openinference", "--references",
                      "golden.jsonl", "--out", "file.jsonl", "--allow-errors", "--no-cache"],
                     tmp_path)
    assert from_file.returncode == 0, from_file.stderr

    rows, file_rows = _rows(tmp_path / "phoenix.jsonl"), _rows(tmp_path / "file.jsonl")
    assert rows.keys() == file_rows.keys() and len(rows) == 3
    for tid, row in rows.items():  # read through Phoenix as from the export, trace by trace
        assert (row["status"], row["metrics"], row["undefined"], row["reason"]) == (
            file_rows[tid]["status"], file_rows[tid]["metrics"], file_rows[tid]["undefined"],
            file_rows[tid]["reason"])
    by_status = {r["status"]: r for r in rows.values()}
    assert set(by_status) == {"ok", "undefined", "error"}
    refunds = by_status["ok"]
    assert refunds["input"]["chunk_ids"] == ["r2", "r1"]  # the reranker's output
    # "14 days" is wrong and came from r2, which the golden row does not list as relevant
    assert refunds["metrics"]["noise_sensitivity_irrelevant"] == 0.5

    client = Client(base_url=phoenix_url)
    roots = {s["context"]["trace_id"]: s["context"]["span_id"]
             for s in client.spans.get_spans(project_identifier=project, parent_id="null")}
    assert roots.keys() == rows.keys()
    found = client.spans.get_span_annotations(span_ids=list(roots.values()),
                                              project_identifier=project)
    notes: dict[tuple[str, str], Any] = {(a["span_id"], a["name"]): a for a in found}
    assert all(a["annotator_kind"] == "CODE" for a in found)

    span = roots[refunds["id"]]
    for name in ("noise_sensitivity_relevant", "noise_sensitivity_irrelevant",
                 "hallucination", "faithfulness"):
        assert notes[(span, f"noisegauge.{name}")]["result"]["score"] == pytest.approx(
            refunds["metrics"][name])
    leaked = notes[(span, "noisegauge.noise_sensitivity_irrelevant")]
    assert leaked["metadata"]["leaked_from"] == ["r2"]
    assert "'Refunds are accepted within 14 days.' (from r2)" in leaked["result"]["explanation"]

    shipping = roots[by_status["undefined"]["id"]]
    assert notes[(shipping, "noisegauge.faithfulness")]["result"]["score"] == 1.0
    ns = notes[(shipping, "noisegauge.noise_sensitivity_irrelevant")]["result"]
    assert (ns["label"], ns["score"], ns["explanation"]) == ("undefined", None, "no reference")

    broken = by_status["error"]
    error = notes[(roots[broken["id"]], "noisegauge.error")]["result"]
    assert error["label"] == "error" and "no answer" in error["explanation"]
    assert error["explanation"] == broken["reason"]
    assert not any(n == "noisegauge.faithfulness" for s, n in notes if s == roots[broken["id"]])


def test_since_and_unknown_project(phoenix_url: str, tmp_path: Path) -> None:
    project = f"since-{uuid.uuid4().hex[:8]}"
    _send(phoenix_url, project, tmp_path)
    base = ["--phoenix-url", phoenix_url, "--allow-errors", "--no-cache", "-q"]
    for out in ("r.jsonl", "again.jsonl"):  # annotated twice: updated, not piled up
        recent = _cli(["score", f"phoenix:{project}", "--since", "1h", "--annotate",
                       "--out", out, *base], tmp_path)
        assert recent.returncode == 0, recent.stderr
    assert len(_rows(tmp_path / "r.jsonl")) == 3
    client = Client(base_url=phoenix_url)
    roots = [s["context"]["span_id"]
             for s in client.spans.get_spans(project_identifier=project, parent_id="null")]
    found = client.spans.get_span_annotations(span_ids=roots, project_identifier=project)
    keys = [(a["span_id"], a["name"]) for a in found]
    assert len(keys) == len(set(keys)) == 2 * 4 + 1  # two scored traces, one error row
    later = _cli(["score", f"phoenix:{project}", "--since", "2999-01-01", *base], tmp_path)
    assert later.returncode == 2 and "no traces started since 2999-01-01" in later.stderr
    missing = _cli(["score", "phoenix:no-such-project", *base], tmp_path)
    assert missing.returncode == 2 and "no-such-project" in missing.stderr


def test_noisegauge_as_a_phoenix_experiment_evaluator(phoenix_url: str) -> None:
    from phoenix.client.experiments import run_experiment

    from noisegauge import Sample, score_sample
    from noisegauge.integrations.phoenix_evaluator import make_evaluators

    client = Client(base_url=phoenix_url)
    examples = [
        {"input": {"question": "How long do refunds take?"},
         "output": {"reference": "Refunds are accepted within 30 days of purchase."},
         "metadata": {"docs": ["r1", "r2"]}},
        {"input": {"question": "How long does shipping to Canada take?"}, "output": {},
         "metadata": {"docs": ["s1"]}},
    ]
    dataset = client.datasets.create_dataset(
        name=f"support-{uuid.uuid4().hex[:8]}", inputs=[e["input"] for e in examples],
        outputs=[e["output"] for e in examples], metadata=[e["metadata"] for e in examples])
    answers = {"How long do refunds take?": "Refunds are accepted within 14 days.",
               "How long does shipping to Canada take?":
               "Shipping to Canada takes five business days."}

    def task(input: dict[str, Any], metadata: dict[str, Any]) -> dict[str, Any]:
        return {"response": answers[input["question"]],
                "retrieved_contexts": [D[i] for i in metadata["docs"]],
                "retrieved_context_ids": metadata["docs"]}

    names = ["noise_sensitivity_relevant", "noise_sensitivity_irrelevant", "faithfulness"]
    ran = run_experiment(dataset=dataset, task=task, client=client, print_summary=False,
                         evaluators=make_evaluators("lexical", names))
    ran = client.experiments.get_experiment(experiment_id=ran["experiment_id"])  # as stored
    assert len(ran["evaluation_runs"]) == 2 * len(names)
    runs = {r["id"]: r for r in ran["task_runs"]}
    by_question: dict[str, dict[str, Any]] = {}
    for ev in ran["evaluation_runs"]:
        question = runs[ev.experiment_run_id]["output"]["response"]
        by_question.setdefault(question, {})[ev.name] = ev.result
    assert len(by_question) == 2
    # the same numbers as scoring the samples directly
    direct = score_sample(Sample(user_input="How long do refunds take?",
                                 response=answers["How long do refunds take?"],
                                 reference=GOLDEN[0]["reference"],
                                 retrieved_contexts=(D["r1"], D["r2"])), "lexical")
    refunds = by_question[answers["How long do refunds take?"]]
    for name in names:
        assert refunds[f"noisegauge.{name}"]["score"] == pytest.approx(direct.value(name))
    leaked = [refunds[f"noisegauge.{n}"] for n in names[:2]
              if refunds[f"noisegauge.{n}"]["score"] == 1.0]
    assert leaked and "(from r2)" in leaked[0]["explanation"]
    shipping = by_question[answers["How long does shipping to Canada take?"]]
    assert shipping["noisegauge.faithfulness"]["score"] == 1.0
    ns = shipping["noisegauge.noise_sensitivity_relevant"]
    assert (ns["score"], ns["label"], ns["explanation"]) == (None, "undefined", "no reference")


def test_since_leaves_out_traces_begun_before_it_and_says_so(phoenix_url: str,
                                                             tmp_path: Path) -> None:
    """A trace whose root started before --since but whose spans run past it is half a
    trace: left out whole, and the log names it."""
    from datetime import datetime, timedelta, timezone

    project = f"cut-{uuid.uuid4().hex[:8]}"
    provider = TracerProvider(resource=Resource({ResourceAttributes.PROJECT_NAME: project}))
    provider.add_span_processor(SimpleSpanProcessor(
        OTLPSpanExporter(endpoint=f"{phoenix_url}/v1/traces")))
    tracer = provider.get_tracer("support-bot")
    start = datetime.now(timezone.utc) - timedelta(hours=3)
    ns = int(start.timestamp()) * 10**9
    with tracer.start_as_current_span("rag", start_time=ns, attributes={
            KIND: K.CHAIN.value, SpanAttributes.INPUT_VALUE: "How long do refunds take?",
            SpanAttributes.OUTPUT_VALUE: "Refunds are accepted within 30 days."}) as root:
        later = ns + 2 * 3600 * 10**9  # its retriever ran two hours in
        with tracer.start_as_current_span("retrieve", start_time=later, attributes={
                KIND: K.RETRIEVER.value, **_docs(SpanAttributes.RETRIEVAL_DOCUMENTS, ["r1"])}):
            pass
        cut = format(root.get_span_context().trace_id, "032x")
    _rag(tracer, "How long does shipping to Canada take?",
         "Shipping to Canada takes five business days.", [["s1"]])
    assert provider.force_flush(30_000)
    provider.shutdown()
    since = (start + timedelta(hours=1)).isoformat()
    done = _cli(["score", f"phoenix:{project}", "--phoenix-url", phoenix_url, "--since", since,
                 "--out", "r.jsonl", "--no-cache"], tmp_path)
    assert done.returncode == 0, done.stderr
    rows = _rows(tmp_path / "r.jsonl")
    assert len(rows) == 1 and cut not in rows
    said = " ".join(done.stderr.split())  # the log line as rich wrapped it, unwrapped
    assert f"1 trace(s) started before --since and are left out: {cut}" in said


def test_parse_since() -> None:
    from datetime import datetime, timezone

    from noisegauge.errors import InvalidInput
    from noisegauge.integrations.phoenix import parse_since

    now = datetime(2026, 12, 5, 12, 0, tzinfo=timezone.utc)
    assert parse_since("90m", now) == datetime(2026, 12, 5, 10, 30, tzinfo=timezone.utc)
    assert parse_since("2d", now) == datetime(2026, 12, 3, 12, 0, tzinfo=timezone.utc)
    assert parse_since("2026-12-01T08:00:00Z") == datetime(2026, 12, 1, 8, tzinfo=timezone.utc)
    assert parse_since("2026-12-01") == datetime(2026, 12, 1, tzinfo=timezone.utc)  # UTC
    with pytest.raises(InvalidInput, match="ISO 8601 time"):
        parse_since("yesterday")
