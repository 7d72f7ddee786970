"""The cache is consulted first (issue 22, item 3): no probe, no canary and no call before
the first judge request the cache cannot answer, so a rerun of a finished run makes 0 calls
and succeeds with the endpoint stopped. Every new cache entry names its producer."""

from __future__ import annotations

import json
import socket
from pathlib import Path

from click.testing import CliRunner

from batch_helpers import require_extra, rows
from noisegauge.cli.main import cli
from noisegauge.judges.llm.probe import PROBE_TEXT
from noisegauge.testing import FakeOpenAIServer

require_extra("openai")


def _score(url: str, src: Path, out: Path, cache: Path, *extra: str) -> tuple[int, str]:
    res = CliRunner().invoke(cli, ["score", str(src), "--judge", "openai:test-model",
                                   "--base-url", url, "--out", str(out), "--cache", str(cache),
                                   "--max-retries", "0", *extra], catch_exceptions=False)
    return res.exit_code, res.output


def _metrics(path: Path) -> list[tuple[str, dict[str, float]]]:
    return [(r["id"], r["metrics"]) for r in map(json.loads, path.read_text().splitlines())]


def test_a_finished_run_replays_with_no_call_and_no_endpoint(
        fake_openai_server: FakeOpenAIServer, tmp_path: Path) -> None:
    src = tmp_path / "in.jsonl"
    src.write_text("".join(json.dumps(r) + "\n" for r in rows(5)))
    cache = tmp_path / "cache.sqlite3"
    url = fake_openai_server.url
    code, output = _score(url, src, tmp_path / "first.jsonl", cache)
    assert code == 0, output
    asked = [r.first_user for r in fake_openai_server.chat_requests()]
    assert asked[0] == PROBE_TEXT and len(asked) > 3  # the probe, canaries, then the rows
    assert "judge canaries" in output and "known-answer probes passed" in output

    # The same command, another --out: every answer is cached, nothing is sent.
    code, output = _score(url, src, tmp_path / "second.jsonl", cache)
    assert code == 0, output
    assert len(fake_openai_server.chat_requests()) == len(asked)  # not even the probe
    assert "judge: calls 0," in output and "judge canaries not run" in output
    assert _metrics(tmp_path / "second.jsonl") == _metrics(tmp_path / "first.jsonl")

    # And with the endpoint gone: nothing listens at its address any more.
    fake_openai_server.stop()
    with socket.socket() as s:
        assert s.connect_ex(("127.0.0.1", int(url.rsplit(":", 1)[1].split("/")[0]))) != 0
    code, output = _score(url, src, tmp_path / "third.jsonl", cache)
    assert code == 0, output
    assert _metrics(tmp_path / "third.jsonl") == _metrics(tmp_path / "first.jsonl")

    # A row the cache has not seen needs the endpoint: the probe says it is gone, at once.
    src.write_text("".join(json.dumps(r) + "\n" for r in rows(6)))
    code, output = _score(url, src, tmp_path / "fourth.jsonl", cache)
    assert code == 2 and "Connection error" in output, output


def test_every_new_cache_entry_names_its_producer(fake_openai_server: FakeOpenAIServer,
                                                 tmp_path: Path) -> None:
    src = tmp_path / "in.jsonl"
    src.write_text("".join(json.dumps(r) + "\n" for r in rows(3)))
    cache = tmp_path / "cache.sqlite3"
    url = ["--base-url", fake_openai_server.url]
    for judge in (["lexical"], ["openai:test-model", *url]):  # scored verdicts; LLM answers
        res = CliRunner().invoke(cli, ["score", str(src), "--judge", *judge, "--cache",
                                       str(cache), "-q"], catch_exceptions=False)
        assert res.exit_code == 0, res.output
    res = CliRunner().invoke(cli, ["cache", "info", "--cache", str(cache)],
                             catch_exceptions=False)
    assert res.exit_code == 0, res.output
    assert "unknown" not in res.output, res.output
    assert "lexical" in res.output and "test-model" in res.output
