"""Merging requests that arrive together into one call, within one sample.

The orchestrator asks for the response's and the reference's claims at the same moment,
then for two verdict matrices at the same moment (both against the same chunks). A judge
that sees those requests one by one pays for two calls, sends every chunk twice, and waits
two latencies where one would do. ``Coalescer.submit`` collects the requests made in the
same event-loop step and hands them to one batch function.

Only requests reported to the same usage meter (``metered()``: one sample) are merged, so
each sample's calls, tokens and cost stay its own, and a failure stays within its sample.
Merging is opportunistic: a request that arrives a step later simply forms its own batch.
"""

from __future__ import annotations

import asyncio
import contextvars
from collections.abc import Awaitable, Callable, Hashable
from typing import Any, Generic, TypeVar

from .. import base

__all__ = ["Coalescer"]

Item = TypeVar("Item")
Result = TypeVar("Result")


class Coalescer(Generic[Item, Result]):
    """``await submit(item, group)`` -> ``run(items)[i]`` for the batch it joined.

    ``group`` keeps apart items that must not share a call (e.g. different questions).
    """

    def __init__(self, run: Callable[[list[Item]], Awaitable[list[Result]]]) -> None:
        self._run = run
        self._pending: dict[tuple[Any, ...], list[tuple[Item, asyncio.Future[Result]]]] = {}
        self._running: set[asyncio.Task[None]] = set()

    async def submit(self, item: Item, group: Hashable = None) -> Result:
        loop = asyncio.get_running_loop()
        key = (id(loop), id(base._CURRENT.get()), group)
        future: asyncio.Future[Result] = loop.create_future()
        batch = self._pending.get(key)
        if batch is None:
            batch = self._pending[key] = []
            # Runs after every task that is ready now has had its step, in the caller's
            # context, so the batch's usage goes to the caller's meter.
            loop.call_soon(self._flush, key, context=contextvars.copy_context())
        batch.append((item, future))
        return await future

    def _flush(self, key: tuple[Any, ...]) -> None:
        batch = self._pending.pop(key)
        task = asyncio.get_running_loop().create_task(self._execute(batch))
        self._running.add(task)  # a task nobody references can be collected mid-flight
        task.add_done_callback(self._running.discard)

    async def aclose(self) -> None:
        """Cancel the batches still running in this loop and wait for them: their callers
        are gone (a stopped run), and a batch left running would fail on the closed client
        after the loop ended, printing "Task exception was never retrieved"."""
        loop = asyncio.get_running_loop()
        mine = [t for t in self._running if t.get_loop() is loop and not t.done()]
        for task in mine:
            task.cancel()
        await asyncio.gather(*mine, return_exceptions=True)

    async def _execute(self, batch: list[tuple[Item, asyncio.Future[Result]]]) -> None:
        live = [(item, fut) for item, fut in batch if not fut.done()]
        if not live:
            return
        try:
            results = await self._run([item for item, _ in live])
        except Exception as exc:
            for _, fut in live:
                if not fut.done():
                    fut.set_exception(exc)
            return
        except BaseException:
            for _, fut in live:
                fut.cancel()
            raise
        if len(results) != len(live):  # a bug in the batch function; no caller may wait forever
            error = RuntimeError(f"internal error: a batch of {len(live)} requests got "
                                 f"{len(results)} results")
            for _, fut in live:
                if not fut.done():
                    fut.set_exception(error)
            return
        for (_, fut), result in zip(live, results, strict=True):
            if not fut.done():
                fut.set_result(result)
