"""The one sync-over-async bridge. It never patches a running event loop."""

from __future__ import annotations

import asyncio
from collections.abc import Coroutine
from typing import Any, TypeVar

from .errors import SyncInAsyncError

T = TypeVar("T")

__all__ = ["run_sync"]


def run_sync(coro: Coroutine[Any, Any, T], *, hint: str = "await the async variant") -> T:
    """Run ``coro`` to completion from synchronous code.

    Inside a running loop (Jupyter, FastAPI, pytest-asyncio) this raises instead of
    nesting loops, because nesting is what breaks users' applications (ragas #1819, #1270).
    """
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(coro)
    coro.close()
    raise SyncInAsyncError(
        "this synchronous call was made inside a running event loop; "
        f"{hint} instead (top-level `await` works in Jupyter)."
    )
