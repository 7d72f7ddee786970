"""The LLM judge's prompts and the JSON Schemas of their answers, versioned.

``PROMPT_VERSION`` is part of the judge's identity, hence of every cache key and result's
metadata: change it whenever a prompt or schema changes in a way that can change answers.

Claims and premises are referred to by ids (``c1``, ``p1``...), and the check schema has one
required property per premise id and per claim id, so a server that enforces the schema
cannot skip one; verdicts are matched by id, never by position. The same text is sent in
every output mode (JSON Schema, JSON mode, plain text), so the prompt spells out the shape.

Message layout (the fake server in ``noisegauge.testing`` parses it the way a model would):
premises as ``<p1>`` ... ``</p1>`` blocks, claims as ``c1: text`` lines.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from typing import Any

from ..verdicts import Verdict

__all__ = [
    "PROMPT_VERSION",
    "VERDICT_VALUES",
    "Message",
    "check_messages",
    "check_schema",
    "claim_id",
    "extract_messages",
    "extract_schema",
    "premise_id",
    "schema_chars",
]

PROMPT_VERSION = "ng-llm-1"

Message = dict[str, str]

VERDICT_VALUES = [v.value for v in Verdict]

_EXTRACT_SYSTEM = """\
You break a text into claims for fact-checking.
A claim is one short factual statement that can be checked on its own. Make every claim \
self-contained: name the people, things and places that pronouns or vague words stand for, \
and keep the numbers, dates, conditions and qualifiers that belong to it. One fact per claim; \
a sentence that says three things gives three claims.
The question tells you what the text is about, so use it to resolve references, but never take \
facts from the question or from your own knowledge: only what the text asserts.
Leave out greetings, filler and sentences that assert nothing checkable. Write each claim in the \
language of the text.
Reply with a JSON object {"claims": ["...", "..."]}. A text that asserts nothing checkable \
(for example a refusal) gives {"claims": []}."""

_CHECK_SYSTEM = """\
You are a strict fact-checker. For every premise and every claim, judge the claim using only \
the text of that one premise: not your own knowledge, not the other premises.
- "entailed": the premise states the claim, or the claim follows from it directly.
- "contradicted": the premise says something that makes the claim false.
- "neutral": anything else, including a premise about something different or too vague to tell.
Reply with one JSON object that has a key for every premise id; each maps every claim id to \
its verdict, for example {"p1": {"c1": "entailed", "c2": "neutral"}, "p2": {"c1": "neutral", \
"c2": "contradicted"}}."""

_SPACE = re.compile(r"\s+")


def premise_id(index: int) -> str:
    """Id of the premise at 0-based ``index`` (``p1``...)."""
    return f"p{index + 1}"


def claim_id(index: int) -> str:
    """Id of the claim at 0-based ``index`` (``c1``...)."""
    return f"c{index + 1}"


def extract_messages(text: str, question: str | None) -> list[Message]:
    """Messages asking for the claims of ``text``."""
    user = f"Question: {question.strip()}\n\n" if question and question.strip() else ""
    user += f"Text:\n{text.strip()}"
    return [{"role": "system", "content": _EXTRACT_SYSTEM}, {"role": "user", "content": user}]


def extract_schema() -> dict[str, Any]:
    return {
        "type": "object",
        "properties": {"claims": {"type": "array", "items": {"type": "string"}}},
        "required": ["claims"],
        "additionalProperties": False,
    }


def check_messages(premises: Mapping[str, str], claims: Mapping[str, str]) -> list[Message]:
    """Messages asking for the verdict of every claim against every premise (keyed by id).

    A claim is put on one line (whitespace collapsed) so that ids and claims stay paired.
    """
    blocks = "\n".join(f"<{pid}>\n{text.strip()}\n</{pid}>" for pid, text in premises.items())
    lines = "\n".join(f"{cid}: {_SPACE.sub(' ', text).strip()}" for cid, text in claims.items())
    user = f"Premises:\n{blocks}\n\nClaims:\n{lines}"
    return [{"role": "system", "content": _CHECK_SYSTEM}, {"role": "user", "content": user}]


def check_schema(premise_ids: Sequence[str], claim_ids: Sequence[str]) -> dict[str, Any]:
    """Strict schema: every premise id maps every claim id to one of the three verdicts."""
    row = {
        "type": "object",
        "properties": {cid: {"$ref": "#/$defs/verdict"} for cid in claim_ids},
        "required": list(claim_ids),
        "additionalProperties": False,
    }
    return {
        "type": "object",
        "properties": {pid: {"$ref": "#/$defs/row"} for pid in premise_ids},
        "required": list(premise_ids),
        "additionalProperties": False,
        "$defs": {"row": row, "verdict": {"type": "string", "enum": VERDICT_VALUES}},
    }


def schema_chars(schema: Mapping[str, Any]) -> int:
    """Size of a schema as sent (servers count it as prompt text)."""
    return len(json.dumps(schema, separators=(",", ":")))
