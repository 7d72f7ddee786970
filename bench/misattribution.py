"""Misattributed noise: precision and recall on the labelled set, beside a baseline.

    python bench/misattribution.py [--data FILE ...] [--judge lexical] [--split test4]

Each case is one sample (question, reference, chunks, response) and one labelled claim of the
response: misattributed from chunk j (its wrong detail is stated in a chunk about another
entity) or a true hallucination (never to be flagged). The whole pipeline runs: the judge
extracts and checks the claims, and a claim is flagged when it is a hallucination with
``misattributed_from``. A case counts as flagged when a response claim lying on the labelled
sentence is flagged; a true positive needs the labelled chunk. Baseline: the word-overlap
``closest_chunk`` hint on the same hallucinated claims (what users had before).

Figures are printed for all cases, then per split. Rounds of rules and the splits held out
for them: round 1 was developed on test1-test3 and checked on test4; round 2 on test5; round
3 on test6, test7 and noise1; round 4 on test8 and noise2; round 5 on test9 and noise3;
round 6 on test10 and noise4; round 7 (after looking into those) on test11 and noise5; round
8 (judge 4.8: yes/no answers, quoted names; wrong claims the judge read loosely as entailed)
on test12, test13 and noise6, from two writers; round 9 (judge 4.9: durations and Korean
amounts said two ways; an FAQ answer is about what its question names) on test14 and noise7;
round 10 (judge 4.10: months and days; "free" said any way, the asked entity's own numbers,
"a single charge") on test15 and noise8; round 11 (one value said two ways, a detail read in
two chunks, variants and labels of the asked entity) on test16, test17 and noise9, from three
writers (after its run two false alarms were looked into and fixed: a code is never read in
another chunk; a label must name a thing of the claim's kind); round 12 (judge 4.11: a claim
that says there is none of what a "Label: value" line gives a value) on test18, test19 and
noise10, from three more writers; each written by people who saw neither the rules nor their
results. "dev" is every split some round was developed on or looked into; "held out" is the
last round's (test18, test19, noise10), untouched since its run.
Splits noise1-noise5 hold true sentences about the other entity (plain noise and comparisons),
never to be flagged: only false alarms can happen there. Cases of kind ``correct`` (a right
claim about the right entity) must stay entailed: the bench counts those the judge wrongly
leaves as hallucinations.
"""

from __future__ import annotations

import argparse
import json
from collections import Counter
from pathlib import Path
from typing import Any

from noisegauge import evaluate
from noisegauge.report.align import locate

ROOT = Path(__file__).resolve().parents[1]
DEV = {"test1", "test2", "test3", "test4", "test5", "test6", "test7", "test8", "test9",
       "test10", "test11", "test12", "test13", "test14", "test15", "test16", "test17", "noise1",
       "noise2", "noise3", "noise4", "noise5", "noise6", "noise7", "noise8", "noise9"}
HELD = {"test18", "test19", "noise10"}
DATA = ROOT / "tests" / "data"
_GROUP = {"dev": "dev: test1-17, noise1-9", "held": "held out: test18-19+noise10"}
FILES = ["misattribution.jsonl", *(f"misattribution_{x}.jsonl"
                                   for x in ("test4", "test5", "test6", "test7", "noise1", "test8",
                                             "noise2", "test9", "noise3", "test10", "noise4",
                                             "test11", "noise5", "test12", "test13", "noise6",
                                             "test14", "noise7", "test15", "noise8", "test16",
                                             "test17", "noise9", "test18", "test19", "noise10"))]


def _claims_on(case: dict[str, Any], row: dict[str, Any]) -> list[dict[str, Any]]:
    response, label = case["response"], case["claim"]
    a = response.index(label)
    b = a + len(label)
    out = []
    for c in row.get("response_claims") or []:
        span = locate(c["text"], response)
        if span is not None and span[0] < b and span[1] > a:
            out.append(c)
    return out


def _score(flags: list[tuple[set[int], list[int]]]) -> tuple[int, int, int, float, float]:
    tp = sum(1 for pred, gold in flags if gold and gold[0] in pred)
    fp = sum(1 for pred, gold in flags if pred and not (gold and gold[0] in pred))
    fn = sum(1 for pred, gold in flags if gold and gold[0] not in pred)
    precision = tp / (tp + fp) if tp + fp else 1.0
    recall = tp / (tp + fn) if tp + fn else 1.0
    return tp, fp, fn, precision, recall


def load(paths: list[Path] | None = None, splits: list[str] | None = None) -> list[dict[str, Any]]:
    """The labelled cases of ``paths`` (default: every file), of ``splits`` only if given."""
    cases = [json.loads(x) for path in (paths or [DATA / f for f in FILES])
             for x in path.read_text(encoding="utf-8").splitlines() if x.strip()]
    return [c for c in cases if not splits or c.get("split") in splits]


