"""``noisegauge score INPUT``: score a dataset file; summary on stdout, progress on stderr.

Exit codes: 0 done; 1 a ``--fail-above``/``--fail-below`` gate failed; 2 bad invocation,
unreadable input, or a bad row under ``--strict``. Bad rows otherwise become ``error`` rows.
CSV input: one row per sample with a header; list columns (``retrieved_contexts`` or
``contexts``) hold a JSON list, e.g. ``["chunk one", "chunk two"]``.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import click
from rich import box
from rich.console import Console
from rich.logging import RichHandler
from rich.table import Table

from ..engine.metrics import COMPAT_MODES, check_compat
from ..errors import InvalidSample, NoiseGaugeError
from ..infra.store import resolve_cache
from ..io.readers import FORMATS, open_source
from ..io.writers import OUTPUT_FORMATS, output_format
from ..judges.canaries import CanaryReport, watch
from ..judges.llm.modes import MODES
from ..judges.registry import get_judge
from ..runner.journal import Journal
from ..runner.plan import aclose_judges, build_plan
from ..runner.progress import RichProgress, usage_line
from ..runner.run import arun, finalize
from ..runner.stats import RunStats
from .ci import bars, ci_options, config_of, gates_of, write_ci_outputs
from .gates import Gate, check_gates, parse_gates
from .judging import check_canaries, endpoint_lines, summary_usage_line

__all__ = ["score"]

@contextlib.contextmanager
def _logging(quiet: bool) -> Iterator[None]:
    """noisegauge's warnings on stderr for the length of the command."""
    logger = logging.getLogger("noisegauge")
    handler = RichHandler(console=Console(stderr=True), show_time=False, show_path=False)
    handler.setLevel(logging.ERROR if quiet else logging.INFO)
    logger.addHandler(handler)
    old, logger.propagate = logger.propagate, False
    try:
        yield
    finally:
        logger.removeHandler(handler)
        logger.propagate = old


def _table(stats: RunStats) -> Table:
    table = Table(title="noisegauge summary", title_justify="left", box=box.SIMPLE_HEAD)
    table.add_column("metric", no_wrap=True)
    doubt = stats.uncertain_shares()  # only judges that score their verdicts
    for col in ("mean", "95% CI", "n", "undefined", "errors", *(["uncertain"] if doubt else [])):
        table.add_column(col, justify="right", no_wrap=True)
    for name, s in stats.summary().items():
        mean = "undefined" if s.mean is None else f"{s.mean:.3f}"
        ci = "-" if s.ci is None else f"[{s.ci[0]:.3f}, {s.ci[1]:.3f}]"
        extra = [f"{doubt[name]:.0%}" if name in doubt else "-"] if doubt else []
        table.add_row(name, mean, ci, str(s.n), str(s.undefined), str(s.errors), *extra)
    return table


def _print_summary(stats: RunStats, out: Path | None, cache_path: Path | None,
                   judges: tuple[Any, ...] = (), canaries: CanaryReport | None = None) -> None:
    # Piped into a file or CI log, rich would assume 80 columns and truncate names.
    console = Console(highlight=False, width=None if sys.stdout.isatty() else 100)
    console.print(_table(stats))
    hint = stats.uncertain_hint()
    if hint:
        console.print(hint)
    st, u = stats.status, stats.usage
    console.print(f"rows {stats.rows:,}: ok {st.get('ok', 0):,}, undefined "
                  f"{st.get('undefined', 0):,}, error {st.get('error', 0):,}")
    console.print(summary_usage_line(u))
    for line in endpoint_lines(judges):
        console.print(line, soft_wrap=True)
    if canaries is not None and canaries.total:
        console.print(canaries.line() + ("" if canaries.ok else "  [bold red]BELOW THE BAR[/]"))
    if stats.resumed:
        console.print(f"resumed {stats.resumed:,} rows from an interrupted run; "
                      f"this run: {usage_line(stats)}")
    if out is not None:
        console.print(f"results: {out}")
    if cache_path is not None:
        console.print(f"cache: {cache_path}")


@click.command()
@click.argument("input_path", metavar="INPUT", type=click.Path(path_type=Path))
@click.option("--judge", "judge_spec", default="lexical", show_default=True,
              help="lexical, precomputed (use claims/verdicts in the input), fake, "
                   "openai:MODEL, nli:PATH.")
@click.option("--base-url", help="Endpoint of an OpenAI-compatible judge.")
@click.option("--api-key", help="API key of the judge (default: the provider's env variable).")
@click.option("--out", "out", type=click.Path(path_type=Path, dir_okay=False),
              help="Write one result per input row, in input order: .jsonl (default), "
                   ".json (RAGChecker format), .csv or .parquet. Resumes if interrupted.")
