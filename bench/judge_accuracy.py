"""Accuracy of a judge against human (or constructed) labels, and its speed.

    python bench/judge_accuracy.py [--judge lexical] [--data ../shared/data] [--limit N]
                                   [--cross-source DIR]

``--cross-source DIR`` measures each set with the lexical weights trained without that set's
family (``DIR/weights_without_<family>.json``, written by ``training/train_lexical.py
--cross-out DIR``): the held-out figures the README reports. Without it, the shipped weights
are measured, which were trained on the open sources of these families (in-sample there).
Speed is CPU time of this process (the machine may be shared).

Sets (in <data>): WiCE oracle chunks (claim supported iff some chunk entails it; labels
supported vs partially/not; ``wice_doc``: the same chunks joined into one premise), BEGIN dev per source (Fully vs Not fully attributable; Generic
left out), HaluEval QA (knowledge as premise; the right answer should be entailed, the
hallucinated one not). As in the tool, texts go through ``judge.extract(text, question)``
(HaluEval passes the question, so a bare answer becomes a checkable claim) and a text counts
as entailed when every claim is entailed by at least one premise; ``--protocol whole``
checks each text as one claim instead. Thresholds are the judge's own (fixed in advance).
"""

from __future__ import annotations

import argparse
import asyncio
import csv
import json
import re
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
DEFAULT_DATA = ROOT.parent / "shared" / "data"


@dataclass(frozen=True)
class Item:
    premises: tuple[str, ...]
    text: str                  # the claim, or the answer to extract claims from
    label: bool                # entailed / supported / attributable / right answer
    question: str | None = None  # set: claims come from judge.extract(text, question)


def load_wice(data: Path) -> list[Item]:
    items = []
    with open(data / "wice" / "oracle_chunks_dev.jsonl", encoding="utf-8") as f:
        for line in f:
            r = json.loads(line)
            items.append(Item(tuple(r["evidence"]), r["claim"], r["label"] == "supported"))
    return items


def load_begin(data: Path, source: str) -> list[Item]:
    items = []
    csv.field_size_limit(10**7)
    with open(data / "begin" / f"begin_dev_{source}.tsv", encoding="utf-8", newline="") as f:
        for r in csv.DictReader(f, delimiter="\t"):
            label = (r.get("begin_label") or "").strip()
            if label not in ("Fully attributable", "Not fully attributable"):
                continue  # Generic responses are left out, as in BEGIN's binary setting
            items.append(Item((r["knowledge"],), r["response"], label == "Fully attributable"))
    return items


def load_halueval(data: Path, name: str) -> list[Item]:
    items = []
    with open(data / "halueval" / f"qa_{name}_data.json", encoding="utf-8") as f:
        for line in f:
            r = json.loads(line)
            for key, label in (("right_answer", True), ("hallucinated_answer", False)):
                items.append(Item((r["knowledge"],), r[key], label, question=r["question"]))
    return items


#: SummEdits domains (Laban et al. 2023; labels Apache-2.0). The news and ectsum source texts
#: have no open licence of their own: measured here, never trained into shipped weights.
SUMMEDITS_DOMAINS = ("news", "ectsum", "qmsumm", "sales_call", "sales_email", "scitldr")


def load_summedits(data: Path, domains: tuple[str, ...] = SUMMEDITS_DOMAINS) -> list[Item]:
    """Document vs edited summary (consistent = 1), every split, as one premise each."""
    items = []
    for domain in domains:
        path = data / "nli" / "summedits" / f"summedits_{domain}.json"
        for r in json.loads(path.read_text(encoding="utf-8")):
            items.append(Item((r["doc"],), r["summary"], int(r["label"]) == 1))
    return items


def load_sets(data: Path) -> dict[str, list[Item]]:
    wice = load_wice(data)
    return {
        "wice": wice,
        # The same claims against their evidence as one document (premise = chunks joined).
        "wice_doc": [Item((" ".join(it.premises),), it.text, it.label) for it in wice],
        "begin_cmu": load_begin(data, "cmu"),
        "begin_tc": load_begin(data, "tc"),
        "begin_wow": load_begin(data, "wow"),
        "halueval_one": load_halueval(data, "one-turn"),
        "halueval_multi": load_halueval(data, "multi-turn"),
        "summedits": load_summedits(data),
    }


