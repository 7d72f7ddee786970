"""No key leaves the process: one redaction at every sink. An endpoint that echoes the key in
its answers (so in claims), its errors and its headers never gets it into a byte we write."""

from __future__ import annotations

import json
import logging
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from batch_helpers import ROOT, require_extra, rows
from noisegauge.cli.main import cli
from noisegauge.infra import secrets
from noisegauge.infra.secrets import redact, redact_message, redact_value, register_secret

KEY = "sk-proj-LEAKCANARY0123456789abcdefXYZ"
OTHER = "zz-NotShapedLikeAKey-98765-canary"  # a key no pattern would catch: the registry must


def test_redact_registered_env_and_shaped_keys(monkeypatch: pytest.MonkeyPatch) -> None:
    register_secret(OTHER)
    register_secret("short")  # too short to be masked anywhere: ordinary words stay
    monkeypatch.setenv("OPENAI_API_KEY", "env-secret-value-42")
    text = f"a {OTHER} b env-secret-value-42 c sk-abcdefgh12345 d Bearer tok.en-1 short"
    # The user's data: only the values the process knows are masked, shapes stay.
    assert redact(text) == "a *** b *** c sk-abcdefgh12345 d Bearer tok.en-1 short"
    # A library's message or traceback: key-shaped text is masked too.
    assert redact_message(text) == "a *** b *** c sk-*** d Bearer *** short"
    assert redact_value({"k": [OTHER, 3, {OTHER: None}]}) == {"k": ["***", 3, {"***": None}]}
    monkeypatch.delenv("OPENAI_API_KEY")
    assert redact("env-secret-value-42") == "env-secret-value-42"  # no longer a secret


def test_log_records_are_redacted(caplog: pytest.LogCaptureFixture) -> None:
    register_secret(OTHER)
    log = logging.getLogger("noisegauge")
    with caplog.at_level(logging.INFO, logger="noisegauge"):
        log.warning("endpoint said %s", OTHER)
        try:
            raise ValueError(f"bad key {OTHER}")
        except ValueError:
            log.exception("failed")
    text = caplog.text
    assert OTHER not in text and "endpoint said ***" in text and "bad key ***" in text


def _leaks(paths: list[Path], *streams: str) -> list[str]:
    found = [str(p) for p in paths if p.is_file() and KEY.encode() in p.read_bytes()]
    found += [f"stream {i}" for i, s in enumerate(streams) if KEY in s]
    return found


@pytest.fixture
def echoing(fake_openai_server: Any) -> Any:
    require_extra("openai")
    fake_openai_server.api_key = KEY
    fake_openai_server.echo_key = True
    return fake_openai_server


def test_an_echoing_endpoint_never_gets_the_key_written(echoing: Any, tmp_path: Path) -> None:
    src = tmp_path / "in.jsonl"
    src.write_text("".join(json.dumps(r) + "\n" for r in rows(4)))
    cache = tmp_path / "cache.sqlite3"
    runner = CliRunner()
    outputs = []
    for name in ("out.jsonl", "out.csv", "out.json"):
        out = tmp_path / name
        res = runner.invoke(cli, ["score", str(src), "--judge", "openai:fake", "--base-url",
                                  echoing.url, "--api-key", KEY, "--out", str(out), "--cache",
                                  str(cache), "--allow-errors", "--max-retries", "0"],
                            catch_exceptions=False)
        assert res.exit_code == 0, res.output
        assert not _leaks([out], res.stdout, res.stderr)
        outputs.append(out)
    # The key really went out and came back: the server saw it, and claims carried it.
    assert all(r.headers["authorization"] == f"Bearer {KEY}" for r in echoing.chat_requests())
    claims = [c["text"] for line in outputs[0].read_text().splitlines()
              for c in json.loads(line)["response_claims"]]
    assert "The API key is ***." in claims
    # A refused key is echoed in the 401 body: reasons, stderr and the log stay clean.
    res = runner.invoke(cli, ["score", str(src), "--judge", "openai:fake", "--base-url",
                              echoing.url, "--api-key", KEY + "-wrong", "--out",
                              str(tmp_path / "refused.jsonl"), "--no-cache",
                              "--max-consecutive-failures", "2"], catch_exceptions=False)
    assert res.exit_code == 2 and "401" in res.stderr
    files = sorted(p for p in tmp_path.iterdir())
    assert any(p.name.startswith("cache.sqlite3") for p in files)
    assert not _leaks(files, res.stdout, res.stderr), "the key was written"


def test_stress_outputs_and_generation_cache_are_clean(echoing: Any, tmp_path: Path) -> None:
    golden = ROOT / "examples" / "golden_support.jsonl"
    out = tmp_path / "stress"
    res = CliRunner().invoke(cli, [
        "stress", str(golden), "--pipeline", "openai:fake", "--base-url", echoing.url,
        "--api-key", KEY, "--judge", "fake", "--levels", "0", "--out", str(out)],
        catch_exceptions=False)
    assert res.exit_code == 0, res.output
    answers = [json.loads(x)["response"] for x in (out / "samples.jsonl").read_text().splitlines()]
    assert any("(key ***)" in a for a in answers)  # the pipeline's answers echoed it
    assert not _leaks(sorted(out.iterdir()), res.stdout, res.stderr)


@pytest.fixture(autouse=True)
def _own_registry() -> Any:
    """Each test starts from an empty registry (others in this process register keys too)."""
    saved = set(secrets._registered)
    secrets._registered.clear()
    secrets._env = None
    yield
    secrets._registered.clear()
    secrets._registered.update(saved)
    secrets._env = None