@click.option("--out-format", type=click.Choice(OUTPUT_FORMATS), help="Force the output format.")
@click.option("--report", "report_path", type=click.Path(path_type=Path, dir_okay=False),
              help="Also write a self-contained HTML report (see `noisegauge report`).")
@click.option("--format", "input_format", type=click.Choice(FORMATS),
              help="Force the input format (default: from the extension and content).")
@click.option("--metrics", help="Comma-separated metric names (default: all RAGChecker metrics); "
                                "also context_precision_ranked, noise_sensitivity.")
@click.option("--fail-above", multiple=True, metavar="METRIC=VALUE",
              help="Exit 1 if the metric's mean exceeds VALUE (repeatable).")
@click.option("--fail-below", multiple=True, metavar="METRIC=VALUE",
              help="Exit 1 if the metric's mean is below VALUE (repeatable).")
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
@click.option("--strict", is_flag=True, help="Stop at the first bad row (exit 2).")
@click.option("--quiet", "-q", is_flag=True, help="No progress bar or notes on stderr.")
@click.option("--compat", type=click.Choice(COMPAT_MODES),
              help="ragchecker: RAGChecker's computation.py values (0.0) where a metric has no "
                   "denominator, instead of undefined.")
@ci_options
@click.pass_context
def score(ctx: click.Context, input_path: Path, judge_spec: str, base_url: str | None,
          api_key: str | None, out: Path | None, out_format: str | None,
          report_path: Path | None, input_format: str | None, metrics: str | None,
          fail_above: tuple[str, ...], fail_below: tuple[str, ...], concurrency: int,
          no_canaries: bool, output_mode: str | None, max_concurrency: int | None,
          cache_path: Path | None, no_cache: bool, restart: bool, strict: bool,
          quiet: bool, compat: str | None, config_path: Path | None, junit_path: Path | None,
          markdown_path: Path | None) -> None:
    """Score every row of INPUT (JSONL, JSON, RAGChecker JSON, CSV, Parquet).

    Fields: user_input/question/query, response/answer, reference/ground_truth/gt_answer,
    retrieved_contexts/contexts/retrieved_context. In CSV, contexts are a JSON list:
    "[""chunk one"", ""chunk two""]".

    A bad row becomes an error row naming its row and field; the run goes on (--strict stops).
    Interrupted with --out? Run the same command again: finished rows are not judged again.

    Exit codes: 0 done, 1 a --fail-above/--fail-below gate failed, 2 bad invocation or input.
    """
    gates = parse_gates(fail_above, "above") + parse_gates(fail_below, "below")
    err = Console(stderr=True, highlight=False)
    try:
        cfg = config_of(config_path)
    except NoiseGaugeError as exc:
        err.print(f"[red]error:[/red] {exc}")
        sys.exit(2)
    all_bars = bars(gates, cfg)  # the file's bars, with the flags' replacing theirs
    gates = gates_of(all_bars)
    metrics = metrics if metrics is not None or cfg.metrics is None else ",".join(cfg.metrics)
    if cfg.judge and ctx.get_parameter_source("judge_spec") is click.core.ParameterSource.DEFAULT:
        judge_spec = cfg.judge
    ci: dict[str, Any] = {"junit": junit_path, "markdown": markdown_path}
    with _logging(quiet):
        try:
            settings = {k: v for k, v in (("output_mode", output_mode),
                                          ("max_concurrency", max_concurrency)) if v is not None}
            stats, cache_file, judge, canaries = _run(
                input_path, judge_spec, base_url, api_key, out, out_format, input_format,
                metrics, gates, concurrency, cache_path, no_cache, restart, strict, quiet,
                settings, report_path, compat, canaries_on=not no_canaries, ci=ci)
        except InvalidSample as exc:
            err.print(f"[red]error:[/red] {exc}; stopping (--strict). Finished rows are kept "
                      "for the next run.")
            sys.exit(2)
        except NoiseGaugeError as exc:
            err.print(f"[red]error:[/red] {exc}")
            sys.exit(2)
        except KeyboardInterrupt:
            err.print("interrupted; finished rows are saved. Run the same command to resume.")
            sys.exit(130)
    if stats.first_errors and not quiet:
        err.print(f"{stats.status['error']:,} row(s) could not be scored (status error); first:")
        for _, reason in stats.first_errors[:5]:
            err.print(f"  {reason}", soft_wrap=True)
    _print_summary(stats, out, cache_file, (judge,), canaries)
    if report_path is not None:
        Console(highlight=False).print(f"report: {report_path}")
    if junit_path is not None or markdown_path is not None:
        write_ci_outputs(ci["rows"], ci["names"], all_bars, title=input_path.name,
                         junit=junit_path, markdown=markdown_path, judges=ci["judges"])
    summary = stats.summary()
    failed = check_gates(gates, lambda name: summary[name].mean)
    for message in failed:
        err.print(f"[red]gate failed:[/red] {message}")
    if failed:
        sys.exit(1)


