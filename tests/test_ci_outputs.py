"""CI-native outputs: JUnit XML (schema-checked) and the Markdown step summary."""

from __future__ import annotations

import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from batch_helpers import CLEAN, LEAKY
from noisegauge import FakeJudge, evaluate
from noisegauge.report.gate import GateReport
from noisegauge.report.junit import render_junit, write_junit
from noisegauge.report.markdown import render_markdown, write_markdown
from noisegauge.thresholds import Threshold

xmlschema = pytest.importorskip("xmlschema", reason="pip install xmlschema (the dev extra)")

XSD = Path(__file__).parent / "data" / "junit-ant.xsd"

# Hostile texts: markup, pipes, control characters, a bad row.
HOSTILE = {"id": "x<script>|1", "user_input": "Is <b>bold</b> | piped `code` ok?\x01",
           "response": "Yes <script>alert(1)</script> | it is.", "reference": "No.",
           "retrieved_contexts": ["Yes <script>alert(1)</script> | it is."]}
BAD = {"id": "broken", "user_input": "q", "response": "a", "retrieved_contexts": []}


def _gate(rows: list[dict[str, object]], *bars: Threshold) -> GateReport:
    report = evaluate(rows, judge=FakeJudge(), cache=False, progress=False)
    return GateReport.from_rows(report.rows(), report.metrics, list(bars), title="support.jsonl")


def _schema() -> object:
    return xmlschema.XMLSchema(str(XSD))


def test_junit_has_a_case_per_bar_and_per_failing_sample_and_is_schema_valid(tmp_path: Path) -> None:
    gate = _gate([CLEAN, LEAKY, HOSTILE, BAD],
                 Threshold.parse("noise_sensitivity_relevant", "<=0.1"),
                 Threshold.parse("faithfulness", ">=0.5"))
    path = write_junit(tmp_path / "results.xml", gate)
    _schema().validate(str(path))  # raises on any violation
    root = ET.parse(path).getroot()
    gates, samples = root.findall("testsuite")
    assert [c.get("name") for c in gates.findall("testcase")] == [
        "noise_sensitivity_relevant <= 0.1", "faithfulness >= 0.5"]
    failed = [c.get("name") for c in gates.findall("testcase") if c.find("failure") is not None]
    assert failed == ["noise_sensitivity_relevant <= 0.1"]
    assert (gates.get("tests"), gates.get("failures"), gates.get("errors")) == ("2", "1", "0")
    cases = {c.get("name"): c for c in samples.findall("testcase")}
    # the bad row is an <error>; the leaky sample a <failure> naming its leaked claim
    assert set(cases) == {"broken", "pro-plan"}
    assert cases["broken"].find("error") is not None
    failure = cases["pro-plan"].find("failure")
    assert failure is not None
    assert failure.get("message") == "noise_sensitivity_relevant 0.500 misses <= 0.1"
    assert "'The Pro plan requires a 90-day notice period.' (leaked from relevant chunk 1)" in (failure.text or "")
    assert (samples.get("tests"), samples.get("failures"), samples.get("errors")) == ("2", "1", "1")


def test_junit_keeps_hostile_text_as_text() -> None:
    gate = _gate([HOSTILE], Threshold.parse("faithfulness", ">=1.5"))
    xml = render_junit(gate)
    _schema().validate(xml)
    assert "<script>" not in xml and "&lt;script&gt;" in xml
    root = ET.fromstring(xml)
    text = root.find("testsuite[@name='noisegauge.samples']/testcase/failure").text  # type: ignore[union-attr]
    assert "Q: Is <b>bold</b> | piped `code` ok?\ufffd" in (text or "")


def test_the_schema_rejects_what_ci_readers_need() -> None:
    """The schema can say no (a check that cannot fail proves nothing)."""
    schema = _schema()
    good = render_junit(_gate([CLEAN], Threshold.parse("faithfulness", ">=0.5")))
    assert schema.is_valid(good)
    assert not schema.is_valid(good.replace(' classname="noisegauge.gates"', ""))
    assert not schema.is_valid(good.replace("<testsuites>", '<testsuites tests="1">'))
    assert not schema.is_valid(good.replace("<system-err", "<system-errr").replace(
        "</system-err>", "</system-errr>"))


