"""The HTML report in a real browser: Debian's chromium, driven headless by Playwright.

Needs ``apt-get install chromium`` and ``pip install playwright`` (extra ``report-test``; no
``playwright install``: the system browser is used). Skipped with the reason otherwise.
Screenshots are saved under pytest's tmp dir, and also under ``artifacts/`` (git-ignored) when
``NOISEGAUGE_ARTIFACTS=1``.
"""

from __future__ import annotations

import json
import os
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from noisegauge.report import write_report
from report_helpers import ROOT, XSS_A, XSS_Q, launched_chromium, scored_rows


@pytest.fixture(scope="module")
def browser(report_file: Path) -> Iterator[Any]:
    # report_file first: scoring uses asyncio.run, which Playwright's running loop forbids.
    with launched_chromium() as b:
        yield b


@pytest.fixture(scope="module")
def report_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The report, and beside it ``compare.html`` (the run compared with itself)."""
    path = tmp_path_factory.mktemp("report") / "report.html"
    rows = scored_rows()
    write_report(path.with_name("compare.html"), rows, title="compare", compare=rows,
                 compare_label="baseline")
    support = scored_rows([json.loads(x) for x in (ROOT / "examples" / "support_bot.jsonl")
                           .read_text(encoding="utf-8").splitlines() if x.strip()])
    write_report(path.with_name("support.html"), support, title="examples/support_bot.jsonl")
    return write_report(path, rows, title="browser test")


@pytest.fixture
def page(report_file: Path, browser: Any) -> Iterator[Any]:
    pg = browser.new_page(viewport={"width": 1280, "height": 800})
    problems: list[str] = []
    pg.on("console", lambda m: problems.append(f"{m.type}: {m.text}") if m.type in ("error", "warning") else None)
    pg.on("pageerror", lambda e: problems.append(f"pageerror: {e}"))
    pg.on("dialog", lambda d: (problems.append(f"dialog: {d.message}"), d.dismiss()))
    requests: list[str] = []
    pg.on("request", lambda r: requests.append(r.url) if not r.url.startswith("file:") else None)
    pg.goto(report_file.as_uri())
    pg.problems = problems
    pg.requests = requests
    yield pg
    assert problems == [], problems
    assert requests == [], f"the report reached the network: {requests}"
    pg.close()


def _shot(pg: Any, tmp_path: Path, name: str) -> Path:
    path = tmp_path / name
    pg.screenshot(path=str(path))
    assert path.stat().st_size > 10_000
    if os.environ.get("NOISEGAUGE_ARTIFACTS"):
        keep = ROOT / "artifacts"
        keep.mkdir(exist_ok=True)
        shutil.copy(path, keep / name)
    return path


def _fits(pg: Any) -> bool:
    return bool(pg.evaluate("document.documentElement.scrollWidth <= window.innerWidth"))


@pytest.mark.parametrize("width", [1280, 1400, 1600, 1920])
def test_the_metric_table_is_whole_from_1280_px(report_file: Path, browser: Any, width: int,
                                                 tmp_path: Path) -> None:
    """The bundled example's overview: no column of the metric family cut off at any width."""
    pg = browser.new_page(viewport={"width": width, "height": 900})
    pg.goto(report_file.with_name("support.html").as_uri())
    cards = pg.evaluate("""() => [...document.querySelectorAll('table.metrics')].map(t => {
        const card = t.parentElement.getBoundingClientRect(), table = t.getBoundingClientRect();
        return [Math.round(table.right), Math.round(card.right),
                t.querySelectorAll('thead th').length]; })""")
    assert cards, "no metric table"
    for table_right, card_right, columns in cards:
        assert table_right <= card_right and columns >= 5, (width, cards)
    assert _fits(pg)
    if width == 1280:
        _shot(pg, tmp_path, "report-overview-1280.png")
    pg.close()


def test_overview_loads_without_errors(page: Any, tmp_path: Path) -> None:
    assert page.title() == "noisegauge report · browser test"
    assert page.is_visible("#verdict") and page.is_visible(".scatter")
    assert page.locator(".scatter .dot").count() == 2
    assert page.evaluate("window.__pwned") is None
    assert _fits(page)
    _shot(page, tmp_path, "report-overview.png")


