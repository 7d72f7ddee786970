"""MLflow tracking against a REAL local tracking server (``mlflow server``, SQLite store, on
127.0.0.1, started here and stopped after), read back with ``MlflowClient``: the logged
metrics equal the results file's summary, the artifacts open, a failed gate is a FAILED run,
stress levels are steps. Needs the ``mlflow`` extra; skipped with the install line without it.
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from batch_helpers import ROOT, require_extra
from noisegauge.engine.catalogue import METRIC_NAMES
from noisegauge.engine.summary import MetricSummary
from noisegauge.testing.children import spawn, stop

EXAMPLE = ROOT / "examples" / "support_bot.jsonl"
GOLDEN = ROOT / "examples" / "golden_support.jsonl"
#: MLflow's own outbound calls (telemetry, LiteLLM's price list) are off: tests stay offline.
QUIET = {"MLFLOW_DISABLE_TELEMETRY": "true", "DO_NOT_TRACK": "true",
         "LITELLM_LOCAL_MODEL_COST_MAP": "True", "NOISEGAUGE_CACHE": "off"}


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.fixture(scope="module")
def tracking_uri(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    require_extra("mlflow")
    root = tmp_path_factory.mktemp("mlflow")
    port = _free_port()
    log = open(root / "server.log", "wb")  # noqa: SIM115 (closed in the finally below)
    # spawn: the server and its workers die with this process, even when it is killed.
    proc = spawn(
        [sys.executable, "-m", "mlflow", "server", "--backend-store-uri",
         f"sqlite:///{root / 'mlflow.db'}", "--artifacts-destination", str(root / "artifacts"),
         "--host", "127.0.0.1", "--port", str(port), "--workers", "1"],
        cwd=root, stdout=log, stderr=subprocess.STDOUT, env={**os.environ, **QUIET})
    uri = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 300  # a cold start on a loaded 2-core machine is slow
        while True:
            try:
                with urllib.request.urlopen(f"{uri}/health", timeout=2) as r:
                    if r.status == 200:
                        break
            except OSError:
                pass
            if proc.poll() is not None or time.monotonic() > deadline:
                pytest.fail("mlflow server did not start: "
                            + (root / "server.log").read_text(errors="replace")[-2000:])
            time.sleep(0.5)
        yield uri
    finally:
        stop(proc, grace=20)  # the whole group: the workers outlive a killed leader
        log.close()


@pytest.fixture
def client(tracking_uri: str, monkeypatch: pytest.MonkeyPatch) -> Any:
    for k, v in QUIET.items():
        monkeypatch.setenv(k, v)
    monkeypatch.setenv("MLFLOW_TRACKING_URI", tracking_uri)
    from mlflow.tracking import MlflowClient

    return MlflowClient(tracking_uri)


def _cli(args: list[str], cwd: Path, uri: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, **QUIET, "MLFLOW_TRACKING_URI": uri,
           "PYTHONPATH": os.pathsep.join([str(ROOT / "src"), os.environ.get("PYTHONPATH", "")])}
    return subprocess.run([sys.executable, "-m", "noisegauge", *args], cwd=cwd, env=env,
                          capture_output=True, text=True, timeout=600)


def _run_id(stdout: str) -> str:
    line = next(x for x in stdout.splitlines() if x.startswith("mlflow run: "))
    return line.split(": ", 1)[1].strip()


def _summary_of(path: Path) -> dict[str, tuple[float | None, int, int, int]]:
    """Per metric from the results file itself: mean, n, undefined, errors."""
    rows = [json.loads(x) for x in path.read_text(encoding="utf-8").splitlines()]
    out = {}
    for name in METRIC_NAMES:
        ok = [r for r in rows if r["status"] != "error"]
        values = [r["metrics"][name] for r in ok if r["metrics"][name] is not None]
        out[name] = (sum(values) / len(values) if values else None, len(values),
                     len(ok) - len(values), len(rows) - len(ok))
    return out


def test_score_logs_params_metrics_and_artifacts(client: Any, tracking_uri: str,
                                                 tmp_path: Path) -> None:
    from noisegauge.integrations.mlflow import dataset_digest

    done = _cli(["score", str(EXAMPLE), "--out", "results.jsonl", "-q", "--mlflow",
                 "--mlflow-experiment", "ng-score", "--mlflow-run-name", "nightly",
                 "--fail-above", "noise_sensitivity_relevant=0.5",
                 "--junit", "results.xml", "--markdown", "summary.md"], tmp_path, tracking_uri)
    assert done.returncode == 0, done.stderr
    run = client.get_run(_run_id(done.stdout))
    assert run.info.status == "FINISHED" and run.info.run_name == "nightly"
    assert client.get_experiment(run.info.experiment_id).name == "ng-score"
    metrics, params, tags = run.data.metrics, run.data.params, run.data.tags
    for name, (mean, n, undefined, errors) in _summary_of(tmp_path / "results.jsonl").items():
        assert mean is not None and metrics[name] == pytest.approx(mean, abs=1e-12), name
        assert (metrics[f"{name}.n"], metrics[f"{name}.undefined"], metrics[f"{name}.errors"]) \
            == (n, undefined, errors)
        assert metrics[f"{name}.ci_low"] <= metrics[name] <= metrics[f"{name}.ci_high"]
    rows = [json.loads(x) for x in (tmp_path / "results.jsonl").read_text().splitlines()]
    assert params["judge"] == "lexical" and params["judge.version"] == rows[0]["judges"][0]["version"]
    assert params["compat"] == "noisegauge" and params["samples"] == str(len(rows)) == "29"
    assert params["dataset_digest"] == dataset_digest(rows)
    assert metrics["rows_undefined"] == 1
    assert metrics["judge_calls"] == sum(r["usage"]["calls"] for r in rows)
    assert 0 < metrics["canary_score"] <= 1
    assert tags["noisegauge.gates"] == "passed" and tags["noisegauge.command"] == "score"
    names = {a.path for a in client.list_artifacts(run.info.run_id)}
    assert names == {"results.jsonl", "report.html", "results.xml", "summary.md"}
    got = Path(client.download_artifacts(run.info.run_id, "", str(tmp_path / "back")))
    logged = [json.loads(x) for x in (got / "results.jsonl").read_text().splitlines()]
    assert [(r["id"], r["metrics"]) for r in logged] == [(r["id"], r["metrics"]) for r in rows]
    html = (got / "report.html").read_text(encoding="utf-8")
    assert html.startswith("<!DOCTYPE html>") and 'id="ng-data"' in html
    assert "<testsuite" in (got / "results.xml").read_text()
    assert "noise_sensitivity_relevant" in (got / "summary.md").read_text()


def test_a_failed_gate_is_still_logged_as_failed(client: Any, tracking_uri: str,
                                                 tmp_path: Path) -> None:
    done = _cli(["score", str(EXAMPLE), "--out", "results.jsonl", "-q", "--mlflow",
                 "--mlflow-experiment", "ng-gate", "--fail-above",
                 "noise_sensitivity_relevant=0.05"], tmp_path, tracking_uri)
    assert done.returncode == 1, done.stderr
    run = client.get_run(_run_id(done.stdout))
    assert run.info.status == "FAILED" and run.data.tags["noisegauge.gates"] == "failed"
    assert run.data.metrics["noise_sensitivity_relevant"] > 0.05


def test_stress_levels_are_steps(client: Any, tracking_uri: str, tmp_path: Path) -> None:
    done = _cli(["stress", str(GOLDEN), "--pipeline", "extractive", "--levels", "0,1,2",
                 "--out", "stress-out", "--mlflow", "--mlflow-experiment", "ng-stress"],
                tmp_path, tracking_uri)
    assert done.returncode == 0, done.stderr
    run_id = _run_id(done.stdout)
    curve = json.loads((tmp_path / "stress-out" / "curve.json").read_text())
    for name in ("noise_sensitivity_irrelevant", "precision"):
        history = sorted((m.step, m.value) for m in client.get_metric_history(run_id, name))
        points = [(p["level"], p["mean"]) for p in curve["metrics"][name]]
        assert [s for s, _ in history] == [s for s, _ in points] == [0, 1, 2]
        assert [v for _, v in history] == pytest.approx([v for _, v in points])
    run = client.get_run(run_id)
    assert run.data.params["pipeline"] == "extractive" and run.data.params["levels"] == "[0, 1, 2]"
    names = {a.path for a in client.list_artifacts(run_id)}
    assert {"curve.json", "results.jsonl", "flips.jsonl", "run.json"} <= names


def test_compare_logs_the_paired_differences(client: Any, tracking_uri: str,
                                             tmp_path: Path) -> None:
    done = _cli(["compare", str(GOLDEN), "--pipeline", "extractive", "--pipeline",
                 "extractive:strict", "--levels", "0,1", "--out", "ab", "--mlflow",
                 "--mlflow-experiment", "ng-compare"], tmp_path, tracking_uri)
    assert done.returncode == 0, done.stderr
    run = client.get_run(_run_id(done.stdout))
    pooled = [t for t in json.loads((tmp_path / "ab" / "compare.json").read_text())["tests"]
              if t["level"] is None and t["diff"] is not None]
    assert pooled
    for t in pooled:
        assert run.data.metrics[f"{t['metric']}.diff"] == pytest.approx(t["diff"])
        assert run.data.metrics[f"{t['metric']}.p_holm"] == pytest.approx(t["p_adjusted"])
    assert "compare.json" in {a.path for a in client.list_artifacts(run.info.run_id)}


def test_log_report_from_python(client: Any) -> None:
    from noisegauge import evaluate
    from noisegauge.integrations.mlflow import log_report

    refusal = {"id": "r", "user_input": "Do you ship to Mars?", "response": "",
               "reference": "No, shipping is limited to Earth.",
               "retrieved_contexts": ["Shipping: Earth only."]}
    report = evaluate([refusal], cache=False, progress=False)
    run_id = log_report(report, experiment="ng-python", run_name="refusal")
    run = client.get_run(run_id)
    # Every response-side mean is undefined: named in a tag, never logged as NaN or 0.
    undefined = run.data.tags["noisegauge.undefined_metrics"].split(",")
    assert "noise_sensitivity_relevant" in undefined
    assert "noise_sensitivity_relevant" not in run.data.metrics
    assert run.data.metrics["noise_sensitivity_relevant.undefined"] == 1
    assert run.info.status == "FINISHED"


def test_scorers_give_the_metrics_of_one_judged_pass(client: Any) -> None:
    from noisegauge import Sample, score_sample
    from noisegauge.integrations.mlflow import scorers

    row = {"inputs": {"question": "How much notice does the Pro plan need?"},
           "outputs": {"response": "The Pro plan needs a 30-day notice. Team plans need a "
                                   "60-day notice.",
                       "retrieved_contexts": ["Pro plan subscriptions need a 30-day notice.",
                                              "Team plans need a 60-day notice."]},
           "expectations": {"expected_response": "The Pro plan needs a 30-day notice."}}
    sample = Sample(user_input=row["inputs"]["question"], response=row["outputs"]["response"],
                    reference=row["expectations"]["expected_response"],
                    retrieved_contexts=tuple(row["outputs"]["retrieved_contexts"]))
    want = score_sample(sample, "lexical")
    found = {s.name: s(**row) for s in scorers("lexical")}
    assert set(found) == set(METRIC_NAMES)
    for name, feedback in found.items():
        assert feedback.value == pytest.approx(want.value(name)), name
    assert found["noise_sensitivity_irrelevant"].value == 0.5
    empty = scorers("lexical", ["faithfulness"])[0](**{**row, "outputs": {
        "response": "", "retrieved_contexts": row["outputs"]["retrieved_contexts"]}})
    assert empty.value is None and "undefined" in str(empty.error)

    import mlflow

    mlflow.set_experiment("ng-genai")
    result = mlflow.genai.evaluate(data=[row], scorers=scorers("lexical", ["faithfulness"]))
    assert result.metrics["faithfulness/mean"] == pytest.approx(want.value("faithfulness"))


def _support_chat(plan: str) -> dict[str, Any]:
    """An MLflow row of a chat: "Yes, it includes 24/7 phone support." after turns about
    ``plan``; the same question, answer and chunks whatever the plan."""
    return {"inputs": {"messages": [
                {"role": "system", "content": "You are a support assistant."},
                {"role": "user", "content": f"Does the {plan} plan include email support?"},
                {"role": "assistant", "content": f"Yes, the {plan} plan includes email support."},
                {"role": "user", "content": "Does it include phone support too?"}]},
            "outputs": {"response": "Yes, it includes 24/7 phone support.",
                        "retrieved_contexts": [
                            "Starter plan: email support on weekdays. No phone support.",
                            "Business plan: 24/7 phone support and a named account manager."]},
            "expectations": {"expected_response": "No, phone support is only included in the "
                                                  "Business plan."}}


def test_scorers_judge_a_conversation_with_its_turns_through_mlflow(client: Any) -> None:
    """A chat's ``inputs["messages"]`` through ``mlflow.genai.evaluate`` on the real server:
    each row is judged with its own turns ("it" is the Starter plan, or the Business plan),
    the feedback logged on its trace is that row's, and the two rows share no judged pass."""
    import mlflow

    from noisegauge import Sample, score_sample
    from noisegauge.integrations.mlflow import scorers

    rows = [_support_chat("Starter"), _support_chat("Business")]
    want = [score_sample(Sample.from_record({
        "user_input": r["inputs"]["messages"], "response": r["outputs"]["response"],
        "reference": r["expectations"]["expected_response"],
        "retrieved_contexts": r["outputs"]["retrieved_contexts"]}), "lexical") for r in rows]
    # about the Starter plan the answer is a hallucination; about Business, the chunk's
    assert [w.value("faithfulness") for w in want] == [0.0, 1.0]
    assert [w.value("hallucination") for w in want] == [1.0, 0.0]
    mlflow.set_experiment("ng-genai-chat")
    result = mlflow.genai.evaluate(data=rows, scorers=scorers("lexical", ["faithfulness",
                                                                       "hallucination"]))
    assert result.metrics["faithfulness/mean"] == pytest.approx(0.5)
    assert result.metrics["hallucination/mean"] == pytest.approx(0.5)
    traces = mlflow.search_traces(run_id=result.run_id, return_type="list")
    assert len(traces) == 2
    logged = {}
    for t in traces:
        asked = json.dumps(t.data.request)
        plan = "Starter" if "Starter plan include email" in asked else "Business"
        logged[plan] = {a.name: a.value for a in t.info.assessments
                        if a.name in ("faithfulness", "hallucination")}
    assert logged == {"Starter": {"faithfulness": 0.0, "hallucination": 1.0},
                      "Business": {"faithfulness": 1.0, "hallucination": 0.0}}


