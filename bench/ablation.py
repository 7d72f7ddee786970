"""Ablation: what each rule family of the lexical judge and of misattribution earns.

    python bench/ablation.py [--data ../shared/data] [--cross-source DIR] [--limit N]
                             [--families all|lexical|misattribution|ID,ID]
    python bench/ablation.py --libraries      # hand-written parts beside well-kept libraries
    python bench/ablation.py --korean-nli [--cross-source DIR] [--families ...]
    python bench/ablation.py --every-split [--families ...]

Each row switches one family off (``judges/lexical/rules.py``,
``scoring/misattribution/rules.py``) and prints, beside the full judge (``-`` row): the
balanced accuracy on every judge-bench set (``--cross-source DIR``: each set with the weights
trained without its family, the held-out figure; else the shipped weights), misattribution
precision / recall on the held-out splits (test18, test19, noise10: written blind, never
looked into), and the judge's claim-chunk pairs per second (CPU time of this process).

The weights stay those trained with every family in force: a family whose cue also feeds a
feature (number, negation, antonym, entity swaps) is measured without retraining, which
understates what retraining without it could recover. A family that gains nothing on data it
was not fitted to is a candidate to remove; removing one means retraining
(``training/train_lexical.py``).

``--korean-nli``: each lexical family off on held-out Korean NLI, entailed vs not: KorNLI dev
(2,490 pairs, never trained on: shipped weights) and KLUE-NLI dev (3,000, judged with the
weights trained without the NLI family when ``--cross-source DIR`` is given): balanced
accuracy, its change when the family is on, and the pairs whose verdict it changes.
``--every-split``: misattribution TP / FP / FN on every labelled split with each family off
(each split was held out for the rules written before it: ``bench/misattribution.py``).

``--libraries``: for each text task the toolkit hand-writes, the same task done by the
library the issue names, on the bench's own texts: agreement with the toolkit and speed.
"""

from __future__ import annotations

import argparse
import asyncio
import importlib.util
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager, nullcontext
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent
sys.path.insert(0, str(ROOT))


