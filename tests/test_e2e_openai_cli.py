"""Issue 3's done-criterion, end to end: the real CLI, the real openai SDK, real HTTP to a
local OpenAI-compatible server, on the bundled example data — with and without JSON Schema."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from batch_helpers import require_extra
from noisegauge.judges.llm.probe import PROBE_TEXT
from noisegauge.testing import FakeOpenAIServer

require_extra("openai")

ROOT = Path(__file__).resolve().parents[1]
EXAMPLES = ROOT / "examples" / "support_bot.jsonl"


@pytest.mark.parametrize("json_schema", [True, False], ids=["json_schema", "no_json_schema"])
def test_score_examples_with_openai_judge(fake_openai_server: FakeOpenAIServer, tmp_path: Path,
                                          json_schema: bool) -> None:
    fake_openai_server.json_schema = json_schema
    out = tmp_path / "out.jsonl"
    env = {**os.environ, "OPENAI_API_KEY": "sk-secret-e2e-key", "NOISEGAUGE_CACHE": "off"}
    proc = subprocess.run(
        [sys.executable, "-m", "noisegauge", "score", str(EXAMPLES), "--judge", "openai:test-model",
         "--base-url", fake_openai_server.url, "--out", str(out), "-q"],
        capture_output=True, text=True, env=env, timeout=120)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    rows = [json.loads(line) for line in out.read_text().splitlines()]
    n = len(EXAMPLES.read_text().splitlines())
    assert len(rows) == n
    assert all(r["status"] in ("ok", "undefined") for r in rows), [r["reason"] for r in rows]
    # Two calls per sample: one joint extraction, one joint check (none for a no-claim answer).
    assert sum(r["usage"]["calls"] for r in rows) <= 2 * n
    assert all(r["usage"]["prompt_tokens"] > 0 for r in rows if r["usage"]["calls"])
    modes = {req.mode for req in fake_openai_server.requests if req.status == 200
             and req.body["messages"][-1]["content"] != PROBE_TEXT}  # the probe asks in text
    assert modes == ({"json_schema"} if json_schema else {"json_object"})
    # The key never leaks into results or output.
    assert "sk-secret-e2e-key" not in out.read_text() + proc.stdout + proc.stderr
