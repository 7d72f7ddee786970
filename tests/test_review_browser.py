"""The review page in a real browser (Debian's chromium, headless, driven by Playwright)
against the real app on loopback: a sample labelled by keyboard, the page reloaded and the
labels still there, the estimate printed; the judge hidden until asked for, and a label made
after looking marked; every text shown as text (a claim holding <script> runs nothing)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from batch_helpers import require_extra

require_extra("review", "report-test", "stats")

from noisegauge.people.labels import read_labels  # noqa: E402
from people_helpers import example_rows, review_server  # noqa: E402
from report_helpers import (  # noqa: E402
    SAMPLES,
    XSS_A,
    XSS_Q,
    launched_chromium,
    scored_rows,
)


@pytest.fixture(scope="module")
def rows() -> list[dict[str, Any]]:
    # Scored before the browser starts: evaluate's asyncio.run cannot run in Playwright's loop.
    return [*scored_rows(SAMPLES[:1]), *example_rows()[:7]]


MANY = 30  # chunks in one sample: past Z, the labels go on AA, AB, ...


@pytest.fixture(scope="module")
def many_rows() -> list[dict[str, Any]]:
    """One sample with MANY chunks, scored before the browser starts (as ``rows``)."""
    chunks = ["Pro plan subscriptions need a 30-day notice.",
              *(f"Filler chunk number {j} says nothing of plans." for j in range(1, MANY))]
    return scored_rows([{"id": "many", "user_input": "How much notice does the Pro plan need?",
                         "response": "The Pro plan needs a 30-day notice. It costs $49.",
                         "reference": "The Pro plan needs a 30-day notice.",
                         "retrieved_contexts": chunks}])


@pytest.fixture(scope="module")
def browser(rows: list[dict[str, Any]], many_rows: list[dict[str, Any]]) -> Iterator[Any]:
    with launched_chromium() as b:
        yield b


@pytest.fixture
def page(browser: Any) -> Iterator[Any]:
    pg = browser.new_page(viewport={"width": 1280, "height": 900})
    problems: list[str] = []
    pg.on("pageerror", lambda e: problems.append(f"pageerror: {e}"))
    pg.on("console", lambda m: problems.append(m.text) if m.type == "error" else None)
    outside: list[str] = []
    pg.on("request", lambda r: outside.append(r.url) if not r.url.startswith("http://127.0.0.1:") else None)
    pg.problems = problems
    yield pg
    assert problems == [], problems
    assert outside == [], f"the page reached beyond the review server: {outside}"
    pg.close()


def _until(page: Any, selector: str, check: Any) -> str:
    """Wait for ``check(inner_text)`` (the page's CSP forbids Playwright's eval'd waits)."""
    text = ""
    for _ in range(200):
        text = page.inner_text(selector)
        if check(text):
            return text
        page.wait_for_timeout(50)
    raise AssertionError(f"{selector}: {text!r}")


def _open(page: Any, url: str) -> None:
    page.goto(url)
    page.wait_for_selector("#claim-0")


def test_label_by_keyboard_reload_and_estimate(rows: list[dict[str, Any]], page: Any,
                                                tmp_path: Path) -> None:
    labels = tmp_path / "labels.jsonl"
    with review_server(rows, labels, n=8, seed=5) as state:
        _open(page, state.url)
        assert page.inner_text("#progress") == "0 of 8 labelled"
        sample_id = state.order[0]
        row = state.by_key[sample_id]
        n_claims, n_chunks = len(row["response_claims"]), len(row["input"]["retrieved_contexts"])
        assert n_claims >= 2 and n_chunks >= 2
        page.keyboard.press("3")                   # claim 0: wrong, in no chunk
        page.keyboard.press("a")                   # claim 1 (focus moved): stated in chunk A
        page.keyboard.press("1")                   # ... and correct
        for _ in range(n_claims - 2):
            page.keyboard.press("1")
        page.keyboard.press("1")                   # chunk A: relevant
        for _ in range(n_chunks - 1):
            page.keyboard.press("2")               # the others: not relevant
        _until(page, "#progress", lambda t: t.startswith("1 of 8"))
        page.keyboard.press("ArrowUp")
        page.keyboard.press("1")                   # last chunk: relevant after all ...
        page.keyboard.press("Shift+U")             # ... undone
        page.wait_for_selector("text=undone")
        lab = read_labels(labels).current(sample_id, state.snapshot()["samples"][0]["digest"])
        assert lab is not None and lab.claims[0] == ("wrong", ())
        assert lab.claims[1] == ("correct", (0,))
        assert lab.chunks == {0: True, **dict.fromkeys(range(1, n_chunks), False)}
        assert not lab.looked

        page.reload()
        page.wait_for_selector("#claim-0")
        page.keyboard.press("ArrowLeft")  # the page resumes at the first unlabelled sample
        assert page.inner_text("#progress") == "1 of 8 labelled"
        assert page.inner_text("#claim-0 .answer") == "wrong, in no chunk"
        assert page.inner_text("#claim-1 .answer") == "correct, stated in A"
        assert page.inner_text("#chunk-0 .answer") == "relevant"

        page.keyboard.press("Shift+E")
        page.wait_for_selector("#estimate-table")
        table = page.inner_text("#estimate-table")
        assert "noise_sensitivity_relevant" in table and "corrected" in table
        page.screenshot(path=str(tmp_path / "review.png"))


def test_judge_hidden_until_asked_and_looking_is_marked(rows: list[dict[str, Any]], page: Any,
                                                        tmp_path: Path) -> None:
    labels = tmp_path / "labels.jsonl"
    with review_server(rows, labels, n=8, seed=5) as state:
        _open(page, state.url)
        assert not page.is_visible("#claim-0 .judge")
        page.keyboard.press("Shift+V")
        assert page.is_visible("#claim-0 .judge")
        assert page.inner_text("#claim-0 .judge").startswith("judge: ")
        page.keyboard.press("1")
        page.wait_for_selector("text=labelled after looking at the judge")
        sample = state.snapshot()["samples"][0]
        assert read_labels(labels).current(sample["id"], sample["digest"]).looked


def test_a_chunk_key_records_no_verdict(rows: list[dict[str, Any]], page: Any,
                                        tmp_path: Path) -> None:
    """A chunk letter on a claim not labelled yet is a pick, not a label: nothing is saved
    (it used to save an implicit "correct") until 1 or 2 records the verdict with it."""
    labels = tmp_path / "labels.jsonl"
    with review_server(rows, labels, n=8, seed=5) as state:
        _open(page, state.url)
        digest = state.snapshot()["samples"][0]["digest"]
        page.keyboard.press("b")                   # claim 0: stated in chunk B ...
        _until(page, "#claim-0 .answer", lambda t: "picked B" in t)
        lab = read_labels(labels).current(state.order[0], digest)
        assert lab is None or 0 not in lab.claims  # ... no verdict given, none saved
        assert not labels.exists() or '"kind": "claim"' not in labels.read_text(encoding="utf-8")
        page.keyboard.press("2")                   # ... and wrong: both recorded now
        _until(page, "#claim-0 .answer", lambda t: t == "wrong, stated in B")
        lab = read_labels(labels).current(state.order[0], digest)
        assert lab is not None and lab.claims[0] == ("wrong", (1,))


def test_every_text_is_escaped(rows: list[dict[str, Any]], page: Any, tmp_path: Path) -> None:
    with review_server(rows, tmp_path / "labels.jsonl", n=8, seed=5) as state:
        _open(page, state.url)
        for _ in range(state.order.index("xss")):
            page.keyboard.press("ArrowRight")
        _until(page, "#question", lambda t: "<script>" in t)
        assert page.inner_text("#question") == XSS_Q
        assert page.inner_text("#answer") == XSS_A
        claims = " ".join(page.locator(".claim-text").all_inner_texts())
        assert "<img src=x" in claims or "</style>" in claims or "onerror" in claims
        assert page.evaluate("window.__pwned") is None
        assert page.locator("#sample img, #sample script, #sample b#bold").count() == 0


def test_thirty_chunks_are_labelled_past_z(many_rows: list[dict[str, Any]], page: Any,
                                           tmp_path: Path) -> None:
    with review_server(many_rows, tmp_path / "labels.jsonl") as state:
        _open(page, state.url)
        keys = page.locator("#sample .chunk-key").all_inner_texts()
        letters = [chr(65 + j) for j in range(26)]
        assert keys == [*letters, "AA", "AB", "AC", "AD"]
        assert page.locator("#claim-0 .picks button").all_inner_texts() == keys
        page.click("#claim-0 .picks button[title='chunk AD']")
        _until(page, "#claim-0 .answer", lambda t: "picked AD" in t)  # a pick, no verdict yet
        page.keyboard.press("1")
        _until(page, "#claim-0 .answer", lambda t: t == "correct, stated in AD")


def test_focused_item_is_above_the_footer(many_rows: list[dict[str, Any]], page: Any,
                                          tmp_path: Path) -> None:
    with review_server(many_rows, tmp_path / "labels.jsonl") as state:
        _open(page, state.url)
        for _ in range(12):  # down into the chunks, past the first screenful
            page.keyboard.press("ArrowDown")
        page.wait_for_selector("#chunk-10.focus")
        page.wait_for_timeout(100)
        box = page.locator(".item.focus").bounding_box()
        footer = page.locator("footer").bounding_box()
        assert box is not None and footer is not None
        assert box["y"] + box["height"] <= footer["y"], (box, footer)
