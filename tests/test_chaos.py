"""Fault injection over real HTTP: the OpenAI judge against the fake server dying, hanging,
refusing the key, not knowing the model, rate-limiting forever, answering garbage or cut
answers, and 30% mixed faults with kill -9s. Every case ends in a true exit code, a
non-empty reason naming what failed, and no lost row."""

from __future__ import annotations

import json
import re
import time
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from batch_helpers import require_extra, rows
from noisegauge.cli.main import cli
from noisegauge.runner.journal import journal_path
from noisegauge.testing import FakeOpenAIServer

require_extra("openai")

FOREVER = 10**9


def _score(server: FakeOpenAIServer, src: Path, *args: str, model: str = "fake") -> Any:
    return CliRunner().invoke(cli, ["score", str(src), "--judge", f"openai:{model}",
                                    "--base-url", server.url, "--api-key", "sk-chaos-test-key",
                                    "--no-cache", *args], catch_exceptions=False)


def _data(tmp_path: Path, n: int) -> Path:
    src = tmp_path / "in.jsonl"
    src.write_text("".join(json.dumps(r) + "\n" for r in rows(n)))
    return src


def _rows(path: Path) -> list[dict[str, Any]]:
    return [json.loads(x) for x in path.read_text().splitlines()]


def test_server_dies_then_comes_back(fake_openai_server: FakeOpenAIServer, tmp_path: Path) -> None:
    src = _data(tmp_path, 12)
    clean = tmp_path / "clean.jsonl"
    assert _score(fake_openai_server, src, "--out", str(clean), "-q").exit_code == 0
    fake_openai_server.requests.clear()
    fake_openai_server.die_after = 12  # the probe, canaries, a few rows; then no connection
    out = tmp_path / "out.jsonl"
    args = ["--out", str(out), "--concurrency", "1", "--max-retries", "0",
            "--max-consecutive-failures", "3", "-q"]
    res = _score(fake_openai_server, src, *args)
    assert res.exit_code == 2
    assert "stopped after 3 rows in a row got no answer from the judge" in res.stderr
    assert f"at {fake_openai_server.url}" in res.stderr  # the endpoint is named
    assert journal_path(out).exists() and not out.exists()
    fake_openai_server.die_after = None
    res = _score(fake_openai_server, src, *args)
    assert res.exit_code == 0, res.output
    resumed = re.search(r"resumed (\d+) rows", res.stdout)
    assert resumed and 0 < int(resumed[1]) < 12, res.stdout
    assert out.read_bytes() == clean.read_bytes()


def test_a_hung_endpoint_times_out_with_a_reason(fake_openai_server: FakeOpenAIServer,
                                                 tmp_path: Path) -> None:
    fake_openai_server.add_fault(delay=5, times=FOREVER)
    src = _data(tmp_path, 2)
    out = tmp_path / "out.jsonl"
    start = time.monotonic()
    res = _score(fake_openai_server, src, "--out", str(out), "--timeout", "0.3",
                 "--max-retries", "1", "-q")
    assert time.monotonic() - start < 8
    assert res.exit_code == 3
    for row in _rows(out):
        assert row["error_kind"] == "transport"
        assert f"timed out after 0.3 s waiting for {fake_openai_server.url} (model fake)" \
            in row["reason"]
        assert "gave up after 2 attempts" in row["reason"]


@pytest.mark.parametrize("case", ["401", "404", "429"])
def test_an_unusable_endpoint_fails_fast(fake_openai_server: FakeOpenAIServer, tmp_path: Path,
                                         case: str) -> None:
    model = "fake"
    if case == "401":
        fake_openai_server.api_key = "sk-the-right-key-000"
    elif case == "404":
        fake_openai_server.models = {"fake"}
        model = "no-such-model"
    else:
        fake_openai_server.add_fault(status=429, retry_after=0.01, times=FOREVER)
    src = _data(tmp_path, 30)
    start = time.monotonic()
    res = _score(fake_openai_server, src, "--max-retries", "2", "-q", model=model)
    assert time.monotonic() - start < 15
    assert res.exit_code == 2, res.output
    assert case in res.stderr  # the message names what the endpoint said
    assert "Traceback" not in res.stderr
    assert len(fake_openai_server.chat_requests()) < 30 * 3  # it did not try every row


def test_unreadable_answers_are_output_errors(fake_openai_server: FakeOpenAIServer,
                                              tmp_path: Path) -> None:
    fake_openai_server.add_fault(content="I'd rather not answer in JSON.", times=FOREVER)
    src = _data(tmp_path, 3)
    out = tmp_path / "out.jsonl"
    res = _score(fake_openai_server, src, "--out", str(out), "--fail-above",
                 "hallucination=0.9", "-q")
    assert res.exit_code == 1  # the gate cannot pass on error rows
    assert "3 of 3 rows are errors" in res.stderr
    for row in _rows(out):
        assert row["error_kind"] == "output" and "last answer" in row["reason"]


def test_cut_answers_are_asked_again(fake_openai_server: FakeOpenAIServer, tmp_path: Path) -> None:
    cut = fake_openai_server.add_fault(finish_reason="length",
                                       transform=lambda text: text[: len(text) // 2], times=2)
    src = _data(tmp_path, 3)
    out = tmp_path / "out.jsonl"
    res = _score(fake_openai_server, src, "--out", str(out), "--concurrency", "1", "-q")
    assert res.exit_code == 0, res.output  # two cut answers, each asked again, longer
    assert [r["status"] for r in _rows(out)] == ["ok"] * 3
    cut.times = FOREVER  # an answer that is always cut: the row is an output error
    res = _score(fake_openai_server, src, "--out", str(out), "-q", "--restart")
    assert res.exit_code == 3
    assert {r["error_kind"] for r in _rows(out)} == {"output"}


def test_mixed_faults_with_gates_report_errors(fake_openai_server: FakeOpenAIServer,
                                               tmp_path: Path) -> None:
    fake_openai_server.chaos(0.3, seed=1, hang=2.0)
    src = _data(tmp_path, 16)
    out = tmp_path / "out.jsonl"
    res = _score(fake_openai_server, src, "--out", str(out), "--timeout", "0.5",
                 "--max-retries", "0", "--max-consecutive-failures", "0", "--fail-above",
                 "hallucination=0.9", "-q")
    got = _rows(out)
    errors = sum(r["status"] == "error" for r in got)
    assert len(got) == 16 and errors > 0  # nothing lost; without retries some rows fail
    assert all(r["reason"] and r["error_kind"] in ("transport", "output") for r in got
               if r["status"] == "error")
    assert res.exit_code == 1
    assert f"{errors} of 16 rows are errors" in res.stderr
