"""``noisegauge score INPUT``: score a dataset file; summary on stdout, progress on stderr.

The run itself is ``aevaluate`` (the Python API's), with only the run's totals kept in
memory; this module turns its outcome into a summary, messages and an exit code:

- 0: every row scored (ok or undefined) and every gate passed;
- 1: a ``--fail-above``/``--fail-below`` gate failed, or error rows exceed
  ``--max-error-rate`` (0 by default once a gate is set);
- 2: bad invocation; unreadable or empty input; a judge that cannot work (probe failed,
  or ``--max-consecutive-failures`` rows in a row could not reach it); ``--strict`` stopped
  at an error. Finished rows are kept for the next run;
- 3: no gate, but some rows are errors (``--allow-errors`` accepts them);
- 4: a crash, i.e. a bug (``cli.main``: the traceback is printed);
- 130: interrupted (Ctrl-C).

CSV input: one row per sample with a header; list columns (``retrieved_contexts`` or
``contexts``) hold a JSON list, e.g. ``["chunk one", "chunk two"]``.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click
from rich.text import Text

from ..engine.metrics import COMPAT_MODES, Compat, check_compat
from ..engine.summary import methods_note
from ..errors import InvalidInput, InvalidSample, JudgeError, NoiseGaugeError, UnwritableOutput
from ..infra.outputs import check_writable
from ..infra.secrets import register_secret
from ..infra.store import JudgeCache, resolve_cache
from ..infra.tables import Col, Fitted
from ..io.readers import FORMATS, Source, open_source, without_references
from ..io.writers import OUTPUT_FORMATS
from ..judges.base import Judge, SampleJudge
from ..judges.canaries import CanaryReport, watch
from ..judges.llm.modes import MODES
from ..judges.registry import get_judge
from ..leaks.text import agreement_line
from ..report.totals import RunStats
from ..runner.evaluate import Report, aevaluate
from ..runner.journal import journal_path
from ..runner.plan import Plan, aclose_judges, resolve_metrics
from ..runner.pool import default_workers, judged_in_pool
from ..runner.progress import usage_line
from ..samples import MAX_TEXT_CHARS
from ..scoring.labels import RELEVANCE_MODES
from .ci import bars, ci_options, config_of, gates_of, write_ci_outputs
from .console import cli_logging, error, note, quiet_option, stdout
from .estimate import estimate_gates, gate_on_option, print_estimate
from .gates import Gate, check_gates, parse_gates
from .judging import check_canaries, endpoint_lines, summary_usage_line
from .paths import refuse_clobber
from .tracking import MlflowTarget, mlflow_options, track

if TYPE_CHECKING:
    from ..integrations.phoenix import PhoenixProject
    from ..people.estimate import Estimate

__all__ = ["score"]

EXIT_OK, EXIT_GATE, EXIT_USAGE, EXIT_ERRORS, EXIT_INTERRUPTED = 0, 1, 2, 3, 130


def _table(stats: RunStats) -> Fitted:
    doubt = stats.uncertain_shares()  # only judges that score their verdicts
    cols = [Col("metric", "key"), Col("mean"), Col("95% CI"), Col("n"),
            Col("undefined", short="undef."), Col("errors", short="err."),
            *([Col("uncertain", short="unc.")] if doubt else [])]
    rows = []
    summary = stats.summary()
    for name, s in summary.items():
        mean = "undefined" if s.mean is None else f"{s.mean:.3f}"
        # One value has no spread: an interval there would claim a certainty it lacks.
        ci = "-" if s.ci is None or s.n < 2 else f"[{s.ci[0]:.3f}, {s.ci[1]:.3f}]"
        extra = [f"{doubt[name]:.0%}" if name in doubt else "-"] if doubt else []
        rows.append([name, mean, ci, f"{s.n:,}", f"{s.undefined:,}", f"{s.errors:,}", *extra])
    return Fitted(cols, rows, title="noisegauge summary", caption=methods_note(summary.values()))


def _print_summary(stats: RunStats, out: Path | None, cache_path: Path | None,
                   judges: tuple[Any, ...] = (), canaries: CanaryReport | None = None) -> None:
    console = stdout()
    console.print(_table(stats))
    for hint in (stats.uncertain_hint(), stats.paraphrase_hint()):
        if hint:
            console.print(Text(hint))
    agree = agreement_line(stats.agreement())
    if agree:
        console.print(Text(agree))
    st, u = stats.status, stats.usage
    console.print(f"rows {stats.rows:,}: ok {st.get('ok', 0):,}, undefined "
                  f"{st.get('undefined', 0):,}, error {st.get('error', 0):,}")
    console.print(summary_usage_line(u))
    for line in endpoint_lines(judges):
        console.print(line)
    if canaries is not None and canaries.total:
        c = canaries.usage  # billed to the run, not to any row: said here so no call is hidden
        cost = "" if c.cost_usd is None else f", ${c.cost_usd:.4f}"
        spent = (f"; {c.calls:,} calls, {c.prompt_tokens + c.completion_tokens:,} tokens{cost}"
                 " not in the rows' totals" if c.calls else "")
        console.print(Text(canaries.line() + spent) + (
            Text("") if canaries.ok else Text("  BELOW THE BAR", style="bold red")))
        console.print(f"  ({canaries.explain()})")
    elif canaries is not None and canaries.not_run:
        console.print(f"judge canaries not run: {canaries.not_run}")
    if stats.resumed:
        console.print(f"resumed {stats.resumed:,} rows from an interrupted run; "
                      f"this run: {usage_line(stats)}")
    if out is not None:
        console.print(f"results: {out}")
    if cache_path is not None:
        console.print(f"cache: {cache_path}")


def _print_errors(stats: RunStats) -> None:
    """The error rows, loud: how many, of which kind, and the first reasons."""
    n = stats.status.get("error", 0)
    kinds = ", ".join(f"{count:,} {kind}" for kind, count in sorted(stats.error_kinds.items()))
    error(f"{n:,} of {stats.rows:,} rows could not be scored ({kinds}); the first:")
    for index, kind, reason in stats.first_errors[:5]:
        note(f"  row {index} ({kind}): {reason}")


def _saved(out: Path | None) -> str:
    """A true statement about what an interrupted or stopped run left behind."""
    if out is None:
        return "Nothing was saved (no --out); with --out, finished rows are kept for a rerun."
    partial = journal_path(out)
    if partial.exists():
        return f"Finished rows are kept in {partial}: run the same command to resume."
    return "No row had finished, so nothing was saved."


def _open_input(path: Path, fmt: str | None, references: Path | None = None) -> Source:
    """The input's rows, with an empty input refused up front."""
    source = open_source(path, fmt, references)
    rows = iter(source)
    first = next(rows, None)
    if first is None:
        raise InvalidInput(f"{path}: no rows to score (the file is empty)")
    return Source(itertools.chain([first], rows), source.total, source.name)


