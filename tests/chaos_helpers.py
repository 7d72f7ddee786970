"""Judges that fail on purpose, for the exit-code and robustness tests (imported by name;
register one with ``JUDGE_FACTORIES["name"] = "chaos_helpers:make_..."``)."""

from __future__ import annotations

import asyncio
import os
from collections.abc import Sequence
from typing import Any

from noisegauge import FakeJudge, JudgeUnavailable, Verdict
from noisegauge.errors import JudgeOutputError


class FailingJudge(FakeJudge):
    """FakeJudge whose ``extract`` raises ``error`` for texts containing ``when`` (one of
    ``a|b|c``; every text when ``when`` is empty), once ``ok_first`` extractions have succeeded, while the
    class switch ``up`` is False (a test sets it to bring the "endpoint" back)."""

    up = False

    def __init__(self, error: BaseException, when: str = "", probe_error: Exception | None = None,
                 ok_first: int = 0, **kw: Any) -> None:
        super().__init__(**kw)
        self.error = error
        self.when = when
        self.probe_error = probe_error
        self.ok_first = ok_first

    def identity(self) -> dict[str, Any]:
        return {"judge": "failing", "error": type(self.error).__name__, "when": self.when}

    async def extract(self, text: str, question: str | None = None) -> list[str]:
        if self.ok_first > 0:
            self.ok_first -= 1
        elif any(w in text for w in self.when.split("|")) and not FailingJudge.up:
            raise self.error
        return await super().extract(text, question)

    async def probe(self) -> None:
        if self.probe_error is not None:
            raise self.probe_error


def make_unreachable(arg: str | None, **kw: Any) -> FailingJudge:
    """Every row: the endpoint cannot be reached. ``arg``: ``after=N`` (N extractions work
    first), or only rows whose text has ``arg``."""
    after = int(arg[6:]) if arg and arg.startswith("after=") else 0
    return FailingJudge(JudgeUnavailable("judge at http://127.0.0.1:9/v1: connection refused"),
                        when="" if after else arg or "", ok_first=after, **kw)


def make_bad_output(arg: str | None, **kw: Any) -> FailingJudge:
    return FailingJudge(JudgeOutputError("no verdict for c1 after 3 attempts"), when=arg or "",
                        **kw)


def make_buggy(arg: str | None, **kw: Any) -> FailingJudge:
    """A bug inside a judge: a TypeError, which must stop the run with its traceback."""
    return FailingJudge(TypeError("unsupported operand type(s) for +: 'int' and 'str'"),
                        when=arg or "", **kw)


def make_interrupted(arg: str | None, **kw: Any) -> FailingJudge:
    """Ctrl-C arriving while row ``arg`` is judged."""
    return FailingJudge(KeyboardInterrupt(), when=arg or "", **kw)


def make_dead_probe(arg: str | None, **kw: Any) -> FailingJudge:
    return FailingJudge(RuntimeError("must not be reached"), when="\0never",
                        probe_error=JudgeUnavailable("fake at http://127.0.0.1:9/v1: HTTP 401: "
                                                     "AuthenticationError: invalid key"), **kw)


def make_timeout_probe(arg: str | None, **kw: Any) -> FailingJudge:
    return FailingJudge(RuntimeError("must not be reached"), when="\0never",
                        probe_error=asyncio.TimeoutError(), **kw)


class NeverJudge(FakeJudge):
    """Hangs on every check (for Ctrl-C tests run in a subprocess)."""

    async def check(self, premise: str, claims: Sequence[str]) -> list[Verdict]:
        await asyncio.sleep(3600)
        return []


def make_never(arg: str | None, **kw: Any) -> NeverJudge:
    return NeverJudge(**kw)


class GatedJudge(FakeJudge):
    """FakeJudge that answers ``free`` extractions, then waits until the file named by
    ``$NG_GATE`` exists: a run that holds still, mid-way, for as long as a test needs."""

    def __init__(self, free: int = 0, **kw: Any) -> None:
        super().__init__(**kw)
        self.free = free

    def identity(self) -> dict[str, Any]:
        return {"judge": "slow-fake"}  # rows name the judge: the same as SlowJudge's rows

    async def extract(self, text: str, question: str | None = None) -> list[str]:
        if self.free > 0:
            self.free -= 1
        else:
            gate = os.environ.get("NG_GATE", "")
            while gate and not os.path.exists(gate):
                await asyncio.sleep(0.005)
        return await super().extract(text, question)


def make_gated(arg: str | None, **kw: Any) -> GatedJudge:
    return GatedJudge(free=int(arg or 0), **kw)
