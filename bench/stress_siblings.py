"""Noise sensitivity of a pipeline under each golden row's own traps against random distractors.

    python bench/stress_siblings.py [GOLDEN ...] [--pipeline extractive] [--levels 0,1,2,4]
    python bench/stress_siblings.py --docs tests/data/testset_docs/docs \
        --questions tests/data/testset_docs/questions.txt      # testset's drafts, unreviewed
    python bench/stress_siblings.py --docs tests/data/testset_docs/docs \
        --from-log tests/data/testset_docs/log.jsonl            # drafted from a log

GOLDEN: golden files whose rows carry ``distractors`` (``noisegauge testset``'s output;
default: ``tests/data/golden/golden_siblings.jsonl``, the bundled example's questions with
their look-alike, conflicting and topical chunks). Each is stressed twice with the same
pipeline and the offline judge: ``--strategy siblings`` (the rows' own traps, deterministic)
and ``--strategy others`` (random relevant chunks of other questions, ``--repeats`` draws per
level, averaged). ``--docs DIR --questions FILE`` first drafts a golden set with
``noisegauge testset`` (rows with no answer found are left out by ``stress``). Printed per
level: noise sensitivity (irrelevant, relevant, and their sum) for both, and the ratio
siblings / others; then the ratio of the means over the noisy levels, the figure issue #31's
"at least 1.5x over random distractors" is read from, and the ratio of the rises over level 0
(what the injected chunks add to the clean answer's noise).
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

from noisegauge.stress import stress

ROOT = Path(__file__).resolve().parents[1]
DEFAULT = ROOT / "tests" / "data" / "golden" / "golden_siblings.jsonl"
MODES = ("noise_sensitivity_irrelevant", "noise_sensitivity_relevant")


def curve(golden: Path, strategy: str, pipeline: str, levels: list[int], repeats: int,
          seed: int) -> dict[int, dict[str, float | None]]:
    """level -> {mode: mean, "ns": irrelevant + relevant, "undefined": samples}."""
    metrics = stress(golden, pipeline=pipeline, levels=levels, strategy=strategy, seed=seed,
                     repeats=repeats, judge="lexical", judge_cache=False).curve()["metrics"]
    out: dict[int, dict[str, Any]] = {}
    for j, level in enumerate(levels):
        row: dict[str, Any] = {m: metrics[m][j]["mean"] for m in MODES}
        both = [row[m] for m in MODES]
        row["ns"] = None if None in both else sum(both)
        row["undefined"] = metrics[MODES[0]][j]["undefined"]
        out[level] = row
    return out


def _fmt(x: float | None) -> str:
    return "undef" if x is None else f"{x:.3f}"


def _ratio(a: float | None, b: float | None) -> str:
    if a is None or b is None:
        return "undef"
    if b == 0:
        return "inf" if a > 0 else "undef (0/0)"
    return f"{a / b:.2f}x"


def report(golden: Path, pipeline: str, levels: list[int], repeats: int, seed: int,
           name: str | None = None) -> None:
    sib = curve(golden, "siblings", pipeline, levels, 1, seed)
    oth = curve(golden, "others", pipeline, levels, repeats, seed)
    print(f"== {name or golden} (pipeline {pipeline}, judge lexical; others: {repeats} draws, seed {seed})")
    print(f"{'level':>5}  {'sib irr':>8} {'sib rel':>8} {'sib NS':>8}  "
          f"{'oth irr':>8} {'oth rel':>8} {'oth NS':>8}  {'ratio':>10}  undefined (sib/oth)")
    for level in levels:
        s, o = sib[level], oth[level]
        print(f"{level:>5}  {_fmt(s[MODES[0]]):>8} {_fmt(s[MODES[1]]):>8} {_fmt(s['ns']):>8}  "
              f"{_fmt(o[MODES[0]]):>8} {_fmt(o[MODES[1]]):>8} {_fmt(o['ns']):>8}  "
              f"{_ratio(s['ns'], o['ns']):>10}  {s['undefined']}/{o['undefined']}")
    noisy = [k for k in levels if k > 0]
    means = []
    for run in (sib, oth):
        values = [run[k]["ns"] for k in noisy]
        means.append(None if not values or None in values
                     else sum(v for v in values if v is not None) / len(values))
    print(f"mean NS over levels {','.join(map(str, noisy))}: siblings {_fmt(means[0])}, "
          f"others {_fmt(means[1])}, ratio {_ratio(means[0], means[1])}")
    clean = [run[levels[0]]["ns"] for run in (sib, oth)]
    if levels[0] == 0 and None not in means and None not in clean:
        rises = [m - c for m, c in zip(means, clean, strict=True) if m is not None and c is not None]
        print(f"rise over level 0: siblings {rises[0]:.3f}, others {rises[1]:.3f}, "
              f"ratio {_ratio(rises[0], rises[1])}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("golden", nargs="*", type=Path)
    parser.add_argument("--docs", type=Path, help="draft a golden set from these documents")
    parser.add_argument("--questions", type=Path, help="with --docs: the questions")
    parser.add_argument("--from-log", type=Path, help="with --docs: a log to draft rows from")
    parser.add_argument("--pipeline", default="extractive")
    parser.add_argument("--levels", default="0,1,2,4")
    parser.add_argument("--repeats", type=int, default=5, help="draws of random distractors")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    levels = sorted({int(x) for x in args.levels.split(",")})
    with tempfile.TemporaryDirectory() as tmp:
        goldens = list(args.golden)
        if args.docs is not None:
            drafted = Path(tmp) / "golden.jsonl"
            extra = ["--questions", str(args.questions)] if args.questions else []
            extra += ["--from-log", str(args.from_log)] if args.from_log else []
            subprocess.run([sys.executable, "-m", "noisegauge", "testset", str(args.docs), *extra,
                            "--out", str(drafted), "-q", "--no-cache"], check=True)
            goldens.append(drafted)
        for golden in goldens or [DEFAULT]:
            how = f" --from-log {args.from_log}" if args.from_log else ""
            name = f"noisegauge testset {args.docs}{how}" if golden.parent == Path(tmp) else None
            report(golden, args.pipeline, levels, args.repeats, args.seed, name)


if __name__ == "__main__":
    main()
