"""``noisegauge score --junit/--markdown/--config`` and the example GitHub Actions job."""

from __future__ import annotations

import json
import os
import re
import shlex
import shutil
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from batch_helpers import CLEAN, LEAKY

ROOT = Path(__file__).resolve().parents[1]
XSD = ROOT / "tests" / "data" / "junit-ant.xsd"
WORKFLOW = ROOT / "examples" / "ci" / "github-actions.yml"



def _score(*args: str, cwd: Path, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "noisegauge", "score", *args], cwd=cwd,
                          capture_output=True, text=True, timeout=300,
                          env={**os.environ, **(env or {})})


@pytest.fixture
def data(tmp_path: Path) -> Path:
    path = tmp_path / "support.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in (CLEAN, LEAKY)), encoding="utf-8")
    return path


def test_junit_and_markdown_from_the_command(data: Path, tmp_path: Path) -> None:
    xmlschema = pytest.importorskip("xmlschema")
    summary = tmp_path / "step.md"
    out = _score(str(data), "--judge", "fake", "--no-cache", "-q",
                 "--fail-above", "noise_sensitivity_relevant=0.1",
                 "--fail-below", "faithfulness=0.5", "--junit", "results.xml",
                 "--markdown", "summary.md", cwd=tmp_path,
                 env={"GITHUB_STEP_SUMMARY": str(summary)})
    assert out.returncode == 1, out.stderr  # the noise bar fails
    xmlschema.XMLSchema(str(XSD)).validate(str(tmp_path / "results.xml"))
    root = ET.parse(tmp_path / "results.xml").getroot()
    gates, samples = root.findall("testsuite")
    assert [(c.get("name"), c.find("failure") is not None) for c in gates.findall("testcase")] == [
        ("noise_sensitivity_relevant <= 0.1", True), ("faithfulness >= 0.5", False)]
    assert [c.get("name") for c in samples.findall("testcase")] == ["pro-plan"]
    md = (tmp_path / "summary.md").read_text(encoding="utf-8")
    assert md.startswith("## ❌ noisegauge: 1 of 2 bars failed")
    assert re.search(r"judge fake \(canaries \d+/12 \(ng-canaries-1\)\)", md)  # run metadata
    assert summary.read_text(encoding="utf-8") == md + "\n"


def test_the_step_summary_shows_what_a_failing_conversation_followed(tmp_path: Path) -> None:
    chats = tmp_path / "chats.jsonl"
    shutil.copy(ROOT / "examples" / "chat_log.jsonl", chats)
    summary = tmp_path / "step.md"
    out = _score(str(chats), "--judge", "fake", "--no-cache", "-q",
                 "--fail-below", "faithfulness=1", "--fail-below", "context_precision=1",
                 "--markdown", "summary.md", cwd=tmp_path, env={"GITHUB_STEP_SUMMARY": str(summary)})
    assert out.returncode == 1, out.stderr  # every chat misses a bar of 1: all three shown
    assert summary.read_text(encoding="utf-8") == (tmp_path / "summary.md").read_text("utf-8") + "\n"
    md = summary.read_text(encoding="utf-8").splitlines()
    at = md.index("- **chat02-history-support** (faithfulness 0.000, context_precision 0.000): "
                  "Does it include phone support too?")
    assert md[at + 1] == ("  - after user: “Does the Starter plan include email support?” · "
                          "assistant: “Yes, the Starter plan includes email support on weekdays.”")
    # the system prompt and two turns before "And for monthly plans?": the first one counted
    at = md.index("- **chat01-openai-refund** (faithfulness 1.000, context_precision 0.500): "
                  "And for monthly plans?")
    assert md[at + 1] == ("  - after 1 earlier turn, then user: “What is the refund window on "
                          "annual plans?” · assistant: “Annual plans can be refunded within 30 "
                          "days of purchase.”")


def test_bars_from_pyproject_with_config(data: Path, tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text(
        '[tool.noisegauge.thresholds]\nnoise_sensitivity_relevant = "<=0.1"\n'
        'faithfulness = ">=0.5"\n', encoding="utf-8")
    failing = _score(str(data), "--judge", "fake", "--no-cache", "-q", "--config",
                     "pyproject.toml", "--junit", "r.xml", cwd=tmp_path)
    assert failing.returncode == 1
    assert "noise_sensitivity_relevant" in failing.stderr
    # a flag replaces the file's bar for the same metric and direction
    passing = _score(str(data), "--judge", "fake", "--no-cache", "-q", "--config",
                     "pyproject.toml", "--fail-above", "noise_sensitivity_relevant=0.5",
                     cwd=tmp_path)
    assert passing.returncode == 0, passing.stderr
    # without --config the file is not read: no bar, exit 0
    assert _score(str(data), "--judge", "fake", "--no-cache", "-q", cwd=tmp_path).returncode == 0


def test_a_bad_config_is_a_usage_error(data: Path, tmp_path: Path) -> None:
    (tmp_path / "bad.toml").write_text('[tool.noisegauge]\nthreshold = 1\n', encoding="utf-8")
    out = _score(str(data), "--judge", "fake", "--no-cache", "-q", "--config", "bad.toml",
                 cwd=tmp_path)
    assert out.returncode == 2
    assert "unknown key(s) threshold" in out.stderr


def test_the_example_github_actions_job_scores_and_gates(tmp_path: Path) -> None:
    yaml = pytest.importorskip("yaml")
    job = yaml.safe_load(WORKFLOW.read_text(encoding="utf-8"))["jobs"]["noisegauge"]
    runs = [s["run"] for s in job["steps"] if "run" in s]
    assert runs[0] == "pip install noisegauge"
    command = shlex.split(runs[1])
    assert command[:2] == ["noisegauge", "score"]
    shutil.copytree(ROOT / "examples", tmp_path / "examples")
    summary = tmp_path / "step_summary.md"
    out = _score(*command[2:], cwd=tmp_path, env={"GITHUB_STEP_SUMMARY": str(summary)})
    assert out.returncode == 0, out.stdout + out.stderr
    for name in ("results.jsonl", "report.html", "results.xml", "summary.md"):
        assert (tmp_path / name).is_file(), name
    assert summary.read_text(encoding="utf-8").startswith("## ✅ noisegauge: all 2 bars passed")
    uploaded = job["steps"][-2]["with"]["path"].split()
    assert sorted(uploaded) == ["report.html", "results.jsonl", "results.xml", "summary.md"]
