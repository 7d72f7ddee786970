"""Reading an LLM's answer tolerantly: JSON that is almost JSON, and the shapes models drift to.

Local models wrap JSON in code fences or prose, leave trailing commas, use single quotes,
prefix a ``<think>`` block, or stop mid-answer; ``json_repair`` (a small, well-kept
library) fixes the syntax. What it cannot know is the meaning, so the readers below
accept a value only where it maps to exactly one cell that was asked for:

- the asked shape ``{"p1": {"c1": "entailed"}}``, or claim-major ``{"c1": {"p1": ...}}``;
- a flat ``{"c1": "entailed"}`` when c1 was listed for one premise only, and a flat
  ``{"p1": "contradicted"}`` when p1 lists one claim only (small models do both);
- lists of records that carry their ids (``[{"premise": "p1", "claim": "c1", "verdict":
  ...}]``, ``{"p1": [{"c1": "neutral"}, ...]}``), in any order;
- ids spelled ``P1``, ``[c1]``, ``claim 1`` or ``c1: the claim's text``; verdict synonyms
  such as ``supported``, ``entailment``, ``not supported``, ``refuted``, ``not enough info``.

Everything else (unknown ids, bare positional lists, two different verdicts for one cell)
counts as missing, and the judge re-asks for exactly that. Nothing is guessed.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator, Mapping, Sequence
from typing import Any

from ...verdicts import Verdict, parse_verdict

__all__ = ["load_json", "norm_id", "read_claims", "read_verdicts", "stray_cells", "verdict_of"]

_THINK = re.compile(r"<think>.*?</think>", re.DOTALL | re.IGNORECASE)
_FENCE = re.compile(r"```(?:json)?\s*(.*?)```", re.DOTALL | re.IGNORECASE)
_ID = re.compile(r"^[\s\[\](){}<>\"'`*#]*(premise|claim|text|p|c|t)[\s_\-#]*(\d+)(?!\d)",
                 re.IGNORECASE)
_LONG = {"premise": "p", "claim": "c", "text": "t"}

_PREMISE_KEYS = ("premise", "premise_id", "p", "source")
_CLAIM_KEYS = ("claim", "claim_id", "c", "id")
_VERDICT_KEYS = ("verdict", "label", "judgement", "judgment", "answer")

#: What models write instead of our three words (FEVER's labels among them); all
#: unambiguous: "not supported" is not entailment, and nothing here says more than that.
_SYNONYMS: dict[str, Verdict] = {
    "supports": Verdict.ENTAILED, "support": Verdict.ENTAILED, "entail": Verdict.ENTAILED,
    "fully_supported": Verdict.ENTAILED, "true_by_premise": Verdict.ENTAILED,
    "not_supported": Verdict.NEUTRAL, "not_entailed": Verdict.NEUTRAL,
    "not_enough_info": Verdict.NEUTRAL, "not_enough_information": Verdict.NEUTRAL,
    "nei": Verdict.NEUTRAL, "insufficient_information": Verdict.NEUTRAL,
    "no_information": Verdict.NEUTRAL, "unrelated": Verdict.NEUTRAL,
    "irrelevant": Verdict.NEUTRAL, "undetermined": Verdict.NEUTRAL,
    "cannot_be_determined": Verdict.NEUTRAL, "unknown": Verdict.NEUTRAL,
    "refutes": Verdict.CONTRADICTED, "refute": Verdict.CONTRADICTED,
    "contradict": Verdict.CONTRADICTED, "contradictory": Verdict.CONTRADICTED,
}


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
            and len(value) > 1 and not any(_looks_like_record(v) for v in value) \
            and not all(len(v) == 1 for v in value):
        # Several JSON objects in one answer (e.g. a draft, then the answer): the last wins.
        return value[-1]
    return None if value == "" else value


def norm_id(key: object) -> str:
    """``"P1"``, ``"[c1]"``, ``"claim 1"``, ``"c1: Paris is..."`` -> ``p1``/``c1``; other keys
    lower-cased with spaces and brackets removed (so they match no id)."""
    text = str(key)
    m = _ID.match(text)
    if m:
        kind = m.group(1).lower()
        return f"{_LONG.get(kind, kind)}{int(m.group(2))}"
    return re.sub(r"[\s\[\]()<>\"'`*#]+", "", text).lower()


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
    if isinstance(value, dict) and len(value) == 1 and not set(map(norm_id, value)) & set(
            text_ids) and isinstance(next(iter(value.values())), dict):
        value = next(iter(value.values()))  # {"result": {"t1": [...]}}
    found: dict[str, list[str]] = {}
    if isinstance(value, dict):
        for key, item in value.items():
            tid = norm_id(key)
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


def verdict_of(value: object) -> Verdict | None:
    """A verdict from a word, a synonym, a bool or a ``{"verdict": ...}`` record; else None."""
    if isinstance(value, dict):
        value = next((value[k] for k in _VERDICT_KEYS if k in value), None)
    if isinstance(value, str):
        key = re.sub(r"[\s\-]+", "_", value.strip().strip(".!\"'`*").lower())
        if key in _SYNONYMS:
            return _SYNONYMS[key]
    try:
        return parse_verdict(value)
    except ValueError:
        return None


def _looks_like_record(value: object) -> bool:
    return isinstance(value, dict) and any(k in value for k in _VERDICT_KEYS) and \
        any(k in value for k in _CLAIM_KEYS + _PREMISE_KEYS)


class _Asked:
    """The cells one request asked for, and who owns a lone id."""

    def __init__(self, pairs: Mapping[str, Sequence[str]]) -> None:
        self.pairs = {p: list(cs) for p, cs in pairs.items()}
        self.cells = {(p, c) for p, cs in self.pairs.items() for c in cs}
        self.pids = set(self.pairs)
        self.cids = {c for cs in self.pairs.values() for c in cs}
        owners: dict[str, list[str]] = {}
        for p, cs in self.pairs.items():
            for c in cs:
                owners.setdefault(c, []).append(p)
        #: claim id -> its premise, where the claim was listed for one premise only
        self.premise_of = {c: ps[0] for c, ps in owners.items() if len(ps) == 1}
        #: premise id -> its claim, where the premise lists one claim only
        self.claim_of = {p: cs[0] for p, cs in self.pairs.items() if len(cs) == 1}


def _record_cell(rec: Mapping[str, Any], asked: _Asked,
                 premise: str | None) -> tuple[str, str] | None:
    p = next((norm_id(rec[k]) for k in _PREMISE_KEYS if k in rec), premise)
    c = next((norm_id(rec[k]) for k in _CLAIM_KEYS if k in rec), None)
    if p is None and c is not None:
        p = asked.premise_of.get(c)
    if c is None and p is not None:
        c = asked.claim_of.get(p)
    return (p, c) if p is not None and c is not None else None


def _cells(value: Any, asked: _Asked, premise: str | None = None,
           depth: int = 0) -> Iterator[tuple[tuple[str, str], object]]:
    """((premise id, claim id), raw verdict) from any of the accepted shapes."""
    if depth > 4:
        return
    if isinstance(value, list):
        for item in value:
            if not isinstance(item, dict):
                continue
            if _looks_like_record(item):
                cell = _record_cell(item, asked, premise)
                if cell is not None:
                    yield cell, item
            else:  # [{"c1": "entailed"}, {"c2": "neutral"}]: one mapping, split up
                yield from _cells(item, asked, premise, depth + 1)
        return
    if not isinstance(value, dict):
        return
    keyed = {norm_id(k): v for k, v in value.items()}
    ids = set(keyed) & (asked.pids | asked.cids)
    if not ids:
        # A wrapper ({"verdicts": {...}, "notes": "..."}): read what is inside.
        for inner in keyed.values():
            if isinstance(inner, (dict, list)):
                yield from _cells(inner, asked, premise, depth + 1)
        return
    for key in ids:
        inner = keyed[key]
        if key in asked.pids and premise is None:
            if isinstance(inner, dict) and not _looks_like_record(inner) and set(
                    map(norm_id, inner)) & asked.cids:
                for c, v in inner.items():           # premise-major (the asked shape)
                    yield (key, norm_id(c)), v
            elif isinstance(inner, list):            # {"p1": [{"claim": "c1", ...}]}
                yield from _cells(inner, asked, key, depth + 1)
            elif key in asked.claim_of:              # {"p1": "contradicted"}, one claim
                yield (key, asked.claim_of[key]), inner
        elif key in asked.cids:
            if isinstance(inner, dict) and not _looks_like_record(inner) and set(
                    map(norm_id, inner)) & asked.pids:
                for p, v in inner.items():           # claim-major
                    yield (norm_id(p), key), v
            elif premise is not None:                # inside {"p1": [...]}
                yield (premise, key), inner
            elif key in asked.premise_of:            # {"c1": "entailed"}, one premise
                yield (asked.premise_of[key], key), inner


def read_verdicts(text: str, pairs: Mapping[str, Sequence[str]]) -> dict[tuple[str, str], Verdict]:
    """Every (premise id, claim id) -> verdict the answer gives for the cells asked for
    (``pairs``: premise id -> the claim ids listed for it).

    Unknown ids, unreadable verdicts and cells given two different verdicts are dropped
    (so they count as missing).
    """
    asked = _Asked(pairs)
    found: dict[tuple[str, str], Verdict] = {}
    clashes: set[tuple[str, str]] = set()
    for cell, raw in _cells(load_json(text), asked):
        verdict = verdict_of(raw)
        if cell not in asked.cells or verdict is None:
            continue
        if found.setdefault(cell, verdict) is not verdict:
            clashes.add(cell)
    for cell in clashes:
        del found[cell]
    return found


_CELL_ID = re.compile(r"^[pc]\d+$")


def stray_cells(text: str, pairs: Mapping[str, Sequence[str]]) -> list[tuple[str, str]]:
    """(premise id, claim id) pairs the answer gives a verdict for that were not asked for
    (a small model copying the prompt's example ids, say): worth telling it about."""
    asked = _Asked(pairs)
    stray = {cell for cell, raw in _cells(load_json(text), asked)
             if cell not in asked.cells and verdict_of(raw) is not None
             and all(_CELL_ID.match(part) for part in cell)}
    return sorted(stray, key=lambda cell: (int(cell[0][1:]), int(cell[1][1:])))
