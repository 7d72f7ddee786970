"""One interval everywhere: the CLI summary, the HTML report, the Markdown summary and MLflow
give the same 95% intervals for the bundled example, labelled with the method really used;
and the figures the docs quote from that summary are today's."""

from __future__ import annotations

import html
import json
import random
import re
from pathlib import Path

import pytest
from click.testing import CliRunner

from noisegauge.cli.main import cli
from noisegauge.engine import catalogue
from noisegauge.engine.summary import METHOD_NAMES, interval, methods_note, summarize

ROOT = Path(__file__).resolve().parents[1]
EXAMPLE = ROOT / "examples" / "support_bot.jsonl"
NUM = r"(?:\d+\.\d{3}|undefined)"


@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path | str]:
    d = tmp_path_factory.mktemp("interval")
    res = CliRunner().invoke(cli, ["score", str(EXAMPLE), "--out", str(d / "r.jsonl"),
                                   "--markdown", str(d / "s.md"), "--no-cache", "-q"])
    assert res.exit_code == 0, res.output
    rep = CliRunner().invoke(cli, ["report", str(d / "r.jsonl"), "--out", str(d / "r.html")])
    assert rep.exit_code == 0, rep.output
    return {"dir": d, "stdout": res.stdout}


def _cli_rows(stdout: str) -> dict[str, tuple[str, ...]]:
    """metric -> (mean, ci low, ci high, n, undefined, errors[, uncertain]) of the summary."""
    rows = {}
    for line in stdout.splitlines():
        m = re.match(rf"\s*([a-z0-9_]+)\s+({NUM})\s+\[(\d\.\d{{3}}), (\d\.\d{{3}})\]\s+(.*)$", line)
        if m:
            rows[m[1]] = (m[2], m[3], m[4], *m[5].split())
    return rows


def _values(results: Path) -> dict[str, list[float | None]]:
    out: dict[str, list[float | None]] = {}
    for line in results.read_text(encoding="utf-8").splitlines():
        row = json.loads(line)
        if row.get("status") != "error":
            for name, v in row["metrics"].items():
                out.setdefault(name, []).append(v)
    return out


def test_the_interval_does_not_depend_on_the_order_of_the_values() -> None:
    rng = random.Random(7)
    values = [rng.choice((0.0, 0.0, 0.25, 0.5, 1.0)) for _ in range(40)]
    shuffled = values[:]
    rng.shuffle(shuffled)
    assert interval(values) == interval(shuffled) == interval(sorted(values))


def test_the_note_names_each_method_used() -> None:
    pytest.importorskip("scipy", reason="BCa needs scipy (pip install '.[stats]')")
    boot = summarize("a", [0.0, 0.5, 1.0, 0.25] * 5)
    small = summarize("b", [0.0, 1.0, 0.5])
    single = summarize("c", [0.5])
    assert (boot.method, small.method, single.method) == ("bca", "t", None)
    assert methods_note([boot]) == f"95% interval: {METHOD_NAMES['bca']}"
    assert methods_note([boot, small, single]) == (
        f"95% interval: {METHOD_NAMES['bca']} for a; Student-t for b; none for c "
        "(fewer than 2 values)")


def test_html_markdown_mlflow_and_cli_give_the_same_intervals(run: dict[str, Path | str]) -> None:
    from noisegauge.integrations.mlflow import summary_metrics

    d = Path(run["dir"])
    cli_rows = _cli_rows(str(run["stdout"]))
    assert len(cli_rows) >= 10 and "noise_sensitivity_relevant" in cli_rows
    expected = {n: (mean, lo, hi) for n, (mean, lo, hi, *_) in cli_rows.items()}

    md = (d / "s.md").read_text(encoding="utf-8")
    md_rows = {m[1]: (m[2], m[3], m[4]) for m in re.finditer(
        rf"^\| ([a-z0-9_]+) \| ({NUM}) \| (\d\.\d{{3}})–(\d\.\d{{3}}) \|", md, re.M)}
    assert md_rows == expected

    page = (d / "r.html").read_text(encoding="utf-8")
    family = page[page.index("<h2>The metric family</h2>"):]
    family = family[:family.index("</section>")]
    html_rows = {}
    for tr in re.findall(r"<tr>(.*?)</tr>", family, re.S):
        cells = [html.unescape(re.sub(r"<[^>]*>", "", c)).strip()
                 for c in re.findall(r"<td[^>]*>(.*?)</td>", tr, re.S)]
        m = re.fullmatch(r"\[(\d\.\d{3}), (\d\.\d{3})\]", cells[2]) if len(cells) > 2 else None
        if m:
            html_rows[cells[0].rstrip("↑↓")] = (cells[1], m[1], m[2])
    # the page adds diagnostics (misattributed noise) to the CLI's metrics
    labelled = {catalogue.label(n): v for n, v in expected.items()}
    assert {k: html_rows.get(k) for k in labelled} == labelled

    values = _values(d / "r.jsonl")
    summaries = {n: summarize(n, v) for n, v in values.items()}
    logged = {k: v for k, v, _ in summary_metrics(summaries)[0]}
    for name, (_, lo, hi) in expected.items():
        assert (f"{logged[name + '.ci_low']:.3f}", f"{logged[name + '.ci_high']:.3f}") == (lo, hi)

    # The label says how those intervals were made, from the same definition
    methods = {s.method for s in summaries.values()}
    note = methods_note(summaries.values())
    assert html.unescape(note) in html.unescape(family) and note in md
    assert note in str(run["stdout"])
    for method, name in METHOD_NAMES.items():
        assert (name in note) == (method in methods), (note, methods)


def test_the_docs_quote_todays_summary(run: dict[str, Path | str]) -> None:
    """docs/tutorial.md shows the summary of the bundled example, docs/concepts/reading.md
    reads one of its intervals: both must be what the CLI prints now (with scipy, as the
    tutorial says)."""
    pytest.importorskip("scipy", reason="the docs quote BCa intervals (pip install '.[stats]')")
    cli_rows = _cli_rows(str(run["stdout"]))
    tutorial = (ROOT / "docs" / "tutorial.md").read_text(encoding="utf-8")
    quoted = _cli_rows(tutorial)
    assert len(quoted) >= 5, "the tutorial's summary block is gone"
    for name, cells in quoted.items():
        assert cells == cli_rows[name], (name, cells, cli_rows[name])
    reading = (ROOT / "docs" / "concepts" / "reading.md").read_text(encoding="utf-8")
    m = re.search(r"an interval of \[(\d\.\d\d), (\d\.\d\d)\] says .*?not \"(\d\.\d{3})\"",
                  reading, re.S)
    assert m, "docs/concepts/reading.md no longer reads the relevant-noise interval"
    mean, lo, hi, *_ = cli_rows["noise_sensitivity_relevant"]
    assert (m[1], m[2], m[3]) == (f"{float(lo):.2f}", f"{float(hi):.2f}", mean)