def _load(name: str) -> Any:
    spec = importlib.util.spec_from_file_location(name, ROOT / f"{name}.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


judge_accuracy = _load("judge_accuracy")
misattribution = _load("misattribution")

HELD = ["test18", "test19", "noise10"]


@contextmanager
def without(family: str) -> Iterator[None]:
    """``family`` ("lexical:ID" or "misattribution:ID") switched off, caches cleared."""
    from noisegauge.judges.lexical import features
    from noisegauge.judges.lexical import rules as lexical_rules
    from noisegauge.scoring.misattribution import find
    from noisegauge.scoring.misattribution import rules as mis_rules

    kind, _, rule = family.partition(":")
    switch = {"lexical": lexical_rules.off, "misattribution": mis_rules.off}[kind]
    features.analyse.cache_clear()
    find._windows.cache_clear()
    with switch(rule):
        yield
    features.analyse.cache_clear()
    find._windows.cache_clear()


def judge_row(sets: dict[str, list[Any]], cross: Path | None) -> tuple[dict[str, float], float]:
    """Balanced accuracy per set, and pairs per second over all of them."""
    from noisegauge.judges.registry import get_judge

    shipped = get_judge("lexical")
    accs, pairs, seconds = {}, 0, 0.0
    for name, items in sets.items():
        family = name.split("_")[0]
        judge = shipped if cross is None else get_judge(
            f"lexical:{cross / f'weights_without_{family}.json'}")
        scores, n, sec = asyncio.run(judge_accuracy.evaluate(judge, items))
        accs[name] = scores["bal_acc"]
        pairs += n
        seconds += sec
    return accs, pairs / seconds if seconds else float("inf")


def families(choice: str) -> list[str]:
    from noisegauge.judges.lexical.rules import FAMILIES as LEXICAL
    from noisegauge.scoring.misattribution.rules import FAMILIES as MISATTRIBUTION

    every = [f"lexical:{f}" for f in LEXICAL] + [f"misattribution:{f}" for f in MISATTRIBUTION]
    if choice == "all":
        return every
    if choice in ("lexical", "misattribution"):
        return [f for f in every if f.startswith(choice + ":")]
    picked = [f if ":" in f else next((g for g in every if g.endswith(":" + f)), f)
              for f in choice.split(",")]
    unknown = [f for f in picked if f not in every]
    if unknown:
        raise SystemExit(f"unknown families {unknown}; known: {', '.join(every)}")
    return picked


def ablate(args: argparse.Namespace) -> None:
    sets = judge_accuracy.load_sets(args.data)
    if args.limit:
        sets = {k: v[: args.limit] for k, v in sets.items()}
    held = misattribution.load(splits=HELD)
    names = list(sets)
    print(f"judge bench: {', '.join(f'{k} {len(v)}' for k, v in sets.items())}; "
          f"weights: {args.cross_source or 'shipped'}; misattribution held out: "
          f"{len(held)} cases ({', '.join(HELD)})")
    short = {n: n.replace("halueval", "halu").replace("summedits", "summ")[:9] for n in names}
    print(f"{'family off':<30}" + "".join(f"{short[n]:>10}" for n in names)
          + f"{'mean':>7}{'mis-P':>7}{'mis-R':>7}{'pairs/s':>9}", flush=True)
    base: list[float] | None = None
    for family in ["-", *families(args.families)]:
        with nullcontext() if family == "-" else without(family):
            accs, rate = judge_row(sets, args.cross_source) \
                if not family.startswith("misattribution:") else (None, None)
            p, r = misattribution.precision_recall(held)
        if accs is None:
            assert base is not None
            row = "".join(f"{'=':>10}" for _ in names) + f"{'=':>7}"
        else:
            values = [accs[n] for n in names]
            mean = sum(values) / len(values)
            if base is None:
                base = [*values, mean]
                row = "".join(f"{v:>10.3f}" for v in values) + f"{mean:>7.3f}"
            else:
                row = "".join(f"{v - b:>+10.3f}" for v, b in zip([*values, mean], base, strict=True))
                row = row[:-10] + f"{mean - base[-1]:>+7.3f}"
        speed = f"{rate:>9.0f}" if rate is not None else f"{'':>9}"
        print(f"{family:<30}{row}{p:>7.3f}{r:>7.3f}{speed}", flush=True)
    print("(rows after '-': change from the full judge; '=': the judge is unchanged)")


def _korean_nli(data: Path) -> dict[str, list[Any]]:
    import csv
    import json

    nli = data / "nli"
    item = judge_accuracy.Item
    with open(nli / "kornli" / "xnli.dev.ko.tsv", encoding="utf-8", newline="") as f:
        kornli = [item((r["sentence1"],), r["sentence2"], r["gold_label"] == "entailment")
                  for r in csv.DictReader(f, delimiter="\t", quoting=csv.QUOTE_NONE)]
    klue = json.loads((nli / "klue_nli" / "klue-nli-v1.1_dev.json").read_text(encoding="utf-8"))
    return {"kornli_dev": kornli,
            "klue_dev": [item((r["premise"],), r["hypothesis"], r["gold_label"] == "entailment")
                         for r in klue]}


def korean_nli(args: argparse.Namespace) -> None:
    from noisegauge.judges.registry import get_judge

    sets = _korean_nli(args.data)
    judges: dict[str, Any] = {"kornli_dev": get_judge("lexical"), "klue_dev": get_judge(
        "lexical" if args.cross_source is None
        else f"lexical:{args.cross_source / 'weights_without_nli.json'}")}

    def verdicts(name: str) -> list[bool]:
        out = []
        for it in sets[name]:
            claims = asyncio.run(judge_accuracy.claims_of(judges[name], it))
            m = asyncio.run(judges[name].check_many(list(it.premises), claims))
            out.append(all(any(row[c].value == "entailed" for row in m) for c in range(len(claims))))
        return out

    print(f"{'family off':<26}" + "".join(f"{n + ' (' + str(len(v)) + ')':>30}" for n, v in sets.items()))
    base: dict[str, list[bool]] = {}
    for family in ["-", *(f for f in families(args.families) if f.startswith("lexical:"))]:
        row = ""
        with nullcontext() if family == "-" else without(family):
            for name, items in sets.items():
                pred = verdicts(name)
                acc = judge_accuracy.binary_scores([it.label for it in items], pred)["bal_acc"]
                if family == "-":
                    base[name] = pred
                    row += f"{acc:>30.4f}"
                    continue
                on = judge_accuracy.binary_scores([it.label for it in items], base[name])["bal_acc"]
                changed = sum(a != b for a, b in zip(pred, base[name], strict=True))
                row += f"{acc:>12.4f} on {on - acc:>+8.4f}, {changed:>3} changed"
        print(f"{family:<26}{row}", flush=True)
    print("(bal_acc entailed vs not; 'on': what the family gains; 'changed': pairs whose verdict it changes)")


def every_split(args: argparse.Namespace) -> None:
    cases = misattribution.load()
    splits = sorted({str(c["split"]) for c in cases},
                    key=lambda s: (s.startswith("noise"), int("".join(filter(str.isdigit, s)) or 0)))
    print(f"{'family off':<30}" + "".join(f"{s:>11}" for s in [*splits, "all"]) + "   (TP/FP/FN)")
    for family in ["-", *families(args.families)]:
        with nullcontext() if family == "-" else without(family):
            flags = misattribution.flags(cases)
        row = ""
        for split in [*splits, "all"]:
            tp, fp, fn, _, _ = misattribution._score(
                [f for f, c in zip(flags, cases, strict=True) if split in ("all", c["split"])])
            row += f"{f'{tp}/{fp}/{fn}':>11}"
        print(f"{family:<30}{row}", flush=True)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", type=Path, default=judge_accuracy.DEFAULT_DATA)
    ap.add_argument("--cross-source", type=Path, metavar="DIR",
                    help="weights trained without each set's family (training --cross-out DIR)")
    ap.add_argument("--limit", type=int, default=0, help="first N items of each set (0: all)")
    ap.add_argument("--families", default="all")
    ap.add_argument("--libraries", action="store_true",
                    help="compare the hand-written text tasks with libraries instead")
    ap.add_argument("--korean-nli", action="store_true",
                    help="each lexical family off on KorNLI / KLUE-NLI dev instead")
    ap.add_argument("--every-split", action="store_true",
                    help="misattribution on every labelled split with each family off instead")
    args = ap.parse_args(argv)
    if args.libraries:
        import libraries
        libraries.main(args.data)
        return 0
    t0 = time.perf_counter()
    if args.korean_nli:
        korean_nli(args)
    elif args.every_split:
        every_split(args)
    else:
        ablate(args)
    print(f"({time.perf_counter() - t0:.0f}s wall)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
