"""The golden-set review page in a real browser (Debian's chromium, headless, Playwright)
against the real app on loopback: the six fixture rows reviewed by keyboard (accept, compose
a reference from sentences, settle a conflict and drop a trap, answer a no-answer row from a
trap, reject, type a reference), every key counted; the page reloaded and every decision
still there (the events file replayed); the export of that review; undo and the mouse; every
hostile text shown as text; no page without the token."""

from __future__ import annotations

import json
import re
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from batch_helpers import require_extra

require_extra("review", "report-test")

from click.testing import CliRunner  # noqa: E402

from noisegauge.cli.main import cli  # noqa: E402
from noisegauge.people.golden import read_golden  # noqa: E402
from people_helpers import golden_server  # noqa: E402
from report_helpers import launched_chromium, write_jsonl  # noqa: E402

GOLDEN = Path(__file__).resolve().parent / "data" / "golden_review.jsonl"


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    with launched_chromium() as b:
        yield b


@pytest.fixture
def page(browser: Any) -> Iterator[Any]:
    pg = browser.new_page(viewport={"width": 1280, "height": 900})
    problems: list[str] = []
    pg.on("pageerror", lambda e: problems.append(f"pageerror: {e}"))
    pg.on("console", lambda m: problems.append(m.text) if m.type == "error" and
          "400 (Bad Request)" not in m.text and "404 (Not Found)" not in m.text else None)
    outside: list[str] = []
    pg.on("request", lambda r: outside.append(r.url) if not r.url.startswith("http://127.0.0.1:") else None)
    yield pg
    assert problems == [], problems
    assert outside == [], f"the page reached beyond the review server: {outside}"
    pg.close()


def _until(page: Any, selector: str, check: Any) -> str:
    """Wait for ``check(inner_text)`` (the page's CSP forbids Playwright's eval'd waits)."""
    text = ""
    for _ in range(200):
        if page.locator(selector).count():
            text = page.inner_text(selector)
            if check(text):
                return text
        page.wait_for_timeout(50)
    raise AssertionError(f"{selector}: {text!r}")


class Keys:
    """The keyboard, counting every key a person presses (a typed text: one per character)."""

    def __init__(self, page: Any) -> None:
        self.page, self.count = page, 0

    def press(self, *keys: str) -> None:
        for key in keys:
            self.page.keyboard.press(key)
            self.count += 1

    def type(self, text: str) -> None:
        self.page.keyboard.type(text)
        self.count += len(text)


def _open(page: Any, url: str) -> None:
    page.goto(url)
    page.wait_for_selector("#reference-item")


def _row_words(row: dict[str, Any]) -> int:
    texts = [row["user_input"], row.get("reference") or "", *row["retrieved_contexts"],
             *(d["text"] for d in row["distractors"])]
    return sum(len(t.split()) for t in texts)


