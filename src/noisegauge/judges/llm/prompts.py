"""The LLM judge's prompts and the JSON Schemas of their answers, versioned.

``PROMPT_VERSION`` is part of the judge's identity, hence of every cache key and result's
metadata: change it whenever a prompt or schema changes in a way that can change answers.

Texts, claims and premises are referred to by ids (``t1``, ``c1``, ``p1``...), and the
schemas have one required property per id (per premise, one per claim to judge against it),
so a server that enforces the schema cannot skip one; answers are matched by id, never by
position. The same text is sent in every output mode (JSON Schema, JSON mode, plain text),
so the prompts spell out the shape.

Message layout (the fake server in ``noisegauge.testing`` parses it the way a model would):
texts and premises as ``<t1>`` ... ``</t1>`` blocks, claims as ``c1: text`` lines, and a
``Judge:`` section listing, per premise, the claims to judge against it (``p1: c1 c2``).
One check call can thus serve both verdict matrices of a sample, each chunk sent once.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any

from ...verdicts import Verdict

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
    "text_id",
]

PROMPT_VERSION = "ng-llm-1"

Message = dict[str, str]

VERDICT_VALUES = [v.value for v in Verdict]

_EXTRACT_SYSTEM = """\
You break texts into claims for fact-checking.
A claim is one short factual statement that can be checked on its own. Make every claim \
self-contained: name the people, things and places that pronouns or vague words stand for, \
and keep the numbers, dates, conditions and qualifiers that belong to it. One fact per claim; \
a sentence that says three things gives three claims.
The question tells you what the texts are about, so use it to resolve references, but never \
take facts from the question, from another text or from your own knowledge: only what the \
text itself asserts.
Leave out greetings, filler and sentences that assert nothing checkable. Write each claim in \
the language of its text.
Reply with one JSON object that maps every text id to the list of its claims, for example \
{"t1": ["...", "..."], "t2": []}. A text that asserts nothing checkable (a refusal, say) gets \
an empty list."""

_CHECK_SYSTEM = """\
You are a strict fact-checker. Judge each claim against each premise it is listed for, using \
only the text of that one premise: not your own knowledge, not the other premises.
- "entailed": the premise states the claim, or the claim follows from it directly.
- "contradicted": the premise says something that makes the claim false.
- "neutral": anything else, including a premise about something different or too vague to tell.
Reply with one JSON object that has a key for every premise id; each maps every claim id \
listed for that premise to its verdict, for example {"p1": {"c1": "entailed", "c2": \
"neutral"}, "p2": {"c1": "contradicted"}}."""

_SPACE = re.compile(r"\s+")


def premise_id(index: int) -> str:
    """Id of the premise at 0-based ``index`` (``p1``...)."""
    return f"p{index + 1}"


def claim_id(index: int) -> str:
    """Id of the claim at 0-based ``index`` (``c1``...)."""
    return f"c{index + 1}"


def text_id(index: int) -> str:
    """Id of the text to extract at 0-based ``index`` (``t1``...)."""
    return f"t{index + 1}"


def extract_messages(texts: Mapping[str, str], question: str | None) -> list[Message]:
    """Messages asking for the claims of each text (keyed by id)."""
    user = f"Question: {question.strip()}\n\n" if question and question.strip() else ""
    user += "\n\n".join(f"<{tid}>\n{text.strip()}\n</{tid}>" for tid, text in texts.items())
    return [{"role": "system", "content": _EXTRACT_SYSTEM}, {"role": "user", "content": user}]


def extract_schema(text_ids: Sequence[str]) -> dict[str, Any]:
    """Strict schema: every text id maps to a list of claims."""
    return {
        "type": "object",
        "properties": {tid: {"type": "array", "items": {"type": "string"}} for tid in text_ids},
        "required": list(text_ids),
        "additionalProperties": False,
    }


def check_messages(premises: Mapping[str, str], claims: Mapping[str, str],
                   pairs: Mapping[str, Sequence[str]]) -> list[Message]:
    """Messages asking for the verdict of each claim listed for each premise (keyed by id).

    A claim is put on one line (whitespace collapsed) so that ids and claims stay paired.
    """
    blocks = "\n".join(f"<{pid}>\n{text.strip()}\n</{pid}>" for pid, text in premises.items())
    lines = "\n".join(f"{cid}: {_SPACE.sub(' ', text).strip()}" for cid, text in claims.items())
    todo = "\n".join(f"{pid}: {' '.join(cids)}" for pid, cids in pairs.items())
    user = f"Premises:\n{blocks}\n\nClaims:\n{lines}\n\nJudge:\n{todo}"
    return [{"role": "system", "content": _CHECK_SYSTEM}, {"role": "user", "content": user}]


def check_schema(pairs: Mapping[str, Sequence[str]]) -> dict[str, Any]:
    """Strict schema: every premise id maps every claim id listed for it to a verdict."""
    rows: dict[tuple[str, ...], str] = {}
    for cids in pairs.values():
        rows.setdefault(tuple(cids), f"r{len(rows) + 1}")
    defs: dict[str, Any] = {name: {
        "type": "object",
        "properties": {cid: {"$ref": "#/$defs/verdict"} for cid in cids},
        "required": list(cids),
        "additionalProperties": False,
    } for cids, name in rows.items()}
    defs["verdict"] = {"type": "string", "enum": VERDICT_VALUES}
    return {
        "type": "object",
        "properties": {pid: {"$ref": f"#/$defs/{rows[tuple(cids)]}"} for pid, cids in pairs.items()},
        "required": list(pairs),
        "additionalProperties": False,
        "$defs": defs,
    }
