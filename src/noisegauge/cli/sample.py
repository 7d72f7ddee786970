"""``noisegauge sample RESULTS --n N --out PLAN.jsonl``: which samples people should label.

Exit codes: 0 written; 2 bad invocation, unreadable results or an n out of range.
"""

from __future__ import annotations

import secrets
import sys
from collections import Counter
from pathlib import Path

import click

from ..errors import NoiseGaugeError
from .console import error, stdout
from .paths import refuse_clobber

__all__ = ["sample"]


@click.command()
@click.argument("results", type=click.Path(path_type=Path, dir_okay=False, exists=True))
@click.option("--n", "n", type=click.IntRange(min=1), required=True, help="Samples to label.")
@click.option("--design", type=click.Choice(["uniform", "active", "stratified"]),
              default="active", show_default=True,
              help="uniform: every sample alike; active: more where the judge doubts (mixed "
                   "half and half with uniform); stratified: by the judge's worst bucket.")
@click.option("--seed", type=int, help="Seed of the draw (default: random, written in PLAN).")
@click.option("--out", "out", type=click.Path(path_type=Path, dir_okay=False), required=True,
              help="PLAN.jsonl: one {\"id\", \"p\"} a line, in labelling order.")
def sample(results: Path, n: int, design: str, seed: int | None, out: Path) -> None:
    """Choose the N samples of RESULTS to label, each with its inclusion probability p.

    Then: noisegauge review RESULTS --plan PLAN --labels LABELS, and noisegauge estimate
    RESULTS --labels LABELS --plan PLAN, whose corrected estimate weights each label by
    1/p (valid whatever the judge's doubts are worth; narrower when they are worth something).
    """
    from ..people.design import make_plan, write_plan
    from ..report import read_results

    refuse_clobber({"--out": out}, {"RESULTS": results})
    use_seed = seed if seed is not None else secrets.randbelow(2**31)
    try:
        plan = make_plan(read_results(results), n, design, use_seed)  # type: ignore[arg-type]
    except NoiseGaugeError as exc:
        error(str(exc))
        sys.exit(2)
    out.parent.mkdir(parents=True, exist_ok=True)
    write_plan(out, plan)
    ps = [r.p for r in plan.rows]
    console = stdout()
    console.print(f"{design} plan: {len(plan.rows)} of {plan.N} samples (seed {use_seed}); "
                  f"p from {min(ps):.3f} to {max(ps):.3f}; plan: {out}")
    if design == "stratified":
        counts = Counter(r.stratum for r in plan.rows)
        console.print("per stratum: " + ", ".join(f"{k} {v}" for k, v in sorted(counts.items())))
    console.print(f"next: noisegauge review {results} --plan {out} --labels LABELS.jsonl")