def _run(input_path: Path, judge_spec: str, base_url: str | None, api_key: str | None,
         out: Path | None, out_format: str | None, input_format: str | None,
         metrics: str | None, gates: list[Gate], concurrency: int, cache_path: Path | None,
         no_cache: bool, restart: bool, strict: bool, quiet: bool, settings: dict[str, Any],
         report_path: Path | None = None, compat: str | None = None, *,
         canaries_on: bool = True,
         ci: dict[str, Any] | None = None) -> tuple[RunStats, Path | None, Any, CanaryReport]:
    if no_cache and cache_path is not None:
        raise click.UsageError("--cache and --no-cache contradict each other")
    if out is not None and input_path.exists() and out.exists() and out.samefile(input_path):
        raise click.UsageError("--out would overwrite INPUT; choose another file")
    source = open_source(input_path, input_format)
    kwargs: dict[str, Any] = {k: v for k, v in (("base_url", base_url), ("api_key", api_key))
                              if v is not None}
    try:
        judge = get_judge(judge_spec, **kwargs, **settings)
    except TypeError as exc:
        raise click.UsageError(
            f"judge {judge_spec!r} does not take --base-url/--api-key/--output-mode/"
            f"--max-concurrency ({exc})") from exc
    store = None if no_cache else resolve_cache(cache_path)
    canaries = CanaryReport()
    try:
        watched = watch(judge, canaries) if canaries_on else judge
        plan = build_plan(metrics, watched, store, check_compat(compat))
        for name, _, direction in gates:
            if name not in plan.names:
                raise click.BadParameter(f"{name!r} is not among the scored metrics "
                                         f"({', '.join(plan.names)})", param_hint=f"--fail-{direction}")
        journal = fmt = None
        if out is not None:
            fmt = output_format(out, out_format)
            journal = Journal(out, {**plan.config(), "format": fmt}, resume=not restart)
            done = journal.open()
            if done and not quiet:
                logging.getLogger("noisegauge").info(
                    "resuming: %d finished rows found in %s", done, journal.path)
        progress = None if quiet else RichProgress(source.total, console=Console(stderr=True))
        kept: dict[int, dict[str, Any]] = {}  # rows for --report/--junit/--markdown (only then)
        keep_rows = report_path is not None or bool(ci and (ci["junit"] or ci["markdown"]))

        def keep(index: int, row: dict[str, Any], *_: Any) -> None:
            kept[index] = row

        try:
            async def go() -> RunStats:
                try:
                    for group in plan.groups if canaries_on else ():
                        await check_canaries(group.judge, canaries, strict=strict)
                    return await arun(source, plan, concurrency=concurrency, strict=strict,
                                      journal=journal, keep_samples=fmt == "ragchecker",
                                      on_result=keep if keep_rows else None,
                                      progress=progress)
                finally:
                    finish = getattr(watched, "finish", None)
                    if callable(finish):
                        await finish()  # canaries still running during the run
                    await aclose_judges([judge])  # in the loop that used it

            with progress if progress is not None else contextlib.nullcontext():
                stats = asyncio.run(go())
            if journal is not None and out is not None and fmt is not None:
                finalize(journal, stats.rows, out, fmt, plan.names)
            if report_path is not None:
                _write_report(report_path, input_path, [kept[i] for i in sorted(kept)],
                              [{**g.identity, "canaries": canaries.score()}
                               if canaries.total else g.identity for g in plan.groups])
            if ci is not None:
                ci.update(rows=[kept[i] for i in sorted(kept)], names=plan.names,
                          judges=[g.identity for g in plan.groups])
        except BaseException:
            if journal is not None:
                journal.close(remove=False)
            raise
    finally:
        if store is not None:
            store.close()
    return stats, (store.path if store is not None else None), judge, canaries


def _write_report(path: Path, input_path: Path, rows: list[dict[str, Any]],
                  judges: list[dict[str, Any]]) -> None:
    from ..report import RunInfo, now_text, write_report

    stamp = now_text()
    write_report(path, rows, info=RunInfo(title=input_path.name, source=str(input_path),
                                          judges=tuple(judges), scored_at=stamp,
                                          generated_at=stamp))
