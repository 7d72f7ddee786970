"""`noisegauge stress --pipeline openai:MODEL` against a fake chat-completions server.

The real openai SDK talks real HTTP to a stdlib server on 127.0.0.1, so request shape, auth,
prompt rendering and the generation cache are all exercised without a network.
"""

from __future__ import annotations

import json
import re
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, ClassVar

import pytest
from click.testing import CliRunner

from batch_helpers import require_extra
from noisegauge.cli.main import cli

require_extra("openai")

GOLDEN = Path(__file__).resolve().parents[1] / "examples" / "golden_support.jsonl"
N_ITEMS = sum(1 for line in GOLDEN.read_text().splitlines() if line.strip())


class FakeChat(BaseHTTPRequestHandler):
    """Answers with the first numbered context line: a model that trusts whatever comes first."""

    requests: ClassVar[list[dict[str, Any]]] = []

    def do_POST(self) -> None:
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        type(self).requests.append({"path": self.path, "body": body,
                                    "auth": self.headers.get("Authorization")})
        prompt = body["messages"][-1]["content"]
        first = re.search(r"^\[1\] (.*)$", prompt, re.M)
        answer = first.group(1).split(". ")[0].rstrip(".") + "." if first else "I don't know."
        data = json.dumps({
            "id": "chatcmpl-fake", "object": "chat.completion", "created": 0,
            "model": body["model"],
            "choices": [{"index": 0, "finish_reason": "stop",
                         "message": {"role": "assistant", "content": answer}}],
            "usage": {"prompt_tokens": 50, "completion_tokens": 10, "total_tokens": 60},
        }).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, *args: Any) -> None:
        pass


@pytest.fixture()
def chat_server(monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    monkeypatch.setenv("NO_PROXY", "127.0.0.1,localhost")  # a CI proxy must not intercept
    monkeypatch.setenv("no_proxy", "127.0.0.1,localhost")
    FakeChat.requests = []
    server = ThreadingHTTPServer(("127.0.0.1", 0), FakeChat)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{server.server_address[1]}/v1"
    server.shutdown()
    server.server_close()


def _run(base_url: str, out: Path, *extra: str) -> Any:
    return CliRunner().invoke(cli, [
        "stress", str(GOLDEN), "--pipeline", "openai:fake-model", "--base-url", base_url,
        "--api-key", "sk-test", "--levels", "0,1,2", "--judge", "fake", "--seed", "3",
        "--out", str(out), *extra])


def test_stress_runs_an_openai_compatible_pipeline(chat_server: str, tmp_path: Path) -> None:
    result = _run(chat_server, tmp_path)
    assert result.exit_code == 0, result.output
    n = N_ITEMS * 3
    assert len(FakeChat.requests) == n
    req = FakeChat.requests[0]
    assert req["path"] == "/v1/chat/completions" and req["auth"] == "Bearer sk-test"
    assert req["body"]["model"] == "fake-model" and req["body"]["temperature"] == 0
    samples = [json.loads(x) for x in (tmp_path / "samples.jsonl").read_text().splitlines()]
    for s in samples:  # the answer is the first sentence of the first chunk the model was shown
        first_chunk = s["retrieved_contexts"][0]["text"]
        assert s["response"].rstrip(".") in first_chunk
    curve = json.loads((tmp_path / "curve.json").read_text())
    assert curve["levels"] == [0, 1, 2]
    ns = curve["metrics"]["noise_sensitivity_irrelevant"]
    assert ns[0]["mean"] == 0.0 and ns[2]["mean"] > 0.0  # a distractor shown first leaks

    # A rerun replays every answer from the generation cache: no new requests.
    again = _run(chat_server, tmp_path)
    assert again.exit_code == 0, again.output
    assert len(FakeChat.requests) == n
    assert json.loads((tmp_path / "run.json").read_text())["cached_generations"] == n


def test_prompt_template_is_user_editable_and_part_of_the_cache_key(chat_server: str,
                                                                    tmp_path: Path) -> None:
    assert _run(chat_server, tmp_path, "--levels", "0").exit_code == 0
    default_prompt = FakeChat.requests[-1]["body"]["messages"][0]["content"]
    assert "disregard" not in default_prompt
    result = _run(chat_server, tmp_path, "--levels", "0", "--prompt", "strict")
    assert result.exit_code == 0, result.output
    assert len(FakeChat.requests) == 2 * N_ITEMS  # a new prompt is not served from the cache
    assert "disregard it even if it seems related" in FakeChat.requests[-1]["body"]["messages"][0]["content"]
    template = tmp_path / "prompt.txt"
    template.write_text("CTX\n{contexts}\nQ={question}")
    assert _run(chat_server, tmp_path, "--levels", "0", "--prompt", str(template)).exit_code == 0
    sent = FakeChat.requests[-1]["body"]["messages"][0]["content"]
    assert sent.startswith("CTX\n[1] ") and "\nQ=" in sent
