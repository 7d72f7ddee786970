"""Screenshots of the golden-set review page, for docs/how-to/golden-review.md.

Serves the real review app on 127.0.0.1 over tests/data/golden_review.jsonl, and in headless
Chromium, by keyboard, accepts the first row and composes the second's reference from one
sentence, then shoots:

- docs/img/golden-review-conflict.png: the conflict row as drafted (the banner, the traps);
- docs/img/golden-review-settled.png: the same row with the old price kept as a trap and the
  off-topic chunk dropped, before it is accepted.

    python docs/scripts/golden_screenshots.py [--out docs/img]

Needs the review and report-test extras and Debian's chromium.
"""

from __future__ import annotations

import argparse
import shutil
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
GOLDEN = ROOT / "tests" / "data" / "golden_review.jsonl"
FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync"]
NAMES = ("golden-review-conflict", "golden-review-settled")


def _wait(page: Any, selector: str, text: str) -> None:
    for _ in range(200):
        if page.locator(selector).count() and text in page.inner_text(selector):
            return
        page.wait_for_timeout(50)
    raise RuntimeError(f"{selector} never showed {text!r}")


def shoot(browser: Any, out: Path) -> list[Path]:
    """Serve the fixture, drive the page in ``browser`` and write the PNGs into ``out``."""
    import uvicorn

    from noisegauge.cli.review import bind
    from noisegauge.people.app import build_app
    from noisegauge.people.golden import read_golden
    from noisegauge.people.golden_page import GoldenState
    from noisegauge.people.labels import LabelFile

    out.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp:
        state = GoldenState(read_golden(GOLDEN), LabelFile(Path(tmp) / "events.jsonl"))
        sock = bind(0)
        state.port = sock.getsockname()[1]
        server = uvicorn.Server(uvicorn.Config(build_app(state), log_level="warning",
                                               lifespan="off"))
        thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
        thread.start()
        for _ in range(500):
            if server.started:
                break
            time.sleep(0.02)
        try:
            page = browser.new_page(viewport={"width": 1280, "height": 1000})
            page.goto(state.url)
            page.wait_for_selector("#reference-item")
            page.keyboard.press("Shift+A")                           # pro-refund: as drafted
            _wait(page, "#row-id", "team-seats")
            for key in ("ArrowDown", "b", "Shift+A"):                # one sentence too many
                page.keyboard.press(key)
            _wait(page, "#row-id", "dock-eu-shipping")
            page.screenshot(path=str(out / f"{NAMES[0]}.png"))
            for key in ("ArrowDown", "ArrowDown", "2", "ArrowDown", "3"):
                page.keyboard.press(key)
            _wait(page, "#progress", "2 accepted")
            for _ in range(100):
                if "role-drop" in (page.get_attribute("#item-3", "class") or ""):
                    break
                page.wait_for_timeout(50)
            page.screenshot(path=str(out / f"{NAMES[1]}.png"))
            page.close()
        finally:
            server.should_exit = True
            thread.join(10)
            sock.close()
    return [out / f"{name}.png" for name in NAMES]


def main() -> None:
    parser = argparse.ArgumentParser(description="golden-set review page screenshots")
    parser.add_argument("--out", type=Path, default=ROOT / "docs" / "img")
    args = parser.parse_args()
    from playwright import sync_api

    exe = shutil.which("chromium") or shutil.which("chromium-browser")
    if exe is None:
        sys.exit("needs chromium (apt-get install chromium)")
    with sync_api.sync_playwright() as p:
        browser = p.chromium.launch(executable_path=exe, args=FLAGS)
        for path in shoot(browser, args.out):
            print(path)
        browser.close()


if __name__ == "__main__":
    main()
