"""How an LLM judge packs a premises × claims check into calls (pure planning, no I/O).

Strategies, for P premises and C claims (measured costs: ``bench/llm_cost.py``):

- ``joint``: as many premises and claims per call as a prompt budget allows; a usual
  sample (reference, response and a handful of chunks) is one call for both matrices.
- ``per_premise``: one call per premise with all its claims (P calls).
- ``per_claim_group``: one call per premise and group of ``group_size`` claims
  (RAGChecker's joint checking, P·⌈C/k⌉ calls).

A premise may need only some claims (the reference is checked against the response's
claims, the response against the reference's, chunks against both), hence ``needs``.

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
    """One call's share: for each premise (index), the claims (indexes) to judge against it."""

    pairs: tuple[tuple[int, tuple[int, ...]], ...]

    @property
    def premises(self) -> tuple[int, ...]:
        return tuple(p for p, _ in self.pairs)

    @property
    def claims(self) -> tuple[int, ...]:
        """Every claim the call mentions, in index order."""
        return tuple(sorted({c for _, cs in self.pairs for c in cs}))

    @property
    def cells(self) -> int:
        return sum(len(cs) for _, cs in self.pairs)


def _chunks(claims: Sequence[int], sizes: Sequence[int], budget: int,
            max_items: int) -> list[tuple[int, ...]]:
    """Consecutive runs of ``claims`` whose sizes add up to at most ``budget``."""
    runs: list[tuple[int, ...]] = []
    current: list[int] = []
    used = 0
    for c in claims:
        if current and (used + sizes[c] > budget or len(current) >= max_items):
            runs.append(tuple(current))
            current, used = [], 0
        current.append(c)
        used += sizes[c]
    if current:
        runs.append(tuple(current))
    return runs


def plan(strategy: str, premise_sizes: Sequence[int], claim_sizes: Sequence[int],
         needs: Sequence[Sequence[int]] | None = None, *, group_size: int = 5,
         max_prompt_tokens: int = 6000, max_cells: int = 300) -> list[Job]:
    """The calls that cover every needed (premise, claim) pair exactly once.

    ``needs[p]`` lists the claims to judge against premise ``p`` (default: all of them).

    >>> [job.cells for job in plan("joint", [50, 40, 40], [10, 10])]
    [6]
    >>> len(plan("per_premise", [50, 40, 40], [10, 10]))
    3
    >>> len(plan("per_claim_group", [50, 40], [10] * 7, group_size=5))
    4
    >>> plan("joint", [50, 40], [10, 10, 10], needs=[[0, 1], [2]])[0].pairs
    ((0, (0, 1)), (1, (2,)))
    """
    if strategy not in STRATEGIES:
        raise ValueError(f"unknown strategy {strategy!r}: expected one of {', '.join(STRATEGIES)}")
    if needs is None:
        needs = [range(len(claim_sizes))] * len(premise_sizes)
    # Units: a premise with a run of its claims, small enough for one call on its own.
    units: list[tuple[int, tuple[int, ...]]] = []
    for p, wanted in enumerate(needs):
        if strategy == "per_claim_group":
            runs = _chunks(list(wanted), [0] * len(claim_sizes), 0, max(1, group_size))
        else:
            room = max(1, max_prompt_tokens - premise_sizes[p])
            runs = _chunks(list(wanted), claim_sizes, room, max(1, max_cells))
        units += [(p, run) for run in runs]
    if strategy != "joint":
        return [Job((unit,)) for unit in units]
    # Joint: pack units into as few calls as the prompt budget and the cell limit allow.
    jobs: list[Job] = []
    current: list[tuple[int, tuple[int, ...]]] = []
    for unit in units:
        trial = Job((*current, unit))
        size = sum(premise_sizes[p] for p in set(trial.premises)) + sum(
            claim_sizes[c] for c in trial.claims)
        if current and (size > max_prompt_tokens or trial.cells > max_cells):
            jobs.append(Job(tuple(current)))
            current = []
        current.append(unit)
    if current:
        jobs.append(Job(tuple(current)))
    return jobs
