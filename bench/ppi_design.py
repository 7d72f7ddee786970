"""Designed labelling: Monte Carlo coverage and width of every design, judge and target.

    python bench/ppi_design.py [--reps 10000] [--n 20,50,200] [--out bench/results/ppi_design.txt]

Populations are per-sample metric values as the family makes them: each of N samples has 1-6
claims, each flagged (wrong) with the sample's own rate drawn from a Beta; the value is the
flagged share. "fractions" (Beta(2, 5)) is precision-like, "skewed" (Beta(0.4, 2.5), two in
five samples exactly 0) noise-sensitivity-like. A fresh population per replication, N = 57,
150, 600 for n = 20, 50, 200 (and N = 400 for n = 20). Simulated judges read each claim:

- perfect: every claim right, no doubts;
- noisy: each claim's flag flipped with chance 0.15; the judge marks 70% of its wrong
  verdicts uncertain and 10% of its right ones (informative doubt);
- biased: false alarms on 25% of the right claims, doubts as noisy;
- useless: flags independent of the truth, doubts at random;
- blind-doubt: noisy, but the doubts fall at random (30% of claims, uninformative);
- misleading: noisy, doubts only on right verdicts (worse than uninformative).

Each design draws the n as ``noisegauge sample`` does (``people.design.draw``), the estimator
is ``people.design.designed_mean_arrays``; "people" is today's people-only interval on n
uniform labels (Student-t, no finite-population correction). Columns: coverage at nominal
90%, mean width relative to that people-only interval, and relative to the same design's
people-only (weight 0) interval. tests/test_ppi_design.py asserts the same figures with
fewer replications.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))

from noisegauge.people.design import (  # noqa: E402
    DESIGNS,
    FLAGGED,
    Q_BASE,
    Q_FLAGGED,
    Q_UNCERTAIN,
    designed_mean_arrays,
    draw,
)
from noisegauge.people.ppi import people_mean_arrays  # noqa: E402

CONFIDENCE = 0.9
POPULATIONS = {"fractions": (2.0, 5.0), "skewed": (0.4, 2.5)}
JUDGES = ("perfect", "noisy", "biased", "useless", "blind-doubt", "misleading")
SIZES = {20: 57, 50: 150, 200: 600}
assert FLAGGED  # the doubt rule below is the library's, claim by claim


def population(rng: Any, r: int, big_n: int, beta: tuple[float, float]) -> tuple[Any, Any, Any]:
    """Claims mask (r, N, 6), true flags and people's values (r, N)."""
    k = rng.integers(1, 7, size=(r, big_n))
    mask = np.arange(6) < k[..., None]
    rate = rng.beta(*beta, size=(r, big_n))
    truth = (rng.random((r, big_n, 6)) < rate[..., None]) & mask
    return mask, truth, truth.sum(-1) / k


def judge(rng: Any, kind: str, mask: Any, truth: Any,
          beta: tuple[float, float]) -> tuple[Any, Any]:
    """The judge's flags and uncertain marks, claim by claim."""
    shape = truth.shape
    if kind == "perfect":
        return truth.copy(), np.zeros(shape, bool)
    if kind == "useless":
        rate = rng.beta(*beta, size=shape[:-1])
        flags = (rng.random(shape) < rate[..., None]) & mask
        return flags, (rng.random(shape) < 0.3) & mask
    if kind == "biased":
        wrong = ~truth & (rng.random(shape) < 0.25) & mask
    else:
        wrong = (rng.random(shape) < 0.15) & mask
    flags = (truth ^ wrong) & mask
    if kind == "blind-doubt":
        unsure = rng.random(shape) < 0.3
    elif kind == "misleading":
        unsure = ~wrong & (rng.random(shape) < 0.3)
    else:
        unsure = np.where(wrong, rng.random(shape) < 0.7, rng.random(shape) < 0.1)
    return flags, unsure & mask


