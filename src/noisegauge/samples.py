"""The input sample, and reading it from Ragas, older Ragas and RAGChecker records.

Validation happens here, once; errors name the row, the field and what was expected.
"""

from __future__ import annotations

import difflib
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from .engine.matrix import ClaimVerdicts
from .errors import InvalidSample

__all__ = ["Sample", "Turn", "ROLES", "read_turns", "MAX_CHUNK_CHARS", "MAX_TEXT_CHARS", "FIELD_ALIASES", "CHUNK_ID_FIELDS",
           "RELEVANT_IDS_FIELD", "check_sizes", "id_text"]

#: The longest question, response, reference or chunk accepted (``max_chars`` changes it):
#: a longer one is almost certainly a whole document pasted by mistake, and judging it
#: would take minutes.
MAX_TEXT_CHARS = 200_000
MAX_CHUNK_CHARS = MAX_TEXT_CHARS

#: Canonical field -> accepted names, first match wins (Ragas, older Ragas, RAGChecker).
FIELD_ALIASES: dict[str, tuple[str, ...]] = {
    "user_input": ("user_input", "question", "query"),
    "response": ("response", "answer"),
    "reference": ("reference", "ground_truth", "gt_answer", "ground_truths"),
    "retrieved_contexts": ("retrieved_contexts", "contexts", "retrieved_context"),
    "id": ("id", "query_id", "sample_id"),
}

#: Row fields giving one id per chunk (Ragas' ``retrieved_context_ids``; ``chunk_ids`` is what
#: our own results and journal write).
CHUNK_ID_FIELDS: tuple[str, ...] = ("retrieved_context_ids", "chunk_ids")
#: The row field listing the ids of the chunks a person labelled relevant (Ragas' name).
RELEVANT_IDS_FIELD = "reference_context_ids"
#: Keys of a chunk object that give its id, first match wins (RAGChecker's ``doc_id``, a
#: ``source``, or the same inside the chunk's ``metadata``, as LangChain documents carry it).
_CHUNK_ID_KEYS = ("doc_id", "id", "source")
#: Keys of a chunk object that hold its text (LangChain documents use ``page_content``).
_CHUNK_TEXT_KEYS = ("text", "page_content")

_PRECOMPUTED = ("response_claims", "gt_answer_claims", "answer2response", "response2answer",
                "retrieved2response", "retrieved2answer")
#: The field holding the turns before a string ``user_input`` (``Sample.history``).
HISTORY_FIELD = "history"
_KNOWN = {name for names in FIELD_ALIASES.values() for name in names} | set(_PRECOMPUTED) | {
    "metadata", "metrics", *CHUNK_ID_FIELDS, RELEVANT_IDS_FIELD, HISTORY_FIELD}

#: A message's role or type as written (OpenAI ``role``, Ragas ``type``) -> ``Turn.role``.
#: OpenAI's ``developer`` is its newer name for ``system``.
ROLES: dict[str, Literal["user", "assistant", "system"]] = {
    "user": "user", "human": "user", "assistant": "assistant", "ai": "assistant",
    "system": "system", "developer": "system"}
#: Messages that are the pipeline's own tool traffic (a retrieval call and its result), not
#: turns of the conversation: skipped. Their text is evidence, so it belongs in
#: ``retrieved_contexts``, never in the history.
_TOOL_ROLES = frozenset({"tool", "function"})
_ROLE_EXPECTED = ("one of user, assistant, system (OpenAI 'role') or human, ai, system (Ragas "
                  "'type'); tool messages are skipped")


@dataclass(frozen=True)
class Turn:
    """One earlier message of a conversation: who said it and what."""

    role: Literal["user", "assistant", "system"]
    content: str