def test_no_bars_means_an_empty_gate_suite_and_only_error_rows() -> None:
    gate = _gate([CLEAN, BAD])
    root = ET.fromstring(render_junit(gate))
    gates, samples = root.findall("testsuite")
    assert gates.get("tests") == "0"
    assert [c.get("name") for c in samples.findall("testcase")] == ["broken"]


def test_markdown_summary_verdict_bars_and_worst_samples() -> None:
    gate = _gate([CLEAN, LEAKY], Threshold.parse("noise_sensitivity_relevant", "<=0.1"),
                 Threshold.parse("faithfulness", ">=0.5"))
    md = render_markdown(gate)
    lines = md.splitlines()
    assert lines[0] == "## ❌ noisegauge: 1 of 2 bars failed"
    assert "| `noise_sensitivity_relevant <= 0.1` | 0.250 | 0.000–1.000 | 2 | ❌ fail |" in md
    assert "| `faithfulness >= 0.5` | 1.000 | 1.000–1.000 | 2 | ✅ pass |" in md
    assert ("- **pro-plan** (noise_sensitivity_relevant 0.500): What is the cancellation "
            "policy for the Pro plan?") in md
    assert "  - “The Pro plan requires a 90-day notice period.”: leaked from relevant chunk 1" in md
    passing = render_markdown(_gate([CLEAN], Threshold.parse("faithfulness", ">=0.5")))
    assert passing.startswith("## ✅ noisegauge: all 1 bars passed")


def test_markdown_escapes_user_text() -> None:
    md = render_markdown(_gate([HOSTILE], Threshold.parse("faithfulness", ">=1.5")))
    assert "<script>" not in md and "<b>" not in md
    assert "&lt;b&gt;bold&lt;/b&gt; \\| piped \\`code\\` ok?" in md


def test_markdown_goes_to_the_step_summary_when_set(tmp_path: Path,
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    summary = tmp_path / "step_summary.md"
    summary.write_text("earlier step\n", encoding="utf-8")
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(summary))
    gate = _gate([CLEAN], Threshold.parse("faithfulness", ">=0.5"))
    written = write_markdown(tmp_path / "summary.md", gate)
    assert written == [tmp_path / "summary.md", summary]
    body = summary.read_text(encoding="utf-8")
    assert body.startswith("earlier step\n## ✅ noisegauge")  # appended, not replaced
    monkeypatch.delenv("GITHUB_STEP_SUMMARY")
    assert write_markdown(tmp_path / "again.md", gate) == [tmp_path / "again.md"]


# LEAKY as the last turn of a chat: three turns before it, one with markup and a pipe.
CHAT = {**LEAKY, "user_input": "And the notice period?", "history": [
    {"role": "user", "content": "Can I cancel the Team plan?"},
    {"role": "assistant", "content": "Yes, the Team plan can be cancelled anytime."},
    {"role": "user", "content": "What about the <b>Pro</b> plan | `monthly`?"}]}


def test_markdown_shows_the_last_turns_of_a_failing_conversation_escaped() -> None:
    bar = Threshold.parse("noise_sensitivity_relevant", "<=0.1")
    md = render_markdown(_gate([CHAT], bar)).splitlines()
    at = md.index("- **pro-plan** (noise_sensitivity_relevant 0.500): And the notice period?")
    assert md[at + 1] == (
        "  - after 1 earlier turn, then assistant: “Yes, the Team plan can be cancelled "
        "anytime.” · user: “What about the &lt;b&gt;Pro&lt;/b&gt; plan \\| \\`monthly\\`?”")
    assert md[at + 2].startswith("  - “The Pro plan requires a 90-day notice period.”")
    two = {**CHAT, "history": CHAT["history"][1:]}  # no earlier turn to count
    md = render_markdown(_gate([two], bar)).splitlines()
    assert md[md.index("- **pro-plan** (noise_sensitivity_relevant 0.500): And the notice "
                       "period?") + 1].startswith("  - after assistant: “Yes, the Team plan")
    single = render_markdown(_gate([LEAKY], bar))
    assert "after " not in single  # a single turn's sample is as it was
