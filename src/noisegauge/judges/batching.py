"""How an LLM judge packs a premises × claims check into calls (pure planning, no I/O).

Strategies, for P premises and C claims (measured costs: ``bench/llm_cost.py``):

- ``joint``: as many premises and claims per call as a prompt budget allows; the usual
  sample (a reference or response plus a handful of chunks) is one call per matrix.
- ``per_premise``: one call per premise with all its claims (P calls per matrix).
- ``per_claim_group``: one call per premise and group of ``group_size`` claims
  (RAGChecker's joint checking, P·⌈C/k⌉ calls per matrix).

Sizes are estimated tokens (``estimate_tokens``: ceil(chars / 4)); a single premise or
claim bigger than the budget still gets a call of its own (text is never cut).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

__all__ = ["STRATEGIES", "Job", "estimate_tokens", "plan"]

STRATEGIES = ("joint", "per_premise", "per_claim_group")


def estimate_tokens(text: str) -> int:
    """A tokenizer-free estimate: one token per 4 characters, rounded up."""
    return -(-len(text) // 4)


@dataclass(frozen=True)
class Job:
    """One call's share: indexes into the premises and the claims."""

    premises: tuple[int, ...]
    claims: tuple[int, ...]


def _pack(sizes: Sequence[int], budget: int, max_items: int) -> list[tuple[int, ...]]:
    """Consecutive groups whose sizes add up to at most ``budget`` (greedy, in order)."""
    groups: list[tuple[int, ...]] = []
    current: list[int] = []
    used = 0
    for i, size in enumerate(sizes):
        if current and (used + size > budget or len(current) >= max_items):
            groups.append(tuple(current))
            current, used = [], 0
        current.append(i)
        used += size
    if current:
        groups.append(tuple(current))
    return groups


def plan(strategy: str, premise_sizes: Sequence[int], claim_sizes: Sequence[int], *,
         group_size: int = 5, max_prompt_tokens: int = 6000, max_cells: int = 300) -> list[Job]:
    """The calls that cover every (premise, claim) pair exactly once.

    >>> plan("joint", [50, 40, 40], [10, 10])
    [Job(premises=(0, 1, 2), claims=(0, 1))]
    >>> len(plan("per_premise", [50, 40, 40], [10, 10]))
    3
    >>> len(plan("per_claim_group", [50, 40], [10] * 7, group_size=5))
    4
    """
    if strategy not in STRATEGIES:
        raise ValueError(f"unknown strategy {strategy!r}: expected one of {', '.join(STRATEGIES)}")
    if not premise_sizes or not claim_sizes:
        return []
    if strategy == "per_claim_group":
        k = max(1, group_size)
        return [Job((p,), tuple(range(i, min(i + k, len(claim_sizes)))))
                for p in range(len(premise_sizes)) for i in range(0, len(claim_sizes), k)]
    # Claims are shared by every premise of a call, so they get at most half the budget.
    claim_groups = _pack(claim_sizes, max(1, max_prompt_tokens // 2), max(1, max_cells))
    if strategy == "per_premise":
        return [Job((p,), cg) for p in range(len(premise_sizes)) for cg in claim_groups]
    jobs = []
    for cg in claim_groups:
        room = max(1, max_prompt_tokens - sum(claim_sizes[i] for i in cg))
        for pg in _pack(premise_sizes, room, max(1, max_cells // len(cg))):
            jobs.append(Job(pg, cg))
    return jobs