@dataclass(frozen=True)
class Sample:
    """One RAG interaction to score.

    ``retrieved_contexts`` may be empty (nothing retrieved); ``response`` may be empty
    (a blank answer has no claims, so its metrics are undefined, not 0).
    """

    user_input: str
    response: str
    #: None: no reference (opt-in: ``Sample(reference=None)``, ``from_record(...,
    #: allow_no_reference=True)``, traces without a golden row); the metrics that need one
    #: are then undefined with the reason "no reference", never 0.
    reference: str | None
    retrieved_contexts: tuple[str, ...]
    id: str | None = None
    chunk_ids: tuple[str | None, ...] | None = None
    #: Ids of the chunks a person labelled relevant (``reference_context_ids``); None: no labels.
    relevant_ids: tuple[str, ...] | None = None
    metadata: Mapping[str, Any] = field(default_factory=dict)
    #: Claims and verdicts supplied with the input (RAGChecker fields), for ``precomputed``.
    precomputed: ClaimVerdicts | None = None
    #: The conversation before ``user_input`` (the last user turn, which ``response``
    #: answers), oldest first; empty for a single-turn sample. Earlier assistant turns give
    #: the claims their meaning; they are never evidence.
    history: tuple[Turn, ...] = ()

    def __post_init__(self) -> None:
        object.__setattr__(self, "retrieved_contexts", tuple(self.retrieved_contexts))
        object.__setattr__(self, "history", tuple(self.history))
        _check_turns(self.history, row=None)
        _validate(self, row=None)

    @classmethod
    def from_record(cls, record: Mapping[str, Any], row: int | None = None, *,
                    max_chars: int = MAX_TEXT_CHARS,
                    allow_no_reference: bool = False) -> Sample:
        """Build a sample from a dict using any accepted field names.

        Two accepted names for one field with different values (``response`` and
        ``answer``) are refused, as are ids that are not a string or a number (or are
        empty or NaN), and texts longer than ``max_chars``. An id is kept as text
        (``id_text``): ``1``, ``1.0`` and ``"1"`` are the same id. ``allow_no_reference``:
        a record without a reference (absent or null) is a sample scored for what needs
        none, instead of an error.

        >>> Sample.from_record({"question": "q", "answer": "a", "ground_truth": "r",
        ...                     "contexts": ["c"]}).retrieved_contexts
        ('c',)
        """
        if not isinstance(record, Mapping):
            raise InvalidSample(f"a record must be an object, got {type(record).__name__}", row=row)
        no_reference = allow_no_reference and _first(record, "reference", row)[1] is None
        _check_fields(record, row, skip=("reference",) if no_reference else ())
        user_input, history = _user_turns(record, row)
        response = _text(record, "response", row, allow_empty=True)
        reference = None if no_reference else _text(record, "reference", row, allow_empty=False)
        contexts, chunk_ids = _contexts(record, row)
        chunk_ids = _row_chunk_ids(record, chunk_ids, len(contexts), row)
        relevant_ids = _relevant_ids(record, chunk_ids, len(contexts), row)
        sample_id = _id(record, row)
        metadata = record.get("metadata")
        if metadata is None:
            metadata = {k: v for k, v in record.items() if k not in _KNOWN}
        elif not isinstance(metadata, Mapping):
            raise InvalidSample("must be an object", row=row, field="metadata")
        precomputed = _precomputed(record, len(contexts), row)
        sample = cls.__new__(cls)
        for name, value in (("user_input", user_input), ("response", response),
                            ("reference", reference), ("retrieved_contexts", contexts),
                            ("id", sample_id), ("chunk_ids", chunk_ids),
                            ("relevant_ids", relevant_ids),
                            ("metadata", dict(metadata)), ("precomputed", precomputed),
                            ("history", history)):
            object.__setattr__(sample, name, value)
        _validate(sample, row, max_chars)
        return sample

    def to_record(self) -> dict[str, Any]:
        """The Ragas-named dict form (plus id and metadata when present).

        A conversation is written as ``history`` (``[{"role", "content"}]``, oldest first)
        beside the string ``user_input``: every reader takes that form back, and a
        single-turn record has no ``history`` key, so it reads as it always did.
        """
        out: dict[str, Any] = {}
        if self.id is not None:
            out["id"] = self.id
        if self.history:
            out[HISTORY_FIELD] = [{"role": t.role, "content": t.content} for t in self.history]
        out.update(user_input=self.user_input, response=self.response)
        if self.reference is not None:
            out["reference"] = self.reference
        out["retrieved_contexts"] = list(self.retrieved_contexts)
        if self.relevant_ids is not None:  # labels name chunks by id: both travel together
            out[CHUNK_ID_FIELDS[0]] = list(self.chunk_ids or ())
            out[RELEVANT_IDS_FIELD] = list(self.relevant_ids)
        if self.metadata:
            out["metadata"] = dict(self.metadata)
        return out


