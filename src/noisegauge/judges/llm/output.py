"""Reading an LLM's answer tolerantly: JSON that is almost JSON, and the shapes models drift to.

Local models wrap JSON in code fences or prose, leave trailing commas, use single quotes,
prefix a ``<think>`` block, or stop mid-answer; ``json_repair`` (a small, well-kept
library) fixes the syntax. What it cannot know is the meaning, so the readers below
accept only values they can map to ids they asked for, and report everything else as
missing (the judge then re-asks for exactly that). Nothing is guessed.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from ...verdicts import Verdict, parse_verdict

__all__ = ["load_json", "read_claims", "read_verdicts"]

_THINK = re.compile(r"<think>.*?</think>", re.DOTALL | re.IGNORECASE)
_FENCE = re.compile(r"```(?:json)?\s*(.*?)```", re.DOTALL | re.IGNORECASE)
_ID = re.compile(r"[\s\[\]()<>\"'`*#]+")

_PREMISE_KEYS = ("premise", "premise_id", "p", "source")
_CLAIM_KEYS = ("claim", "claim_id", "c", "id")
_VERDICT_KEYS = ("verdict", "label", "judgement", "judgment", "answer")


def load_json(text: str) -> Any:
    """Parse ``text`` as JSON, repairing syntax if needed; None when nothing is there."""
    text = _THINK.sub("", text).strip()
    try:
        return json.loads(text)
    except ValueError:
        pass
    fenced = _FENCE.search(text)
    if fenced:
        try:
            return json.loads(fenced.group(1))
        except ValueError:
            pass
    try:
        import json_repair
    except ImportError:  # without the repair library only clean JSON is read
        return None
    value = json_repair.loads(text)
    if isinstance(value, list) and value and all(isinstance(v, dict) for v in value) \
            and len(value) > 1 and not any(_looks_like_record(v) for v in value):
        # Several JSON objects in one answer (e.g. a draft, then the answer): the last wins.
        return value[-1]
    return None if value == "" else value


def _claim_list(value: object) -> list[str] | None:
    if not isinstance(value, list):
        return None
    claims = []
    for item in value:
        if isinstance(item, dict):  # {"claim": "..."} items from chatty models
            item = next((item[k] for k in ("claim", "text", "statement") if k in item), None)
        if not isinstance(item, str):
            return None
        if item.strip():
            claims.append(item.strip())
    return claims


def read_claims(text: str, text_ids: Sequence[str]) -> dict[str, list[str]]:
    """Text id -> its claims, for the ids whose list the answer gives in a readable form.

    With a single text, a bare list or ``{"claims": [...]}`` is accepted too.
    """
    value = load_json(text)
    if isinstance(value, dict) and len(value) == 1 and not set(map(_norm_id, value)) & set(
            text_ids) and isinstance(next(iter(value.values())), dict):
        value = next(iter(value.values()))  # {"result": {"t1": [...]}}
    found: dict[str, list[str]] = {}
    if isinstance(value, dict):
        for key, item in value.items():
            tid = _norm_id(key)
            claims = _claim_list(item)
            if tid in text_ids and claims is not None:
                found[tid] = claims
        if not found and len(text_ids) == 1:
            value = value.get("claims", value.get("statements"))
    if not found and len(text_ids) == 1:
        claims = _claim_list(value)
        if claims is not None:
            found[text_ids[0]] = claims
    return found


def _norm_id(key: object) -> str:
    return _ID.sub("", str(key)).lower()


def _verdict(value: object) -> Verdict | None:
    if isinstance(value, dict):
        value = next((value[k] for k in _VERDICT_KEYS if k in value), None)
    try:
        return parse_verdict(value)
    except ValueError:
        return None


def _looks_like_record(value: object) -> bool:
    return isinstance(value, dict) and any(k in value for k in _VERDICT_KEYS) and \
        any(k in value for k in _CLAIM_KEYS)


def _cells(value: Any, premise_ids: Sequence[str],
           claim_ids: Sequence[str]) -> Iterable[tuple[str, str, object]]:
    """(premise id, claim id, raw verdict) triples from any of the accepted shapes."""
    pids, cids = set(premise_ids), set(claim_ids)
    if isinstance(value, list):  # [{"premise": "p1", "claim": "c1", "verdict": ...}, ...]
        for rec in value:
            if not isinstance(rec, dict):
                continue
            p = next((_norm_id(rec[k]) for k in _PREMISE_KEYS if k in rec), None)
            c = next((_norm_id(rec[k]) for k in _CLAIM_KEYS if k in rec), None)
            if p is None and len(pids) == 1:
                p = premise_ids[0]
            if p is not None and c is not None:
                yield p, c, rec
        return
    if not isinstance(value, dict):
        return
    keyed = {_norm_id(k): v for k, v in value.items()}
    if not (set(keyed) & (pids | cids)) and len(keyed) == 1:
        # {"verdicts": {...}} or similar wrapper around the real answer.
        yield from _cells(next(iter(keyed.values())), premise_ids, claim_ids)
        return
    for outer, inner in keyed.items():
        if outer in pids and isinstance(inner, Mapping):  # premise-major (the asked shape)
            for c, v in inner.items():
                yield outer, _norm_id(c), v
        elif outer in cids and isinstance(inner, Mapping):  # claim-major
            for p, v in inner.items():
                yield _norm_id(p), outer, v
        elif outer in cids and len(pids) == 1:  # flat {"c1": "entailed"} for one premise
            yield premise_ids[0], outer, inner


def read_verdicts(text: str, premise_ids: Sequence[str],
                  claim_ids: Sequence[str]) -> dict[tuple[str, str], Verdict]:
    """Every (premise id, claim id) -> verdict the answer gives for the ids asked about.

    Unknown ids and unreadable verdicts are dropped (so they count as missing).
    """
    pids, cids = set(premise_ids), set(claim_ids)
    found: dict[tuple[str, str], Verdict] = {}
    for p, c, raw in _cells(load_json(text), premise_ids, claim_ids):
        verdict = _verdict(raw)
        if p in pids and c in cids and verdict is not None:
            found.setdefault((p, c), verdict)
    return found
