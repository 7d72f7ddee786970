"""The conversation in the LLM judge's extraction prompt (a chat's last turn).

A response such as "Seven days." or "Yes, it includes 24/7 phone support." means something
only with the turns before it. When a sample has a history, its extraction call (still the
one call for the response and the reference) carries those turns in a ``<history>`` block
before the question, and the system prompt asks for standalone claims: pronouns, ellipsis
and "the same plan" replaced by what the conversation names. The turns give meaning only;
no claim is taken from them, so an earlier answer never becomes a fact of this one.

This module is not among the judge's ``identity_sources``: a single-turn prompt is what it
was, and single-turn cache keys stay valid. Its own digest is the judge's
``conversation_version``, which keys conversational extractions only.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from ..base import conversation_turns
from .prompts import Message

if TYPE_CHECKING:
    from ...samples import Turn

__all__ = ["CONVERSATION_VERSION", "MAX_TURNS", "MAX_TURN_CHARS", "with_history"]

CONVERSATION_VERSION = "ng-conv-2"

#: The last turns sent (the ones that name what a follow-up refers to), each cut to its
#: beginning: a long chat costs a bounded prompt.
MAX_TURNS = 10
MAX_TURN_CHARS = 1500

_CONVERSATION = """\

The texts answer the last question of a conversation; the earlier turns are given in the \
<history> block, oldest first. Make every claim standalone for a reader who never saw the \
conversation: replace pronouns, ellipsis and phrases such as "the same plan" with what the \
conversation names. For example, after "How long can annual plans be refunded?" / "30 days." \
and the question "And for monthly plans?", the text "Seven days." gives "Monthly plans can be \
refunded within seven days."; after a question about the Starter plan, "Yes, it includes 24/7 \
phone support." gives "The Starter plan includes 24/7 phone support." The history gives \
meaning only: never take a claim from it, neither from the user's turns nor from earlier \
answers; claim only what each text itself asserts."""


def _line(turn: Turn) -> str:
    text = " ".join(turn.content.split())
    if len(text) > MAX_TURN_CHARS:
        text = text[:MAX_TURN_CHARS - 3] + "..."
    return f"{turn.role}: {text}"


def with_history(messages: Sequence[Message], history: Sequence[Turn]) -> list[Message]:
    """The extraction ``messages`` with the conversational instruction and the history
    block at the head of the user message (unchanged when there is no history). ``system``
    turns are left out: they are the app's instructions, not the conversation, and a model
    told to resolve "it" with them would take the product a system prompt names for the one
    the user asked about."""
    history = conversation_turns(history)
    if not history:
        return list(messages)
    system, user, *rest = messages
    block = "\n".join(_line(t) for t in history[-MAX_TURNS:])
    return [{**system, "content": system["content"] + _CONVERSATION},
            {**user, "content": f"<history>\n{block}\n</history>\n\n{user['content']}"}, *rest]
