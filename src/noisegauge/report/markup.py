"""A tiny HTML builder with strict escaping: every ``str`` is text, only ``Html`` is markup.

The report puts user data (questions, answers, chunks, claim texts, ids) into HTML. Any of
it may hold ``<script>``, ``"><img onerror=...>`` or ``</style>``; here it can only ever be
text. Markup is made by ``el()`` (or the trusted asset files) and marked ``Html``; a plain
``str`` passed anywhere is escaped, attribute values included. Data for the page script
goes through ``json_for_script``, which leaves no ``<`` in the block at all.
"""

from __future__ import annotations

import html
import json
import re
from collections.abc import Iterable
from typing import Any

__all__ = ["Html", "Child", "el", "esc", "join", "json_for_script"]


class Html(str):
    """A string that is already markup (built here, never from user data as such)."""

    __slots__ = ()


Child = "Html | str | int | float | None | Iterable[Html | str | int | float | None]"

_NAME = re.compile(r"^[a-z][a-z0-9-]*$")
_ATTR = re.compile(r"^[a-zA-Z][a-zA-Z0-9:-]*$")  # SVG has camelCase names (viewBox)
_VOID = frozenset(["br", "hr", "img", "input", "meta", "link", "col", "source", "wbr"])


def esc(value: object) -> Html:
    """``value`` as HTML text (``Html`` passes through unchanged)."""
    if isinstance(value, Html):
        return value
    return Html(html.escape("" if value is None else str(value), quote=True))


def join(parts: Iterable[Any], sep: str = "") -> Html:
    return Html(esc(sep).join(_children(parts)))


def _children(children: Iterable[Any]) -> list[str]:
    out: list[str] = []
    for c in children:
        if c is None or c is False:
            continue
        if isinstance(c, (str, int, float)):
            out.append(esc(c))
        else:
            out.extend(_children(c))
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
    return Html(head + "".join(_children(children)) + f"</{tag}>")


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
