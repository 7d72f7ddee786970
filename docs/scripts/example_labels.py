"""Write LABELS for examples/support_bot.jsonl from its author's own annotations.

Each row of the example carries, in ``metadata``, what its author meant every sentence of
the answer to be (``expected_buckets``: grounded, relevant_noise, ...), which chunks state it
(``expected_support``) and which chunks the reference needs (``relevant_chunks``). This
turns them into the labels a person would click on the review page, for the first N samples
of the same seeded random order ``noisegauge review`` uses, so the docs' walk-through can
print corrected numbers without a person at the keyboard.

    python docs/scripts/example_labels.py results.jsonl --out labels.jsonl [--n 20] [--seed 3]

Only rows whose judge found as many claims as the author wrote sentences are labelled.
"""

from __future__ import annotations

import argparse
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from noisegauge.people.app import review_order
from noisegauge.people.design import read_plan
from noisegauge.people.labels import LabelFile, digest_of, sample_key
from noisegauge.report import read_results

WRONG = {"relevant_noise", "irrelevant_noise", "hallucination"}


def author_events(row: Mapping[str, Any], key: str) -> list[dict[str, Any]]:
    """The label events the example's author's annotations of ``row`` amount to."""
    meta = (row.get("input") or {}).get("metadata") or {}
    buckets, support = meta.get("expected_buckets"), meta.get("expected_support")
    relevant = set(meta.get("relevant_chunks") or ())
    claims = row.get("response_claims") or []
    if buckets is None or support is None or len(buckets) != len(claims):
        return []
    d = digest_of(row)
    events: list[dict[str, Any]] = [
        {"kind": "claim", "id": key, "digest": d, "claim": i, "looked": False,
         "label": "wrong" if b in WRONG else "correct", "chunks": sorted(support[i])}
        for i, b in enumerate(buckets)]
    n_chunks = len((row.get("input") or {}).get("retrieved_contexts") or ())
    events += [{"kind": "chunk", "id": key, "digest": d, "chunk": j, "relevant": j in relevant,
                "looked": False} for j in range(n_chunks)]
    return events


def write_labels(rows: Sequence[Mapping[str, Any]], out: Path, n: int, seed: int,
                 skip_first: int = 0, order: Sequence[str] | None = None) -> int:
    """Label the first ``n`` samples of the review order (after ``skip_first``), or of
    ``order`` (a plan's ids); returns how many were labelled."""
    by_key = {sample_key(r, i): r for i, r in enumerate(rows)}
    file = LabelFile(out)
    file.append({"kind": "session", "seed": seed, "n": n})
    done = 0
    keys = list(order)[:n] if order is not None else review_order(rows, seed, n)
    for key in keys[skip_first:]:
        events = author_events(by_key[key], key)
        for event in events:
            file.append(event)
        done += bool(events)
    return done


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("results", type=Path)
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--n", type=int, default=20)
    parser.add_argument("--seed", type=int, default=3)
    parser.add_argument("--plan", type=Path, help="label the samples of this PLAN, in order")
    args = parser.parse_args()
    if args.out.exists():
        parser.error(f"{args.out} exists; LABELS is append-only, choose a new file")
    order = None if args.plan is None else read_plan(args.plan).ids
    done = write_labels(read_results(args.results), args.out, args.n, args.seed, order=order)
    drawn = f"plan {args.plan}" if args.plan else f"seed {args.seed}"
    print(f"labelled {done} of the first {args.n} samples ({drawn}): {args.out}")


if __name__ == "__main__":
    main()
