"""A judge that breaks on purpose, for testing how a run survives its worker or judge.

``FaultyJudge(inner, trigger)`` answers as ``inner`` (same identity and methods, so its rows
and cache keys are ``inner``'s) except when a text given to ``extract`` or ``check``
contains ``trigger``:

- ``mode="crash"``: the process dies at once (``os._exit``), as a worker does when its
  machine is lost. With ``marker`` (a file path) it dies only while the marker does not
  exist, and creates it first: the first attempt dies, the retry succeeds.
- ``mode="fail"``: the call raises ``ConnectionError`` (an endpoint that cannot be
  reached), which a run turns into an error row of kind ``transport``.

It pickles, so it can be sent to a Ray worker.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Literal

from ..judges.base import Judge, JudgeWrapper
from ..verdicts import Verdict

if TYPE_CHECKING:
    from ..samples import Turn

__all__ = ["FaultyJudge"]


class FaultyJudge(JudgeWrapper):
    """``inner`` with faults on texts containing ``trigger``; everything else (check_many,
    scores, bands) is the inner judge's own, so a run takes the same paths with or without
    the wrapper."""

    def __init__(self, inner: Judge, trigger: str, *, mode: Literal["crash", "fail"] = "crash",
                 marker: str | os.PathLike[str] | None = None) -> None:
        super().__init__(inner)
        self.trigger = trigger
        self.mode = mode
        self.marker = str(marker) if marker is not None else None

    def _forward(self) -> None:
        super()._forward()
        inner = getattr(self.inner, "extract_in_conversation", None)
        if callable(inner):  # only then: a plain judge must not seem to read histories
            async def extract_in_conversation(text: str, question: str | None,
                                              history: Sequence[Turn]) -> list[str]:
                self._maybe_break(text, question)
                return list(await inner(text, question, history))
            self.__dict__["extract_in_conversation"] = extract_in_conversation

    def _maybe_break(self, *texts: str | None) -> None:
        if not any(t is not None and self.trigger in t for t in texts):
            return
        if self.mode == "fail":
            raise ConnectionError(f"injected failure on {self.trigger!r}")
        if self.marker is not None:
            marker = Path(self.marker)
            if marker.exists():
                return
            marker.write_text("crashed once\n", encoding="utf-8")
        os._exit(17)  # no cleanup, no exception: the worker is simply gone

    async def extract(self, text: str, question: str | None = None) -> list[str]:
        self._maybe_break(text, question)
        return await self.inner.extract(text, question)

    async def check(self, premise: str, claims: Sequence[str]) -> list[Verdict]:
        self._maybe_break(premise, *claims)
        return await self.inner.check(premise, claims)
