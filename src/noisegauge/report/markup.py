"""A tiny HTML builder with strict escaping: every ``str`` is text, only ``Html`` is markup.

The report puts user data (questions, answers, chunks, claim texts, ids) into HTML. Any of
it may hold ``<script>``, ``"><img onerror=...>`` or ``</style>``; here it can only ever be
text. Markup is made by ``el()`` (or the trusted asset files) and marked ``Html``; a plain
``str`` passed anywhere is escaped, attribute values included. Data for the page script
goes through ``json_for_script``, which leaves no ``<`` in the block at all.

Text can also reorder the page around it: a right-to-left override (U+202E) left open in one
claim flips every claim after it on the line. So text holding a bidi control or right-to-left
script is isolated (``<bdi>``, or closed at its end where no element may go: attributes,
``<title>``, ``<option>``, SVG text); the page scripts do the same with ``BIDI`` (report.js,
review.js).
"""

from __future__ import annotations

import html
import json
import re
from collections.abc import Iterable
from typing import Any

__all__ = ["Html", "Child", "BIDI", "closed", "el", "esc", "join", "json_for_script"]


class Html(str):
    """A string that is already markup (built here, never from user data as such)."""

    __slots__ = ()


Child = "Html | str | int | float | None | Iterable[Html | str | int | float | None]"

_NAME = re.compile(r"^[a-z][a-z0-9-]*$")
_ATTR = re.compile(r"^[a-zA-Z][a-zA-Z0-9:-]*$")  # SVG has camelCase names (viewBox)
_VOID = frozenset(["br", "hr", "img", "input", "meta", "link", "col", "source", "wbr"])
#: Elements whose content is text only: no ``<bdi>`` there, the text is closed instead.
_TEXT_ONLY = frozenset(["title", "option", "textarea", "script", "style", "text", "tspan",
                        "desc"])

#: What needs isolating: the bidi controls (ALM, LRM, RLM, LRE..RLO, LRI..PDI) and the
#: right-to-left scripts (Hebrew to NKo and beyond, their presentation forms, the RTL planes).
#: report.js and review.js carry the same class (a test compares them).
BIDI_CLASS = ("\u061C\u200E\u200F\u202A-\u202E\u2066-\u2069\u0590-\u08FF"
              "\uFB1D-\uFDFF\uFE70-\uFEFF")
BIDI = re.compile(f"[{BIDI_CLASS}\U00010800-\U00010FFF\U0001E800-\U0001EFFF]")
_CLOSER = {"\u202a": "\u202c", "\u202b": "\u202c", "\u202d": "\u202c", "\u202e": "\u202c",
           "\u2066": "\u2069", "\u2067": "\u2069", "\u2068": "\u2069"}


def closed(text: str) -> str:
    """``text`` with every embedding, override and isolate it opens closed at its end, so
    it cannot change the direction of whatever follows it."""
    if not any(ch in _CLOSER for ch in text):
        return text
    stack: list[str] = []
    for ch in text:
        if ch in _CLOSER:
            stack.append(_CLOSER[ch])
        elif ch == "\u202c" and stack and stack[-1] == "\u202c":
            stack.pop()
        elif ch == "\u2069" and "\u2069" in stack:  # a PDI also ends the embeddings inside
            while stack.pop() != "\u2069":
                pass
    return text + "".join(reversed(stack))


def esc(value: object) -> Html:
    """``value`` as HTML text (``Html`` passes through unchanged)."""
    if isinstance(value, Html):
        return value
    return Html(html.escape(closed("" if value is None else str(value)), quote=True))


def join(parts: Iterable[Any], sep: str = "") -> Html:
    return Html(esc(sep).join(_children(parts)))


def _children(children: Iterable[Any], isolate: bool = True) -> list[str]:
    out: list[str] = []
    for c in children:
        if c is None or c is False:
            continue
        if isinstance(c, Html):
            out.append(c)
        elif isinstance(c, (str, int, float)):
            text = esc(c)
            out.append(f"<bdi>{text}</bdi>" if isolate and BIDI.search(text) else text)
        else:
            out.extend(_children(c, isolate))
    return out


def el(tag: str, attrs: dict[str, Any] | None = None, *children: Any) -> Html:
    """``<tag attrs>children</tag>``. Attribute values are escaped; ``True`` is a bare
    attribute, ``None``/``False`` leaves it out. Names are checked, never escaped."""
    if not _NAME.match(tag):
        raise ValueError(f"bad tag name {tag!r}")
    parts = [tag]
    for name, value in (attrs or {}).items():
        name = name.rstrip("_").replace("_", "-")  # class_ -> class, data_i -> data-i
        if not _ATTR.match(name):
            raise ValueError(f"bad attribute name {name!r}")
        if value is None or value is False:
            continue
        parts.append(name if value is True else f'{name}="{esc(value)}"')
    head = "<" + " ".join(parts) + ">"
    if tag in _VOID:
        if children:
            raise ValueError(f"<{tag}> takes no children")
        return Html(head)
    return Html(head + "".join(_children(children, tag not in _TEXT_ONLY)) + f"</{tag}>")


def json_for_script(data: Any) -> Html:
    """JSON safe inside ``<script type="application/json">``: ``<``, ``>``, ``&`` and the
    JavaScript line separators are written as ``\\uXXXX`` escapes, so no ``</script>``,
    ``<!--`` or ``</`` can appear in the block whatever the data holds. ``JSON.parse``
    reads the escapes back as the original characters."""
    text = json.dumps(data, ensure_ascii=False, separators=(",", ":"), allow_nan=False)
    for ch, rep in (("<", "\\u003c"), (">", "\\u003e"), ("&", "\\u0026"),
                    ("\u2028", "\\u2028"), ("\u2029", "\\u2029")):
        text = text.replace(ch, rep)
    return Html(text)
