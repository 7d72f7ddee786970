"""Runs, stress sweeps and A/B comparisons as MLflow runs; the metrics as MLflow GenAI scorers.

The tracking server is MLflow's own choice: ``MLFLOW_TRACKING_URI`` (as MLflow users expect),
else MLflow's default. The experiment is ``experiment=``, else ``MLFLOW_EXPERIMENT_NAME``,
else ``noisegauge``. A run whose gates failed is still logged, and marked ``FAILED``.

Metric keys are the metric names of the results file: ``noise_sensitivity_relevant`` is the
mean, ``noise_sensitivity_relevant.ci_low`` / ``.ci_high`` its 95% interval, ``.n``,
``.undefined`` and ``.errors`` its counts. An undefined mean is not logged (MLflow would need
NaN); the tag ``noisegauge.undefined_metrics`` names it instead.
"""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
import time
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..engine.summary import MetricSummary
from ..errors import InvalidInput, MissingDependency

if TYPE_CHECKING:
    from ..runner.run_report import Report

__all__ = ["DEFAULT_EXPERIMENT", "TrackedRun", "check_server", "dataset_digest", "log_compare",
           "log_report", "log_run", "log_stress", "scorers", "summary_metrics"]

DEFAULT_EXPERIMENT = "noisegauge"
#: MLflow accepts at most this many metrics, params and tags in one ``log_batch`` request.
_BATCH = 1000, 100, 100


def _mlflow() -> Any:
    try:
        import mlflow
    except ImportError as exc:
        raise MissingDependency("MLflow tracking (--mlflow)", "mlflow", "mlflow") from exc
    return mlflow


def check_server(timeout: float = 5.0) -> None:
    """Raise :class:`InvalidInput` now when the tracking server is an HTTP one that does not
    answer (nothing listening, no route, no answer in ``timeout`` seconds): MLflow itself
    retries such a server silently for minutes, and only after the run. Any HTTP answer,
    even an error, means a server is there; a file or database store is not checked."""
    import urllib.error
    import urllib.request

    uri = str(_mlflow().get_tracking_uri())
    if not uri.startswith(("http://", "https://")):
        return
    try:
        with urllib.request.urlopen(uri.rstrip("/") + "/health", timeout=timeout):
            pass
    except urllib.error.HTTPError:
        return  # it answered
    except (OSError, ValueError) as exc:
        reason = getattr(exc, "reason", None) or exc
        if isinstance(reason, OSError) and reason.strerror:
            reason = reason.strerror
        raise InvalidInput(f"the MLflow tracking server {uri} ($MLFLOW_TRACKING_URI) does not "
                           f"answer ({reason}); start it, or point MLFLOW_TRACKING_URI at one "
                           "that runs") from None


@dataclass
class TrackedRun:
    """What one MLflow run receives: params, metrics ``(key, value, step)``, tags, files."""

    params: dict[str, str] = field(default_factory=dict)
    metrics: list[tuple[str, float, int]] = field(default_factory=list)
    tags: dict[str, str] = field(default_factory=dict)
    artifacts: list[Path] = field(default_factory=list)
    failed: bool = False


def summary_metrics(summary: Mapping[str, MetricSummary], step: int = 0,
                    ) -> tuple[list[tuple[str, float, int]], list[str]]:
    """MLflow metrics for a run's summary, and the names whose mean is undefined."""
    out: list[tuple[str, float, int]] = []
    undefined: list[str] = []
    for name, s in summary.items():
        if s.mean is None:
            undefined.append(name)
        else:
            out.append((name, float(s.mean), step))
        if s.ci is not None and s.n >= 2:
            out += [(f"{name}.ci_low", float(s.ci[0]), step), (f"{name}.ci_high", float(s.ci[1]), step)]
        out += [(f"{name}.n", float(s.n), step), (f"{name}.undefined", float(s.undefined), step),
                (f"{name}.errors", float(s.errors), step)]
    return out, undefined


def dataset_digest(rows: Iterable[Mapping[str, Any]]) -> str:
    """A digest of the texts that were scored (each row's ``input``), in order: the same
    data gives the same digest whatever file format it came in."""
    h = hashlib.sha256()
    for row in rows:
        text = json.dumps(row.get("input"), sort_keys=True, ensure_ascii=False)
        h.update(text.encode("utf-8") + b"\n")
    return h.hexdigest()[:16]


def file_digest(path: str | os.PathLike[str]) -> str:
    """The first 16 hex digits of a file's sha256 (a golden set, an input file)."""
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()[:16]


def _judge_params(judges: Sequence[Mapping[str, Any]]) -> dict[str, str]:
    """``judge`` (its spec name) and ``judge.<field>`` for each identity field; several judges
    are numbered (``judge.1.model``)."""
    params: dict[str, str] = {}
    for k, ident in enumerate(judges):
        prefix = "judge" if len(judges) == 1 else f"judge.{k}"
        for key, value in ident.items():
            name = prefix if key == "judge" else f"{prefix}.{key}"
            params[name] = value if isinstance(value, str) else json.dumps(value, sort_keys=True)
    return params


