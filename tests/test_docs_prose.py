"""The docs say each thing once: no paragraph of prose repeats (whole or mostly) on another
page or on its own, where the two copies drift apart (#30 found one that had)."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
#: The site's landing page opens with the README's own lead, by design.
MIRRORS = {frozenset({"README.md", "docs/index.md"})}
SHINGLE = 8      # words
SHARED = 0.5     # of the smaller paragraph's shingles
MIN_CHARS = 150  # shorter paragraphs (a link line, a caption) may well repeat


def _paragraphs(root: Path) -> list[tuple[str, int, str]]:
    out = []
    for path in [root / "README.md", *sorted((root / "docs").rglob("*.md"))]:
        text = re.sub(r"```.*?```", "", path.read_text(encoding="utf-8"), flags=re.S)
        for n, para in enumerate(re.split(r"\n\s*\n", text)):
            words = para.split()
            prose = " ".join(words)
            if len(prose) >= MIN_CHARS and not prose.startswith(("|", "![", "#")):
                out.append((path.relative_to(root).as_posix(), n, prose))
    return out


def _shingles(text: str) -> set[str]:
    words = re.findall(r"\w+", text.lower())
    return {" ".join(words[i:i + SHINGLE]) for i in range(max(1, len(words) - SHINGLE + 1))}


def repeats(root: Path) -> list[str]:
    paras = [(f, n, p, _shingles(p)) for f, n, p in _paragraphs(root)]
    found = []
    for i, (fa, na, pa, sa) in enumerate(paras):
        for fb, nb, _, sb in paras[i + 1:]:
            if frozenset({fa, fb}) in MIRRORS:
                continue
            if len(sa & sb) > SHARED * min(len(sa), len(sb)):
                found.append(f"{fa} ¶{na} and {fb} ¶{nb}: {pa[:90]}…")
    return found


def test_no_paragraph_is_said_twice() -> None:
    assert repeats(ROOT) == []


def test_the_check_finds_a_copy_that_drifted(tmp_path: Path) -> None:
    para = ("Defined behaviour at the edges: an empty response or a refusal has no claims, so "
            "the row is undefined (not 0, not hallucination); an empty list of chunks is scored.")
    (tmp_path / "docs").mkdir()
    (tmp_path / "README.md").write_text("# x\n\n" + para + "\n", encoding="utf-8")
    (tmp_path / "docs" / "a.md").write_text(para.replace("is scored", "is still scored") + "\n",
                                            encoding="utf-8")
    assert len(repeats(tmp_path)) == 1
