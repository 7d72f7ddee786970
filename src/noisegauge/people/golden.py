"""A golden set checked by a person: the GOLDEN rows ``noisegauge testset`` drafts, the review
events ``noisegauge review GOLDEN`` appends, and the reviewed set ``noisegauge testset export``
writes from both.

A row's *pool* is its ``retrieved_contexts`` (drafted as holding the answer), then its
``distractors`` (drafted as traps). Review events go to their own append-only file, written
and read by :class:`~noisegauge.people.labels.LabelFile` (locked, fsynced, a torn line
skipped); each names the row (``id``) and the ``digest`` of what it was made on, and the
latest event for a field wins (undo appends the earlier value):

- ``{"kind": "verdict", "verdict": "accept"|"reject"|null}``: keep the row, leave it out, or
  undecided again;
- ``{"kind": "edit", "reference": "..."|null}``: the reference a person wrote or composed
  from sentences (null: the draft's again);
- ``{"kind": "role", "item": j, "role": "answer"|"distractor"|"drop"|null}``: pool item j
  holds the answer, is kept as a trap, or is left out (null: as drafted).

A row can be accepted only with a reference and a chunk holding it, and, when ``testset``
flagged a conflict, once a person has given each conflicting chunk a role: a conflict is
settled by a person, never by the draft.
"""

from __future__ import annotations

import datetime as _dt
import hashlib
import json
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from ..errors import InvalidInput, InvalidSample
from ..samples import read_turns

__all__ = ["GOLDEN_KINDS", "ROLES", "ExportCounts", "RowReview", "acceptable", "export_rows",
           "fold_golden", "golden_digest", "is_golden_row", "pool", "read_golden",
           "reviewed_row", "sniff"]

GOLDEN_KINDS = ("verdict", "edit", "role")
ROLES = ("answer", "distractor", "drop")
VERDICTS = ("accept", "reject")
#: A typed reference longer than this is a paste gone wrong, not an answer.
MAX_REFERENCE = 20_000
_RESULT_KINDS = ("claim", "chunk", "reference", "skip", "session")


def is_golden_row(row: Any) -> bool:
    """A GOLDEN row carries ``distractors`` or ``draft`` (a results row carries ``metrics``)."""
    return isinstance(row, dict) and ("distractors" in row or "draft" in row)


def _lines(path: Path, what: str) -> Iterator[tuple[int, Any]]:
    """(line number, parsed JSON) for each non-empty line; one error line on bad bytes/JSON."""
    if not path.is_file():
        raise InvalidInput(f"{path}: no such file")
    with path.open(encoding="utf-8", errors="surrogateescape") as fh:
        for n, line in enumerate(fh, 1):
            if any("\udc80" <= ch <= "\udcff" for ch in line):
                raise InvalidInput(f"{path}, line {n}: not UTF-8 text; expected {what}")
            if not line.strip():
                continue
            try:
                yield n, json.loads(line)
            except json.JSONDecodeError as exc:
                raise InvalidInput(f"{path}, line {n}: not JSON ({exc.msg}); expected "
                                   f"{what}") from exc


def sniff(path: str | Path) -> Literal["golden", "results"]:
    """Whether ``path`` holds GOLDEN rows or RESULTS rows, from its first row's fields."""
    p = Path(path)
    for n, row in _lines(p, "JSONL rows"):
        if is_golden_row(row):
            return "golden"
        if isinstance(row, dict) and row.get("status") in ("ok", "undefined", "error") \
                and ("metrics" in row or "response_claims" in row):
            return "results"
        if isinstance(row, dict) and "response" in row and "metrics" not in row:
            raise InvalidInput(
                f"{p}, line {n}: an input row (a 'response', no 'metrics'): score it first "
                f"(`noisegauge score {p} --out results.jsonl`) and review the results")
        raise InvalidInput(
            f"{p}, line {n}: neither a golden row (fields 'distractors', 'draft': written by "
            "`noisegauge testset DOCS --out GOLDEN.jsonl`) nor a result row (fields 'status', "
            "'metrics': written by `noisegauge score INPUT --out results.jsonl`)")
    raise InvalidInput(f"{p}: no rows; expected a golden file or a results file")