def is_phoenix(input_path: Path) -> bool:
    """INPUT ``phoenix:PROJECT`` (a file of that name, when there is one, is read as a file)."""
    return str(input_path).startswith("phoenix:") and not input_path.exists()


def _open_phoenix(spec: str, url: str | None, since: str | None,
                  references: Path | None) -> PhoenixProject:
    from ..integrations.phoenix import PREFIX, open_project, parse_since

    return open_project(spec[len(PREFIX):], url=url,
                        since=parse_since(since) if since else None, references=references)


def _annotate(project: PhoenixProject, report: Report) -> None:
    """--annotate: the rows back on their root spans; a failure to write is said, the
    scores stand (they are in --out and the summary)."""
    from ..integrations.phoenix import annotate

    try:
        done, skipped = annotate(project, report.rows())
    except Exception as exc:  # the server went away, refused the write: say it, keep exit code
        error(f"--annotate: writing to phoenix:{project.project} failed ({exc})")
        return
    stdout().print(f"phoenix:{project.project}: annotated the root spans of {done:,} "
                   f"trace(s)")
    for line in skipped:
        note(f"--annotate: not annotated: {line}")


def _make_judge(spec: str, settings: dict[str, Any]) -> Judge:
    given = {k: v for k, v in settings.items() if v is not None}
    register_secret(given.get("api_key"))
    try:
        return get_judge(spec, **given)
    except TypeError as exc:
        flags = ", ".join("--" + k.replace("_", "-") for k in given)
        raise click.UsageError(f"judge {spec!r} does not take {flags} ({exc})") from exc


