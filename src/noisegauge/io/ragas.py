"""Ragas objects in, without importing Ragas: ``EvaluationDataset``, lists of
``SingleTurnSample``, an ``EvaluationResult`` and its ``to_pandas()`` frame.

Recognised by shape, not by class, so any Ragas version (and any look-alike) works:

- a *sample object* has ``user_input`` and can give its fields (``to_dict()``,
  ``model_dump()``, a dataclass, or plain attributes);
- a *dataset* has a ``samples`` list of such objects (``EvaluationDataset``);
- a *result* has a ``dataset`` that is such a dataset (``EvaluationResult``); its scores are
  Ragas' own and are not read.

Ragas field names are ours (``user_input, response, reference, retrieved_contexts``);
other fields (``reference_contexts``, ``rubrics``, ...) are kept in ``metadata``.

A ``MultiTurnSample`` (``user_input`` a list of ``HumanMessage | AIMessage | ToolMessage``)
has no ``response`` or ``retrieved_contexts`` field: its last AI message is the response,
the human message before it the question and the turns before that the history; the tool
messages between the question and the answer (the retrieval the answer was written from)
are the retrieved contexts, unless the object carries ``retrieved_contexts`` itself.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from typing import Any

from ..errors import InvalidSample
from ..samples import Sample
from .rows import RawRow, fingerprint, record_row, sample_row

__all__ = ["is_sample_like", "sample_record", "object_row", "unwrap_dataset"]

_MULTI_TURN = "MultiTurnSample"


def is_sample_like(obj: Any) -> bool:
    """An object (not a dict) carrying a Ragas sample's fields."""
    if isinstance(obj, (Mapping, str, bytes, type)):
        return False
    return hasattr(obj, "user_input") and (
        callable(getattr(obj, "to_dict", None)) or callable(getattr(obj, "model_dump", None))
        or dataclasses.is_dataclass(obj) or hasattr(obj, "__dict__"))


def sample_record(obj: Any, row: int | None = None) -> Any:
    """The record dict of a sample object; anything else is returned unchanged (so the
    reader's own checks name what is wrong with it)."""
    if not is_sample_like(obj):
        return obj
    fields: Any
    if callable(getattr(obj, "model_dump", None)):
        fields = obj.model_dump(exclude_none=True)
    elif callable(getattr(obj, "to_dict", None)):
        fields = obj.to_dict()
    elif dataclasses.is_dataclass(obj) and not isinstance(obj, type):
        fields = dataclasses.asdict(obj)
    else:
        fields = {k: v for k, v in vars(obj).items() if not k.startswith("_")}
    if not isinstance(fields, Mapping):
        return obj
    record = {k: v for k, v in fields.items() if v is not None}
    if type(obj).__name__ == _MULTI_TURN or not isinstance(obj.user_input, (str, type(None))):
        return _multi_turn(record, obj, row)
    return record


def _message(message: Any) -> Any:
    """A Ragas message object as a dict (``type``, ``content``, ``tool_calls``)."""
    if isinstance(message, Mapping) or not hasattr(message, "content"):
        return message
    dump = getattr(message, "model_dump", None)
    if callable(dump):
        data = dump(exclude_none=True)
        if isinstance(data, Mapping):
            return dict(data)
    return {k: getattr(message, k) for k in ("type", "role", "content", "tool_calls")
            if getattr(message, k, None) is not None}


def _role(message: Any) -> Any:
    if not isinstance(message, Mapping):
        return None
    return message.get("role") if message.get("role") is not None else message.get("type")


def _multi_turn(record: dict[str, Any], obj: Any, row: int | None) -> dict[str, Any]:
    """A multi-turn sample's record: the last AI message as ``response``, the tool results
    after the last human message as ``retrieved_contexts`` (when it has none of its own)."""
    raw = getattr(obj, "user_input", None)
    messages = [_message(m) for m in (raw if isinstance(raw, Sequence) and not isinstance(
        raw, (str, bytes)) else [])]
    if not messages:  # not a list: Sample.from_record names the problem
        return record
    record["user_input"] = messages
    talk = [k for k, m in enumerate(messages) if _role(m) not in ("tool", "function")]
    if "response" not in record and talk and _role(messages[talk[-1]]) in ("ai", "assistant"):
        answer = messages[talk[-1]]
        if isinstance(answer.get("content"), str) and not answer.get("tool_calls"):
            record["response"] = answer["content"]
            messages = messages[:talk[-1]]
            record["user_input"] = messages
    humans = [k for k, m in enumerate(messages) if _role(m) in ("human", "user")]
    after = messages[humans[-1] + 1:] if humans else []
    steps = all(_role(m) in ("tool", "function") or (isinstance(m, Mapping) and m.get("tool_calls"))
                for m in after)
    if steps:  # the retrieval between the question and the answer: the question ends the talk
        record["user_input"] = messages[:humans[-1] + 1] if humans else messages
    if "retrieved_contexts" not in record:
        tools = [m.get("content") for m in after
                 if isinstance(m, Mapping) and _role(m) in ("tool", "function")]
        if not tools:
            raise InvalidSample(
                f"a {type(obj).__name__} carries no retrieved chunks: no retrieved_contexts, "
                "and no tool message after the last human message", row=row,
                field="retrieved_contexts",
                expected="the chunks the answer was written from: the retrieval tool's "
                         "ToolMessage between the question and the answer, or rows as dicts "
                         "with retrieved_contexts beside the conversation")
        record["retrieved_contexts"] = tools
    return record


def object_row(index: int, item: Any, *, bytes_valid: bool = True) -> RawRow:
    """The reader's row for one in-memory item: a Sample, a dict, or a sample object
    (``bytes_valid``: as ``record_row`` takes it, for items parsed from a file)."""
    if isinstance(item, Sample):
        return sample_row(index, item)
    try:
        record = sample_record(item, row=index)
    except InvalidSample as exc:
        return RawRow(index, fingerprint(type(item).__name__.encode()), error=exc)
    return record_row(index, record, bytes_valid=bytes_valid)


def _samples_of(obj: Any) -> Sequence[Any] | None:
    samples = getattr(obj, "samples", None)
    if isinstance(samples, Sequence) and not isinstance(samples, (str, bytes)) and (
            not samples or is_sample_like(samples[0])):
        return samples
    return None


def unwrap_dataset(obj: Any) -> Any:
    """The sample list inside a Ragas dataset or result; anything else unchanged."""
    if isinstance(obj, (Mapping, str, bytes, Sequence)):
        return obj
    samples = _samples_of(obj)
    if samples is not None:
        return list(samples)
    inner = getattr(obj, "dataset", None)
    if inner is not None and not isinstance(inner, (str, bytes)):
        samples = _samples_of(inner)
        if samples is not None:
            return list(samples)
    return obj