def _first(record: Mapping[str, Any], canonical: str, row: int | None = None) -> tuple[str, Any]:
    """The field under its first accepted name; two names with different values are refused."""
    found = [(name, record[name]) for name in FIELD_ALIASES[canonical]
             if name in record and record[name] is not None]
    if not found:
        return FIELD_ALIASES[canonical][0], None
    for name, value in found[1:]:
        if value != found[0][1]:
            raise InvalidSample(f"'{found[0][0]}' and '{name}' are both given, with different "
                                "values", row=row, field=canonical,
                                expected=f"only one of {found[0][0]}, {name}")
    return found[0]


_REQUIRED = ("user_input", "response", "reference", "retrieved_contexts")
#: What to put in a required field given as null.
_NULL_FIX = {
    "user_input": "the question, a non-empty string",
    "response": 'the answer as a string ("" when the pipeline gave none)',
    "reference": "the reference answer, a non-empty string",
    "retrieved_contexts": "a list of strings ([] when nothing was retrieved)",
}


def _check_fields(record: Mapping[str, Any], row: int | None, skip: tuple[str, ...] = ()) -> None:
    """Every missing field and every unknown key in one message, with the closest accepted name.

    Unknown keys are kept as metadata when the row is complete; they are named only when a
    field is missing, since then one of them is most likely the misspelt field.
    """
    absent = [c for c in _REQUIRED if c not in skip
              and not any(record.get(name) is not None for name in FIELD_ALIASES[c])]
    if not absent:
        return
    # Given as null is not missing: the key is there, the value is what needs fixing.
    null = [next(name for name in FIELD_ALIASES[c] if name in record) for c in absent
            if any(name in record for name in FIELD_ALIASES[c])]
    missing = [c for c in absent if not any(name in record for name in FIELD_ALIASES[c])]
    if null and not missing:
        canonical = {name: c for c in absent for name in FIELD_ALIASES[c]}
        if len(null) == 1:
            raise InvalidSample("is null", row=row, field=null[0],
                                expected=_NULL_FIX[canonical[null[0]]])
        raise InvalidSample("are null: " + ", ".join(
            f"'{n}' (expected {_NULL_FIX[canonical[n]]})" for n in null), row=row,
            field=", ".join(null))
    unknown = [str(k) for k in record if k not in _KNOWN]
    aliases = {name: c for c in missing for name in FIELD_ALIASES[c]}
    hints = []
    for key in unknown:
        close = difflib.get_close_matches(key.lower(), list(aliases), n=1, cutoff=0.5)
        if not close:
            hints.append(f"'{key}'")
            continue
        name, alias = aliases[close[0]], close[0]
        also = f" (or '{alias}')" if alias != name else ""
        hints.append(f"'{key}': did you mean '{name}'{also}?")
    if len(missing) == 1:
        parts = [f"is missing (accepted: {', '.join(FIELD_ALIASES[missing[0]])})"]
    else:
        parts = ["are missing: " + ", ".join(
            f"'{c}' (accepted: {', '.join(FIELD_ALIASES[c])})" for c in missing)]
    if hints:
        parts.append("unknown keys " + "; ".join(hints))
    if null:
        parts.append("null: " + ", ".join(f"'{n}'" for n in null))
    raise InvalidSample("; ".join(parts), row=row, field=", ".join(missing))


def id_text(value: Any) -> str | None:
    """An id as the text ids are compared by (None: not a usable id): a string as given, a
    number as written in JSON, a whole number without its ``.0`` (JSON's ``1`` and ``1.0``
    are one number; a pandas column of ints with a gap holds ``1.0``). So ``1`` and ``"1"``
    are the same id: a run with both reports a duplicate."""
    if isinstance(value, bool):
        return None
    if isinstance(value, str):
        return value if value.strip() else None
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float) and math.isfinite(value):
        return str(int(value)) if value.is_integer() else repr(value)
    return None


_ID_EXPECTED = ("a string or a number, unique per row; leave the field out, or null, for a "
                "row without one")