@click.command()
@click.argument("input_path", metavar="INPUT", type=click.Path(path_type=Path))
@click.option("--judge", "judge_spec", default="lexical", show_default=True,
              help="lexical, precomputed (use claims/verdicts in the input), fake, "
                   "openai:MODEL, nli:PATH.")
@click.option("--base-url", help="Endpoint of an OpenAI-compatible judge.")
@click.option("--api-key", help="API key of the judge (default: the provider's env variable).")
@click.option("--timeout", type=click.FloatRange(min=0, min_open=True), metavar="SECONDS",
              help="Seconds one judge request may take before it is retried (remote judges).")
@click.option("--max-retries", type=click.IntRange(min=0), metavar="N",
              help="Retries of a failed judge request (remote judges).")
@click.option("--out", "out", type=click.Path(path_type=Path, dir_okay=False),
              help="Write one result per input row, in input order: .jsonl (default), "
                   ".json (RAGChecker format), .csv or .parquet. Resumes if interrupted.")
@click.option("--out-format", type=click.Choice(OUTPUT_FORMATS), help="Force the output format.")
@click.option("--report", "report_path", type=click.Path(path_type=Path, dir_okay=False),
              help="Also write a self-contained HTML report (see `noisegauge report`).")
@click.option("--format", "input_format", type=click.Choice(FORMATS),
              help="Force the input format (default: from the extension and content); "
                   "openinference: OTLP/JSON trace exports (a file or a directory), one "
                   "sample per trace.")
@click.option("--references", "references", type=click.Path(path_type=Path, dir_okay=False),
              help="With --format openinference or phoenix:PROJECT: a golden JSONL file (user_input, reference, "
                   "optional id and reference_context_ids) joined to the traces by question "
                   "or by an id in the trace's metadata. A trace without one is scored for "
                   "faithfulness; its other metrics are undefined ('no reference').")
@click.option("--phoenix-url", metavar="URL",
              help="With INPUT phoenix:PROJECT: the Phoenix server (default: Phoenix's own, "
                   "PHOENIX_COLLECTOR_ENDPOINT or http://localhost:6006).")
@click.option("--since", metavar="TIME",
              help="With phoenix:PROJECT: only traces that started at TIME or later (ISO "
                   "8601, UTC unless it says otherwise) or that long ago (90m, 24h, 7d).")
@click.option("--annotate", is_flag=True,
              help="With phoenix:PROJECT: write each trace's noise sensitivity (both modes), "
                   "hallucination and faithfulness back as annotations on its root span, "
                   "with the claims and the chunk ids they leaked from as the explanation.")
@click.option("--allow-no-reference", is_flag=True,
              help="Score rows without a reference (any input format) for faithfulness, "
                   "their other metrics undefined ('no reference'), instead of error rows.")
@click.option("--metrics", help="Comma-separated metric names (default: all RAGChecker metrics); "
                                "also context_precision_ranked, noise_sensitivity.")
@click.option("--fail-above", multiple=True, metavar="METRIC=VALUE",
              help="Exit 1 if the metric's mean exceeds VALUE (repeatable).")
@click.option("--fail-below", multiple=True, metavar="METRIC=VALUE",
              help="Exit 1 if the metric's mean is below VALUE (repeatable).")
@click.option("--max-error-rate", type=click.FloatRange(0, 1), metavar="R",
              help="Exit 1 if more than this share of rows are errors (default 0 when a gate "
                   "is set).")
@click.option("--allow-errors", is_flag=True,
              help="Error rows do not change the exit code (without gates: exit 0, not 3).")
@click.option("--max-consecutive-failures", type=click.IntRange(min=0), default=10,
              show_default=True, metavar="N",
              help="Stop (exit 2, rows kept) after N rows in a row fail to reach the judge; "
                   "0: never.")
