"""Robust calls to a remote endpoint, written once for every provider.

What a provider gets from ``call_with_retries``:

- a concurrency limit per endpoint (keyed by e.g. base_url+model, shared by every judge
  that talks to the same endpoint in the same event loop) that adapts to the server
  (``_Endpoint``: AIMD between 1 and ``max_concurrency``);
- optional requests-per-minute and tokens-per-minute limits (token buckets);
- retries with exponential backoff and full jitter for errors the provider calls retryable
  (429, 5xx, timeouts, dropped connections), honouring a server's Retry-After; a 429 with
  Retry-After pauses the whole endpoint, not just the one request;
- a per-attempt timeout whose clock starts when the request is sent (time spent waiting
  for one of our own slots or for a rate limit does not count);
- no silent double work after a timeout (see "Timeouts" below).

The provider only classifies exceptions (``classify(exc) -> Failure``); it never sleeps or
loops itself.

Adaptive concurrency. A server with one slot (llama.cpp, llama-cpp-python) queues what we
send; with 8 in flight every answer waits for 7 others, and the queue time counts against
our timeout. So the limit starts at ``max_concurrency`` and is halved when a request times
out, or when latency grows with the number in flight. Latency is measured in seconds per
estimated token of the request, and "grows" means either of:

- a least-squares line through the last answers' (requests in flight when sent, latency)
  predicts at least twice a lone request's latency at the current limit (needs answers
  sent at different loads, as at the start of a run or after a change of the limit);
- at a steady load, the median latency of the latest answers is at least three times the
  median of answers to requests that were alone in flight (the first request of a run
  always is; three, not two, leaves room for requests of different kinds).

Each answer that shows neither grows the limit by ``1 / (2 * limit)`` (about one more slot
per two limits' worth of answers), up to ``max_concurrency``. Only requests sent after a
decrease can cause the next one, so one burst of timeouts halves the limit once.

Timeouts. A request we stop waiting for may still be running at the server; sending it
again at once would make the server do the same work twice (with the same seed, for the
same answer). So a timed-out request keeps its slot as a *ghost* until the server shows
it is past it (an answer arrives to a request sent after it: a queueing server works in
order) or ``ghost_hold`` seconds pass (default: the timeout), and its retry waits for that
moment. An error answer (5xx, 429) or a dropped connection means the server is not working
on it, so those are retried after the usual backoff. Timeouts are retried at most
``max_timeout_retries`` times: each try costs a full timeout, and a request that timed out
twice will most likely do so again.
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
import math
import random
import statistics
import time
import weakref
from collections.abc import Awaitable, Callable, Iterator
from contextvars import ContextVar
from dataclasses import dataclass
from typing import Protocol, TypeVar

__all__ = ["AttemptTimeoutError", "CallReport", "EndpointState", "Failure", "Limits",
           "RetriesExhausted", "RetryPolicy", "SharedLimits", "TokenBucket",
           "call_with_retries", "endpoint_state", "shared_limits"]

T = TypeVar("T")

# Tests patch these two to run waits on a virtual clock instead of sleeping.
_sleep: Callable[[float], Awaitable[None]] = asyncio.sleep
_now: Callable[[], float] = time.monotonic


@dataclass(frozen=True)
class RetryPolicy:
    """How often and how patiently to retry one call."""

    #: Retries after the first attempt (so at most ``max_retries + 1`` attempts).
    max_retries: int = 6
    #: First backoff in seconds; doubles each retry, with full jitter.
    backoff_base: float = 0.5
    #: Longest backoff between two attempts.
    backoff_max: float = 30.0
    #: Longest Retry-After we honour; a server asking for more gets this.
    max_retry_after: float = 120.0
    #: Seconds one attempt may take, counted from when it is sent.
    timeout: float = 120.0
    #: Re-sends of an attempt that timed out (within ``max_retries``).
    max_timeout_retries: int = 2
    #: Longest wait for a timed-out request to end at the server before it is re-sent
    #: (None: ``timeout``).
    ghost_hold: float | None = None

    def backoff(self, retry: int, retry_after: float | None) -> float:
        """Delay before retry number ``retry`` (1-based)."""
        if retry_after is not None and retry_after >= 0:
            return min(retry_after, self.max_retry_after)
        return random.uniform(0, min(self.backoff_max, self.backoff_base * 2 ** (retry - 1)))


@dataclass(frozen=True)
class Limits:
    """Per-endpoint limits. ``None`` means no limit."""

    max_concurrency: int = 16
    requests_per_minute: float | None = None
    tokens_per_minute: float | None = None
    #: Adapt the concurrency to the server (module docstring); False: always the maximum.
    adaptive: bool = True


@dataclass(frozen=True)
class Failure:
    """A provider's reading of an exception."""

    retryable: bool
    #: Seconds the server asked us to wait (Retry-After), if it said.
    retry_after: float | None = None
    #: The client library gave up waiting: the request may still run at the server.
    timed_out: bool = False