def test_score_logs_a_chat_log_with_its_turns(client: Any, tracking_uri: str,
                                              tmp_path: Path) -> None:
    chats = ROOT / "examples" / "chat_log.jsonl"
    done = _cli(["score", str(chats), "--judge", "lexical", "--out", "results.jsonl", "-q",
                 "--mlflow", "--mlflow-experiment", "ng-chat"], tmp_path, tracking_uri)
    assert done.returncode == 0, done.stderr
    run = client.get_run(_run_id(done.stdout))
    for name, (mean, n, _, _) in _summary_of(tmp_path / "results.jsonl").items():
        if mean is not None:
            assert run.data.metrics[name] == pytest.approx(mean, abs=1e-12), name
            assert run.data.metrics[f"{name}.n"] == n
    got = Path(client.download_artifacts(run.info.run_id, "results.jsonl", str(tmp_path / "back")))
    logged = [json.loads(x) for x in got.read_text("utf-8").splitlines()]
    source = [json.loads(x) for x in chats.read_text("utf-8").splitlines() if x.strip()]
    assert [r["input"]["user_input"] for r in logged] == [
        "And for monthly plans?", "Does it include phone support too?", "Is it tracked?"]
    assert logged[1]["input"]["history"] == source[1]["history"]
    assert [t["role"] for t in logged[0]["input"]["history"]] == ["system", "user", "assistant"]