@click.option("--max-chars", type=click.IntRange(min=1), default=MAX_TEXT_CHARS,
              show_default=True, help="Longest question, response, reference or chunk; a "
                                      "longer one makes an error row.")
@click.option("--concurrency", default=8, show_default=True, type=click.IntRange(min=1),
              help="Samples judged at once.")
@click.option("--no-canaries", is_flag=True,
              help="Skip the judge canaries (known-answer probes before and during the run).")
@click.option("--output-mode", type=click.Choice(("auto", *MODES)),
              help="How an LLM judge asks for JSON (default auto: the best the server takes).")
@click.option("--max-concurrency", type=click.IntRange(min=1),
              help="Most requests in flight per LLM endpoint (adapts below it; default 16).")
@click.option("--cache", "cache_path", type=click.Path(path_type=Path, dir_okay=False),
              help="Judge cache file (default: $NOISEGAUGE_CACHE or the user cache directory).")
@click.option("--no-cache", is_flag=True, help="Do not read or write the judge cache.")
@click.option("--restart", is_flag=True, help="Ignore results left by an interrupted run.")
@click.option("--strict", is_flag=True, help="Stop at the first error row of any kind (exit 2).")
@quiet_option
@click.option("--engine", type=click.Choice(("local", "ray")), default="local", show_default=True,
              help="ray: judge blocks of rows on a Ray cluster (pip install '.[ray]'); "
                   "same output as local.")
@click.option("--ray-address", metavar="ADDRESS",
              help="Ray cluster to join: auto (this machine's) or ray://HOST:10001 "
                   "(default: start a local Ray).")
@click.option("--workers", type=click.IntRange(min=1), metavar="N",
              help="Local: processes judging with a CPU-bound judge (lexical, nli; default: "
                   "every core; 1: one process; same output). --engine ray: blocks judged at "
                   "once (default: the cluster's CPUs).")
@click.option("--compat", type=click.Choice(COMPAT_MODES),
              help="ragchecker: RAGChecker's computation.py values (0.0) where a metric has no "
                   "denominator, instead of undefined.")
@click.option("--relevance", type=click.Choice(RELEVANCE_MODES), default="auto",
              show_default=True,
              help="Which chunks count as relevant: labels (reference_context_ids), judge "
                   "(entails a reference claim), both (labels decide; agreement kept for "
                   "`noisegauge leaks`), auto (labels when a row has them).")
@click.option("--relevant-ids", "relevant_ids", metavar="FIELD",
              help="The input field listing the relevant chunks' ids, when it is not "
                   "reference_context_ids.")
@click.option("--labels", "labels_path", type=click.Path(path_type=Path, dir_okay=False),
              help="People's labels (`noisegauge review`): print each metric corrected by "
                   "them (as `noisegauge estimate`), and a 'Checked by people' tab in --report.")