@dataclass
class CallReport:
    """What one ``call_with_retries`` went through (filled in as it goes)."""

    retries: int = 0
    timeouts: int = 0


@dataclass(frozen=True)
class EndpointState:
    """A snapshot of an endpoint's adaptive limit (for accounting)."""

    limit: int
    ceiling: int
    lowest: int
    decreases: int


class AttemptTimeoutError(asyncio.TimeoutError):
    """One attempt got no answer within ``seconds`` of being sent."""

    def __init__(self, seconds: float) -> None:
        self.seconds = seconds
        super().__init__(f"no answer within {seconds:g} s")


class RetriesExhausted(Exception):
    """Every attempt failed with a retryable error; ``last`` is the final one."""

    def __init__(self, last: BaseException, attempts: int, timeouts: int = 0) -> None:
        self.last = last
        self.attempts = attempts
        self.timeouts = timeouts
        super().__init__(f"gave up after {attempts} attempts")


class TokenBucket:
    """Token bucket refilled continuously at ``per_minute / 60`` per second."""

    def __init__(self, per_minute: float) -> None:
        self.capacity = per_minute
        self.level = per_minute
        self.stamp = _now()

    def wait_for(self, amount: float) -> float:
        """Seconds until ``amount`` is available; takes it when that is 0."""
        now = _now()
        self.level = min(self.capacity, self.level + (now - self.stamp) * self.capacity / 60)
        self.stamp = now
        amount = min(amount, self.capacity)  # a request larger than a minute's budget still runs
        if self.level >= amount:
            self.level -= amount
            return 0.0
        return (amount - self.level) * 60 / self.capacity


class _Ghost:
    """A timed-out request that may still occupy the server."""

    def __init__(self, sent: float) -> None:
        self.sent = sent
        self.done = asyncio.Event()
        self.timer: asyncio.TimerHandle | None = None


