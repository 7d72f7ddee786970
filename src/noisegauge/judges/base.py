"""The judge contract and the usage meter every provider reports into.

A judge only *produces* claims and verdicts; metrics are computed elsewhere from them.
The contract is deliberately narrow (two async methods). Two optional capabilities let
a judge do better than the default fan-out:

- ``check_many(premises, claims)``: check the same claims against several premises in
  one go (an LLM judge packs them into one call; the NLI judge into one batch);
- ``judge_sample(sample)``: produce the whole ``ClaimVerdicts`` itself (``precomputed``);
- ``check_many_scored(premises, claims)`` with ``uncertain_band``: each verdict with the
  judge's score (its probability of *entailed*), and the scores it is unsure about; the
  evidence then marks those verdicts ``uncertain`` (the offline judge);
- ``extract_in_conversation(text, question, history)``: claims made standalone with the
  turns before the question (a chat); a judge without it gets the plain ``extract``.
"""

from __future__ import annotations

import contextvars
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, fields
from typing import TYPE_CHECKING, Any, ClassVar, Protocol, runtime_checkable

from .._identity import identity_of
from ..verdicts import Verdict

if TYPE_CHECKING:
    from ..engine.matrix import ClaimVerdicts
    from ..samples import Sample, Turn

__all__ = ["Judge", "BatchChecker", "ConversationalExtractor", "SampleJudge", "ScoredChecker",
           "Usage", "conversation_turns", "metered",
           "record_usage", "judge_identity", "capture_raw", "record_raw", "JudgeWrapper"]


@runtime_checkable
class Judge(Protocol):
    """Splits text into claims and checks claims against a premise."""

    async def extract(self, text: str, question: str | None = None) -> list[str]:
        """Atomic, self-contained claims of ``text`` (in its own language)."""
        ...

    async def check(self, premise: str, claims: Sequence[str]) -> list[Verdict]:
        """One verdict per claim, in the same order, judged from ``premise`` alone."""
        ...


@runtime_checkable
class BatchChecker(Protocol):
    async def check_many(self, premises: Sequence[str], claims: Sequence[str]) -> list[list[Verdict]]:
        """``result[p][c]`` is the verdict of claim ``c`` against premise ``p``."""
        ...


@runtime_checkable
class ConversationalExtractor(Protocol):
    """A judge that reads a response (or reference) with the conversation before it."""

    #: Part of the cache key of a conversational extraction (plain ones keep their keys).
    conversation_version: str

    async def extract_in_conversation(self, text: str, question: str | None,
                                      history: Sequence[Turn]) -> list[str]:
        """Claims of ``text``, the answer to ``question`` after the turns of ``history``
        (oldest first), each standalone: pronouns, ellipsis and "the same plan" resolved to
        what the conversation names. Earlier turns give meaning only: no claim is taken
        from them."""
        ...


def conversation_turns(history: Sequence[Turn]) -> tuple[Turn, ...]:
    """The turns of ``history`` that are the conversation: its ``system`` turns are the
    app's instructions, not what the user and the bot said, so they name no entity a
    pronoun stands for and go to no judge; a history of system turns only is a single turn."""
    return tuple(t for t in history if t.role != "system")


@runtime_checkable
class SampleJudge(Protocol):
    async def judge_sample(self, sample: Sample) -> ClaimVerdicts:
        """All four checks for one sample, produced by the judge itself."""
        ...


@runtime_checkable
class ScoredChecker(Protocol):
    #: Verdicts whose score lies in ``[lo, hi)`` are uncertain; None: no band is known.
    uncertain_band: tuple[float, float] | None

    async def check_many_scored(self, premises: Sequence[str],
                                claims: Sequence[str]) -> list[list[tuple[Verdict, float]]]:
        """``check_many`` with each verdict's score."""
        ...


def judge_identity(judge: object) -> dict[str, Any]:
    """What identifies a judge's answers (for caches and result metadata).

    A judge may define ``identity()`` (model, settings...); otherwise its class path stands
    in. A judge that lists ``identity_sources`` (its prompt module, its weights) also gets a
    digest of their content, so an edited prompt or new weights never reuse a cached answer.
    """
    return identity_of(judge, "judge")


