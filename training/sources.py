"""Training sources for the lexical judge's combiner, grouped into families.

A *family* is what cross-source means: the bench families (wice, begin, halueval, summedits)
are each measured with a model trained without them. ``nli`` gathers the general NLI sets from
``../shared/data/nli`` whose licences allow a redistributed model (``nli/README.md``); the
flagged ones (rte: no licence; kornli: NC source; summarisation sets whose articles have no
open licence: xsumfaith, gofigure, cogensumm, summedits news/ectsum) are never trained into the
shipped weights. SummEdits news and ectsum are measured by the bench only.
"""

from __future__ import annotations

import csv
import json
import random
from pathlib import Path
from typing import Any

#: source -> family
FAMILY = {
    "wice_doc": "wice", "begin_cmu": "begin", "begin_tc": "begin", "begin_wow": "begin",
    "halueval": "halueval", "summedits_open": "summedits",
    "mnli": "nli", "snli": "nli", "advglue": "nli", "klue_nli": "nli", "dialfact": "nli",
}
#: Bench sets that only measure (WiCE's per-chunk labels describe the whole evidence; the
#: SummEdits news/ectsum documents have no open licence).
EVAL_ONLY = {"wice": "wice", "summedits": "summedits", "halueval_one": "halueval",
             "halueval_multi": "halueval"}
#: Per NLI source, at most this many pairs (class-balanced), so the general sets do not drown
#: the in-domain ones and training stays a few minutes on two cores.
NLI_CAP = 3000


def _cap(items: list[Any], n: int, seed: int) -> list[Any]:
    rng = random.Random(seed)
    pos = [it for it in items if it.label]
    neg = [it for it in items if not it.label]
    rng.shuffle(pos)
    rng.shuffle(neg)
    return pos[: n // 2] + neg[: n // 2]


def load_nli(bench: Any, data: Path) -> dict[str, list[Any]]:
    """General NLI pairs as bench ``Item``s (premise, hypothesis, entailed or not)."""
    item = bench.Item
    nli = data / "nli"
    out: dict[str, list[Any]] = {}
    rows = []
    with open(nli / "mnli" / "mnli_development_set_number_of_correct_responses.txt",
              encoding="utf-8", newline="") as f:
        for r in csv.DictReader(f, delimiter="\t"):
            rows.append(item((r["premise"],), r["hypothesis"], r["gold_label"] == "entailment"))
    out["mnli"] = _cap(rows, NLI_CAP, 1)
    rows = []
    for split in ("dev", "test"):
        s1 = (nli / "snli" / f"s1.{split}").read_text(encoding="utf-8").splitlines()
        s2 = (nli / "snli" / f"s2.{split}").read_text(encoding="utf-8").splitlines()
        lab = (nli / "snli" / f"labels.{split}").read_text(encoding="utf-8").splitlines()
        rows += [item((_detok(p),), _detok(h), y.strip() == "entailment")
                 for p, h, y in zip(s1, s2, lab, strict=False)]
    out["snli"] = _cap(rows, NLI_CAP, 2)
    adv = json.loads((nli / "advglue" / "dev.json").read_text(encoding="utf-8"))
    out["advglue"] = [item((r["premise"],), r["hypothesis"], r["label"] == 0)
                      for task in ("mnli", "mnli-mm") for r in adv[task]]
    klue = json.loads((nli / "klue_nli" / "klue-nli-v1.1_dev.json").read_text(encoding="utf-8"))
    out["klue_nli"] = [item((r["premise"],), r["hypothesis"], r["gold_label"] == "entailment")
                       for r in klue]
    rows = []
    with open(nli / "dialfact" / "testsmall.jsonl", encoding="utf-8") as f:
        for line in f:
            r = json.loads(line)
            ev = " ".join(e[2] for e in r["evidence_list"]) or r.get("evidence_touse", "")
            if ev and r["type_label"] == "factual":
                rows.append(item((ev,), r["response"], r["response_label"] == "SUPPORTS"))
    out["dialfact"] = rows
    return out


def _detok(s: str) -> str:
    """SNLI's tokenised text ("packages .") read as written."""
    for p in (" .", " ,", " !", " ?", " 's", " n't", " '"):
        s = s.replace(p, p.strip() if p != " '" else "'")
    return s.strip()


def load_all(bench: Any, data: Path) -> dict[str, list[Any]]:
    """Every training source and bench-only set, by name (see ``FAMILY``, ``EVAL_ONLY``)."""
    sets = bench.load_sets(data)
    out: dict[str, list[Any]] = {k: sets[k] for k in
                                 ("wice", "wice_doc", "begin_cmu", "begin_tc", "begin_wow",
                                  "halueval_one", "halueval_multi", "summedits")}
    # One- and multi-turn HaluEval share knowledge and right answers: trained on once.
    seen: set[tuple[str, str, bool]] = set()
    halu = []
    for it in sets["halueval_one"] + sets["halueval_multi"]:
        key = (it.premises[0], it.text, it.label)
        if key not in seen:
            seen.add(key)
            halu.append(it)
    out["halueval"] = halu
    out["summedits_open"] = bench.load_summedits(
        data, ("qmsumm", "sales_call", "sales_email", "scitldr"))
    out.update(load_nli(bench, data))
    return out
