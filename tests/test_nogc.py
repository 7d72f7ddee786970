"""The collector pause the lexical judge runs under: paused inside, restored after, nested
calls and a caller's own setting respected, restored on an exception too."""

from __future__ import annotations

import gc

import pytest

from noisegauge.infra.nogc import nogc


@nogc
def _state() -> bool:
    return gc.isenabled()


@nogc
def _nested() -> tuple[bool, bool]:
    return _state(), gc.isenabled()


@nogc
def _boom() -> None:
    raise ValueError("inside")


def test_paused_inside_and_restored_after() -> None:
    assert gc.isenabled()
    assert _state() is False
    assert gc.isenabled()


def test_nested_call_does_not_reenable_early() -> None:
    assert _nested() == (False, False)
    assert gc.isenabled()


def test_a_caller_that_disabled_it_keeps_it_disabled() -> None:
    gc.disable()
    try:
        assert _state() is False
        assert not gc.isenabled()
    finally:
        gc.enable()


def test_restored_when_the_call_raises() -> None:
    with pytest.raises(ValueError, match="inside"):
        _boom()
    assert gc.isenabled()


def test_the_lexical_judge_matrix_runs_paused() -> None:
    import asyncio

    from noisegauge.judges.lexical import LexicalJudge

    seen: list[bool] = []
    judge = LexicalJudge()
    real = judge.verdicts

    def spy(premise: str, claims: list[str]) -> object:
        seen.append(gc.isenabled())
        return real(premise, claims)

    judge.verdicts = spy  # type: ignore[method-assign,assignment]
    out = asyncio.run(judge.check_many(["Pro costs $10.", "Basic is free."], ["Pro costs $10."]))
    assert [[v.value for v in row] for row in out] == [["entailed"], ["neutral"]]
    assert seen == [False, False]
    assert gc.isenabled()