def doubts(mask: Any, flags: Any, unsure: Any) -> Any:
    """``people.design.doubt`` claim by claim: sqrt(sum q) / k."""
    q = np.where(unsure, Q_UNCERTAIN, np.where(flags, Q_FLAGGED, Q_BASE)) * mask
    return np.sqrt(q.sum(-1)) / mask.sum(-1)


_THETA: dict[str, float] = {}


def theta(pop: str) -> float:
    if pop not in _THETA:
        rng = np.random.default_rng(99)
        _THETA[pop] = float(population(rng, 1, 1_000_000, POPULATIONS[pop])[2].mean())
    return _THETA[pop]


def simulate(pop: str, kind: str, n: int, big_n: int, design: str, reps: int,
             target: str = "finite", seed: int = 1) -> dict[str, float]:
    """Coverage and widths of one case (``reps`` replications in one vectorised call)."""
    rng = np.random.default_rng([seed, n, big_n, JUDGES.index(kind), DESIGNS.index(design),  # type: ignore[arg-type]
                                 list(POPULATIONS).index(pop)])
    beta = POPULATIONS[pop]
    mask, truth, y = population(rng, reps, big_n, beta)
    flags, unsure = judge(rng, kind, mask, truth, beta)
    f = flags.sum(-1) / mask.sum(-1)
    u = doubts(mask, flags, unsure)
    strata = np.where(flags.any(-1), 0, 1)
    order, pi = draw(design, n, u, strata, rng)  # type: ignore[arg-type]

    def take(x: Any) -> Any:
        return np.take_along_axis(x, order, -1)

    used_strata = take(strata) if design == "stratified" else np.zeros(order.shape, int)
    args = (take(y), take(f), take(pi), used_strata, f.sum(-1), float(big_n), CONFIDENCE)
    est, half, lam = designed_mean_arrays(*args, target=target)  # type: ignore[arg-type]
    est0, half0, _ = designed_mean_arrays(*args, target=target, lam=0.0)  # type: ignore[arg-type]
    m, h = people_mean_arrays(y[:, :n], CONFIDENCE)  # the first n: a uniform draw
    truth_mean = y.mean(-1) if target == "finite" else theta(pop)
    return {"coverage": float(np.mean(np.abs(est - truth_mean) <= half)),
            "people_coverage": float(np.mean(np.abs(m - truth_mean) <= h)),
            "width_vs_people": float(np.mean(half) / np.mean(h)),
            "width_vs_design_people": float(np.mean(half) / np.mean(half0)),
            "lam": float(lam.mean()),
            "coverage_weight0": float(np.mean(np.abs(est0 - truth_mean) <= half0))}


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--reps", type=int, default=10000)
    ap.add_argument("--n", default="20,50,200")
    ap.add_argument("--target", default="finite", choices=("finite", "superpopulation"))
    ap.add_argument("--out", type=Path)
    args = ap.parse_args(argv)
    lines = [f"designed labelling, {args.reps} replications per case, target {args.target}, "
             f"nominal {CONFIDENCE:.0%}",
             f"{'population':10} {'judge':12} {'n':>4} {'N':>4}  "
             + "  ".join(f"{d:>22}" for d in DESIGNS),
             f"{'':10} {'':12} {'':>4} {'':>4}  "
             + "  ".join(f"{'cover  w/ppl  w/same':>22}" for _ in DESIGNS)]
    cases = [(n, SIZES[n]) for n in map(int, args.n.split(","))]
    if 20 in SIZES and any(n == 20 for n, _ in cases):
        cases.insert(1, (20, 400))
    for pop in POPULATIONS:
        for kind in JUDGES:
            for n, big_n in cases:
                cells = []
                for design in DESIGNS:
                    r = simulate(pop, kind, n, big_n, design, args.reps, args.target)
                    cells.append(f"{r['coverage']:.3f}  {r['width_vs_people']:.2f}  "
                                 f"{r['width_vs_design_people']:.2f}".rjust(22))
                lines.append(f"{pop:10} {kind:12} {n:>4} {big_n:>4}  " + "  ".join(cells))
                print(lines[-1], flush=True)
    if args.out:
        args.out.write_text("\n".join(lines) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
