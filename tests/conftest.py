"""Shared fixtures.

- ``shared_data``: the read-only data folder beside the checkout (``../shared/data``).
- ``fake_openai_server``: a local OpenAI-compatible server (``noisegauge.testing.fake_openai``).
- ``fast_retries``: retry sleeps recorded, not slept.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from noisegauge.testing import FakeOpenAIServer

ROOT = Path(__file__).resolve().parents[1]
SHARED = ROOT.parent / "shared"


@pytest.fixture(autouse=True)
def isolated_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """Never touch the user's cache: every test gets its own judge-cache file."""
    path = tmp_path / "cache.sqlite3"
    monkeypatch.setenv("NOISEGAUGE_CACHE", str(path))
    yield path


@pytest.fixture
def shared_data() -> Path:
    path = SHARED / "data"
    if not path.is_dir():
        pytest.skip(f"shared data not found at {path}")
    return path


@pytest.fixture
def fake_openai_server(monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeOpenAIServer]:
    """A started fake server (judge-like responder, no latency); ``.url`` is the base URL.

    Tune it in the test: ``server.latency = 0.1``, ``server.json_schema = False``,
    ``server.add_fault(status=429, retry_after=0.01)``, ``server.responder = ...``.
    """
    monkeypatch.setenv("NO_PROXY", "127.0.0.1,localhost")  # a CI proxy must not intercept
    monkeypatch.setenv("no_proxy", "127.0.0.1,localhost")
    with FakeOpenAIServer() as server:
        yield server


@pytest.fixture
def fast_retries(monkeypatch: pytest.MonkeyPatch) -> list[float]:
    """Retry, pause and rate-limit waits of ``noisegauge.infra.transport`` run on a virtual
    clock (instant); returns the list of delays that were asked for, in order."""
    import asyncio
    import time

    from noisegauge.infra import transport

    delays: list[float] = []
    offset = [0.0]

    async def virtual_sleep(delay: float) -> None:
        delays.append(delay)
        offset[0] += max(delay, 0.0)
        await asyncio.sleep(0)

    monkeypatch.setattr(transport, "_sleep", virtual_sleep)
    monkeypatch.setattr(transport, "_now", lambda: time.monotonic() + offset[0])
    return delays
