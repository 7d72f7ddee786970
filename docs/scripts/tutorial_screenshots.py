"""Screenshots and the curve of docs/tutorials/golden-set.md (and its Korean twin), from the
real commands on ``examples/lumora-kb``.

Drafts the golden set with ``noisegauge testset`` (the tutorial's command), serves the real
review page on 127.0.0.1, opens it in headless Chromium (Debian's, driven by Playwright) and:

- docs/img/tutorial-review.png: the first row with a look-alike trap, as drafted;
- docs/img/tutorial-review-fixed.png: the row "What is the API rate limit on the Pro plan?"
  after a review *by keyboard*: the current limits chunk marked as holding the answer (1),
  every other chunk drafted as holding it or in conflict kept as a trap (2), the reference
  composed from the right sentence (⏎ to clear it, then the sentence's letter), accepted (⇧A);
- docs/img/tutorial-curve.png: noise sensitivity (both modes) of the extractive pipeline on the
  reviewed set (the stand-in reviewer's, docs/scripts/golden_review_events.py) with the rows'
  own traps against random chunks, as the tutorial's two stress commands give it.

    python docs/scripts/tutorial_screenshots.py [--out docs/img]

Needs the testset, review, plot and report-test extras and Debian's chromium.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(Path(__file__).resolve().parent))

from golden_review_events import answers, review  # noqa: E402

FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync"]
FIXED_QUESTION = "What is the API rate limit on the Pro plan?"
RIGHT = "The Pro plan allows 1,000 API requests"
LEVELS = "0,1,2,4"


def noisegauge(*args: str, cwd: Path) -> None:
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src"), "NOISEGAUGE_CACHE": "off"}
    subprocess.run([sys.executable, "-m", "noisegauge", *args, "-q"], cwd=cwd, env=env,
                   check=True, stdout=subprocess.DEVNULL)


def _serve(golden: Path, events: Path) -> tuple[Any, Any, threading.Thread, Any]:
    import uvicorn

    from noisegauge.cli.review import bind
    from noisegauge.people.app import build_app
    from noisegauge.people.golden import read_golden
    from noisegauge.people.golden_page import GoldenState
    from noisegauge.people.labels import LabelFile

    state = GoldenState(read_golden(golden), LabelFile(events))
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


def _focus(page: Any, n: int) -> None:
    """Move the focus to item n (0: the reference, j + 1: pool chunk j) by keyboard."""
    for _ in range(40):
        page.keyboard.press("ArrowUp")
    for _ in range(n):
        page.keyboard.press("ArrowDown")


def _settle(page: Any) -> None:
    page.wait_for_function("document.getElementById('status').textContent !== ''")
    page.wait_for_timeout(300)


def _fix_by_keyboard(page: Any, row: dict[str, Any]) -> None:
    from noisegauge.people.golden import pool
    from noisegauge.textkit.sentences import sentences

    items = pool(row)
    right = next(j for j, it in enumerate(items) if RIGHT in it["text"])
    _focus(page, right + 1)
    page.keyboard.press("1")
    conflicts = set(row.get("conflicts") or [])
    for j, it in enumerate(items):
        if j != right and (it["drafted"] == "answer" or it["id"] in conflicts):
            _focus(page, j + 1)
            page.keyboard.press("2")
    _focus(page, 0)
    page.keyboard.press("Enter")  # clear the drafted reference ...
    page.keyboard.press("Control+A")
    page.keyboard.press("Delete")
    page.keyboard.press("Enter")
    _focus(page, right + 1)  # ... and compose it from the right sentence
    k = next(k for k, s in enumerate(sentences(items[right]["text"])) if RIGHT in s)
    page.keyboard.press("abcdefghijklmnopqrstuvwxyz"[k])
    _settle(page)
    page.keyboard.press("Shift+A")
    _settle(page)


def _curve(folder: Path) -> list[float]:
    metrics = json.loads((folder / "curve.json").read_text(encoding="utf-8"))["metrics"]
    return [p["mean"] + r["mean"] for p, r in zip(metrics["noise_sensitivity_irrelevant"],
                                                  metrics["noise_sensitivity_relevant"], strict=True)]


def draw_curve(work: Path, out: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    from matplotlib import pyplot as plt

    levels = [int(x) for x in LEVELS.split(",")]
    fig, ax = plt.subplots(figsize=(6.4, 3.6), dpi=120)
    for folder, label, style in (("stress-siblings", "the rows' own traps (--strategy siblings)", "o-"),
                                 ("stress-others", "random chunks (--strategy others)", "s--")):
        ax.plot(levels, _curve(work / folder), style, label=label)
    ax.set_xlabel("injected distractors per question")
    ax.set_ylabel("noise sensitivity (both modes)")
    ax.set_xticks(levels)
    ax.set_ylim(0, 1)
    ax.grid(alpha=0.3)
    ax.legend(loc="upper left", fontsize=8)
    ax.set_title("extractive pipeline on the reviewed golden set", fontsize=10)
    fig.tight_layout()
    fig.savefig(out)
    plt.close(fig)


def main() -> None:
    parser = argparse.ArgumentParser(description="golden-set tutorial screenshots")
    parser.add_argument("--out", type=Path, default=ROOT / "docs" / "img")
    args = parser.parse_args()
    from playwright import sync_api

    exe = shutil.which("chromium") or shutil.which("chromium-browser")
    if exe is None:
        sys.exit("needs chromium (apt-get install chromium)")
    args.out.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        shutil.copytree(ROOT / "examples", work / "examples")
        noisegauge("testset", "examples/lumora-kb", "--questions", "examples/lumora_questions.txt",
                    "--out", "golden.jsonl", cwd=work)
        golden, events = work / "golden.jsonl", work / "page-review.jsonl"
        state, server, thread, sock = _serve(golden, events)
        try:
            with sync_api.sync_playwright() as p:
                browser = p.chromium.launch(executable_path=exe, args=FLAGS)
                page = browser.new_page(viewport={"width": 1100, "height": 1300})
                page.goto(state.url)
                page.wait_for_selector("#question")
                rows = state.rows
                shown = next((i for i, r in enumerate(rows) if any(
                    d.get("kind") == "look-alike" for d in r.get("distractors") or [])), 0)
                for _ in range(shown):
                    page.keyboard.press("ArrowRight")
                page.wait_for_timeout(300)
                page.screenshot(path=str(args.out / "tutorial-review.png"))
                at = next(i for i, r in enumerate(rows) if r["user_input"] == FIXED_QUESTION)
                for _ in range(40):
                    page.keyboard.press("ArrowLeft")
                for _ in range(at):
                    page.keyboard.press("ArrowRight")
                _fix_by_keyboard(page, rows[at])
                for _ in range(40):  # back to the row just accepted, to show it
                    page.keyboard.press("ArrowLeft")
                for _ in range(at):
                    page.keyboard.press("ArrowRight")
                page.wait_for_timeout(300)
                page.screenshot(path=str(args.out / "tutorial-review-fixed.png"))
                browser.close()
        finally:
            server.should_exit = True
            thread.join(10)
            sock.close()
        review(golden, answers(work / "examples" / "golden_support.jsonl"), work / "review.jsonl")
        noisegauge("testset", "export", "golden.jsonl", "--labels", "review.jsonl",
                    "--out", "final.jsonl", cwd=work)
        for strategy, extra in (("siblings", []), ("others", ["--repeats", "5"])):
            noisegauge("stress", "final.jsonl", "--pipeline", "extractive", "--strategy", strategy,
                       "--levels", LEVELS, *extra, "--out", f"stress-{strategy}", cwd=work)
        draw_curve(work, args.out / "tutorial-curve.png")
    for name in ("tutorial-review", "tutorial-review-fixed", "tutorial-curve"):
        print(args.out / f"{name}.png")


if __name__ == "__main__":
    main()
