"""Robust calls to a remote endpoint, written once for every provider.

What a provider gets from ``call_with_retries``:

- a concurrency limit per endpoint (an ``asyncio.Semaphore`` keyed by e.g. base_url+model,
  shared by every judge that talks to the same endpoint in the same event loop);
- optional requests-per-minute and tokens-per-minute limits (token buckets);
- retries with exponential backoff and full jitter for errors the provider calls retryable
  (429, 5xx, timeouts, dropped connections), honouring a server's Retry-After; a 429 with
  Retry-After pauses the whole endpoint, not just the one request;
- a hard per-attempt timeout, so a run never hangs: the worst case of one call is bounded
  by ``(max_retries + 1) * timeout`` plus the backoff sleeps.

The provider only classifies exceptions (``classify(exc) -> Failure``); it never sleeps or
loops itself.
"""

from __future__ import annotations

import asyncio
import random
import time
import weakref
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import TypeVar

__all__ = ["Failure", "Limits", "RetriesExhausted", "RetryPolicy", "call_with_retries"]

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
    #: Seconds one attempt may take before it is abandoned and retried.
    timeout: float = 120.0

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


@dataclass(frozen=True)
class Failure:
    """A provider's reading of an exception."""

    retryable: bool
    #: Seconds the server asked us to wait (Retry-After), if it said.
    retry_after: float | None = None


class RetriesExhausted(Exception):
    """Every attempt failed with a retryable error; ``last`` is the final one."""

    def __init__(self, last: BaseException, attempts: int) -> None:
        self.last = last
        self.attempts = attempts
        super().__init__(f"gave up after {attempts} attempts")


class _Bucket:
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


class _Endpoint:
    def __init__(self, limits: Limits) -> None:
        self.semaphore = asyncio.Semaphore(limits.max_concurrency)
        self.requests = _Bucket(limits.requests_per_minute) if limits.requests_per_minute else None
        self.tokens = _Bucket(limits.tokens_per_minute) if limits.tokens_per_minute else None
        self.paused_until = 0.0

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


# Semaphores belong to one event loop; ``run_sync`` creates a loop per call, so endpoints
# are kept per loop and dropped with it.
_ENDPOINTS: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, dict[str, _Endpoint]] = (
    weakref.WeakKeyDictionary())


def _endpoint(key: str, limits: Limits) -> _Endpoint:
    """The shared state of ``key`` in the running loop; the first caller's limits apply."""
    per_loop = _ENDPOINTS.setdefault(asyncio.get_running_loop(), {})
    if key not in per_loop:
        per_loop[key] = _Endpoint(limits)
    return per_loop[key]


async def call_with_retries(key: str, attempt: Callable[[], Awaitable[T]], *,
                            classify: Callable[[BaseException], Failure],
                            policy: RetryPolicy = RetryPolicy(), limits: Limits = Limits(),
                            tokens: int = 0) -> tuple[T, int]:
    """Run ``attempt()`` under the endpoint's limits, retrying what ``classify`` allows.

    Returns ``(result, retries)``. A non-retryable error is raised as it is; when the
    retries run out, ``RetriesExhausted`` wraps the last error. ``tokens`` is the
    caller's estimate for the tokens-per-minute limit.
    """
    endpoint = _endpoint(key, limits)
    retries = 0
    while True:
        await endpoint.admit(tokens)
        async with endpoint.semaphore:
            try:
                return await asyncio.wait_for(attempt(), policy.timeout), retries
            except asyncio.TimeoutError as exc:
                error: BaseException = exc
                failure = Failure(retryable=True)
            except Exception as exc:
                error = exc
                failure = classify(exc)
        if not failure.retryable:
            raise error
        if retries >= policy.max_retries:
            raise RetriesExhausted(error, retries + 1) from None
        retries += 1
        delay = policy.backoff(retries, failure.retry_after)
        if failure.retry_after is not None:
            # The server asked everyone to wait: hold back the other requests too.
            endpoint.paused_until = max(endpoint.paused_until, _now() + delay)
        await _sleep(delay)
