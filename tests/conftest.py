"""Shared fixtures.

- ``optional_data(relpath)``: a file or folder of the larger optional data beside the
  checkout (``../shared/data``); skips the test with a reason when it is absent. The small
  fixtures every test may read live in ``tests/data`` (``batch_helpers.DATA``) and ship with
  the repository.
- ``fake_openai_server``: a local OpenAI-compatible server (``noisegauge.testing.fake_openai``).
- ``fast_retries``: retry sleeps recorded, not slept.
- ``phoenix_url``: a real Phoenix server for the session (extras phoenix, phoenix-test).
- ``cache_guard``'s hooks: no test writes into the user's cache (the run fails if one does;
  what other processes do to that cache meanwhile is not checked).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

# Before any fixture of any scope: the user's cache is never written (cache_guard's doc).
from cache_guard import (  # noqa: F401  (hooks, found here by pytest)
    pytest_configure,
    pytest_configure_node,
    pytest_sessionfinish,
    pytest_testnodedown,
    pytest_unconfigure,
)
from noisegauge.testing import FakeOpenAIServer

ROOT = Path(__file__).resolve().parents[1]
#: Larger optional data (WiCE, BEGIN, NLI sets, ...); absent in a fresh clone.
OPTIONAL_DATA = Path(os.environ.get("NOISEGAUGE_OPTIONAL_DATA") or ROOT.parent / "shared" / "data")


@pytest.fixture(autouse=True)
def isolated_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """Never touch the user's cache: every test gets its own judge-cache file."""
    path = tmp_path / "cache.sqlite3"
    monkeypatch.setenv("NOISEGAUGE_CACHE", str(path))
    yield path


@pytest.fixture
def optional_data() -> Callable[[str], Path]:
    """``optional_data("wice/claim_dev.jsonl")``: the path, or a skip naming what is missing."""

    def get(relpath: str) -> Path:
        path = OPTIONAL_DATA / relpath
        if not path.exists():
            pytest.skip(f"optional data {relpath} not found under {OPTIONAL_DATA} "
                        "(set NOISEGAUGE_OPTIONAL_DATA to its folder to run this test)")
        return path

    return get


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


#: Phoenix's own outbound calls off: the tests stay offline.
PHOENIX_QUIET = {"PHOENIX_TELEMETRY_ENABLED": "false", "DO_NOT_TRACK": "1"}


@pytest.fixture(scope="session")
def phoenix_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """A REAL Phoenix server (``arize-phoenix``) on 127.0.0.1, its SQLite store in a temporary
    folder; started once for the session (each test uses a project of its own)."""
    import socket
    import subprocess
    import sys
    import time
    import urllib.request

    from batch_helpers import require_extra
    from noisegauge.testing.children import spawn, stop

    require_extra("phoenix", "phoenix-test")
    root = tmp_path_factory.mktemp("phoenix")
    ports = []
    for _ in range(2):
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            ports.append(int(s.getsockname()[1]))
    log = open(root / "server.log", "wb")  # noqa: SIM115 (closed in the finally below)
    env = {**os.environ, **PHOENIX_QUIET, "PHOENIX_WORKING_DIR": str(root),
           "PHOENIX_HOST": "127.0.0.1", "PHOENIX_PORT": str(ports[0]),
           "PHOENIX_GRPC_PORT": str(ports[1])}
    # spawn: the server dies with this process, even when it is killed
    proc = spawn([sys.executable, "-m", "phoenix.server.main", "serve"], cwd=root, stdout=log,
                 stderr=subprocess.STDOUT, env=env)
    url = f"http://127.0.0.1:{ports[0]}"
    try:
        deadline = time.monotonic() + 300  # a cold start (migrations) on a loaded machine
        while True:
            try:
                with urllib.request.urlopen(f"{url}/healthz", timeout=2) as r:
                    if r.status == 200:
                        break
            except OSError:
                pass
            if proc.poll() is not None or time.monotonic() > deadline:
                pytest.fail("phoenix server did not start: "
                            + (root / "server.log").read_text(errors="replace")[-3000:])
            time.sleep(0.5)
        yield url
    finally:
        stop(proc, grace=10)
        log.close()