def test_summary_metrics_never_log_an_undefined_mean() -> None:
    from noisegauge.integrations.mlflow import summary_metrics

    metrics, undefined = summary_metrics({
        "faithfulness": MetricSummary("faithfulness", 0.5, (0.25, 0.75), 4, 1, 0),
        "precision": MetricSummary("precision", None, None, 0, 5, 0)})
    keys = {k for k, _, _ in metrics}
    assert undefined == ["precision"] and "precision" not in keys
    assert {"faithfulness", "faithfulness.ci_low", "faithfulness.ci_high"} <= keys
    assert ("precision.undefined", 5.0, 0) in metrics


def test_a_missing_mlflow_gives_the_install_line(tmp_path: Path) -> None:
    block = ("import sys; sys.modules['mlflow'] = None; from noisegauge.cli.main import main; "
             "main(sys.argv[1:])")
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src"), "NOISEGAUGE_CACHE": "off"}
    done = subprocess.run([sys.executable, "-c", block, "score", str(EXAMPLE), "--mlflow", "-q"],
                          cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 2
    assert "pip install '.[mlflow]'" in done.stderr
    assert "noisegauge summary" not in done.stdout  # refused before any judging


def test_a_dead_tracking_server_is_refused_before_scoring(tmp_path: Path) -> None:
    """Nothing listening at MLFLOW_TRACKING_URI: one line naming it and exit 2, before any
    judging (MLflow alone retried it silently for ~4 minutes, after the run). The timeout
    is a guard against that hang, not a measurement."""
    require_extra("mlflow")
    import noisegauge

    uri = f"http://127.0.0.1:{_free_port()}"  # closed once the probe socket is
    env = {**os.environ, **QUIET, "MLFLOW_TRACKING_URI": uri,
           "NO_PROXY": "127.0.0.1,localhost", "no_proxy": "127.0.0.1,localhost",
           "PYTHONPATH": str(Path(noisegauge.__file__).parents[1])}
    done = subprocess.run([sys.executable, "-m", "noisegauge", "score", str(EXAMPLE),
                           "--mlflow", "-q"], cwd=tmp_path, env=env, capture_output=True,
                          text=True, timeout=60)
    assert done.returncode == 2, done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and f"MLflow tracking server {uri}" in lines[0], done.stderr
    assert "does not answer" in lines[0] and "Traceback" not in done.stderr
    assert "noisegauge summary" not in done.stdout  # refused before any judging