#: How texts become claims: "extract" (the tool's pipeline: judge.extract(text, question), the
#: text is entailed when each claim is entailed by some premise) or "whole" (one claim).
PROTOCOL = {"value": "extract"}


async def claims_of(judge: Any, item: Item) -> list[str]:
    if PROTOCOL["value"] == "whole":
        return [item.text]
    return list(await judge.extract(item.text, item.question)) or [item.text]


def binary_scores(gold: list[bool], pred: list[bool]) -> dict[str, float]:
    tp = sum(g and p for g, p in zip(gold, pred, strict=True))
    tn = sum((not g) and (not p) for g, p in zip(gold, pred, strict=True))
    pos = sum(gold)
    neg = len(gold) - pos
    n_pred = sum(pred)
    tpr = tp / pos if pos else float("nan")
    tnr = tn / neg if neg else float("nan")
    return {"bal_acc": (tpr + tnr) / 2, "precision": tp / n_pred if n_pred else float("nan"),
            "recall": tpr, "n": float(len(gold))}


async def evaluate(judge: Any, items: list[Item]) -> tuple[dict[str, float], int, float]:
    """Scores, number of (premise, claim) pairs checked and seconds spent checking."""
    from noisegauge.verdicts import Verdict

    gold, pred = [], []
    pairs, seconds = 0, 0.0
    for item in items:
        claims = await claims_of(judge, item)
        t0 = time.process_time()
        matrix = await judge.check_many(list(item.premises), claims)
        seconds += time.process_time() - t0
        pairs += len(item.premises) * len(claims)
        ok = all(any(row[c] is Verdict.ENTAILED for row in matrix) for c in range(len(claims)))
        gold.append(item.label)
        pred.append(ok)
    return binary_scores(gold, pred), pairs, seconds


_WORD = re.compile(r"\w+")
_BASE_STOP = frozenset(["a", "an", "the", "and", "or", "of", "to", "in", "on", "at", "by", "for", "with", "from", "as", "is", "are", "was", "were", "be", "been", "it", "its", "this", "that", "these", "those", "he", "she", "they", "his", "her", "their", "which", "who"])


def overlap_scores(items: list[Item]) -> tuple[list[float], list[bool]]:
    """The trivial rule's score per item: max over chunks of the share of the text's words
    found in the chunk."""
    scores, gold = [], []
    for it in items:
        words = {w for w in _WORD.findall(it.text.lower()) if w not in _BASE_STOP}
        best = 0.0
        for p in it.premises:
            pw = set(_WORD.findall(p.lower()))
            best = max(best, len(words & pw) / len(words) if words else 1.0)
        scores.append(best)
        gold.append(it.label)
    return scores, gold


def tune_threshold(scores: list[float], gold: list[bool]) -> tuple[float, float]:
    """(best balanced accuracy, its threshold) over every cut of ``scores``."""
    best_acc, best_t = 0.0, 0.0
    for t in sorted(set(scores)):
        acc = binary_scores(gold, [s >= t for s in scores])["bal_acc"]
        if acc > best_acc:
            best_acc, best_t = acc, t
    return best_acc, best_t


def overlap_baseline(items: list[Item]) -> tuple[float, float]:
    """The trivial reference with the threshold tuned on this very set (an upper bound for
    that rule). Returns (balanced accuracy, tuned threshold)."""
    return tune_threshold(*overlap_scores(items))


def overlap_baseline_cross(sets: dict[str, list[Item]]) -> dict[str, tuple[float, float]]:
    """The trivial rule held out like the judge: each set's threshold is tuned on the pooled
    items of every *other* family, then applied to the set. Returns {set: (bal_acc, thr)}."""
    scored = {name: overlap_scores(items) for name, items in sets.items()}
    out = {}
    for name in sets:
        family = name.split("_")[0]
        pool_s = [x for n, (s, _) in scored.items() if n.split("_")[0] != family for x in s]
        pool_g = [x for n, (_, g) in scored.items() if n.split("_")[0] != family for x in g]
        _, thr = tune_threshold(pool_s, pool_g)
        s, g = scored[name]
        out[name] = (binary_scores(g, [x >= thr for x in s])["bal_acc"], thr)
    return out


