"""Rescoring from claims and verdicts already in the input: zero judge calls."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ..engine.matrix import ClaimVerdicts
from ..errors import JudgeError
from ..samples import Sample
from ..verdicts import Verdict

__all__ = ["PrecomputedJudge", "make_judge"]

_HINT = ("this row has no complete precomputed fields (response_claims, gt_answer_claims, "
         "answer2response, response2answer, retrieved2response, retrieved2answer); "
         "score it with another judge, e.g. --judge lexical")


class PrecomputedJudge:
    """Uses RAGChecker's stored intermediates; it never extracts or checks anything."""

    def identity(self) -> dict[str, Any]:
        return {"judge": "precomputed"}

    async def judge_sample(self, sample: Sample) -> ClaimVerdicts:
        if sample.precomputed is None:
            raise JudgeError(_HINT)
        return sample.precomputed

    async def extract(self, text: str, question: str | None = None) -> list[str]:
        raise JudgeError("the precomputed judge cannot extract claims: " + _HINT)

    async def check(self, premise: str, claims: Sequence[str]) -> list[Verdict]:
        raise JudgeError("the precomputed judge cannot check claims: " + _HINT)


def make_judge(arg: str | None, **kwargs: Any) -> PrecomputedJudge:
    """Registry factory for ``get_judge("precomputed")`` (it takes no settings)."""
    return PrecomputedJudge()
