"""``LexicalJudge``: the offline default judge (no key, no GPU, no download).

Verdicts: a hard mismatch (number, date, unit, negation, antonym, swapped name, an
"only"/"both"/"all" the premise does not say) is never entailed; it
is ``contradicted`` when the premise clearly talks about the same thing, ``neutral`` otherwise.
Everything else is ``entailed`` when the claim's content words stand verbatim and in order in
the premise, or when the learned combiner's probability reaches its
threshold (fixed in the weights file); else ``neutral``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ...infra.nogc import nogc
from ...textkit.tokens import answer_part
from ...verdicts import Verdict
from ..base import Usage, record_usage
from .features import FEATURES, Cues, analyse, pair_features
from .model import Combiner, load_combiner
from .split import extract_spans
from .turns import conversational_spans

if TYPE_CHECKING:
    from ...samples import Turn

__all__ = ["CONVERSATION_VERSION", "JUDGE_VERSION", "Explanation", "LexicalJudge"]

_LCS = FEATURES.index("lcs")
_OPS = FEATURES.index("op_miss")

#: Bump when splitting, features or the decision rule change (it keys caches). The history of
#: each version is in CHANGELOG.md ("Lexical judge history").
JUDGE_VERSION = "4.14"
#: Keys conversational extractions (``turns``) only: single-turn answers and keys do not
#: depend on it. Bump when the rules there change.
CONVERSATION_VERSION = "c2"


@dataclass(frozen=True)
class Explanation:
    """Why a claim got its verdict against a premise."""

    verdict: Verdict
    probability: float
    reason: str | None
    #: A rule decided, not the probability: a hard cue, or the claim verbatim in the premise.
    decided: bool = False


class LexicalJudge:
    """Claims by rule-based splitting; verdicts from normalised content overlap.

    >>> import asyncio
    >>> j = LexicalJudge()
    >>> asyncio.run(j.check("Pro plan subscriptions can be cancelled with a 30-day notice.",
    ...                     ["Pro plan requires a 90-day notice."]))
    [<Verdict.CONTRADICTED: 'contradicted'>]
    """

    #: Code, shipped weights and the shared text rules decide every answer: their content is
    #: part of the identity, so an edit never reuses a stale cached verdict.
    identity_sources = ("noisegauge.judges.lexical", "noisegauge.textkit")

    def __init__(self, *, threshold: float | None = None, weights: str | Path | None = None) -> None:
        self._weights = weights
        self._model: Combiner = load_combiner(weights)
        self.threshold = self._model.threshold if threshold is None else float(threshold)
        #: Probabilities the judge is unsure about (from held-out data, in the weights file);
        #: a threshold moved by a calibration profile moves the band with it.
        band = self._model.band
        shift = self.threshold - self._model.threshold
        self.uncertain_band: tuple[float, float] | None = None if band is None else (
            max(0.0, band[0] + shift), min(1.0, band[1] + shift))

    def __reduce__(self) -> tuple[Any, ...]:
        """Sent to a worker process as its settings; the worker loads the weights itself."""
        return (_rebuild, (self.threshold, self._weights))

    def identity(self) -> dict[str, Any]:
        return {"judge": "lexical", "version": JUDGE_VERSION, "model": self._model.version,
                "threshold": self.threshold}

    def explain(self, premise: str, claim: str) -> Explanation:
        """Verdict, probability of entailment and the hard cue (if any) behind it."""
        prem, cl = analyse(premise), analyse(answer_part(claim))
        if not cl.content:
            return Explanation(Verdict.NEUTRAL, 0.0, "claim has no content words", True)
        feats, cues = pair_features(prem, cl)
        # Verbatim means every word that matters, "only" and "both" included.
        verbatim = feats[_LCS] >= 1.0 and feats[_OPS] == 0
        # A hard cue decides alone: the trees are not evaluated (a third of all pairs on
        # long web evidence), and the probability reads 0.
        p = 0.0 if cues.mismatch else self._model.probability(feats)
        return Explanation(self._decide(p, cues, verbatim), p, cues.reason,
                           cues.mismatch or verbatim)

    def _decide(self, p: float, cues: Cues, verbatim: bool) -> Verdict:
        if cues.contradiction:
            return Verdict.CONTRADICTED
        if cues.mismatch or (p < self.threshold and not verbatim):
            return Verdict.NEUTRAL
        return Verdict.ENTAILED

    @nogc
    def verdicts(self, premise: str, claims: Sequence[str]) -> list[Verdict]:
        """Synchronous ``check``."""
        return [self.explain(premise, c).verdict for c in claims]

    @nogc
    def scored(self, premise: str, claims: Sequence[str]) -> list[tuple[Verdict, float]]:
        """Each verdict with its score: the probability, or 0 / 1 where a hard cue or a
        verbatim match decided (those are not in doubt)."""
        out = []
        for c in claims:
            e = self.explain(premise, c)
            score = (1.0 if e.verdict is Verdict.ENTAILED else 0.0) if e.decided else e.probability
            out.append((e.verdict, score))
        return out

    async def extract(self, text: str, question: str | None = None) -> list[str]:
        record_usage(Usage(calls=1))
        return [c.text for c in extract_spans(text, question)]

    #: Part of the cache key of a conversational extraction.
    conversation_version = CONVERSATION_VERSION

    async def extract_in_conversation(self, text: str, question: str | None,
                                      history: Sequence[Turn]) -> list[str]:
        """Claims made standalone with the turns before the question (``turns``): the
        elliptical question's slot and the entity the turns name."""
        record_usage(Usage(calls=1))
        return [c.text for c in conversational_spans(text, question, history)]

    async def check(self, premise: str, claims: Sequence[str]) -> list[Verdict]:
        record_usage(Usage(calls=1))
        return self.verdicts(premise, claims)

    async def check_many(self, premises: Sequence[str], claims: Sequence[str]) -> list[list[Verdict]]:
        record_usage(Usage(calls=1))
        return self._verdict_matrix(premises, claims)

    async def check_many_scored(self, premises: Sequence[str],
                                claims: Sequence[str]) -> list[list[tuple[Verdict, float]]]:
        record_usage(Usage(calls=1))
        return self._scored_matrix(premises, claims)

    @nogc
    def _verdict_matrix(self, premises: Sequence[str], claims: Sequence[str]) -> list[list[Verdict]]:
        return [self.verdicts(p, claims) for p in premises]

    @nogc
    def _scored_matrix(self, premises: Sequence[str],
                       claims: Sequence[str]) -> list[list[tuple[Verdict, float]]]:
        return [self.scored(p, claims) for p in premises]


def _rebuild(threshold: float, weights: str | Path | None) -> LexicalJudge:
    return LexicalJudge(threshold=threshold, weights=weights)
