"""The metric catalogue: one spec per metric, every table derived from it.

A toy metric registered through the catalogue alone (its spec and its function, nothing
else) must reach every output: the CLI summary, the results JSONL, the HTML report, JUnit,
Markdown, the stress curve and table, and compare.
"""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from collections.abc import Iterator
from pathlib import Path

import pytest
from click.testing import CliRunner

import noisegauge
from batch_helpers import CLEAN, LEAKY
from noisegauge.cli.main import cli
from noisegauge.engine import catalogue
from noisegauge.engine.catalogue import METRIC_NAMES, MetricSpec, registered
from noisegauge.engine.metrics import Judged, MetricValue
from noisegauge.errors import MissingDependency
from noisegauge.io.ragchecker import ragchecker_groups, ragchecker_names
from noisegauge.scoring.metrics import metric_for

GOLDEN = Path(__file__).resolve().parents[1] / "examples" / "golden_support.jsonl"
TOY = "toy_numbered_claims"


def _numbered(j: Judged) -> MetricValue:
    """Share of response claims that state a number."""
    claims = j.cv.response_claims
    if not claims:
        return MetricValue(None, "no response claims")
    return MetricValue(sum(any(ch.isdigit() for ch in c) for c in claims) / len(claims))


@pytest.fixture
def toy() -> Iterator[MetricSpec]:
    spec = MetricSpec(TOY, "numbered claims (toy)", "numbered", "lower", "answer",
                      compute=_numbered, aliases=("toy_numbers",), key=True)
    with registered(spec) as s:
        yield s
    assert TOY not in catalogue.family()


def test_the_built_in_family_is_ragcheckers_eleven_in_order() -> None:
    assert METRIC_NAMES == (
        "noise_sensitivity_relevant", "noise_sensitivity_irrelevant", "hallucination",
        "self_knowledge", "faithfulness", "precision", "recall", "f1", "claim_recall",
        "context_precision", "context_utilization")
    assert catalogue.family() == METRIC_NAMES
    assert len(ragchecker_names()) == 11
    assert ragchecker_groups()["overall"] == ("precision", "recall", "f1")


def test_every_spec_names_a_public_class_that_fills_its_column() -> None:
    for spec in catalogue.all_specs():
        if spec.cls is None:
            assert spec.kind == "diagnostic", spec.name  # computed from evidence, no class
            continue
        assert hasattr(noisegauge, spec.cls), spec.cls
        try:
            metric = metric_for(spec.name, "fake")
        except MissingDependency:  # Answer Relevancy's offline embedder is the 'embed' extra
            continue
        assert type(metric).__name__ == spec.cls and metric.name == spec.name


def test_aliases_and_directions_come_from_the_specs() -> None:
    assert catalogue.canonical(" Noise_Sensitivity_In_Relevant ") == "noise_sensitivity_relevant"
    assert catalogue.canonical("context_recall") == "claim_recall"
    assert catalogue.canonical("unknown_thing") == "unknown_thing"
    assert catalogue.lower_is_better("hallucination") and not catalogue.lower_is_better("f1")
    assert catalogue.neutral("self_knowledge") and not catalogue.neutral("faithfulness")
    with pytest.raises(ValueError, match="already in the catalogue"):
        catalogue.register(MetricSpec("f1", "x", "x", "higher", "answer", compute=_numbered))
    with pytest.raises(ValueError, match="needs compute"):
        MetricSpec("no_function", "x", "x", "higher", "answer")


def test_a_registered_metric_reaches_score_outputs(toy: MetricSpec, tmp_path: Path) -> None:
    src = tmp_path / "in.jsonl"
    src.write_text("".join(json.dumps(r) + "\n" for r in (LEAKY, CLEAN)), encoding="utf-8")
    out, html = tmp_path / "out.jsonl", tmp_path / "report.html"
    junit, md = tmp_path / "junit.xml", tmp_path / "summary.md"
    res = CliRunner().invoke(cli, [
        "score", str(src), "--judge", "fake", "--no-cache", "--out", str(out),
        "--report", str(html), "--junit", str(junit), "--markdown", str(md),
        "--fail-above", "toy_numbers=0.1"], terminal_width=200)
    assert res.exit_code == 1, res.output  # the alias names the toy's gate; 0.25 > 0.1
    assert TOY in res.output  # the CLI summary
    rows = [json.loads(line) for line in out.read_text().splitlines()]
    assert [r["metrics"][TOY] for r in rows] == [0.5, 0.0]
    page = html.read_text(encoding="utf-8")
    assert "numbered claims (toy)" in page  # its label, in the Answer group
    cases = [c.get("name") for c in ET.parse(junit).getroot().iter("testcase")]
    assert f"{TOY} <= 0.1" in cases and "pro-plan" in cases
    assert TOY in md.read_text(encoding="utf-8")


def test_a_registered_metric_reaches_stress_and_compare(toy: MetricSpec, tmp_path: Path) -> None:
    runner = CliRunner()
    for name, pipe in (("a", "extractive"), ("b", "extractive:strict")):
        r = runner.invoke(cli, ["stress", str(GOLDEN), "--pipeline", pipe, "--judge", "fake",
                                "--strategy", "hard", "--levels", "0,2", "--no-cache",
                                "--out", str(tmp_path / name)], terminal_width=200)
        assert r.exit_code == 0, r.output
        assert "numbered" in r.output  # its short label, a row of the stress table
        curve = json.loads((tmp_path / name / "curve.json").read_text())
        assert [p["level"] for p in curve["metrics"][TOY]] == [0, 2]
    r = runner.invoke(cli, ["compare", str(tmp_path / "a"), str(tmp_path / "b"),
                            "--out", str(tmp_path / "cmp")], terminal_width=200)
    assert r.exit_code == 0, r.output
    tests = json.loads((tmp_path / "cmp" / "compare.json").read_text())["tests"]
    assert {t["level"] for t in tests if t["metric"] == TOY} == {0, 2, None}
