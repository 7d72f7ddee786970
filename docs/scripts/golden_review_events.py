"""Stand in for the person reviewing a golden set: write the events ``noisegauge review GOLDEN``
would append, so the docs' walk-through can export and stress a reviewed set unattended.

The decisions are the ones the tutorial describes for ``examples/lumora-kb``: a row the
documents do not answer (no reference, no chunk holding it) is rejected; in a row with a
conflict, each conflicting chunk is kept as a trap (it is the archived, older value); every
other row is accepted as drafted. Each event goes through the page's own checks
(``GoldenState.check_event``) before it is appended, as a click would.

    python docs/scripts/golden_review_events.py golden.jsonl --labels review.jsonl
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from noisegauge.people.golden import acceptable, fold_golden, pool, read_golden
from noisegauge.people.golden_page import GoldenState
from noisegauge.people.labels import LabelFile


def review(golden: Path, labels: Path) -> dict[str, int]:
    """Append the events; returns how many rows were accepted, settled and rejected."""
    state = GoldenState(read_golden(golden), LabelFile(labels))
    counts = {"accepted": 0, "settled": 0, "rejected": 0}

    def post(row: dict[str, Any], kind: str, **fields: Any) -> None:
        event = state.check_event({"kind": kind, "id": row["id"],
                                   "digest": state.digests[row["id"]], **fields})
        state.labels.append(event)

    for row in state.rows:
        ids = [item["id"] for item in pool(row)]
        for chunk in row.get("conflicts") or []:
            if chunk in ids:
                post(row, "role", item=ids.index(chunk), role="distractor")
                counts["settled"] += 1
        events, _ = state.labels.read()
        now = fold_golden(events).get(row["id"], {}).get(state.digests[row["id"]])
        if acceptable(row, now) is None:
            post(row, "verdict", verdict="accept")
            counts["accepted"] += 1
        else:
            post(row, "verdict", verdict="reject")
            counts["rejected"] += 1
    return counts


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("golden", type=Path)
    parser.add_argument("--labels", type=Path, required=True, help="the events file")
    args = parser.parse_args()
    counts = review(args.golden, args.labels)
    print(f"{counts['accepted']} accepted ({counts['settled']} conflicting chunk(s) kept as "
          f"traps), {counts['rejected']} rejected; events in {args.labels}")


if __name__ == "__main__":
    main()
