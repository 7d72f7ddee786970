"""``noisegauge stress`` and ``noisegauge compare``: thin adapters over ``noisegauge.stress``.

Exit codes: 0 done; 1 a gate failed; 2 bad invocation or input, or an output directory
that cannot be written; 130 interrupted (generations already made stay in the cache).
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any, NoReturn, TypeVar

import click
from rich.console import Console
from rich.table import Table

from ..engine import catalogue
from ..errors import MissingDependency, NoiseGaugeError
from ..infra.secrets import register_secret, register_secret_header
from ..runner.progress import RichProgress
from .console import cli_logging, error, note, quiet_option, stderr, stdout
from .gates import check_gates, parse_gates
from .tracking import MlflowTarget, mlflow_options, track

__all__ = ["stress", "compare"]

F = TypeVar("F", bound=Callable[..., Any])


#: Judges that call an endpoint, and so take --timeout and --max-retries.
_REMOTE_JUDGES = ("openai",)


def _fail(message: str, code: int = 2) -> NoReturn:
    error(message)
    sys.exit(code)


def _writable(out: Path) -> None:
    """Refuse an output directory that cannot be written now, not after an hour of work."""
    try:
        out.mkdir(parents=True, exist_ok=True)
        probe = out / ".noisegauge-write-test"
        probe.write_bytes(b"")
        probe.unlink()
    except OSError as exc:
        _fail(f"cannot write to --out {out}: {exc.strerror or exc}")


def _levels(_ctx: click.Context, _param: click.Parameter, value: str) -> list[int]:
    try:
        levels = [int(x) for x in value.split(",") if x.strip()]
    except ValueError:
        raise click.BadParameter("expected comma-separated integers, e.g. 0,1,2,4") from None
    if not levels or min(levels) < 0:
        raise click.BadParameter("expected non-negative integers, e.g. 0,1,2,4")
    return levels


def _sweep_options(f: F) -> F:
    """Options shared by ``stress`` and ``compare`` (noise, pipeline, judge, running)."""
    options = [
        click.option("--levels", default="0,1,2,4", show_default=True, callback=_levels,
                     help="Distractor chunks injected per question, comma-separated."),
        click.option("--strategy", default="others", show_default=True,
                     help="pool, others, hard, counterfactual, siblings (each golden row's "
                          "own distractors); comma-separated to mix."),
        click.option("--position", type=click.Choice(["first", "last", "random", "interleaved"]),
                     default="random", show_default=True, help="Where distractors go."),
        click.option("--repeats", type=click.IntRange(min=1), default=1, show_default=True,
                     help="Independent draws per question and noisy level."),
        click.option("--seed", type=int, default=0, show_default=True),
        click.option("--pool", type=click.Path(exists=True, dir_okay=False),
                     help="Distractor pool (JSONL/JSON/CSV rows with text, or .txt lines)."),
        click.option("--judge", default="lexical", show_default=True,
                     help="Judge spec: lexical, fake, openai:MODEL, nli:PATH."),
        click.option("--judge-base-url", help="Base URL of an OpenAI-compatible judge."),
        click.option("--judge-api-key", help="API key of the judge (else OPENAI_API_KEY)."),
        click.option("--base-url", help="openai: pipeline base URL (else OPENAI_BASE_URL)."),
        click.option("--api-key", help="openai: pipeline API key (else OPENAI_API_KEY)."),
        click.option("--prompt", help="openai: pipeline prompt: 'default', 'strict', a file, "
                                      "or a template with {question} and {contexts}."),
        click.option("--temperature", type=float, help="openai: pipeline temperature (0)."),
        click.option("--request-template", help="HTTP pipeline: JSON body with \"{question}\" "
                                                "and \"{contexts}\" placeholders."),
        click.option("--answer-path", help="HTTP pipeline: dotted JSON path of the answer "
                                           "(default 'answer')."),
        click.option("--header", "headers", multiple=True, help="HTTP pipeline: 'Name: value'."),
        click.option("--timeout", type=click.FloatRange(min=0, min_open=True),
                     metavar="SECONDS",
                     help="Seconds per pipeline call, any kind: a late call is retried, then "
                          "is that sample's error (default 300; openai/http clients 60); and "
                          "per judge request for an openai: judge."),
        click.option("--concurrency", type=click.IntRange(min=1), default=8, show_default=True,
                     help="Pipeline calls in flight."),
        click.option("--judge-concurrency", type=click.IntRange(min=1), default=8,
                     show_default=True, help="Samples being judged at once."),
        click.option("--engine", type=click.Choice(("local", "ray")), default="local",
                     show_default=True, help="ray: judge the answers on a Ray cluster "
                                             "(pip install '.[ray]'); same results."),
        click.option("--ray-address", metavar="ADDRESS",
                     help="Ray cluster to join: auto or ray://HOST:10001 (default: a local Ray)."),
        click.option("--workers", type=click.IntRange(min=1), metavar="N",
                     help="Local: processes judging with a CPU-bound judge (default: every "
                          "core). --engine ray: blocks judged at once (default: its CPUs)."),
        click.option("--max-retries", "--retries", "retries", type=click.IntRange(min=0),
                     metavar="N", help="Retries of transient pipeline failures (2), and of "
                                       "judge requests for an openai: judge."),
        click.option("--cache", "cache_path", type=click.Path(dir_okay=False),
                     help="Generation cache (SQLite). Default: OUT/generations.sqlite."),
        click.option("--no-cache", is_flag=True, help="Do not cache generations."),
    ]
    for option in reversed(options):
        f = option(f)
    return quiet_option(f)


def _run_kwargs(opts: dict[str, Any], out: Path) -> dict[str, Any]:
    headers = {}
    for h in opts["headers"]:
        name, sep, value = h.partition(":")
        if not sep:
            _fail(f"--header {h!r}: expected 'Name: value'")
        headers[name.strip()] = value.strip()
    pipeline_options = {"base_url": opts["base_url"], "api_key": opts["api_key"],
                        "prompt": opts["prompt"], "temperature": opts["temperature"],
                        "request_template": opts["request_template"],
                        "answer_path": opts["answer_path"], "headers": headers or None,
                        "timeout": opts["timeout"]}
    judge_options = {k: v for k, v in (("base_url", opts["judge_base_url"]),
                                       ("api_key", opts["judge_api_key"])) if v}
    if str(opts["judge"]).partition(":")[0].strip().lower() in _REMOTE_JUDGES:
        judge_options.update({k: v for k, v in (("timeout", opts["timeout"]),
                                                ("max_retries", opts["retries"]))
                              if v is not None})
    for secret in (opts["api_key"], opts["judge_api_key"]):
        register_secret(secret)
    for name, value in headers.items():
        register_secret_header(name, value)
    scale = {"engine": opts.get("engine", "local"), "ray_address": opts.get("ray_address"),
             "workers": opts.get("workers")}
    if scale["engine"] == "local" and scale["ray_address"] is not None:
        _fail("--ray-address needs --engine ray")
    cache = None if opts["no_cache"] else Path(opts["cache_path"] or out / "generations.sqlite")
    return {"levels": opts["levels"], "judge": opts["judge"], "strategy": opts["strategy"],
            "position": opts["position"], "repeats": opts["repeats"], "seed": opts["seed"],
            "pool": opts["pool"], "concurrency": opts["concurrency"],
            "judge_concurrency": opts["judge_concurrency"],
            "retries": 2 if opts["retries"] is None else opts["retries"],
            "cache": cache, "pipeline_options": pipeline_options, "judge_options": judge_options,
            **scale}


def _guarded(call: Callable[[], Any], cache: Path | None = None) -> Any:
    """Turn the errors a user can fix into exit code 2 with one clear line, and Ctrl-C
    into exit 130 with a true word about what was kept."""
    try:
        return call()
    except (NoiseGaugeError, MissingDependency) as exc:
        _fail(str(exc))
    except ImportError as exc:  # e.g. a judge module not present in this install
        _fail(f"a required module is not available: {exc}")
    except OSError as exc:
        where = f": {exc.filename}" if exc.filename else ""
        _fail(f"{exc.strerror or exc}{where}")
    except KeyboardInterrupt:
        if cache is None:
            kept = "nothing was kept (--no-cache)"
        elif cache.exists():
            kept = f"answers generated so far are kept in {cache}, so the same command reuses them"
        else:
            kept = "no answer was cached, so nothing was kept"
        note(f"interrupted; {kept}.")
        sys.exit(130)


def _with_progress(call: Callable[[Callable[[str, int, int], None]], Any],
                   cache: Path | None, quiet: bool = False) -> Any:
    """Run ``call(progress_callback)`` under the progress display on stderr (none if quiet)."""
    with cli_logging(quiet):
        if quiet:
            return _guarded(lambda: call(lambda phase, done, total: None), cache)
        with RichProgress(console=stderr(), transient=True, description="") as bar:
            return _guarded(lambda: call(bar.phase), cache)


def _ids(ids: list[str], shown: int = 5) -> str:
    more = f" and {len(ids) - shown} more" if len(ids) > shown else ""
    return ", ".join(ids[:shown]) + more


def _fmt(point: dict[str, Any]) -> str:
    if point["mean"] is None:
        return "undefined"
    if point["ci"] is None:  # one question: no interval
        return f"{point['mean']:.3f} (n=1)"
    lo, hi = point["ci"]
    return f"{point['mean']:.3f} [{lo:.2f}-{hi:.2f}]"


def _print_curve(console: Console, curve: dict[str, Any], title: str) -> None:
    """Metrics as rows, noise levels as columns: mean and 95% interval per cell."""
    table = Table(title=title, title_justify="left")
    table.add_column("distractors →")
    for level in curve["levels"]:
        table.add_column(str(level), justify="right")
    for s in catalogue.all_specs():  # the key metrics the curve has
        if s.key and s.name in curve["metrics"]:
            table.add_row(s.short, *(_fmt(p) for p in curve["metrics"][s.name]))
    counts = curve["metrics"]["noise_sensitivity_relevant"]
    table.add_row("n (undef/err)", *(f"{p['n']} ({p['undefined']}/{p['errors']})" for p in counts),
                  style="dim")
    console.print(table)


@click.command()
@click.argument("golden", type=click.Path(exists=True, dir_okay=False))
@click.option("--pipeline", required=True,
              help="extractive | extractive:strict | openai:MODEL | http(s)://URL | module:function")
@_sweep_options
@click.option("--out", "out_dir", required=True, type=click.Path(file_okay=False),
              help="Directory for samples, results, curve.json/png and flips.")
@click.option("--fail-above", multiple=True, metavar="METRIC=VALUE",
              help="Exit 1 if the metric's mean at --gate-level exceeds VALUE (repeatable).")
@click.option("--fail-below", multiple=True, metavar="METRIC=VALUE",
              help="Exit 1 if the metric's mean at --gate-level is below VALUE (repeatable).")
@click.option("--gate-level", type=int, default=None,
              help="Noise level the gates read (default: the highest of --levels).")
@mlflow_options
def stress(golden: str, pipeline: str, out_dir: str, fail_above: tuple[str, ...],
           fail_below: tuple[str, ...], gate_level: int | None, mlflow: MlflowTarget | None,
           **opts: Any) -> None:
    """Inject distractors into GOLDEN's contexts, run PIPELINE, and chart the damage.

    GOLDEN rows carry user_input, reference and the relevant chunks as retrieved_contexts.
    Exit codes: 0 done, 1 a --fail-above/--fail-below gate failed, 2 bad invocation or input.
    """
    from ..stress import stress as run_stress

    gates = parse_gates(fail_above, "above") + parse_gates(fail_below, "below")
    for name, _, direction in gates:
        if name not in catalogue.family():
            raise click.BadParameter(f"{name!r} is not a metric ({', '.join(catalogue.family())})",
                                     param_hint=f"--fail-{direction}")
    level = max(opts["levels"]) if gate_level is None else gate_level
    if level not in opts["levels"]:
        raise click.BadParameter(f"{level} is not one of --levels", param_hint="--gate-level")
    out = Path(out_dir)
    _writable(out)
    console = stdout()
    kwargs = _run_kwargs(opts, out)
    report = _with_progress(lambda cb: run_stress(golden, pipeline=pipeline, progress=cb, **kwargs),
                            kwargs["cache"], opts["quiet"])
    written = _guarded(lambda: report.write(out))
    _print_curve(console, report.curve(), f"{pipeline} vs injected noise (judge {opts['judge']}, "
                                          f"strategy {opts['strategy']}, position {opts['position']})")
    cfg = report.config
    console.print(f"{cfg['samples']} answers ({cfg['cached_generations']} from cache, "
                  f"{cfg['generation_errors']} failed); {len(report.flips())} question(s) flipped "
                  "from correct to wrong under noise (flips.jsonl).")
    if 0 not in report.levels:
        console.print("note: no level 0 in --levels, so no clean baseline: flips.jsonl "
                      "is empty.")
    if cfg["shortfalls"]:
        console.print(f"note: {len(cfg['shortfalls'])} sample(s) got fewer distractors "
                      "than their level asked for (source ran out); see run.json.")
    if cfg.get("no_answer"):
        console.print(f"warning: {len(cfg['no_answer'])} golden row(s) have no answer yet "
                      f"(status no_answer: {_ids(cfg['no_answer'])}): left out; write their "
                      "references in `noisegauge review GOLDEN` or drop them.")
    if cfg.get("no_distractors"):
        missing = cfg["no_distractors"]
        console.print(f"warning: {len(missing)} golden row(s) have no distractors of their own "
                      f"({_ids(missing)}): their noisy levels are undefined, not scored; "
                      "see results.jsonl.")
    for name, where in written.items():
        console.print(f"  {name}: {where}")
    points = {name: {p["level"]: p["mean"] for p in pts}
              for name, pts in report.curve()["metrics"].items()}
    failed = check_gates(gates, lambda name: points.get(name, {}).get(level),
                         where=f" at {level} distractors")
    for message in failed:
        error(message, label="gate failed")

    def log(experiment: str | None, run_name: str | None) -> str:
        from ..integrations.mlflow import log_stress

        return log_stress(out, experiment=experiment, run_name=run_name, failed=bool(failed),
                          golden=golden)

    code = track(mlflow, log, 1 if failed else 0)
    if code:
        sys.exit(code)


@click.command()
@click.argument("inputs", nargs=-1, required=True, type=click.Path(exists=True))
@click.option("--pipeline", "pipelines", multiple=True,
              help="Give twice (A then B) when INPUTS is a golden file.")
@_sweep_options
@click.option("--alpha", type=float, default=0.05, show_default=True)
@click.option("--out", "out_dir", type=click.Path(file_okay=False),
              help="Directory for compare.json (and both stress runs).")
@mlflow_options
def compare(inputs: tuple[str, ...], pipelines: tuple[str, ...], alpha: float,
            out_dir: str | None, mlflow: MlflowTarget | None, **opts: Any) -> None:
    """Paired A/B test of two pipelines on the same noisy contexts.

    Either GOLDEN --pipeline A --pipeline B, or two `noisegauge stress` output directories.
    """
    from ..stress import compare as run_compare
    from ..stress import compare_dirs

    console = stdout()
    if len(inputs) == 2 and all(Path(p).is_dir() for p in inputs):
        result = _guarded(lambda: compare_dirs(inputs[0], inputs[1], alpha=alpha))
    elif len(inputs) == 1 and Path(inputs[0]).is_file():
        if len(pipelines) != 2:
            _fail("give --pipeline twice (A, then B) to compare on a golden set")
        if out_dir is None:
            _fail("--out is required when running the two pipelines")
        _writable(Path(out_dir))
        kwargs = _run_kwargs(opts, Path(out_dir))
        result = _with_progress(lambda cb: run_compare(
            inputs[0], pipelines=list(pipelines), alpha=alpha, progress=cb, **kwargs),
            kwargs["cache"], opts["quiet"])
    else:
        _fail("INPUTS must be one golden file, or two stress output directories")
    table = Table(title=f"B = {result.b}  minus  A = {result.a}  (all noisy levels pooled, "
                        "paired by question)", title_justify="left")
    for col in ("metric", "n", "mean A", "mean B", "B - A", "95% CI", "p", "p Holm", "verdict"):
        table.add_column(col, justify="left" if col in ("metric", "verdict") else "right",
                         no_wrap=col in ("metric", "95% CI", "verdict"))
    for t in result.tests:
        if t.level is not None:
            continue
        if t.diff is None:
            table.add_row(t.metric, "0", "-", "-", "-", "-", "-", "-", "undefined")
            continue
        assert t.ci is not None and t.mean_a is not None and t.mean_b is not None
        verdict = (f"{'B' if t.better == 'b' else 'A'} better" if t.better else
                   ("real difference" if t.significant else "no difference"))
        table.add_row(t.metric, str(t.n), f"{t.mean_a:.3f}", f"{t.mean_b:.3f}", f"{t.diff:+.3f}",
                      f"[{t.ci[0]:+.3f}, {t.ci[1]:+.3f}]", f"{t.p_value:.4f}",
                      f"{t.p_adjusted:.4f}", verdict)
    console.print(table)
    path = None
    if out_dir is not None:
        path = _guarded(lambda: result.write(out_dir))
        console.print(f"  compare.json: {path}")

    def log(experiment: str | None, run_name: str | None) -> str:
        from ..integrations.mlflow import log_compare

        return log_compare(result, experiment=experiment, run_name=run_name, path=path)

    code = track(mlflow, log, 0)
    if code:
        sys.exit(code)
