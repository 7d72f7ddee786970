"""A scripted judge for tests and documentation. It ships in the package on purpose."""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from ..errors import JudgeOutputError
from ..textkit.sentences import sentences
from ..verdicts import Verdict, parse_verdict
from .base import Usage, record_usage

__all__ = ["FakeJudge", "make_judge"]

ClaimScript = Mapping[str, Sequence[str]] | Callable[[str, "str | None"], Sequence[str]]
VerdictScript = Mapping[tuple[str, str], Any] | Callable[[str, str], Any]

_NORM = re.compile(r"[\W_]+", re.UNICODE)


def _norm(text: str) -> str:
    return _NORM.sub(" ", text.lower()).strip()


class FakeJudge:
    """Replays scripted claims and verdicts.

    Without a script: claims are sentences, and a claim is entailed when its normalised
    text occurs in the normalised premise (otherwise ``default``). With ``strict=True``
    an unscripted text or pair raises ``JudgeOutputError`` instead of falling back, so a
    test notices when the code under test asks for something unexpected.

    >>> import asyncio
    >>> j = FakeJudge(verdicts={("P", "a"): "contradicted"}, strict=True)
    >>> asyncio.run(j.check("P", ["a"]))
    [<Verdict.CONTRADICTED: 'contradicted'>]
    """

    def __init__(self, *, claims: ClaimScript | None = None, verdicts: VerdictScript | None = None,
                 default: Verdict = Verdict.NEUTRAL, strict: bool = False) -> None:
        self._claims = claims
        self._verdicts = verdicts
        self._default = default
        self._strict = strict
        #: Every call, in order: ("extract", text) or ("check", premise, n_claims).
        self.calls: list[tuple[Any, ...]] = []

    def identity(self) -> dict[str, Any]:
        return {"judge": "fake", "scripted": self._claims is not None or self._verdicts is not None}

    async def extract(self, text: str, question: str | None = None) -> list[str]:
        self.calls.append(("extract", text))
        record_usage(Usage(calls=1))
        if self._claims is None:
            return sentences(text)
        if callable(self._claims):
            return list(self._claims(text, question))
        if text in self._claims:
            return list(self._claims[text])
        if self._strict:
            raise JudgeOutputError(f"fake judge has no scripted claims for text {text[:60]!r}")
        return sentences(text)

    async def check(self, premise: str, claims: Sequence[str]) -> list[Verdict]:
        self.calls.append(("check", premise, len(claims)))
        record_usage(Usage(calls=1))
        return [self._verdict(premise, c) for c in claims]

    def _verdict(self, premise: str, claim: str) -> Verdict:
        if callable(self._verdicts):
            return parse_verdict(self._verdicts(premise, claim))
        if self._verdicts is not None and (premise, claim) in self._verdicts:
            return parse_verdict(self._verdicts[(premise, claim)])
        if self._strict and self._verdicts is not None:
            raise JudgeOutputError(
                f"fake judge has no scripted verdict for claim {claim[:60]!r} "
                f"against premise {premise[:60]!r}")
        return Verdict.ENTAILED if _norm(claim) and _norm(claim) in _norm(premise) else self._default


def make_judge(arg: str | None, **kwargs: Any) -> FakeJudge:
    """Registry factory for ``get_judge("fake", **kwargs)``."""
    return FakeJudge(**kwargs)
