"""The coalescer never leaves a caller waiting: a batch answered short fails every caller."""

from __future__ import annotations

import asyncio

import pytest

from noisegauge.judges.llm.coalesce import Coalescer


def test_requests_made_together_share_one_batch() -> None:
    batches: list[list[int]] = []

    async def run(items: list[int]) -> list[int]:
        batches.append(items)
        return [i * 10 for i in items]

    async def main() -> list[int]:
        c: Coalescer[int, int] = Coalescer(run)
        return list(await asyncio.gather(*(c.submit(i) for i in range(3))))

    assert asyncio.run(main()) == [0, 10, 20]
    assert batches == [[0, 1, 2]]


@pytest.mark.parametrize("returned", [2, 4])
def test_a_batch_answered_short_or_long_fails_every_caller_instead_of_hanging(
        returned: int) -> None:
    async def run(items: list[int]) -> list[int]:
        return list(range(returned))  # a bug: not one result per item

    async def main() -> list[BaseException | int]:
        c: Coalescer[int, int] = Coalescer(run)
        calls = asyncio.gather(*(c.submit(i) for i in range(3)), return_exceptions=True)
        return list(await asyncio.wait_for(calls, timeout=5))

    results = asyncio.run(main())
    assert all(isinstance(r, RuntimeError) and "3 requests got" in str(r) for r in results)