@gate_on_option("judge")
@mlflow_options
@ci_options
@click.pass_context
def score(ctx: click.Context, input_path: Path, judge_spec: str, base_url: str | None,
          api_key: str | None, timeout: float | None, max_retries: int | None, out: Path | None,
          out_format: str | None, report_path: Path | None, input_format: str | None,
          references: Path | None, phoenix_url: str | None, since: str | None,
          annotate: bool, allow_no_reference: bool, metrics: str | None,
          fail_above: tuple[str, ...], fail_below: tuple[str, ...], max_error_rate: float | None,
          allow_errors: bool, max_consecutive_failures: int, max_chars: int, concurrency: int,
          no_canaries: bool, output_mode: str | None, max_concurrency: int | None,
          cache_path: Path | None, no_cache: bool, restart: bool, strict: bool,
          quiet: bool, engine: str, ray_address: str | None, workers: int | None,
          compat: str | None, relevance: str, relevant_ids: str | None,
          labels_path: Path | None, gate_on: str,
          config_path: Path | None, junit_path: Path | None,
          markdown_path: Path | None, mlflow: MlflowTarget | None) -> None:
    """Score every row of INPUT (JSONL, JSON, RAGChecker JSON, CSV, Parquet), or every
    trace of a Phoenix project (INPUT phoenix:PROJECT).

    Fields: user_input/question/query, response/answer, reference/ground_truth/gt_answer,
    retrieved_contexts/contexts/retrieved_context. In CSV, contexts are a JSON list:
    "[""chunk one"", ""chunk two""]". A chat turn: user_input as a list of messages
    ({"role", "content"}, the user's question last), or the earlier turns in history.

    A bad row or a failed judge call becomes an error row naming its reason; the run goes
    on (--strict stops). Interrupted with --out? Run the same command again: finished rows
    are not judged again.

    Exit codes: 0 all rows scored and gates passed; 1 a gate failed or too many error rows;
    2 bad invocation or input, or the judge cannot be used; 3 error rows without a gate
    (--allow-errors: 0); 4 a crash (a bug); 130 interrupted.
    """
    gates = parse_gates(fail_above, "above") + parse_gates(fail_below, "below")
    phoenix = is_phoenix(input_path)
    if not phoenix and (phoenix_url or since or annotate):
        raise click.UsageError("--phoenix-url, --since and --annotate go with INPUT "
                               "phoenix:PROJECT")
    if phoenix and input_format is not None:
        raise click.UsageError("phoenix:PROJECT is read from the server: leave out --format")
    if no_cache and cache_path is not None:
        raise click.UsageError("--cache and --no-cache contradict each other")
    refuse_clobber({"--out": out, "--report": report_path, "--junit": junit_path,
                    "--markdown": markdown_path},
                   {"INPUT": input_path, "--labels": labels_path, "--config": config_path})
    if engine == "local" and ray_address is not None:
        raise click.UsageError("--ray-address needs --engine ray")
    if gate_on == "corrected" and labels_path is None:
        raise click.UsageError("--gate-on corrected needs --labels LABELS")
    if labels_path is not None:
        try:  # before any judge call: a bad LABELS file is refused up front
            from ..people.labels import read_labels

            read_labels(labels_path)
        except NoiseGaugeError as exc:
            raise click.BadParameter(str(exc), param_hint="--labels") from None
    try:
        cfg = config_of(config_path)
    except NoiseGaugeError as exc:
        raise click.BadParameter(str(exc), param_hint="--config") from None
    all_bars = bars(gates, cfg)  # the file's bars, with the flags' replacing theirs
    gates = gates_of(all_bars)
    metrics = metrics if metrics is not None or cfg.metrics is None else ",".join(cfg.metrics)
    if cfg.judge and ctx.get_parameter_source("judge_spec") is click.core.ParameterSource.DEFAULT:
        judge_spec = cfg.judge
    settings = {"base_url": base_url, "api_key": api_key, "timeout": timeout,
                "max_retries": max_retries, "output_mode": output_mode,
                "max_concurrency": max_concurrency}
    ci_files = junit_path is not None or markdown_path is not None
    try:  # before the probe and canaries spend judge calls
        for path in (out, report_path, junit_path, markdown_path):
            if path is not None:
                check_writable(path)
    except UnwritableOutput as exc:
        error(str(exc))
        raise SystemExit(EXIT_USAGE) from None
    started = time.monotonic()
    with cli_logging(quiet):
        try:
            project = _open_phoenix(str(input_path), phoenix_url, since, references) \
                if phoenix else None
            report, cache_file, judge, canaries = _run(
                input_path, input_format, judge_spec, settings, metrics, gates, cache_path,
                no_cache, out=out, out_format=out_format, restart=restart, strict=strict,
                quiet=quiet, concurrency=concurrency, max_chars=max_chars,
                failures=max_consecutive_failures, report_path=report_path,
                references=references, allow_no_reference=allow_no_reference,
                compat=check_compat(compat), canaries_on=not no_canaries,
                keep_rows=report_path is not None or ci_files or labels_path is not None
                or mlflow is not None or annotate,
                source=project.source if project is not None else None,
                people_labels=labels_path,
                scale={"engine": engine, "ray_address": ray_address, "workers": workers},
                relevance_opts={"relevance": relevance, "relevant_ids": relevant_ids})
        except InvalidSample as exc:
            error(f"{exc}; stopped (--strict). {_saved(out)}")
            raise SystemExit(EXIT_USAGE) from None
        except (JudgeError, UnwritableOutput) as exc:
            error(f"{exc}. {_saved(out)}")
            raise SystemExit(EXIT_USAGE) from None
        except NoiseGaugeError as exc:
            error(str(exc))
            raise SystemExit(EXIT_USAGE) from None
        except OSError as exc:  # --out in a read-only folder, a full disk, an unreadable input
            where = f": {exc.filename}" if exc.filename else ""
            error(f"{exc.strerror or exc}{where}. {_saved(out)}")
            raise SystemExit(EXIT_USAGE) from None
        except KeyboardInterrupt:
            note(f"interrupted. {_saved(out)}")
            raise SystemExit(EXIT_INTERRUPTED) from None
    if report_path is not None:
        stdout().print(f"report: {report_path}")
    if ci_files:  # written whatever the gates say: a failed run is when CI files matter most
        write_ci_outputs(report.rows(), report.metrics, all_bars, title=input_path.name,
                         junit=junit_path, markdown=markdown_path,
                         judges=_judges_with(report, canaries),
                         elapsed=time.monotonic() - started)
    if annotate and project is not None:
        _annotate(project, report)
    est = _estimate(report, labels_path) if labels_path is not None else None
    code = _finish(report.stats, gates, out, cache_file, max_error_rate, allow_errors,
                   (judge,), canaries, est, gate_on)

    def log(experiment: str | None, run_name: str | None) -> str:
        from ..integrations.mlflow import log_report

        report.judges = list(_judges_with(report, canaries))
        written = [p for p in (junit_path, markdown_path) if p is not None]
        return log_report(report, experiment=experiment, run_name=run_name,
                          failed=code == EXIT_GATE, compat=compat, artifacts=written,
                          tags={"noisegauge.command": "score", "noisegauge.input": str(input_path)})

    raise SystemExit(track(mlflow, log, code))