def _id(record: Mapping[str, Any], row: int | None) -> str | None:
    name, value = _first(record, "id", row)
    if value is None:
        return None
    text = id_text(value)
    if text is not None:
        return text
    if isinstance(value, float):  # NaN from pandas or a JSON writer, or an infinity
        raise InvalidSample(f"is {'NaN' if math.isnan(value) else 'infinite'}, not an id",
                            row=row, field=name, expected=_ID_EXPECTED)
    if isinstance(value, str):  # an empty CSV cell, say
        raise InvalidSample("is empty", row=row, field=name,
                            expected="an id on every row, unique per row; a table whose rows "
                                     "have no ids has no id column")
    raise InvalidSample(f"has type {type(value).__name__}", row=row, field=name,
                        expected=_ID_EXPECTED)


def _text(record: Mapping[str, Any], canonical: str, row: int | None, *, allow_empty: bool) -> str:
    name, value = _first(record, canonical, row)
    accepted = " or ".join(FIELD_ALIASES[canonical])
    if value is None:
        raise InvalidSample("is missing", row=row, field=canonical,
                            expected=f"a string under one of: {accepted}")
    if canonical == "reference" and isinstance(value, list) and all(isinstance(v, str) for v in value):
        value = "\n".join(value)  # older Ragas `ground_truths: [str]`
    if not isinstance(value, str):
        raise InvalidSample(f"has type {type(value).__name__}", row=row, field=name,
                            expected="a string")
    if not allow_empty and not value.strip():
        raise InvalidSample("is empty", row=row, field=name, expected="a non-empty string")
    return value


def _contexts(record: Mapping[str, Any], row: int | None) -> tuple[tuple[str, ...], tuple[str | None, ...] | None]:
    name, value = _first(record, "retrieved_contexts", row)
    if value is None:
        raise InvalidSample("is missing", row=row, field="retrieved_contexts",
                            expected="a list of strings under retrieved_contexts or contexts, "
                                     "or RAGChecker retrieved_context [{doc_id, text}] "
                                     "(use [] when nothing was retrieved)")
    if isinstance(value, str) or not isinstance(value, Sequence):
        raise InvalidSample(f"has type {type(value).__name__}", row=row, field=name,
                            expected="a list of strings (wrap a single chunk in [...])")
    texts: list[str] = []
    ids: list[str | None] = []
    any_id = False
    for j, item in enumerate(value):
        if isinstance(item, str):
            texts.append(item)
            ids.append(None)
        elif isinstance(item, Mapping) and (text := _chunk_text(item)) is not None:
            texts.append(text)
            doc_id = _chunk_id(item)
            ids.append(doc_id)
            any_id = any_id or doc_id is not None
        else:
            raise InvalidSample(f"item {j} has type {type(item).__name__}", row=row, field=name,
                                expected="strings, or objects with a 'text' string")
    return tuple(texts), (tuple(ids) if any_id else None)


def _chunk_text(item: Mapping[str, Any]) -> str | None:
    for key in _CHUNK_TEXT_KEYS:
        if isinstance(item.get(key), str):
            return str(item[key])
    return None


def _chunk_id(item: Mapping[str, Any]) -> str | None:
    """A chunk object's id: ``doc_id``, ``id`` or ``source``, on it or in its ``metadata``."""
    meta = item.get("metadata")
    for holder in (item, meta if isinstance(meta, Mapping) else {}):
        for key in _CHUNK_ID_KEYS:
            value = holder.get(key)
            if isinstance(value, (str, int)) and not isinstance(value, bool) and str(value):
                return str(value)
    return None


def _id_list(value: Any, row: int | None, name: str, expected: str) -> list[str | None]:
    if isinstance(value, str) or not isinstance(value, Sequence):
        raise InvalidSample(f"has type {type(value).__name__}", row=row, field=name,
                            expected=expected)
    out: list[str | None] = []
    for j, v in enumerate(value):
        if v is None:
            out.append(None)
        elif isinstance(v, (str, int)) and not isinstance(v, bool):
            out.append(str(v))
        else:
            raise InvalidSample(f"item {j} has type {type(v).__name__}", row=row, field=name,
                                expected=expected)
    return out