def _texts(row: Mapping[str, Any], name: str, where: str) -> list[str]:
    value = row.get(name) or []
    if not isinstance(value, list) or not all(isinstance(t, str) for t in value):
        raise InvalidInput(f"{where}: field '{name}' must be a list of texts")
    return value


def _check_row(row: Any, where: str) -> None:
    if not is_golden_row(row):
        raise InvalidInput(f"{where}: not a golden row (no 'distractors' or 'draft'); every "
                           "row of a golden file is one")
    question = row.get("user_input")
    if not isinstance(question, (str, list)) or not question:
        raise InvalidInput(f"{where}: field 'user_input' (the question) is missing")
    if row.get("reference") is not None and not isinstance(row["reference"], str):
        raise InvalidInput(f"{where}: field 'reference' must be a text or null")
    contexts = _texts(row, "retrieved_contexts", where)
    ids = row.get("retrieved_context_ids")
    if ids is not None and (not isinstance(ids, list) or len(ids) != len(contexts)):
        raise InvalidInput(f"{where}: field 'retrieved_context_ids' must list one id per "
                           "retrieved context")
    traps = row.get("distractors") or []
    if not isinstance(traps, list) or not all(
            isinstance(d, dict) and isinstance(d.get("text"), str) for d in traps):
        raise InvalidInput(f"{where}: field 'distractors' must be a list of objects with a "
                           "'text'")


def read_golden(path: str | Path) -> list[dict[str, Any]]:
    """The rows of a golden file, checked; a row without ``id`` gets ``row-N`` (its line)."""
    p = Path(path)
    rows: list[dict[str, Any]] = []
    seen: dict[str, int] = {}
    for n, row in _lines(p, "the JSONL golden file `noisegauge testset` writes"):
        where = f"{p}, line {n}"
        _check_row(row, where)
        rid = row.get("id")
        if rid in (None, ""):
            row["id"] = rid = f"row-{n}"
        elif not isinstance(rid, str):
            row["id"] = rid = str(rid)
        if rid in seen:
            raise InvalidInput(f"{where}: id {rid!r} is also on line {seen[rid]}; give every "
                               "row its own id (review events name rows by id)")
        seen[rid] = n
        rows.append(row)
    if not rows:
        raise InvalidInput(f"{p}: no golden rows")
    return rows


def question_text(row: Mapping[str, Any]) -> str:
    """The question: ``user_input``, or the last message's content of a conversation."""
    q = row.get("user_input")
    if isinstance(q, list) and q:
        try:
            return read_turns(row)[0]
        except InvalidSample:  # shown as written: the page is for reading, not for scoring
            last = q[-1]
            return str(last.get("content", "")) if isinstance(last, dict) else str(last)
    return str(q or "")


def history_of(row: Mapping[str, Any]) -> list[list[str]]:
    """The turns before the question, ``[[role, text], ...]``; empty for a single turn or a
    conversation that does not read (its row is shown with the question alone)."""
    try:
        return [[t.role, t.content] for t in read_turns(row)[1]]
    except InvalidSample:
        return []


def _text_id(text: str) -> str:
    return "sha256:" + hashlib.sha256(text.encode("utf-8")).hexdigest()[:16]


def pool(row: Mapping[str, Any]) -> list[dict[str, Any]]:
    """The row's chunks then its distractors, each with its drafted role."""
    contexts = list(row.get("retrieved_contexts") or [])
    ids = list(row.get("retrieved_context_ids") or [None] * len(contexts))
    items = [{"id": str(i) if i is not None else _text_id(t), "text": t, "origin": "chunk",
              "kind": None, "differs": None, "drafted": "answer"} for t, i in zip(contexts, ids, strict=True)]
    for d in row.get("distractors") or []:
        text = d["text"]
        items.append({"id": str(d.get("id") or _text_id(text)), "text": text,
                      "origin": "distractor", "kind": d.get("kind"), "differs": d.get("differs"),
                      "drafted": "distractor"})
    return items


