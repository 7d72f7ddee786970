"""What the report and the review pages' scripts share, put into each page script once."""

from __future__ import annotations

from importlib import resources

__all__ = ["page_script"]

#: The line of a page script that ``bidi.js`` replaces (inside the script's own function).
BIDI_LINE = "  /*BIDI*/\n"


def page_script(source: str) -> str:
    """``source`` with the shared ``bidi.js`` (bidi isolation of data text) in place of its
    ``/*BIDI*/`` line, indented as the line was."""
    if BIDI_LINE not in source:
        raise ValueError("the page script has no /*BIDI*/ line for bidi.js")
    shared = resources.files("noisegauge.infra").joinpath("assets").joinpath("bidi.js").read_text(
        encoding="utf-8")
    indented = "".join(f"  {line}" if line.strip() else line
                       for line in shared.splitlines(keepends=True))
    return source.replace(BIDI_LINE, indented, 1)
