"""The four checks RAGChecker makes for one sample, as an immutable value."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any

from ..verdicts import Verdict, parse_verdict

__all__ = ["ClaimVerdicts", "VerdictScores"]

Row = tuple[Verdict, ...]
ScoreRow = tuple[float, ...]


@dataclass(frozen=True)
class VerdictScores:
    """The judge's score (its probability of *entailed*) behind each verdict, in the shapes of
    ``ClaimVerdicts``' four checks, and the band of scores it is unsure about: a verdict whose
    score lies in ``[band[0], band[1])`` is marked uncertain in the evidence. Scores never
    change a verdict or a metric."""

    answer2response: ScoreRow
    response2answer: ScoreRow
    retrieved2response: tuple[ScoreRow, ...]
    retrieved2answer: tuple[ScoreRow, ...]
    band: tuple[float, float] | None = None

    def uncertain(self, score: float) -> bool:
        return self.band is not None and self.band[0] <= score < self.band[1]

    def to_dict(self) -> dict[str, Any]:
        return {"answer2response": list(self.answer2response),
                "response2answer": list(self.response2answer),
                "retrieved2response": [list(r) for r in self.retrieved2response],
                "retrieved2answer": [list(r) for r in self.retrieved2answer],
                "band": list(self.band) if self.band is not None else None}

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> VerdictScores:
        band = data.get("band")
        return cls(tuple(map(float, data["answer2response"])),
                   tuple(map(float, data["response2answer"])),
                   tuple(tuple(map(float, r)) for r in data["retrieved2response"]),
                   tuple(tuple(map(float, r)) for r in data["retrieved2answer"]),
                   (float(band[0]), float(band[1])) if band else None)


@dataclass(frozen=True)
class ClaimVerdicts:
    """Claims of one sample and every verdict the metrics need.

    Names follow RAGChecker, shapes are checked on construction:

    - ``response_claims`` (R) and ``reference_claims`` (G), as text;
    - ``answer2response``  (R):   response claim i vs the reference text;
    - ``response2answer``  (G):   reference claim i vs the response text;
    - ``retrieved2response`` (R x n): response claim i vs chunk j;
    - ``retrieved2answer``   (G x n): reference claim i vs chunk j.
    """

    response_claims: tuple[str, ...]
    reference_claims: tuple[str, ...]
    answer2response: Row
    response2answer: Row
    retrieved2response: tuple[Row, ...]
    retrieved2answer: tuple[Row, ...]
    n_chunks: int
    scores: VerdictScores | None = None

    def __post_init__(self) -> None:
        r, g, n = len(self.response_claims), len(self.reference_claims), self.n_chunks
        if n < 0:
            raise ValueError(f"n_chunks must be >= 0, got {n}")
        _check_len("answer2response", self.answer2response, r, "response claims")
        _check_len("response2answer", self.response2answer, g, "reference claims")
        _check_len("retrieved2response", self.retrieved2response, r, "response claims")
        _check_len("retrieved2answer", self.retrieved2answer, g, "reference claims")
        for name, rows in (("retrieved2response", self.retrieved2response),
                           ("retrieved2answer", self.retrieved2answer)):
            for i, row in enumerate(rows):
                if len(row) != n:
                    raise ValueError(
                        f"{name}[{i}] has {len(row)} verdicts, expected one per chunk ({n})"
                    )
        if self.scores is not None:
            sc = self.scores
            _check_len("scores.answer2response", sc.answer2response, r, "response claims")
            _check_len("scores.response2answer", sc.response2answer, g, "reference claims")
            _check_len("scores.retrieved2response", sc.retrieved2response, r, "response claims")
            _check_len("scores.retrieved2answer", sc.retrieved2answer, g, "reference claims")
            for srows in (sc.retrieved2response, sc.retrieved2answer):
                if any(len(srow) != n for srow in srows):
                    raise ValueError(f"scores rows must have one score per chunk ({n})")

    @classmethod
    def build(
        cls,
        *,
        response_claims: Sequence[str],
        reference_claims: Sequence[str],
        answer2response: Sequence[Any],
        response2answer: Sequence[Any],
        retrieved2response: Sequence[Sequence[Any]],
        retrieved2answer: Sequence[Sequence[Any]],
        n_chunks: int,
    ) -> ClaimVerdicts:
        """Build from lists, parsing verdict strings (RAGChecker's or ours) and bools."""
        return cls(
            response_claims=tuple(response_claims),
            reference_claims=tuple(reference_claims),
            answer2response=tuple(parse_verdict(v) for v in answer2response),
            response2answer=tuple(parse_verdict(v) for v in response2answer),
            retrieved2response=tuple(tuple(parse_verdict(v) for v in row) for row in retrieved2response),
            retrieved2answer=tuple(tuple(parse_verdict(v) for v in row) for row in retrieved2answer),
            n_chunks=n_chunks,
        )

    def permute_chunks(self, order: Sequence[int]) -> ClaimVerdicts:
        """The same verdicts with chunks reordered (``order[k]`` is the old index of new chunk k)."""
        if sorted(order) != list(range(self.n_chunks)):
            raise ValueError("order must be a permutation of the chunk indices")
        return ClaimVerdicts(
            response_claims=self.response_claims,
            reference_claims=self.reference_claims,
            answer2response=self.answer2response,
            response2answer=self.response2answer,
            retrieved2response=tuple(tuple(row[k] for k in order) for row in self.retrieved2response),
            retrieved2answer=tuple(tuple(row[k] for k in order) for row in self.retrieved2answer),
            n_chunks=self.n_chunks,
            scores=None if self.scores is None else VerdictScores(
                self.scores.answer2response, self.scores.response2answer,
                tuple(tuple(row[k] for k in order) for row in self.scores.retrieved2response),
                tuple(tuple(row[k] for k in order) for row in self.scores.retrieved2answer),
                self.scores.band),
        )

    def to_dict(self) -> dict[str, Any]:
        """Plain JSON-ready form (verdicts as our lower-case strings)."""
        return {
            "response_claims": list(self.response_claims),
            "reference_claims": list(self.reference_claims),
            "answer2response": [v.value for v in self.answer2response],
            "response2answer": [v.value for v in self.response2answer],
            "retrieved2response": [[v.value for v in row] for row in self.retrieved2response],
            "retrieved2answer": [[v.value for v in row] for row in self.retrieved2answer],
            "n_chunks": self.n_chunks,
            **({"scores": self.scores.to_dict()} if self.scores is not None else {}),
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> ClaimVerdicts:
        cv = cls.build(
            response_claims=data["response_claims"],
            reference_claims=data["reference_claims"],
            answer2response=data["answer2response"],
            response2answer=data["response2answer"],
            retrieved2response=data["retrieved2response"],
            retrieved2answer=data["retrieved2answer"],
            n_chunks=int(data["n_chunks"]),
        )
        if data.get("scores") is None:
            return cv
        return replace(cv, scores=VerdictScores.from_dict(data["scores"]))

    def uncertain_counts(self) -> dict[str, tuple[int, int]]:
        """Per check: (verdicts in the judge's uncertainty band, verdicts); empty without scores."""
        sc = self.scores
        if sc is None or sc.band is None:
            return {}
        flat = {"answer2response": list(sc.answer2response),
                "response2answer": list(sc.response2answer),
                "retrieved2response": [x for row in sc.retrieved2response for x in row],
                "retrieved2answer": [x for row in sc.retrieved2answer for x in row]}
        return {k: (sum(sc.uncertain(x) for x in v), len(v)) for k, v in flat.items()}


def _check_len(name: str, seq: Sequence[object], expected: int, what: str) -> None:
    if len(seq) != expected:
        raise ValueError(f"{name} has {len(seq)} entries, expected one per {what[:-1]} ({expected})")
