"""Counterfactual distractors: a relevant chunk with one fact swapped (RGB's ``*_fact`` idea).

The copy keeps the wording that makes it look relevant and changes one span: a SKU, an amount,
a percentage, a date, a year, a number, or a plan name. Every occurrence of that span in the
chunk is swapped, so the copy is self-consistent. The chunk is marked ``kind="counterfactual"``
and its ``meta`` records ``of`` (which relevant chunk), and ``swap`` (type, from, to).
"""

from __future__ import annotations

import random
import re
from collections.abc import Sequence

from .chunks import Chunk, relevant_chunks, without_relevant
from .golden import GoldenItem, PoolChunk

__all__ = ["Counterfactuals", "find_spans", "swap_value"]

_MONTHS = ("January", "February", "March", "April", "May", "June", "July", "August",
           "September", "October", "November", "December")
_SPAN = re.compile(
    r"(?P<sku>\b[A-Z]{2,}-\d{2,}[A-Z]?\b)"
    r"|(?P<date>\b(?:" + "|".join(_MONTHS) + r")\s+\d{1,2}\b|\b\d{4}-\d{2}-\d{2}\b)"
    r"|(?P<money>\$\d[\d,]*(?:\.\d+)?)"
    r"|(?P<percent>\d+(?:\.\d+)?\s?%)"
    r"|(?P<year>(?<![\d.,])(?:19|20)\d{2}(?![\d%]|[.,]\d))"
    r"|(?P<number>(?<![\w.])\d[\d,]*(?:\.\d+)?)"  # not inside a word or SKU; "14일" still counts
)
#: A capitalised name right before "plan"/"플랜" (one lower-case word may sit between).
_PLAN = re.compile(r"\b([A-Z][a-z]+)\s+(?:[a-z가-힣]+\s+)?(?:plans?\b|플랜)")
_MID_SENTENCE = re.compile(r"(?:[a-z,]\s)([A-Z][a-z]+)\b")
_SKU = re.compile(r"\b[A-Z]{2,}-\d{2,}[A-Z]?\b")


def find_spans(text: str, plan_names: Sequence[str] = ()) -> list[tuple[str, str]]:
    """Distinct swappable ``(type, text)`` spans of a chunk, in order of appearance."""
    spans: list[tuple[str, str]] = []
    for m in _SPAN.finditer(text):
        kind = m.lastgroup or "number"
        spans.append((kind, m.group(0)))
    for m in _PLAN.finditer(text):
        if m.group(1) in plan_names:
            spans.append(("plan", m.group(1)))
    return list(dict.fromkeys(spans))


def _format_number(value: float, like: str) -> str:
    decimals = len(like.split(".")[1]) if "." in like else 0
    text = f"{value:,.{decimals}f}" if "," in like else f"{value:.{decimals}f}"
    return text


def swap_value(kind: str, text: str, rng: random.Random, vocab: dict[str, list[str]]) -> str | None:
    """A different, plausible value for a span, or None when none can be made."""
    if kind in ("plan", "sku"):
        others = [v for v in vocab.get(kind, []) if v != text]
        family = [v for v in others if v.split("-")[0] == text.split("-")[0]]
        others = family or others  # a dock for a dock (DK-310 -> DK-300) when one is known
        if others:
            return rng.choice(others)
        if kind == "sku":  # no other SKU known: change the last digit
            digit = next(d for d in reversed(text) if d.isdigit())
            pos = text.rindex(digit)
            return text[:pos] + str((int(digit) + rng.randint(1, 8)) % 10) + text[pos + 1:]
        return None
    if kind == "date":
        if "-" in text:
            y, m, d = text.split("-")
            return f"{y}-{m}-{(int(d) + rng.randint(1, 9)) % 28 + 1:02d}"
        month, day = text.split()
        return f"{month} {(int(day) + rng.randint(1, 9)) % 28 + 1}"
    if kind == "year":
        return str(int(text) + rng.choice((-3, -2, -1, 1, 2)))
    prefix = "$" if text.startswith("$") else ""
    suffix = text[len(text.rstrip("% ")):]
    core = text[len(prefix):len(text) - len(suffix)] if suffix else text[len(prefix):]
    value = float(core.replace(",", ""))
    if kind == "percent":
        options = [value / 2, value + 10, value - 10] if value < 99 else [value - 0.4, value - 4]
    else:
        options = [value * 2, value * 3, value / 2, value + 1] if value >= 1 else [value + 1]
    for candidate in rng.sample(options, len(options)):
        new = _format_number(candidate, core)
        if candidate > 0 and new != core and (kind != "percent" or candidate <= 100):
            return prefix + new + suffix
    return None


def _substitute(text: str, kind: str, old: str, new: str) -> str:
    pattern, group = (_PLAN, 1) if kind == "plan" else (_SPAN, 0)
    pieces, last = [], 0
    for m in pattern.finditer(text):  # whole spans of the same type only (not "30" in "$300")
        if (kind == "plan" or m.lastgroup == kind) and m.group(group) == old:
            pieces += [text[last:m.start(group)], new]
            last = m.end(group)
    return "".join(pieces) + text[last:]


class Counterfactuals:
    """Copies of the item's relevant chunks with one fact swapped, each marked as such."""

    name = "counterfactual"

    def __init__(self, items: Sequence[GoldenItem], pool: Sequence[PoolChunk] = ()) -> None:
        corpus = [t for it in items for t in (it.question, it.reference, *it.relevant)]
        corpus += [p.text for p in pool]
        # Plan names must also appear mid-sentence somewhere, which drops "Annual plans ...".
        mid = {m.group(1) for t in corpus for m in _MID_SENTENCE.finditer(t)}
        plans = sorted({m.group(1) for t in corpus for m in _PLAN.finditer(t)} & mid)
        skus = sorted({m.group(0) for t in corpus for m in _SKU.finditer(t)})
        self._vocab = {"plan": plans, "sku": skus}

    def draw(self, item: GoldenItem, k: int, rng: random.Random) -> list[Chunk]:
        options = [(j, c, kind, span) for j, c in enumerate(relevant_chunks(item))
                   for kind, span in find_spans(c.text, self._vocab["plan"])]
        rng.shuffle(options)
        out: list[Chunk] = []
        # A second and third pass swap the same spans to other values, so a chunk with few
        # swappable facts can still fill a high level.
        for j, chunk, kind, span in options * 3:
            if len(out) >= k:
                break
            new = swap_value(kind, span, rng, self._vocab)
            if new is None:
                continue
            text = _substitute(chunk.text, kind, span, new)
            if text == chunk.text:
                continue
            out.append(Chunk(text, "counterfactual", "counterfactual", f"{chunk.id}~cf{len(out)}",
                             {"of": j, "of_id": chunk.id,
                              "swap": {"type": kind, "from": span, "to": new}}))
            out = without_relevant(item, out)
        return out
