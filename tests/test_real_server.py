"""The LLM judge against a real llama-cpp-python server (what the fake's persona imitates).

Runs when ``$NOISEGAUGE_LLAMA_SERVER_PYTHON`` names an interpreter with
``llama-cpp-python[server]`` and ``$NOISEGAUGE_GGUF`` a GGUF model; skipped otherwise (the
build takes about 15 minutes of CPU and no model ships with the project). A 0.5B-1.5B
instruct model on CPU answers in tens of seconds, so this scores one example row.
``bench/real_server.py`` runs every output mode over more rows.
"""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
from pathlib import Path

import pytest

from batch_helpers import require_extra
from noisegauge import aevaluate, get_judge
from noisegauge.judges.canaries import run_canaries

pytestmark = pytest.mark.real_server
require_extra("openai")

PYTHON = os.environ.get("NOISEGAUGE_LLAMA_SERVER_PYTHON", "")
GGUF = os.environ.get("NOISEGAUGE_GGUF", "")
EXAMPLES = Path(__file__).resolve().parents[1] / "examples" / "support_bot.jsonl"


def _server_available() -> str | None:
    if not PYTHON or not GGUF:
        return "set NOISEGAUGE_LLAMA_SERVER_PYTHON and NOISEGAUGE_GGUF to run against a real server"
    if not Path(GGUF).is_file():
        return f"no GGUF model at {GGUF}"
    found = subprocess.run([PYTHON, "-c", "import llama_cpp.server"], capture_output=True)
    if found.returncode:
        return f"{PYTHON} has no llama_cpp.server (pip install 'llama-cpp-python[server]')"
    return None


@pytest.mark.skipif(_server_available() is not None, reason=str(_server_available()))
def test_negotiates_json_object_schema_and_scores_a_row(monkeypatch):
    from noisegauge.testing.llama_cpp import RealLlamaServer

    monkeypatch.setenv("NO_PROXY", "127.0.0.1")
    row = json.loads(EXAMPLES.read_text(encoding="utf-8").splitlines()[0])
    with RealLlamaServer(PYTHON, GGUF) as server:
        judge = get_judge("openai:local", base_url=server.url, timeout=900, max_concurrency=4)

        async def run():
            await judge.probe()
            canaries = await run_canaries(judge)
            report = await aevaluate([row], judge=judge, cache=False, progress=False)
            await judge.aclose()
            return canaries, report
        canaries, report = asyncio.run(run())
    ep = judge.endpoint_report()
    # The real server refuses json_schema with HTTP 500; that costs exactly one request.
    assert ep["output_mode"] == "json_object_schema" and ep["refused_modes"] == ["json_schema"]
    assert ep["fallbacks"] == 1 and ep["failed_calls"] == 0
    # The schema is enforced, so every answer is complete and readable.
    assert ep["re_asks"] == 0
    assert report.results[0].status in ("ok", "undefined"), report.results[0].reason
    assert report.usage.calls >= 1 and canaries.total == 12
    assert all(r.error is None for r in canaries.results)