def flags(cases: list[dict[str, Any]], judge: str = "lexical") -> list[tuple[set[int], list[int]]]:
    """Per case: the chunks the pipeline flags on the labelled sentence, and the gold ones."""
    rows = evaluate([{k: c[k] for k in ("id", "user_input", "response", "reference",
                                        "retrieved_contexts")} for c in cases],
                    judge=judge, cache=False, progress=False).rows()
    return [({j for c in _claims_on(case, row) for j in c.get("misattributed_from") or []},
             case["misattributed_from"]) for case, row in zip(cases, rows, strict=True)]


def precision_recall(cases: list[dict[str, Any]], judge: str = "lexical") -> tuple[float, float]:
    """Precision and recall of ``misattributed_from`` over ``cases``."""
    return _score(flags(cases, judge))[3:]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", type=Path, nargs="+", default=[DATA / f for f in FILES])
    parser.add_argument("--judge", default="lexical")
    parser.add_argument("--split", action="append",
                        help="only these splits (test1: the first set; test2: written after the "
                             "rules were frozen); default: all")
    args = parser.parse_args()
    cases = [json.loads(x) for path in args.data
             for x in path.read_text(encoding="utf-8").splitlines() if x.strip()]
    if args.split:
        cases = [c for c in cases if c.get("split") in args.split]
    rows = list(evaluate([{k: c[k] for k in ("id", "user_input", "response", "reference",
                                               "retrieved_contexts")} for c in cases],
                         judge=args.judge, cache=False, progress=False).rows())
    ours: list[tuple[set[int], list[int]]] = []
    base: list[tuple[set[int], list[int]]] = []
    buckets: Counter[str] = Counter()
    by_bucket: dict[str, list[bool]] = {}
    groups: dict[str, list[int]] = {}
    wrong: list[str] = []
    correct_lost: list[str] = []
    for k, (case, row) in enumerate(zip(cases, rows, strict=True)):
        claims = _claims_on(case, row)
        hall = [c for c in claims if c["bucket"] == "hallucination"]
        # Any wrong claim may carry it: a hallucination, or noise the judge read as entailed
        # by the other entity's chunk.
        pred = {j for c in claims for j in c.get("misattributed_from") or []}
        hint = {c["closest_chunk"] for c in hall if c.get("closest_chunk") is not None}
        gold = case["misattributed_from"]
        ours.append((pred, gold))
        base.append((hint, gold))
        split = str(case.get("split"))
        for g in ("all", case["lang"], "dev" if split in DEV else split,
                  *(["held"] if split in HELD else [])):
            groups.setdefault(g, []).append(k)
        if gold:
            key = "+".join(sorted({c["bucket"] for c in claims})) or "no claim found"
            buckets[key] += 1
            by_bucket.setdefault(key, []).append(gold[0] in pred)
        if case.get("kind") == "correct" and (not claims or hall):
            correct_lost.append(case["id"])
        if (gold and gold[0] not in pred) or (pred and not gold):
            wrong.append(f"  {case['id']:<28} {split} gold {gold} predicted {sorted(pred)} "
                         f"(buckets: {', '.join(c['bucket'] for c in claims) or 'none'})")
    pos = sum(1 for c in cases if c["misattributed_from"])
    print(f"{len(cases)} cases ({pos} misattributed, {len(cases) - pos} not; "
          f"{len(groups.get('ko', []))} Korean), splits "
          f"{', '.join(sorted({str(c.get('split')) for c in cases}))}, judge {args.judge}\n")
    print(f"{'':<46}{'n':>4}{'TP':>4}{'FP':>4}{'FN':>4}{'precision':>11}{'recall':>8}")
    order = ["all", "en", "ko", "dev", "held",
             *sorted(g for g in groups if g.startswith(("test", "noise")))]
    for name, flags in (("misattributed_from", ours), ("baseline closest_chunk", base)):
        for g in (x for x in order if x in groups):
            tp, fp, fn, p, r = _score([flags[k] for k in groups[g]])
            label = f"{name} ({_GROUP.get(g, g)})"
            print(f"{label:<46}{len(groups[g]):>4}{tp:>4}{fp:>4}{fn:>4}{p:>11.3f}{r:>8.3f}")
    print("\nmisattributed cases by the judge's bucket for the labelled claim:", dict(buckets))
    for bucket, found in sorted(by_bucket.items()):
        print(f"  recall where the judge made it {bucket}: {sum(found)}/{len(found)}")
    n_correct = sum(1 for c in cases if c.get("kind") == "correct")
    if n_correct:
        print(f"correct claims about the right entity kept entailed: "
              f"{n_correct - len(correct_lost)}/{n_correct}"
              + (f" (lost: {', '.join(correct_lost)})" if correct_lost else ""))
    if wrong:
        print("\nmisses and false alarms:")
        print("\n".join(wrong))

if __name__ == "__main__":
    main()