def _estimate(report: Report, labels: Path) -> Estimate | None:
    from ..people import estimate

    try:
        return estimate(list(report.rows()), labels)
    except NoiseGaugeError as exc:
        error(f"--labels: {exc}")
        return None


def _finish(stats: RunStats, gates: list[Gate], out: Path | None, cache_file: Path | None,
            max_error_rate: float | None, allow_errors: bool, judges: tuple[Any, ...] = (),
            canaries: CanaryReport | None = None, est: Estimate | None = None,
            gate_on: str = "judge") -> int:
    """Print the summary and what failed; return the exit code."""
    summary = stats.summary()
    if gate_on == "corrected":
        failed = (estimate_gates(gates, est, "corrected") if est is not None else
                  [f"--gate-on corrected: no estimate from --labels, so {len(gates)} gate(s) "
                   "cannot pass"] if gates else [])
    else:
        failed = check_gates(gates, lambda name: summary[name].mean)
    errors, rows = stats.status.get("error", 0), stats.rows
    rate = max_error_rate if max_error_rate is not None else (
        0.0 if gates and not allow_errors else None)
    if rate is not None and errors > rate * rows:
        failed.append(f"--max-error-rate {rate:g}: {errors:,} of {rows:,} rows are errors "
                      f"({errors / rows:.1%})")
    _print_summary(stats, out, cache_file, judges, canaries)
    if est is not None and est.metrics:
        print_estimate(est)
    elif est is not None:
        note("--labels: no sample is completely labelled yet; nothing to correct")
    if errors:
        _print_errors(stats)
    for message in failed:
        error(message, label="gate failed")
    if failed:
        error(f"{len(failed)} gate(s) failed; {errors:,} error row(s) of {rows:,}")
        return EXIT_GATE
    if errors and rate is None and not allow_errors:
        error(f"{errors:,} of {rows:,} rows are errors and no gate was set: exit "
              f"{EXIT_ERRORS}. --allow-errors accepts them; --max-error-rate R allows a share.")
        return EXIT_ERRORS
    return EXIT_OK


