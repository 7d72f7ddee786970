"""The seed's Ragas batch example, with noisegauge's imports, runs against a local endpoint."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from noisegauge.testing import FakeOpenAIServer

EXAMPLE = Path(__file__).resolve().parents[1] / "examples" / "ragas_dropin.py"


def test_the_seed_batch_example_runs_with_only_its_imports_changed(
        fake_openai_server: FakeOpenAIServer) -> None:
    for module in ("langchain_openai", "datasets", "pandas"):
        pytest.importorskip(module, reason="pip install '.[langchain,hf,tables]'")
    env = {**os.environ, "OPENAI_BASE_URL": fake_openai_server.url,
           "OPENAI_API_KEY": "sk-test-dropin"}
    out = subprocess.run([sys.executable, str(EXAMPLE)], capture_output=True, text=True,
                         env=env, timeout=300)
    assert out.returncode == 0, out.stderr[-3000:]
    # pandas prints the frame (eliding middle columns on a narrow terminal): a header with the
    # question and faithfulness columns, and one judged row per test case.
    lines = [line for line in out.stdout.strip().splitlines() if line.strip()]
    assert lines[0].split()[0] == "user_input" and lines[0].split()[-1] == "faithfulness"
    rows = [line for line in lines[1:] if line.split()[0] in ("0", "1")]
    assert len(rows) == 2
    assert all(float(r.split()[-1]) >= 0.0 for r in rows)  # judged, not <NA>
    # every judge call went to the endpoint ChatOpenAI was pointed at, as gpt-4o-mini
    chats = fake_openai_server.chat_requests()
    assert chats and {r.body["model"] for r in chats} == {"gpt-4o-mini"}
