"""Answer Relevancy on tests/data/answer_relevancy.jsonl: does a relevant answer score above an
off-topic one to the same question?

168 question/answer pairs: each question has a relevant, a partly relevant, an evasive and an
off-topic answer. Split ``test1`` (16 English, 10 Korean questions) is where the method was
developed (the question-stripping fix and the choice of ``minilm+hashing`` as the default were
made on it); ``test2`` (8 English, 8 Korean questions, other domains) was written after that
and run once: read its figures as held out. Prints, per split, embedder and question writer:

- matched: share of questions whose relevant answer scores above its off-topic answer
  (the >= 95% target), by language;
- cross: the same over every (relevant, off-topic) pair of a language (an AUC);
- the ordering of the other kinds, the mean value per kind, and how often an evasive
  answer is caught as non-committal (value 0).

Question writers: ``rules`` (the offline judges' templates over the lexical judge's claims:
what ``AnswerRelevancy()`` does by default) and ``response`` (a baseline with no question
writing: the response itself is embedded as if it were the question).

Run: ``python bench/answer_relevancy.py [--embedders hashing,minilm]``
"""

from __future__ import annotations

import argparse
import asyncio
import itertools
import json
import time
from collections import defaultdict
from pathlib import Path
from typing import Any

from noisegauge import AnswerRelevancy, evaluate
from noisegauge.embeddings import cosine, get_embedder

DATA = Path(__file__).resolve().parents[1] / "tests" / "data" / "answer_relevancy.jsonl"


def load() -> list[dict[str, Any]]:
    return [json.loads(line) for line in DATA.read_text(encoding="utf-8").splitlines() if line.strip()]


def score_rules(rows: list[dict[str, Any]], embedder: str) -> list[float | None]:
    # AR needs no reference or chunks; the Sample contract asks for a reference, so the
    # response stands in (it does not enter the AR computation).
    data = [{"id": r["id"], "user_input": r["user_input"], "response": r["response"],
             "reference": r["response"], "retrieved_contexts": []} for r in rows]
    metric = AnswerRelevancy(embeddings=embedder)
    report = evaluate(data, [metric], cache=False, progress=False)
    return [res.value("answer_relevancy") for res in report.results]


def score_response(rows: list[dict[str, Any]], embedder: str) -> list[float | None]:
    emb = get_embedder(embedder)
    texts = [t for r in rows for t in (r["user_input"], r["response"])]
    vecs = asyncio.run(emb.embed(texts))
    return [max(0.0, cosine(vecs[2 * i], vecs[2 * i + 1])) for i in range(len(rows))]


def _above(a: float | None, b: float | None) -> bool:
    return a is not None and b is not None and a > b


def report(rows: list[dict[str, Any]], values: list[float | None], label: str) -> None:
    by: dict[tuple[str, str], dict[str, float | None]] = defaultdict(dict)
    for r, v in zip(rows, values, strict=True):
        by[(r["lang"], r["group"])][r["kind"]] = v
    print(f"\n== {label}")
    for lang in ("en", "ko", "all"):
        groups = [g for (lg, _), g in by.items() if lang in ("all", lg)]
        n = len(groups)
        matched = sum(_above(g["relevant"], g["off_topic"]) for g in groups)
        rel = [g["relevant"] for g in groups]
        off = [g["off_topic"] for g in groups]
        cross = [_above(a, b) for a, b in itertools.product(rel, off)]
        order = {f"{x}>{y}": sum(_above(g[x], g[y]) for g in groups)
                 for x, y in (("relevant", "partial"), ("partial", "off_topic"),
                              ("relevant", "evasive"))}
        print(f"{lang:>3}: relevant > off-topic {matched}/{n} = {matched / n:.1%} matched, "
              f"{sum(cross) / len(cross):.1%} of {len(cross)} cross pairs; "
              + ", ".join(f"{k} {v}/{n}" for k, v in order.items()))
    for kind in ("relevant", "partial", "evasive", "off_topic"):
        vals = [g[kind] for g in by.values()]
        defined = [v for v in vals if v is not None]
        zero = sum(1 for v in defined if v == 0.0)
        print(f"     {kind:>9}: mean {sum(defined) / len(defined):.3f} (n={len(defined)}, "
              f"undefined {len(vals) - len(defined)}, exactly 0: {zero})")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--embedders", default="minilm+hashing,minilm,hashing")
    parser.add_argument("--splits", default="test2,test1")
    args = parser.parse_args()
    for split in args.splits.split(","):
        rows = [r for r in load() if r["split"] == split]
        print(f"\n##### {split}: {len(rows)} pairs, {len(rows) // 4} questions "
              f"({sum(r['lang'] == 'en' for r in rows) // 4} en, "
              f"{sum(r['lang'] == 'ko' for r in rows) // 4} ko)")
        for embedder in args.embedders.split(","):
            start = time.perf_counter()
            values = score_rules(rows, embedder)
            took = time.perf_counter() - start
            report(rows, values, f"{split}: questions by rules (lexical judge), embedder "
                                 f"{embedder} ({took:.1f} s, including model load)")
            report(rows, score_response(rows, embedder),
                   f"{split}: baseline, the response embedded as is, embedder {embedder}")


if __name__ == "__main__":
    main()
