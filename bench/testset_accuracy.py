"""How well ``noisegauge testset --questions`` drafts golden rows, on HaluEval QA.

    python bench/testset_accuracy.py [--data ../shared/data] [--split dev|test] [--limit N]
                                     [--log] [--json OUT]

The corpus: every passage of the 500 HaluEval QA knowledge texts (``qa_one-turn_data.json``;
each text is two Wikipedia passages glued together, cut apart where a sentence runs into the
next without a space), about 1,000 passages of the same kind, many on the same topics. The
questions: the HaluEval questions, a row each, run through the same code as
``noisegauge testset DOCS --questions`` (offline: lexical judge, extractive references).
``--log``: the same questions as a production log instead (``--from-log``), each with the
BM25 top 3 passages as its retrieved chunks and the hallucinated answer as its response.

Split: rows with an even position are ``dev`` (the thresholds were tuned on it), odd ones
``test`` (held out: looked at only to report). Figures, each against HaluEval's right answer
(found in a text after lower-casing and dropping punctuation):

* ``reference_holds_answer``: share of questions whose drafted reference holds it (a
  ``no_answer`` row counts as a miss);
* ``relevant_precision``: share of the chunks marked relevant that hold it;
* ``rows_with_trap``: share of rows with at least one distractor;
* ``traps_holding_answer``: share of distractors that hold it (should be 0);
* ``traps_same_topic``: share of distractors that are look-alike, or from the question's own
  knowledge text, or share a title word with its relevant chunk;
* the baseline: BM25's top passage as the reference (``baseline_holds_answer``,
  ``baseline_precision``).
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import tempfile
from collections import Counter
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))

from noisegauge.testset import Chunk, build_testset  # noqa: E402
from noisegauge.testset.retrieve import Index, terms  # noqa: E402

_GLUED = re.compile(r"(?<=[a-z0-9)\]\"'][.!?])(?=[A-Z])")


def normal(text: str) -> str:
    return " ".join(re.sub(r"[^\w\s]", " ", text.lower()).split())


def holds(answer: str, text: str) -> bool:
    return bool(answer) and f" {normal(answer)} " in f" {normal(text)} "


def load(data: Path) -> tuple[list[dict[str, Any]], list[Chunk], dict[str, int]]:
    rows = [json.loads(line) for line in
            (data / "halueval" / "qa_one-turn_data.json").read_text(encoding="utf-8").splitlines()
            if line.strip()]
    chunks: list[Chunk] = []
    seen: dict[str, str] = {}
    origin: dict[str, int] = {}  # chunk id -> the row whose knowledge holds it
    for k, r in enumerate(rows):
        for passage in _GLUED.split(r["knowledge"]):
            passage = passage.strip()
            if len(passage) < 20:
                continue
            if passage not in seen:
                cid = f"halueval/{len(seen) + 1}"
                seen[passage] = cid
                chunks.append(Chunk(cid, passage))
            origin.setdefault(seen[passage], k)
    return rows, chunks, origin


def measure(split: str, data: Path, limit: int | None, as_log: bool) -> dict[str, Any]:
    rows, chunks, origin = load(data)
    picked = [(k, r) for k, r in enumerate(rows) if (k % 2 == 0) == (split == "dev")]
    if limit:
        picked = picked[:limit]
    index = Index(chunks)
    by_id = {c.id: c for c in chunks}
    with tempfile.TemporaryDirectory() as tmp:
        if as_log:
            path = Path(tmp) / "log.jsonl"
            with path.open("w", encoding="utf-8") as f:
                for k, r in picked:
                    top = [chunks[i] for i, _ in index.search(terms(r["question"]), 3)]
                    f.write(json.dumps({"id": f"h{k}", "user_input": r["question"],
                                        "response": r["hallucinated_answer"],
                                        "retrieved_contexts": [c.text for c in top],
                                        "retrieved_context_ids": [c.id for c in top]}) + "\n")
            golden = build_testset(chunks, log=path)
        else:
            path = Path(tmp) / "questions.jsonl"
            with path.open("w", encoding="utf-8") as f:
                for k, r in picked:
                    f.write(json.dumps({"id": f"h{k}", "user_input": r["question"]}) + "\n")
            golden = build_testset(chunks, questions=path)
    ref_hits = rel_total = rel_hits = trapped = traps = trap_hits = same_topic = 0
    base_hits = base_n = 0
    kinds: Counter[str] = Counter()
    status: Counter[str] = Counter()
    for (k, r), g in zip(picked, golden, strict=True):
        answer = r["right_answer"]
        status[g.status] += 1
        ref_hits += g.reference is not None and holds(answer, g.reference)
        rel_total += len(g.retrieved_contexts)
        rel_hits += sum(holds(answer, c) for c in g.retrieved_contexts)
        trapped += bool(g.distractors)
        own_titles = {w for cid in g.retrieved_context_ids
                      for w in terms(by_id[cid].text.split(" is ")[0]) if cid in by_id}
        for d in g.distractors:
            traps += 1
            kinds[d.kind] += 1
            trap_hits += holds(answer, d.text)
            same_topic += (d.kind != "topical" or origin.get(d.id) == k
                           or bool(own_titles & set(terms(d.text))))
        top = index.search(terms(r["question"]), 1)
        base_n += 1
        base_hits += bool(top) and holds(answer, chunks[top[0][0]].text)
    n = len(picked)
    return {"split": split, "mode": "log" if as_log else "questions", "questions": n,
            "reference_holds_answer": round(ref_hits / n, 3),
            "relevant_precision": round(rel_hits / rel_total, 3) if rel_total else None,
            "rows_with_trap": round(trapped / n, 3),
            "traps_holding_answer": round(trap_hits / traps, 3) if traps else None,
            "traps_same_topic": round(same_topic / traps, 3) if traps else None,
            "trap_kinds": dict(kinds), "status": dict(status),
            "baseline_holds_answer": round(base_hits / base_n, 3),
            "baseline_precision": round(base_hits / base_n, 3)}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", type=Path, default=ROOT.parent / "shared" / "data")
    ap.add_argument("--split", choices=("dev", "test"), default="dev")
    ap.add_argument("--limit", type=int)
    ap.add_argument("--log", action="store_true", help="the questions as a production log")
    ap.add_argument("--json", type=Path, help="also write the figures here")
    a = ap.parse_args()
    if not (a.data / "halueval").is_dir():
        sys.exit(f"no HaluEval data under {a.data} (give --data DIR holding halueval/)")
    figures = measure(a.split, a.data, a.limit, a.log)
    print(json.dumps(figures, indent=1))
    if a.json:
        a.json.write_text(json.dumps(figures, indent=1) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
