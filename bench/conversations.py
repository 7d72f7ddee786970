"""Conversational cases: claims made standalone with the history, beside the last turn alone.

    python bench/conversations.py tests/data/conversations/heldout.jsonl

Each case (written for this project, see tests/data/README.md) is scored twice with the
offline judge: with its ``history`` (the conversation before the question) and with the last
turn only (the same sample without history, what a single-turn tool sees). Printed per case:
each response claim and its bucket; then, over all cases,

* the share of response claims that name the history's entity (the case's ``entity``: the
  plan, region or product the earlier turns name);
* the claims counted as noise (relevant or irrelevant) in cases whose answer is no noise
  (``noise_ok`` false: a pronoun that a chunk about another entity seems to support, or a
  detail carried over from another plan, which is a hallucination about the entity asked
  about, not noise).
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from noisegauge import Sample, evaluate, get_judge
from noisegauge.samples import Turn

NOISE = ("relevant_noise", "irrelevant_noise")


def load_cases(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def case_sample(case: dict[str, Any], *, with_history: bool = True) -> Sample:
    history = tuple(Turn(t["role"], t["content"]) for t in case["history"]) if with_history else ()
    return Sample(user_input=case["user_input"], response=case["response"],
                  reference=case["reference"], retrieved_contexts=case["retrieved_contexts"],
                  id=case["id"], history=history)


def measure(cases: Sequence[dict[str, Any]], *, with_history: bool) -> dict[str, Any]:
    """Claims, buckets and the two figures for ``cases``, with or without their history."""
    report = evaluate([case_sample(c, with_history=with_history) for c in cases],
                      judge=get_judge("lexical"))
    per_case: list[dict[str, Any]] = []
    named = total = leaks = 0
    for case, row in zip(cases, report.rows(), strict=True):
        claims = [(c["text"], c["bucket"]) for c in row.get("response_claims") or []]
        entity = case["entity"].lower()
        named += sum(entity in text.lower() for text, _ in claims)
        total += len(claims)
        if not case["noise_ok"]:
            leaks += sum(bucket in NOISE for _, bucket in claims)
        per_case.append({"id": case["id"], "claims": claims,
                         "reference_claims": [c["text"] for c in row.get("reference_claims") or []]})
    return {"cases": per_case, "claims": total, "entity_share": named / total if total else None,
            "noise_leaks": leaks}


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("cases", type=Path)
    args = parser.parse_args(argv)
    cases = load_cases(args.cases)
    chat, last = measure(cases, with_history=True), measure(cases, with_history=False)
    for a, b in zip(chat["cases"], last["cases"], strict=True):
        print(a["id"])
        for text, bucket in b["claims"]:
            print(f"  last turn only  [{bucket}] {text}")
        for text, bucket in a["claims"]:
            print(f"  with history    [{bucket}] {text}")
    print(f"\n{len(cases)} cases ({args.cases.name})")
    print(f"{'':24}{'last turn only':>16}{'with history':>16}")
    print(f"{'claims':24}{last['claims']:>16}{chat['claims']:>16}")
    print(f"{'entity named':24}{last['entity_share']:>16.0%}{chat['entity_share']:>16.0%}")
    print(f"{'counted as noise':24}{last['noise_leaks']:>16}{chat['noise_leaks']:>16}")


if __name__ == "__main__":
    main()