def example_agreement(judge: Any, path: Path = ROOT / "examples" / "support_bot.jsonl") -> tuple[int, int]:
    """Response sentences whose evidence bucket matches ``metadata.expected_buckets``."""
    from noisegauge import Sample, score_sample

    agree = total = 0
    with open(path, encoding="utf-8") as f:
        for row, line in enumerate(f):
            rec = json.loads(line)
            res = score_sample(Sample.from_record(rec, row), judge)
            got = [c.bucket for c in res.evidence.response_claims] if res.evidence else []
            expected = rec["metadata"]["expected_buckets"]
            agree += sum(a == b for a, b in zip(expected, got, strict=False))
            total += len(expected)
    return agree, total


def iter_rows(results: dict[str, tuple[dict[str, float], int, float]],
              baseline: dict[str, tuple[float, float]] | None = None,
              cross: dict[str, tuple[float, float]] | None = None) -> Iterator[str]:
    head = f"{'set':<16}{'n':>6}{'bal_acc':>9}{'P(ent)':>8}{'R(ent)':>8}{'pairs/s':>10}"
    yield (head + (f"{'baseline':>10}{'(thr)':>7}" if baseline else "")
           + (f"{'base-x':>8}{'(thr)':>7}" if cross else ""))
    for name, (s, pairs, sec) in results.items():
        rate = pairs / sec if sec else float("inf")
        row = (f"{name:<16}{int(s['n']):>6}{s['bal_acc']:>9.3f}{s['precision']:>8.3f}"
               f"{s['recall']:>8.3f}{rate:>10.0f}")
        if baseline and name in baseline:
            acc, thr = baseline[name]
            row += f"{acc:>10.3f}{thr:>7.2f}"
        if cross and name in cross:
            acc, thr = cross[name]
            row += f"{acc:>8.3f}{thr:>7.2f}"
        yield row


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--judge", default="lexical")
    ap.add_argument("--data", type=Path, default=DEFAULT_DATA)
    ap.add_argument("--limit", type=int, default=0, help="first N items of each set (0: all)")
    ap.add_argument("--sets", default="", help="comma-separated subset of set names")
    ap.add_argument("--protocol", choices=["extract", "whole"], default="extract")
    ap.add_argument("--no-examples", action="store_true", help="skip the example bucket row")
    ap.add_argument("--cross-source", type=Path, metavar="DIR",
                    help="lexical weights trained without each set's family, from DIR")
    args = ap.parse_args(argv)
    PROTOCOL["value"] = args.protocol
    from noisegauge.judges.base import judge_identity
    from noisegauge.judges.registry import get_judge

    judge = get_judge(args.judge)
    sets = load_sets(args.data)
    if args.sets:
        sets = {k: v for k, v in sets.items() if k in args.sets.split(",")}
    results = {}
    for name, items in sets.items():
        items = items[: args.limit] if args.limit else items
        held_out = judge
        if args.cross_source:
            family = name.split("_")[0]
            held_out = get_judge(f"lexical:{args.cross_source / f'weights_without_{family}.json'}")
        results[name] = asyncio.run(evaluate(held_out, items))
    limited = {name: items[: args.limit] if args.limit else items for name, items in sets.items()}
    baseline = {name: overlap_baseline(items) for name, items in limited.items()}
    cross = overlap_baseline_cross(limited) if len({n.split("_")[0] for n in limited}) > 1 else None
    print(f"judge: {json.dumps(judge_identity(judge))}"
          + (f" (each set: weights trained without its family, {args.cross_source})"
             if args.cross_source else ""))
    print("baseline: max over chunks of word coverage, threshold tuned on each set (oracle); "
          "base-x: the same rule, threshold tuned on the other families (held out like the judge)")
    for row in iter_rows(results, baseline, cross):
        print(row)
    if not args.no_examples:
        agree, total = example_agreement(judge)
        print(f"examples/support_bot.jsonl buckets agreeing with expected_buckets: {agree}/{total}")
    total_pairs = sum(p for _, p, _ in results.values())
    total_sec = sum(s for *_, s in results.values())
    print(f"all pairs: {total_pairs} in {total_sec:.2f}s = {total_pairs / total_sec:.0f} pairs/s "
          "(one process, premise analysis cached per distinct text)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
