"""Designed labelling on hand-labelled cases: coverage and width of 20 labels per split.

    python bench/ppi_design_labelled.py [--draws 200] [--n 20] [--judge lexical]

The cases are the project's hand-labelled misattribution sets (tests/data/misattribution*.jsonl:
27 splits of 40-61 samples, each response's labelled sentence marked misattributed from chunk
j, a true hallucination, a correct claim, or a true sentence about another entity). The
offline judge scores every case; people's per-sample values are the judge's claims with the
claims on the labelled sentence put in the bucket people gave it (misattributed from j: noise,
relevant or irrelevant as chunk j is; hallucination; correct: grounded; a sentence about
another entity: irrelevant noise), each metric the share of claims in its bucket. Claims off
the labelled sentence keep the judge's bucket, and chunk relevance is the judge's: the
labels speak of one sentence a sample.

Each split is one results file of N samples. For every metric and design, ``--draws`` plans
of n labels are drawn as ``noisegauge sample`` draws them, estimated as ``noisegauge estimate
--plan`` does (finite target: the split's own mean of people's values), and compared with the
people-only interval of n uniformly drawn labels (today's). Splits where people's values do
not vary are left out (any interval covers them). These are development figures: the
held-out acceptance sets are not here.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))

from noisegauge import evaluate  # noqa: E402
from noisegauge.people.design import (  # noqa: E402
    DESIGNS,
    STRATA,
    designed_mean_arrays,
    doubt,
    draw,
    stratum,
)
from noisegauge.people.ppi import people_mean_arrays, ppi_mean_arrays  # noqa: E402
from noisegauge.report.align import locate  # noqa: E402

DATA = ROOT / "tests" / "data"
METRICS = {"noise_sensitivity_relevant": "relevant_noise",
           "noise_sensitivity_irrelevant": "irrelevant_noise", "hallucination": "hallucination"}
CONFIDENCE = 0.9


def people_bucket(case: dict[str, Any], row: dict[str, Any]) -> str:
    gold = case["misattributed_from"]
    if gold:
        chunks = row.get("chunks") or []
        rel = chunks[gold[0]]["relevant"] if gold[0] < len(chunks) else False
        return "relevant_noise" if rel else "irrelevant_noise"
    return {"hallucination": "hallucination", "correct": "grounded"}.get(case["kind"],
                                                                        "irrelevant_noise")


def values(case: dict[str, Any], row: dict[str, Any]) -> tuple[dict[str, float], dict[str, float]]:
    """The judge's and people's per-sample values of METRICS (empty when no claims)."""
    claims = row.get("response_claims") or []
    if not claims:
        return {}, {}
    response, label = case["response"], case["claim"]
    a = response.find(label)
    b = a + len(label)
    ours = people_bucket(case, row)
    judge_b, people_b = [], []
    for c in claims:
        span = locate(c["text"], response)
        on = a >= 0 and span is not None and span[0] < b and span[1] > a
        judge_b.append(c["bucket"])
        people_b.append(ours if on else c["bucket"])
    k = len(claims)
    return ({m: judge_b.count(x) / k for m, x in METRICS.items()},
            {m: people_b.count(x) / k for m, x in METRICS.items()})


def load(judge: str) -> dict[str, list[tuple[dict[str, Any], dict[str, Any]]]]:
    cases = [json.loads(x) for p in sorted(DATA.glob("misattribution*.jsonl"))
             for x in p.read_text(encoding="utf-8").splitlines() if x.strip()]
    rows = evaluate([{k: c[k] for k in ("id", "user_input", "response", "reference",
                                        "retrieved_contexts")} for c in cases],
                    judge=judge, cache=False, progress=False).rows()
    out: dict[str, list[tuple[dict[str, Any], dict[str, Any]]]] = {}
    for case, row in zip(cases, rows, strict=True):
        out.setdefault(str(case["split"]), []).append((case, row))
    return out


def measure(pairs: list[tuple[dict[str, Any], dict[str, Any]]], metric: str, n: int,
            draws: int, seed: int) -> dict[str, Any] | None:
    judge_v, people_v, us, st = [], [], [], []
    for case, row in pairs:
        jv, pv = values(case, row)
        if not jv:
            continue
        judge_v.append(jv[metric])
        people_v.append(pv[metric])
        d = doubt(row)
        us.append(math.nan if d is None else d)
        st.append(STRATA.index(stratum(row)))
    y, f = np.asarray(people_v), np.asarray(judge_v)
    big_n = len(y)
    if big_n <= n or y.min() == y.max():
        return None
    truth = y.mean()
    rng = np.random.default_rng(seed)
    shape = (draws, big_n)
    u, strata = np.broadcast_to(np.asarray(us), shape), np.broadcast_to(np.asarray(st), shape)
    perm = np.argsort(rng.random(shape), axis=-1)
    m, h = people_mean_arrays(y[perm[:, :n]], CONFIDENCE)
    out: dict[str, Any] = {"N": big_n, "people_cover": float(np.mean(np.abs(m - truth) <= h))}
    est, half, _ = ppi_mean_arrays(y[perm[:, :n]], f[perm[:, :n]], f[perm[:, n:]], CONFIDENCE)
    out["today"] = (float(np.mean(np.abs(est - truth) <= half)), float(half.mean() / h.mean()))
    for design in DESIGNS:
        order, pi = draw(design, n, u, strata, rng)
        def take(x: Any, order: Any = order) -> Any:
            return np.take_along_axis(np.broadcast_to(x, shape), order, -1)

        s = take(strata) if design == "stratified" else np.zeros(order.shape, int)
        est, half, _ = designed_mean_arrays(take(y), take(f), take(pi), s, float(f.sum()),
                                            float(big_n), CONFIDENCE)
        out[design] = (float(np.mean(np.abs(est - truth) <= half)), float(half.mean() / h.mean()))
    return out


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--draws", type=int, default=200)
    ap.add_argument("--n", type=int, default=20)
    ap.add_argument("--judge", default="lexical")
    ap.add_argument("--out", type=Path)
    args = ap.parse_args(argv)
    splits = load(args.judge)
    cols = ("today", *DESIGNS)
    lines = [f"{args.n} labels per split, {args.draws} draws, nominal {CONFIDENCE:.0%}; "
             "cells: coverage / width vs people-only on uniform labels",
             f"{'metric':30} {'split':8} {'N':>3}  {'people':>6}  "
             + "  ".join(f"{c:>13}" for c in cols)]
    summary: dict[str, dict[str, list[tuple[float, float]]]] = {}
    for metric in METRICS:
        for k, (split, pairs) in enumerate(sorted(splits.items())):
            res = measure(pairs, metric, args.n, args.draws, seed=k)
            if res is None:
                continue
            for c in cols:
                summary.setdefault(metric, {}).setdefault(c, []).append(res[c])
            lines.append(f"{metric:30} {split:8} {res['N']:>3}  {res['people_cover']:6.3f}  "
                         + "  ".join(f"{res[c][0]:.3f} / {res[c][1]:.2f}".rjust(13)
                                     for c in cols))
            print(lines[-1], flush=True)
    lines.append("")
    lines.append("per metric, over splits: mean coverage (lowest) / mean width ratio (highest)")
    for metric, per in summary.items():
        cells = []
        for c in cols:
            cov = [x for x, _ in per[c]]
            wid = [w for _, w in per[c]]
            cells.append(f"{np.mean(cov):.3f} ({min(cov):.3f}) / {np.mean(wid):.2f} "
                         f"({max(wid):.2f})")
        lines.append(f"{metric:30} splits {len(per['today']):>2}  " + "  ".join(cells))
    print("\n".join(lines[-len(summary) - 2:]))
    if args.out:
        args.out.write_text("\n".join(lines) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