def test_a_golden_set_reviewed_by_keyboard_survives_a_reload(page: Any, tmp_path: Path) -> None:
    golden = Path(shutil.copy(GOLDEN, tmp_path / "golden.jsonl"))
    events = tmp_path / "events.jsonl"
    rows = {r["id"]: r for r in read_golden(golden)}
    cost: dict[str, int] = {}
    with golden_server(golden, events) as state:
        _open(page, state.url)
        assert page.inner_text("#progress") == "0 accepted · 0 rejected · 6 to go (of 6)"
        keys = Keys(page)

        def row(rid: str, *presses: str) -> None:
            _until(page, "#sample h2", lambda t: t.startswith(rid))
            before = keys.count
            keys.press(*presses)
            cost[rid] = keys.count - before

        row("pro-refund", "Shift+A")                       # the draft is right
        row("team-seats", "ArrowDown", "b")                # sentence b taken out of the draft
        _until(page, "#reference", lambda t: t == "The Team plan includes 10 seats.")
        assert page.inner_text("#reference-tag") == "edited"
        keys.press("Shift+A")
        cost["team-seats"] += 1
        _until(page, "#sample h2", lambda t: t.startswith("dock-eu-shipping"))
        assert "conflict" in page.inner_text("#banner")
        page.keyboard.press("Shift+A")                     # refused: the conflict is open
        _until(page, "#status", lambda t: "settle the conflict first" in t)
        row("dock-eu-shipping", "ArrowDown", "ArrowDown", "2",  # the 2024 price: a trap
            "ArrowDown", "3",                              # the founding year: no trap, dropped
            "Shift+A")
        _until(page, "#sample h2", lambda t: t.startswith("enterprise-api-limit"))
        assert "no answer found" in page.inner_text("#banner")
        row("enterprise-api-limit", "ArrowDown", "ArrowDown", "1", "b")  # a trap held it
        _until(page, "#reference", lambda t: "6,000 requests per minute" in t)
        keys.press("Shift+A")
        cost["enterprise-api-limit"] += 1
        row("sso-okta", "Shift+R")                         # the documents do not answer it
        _until(page, "#sample h2", lambda t: t.startswith("export-formats"))
        before = keys.count
        keys.press("Enter", "Backspace")                   # edit: the draft stops short
        keys.type(" to CSV or JSON.")
        keys.press("Enter", "Shift+A")
        cost["export-formats"] = keys.count - before
        _until(page, "#progress", lambda t: t.startswith("5 accepted · 1 rejected · 0 to go"))

        page.reload()
        page.wait_for_selector("#reference-item")
        seen = {}
        for _ in range(6):
            rid = page.inner_text("#row-id")
            seen[rid] = (page.inner_text("#verdict"), page.inner_text("#reference"),
                         [page.get_attribute(f"#item-{j}", "class") or ""
                          for j in range(page.locator("[id^=item-]").count())])
            page.keyboard.press("ArrowRight")
            page.wait_for_timeout(60)
    assert {rid: v[0] for rid, v in seen.items()} == {
        **dict.fromkeys(rows, "✓ accepted"), "sso-okta": "✗ rejected"}
    assert seen["team-seats"][1] == "The Team plan includes 10 seats."
    assert seen["export-formats"][1] == "Workspaces can be exported to CSV or JSON."
    dock = seen["dock-eu-shipping"][2]
    assert "role-distractor" in dock[1] and "role-drop" in dock[3] and "role-answer" in dock[0]

    final = tmp_path / "final.jsonl"
    res = CliRunner().invoke(cli, ["testset", "export", str(golden), "--labels", str(events),
                                   "--out", str(final)])
    assert res.exit_code == 0, res.output
    kept = {r["id"]: r for r in map(json.loads, final.read_text(encoding="utf-8").splitlines())}
    assert set(kept) == set(rows) - {"sso-okta"}
    assert kept["export-formats"]["reference"] == "Workspaces can be exported to CSV or JSON."
    assert kept["enterprise-api-limit"]["retrieved_context_ids"] == ["plans/enterprise.md#5"]
    assert all(r["draft"]["reviewed"] for r in kept.values())

    # What a row costs: keys pressed (typing counted per character) and words to read.
    assert cost == {"pro-refund": 1, "team-seats": 3, "dock-eu-shipping": 6,
                    "enterprise-api-limit": 5, "sso-okta": 1, "export-formats": 20}
    words = {rid: _row_words(r) for rid, r in rows.items()}
    print("\nkeys per row:", cost, "\nwords to read per row:", words)


def test_undo_and_the_mouse(page: Any, tmp_path: Path) -> None:
    golden = write_jsonl(tmp_path / "golden.jsonl", read_golden(GOLDEN)[1:2])  # team-seats
    with golden_server(golden, tmp_path / "events.jsonl") as state:
        _open(page, state.url)
        draft = page.inner_text("#reference")
        page.click("#item-0 .sentence[data-sentence='1']")  # click: that sentence taken out
        _until(page, "#reference", lambda t: t == "The Team plan includes 10 seats.")
        page.click("#item-0 .sentence[data-sentence='2']")  # and another one put in
        _until(page, "#reference", lambda t: t.endswith("moved between members at any time."))
        assert page.locator("#item-0 .sentence.on").count() == 2
        page.click("#item-1 [data-role='drop']")
        _until(page, "#status", lambda t: t == "saved")
        assert "role-drop" in (page.get_attribute("#item-1", "class") or "")
        page.keyboard.press("Shift+U")                      # undo: the trap is back
        _until(page, "#status", lambda t: t == "undone")
        assert "role-distractor" in (page.get_attribute("#item-1", "class") or "")
        page.keyboard.press("Shift+D")                      # the draft's reference again
        _until(page, "#reference", lambda t: t == draft)
        assert page.inner_text("#reference-tag") == "as drafted"
        page.click("#item-0 .chunk-key")
        page.keyboard.press("3")                            # the only chunk dropped ...
        page.keyboard.press("Shift+A")                      # ... so nothing holds the answer
        _until(page, "#status", lambda t: "no chunk holds the answer" in t)
        page.click("#item-0 [data-role='answer']")
        page.click("#edit-btn")
        page.fill("#reference-edit", "Ten seats.")
        page.click("#accept")                               # what was typed is kept
        _until(page, "#verdict", lambda t: t == "✓ accepted")
        assert page.inner_text("#reference") == "Ten seats."