def _run(input_path: Path, input_format: str | None, judge_spec: str, settings: dict[str, Any],
         metrics: str | None, gates: list[Gate], cache_path: Path | None, no_cache: bool, *,
         out: Path | None, out_format: str | None, restart: bool, strict: bool, quiet: bool,
         concurrency: int, max_chars: int, failures: int,
         report_path: Path | None = None, compat: Compat | None = None,
         canaries_on: bool = True, keep_rows: bool = False,
         scale: dict[str, Any] | None = None,
         relevance_opts: dict[str, Any] | None = None,
         people_labels: Path | None = None,
         references: Path | None = None,
         allow_no_reference: bool = False,
         source: Source | None = None) -> tuple[Report, Path | None, Judge, CanaryReport]:
    source = source or _open_input(input_path, input_format, references)
    if allow_no_reference:
        source = without_references(source)
    judge = _make_judge(judge_spec, settings)
    canaries = CanaryReport()
    scale = scale or {}
    # A few probes during the run; on Ray or in worker processes the judge goes to the
    # workers as it is, so the canaries run before the rows only.
    pooled = judged_in_pool(judge, scale.get("workers") or default_workers())
    during = canaries_on and scale.get("engine", "local") == "local" and not pooled
    watched = watch(judge, canaries) if during else judge
    names = [m.name for m in resolve_metrics(metrics, judge)]
    for name, _, direction in gates:
        if name not in names:
            raise click.BadParameter(f"{name!r} is not among the scored metrics "
                                     f"({', '.join(names)})", param_hint=f"--fail-{direction}")
    store: JudgeCache | None = None if no_cache else resolve_cache(cache_path)

    async def before_rows(plan: Plan) -> None:
        for group in plan.groups if canaries_on else ():
            await check_canaries(group.judge, canaries, strict=strict)

    async def go() -> Report:
        try:
            return await aevaluate(source, metrics, judge=watched, concurrency=concurrency,
                                   cache=store if store is not None else False, out=out,
                                   out_format=out_format, resume=not restart, strict=strict,
                                   # Rows stay in memory only for the report and CI files.
                                   progress=not quiet, keep_results=keep_rows,
                                   max_chars=max_chars,
                                   max_consecutive_failures=failures or None,
                                   compat=compat, on_start=before_rows, **scale,
                                   **(relevance_opts or {}))
        finally:
            finish = getattr(watched, "finish", None)
            if callable(finish):
                await finish()  # canaries still running during the run
            await aclose_judges([judge])  # in the loop that used it

    try:
        report = asyncio.run(go())
    finally:
        if store is not None:
            store.close()
    if canaries_on and not canaries.total and not isinstance(judge, SampleJudge):
        # They wait for this process's first uncached request; in a pool the workers make them.
        canaries.not_run = (
            f"the rows were judged in worker processes (--workers "
            f"{scale.get('workers') or default_workers()}), which run no canaries; --workers 1 "
            "judges in this process and runs them" if pooled and report.stats.run_usage.calls
            else "no request reached the judge (every answer came from the cache or an earlier "
                 "run's journal), so there was nothing to vouch for")
    if report_path is not None:
        _write_report(report_path, input_path, report, canaries, people_labels)
    return report, (store.path if store is not None else None), judge, canaries


def _write_report(path: Path, input_path: Path, report: Report, canaries: CanaryReport,
                  labels: Path | None = None) -> None:
    from ..report import RunInfo, now_text, write_report

    stamp = now_text()
    rows = list(report.rows())
    est = None
    if labels is not None:
        from ..people import estimate

        with contextlib.suppress(NoiseGaugeError):  # said once, with the summary
            est = estimate(rows, labels)
    write_report(path, rows, estimate=est,
                 info=RunInfo(title=input_path.name, source=str(input_path),
                              judges=_judges_with(report, canaries), scored_at=stamp,
                              generated_at=stamp))


def _judges_with(report: Report, canaries: CanaryReport) -> tuple[dict[str, Any], ...]:
    """The run's judges, each with the canaries' score: run metadata, not a cache key."""
    return tuple({**j, "canaries": canaries.score()} if canaries.total else j
                 for j in report.judges)
