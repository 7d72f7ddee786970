"""The bridges between sync and async code: ``run_sync`` (async from sync; it never patches a
running event loop) and ``in_daemon_thread`` (sync from async, abandonable)."""

from __future__ import annotations

import asyncio
import contextvars
import threading
from collections.abc import Callable, Coroutine
from typing import Any, TypeVar

from .errors import SyncInAsyncError

T = TypeVar("T")

__all__ = ["in_daemon_thread", "run_sync"]


def run_sync(coro: Coroutine[Any, Any, T], *, hint: str = "await the async variant") -> T:
    """Run ``coro`` to completion from synchronous code.

    Inside a running loop (Jupyter, FastAPI, pytest-asyncio) this raises instead of
    nesting loops, because nesting is what breaks users' applications (ragas #1819, #1270).
    """
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        running = False
    else:
        running = True
    if not running:  # outside the except block: an error of ``coro`` is not chained to it
        return asyncio.run(coro)
    coro.close()
    raise SyncInAsyncError(
        "this synchronous call was made inside a running event loop; "
        f"{hint} instead (top-level `await` works in Jupyter)."
    )


async def in_daemon_thread(fn: Callable[..., T], *args: Any) -> T:
    """``fn(*args)`` in a new daemon thread, awaited without blocking the loop.

    Unlike ``asyncio.to_thread`` (the loop's default executor, which ``asyncio.run`` joins on
    the way out, and an executor's threads, which the interpreter joins at exit), a thread
    that a timeout abandons here keeps nobody waiting: the run finishes and the process exits
    while a hung pipeline call is still stuck.
    """
    loop = asyncio.get_running_loop()
    future: asyncio.Future[T] = loop.create_future()
    context = contextvars.copy_context()

    def deliver(setter: Callable[[Any], None], value: Any) -> None:
        if not future.done():  # cancelled by a timeout: the answer is dropped
            setter(value)

    def work() -> None:
        try:
            result = context.run(fn, *args)
        except BaseException as exc:  # SystemExit, KeyboardInterrupt too: the caller decides
            outcome: tuple[Callable[[Any], None], Any] = (future.set_exception, exc)
        else:
            outcome = (future.set_result, result)
        try:
            loop.call_soon_threadsafe(deliver, *outcome)
        except RuntimeError:  # the loop is closed: the run ended without this answer
            pass

    threading.Thread(target=work, name="noisegauge-pipeline", daemon=True).start()
    return await future
