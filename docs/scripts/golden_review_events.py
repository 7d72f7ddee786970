"""Stand in for the person reviewing a golden set: write the events ``noisegauge review GOLDEN``
would append, so the docs' walk-through exports and stresses a reviewed set unattended.

The stand-in knows the right answers: ``--answers`` is a golden file whose rows give the
reference for each question (``examples/golden_support.jsonl`` for ``examples/lumora-kb``).
For each drafted row it does what a person with that knowledge does on the page:

- a question it has no answer for, or whose answer no chunk of the row states: reject (⇧R);
- otherwise mark the chunks that state the answer as holding it (1) and every other chunk
  drafted as holding it as a trap (2), which also settles a conflict; type the right
  reference when the draft's differs (Enter); accept (⇧A).

Each event goes through the page's own checks (``GoldenState.check_event``) before it is
appended, as a key press would.

    python docs/scripts/golden_review_events.py golden.jsonl --answers examples/golden_support.jsonl --labels review.jsonl
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

from noisegauge.people.golden import pool, question_text, read_golden
from noisegauge.people.golden_page import GoldenState
from noisegauge.people.labels import LabelFile


def _norm(text: str) -> str:
    return " ".join(text.casefold().split())


def answers(path: Path) -> dict[str, str]:
    """question -> reference, from a golden file's rows."""
    rows = [json.loads(x) for x in path.read_text(encoding="utf-8").splitlines() if x.strip()]
    return {_norm(r["user_input"]): r["reference"] for r in rows if r.get("reference")}


def review(golden: Path, known: dict[str, str], labels: Path) -> dict[str, int]:
    """Append the events; returns how many rows were accepted, edited, fixed and rejected."""
    state = GoldenState(read_golden(golden), LabelFile(labels))
    counts = {"accepted": 0, "edited": 0, "chunks_fixed": 0, "rejected": 0}

    def post(row: dict[str, Any], kind: str, **fields: Any) -> None:
        state.labels.append(state.check_event({"kind": kind, "id": row["id"],
                                               "digest": state.digests[row["id"]], **fields}))

    for row in state.rows:
        reference = known.get(_norm(question_text(row)))
        items = pool(row)
        holding = [j for j, it in enumerate(items)
                   if reference and _norm(reference) in _norm(it["text"])]
        if not holding:
            post(row, "verdict", verdict="reject")
            counts["rejected"] += 1
            continue
        assert reference is not None
        for j, it in enumerate(items):
            role = "answer" if j in holding else "distractor"
            if role != it["drafted"] and (role == "answer" or it["drafted"] == "answer"):
                post(row, "role", item=j, role=role)
                counts["chunks_fixed"] += 1
            elif it["id"] in (row.get("conflicts") or []):
                post(row, "role", item=j, role=role)  # a conflict is settled by a person
        if _norm(row.get("reference") or "") != _norm(reference):
            post(row, "edit", reference=reference)
            counts["edited"] += 1
        post(row, "verdict", verdict="accept")
        counts["accepted"] += 1
    return counts


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("golden", type=Path)
    parser.add_argument("--answers", type=Path, required=True,
                        help="a golden file with the right reference for each question")
    parser.add_argument("--labels", type=Path, required=True, help="the events file")
    args = parser.parse_args()
    c = review(args.golden, answers(args.answers), args.labels)
    print(f"{c['accepted']} accepted ({c['edited']} reference(s) rewritten, "
          f"{c['chunks_fixed']} chunk role(s) changed), {c['rejected']} rejected; "
          f"events in {args.labels}")


if __name__ == "__main__":
    main()