def report_run(report: Report, *, compat: str | None = None, digest: str | None = None,
               failed: bool = False, workdir: Path | None = None) -> TrackedRun:
    """The MLflow run of a ``Report`` (``evaluate`` / ``noisegauge score``): with ``workdir``,
    its rows are written there as ``results.jsonl`` and ``report.html`` to be logged."""
    from .. import __version__

    run = TrackedRun(failed=failed)
    summary = report.summary()
    run.metrics, undefined = summary_metrics(summary)
    stats = report.stats
    st, u = stats.status, stats.usage
    for key, value in (("rows", stats.rows), ("rows_ok", st.get("ok", 0)),
                       ("rows_undefined", st.get("undefined", 0)),
                       ("rows_error", st.get("error", 0)), ("judge_calls", u.calls),
                       ("judge_tokens", u.prompt_tokens + u.completion_tokens)):
        run.metrics.append((key, float(value), 0))
    if u.cost_usd is not None:
        run.metrics.append(("cost_usd", float(u.cost_usd), 0))
    judges = list(report.judges)
    canary = next((j["canaries"] for j in judges if isinstance(j.get("canaries"), str)), None)
    if canary:  # "9/12 (ng-canaries-1)": the share passed is the canary score
        passed, _, total = canary.split(" ")[0].partition("/")
        if total.isdigit() and int(total):
            run.metrics.append(("canary_score", int(passed) / int(total), 0))
    run.params.update(_judge_params([{k: v for k, v in j.items() if k != "canaries"}
                                     for j in judges]))
    run.params["compat"] = compat or "noisegauge"
    run.params["samples"] = str(stats.rows)
    run.params["metrics"] = ",".join(report.metrics)
    run.params["noisegauge_version"] = __version__
    if digest is None and report.kept:
        digest = dataset_digest(report.rows())
    if digest is not None:
        run.params["dataset_digest"] = digest
    run.tags["noisegauge.gates"] = "failed" if failed else "passed"
    if undefined:
        run.tags["noisegauge.undefined_metrics"] = ",".join(undefined)
    if workdir is not None and report.kept:
        run.artifacts.append(report.to_jsonl(workdir / "results.jsonl"))
        run.artifacts.append(report.to_html(workdir / "report.html"))
    return run


def log_run(run: TrackedRun, *, experiment: str | None = None, run_name: str | None = None,
            client: Any = None) -> str:
    """Send one ``TrackedRun`` to MLflow; returns the run id. A failure while logging marks
    the run FAILED before it is raised."""
    mlflow = _mlflow()
    from mlflow.entities import Metric, Param

    client = client if client is not None else mlflow.tracking.MlflowClient()
    name = experiment or os.environ.get("MLFLOW_EXPERIMENT_NAME") or DEFAULT_EXPERIMENT
    found = client.get_experiment_by_name(name)
    experiment_id = found.experiment_id if found is not None else client.create_experiment(name)
    tags = {"noisegauge.source": "noisegauge", **run.tags}
    created = client.create_run(experiment_id, run_name=run_name, tags=tags)
    run_id: str = created.info.run_id
    try:
        now = int(time.time() * 1000)
        metrics = [Metric(k, v, now, step) for k, v, step in run.metrics]
        params = [Param(k, v[:6000]) for k, v in run.params.items()]
        for i in range(0, max(len(metrics), 1), _BATCH[0]):
            client.log_batch(run_id, metrics=metrics[i:i + _BATCH[0]])
        for i in range(0, len(params), _BATCH[1]):
            client.log_batch(run_id, params=params[i:i + _BATCH[1]])
        for path in run.artifacts:
            client.log_artifact(run_id, str(path))
    except BaseException:
        client.set_terminated(run_id, "FAILED")
        raise
    client.set_terminated(run_id, "FAILED" if run.failed else "FINISHED")
    return run_id


def log_report(report: Report, *, experiment: str | None = None, run_name: str | None = None,
               failed: bool = False, compat: str | None = None,
               artifacts: Sequence[str | os.PathLike[str]] = (),
               digest: str | None = None, tags: Mapping[str, str] | None = None,
               client: Any = None) -> str:
    """Log a run's ``Report`` to MLflow and return the MLflow run id.

    Params: the judge's identity, ``compat``, the dataset digest, the sample count. Metrics:
    each metric's mean, interval bounds and counts, row counts, judge calls, tokens, cost and
    the canary score. Artifacts: ``results.jsonl`` and ``report.html`` (when the report kept
    its rows) plus ``artifacts``. Tags: whether the gates passed, the undefined metrics, and
    ``tags``. ``failed=True`` (a gate failed) marks the run FAILED.

    Example:
        ```python
        from noisegauge import evaluate
        from noisegauge.integrations.mlflow import log_report

        run_id = log_report(evaluate("examples/support_bot.jsonl"), run_name="nightly")
        ```
    """
    with tempfile.TemporaryDirectory(prefix="noisegauge-mlflow-") as tmp:
        run = report_run(report, compat=compat, digest=digest, failed=failed, workdir=Path(tmp))
        run.artifacts += [Path(a) for a in artifacts]
        run.tags.update(tags or {})
        return log_run(run, experiment=experiment, run_name=run_name, client=client)


