"""What another top-k would have kept, from the verdicts already held (no judge call).

For k = 1 … the most chunks any sample retrieved, keeping only each sample's first k chunks:

- claim recall@k: mean over samples of the share of reference claims a kept chunk entails;
- context precision@k: mean over samples of the share of kept chunks that are relevant;
- irrelevant kept: share of all irrelevant chunks that rank within k;
- leaks dropped: share of leaked claims whose every leaking chunk ranks below k.

A sample with fewer than k chunks keeps them all. The figures assume each answer would
stay as it is; it would not (a model answers from what it is given), which is what
``noisegauge stress`` measures.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from .claims import ints, leak_kind

__all__ = ["CAVEAT", "STRESS_COMMAND", "TopK", "TopKRow"]

#: The command that checks the what-if by changing what the model is given.
STRESS_COMMAND = ("noisegauge stress golden.jsonl --pipeline extractive --levels 0,1,2,4 "
                  "--out stress/")
CAVEAT = ("These figures keep every answer as it is and only drop chunks, so they bound what "
          "a smaller top-k could do: with fewer chunks the model would write another answer, "
          "and how it changes with the context is what `noisegauge stress` measures: "
          + STRESS_COMMAND)


@dataclass(frozen=True)
class TopKRow:
    k: int
    claim_recall: float | None
    context_precision: float | None
    irrelevant_kept: float | None
    leaks_dropped: float | None

    def to_json(self) -> dict[str, Any]:
        return {"k": self.k, "claim_recall": self.claim_recall,
                "context_precision": self.context_precision,
                "irrelevant_kept": self.irrelevant_kept, "leaks_dropped": self.leaks_dropped}


class _Mean:
    """Per-k sums of a per-sample value; a sample with n chunks holds its value at n for
    every larger k (``tail``), so nothing depends on the largest n being known early."""

    def __init__(self) -> None:
        self.sums: list[float] = []
        self.counts: list[int] = []
        self.tail_sums: list[float] = []
        self.tail_counts: list[int] = []

    def add(self, values: list[float], empty: float = 0.0) -> None:
        """A sample's values at k = 1 … n; ``empty``: its value when it has no chunk."""
        n = len(values)
        for acc in (self.sums, self.counts, self.tail_sums, self.tail_counts):
            acc.extend([0] * (n + 1 - len(acc)))
        for k, v in enumerate(values):
            self.sums[k] += v
            self.counts[k] += 1
        self.tail_sums[n] += values[-1] if values else empty
        self.tail_counts[n] += 1

    def at(self, k: int) -> float | None:
        """The mean at ``k`` (1-based)."""
        s = self.sums[k - 1] if k - 1 < len(self.sums) else 0.0
        c = self.counts[k - 1] if k - 1 < len(self.counts) else 0
        for n in range(min(k, len(self.tail_sums))):  # samples with fewer than k chunks
            s += self.tail_sums[n]
            c += self.tail_counts[n]
        return s / c if c else None


def _hist(h: list[int], i: int) -> None:
    h.extend([0] * (i + 1 - len(h)))
    h[i] += 1


class TopK:
    """Feed result rows (``add``); ``table()`` gives one row per k."""

    def __init__(self) -> None:
        self.recall = _Mean()
        self.precision = _Mean()
        self.irrelevant: list[int] = []  # irrelevant chunks by rank
        self.leaks: list[int] = []  # leaked claims by the best rank among their leaking chunks
        self.largest = 0

    def add(self, row: Mapping[str, Any]) -> None:
        chunks = [c for c in row.get("chunks") or [] if isinstance(c, Mapping)]
        n = len(chunks)
        if row.get("status") == "error":
            return
        self.largest = max(self.largest, n)
        rel = [bool(c.get("relevant")) for c in chunks]
        firsts = [min(e) for e in (ints(c.get("entailed_by")) for c in
                                   row.get("reference_claims") or [] if isinstance(c, Mapping))
                  if e]
        g = sum(1 for c in row.get("reference_claims") or [] if isinstance(c, Mapping))
        if g:
            self.recall.add([sum(1 for m in firsts if m < k) / g for k in range(1, n + 1)])
        metrics = row.get("metrics") or {}
        if metrics.get("context_precision") is not None:
            self.precision.add([sum(rel[:k]) / k for k in range(1, n + 1)])
        for j, r in enumerate(rel):
            if not r:
                _hist(self.irrelevant, j)
        for claim in row.get("response_claims") or []:
            if isinstance(claim, Mapping):
                kind, idx = leak_kind(claim)
                if kind is not None:
                    _hist(self.leaks, min(idx))

    def table(self) -> tuple[TopKRow, ...]:
        irr, leaks = sum(self.irrelevant), sum(self.leaks)
        out = []
        kept_irr = kept_leaks = 0
        for k in range(1, self.largest + 1):
            kept_irr += self.irrelevant[k - 1] if k - 1 < len(self.irrelevant) else 0
            kept_leaks += self.leaks[k - 1] if k - 1 < len(self.leaks) else 0
            out.append(TopKRow(k, self.recall.at(k), self.precision.at(k),
                               kept_irr / irr if irr else None,
                               (leaks - kept_leaks) / leaks if leaks else None))
        return tuple(out)
