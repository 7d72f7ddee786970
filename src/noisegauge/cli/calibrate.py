"""``noisegauge calibrate``: how far to trust each judge on your own labelled pairs."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import NoReturn

import click
from rich import box
from rich.console import Console
from rich.table import Table

from ..calibration import (
    JudgeReport,
    Pair,
    balanced_accuracy,
    best_threshold,
    evaluate_judge,
    read_pairs,
)
from ..errors import MissingDependency, NoiseGaugeError
from ..infra.outputs import check_writable, write_text
from .console import cli_logging, quiet_option
from .paths import refuse_clobber

__all__ = ["calibrate"]


def _fail(message: str) -> NoReturn:
    click.echo(f"Error: {message}", err=True)
    sys.exit(2)


def _table(reports: list[JudgeReport]) -> Table:
    table = Table(title="judges on your labels (positive = supported)", title_justify="left",
                  box=box.SIMPLE_HEAD)
    for col in ("judge", "balanced acc", "95% CI", "TP", "FN", "FP", "TN"):
        table.add_column(col, justify="left" if col == "judge" else "right", no_wrap=True)
    for r in reports:
        c = r.confusion
        table.add_row(r.spec, f"{r.balanced_accuracy:.3f}", f"[{r.ci[0]:.3f}, {r.ci[1]:.3f}]",
                      str(c["tp"]), str(c["fn"]), str(c["fp"]), str(c["tn"]))
    return table


def _verdict(reports: list[JudgeReport]) -> str:
    """Which judge to trust: the best one, unless its interval overlaps the runner-up's."""
    if len(reports) == 1:
        r = reports[0]
        return (f"{r.spec}: right on {r.balanced_accuracy:.0%} (balanced) of these pairs; "
                "label more pairs to narrow the interval" if r.ci[1] - r.ci[0] > 0.2 else
                f"{r.spec}: right on {r.balanced_accuracy:.0%} (balanced) of these pairs")
    ranked = sorted(reports, key=lambda r: r.balanced_accuracy, reverse=True)
    best, second = ranked[0], ranked[1]
    if best.ci[0] > second.ci[1]:
        return f"trust {best.spec} on this data: it is better than {second.spec} beyond doubt"
    return (f"{best.spec} scores highest, but its interval overlaps {second.spec}'s: no clear "
            "winner on these pairs; label more to decide")


@click.command()
@click.argument("labels", type=click.Path(exists=True, dir_okay=False, path_type=Path))
@click.option("--judge", "judges", multiple=True, default=("lexical",), show_default=True,
              help="Judge to check (repeat to compare): lexical, lexical:PROFILE.json, "
                   "openai:MODEL, nli:PATH, ...")
@click.option("--samples", type=click.Path(exists=True, dir_okay=False, path_type=Path),
              help="The scored input, when LABELS is a results file with labelled claims.")
@click.option("--save", type=click.Path(dir_okay=False, path_type=Path),
              help="Write the offline judge's best threshold on these pairs to a profile "
                   "(use it with --judge lexical:PROFILE).")
@click.option("--base-url", help="Endpoint of an OpenAI-compatible judge.")
@click.option("--seed", default=0, show_default=True, help="Seed of the bootstrap interval.")
@quiet_option
def calibrate(labels: Path, judges: tuple[str, ...], samples: Path | None, save: Path | None,
              base_url: str | None, seed: int, quiet: bool) -> None:
    """Check judges against LABELS: JSONL rows {"premise", "claim", "label": true|false},
    or a results file whose response claims carry "label" (with --samples)."""
    with cli_logging(quiet):
        _calibrate(labels, judges, samples, save, base_url, seed)


def _calibrate(labels: Path, judges: tuple[str, ...], samples: Path | None, save: Path | None,
               base_url: str | None, seed: int) -> None:
    from ..judges.registry import get_judge

    refuse_clobber({"--save": save}, {"LABELS": labels, "--samples": samples})
    if save is not None:
        try:  # before any judge call
            check_writable(save)
        except NoiseGaugeError as e:
            _fail(str(e))

    try:
        pairs = read_pairs(labels, samples)
    except (NoiseGaugeError, OSError) as e:
        _fail(str(e))
    if len({p.label for p in pairs}) < 2:
        _fail(f"{labels}: every pair has the same label; balanced accuracy needs both supported "
              "and unsupported pairs")
    reports = []
    for spec in judges:
        try:
            kwargs = {"base_url": base_url} if base_url and spec.startswith("openai") else {}
            judge = get_judge(spec, **kwargs)
            reports.append(evaluate_judge(spec, judge, pairs, seed=seed))
        except MissingDependency as e:
            _fail(str(e))
        except (NoiseGaugeError, OSError, ValueError) as e:
            _fail(f"judge {spec}: {e}")
    console = Console(highlight=False, width=None if sys.stdout.isatty() else 100)
    n_pos = sum(p.label for p in pairs)
    console.print(f"{len(pairs)} labelled pairs ({n_pos} supported, {len(pairs) - n_pos} not)")
    console.print(_table(reports))
    scored = [r for r in reports if r.scores is not None]
    tuned = None
    for r in scored:
        current = float(r.identity.get("threshold", 0.5))
        t, acc = best_threshold([p.label for p in pairs], list(r.scores or ()), current)
        console.print(f"{r.spec}: threshold {current:g} -> best on these pairs {t:g} "
                      f"(balanced accuracy {acc:.3f}; tuned on the same pairs, so expect less "
                      "on new data)")
        tuned = tuned or (r, t, acc)
    console.print(_verdict(reports))
    if save is not None:
        if tuned is None:
            _fail("--save needs an offline judge (lexical) among --judge: only its threshold "
                  "can be tuned")
        r, t, acc = tuned
        _save(save, r, t, acc, pairs, labels)
        console.print(f"saved {save}: use it with --judge lexical:{save}")


def _save(path: Path, r: JudgeReport, threshold: float, acc: float, pairs: list[Pair],
          labels: Path) -> None:
    from ..judges.lexical import PROFILE_KIND

    profile = {"kind": PROFILE_KIND, "threshold": threshold,
               "judge": {k: v for k, v in r.identity.items() if k != "threshold"},
               "tuned_on": {"file": str(labels), "pairs": len(pairs),
                            "balanced_accuracy": round(acc, 4),
                            "before": round(balanced_accuracy([p.label for p in pairs],
                                                              list(r.predictions)), 4)}}
    write_text(path, json.dumps(profile, indent=2) + "\n")
