"""Answer Relevancy's questions, asked in the LLM judge's extraction call.

When a sample needs Answer Relevancy, the response's extraction also asks for the questions
the response answers and whether it is non-committal, in the same call as the reference's
claims (no extra call). Only the asked text's answer changes shape: an object
``{"claims": [...], "questions": [...], "noncommittal": false}`` instead of a list. The
prompt names the asked texts on an ``Ask:`` line, which the fake server in
``noisegauge.testing`` reads the way a model would.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from .output import load_json, norm_id
from .prompts import Message

__all__ = ["QUESTIONS_VERSION", "ask_messages", "ask_schema", "read_asked"]

#: Part of the cache key of an asking extraction (the plain extraction keeps its own).
QUESTIONS_VERSION = "ng-q-1"

_ASK = """\

Some texts also need the questions they answer; the Ask: line lists them with how many. For \
such a text, reply with an object instead of a list:
{{"claims": ["..."], "questions": ["..."], "noncommittal": false}}
- "claims": its claims, as for the other texts.
- "questions": that many different questions, each one a user could have asked and this text \
answers, written from the text alone (do not repeat the question above).
- "noncommittal": true when the text evades, hedges or declines instead of answering (for \
example "I don't know", "it depends", "please ask support"); otherwise false.
For example: {{"t1": {{"claims": ["..."], "questions": ["...", "...", "..."], \
"noncommittal": false}}, "t2": ["..."]}}"""


def ask_messages(messages: Sequence[Message], asks: Mapping[str, int]) -> list[Message]:
    """The extraction ``messages`` with the asking instruction and the ``Ask:`` line."""
    if not asks:
        return list(messages)
    system, user, *rest = messages
    line = "Ask: " + " ".join(f"{tid}={n}" for tid, n in asks.items())
    return [{**system, "content": system["content"] + _ASK.format()},
            {**user, "content": f"{user['content']}\n\n{line}"}, *rest]


def ask_schema(schema: Mapping[str, Any], asks: Mapping[str, int]) -> dict[str, Any]:
    """The extraction schema with the asked texts' entries made objects."""
    props = dict(schema["properties"])
    for tid in asks:
        if tid in props:
            props[tid] = {"type": "object", "additionalProperties": False,
                          "required": ["claims", "questions", "noncommittal"],
                          "properties": {"claims": {"type": "array", "items": {"type": "string"}},
                                         "questions": {"type": "array",
                                                       "items": {"type": "string"}},
                                         "noncommittal": {"type": "boolean"}}}
    return {**schema, "properties": props}


def _strings(value: object) -> list[str] | None:
    if isinstance(value, list) and all(isinstance(v, str) for v in value):
        return [v.strip() for v in value if v.strip()]
    return None


def read_asked(text: str, asks: Mapping[str, int]) -> dict[str, dict[str, Any]]:
    """Asked text id -> ``{"claims", "questions", "noncommittal"}`` for the ids the answer
    gives in that shape; a bare claim list counts as claims without questions."""
    value = load_json(text)
    found: dict[str, dict[str, Any]] = {}
    if not isinstance(value, dict):
        return found
    for key, item in value.items():
        tid = norm_id(key)
        if tid not in asks:
            continue
        if isinstance(item, dict):
            claims = _strings(item.get("claims"))
            if claims is None:
                continue
            flag = item.get("noncommittal", False)
            if isinstance(flag, str):
                flag = flag.strip().lower() in ("true", "yes", "1")
            found[tid] = {"claims": claims,
                          "questions": (_strings(item.get("questions")) or [])[:asks[tid]],
                          "noncommittal": bool(flag)}
        elif _strings(item) is not None:
            found[tid] = {"claims": _strings(item), "questions": [], "noncommittal": False}
    return found
