"""Endpoint limits for a whole cluster: one actor hands out a permit per request.

Each worker keeps its own adaptive limit (``infra.transport``); on top of it, every attempt
takes a permit from the run's ``PermitDesk`` actor, which holds ``max_concurrency`` and the
requests/tokens-per-minute budgets of each endpoint for all workers together. So a run on
ten machines sends no more at once, and no faster, than one machine would: a provider's
quota holds however far the run scales. A permit a dead worker never gave back lapses
after its ``hold`` (the attempt's timeout plus a margin).

One actor, not an even split per worker: a split leaves slots idle on workers that are
between blocks, while the actor gives each free slot to whoever asks first. It costs one
actor round trip (about a millisecond) per request, small beside a model's answer.
"""

from __future__ import annotations

import asyncio
import itertools
import time
from dataclasses import dataclass, field
from typing import Any

from ..infra.transport import Limits, TokenBucket

__all__ = ["PermitDesk", "RayGate"]


@dataclass
class _Desk:
    ceiling: int
    requests: TokenBucket | None
    tokens: TokenBucket | None
    held: dict[int, float] = field(default_factory=dict)  # permit -> when it lapses
    changed: asyncio.Condition = field(default_factory=asyncio.Condition)
    peak: int = 0
    granted: int = 0


class PermitDesk:
    """The permits of every endpoint of a run (run as a Ray actor with async methods; a
    plain object in the tests). The first limits asked for an endpoint apply to it."""

    def __init__(self) -> None:
        self._desks: dict[str, _Desk] = {}
        self._ids = itertools.count(1)
        self._owner: dict[int, str] = {}

    def _desk(self, key: str, limits: tuple[int, float | None, float | None]) -> _Desk:
        desk = self._desks.get(key)
        if desk is None:
            ceiling, rpm, tpm = limits
            desk = self._desks[key] = _Desk(max(1, ceiling), TokenBucket(rpm) if rpm else None,
                                            TokenBucket(tpm) if tpm else None)
        return desk

    async def acquire(self, key: str, limits: tuple[int, float | None, float | None],
                      tokens: int, hold: float) -> int:
        desk = self._desk(key, limits)
        async with desk.changed:
            while True:
                now = time.monotonic()
                for permit in [p for p, end in desk.held.items() if end <= now]:
                    self._drop(desk, permit)  # its holder died: the slot comes back
                if len(desk.held) < desk.ceiling:
                    break
                lapse = min(desk.held.values()) - now
                try:
                    await asyncio.wait_for(desk.changed.wait(), timeout=max(lapse, 0.01))
                except asyncio.TimeoutError:
                    pass
            permit = next(self._ids)
            desk.held[permit] = now + hold
            self._owner[permit] = key
            desk.peak = max(desk.peak, len(desk.held))
        try:  # the rate budgets, with the slot already ours (as the local endpoint does)
            await _take(desk.requests, 1)
            await _take(desk.tokens, tokens)
        except BaseException:
            await self.release(permit)
            raise
        desk.granted += 1
        return permit

    def _drop(self, desk: _Desk, permit: int) -> None:
        desk.held.pop(permit, None)
        self._owner.pop(permit, None)

    async def release(self, permit: int) -> None:
        key = self._owner.get(permit)
        if key is None:
            return  # lapsed already
        desk = self._desks[key]
        async with desk.changed:
            self._drop(desk, permit)
            desk.changed.notify()

    def report(self) -> dict[str, dict[str, Any]]:
        """Per endpoint: the ceiling, the most permits held at once, permits granted."""
        return {k: {"ceiling": d.ceiling, "peak": d.peak, "granted": d.granted, "held": len(d.held)}
                for k, d in self._desks.items()}


async def _take(bucket: TokenBucket | None, amount: float) -> None:
    while bucket is not None:
        wait = bucket.wait_for(amount)
        if wait <= 0:
            return
        await asyncio.sleep(wait)


class RayGate:
    """``infra.transport.SharedLimits`` backed by a ``PermitDesk`` actor handle."""

    def __init__(self, desk: Any) -> None:
        self._desk = desk

    async def acquire(self, key: str, limits: Limits, tokens: int, hold: float) -> object:
        ref = self._desk.acquire.remote(
            key, (limits.max_concurrency, limits.requests_per_minute, limits.tokens_per_minute),
            tokens, hold)
        permit: object = await ref
        return permit

    def release(self, permit: object) -> None:
        self._desk.release.remote(permit)  # not awaited: the slot is free once it arrives
