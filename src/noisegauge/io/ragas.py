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
    if type(obj).__name__ == _MULTI_TURN or not isinstance(obj.user_input, (str, type(None))):
        raise InvalidSample(f"a {type(obj).__name__} holds a conversation, not one question",
                            row=row, field="user_input", expected="single-turn samples (user_input, "
                            "response, reference, retrieved_contexts as text)")
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
    return {k: v for k, v in fields.items() if v is not None}


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
