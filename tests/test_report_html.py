"""The HTML report as a file: self-contained, valid, escaped, and fed by every entry point
(``noisegauge report``, ``score --report``, ``Report.to_html``)."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from batch_helpers import require_extra
from noisegauge.cli.main import cli
from noisegauge.report import render_report
from noisegauge.report.data import RunInfo, build_model
from report_helpers import (
    EVIL_MARKERS,
    EXAMPLE,
    SAMPLES,
    XSS_A,
    XSS_CHUNK,
    XSS_Q,
    data_block,
    scored_rows,
    write_jsonl,
)


@pytest.fixture(scope="module")
def rows() -> list[dict[str, Any]]:
    return scored_rows()


@pytest.fixture(scope="module")
def page(rows: list[dict[str, Any]]) -> str:
    return render_report(rows, title="evil <b>title</b>")


def _invoke(*args: str) -> Any:
    return CliRunner().invoke(cli, list(args), catch_exceptions=False)


def test_rows_carry_their_input_texts_and_judge(rows: list[dict[str, Any]]) -> None:
    assert [r["status"] for r in rows] == ["ok", "ok", "undefined", "error"]
    assert rows[0]["input"]["user_input"] == XSS_Q
    assert rows[0]["input"]["retrieved_contexts"][0] == XSS_CHUNK
    assert "input" not in rows[3]  # unreadable row: nothing to show but the reason
    assert rows[0]["judges"][0]["judge"] == "lexical"


def test_page_is_self_contained(page: str) -> None:
    assert page.startswith("<!DOCTYPE html>")
    assert not re.search(r"""(?:src|href)\s*=\s*["']?(?:https?:)?//""", page)
    assert "<link" not in page and "@import" not in page and "url(" not in page
    assert "<iframe" not in page and "fetch(" not in page and "XMLHttpRequest" not in page


def test_user_data_never_becomes_markup(page: str) -> None:
    block = data_block(page)
    assert "<" not in block and ">" not in block  # nothing can close the data block
    # Outside the data block every marker appears only escaped (or not at all).
    rest = page.replace(block, "")
    for marker in EVIL_MARKERS:
        assert marker.startswith("window") or marker not in rest, marker
    assert "window.__pwned" not in rest.replace("&lt;script&gt;window.__pwned", "")
    assert "&lt;b&gt;title&lt;/b&gt;" in page  # the title is text
    data = json.loads(block)
    texts = [s.get("q") for s in data["samples"]] + [s.get("a") for s in data["samples"]]
    assert XSS_Q in texts and XSS_A in texts and XSS_CHUNK in data["chunks"]


def test_page_parses_as_html_without_errors(page: str) -> None:
    require_extra("report-test")
    import html5lib
    parser = html5lib.HTMLParser(strict=True)
    parser.parse(page)
    assert parser.errors == []