class _Endpoint:
    _MIN_SAMPLES = 8

    def __init__(self, limits: Limits) -> None:
        self.ceiling = max(1, limits.max_concurrency)
        self.adaptive = limits.adaptive
        self.limit = float(self.ceiling)
        self.lowest = self.ceiling
        self.decreases = 0
        self.active = 0  # sent and unanswered, ghosts included
        self.requests = TokenBucket(limits.requests_per_minute) if limits.requests_per_minute else None
        self.tokens = TokenBucket(limits.tokens_per_minute) if limits.tokens_per_minute else None
        self.paused_until = 0.0
        self._waiters: collections.deque[asyncio.Future[None]] = collections.deque()
        self._ghosts: list[_Ghost] = []
        self._samples: collections.deque[tuple[int, float]] = collections.deque(maxlen=64)
        self._alone: collections.deque[float] = collections.deque(maxlen=16)
        self._fresh = 0               # answers to requests sent since the last decrease
        self._changed = -math.inf     # when the limit was last decreased

    @property
    def capacity(self) -> int:
        return max(1, int(self.limit))

    def state(self) -> EndpointState:
        return EndpointState(self.capacity, self.ceiling, self.lowest, self.decreases)

    async def admit(self, tokens: int) -> None:
        """Wait for a pause to end and for the rate buckets to allow one request."""
        while True:
            wait = self.paused_until - _now()
            if wait <= 0 and self.requests is not None:
                wait = self.requests.wait_for(1)
            if wait <= 0 and self.tokens is not None:
                wait = self.tokens.wait_for(tokens)
                if wait > 0 and self.requests is not None:
                    self.requests.level += 1  # give back the request slot we took
            if wait <= 0:
                return
            await _sleep(wait)

    # -- slots ---------------------------------------------------------------------------

    async def acquire(self) -> None:
        """Take a slot, in arrival order."""
        if not self._waiters and self.active < self.capacity:
            self.active += 1
            return
        waiter = asyncio.get_running_loop().create_future()
        self._waiters.append(waiter)
        try:
            await waiter
        except asyncio.CancelledError:
            if waiter.done() and not waiter.cancelled():
                self.release()  # the slot was handed over as we were cancelled
            raise

    def release(self) -> None:
        self.active -= 1
        self._wake()

    def _wake(self) -> None:
        while self._waiters and self.active < self.capacity:
            waiter = self._waiters.popleft()
            if not waiter.done():
                self.active += 1  # handed over directly: no newcomer can take it first
                waiter.set_result(None)

    # -- ghosts --------------------------------------------------------------------------

    def haunt(self, sent: float, hold: float) -> _Ghost:
        """Keep a timed-out request's slot until the server is past it or ``hold`` ends."""
        ghost = _Ghost(sent)
        ghost.timer = asyncio.get_running_loop().call_later(hold, self._lay, ghost)
        self._ghosts.append(ghost)
        return ghost

    def _lay(self, ghost: _Ghost) -> None:
        if ghost in self._ghosts:
            self._ghosts.remove(ghost)
            if ghost.timer is not None:
                ghost.timer.cancel()
            ghost.done.set()
            self.release()

    # -- adapting ------------------------------------------------------------------------

    def answered(self, sent: float, latency: float, load: int, tokens: int) -> None:
        """A request sent at ``sent`` with ``load`` in flight was answered after ``latency``."""
        for ghost in [g for g in self._ghosts if g.sent < sent]:
            self._lay(ghost)  # a later request was answered: the server is past it
        if not self.adaptive:
            return
        unit = latency / max(1, tokens)
        self._samples.append((load, unit))
        if load == 1:
            self._alone.append(unit)
        if sent < self._changed:
            return  # sent under the old limit: says nothing about the new one
        self._fresh += 1
        if self._fresh >= max(4, self.capacity) and self._queueing():
            self._decrease()
        elif self.limit < self.ceiling:
            self.limit = min(float(self.ceiling), self.limit + 1 / (2 * self.limit))
            self._wake()

    def timed_out(self, sent: float) -> None:
        if self.adaptive and sent >= self._changed:
            self._decrease()

    def _decrease(self) -> None:
        self.limit = max(1.0, self.limit / 2)
        self._changed = _now()
        self._fresh = 0
        self.decreases += 1
        self.lowest = min(self.lowest, self.capacity)

    def _queueing(self) -> bool:
        """True when latency grows with load (module docstring)."""
        if self.capacity < 2:
            return False
        recent = [y for n, y in list(self._samples)[-max(4, self.capacity):] if n >= 2]
        if self._alone and len(recent) >= 4 and (
                statistics.median(recent) >= 3 * statistics.median(self._alone)):
            return True
        if len(self._samples) < self._MIN_SAMPLES:
            return False
        xs = [float(n) for n, _ in self._samples]
        ys = [y for _, y in self._samples]
        mx, my = sum(xs) / len(xs), sum(ys) / len(ys)
        sxx = sum((x - mx) ** 2 for x in xs)
        if sxx == 0:
            return False  # every sample at one load: no slope to read
        slope = sum((x - mx) * (y - my) for x, y in zip(xs, ys, strict=True)) / sxx
        if slope <= 0:
            return False
        alone = max(my + slope * (1 - mx), 1e-12)
        return my + slope * (self.capacity - mx) >= 2 * alone


class SharedLimits(Protocol):
    """Limits held by someone else for many processes (e.g. every worker of a Ray cluster):
    a permit per request on top of this process's own limits. ``acquire`` waits for a
    free slot and the rate budgets; ``hold`` is the longest the permit may be kept (a
    process that dies holding it gives it back then); ``release`` must not block."""

    async def acquire(self, key: str, limits: Limits, tokens: int, hold: float) -> object: ...

    def release(self, permit: object) -> None: ...