def _row_chunk_ids(record: Mapping[str, Any], ids: tuple[str | None, ...] | None, n: int,
                   row: int | None) -> tuple[str | None, ...] | None:
    """Ids from ``retrieved_context_ids`` (one per chunk), merged with ids on chunk objects."""
    for name in CHUNK_ID_FIELDS:
        value = record.get(name)
        if value is None:
            continue
        given = _id_list(value, row, name, "a list of strings, one id per retrieved chunk")
        if len(given) != n:
            raise InvalidSample(f"has {len(given)} ids for {n} retrieved chunks", row=row,
                                field=name, expected="one id per retrieved chunk, in the same order")
        own = ids or (None,) * n
        for j, (a, b) in enumerate(zip(given, own, strict=True)):
            if a is not None and b is not None and a != b:
                raise InvalidSample(f"says chunk {j} is {a!r} but the chunk says {b!r}", row=row,
                                    field=name, expected="the same id in both places, or one")
        merged = tuple(a if a is not None else b for a, b in zip(given, own, strict=True))
        return merged if any(x is not None for x in merged) else None
    return ids


def _relevant_ids(record: Mapping[str, Any], chunk_ids: tuple[str | None, ...] | None, n: int,
                  row: int | None) -> tuple[str, ...] | None:
    value = record.get(RELEVANT_IDS_FIELD)
    if value is None:
        return None
    labels = _id_list(value, row, RELEVANT_IDS_FIELD, "a list of the relevant chunks' ids")
    # Labels name chunks by id: chunks without one could only ever be read as irrelevant.
    missing = [j for j, c in enumerate(chunk_ids or ()) if c is None]
    if n and (chunk_ids is None or missing):
        where = "the chunks carry no ids" if chunk_ids is None else \
            f"chunk {missing[0]} has no id"
        raise InvalidSample(f"labels relevant chunks by id, but {where}", row=row,
                            field=RELEVANT_IDS_FIELD,
                            expected="retrieved_context_ids (one per chunk) or a doc_id/source "
                                     "on each chunk object, so the labels can be matched")
    return tuple(x for x in labels if x is not None)


def _claim_text(claim: Any) -> str:
    if isinstance(claim, str):
        return claim
    if isinstance(claim, Sequence) and all(isinstance(p, str) for p in claim):
        return " ".join(p.strip() for p in claim)  # RAGChecker triplet [subject, predicate, object]
    raise ValueError(f"a claim must be a string or a [subject, predicate, object] triplet, got {claim!r}")


def _precomputed(record: Mapping[str, Any], n_chunks: int, row: int | None) -> ClaimVerdicts | None:
    present = [k for k in _PRECOMPUTED if record.get(k) is not None]
    if len(present) != len(_PRECOMPUTED):
        return None  # partial fields are kept in metadata-free form; only complete sets are usable
    try:
        return ClaimVerdicts.build(
            response_claims=[_claim_text(c) for c in record["response_claims"]],
            reference_claims=[_claim_text(c) for c in record["gt_answer_claims"]],
            answer2response=record["answer2response"],
            response2answer=record["response2answer"],
            retrieved2response=record["retrieved2response"],
            retrieved2answer=record["retrieved2answer"],
            n_chunks=n_chunks,
        )
    except (ValueError, TypeError) as exc:
        raise InvalidSample(f"precomputed claims/verdicts are inconsistent: {exc}", row=row,
                            field="retrieved2response/retrieved2answer",
                            expected="RAGChecker's shapes ([claims][chunks])") from exc


def read_turns(record: Mapping[str, Any], row: int | None = None) -> tuple[str, tuple[Turn, ...]]:
    """A record's question and the turns before it, as ``Sample.from_record`` reads them
    (``user_input`` a string or a conversation, ``history`` beside it); raises
    ``InvalidSample`` naming the message and the fix.

    >>> read_turns({"user_input": [{"role": "user", "content": "Annual refunds?"},
    ...                            {"role": "assistant", "content": "30 days."},
    ...                            {"role": "user", "content": "Monthly?"}]})[0]
    'Monthly?'
    """
    return _user_turns(record, row)


