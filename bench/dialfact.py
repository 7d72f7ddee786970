"""DialFact: the offline judge's agreement with people on dialogue responses, with the
conversation before the response and with the last turn only (a development figure).

    python bench/dialfact.py [--data ../shared/data]

DialFact (Gupta et al., 2022; ``salesforce/DialFact``, BSD-3-Clause; the small sample its
metrics script ships, ``nli/dialfact/testsmall.jsonl``, 300 responses) gives, per response,
the dialogue turns before it, Wikipedia evidence and a human label: SUPPORTS, REFUTES or
NOT ENOUGH INFO. Nothing is fitted to it: the judge runs as shipped.

Each response is split into claims by the judge, once with the turns before it
(``extract_in_conversation``: the last context turn is the question, the earlier ones the
history, alternating user and assistant back from it) and once with the last turn only
(``extract`` with that turn as the question, what a single-turn tool sees). Each claim is
checked against every evidence snippet (``evidence_touse`` split at " # "); a claim is
supported when a snippet entails it. As in ``bench/judge_accuracy.py``, a response the
judge finds no claim in is checked whole. Printed, for all responses and the factual ones:

* balanced accuracy of "every claim supported" against SUPPORTS (REFUTES and NOT ENOUGH
  INFO are both "not supported");
* Spearman's rho between the share of supported claims (faithfulness) and the label
  (SUPPORTS 1, else 0), over responses.
"""

from __future__ import annotations

import argparse
import asyncio
import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from scipy.stats import spearmanr

from noisegauge.judges.lexical import LexicalJudge
from noisegauge.samples import Turn
from noisegauge.verdicts import Verdict

ROOT = Path(__file__).resolve().parents[1]
DEFAULT_DATA = ROOT.parent / "shared" / "data"


def load(data: Path) -> list[dict[str, Any]]:
    path = data / "nli" / "dialfact" / "testsmall.jsonl"
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line]


def turns_of(context: Sequence[str]) -> tuple[str, tuple[Turn, ...]]:
    """The last context turn (the question the response answers) and the turns before it,
    roles alternating back from the user's last turn."""
    *earlier, last = [" ".join(t.split()) for t in context] or [""]
    n = len(earlier)
    history = tuple(Turn("user" if (n - k) % 2 == 0 else "assistant", text)
                    for k, text in enumerate(earlier))
    return last, history


def snippets(row: dict[str, Any]) -> list[str]:
    return [s.strip() for s in str(row.get("evidence_touse") or "").split(" # ") if s.strip()]


def claims_of(judge: LexicalJudge, row: dict[str, Any], *, with_history: bool) -> list[str]:
    question, history = turns_of(row["context"])
    response = row["response"]
    if with_history:
        return asyncio.run(judge.extract_in_conversation(response, question, history))
    return asyncio.run(judge.extract(response, question))


def faithfulness(judge: LexicalJudge, row: dict[str, Any], *, with_history: bool) -> float:
    claims = claims_of(judge, row, with_history=with_history) or [row["response"]]
    premises = snippets(row)
    supported = [any(v is Verdict.ENTAILED for v in col)
                 for col in zip(*(judge.verdicts(p, claims) for p in premises), strict=True)] \
        if premises else [False] * len(claims)
    return sum(supported) / len(claims)


def agreement(gold: list[bool], faith: list[float]) -> dict[str, float]:
    pred = [f >= 1.0 for f in faith]
    pos = sum(gold)
    tpr = sum(g and p for g, p in zip(gold, pred, strict=True)) / pos
    tnr = sum(not g and not p for g, p in zip(gold, pred, strict=True)) / (len(gold) - pos)
    rho = spearmanr(faith, [float(g) for g in gold]).statistic
    return {"n": len(gold), "bal_acc": (tpr + tnr) / 2, "spearman": float(rho)}


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA)
    args = parser.parse_args(argv)
    rows = load(args.data)
    judge = LexicalJudge()
    gold = [r["response_label"] == "SUPPORTS" for r in rows]
    factual = [r["type_label"] == "factual" for r in rows]
    chat = [faithfulness(judge, r, with_history=True) for r in rows]
    last = [faithfulness(judge, r, with_history=False) for r in rows]
    changed = sum(a != b for a, b in zip(chat, last, strict=True))
    claims = sum(claims_of(judge, r, with_history=True) != claims_of(judge, r, with_history=False)
                 for r in rows)
    print(f"DialFact testsmall: {len(rows)} responses ({sum(gold)} SUPPORTS), "
          f"{sum(factual)} factual; lexical judge {judge.identity()['version']}")
    print(f"responses whose claims the history changed: {claims}; "
          f"whose faithfulness it changed: {changed}")
    print(f"{'':28}{'n':>5}{'bal. acc.':>11}{'Spearman':>10}")
    for name, keep in (("all", [True] * len(rows)), ("factual", factual)):
        g = [x for x, k in zip(gold, keep, strict=True) if k]
        for label, faith in (("last turn only", last), ("with history", chat)):
            f = [x for x, k in zip(faith, keep, strict=True) if k]
            s = agreement(g, f)
            print(f"{name + ', ' + label:28}{s['n']:>5}{s['bal_acc']:>11.3f}{s['spearman']:>10.3f}")


if __name__ == "__main__":
    main()