def test_what_is_typed_survives_a_redraw(page: Any, tmp_path: Path) -> None:
    """A redraw while the reference is being edited (a click on a chunk, a save's answer
    arriving) keeps the typed text; it put the saved reference back (CI saw the typed words
    appended to it when a save answered between 'edit' and the typing)."""
    golden = write_jsonl(tmp_path / "golden.jsonl", read_golden(GOLDEN)[1:2])
    with golden_server(golden, tmp_path / "events.jsonl") as state:
        _open(page, state.url)
        page.click("#edit-btn")
        page.fill("#reference-edit", "Ten seats.")
        page.click("#item-1 .origin")                      # redraws the row, still editing
        assert page.locator("#reference-edit").count() == 1
        assert page.input_value("#reference-edit") == "Ten seats."
        page.click("#accept")
        _until(page, "#verdict", lambda t: t == "✓ accepted")
        assert page.inner_text("#reference") == "Ten seats."


XSS = '<script>window.__pwned = 1</script><b id="bold">bold</b>'
IMG = '<img src=x onerror="window.__pwned = 2">'
RTL = "\u202eترجمة: يمكن استرداد المبلغ خلال 30 يومًا. סעיף שני."
LONG = "x" * 10_000


def test_hostile_text_is_shown_as_text(page: Any, tmp_path: Path) -> None:
    base = read_golden(GOLDEN)[0]
    row = {**base, "id": "</style><script>window.__pwned = 3</script>", "user_input": XSS,
           "reference": IMG, "retrieved_contexts": [f"{IMG} Refunds. {XSS}", RTL],
           "retrieved_context_ids": ["a<b>", "rtl"],
           "distractors": [{"id": "long", "text": LONG, "kind": "topical",
                            "differs": "</td><script>window.__pwned = 4</script>"}]}
    golden = write_jsonl(tmp_path / "golden.jsonl", [row])
    with golden_server(golden, tmp_path / "events.jsonl") as state:
        _open(page, state.url)
        assert page.inner_text("#question") == XSS
        assert page.inner_text("#reference") == IMG
        assert page.inner_text("#row-id") == row["id"]
        sentences = " ".join(page.locator("#item-0 .sentence").all_inner_texts())
        assert "<img src=x" in sentences and "<script>" in sentences
        assert "window.__pwned = 4" in page.inner_text("#item-2 .origin")
        assert page.evaluate("window.__pwned") is None
        assert page.locator("#sample img, #sample script, #sample b#bold").count() == 0
        # Right-to-left text keeps its direction; a 10,000-character word stays in the page.
        rtl = page.locator("#item-1 .sentence span").first
        assert rtl.get_attribute("dir") == "auto"
        assert rtl.evaluate("e => getComputedStyle(e).direction") == "rtl"
        assert page.evaluate("document.documentElement.scrollWidth") <= 1280
        box = page.locator("#item-2").bounding_box()
        assert box is not None and box["x"] + box["width"] <= 1280
        page.keyboard.press("Shift+A")
        _until(page, "#verdict", lambda t: t == "✓ accepted")


def test_no_page_without_the_token(page: Any, tmp_path: Path) -> None:
    with golden_server(GOLDEN, tmp_path / "events.jsonl") as state:
        root = re.sub(r"/[^/]+/$", "/", state.url)
        for url in (root, root + "not-the-token/", state.url[:-2] + "/"):
            resp = page.goto(url)
            assert resp is not None and resp.status == 404, url
            assert page.inner_text("body") == "not found"
            assert page.locator("#reference-item").count() == 0
        assert not (tmp_path / "events.jsonl").exists()


def test_the_docs_screenshots_are_shot_from_the_page(browser: Any, tmp_path: Path) -> None:
    """docs/scripts/golden_screenshots.py drives this page and writes its two PNGs."""
    import importlib.util

    script = Path(__file__).resolve().parents[1] / "docs" / "scripts" / "golden_screenshots.py"
    spec = importlib.util.spec_from_file_location("golden_screenshots", script)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    paths = module.shoot(browser, tmp_path)
    assert [p.name for p in paths] == ["golden-review-conflict.png", "golden-review-settled.png"]
    for p in paths:
        assert p.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and p.stat().st_size > 10_000
