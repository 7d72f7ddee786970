"""A conversation in the HTML report, in a real browser (Debian's chromium, Playwright): the
turns before the question show above it, as text (markup stays text), and a turn in a
right-to-left script or with an override is isolated in a <bdi>.

Needs ``apt-get install chromium`` and ``pip install playwright`` (extra ``report-test``).
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from batch_helpers import require_extra
from noisegauge import FakeJudge, evaluate
from noisegauge.report import write_report
from report_helpers import launched_chromium

ROOT = Path(__file__).resolve().parents[1]
MARKUP = '<img src=x onerror="window.__pwned=1">What about <b>monthly</b>?'
OVERRIDE = "\u202eשלום, is support included?"  # an override left open, in Hebrew




@pytest.fixture(scope="module")
def report_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    rows = [json.loads(x) for x in (ROOT / "examples" / "chat_log.jsonl").read_text("utf-8")
            .splitlines() if x.strip()]
    rows[1] = {**rows[1], "history": [*rows[1]["history"], {"role": "user", "content": MARKUP},
                                      {"role": "assistant", "content": OVERRIDE}]}
    scored = list(evaluate(rows, judge=FakeJudge(), cache=False, progress=False).rows())
    path = write_report(tmp_path_factory.mktemp("chat") / "report.html", scored, title="chats")
    # beside it, a single-turn report (scored here: Playwright's running loop forbids it later)
    single = {"id": "one", "user_input": "Q?", "response": "A.", "reference": "A.",
              "retrieved_contexts": ["A."]}
    one = list(evaluate([single], judge=FakeJudge(), cache=False, progress=False).rows())
    write_report(path.with_name("single.html"), one, title="single")
    path.with_name("rows.json").write_text(json.dumps(scored), encoding="utf-8")
    return path


@pytest.fixture(scope="module")
def browser(report_file: Path) -> Iterator[Any]:
    with launched_chromium() as b:
        yield b


def _open(browser: Any, report_file: Path, sample: int) -> Any:
    pg = browser.new_page(viewport={"width": 1280, "height": 900})
    problems: list[str] = []
    pg.on("pageerror", lambda e: problems.append(f"pageerror: {e}"))
    pg.on("console", lambda m: problems.append(m.text) if m.type == "error" else None)
    pg.problems = problems
    pg.goto(report_file.as_uri() + f"#s={sample}")
    pg.wait_for_selector("#p-sample .question")
    return pg


def test_the_turns_before_the_question_show_above_it(browser: Any, report_file: Path) -> None:
    pg = _open(browser, report_file, 1)
    history = pg.locator("#p-sample .history")
    assert history.count() == 1
    assert history.locator("h3").inner_text().lower() == "conversation before the question · 4 turns"
    turns = history.locator("li.turn")
    assert [turns.nth(i).locator(".role").inner_text().lower() for i in range(4)] == [
        "user", "assistant", "user", "assistant"]
    assert turns.nth(0).locator(".text").inner_text() == "Does the Starter plan include email support?"
    # markup in a turn is text: shown as written, never run
    assert turns.nth(2).locator(".text").inner_text() == MARKUP
    assert pg.locator("#p-sample .history img").count() == 0
    assert pg.evaluate("window.__pwned") is None
    # the override is isolated: it cannot reorder what follows
    assert turns.nth(3).locator(".text bdi").inner_text() == OVERRIDE
    top_history = history.bounding_box()["y"]
    top_question = pg.locator("#p-sample .question").bounding_box()["y"]
    assert top_history < top_question
    assert pg.locator("#p-sample .question").inner_text() == "Does it include phone support too?"
    assert pg.problems == [], pg.problems
    pg.close()


def test_a_sample_without_history_shows_none(browser: Any, report_file: Path) -> None:
    pg = _open(browser, report_file.with_name("single.html"), 0)
    assert pg.locator("#p-sample .history").count() == 0
    assert pg.locator("#p-sample .question").inner_text() == "Q?"
    pg.close()


def test_the_review_page_shows_the_turns_before_the_question(browser: Any, report_file: Path,
                                                             tmp_path: Path) -> None:
    require_extra("review")
    from people_helpers import review_server

    rows = json.loads(report_file.with_name("rows.json").read_text("utf-8"))
    chat = [r for r in rows if r["id"] == "chat02-history-support"]
    with review_server(chat, tmp_path / "labels.jsonl") as state:
        pg = browser.new_page(viewport={"width": 1280, "height": 900})
        problems: list[str] = []
        pg.on("pageerror", lambda e: problems.append(f"pageerror: {e}"))
        pg.goto(state.url)
        pg.wait_for_selector("#claim-0")
        turns = pg.locator("#history li.turn")
        assert turns.count() == 4
        assert turns.nth(0).locator(".role").inner_text().lower() == "user"
        assert "Does the Starter plan include email support?" in turns.nth(0).inner_text()
        assert turns.nth(2).locator(".text").inner_text() == MARKUP  # text, not markup
        assert pg.locator("#history img").count() == 0
        assert turns.nth(3).locator("bdi").inner_text() == OVERRIDE
        assert pg.locator("#history").bounding_box()["y"] < pg.locator("#question").bounding_box()["y"]
        assert problems == [], problems
        pg.close()