def _user_turns(record: Mapping[str, Any], row: int | None) -> tuple[str, tuple[Turn, ...]]:
    """``user_input`` and the turns before it: from a string ``user_input`` (and ``history``
    when given), or from a conversation in ``user_input``."""
    name, value = _first(record, "user_input", row)
    given = record.get(HISTORY_FIELD)
    history = () if given is None else _messages(given, row, HISTORY_FIELD)
    if isinstance(value, str) or value is None:
        return _text(record, "user_input", row, allow_empty=False), history
    if isinstance(value, Mapping) or not isinstance(value, Sequence):
        raise InvalidSample(f"has type {type(value).__name__}", row=row, field=name,
                            expected="the question as a string, or the conversation as a list "
                                     'of messages ({"role": "user", "content": "..."}), the '
                                     "last one the user's")
    turns = _messages(value, row, name)
    if not turns:
        raise InvalidSample("is an empty conversation", row=row, field=name,
                            expected="at least the user's question as a message, or the "
                                     "question as a string")
    last = turns[-1]
    if last.role != "user":
        k = _positions(value)[-1]
        raise InvalidSample(f"is the {last.role}'s turn, but a conversation must end with the "
                            "user's turn that 'response' answers", row=row, field=f"{name}[{k}]",
                            expected="the user's question as the last message; the assistant's "
                                     "answer to it goes in 'response'")
    if given is not None and history:
        raise InvalidSample("is given, and user_input is a conversation too", row=row,
                            field=HISTORY_FIELD,
                            expected="the earlier turns once: in the conversation, or in "
                                     "'history' beside a string user_input")
    if not last.content.strip():
        k = _positions(value)[-1]
        raise InvalidSample("is empty", row=row, field=f"{name}[{k}].content",
                            expected="the user's question, a non-empty string")
    return last.content, turns[:-1]


def _positions(messages: Sequence[Any]) -> list[int]:
    """Where the messages kept by ``_messages`` stand in the list as given."""
    return [k for k, m in enumerate(messages) if not _skipped(m)]


def _skipped(message: Any) -> bool:
    """A tool message, or an assistant message that only calls tools (no text)."""
    if not isinstance(message, Mapping):
        return False
    role = message.get("role") if message.get("role") is not None else message.get("type")
    if role in _TOOL_ROLES:
        return True
    return (ROLES.get(str(role)) == "assistant" and message.get("content") in (None, "", [])
            and bool(message.get("tool_calls") or message.get("function_call")))


def _messages(value: Any, row: int | None, name: str) -> tuple[Turn, ...]:
    """The turns of a list of messages, each checked; errors name ``name[k].field``."""
    if isinstance(value, (str, Mapping)) or not isinstance(value, Sequence):
        raise InvalidSample(f"has type {type(value).__name__}", row=row, field=name,
                            expected='a list of messages ({"role": "user" | "assistant" | '
                                     '"system", "content": "..."}), oldest first')
    turns: list[Turn] = []
    for k, message in enumerate(value):
        where = f"{name}[{k}]"
        if not isinstance(message, Mapping):
            raise InvalidSample(f"has type {type(message).__name__}", row=row, field=where,
                                expected='a message object {"role": ..., "content": "..."}')
        if _skipped(message):
            continue
        # A table's struct column gives every message both keys, one of them null.
        key = "role" if message.get("role") is not None else "type"
        role = message.get(key)
        if role is None:
            raise InvalidSample("has no role", row=row, field=where,
                                expected="a 'role' (or Ragas 'type'): " + _ROLE_EXPECTED)
        if not isinstance(role, str) or role not in ROLES:
            shown = repr(role) if isinstance(role, str) else f"of type {type(role).__name__}"
            raise InvalidSample(f"is {shown}", row=row, field=f"{where}.{key}",
                                expected=_ROLE_EXPECTED)
        content = _content(message.get("content"), row, f"{where}.content")
        if not content.strip():
            raise InvalidSample("is empty", row=row, field=f"{where}.content",
                                expected="the message's text; remove a message that says nothing")
        turns.append(Turn(ROLES[role], content))
    return tuple(turns)


def _content(value: Any, row: int | None, where: str) -> str:
    """A message's text: a string, or OpenAI's list of ``{"type": "text", "text"}`` parts
    (joined by newlines). Other parts (images, audio) cannot be judged: refused."""
    if isinstance(value, str):
        return value
    if value is None:
        raise InvalidSample("is missing", row=row, field=where, expected="the message's text")
    if isinstance(value, Mapping) or not isinstance(value, Sequence):
        raise InvalidSample(f"has type {type(value).__name__}", row=row, field=where,
                            expected='a string, or a list of {"type": "text", "text": "..."} parts')
    texts = []
    for j, part in enumerate(value):
        if isinstance(part, str):
            texts.append(part)
            continue
        if not isinstance(part, Mapping):
            problem = f"has type {type(part).__name__}"
        elif part.get("type") not in (None, "text", "input_text", "output_text"):
            problem = f"is a part of type {part.get('type')!r}"
        elif not isinstance(part.get("text"), str):
            problem = "has no 'text' string"
        else:
            texts.append(part["text"])
            continue
        raise InvalidSample(problem, row=row, field=f"{where}[{j}]",
                            expected='{"type": "text", "text": "..."}: only text can be judged; '
                                     "remove image or audio parts")
    return "\n".join(texts)


