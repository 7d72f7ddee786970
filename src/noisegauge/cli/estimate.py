"""``noisegauge estimate RESULTS --labels LABELS``: every metric corrected by people's labels.

Exit codes: 0 done; 1 a gate failed; 2 bad invocation, unreadable input or no labelled sample.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

import click

from ..errors import NoiseGaugeError
from ..infra.outputs import write_text
from ..infra.tables import Col, Fitted
from .console import error, note, stdout
from .gates import Gate, check_gates, parse_gates
from .paths import refuse_clobber

if TYPE_CHECKING:
    from ..people.estimate import Estimate

__all__ = ["estimate", "estimate_table", "gate_on_option", "print_estimate", "estimate_gates"]

GATE_ON = ("judge", "corrected")
F = TypeVar("F", bound=Callable[..., Any])


def gate_on_option(default: str) -> Callable[[F], F]:
    return click.option(
        "--gate-on", type=click.Choice(GATE_ON), default=default, show_default=True,
        help="What --fail-above/--fail-below test: the judge's mean, or the corrected "
             "interval (the whole interval must meet the bar; needs --labels).")


def _span(low: float | None, high: float | None) -> str:
    return "-" if low is None or high is None else f"[{low:.3f}, {high:.3f}]"


def _num(x: float | None) -> str:
    return "undefined" if x is None else f"{x:.3f}"


def estimate_table(est: Estimate) -> Fitted:
    pct = f"{est.confidence:.0%}"
    cols = [Col("metric", "key"), Col("judge"), Col("people"), Col(f"{pct} CI"), Col("n"),
            Col("corrected", short="corr."), Col(f"{pct} CI"), Col("n/N")]
    rows = [[name, _num(m.judge), _num(m.human.estimate), _span(m.human.low, m.human.high),
             str(m.human.n), _num(m.corrected.estimate),
             _span(m.corrected.low, m.corrected.high), f"{m.corrected.n}/{m.corrected.N}"]
            for name, m in est.metrics.items()]
    return Fitted(cols, rows, title=f"checked by people ({len(est.labelled) + len(est.from_values)}"
                                    f" labelled of {est.samples} samples, {est.design} design; "
                                    f"{pct} intervals for the {est.target} target)")


def print_estimate(est: Estimate) -> None:
    console = stdout()
    console.print(estimate_table(est))
    a = est.agreement
    if a.claims:
        kappa = "undefined" if a.kappa is None else f"{a.kappa:.2f}"
        chunks = "" if a.chunk_accuracy is None else \
            f"; chunk relevance {a.chunk_accuracy:.0%} of {a.chunks}"
        console.print(f"judge vs people on {a.claims} claims: {a.accuracy:.0%} agree on "
                      f"correct/wrong (Cohen's kappa {kappa}){chunks}")
        misses = sorted(((n, j, p) for j, row in a.confusion.items() for p, n in row.items()
                         if j != p and n), reverse=True)[:3]
        if misses:
            console.print("most common disagreements (judge -> people): " + ", ".join(
                f"{j} -> {p} ({n})" for n, j, p in misses))
    # judge_undefined counts samples the judge left undefined (people defined them): name the
    # side that is undefined, not the one that is defined.
    undefined = [f"{n}: undefined by the judge {m.judge_undefined}, "
                 f"by people {m.human_undefined}"
                 for n, m in est.metrics.items() if m.judge_undefined or m.human_undefined]
    if undefined:
        console.print("undefined on one side only (left out of corrected): "
                      + "; ".join(undefined))
    halves = [f"{n} {m.halve_at}" for n, m in est.metrics.items() if m.halve_at is not None]
    if halves:
        console.print("labels for half the corrected interval: " + ", ".join(halves[:4])
                      + (" ..." if len(halves) > 4 else ""))
    saved = [(n, m.uniform_equivalent - m.corrected.n) for n, m in est.metrics.items()
             if m.uniform_equivalent is not None and est.design != "uniform"]
    if saved:
        console.print(f"labels saved by the {est.design} design against uniform (estimated): "
                      + ", ".join(f"{n} {s:+.0f}" for n, s in saved[:4]))
    for line in est.notes():
        note(f"note: {line}")


def estimate_gates(gates: list[Gate], est: Estimate, on: str) -> list[str]:
    """Failed gates; ``corrected``: the whole interval must meet the bar."""
    if on == "judge":
        return check_gates(gates, lambda n: est.metrics[n].judge if n in est.metrics else None)
    failed = []
    for name, value, direction in gates:
        m = est.metrics.get(name)
        c = m.corrected if m else None
        end = None if c is None else (c.high if direction == "above" else c.low)
        if end is None:
            failed.append(f"--fail-{direction} {name}={value:g}: no corrected interval for "
                          f"{name} (label more samples), so the gate cannot pass")
        elif (end > value) if direction == "above" else (end < value):
            assert c is not None
            failed.append(f"--fail-{direction} {name}={value:g}: corrected "
                          f"{_num(c.estimate)} {_span(c.low, c.high)} is not all "
                          f"{'<=' if direction == 'above' else '>='} {value:g}")
    return failed


@click.command()
@click.argument("results", type=click.Path(path_type=Path, dir_okay=False, exists=True))
@click.option("--labels", "labels_path", required=True,
              type=click.Path(path_type=Path, dir_okay=False),
              help="LABELS.jsonl from `noisegauge review` (or rows of per-sample values).")
@click.option("--confidence", type=click.FloatRange(0, 1, min_open=True, max_open=True),
              default=0.9, show_default=True, help="Confidence of the intervals.")
@click.option("--plan", "plan_path", type=click.Path(path_type=Path, dir_okay=False, exists=True),
              help="PLAN.jsonl from `noisegauge sample`: the estimate weights each label by "
                   "1/p (labels outside the plan are left out, and said so).")
@click.option("--target", type=click.Choice(["finite", "superpopulation"]), default="finite",
              show_default=True,
              help="finite: the mean over the N scored samples (the interval shrinks as n "
                   "nears N); superpopulation: the mean of the process that made them.")
@click.option("--json", "json_path", type=click.Path(path_type=Path, dir_okay=False),
              help="Write the estimates as JSON.")
@click.option("--fail-above", multiple=True, metavar="METRIC=VALUE",
              help="Exit 1 unless the corrected interval is all <= VALUE (repeatable).")
@click.option("--fail-below", multiple=True, metavar="METRIC=VALUE",
              help="Exit 1 unless the corrected interval is all >= VALUE (repeatable).")
@gate_on_option("corrected")
def estimate(results: Path, labels_path: Path, confidence: float, plan_path: Path | None,
             target: str, json_path: Path | None,
             fail_above: tuple[str, ...], fail_below: tuple[str, ...], gate_on: str) -> None:
    """Correct every metric of RESULTS with people's labels in LABELS.

    Per metric: the judge's mean over all N samples, people's mean over the n they labelled,
    and the corrected mean (prediction-powered inference, PPI++): people's labels fix the
    judge's errors, the judge's values on the other samples narrow the interval. Valid when
    the labelled samples are a uniform random sample (as `noisegauge review` picks them)
    and people labelled without looking at the judge first.
    """
    from ..people import estimate as run_estimate
    from ..people.design import read_plan
    from ..report import read_results

    refuse_clobber({"--json": json_path}, {"RESULTS": results, "--labels": labels_path,
                                           "--plan": plan_path})
    gates = parse_gates(fail_above, "above") + parse_gates(fail_below, "below")
    try:
        rows = read_results(results)
        plan = None if plan_path is None else read_plan(plan_path)
        est = run_estimate(rows, labels_path, confidence, plan=plan,
                           target=target)  # type: ignore[arg-type]
    except NoiseGaugeError as exc:
        error(str(exc))
        sys.exit(2)
    if not est.metrics:
        error(f"{labels_path}: no sample of {results} is completely labelled yet (every "
              "response claim and chunk); label some with `noisegauge review`")
        for line in est.notes():
            note(f"note: {line}")
        sys.exit(2)
    print_estimate(est)
    if json_path is not None:
        write_text(json_path, json.dumps(est.to_dict(), indent=2) + "\n")
        stdout().print(f"estimates: {json_path}")
    failed = estimate_gates(gates, est, gate_on)
    for message in failed:
        error(message, label="gate failed")
    sys.exit(1 if failed else 0)
