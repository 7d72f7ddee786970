"""Where did a wrong detail come from? One extra call, for misattributed noise.

Used by the LLM judge with ``misattribution="llm"``, and only for samples that have wrong
claims no chunk entails (hallucinations under the metric's algebra): for each such claim the
model names the passage that states the detail making it wrong about *another* entity, and
quotes that detail. The scorer trusts a quote only if it stands in that passage.

Kept apart from ``prompts`` (the extraction and check prompts) with its own version, which is
part of the judge's identity when the option is on.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any

from .output import load_json

__all__ = ["ATTRIBUTION_VERSION", "attribution_messages", "attribution_schema", "read_sources"]

ATTRIBUTION_VERSION = "ng-attr-2"

_SYSTEM = """\
You trace wrong claims back to the passages they were taken from. Every claim listed is \
wrong: the reference answer does not support it and no passage states it as written.
For each claim, find the passage that states the detail that makes the claim wrong (a number, \
amount, date, name, version, code or feature), but about a different entity than the claim \
is about (another plan, product, model, version, region, date or person). Quote that detail \
exactly as the passage writes it, as few words as possible.
Answer null for a claim when no passage states its wrong detail, or only about the same \
entity: a made-up detail has no source, and a stale or other-case line about the claim's own \
entity (a legacy rule of an older policy version, an old FAQ answer, the monthly price beside \
the annual one) is a conflict about that entity, not another entity's detail.
Reply with one JSON object with a key for every claim id, for example \
{"c1": {"passage": "p2", "detail": "90-day"}, "c2": null}."""

_ID = re.compile(r"^[pc](\d+)$")


def attribution_messages(question: str, reference: str, chunks: Sequence[str],
                         claims: Sequence[str]) -> list[dict[str, str]]:
    passages = "\n".join(f"<p{j + 1}>\n{c.strip()}\n</p{j + 1}>" for j, c in enumerate(chunks))
    lines = "\n".join(f"c{i + 1}: {' '.join(c.split())}" for i, c in enumerate(claims))
    user = (f"Question: {question.strip()}\n\nReference answer: {reference.strip()}\n\n"
            f"Passages:\n{passages}\n\nWrong claims:\n{lines}")
    return [{"role": "system", "content": _SYSTEM}, {"role": "user", "content": user}]


def attribution_schema(n_claims: int, n_chunks: int) -> dict[str, Any]:
    """Strict schema: every claim id maps to null or {passage, detail}."""
    source = {"type": "object",
              "properties": {"passage": {"type": "string",
                                         "enum": [f"p{j + 1}" for j in range(n_chunks)]},
                             "detail": {"type": "string"}},
              "required": ["passage", "detail"], "additionalProperties": False}
    ids = [f"c{i + 1}" for i in range(n_claims)]
    return {"type": "object",
            "properties": {cid: {"anyOf": [{"type": "null"}, source]} for cid in ids},
            "required": ids, "additionalProperties": False}


def read_sources(text: str, n_claims: int, n_chunks: int) -> list[Mapping[str, Any] | None]:
    """Per claim ``{"chunk": j (0-based), "detail": str}`` or None; unreadable entries are None."""
    data = load_json(text)
    out: list[Mapping[str, Any] | None] = [None] * n_claims
    if not isinstance(data, Mapping):
        return out
    for key, value in data.items():
        m = _ID.match(str(key).strip().lower())
        if not m or not isinstance(value, Mapping):
            continue
        i = int(m.group(1)) - 1
        p = _ID.match(str(value.get("passage", "")).strip().lower())
        detail = value.get("detail")
        if 0 <= i < n_claims and p and isinstance(detail, str) and detail.strip():
            j = int(p.group(1)) - 1
            if 0 <= j < n_chunks:
                out[i] = {"chunk": j, "detail": detail.strip()}
    return out