def test_the_table_sorts_and_filters(page: Any) -> None:
    page.click('a.tab[data-tab="samples"]')
    rows = page.locator("#table tbody tr")
    assert rows.count() == 4
    assert rows.first.get_attribute("data-pos") == "1"  # worst first: the leaking sample
    page.select_option("#f-status", "error")
    assert rows.count() == 1 and "broken" in rows.first.inner_text()
    page.select_option("#f-status", "")
    page.fill("#f-q", "60-day")
    assert rows.count() == 1 and "leak" in rows.first.inner_text()
    page.fill("#f-q", "")
    page.select_option("#f-bucket", "in")
    assert rows.count() == 1
    page.select_option("#f-bucket", "")
    page.select_option("#f-metric", "hallucination")
    page.fill("#f-min", "0.4")  # xss: at least one of its two markup-laden claims is hallucinated
    assert rows.count() == 1 and "xss" in rows.first.inner_text()
    page.fill("#f-min", "")
    assert rows.count() == 4
    assert _fits(page)


def test_a_sample_shows_highlights_and_evidence(page: Any, tmp_path: Path) -> None:
    page.evaluate("location.hash = 's=1'")
    mark = page.locator("#p-sample .response .hl.b-in")
    assert mark.count() == 1 and mark.inner_text() == "Team plans need a 60-day notice."
    assert page.locator("#p-sample .response .hl.b-g").count() == 1
    leak = page.locator("#chunk-1 .mk.leak-in")
    assert leak.count() >= 1 and "60-day" in leak.first.inner_text()
    assert "irrelevant" in page.inner_text("#chunk-1 .tag")
    mark.hover()
    assert page.is_visible("#tip") and "leaked from chunk #2" in page.inner_text("#tip")
    mark.click()
    assert "on" in (page.get_attribute("#chunk-1", "class") or "")
    assert page.locator("#p-sample .refclaims li").count() == 1
    assert _fits(page)
    _shot(page, tmp_path, "report-sample.png")


def test_the_sources_tab_ranks_the_leaking_chunk_and_opens_its_sample(page: Any,
                                                                        tmp_path: Path) -> None:
    page.click('a.tab[data-tab="sources"]')
    assert page.is_visible("#p-sources") and page.is_visible("#topk svg.lines")
    first = page.locator("#p-sources table.sources tbody tr").first
    assert "60-day" in first.inner_text() and "irrelevant noise 1" in first.inner_text()
    assert "1 source carries 100% of leaked claims" in page.inner_text("#p-sources")
    assert _fits(page)
    _shot(page, tmp_path, "report-sources.png")
    first.locator("a.chip").first.click()
    # The click sets location.hash; the page opens the sample on 'hashchange', a task later.
    page.wait_for_selector("#p-sample", state="visible", timeout=5000)
    assert page.locator("#p-sample .response .hl.b-in").inner_text() == "Team plans need a 60-day notice."


def test_hostile_text_renders_as_text(page: Any) -> None:
    page.evaluate("location.hash = 's=0'")
    assert XSS_Q in page.inner_text("#p-sample .question")
    assert XSS_A in page.inner_text("#p-sample .response")
    assert page.locator("#p-sample img").count() == 0 and page.locator("#bold").count() == 0
    assert "</script>" in page.inner_text("#chunk-0")
    assert page.evaluate("window.__pwned") is None


def test_error_and_undefined_rows_show_their_reason(page: Any) -> None:
    page.evaluate("location.hash = 's=3'")
    assert "reference" in page.inner_text("#p-sample .notice.error")
    page.evaluate("location.hash = 's=2'")
    assert "no response claims" in page.inner_text("#p-sample .notice.undefined")


def test_scatter_dots_open_samples_and_compare_shows_both_runs(report_file: Path,
                                                               browser: Any) -> None:
    pg = browser.new_page(viewport={"width": 1280, "height": 800})
    problems: list[str] = []
    pg.on("pageerror", lambda e: problems.append(str(e)))
    pg.goto(report_file.with_name("compare.html").as_uri())
    dot = pg.locator(".scatter .dot").first
    target = dot.get_attribute("data-s")
    dot.click()
    assert pg.evaluate("location.hash") == f"#s={target}"
    assert pg.is_visible("#p-sample .response")
    assert "compared with baseline" in pg.inner_text("#p-sample").lower()
    pg.click('a.tab[data-tab="compare"]')
    assert pg.is_visible("#p-compare") and "no clear difference" in pg.inner_text("#p-compare")
    assert _fits(pg) and problems == []
    pg.close()