@pytest.mark.skipif(shutil.which("tidy") is None, reason="Debian's tidy is not installed")
def test_tidy_finds_nothing(page: str, tmp_path: Path) -> None:
    path = tmp_path / "r.html"
    path.write_text(page, encoding="utf-8")
    done = subprocess.run(["tidy", "-q", "-e", str(path)], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr


def test_model_counts_buckets_and_places_claims(rows: list[dict[str, Any]]) -> None:
    m = build_model(rows, RunInfo("t"))
    assert m.status == {"ok": 2, "undefined": 1, "error": 1}
    assert m.buckets["irrelevant_noise"] == 1
    # The xss claims state a true price/seat count wrapped in markup no chunk has: whether the
    # markup words sink the second one is the offline judge's call, so only the total is pinned.
    assert m.buckets["hallucination"] >= 1
    assert m.buckets["grounded"] + m.buckets["hallucination"] == 3
    assert sum(m.buckets.values()) == 4
    leak = m.samples[1]
    claim = next(c for c in leak["c"] if c["b"] == "in")
    assert leak["a"][claim["sp"][0]:claim["sp"][1]] == "Team plans need a 60-day notice."
    assert claim["l"] == [1] and any(e[0] == 1 and e[3] == "e" for e in claim["ev"])
    assert m.samples[3]["s"] == "error" and "reference" in m.samples[3]["w"]
    assert m.summaries["noise_sensitivity_irrelevant"].errors == 1
    assert [p.id for p in m.points] == ["xss", "leak"]


def test_report_command_writes_one_file(tmp_path: Path, rows: list[dict[str, Any]]) -> None:
    results = write_jsonl(tmp_path / "results.jsonl", rows)
    out = tmp_path / "deep" / "report.html"
    res = _invoke("report", str(results), "--out", str(out), "--title", "My run")
    assert res.exit_code == 0, res.output
    assert "report:" in res.output and out.is_file()
    html = out.read_text(encoding="utf-8")
    assert "My run" in html and 'class="card verdict side-' in html


def test_report_command_rejects_what_is_not_results(tmp_path: Path) -> None:
    bad = tmp_path / "in.jsonl"
    bad.write_text(EXAMPLE.read_text(encoding="utf-8").splitlines()[0] + "\n", encoding="utf-8")
    res = CliRunner().invoke(cli, ["report", str(bad), "--out", str(tmp_path / "r.html")])
    assert res.exit_code == 2 and "not a result row" in res.output
    res = CliRunner().invoke(cli, ["report", "--out", str(tmp_path / "r.html")])
    assert res.exit_code == 2


def test_old_results_get_their_texts_from_input(tmp_path: Path, rows: list[dict[str, Any]]) -> None:
    old = [{k: v for k, v in r.items() if k != "input"} for r in rows]
    results = write_jsonl(tmp_path / "old.jsonl", old)
    inp = write_jsonl(tmp_path / "in.jsonl", SAMPLES)
    out = tmp_path / "r.html"
    res = CliRunner().invoke(cli, ["report", str(results), "--out", str(out)])
    assert res.exit_code == 0 and "--input" in res.output
    res = _invoke("report", str(results), "--input", str(inp), "--out", str(out))
    assert res.exit_code == 0
    data = json.loads(data_block(out.read_text(encoding="utf-8")))
    assert data["samples"][1]["q"] == SAMPLES[1]["user_input"]


def test_score_writes_the_report_too(tmp_path: Path) -> None:
    out = tmp_path / "report.html"
    res = _invoke("score", str(EXAMPLE), "--report", str(out), "-q", "--no-cache")
    assert res.exit_code == 0, res.output
    html = out.read_text(encoding="utf-8")
    data = json.loads(data_block(html))
    assert len(data["samples"]) == 29 and "support_bot.jsonl" in html
    assert "lexical" in html  # judge identity in the run metadata


def test_report_object_to_html(tmp_path: Path) -> None:
    from noisegauge import evaluate

    report = evaluate(SAMPLES[:2], cache=False, progress=False)
    path = report.to_html(tmp_path / "r.html", title="two", compare=report)
    html = path.read_text(encoding="utf-8")
    data = json.loads(data_block(html))
    assert len(data["samples"]) == 2 and data["pairs"] == {"0": 0, "1": 1}
    assert "Compared with other run" in html


def test_compare_mode(tmp_path: Path, rows: list[dict[str, Any]]) -> None:
    better = [dict(s) for s in SAMPLES]
    better[1]["response"] = "The Pro plan needs a 30-day notice."  # the leak is gone
    other = scored_rows(better)
    a = write_jsonl(tmp_path / "a.jsonl", other)
    b = write_jsonl(tmp_path / "b.jsonl", rows)
    out = tmp_path / "r.html"
    assert _invoke("report", str(a), "--compare", str(b), "--out", str(out)).exit_code == 0
    html = out.read_text(encoding="utf-8")
    assert "Compared with b · " in html and 'href="#s=1"' in html  # "leak" got better
    from noisegauge.report.compare import compare_runs

    c = compare_runs(other, rows, ["noise_sensitivity_irrelevant", "precision"])
    assert c.paired_by == "id" and len(c.pairs) == 4
    assert [ch.id for ch in c.better] == ["leak"] and not c.worse
    ns = c.diffs[0]
    assert ns.n == 2 and ns.diff == pytest.approx(-0.25) and ns.ci is not None


def test_compare_names_runs_by_dataset_judge_and_date_or_label(
        tmp_path: Path, rows: list[dict[str, Any]]) -> None:
    """Two files both called results.jsonl are told apart by their folders, not 'A/RESULTS.JSONL'."""
    (tmp_path / "baseline").mkdir()
    (tmp_path / "candidate").mkdir()
    a = write_jsonl(tmp_path / "candidate" / "results.jsonl", rows)
    b = write_jsonl(tmp_path / "baseline" / "results.jsonl", rows)
    out = tmp_path / "r.html"
    assert _invoke("report", str(a), "--compare", str(b), "--out", str(out)).exit_code == 0
    data = json.loads(data_block(out.read_text(encoding="utf-8")))
    judge = rows[0]["judges"][0]["judge"]
    assert re.fullmatch(rf"candidate · {judge}\S* ?\S* · \d{{4}}-\d\d-\d\d \d\d:\d\d",
                        data["thisLabel"]), data["thisLabel"]
    assert data["otherLabel"].startswith(f"baseline · {judge}")
    assert _invoke("report", str(a), "--compare", str(b), "--out", str(out), "--label", "new prompt",
                   "--compare-label", "old prompt").exit_code == 0
    html = out.read_text(encoding="utf-8")
    assert "Compared with old prompt" in html and "<th class=\"num\">new prompt</th>" in html


def test_stress_mode(tmp_path: Path) -> None:
    from noisegauge.stress import stress

    golden = ROOT_GOLDEN.read_text(encoding="utf-8").splitlines()[:4]
    src = tmp_path / "golden.jsonl"
    src.write_text("\n".join(golden) + "\n", encoding="utf-8")
    stress(src, pipeline="extractive", levels=[0, 2], cache=tmp_path / "gen.sqlite3").write(
        tmp_path / "s", plot=False)
    out = tmp_path / "r.html"
    res = _invoke("report", "--stress", str(tmp_path / "s"), "--out", str(out))
    assert res.exit_code == 0, res.output
    html = out.read_text(encoding="utf-8")
    assert 'id="p-stress"' in html and "Flipped questions" in html
    assert html.count('class="chart curve"') >= 4
    data = json.loads(data_block(html))
    assert {s["level"] for s in data["samples"]} == {0, 2}
    assert all("q" in s for s in data["samples"])  # stress rows carry their texts


ROOT_GOLDEN = EXAMPLE.parent / "golden_support.jsonl"


def test_the_legend_says_how_misattributed_claims_count() -> None:
    """A misattributed claim keeps its bucket: hallucination where no chunk entails it,
    noise where the judge reads one as entailing it (both happen in the bundled example);
    the legend and the diagnosis say so, never "counted as hallucination"."""
    samples = [json.loads(x) for x in EXAMPLE.read_text(encoding="utf-8").splitlines() if x.strip()]
    rows = scored_rows(samples)
    counted = {c["bucket"] for r in rows for c in r["response_claims"] if c["misattributed_from"]}
    assert {"hallucination", "irrelevant_noise"} <= counted
    page = render_report(rows)
    text = re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", page))
    assert "count it as hallucination" not in text and "counted as hallucination" not in text
    assert ("the metrics count it in its own bucket: hallucination where no chunk entails it, "
            "relevant or irrelevant noise where the judge reads a chunk as entailing it") in text