def stress_run(out_dir: str | os.PathLike[str], *, failed: bool = False,
               golden: str | os.PathLike[str] | None = None) -> TrackedRun:
    """The MLflow run of a ``noisegauge stress`` output directory: each level is a step."""
    out = Path(out_dir)
    try:
        curve = json.loads((out / "curve.json").read_text(encoding="utf-8"))
        config = json.loads((out / "run.json").read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise InvalidInput(f"{out}: not a stress output directory (curve.json, run.json): "
                           f"{exc}") from None
    run = TrackedRun(failed=failed)
    undefined = set()
    for name, points in curve["metrics"].items():
        for p in points:
            level = int(p["level"])
            if p.get("mean") is None:
                undefined.add(name)
            else:
                run.metrics.append((name, float(p["mean"]), level))
            if p.get("ci"):
                run.metrics += [(f"{name}.ci_low", float(p["ci"][0]), level),
                                (f"{name}.ci_high", float(p["ci"][1]), level)]
            for key in ("n", "undefined", "errors"):
                if key in p:
                    run.metrics.append((f"{name}.{key}", float(p[key]), level))
    run.params.update(_judge_params([config.get("judge_identity") or {"judge": config["judge"]}]))
    for key in ("pipeline", "levels", "strategy", "position", "repeats", "seed", "items",
                "samples"):
        if key in config:
            value = config[key]
            run.params[key] = value if isinstance(value, str) else json.dumps(value)
    if golden is not None:
        run.params["dataset_digest"] = file_digest(golden)
    run.tags["noisegauge.gates"] = "failed" if failed else "passed"
    run.tags["noisegauge.command"] = "stress"
    if undefined:
        run.tags["noisegauge.undefined_metrics"] = ",".join(sorted(undefined))
    run.artifacts = [p for p in sorted(out.iterdir()) if p.is_file() and not p.name.startswith(".")]
    return run


def log_stress(out_dir: str | os.PathLike[str], *, experiment: str | None = None,
               run_name: str | None = None, failed: bool = False,
               golden: str | os.PathLike[str] | None = None, client: Any = None) -> str:
    """Log a ``noisegauge stress`` output directory to MLflow (levels as steps, every file in
    it as an artifact); returns the run id."""
    return log_run(stress_run(out_dir, failed=failed, golden=golden), experiment=experiment,
                   run_name=run_name, client=client)


def compare_run(result: Any, path: str | os.PathLike[str] | None = None) -> TrackedRun:
    """The MLflow run of an A/B comparison (``noisegauge compare``): per metric the paired
    difference, its interval and p-values; per-level tests at their level as the step."""
    run = TrackedRun()
    for t in result.tests:
        step = 0 if t.level is None else int(t.level)
        suffix = "" if t.level is None else ".by_level"
        if t.diff is None:
            continue
        for key, value in (("diff", t.diff), ("mean_a", t.mean_a), ("mean_b", t.mean_b),
                           ("p_value", t.p_value), ("p_holm", t.p_adjusted),
                           ("ci_low", t.ci[0] if t.ci else None),
                           ("ci_high", t.ci[1] if t.ci else None), ("n", t.n)):
            if value is not None:
                run.metrics.append((f"{t.metric}.{key}{suffix}", float(value), step))
    run.params.update({"a": str(result.a), "b": str(result.b), "alpha": str(result.alpha)})
    run.tags["noisegauge.command"] = "compare"
    if path is not None:
        run.artifacts.append(Path(path))
    return run


def log_compare(result: Any, *, experiment: str | None = None, run_name: str | None = None,
                path: str | os.PathLike[str] | None = None, client: Any = None) -> str:
    """Log an A/B comparison to MLflow (``path``: its ``compare.json``); returns the run id."""
    return log_run(compare_run(result, path), experiment=experiment, run_name=run_name,
                   client=client)


def scorers(judge: Any = "lexical", metrics: Sequence[str] | None = None, *,
            compat: str | None = None) -> list[Any]:
    """The metrics as MLflow GenAI scorers (``mlflow.genai.evaluate(data, scorers=...)``).

    A row gives the question as ``inputs`` (a string, or a mapping with ``question`` /
    ``user_input``), the answer as ``outputs`` (a string, or a mapping with ``response`` and
    optionally ``retrieved_contexts``), and ``expectations`` with ``expected_response`` (or
    ``reference``) and, unless the outputs carry them, ``retrieved_contexts``. Each sample is
    judged once for all the scorers; an undefined value comes back as a Feedback with no value
    and the reason as its error, never as NaN.
    """
    from .mlflow_scorers import make_scorers

    _mlflow()
    return make_scorers(judge, metrics, compat=compat)
