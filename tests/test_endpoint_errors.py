"""An LLM endpoint that cannot be used (nothing listening, a refused key, a server error)
ends the run with its one-line error and exit 2, and nothing after it: no "Task exception
was never retrieved" and no traceback from the rows still in flight (issue #30)."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
from pathlib import Path

import pytest

import noisegauge
from batch_helpers import ROOT, require_extra
from noisegauge.testing.fake_openai import FakeOpenAIServer

require_extra("openai")

EXAMPLE = ROOT / "examples" / "support_bot.jsonl"


def _closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])  # closed once the socket is


def _score(base_url: str, tmp_path: Path) -> subprocess.CompletedProcess[str]:
    """The command a user types, in a process of its own: what a leaked task prints shows
    when that process collects it."""
    env = {**os.environ, "OPENAI_API_KEY": "sk-wrong", "OPENAI_BASE_URL": base_url,
           "NO_PROXY": "127.0.0.1", "no_proxy": "127.0.0.1",
           "PYTHONPATH": str(Path(noisegauge.__file__).parents[1])}  # the one under test
    # With a cache (the default), the probe waits for the first uncached request: every
    # row in flight then fails on it at once, which is where tasks were left unretrieved.
    return subprocess.run([sys.executable, "-m", "noisegauge", "score", str(EXAMPLE),
                           "--judge", "openai:fake", "--cache", str(tmp_path / "c.sqlite"),
                           "--max-retries", "0", "--out", str(tmp_path / "r.jsonl")],
                          env=env, capture_output=True, text=True, timeout=120)


def _assert_one_error(proc: subprocess.CompletedProcess[str], reason: str) -> None:
    assert proc.returncode == 2, proc.stderr
    assert "Task exception was never retrieved" not in proc.stderr, proc.stderr
    assert "Traceback" not in proc.stderr, proc.stderr
    errors = [line for line in proc.stderr.splitlines() if line.startswith("error: ")]
    assert len(errors) == 1 and reason in errors[0], proc.stderr


def test_nothing_listening(tmp_path: Path) -> None:
    url = f"http://127.0.0.1:{_closed_port()}/v1"
    _assert_one_error(_score(url, tmp_path), "is the server running at that address?")


@pytest.mark.parametrize("status", [401, 500])
def test_a_refusing_server(tmp_path: Path, fake_openai_server: FakeOpenAIServer,
                           status: int) -> None:
    if status == 401:
        fake_openai_server.api_key = "sk-right"  # any other key: HTTP 401
        fake_openai_server.models = set()  # not listed: the probe asks the model, refused
    else:  # the probe takes a 500 for a working server; the rows then stop the run
        fake_openai_server.add_fault(status=500, times=10_000)
    _assert_one_error(_score(fake_openai_server.url, tmp_path), f"HTTP {status}")