def golden_digest(row: Mapping[str, Any]) -> str:
    """What a review was made on: the question, the drafted reference and the pool's texts."""
    parts = [question_text(row), row.get("reference"), [i["text"] for i in pool(row)]]
    history = history_of(row)
    if history:  # a conversation: other turns, another question (single turns keep their digest)
        parts.append(history)
    blob = json.dumps(parts, ensure_ascii=False, sort_keys=True).encode("utf-8")
    return hashlib.sha256(blob).hexdigest()[:16]


@dataclass
class RowReview:
    """One row's review as the latest events left it."""

    id: str
    digest: str
    verdict: str | None = None
    reference: str | None = None  # None: the draft's
    roles: dict[int, str] = field(default_factory=dict)  # only the items a person set
    at: str | None = None

    def empty(self) -> bool:
        return self.verdict is None and self.reference is None and not self.roles


def _apply(state: RowReview, event: Mapping[str, Any], line: int) -> None:
    kind = event["kind"]
    if kind == "verdict":
        verdict = event.get("verdict")
        if verdict is not None and verdict not in VERDICTS:
            raise InvalidInput(f"EVENTS line {line}: field 'verdict' must be accept, reject or "
                               f"null, got {verdict!r}")
        state.verdict = verdict
    elif kind == "edit":
        ref = event.get("reference")
        if ref is not None and not isinstance(ref, str):
            raise InvalidInput(f"EVENTS line {line}: field 'reference' must be a text or null")
        state.reference = ref
    else:
        item, role = event.get("item"), event.get("role")
        if isinstance(item, bool) or not isinstance(item, int) or item < 0:
            raise InvalidInput(f"EVENTS line {line}: field 'item' must be an index >= 0, got "
                               f"{item!r}")
        if role is None:
            state.roles.pop(item, None)
        elif role in ROLES:
            state.roles[item] = role
        else:
            raise InvalidInput(f"EVENTS line {line}: field 'role' must be one of "
                               f"{', '.join(ROLES)} or null, got {role!r}")
    if isinstance(event.get("at"), str):
        state.at = event["at"]


def fold_golden(events: Sequence[Mapping[str, Any]]) -> dict[str, dict[str, RowReview]]:
    """Per row id, per digest, the review the events leave (latest first for each field)."""
    out: dict[str, dict[str, RowReview]] = {}
    for event in events:
        line = int(event.get("_line", 0))
        kind = event.get("kind")
        if kind in _RESULT_KINDS:
            raise InvalidInput(f"EVENTS line {line}: a label of a results sample (kind "
                               f"{kind!r}), not a golden-set review event; give `noisegauge "
                               "review GOLDEN` its own events file")
        if kind not in GOLDEN_KINDS:
            raise InvalidInput(f"EVENTS line {line}: unknown kind {kind!r}; a golden-set "
                               f"review event is one of {', '.join(GOLDEN_KINDS)}")
        rid, digest = event.get("id"), event.get("digest")
        if not isinstance(rid, str) or not rid or not isinstance(digest, str):
            raise InvalidInput(f"EVENTS line {line}: fields 'id' and 'digest' are needed; an "
                               "event names the row and what it was made on")
        state = out.setdefault(rid, {}).setdefault(digest, RowReview(rid, digest))
        _apply(state, event, line)
    return out


def roles_of(row: Mapping[str, Any], review: RowReview | None) -> list[str]:
    """Each pool item's role: the person's where set, else as drafted."""
    return [(review.roles.get(j) if review else None) or item["drafted"]
            for j, item in enumerate(pool(row))]


