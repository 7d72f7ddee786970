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


# -- adaptive concurrency, the timeout clock, and no double work after a timeout -------------

class SlotServer:
    """A simulated server with ``slots`` workers: requests queue for a worker, and a
    request the client stops waiting for keeps its worker until it is done (as a real
    server does). ``log`` has (name, start, end) per request served."""

    def __init__(self, slots: int, service: float) -> None:
        self.slots = asyncio.Semaphore(slots)
        self.service = service
        self.log: list[tuple[str, float, float]] = []
        self.jobs: set[asyncio.Task[str]] = set()

    async def _serve(self, name: str) -> str:
        async with self.slots:
            start = asyncio.get_running_loop().time()
            await asyncio.sleep(self.service)
            self.log.append((name, start, asyncio.get_running_loop().time()))
        return name

    def attempt(self, name: str):
        async def send() -> str:
            job = asyncio.ensure_future(self._serve(name))
            self.jobs.add(job)
            return await asyncio.shield(job)  # the client's timeout does not stop the server
        return send


def test_limit_halves_when_latency_grows_with_requests_in_flight():
    server = SlotServer(slots=1, service=0.01)

    async def main() -> transport.EndpointState | None:
        await asyncio.gather(*(call_with_retries("serial", server.attempt(f"r{i}"),
                                                 classify=classify, limits=Limits(8))
                               for i in range(48)))
        return transport.endpoint_state("serial")
    state = asyncio.run(main())
    assert state is not None and state.ceiling == 8
    assert state.lowest <= 2 and state.decreases >= 2


def test_limit_stays_at_the_maximum_when_the_server_keeps_up():
    server = SlotServer(slots=8, service=0.01)

    async def main() -> transport.EndpointState | None:
        await asyncio.gather(*(call_with_retries("parallel", server.attempt(f"r{i}"),
                                                 classify=classify, limits=Limits(8))
                               for i in range(48)))
        return transport.endpoint_state("parallel")
    state = asyncio.run(main())
    assert state is not None and (state.limit, state.lowest, state.decreases) == (8, 8, 0)


def test_fixed_limits_do_not_adapt():
    server = SlotServer(slots=1, service=0.01)

    async def main() -> transport.EndpointState | None:
        await asyncio.gather(*(call_with_retries("fixed", server.attempt(f"r{i}"),
                                                 classify=classify,
                                                 limits=Limits(4, adaptive=False))
                               for i in range(24)))
        return transport.endpoint_state("fixed")
    state = asyncio.run(main())
    assert state is not None and state.lowest == 4 and state.decreases == 0


def test_the_timeout_clock_starts_when_the_request_is_sent():
    # One slot, three requests of 0.2 s each with a 0.3 s timeout: the third waits 0.4 s in
    # our own queue, which must not count.
    server = SlotServer(slots=1, service=0.2)

    async def main() -> list[tuple[str, int]]:
        return list(await asyncio.gather(*(
            call_with_retries("queue", server.attempt(f"r{i}"), classify=classify,
                              policy=RetryPolicy(timeout=0.3, max_retries=0),
                              limits=Limits(1)) for i in range(3))))
    assert asyncio.run(main()) == [("r0", 0), ("r1", 0), ("r2", 0)]


def test_a_timed_out_request_is_not_sent_again_while_it_may_still_run():
    # The server takes 0.5 s, the client waits 0.2 s: the retry must wait until the first
    # copy is done (its slot is held as a ghost for up to 0.4 s more), not run beside it.
    server = SlotServer(slots=4, service=0.5)
    report = transport.CallReport()

    async def main() -> tuple[str, int]:
        return await call_with_retries(
            "ghost", server.attempt("same"), classify=classify, limits=Limits(4),
            policy=RetryPolicy(timeout=0.2, ghost_hold=0.4, backoff_base=0.0), report=report)
    with pytest.raises(RetriesExhausted) as info:  # every copy times out, one after another
        asyncio.run(main())
    assert info.value.attempts == 3 and info.value.timeouts == report.timeouts == 3
    starts = sorted((start, end) for _, start, end in server.log)
    assert len(starts) >= 2
    for (_, end), (start, _) in itertools.pairwise(starts):
        assert start >= end - 0.01, "a retry ran while the timed-out copy was still running"


def test_a_later_answer_releases_a_ghost_early():
    # A queueing server answers in order: once a request sent after the timed-out one is
    # answered, the timed-out one is done too, and its retry goes without waiting the hold.
    async def main() -> float:
        slow = SlotServer(slots=1, service=0.3)
        fast = SlotServer(slots=1, service=0.01)
        limits = Limits(2, adaptive=False)
        policy = RetryPolicy(timeout=0.1, ghost_hold=30.0, backoff_base=0.0)
        loop = asyncio.get_running_loop()
        start = loop.time()
        first = asyncio.ensure_future(call_with_retries(
            "early", scripted(slow.attempt("slow"), fast.attempt("retry")),
            classify=classify, limits=limits, policy=policy))
        await asyncio.sleep(0.15)  # "slow" has timed out and left a ghost
        await call_with_retries("early", fast.attempt("other"), classify=classify,
                                limits=limits, policy=policy)
        assert await first == ("retry", 1)
        return loop.time() - start
    assert asyncio.run(main()) < 5.0  # far less than the 30 s hold


def test_timeouts_are_retried_fewer_times_than_other_errors():
    async def hang() -> str:
        await asyncio.sleep(60)
        return "never"
    attempt = scripted(*[hang] * 10)
    with pytest.raises(RetriesExhausted) as info:
        run(attempt, policy=RetryPolicy(timeout=0.02, max_retries=6, max_timeout_retries=1,
                                        ghost_hold=0.01))
    assert info.value.attempts == 2 and info.value.timeouts == 2
    assert isinstance(info.value.last, transport.AttemptTimeoutError)
    assert "0.02 s" in str(info.value.last)


def test_a_cancelled_call_gives_its_slot_back():
    async def main() -> int:
        key = f"key{next(_keys)}"
        never = asyncio.ensure_future(call_with_retries(
            key, scripted(lambda: asyncio.sleep(60)), classify=classify, limits=Limits(1)))
        await asyncio.sleep(0.01)
        never.cancel()
        with pytest.raises(asyncio.CancelledError):
            await never
        await call_with_retries(key, scripted("ok"), classify=classify, limits=Limits(1))
        return transport._ENDPOINTS[asyncio.get_running_loop()][key].active
    assert asyncio.run(main()) == 0