def check_sizes(sample: Sample, max_chars: int = MAX_TEXT_CHARS, row: int | None = None) -> None:
    """Raise ``InvalidSample`` for a question, response, reference or chunk over ``max_chars``."""
    for name in ("user_input", "response", "reference"):
        n = len(getattr(sample, name) or "")
        if n > max_chars:
            raise InvalidSample(f"has {n:,} characters", row=row, field=name,
                                expected=f"at most {max_chars:,} characters (raise the limit "
                                         "with max_chars= / --max-chars)")
    for j, chunk in enumerate(sample.retrieved_contexts):
        if isinstance(chunk, str) and len(chunk) > max_chars:
            raise InvalidSample(f"item {j} has {len(chunk):,} characters", row=row,
                                field="retrieved_contexts",
                                expected=f"at most {max_chars:,} characters per chunk; "
                                         "split long documents into chunks")
    total = sum(len(t.content) for t in sample.history)
    if total > max_chars:
        raise InvalidSample(f"has {total:,} characters in its {len(sample.history)} turns",
                            row=row, field=HISTORY_FIELD,
                            expected=f"at most {max_chars:,} characters in all (keep the turns "
                                     "that give the last question its meaning, or raise the "
                                     "limit with max_chars= / --max-chars)")


def _check_turns(history: tuple[Any, ...], row: int | None) -> None:
    """A ``Sample(history=...)`` built in code: ``Turn`` objects with a known role and text."""
    for k, turn in enumerate(history):
        where = f"{HISTORY_FIELD}[{k}]"
        if not isinstance(turn, Turn):
            raise InvalidSample(f"has type {type(turn).__name__}", row=row, field=where,
                                expected='Turn(role, content); for {"role", "content"} dicts '
                                         "use Sample.from_record")
        if turn.role not in ("user", "assistant", "system"):
            raise InvalidSample(f"is {turn.role!r}", row=row, field=f"{where}.role",
                                expected="user, assistant or system")
        if not isinstance(turn.content, str):
            raise InvalidSample(f"has type {type(turn.content).__name__}", row=row,
                                field=f"{where}.content", expected="a string")


def _validate(sample: Sample, row: int | None, max_chars: int = MAX_TEXT_CHARS) -> None:
    for name in ("user_input", "response", "reference"):
        if name == "reference" and sample.reference is None:
            continue  # no reference: asked for explicitly
        if not isinstance(getattr(sample, name), str):
            raise InvalidSample(f"has type {type(getattr(sample, name)).__name__}", row=row,
                                field=name, expected="a string")
    if not sample.user_input.strip():
        raise InvalidSample("is empty", row=row, field="user_input", expected="a non-empty string")
    if sample.reference is not None and not sample.reference.strip():
        raise InvalidSample("is empty", row=row, field="reference", expected="a non-empty string")
    for j, chunk in enumerate(sample.retrieved_contexts):
        if not isinstance(chunk, str):
            raise InvalidSample(f"item {j} has type {type(chunk).__name__}", row=row,
                                field="retrieved_contexts", expected="a string")
    check_sizes(sample, max_chars, row)
    if sample.chunk_ids is not None and len(sample.chunk_ids) != len(sample.retrieved_contexts):
        raise InvalidSample("has a different length than retrieved_contexts", row=row,
                            field="chunk_ids", expected="one id per chunk")
    if sample.relevant_ids is not None and sample.retrieved_contexts and (
            sample.chunk_ids is None or any(c is None for c in sample.chunk_ids)):
        raise InvalidSample("labels relevant chunks by id, but not every chunk has an id",
                            row=row, field=RELEVANT_IDS_FIELD,
                            expected="chunk_ids (one per chunk) so the labels can be matched")