class JudgeWrapper:
    """Base of judges that wrap another (the cache, the canaries' watch): the wrapped
    judge's identity, and the attributes named in ``FORWARDED`` that the wrapped judge has
    and the wrapper does not define itself.

    Forwarding is declared, not found through ``__getattr__``: since Python 3.12
    ``isinstance`` against a runtime-checkable protocol (``ScoredChecker``...) looks
    attributes up statically, so a capability only reached through ``__getattr__`` is
    missed there and a run silently loses it. Forwarded attributes are set on the instance,
    which every Python's ``isinstance`` sees.
    """

    #: What a wrapper reads through from the judge it wraps (when that judge has it).
    FORWARDED: ClassVar[tuple[str, ...]] = (
        "check_many", "check_many_scored", "uncertain_band", "judge_sample",
        "extract_with_questions", "questions_version", "extract_in_conversation",
        "conversation_version", "find_sources", "finds_sources",
        "probe", "aclose", "endpoint_report", "use_store", "stats", "model")

    def __init__(self, judge: Judge) -> None:
        self.inner = judge
        self._forward()

    def _forward(self) -> None:
        for name in self.FORWARDED:
            if not hasattr(type(self), name) and hasattr(self.inner, name):
                self.__dict__[name] = getattr(self.inner, name)

    def identity(self) -> dict[str, Any]:
        return judge_identity(self.inner)

    def __getstate__(self) -> dict[str, Any]:
        # Forwarded bound methods are not pickled: they are set again from ``inner``.
        return {k: v for k, v in self.__dict__.items() if k not in self.FORWARDED}

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)
        self._forward()


@dataclass
class Usage:
    """Judge usage of one sample or one run. ``cost_usd`` is None when the price is unknown.

    ``calls`` are answered calls (re-asks included); ``re_asks`` the calls that asked again
    for missing, unreadable or cut output; ``retries`` the attempts sent again after an
    error or a timeout (``timeouts``); ``fallbacks`` the requests an endpoint refused for
    their output mode; ``failed_calls`` the calls that got no answer at all.
    """

    calls: int = 0
    cached_calls: int = 0
    retries: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cost_usd: float | None = 0.0
    re_asks: int = 0
    fallbacks: int = 0
    timeouts: int = 0
    failed_calls: int = 0

    def add(self, other: Usage) -> None:
        self.calls += other.calls
        self.cached_calls += other.cached_calls
        self.retries += other.retries
        self.prompt_tokens += other.prompt_tokens
        self.completion_tokens += other.completion_tokens
        self.re_asks += other.re_asks
        self.fallbacks += other.fallbacks
        self.timeouts += other.timeouts
        self.failed_calls += other.failed_calls
        if self.cost_usd is None or other.cost_usd is None:
            self.cost_usd = None
        else:
            self.cost_usd += other.cost_usd

    def to_dict(self) -> dict[str, Any]:
        return {f.name: getattr(self, f.name) for f in fields(self)}

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Usage:
        names = {f.name for f in fields(cls)}
        return cls(**{k: v for k, v in data.items() if k in names})


_CURRENT: contextvars.ContextVar[Usage | None] = contextvars.ContextVar("noisegauge_usage",
                                                                        default=None)


@contextmanager
def metered() -> Iterator[Usage]:
    """Collect the usage of every judge call made inside the block (tasks inherit it)."""
    usage = Usage()
    token = _CURRENT.set(usage)
    try:
        yield usage
    finally:
        _CURRENT.reset(token)


def record_usage(usage: Usage) -> None:
    """Called by providers and wrappers after each call; a no-op outside ``metered()``."""
    current = _CURRENT.get()
    if current is not None:
        current.add(usage)


_RAW: contextvars.ContextVar[list[str] | None] = contextvars.ContextVar("noisegauge_raw",
                                                                       default=None)


@contextmanager
def capture_raw() -> Iterator[list[str]]:
    """Collect the raw answers that providers report (``record_raw``) inside the block;
    the judge cache keeps them beside the parsed answer."""
    raws: list[str] = []
    token = _RAW.set(raws)
    try:
        yield raws
    finally:
        _RAW.reset(token)


def record_raw(text: str) -> None:
    """Report one raw model answer (already redacted), so a cached verdict can be audited
    later (``noisegauge cache show KEY``). A no-op outside ``capture_raw()``."""
    raws = _RAW.get()
    if raws is not None:
        raws.append(text)
