"""Screenshots of the review page and the corrected numbers, for docs/how-to/calibrate.md.

Scores examples/support_bot.jsonl with the offline judge, serves the real review app on
127.0.0.1, labels the first sample *by keyboard* in headless Chromium (following the
example author's annotations), fills the next 19 from those annotations
(docs/scripts/example_labels.py), and shoots:

- docs/img/review-sample.png: a sample before labelling (the judge's verdicts hidden);
- docs/img/review-labelled.png: the same sample labelled;
- docs/img/review-estimate.png: the estimate the page prints;
- docs/img/report-people.png: the report's "Checked by people" tab.

    python docs/scripts/review_screenshots.py [--out docs/img]

Needs the review, stats and report-test extras and Debian's chromium.
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
sys.path.insert(0, str(Path(__file__).resolve().parent))

from example_labels import WRONG, write_labels  # noqa: E402

FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync"]
SEED, N = 3, 20


def _serve(rows: list[dict[str, Any]], labels: Path) -> tuple[Any, Any, threading.Thread, Any]:
    import uvicorn

    from noisegauge.cli.review import bind
    from noisegauge.people.app import build_app, open_state

    state, _ = open_state(rows, labels, N, SEED)
    sock = bind(0)
    state.port = sock.getsockname()[1]
    server = uvicorn.Server(uvicorn.Config(build_app(state), log_level="warning", lifespan="off"))
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    for _ in range(500):
        if server.started:
            break
        time.sleep(0.02)
    return state, server, thread, sock


def _label_by_keyboard(page: Any, row: dict[str, Any]) -> None:
    meta = row["input"]["metadata"]
    for bucket, support in zip(meta["expected_buckets"], meta["expected_support"], strict=True):
        wrong = bucket in WRONG
        if wrong and not support:
            page.keyboard.press("3")
            continue
        for j in support:
            page.keyboard.press("abcdefghijklmnopqrstuvwxyz"[j])
        page.keyboard.press("2" if wrong else "1")
    for j in range(len(row["input"]["retrieved_contexts"])):
        page.keyboard.press("1" if j in set(meta["relevant_chunks"]) else "2")


def main() -> None:
    parser = argparse.ArgumentParser(description="review page screenshots")
    parser.add_argument("--out", type=Path, default=ROOT / "docs" / "img")
    args = parser.parse_args()
    from playwright import sync_api

    from noisegauge import evaluate
    from noisegauge.people import estimate
    from noisegauge.report import write_report

    exe = shutil.which("chromium") or shutil.which("chromium-browser")
    if exe is None:
        sys.exit("needs chromium (apt-get install chromium)")
    rows = list(evaluate(str(ROOT / "examples" / "support_bot.jsonl"), cache=False,
                         progress=False).rows())
    args.out.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp:
        labels = Path(tmp) / "labels.jsonl"
        write_labels(rows, labels, N, SEED, skip_first=1)
        state, server, thread, sock = _serve(rows, labels)
        try:
            with sync_api.sync_playwright() as p:
                browser = p.chromium.launch(executable_path=exe, args=FLAGS)
                page = browser.new_page(viewport={"width": 1280, "height": 1000})
                page.goto(state.url)
                page.wait_for_selector("#claim-0")
                first = state.by_key[state.order[0]]
                page.screenshot(path=str(args.out / "review-sample.png"))
                _label_by_keyboard(page, first)
                for _ in range(200):
                    if page.inner_text("#progress").startswith(f"{N} of {N}"):
                        break
                    page.wait_for_timeout(50)
                page.evaluate("window.scrollTo(0, 0)")
                page.screenshot(path=str(args.out / "review-labelled.png"))
                page.keyboard.press("Shift+E")
                page.wait_for_selector("#estimate-table")
                page.locator("#estimate").screenshot(path=str(args.out / "review-estimate.png"))
                report = write_report(Path(tmp) / "report.html", rows, title="support_bot.jsonl",
                                      estimate=estimate(rows, labels))
                page.goto(report.as_uri() + "#people")
                page.wait_for_selector("#people-table")
                page.locator("#p-people").screenshot(path=str(args.out / "report-people.png"))
                browser.close()
        finally:
            server.should_exit = True
            thread.join(10)
            sock.close()
    for name in ("review-sample", "review-labelled", "review-estimate", "report-people"):
        print(args.out / f"{name}.png")


if __name__ == "__main__":
    main()
