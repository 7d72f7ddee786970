"""Draw docs/img/claim-matrix.svg: the claim x chunk verdicts of one bundled sample.

The picture is the real evidence ``noisegauge score`` writes for sample
``sb27-mix-pro-notice-enterprise`` of ``examples/support_bot.jsonl`` (offline judge), so it
cannot drift from what the tool computes; ``tests/test_docs_site.py`` redraws it and compares.

    python docs/scripts/claim_matrix.py            # writes docs/img/claim-matrix.svg
"""

from __future__ import annotations

import json
import sys
from html import escape
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
SAMPLE_ID = "sb27-mix-pro-notice-enterprise"
OUT = ROOT / "docs" / "img" / "claim-matrix.svg"

#: Cell colours by verdict; bucket colours follow the HTML report's palette in spirit.
CELL = {"entailed": ("#2e7d32", "E"), "contradicted": ("#c62828", "C"), "neutral": ("#eceff1", "·")}
BUCKET = {"grounded": "#2e7d32", "relevant_noise": "#ef6c00", "irrelevant_noise": "#d81b60",
          "hallucination": "#6a1b9a", "self_knowledge": "#1565c0"}


def sample_row() -> dict[str, Any]:
    """Score the one sample with the offline judge, without the user's cache."""
    sys.path.insert(0, str(ROOT / "src"))
    from noisegauge import evaluate

    lines = (ROOT / "examples" / "support_bot.jsonl").read_text(encoding="utf-8").splitlines()
    samples = [r for r in map(json.loads, lines) if r["id"] == SAMPLE_ID]
    report = evaluate(samples, cache=False, progress=False)
    return next(iter(report.rows()))


def _verdict(index: int, entailed: list[int], contradicted: list[int]) -> str:
    if index in entailed:
        return "entailed"
    return "contradicted" if index in contradicted else "neutral"


def _cell(x: int, y: int, verdict: str) -> str:
    fill, mark = CELL[verdict]
    ink = "#263238" if verdict == "neutral" else "#ffffff"
    return (f'<rect x="{x}" y="{y}" width="86" height="30" rx="4" fill="{fill}"/>'
            f'<text x="{x + 43}" y="{y + 20}" text-anchor="middle" fill="{ink}" '
            f'font-weight="bold">{mark}</text>')


def _clip(text: str, n: int = 58) -> str:
    return escape(text if len(text) <= n else text[: n - 1] + "…")


def draw(row: dict[str, Any]) -> str:
    """The SVG text for one results row."""
    chunks = row["chunks"]
    cols = ["reference"] + [f"chunk {c['index']} ({'relevant' if c['relevant'] else 'irrelevant'})"
                            for c in chunks]
    left, top, step = 430, 70, 96
    out: list[str] = []
    y = top
    out.append(f'<text x="10" y="{y - 40}" font-weight="bold">Reference claims × chunks: '
               'a chunk that entails a reference claim is relevant</text>')
    for i, name in enumerate(cols[1:]):
        out.append(f'<text x="{left + step * (i + 1) + 43}" y="{y - 12}" text-anchor="middle" '
                   f'font-size="11">{escape(name)}</text>')
    for claim in row["reference_claims"]:
        out.append(f'<text x="10" y="{y + 20}">{_clip(claim["text"])}</text>')
        for i, c in enumerate(chunks):
            out.append(_cell(left + step * (i + 1), y, _verdict(c["index"], claim["entailed_by"], [])))
        y += 38
    y += 60
    out.append(f'<text x="10" y="{y - 40}" font-weight="bold">Response claims × (reference, '
               'chunks) → bucket</text>')
    for i, name in enumerate(cols):
        out.append(f'<text x="{left + step * i + 43}" y="{y - 12}" text-anchor="middle" '
                   f'font-size="11">{escape(name)}</text>')
    bucket_x = left + step * len(cols) + 10
    for claim in row["response_claims"]:
        out.append(f'<text x="10" y="{y + 20}">{_clip(claim["text"])}</text>')
        out.append(_cell(left, y, claim["reference_verdict"]))
        for i, c in enumerate(chunks):
            out.append(_cell(left + step * (i + 1), y,
                             _verdict(c["index"], claim["entailed_by"], claim["contradicted_by"])))
        colour = BUCKET[claim["bucket"]]
        label = claim["bucket"].replace("_", " ")
        if claim["misattributed_from"]:
            label += f" (misattributed from chunk {claim['misattributed_from'][0]})"
        out.append(f'<text x="{bucket_x}" y="{y + 20}" fill="{colour}" font-weight="bold">'
                   f'{escape(label)}</text>')
        y += 38
    y += 20
    out.append(f'<text x="10" y="{y}" font-size="12">E entailed · C contradicted · · neutral. '
               'Only “entailed” counts as true.</text>')
    width, height = bucket_x + 330, y + 20
    return (f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
            f'viewBox="0 0 {width} {height}" font-family="sans-serif" font-size="13" '
            f'role="img" aria-label="claim by chunk verdict matrix of sample {SAMPLE_ID}">'
            f'<rect width="100%" height="100%" fill="#ffffff"/>' + "".join(out) + "</svg>\n")


def main() -> None:
    OUT.parent.mkdir(parents=True, exist_ok=True)
    OUT.write_text(draw(sample_row()), encoding="utf-8")
    print(OUT)


if __name__ == "__main__":
    main()
