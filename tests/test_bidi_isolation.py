"""Bidi controls in user text are isolated: a right-to-left override (U+202E) in one claim,
chunk, question or id cannot reorder the rest of the report or the review page."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from noisegauge.infra.pages import page_script
from noisegauge.report import write_report
from noisegauge.report.markup import BIDI, closed, el, join
from report_helpers import ROOT, launched_chromium, scored_rows

RLO, PDF, RLI, PDI = "\u202e", "\u202c", "\u2067", "\u2069"
ASSETS = [ROOT / "src" / "noisegauge" / "report" / "assets" / "report.js",
          ROOT / "src" / "noisegauge" / "people" / "assets" / "review.js"]
#: The one copy of the scripts' BIDI class and textNode, put into each page script.
SHARED_JS = ROOT / "src" / "noisegauge" / "infra" / "assets" / "bidi.js"

SAMPLES: list[dict[str, Any]] = [
    {"id": f"leak-{RLO}42", "user_input": f"How much notice does the {RLO}Pro plan need?",
     "response": f"The Pro plan needs a {RLO}30-day notice. Team plans need a 60-day notice.",
     "reference": "The Pro plan needs a 30-day notice.",
     "retrieved_contexts": [f"Pro plan subscriptions need a {RLO}30-day notice.",
                            "Team plans need a 60-day notice."]},
    {"id": "plain", "user_input": "Do you ship to Mars?", "response": "We ship to Earth only.",
     "reference": "Shipping is limited to Earth.", "retrieved_contexts": ["Shipping: Earth only."]},
]


def test_text_with_a_bidi_control_is_isolated_and_closed() -> None:
    page = el("li", {"title": f"a{RLO}b"}, f"x{RLO}y", el("b", None, "ok"), "plain")
    assert page == f'<li title="a{RLO}b{PDF}"><bdi>x{RLO}y{PDF}</bdi><b>ok</b>plain</li>'
    assert el("title", None, f"x{RLO}y") == f"<title>x{RLO}y{PDF}</title>"  # no element there
    assert el("option", None, f"{RLI}x") == f"<option>{RLI}x{PDI}</option>"
    assert join(["שלום", " and ", "hello"]) == "<bdi>שלום</bdi> and hello"
    assert el("p", None, "no controls here <b>") == "<p>no controls here &lt;b&gt;</p>"


@pytest.mark.parametrize(("text", "closers"), [
    (f"a{RLO}b", PDF), (f"a{RLO}b{PDF}c", ""), (f"{RLI}a{RLO}b{PDI}", ""),
    (f"{RLI}{RLO}", PDF + PDI), (f"a{PDF}{PDI}", ""), ("\u202a\u202b", PDF + PDF)])
def test_closed_ends_what_the_text_opens(text: str, closers: str) -> None:
    assert closed(text) == text + closers


def _js_class(path: Path) -> set[int]:
    """The code points of the ``BIDI`` class in a script file."""
    return _js_class_text(path.read_text(encoding="utf-8"))


def _js_class_text(text: str) -> set[int]:
    """The code points of the ``BIDI`` class in a script."""
    m = re.search(r"const BIDI = /\[(.*?)\]/u;", text)
    assert m, "the script has no BIDI class"
    return _points(re.sub(r"\\u\{([0-9A-Fa-f]+)\}|\\u([0-9A-Fa-f]{4})",
                          lambda g: chr(int(g[1] or g[2], 16)), m[1]))


def _points(cls: str) -> set[int]:
    out: set[int] = set()
    i = 0
    while i < len(cls):
        if i + 2 < len(cls) and cls[i + 1] == "-":
            out.update(range(ord(cls[i]), ord(cls[i + 2]) + 1))
            i += 3
        else:
            out.add(ord(cls[i]))
            i += 1
    return out


def test_the_page_scripts_isolate_the_same_characters() -> None:
    py = _points(BIDI.pattern[1:-1])
    assert {0x202E, 0x2066, 0x2069, 0x200E, 0x200F, 0x05D0, 0x0627} <= py
    assert _js_class(SHARED_JS) == py


@pytest.mark.parametrize("asset", ASSETS, ids=lambda p: p.name)
def test_each_page_script_takes_the_shared_isolation(asset: Path) -> None:
    text = asset.read_text(encoding="utf-8")
    assert "const BIDI" not in text  # one copy, in bidi.js
    served = page_script(text)
    assert _js_class_text(served) == _js_class(SHARED_JS)
    # every text from the data goes through textNode, which isolates it
    assert "document.createTextNode(String(" not in served and "textNode(" in served


@pytest.fixture(scope="module")
def report_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("bidi") / "report.html"
    return write_report(path, scored_rows(SAMPLES), title=f"bidi {RLO}test")


def test_the_report_isolates_user_text_it_draws_itself(report_file: Path) -> None:
    page = report_file.read_text(encoding="utf-8")
    body = page.split('<script type="application/json"', 1)[0]
    assert f"<title>noisegauge report · bidi {RLO}test{PDF}</title>" in page
    shown = [m.start() for m in re.finditer(RLO, body)]
    assert shown, "the report shows none of the ids or titles"
    for at in shown:  # each override sits in a <bdi>, or is closed before its element ends
        before, after = body[:at], body[at:]
        inside_bdi = before.rfind("<bdi>") > before.rfind("</bdi>")
        closed_here = after.find(PDF) < after.find("<")
        assert inside_bdi or closed_here, body[max(0, at - 120):at + 120]


# -- in a browser: the text after an override still reads left to right -------------------

@pytest.fixture(scope="module")
def review_rows() -> list[dict[str, Any]]:
    return scored_rows(SAMPLES[:1])


@pytest.fixture(scope="module")
def browser(report_file: Path, review_rows: list[dict[str, Any]]) -> Iterator[Any]:
    # the fixtures first: scoring uses asyncio.run, which Playwright's running loop forbids
    with launched_chromium() as b:
        yield b


LTR_AFTER = """(sel) => {
  const out = [];
  for (const el of document.querySelectorAll(sel)) {
    const walker = document.createTreeWalker(el, NodeFilter.SHOW_TEXT);
    let seen = false;
    for (let n = walker.nextNode(); n; n = walker.nextNode()) {
      if (n.data.includes("\\u202e")) {
        seen = true;
        if (!n.parentElement.closest("bdi")) out.push("not isolated: " + n.data);
        continue;
      }
      const t = n.data.trim();
      if (!seen || t.length < 4) continue;
      const r = document.createRange();
      const first = n.data.indexOf(t[0]), last = n.data.lastIndexOf(t[t.length - 1]);
      r.setStart(n, first); r.setEnd(n, first + 1);
      const ra = r.getBoundingClientRect();
      r.setStart(n, last); r.setEnd(n, last + 1);
      const rb = r.getBoundingClientRect();
      if (!ra.width || !rb.width || ra.top !== rb.top) continue;  // hidden, or wrapped
      if (!(ra.left < rb.left)) out.push("reversed: " + t);
    }
    if (!seen) out.push("no override in " + sel);
  }
  return out;
}"""


def test_an_override_in_one_claim_does_not_flip_the_next(report_file: Path,
                                                          browser: Any) -> None:
    page = browser.new_page(viewport={"width": 1280, "height": 900})
    errors: list[str] = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.goto(report_file.as_uri() + "#s=0")
    page.wait_for_selector("#p-sample.active .response")
    for sel in ("#p-sample .response", "#p-sample .question", "#chunk-0"):
        assert page.evaluate(LTR_AFTER, sel) == [], sel
    page.goto(report_file.as_uri() + "#samples")
    page.wait_for_selector("#p-samples.active")
    assert page.evaluate(LTR_AFTER, "#p-samples") == []
    assert errors == []
    page.close()


def test_the_review_page_isolates_the_same_texts(review_rows: list[dict[str, Any]],
                                                 browser: Any, tmp_path: Path) -> None:
    from batch_helpers import require_extra
    require_extra("review")
    from people_helpers import review_server

    page = browser.new_page(viewport={"width": 1280, "height": 900})
    errors: list[str] = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    with review_server(review_rows, tmp_path / "labels.jsonl", n=1, seed=1) as state:
        page.goto(state.url)
        page.wait_for_selector("#claim-0")
        for sel in ("#question", "#answer", "#sample"):
            assert page.evaluate(LTR_AFTER, sel) == [], sel
    assert errors == []
    page.close()
