"""People's labels in the rest of noisegauge: ``Report.estimate``, ``score --labels`` with
``--gate-on corrected``, and the report's "Checked by people" tab (escaped like the rest)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from batch_helpers import require_extra
from noisegauge import evaluate
from noisegauge.people import estimate
from noisegauge.people.labels import digest_of, sample_key
from noisegauge.report import render_report
from people_helpers import example_rows, label_like_judge
from report_helpers import EXAMPLE, ROOT

require_extra("stats")


@pytest.fixture(scope="module")
def rows() -> list[dict[str, Any]]:
    return example_rows()


def test_report_estimate_is_the_estimate_of_its_rows(rows: list[dict[str, Any]],
                                                     tmp_path: Path) -> None:
    report = evaluate(str(EXAMPLE), cache=False, progress=False)
    labels = label_like_judge(tmp_path / "l.jsonl", list(report.rows()), 10).path
    got = report.estimate(labels, confidence=0.8)
    assert got.to_dict() == estimate(list(report.rows()), labels, 0.8).to_dict()
    assert got.metrics["precision"].corrected.N == 28 and len(got.labelled) == 10
    html = report.to_html(tmp_path / "r.html", labels=labels).read_text(encoding="utf-8")
    assert 'id="p-people"' in html and 'data-tab="people"' in html


def test_people_tab_shows_numbers_and_escapes(rows: list[dict[str, Any]], tmp_path: Path) -> None:
    lf = label_like_judge(tmp_path / "l.jsonl", rows, 8)
    key, d = sample_key(rows[20], 20), digest_of(rows[20])
    lf.append({"kind": "skip", "id": key, "digest": d,
               "reason": "<script>window.__pwned=9</script>"})
    est = estimate(rows, lf.path)
    html = render_report(rows, title="t", estimate=est)
    section = html[html.index('id="p-people"'):]
    m = est.metrics["noise_sensitivity_relevant"]
    c = m.corrected
    assert f"[{c.low:.3f}, {c.high:.3f}]" in section and f"{c.n} / {c.N}" in section
    assert "&lt;script&gt;window.__pwned=9" in section
    assert "<script>window.__pwned" not in html
    assert "Checked by people" in html
    assert 'id="p-people"' not in render_report(rows, title="t")  # no labels, no tab


def _score(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "noisegauge", "score", str(EXAMPLE), "-q",
                           "--no-cache", *args], capture_output=True, text=True, cwd=ROOT,
                          timeout=300)


def test_score_with_labels_gates_on_the_corrected_interval(rows: list[dict[str, Any]],
                                                           tmp_path: Path) -> None:
    labels = label_like_judge(tmp_path / "l.jsonl", rows, 12).path
    c = estimate(rows, labels).metrics["noise_sensitivity_relevant"].corrected
    assert c.high is not None and c.low is not None
    judge_mean = estimate(rows, labels).metrics["noise_sensitivity_relevant"].judge
    assert judge_mean is not None
    on_judge = _score("--labels", str(labels), "--fail-above",
                      f"noise_sensitivity_relevant={judge_mean + 0.001}")
    assert on_judge.returncode == 0, on_judge.stderr
    assert "checked by people (12 labelled of 29 samples" in on_judge.stdout
    bar = (c.high + c.low) / 2  # inside the interval: the whole interval is not below it
    corrected = _score("--labels", str(labels), "--gate-on", "corrected", "--fail-above",
                       f"noise_sensitivity_relevant={bar}", "--report", str(tmp_path / "r.html"))
    assert corrected.returncode == 1, corrected.stderr
    assert "corrected" in corrected.stderr and "is not all <=" in corrected.stderr
    assert 'id="p-people"' in (tmp_path / "r.html").read_text(encoding="utf-8")


def test_gate_on_corrected_needs_labels_and_bad_labels_stop_before_judging(tmp_path: Path) -> None:
    out = _score("--gate-on", "corrected", "--fail-above", "hallucination=0.2")
    assert out.returncode == 2 and "--gate-on corrected needs --labels" in out.stderr
    (tmp_path / "bad.jsonl").write_text('{"id": "x", "noise": 0.2}\n', encoding="utf-8")
    bad = _score("--labels", str(tmp_path / "bad.jsonl"), "--out", str(tmp_path / "o.jsonl"))
    assert bad.returncode == 2 and "line 1: unknown field 'noise'" in bad.stderr
    assert not (tmp_path / "o.jsonl").exists()