_SHARED: ContextVar[SharedLimits | None] = ContextVar("noisegauge_shared_limits", default=None)


@contextlib.contextmanager
def shared_limits(gate: SharedLimits | None) -> Iterator[None]:
    """Every ``call_with_retries`` in this context (and in tasks started from it) also
    takes a permit from ``gate`` for each attempt it sends."""
    token = _SHARED.set(gate)
    try:
        yield
    finally:
        _SHARED.reset(token)


# Futures and events belong to one event loop; ``run_sync`` creates a loop per call, so
# endpoints are kept per loop and dropped with it.
_ENDPOINTS: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, dict[str, _Endpoint]] = (
    weakref.WeakKeyDictionary())


def _endpoint(key: str, limits: Limits) -> _Endpoint:
    """The shared state of ``key`` in the running loop; the first caller's limits apply."""
    per_loop = _ENDPOINTS.setdefault(asyncio.get_running_loop(), {})
    if key not in per_loop:
        per_loop[key] = _Endpoint(limits)
    return per_loop[key]


def endpoint_state(key: str) -> EndpointState | None:
    """The adaptive limit of ``key`` in the running loop (None before its first call)."""
    endpoint = _ENDPOINTS.get(asyncio.get_running_loop(), {}).get(key)
    return endpoint.state() if endpoint is not None else None


async def call_with_retries(key: str, attempt: Callable[[], Awaitable[T]], *,
                            classify: Callable[[BaseException], Failure],
                            policy: RetryPolicy = RetryPolicy(), limits: Limits = Limits(),
                            tokens: int = 0, report: CallReport | None = None) -> tuple[T, int]:
    """Run ``attempt()`` under the endpoint's limits, retrying what ``classify`` allows.

    Returns ``(result, retries)``. A non-retryable error is raised as it is; when the
    retries run out, ``RetriesExhausted`` wraps the last error. ``tokens`` is the
    caller's estimate of the request's size (tokens-per-minute limit, latency per token).
    ``report`` receives the retry and timeout counts, also when the call fails.
    """
    endpoint = _endpoint(key, limits)
    report = report if report is not None else CallReport()
    hold = policy.ghost_hold if policy.ghost_hold is not None else policy.timeout
    gate = _SHARED.get()
    while True:
        await endpoint.admit(tokens)
        await endpoint.acquire()
        permit = None
        if gate is not None:
            try:  # the cluster's slot too; waiting for it does not count against the timeout
                permit = await gate.acquire(key, limits, tokens, policy.timeout + 30.0)
            except BaseException:
                endpoint.release()
                raise
        sent, load = _now(), endpoint.active
        try:
            result = await asyncio.wait_for(attempt(), policy.timeout)
        except asyncio.TimeoutError:
            error: BaseException = AttemptTimeoutError(policy.timeout)
            failure = Failure(retryable=True, timed_out=True)
        except Exception as exc:
            error, failure = exc, classify(exc)
        except BaseException:
            endpoint.release()  # cancelled: the connection is closed with the task
            raise
        else:
            endpoint.release()
            endpoint.answered(sent, _now() - sent, load, tokens)
            return result, report.retries
        finally:
            # The attempt is over (a timed-out one keeps only its local ghost slot).
            if gate is not None and permit is not None:
                gate.release(permit)
        ghost = None
        if failure.timed_out:
            report.timeouts += 1
            ghost = endpoint.haunt(sent, hold)  # keeps the slot
            endpoint.timed_out(sent)
        else:
            endpoint.release()
        if not failure.retryable:
            raise error
        if report.retries >= policy.max_retries or report.timeouts > policy.max_timeout_retries:
            raise RetriesExhausted(error, report.retries + 1, report.timeouts) from None
        report.retries += 1
        delay = policy.backoff(report.retries, failure.retry_after)
        if failure.retry_after is not None:
            # The server asked everyone to wait: hold back the other requests too.
            endpoint.paused_until = max(endpoint.paused_until, _now() + delay)
        if ghost is not None:
            await ghost.done.wait()  # never two copies of this request at the server
        await _sleep(delay)