def reference_of(row: Mapping[str, Any], review: RowReview | None) -> str:
    if review is not None and review.reference is not None:
        return review.reference
    return str(row.get("reference") or "")


def acceptable(row: Mapping[str, Any], review: RowReview | None) -> str | None:
    """Why the row cannot be kept as the review leaves it, or None."""
    roles = roles_of(row, review)
    if not reference_of(row, review).strip():
        return (f"row {row['id']}: no reference yet: type one (Enter) or click sentences of a "
                "chunk that holds the answer; or reject the row (⇧R)")
    if "answer" not in roles:
        return (f"row {row['id']}: no chunk holds the answer: mark one (1); or reject the row "
                "if the documents do not answer it (⇧R)")
    ids = [i["id"] for i in pool(row)]
    open_ = [c for c in row.get("conflicts") or []
             if c in ids and not any(ids[j] == c for j in (review.roles if review else {}))]
    if open_:
        return (f"row {row['id']}: settle the conflict first: give {', '.join(open_)} a role "
                "(1 holds the answer, 2 trap, 3 drop)")
    return None


def reviewed_row(row: Mapping[str, Any], review: RowReview) -> dict[str, Any]:
    """``row`` as the person left it: their reference, the chunks they said hold the answer,
    the traps they kept (a drafted chunk turned trap is ``topical``: same topic, not the
    answer), ``draft.reviewed`` true, and what they changed under ``review``."""
    items, roles = pool(row), roles_of(row, review)
    answer = [it for it, r in zip(items, roles, strict=True) if r == "answer"]
    traps = [{"id": it["id"], "text": it["text"], "kind": it["kind"] or "topical",
              "differs": it["differs"]} for it, r in zip(items, roles, strict=True) if r == "distractor"]
    edited = [name for name, changed in (
        ("reference", review.reference is not None and review.reference != row.get("reference")),
        ("retrieved_contexts", [r == "answer" for r in roles]
         != [i["drafted"] == "answer" for i in items]),
        ("distractors", [r == "distractor" for r in roles]
         != [i["drafted"] == "distractor" for i in items])) if changed]
    out = dict(row)
    out.update({"reference": reference_of(row, review).strip(),
                "retrieved_contexts": [it["text"] for it in answer],
                "retrieved_context_ids": [it["id"] for it in answer], "distractors": traps,
                "draft": {**(row.get("draft") or {}), "reviewed": True}})
    if "status" in row:  # a person settled it: a no-answer or conflict row is answered now
        out.update({"status": "drafted", "reason": None})
    if "conflicts" in row:
        out["conflicts"] = []
    out["review"] = {"edited": edited, "settled": list(row.get("conflicts") or []),
                     "at": review.at or _dt.datetime.now(_dt.timezone.utc).isoformat(
                         timespec="seconds")}
    return out


@dataclass(frozen=True)
class ExportCounts:
    """What an export kept and left out."""

    kept: int
    rejected: int
    undecided: int
    stale: int  # reviewed on another version of the row (the golden file changed since)
    total: int


def export_rows(rows: Sequence[Mapping[str, Any]], events: Sequence[Mapping[str, Any]]
                ) -> tuple[list[dict[str, Any]], ExportCounts]:
    """The accepted rows, reviewed, in file order; and the counts of the others."""
    folded = fold_golden(events)
    kept: list[dict[str, Any]] = []
    rejected = undecided = stale = 0
    for row in rows:
        by_digest = folded.get(row["id"], {})
        review = by_digest.get(golden_digest(row))
        if review is None or review.verdict is None:
            undecided += 1
            stale += any(not r.empty() for r in by_digest.values())
            continue
        if review.verdict == "reject":
            rejected += 1
            continue
        why = acceptable(row, review)
        if why is not None:
            raise InvalidInput(f"EVENTS: {why}")
        kept.append(reviewed_row(row, review))
    return kept, ExportCounts(len(kept), rejected, undecided, stale, len(rows))
