"""Shared data for the HTML report tests: a small scored run with every kind of row, and
user data that tries to break out of the page (``<script>``, ``onerror``, ``</style>``)."""

from __future__ import annotations

import json
import os
import re
import shutil
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

from batch_helpers import require_extra
from noisegauge import evaluate

ROOT = Path(__file__).resolve().parents[1]
EXAMPLE = ROOT / "examples" / "support_bot.jsonl"

XSS_Q = 'What does the Pro plan cost? <script>window.__pwned = 1</script>'
XSS_A = ('The Pro plan costs $49 per month "><img src=x onerror="window.__pwned=2">. '
         'It includes 10 seats </style><b id="bold">.')
XSS_CHUNK = ('Pricing. The Pro plan costs $49 per month. </script><script>window.__pwned=3</script> '
             'It includes 10 seats.')
EVIL_MARKERS = ("window.__pwned", "<img", "</style><b", "<script>window")

#: Headless Chromium with nothing that reaches out (updates, sync, QUIC).
FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync"]


def chromium_path() -> str | None:
    """Debian's chromium (or ``NOISEGAUGE_CHROMIUM``); None where there is none."""
    for name in (os.environ.get("NOISEGAUGE_CHROMIUM"), "/usr/bin/chromium", "chromium",
                 "chromium-browser"):
        if name and (found := shutil.which(name)):
            return found
    return None


@contextmanager
def launched_chromium() -> Iterator[Any]:
    """The system Chromium driven by Playwright, a fresh profile per launch; skips with the
    install line where Playwright or the browser is missing. Score before entering:
    Playwright's running loop forbids ``asyncio.run``."""
    require_extra("report-test")
    from playwright import sync_api
    exe = chromium_path()
    if exe is None:
        pytest.skip("no chromium: apt-get install -y chromium")
    with sync_api.sync_playwright() as p:
        b = p.chromium.launch(executable_path=exe, args=FLAGS)
        yield b
        b.close()

SAMPLES: list[dict[str, Any]] = [
    {"id": "xss", "user_input": XSS_Q, "response": XSS_A,
     "reference": "The Pro plan costs $49 per month and includes 10 seats.",
     "retrieved_contexts": [XSS_CHUNK, "The Team plan costs $99 per month."]},
    {"id": "leak", "user_input": "How much notice does the Pro plan need?",
     "response": "The Pro plan needs a 30-day notice. Team plans need a 60-day notice.",
     "reference": "The Pro plan needs a 30-day notice.",
     "retrieved_contexts": ["Pro plan subscriptions need a 30-day notice.",
                            "Team plans need a 60-day notice."]},
    {"id": "refusal", "user_input": "Do you ship to Mars?", "response": "",
     "reference": "No, shipping is limited to Earth.", "retrieved_contexts": ["Shipping: Earth only."]},
    {"id": "broken", "user_input": "q", "response": "r"},  # no reference: an error row
]


def scored_rows(samples: list[dict[str, Any]] | None = None) -> list[dict[str, Any]]:
    report = evaluate(samples if samples is not None else SAMPLES, cache=False, progress=False)
    return list(report.rows())


def write_jsonl(path: Path, rows: list[dict[str, Any]]) -> Path:
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")
    return path


def data_block(html: str) -> str:
    m = re.search(r'<script type="application/json" id="ng-data">(.*?)</script>', html, re.S)
    assert m is not None, "no embedded data block"
    return m.group(1)
