"""The generic transport layer: retries, Retry-After, timeouts, rate and concurrency limits."""

from __future__ import annotations

import asyncio
import itertools

import pytest

from noisegauge.infra import transport
from noisegauge.infra.transport import (
    Failure,
    Limits,
    RetriesExhausted,
    RetryPolicy,
    call_with_retries,
)

_keys = itertools.count()


class Flaky(Exception):
    def __init__(self, retryable: bool = True, retry_after: float | None = None) -> None:
        self.failure = Failure(retryable, retry_after)


def classify(exc: BaseException) -> Failure:
    return exc.failure if isinstance(exc, Flaky) else Failure(retryable=False)


def scripted(*outcomes: object):
    """An attempt function that raises or returns the given outcomes in turn."""
    it = iter(outcomes)
    calls = []

    async def attempt() -> object:
        calls.append(1)
        value = next(it)
        if isinstance(value, BaseException):
            raise value
        if callable(value):
            return await value()
        return value
    attempt.calls = calls  # type: ignore[attr-defined]
    return attempt


def run(attempt, **kwargs):
    kwargs.setdefault("classify", classify)
    return asyncio.run(call_with_retries(f"key{next(_keys)}", attempt, **kwargs))


def test_transient_errors_are_retried_and_counted(fast_retries):
    assert run(scripted(Flaky(), Flaky(), "ok")) == ("ok", 2)
    assert len(fast_retries) == 2


def test_non_retryable_error_is_raised_at_once(fast_retries):
    attempt = scripted(ValueError("bad request"), "never")
    with pytest.raises(ValueError, match="bad request"):
        run(attempt)
    assert len(attempt.calls) == 1 and fast_retries == []


def test_exhausted_retries_wrap_the_last_error(fast_retries):
    last = Flaky()
    with pytest.raises(RetriesExhausted) as info:
        run(scripted(Flaky(), Flaky(), last), policy=RetryPolicy(max_retries=2))
    assert info.value.last is last and info.value.attempts == 3


def test_retry_after_is_honoured_and_capped(fast_retries):
    policy = RetryPolicy(max_retry_after=5.0)
    run(scripted(Flaky(retry_after=2.5), Flaky(retry_after=600), "ok"), policy=policy)
    assert fast_retries == [2.5, 5.0]


def test_backoff_grows_exponentially_with_jitter_and_a_ceiling():
    policy = RetryPolicy(backoff_base=1.0, backoff_max=8.0)
    for retry, bound in [(1, 1.0), (2, 2.0), (3, 4.0), (4, 8.0), (9, 8.0)]:
        delays = [policy.backoff(retry, None) for _ in range(200)]
        assert all(0 <= d <= bound for d in delays)
        assert max(delays) > bound / 2  # jitter spreads over the range


def test_timeouts_are_retried(fast_retries):
    async def slow() -> str:
        await asyncio.sleep(5)
        return "late"
    attempt = scripted(slow, "ok")
    assert run(attempt, policy=RetryPolicy(timeout=0.05)) == ("ok", 1)


def test_a_run_never_hangs_on_a_dead_endpoint(fast_retries):
    async def hang() -> str:
        await asyncio.sleep(60)
        return "never"
    with pytest.raises(RetriesExhausted) as info:
        run(scripted(hang, hang, hang), policy=RetryPolicy(timeout=0.05, max_retries=2))
    assert isinstance(info.value.last, asyncio.TimeoutError)


def test_retry_after_pauses_the_whole_endpoint(fast_retries):
    key = f"key{next(_keys)}"

    async def main() -> None:
        start = transport._now()
        await call_with_retries(key, scripted(Flaky(retry_after=30.0), "a"), classify=classify)
        endpoint = transport._ENDPOINTS[asyncio.get_running_loop()][key]
        assert endpoint.paused_until == pytest.approx(start + 30.0, abs=1.0)
        # Another request arriving during the pause waits for what is left of it.
        endpoint.paused_until = transport._now() + 12.0
        await call_with_retries(key, scripted("b"), classify=classify)

    asyncio.run(main())
    assert fast_retries[0] == 30.0 and fast_retries[1] == pytest.approx(12.0, abs=0.5)


def test_requests_per_minute_spaces_requests(fast_retries):
    async def main() -> None:
        key = f"key{next(_keys)}"
        limits = Limits(requests_per_minute=2)
        for _ in range(3):
            await call_with_retries(key, scripted("ok"), classify=classify, limits=limits)
    asyncio.run(main())
    # The bucket holds 2 requests; the third waits for one to refill: 30 s at 2 per minute.
    assert len(fast_retries) == 1 and fast_retries[0] == pytest.approx(30.0, rel=0.01)


def test_tokens_per_minute_limits_big_requests(fast_retries):
    async def main() -> None:
        key = f"key{next(_keys)}"
        limits = Limits(tokens_per_minute=1000)
        for _ in range(2):
            await call_with_retries(key, scripted("ok"), classify=classify, limits=limits,
                                    tokens=600)
    asyncio.run(main())
    assert len(fast_retries) == 1 and fast_retries[0] == pytest.approx(12.0, rel=0.01)


def test_concurrency_limit_holds_across_callers():
    in_flight = [0, 0]

    async def work() -> str:
        in_flight[0] += 1
        in_flight[1] = max(in_flight[1], in_flight[0])
        await asyncio.sleep(0.01)
        in_flight[0] -= 1
        return "ok"

    async def main() -> None:
        key = f"key{next(_keys)}"
        await asyncio.gather(*(call_with_retries(key, work, classify=classify,
                                                 limits=Limits(max_concurrency=3))
                               for _ in range(12)))
    asyncio.run(main())
    assert in_flight[1] == 3


def test_endpoints_are_per_event_loop():
    # asyncio.run makes a new loop each time; a semaphore from a dead loop must not be reused.
    async def main() -> int:
        await call_with_retries("shared", scripted("ok"), classify=classify)
        return len(transport._ENDPOINTS[asyncio.get_running_loop()])
    assert asyncio.run(main()) == 1
    assert asyncio.run(main()) == 1
